/*
 * deflate.c: the DEFLATE codecs, `gzip` (v3 and numcodecs gzip: an RFC 1952 member) and
 * `numcodecs.zlib` (v2 "zlib": an RFC 1950 stream), and their kernel. Compressed with libdeflate (one
 * call on the whole buffer); decoded with libdeflate when the size is known (zlib decides every failure
 * and its message), with zlib streaming otherwise. The per-thread state holds the libdeflate
 * compressor of the last level, the libdeflate decompressor and the zlib inflate state.
 */
#include "codec_class.h"

#include <libdeflate.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct deflate_state {
    struct libdeflate_compressor   *ldc; /* created on first use, for level ldc_level */
    int                             ldc_level;
    struct libdeflate_decompressor *ldd; /* created on first use */
    z_stream                        inf; /* inflate state, valid when inf_init */
    bool                            inf_init;
} deflate_state;

static void *
deflate_state_create(void)
{
    return calloc(1, sizeof(deflate_state));
}

static void
deflate_state_destroy(void *p)
{
    deflate_state *st = p;
    if (!st)
        return;
    libdeflate_free_compressor(st->ldc);
    libdeflate_free_decompressor(st->ldd);
    if (st->inf_init)
        inflateEnd(&st->inf);
    free(st);
}

static const zarr__codec_state_ops deflate_state_ops = {"deflate", deflate_state_create,
                                                        deflate_state_destroy};

/* ------------------------------------------------------------------------------------------------
 * zlib / gzip
 * ------------------------------------------------------------------------------------------------ */
static const char *
zfmt_name(zarr__zfmt fmt)
{
    return fmt == ZARR__ZFMT_GZIP ? "gzip" : "zlib";
}

/* zlib's level (-1, 0..9) as a libdeflate level. libdeflate at the same level is faster than zlib
 * with the same or smaller output on float fields, text and small chunks, except at level 1: on
 * integer ramps (int32 0,1,2,... in 4000-byte chunks) libdeflate-1's output is much larger than
 * zlib-1's, while libdeflate-2 matches zlib-1's size there and is still faster than zlib-1 (figures:
 * see bench/README.md, "Figures behind comments in the sources"). So 1 -> 2; 0 stays 0 (stored
 * blocks), 2..9 keep their number and the default (-1) is zlib's default, 6. */
static int
libdeflate_level(int level)
{
    if (level < 0)
        return 6;
    if (level == 1)
        return 2;
    return level;
}

int
zarr__deflate(zarr_codec_ctx *ctx, zarr__zfmt fmt, int level, const void *src, size_t n, zarr_buf *out)
{
    static const uint8_t none[1] = {0}; /* `src` for empty input, which may come as NULL */
    size_t               bound, got;
    int                  rc = ZARR_OK, lvl;
    deflate_state       *st;
    ZARR__CTX_BEGIN(ctx);

    out->size = 0;
    if (!(st = zarr__codec_ctx_state(ctx, &deflate_state_ops)))
        ZARR_FAIL(ZARR_ENOMEM, "%s: %s", zfmt_name(fmt), zarr_errmsg());
    if (level < -1 || level > 9)
        ZARR_FAIL(ZARR_EINVAL, "%s: invalid compression level %d (want -1..9)", zfmt_name(fmt), level);
    lvl = libdeflate_level(level);
    if (!st->ldc || st->ldc_level != lvl) {
        libdeflate_free_compressor(st->ldc);
        if (!(st->ldc = libdeflate_alloc_compressor(lvl)))
            ZARR_FAIL(ZARR_ENOMEM, "%s: out of memory creating the libdeflate compressor (level %d)",
                      zfmt_name(fmt), lvl);
        st->ldc_level = lvl;
    }
    bound = fmt == ZARR__ZFMT_GZIP ? libdeflate_gzip_compress_bound(st->ldc, n)
                                   : libdeflate_zlib_compress_bound(st->ldc, n);
    if (bound < n)
        ZARR_FAIL(ZARR_EOVERFLOW, "%s: the compressed size bound of %zu input bytes overflows",
                  zfmt_name(fmt), n);
    ZARR_TRY(zarr_buf_reserve(out, bound));
    if (!n)
        src = none;
    got = fmt == ZARR__ZFMT_GZIP ? libdeflate_gzip_compress(st->ldc, src, n, out->data, out->cap)
                                 : libdeflate_zlib_compress(st->ldc, src, n, out->data, out->cap);
    /* 0 means the output did not fit, which libdeflate's own bound rules out */
    if (!got)
        ZARR_FAIL(ZARR_ECODEC,
                  "%s: libdeflate (level %d) found no room for %zu input bytes in %zu bytes, "
                  "its own bound being %zu",
                  zfmt_name(fmt), lvl, n, out->cap, bound);
    out->size = got;
done:
    ZARR__CTX_END();
    return rc;
}

static int
inflate_state(deflate_state *st, zarr__zfmt fmt)
{
    int wbits = fmt == ZARR__ZFMT_GZIP ? 16 + MAX_WBITS : MAX_WBITS;
    int zrc;
    if (st->inf_init)
        zrc = inflateReset2(&st->inf, wbits);
    else {
        memset(&st->inf, 0, sizeof st->inf);
        zrc          = inflateInit2(&st->inf, wbits);
        st->inf_init = zrc == Z_OK;
    }
    if (zrc == Z_MEM_ERROR)
        return zarr_error(ZARR_ENOMEM, "%s: out of memory creating the inflate state", zfmt_name(fmt));
    if (zrc != Z_OK)
        return zarr_error(ZARR_ECODEC, "%s: can't initialize inflate", zfmt_name(fmt));
    return ZARR_OK;
}

/* The one inflate loop. Fixed mode (`grow` NULL): output into dst[0..dst_n) and must fill it exactly.
 * Growing mode: output into `grow`, at most `limit` bytes. */
static int
inflate_run(deflate_state *st, zarr__zfmt fmt, const void *src, size_t n, uint8_t *dst, size_t dst_n,
            zarr_buf *grow, size_t limit)
{
    const char  *name = zfmt_name(fmt);
    const Bytef *in   = src;
    size_t       left = n, outlen = 0, cap = dst_n;
    int          rc, zrc;
    z_stream    *zs;
    uint8_t      probe;

    if ((rc = inflate_state(st, fmt)) != ZARR_OK)
        return rc;
    zs           = &st->inf;
    zs->next_in  = NULL; /* a reset keeps these; a failed call may have left input behind */
    zs->avail_in = 0;
    if (grow) {
        grow->size = 0;
        cap        = n < limit / 4 ? 4 * n + 64 : limit;
        if (cap > limit)
            cap = limit;
        if ((rc = zarr_buf_reserve(grow, cap)) != ZARR_OK)
            return rc;
        dst = grow->data;
    }
    for (;;) {
        bool probing = false;
        if (zs->avail_in == 0 && left) {
            uInt now     = left > UINT_MAX ? UINT_MAX : (uInt)left;
            zs->next_in  = (Bytef *)(uintptr_t)in;
            zs->avail_in = now;
            in += now;
            left -= now;
        }
        if (outlen == cap) {
            if (grow && cap < limit) {
                size_t ncap = cap > limit / 2 ? limit : cap * 2;
                if ((rc = zarr_buf_reserve(grow, ncap)) != ZARR_OK)
                    return rc;
                cap = ncap;
                dst = grow->data;
            }
            else
                probing = true; /* full: any further output means too much data */
        }
        if (probing) {
            zs->next_out  = &probe;
            zs->avail_out = 1;
        }
        else {
            size_t room   = cap - outlen;
            zs->next_out  = dst + outlen;
            zs->avail_out = room > UINT_MAX ? UINT_MAX : (uInt)room;
        }
        zrc = inflate(zs, Z_NO_FLUSH);
        if (probing) {
            if (zs->avail_out == 0) {
                if (grow)
                    return zarr_error(ZARR_ECODEC, "%s: data decodes to more than the limit of %zu bytes",
                                      name, limit);
                return zarr_error(ZARR_ECODEC, "%s: data decodes to more than the expected %zu bytes", name,
                                  dst_n);
            }
        }
        else
            outlen += (size_t)(zs->next_out - (dst + outlen));
        if (zrc == Z_STREAM_END) {
            /* gzip: another member may follow (gzip(1) and Python's gzip module accept that). */
            if (fmt == ZARR__ZFMT_GZIP && (zs->avail_in || left)) {
                if (inflateReset(zs) != Z_OK)
                    return zarr_error(ZARR_ECODEC, "%s: can't reset inflate", name);
                continue;
            }
            break;
        }
        if (zrc == Z_NEED_DICT)
            return zarr_error(ZARR_ECODEC, "%s: corrupt data (the stream wants a preset dictionary)", name);
        if (zrc == Z_DATA_ERROR)
            return zarr_error(ZARR_ECODEC, "%s: corrupt data (%s)", name, zs->msg ? zs->msg : "data error");
        if (zrc == Z_MEM_ERROR)
            return zarr_error(ZARR_ENOMEM, "%s: out of memory while inflating", name);
        if (zrc == Z_BUF_ERROR && zs->avail_in == 0 && !left)
            return zarr_error(ZARR_ECODEC, "%s: data is truncated (the stream stops after %zu decoded bytes)",
                              name, outlen);
        if (zrc != Z_OK && zrc != Z_BUF_ERROR)
            return zarr_error(ZARR_ECODEC, "%s: inflate failed (%d)", name, zrc);
    }
    if (!grow && outlen != dst_n)
        return zarr_error(ZARR_ECODEC, "%s: data decodes to %zu bytes, expected %zu", name, outlen, dst_n);
    if (grow)
        grow->size = outlen;
    return ZARR_OK;
}

/* Known output size: libdeflate decodes (zlib: the one stream, bytes after it ignored as inflate_run
 * does; gzip: member after member, each into the room the ones before left). Anything short of a
 * clean decode to exactly dst_n bytes -- corrupt or truncated data, a wrong size, bytes after a gzip
 * member that are not another member -- is decided again by inflate_run, so accepting, refusing and
 * the messages stay zlib's (the second pass costs only on bad input). A gzip member with a header CRC
 * (FHCRC) goes to zlib directly: libdeflate skips that CRC where zlib checks it. */
static int
inflate_fixed(deflate_state *st, zarr__zfmt fmt, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n)
{
    enum libdeflate_result lr = LIBDEFLATE_BAD_DATA;
    uint8_t                none;
    size_t                 left = n, outlen = 0, in_used, out_got;

    if (!st->ldd && !(st->ldd = libdeflate_alloc_decompressor()))
        return zarr_error(ZARR_ENOMEM, "%s: out of memory creating the libdeflate decompressor",
                          zfmt_name(fmt));
    if (!dst)
        dst = &none; /* dst_n is 0 */
    if (fmt == ZARR__ZFMT_ZLIB) {
        if (n) /* libdeflate refuses short input itself; skip it for a NULL src */
            lr = libdeflate_zlib_decompress(st->ldd, src, n, dst, dst_n, NULL);
        outlen = dst_n;
    }
    else
        while (left) {
            if (left >= 4 && (src[n - left + 3] & 0x02)) { /* FHCRC */
                lr = LIBDEFLATE_BAD_DATA;
                break;
            }
            lr = libdeflate_gzip_decompress_ex(st->ldd, src + (n - left), left, dst + outlen, dst_n - outlen,
                                               &in_used, &out_got);
            if (lr != LIBDEFLATE_SUCCESS)
                break;
            left -= in_used;
            outlen += out_got;
        }
    if (lr == LIBDEFLATE_SUCCESS && outlen == dst_n)
        return ZARR_OK;
    return inflate_run(st, fmt, src, n, dst, dst_n, NULL, 0);
}

int
zarr__inflate(zarr_codec_ctx *ctx, zarr__zfmt fmt, const void *src, size_t n, void *dst, size_t dst_n)
{
    int            rc;
    deflate_state *st;
    ZARR__CTX_BEGIN(ctx);
    st = zarr__codec_ctx_state(ctx, &deflate_state_ops);
    rc = st ? inflate_fixed(st, fmt, src, n, dst, dst_n) : ZARR_ENOMEM;
    ZARR__CTX_END();
    return rc;
}

int
zarr__inflate_buf(zarr_codec_ctx *ctx, zarr__zfmt fmt, const void *src, size_t n, size_t limit, zarr_buf *out)
{
    int            rc;
    deflate_state *st;
    ZARR__CTX_BEGIN(ctx);
    st = zarr__codec_ctx_state(ctx, &deflate_state_ops);
    rc = st ? inflate_run(st, fmt, src, n, NULL, 0, out, limit) : ZARR_ENOMEM;
    ZARR__CTX_END();
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * The classes
 * ------------------------------------------------------------------------------------------------ */
extern const zarr__codec_class zarr__codec_gzip;

typedef struct level_cfg {
    int level;
} level_cfg;
ZARR__CODEC_CFG_FITS(level_cfg);

static int
deflate_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    long long x;
    int       rc = zarr__codec_cfg_int_range(p->id, cfg, "level", true, p->v2style ? 1 : 5, -1, 9, &x);
    ZARR__CODEC_CFG(k, level_cfg)->level = (int)x;
    return rc;
}

static int
gzip_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    int level = ZARR__CODEC_CCFG(k, level_cfg)->level;
    (void)c;
    /* v3 (zarr-python) wants 0..9; -1 is zlib's default, level 6 */
    return zarr__codec_json_add(o, "level", json_object_new_int(!v2 && level < 0 ? 6 : level));
}

static int
zlib_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    (void)c, (void)v2;
    return zarr__codec_json_add(o, "level", json_object_new_int(ZARR__CODEC_CCFG(k, level_cfg)->level));
}

static zarr__zfmt
fmt_of(const zarr_codec *k)
{
    return k->cls == &zarr__codec_gzip ? ZARR__ZFMT_GZIP : ZARR__ZFMT_ZLIB;
}

static int
deflate_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    return zarr__deflate(ctx, fmt_of(k), ZARR__CODEC_CCFG(k, level_cfg)->level, src, n, out);
}

static int
deflate_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
               size_t dst_n)
{
    return zarr__inflate(ctx, fmt_of(k), src, n, dst, dst_n);
}

static int
deflate_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
                   zarr_buf *out)
{
    return zarr__inflate_buf(ctx, fmt_of(k), src, n, limit, out);
}

const zarr__codec_class zarr__codec_gzip = {
    .v3name     = "gzip",
    .v2id       = "gzip",
    .stage      = ZARR__STAGE_B2B,
    .flags      = ZARR__CODEC_COMPRESSOR,
    .state      = &deflate_state_ops,
    .parse      = deflate_parse,
    .to_json    = gzip_to_json,
    .encode     = deflate_encode,
    .decode     = deflate_decode,
    .decode_buf = deflate_decode_buf,
};

const zarr__codec_class zarr__codec_zlib = {
    .v3name     = "numcodecs.zlib",
    .v2id       = "zlib",
    .stage      = ZARR__STAGE_B2B,
    .flags      = ZARR__CODEC_COMPRESSOR,
    .state      = &deflate_state_ops,
    .parse      = deflate_parse,
    .to_json    = zlib_to_json,
    .encode     = deflate_encode,
    .decode     = deflate_decode,
    .decode_buf = deflate_decode_buf,
};
