/*
 * h5z_zstd.c: the Zstandard HDF5 filter (registered ID 32015) as a loadable plugin, on the core's zstd
 * kernel: one zstd frame with the content size, byte for byte a zarr `zstd` chunk (checksum false).
 *
 * cd_values[0] is the level as an int stored in an unsigned (negative levels as their bit pattern:
 * -1 is 4294967295); 0 is zstd's default; out-of-range levels are clamped to zstd's range. When no
 * value is given, set_local records the default level 3 so that readers requiring one value (netCDF's
 * zstd plugin) read the files too. Decoding accepts frames with or without a content checksum.
 */
#include "h5z_common.h"

#define ZSTD_DEFAULT_LEVEL 3

static herr_t
zstd_set_local(hid_t dcpl, hid_t type, hid_t space)
{
    unsigned flags = 0, values[1] = {0};
    size_t   n = 1;
    (void)type;
    (void)space;
    if (H5Pget_filter_by_id2(dcpl, ZARR_H5Z_ZSTD, &flags, &n, values, 0, NULL, NULL) < 0)
        return -1;
    if (n >= 1)
        return 0;
    values[0] = ZSTD_DEFAULT_LEVEL;
    return H5Pmodify_filter(dcpl, ZARR_H5Z_ZSTD, flags, 1, values);
}

static size_t
zstd_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes, size_t *buf_size,
            void **buf)
{
    zarr_buf out = ZARR_BUF_INIT;
    int      rc;

    if (flags & H5Z_FLAG_REVERSE) {
        if ((rc = zarr__zstd_decompress_buf(h5z_ctx(), *buf, nbytes, ZARR__DECODE_LIMIT, &out)) != ZARR_OK) {
            zarr_buf_free(&out);
            return H5Z_FAIL("zstd filter (32015): can't decode a chunk: %s", zarr_errmsg());
        }
    }
    else {
        int level = cd_nelmts > 0 ? (int)cd_values[0] : ZSTD_DEFAULT_LEVEL;
        if ((rc = zarr__zstd_compress(h5z_ctx(), level, false, *buf, nbytes, &out)) != ZARR_OK) {
            zarr_buf_free(&out);
            return H5Z_FAIL("zstd filter (32015): can't encode a chunk: %s", zarr_errmsg());
        }
    }
    return h5z_hand_back(&out, buf_size, buf);
}

static const H5Z_class2_t zstd_class = {
    H5Z_CLASS_T_VERS, (H5Z_filter_t)ZARR_H5Z_ZSTD, 1, 1, "zstd", NULL, zstd_set_local, zstd_filter};

H5Z_EXPORT H5PL_type_t
H5PLget_plugin_type(void)
{
    return H5PL_TYPE_FILTER;
}

H5Z_EXPORT const void *
H5PLget_plugin_info(void)
{
    return &zstd_class;
}
