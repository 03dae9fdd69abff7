/*
 * sharding.c: the `sharding_indexed` codec (v3 array->bytes; ZARR__CODEC_SHARDING): its configuration
 * (inner chunk shape, inner and index chains, index location) read from and written as JSON, and whole
 * shards encoded and decoded: a shard (the outer chunk, memory form, C order) is cut into inner chunks,
 * each encoded with the inner chain and placed by the shard format (shard_format.c: layout, index,
 * assembly, the one validating index decoder). An inner chunk equal to the fill value is not stored (an
 * empty index entry) and reads as fill. Inner chains run on a codec context of their own: the outer
 * chain's scratch buffers are in use. The engine's inner-chunk I/O (batch.c) takes the layout from
 * shard_format.c and runs the inner chains itself.
 */
#include "codec_class.h"
#include "meta_int.h"
#include "shard_format.h"
#include "zjson.h"

#include <stdlib.h>
#include <string.h>

ZARR__CODEC_CFG_FITS(zarr__sharding_cfg); /* the spec, owned (shard_format.h) */
#define SHARD(k) (ZARR__CODEC_CFG((zarr_codec *)(k), zarr__sharding_cfg)->sh)

static void
sharding_clear(zarr_codec *k)
{
    zarr__shard_spec *sh = SHARD(k);
    if (sh) {
        zarr_chain_free(sh->inner);
        zarr_chain_free(sh->index);
        free(sh);
        SHARD(k) = NULL;
    }
}

static int
sharding_copy(zarr_codec *dst, const zarr_codec *src)
{
    const zarr__shard_spec *s  = SHARD(src);
    zarr__shard_spec       *sh = malloc(sizeof *sh);
    SHARD(dst)                 = sh;
    if (!sh)
        return zarr_error(ZARR_ENOMEM, "out of memory copying a codec chain");
    *sh       = *s;
    sh->inner = NULL;
    sh->index = NULL;
    if (!(sh->inner = zarr_chain_copy(s->inner)) || !(sh->index = zarr_chain_copy(s->index))) {
        sharding_clear(dst);
        return ZARR_ENOMEM;
    }
    return ZARR_OK;
}

static int
sharding_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    const zarr_chain   *c = p->chain;
    struct json_object *v, *ixj = NULL;
    zarr__shard_spec   *sh;
    zarr_dtype         *u64 = NULL;
    const char         *loc;
    int                 n = 0, rc = ZARR_OK;

    if (!c->build_dtype)
        return zarr_error(ZARR_EUNSUPPORTED, "codec 'sharding_indexed' can't be used here");
    if (!cfg)
        return zarr_error(ZARR_EMETA, "codec 'sharding_indexed': missing 'configuration'");
    if (c->ndim >= ZARR_MAX_DIMS)
        return zarr_error(ZARR_EUNSUPPORTED, "codec 'sharding_indexed': too many dims (%d)", c->ndim);
    if (!(sh = calloc(1, sizeof *sh)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    SHARD(k) = sh;
    sh->ndim = c->ndim;
    ZARR_TRY(
        zarr__json_get_uint_list(cfg, "chunk_shape", 1, "sharding_indexed", sh->chunk, ZARR_MAX_DIMS, &n));
    if (n != c->ndim)
        ZARR_FAIL(ZARR_EMETA, "codec 'sharding_indexed': 'chunk_shape' has %d entries, the array has %d dims",
                  n, c->ndim);
    if (!json_object_object_get_ex(cfg, "codecs", &v) || !json_object_is_type(v, json_type_array))
        ZARR_FAIL(ZARR_EMETA, "codec 'sharding_indexed': 'codecs' must be a list");
    if ((rc = zarr_chain_from_v3_json(v, c->build_dtype, c->ndim, &sh->inner)) != ZARR_OK) {
        zarr_error_wrap(rc, "codec 'sharding_indexed': 'codecs': ");
        goto done;
    }
    if (json_object_object_get_ex(cfg, "index_codecs", &v)) {
        if (!json_object_is_type(v, json_type_array))
            ZARR_FAIL(ZARR_EMETA, "codec 'sharding_indexed': 'index_codecs' must be a list");
        ixj = json_object_get(v);
    }
    else if (!(ixj = json_tokener_parse(
                   "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"crc32c\"}]")))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    if (!(u64 = zarr_dtype_new(ZARR_UINT, 8)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    if ((rc = zarr_chain_from_v3_json(ixj, u64, c->ndim + 1, &sh->index)) != ZARR_OK) {
        zarr_error_wrap(rc, "codec 'sharding_indexed': 'index_codecs': ");
        goto done;
    }
    ZARR_TRY(zarr__shard_index_extra(sh->index, &sh->index_extra));
    ZARR_TRY(zarr__codec_cfg_str("sharding_indexed", cfg, "index_location", "end", &loc));
    if (strcmp(loc, "end") != 0 && strcmp(loc, "start") != 0)
        ZARR_FAIL(ZARR_EMETA,
                  "codec 'sharding_indexed': 'index_location' must be \"start\" or \"end\", got \"%s\"", loc);
    sh->index_end = loc[0] == 'e';
done:
    json_object_put(ixj);
    zarr_dtype_free(u64);
    if (rc != ZARR_OK)
        sharding_clear(k);
    return rc;
}
static int
sharding_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    const zarr__shard_spec *sh = SHARD(k);
    struct json_object     *l  = NULL;
    int                     rc;
    (void)c, (void)v2;
    if ((rc = zarr__codec_json_add(o, "chunk_shape", zarr__json_new_uint_list(sh->chunk, sh->ndim))) !=
            ZARR_OK ||
        (rc = zarr_chain_to_v3_json(sh->inner, &l)) != ZARR_OK ||
        (rc = zarr__codec_json_add(o, "codecs", l)) != ZARR_OK ||
        (rc = zarr_chain_to_v3_json(sh->index, &l)) != ZARR_OK ||
        (rc = zarr__codec_json_add(o, "index_codecs", l)) != ZARR_OK)
        return rc;
    return zarr__codec_json_add(o, "index_location", json_object_new_string(sh->index_end ? "end" : "start"));
}

static int
sharding_set_fill(zarr_codec *k, const void *fill)
{
    return zarr__chain_set_fill(SHARD(k)->inner, fill);
}

static int
sharding_finish(zarr_chain *c, zarr_codec *k, const zarr_dtype *t)
{
    (void)c, (void)k, (void)t; /* the inner chain was checked against the dtype */
    return ZARR_OK;
}

/* A shard's layout and the strides that cut it into inner chunks. */
typedef struct shard_geom {
    zarr__shard_layout l;
    uint64_t           sstride[ZARR_MAX_DIMS]; /* element strides of the shard */
    uint64_t           istride[ZARR_MAX_DIMS]; /* element strides of an inner chunk */
    size_t             inner_nelem, inner_bytes, nelem;
} shard_geom;

static int
shard_geometry(const zarr_chain *c, const zarr__shard_spec *sh, const uint64_t *shape, shard_geom *g)
{
    uint64_t ne = 1, tot = 1, ib;
    int      rc;
    if ((rc = zarr__shard_layout_of(sh, shape, &g->l)) != ZARR_OK)
        return rc;
    for (int d = 0; d < sh->ndim; d++)
        if (!zarr__mul_ok(ne, sh->chunk[d], &ne) || !zarr__mul_ok(tot, shape[d], &tot))
            return zarr_error(ZARR_EOVERFLOW, "sharding_indexed: shard size overflows");
    {
        uint64_t a = 1, b = 1;
        for (int d = sh->ndim - 1; d >= 0; d--) {
            g->sstride[d] = a;
            g->istride[d] = b;
            a *= shape[d];
            b *= sh->chunk[d];
        }
    }
    if (!zarr__mul_ok(ne, c->esize, &ib) || ib > SIZE_MAX / 2)
        return zarr_error(ZARR_EOVERFLOW, "sharding_indexed: index or inner chunk size overflows");
    g->inner_nelem = (size_t)ne;
    g->inner_bytes = (size_t)ib;
    g->nelem       = (size_t)(g->l.ninner * ne);
    return ZARR_OK;
}

/* Element offset in the shard of inner chunk number `i` (row-major over the grid). */
static uint64_t
shard_origin(const zarr__shard_spec *sh, const shard_geom *g, size_t i)
{
    uint64_t off = 0;
    for (int d = sh->ndim - 1; d >= 0; d--) {
        off += (i % g->l.grid[d]) * sh->chunk[d] * g->sstride[d];
        i /= g->l.grid[d];
    }
    return off;
}

static bool
shard_is_fill(const zarr_chain *c, const uint8_t *p, size_t nelem)
{
    if (!c->fill) {
        for (size_t i = 0; i < nelem * c->esize; i++)
            if (p[i])
                return false;
        return true;
    }
    for (size_t i = 0; i < nelem; i++)
        if (memcmp(p + i * c->esize, c->fill, c->esize) != 0)
            return false;
    return true;
}

static int
shard_encode(const zarr_chain *c, const zarr_codec *k, const uint8_t *mem, const uint64_t *shape,
             zarr_buf *out)
{
    const zarr__shard_spec *sh  = SHARD(k);
    zarr_codec_ctx         *ctx = NULL;
    zarr_buf                ib = ZARR_BUF_INIT, enc = ZARR_BUF_INIT;
    zarr__shard_builder     b = {0};
    shard_geom              g;
    uint64_t                off, ixoff, total;
    int                     rc;

    out->size = 0;
    ZARR_TRY(shard_geometry(c, sh, shape, &g));
    if (!(ctx = zarr_codec_ctx_new()))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    ZARR_TRY(zarr__shard_builder_init(&b, &g.l));
    ZARR_TRY(zarr_buf_resize(&ib, g.inner_bytes));
    ZARR_TRY(zarr_buf_resize(out, (size_t)zarr__shard_data_start(&g.l))); /* the index's room */
    for (size_t i = 0; i < g.l.ninner; i++) {
        zarr__strided_copy(mem + shard_origin(sh, &g, i) * c->esize, ib.data, c->esize, sh->ndim, sh->chunk,
                           g.sstride, g.istride);
        if (!c->vlen && shard_is_fill(c, ib.data, g.inner_nelem))
            continue; /* an empty entry */
        ZARR_TRY(zarr_chain_encode(sh->inner, ctx, ib.data, sh->chunk, &enc));
        ZARR_TRY(zarr__shard_builder_append(&b, i, enc.size, &off));
        ZARR_TRY(zarr_buf_append(out, enc.data, enc.size)); /* at `off`: appended in order */
    }
    ZARR_TRY(zarr__shard_builder_finish(&b, ctx, &enc, &ixoff, &total));
    if (g.l.index_end)
        ZARR_TRY(zarr_buf_append(out, enc.data, enc.size));
    else if (enc.size) /* an empty shard (a zero extent) has an empty index and no buffer */
        memcpy(out->data, enc.data, enc.size);
done:
    if (rc != ZARR_OK)
        zarr_error_wrap(rc, "sharding_indexed: ");
    zarr_buf_free(&ib);
    zarr_buf_free(&enc);
    zarr__shard_builder_free(&b);
    zarr_codec_ctx_free(ctx);
    return rc;
}

/* Decodes a shard into `mem` (the shard's elements); on failure nothing stays allocated there. */
static int
shard_decode(const zarr_chain *c, const zarr_codec *k, const uint8_t *enc, size_t n, uint8_t *mem,
             const uint64_t *shape)
{
    const zarr__shard_spec *sh  = SHARD(k);
    zarr_codec_ctx         *ctx = NULL;
    zarr_buf                ib  = ZARR_BUF_INIT;
    uint64_t               *idx = NULL;
    shard_geom              g;
    int                     rc;

    memset(&g, 0, sizeof g);
    ZARR_TRY(shard_geometry(c, sh, shape, &g));
    if ((c->vlen || !c->fill) && g.nelem) /* an empty shard's `mem` may have no memory */
        memset(mem, 0, g.nelem * c->esize);
    else
        for (size_t i = 0; i < g.nelem; i++)
            memcpy(mem + i * c->esize, c->fill, c->esize);
    if (!(ctx = zarr_codec_ctx_new()))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    ZARR_TRY(zarr__shard_index_read(&g.l, ctx, NULL, enc, n, &idx)); /* every entry checked */
    ZARR_TRY(zarr_buf_resize(&ib, g.inner_bytes));
    for (size_t i = 0; i < g.l.ninner; i++) {
        uint64_t off = idx[2 * i], nb = idx[2 * i + 1];
        char     nm[ZARR_MAX_DIMS * 21];
        if (off == ZARR__SHARD_EMPTY)
            continue;
        if ((rc = zarr_chain_decode(sh->inner, ctx, enc + off, (size_t)nb, ib.data, sh->chunk)) != ZARR_OK) {
            zarr_error_wrap(rc, "inner chunk %s: ", zarr__shard_inner_name(&g.l, i, nm, sizeof nm));
            goto done;
        }
        zarr__strided_copy(ib.data, mem + shard_origin(sh, &g, i) * c->esize, c->esize, sh->ndim, sh->chunk,
                           g.istride, g.sstride);
    }
done:
    if (rc != ZARR_OK) {
        zarr_error_wrap(rc, "sharding_indexed: ");
        if (c->vlen)
            zarr__vlen_clear(c, mem, g.nelem);
    }
    zarr_buf_free(&ib);
    free(idx);
    zarr_codec_ctx_free(ctx);
    return rc;
}

static int
sharding_a2b_encode(const zarr_chain *c, const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *mem,
                    size_t nelem, const uint64_t *shape, zarr_buf *out)
{
    (void)ctx, (void)nelem;
    return shard_encode(c, k, mem, shape, out);
}

static int
sharding_a2b_decode(const zarr_chain *c, const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *enc,
                    size_t n, uint8_t *mem, size_t nelem, const uint64_t *shape)
{
    (void)ctx, (void)nelem;
    return shard_decode(c, k, enc, n, mem, shape);
}

const zarr__codec_class zarr__codec_sharding = {
    .v3name     = "sharding_indexed",
    .stage      = ZARR__STAGE_A2B,
    .flags      = ZARR__CODEC_SHARDING,
    .parse      = sharding_parse,
    .to_json    = sharding_to_json,
    .clear      = sharding_clear,
    .copy       = sharding_copy,
    .a2b_finish = sharding_finish,
    .a2b_encode = sharding_a2b_encode,
    .a2b_decode = sharding_a2b_decode,
    .set_fill   = sharding_set_fill,
};
