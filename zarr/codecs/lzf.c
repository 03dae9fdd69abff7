/*
 * lzf.c: h5zarr's `lzf` codec (v3 name and v2 id; no configuration) and its kernel (Debian's liblzf):
 * chunks in the bytes of h5py's LZF HDF5 filter (32000): the raw LZF data, no header, so chunks move
 * unchanged between h5py files and stores and `h5repack` converts h5py files with LZF (through the
 * connector, filter 32000 becomes this codec; filters/h5z_lzf.c is the filter on the same kernel). The
 * encoder gives LZF room for its worst case, so a chunk that does not shrink is still an LZF chunk
 * (a little larger) rather than a failure. Other zarr readers do not know it; "numcodecs.lzf" is not
 * accepted since numcodecs has no such codec.
 */
#include "codec_class.h"
#include "dynlib.h"

#include <errno.h>
#include <limits.h>
#include <lzf.h>

#ifndef H5ZARR_LZF_SONAME
#define H5ZARR_LZF_SONAME "liblzf.so.1"
#endif
/* Loaded on first use (dynlib.h): the functions called, through lzf_lib_fn. */
/* clang-format off */
#define LZF_LIB_FUNCS(X)                                                                                     \
    X(lzf_compress) X(lzf_decompress)
/* clang-format on */
ZARR__DYNLIB(lzf_lib, LZF_LIB_FUNCS, H5ZARR_LZF_SONAME, "the lzf codec and filter");

/* The most LZF writes for n bytes (a literal run of up to 32 bytes costs one control byte). */
static size_t
lzf_bound(size_t n)
{
    return n + n / 32 + 16;
}

/* LZF's best case: a 3-byte back-reference repeats up to 264 bytes. */
#define LZF_MAX_RATIO 90u

int
zarr__lzf_compress(const void *src, size_t n, zarr_buf *out)
{
    size_t   cap = lzf_bound(n);
    unsigned got;
    int      rc;
    out->size = 0;
    if ((rc = zarr__dynlib_load(&lzf_lib)) != ZARR_OK)
        return rc;
    if (n > UINT_MAX / 2)
        return zarr_error(ZARR_EUNSUPPORTED,
                          "lzf: a chunk of %zu bytes is too large (LZF takes less than 2 GiB)", n);
    if ((rc = zarr_buf_reserve(out, cap)) != ZARR_OK)
        return rc;
    if (n == 0)
        return ZARR_OK; /* h5py's filter never sees an empty chunk; an empty one stays empty */
    if (!(got = lzf_lib_fn.lzf_compress(src, (unsigned)n, out->data, (unsigned)cap)))
        return zarr_error(ZARR_ECODEC, "lzf: compression found no room in %zu bytes for %zu", cap, n);
    out->size = got;
    return ZARR_OK;
}

int
zarr__lzf_decompress(const void *src, size_t n, void *dst, size_t dst_n)
{
    unsigned got;
    int      rc;
    if (n == 0 && dst_n == 0)
        return ZARR_OK;
    if ((rc = zarr__dynlib_load(&lzf_lib)) != ZARR_OK)
        return rc;
    if (n == 0) /* liblzf reads a first byte whatever the length (fuzz_chain finding) */
        return zarr_error(ZARR_ECODEC, "lzf: no data for %zu bytes", dst_n);
    if (n > UINT_MAX || dst_n > UINT_MAX)
        return zarr_error(ZARR_EUNSUPPORTED, "lzf: chunks of 4 GiB or more are not supported");
    errno = 0;
    got   = lzf_lib_fn.lzf_decompress(src, (unsigned)n, dst, (unsigned)dst_n);
    if (!got && errno == E2BIG)
        return zarr_error(ZARR_ECODEC, "lzf: data decodes to more than the expected %zu bytes", dst_n);
    if (!got)
        return zarr_error(ZARR_ECODEC, "lzf: corrupt data");
    if (got != dst_n)
        return zarr_error(ZARR_ECODEC, "lzf: data decodes to %u bytes, expected %zu", got, dst_n);
    return ZARR_OK;
}

int
zarr__lzf_decompress_buf(const void *src, size_t n, size_t limit, zarr_buf *out)
{
    size_t cap, most;
    int    rc;
    out->size = 0;
    if (n == 0)
        return ZARR_OK;
    if ((rc = zarr__dynlib_load(&lzf_lib)) != ZARR_OK)
        return rc;
    if (n > UINT_MAX)
        return zarr_error(ZARR_EUNSUPPORTED, "lzf: chunks of 4 GiB or more are not supported");
    most = n > (SIZE_MAX - 64) / LZF_MAX_RATIO ? SIZE_MAX : n * LZF_MAX_RATIO + 64;
    if (most > limit)
        most = limit;
    if (most > UINT_MAX)
        most = UINT_MAX;
    for (cap = n * 4 < most ? n * 4 : most;; cap = cap > most / 2 ? most : cap * 2) {
        unsigned got;
        if ((rc = zarr_buf_reserve(out, cap)) != ZARR_OK)
            return rc;
        errno = 0;
        got   = lzf_lib_fn.lzf_decompress(src, (unsigned)n, out->data, (unsigned)cap);
        if (got) {
            out->size = got;
            return ZARR_OK;
        }
        if (errno != E2BIG)
            return zarr_error(ZARR_ECODEC, "lzf: corrupt data");
        if (cap >= most)
            return zarr_error(ZARR_ECODEC,
                              "lzf: data decodes to more than %zu bytes (the limit, or what %zu LZF "
                              "bytes can hold)",
                              most, n);
    }
}

static int
lzf_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    (void)k, (void)ctx;
    return zarr__lzf_compress(src, n, out);
}

static int
lzf_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n)
{
    (void)k, (void)ctx;
    return zarr__lzf_decompress(src, n, dst, dst_n);
}

static int
lzf_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
               zarr_buf *out)
{
    (void)k, (void)ctx;
    return zarr__lzf_decompress_buf(src, n, limit, out);
}

static size_t
lzf_encoded_bound(const zarr_codec *k, size_t bound)
{
    (void)k;
    return bound == ZARR__SIZE_UNKNOWN || bound > SIZE_MAX / 2 ? ZARR__SIZE_UNKNOWN : lzf_bound(bound);
}

const zarr__codec_class zarr__codec_lzf = {
    .v3name        = "lzf",
    .v2id          = "lzf",
    .stage         = ZARR__STAGE_B2B,
    .flags         = ZARR__CODEC_COMPRESSOR | ZARR__CODEC_NO_ALIAS | ZARR__CODEC_V3_NO_CONFIG,
    .encode        = lzf_encode,
    .decode        = lzf_decode,
    .decode_buf    = lzf_decode_buf,
    .encoded_bound = lzf_encoded_bound,
};
