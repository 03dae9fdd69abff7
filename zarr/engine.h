/*
 * engine.h: internal declarations shared by the pool, array and engine sources (pool.c, array.c,
 * engine.c). Not part of the public interface; the stores' own internal header is store_impl.h.
 *
 * - zarr__worker: per-worker scratch (codec context and chunk buffers) owned by the pool for its
 *   threads, and by a thread-local slot for the calling thread (worker 0), so two callers running jobs
 *   at once never share scratch.
 * - struct zarr_array: the array handle (metadata, store reference, engine options, fill chunk).
 * - zarr__engine_run: the batched chunk engine entry used by read, write and resize.
 */
#ifndef H5ZARR_ZARR_ENGINE_H
#define H5ZARR_ZARR_ENGINE_H

#include "internal.h"
#include "store_impl.h"

#include <pthread.h>

/* FNV-1a of a store key: the chunk cache's and the shard index cache's hash. */
static inline uint64_t
zarr__key_hash(const char *k)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *k; k++)
        h = (h ^ (uint8_t)*k) * 1099511628211ULL;
    return h;
}

/* ---- pool ---- */

/* Scratch of one worker. Buffers keep their capacity across tasks and jobs. */
typedef struct zarr__worker {
    zarr_codec_ctx *ctx;   /* created lazily by zarr__worker_ctx */
    zarr_buf        chunk; /* a chunk in memory form */
    zarr_buf        enc;   /* encoded bytes (fetched or to store) */
} zarr__worker;

/* The scratch of `worker` in a job of pool `p` (worker 0 = the calling thread's own scratch).
 * Borrowed: valid while the task runs; only that worker may touch it. */
zarr__worker *zarr__pool_worker(zarr_pool *p, int worker);
/* zarr_pool_run on the pool's threads when no other job holds the pool at this moment, else inline on the
 * caller: never waits for another thread's job (for a caller holding state that job may wait for). */
int zarr__pool_try_run(zarr_pool *p, zarr_task_fn fn, void *job, size_t n);
/* The worker's codec context, created on first use; NULL (with a message) if creation fails. */
zarr_codec_ctx *zarr__worker_ctx(zarr__worker *w);

/* ---- decoded-chunk cache (chunk_cache.c) ---- */

/* One cached chunk in memory form. Entries are in the hash map while they exist; `busy` entries are
 * being loaded, modified, read or written back by one thread and are waited for by others. */
typedef struct zarr__cent {
    struct zarr__cent *hnext;       /* hash chain */
    struct zarr__cent *prev, *next; /* LRU list, head = most recent; busy victims are unlinked */
    uint64_t           h;
    uint8_t           *data; /* chunk_bytes of memory form */
    size_t             bytes;
    bool               dirty;  /* differs from the store: must be written back */
    bool               busy;   /* owned by one thread right now */
    bool               linked; /* in the LRU list */
    char               key[];  /* the chunk's store key */
} zarr__cent;

typedef struct zarr__cache {
    pthread_mutex_t mu;
    pthread_cond_t  cv; /* broadcast whenever an entry stops being busy or leaves */
    zarr__cent    **slots;
    size_t          nslots; /* power of two (0 until first use) */
    size_t          n;      /* entries in the map (atomic reads outside mu: the empty fast path) */
    size_t          bytes;  /* bytes of entries in the map that are not being evicted */
    zarr__cent     *head, *tail;
} zarr__cache;

/* Writes every dirty entry back (as one pool job); entries stay cached, clean. */
int zarr__cache_flush(zarr_array *a);
/* Held writes (zarr_array_hold_writes): whether a job writing `bytes` of chunks to `a` may keep its whole
 * chunks in the cache, reserving them from the process-wide budget of held bytes (ZARR__HELD_MAX); the
 * reservation is given back when the array's cache is flushed or dropped. */
bool zarr__cache_hold(zarr_array *a, uint64_t bytes);
/* Frees every entry without writing anything (after a flush, or to discard), and the shard index
 * cache. */
void zarr__cache_drop(zarr_array *a);

/* ---- arrays ---- */

struct zarr_array {
    zarr_store      *store; /* owned reference */
    char            *path;  /* owned, "" for the root */
    zarr_array_meta *meta;  /* owned */
    bool stored_hidden;     /* the store holds its document as ZARR_HIDDEN_DOC (as last read or written) */
    /* The zarr.json text (v3) its last metadata write stored, owned, while `meta` has not been handed out
     * for change since (zarr_array_meta_mut, set_fill, resize drop it): zarr_array_doc_print; else NULL */
    char            *doc;
    size_t           ndoc;
    zarr_engine_opts opts;
    pthread_mutex_t  lock;       /* guards fill_chunk creation */
    uint8_t         *fill_chunk; /* fill elements in memory form (non-vlen), lazily, as many as the
                                    largest chunk a job has asked for (zarr__array_fill_chunk) */
    size_t               fill_chunk_bytes;
    struct fill_retired *fill_retired; /* smaller fill chunks a larger one replaced, freed at close
                                          (a job running beside the one that grew it may read one) */
    bool        fill_is_zero;          /* every byte of the fill element is 0 */
    zarr__cache cache;                 /* decoded chunks of partial writes and reads (chunk_cache.c) */
    bool        hold; /* small whole-chunk writes stay in the cache until flushed (zarr_array_hold_writes) */
    size_t      held; /* bytes this array reserved from the held-writes budget (atomic; chunk_cache.c) */
    struct zarr__shard_state *shards; /* sharded arrays: the shard index cache (shard_cache.c), lazily */
    /* The chunk-key form a job last checked against zarr_chunk_key and the store's key rules
     * (zarr__job_key_setup, chunk_io.c), under `lock`: a later job of the same form whose coordinates are
     * no larger (so no longer keys) skips the check. `prefix` owned, NULL: nothing checked yet. */
    struct {
        char    *prefix;
        size_t   plen;
        bool     v3, store_ok;
        char     sep;
        int      nd;
        uint64_t max[ZARR_MAX_DIMS];
    } key_memo;
};

/* Engine modes. */
typedef enum {
    ZARR__ENGINE_READ,
    ZARR__ENGINE_WRITE,
    ZARR__ENGINE_WRITE_FILL /* write the fill value over the region; chunks that are missing stay
                               missing (used by resize to clear stale edge-chunk parts) */
} zarr__engine_mode;

/* Runs one batched job over region `r` of `a` (buf unused for WRITE_FILL). */
int zarr__engine_run(zarr_array *a, const zarr_region *r, void *buf, zarr__engine_mode mode);
/* zarr__engine_run within a multi-array batch `m` (multi.c; NULL: none): the batched job on plain chunks
 * takes its reads from `m`'s fetched chunks and queues its stores in `m`. */
struct zarr_multi;
int zarr__engine_run_in(zarr_array *a, const zarr_region *r, void *buf, zarr__engine_mode mode,
                        struct zarr_multi *m);
/* The store keys of the chunks a read of region `r` of `a` fetches, each passed to fn (non-zero stops:
 * returned), when the read runs batched on plain chunks (a store that prefers batches, unsharded, fixed
 * size); else ZARR_EUNSUPPORTED without a message. */
int zarr__engine_keys(zarr_array *a, const zarr_region *r, int (*fn)(void *ud, const char *key), void *ud);
/* ---- the fill chunk (chunk_io.c) ---- */

/* Makes sure a->fill_chunk exists and holds at least `bytes` bytes of fill elements (non-vlen dtypes;
 * `bytes` a whole number of elements, at least one):
 * a job asks for its own chunk's size, so a sharded array's jobs on inner chunks never build a whole
 * shard of fill. The array owns the buffer; it stays valid until the array is closed. */
int zarr__array_fill_chunk(zarr_array *a, size_t bytes);
/* Under a->lock: the fill chunk is made from an old fill value; the next job makes another (the old one is
 * kept until close: a job beside the caller may read it). Fails only when out of memory. */
int zarr__array_fill_retire(zarr_array *a);
/* Frees the fill chunk and the retired ones (close). */
void zarr__array_fill_free(zarr_array *a);

#endif
