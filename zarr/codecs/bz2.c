/*
 * bz2.c: the `numcodecs.bz2` codec (v2 "bz2"; HDF5's bzip2 filter 307 writes the same stream) and its
 * kernel (libbz2): one bzip2 stream, `level` = block size in 100 kB (1..9).
 */
#include "codec_class.h"
#include "dynlib.h"

#include <bzlib.h>
#include <limits.h>
#include <string.h>

#ifndef H5ZARR_BZ2_SONAME
#define H5ZARR_BZ2_SONAME "libbz2.so.1.0"
#endif
/* Loaded on first use (dynlib.h): the functions called, through bz2_lib_fn. */
/* clang-format off */
#define BZ2_LIB_FUNCS(X)                                                                                     \
    X(BZ2_bzBuffToBuffCompress) X(BZ2_bzDecompress) X(BZ2_bzDecompressEnd) X(BZ2_bzDecompressInit)
/* clang-format on */
ZARR__DYNLIB(bz2_lib, BZ2_LIB_FUNCS, H5ZARR_BZ2_SONAME, "the bz2 codec");

/* ------------------------------------------------------------------------------------------------
 * bzip2 (libbz2): one stream, as numcodecs BZ2 and HDF5's bzip2 filter (307) write it
 * ------------------------------------------------------------------------------------------------ */
static int
bz2_error(int r, const char *what)
{
    if (r == BZ_MEM_ERROR)
        return zarr_error(ZARR_ENOMEM, "bz2: out of memory %s", what);
    if (r == BZ_DATA_ERROR_MAGIC)
        return zarr_error(ZARR_ECODEC, "bz2: not a bzip2 stream (no 'BZh' header)");
    if (r == BZ_DATA_ERROR)
        return zarr_error(ZARR_ECODEC, "bz2: corrupt data (bad block or CRC)");
    return zarr_error(ZARR_ECODEC, "bz2: %s failed (libbz2 error %d)", what, r);
}

int
zarr__bz2_compress(int level, const void *src, size_t n, zarr_buf *out)
{
    static char  none[1]; /* `src` for empty input, which may come as NULL */
    unsigned int got;
    size_t       bound;
    int          rc = ZARR_OK, r;

    out->size = 0;
    ZARR_TRY(zarr__dynlib_load(&bz2_lib));
    if (level < 1 || level > 9)
        ZARR_FAIL(ZARR_EINVAL, "bz2: invalid compression level %d (want 1..9)", level);
    if (n > UINT_MAX / 2)
        ZARR_FAIL(ZARR_EUNSUPPORTED, "bz2: input of %zu bytes is larger than libbz2 takes in one call", n);
    bound = n + n / 100 + 601; /* libbz2's documented worst case: 1% + 600 bytes */
    ZARR_TRY(zarr_buf_reserve(out, bound));
    got = (unsigned int)bound;
    r = bz2_lib_fn.BZ2_bzBuffToBuffCompress((char *)out->data, &got, n ? (char *)src : none, (unsigned int)n,
                                            level, 0, 0);
    if (r != BZ_OK) {
        rc = bz2_error(r, "compressing");
        goto done;
    }
    out->size = got;
done:
    return rc;
}

/* Decodes one stream into dst (exactly dst_n bytes when `grow` is NULL) or into `grow` (at most `limit`
 * bytes). Bytes after the end of the stream are refused: HDF5's filter reads one stream too. */
static int
bz2_run(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n, zarr_buf *grow, size_t limit)
{
    bz_stream s;
    char      spare[1]; /* a full `dst`: is there more to decode than dst_n bytes? */
    size_t    cap, done_n = 0;
    int       r, rc       = ZARR_OK;

    memset(&s, 0, sizeof s);
    if ((rc = zarr__dynlib_load(&bz2_lib)) != ZARR_OK)
        return rc;
    if (n > UINT_MAX)
        return zarr_error(ZARR_EUNSUPPORTED,
                          "bz2: chunk of %zu bytes is larger than libbz2 takes in one call", n);
    if ((r = bz2_lib_fn.BZ2_bzDecompressInit(&s, 0, 0)) != BZ_OK)
        return bz2_error(r, "initializing the decoder");
    s.next_in  = (char *)src;
    s.avail_in = (unsigned int)n;
    cap        = dst_n;
    if (grow) {
        cap        = n < SIZE_MAX / 8 && 4 * n + 4096 < limit ? 4 * n + 4096 : limit;
        grow->size = 0;
        ZARR_TRY(zarr_buf_reserve(grow, cap ? cap : 1));
        dst = grow->data;
    }
    for (;;) {
        size_t room = cap - done_n;
        bool   full = room == 0;
        s.next_out  = full ? spare : (char *)dst + done_n;
        s.avail_out = full ? 1 : room > UINT_MAX ? UINT_MAX : (unsigned int)room;
        r           = bz2_lib_fn.BZ2_bzDecompress(&s);
        if (full && s.avail_out == 0) { /* one byte more than there is room for */
            if (!grow || cap >= limit)
                ZARR_FAIL(ZARR_ECODEC, "bz2: data decodes to more than %zu bytes", cap);
            done_n++; /* the spare byte: keep it */
            cap = cap > limit / 2 ? limit : 2 * cap;
            ZARR_TRY(zarr_buf_reserve(grow, cap));
            dst             = grow->data;
            dst[done_n - 1] = (uint8_t)spare[0];
            continue;
        }
        done_n = (size_t)s.total_out_lo32 | ((size_t)s.total_out_hi32 << 32);
        if (r == BZ_STREAM_END)
            break;
        if (r != BZ_OK) {
            rc = bz2_error(r, "decoding");
            goto done;
        }
        if (s.avail_out > 0 && s.avail_in == 0)
            ZARR_FAIL(ZARR_ECODEC, "bz2: data is truncated (the stream stops after %zu decoded bytes)",
                      done_n);
    }
    if (s.avail_in)
        ZARR_FAIL(ZARR_ECODEC, "bz2: %u bytes after the end of the stream", s.avail_in);
    if (!grow && done_n != dst_n)
        ZARR_FAIL(ZARR_ECODEC, "bz2: data decodes to %zu bytes, expected %zu", done_n, dst_n);
    if (grow)
        grow->size = done_n;
done:
    bz2_lib_fn.BZ2_bzDecompressEnd(&s);
    return rc;
}

int
zarr__bz2_decompress(const void *src, size_t n, void *dst, size_t dst_n)
{
    return bz2_run(src, n, dst, dst_n, NULL, 0);
}

int
zarr__bz2_decompress_buf(const void *src, size_t n, size_t limit, zarr_buf *out)
{
    return bz2_run(src, n, NULL, 0, out, limit);
}

/* ------------------------------------------------------------------------------------------------
 * The class
 * ------------------------------------------------------------------------------------------------ */
typedef struct bz2_cfg {
    int level;
} bz2_cfg;
ZARR__CODEC_CFG_FITS(bz2_cfg);

static int
bz2_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    long long x; /* numcodecs' default level is 1; NCZarr writes the level as a string */
    int       rc = zarr__codec_cfg_int_range("bz2", cfg, "level", true, 1, 1, 9, &x);
    (void)p;
    ZARR__CODEC_CFG(k, bz2_cfg)->level = (int)x;
    return rc;
}

static int
bz2_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    (void)c, (void)v2;
    return zarr__codec_json_add(o, "level", json_object_new_int(ZARR__CODEC_CCFG(k, bz2_cfg)->level));
}

static int
bz2_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    (void)ctx;
    return zarr__bz2_compress(ZARR__CODEC_CCFG(k, bz2_cfg)->level, src, n, out);
}

static int
bz2_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n)
{
    (void)k, (void)ctx;
    return zarr__bz2_decompress(src, n, dst, dst_n);
}

static int
bz2_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
               zarr_buf *out)
{
    (void)k, (void)ctx;
    return zarr__bz2_decompress_buf(src, n, limit, out);
}

const zarr__codec_class zarr__codec_bz2 = {
    .v3name     = "numcodecs.bz2",
    .v2id       = "bz2",
    .stage      = ZARR__STAGE_B2B,
    .flags      = ZARR__CODEC_COMPRESSOR,
    .parse      = bz2_parse,
    .to_json    = bz2_to_json,
    .encode     = bz2_encode,
    .decode     = bz2_decode,
    .decode_buf = bz2_decode_buf,
};
