/*
 * codec_numeric.c: numpy number types for the typed numcodecs filters (fixedscaleoffset, quantize,
 * bitround, astype, categorize): parsing numpy type strings, loading and storing elements in either
 * byte order, and converting between types the way numpy's astype does on x86-64 (what numcodecs 0.11
 * runs), so values decode as numcodecs decodes them.
 */
#include "codec_class.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
zarr__numtype_parse(const char *codec, const char *key, const char *s, const char *kinds, zarr__numtype *t)
{
    static const struct {
        const char *name;
        char        kind;
        int         size;
    } names[]     = {{"bool", 'b', 1},   {"int8", 'i', 1},    {"int16", 'i', 2},   {"int32", 'i', 4},
                     {"int64", 'i', 8},  {"uint8", 'u', 1},   {"uint16", 'u', 2},  {"uint32", 'u', 4},
                     {"uint64", 'u', 8}, {"float16", 'f', 2}, {"float32", 'f', 4}, {"float64", 'f', 8}};
    const char *p = s;
    char       *end;
    long        n;

    memset(t, 0, sizeof *t);
    if (!s || strlen(s) >= sizeof t->str)
        goto bad;
    snprintf(t->str, sizeof t->str, "%s", s);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(s, names[i].name) == 0) {
            t->kind   = names[i].kind;
            t->size   = names[i].size;
            t->endian = names[i].size == 1 ? '|' : ZARR__HOST_ENDIAN;
            goto kind;
        }
    t->endian = ZARR__HOST_ENDIAN;
    if (*p == '<' || *p == '>' || *p == '|' || *p == '=')
        t->endian = *p == '=' ? ZARR__HOST_ENDIAN : *p, p++;
    t->kind = *p;
    if (!strchr("iufbU", *p) || !*p || !p[1])
        goto bad;
    n = strtol(p + 1, &end, 10);
    if (*end || n < 1)
        goto bad;
    if (t->kind == 'U') {
        if (n > 1 << 20)
            goto bad;
        t->size = (int)n * 4;
        if (t->endian == '|')
            goto bad;
    }
    else {
        if (!(n == 1 || n == 2 || n == 4 || n == 8) || (t->kind == 'f' && n < 2) ||
            (t->kind == 'b' && n != 1))
            goto bad;
        t->size = (int)n;
        if (n == 1)
            t->endian = '|';
        else if (t->endian == '|')
            goto bad;
    }
kind:
    if (!strchr(kinds, t->kind))
        goto bad;
    return ZARR_OK;
bad:
    return zarr_error(ZARR_EUNSUPPORTED,
                      "codec '%s': '%s' is \"%s\"; want a numpy type of kind %s (like \"<f8\", "
                      "\"|u1\", \"int32\")",
                      codec, key, s ? s : "(null)", kinds);
}

uint64_t
zarr__num_load(const zarr__numtype *t, const uint8_t *p)
{
    uint64_t v  = 0;
    int      sz = t->size > 8 ? 8 : t->size;
    for (int b = 0; b < sz; b++)
        v |= (uint64_t)p[t->endian == '>' ? sz - 1 - b : b] << (8 * b);
    if (t->kind == 'i' && sz < 8 && (v >> (8 * sz - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * sz);
    return v;
}

void
zarr__num_store(const zarr__numtype *t, uint8_t *p, uint64_t bits)
{
    int sz = t->size > 8 ? 8 : t->size;
    for (int b = 0; b < sz; b++)
        p[t->endian == '>' ? sz - 1 - b : b] = (uint8_t)(bits >> (8 * b));
}

double
zarr__num_to_double(const zarr__numtype *t, uint64_t bits)
{
    switch (t->kind) {
        case 'i':
            return (double)(int64_t)bits;
        case 'u':
            return (double)bits;
        case 'b':
            return bits ? 1.0 : 0.0;
        default:
            break;
    }
    if (t->size == 2)
        return zarr__half_to_double((uint16_t)bits);
    if (t->size == 4) {
        uint32_t u = (uint32_t)bits;
        float    f;
        memcpy(&f, &u, 4);
        return f;
    }
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

/* cvttsd2si: truncation, out of range and NaN -> the "integer indefinite" value INT_MIN. */
static int64_t
trunc64(double v)
{
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN;
}
static int32_t
trunc32(double v)
{
    return v > -2147483649.0 && v < 2147483648.0 ? (int32_t)v : INT32_MIN;
}

uint64_t
zarr__num_from_double(const zarr__numtype *t, double v)
{
    switch (t->kind) {
        case 'b':
            return v != 0;
        case 'i':
            return t->size == 8 ? (uint64_t)trunc64(v) : (uint64_t)(int64_t)trunc32(v);
        case 'u':
            if (t->size == 8) {
                if (v >= 9223372036854775808.0 && v < 18446744073709551616.0)
                    return (uint64_t)trunc64(v - 9223372036854775808.0) ^ ((uint64_t)1 << 63);
                return (uint64_t)trunc64(v);
            }
            return t->size == 4 ? (uint64_t)trunc64(v) & 0xFFFFFFFFu : (uint64_t)(uint32_t)trunc32(v);
        default:
            break;
    }
    if (t->size == 2)
        return zarr__half_from_double(v);
    if (t->size == 4) {
        float    f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}

uint64_t
zarr__num_from_int(const zarr__numtype *t, uint64_t v, bool is_signed)
{
    if (t->kind == 'b')
        return v != 0;
    if (t->kind != 'f')
        return v;       /* integers wrap: the store keeps the low bytes */
    if (t->size == 4) { /* one rounding, as numpy's C cast */
        float    f = is_signed ? (float)(int64_t)v : (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    return zarr__num_from_double(t, is_signed ? (double)(int64_t)v : (double)v);
}

uint64_t
zarr__num_cast(const zarr__numtype *from, const zarr__numtype *to, uint64_t bits)
{
    if (from->kind == 'i' || from->kind == 'u' || from->kind == 'b')
        return zarr__num_from_int(to, bits, from->kind == 'i');
    return zarr__num_from_double(to, zarr__num_to_double(from, bits));
}

/* ------------------------------------------------------------------------------------------------
 * Typed bytes->bytes codecs: element by element from `dtype` to `astype` (encode) and back
 * ------------------------------------------------------------------------------------------------ */
static int
typed_run(const zarr_codec *k, bool encode, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n)
{
    const zarr__typed   *t  = ZARR__CODEC_CCFG(k, zarr__typed);
    const zarr__numtype *in = encode ? &t->dtype : &t->astype, *out = encode ? &t->astype : &t->dtype;
    size_t               is = (size_t)in->size, os = (size_t)out->size, nelem = n / is;
    if (n % is != 0 || dst_n != nelem * os)
        return zarr_error(ZARR_ECODEC, "%s: %zu bytes are not a whole number of '%s' elements%s",
                          k->cls->v2id, n, in->str,
                          dst_n != nelem * os ? " or do not decode to the expected size" : "");
    for (size_t i = 0; i < nelem; i++)
        zarr__num_store(out, dst + i * os, t->fn(k, zarr__num_load(in, src + i * is), encode));
    return ZARR_OK;
}

size_t
zarr__typed_encoded_size(const zarr_codec *k, size_t n)
{
    const zarr__typed *t = ZARR__CODEC_CCFG(k, zarr__typed);
    if (n == ZARR__SIZE_UNKNOWN || n % (size_t)t->dtype.size)
        return ZARR__SIZE_UNKNOWN;
    return n / (size_t)t->dtype.size * (size_t)t->astype.size;
}

size_t
zarr__typed_encoded_bound(const zarr_codec *k, size_t bound)
{
    const zarr__typed *t = ZARR__CODEC_CCFG(k, zarr__typed);
    if (bound == ZARR__SIZE_UNKNOWN || t->astype.size <= t->dtype.size)
        return bound;
    return zarr__codec_grow_bound(bound / (size_t)t->dtype.size * (size_t)t->astype.size);
}

int
zarr__typed_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    const zarr__typed *t  = ZARR__CODEC_CCFG(k, zarr__typed);
    size_t             on = zarr__typed_encoded_size(k, n);
    int                rc;
    (void)ctx;
    if (on == ZARR__SIZE_UNKNOWN)
        return zarr_error(ZARR_ECODEC, "%s: %zu bytes are not a whole number of '%s' elements", k->cls->v2id,
                          n, t->dtype.str);
    if ((rc = zarr_buf_resize(out, on)) != ZARR_OK)
        return rc;
    return typed_run(k, true, src, n, out->data, on);
}

int
zarr__typed_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
                   size_t dst_n)
{
    (void)ctx;
    return typed_run(k, false, src, n, dst, dst_n);
}

int
zarr__typed_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
                       zarr_buf *out)
{
    const zarr__typed *t = ZARR__CODEC_CCFG(k, zarr__typed);
    size_t             on;
    int                rc;
    (void)ctx;
    if (n % (size_t)t->astype.size)
        return zarr_error(ZARR_ECODEC, "%s: %zu bytes are not a whole number of '%s' elements", k->cls->v2id,
                          n, t->astype.str);
    on = n / (size_t)t->astype.size * (size_t)t->dtype.size;
    if (on > limit)
        return zarr_error(ZARR_ECODEC, "%s: decodes to %zu bytes, more than the limit of %zu", k->cls->v2id,
                          on, limit);
    if ((rc = zarr_buf_resize(out, on)) != ZARR_OK)
        return rc;
    return typed_run(k, false, src, n, out->data, on);
}

int
zarr__typed_as_a2a(const zarr_dtype *t, zarr_codec *k)
{
    zarr__typed *c = ZARR__CODEC_CFG(k, zarr__typed);
    bool num  = t->kind == ZARR_INT || t->kind == ZARR_UINT || t->kind == ZARR_FLOAT || t->kind == ZARR_BOOL;
    char kind = t->kind == ZARR_INT ? 'i' : t->kind == ZARR_UINT ? 'u' : t->kind == ZARR_FLOAT ? 'f' : 'b';
    if (!num || (size_t)c->dtype.size != t->size || c->dtype.kind != kind)
        return zarr_error(ZARR_EUNSUPPORTED,
                          "codec '%s' before 'bytes': its type \"%s\" is not the array's data type",
                          k->cls->v3name, c->dtype.str);
    if (c->dtype.endian != '|' && c->dtype.endian != ZARR__HOST_ENDIAN)
        return zarr_error(ZARR_EUNSUPPORTED,
                          "codec '%s' before 'bytes': its type \"%s\" is not in the memory byte order",
                          k->cls->v3name, c->dtype.str);
    c->a2a = true;
    return ZARR_OK;
}

void
zarr__typed_a2a_endian(zarr_codec *k, char e)
{
    zarr__typed *c   = ZARR__CODEC_CFG(k, zarr__typed);
    c->dtype.endian  = c->dtype.size == 1 ? '|' : e;
    c->astype.endian = c->astype.size == 1 ? '|' : e;
}

bool
zarr__typed_before_a2b(const zarr_codec *k)
{
    return ZARR__CODEC_CCFG(k, zarr__typed)->a2a;
}

int
zarr__typed_parse_types(const char *codec, struct json_object *cfg, const char *kinds, zarr__typed *t)
{
    const char         *dt, *at;
    struct json_object *v;
    int                 rc;
    if ((rc = zarr__codec_cfg_str(codec, cfg, "dtype", NULL, &dt)) != ZARR_OK)
        return rc;
    if (!dt)
        return zarr_error(ZARR_EMETA, "codec '%s': missing 'dtype'", codec);
    v = zarr__codec_cfg_get(cfg, "astype");
    if (!v || json_object_is_type(v, json_type_null))
        at = dt;
    else if ((rc = zarr__codec_cfg_str(codec, cfg, "astype", dt, &at)) != ZARR_OK)
        return rc;
    if ((rc = zarr__numtype_parse(codec, "dtype", dt, kinds, &t->dtype)) != ZARR_OK)
        return rc;
    return zarr__numtype_parse(codec, "astype", at, kinds, &t->astype);
}

void
zarr__typed_json_types(const zarr__typed *t, bool v2, char dt[12], char at[12])
{
    snprintf(dt, 12, "%s", t->dtype.str);
    snprintf(at, 12, "%s", t->astype.str);
    if (v2 && t->a2a) { /* as a v2 filter: over the bytes in the order `bytes` wrote */
        snprintf(dt, 12, "%c%c%d", t->dtype.endian, t->dtype.kind, t->dtype.size);
        snprintf(at, 12, "%c%c%d", t->astype.endian, t->astype.kind, t->astype.size);
    }
}

char
zarr__chain_element_endian(const zarr__codec_parse *p)
{
    const zarr_chain *c = p->chain;
    if (c->v2_order && c->build_dtype)
        return c->build_dtype->endian == '>' ? '>' : '<';
    for (size_t i = 0; i < c->n; i++)
        if (c->codecs[i].cls == &zarr__codec_bytes)
            return zarr__bytes_endian(&c->codecs[i]) == '>' ? '>' : '<';
    return ZARR__HOST_ENDIAN;
}
