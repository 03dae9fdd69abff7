/*
 * node.c: the per-file node cache, path resolution and the link table of groups.
 *
 * A node is one zarr group or array, loaded once per file and shared by every handle on it; edits
 * (attributes, links) mark it dirty and it is written at flush/close. Paths are node paths relative
 * to the store root ("" = "/"). Link creation order and soft/external links live in the group's
 * reserved object, a top-level key of its own metadata document (v2 .zgroup, v3 zarr.json; the core's
 * `reserved`, docs/FORMAT.md), which zarr readers do not show:
 *     "_h5zarr": {"order": ["b", "a"], "links": {"s": {"soft": "/a/x"}, "e": {"external": ["f.h5", "/d"]}}}
 * Stores written before kept it as an attribute of that name: it is moved to its place when the node is
 * loaded (written there, and left out of the attributes, at the node's next write).
 */
#include "h5zv.h"
#include "config.h"
#include "mpi_vol.h"
#include "h5zarr/zarr_consolidated.h"
#include "reserved.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

/* ---- objects --------------------------------------------------------------------------------------- */
h5zv_obj *
h5zv_obj_new(h5zv_file *f, H5I_type_t type, const char *path)
{
    h5zv_obj *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    if (!(o->path = strdup(path ? path : ""))) {
        free(o);
        return NULL;
    }
    o->type      = type;
    o->file      = f;
    o->type_id   = H5I_INVALID_HID;
    o->space_id  = H5I_INVALID_HID;
    o->dcpl_id   = H5I_INVALID_HID;
    o->dapl_id   = H5I_INVALID_HID;
    o->attr_type = o->attr_space = o->dtype_id = H5I_INVALID_HID;
    if (type == H5I_FILE) { /* a file handle: objects reached through it carry its number (route.c) */
        static unsigned long handles;
        o->via = ++handles;
        f->nhandles++;
    }
    h5zv_file_incref(f);
    if ((o->next_obj = f->objs))
        f->objs->prev_obj = o;
    f->objs = o;
    return o;
}

static bool
path_under(const char *path, const char *top, size_t n)
{
    /* the first byte first: most paths differ there, and a rename walks every open object */
    if (n && path[0] != top[0])
        return false;
    return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 0);
}

bool
h5zv_path_in_use(h5zv_file *f, const char *path)
{
    size_t n = strlen(path);
    for (h5zv_obj *o = f->objs; o; o = o->next_obj)
        if (o->type != H5I_FILE && path_under(o->path, path, n))
            return true;
    return false;
}

int
h5zv_objs_retarget(h5zv_file *f, const char *from, const char *to)
{
    size_t n = strlen(from);
    for (h5zv_obj *o = f->objs; o; o = o->next_obj) {
        char *p;
        if (o->type == H5I_FILE || !path_under(o->path, from, n))
            continue;
        if (!(p = malloc(strlen(to) + strlen(o->path + n) + 1)))
            return -1;
        strcpy(p, to);
        strcat(p, o->path + n);
        free(o->path);
        o->path = p;
    }
    return 0;
}

void
h5zv_obj_free(h5zv_obj *o)
{
    h5zv_errs *es;
    if (!o)
        return;
    es = h5zv_err_save();
    if (o->file && o->getfile) { /* its id is gone: the next H5VL_OBJECT_GET_FILE makes another */
        h5zv_obj **pp = &o->file->getfile_objs;
        while (*pp && *pp != o)
            pp = &(*pp)->next_getfile;
        if (*pp)
            *pp = o->next_getfile;
        o->file->ngetfile--;
    }
    if (o->file && o->type == H5I_FILE)
        o->file->nhandles--;
    if (o->prev_obj)
        o->prev_obj->next_obj = o->next_obj;
    else if (o->file && o->file->objs == o)
        o->file->objs = o->next_obj;
    if (o->next_obj)
        o->next_obj->prev_obj = o->prev_obj;
    hid_t ids[] = {o->space_id, o->dcpl_id, o->dapl_id, o->attr_space};
    h5zv_type_release(o->type_id);
    h5zv_type_release(o->attr_type);
    h5zv_type_release(o->dtype_id);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ids[i] >= 0 && H5Iis_valid(ids[i]))
            H5Idec_ref(ids[i]);
    free(o->path);
    free(o->attr_name);
    h5zv_file_decref(o->file);
    free(o);
    h5zv_err_restore(es);
}

/* ---- node cache ------------------------------------------------------------------------------------ */
static uint64_t
path_hash(const char *path)
{
    return XXH3_64bits(path, strlen(path));
}

static size_t
bucket_of(h5zv_file *f, const char *path)
{
    return (size_t)(path_hash(path) % f->nbuckets);
}

/* The token index: every cached entry also hangs in a chain by its token, so a reference (a token)
 * finds its node without a scan of the cache (H5DSattach_scale opens every reference it holds). */
static size_t
tok_bucket_of(h5zv_file *f, const H5O_token_t *tok)
{
    uint64_t k;
    memcpy(&k, tok->__data, sizeof k);
    return (size_t)(k % f->nbuckets);
}

static void
tok_link(h5zv_file *f, h5zv_node *n)
{
    size_t b;
    if (!n->tok_ok) { /* a node's path never changes: its token changes only with a move (below) */
        h5zv_token_of(f, n->path, &n->tok);
        n->tok_ok = true;
    }
    b                 = tok_bucket_of(f, &n->tok);
    n->tok_next       = f->tok_buckets[b];
    f->tok_buckets[b] = n;
}

static void
tok_unlink(h5zv_file *f, h5zv_node *n)
{
    if (!n->tok_ok)
        return;
    for (h5zv_node **pp = &f->tok_buckets[tok_bucket_of(f, &n->tok)]; *pp; pp = &(*pp)->tok_next)
        if (*pp == n) {
            *pp = n->tok_next;
            return;
        }
}

/* Probe-only entries (h5zv_node_probe) share the node cache: they hold the type found at a path
 * (ZARR_NODE_NONE for "nothing there") and no metadata. */
static bool
is_probe(const h5zv_node *n)
{
    return !n->g && !n->a;
}

/* Any live entry at `path`: a loaded node or a probe result. */
static h5zv_node *
cache_entry(h5zv_file *f, const char *path)
{
    uint64_t   h;
    h5zv_node *n;
    if (!f->buckets)
        return NULL;
    h = path_hash(path);
    if ((n = f->last_found) && n->hash == h && !n->deleted && strcmp(n->path, path) == 0)
        return n;
    for (n = f->buckets[h % f->nbuckets]; n; n = n->next)
        if (n->hash == h && !n->deleted && strcmp(n->path, path) == 0)
            return f->last_found = n;
    return NULL;
}

/* Doubles both indexes when they hold more nodes than chains (a store of thousands of variables: every
 * reference H5DSattach_scale opens, names and re-creates is a lookup by path and one by token). */
static void
cache_grow(h5zv_file *f)
{
    size_t      nb = f->nbuckets * 2;
    h5zv_node **b, **t;
    if (f->nnodes <= f->nbuckets || f->buckets_pinned)
        return;
    if (!(b = calloc(nb, sizeof *b)) || !(t = calloc(nb, sizeof *t))) {
        free(b);
        return; /* out of memory: longer chains, still right */
    }
    for (size_t k = 0; k < f->nbuckets; k++)
        for (h5zv_node *n = f->buckets[k], *next; n; n = next) {
            next            = n->next;
            n->next         = b[n->hash % nb];
            b[n->hash % nb] = n;
        }
    free(f->buckets);
    free(f->tok_buckets);
    f->buckets     = b;
    f->tok_buckets = t;
    f->nbuckets    = nb;
    for (size_t k = 0; k < nb; k++)
        for (h5zv_node *n = b[k]; n; n = n->next)
            if (n->tok_ok) {
                size_t tb   = tok_bucket_of(f, &n->tok);
                n->tok_next = t[tb];
                t[tb]       = n;
            }
}

/* The loaded node at `path`, or NULL. */
static h5zv_node *
cache_find(h5zv_file *f, const char *path)
{
    h5zv_node *n = cache_entry(f, path);
    return n && !is_probe(n) ? n : NULL;
}

/* Takes node `n` out of every lookup for good: it is marked deleted, leaves its chain and the token
 * index (unless a walk has the chains pinned: then it stays, skipped as deleted) and waits in the
 * file's graveyard until the file closes, since callers may still hold it. Deleted nodes would
 * otherwise pile up in the chains: a program renaming thousands of variables through one temporary
 * name leaves one behind per move, and every walk of the cache would pass them all. */
static void
node_bury(h5zv_file *f, h5zv_node *n)
{
    h5zv_node **pp;
    n->deleted = true;
    if (f->buckets_pinned)
        return;
    for (pp = &f->buckets[n->hash % f->nbuckets]; *pp && *pp != n; pp = &(*pp)->next)
        ;
    if (!*pp)
        return;
    *pp = n->next;
    tok_unlink(f, n);
    n->tok_ok = false;
    if (f->last_found == n)
        f->last_found = NULL;
    if (is_probe(n))
        f->nprobes--;
    f->nnodes--;
    n->next      = f->graveyard;
    f->graveyard = n;
}

/* Drops the cached link list of group `n`. */
static void
links_drop(h5zv_node *n)
{
    if (!n || !n->links_ok)
        return;
    h5zv_links_free(n->links, n->nlinks);
    n->links    = NULL;
    n->nlinks   = 0;
    n->links_ok = false;
}

static void
node_free(h5zv_node *n)
{
    if (!n)
        return;
    links_drop(n);
    zarr_group_meta_free(n->g);
    zarr_array_close(n->a);
    free(n->path);
    free(n);
}

/* Unlinks and frees probe-only entries: the one at `path`, or all of them when `path` is NULL. */
static void
drop_probes(h5zv_file *f, const char *path)
{
    size_t b0 = 0, b1 = f->nbuckets;
    if (!f->buckets || !f->nprobes)
        return;
    if (path) {
        b0 = bucket_of(f, path);
        b1 = b0 + 1;
    }
    for (size_t b = b0; b < b1; b++)
        for (h5zv_node **pp = &f->buckets[b]; *pp;) {
            h5zv_node *n = *pp;
            if (is_probe(n) && (!path || strcmp(n->path, path) == 0)) {
                *pp = n->next;
                if (f->last_found == n)
                    f->last_found = NULL;
                tok_unlink(f, n);
                node_free(n);
                f->nprobes--;
                f->nnodes--;
            }
            else
                pp = &n->next;
        }
}

static int
cache_init(h5zv_file *f)
{
    if (!f->buckets) {
        f->nbuckets = 1024;
        if (!(f->buckets = calloc(f->nbuckets, sizeof *f->buckets)) ||
            !(f->tok_buckets = calloc(f->nbuckets, sizeof *f->tok_buckets))) {
            free(f->buckets);
            f->buckets = NULL;
            return -1;
        }
    }
    return 0;
}

static bool link_record_ok(struct json_object *lk);

/* `not_list` or `not_item` when field `key` of `m` is there but not a list of strings, else NULL;
 * `field` gets the offending field. */
static const char *
str_list_bad(struct json_object *m, const char *key, const char *not_list, const char *not_item, char *field,
             size_t cap)
{
    struct json_object *v;
    if (!json_object_object_get_ex(m, key, &v))
        return NULL;
    snprintf(field, cap, "%s", key);
    if (!json_object_is_type(v, json_type_array))
        return not_list;
    for (size_t i = 0; i < json_object_array_length(v); i++)
        if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string)) {
            snprintf(field, cap, "%s[%zu]", key, i);
            return not_item;
        }
    return NULL;
}

/* Moves the reserved object of a node written before (an attribute named _h5zarr: docs/FORMAT.md "Stores
 * written before") out of the attributes of group `g` or array `a` into the metadata's `reserved`. When
 * the document has one already, that one wins and the attribute is dropped. Only objects move: another
 * value of that name was never the connector's and stays (hidden by attr.c). */
static bool
node_reserved_adopt(zarr_group_meta *g, zarr_array *a)
{
    struct json_object **attrs, **res, *m = NULL;
    bool                 took = false;
    if (g) {
        attrs = &g->attributes;
        res   = &g->reserved;
    }
    else if (a) {
        attrs = &zarr_array_meta_mut(a)->attributes;
        res   = &zarr_array_meta_mut(a)->reserved;
    }
    else
        return false;
    if (!*attrs || !json_object_object_get_ex(*attrs, H5ZV_META_KEY, &m) ||
        !json_object_is_type(m, json_type_object))
        return false;
    if (!*res) {
        *res = json_object_get(m);
        took = true;
    }
    json_object_object_del(*attrs, H5ZV_META_KEY);
    return took;
}

/* What is wrong with the link records in the _h5zarr of group `g` or array `a` (docs/FORMAT.md: on any
 * node "aliases" a list of link paths; on groups "order" a list of names, "corder" an object of
 * integers, "next_corder" an integer, "links" an object of link records), or NULL when nothing is:
 * `field` gets the offending field. A store is untrusted input and
 * json-c aborts on a list or object operation on the wrong type, so a group whose records are malformed
 * never enters the cache; the connector's own edits keep them well formed. */
static const char *
node_records_bad(zarr_group_meta *g, zarr_array *a, char *field, size_t cap)
{
    struct json_object *m     = NULL, *v,
                       *attrs = g   ? g->attributes
                                : a ? zarr_array_meta_get(a)->attributes
                                    : NULL;
    const char *bad;
    /* a store written before keeps them among the attributes (moved by node_put) */
    m = g ? g->reserved : a ? zarr_array_meta_get(a)->reserved : NULL;
    if (!m && attrs)
        json_object_object_get_ex(attrs, H5ZV_META_KEY, &m);
    if (!m || !json_object_is_type(m, json_type_object))
        return NULL;
    /* any node: the link paths of its further hard links */
    if ((bad = str_list_bad(m, "aliases", "is not a list of link paths", "is not a link path", field, cap)))
        return bad;
    if (!g)
        return NULL;
    if ((bad = str_list_bad(m, "order", "is not a list of link names", "is not a link name", field, cap)))
        return bad;
    if (json_object_object_get_ex(m, "corder", &v)) {
        snprintf(field, cap, "corder");
        if (!json_object_is_type(v, json_type_object))
            return "is not an object of creation order values";
        json_object_object_foreach(v, k, c) if (!json_object_is_type(c, json_type_int))
        {
            snprintf(field, cap, "corder.%s", k);
            return "is not an integer";
        }
    }
    if (json_object_object_get_ex(m, "next_corder", &v) && !json_object_is_type(v, json_type_int)) {
        snprintf(field, cap, "next_corder");
        return "is not an integer";
    }
    if (json_object_object_get_ex(m, "links", &v)) {
        snprintf(field, cap, "links");
        if (!json_object_is_type(v, json_type_object))
            return "is not an object of link records";
        json_object_object_foreach(v, k, lk) if (!link_record_ok(lk))
        {
            snprintf(field, cap, "links.%s", k);
            return "is malformed (want {\"soft\": PATH}, {\"hard\": PATH}, {\"external\": [FILE, PATH]} or "
                   "{\"ud\": [CLASS, VALUE]})";
        }
    }
    return NULL;
}

/* zarr v3 has no NULL string: a vlen-string array whose HDF5 fill value is a NULL string (recorded as
 * `_h5zarr.fill: null`, or `fill_default`: HDF5's default fill, zeros) has `"fill_value": ""` in its
 * zarr.json. Its unwritten elements read as NULL here (docs/FORMAT.md "NULL strings"); stores written
 * before without the record keep reading "". */
static int
node_null_fill(const char *path, zarr_array *a)
{
    const zarr_array_meta *m = zarr_array_meta_get(a);
    struct json_object    *meta, *v;
    char                  *s = NULL;
    if (!m || !m->dtype || m->dtype->kind != ZARR_VLEN_UTF8 || !m->fill)
        return 0;
    memcpy(&s, m->fill, sizeof s);
    meta = m->reserved; /* or, in a store written before, among the attributes */
    if (!s ||
        (!meta && (!m->attributes || !json_object_object_get_ex(m->attributes, H5ZV_META_KEY, &meta))) ||
        !json_object_is_type(meta, json_type_object))
        return 0;
    if (!(json_object_object_get_ex(meta, "fill", &v) && !v) &&
        !(json_object_object_get_ex(meta, "fill_default", &v) && json_object_is_type(v, json_type_boolean) &&
          json_object_get_boolean(v)))
        return 0;
    if (zarr_array_set_fill(a, NULL, m->fill_defined) != ZARR_OK) {
        h5zv_err_push(__func__, __LINE__, "array '/%s': can't set its NULL string fill value: %s", path,
                      zarr_errmsg());
        return -1;
    }
    return 0;
}

/* Puts an entry for `path` in the cache: a node read from the store (`g` or `a`, taken) or, when both
 * are NULL, a probe result of `type`. An existing probe entry at `path` becomes the loaded node. Unlike
 * h5zv_node_add (new nodes), the parent's link list stays: the node was there already. NULL with an
 * error pushed when out of memory (`g` and `a` freed). The records of `g` and `a` are taken as they are:
 * node_insert checks them first. */
static h5zv_node *
node_put(h5zv_file *f, const char *path, zarr_node_type type, int format, zarr_group_meta *g, zarr_array *a)
{
    h5zv_node *n;
    size_t     b;
    bool       probe = !g && !a;

    if (a && node_null_fill(path, a) < 0) {
        zarr_group_meta_free(g);
        zarr_array_close(a);
        return NULL;
    }
    if (cache_init(f) < 0) {
        h5zv_err_push(__func__, __LINE__, "out of memory");
        zarr_group_meta_free(g);
        zarr_array_close(a);
        return NULL;
    }
    if ((n = cache_entry(f, path)) && is_probe(n)) {
        if (!probe) {
            n->g                   = g;
            n->a                   = a;
            n->reserved_from_attrs = node_reserved_adopt(g, a);
            f->nprobes--;
        }
        n->type   = type;
        n->format = (signed char)format;
        if (!probe)
            h5zv_reserved_upgrade(f, n); /* the earlier form of _h5zarr, when allowed */
        return n;
    }
    if (!(n = calloc(1, sizeof *n)) || !(n->path = strdup(path))) {
        h5zv_err_push(__func__, __LINE__, "out of memory");
        free(n);
        zarr_group_meta_free(g);
        zarr_array_close(a);
        return NULL;
    }
    n->type         = type;
    n->format       = (signed char)format;
    n->tracks_links = -1;
    n->g            = g;
    n->a            = a;
    if (!probe)
        n->reserved_from_attrs = node_reserved_adopt(g, a);
    n->hash       = path_hash(path);
    b             = (size_t)(n->hash % f->nbuckets);
    n->next       = f->buckets[b];
    f->buckets[b] = n;
    tok_link(f, n);
    f->nnodes++;
    cache_grow(f);
    if (probe)
        f->nprobes++;
    else
        h5zv_reserved_upgrade(f, n); /* the earlier form of _h5zarr, when allowed */
    return n;
}

/* node_put of a node whose link records are checked first (node_records_bad): a malformed one is
 * refused, NULL with an error pushed naming the node and the field (`g` and `a` freed). */
static h5zv_node *
node_insert(h5zv_file *f, const char *path, zarr_node_type type, int format, zarr_group_meta *g,
            zarr_array *a)
{
    char        field[96];
    const char *bad = node_records_bad(g, a, field, sizeof field);
    if (bad) {
        h5zv_err_push(__func__, __LINE__, "%s '/%s': _h5zarr.%s %s", g ? "group" : "array", path, field, bad);
        zarr_group_meta_free(g);
        zarr_array_close(a);
        return NULL;
    }
    return node_put(f, path, type, format, g, a);
}

/* ---- read-only opens of consolidated stores ---------------------------------------------------------
 * A store opened read-only whose root carries consolidated metadata (v3 inline in the root zarr.json, v2
 * .zmetadata) is read from that document, as zarr-python's open_consolidated reads it: nodes are loaded
 * and groups listed from it (zarr_consolidated_open), so opening and visiting a hierarchy reads one
 * document however many nodes it has. A name the document does not list is still looked for in the
 * store. Writable opens never use it (their own changes would not be in it). */
static h5zv_node *node_get_impl(h5zv_file *f, const char *path);

static zarr_consolidated *
file_view(h5zv_file *f)
{
    if (f->cview_state == 0 && f->intent == H5F_ACC_RDONLY) {
        if (f->format == 2) {
            int rc         = zarr_consolidated_open(f->store, "", 2, &f->cview);
            f->cview_state = rc == ZARR_OK ? 1 : -1;
            if (rc != ZARR_OK && getenv("H5ZV_DEBUG"))
                fprintf(stderr, "h5zv: no consolidated view of '%s': %s\n", f->name,
                        rc == ZARR_ENOTFOUND ? "none" : zarr_errmsg());
            zarr_error_clear();
        }
        else {
            /* v3: the root's own zarr.json carries it; loading the root decides */
            h5zv_node *root;
            H5E_BEGIN_TRY { root = node_get_impl(f, ""); }
            H5E_END_TRY
            if (f->cview_state == 0)
                f->cview_state = root ? -1 : 0;
        }
    }
    return f->cview_state == 1 ? f->cview : NULL;
}

/* After the v3 root `n` was read from the store: its consolidated metadata becomes the view. */
static void
view_from_root(h5zv_file *f, h5zv_node *n)
{
    if (f->cview_state != 0 || f->intent != H5F_ACC_RDONLY || f->format != 3 || !n || !n->g)
        return;
    f->cview_state = zarr_consolidated_from_group(f->store, "", n->g, &f->cview) == ZARR_OK ? 1 : -1;
    zarr_error_clear();
}

/* The node at `path` from the view, put in the cache: 1 found, 0 not listed there, -1 error pushed. */
static int
view_load(h5zv_file *f, const char *path, h5zv_node **out)
{
    zarr_consolidated *v = file_view(f);
    zarr_group_meta   *g = NULL;
    zarr_array        *a = NULL;
    zarr_node_type     type;
    int                fmt;

    *out = NULL;
    if (!v || !*path)
        return 0;
    if (zarr_consolidated_load(v, path, &type, &fmt, &g, &a) != ZARR_OK) {
        h5zv_err_push(__func__, __LINE__, "can't read node '/%s' from the consolidated metadata: %s", path,
                      zarr_errmsg());
        return -1;
    }
    if (type == ZARR_NODE_NONE)
        return 0;
    if (!(*out = node_insert(f, path, type, fmt, g, a)))
        return -1; /* error pushed */
    return 1;
}

/* True if the cache knows every child of the parent of `path` (a group it made: kids_known), so an
 * entry missing for `path` means nothing is there. */
static bool
parent_knows(h5zv_file *f, const char *path)
{
    const char *s = strrchr(path, '/');
    size_t      len;
    char        pbuf[1024];
    h5zv_node  *p;

    if (!*path || !f->buckets)
        return false;
    len = s ? (size_t)(s - path) : 0;
    if (len >= sizeof pbuf)
        return false;
    memcpy(pbuf, path, len);
    pbuf[len] = '\0';
    p         = cache_find(f, pbuf);
    return p && p->kids_known && p->type == ZARR_NODE_GROUP;
}

/* h5zv_node_probe; `known` lets a group's known children answer an absent path without the store
 * (h5zv_links_list asks the store about the directories it lists: they are there). */
static int
node_probe(h5zv_file *f, const char *path, zarr_node_type *type, bool known)
{
    h5zv_node *n   = cache_entry(f, path);
    int        fmt = 0;

    if (n) {
        *type = n->type;
        return 0;
    }
    if (known && parent_knows(f, path)) {
        *type = ZARR_NODE_NONE;
        return 0;
    }
    {
        h5zv_node *vn;
        int        vr;
        H5E_BEGIN_TRY { vr = view_load(f, path, &vn); }
        H5E_END_TRY
        if (vr > 0) {
            *type = vn->type;
            return 0;
        }
        if (vr < 0)
            zarr_error_clear(); /* the store answers instead; opening it reports what is wrong */
    }
    if (f->format == 3) {
        /* a v3 probe reads and parses zarr.json: keep the node it gives rather than reading it again */
        zarr_group_meta *g = NULL;
        zarr_array      *a = NULL;
        char             field[96];
        if (zarr_node_load(f->store, path, 3, type, &fmt, &g, &a) == ZARR_OK) {
            if (!node_records_bad(g, a, field, sizeof field)) {
                node_put(f, path, *type, fmt, g, a); /* checked just now */
                return 0;
            }
            /* malformed link records: remembered as a probe only; opening the node reports them */
            zarr_group_meta_free(g);
            zarr_array_close(a);
            node_insert(f, path, *type, fmt, NULL, NULL);
            return 0;
        }
        /* a node that can't be loaded (bad metadata) still has a type for listings; opening it reports
         * the error */
        zarr_error_clear();
    }
    if (zarr_node_probe_as(f->store, path, f->format, type, &fmt) != ZARR_OK)
        return -1; /* failures are not remembered */
    node_insert(f, path, *type, fmt, NULL, NULL);
    return 0;
}

int
h5zv_node_probe(h5zv_file *f, const char *path, zarr_node_type *type)
{
    return node_probe(f, path, type, true);
}

bool
h5zv_node_known_absent(h5zv_file *f, const char *path)
{
    return f && path && !cache_entry(f, path) && parent_knows(f, path);
}

bool
h5zv_node_can_defer(h5zv_file *f, const char *path)
{
    return f && !f->mpi && f->real && f->intent == H5F_ACC_RDWR && !h5zv_file_settings(f)->durable &&
           h5zv_node_known_absent(f, path);
}

void
h5zv_node_defer(h5zv_file *f, h5zv_node *n)
{
    const char *s = strrchr(n->path, '/');
    size_t      len;
    char        pbuf[4096];
    h5zv_node  *p = NULL;

    n->unwritten = true;
    n->dirty     = true;
    n->born      = (int64_t)time(NULL);
    len          = s ? (size_t)(s - n->path) : 0;
    if (*n->path && len < sizeof pbuf) {
        memcpy(pbuf, n->path, len);
        pbuf[len] = '\0';
        p         = cache_find(f, pbuf);
    }
    if (p) { /* always there: h5zv_node_can_defer asked for a cached parent group */
        n->pend_next = p->pend_kids;
        p->pend_kids = n;
    }
}

h5zv_node *
h5zv_node_add(h5zv_file *f, const char *path, zarr_group_meta *g, zarr_array *a)
{
    h5zv_node *n;

    if (cache_init(f) < 0) {
        zarr_group_meta_free(g);
        zarr_array_close(a);
        return NULL;
    }
    drop_probes(f, path); /* what a probe saw there is superseded */
    if (*path) {
        /* a new child: the parent's link list changes */
        const char *s   = strrchr(path, '/');
        size_t      len = s ? (size_t)(s - path) : 0;
        char        pbuf[4096];
        if (len < sizeof pbuf) {
            memcpy(pbuf, path, len);
            pbuf[len] = '\0';
            links_drop(cache_find(f, pbuf));
        }
        else
            for (size_t k = 0; k < f->nbuckets; k++)
                for (h5zv_node *q = f->buckets[k]; q; q = q->next)
                    links_drop(q);
    }
    if ((n = cache_find(f, path))) {
        if (n->a)
            zarr_array_discard_cache(n->a); /* its cached chunks must not land in the new node */
        node_bury(f, n);                    /* replaced: the old record leaves the lookups */
    }
    n = node_insert(f, path, g ? ZARR_NODE_GROUP : ZARR_NODE_ARRAY,
                    g   ? g->zarr_format
                    : a ? zarr_array_meta_get(a)->zarr_format
                        : 0,
                    g, a);
    if (n && g)
        n->kids_known = true; /* new: its children will all be made through this cache */
    return n;
}

h5zv_node *
h5zv_node_get(h5zv_file *f, const char *path)
{
    h5zv_node *n = cache_find(f, path);
    if (n)
        return n;
    if (*path && !cache_entry(f, path)) {
        int vr = view_load(f, path, &n);
        if (vr != 0)
            return n;
    }
    return node_get_impl(f, path);
}

/* h5zv_node_get from the store. */
static h5zv_node *
node_get_impl(h5zv_file *f, const char *path)
{
    h5zv_node       *n;
    zarr_node_type   type;
    int              format = 0;
    zarr_group_meta *g      = NULL;
    zarr_array      *a      = NULL;

    if (!*path && f->intent == H5F_ACC_RDONLY && f->format == 2 && file_view(f) && !cache_entry(f, path)) {
        /* the v2 root from .zmetadata too: its .zgroup and .zattrs need no read */
        zarr_consolidated_load(f->cview, "", &type, &format, &g, NULL);
        zarr_error_clear();
        if (g)
            return node_insert(f, path, ZARR_NODE_GROUP, format, g, NULL); /* NULL: error pushed */
    }
    if ((n = cache_entry(f, path))) {
        if (!is_probe(n))
            return n;
        /* probed before: the store need not be asked what is there again */
        type   = n->type;
        format = n->format;
        if (type == ZARR_NODE_GROUP && zarr_group_read_format(f->store, path, format, &g) != ZARR_OK) {
            h5zv_err_push(__func__, __LINE__, "can't read group '/%s': %s", path, zarr_errmsg());
            return NULL;
        }
        if (type == ZARR_NODE_ARRAY && zarr_array_open_format(f->store, path, format, &a) != ZARR_OK) {
            h5zv_err_push(__func__, __LINE__, "can't open array '/%s': %s", path, zarr_errmsg());
            return NULL;
        }
    }
    else if (zarr_node_load(f->store, path, f->format, &type, &format, &g, &a) != ZARR_OK) {
        h5zv_err_push(__func__, __LINE__, "can't read node '/%s': %s", path, zarr_errmsg());
        return NULL;
    }
    if (type == ZARR_NODE_NONE) {
        h5zv_err_push(__func__, __LINE__, "object '/%s' doesn't exist", path);
        return NULL;
    }
    if ((n = node_insert(f, path, type, format, g, a)) && !*path) /* NULL: error pushed */
        view_from_root(f, n);
    return n;
}

h5zv_node *
h5zv_node_seed_root(h5zv_file *f, zarr_group_meta *g)
{
    h5zv_node *n = node_insert(f, "", ZARR_NODE_GROUP, f->format, g, NULL); /* NULL: error pushed */
    if (n)
        view_from_root(f, n);
    return n;
}

void
h5zv_node_forget(h5zv_file *f, const char *path)
{
    size_t len = strlen(path);
    if (!f->buckets)
        return;
    drop_probes(f, NULL); /* presence or absence seen before may have changed anywhere below */
    for (size_t b = 0; b < f->nbuckets; b++)
        for (h5zv_node *n = f->buckets[b], *next; n; n = next) {
            next = n->next;
            links_drop(n);         /* children may have gone or moved anywhere */
            n->kids_known = false; /* and nodes may have moved in from behind the cache */
            if (len == 0 ||
                (strncmp(n->path, path, len) == 0 && (n->path[len] == '\0' || n->path[len] == '/'))) {
                /* deleted or moved (moves flush first): cached chunks of the old place are dropped */
                if (n->a)
                    zarr_array_discard_cache(n->a);
                node_bury(f, n);
            }
        }
}

struct json_object *
h5zv_node_attrs(h5zv_node *n)
{
    struct json_object **slot;
    if (n->type == ZARR_NODE_GROUP)
        slot = &n->g->attributes;
    else
        slot = &zarr_array_meta_mut(n->a)->attributes;
    if (!*slot)
        *slot = json_object_new_object();
    return *slot;
}

struct json_object **
h5zv_node_reserved_slot(h5zv_node *n)
{
    if (n->type == ZARR_NODE_GROUP)
        return &n->g->reserved;
    return &zarr_array_meta_mut(n->a)->reserved;
}

struct json_object *
h5zv_node_meta(h5zv_node *n, bool create)
{
    struct json_object **slot = h5zv_node_reserved_slot(n);
    if (*slot && json_object_is_type(*slot, json_type_object))
        return *slot;
    if (!create)
        return NULL;
    json_object_put(*slot);
    *slot = json_object_new_object();
    return *slot;
}

void
h5zv_node_mark_dirty(h5zv_node *n)
{
    n->dirty = true;
    links_drop(n); /* every edit of a group's link records marks it dirty */
}

/* Writes node `n`'s documents with the HDF5-free core calls alone (it may run on a pool worker): every
 * document of an unwritten node, or of one whose zarr metadata changed (doc_dirty: the fill value), else
 * the attributes and the reserved object (the connector edits only those; the core's attributes-only
 * write rewrites the .zarray/.zgroup of a v2 node that has a reserved object; the rest of a node's
 * metadata changes through the core, resize, which writes it). */
static int
node_docs_write(zarr_store *s, const h5zv_node *n)
{
    if (n->unwritten)
        return n->type == ZARR_NODE_GROUP ? zarr_group_write_new(s, n->path, n->g)
                                          : zarr_array_write_new(n->a);
    if (n->doc_dirty)
        return n->type == ZARR_NODE_GROUP ? zarr_group_write(s, n->path, n->g) : zarr_array_write_meta(n->a);
    return n->type == ZARR_NODE_GROUP ? zarr_group_write_attrs(s, n->path, n->g)
                                      : zarr_array_write_attrs(n->a);
}

int
h5zv_node_write(h5zv_file *f, h5zv_node *n)
{
    if (n->deleted)
        return 0;
    if (node_docs_write(f->store, n) != ZARR_OK) {
        h5zv_err_push(__func__, __LINE__, "can't write metadata of '/%s': %s", n->path, zarr_errmsg());
        return -1;
    }
    n->dirty = n->unwritten = n->doc_dirty = n->reserved_from_attrs = false;
    return 0;
}

/* ---- flush: the dirty nodes' documents as one pool job -------------------------------------------- */
/* Fewer dirty nodes than this are written on the caller (waking the workers costs more than a few
 * documents: one is ~20-60 us of JSON and two or three syscalls). */
#define FLUSH_POOL_MIN 8

/* One flush's documents: task i writes nodes[i] with the HDF5-free core calls only (no HDF5 call
 * here: it may run on a pool worker), and records its status and the core's message of a failure
 * (per thread: copied while still on the worker). Each task touches its own node's trees alone (no
 * JSON object is shared between two nodes' trees: every one the connector adds is new or moved
 * within one node) and the store, whose operations are thread-safe. */
typedef struct {
    h5zv_file  *f;
    h5zv_node **nodes;
    int        *rc;  /* [n]: ZARR_OK or the failure */
    char      **msg; /* [n]: the core's message of a failure (owned), else NULL */
} flush_job;

static int
flush_task(void *job, size_t i, int worker)
{
    flush_job *j = job;
    h5zv_node *n = j->nodes[i];
    (void)worker;
    j->rc[i] = node_docs_write(j->f->store, n);
    if (j->rc[i] != ZARR_OK)
        j->msg[i] = strdup(zarr_errmsg()); /* NULL (out of memory): reported without the cause */
    /* every node is tried: a failed task would stop the pool from handing out the others */
    return ZARR_OK;
}

/* Writes the documents of the `n` dirty nodes `nodes` of `f` (the pool of f's settings, inline when
 * few); each written one is clean, each failure is pushed naming its node and the node stays dirty.
 * 0, or -1 with errors pushed. */
static int
flush_nodes(h5zv_file *f, h5zv_node **nodes, size_t n)
{
    flush_job        j = {f, nodes, NULL, NULL};
    zarr_engine_opts o;
    int              ret = 0;

    j.rc  = malloc(n * sizeof *j.rc);
    j.msg = calloc(n, sizeof *j.msg);
    if (!j.rc || !j.msg) { /* one after another then: h5zv_node_write reports each failure */
        for (size_t i = 0; i < n; i++)
            if (h5zv_node_write(f, nodes[i]) < 0)
                ret = -1;
        goto done;
    }
    h5zv_config_engine_opts(h5zv_file_settings(f), &o);
    (void)zarr_pool_run(o.pool ? o.pool : zarr_pool_default(), flush_task, &j, n, n < FLUSH_POOL_MIN);
    for (size_t i = 0; i < n; i++) {
        if (j.rc[i] == ZARR_OK) {
            nodes[i]->dirty = nodes[i]->unwritten = nodes[i]->doc_dirty = nodes[i]->reserved_from_attrs =
                false;
            continue;
        }
        if (getenv("H5ZV_DEBUG"))
            fprintf(stderr, "h5zv: flush of '/%s' failed: %s\n", nodes[i]->path, j.msg[i] ? j.msg[i] : "");
        h5zv_err_push(__func__, __LINE__, "can't write metadata of '/%s': %s", nodes[i]->path,
                      j.msg[i] ? j.msg[i] : "out of memory keeping the cause");
        ret = -1;
    }
done:
    if (j.msg)
        for (size_t i = 0; i < n; i++)
            free(j.msg[i]);
    free(j.msg);
    free(j.rc);
    return ret;
}

/* Whether node `n` is written by a flush limited to `top` (NULL: everything) and the unwritten groups
 * above `to`. */
static bool
flush_wants(const h5zv_node *n, const char *top, const char *to)
{
    if (!top)
        return true;
    if (path_under(n->path, top, strlen(top)))
        return true;
    return to && n->unwritten && n->type == ZARR_NODE_GROUP && path_under(to, n->path, strlen(n->path));
}

static int
file_flush(h5zv_file *f, const char *top, const char *to)
{
    h5zv_node **dirty  = NULL;
    size_t      ndirty = 0, cap = 0;
    int         ret = 0;
    if (!f->buckets || f->intent != H5F_ACC_RDWR)
        return 0;
    /* dimension names depend on other nodes: settled before the dirty nodes are written (dims.c); a
     * limited flush leaves them to the next whole one (a node that lacks them is named then) */
    if (!top && h5zv_dims_update(f) < 0)
        ret = -1;
    for (size_t b = 0; b < f->nbuckets; b++)
        for (h5zv_node *n = f->buckets[b]; n; n = n->next) {
            if (n->deleted || !flush_wants(n, top, to))
                continue;
            /* chunks held in the engine's write-back cache first (on this thread: the engine runs its
             * own jobs), then the metadata */
            if (n->a && zarr_array_flush(n->a) != ZARR_OK) {
                h5zv_err_push(__func__, __LINE__, "can't write cached chunks of '/%s': %s", n->path,
                              zarr_errmsg());
                ret = -1;
            }
            if (!n->dirty)
                continue;
            if (ndirty == cap) {
                size_t      ncap = cap ? 2 * cap : 64;
                h5zv_node **nv   = realloc(dirty, ncap * sizeof *nv);
                if (!nv) { /* this one now, on its own */
                    if (h5zv_node_write(f, n) < 0)
                        ret = -1;
                    continue;
                }
                dirty = nv;
                cap   = ncap;
            }
            dirty[ndirty++] = n;
        }
    /* The documents, all at once. On a durable store each write ends with a sync pass (the core's
     * zarr_*_write_attrs), so the workers' passes overlap; the store's pass below (zarr_store_flush)
     * runs after all of them and retries what any of them could not sync. */
    if (ndirty && flush_nodes(f, dirty, ndirty) < 0)
        ret = -1;
    free(dirty);
    if (zarr_store_flush(f->store) != ZARR_OK) {
        h5zv_err_push(__func__, __LINE__, "can't flush store '%s': %s", f->name, zarr_errmsg());
        ret = -1;
    }
    return ret;
}

int
h5zv_file_flush(h5zv_file *f)
{
    return file_flush(f, NULL, NULL);
}

int
h5zv_file_flush_under(h5zv_file *f, const char *path, const char *to)
{
    /* an MPI file's flush is collective: every rank flushes the same, whole */
    return file_flush(f, f->mpi ? NULL : path, to);
}

void
h5zv_file_incref(h5zv_file *f)
{
    f->rc++;
}

void
h5zv_file_decref(h5zv_file *f)
{
    h5zv_errs *es;
    if (!f || --f->rc > 0)
        return;
    /* the HDF5 calls below would clear what a failed open or close pushed (its reason) */
    es = h5zv_err_save();
    h5zv_type_uses_end(f);
    h5zv_file_flush(f);
    h5zv_file_unregister(f);
    if (f->anon_seq && f->intent == H5F_ACC_RDWR)
        zarr_node_delete(f->store, H5ZV_ANON_DIR); /* anonymous objects never linked: gone, as in HDF5 */
    if (f->buckets) {
        for (size_t b = 0; b < f->nbuckets; b++) {
            h5zv_node *n = f->buckets[b];
            while (n) {
                h5zv_node *next = n->next;
                node_free(n);
                n = next;
            }
        }
        while (f->graveyard) {
            h5zv_node *next = f->graveyard->next;
            node_free(f->graveyard);
            f->graveyard = next;
        }
        free(f->buckets);
        free(f->tok_buckets);
        f->last_found = NULL;
    }
    h5zv_moves_free(f->moves);
    zarr_consolidated_close(f->cview);
    if (f->fapl_id >= 0 && H5Iis_valid(f->fapl_id))
        H5Pclose(f->fapl_id);
    if (f->fcpl_id >= 0 && H5Iis_valid(f->fcpl_id))
        H5Pclose(f->fcpl_id);
    zarr_store_close(f->store);
    h5zv_mpi_free(f->mpi);
    free(f->name);
    free(f->shown);
    free(f);
    h5zv_err_restore(es);
}

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
        drop_probes(f, H5ZV_ANON_DIR);
        /* made behind the cache: the root's known children must include it */
        node_insert(f, H5ZV_ANON_DIR, ZARR_NODE_GROUP, f->format, NULL, NULL);
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
        snprintf(out, sizeof out, "%s", base);
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
    snprintf(rest, sizeof rest, "%s", name);
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
        snprintf(next, sizeof next, "%s%s%s", cur, *cur ? "/" : "", comp);
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

/* ---- links ----------------------------------------------------------------------------------------- */
void
h5zv_links_free(h5zv_link *l, size_t n)
{
    if (!l)
        return;
    for (size_t i = 0; i < n; i++) {
        free(l[i].name);
        free(l[i].target);
        free(l[i].file);
    }
    free(l);
}

/* Deep copy of n links into *out (malloc'ed). */
static int
links_dup(const h5zv_link *src, size_t n, h5zv_link **out)
{
    h5zv_link *l = calloc(n + 1, sizeof *l);
    *out         = NULL;
    if (!l)
        return -1;
    for (size_t i = 0; i < n; i++) {
        l[i]        = src[i];
        l[i].name   = src[i].name ? strdup(src[i].name) : NULL;
        l[i].target = src[i].target ? strdup(src[i].target) : NULL;
        l[i].file   = src[i].file ? strdup(src[i].file) : NULL;
        if ((src[i].name && !l[i].name) || (src[i].target && !l[i].target) || (src[i].file && !l[i].file)) {
            h5zv_links_free(l, i + 1);
            return -1;
        }
    }
    *out = l;
    return 0;
}

/* Stable merge sort by name (names are unique in a group, but records made by other tools could
 * repeat one: their order then stays as listed, as the insertion sort this replaces kept it). */
void
h5zv_links_sort_by_name(h5zv_link *l, size_t n)
{
    h5zv_link *tmp;
    if (n < 2)
        return;
    if (!(tmp = malloc(n * sizeof *tmp))) {
        for (size_t i = 1; i < n; i++) /* no memory: the quadratic way */
            for (size_t j = i; j > 0 && strcmp(l[j - 1].name, l[j].name) > 0; j--) {
                h5zv_link t = l[j];
                l[j]        = l[j - 1];
                l[j - 1]    = t;
            }
        return;
    }
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid,
                   k = lo;
            while (a < mid && b < hi)
                tmp[k++] = strcmp(l[b].name, l[a].name) < 0 ? l[b++] : l[a++];
            while (a < mid)
                tmp[k++] = l[a++];
            while (b < hi)
                tmp[k++] = l[b++];
        }
        memcpy(l, tmp, n * sizeof *l);
    }
    free(tmp);
}

typedef struct {
    char **names;
    size_t n, cap;
} name_list;

static int
collect_child(const char *name, bool is_dir, void *ud)
{
    name_list *nl = ud;
    if (!is_dir)
        return 0;
    if (nl->n == nl->cap) {
        size_t cap = nl->cap ? nl->cap * 2 : 16;
        char **p   = realloc(nl->names, cap * sizeof *p);
        if (!p)
            return ZARR_ENOMEM;
        nl->names = p;
        nl->cap   = cap;
    }
    if (!(nl->names[nl->n] = strdup(name)))
        return ZARR_ENOMEM;
    nl->n++;
    return 0;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* True if `lk` is a link record of _h5zarr.links the listing can take: an object with a string "soft" or
 * "hard", an "external" list of two strings, or a "ud" list of a link class and a string (a store is
 * untrusted input). */
static bool
link_record_ok(struct json_object *lk)
{
    struct json_object *v;
    if (!json_object_is_type(lk, json_type_object))
        return false;
    if (json_object_object_get_ex(lk, "soft", &v) || json_object_object_get_ex(lk, "hard", &v))
        return json_object_is_type(v, json_type_string);
    if (json_object_object_get_ex(lk, "external", &v))
        return json_object_is_type(v, json_type_array) && json_object_array_length(v) == 2 &&
               json_object_is_type(json_object_array_get_idx(v, 0), json_type_string) &&
               json_object_is_type(json_object_array_get_idx(v, 1), json_type_string);
    if (json_object_object_get_ex(lk, "ud", &v)) /* [link class (an integer), value (base64)] */
        return json_object_is_type(v, json_type_array) && json_object_array_length(v) == 2 &&
               json_object_is_type(json_object_array_get_idx(v, 0), json_type_int) &&
               json_object_is_type(json_object_array_get_idx(v, 1), json_type_string);
    return false;
}

int
h5zv_links_list(h5zv_file *f, const char *path, h5zv_link **out, size_t *nout)
{
    h5zv_node          *g = h5zv_node_get(f, path);
    struct json_object *m, *order = NULL, *links = NULL, *cmap = NULL, *nx, *cv;
    int64_t             next = -1;
    name_list           kids = {0};
    h5zv_link          *l    = NULL;
    bool               *used = NULL;
    size_t              n    = 0, cap;
    int                 ret  = -1;

    *out  = NULL;
    *nout = 0;
    if (!g)
        return -1;
    if (g->type != ZARR_NODE_GROUP)
        H5ZV_GOTO_ERROR("'/%s' is not a group", path);
    if (g->links_ok) {
        if (links_dup(g->links, g->nlinks, out) < 0)
            H5ZV_GOTO_ERROR("out of memory");
        *nout = g->nlinks;
        return 0;
    }
    {
        /* zarr_group_children, with the probe of each child directory remembered (h5zv_node_probe):
         * the visits and by-name lookups that follow the listing find the answer cached */
        zarr_consolidated *v   = file_view(f);
        int                lrc = v ? zarr_consolidated_children(v, path, collect_child, &kids)
                                   : zarr_store_list(f->store, path, collect_child, &kids);
        size_t             k   = 0;
        if (lrc != ZARR_OK && lrc != ZARR_ENOTFOUND)
            H5ZV_GOTO_ERROR("can't list group '/%s': %s", path, zarr_errmsg());
        for (size_t i = 0; i < kids.n; i++) {
            zarr_node_type t;
            char          *child = malloc(strlen(path) + strlen(kids.names[i]) + 2);
            if (child) {
                sprintf(child, "%s%s%s", path, *path ? "/" : "", kids.names[i]);
                lrc = node_probe(f, child, &t, false); /* from the view when listed from it */
                free(child);
            }
            if (!child || lrc < 0) {
                /* names [k, i) were freed or moved: keep only the live ones for the cleanup */
                for (size_t j = i; j < kids.n; j++)
                    kids.names[k++] = kids.names[j];
                kids.n = k;
                if (!child)
                    H5ZV_GOTO_ERROR("out of memory");
                H5ZV_GOTO_ERROR("can't list group '/%s': %s", path, zarr_errmsg());
            }
            if (t == ZARR_NODE_NONE)
                free(kids.names[i]); /* a directory that is no node (chunks, leftovers) */
            else
                kids.names[k++] = kids.names[i];
        }
        kids.n = k;
    }
    if (g->pend_kids) {
        /* children made here whose documents are not written yet (deferred creates, h5zv_node_defer):
         * the store lists them only if a chunk of theirs is written; the cache knows them all. Written
         * or deleted ones leave the chain. */
        size_t plen = strlen(path), nstore = kids.n;
        if (nstore > 1)
            qsort(kids.names, nstore, sizeof *kids.names, cmp_str);
        for (h5zv_node **pp = &g->pend_kids; *pp;) {
            h5zv_node  *c    = *pp;
            const char *leaf = c->path + plen + (plen ? 1 : 0);
            if (!c->unwritten || c->deleted) {
                *pp          = c->pend_next;
                c->pend_next = NULL;
                continue;
            }
            pp = &c->pend_next;
            if (nstore && bsearch(&leaf, kids.names, nstore, sizeof *kids.names, cmp_str))
                continue;
            if (collect_child(leaf, true, &kids) != 0)
                H5ZV_GOTO_ERROR("out of memory");
        }
    }
    if (!*path)
        for (size_t i = 0; i < kids.n; i++)
            if (!strcmp(kids.names[i], H5ZV_ANON_DIR)) {
                free(kids.names[i]);
                kids.names[i] = kids.names[--kids.n];
                break;
            }
    if (kids.n > 1)
        qsort(kids.names, kids.n, sizeof *kids.names, cmp_str);
    if ((m = h5zv_node_meta(g, false))) {
        json_object_object_get_ex(m, "order", &order);
        json_object_object_get_ex(m, "links", &links);
        json_object_object_get_ex(m, "corder", &cmap);
        if (json_object_object_get_ex(m, "next_corder", &nx))
            next = json_object_get_int64(nx);
    }
    cap = kids.n + (links ? (size_t)json_object_object_length(links) : 0) + 1;
    if (!(l = calloc(cap, sizeof *l)))
        H5ZV_GOTO_ERROR("out of memory");

    /* Recorded order first (hard children that exist, soft/external links), then unrecorded children. */
    if (!(used = calloc(kids.n + 1, sizeof *used)))
        H5ZV_GOTO_ERROR("out of memory");
    if (order && json_object_is_type(order, json_type_array)) {
        size_t len = json_object_array_length(order);
        for (size_t i = 0; i < len && n < cap; i++) {
            const char         *nm = json_object_get_string(json_object_array_get_idx(order, i));
            struct json_object *lk = NULL, *v;
            char              **hit;
            if (!nm)
                continue;
            if (links && json_object_object_get_ex(links, nm, &lk)) {
                if (!link_record_ok(lk))
                    H5ZV_GOTO_ERROR(
                        "group '/%s': the record of link '%s' in _h5zarr.links is malformed (want "
                        "{\"soft\": PATH}, {\"hard\": PATH}, {\"external\": [FILE, PATH]} or "
                        "{\"ud\": [CLASS, VALUE]})",
                        path, nm);
                l[n].name = strdup(nm);
                l[n].corder =
                    cmap && json_object_object_get_ex(cmap, nm, &cv) ? json_object_get_int64(cv) : (int64_t)i;
                if (json_object_object_get_ex(lk, "soft", &v)) {
                    l[n].kind   = H5ZV_LINK_SOFT;
                    l[n].target = strdup(json_object_get_string(v));
                }
                else if (json_object_object_get_ex(lk, "hard", &v)) {
                    l[n].kind   = H5ZV_LINK_ALIAS;
                    l[n].target = strdup(json_object_get_string(v));
                }
                else if (json_object_object_get_ex(lk, "external", &v)) {
                    l[n].kind   = H5ZV_LINK_EXTERNAL;
                    l[n].file   = strdup(json_object_get_string(json_object_array_get_idx(v, 0)));
                    l[n].target = strdup(json_object_get_string(json_object_array_get_idx(v, 1)));
                }
                else if (json_object_object_get_ex(lk, "ud", &v)) {
                    l[n].kind   = H5ZV_LINK_UD;
                    l[n].file   = strdup(json_object_get_string(json_object_array_get_idx(v, 0)));
                    l[n].target = strdup(json_object_get_string(json_object_array_get_idx(v, 1)));
                }
                n++;
                continue;
            }
            hit = kids.n ? bsearch(&nm, kids.names, kids.n, sizeof *kids.names, cmp_str) : NULL;
            if (hit && !used[hit - kids.names]) {
                used[hit - kids.names] = true;
                l[n].name              = strdup(nm);
                l[n].kind              = H5ZV_LINK_HARD;
                l[n].corder =
                    cmap && json_object_object_get_ex(cmap, nm, &cv) ? json_object_get_int64(cv) : (int64_t)i;
                n++;
            }
        }
    }
    if (next < 0)
        next = order ? (int64_t)json_object_array_length(order) : 0;
    for (size_t i = 0; i < kids.n && n < cap; i++)
        if (!used[i]) {
            l[n].name   = strdup(kids.names[i]);
            l[n].kind   = H5ZV_LINK_HARD;
            l[n].corder = next++;
            n++;
        }
    if (links_dup(l, n, &g->links) == 0) { /* kept until the group or its children change */
        g->nlinks   = n;
        g->links_ok = true;
    }
    *out  = l;
    *nout = n;
    l     = NULL;
    ret   = 0;
done:
    free(used);
    h5zv_links_free(l, n);
    for (size_t i = 0; i < kids.n; i++)
        free(kids.names[i]);
    free(kids.names);
    return ret;
}

int
h5zv_link_record(h5zv_file *f, const char *parent, const char *name, h5zv_link_kind kind, const char *target,
                 const char *file)
{
    return h5zv_link_record_at(f, parent, name, kind, target, file, -1);
}

/* Creation order: "order" lists names sorted by their value in "corder"; "next_corder" only grows
 * (deleting links never lowers a group's maximum creation order, as in HDF5). */
int
h5zv_link_record_at(h5zv_file *f, const char *parent, const char *name, h5zv_link_kind kind,
                    const char *target, const char *file, int64_t corder)
{
    h5zv_node          *g = h5zv_node_get(f, parent);
    struct json_object *m, *order, *links, *cmap, *nx;
    int64_t             next;

    if (!g)
        return -1;
    if (g->type != ZARR_NODE_GROUP) {
        h5zv_err_push(__func__, __LINE__, "'/%s' is not a group", parent);
        return -1;
    }
    m = h5zv_node_meta(g, true);
    if (!json_object_object_get_ex(m, "order", &order)) {
        order = json_object_new_array();
        json_object_object_add(m, "order", order);
    }
    if (!json_object_object_get_ex(m, "corder", &cmap)) {
        /* first record with explicit values: number what the list already holds */
        cmap = json_object_new_object();
        for (size_t i = 0; i < json_object_array_length(order); i++)
            json_object_object_add(cmap, json_object_get_string(json_object_array_get_idx(order, i)),
                                   json_object_new_int64((int64_t)i));
        json_object_object_add(m, "corder", cmap);
    }
    next = json_object_object_get_ex(m, "next_corder", &nx) ? json_object_get_int64(nx)
                                                            : (int64_t)json_object_array_length(order);
    if (corder < 0)
        corder = next;
    json_object_object_add(m, "next_corder", json_object_new_int64(corder + 1 > next ? corder + 1 : next));
    json_object_object_add(cmap, name, json_object_new_int64(corder));
    {
        /* insert keeping the list sorted by creation order; a new link (the largest value yet) goes
         * last without a scan, so making n links costs O(n), not O(n^2) */
        size_t              len = json_object_array_length(order), pos = len;
        struct json_object *lc;
        bool                last = len &&
                    json_object_object_get_ex(
                        cmap, json_object_get_string(json_object_array_get_idx(order, len - 1)), &lc) &&
                    json_object_get_int64(lc) <= corder;
        for (size_t i = 0; i < len && !last; i++) {
            struct json_object *c;
            if (json_object_object_get_ex(cmap, json_object_get_string(json_object_array_get_idx(order, i)),
                                          &c) &&
                json_object_get_int64(c) > corder) {
                pos = i;
                break;
            }
        }
        if (pos == len)
            json_object_array_add(order, json_object_new_string(name));
        else { /* json-c 0.16 has no insert: rebuild the list */
            struct json_object *no = json_object_new_array();
            for (size_t i = 0; i < len; i++) {
                if (i == pos)
                    json_object_array_add(no, json_object_new_string(name));
                json_object_array_add(no, json_object_get(json_object_array_get_idx(order, i)));
            }
            json_object_object_add(m, "order", no);
        }
    }
    if (kind != H5ZV_LINK_HARD) {
        struct json_object *l = json_object_new_object();
        if (!json_object_object_get_ex(m, "links", &links)) {
            links = json_object_new_object();
            json_object_object_add(m, "links", links);
        }
        if (kind == H5ZV_LINK_SOFT)
            json_object_object_add(l, "soft", json_object_new_string(target));
        else if (kind == H5ZV_LINK_ALIAS)
            json_object_object_add(l, "hard", json_object_new_string(target));
        else if (kind == H5ZV_LINK_UD) {
            struct json_object *a = json_object_new_array();
            json_object_array_add(a, json_object_new_int64(strtoll(file, NULL, 10)));
            json_object_array_add(a, json_object_new_string(target));
            json_object_object_add(l, "ud", a);
        }
        else {
            struct json_object *a = json_object_new_array();
            json_object_array_add(a, json_object_new_string(file));
            json_object_array_add(a, json_object_new_string(target));
            json_object_object_add(l, "external", a);
        }
        json_object_object_add(links, name, l);
    }
    h5zv_node_mark_dirty(g);
    return 0;
}

int
h5zv_link_unrecord(h5zv_file *f, const char *parent, const char *name)
{
    h5zv_node          *g = h5zv_node_get(f, parent);
    struct json_object *m, *order = NULL, *links;

    if (!g)
        return -1;
    if (!(m = h5zv_node_meta(g, false)))
        return 0;
    if (json_object_object_get_ex(m, "order", &order)) {
        size_t len = json_object_array_length(order);
        for (size_t i = 0; i < len; i++)
            if (!strcmp(json_object_get_string(json_object_array_get_idx(order, i)), name)) {
                json_object_array_del_idx(order, i, 1);
                break;
            }
    }
    if (json_object_object_get_ex(m, "links", &links))
        json_object_object_del(links, name);
    if (json_object_object_get_ex(m, "corder", &links))
        json_object_object_del(links, name);
    if (order && json_object_array_length(order) == 0)
        json_object_object_del(m, "next_corder"); /* an emptied group starts again at 0, as in HDF5 */
    h5zv_node_mark_dirty(g);
    return 0;
}

/* ---- tokens ---------------------------------------------------------------------------------------- */
int
h5zv_token_moved(h5zv_file *f, const char *from, const char *to)
{
    size_t nf = strlen(from), nt = strlen(to);
    if (h5zv_moves_add(f, from, to) < 0)
        return -1;
    /* The cached nodes' tokens are taken again where this move changes them: h5zv_token_of walks the
     * moves newest first, and a path under neither end of this one walks past it to the same result as
     * before. Only the nodes under `to` (the moved objects) and `from` are re-linked. A deleted node
     * (h5zv_node_forget) leaves the index for good: no reference finds it, and h5zv_node_token computes
     * its token when asked, so a run of renames does not re-link every node it left behind. */
    for (size_t b = 0; f->tok_buckets && f->buckets && b < f->nbuckets; b++)
        for (h5zv_node *n = f->buckets[b]; n; n = n->next) {
            if (!path_under(n->path, from, nf) && !path_under(n->path, to, nt))
                continue;
            tok_unlink(f, n);
            n->tok_ok = false;
            if (!n->deleted)
                tok_link(f, n);
        }
    return 0;
}

/* ---- tokens back to paths -------------------------------------------------------------------------- */
static char *
walk_for_token(h5zv_file *f, const char *path, const H5O_token_t *tok, int depth)
{
    H5O_token_t t;
    h5zv_link  *l   = NULL;
    size_t      n   = 0;
    char       *res = NULL;

    h5zv_token_of(f, path, &t);
    if (memcmp(&t, tok, sizeof t) == 0)
        return strdup(path);
    if (depth > 64)
        return NULL;
    H5E_BEGIN_TRY
    {
        /* groups only: a probe (remembered) tells, without loading every array met on the way */
        zarr_node_type type = ZARR_NODE_NONE;
        if (h5zv_node_probe(f, path, &type) == 0 && type == ZARR_NODE_GROUP &&
            h5zv_links_list(f, path, &l, &n) == 0) {
            for (size_t i = 0; i < n && !res; i++) {
                char child[4096];
                if (l[i].kind != H5ZV_LINK_HARD)
                    continue;
                snprintf(child, sizeof child, "%s%s%s", path, *path ? "/" : "", l[i].name);
                res = walk_for_token(f, child, tok, depth + 1);
            }
        }
    }
    H5E_END_TRY
    h5zv_links_free(l, n);
    return res;
}

h5zv_node *
h5zv_node_of_token(h5zv_file *f, const H5O_token_t *tok)
{
    if (f->tok_buckets)
        for (h5zv_node *n = f->tok_buckets[tok_bucket_of(f, tok)]; n; n = n->tok_next)
            if (!n->deleted && n->type != ZARR_NODE_NONE && memcmp(&n->tok, tok, sizeof n->tok) == 0)
                return f->last_found = n;
    return NULL;
}

char *
h5zv_token_to_path(h5zv_file *f, const H5O_token_t *tok)
{
    /* Cached nodes first (the token index): the common case, references to objects already visited. */
    h5zv_node *n = h5zv_node_of_token(f, tok);
    if (n)
        return strdup(n->path);
    return walk_for_token(f, "", tok, 0);
}

void
h5zv_node_token(h5zv_file *f, h5zv_node *n, H5O_token_t *tok)
{
    if (n->tok_ok) /* kept equal to h5zv_token_of(f, n->path): set by tok_link, taken again at each move */
        *tok = n->tok;
    else
        h5zv_token_of(f, n->path, tok);
}
