/*
 * lzma.c: the numcodecs `lzma` codec (v2 "lzma", v3 "numcodecs.lzma") and its kernel (liblzma).
 * Configuration as numcodecs 0.11 writes it: {"format": 1, "check": -1, "preset": null, "filters":
 * null}. `format` 1 is an .xz stream, 2 the legacy .lzma ("alone") format; 0 (auto) only reads; 3
 * (raw) and custom `filters` chains are refused by key (numcodecs' Python-side filter dicts have no
 * fixed meaning outside Python's lzma module). Encoding runs one liblzma streaming encoder over the
 * whole chunk, as Python's lzma.compress does, so the stored bytes are numcodecs' own.
 */
#include "codec_class.h"
#include "dynlib.h"

#include <lzma.h>
#include <string.h>

#ifndef H5ZARR_LZMA_SONAME
#define H5ZARR_LZMA_SONAME "liblzma.so.5"
#endif
/* Loaded on first use (dynlib.h): the functions called, through lzma_lib_fn. */
/* clang-format off */
#define LZMA_LIB_FUNCS(X)                                                                                    \
    X(lzma_alone_decoder) X(lzma_alone_encoder) X(lzma_auto_decoder) X(lzma_code)                            \
    X(lzma_easy_encoder) X(lzma_end) X(lzma_lzma_preset) X(lzma_stream_buffer_bound)                         \
    X(lzma_stream_decoder)
/* clang-format on */
ZARR__DYNLIB(lzma_lib, LZMA_LIB_FUNCS, H5ZARR_LZMA_SONAME, "the lzma codec");

#define LZMA_FMT_AUTO  0
#define LZMA_FMT_XZ    1
#define LZMA_FMT_ALONE 2

static int
lzma_fail(lzma_ret r, const char *what)
{
    switch (r) {
        case LZMA_MEM_ERROR:
            return zarr_error(ZARR_ENOMEM, "lzma: out of memory %s", what);
        case LZMA_MEMLIMIT_ERROR:
            return zarr_error(ZARR_ECODEC, "lzma: the data needs more than %llu MiB of decoder memory (%s)",
                              (unsigned long long)(ZARR__LZMA_MEMLIMIT >> 20), what);
        case LZMA_FORMAT_ERROR:
            return zarr_error(ZARR_ECODEC, "lzma: not an lzma/xz stream of the configured format (%s)", what);
        case LZMA_OPTIONS_ERROR:
            return zarr_error(ZARR_ECODEC, "lzma: unsupported options in the stream header (%s)", what);
        case LZMA_DATA_ERROR:
            return zarr_error(ZARR_ECODEC, "lzma: corrupt data (%s)", what);
        case LZMA_BUF_ERROR:
            return zarr_error(ZARR_ECODEC, "lzma: data is truncated (%s)", what);
        case LZMA_UNSUPPORTED_CHECK:
            return zarr_error(ZARR_ECODEC, "lzma: unsupported integrity check (%s)", what);
        default:
            return zarr_error(ZARR_ECODEC, "lzma: liblzma error %d (%s)", (int)r, what);
    }
}

int
zarr__lzma_compress(int format, int check, uint32_t preset, const void *src, size_t n, zarr_buf *out)
{
    lzma_stream       s = LZMA_STREAM_INIT;
    lzma_options_lzma opt;
    lzma_ret          r;
    size_t            bound;
    int               rc = ZARR_OK;

    out->size = 0;
    if ((rc = zarr__dynlib_load(&lzma_lib)) != ZARR_OK)
        return rc; /* before `s` has a coder to end */
    if (format == LZMA_FMT_XZ)
        r = lzma_lib_fn.lzma_easy_encoder(&s, preset, check < 0 ? LZMA_CHECK_CRC64 : (lzma_check)check);
    else if (format == LZMA_FMT_ALONE) {
        if (lzma_lib_fn.lzma_lzma_preset(&opt, preset))
            return zarr_error(ZARR_EINVAL, "lzma: invalid preset %#x", preset);
        r = lzma_lib_fn.lzma_alone_encoder(&s, &opt);
    }
    else
        return zarr_error(ZARR_EINVAL, "lzma: can't encode format %d (want 1 or 2)", format);
    if (r != LZMA_OK)
        return lzma_fail(r, "creating the encoder");
    bound = lzma_lib_fn.lzma_stream_buffer_bound(n);
    if (!bound || bound < n)
        ZARR_FAIL(ZARR_EOVERFLOW, "lzma: the compressed size bound of %zu bytes overflows", n);
    ZARR_TRY(zarr_buf_reserve(out, bound));
    s.next_in   = src;
    s.avail_in  = n;
    s.next_out  = out->data;
    s.avail_out = out->cap;
    for (;;) {
        r = lzma_lib_fn.lzma_code(&s, LZMA_FINISH);
        if (r == LZMA_STREAM_END)
            break;
        if (r != LZMA_OK)
            ZARR_FAIL(ZARR_ECODEC, "lzma: compression failed (liblzma error %d)", (int)r);
        if (s.avail_out == 0) { /* past liblzma's own bound: grow anyway */
            size_t used = out->cap;
            ZARR_TRY(zarr_buf_reserve(out, out->cap * 2));
            s.next_out  = out->data + used;
            s.avail_out = out->cap - used;
        }
    }
    out->size = (size_t)s.total_out;
done:
    lzma_lib_fn.lzma_end(&s);
    return rc;
}

static lzma_ret
decoder_init(lzma_stream *s, int format)
{
    switch (format) {
        case LZMA_FMT_XZ:
            return lzma_lib_fn.lzma_stream_decoder(s, ZARR__LZMA_MEMLIMIT, LZMA_CONCATENATED);
        case LZMA_FMT_ALONE:
            return lzma_lib_fn.lzma_alone_decoder(s, ZARR__LZMA_MEMLIMIT);
        default:
            return lzma_lib_fn.lzma_auto_decoder(s, ZARR__LZMA_MEMLIMIT, LZMA_CONCATENATED);
    }
}

/* The one decode loop: into dst[0..dst_n) exactly when grow is NULL, else into grow (at most limit). */
static int
lzma_run(int format, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n, zarr_buf *grow, size_t limit)
{
    lzma_stream s = LZMA_STREAM_INIT;
    lzma_ret    r;
    uint8_t     probe;
    size_t      cap = dst_n;
    int         rc  = ZARR_OK;

    if ((rc = zarr__dynlib_load(&lzma_lib)) != ZARR_OK)
        return rc;
    if ((r = decoder_init(&s, format)) != LZMA_OK)
        return lzma_fail(r, "creating the decoder");
    if (grow) {
        grow->size = 0;
        cap        = n < limit / 4 ? 4 * n + 64 : limit;
        ZARR_TRY(zarr_buf_reserve(grow, cap));
        dst = grow->data;
    }
    s.next_in  = n ? src : NULL;
    s.avail_in = n;
    for (;;) {
        size_t have    = (size_t)s.total_out;
        bool   probing = false;
        if (have == cap) {
            if (grow && cap < limit) {
                cap = cap > limit / 2 ? limit : cap * 2;
                ZARR_TRY(zarr_buf_reserve(grow, cap));
                dst = grow->data;
            }
            else
                probing = true;
        }
        s.next_out  = probing ? &probe : dst + have;
        s.avail_out = probing ? 1 : cap - have;
        r           = lzma_lib_fn.lzma_code(&s, LZMA_FINISH);
        if (probing && s.avail_out == 0)
            ZARR_FAIL(ZARR_ECODEC, "lzma: data decodes to more than the %s %zu bytes",
                      grow ? "limit of" : "expected", grow ? limit : dst_n);
        if (r == LZMA_STREAM_END)
            break;
        if (r != LZMA_OK) {
            rc = lzma_fail(r, "decoding");
            goto done;
        }
        if (s.avail_in == 0 && s.avail_out != 0)
            ZARR_FAIL(ZARR_ECODEC, "lzma: data is truncated (stops after %llu decoded bytes)",
                      (unsigned long long)s.total_out);
    }
    if (!grow && (size_t)s.total_out != dst_n)
        ZARR_FAIL(ZARR_ECODEC, "lzma: data decodes to %llu bytes, expected %zu",
                  (unsigned long long)s.total_out, dst_n);
    if (grow)
        grow->size = (size_t)s.total_out;
done:
    lzma_lib_fn.lzma_end(&s);
    return rc;
}

int
zarr__lzma_decompress(int format, const void *src, size_t n, void *dst, size_t dst_n)
{
    uint8_t none;
    return lzma_run(format, src, n, dst ? dst : &none, dst_n, NULL, 0);
}

int
zarr__lzma_decompress_buf(int format, const void *src, size_t n, size_t limit, zarr_buf *out)
{
    return lzma_run(format, src, n, NULL, 0, out, limit);
}

/* ------------------------------------------------------------------------------------------------
 * The class
 * ------------------------------------------------------------------------------------------------ */
typedef struct lzma_cfg {
    int      format, check;
    uint32_t preset;
    bool     preset_null; /* written back as null (numcodecs' default, 6) */
} lzma_cfg;
ZARR__CODEC_CFG_FITS(lzma_cfg);

static int
lzma_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    lzma_cfg           *z = ZARR__CODEC_CFG(k, lzma_cfg);
    struct json_object *v;
    long long           x;
    int                 rc;
    (void)p;
    if ((rc = zarr__codec_cfg_int_range("lzma", cfg, "format", false, LZMA_FMT_XZ, 0, 3, &x)) != ZARR_OK)
        return rc;
    if (x == 3)
        return zarr_error(
            ZARR_EUNSUPPORTED,
            "codec 'lzma': 'format' 3 (raw) needs a custom 'filters' chain, which is not supported");
    z->format = (int)x;
    if ((rc = zarr__codec_cfg_int("lzma", cfg, "check", false, -1, &x)) != ZARR_OK)
        return rc;
    if (x != -1 && x != 0 && x != 1 && x != 4 && x != 10)
        return zarr_error(ZARR_EMETA,
                          "codec 'lzma': 'check' is %lld, want -1, 0 (none), 1 (CRC32), 4 (CRC64) or "
                          "10 (SHA-256)",
                          x);
    if (z->format == LZMA_FMT_ALONE && x != -1 && x != 0)
        return zarr_error(ZARR_EMETA, "codec 'lzma': 'check' %lld is not possible with 'format' 2 (alone)",
                          x);
    z->check = (int)x;
    v        = zarr__codec_cfg_get(cfg, "preset");
    if (!v || json_object_is_type(v, json_type_null)) {
        z->preset      = 6;
        z->preset_null = true;
    }
    else {
        if ((rc = zarr__codec_cfg_int("lzma", cfg, "preset", false, 6, &x)) != ZARR_OK)
            return rc;
        if (!((x >= 0 && x <= 9) || (x >= 0x80000000LL && x <= 0x80000009LL)))
            return zarr_error(ZARR_EMETA,
                              "codec 'lzma': 'preset' is %lld, want 0..9, optionally | 0x80000000 (extreme)",
                              x);
        z->preset = (uint32_t)x;
    }
    v = zarr__codec_cfg_get(cfg, "filters");
    if (v && !json_object_is_type(v, json_type_null))
        return zarr_error(ZARR_EUNSUPPORTED,
                          "codec 'lzma': 'filters' (a custom liblzma filter chain) is not supported; use "
                          "null and a 'preset'");
    return ZARR_OK;
}

static int
lzma_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    const lzma_cfg *z = ZARR__CODEC_CCFG(k, lzma_cfg);
    int             rc;
    (void)c, (void)v2;
    if ((rc = zarr__codec_json_add(o, "format", json_object_new_int(z->format))) != ZARR_OK ||
        (rc = zarr__codec_json_add(o, "check", json_object_new_int(z->check))) != ZARR_OK)
        return rc;
    if (z->preset_null)
        rc = json_object_object_add(o, "preset", NULL) == 0 ? ZARR_OK
                                                            : zarr_error(ZARR_ENOMEM, "out of memory");
    else
        rc = zarr__codec_json_add(o, "preset", json_object_new_int64(z->preset));
    if (rc == ZARR_OK)
        rc = json_object_object_add(o, "filters", NULL) == 0 ? ZARR_OK
                                                             : zarr_error(ZARR_ENOMEM, "out of memory");
    return rc;
}

static int
lzma_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    const lzma_cfg *z = ZARR__CODEC_CCFG(k, lzma_cfg);
    (void)ctx;
    if (z->format == LZMA_FMT_AUTO)
        return zarr_error(ZARR_EUNSUPPORTED, "codec 'lzma': 'format' 0 (auto) only reads; write with 1 (xz)");
    return zarr__lzma_compress(z->format, z->check, z->preset, src, n, out);
}

static int
lzma_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
            size_t dst_n)
{
    (void)ctx;
    return zarr__lzma_decompress(ZARR__CODEC_CCFG(k, lzma_cfg)->format, src, n, dst, dst_n);
}

static int
lzma_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
                zarr_buf *out)
{
    (void)ctx;
    return zarr__lzma_decompress_buf(ZARR__CODEC_CCFG(k, lzma_cfg)->format, src, n, limit, out);
}

const zarr__codec_class zarr__codec_lzma = {
    .v3name     = "numcodecs.lzma",
    .v2id       = "lzma",
    .stage      = ZARR__STAGE_B2B,
    .flags      = ZARR__CODEC_COMPRESSOR,
    .parse      = lzma_parse,
    .to_json    = lzma_to_json,
    .encode     = lzma_encode,
    .decode     = lzma_decode,
    .decode_buf = lzma_decode_buf,
};
