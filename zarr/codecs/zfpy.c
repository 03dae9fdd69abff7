/*
 * zfpy.c: the numcodecs `zfpy` codec (v2 "zfpy", v3 "numcodecs.zfpy" after `bytes`; lossy unless
 * reversible) and its kernel (libzfp, Debian's libzfp 1.0). A chunk is one zfp stream with zfp's full
 * header (type, dims, mode), as zfpy.compress_numpy(write_header=True) writes it for the chunk's
 * array: C order, the last dim fastest (zfp's x), 1 to 4 dims, int32, int64, float32 or float64
 * elements in the host's byte order. Configuration as numcodecs 0.11 writes it: {"mode": 4 (fixed
 * accuracy) | 3 (fixed precision) | 2 (fixed rate) | 5 (reversible), "tolerance", "precision",
 * "rate"}; as in numcodecs, the mode's parameter < 0 means reversible.
 *
 * The stream is untrusted: the header's type and dims must give exactly the expected elements (or at
 * most the decode limit) before anything is allocated, and since zfp's bit reader has no bounds, the
 * chunk is copied into a zero-padded buffer as large as the most zfp can read for that field; a
 * stream that needs more bits than the chunk holds is refused as truncated.
 */
#include "codec_class.h"
#include "dynlib.h"

#include <stdlib.h>
#include <string.h>
#include "zfp_lib.h"

typedef struct zfpy_cfg {
    int    mode;
    double tolerance, rate;
    int    precision;
    int    type; /* zfp_type of the array's elements */
} zfpy_cfg;
ZARR__CODEC_CFG_FITS(zfpy_cfg);

static const char *
type_name(zfp_type t)
{
    return t == zfp_type_int32   ? "int32"
           : t == zfp_type_int64 ? "int64"
           : t == zfp_type_float ? "float32"
                                 : "float64";
}

int
zarr__zfp_compress(const zarr__zfp_params *zp, int ndim, const uint64_t *shape, const void *src, size_t n,
                   zarr_buf *out)
{
    zfp_field  *field = NULL;
    zfp_stream *zs    = NULL;
    bitstream  *bs    = NULL;
    size_t      es, maxsize, got;
    uint64_t    count = 1;
    int         rc    = ZARR_OK;
    void       *p     = (void *)(uintptr_t)src;

    out->size = 0;
    if ((rc = zarr__dynlib_load(&zarr__zfp_lib)) != ZARR_OK)
        return rc; /* before anything to close */
    es = zarr__zfp_fn.zfp_type_size((zfp_type)zp->type);
    if (ndim < 1 || ndim > 4)
        return zarr_error(ZARR_EUNSUPPORTED, "zfpy: a chunk of %d dims can't be encoded (zfp takes 1 to 4)",
                          ndim);
    for (int d = 0; d < ndim; d++)
        if (!zarr__mul_ok(count, shape[d], &count))
            return zarr_error(ZARR_EOVERFLOW, "zfpy: chunk size overflows");
    if (!es || count * es != n)
        return zarr_error(ZARR_EINVAL, "zfpy: %zu bytes are not the %llu %s elements of the chunk", n,
                          (unsigned long long)count, type_name((zfp_type)zp->type));
    if (count == 0)
        return ZARR_OK; /* an empty chunk (a zero extent) stays empty: zfp has no empty field */
    if (ndim == 1)
        field = zarr__zfp_fn.zfp_field_1d(p, (zfp_type)zp->type, (size_t)shape[0]);
    else if (ndim == 2)
        field = zarr__zfp_fn.zfp_field_2d(p, (zfp_type)zp->type, (size_t)shape[1], (size_t)shape[0]);
    else if (ndim == 3)
        field = zarr__zfp_fn.zfp_field_3d(p, (zfp_type)zp->type, (size_t)shape[2], (size_t)shape[1],
                                          (size_t)shape[0]);
    else
        field = zarr__zfp_fn.zfp_field_4d(p, (zfp_type)zp->type, (size_t)shape[3], (size_t)shape[2],
                                          (size_t)shape[1], (size_t)shape[0]);
    if (!field || !(zs = zarr__zfp_fn.zfp_stream_open(NULL)))
        ZARR_FAIL(ZARR_ENOMEM, "zfpy: out of memory");
    /* zfpy's choice: the mode's parameter when >= 0, else reversible (rates with zfp_type_none) */
    if (zp->mode == zfp_mode_fixed_accuracy && zp->tolerance >= 0)
        zarr__zfp_fn.zfp_stream_set_accuracy(zs, zp->tolerance);
    else if (zp->mode == zfp_mode_fixed_rate && zp->rate >= 0)
        zarr__zfp_fn.zfp_stream_set_rate(zs, zp->rate, zfp_type_none, (uint)ndim, zfp_false);
    else if (zp->mode == zfp_mode_fixed_precision && zp->precision >= 0)
        zarr__zfp_fn.zfp_stream_set_precision(zs, (uint)zp->precision);
    else
        zarr__zfp_fn.zfp_stream_set_reversible(zs);
    maxsize = zarr__zfp_fn.zfp_stream_maximum_size(zs, field);
    if (!maxsize)
        ZARR_FAIL(ZARR_EINVAL, "zfpy: zfp refuses these parameters");
    ZARR_TRY(zarr_buf_reserve(out, maxsize));
    if (!(bs = zarr__zfp_fn.stream_open(out->data, maxsize)))
        ZARR_FAIL(ZARR_ENOMEM, "zfpy: out of memory");
    zarr__zfp_fn.zfp_stream_set_bit_stream(zs, bs);
    zarr__zfp_fn.zfp_stream_rewind(zs);
    if (!zarr__zfp_fn.zfp_write_header(zs, field, ZFP_HEADER_FULL))
        ZARR_FAIL(ZARR_ECODEC, "zfpy: can't write the zfp header");
    if (!(got = zarr__zfp_fn.zfp_compress(zs, field)))
        ZARR_FAIL(ZARR_ECODEC, "zfpy: zfp compression failed");
    out->size = got;
done:
    zarr__zfp_fn.stream_close(bs);
    zarr__zfp_fn.zfp_stream_close(zs);
    zarr__zfp_fn.zfp_field_free(field);
    return rc;
}

/* Decodes into dst[0..dst_n) when `grow` is NULL, else into `grow` (at most `limit` bytes). `type`
 * is the element type the chain expects (0: any). */
static int
zfp_run(int type, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n, zarr_buf *grow, size_t limit)
{
    zfp_field  *field = NULL;
    zfp_stream *zs    = NULL;
    bitstream  *bs    = NULL;
    uint8_t    *pad   = NULL;
    size_t      cap, es, want, maxsize;
    uint64_t    count = 1, dims[4];
    int         rc    = ZARR_OK;

    if (n == 0 && (grow || dst_n == 0))
        return ZARR_OK; /* the empty chunk of an empty field */
    if ((rc = zarr__dynlib_load(&zarr__zfp_lib)) != ZARR_OK)
        return rc; /* before anything to close */
    /* the header: at most 2 x 64 + 52 bits; read from a zero-padded copy of the chunk's start */
    cap = (n > 64 ? n : 64) + 64;
    if (!(pad = calloc(1, cap)) || !(field = zarr__zfp_fn.zfp_field_alloc()) ||
        !(zs = zarr__zfp_fn.zfp_stream_open(NULL)))
        ZARR_FAIL(ZARR_ENOMEM, "zfpy: out of memory");
    if (n)
        memcpy(pad, src, n);
    if (!(bs = zarr__zfp_fn.stream_open(pad, cap)))
        ZARR_FAIL(ZARR_ENOMEM, "zfpy: out of memory");
    zarr__zfp_fn.zfp_stream_set_bit_stream(zs, bs);
    zarr__zfp_fn.zfp_stream_rewind(zs);
    if (n < 8 || !zarr__zfp_fn.zfp_read_header(zs, field, ZFP_HEADER_FULL))
        ZARR_FAIL(ZARR_ECODEC, "zfpy: not a zfp stream with a full header (%zu bytes)", n);
    if (type && (int)field->type != type)
        ZARR_FAIL(ZARR_ECODEC, "zfpy: the stream holds %s elements, the array %s", type_name(field->type),
                  type_name((zfp_type)type));
    if (!(es = zarr__zfp_fn.zfp_type_size(field->type)))
        ZARR_FAIL(ZARR_ECODEC, "zfpy: the stream's element type is unknown");
    dims[0] = field->nx, dims[1] = field->ny, dims[2] = field->nz, dims[3] = field->nw;
    for (int d = 0; d < 4; d++)
        if (dims[d] && !zarr__mul_ok(count, dims[d], &count))
            ZARR_FAIL(ZARR_ECODEC, "zfpy: the stream's dims overflow");
    if (!zarr__mul_ok(count, es, &count) || count > (grow ? limit : dst_n) || (!grow && count != dst_n))
        ZARR_FAIL(ZARR_ECODEC, "zfpy: the stream holds %llu x %llu x %llu x %llu %s elements, %s %zu bytes",
                  (unsigned long long)dims[0], (unsigned long long)dims[1], (unsigned long long)dims[2],
                  (unsigned long long)dims[3], type_name(field->type),
                  grow ? "more than the limit of" : "expected", grow ? limit : dst_n);
    want = (size_t)count;
    if (grow) {
        ZARR_TRY(zarr_buf_resize(grow, want));
        dst = grow->data;
    }
    /* zfp reads without bounds: give it all it can read for this field, zeros past the chunk */
    maxsize = zarr__zfp_fn.zfp_stream_maximum_size(zs, field);
    if (!maxsize || maxsize > SIZE_MAX - 128)
        ZARR_FAIL(ZARR_ECODEC, "zfpy: the stream's parameters are invalid");
    if (maxsize + 128 > cap) {
        uint8_t *np = calloc(1, maxsize + 128);
        if (!np)
            ZARR_FAIL(ZARR_ENOMEM, "zfpy: out of memory (%zu bytes)", maxsize + 128);
        memcpy(np, src, n);
        free(pad);
        pad = np;
        cap = maxsize + 128;
        zarr__zfp_fn.stream_close(bs);
        if (!(bs = zarr__zfp_fn.stream_open(pad, cap)))
            ZARR_FAIL(ZARR_ENOMEM, "zfpy: out of memory");
        zarr__zfp_fn.zfp_stream_set_bit_stream(zs, bs);
        zarr__zfp_fn.zfp_stream_rewind(zs);
        if (!zarr__zfp_fn.zfp_read_header(zs, field, ZFP_HEADER_FULL))
            ZARR_FAIL(ZARR_ECODEC, "zfpy: not a zfp stream with a full header");
    }
    zarr__zfp_fn.zfp_field_set_pointer(field, want ? dst : pad);
    if (!zarr__zfp_fn.zfp_decompress(zs, field))
        ZARR_FAIL(ZARR_ECODEC, "zfpy: corrupt zfp stream");
    if (zarr__zfp_fn.zfp_stream_compressed_size(zs) > n)
        ZARR_FAIL(ZARR_ECODEC, "zfpy: data is truncated (the stream needs %zu bytes, has %zu)",
                  zarr__zfp_fn.zfp_stream_compressed_size(zs), n);
done:
    zarr__zfp_fn.stream_close(bs);
    zarr__zfp_fn.zfp_stream_close(zs);
    zarr__zfp_fn.zfp_field_free(field);
    free(pad);
    return rc;
}

int
zarr__zfp_decompress(int type, const void *src, size_t n, void *dst, size_t dst_n)
{
    return zfp_run(type, src, n, dst, dst_n, NULL, 0);
}

int
zarr__zfp_decompress_buf(int type, const void *src, size_t n, size_t limit, zarr_buf *out)
{
    out->size = 0;
    return zfp_run(type, src, n, NULL, 0, out, limit);
}

/* ------------------------------------------------------------------------------------------------
 * The class
 * ------------------------------------------------------------------------------------------------ */
static int
zfpy_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    zfpy_cfg *z = ZARR__CODEC_CFG(k, zfpy_cfg);
    long long x;
    int       rc;
    char      e = zarr__chain_element_endian(p);
    if ((rc = zarr__codec_cfg_int("zfpy", cfg, "mode", false, zfp_mode_fixed_accuracy, &x)) != ZARR_OK)
        return rc;
    if (x < zfp_mode_fixed_rate || x > zfp_mode_reversible)
        return zarr_error(ZARR_EMETA,
                          "codec 'zfpy': 'mode' is %lld, want 2 (fixed rate), 3 (fixed precision), 4 (fixed "
                          "accuracy) or 5 (reversible)",
                          x);
    z->mode = (int)x;
    if ((rc = zarr__codec_cfg_num("zfpy", cfg, "tolerance", -1, &z->tolerance)) != ZARR_OK ||
        (rc = zarr__codec_cfg_num("zfpy", cfg, "rate", -1, &z->rate)) != ZARR_OK ||
        (rc = zarr__codec_cfg_int_range("zfpy", cfg, "precision", false, -1, -1000, 64, &x)) != ZARR_OK)
        return rc;
    z->precision = x < 0 ? -1 : (int)x;
    if (z->rate > 64)
        return zarr_error(ZARR_EMETA, "codec 'zfpy': 'rate' is %g bits per value, want at most 64", z->rate);
    if (p->chain->kind == ZARR_FLOAT && (p->chain->esize == 4 || p->chain->esize == 8))
        z->type = p->chain->esize == 4 ? zfp_type_float : zfp_type_double;
    else if (p->chain->kind == ZARR_INT && (p->chain->esize == 4 || p->chain->esize == 8))
        z->type = p->chain->esize == 4 ? zfp_type_int32 : zfp_type_int64;
    else
        return zarr_error(
            ZARR_EUNSUPPORTED,
            "codec 'zfpy': the array's data type is not one zfp encodes (int32, int64, float32, "
            "float64)");
    if (e != ZARR__HOST_ENDIAN)
        return zarr_error(ZARR_EUNSUPPORTED, "codec 'zfpy': elements stored in the other byte order than the "
                                             "host's are not supported");
    if (p->chain->ndim < 1 || p->chain->ndim > 4)
        return zarr_error(ZARR_EUNSUPPORTED,
                          "codec 'zfpy': arrays of %d dims are not supported (zfp takes 1 to 4)",
                          p->chain->ndim);
    return ZARR_OK;
}

static int
zfpy_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    const zfpy_cfg     *z  = ZARR__CODEC_CCFG(k, zfpy_cfg);
    struct json_object *kw = json_object_new_object();
    int                 rc;
    (void)c, (void)v2;
    if ((rc = zarr__codec_json_add(o, "mode", json_object_new_int(z->mode))) != ZARR_OK ||
        (rc = zarr__codec_json_add(o, "compression_kwargs", kw)) != ZARR_OK)
        return rc;
    if (z->mode == zfp_mode_fixed_accuracy)
        rc = zarr__codec_json_add(kw, "tolerance", json_object_new_double(z->tolerance));
    else if (z->mode == zfp_mode_fixed_rate)
        rc = zarr__codec_json_add(kw, "rate", json_object_new_double(z->rate));
    else if (z->mode == zfp_mode_fixed_precision)
        rc = zarr__codec_json_add(kw, "precision", json_object_new_int(z->precision));
    if (rc == ZARR_OK &&
        (rc = zarr__codec_json_add(o, "tolerance", json_object_new_double(z->tolerance))) == ZARR_OK &&
        (rc = zarr__codec_json_add(o, "rate", json_object_new_double(z->rate))) == ZARR_OK)
        rc = zarr__codec_json_add(o, "precision", json_object_new_int(z->precision));
    return rc;
}

static int
zfpy_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    const zfpy_cfg  *z  = ZARR__CODEC_CCFG(k, zfpy_cfg);
    zarr__zfp_params zp = {z->mode, z->tolerance, z->rate, z->precision, z->type};
    if (!ctx || !ctx->chunk_shape)
        return zarr_error(ZARR_EINVAL, "zfpy: no chunk shape to encode with");
    return zarr__zfp_compress(&zp, ctx->chunk_ndim, ctx->chunk_shape, src, n, out);
}

static int
zfpy_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
            size_t dst_n)
{
    (void)ctx;
    return zarr__zfp_decompress(ZARR__CODEC_CCFG(k, zfpy_cfg)->type, src, n, dst, dst_n);
}

static int
zfpy_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
                zarr_buf *out)
{
    (void)ctx;
    return zarr__zfp_decompress_buf(ZARR__CODEC_CCFG(k, zfpy_cfg)->type, src, n, limit, out);
}

const zarr__codec_class zarr__codec_zfpy = {
    .v3name     = "numcodecs.zfpy",
    .v2id       = "zfpy",
    .stage      = ZARR__STAGE_B2B,
    .flags      = ZARR__CODEC_COMPRESSOR | ZARR__CODEC_SHAPED,
    .parse      = zfpy_parse,
    .to_json    = zfpy_to_json,
    .encode     = zfpy_encode,
    .decode     = zfpy_decode,
    .decode_buf = zfpy_decode_buf,
};
