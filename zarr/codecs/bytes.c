/*
 * bytes.c: the `bytes` codec (v3 array->bytes; pre-1.0 name "endian"; the v2 array->bytes step, with
 * the byte order of the dtype): the elements' bytes in the configured byte order. The chain keeps the
 * byte-order plan of the dtype (which units of an element have a byte order, and whether they are
 * swapped: c->segs, c->swap), made here when the chain is complete; its kernel is the unit swap.
 * ZARR__CODEC_PLAIN: with nothing to swap, encodes hand the caller's memory on and decodes write
 * straight into the caller's memory (chain.c).
 */
#include "codec_class.h"

#include <stdlib.h>
#include <string.h>

typedef struct bytes_cfg {
    char endian; /* '<', '>', or '|' (not given) */
} bytes_cfg;
ZARR__CODEC_CFG_FITS(bytes_cfg);

static int
seg_add(zarr_chain *c, size_t *cap, size_t off, size_t unit, size_t count)
{
    if (unit <= 1 || count == 0)
        return ZARR_OK;
    if (c->nseg) {
        zarr__swapseg *l = &c->segs[c->nseg - 1];
        if (l->unit == unit && l->off + l->unit * l->count == off) {
            l->count += count;
            return ZARR_OK;
        }
    }
    if (c->nseg == *cap) {
        size_t         ncap = *cap ? *cap * 2 : 4;
        zarr__swapseg *p    = realloc(c->segs, ncap * sizeof *p);
        if (!p)
            return zarr_error(ZARR_ENOMEM, "out of memory building a byte-order plan");
        c->segs = p;
        *cap    = ncap;
    }
    c->segs[c->nseg++] = (zarr__swapseg){off, unit, count};
    return ZARR_OK;
}

/* Appends the byte-ordered units of `count` consecutive elements of type t at `base`. */
/* `own_order`: keep only the units whose own dtype's byte order (t->endian, per struct field) differs
 * from the host's (v2: the dtype carries the byte order); otherwise keep all (v3: the bytes codec's
 * endian applies to every unit). Sets c->multibyte when any unit has a byte order at all. */
static int
seg_plan(zarr_chain *c, size_t *cap, const zarr_dtype *t, size_t base, size_t count, int depth,
         bool own_order)
{
    int rc = ZARR_OK;
    if (depth > 16)
        return zarr_error(ZARR_EUNSUPPORTED, "struct data type nested too deeply");
    if (t->kind != ZARR_STRUCT && t->kind != ZARR_BOOL && t->kind != ZARR_FIXED_BYTES &&
        t->kind != ZARR_RAW && t->kind != ZARR_VLEN_UTF8 && t->kind != ZARR_VLEN_BYTES) {
        if (t->kind == ZARR_FIXED_UTF32 || t->size > (t->kind == ZARR_COMPLEX ? 2u : 1u))
            c->multibyte = true;
        if (own_order && t->endian != (ZARR__HOST_ENDIAN == '<' ? '>' : '<'))
            return ZARR_OK;
    }
    switch (t->kind) {
        case ZARR_BOOL:
        case ZARR_FIXED_BYTES:
        case ZARR_RAW:
            return ZARR_OK;
        case ZARR_INT:
        case ZARR_UINT:
        case ZARR_FLOAT:
        case ZARR_DATETIME:
        case ZARR_TIMEDELTA:
            return seg_add(c, cap, base, t->size, count);
        case ZARR_COMPLEX:
            return seg_add(c, cap, base, t->size / 2, count * 2);
        case ZARR_FIXED_UTF32:
            return seg_add(c, cap, base, 4, count * (t->size / 4));
        case ZARR_STRUCT:
            for (size_t j = 0; j < count; j++)
                for (size_t i = 0; i < t->nfields; i++) {
                    const zarr_field *f   = &t->fields[i];
                    uint64_t          sub = 1;
                    for (int d = 0; d < f->ndim && d < 8; d++)
                        if (!zarr__mul_ok(sub, f->shape[d], &sub))
                            return zarr_error(ZARR_EOVERFLOW, "struct field '%s' is too large", f->name);
                    if (!f->type)
                        return zarr_error(ZARR_EINVAL, "struct field '%s' has no type", f->name);
                    if ((rc = seg_plan(c, cap, f->type, base + j * t->size + f->offset, (size_t)sub,
                                       depth + 1, own_order)) != ZARR_OK)
                        return rc;
                }
            return ZARR_OK;
        default:
            return zarr_error(ZARR_EUNSUPPORTED, "the bytes codec can't encode variable-length elements");
    }
}

static inline void
swap_units(const uint8_t *s, uint8_t *d, size_t nunits, size_t unit)
{
    switch (unit) {
        case 2:
            for (size_t i = 0; i < nunits; i++) {
                uint16_t v;
                memcpy(&v, s + 2 * i, 2);
                v = __builtin_bswap16(v);
                memcpy(d + 2 * i, &v, 2);
            }
            break;
        case 4:
            for (size_t i = 0; i < nunits; i++) {
                uint32_t v;
                memcpy(&v, s + 4 * i, 4);
                v = __builtin_bswap32(v);
                memcpy(d + 4 * i, &v, 4);
            }
            break;
        case 8:
            for (size_t i = 0; i < nunits; i++) {
                uint64_t v;
                memcpy(&v, s + 8 * i, 8);
                v = __builtin_bswap64(v);
                memcpy(d + 8 * i, &v, 8);
            }
            break;
        default:
            for (size_t i = 0; i < nunits; i++) {
                const uint8_t *a = s + unit * i;
                uint8_t       *b = d + unit * i;
                for (size_t lo = 0, hi = unit - 1; lo < hi; lo++, hi--) {
                    uint8_t t = a[lo];
                    b[lo]     = a[hi];
                    b[hi]     = t;
                }
                if (unit & 1)
                    b[unit / 2] = a[unit / 2];
            }
            break;
    }
}

/* Copies `nelem` elements from src to dst (may be the same) reversing every byte-ordered unit. */
void
zarr__chain_swap_copy(const zarr_chain *c, const uint8_t *src, uint8_t *dst, size_t nelem)
{
    if (c->nseg == 1 && c->segs[0].off == 0 && c->segs[0].unit * c->segs[0].count == c->esize) {
        swap_units(src, dst, nelem * c->segs[0].count, c->segs[0].unit);
        return;
    }
    if (src != dst && nelem) /* an empty chunk may come with no buffers */
        memcpy(dst, src, nelem * c->esize);
    for (size_t i = 0; i < nelem; i++)
        for (size_t s = 0; s < c->nseg; s++) {
            uint8_t *p = dst + i * c->esize + c->segs[s].off;
            swap_units(p, p, c->segs[s].count, c->segs[s].unit);
        }
}

static int
bytes_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    bytes_cfg  *b = ZARR__CODEC_CFG(k, bytes_cfg);
    const char *e;
    int         rc;
    (void)p;
    if ((rc = zarr__codec_cfg_str("bytes", cfg, "endian", NULL, &e)) != ZARR_OK)
        return rc;
    if (!e)
        b->endian = '|';
    else if (strcmp(e, "little") == 0)
        b->endian = '<';
    else if (strcmp(e, "big") == 0)
        b->endian = '>';
    else
        return zarr_error(ZARR_EMETA, "codec 'bytes': 'endian' must be \"little\" or \"big\", got \"%s\"", e);
    return ZARR_OK;
}

void
zarr__bytes_init(zarr_codec *k, char endian)
{
    memset(k, 0, sizeof *k);
    k->cls                                = &zarr__codec_bytes;
    ZARR__CODEC_CFG(k, bytes_cfg)->endian = endian;
}

char
zarr__bytes_endian(const zarr_codec *k)
{
    return ZARR__CODEC_CCFG(k, bytes_cfg)->endian;
}

static int
bytes_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    (void)v2;
    if (c->esize <= 1)
        return ZARR_OK;
    return zarr__codec_json_add(
        o, "endian",
        json_object_new_string(ZARR__CODEC_CCFG(k, bytes_cfg)->endian == '>' ? "big" : "little"));
}

/* The byte-order plan of the chain's dtype. */
static int
bytes_finish(zarr_chain *c, zarr_codec *k, const zarr_dtype *t)
{
    size_t segcap = 0;
    int    rc;
    if (c->kind == ZARR_VLEN_UTF8 || c->kind == ZARR_VLEN_BYTES)
        return zarr_error(ZARR_EMETA, "variable-length data needs codec '%s', not 'bytes'",
                          c->kind == ZARR_VLEN_UTF8 ? "vlen-utf8" : "vlen-bytes");
    if (c->vlen)
        return zarr_error(ZARR_EUNSUPPORTED, "struct data types with variable-length fields can't be "
                                             "encoded");
    free(c->segs);
    c->segs      = NULL;
    c->nseg      = 0;
    c->multibyte = false;
    if ((rc = seg_plan(c, &segcap, t, 0, 1, 0, c->v2_order)) != ZARR_OK)
        return rc;
    if (c->v2_order)
        c->swap = c->nseg > 0;
    else {
        char e  = ZARR__CODEC_CCFG(k, bytes_cfg)->endian;
        c->swap = c->nseg > 0 && (e == '|' ? '<' : e) != ZARR__HOST_ENDIAN;
    }
    return ZARR_OK;
}

static int
bytes_encode(const zarr_chain *c, const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *mem, size_t nelem,
             const uint64_t *shape, zarr_buf *out)
{
    int rc;
    (void)k, (void)ctx, (void)shape;
    if ((rc = zarr_buf_resize(out, nelem * c->esize)) != ZARR_OK)
        return rc;
    if (c->swap)
        zarr__chain_swap_copy(c, mem, out->data, nelem);
    else if (nelem)
        memcpy(out->data, mem, nelem * c->esize);
    return ZARR_OK;
}

static int
bytes_decode(const zarr_chain *c, const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *enc, size_t n,
             uint8_t *mem, size_t nelem, const uint64_t *shape)
{
    size_t nbytes = nelem * c->esize;
    (void)k, (void)ctx, (void)shape;
    if (n != nbytes)
        return zarr_error(ZARR_ECODEC, "chunk decodes to %zu bytes, expected %zu", n, nbytes);
    if (c->swap)
        zarr__chain_swap_copy(c, enc, mem, nelem);
    else if (nbytes)
        memcpy(mem, enc, nbytes);
    return ZARR_OK;
}

const zarr__codec_class zarr__codec_bytes = {
    .v3name     = "bytes",
    .v3alias    = "endian", /* its pre-1.0 name */
    .stage      = ZARR__STAGE_A2B,
    .flags      = ZARR__CODEC_PLAIN,
    .parse      = bytes_parse,
    .to_json    = bytes_to_json,
    .a2b_finish = bytes_finish,
    .a2b_encode = bytes_encode,
    .a2b_decode = bytes_decode,
};
