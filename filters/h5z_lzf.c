/*
 * h5z_lzf.c: h5py's LZF HDF5 filter (registered ID 32000) as a loadable plugin, on the core's LZF
 * kernel (zarr/codecs/lzf.c), so h5py files with LZF open with any HDF5 tool (h5dump, h5repack) and
 * the chunk bytes are the connector's `lzf` codec's, unchanged.
 *
 * cd_values as h5py writes them: [0] filter revision (4), [1] LZF API version (0x0105), [2] chunk size
 * in bytes (set_local fills all three). Decoding does not rely on [2]: the size is found by decoding
 * under the core's limit, as h5py's filter grows its buffer.
 */
#include "h5z_common.h"

#define LZF_FILTER_REV  4
#define LZF_API_VERSION 0x0105

static herr_t
lzf_set_local(hid_t dcpl, hid_t type, hid_t space)
{
    unsigned flags = 0, values[3] = {0};
    size_t   n = 3, chunk;
    (void)space;
    if (H5Pget_filter_by_id2(dcpl, ZARR_H5Z_LZF, &flags, &n, values, 0, NULL, NULL) < 0)
        return -1;
    chunk     = h5z_chunk_bytes(dcpl, type);
    values[0] = LZF_FILTER_REV;
    values[1] = LZF_API_VERSION;
    values[2] = chunk > UINT32_MAX ? 0 : (unsigned)chunk;
    return H5Pmodify_filter(dcpl, ZARR_H5Z_LZF, flags, 3, values);
}

static size_t
lzf_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes, size_t *buf_size,
           void **buf)
{
    zarr_buf out = ZARR_BUF_INIT;
    (void)cd_nelmts, (void)cd_values;
    if (flags & H5Z_FLAG_REVERSE) {
        if (zarr__lzf_decompress_buf(*buf, nbytes, ZARR__DECODE_LIMIT, &out) != ZARR_OK) {
            zarr_buf_free(&out);
            return H5Z_FAIL("lzf filter (32000): can't decode a chunk: %s", zarr_errmsg());
        }
    }
    else if (zarr__lzf_compress(*buf, nbytes, &out) != ZARR_OK) {
        zarr_buf_free(&out);
        return H5Z_FAIL("lzf filter (32000): can't encode a chunk: %s", zarr_errmsg());
    }
    return h5z_hand_back(&out, buf_size, buf);
}

static const H5Z_class2_t lzf_class = {
    H5Z_CLASS_T_VERS, (H5Z_filter_t)ZARR_H5Z_LZF, 1, 1, "lzf", NULL, lzf_set_local, lzf_filter};

H5Z_EXPORT H5PL_type_t
H5PLget_plugin_type(void)
{
    return H5PL_TYPE_FILTER;
}

H5Z_EXPORT const void *
H5PLget_plugin_info(void)
{
    return &lzf_class;
}
