/*
 * link.c: HDF5 links on a zarr hierarchy.
 *
 * Hard links are the hierarchy itself (one parent per node: a zarr store is a tree, so a second hard
 * link to an existing object is refused with a clear error). Soft and external links are records in
 * the parent group's reserved object (docs/FORMAT.md). Iteration and visiting follow the creation
 * order kept there, or names in byte order.
 */
#include "h5zv.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* Resolves the group holding the link named by `loc` relative to `o`: parent path + leaf name. For
 * BY_IDX, picks the link at the index. */
static int
link_loc(h5zv_obj *o, const H5VL_loc_params_t *loc, char **parent, char **leaf)
{
    *parent = *leaf = NULL;
    if (loc->type == H5VL_OBJECT_BY_NAME) {
        const char *name = loc->loc_data.loc_by_name.name;
        if (h5zv_check_plist(loc->loc_data.loc_by_name.lapl_id, H5P_LINK_ACCESS,
                             "link access property list") < 0)
            return -1;
        const char *s   = strrchr(name, '/');
        char       *dir = s ? strndup(name, (size_t)(s - name) + (s == name)) : strdup(".");
        *parent         = h5zv_path_resolve(o->file, o->path, dir);
        free(dir);
        *leaf = strdup(s ? s + 1 : name);
        if (!*parent || !*leaf || !**leaf) {
            if (*leaf && !**leaf)
                h5zv_err_push(__func__, __LINE__, "link name '%s' names no link", name);
            free(*parent);
            free(*leaf);
            return -1;
        }
        return 0;
    }
    if (loc->type == H5VL_OBJECT_BY_IDX) {
        const H5VL_loc_by_idx_t *bi = &loc->loc_data.loc_by_idx;
        h5zv_link               *l  = NULL;
        size_t                   n  = 0;
        if (h5zv_check_plist(bi->lapl_id, H5P_LINK_ACCESS, "link access property list") < 0)
            return -1;
        if (!(*parent = h5zv_path_resolve(o->file, o->path, bi->name)))
            return -1;
        if (h5zv_links_list(o->file, *parent, &l, &n) < 0) {
            free(*parent);
            return -1;
        }
        if (bi->idx_type == H5_INDEX_NAME)
            h5zv_links_sort_by_name(l, n);
        if (bi->n >= n) {
            h5zv_err_push(__func__, __LINE__, "link index %llu out of range in '/%s' (%zu links)",
                          (unsigned long long)bi->n, *parent, n);
            h5zv_links_free(l, n);
            free(*parent);
            return -1;
        }
        *leaf = strdup(l[bi->order == H5_ITER_DEC ? n - 1 - bi->n : bi->n].name);
        h5zv_links_free(l, n);
        return 0;
    }
    /* BY_SELF: the object's own link in its parent */
    return h5zv_path_split(o->path, parent, leaf);
}

/* ---- aliases: further hard links to a node. The node lists them in _h5zarr.aliases (link paths). ---- */
static struct json_object *
aliases_of(h5zv_file *f, const char *target, bool create, h5zv_node **np)
{
    h5zv_node          *n = h5zv_node_get(f, target);
    struct json_object *m, *a = NULL;
    if (np)
        *np = n;
    if (!n || !(m = h5zv_node_meta(n, create)))
        return NULL;
    if (!json_object_object_get_ex(m, "aliases", &a) && create) {
        a = json_object_new_array();
        json_object_object_add(m, "aliases", a);
    }
    return a;
}

static int
alias_add(h5zv_file *f, const char *target, const char *alias)
{
    h5zv_node          *n;
    struct json_object *a = aliases_of(f, target, true, &n);
    if (!a)
        return -1;
    json_object_array_add(a, json_object_new_string(alias));
    h5zv_node_mark_dirty(n);
    return 0;
}

static void
alias_del(h5zv_file *f, const char *target, const char *alias)
{
    h5zv_node          *n;
    struct json_object *a = aliases_of(f, target, false, &n);
    if (!a)
        return;
    for (size_t i = 0; i < json_object_array_length(a); i++)
        if (!strcmp(json_object_get_string(json_object_array_get_idx(a, i)), alias)) {
            json_object_array_del_idx(a, i, 1);
            h5zv_node_mark_dirty(n);
            return;
        }
}

/* After a node moved to `path`, points its aliases' records at the new place. */
static void
retarget_aliases(h5zv_file *f, const char *path)
{
    struct json_object *a = NULL;
    H5E_BEGIN_TRY { a = aliases_of(f, path, false, NULL); }
    H5E_END_TRY
    for (size_t i = 0; a && i < json_object_array_length(a); i++) {
        char *ap = NULL, *al = NULL;
        if (h5zv_path_split(json_object_get_string(json_object_array_get_idx(a, i)), &ap, &al) == 0) {
            h5zv_node          *pg = h5zv_node_get(f, ap);
            struct json_object *m  = pg ? h5zv_node_meta(pg, false) : NULL, *links, *rec;
            if (m && json_object_object_get_ex(m, "links", &links) &&
                json_object_object_get_ex(links, al, &rec)) {
                json_object_object_add(rec, "hard", json_object_new_string(path));
                h5zv_node_mark_dirty(pg);
            }
        }
        free(ap);
        free(al);
    }
}

/* Deleting the primary link of a node that has aliases: the node moves to its first alias, which becomes
 * its primary link; the other aliases are retargeted. */
static int
promote_alias(h5zv_file *f, const char *path)
{
    struct json_object *a = NULL;
    h5zv_node          *n;
    char               *first = NULL, *fp = NULL, *fl = NULL;
    int                 ret = -1, cnt;

    H5E_BEGIN_TRY { a = aliases_of(f, path, false, &n); }
    H5E_END_TRY
    if (!a || (cnt = (int)json_object_array_length(a)) == 0)
        return 0; /* nothing to promote */
    if (!(first = strdup(json_object_get_string(json_object_array_get_idx(a, 0)))))
        return -1;
    json_object_array_del_idx(a, 0, 1);
    {
        struct json_object *rest = json_object_get(a);
        if (h5zv_file_flush(f) < 0 || h5zv_path_split(first, &fp, &fl) < 0) {
            json_object_put(rest);
            goto done;
        }
        /* the alias record in its parent goes; the order entry stays (same name, now the node) */
        {
            h5zv_node          *pg = h5zv_node_get(f, fp);
            struct json_object *m  = pg ? h5zv_node_meta(pg, false) : NULL, *links;
            if (m && json_object_object_get_ex(m, "links", &links))
                json_object_object_del(links, fl);
            if (pg) {
                h5zv_node_mark_dirty(pg);
                h5zv_node_write(f, pg);
            }
        }
        /* move the node (its metadata carries the remaining aliases) */
        {
            h5zv_node *node = h5zv_node_get(f, path);
            if (node) {
                struct json_object *m = h5zv_node_meta(node, true);
                json_object_object_add(m, "aliases", json_object_get(rest));
                h5zv_node_write(f, node);
            }
        }
        h5zv_refidx_drop(f); /* a node renamed by no move: the next move walks (vol/refidx.c) */
        if (zarr_store_rename(f->store, path, first) != ZARR_OK) {
            json_object_put(rest);
            H5ZV_GOTO_ZERR("can't move '/%s' to its remaining link '/%s'", path, first);
        }
        h5zv_node_forget(f, path, false);
        h5zv_node_forget(f, first, true);
        /* retarget the other aliases */
        for (size_t i = 0; i < json_object_array_length(rest); i++) {
            char       *ap = NULL, *al = NULL;
            const char *alias = json_object_get_string(json_object_array_get_idx(rest, i));
            if (h5zv_path_split(alias, &ap, &al) == 0) {
                h5zv_node          *pg = h5zv_node_get(f, ap);
                struct json_object *m  = pg ? h5zv_node_meta(pg, false) : NULL, *links, *rec;
                if (m && json_object_object_get_ex(m, "links", &links) &&
                    json_object_object_get_ex(links, al, &rec)) {
                    json_object_object_add(rec, "hard", json_object_new_string(first));
                    h5zv_node_mark_dirty(pg);
                }
            }
            free(ap);
            free(al);
        }
        json_object_put(rest);
    }
    ret = 1;
done:
    free(first);
    free(fp);
    free(fl);
    return ret;
}

herr_t
h5zv_link_create(H5VL_link_create_args_t *args, void *obj, const H5VL_loc_params_t *loc, hid_t lcpl_id,
                 hid_t lapl_id, hid_t dxpl_id, void **req)
{
    h5zv_obj *o      = obj;
    char     *parent = NULL, *leaf = NULL, *path = NULL, *file = NULL, *target = NULL;
    herr_t    ret = -1;
    (void)dxpl_id;
    (void)req;
    if (h5zv_check_plist(lapl_id, H5P_LINK_ACCESS, "link access property list") < 0 ||
        h5zv_check_plist(lcpl_id, H5P_LINK_CREATE, "link creation property list") < 0)
        return -1;

    if (!o && args->op_type == H5VL_LINK_CREATE_HARD)
        o = args->args.hard.curr_obj; /* H5L_SAME_LOC as the link location */
    if (!o)
        H5ZV_GOTO_ERROR("link creation needs a location in a zarr file");
    if (link_loc(o, loc, &parent, &leaf) < 0)
        goto done;
    if (!(path = h5zv_path_child(parent, leaf)))
        H5ZV_GOTO_ERROR("out of memory");
    if (h5zv_check_new_path(o->file, path, lcpl_id) < 0)
        goto done;
    {
        int found = h5zv_links_find(o->file, parent, leaf, NULL);
        if (found < 0)
            goto done;
        if (found)
            H5ZV_GOTO_ERROR("can't create link '%s' in '/%s': a link with that name exists", leaf, parent);
    }
    switch (args->op_type) {
        case H5VL_LINK_CREATE_HARD: {
            h5zv_obj *cur = args->args.hard.curr_obj;
            char     *cpath, *apath = NULL;
            /* The target is anonymous: H5Olink(obj, ...) arrives BY_SELF, H5Lcreate_hard(obj, ".", ...)
             * (h5repack's named datatypes) BY_NAME "." */
            if (cur && args->args.hard.curr_loc_params.type == H5VL_OBJECT_BY_SELF)
                apath = h5zv_is_anon(cur->path) ? strdup(cur->path) : NULL;
            else if (cur && args->args.hard.curr_loc_params.type == H5VL_OBJECT_BY_NAME &&
                     h5zv_is_anon(cur->path)) {
                if (!(apath = h5zv_loc_path(cur, &args->args.hard.curr_loc_params)))
                    goto done;
                if (!h5zv_is_anon(apath)) {
                    free(apath);
                    apath = NULL;
                }
            }
            if (apath) {
                /* Linking an anonymous object: move it into place and retarget the open handle. */
                if (cur->file != o->file) {
                    free(apath);
                    H5ZV_GOTO_ERROR("can't link an object of another file into '/%s'", path);
                }
                h5zv_refidx_drop(o->file); /* a node joins the hierarchy: the next move walks */
                if (h5zv_file_flush(o->file) < 0 ||
                    zarr_store_rename(o->file->store, apath, path) != ZARR_OK) {
                    free(apath);
                    H5ZV_GOTO_ZERR("can't link anonymous object as '/%s'", path);
                }
                h5zv_node_forget(o->file, apath, false);
                h5zv_node_forget(o->file, path, true);
                h5zv_type_anon_linked(o->file, apath, path);
                if (strcmp(cur->path, apath) == 0) {
                    if (!(cpath = strdup(path))) {
                        free(apath);
                        H5ZV_GOTO_ERROR("out of memory");
                    }
                    h5zv_obj_set_path(cur, cpath);
                }
                free(apath);
                if (h5zv_link_record(o->file, parent, leaf, H5ZV_LINK_HARD, NULL, NULL) < 0)
                    goto done;
                break;
            }
            /* A further hard link to an existing object: an alias record (docs/FORMAT.md). */
            if (!cur)
                cur = o;
            if (cur->file != o->file)
                H5ZV_GOTO_ERROR("can't create hard link '/%s' to an object in another file", path);
            {
                char *tpath = h5zv_loc_path(cur, &args->args.hard.curr_loc_params);
                if (!tpath)
                    goto done;
                if (!h5zv_node_get(o->file, tpath) || h5zv_is_anon(tpath)) {
                    free(tpath);
                    H5ZV_GOTO_ERROR("can't create hard link '/%s': its target doesn't exist", path);
                }
                if (h5zv_link_record(o->file, parent, leaf, H5ZV_LINK_ALIAS, tpath, NULL) < 0 ||
                    alias_add(o->file, tpath, path) < 0) {
                    free(tpath);
                    goto done;
                }
                free(tpath);
            }
            break;
        }
        case H5VL_LINK_CREATE_SOFT:
            if (h5zv_link_record(o->file, parent, leaf, H5ZV_LINK_SOFT, args->args.soft.target, NULL) < 0)
                goto done;
            break;
        case H5VL_LINK_CREATE_UD: {
            unsigned    flags;
            const char *fn = NULL, *on = NULL;
            herr_t      ok = -1;
            if (args->args.ud.type == H5L_TYPE_EXTERNAL && args->args.ud.buf) {
                H5E_BEGIN_TRY
                {
                    ok = H5Lunpack_elink_val(args->args.ud.buf, args->args.ud.buf_size, &flags, &fn, &on);
                }
                H5E_END_TRY
            }
            if (ok >= 0) { /* an external link made through the user-defined link API */
                if (h5zv_link_record(o->file, parent, leaf, H5ZV_LINK_EXTERNAL, on, fn) < 0)
                    goto done;
                break;
            }
            /* any other value: kept as it is (class number and bytes), listed, never followed */
            {
                char  cls[16];
                char *b64 =
                    h5zv_b64_encode(args->args.ud.buf ? args->args.ud.buf : "", args->args.ud.buf_size);
                int rc;
                if (!b64)
                    H5ZV_GOTO_ERROR("out of memory");
                snprintf(cls, sizeof cls, "%d", (int)args->args.ud.type);
                rc = h5zv_link_record(o->file, parent, leaf, H5ZV_LINK_UD, b64, cls);
                free(b64);
                if (rc < 0)
                    goto done;
            }
            break;
        }
    }
    ret = 0;
done:
    free(parent);
    free(leaf);
    free(path);
    free(file);
    free(target);
    return ret;
}

/* The two ends of H5Lcopy/H5Lmove, resolved and checked: the source link exists, the destination name
 * is free and may be created. */
typedef struct link_pair {
    h5zv_file *f;
    char      *sp, *sl, *dp, *dl; /* parent group and name of each end */
    char      *from, *to;         /* full paths */
    h5zv_link  lk;                /* the source link */
} link_pair;

static void
pair_free(link_pair *p)
{
    h5zv_link_clear(&p->lk);
    free(p->sp);
    free(p->sl);
    free(p->dp);
    free(p->dl);
    free(p->from);
    free(p->to);
}

static int
pair_open(link_pair *p, const char *verb, void *src_obj, const H5VL_loc_params_t *loc1, void *dst_obj,
          const H5VL_loc_params_t *loc2, hid_t lcpl_id, hid_t lapl_id)
{
    h5zv_obj *s = src_obj, *d = dst_obj ? dst_obj : src_obj;
    int       ret = -1;

    memset(p, 0, sizeof *p);
    if (h5zv_check_plist(lapl_id, H5P_LINK_ACCESS, "link access property list") < 0 ||
        h5zv_check_plist(lcpl_id, H5P_LINK_CREATE, "link creation property list") < 0)
        return -1;
    if (!s)
        s = d;
    if (s->file != d->file)
        H5ZV_GOTO_ERROR("can't %s a link between different zarr stores", verb);
    p->f = s->file;
    if (link_loc(s, loc1, &p->sp, &p->sl) < 0 || link_loc(d, loc2, &p->dp, &p->dl) < 0)
        goto done;
    if (!(p->from = h5zv_path_child(p->sp, p->sl)) || !(p->to = h5zv_path_child(p->dp, p->dl)))
        H5ZV_GOTO_ERROR("out of memory");
    if (h5zv_links_find(p->f, p->sp, p->sl, &p->lk) <= 0)
        H5ZV_GOTO_ERROR("can't %s '/%s': no such link", verb, p->from);
    if (h5zv_links_find(p->f, p->dp, p->dl, NULL) > 0)
        H5ZV_GOTO_ERROR("can't %s '/%s' to '/%s': the destination exists", verb, p->from, p->to);
    if (h5zv_check_new_path(p->f, p->to, lcpl_id) < 0)
        goto done;
    ret = 0;
done:
    return ret;
}

/* H5Lcopy copies the link, not the object: a copy of a hard link is a further hard link (an alias). */
herr_t
h5zv_link_copy(void *src_obj, const H5VL_loc_params_t *loc1, void *dst_obj, const H5VL_loc_params_t *loc2,
               hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id, void **req)
{
    link_pair p;
    herr_t    ret = -1;
    (void)dxpl_id;
    (void)req;
    if (pair_open(&p, "copy", src_obj, loc1, dst_obj, loc2, lcpl_id, lapl_id) < 0)
        goto done;
    if (p.lk.kind == H5ZV_LINK_HARD || p.lk.kind == H5ZV_LINK_ALIAS) {
        const char *target = p.lk.kind == H5ZV_LINK_HARD ? p.from : p.lk.target;
        if (h5zv_link_record(p.f, p.dp, p.dl, H5ZV_LINK_ALIAS, target, NULL) < 0 ||
            alias_add(p.f, target, p.to) < 0)
            goto done;
    }
    else if (h5zv_link_record(p.f, p.dp, p.dl, p.lk.kind, p.lk.target, p.lk.file) < 0)
        goto done;
    ret = 0;
done:
    pair_free(&p);
    return ret;
}

herr_t
h5zv_link_move(void *src_obj, const H5VL_loc_params_t *loc1, void *dst_obj, const H5VL_loc_params_t *loc2,
               hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id, void **req)
{
    link_pair p;
    herr_t    ret = -1;
    (void)dxpl_id;
    (void)req;
    if (pair_open(&p, "move", src_obj, loc1, dst_obj, loc2, lcpl_id, lapl_id) < 0)
        goto done;
    if (p.lk.kind == H5ZV_LINK_HARD) {
        size_t fl = strlen(p.from);
        if (!strncmp(p.to, p.from, fl) && p.to[fl] == '/')
            H5ZV_GOTO_ERROR("can't move '/%s' into itself", p.from);
        if (h5zv_file_flush_under(p.f, p.from, p.to) < 0)
            goto done;
        if (zarr_store_rename(p.f->store, p.from, p.to) != ZARR_OK)
            H5ZV_GOTO_ZERR("can't move '/%s' to '/%s'", p.from, p.to);
        /* the cached nodes follow (not read again at `to`), and so does the token: a new object made at
         * the old name is another one */
        if (h5zv_node_moved(p.f, p.from, p.to) < 0)
            goto done;
        retarget_aliases(p.f, p.to);
        /* open handles follow the object, as in HDF5 */
        if (h5zv_objs_retarget(p.f, p.from, p.to) < 0)
            H5ZV_GOTO_ERROR("out of memory");
    }
    if (h5zv_link_unrecord(p.f, p.sp, p.sl) < 0)
        goto done;
    /* a moved or copied link gets the destination's next creation order value, as in HDF5 */
    if (h5zv_link_record(p.f, p.dp, p.dl, p.lk.kind, p.lk.target, p.lk.file) < 0)
        goto done;
    if (p.lk.kind == H5ZV_LINK_ALIAS) {
        alias_del(p.f, p.lk.target, p.from);
        if (alias_add(p.f, p.lk.target, p.to) < 0)
            goto done;
    }
    /* the references stored in attributes and datasets' data follow the object (docs/FORMAT.md, "Object
     * references"): in the nodes the file's reference index names (vol/refidx.c) */
    if (p.lk.kind == H5ZV_LINK_HARD && h5zv_refidx_move(p.f, p.from, p.to) < 0)
        H5ZV_GOTO_ERROR("can't make the references to '/%s' name '/%s'", p.from, p.to);
    ret = 0;
done:
    pair_free(&p);
    return ret;
}

static void
fill_linfo(h5zv_file *f, const char *parent, const h5zv_link *l, H5L_info2_t *li)
{
    memset(li, 0, sizeof *li);
    {
        h5zv_node *g     = h5zv_node_get(f, parent);
        li->corder_valid = g && h5zv_group_tracks_links(g);
    }
    li->corder = l->corder;
    li->cset   = H5T_CSET_ASCII;
    if (l->kind == H5ZV_LINK_HARD) {
        char *p  = h5zv_path_child(parent, l->name);
        li->type = H5L_TYPE_HARD;
        if (p)
            h5zv_token_of(f, p, &li->u.token);
        free(p);
    }
    else if (l->kind == H5ZV_LINK_ALIAS) {
        li->type = H5L_TYPE_HARD;
        h5zv_token_of(f, l->target, &li->u.token);
    }
    else if (l->kind == H5ZV_LINK_SOFT) {
        li->type       = H5L_TYPE_SOFT;
        li->u.val_size = strlen(l->target) + 1;
    }
    else if (l->kind == H5ZV_LINK_UD) {
        size_t n = 0;
        void  *v = h5zv_b64_decode(l->target, &n);
        free(v);
        li->type       = (H5L_type_t)atoi(l->file);
        li->u.val_size = n;
    }
    else {
        li->type       = H5L_TYPE_EXTERNAL;
        li->u.val_size = 1 + strlen(l->file) + 1 + strlen(l->target) + 1;
    }
}

herr_t
h5zv_link_get(void *obj, const H5VL_loc_params_t *loc, H5VL_link_get_args_t *args, hid_t dxpl_id, void **req)
{
    h5zv_obj *o      = obj;
    char     *parent = NULL, *leaf = NULL;
    h5zv_link l   = {0};
    herr_t    ret = -1;
    (void)dxpl_id;
    (void)req;

    if (link_loc(o, loc, &parent, &leaf) < 0)
        goto done;
    if (h5zv_links_find(o->file, parent, leaf, &l) <= 0)
        H5ZV_GOTO_ERROR("link '%s' doesn't exist in '/%s'", leaf, parent);
    switch (args->op_type) {
        case H5VL_LINK_GET_INFO:
            fill_linfo(o->file, parent, &l, args->args.get_info.linfo);
            break;
        case H5VL_LINK_GET_NAME: {
            size_t len = strlen(l.name);
            if (args->args.get_name.name && args->args.get_name.name_size) {
                size_t k = len < args->args.get_name.name_size - 1 ? len : args->args.get_name.name_size - 1;
                memcpy(args->args.get_name.name, l.name, k);
                args->args.get_name.name[k] = '\0';
            }
            if (args->args.get_name.name_len)
                *args->args.get_name.name_len = len;
            break;
        }
        case H5VL_LINK_GET_VAL: {
            uint8_t *b = args->args.get_val.buf;
            size_t   n = args->args.get_val.buf_size;
            if (l.kind == H5ZV_LINK_HARD)
                H5ZV_GOTO_ERROR("'%s' is a hard link: it has no value", leaf);
            if (l.kind == H5ZV_LINK_SOFT) {
                if (b && n) {
                    strncpy((char *)b, l.target, n - 1);
                    b[n - 1] = '\0';
                }
            }
            else if (l.kind == H5ZV_LINK_UD) {
                size_t vn = 0;
                void  *v  = h5zv_b64_decode(l.target, &vn);
                if (!v && vn)
                    H5ZV_GOTO_ERROR("user-defined link '%s': bad stored value", leaf);
                if (b && n)
                    memcpy(b, v, vn < n ? vn : n);
                free(v);
            }
            else if (b && n) {
                /* The packed external link value, as H5Lunpack_elink_val reads it. */
                size_t  fl = strlen(l.file) + 1, ol = strlen(l.target) + 1;
                uint8_t tmp[8192];
                if (1 + fl + ol > sizeof tmp)
                    H5ZV_GOTO_ERROR("external link '%s' is too long", leaf);
                tmp[0] = 0;
                memcpy(tmp + 1, l.file, fl);
                memcpy(tmp + 1 + fl, l.target, ol);
                memcpy(b, tmp, 1 + fl + ol < n ? 1 + fl + ol : n);
            }
            break;
        }
    }
    ret = 0;
done:
    h5zv_link_clear(&l);
    free(parent);
    free(leaf);
    return ret;
}

/* Iterates (or visits, recursively) the links of group `gpath`; `prefix` is the name relative to the
 * starting group. Returns the callback's non-zero value, 0 when done, -1 on error. */
static herr_t
iterate(h5zv_file *f, hid_t gid, const char *gpath, const char *prefix, H5VL_link_iterate_args_t *it,
        bool top)
{
    h5zv_link *l = NULL;
    size_t     n = 0;
    herr_t     r = 0;

    if (h5zv_links_list(f, gpath, &l, &n) < 0)
        return -1;
    if (it->idx_type == H5_INDEX_NAME)
        h5zv_links_sort_by_name(l, n);
    for (size_t k = (top && it->idx_p) ? (size_t)*it->idx_p : 0; k < n && r == 0; k++) {
        size_t      i = it->order == H5_ITER_DEC ? n - 1 - k : k;
        H5L_info2_t li;
        char        rel[4096];
        h5zv_cat3(rel, sizeof rel, prefix, *prefix ? "/" : "", l[i].name);
        fill_linfo(f, gpath, &l[i], &li);
        r = it->op(gid, rel, &li, it->op_data);
        if (top && it->idx_p)
            *it->idx_p = k + 1;
        if (r == 0 && it->recursive && l[i].kind == H5ZV_LINK_HARD) {
            char          *cp = h5zv_path_child(gpath, l[i].name);
            zarr_node_type t  = ZARR_NODE_NONE;
            if (cp && h5zv_node_probe(f, cp, &t) == 0 && t == ZARR_NODE_GROUP) {
                h5zv_node *cn = h5zv_node_get(f, cp);
                hid_t      dt = cn ? h5zv_datatype_of(cn) : H5I_INVALID_HID;
                if (dt >= 0)
                    H5Tclose(dt); /* a named datatype: not descended into */
                else if (cn)
                    r = iterate(f, gid, cp, rel, it, false);
            }
            free(cp);
        }
    }
    h5zv_links_free(l, n);
    return r;
}

herr_t
h5zv_link_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_link_specific_args_t *args, hid_t dxpl_id,
                   void **req)
{
    h5zv_obj *o      = obj;
    char     *parent = NULL, *leaf = NULL, *path = NULL;
    h5zv_link l   = {0};
    herr_t    ret = -1;
    (void)dxpl_id;
    (void)req;

    switch (args->op_type) {
        case H5VL_LINK_EXISTS: {
            int found;
            if (link_loc(o, loc, &parent, &leaf) < 0)
                goto done;
            H5E_BEGIN_TRY { found = h5zv_links_find(o->file, parent, leaf, NULL); }
            H5E_END_TRY
            *args->args.exists.exists = found > 0;
            break;
        }
        case H5VL_LINK_DELETE:
            if (o->file->intent != H5F_ACC_RDWR)
                H5ZV_GOTO_ERROR("can't delete a link: file '%s' is read-only", o->file->name);
            if (link_loc(o, loc, &parent, &leaf) < 0)
                goto done;
            if (h5zv_links_find(o->file, parent, leaf, &l) <= 0)
                H5ZV_GOTO_ERROR("can't delete link '%s' in '/%s': it doesn't exist", leaf, parent);
            if (!(path = h5zv_path_child(parent, leaf)))
                H5ZV_GOTO_ERROR("out of memory");
            if (l.kind == H5ZV_LINK_HARD) {
                int pr;
                h5zv_refidx_drop(o->file); /* nodes leave the hierarchy: the next move walks */
                pr = promote_alias(o->file, path);
                if (pr < 0)
                    goto done;
                if (pr == 0 && h5zv_path_in_use(o->file, path)) {
                    /* Open handles keep the object alive, as in HDF5: it becomes anonymous (H5Olink can
                     * name it again) and goes with the anonymous area when the file closes. */
                    char *apath = h5zv_anon_path(o->file);
                    if (!apath)
                        goto done;
                    if (h5zv_file_flush_under(o->file, path, apath) < 0 ||
                        zarr_store_rename(o->file->store, path, apath) != ZARR_OK) {
                        free(apath);
                        H5ZV_GOTO_ZERR("can't unlink '/%s' (open, kept as an anonymous object)", path);
                    }
                    h5zv_node_forget(o->file, path, false);
                    h5zv_node_forget(o->file, apath, true);
                    if (h5zv_objs_retarget(o->file, path, apath) < 0 ||
                        h5zv_token_moved(o->file, path, apath) < 0) {
                        free(apath);
                        H5ZV_GOTO_ERROR("out of memory");
                    }
                    free(apath);
                }
                else if (pr == 0) {
                    zarr_node_type      t;
                    h5zv_node          *dn;
                    struct json_object *m, *v;
                    /* a dataset of a committed type: the type loses a user */
                    if (h5zv_node_probe(o->file, path, &t) == 0 && t == ZARR_NODE_ARRAY &&
                        (dn = h5zv_node_get(o->file, path)) && (m = h5zv_node_meta(dn, false)) &&
                        json_object_object_get_ex(m, "ctype", &v)) {
                        char *tp = strdup(json_object_get_string(v));
                        if (tp)
                            h5zv_type_users_add(o->file, tp, -1);
                        free(tp);
                    }
                    if (zarr_node_delete(o->file->store, path) != ZARR_OK)
                        H5ZV_GOTO_ZERR("can't delete '/%s'", path);
                    h5zv_node_forget(o->file, path, false);
                }
            }
            else if (l.kind == H5ZV_LINK_ALIAS)
                alias_del(o->file, l.target, path);
            if (h5zv_link_unrecord(o->file, parent, leaf) < 0)
                goto done;
            break;
        case H5VL_LINK_ITER: {
            char     *gpath = h5zv_loc_path(o, loc);
            h5zv_obj *holder;
            hid_t     gid;
            if (!gpath)
                goto done;
            if (!(holder = h5zv_obj_new(o->file, H5I_GROUP, gpath))) {
                free(gpath);
                H5ZV_GOTO_ERROR("out of memory");
            }
            if ((gid = H5VLwrap_register(holder, H5I_GROUP)) < 0) {
                h5zv_obj_free(holder);
                free(gpath);
                H5ZV_GOTO_ERROR("can't register a group id");
            }
            ret = iterate(o->file, gid, gpath, "", &args->args.iterate, true);
            H5Idec_ref(gid);
            free(gpath);
            return ret;
        }
    }
    ret = 0;
done:
    h5zv_link_clear(&l);
    free(parent);
    free(leaf);
    free(path);
    return ret;
}

herr_t
h5zv_link_optional(void *obj, const H5VL_loc_params_t *loc, H5VL_optional_args_t *args, hid_t dxpl_id,
                   void **req)
{
    (void)obj;
    (void)loc;
    (void)dxpl_id;
    (void)req;
    h5zv_err_push(__func__, __LINE__, "native-only link operation %d is not supported", args->op_type);
    return -1;
}
