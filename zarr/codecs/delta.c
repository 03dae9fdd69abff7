/*
 * delta.c: the numcodecs `delta` codec (v2 "delta", v3 "numcodecs.delta"): enc[0] = x[0], enc[i] =
 * x[i] - x[i-1] in the arithmetic of `dtype`, stored as `astype`; decode is the running sum
 * accumulated in `dtype` (numpy's cumsum with out=). Integers wrap; float16 steps are computed in float
 * and rounded to half, as numpy's half arithmetic does. Types are parsed, loaded, stored and converted
 * by codec_numeric.c (zarr__numtype), in the configured type strings' byte orders. A bytes->bytes step over
 * elements of its configured numpy type, as v2 filters apply it. In v3, zarr-python 3 (numcodecs.zarr3) has
 * delta as an array->array codec before `bytes`; such a delta is run as the equivalent bytes->bytes step
 * right after `bytes`, in the byte order `bytes` gives the elements, and written back before `bytes` as
 * configured (delta_as_a2a).
 */
#include "codec_class.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct delta_cfg {
    zarr__numtype d, a; /* dtype and astype as configured ("<f8", "int32"; kinds i, u, f) */
    bool a2a; /* v3: configured before the array->bytes codec (zarr-python 3's array->array form); stored
                 after it, with the bytes codec's byte order */
} delta_cfg;
ZARR__CODEC_CFG_FITS(delta_cfg);

static int
delta_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    delta_cfg  *dc = ZARR__CODEC_CFG(k, delta_cfg);
    const char *dt, *at;
    int         rc;
    (void)p;
    if ((rc = zarr__codec_cfg_str("delta", cfg, "dtype", NULL, &dt)) != ZARR_OK)
        return rc;
    if (!dt)
        return zarr_error(ZARR_EMETA, "codec 'delta': missing 'dtype'");
    if (json_object_is_type(zarr__codec_cfg_get(cfg, "astype"), json_type_null))
        at = dt;
    else if ((rc = zarr__codec_cfg_str("delta", cfg, "astype", dt, &at)) != ZARR_OK)
        return rc;
    if ((rc = zarr__numtype_parse("delta", "dtype", dt, "iuf", &dc->d)) != ZARR_OK ||
        (rc = zarr__numtype_parse("delta", "astype", at, "iuf", &dc->a)) != ZARR_OK)
        return rc;
    if ((dc->d.kind == 'f') != (dc->a.kind == 'f'))
        return zarr_error(ZARR_EUNSUPPORTED,
                          "codec 'delta': casting between integer and float ('%s' -> '%s') is not "
                          "supported",
                          dt, at);
    return ZARR_OK;
}

static int
delta_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    const delta_cfg *dc = ZARR__CODEC_CCFG(k, delta_cfg);
    int              rc;
    (void)c;
    if (v2 && dc->a2a) { /* as a v2 filter: over the bytes in the order `bytes` wrote */
        char dt[8], at[8];
        snprintf(dt, sizeof dt, "%c%c%d", dc->d.endian, dc->d.kind, dc->d.size);
        snprintf(at, sizeof at, "%c%c%d", dc->a.endian, dc->a.kind, dc->a.size);
        if ((rc = zarr__codec_json_add(o, "dtype", json_object_new_string(dt))) == ZARR_OK &&
            strcmp(at, dt) != 0)
            rc = zarr__codec_json_add(o, "astype", json_object_new_string(at));
        return rc;
    }
    if ((rc = zarr__codec_json_add(o, "dtype", json_object_new_string(dc->d.str))) == ZARR_OK &&
        strcmp(dc->a.str, dc->d.str) != 0)
        rc = zarr__codec_json_add(o, "astype", json_object_new_string(dc->a.str));
    return rc;
}

/* One float step in `dtype`'s arithmetic, as numpy does it: float64 in double, float32 in float, float16
 * in float rounded to half (`t` is dtype). */
static double
delta_fstep(const zarr__numtype *t, double x, double y, bool add)
{
    if (t->size == 8)
        return add ? x + y : x - y;
    {
        float r = add ? (float)x + (float)y : (float)x - (float)y;
        return t->size == 4 ? (double)r : zarr__num_to_double(t, zarr__num_from_double(t, (double)r));
    }
}

static int
delta_run(const delta_cfg *dc, bool encode, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n)
{
    const zarr__numtype *in = encode ? &dc->d : &dc->a, *out = encode ? &dc->a : &dc->d;
    size_t               is = (size_t)in->size, os = (size_t)out->size, nelem = n / is;
    uint64_t             prev = 0, acc = 0;
    double               fprev = 0, facc = 0;

    if (n % is != 0 || dst_n != nelem * os)
        return zarr_error(ZARR_ECODEC, "delta: %zu bytes are not a whole number of '%s' elements%s", n,
                          in->str, dst_n != nelem * os ? " or do not decode to the expected size" : "");
    for (size_t i = 0; i < nelem; i++) {
        uint64_t x = zarr__num_load(in, src + i * is), o; /* integers sign-extended for 'i' */
        if (dc->d.kind != 'f') {
            if (encode) {
                o    = i == 0 ? x : x - prev; /* wraps like the dtype's arithmetic; stored as its low bytes */
                prev = x;
            }
            else
                o = acc = i == 0 ? x : acc + x;
        }
        else {
            double v = zarr__num_to_double(in, x), r;
            if (encode) {
                r     = i == 0 ? v : delta_fstep(&dc->d, v, fprev, false);
                fprev = v;
            }
            else
                r = facc = i == 0 ? v : delta_fstep(&dc->d, facc, v, true);
            o = zarr__num_from_double(out, r);
        }
        zarr__num_store(out, dst + i * os, o);
    }
    return ZARR_OK;
}

/* Encoded size for `n` decoded delta bytes (ZARR__SIZE_UNKNOWN when they are not whole elements). */
static size_t
delta_encoded_size(const delta_cfg *dc, size_t n)
{
    if (n == ZARR__SIZE_UNKNOWN || n % (size_t)dc->d.size)
        return ZARR__SIZE_UNKNOWN;
    return n / (size_t)dc->d.size * (size_t)dc->a.size;
}

static int
delta_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    const delta_cfg *dc = ZARR__CODEC_CCFG(k, delta_cfg);
    size_t           on = delta_encoded_size(dc, n);
    int              rc;
    (void)ctx;
    if (on == ZARR__SIZE_UNKNOWN)
        return zarr_error(ZARR_ECODEC, "delta: %zu bytes are not a whole number of '%s' elements", n,
                          dc->d.str);
    if ((rc = zarr_buf_resize(out, on)) != ZARR_OK)
        return rc;
    return delta_run(dc, true, src, n, out->data, on);
}

static int
delta_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
             size_t dst_n)
{
    (void)ctx;
    return delta_run(ZARR__CODEC_CCFG(k, delta_cfg), false, src, n, dst, dst_n);
}

static int
delta_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
                 zarr_buf *out)
{
    const delta_cfg *dc = ZARR__CODEC_CCFG(k, delta_cfg);
    size_t           on;
    int              rc;
    (void)ctx;
    if (n % (size_t)dc->a.size)
        return zarr_error(ZARR_ECODEC, "delta: %zu bytes are not a whole number of '%s' elements", n,
                          dc->a.str);
    on = n / (size_t)dc->a.size * (size_t)dc->d.size;
    if (on > limit)
        return zarr_error(ZARR_ECODEC, "delta: decodes to %zu bytes, more than the limit of %zu", on, limit);
    if ((rc = zarr_buf_resize(out, on)) != ZARR_OK)
        return rc;
    return delta_run(dc, false, src, n, out->data, on);
}

static size_t
delta_size(const zarr_codec *k, size_t n)
{
    return delta_encoded_size(ZARR__CODEC_CCFG(k, delta_cfg), n);
}

static size_t
delta_bound(const zarr_codec *k, size_t bound)
{
    const delta_cfg *dc = ZARR__CODEC_CCFG(k, delta_cfg);
    if (bound == ZARR__SIZE_UNKNOWN || dc->a.size <= dc->d.size)
        return bound;
    return zarr__codec_grow_bound(bound / (size_t)dc->d.size * (size_t)dc->a.size);
}

/* A v3 numcodecs.delta before the array->bytes codec is zarr-python 3's array->array form: numcodecs
 * views the chunk's elements as `dtype` and writes `astype` elements, which `bytes` then stores in its
 * byte order. That is the bytes->bytes delta right after `bytes`, reading and writing the elements in
 * the byte order `bytes` gave them, as long as `dtype` is the array's own number type in memory order
 * and `astype` has its size (zarr-python 3 itself reads no other astype there: it keeps the array's
 * type for `bytes`). The chain sets the byte orders (delta_a2a_endian) once it has the `bytes` codec. */
static int
delta_as_a2a(const zarr_dtype *t, zarr_codec *k)
{
    delta_cfg *dc  = ZARR__CODEC_CFG(k, delta_cfg);
    bool       num = t->kind == ZARR_INT || t->kind == ZARR_UINT || t->kind == ZARR_FLOAT;
    if (!num || (size_t)dc->d.size != t->size || (dc->d.kind == 'f') != (t->kind == ZARR_FLOAT))
        return zarr_error(
            ZARR_EUNSUPPORTED,
            "codec 'numcodecs.delta' before 'bytes': 'dtype' \"%s\" is not the array's data type", dc->d.str);
    if (dc->d.endian != '|' && dc->d.endian != ZARR__HOST_ENDIAN)
        return zarr_error(ZARR_EUNSUPPORTED,
                          "codec 'numcodecs.delta' before 'bytes': 'dtype' \"%s\" is not in the memory byte "
                          "order",
                          dc->d.str);
    if (dc->a.size != dc->d.size)
        return zarr_error(ZARR_EUNSUPPORTED,
                          "codec 'numcodecs.delta' before 'bytes': 'astype' \"%s\" has another size than "
                          "'dtype' \"%s\" (not readable there)",
                          dc->a.str, dc->d.str);
    dc->a2a = true;
    return ZARR_OK;
}

static void
delta_a2a_endian(zarr_codec *k, char e)
{
    delta_cfg *dc = ZARR__CODEC_CFG(k, delta_cfg);
    dc->d.endian  = dc->d.size == 1 ? '|' : e;
    dc->a.endian  = dc->a.size == 1 ? '|' : e;
}

static bool
delta_before_a2b(const zarr_codec *k)
{
    return ZARR__CODEC_CCFG(k, delta_cfg)->a2a;
}

const zarr__codec_class zarr__codec_delta = {
    .v3name        = "numcodecs.delta",
    .v2id          = "delta",
    .stage         = ZARR__STAGE_B2B,
    .parse         = delta_parse,
    .to_json       = delta_to_json,
    .encode        = delta_encode,
    .decode        = delta_decode,
    .decode_buf    = delta_decode_buf,
    .encoded_size  = delta_size,
    .encoded_bound = delta_bound,
    .v3_as_a2a     = delta_as_a2a,
    .v3_a2a_endian = delta_a2a_endian,
    .v3_before_a2b = delta_before_a2b,
};
