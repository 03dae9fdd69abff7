/*
 * job.h: the chunk engine's internal job, shared by its sources: engine.c (planning, the chunk tasks,
 * the entry point), job.c (the task view, the copier, fill reads), chunk_io.c (chunk keys, the fill
 * chunk, the one chunk-load and one chunk-store path), chunk_cache.c (the decoded-chunk cache) and
 * batch.c (the batched executor: inner-chunk I/O of sharded arrays, batched chunk I/O on stores with
 * latency). Not part of the public interface.
 *
 * A job is one region read or write of one array. Its planner works on a chunk grid: the array's
 * chunks, or for a sharded array on the fast path (batch.c) the inner chunks, so that the copier and
 * the chunk codecs see inner chunks exactly as they see the chunks of an unsharded array.
 */
#ifndef H5ZARR_ZARR_JOB_H
#define H5ZARR_ZARR_JOB_H

#include "engine.h"
#include "shard_format.h"

#define ZARR__KEY_MAX 1024
/* Chunk and run list entries a job holds itself (zarr__job.plan_chunks/_runs), shared by its dims. */
#define ZARR__PLAN_INLINE 32
/* Task keys a job keeps for its tasks (zarr__job.key_*) and the bytes they may take. */
#define ZARR__KEY_MEMO       16
#define ZARR__KEY_MEMO_BYTES 1024

/* One run of selected indices along one dim inside one chunk. */
typedef struct zarr__run {
    uint64_t b0;  /* first buffer index along the dim */
    uint64_t o0;  /* first index inside the chunk */
    uint64_t len; /* number of consecutive indices */
} zarr__run;

/* One chunk touched along one dim. */
typedef struct zarr__dchunk {
    uint64_t coord; /* chunk grid coordinate */
    size_t   run0;  /* first run in zarr__dplan.runs */
    size_t   nrun;
    uint64_t nsel; /* selected indices inside the chunk */
    bool     full; /* the selection covers the chunk's in-shape extent */
    bool     edge; /* the chunk overhangs the shape */
} zarr__dchunk;

/* The plan of one dim: chunks touched in increasing order, and their runs. The lists start in the job's
 * own storage (zarr__job.plan_chunks/_runs) and move to the heap when they outgrow it (`*_heap`). */
typedef struct zarr__dplan {
    zarr__dchunk *chunks;
    size_t        nchunks, chunks_cap;
    zarr__run    *runs;
    size_t        nruns, runs_cap;
    bool          chunks_heap, runs_heap;
    uint64_t      bext;    /* buffer extent (count * block) */
    uint64_t      bstride; /* buffer stride in elements */
    uint64_t      cstride; /* chunk stride in elements */
} zarr__dplan;

/* How the chunks of a job are loaded and stored (chunk_io.c). */
typedef struct zarr__cio {
    zarr_array       *a;
    const zarr_chain *chain; /* the chunks' chain (a sharded array's inner chain on the fast path) */
    const uint64_t   *shape; /* chunk shape */
    size_t            chunk_nelem, chunk_bytes;
    bool              identity; /* the chain stores the memory form as is */
    bool              vlen;
    bool              elide;      /* a chunk equal to the fill value is not stored (deleted / left out) */
    bool              zero_copy;  /* identity, fixed-size and the store reads straight into memory */
    const uint8_t    *fill_chunk; /* one chunk of fill elements (at least chunk_bytes) */
    /* Keys built from a validated path were checked once for the job: call the store's ops directly
     * (NULL: through the checking zarr_store_* wrappers). */
    zarr_store *store;
} zarr__cio;

typedef struct zarr__job {
    zarr_array            *a;
    const zarr_array_meta *m;
    zarr__engine_mode      mode;
    uint8_t               *buf;
    zarr_pool             *pool;
    int                    nd;
    size_t                 es;
    const uint64_t        *chunks; /* the planned grid's chunk shape (m->chunks, or inner chunks) */
    bool                   write_empty;
    bool                   use_cache; /* partial chunks go through the array's chunk cache */
    bool                   hold;      /* whole chunks too, kept there unwritten (zarr__cache_hold) */
    zarr__cio              io;
    /* Chunk keys: the constant prefix ("<path>/" + "c" for v3 default keys) is built once per job and
     * the coordinates appended with a plain integer formatter (snprintf was a large part of the W1
     * write path: see bench/README.md, "What the engine does", Snprintf-free chunk keys). `fast_key`
     * false = use zarr_chunk_key. */
    bool   fast_key, v3_keys;
    char   key_sep;
    size_t key_plen; /* key_prefix: below, written by zarr__job_key_setup */
    /* Sharded fast path (batch.c): the layout (shard_format.h), NULL for unsharded jobs. */
    const zarr__shard_layout *shard;
    /* A multi-array batch (multi.c) this job is part of, or NULL: batch.c then serves its plain-chunk
     * reads from it and queues its stores there. */
    struct zarr_multi *multi;
    /* Used entries of plan_chunks, plan_runs and the task keys (key_*). */
    size_t plan_nchunks, plan_nruns, nkeys;
    /* Everything above is cleared by zarr__job_init, the plans of the job's `nd` dims by job_plan;
     * what follows them is only read where the members above say it was written (W3: clearing 3.6 KB
     * per job was 480 instructions of every box write). */
    zarr__dplan d[ZARR_MAX_DIMS];
    char        key_prefix[ZARR__KEY_MAX];
    /* The per-dim chunk and run lists of a small job, handed out dim after dim (engine.c, plan_dim):
     * a W3 box write planned 2 chunks and 2 runs a dim with 4 reallocs and 4 frees before. */
    zarr__dchunk plan_chunks[ZARR__PLAN_INLINE];
    zarr__run    plan_runs[ZARR__PLAN_INLINE];
    /* The keys and hashes of tasks 0 .. nkeys-1, made on the caller by zarr__cache_misses before the
     * tasks run, which then copy them (zarr__task_setup) instead of building them again. */
    uint64_t key_hash[ZARR__KEY_MEMO];
    uint16_t key_off[ZARR__KEY_MEMO], key_len[ZARR__KEY_MEMO];
    char     key_text[ZARR__KEY_MEMO_BYTES];
} zarr__job;

/* Clears a job for planning: every member before `d` (job_plan clears the plans of its dims). */
void zarr__job_init(zarr__job *j);

/* Per-task view of one chunk of the planned grid. */
typedef struct zarr__tchunk {
    const zarr__dchunk *dc[ZARR_MAX_DIMS];
    uint64_t            coords[ZARR_MAX_DIMS];
    bool                full, edge;
    bool                direct;   /* wholly inside and contiguous in the caller's buffer */
    uint64_t            boff;     /* buffer offset (elements) of the chunk's first element when direct */
    bool                has_hash; /* `hash` is zarr__key_hash(key) (a key the job kept: key_text) */
    uint64_t            hash;
    char                key[ZARR__KEY_MAX]; /* unsharded jobs: the chunk's store key */
} zarr__tchunk;

/* Copies the selected elements of one chunk between a chunk buffer and the caller's buffer. */
typedef struct zarr__copier {
    const zarr__job    *j;
    const zarr__dchunk *dc[ZARR_MAX_DIMS];
    int                 last;     /* innermost dim copied run by run (-1 for 0-d) */
    uint64_t            unit;     /* elements per index of `last` (merged trailing dims) */
    bool                to_chunk; /* gather (buffer -> chunk) or scatter (chunk -> buffer) */
    bool                dst_init; /* vlen: the destination holds owned payloads */
    uint8_t            *chunk;    /* chunk buffer (src when scattering) */
    const uint8_t      *bcast;    /* gather: take elements from this chunk-shaped source instead of buf */
    uint8_t            *buf;
} zarr__copier;

/* ---- job.c ---- */

/* Sets up `t` for task `i` (row-major over the job's per-dim chunk lists); with `with_key` also the
 * chunk's store key (unsharded jobs). */
int zarr__task_setup(const zarr__job *j, size_t i, zarr__tchunk *t, bool with_key);
/* Copies between `c->chunk` and the caller's buffer as set up in `c` (see zarr__copier). */
int zarr__copy_chunk(zarr__copier *c);
/* A copier for task `t` of job `j`: gather into (to_chunk) or scatter from `chunk`. */
void zarr__copier_init(zarr__copier *c, const zarr__job *j, const zarr__tchunk *t, uint8_t *chunk,
                       bool to_chunk);
/* Copies the fill chunk into the caller's buffer for task `t` (a chunk missing from the store). */
int zarr__read_fill(const zarr__job *j, const zarr__tchunk *t);

/* ---- chunk_io.c ---- */

/* True if the `n` bytes at `p` are all fill elements of the array (a chunk of them). */
bool zarr__is_fill(const zarr_array *a, const uint8_t *p, size_t n);
/* True if the array has a fill value that every reader reads missing chunks as (v3 always, v2 unless
 * its fill_value is null). */
bool zarr__has_fill(const zarr_array_meta *m);

/* Sets up the job's key prefix and its direct store calls (see zarr__job). */
void zarr__job_key_setup(zarr__job *j);
/* The store key of the chunk at grid `coords` (ZARR__KEY_MAX bytes at `key`). */
int zarr__job_key(const zarr__job *j, const uint64_t *coords, char *key);
/* A chunk I/O context for the array's own chunks outside a job (cache write-back). */
void zarr__cio_of_array(zarr__cio *io, zarr_array *a);

/* Decodes the encoded chunk `enc` (n bytes) to memory form. With `dst` (chunk_bytes) the chunk is
 * decoded or copied there and `*mem` = dst; with `dst` NULL (identity chains only) `*mem` borrows
 * `enc`. On failure `dst` holds no payloads. */
int zarr__chunk_decode(const zarr__cio *io, zarr__worker *w, const uint8_t *enc, size_t n, uint8_t *dst,
                       const uint8_t **mem);
/* Loads the stored chunk `key`: fetched (straight into `dst` when io->zero_copy) and decoded as
 * zarr__chunk_decode (`*mem` may borrow w->enc when `dst` is NULL). A chunk missing from the store
 * gives ZARR_OK with `*mem` NULL (nothing written to dst). */
int zarr__chunk_load(const zarr__cio *io, zarr__worker *w, const char *key, uint8_t *dst,
                     const uint8_t **mem);
/* What to store for the chunk `mem` (memory form): `*elide` when it equals the fill value and
 * io->elide; else the encoded bytes in `*enc`/`*n`, borrowing `mem` (identity) or w->enc. */
int zarr__chunk_encode(const zarr__cio *io, zarr__worker *w, const uint8_t *mem, bool *elide,
                       const uint8_t **enc, size_t *n);
/* Encodes and stores the chunk `mem` at `key`, or deletes the key when zarr__chunk_encode elides it. */
int zarr__chunk_store(const zarr__cio *io, zarr__worker *w, const char *key, const uint8_t *mem);

/* ---- chunk_mem.c ---- */

/* Memory for a cache entry of `n` bytes (huge-page regions for 64 KiB .. 2 MiB, else malloc), NULL when
 * there is none; the caller owns it and gives it back with zarr__chunk_mem_free(p, n), the same `n`. */
void *zarr__chunk_mem_alloc(size_t n);
/* Gives back what zarr__chunk_mem_alloc(n) returned (NULL: nothing). */
void zarr__chunk_mem_free(void *p, size_t n);
/* Regions mapped, and how many of them are wholly free (tests). */
void zarr__chunk_mem_stats(unsigned *regions, unsigned *free_regions);

/* ---- chunk_cache.c ---- */

/* True if the array's chunk cache holds anything (one atomic load). */
bool zarr__cache_nonempty(zarr_array *a);
/* The cached chunk of task `t`, busy for the caller (give it back with zarr__cache_release), in `*out`;
 * NULL when it is not cached and `insert` is false or there is no room (the caller then takes the
 * uncached path). With `insert`, a miss evicts (writing dirty victims back on this task), inserts and
 * loads the chunk; a chunk missing from the store becomes fill values when writing, and is not inserted
 * when reading (`*missing` set, `*out` NULL). A whole chunk of a job that holds its writes (j->hold) is
 * not loaded: the job overwrites it (an edge chunk starts as fill values). */
int zarr__cache_acquire(const zarr__job *j, zarr__worker *w, const zarr__tchunk *t, bool insert,
                        zarr__cent **out, bool *missing);
/* Gives a busy entry back, most recently used; `dirtied` when the caller changed its data. */
void zarr__cache_release(zarr_array *a, zarr__cent *e, bool dirtied);
/* Drops the cached copy of `key` (a whole-chunk write replaces it in the store). */
void zarr__cache_invalidate(zarr_array *a, const char *key);
/* How many of the job's `n` first tasks' chunks are not cached (for the inline decision). The keys it
 * makes are kept in the job (key_*) for its tasks. */
uint64_t zarr__cache_misses(zarr__job *j, size_t n);

/* ---- batch.c ---- */

/* Runs a planned job (READ or WRITE, fixed-size dtype) in waves of store values with batched store
 * calls: a sharded array on the inner-chunk grid (j->shard the layout, j->chunks the inner chunk
 * shape), or an unsharded one on a store that prefers batches (j->shard NULL). */
int zarr__batch_exec(zarr__job *j);

/* ---- multi.c ---- */

/* zarr_store_get_many for job reads within multi-array batch `m`: items fetched by zarr_multi_fetch
 * from store `s` are served from it (their buffers moved to the item's `out`), the others fetched with
 * one get_many. Returns as zarr_store_get_many. */
int zarr__multi_get(struct zarr_multi *m, zarr_store *s, size_t n, zarr_store_req *reqs);
/* Queues copies of `n` encoded chunks of array `a` (keys, data, sizes borrowed) for zarr_multi_store. */
int zarr__multi_queue(struct zarr_multi *m, const zarr_array *a, size_t n, const char *const *keys,
                      const void *const *data, const size_t *sizes);

#endif
