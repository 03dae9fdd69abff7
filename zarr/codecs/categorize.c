/*
 * categorize.c: the numcodecs `categorize` codec (v2 "categorize", v3 "numcodecs.categorize"): fixed
 * unicode strings (`dtype` "<Un"/">Un") stored as integer codes (`astype`, default "|u1"): code i+1 for
 * an element equal to labels[i] (later labels win, as numcodecs assigns them in order), 0 for any
 * other. Decode writes labels[code-1] (cut to n characters), "" for 0 and unknown codes. Strings are
 * compared as numpy compares them (trailing NULs do not count). For object-dtype ("|O") string arrays
 * categorize is the object codec itself, the first v2 filter: an array->bytes codec from strings
 * (vlen-utf8 elements) to codes (categorize_object, the class's object_form).
 */
#include "codec_class.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cat_labels {
    size_t     n;
    uint32_t **cp;   /* code points of each label, trailing NULs removed */
    size_t    *len;  /* their counts */
    char     **utf8; /* as configured, for to_json */
} cat_labels;

typedef struct cat_cfg {
    zarr__numtype dtype, astype;
    cat_labels   *labels; /* owned */
} cat_cfg;
ZARR__CODEC_CFG_FITS(cat_cfg);

static void
labels_free(cat_labels *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->cp ? l->cp[i] : NULL);
        free(l->utf8 ? l->utf8[i] : NULL);
    }
    free(l->cp);
    free(l->len);
    free(l->utf8);
    free(l);
}

static void
cat_clear(zarr_codec *k)
{
    cat_cfg *c = ZARR__CODEC_CFG(k, cat_cfg);
    labels_free(c->labels);
    c->labels = NULL;
}

/* UTF-8 `s` (length n) as code points into a new array; -1 when it is not valid UTF-8. */
static int
utf8_decode(const char *s, size_t n, uint32_t **out, size_t *count)
{
    const uint8_t *p  = (const uint8_t *)s;
    uint32_t      *cp = malloc((n + 1) * sizeof *cp);
    size_t         k  = 0;
    if (!cp)
        return -2;
    for (size_t i = 0; i < n;) {
        uint32_t c     = p[i];
        int      extra = c < 0x80             ? 0
                         : (c & 0xE0) == 0xC0 ? 1
                         : (c & 0xF0) == 0xE0 ? 2
                         : (c & 0xF8) == 0xF0 ? 3
                                              : -1;
        if (extra < 0 || i + (size_t)extra >= n + (extra == 0))
            goto bad;
        if (extra)
            c &= 0x3Fu >> extra;
        for (int j = 1; j <= extra; j++) {
            if ((p[i + j] & 0xC0) != 0x80)
                goto bad;
            c = c << 6 | (p[i + j] & 0x3F);
        }
        if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            goto bad;
        cp[k++] = c;
        i += 1 + (size_t)extra;
    }
    while (k && cp[k - 1] == 0)
        k--;
    *out   = cp;
    *count = k;
    return 0;
bad:
    free(cp);
    return -1;
}

/* `object`: the object-dtype form (dtype "|O", the array->bytes codec of a string array). */
static int
cat_parse_any(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k, bool object)
{
    cat_cfg            *c = ZARR__CODEC_CFG(k, cat_cfg);
    const char         *dt, *at;
    struct json_object *lj = zarr__codec_cfg_get(cfg, "labels");
    cat_labels         *l;
    int                 rc;
    (void)p;
    if ((rc = zarr__codec_cfg_str("categorize", cfg, "dtype", NULL, &dt)) != ZARR_OK ||
        (rc = zarr__codec_cfg_str("categorize", cfg, "astype", "|u1", &at)) != ZARR_OK)
        return rc;
    if (!dt)
        return zarr_error(ZARR_EMETA, "codec 'categorize': missing 'dtype'");
    if (object != (strchr(dt, 'O') != NULL))
        return zarr_error(
            ZARR_EUNSUPPORTED,
            object ? "codec 'categorize': 'dtype' \"%s\" is not \"|O\", the array's object data type"
                   : "codec 'categorize': 'dtype' \"%s\" (Python object strings) is only read as the "
                     "first filter of an object (\"|O\") string array",
            dt);
    if (object) {
        if (strcmp(dt, "|O") != 0 && strcmp(dt, "O") != 0 && strcmp(dt, "object") != 0)
            return zarr_error(ZARR_EUNSUPPORTED, "codec 'categorize': 'dtype' \"%s\" is not \"|O\"", dt);
        snprintf(c->dtype.str, sizeof c->dtype.str, "|O");
        c->dtype.kind   = 'O';
        c->dtype.size   = (int)sizeof(char *);
        c->dtype.endian = '|';
    }
    else if ((rc = zarr__numtype_parse("categorize", "dtype", dt, "U", &c->dtype)) != ZARR_OK)
        return rc;
    if ((rc = zarr__numtype_parse("categorize", "astype", at, "iu", &c->astype)) != ZARR_OK)
        return rc;
    if (!lj || !json_object_is_type(lj, json_type_array))
        return zarr_error(ZARR_EMETA, "codec 'categorize': 'labels' must be a list of strings");
    if (!(l = calloc(1, sizeof *l)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    c->labels = l;
    l->n      = json_object_array_length(lj);
    if (!(l->cp = calloc(l->n + 1, sizeof *l->cp)) || !(l->len = calloc(l->n + 1, sizeof *l->len)) ||
        !(l->utf8 = calloc(l->n + 1, sizeof *l->utf8))) {
        l->n = 0;
        cat_clear(k);
        return zarr_error(ZARR_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < l->n; i++) {
        struct json_object *e = json_object_array_get_idx(lj, i);
        int                 r;
        if (!json_object_is_type(e, json_type_string)) {
            cat_clear(k);
            return zarr_error(ZARR_EMETA, "codec 'categorize': 'labels' entry %zu is not a string", i);
        }
        if (!(l->utf8[i] = strdup(json_object_get_string(e))) ||
            (r = utf8_decode(l->utf8[i], (size_t)json_object_get_string_len(e), &l->cp[i], &l->len[i])) ==
                -2) {
            cat_clear(k);
            return zarr_error(ZARR_ENOMEM, "out of memory");
        }
        if (r < 0) {
            cat_clear(k);
            return zarr_error(ZARR_EMETA, "codec 'categorize': 'labels' entry %zu is not valid UTF-8", i);
        }
    }
    return ZARR_OK;
}

static int
cat_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    return cat_parse_any(p, cfg, k, false);
}

static int
cat_parse_object(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    return cat_parse_any(p, cfg, k, true);
}

static int
cat_copy(zarr_codec *dst, const zarr_codec *src)
{
    const cat_labels *s = ZARR__CODEC_CCFG(src, cat_cfg)->labels;
    cat_cfg          *d = ZARR__CODEC_CFG(dst, cat_cfg);
    cat_labels       *l = calloc(1, sizeof *l);
    d->labels           = l;
    if (!l || !(l->cp = calloc(s->n + 1, sizeof *l->cp)) || !(l->len = calloc(s->n + 1, sizeof *l->len)) ||
        !(l->utf8 = calloc(s->n + 1, sizeof *l->utf8)))
        goto nomem;
    l->n = s->n;
    for (size_t i = 0; i < s->n; i++) {
        l->len[i] = s->len[i];
        if (!(l->utf8[i] = strdup(s->utf8[i])) || !(l->cp[i] = malloc((s->len[i] + 1) * sizeof(uint32_t))))
            goto nomem;
        memcpy(l->cp[i], s->cp[i], s->len[i] * sizeof(uint32_t));
    }
    return ZARR_OK;
nomem:
    cat_clear(dst);
    return zarr_error(ZARR_ENOMEM, "out of memory copying a codec chain");
}

static int
cat_to_json(const zarr_chain *ch, const zarr_codec *k, bool v2, struct json_object *o)
{
    const cat_cfg      *c = ZARR__CODEC_CCFG(k, cat_cfg);
    struct json_object *a = json_object_new_array();
    int                 rc;
    (void)ch, (void)v2;
    if ((rc = zarr__codec_json_add(o, "labels", a)) != ZARR_OK)
        return rc;
    for (size_t i = 0; i < c->labels->n; i++)
        if (json_object_array_add(a, json_object_new_string(c->labels->utf8[i])) != 0)
            return zarr_error(ZARR_ENOMEM, "out of memory building codec JSON");
    if ((rc = zarr__codec_json_add(o, "dtype", json_object_new_string(c->dtype.str))) != ZARR_OK)
        return rc;
    return zarr__codec_json_add(o, "astype", json_object_new_string(c->astype.str));
}

static uint32_t
unit_at(const zarr__numtype *t, const uint8_t *p)
{
    return t->endian == '>' ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                            : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static size_t
cat_size(const zarr_codec *k, size_t n)
{
    const cat_cfg *c = ZARR__CODEC_CCFG(k, cat_cfg);
    if (n == ZARR__SIZE_UNKNOWN || n % (size_t)c->dtype.size)
        return ZARR__SIZE_UNKNOWN;
    return n / (size_t)c->dtype.size * (size_t)c->astype.size;
}

static size_t
cat_bound(const zarr_codec *k, size_t bound)
{
    const cat_cfg *c = ZARR__CODEC_CCFG(k, cat_cfg);
    if (bound == ZARR__SIZE_UNKNOWN || c->astype.size <= c->dtype.size)
        return bound;
    return zarr__codec_grow_bound(bound / (size_t)c->dtype.size * (size_t)c->astype.size);
}

static int
cat_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    const cat_cfg *c  = ZARR__CODEC_CCFG(k, cat_cfg);
    size_t         es = (size_t)c->dtype.size, nchars = es / 4, on = cat_size(k, n);
    int            rc;
    (void)ctx;
    if (on == ZARR__SIZE_UNKNOWN)
        return zarr_error(ZARR_ECODEC, "categorize: %zu bytes are not a whole number of '%s' elements", n,
                          c->dtype.str);
    if ((rc = zarr_buf_resize(out, on)) != ZARR_OK)
        return rc;
    for (size_t i = 0; i < n / es; i++) {
        const uint8_t *e    = src + i * es;
        size_t         len  = nchars;
        uint64_t       code = 0;
        while (len && unit_at(&c->dtype, e + 4 * (len - 1)) == 0)
            len--;
        for (size_t j = 0; j < c->labels->n; j++) {
            bool eq = c->labels->len[j] == len;
            for (size_t u = 0; eq && u < len; u++)
                eq = unit_at(&c->dtype, e + 4 * u) == c->labels->cp[j][u];
            if (eq)
                code = j + 1;
        }
        zarr__num_store(&c->astype, out->data + i * (size_t)c->astype.size, code);
    }
    return ZARR_OK;
}

static void
put_unit(const zarr__numtype *t, uint8_t *p, uint32_t v)
{
    for (int b = 0; b < 4; b++)
        p[t->endian == '>' ? 3 - b : b] = (uint8_t)(v >> (8 * b));
}

static int
cat_run_decode(const cat_cfg *c, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n)
{
    size_t as = (size_t)c->astype.size, es = (size_t)c->dtype.size, nelem = n / as;
    if (n % as || dst_n != nelem * es)
        return zarr_error(ZARR_ECODEC,
                          "categorize: %zu bytes are not a whole number of '%s' codes or do not "
                          "decode to the expected size",
                          n, c->astype.str);
    memset(dst, 0, dst_n);
    for (size_t i = 0; i < nelem; i++) {
        uint64_t code = zarr__num_load(&c->astype, src + i * as);
        if (c->astype.kind == 'i' && (int64_t)code < 1)
            continue;
        if (code < 1 || code > c->labels->n)
            continue;
        const uint32_t *cp  = c->labels->cp[code - 1];
        size_t          len = c->labels->len[code - 1] < es / 4 ? c->labels->len[code - 1] : es / 4;
        for (size_t u = 0; u < len; u++)
            put_unit(&c->dtype, dst + i * es + 4 * u, cp[u]);
    }
    return ZARR_OK;
}

static int
cat_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n)
{
    (void)ctx;
    return cat_run_decode(ZARR__CODEC_CCFG(k, cat_cfg), src, n, dst, dst_n);
}

static int
cat_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
               zarr_buf *out)
{
    const cat_cfg *c = ZARR__CODEC_CCFG(k, cat_cfg);
    size_t         on;
    int            rc;
    (void)ctx;
    if (n % (size_t)c->astype.size)
        return zarr_error(ZARR_ECODEC, "categorize: %zu bytes are not a whole number of '%s' codes", n,
                          c->astype.str);
    on = n / (size_t)c->astype.size * (size_t)c->dtype.size;
    if (on > limit)
        return zarr_error(ZARR_ECODEC, "categorize: decodes to %zu bytes, more than the limit of %zu", on,
                          limit);
    if ((rc = zarr_buf_resize(out, on)) != ZARR_OK)
        return rc;
    return cat_run_decode(c, src, n, out->data, on);
}

/* ------------------------------------------------------------------------------------------------
 * The object form: the array->bytes codec of a string ("|O", vlen-utf8 in memory) array. Strings are
 * compared byte for byte (UTF-8), as Python compares str; a NULL element is "".
 * ------------------------------------------------------------------------------------------------ */
static int
cat_obj_finish(zarr_chain *c, zarr_codec *k, const zarr_dtype *t)
{
    (void)k, (void)t;
    if (c->kind != ZARR_VLEN_UTF8)
        return zarr_error(ZARR_EMETA, "codec 'categorize' of \"|O\" needs the string data type");
    return ZARR_OK;
}

static int
cat_obj_encode(const zarr_chain *ch, const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *mem,
               size_t nelem, const uint64_t *shape, zarr_buf *out)
{
    const cat_cfg *c  = ZARR__CODEC_CCFG(k, cat_cfg);
    size_t         as = (size_t)c->astype.size;
    int            rc;
    (void)ch, (void)ctx, (void)shape;
    if (nelem > SIZE_MAX / as)
        return zarr_error(ZARR_EOVERFLOW, "categorize: chunk size overflows");
    if ((rc = zarr_buf_resize(out, nelem * as)) != ZARR_OK)
        return rc;
    for (size_t i = 0; i < nelem; i++) {
        const char *s;
        uint64_t    code = 0;
        memcpy(&s, mem + i * sizeof s, sizeof s);
        for (size_t j = 0; j < c->labels->n; j++)
            if (strcmp(s ? s : "", c->labels->utf8[j]) == 0)
                code = j + 1;
        zarr__num_store(&c->astype, out->data + i * as, code);
    }
    return ZARR_OK;
}

static int
cat_obj_decode(const zarr_chain *ch, const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *enc, size_t n,
               uint8_t *mem, size_t nelem, const uint64_t *shape)
{
    const cat_cfg *c  = ZARR__CODEC_CCFG(k, cat_cfg);
    size_t         as = (size_t)c->astype.size;
    (void)ctx, (void)shape;
    if (nelem)
        memset(mem, 0, nelem * sizeof(char *));
    if (n / as != nelem || n % as)
        return zarr_error(ZARR_ECODEC, "categorize: %zu bytes are not the %zu '%s' codes of the chunk", n,
                          nelem, c->astype.str);
    for (size_t i = 0; i < nelem; i++) {
        uint64_t code  = zarr__num_load(&c->astype, enc + i * as);
        bool     known = code >= 1 && code <= c->labels->n && !(c->astype.kind == 'i' && (int64_t)code < 1);
        const char *l  = known ? c->labels->utf8[code - 1] : "";
        char       *s  = strdup(l);
        if (!s) {
            zarr__vlen_clear(ch, mem, i);
            return zarr_error(ZARR_ENOMEM, "categorize: out of memory for item %zu", i);
        }
        memcpy(mem + i * sizeof s, &s, sizeof s);
    }
    return ZARR_OK;
}

/* The object form (no registry line of its own: the chain takes it for an object array's first
 * filter, through object_form). */
static const zarr__codec_class categorize_object = {
    .v3name     = "numcodecs.categorize",
    .v2id       = "categorize",
    .stage      = ZARR__STAGE_A2B,
    .parse      = cat_parse_object,
    .to_json    = cat_to_json,
    .clear      = cat_clear,
    .copy       = cat_copy,
    .a2b_finish = cat_obj_finish,
    .a2b_encode = cat_obj_encode,
    .a2b_decode = cat_obj_decode,
};

const zarr__codec_class zarr__codec_categorize = {
    .v3name        = "numcodecs.categorize",
    .v2id          = "categorize",
    .stage         = ZARR__STAGE_B2B,
    .parse         = cat_parse,
    .to_json       = cat_to_json,
    .clear         = cat_clear,
    .copy          = cat_copy,
    .encode        = cat_encode,
    .decode        = cat_decode,
    .decode_buf    = cat_decode_buf,
    .encoded_size  = cat_size,
    .encoded_bound = cat_bound,
    .object_form   = &categorize_object,
};
