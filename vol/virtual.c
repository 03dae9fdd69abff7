/*
 * virtual.c: HDF5 virtual datasets (H5Pset_virtual) in zarr stores (docs/FORMAT.md, "Virtual datasets").
 *
 * A virtual dataset is a zarr array without chunks (its fill value everywhere, for zarr readers) whose
 * mapping is kept in `_h5zarr.virtual`: per mapping the selection in the dataset, the source file and
 * dataset names as HDF5 keeps them, the source dataspace's extent and the selection in it, all JSON
 * (never H5Sencode's bytes); `_h5zarr.dcpl` says `"layout": "virtual"`. A record read from a store is
 * checked field by field before the dcpl is built with H5Pset_virtual, which checks it again as HDF5
 * checks any mapping; what the connector writes passes the same checks first.
 *
 * Reads and writes run here, on the caller's thread (nothing here reaches the engine): each mapping the
 * request meets opens its source through the HDF5 API (H5Fopen with this connector, which gives a native
 * file to HDF5's native connector and a store to us; names looked for as HDF5 looks for them), and the
 * part it covers moves with one H5Dread/H5Dwrite on the projected selections
 * (H5Sselect_project_intersection). Unlimited and printf-style ("%b") mappings follow HDF5's rules
 * (H5Dvirtual.c): the extent comes from the sources, selections are clipped to what they hold.
 * Ownership: every function here borrows its arguments; ids it makes it closes, except the JSON handed
 * out by h5zv_virtual_to_json.
 */
#include "h5zv.h"
#include "reserved.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VDS_DEPTH_MAX  16         /* virtual datasets reading virtual datasets, at most this deep */
#define VDS_MAPS_MAX   (1u << 20) /* mappings of one dataset */
#define VDS_BLOCKS_MAX (1u << 20) /* blocks of one irregular selection */
#define VDS_NAME_MAX   4096       /* bytes of a source file or dataset name */
#define VDS_PRINTF_MAX (1u << 20) /* source datasets of one printf-style mapping */
#define VDS_COORD_MAX  ((uint64_t)1 << 62)
#define VDS_UNDEF      (~(hsize_t)0)

/* The virtual datasets being read or sized on this thread, nested (a source may be virtual too): one met
 * again maps itself, through its sources, and is refused before HDF5's error stack overflows. */
static _Thread_local struct {
    const h5zv_file *f;
    const char      *path;
} vds_active[VDS_DEPTH_MAX];
static _Thread_local int vds_depth;

static int
vds_enter(h5zv_obj *d)
{
    for (int i = 0; i < vds_depth; i++)
        if (vds_active[i].f == d->file && !strcmp(vds_active[i].path, d->path)) {
            h5zv_err_push(__func__, __LINE__,
                          "virtual dataset '/%s' of '%s' maps itself (through its sources)", d->path,
                          d->file->name);
            return -1;
        }
    if (vds_depth >= VDS_DEPTH_MAX) {
        h5zv_err_push(__func__, __LINE__, "virtual dataset '/%s': sources nested more than %d deep", d->path,
                      VDS_DEPTH_MAX);
        return -1;
    }
    vds_active[vds_depth].f      = d->file;
    vds_active[vds_depth++].path = d->path;
    return 0;
}

/* ---- selections as JSON -------------------------------------------------------------------------- */
static struct json_object *
coord_list(const hsize_t *v, int rank)
{
    struct json_object *l = json_object_new_array();
    for (int i = 0; i < rank; i++)
        json_object_array_add(l, v[i] == H5S_UNLIMITED ? json_object_new_int64(-1)
                                                       : json_object_new_uint64((uint64_t)v[i]));
    return l;
}

/* The selection of `s` as JSON: "all", "none", a regular hyperslab {start, stride, count, block} (-1:
 * H5S_UNLIMITED), or {"blocks": [[start, end], ...]} (inclusive ends). `what` names it in messages. */
static int
sel_to_json(hid_t s, const char *what, struct json_object **out)
{
    int                 rank = H5Sget_simple_extent_ndims(s);
    H5S_sel_type        st   = H5Sget_select_type(s);
    hsize_t            *buf  = NULL;
    struct json_object *o    = NULL;
    int                 ret  = -1;

    *out = NULL;
    if (rank < 0 || st < 0)
        H5ZV_GOTO_ERROR("can't read the %s", what);
    if (st == H5S_SEL_ALL)
        o = json_object_new_string("all");
    else if (st == H5S_SEL_NONE)
        o = json_object_new_string("none");
    else if (st != H5S_SEL_HYPERSLABS)
        H5ZV_GOTO_ERROR("the %s is a point selection: virtual datasets map hyperslabs", what);
    else if (H5Sis_regular_hyperslab(s) > 0) {
        hsize_t start[H5S_MAX_RANK], stride[H5S_MAX_RANK], count[H5S_MAX_RANK], block[H5S_MAX_RANK];
        if (H5Sget_regular_hyperslab(s, start, stride, count, block) < 0)
            H5ZV_GOTO_ERROR("can't read the %s", what);
        o = json_object_new_object();
        json_object_object_add(o, "start", coord_list(start, rank));
        json_object_object_add(o, "stride", coord_list(stride, rank));
        json_object_object_add(o, "count", coord_list(count, rank));
        json_object_object_add(o, "block", coord_list(block, rank));
    }
    else {
        hssize_t            nb = H5Sget_select_hyper_nblocks(s);
        struct json_object *l;
        if (nb < 0 || (uint64_t)nb > VDS_BLOCKS_MAX)
            H5ZV_GOTO_ERROR("the %s has %lld blocks (at most %u)", what, (long long)nb, VDS_BLOCKS_MAX);
        if (!(buf = malloc((size_t)(nb ? nb : 1) * 2 * (size_t)rank * sizeof *buf)))
            H5ZV_GOTO_ERROR("out of memory");
        if (nb && H5Sget_select_hyper_blocklist(s, 0, (hsize_t)nb, buf) < 0)
            H5ZV_GOTO_ERROR("can't read the blocks of the %s", what);
        o = json_object_new_object();
        l = json_object_new_array();
        json_object_object_add(o, "blocks", l);
        for (hssize_t b = 0; b < nb; b++) {
            struct json_object *pair = json_object_new_array();
            json_object_array_add(pair, coord_list(buf + (size_t)b * 2 * (size_t)rank, rank));
            json_object_array_add(pair, coord_list(buf + ((size_t)b * 2 + 1) * (size_t)rank, rank));
            json_object_array_add(l, pair);
        }
    }
    *out = o;
    o    = NULL;
    ret  = 0;
done:
    json_object_put(o);
    free(buf);
    return ret;
}

/* `rank` coordinates from list `l` (at `at`) into v: each in [lo, VDS_COORD_MAX], or -1 (H5S_UNLIMITED)
 * when `unlim_ok`. */
static int
coords_of(struct json_object *l, const char *at, int rank, uint64_t lo, bool unlim_ok, hsize_t *v)
{
    h5zv_jpath ip;
    int        ret = -1;
    if (!json_object_is_type(l, json_type_array) || json_object_array_length(l) != (size_t)rank)
        H5ZV_JSON_FAIL(at, "must be a list of %d integers", rank);
    for (int i = 0; i < rank; i++) {
        struct json_object *x = json_object_array_get_idx(l, (size_t)i);
        uint64_t            u = 0;
        if (unlim_ok && json_object_is_type(x, json_type_int) && json_object_get_int64(x) == -1) {
            v[i] = H5S_UNLIMITED;
            continue;
        }
        if (h5zv_json_uint_val(x, h5zv_jpath_idx(&ip, at, (size_t)i), lo, VDS_COORD_MAX, &u) < 0)
            goto done;
        v[i] = (hsize_t)u;
    }
    ret = 0;
done:
    return ret;
}

/* Field `key` of `o` as coordinates (coords_of); absent and not `required`: every entry `def`. */
static int
coords_field(struct json_object *o, const char *at, const char *key, bool required, int rank, uint64_t lo,
             bool unlim_ok, hsize_t def, hsize_t *v)
{
    struct json_object *l = NULL;
    h5zv_jpath          kp;
    if (!json_object_object_get_ex(o, key, &l)) {
        if (required) {
            h5zv_json_fail_at(__func__, __LINE__, h5zv_jpath_key(&kp, at, key), "missing");
            return -1;
        }
        for (int i = 0; i < rank; i++)
            v[i] = def;
        return 0;
    }
    return coords_of(l, h5zv_jpath_key(&kp, at, key), rank, lo, unlim_ok, v);
}

/* Checks that a selection ending at `end` (exclusive) in dimension `i` lies in `dims` (when given). */
static int
check_end(const char *at, int i, uint64_t end, const hsize_t *dims)
{
    int ret = -1;
    if (end > VDS_COORD_MAX)
        H5ZV_JSON_FAIL(at, "dimension %d ends beyond 2^62", i);
    if (dims && end > dims[i])
        H5ZV_JSON_FAIL(at, "dimension %d ends at %llu, beyond the dataset's size %llu in that dimension", i,
                       (unsigned long long)end, (unsigned long long)dims[i]);
    ret = 0;
done:
    return ret;
}

/* Applies the selection `j` (at `at`; sel_to_json's form) to `s` of rank `rank`. `dims`: where its
 * limited dimensions must lie (the dataset's dimensions), or NULL (a source: only sizes are checked).
 * Unlimited counts or blocks only when `unlim_ok`, in one dimension. */
static int
sel_from_json(struct json_object *j, const char *at, hid_t s, int rank, const hsize_t *dims, bool unlim_ok)
{
    static const char *const reg_keys[] = {"start", "stride", "count", "block", NULL};
    static const char *const blk_keys[] = {"blocks", NULL};
    hsize_t                  start[H5S_MAX_RANK], stride[H5S_MAX_RANK], count[H5S_MAX_RANK];
    hsize_t                  block[H5S_MAX_RANK], ones[H5S_MAX_RANK];
    struct json_object      *bl = NULL;
    h5zv_jpath               kp, bp, ep;
    int                      ret = -1, unlim = -1;

    if (json_object_is_type(j, json_type_string)) {
        const char *v = json_object_get_string(j);
        if (!strcmp(v, "all") && H5Sselect_all(s) >= 0)
            return 0;
        if (!strcmp(v, "none") && H5Sselect_none(s) >= 0)
            return 0;
        H5ZV_JSON_FAIL(at, "\"%.40s\" is not a selection (\"all\", \"none\" or an object)", v);
    }
    if (!json_object_is_type(j, json_type_object))
        H5ZV_JSON_FAIL(at, "must be \"all\", \"none\" or an object (a hyperslab)");
    if (rank < 1)
        H5ZV_JSON_FAIL(at, "a hyperslab in a dataspace without dimensions");
    if (json_object_object_get_ex(j, "blocks", NULL)) {
        /* an irregular hyperslab: its blocks, [start, end] each */
        if (h5zv_json_keys(j, at, blk_keys) < 0 ||
            h5zv_json_list(j, at, "blocks", true, 0, VDS_BLOCKS_MAX, &bl) < 0)
            goto done;
        h5zv_jpath_key(&kp, at, "blocks");
        if (H5Sselect_none(s) < 0)
            H5ZV_JSON_FAIL(at, "can't reset the selection");
        for (int i = 0; i < rank; i++)
            ones[i] = 1;
        for (size_t b = 0; b < json_object_array_length(bl); b++) {
            struct json_object *pair = json_object_array_get_idx(bl, b);
            hsize_t             end[H5S_MAX_RANK];
            h5zv_jpath_idx(&bp, kp.s, b);
            if (!json_object_is_type(pair, json_type_array) || json_object_array_length(pair) != 2)
                H5ZV_JSON_FAIL(bp.s, "must be a list [start, end] of two lists of %d integers", rank);
            if (coords_of(json_object_array_get_idx(pair, 0), h5zv_jpath_idx(&ep, bp.s, 0), rank, 0, false,
                          start) < 0 ||
                coords_of(json_object_array_get_idx(pair, 1), h5zv_jpath_idx(&ep, bp.s, 1), rank, 0, false,
                          end) < 0)
                goto done;
            for (int i = 0; i < rank; i++) {
                if (end[i] < start[i])
                    H5ZV_JSON_FAIL(bp.s, "dimension %d ends at %llu, before its start %llu", i,
                                   (unsigned long long)end[i], (unsigned long long)start[i]);
                if (check_end(bp.s, i, (uint64_t)end[i] + 1, dims) < 0)
                    goto done;
                block[i] = end[i] - start[i] + 1;
            }
            if (H5Sselect_hyperslab(s, H5S_SELECT_OR, start, NULL, ones, block) < 0)
                H5ZV_JSON_FAIL(bp.s, "HDF5 refused the block");
        }
        return 0;
    }
    if (h5zv_json_keys(j, at, reg_keys) < 0 ||
        coords_field(j, at, "start", true, rank, 0, false, 0, start) < 0 ||
        coords_field(j, at, "stride", false, rank, 1, false, 1, stride) < 0 ||
        coords_field(j, at, "count", true, rank, 0, unlim_ok, 0, count) < 0 ||
        coords_field(j, at, "block", false, rank, 1, unlim_ok, 1, block) < 0)
        goto done;
    for (int i = 0; i < rank; i++) {
        uint64_t end = 0, span = 0;
        if (count[i] == H5S_UNLIMITED || block[i] == H5S_UNLIMITED) {
            if (unlim >= 0 || (count[i] == H5S_UNLIMITED && block[i] == H5S_UNLIMITED))
                H5ZV_JSON_FAIL(at, "more than one unlimited count or block (dimension %d)", i);
            unlim = i;
            continue;
        }
        if (count[i] == 0)
            continue;
        if (__builtin_mul_overflow((uint64_t)stride[i], (uint64_t)count[i] - 1, &span) ||
            __builtin_add_overflow(span, (uint64_t)start[i], &end) ||
            __builtin_add_overflow(end, (uint64_t)block[i], &end))
            H5ZV_JSON_FAIL(at, "dimension %d ends beyond 2^64", i);
        if (check_end(at, i, end, dims) < 0)
            goto done;
    }
    if (H5Sselect_hyperslab(s, H5S_SELECT_SET, start, stride, count, block) < 0)
        H5ZV_JSON_FAIL(at, "HDF5 refused the hyperslab (overlapping blocks: a stride below the block?)");
    ret = 0;
done:
    return ret;
}

/* ---- the mapping record ------------------------------------------------------------------------------ */
/* Builds the mappings of `l` (at `where`) on `dcpl` for a dataset of dataspace `space`. */
static int
maps_from_json(struct json_object *l, const char *where, hid_t space, hid_t dcpl)
{
    static const char *const keys[] = {"vspace", "file", "dataset", "src_dims", "src_maxdims", "src", NULL};
    hsize_t                  dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
    hid_t                    vs = H5I_INVALID_HID, ss = H5I_INVALID_HID;
    h5zv_jpath               mp, kp, ip;
    int                      rank, ret = -1;

    if (!json_object_is_type(l, json_type_array))
        H5ZV_JSON_FAIL(where, "must be a list of mappings");
    if (json_object_array_length(l) > VDS_MAPS_MAX)
        H5ZV_JSON_FAIL(where, "%zu mappings (at most %u)", json_object_array_length(l), VDS_MAPS_MAX);
    if (H5Sget_simple_extent_type(space) != H5S_SIMPLE || (rank = H5Sget_simple_extent_ndims(space)) < 1 ||
        H5Sget_simple_extent_dims(space, dims, maxdims) < 0)
        H5ZV_JSON_FAIL(where, "a virtual dataset needs a dataspace with dimensions");
    for (size_t i = 0; i < json_object_array_length(l); i++) {
        struct json_object *e = json_object_array_get_idx(l, i), *v = NULL, *sd = NULL, *sm = NULL;
        const char         *file = NULL, *dset = NULL;
        hsize_t             sdims[H5S_MAX_RANK], smax[H5S_MAX_RANK];
        int                 srank;
        h5zv_jpath_idx(&mp, where, i);
        if (h5zv_json_keys(e, mp.s, keys) < 0 ||
            h5zv_json_str(e, mp.s, "file", true, VDS_NAME_MAX, &file) < 0 ||
            h5zv_json_str(e, mp.s, "dataset", true, VDS_NAME_MAX, &dset) < 0 ||
            h5zv_json_list(e, mp.s, "src_dims", true, 0, H5S_MAX_RANK, &sd) < 0 ||
            h5zv_json_list(e, mp.s, "src_maxdims", false, 0, H5S_MAX_RANK, &sm) < 0)
            goto done;
        if (!*file)
            H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, mp.s, "file"), "an empty file name");
        if (!*dset)
            H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, mp.s, "dataset"), "an empty dataset name");
        srank = (int)json_object_array_length(sd);
        if (coords_of(sd, h5zv_jpath_key(&kp, mp.s, "src_dims"), srank, 0, false, sdims) < 0)
            goto done;
        if (sm && coords_of(sm, h5zv_jpath_key(&kp, mp.s, "src_maxdims"), srank, 0, true, smax) < 0)
            goto done;
        for (int k = 0; k < srank; k++) {
            if (!sm)
                smax[k] = sdims[k];
            else if (smax[k] != H5S_UNLIMITED && smax[k] < sdims[k])
                H5ZV_JSON_FAIL(h5zv_jpath_idx(&ip, h5zv_jpath_key(&kp, mp.s, "src_maxdims"), (size_t)k),
                               "%llu is below the size %llu", (unsigned long long)smax[k],
                               (unsigned long long)sdims[k]);
        }
        if ((vs = H5Scopy(space)) < 0 ||
            (ss = srank ? H5Screate_simple(srank, sdims, smax) : H5Screate(H5S_SCALAR)) < 0)
            H5ZV_JSON_FAIL(mp.s, "can't make its dataspaces");
        if (!json_object_object_get_ex(e, "vspace", &v))
            H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, mp.s, "vspace"), "missing");
        if (sel_from_json(v, h5zv_jpath_key(&kp, mp.s, "vspace"), vs, rank, dims, true) < 0)
            goto done;
        if (!json_object_object_get_ex(e, "src", &v))
            H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, mp.s, "src"), "missing");
        if (sel_from_json(v, h5zv_jpath_key(&kp, mp.s, "src"), ss, srank, NULL, true) < 0)
            goto done;
        if (H5Pset_virtual(dcpl, vs, file, dset, ss) < 0)
            H5ZV_JSON_FAIL(mp.s, "HDF5 refused the mapping (its selections' sizes or the names' %%b)");
        H5Sclose(vs);
        H5Sclose(ss);
        vs = ss = H5I_INVALID_HID;
    }
    ret = 0;
done:
    h5zv_close(vs);
    h5zv_close(ss);
    return ret;
}

bool
h5zv_virtual_is(h5zv_node *n)
{
    struct json_object *m = n ? h5zv_node_meta(n, false) : NULL;
    return m && json_object_object_get_ex(m, "virtual", NULL);
}

int
h5zv_virtual_to_json(hid_t dcpl, hid_t space, const char *path, struct json_object **out)
{
    struct json_object *l = json_object_new_array(), *sel = NULL;
    size_t              n  = 0;
    hid_t               vs = H5I_INVALID_HID, ss = H5I_INVALID_HID, check = H5I_INVALID_HID;
    char               *name = NULL;
    char                where[600];
    int                 ret = -1;

    *out = NULL;
    if (H5Pget_virtual_count(dcpl, &n) < 0)
        H5ZV_GOTO_ERROR("can't create virtual dataset '/%s': can't read its mappings", path);
    if (n > VDS_MAPS_MAX)
        H5ZV_GOTO_ERROR("can't create virtual dataset '/%s': %zu mappings (at most %u)", path, n,
                        VDS_MAPS_MAX);
    for (size_t i = 0; i < n; i++) {
        struct json_object *m = json_object_new_object();
        hsize_t             sdims[H5S_MAX_RANK], smax[H5S_MAX_RANK];
        int                 srank;
        bool                maxed = false;
        json_object_array_add(l, m);
        if ((vs = H5Pget_virtual_vspace(dcpl, i)) < 0 || (ss = H5Pget_virtual_srcspace(dcpl, i)) < 0)
            H5ZV_GOTO_ERROR("can't create virtual dataset '/%s': can't read mapping %zu", path, i);
        if (sel_to_json(vs, "virtual selection", &sel) < 0)
            goto done;
        json_object_object_add(m, "vspace", sel);
        for (int k = 0; k < 2; k++) {
            ssize_t len =
                k ? H5Pget_virtual_dsetname(dcpl, i, NULL, 0) : H5Pget_virtual_filename(dcpl, i, NULL, 0);
            if (len < 0 || !(name = malloc((size_t)len + 1)) ||
                (k ? H5Pget_virtual_dsetname(dcpl, i, name, (size_t)len + 1)
                   : H5Pget_virtual_filename(dcpl, i, name, (size_t)len + 1)) < 0)
                H5ZV_GOTO_ERROR("can't create virtual dataset '/%s': can't read the names of mapping %zu",
                                path, i);
            json_object_object_add(m, k ? "dataset" : "file", json_object_new_string(name));
            free(name);
            name = NULL;
        }
        if (H5Sget_simple_extent_type(ss) == H5S_NULL || (srank = H5Sget_simple_extent_ndims(ss)) < 0 ||
            H5Sget_simple_extent_dims(ss, sdims, smax) < 0)
            H5ZV_GOTO_ERROR("can't create virtual dataset '/%s': mapping %zu has a null source dataspace",
                            path, i);
        json_object_object_add(m, "src_dims", coord_list(sdims, srank));
        for (int k = 0; k < srank; k++)
            maxed |= smax[k] != sdims[k];
        if (maxed)
            json_object_object_add(m, "src_maxdims", coord_list(smax, srank));
        if (sel_to_json(ss, "source selection", &sel) < 0)
            goto done;
        json_object_object_add(m, "src", sel);
        H5Sclose(vs);
        H5Sclose(ss);
        vs = ss = H5I_INVALID_HID;
    }
    /* what a reader will refuse is not written: the record is read back as a reader reads it */
    snprintf(where, sizeof where, "virtual dataset '/%s': %s.virtual", path, H5ZV_META_KEY);
    if ((check = H5Pcreate(H5P_DATASET_CREATE)) < 0 || maps_from_json(l, where, space, check) < 0)
        H5ZV_GOTO_ERROR("can't create virtual dataset '/%s'", path);
    *out = l;
    l    = NULL;
    ret  = 0;
done:
    free(name);
    json_object_put(l);
    h5zv_close(vs);
    h5zv_close(ss);
    h5zv_close(check);
    return ret;
}

int
h5zv_virtual_dcpl(h5zv_obj *d, h5zv_node *n, hid_t p)
{
    struct json_object *m = h5zv_node_meta(n, false), *v = NULL;
    bool                has = m && json_object_object_get_ex(m, "virtual", &v);
    H5D_layout_t        lay = H5Pget_layout(p);
    h5zv_jpath          w, w2;
    int                 ret = -1;

    if (!has && lay != H5D_VIRTUAL)
        return 0;
    h5zv_meta_where(&w, n, "virtual");
    if (!has)
        H5ZV_JSON_FAIL(w.s, "missing, while %s.layout is \"virtual\"", h5zv_meta_where(&w2, n, "dcpl"));
    if (lay != H5D_VIRTUAL)
        H5ZV_JSON_FAIL(w.s, "given for a dataset whose dcpl layout is not \"virtual\"");
    /* the codecs of a chunkless array (a configured default codec) are no filters of the dataset */
    if (H5Pget_nfilters(p) > 0 && H5Premove_filter(p, H5Z_FILTER_ALL) < 0)
        H5ZV_GOTO_ERROR("can't reset the filters of virtual dataset '/%s'", d->path);
    ret = maps_from_json(v, w.s, d->space_id, p);
done:
    return ret;
}

/* ---- finding and opening sources --------------------------------------------------------------------- */
/* Opens `name` through the HDF5 API with this connector (a store: ours; a native file: HDF5's native
 * connector under us, as the program's own handles of it are). Quiet: negative when it does not open. */
static hid_t
open_file(const char *name, unsigned flags)
{
    h5zarr_info_t info = {0, 0, H5ZARR_CREATE_AUTO, NULL};
    hid_t         fapl = H5I_INVALID_HID, vol = H5I_INVALID_HID, fid = H5I_INVALID_HID;
    if (!zarr_store_is_url(name) && access(name, F_OK) != 0)
        return H5I_INVALID_HID;
    H5E_BEGIN_TRY
    {
        if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) >= 0 &&
            (vol = H5VLregister_connector_by_name(H5ZV_NAME, H5P_DEFAULT)) >= 0 &&
            H5Pset_vol(fapl, vol, &info) >= 0)
            fid = H5Fopen(name, flags, fapl);
        if (vol >= 0)
            H5VLclose(vol);
        if (fapl >= 0)
            H5Pclose(fapl);
    }
    H5E_END_TRY
    return fid;
}

/* `dir` + "/" + `name` (malloc'ed; NULL when out of memory). */
static char *
join(const char *dir, size_t dlen, const char *name)
{
    size_t n = dlen + strlen(name) + 2;
    char  *p = malloc(n);
    if (p)
        snprintf(p, n, "%.*s%s%s", (int)dlen, dir, dlen && dir[dlen - 1] == '/' ? "" : "/", name);
    return p;
}

static hid_t
open_joined(const char *dir, size_t dlen, const char *name, unsigned flags)
{
    char *p   = join(dir, dlen, name);
    hid_t fid = p ? open_file(p, flags) : H5I_INVALID_HID;
    free(p);
    return fid;
}

/* Opens a prefix (leading "${ORIGIN}": `origin`, the directory of the virtual dataset's file) + `name`. */
static hid_t
open_prefixed(const char *prefix, size_t plen, const char *origin, size_t olen, const char *name,
              unsigned flags)
{
    hid_t fid;
    char *p;
    if (plen >= 9 && !strncmp(prefix, "${ORIGIN}", 9)) {
        size_t n = olen + plen - 9 + 1;
        if (!(p = malloc(n)))
            return H5I_INVALID_HID;
        snprintf(p, n, "%.*s%.*s", (int)olen, origin, (int)(plen - 9), prefix + 9);
        fid = open_joined(p, strlen(p), name, flags);
        free(p);
        return fid;
    }
    return open_joined(prefix, plen, name, flags);
}

/* Opens the source file `name` of a mapping of `d` as HDF5 looks for it (H5F_prefix_open_file): "." is
 * the virtual dataset's own file; an absolute name (or URL) as it is, else by its last component; then
 * the prefixes of HDF5_VDS_PREFIX (":"-separated), or else the dataset access list's
 * (H5Pset_virtual_prefix); then the directory of the virtual dataset's file; then the name as it is
 * (from the working directory); then the directory of the file's real path. Negative: not found. */
static hid_t
src_file_open(h5zv_obj *d, const char *name, unsigned flags)
{
    h5zv_file  *f   = d->file;
    const char *own = f->real ? f->real : f->name, *base = name, *env = getenv("HDF5_VDS_PREFIX");
    const char *cut  = strrchr(own, '/');
    size_t      olen = cut ? (size_t)(cut - own) : 0;
    char       *pre  = NULL;
    hid_t       fid  = H5I_INVALID_HID;

    if (!strcmp(name, "."))
        return open_file(own, flags);
    if (name[0] == '/' || zarr_store_is_url(name)) {
        if ((fid = open_file(name, flags)) >= 0)
            return fid;
        base = strrchr(name, '/') + 1;
        if (!*base)
            return H5I_INVALID_HID;
    }
    if (env && *env) {
        for (const char *p = env; *p && fid < 0;) {
            size_t len = strcspn(p, ":");
            if (len)
                fid = open_prefixed(p, len, own, olen, base, flags);
            p += len;
            if (*p == ':')
                p++;
        }
    }
    else if (d->dapl_id >= 0) {
        ssize_t len = H5Pget_virtual_prefix(d->dapl_id, NULL, 0);
        if (len > 0 && (pre = malloc((size_t)len + 1)) &&
            H5Pget_virtual_prefix(d->dapl_id, pre, (size_t)len + 1) >= 0 && strcmp(pre, "."))
            fid = open_prefixed(pre, strlen(pre), own, olen, base, flags);
    }
    if (fid < 0) {
        const char *s = strrchr(f->name, '/');
        if (s)
            fid = open_joined(f->name, (size_t)(s - f->name), base, flags);
    }
    if (fid < 0)
        fid = open_file(base, flags);
    if (fid < 0 && cut)
        fid = open_joined(own, olen, base, flags);
    free(pre);
    return fid;
}

/* ---- unlimited selections (HDF5's H5S_hyper_clip_unlim and its helpers, on regular hyperslabs) ------ */
typedef struct reg {
    hsize_t start[H5S_MAX_RANK], stride[H5S_MAX_RANK], count[H5S_MAX_RANK], block[H5S_MAX_RANK];
} reg;

/* The unlimited dimension of `s`'s selection (a regular hyperslab with an H5S_UNLIMITED count or block),
 * its parameters in *r; -1 when it has none. */
static int
unlim_dim(hid_t s, reg *r)
{
    int rank = H5Sget_simple_extent_ndims(s);
    if (rank < 1 || H5Sget_select_type(s) != H5S_SEL_HYPERSLABS || H5Sis_regular_hyperslab(s) <= 0 ||
        H5Sget_regular_hyperslab(s, r->start, r->stride, r->count, r->block) < 0)
        return -1;
    for (int i = 0; i < rank; i++)
        if (r->count[i] == H5S_UNLIMITED || r->block[i] == H5S_UNLIMITED)
            return i;
    return -1;
}

/* Count and block of dimension u of `r` clipped to the extent `clip` (H5S__hyper_get_clip_diminfo). */
static void
clip_dim(const reg *r, int u, hsize_t clip, hsize_t *count, hsize_t *block)
{
    *count = r->count[u];
    *block = r->block[u];
    if (r->start[u] >= clip) {
        if (*block == H5S_UNLIMITED)
            *block = 0;
        else
            *count = 0;
    }
    else if (*block == H5S_UNLIMITED || *block == r->stride[u]) {
        *block = clip - r->start[u];
        *count = 1;
    }
    else
        *count = (clip - r->start[u] + r->stride[u] - 1) / r->stride[u];
}

/* The slices (elements along dimension u) that `r` selects below `clip`. */
static hsize_t
clip_slices(const reg *r, int u, hsize_t clip)
{
    hsize_t c, b, n, span;
    clip_dim(r, u, clip, &c, &b);
    if (!c || !b)
        return 0;
    n    = c * b;
    span = r->stride[u] * (c - 1) + b;
    if (span > clip - r->start[u])
        n -= span - (clip - r->start[u]); /* a partial last block */
    return n;
}

/* The extent `r` is clipped to in dimension u to hold `n` slices (H5S__hyper_get_clip_extent_real):
 * `incl_trail` takes in the gap after a last whole block. */
static hsize_t
clip_extent(const reg *r, int u, hsize_t n, bool incl_trail)
{
    hsize_t c, rem;
    if (n == 0)
        return incl_trail ? r->start[u] : 0;
    if (r->block[u] == H5S_UNLIMITED || r->block[u] == r->stride[u])
        return r->start[u] + n;
    c   = n / r->block[u];
    rem = n - c * r->block[u];
    if (rem)
        return r->start[u] + c * r->stride[u] + rem;
    return incl_trail ? r->start[u] + c * r->stride[u] : r->start[u] + (c - 1) * r->stride[u] + r->block[u];
}

/* Selects on `s` the hyperslab `r` clipped to `clip` in dimension u. */
static int
select_clipped(hid_t s, const reg *r, int u, hsize_t clip)
{
    reg c    = *r;
    int rank = H5Sget_simple_extent_ndims(s);
    clip_dim(r, u, clip, &c.count[u], &c.block[u]);
    if (!c.count[u] || !c.block[u])
        return H5Sselect_none(s) < 0 ? -1 : 0;
    if (H5Sselect_hyperslab(s, H5S_SELECT_SET, c.start, c.stride, c.count, c.block) < 0)
        return -1;
    if (c.stride[u] * (c.count[u] - 1) + c.block[u] > clip - c.start[u]) {
        /* the last block is partial: keep what lies below the clip */
        hsize_t zero[H5S_MAX_RANK] = {0}, one[H5S_MAX_RANK], box[H5S_MAX_RANK];
        for (int i = 0; i < rank; i++) {
            one[i] = 1;
            box[i] = i == u ? clip : VDS_COORD_MAX;
        }
        if (H5Sselect_hyperslab(s, H5S_SELECT_AND, zero, NULL, one, box) < 0)
            return -1;
    }
    return 0;
}

/* ---- one operation's view of the mappings ------------------------------------------------------------ */
typedef struct vmap {
    hid_t   v, s;         /* the selections as the dcpl holds them */
    char   *file, *dset;  /* the names as recorded (printf-style: with %b) */
    int     uv, us;       /* unlimited dimensions of v and s, or -1 */
    reg     rv, rs;       /* their parameters, when unlimited */
    bool    pf;           /* printf-style: v unlimited, s not; one source per block of v */
    bool    found;        /* unlimited, not printf-style: the source opened (fid, did) */
    hsize_t nblocks;      /* printf-style: blocks 0 .. nblocks-1 have sources that may exist */
    hsize_t vclip, sclip; /* unlimited, not printf-style: where v and s are clipped */
    hid_t   fid, did;
} vmap;

typedef struct vent {
    size_t  map;
    hsize_t blk;      /* printf-style: the block of the mapping's selection */
    hid_t   fid, did; /* the source, open, or negative */
    hid_t   pm, ps;   /* the request's part: memory and source selections */
} vent;

static void
maps_free(vmap *m, size_t n)
{
    for (size_t i = 0; m && i < n; i++) {
        h5zv_close(m[i].v);
        h5zv_close(m[i].s);
        h5zv_close(m[i].did);
        h5zv_close(m[i].fid);
        free(m[i].file);
        free(m[i].dset);
    }
    free(m);
}

static char *
plist_name(hid_t dcpl, size_t i, bool dset)
{
    ssize_t len =
        dset ? H5Pget_virtual_dsetname(dcpl, i, NULL, 0) : H5Pget_virtual_filename(dcpl, i, NULL, 0);
    char *p = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (p && (dset ? H5Pget_virtual_dsetname(dcpl, i, p, (size_t)len + 1)
                   : H5Pget_virtual_filename(dcpl, i, p, (size_t)len + 1)) < 0) {
        free(p);
        p = NULL;
    }
    return p;
}

/* The mappings of `d`'s dcpl (made by the caller), with their unlimited dimensions. */
static int
maps_load(h5zv_obj *d, vmap **out, size_t *nout)
{
    size_t n   = 0;
    vmap  *m   = NULL;
    int    ret = -1;
    *out       = NULL;
    *nout      = 0;
    if (H5Pget_virtual_count(d->dcpl_id, &n) < 0)
        H5ZV_GOTO_ERROR("can't read the mappings of virtual dataset '/%s'", d->path);
    if (n && !(m = calloc(n, sizeof *m)))
        H5ZV_GOTO_ERROR("out of memory");
    for (size_t i = 0; i < n; i++)
        m[i].v = m[i].s = m[i].fid = m[i].did = H5I_INVALID_HID;
    for (size_t i = 0; i < n; i++) {
        if ((m[i].v = H5Pget_virtual_vspace(d->dcpl_id, i)) < 0 ||
            (m[i].s = H5Pget_virtual_srcspace(d->dcpl_id, i)) < 0 ||
            !(m[i].file = plist_name(d->dcpl_id, i, false)) || !(m[i].dset = plist_name(d->dcpl_id, i, true)))
            H5ZV_GOTO_ERROR("can't read mapping %zu of virtual dataset '/%s'", i, d->path);
        m[i].uv = unlim_dim(m[i].v, &m[i].rv);
        m[i].us = unlim_dim(m[i].s, &m[i].rs);
        m[i].pf = m[i].uv >= 0 && m[i].us < 0;
        if (m[i].pf && m[i].rv.block[m[i].uv] == H5S_UNLIMITED)
            H5ZV_GOTO_ERROR(
                "virtual dataset '/%s': printf-style mapping %zu has an unlimited block (it needs an "
                "unlimited count)",
                d->path, i);
    }
    *out  = m;
    *nout = n;
    m     = NULL;
    ret   = 0;
done:
    maps_free(m, n);
    return ret;
}

/* `fmt` with each "%b" replaced by `j` and "%%" by "%" (malloc'ed). */
static char *
subst(const char *fmt, hsize_t j)
{
    size_t n = strlen(fmt) * 11 + 32, o = 0;
    char  *p = malloc(n);
    if (!p)
        return NULL;
    for (const char *s = fmt; *s && o + 24 < n; s++) {
        if (s[0] == '%' && s[1] == 'b') {
            o += (size_t)snprintf(p + o, n - o, "%llu", (unsigned long long)j);
            s++;
        }
        else if (s[0] == '%' && s[1] == '%') {
            p[o++] = '%';
            s++;
        }
        else
            p[o++] = *s;
    }
    p[o] = '\0';
    return p;
}

/* Opens the source of mapping `m` (printf-style: of block j): *fid, *did open, or both negative when the
 * file or the dataset is not there (it reads as the fill value, as in HDF5). */
static void
src_open(h5zv_obj *d, const vmap *m, hsize_t j, unsigned flags, hid_t *fid, hid_t *did)
{
    char *file = m->pf ? subst(m->file, j) : m->file, *dset = m->pf ? subst(m->dset, j) : m->dset;
    *fid = *did = H5I_INVALID_HID;
    if (file && dset && (*fid = src_file_open(d, file, flags)) >= 0) {
        H5E_BEGIN_TRY { *did = H5Dopen2(*fid, dset, H5P_DEFAULT); }
        H5E_END_TRY
        if (*did < 0) {
            h5zv_close(*fid);
            *fid = H5I_INVALID_HID;
        }
    }
    if (m->pf) {
        free(file);
        free(dset);
    }
}

/* The current dimensions of dataset `did` (rank `want`, else an error naming the mapping). */
static int
src_dims(h5zv_obj *d, size_t i, hid_t did, int want, hsize_t *dims)
{
    hid_t s = H5I_INVALID_HID;
    int   rank, ret = -1;
    H5E_BEGIN_TRY { s = H5Dget_space(did); }
    H5E_END_TRY
    rank = s >= 0 ? H5Sget_simple_extent_ndims(s) : -1;
    if (rank != want)
        H5ZV_GOTO_ERROR("virtual dataset '/%s': the source dataset of mapping %zu has %d dimensions, the "
                        "mapping %d",
                        d->path, i, rank, want);
    if (rank > 0 && H5Sget_simple_extent_dims(s, dims, NULL) < 0)
        H5ZV_GOTO_ERROR("can't read the extent of the source of mapping %zu of '/%s'", i, d->path);
    ret = 0;
done:
    h5zv_close(s);
    return ret;
}

/* Brings d->space_id to the extent the sources give the unlimited mappings (H5D__virtual_set_extent_unlim):
 * each such mapping reaches as far as its source's data, the dataset as far as the furthest (the
 * default view, H5D_VDS_LAST_AVAILABLE) or the nearest (H5D_VDS_FIRST_MISSING) of them, never below
 * what its limited mappings cover. Non-printf unlimited mappings keep their sources open (m->found). */
static int
plan_extent(h5zv_obj *d, vmap *m, size_t n, unsigned flags)
{
    hsize_t        cur[H5S_MAX_RANK], maxd[H5S_MAX_RANK], want[H5S_MAX_RANK], mind[H5S_MAX_RANK];
    H5D_vds_view_t view = H5D_VDS_LAST_AVAILABLE;
    hsize_t        gap  = 0;
    bool           any = false, changed = false;
    int            rank = H5Sget_simple_extent_ndims(d->space_id), ret = -1;

    if (rank < 1 || H5Sget_simple_extent_dims(d->space_id, cur, maxd) < 0)
        H5ZV_GOTO_ERROR("virtual dataset '/%s' has no dimensions", d->path);
    for (int k = 0; k < rank; k++) {
        want[k] = VDS_UNDEF;
        mind[k] = 0;
    }
    if (d->dapl_id >= 0 &&
        (H5Pget_virtual_view(d->dapl_id, &view) < 0 || H5Pget_virtual_printf_gap(d->dapl_id, &gap) < 0))
        H5ZV_GOTO_ERROR("can't read the virtual view of '/%s'", d->path);
    for (size_t i = 0; i < n; i++) {
        vmap        *e    = &m[i];
        H5S_sel_type st   = H5Sget_select_type(e->v);
        hsize_t      clip = 0;
        /* what the limited dimensions of the mappings cover (H5D_virtual_update_min_dims) */
        if (e->uv >= 0) {
            for (int k = 0; k < rank; k++)
                if (k != e->uv && e->rv.count[k])
                    mind[k] =
                        mind[k] > e->rv.start[k] + e->rv.stride[k] * (e->rv.count[k] - 1) + e->rv.block[k]
                            ? mind[k]
                            : e->rv.start[k] + e->rv.stride[k] * (e->rv.count[k] - 1) + e->rv.block[k];
        }
        else if (st == H5S_SEL_HYPERSLABS && H5Sget_select_npoints(e->v) > 0) {
            hsize_t lo[H5S_MAX_RANK], hi[H5S_MAX_RANK];
            if (H5Sget_select_bounds(e->v, lo, hi) < 0)
                H5ZV_GOTO_ERROR("can't read mapping %zu of '/%s'", i, d->path);
            for (int k = 0; k < rank; k++)
                if (hi[k] + 1 > mind[k])
                    mind[k] = hi[k] + 1;
        }
        if (e->uv < 0)
            continue;
        if (!e->pf) {
            hsize_t sd[H5S_MAX_RANK];
            src_open(d, e, 0, flags, &e->fid, &e->did);
            if (e->did >= 0) {
                if (src_dims(d, i, e->did, H5Sget_simple_extent_ndims(e->s), sd) < 0)
                    goto done;
                e->found = true;
                e->sclip = sd[e->us];
                e->vclip = clip_extent(&e->rv, e->uv, clip_slices(&e->rs, e->us, e->sclip),
                                       view == H5D_VDS_FIRST_MISSING);
                clip     = e->vclip;
            }
        }
        else {
            /* printf-style: sources 0, 1, ... while they exist, looking `gap` past a missing one */
            hsize_t fm = 0;
            for (hsize_t j = 0; j <= gap + fm && j < VDS_PRINTF_MAX; j++) {
                hid_t fid, did;
                src_open(d, e, j, flags, &fid, &did);
                if (did >= 0)
                    fm = j + 1;
                h5zv_close(did);
                h5zv_close(fid);
            }
            e->nblocks = fm;
            if (view == H5D_VDS_FIRST_MISSING)
                clip = e->rv.start[e->uv] + fm * e->rv.stride[e->uv];
            else
                clip = fm ? e->rv.start[e->uv] + (fm - 1) * e->rv.stride[e->uv] + e->rv.block[e->uv] : 0;
        }
        if (want[e->uv] == VDS_UNDEF ||
            (view == H5D_VDS_FIRST_MISSING ? clip < want[e->uv] : clip > want[e->uv]))
            want[e->uv] = clip;
        any = true;
    }
    if (!any) {
        ret = 0;
        goto done;
    }
    for (int k = 0; k < rank; k++) {
        if (want[k] == VDS_UNDEF)
            want[k] = cur[k];
        else if (want[k] < mind[k])
            want[k] = mind[k];
        if (maxd[k] != H5S_UNLIMITED && want[k] > maxd[k])
            H5ZV_GOTO_ERROR(
                "virtual dataset '/%s': its sources reach %llu in dimension %d, beyond its maximum "
                "size %llu",
                d->path, (unsigned long long)want[k], k, (unsigned long long)maxd[k]);
        changed |= want[k] != cur[k];
    }
    d->space_stamp = 0; /* not the node's shape: built again at the next use (dataset.c) */
    if (changed && H5Sset_extent_simple(d->space_id, rank, want, maxd) < 0)
        H5ZV_GOTO_ERROR("can't set the extent of virtual dataset '/%s'", d->path);
    if (view == H5D_VDS_FIRST_MISSING)
        /* every unlimited mapping is cut at the dataset's extent, its source to match */
        for (size_t i = 0; i < n; i++)
            if (m[i].found) {
                m[i].vclip = want[m[i].uv];
                m[i].sclip =
                    clip_extent(&m[i].rs, m[i].us, clip_slices(&m[i].rv, m[i].uv, m[i].vclip), false);
            }
    ret = 0;
done:
    return ret;
}

int
h5zv_virtual_space(h5zv_obj *d)
{
    vmap  *m     = NULL;
    size_t n     = 0;
    bool   unlim = false;
    int    ret   = -1;
    if (d->dcpl_id < 0 || H5Pget_layout(d->dcpl_id) != H5D_VIRTUAL)
        return 0;
    if (vds_enter(d) < 0)
        return -1;
    if (maps_load(d, &m, &n) < 0)
        goto done;
    for (size_t i = 0; i < n; i++)
        unlim |= m[i].uv >= 0;
    if (unlim && plan_extent(d, m, n, H5F_ACC_RDONLY) < 0) /* sources are only looked at */
        goto done;
    ret = 0;
done:
    maps_free(m, n);
    vds_depth--;
    return ret;
}

/* ---- reads and writes -------------------------------------------------------------------------------- */
/* Applies a selection's offset (H5Soffset_simple) to the selection itself, as dataset.c does. */
static int
sel_unshift(hid_t s)
{
    int          rank = H5Sget_simple_extent_ndims(s);
    hsize_t      lo[H5S_MAX_RANK], hi[H5S_MAX_RANK], lo0[H5S_MAX_RANK], hi0[H5S_MAX_RANK];
    hssize_t     zero[H5S_MAX_RANK] = {0}, adj[H5S_MAX_RANK];
    bool         moved              = false;
    H5S_sel_type st                 = H5Sget_select_type(s);
    if (rank <= 0 || (st != H5S_SEL_HYPERSLABS && st != H5S_SEL_POINTS))
        return 0;
    if (H5Sget_select_bounds(s, lo, hi) < 0 || H5Soffset_simple(s, zero) < 0 ||
        H5Sget_select_bounds(s, lo0, hi0) < 0)
        return -1;
    for (int i = 0; i < rank; i++) {
        adj[i] = (hssize_t)lo0[i] - (hssize_t)lo[i];
        moved |= adj[i] != 0;
    }
    return moved && H5Sselect_adjust(s, adj) < 0 ? -1 : 0;
}

/* The fill value into the `n` elements of `msel` in `buf` (nothing when it is undefined, as in HDF5).
 * Types with pointers get a copy each. */
static int
fill_mem(h5zv_obj *d, hid_t mem_type, hid_t msel, hssize_t n, void *buf)
{
    H5D_fill_value_t fs  = H5D_FILL_VALUE_DEFAULT;
    size_t           msz = H5Tget_size(mem_type);
    uint8_t         *v   = NULL;
    int              ret = -1;
    if (H5Pfill_value_defined(d->dcpl_id, &fs) < 0 || msz == 0)
        H5ZV_GOTO_ERROR("can't read the fill value of '/%s'", d->path);
    if (fs == H5D_FILL_VALUE_UNDEFINED) {
        ret = 0;
        goto done;
    }
    if (!h5zv_type_has_pointers(mem_type)) {
        if (!(v = calloc(1, msz)))
            H5ZV_GOTO_ERROR("out of memory");
        if (H5Pget_fill_value(d->dcpl_id, mem_type, v) < 0 || H5Dfill(v, mem_type, buf, mem_type, msel) < 0)
            H5ZV_GOTO_ERROR("can't put the fill value of '/%s' into the memory type", d->path);
    }
    else {
        if (!(v = calloc((size_t)n, msz)))
            H5ZV_GOTO_ERROR("out of memory");
        for (hssize_t k = 0; k < n; k++)
            if (H5Pget_fill_value(d->dcpl_id, mem_type, v + (size_t)k * msz) < 0)
                H5ZV_GOTO_ERROR("can't put the fill value of '/%s' into the memory type", d->path);
        if (h5zv_scatter_dense(v, (size_t)n * msz, mem_type, msel, buf) < 0)
            H5ZV_GOTO_ERROR("can't put the fill value of '/%s' into the memory selection", d->path);
    }
    ret = 0;
done:
    free(v);
    return ret;
}

/* The selection of entry `e` (mapping `m`) in the dataset, on a copy of its current dataspace. */
static hid_t
ent_vsel(h5zv_obj *d, const vmap *m, const vent *e)
{
    hid_t s = H5Scopy(d->space_id);
    int   rc;
    if (s < 0)
        return s;
    if (m->uv < 0)
        rc = H5Sselect_copy(s, m->v);
    else if (!m->pf)
        rc = select_clipped(s, &m->rv, m->uv, m->vclip);
    else {
        reg b = m->rv;
        b.start[m->uv] += e->blk * b.stride[m->uv];
        b.count[m->uv] = 1;
        rc             = H5Sselect_hyperslab(s, H5S_SELECT_SET, b.start, b.stride, b.count, b.block);
    }
    if (rc < 0) {
        h5zv_close(s);
        return H5I_INVALID_HID;
    }
    return s;
}

/* The selection of entry `e`'s source, on a copy of the source's current dataspace. */
static hid_t
ent_ssel(h5zv_obj *d, const vmap *m, const vent *e)
{
    hid_t s = H5I_INVALID_HID;
    int   rc;
    H5E_BEGIN_TRY { s = H5Dget_space(e->did); }
    H5E_END_TRY
    if (s < 0)
        return s;
    if (H5Sget_simple_extent_ndims(s) != H5Sget_simple_extent_ndims(m->s)) {
        h5zv_err_push(__func__, __LINE__,
                      "virtual dataset '/%s': source dataset '%s' has %d dimensions, the "
                      "mapping %d",
                      d->path, m->dset, H5Sget_simple_extent_ndims(s), H5Sget_simple_extent_ndims(m->s));
        h5zv_close(s);
        return H5I_INVALID_HID;
    }
    if (m->us >= 0)
        rc = select_clipped(s, &m->rs, m->us, m->sclip);
    else
        rc = H5Sselect_copy(s, m->s);
    if (rc < 0) {
        h5zv_close(s);
        return H5I_INVALID_HID;
    }
    return s;
}

/* Moves the request `fsel` (hyperslabs or all; `nsel` elements) of `d` and the memory selection `msel`
 * (hyperslabs or all: H5Sselect_project_intersection pairs elements in order only for those) through the
 * sources of mappings `m`. Reads put the fill value first where no source is; writes need a source for
 * every element, or write nothing. */
static int
xfer_core(h5zv_obj *d, vmap *m, size_t nm, hid_t mem_type, hid_t fsel, hid_t msel, hssize_t nsel,
          hid_t dxpl_id, void *buf, bool write)
{
    vent    *e  = NULL;
    size_t   ne = 0, cap = 0;
    hid_t    vsel = H5I_INVALID_HID, ssel = H5I_INVALID_HID;
    hssize_t mapped = 0;
    unsigned flags  = write ? H5F_ACC_RDWR : H5F_ACC_RDONLY;
    int      ret    = -1;

    if (!write && fill_mem(d, mem_type, msel, nsel, buf) < 0)
        goto done;
    /* the parts of the request each source holds */
    for (size_t i = 0; i < nm; i++) {
        hsize_t nb = m[i].pf ? m[i].nblocks : (m[i].uv >= 0 && !m[i].found) ? 0 : 1;
        for (hsize_t j = 0; j < nb; j++) {
            vent    *x;
            hssize_t k;
            if (ne == cap) {
                vent *g = realloc(e, (cap ? cap * 2 : 8) * sizeof *e);
                if (!g)
                    H5ZV_GOTO_ERROR("out of memory");
                e   = g;
                cap = cap ? cap * 2 : 8;
            }
            x  = &e[ne];
            *x = (vent){i, j, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID};
            ne++;
            if ((vsel = ent_vsel(d, &m[i], x)) < 0 ||
                (x->pm = H5Sselect_project_intersection(fsel, msel, vsel)) < 0 ||
                (k = H5Sget_select_npoints(x->pm)) < 0)
                H5ZV_GOTO_ERROR("can't intersect the request with mapping %zu of virtual dataset '/%s'", i,
                                d->path);
            if (k > 0) {
                if (m[i].found) { /* opened for the extent */
                    x->fid   = m[i].fid;
                    x->did   = m[i].did;
                    m[i].fid = m[i].did = H5I_INVALID_HID;
                }
                else if (m[i].uv < 0 || m[i].pf)
                    src_open(d, &m[i], j, flags, &x->fid, &x->did);
            }
            if (k > 0 && x->did >= 0) {
                if ((ssel = ent_ssel(d, &m[i], x)) < 0 ||
                    (x->ps = H5Sselect_project_intersection(vsel, ssel, fsel)) < 0)
                    H5ZV_GOTO_ERROR(
                        "virtual dataset '/%s': can't select mapping %zu in its source dataset '%s' of "
                        "'%s'",
                        d->path, i, m[i].dset, m[i].file);
                mapped += k;
            }
            h5zv_close(vsel);
            h5zv_close(ssel);
            vsel = ssel = H5I_INVALID_HID;
        }
    }
    if (write && mapped < nsel)
        H5ZV_GOTO_ERROR(
            "can't write virtual dataset '/%s': %lld of the %lld elements selected have no source "
            "dataset (unmapped, or a source that does not open); nothing was written",
            d->path, (long long)(nsel - mapped), (long long)nsel);
    for (size_t k = 0; k < ne; k++) {
        vmap *mp = &m[e[k].map];
        if (e[k].did < 0 || e[k].ps < 0)
            continue;
        herr_t rc;
        /* quiet: a failure is reported once, by the caller's H5Dread/H5Dwrite (with these messages) */
        H5E_BEGIN_TRY
        {
            rc = write ? H5Dwrite(e[k].did, mem_type, e[k].pm, e[k].ps, dxpl_id, buf)
                       : H5Dread(e[k].did, mem_type, e[k].pm, e[k].ps, dxpl_id, buf);
        }
        H5E_END_TRY
        if (rc < 0)
            H5ZV_GOTO_ERROR("can't %s mapping %zu of virtual dataset '/%s': source dataset '%s' of '%s'",
                            write ? "write" : "read", e[k].map, d->path, mp->dset, mp->file);
    }
    ret = 0;
done:
    for (size_t k = 0; k < ne; k++) {
        h5zv_close(e[k].pm);
        h5zv_close(e[k].ps);
        h5zv_close(e[k].did);
        h5zv_close(e[k].fid);
    }
    free(e);
    h5zv_close(vsel);
    h5zv_close(ssel);
    return ret;
}

#define VDS_BOX_MAX ((uint64_t)1 << 30) /* bytes of the box a point selection is read through */

/* A read of the points `fsel` of `d` (in their order) into `msel` of `buf`: the points' bounding box is
 * read (a hyperslab), the points gathered from it. */
static int
read_points(h5zv_obj *d, vmap *m, size_t nm, hid_t mem_type, hid_t fsel, hid_t msel, hssize_t nsel,
            hid_t dxpl_id, void *buf)
{
    int      rank = H5Sget_simple_extent_ndims(fsel);
    hsize_t  lo[H5S_MAX_RANK], hi[H5S_MAX_RANK], c[H5S_MAX_RANK], *pts = NULL;
    size_t   msz  = H5Tget_size(mem_type);
    uint64_t nbox = 1;
    hid_t    boxf = H5I_INVALID_HID, boxm = H5I_INVALID_HID, boxp = H5I_INVALID_HID;
    uint8_t *tmp = NULL, *dense = NULL;
    bool     got = false;
    int      ret = -1;

    if (rank < 1 || msz == 0 || H5Sget_select_bounds(fsel, lo, hi) < 0)
        H5ZV_GOTO_ERROR("can't read the point selection of virtual dataset '/%s'", d->path);
    for (int i = 0; i < rank; i++) {
        c[i] = hi[i] - lo[i] + 1;
        if (__builtin_mul_overflow(nbox, (uint64_t)c[i], &nbox) || nbox * msz > VDS_BOX_MAX)
            H5ZV_GOTO_ERROR("virtual dataset '/%s': the points selected span more than %llu bytes; read "
                            "them as hyperslabs",
                            d->path, (unsigned long long)VDS_BOX_MAX);
    }
    if (!(tmp = calloc((size_t)nbox, msz)) || !(dense = calloc((size_t)nsel, msz)) ||
        !(pts = malloc((size_t)nsel * (size_t)rank * sizeof *pts)))
        H5ZV_GOTO_ERROR("out of memory");
    if ((boxf = H5Scopy(d->space_id)) < 0 ||
        H5Sselect_hyperslab(boxf, H5S_SELECT_SET, lo, NULL, c, NULL) < 0 ||
        (boxm = H5Screate_simple(rank, c, NULL)) < 0 || (boxp = H5Screate_simple(rank, c, NULL)) < 0 ||
        H5Sget_select_elem_pointlist(fsel, 0, (hsize_t)nsel, pts) < 0)
        H5ZV_GOTO_ERROR("can't set up the point read of virtual dataset '/%s'", d->path);
    for (hssize_t k = 0; k < nsel; k++)
        for (int i = 0; i < rank; i++)
            pts[(size_t)k * (size_t)rank + (size_t)i] -= lo[i];
    if (H5Sselect_elements(boxp, H5S_SELECT_SET, (size_t)nsel, pts) < 0)
        H5ZV_GOTO_ERROR("can't set up the point read of virtual dataset '/%s'", d->path);
    if (xfer_core(d, m, nm, mem_type, boxf, boxm, (hssize_t)nbox, dxpl_id, tmp, false) < 0)
        goto done;
    got = true;
    /* the points in their order (shallow copies of what they point to: ownership moves to `buf`) */
    if (H5Dgather(boxp, tmp, mem_type, (size_t)nsel * msz, dense, NULL, NULL) < 0 ||
        h5zv_scatter_dense(dense, (size_t)nsel * msz, mem_type, msel, buf) < 0)
        H5ZV_GOTO_ERROR("can't place the points of virtual dataset '/%s'", d->path);
    ret = 0;
done:
    if (got && h5zv_type_has_pointers(mem_type)) {
        /* what the box holds besides the points handed over */
        void *zero = calloc(1, msz);
        if (ret == 0 && zero)
            H5Dfill(zero, mem_type, tmp, mem_type, boxp);
        if (zero)
            H5Treclaim(mem_type, boxm, H5P_DEFAULT, tmp);
        free(zero);
    }
    free(tmp);
    free(dense);
    free(pts);
    h5zv_close(boxf);
    h5zv_close(boxm);
    h5zv_close(boxp);
    return ret;
}

int
h5zv_virtual_xfer(h5zv_obj *d, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl_id, void *buf,
                  bool write)
{
    vmap    *m  = NULL;
    size_t   nm = 0, msz = H5Tget_size(mem_type);
    hid_t    fsel = H5I_INVALID_HID, msel = H5I_INVALID_HID, lin = H5I_INVALID_HID;
    hssize_t nsel;
    uint8_t *dense = NULL;
    int      ret   = -1;

    if (vds_enter(d) < 0)
        return -1;
    if (write && d->file->intent != H5F_ACC_RDWR)
        H5ZV_GOTO_ERROR("can't write virtual dataset '/%s': file '%s' is open read-only", d->path,
                        d->file->name);
    if (maps_load(d, &m, &nm) < 0 || plan_extent(d, m, nm, write ? H5F_ACC_RDWR : H5F_ACC_RDONLY) < 0)
        goto done;
    /* the request, its offsets applied */
    if ((fsel = H5Scopy(file_space == H5S_ALL ? d->space_id : file_space)) < 0 ||
        (file_space == H5S_ALL ? H5Sselect_all(fsel) : sel_unshift(fsel)) < 0 ||
        (nsel = H5Sget_select_npoints(fsel)) < 0)
        H5ZV_GOTO_ERROR("can't resolve the file selection of virtual dataset '/%s'", d->path);
    if (nsel == 0) {
        ret = 0;
        goto done;
    }
    if (mem_space == H5S_ALL)
        msel = H5Scopy(fsel);
    else if (mem_space == H5S_BLOCK) {
        hsize_t k = (hsize_t)nsel;
        msel      = H5Screate_simple(1, &k, NULL);
    }
    else if ((msel = H5Scopy(mem_space)) >= 0 && sel_unshift(msel) < 0) {
        h5zv_close(msel);
        msel = H5I_INVALID_HID;
    }
    if (msel < 0)
        H5ZV_GOTO_ERROR("can't resolve the memory selection for virtual dataset '/%s'", d->path);
    if (H5Sget_select_type(fsel) == H5S_SEL_POINTS) {
        if (write)
            H5ZV_GOTO_ERROR("can't write virtual dataset '/%s' through a point selection: select hyperslabs",
                            d->path);
        ret = read_points(d, m, nm, mem_type, fsel, msel, nsel, dxpl_id, buf);
        goto done;
    }
    if (H5Sget_select_type(msel) == H5S_SEL_POINTS) {
        /* memory points: through a dense buffer in selection order */
        hsize_t k = (hsize_t)nsel;
        if (!(dense = calloc((size_t)nsel, msz ? msz : 1)) || (lin = H5Screate_simple(1, &k, NULL)) < 0)
            H5ZV_GOTO_ERROR("out of memory");
        if (write && H5Dgather(msel, buf, mem_type, (size_t)nsel * msz, dense, NULL, NULL) < 0)
            H5ZV_GOTO_ERROR("can't gather the memory selection for virtual dataset '/%s'", d->path);
        if (xfer_core(d, m, nm, mem_type, fsel, lin, nsel, dxpl_id, dense, write) < 0)
            goto done;
        if (!write && h5zv_scatter_dense(dense, (size_t)nsel * msz, mem_type, msel, buf) < 0)
            H5ZV_GOTO_ERROR("can't scatter into the memory selection for virtual dataset '/%s'", d->path);
        ret = 0;
        goto done;
    }
    ret = xfer_core(d, m, nm, mem_type, fsel, msel, nsel, dxpl_id, buf, write);
done:
    free(dense);
    h5zv_close(lin);
    h5zv_close(fsel);
    h5zv_close(msel);
    maps_free(m, nm);
    vds_depth--;
    return ret;
}
