/*
 * object.c: generic object operations (H5O*): open by name/index/token, info, name, type, existence,
 * token lookup (for references), visiting, flush.
 *
 * Every object is a node path; its token is derived from that path (connector.c), its reference count
 * is 1 (a zarr hierarchy is a tree), and it carries no timestamps.
 */
#include "h5zv.h"
#include "native.h"
#include "xcopy.h"
#include "reserved.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

static H5O_type_t
otype(h5zv_node *n)
{
    if (n->type == ZARR_NODE_ARRAY)
        return H5O_TYPE_DATASET;
    hid_t t = h5zv_datatype_of(n);
    if (t >= 0) {
        H5Tclose(t);
        return H5O_TYPE_NAMED_DATATYPE;
    }
    return H5O_TYPE_GROUP;
}

/* Whether the object was made with time tracking on (HDF5's default): its recorded dcpl or gcpl says. */
static bool
tracks_times(h5zv_node *n)
{
    struct json_object *m = h5zv_node_meta(n, false), *v;
    if (!m)
        return true;
    if (n->type == ZARR_NODE_ARRAY && json_object_object_get_ex(m, "dcpl", &v) &&
        strcmp(json_object_get_string(v), "default") != 0)
        return h5zv_reserved_track_times(v);
    else if (n->type == ZARR_NODE_GROUP && json_object_object_get_ex(m, "datatype", NULL))
        return true; /* committed datatypes: no tcpl recorded */
    else if (n->type == ZARR_NODE_GROUP &&
             (json_object_object_get_ex(m, "gcpl", &v) || json_object_object_get_ex(m, "fcpl", &v)))
        return h5zv_reserved_track_times(v);
    return true;
}

int
h5zv_object_info(h5zv_file *f, const char *path, unsigned fields, H5O_info2_t *oi)
{
    h5zv_node *n = h5zv_node_get(f, path);
    if (!n)
        return -1;
    memset(oi, 0, sizeof *oi);
    oi->fileno = f->fileno;
    h5zv_token_of(f, path, &oi->token);
    oi->type = otype(n);
    oi->rc   = 1;
    {
        struct json_object *m = h5zv_node_meta(n, false), *a;
        if (m && json_object_object_get_ex(m, "aliases", &a))
            oi->rc += (unsigned)json_object_array_length(a);
        if (m && json_object_object_get_ex(m, "users", &a))
            oi->rc += (unsigned)json_object_get_int64(a); /* datasets and attributes of a committed type */
        if (m && json_object_object_get_ex(m, "rc_delta", &a))
            oi->rc = (unsigned)((int64_t)oi->rc + json_object_get_int64(a));
    }
    if (fields & H5O_INFO_NUM_ATTRS)
        oi->num_attrs = (hsize_t)h5zv_attr_count(n);
    if ((fields & H5O_INFO_TIME) && tracks_times(n)) {
        /* zarr keeps no object times: the modification time of the node's metadata document stands for
         * all four, where the store knows it (directory stores); 0 otherwise, as HDF5 reports untracked.
         * Nodes read from the consolidated view take the consolidated document's time, asked once
         * (node.c): a visit costs no request per object. */
        int64_t t;
        if (n->unwritten) /* a deferred create (node.c): its document comes at the flush */
            oi->atime = oi->mtime = oi->ctime = oi->btime = (time_t)n->born;
        else if (h5zv_node_view_time(f, n, &t))
            oi->atime = oi->mtime = oi->ctime = oi->btime = (time_t)t;
        else if (n->doc_time > 0 && !n->dirty) /* learnt with the read of its document */
            oi->atime = oi->mtime = oi->ctime = oi->btime = (time_t)n->doc_time;
        else {
            int fmt = n->type == ZARR_NODE_ARRAY ? zarr_array_meta_get(n->a)->zarr_format : n->g->zarr_format;
            char key[4200];
            snprintf(key, sizeof key, "%s%s%s", path, *path ? "/" : "",
                     n->type == ZARR_NODE_ARRAY && zarr_array_meta_get(n->a)->hidden ? ZARR_HIDDEN_DOC
                     : fmt == 3                                                      ? "zarr.json"
                     : n->type == ZARR_NODE_ARRAY                                    ? ".zarray"
                                                                                     : ".zgroup");
            if (zarr_store_mtime(f->store, key, &t) == ZARR_OK)
                oi->atime = oi->mtime = oi->ctime = oi->btime = (time_t)t;
        }
    }
    return 0;
}

void *
h5zv_object_open(void *obj, const H5VL_loc_params_t *loc, H5I_type_t *opened_type, hid_t dxpl_id, void **req)
{
    h5zv_obj   *o = obj, *r = NULL;
    h5zv_node  *n   = NULL;
    char       *own = NULL; /* the path when resolved here (malloc'ed) */
    const char *path;
    (void)dxpl_id;
    (void)req;

    h5zv_file *f = NULL;
    if (loc->type == H5VL_OBJECT_BY_NAME) {
        /* by name: may lead through external links into another store */
        H5VL_loc_params_t self = {loc->obj_type, H5VL_OBJECT_BY_SELF, {{0}}};
        if (h5zv_check_plist(loc->loc_data.loc_by_name.lapl_id, H5P_LINK_ACCESS,
                             "link access property list") < 0 ||
            h5zv_resolve_ext(o, &self, loc->loc_data.loc_by_name.name, &f, &own) < 0)
            return NULL;
    }
    else {
        f = o->file;
        h5zv_file_incref(f);
        /* by token, a loaded node in the token index (every reference H5DSattach_scale reopens) is taken
         * as it is: no copy of its path to look up again */
        if (loc->type == H5VL_OBJECT_BY_TOKEN &&
            (n = h5zv_node_of_token(f, loc->loc_data.loc_by_token.token)) && !n->g && !n->a)
            n = NULL; /* a probe's entry: loaded below */
        if (!n && !(own = h5zv_loc_path(o, loc)))
            goto done;
    }
    path = n ? n->path : own;
    if (!n && !(n = h5zv_node_get(f, path)))
        goto done;
    switch (otype(n)) {
        case H5O_TYPE_DATASET:
            r            = loc->type == H5VL_OBJECT_BY_TOKEN ? h5zv_dataset_open_lazy(f, path)
                                                             : h5zv_dataset_open_path(f, path);
            *opened_type = H5I_DATASET;
            break;
        case H5O_TYPE_NAMED_DATATYPE:
            if ((r = h5zv_obj_new(f, H5I_DATATYPE, path)))
                r->dtype_id = h5zv_type_keep(h5zv_datatype_of(n));
            *opened_type = H5I_DATATYPE;
            break;
        default:
            r            = h5zv_obj_new(f, H5I_GROUP, path);
            *opened_type = H5I_GROUP;
    }
    if (r)
        r->ref_idle = loc->type == H5VL_OBJECT_BY_TOKEN;
done:
    h5zv_file_decref(f);
    free(own);
    return r;
}

/* Copies every key below `from` in store `src` to the same relative keys below `to` in `dst`; with
 * `shallow`, child nodes of a group are copied without their own children. */
typedef struct copy_ctx {
    zarr_store *src, *dst;
    const char *from, *to;
    int         rc;
} copy_ctx;

typedef struct name_vec {
    char **v;
    bool  *dir;
    size_t n, cap;
} name_vec;

static int
collect(const char *name, bool is_dir, void *ud)
{
    name_vec *nv = ud;
    if (nv->n == nv->cap) {
        size_t cap = nv->cap ? 2 * nv->cap : 16;
        char **v   = realloc(nv->v, cap * sizeof *v);
        bool  *d   = v ? realloc(nv->dir, cap * sizeof *d) : NULL;
        if (!v || !d)
            return ZARR_ENOMEM;
        nv->v   = v;
        nv->dir = d;
        nv->cap = cap;
    }
    nv->dir[nv->n] = is_dir;
    if (!(nv->v[nv->n] = strdup(name)))
        return ZARR_ENOMEM;
    nv->n++;
    return 0;
}

static int
copy_keys(zarr_store *src, const char *from, zarr_store *dst, const char *to, int depth_left)
{
    name_vec nv = {0};
    zarr_buf b  = ZARR_BUF_INIT;
    int      rc = zarr_store_list(src, from, collect, &nv);
    for (size_t i = 0; rc == ZARR_OK && i < nv.n; i++) {
        char sk[4096], dk[4096];
        snprintf(sk, sizeof sk, "%s%s%s", from, *from ? "/" : "", nv.v[i]);
        snprintf(dk, sizeof dk, "%s%s%s", to, *to ? "/" : "", nv.v[i]);
        if (nv.dir[i]) {
            /* a child directory: a chunk folder (always copied) or a child node (not when shallow) */
            zarr_node_type t = ZARR_NODE_NONE;
            zarr_node_probe(src, sk, &t, NULL);
            if (t != ZARR_NODE_NONE && depth_left == 0)
                continue;
            rc = copy_keys(src, sk, dst, dk,
                           t != ZARR_NODE_NONE && depth_left > 0 ? depth_left - 1 : depth_left);
        }
        else if ((rc = zarr_store_get(src, sk, &b)) == ZARR_OK)
            rc = zarr_store_set(dst, dk, b.data, b.size);
    }
    for (size_t i = 0; i < nv.n; i++)
        free(nv.v[i]);
    free(nv.v);
    free(nv.dir);
    zarr_buf_free(&b);
    return rc;
}

/* Removes HDF5 attributes (and their records) from a node, keeping the reserved object. */
static void
strip_attrs(h5zv_node *n)
{
    struct json_object *m = h5zv_node_meta(n, false);
    if (m)
        json_object_object_del(m, "attrs"); /* the records; the reserved object is not an attribute */
    {
        struct json_object *fresh = json_object_new_object();
        if (n->type == ZARR_NODE_GROUP) {
            json_object_put(n->g->attributes);
            n->g->attributes = fresh;
        }
        else {
            zarr_array_meta *am = zarr_array_meta_mut(n->a);
            json_object_put(am->attributes);
            am->attributes = fresh;
        }
    }
    h5zv_node_mark_dirty(n);
}

/* H5O_COPY_EXPAND_SOFT_LINK_FLAG: in the copy `to` (of `from`), every soft link whose target exists
 * in the source file becomes a copy of that target, linked by a hard link of the same name. */
static int
expand_soft_links(h5zv_file *sf, const char *from, h5zv_file *df, const char *to, int depth)
{
    h5zv_link *l   = NULL;
    size_t     n   = 0;
    int        ret = -1;
    if (depth > 32)
        return 0;
    if (h5zv_links_list(df, to, &l, &n) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char sp[4096], dp[4096];
        snprintf(sp, sizeof sp, "%s%s%s", from, *from ? "/" : "", l[i].name);
        snprintf(dp, sizeof dp, "%s%s%s", to, *to ? "/" : "", l[i].name);
        if (l[i].kind == H5ZV_LINK_SOFT) {
            char          *tgt = h5zv_path_resolve(sf, from, l[i].target);
            zarr_node_type t   = ZARR_NODE_NONE;
            if (tgt && h5zv_node_probe(sf, tgt, &t) == 0 && t != ZARR_NODE_NONE) {
                if (h5zv_file_flush(df) < 0 || copy_keys(sf->store, tgt, df->store, dp, -1) != ZARR_OK) {
                    free(tgt);
                    h5zv_err_push(__func__, __LINE__, "can't expand soft link '/%s': %s", dp, zarr_errmsg());
                    goto done;
                }
                h5zv_node_forget(df, dp, true);
                if (h5zv_link_unrecord(df, to, l[i].name) < 0 ||
                    h5zv_link_record(df, to, l[i].name, H5ZV_LINK_HARD, NULL, NULL) < 0) {
                    free(tgt);
                    goto done;
                }
            }
            free(tgt); /* dangling soft links stay soft links, as in HDF5 */
        }
        else if (l[i].kind == H5ZV_LINK_HARD) {
            zarr_node_type t = ZARR_NODE_NONE;
            if (h5zv_node_probe(df, dp, &t) == 0 && t == ZARR_NODE_GROUP &&
                expand_soft_links(sf, sp, df, dp, depth + 1) < 0)
                goto done;
        }
    }
    ret = 0;
done:
    h5zv_links_free(l, n);
    return ret;
}

/* H5Ocopy of `src_name` below `src_obj` (a store object) when the name leads through an external link into
 * a native file: the object is opened by name as HDF5 opens it (route.c follows the link across formats)
 * and, when it is native, copied across the formats from there (xcopy.c). -1 otherwise. */
static herr_t
copy_from_native(void *src_obj, const H5VL_loc_params_t *loc1, const char *src_name, void *dst_obj,
                 const H5VL_loc_params_t *loc2, const char *dst_name, hid_t ocpypl_id, hid_t lcpl_id,
                 hid_t dxpl_id)
{
    H5VL_loc_params_t by_name, self;
    H5I_type_t        t   = H5I_BADID;
    void             *o   = NULL;
    herr_t            ret = -1;
    if (!loc1 || loc1->type != H5VL_OBJECT_BY_SELF || !src_name)
        return -1;
    memset(&by_name, 0, sizeof by_name);
    by_name.type                         = H5VL_OBJECT_BY_NAME;
    by_name.obj_type                     = loc1->obj_type;
    by_name.loc_data.loc_by_name.name    = src_name;
    by_name.loc_data.loc_by_name.lapl_id = H5P_LINK_ACCESS_DEFAULT;
    if (!(o = h5zv_class.object_cls.open(src_obj, &by_name, &t, dxpl_id, NULL)))
        return -1;
    memset(&self, 0, sizeof self);
    self.type     = H5VL_OBJECT_BY_SELF;
    self.obj_type = t;
    if (h5zv_is_native(o))
        ret = h5zv_xcopy_object(o, &self, ".", dst_obj, loc2, dst_name, ocpypl_id, lcpl_id, dxpl_id);
    if ((t == H5I_DATASET    ? h5zv_class.dataset_cls.close(o, dxpl_id, NULL)
         : t == H5I_GROUP    ? h5zv_class.group_cls.close(o, dxpl_id, NULL)
         : t == H5I_DATATYPE ? h5zv_class.datatype_cls.close(o, dxpl_id, NULL)
                             : -1) < 0)
        ret = -1;
    return ret;
}

/* H5Ocopy: the object's keys (metadata and chunks) are copied byte for byte, also between stores. The source
 * name is followed as HDF5 follows it (H5G_loc_find), soft and external links included: an external link
 * into another store copies from that store; one into a native file is copied through the HDF5 API
 * (copy_from_native), as a copy between the formats. */
herr_t
h5zv_object_copy(void *src_obj, const H5VL_loc_params_t *loc1, const char *src_name, void *dst_obj,
                 const H5VL_loc_params_t *loc2, const char *dst_name, hid_t ocpypl_id, hid_t lcpl_id,
                 hid_t dxpl_id, void **req)
{
    h5zv_obj  *s = src_obj, *d = dst_obj;
    h5zv_file *sf = NULL;
    char      *db = NULL, *from = NULL, *to = NULL, *parent = NULL, *leaf = NULL;
    unsigned   flags = 0;
    h5zv_node *n;
    herr_t     ret = -1;
    (void)dxpl_id;
    (void)req;

    if (h5zv_check_plist(lcpl_id, H5P_LINK_CREATE, "link creation property list") < 0 ||
        h5zv_check_plist(ocpypl_id, H5P_OBJECT_COPY, "object copy property list") < 0)
        return -1;
    if (ocpypl_id != H5P_DEFAULT)
        H5Pget_copy_object(ocpypl_id, &flags);
    if (h5zv_resolve_ext(s, loc1, src_name, &sf, &from) < 0) {
        /* a link on the way into a native file (or nothing there): when HDF5's open of the name reaches a
         * native object, it is copied across the formats; else the first reason stands */
        h5zv_errs *es = h5zv_err_save();
        if (es && copy_from_native(src_obj, loc1, src_name, dst_obj, loc2, dst_name, ocpypl_id, lcpl_id,
                                   dxpl_id) >= 0) {
            H5Eclear2(H5E_DEFAULT);
            h5zv_err_drop(es);
            return 0;
        }
        h5zv_err_restore(es);
        return -1;
    }
    if (!(db = h5zv_loc_path(d, loc2)) || !(to = h5zv_path_resolve(d->file, db, dst_name)))
        goto done;
    if (!(n = h5zv_node_get(sf, from)))
        H5ZV_GOTO_ERROR("can't copy '/%s': no such object", from);
    if (h5zv_check_new_path(d->file, to, lcpl_id) < 0)
        goto done;
    {
        zarr_node_type t = ZARR_NODE_NONE;
        if (h5zv_node_probe(d->file, to, &t) == 0 && t != ZARR_NODE_NONE)
            H5ZV_GOTO_ERROR("can't copy to '/%s': an object with that name exists", to);
    }
    if (sf == d->file && (!strncmp(to, from, strlen(from)) && to[strlen(from)] == '/'))
        H5ZV_GOTO_ERROR("can't copy '/%s' into itself", from);
    if (h5zv_file_flush(sf) < 0 || h5zv_file_flush(d->file) < 0)
        goto done;
    h5zv_refidx_drop(d->file); /* nodes made behind the cache: the next move walks (vol/refidx.c) */
    if (copy_keys(sf->store, from, d->file->store, to, (flags & H5O_COPY_SHALLOW_HIERARCHY_FLAG) ? 1 : -1) !=
        ZARR_OK)
        H5ZV_GOTO_ZERR("can't copy '/%s' to '/%s'", from, to);
    h5zv_node_forget(d->file, to, true);
    if (!(n = h5zv_node_get(d->file, to)))
        goto done;
    {
        /* the copy is a new object: no aliases, and no attributes when asked */
        struct json_object *m = h5zv_node_meta(n, false);
        if (m && json_object_object_get_ex(m, "aliases", NULL)) {
            json_object_object_del(m, "aliases");
            h5zv_node_mark_dirty(n);
        }
        if (flags & H5O_COPY_WITHOUT_ATTR_FLAG)
            strip_attrs(n);
    }
    if ((flags & H5O_COPY_EXPAND_SOFT_LINK_FLAG) && expand_soft_links(sf, from, d->file, to, 0) < 0)
        goto done;
    if (h5zv_path_split(to, &parent, &leaf) < 0 ||
        h5zv_link_record(d->file, parent, leaf, H5ZV_LINK_HARD, NULL, NULL) < 0)
        goto done;
    ret = 0;
done:
    h5zv_file_decref(sf);
    free(db);
    free(from);
    free(to);
    free(parent);
    free(leaf);
    return ret;
}

herr_t
h5zv_object_get(void *obj, const H5VL_loc_params_t *loc, H5VL_object_get_args_t *args, hid_t dxpl_id,
                void **req)
{
    h5zv_obj  *o = obj;
    h5zv_node *n;
    char      *path = NULL;
    herr_t     ret  = -1;
    (void)dxpl_id;
    (void)req;

    if (args->op_type != H5VL_OBJECT_GET_FILE && !(path = h5zv_loc_path(o, loc)))
        goto done; /* the file is the object's own: no path asked (H5Rcreate_object asks once a reference) */
    switch (args->op_type) {
        case H5VL_OBJECT_GET_FILE: {
            /* One object per file handle while HDF5 holds the id it registered for it: HDF5 looks that id
             * up by this pointer (H5Iget_file_id, H5Rcreate_object, H5DSattach_scale for every reference
             * it rewrites) and counts it up instead of registering a new file id each time (which made
             * 2000 scale attaches quadratic in file ids). It stands for the handle the object was reached
             * through (`via`), as natively H5Iget_file_id gives the id of the H5F_t the object was opened
             * through: H5Fget_obj_ids with H5F_OBJ_LOCAL counts both ids as that handle's (file.c), so
             * h5py's close of `grp.file` closes the handle too. Not the application's own file object:
             * HDF5 1.14.5's H5DSattach_scale leaks references (H5DS.c:628, the Treclaim misses the new
             * element; :648, the ones read are freed without H5Rdestroy) and each holds its file id, so
             * the application's H5Fclose must still reach the connector, close and flush. */
            h5zv_obj *fo = o;
            if (!o->getfile) {
                for (fo = o->file->getfile_objs; fo && fo->via != o->via; fo = fo->next_getfile)
                    ;
                if (!fo) {
                    if (!(fo = h5zv_obj_new(o->file, H5I_FILE, "")))
                        H5ZV_GOTO_ERROR("out of memory");
                    fo->via               = o->via;
                    fo->getfile           = true;
                    fo->next_getfile      = o->file->getfile_objs;
                    o->file->getfile_objs = fo;
                    o->file->ngetfile++;
                }
            }
            *args->args.get_file.file = fo;
            break;
        }
        case H5VL_OBJECT_GET_NAME: {
            size_t         len = strlen(path) + 1;
            zarr_node_type t   = ZARR_NODE_NONE;
            if (h5zv_node_probe(o->file, path, &t) < 0 || t == ZARR_NODE_NONE || h5zv_is_anon(path)) {
                /* deleted or anonymous: no name, as HDF5 reports it */
                if (args->args.get_name.buf && args->args.get_name.buf_size)
                    args->args.get_name.buf[0] = '\0';
                if (args->args.get_name.name_len)
                    *args->args.get_name.name_len = 0;
                break;
            }
            char  *b  = args->args.get_name.buf;
            size_t sz = args->args.get_name.buf_size;
            if (b && sz) {
                char tmp[4096];
                snprintf(tmp, sizeof tmp, "/%s", path);
                strncpy(b, tmp, sz - 1);
                b[sz - 1] = '\0';
            }
            if (args->args.get_name.name_len)
                *args->args.get_name.name_len = len;
            break;
        }
        case H5VL_OBJECT_GET_TYPE:
            if (!(n = h5zv_node_get(o->file, path)))
                goto done;
            *args->args.get_type.obj_type = otype(n);
            break;
        case H5VL_OBJECT_GET_INFO:
            if (h5zv_object_info(o->file, path, args->args.get_info.fields, args->args.get_info.oinfo) < 0)
                goto done;
            break;
    }
    ret = 0;
done:
    free(path);
    return ret;
}

typedef struct visit_ctx {
    h5zv_file                *f;
    hid_t                     root_id;
    H5VL_object_visit_args_t *v;
} visit_ctx;

static herr_t
visit_rec(visit_ctx *c, const char *path, const char *rel)
{
    H5O_info2_t oi;
    h5zv_link  *l = NULL;
    size_t      n = 0;
    herr_t      r;

    if (h5zv_object_info(c->f, path, c->v->fields, &oi) < 0)
        return -1;
    if ((r = c->v->op(c->root_id, rel, &oi, c->v->op_data)) != 0)
        return r;
    if (oi.type != H5O_TYPE_GROUP)
        return 0;
    if (h5zv_links_list(c->f, path, &l, &n) < 0)
        return -1;
    if (c->v->idx_type == H5_INDEX_NAME)
        h5zv_links_sort_by_name(l, n);
    for (size_t k = 0; k < n && r == 0; k++) {
        size_t i = c->v->order == H5_ITER_DEC ? n - 1 - k : k;
        char   cp[4096], cr[4096];
        if (l[i].kind != H5ZV_LINK_HARD)
            continue;
        h5zv_cat3(cp, sizeof cp, path, *path ? "/" : "", l[i].name);
        if (strcmp(rel, "."))
            h5zv_cat3(cr, sizeof cr, rel, "/", l[i].name);
        else
            h5zv_cat3(cr, sizeof cr, l[i].name, "", "");
        r = visit_rec(c, cp, cr);
    }
    h5zv_links_free(l, n);
    return r;
}

herr_t
h5zv_object_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_object_specific_args_t *args,
                     hid_t dxpl_id, void **req)
{
    h5zv_obj *o    = obj;
    char     *path = NULL;
    herr_t    ret  = -1;
    (void)dxpl_id;
    (void)req;

    switch (args->op_type) {
        case H5VL_OBJECT_EXISTS: {
            zarr_node_type t = ZARR_NODE_NONE;
            if (loc->type == H5VL_OBJECT_BY_NAME &&
                h5zv_check_plist(loc->loc_data.loc_by_name.lapl_id, H5P_LINK_ACCESS,
                                 "link access property list") < 0)
                goto done;
            H5E_BEGIN_TRY { path = h5zv_loc_path(o, loc); }
            H5E_END_TRY
            *args->args.exists.exists =
                path && h5zv_node_probe(o->file, path, &t) == 0 && t != ZARR_NODE_NONE;
            break;
        }
        case H5VL_OBJECT_LOOKUP: {
            h5zv_node *n;
            /* the object itself (H5Rcreate_object(id, ".") for each reference H5DSattach_scale rebuilds):
             * its own path, not a copy */
            bool self = loc->type == H5VL_OBJECT_BY_SELF ||
                        (loc->type == H5VL_OBJECT_BY_NAME && loc->loc_data.loc_by_name.name &&
                         !strcmp(loc->loc_data.loc_by_name.name, ".") &&
                         h5zv_check_plist(loc->loc_data.loc_by_name.lapl_id, H5P_LINK_ACCESS,
                                          "link access property list") == 0);
            if ((!self && !(path = h5zv_loc_path(o, loc))) ||
                !(n = h5zv_node_get(o->file, self ? o->path : path)))
                goto done;
            h5zv_node_token(o->file, n, args->args.lookup.token_ptr);
            break;
        }
        case H5VL_OBJECT_VISIT: {
            visit_ctx  c = {o->file, H5I_INVALID_HID, &args->args.visit};
            h5zv_obj  *holder;
            H5I_type_t t;
            h5zv_node *n;
            if (!(path = h5zv_loc_path(o, loc)) || !(n = h5zv_node_get(o->file, path)))
                goto done;
            t = n->type == ZARR_NODE_ARRAY ? H5I_DATASET : H5I_GROUP;
            holder =
                t == H5I_DATASET ? h5zv_dataset_open_path(o->file, path) : h5zv_obj_new(o->file, t, path);
            if (!holder || (c.root_id = H5VLwrap_register(holder, t)) < 0) {
                h5zv_obj_free(holder);
                H5ZV_GOTO_ERROR("can't register an id for '/%s'", path);
            }
            ret = visit_rec(&c, path, ".");
            H5Idec_ref(c.root_id);
            free(path);
            return ret;
        }
        case H5VL_OBJECT_FLUSH:
            if (h5zv_file_flush(o->file) < 0)
                goto done;
            break;
        case H5VL_OBJECT_REFRESH:
            break;
        case H5VL_OBJECT_CHANGE_REF_COUNT: {
            /* Kept as an adjustment next to the link count (aliases); an object is not removed when it
             * reaches zero while a link still names it. */
            h5zv_node          *n;
            struct json_object *m, *v;
            int64_t             delta = 0;
            if (o->file->intent != H5F_ACC_RDWR)
                H5ZV_GOTO_ERROR("can't change a reference count: file '%s' is read-only", o->file->name);
            if (!(path = h5zv_loc_path(o, loc)) || !(n = h5zv_node_get(o->file, path)))
                goto done;
            m = h5zv_node_meta(n, true);
            if (json_object_object_get_ex(m, "rc_delta", &v))
                delta = json_object_get_int64(v);
            delta += args->args.change_rc.delta;
            json_object_object_add(m, "rc_delta", json_object_new_int64(delta));
            h5zv_node_mark_dirty(n);
            break;
        }
    }
    ret = 0;
done:
    free(path);
    return ret;
}

herr_t
h5zv_object_optional(void *obj, const H5VL_loc_params_t *loc, H5VL_optional_args_t *args, hid_t dxpl_id,
                     void **req)
{
    (void)obj;
    (void)loc;
    (void)dxpl_id;
    (void)req;
    h5zv_err_push(__func__, __LINE__, "native-only object operation %d is not supported", args->op_type);
    return -1;
}
