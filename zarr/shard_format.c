/*
 * shard_format.c: the one owner of the sharding_indexed shard format (shard_format.h): a shard's layout
 * from the codec's configuration, the index's fixed size, the one validating index decoder, the one
 * index encoder and the shard builder every writer assembles shards with. The codec
 * (codecs/sharding.c: whole shards), the batched executor (batch.c: inner-chunk reads and writes),
 * raw chunk access (chunk_raw.c) and the fuzzers apply exactly these rules, so a shard reads the same,
 * or fails the same, on every path.
 *
 * Overlapping entries are refused (docs/FORMAT.md "Sharding" has the evidence): the spec describes
 * inner chunks written one after another with unused space allowed between them, no known writer
 * shares bytes between entries, and refusing bounds every size derived from an index by the shard's
 * own size (a rewrite copies untouched inner chunks as bytes: with shared bytes a shard of S bytes and
 * n entries could claim n * S).
 */
#include "shard_format.h"

#include "codec_class.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "shard '<key>'" and its NUL: keys are at most 1024 bytes (job.h) */
#define SHARD_NAME_MAX 1040

int
zarr__span_cmp(const void *a, const void *b)
{
    const zarr__span *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i ? 1 : 0; /* a total order: messages name the same pair */
}

/* ---- layout ---- */

int
zarr__shard_index_extra(const zarr_chain *ix, size_t *extra)
{
    *extra = 0;
    if (ix->codecs[ix->ia2b].cls != &zarr__codec_bytes)
        return zarr_error(ZARR_EUNSUPPORTED, "codec 'sharding_indexed': 'index_codecs' must use 'bytes'");
    for (size_t i = ix->ia2b + 1; i < ix->n; i++) {
        /* a fixed number of bytes added (checksums) or none (shuffle): the same for 16 and 32 bytes */
        const zarr__codec_class *cls = ix->codecs[i].cls;
        size_t a = cls->encoded_size ? cls->encoded_size(&ix->codecs[i], 16) : ZARR__SIZE_UNKNOWN;
        size_t b = cls->encoded_size ? cls->encoded_size(&ix->codecs[i], 32) : ZARR__SIZE_UNKNOWN;
        if (a == ZARR__SIZE_UNKNOWN || b == ZARR__SIZE_UNKNOWN || a < 16 || b - 32 != a - 16 || a - 16 > 64)
            return zarr_error(ZARR_EUNSUPPORTED,
                              "codec 'sharding_indexed': index codec '%s' has no fixed encoded size",
                              cls->v3name);
        *extra += a - 16;
    }
    return ZARR_OK;
}

int
zarr__shard_layout_of(const zarr__shard_spec *sp, const uint64_t *shard_shape, zarr__shard_layout *l)
{
    uint64_t ni = 1, x;

    memset(l, 0, sizeof *l);
    l->ndim = sp->ndim;
    for (int d = 0; d < sp->ndim; d++) {
        if (sp->chunk[d] == 0 || shard_shape[d] % sp->chunk[d] != 0)
            return zarr_error(ZARR_EMETA,
                              "sharding_indexed: the shard's extent %llu in dim %d is not a multiple of the "
                              "inner chunk's %llu",
                              (unsigned long long)shard_shape[d], d, (unsigned long long)sp->chunk[d]);
        l->inner[d] = sp->chunk[d];
        l->grid[d]  = shard_shape[d] / sp->chunk[d];
        if (!zarr__mul_ok(ni, l->grid[d], &ni))
            return zarr_error(ZARR_EOVERFLOW, "sharding_indexed: too many inner chunks per shard");
    }
    l->grid[sp->ndim] = 2;
    if (!zarr__mul_ok(ni, 16, &x) || !zarr__add_ok(x, sp->index_extra, &x) || x > SIZE_MAX / 2)
        return zarr_error(ZARR_EOVERFLOW, "sharding_indexed: the shard index size overflows");
    l->ninner      = (size_t)ni;
    l->index_bytes = (size_t)x;
    l->index_end   = sp->index_end;
    l->inner_chain = sp->inner;
    l->index_chain = sp->index;
    return ZARR_OK;
}

int
zarr__chain_shard_layout(const zarr_chain *c, const uint64_t *shard_shape, zarr__shard_layout *l)
{
    if (!c || c->n != 1 || c->ia2b != 0 || !(c->codecs[0].cls->flags & ZARR__CODEC_SHARDING) || c->vlen)
        return ZARR_EUNSUPPORTED; /* no message: the caller takes the whole-shard path */
    return zarr__shard_layout_of(ZARR__CODEC_CCFG(&c->codecs[0], zarr__sharding_cfg)->sh, shard_shape, l);
}

const char *
zarr__shard_inner_name(const zarr__shard_layout *l, size_t i, char *out, size_t cap)
{
    uint64_t c[ZARR_MAX_DIMS];
    size_t   k = 0;
    for (int d = l->ndim - 1; d >= 0; d--) {
        c[d] = i % l->grid[d];
        i /= l->grid[d];
    }
    out[0] = '\0';
    for (int d = 0; d < l->ndim && k < cap; d++) {
        int w = snprintf(out + k, cap - k, d ? "/%llu" : "%llu", (unsigned long long)c[d]);
        if (w < 0)
            break;
        k += (size_t)w;
    }
    return out;
}

/* ---- the index ---- */

/* "shard 'key'", or "shard" when the key is not known (the codec), for messages. */
static const char *
shard_name(const char *key, char *out, size_t cap)
{
    if (key)
        snprintf(out, cap, "shard '%s'", key);
    else
        snprintf(out, cap, "shard");
    return out;
}

int
zarr__shard_index_decode(const zarr__shard_layout *l, zarr_codec_ctx *ctx, const char *key, const uint8_t *ix,
                         size_t n, uint64_t total, uint64_t **out)
{
    uint64_t   *e  = NULL;
    zarr__span *sp = NULL;
    uint64_t    lo = 0, hi = UINT64_MAX;
    size_t      ns = 0;
    char        nm[ZARR_MAX_DIMS * 21], sn[SHARD_NAME_MAX];
    int         rc = ZARR_OK;

    *out = NULL;
    shard_name(key, sn, sizeof sn);
    if (n != l->index_bytes)
        ZARR_FAIL(ZARR_ECODEC,
                  "sharding_indexed %s: the index has %zu bytes, expected %zu (truncated shard?)", sn, n,
                  l->index_bytes);
    if (total != UINT64_MAX) {
        if (total < l->index_bytes)
            ZARR_FAIL(ZARR_ECODEC, "sharding_indexed %s has %llu bytes, less than its index of %zu", sn,
                      (unsigned long long)total, l->index_bytes);
        lo = l->index_end ? 0 : l->index_bytes;
        hi = l->index_end ? total - l->index_bytes : total;
    }
    else if (!l->index_end)
        lo = l->index_bytes;
    if (!(e = malloc((l->ninner ? l->ninner : 1) * 2 * sizeof *e)) ||
        !(sp = malloc((l->ninner ? l->ninner : 1) * sizeof *sp)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory for the index of sharding_indexed %s", sn);
    if ((rc = zarr_chain_decode(l->index_chain, ctx, ix, n, e, l->grid)) != ZARR_OK) {
        zarr_error_wrap(rc, "sharding_indexed %s: can't decode its index: ", sn);
        goto done;
    }
    for (size_t i = 0; i < l->ninner; i++) {
        uint64_t off = e[2 * i], nb = e[2 * i + 1];
        if (off == ZARR__SHARD_EMPTY && nb == ZARR__SHARD_EMPTY)
            continue;
        if (off == ZARR__SHARD_EMPTY || nb == ZARR__SHARD_EMPTY || off < lo || off > hi || nb > hi - off) {
            zarr__shard_inner_name(l, i, nm, sizeof nm);
            ZARR_FAIL(ZARR_ECODEC,
                      "sharding_indexed %s: the index entry of inner chunk %s (bytes %llu..+%llu) is outside "
                      "the shard's data (bytes %llu..%llu)",
                      sn, nm, (unsigned long long)off, (unsigned long long)nb, (unsigned long long)lo,
                      (unsigned long long)hi);
        }
        if (nb) /* 0 bytes share none */
            sp[ns++] = (zarr__span){off, off + nb, i};
    }
    qsort(sp, ns, sizeof *sp, zarr__span_cmp);
    for (size_t k = 1; k < ns; k++)
        if (sp[k].off < sp[k - 1].end) {
            char nm2[sizeof nm];
            zarr__shard_inner_name(l, sp[k - 1].i, nm, sizeof nm);
            zarr__shard_inner_name(l, sp[k].i, nm2, sizeof nm2);
            ZARR_FAIL(ZARR_ECODEC,
                      "sharding_indexed %s: inner chunks %s and %s overlap in the shard's bytes "
                      "(%llu..+%llu and %llu..+%llu)",
                      sn, nm, nm2, (unsigned long long)sp[k - 1].off,
                      (unsigned long long)(sp[k - 1].end - sp[k - 1].off), (unsigned long long)sp[k].off,
                      (unsigned long long)(sp[k].end - sp[k].off));
        }
    *out = e;
    e    = NULL;
done:
    free(e);
    free(sp);
    return rc;
}

int
zarr__shard_index_read(const zarr__shard_layout *l, zarr_codec_ctx *ctx, const char *key,
                       const uint8_t *shard, size_t n, uint64_t **out)
{
    char sn[SHARD_NAME_MAX];
    *out = NULL;
    if (n < l->index_bytes)
        return zarr_error(ZARR_ECODEC, "sharding_indexed %s has %zu bytes, less than its index of %zu",
                          shard_name(key, sn, sizeof sn), n, l->index_bytes);
    return zarr__shard_index_decode(l, ctx, key, l->index_end ? shard + n - l->index_bytes : shard,
                                    l->index_bytes, n, out);
}

int
zarr__shard_index_encode(const zarr__shard_layout *l, zarr_codec_ctx *ctx, const uint64_t *ent, zarr_buf *out)
{
    int rc;
    out->size = 0;
    if ((rc = zarr_chain_encode(l->index_chain, ctx, ent, l->grid, out)) != ZARR_OK)
        return zarr_error_wrap(rc, "sharding_indexed: can't encode the shard index: ");
    if (out->size != l->index_bytes)
        return zarr_error(ZARR_ECODEC, "sharding_indexed: the index encoded to %zu bytes, expected %zu",
                          out->size, l->index_bytes);
    return ZARR_OK;
}

/* ---- assembly ---- */

int
zarr__shard_builder_init(zarr__shard_builder *b, const zarr__shard_layout *l)
{
    memset(b, 0, sizeof *b);
    b->l   = l;
    b->end = zarr__shard_data_start(l);
    if (!(b->ent = malloc((l->ninner ? l->ninner : 1) * 2 * sizeof *b->ent)))
        return zarr_error(ZARR_ENOMEM, "out of memory for a shard index");
    for (size_t k = 0; k < 2 * l->ninner; k++)
        b->ent[k] = ZARR__SHARD_EMPTY;
    return ZARR_OK;
}

int
zarr__shard_builder_append(zarr__shard_builder *b, size_t k, uint64_t n, uint64_t *off)
{
    uint64_t end;
    if (!zarr__add_ok(b->end, n, &end) || end > SIZE_MAX - b->l->index_bytes)
        return zarr_error(ZARR_EOVERFLOW, "the shard is too large");
    *off = b->end;
    zarr__shard_builder_put(b, k, b->end, n);
    b->end = end;
    return ZARR_OK;
}

void
zarr__shard_builder_put(zarr__shard_builder *b, size_t k, uint64_t off, uint64_t n)
{
    b->nstored += b->ent[2 * k] == ZARR__SHARD_EMPTY;
    b->ent[2 * k]     = off;
    b->ent[2 * k + 1] = n;
}

uint64_t
zarr__shard_builder_size(const zarr__shard_builder *b, uint64_t *index_off)
{
    if (index_off)
        *index_off = b->l->index_end ? b->end : 0;
    return b->l->index_end ? b->end + b->l->index_bytes : b->end;
}

int
zarr__shard_builder_finish(zarr__shard_builder *b, zarr_codec_ctx *ctx, zarr_buf *ix, uint64_t *index_off,
                           uint64_t *total)
{
    *total = zarr__shard_builder_size(b, index_off);
    return zarr__shard_index_encode(b->l, ctx, b->ent, ix);
}

void
zarr__shard_builder_free(zarr__shard_builder *b)
{
    free(b->ent);
    b->ent = NULL;
}
