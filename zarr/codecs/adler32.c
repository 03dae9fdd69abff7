/*
 * adler32.c: the numcodecs `adler32` codec (v2 "adler32", v3 "numcodecs.adler32"): zlib's Adler-32 of the
 * data as 4 little-endian bytes before it (numcodecs 0.11's Checksum32 layout). No configuration. The chain
 * strips and verifies it in place on decode (ZARR__CODEC_CHECKSUM_FIRST); a mismatch is ZARR_ECODEC.
 */
#include "codec_class.h"

#include <zlib.h>

uint32_t
zarr__adler32(const void *p, size_t n)
{
    return (uint32_t)adler32_z(1, p, n);
}

static size_t
plus4(const zarr_codec *k, size_t n)
{
    (void)k;
    return n == ZARR__SIZE_UNKNOWN ? n : n + 4;
}

const zarr__codec_class zarr__codec_adler32 = {
    .v3name        = "numcodecs.adler32",
    .v2id          = "adler32",
    .stage         = ZARR__STAGE_B2B,
    .flags         = ZARR__CODEC_CHECKSUM | ZARR__CODEC_CHECKSUM_FIRST,
    .checksum      = zarr__adler32,
    .encoded_size  = plus4,
    .encoded_bound = plus4,
};
