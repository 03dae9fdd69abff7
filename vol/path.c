/*
 * path.c: node paths. Paths are node paths relative to the store root ("" = "/"); this resolves the
 * names HDF5 hands the connector (absolute, relative, ".", by index, by token) to them, following soft
 * links and further hard links recorded in groups and, for h5zv_resolve_ext, external links into other
 * stores; checks the names a store can hold; and keeps the anonymous area (H5ZV_ANON_DIR).
 */
#include "h5zv.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- paths ----------------------------------------------------------------------------------------- */
bool
h5zv_is_anon(const char *path)
{
    size_t n = strlen(H5ZV_ANON_DIR);
    return strncmp(path, H5ZV_ANON_DIR, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

char *
h5zv_anon_path(h5zv_file *f)
{
    zarr_node_type t = ZARR_NODE_NONE;
    char           buf[128];
    if (zarr_node_probe(f->store, H5ZV_ANON_DIR, &t, NULL) != ZARR_OK || t == ZARR_NODE_NONE) {
        zarr_group_meta *g = NULL;
        if (zarr_group_meta_new(f->format, &g) != ZARR_OK ||
            zarr_group_write(f->store, H5ZV_ANON_DIR, g) != ZARR_OK) {
            zarr_group_meta_free(g);
            h5zv_err_push(__func__, __LINE__, "can't make the area for anonymous objects: %s", zarr_errmsg());
            return NULL;
        }
        zarr_group_meta_free(g);
        /* made behind the cache: the root's known children must include it */
        h5zv_node_made_behind(f, H5ZV_ANON_DIR, ZARR_NODE_GROUP);
    }
    snprintf(buf, sizeof buf, "%s/o%lu_%u", H5ZV_ANON_DIR, f->fileno, ++f->anon_seq);
    return strdup(buf);
}

int
h5zv_path_split(const char *path, char **parent, char **leaf)
{
    const char *s = strrchr(path, '/');
    *parent       = s ? strndup(path, (size_t)(s - path)) : strdup("");
    *leaf         = strdup(s ? s + 1 : path);
    if (!*parent || !*leaf) {
        free(*parent);
        free(*leaf);
        return -1;
    }
    return 0;
}

/* Looks up a soft link `name` in group `parent`; returns its target (malloc'ed node path) or NULL. */
static char *
soft_target(h5zv_file *f, const char *parent, const char *name)
{
    h5zv_node          *g;
    struct json_object *m, *links, *l, *t;

    if (h5zv_node_probe(f, parent, &(zarr_node_type){0}) < 0)
        return NULL;
    H5E_BEGIN_TRY { g = h5zv_node_get(f, parent); }
    H5E_END_TRY
    if (!g || g->type != ZARR_NODE_GROUP || !(m = h5zv_node_meta(g, false)))
        return NULL;
    if (!json_object_object_get_ex(m, "links", &links) || !json_object_object_get_ex(links, name, &l))
        return NULL;
    if (json_object_object_get_ex(l, "soft", &t))
        return strdup(json_object_get_string(t));
    if (json_object_object_get_ex(l, "hard", &t)) { /* an alias: the target's node path, made absolute */
        const char *p   = json_object_get_string(t);
        char       *abs = malloc(strlen(p) + 2);
        if (abs)
            sprintf(abs, "/%s", p);
        return abs;
    }
    return NULL;
}

/* Appends `comp` to the normalized path in `out` (capacity n); handles "." and "..". */
static int
path_push(char *out, size_t n, const char *comp, size_t clen)
{
    size_t len = strlen(out);
    if (clen == 0 || (clen == 1 && comp[0] == '.'))
        return 0;
    if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
        char *s = strrchr(out, '/');
        if (s)
            *s = '\0';
        else
            out[0] = '\0';
        return 0;
    }
    if (len + clen + 2 > n)
        return -1;
    if (len)
        out[len++] = '/';
    memcpy(out + len, comp, clen);
    out[len + clen] = '\0';
    return 0;
}

static int check_name(const char *name);

char *
h5zv_path_resolve(h5zv_file *f, const char *base, const char *name)
{
    char        out[4096] = "";
    const char *p;
    int         hops = 0;

    if (!name) {
        h5zv_err_push(__func__, __LINE__, "no object name given");
        return NULL;
    }
    if (check_name(name) < 0)
        return NULL;
    if (name[0] != '/' && base)
        h5zv_cat3(out, sizeof out, base, "", "");
    p = name;
    while (*p) {
        const char *e;
        while (*p == '/')
            p++;
        if (!*p)
            break;
        e = strchr(p, '/');
        if (!e)
            e = p + strlen(p);
        if (path_push(out, sizeof out, p, (size_t)(e - p)) < 0) {
            h5zv_err_push(__func__, __LINE__, "object name '%s' is too long", name);
            return NULL;
        }
        /* Follow a soft link at this component (not a real node). */
        if (f && (size_t)(e - p) && !(e - p == 1 && *p == '.') &&
            !(e - p == 2 && p[0] == '.' && p[1] == '.')) {
            zarr_node_type t = ZARR_NODE_NONE;
            if (h5zv_node_probe(f, out, &t) < 0 || t == ZARR_NODE_NONE) {
                char *parent, *leaf, *target;
                if (h5zv_path_split(out, &parent, &leaf) == 0) {
                    target = soft_target(f, parent, leaf);
                    if (target && ++hops < 16) {
                        char rest[4096];
                        snprintf(rest, sizeof rest, "%s%s", target, e);
                        free(target);
                        char *r = h5zv_path_resolve(f, parent, rest);
                        free(parent);
                        free(leaf);
                        return r;
                    }
                    free(target);
                    free(parent);
                    free(leaf);
                }
            }
        }
        p = e;
    }
    return strdup(out);
}

/* The external link record `leaf` in group `parent`: file and object (malloc'ed) or 0 if none. */
static int
external_target(h5zv_file *f, const char *parent, const char *leaf, char **file, char **obj)
{
    h5zv_node          *g = NULL;
    struct json_object *m, *links, *l, *v;
    H5E_BEGIN_TRY { g = h5zv_node_get(f, parent); }
    H5E_END_TRY
    if (!g || g->type != ZARR_NODE_GROUP || !(m = h5zv_node_meta(g, false)) ||
        !json_object_object_get_ex(m, "links", &links) || !json_object_object_get_ex(links, leaf, &l) ||
        !json_object_object_get_ex(l, "external", &v))
        return 0;
    *file = strdup(json_object_get_string(json_object_array_get_idx(v, 0)));
    *obj  = strdup(json_object_get_string(json_object_array_get_idx(v, 1)));
    return *file && *obj ? 1 : -1;
}

/* An external file name as HDF5 looks for it: as given (a URL, absolute, or relative to the working
 * directory), else relative to the directory of the file holding the link (of a URL too: "b.zarr"
 * from "s3://bkt/a.zarr" is "s3://bkt/b.zarr"). Only names that are not URLs are asked of the local
 * file system. */
static char *
external_file_path(h5zv_file *from, const char *name)
{
    char  *p;
    size_t n;
    if (zarr_store_is_url(name) || name[0] == '/' || access(name, F_OK) == 0)
        return strdup(name);
    const char *slash = strrchr(from->name, '/');
    if (!slash)
        return strdup(name);
    n = (size_t)(slash - from->name) + strlen(name) + 2;
    if ((p = malloc(n)))
        snprintf(p, n, "%.*s/%s", (int)(slash - from->name), from->name, name);
    return p;
}

/* Names the stores can hold: a directory store keeps every path component as a file name (at most
 * NAME_MAX = 255 bytes on Linux file systems), and paths are resolved in 4 KiB. Pushes why not. */
static int
check_name(const char *name)
{
    size_t total = strlen(name);
    if (total >= 4000) {
        h5zv_err_push(
            __func__, __LINE__,
            "object name of %zu bytes ('%.32s...'): the zarr connector handles names up to 4000 bytes", total,
            name);
        return -1;
    }
    for (const char *p = name; *p;) {
        size_t n = strcspn(p, "/");
        if (n > 255) {
            h5zv_err_push(
                __func__, __LINE__,
                "a name component of %zu bytes ('%.32s...'): a zarr directory store keeps each name as "
                "a file name, at most 255 bytes",
                n, p);
            return -1;
        }
        p += n;
        while (*p == '/')
            p++;
    }
    return 0;
}

int
h5zv_resolve_ext(h5zv_obj *o, const H5VL_loc_params_t *loc, const char *name, h5zv_file **file, char **path)
{
    char       *base = h5zv_loc_path(o, loc), *cur = NULL, rest[4096];
    h5zv_file  *f = o->file;
    const char *p;
    int         hops = 0;

    *file = NULL;
    *path = NULL;
    if (!base)
        return -1;
    if (name && check_name(name) < 0) {
        free(base);
        return -1;
    }
    if (!name || !*name || !strcmp(name, ".")) {
        h5zv_file_incref(f);
        *file = f;
        *path = base;
        return 0;
    }
    h5zv_file_incref(f);
    if (name[0] == '/')
        cur = strdup("");
    else
        cur = strdup(base);
    free(base);
    h5zv_cat3(rest, sizeof rest, name, "", "");
    p = rest;
    while (cur && *p) {
        char        comp[1024], next[4096], *efile = NULL, *eobj = NULL, *tgt;
        const char *e;
        size_t      clen;
        while (*p == '/')
            p++;
        if (!*p)
            break;
        e    = strchr(p, '/');
        clen = e ? (size_t)(e - p) : strlen(p);
        if (clen >= sizeof comp)
            break;
        memcpy(comp, p, clen);
        comp[clen] = '\0';
        p += clen;
        if (!strcmp(comp, "."))
            continue;
        h5zv_cat3(next, sizeof next, cur, *cur ? "/" : "", comp);
        zarr_node_type t = ZARR_NODE_NONE;
        if (h5zv_node_probe(f, next, &t) == 0 && t != ZARR_NODE_NONE) {
            free(cur);
            cur = strdup(next);
            continue;
        }
        if ((tgt = soft_target(f, cur, comp)) && ++hops < 32) {
            /* soft link or alias: continue with its target followed by what remains of the name */
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s%s%s", tgt, *p ? "/" : "", p);
            snprintf(rest, sizeof rest, "%s", tmp);
            p = rest;
            if (tgt[0] == '/') {
                free(cur);
                cur = strdup("");
            }
            free(tgt);
            continue;
        }
        free(tgt);
        if (external_target(f, cur, comp, &efile, &eobj) > 0 && ++hops < 32) {
            /* external link: continue in the other store with its object path and the rest */
            char       tmp[4096];
            char      *fp = external_file_path(f, efile);
            h5zv_file *nf = fp ? h5zv_file_open_store(fp, f->intent, f->fapl_id) : NULL;
            free(fp);
            if (!nf) {
                h5zv_err_push(__func__, __LINE__,
                              "can't follow external link '%s' to '%s': its file can't be opened", comp,
                              efile);
                free(efile);
                free(eobj);
                free(cur);
                cur = NULL;
                break;
            }
            h5zv_file_decref(f);
            f = nf;
            snprintf(tmp, sizeof tmp, "%s%s%s", eobj, *p ? "/" : "", p);
            snprintf(rest, sizeof rest, "%s", tmp);
            p = rest;
            free(cur);
            cur = strdup("");
            free(efile);
            free(eobj);
            continue;
        }
        free(efile);
        free(eobj);
        /* not there (yet): keep the name, as for a create */
        free(cur);
        cur = strdup(next);
    }
    if (!cur) {
        h5zv_file_decref(f);
        return -1;
    }
    *file = f;
    *path = cur;
    return 0;
}

char *
h5zv_loc_path(h5zv_obj *o, const H5VL_loc_params_t *loc)
{
    if (!loc || loc->type == H5VL_OBJECT_BY_SELF)
        return strdup(o->path);
    if (loc->type == H5VL_OBJECT_BY_NAME) {
        const char *name = loc->loc_data.loc_by_name.name;
        if (h5zv_check_plist(loc->loc_data.loc_by_name.lapl_id, H5P_LINK_ACCESS,
                             "link access property list") < 0)
            return NULL;
        if (name && name[0] == '.' && name[1] == '\0') /* the object itself (H5Rcreate_object(id, ".")) */
            return strdup(o->path);
        return h5zv_path_resolve(o->file, o->path, name);
    }
    if (loc->type == H5VL_OBJECT_BY_TOKEN) {
        char *p = h5zv_token_to_path(o->file, loc->loc_data.loc_by_token.token);
        if (!p)
            h5zv_err_push(__func__, __LINE__, "no object with that token in '%s'", o->file->name);
        return p;
    }
    if (loc->type == H5VL_OBJECT_BY_IDX) {
        const H5VL_loc_by_idx_t *bi = &loc->loc_data.loc_by_idx;
        char                    *gpath, *res = NULL;
        if (h5zv_check_plist(bi->lapl_id, H5P_LINK_ACCESS, "link access property list") < 0)
            return NULL;
        gpath            = h5zv_path_resolve(o->file, o->path, bi->name);
        h5zv_link *links = NULL;
        size_t     n     = 0;
        if (!gpath || h5zv_links_list(o->file, gpath, &links, &n) < 0) {
            free(gpath);
            return NULL;
        }
        if (bi->idx_type == H5_INDEX_NAME)
            h5zv_links_sort_by_name(links, n);
        if (bi->n >= n)
            h5zv_err_push(__func__, __LINE__, "index %llu out of range: group '/%s' has %zu links",
                          (unsigned long long)bi->n, gpath, n);
        else {
            size_t k = bi->order == H5_ITER_DEC ? n - 1 - (size_t)bi->n : (size_t)bi->n;
            res      = h5zv_path_resolve(o->file, gpath, links[k].name);
        }
        h5zv_links_free(links, n);
        free(gpath);
        return res;
    }
    h5zv_err_push(__func__, __LINE__, "unknown location type %d", (int)loc->type);
    return NULL;
}
