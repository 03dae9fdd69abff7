/*
 * engine.h: internal declarations shared by the store, pool, array and engine sources (store.c,
 * store_*.c, pool.c, array.c, engine.c). Not part of the public interface.
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

#include <pthread.h>

/* ---- stores ---- */

/* Validates a store key: non-empty, no leading '/', no empty, "." or ".." components, no backslash.
 * Returns ZARR_OK or ZARR_EINVAL with a message naming the key. `allow_empty` accepts "" (the root,
 * for list and del_prefix). */
int zarr__store_check_key(const char *key, bool allow_empty);
/* The immediate children of a prefix, gathered from flat keys (memory and zip stores): add every key
 * (keys outside the prefix are ignored), then emit each child name once, in byte order, as a directory
 * when some key continues below it. emit frees the list; free alone is for error paths. */
typedef struct zarr__children {
    struct zarr__child *v;
    size_t              n, cap;
} zarr__children;
int  zarr__children_add(zarr__children *c, const char *prefix, size_t plen, const char *key);
int  zarr__children_emit(zarr__children *c, zarr_list_cb cb, void *ud);
void zarr__children_free(zarr__children *c);
/* Size in bytes of the value at `key` (ZARR_ENOTFOUND if absent). Uses stat for the directory store
 * and the map for the memory store, a get otherwise. */
int zarr__store_size(zarr_store *s, const char *key, uint64_t *size);
/* Implementation hooks for zarr__store_size (defined in store_dir.c / store_mem.c). */
int zarr__store_dir_size(zarr_store *s, const char *key, uint64_t *size);
int zarr__store_mem_size(zarr_store *s, const char *key, uint64_t *size);
/* Calls `cb` for every key of a memory store with its value (under the store's read lock: `cb` must
 * not use the store). Stops at and returns the first non-zero `cb` result. */
int zarr__store_mem_foreach(zarr_store *s, int (*cb)(const char *key, const void *data, size_t n, void *ud),
                            void       *ud);
/* Reads the value at `key` straight into `dst`, which holds exactly `n` bytes (the engine's zero-copy
 * read of an uncompressed chunk: no intermediate buffer). ZARR_ENOTFOUND if absent, ZARR_ECODEC if the
 * value has another size (dst may then be partly overwritten). `key` must be valid (not checked). */
int zarr__store_dir_read_into(zarr_store *s, const char *key, void *dst, size_t n);
int zarr__store_mem_read_into(zarr_store *s, const char *key, void *dst, size_t n);
/* zarr__store_get_quiet for the directory and memory stores. `key` must be valid (not checked). */
int                         zarr__store_dir_get_quiet(zarr_store *s, const char *key, zarr_buf *out);
int                         zarr__store_mem_get_quiet(zarr_store *s, const char *key, zarr_buf *out);
extern const zarr_store_ops zarr__store_dir_ops;
extern const zarr_store_ops zarr__store_mem_ops;
/* The directory store's atomic-write paths (store_dir.c): whether a write has gone through O_TMPFILE
 * + linkat, and forcing the fallbacks (tests, benchmarks): ZARR__DIR_LINK_PROC links the unnamed file
 * through /proc/self/fd (kernels before 6.10), ZARR__DIR_RENAME writes a named temporary and renames
 * it (filesystems without O_TMPFILE). */
enum { ZARR__DIR_LINK_PROC = 1, ZARR__DIR_RENAME = 2 };
bool zarr__store_dir_tmpfile_used(zarr_store *s);
void zarr__store_dir_force(zarr_store *s, int how);

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
/* The worker's codec context, created on first use; NULL (with a message) if creation fails. */
zarr_codec_ctx *zarr__worker_ctx(zarr__worker *w);

/* Number of values in a memory store (for choosing between probing and a scan). */
size_t zarr__store_mem_count(zarr_store *s);

/* ---- decoded-chunk cache (engine.c) ---- */

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
/* Frees every entry without writing anything (after a flush, or to discard). */
void zarr__cache_drop(zarr_array *a);

/* ---- arrays ---- */

struct zarr_array {
    zarr_store      *store; /* owned reference */
    char            *path;  /* owned, "" for the root */
    zarr_array_meta *meta;  /* owned */
    zarr_engine_opts opts;
    pthread_mutex_t  lock;       /* guards fill_chunk creation */
    uint8_t         *fill_chunk; /* one chunk of fill elements in memory form (non-vlen), lazily */
    size_t           fill_chunk_bytes;
    bool             fill_is_zero; /* every byte of the fill element is 0 */
    zarr__cache      cache;        /* decoded chunks of partial writes and reads (engine.c) */
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
/* Makes sure a->fill_chunk exists (non-vlen dtypes). */
int zarr__array_fill_chunk(zarr_array *a);

#endif
