/*
 * group.c: HDF5 groups as zarr groups: create (with intermediate groups), open, get (gcpl, info),
 * flush/refresh, close.
 *
 * Link and attribute creation order are always tracked (docs/FORMAT.md); the gcpl reports the
 * creation-order flags the group was created with, kept as "link_corder"/"attr_corder" in the
 * group's reserved object.
 */
#include "h5zv.h"

#include <H5VLnative.h>
#include "reserved.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* Creates one group node at `path` whose parent exists, and records it in the parent's link order. */
static int
make_one(h5zv_file *f, const char *path, hid_t gcpl_id)
{
    zarr_group_meta *g = NULL;
    h5zv_node       *n;
    char            *parent = NULL, *leaf = NULL;
    zarr_node_type   t     = ZARR_NODE_NONE;
    bool             defer = false, fresh, later;
    int              ret = -1, rc = ZARR_OK;

    if (h5zv_path_split(path, &parent, &leaf) < 0)
        H5ZV_GOTO_ERROR("out of memory");
    fresh = h5zv_node_known_absent(f, path); /* nothing there to replace: no stale document to remove */
    later = h5zv_node_can_defer(f, path);    /* the documents at the next flush (node.c) */
    if (h5zv_node_probe(f, path, &t) == 0 && t != ZARR_NODE_NONE)
        H5ZV_GOTO_ERROR("can't create group '/%s': an object with that name exists", path);
    if (zarr_group_meta_new(f->format, &g) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't create group '/%s'", path);
    if (gcpl_id >= 0 && gcpl_id != H5P_DEFAULT) {
        /* Keep the creation properties so H5Gget_create_plist tells what the group was made with, in the
         * reserved object of the document written now (v2: the .zgroup; its .zattrs is written at the
         * flush with the link records its children add). */
        /* (kept even when it equals the default: "gcpl" says the group was made by an HDF5 program) */
        struct json_object *gj = NULL, *meta;
        if (h5zv_gcpl_to_json(gcpl_id, &gj) < 0)
            H5ZV_GOTO_ERROR("can't record the gcpl of '/%s'", path);
        meta = json_object_new_object();
        json_object_object_add(meta, "gcpl", gj);
        json_object_put(g->reserved);
        g->reserved = meta;
        defer       = f->format == 2;
    }
    if (later)
        ; /* nothing written now */
    else if (defer) {
        /* the .zgroup without the attributes; they are the node's (marked dirty below) */
        struct json_object *attrs = g->attributes;
        g->attributes             = json_object_new_object();
        rc = fresh ? zarr_group_write_new(f->store, path, g) : zarr_group_write(f->store, path, g);
        json_object_put(g->attributes);
        g->attributes = attrs;
    }
    else
        rc = fresh ? zarr_group_write_new(f->store, path, g) : zarr_group_write(f->store, path, g);
    if (rc != ZARR_OK)
        H5ZV_GOTO_ZERR("can't write group '/%s'", path);
    if (!(n = h5zv_node_add(f, path, g, NULL)))
        H5ZV_GOTO_ERROR("out of memory");
    g = NULL;
    if (later)
        h5zv_node_defer(f, n);
    else if (defer)
        h5zv_node_mark_dirty(n);
    if (h5zv_link_record(f, parent, leaf, H5ZV_LINK_HARD, NULL, NULL) < 0)
        goto done;
    ret = 0;
done:
    zarr_group_meta_free(g);
    free(parent);
    free(leaf);
    return ret;
}

int
h5zv_group_make(h5zv_file *f, const char *path, bool make_parents)
{
    if (make_parents) {
        char  *p = strdup(path);
        size_t len;
        if (!p)
            return -1;
        len = strlen(p);
        for (size_t i = 1; i < len; i++) {
            zarr_node_type t = ZARR_NODE_NONE;
            if (p[i] != '/')
                continue;
            p[i] = '\0';
            if (h5zv_node_probe(f, p, &t) < 0 || t == ZARR_NODE_NONE) {
                if (make_one(f, p, H5P_DEFAULT) < 0) {
                    free(p);
                    return -1;
                }
            }
            else if (t != ZARR_NODE_GROUP) {
                h5zv_err_push(__func__, __LINE__, "can't create '/%s': '/%s' is not a group", path, p);
                free(p);
                return -1;
            }
            p[i] = '/';
        }
        free(p);
    }
    return make_one(f, path, H5P_DEFAULT);
}

/* Checks that the parent of `path` is an existing group (or creates it with `make_parents`). */
static int
check_parent(h5zv_file *f, const char *path, bool make_parents)
{
    char          *parent = NULL, *leaf = NULL;
    zarr_node_type t   = ZARR_NODE_NONE;
    int            ret = -1;

    if (h5zv_path_split(path, &parent, &leaf) < 0)
        return -1;
    if (h5zv_node_probe(f, parent, &t) < 0 || t == ZARR_NODE_NONE) {
        if (!make_parents)
            H5ZV_GOTO_ERROR("can't create '/%s': parent group '/%s' doesn't exist", path, parent);
        if (h5zv_group_make(f, parent, true) < 0)
            goto done;
    }
    else if (t != ZARR_NODE_GROUP)
        H5ZV_GOTO_ERROR("can't create '/%s': '/%s' is not a group", path, parent);
    ret = 0;
done:
    free(parent);
    free(leaf);
    return ret;
}

int
h5zv_check_new_path(h5zv_file *f, const char *path, hid_t lcpl_id)
{
    unsigned crt = 0;
    if (f->intent != H5F_ACC_RDWR) {
        h5zv_err_push(__func__, __LINE__, "can't create '/%s': file '%s' is open read-only", path, f->name);
        return -1;
    }
    if (!*path) {
        h5zv_err_push(__func__, __LINE__, "can't create the root group: it exists");
        return -1;
    }
    if (lcpl_id >= 0 && lcpl_id != H5P_DEFAULT)
        H5Pget_create_intermediate_group(lcpl_id, &crt);
    return check_parent(f, path, crt != 0);
}

void *
h5zv_group_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl_id, hid_t gcpl_id,
                  hid_t gapl_id, hid_t dxpl_id, void **req)
{
    h5zv_obj  *o = obj, *g = NULL;
    h5zv_file *f    = NULL;
    char      *base = NULL, *path = NULL;
    void      *ret = NULL;
    (void)dxpl_id;
    (void)req;

    if (h5zv_check_plist(gapl_id, H5P_GROUP_ACCESS, "group access property list") < 0 ||
        h5zv_check_plist(gcpl_id, H5P_GROUP_CREATE, "group creation property list") < 0 ||
        h5zv_check_plist(lcpl_id, H5P_LINK_CREATE, "link creation property list") < 0)
        return NULL;

    if (!name) {
        /* H5Gcreate_anon: made in the hidden area; H5Olink moves it into the hierarchy. */
        f = o->file;
        h5zv_file_incref(f);
        if (f->intent != H5F_ACC_RDWR)
            H5ZV_GOTO_ERROR("can't create a group: file '%s' is open read-only", f->name);
        if (!(path = h5zv_anon_path(f)))
            goto done;
    }
    else {
        /* the name may lead through soft and external links (then the group is made in that store) */
        if (h5zv_resolve_ext(o, loc, name, &f, &path) < 0)
            goto done;
        if (h5zv_check_new_path(f, path, lcpl_id) < 0)
            goto done;
    }
    if (make_one(f, path, gcpl_id) < 0)
        goto done;
    if (!(g = h5zv_obj_new(f, H5I_GROUP, path)))
        H5ZV_GOTO_ERROR("out of memory");
    ret = g;
done:
    h5zv_file_decref(f);
    free(base);
    free(path);
    return ret;
}

void *
h5zv_group_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t gapl_id, hid_t dxpl_id,
                void **req)
{
    h5zv_obj  *o = obj;
    h5zv_file *f = NULL;
    h5zv_node *n;
    char      *path = NULL;
    void      *ret  = NULL;
    (void)dxpl_id;
    (void)req;
    if (h5zv_check_plist(gapl_id, H5P_GROUP_ACCESS, "group access property list") < 0)
        return NULL;
    if (h5zv_resolve_ext(o, loc, name, &f, &path) < 0)
        goto done;
    if (!(n = h5zv_node_get(f, path)))
        H5ZV_GOTO_ERROR("can't open group '/%s' in '%s'", path, f->name);
    if (n->type != ZARR_NODE_GROUP)
        H5ZV_GOTO_ERROR("can't open '/%s' as a group: it is a zarr array (dataset)", path);
    if (!(ret = h5zv_obj_new(f, H5I_GROUP, path)))
        H5ZV_GOTO_ERROR("out of memory");
done:
    h5zv_file_decref(f);
    free(path);
    return ret;
}

/* A gcpl reflecting what the group was created with. */
hid_t
h5zv_group_gcpl(h5zv_node *n)
{
    hid_t               gcpl = H5I_INVALID_HID;
    struct json_object *m    = h5zv_node_meta(n, false), *v;
    bool                fc   = false;
    if (m && (json_object_object_get_ex(m, "gcpl", &v) || (fc = json_object_object_get_ex(m, "fcpl", &v)))) {
        h5zv_jpath where;
        if (h5zv_reserved_plist(v, fc ? H5P_FILE_CREATE : H5P_GROUP_CREATE, H5I_INVALID_HID,
                                h5zv_meta_where(&where, n, fc ? "fcpl" : "gcpl"), &gcpl) < 0)
            return H5I_INVALID_HID;
        if (gcpl >= 0)
            return gcpl;
    }
    gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (m && json_object_object_get_ex(m, "link_corder", &v))
        H5Pset_link_creation_order(gcpl, (unsigned)json_object_get_int(v));
    if (m && json_object_object_get_ex(m, "attr_corder", &v))
        H5Pset_attr_creation_order(gcpl, (unsigned)json_object_get_int(v));
    return gcpl;
}

bool
h5zv_group_tracks_links(h5zv_node *n)
{
    if (n->tracks_links < 0) {
        struct json_object *m = h5zv_node_meta(n, false);
        if (!m ||
            (!json_object_object_get_ex(m, "gcpl", NULL) && !json_object_object_get_ex(m, "fcpl", NULL) &&
             !json_object_object_get_ex(m, "order", NULL) &&
             !json_object_object_get_ex(m, "link_corder", NULL)))
            n->tracks_links = 1; /* made by another tool: report the order we keep */
        else {
            h5zv_errs *es   = h5zv_err_save();
            hid_t      gcpl = h5zv_group_gcpl(n);
            unsigned   crt  = 0;
            if (gcpl >= 0) {
                H5Pget_link_creation_order(gcpl, &crt);
                H5Pclose(gcpl);
            }
            /* a gcpl that can't be read is reported by H5Gget_create_plist; here it counts as untracked */
            if (gcpl >= 0)
                h5zv_err_drop(es);
            else if (es)
                h5zv_err_restore(es);
            else
                H5Eclear2(H5E_DEFAULT);
            n->tracks_links = (crt & H5P_CRT_ORDER_TRACKED) != 0;
        }
    }
    return n->tracks_links > 0;
}

herr_t
h5zv_group_get(void *obj, H5VL_group_get_args_t *args, hid_t dxpl_id, void **req)
{
    h5zv_obj  *o = obj;
    h5zv_node *n;
    char      *path = NULL;
    herr_t     ret  = -1;
    (void)dxpl_id;
    (void)req;

    switch (args->op_type) {
        case H5VL_GROUP_GET_GCPL:
            if (!(n = h5zv_node_get(o->file, o->path)))
                goto done;
            args->args.get_gcpl.gcpl_id = h5zv_group_gcpl(n);
            break;
        case H5VL_GROUP_GET_INFO: {
            h5zv_link *l    = NULL;
            size_t     nl   = 0;
            int64_t    maxc = -1;
            if (!(path = h5zv_loc_path(o, &args->args.get_info.loc_params)))
                goto done;
            if (h5zv_links_list(o->file, path, &l, &nl) < 0)
                goto done;
            for (size_t i = 0; i < nl; i++)
                if (l[i].corder > maxc)
                    maxc = l[i].corder;
            h5zv_links_free(l, nl);
            args->args.get_info.ginfo->storage_type = H5G_STORAGE_TYPE_COMPACT;
            args->args.get_info.ginfo->nlinks       = nl;
            {
                h5zv_node          *gn = h5zv_node_get(o->file, path);
                struct json_object *m  = gn ? h5zv_node_meta(gn, false) : NULL, *nx;
                if (m && json_object_object_get_ex(m, "next_corder", &nx) &&
                    json_object_get_int64(nx) > maxc + 1)
                    maxc = json_object_get_int64(nx) - 1;
            }
            args->args.get_info.ginfo->max_corder = maxc + 1;
            args->args.get_info.ginfo->mounted    = false;
            break;
        }
        default:
            H5ZV_GOTO_ERROR("group get operation %d is not supported", (int)args->op_type);
    }
    ret = 0;
done:
    free(path);
    return ret;
}

herr_t
h5zv_group_specific(void *obj, H5VL_group_specific_args_t *args, hid_t dxpl_id, void **req)
{
    h5zv_obj *o = obj;
    (void)dxpl_id;
    (void)req;
    switch (args->op_type) {
        case H5VL_GROUP_FLUSH:
            return h5zv_file_flush(o->file);
        case H5VL_GROUP_REFRESH:
            return 0;
        default:
            h5zv_err_push(__func__, __LINE__, "group operation %d (mount/unmount) is not supported by zarr",
                          (int)args->op_type);
            return -1;
    }
}

/* H5Gget_objinfo (deprecated, still what h5py hashes and compares objects by, and what netCDF asks when
 * renaming): the object's file number, a 128-bit object number (its token), link count, type and time.
 * Without `follow_link`, a soft or external link by name is described as the link itself. */
static herr_t
group_objinfo(h5zv_obj *o, H5VL_native_group_get_objinfo_t *a)
{
    H5G_stat_t  sb = {0};
    H5O_info2_t oi;
    char       *path = NULL;
    herr_t      ret  = -1;

    if (!a->follow_link && a->loc_params.type == H5VL_OBJECT_BY_NAME &&
        strcmp(a->loc_params.loc_data.loc_by_name.name, ".") != 0) {
        H5L_info2_t          li;
        H5VL_link_get_args_t la = {.op_type = H5VL_LINK_GET_INFO};
        la.args.get_info.linfo  = &li;
        if (h5zv_link_get(o, &a->loc_params, &la, H5P_DEFAULT, NULL) < 0)
            return -1;
        if (li.type != H5L_TYPE_HARD) {
            sb.fileno[0] = o->file->fileno;
            sb.type      = li.type == H5L_TYPE_SOFT ? H5G_LINK : H5G_UDLINK;
            sb.linklen   = li.u.val_size;
            if (a->statbuf)
                *a->statbuf = sb;
            return 0;
        }
    }
    if (!(path = h5zv_loc_path(o, &a->loc_params)) ||
        h5zv_object_info(o->file, path, H5O_INFO_BASIC | H5O_INFO_TIME, &oi) < 0)
        goto done;
    sb.fileno[0] = oi.fileno;
    memcpy(sb.objno, oi.token.__data,
           sizeof sb.objno < sizeof oi.token.__data ? sizeof sb.objno : sizeof oi.token.__data);
    sb.nlink = oi.rc;
    sb.type  = oi.type == H5O_TYPE_GROUP            ? H5G_GROUP
               : oi.type == H5O_TYPE_DATASET        ? H5G_DATASET
               : oi.type == H5O_TYPE_NAMED_DATATYPE ? H5G_TYPE
                                                    : H5G_UNKNOWN;
    sb.mtime = oi.mtime;
    if (a->statbuf)
        *a->statbuf = sb;
    ret = 0;
done:
    free(path);
    return ret;
}

herr_t
h5zv_group_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    (void)dxpl_id;
    (void)req;
    if (args->op_type == H5VL_NATIVE_GROUP_GET_OBJINFO)
        return group_objinfo(obj, &((H5VL_native_group_optional_args_t *)args->args)->get_objinfo);
    h5zv_err_push(__func__, __LINE__, "native-only group operation %d is not supported", args->op_type);
    return -1;
}

herr_t
h5zv_group_close(void *grp, hid_t dxpl_id, void **req)
{
    (void)dxpl_id;
    (void)req;
    h5zv_obj_free(grp);
    return 0;
}
