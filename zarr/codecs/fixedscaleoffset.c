/*
 * fixedscaleoffset.c: the numcodecs `fixedscaleoffset` codec (v2 "fixedscaleoffset", v3
 * "numcodecs.fixedscaleoffset"; lossy): encode is round((x - offset) * scale) as `astype`, decode is
 * enc / scale + offset as `dtype`, each step in the precision numpy uses (float32 arithmetic for a
 * float32 side, float64 otherwise; integer arithmetic, wrapping, when `dtype` is an integer type and
 * offset and scale are integers), rounding half to even (np.around), casts as numpy's astype. So a
 * chunk decodes to exactly numcodecs' values and encodes to numcodecs' bytes.
 */
#include "codec_class.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct fso_cfg {
    zarr__typed t; /* first: the zarr__typed_* hooks read it */
    double      offset, scale;
    long long   ioffset, iscale;
    bool        ints;                  /* integer dtype, integer offset and scale: integer arithmetic */
    bool        offset_int, scale_int; /* written back as integers */
} fso_cfg;
ZARR__CODEC_CFG_FITS(fso_cfg);

static uint64_t
fso_fn(const zarr_codec *k, uint64_t bits, bool encode)
{
    const fso_cfg *c = ZARR__CODEC_CCFG(k, fso_cfg);
    if (encode) {
        const zarr__numtype *d = &c->t.dtype;
        if (c->ints) {
            uint64_t r = (bits - (uint64_t)c->ioffset) * (uint64_t)c->iscale;
            if (d->size < 8) { /* the dtype's width, sign-extended as numpy holds it */
                r &= ~(~(uint64_t)0 << (8 * d->size));
                if (d->kind == 'i' && (r >> (8 * d->size - 1)) & 1)
                    r |= ~(uint64_t)0 << (8 * d->size);
            }
            return zarr__num_from_int(&c->t.astype, r, d->kind == 'i');
        }
        if (d->kind == 'f' && d->size == 4) {
            float x = (float)zarr__num_to_double(d, bits),
                  r = rintf((x - (float)c->offset) * (float)c->scale);
            return zarr__num_from_double(&c->t.astype, r);
        }
        if (d->kind == 'f' && d->size == 2) { /* numpy's float16 arithmetic: each step rounded to half */
            double x = zarr__num_to_double(d, bits), o = zarr__half_round(c->offset),
                   s = zarr__half_round(c->scale);
            double b = zarr__half_round(zarr__half_round(x - o) * s);
            return zarr__num_from_double(&c->t.astype, rint(b));
        }
        return zarr__num_from_double(&c->t.astype,
                                     rint((zarr__num_to_double(d, bits) - c->offset) * c->scale));
    }
    else {
        const zarr__numtype *a = &c->t.astype;
        double               v;
        if (a->kind == 'f' && a->size == 4)
            v = (float)((float)zarr__num_to_double(a, bits) / (float)c->scale) + (float)c->offset;
        else if (a->kind == 'f' && a->size == 2) {
            double x = zarr__num_to_double(a, bits), o = zarr__half_round(c->offset),
                   s = zarr__half_round(c->scale);
            v        = zarr__half_round(zarr__half_round(x / s) + o);
        }
        else
            v = zarr__num_to_double(a, bits) / c->scale + c->offset;
        if (a->kind == 'f' && a->size == 4)
            v = (float)v;
        return zarr__num_from_double(&c->t.dtype, v);
    }
}

static int
fso_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    fso_cfg *c = ZARR__CODEC_CFG(k, fso_cfg);
    int      rc;
    (void)p;
    if ((rc = zarr__typed_parse_types("fixedscaleoffset", cfg, "iuf", &c->t)) != ZARR_OK)
        return rc;
    if (!zarr__codec_cfg_get(cfg, "offset"))
        return zarr_error(ZARR_EMETA, "codec 'fixedscaleoffset': missing 'offset'");
    if (!zarr__codec_cfg_get(cfg, "scale"))
        return zarr_error(ZARR_EMETA, "codec 'fixedscaleoffset': missing 'scale'");
    if ((rc = zarr__codec_cfg_num("fixedscaleoffset", cfg, "offset", 0, &c->offset)) != ZARR_OK ||
        (rc = zarr__codec_cfg_num("fixedscaleoffset", cfg, "scale", 1, &c->scale)) != ZARR_OK)
        return rc;
    c->offset_int = json_object_is_type(zarr__codec_cfg_get(cfg, "offset"), json_type_int);
    c->scale_int  = json_object_is_type(zarr__codec_cfg_get(cfg, "scale"), json_type_int);
    c->ioffset    = c->offset_int ? json_object_get_int64(zarr__codec_cfg_get(cfg, "offset")) : 0;
    c->iscale     = c->scale_int ? json_object_get_int64(zarr__codec_cfg_get(cfg, "scale")) : 0;
    c->ints       = c->t.dtype.kind != 'f' && c->offset_int && c->scale_int;
    c->t.fn       = fso_fn;
    return ZARR_OK;
}

static int
fso_to_json(const zarr_chain *ch, const zarr_codec *k, bool v2, struct json_object *o)
{
    const fso_cfg *c = ZARR__CODEC_CCFG(k, fso_cfg);
    int            rc;
    char           dt[12], at[12];
    (void)ch;
    zarr__typed_json_types(&c->t, v2, dt, at);
    if ((rc = zarr__codec_json_add(o, "offset",
                                   c->offset_int ? json_object_new_int64(c->ioffset)
                                                 : json_object_new_double(c->offset))) != ZARR_OK ||
        (rc = zarr__codec_json_add(o, "scale",
                                   c->scale_int ? json_object_new_int64(c->iscale)
                                                : json_object_new_double(c->scale))) != ZARR_OK ||
        (rc = zarr__codec_json_add(o, "dtype", json_object_new_string(dt))) != ZARR_OK)
        return rc;
    return zarr__codec_json_add(o, "astype", json_object_new_string(at));
}

const zarr__codec_class zarr__codec_fixedscaleoffset = {
    .v3name        = "numcodecs.fixedscaleoffset",
    .v2id          = "fixedscaleoffset",
    .stage         = ZARR__STAGE_B2B,
    .parse         = fso_parse,
    .to_json       = fso_to_json,
    .encode        = zarr__typed_encode,
    .decode        = zarr__typed_decode,
    .decode_buf    = zarr__typed_decode_buf,
    .encoded_size  = zarr__typed_encoded_size,
    .encoded_bound = zarr__typed_encoded_bound,
    .v3_as_a2a     = zarr__typed_as_a2a,
    .v3_a2a_endian = zarr__typed_a2a_endian,
    .v3_before_a2b = zarr__typed_before_a2b,
};
