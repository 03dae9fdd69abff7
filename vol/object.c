/*
 * object.c: generic object operations (H5O*): open by name/index/token, info, name, type, existence,
 * token lookup (for references), visiting, flush.
 *
 * Every object is a node path; its token is derived from that path (connector.c), its reference count
 * is 1 (a zarr hierarchy is a tree), and it carries no timestamps.
 */
#include "h5zv.h"

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

int
h5zv_object_info(h5zv_file *f, const char *path, unsigned fields, H5O_info2_t *oi)
{
    h5zv_node *n = h5zv_node_get(f, path);
    if (!n)
        return -1;
    memset(oi, 0, sizeof *oi);
    oi->fileno = f->fileno;
    h5zv_token_from_path(path, &oi->token);
    oi->type = otype(n);
    oi->rc   = 1;
    {
        struct json_object *m = h5zv_node_meta(n, false), *a;
        if (m && json_object_object_get_ex(m, "aliases", &a))
            oi->rc += (unsigned)json_object_array_length(a);
    }
    if (fields & H5O_INFO_NUM_ATTRS)
        oi->num_attrs = (hsize_t)h5zv_attr_count(n);
    return 0;
}

void *
h5zv_object_open(void *obj, const H5VL_loc_params_t *loc, H5I_type_t *opened_type, hid_t dxpl_id, void **req)
{
    h5zv_obj  *o = obj, *r = NULL;
    h5zv_node *n;
    char      *path;
    (void)dxpl_id;
    (void)req;

    if (!(path = h5zv_loc_path(o, loc)))
        return NULL;
    if (!(n = h5zv_node_get(o->file, path)))
        goto done;
    switch (otype(n)) {
        case H5O_TYPE_DATASET:
            r            = h5zv_dataset_open_path(o->file, path);
            *opened_type = H5I_DATASET;
            break;
        case H5O_TYPE_NAMED_DATATYPE:
            if ((r = h5zv_obj_new(o->file, H5I_DATATYPE, path)))
                r->dtype_id = h5zv_datatype_of(n);
            *opened_type = H5I_DATATYPE;
            break;
        default:
            r            = h5zv_obj_new(o->file, H5I_GROUP, path);
            *opened_type = H5I_GROUP;
    }
done:
    free(path);
    return r;
}

herr_t
h5zv_object_copy(void *src_obj, const H5VL_loc_params_t *loc1, const char *src_name, void *dst_obj,
                 const H5VL_loc_params_t *loc2, const char *dst_name, hid_t ocpypl_id, hid_t lcpl_id,
                 hid_t dxpl_id, void **req)
{
    (void)src_obj;
    (void)loc1;
    (void)dst_obj;
    (void)loc2;
    (void)ocpypl_id;
    (void)lcpl_id;
    (void)dxpl_id;
    (void)req;
    h5zv_err_push(__func__, __LINE__, "H5Ocopy('%s' -> '%s') is not supported by the zarr connector yet",
                  src_name ? src_name : "", dst_name ? dst_name : "");
    return -1;
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

    if (!(path = h5zv_loc_path(o, loc)))
        goto done;
    switch (args->op_type) {
        case H5VL_OBJECT_GET_FILE: {
            h5zv_obj *fo = h5zv_obj_new(o->file, H5I_FILE, "");
            if (!fo)
                H5ZV_GOTO_ERROR("out of memory");
            *args->args.get_file.file = fo;
            break;
        }
        case H5VL_OBJECT_GET_NAME: {
            size_t len = strlen(path) + 1;
            char  *b   = args->args.get_name.buf;
            size_t sz  = args->args.get_name.buf_size;
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
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && strcmp(l[j - 1].name, l[j].name) > 0; j--) {
                h5zv_link t = l[j];
                l[j]        = l[j - 1];
                l[j - 1]    = t;
            }
    for (size_t k = 0; k < n && r == 0; k++) {
        size_t i = c->v->order == H5_ITER_DEC ? n - 1 - k : k;
        char   cp[4096], cr[4096];
        if (l[i].kind != H5ZV_LINK_HARD)
            continue;
        snprintf(cp, sizeof cp, "%s%s%s", path, *path ? "/" : "", l[i].name);
        snprintf(cr, sizeof cr, "%s%s", strcmp(rel, ".") ? rel : "", l[i].name);
        if (strcmp(rel, ".")) {
            snprintf(cr, sizeof cr, "%s/%s", rel, l[i].name);
        }
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
                path && zarr_node_probe(o->file->store, path, &t, NULL) == ZARR_OK && t != ZARR_NODE_NONE;
            break;
        }
        case H5VL_OBJECT_LOOKUP:
            if (!(path = h5zv_loc_path(o, loc)))
                goto done;
            if (!h5zv_node_get(o->file, path))
                goto done;
            h5zv_token_from_path(path, args->args.lookup.token_ptr);
            break;
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
        case H5VL_OBJECT_CHANGE_REF_COUNT:
            H5ZV_GOTO_ERROR("object reference counts can't change in a zarr hierarchy (one link per object)");
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
