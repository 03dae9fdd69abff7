/*
 * packbits.c: the numcodecs `packbits` codec (v2 "packbits", v3 "numcodecs.packbits"): each byte of
 * the data as one bit (nonzero = 1; meant for bool arrays), eight to a byte, first bit in the most
 * significant place (np.packbits), after one byte giving the number of padding bits at the end (0..7).
 * Decoding writes 0 and 1 bytes and refuses a padding count or a size that does not fit.
 */
#include "codec_class.h"

#include <string.h>

static size_t
packbits_size(const zarr_codec *k, size_t n)
{
    (void)k;
    return n == ZARR__SIZE_UNKNOWN ? n : 1 + n / 8 + (n % 8 != 0);
}

static int
packbits_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    size_t on = 1 + n / 8 + (n % 8 != 0);
    int    rc;
    (void)k, (void)ctx;
    if ((rc = zarr_buf_resize(out, on)) != ZARR_OK)
        return rc;
    memset(out->data, 0, on);
    out->data[0] = (uint8_t)(n % 8 ? 8 - n % 8 : 0);
    for (size_t i = 0; i < n; i++)
        if (src[i])
            out->data[1 + i / 8] |= (uint8_t)(0x80u >> (i % 8));
    return ZARR_OK;
}

/* The number of decoded bytes `n` encoded bytes hold, checking the padding count. */
static int
packbits_count(const uint8_t *src, size_t n, size_t *count)
{
    if (n < 1)
        return zarr_error(ZARR_ECODEC, "packbits: data is empty (the padding count alone is 1 byte)");
    if (src[0] > 7)
        return zarr_error(ZARR_ECODEC, "packbits: padding count is %u, want 0..7", src[0]);
    if (n == 1 && src[0])
        return zarr_error(ZARR_ECODEC, "packbits: %u padding bits and no data byte", src[0]);
    *count = (n - 1) * 8 - src[0];
    return ZARR_OK;
}

static void
unpack(const uint8_t *src, uint8_t *dst, size_t count)
{
    for (size_t i = 0; i < count; i++)
        dst[i] = (src[1 + i / 8] >> (7 - i % 8)) & 1;
}

static int
packbits_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
                size_t dst_n)
{
    size_t count;
    int    rc;
    (void)k, (void)ctx;
    if ((rc = packbits_count(src, n, &count)) != ZARR_OK)
        return rc;
    if (count != dst_n)
        return zarr_error(ZARR_ECODEC, "packbits: data holds %zu bits, expected %zu", count, dst_n);
    unpack(src, dst, count);
    return ZARR_OK;
}

static int
packbits_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
                    zarr_buf *out)
{
    size_t count;
    int    rc;
    (void)k, (void)ctx;
    if ((rc = packbits_count(src, n, &count)) != ZARR_OK)
        return rc;
    if (count > limit)
        return zarr_error(ZARR_ECODEC, "packbits: decodes to %zu bytes, more than the limit of %zu", count,
                          limit);
    if ((rc = zarr_buf_resize(out, count)) != ZARR_OK)
        return rc;
    unpack(src, out->data, count);
    return ZARR_OK;
}

static size_t
packbits_bound(const zarr_codec *k, size_t bound)
{
    return packbits_size(k, bound);
}

const zarr__codec_class zarr__codec_packbits = {
    .v3name        = "numcodecs.packbits",
    .v2id          = "packbits",
    .stage         = ZARR__STAGE_B2B,
    .encode        = packbits_encode,
    .decode        = packbits_decode,
    .decode_buf    = packbits_decode_buf,
    .encoded_size  = packbits_size,
    .encoded_bound = packbits_bound,
};
