/*
 * h5z_zfp.c: the H5Z-ZFP HDF5 filter (registered ID 32013, LLNL's) as a loadable plugin, on the core's
 * kernel (zarr/codecs/hdf5_zfp.c), so files written with H5Z-ZFP open with this HDF5's tools and
 * convert with h5repack to stores, where the chunks are the `hdf5_zfp` codec's, unchanged.
 *
 * cd_values: callers pass H5Z-ZFP's generic form ([0] mode 1 rate, 2 precision, 3 accuracy, 4 expert,
 * 5 reversible, then its parameters; doubles as two 32-bit words); set_local turns it into the form
 * kept in the file ([0] version word, [1..] zfp's header for the chunk's type and dims), as H5Z-ZFP's
 * own set_local does; a dcpl already in that form (copied from a file) is left as it is.
 */
#include "h5z_common.h"

#include <zfp.h>

#define ZFP_MAX_CD 16

static int
zfp_type_of(hid_t type)
{
    size_t      size = H5Tget_size(type);
    H5T_class_t cls  = H5Tget_class(type);
    if (cls == H5T_FLOAT)
        return size == 4 ? zfp_type_float : size == 8 ? zfp_type_double : 0;
    if (cls == H5T_INTEGER && H5Tget_sign(type) == H5T_SGN_2)
        return size == 4 ? zfp_type_int32 : size == 8 ? zfp_type_int64 : 0;
    return 0;
}

static herr_t
zfp_set_local(hid_t dcpl, hid_t type, hid_t space)
{
    unsigned flags = 0, gen[ZFP_MAX_CD] = {0}, cd[ZFP_MAX_CD];
    size_t   n = ZFP_MAX_CD, ncd = 0;
    hsize_t  dims[H5S_MAX_RANK];
    uint64_t shape[H5S_MAX_RANK];
    int      nd, zt = zfp_type_of(type);
    (void)space;
    if (H5Pget_filter_by_id2(dcpl, ZARR_H5Z_ZFP, &flags, &n, gen, 0, NULL, NULL) < 0)
        return -1;
    if (n >= 2 && gen[0] > 5) /* already the kept form */
        return 0;
    if (!zt) {
        H5Z_FAIL("zfp filter (32013): the dataset's type is not int32, int64, float32 or float64");
        return -1;
    }
    if ((nd = H5Pget_chunk(dcpl, H5S_MAX_RANK, dims)) <= 0) {
        H5Z_FAIL("zfp filter (32013): the dataset has no chunks");
        return -1;
    }
    for (int d = 0; d < nd; d++)
        shape[d] = dims[d];
    if (zarr_h5zfp_cd_from_generic(gen, n, zt, nd, shape, cd, &ncd) != ZARR_OK) {
        H5Z_FAIL("zfp filter (32013): %s", zarr_errmsg());
        return -1;
    }
    return H5Pmodify_filter(dcpl, ZARR_H5Z_ZFP, flags, ncd, cd);
}

static size_t
zfp_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes, size_t *buf_size,
           void **buf)
{
    zarr_buf out = ZARR_BUF_INIT;
    if (flags & H5Z_FLAG_REVERSE) {
        if (zarr__h5zfp_decompress_buf(cd_values, cd_nelmts, *buf, nbytes, ZARR__DECODE_LIMIT, &out) !=
            ZARR_OK) {
            zarr_buf_free(&out);
            return H5Z_FAIL("zfp filter (32013): can't decode a chunk: %s", zarr_errmsg());
        }
    }
    else if (zarr__h5zfp_compress(cd_values, cd_nelmts, *buf, nbytes, &out) != ZARR_OK) {
        zarr_buf_free(&out);
        return H5Z_FAIL("zfp filter (32013): can't encode a chunk: %s", zarr_errmsg());
    }
    return h5z_hand_back(&out, buf_size, buf);
}

static const H5Z_class2_t zfp_class = {
    H5Z_CLASS_T_VERS, (H5Z_filter_t)ZARR_H5Z_ZFP, 1, 1, "zfp", NULL, zfp_set_local, zfp_filter};

H5Z_EXPORT H5PL_type_t
H5PLget_plugin_type(void)
{
    return H5PL_TYPE_FILTER;
}

H5Z_EXPORT const void *
H5PLget_plugin_info(void)
{
    return &zfp_class;
}
