/*
 * shuffle.c: the `numcodecs.shuffle` codec (v2 "shuffle"; HDF5's shuffle filter 2 writes the same
 * bytes) and its kernel: byte k of every element, for k = 0 .. esize-1, concatenated; the n % esize
 * trailing bytes are copied unchanged at the end. An element size of 0 or 1 leaves the data as it is
 * (the chain skips the codec).
 */
#include "codec_class.h"

#include <string.h>

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
 * The class
 * ------------------------------------------------------------------------------------------------ */
typedef struct shuffle_cfg {
    size_t elementsize;
} shuffle_cfg;
ZARR__CODEC_CFG_FITS(shuffle_cfg);

static int
shuffle_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    long long x;
    int       rc;
    if ((rc = zarr__codec_cfg_int_range("shuffle", cfg, "elementsize", true, 4, 0, 1LL << 40, &x)) != ZARR_OK)
        return rc;
    /* numcodecs' 0 (a number) is no shuffle at all (a copy); NCZarr's "0" (a string: only NCZarr writes
     * strings here) is written before it knows the type size, and NCZarr reads every shuffle with the
     * variable's type size, so that is what it means */
    if (x == 0 && json_object_is_type(zarr__codec_cfg_get(cfg, "elementsize"), json_type_string))
        x = p->chain->vlen ? 1 : (long long)p->chain->esize;
    ZARR__CODEC_CFG(k, shuffle_cfg)->elementsize = (size_t)x;
    return ZARR_OK;
}

static int
shuffle_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    (void)c, (void)v2;
    return zarr__codec_json_add(
        o, "elementsize", json_object_new_int64((int64_t)ZARR__CODEC_CCFG(k, shuffle_cfg)->elementsize));
}

static bool
shuffle_is_noop(const zarr_codec *k)
{
    return ZARR__CODEC_CCFG(k, shuffle_cfg)->elementsize <= 1;
}

static int
shuffle_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    int rc;
    (void)ctx;
    if ((rc = zarr_buf_resize(out, n)) != ZARR_OK)
        return rc;
    zarr__shuffle(src, out->data, n, ZARR__CODEC_CCFG(k, shuffle_cfg)->elementsize);
    return ZARR_OK;
}

static int
shuffle_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
               size_t dst_n)
{
    (void)ctx;
    if (n != dst_n)
        return zarr_error(ZARR_ECODEC, "shuffle: data has %zu bytes, expected %zu", n, dst_n);
    zarr__unshuffle(src, dst, n, ZARR__CODEC_CCFG(k, shuffle_cfg)->elementsize);
    return ZARR_OK;
}

static int
shuffle_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
                   zarr_buf *out)
{
    int rc;
    (void)ctx;
    if (n > limit)
        return zarr_error(ZARR_ECODEC, "shuffle: data has %zu bytes, more than the limit of %zu", n, limit);
    if ((rc = zarr_buf_resize(out, n)) != ZARR_OK)
        return rc;
    zarr__unshuffle(src, out->data, n, ZARR__CODEC_CCFG(k, shuffle_cfg)->elementsize);
    return ZARR_OK;
}

static size_t
same_size(const zarr_codec *k, size_t n)
{
    (void)k;
    return n;
}

const zarr__codec_class zarr__codec_shuffle = {
    .v3name        = "numcodecs.shuffle",
    .v2id          = "shuffle",
    .stage         = ZARR__STAGE_B2B,
    .parse         = shuffle_parse,
    .to_json       = shuffle_to_json,
    .is_noop       = shuffle_is_noop,
    .encode        = shuffle_encode,
    .decode        = shuffle_decode,
    .decode_buf    = shuffle_decode_buf,
    .encoded_size  = same_size,
    .encoded_bound = same_size,
};
