/*
 * h5zarr.h: what an HDF5 program needs to choose the zarr VOL connector in code rather than through
 * the environment (HDF5_VOL_CONNECTOR=zarr, HDF5_PLUGIN_PATH=<plugin folder>).
 *
 * Header-only: the connector is a loadable plugin, so this registers it by name (HDF5 finds it on
 * HDF5_PLUGIN_PATH) and sets it on a file access property list with its info.
 */
#ifndef H5ZARR_H5ZARR_H
#define H5ZARR_H5ZARR_H

#include <hdf5.h>

#define H5ZARR_VOL_NAME  "zarr"
#define H5ZARR_VOL_VALUE ((H5VL_class_value_t)8261)

/* The connector's info (what `HDF5_VOL_CONNECTOR="zarr version=2 threads=4"` sets). */
typedef struct h5zarr_info_t {
    int zarr_format; /* zarr format of stores created: 2 or 3 (0 = default, 3) */
    int nthreads;    /* engine threads (0 = default: H5ZARR_THREADS or the number of cores) */
} h5zarr_info_t;

/* Sets the zarr connector on `fapl_id`. Returns a negative value on failure (connector not found). */
static inline herr_t
H5Pset_fapl_zarr(hid_t fapl_id, int zarr_format)
{
    h5zarr_info_t info = {zarr_format, 0};
    hid_t         vol  = H5VLregister_connector_by_name(H5ZARR_VOL_NAME, H5P_DEFAULT);
    herr_t        ret;

    if (vol < 0)
        return -1;
    ret = H5Pset_vol(fapl_id, vol, &info);
    H5VLclose(vol);
    return ret;
}

#endif
