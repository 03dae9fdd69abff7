/*
 * transpose.c: the `transpose` codec (v3 array->array; v2 order "F" is the transpose reversing all
 * dims): encoded dim k is decoded dim order[k]. Its kernel is the strided box copy, which sharding also
 * uses to cut shards into inner chunks.
 */
#include "codec_class.h"

#include <string.h>

typedef struct transpose_cfg {
    int  ndim;
    int  perm[ZARR_MAX_DIMS]; /* encoded dim k = decoded dim perm[k] */
    bool noop;                /* identity permutation */
} transpose_cfg;
ZARR__CODEC_CFG_FITS(transpose_cfg);

void
zarr__strided_copy(const uint8_t *src, uint8_t *dst, size_t es, int nd, const uint64_t *ext,
                   const uint64_t *ss, const uint64_t *ds)
{
    uint64_t idx[ZARR_MAX_DIMS] = {0};
    size_t   so = 0, dof = 0;
    uint64_t inner, sin, din;

    for (int d = 0; d < nd; d++)
        if (ext[d] == 0)
            return;
    if (nd == 0) {
        memcpy(dst, src, es);
        return;
    }
    inner = ext[nd - 1];
    sin   = ss[nd - 1] * es;
    din   = ds[nd - 1] * es;
    for (;;) {
        const uint8_t *s = src + so * es;
        uint8_t       *d = dst + dof * es;
        switch (es) {
            case 1:
                for (uint64_t i = 0; i < inner; i++)
                    d[i * din] = s[i * sin];
                break;
            case 2:
                for (uint64_t i = 0; i < inner; i++)
                    memcpy(d + i * din, s + i * sin, 2);
                break;
            case 4:
                for (uint64_t i = 0; i < inner; i++)
                    memcpy(d + i * din, s + i * sin, 4);
                break;
            case 8:
                for (uint64_t i = 0; i < inner; i++)
                    memcpy(d + i * din, s + i * sin, 8);
                break;
            case 16:
                for (uint64_t i = 0; i < inner; i++)
                    memcpy(d + i * din, s + i * sin, 16);
                break;
            default:
                for (uint64_t i = 0; i < inner; i++)
                    memcpy(d + i * din, s + i * sin, es);
                break;
        }
        int k = nd - 2;
        for (; k >= 0; k--) {
            so += ss[k];
            dof += ds[k];
            if (++idx[k] < ext[k])
                break;
            so -= ss[k] * ext[k];
            dof -= ds[k] * ext[k];
            idx[k] = 0;
        }
        if (k < 0)
            return;
    }
}

/* Transpose between decoded shape `shp` (C order) and the encoded layout of perm. */
static void
transpose_run(const transpose_cfg *t, size_t es, const uint64_t *shp, const uint8_t *src, uint8_t *dst,
              bool encode)
{
    int      nd = t->ndim;
    uint64_t mstride[ZARR_MAX_DIMS], ext[ZARR_MAX_DIMS], pstride[ZARR_MAX_DIMS], cstride[ZARR_MAX_DIMS];
    uint64_t s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        mstride[d] = s;
        s *= shp[d];
    }
    for (int d = 0; d < nd; d++) {
        ext[d]     = shp[t->perm[d]];
        pstride[d] = mstride[t->perm[d]];
    }
    s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        cstride[d] = s;
        s *= ext[d];
    }
    if (encode)
        zarr__strided_copy(src, dst, es, nd, ext, pstride, cstride);
    else
        zarr__strided_copy(src, dst, es, nd, ext, cstride, pstride);
}

static int
transpose_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    transpose_cfg      *t    = ZARR__CODEC_CFG(k, transpose_cfg);
    struct json_object *o    = zarr__codec_cfg_get(cfg, "order");
    int                 ndim = p->chain->ndim;
    t->ndim                  = ndim;
    t->noop                  = true;
    if (o && json_object_is_type(o, json_type_string)) {
        const char *s = json_object_get_string(o);
        if (strcmp(s, "C") != 0 && strcmp(s, "F") != 0)
            return zarr_error(ZARR_EMETA, "codec 'transpose': 'order' must be a list or \"C\"/\"F\"");
        for (int d = 0; d < ndim; d++)
            t->perm[d] = s[0] == 'F' ? ndim - 1 - d : d;
    }
    else if (o && json_object_is_type(o, json_type_array)) {
        bool seen[ZARR_MAX_DIMS] = {false};
        if ((int)json_object_array_length(o) != ndim)
            return zarr_error(ZARR_EMETA, "codec 'transpose': 'order' has %zu entries, the array has %d dims",
                              json_object_array_length(o), ndim);
        for (int d = 0; d < ndim; d++) {
            struct json_object *e = json_object_array_get_idx(o, (size_t)d);
            long long           pos;
            if (!json_object_is_type(e, json_type_int) || (pos = json_object_get_int64(e)) < 0 ||
                pos >= ndim || seen[pos])
                return zarr_error(ZARR_EMETA, "codec 'transpose': 'order' must be a permutation of 0..%d",
                                  ndim - 1);
            seen[pos]  = true;
            t->perm[d] = (int)pos;
        }
    }
    else
        return zarr_error(ZARR_EMETA, "codec 'transpose': 'order' must be a list of integers");
    for (int d = 0; d < ndim; d++)
        if (t->perm[d] != d)
            t->noop = false;
    return ZARR_OK;
}

void
zarr__transpose_init(zarr_codec *k, int ndim, const int *perm)
{
    transpose_cfg *t;
    memset(k, 0, sizeof *k);
    k->cls  = &zarr__codec_transpose;
    t       = ZARR__CODEC_CFG(k, transpose_cfg);
    t->ndim = ndim;
    t->noop = true;
    for (int d = 0; d < ndim; d++) {
        t->perm[d] = perm[d];
        if (perm[d] != d)
            t->noop = false;
    }
}

bool
zarr__transpose_is_reversal(const zarr_codec *k, int ndim)
{
    const transpose_cfg *t = ZARR__CODEC_CCFG(k, transpose_cfg);
    if (k->cls != &zarr__codec_transpose || ndim < 2)
        return false;
    for (int d = 0; d < ndim; d++)
        if (t->perm[d] != ndim - 1 - d)
            return false;
    return true;
}

static int
transpose_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    const transpose_cfg *t = ZARR__CODEC_CCFG(k, transpose_cfg);
    struct json_object  *a = json_object_new_array();
    int                  rc;
    (void)c, (void)v2;
    if ((rc = zarr__codec_json_add(o, "order", a)) != ZARR_OK)
        return rc;
    for (int d = 0; d < t->ndim; d++)
        if (json_object_array_add(a, json_object_new_int(t->perm[d])) != 0)
            return zarr_error(ZARR_ENOMEM, "out of memory building codec JSON");
    return ZARR_OK;
}

static bool
transpose_is_noop(const zarr_codec *k)
{
    return ZARR__CODEC_CCFG(k, transpose_cfg)->noop;
}

static void
transpose_shape(const zarr_codec *k, int ndim, const uint64_t *shape, uint64_t *encoded_shape)
{
    const transpose_cfg *t = ZARR__CODEC_CCFG(k, transpose_cfg);
    for (int d = 0; d < ndim; d++)
        encoded_shape[d] = shape[t->perm[d]];
}

static void
transpose_encode(const zarr_codec *k, size_t es, const uint64_t *shape, const uint8_t *src, uint8_t *dst)
{
    transpose_run(ZARR__CODEC_CCFG(k, transpose_cfg), es, shape, src, dst, true);
}

static void
transpose_decode(const zarr_codec *k, size_t es, const uint64_t *shape, const uint8_t *src, uint8_t *dst)
{
    transpose_run(ZARR__CODEC_CCFG(k, transpose_cfg), es, shape, src, dst, false);
}

const zarr__codec_class zarr__codec_transpose = {
    .v3name     = "transpose",
    .stage      = ZARR__STAGE_A2A,
    .parse      = transpose_parse,
    .to_json    = transpose_to_json,
    .is_noop    = transpose_is_noop,
    .a2a_shape  = transpose_shape,
    .a2a_encode = transpose_encode,
    .a2a_decode = transpose_decode,
};
