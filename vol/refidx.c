/*
 * refidx.c: the reference index of an open file, so that a move rewrites the references to the moved
 * object in the nodes that may hold one, not in every node of the file.
 *
 * References are stored as paths (docs/FORMAT.md "Object references"): after an H5Lmove of a hard link, the
 * attributes and the datasets' data holding a path at or below the old name are rewritten to the new one
 * (h5zv_attrs_move_refs, h5zv_dataset_move_refs). The first move of an open walks every node of the
 * hierarchy (hard links from the root) as moves always did, and files each node that may hold a reference
 * under the paths it may hold (h5zv_attrs_ref_targets: a superset of what the rewrite matches); a dataset
 * whose data may hold references (h5zv_dataset_holds_refs) and a node with an element that doesn't decode
 * are visited by every move. The later moves of the open visit only the nodes filed under the old name or
 * below it (and those), run the same rewrite there, and file them under the new name instead (what the
 * rewrite did to their references); nodes filed below the moved one are filed at their new paths. A false
 * entry costs a visit; a missing one would leave a reference behind, so:
 *
 *  - what may add or change references in a node the cache holds marks it (h5zv_refidx_touch: an
 *    attribute created, written, deleted or renamed; a dataset made or written): the next move visits it
 *    and files it again;
 *  - what may change nodes behind the index drops it (h5zv_refidx_drop: H5Ocopy, a node renamed or deleted
 *    by anything but an indexed move, a node made behind the cache, a SWMR refresh, a failed move): the next
 *    move walks the file again and builds a new one;
 *  - files other writers may change keep none (MPI-IO, SWMR, a store out of the table of open stores, which
 *    a second open in this process does not share): every move walks, as before.
 *
 * Cost: the first move of an open is the walk (every node) plus a scan of the packed attribute elements'
 * bytes; each later move scans the index (every filed path once) and visits its holders. The index lives
 * in the h5zv_file and goes with it.
 */
#include "h5zv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* A node that may hold references: its path, and the paths it may hold (`tg`: each NUL-terminated, one
 * after the other, `tglen` bytes). */
typedef struct ri_entry {
    char            *path;
    uint64_t         hash; /* XXH3 of path: its bucket */
    char            *tg;
    size_t           tglen, tgcap;
    bool             any; /* visited by every move: a dataset of references, an element that doesn't decode */
    bool             stale; /* touched since filed: the next move visits it and files it again */
    struct ri_entry *next;  /* bucket chain */
} ri_entry;

struct h5zv_refidx {
    ri_entry **b;
    size_t     nb, n;
    bool       oom; /* an entry could not be filed: the index is not kept */
};

/* The deepest level the walk descends to (below it a hierarchy has a cycle it can't have, or is ignored). */
#define RI_MAX_DEPTH 64

static void
entry_free(ri_entry *e)
{
    if (e) {
        free(e->path);
        free(e->tg);
        free(e);
    }
}

void
h5zv_refidx_drop(h5zv_file *f)
{
    h5zv_refidx *x = f ? f->refidx : NULL;
    if (!x)
        return;
    for (size_t i = 0; i < x->nb; i++)
        while (x->b[i]) {
            ri_entry *e = x->b[i];
            x->b[i]     = e->next;
            entry_free(e);
        }
    free(x->b);
    free(x);
    f->refidx = NULL;
}

static ri_entry *
ri_find(const h5zv_refidx *x, const char *path)
{
    uint64_t h = XXH3_64bits(path, strlen(path));
    for (ri_entry *e = x->nb ? x->b[h % x->nb] : NULL; e; e = e->next)
        if (e->hash == h && !strcmp(e->path, path))
            return e;
    return NULL;
}

/* Puts `e` (its hash set) in its bucket, growing the table first when full; -1 when out of memory. */
static int
ri_insert(h5zv_refidx *x, ri_entry *e)
{
    if (x->n + 1 > x->nb) {
        size_t     nb = x->nb ? 2 * x->nb : 64;
        ri_entry **b  = calloc(nb, sizeof *b);
        if (!b)
            return -1;
        for (size_t i = 0; i < x->nb; i++)
            while (x->b[i]) {
                ri_entry *m     = x->b[i];
                x->b[i]         = m->next;
                m->next         = b[m->hash % nb];
                b[m->hash % nb] = m;
            }
        free(x->b);
        x->b  = b;
        x->nb = nb;
    }
    e->next               = x->b[e->hash % x->nb];
    x->b[e->hash % x->nb] = e;
    x->n++;
    return 0;
}

static void
ri_unlink(h5zv_refidx *x, ri_entry *e)
{
    for (ri_entry **p = &x->b[e->hash % x->nb]; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            x->n--;
            return;
        }
}

/* The entry of `path`, made (empty) when there is none; NULL when out of memory. */
static ri_entry *
ri_get(h5zv_refidx *x, const char *path)
{
    ri_entry *e = ri_find(x, path);
    if (e)
        return e;
    if (!(e = calloc(1, sizeof *e)) || !(e->path = strdup(path))) {
        free(e);
        return NULL;
    }
    e->hash = XXH3_64bits(path, strlen(path));
    if (ri_insert(x, e) < 0) {
        entry_free(e);
        return NULL;
    }
    return e;
}

static void
add_target(const char *s, size_t len, void *ud)
{
    ri_entry *e = ud;
    if (!s) {
        e->any = true;
        return;
    }
    if (e->any)
        return; /* visited by every move: its paths are not needed */
    if (e->tglen + len + 1 > e->tgcap) {
        size_t cap = e->tgcap ? e->tgcap : 64;
        char  *t;
        while (cap < e->tglen + len + 1)
            cap *= 2;
        if (!(t = realloc(e->tg, cap))) {
            e->any = true; /* out of memory: the node is visited by every move instead */
            return;
        }
        e->tg    = t;
        e->tgcap = cap;
    }
    memcpy(e->tg + e->tglen, s, len);
    e->tg[e->tglen + len] = '\0';
    e->tglen += len + 1;
}

/* Files node `n` (as it is now) in `x`: under the paths its attributes may hold, or as visited by every
 * move; a node that can hold none leaves the index. */
static void
ri_file_node(h5zv_refidx *x, h5zv_node *n)
{
    ri_entry *e   = ri_find(x, n->path);
    ri_entry  tmp = {0};
    tmp.any       = h5zv_dataset_holds_refs(n);
    h5zv_attrs_ref_targets(n, add_target, &tmp);
    if (!tmp.any && !tmp.tglen) { /* it can hold none: the common case, nothing made */
        if (e) {
            ri_unlink(x, e);
            entry_free(e);
        }
        free(tmp.tg);
        return;
    }
    if (!e && !(e = ri_get(x, n->path))) {
        x->oom = true;
        free(tmp.tg);
        return;
    }
    free(e->tg);
    e->tg    = tmp.tg;
    e->tglen = tmp.tglen;
    e->tgcap = tmp.tgcap;
    e->any   = tmp.any;
    e->stale = false;
}

/* Whether entry `e` holds a path at or below `from` (fl its length). */
static bool
ri_mentions(const ri_entry *e, const char *from, size_t fl)
{
    for (size_t i = 0; i < e->tglen; i += strlen(e->tg + i) + 1)
        if (h5zv_path_under(e->tg + i, from, fl))
            return true;
    return false;
}

/* After the move of `from` (fl its length) to `to` rewrote the references of visited entry `e`: its paths at
 * or below `from` are at or below `to` (a reference the rewrite left, one that doesn't match its type, names
 * no object: nothing a later move changes either). Out of memory: `e` is visited by every move. */
static void
ri_rename_targets(ri_entry *e, const char *from, size_t fl, const char *to)
{
    size_t tl = strlen(to), n = 0, k = 0;
    bool   any = false;
    char  *tg;
    for (size_t i = 0; i < e->tglen; i += strlen(e->tg + i) + 1) {
        bool under = h5zv_path_under(e->tg + i, from, fl);
        n += under ? tl + strlen(e->tg + i + fl) + 1 : strlen(e->tg + i) + 1;
        any |= under;
    }
    if (!any)
        return;
    if (!(tg = malloc(n))) {
        e->any = true;
        return;
    }
    for (size_t i = 0; i < e->tglen; i += strlen(e->tg + i) + 1) {
        const char *t = e->tg + i;
        if (h5zv_path_under(t, from, fl)) {
            memcpy(tg + k, to, tl);
            k += tl;
            t += fl;
        }
        memcpy(tg + k, t, strlen(t) + 1);
        k += strlen(t) + 1;
    }
    free(e->tg);
    e->tg    = tg;
    e->tglen = e->tgcap = n;
}

/* The rewrite of one node: its attributes' references and its data's. */
static int
move_in(h5zv_node *n, const char *from, const char *to)
{
    return h5zv_attrs_move_refs(n, from, to) < 0 || h5zv_dataset_move_refs(n, from, to) < 0 ? -1 : 0;
}

/* The walk: every node at `path` and below it (hard links), each rewritten and, when `x`, filed.
 * *visits counts the nodes; *cut is set when a level was too deep to descend into. */
static int
walk(h5zv_file *f, const char *path, const char *from, const char *to, int depth, h5zv_refidx *x,
     size_t *visits, bool *cut)
{
    h5zv_node *n;
    h5zv_link *l  = NULL;
    size_t     nl = 0;
    int        rc = 0;
    if (depth > RI_MAX_DEPTH) {
        *cut = true;
        return 0;
    }
    if (!(n = h5zv_node_get(f, path)) || move_in(n, from, to) < 0)
        return -1;
    ++*visits;
    if (x)
        ri_file_node(x, n);
    if (n->type != ZARR_NODE_GROUP)
        return 0;
    if (h5zv_links_list(f, path, &l, &nl) < 0)
        return -1;
    for (size_t i = 0; i < nl && rc == 0; i++) {
        char *c;
        if (l[i].kind != H5ZV_LINK_HARD)
            continue;
        if (!(c = h5zv_path_child(path, l[i].name))) {
            rc = -1;
            break;
        }
        rc = walk(f, c, from, to, depth + 1, x, visits, cut);
        free(c);
    }
    h5zv_links_free(l, nl);
    return rc;
}

/* A move through the index: the entries at or below `from` are filed at their new paths, then every
 * entry that mentions `from` or below, is stale or is visited by every move is rewritten and filed again
 * (an entry whose node is gone leaves). 0; -1 with an error pushed (the index is then dropped by the
 * caller); -2 when out of memory before anything was rewritten (the caller walks instead). */
static int
indexed_move(h5zv_file *f, h5zv_refidx *x, const char *from, const char *to, size_t *visits)
{
    size_t     fl = strlen(from), nv = 0, cap = 0;
    ri_entry **visit = NULL, *moved = NULL;
    int        ret = -2;

    for (size_t b = 0; b < x->nb; b++) {
        ri_entry **p = &x->b[b];
        while (*p) {
            ri_entry *e = *p;
            if (e->stale || e->any || ri_mentions(e, from, fl)) {
                if (nv == cap) {
                    size_t     c = cap ? 2 * cap : 16;
                    ri_entry **v = realloc(visit, c * sizeof *v);
                    if (!v)
                        goto done; /* nothing changed yet but the list of moved entries, put back below */
                    visit = v;
                    cap   = c;
                }
                visit[nv++] = e;
            }
            if (h5zv_path_under(e->path, from, fl)) {
                *p      = e->next; /* refiled below, at its new path */
                e->next = moved;
                moved   = e;
                x->n--;
            }
            else
                p = &e->next;
        }
    }
    ret = 0;
done:
    /* the moved entries at their new paths (when out of memory: at their old ones, the index is dropped) */
    while (moved) {
        ri_entry *e = moved;
        moved       = e->next;
        if (ret == 0) {
            char *np = h5zv_path_moved(e->path, fl, to);
            if (np) {
                free(e->path);
                e->path = np;
                e->hash = XXH3_64bits(np, strlen(np));
            }
            else
                ret = -2;
        }
        if (ri_insert(x, e) < 0) {
            entry_free(e); /* no memory to put it back: the index is dropped (-2) */
            ret = -2;
        }
    }
    if (ret < 0) {
        free(visit);
        return ret;
    }
    for (size_t i = 0; i < nv; i++) {
        ri_entry      *e = visit[i];
        zarr_node_type t = ZARR_NODE_NONE;
        h5zv_node     *n;
        /* a holder that is gone has nothing to rewrite */
        if (h5zv_node_probe(f, e->path, &t) < 0 || t == ZARR_NODE_NONE) {
            ri_unlink(x, e);
            entry_free(e);
            continue;
        }
        if (!(n = h5zv_node_get(f, e->path)) || move_in(n, from, to) < 0) {
            ret = -1;
            break;
        }
        ++*visits;
        if (e->stale)
            ri_file_node(x, n); /* changed since filed: filed again (may free e) */
        else
            ri_rename_targets(e, from, fl, to); /* what the rewrite did, without scanning the bytes again */
    }
    free(visit);
    return ret;
}

/* Whether `f` keeps an index: only this cache writes to its store while it is open. */
static bool
can_index(const h5zv_file *f)
{
    return f->intent == H5F_ACC_RDWR && !f->mpi && !f->swmr && f->real;
}

int
h5zv_refidx_move(h5zv_file *f, const char *from, const char *to)
{
    size_t       visits = 0;
    bool         cut    = false;
    const char  *how    = "walk";
    h5zv_refidx *x      = NULL;
    int          rc     = -2;

    if (!can_index(f))
        h5zv_refidx_drop(f);
    else if (f->refidx) {
        how = "index";
        if ((rc = indexed_move(f, f->refidx, from, to, &visits)) < 0 || (f->refidx && f->refidx->oom))
            h5zv_refidx_drop(f);
    }
    if (rc == -2) {
        how = "walk";
        if (can_index(f) && !(x = calloc(1, sizeof *x))) {
            h5zv_err_push(__func__, __LINE__, "out of memory");
            return -1;
        }
        rc        = walk(f, "", from, to, 0, x, &visits, &cut);
        f->refidx = x;
        if (x && (rc < 0 || cut || x->oom)) /* an index of part of the file would miss holders */
            h5zv_refidx_drop(f);
    }
    if (getenv("H5ZV_DEBUG"))
        fprintf(stderr, "h5zv: references moved from '/%s' to '/%s': %zu nodes visited (%s)\n", from, to,
                visits, how);
    return rc;
}

void
h5zv_refidx_touch(h5zv_file *f, const char *path)
{
    ri_entry *e;
    if (!f || !f->refidx || !path)
        return;
    if (!(e = ri_get(f->refidx, path))) {
        h5zv_refidx_drop(f); /* out of memory: the next move walks */
        return;
    }
    e->stale = true;
}
