/*
 * hdf5_lz4.c: h5zarr's own `hdf5_lz4` codec (v3 name and v2 id; configuration {"blocksize": N}) and
 * its kernel: chunks in the framing of HDF5's lz4 filter (32004), the same kernel as that filter's
 * plugin (filters/h5z_lz4.c), so chunks move between .h5 files and stores unchanged (docs/FORMAT.md).
 * Other zarr readers do not know it; "numcodecs.hdf5_lz4" is not accepted since numcodecs has no such
 * codec.
 */
#include "codec_class.h"

#include <limits.h>
#include <lz4.h>
#include <string.h>

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
    if (orig > ZARR__LZ4_MAX_RATIO * (uint64_t)(n - 12) + 64)
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
 * The class
 * ------------------------------------------------------------------------------------------------ */
typedef struct h5lz4_cfg {
    size_t blocksize; /* HDF5's cd_values[0]; 0 = the filter's default (1 GiB) */
} h5lz4_cfg;
ZARR__CODEC_CFG_FITS(h5lz4_cfg);

static int
h5lz4_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    long long x; /* the block size is an HDF5 cd_value: an unsigned 32-bit integer */
    int       rc = zarr__codec_cfg_int_range("hdf5_lz4", cfg, "blocksize", false, 0, 0, UINT32_MAX, &x);
    (void)p;
    ZARR__CODEC_CFG(k, h5lz4_cfg)->blocksize = (size_t)x;
    return rc;
}

static int
h5lz4_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    (void)c, (void)v2;
    return zarr__codec_json_add(o, "blocksize",
                                json_object_new_int64((int64_t)ZARR__CODEC_CCFG(k, h5lz4_cfg)->blocksize));
}

static int
h5lz4_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    (void)ctx;
    return zarr__h5lz4_compress(ZARR__CODEC_CCFG(k, h5lz4_cfg)->blocksize, src, n, out);
}

static int
h5lz4_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
             size_t dst_n)
{
    (void)k, (void)ctx;
    return zarr__h5lz4_decompress(src, n, dst, dst_n);
}

static int
h5lz4_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
                 zarr_buf *out)
{
    (void)k, (void)ctx;
    return zarr__h5lz4_decompress_buf(src, n, limit, out);
}

/* Raw blocks plus 4 bytes each: small block sizes grow the data more than the default bound. */
static size_t
h5lz4_encoded_bound(const zarr_codec *k, size_t bound)
{
    size_t g = zarr__codec_grow_bound(bound), h;
    h        = bound == ZARR__SIZE_UNKNOWN ? ZARR__SIZE_UNKNOWN
                                           : zarr__h5lz4_max_size(ZARR__CODEC_CCFG(k, h5lz4_cfg)->blocksize, bound);
    return g > h ? g : h;
}

const zarr__codec_class zarr__codec_hdf5_lz4 = {
    .v3name        = "hdf5_lz4",
    .v2id          = "hdf5_lz4",
    .stage         = ZARR__STAGE_B2B,
    .flags         = ZARR__CODEC_COMPRESSOR | ZARR__CODEC_NO_ALIAS,
    .parse         = h5lz4_parse,
    .to_json       = h5lz4_to_json,
    .encode        = h5lz4_encode,
    .decode        = h5lz4_decode,
    .decode_buf    = h5lz4_decode_buf,
    .encoded_bound = h5lz4_encoded_bound,
};
