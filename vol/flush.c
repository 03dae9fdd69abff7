/*
 * flush.c: writing a file's dirty nodes (H5Fflush, and file close through h5zv_file_decref): the chunks
 * each array holds in the engine's write-back cache, then the dirty nodes' documents as one pool job
 * (vol/node.c writes one node: h5zv_node_docs_write), then the store's own flush. Dimension names are
 * settled first (vol/dims.c), since they depend on other nodes. A flush before a move or an unlink
 * (h5zv_file_flush_under) writes only what the store must hold before its keys move. On an object store
 * with a write-behind queue (h5zv_file.behind, zarr_store_behind.h) the documents are held and go out
 * together as one batch, and the store's flush waits for every queued write (the chunks of earlier
 * H5Dwrite calls too): its first failure is reported naming the key, the object it belongs to and the
 * store's answer.
 */
#include "h5zv.h"
#include "config.h"
#include "h5zarr/zarr_store_behind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- flush: the dirty nodes' documents as one pool job -------------------------------------------- */
/* Fewer dirty nodes than this are written on the caller (waking the workers costs more than a few
 * documents: one is ~20-60 us of JSON and two or three syscalls). */
#define FLUSH_POOL_MIN 8
/* Failed documents named one by one on the error stack; the rest are counted. */
#define FLUSH_ERRS_SHOWN 5

/* One dirty node of a flush, and whether its task writes the chunks its array holds in the engine's cache
 * before its documents (a node not written yet: its chunks, held there by zarr_array_hold_writes, go out
 * on the pool with its documents instead of one after another on the caller). */
typedef struct {
    h5zv_node *n;
    bool       chunks;
    bool       drop;  /* its cache holds only held writes: dropped once they are stored, as if never kept */
    unsigned   depth; /* of its path: 0 the root, 1 a child of the root, ... */
    size_t     seq;   /* its place in the list as gathered */
} flush_item;

/* One flush's documents: task i writes items[i] with the HDF5-free core calls only (no HDF5 call
 * here: it may run on a pool worker), and records its status and the core's message of a failure
 * (per thread: copied while still on the worker). Each task touches its own node's trees and array alone
 * (no JSON object is shared between two nodes' trees: every one the connector adds is new or moved
 * within one node) and the store, whose operations are thread-safe. */
typedef struct {
    h5zv_file  *f;
    flush_item *items;
    size_t      n;
    size_t      off; /* task i writes items[off + i] (the job of one depth: flush_nodes) */
    int        *rc;  /* [2n]: ZARR_OK or the failure of the documents [i] and of the chunks [n + i] */
    char      **msg; /* [2n]: the core's message of a failure (owned), else NULL */
} flush_job;

static int
flush_task(void *job, size_t t, int worker)
{
    flush_job *j = job;
    size_t     i = j->off + t;
    h5zv_node *n = j->items[i].n;
    (void)worker;
    /* the chunks first, as file_flush writes the others' (a failure there still writes the documents);
     * a few bytes of cache (file_flush checked): the core's write-back runs inline on this thread */
    if (j->items[i].chunks && (j->rc[j->n + i] = zarr_array_flush(n->a)) != ZARR_OK)
        j->msg[j->n + i] = strdup(zarr_errmsg());
    else if (j->items[i].drop)
        zarr_array_discard_cache(n->a);
    j->rc[i] = h5zv_node_docs_write(j->f->store, n);
    if (j->rc[i] != ZARR_OK)
        j->msg[i] = strdup(zarr_errmsg()); /* NULL (out of memory): reported without the cause */
    /* every node is tried: a failed task would stop the pool from handing out the others */
    return ZARR_OK;
}

/* Writes the chunks of node `n` that its array holds in the engine's cache, on the caller; 0, or -1 with
 * the error pushed. */
static int
flush_chunks(h5zv_node *n)
{
    if (!n->a || zarr_array_flush(n->a) == ZARR_OK)
        return 0;
    h5zv_err_push(__func__, __LINE__, "can't write cached chunks of '/%s': %s", n->path, zarr_errmsg());
    return -1;
}

/* Pushes the failures job `j` recorded (the first few named, the rest counted); each node whose
 * documents were written is clean. 0, or -1 with errors pushed. */
static int
flush_report(flush_job *j)
{
    size_t nfailed = 0;
    for (size_t k = 0; k < 2 * j->n; k++) {
        h5zv_node *n    = j->items[k % j->n].n;
        bool       docs = k < j->n;
        if (j->rc[k] == ZARR_OK) {
            if (docs)
                n->dirty = n->unwritten = n->doc_dirty = n->reserved_from_attrs = false;
            continue;
        }
        if (getenv("H5ZV_DEBUG"))
            fprintf(stderr, "h5zv: flush of '/%s' failed: %s\n", n->path, j->msg[k] ? j->msg[k] : "");
        if (++nfailed <= FLUSH_ERRS_SHOWN) /* a dead store fails them all: the first few say why */
            h5zv_err_push(__func__, __LINE__, "can't write %s of '/%s': %s",
                          docs ? "metadata" : "cached chunks", n->path,
                          j->msg[k] ? j->msg[k] : "out of memory keeping the cause");
    }
    if (nfailed > FLUSH_ERRS_SHOWN)
        h5zv_err_push(__func__, __LINE__, "can't write metadata or chunks of %zu more objects of '%s'",
                      nfailed - FLUSH_ERRS_SHOWN, j->f->name);
    return nfailed ? -1 : 0;
}

/* Shallower paths first, else in the order gathered. */
static int
item_cmp(const void *a, const void *b)
{
    const flush_item *x = a, *y = b;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Writes the `n` dirty nodes `items` of `f` (the pool of f's settings, inline when few): each item's
 * cached chunks when it says so, then its documents; each node written is clean, each failure is pushed
 * naming its node and the node stays dirty. One pool job per depth, shallowest first: a node's folder is
 * made (by its own task) before the jobs of the nodes below it start, so no two threads race to make one
 * folder (the loser's mkdir would fail: EEXIST; tests/scripts/create_syscalls.sh). 0, or -1 with errors
 * pushed. */
static int
flush_nodes(h5zv_file *f, flush_item *items, size_t n, const zarr_engine_opts *o)
{
    flush_job j = {f, items, n, 0, NULL, NULL};
    int       ret;

    j.rc  = malloc(2 * n * sizeof *j.rc);
    j.msg = calloc(2 * n, sizeof *j.msg);
    if (!j.rc || !j.msg) { /* one after another then: h5zv_node_write reports each failure */
        ret = 0;
        for (size_t i = 0; i < n; i++)
            if ((items[i].chunks && flush_chunks(items[i].n) < 0) | (h5zv_node_write(f, items[i].n) < 0))
                ret = -1;
        goto done;
    }
    for (size_t k = 0; k < 2 * n; k++)
        j.rc[k] = ZARR_OK;
    qsort(items, n, sizeof *items, item_cmp);
    for (size_t hi; j.off < n; j.off = hi) {
        for (hi = j.off + 1; hi < n && items[hi].depth == items[j.off].depth;)
            hi++;
        (void)zarr_pool_run(o->pool ? o->pool : zarr_pool_default(), flush_task, &j, hi - j.off,
                            hi - j.off < FLUSH_POOL_MIN);
    }
    ret = flush_report(&j);
done:
    if (j.msg)
        for (size_t k = 0; k < 2 * n; k++)
            free(j.msg[k]);
    free(j.msg);
    free(j.rc);
    return ret;
}

/* The depth of node path `path` ("" 0, "a" 1, "a/b" 2, ...). */
static unsigned
path_depth(const char *path)
{
    unsigned d = *path != '\0';
    for (; *path; path++)
        d += *path == '/';
    return d;
}

/* Whether node `n` is written by a flush limited to `top` (NULL: everything; `ntop` its length) and the
 * unwritten groups above `to`. */
static bool
flush_wants(const h5zv_node *n, const char *top, size_t ntop, const char *to)
{
    if (!top)
        return true;
    if (h5zv_path_under(n->path, top, ntop))
        return true;
    return to && n->unwritten && n->type == ZARR_NODE_GROUP && h5zv_path_under(to, n->path, strlen(n->path));
}

/* `root_too` false: the root group's document stays dirty (the caller writes it next). */
static int
file_flush(h5zv_file *f, const char *top, const char *to, bool store_too, bool root_too)
{
    flush_item      *dirty  = NULL;
    size_t           ndirty = 0, cap = 0;
    int              ret  = 0;
    size_t           ntop = top ? strlen(top) : 0;
    zarr_engine_opts o;
    if (!f->buckets || f->intent != H5F_ACC_RDWR)
        return 0;
    /* dimension names depend on other nodes: settled before the dirty nodes are written (dims.c); a
     * limited flush leaves them to the next whole one (a node that lacks them is named then) */
    if (!top && h5zv_dims_update(f) < 0)
        ret = -1;
    h5zv_config_engine_opts(h5zv_file_settings(f), &o);
    for (size_t b = 0; b < f->nbuckets; b++)
        for (h5zv_node *n = f->buckets[b]; n; n = n->next) {
            bool written = n->dirty && (root_too || *n->path), later;
            if (n->deleted || !flush_wants(n, top, ntop, to))
                continue;
            /* chunks held in the engine's write-back cache first (on this thread: the engine runs its
             * own jobs), then the metadata; a node not written yet whose cache is small has both written
             * by its task of the pool job below */
            later = written && n->a && n->unwritten && zarr_array_cached_bytes(n->a) < o.inline_bytes;
            if (!later && flush_chunks(n) < 0)
                ret = -1;
            if (!written)
                continue;
            if (ndirty == cap) {
                size_t      ncap = cap ? 2 * cap : 64;
                flush_item *nv   = realloc(dirty, ncap * sizeof *nv);
                if (!nv) { /* this one now, on its own */
                    if ((later && flush_chunks(n) < 0) | (h5zv_node_write(f, n) < 0))
                        ret = -1;
                    continue;
                }
                dirty = nv;
                cap   = ncap;
            }
            dirty[ndirty] =
                (flush_item){n, later, later && zarr_array_holds_all(n->a) && zarr_array_cached_bytes(n->a),
                             path_depth(n->path), ndirty};
            ndirty++;
        }
    /* The documents, all at once. On a durable store each write ends with a sync pass (the core's
     * zarr_*_write_attrs), so the workers' passes overlap; the store's pass below (zarr_store_flush)
     * runs after all of them and retries what any of them could not sync. Behind a write-behind queue
     * they are held, and leave as one batch at the release. */
    zarr_store_behind_hold(f->behind);
    if (ndirty && flush_nodes(f, dirty, ndirty, &o) < 0)
        ret = -1;
    zarr_store_behind_release(f->behind);
    free(dirty);
    if (store_too && h5zv_file_store_flush(f) < 0)
        ret = -1;
    return ret;
}

/* The cached node that key `key` belongs to (the longest path it lies below), or NULL. */
static const h5zv_node *
owner_of(const h5zv_file *f, const char *key)
{
    const h5zv_node *best = NULL;
    for (size_t b = 0; b < f->nbuckets; b++)
        for (const h5zv_node *n = f->buckets[b]; n; n = n->next)
            if (*n->path && h5zv_path_under(key, n->path, strlen(n->path)) &&
                (!best || strlen(n->path) > strlen(best->path)))
                best = n;
    return best;
}

int
h5zv_file_store_flush(h5zv_file *f)
{
    char             key[512];
    const h5zv_node *n;
    if (zarr_store_flush(f->store) == ZARR_OK)
        return 0;
    if (f->behind && zarr_store_behind_failed(f->behind, key, sizeof key) != ZARR_OK &&
        (n = owner_of(f, key)))
        h5zv_err_push(__func__, __LINE__, "can't store the writes to %s '/%s' of '%s': %s",
                      n->type == ZARR_NODE_ARRAY ? "dataset" : "group", n->path, f->name, zarr_errmsg());
    else
        h5zv_err_push(__func__, __LINE__, "can't flush store '%s': %s", f->name, zarr_errmsg());
    return -1;
}

int
h5zv_file_flush(h5zv_file *f)
{
    return file_flush(f, NULL, NULL, true, true);
}

int
h5zv_file_flush_nodes(h5zv_file *f, bool root_too)
{
    return file_flush(f, NULL, NULL, false, root_too);
}

int
h5zv_file_flush_under(h5zv_file *f, const char *path, const char *to)
{
    /* an MPI file's flush is collective: every rank flushes the same, whole */
    return file_flush(f, f->mpi ? NULL : path, to, true, true);
}
