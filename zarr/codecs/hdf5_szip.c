/*
 * hdf5_szip.c: h5zarr's own `hdf5_szip` codec (v3 name and v2 id) and its kernel: chunks in the
 * framing of HDF5's built-in szip filter (H5Z_FILTER_SZIP = 4, H5Zszip.c), a 4-byte little-endian
 * decoded size followed by what libsz's SZ_BufftoBuffCompress writes (libaec's szip compatibility
 * layer, the library HDF5 itself is built with), so chunks move between .h5 files and stores
 * unchanged (docs/FORMAT.md). The configuration is the filter's four cd_values after HDF5's
 * set_local: {"options_mask", "pixels_per_block", "bits_per_pixel", "pixels_per_scanline"}; the
 * connector computes the last two and the byte-order bits of the mask at dataset create as
 * H5Z__set_local_szip does (vol/filter.c). Other zarr readers do not know it; "numcodecs.hdf5_szip"
 * is not accepted since numcodecs has no such codec.
 *
 * Where HDF5's filter gives up on a chunk that does not shrink (an optional filter: HDF5 then stores
 * that chunk unfiltered and marks it in the chunk's filter mask, which zarr has no place for), the
 * codec stores the larger szip stream: the chunk is still one HDF5's filter decodes.
 */
#include "codec_class.h"

#include <limits.h>
#include <string.h>
#include <szlib.h>

/* ------------------------------------------------------------------------------------------------
 * szip, HDF5 filter framing
 * ------------------------------------------------------------------------------------------------ */
#define H5SZIP_KNOWN_MASK                                                                                    \
    (SZ_ALLOW_K13_OPTION_MASK | SZ_CHIP_OPTION_MASK | SZ_EC_OPTION_MASK | SZ_LSB_OPTION_MASK |               \
     SZ_MSB_OPTION_MASK | SZ_NN_OPTION_MASK | SZ_RAW_OPTION_MASK)

/* Decoded bytes one stored byte can stand for at most: AEC codes a run of zero blocks (at most the 64
 * blocks of a segment, 32 pixels of at most 4 bytes each: 8 KiB) in no fewer than 6 bits; twice that
 * for margin. Claims beyond it are refused before allocating. */
#define H5SZIP_MAX_RATIO 16384u

typedef struct h5szip_cfg {
    unsigned mask, ppb, bpp, pps; /* HDF5's cd_values[0..3] */
} h5szip_cfg;
ZARR__CODEC_CFG_FITS(h5szip_cfg);

static void
store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static uint32_t
load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The parameter values libsz accepts and HDF5 writes: the mask's known bits, an even block of 2..32
 * pixels, 1..24, 32 or 64 bits per pixel, a scanline of pixels_per_block..4096 pixels. */
static int
h5szip_check(const h5szip_cfg *c, int code)
{
    if (c->mask & ~(unsigned)H5SZIP_KNOWN_MASK)
        return zarr_error(code,
                          "codec 'hdf5_szip': 'options_mask' %u has bits szip does not define (known: %u)",
                          c->mask, (unsigned)H5SZIP_KNOWN_MASK);
    if (c->ppb < 2 || c->ppb > SZ_MAX_PIXELS_PER_BLOCK || c->ppb % 2)
        return zarr_error(code, "codec 'hdf5_szip': 'pixels_per_block' is %u, want an even number 2..%d",
                          c->ppb, SZ_MAX_PIXELS_PER_BLOCK);
    if (c->bpp < 1 || (c->bpp > 24 && c->bpp != 32 && c->bpp != 64))
        return zarr_error(code, "codec 'hdf5_szip': 'bits_per_pixel' is %u, want 1..24, 32 or 64", c->bpp);
    if (c->pps < c->ppb || c->pps > SZ_MAX_PIXELS_PER_SCANLINE)
        return zarr_error(code,
                          "codec 'hdf5_szip': 'pixels_per_scanline' is %u, want pixels_per_block (%u)..%d",
                          c->pps, c->ppb, SZ_MAX_PIXELS_PER_SCANLINE);
    return ZARR_OK;
}

/* The bytes libsz reads per sample (32- and 64-bit pixels are split into bytes), and the unit the data
 * must be a whole number of (a pixel): libsz reads past a partial one. */
static size_t
h5szip_unit(const h5szip_cfg *c)
{
    if (c->bpp == 32 || c->bpp == 64)
        return c->bpp / 8;
    return c->bpp > 16 ? 4 : c->bpp > 8 ? 2 : 1;
}

static void
h5szip_param(const h5szip_cfg *c, SZ_com_t *p)
{
    p->options_mask        = (int)c->mask;
    p->bits_per_pixel      = (int)c->bpp;
    p->pixels_per_block    = (int)c->ppb;
    p->pixels_per_scanline = (int)c->pps;
}

/* The most bytes libsz writes for `n` input bytes: it pads every scanline to whole blocks, and AEC
 * stores a block at worst raw plus its option id and each reference sample interval's reference
 * sample (less than one sample per block); doubled plus a constant, with room to spare. 0 on
 * overflow. */
static size_t
h5szip_stream_bound(const h5szip_cfg *c, size_t n)
{
    size_t   sample = c->bpp == 32 || c->bpp == 64 ? 1 : h5szip_unit(c);
    uint64_t pixels = n / sample, lines = (pixels + c->pps - 1) / c->pps,
             padded = (uint64_t)((c->pps + c->ppb - 1) / c->ppb) * c->ppb, r;
    if (!zarr__mul_ok(lines, padded, &r) || !zarr__mul_ok(r, sample, &r) || !zarr__mul_ok(r, 2, &r) ||
        !zarr__add_ok(r, 1024, &r) || r > SIZE_MAX - 8)
        return 0;
    return (size_t)r;
}

static int
h5szip_compress(const h5szip_cfg *c, const void *src, size_t n, zarr_buf *out)
{
    SZ_com_t p;
    size_t   cap, dlen;
    int      rc = ZARR_OK, st;

    out->size = 0;
    ZARR_TRY(h5szip_check(c, ZARR_EUNSUPPORTED));
    if (n > UINT32_MAX)
        ZARR_FAIL(ZARR_EUNSUPPORTED, "hdf5_szip: a chunk of %zu bytes is larger than HDF5's 4 GiB - 1", n);
    if (n % h5szip_unit(c))
        ZARR_FAIL(ZARR_EUNSUPPORTED, "hdf5_szip: %zu bytes are not a whole number of %u-bit pixels", n,
                  c->bpp);
    if (!(cap = h5szip_stream_bound(c, n)))
        ZARR_FAIL(ZARR_EOVERFLOW, "hdf5_szip: output size for %zu bytes overflows", n);
    ZARR_TRY(zarr_buf_reserve(out, cap + 4));
    store_le32(out->data, (uint32_t)n);
    if (n == 0) { /* HDF5 never filters an empty chunk; the size alone says it */
        out->size = 4;
        goto done;
    }
    h5szip_param(c, &p);
    dlen = cap;
    if ((st = SZ_BufftoBuffCompress(out->data + 4, &dlen, src, n, &p)) != SZ_OK)
        ZARR_FAIL(st == SZ_MEM_ERROR ? ZARR_ENOMEM : ZARR_ECODEC, "hdf5_szip: compression failed (libsz %d)",
                  st);
    out->size = dlen + 4;
done:
    return rc;
}

static int
h5szip_decompress(const h5szip_cfg *c, const void *src, size_t n, void *dst, size_t dst_n)
{
    const uint8_t *in = src;
    SZ_com_t       p;
    size_t         got = dst_n;
    uint32_t       orig;
    int            rc, st;

    if ((rc = h5szip_check(c, ZARR_ECODEC)) != ZARR_OK)
        return rc;
    if (n < 4)
        return zarr_error(ZARR_ECODEC, "hdf5_szip: data is truncated (%zu bytes, the header alone is 4)", n);
    if ((orig = load_le32(in)) != dst_n)
        return zarr_error(ZARR_ECODEC, "hdf5_szip: data holds %u bytes, expected %zu", orig, dst_n);
    if (dst_n == 0)
        return ZARR_OK;
    if (dst_n % h5szip_unit(c))
        return zarr_error(ZARR_ECODEC, "hdf5_szip: %zu bytes are not a whole number of %u-bit pixels", dst_n,
                          c->bpp);
    if (n == 4)
        return zarr_error(ZARR_ECODEC, "hdf5_szip: data is truncated (no szip stream for %zu bytes)", dst_n);
    h5szip_param(c, &p);
    st = SZ_BufftoBuffDecompress(dst, &got, in + 4, n - 4, &p);
    if (st == SZ_MEM_ERROR)
        return zarr_error(ZARR_ENOMEM, "hdf5_szip: out of memory decoding %zu bytes", dst_n);
    if (st != SZ_OK)
        return zarr_error(ZARR_ECODEC, "hdf5_szip: corrupt szip stream (libsz %d)", st);
    if (got != dst_n)
        return zarr_error(ZARR_ECODEC, "hdf5_szip: szip stream decodes to %zu bytes, expected %zu", got,
                          dst_n);
    return ZARR_OK;
}

static int
h5szip_decompress_buf(const h5szip_cfg *c, const void *src, size_t n, size_t limit, zarr_buf *out)
{
    uint32_t orig;
    int      rc;
    out->size = 0;
    if (n < 4)
        return zarr_error(ZARR_ECODEC, "hdf5_szip: data is truncated (%zu bytes, the header alone is 4)", n);
    orig = load_le32(src);
    if (orig > limit)
        return zarr_error(ZARR_ECODEC, "hdf5_szip: header claims %u bytes, more than the limit of %zu", orig,
                          limit);
    if (orig > H5SZIP_MAX_RATIO * (uint64_t)(n - 4))
        return zarr_error(ZARR_ECODEC,
                          "hdf5_szip: header claims %u bytes, more than %zu stored bytes can hold", orig,
                          n - 4);
    if ((rc = zarr_buf_reserve(out, orig)) != ZARR_OK)
        return rc;
    if ((rc = h5szip_decompress(c, src, n, out->data, orig)) != ZARR_OK)
        return rc;
    out->size = orig;
    return ZARR_OK;
}

/* ------------------------------------------------------------------------------------------------
 * The class
 * ------------------------------------------------------------------------------------------------ */
static const char *const h5szip_keys[4] = {"options_mask", "pixels_per_block", "bits_per_pixel",
                                           "pixels_per_scanline"};

static int
h5szip_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    h5szip_cfg *c    = ZARR__CODEC_CFG(k, h5szip_cfg);
    unsigned   *v[4] = {&c->mask, &c->ppb, &c->bpp, &c->pps};
    (void)p;
    for (int i = 0; i < 4; i++) { /* each an HDF5 cd_value (unsigned 32-bit), all four required */
        long long x;
        int       rc;
        if (!zarr__codec_cfg_get(cfg, h5szip_keys[i]))
            return zarr_error(ZARR_EMETA,
                              "codec 'hdf5_szip': '%s' is missing (HDF5's szip cd_values %s, %s, %s, %s)",
                              h5szip_keys[i], h5szip_keys[0], h5szip_keys[1], h5szip_keys[2], h5szip_keys[3]);
        if ((rc = zarr__codec_cfg_int_range("hdf5_szip", cfg, h5szip_keys[i], false, 0, 0, UINT32_MAX, &x)) !=
            ZARR_OK)
            return rc;
        *v[i] = (unsigned)x;
    }
    return h5szip_check(c, ZARR_EMETA);
}

static int
h5szip_to_json(const zarr_chain *ch, const zarr_codec *k, bool v2, struct json_object *o)
{
    const h5szip_cfg *c    = ZARR__CODEC_CCFG(k, h5szip_cfg);
    unsigned          v[4] = {c->mask, c->ppb, c->bpp, c->pps};
    int               rc   = ZARR_OK;
    (void)ch, (void)v2;
    for (int i = 0; i < 4 && rc == ZARR_OK; i++)
        rc = zarr__codec_json_add(o, h5szip_keys[i], json_object_new_int64((int64_t)v[i]));
    return rc;
}

static int
h5szip_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    (void)ctx;
    return h5szip_compress(ZARR__CODEC_CCFG(k, h5szip_cfg), src, n, out);
}

static int
h5szip_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
              size_t dst_n)
{
    (void)ctx;
    return h5szip_decompress(ZARR__CODEC_CCFG(k, h5szip_cfg), src, n, dst, dst_n);
}

static int
h5szip_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
                  zarr_buf *out)
{
    (void)ctx;
    return h5szip_decompress_buf(ZARR__CODEC_CCFG(k, h5szip_cfg), src, n, limit, out);
}

/* Scanlines padded to whole blocks and raw blocks can grow the data more than the default bound. */
static size_t
h5szip_encoded_bound(const zarr_codec *k, size_t bound)
{
    size_t g = zarr__codec_grow_bound(bound), h;
    if (bound == ZARR__SIZE_UNKNOWN)
        return ZARR__SIZE_UNKNOWN;
    h = h5szip_stream_bound(ZARR__CODEC_CCFG(k, h5szip_cfg), bound);
    h = h ? h + 4 : ZARR__SIZE_UNKNOWN;
    return g > h ? g : h;
}

const zarr__codec_class zarr__codec_hdf5_szip = {
    .v3name        = "hdf5_szip",
    .v2id          = "hdf5_szip",
    .stage         = ZARR__STAGE_B2B,
    .flags         = ZARR__CODEC_COMPRESSOR | ZARR__CODEC_NO_ALIAS,
    .parse         = h5szip_parse,
    .to_json       = h5szip_to_json,
    .encode        = h5szip_encode,
    .decode        = h5szip_decode,
    .decode_buf    = h5szip_decode_buf,
    .encoded_bound = h5szip_encoded_bound,
};
