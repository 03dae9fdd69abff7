/*
 * kernels.c: the byte kernels behind the codec chain and the HDF5 filter plugins: zlib/gzip (libdeflate;
 * zlib for streamed decoding and for judging bad input), zstd, Blosc1, LZ4 (numcodecs and HDF5
 * framings), byte shuffle, CRC-32C and Fletcher-32, plus the per-thread codec context that keeps
 * reusable compressor states. See kernels.h for the shared conventions.
 */
#include "kernels.h"
#include "internal.h"

#include <blosc.h>
#include <bzlib.h>
#include <isa-l/crc.h>
#include <libdeflate.h>
#include <lz4.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

/* ------------------------------------------------------------------------------------------------
 * Context
 * ------------------------------------------------------------------------------------------------ */
zarr_codec_ctx *
zarr_codec_ctx_new(void)
{
    zarr_codec_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        zarr_error(ZARR_ENOMEM, "out of memory allocating a codec context");
        return NULL;
    }
    ctx->zc_checksum = -1;
    return ctx;
}

void
zarr_codec_ctx_free(zarr_codec_ctx *ctx)
{
    if (!ctx)
        return;
    ZSTD_freeCCtx(ctx->zc);
    ZSTD_freeDCtx(ctx->zd);
    libdeflate_free_compressor(ctx->ldc);
    libdeflate_free_decompressor(ctx->ldd);
    if (ctx->inf_init)
        inflateEnd(&ctx->inf);
    zarr_buf_free(&ctx->scratch[0]);
    zarr_buf_free(&ctx->scratch[1]);
    free(ctx);
}

/* Kernels accept a NULL ctx: they borrow a temporary one for the call. */
#define CTX_BEGIN(ctx)                                                                                       \
    zarr_codec_ctx *tmp_ctx_ = NULL;                                                                         \
    if (!(ctx) && !((ctx) = tmp_ctx_ = zarr_codec_ctx_new()))                                                \
        return ZARR_ENOMEM;
#define CTX_END() zarr_codec_ctx_free(tmp_ctx_)

/* ------------------------------------------------------------------------------------------------
 * zlib / gzip
 * ------------------------------------------------------------------------------------------------ */
static const char *
zfmt_name(zarr__zfmt fmt)
{
    return fmt == ZARR__ZFMT_GZIP ? "gzip" : "zlib";
}

/* zlib's level (-1, 0..9) as a libdeflate level. libdeflate at the same level is 1.4-8x faster than
 * zlib with the same or smaller output on float fields, text and small chunks, except at level 1:
 * on integer ramps (int32 0,1,2,... in 4000-byte chunks) libdeflate-1's output is 60% larger than
 * zlib-1's, while libdeflate-2 matches zlib-1's size there (1.00x; 0.92x on text) and is still 2.1x
 * faster than zlib-1. So 1 -> 2; 0 stays 0 (stored blocks), 2..9 keep their number and the default
 * (-1) is zlib's default, 6. */
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
    CTX_BEGIN(ctx);

    out->size = 0;
    if (level < -1 || level > 9)
        ZARR_FAIL(ZARR_EINVAL, "%s: invalid compression level %d (want -1..9)", zfmt_name(fmt), level);
    lvl = libdeflate_level(level);
    if (!ctx->ldc || ctx->ldc_level != lvl) {
        libdeflate_free_compressor(ctx->ldc);
        if (!(ctx->ldc = libdeflate_alloc_compressor(lvl)))
            ZARR_FAIL(ZARR_ENOMEM, "%s: out of memory creating the libdeflate compressor (level %d)",
                      zfmt_name(fmt), lvl);
        ctx->ldc_level = lvl;
    }
    bound = fmt == ZARR__ZFMT_GZIP ? libdeflate_gzip_compress_bound(ctx->ldc, n)
                                   : libdeflate_zlib_compress_bound(ctx->ldc, n);
    if (bound < n)
        ZARR_FAIL(ZARR_EOVERFLOW, "%s: the compressed size bound of %zu input bytes overflows",
                  zfmt_name(fmt), n);
    ZARR_TRY(zarr_buf_reserve(out, bound));
    if (!n)
        src = none;
    got = fmt == ZARR__ZFMT_GZIP ? libdeflate_gzip_compress(ctx->ldc, src, n, out->data, out->cap)
                                 : libdeflate_zlib_compress(ctx->ldc, src, n, out->data, out->cap);
    /* 0 means the output did not fit, which libdeflate's own bound rules out */
    if (!got)
        ZARR_FAIL(ZARR_ECODEC,
                  "%s: libdeflate (level %d) found no room for %zu input bytes in %zu bytes, "
                  "its own bound being %zu",
                  zfmt_name(fmt), lvl, n, out->cap, bound);
    out->size = got;
done:
    CTX_END();
    return rc;
}

static int
inflate_state(zarr_codec_ctx *ctx, zarr__zfmt fmt)
{
    int wbits = fmt == ZARR__ZFMT_GZIP ? 16 + MAX_WBITS : MAX_WBITS;
    int zrc;
    if (ctx->inf_init)
        zrc = inflateReset2(&ctx->inf, wbits);
    else {
        memset(&ctx->inf, 0, sizeof ctx->inf);
        zrc           = inflateInit2(&ctx->inf, wbits);
        ctx->inf_init = zrc == Z_OK;
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
inflate_run(zarr_codec_ctx *ctx, zarr__zfmt fmt, const void *src, size_t n, uint8_t *dst, size_t dst_n,
            zarr_buf *grow, size_t limit)
{
    const char  *name = zfmt_name(fmt);
    const Bytef *in   = src;
    size_t       left = n, outlen = 0, cap = dst_n;
    int          rc, zrc;
    z_stream    *zs;
    uint8_t      probe;

    if ((rc = inflate_state(ctx, fmt)) != ZARR_OK)
        return rc;
    zs           = &ctx->inf;
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
inflate_fixed(zarr_codec_ctx *ctx, zarr__zfmt fmt, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n)
{
    enum libdeflate_result lr = LIBDEFLATE_BAD_DATA;
    uint8_t                none;
    size_t                 left = n, outlen = 0, in_used, out_got;

    if (!ctx->ldd && !(ctx->ldd = libdeflate_alloc_decompressor()))
        return zarr_error(ZARR_ENOMEM, "%s: out of memory creating the libdeflate decompressor",
                          zfmt_name(fmt));
    if (!dst)
        dst = &none; /* dst_n is 0 */
    if (fmt == ZARR__ZFMT_ZLIB) {
        if (n) /* libdeflate refuses short input itself; skip it for a NULL src */
            lr = libdeflate_zlib_decompress(ctx->ldd, src, n, dst, dst_n, NULL);
        outlen = dst_n;
    }
    else
        while (left) {
            if (left >= 4 && (src[n - left + 3] & 0x02)) { /* FHCRC */
                lr = LIBDEFLATE_BAD_DATA;
                break;
            }
            lr = libdeflate_gzip_decompress_ex(ctx->ldd, src + (n - left), left, dst + outlen, dst_n - outlen,
                                               &in_used, &out_got);
            if (lr != LIBDEFLATE_SUCCESS)
                break;
            left -= in_used;
            outlen += out_got;
        }
    if (lr == LIBDEFLATE_SUCCESS && outlen == dst_n)
        return ZARR_OK;
    return inflate_run(ctx, fmt, src, n, dst, dst_n, NULL, 0);
}

int
zarr__inflate(zarr_codec_ctx *ctx, zarr__zfmt fmt, const void *src, size_t n, void *dst, size_t dst_n)
{
    int rc;
    CTX_BEGIN(ctx);
    rc = inflate_fixed(ctx, fmt, src, n, dst, dst_n);
    CTX_END();
    return rc;
}

int
zarr__inflate_buf(zarr_codec_ctx *ctx, zarr__zfmt fmt, const void *src, size_t n, size_t limit, zarr_buf *out)
{
    int rc;
    CTX_BEGIN(ctx);
    rc = inflate_run(ctx, fmt, src, n, NULL, 0, out, limit);
    CTX_END();
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * zstd
 * ------------------------------------------------------------------------------------------------ */
int
zarr__zstd_compress(zarr_codec_ctx *ctx, int level, bool checksum, const void *src, size_t n, zarr_buf *out)
{
    int    rc = ZARR_OK;
    size_t r, bound;
    CTX_BEGIN(ctx);

    out->size = 0;
    if (level > ZSTD_maxCLevel())
        level = ZSTD_maxCLevel();
    if (level < ZSTD_minCLevel())
        level = ZSTD_minCLevel();
    if (!ctx->zc && !(ctx->zc = ZSTD_createCCtx()))
        ZARR_FAIL(ZARR_ENOMEM, "zstd: out of memory creating a compression context");
    if (ctx->zc_checksum < 0 || ctx->zc_level != level || ctx->zc_checksum != (int)checksum) {
        if (ZSTD_isError(ZSTD_CCtx_setParameter(ctx->zc, ZSTD_c_compressionLevel, level)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(ctx->zc, ZSTD_c_checksumFlag, checksum ? 1 : 0))) {
            ctx->zc_checksum = -1;
            ZARR_FAIL(ZARR_EINVAL, "zstd: can't set level %d", level);
        }
        ctx->zc_level    = level;
        ctx->zc_checksum = checksum;
    }
    bound = ZSTD_compressBound(n);
    if (ZSTD_isError(bound))
        ZARR_FAIL(ZARR_EUNSUPPORTED, "zstd: input of %zu bytes is too large", n);
    ZARR_TRY(zarr_buf_reserve(out, bound));
    r = ZSTD_compress2(ctx->zc, out->data, out->cap, src, n);
    if (ZSTD_isError(r)) {
        ZSTD_CCtx_reset(ctx->zc, ZSTD_reset_session_only);
        ZARR_FAIL(ZARR_ECODEC, "zstd: compression failed: %s", ZSTD_getErrorName(r));
    }
    out->size = r;
done:
    CTX_END();
    return rc;
}

static int
zstd_dctx(zarr_codec_ctx *ctx)
{
    if (!ctx->zd && !(ctx->zd = ZSTD_createDCtx()))
        return zarr_error(ZARR_ENOMEM, "zstd: out of memory creating a decompression context");
    return ZARR_OK;
}

static int
zstd_error(size_t r, size_t dst_n)
{
    ZSTD_ErrorCode e = ZSTD_getErrorCode(r);
    if (e == ZSTD_error_dstSize_tooSmall)
        return zarr_error(ZARR_ECODEC, "zstd: data decodes to more than the expected %zu bytes", dst_n);
    if (e == ZSTD_error_srcSize_wrong)
        return zarr_error(ZARR_ECODEC, "zstd: data is truncated or has trailing garbage");
    if (e == ZSTD_error_memory_allocation)
        return zarr_error(ZARR_ENOMEM, "zstd: out of memory while decompressing");
    return zarr_error(ZARR_ECODEC, "zstd: corrupt data (%s)", ZSTD_getErrorName(r));
}

int
zarr__zstd_decompress(zarr_codec_ctx *ctx, const void *src, size_t n, void *dst, size_t dst_n)
{
    int                rc = ZARR_OK;
    unsigned long long fcs;
    size_t             r;
    CTX_BEGIN(ctx);

    ZARR_TRY(zstd_dctx(ctx));
    fcs = ZSTD_getFrameContentSize(src, n);
    if (fcs == ZSTD_CONTENTSIZE_ERROR)
        ZARR_FAIL(ZARR_ECODEC, "zstd: not a zstd frame or truncated header (%zu bytes)", n);
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != dst_n &&
        ZSTD_findFrameCompressedSize(src, n) == n) /* one frame: its size is the total */
        ZARR_FAIL(ZARR_ECODEC, "zstd: frame holds %llu bytes, expected %zu", fcs, dst_n);
    r = ZSTD_decompressDCtx(ctx->zd, dst, dst_n, src, n);
    if (ZSTD_isError(r)) {
        rc = zstd_error(r, dst_n);
        goto done;
    }
    if (r != dst_n)
        ZARR_FAIL(ZARR_ECODEC, "zstd: data decodes to %zu bytes, expected %zu", r, dst_n);
done:
    CTX_END();
    return rc;
}

int
zarr__zstd_decompress_buf(zarr_codec_ctx *ctx, const void *src, size_t n, size_t limit, zarr_buf *out)
{
    int                rc = ZARR_OK;
    unsigned long long fcs;
    CTX_BEGIN(ctx);

    out->size = 0;
    ZARR_TRY(zstd_dctx(ctx));
    fcs = ZSTD_getFrameContentSize(src, n);
    if (fcs == ZSTD_CONTENTSIZE_ERROR)
        ZARR_FAIL(ZARR_ECODEC, "zstd: not a zstd frame or truncated header (%zu bytes)", n);
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && ZSTD_findFrameCompressedSize(src, n) == n) {
        if (fcs > limit)
            ZARR_FAIL(ZARR_ECODEC, "zstd: frame claims %llu bytes, more than the limit of %zu", fcs, limit);
        /* Never trust the claim before allocating: every block has a 3-byte header and decodes to at
         * most ZSTD_BLOCKSIZE_MAX (128 KiB), so a frame of n bytes holds at most that many blocks. */
        if (fcs > ((unsigned long long)n / 3 + 1) * ZSTD_BLOCKSIZE_MAX)
            ZARR_FAIL(ZARR_ECODEC, "zstd: frame claims %llu bytes, more than %zu stored bytes can hold", fcs,
                      n);
        ZARR_TRY(zarr_buf_reserve(out, (size_t)fcs));
        ZARR_TRY(zarr__zstd_decompress(ctx, src, n, out->data, (size_t)fcs));
        out->size = (size_t)fcs;
    }
    else {
        /* Size unknown (streamed frame, or several frames): stream into a growing buffer. */
        ZSTD_inBuffer in = {src, n, 0};
        size_t        r;
        ZSTD_DCtx_reset(ctx->zd, ZSTD_reset_session_only);
        ZARR_TRY(zarr_buf_reserve(out, n < limit / 4 ? 4 * n + 64 : limit));
        for (;;) {
            size_t cap = out->cap < limit ? out->cap : limit;
            if (out->size == cap) {
                if (cap >= limit)
                    ZARR_FAIL(ZARR_ECODEC, "zstd: data decodes to more than the limit of %zu bytes", limit);
                ZARR_TRY(zarr_buf_reserve(out, cap > limit / 2 ? limit : cap * 2));
                cap = out->cap < limit ? out->cap : limit;
            }
            ZSTD_outBuffer ob = {out->data + out->size, cap - out->size, 0};
            r                 = ZSTD_decompressStream(ctx->zd, &ob, &in);
            if (ZSTD_isError(r)) {
                ZSTD_DCtx_reset(ctx->zd, ZSTD_reset_session_only);
                rc = zstd_error(r, limit);
                goto done;
            }
            out->size += ob.pos;
            if (r == 0 && in.pos == in.size)
                break;
            if (in.pos == in.size && ob.pos < ob.size) {
                ZSTD_DCtx_reset(ctx->zd, ZSTD_reset_session_only);
                ZARR_FAIL(ZARR_ECODEC, "zstd: data is truncated (stops after %zu decoded bytes)", out->size);
            }
        }
    }
done:
    CTX_END();
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * Blosc1
 * ------------------------------------------------------------------------------------------------ */
bool
zarr__blosc_has_compressor(const char *cname)
{
    /* blosc_compname_to_compcode is pure and answers -1 for compressors not built in
     * (blosc_list_compressors fills a static buffer on first use: not thread-safe). */
    return cname && blosc_compname_to_compcode(cname) >= 0;
}

/* The compressors this c-blosc has, for messages. */
static const char *
blosc_available(char *buf, size_t n)
{
    static const char *const all[] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};
    size_t                   used  = 0;
    buf[0]                         = '\0';
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (zarr__blosc_has_compressor(all[i]) && used < n)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? "," : "", all[i]);
    return buf;
}

int
zarr__blosc_compress(const char *cname, int clevel, int shuffle, size_t typesize, size_t blocksize,
                     const void *src, size_t n, zarr_buf *out)
{
    int rc = ZARR_OK, r;

    out->size = 0;
    if (n > BLOSC_MAX_BUFFERSIZE)
        ZARR_FAIL(ZARR_EUNSUPPORTED, "blosc: input of %zu bytes is larger than Blosc1's limit of %d", n,
                  BLOSC_MAX_BUFFERSIZE);
    if (!zarr__blosc_has_compressor(cname)) {
        char have[64];
        ZARR_FAIL(ZARR_EUNSUPPORTED, "blosc: compressor '%s' is not in this c-blosc build (it has %s)", cname,
                  blosc_available(have, sizeof have));
    }
    if (clevel < 0 || clevel > 9)
        ZARR_FAIL(ZARR_EINVAL, "blosc: invalid clevel %d (want 0..9)", clevel);
    if (shuffle < 0 || shuffle > 2)
        ZARR_FAIL(ZARR_EINVAL, "blosc: invalid shuffle %d (want 0, 1 or 2)", shuffle);
    if (typesize < 1 || typesize > BLOSC_MAX_TYPESIZE)
        typesize = 1;
    ZARR_TRY(zarr_buf_reserve(out, n + BLOSC_MAX_OVERHEAD));
    r = blosc_compress_ctx(clevel, shuffle, typesize, n, src, out->data, n + BLOSC_MAX_OVERHEAD, cname,
                           blocksize, 1);
    if (r <= 0)
        ZARR_FAIL(ZARR_ECODEC, "blosc: compression with '%s' failed (%d)", cname, r);
    out->size = (size_t)r;
done:
    return rc;
}

/* Validates a Blosc1 header against the buffer; *nbytes = decoded size. */
static int
blosc_check(const void *src, size_t n, size_t *nbytes)
{
    size_t cbytes = 0, blocksize = 0;
    if (n < BLOSC_MIN_HEADER_LENGTH)
        return zarr_error(ZARR_ECODEC, "blosc: data is truncated (%zu bytes, the header alone is %d)", n,
                          BLOSC_MIN_HEADER_LENGTH);
    blosc_cbuffer_sizes(src, nbytes, &cbytes, &blocksize);
    if (cbytes > n)
        return zarr_error(ZARR_ECODEC, "blosc: data is truncated (%zu bytes, the header says %zu)", n,
                          cbytes);
    if (blosc_cbuffer_validate(src, n, nbytes) != 0)
        return zarr_error(ZARR_ECODEC, "blosc: corrupt or unsupported header");
    {
        /* The compressor's format code is in the flags' top 3 bits. */
        static const char *const formats[] = {"blosclz", "lz4", "snappy", "zlib", "zstd"};
        size_t                   typesize  = 0;
        int                      flags     = 0;
        blosc_cbuffer_metainfo(src, &typesize, &flags);
        int fmt = (flags >> 5) & 7;
        if (fmt > 4)
            return zarr_error(ZARR_ECODEC, "blosc: corrupt header (unknown compressor format %d)", fmt);
        if (!(flags & BLOSC_MEMCPYED) && !zarr__blosc_has_compressor(formats[fmt]))
            return zarr_error(ZARR_EUNSUPPORTED,
                              "blosc: data is compressed with '%s', which this c-blosc "
                              "build lacks (it has %s)",
                              formats[fmt], blosc_list_compressors());
    }
    return ZARR_OK;
}

int
zarr__blosc_decompress(const void *src, size_t n, void *dst, size_t dst_n)
{
    size_t nbytes = 0;
    int    rc, r;
    if ((rc = blosc_check(src, n, &nbytes)) != ZARR_OK)
        return rc;
    if (nbytes != dst_n)
        return zarr_error(ZARR_ECODEC, "blosc: data holds %zu bytes, expected %zu", nbytes, dst_n);
    if (nbytes == 0)
        return ZARR_OK;
    r = blosc_decompress_ctx(src, dst, dst_n, 1);
    if (r < 0 || (size_t)r != dst_n)
        return zarr_error(ZARR_ECODEC, "blosc: corrupt data (decompression returned %d, expected %zu bytes)",
                          r, dst_n);
    return ZARR_OK;
}

int
zarr__blosc_decompress_buf(const void *src, size_t n, size_t limit, zarr_buf *out)
{
    size_t nbytes = 0;
    int    rc;
    out->size = 0;
    if ((rc = blosc_check(src, n, &nbytes)) != ZARR_OK)
        return rc;
    if (nbytes > limit)
        return zarr_error(ZARR_ECODEC, "blosc: header claims %zu bytes, more than the limit of %zu", nbytes,
                          limit);
    if ((rc = zarr_buf_reserve(out, nbytes)) != ZARR_OK)
        return rc;
    if ((rc = zarr__blosc_decompress(src, n, out->data, nbytes)) != ZARR_OK)
        return rc;
    out->size = nbytes;
    return ZARR_OK;
}

/* ------------------------------------------------------------------------------------------------
 * LZ4, numcodecs framing
 *
 * An LZ4 block expands at most about 255 times (a length byte of 255 adds 255 bytes), so a size
 * header claiming more than LZ4_MAX_RATIO times the stored bytes is refused before allocating.
 * ------------------------------------------------------------------------------------------------ */
#define LZ4_MAX_RATIO 256u

int
zarr__lz4_compress(int acceleration, const void *src, size_t n, zarr_buf *out)
{
    int rc = ZARR_OK, r, bound;

    out->size = 0;
    if (n > LZ4_MAX_INPUT_SIZE)
        ZARR_FAIL(ZARR_EUNSUPPORTED, "lz4: input of %zu bytes is larger than LZ4's limit of %d", n,
                  LZ4_MAX_INPUT_SIZE);
    bound = LZ4_compressBound((int)n);
    ZARR_TRY(zarr_buf_reserve(out, (size_t)bound + 4));
    zarr__store_le32(out->data, (uint32_t)n);
    r = LZ4_compress_fast(src, (char *)out->data + 4, (int)n, bound, acceleration < 1 ? 1 : acceleration);
    if (r <= 0)
        ZARR_FAIL(ZARR_ECODEC, "lz4: compression failed");
    out->size = (size_t)r + 4;
done:
    return rc;
}

int
zarr__lz4_decompress(const void *src, size_t n, void *dst, size_t dst_n)
{
    const uint8_t *p = src;
    uint32_t       size;
    int            r;
    if (n < 4)
        return zarr_error(ZARR_ECODEC, "lz4: data is truncated (%zu bytes, the size header alone is 4)", n);
    size = zarr__load_le32(p);
    if (size != dst_n)
        return zarr_error(ZARR_ECODEC, "lz4: data holds %u bytes, expected %zu", size, dst_n);
    if (size > LZ4_MAX_INPUT_SIZE || n - 4 > INT_MAX)
        return zarr_error(ZARR_ECODEC, "lz4: sizes out of range (%u decoded, %zu stored)", size, n - 4);
    r = LZ4_decompress_safe((const char *)p + 4, dst, (int)(n - 4), (int)size);
    if (r < 0)
        return zarr_error(ZARR_ECODEC, "lz4: corrupt or truncated data");
    if ((size_t)r != dst_n)
        return zarr_error(ZARR_ECODEC, "lz4: data decodes to %d bytes, expected %zu", r, dst_n);
    return ZARR_OK;
}

int
zarr__lz4_decompress_buf(const void *src, size_t n, size_t limit, zarr_buf *out)
{
    uint32_t size;
    int      rc;
    out->size = 0;
    if (n < 4)
        return zarr_error(ZARR_ECODEC, "lz4: data is truncated (%zu bytes, the size header alone is 4)", n);
    size = zarr__load_le32(src);
    if (size > limit)
        return zarr_error(ZARR_ECODEC, "lz4: header claims %u bytes, more than the limit of %zu", size,
                          limit);
    if (size > LZ4_MAX_RATIO * (uint64_t)(n - 4) + 64)
        return zarr_error(ZARR_ECODEC, "lz4: header claims %u bytes, more than %zu stored bytes can hold",
                          size, n - 4);
    if ((rc = zarr_buf_reserve(out, size)) != ZARR_OK)
        return rc;
    if ((rc = zarr__lz4_decompress(src, n, out->data, size)) != ZARR_OK)
        return rc;
    out->size = size;
    return ZARR_OK;
}

/* ------------------------------------------------------------------------------------------------
 * bzip2 (libbz2): one stream, as numcodecs BZ2 and HDF5's bzip2 filter (307) write it
 * ------------------------------------------------------------------------------------------------ */
static int
bz2_error(int r, const char *what)
{
    if (r == BZ_MEM_ERROR)
        return zarr_error(ZARR_ENOMEM, "bz2: out of memory %s", what);
    if (r == BZ_DATA_ERROR_MAGIC)
        return zarr_error(ZARR_ECODEC, "bz2: not a bzip2 stream (no 'BZh' header)");
    if (r == BZ_DATA_ERROR)
        return zarr_error(ZARR_ECODEC, "bz2: corrupt data (bad block or CRC)");
    return zarr_error(ZARR_ECODEC, "bz2: %s failed (libbz2 error %d)", what, r);
}

int
zarr__bz2_compress(int level, const void *src, size_t n, zarr_buf *out)
{
    static char  none[1]; /* `src` for empty input, which may come as NULL */
    unsigned int got;
    size_t       bound;
    int          rc = ZARR_OK, r;

    out->size = 0;
    if (level < 1 || level > 9)
        ZARR_FAIL(ZARR_EINVAL, "bz2: invalid compression level %d (want 1..9)", level);
    if (n > UINT_MAX / 2)
        ZARR_FAIL(ZARR_EUNSUPPORTED, "bz2: input of %zu bytes is larger than libbz2 takes in one call", n);
    bound = n + n / 100 + 601; /* libbz2's documented worst case: 1% + 600 bytes */
    ZARR_TRY(zarr_buf_reserve(out, bound));
    got = (unsigned int)bound;
    r   = BZ2_bzBuffToBuffCompress((char *)out->data, &got, n ? (char *)src : none, (unsigned int)n, level, 0,
                                   0);
    if (r != BZ_OK) {
        rc = bz2_error(r, "compressing");
        goto done;
    }
    out->size = got;
done:
    return rc;
}

/* Decodes one stream into dst (exactly dst_n bytes when `grow` is NULL) or into `grow` (at most `limit`
 * bytes). Bytes after the end of the stream are refused: HDF5's filter reads one stream too. */
static int
bz2_run(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n, zarr_buf *grow, size_t limit)
{
    bz_stream s;
    char      spare[1]; /* a full `dst`: is there more to decode than dst_n bytes? */
    size_t    cap, done_n = 0;
    int       r, rc       = ZARR_OK;

    memset(&s, 0, sizeof s);
    if (n > UINT_MAX)
        return zarr_error(ZARR_EUNSUPPORTED,
                          "bz2: chunk of %zu bytes is larger than libbz2 takes in one call", n);
    if ((r = BZ2_bzDecompressInit(&s, 0, 0)) != BZ_OK)
        return bz2_error(r, "initializing the decoder");
    s.next_in  = (char *)src;
    s.avail_in = (unsigned int)n;
    cap        = dst_n;
    if (grow) {
        cap        = n < SIZE_MAX / 8 && 4 * n + 4096 < limit ? 4 * n + 4096 : limit;
        grow->size = 0;
        ZARR_TRY(zarr_buf_reserve(grow, cap ? cap : 1));
        dst = grow->data;
    }
    for (;;) {
        size_t room = cap - done_n;
        bool   full = room == 0;
        s.next_out  = full ? spare : (char *)dst + done_n;
        s.avail_out = full ? 1 : room > UINT_MAX ? UINT_MAX : (unsigned int)room;
        r           = BZ2_bzDecompress(&s);
        if (full && s.avail_out == 0) { /* one byte more than there is room for */
            if (!grow || cap >= limit)
                ZARR_FAIL(ZARR_ECODEC, "bz2: data decodes to more than %zu bytes", cap);
            done_n++; /* the spare byte: keep it */
            cap = cap > limit / 2 ? limit : 2 * cap;
            ZARR_TRY(zarr_buf_reserve(grow, cap));
            dst             = grow->data;
            dst[done_n - 1] = (uint8_t)spare[0];
            continue;
        }
        done_n = (size_t)s.total_out_lo32 | ((size_t)s.total_out_hi32 << 32);
        if (r == BZ_STREAM_END)
            break;
        if (r != BZ_OK) {
            rc = bz2_error(r, "decoding");
            goto done;
        }
        if (s.avail_out > 0 && s.avail_in == 0)
            ZARR_FAIL(ZARR_ECODEC, "bz2: data is truncated (the stream stops after %zu decoded bytes)",
                      done_n);
    }
    if (s.avail_in)
        ZARR_FAIL(ZARR_ECODEC, "bz2: %u bytes after the end of the stream", s.avail_in);
    if (!grow && done_n != dst_n)
        ZARR_FAIL(ZARR_ECODEC, "bz2: data decodes to %zu bytes, expected %zu", done_n, dst_n);
    if (grow)
        grow->size = done_n;
done:
    BZ2_bzDecompressEnd(&s);
    return rc;
}

int
zarr__bz2_decompress(const void *src, size_t n, void *dst, size_t dst_n)
{
    return bz2_run(src, n, dst, dst_n, NULL, 0);
}

int
zarr__bz2_decompress_buf(const void *src, size_t n, size_t limit, zarr_buf *out)
{
    return bz2_run(src, n, NULL, 0, out, limit);
}

/* ------------------------------------------------------------------------------------------------
 * LZ4, HDF5 filter framing
 * ------------------------------------------------------------------------------------------------ */
static void
store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static uint32_t
load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

#define H5LZ4_DEFAULT_BLOCK ((size_t)1 << 30)

/* The block size the filter uses for `n` bytes: cd_values[0], 0 meaning the default, capped to n. */
static size_t
h5lz4_block(size_t blocksize, size_t n)
{
    if (blocksize == 0)
        blocksize = H5LZ4_DEFAULT_BLOCK;
    return blocksize > n ? n : blocksize;
}

size_t
zarr__h5lz4_max_size(size_t blocksize, size_t n)
{
    size_t   bs      = h5lz4_block(blocksize, n);
    uint64_t nblocks = bs ? n / bs + (n % bs != 0) : 0, r;
    if (!zarr__mul_ok(nblocks, 4, &r) || !zarr__add_ok(r, n, &r) || !zarr__add_ok(r, 12, &r) || r >= SIZE_MAX)
        return SIZE_MAX;
    return (size_t)r;
}

int
zarr__h5lz4_compress(size_t blocksize, const void *src, size_t n, zarr_buf *out)
{
    const uint8_t *in = src;
    int            rc = ZARR_OK;
    size_t         nblocks, done_in = 0, pos;
    uint64_t       total;

    out->size = 0;
    blocksize = h5lz4_block(blocksize, n);
    if (blocksize > LZ4_MAX_INPUT_SIZE)
        ZARR_FAIL(ZARR_EUNSUPPORTED, "lz4 (HDF5): block size %zu is larger than LZ4's limit of %d", blocksize,
                  LZ4_MAX_INPUT_SIZE);
    nblocks = blocksize ? (n + blocksize - 1) / blocksize : 0;
    if (!zarr__mul_ok(nblocks, (uint64_t)LZ4_compressBound((int)blocksize) + 4, &total) ||
        !zarr__add_ok(total, 12, &total) || total > SIZE_MAX)
        ZARR_FAIL(ZARR_EOVERFLOW, "lz4 (HDF5): output size for %zu bytes overflows", n);
    ZARR_TRY(zarr_buf_reserve(out, (size_t)total));
    store_be32(out->data, (uint32_t)((uint64_t)n >> 32));
    store_be32(out->data + 4, (uint32_t)n);
    store_be32(out->data + 8, (uint32_t)blocksize);
    pos = 12;
    while (done_in < n) {
        size_t bs    = n - done_in < blocksize ? n - done_in : blocksize;
        int    bound = LZ4_compressBound((int)bs);
        int r = LZ4_compress_default((const char *)in + done_in, (char *)out->data + pos + 4, (int)bs, bound);
        if (r <= 0)
            ZARR_FAIL(ZARR_ECODEC, "lz4 (HDF5): compression failed");
        if ((size_t)r >= bs) { /* did not shrink: stored raw */
            memcpy(out->data + pos + 4, in + done_in, bs);
            r = (int)bs;
        }
        store_be32(out->data + pos, (uint32_t)r);
        pos += 4 + (size_t)r;
        done_in += bs;
    }
    out->size = pos;
done:
    return rc;
}

/* Reads the header: decoded size and block size. */
static int
h5lz4_header(const uint8_t *p, size_t n, uint64_t *orig, size_t *bs)
{
    if (n < 12)
        return zarr_error(ZARR_ECODEC, "lz4 (HDF5): data is truncated (%zu bytes, the header alone is 12)",
                          n);
    *orig = (uint64_t)load_be32(p) << 32 | load_be32(p + 4);
    *bs   = load_be32(p + 8);
    if (*orig > 0 && *bs == 0)
        return zarr_error(ZARR_ECODEC, "lz4 (HDF5): corrupt header (block size 0 for %llu bytes)",
                          (unsigned long long)*orig);
    if (*bs > *orig)
        *bs = (size_t)*orig;
    return ZARR_OK;
}

int
zarr__h5lz4_decompress(const void *src, size_t n, void *dst, size_t dst_n)
{
    const uint8_t *p    = src, *end;
    uint8_t       *o    = dst;
    uint64_t       orig = 0;
    size_t         bs = 0, done_out = 0;
    int            rc;

    if ((rc = h5lz4_header(p, n, &orig, &bs)) != ZARR_OK)
        return rc;
    end = p + n; /* after the header check: an empty chunk may come as NULL */
    if (orig != dst_n)
        return zarr_error(ZARR_ECODEC, "lz4 (HDF5): data holds %llu bytes, expected %zu",
                          (unsigned long long)orig, dst_n);
    if (bs > LZ4_MAX_INPUT_SIZE)
        return zarr_error(ZARR_ECODEC, "lz4 (HDF5): block size %zu out of range", bs);
    p += 12;
    while (done_out < dst_n) {
        size_t   want = dst_n - done_out < bs ? dst_n - done_out : bs;
        uint32_t cs;
        if (end - p < 4)
            return zarr_error(ZARR_ECODEC, "lz4 (HDF5): data is truncated (block header at offset %zu)",
                              (size_t)(p - (const uint8_t *)src));
        cs = load_be32(p);
        p += 4;
        if (cs > (size_t)(end - p))
            return zarr_error(ZARR_ECODEC, "lz4 (HDF5): data is truncated (block of %u bytes, %zu left)", cs,
                              (size_t)(end - p));
        if (cs == want)
            memcpy(o + done_out, p, want);
        else {
            int r = LZ4_decompress_safe((const char *)p, (char *)o + done_out, (int)cs, (int)want);
            if (r < 0 || (size_t)r != want)
                return zarr_error(ZARR_ECODEC, "lz4 (HDF5): corrupt block at offset %zu",
                                  (size_t)(p - 4 - (const uint8_t *)src));
        }
        p += cs;
        done_out += want;
    }
    return ZARR_OK;
}

int
zarr__h5lz4_decompress_buf(const void *src, size_t n, size_t limit, zarr_buf *out)
{
    uint64_t orig = 0;
    size_t   bs   = 0;
    int      rc;
    out->size = 0;
    if ((rc = h5lz4_header(src, n, &orig, &bs)) != ZARR_OK)
        return rc;
    if (orig > limit)
        return zarr_error(ZARR_ECODEC, "lz4 (HDF5): header claims %llu bytes, more than the limit of %zu",
                          (unsigned long long)orig, limit);
    if (orig > LZ4_MAX_RATIO * (uint64_t)(n - 12) + 64)
        return zarr_error(ZARR_ECODEC,
                          "lz4 (HDF5): header claims %llu bytes, more than %zu stored bytes can hold",
                          (unsigned long long)orig, n - 12);
    if ((rc = zarr_buf_reserve(out, (size_t)orig)) != ZARR_OK)
        return rc;
    if ((rc = zarr__h5lz4_decompress(src, n, out->data, (size_t)orig)) != ZARR_OK)
        return rc;
    out->size = (size_t)orig;
    return ZARR_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Shuffle
 * ------------------------------------------------------------------------------------------------ */
/* dst[k*count + i] = src[i*esize + k] (shuffle) or the reverse, with constant-size fast paths. */
#define SHUFFLE_LOOP(ES)                                                                                     \
    do {                                                                                                     \
        if (fwd)                                                                                             \
            for (size_t i = 0; i < count; i++)                                                               \
                for (size_t k = 0; k < (ES); k++)                                                            \
                    d[k * count + i] = s[i * (ES) + k];                                                      \
        else                                                                                                 \
            for (size_t i = 0; i < count; i++)                                                               \
                for (size_t k = 0; k < (ES); k++)                                                            \
                    d[i * (ES) + k] = s[k * count + i];                                                      \
    } while (0)

static void
shuffle_impl(const uint8_t *s, uint8_t *d, size_t n, size_t esize, bool fwd)
{
    size_t count, tail;
    if (esize <= 1 || n < esize) {
        if (n) /* an empty chunk may come with no buffers at all */
            memcpy(d, s, n);
        return;
    }
    count = n / esize;
    tail  = n - count * esize;
    switch (esize) {
        case 2:
            SHUFFLE_LOOP(2);
            break;
        case 4:
            SHUFFLE_LOOP(4);
            break;
        case 8:
            SHUFFLE_LOOP(8);
            break;
        case 16:
            SHUFFLE_LOOP(16);
            break;
        default:
            SHUFFLE_LOOP(esize);
            break;
    }
    if (tail)
        memcpy(d + count * esize, s + count * esize, tail);
}

void
zarr__shuffle(const void *src, void *dst, size_t n, size_t esize)
{
    shuffle_impl(src, dst, n, esize, true);
}

void
zarr__unshuffle(const void *src, void *dst, size_t n, size_t esize)
{
    shuffle_impl(src, dst, n, esize, false);
}

/* ------------------------------------------------------------------------------------------------
 * Checksums
 * ------------------------------------------------------------------------------------------------ */
uint32_t
zarr__crc32c(const void *p, size_t n)
{
    /* ISA-L's crc32_iscsi neither inverts the seed nor the result: seed ~0 and invert at the end. */
    const unsigned char *b   = p;
    uint32_t             crc = 0xFFFFFFFFu;
    while (n) {
        int now = n > (size_t)(INT_MAX & ~63) ? (INT_MAX & ~63) : (int)n;
        crc     = crc32_iscsi((unsigned char *)(uintptr_t)b, now, crc);
        b += now;
        n -= (size_t)now;
    }
    return crc ^ 0xFFFFFFFFu;
}

uint32_t
zarr__fletcher32(const void *p, size_t n)
{
    /* Sums of big-endian 16-bit words, folded to 16 bits (end-around carry) often enough that the
     * 32-bit accumulators cannot overflow: 360 words at most between folds. */
    const uint8_t *d     = p;
    size_t         words = n / 2;
    uint32_t       a = 0, b = 0;

    while (words) {
        size_t run = words > 360 ? 360 : words;
        words -= run;
        for (size_t i = 0; i < run; i++, d += 2) {
            a += (uint32_t)d[0] << 8 | d[1];
            b += a;
        }
        a = (a & 0xffff) + (a >> 16);
        b = (b & 0xffff) + (b >> 16);
    }
    if (n & 1) {
        a += (uint32_t)d[0] << 8;
        b += a;
        a = (a & 0xffff) + (a >> 16);
        b = (b & 0xffff) + (b >> 16);
    }
    a = (a & 0xffff) + (a >> 16);
    b = (b & 0xffff) + (b >> 16);
    return b << 16 | a;
}

uint32_t
zarr__fletcher32_reversed(uint32_t sum)
{
    return (sum & 0xff00ff00u) >> 8 | (sum & 0x00ff00ffu) << 8;
}
