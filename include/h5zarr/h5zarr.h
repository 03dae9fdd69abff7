/*
 * h5zarr.h: what an HDF5 program needs to choose the zarr VOL connector in code rather than through
 * the environment (HDF5_VOL_CONNECTOR=zarr, HDF5_PLUGIN_PATH=<plugin folder>).
 *
 * Header-only: the connector is a loadable plugin, so this registers it by name (HDF5 finds it on
 * HDF5_PLUGIN_PATH) and sets it on a file access property list with its info.
 *
 * Configuration (docs/CONFIG.md): the connector's settings come from its info (the info string of
 * HDF5_VOL_CONNECTOR="zarr version=2 threads=4 codec=zstd:3", or the h5zarr_info_t below), from the
 * file named by H5ZARR_CONFIG (or by the info key `config=<path>`), and from built-in defaults, in that
 * order of precedence.
 */
#ifndef H5ZARR_H5ZARR_H
#define H5ZARR_H5ZARR_H

#include <hdf5.h>

#define H5ZARR_VOL_NAME  "zarr"
#define H5ZARR_VOL_VALUE ((H5VL_class_value_t)8261)

/* h5zarr_info_t.create: which NEW paths (H5Fcreate) are zarr stores. */
#define H5ZARR_CREATE_UNSET 0 /* not said here: the config file's `create`, else auto */
#define H5ZARR_CREATE_AUTO  1 /* paths ending in .zarr or .zr3, or matched by a rule with format = zarr */
#define H5ZARR_CREATE_ZARR  2 /* every new path */

/* The connector's info (what `HDF5_VOL_CONNECTOR="zarr version=2 threads=4"` sets). A zero field is
 * "not set here" (the config file or the default decides). The typed fields override the same keys in
 * `options`. HDF5 copies, compares and frees the info through the connector (deep copy of `options`);
 * an application passing one to H5Pset_vol keeps ownership of its own. */
typedef struct h5zarr_info_t {
    int zarr_format; /* zarr format of stores created: 2 or 3 (0 = not set; default 3) */
    int nthreads;    /* engine threads (0 = not set; default: H5ZARR_THREADS or the number of cores) */
    int create;      /* H5ZARR_CREATE_* */
    /* Further settings as info-string text, "key=value key=value" (NULL = none): e.g.
     * "codec=zstd:3 chunks=auto consolidated=1 config=/etc/h5zarr.conf". Validated when a file is
     * created or opened, not here: a bad key fails that H5Fcreate/H5Fopen naming it. */
    const char *options;
} h5zarr_info_t;

/* Sets the zarr connector on `fapl_id` with settings as info-string text (`options`, copied; NULL = none),
 * e.g. H5Pset_fapl_zarr_opts(fapl, 3, "codec=zstd:3 consolidated=1"); see H5Pset_fapl_zarr. */
static inline herr_t
H5Pset_fapl_zarr_opts(hid_t fapl_id, int zarr_format, const char *options)
{
    h5zarr_info_t info = {zarr_format, 0, H5ZARR_CREATE_ZARR, options};
    hid_t         vol  = H5VLregister_connector_by_name(H5ZARR_VOL_NAME, H5P_DEFAULT);
    herr_t        ret;

    if (vol < 0)
        return -1;
    ret = H5Pset_vol(fapl_id, vol, &info);
    H5VLclose(vol);
    return ret;
}

/* Sets the zarr connector on `fapl_id`: a program that chooses it in code means zarr, so every new
 * path of this fapl is a zarr store (create = H5ZARR_CREATE_ZARR). `zarr_format` 2 or 3 (0: the
 * configured default). Returns a negative value on failure (connector not found). */
static inline herr_t
H5Pset_fapl_zarr(hid_t fapl_id, int zarr_format)
{
    return H5Pset_fapl_zarr_opts(fapl_id, zarr_format, NULL);
}

#endif
