/*
 * dims.c: zarr dimension names for every array the connector writes.
 *
 * xarray (and zarrita, zarr-python 3) need a name per array axis: v3 `dimension_names`, v2 the
 * `_ARRAY_DIMENSIONS` attribute. They come from HDF5 dimension scales (H5DSattach_scale: the dataset's
 * DIMENSION_LIST names a scale per axis; a scale dataset is its own first dimension), and for axes
 * without a scale from h5netcdf's phony_dim_<n> rule, per group (docs/FORMAT.md, "Dimension names").
 *
 * Names depend on other nodes (the scales, the other arrays of the group), so they are recomputed at
 * flush for the groups that changed (h5zv_dims_touch, a dirty group, or an array of ours still without
 * names), before the dirty nodes are written; arrays whose names changed are marked dirty then. An axis
 * whose attached scale is gone (moved by netCDF's nc_rename_dim) is named by netCDF's dimension ids.
 */
#include "h5zv.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIMS_ATTR   "_ARRAY_DIMENSIONS"
#define NOT_A_VAR   "This is a netCDF dimension but not a netCDF variable."
#define PHONY_FMT   "phony_dim_%zu"
#define MAX_PHONIES 1024

/* The group node at `path` if cached or loadable, quietly. */
static h5zv_node *
quiet_node(h5zv_file *f, const char *path)
{
    h5zv_node *n = NULL;
    h5zv_errs *e = h5zv_err_save();
    H5E_BEGIN_TRY { n = h5zv_node_get(f, path); }
    H5E_END_TRY
    h5zv_err_restore(e);
    return n;
}

/* True if array `n` is the connector's: it has a reserved object, or its parent group records its link
 * (creation order). Arrays made through the connector with nothing to keep have no `_h5zarr` of their
 * own (docs/FORMAT.md). */
static bool
ours(h5zv_file *f, h5zv_node *n)
{
    char               *parent = NULL, *leaf = NULL;
    h5zv_node          *g;
    struct json_object *m, *c;
    bool                r = false;
    if (h5zv_node_meta(n, false))
        return true;
    if (*n->path && h5zv_path_split(n->path, &parent, &leaf) == 0 && (g = quiet_node(f, parent)) &&
        g->type == ZARR_NODE_GROUP && (m = h5zv_node_meta(g, false)) &&
        json_object_object_get_ex(m, "corder", &c) && json_object_is_type(c, json_type_object))
        r = json_object_object_get_ex(c, leaf, NULL);
    free(parent);
    free(leaf);
    return r;
}

void
h5zv_dims_touch(h5zv_file *f, const char *path)
{
    char      *parent = NULL, *leaf = NULL;
    h5zv_node *g;
    if (!f || !path || !*path || h5zv_is_anon(path) || h5zv_path_split(path, &parent, &leaf) < 0)
        goto done;
    if ((g = quiet_node(f, parent)) && g->type == ZARR_NODE_GROUP)
        g->dims_dirty = true;
done:
    free(parent);
    free(leaf);
}

static bool
is_scale(h5zv_node *n)
{
    struct json_object *c = h5zv_attr_value(n, "CLASS");
    return c && json_object_is_type(c, json_type_string) &&
           !strcmp(json_object_get_string(c), "DIMENSION_SCALE");
}

/* The dimension name a scale at node path `spath` stands for: its NAME when that is a plain name, else
 * its link name (netCDF's dimensions without a coordinate variable carry NAME "This is a netCDF
 * dimension but not a netCDF variable. <n>"; their link name is the netCDF dimension's name).
 * malloc'ed. */
static char *
scale_name(h5zv_file *f, const char *spath)
{
    h5zv_node          *s = quiet_node(f, spath);
    struct json_object *nm;
    const char         *leaf = strrchr(spath, '/');
    if (s && (nm = h5zv_attr_value(s, "NAME")) && json_object_is_type(nm, json_type_string)) {
        const char *v = json_object_get_string(nm);
        if (*v && strncmp(v, NOT_A_VAR, strlen(NOT_A_VAR)) != 0)
            return strdup(v);
    }
    return strdup(leaf ? leaf + 1 : spath);
}

/* The node path of the scale attached to axis `axis` of `n` (the last one when several are, as netCDF-C
 * and h5netcdf take it), from DIMENSION_LIST's packed value (a u64 count of references, each a u64 byte
 * count and the object's path, docs/FORMAT.md); NULL when none. malloc'ed. */
static char *
attached_scale(h5zv_node *n, int axis)
{
    struct json_object *p   = h5zv_attr_packed(n, "DIMENSION_LIST");
    uint8_t            *b   = NULL;
    size_t              len = 0, off = 8;
    uint64_t            cnt;
    char               *res = NULL;
    if (!p || (size_t)axis >= json_object_array_length(p))
        return NULL;
    b = h5zv_b64_decode(json_object_get_string(json_object_array_get_idx(p, (size_t)axis)), &len);
    if (!b || len < 8)
        goto done;
    cnt = h5zv_le64(b);
    for (uint64_t i = 0; i < cnt && off + 8 <= len; i++) {
        uint64_t k = h5zv_le64(b + off);
        off += 8;
        if (k > len - off)
            break;
        if (k > 0) {
            const char *s = (const char *)b + off;
            size_t      m = (size_t)k;
            while (m && *s == '/')
                s++, m--;
            free(res);
            res = strndup(s, m);
        }
        off += (size_t)k;
    }
done:
    free(b);
    return res;
}

/* netCDF-4's own record of dimensions (libhdf5/nc4hdf.c): a variable's `_Netcdf4Coordinates` lists the
 * dimension ids of its axes, and a dimension's scale carries its id in `_Netcdf4Dimid`. After nc_rename_dim
 * of a dimension that has a coordinate variable, netCDF keeps the variables' DIMENSION_LIST pointing at the
 * old scale and names the axes by these ids, so where they are present they name the axes, as in netCDF. */
typedef struct nc_dim {
    long  id;
    char *name;
} nc_dim;

/* The value of integer attribute `name` of `n` at index `i` (a JSON int, or a list of them); -1 if none. */
static long
nc_id(h5zv_node *n, const char *name, int i)
{
    struct json_object *v = h5zv_attr_value(n, name);
    if (v && json_object_is_type(v, json_type_array))
        v = (size_t)i < json_object_array_length(v) ? json_object_array_get_idx(v, (size_t)i) : NULL;
    else if (i > 0)
        v = NULL;
    return v && json_object_is_type(v, json_type_int) ? (long)json_object_get_int64(v) : -1;
}

/* Adds the netCDF dimensions whose scales are arrays of group `gpath` to `*dims` (`*n` of them). */
static int
nc_dims_of_group(h5zv_file *f, const char *gpath, nc_dim **dims, size_t *n)
{
    h5zv_link *l  = NULL;
    size_t     nl = 0;
    if (h5zv_links_list(f, gpath, &l, &nl) < 0)
        return -1;
    for (size_t i = 0; i < nl; i++) {
        char       cpath[4096];
        h5zv_node *c;
        long       id;
        nc_dim    *d;
        if (l[i].kind != H5ZV_LINK_HARD)
            continue;
        snprintf(cpath, sizeof cpath, "%s%s%s", gpath, *gpath ? "/" : "", l[i].name);
        if (!(c = quiet_node(f, cpath)) || c->type != ZARR_NODE_ARRAY || !is_scale(c) ||
            (id = nc_id(c, "_Netcdf4Dimid", 0)) < 0)
            continue;
        if (!(d = realloc(*dims, (*n + 1) * sizeof *d))) {
            h5zv_links_free(l, nl);
            return -1;
        }
        *dims          = d;
        d[*n].id       = id;
        d[(*n)++].name = scale_name(f, cpath);
    }
    h5zv_links_free(l, nl);
    return 0;
}

/* The netCDF dimensions visible from group `gpath`: its own, then its ancestors' (netCDF's scoping). */
static nc_dim *
nc_dims_visible(h5zv_file *f, const char *gpath, size_t *n)
{
    nc_dim *dims = NULL;
    char   *g    = strdup(gpath);
    *n           = 0;
    while (g) {
        char *slash = strrchr(g, '/');
        if (nc_dims_of_group(f, g, &dims, n) < 0 || !*g)
            break;
        if (slash)
            *slash = '\0';
        else
            g[0] = '\0';
    }
    free(g);
    return dims;
}

/* One array of the group being named. */
typedef struct dim_arr {
    h5zv_node *n;
    int        ndim;
    uint64_t   shape[ZARR_MAX_DIMS];
    char      *name[ZARR_MAX_DIMS]; /* NULL: unlabelled (a phony name is given) */
} dim_arr;

/* Sets the names of array `n` (v3 dimension_names, v2 _ARRAY_DIMENSIONS), marking it dirty if they
 * changed. */
static void
set_names(h5zv_node *n, int ndim, char *const *names)
{
    zarr_array_meta *m = zarr_array_meta_mut(n->a);
    if (m->zarr_format == 3) {
        bool same = m->has_dimension_names;
        for (int i = 0; same && i < ndim; i++)
            same = m->dimension_names[i] && !strcmp(m->dimension_names[i], names[i]);
        if (same)
            return;
        for (int i = 0; i < ndim; i++) {
            free(m->dimension_names[i]);
            m->dimension_names[i] = strdup(names[i]);
        }
        m->has_dimension_names = true;
    }
    else {
        struct json_object *attrs = h5zv_node_attrs(n), *cur = NULL, *l;
        bool                same = json_object_object_get_ex(attrs, DIMS_ATTR, &cur) &&
                    json_object_is_type(cur, json_type_array) && (int)json_object_array_length(cur) == ndim;
        for (int i = 0; same && i < ndim; i++) {
            struct json_object *e = json_object_array_get_idx(cur, (size_t)i);
            same = json_object_is_type(e, json_type_string) && !strcmp(json_object_get_string(e), names[i]);
        }
        if (same)
            return;
        l = json_object_new_array();
        for (int i = 0; i < ndim; i++)
            json_object_array_add(l, json_object_new_string(names[i]));
        json_object_object_add(attrs, DIMS_ATTR, l);
    }
    h5zv_node_mark_dirty(n);
}

/* Names the arrays of the group at `gpath` written by the connector (ours(); arrays of other tools keep
 * what they have). */
static int
group_update(h5zv_file *f, const char *gpath)
{
    h5zv_link *l  = NULL;
    size_t     nl = 0, na = 0, nph = 0;
    dim_arr   *arr       = NULL;
    uint64_t  *phony     = NULL; /* size of phony_dim_<i> */
    int        ret       = -1;
    nc_dim    *ncd       = NULL; /* netCDF's dimensions visible here, looked up once when needed */
    size_t     nncd      = 0;
    bool       ncd_known = false;

    if (h5zv_links_list(f, gpath, &l, &nl) < 0)
        return -1;
    if (nl == 0) { /* an empty group: no array to name */
        ret = 0;
        goto done;
    }
    if (!(arr = calloc(nl, sizeof *arr)) || !(phony = malloc(MAX_PHONIES * sizeof *phony)))
        H5ZV_GOTO_ERROR("out of memory");
    for (size_t i = 0; i < nl; i++) {
        char                  *cpath;
        h5zv_node             *c;
        const zarr_array_meta *m;
        dim_arr               *d = &arr[na];
        if (l[i].kind != H5ZV_LINK_HARD)
            continue;
        if (!(cpath = h5zv_path_child(gpath, l[i].name)))
            H5ZV_GOTO_ERROR("out of memory");
        c = quiet_node(f, cpath);
        free(cpath);
        if (!c || c->type != ZARR_NODE_ARRAY || !c->a || c->deleted || !ours(f, c))
            continue;
        m       = zarr_array_meta_get(c->a);
        d->n    = c;
        d->ndim = m->ndim;
        memcpy(d->shape, m->shape, sizeof d->shape);
        {
            struct json_object *mm = h5zv_node_meta(c, false), *ns;
            if (json_object_object_get_ex(mm, "null_space", &ns) && json_object_get_boolean(ns))
                d->ndim = 1, d->shape[0] = 0;
        }
        for (int a = 0; a < d->ndim; a++) {
            char      *sp = attached_scale(c, a);
            h5zv_node *sn = sp ? quiet_node(f, sp) : NULL;
            /* a scale that is gone (moved: nc_rename_dim of a dimension without a coordinate variable
             * moves its dataset; DIMENSION_LIST keeps the old path) names nothing where netCDF's ids do */
            if (sp && ((sn && is_scale(sn)) || nc_id(c, "_Netcdf4Coordinates", a) < 0))
                d->name[a] = scale_name(f, sp);
            free(sp);
        }
        if (d->ndim > 0 && is_scale(c)) {
            free(d->name[0]);
            d->name[0] = scale_name(f, c->path);
        }
        for (int a = 0; a < d->ndim; a++) {
            /* an axis whose attached scale is no scale any more (netCDF's nc_rename_dim): netCDF's ids */
            long id = d->name[a] ? -1 : nc_id(c, "_Netcdf4Coordinates", a);
            if (id < 0)
                continue;
            if (!ncd_known && (ncd_known = true))
                ncd = nc_dims_visible(f, gpath, &nncd);
            for (size_t k = 0; k < nncd; k++)
                if (ncd[k].id == id && ncd[k].name) {
                    free(d->name[a]);
                    d->name[a] = strdup(ncd[k].name);
                    break;
                }
        }
        na++;
    }
    /* Phony dimensions (h5netcdf's phony_dims="sort", per group): for each size in the order it first
     * appears, as many as the most unlabelled axes of that size in one array, numbered consecutively. */
    {
        uint64_t sizes[MAX_PHONIES];
        size_t   count[MAX_PHONIES], nsz = 0;
        for (size_t i = 0; i < na; i++) {
            size_t here[MAX_PHONIES]; /* per size index below nsz: this array's unlabelled axes of it */
            memset(here, 0, nsz * sizeof *here);
            for (int a = 0; a < arr[i].ndim; a++) {
                size_t k;
                if (arr[i].name[a])
                    continue;
                for (k = 0; k < nsz && sizes[k] != arr[i].shape[a]; k++)
                    ;
                if (k == nsz) {
                    if (nsz == MAX_PHONIES)
                        H5ZV_GOTO_ERROR("group '/%s': more than %d distinct sizes of unnamed dimensions",
                                        gpath, MAX_PHONIES);
                    sizes[nsz]   = arr[i].shape[a];
                    here[nsz]    = 0;
                    count[nsz++] = 0;
                }
                if (++here[k] > count[k])
                    count[k] = here[k];
            }
        }
        for (size_t k = 0; k < nsz; k++)
            for (size_t j = 0; j < count[k]; j++) {
                if (nph == MAX_PHONIES)
                    H5ZV_GOTO_ERROR("group '/%s': more than %d unnamed dimensions", gpath, MAX_PHONIES);
                phony[nph++] = sizes[k];
            }
        for (size_t i = 0; i < na; i++) {
            size_t used[MAX_PHONIES]; /* per phony size index: unlabelled axes of it seen so far */
            memset(used, 0, nsz * sizeof *used);
            for (int a = 0; a < arr[i].ndim; a++) {
                size_t k, j, p;
                char   buf[64];
                if (arr[i].name[a])
                    continue;
                for (k = 0; k < nsz && sizes[k] != arr[i].shape[a]; k++)
                    ;
                j = used[k]++;
                for (p = 0; p < nph; p++)
                    if (phony[p] == sizes[k] && j-- == 0)
                        break;
                snprintf(buf, sizeof buf, PHONY_FMT, p);
                arr[i].name[a] = strdup(buf);
            }
        }
    }
    for (size_t i = 0; i < na; i++) {
        for (int a = 0; a < arr[i].ndim; a++)
            if (!arr[i].name[a])
                H5ZV_GOTO_ERROR("out of memory");
        set_names(arr[i].n, arr[i].ndim, arr[i].name);
    }
    ret = 0;
done:
    if (arr)
        for (size_t i = 0; i < na; i++)
            for (int a = 0; a < arr[i].ndim; a++)
                free(arr[i].name[a]);
    free(arr);
    free(phony);
    for (size_t k = 0; k < nncd; k++)
        free(ncd[k].name);
    free(ncd);
    h5zv_links_free(l, nl);
    return ret;
}

/* True if array node `n` (ours) has no dimension names yet. */
static bool
lacks_names(h5zv_file *f, h5zv_node *n)
{
    const zarr_array_meta *m = zarr_array_meta_get(n->a);
    if (!ours(f, n))
        return false;
    if (m->zarr_format == 3)
        return !m->has_dimension_names;
    return !json_object_object_get_ex(h5zv_node_attrs(n), DIMS_ATTR, NULL);
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int
h5zv_dims_update(h5zv_file *f)
{
    char **todo = NULL;
    size_t nt = 0, cap = 0;
    int    ret = 0;

    if (!f->buckets || f->intent != H5F_ACC_RDWR)
        return 0;
    f->buckets_pinned++; /* lacks_names may load a parent group: the chains must stay as they are */
    for (size_t b = 0; b < f->nbuckets; b++)
        for (h5zv_node *n = f->buckets[b]; n; n = n->next) {
            char *p = NULL, *leaf = NULL;
            if (n->deleted || (!n->g && !n->a) || h5zv_is_anon(n->path))
                continue;
            if (n->type == ZARR_NODE_GROUP && (n->dirty || n->dims_dirty))
                p = strdup(n->path);
            else if (n->type == ZARR_NODE_ARRAY && *n->path && lacks_names(f, n)) {
                if (h5zv_path_split(n->path, &p, &leaf) < 0)
                    p = NULL;
                free(leaf);
            }
            if (!p)
                continue;
            if (nt && !strcmp(todo[nt - 1], p)) { /* the common repeat: siblings in a row (sorted below) */
                free(p);
                continue;
            }
            if (nt == cap) {
                char **t = realloc(todo, (cap = cap ? 2 * cap : 16) * sizeof *t);
                if (!t) {
                    free(p);
                    h5zv_err_push(__func__, __LINE__, "out of memory");
                    f->buckets_pinned--;
                    ret = -1;
                    goto done;
                }
                todo = t;
            }
            todo[nt++] = p;
        }
    f->buckets_pinned--;
    /* each group once: sorted, repeats dropped (one per array lacking names in a large group) */
    if (nt > 1) {
        size_t k = 1;
        qsort(todo, nt, sizeof *todo, cmp_str);
        for (size_t i = 1; i < nt; i++) {
            if (!strcmp(todo[i], todo[k - 1]))
                free(todo[i]);
            else
                todo[k++] = todo[i];
        }
        nt = k;
    }
    if (nt == 0) /* nothing to name (a flush after the last change was flushed): no index is built */
        goto done;
    /* nodes loaded below join the cache: the walk above is over; the groups' listings share one index
     * of the cache by parent (h5zv_node_known_children), not a scan of it per group */
    h5zv_node_kids_index(f);
    for (size_t i = 0; i < nt; i++) {
        h5zv_node *g = quiet_node(f, todo[i]);
        if (!g || g->type != ZARR_NODE_GROUP || (!g->g && !g->a))
            continue;
        if (group_update(f, todo[i]) < 0)
            ret = -1;
        g->dims_dirty = false;
    }
    h5zv_node_kids_index_drop(f);
done:
    for (size_t i = 0; i < nt; i++)
        free(todo[i]);
    free(todo);
    return ret;
}
