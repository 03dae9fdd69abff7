/*
 * fletcher32.c: the `numcodecs.fletcher32` codec (v2 "fletcher32"; HDF5's fletcher32 filter 3 writes
 * the same bytes) and its kernel: HDF5's Fletcher-32 of the data as 4 little-endian bytes after it.
 * The chain appends and verifies it in place (ZARR__CODEC_CHECKSUM).
 */
#include "codec_class.h"

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

/* ------------------------------------------------------------------------------------------------
 * The class
 * ------------------------------------------------------------------------------------------------ */
static size_t
plus4(const zarr_codec *k, size_t n)
{
    (void)k;
    return n == ZARR__SIZE_UNKNOWN ? n : n + 4;
}

const zarr__codec_class zarr__codec_fletcher32 = {
    .v3name        = "numcodecs.fletcher32",
    .v2id          = "fletcher32",
    .stage         = ZARR__STAGE_B2B,
    .flags         = ZARR__CODEC_CHECKSUM,
    .checksum      = zarr__fletcher32,
    .encoded_size  = plus4,
    .encoded_bound = plus4,
};
