/*
 * filter.c: the mapping between HDF5 filter pipelines and zarr codec chains, both ways, as one table
 * (filter_rows[]: per HDF5 filter its id, the codec names it stands for, and the conversions each way;
 * the ids are h5zarr/zarr_filters.h's ZARR_H5Z_*, blosc's names and codes its zarr_blosc_*). A codec with
 * an HDF5 filter is one row here.
 *
 * Create (h5zv_filters_to_chain): each filter of the dcpl, in pipeline order, becomes the zarr codec
 * whose chunk bytes are the same bytes the HDF5 filter writes in a native file (deflate: the same
 * format, not the same bytes, as the core compresses with libdeflate where HDF5 uses zlib):
 *   deflate (1)      -> numcodecs.zlib {level}            (v2 "zlib"; a zlib stream, as HDF5 writes)
 *   shuffle (2)      -> numcodecs.shuffle {elementsize}   (element size = the type's size, as HDF5)
 *   fletcher32 (3)   -> numcodecs.fletcher32              (4 little-endian bytes appended, as HDF5)
 *   blosc (32001)    -> blosc {cname, clevel, shuffle, typesize, blocksize 0} (hdf5-blosc cd_values)
 *   zstd (32015)     -> zstd {level, checksum false}      (cd_values[0] = level, signed bit pattern)
 *   lz4 (32004)      -> hdf5_lz4 {blocksize}              (cd_values[0]; h5zarr's codec, HDF5's framing)
 *   szip (4)         -> hdf5_szip {options_mask, pixels_per_block, bits_per_pixel, pixels_per_scanline}
 *                       (the 4 cd_values set_local makes, computed here; h5zarr's codec, HDF5's framing)
 *   zfp (32013)      -> hdf5_zfp {cd_values}              (H5Z-ZFP's kept form; h5zarr's codec, same bytes)
 *   lzf (32000)      -> lzf                               (h5py's filter; h5zarr's codec, the same bytes)
 *   bzip2 (307)      -> numcodecs.bz2 {level}             (v2 "bz2"; cd_values[0] = block size 1..9, 9 if
 *                       none, as netCDF's bzip2 filter; one bzip2 stream)
 *   scaleoffset (6)  -> hdf5_scaleoffset {cd_values}      (the 20 cd_values set_local makes, computed here;
 *                       h5zarr's codec, HDF5's format, after `bytes` in the dataset's byte order)
 * An optional filter (H5Z_FLAG_OPTIONAL) with no codec that HDF5 itself can't apply either (no H5Z class
 * registered: h5py's allow_unknown_filter) gets no codec and the chunks are plain, as HDF5 skips such a
 * filter at H5Dcreate and at every chunk (H5Z.c:781, H5Z_pipeline); the dcpl record (`_h5zarr.dcpl`
 * filters) keeps it, and the dcpl reports it on open (h5zv_filters_add_left_out). Everything else (nbit 5,
 * bitshuffle 32008 or any filter without a codec when registered, unknown mandatory ids) fails
 * at H5Dcreate with a message naming the filter and a lossless alternative, also when optional: HDF5 would
 * apply such a filter (HDF5 marks its own deflate, shuffle, n-bit and scale-offset optional), so leaving
 * it out would store other values than a native file reads back (n-bit is lossy), and
 * applying it would make chunks no zarr reader can decode. The environment variable
 * H5ZARR_UNSUPPORTED_FILTER=substitute:<zstd|zlib|blosc|none> drops such filters instead and, when
 * that leaves the chain without a compressor, appends the named one (zstd level 3, zlib level 6, blosc
 * zstd clevel 5 byte-shuffle; none appends nothing).
 *
 * Open (h5zv_filters_from_chain): each bytes->bytes codec with an HDF5 filter is set on the dcpl with
 * the cd_values a native file reports after H5Dcreate (set_local filled in), so H5Pget_filter2,
 * h5dump -p and netCDF's nc_inq_var_filter show them; gzip (a gzip container around the same DEFLATE
 * data) reports deflate. Codecs without an HDF5 filter (crc32c, numcodecs.lz4, transposes, array->bytes
 * codecs) are skipped; sharding reports the filters of its inner codecs.
 *
 * hdf5_lz4 keeps only the block size, but HDF5 keeps every cd_value it was given (the lz4 filter reads
 * only the first). So that H5Pget_filter2 after reopen shows exactly what H5Dcreate got, the lz4 entry
 * of the dcpl persisted in `_h5zarr.dcpl` (flags and all cd_values) is reported when its block size is
 * the codec's; otherwise (other writers, or the codec was edited) {blocksize}, mandatory.
 *
 * Filters left out at create are put back at their places in the recorded pipeline (filters with codecs
 * come from the chain, in order); a recorded filter without a codec that is mandatory is refused.
 */
#include "h5zv.h"
#include "reserved.h"
#include "h5zarr/zarr_filters.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#define H5ZV_MAX_CD 32

/* ---- reading codec configurations --------------------------------------------------------- */

static long long
cfg_int(struct json_object *cfg, const char *key, long long dflt)
{
    struct json_object *v;
    if (cfg && json_object_object_get_ex(cfg, key, &v) && json_object_is_type(v, json_type_int))
        return json_object_get_int64(v);
    return dflt;
}

static const char *
cfg_str(struct json_object *cfg, const char *key)
{
    struct json_object *v;
    if (cfg && json_object_object_get_ex(cfg, key, &v) && json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return NULL;
}

/* The flags and cd_values of lz4 filter number `nth` (counting lz4 filters only, from 0) of the dcpl
 * persisted in `_h5zarr.dcpl`, when that filter's block size (cd_values[0], 0 when it has none) is
 * `blocksize`. Returns its number of cd_values (into `cd`, at most H5ZV_MAX_CD), or -1 when there is
 * no such filter (no persisted dcpl, other filters, another block size, too many cd_values). */
static int
persisted_lz4(const zarr_array_meta *m, int nth, unsigned blocksize, unsigned *flags, unsigned *cd)
{
    struct json_object *meta = NULL, *v = NULL;
    hid_t               dcpl = H5I_INVALID_HID;
    int                 n, seen = 0, ret = -1;

    if (!(meta = m->reserved) || !json_object_is_type(meta, json_type_object) ||
        !json_object_object_get_ex(meta, "dcpl", &v))
        goto done;
    H5E_BEGIN_TRY
    {
        /* the JSON form (vol/reserved.h; an invalid one is reported by H5Dget_create_plist; the
         * earlier base64 form is never decoded here) */
        if (json_object_is_type(v, json_type_object))
            h5zv_dcpl_filters_from_json(v, H5ZV_META_KEY ".dcpl", &dcpl);
    }
    H5E_END_TRY
    if (dcpl < 0 || (n = H5Pget_nfilters(dcpl)) < 0)
        goto done;
    for (int i = 0; i < n; i++) {
        size_t   ncd = H5ZV_MAX_CD;
        unsigned fl  = 0;
        if (H5Pget_filter2(dcpl, (unsigned)i, &fl, &ncd, cd, 0, NULL, NULL) != ZARR_H5Z_LZ4 || seen++ < nth)
            continue;
        if (ncd <= H5ZV_MAX_CD && (ncd > 0 ? cd[0] : 0) == blocksize) {
            *flags = fl;
            ret    = (int)ncd;
        }
        break;
    }
done:
    h5zv_close(dcpl);
    return ret;
}

/* ---- the table: one row per HDF5 filter with a zarr codec ------------------------------------ */

/* What a row's to_codec is given: the filter's cd_values (at most H5ZV_MAX_CD) at H5Dcreate. */
typedef struct filter_in {
    hid_t           dcpl_id;
    hid_t           type_id;
    const char     *path;
    size_t          ncd;
    const unsigned *cd;
} filter_in;

typedef struct filter_row {
    H5Z_filter_t id;
    const char  *codecs[4]; /* the v3 names (as zarr_chain_codec_json writes them) reported as this
                               filter, NULL-terminated */
    bool compressor;        /* it compresses (H5ZARR_UNSUPPORTED_FILTER appends one when none does) */
    /* The v3 codec JSON text for the filter into js[0..n); -1 with an error pushed. */
    int (*to_codec)(const filter_in *f, char *js, size_t n);
    /* Sets the filter for the codec's configuration `cfg` (borrowed, may be NULL) on the dcpl, with the
     * cd_values a native file reports after H5Dcreate; -1 with an error pushed. */
    int (*to_filter)(const zarr_array_meta *m, struct json_object *cfg, hid_t dcpl, int *nlz4);
} filter_row;

static int
deflate_to_codec(const filter_in *f, char *js, size_t n)
{
    if (f->ncd != 1 || f->cd[0] > 9) {
        h5zv_err_push(
            __func__, __LINE__,
            "can't create dataset '/%s': deflate filter needs one cd_value, the level 0..9 (got %zu "
            "value(s)%s)",
            f->path, f->ncd, f->ncd ? ", first out of range" : "");
        return -1;
    }
    snprintf(js, n, "{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":%u}}", f->cd[0]);
    return 0;
}

static int
deflate_to_filter(const zarr_array_meta *m, struct json_object *cfg, hid_t dcpl, int *nlz4)
{
    long long level = cfg_int(cfg, "level", 6);
    unsigned  cd[1] = {level < 0 || level > 9 ? 6 : (unsigned)level}; /* zlib's -1 is its level 6 */
    (void)m, (void)nlz4;
    if (H5Pset_filter(dcpl, H5Z_FILTER_DEFLATE, H5Z_FLAG_OPTIONAL, 1, cd) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't report the deflate filter in the dcpl");
        return -1;
    }
    return 0;
}

static int
shuffle_to_codec(const filter_in *f, char *js, size_t n)
{
    /* HDF5's set_local always sets the element size to the type's size */
    snprintf(js, n, "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":%zu}}",
             H5Tget_size(f->type_id));
    return 0;
}

static int
shuffle_to_filter(const zarr_array_meta *m, struct json_object *cfg, hid_t dcpl, int *nlz4)
{
    unsigned cd[1] = {(unsigned)cfg_int(cfg, "elementsize", (long long)m->dtype->size)};
    (void)nlz4;
    if (H5Pset_filter(dcpl, H5Z_FILTER_SHUFFLE, H5Z_FLAG_OPTIONAL, 1, cd) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't report the shuffle filter in the dcpl");
        return -1;
    }
    return 0;
}

static int
fletcher32_to_codec(const filter_in *f, char *js, size_t n)
{
    (void)f;
    snprintf(js, n, "{\"name\":\"numcodecs.fletcher32\",\"configuration\":{}}");
    return 0;
}

static int
fletcher32_to_filter(const zarr_array_meta *m, struct json_object *cfg, hid_t dcpl, int *nlz4)
{
    (void)m, (void)cfg, (void)nlz4;
    if (H5Pset_filter(dcpl, H5Z_FILTER_FLETCHER32, H5Z_FLAG_MANDATORY, 0, NULL) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't report the fletcher32 filter in the dcpl");
        return -1;
    }
    return 0;
}

/* hdf5-blosc's cd_values: [2] type size, [4] clevel, [5] shuffle, [6] compressor code
 * (zarr_blosc_compname's codes). */
static int
blosc_to_codec(const filter_in *f, char *js, size_t n)
{
    unsigned typesize = f->ncd > 2 && f->cd[2] ? f->cd[2] : h5zv_filter_blosc_typesize(f->type_id);
    unsigned clevel = f->ncd > 4 ? f->cd[4] : 5, shuffle = f->ncd > 5 ? f->cd[5] : 1,
             code = f->ncd > 6 ? f->cd[6] : 0;
    if (clevel > 9 || !zarr_blosc_shuffle_name((int)shuffle) || !zarr_blosc_compname((int)code)) {
        h5zv_err_push(
            __func__, __LINE__,
            "can't create dataset '/%s': blosc filter (32001) cd_values out of range (clevel %u want "
            "0..9, shuffle %u want 0..%d, compressor %u want 0..%d)",
            f->path, clevel, shuffle, ZARR_BLOSC_NSHUFFLE - 1, code, ZARR_BLOSC_NCOMP - 1);
        return -1;
    }
    if (zarr_blosc_check_compressor(zarr_blosc_compname((int)code)) != ZARR_OK) {
        h5zv_err_push(__func__, __LINE__,
                      "can't create dataset '/%s': blosc filter (32001) compressor %u: %s; use lz4 (1), zstd "
                      "(5) or zlib (4)",
                      f->path, code, zarr_errmsg());
        return -1;
    }
    snprintf(js, n,
             "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"%s\",\"clevel\":%u,\"shuffle\":\"%s\","
             "\"typesize\":%u,\"blocksize\":0}}",
             zarr_blosc_compname((int)code), clevel, zarr_blosc_shuffle_name((int)shuffle), typesize);
    return 0;
}

static int
blosc_to_filter(const zarr_array_meta *m, struct json_object *cfg, hid_t dcpl, int *nlz4)
{
    const char *cname = cfg_str(cfg, "cname"), *sh = cfg_str(cfg, "shuffle");
    long long   typesize = cfg_int(cfg, "typesize", (long long)m->dtype->size);
    uint64_t    chunk    = m->dtype->size;
    int         code = zarr_blosc_compcode(cname), shuffle = zarr_blosc_shuffle_code(sh);
    unsigned    cd[7];
    (void)nlz4;
    for (int d = 0; d < m->ndim; d++)
        chunk *= m->chunks[d];
    cd[0] = 2; /* hdf5-blosc filter revision */
    cd[1] = ZARR_BLOSC_VERSION_FORMAT;
    cd[2] = typesize < 1 ? 1 : zarr_blosc_typesize((size_t)typesize);
    cd[3] = chunk > UINT32_MAX ? 0 : (unsigned)chunk;
    cd[4] = (unsigned)cfg_int(cfg, "clevel", 5);
    cd[5] = shuffle < 0 ? 1 : (unsigned)shuffle; /* v3 configuration: a name; byte shuffle when absent */
    cd[6] = code < 0 ? 0 : (unsigned)code;
    if (H5Pset_filter(dcpl, ZARR_H5Z_BLOSC, H5Z_FLAG_MANDATORY, 7, cd) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't report the blosc filter (32001) in the dcpl");
        return -1;
    }
    return 0;
}

static int
zstd_to_codec(const filter_in *f, char *js, size_t n)
{
    snprintf(js, n, "{\"name\":\"zstd\",\"configuration\":{\"level\":%d,\"checksum\":false}}",
             f->ncd > 0 ? (int)f->cd[0] : 3);
    return 0;
}

static int
zstd_to_filter(const zarr_array_meta *m, struct json_object *cfg, hid_t dcpl, int *nlz4)
{
    unsigned cd[1] = {(unsigned)(int)cfg_int(cfg, "level", 0)};
    (void)m, (void)nlz4;
    if (H5Pset_filter(dcpl, ZARR_H5Z_ZSTD, H5Z_FLAG_MANDATORY, 1, cd) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't report the zstd filter (32015) in the dcpl");
        return -1;
    }
    return 0;
}

/* netCDF's (and PyTables') bzip2 filter: cd_values[0] = block size, default 9 */
static int
bzip2_to_codec(const filter_in *f, char *js, size_t n)
{
    if (f->ncd > 0 && (f->cd[0] < 1 || f->cd[0] > 9)) {
        h5zv_err_push(__func__, __LINE__,
                      "can't create dataset '/%s': bzip2 filter (307) block size %u out of range (want 1..9)",
                      f->path, f->cd[0]);
        return -1;
    }
    snprintf(js, n, "{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":%u}}",
             f->ncd > 0 ? f->cd[0] : 9);
    return 0;
}

static int
bzip2_to_filter(const zarr_array_meta *m, struct json_object *cfg, hid_t dcpl, int *nlz4)
{
    unsigned cd[1] = {(unsigned)cfg_int(cfg, "level", 1)};
    (void)m, (void)nlz4;
    if (H5Pset_filter(dcpl, ZARR_H5Z_BZIP2, H5Z_FLAG_MANDATORY, 1, cd) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't report the bzip2 filter (307) in the dcpl");
        return -1;
    }
    return 0;
}

/* the lz4 filter reads only cd_values[0]: the block size, 0 = its default */
static int
lz4_to_codec(const filter_in *f, char *js, size_t n)
{
    snprintf(js, n, "{\"name\":\"hdf5_lz4\",\"configuration\":{\"blocksize\":%u}}",
             f->ncd > 0 ? f->cd[0] : 0);
    return 0;
}

static int
lz4_to_filter(const zarr_array_meta *m, struct json_object *cfg, hid_t dcpl, int *nlz4)
{
    unsigned bs = (unsigned)cfg_int(cfg, "blocksize", 0), flags = H5Z_FLAG_MANDATORY, cd[H5ZV_MAX_CD];
    int      ncd = persisted_lz4(m, (*nlz4)++, bs, &flags, cd);
    if (ncd < 0) {
        ncd   = 1;
        cd[0] = bs;
    }
    if (H5Pset_filter(dcpl, ZARR_H5Z_LZ4, flags, (size_t)ncd, cd) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't report the lz4 filter (32004) in the dcpl");
        return -1;
    }
    return 0;
}

/* HDF5's szip filter (4): its cd_values after set_local, {options_mask, pixels_per_block,
 * bits_per_pixel, pixels_per_scanline}. The caller gives the first two (H5Pset_szip); the others and
 * the byte-order bits of the mask come from the type and the chunk, computed here as
 * H5Z__can_apply_szip and H5Z__set_local_szip (H5Zszip.c) compute them. */
#define H5ZV_SZIP_LSB             8u   /* SZ_LSB_OPTION_MASK */
#define H5ZV_SZIP_MSB             16u  /* SZ_MSB_OPTION_MASK */
#define H5ZV_SZIP_MAX_PPB         32u  /* SZ_MAX_PIXELS_PER_BLOCK */
#define H5ZV_SZIP_MAX_BLOCKS_LINE 128u /* SZ_MAX_BLOCKS_PER_SCANLINE */
#define H5ZV_SZIP_MAX_PPS         (H5ZV_SZIP_MAX_BLOCKS_LINE * H5ZV_SZIP_MAX_PPB)

static int
szip_to_codec(const filter_in *f, char *js, size_t n)
{
    size_t      bits = 8 * H5Tget_size(f->type_id), prec = H5Tget_precision(f->type_id);
    H5T_order_t order = H5Tget_order(f->type_id);
    hsize_t     dims[H5S_MAX_RANK], scanline, npoints = 1;
    int         nd   = H5Pget_chunk(f->dcpl_id, H5S_MAX_RANK, dims);
    unsigned    mask = f->ncd > 0 ? f->cd[0] : 0, ppb = f->ncd > 1 ? f->cd[1] : 0;

    if (f->ncd < 2 || ppb < 2 || ppb > H5ZV_SZIP_MAX_PPB || ppb % 2) {
        h5zv_err_push(__func__, __LINE__,
                      "can't create dataset '/%s': szip filter (4) needs cd_values {options_mask, "
                      "pixels_per_block} with pixels_per_block even, 2..%u (got %zu value(s)%s%u)",
                      f->path, H5ZV_SZIP_MAX_PPB, f->ncd, f->ncd > 1 ? ", pixels_per_block " : "",
                      f->ncd > 1 ? ppb : 0);
        return -1;
    }
    /* H5Z__can_apply_szip: 1..32 or 64 bits, a byte order */
    if (bits == 0 || prec == 0 || (bits > 32 && bits != 64) ||
        (order != H5T_ORDER_LE && order != H5T_ORDER_BE)) {
        h5zv_err_push(__func__, __LINE__,
                      "can't create dataset '/%s': szip filter (4) can't be applied to this type (it takes "
                      "little- or big-endian elements of 1..4 or 8 bytes; this one has %zu bytes%s)",
                      f->path, bits / 8,
                      order != H5T_ORDER_LE && order != H5T_ORDER_BE ? " and no byte order" : "");
        return -1;
    }
    if (nd <= 0) {
        h5zv_err_push(__func__, __LINE__,
                      "can't create dataset '/%s': szip filter (4) needs a chunked dataset", f->path);
        return -1;
    }
    /* H5Z__set_local_szip: bits per pixel from the precision (the full size when the value is offset),
     * rounded up to 32 or 64 above 24 */
    if (prec < bits && H5Tget_offset(f->type_id) != 0)
        prec = bits;
    if (prec > 24)
        prec = prec <= 32 ? 32 : 64;
    /* pixels per scanline: the chunk's fastest dimension, or its whole size when that is shorter
     * than a block, at most 128 blocks */
    for (int d = 0; d < nd; d++)
        npoints *= dims[d];
    scanline = dims[nd - 1];
    if (scanline < ppb) {
        if (npoints < ppb) {
            h5zv_err_push(__func__, __LINE__,
                          "can't create dataset '/%s': szip filter (4): pixels_per_block %u is greater than "
                          "the %llu elements of a chunk",
                          f->path, ppb, (unsigned long long)npoints);
            return -1;
        }
        scanline = npoints < (hsize_t)ppb * H5ZV_SZIP_MAX_BLOCKS_LINE
                       ? npoints
                       : (hsize_t)ppb * H5ZV_SZIP_MAX_BLOCKS_LINE;
    }
    else if (scanline <= H5ZV_SZIP_MAX_PPS)
        scanline = scanline < (hsize_t)ppb * H5ZV_SZIP_MAX_BLOCKS_LINE
                       ? scanline
                       : (hsize_t)ppb * H5ZV_SZIP_MAX_BLOCKS_LINE;
    else
        scanline = (hsize_t)ppb * H5ZV_SZIP_MAX_BLOCKS_LINE;
    mask &= ~(H5ZV_SZIP_LSB | H5ZV_SZIP_MSB);
    mask |= order == H5T_ORDER_LE ? H5ZV_SZIP_LSB : H5ZV_SZIP_MSB;
    snprintf(js, n,
             "{\"name\":\"hdf5_szip\",\"configuration\":{\"options_mask\":%u,\"pixels_per_block\":%u,"
             "\"bits_per_pixel\":%u,\"pixels_per_scanline\":%u}}",
             mask, ppb, (unsigned)prec, (unsigned)scanline);
    return 0;
}

static int
szip_to_filter(const zarr_array_meta *m, struct json_object *cfg, hid_t dcpl, int *nlz4)
{
    unsigned cd[4] = {
        (unsigned)cfg_int(cfg, "options_mask", 0), (unsigned)cfg_int(cfg, "pixels_per_block", 0),
        (unsigned)cfg_int(cfg, "bits_per_pixel", 0), (unsigned)cfg_int(cfg, "pixels_per_scanline", 0)};
    (void)m, (void)nlz4;
    /* optional, as H5Pset_szip sets it (the core checked the values when it read the codec) */
    if (H5Pset_filter(dcpl, H5Z_FILTER_SZIP, H5Z_FLAG_OPTIONAL, 4, cd) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't report the szip filter (4) in the dcpl");
        return -1;
    }
    return 0;
}

/* The codec document {"name": <name>, "configuration": {"cd_values": [...]}} of a codec whose
 * configuration is a filter's cd_values (hdf5_scaleoffset, hdf5_zfp), written into js[n]. */
static void
cd_values_codec(const char *name, const unsigned *cd, size_t ncd, char *js, size_t n)
{
    size_t pos = (size_t)snprintf(js, n, "{\"name\":\"%s\",\"configuration\":{\"cd_values\":[", name);
    for (size_t i = 0; i < ncd && pos < n; i++)
        pos += (size_t)snprintf(js + pos, n - pos, "%s%u", i ? "," : "", cd[i]);
    if (pos < n)
        snprintf(js + pos, n - pos, "]}}");
}

/* The cd_values of such a codec's configuration `cfg` (checked by the core when it read the codec)
 * into cd[max]; their count. */
static size_t
cd_values_of(struct json_object *cfg, unsigned *cd, size_t max)
{
    struct json_object *l = NULL;
    size_t              n = 0;
    if (cfg && json_object_object_get_ex(cfg, "cd_values", &l) && json_object_is_type(l, json_type_array))
        for (; n < json_object_array_length(l) && n < max; n++)
            cd[n] = (unsigned)json_object_get_int64(json_object_array_get_idx(l, n));
    return n;
}

/* HDF5's scale-offset filter (6): its 20 cd_values after set_local. The caller gives the first two
 * (H5Pset_scaleoffset: scale type, scale factor); the others come from the type, the chunk and the fill
 * value, computed here as H5Z__can_apply_scaleoffset and H5Z__set_local_scaleoffset (H5Zscaleoffset.c)
 * compute them: [2] elements per chunk, [3] class (0 integer, 1 float), [4] size, [5] sign, [6] byte
 * order (0 LE, 1 BE), [7] fill value defined, [8..9] the fill value's bits as a number (low 32 bits
 * first). Combinations HDF5 accepts at create but fails on at the first write (a scale type not the
 * type's, E-scaling, more minimum bits than the type has) are refused here. */
#define H5ZV_SO_NCD 20

static int
scaleoffset_to_codec(const filter_in *f, char *js, size_t n)
{
    H5T_class_t      cls   = H5Tget_class(f->type_id);
    size_t           size  = H5Tget_size(f->type_id);
    H5T_order_t      order = H5Tget_order(f->type_id);
    H5D_fill_value_t fs    = H5D_FILL_VALUE_UNDEFINED;
    hsize_t          dims[H5S_MAX_RANK], npoints = 1;
    int              nd              = H5Pget_chunk(f->dcpl_id, H5S_MAX_RANK, dims), sf;
    unsigned         cd[H5ZV_SO_NCD] = {0};

    if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || (order != H5T_ORDER_LE && order != H5T_ORDER_BE) ||
        (cls == H5T_INTEGER ? size != 1 && size != 2 && size != 4 && size != 8 : size != 4 && size != 8)) {
        h5zv_err_push(__func__, __LINE__,
                      "can't create dataset '/%s': scale-offset filter (6) can't be applied to this type (it "
                      "takes integers of 1, 2, 4 or 8 bytes and floats of 4 or 8, little- or big-endian)",
                      f->path);
        return -1;
    }
    if (nd <= 0) {
        h5zv_err_push(__func__, __LINE__,
                      "can't create dataset '/%s': scale-offset filter (6) needs a chunked dataset", f->path);
        return -1;
    }
    for (int d = 0; d < nd; d++)
        npoints *= dims[d];
    cd[0] = f->ncd > 0 ? f->cd[0] : 0;
    cd[1] = f->ncd > 1 ? f->cd[1] : 0;
    sf    = (int)cd[1];
    if (cls == H5T_INTEGER ? cd[0] != H5Z_SO_INT : cd[0] != H5Z_SO_FLOAT_DSCALE) {
        h5zv_err_push(__func__, __LINE__,
                      "can't create dataset '/%s': scale-offset filter (6): scale type %u for %s data (want "
                      "%s; HDF5 fails at the first write otherwise)",
                      f->path, cd[0], cls == H5T_INTEGER ? "integer" : "float",
                      cls == H5T_INTEGER ? "H5Z_SO_INT"
                                         : "H5Z_SO_FLOAT_DSCALE: E-scaling is not implemented");
        return -1;
    }
    if (cls == H5T_INTEGER && sf > (int)(8 * size)) {
        h5zv_err_push(__func__, __LINE__,
                      "can't create dataset '/%s': scale-offset filter (6): %d minimum bits for a %zu-bit "
                      "type (HDF5 fails at the first write)",
                      f->path, sf, 8 * size);
        return -1;
    }
    if (npoints > UINT32_MAX) {
        h5zv_err_push(__func__, __LINE__,
                      "can't create dataset '/%s': scale-offset filter (6): a chunk of %llu elements is more "
                      "than its 32-bit count",
                      f->path, (unsigned long long)npoints);
        return -1;
    }
    cd[2] = (unsigned)npoints;
    cd[3] = cls == H5T_FLOAT;
    cd[4] = (unsigned)size;
    cd[5] = cls == H5T_INTEGER && H5Tget_sign(f->type_id) == H5T_SGN_2;
    cd[6] = order == H5T_ORDER_BE;
    if (H5Pfill_value_defined(f->dcpl_id, &fs) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't create dataset '/%s': can't read the fill value", f->path);
        return -1;
    }
    if (fs != H5D_FILL_VALUE_UNDEFINED) {
        /* the fill value in the dataset's type, as a number (bytes read in the type's order) */
        uint8_t  fb[8] = {0};
        uint64_t v     = 0;
        if (H5Pget_fill_value(f->dcpl_id, f->type_id, fb) < 0) {
            h5zv_err_push(__func__, __LINE__, "can't create dataset '/%s': can't read the fill value",
                          f->path);
            return -1;
        }
        for (size_t i = 0; i < size; i++)
            v |= (uint64_t)fb[order == H5T_ORDER_BE ? size - 1 - i : i] << (8 * i);
        cd[7] = 1;
        cd[8] = (unsigned)(v & 0xffffffffu);
        cd[9] = (unsigned)(v >> 32);
    }
    cd_values_codec("hdf5_scaleoffset", cd, H5ZV_SO_NCD, js, n);
    return 0;
}

static int
scaleoffset_to_filter(const zarr_array_meta *m, struct json_object *cfg, hid_t dcpl, int *nlz4)
{
    unsigned cd[H5ZV_SO_NCD] = {0};
    (void)m, (void)nlz4;
    /* the core checked the 20 values when it read the codec */
    cd_values_of(cfg, cd, H5ZV_SO_NCD);
    /* optional, as H5Pset_scaleoffset sets it */
    if (H5Pset_filter(dcpl, H5Z_FILTER_SCALEOFFSET, H5Z_FLAG_OPTIONAL, H5ZV_SO_NCD, cd) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't report the scale-offset filter (6) in the dcpl");
        return -1;
    }
    return 0;
}

/* h5py's LZF filter: no parameters of its own (cd_values are its revision, LZF's version, the chunk size) */
static int
lzf_to_codec(const filter_in *f, char *js, size_t n)
{
    (void)f;
    snprintf(js, n, "{\"name\":\"lzf\"}");
    return 0;
}

static int
lzf_to_filter(const zarr_array_meta *m, struct json_object *cfg, hid_t dcpl, int *nlz4)
{
    uint64_t chunk = m->dtype->size;
    unsigned cd[3];
    (void)cfg, (void)nlz4;
    for (int d = 0; d < m->ndim; d++)
        chunk *= m->chunks[d];
    cd[0] = 4;      /* h5py's LZF filter revision */
    cd[1] = 0x0105; /* LZF API version */
    cd[2] = chunk > UINT32_MAX ? 0 : (unsigned)chunk;
    if (H5Pset_filter(dcpl, ZARR_H5Z_LZF, H5Z_FLAG_OPTIONAL, 3, cd) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't report the lzf filter (32000) in the dcpl");
        return -1;
    }
    return 0;
}

/* H5Z-ZFP: hdf5_zfp {cd_values} in the form the filter keeps in a file (version word, zfp header);
 * the generic form a caller passes ([0] = mode 1..5) is turned into it for the chunk, as set_local
 * does */
static int
zfp_to_codec(const filter_in *f, char *js, size_t n)
{
    unsigned    cd[16];
    size_t      ncd = 0;
    hsize_t     dims[H5S_MAX_RANK];
    uint64_t    shape[H5S_MAX_RANK];
    size_t      size = H5Tget_size(f->type_id);
    H5T_class_t cls  = H5Tget_class(f->type_id);
    int         nd, zt = cls == H5T_FLOAT     ? (size == 4   ? 3
                                                 : size == 8 ? 4
                                                             : 0)
                         : cls == H5T_INTEGER ? (size == 4   ? 1
                                                 : size == 8 ? 2
                                                             : 0)
                                              : 0;
    if (f->ncd >= 2 && f->cd[0] > 5) {
        ncd = f->ncd > 16 ? 16 : f->ncd;
        memcpy(cd, f->cd, ncd * sizeof *cd);
    }
    else {
        if (!zt || (nd = H5Pget_chunk(f->dcpl_id, H5S_MAX_RANK, dims)) <= 0) {
            h5zv_err_push(
                __func__, __LINE__,
                "can't create dataset '/%s': zfp filter (32013) needs a chunked int32, int64, float32 "
                "or float64 dataset",
                f->path);
            return -1;
        }
        for (int d = 0; d < nd; d++)
            shape[d] = dims[d];
        if (zarr_h5zfp_cd_from_generic(f->cd, f->ncd, zt, nd, shape, cd, &ncd) != ZARR_OK) {
            h5zv_err_push(__func__, __LINE__, "can't create dataset '/%s': zfp filter (32013): %s", f->path,
                          zarr_errmsg());
            return -1;
        }
    }
    cd_values_codec("hdf5_zfp", cd, ncd, js, n);
    return 0;
}

static int
zfp_to_filter(const zarr_array_meta *m, struct json_object *cfg, hid_t dcpl, int *nlz4)
{
    unsigned cd[16];
    size_t   ncd = cd_values_of(cfg, cd, 16);
    (void)m, (void)nlz4;
    if (H5Pset_filter(dcpl, ZARR_H5Z_ZFP, H5Z_FLAG_MANDATORY, ncd, cd) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't report the zfp filter (32013) in the dcpl");
        return -1;
    }
    return 0;
}

static const filter_row filter_rows[] = {
    {H5Z_FILTER_DEFLATE, {"numcodecs.zlib", "gzip", "zlib", NULL}, true, deflate_to_codec, deflate_to_filter},
    {H5Z_FILTER_SHUFFLE, {"numcodecs.shuffle", NULL}, false, shuffle_to_codec, shuffle_to_filter},
    {H5Z_FILTER_FLETCHER32, {"numcodecs.fletcher32", NULL}, false, fletcher32_to_codec, fletcher32_to_filter},
    {ZARR_H5Z_BLOSC, {"blosc", NULL}, true, blosc_to_codec, blosc_to_filter},
    {ZARR_H5Z_ZSTD, {"zstd", NULL}, true, zstd_to_codec, zstd_to_filter},
    {ZARR_H5Z_BZIP2, {"numcodecs.bz2", NULL}, true, bzip2_to_codec, bzip2_to_filter},
    {ZARR_H5Z_LZ4, {"hdf5_lz4", NULL}, true, lz4_to_codec, lz4_to_filter},
    {H5Z_FILTER_SZIP, {"hdf5_szip", NULL}, true, szip_to_codec, szip_to_filter},
    {H5Z_FILTER_SCALEOFFSET, {"hdf5_scaleoffset", NULL}, true, scaleoffset_to_codec, scaleoffset_to_filter},
    {ZARR_H5Z_LZF, {"lzf", NULL}, true, lzf_to_codec, lzf_to_filter},
    {ZARR_H5Z_ZFP, {"hdf5_zfp", NULL}, true, zfp_to_codec, zfp_to_filter},
};
#define NFILTER_ROWS (sizeof filter_rows / sizeof filter_rows[0])

static const filter_row *
row_of_filter(H5Z_filter_t id)
{
    for (size_t i = 0; i < NFILTER_ROWS; i++)
        if (filter_rows[i].id == id)
            return &filter_rows[i];
    return NULL;
}

static const filter_row *
row_of_codec(const char *name)
{
    for (size_t i = 0; i < NFILTER_ROWS; i++)
        for (size_t j = 0; filter_rows[i].codecs[j]; j++)
            if (strcmp(name, filter_rows[i].codecs[j]) == 0)
                return &filter_rows[i];
    return NULL;
}

/* ---- create: filters -> codecs ------------------------------------------------------------------ */

/* Appends a codec given as v3 JSON text. */
static int
append_codec(zarr_array_meta *m, const char *path, const char *json)
{
    struct json_object *j   = json_tokener_parse(json);
    int                 ret = -1;
    if (!j)
        H5ZV_GOTO_ERROR("can't create dataset '/%s': out of memory", path);
    if (zarr_chain_append_json(m->chain, j) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't create dataset '/%s'", path);
    ret = 0;
done:
    json_object_put(j);
    return ret;
}

/* Blosc's type size for an HDF5 type, as hdf5-blosc's set_local computes it. */
unsigned
h5zv_filter_blosc_typesize(hid_t type)
{
    size_t size;
    if (H5Tget_class(type) == H5T_ARRAY) {
        hid_t super = H5Tget_super(type);
        size        = H5Tget_size(super);
        H5Tclose(super);
    }
    else
        size = H5Tget_size(type);
    return zarr_blosc_typesize(size);
}

/* Why a filter has no zarr codec, and what to use instead. */
static void
unsupported_advice(H5Z_filter_t id, const char **why, const char **instead)
{
    switch (id) {
        case H5Z_FILTER_NBIT:
            *why     = "zarr has no n-bit packing codec";
            *instead = "shuffle + zstd (H5Pset_shuffle, filter 32015) or shuffle + deflate, both lossless";
            break;
        case ZARR_H5Z_BITSHUFFLE:
            *why     = "the bitshuffle filter's framing has no zarr codec";
            *instead = "blosc with bit-shuffle (filter 32001, cd_values {0,0,0,0,5,2,1}), lossless";
            break;
        default:
            *why     = "no zarr codec is known for it";
            *instead = "deflate (H5Pset_deflate), zstd (filter 32015) or blosc (filter 32001), lossless";
            break;
    }
}

/* H5ZARR_UNSUPPORTED_FILTER: NULL/"error" -> *subst NULL (fail); "substitute:X" -> *subst = X's
 * codec JSON ("" for none). Returns -1 (error pushed) for values it does not know. */
static int
substitute_mode(const char **subst)
{
    const char *v = getenv("H5ZARR_UNSUPPORTED_FILTER");
    *subst        = NULL;
    if (!v || !*v || strcmp(v, "error") == 0)
        return 0;
    if (strcmp(v, "substitute:zstd") == 0)
        *subst = "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}";
    else if (strcmp(v, "substitute:zlib") == 0 || strcmp(v, "substitute:deflate") == 0)
        *subst = "{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":6}}";
    else if (strcmp(v, "substitute:blosc") == 0)
        *subst = "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":5,\"shuffle\":"
                 "\"shuffle\",\"blocksize\":0}}";
    else if (strcmp(v, "substitute:none") == 0)
        *subst = "";
    else {
        h5zv_err_push(__func__, __LINE__,
                      "H5ZARR_UNSUPPORTED_FILTER is \"%s\"; want error, substitute:zstd, substitute:zlib, "
                      "substitute:blosc or substitute:none",
                      v);
        return -1;
    }
    return 0;
}

int
h5zv_filters_to_chain(hid_t dcpl_id, hid_t type_id, zarr_array_meta *m, const char *path)
{
    int               n = H5Pget_nfilters(dcpl_id), ret = -1;
    bool              compressed = false, dropped = false;
    const char       *subst = NULL;
    const filter_row *row;
    char              js[512];

    if (n < 0)
        H5ZV_GOTO_ERROR("can't create dataset '/%s': can't read the filter pipeline", path);
    for (int i = 0; i < n; i++) {
        unsigned     flags = 0, cd[H5ZV_MAX_CD] = {0};
        size_t       ncd       = H5ZV_MAX_CD;
        char         name[128] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl_id, (unsigned)i, &flags, &ncd, cd, sizeof name, name, NULL);
        if (id < 0)
            H5ZV_GOTO_ERROR("can't create dataset '/%s': can't read filter %d of the pipeline", path, i);
        if (ncd > H5ZV_MAX_CD)
            ncd = H5ZV_MAX_CD;
        if (!(row = row_of_filter(id))) {
            const char *why, *instead;
            if (h5zv_filter_left_out(id, flags))
                continue; /* HDF5 skips it too: recorded in the dcpl, no codec */
            if (substitute_mode(&subst) < 0)
                goto done;
            if (subst) {
                dropped = true;
                continue;
            }
            unsupported_advice(id, &why, &instead);
            H5ZV_GOTO_ERROR("can't create dataset '/%s': HDF5 filter %d (%s) can't be stored in zarr: %s%s; "
                            "use %s instead (or set H5ZARR_UNSUPPORTED_FILTER=substitute:zstd to store "
                            "the data with zstd in its place)",
                            path, (int)id, name[0] ? name : "unregistered filter", why,
                            !(flags & H5Z_FLAG_OPTIONAL) ? ""
                            : H5Zfilter_avail(id) > 0
                                ? " (it is optional, but HDF5 would apply it: only an optional filter HDF5 "
                                  "can't apply either is left out, as HDF5 leaves it out)"
                                : "",
                            instead);
        }
        {
            filter_in in = {dcpl_id, type_id, path, ncd, cd};
            if (row->to_codec(&in, js, sizeof js) < 0)
                goto done;
        }
        compressed |= row->compressor;
        if (append_codec(m, path, js) < 0)
            goto done;
    }
    if (dropped && !compressed && subst && *subst) {
        /* json text of the substitute is a constant; reuse the appender */
        if (append_codec(m, path, subst) < 0)
            goto done;
    }
    ret = 0;
done:
    return ret;
}

bool
h5zv_filter_left_out(H5Z_filter_t id, unsigned flags)
{
    htri_t avail;
    if (row_of_filter(id) || !(flags & H5Z_FLAG_OPTIONAL))
        return false;
    H5E_BEGIN_TRY { avail = H5Zfilter_avail(id); }
    H5E_END_TRY
    return avail == 0;
}

uint32_t
h5zv_filters_left_out_mask(hid_t dcpl_id)
{
    int      n = H5Pget_nfilters(dcpl_id);
    uint32_t m = 0;
    for (int i = 0; i < n && i < 32; i++) {
        unsigned     flags = 0;
        size_t       nc    = 0;
        H5Z_filter_t id    = H5Pget_filter2(dcpl_id, (unsigned)i, &flags, &nc, NULL, 0, NULL, NULL);
        /* an optional filter without a codec: the dataset exists, so it was left out at create */
        if (id >= 0 && !row_of_filter(id) && (flags & H5Z_FLAG_OPTIONAL))
            m |= (uint32_t)1 << i;
    }
    return m;
}

bool
h5zv_filters_any_left_out(hid_t dcpl_id)
{
    int n = H5Pget_nfilters(dcpl_id);
    for (int i = 0; i < n; i++) {
        unsigned     flags = 0;
        size_t       nc    = 0;
        H5Z_filter_t id    = H5Pget_filter2(dcpl_id, (unsigned)i, &flags, &nc, NULL, 0, NULL, NULL);
        if (id >= 0 && h5zv_filter_left_out(id, flags))
            return true;
    }
    return false;
}

int
h5zv_filters_record_prune(hid_t dcpl_id, struct json_object *dj)
{
    struct json_object *l = NULL;
    int                 n = H5Pget_nfilters(dcpl_id);
    if (n < 0) {
        h5zv_err_push(__func__, __LINE__, "can't read the filter pipeline");
        return -1;
    }
    if (!json_object_object_get_ex(dj, "filters", &l) || !json_object_is_type(l, json_type_array))
        return 0;
    if ((int)json_object_array_length(l) != n) {
        h5zv_err_push(__func__, __LINE__, "internal: the recorded pipeline has %zu filters, the dcpl %d",
                      json_object_array_length(l), n);
        return -1;
    }
    for (int i = n - 1; i >= 0; i--) {
        unsigned     flags = 0;
        size_t       nc    = 0;
        H5Z_filter_t id    = H5Pget_filter2(dcpl_id, (unsigned)i, &flags, &nc, NULL, 0, NULL, NULL);
        if (id < 0) {
            h5zv_err_push(__func__, __LINE__, "can't read filter %d of the pipeline", i);
            return -1;
        }
        if (!row_of_filter(id) && !h5zv_filter_left_out(id, flags))
            json_object_array_del_idx(l, (size_t)i, 1); /* H5ZARR_UNSUPPORTED_FILTER dropped it */
    }
    if (json_object_array_length(l) == 0)
        json_object_object_del(dj, "filters");
    return 0;
}

/* Appends filter `i` of `src` to `dst`, with its flags and every cd_value. */
static int
copy_filter(hid_t src, unsigned i, hid_t dst)
{
    unsigned     flags = 0, small[H5ZV_MAX_CD], *cd = small;
    size_t       nc  = H5ZV_MAX_CD;
    H5Z_filter_t id  = H5Pget_filter2(src, i, &flags, &nc, small, 0, NULL, NULL);
    int          ret = -1;
    if (id < 0)
        H5ZV_GOTO_ERROR("can't read filter %u of the pipeline", i);
    if (nc > H5ZV_MAX_CD) {
        if (!(cd = malloc(nc * sizeof *cd)))
            H5ZV_GOTO_ERROR("out of memory");
        if (H5Pget_filter2(src, i, &flags, &nc, cd, 0, NULL, NULL) < 0)
            H5ZV_GOTO_ERROR("can't read filter %u of the pipeline", i);
    }
    if (H5Pset_filter(dst, id, flags, nc, cd) < 0)
        H5ZV_GOTO_ERROR("can't set filter %d (the pipeline holds at most %d)", (int)id, H5Z_MAX_NFILTERS);
    ret = 0;
done:
    if (cd != small)
        free(cd);
    return ret;
}

int
h5zv_filters_add_left_out(struct json_object *j, const char *where, hid_t dcpl_id)
{
    hid_t      rec = H5I_INVALID_HID, chain = H5I_INVALID_HID;
    int        nr, nc, ci = 0, ret = -1;
    bool       any = false;
    h5zv_jpath lp, fp;

    if (!json_object_is_type(j, json_type_object) || !json_object_object_get_ex(j, "filters", NULL))
        return 0;
    /* every entry validated (ids, flags, cd_values: vol/plist_json.c) */
    if (h5zv_dcpl_filters_from_json(j, where, &rec) < 0 || (nr = H5Pget_nfilters(rec)) < 0)
        goto done;
    h5zv_jpath_key(&lp, where, "filters");
    for (int i = 0; i < nr; i++) {
        unsigned     flags = 0;
        size_t       ncd   = 0;
        H5Z_filter_t id    = H5Pget_filter2(rec, (unsigned)i, &flags, &ncd, NULL, 0, NULL, NULL);
        if (id < 0)
            H5ZV_GOTO_ERROR("can't read filter %d of the pipeline", i);
        if (row_of_filter(id))
            continue;
        if (!(flags & H5Z_FLAG_OPTIONAL))
            H5ZV_JSON_FAIL(h5zv_jpath_idx(&fp, lp.s, (size_t)i),
                           "filter %d has no zarr codec and is mandatory: only an optional filter is left "
                           "out of the codecs (as HDF5 skips one it can't apply)",
                           (int)id);
        any = true;
    }
    if (!any) {
        ret = 0;
        goto done;
    }
    /* the chain's filters in order, the left-out ones at their recorded places; codec filters the record
     * does not place (the codecs were changed since) follow */
    if ((chain = H5Pcopy(dcpl_id)) < 0 || (nc = H5Pget_nfilters(chain)) < 0 ||
        (nc > 0 && H5Premove_filter(dcpl_id, H5Z_FILTER_ALL) < 0))
        H5ZV_GOTO_ERROR("can't rebuild the filter pipeline");
    for (int i = 0; i < nr; i++) {
        unsigned flags = 0;
        size_t   ncd   = 0;
        if (!row_of_filter(H5Pget_filter2(rec, (unsigned)i, &flags, &ncd, NULL, 0, NULL, NULL))) {
            if (copy_filter(rec, (unsigned)i, dcpl_id) < 0)
                goto done;
        }
        else if (ci < nc && copy_filter(chain, (unsigned)ci++, dcpl_id) < 0)
            goto done;
    }
    for (; ci < nc; ci++)
        if (copy_filter(chain, (unsigned)ci, dcpl_id) < 0)
            goto done;
    ret = 0;
done:
    h5zv_close(rec);
    h5zv_close(chain);
    return ret;
}

/* ---- open: codecs -> filters ------------------------------------------------------------------- */

/* Sets the filter for one codec (v3 JSON, borrowed) on the dcpl; codecs without a filter are skipped.
 * `nlz4` counts the hdf5_lz4 codecs met so far (for persisted_lz4). */
static int
codec_to_filter(const zarr_array_meta *m, struct json_object *codec, hid_t dcpl_id, int depth, int *nlz4)
{
    struct json_object *nm = NULL, *cfg = NULL, *inner;
    const char         *name;
    const filter_row   *row;
    int                 ret = -1;

    if (!json_object_object_get_ex(codec, "name", &nm) || !(name = json_object_get_string(nm)))
        return 0;
    json_object_object_get_ex(codec, "configuration", &cfg);
    if ((row = row_of_codec(name)) != NULL) {
        if (row->to_filter(m, cfg, dcpl_id, nlz4) < 0)
            goto done;
    }
    else if (strcmp(name, "sharding_indexed") == 0 && depth < 4 && cfg &&
             json_object_object_get_ex(cfg, "codecs", &inner) &&
             json_object_is_type(inner, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(inner); i++)
            if (codec_to_filter(m, json_object_array_get_idx(inner, i), dcpl_id, depth + 1, nlz4) < 0)
                goto done;
    }
    ret = 0;
done:
    return ret;
}

int
h5zv_filters_from_chain(const zarr_array_meta *m, hid_t dcpl_id)
{
    size_t n   = m && m->chain ? zarr_chain_count(m->chain) : 0;
    int    ret = 0, nlz4 = 0;
    for (size_t i = 0; i < n && ret == 0; i++) {
        struct json_object *codec = NULL;
        if (zarr_chain_codec_json(m->chain, i, &codec) != ZARR_OK) {
            h5zv_err_push(__func__, __LINE__, "can't read codec %zu of the array: %s", i, zarr_errmsg());
            return -1;
        }
        ret = codec_to_filter(m, codec, dcpl_id, 0, &nlz4);
        json_object_put(codec);
    }
    return ret;
}
