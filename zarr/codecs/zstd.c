/*
 * zstd.c: the `zstd` codec (v3 and numcodecs) and its kernel: one zstd frame with the content size;
 * `level` 0 = library default, clamped to zstd's range; `checksum` adds the frame's content checksum
 * (checked on decode whenever present). The per-thread state holds a compression context (keeping the
 * parameters of the last call) and a decompression context.
 */
#include "codec_class.h"

#include <stdlib.h>
#include <zstd.h>
#include <zstd_errors.h>

typedef struct zstd_state {
    ZSTD_CCtx *zc; /* created on first use; parameters of the last call are kept */
    ZSTD_DCtx *zd; /* created on first use */
    int        zc_level;
    int        zc_checksum; /* -1 = parameters not set yet */
} zstd_state;

static void *
zstd_state_create(void)
{
    zstd_state *st = calloc(1, sizeof *st);
    if (st)
        st->zc_checksum = -1;
    return st;
}

static void
zstd_state_destroy(void *p)
{
    zstd_state *st = p;
    if (!st)
        return;
    ZSTD_freeCCtx(st->zc);
    ZSTD_freeDCtx(st->zd);
    free(st);
}

static const zarr__codec_state_ops zstd_state_ops = {"zstd", zstd_state_create, zstd_state_destroy};

/* ------------------------------------------------------------------------------------------------
 * zstd
 * ------------------------------------------------------------------------------------------------ */
int
zarr__zstd_compress(zarr_codec_ctx *ctx, int level, bool checksum, const void *src, size_t n, zarr_buf *out)
{
    int         rc = ZARR_OK;
    size_t      r, bound;
    zstd_state *st;
    ZARR__CTX_BEGIN(ctx);
    if (!(st = zarr__codec_ctx_state(ctx, &zstd_state_ops)))
        ZARR_FAIL(ZARR_ENOMEM, "zstd: %s", zarr_errmsg());

    out->size = 0;
    if (level > ZSTD_maxCLevel())
        level = ZSTD_maxCLevel();
    if (level < ZSTD_minCLevel())
        level = ZSTD_minCLevel();
    if (!st->zc && !(st->zc = ZSTD_createCCtx()))
        ZARR_FAIL(ZARR_ENOMEM, "zstd: out of memory creating a compression context");
    if (st->zc_checksum < 0 || st->zc_level != level || st->zc_checksum != (int)checksum) {
        if (ZSTD_isError(ZSTD_CCtx_setParameter(st->zc, ZSTD_c_compressionLevel, level)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(st->zc, ZSTD_c_checksumFlag, checksum ? 1 : 0))) {
            st->zc_checksum = -1;
            ZARR_FAIL(ZARR_EINVAL, "zstd: can't set level %d", level);
        }
        st->zc_level    = level;
        st->zc_checksum = checksum;
    }
    bound = ZSTD_compressBound(n);
    if (ZSTD_isError(bound))
        ZARR_FAIL(ZARR_EUNSUPPORTED, "zstd: input of %zu bytes is too large", n);
    ZARR_TRY(zarr_buf_reserve(out, bound));
    r = ZSTD_compress2(st->zc, out->data, out->cap, src, n);
    if (ZSTD_isError(r)) {
        ZSTD_CCtx_reset(st->zc, ZSTD_reset_session_only);
        ZARR_FAIL(ZARR_ECODEC, "zstd: compression failed: %s", ZSTD_getErrorName(r));
    }
    out->size = r;
done:
    ZARR__CTX_END();
    return rc;
}

static int
zstd_dctx(zstd_state *st)
{
    if (!st->zd && !(st->zd = ZSTD_createDCtx()))
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
    zstd_state        *st;
    ZARR__CTX_BEGIN(ctx);
    if (!(st = zarr__codec_ctx_state(ctx, &zstd_state_ops)))
        ZARR_FAIL(ZARR_ENOMEM, "zstd: %s", zarr_errmsg());

    ZARR_TRY(zstd_dctx(st));
    fcs = ZSTD_getFrameContentSize(src, n);
    if (fcs == ZSTD_CONTENTSIZE_ERROR)
        ZARR_FAIL(ZARR_ECODEC, "zstd: not a zstd frame or truncated header (%zu bytes)", n);
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != dst_n &&
        ZSTD_findFrameCompressedSize(src, n) == n) /* one frame: its size is the total */
        ZARR_FAIL(ZARR_ECODEC, "zstd: frame holds %llu bytes, expected %zu", fcs, dst_n);
    r = ZSTD_decompressDCtx(st->zd, dst, dst_n, src, n);
    if (ZSTD_isError(r)) {
        rc = zstd_error(r, dst_n);
        goto done;
    }
    if (r != dst_n)
        ZARR_FAIL(ZARR_ECODEC, "zstd: data decodes to %zu bytes, expected %zu", r, dst_n);
done:
    ZARR__CTX_END();
    return rc;
}

int
zarr__zstd_decompress_buf(zarr_codec_ctx *ctx, const void *src, size_t n, size_t limit, zarr_buf *out)
{
    int                rc = ZARR_OK;
    unsigned long long fcs;
    zstd_state        *st;
    ZARR__CTX_BEGIN(ctx);
    if (!(st = zarr__codec_ctx_state(ctx, &zstd_state_ops)))
        ZARR_FAIL(ZARR_ENOMEM, "zstd: %s", zarr_errmsg());

    out->size = 0;
    ZARR_TRY(zstd_dctx(st));
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
        ZSTD_DCtx_reset(st->zd, ZSTD_reset_session_only);
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
            r                 = ZSTD_decompressStream(st->zd, &ob, &in);
            if (ZSTD_isError(r)) {
                ZSTD_DCtx_reset(st->zd, ZSTD_reset_session_only);
                rc = zstd_error(r, limit);
                goto done;
            }
            out->size += ob.pos;
            if (r == 0 && in.pos == in.size)
                break;
            if (in.pos == in.size && ob.pos < ob.size) {
                ZSTD_DCtx_reset(st->zd, ZSTD_reset_session_only);
                ZARR_FAIL(ZARR_ECODEC, "zstd: data is truncated (stops after %zu decoded bytes)", out->size);
            }
        }
    }
done:
    ZARR__CTX_END();
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * The class
 * ------------------------------------------------------------------------------------------------ */
typedef struct zstd_cfg {
    int  level;
    bool checksum;
} zstd_cfg;
ZARR__CODEC_CFG_FITS(zstd_cfg);

static int
zstd_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    zstd_cfg *z = ZARR__CODEC_CFG(k, zstd_cfg);
    long long x;
    int       rc;
    if ((rc = zarr__codec_cfg_int_range("zstd", cfg, "level", true, p->v2style ? 1 : 0, -(1 << 20), 1 << 20,
                                        &x)) != ZARR_OK ||
        (rc = zarr__codec_cfg_bool("zstd", cfg, "checksum", false, &z->checksum)) != ZARR_OK)
        return rc;
    z->level = (int)x;
    return ZARR_OK;
}

static int
zstd_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    const zstd_cfg *z = ZARR__CODEC_CCFG(k, zstd_cfg);
    int             rc;
    (void)c;
    if ((rc = zarr__codec_json_add(o, "level", json_object_new_int(z->level))) == ZARR_OK &&
        (!v2 || z->checksum))
        rc = zarr__codec_json_add(o, "checksum", json_object_new_boolean(z->checksum));
    return rc;
}

static int
zstd_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    const zstd_cfg *z = ZARR__CODEC_CCFG(k, zstd_cfg);
    return zarr__zstd_compress(ctx, z->level, z->checksum, src, n, out);
}

static int
zstd_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
            size_t dst_n)
{
    (void)k;
    return zarr__zstd_decompress(ctx, src, n, dst, dst_n);
}

static int
zstd_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
                zarr_buf *out)
{
    (void)k;
    return zarr__zstd_decompress_buf(ctx, src, n, limit, out);
}

const zarr__codec_class zarr__codec_zstd = {
    .v3name     = "zstd",
    .v2id       = "zstd",
    .stage      = ZARR__STAGE_B2B,
    .flags      = ZARR__CODEC_COMPRESSOR,
    .state      = &zstd_state_ops,
    .parse      = zstd_parse,
    .to_json    = zstd_to_json,
    .encode     = zstd_encode,
    .decode     = zstd_decode,
    .decode_buf = zstd_decode_buf,
};
