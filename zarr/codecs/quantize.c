/*
 * quantize.c: the numcodecs `quantize` codec (v2 "quantize", v3 "numcodecs.quantize"; lossy, float
 * types only): encode rounds each value to a multiple of 2^-bits, where bits is the least giving
 * `digits` decimal digits (numcodecs' own computation, with the same libm calls), in the precision of
 * `dtype`, and stores it as `astype`; decode casts back to `dtype`. Bit for bit numcodecs' output.
 */
#include "codec_class.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>

typedef struct quantize_cfg {
    zarr__typed t; /* first: the zarr__typed_* hooks read it */
    int         digits;
    double      scale;
} quantize_cfg;
ZARR__CODEC_CFG_FITS(quantize_cfg);

static uint64_t
quantize_fn(const zarr_codec *k, uint64_t bits, bool encode)
{
    const quantize_cfg  *c = ZARR__CODEC_CCFG(k, quantize_cfg);
    const zarr__numtype *d = &c->t.dtype;
    if (!encode)
        return zarr__num_cast(&c->t.astype, d, bits);
    if (d->size == 4) {
        float s = (float)c->scale, x = (float)zarr__num_to_double(d, bits);
        return zarr__num_from_double(&c->t.astype, (float)(rintf(s * x) / s));
    }
    if (d->size == 2) { /* numpy's float16 arithmetic: each step rounded to half (see internal.h) */
        double s = zarr__half_round(c->scale), x = zarr__num_to_double(d, bits);
        double r = rint(zarr__half_round(s * x));
        return zarr__num_from_double(&c->t.astype, zarr__half_round(r / s));
    }
    return zarr__num_from_double(&c->t.astype, rint(c->scale * zarr__num_to_double(d, bits)) / c->scale);
}

static int
quantize_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    quantize_cfg *c = ZARR__CODEC_CFG(k, quantize_cfg);
    long long     x;
    double        precision, e, b;
    int           rc;
    (void)p;
    if (!zarr__codec_cfg_get(cfg, "digits"))
        return zarr_error(ZARR_EMETA, "codec 'quantize': missing 'digits'");
    if ((rc = zarr__codec_cfg_int_range("quantize", cfg, "digits", false, 0, -300, 300, &x)) != ZARR_OK)
        return rc;
    c->digits = (int)x;
    if ((rc = zarr__typed_parse_types("quantize", cfg, "f", &c->t)) != ZARR_OK)
        return rc;
    /* numcodecs: precision = 10 ** -digits; exp = log10 via math.log(precision, 10), floored when < 0
     * else ceiled; bits = ceil(math.log(10 ** -exp, 2)); scale = 2 ** bits */
    precision = pow(10., -(double)c->digits);
    e         = log(precision) / log(10.);
    e         = e < 0 ? floor(e) : ceil(e);
    b         = ceil(log(pow(10., -e)) / log(2.));
    c->scale  = pow(2., b);
    c->t.fn   = quantize_fn;
    return ZARR_OK;
}

static int
quantize_to_json(const zarr_chain *ch, const zarr_codec *k, bool v2, struct json_object *o)
{
    const quantize_cfg *c = ZARR__CODEC_CCFG(k, quantize_cfg);
    char                dt[12], at[12];
    int                 rc;
    (void)ch;
    zarr__typed_json_types(&c->t, v2, dt, at);
    if ((rc = zarr__codec_json_add(o, "digits", json_object_new_int(c->digits))) != ZARR_OK ||
        (rc = zarr__codec_json_add(o, "dtype", json_object_new_string(dt))) != ZARR_OK)
        return rc;
    return zarr__codec_json_add(o, "astype", json_object_new_string(at));
}

const zarr__codec_class zarr__codec_quantize = {
    .v3name        = "numcodecs.quantize",
    .v2id          = "quantize",
    .stage         = ZARR__STAGE_B2B,
    .parse         = quantize_parse,
    .to_json       = quantize_to_json,
    .encode        = zarr__typed_encode,
    .decode        = zarr__typed_decode,
    .decode_buf    = zarr__typed_decode_buf,
    .encoded_size  = zarr__typed_encoded_size,
    .encoded_bound = zarr__typed_encoded_bound,
    .v3_as_a2a     = zarr__typed_as_a2a,
    .v3_a2a_endian = zarr__typed_a2a_endian,
    .v3_before_a2b = zarr__typed_before_a2b,
};
