/*
 * node.c: the per-file node cache. A node is one zarr group or array, loaded once per file and shared by
 * every handle on it; edits (attributes, links) mark it dirty and vol/flush.c writes it at flush/close.
 * Entries hang in two indexes: by path, and by token (tok_link/tok_unlink: a reference finds its node
 * without a scan). Loading checks a node's link records (vol/links.c lists them) and moves a reserved
 * object kept as an attribute by stores written before to its place (written there, and left out of the
 * attributes, at the node's next write); read-only opens of a store with consolidated metadata load
 * nodes from that document (and report its time as theirs: one request however many are asked about).
 * consolidated=1 consolidates at close from the documents of the nodes this cache made
 * (h5zv_node_consolidate). A node's documents are written by h5zv_node_docs_write, which settles the
 * form of an array's document: hidden (ZARR_HIDDEN_DOC, no node to zarr readers) for a netCDF dimension
 * without a coordinate variable, the usual .zarray / zarr.json otherwise. The file's lifetime
 * (h5zv_file_incref/decref) frees the cache, and the tokens of cached nodes follow moves
 * (h5zv_token_moved) and lead back to paths. An H5Lmove carries the cached nodes to their new paths
 * (h5zv_node_moved: not read again from the store).
 *
 * Below the readers of reserved fields: what runs on each loaded node (the earlier form of _h5zarr,
 * vol/reserved_legacy.c) is a hook the connector's init sets (h5zv_node_set_load_hook).
 */
#include "h5zv.h"
#include "config.h"
#include "mpi_vol.h"
#include "h5zarr/zarr_consolidated.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

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

/* Takes `n` out of its hash chain; false when it is in none. */
static bool
chain_unlink(h5zv_file *f, h5zv_node *n)
{
    for (h5zv_node **pp = &f->buckets[n->hash % f->nbuckets]; *pp; pp = &(*pp)->next)
        if (*pp == n) {
            *pp = n->next;
            return true;
        }
    return false;
}

/* Takes node `n` out of every lookup for good: it is marked deleted, leaves its chain and the token
 * index (unless a walk has the chains pinned: then it stays, skipped as deleted) and waits in the
 * file's graveyard until the file closes, since callers may still hold it. Deleted nodes would
 * otherwise pile up in the chains: a program renaming thousands of variables through one temporary
 * name leaves one behind per move, and every walk of the cache would pass them all. */
static void
node_bury(h5zv_file *f, h5zv_node *n)
{
    n->deleted = true;
    f->cache_gen++;
    if (f->buckets_pinned || !chain_unlink(f, n))
        return;
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

void
h5zv_link_clear(h5zv_link *l)
{
    if (!l)
        return;
    free(l->name);
    free(l->target);
    free(l->file);
    l->name = l->target = l->file = NULL;
}

void
h5zv_links_free(h5zv_link *l, size_t n)
{
    if (!l)
        return;
    for (size_t i = 0; i < n; i++)
        h5zv_link_clear(&l[i]);
    free(l);
}

/* Drops the cached link list of group `n`. */
static void
links_drop(h5zv_node *n)
{
    if (!n || !n->links_ok)
        return;
    h5zv_links_free(n->links, n->nlinks);
    n->links        = NULL;
    n->nlinks       = 0;
    n->links_ok     = false;
    n->links_follow = false;
}

/* Drops the listing of group `n` taken ahead (h5zv_node_list_ahead). */
static void
pre_kids_drop(h5zv_node *n)
{
    for (size_t i = 0; i < n->npre_kids; i++)
        free(n->pre_kids[i]);
    free(n->pre_kids);
    n->pre_kids   = NULL;
    n->npre_kids  = 0;
    n->pre_listed = false;
}

static void
node_free(h5zv_node *n)
{
    if (!n)
        return;
    links_drop(n);
    zarr_group_meta_free(n->g);
    zarr_array_close(n->a);
    pre_kids_drop(n);
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
                f->cache_gen++;
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

/* True if `lk` is a link record of _h5zarr.links the listing can take: an object with a string "soft" or
 * "hard", an "external" list of two strings, or a "ud" list of a link class and a string (a store is
 * untrusted input). */
bool
h5zv_link_record_ok(struct json_object *lk)
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
        json_object_object_foreach(v, k, lk) if (!h5zv_link_record_ok(lk))
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

/* What runs on each node loaded from the store (h5zv_node_set_load_hook). */
static h5zv_node_load_fn node_load_hook;

void
h5zv_node_set_load_hook(h5zv_node_load_fn fn)
{
    node_load_hook = fn;
}

static void
node_loaded(h5zv_file *f, h5zv_node *n)
{
    if (node_load_hook)
        node_load_hook(f, n);
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
    f->cache_gen++;
    if ((n = cache_entry(f, path)) && is_probe(n)) {
        if (!probe) {
            n->g                   = g;
            n->a                   = a;
            n->reserved_from_attrs = node_reserved_adopt(g, a);
            f->nprobes--;
        }
        n->type   = type;
        n->format = (signed char)format;
        h5zv_node_shape_changed(n);
        if (!probe)
            node_loaded(f, n);
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
    h5zv_node_shape_changed(n);
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
        node_loaded(f, n);
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
static bool       kids_ahead(h5zv_file *f, const char *path);

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
    (*out)->from_view = true;
    return 1;
}

int
h5zv_node_view_time(h5zv_file *f, const h5zv_node *n, int64_t *t)
{
    if ((!n->from_view && *n->path) || f->cview_state != 1)
        return 0; /* the root of a consolidated open is read with the view (v3: the same document) */
    if (f->cview_time_state == 0) {
        /* the view's format is the root's: v3 reads it from the root zarr.json, v2 from .zmetadata */
        const char *key     = f->format == 3 ? "zarr.json" : ".zmetadata";
        f->cview_time_state = zarr_store_mtime(f->store, key, &f->cview_time) == ZARR_OK ? 1 : -1;
        zarr_error_clear();
    }
    /* a store that keeps no times: 0 (HDF5's untracked) for every node of the view, not a request each */
    *t = f->cview_time_state == 1 ? f->cview_time : 0;
    return 1;
}

/* The loaded group that is the parent of `path` ("" for a top-level name), or NULL. */
static h5zv_node *
parent_node(h5zv_file *f, const char *path)
{
    const char *s = strrchr(path, '/');
    size_t      len;
    char        pbuf[4096];

    if (!*path)
        return NULL;
    len = s ? (size_t)(s - path) : 0;
    if (len >= sizeof pbuf)
        return NULL;
    memcpy(pbuf, path, len);
    pbuf[len] = '\0';
    return cache_find(f, pbuf);
}

/* True if the cache knows every child of the parent of `path` (a group it made: kids_known), so an
 * entry missing for `path` means nothing is there. */
static bool
parent_knows(h5zv_file *f, const char *path)
{
    h5zv_node *p = f->buckets ? parent_node(f, path) : NULL;
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
    if (kids_ahead(f, path)) {
        *type = cache_entry(f, path)->type;
        return 0;
    }
    if (f->format == 3) {
        /* a v3 probe reads and parses zarr.json: keep the node it gives rather than reading it again */
        zarr_group_meta *g = NULL;
        zarr_array      *a = NULL;
        char             field[96];
        int64_t          t;
        if (zarr_node_load_timed(f->store, path, 3, type, &fmt, &g, &a, &t) == ZARR_OK) {
            if (!node_records_bad(g, a, field, sizeof field)) {
                h5zv_node *c = node_put(f, path, *type, fmt, g, a); /* checked just now */
                if (c && *type != ZARR_NODE_NONE)
                    c->doc_time = t; /* H5Oget_info's times without a stat (0: not learnt) */
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

int
h5zv_node_probe_listed(h5zv_file *f, const char *path, zarr_node_type *type)
{
    return node_probe(f, path, type, false);
}

/* The children of a group listed from the consolidated view, loaded from it as one pool job: each task is
 * one child's zarr_consolidated_load (the view is safe for concurrent reads; each task reads its own
 * entry and makes its own node); the caller then puts them in the cache as view_load does. */
typedef struct {
    zarr_consolidated *v;
    zarr_node_item    *items;
    int               *fmt;
} view_job;

static int
view_task(void *job, size_t i, int worker)
{
    view_job       *j  = job;
    zarr_node_item *it = &j->items[i];
    (void)worker;
    it->result = zarr_consolidated_load(j->v, it->path, &it->type, &j->fmt[i], &it->g, &it->a);
    if (it->result != ZARR_OK) { /* left to its probe, which reads it again and says what is wrong */
        zarr_group_meta_free(it->g);
        zarr_array_close(it->a);
        it->g = NULL;
        it->a = NULL;
    }
    zarr_error_clear();
    return ZARR_OK;
}

static void
view_kids(h5zv_file *f, zarr_consolidated *v, zarr_node_item *items, size_t m)
{
    view_job         j = {v, items, calloc(m, sizeof(int))};
    zarr_engine_opts o;

    if (!j.fmt)
        return;
    h5zv_config_engine_opts(h5zv_file_settings(f), &o);
    (void)zarr_pool_run(o.pool ? o.pool : zarr_pool_default(), view_task, &j, m, false); /* never fails */
    for (size_t i = 0; i < m; i++) {
        h5zv_node *n;
        if (items[i].result != ZARR_OK || items[i].type == ZARR_NODE_NONE || cache_entry(f, items[i].path))
            continue;
        H5E_BEGIN_TRY { n = node_insert(f, items[i].path, items[i].type, j.fmt[i], items[i].g, items[i].a); }
        H5E_END_TRY
        items[i].g = NULL; /* node_insert's now, kept or freed */
        items[i].a = NULL;
        if (n)
            n->from_view = true;
    }
    free(j.fmt);
}

/* A node of a batch (h5zv_node_prefetch_kids) put in the cache as node_probe puts what it loads (takes
 * `it`'s group or array); nothing when something is cached at its path already. */
static void
node_put_loaded(h5zv_file *f, zarr_node_item *it)
{
    char       field[96];
    h5zv_node *c;

    if (cache_entry(f, it->path))
        return;
    if (node_records_bad(it->g, it->a, field, sizeof field)) {
        /* malformed link records: a probe only, as node_probe keeps it; opening the node reports them */
        node_insert(f, it->path, it->type, f->format, NULL, NULL);
        return;
    }
    c     = node_put(f, it->path, it->type, f->format, it->g, it->a); /* checked just now */
    it->g = NULL;
    it->a = NULL;
    if (c && it->type != ZARR_NODE_NONE)
        c->doc_time = it->mtime; /* H5Oget_info's times without a request each */
}

/* Fewest children read as one batch: below it each probe reads its own (a pool job costs a wake-up). */
#define PREFETCH_MIN 4

int
h5zv_node_prefetch_kids(h5zv_file *f, const char *path, const char *const *names, size_t n)
{
    zarr_node_item  *items = NULL;
    char           **paths = NULL;
    zarr_engine_opts o;
    size_t           m   = 0;
    int              ret = -1;

    /* the view as the listing found it (kids_listed asked h5zv_file_view): not opened here */
    zarr_consolidated *v = f->cview_state == 1 ? f->cview : NULL;

    if (f->mpi || n < (f->store->prefers_batches ? 2 : PREFETCH_MIN) ||
        (!v && f->format != 3 && (f->format != 2 || f->store->prefers_batches)))
        return 0; /* v2 on a store that prefers batches: each probe as before (its requests are counted) */
    if (!(items = calloc(n, sizeof *items)) || !(paths = calloc(n, sizeof *paths)))
        goto done;
    for (size_t i = 0; i < n; i++) {
        if (!(paths[m] = h5zv_path_child(path, names[i])))
            goto done;
        if (cache_entry(f, paths[m])) { /* known already (read ahead with its parent's siblings) */
            free(paths[m]);
            paths[m] = NULL;
            continue;
        }
        items[m].path = paths[m];
        m++;
    }
    if (m < PREFETCH_MIN && !f->store->prefers_batches) {
        ret = 0;
        goto done;
    }
    if (v) { /* listed from the view: loaded from it */
        view_kids(f, v, items, m);
        ret = 0;
        goto done;
    }
    /* read and parsed on the pool's workers: no HDF5 call there, the nodes handed over after the join */
    h5zv_config_engine_opts(h5zv_file_settings(f), &o);
    if (zarr_node_load_many(f->store, o.pool, f->format, m, items) != ZARR_OK) {
        zarr_error_clear();
        goto done;
    }
    for (size_t i = 0; i < m; i++)
        if (items[i].result == ZARR_OK)
            node_put_loaded(f, &items[i]);
    /* a child that failed is left to its own probe, which reads it again and reports it by its path */
    ret = 0;
done:
    zarr_node_items_free(m, items);
    for (size_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
    free(items);
    return ret;
}

/* The parallel listings of h5zv_node_list_ahead: each worker takes the next group. */
typedef struct {
    zarr_store     *s;
    char          **paths;
    zarr_name_list *out;
    int            *rc;
    size_t          n, next;
} ahead_job;

static void *
ahead_worker(void *arg)
{
    ahead_job *j = arg;
    for (;;) {
        size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n)
            break;
        j->rc[i] = zarr_store_list(j->s, j->paths[i], zarr_name_list_collect_dir, &j->out[i]);
        zarr_error_clear();
    }
    return NULL;
}

#define AHEAD_THREADS 32
/* Groups a visit lists ahead in all, level after level (the first listing of a large tree reads this
 * many groups' listings, a wave of parallel requests a level, whether the visit goes on or not). */
#define AHEAD_GROUPS 1024

/* Lists the groups `j->paths[j->n]` in parallel, keeps each listing in its group and reads the
 * documents of all their children with one get_many; the children that are groups become `next`
 * (paths, malloc'ed; `*nnext` of them). */
static void
level_ahead(h5zv_file *f, ahead_job *j, char ***next, size_t *nnext)
{
    pthread_t  th[AHEAD_THREADS];
    size_t     nth = 0, ngk = 0, k = 0;
    char     **gk = NULL; /* the children's paths */
    h5zv_node *c;

    *next  = NULL;
    *nnext = 0;
    for (; nth < AHEAD_THREADS && nth + 1 < j->n; nth++)
        if (pthread_create(&th[nth], NULL, ahead_worker, j) != 0)
            break;
    ahead_worker(j); /* this thread lists too (all of them when no thread started) */
    for (size_t t = 0; t < nth; t++)
        pthread_join(th[t], NULL);
    for (size_t i = 0; i < j->n; i++)
        ngk += j->rc[i] == ZARR_OK ? j->out[i].n : 0;
    if (!(gk = calloc(ngk ? ngk : 1, sizeof *gk)))
        return;
    for (size_t i = 0; i < j->n; i++) {
        if (j->rc[i] != ZARR_OK || !(c = cache_entry(f, j->paths[i])))
            continue;
        for (size_t q = 0; q < j->out[i].n; q++)
            if ((gk[k] = malloc(strlen(j->paths[i]) + strlen(j->out[i].names[q]) + 2)))
                sprintf(gk[k++], "%s/%s", j->paths[i], j->out[i].names[q]);
        c->pre_kids     = j->out[i].names; /* the group keeps its listing for the visit */
        c->npre_kids    = j->out[i].n;
        c->pre_listed   = true;
        j->out[i].names = NULL;
        j->out[i].n     = 0;
        j->out[i].cap   = 0;
    }
    (void)h5zv_node_prefetch_kids(f, "", (const char *const *)gk, k); /* -1: their probes read them */
    for (size_t i = 0; i < k; i++) {
        c = cache_entry(f, gk[i]);
        if (c && c->type == ZARR_NODE_GROUP && !c->pre_listed && !c->kids_known)
            gk[(*nnext)++] = gk[i];
        else
            free(gk[i]);
    }
    *next = gk;
}

void
h5zv_node_list_ahead(h5zv_file *f, const char *path, const char *const *names, size_t n)
{
    char **level = NULL, **next = NULL;
    size_t nlevel = 0, nnext = 0, budget = AHEAD_GROUPS;

    if (f->intent != H5F_ACC_RDONLY || f->format != 3 || !f->store->prefers_batches || f->mpi || n < 2 ||
        !(level = calloc(n, sizeof *level)))
        goto done;
    for (size_t i = 0; i < n; i++) {
        h5zv_node *c;
        char      *p = h5zv_path_child(path, names[i]);
        if (!p)
            goto done;
        c = cache_entry(f, p);
        if (!c || c->type != ZARR_NODE_GROUP || c->pre_listed || c->kids_known)
            free(p);
        else
            level[nlevel++] = p;
    }
    while (nlevel && nlevel <= budget) {
        ahead_job j = {f->store, level, NULL, NULL, nlevel, 0};
        budget -= nlevel;
        if ((j.out = calloc(nlevel, sizeof *j.out)) && (j.rc = calloc(nlevel, sizeof *j.rc)))
            level_ahead(f, &j, &next, &nnext);
        for (size_t i = 0; j.out && i < nlevel; i++) {
            for (size_t q = 0; q < j.out[i].n; q++)
                free(j.out[i].names[q]);
            free(j.out[i].names);
        }
        free(j.out);
        free(j.rc);
        for (size_t i = 0; i < nlevel; i++)
            free(level[i]);
        free(level);
        level  = next;
        nlevel = nnext;
        next   = NULL;
        nnext  = 0;
    }
done:
    zarr_error_clear();
    for (size_t i = 0; i < nlevel; i++)
        free(level[i]);
    free(level);
}

int
h5zv_node_take_listing(h5zv_file *f, const char *path, zarr_list_cb cb, void *ud)
{
    h5zv_node *g  = cache_entry(f, path);
    int        rc = 0;

    if (!g || !g->pre_listed)
        return 1;
    g->pre_listed = false;
    for (size_t i = 0; i < g->npre_kids; i++) {
        if (!rc)
            rc = cb(g->pre_kids[i], true, ud);
        free(g->pre_kids[i]);
    }
    free(g->pre_kids);
    g->pre_kids  = NULL;
    g->npre_kids = 0;
    return rc;
}

/* The children of a group read ahead in one batch, at the second child looked up in the store one by
 * one (a program opening a group's datasets by name: H5Dopen of each, with no listing before): one
 * listing and one get_many (h5zv_node_prefetch_kids) stand for the rest of the lookups, each a round
 * trip. A single lookup stays one request. Groups of more than KIDS_AHEAD_MAX children are left to
 * their lookups. True when `path` is now in the cache. */
#define KIDS_AHEAD_MAX 10000
static bool
kids_ahead(h5zv_file *f, const char *path)
{
    const char    *s   = strrchr(path, '/');
    size_t         len = s ? (size_t)(s - path) : 0;
    char           pbuf[1024];
    h5zv_node     *g;
    zarr_name_list l = {NULL, 0, 0};

    if (!*path || f->format != 3 || !f->store->prefers_batches || f->mpi || f->cview_state == 1 ||
        len >= sizeof pbuf)
        return false;
    memcpy(pbuf, path, len);
    pbuf[len] = '\0';
    g         = cache_find(f, pbuf);
    if (!g || g->type != ZARR_NODE_GROUP || g->kids_known || g->kids_missed >= 2 || ++g->kids_missed < 2)
        return false;
    g->kids_missed = 2; /* once: a listing that did not help is not made again */
    if (zarr_store_list(f->store, pbuf, zarr_name_list_collect_dir, &l) == ZARR_OK && l.n <= KIDS_AHEAD_MAX)
        (void)h5zv_node_prefetch_kids(f, pbuf, (const char *const *)l.names, l.n); /* -1: lookups as before */
    zarr_error_clear();
    zarr_name_list_clear(&l);
    return cache_entry(f, path) != NULL;
}

zarr_consolidated *
h5zv_file_view(h5zv_file *f)
{
    return file_view(f);
}

void
h5zv_node_made_behind(h5zv_file *f, const char *path, zarr_node_type type)
{
    drop_probes(f, path);
    node_insert(f, path, type, f->format, NULL, NULL);
    h5zv_refidx_drop(f); /* a node the reference index has not seen: the next move walks (vol/refidx.c) */
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

bool
h5zv_node_can_defer_doc(h5zv_file *f)
{
    return f && !f->mpi && f->real && f->intent == H5F_ACC_RDWR && !h5zv_file_settings(f)->durable &&
           !f->swmr;
}

void
h5zv_node_defer(h5zv_file *f, h5zv_node *n)
{
    h5zv_node *p = parent_node(f, n->path);

    n->unwritten = true;
    n->dirty     = true;
    n->born      = (int64_t)time(NULL);
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
    if (n)
        n->made_here = true;
    return n;
}

/* ---- consolidating from memory (h5zv_node_consolidate) ----------------------------------------------
 * The core's zarr_consolidate_from asks for each node's documents and each group's children. A node
 * made through this cache answers with its metadata serialized as the flush wrote it; a group whose
 * children the cache knows (kids_known) lists the cached nodes below it, found in `paths` (every cached
 * group or array, sorted by strcmp: the children of "g" are a run of paths starting "g/"). */
typedef struct {
    h5zv_file   *f;
    const char **paths;
    size_t       n;
    bool         root_pending; /* the root's document is the cache's, not written yet (flush left it) */
} cons_src;

static int
cmp_path(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The node at `path` whose documents the cache holds as the store has them (made by this open, written,
 * unchanged since; or the root when root_pending: as the consolidated write will have it), with
 * *is_group and *format set; NULL when it holds none or it is a hidden array (the core reads its
 * document from the store and puts it where it belongs). */
static h5zv_node *
cons_held(void *ud, const char *path, bool *is_group, int *format)
{
    cons_src  *c = ud;
    h5zv_node *n = cache_find(c->f, path);

    if (!n || n->deleted || (!(c->root_pending && !*path) && (!n->made_here || n->dirty || n->unwritten)))
        return NULL;
    if (n->type == ZARR_NODE_GROUP && n->g) {
        *is_group = true;
        *format   = n->g->zarr_format;
        return n;
    }
    if (n->type == ZARR_NODE_ARRAY && n->a && !zarr_array_meta_get(n->a)->hidden) {
        *is_group = false;
        *format   = zarr_array_meta_get(n->a)->zarr_format;
        return n;
    }
    return NULL;
}

static int
cons_node(void *ud, const char *path, bool *is_group, int *format, char **doc, char **attrs)
{
    h5zv_node *n = cons_held(ud, path, is_group, format);

    if (!n)
        return 1;
    if (*is_group)
        return *format == 3 ? zarr_group_meta_to_v3(n->g, doc) : zarr_group_meta_to_v2(n->g, doc, attrs);
    return *format == 3 ? zarr_array_meta_to_v3(zarr_array_meta_get(n->a), doc)
                        : zarr_array_meta_to_v2(zarr_array_meta_get(n->a), doc, attrs);
}

/* cons_node for v3 consolidation: the node's zarr.json as the object its text is made from. */
static int
cons_node_v3(void *ud, const char *path, bool *is_group, int *format, struct json_object **doc)
{
    h5zv_node *n = cons_held(ud, path, is_group, format);

    if (!n)
        return 1;
    if (*format != 3)
        return ZARR_OK; /* a node of the other format: no document */
    return *is_group ? zarr_group_meta_to_v3_copy(n->g, doc)
                     : zarr_array_meta_to_v3_copy(zarr_array_meta_get(n->a), doc);
}

/* cons_node_v3 as text: the node's zarr.json printed into the consolidated document at `level`. */
static int
cons_node_v3_text(void *ud, const char *path, bool *is_group, int *format, int level, zarr_buf *out)
{
    h5zv_node *n = cons_held(ud, path, is_group, format);

    if (!n)
        return 1;
    if (*format != 3)
        return ZARR_OK; /* a node of the other format: no document */
    /* an array: the text its flush wrote (it is clean, cons_held), not printed again */
    return *is_group ? zarr_group_meta_write_v3(n->g, level, out) : zarr_array_doc_print(n->a, level, out);
}

static int
cons_children(void *ud, const char *path, zarr_list_cb cb, void *cbud)
{
    cons_src  *c   = ud;
    h5zv_node *g   = cache_find(c->f, path);
    size_t     len = strlen(path), lo = 0, hi = c->n;
    char      *pre;
    int        rc;

    if (!g || g->deleted || g->type != ZARR_NODE_GROUP || !g->kids_known)
        return 1;
    if (!(pre = malloc(len + 2)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    memcpy(pre, path, len);
    memcpy(pre + len, len ? "/" : "", len ? 2 : 1);
    while (lo < hi) { /* the first path >= "<path>/": the run of paths below `path` starts there */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(c->paths[mid], pre) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    free(pre);
    for (size_t i = lo; i < c->n; i++) {
        const char *p = c->paths[i], *rest;
        if (len && (strncmp(p, path, len) != 0 || p[len] != '/'))
            break;
        rest = len ? p + len + 1 : p;
        if (!*rest || strchr(rest, '/'))
            continue; /* the group itself (root) or a grandchild */
        if ((rc = cb(rest, true, cbud)) != 0)
            return rc;
    }
    return ZARR_OK;
}

/* The length of the parent part of node path `p` ("" for the root's children). */
static size_t
parent_len(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? (size_t)(s - p) : 0;
}

/* Orders node paths by parent path, then by path. */
static int
cmp_by_parent(const void *a, const void *b)
{
    const char *p = (*(h5zv_node *const *)a)->path, *q = (*(h5zv_node *const *)b)->path;
    size_t      lp = parent_len(p), lq = parent_len(q), m = lp < lq ? lp : lq;
    int         c = memcmp(p, q, m);
    if (c)
        return c;
    if (lp != lq)
        return lp < lq ? -1 : 1;
    return strcmp(p, q);
}

void
h5zv_node_kids_index(h5zv_file *f)
{
    size_t n = 0;
    h5zv_node_kids_index_drop(f);
    if (!f->buckets || !f->nnodes || !(f->kix = malloc(f->nnodes * sizeof *f->kix)))
        return;
    for (size_t k = 0; k < f->nbuckets; k++)
        for (h5zv_node *c = f->buckets[k]; c && n < f->nnodes; c = c->next)
            if (!c->deleted && (c->type == ZARR_NODE_GROUP || c->type == ZARR_NODE_ARRAY) && *c->path)
                f->kix[n++] = c;
    qsort(f->kix, n, sizeof *f->kix, cmp_by_parent);
    f->kix_n   = n;
    f->kix_gen = f->cache_gen;
}

void
h5zv_node_kids_index_drop(h5zv_file *f)
{
    if (!f)
        return;
    free(f->kix);
    f->kix   = NULL;
    f->kix_n = 0;
}

/* h5zv_node_known_children from the index: the run of nodes whose parent is `path`. */
static int
known_children_indexed(h5zv_file *f, const char *path, size_t len, zarr_list_cb cb, void *ud)
{
    size_t lo = 0, hi = f->kix_n;
    int    rc;
    while (lo < hi) { /* the first node whose parent is not before `path` */
        size_t      mid = lo + (hi - lo) / 2;
        const char *p   = f->kix[mid]->path;
        size_t      lp = parent_len(p), m = lp < len ? lp : len;
        int         c = memcmp(p, path, m);
        if (c < 0 || (c == 0 && lp < len))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < f->kix_n; i++) {
        h5zv_node *n = f->kix[i];
        if (parent_len(n->path) != len || memcmp(n->path, path, len) != 0)
            break;
        if (n->deleted)
            continue;
        if ((rc = cb(n->path + len + (len ? 1 : 0), true, ud)) != 0)
            return rc;
    }
    return 0;
}

int
h5zv_node_known_children(h5zv_file *f, const char *path, zarr_list_cb cb, void *ud)
{
    h5zv_node *g   = cache_find(f, path);
    size_t     len = strlen(path);
    int        rc;

    if (!g || g->deleted || g->type != ZARR_NODE_GROUP || !g->kids_known)
        return 1;
    if (f->kix && f->kix_gen == f->cache_gen)
        return known_children_indexed(f, path, len, cb, ud);
    for (size_t k = 0; k < f->nbuckets; k++)
        for (h5zv_node *n = f->buckets[k]; n; n = n->next) {
            const char *rest = n->path + len + (len ? 1 : 0);
            if (n->deleted || (n->type != ZARR_NODE_GROUP && n->type != ZARR_NODE_ARRAY) || !*n->path ||
                strncmp(n->path, path, len) != 0 || (len && n->path[len] != '/') || strchr(rest, '/'))
                continue;
            if ((rc = cb(rest, true, ud)) != 0)
                return rc;
        }
    return 0;
}

int
h5zv_node_consolidate(h5zv_file *f, struct json_object **md, struct json_object **hidden, bool root_pending)
{
    cons_src                c   = {f, NULL, 0, root_pending};
    zarr_consolidate_source src = {cons_node, cons_children, &c, cons_node_v3, cons_node_v3_text};
    int                     rc;

    if (f->buckets && f->nnodes) {
        if (!(c.paths = malloc(f->nnodes * sizeof *c.paths)))
            return zarr_error(ZARR_ENOMEM, "out of memory");
        for (size_t k = 0; k < f->nbuckets; k++)
            for (h5zv_node *n = f->buckets[k]; n; n = n->next)
                if (!n->deleted && (n->type == ZARR_NODE_GROUP || n->type == ZARR_NODE_ARRAY) &&
                    c.n < f->nnodes)
                    c.paths[c.n++] = n->path;
        qsort(c.paths, c.n, sizeof *c.paths, cmp_path);
    }
    rc = zarr_consolidate_from(f->store, "", &src, md, hidden);
    free(c.paths);
    return rc;
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
    int64_t          t      = 0;

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
        if (type == ZARR_NODE_ARRAY &&
            zarr_array_open_format_timed(f->store, path, format, &a, &t) != ZARR_OK) {
            h5zv_err_push(__func__, __LINE__, "can't open array '/%s': %s", path, zarr_errmsg());
            return NULL;
        }
    }
    else if (kids_ahead(f, path))
        return node_get_impl(f, path); /* read ahead with its siblings: from the cache */
    else if (zarr_node_load_timed(f->store, path, f->format, &type, &format, &g, &a, &t) != ZARR_OK) {
        h5zv_err_push(__func__, __LINE__, "can't read node '/%s': %s", path, zarr_errmsg());
        return NULL;
    }
    if (type == ZARR_NODE_NONE) {
        h5zv_err_push(__func__, __LINE__, "object '/%s' doesn't exist", path);
        return NULL;
    }
    if ((n = node_insert(f, path, type, format, g, a))) { /* NULL: error pushed */
        n->doc_time = t; /* the zarr.json's time when the read learnt it, else 0 */
        if (!*path)
            view_from_root(f, n);
    }
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

int
h5zv_node_seed_root_doc(h5zv_file *f, const void *doc, size_t n)
{
    zarr_consolidated *v = NULL;
    zarr_group_meta   *g = NULL;
    zarr_node_type     type;
    int                fmt, rc;

    if (f->cview_state != 0 || f->intent != H5F_ACC_RDONLY)
        return 0; /* as view_from_root: read-only opens only, and none in SWMR reading mode */
    rc = zarr_consolidated_from_doc(f->store, "", doc, n, &v);
    if (rc == ZARR_ENOTFOUND)
        return 0;
    if (rc == ZARR_OK)
        rc = zarr_consolidated_load(v, "", &type, &fmt, &g, NULL);
    if (rc != ZARR_OK) {
        zarr_consolidated_close(v);
        h5zv_err_push(__func__, __LINE__, "can't read the root group of '%s': %s", f->name, zarr_errmsg());
        return -1;
    }
    f->cview       = v;
    f->cview_state = 1;
    f->format      = 3;
    return node_insert(f, "", ZARR_NODE_GROUP, 3, g, NULL) ? 1 : -1; /* NULL: error pushed */
}

/* Node `n`'s place changed behind it (deleted, moved, or no memory to carry it): its cached chunks of the
 * old place are dropped, then its listing, and it leaves the lookups (reloaded when asked). */
static void
node_gone(h5zv_file *f, h5zv_node *n)
{
    if (n->a)
        zarr_array_discard_cache(n->a);
    links_drop(n);
    node_bury(f, n);
}

/* Group `p`, which knew every child, gets the node that arrived at `path` from the store, and knows every
 * child again once it is loaded (else it no longer claims to). */
static void
newcomer_load(h5zv_file *f, h5zv_node *p, const char *path)
{
    p->kids_known = false;
    if (h5zv_node_get(f, path))
        p->kids_known = true;
    else
        zarr_error_clear();
}

void
h5zv_node_forget(h5zv_file *f, const char *path, bool arrived)
{
    size_t     len = strlen(path);
    h5zv_node *p;
    if (!f->buckets)
        return;
    for (size_t b = 0; b < f->nbuckets; b++)
        for (h5zv_node *n = f->buckets[b], *next; n; n = next) {
            next = n->next;
            if (!h5zv_path_under(n->path, path, len))
                continue;
            if (is_probe(n)) { /* presence or absence seen at or below `path` may have changed */
                drop_probes(f, n->path);
                continue;
            }
            node_gone(f, n); /* deleted or moved (moves flush first) */
        }
    if ((p = parent_node(f, path))) {
        links_drop(p); /* its children changed */
        if (arrived && p->kids_known)
            /* a node came in from behind the cache: a parent that knew every child keeps knowing them
             * once the newcomer is loaded (its later creates can still wait for the flush) */
            newcomer_load(f, p, path);
        else if (arrived)
            pre_kids_drop(p);
    }
    if (!*path) /* the root itself: nothing of the cache can be trusted for its children */
        for (size_t b = 0; b < f->nbuckets; b++)
            for (h5zv_node *n = f->buckets[b]; n; n = n->next) {
                links_drop(n);
                n->kids_known = false;
            }
}

int
h5zv_node_moved(h5zv_file *f, const char *from, const char *to)
{
    size_t      fl = strlen(from), tl = strlen(to), nm = 0, cap = 0;
    h5zv_node **moved = NULL, *p;

    if (!f->buckets)
        return h5zv_moves_add(f, from, to);
    if (f->buckets_pinned || !*from || !*to)
        goto forget; /* a walk holds the chains: forgotten, and reloaded when asked */
    /* one pass: what was seen at or below either end goes, the loaded nodes below `from` are gathered */
    for (size_t b = 0; b < f->nbuckets; b++)
        for (h5zv_node *n = f->buckets[b], *next; n; n = next) {
            bool under_from = h5zv_path_under(n->path, from, fl);
            next            = n->next;
            if (!under_from && !h5zv_path_under(n->path, to, tl))
                continue;
            if (is_probe(n)) /* presence or absence seen at or below either end has changed */
                drop_probes(f, n->path);
            else if (!under_from) /* nothing loaded is at `to` before the move: as h5zv_node_forget */
                node_gone(f, n);
            else if (!n->deleted) {
                if (nm == cap) {
                    size_t      c = cap ? 2 * cap : 16;
                    h5zv_node **v = realloc(moved, c * sizeof *v);
                    if (!v)
                        goto forget; /* the nodes gathered so far are still at `from` */
                    moved = v;
                    cap   = c;
                }
                moved[nm++] = n;
            }
        }
    for (size_t i = 0; i < nm; i++) {
        h5zv_node *n  = moved[i];
        char      *np = h5zv_path_moved(n->path, fl, to);
        if (!np || (n->a && zarr_array_set_path(n->a, np) != ZARR_OK)) {
            /* no memory: the node leaves the lookups as h5zv_node_forget leaves it (reloaded when asked) */
            zarr_error_clear();
            free(np);
            node_gone(f, n);
            continue;
        }
        /* out of its chain, back in at its new path; its token stays (and so its place in the token
         * index): the move log gives the new path the token the old one had */
        chain_unlink(f, n);
        free(n->path);
        n->path                           = np;
        n->hash                           = path_hash(np);
        n->next                           = f->buckets[n->hash % f->nbuckets];
        f->buckets[n->hash % f->nbuckets] = n;
        links_drop(n); /* listed again when asked, as a node read at its new place would be */
    }
    free(moved);
    f->cache_gen++;
    /* The parents' listings stay: h5zv_link_unrecord and h5zv_link_record take the link out of one and
     * put it in the other (or drop them). A parent that knew every child still does once the newcomer is
     * in the cache: carried, or loaded here when it was not (as h5zv_node_forget does). */
    if ((p = parent_node(f, to)) && p->kids_known && !cache_find(f, to))
        newcomer_load(f, p, to);
    else if (p && !p->kids_known)
        pre_kids_drop(p);
    return h5zv_moves_add(f, from, to);
forget:
    free(moved);
    h5zv_node_forget(f, from, false);
    h5zv_node_forget(f, to, true);
    return h5zv_token_moved(f, from, to);
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
h5zv_node_shape_changed(h5zv_node *n)
{
    static uint64_t stamps;
    n->shape_stamp = __atomic_add_fetch(&stamps, 1, __ATOMIC_RELAXED);
}

void
h5zv_node_mark_dirty(h5zv_node *n)
{
    n->dirty    = true;
    n->doc_time = 0; /* the time learnt of its document is no more the time of what it holds */
    links_drop(n);   /* every edit of a group's link records marks it dirty */
}

/* Writes node `n`'s documents with the HDF5-free core calls alone (it may run on a pool worker): every
 * document of an unwritten node, or of one whose zarr metadata changed (doc_dirty: the fill value), else
 * the attributes and the reserved object (the connector edits only those; the core's attributes-only
 * write rewrites the .zarray/.zgroup of a v2 node that has a reserved object; the rest of a node's
 * metadata changes through the core, resize, which writes it). */
/* netCDF-C's NAME of a dimension without a coordinate variable (libhdf5 NOT_A_VAR, then the length). */
#define NC_DIM_ONLY_NAME "This is a netCDF dimension but not a netCDF variable."

/* True when array node `n` is a netCDF dimension without a coordinate variable: a dimension scale
 * (hidden CLASS "DIMENSION_SCALE") whose hidden NAME starts with netCDF's NOT_A_VAR text. netCDF never
 * writes its data (its extent is the dimension's length): its document is written hidden
 * (ZARR_HIDDEN_DOC), so zarr readers see the dimension only in the arrays' dimension names. */
static bool
node_dim_only(const h5zv_node *n)
{
    struct json_object *r, *h, *c, *nm;

    if (n->type != ZARR_NODE_ARRAY || !n->a || !*n->path || !(r = zarr_array_meta_get(n->a)->reserved))
        return false;
    if (!json_object_object_get_ex(r, "hidden", &h) || !json_object_is_type(h, json_type_object) ||
        !json_object_object_get_ex(h, "CLASS", &c) || !json_object_is_type(c, json_type_string) ||
        strcmp(json_object_get_string(c), "DIMENSION_SCALE") != 0 ||
        !json_object_object_get_ex(h, "NAME", &nm) || !json_object_is_type(nm, json_type_string))
        return false;
    return strncmp(json_object_get_string(nm), NC_DIM_ONLY_NAME, sizeof NC_DIM_ONLY_NAME - 1) == 0;
}

int
h5zv_node_docs_write(zarr_store *s, const h5zv_node *n)
{
    if (n->type == ZARR_NODE_ARRAY && n->a) /* the form of its document, settled at each write */
        zarr_array_meta_mut(n->a)->hidden = node_dim_only(n);
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
    if (h5zv_node_docs_write(f->store, n) != ZARR_OK) {
        h5zv_err_push(__func__, __LINE__, "can't write metadata of '/%s': %s", n->path, zarr_errmsg());
        return -1;
    }
    n->dirty = n->unwritten = n->doc_dirty = n->reserved_from_attrs = false;
    return 0;
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
        h5zv_node_kids_index_drop(f);
        free(f->buckets);
        free(f->tok_buckets);
        f->last_found = NULL;
    }
    h5zv_moves_free(f->moves);
    h5zv_refidx_drop(f);
    free(f->obj_tab); /* empty: every object held a reference */
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
            if (!h5zv_path_under(n->path, from, nf) && !h5zv_path_under(n->path, to, nt))
                continue;
            tok_unlink(f, n);
            n->tok_ok = false;
            if (!n->deleted)
                tok_link(f, n);
        }
    return 0;
}

/* ---- the token index ------------------------------------------------------------------------------ */
h5zv_node *
h5zv_node_of_token(h5zv_file *f, const H5O_token_t *tok)
{
    if (f->tok_buckets)
        for (h5zv_node *n = f->tok_buckets[tok_bucket_of(f, tok)]; n; n = n->tok_next)
            if (!n->deleted && n->type != ZARR_NODE_NONE && memcmp(&n->tok, tok, sizeof n->tok) == 0)
                return f->last_found = n;
    return NULL;
}

void
h5zv_node_token(h5zv_file *f, h5zv_node *n, H5O_token_t *tok)
{
    if (n->tok_ok) /* kept equal to h5zv_token_of(f, n->path): set by tok_link, taken again at each move */
        *tok = n->tok;
    else
        h5zv_token_of(f, n->path, tok);
}
