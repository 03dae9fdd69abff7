/*
 * lz4.c: the `numcodecs.lz4` codec (v2 "lz4") and its kernel: a 4-byte little-endian decoded size,
 * then one raw LZ4 block.
 */
#include "codec_class.h"

#include <limits.h>
#include <lz4.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------
 * LZ4, numcodecs framing
 * ------------------------------------------------------------------------------------------------ */

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
    if (size > ZARR__LZ4_MAX_RATIO * (uint64_t)(n - 4) + 64)
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
 * The class
 * ------------------------------------------------------------------------------------------------ */
typedef struct lz4_cfg {
    int acceleration;
} lz4_cfg;
ZARR__CODEC_CFG_FITS(lz4_cfg);

static int
lz4_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    long long x;
    int rc = zarr__codec_cfg_int_range("lz4", cfg, "acceleration", false, 1, -(1LL << 30), 1LL << 30, &x);
    (void)p;
    ZARR__CODEC_CFG(k, lz4_cfg)->acceleration = (int)x;
    return rc;
}

static int
lz4_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    (void)c, (void)v2;
    return zarr__codec_json_add(o, "acceleration",
                                json_object_new_int(ZARR__CODEC_CCFG(k, lz4_cfg)->acceleration));
}

static int
lz4_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    (void)ctx;
    return zarr__lz4_compress(ZARR__CODEC_CCFG(k, lz4_cfg)->acceleration, src, n, out);
}

static int
lz4_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n)
{
    (void)k, (void)ctx;
    return zarr__lz4_decompress(src, n, dst, dst_n);
}

static int
lz4_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
               zarr_buf *out)
{
    (void)k, (void)ctx;
    return zarr__lz4_decompress_buf(src, n, limit, out);
}

const zarr__codec_class zarr__codec_lz4 = {
    .v3name     = "numcodecs.lz4",
    .v2id       = "lz4",
    .stage      = ZARR__STAGE_B2B,
    .flags      = ZARR__CODEC_COMPRESSOR,
    .parse      = lz4_parse,
    .to_json    = lz4_to_json,
    .encode     = lz4_encode,
    .decode     = lz4_decode,
    .decode_buf = lz4_decode_buf,
};
