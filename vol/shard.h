/*
 * shard.h: sharded arrays from HDF5 programs (vol/shard.c; docs/FORMAT.md "Sharding"): the shard shape
 * a new dataset gets (H5Pset_zarr_shard on its dcpl, else the policy for the configuration's
 * shard_bytes), the sharding_indexed chain built around its unsharded codecs, and the HDF5 chunk an
 * open sharded array reports (the inner chunk).
 */
#ifndef H5ZV_SHARD_H
#define H5ZV_SHARD_H

#include <hdf5.h>

#include "h5zarr/zarr.h"

struct h5zv_settings;

/* Makes the new array description `m` (borrowed, modified in place) sharded when its dcpl or the
 * settings ask for it: `m` arrives with its chunk shape (the HDF5 chunk) and its unsharded chain (bytes
 * codec + the filters' codecs, vol/filter.c, or the configured codec); it leaves with the shard shape as
 * its chunk grid and one sharding_indexed codec (chunk_shape = the HDF5 chunk, codecs = that chain,
 * index bytes little + crc32c at the end). Unchanged when nothing asks for sharding, for zarr v2 under a
 * global shard_bytes, for scalars, and when the policy's shard would hold one inner chunk.
 * `maxdims` are the dataspace's (H5S_UNLIMITED allowed; unused for ndim 0), `dcpl_id` the one
 * H5Dcreate got (borrowed), `path` names the dataset in messages. 0, or -1 with an error pushed
 * (H5Pset_zarr_shard on a v2 store, on a dataset that is not chunked, of another rank, with a dim that
 * is not a multiple of the chunk's, or a shard too large). */
int h5zv_shard_apply(const struct h5zv_settings *s, hid_t dcpl_id, const hsize_t *maxdims, zarr_array_meta *m,
                     const char *path);

/* The HDF5 chunk shape of array `m` (borrowed) into `chunks` (m->ndim entries): for a sharded array
 * the inner chunk (through nested sharding_indexed codecs, the innermost), else the chunk grid. A
 * sharding codec after an array->array codec (a transpose, whose inner chunk shape is in the transposed
 * order) reports the chunk of the level above it. */
void h5zv_shard_hdf5_chunk(const zarr_array_meta *m, hsize_t *chunks);

#endif
