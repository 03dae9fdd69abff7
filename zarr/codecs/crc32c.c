/*
 * crc32c.c: the `crc32c` codec (v3; numcodecs "crc32c") and its kernel: CRC-32C (Castagnoli) of the
 * data as 4 little-endian bytes after it (ISA-L). The chain appends and verifies it in place
 * (ZARR__CODEC_CHECKSUM).
 */
#include "codec_class.h"

#include <isa-l/crc.h>
#include <limits.h>

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

/* ------------------------------------------------------------------------------------------------
 * The class
 * ------------------------------------------------------------------------------------------------ */
static size_t
plus4(const zarr_codec *k, size_t n)
{
    (void)k;
    return n == ZARR__SIZE_UNKNOWN ? n : n + 4;
}

const zarr__codec_class zarr__codec_crc32c = {
    .v3name        = "crc32c",
    .v2id          = "crc32c",
    .stage         = ZARR__STAGE_B2B,
    .flags         = ZARR__CODEC_CHECKSUM | ZARR__CODEC_V3_NO_CONFIG,
    .checksum      = zarr__crc32c,
    .encoded_size  = plus4,
    .encoded_bound = plus4,
};
