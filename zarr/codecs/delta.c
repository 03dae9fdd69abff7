/*
 * delta.c: the numcodecs `delta` codec (v2 "delta", v3 "numcodecs.delta"): enc[0] = x[0], enc[i] =
 * x[i] - x[i-1] in the arithmetic of `dtype`, stored as `astype`; decode is the running sum
 * accumulated in `dtype` (numpy's cumsum with out=). Integers wrap; byte orders are the configured
 * type strings'. A bytes->bytes step over elements of its configured numpy type, as v2 filters apply
 * it. In v3, zarr-python 3 (numcodecs.zarr3) has delta as an array->array codec before `bytes`; such a
 * delta is run as the equivalent bytes->bytes step right after `bytes`, in the byte order `bytes`
 * gives the elements, and written back before `bytes` as configured (delta_as_a2a).
 */
#include "codec_class.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct delta_cfg {
    char dtype[8], astype[8]; /* numpy type strings as configured ("<f8") */
    char dkind, akind;        /* 'i', 'u', 'f' */
    int  dsize, asize;
    char dendian, aendian; /* '<', '>' ('|' for one byte) */
    bool a2a; /* v3: configured before the array->bytes codec (zarr-python 3's array->array form); stored
                 after it, with the bytes codec's byte order */
} delta_cfg;
ZARR__CODEC_CFG_FITS(delta_cfg);

/* A numpy number type string for delta: [<>|=]?[iuf]<size>, or a numpy name in the host's order
 * ("int32", "uint8", "float64": what zarr-python 3 documents written with `Delta(dtype="uint32")` say). */
static int
delta_type(const char *key, const char *s, char *kind, int *size, char *endian)
{
    static const struct {
        const char *name;
        char        kind;
        int         size;
    } names[]     = {{"int8", 'i', 1},    {"int16", 'i', 2},  {"int32", 'i', 4},  {"int64", 'i', 8},
                     {"uint8", 'u', 1},   {"uint16", 'u', 2}, {"uint32", 'u', 4}, {"uint64", 'u', 8},
                     {"float32", 'f', 4}, {"float64", 'f', 8}};
    const char *p = s;
    char       *end;
    long        n;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(s, names[i].name) == 0) {
            *kind   = names[i].kind;
            *size   = names[i].size;
            *endian = names[i].size == 1 ? '|' : ZARR__HOST_ENDIAN;
            return ZARR_OK;
        }
    *endian = ZARR__HOST_ENDIAN;
    if (*p == '<' || *p == '>' || *p == '|' || *p == '=')
        *endian = *p == '=' ? ZARR__HOST_ENDIAN : *p, p++;
    *kind = *p;
    if (*p != 'i' && *p != 'u' && *p != 'f')
        goto bad;
    n = strtol(p + 1, &end, 10);
    if (!p[1] || *end || !(n == 1 || n == 2 || n == 4 || n == 8) || (*kind == 'f' && n < 4) || strlen(s) > 7)
        goto bad;
    *size = (int)n;
    if (n == 1)
        *endian = '|';
    else if (*endian == '|')
        goto bad;
    return ZARR_OK;
bad:
    return zarr_error(ZARR_EUNSUPPORTED,
                      "codec 'delta': '%s' is \"%s\"; supported are integer and float types like \"<i4\", "
                      "\"<f8\", \"int32\"",
                      key, s);
}

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
    if ((rc = delta_type("dtype", dt, &dc->dkind, &dc->dsize, &dc->dendian)) != ZARR_OK ||
        (rc = delta_type("astype", at, &dc->akind, &dc->asize, &dc->aendian)) != ZARR_OK)
        return rc;
    if ((dc->dkind == 'f') != (dc->akind == 'f'))
        return zarr_error(ZARR_EUNSUPPORTED,
                          "codec 'delta': casting between integer and float ('%s' -> '%s') is not "
                          "supported",
                          dt, at);
    snprintf(dc->dtype, sizeof dc->dtype, "%s", dt);
    snprintf(dc->astype, sizeof dc->astype, "%s", at);
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
        snprintf(dt, sizeof dt, "%c%c%d", dc->dendian, dc->dkind, dc->dsize);
        snprintf(at, sizeof at, "%c%c%d", dc->aendian, dc->akind, dc->asize);
        if ((rc = zarr__codec_json_add(o, "dtype", json_object_new_string(dt))) == ZARR_OK &&
            strcmp(at, dt) != 0)
            rc = zarr__codec_json_add(o, "astype", json_object_new_string(at));
        return rc;
    }
    if ((rc = zarr__codec_json_add(o, "dtype", json_object_new_string(dc->dtype))) == ZARR_OK &&
        strcmp(dc->astype, dc->dtype) != 0)
        rc = zarr__codec_json_add(o, "astype", json_object_new_string(dc->astype));
    return rc;
}

static uint64_t
delta_load(const uint8_t *p, int size, char endian)
{
    uint64_t v = 0;
    for (int b = 0; b < size; b++)
        v |= (uint64_t)p[endian == '>' ? size - 1 - b : b] << (8 * b);
    return v;
}

static void
delta_store(uint8_t *p, int size, char endian, uint64_t v)
{
    for (int b = 0; b < size; b++)
        p[endian == '>' ? size - 1 - b : b] = (uint8_t)(v >> (8 * b));
}

/* Integer bits of `size` bytes, sign-extended when signed. */
static uint64_t
delta_ext(uint64_t v, int size, char kind)
{
    if (size < 8 && kind == 'i' && (v >> (8 * size - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * size);
    return v;
}

static double
delta_f(uint64_t bits, int size)
{
    if (size == 4) {
        uint32_t u = (uint32_t)bits;
        float    f;
        memcpy(&f, &u, 4);
        return f;
    }
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

static uint64_t
delta_fbits(double v, int size)
{
    if (size == 4) {
        float    f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}

static int
delta_run(const delta_cfg *dc, bool encode, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n)
{
    int      is = encode ? dc->dsize : dc->asize, os = encode ? dc->asize : dc->dsize;
    char     ie = encode ? dc->dendian : dc->aendian, oe = encode ? dc->aendian : dc->dendian;
    char     ik    = encode ? dc->dkind : dc->akind;
    int      ds    = dc->dsize;
    size_t   nelem = n / (size_t)is;
    uint64_t prev = 0, acc = 0;
    double   fprev = 0, facc = 0;

    if (n % (size_t)is != 0 || dst_n != nelem * (size_t)os)
        return zarr_error(ZARR_ECODEC, "delta: %zu bytes are not a whole number of '%s' elements%s", n,
                          encode ? dc->dtype : dc->astype,
                          dst_n != nelem * (size_t)os ? " or do not decode to the expected size" : "");
    for (size_t i = 0; i < nelem; i++) {
        uint64_t raw = delta_load(src + i * (size_t)is, is, ie), out;
        if (dc->dkind != 'f') {
            uint64_t x = delta_ext(raw, is, ik);
            if (encode) {
                out  = i == 0 ? x : x - prev; /* wraps like the dtype's arithmetic */
                prev = x;
            }
            else
                out = acc = i == 0 ? x : acc + x;
            if (!encode && ds < 8)
                out &= ~(~(uint64_t)0 << (8 * ds));
        }
        else {
            double x = delta_f(raw, is), r;
            if (encode) {
                r     = i == 0 ? x : (ds == 4 ? (double)((float)x - (float)fprev) : x - fprev);
                fprev = x;
            }
            else
                r = facc = i == 0 ? x : (ds == 4 ? (double)((float)facc + (float)x) : facc + x);
            out = delta_fbits(r, os);
        }
        delta_store(dst + i * (size_t)os, os, oe, out);
    }
    return ZARR_OK;
}

/* Encoded size for `n` decoded delta bytes (ZARR__SIZE_UNKNOWN when they are not whole elements). */
static size_t
delta_encoded_size(const delta_cfg *dc, size_t n)
{
    if (n == ZARR__SIZE_UNKNOWN || n % (size_t)dc->dsize)
        return ZARR__SIZE_UNKNOWN;
    return n / (size_t)dc->dsize * (size_t)dc->asize;
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
                          dc->dtype);
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
    if (n % (size_t)dc->asize)
        return zarr_error(ZARR_ECODEC, "delta: %zu bytes are not a whole number of '%s' elements", n,
                          dc->astype);
    on = n / (size_t)dc->asize * (size_t)dc->dsize;
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
    if (bound == ZARR__SIZE_UNKNOWN || dc->asize <= dc->dsize)
        return bound;
    return zarr__codec_grow_bound(bound / (size_t)dc->dsize * (size_t)dc->asize);
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
    if (!num || (size_t)dc->dsize != t->size || (dc->dkind == 'f') != (t->kind == ZARR_FLOAT))
        return zarr_error(
            ZARR_EUNSUPPORTED,
            "codec 'numcodecs.delta' before 'bytes': 'dtype' \"%s\" is not the array's data type", dc->dtype);
    if (dc->dendian != '|' && dc->dendian != ZARR__HOST_ENDIAN)
        return zarr_error(ZARR_EUNSUPPORTED,
                          "codec 'numcodecs.delta' before 'bytes': 'dtype' \"%s\" is not in the memory byte "
                          "order",
                          dc->dtype);
    if (dc->asize != dc->dsize)
        return zarr_error(ZARR_EUNSUPPORTED,
                          "codec 'numcodecs.delta' before 'bytes': 'astype' \"%s\" has another size than "
                          "'dtype' \"%s\" (not readable there)",
                          dc->astype, dc->dtype);
    dc->a2a = true;
    return ZARR_OK;
}

static void
delta_a2a_endian(zarr_codec *k, char e)
{
    delta_cfg *dc = ZARR__CODEC_CFG(k, delta_cfg);
    dc->dendian   = dc->dsize == 1 ? '|' : e;
    dc->aendian   = dc->asize == 1 ? '|' : e;
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
