/*
 * shard.c: sharded arrays from HDF5 programs (shard.h, docs/FORMAT.md "Sharding"). One job: the shard
 * shape policy and the sharded metadata built from it, and, for open arrays, which chunk HDF5 sees.
 *
 * The HDF5 chunk is the inner chunk. At H5Dcreate the dataset's array description arrives as if it
 * were unsharded (chunk grid = the HDF5 chunk, chain = bytes + the codecs of the dcpl's filters or of
 * the configured codec); h5zv_shard_apply then picks the shard shape, from H5Pset_zarr_shard on the
 * dcpl (checked: rank, multiples of the chunk, zarr v3) or else from the configuration's shard_bytes
 * (the policy below), and rewrites the description: chunk grid = shard shape, chain = one
 * sharding_indexed codec whose inner chain is exactly the unsharded one, so inner chunks hold the
 * bytes an unsharded chunk would. Index at the end, index codecs bytes (little) + crc32c, as zarr-python
 * 3 and zarrita write by default.
 *
 * The policy (shard_bytes = B > 0, zarr v3 arrays of rank >= 1), in inner chunks of C bytes
 * (uncompressed, the memory form's element size times the chunk's elements):
 *   - a shard holds at most max(1, B / C) inner chunks;
 *   - along each dimension it holds no more chunks than the array can have there: the extent in chunks
 *     of the max dims where finite (they bound every later H5Dset_extent), and exactly one chunk along
 *     unlimited dims (records are appended one at a time, e.g. netCDF record variables: a shard spanning
 *     many records would be read, patched and rewritten at every append, and unlimited means no bound);
 *   - it grows along the slowest (first) dimension first, as far as the budget allows, then the next;
 *     where the budget stops a dimension, the shards along it are made equal (the same number of shards,
 *     the chunks spread evenly) instead of a full run of shards and a nearly empty last one;
 *   - a shard of one inner chunk is no shard: the array is written unsharded.
 */
#include "h5zv.h"
#include "config.h"
#include "shard.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* The shard shape (in elements, into `shard`) for target `target` bytes; returns the number of inner
 * chunks per shard. `chunks`, `dims` (current extent) and `maxdims` (H5S_UNLIMITED allowed) per dim. */
static uint64_t
shard_policy(uint64_t target, int ndim, const uint64_t *chunks, const uint64_t *dims, const hsize_t *maxdims,
             size_t elsize, uint64_t *shard)
{
    uint64_t cbytes = elsize ? elsize : 1, budget, used = 1;
    for (int d = 0; d < ndim; d++)
        cbytes = chunks[d] && cbytes <= UINT64_MAX / chunks[d] ? cbytes * chunks[d] : UINT64_MAX;
    budget = target / cbytes ? target / cbytes : 1;
    for (int d = 0; d < ndim; d++) {
        uint64_t ext = maxdims[d] == H5S_UNLIMITED ? 0 : maxdims[d] > dims[d] ? maxdims[d] : dims[d];
        uint64_t cap = maxdims[d] == H5S_UNLIMITED ? 1 : ext / chunks[d] + (ext % chunks[d] != 0);
        uint64_t can = budget / used, n;
        if (cap < 1)
            cap = 1;
        if (cap <= can)
            n = cap;
        else { /* ceil(cap / can) shards along d, their chunks spread evenly */
            uint64_t nsh = cap / can + (cap % can != 0);
            n            = cap / nsh + (cap % nsh != 0);
        }
        shard[d] = n * chunks[d];
        used *= n;
    }
    return used;
}

/* The shard shape H5Pset_zarr_shard put on `dcpl_id`: 1 with *v filled, 0 when none, -1 (error pushed)
 * when the property is not what h5zarr.h writes. */
static int
shard_prop(hid_t dcpl_id, h5zarr_shard_t *v, const char *path)
{
    size_t sz  = 0;
    htri_t has = 0;
    if (dcpl_id == H5P_DEFAULT)
        return 0;
    H5E_BEGIN_TRY { has = H5Pexist(dcpl_id, H5ZARR_SHARD_PROP); }
    H5E_END_TRY
    if (has <= 0)
        return 0;
    if (H5Pget_size(dcpl_id, H5ZARR_SHARD_PROP, &sz) < 0 || sz != sizeof *v ||
        H5Pget(dcpl_id, H5ZARR_SHARD_PROP, v) < 0 || v->rank < 1 || v->rank > H5S_MAX_RANK) {
        h5zv_err_push(__func__, __LINE__,
                      "can't create dataset '/%s': the dcpl's property '%s' is not the shard shape "
                      "H5Pset_zarr_shard sets (another h5zarr.h version?)",
                      path, H5ZARR_SHARD_PROP);
        return -1;
    }
    return 1;
}

/* Rewrites `m` with chunk grid `shard` and the sharding_indexed codec around its chain. */
static int
shard_build(zarr_array_meta *m, const uint64_t *shard, const char *path)
{
    struct json_object *inner = NULL, *codec = NULL, *cfg, *list = NULL, *cs, *ix;
    zarr_chain         *c   = NULL;
    int                 ret = -1;

    if (zarr_chain_to_v3_json(m->chain, &inner) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't create dataset '/%s': its codecs", path);
    ix = json_tokener_parse("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                            "{\"name\":\"crc32c\"}]");
    if (!(codec = json_object_new_object()) || !(cfg = json_object_new_object()) ||
        !(cs = json_object_new_array()) || !ix || !(list = json_object_new_array()))
        H5ZV_GOTO_ERROR("can't create dataset '/%s': out of memory", path);
    json_object_object_add(codec, "name", json_object_new_string("sharding_indexed"));
    json_object_object_add(codec, "configuration", cfg);
    for (int d = 0; d < m->ndim; d++)
        json_object_array_add(cs, json_object_new_int64((int64_t)m->chunks[d]));
    json_object_object_add(cfg, "chunk_shape", cs);
    json_object_object_add(cfg, "codecs", inner);
    inner = NULL;
    json_object_object_add(cfg, "index_codecs", ix);
    json_object_object_add(cfg, "index_location", json_object_new_string("end"));
    json_object_array_add(list, codec);
    codec = NULL;
    if (zarr_chain_from_v3_json(list, m->dtype, m->ndim, &c) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't create dataset '/%s': the sharding codec", path);
    zarr_chain_free(m->chain);
    m->chain = c;
    memcpy(m->chunks, shard, (size_t)m->ndim * sizeof *shard);
    ret = 0;
done:
    json_object_put(inner);
    json_object_put(codec);
    json_object_put(list);
    return ret;
}

int
h5zv_shard_apply(const h5zv_settings *s, hid_t dcpl_id, const hsize_t *maxdims, zarr_array_meta *m,
                 const char *path)
{
    h5zarr_shard_t v;
    uint64_t       shard[ZARR_MAX_DIMS], bytes = m->dtype->size ? m->dtype->size : 1;
    int            has, ret                    = -1;

    if ((has = shard_prop(dcpl_id, &v, path)) < 0)
        goto done;
    if (has) {
        if (m->zarr_format != 3)
            H5ZV_GOTO_ERROR("can't create dataset '/%s': H5Pset_zarr_shard asks for a sharded array, and "
                            "this store is zarr v%d, which has no sharding (create the store as v3: "
                            "version=3 or H5Pset_fapl_zarr(fapl, 3))",
                            path, m->zarr_format);
        if (H5Pget_layout(dcpl_id) != H5D_CHUNKED)
            H5ZV_GOTO_ERROR("can't create dataset '/%s': H5Pset_zarr_shard needs a chunked layout (the "
                            "inner chunk: H5Pset_chunk on the same dcpl)",
                            path);
        if (v.rank != m->ndim)
            H5ZV_GOTO_ERROR("can't create dataset '/%s': H5Pset_zarr_shard gave %d shard dims for a "
                            "dataset of rank %d",
                            path, v.rank, m->ndim);
        for (int d = 0; d < m->ndim; d++) {
            if (v.dims[d] % m->chunks[d] != 0)
                H5ZV_GOTO_ERROR("can't create dataset '/%s': shard dim %d (%llu, H5Pset_zarr_shard) is not "
                                "a multiple of the chunk dim %d (%llu, H5Pset_chunk)",
                                path, d, (unsigned long long)v.dims[d], d, (unsigned long long)m->chunks[d]);
            if (bytes > UINT64_MAX / v.dims[d])
                H5ZV_GOTO_ERROR("can't create dataset '/%s': a shard of the shape H5Pset_zarr_shard gave "
                                "overflows 64 bits",
                                path);
            bytes *= v.dims[d];
            shard[d] = v.dims[d];
        }
        if (shard_build(m, shard, path) < 0)
            goto done;
    }
    else if (s->shard_bytes && m->zarr_format == 3 && m->ndim > 0) {
        /* a global shard_bytes does not apply to v2 stores (no sharding there): they stay unsharded */
        if (shard_policy(s->shard_bytes, m->ndim, m->chunks, m->shape, maxdims, m->dtype->size, shard) > 1 &&
            shard_build(m, shard, path) < 0)
            goto done;
    }
    ret = 0;
done:
    return ret;
}

/* `codec` (borrowed) when it is a sharding_indexed codec: its configuration's chunk_shape into
 * `chunks` (ndim entries, each > 0) and its inner `codecs` list (borrowed); else false. */
static bool
shard_level(struct json_object *codec, int ndim, hsize_t *chunks, struct json_object **codecs)
{
    struct json_object *nm, *cfg, *cs;
    if (!json_object_object_get_ex(codec, "name", &nm) ||
        strcmp(json_object_get_string(nm), "sharding_indexed") != 0 ||
        !json_object_object_get_ex(codec, "configuration", &cfg) ||
        !json_object_object_get_ex(cfg, "chunk_shape", &cs) || !json_object_is_type(cs, json_type_array) ||
        (int)json_object_array_length(cs) != ndim || !json_object_object_get_ex(cfg, "codecs", codecs) ||
        !json_object_is_type(*codecs, json_type_array))
        return false;
    for (int d = 0; d < ndim; d++) {
        int64_t x = json_object_get_int64(json_object_array_get_idx(cs, (size_t)d));
        if (x <= 0)
            return false;
        chunks[d] = (hsize_t)x;
    }
    return true;
}

void
h5zv_shard_hdf5_chunk(const zarr_array_meta *m, hsize_t *chunks)
{
    struct json_object *first = NULL, *codecs = NULL, *codec;
    hsize_t             level[ZARR_MAX_DIMS];
    /* the chain's first codec in written order: sharding there has no array->array codec before it */
    const char *name = m->ndim > 0 ? zarr_chain_codec_name(m->chain, 0) : NULL;

    for (int d = 0; d < m->ndim; d++)
        chunks[d] = m->chunks[d];
    /* no sharding first (the common case): its JSON is not built */
    if (!name || strcmp(name, "sharding_indexed") != 0 ||
        zarr_chain_codec_json(m->chain, 0, &first) != ZARR_OK)
        return;
    for (codec = first; codec && shard_level(codec, m->ndim, level, &codecs);) {
        memcpy(chunks, level, (size_t)m->ndim * sizeof *chunks);
        codec = json_object_array_length(codecs) ? json_object_array_get_idx(codecs, 0) : NULL;
    }
    json_object_put(first);
}
