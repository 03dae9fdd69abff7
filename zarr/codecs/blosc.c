/*
 * blosc.c: the `blosc` codec (v3 and numcodecs Blosc, Blosc1 frames) and its kernel (c-blosc's *_ctx
 * functions, one internal thread; thread-safe, no global state). The compressor names in hdf5-blosc's
 * code order and the shuffle names are here once (the public zarr_blosc_* of h5zarr/zarr_filters.h)
 * for the codec, the H5Z filter (filters/h5z_blosc.c) and the connector's filter mapping
 * (vol/filter.c, vol/config.c), so only this file includes <blosc.h>.
 */
#include "codec_class.h"
#include "dynlib.h"

#include <blosc.h>
#include <stdio.h>
#include <string.h>

/* The public constants are c-blosc's own (the connector and the H5Z filter use them, not <blosc.h>). */
_Static_assert(ZARR_BLOSC_MAX_TYPESIZE == BLOSC_MAX_TYPESIZE, "c-blosc's BLOSC_MAX_TYPESIZE changed");
_Static_assert(ZARR_BLOSC_VERSION_FORMAT == BLOSC_VERSION_FORMAT, "c-blosc's BLOSC_VERSION_FORMAT changed");
_Static_assert(BLOSC_BLOSCLZ == 0 && BLOSC_LZ4 == 1 && BLOSC_LZ4HC == 2 && BLOSC_SNAPPY == 3 &&
                   BLOSC_ZLIB == 4 && BLOSC_ZSTD == 5 && ZARR_BLOSC_NCOMP == 6,
               "c-blosc's compressor codes changed");
_Static_assert(BLOSC_NOSHUFFLE == 0 && BLOSC_SHUFFLE == 1 && BLOSC_BITSHUFFLE == 2 &&
                   ZARR_BLOSC_NSHUFFLE == 3,
               "c-blosc's shuffle codes changed");

#ifndef H5ZARR_BLOSC_SONAME
#define H5ZARR_BLOSC_SONAME "libblosc.so.1"
#endif
/* c-blosc is loaded on first use (dynlib.h): the functions called, through blosc_lib_fn. */
/* clang-format off */
#define BLOSC_FUNCS(X)                                                                                       \
    X(blosc_cbuffer_metainfo) X(blosc_cbuffer_sizes) X(blosc_cbuffer_validate)                               \
    X(blosc_compname_to_compcode) X(blosc_compress_ctx) X(blosc_decompress_ctx)
/* clang-format on */
ZARR__DYNLIB(blosc_lib, BLOSC_FUNCS, H5ZARR_BLOSC_SONAME, "the blosc codec and filter");

static const char *const compnames[ZARR_BLOSC_NCOMP] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};
static const char *const shuffle_names[ZARR_BLOSC_NSHUFFLE] = {"noshuffle", "shuffle", "bitshuffle"};

/* ------------------------------------------------------------------------------------------------
 * Names, codes and what this c-blosc has (public, h5zarr/zarr_filters.h)
 * ------------------------------------------------------------------------------------------------ */
const char *
zarr_blosc_compname(int code)
{
    return code >= 0 && code < ZARR_BLOSC_NCOMP ? compnames[code] : NULL;
}

int
zarr_blosc_compcode(const char *cname)
{
    for (int i = 0; cname && i < ZARR_BLOSC_NCOMP; i++)
        if (strcmp(cname, compnames[i]) == 0)
            return i;
    return -1;
}

const char *
zarr_blosc_shuffle_name(int code)
{
    return code >= 0 && code < ZARR_BLOSC_NSHUFFLE ? shuffle_names[code] : NULL;
}

int
zarr_blosc_shuffle_code(const char *name)
{
    for (int i = 0; name && i < ZARR_BLOSC_NSHUFFLE; i++)
        if (strcmp(name, shuffle_names[i]) == 0)
            return i;
    return -1;
}

bool
zarr_blosc_has_compressor(const char *cname)
{
    /* blosc_compname_to_compcode is pure and answers -1 for compressors not built in
     * (blosc_list_compressors fills a static buffer on first use: not thread-safe). */
    return zarr_blosc_compcode(cname) >= 0 && zarr__dynlib_load(&blosc_lib) == ZARR_OK &&
           blosc_lib_fn.blosc_compname_to_compcode(cname) >= 0;
}

/* The compressors this c-blosc has, for messages. */
static const char *
blosc_available(char *buf, size_t n)
{
    size_t used = 0;
    buf[0]      = '\0';
    for (int i = 0; i < ZARR_BLOSC_NCOMP; i++)
        if (zarr_blosc_has_compressor(compnames[i]) && used < n)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? "," : "", compnames[i]);
    return buf;
}

int
zarr_blosc_check_compressor(const char *cname)
{
    char have[64];
    int  rc;
    if ((rc = zarr__dynlib_load(&blosc_lib)) != ZARR_OK)
        return rc;
    if (zarr_blosc_compcode(cname) < 0)
        return zarr_error(ZARR_EINVAL, "blosc: '%s' is not a Blosc compressor (this c-blosc has %s)",
                          cname ? cname : "(null)", blosc_available(have, sizeof have));
    if (!zarr_blosc_has_compressor(cname))
        return zarr_error(ZARR_EUNSUPPORTED,
                          "blosc: compressor '%s' is not in this c-blosc build (it has %s)", cname,
                          blosc_available(have, sizeof have));
    return ZARR_OK;
}

unsigned
zarr_blosc_typesize(size_t size)
{
    return size == 0 || size > ZARR_BLOSC_MAX_TYPESIZE ? 1 : (unsigned)size;
}

/* ------------------------------------------------------------------------------------------------
 * Blosc1
 * ------------------------------------------------------------------------------------------------ */
int
zarr__blosc_compress(const char *cname, int clevel, int shuffle, size_t typesize, size_t blocksize,
                     const void *src, size_t n, zarr_buf *out)
{
    int rc = ZARR_OK, r;

    out->size = 0;
    ZARR_TRY(zarr__dynlib_load(&blosc_lib));
    if (n > BLOSC_MAX_BUFFERSIZE)
        ZARR_FAIL(ZARR_EUNSUPPORTED, "blosc: input of %zu bytes is larger than Blosc1's limit of %d", n,
                  BLOSC_MAX_BUFFERSIZE);
    if (!zarr_blosc_has_compressor(cname)) {
        char have[64];
        ZARR_FAIL(ZARR_EUNSUPPORTED, "blosc: compressor '%s' is not in this c-blosc build (it has %s)", cname,
                  blosc_available(have, sizeof have));
    }
    if (clevel < 0 || clevel > 9)
        ZARR_FAIL(ZARR_EINVAL, "blosc: invalid clevel %d (want 0..9)", clevel);
    if (shuffle < 0 || shuffle > 2)
        ZARR_FAIL(ZARR_EINVAL, "blosc: invalid shuffle %d (want 0, 1 or 2)", shuffle);
    if (typesize < 1 || typesize > BLOSC_MAX_TYPESIZE)
        typesize = 1;
    ZARR_TRY(zarr_buf_reserve(out, n + BLOSC_MAX_OVERHEAD));
    r = blosc_lib_fn.blosc_compress_ctx(clevel, shuffle, typesize, n, src, out->data, n + BLOSC_MAX_OVERHEAD,
                                        cname, blocksize, 1);
    if (r <= 0)
        ZARR_FAIL(ZARR_ECODEC, "blosc: compression with '%s' failed (%d)", cname, r);
    out->size = (size_t)r;
done:
    return rc;
}

/* Validates a Blosc1 header against the buffer; *nbytes = decoded size. */
static int
blosc_check(const void *src, size_t n, size_t *nbytes)
{
    size_t cbytes = 0, blocksize = 0;
    int    rc;
    if ((rc = zarr__dynlib_load(&blosc_lib)) != ZARR_OK)
        return rc;
    if (n < BLOSC_MIN_HEADER_LENGTH)
        return zarr_error(ZARR_ECODEC, "blosc: data is truncated (%zu bytes, the header alone is %d)", n,
                          BLOSC_MIN_HEADER_LENGTH);
    blosc_lib_fn.blosc_cbuffer_sizes(src, nbytes, &cbytes, &blocksize);
    if (cbytes > n)
        return zarr_error(ZARR_ECODEC, "blosc: data is truncated (%zu bytes, the header says %zu)", n,
                          cbytes);
    if (blosc_lib_fn.blosc_cbuffer_validate(src, n, nbytes) != 0)
        return zarr_error(ZARR_ECODEC, "blosc: corrupt or unsupported header");
    {
        /* The compressor's format code is in the flags' top 3 bits. */
        static const char *const formats[] = {"blosclz", "lz4", "snappy", "zlib", "zstd"};
        size_t                   typesize  = 0;
        int                      flags     = 0;
        blosc_lib_fn.blosc_cbuffer_metainfo(src, &typesize, &flags);
        int fmt = (flags >> 5) & 7;
        if (fmt > 4)
            return zarr_error(ZARR_ECODEC, "blosc: corrupt header (unknown compressor format %d)", fmt);
        if (!(flags & BLOSC_MEMCPYED) && !zarr_blosc_has_compressor(formats[fmt])) {
            char have[64];
            return zarr_error(ZARR_EUNSUPPORTED,
                              "blosc: data is compressed with '%s', which this c-blosc "
                              "build lacks (it has %s)",
                              formats[fmt], blosc_available(have, sizeof have));
        }
    }
    return ZARR_OK;
}

int
zarr__blosc_decompress(const void *src, size_t n, void *dst, size_t dst_n)
{
    size_t nbytes = 0;
    int    rc, r;
    if ((rc = blosc_check(src, n, &nbytes)) != ZARR_OK)
        return rc;
    if (nbytes != dst_n)
        return zarr_error(ZARR_ECODEC, "blosc: data holds %zu bytes, expected %zu", nbytes, dst_n);
    if (nbytes == 0)
        return ZARR_OK;
    r = blosc_lib_fn.blosc_decompress_ctx(src, dst, dst_n, 1);
    if (r < 0 || (size_t)r != dst_n)
        return zarr_error(ZARR_ECODEC, "blosc: corrupt data (decompression returned %d, expected %zu bytes)",
                          r, dst_n);
    return ZARR_OK;
}

int
zarr__blosc_decompress_buf(const void *src, size_t n, size_t limit, zarr_buf *out)
{
    size_t nbytes = 0;
    int    rc;
    out->size = 0;
    if ((rc = blosc_check(src, n, &nbytes)) != ZARR_OK)
        return rc;
    if (nbytes > limit)
        return zarr_error(ZARR_ECODEC, "blosc: header claims %zu bytes, more than the limit of %zu", nbytes,
                          limit);
    if ((rc = zarr_buf_reserve(out, nbytes)) != ZARR_OK)
        return rc;
    if ((rc = zarr__blosc_decompress(src, n, out->data, nbytes)) != ZARR_OK)
        return rc;
    out->size = nbytes;
    return ZARR_OK;
}

/* ------------------------------------------------------------------------------------------------
 * The class
 * ------------------------------------------------------------------------------------------------ */
typedef struct blosc_cfg {
    char   cname[8];
    int    clevel;
    int    shuffle; /* 0, 1, 2 (resolved) */
    bool   shuffle_auto;
    size_t typesize;
    size_t blocksize;
} blosc_cfg;
ZARR__CODEC_CFG_FITS(blosc_cfg);

static int
blosc_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    blosc_cfg          *b = ZARR__CODEC_CFG(k, blosc_cfg);
    const char         *cname;
    struct json_object *sh = zarr__codec_cfg_get(cfg, "shuffle");
    long long           x;
    int                 rc;
    if ((rc = zarr__codec_cfg_str("blosc", cfg, "cname", p->v2style ? "lz4" : "zstd", &cname)) != ZARR_OK)
        return rc;
    if (zarr_blosc_compcode(cname) < 0)
        return zarr_error(ZARR_EMETA, "codec 'blosc': unknown 'cname' \"%s\"", cname);
    snprintf(b->cname, sizeof b->cname, "%s", cname);
    if ((rc = zarr__codec_cfg_int_range("blosc", cfg, "clevel", false, 5, 0, 9, &x)) != ZARR_OK)
        return rc;
    b->clevel = (int)x;
    if (sh && json_object_is_type(sh, json_type_string)) {
        const char *s = json_object_get_string(sh);
        b->shuffle    = zarr_blosc_shuffle_code(s);
        if (b->shuffle < 0)
            return zarr_error(
                ZARR_EMETA,
                "codec 'blosc': 'shuffle' must be \"noshuffle\", \"shuffle\" or \"bitshuffle\", "
                "got \"%s\"",
                s);
    }
    else {
        if ((rc = zarr__codec_cfg_int_range("blosc", cfg, "shuffle", false, p->v2style ? 1 : 0, -1, 2, &x)) !=
            ZARR_OK)
            return rc;
        b->shuffle_auto = x == -1;
        b->shuffle      = x == -1 ? (p->chain->typesize_default == 1 ? 2 : 1) : (int)x;
    }
    if ((rc = zarr__codec_cfg_int_range("blosc", cfg, "typesize", false,
                                        (long long)p->chain->typesize_default, 1, 1LL << 40, &x)) != ZARR_OK)
        return rc;
    b->typesize = (size_t)x;
    if ((rc = zarr__codec_cfg_int_range("blosc", cfg, "blocksize", false, 0, 0, 1LL << 40, &x)) != ZARR_OK)
        return rc;
    b->blocksize = (size_t)x;
    return ZARR_OK;
}

static int
blosc_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    const blosc_cfg *b = ZARR__CODEC_CCFG(k, blosc_cfg);
    int              rc;
    (void)c;
    if (!v2 &&
        (rc = zarr__codec_json_add(o, "typesize", json_object_new_int64((int64_t)b->typesize))) != ZARR_OK)
        return rc;
    if ((rc = zarr__codec_json_add(o, "cname", json_object_new_string(b->cname))) != ZARR_OK ||
        (rc = zarr__codec_json_add(o, "clevel", json_object_new_int(b->clevel))) != ZARR_OK)
        return rc;
    if (v2)
        rc = zarr__codec_json_add(o, "shuffle", json_object_new_int(b->shuffle_auto ? -1 : b->shuffle));
    else
        rc = zarr__codec_json_add(o, "shuffle", json_object_new_string(zarr_blosc_shuffle_name(b->shuffle)));
    if (rc == ZARR_OK)
        rc = zarr__codec_json_add(o, "blocksize", json_object_new_int64((int64_t)b->blocksize));
    return rc;
}

static int
blosc_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    const blosc_cfg *b = ZARR__CODEC_CCFG(k, blosc_cfg);
    (void)ctx;
    return zarr__blosc_compress(b->cname, b->clevel, b->shuffle, b->typesize, b->blocksize, src, n, out);
}

static int
blosc_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
             size_t dst_n)
{
    (void)k, (void)ctx;
    return zarr__blosc_decompress(src, n, dst, dst_n);
}

static int
blosc_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
                 zarr_buf *out)
{
    (void)k, (void)ctx;
    return zarr__blosc_decompress_buf(src, n, limit, out);
}

const zarr__codec_class zarr__codec_blosc = {
    .v3name     = "blosc",
    .v2id       = "blosc",
    .stage      = ZARR__STAGE_B2B,
    .flags      = ZARR__CODEC_COMPRESSOR,
    .parse      = blosc_parse,
    .to_json    = blosc_to_json,
    .encode     = blosc_encode,
    .decode     = blosc_decode,
    .decode_buf = blosc_decode_buf,
};
