/*
 * dataset.c: HDF5 datasets as zarr arrays: create (dcpl -> chunk grid, fill value, max dims), open
 * (the dcpl rebuilt from the store), read and write with any selections and type conversion, get,
 * set_extent, close.
 *
 * A read or write resolves everything HDF5-specific on the calling thread: the file selection becomes
 * a zarr_region (a regular hyperslab, or the bounding box of an irregular one), the memory selection
 * a dense buffer (the caller's own when it is contiguous and the types match: zero copies), and type
 * conversion runs with H5Tconvert. The core then does the whole region as one batched job.
 */
#include "h5zv.h"
#include "config.h"
#include "reserved.h"
#include "shard.h"
#include "mpi_vol.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* Engine options of the dataset's array from the file's settings (threads, write_empty_chunks) and the
 * handle's dapl (a chunk cache at least as large as H5Pset_chunk_cache asks: netCDF sizes it to hold
 * a variable's chunk, and partial writes of a larger chunk would each rewrite it): set whenever the
 * array is handed to the engine, since the node cache may have reloaded it. */
static void
dset_engine_opts(const h5zv_obj *o, h5zv_node *n)
{
    zarr_engine_opts eo;
    if (n && n->a) {
        h5zv_config_engine_opts(h5zv_file_settings(o->file), &eo);
        if (o->rdcc_nbytes > eo.cache_bytes)
            eo.cache_bytes = o->rdcc_nbytes;
        zarr_array_set_opts(n->a, &eo);
    }
}

/* Keeps a copy of a non-default dapl on dataset handle `d`, and its chunk cache size. */
static void
dset_take_dapl(h5zv_obj *d, hid_t dapl_id)
{
    size_t nslots = 0, nbytes = 0;
    double w0 = 0;
    if (dapl_id == H5P_DEFAULT || dapl_id == H5P_DATASET_ACCESS_DEFAULT)
        return;
    if (d->dapl_id >= 0)
        H5Pclose(d->dapl_id);
    d->dapl_id     = H5Pcopy(dapl_id);
    d->rdcc_nbytes = 0;
    if (H5Pget_chunk_cache(dapl_id, &nslots, &nbytes, &w0) >= 0 && nbytes != H5D_CHUNK_CACHE_NBYTES_DEFAULT)
        d->rdcc_nbytes = nbytes;
}

/* The dataset's node. The one found last is kept on the handle while no node joined, left or moved in the
 * file's cache (cache_gen): netCDF asks every variable's space for a dimension's length (nc4_find_dim_len),
 * and each lookup by path hashed and compared the whole path. */
static h5zv_node *
dset_node(h5zv_obj *o)
{
    h5zv_node *n = o->node && o->node_gen == o->file->cache_gen ? o->node : NULL;
    if (!n && (n = h5zv_node_get(o->file, o->path)))
        o->node = n, o->node_gen = o->file->cache_gen, o->node_virtual = h5zv_virtual_is(n);
    if (n && n->type != ZARR_NODE_ARRAY) {
        h5zv_err_push(__func__, __LINE__, "'/%s' is not a dataset", o->path);
        return NULL;
    }
    dset_engine_opts(o, n);
    return n;
}

/* The dataset's current dataspace (new id) from its node: shape, recorded max dims, null spaces. */
static hid_t
dset_space(h5zv_node *n)
{
    const zarr_array_meta *m    = zarr_array_meta_get(n->a);
    struct json_object    *meta = h5zv_node_meta(n, false), *v;
    hsize_t                dims[ZARR_MAX_DIMS], maxdims[ZARR_MAX_DIMS];

    h5zv_jpath w, e;

    if (meta && (json_object_object_get_ex(meta, "null_space", NULL) ||
                 json_object_object_get_ex(meta, "maxdims", NULL))) { /* for messages (~1.6k instructions) */
        h5zv_meta_where(&w, n, "");
        w.s[strlen(w.s) - 1] =
            '\0'; /* "... _h5zarr." -> "... _h5zarr": the fields below are named after it */
    }
    if (meta && json_object_object_get_ex(meta, "null_space", &v)) {
        bool ns = false;
        if (h5zv_json_bool(meta, w.s, "null_space", true, &ns) < 0)
            return H5I_INVALID_HID;
        if (ns)
            return H5Screate(H5S_NULL);
    }
    if (m->ndim == 0)
        return H5Screate(H5S_SCALAR);
    for (int i = 0; i < m->ndim; i++)
        dims[i] = maxdims[i] = m->shape[i];
    if (meta && json_object_object_get_ex(meta, "maxdims", &v)) {
        /* m->ndim sizes, each -1 (unlimited) or at least the current size */
        struct json_object *l = NULL;
        if (h5zv_json_list(meta, w.s, "maxdims", true, (size_t)m->ndim, (size_t)m->ndim, &l) < 0)
            return H5I_INVALID_HID;
        h5zv_jpath_key(&e, w.s, "maxdims");
        for (int i = 0; i < m->ndim; i++) {
            struct json_object *x = json_object_array_get_idx(l, (size_t)i);
            uint64_t            u = 0;
            h5zv_jpath          q;
            if (json_object_is_type(x, json_type_int) && json_object_get_int64(x) == -1)
                maxdims[i] = H5S_UNLIMITED;
            else if (h5zv_json_uint_val(x, h5zv_jpath_idx(&q, e.s, (size_t)i), m->shape[i], INT64_MAX, &u) <
                     0)
                return H5I_INVALID_HID;
            else
                maxdims[i] = (hsize_t)u;
        }
    }
    return H5Screate_simple(m->ndim, dims, maxdims);
}

/* Replaces d->space_id with the node's current dataspace (another handle may have resized it), unless
 * it was built from the node's shape as it is (the same shape_stamp): netCDF asks every variable's
 * space whenever it needs an unlimited dimension's length. */
static int
dset_refresh_space(h5zv_obj *d, h5zv_node *n)
{
    hid_t s;
    if (d->space_id >= 0 && d->space_stamp && d->space_stamp == n->shape_stamp)
        return 0;
    if ((s = dset_space(n)) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't build the dataspace of '/%s'", d->path);
        return -1;
    }
    if (d->space_id >= 0)
        H5Sclose(d->space_id);
    d->space_id    = s;
    d->space_stamp = n->shape_stamp;
    return 0;
}

/* Builds the dataset object's type and space from its node; the dcpl and dapl are made when asked for
 * (dset_dcpl; H5Dopen of 1000 datasets otherwise decodes 1000 dcpls nobody reads). */
static int
dset_load(h5zv_obj *d, h5zv_node *n)
{
    const zarr_array_meta *m    = zarr_array_meta_get(n->a);
    struct json_object    *meta = h5zv_node_meta(n, false);

    if ((d->type_id = h5zv_type_keep(h5zv_type_from_zarr(m->dtype, meta))) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't map the data type of '/%s' to HDF5", d->path);
        return -1;
    }
    return dset_refresh_space(d, n);
}

/* ---- fill values of types with pointers ------------------------------------------------------------
 * HDF5 keeps a dcpl's fill value as one element in memory form; for a type holding pointers (vlen
 * strings, vlen sequences, references, compounds and arrays of them) that element holds pointers of
 * the writing process, which H5Pencode copies as they are (issue 12: reading them back crashed every
 * reader). Such a dcpl is persisted with its fill value taken out (undefined) and the value kept as
 * data in `_h5zarr`: "fill" for a plain vlen string (the string; null for a NULL pointer), otherwise
 * "fill_packed" (the packed form, base64). A plain vlen string's fill is also zarr's `fill_value`, so
 * unwritten elements read as it. docs/FORMAT.md describes both. */

/* Records the user-defined fill value of `dcpl_id` (type `type_id` holds pointers) in `meta` (borrowed)
 * and, for a plain vlen string, as `m`'s zarr fill value. */
static int
fill_record(h5zv_file *f, hid_t dcpl_id, hid_t type_id, zarr_array_meta *m, const char *path,
            struct json_object *meta)
{
    hid_t     mf   = h5zv_type_memform(type_id);
    void     *elem = NULL;
    bool      got  = false;
    zarr_vlen pk   = {0, NULL};
    char     *b64  = NULL;
    int       ret  = -1;

    if (mf < 0 || !(elem = calloc(1, H5Tget_size(mf))))
        H5ZV_GOTO_ERROR("can't set up the fill value of dataset '/%s'", path);
    if (H5Pget_fill_value(dcpl_id, mf, elem) < 0)
        H5ZV_GOTO_ERROR("can't read the fill value of dataset '/%s'", path);
    got = true;
    if (H5Tget_class(mf) == H5T_STRING && H5Tis_variable_str(mf) > 0) {
        char *str, *c;
        memcpy(&str, elem, sizeof str);
        if (!str) {
            json_object_object_add(meta, "fill", NULL);
            ret = 0;
            goto done;
        }
        if (h5zv_utf8_ok(str)) {
            json_object_object_add(meta, "fill", json_object_new_string(str));
            if (m->dtype->kind == ZARR_VLEN_UTF8) {
                if (!(c = strdup(str)))
                    H5ZV_GOTO_ERROR("out of memory");
                zarr_dtype_clear_elems(m->dtype, m->fill, 1);
                memcpy(m->fill, &c, sizeof c);
                m->fill_defined = true;
            }
            ret = 0;
            goto done;
        }
    }
    h5zv_refs_begin(f);
    if (h5zv_enc_pack(mf, elem, &pk) < 0) {
        h5zv_refs_end();
        H5ZV_GOTO_ERROR("can't pack the fill value of dataset '/%s'", path);
    }
    h5zv_refs_end();
    if (!(b64 = h5zv_b64_encode(pk.p ? pk.p : "", pk.len)))
        H5ZV_GOTO_ERROR("out of memory");
    json_object_object_add(meta, "fill_packed", json_object_new_string(b64));
    ret = 0;
done:
    if (got)
        h5zv_reclaim(mf, 1, elem);
    free(elem);
    free(pk.p);
    free(b64);
    h5zv_close(mf);
    return ret;
}

/* Records in `meta` the dcpl `dcpl_id` (JSON, vol/reserved.h) with its fill value taken out (made
 * undefined): a type holding pointers has its fill recorded beside it (fill_record). */
static int
fill_dcpl_json(hid_t dcpl_id, hid_t type_id, struct json_object *meta, const char *path)
{
    hid_t               c   = H5Pcopy(dcpl_id);
    struct json_object *dj  = NULL;
    int                 ret = -1;
    if (c < 0 || H5Pset_fill_value(c, type_id, NULL) < 0 || h5zv_dcpl_to_json(c, type_id, &dj) < 0 ||
        h5zv_filters_record_prune(c, dj) < 0)
        H5ZV_GOTO_ERROR("can't record the dcpl of '/%s'", path);
    json_object_object_add(meta, "dcpl", dj);
    ret = 0;
done:
    h5zv_close(c);
    return ret;
}

/* Puts the fill value recorded by fill_record back on the rebuilt dcpl `p` of dataset `d` (its type
 * holds pointers). A user-defined fill without a record is from a store written before: its bytes were
 * a pointer, zeroed by h5zv_plist_decode; the value is lost, and `p` gets HDF5's default fill (what
 * unwritten elements of such a store read as). */
static int
fill_restore(h5zv_obj *d, struct json_object *meta, hid_t p)
{
    struct json_object *v;
    hid_t               mf   = H5I_INVALID_HID;
    void               *elem = NULL;
    uint8_t            *raw  = NULL;
    size_t              nraw = 0;
    bool                got  = false;
    H5D_fill_value_t    fs   = H5D_FILL_VALUE_UNDEFINED;
    int                 ret  = -1;

    if (meta && json_object_object_get_ex(meta, "fill", &v)) {
        const char *str = v ? json_object_get_string(v) : NULL;
        if ((mf = h5zv_type_memform(d->type_id)) < 0)
            H5ZV_GOTO_ERROR("can't set up the fill value of dataset '/%s'", d->path);
        if ((v && !json_object_is_type(v, json_type_string)) || H5Tget_class(mf) != H5T_STRING ||
            H5Tis_variable_str(mf) <= 0)
            H5ZV_GOTO_ERROR("dataset '/%s': %s.fill must be a string (or null) of a variable-length string "
                            "dataset",
                            d->path, H5ZV_META_KEY);
        if (H5Pset_fill_value(p, mf, &str) < 0)
            H5ZV_GOTO_ERROR("can't set the fill value of dataset '/%s'", d->path);
    }
    else if (meta && json_object_object_get_ex(meta, "fill_packed", &v)) {
        zarr_vlen in;
        if ((mf = h5zv_type_memform(d->type_id)) < 0 || !(elem = calloc(1, H5Tget_size(mf))))
            H5ZV_GOTO_ERROR("can't set up the fill value of dataset '/%s'", d->path);
        if (!json_object_is_type(v, json_type_string) ||
            !(raw = h5zv_b64_decode(json_object_get_string(v), &nraw)))
            H5ZV_GOTO_ERROR("dataset '/%s': %s.fill_packed is not base64 text", d->path, H5ZV_META_KEY);
        in.len = nraw;
        in.p   = raw;
        h5zv_refs_begin(d->file);
        got = h5zv_enc_unpack(mf, &in, elem) >= 0;
        h5zv_refs_end();
        if (!got) {
            h5zv_reclaim(mf, 1, elem);
            H5ZV_GOTO_ERROR("dataset '/%s': %s.fill_packed does not match the dataset's datatype", d->path,
                            H5ZV_META_KEY);
        }
        if (H5Pset_fill_value(p, mf, elem) < 0)
            H5ZV_GOTO_ERROR("can't set the fill value of dataset '/%s'", d->path);
    }
    else if (H5Pfill_value_defined(p, &fs) >= 0 && fs == H5D_FILL_VALUE_USER_DEFINED) {
        H5D_fill_time_t  ft = H5D_FILL_TIME_IFSET, ft0 = H5D_FILL_TIME_IFSET;
        H5D_alloc_time_t at = H5D_ALLOC_TIME_DEFAULT, at0 = H5D_ALLOC_TIME_DEFAULT;
        H5Pget_fill_time(p, &ft);
        H5Pget_alloc_time(p, &at);
        size_t sz = 0;
        /* the default list's fill property (no buffer, no type: nothing to free) in place of p's */
        if (H5Pget_size(p, "fill_value", &sz) < 0 || !(raw = calloc(1, sz)) ||
            H5Pget(H5P_DATASET_CREATE_DEFAULT, "fill_value", raw) < 0 || H5Pset(p, "fill_value", raw) < 0)
            H5ZV_GOTO_ERROR("can't reset the fill value of dataset '/%s'", d->path);
        H5Pget_fill_time(p, &ft0);
        H5Pget_alloc_time(p, &at0);
        if ((ft != ft0 && H5Pset_fill_time(p, ft) < 0) || (at != at0 && H5Pset_alloc_time(p, at) < 0))
            H5ZV_GOTO_ERROR("can't reset the fill value of dataset '/%s'", d->path);
    }
    ret = 0;
done:
    if (got)
        h5zv_reclaim(mf, 1, elem);
    free(elem);
    free(raw);
    h5zv_close(mf);
    return ret;
}

/* True for HDF5's default dcpl: H5P_DATASET_CREATE_DEFAULT (what H5Dcreate passes for H5P_DEFAULT) or
 * H5P_DEFAULT. That list is never changed (h5zv_dcpl_to_json keeps its JSON too), so its properties are
 * known without asking HDF5 per dataset: contiguous, no filters, no external files, the default fill
 * value written if set. */
static bool
dcpl_default(hid_t dcpl)
{
    return dcpl == H5P_DATASET_CREATE_DEFAULT || dcpl == H5P_DEFAULT;
}

/* True if dcpl_inferred sets a fill value. */
static bool
inf_fill(const zarr_array_meta *m, bool fill_default)
{
    return !fill_default && m->fill_defined && !zarr_dtype_has_vlen(m->dtype);
}

/* The dcpl a reader infers from the zarr metadata `m` of a dataset of HDF5 type `type` when `_h5zarr`
 * records none (docs/FORMAT.md, "What is left out"): chunked as the chunk grid (a sharded array's inner
 * chunk), zarr's fill value as a user-defined fill unless `fill_default` (or the type has vlen parts),
 * everything else HDF5's defaults; no filters (callers add the codecs'). New id, or negative. */
static hid_t
dcpl_inferred(const zarr_array_meta *m, hid_t type, bool fill_default)
{
    hsize_t chunks[ZARR_MAX_DIMS];
    hid_t   p = H5Pcreate(H5P_DATASET_CREATE), mf = H5I_INVALID_HID;
    if (p < 0)
        return p;
    h5zv_shard_hdf5_chunk(m, chunks); /* the chunk grid, or a sharded array's inner chunk */
    if ((m->ndim > 0 && H5Pset_chunk(p, m->ndim, chunks) < 0) ||
        (inf_fill(m, fill_default) &&
         ((mf = h5zv_type_memform(type)) < 0 || H5Pset_fill_value(p, mf, m->fill) < 0))) {
        h5zv_close(p);
        p = H5I_INVALID_HID;
    }
    h5zv_close(mf);
    return p;
}

/* True if the dcpl lists an hdf5_lz4 filter (its flags and cd_values are read back from the record:
 * vol/filter.c persisted_lz4). */
static bool
dcpl_has_lz4(hid_t dcpl)
{
    int n = H5Pget_nfilters(dcpl);
    for (int i = 0; i < n; i++) {
        unsigned fl = 0;
        size_t   nc = 0;
        if (H5Pget_filter2(dcpl, (unsigned)i, &fl, &nc, NULL, 0, NULL, NULL) ==
            32004 /* lz4, HDF5's registered id (vol/filter.c) */)
            return true;
    }
    return false;
}

/* What `_h5zarr.dcpl` keeps of the dcpl `dcpl_id` of a new dataset of type `type_id` whose zarr metadata
 * is `m` (filters as codecs, fill value set; `fill_default` as recorded): *out NULL when a reader infers
 * the same list from the zarr metadata (dcpl_inferred), else the JSON form without the filters, which a
 * reader takes from the codecs (kept only with an lz4 filter or a filter left out of the codecs:
 * vol/filter.c h5zv_filters_record_prune). -1 with an error pushed. */
static int
dcpl_record(hid_t dcpl_id, hid_t type_id, const zarr_array_meta *m, bool fill_default, const char *path,
            const h5zv_dcpl_known *k, struct json_object **out)
{
    struct json_object *dj = NULL, *ij = NULL;
    hid_t               inf  = H5I_INVALID_HID;
    bool                keep = !dcpl_default(dcpl_id) && (!k || k->nfilters > 0) &&
                (dcpl_has_lz4(dcpl_id) || h5zv_filters_any_left_out(dcpl_id)); /* filters */
    int ret = -1;
    /* a reader infers HDF5's default list for a scalar without a fill value of its own (dcpl_inferred
     * sets nothing then): its JSON is h5zv_dcpl_to_json's kept copy, no list is made and closed */
    bool inf_default = m->ndim == 0 && !inf_fill(m, fill_default);

    *out = NULL;
    if (!keep && inf_default && dcpl_default(dcpl_id))
        return 0; /* the default list, as inferred */
    if ((k && !dcpl_default(dcpl_id) ? h5zv_dcpl_to_json_known(dcpl_id, type_id, k, &dj)
                                     : h5zv_dcpl_to_json(dcpl_id, type_id, &dj)) < 0)
        H5ZV_GOTO_ERROR("can't record the dcpl of '/%s'", path);
    if (!keep)
        json_object_object_del(dj, "filters");
    else if (h5zv_filters_record_prune(dcpl_id, dj) < 0)
        H5ZV_GOTO_ERROR("can't record the dcpl of '/%s'", path);
    /* the inferred list is chunked for every array with dimensions: a list of another layout (HDF5's
     * default, contiguous) can't equal it, and is recorded without building it */
    if (!keep && m->ndim > 0 && (k ? k->layout : H5Pget_layout(dcpl_id)) != H5D_CHUNKED)
        ;
    else if (!keep && !inf_default && !inf_fill(m, fill_default)) {
        /* the inferred list is a default one made chunked: its JSON is kept per chunk shape, not built,
         * converted and closed per dataset (a shape HDF5 refuses is recorded, as when dcpl_inferred fails) */
        hsize_t             chunks[ZARR_MAX_DIMS];
        struct json_object *cj;
        h5zv_shard_hdf5_chunk(m, chunks);
        if ((cj = h5zv_dcpl_chunked_json(m->ndim, chunks)) && json_object_equal(dj, cj)) {
            ret = 0; /* nothing a reader would not infer */
            goto done;
        }
    }
    else if (!keep &&
             (inf_default ? h5zv_dcpl_to_json(H5P_DATASET_CREATE_DEFAULT, type_id, &ij) == 0
                          : (inf = dcpl_inferred(m, type_id, fill_default)) >= 0 &&
                                h5zv_dcpl_to_json(inf, type_id, &ij) == 0) &&
             json_object_equal(dj, ij)) {
        ret = 0; /* nothing a reader would not infer */
        goto done;
    }
    *out = dj;
    dj   = NULL;
    ret  = 0;
done:
    json_object_put(dj);
    json_object_put(ij);
    h5zv_close(inf);
    return ret;
}

/* The dataset's dcpl (made on first use): the one the dataset was created with when this connector
 * made it, or one rebuilt from the zarr metadata otherwise; its filters are the codecs' (set_local
 * values filled in, as a native file reports them). */
static int
dset_dcpl(h5zv_obj *d)
{
    h5zv_node             *n;
    const zarr_array_meta *m;
    struct json_object    *meta, *v;
    hid_t                  p   = H5I_INVALID_HID;
    int                    ret = -1;

    if (d->dcpl_id >= 0)
        return 0;
    if (!(n = dset_node(d)))
        return -1;
    m    = zarr_array_meta_get(n->a);
    meta = h5zv_node_meta(n, false);
    if (meta && json_object_object_get_ex(meta, "dcpl", &v) && json_object_is_type(v, json_type_string) &&
        !strcmp(json_object_get_string(v), "default")) {
        /* made with HDF5's default dcpl (contiguous, default fill; written by earlier versions) */
        if ((p = H5Pcreate(H5P_DATASET_CREATE)) < 0 || h5zv_filters_from_chain(m, p) < 0)
            goto done;
    }
    else if (meta && json_object_object_get_ex(meta, "dcpl", &v) && h5zv_reserved_legacy(v)) {
        /* the earlier form (H5Pencode): not decoded (vol/reserved_legacy.c converts it when allowed) */
        h5zv_jpath w;
        H5ZV_LEGACY_REFUSE(h5zv_meta_where(&w, n, "dcpl"), "H5Pencode");
        goto done;
    }
    else if (meta && json_object_object_get_ex(meta, "dcpl", &v)) {
        /* the JSON form: validated, built with H5Pset_* (anything invalid, a wrong JSON type included,
         * fails naming the field) */
        h5zv_jpath w;
        if (h5zv_dcpl_from_json(v, d->type_id, h5zv_meta_where(&w, n, "dcpl"), &p) < 0)
            goto done;
        if (H5Pget_nfilters(p) > 0 && H5Premove_filter(p, H5Z_FILTER_ALL) < 0)
            H5ZV_GOTO_ERROR("can't reset the filters of '/%s'", d->path);
        if (h5zv_filters_from_chain(m, p) < 0 || h5zv_filters_add_left_out(v, w.s, p) < 0)
            goto done;
    }
    else {
        /* no dcpl recorded (other tools' arrays; ours whose dcpl is what the zarr metadata says) */
        bool fd = meta && json_object_object_get_ex(meta, "fill_default", &v) && json_object_get_boolean(v);
        if ((p = dcpl_inferred(m, d->type_id, fd)) < 0)
            H5ZV_GOTO_ERROR("can't build the dcpl of '/%s'", d->path);
        if (h5zv_filters_from_chain(m, p) < 0)
            goto done;
    }
    if (p >= 0 && h5zv_type_has_pointers(d->type_id) && fill_restore(d, meta, p) < 0)
        goto done;
    if (p >= 0 && h5zv_virtual_dcpl(d, n, p) < 0) /* a virtual dataset's mappings (vol/virtual.c) */
        goto done;
    if (p >= 0 && h5zv_external_open_check(d, p) < 0) /* external storage's rules (vol/external.c) */
        goto done;
    d->dcpl_id = p;
    p          = H5I_INVALID_HID;
    ret        = 0;
done:
    h5zv_close(p);
    return ret;
}

h5zv_obj *
h5zv_dataset_open_path(h5zv_file *f, const char *path)
{
    h5zv_obj *d = h5zv_dataset_open_lazy(f, path);
    if (d && h5zv_dataset_ready(d) < 0) { /* loaded now; a virtual dataset's mappings are checked */
        h5zv_obj_free(d);
        return NULL;
    }
    return d;
}

h5zv_obj *
h5zv_dataset_open_lazy(h5zv_file *f, const char *path)
{
    h5zv_node *n = h5zv_node_get(f, path);
    if (!n)
        return NULL;
    if (n->type != ZARR_NODE_ARRAY) {
        h5zv_err_push(__func__, __LINE__, "can't open '/%s' as a dataset: it is a group", path);
        return NULL;
    }
    return h5zv_obj_new(f, H5I_DATASET, path); /* type_id < 0: not loaded (h5zv_dataset_ready) */
}

int
h5zv_dataset_ready(h5zv_obj *d)
{
    h5zv_node *n;
    if (d->type_id >= 0)
        return 0;
    if (!(n = h5zv_node_get(d->file, d->path)))
        return -1;
    if (n->type != ZARR_NODE_ARRAY) {
        h5zv_err_push(__func__, __LINE__, "'/%s' is no longer a dataset", d->path);
        return -1;
    }
    dset_engine_opts(d, n);
    /* virtual datasets' mappings and external file lists are checked at open */
    if (dset_load(d, n) < 0 || ((h5zv_virtual_is(n) || h5zv_external_is(n)) && dset_dcpl(d) < 0)) {
        h5zv_type_release(d->type_id);
        d->type_id = H5I_INVALID_HID;
        return -1;
    }
    return 0;
}

/* ---- zarr's fill_value follows netCDF's _FillValue ---------------------------------------------------
 * netCDF keeps a variable's missing-value marker in the attribute _FillValue; zarr readers (xarray's
 * zarr backend, zarr-python) take zarr's fill_value as it and fill missing chunks with it. So when a
 * dataset has an attribute _FillValue of one element of the dataset's type, zarr's fill_value is that
 * value (netCDF's nccopy writes with no HDF5 fill, v2 "fill_value": null otherwise). HDF5's own fill
 * value (what H5Pget_fill_value reads) stays what HDF5 set: when the two differ, the reserved object
 * keeps HDF5's (the dcpl record, or fill_default for HDF5's default fill). Without such an attribute the
 * dataset follows HDF5's rule (docs/FORMAT.md "Fill values"). */

/* The value of `n`'s attribute _FillValue into `out` (one element of memory type `mf`), when it has
 * exactly one element of that type. 1 yes, 0 no such attribute; nothing pushed. */
static int
fill_attr_value(h5zv_obj *d, hid_t mf, void *out)
{
    H5VL_loc_params_t lp = {.obj_type = H5I_DATASET, .type = H5VL_OBJECT_BY_SELF};
    h5zv_obj         *a  = NULL;
    hid_t             amf;
    int               ok = 0;

    H5E_BEGIN_TRY
    {
        a = h5zv_attr_open(d, &lp, "_FillValue", H5P_ATTRIBUTE_ACCESS_DEFAULT, H5P_DEFAULT, NULL);
        if (a && a->attr_sclass != H5S_NULL && a->attr_npts == 1 &&
            (amf = h5zv_type_memform(a->attr_type)) >= 0) {
            ok = H5Tequal(amf, mf) > 0 && h5zv_attr_read(a, mf, out, H5P_DEFAULT, NULL) >= 0;
            H5Tclose(amf);
        }
        if (a)
            h5zv_attr_close(a, H5P_DEFAULT, NULL);
    }
    H5E_END_TRY
    return ok;
}

int
h5zv_dataset_fill_follow(h5zv_file *f, h5zv_node *n)
{
    zarr_array_meta    *m;
    h5zv_obj           *d    = NULL;
    hid_t               mf   = H5I_INVALID_HID;
    void               *want = NULL;
    struct json_object *meta, *dj = NULL;
    H5D_fill_value_t    fs = H5D_FILL_VALUE_DEFAULT;
    H5D_fill_time_t     ft = H5D_FILL_TIME_IFSET;
    bool                defined, hdf5_default, fd;
    size_t              es;
    int                 ret = -1;

    if (n->type != ZARR_NODE_ARRAY || f->intent != H5F_ACC_RDWR || h5zv_virtual_is(n))
        return 0;
    m = zarr_array_meta_mut(n->a);
    if (zarr_dtype_has_vlen(m->dtype))
        return 0; /* strings and packed types: their fill values are kept as data (fill_record) */
    /* HDF5's view of the dataset as it stands: its type and dcpl (from the reserved object and zarr's
     * fill_value as they are now) */
    if (!(d = h5zv_dataset_open_path(f, n->path)) || dset_dcpl(d) < 0)
        goto done;
    if ((mf = h5zv_type_memform(d->type_id)) < 0 || (es = H5Tget_size(mf)) != m->dtype->size) {
        ret = 0; /* a memory form other than the zarr element (never for numbers): left as it is */
        goto done;
    }
    if (!(want = calloc(1, es)))
        H5ZV_GOTO_ERROR("out of memory");
    if (H5Pfill_value_defined(d->dcpl_id, &fs) < 0 || H5Pget_fill_time(d->dcpl_id, &ft) < 0)
        H5ZV_GOTO_ERROR("can't read the fill properties of dataset '/%s'", n->path);
    hdf5_default = fs != H5D_FILL_VALUE_USER_DEFINED;
    if (fill_attr_value(d, mf, want))
        defined = true;
    else if (!hdf5_default && ft != H5D_FILL_TIME_NEVER) { /* HDF5's rule (dataset create) */
        if (H5Pget_fill_value(d->dcpl_id, mf, want) < 0)
            H5ZV_GOTO_ERROR("can't read the fill value of dataset '/%s'", n->path);
        defined = true;
    }
    else
        defined = false; /* v2: null; v3: the zero element */
    if ((defined || m->zarr_format == 3) == m->fill_defined && !memcmp(want, m->fill, es)) {
        ret = 0; /* zarr says that already */
        goto done;
    }
    if (m->fill_defined) {
        /* chunks equal to the old value may have been left out: they would read as the new one. Only
         * an array with no chunk stored yet (netCDF writes attributes before data) changes. */
        uint64_t nb = 0;
        if (zarr_array_flush(n->a) != ZARR_OK || zarr_array_stored_bytes(n->a, &nb) != ZARR_OK)
            H5ZV_GOTO_ZERR("can't look at the chunks of dataset '/%s'", n->path);
        if (nb > 0) {
            ret = 0;
            goto done;
        }
    }
    if (zarr_array_set_fill(n->a, defined ? want : NULL, defined) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't change the fill value of dataset '/%s'", n->path);
    /* HDF5's fill value stays readable: a reader infers it from zarr's fill_value unless the reserved
     * object says otherwise (dset_dcpl) */
    fd   = hdf5_default && m->fill_defined;
    meta = h5zv_node_meta(n, true);
    if (fd)
        json_object_object_add(meta, "fill_default", json_object_new_boolean(1));
    else
        json_object_object_del(meta, "fill_default");
    if (!json_object_object_get_ex(meta, "dcpl", NULL)) {
        if (dcpl_record(d->dcpl_id, d->type_id, m, fd, n->path, NULL, &dj) < 0)
            goto done;
        if (dj)
            json_object_object_add(meta, "dcpl", dj);
    }
    n->doc_dirty = true; /* the .zarray / zarr.json (fill_value) */
    h5zv_node_mark_dirty(n);
    ret = 0;
done:
    free(want);
    h5zv_close(mf);
    h5zv_obj_free(d);
    return ret;
}

/* ---- H5Dcreate, in steps ---------------------------------------------------------------------------
 * What H5Dcreate asks for is resolved on the caller's thread, step by step, into one dset_new; then the
 * array is made (its metadata written once, or deferred to the flush) and the object handed back. */
typedef struct dset_new {
    h5zv_file           *f;
    const h5zv_settings *cfg;
    char                *path; /* owned */
    hid_t                type_id, space_id, dcpl_id;
    int                  ndim;
    hsize_t              dims[ZARR_MAX_DIMS], maxdims[ZARR_MAX_DIMS];
    bool                 has_max, null_sp, external, record, user_fill, ptr_fill;
    h5zv_obj            *ctype; /* the committed datatype used, or NULL (borrowed) */
    zarr_array_meta     *m;     /* owned until the array takes it */
    hid_t           mf; /* memory form of the type (h5zv_type_memform_kept), when the fill value was read */
    h5zv_dcpl_known k;  /* the dcpl's properties the steps need, read once (dcpl_known_read) */
} dset_new;

/* Reads into `k` what the steps below and the recorded dcpl (dcpl_record) need of `dcpl`, once per
 * dataset (they asked HDF5 up to five times each: ~1,000 instructions a call); HDF5's default list's
 * without asking (dcpl_default). -1 with an error pushed. */
static int
dcpl_known_read(hid_t dcpl, h5zv_dcpl_known *k)
{
    memset(k, 0, sizeof *k);
    k->layout      = H5D_CONTIGUOUS;
    k->fill_status = H5D_FILL_VALUE_DEFAULT;
    k->fill_time   = H5D_FILL_TIME_IFSET;
    if (dcpl_default(dcpl))
        return 0;
    if ((k->layout = H5Pget_layout(dcpl)) < 0 || (k->nfilters = H5Pget_nfilters(dcpl)) < 0 ||
        (k->nexternal = H5Pget_external_count(dcpl)) < 0 ||
        H5Pfill_value_defined(dcpl, &k->fill_status) < 0 || H5Pget_fill_time(dcpl, &k->fill_time) < 0 ||
        (k->layout == H5D_CHUNKED && (k->nchunk = H5Pget_chunk(dcpl, H5S_MAX_RANK, k->chunk)) < 0)) {
        h5zv_err_push(__func__, __LINE__, "can't read the dataset creation properties");
        return -1;
    }
    return 0;
}

/* Step 1: the new dataset's path (hidden for H5Dcreate_anon), checked to be free. -1 with error pushed. */
static int
new_path(h5zv_obj *o, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl_id, dset_new *dn)
{
    h5zv_file     *f    = o->file;
    char          *base = NULL;
    zarr_node_type t    = ZARR_NODE_NONE;
    int            ret  = -1;
    if (!name) {
        /* H5Dcreate_anon: made in the hidden area; H5Olink moves it into the hierarchy. */
        if (f->intent != H5F_ACC_RDWR)
            H5ZV_GOTO_ERROR("can't create a dataset: file '%s' is open read-only", f->name);
        if (!(dn->path = h5zv_anon_path(f)))
            goto done;
    }
    else if (!(base = h5zv_loc_path(o, loc)) || !(dn->path = h5zv_path_resolve(f, base, name)) ||
             h5zv_check_new_path(f, dn->path, lcpl_id) < 0)
        goto done;
    if (h5zv_node_probe(f, dn->path, &t) == 0 && t != ZARR_NODE_NONE)
        H5ZV_GOTO_ERROR("can't create dataset '/%s': an object with that name exists", dn->path);
    ret = 0;
done:
    free(base);
    return ret;
}

/* Step 2: the extent (a null dataspace is a 1-D array of length 0) and the chunk shape (the dcpl's, else
 * the configured policy) into `chunks`. -1 with error pushed. */
static int
new_shape(dset_new *dn, uint64_t *shape, uint64_t *chunks)
{
    switch (H5Sget_simple_extent_type(dn->space_id)) {
        case H5S_SCALAR:
            dn->ndim = 0;
            break;
        case H5S_SIMPLE:
            dn->ndim = H5Sget_simple_extent_ndims(dn->space_id);
            if (dn->ndim > ZARR_MAX_DIMS) {
                h5zv_err_push(__func__, __LINE__,
                              "can't create dataset '/%s': %d dimensions (zarr core limit %d)", dn->path,
                              dn->ndim, ZARR_MAX_DIMS);
                return -1;
            }
            H5Sget_simple_extent_dims(dn->space_id, dn->dims, dn->maxdims);
            break;
        case H5S_NULL:
            dn->ndim    = 1;
            dn->dims[0] = dn->maxdims[0] = 0;
            dn->null_sp                  = true;
            break;
        default:
            h5zv_err_push(__func__, __LINE__, "can't create dataset '/%s': unknown dataspace class",
                          dn->path);
            return -1;
    }
    for (int i = 0; i < dn->ndim; i++) {
        shape[i] = dn->dims[i];
        if (dn->maxdims[i] != dn->dims[i])
            dn->has_max = true;
    }
    if (dn->ndim == 0)
        return 0;
    if (!dcpl_default(dn->dcpl_id) && dn->k.layout == H5D_CHUNKED && !dn->null_sp) {
        if (dn->k.nchunk != dn->ndim) {
            h5zv_err_push(__func__, __LINE__,
                          "can't create dataset '/%s': chunk rank differs from the dataspace rank", dn->path);
            return -1;
        }
        for (int i = 0; i < dn->ndim; i++)
            chunks[i] = dn->k.chunk[i];
    }
    else /* contiguous, compact or default layout: the configured chunk policy (default auto, 1 MiB) */
        h5zv_config_chunks(dn->cfg, dn->null_sp ? 0 : dn->ndim, dn->dims, dn->maxdims,
                           H5Tget_size(dn->type_id), chunks);
    if (dn->null_sp)
        chunks[0] = 1;
    return 0;
}

/* Step 3: the array's metadata with its codecs: the dcpl's filters, else the configured codec (none for
 * external storage, whose array never gets a chunk: a codec would show as a filter of a contiguous
 * dataset), and sharding (vol/shard.c: H5Pset_zarr_shard, else the configured shard_bytes). */
static int
new_meta(dset_new *dn)
{
    uint64_t    shape[ZARR_MAX_DIMS], chunks[ZARR_MAX_DIMS];
    zarr_dtype *zt = h5zv_type_to_zarr(dn->type_id, dn->f->format, &dn->record);
    if (!zt) {
        h5zv_err_push(__func__, __LINE__, "can't create dataset '/%s': its datatype can't be stored in zarr",
                      dn->path);
        return -1;
    }
    if (new_shape(dn, shape, chunks) < 0) {
        zarr_dtype_free(zt);
        return -1;
    }
    if (zarr_array_meta_new(dn->f->format, dn->ndim, shape, chunks, zt, &dn->m) != ZARR_OK) {
        h5zv_err_push(__func__, __LINE__, "can't create dataset '/%s': %s", dn->path, zarr_errmsg());
        return -1;
    }
    if (!dcpl_default(dn->dcpl_id) && h5zv_filters_to_chain(dn->dcpl_id, dn->type_id, dn->m, dn->path) < 0)
        return -1;
    if (!dn->external && (dcpl_default(dn->dcpl_id) || dn->k.nfilters == 0) &&
        h5zv_config_add_codec(dn->cfg, dn->type_id, dn->m, dn->path) < 0)
        return -1;
    if (!dn->null_sp && !dn->external &&
        h5zv_shard_apply(dn->cfg, dn->dcpl_id, dn->maxdims, dn->m, dn->path) < 0)
        return -1;
    return 0;
}

/* Step 4: the fill value. HDF5's user-defined fill becomes zarr's fill_value; the library default (zeros)
 * is recorded as such (`fill_default`) so the dcpl reads back the same. In zarr v2 the default is no fill
 * value (`"fill_value": null`): a zero fill_value would be taken by xarray as _FillValue and mask real
 * zeros (netCDF's NC_NOFILL variables, nccopy's output, HDF5 programs that set none). The core reads
 * missing chunks of such an array as zeros and stores every chunk written (no elision: zarr-python leaves
 * missing chunks undefined without a fill value). v3 requires a fill_value: the zero element, as before
 * (docs/FORMAT.md "Fill values"). */
static int
new_fill(dset_new *dn)
{
    H5D_fill_value_t fs = dn->k.fill_status; /* HDF5's defaults for its default list */
    H5D_fill_time_t  ft = dn->k.fill_time;
    zarr_array_meta *m  = dn->m;
    dn->user_fill       = true;
    /* H5D_FILL_TIME_NEVER: HDF5 never writes the fill value, so elements never written are undefined
     * (zeros here), not the fill value: zarr gets the default fill, the recorded dcpl keeps the user's */
    if (fs == H5D_FILL_VALUE_USER_DEFINED && ft != H5D_FILL_TIME_NEVER && !zarr_dtype_has_vlen(m->dtype)) {
        dn->mf = h5zv_type_memform_kept(dn->type_id); /* released with h5zv_type_release */
        if (H5Pget_fill_value(dn->dcpl_id, dn->mf, m->fill) < 0) {
            h5zv_err_push(__func__, __LINE__, "can't read the fill value of dataset '/%s'", dn->path);
            return -1;
        }
        m->fill_defined = true;
    }
    else if (!zarr_dtype_has_vlen(m->dtype)) {
        m->fill_defined = dn->f->format != 2; /* v2: null; v3: zeros */
        dn->user_fill   = false;
    }
    else if (fs == H5D_FILL_VALUE_USER_DEFINED && h5zv_type_has_pointers(dn->type_id))
        dn->ptr_fill = true; /* kept as data in _h5zarr, never as the pointers in the dcpl (fill_record) */
    return 0;
}

/* Step 5: the HDF5 facts in the reserved object `meta` (the array's _h5zarr), before the array is made,
 * so that its metadata is written once. -1 with error pushed. */
static int
new_reserved(dset_new *dn, struct json_object *meta)
{
    zarr_array_meta *m = dn->m;
    /* HDF5's default fill where zarr has a fill_value (v3; v2's null reads as the default anyway) */
    bool fill_default = !dn->ptr_fill && (!dn->user_fill || !m->fill_defined) && m->fill_defined &&
                        !zarr_dtype_has_vlen(m->dtype);
    /* a vlen string's default fill is a NULL string, which zarr v3 can only write as "": recorded, so that
     * unwritten elements read as NULL (h5zv_node's null_fill; FORMAT.md "NULL strings") */
    if (!dn->ptr_fill && dn->f->format != 2 && m->dtype->kind == ZARR_VLEN_UTF8)
        fill_default = true;
    if (dn->null_sp)
        json_object_object_add(meta, "null_space", json_object_new_boolean(1));
    /* The dcpl as given, so H5Dget_create_plist tells exactly what the dataset was made with; left out when
     * the zarr metadata says the same (dcpl_record). */
    if (dn->ptr_fill) {
        if (fill_record(dn->f, dn->dcpl_id, dn->type_id, m, dn->path, meta) < 0 ||
            fill_dcpl_json(dn->dcpl_id, dn->type_id, meta, dn->path) < 0)
            return -1;
    }
    else if (dn->dcpl_id != H5P_DEFAULT) {
        struct json_object *dj = NULL;
        if (dcpl_record(dn->dcpl_id, dn->type_id, m, fill_default, dn->path, &dn->k, &dj) < 0)
            return -1;
        if (dj)
            json_object_object_add(meta, "dcpl", dj);
    }
    /* a virtual dataset's mappings (vol/virtual.c): the array itself never gets chunks */
    if (!dcpl_default(dn->dcpl_id) && dn->k.layout == H5D_VIRTUAL) {
        struct json_object *vj = NULL;
        if (h5zv_virtual_to_json(dn->dcpl_id, dn->space_id, dn->path, &vj) < 0)
            return -1;
        json_object_object_add(meta, "virtual", vj);
    }
    /* external storage: the size HDF5 records for the contiguous storage at create (the element count now
     * times the element size), which H5Dget_storage_size reports whatever the extent becomes */
    if (dn->external) {
        hssize_t np = dn->null_sp ? 0 : H5Sget_simple_extent_npoints(dn->space_id);
        uint64_t es = H5Tget_size(dn->type_id), sz = np <= 0 ? 0 : (uint64_t)np;
        json_object_object_add(
            meta, "storage_size",
            json_object_new_int64(sz > (uint64_t)INT64_MAX / es ? INT64_MAX : (int64_t)(sz * es)));
    }
    if (dn->record) {
        struct json_object *tj = NULL;
        if (h5zv_type_to_json(dn->type_id, &tj) < 0) {
            h5zv_err_push(__func__, __LINE__, "can't record the datatype of '/%s'", dn->path);
            return -1;
        }
        json_object_object_add(meta, "type", tj);
    }
    if (dn->has_max) {
        struct json_object *mx = json_object_new_array();
        for (int i = 0; i < dn->ndim; i++)
            json_object_array_add(
                mx, json_object_new_int64(dn->maxdims[i] == H5S_UNLIMITED ? -1 : (int64_t)dn->maxdims[i]));
        json_object_object_add(meta, "maxdims", mx);
    }
    if (dn->ctype && dn->ctype->file == dn->f)
        json_object_object_add(meta, "ctype", json_object_new_string(dn->ctype->path));
    if (fill_default)
        json_object_object_add(meta, "fill_default", json_object_new_boolean(1));
    return 0;
}

/* Step 6: the array in the store and in the node cache, linked into its parent. Takes dn->m. Overwrite:
 * nothing is there (new_path probed), so the core need not probe again; it clears any stale chunk keys
 * at the path instead, unless the cache knows the parent's every child (a group it made): then nothing can
 * be there (ZARR_CREATE_NEW). Deferred (h5zv_node_can_defer): nothing is written now; the flush writes
 * every document once, over the pool with the other nodes' (flush.c). v2 keeps the attributes in a
 * document of their own (.zattrs): written once, at the flush, with the attributes the dataset gets
 * meanwhile. Returns the node, or NULL with error pushed. */
static h5zv_node *
new_array(dset_new *dn)
{
    h5zv_file          *f     = dn->f;
    bool                later = h5zv_node_can_defer(f, dn->path);
    struct json_object *v2_attrs;
    zarr_array         *a = NULL;
    zarr_engine_opts    eo;
    h5zv_node          *n;
    char               *parent = NULL, *leaf = NULL;

    v2_attrs = f->format == 2 && !later ? dn->m->attributes : NULL;
    if (v2_attrs)
        dn->m->attributes = NULL;
    if (zarr_array_create_as(f->store, dn->path, dn->m,
                             later                                 ? ZARR_CREATE_UNWRITTEN
                             : h5zv_node_known_absent(f, dn->path) ? ZARR_CREATE_NEW
                                                                   : ZARR_CREATE_OVERWRITE,
                             &a) != ZARR_OK) {
        dn->m = NULL;
        json_object_put(v2_attrs);
        h5zv_err_push(__func__, __LINE__, "can't create dataset '/%s': %s", dn->path, zarr_errmsg());
        return NULL;
    }
    dn->m = NULL;
    if (v2_attrs) {
        json_object_put(zarr_array_meta_mut(a)->attributes);
        zarr_array_meta_mut(a)->attributes = v2_attrs;
    }
    h5zv_config_engine_opts(dn->cfg, &eo);
    zarr_array_set_opts(a, &eo);
    /* no reader sees its chunks before its documents: small writes wait in its cache for the flush, which
     * writes them with the documents over the pool (flush.c); not in SWMR mode (readers look at every
     * flush) */
    zarr_array_hold_writes(a, later && !f->swmr);
    if (!(n = h5zv_node_add(f, dn->path, NULL, a))) {
        zarr_array_close(a);
        h5zv_err_push(__func__, __LINE__, "out of memory");
        return NULL;
    }
    if (later)
        h5zv_node_defer(f, n);
    else if (v2_attrs)
        h5zv_node_mark_dirty(n);
    h5zv_refidx_touch(f, dn->path); /* its data may hold references (vol/refidx.c) */
    if (dn->ctype && dn->ctype->file == f)
        h5zv_type_use(f, dn->path, NULL, dn->ctype->path);
    if (h5zv_path_split(dn->path, &parent, &leaf) < 0 ||
        h5zv_link_record(f, parent, leaf, H5ZV_LINK_HARD, NULL, NULL) < 0)
        n = NULL;
    free(parent);
    free(leaf);
    return n;
}

void *
h5zv_dataset_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl_id, hid_t type_id,
                    hid_t space_id, hid_t dcpl_id, hid_t dapl_id, hid_t dxpl_id, void **req)
{
    h5zv_obj           *o = obj, *d = NULL;
    dset_new            dn = {0};
    h5zv_node          *n;
    struct json_object *meta;
    (void)dxpl_id;
    (void)req;

    if (h5zv_check_plist(dapl_id, H5P_DATASET_ACCESS, "dataset access property list") < 0 ||
        h5zv_check_plist(dcpl_id, H5P_DATASET_CREATE, "dataset creation property list") < 0 ||
        h5zv_check_plist(lcpl_id, H5P_LINK_CREATE, "link creation property list") < 0)
        return NULL;
    dn.f        = o->file;
    dn.cfg      = h5zv_file_settings(o->file);
    dn.type_id  = type_id;
    dn.space_id = space_id;
    dn.dcpl_id  = dcpl_id;
    dn.mf       = H5I_INVALID_HID;
    /* External storage (H5Pset_external): the raw data goes to the files the program named, as native HDF5
     * puts it there (vol/external.c); the array gets no chunks */
    if (dcpl_known_read(dcpl_id, &dn.k) < 0)
        return NULL;
    dn.external = !dcpl_default(dcpl_id) && dn.k.nexternal > 0;
    dn.ctype    = h5zv_type_committed_obj(type_id);
    if (new_path(o, loc, name, lcpl_id, &dn) < 0 ||
        (dn.external && h5zv_external_create_check(dn.f, dn.path, dcpl_id, type_id, space_id) < 0) ||
        new_meta(&dn) < 0 || new_fill(&dn) < 0)
        goto done;
    meta = json_object_new_object();
    json_object_put(dn.m->reserved);
    dn.m->reserved = meta;
    if (new_reserved(&dn, meta) < 0)
        goto done;
    if (json_object_object_length(meta) == 0) {
        json_object_put(dn.m->reserved); /* nothing to keep: no _h5zarr */
        dn.m->reserved = NULL;
    }
    if (!(n = new_array(&dn)))
        goto done;
    if (!(d = h5zv_obj_new(dn.f, H5I_DATASET, dn.path)))
        H5ZV_GOTO_ERROR("out of memory");
    dset_take_dapl(d, dapl_id);
    if (dset_load(d, n) < 0) {
        h5zv_obj_free(d);
        d = NULL;
    }
done:
    zarr_array_meta_free(dn.m);
    h5zv_type_release(dn.mf);
    free(dn.path);
    return d;
}

void *
h5zv_dataset_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t dapl_id, hid_t dxpl_id,
                  void **req)
{
    h5zv_obj *o    = obj;
    char     *base = NULL, *path = NULL;
    void     *ret = NULL;
    (void)dxpl_id;
    (void)req;
    if (h5zv_check_plist(dapl_id, H5P_DATASET_ACCESS, "dataset access property list") < 0)
        return NULL;
    {
        h5zv_file *f = NULL;
        if (h5zv_resolve_ext(o, loc, name, &f, &path) == 0)
            ret = h5zv_dataset_open_path(f, path);
        h5zv_file_decref(f);
    }
    if (ret)
        dset_take_dapl(ret, dapl_id);
    free(base);
    free(path);
    return ret;
}

/* ---- selections ------------------------------------------------------------------------------------ */
/* How one transfer maps onto the engine: a region of the array, its dense element count, and (for
 * irregular file selections) the box-shaped space through which selected elements are gathered. */
typedef struct xfer {
    zarr_region  region;
    uint64_t     nbox;      /* elements the engine moves (box or region) */
    hssize_t     nsel;      /* elements selected */
    bool         irregular; /* points / irregular hyperslabs: the region is the bounding box */
    H5S_sel_type type;      /* the file selection's type (H5S_SEL_ALL for H5S_ALL) */
} xfer;

/* x's region: the regular hyperslab from `start` (its first selected element), a stride only where the
 * count repeats a block; one box per selected element count (x->nsel, set by the caller). */
static void
xfer_regular(xfer *x, int ndim, const hsize_t *start, const hsize_t *stride, const hsize_t *count,
             const hsize_t *block)
{
    for (int i = 0; i < ndim; i++) {
        x->region.start[i]  = start[i];
        x->region.stride[i] = count[i] > 1 ? stride[i] : 1;
        x->region.count[i]  = count[i];
        x->region.block[i]  = block[i];
    }
    x->nbox = (uint64_t)x->nsel;
}

static int
plan_xfer(h5zv_obj *d, hid_t fspace, xfer *x)
{
    int          ndim = H5Sget_simple_extent_ndims(fspace);
    hsize_t      start[ZARR_MAX_DIMS], stride[ZARR_MAX_DIMS], count[ZARR_MAX_DIMS], block[ZARR_MAX_DIMS];
    hsize_t      lo[ZARR_MAX_DIMS], hi[ZARR_MAX_DIMS];
    H5S_sel_type st = H5Sget_select_type(fspace);

    memset(x, 0, sizeof *x);
    x->type = st;
    x->nsel = H5Sget_select_npoints(fspace);
    if (x->nsel < 0)
        return -1;
    if (x->nsel == 0)
        return 0;
    if (ndim == 0) {
        x->nbox = 1;
        return 0;
    }
    if (st == H5S_SEL_ALL) {
        hsize_t dims[ZARR_MAX_DIMS];
        H5Sget_simple_extent_dims(fspace, dims, NULL);
        for (int i = 0; i < ndim; i++) {
            x->region.start[i]  = 0;
            x->region.stride[i] = x->region.block[i] = 1;
            x->region.count[i]                       = dims[i];
        }
        x->nbox = (uint64_t)x->nsel;
        return 0;
    }
    if (st == H5S_SEL_HYPERSLABS && H5Sis_regular_hyperslab(fspace) > 0) {
        H5Sget_regular_hyperslab(fspace, start, stride, count, block);
        xfer_regular(x, ndim, start, stride, count, block);
        return 0;
    }
    /* Points or an irregular hyperslab: move the bounding box; selected elements are copied between
     * the box and the dense buffer by box_copy(). */
    if (H5Sget_select_bounds(fspace, lo, hi) < 0)
        return -1;
    x->nbox = 1;
    for (int i = 0; i < ndim; i++) {
        x->region.start[i]  = lo[i];
        x->region.stride[i] = x->region.block[i] = 1;
        x->region.count[i]                       = hi[i] - lo[i] + 1;
        x->nbox *= x->region.count[i];
    }
    x->irregular = true;
    return 0;
}

/* Copies the selected elements of `fspace` between the box buffer (the bounding box of the selection,
 * C order) and the dense buffer (selection order), in the direction `to_box`. */
static int
box_copy(hid_t fspace, const xfer *x, size_t esize, void *box, void *dense, bool to_box)
{
    int     ndim = H5Sget_simple_extent_ndims(fspace);
    hsize_t dims[ZARR_MAX_DIMS];
    hid_t   it;
    size_t  nseq = 0, nelem = 0, done_elems = 0;
    hsize_t off[256];
    size_t  len[256];
    int     ret = -1;

    H5Sget_simple_extent_dims(fspace, dims, NULL);
    if ((it = H5Ssel_iter_create(fspace, 1, H5S_SEL_ITER_GET_SEQ_LIST_SORTED)) < 0)
        return -1;
    do {
        if (H5Ssel_iter_get_seq_list(it, 256, SIZE_MAX, &nseq, &nelem, off, len) < 0)
            goto done;
        for (size_t s = 0; s < nseq; s++) {
            /* element offset in the full extent -> coordinates -> box offset */
            hsize_t  rem = off[s], coord[ZARR_MAX_DIMS];
            uint64_t b   = 0;
            for (int d = ndim - 1; d >= 0; d--) {
                coord[d] = rem % dims[d];
                rem /= dims[d];
            }
            for (int d = 0; d < ndim; d++)
                b = b * x->region.count[d] + (coord[d] - x->region.start[d]);
            uint8_t *bp = (uint8_t *)box + b * esize, *dp = (uint8_t *)dense + done_elems * esize;
            if (to_box)
                memcpy(bp, dp, len[s] * esize);
            else
                memcpy(dp, bp, len[s] * esize);
            done_elems += len[s];
        }
    } while (nseq > 0);
    ret = 0;
done:
    H5Ssel_iter_close(it);
    return ret;
}

/* H5Soffset_simple shifts a selection at I/O time, and the selection queries used here
 * (H5Sget_regular_hyperslab, iterators' offsets) do not include it; HDF5 has no call that reads it back.
 * The bounds do include it: the same space with its offset reset tells the shift, and H5Sselect_adjust
 * moves the selection itself by it. `s` is the caller's own copy. A shifted selection that leaves the
 * extent is refused, as native HDF5 refuses it. */
static int
sel_apply_offset(hid_t s)
{
    int          ndim = H5Sget_simple_extent_ndims(s);
    hsize_t      lo[ZARR_MAX_DIMS], hi[ZARR_MAX_DIMS], lo0[ZARR_MAX_DIMS], hi0[ZARR_MAX_DIMS];
    hssize_t     zero[ZARR_MAX_DIMS] = {0}, adj[ZARR_MAX_DIMS];
    bool         moved               = false;
    H5S_sel_type st                  = H5Sget_select_type(s);

    if (ndim <= 0 || ndim > ZARR_MAX_DIMS || (st != H5S_SEL_HYPERSLABS && st != H5S_SEL_POINTS))
        return 0;
    if (H5Sget_select_bounds(s, lo, hi) < 0 || H5Soffset_simple(s, zero) < 0 ||
        H5Sget_select_bounds(s, lo0, hi0) < 0)
        return -1;
    for (int i = 0; i < ndim; i++) {
        adj[i] = (hssize_t)lo0[i] - (hssize_t)lo[i];
        moved |= adj[i] != 0;
    }
    if (moved && st == H5S_SEL_HYPERSLABS && H5Sis_regular_hyperslab(s) > 0) {
        /* selected again: H5Sget_regular_hyperslab would still report the start before an adjust */
        hsize_t start[ZARR_MAX_DIMS], stride[ZARR_MAX_DIMS], count[ZARR_MAX_DIMS], block[ZARR_MAX_DIMS];
        if (H5Sget_regular_hyperslab(s, start, stride, count, block) < 0)
            return -1;
        for (int i = 0; i < ndim; i++)
            start[i] = (hsize_t)((hssize_t)start[i] - adj[i]);
        if (H5Sselect_hyperslab(s, H5S_SELECT_SET, start, stride, count, block) < 0)
            return -1;
    }
    else if (moved && H5Sselect_adjust(s, adj) < 0)
        return -1;
    return H5Sselect_valid(s) > 0 ? 0 : -1;
}

hid_t
h5zv_dataset_file_space(h5zv_obj *d, hid_t fs)
{
    hid_t s = H5Scopy(fs == H5S_ALL ? d->space_id : fs);
    if (s >= 0 && fs == H5S_ALL && H5Sselect_all(s) < 0)
        goto fail;
    if (s >= 0 && sel_apply_offset(s) < 0) {
        h5zv_err_push(__func__, __LINE__,
                      "dataset '/%s': the selection, shifted by its offset (H5Soffset_simple), is not within "
                      "the extent",
                      d->path);
        goto fail;
    }
    return s;
fail:
    h5zv_close(s);
    return H5I_INVALID_HID;
}

/* Plans the transfer of the file selection `fs` of `d` (H5S_ALL: the whole extent) into `x`, asking HDF5
 * each thing once. The whole extent and regular hyperslabs (every box and strided read or write) are read
 * off the caller's space as it is: its bounds include an H5Soffset_simple shift and the regular form does
 * not, and the first block of a regular hyperslab starts at its lower bound, so the region starts there,
 * and the shifted selection is within the extent when its upper bound is (H5Sselect_valid's rule; a
 * shift below zero makes the bounds fail). `*fsel` stays H5I_INVALID_HID then: a copy with the shift
 * applied is made only for the other selections (points, irregular hyperslabs: `*fsel` is that copy,
 * the caller's to close), or by xfer_prepare when the memory selection is H5S_ALL (the file's). W3's box
 * writes asked 14 selection questions and copied the space per H5Dwrite before (bench/README.md, 2026-12-07
 * evening). -1 with an error pushed. */
static int
xfer_plan(h5zv_obj *d, hid_t fs, xfer *x, hid_t *fsel)
{
    hsize_t dims[H5S_MAX_RANK], start[H5S_MAX_RANK], stride[H5S_MAX_RANK], count[H5S_MAX_RANK];
    hsize_t block[H5S_MAX_RANK], lo[H5S_MAX_RANK], hi[H5S_MAX_RANK];
    hid_t   s    = fs == H5S_ALL ? d->space_id : fs;
    int     ndim = H5Sget_simple_extent_dims(s, dims, NULL);
    htri_t  reg  = 0;

    memset(x, 0, sizeof *x);
    *fsel   = H5I_INVALID_HID;
    x->type = fs == H5S_ALL ? H5S_SEL_ALL : H5Sget_select_type(s);
    if (ndim < 0 || ndim > ZARR_MAX_DIMS || x->type < 0)
        goto fail;
    if (ndim > 0 && x->type == H5S_SEL_HYPERSLABS && (reg = H5Sis_regular_hyperslab(s)) < 0)
        goto fail;
    if (ndim > 0 && x->type == H5S_SEL_ALL) {
        x->nsel = 1;
        for (int i = 0; i < ndim; i++) {
            x->region.stride[i] = x->region.block[i] = 1;
            x->region.count[i]                       = dims[i];
            x->nsel *= (hssize_t)dims[i];
        }
        x->nbox = (uint64_t)x->nsel;
        return 0;
    }
    if (reg > 0) {
        if (H5Sget_regular_hyperslab(s, start, stride, count, block) < 0)
            goto fail;
        x->nsel = 1;
        for (int i = 0; i < ndim; i++) {
            if (count[i] == H5S_UNLIMITED || block[i] == H5S_UNLIMITED)
                goto general; /* HDF5 clips these to the extent: let it count */
            x->nsel *= (hssize_t)(count[i] * block[i]);
        }
        if (x->nsel == 0)
            return 0;
        if (H5Sget_select_bounds(s, lo, hi) < 0)
            goto shifted_out;
        for (int i = 0; i < ndim; i++)
            if (hi[i] >= dims[i])
                goto shifted_out;
        xfer_regular(x, ndim, lo, stride, count, block);
        return 0;
    }
general:
    if ((*fsel = h5zv_dataset_file_space(d, fs)) < 0 || plan_xfer(d, *fsel, x) < 0)
        goto fail;
    return 0;
shifted_out:
    h5zv_err_push(__func__, __LINE__,
                  "dataset '/%s': the selection, shifted by its offset (H5Soffset_simple), is not within the "
                  "extent",
                  d->path);
fail:
    h5zv_err_push(__func__, __LINE__, "can't resolve the file selection of '/%s'", d->path);
    return -1;
}

/* True if the memory selection covers exactly `n` elements laid out densely in selection order. */
static bool
mem_is_dense(hid_t ms, H5S_sel_type ftype, hssize_t n)
{
    if (ms == H5S_ALL) /* the memory buffer has the file's shape and selection */
        return ftype == H5S_SEL_ALL;
    if (ms == H5S_BLOCK)
        return true;
    if (H5Sget_select_type(ms) == H5S_SEL_ALL)
        return H5Sget_simple_extent_npoints(ms) == n;
    return false;
}

hid_t
h5zv_dataset_mem_space(hid_t ms, hid_t fsel, hssize_t n)
{
    hid_t s;
    if (ms == H5S_ALL)
        return H5Scopy(fsel);
    if (ms == H5S_BLOCK) {
        hsize_t d = (hsize_t)n;
        return H5Screate_simple(1, &d, NULL);
    }
    if ((s = H5Scopy(ms)) >= 0 && sel_apply_offset(s) < 0) {
        h5zv_err_push(
            __func__, __LINE__,
            "the memory selection, shifted by its offset (H5Soffset_simple), is not within its extent");
        h5zv_close(s);
        return H5I_INVALID_HID;
    }
    return s;
}

/* H5Dscatter source: hands over one dense buffer, once. */
typedef struct scatter_src {
    const void *p;
    size_t      n;
    bool        given;
} scatter_src;

static herr_t
scatter_cb(const void **src_buf, size_t *src_buf_bytes_used, void *op_data)
{
    scatter_src *c = op_data;
    if (c->given)
        return -1;
    *src_buf            = c->p;
    *src_buf_bytes_used = c->n;
    c->given            = true;
    return 0;
}

herr_t
h5zv_scatter_dense(const void *dense, size_t n, hid_t mem_type, hid_t msel, void *buf)
{
    scatter_src c = {dense, n, false};
    return H5Dscatter(scatter_cb, &c, mem_type, msel, buf);
}

/* One H5Dread/H5Dwrite of a dataset, resolved on the caller's thread (dset_xfer). */
typedef struct xfer_io {
    h5zv_obj  *d;
    h5zv_node *n;
    hid_t      mem_type, dxpl_id;
    void      *ubuf;
    hid_t      fspace;         /* the caller's file space (H5S_ALL, or a selection possibly shifted) */
    hid_t      fsel, msel, mf; /* file selection with its shift applied (xfer_plan: only when needed); memory
                                  selection (when not dense or converted); memory form */
    xfer   x;
    size_t fsize, msize, esize;
    bool   conv, dense_mem, has_vl;
    size_t vfac;     /* vlen sequences: bytes per element of the base type (the core counts bytes) */
    bool   mf_owned; /* mf is this transfer's (closed at its end), else the dataset's (dset_form) */
    void  *dense;    /* the elements in selection order: the user's buffer when possible */
    void  *box, *bkg, *orig;
} xfer_io;

/* The memory form of d's type and what every transfer asks of it, made once per dataset handle (W3: its
 * 400 box writes each made, measured and closed a copy of it: 7 HDF5 calls of 30 per H5Dwrite). Made
 * again if type_id was replaced. -1 with an error pushed. */
static int
dset_form(h5zv_obj *d)
{
    hid_t mf;
    if (d->mf_id >= 0 && d->mf_of == d->type_id)
        return 0;
    if ((mf = h5zv_type_memform(d->type_id)) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't make the memory form of the datatype of '/%s'", d->path);
        return -1;
    }
    h5zv_close(d->mf_id);
    d->mf_id     = mf;
    d->mf_of     = d->type_id;
    d->mf_size   = H5Tget_size(mf);
    d->mf_class  = H5Tget_class(mf);
    d->mf_has_vl = H5Tdetect_class(mf, H5T_VLEN) > 0 || H5Tdetect_class(mf, H5T_STRING) > 0;
    d->mf_vfac   = 0;
    if (d->mf_class == H5T_VLEN) {
        hid_t b    = H5Tget_super(mf);
        d->mf_vfac = H5Tget_size(b);
        H5Tclose(b);
    }
    return 0;
}

/* True if `t` is one of HDF5's predefined number types, which are immutable (H5Tclose and every
 * H5Tset_* refuse them), so what is asked of one id stays true while the library is open. */
static bool
type_is_predefined(hid_t t)
{
#define PREDEF(n) H5T_NATIVE_##n##_g
    const hid_t *ids[] = {
        &PREDEF(SCHAR),   &PREDEF(UCHAR),    &PREDEF(SHORT),    &PREDEF(USHORT),   &PREDEF(INT),
        &PREDEF(UINT),    &PREDEF(LONG),     &PREDEF(ULONG),    &PREDEF(LLONG),    &PREDEF(ULLONG),
        &PREDEF(FLOAT),   &PREDEF(DOUBLE),   &PREDEF(INT8),     &PREDEF(UINT8),    &PREDEF(INT16),
        &PREDEF(UINT16),  &PREDEF(INT32),    &PREDEF(UINT32),   &PREDEF(INT64),    &PREDEF(UINT64),
        &H5T_STD_I8LE_g,  &H5T_STD_U8LE_g,   &H5T_STD_I16LE_g,  &H5T_STD_U16LE_g,  &H5T_STD_I32LE_g,
        &H5T_STD_U32LE_g, &H5T_STD_I64LE_g,  &H5T_STD_U64LE_g,  &H5T_STD_I8BE_g,   &H5T_STD_U8BE_g,
        &H5T_STD_I16BE_g, &H5T_STD_U16BE_g,  &H5T_STD_I32BE_g,  &H5T_STD_U32BE_g,  &H5T_STD_I64BE_g,
        &H5T_STD_U64BE_g, &H5T_IEEE_F32LE_g, &H5T_IEEE_F64LE_g, &H5T_IEEE_F32BE_g, &H5T_IEEE_F64BE_g};
#undef PREDEF
    for (size_t i = 0; t > 0 && i < sizeof ids / sizeof ids[0]; i++)
        if (*ids[i] == t)
            return true;
    return false;
}

/* The size of memory type `mt` and whether it differs from io->mf (a conversion), asked of HDF5 once per
 * dataset handle for a predefined memory type against the dataset's own memory form (d->mt_*: W3's 400
 * box writes asked H5Tget_size and H5Tequal each time). */
static void
xfer_mem_type(xfer_io *io, bool own_form)
{
    h5zv_obj *d     = io->d;
    bool      cache = own_form && type_is_predefined(io->mem_type);
    if (cache && d->mt_id == io->mem_type && d->mt_mf == io->mf) {
        io->msize = d->mt_size;
        io->conv  = d->mt_conv;
        return;
    }
    io->msize = H5Tget_size(io->mem_type);
    io->conv  = H5Tequal(io->mf, io->mem_type) <= 0;
    if (cache && io->msize > 0) {
        d->mt_id   = io->mem_type;
        d->mt_mf   = io->mf;
        d->mt_size = io->msize;
        d->mt_conv = io->conv;
    }
}

/* The memory form, element sizes, whether to convert, and the dense buffer of `io` for io->x.nsel > 0
 * elements. -1 with error pushed. */
static int
xfer_prepare(xfer_io *io, hid_t mem_space, bool write, hid_t ftype)
{
    h5zv_obj *d = io->d;
    if (ftype >= 0) {
        io->mf_owned = true;
        io->mf       = H5Tcopy(ftype);
        io->fsize    = H5Tget_size(io->mf);
        io->has_vl   = H5Tdetect_class(io->mf, H5T_VLEN) > 0 || H5Tdetect_class(io->mf, H5T_STRING) > 0;
        if (H5Tget_class(io->mf) == H5T_VLEN) {
            hid_t b  = H5Tget_super(io->mf);
            io->vfac = H5Tget_size(b);
            H5Tclose(b);
        }
    }
    else {
        if (dset_form(d) < 0)
            return -1;
        io->mf     = d->mf_id;
        io->fsize  = d->mf_size;
        io->has_vl = d->mf_has_vl;
        io->vfac   = d->mf_vfac;
    }
    xfer_mem_type(io, ftype < 0);
    io->esize = io->fsize > io->msize ? io->fsize : io->msize;
    if (!io->conv && !write && io->has_vl && io->dxpl_id != H5P_DEFAULT &&
        H5Tdetect_class(io->mf, H5T_VLEN) > 0) {
        /* a vlen allocator on the dxpl (H5Dvlen_get_buf_size uses one) must see every allocation: go
         * through a conversion, which allocates with it */
        H5MM_allocate_t alloc = NULL;
        void           *ainfo = NULL;
        H5MM_free_t     freef = NULL;
        void           *finfo = NULL;
        if (H5Pget_vlen_mem_manager(io->dxpl_id, &alloc, &ainfo, &freef, &finfo) >= 0 && alloc)
            io->conv = true;
    }
    io->dense_mem = mem_is_dense(mem_space, io->x.type, io->x.nsel);
    if (write && d->file->mpi && (io->x.irregular || io->has_vl || io->vfac)) {
        h5zv_err_push(__func__, __LINE__,
                      "can't write '/%s' through MPI-IO: %s are not supported there (vol/mpi_vol.h)", d->path,
                      io->x.irregular ? "point and irregular selections" : "variable-length types");
        return -1;
    }
    if (!io->conv && io->dense_mem && !io->x.irregular && io->vfac <= 1)
        io->dense = io->ubuf;
    else if (!(io->dense = calloc((size_t)io->x.nsel ? (size_t)io->x.nsel : 1, io->esize))) {
        h5zv_err_push(__func__, __LINE__, "out of memory for %lld elements of '/%s'", (long long)io->x.nsel,
                      d->path);
        return -1;
    }
    if ((!io->dense_mem || io->conv) && mem_space == H5S_ALL && io->fsel < 0 &&
        (io->fsel = h5zv_dataset_file_space(d, io->fspace)) < 0) /* the memory selection is the file's */
        return -1;
    if ((!io->dense_mem || io->conv) &&
        (io->msel = h5zv_dataset_mem_space(mem_space, io->fsel, io->x.nsel)) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't resolve the memory selection for '/%s'", d->path);
        return -1;
    }
    return 0;
}

/* The batch of the H5Dread_multi / H5Dwrite_multi running on this thread (multi_begin), or NULL: the
 * regular transfers of its datasets go through it (zarr_multi_read/_write equal zarr_array_read/_write
 * with NULL). Set and cleared by h5zv_dataset_read/_write only. */
static __thread zarr_multi *multi_now;

/* H5Dwrite: user buffer -> dense (gather) -> convert to the memory form -> engine. -1 with error pushed. */
static int
xfer_write(xfer_io *io)
{
    h5zv_obj *d  = io->d;
    hssize_t  ns = io->x.nsel;
    int       rc, ret = -1;
    if (io->dense != io->ubuf) {
        if (io->dense_mem)
            memcpy(io->dense, io->ubuf, (size_t)ns * io->msize);
        else if (H5Dgather(io->msel, io->ubuf, io->mem_type, (size_t)ns * io->esize, io->dense, NULL, NULL) <
                 0)
            H5ZV_GOTO_ERROR("can't gather the memory selection for '/%s'", d->path);
        if (io->conv) {
            if (H5Tget_class(io->mf) == H5T_COMPOUND) {
                /* Members the memory type lacks keep their stored values: read them as background. */
                if (!(io->bkg = calloc((size_t)ns, io->fsize)))
                    H5ZV_GOTO_ERROR("out of memory");
                if (!io->x.irregular && zarr_array_read(io->n->a, &io->x.region, io->bkg) != ZARR_OK)
                    H5ZV_GOTO_ZERR("can't read '/%s' for a partial compound write", d->path);
            }
            if (H5Tconvert(io->mem_type, io->mf, (size_t)ns, io->dense, io->bkg, io->dxpl_id) < 0)
                H5ZV_GOTO_ERROR("can't convert data for '/%s' to its stored type", d->path);
        }
    }
    if (io->vfac > 1)
        for (hssize_t i = 0; i < ns; i++)
            ((hvl_t *)io->dense)[i].len *= io->vfac;
    if (io->x.irregular) {
        /* Read the box, scatter the selected elements into it, write the box back. */
        if (!(io->box = calloc((size_t)io->x.nbox, io->fsize)))
            H5ZV_GOTO_ERROR("out of memory");
        if (zarr_array_read(io->n->a, &io->x.region, io->box) != ZARR_OK)
            H5ZV_GOTO_ZERR("can't read '/%s' around an irregular selection", d->path);
        if (box_copy(io->fsel, &io->x, io->fsize, io->box, io->dense, true) < 0)
            H5ZV_GOTO_ERROR("can't place the selected elements of '/%s'", d->path);
        rc = zarr_array_write(io->n->a, &io->x.region, io->box);
    }
    else if (d->file
                 ->mpi) /* MPI-IO: whole chunks now, pieces of shared ones to their owners (vol/mpi_vol.h) */
        rc = h5zv_mpi_write(d->file, d->path, io->n->a, &io->x.region, io->dense, io->fsize);
    else
        rc = zarr_multi_write(multi_now, io->n->a, &io->x.region, io->dense);
    if (io->conv && io->has_vl) /* the conversion allocated the stored form's vlen data: ours to free */
        h5zv_reclaim(io->mf, (size_t)ns, io->dense);
    if (rc != ZARR_OK)
        H5ZV_GOTO_ZERR("can't write dataset '/%s'", d->path);
    ret = 0;
done:
    return ret;
}

/* H5Dread: engine -> dense (memory form) -> convert -> user buffer (scatter). -1 with error pushed. */
static int
xfer_read(xfer_io *io)
{
    h5zv_obj *d   = io->d;
    hssize_t  ns  = io->x.nsel;
    int       ret = -1;
    if (io->x.irregular) {
        if (!(io->box = calloc((size_t)io->x.nbox, io->fsize)))
            H5ZV_GOTO_ERROR("out of memory");
        if (zarr_array_read(io->n->a, &io->x.region, io->box) != ZARR_OK)
            H5ZV_GOTO_ZERR("can't read dataset '/%s'", d->path);
        if (box_copy(io->fsel, &io->x, io->fsize, io->box, io->dense, false) < 0)
            H5ZV_GOTO_ERROR("can't gather the selection of '/%s'", d->path);
        if (zarr_dtype_has_vlen(zarr_array_meta_get(io->n->a)->dtype))
            free(io->box), io->box = NULL; /* pointers now owned by `dense` (non-selected ones leak: rare) */
    }
    else if (zarr_multi_read(multi_now, io->n->a, &io->x.region, io->dense) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't read dataset '/%s'", d->path);
    if (io->vfac > 1)
        for (hssize_t i = 0; i < ns; i++) {
            hvl_t *v = &((hvl_t *)io->dense)[i];
            if (v->len % io->vfac)
                H5ZV_GOTO_ERROR("dataset '/%s': stored sequence %lld has %zu bytes, not a multiple of its "
                                "element size %zu",
                                d->path, (long long)i, v->len, io->vfac);
            v->len /= io->vfac;
        }
    if (io->dense == io->ubuf) {
        ret = 0;
        goto done;
    }
    if (io->conv && io->has_vl) {
        /* keep the decoded vlen data to free after the conversion copied it */
        if (!(io->orig = malloc((size_t)ns * io->fsize)))
            H5ZV_GOTO_ERROR("out of memory");
        memcpy(io->orig, io->dense, (size_t)ns * io->fsize);
    }
    if (io->conv) {
        if (H5Tget_class(io->mem_type) == H5T_COMPOUND) {
            if (!(io->bkg = calloc((size_t)ns, io->msize)))
                H5ZV_GOTO_ERROR("out of memory");
            if (io->dense_mem)
                memcpy(io->bkg, io->ubuf, (size_t)ns * io->msize);
            else
                H5Dgather(io->msel, io->ubuf, io->mem_type, (size_t)ns * io->msize, io->bkg, NULL, NULL);
        }
        if (H5Tconvert(io->mf, io->mem_type, (size_t)ns, io->dense, io->bkg, io->dxpl_id) < 0)
            H5ZV_GOTO_ERROR("can't convert data of '/%s' to the memory type", d->path);
    }
    if (io->dense_mem)
        memcpy(io->ubuf, io->dense, (size_t)ns * io->msize);
    else if (h5zv_scatter_dense(io->dense, (size_t)ns * io->msize, io->mem_type, io->msel, io->ubuf) < 0)
        H5ZV_GOTO_ERROR("can't scatter into the memory selection for '/%s'", d->path);
    ret = 0;
done:
    return ret;
}

/* Moves data between the user's buffer and the dataset. `n` is the dataset's node, borrowed: looked up
 * once per transfer by dset_xfer_any, which also refreshed d's dataspace from it. `ftype`: the engine's
 * memory-form type to use in place of the dataset's (H5I_INVALID_HID: the dataset's own). */
static int
dset_xfer(h5zv_obj *d, h5zv_node *n, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl_id,
          void *ubuf, bool write, hid_t ftype)
{
    xfer_io io  = {0};
    int     ret = -1;

    io.d        = d;
    io.n        = n;
    io.mem_type = mem_type;
    io.dxpl_id  = dxpl_id;
    io.ubuf     = ubuf;
    io.fspace   = file_space;
    io.fsel = io.msel = io.mf = H5I_INVALID_HID;
    if (write && d->file->intent != H5F_ACC_RDWR)
        H5ZV_GOTO_ERROR("can't write dataset '/%s': file '%s' is open read-only", d->path, d->file->name);
    if (xfer_plan(d, file_space, &io.x, &io.fsel) < 0)
        goto done;
    if (io.x.nsel == 0)
        ret = 0;
    else if (xfer_prepare(&io, mem_space, write, ftype) >= 0)
        ret = write ? xfer_write(&io) : xfer_read(&io);
done:
    if (io.orig) {
        h5zv_reclaim(io.mf, (size_t)io.x.nsel, io.orig);
        free(io.orig);
    }
    if (io.dense != ubuf)
        free(io.dense);
    if (io.box)
        free(io.box);
    if (io.bkg)
        free(io.bkg);
    h5zv_close(io.fsel);
    h5zv_close(io.msel);
    if (io.mf_owned)
        h5zv_close(io.mf);
    return ret;
}

/* Datasets in the packed form (h5zv_type_is_encoded): the engine moves vlen bytes, one packed element
 * each, through dset_xfer; elements are converted between the user's type and the dataset's memory
 * form here and packed/unpacked one by one. `n` as for dset_xfer (d's dataspace already refreshed:
 * the file selection of H5S_ALL is the current extent). */
static int
enc_xfer(h5zv_obj *d, h5zv_node *n, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl_id,
         void *ubuf, bool write)
{
    hid_t          fsel = H5I_INVALID_HID, msel = H5I_INVALID_HID, lin = H5I_INVALID_HID;
    hid_t          mf = H5I_INVALID_HID, vt = H5I_INVALID_HID;
    hssize_t       nsel;
    hsize_t        n1;
    size_t         fsize, msize, esize, nfilled = 0;
    uint8_t       *dense = NULL, *orig = NULL, *bkg = NULL;
    zarr_vlen     *vl   = NULL;
    bool           same = false;
    int            ret  = -1;
    h5zv_enc_plan *plan = NULL;

    if ((fsel = h5zv_dataset_file_space(d, file_space)) < 0 || (nsel = H5Sget_select_npoints(fsel)) < 0)
        H5ZV_GOTO_ERROR("can't resolve the file selection of '/%s'", d->path);
    if (nsel == 0) {
        ret = 0;
        goto done;
    }
    n1    = (hsize_t)nsel;
    mf    = h5zv_type_memform(d->type_id);
    vt    = H5Tvlen_create(H5T_NATIVE_UCHAR);
    lin   = H5Screate_simple(1, &n1, NULL);
    msel  = h5zv_dataset_mem_space(mem_space, fsel, nsel);
    fsize = H5Tget_size(mf);
    msize = H5Tget_size(mem_type);
    esize = fsize > msize ? fsize : msize;
    if (mf < 0 || vt < 0 || lin < 0 || msel < 0 || !(plan = h5zv_enc_plan_new(mf)))
        H5ZV_GOTO_ERROR("can't set up the transfer of '/%s'", d->path);
    if (!(dense = calloc((size_t)nsel, esize)) || !(vl = calloc((size_t)nsel, sizeof *vl)) ||
        !(bkg = calloc((size_t)nsel, esize)))
        H5ZV_GOTO_ERROR("out of memory for %lld elements of '/%s'", (long long)nsel, d->path);
    if (write) {
        if (H5Dgather(msel, ubuf, mem_type, (size_t)nsel * esize, dense, NULL, NULL) < 0)
            H5ZV_GOTO_ERROR("can't gather the memory selection for '/%s'", d->path);
        /* an identical memory type needs no conversion: `dense` then holds the caller's pointers (and
         * references), which are not ours to free. (HDF5 converts even between equal compound types,
         * member by member, copying their strings: skipped, not left to leak.) */
        same = H5Tequal(mem_type, mf) > 0;
        if (!same && H5Tconvert(mem_type, mf, (size_t)nsel, dense, bkg, dxpl_id) < 0)
            H5ZV_GOTO_ERROR("can't convert data for '/%s' to its stored type", d->path);
        h5zv_refs_begin(d->file);
        for (hssize_t i = 0; i < nsel; i++)
            if (h5zv_enc_pack_plan(plan, dense + (size_t)i * fsize, &vl[i]) < 0) {
                h5zv_refs_end();
                if (!same) {
                    h5zv_type_zero_refs(mf, dense, (size_t)nsel);
                    H5Treclaim(mf, lin, H5P_DEFAULT, dense);
                }
                H5ZV_GOTO_ERROR("can't pack element %lld of '/%s'", (long long)i, d->path);
            }
        h5zv_refs_end();
        if (!same) {
            h5zv_type_zero_refs(mf, dense, (size_t)nsel); /* bit copies of the caller's */
            H5Treclaim(mf, lin, H5P_DEFAULT, dense);
        }
        if (dset_xfer(d, n, vt, lin, fsel, H5P_DEFAULT, vl, true, vt) < 0)
            goto done;
    }
    else {
        if (dset_xfer(d, n, vt, lin, fsel, H5P_DEFAULT, vl, false, vt) < 0)
            goto done;
        h5zv_refs_begin(d->file);
        for (hssize_t i = 0; i < nsel; i++, nfilled++)
            if (h5zv_enc_unpack_plan(plan, &vl[i], dense + (size_t)i * fsize) < 0) {
                nfilled++; /* partly filled: reclaimed too */
                h5zv_refs_end();
                H5ZV_GOTO_ERROR("dataset '/%s': stored element %lld does not match its datatype", d->path,
                                (long long)i);
            }
        h5zv_refs_end();
        /* a no-op conversion hands the unpacked pointers and references to the caller as they are */
        same = H5Tequal(mem_type, mf) > 0;
        /* keep the unpacked form to free after the conversion has copied it */
        if (!(orig = malloc((size_t)nsel * fsize)))
            H5ZV_GOTO_ERROR("out of memory");
        memcpy(orig, dense, (size_t)nsel * fsize);
        if (!same && H5Tget_class(mem_type) == H5T_COMPOUND &&
            H5Dgather(msel, ubuf, mem_type, (size_t)nsel * esize, bkg, NULL, NULL) < 0)
            H5ZV_GOTO_ERROR("can't gather the memory selection for '/%s'", d->path);
        if (!same && H5Tconvert(mf, mem_type, (size_t)nsel, dense, bkg, dxpl_id) < 0)
            H5ZV_GOTO_ERROR("can't convert data of '/%s' to the memory type", d->path);
        if (h5zv_scatter_dense(dense, (size_t)nsel * msize, mem_type, msel, ubuf) < 0)
            H5ZV_GOTO_ERROR("can't scatter into the memory selection for '/%s'", d->path);
    }
    ret = 0;
done:
    if (orig || nfilled) {
        /* the unpacked memory form: reclaim what was allocated */
        if (!orig) {
            hsize_t nf = nfilled;
            hid_t   sp = H5Screate_simple(1, &nf, NULL);
            H5Treclaim(mf, sp, H5P_DEFAULT, dense);
            h5zv_close(sp);
        }
        else if (!same) {
            h5zv_type_zero_refs(mf, orig, (size_t)nsel); /* the conversion handed bit copies on */
            H5Treclaim(mf, lin, H5P_DEFAULT, orig);
        }
    }
    if (vl)
        for (hssize_t i = 0; i < nsel; i++)
            free(vl[i].p);
    free(vl);
    h5zv_enc_plan_free(plan);
    free(orig);
    free(dense);
    free(bkg);
    h5zv_close(fsel);
    h5zv_close(msel);
    h5zv_close(lin);
    h5zv_close(mf);
    h5zv_close(vt);
    return ret;
}

/* True if the dataset (object `d`, node `n`) is stored in the packed form: vlen bytes in zarr, and an
 * HDF5 type other than a vlen of fixed-size elements (which is stored as the elements' bytes). */
static bool
dset_is_packed(h5zv_obj *d, h5zv_node *n)
{
    bool r;
    if (zarr_array_meta_get(n->a)->dtype->kind != ZARR_VLEN_BYTES)
        return false;
    if (H5Tget_class(d->type_id) != H5T_VLEN)
        return true;
    {
        hid_t b = H5Tget_super(d->type_id);
        r       = b >= 0 && h5zv_type_has_pointers(b);
        H5Tclose(b);
    }
    return r;
}

/* One H5Dread/H5Dwrite of dataset `d`: its node is looked up once (engine options set) and d's dataspace
 * refreshed from it once, before any file selection is made: another handle may have changed the extent
 * (H5Dset_extent), and H5S_ALL means the extent as it is now, on every path. The node is passed down. */
static int
dset_xfer_any(h5zv_obj *d, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl_id, void *ubuf,
              bool write)
{
    h5zv_node *n = dset_node(d);
    if (!n || dset_refresh_space(d, n) < 0)
        return -1;
    if (d->node_virtual) /* a virtual dataset: the data is its sources' (vol/virtual.c) */
        return dset_dcpl(d) < 0 ? -1
                                : h5zv_virtual_xfer(d, mem_type, mem_space, file_space, dxpl_id, ubuf, write);
    if (h5zv_external_is(n)) /* external storage: the data is in the listed files (vol/external.c) */
        return dset_dcpl(d) < 0
                   ? -1
                   : h5zv_external_xfer(d, mem_type, mem_space, file_space, dxpl_id, ubuf, write);
    if (dset_is_packed(d, n))
        return enc_xfer(d, n, mem_type, mem_space, file_space, dxpl_id, ubuf, write);
    return dset_xfer(d, n, mem_type, mem_space, file_space, dxpl_id, ubuf, write, H5I_INVALID_HID);
}

/* H5Dread_multi / H5Dwrite_multi over several datasets: one batch (zarr_multi) for the regular
 * transfers of plain datasets (not virtual, external, packed or through MPI-IO). A read plans each
 * one's chunks and fetches them all with one request batch before the transfers run; a write's
 * transfers queue their chunks, stored by multi_end with one batch. NULL when there is nothing to
 * batch (one dataset) or the batch can't be made (the transfers then run one by one). */
static zarr_multi *
multi_begin(size_t count, void *dset[], hid_t file_space_id[], bool write)
{
    zarr_multi *m = NULL;
    if (count < 2 || zarr_multi_new(&m) != ZARR_OK) {
        zarr_error_clear();
        return NULL;
    }
    for (size_t i = 0; !write && i < count; i++) {
        h5zv_obj  *d = dset[i];
        h5zv_node *n;
        hid_t      fsel = H5I_INVALID_HID;
        xfer       x;
        H5E_BEGIN_TRY /* what fails here fails again, and is reported, in the transfer */
        {
            if (h5zv_dataset_ready(d) >= 0 && !d->file->mpi && (n = dset_node(d)) && n->a &&
                dset_refresh_space(d, n) >= 0 && !h5zv_virtual_is(n) && !h5zv_external_is(n) &&
                !dset_is_packed(d, n) && xfer_plan(d, file_space_id[i], &x, &fsel) >= 0 && !x.irregular &&
                x.nsel > 0)
                (void)zarr_multi_plan(m, n->a, &x.region); /* ZARR_EUNSUPPORTED: read alone */
        }
        H5E_END_TRY
        h5zv_close(fsel);
        zarr_error_clear();
    }
    if (!write)
        (void)zarr_multi_fetch(m); /* a chunk it could not fetch is fetched (and reported) by its read */
    zarr_error_clear();
    multi_now = m;
    return m;
}

/* Ends the batch of multi_begin: a write's queued chunks are stored (one batch) when the transfers
 * succeeded (`ok`), else dropped with the batch. -1 with the error pushed when the store fails. */
static int
multi_end(zarr_multi *m, bool ok)
{
    int ret   = 0;
    multi_now = NULL;
    if (m && ok && zarr_multi_store(m) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't store the datasets of a multi-dataset write");
done:
    zarr_multi_free(m);
    return ret;
}

herr_t
h5zv_dataset_read(size_t count, void *dset[], hid_t mem_type_id[], hid_t mem_space_id[],
                  hid_t file_space_id[], hid_t dxpl_id, void *buf[], void **req)
{
    zarr_multi *m  = multi_begin(count, dset, file_space_id, false);
    int         rc = 0;
    (void)req;
    for (size_t i = 0; i < count && rc >= 0; i++) {
        h5zv_obj *d = dset[i];
        rc          = h5zv_dataset_ready(d) < 0 ? -1
                                                : dset_xfer_any(d, mem_type_id[i], mem_space_id[i], file_space_id[i],
                                                                dxpl_id, buf[i], false);
        if (h5zv_mpi_collective(d->file, dxpl_id)) /* every rank is here: a failure fails them all */
            rc = h5zv_mpi_sync(d->file, d->path, rc >= 0);
    }
    multi_end(m, false);
    return rc < 0 ? -1 : 0;
}

herr_t
h5zv_dataset_write(size_t count, void *dset[], hid_t mem_type_id[], hid_t mem_space_id[],
                   hid_t file_space_id[], hid_t dxpl_id, const void *buf[], void **req)
{
    zarr_multi *m  = multi_begin(count, dset, file_space_id, true);
    int         rc = 0;
    (void)req;
    for (size_t i = 0; i < count && rc >= 0; i++) {
        h5zv_obj *d = dset[i];
        if (d->file->refidx && H5Tdetect_class(d->type_id, H5T_REFERENCE) > 0)
            h5zv_refidx_touch(d->file, d->path); /* references the next move rewrites (vol/refidx.c) */
        rc = h5zv_dataset_ready(d) < 0 ? -1
                                       : dset_xfer_any(d, mem_type_id[i], mem_space_id[i], file_space_id[i],
                                                       dxpl_id, (void *)buf[i], true);
        if (h5zv_mpi_collective(d->file, dxpl_id)) /* collective: the shared chunks' pieces go now */
            rc = h5zv_mpi_sync(d->file, d->path, rc >= 0);
    }
    /* the chunks the transfers queued go to the store now, in one batch: nothing is reported written
     * that is not stored */
    if (multi_end(m, rc >= 0) < 0)
        rc = -1;
    return rc < 0 ? -1 : 0;
}

/* H5Dget_storage_size of a dataset with external storage: `_h5zarr.storage_size` (what HDF5 records at
 * create), else the extent's element count times the element size. */
static int
dset_storage_size_ext(h5zv_obj *d, h5zv_node *n, uint64_t *out)
{
    struct json_object *meta = h5zv_node_meta(n, false);
    h5zv_jpath          w;
    hssize_t            np;
    int                 rc;

    h5zv_meta_where(&w, n, "");
    w.s[strlen(w.s) - 1] = '\0';
    if (meta && (rc = h5zv_json_uint(meta, w.s, "storage_size", false, 0, INT64_MAX, out)) != 0)
        return rc < 0 ? -1 : 0;
    if (dset_refresh_space(d, n) < 0 || (np = H5Sget_simple_extent_npoints(d->space_id)) < 0)
        return -1;
    *out = (uint64_t)np * H5Tget_size(d->type_id);
    return 0;
}

herr_t
h5zv_dataset_get(void *obj, H5VL_dataset_get_args_t *args, hid_t dxpl_id, void **req)
{
    h5zv_obj  *d = obj;
    h5zv_node *n;
    herr_t     ret = -1;
    (void)dxpl_id;
    (void)req;

    if (h5zv_dataset_ready(d) < 0)
        return -1;

    switch (args->op_type) {
        case H5VL_DATASET_GET_DAPL: {
            /* with the external file prefix as HDF5 resolved it ("${ORIGIN}" expanded, the environment's) */
            char *pre = NULL;
            hid_t p   = d->dapl_id >= 0 ? H5Pcopy(d->dapl_id) : H5Pcreate(H5P_DATASET_ACCESS);
            if (p < 0 || h5zv_external_prefix(d, &pre) < 0 || (pre && H5Pset_efile_prefix(p, pre) < 0)) {
                free(pre);
                h5zv_close(p);
                H5ZV_GOTO_ERROR("can't make the access property list of '/%s'", d->path);
            }
            free(pre);
            args->args.get_dapl.dapl_id = p;
            break;
        }
        case H5VL_DATASET_GET_DCPL:
            if (dset_dcpl(d) < 0)
                goto done;
            args->args.get_dcpl.dcpl_id = H5Pcopy(d->dcpl_id);
            break;
        case H5VL_DATASET_GET_SPACE:
            if (!(n = dset_node(d)) || dset_refresh_space(d, n) < 0)
                goto done;
            /* a virtual dataset's unlimited mappings take their extent from the sources (vol/virtual.c) */
            if (d->node_virtual && (dset_dcpl(d) < 0 || h5zv_virtual_space(d) < 0))
                goto done;
            args->args.get_space.space_id = H5Scopy(d->space_id);
            break;
        case H5VL_DATASET_GET_TYPE: {
            struct json_object *m, *v;
            hid_t               id = H5I_INVALID_HID;
            if ((n = dset_node(d)) && (m = h5zv_node_meta(n, false)) &&
                json_object_object_get_ex(m, "ctype", &v))
                id = h5zv_type_committed_id(d->file, json_object_get_string(v));
            args->args.get_type.type_id = id >= 0 ? id : H5Tcopy(d->type_id);
            break;
        }
        case H5VL_DATASET_GET_SPACE_STATUS:
        case H5VL_DATASET_GET_STORAGE_SIZE: {
            uint64_t nbytes = 0;
            if (!(n = dset_node(d)))
                goto done;
            if (h5zv_external_is(n)) { /* external storage is allocated, its size the one at create */
                if (dset_storage_size_ext(d, n, &nbytes) < 0)
                    goto done;
                if (args->op_type == H5VL_DATASET_GET_STORAGE_SIZE)
                    *args->args.get_storage_size.storage_size = nbytes;
                else
                    *args->args.get_space_status.status = H5D_SPACE_STATUS_ALLOCATED;
                break;
            }
            if (zarr_array_stored_bytes(n->a, &nbytes) != ZARR_OK)
                H5ZV_GOTO_ZERR("can't get the storage size of '/%s'", d->path);
            if (args->op_type == H5VL_DATASET_GET_STORAGE_SIZE)
                *args->args.get_storage_size.storage_size = nbytes;
            else /* a virtual dataset's data is in its sources: allocated, as HDF5 says */
                *args->args.get_space_status.status = nbytes || h5zv_virtual_is(n)
                                                          ? H5D_SPACE_STATUS_ALLOCATED
                                                          : H5D_SPACE_STATUS_NOT_ALLOCATED;
            break;
        }
        default:
            H5ZV_GOTO_ERROR("dataset get operation %d is not supported", (int)args->op_type);
    }
    ret = 0;
done:
    return ret;
}

herr_t
h5zv_dataset_specific(void *obj, H5VL_dataset_specific_args_t *args, hid_t dxpl_id, void **req)
{
    h5zv_obj  *d = obj;
    h5zv_node *n;
    herr_t     ret = -1;
    (void)dxpl_id;
    (void)req;

    if (h5zv_dataset_ready(d) < 0)
        return -1;

    switch (args->op_type) {
        case H5VL_DATASET_SET_EXTENT: {
            int      ndim = H5Sget_simple_extent_ndims(d->space_id);
            hsize_t  dims[ZARR_MAX_DIMS], maxdims[ZARR_MAX_DIMS];
            uint64_t shape[ZARR_MAX_DIMS];
            bool     later;
            if (d->file->intent != H5F_ACC_RDWR)
                H5ZV_GOTO_ERROR("can't extend '/%s': file is read-only", d->path);
            if (!(n = dset_node(d)) || dset_refresh_space(d, n) < 0 || dset_dcpl(d) < 0)
                goto done;
            /* HDF5 extends chunked datasets and contiguous ones with external storage */
            if (H5Pget_layout(d->dcpl_id) != H5D_CHUNKED && H5Pget_external_count(d->dcpl_id) <= 0)
                H5ZV_GOTO_ERROR(
                    "can't change the extent of '/%s': it was created with a %s layout, which HDF5 "
                    "can't extend (zarr could; create it chunked)",
                    d->path, H5Pget_layout(d->dcpl_id) == H5D_COMPACT ? "compact" : "contiguous");
            H5Sget_simple_extent_dims(d->space_id, dims, maxdims);
            later = h5zv_node_can_defer_doc(d->file);
            for (int i = 0; i < ndim; i++) {
                later = later && args->args.set_extent.size[i] >= dims[i]; /* a shrink writes at once */
                if (maxdims[i] != H5S_UNLIMITED && args->args.set_extent.size[i] > maxdims[i])
                    H5ZV_GOTO_ERROR("can't extend '/%s': dimension %d size %llu exceeds its maximum %llu",
                                    d->path, i, (unsigned long long)args->args.set_extent.size[i],
                                    (unsigned long long)maxdims[i]);
                shape[i] = args->args.set_extent.size[i];
                dims[i]  = shape[i];
            }
            /* a grow's document waits for the flush where a create's would (doc_dirty), as HDF5's own
             * metadata cache holds the new extent; every reader in this process asks the node */
            if ((later ? zarr_array_resize_unwritten(n->a, shape) : zarr_array_resize(n->a, shape)) !=
                ZARR_OK)
                H5ZV_GOTO_ZERR("can't change the extent of '/%s'", d->path);
            n->doc_time = 0; /* the core rewrote its document, or will at the flush */
            h5zv_node_shape_changed(n);
            if (later) {
                n->doc_dirty = true;
                h5zv_node_mark_dirty(n);
            }
            H5Sset_extent_simple(d->space_id, ndim, dims, maxdims);
            h5zv_dims_touch(d->file, d->path); /* phony dimension names go by size */
            break;
        }
        case H5VL_DATASET_FLUSH:
            if (h5zv_file_flush(d->file) < 0)
                goto done;
            break;
        case H5VL_DATASET_REFRESH:
            /* SWMR readers (vol/swmr.c): the writer's new shape, and its chunks instead of cached ones */
            if (!(n = dset_node(d)) || h5zv_swmr_refresh(d->file, n) < 0 || dset_refresh_space(d, n) < 0)
                goto done;
            break;
        default:
            H5ZV_GOTO_ERROR("dataset operation %d is not supported", (int)args->op_type);
    }
    ret = 0;
done:
    return ret;
}

herr_t
h5zv_dataset_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    h5zv_obj  *d = obj;
    h5zv_node *n;
    (void)req;
    if (h5zv_dataset_ready(d) < 0)
        return -1;
    switch (args->op_type) {
        /* the chunk API (vol/chunk.c) on the node, extent and dcpl as they are now */
        case H5VL_NATIVE_DATASET_GET_CHUNK_STORAGE_SIZE:
        case H5VL_NATIVE_DATASET_GET_NUM_CHUNKS:
        case H5VL_NATIVE_DATASET_GET_CHUNK_INFO_BY_IDX:
        case H5VL_NATIVE_DATASET_GET_CHUNK_INFO_BY_COORD:
        case H5VL_NATIVE_DATASET_CHUNK_READ:
        case H5VL_NATIVE_DATASET_CHUNK_WRITE:
        case H5VL_NATIVE_DATASET_CHUNK_ITER:
            if (!(n = dset_node(d)) || dset_refresh_space(d, n) < 0 || dset_dcpl(d) < 0)
                return -1;
            return h5zv_chunk_optional(d, n, args, dxpl_id);
        default:
            h5zv_err_push(__func__, __LINE__, "native-only dataset operation %d is not supported by zarr",
                          args->op_type);
            return -1;
    }
}

herr_t
h5zv_dataset_close(void *dset, hid_t dxpl_id, void **req)
{
    h5zv_obj  *d = dset;
    h5zv_node *n;
    (void)dxpl_id;
    (void)req;
    /* MPI-IO: H5Dclose is collective; the pieces of shared chunks queued for this dataset go now */
    if (d->file->mpi && d->file->intent == H5F_ACC_RDWR && h5zv_mpi_sync(d->file, d->path, true) < 0)
        return -1;
    /* Data is in the store when H5Dclose returns, as with native HDF5 (the engine caches partial chunks),
     * for a dataset whose documents are; nothing was written through a handle never loaded
     * (h5zv_dataset_ready). */
    n = NULL;
    if (d->file->intent == H5F_ACC_RDWR && d->type_id >= 0) {
        H5E_BEGIN_TRY
        {
            n = h5zv_node_get(d->file, d->path);
        } /* deleted under the handle: nothing to write */
        H5E_END_TRY
    }
    /* a node not written yet whose cache has only the writes it holds (within the core's budget): those
     * wait for the flush, which writes them with its documents (flush.c); no reader sees them before */
    if (n && n->type == ZARR_NODE_ARRAY && !n->deleted && !(n->unwritten && zarr_array_holds_all(n->a)) &&
        zarr_array_flush(n->a) != ZARR_OK) {
        h5zv_err_push(__func__, __LINE__, "can't write cached chunks of '/%s': %s", d->path, zarr_errmsg());
        return -1;
    }
    h5zv_obj_free(dset);
    return 0;
}
