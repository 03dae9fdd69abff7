/*
 * h5z_blosc.c: the Blosc HDF5 filter (registered ID 32001) as a loadable plugin, on the core's Blosc1
 * kernel, so a chunk this filter writes is byte for byte a zarr `blosc` chunk and either can read the
 * other.
 *
 * cd_values follow hdf5-blosc (what hdf5plugin, h5py users and netCDF's nc_def_var_blosc write):
 *   [0] filter revision (2)          [1] Blosc format version (ZARR_BLOSC_VERSION_FORMAT)
 *   [2] type size (>255 -> 1)        [3] chunk size in bytes          (all four filled by set_local)
 *   [4] clevel 0..9 (default 5)      [5] shuffle 0 none, 1 byte, 2 bit (default 1)
 *   [6] compressor 0 blosclz, 1 lz4, 2 lz4hc, 3 snappy, 4 zlib, 5 zstd (default 0; zarr_blosc_compname)
 * Users pass (0,0,0,0,clevel,shuffle,code); fewer values take the defaults, as in hdf5-blosc.
 * Incompressible chunks are stored as Blosc's copy frame (16-byte header + the data), which every
 * Blosc reader decodes; the filter never fails on them.
 */
#include "h5z_common.h"

#define BLOSC_FILTER_REV   2
#define BLOSC_MAX_CDVALUES 8

/* Blosc's type size for an HDF5 type: the base type of array types; above 255 bytes, 1. */
static size_t
blosc_typesize(hid_t type)
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

static herr_t
blosc_set_local(hid_t dcpl, hid_t type, hid_t space)
{
    unsigned flags = 0, values[BLOSC_MAX_CDVALUES] = {0};
    size_t   n = BLOSC_MAX_CDVALUES, chunk;
    (void)space;
    if (H5Pget_filter_by_id2(dcpl, ZARR_H5Z_BLOSC, &flags, &n, values, 0, NULL, NULL) < 0)
        return -1;
    if (n < 4)
        n = 4;
    if (n > 7)
        n = 7;
    chunk     = h5z_chunk_bytes(dcpl, type);
    values[0] = BLOSC_FILTER_REV;
    values[1] = ZARR_BLOSC_VERSION_FORMAT;
    values[2] = (unsigned)blosc_typesize(type);
    values[3] = chunk > UINT32_MAX ? 0 : (unsigned)chunk;
    return H5Pmodify_filter(dcpl, ZARR_H5Z_BLOSC, flags, n, values);
}

static size_t
blosc_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes, size_t *buf_size,
             void **buf)
{
    zarr_buf out = ZARR_BUF_INIT;

    if (flags & H5Z_FLAG_REVERSE) {
        if (zarr__blosc_decompress_buf(*buf, nbytes, ZARR__DECODE_LIMIT, &out) != ZARR_OK) {
            zarr_buf_free(&out);
            return H5Z_FAIL("blosc filter (32001): can't decode a chunk: %s", zarr_errmsg());
        }
    }
    else {
        size_t   typesize = cd_nelmts > 2 && cd_values[2] ? cd_values[2] : 1;
        unsigned clevel   = cd_nelmts > 4 ? cd_values[4] : 5;
        unsigned shuffle  = cd_nelmts > 5 ? cd_values[5] : 1;
        unsigned code     = cd_nelmts > 6 ? cd_values[6] : 0;
        if (clevel > 9)
            return H5Z_FAIL("blosc filter (32001): cd_values[4] (clevel) is %u, want 0..9", clevel);
        if (shuffle > 2)
            return H5Z_FAIL("blosc filter (32001): cd_values[5] (shuffle) is %u, want 0, 1 or 2", shuffle);
        if (!zarr_blosc_compname((int)code))
            return H5Z_FAIL("blosc filter (32001): cd_values[6] (compressor) is %u, want 0..5", code);
        if (zarr__blosc_compress(zarr_blosc_compname((int)code), (int)clevel, (int)shuffle, typesize, 0, *buf,
                                 nbytes, &out) != ZARR_OK) {
            zarr_buf_free(&out);
            return H5Z_FAIL("blosc filter (32001): can't encode a chunk: %s", zarr_errmsg());
        }
    }
    return h5z_hand_back(&out, buf_size, buf);
}

static const H5Z_class2_t blosc_class = {
    H5Z_CLASS_T_VERS, (H5Z_filter_t)ZARR_H5Z_BLOSC, 1, 1, "blosc", NULL, blosc_set_local, blosc_filter};

H5Z_EXPORT H5PL_type_t
H5PLget_plugin_type(void)
{
    return H5PL_TYPE_FILTER;
}

H5Z_EXPORT const void *
H5PLget_plugin_info(void)
{
    return &blosc_class;
}
