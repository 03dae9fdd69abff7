/*
 * dataset_refs.c: references stored in datasets' data follow the objects they name. A dataset whose
 * type holds object references (plain, or inside vlen, array or compound types) is kept in the packed
 * form, one variable-length element each, a reference being the path of its object (docs/FORMAT.md,
 * "Object references"). After an H5Lmove the paths at or under the old name are rewritten to the new one,
 * so a reference read later names the moved object, as a native address would, and never a new object
 * made at the old name. The data is rewritten in slabs along the first dimension, so a large dataset of
 * references never sits in memory whole.
 */
#include "h5zv.h"

#include <stdlib.h>
#include <string.h>

/* Elements per slab: a bound on the memory a rewrite holds (the packed elements are short paths). */
#define REFS_SLAB_ELEMS ((uint64_t)1 << 16)

/* Rewrites the slab `r` of `a` (elements of type `t`, `nel` of them); *changed set when it wrote. */
static int
slab_move_refs(zarr_array *a, const zarr_dtype *dt, const zarr_region *r, uint64_t nel, hid_t t,
               const char *from, const char *to, const char *path)
{
    zarr_vlen     *v   = calloc((size_t)nel, sizeof *v);
    h5zv_enc_plan *p   = h5zv_enc_plan_new(t);
    bool           any = false;
    int            ret = -1;
    if (!v || !p)
        H5ZV_GOTO_ERROR("out of memory rewriting the references of '/%s'", path);
    if (zarr_array_read(a, r, v) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't read the references of '/%s' to move them", path);
    for (uint64_t i = 0; i < nel; i++) {
        zarr_vlen moved = {0, NULL};
        int       rc    = h5zv_enc_move_refs(p, &v[i], from, to, &moved);
        /* an element that doesn't match its type names no object: left as it is (reading the dataset
         * reports it), and the move goes on (as h5zv_attrs_move_refs) */
        if (rc <= 0)
            continue;
        free(v[i].p);
        v[i] = moved;
        any  = true;
    }
    if (any && zarr_array_write(a, r, v) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't write the moved references of '/%s'", path);
    ret = 0;
done:
    if (v)
        zarr_dtype_clear_elems(dt, v, (size_t)nel);
    free(v);
    h5zv_enc_plan_free(p);
    return ret;
}

/* The HDF5 type of array node `n` when its data may hold references (as h5zv_type_keep gives it: release
 * with h5zv_type_release), else negative (nothing pushed). */
static hid_t
refs_type(h5zv_node *n)
{
    const zarr_array_meta *m;
    hid_t                  t;
    if (!n || n->type != ZARR_NODE_ARRAY || !n->a)
        return H5I_INVALID_HID;
    m = zarr_array_meta_get(n->a);
    /* only the packed form (variable-length bytes) can hold references: a cheap test before the type */
    if (m->dtype->kind != ZARR_VLEN_BYTES)
        return H5I_INVALID_HID;
    if ((t = h5zv_type_keep(h5zv_type_from_zarr(m->dtype, h5zv_node_meta(n, false)))) < 0)
        return H5I_INVALID_HID; /* not an HDF5 type the connector made: nothing of ours to rewrite */
    if (H5Tdetect_class(t, H5T_REFERENCE) <= 0) {
        h5zv_type_release(t);
        return H5I_INVALID_HID;
    }
    return t;
}

bool
h5zv_dataset_holds_refs(h5zv_node *n)
{
    hid_t t = refs_type(n);
    h5zv_type_release(t);
    return t >= 0;
}

int
h5zv_dataset_move_refs(h5zv_node *n, const char *from, const char *to)
{
    const zarr_array_meta *m;
    zarr_region            r;
    uint64_t               row = 1, rows, step;
    hid_t                  t   = H5I_INVALID_HID;
    int                    ret = -1;

    if ((t = refs_type(n)) < 0)
        return 0;
    m = zarr_array_meta_get(n->a);
    zarr_region_all(m, &r);
    for (int k = 1; k < m->ndim; k++) {
        if (m->shape[k] && row > UINT64_MAX / m->shape[k])
            H5ZV_GOTO_ERROR("dataset '/%s' is too large to rewrite its references", n->path);
        row *= m->shape[k];
    }
    rows = m->ndim ? m->shape[0] : 1;
    if (row == 0 || rows == 0) {
        ret = 0;
        goto done;
    }
    step = row >= REFS_SLAB_ELEMS ? 1 : REFS_SLAB_ELEMS / row;
    if (row > SIZE_MAX / sizeof(zarr_vlen))
        H5ZV_GOTO_ERROR("dataset '/%s' is too large to rewrite its references", n->path);
    for (uint64_t s = 0; s < rows; s += step) {
        uint64_t cnt = rows - s < step ? rows - s : step;
        if (m->ndim) {
            r.start[0] = s;
            r.count[0] = cnt;
        }
        if (slab_move_refs(n->a, m->dtype, &r, cnt * row, t, from, to, n->path) < 0)
            goto done;
    }
    ret = 0;
done:
    h5zv_type_release(t);
    return ret;
}
