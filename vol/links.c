/*
 * links.c: the link table of groups: what a group lists (its child nodes in the store, or in the
 * consolidated view of a read-only open, and the children made but not written yet) merged with the link
 * records of its reserved object, in creation order; and recording or removing one link there. The table
 * lives in the group's reserved object, a top-level key of its own metadata document (v2 .zgroup, v3
 * zarr.json; the core's `reserved`, docs/FORMAT.md), which zarr readers do not show:
 *     "_h5zarr": {"order": ["b", "a"], "links": {"s": {"soft": "/a/x"}, "e": {"external": ["f.h5", "/d"]}}}
 * The listing is kept on the group's node (vol/node.c drops it whenever the group changes); recording or
 * removing one link (a move does both) edits a kept listing that follows the recorded order, rather than
 * dropping it.
 */
#include "h5zv.h"
#include "h5zarr/zarr_consolidated.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- listing ----------------------------------------------------------------------------------------- */
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

int
h5zv_links_find(h5zv_file *f, const char *path, const char *name, h5zv_link *out)
{
    h5zv_node *g = h5zv_node_get(f, path);
    h5zv_link *l = NULL, *hit = NULL;
    size_t     n = 0;
    int        ret;

    if (!g)
        return -1;
    if (g->type != ZARR_NODE_GROUP || !g->links_ok) { /* lists it (and keeps the listing) */
        if (h5zv_links_list(f, path, &l, &n) < 0)
            return -1;
    }
    if (g->links_ok) {
        h5zv_links_free(l, n);
        l = NULL;
        n = g->nlinks;
    }
    for (size_t i = 0; i < n && !hit; i++)
        if (!strcmp((l ? l : g->links)[i].name, name))
            hit = &(l ? l : g->links)[i];
    ret = hit ? 1 : 0;
    if (hit && out) {
        h5zv_link *c = NULL;
        if (links_dup(hit, 1, &c) < 0) {
            h5zv_links_free(l, l ? n : 0);
            h5zv_err_push(__func__, __LINE__, "out of memory");
            return -1;
        }
        *out = c[0];
        free(c);
    }
    h5zv_links_free(l, l ? n : 0);
    return ret;
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

typedef zarr_name_list name_list;
#define collect_child zarr_name_list_collect_dir

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A listing being built: the group's child nodes and its link records (borrowed from its reserved
 * object), and the links so far. */
typedef struct {
    const char         *path;
    name_list           kids;  /* names of the child nodes, sorted once gathered (owned) */
    bool               *used;  /* [kids.n]: listed by the recorded order already */
    struct json_object *order; /* _h5zarr.order, .links, .corder (borrowed; NULL when absent) */
    struct json_object *links;
    struct json_object *cmap;
    int64_t             next; /* _h5zarr.next_corder, or -1 */
    h5zv_link          *l;    /* [cap], n of them filled (owned) */
    size_t              n, cap;
} link_listing;

/* zarr_group_children of group `path` into `kids`, with the probe of each child directory remembered
 * (h5zv_node_probe_listed: from the view when listed from it): the visits and by-name lookups that
 * follow the listing find the answer cached. Directories that are no nodes (chunks, leftovers) are
 * dropped. A group made through the node cache lists the cache's children instead (no request: the
 * cache knows every one). 0, or -1 with an error pushed; `kids` holds only live names either way (the
 * caller's). */
static int
kids_listed(h5zv_file *f, const char *path, name_list *kids)
{
    zarr_consolidated *v   = h5zv_file_view(f);
    int                lrc = v ? 1 : h5zv_node_known_children(f, path, collect_child, kids);
    size_t             k   = 0;
    int                ret = -1;

    if (lrc == 0)
        return 0;
    if (lrc != 1) {
        for (size_t i = 0; i < kids->n; i++)
            free(kids->names[i]);
        kids->n = 0;
        H5ZV_GOTO_ERROR("out of memory listing group '/%s'", path);
    }
    lrc = v ? zarr_consolidated_children(v, path, collect_child, kids)
            : h5zv_node_take_listing(f, path, collect_child, kids); /* listed ahead with its siblings */
    if (lrc == 1)
        lrc = zarr_store_list(f->store, path, collect_child, kids);
    if (lrc != ZARR_OK && lrc != ZARR_ENOTFOUND)
        H5ZV_GOTO_ERROR("can't list group '/%s': %s", path, zarr_errmsg());
    if (h5zv_node_prefetch_kids(f, path, (const char *const *)kids->names, kids->n) < 0)
        H5ZV_GOTO_ERROR("out of memory listing group '/%s'", path);
    if (!v) /* the child groups' listings, in parallel, for the visit that follows */
        h5zv_node_list_ahead(f, path, (const char *const *)kids->names, kids->n);
    for (size_t i = 0; i < kids->n; i++) {
        zarr_node_type t;
        char          *child = h5zv_path_child(path, kids->names[i]);
        if (child) {
            lrc = h5zv_node_probe_listed(f, child, &t);
            free(child);
        }
        if (!child || lrc < 0) {
            /* names [k, i) were freed or moved: keep only the live ones for the cleanup */
            for (size_t j = i; j < kids->n; j++)
                kids->names[k++] = kids->names[j];
            kids->n = k;
            if (!child)
                H5ZV_GOTO_ERROR("out of memory");
            H5ZV_GOTO_ERROR("can't list group '/%s': %s", path, zarr_errmsg());
        }
        if (t == ZARR_NODE_NONE)
            free(kids->names[i]); /* a directory that is no node (chunks, leftovers) */
        else
            kids->names[k++] = kids->names[i];
    }
    kids->n = k;
    ret     = 0;
done:
    return ret;
}

/* Adds to `kids` (the store's names, sorted here) the children made in group `g` at `path` whose
 * documents are not written yet (deferred creates, h5zv_node_defer): the store lists them only if a
 * chunk of theirs is written; the cache knows them all. Written or deleted ones leave the chain.
 * 0, or -1 with an error pushed. */
static int
kids_pending(h5zv_node *g, const char *path, name_list *kids)
{
    size_t plen = strlen(path), nstore = kids->n;
    int    ret = -1;

    if (nstore > 1)
        qsort(kids->names, nstore, sizeof *kids->names, cmp_str);
    for (h5zv_node **pp = &g->pend_kids; *pp;) {
        h5zv_node  *c    = *pp;
        const char *leaf = c->path + plen + (plen ? 1 : 0);
        if (!c->unwritten || c->deleted) {
            *pp          = c->pend_next;
            c->pend_next = NULL;
            continue;
        }
        pp = &c->pend_next;
        if (nstore && bsearch(&leaf, kids->names, nstore, sizeof *kids->names, cmp_str))
            continue;
        if (collect_child(leaf, true, kids) != 0)
            H5ZV_GOTO_ERROR("out of memory");
    }
    ret = 0;
done:
    return ret;
}

/* The child nodes of group `g` (the store's or the view's, then those not written yet), without the
 * anonymous area at the root, sorted. 0, or -1 with an error pushed. */
static int
listing_kids(h5zv_file *f, h5zv_node *g, link_listing *b)
{
    if (kids_listed(f, b->path, &b->kids) < 0)
        return -1;
    if (g->pend_kids && kids_pending(g, b->path, &b->kids) < 0)
        return -1;
    if (!*b->path)
        for (size_t i = 0; i < b->kids.n; i++)
            if (!strcmp(b->kids.names[i], H5ZV_ANON_DIR)) {
                free(b->kids.names[i]);
                b->kids.names[i] = b->kids.names[--b->kids.n];
                break;
            }
    if (b->kids.n > 1)
        qsort(b->kids.names, b->kids.n, sizeof *b->kids.names, cmp_str);
    return 0;
}

/* Fills b->l[b->n] (zeroed) from the record `lk` of link `nm` in _h5zarr.links: a soft link, a further
 * hard link (alias), an external or a user-defined link. -1 with an error pushed when it is malformed. */
static int
listing_record(link_listing *b, const char *nm, struct json_object *lk, int64_t corder)
{
    h5zv_link          *l = &b->l[b->n];
    struct json_object *v;

    if (!h5zv_link_record_ok(lk)) {
        h5zv_err_push(__func__, __LINE__,
                      "group '/%s': the record of link '%s' in _h5zarr.links is malformed (want "
                      "{\"soft\": PATH}, {\"hard\": PATH}, {\"external\": [FILE, PATH]} or "
                      "{\"ud\": [CLASS, VALUE]})",
                      b->path, nm);
        return -1;
    }
    l->name   = strdup(nm);
    l->corder = corder;
    if (json_object_object_get_ex(lk, "soft", &v)) {
        l->kind   = H5ZV_LINK_SOFT;
        l->target = strdup(json_object_get_string(v));
    }
    else if (json_object_object_get_ex(lk, "hard", &v)) {
        l->kind   = H5ZV_LINK_ALIAS;
        l->target = strdup(json_object_get_string(v));
    }
    else if (json_object_object_get_ex(lk, "external", &v)) {
        l->kind   = H5ZV_LINK_EXTERNAL;
        l->file   = strdup(json_object_get_string(json_object_array_get_idx(v, 0)));
        l->target = strdup(json_object_get_string(json_object_array_get_idx(v, 1)));
    }
    else if (json_object_object_get_ex(lk, "ud", &v)) {
        l->kind   = H5ZV_LINK_UD;
        l->file   = strdup(json_object_get_string(json_object_array_get_idx(v, 0)));
        l->target = strdup(json_object_get_string(json_object_array_get_idx(v, 1)));
    }
    b->n++;
    return 0;
}

/* The links in the recorded order first (hard children that exist, soft/alias/external/user-defined
 * links), then the children no record names, numbered on from next_corder. -1 with an error pushed. */
static int
listing_order(link_listing *b)
{
    struct json_object *cv;

    if (b->order && json_object_is_type(b->order, json_type_array)) {
        size_t len = json_object_array_length(b->order);
        for (size_t i = 0; i < len && b->n < b->cap; i++) {
            const char         *nm = json_object_get_string(json_object_array_get_idx(b->order, i));
            struct json_object *lk = NULL;
            int64_t             corder;
            char              **hit;
            if (!nm)
                continue;
            corder = b->cmap && json_object_object_get_ex(b->cmap, nm, &cv) ? json_object_get_int64(cv)
                                                                            : (int64_t)i;
            if (b->links && json_object_object_get_ex(b->links, nm, &lk)) {
                if (listing_record(b, nm, lk, corder) < 0)
                    return -1;
                continue;
            }
            hit = b->kids.n ? bsearch(&nm, b->kids.names, b->kids.n, sizeof *b->kids.names, cmp_str) : NULL;
            if (hit && !b->used[hit - b->kids.names]) {
                b->used[hit - b->kids.names] = true;
                b->l[b->n].name              = strdup(nm);
                b->l[b->n].kind              = H5ZV_LINK_HARD;
                b->l[b->n].corder            = corder;
                b->n++;
            }
        }
    }
    if (b->next < 0)
        b->next = b->order ? (int64_t)json_object_array_length(b->order) : 0;
    for (size_t i = 0; i < b->kids.n && b->n < b->cap; i++)
        if (!b->used[i]) {
            b->l[b->n].name   = strdup(b->kids.names[i]);
            b->l[b->n].kind   = H5ZV_LINK_HARD;
            b->l[b->n].corder = b->next++;
            b->n++;
        }
    return 0;
}

int
h5zv_links_list(h5zv_file *f, const char *path, h5zv_link **out, size_t *nout)
{
    h5zv_node          *g = h5zv_node_get(f, path);
    struct json_object *m, *nx;
    link_listing        b   = {.path = path, .next = -1};
    int                 ret = -1;

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
    if (listing_kids(f, g, &b) < 0)
        goto done;
    if ((m = h5zv_node_meta(g, false))) {
        json_object_object_get_ex(m, "order", &b.order);
        json_object_object_get_ex(m, "links", &b.links);
        json_object_object_get_ex(m, "corder", &b.cmap);
        if (json_object_object_get_ex(m, "next_corder", &nx))
            b.next = json_object_get_int64(nx);
    }
    b.cap = b.kids.n + (b.links ? (size_t)json_object_object_length(b.links) : 0) + 1;
    if (!(b.l = calloc(b.cap, sizeof *b.l)) || !(b.used = calloc(b.kids.n + 1, sizeof *b.used)))
        H5ZV_GOTO_ERROR("out of memory");
    if (listing_order(&b) < 0)
        goto done;
    if (links_dup(b.l, b.n, &g->links) == 0) { /* kept until the group or its children change */
        g->nlinks   = b.n;
        g->links_ok = true;
    }
    *out  = b.l;
    *nout = b.n;
    b.l   = NULL;
    ret   = 0;
done:
    free(b.used);
    h5zv_links_free(b.l, b.n);
    for (size_t i = 0; i < b.kids.n; i++)
        free(b.kids.names[i]);
    free(b.kids.names);
    return ret;
}

/* ---- the kept listing edited in place ------------------------------------------------------------------
 * A link recorded or unrecorded in a group whose listing is kept (a move takes the link out of one group's
 * listing and puts it in another's, netCDF renames each variable with two moves) edits that listing rather
 * than dropping it, when the listing is the group's "order" entry for entry: every link recorded, none a
 * child no record names, each creation order value from "corder". Then the listing h5zv_links_list would
 * make again is the recorded order as it is after the edit, which the edited listing is checked to follow;
 * otherwise it is dropped and made again when asked, as before. */

/* Whether `l` (n links) follows `order` entry for entry, with the creation order values of `cmap` (NULL: not
 * compared), and holds link `name` (NULL: any) `want` times. */
static bool
listing_follows(const h5zv_link *l, size_t n, struct json_object *order, struct json_object *cmap,
                const char *name, size_t want)
{
    size_t seen = 0;
    if (!order || !json_object_is_type(order, json_type_array) || json_object_array_length(order) != n ||
        (cmap && !json_object_is_type(cmap, json_type_object)))
        return false;
    for (size_t i = 0; i < n; i++) {
        const char         *nm = json_object_get_string(json_object_array_get_idx(order, i));
        struct json_object *c;
        if (!nm || strcmp(nm, l[i].name) != 0)
            return false;
        if (cmap && (!json_object_object_get_ex(cmap, nm, &c) || json_object_get_int64(c) != l[i].corder))
            return false;
        seen += name && !strcmp(nm, name);
    }
    return !name || seen == want;
}

/* The kept listing of group `g` (whose reserved object is `m`) when it follows the recorded order, taken
 * from it (the caller's now: *n links), else NULL. It is checked in full once (names and creation order
 * values); after that the edits below keep it so, each checking the names again. */
static h5zv_link *
listing_take(h5zv_node *g, struct json_object *m, size_t *n)
{
    struct json_object *order = NULL, *cmap = NULL;
    h5zv_link          *l;
    *n = 0;
    if (!g->links_ok || !m || !json_object_object_get_ex(m, "order", &order) ||
        !json_object_object_get_ex(m, "corder", &cmap) ||
        (!g->links_follow && !listing_follows(g->links, g->nlinks, order, cmap, NULL, 0)))
        return NULL;
    l               = g->links;
    *n              = g->nlinks;
    g->links        = NULL;
    g->nlinks       = 0;
    g->links_ok     = false;
    g->links_follow = false;
    return l;
}

/* Gives listing `l` (n links, taken; each creation order value set from "corder" as it is now) back to group
 * `g` when it follows the recorded order of `m` as it is now and holds link `name` `want` times (a record:
 * once, a removed link: no more); else frees it. */
static void
listing_give(h5zv_node *g, struct json_object *m, h5zv_link *l, size_t n, const char *name, size_t want)
{
    struct json_object *order = NULL;
    if (!l)
        return;
    if (!json_object_object_get_ex(m, "order", &order) || !listing_follows(l, n, order, NULL, name, want)) {
        h5zv_links_free(l, n);
        return;
    }
    h5zv_links_free(g->links, g->nlinks); /* none: taken by listing_take, and mark_dirty drops */
    g->links        = l;
    g->nlinks       = n;
    g->links_ok     = true;
    g->links_follow = true;
}

/* Listing `l` (*n links, taken) with link `name` of `kind` and creation order `corder` at index `at`, as
 * h5zv_links_list lists it: a record of `g`'s "links" as listing_record reads it, a hard link only when its
 * node is there. NULL (`l` freed) when it can't be made so. */
static h5zv_link *
listing_insert(h5zv_file *f, const char *parent, h5zv_node *g, h5zv_link *l, size_t *n, size_t at,
               const char *name, h5zv_link_kind kind, int64_t corder)
{
    struct json_object *m = h5zv_node_meta(g, false), *links = NULL, *rec = NULL;
    h5zv_link           e = {0}, *nl;
    link_listing        b = {.path = parent, .l = &e, .cap = 1};
    bool                has_rec =
        m && json_object_object_get_ex(m, "links", &links) && json_object_object_get_ex(links, name, &rec);

    if (at > *n || has_rec != (kind != H5ZV_LINK_HARD))
        goto drop;
    if (kind == H5ZV_LINK_HARD) {
        zarr_node_type t     = ZARR_NODE_NONE;
        char          *child = h5zv_path_child(parent, name);
        int            rc    = child ? h5zv_node_probe(f, child, &t) : -1;
        free(child);
        if (rc < 0 || t == ZARR_NODE_NONE || !(e.name = strdup(name))) {
            zarr_error_clear();
            goto drop;
        }
        e.kind   = H5ZV_LINK_HARD;
        e.corder = corder;
    }
    else if (listing_record(&b, name, rec, corder) < 0 || !e.name || !e.target ||
             ((e.kind == H5ZV_LINK_EXTERNAL || e.kind == H5ZV_LINK_UD) && !e.file))
        goto drop; /* out of memory (the record is the one just made: well formed) */
    if (!(nl = realloc(l, (*n + 1) * sizeof *nl)))
        goto drop;
    memmove(nl + at + 1, nl + at, (*n - at) * sizeof *nl);
    nl[at] = e;
    ++*n;
    return nl;
drop:
    h5zv_link_clear(&e);
    h5zv_links_free(l, *n);
    *n = 0;
    return NULL;
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
    h5zv_link          *kept  = NULL;
    size_t              nkept = 0, at = 0;

    if (!g)
        return -1;
    if (g->type != ZARR_NODE_GROUP) {
        h5zv_err_push(__func__, __LINE__, "'/%s' is not a group", parent);
        return -1;
    }
    m    = h5zv_node_meta(g, true);
    kept = listing_take(g, m, &nkept);
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
        at = pos;
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
    if (kept) /* the new link in the kept listing, where the recorded order has it */
        kept = listing_insert(f, parent, g, kept, &nkept, at, name, kind, corder);
    listing_give(g, m, kept, nkept, name, 1);
    return 0;
}

int
h5zv_link_unrecord(h5zv_file *f, const char *parent, const char *name)
{
    h5zv_node          *g = h5zv_node_get(f, parent);
    struct json_object *m, *order = NULL, *links;
    h5zv_link          *kept;
    size_t              nkept;

    if (!g)
        return -1;
    if (!(m = h5zv_node_meta(g, false)))
        return 0;
    kept = listing_take(g, m, &nkept);
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
    for (size_t i = 0; kept && i < nkept; i++) /* the link out of the kept listing */
        if (!strcmp(kept[i].name, name)) {
            h5zv_link_clear(&kept[i]);
            memmove(kept + i, kept + i + 1, (nkept - i - 1) * sizeof *kept);
            nkept--;
            break;
        }
    listing_give(g, m, kept, nkept, name, 0);
    return 0;
}
