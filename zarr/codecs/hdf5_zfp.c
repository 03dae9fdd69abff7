/*
 * hdf5_zfp.c: h5zarr's `hdf5_zfp` codec (v3 name and v2 id) and its kernel (libzfp): the chunk bytes
 * of the H5Z-ZFP HDF5 filter (registered filter 32013, LLNL's plugin and h5zarr's
 * libh5zarr_zfp.so): a zfp stream without a header, the header (type, dims, mode) being in the
 * filter's cd_values. Those are the codec's configuration, {"cd_values": [...]}, in the form H5Z-ZFP
 * keeps in a file: [0] its version word, [1..] zfp's full header as a bit stream of 32-bit words.
 * Chunks move unchanged between .h5 files and stores; zfpy's chunks carry the header in the chunk
 * instead, so the two do not share bytes (docs/FORMAT.md). Other zarr readers do not know it.
 *
 * H5Z-ZFP's "generic" cd_values (what H5Pset_filter callers pass: [0] mode 1 rate, 2 precision, 3
 * accuracy, 4 expert, 5 reversible, then its parameters) are turned into that form for a chunk shape
 * and type by zarr_h5zfp_cd_from_generic (public: h5zarr/zarr_filters.h), as the filter's set_local does.
 */
#include "codec_class.h"
#include "dynlib.h"

#include <stdlib.h>
#include <string.h>
#include "zfp_lib.h"

#define H5ZFP_VERSION_WORD 0x10005110u /* H5Z-ZFP 1.1.0, zfp 1.0.0, codec 5 */
#define H5ZFP_MAX_CD       ZARR_H5ZFP_MAX_CD

/* Opens a zfp stream over the header bits of cd[1..ncd) and reads it into (zs, field). */
static int
read_cd_header(const unsigned *cd, size_t ncd, zfp_stream **zs, zfp_field **field, bitstream **bs,
               uint64_t words[H5ZFP_MAX_CD])
{
    memset(words, 0, H5ZFP_MAX_CD * sizeof *words);
    if (ncd < 2 || ncd > H5ZFP_MAX_CD)
        return zarr_error(ZARR_EMETA, "hdf5_zfp: %zu cd_values, want 2..%d (the H5Z-ZFP header form)", ncd,
                          H5ZFP_MAX_CD);
    for (size_t i = 1; i < ncd; i++) /* 32-bit words in memory order, as the filter wrote them */
        memcpy((uint8_t *)words + 4 * (i - 1), &cd[i], 4);
    if (!(*field = zarr__zfp_fn.zfp_field_alloc()) || !(*zs = zarr__zfp_fn.zfp_stream_open(NULL)) ||
        !(*bs = zarr__zfp_fn.stream_open(words, H5ZFP_MAX_CD * sizeof *words)))
        return zarr_error(ZARR_ENOMEM, "hdf5_zfp: out of memory");
    zarr__zfp_fn.zfp_stream_set_bit_stream(*zs, *bs);
    zarr__zfp_fn.zfp_stream_rewind(*zs);
    if (!zarr__zfp_fn.zfp_read_header(*zs, *field, ZFP_HEADER_FULL))
        return zarr_error(ZARR_EMETA,
                          "hdf5_zfp: 'cd_values' hold no zfp header (H5Z-ZFP's form: a version word, "
                          "then the header)");
    return ZARR_OK;
}

static uint64_t
field_count(const zfp_field *f)
{
    uint64_t n    = 1;
    size_t   d[4] = {f->nx, f->ny, f->nz, f->nw};
    for (int i = 0; i < 4; i++)
        if (d[i] && !zarr__mul_ok(n, d[i], &n))
            return 0;
    return n;
}

/* Everything a chunk needs from cd_values: checks the element type (zfp_type, 0 = any). */
int
zarr__h5zfp_check(const unsigned *cd, size_t ncd, int type, size_t *elements)
{
    zfp_stream *zs = NULL;
    zfp_field  *fl = NULL;
    bitstream  *bs = NULL;
    uint64_t    words[H5ZFP_MAX_CD], n;
    int         rc;

    if ((rc = zarr__dynlib_load(&zarr__zfp_lib)) != ZARR_OK)
        return rc; /* before anything to close */
    rc = read_cd_header(cd, ncd, &zs, &fl, &bs, words);
    if (rc == ZARR_OK && type && (int)fl->type != type)
        rc = zarr_error(ZARR_EMETA,
                        "hdf5_zfp: the header in 'cd_values' is for zfp type %d, the array's is %d",
                        (int)fl->type, type);
    if (rc == ZARR_OK && (!(n = field_count(fl)) || n > SIZE_MAX / 8))
        rc = zarr_error(ZARR_EMETA, "hdf5_zfp: the header in 'cd_values' has no valid dims");
    if (rc == ZARR_OK && elements)
        *elements = (size_t)n;
    zarr__zfp_fn.stream_close(bs);
    zarr__zfp_fn.zfp_stream_close(zs);
    zarr__zfp_fn.zfp_field_free(fl);
    return rc;
}

int
zarr__h5zfp_compress(const unsigned *cd, size_t ncd, const void *src, size_t n, zarr_buf *out)
{
    zfp_stream *zs = NULL;
    zfp_field  *fl = NULL;
    bitstream  *bs = NULL, *obs = NULL;
    uint64_t    words[H5ZFP_MAX_CD];
    size_t      maxsize, got;
    int         rc;

    out->size = 0;
    if ((rc = zarr__dynlib_load(&zarr__zfp_lib)) != ZARR_OK)
        return rc; /* before anything to close */
    ZARR_TRY(read_cd_header(cd, ncd, &zs, &fl, &bs, words));
    if (field_count(fl) * zarr__zfp_fn.zfp_type_size(fl->type) != n)
        ZARR_FAIL(ZARR_EINVAL, "hdf5_zfp: a chunk of %zu bytes is not the %llu elements the header names", n,
                  (unsigned long long)field_count(fl));
    if (n == 0)
        goto done;
    zarr__zfp_fn.zfp_field_set_pointer(fl, (void *)(uintptr_t)src);
    if (!(maxsize = zarr__zfp_fn.zfp_stream_maximum_size(zs, fl)))
        ZARR_FAIL(ZARR_EINVAL, "hdf5_zfp: zfp refuses the header's parameters");
    ZARR_TRY(zarr_buf_reserve(out, maxsize));
    if (!(obs = zarr__zfp_fn.stream_open(out->data, maxsize)))
        ZARR_FAIL(ZARR_ENOMEM, "hdf5_zfp: out of memory");
    zarr__zfp_fn.zfp_stream_set_bit_stream(zs, obs);
    zarr__zfp_fn.zfp_stream_rewind(zs);
    if (!(got = zarr__zfp_fn.zfp_compress(zs, fl)))
        ZARR_FAIL(ZARR_ECODEC, "hdf5_zfp: zfp compression failed");
    out->size = got;
done:
    zarr__zfp_fn.stream_close(obs);
    zarr__zfp_fn.stream_close(bs);
    zarr__zfp_fn.zfp_stream_close(zs);
    zarr__zfp_fn.zfp_field_free(fl);
    return rc;
}

/* Into dst[0..dst_n) (grow NULL) or grow (at most limit). zfp reads without bounds: it decodes from a
 * zero-padded copy as large as the most it can read for the header's field. */
static int
h5zfp_run(const unsigned *cd, size_t ncd, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n,
          zarr_buf *grow, size_t limit)
{
    zfp_stream *zs = NULL;
    zfp_field  *fl = NULL;
    bitstream  *bs = NULL, *cbs = NULL;
    uint8_t    *pad = NULL;
    uint64_t    words[H5ZFP_MAX_CD], want;
    size_t      maxsize;
    int         rc;

    if ((rc = zarr__dynlib_load(&zarr__zfp_lib)) != ZARR_OK)
        return rc; /* before anything to close */
    ZARR_TRY(read_cd_header(cd, ncd, &zs, &fl, &bs, words));
    want = field_count(fl) * zarr__zfp_fn.zfp_type_size(fl->type);
    if (!want || want > (grow ? limit : dst_n) || (!grow && want != dst_n))
        ZARR_FAIL(ZARR_ECODEC, "hdf5_zfp: the header names %llu bytes of elements, %s %zu",
                  (unsigned long long)want, grow ? "more than the limit of" : "expected",
                  grow ? limit : dst_n);
    if (grow) {
        ZARR_TRY(zarr_buf_resize(grow, (size_t)want));
        dst = grow->data;
    }
    if (!(maxsize = zarr__zfp_fn.zfp_stream_maximum_size(zs, fl)) || maxsize > SIZE_MAX - 128)
        ZARR_FAIL(ZARR_ECODEC, "hdf5_zfp: the header's parameters are invalid");
    if (!(pad = calloc(1, (n > maxsize ? n : maxsize) + 128)))
        ZARR_FAIL(ZARR_ENOMEM, "hdf5_zfp: out of memory");
    if (n)
        memcpy(pad, src, n);
    if (!(cbs = zarr__zfp_fn.stream_open(pad, (n > maxsize ? n : maxsize) + 128)))
        ZARR_FAIL(ZARR_ENOMEM, "hdf5_zfp: out of memory");
    zarr__zfp_fn.zfp_stream_set_bit_stream(zs, cbs);
    zarr__zfp_fn.zfp_stream_rewind(zs);
    zarr__zfp_fn.zfp_field_set_pointer(fl, dst);
    if (!zarr__zfp_fn.zfp_decompress(zs, fl))
        ZARR_FAIL(ZARR_ECODEC, "hdf5_zfp: corrupt zfp stream");
    if (zarr__zfp_fn.zfp_stream_compressed_size(zs) > n)
        ZARR_FAIL(ZARR_ECODEC, "hdf5_zfp: data is truncated (the stream needs %zu bytes, has %zu)",
                  zarr__zfp_fn.zfp_stream_compressed_size(zs), n);
done:
    zarr__zfp_fn.stream_close(cbs);
    zarr__zfp_fn.stream_close(bs);
    zarr__zfp_fn.zfp_stream_close(zs);
    zarr__zfp_fn.zfp_field_free(fl);
    free(pad);
    return rc;
}

int
zarr__h5zfp_decompress(const unsigned *cd, size_t ncd, const void *src, size_t n, void *dst, size_t dst_n)
{
    return h5zfp_run(cd, ncd, src, n, dst, dst_n, NULL, 0);
}

int
zarr__h5zfp_decompress_buf(const unsigned *cd, size_t ncd, const void *src, size_t n, size_t limit,
                           zarr_buf *out)
{
    out->size = 0;
    return h5zfp_run(cd, ncd, src, n, NULL, 0, out, limit);
}

int
zarr_h5zfp_cd_from_generic(const unsigned *gen, size_t ngen, int type, int ndim, const uint64_t *shape,
                           unsigned *cd, size_t *ncd)
{
    zfp_stream *zs                  = NULL;
    zfp_field  *fl                  = NULL;
    bitstream  *bs                  = NULL;
    uint64_t    words[H5ZFP_MAX_CD] = {0};
    uint64_t    dims[4]             = {1, 1, 1, 1};
    int         nd = 0, rc = ZARR_OK;
    size_t      bits;
    double      dv;

    if ((!gen && ngen) || (!shape && ndim) || !cd || !ncd || ndim < 0 || ndim > 32)
        return zarr_error(ZARR_EINVAL, "hdf5_zfp: bad arguments (NULL buffers or %d dims)", ndim);
    if (type < 1 || type > 4)
        return zarr_error(ZARR_EINVAL, "hdf5_zfp: zfp type %d, want 1 int32, 2 int64, 3 float or 4 double",
                          type);
    if (ngen < 1 || gen[0] < 1 || gen[0] > 5)
        return zarr_error(ZARR_EINVAL,
                          "hdf5_zfp: cd_values[0] (mode) is %u, want 1 rate, 2 precision, 3 accuracy, "
                          "4 expert or 5 reversible",
                          ngen ? gen[0] : 0);
    if ((rc = zarr__dynlib_load(&zarr__zfp_lib)) != ZARR_OK)
        return rc;                      /* before anything to close */
    for (int d = ndim - 1; d >= 0; d--) /* zfp's x is the last dim; dims of 1 left out, as H5Z-ZFP does */
        if (shape[d] > 1) {
            if (nd == 4)
                return zarr_error(ZARR_EUNSUPPORTED,
                                  "hdf5_zfp: chunks with more than 4 dims of extent > 1 can't be encoded");
            dims[nd++] = shape[d];
        }
    if (!nd)
        nd = 1;
    fl = nd == 1   ? zarr__zfp_fn.zfp_field_1d(NULL, (zfp_type)type, dims[0])
         : nd == 2 ? zarr__zfp_fn.zfp_field_2d(NULL, (zfp_type)type, dims[0], dims[1])
         : nd == 3 ? zarr__zfp_fn.zfp_field_3d(NULL, (zfp_type)type, dims[0], dims[1], dims[2])
                   : zarr__zfp_fn.zfp_field_4d(NULL, (zfp_type)type, dims[0], dims[1], dims[2], dims[3]);
    if (!fl || !(zs = zarr__zfp_fn.zfp_stream_open(NULL)) ||
        !(bs = zarr__zfp_fn.stream_open(words, sizeof words)))
        ZARR_FAIL(ZARR_ENOMEM, "hdf5_zfp: out of memory");
    zarr__zfp_fn.zfp_stream_set_bit_stream(zs, bs);
    switch (gen[0]) {
        case 1:
        case 3:
            if (ngen < 4)
                ZARR_FAIL(ZARR_EINVAL, "hdf5_zfp: mode %u needs a double in cd_values[2..3]", gen[0]);
            memcpy(&dv, &gen[2], 4);
            memcpy((uint8_t *)&dv + 4, &gen[3], 4);
            if (gen[0] == 1)
                zarr__zfp_fn.zfp_stream_set_rate(zs, dv, (zfp_type)type, (uint)nd, zfp_false);
            else
                zarr__zfp_fn.zfp_stream_set_accuracy(zs, dv);
            break;
        case 2:
            if (ngen < 3)
                ZARR_FAIL(ZARR_EINVAL, "hdf5_zfp: mode 2 needs the precision in cd_values[2]");
            zarr__zfp_fn.zfp_stream_set_precision(zs, gen[2]);
            break;
        case 4:
            if (ngen < 6 || !zarr__zfp_fn.zfp_stream_set_params(zs, gen[2], gen[3], gen[4], (int)gen[5]))
                ZARR_FAIL(ZARR_EINVAL,
                          "hdf5_zfp: mode 4 (expert) needs valid minbits, maxbits, maxprec, minexp in "
                          "cd_values[2..5]");
            break;
        default:
            zarr__zfp_fn.zfp_stream_set_reversible(zs);
            break;
    }
    zarr__zfp_fn.zfp_stream_rewind(zs);
    if (!(bits = zarr__zfp_fn.zfp_write_header(zs, fl, ZFP_HEADER_FULL)))
        ZARR_FAIL(ZARR_EINVAL, "hdf5_zfp: zfp can't write a header for these parameters");
    zarr__zfp_fn.zfp_stream_flush(zs);
    cd[0] = H5ZFP_VERSION_WORD;
    *ncd  = 1 + (bits + 31) / 32;
    for (size_t i = 1; i < *ncd; i++)
        memcpy(&cd[i], (uint8_t *)words + 4 * (i - 1), 4);
done:
    zarr__zfp_fn.stream_close(bs);
    zarr__zfp_fn.zfp_stream_close(zs);
    zarr__zfp_fn.zfp_field_free(fl);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * The class
 * ------------------------------------------------------------------------------------------------ */
typedef struct h5zfp_cfg {
    unsigned cd[H5ZFP_MAX_CD];
    size_t   ncd;
} h5zfp_cfg;
ZARR__CODEC_CFG_FITS(h5zfp_cfg);

static int
h5zfp_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    h5zfp_cfg          *z = ZARR__CODEC_CFG(k, h5zfp_cfg);
    struct json_object *l = zarr__codec_cfg_get(cfg, "cd_values");
    int                 type;
    const zarr_chain   *c = p->chain;
    if (!l || !json_object_is_type(l, json_type_array))
        return zarr_error(ZARR_EMETA, "codec 'hdf5_zfp': 'cd_values' must be a list of integers");
    z->ncd = json_object_array_length(l);
    if (z->ncd < 2 || z->ncd > H5ZFP_MAX_CD)
        return zarr_error(ZARR_EMETA, "codec 'hdf5_zfp': 'cd_values' has %zu entries, want 2..%d", z->ncd,
                          H5ZFP_MAX_CD);
    for (size_t i = 0; i < z->ncd; i++) {
        struct json_object *e = json_object_array_get_idx(l, i);
        int64_t             v = json_object_is_type(e, json_type_int) ? json_object_get_int64(e) : -1;
        if (v < 0 || v > UINT32_MAX)
            return zarr_error(ZARR_EMETA,
                              "codec 'hdf5_zfp': 'cd_values' entry %zu is not an integer 0..4294967295", i);
        z->cd[i] = (unsigned)v;
    }
    if (c->kind == ZARR_FLOAT && (c->esize == 4 || c->esize == 8))
        type = c->esize == 4 ? zfp_type_float : zfp_type_double;
    else if (c->kind == ZARR_INT && (c->esize == 4 || c->esize == 8))
        type = c->esize == 4 ? zfp_type_int32 : zfp_type_int64;
    else
        return zarr_error(
            ZARR_EUNSUPPORTED,
            "codec 'hdf5_zfp': the array's data type is not one zfp encodes (int32, int64, float32, "
            "float64)");
    if (zarr__chain_element_endian(p) != ZARR__HOST_ENDIAN)
        return zarr_error(ZARR_EUNSUPPORTED,
                          "codec 'hdf5_zfp': elements stored in the other byte order than the "
                          "host's are not supported");
    return zarr__h5zfp_check(z->cd, z->ncd, type, NULL);
}

static int
h5zfp_to_json(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    const h5zfp_cfg    *z = ZARR__CODEC_CCFG(k, h5zfp_cfg);
    struct json_object *a = json_object_new_array();
    int                 rc;
    (void)c, (void)v2;
    if ((rc = zarr__codec_json_add(o, "cd_values", a)) != ZARR_OK)
        return rc;
    for (size_t i = 0; i < z->ncd; i++)
        if (json_object_array_add(a, json_object_new_int64(z->cd[i])) != 0)
            return zarr_error(ZARR_ENOMEM, "out of memory building codec JSON");
    return ZARR_OK;
}

static int
h5zfp_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    const h5zfp_cfg *z = ZARR__CODEC_CCFG(k, h5zfp_cfg);
    (void)ctx;
    return zarr__h5zfp_compress(z->cd, z->ncd, src, n, out);
}

static int
h5zfp_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
             size_t dst_n)
{
    const h5zfp_cfg *z = ZARR__CODEC_CCFG(k, h5zfp_cfg);
    (void)ctx;
    return zarr__h5zfp_decompress(z->cd, z->ncd, src, n, dst, dst_n);
}

static int
h5zfp_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
                 zarr_buf *out)
{
    const h5zfp_cfg *z = ZARR__CODEC_CCFG(k, h5zfp_cfg);
    (void)ctx;
    return zarr__h5zfp_decompress_buf(z->cd, z->ncd, src, n, limit, out);
}

const zarr__codec_class zarr__codec_hdf5_zfp = {
    .v3name     = "hdf5_zfp",
    .v2id       = "hdf5_zfp",
    .stage      = ZARR__STAGE_B2B,
    .flags      = ZARR__CODEC_COMPRESSOR | ZARR__CODEC_NO_ALIAS,
    .parse      = h5zfp_parse,
    .to_json    = h5zfp_to_json,
    .encode     = h5zfp_encode,
    .decode     = h5zfp_decode,
    .decode_buf = h5zfp_decode_buf,
};
