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
 *
 * Sharding (docs/FORMAT.md "Sharding"): H5Pset_zarr_shard below sets the shard shape of one dataset on
 * its dcpl; the configuration key shard_bytes=<n> gives every new v3 array of a store a shard shape
 * chosen by the connector.
 */
#ifndef H5ZARR_H5ZARR_H
#define H5ZARR_H5ZARR_H

#include <hdf5.h>
#include <string.h>

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

/* For the setters below: `plist_id` is of class `cls` (else an HDF5 error `msg` pushed: false). */
static inline int
h5zarr_plist_of_(hid_t plist_id, hid_t cls, const char *msg)
{
    if (H5Pisa_class(plist_id, cls) > 0)
        return 1;
    H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_ARGS, H5E_BADTYPE, "%s", msg);
    return 0;
}

/* Sets property `name` (inserted into the list itself when it is not there yet, `have` says whether it
 * is; no callbacks) to `size` bytes at `value`. */
static inline herr_t
h5zarr_prop_put_(hid_t plist_id, const char *name, htri_t have, size_t size, void *value)
{
    if (have)
        return H5Pset(plist_id, name, value);
    return H5Pinsert2(plist_id, name, size, value, NULL, NULL, NULL, NULL, NULL, NULL);
}

/* ---- sharding --------------------------------------------------------------------------------------
 * H5Pset_zarr_shard(dcpl, rank, shard_dims): the dataset created with `dcpl` in a zarr v3 store is a
 * sharded array (codec sharding_indexed): each zarr chunk (a shard, one store value) holds a block of
 * shard_dims elements, cut into inner chunks of the dcpl's chunk shape (H5Pset_chunk), each encoded with
 * the dcpl's filters and located by an index at the end of the shard. shard_dims[i] must be a multiple
 * of the chunk's dim i, and `rank` the dataset's rank: both are checked at H5Dcreate, which fails with a
 * message naming the dimension. It wins over the configuration's shard_bytes. In a zarr v2 store (which
 * has no sharding) H5Dcreate fails. rank 0 removes the setting.
 *
 * Where it is kept: a property named H5ZARR_SHARD_PROP inserted into the dcpl itself (H5Pinsert2, an
 * h5zarr_shard_t value, no callbacks): H5Pcopy copies it, the connector reads it in H5Dcreate, and
 * libraries that do not know it (the native connector) ignore it. H5Pencode does not encode inserted
 * properties, so it is not in the dcpl a dataset reports after reopening (whose chunk is the inner
 * chunk; the shard shape is the array's chunk grid in its zarr.json).
 * ------------------------------------------------------------------------------------------------------ */
#define H5ZARR_SHARD_PROP "h5zarr_shard_dims"

typedef struct h5zarr_shard_t {
    int     rank;                   /* 1..H5S_MAX_RANK */
    hsize_t dims[H5S_MAX_RANK + 1]; /* shard shape in elements, dims[0..rank-1] */
} h5zarr_shard_t;

/* Sets (or with rank 0 removes) the shard shape of datasets created with `dcpl_id`. Negative on failure
 * (not a dcpl, rank out of range, a zero or missing dim), with an HDF5 error pushed. */
static inline herr_t
H5Pset_zarr_shard(hid_t dcpl_id, int rank, const hsize_t *shard_dims)
{
    h5zarr_shard_t v;
    htri_t         have;
    if (!h5zarr_plist_of_(dcpl_id, H5P_DATASET_CREATE,
                          "H5Pset_zarr_shard: not a dataset creation property list"))
        return -1;
    if ((have = H5Pexist(dcpl_id, H5ZARR_SHARD_PROP)) < 0)
        return -1;
    if (rank == 0)
        return have ? H5Premove(dcpl_id, H5ZARR_SHARD_PROP) : 0;
    memset(&v, 0, sizeof v);
    v.rank = rank;
    for (int i = 0; rank > 0 && rank <= H5S_MAX_RANK && shard_dims && i < rank; i++)
        if ((v.dims[i] = shard_dims[i]) == 0)
            v.rank = -1;
    if (rank < 0 || rank > H5S_MAX_RANK || !shard_dims || v.rank < 0) {
        H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_ARGS, H5E_BADVALUE,
                 "H5Pset_zarr_shard: want rank 1..%d and that many shard dims > 0 (rank 0 removes)",
                 H5S_MAX_RANK);
        return -1;
    }
    return h5zarr_prop_put_(dcpl_id, H5ZARR_SHARD_PROP, have, sizeof v, &v);
}

/* The shard shape H5Pset_zarr_shard set on `dcpl_id`: its rank (0 when none is set), the first
 * `max_rank` dims into `shard_dims` (may be NULL). Negative on failure. */
static inline int
H5Pget_zarr_shard(hid_t dcpl_id, int max_rank, hsize_t *shard_dims)
{
    h5zarr_shard_t v;
    htri_t         have = H5Pexist(dcpl_id, H5ZARR_SHARD_PROP);
    if (have <= 0)
        return have < 0 ? -1 : 0;
    if (H5Pget(dcpl_id, H5ZARR_SHARD_PROP, &v) < 0)
        return -1;
    for (int i = 0; shard_dims && i < v.rank && i < max_rank; i++)
        shard_dims[i] = v.dims[i];
    return v.rank;
}

/* ---- raw chunks vouched for -------------------------------------------------------------------------
 * H5Pset_zarr_raw_trusted(dxpl, 1): H5Dwrite_chunk with this dxpl stores each chunk's bytes as they are,
 * without the connector's check that they decode with the array's codecs (by default every raw chunk is
 * decoded once before it is stored, so a store never holds a chunk no reader can decode). For bytes that
 * another encoder of the same codecs wrote: h5zarr-convert sets it for the chunks it copies from an HDF5
 * file with H5Dread_chunk (its --verify compares them afterwards). Kept as a property inserted into the
 * dxpl (H5ZARR_RAW_TRUSTED_PROP, an hbool_t); the native connector ignores it. Negative on failure. */
#define H5ZARR_RAW_TRUSTED_PROP "h5zarr_raw_trusted"

static inline herr_t
H5Pset_zarr_raw_trusted(hid_t dxpl_id, hbool_t on)
{
    htri_t have;
    if (!h5zarr_plist_of_(dxpl_id, H5P_DATASET_XFER,
                          "H5Pset_zarr_raw_trusted: not a dataset transfer property list") ||
        (have = H5Pexist(dxpl_id, H5ZARR_RAW_TRUSTED_PROP)) < 0)
        return -1;
    return h5zarr_prop_put_(dxpl_id, H5ZARR_RAW_TRUSTED_PROP, have, sizeof on, &on);
}

#endif
