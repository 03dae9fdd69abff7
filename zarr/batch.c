/*
 * batch.c: the batched executor: one job's reads and writes in waves of store values, each wave's store
 * calls batched (one get_many / set_many, or the pool's workers at once), its encodes and decodes in one
 * pool job. It runs two kinds of job that engine.c plans:
 *
 *  - sharded arrays whose chain is one sharding_indexed codec, planned on the inner-chunk grid (so the
 *    copier and the codecs see inner chunks as they see an unsharded array's chunks); the shard format
 *    (layout, index, assembly) is shard_format.c's, decoded indexes are cached by shard_cache.c;
 *  - unsharded arrays on a store that prefers batches (S3, HTTP): each chunk is a one-chunk "shard"
 *    without an index, a wave a batch of chunks.
 *
 * The shards a job touches are taken in waves of a few shards per worker, so that the memory a job holds
 * stays within a few shards per thread however large the region is. Per wave:
 *
 *  - Write: the shards that the job does not wholly cover are fetched (one batched get); every touched
 *    inner chunk is gathered, patched (a partial inner chunk is decoded from the old shard) and encoded
 *    in one pool job. How the encoded chunks become shards is the wave's write strategy (write_strategy,
 *    chosen per wave by choose_write): `chunks` (unsharded: each chunk its own value), `gather` (each
 *    worker puts its encoded chunks in an arena of its own; the task that finishes a shard's last inner
 *    chunk assembles it: touched inner chunks from the arenas, untouched ones copied as bytes from the
 *    old shard, never decoded, fill inner chunks left out, the index), `direct` (a shard per worker or
 *    more: a task encodes its shard's chunks in order straight into the shard's buffer) and `stream`
 *    (inner chunks of 64 KiB or more on a store that does not prefer batches: each shard a store writer
 *    that every chunk goes into as it is encoded, committed when it is finished; no shard is held in
 *    memory). The wave's shards are stored (one set each from the pool, each atomic in the store, or one
 *    set_many for a store that prefers batches) by tasks of the next wave's pool job, so stores overlap
 *    encoding; a shard left with no inner chunk is deleted, and the new indexes go into the index cache.
 *    A write keeps two waves alive, each half as large.
 *  - Read: likewise a read strategy per wave (read_strategy): `chunks` (unsharded: every chunk whole, one
 *    batch), `ranges` (the indexes missing from the cache fetched in one batch, a suffix read for an
 *    index at the end, decoded and validated by shard_format.c; the byte ranges of the needed inner
 *    chunks coalesced, neighbours closer than COALESCE_GAP merged, and fetched in one batch; one pool job
 *    decodes and scatters them) and `own` (inner chunks of 64 KiB or more on a store that does not prefer
 *    batches: after the indexes, each decode task reads its own inner chunk, so reads overlap decoding and
 *    no wave holds whole shards). A missing shard or inner chunk reads as fill.
 *
 * Store calls come from the pool on stores that don't prefer batches (each worker its own), else one
 * batched call per step. A plain job that is part of a multi-array batch (multi.c, j->multi) takes its
 * chunks from what the batch fetched for all its arrays at once, and leaves its stores to the batch's one
 * set_many.
 */
#include "job.h"
#include "shard_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef zarr__job    job;
typedef zarr__tchunk tchunk;

/* Ranges of one shard closer than this are fetched as one (the gap is read and dropped). */
#define COALESCE_GAP 4096
/* Inner chunks at least this large (decoded) are streamed into their shard (WRITE_STREAM): below, the
 * store calls per chunk would cost more than gathering the shard in memory. */
#define STREAM_MIN_CHUNK ((size_t)64 << 10)
/* Shards per worker in one wave; streamed shards per worker (they hold no memory, so waves of them
 * are larger: fewer pipeline steps, each ending when its slowest shard does); chunks per worker in one
 * batch of an unsharded array. */
#define STREAM_SHARDS_PER_WORKER 8
#define WAVE_SHARDS_PER_WORKER   2
#define PLAIN_CHUNKS_PER_WORKER  64

/* How a wave's encoded chunks become stored values (see the top of the file). */
typedef enum write_strategy {
    WRITE_CHUNKS, /* unsharded: each chunk its own value, gathered in the arenas, no index */
    WRITE_GATHER, /* per-worker arenas; the last task of a shard assembles it in one buffer */
    WRITE_DIRECT, /* a task a shard, its chunks encoded in order straight into the shard's buffer */
    WRITE_STREAM, /* each shard a store writer, every chunk written into it as soon as it is encoded */
} write_strategy;

static const struct write_strategy_info {
    const char *name;
    bool        in_place; /* chunks go into the shard at once, at offsets taken atomically (no arena); the
                             task that encodes a shard's last chunk finishes it (finish_in_place) */
    bool writer;          /* the shard is a store writer, committed when it is finished (else a buffer) */
} write_strategies[] = {
    [WRITE_CHUNKS] = {"chunks", false, false},
    [WRITE_GATHER] = {"gather", false, false},
    [WRITE_DIRECT] = {"direct", true, false},
    [WRITE_STREAM] = {"stream", true, true},
};

/* How a wave's stored bytes are read (see the top of the file). */
typedef enum read_strategy {
    READ_CHUNKS, /* unsharded: every chunk whole, in one batch */
    READ_RANGES, /* the needed inner chunks' byte ranges, coalesced, in one batch */
    READ_OWN,    /* each decode task reads its own inner chunk's range */
} read_strategy;

static const char *const read_strategy_names[] = {
    [READ_CHUNKS] = "chunks",
    [READ_RANGES] = "ranges",
    [READ_OWN]    = "own",
};

/* Inner chunks large enough to go to and from a store that does not prefer batches one by one: a
 * write streams each shard (WRITE_STREAM), a read lets each decode task fetch its own (READ_OWN). */
static bool
large_local(const job *j)
{
    return !j->a->store->prefers_batches && j->io.chunk_bytes >= STREAM_MIN_CHUNK;
}

/* The job's planned inner chunks along one dim, grouped by shard. */
typedef struct sgroup {
    uint64_t coord;   /* shard coordinate along the dim */
    size_t   k0, n;   /* its inner chunks: j->d[d].chunks[k0 .. k0 + n) */
    size_t   nfull;   /* of them, wholly selected */
    uint64_t inshape; /* the shard's inner chunks along the dim that lie inside the array */
} sgroup;

typedef struct wshard {
    char          key[ZARR__KEY_MAX];
    uint64_t      coords[ZARR_MAX_DIMS]; /* in the shard grid */
    size_t        g[ZARR_MAX_DIMS];      /* its group along each dim */
    size_t        t0, nt;                /* its tasks in the wave */
    bool          covered;               /* write: every inner chunk inside the array is wholly written */
    zarr__sindex *ix;                    /* read: its index (a reference) */
    zarr_buf      old;                   /* write: the stored shard (empty when absent or not needed) */
    bool          has_old;
    uint64_t     *oldent; /* write: the old shard's index */
    uint64_t     *newent; /* write: the new shard's index */
    uint64_t      bytes;  /* write: the new shard's size */
    /* write, WRITE_STREAM: the value being written; in place (WRITE_STREAM, WRITE_DIRECT): the next
     * free offset in the shard (atomic) */
    zarr_store_writer *wr;
    uint64_t           wpos;
    bool               empty; /* write: no inner chunk left */
    size_t             left;  /* write: its tasks not yet encoded (atomic); the last one assembles it */
    size_t next; /* write, shard_tasks: its next task to encode (atomic; claimed by its own task, and at the
                    end of the wave by workers that have no shard left, so none idles through a tail) */
} wshard;

typedef struct wtask {
    size_t   flat;  /* the chunk's task index in the job (zarr__task_setup) */
    uint32_t ipos;  /* its position in the shard's inner grid (row-major; ninner <= UINT32_MAX) */
    uint32_t shard; /* in the wave */
    union {
        struct { /* read: its bytes in the wave's fetched ranges */
            uint64_t roff, rlen;
            uint32_t req;
            bool     present;
            bool     landed; /* read straight into the caller's buffer (plan_ranges): nothing to do */
        } r;
        struct { /* write: its encoded bytes, in its worker's arena or the caller's memory (identity),
                    or, written in place, already in the shard at `off` */
            union {
                const uint8_t *ptr;
                uint64_t       off;
            };
            size_t alen;
            bool   elided;
        } w;
    } u;
} wtask; /* 40 bytes: a 1 MiB shard of 64-byte inner chunks has 16,384 of them */

typedef struct wave {
    job               *j;
    bool               plain; /* an unsharded array: each "shard" is one chunk, stored as is (no index) */
    zarr__shard_layout plain_layout;
    bool               pool_sets; /* each assembled shard is stored by its pool task (stores that don't
                                     prefer batches); else the wave's shards go out in one set_many */
    write_strategy write;         /* write: how its shards are made (choose_write) */
    read_strategy  read;          /* read: how its bytes are fetched */
    bool shard_tasks; /* a shard per worker or more (WRITE_DIRECT; WRITE_STREAM when there are as many
                         shards as workers): a task encodes a whole shard, in order. Streamed, no two
                         workers then write into one file at once (two threads writing one file take turns
                         on its inode lock: see bench/README.md, "W2 sharded write") */
    int             nworkers;
    size_t          started; /* write, shard_tasks: shards whose task has begun (atomic) */
    sgroup         *g[ZARR_MAX_DIMS];
    size_t          ng[ZARR_MAX_DIMS];
    uint64_t        mult[ZARR_MAX_DIMS]; /* task index stride of each dim's chunk list */
    wshard         *s;
    size_t          ns, s_cap;
    wtask          *t;
    size_t          nt, t_cap;
    struct arena   *arena; /* [nworkers]: encoded inner chunks, per worker */
    zarr_buf       *obufs; /* [nobufs]: the new shards of a wave (obufs[i] for s[i]), kept across waves */
    size_t          nobufs;
    zarr_store_req *reqs;
    zarr_buf       *rbufs;
    uint8_t       **rinto; /* [req_cap]: where a request's bytes go straight (direct_runs), else NULL */
    size_t          nreq, req_cap, ninto;
} wave;

/* A worker's encoded inner chunks in a wave: blocks that never move (a shard is assembled by another
 * worker while this one goes on appending), reused from wave to wave. */
typedef struct ablock {
    struct ablock *next;
    size_t         cap, used;
    uint8_t        data[];
} ablock;

typedef struct arena {
    ablock *head, *cur, *tail;
} arena;

#define ARENA_BLOCK     (1u << 20)
#define ARENA_BLOCK_MAX (8u << 20)

/* Shard-sized buffers (arena blocks, assembled shards) are fresh memory in every job, and a wave of
 * 16 MiB shards costs tens of thousands of page faults: ask for transparent huge pages on the part
 * of a large buffer that can hold them (a hint; nothing depends on it). */
#define HUGE_PAGE (2u << 20)
static void
hint_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (n >= 2 * HUGE_PAGE && e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

/* `n` bytes of `a` that stay put until arena_reset; NULL when out of memory. */
static uint8_t *
arena_alloc(arena *a, size_t n)
{
    uint8_t *p;
    while (a->cur && a->cur->cap - a->cur->used < n)
        a->cur = a->cur->next; /* the rest of this block stays unused for the wave */
    if (!a->cur) {
        /* blocks grow (1, 2, 4, 8 MiB, ...) so that a large wave's blocks can take huge pages */
        size_t cap = a->tail && a->tail->cap < ARENA_BLOCK_MAX ? 2 * a->tail->cap
                     : a->tail                                 ? ARENA_BLOCK_MAX
                                                               : ARENA_BLOCK;
        if (cap < n)
            cap = n;
        ablock *b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        hint_huge(b->data, cap);
        b->next = NULL;
        b->cap  = cap;
        b->used = 0;
        if (a->tail)
            a->tail->next = b;
        else
            a->head = b;
        a->tail = a->cur = b;
    }
    p = a->cur->data + a->cur->used;
    a->cur->used += n;
    return p;
}

static void
arena_reset(arena *a)
{
    for (ablock *b = a->head; b; b = b->next)
        b->used = 0;
    a->cur = a->head;
}

static void
arena_free(arena *a)
{
    for (ablock *b = a->head, *nb; b; b = nb) {
        nb = b->next;
        free(b);
    }
    a->head = a->cur = a->tail = NULL;
}

/* "inner chunk i/j of shard 'key'" or, unsharded, "chunk 'key'": where a task's bytes are. */
static const char *
where(const wave *v, const wtask *q, char *out, size_t cap)
{
    char nm[ZARR_MAX_DIMS * 21];
    if (v->plain)
        snprintf(out, cap, "chunk '%s'", v->s[q->shard].key);
    else
        snprintf(out, cap, "inner chunk %s of shard '%s'",
                 zarr__shard_inner_name(v->j->shard, q->ipos, nm, sizeof nm), v->s[q->shard].key);
    return out;
}

/* The bytes at `off` of a fetched value; a value of no bytes has no buffer (decoders refuse it). */
static const uint8_t *
bytes_at(const zarr_buf *b, uint64_t off)
{
    return b->data ? b->data + off : (const uint8_t *)"";
}

/* ---- grouping and waves ---- */

static int
group_dims(wave *v)
{
    const job                *j = v->j;
    const zarr__shard_layout *l = j->shard;
    uint64_t                  m = 1;

    for (int d = j->nd - 1; d >= 0; d--) {
        const zarr__dplan *p      = &j->d[d];
        uint64_t           ninner = (j->m->shape[d] + l->inner[d] - 1) / l->inner[d];
        size_t             ng = 0, cap = 0;
        sgroup            *g = NULL;
        v->mult[d]           = m;
        m *= p->nchunks;
        for (size_t k = 0; k < p->nchunks; k++) {
            uint64_t sc = p->chunks[k].coord / l->grid[d];
            if (!ng || g[ng - 1].coord != sc) {
                if (ng == cap) {
                    sgroup *n = realloc(g, (cap = cap ? 2 * cap : 8) * sizeof *n);
                    if (!n) {
                        free(g);
                        return zarr_error(ZARR_ENOMEM, "out of memory planning a sharded job");
                    }
                    g = n;
                }
                g[ng++] = (sgroup){sc, k, 0, 0, 0};
                {
                    uint64_t first    = sc * l->grid[d];
                    g[ng - 1].inshape = ninner - first < l->grid[d] ? ninner - first : l->grid[d];
                }
            }
            g[ng - 1].n++;
            g[ng - 1].nfull += p->chunks[k].full;
        }
        v->g[d]  = g;
        v->ng[d] = ng;
    }
    return ZARR_OK;
}

static int
push_shard(wave *v, const size_t *gi)
{
    const job                *j = v->j;
    const zarr__shard_layout *l = j->shard;
    wshard                   *s;
    uint64_t                  full = 1, inshape = 1;
    size_t                    cnt[ZARR_MAX_DIMS], pos[ZARR_MAX_DIMS], nt = 1;
    int                       rc;

    if (v->ns == v->s_cap) {
        size_t  cap = v->s_cap ? 2 * v->s_cap : 8;
        wshard *n   = realloc(v->s, cap * sizeof *n);
        if (!n)
            return zarr_error(ZARR_ENOMEM, "out of memory planning a sharded job");
        v->s     = n;
        v->s_cap = cap;
    }
    if (v->ns == v->nobufs) {
        zarr_buf *n = realloc(v->obufs, (v->nobufs + 1) * sizeof *n);
        if (!n)
            return zarr_error(ZARR_ENOMEM, "out of memory planning a sharded job");
        n[v->nobufs++] = (zarr_buf)ZARR_BUF_INIT;
        v->obufs       = n;
    }
    v->obufs[v->ns].size = 0;
    s                    = &v->s[v->ns];
    memset(s, 0, sizeof *s);
    for (int d = 0; d < j->nd; d++) {
        const sgroup *g = &v->g[d][gi[d]];
        s->g[d]         = gi[d];
        s->coords[d]    = g->coord;
        full *= g->nfull;
        inshape *= g->inshape;
        cnt[d] = g->n;
        pos[d] = 0;
        nt *= g->n;
    }
    s->covered = full == inshape;
    if ((rc = zarr__job_key(j, s->coords, s->key)) != ZARR_OK)
        return zarr_error_wrap(rc, "can't make a shard key for '/%s': ", j->a->path);
    if (v->nt + nt > v->t_cap) {
        size_t cap = v->t_cap ? v->t_cap : 64;
        while (cap < v->nt + nt)
            cap *= 2;
        wtask *n = realloc(v->t, cap * sizeof *n);
        if (!n)
            return zarr_error(ZARR_ENOMEM, "out of memory planning a sharded job");
        v->t     = n;
        v->t_cap = cap;
    }
    s->t0   = v->nt;
    s->nt   = nt;
    s->left = nt;
    for (size_t q = 0; q < nt; q++) {
        wtask *t    = &v->t[v->nt++];
        size_t flat = 0, ipos = 0;
        for (int d = 0; d < j->nd; d++) {
            const sgroup *g = &v->g[d][gi[d]];
            size_t        k = g->k0 + pos[d];
            flat += k * (size_t)v->mult[d];
            ipos = ipos * (size_t)l->grid[d] + (size_t)(j->d[d].chunks[k].coord - g->coord * l->grid[d]);
        }
        memset(t, 0, sizeof *t);
        t->flat  = flat;
        t->shard = (uint32_t)v->ns;
        t->ipos  = (uint32_t)ipos;
        for (int d = j->nd - 1; d >= 0; d--) { /* odometer over the shard's chunks */
            if (++pos[d] < cnt[d])
                break;
            pos[d] = 0;
        }
    }
    v->ns++;
    return ZARR_OK;
}

static int
push_req_into(wave *v, const char *key, uint64_t off, uint64_t len, bool suffix, uint8_t *into)
{
    if (v->nreq >= UINT32_MAX) /* tasks name their request in 32 bits */
        return zarr_error(ZARR_EOVERFLOW, "too many requests in one wave of a sharded job");
    if (v->nreq == v->req_cap) {
        size_t          cap = v->req_cap ? 2 * v->req_cap : 16;
        zarr_store_req *n   = realloc(v->reqs, cap * sizeof *n);
        zarr_buf       *b;
        uint8_t       **in;
        if (!n)
            return zarr_error(ZARR_ENOMEM, "out of memory planning a sharded read");
        v->reqs = n;
        if (!(b = realloc(v->rbufs, cap * sizeof *b)))
            return zarr_error(ZARR_ENOMEM, "out of memory planning a sharded read");
        for (size_t i = v->req_cap; i < cap; i++)
            b[i] = (zarr_buf)ZARR_BUF_INIT;
        v->rbufs = b;
        if (!(in = realloc(v->rinto, cap * sizeof *in)))
            return zarr_error(ZARR_ENOMEM, "out of memory planning a sharded read");
        v->rinto   = in;
        v->req_cap = cap;
    }
    v->reqs[v->nreq]  = (zarr_store_req){key, off, len, suffix, NULL, UINT64_MAX, ZARR_OK}; /* out: fetch */
    v->rinto[v->nreq] = into;
    v->ninto += into != NULL;
    v->nreq++;
    return ZARR_OK;
}

static int
push_req(wave *v, const char *key, uint64_t off, uint64_t len, bool suffix)
{
    return push_req_into(v, key, off, len, suffix, NULL);
}

/* Issues the wave's requests: as one get_many call to a store that prefers batches, else from the
 * pool's workers concurrently (small batches on the caller); per item results in v->reqs[k].result.
 * The buffers are tied to the requests here: push_req may have moved them. */
static int
fetch_task(void *arg, size_t i, int worker)
{
    wave           *v = arg;
    zarr_store_req *r = &v->reqs[i];
    (void)worker;
    if (v->rinto[i]) { /* key checked when the job was planned (plan_ranges reads straight only with
                          j->io.store) */
        r->out->size = 0;
        r->result = zarr__store_get_range_into(v->j->io.store, r->key, r->off, v->rinto[i], (size_t)r->len);
        return ZARR_OK;
    }
    (void)zarr_store_get_many(v->j->a->store, 1, r); /* its result is in the item */
    return ZARR_OK;
}

static int
fetch(wave *v)
{
    const job *j     = v->j;
    uint64_t   bytes = 0;
    int        rc    = ZARR_OK;

    for (size_t k = 0; k < v->nreq; k++) {
        v->reqs[k].out = &v->rbufs[k];
        bytes += v->reqs[k].len == UINT64_MAX ? j->io.chunk_bytes : v->reqs[k].len;
    }
    if (!v->nreq)
        return ZARR_OK;
    if (j->multi) /* part of a multi-array batch: what it fetched already is taken from it */
        return zarr__multi_get(j->multi, j->a->store, v->nreq, v->reqs);
    if (!v->ninto && (j->a->store->prefers_batches || v->nreq == 1 || bytes < j->a->opts.inline_bytes))
        return zarr_store_get_many(j->a->store, v->nreq, v->reqs);
    if (v->nreq == 1 || bytes < j->a->opts.inline_bytes) { /* direct reads, few: on the caller */
        for (size_t k = 0; k < v->nreq; k++)
            (void)fetch_task(v, k, 0);
        for (size_t k = 0; k < v->nreq; k++)
            if (v->reqs[k].result != ZARR_OK)
                return v->reqs[k].result;
        return ZARR_OK;
    }
    /* A local store: the requests go out from the pool's workers at once, a few in flight per worker,
     * so reading overlaps reading (a store with latency gets the whole batch in one call instead). */
    ZARR_TRY(zarr_pool_run(j->pool, fetch_task, v, v->nreq, false));
    for (size_t k = 0; k < v->nreq; k++)
        if (v->reqs[k].result != ZARR_OK)
            return v->reqs[k].result;
done:
    return rc;
}

/* Forgets the wave's shards and tasks (keeps the capacity of its buffers). */
static void
wave_reset(wave *v)
{
    for (size_t i = 0; i < v->ns; i++) {
        wshard *s = &v->s[i];
        zarr__sindex_release(v->j->a, s->ix);
        (void)zarr_store_writer_close(s->wr, false); /* a failed job's: nothing is stored */
        zarr_buf_free(&s->old);
        free(s->oldent);
        free(s->newent);
    }
    v->ns = v->nt = v->nreq = v->ninto = 0;
    for (int k = 0; k < v->nworkers; k++)
        arena_reset(&v->arena[k]);
}

static void
wave_free(wave *v)
{
    wave_reset(v);
    for (int d = 0; d < ZARR_MAX_DIMS; d++)
        free(v->g[d]);
    for (size_t i = 0; i < v->req_cap; i++)
        zarr_buf_free(&v->rbufs[i]);
    for (int k = 0; k < v->nworkers; k++)
        arena_free(&v->arena[k]);
    for (size_t i = 0; i < v->nobufs; i++)
        zarr_buf_free(&v->obufs[i]);
    free(v->obufs);
    free(v->arena);
    free(v->rbufs);
    free(v->rinto);
    free(v->reqs);
    free(v->s);
    free(v->t);
}

static int
run_tasks(wave *v, zarr_task_fn fn, size_t n)
{
    const job *j = v->j;
    uint64_t   work;
    bool       small = zarr__mul_ok(n, j->io.chunk_bytes, &work) && work < j->a->opts.inline_bytes;
    return zarr_pool_run(j->pool, fn, v, n, small || n == 1);
}

/* ---- reads ---- */

static int
read_inner_task(void *arg, size_t i, int worker)
{
    wave          *v = arg;
    const job     *j = v->j;
    const wtask   *q = &v->t[i];
    zarr__worker  *w = zarr__pool_worker(j->pool, worker);
    tchunk         t;
    zarr__copier   c;
    const uint8_t *mem, *enc;
    uint8_t       *dst;
    char           nm[ZARR__KEY_MAX + ZARR_MAX_DIMS * 21 + 32];
    int            rc;

    if (v->read == READ_RANGES && q->u.r.present && q->u.r.landed)
        return ZARR_OK; /* read into the caller's buffer already (plan_ranges) */
    if (!w)
        return zarr_error(ZARR_ENOMEM, "out of memory allocating worker scratch");
    if ((rc = zarr__task_setup(j, q->flat, &t, false)) != ZARR_OK)
        return rc;
    if (!q->u.r.present)
        return zarr__read_fill(j, &t);
    if (v->read == READ_OWN) { /* its bytes, now: roff is their place in the shard */
        const char    *key = v->s[q->shard].key;
        zarr_store_req r   = {key, q->u.r.roff, q->u.r.rlen, false, &w->enc, UINT64_MAX, ZARR_OK};
        (void)zarr_store_get_many(j->a->store, 1, &r);
        if (r.result == ZARR_ENOTFOUND)
            rc = zarr_error(ZARR_ENOTFOUND, "shard '%s' is gone", key);
        else if ((rc = r.result) == ZARR_OK && w->enc.size != q->u.r.rlen)
            rc = zarr_error(ZARR_ECODEC, "%s: the shard ends before the %llu bytes its index gives",
                            where(v, q, nm, sizeof nm), (unsigned long long)q->u.r.rlen);
        if (rc != ZARR_OK)
            return zarr_error_wrap(rc,
                                   "can't read bytes %llu..+%llu of shard '%s' of array '/%s' (%s read): ",
                                   (unsigned long long)q->u.r.roff, (unsigned long long)q->u.r.rlen, key,
                                   j->a->path, read_strategy_names[v->read]);
        enc = w->enc.data;
    }
    else
        enc = bytes_at(&v->rbufs[q->u.r.req], q->u.r.roff);
    if (t.direct)
        dst = j->buf + t.boff * j->es;
    else if (j->io.identity)
        dst = NULL;
    else {
        if ((rc = zarr_buf_resize(&w->chunk, j->io.chunk_bytes)) != ZARR_OK)
            return rc;
        dst = w->chunk.data;
    }
    if ((rc = zarr__chunk_decode(&j->io, w, enc, (size_t)q->u.r.rlen, dst, &mem)) != ZARR_OK)
        return zarr_error_wrap(rc, "can't decode %s of array '/%s': ", where(v, q, nm, sizeof nm),
                               j->a->path);
    if (t.direct)
        return ZARR_OK;
    zarr__copier_init(&c, j, &t, (uint8_t *)mem, false);
    return zarr__copy_chunk(&c);
}

/* Fetches the indexes the wave lacks, in one batch. */
static int
read_indexes(wave *v, zarr__worker *w0)
{
    const job                *j     = v->j;
    const zarr__shard_layout *l     = j->shard;
    size_t                   *which = NULL, nw = 0;
    int                       rc = ZARR_OK;

    v->nreq = v->ninto = 0;
    if (v->plain)
        return ZARR_OK;
    if (!(which = malloc(v->ns * sizeof *which)))
        return zarr_error(ZARR_ENOMEM, "out of memory reading shard indexes");
    for (size_t i = 0; i < v->ns; i++) {
        wshard *s = &v->s[i];
        if ((s->ix = zarr__sindex_get(j->a, s->key)))
            continue;
        which[nw++] = i;
        ZARR_TRY(push_req(v, s->key, 0, l->index_bytes, l->index_end));
    }
    (void)fetch(v); /* per item results below */
    for (size_t k = 0; k < nw; k++) {
        wshard         *s   = &v->s[which[k]];
        zarr_store_req *q   = &v->reqs[k];
        uint64_t       *ent = NULL;
        if (q->result == ZARR_ENOTFOUND) {
            zarr_error_clear();
            if (!(s->ix = zarr__sindex_put(j->a, s->key, NULL, l->ninner, 0, true)))
                ZARR_FAIL(ZARR_ENOMEM, "out of memory reading shard '%s'", s->key);
            continue;
        }
        if ((rc = q->result) != ZARR_OK) {
            zarr_error_wrap(rc, "can't read the index of shard '%s' of array '/%s': ", s->key, j->a->path);
            goto done;
        }
        if (q->out->size < l->index_bytes)
            ZARR_FAIL(ZARR_ECODEC, "shard '%s' of array '/%s' has %zu bytes, less than its index of %zu",
                      s->key, j->a->path, q->out->size, l->index_bytes);
        if ((rc = zarr__shard_index_decode(l, zarr__worker_ctx(w0), s->key, q->out->data, q->out->size,
                                           q->total, &ent)) != ZARR_OK) {
            zarr_error_wrap(rc, "array '/%s': ", j->a->path);
            goto done;
        }
        if (!(s->ix = zarr__sindex_put(j->a, s->key, ent, l->ninner, q->total, false)))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory reading shard '%s'", s->key);
    }
done:
    free(which);
    return rc;
}

/* Where inner chunk span `s` can be read straight to, or NULL: a local store (one that prefers batches
 * gets its ranges in one batch instead), an identity chain of fixed-size elements (the stored bytes are
 * the memory form), a stored inner chunk of exactly a chunk's bytes, wholly inside the caller's buffer
 * and contiguous there. */
static uint8_t *
landing(const wave *v, const zarr__span *s)
{
    const job *j = v->j;
    tchunk     t;
    if (!j->io.store || !j->io.identity || j->io.vlen || j->a->store->prefers_batches ||
        s->end - s->off != j->io.chunk_bytes)
        return NULL;
    if (zarr__task_setup(j, v->t[s->i].flat, &t, false) != ZARR_OK) {
        zarr_error_clear(); /* the task reports it */
        return NULL;
    }
    return t.direct ? j->buf + t.boff * j->es : NULL;
}

/* The requests for shard `s`'s needed inner chunks (`sp`, `land`: scratch of s->nt entries). Inner
 * chunks that lie in the shard in the order and spacing they have in the caller's buffer (landing)
 * are read there in one request per run, and their tasks have nothing left to do (uncompressed
 * shards: no buffer to fault in and copy out of); the others' ranges are coalesced, neighbours closer
 * than COALESCE_GAP merged, and their tasks decode from the fetched buffers. */
static int
plan_ranges(wave *v, wshard *s, zarr__span *sp, uint8_t **land)
{
    size_t spn = 0;
    for (size_t k = s->t0; k < s->t0 + s->nt; k++) {
        wtask *q       = &v->t[k];
        q->u.r.present = q->u.r.landed = false;
        if (s->ix->absent || s->ix->ent[2 * q->ipos] == UINT64_MAX)
            continue;
        q->u.r.present = true;
        sp[spn++] =
            (zarr__span){s->ix->ent[2 * q->ipos], s->ix->ent[2 * q->ipos] + s->ix->ent[2 * q->ipos + 1], k};
    }
    if (!spn)
        return ZARR_OK;
    qsort(sp, spn, sizeof *sp, zarr__span_cmp);
    for (size_t k = 0; k < spn; k++)
        land[k] = landing(v, &sp[k]);
    for (size_t a = 0; a < spn;) {
        uint64_t off = sp[a].off, end = sp[a].end;
        size_t   b = a + 1;
        int      rc;
        if (land[a]) { /* a run that lands in the caller's buffer */
            while (b < spn && land[b] && sp[b].off == end && land[b] == land[a] + (end - off)) {
                end = sp[b].end;
                b++;
            }
        }
        else
            while (b < spn && !land[b] && sp[b].off <= end + COALESCE_GAP) {
                end = sp[b].end > end ? sp[b].end : end;
                b++;
            }
        for (size_t k = a; k < b; k++) {
            wtask *q      = &v->t[sp[k].i];
            q->u.r.req    = (uint32_t)v->nreq;
            q->u.r.roff   = sp[k].off - off;
            q->u.r.rlen   = sp[k].end - sp[k].off;
            q->u.r.landed = land[a] != NULL;
        }
        if ((rc = push_req_into(v, s->key, off, end - off, false, land[a])) != ZARR_OK)
            return rc;
        a = b;
    }
    return ZARR_OK;
}

static int
read_wave(wave *v, zarr__worker *w0)
{
    const job  *j    = v->j;
    uint8_t   **land = NULL;
    zarr__span *sp   = NULL;
    int         rc   = ZARR_OK;
    size_t      maxt = 0;

    ZARR_TRY(read_indexes(v, w0));
    v->read = v->plain ? READ_CHUNKS : large_local(j) && v->nt > 1 ? READ_OWN : READ_RANGES;
    if (v->read == READ_CHUNKS) {
        /* Every chunk whole, in one batch; a missing one reads as fill. */
        for (size_t k = 0; k < v->nt; k++) {
            v->t[k].u.r.req = (uint32_t)v->nreq;
            ZARR_TRY(push_req(v, v->s[v->t[k].shard].key, 0, UINT64_MAX, false));
        }
        (void)fetch(v); /* per item results below */
        for (size_t k = 0; k < v->nt; k++) {
            wtask *q       = &v->t[k];
            int    r       = v->reqs[q->u.r.req].result;
            q->u.r.present = r == ZARR_OK;
            q->u.r.roff    = 0;
            q->u.r.rlen    = v->rbufs[q->u.r.req].size;
            if (r == ZARR_ENOTFOUND)
                zarr_error_clear();
            else if ((rc = r) != ZARR_OK) {
                zarr_error_wrap(rc, "can't read chunk '%s' of array '/%s': ", v->reqs[q->u.r.req].key,
                                j->a->path);
                goto done;
            }
        }
        ZARR_TRY(run_tasks(v, read_inner_task, v->nt));
        goto done;
    }
    if (v->read == READ_OWN) { /* each task reads its own bytes (read_inner_task) */
        for (size_t k = 0; k < v->nt; k++) {
            wtask        *q = &v->t[k];
            const wshard *s = &v->s[q->shard];
            q->u.r.present  = !s->ix->absent && s->ix->ent[2 * q->ipos] != UINT64_MAX;
            q->u.r.roff     = q->u.r.present ? s->ix->ent[2 * q->ipos] : 0;
            q->u.r.rlen     = q->u.r.present ? s->ix->ent[2 * q->ipos + 1] : 0;
        }
        ZARR_TRY(run_tasks(v, read_inner_task, v->nt));
        goto done;
    }
    /* The ranges of the inner chunks needed, per shard, coalesced. */
    v->nreq = v->ninto = 0;
    for (size_t i = 0; i < v->ns; i++)
        maxt = v->s[i].nt > maxt ? v->s[i].nt : maxt;
    if (!(sp = malloc((maxt ? maxt : 1) * sizeof *sp)) || !(land = malloc((maxt ? maxt : 1) * sizeof *land)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory planning a sharded read");
    for (size_t i = 0; i < v->ns; i++)
        ZARR_TRY(plan_ranges(v, &v->s[i], sp, land));
    if ((rc = fetch(v)) != ZARR_OK) {
        for (size_t k = 0; k < v->nreq; k++)
            if (v->reqs[k].result != ZARR_OK) {
                rc = v->reqs[k].result;
                if (rc == ZARR_ENOTFOUND)
                    zarr_error(rc, "shard '%s' is gone", v->reqs[k].key);
                zarr_error_wrap(rc, "can't read bytes %llu..+%llu of shard '%s' of array '/%s' (%s read): ",
                                (unsigned long long)v->reqs[k].off, (unsigned long long)v->reqs[k].len,
                                v->reqs[k].key, j->a->path, read_strategy_names[v->read]);
                break;
            }
        goto done;
    }
    ZARR_TRY(run_tasks(v, read_inner_task, v->nt));
done:
    free(sp);
    free(land);
    return rc;
}

/* ---- writes ---- */

static int assemble_task(void *arg, size_t i, int worker);

/* `n` bytes at `off` of shard `i` of a wave written in place: WRITE_STREAM (its writer) or WRITE_DIRECT
 * (its buffer, which grows; one task writes it); `data` NULL: zeros (direct only). */
static int
shard_put(wave *v, size_t i, uint64_t off, const void *data, size_t n)
{
    zarr_buf *out = &v->obufs[i];
    size_t    had = out->cap;
    if (write_strategies[v->write].writer)
        return n ? zarr_store_writer_write(v->s[i].wr, off, data, n) : ZARR_OK;
    if (off > SIZE_MAX - n)
        return zarr_error(ZARR_EOVERFLOW, "shard '%s' is too large", v->s[i].key);
    if (zarr_buf_reserve(out, (size_t)off + n) != ZARR_OK)
        return ZARR_ENOMEM;
    if (out->cap != had)
        hint_huge(out->data, out->cap);
    if (n && data)
        memcpy(out->data + off, data, n);
    else if (n) /* room kept (the index at the start) */
        memset(out->data + off, 0, n);
    if (out->size < off + n)
        out->size = (size_t)off + n;
    return ZARR_OK;
}

static int
write_inner_task(void *arg, size_t i, int worker)
{
    wave            *v  = arg;
    const job       *j  = v->j;
    const zarr__cio *io = &j->io;
    wtask           *q  = &v->t[i];
    const wshard    *s  = &v->s[q->shard];
    zarr__worker    *w  = zarr__pool_worker(j->pool, worker);
    tchunk           t;
    zarr__copier     c;
    const uint8_t   *mem, *enc = NULL;
    size_t           n = 0;
    char             nm[ZARR__KEY_MAX + ZARR_MAX_DIMS * 21 + 32];
    int              rc;

    if (!w)
        return zarr_error(ZARR_ENOMEM, "out of memory allocating worker scratch");
    if ((rc = zarr__task_setup(j, q->flat, &t, false)) != ZARR_OK)
        return rc;
    if (t.full && t.direct)
        mem = j->buf + t.boff * j->es;
    else {
        uint8_t *cb;
        ZARR_TRY(zarr_buf_resize(&w->chunk, io->chunk_bytes));
        cb = w->chunk.data;
        if (!t.full && s->has_old && s->oldent[2 * q->ipos] != UINT64_MAX) {
            const uint8_t *m2;
            rc = zarr__chunk_decode(io, w, bytes_at(&s->old, s->oldent[2 * q->ipos]),
                                    (size_t)s->oldent[2 * q->ipos + 1], cb, &m2);
            if (rc != ZARR_OK)
                return zarr_error_wrap(rc, "can't decode %s of array '/%s': ", where(v, q, nm, sizeof nm),
                                       j->a->path);
        }
        else if (!t.full || t.edge)
            memcpy(cb, io->fill_chunk, io->chunk_bytes);
        zarr__copier_init(&c, j, &t, cb, true);
        ZARR_TRY(zarr__copy_chunk(&c)); /* fixed-size elements: cannot fail */
        mem = cb;
    }
    ZARR_TRY(zarr__chunk_encode(io, w, mem, &q->u.w.elided, &enc, &n));
    if (!q->u.w.elided && write_strategies[v->write].in_place) { /* into the shard now, at its end */
        q->u.w.alen = n;
        q->u.w.off  = __atomic_fetch_add(&((wshard *)s)->wpos, (uint64_t)n, __ATOMIC_RELAXED);
        ZARR_TRY(shard_put(v, q->shard, q->u.w.off, enc, n));
    }
    else if (!q->u.w.elided) {
        q->u.w.alen = n;
        if (enc == mem && mem == j->buf + t.boff * j->es)
            q->u.w.ptr = enc; /* the caller's memory: stays put for the job */
        else {
            uint8_t *p = arena_alloc(&v->arena[worker], n);
            if (!p)
                ZARR_FAIL(ZARR_ENOMEM, "out of memory for %zu encoded bytes", n);
            if (n)
                memcpy(p, enc, n);
            q->u.w.ptr = p;
        }
    }
    /* The shard's last inner chunk: assemble (and store) the shard now, while the pool goes on with
     * the next shards' chunks. Arena blocks never move: what it reads stays valid. */
    if (__atomic_sub_fetch(&((wshard *)s)->left, 1, __ATOMIC_ACQ_REL) == 0)
        return assemble_task(v, q->shard, worker);
    return ZARR_OK;
done:
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't write %s of array '/%s': ", where(v, q, nm, sizeof nm), j->a->path);
    return ZARR_OK;
}

/* The end of a shard written in place (WRITE_STREAM, WRITE_DIRECT), by the task that encoded its last
 * inner chunk: the untouched inner chunks copied as bytes from the old shard after the touched ones, the
 * index written (at the end, or in the room kept for it at the start); streamed, the value committed (a
 * shard with no inner chunk left is dropped, and deleted by its store task); direct, the buffer is the
 * assembled shard. */
static int
finish_in_place(wave *v, size_t i, zarr__worker *w)
{
    const job                *j       = v->j;
    const zarr__shard_layout *l       = j->shard;
    wshard                   *s       = &v->s[i];
    zarr_codec_ctx           *ctx     = zarr__worker_ctx(w);
    zarr__shard_builder       b       = {0};
    uint8_t                  *touched = NULL;
    uint64_t                  off, ixoff;
    int                       rc = ZARR_OK;

    if (!ctx)
        return zarr_error(ZARR_ENOMEM, "out of memory allocating worker scratch");
    ZARR_TRY(zarr__shard_builder_init(&b, l));
    if (!(touched = calloc(l->ninner ? l->ninner : 1, 1)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    for (size_t k = s->t0; k < s->t0 + s->nt; k++) { /* the touched ones, where their tasks put them */
        const wtask *q   = &v->t[k];
        touched[q->ipos] = 1;
        if (!q->u.w.elided)
            zarr__shard_builder_put(&b, q->ipos, q->u.w.off, q->u.w.alen);
    }
    b.end = s->wpos;                       /* after every touched one */
    for (size_t k = 0; k < l->ninner; k++) /* untouched, or absent: from the old shard */
        if (!touched[k] && s->has_old && s->oldent[2 * k] != ZARR__SHARD_EMPTY) {
            ZARR_TRY(zarr__shard_builder_append(&b, k, s->oldent[2 * k + 1], &off));
            ZARR_TRY(shard_put(v, i, off, bytes_at(&s->old, s->oldent[2 * k]), (size_t)s->oldent[2 * k + 1]));
        }
    s->wpos = b.end;
    if (!b.nstored) {
        s->empty         = true;
        v->obufs[i].size = 0;
        rc               = zarr_store_writer_close(s->wr, false); /* accepts NULL (direct) */
        s->wr            = NULL;
        goto done;
    }
    ZARR_TRY(zarr__shard_builder_finish(&b, ctx, &w->enc, &ixoff, &s->bytes));
    ZARR_TRY(shard_put(v, i, ixoff, w->enc.data, l->index_bytes));
    s->newent = b.ent; /* taken */
    b.ent     = NULL;
    if (write_strategies[v->write].writer) {
        rc    = zarr_store_writer_close(s->wr, true);
        s->wr = NULL;
    }
done:
    free(touched);
    zarr__shard_builder_free(&b);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't finish shard '%s' of array '/%s' (%s write): ", s->key, j->a->path,
                               write_strategies[v->write].name);
    return ZARR_OK;
}

/* The end of a gathered shard (WRITE_GATHER, WRITE_CHUNKS), by the task that encoded its last inner
 * chunk, or the whole of a written-in-place one (finish_in_place): the inner chunks in order, touched
 * ones from the arenas (or the caller's memory), untouched ones copied as bytes from the old shard, into
 * one buffer, then the index (none for an unsharded chunk). */
static int
assemble_task(void *arg, size_t i, int worker)
{
    wave                     *v   = arg;
    const job                *j   = v->j;
    const zarr__shard_layout *l   = j->shard;
    wshard                   *s   = &v->s[i];
    zarr_buf                 *out = &v->obufs[i];
    zarr__worker             *w   = zarr__pool_worker(j->pool, worker);
    zarr__shard_builder       b   = {0};
    size_t                   *tix = NULL;
    uint64_t                  off, ixoff;
    zarr_codec_ctx           *ctx;
    int                       rc = ZARR_OK;

    if (!w || !(ctx = zarr__worker_ctx(w)))
        return zarr_error(ZARR_ENOMEM, "out of memory allocating worker scratch");
    if (write_strategies[v->write].in_place)
        return finish_in_place(v, i, w);
    ZARR_TRY(zarr__shard_builder_init(&b, l));
    if (!(tix = malloc((l->ninner ? l->ninner : 1) * sizeof *tix)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory assembling shard '%s'", s->key);
    for (size_t k = 0; k < l->ninner; k++)
        tix[k] = SIZE_MAX;
    for (size_t k = s->t0; k < s->t0 + s->nt; k++)
        tix[v->t[k].ipos] = k;
    /* Places first: the shard is built in one buffer. */
    for (size_t k = 0; k < l->ninner; k++) {
        if (tix[k] != SIZE_MAX) {
            if (!v->t[tix[k]].u.w.elided)
                ZARR_TRY(zarr__shard_builder_append(&b, k, v->t[tix[k]].u.w.alen, &off));
        }
        else if (s->has_old && s->oldent[2 * k] != ZARR__SHARD_EMPTY)
            ZARR_TRY(zarr__shard_builder_append(&b, k, s->oldent[2 * k + 1], &off));
    }
    s->bytes = v->plain ? b.end : zarr__shard_builder_size(&b, &ixoff);
    {
        size_t had = out->cap;
        ZARR_TRY(zarr_buf_resize(out, (size_t)s->bytes));
        if (out->cap != had)
            hint_huge(out->data, out->cap);
    }
    for (size_t k = 0; k < l->ninner; k++)
        if (b.ent[2 * k] != ZARR__SHARD_EMPTY && b.ent[2 * k + 1]) {
            const uint8_t *src = tix[k] != SIZE_MAX ? v->t[tix[k]].u.w.ptr                 /* touched */
                                                    : bytes_at(&s->old, s->oldent[2 * k]); /* as bytes */
            memcpy(out->data + b.ent[2 * k], src, (size_t)b.ent[2 * k + 1]);
        }
    if (!b.nstored) {
        s->empty  = true;
        out->size = 0;
        goto done;
    }
    if (!v->plain) { /* an unsharded chunk: its bytes alone */
        ZARR_TRY(zarr__shard_builder_finish(&b, ctx, &w->enc, &ixoff, &s->bytes));
        memcpy(out->data + ixoff, w->enc.data, l->index_bytes);
    }
    s->newent = b.ent; /* taken */
    b.ent     = NULL;
done:
    free(tix);
    zarr__shard_builder_free(&b);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't assemble shard '%s' of array '/%s': ", s->key, j->a->path);
    return ZARR_OK;
}

/* Fetches the stored shards the wave does not wholly overwrite (one batch) and decodes their indexes. */
static int
write_fetch_old(wave *v, zarr__worker *w0)
{
    const job                *j     = v->j;
    const zarr__shard_layout *l     = j->shard;
    size_t                   *which = NULL, nw = 0;
    int                       rc = ZARR_OK;

    v->nreq = v->ninto = 0;
    if (!(which = malloc(v->ns * sizeof *which)))
        return zarr_error(ZARR_ENOMEM, "out of memory writing shards");
    for (size_t i = 0; i < v->ns; i++)
        if (!v->s[i].covered) {
            which[nw++] = i;
            ZARR_TRY(push_req(v, v->s[i].key, 0, UINT64_MAX, false));
        }
    (void)fetch(v); /* per item results below */
    for (size_t k = 0; k < nw; k++) {
        wshard         *s = &v->s[which[k]];
        zarr_store_req *q = &v->reqs[k];
        if (q->result == ZARR_ENOTFOUND) {
            zarr_error_clear();
            continue;
        }
        if ((rc = q->result) != ZARR_OK) {
            zarr_error_wrap(rc, "can't read shard '%s' of array '/%s' to update it: ", s->key, j->a->path);
            goto done;
        }
        if (!v->plain && q->out->size < l->index_bytes)
            ZARR_FAIL(ZARR_ECODEC, "shard '%s' of array '/%s' has %zu bytes, less than its index of %zu",
                      s->key, j->a->path, q->out->size, l->index_bytes);
        /* Take the fetched bytes over (the request buffer gets a fresh one). */
        s->old     = *q->out;
        *q->out    = (zarr_buf)ZARR_BUF_INIT;
        s->has_old = true;
        if (v->plain) { /* the chunk itself */
            if (!(s->oldent = malloc(2 * sizeof *s->oldent)))
                ZARR_FAIL(ZARR_ENOMEM, "out of memory writing chunks");
            s->oldent[0] = 0;
            s->oldent[1] = s->old.size;
            continue;
        }
        rc = zarr__shard_index_read(l, zarr__worker_ctx(w0), s->key, s->old.data, s->old.size, &s->oldent);
        if (rc != ZARR_OK) {
            zarr_error_wrap(rc, "array '/%s': ", j->a->path);
            goto done;
        }
    }
done:
    free(which);
    return rc;
}

/* Stores the assembled shards of a wave: shard i from its pool task (stores that don't prefer
 * batches; each set is atomic), or, from task 0, all of them with one set_many. An emptied shard is
 * deleted. */
static int
store_task(wave *v, size_t i)
{
    const job   *j     = v->j;
    const char **keys  = NULL;
    const void **data  = NULL;
    size_t      *sizes = NULL, n = 0;
    int         *res = NULL;
    int          rc  = ZARR_OK;

    if (v->pool_sets) {
        wshard *s = &v->s[i];
        if (!s->empty && write_strategies[v->write].writer)
            ; /* committed when it was finished */
        else if (!s->empty)
            rc = zarr_store_set(j->a->store, s->key, v->obufs[i].data, v->obufs[i].size);
        else if (s->has_old || s->covered) /* covered: not fetched, may exist */
            rc = zarr_store_del(j->a->store, s->key);
        if (rc != ZARR_OK)
            return zarr_error_wrap(rc, "can't %s shard '%s' of array '/%s': ",
                                   s->empty ? "delete the emptied" : "store", s->key, j->a->path);
        return ZARR_OK;
    }
    if (!(keys = malloc(v->ns * sizeof *keys)) || !(data = malloc(v->ns * sizeof *data)) ||
        !(sizes = malloc(v->ns * sizeof *sizes)) || !(res = malloc(v->ns * sizeof *res)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory writing shards");
    for (size_t k = 0; k < v->ns; k++)
        if (!v->s[k].empty) {
            keys[n]  = v->s[k].key;
            data[n]  = v->obufs[k].data;
            sizes[n] = v->obufs[k].size;
            n++;
        }
    if (n && j->multi) /* part of a multi-array batch: stored with the others (zarr_multi_store) */
        ZARR_TRY(zarr__multi_queue(j->multi, j->a, n, keys, data, sizes));
    else if (n && (rc = zarr_store_set_many(j->a->store, n, keys, data, sizes, res)) != ZARR_OK) {
        for (size_t k = 0; k < n; k++)
            if (res[k] != ZARR_OK) {
                zarr_error_wrap(rc, "can't store shard '%s' of array '/%s': ", keys[k], j->a->path);
                break;
            }
        goto done;
    }
    for (size_t k = 0; k < v->ns; k++) {
        wshard *s = &v->s[k];
        if (s->empty && (s->has_old || s->covered)) /* covered: not fetched, may exist */
            if ((rc = zarr_store_del(j->a->store, s->key)) != ZARR_OK) {
                zarr_error_wrap(rc, "can't delete the emptied shard '%s' of array '/%s': ", s->key,
                                j->a->path);
                goto done;
            }
    }
done:
    free(keys);
    free(data);
    free(sizes);
    free(res);
    return rc;
}

/* The write pipeline: one pool job encodes (and assembles) wave k's shards and stores wave k-1's, so
 * a wave's stores overlap the next wave's encoding instead of leaving the other workers idle at the
 * end of every wave. Two waves are alive at a time (the one being stored, the one being encoded). */
typedef struct wpipe {
    wave  *cur;    /* being encoded (NULL: none, the last store) */
    wave  *prev;   /* assembled, being stored (NULL: none, the first wave) */
    size_t nstore; /* the job's tasks that store prev */
    size_t stride; /* they are tasks 0, stride, 2 * stride, ...: spread among the encodes, so one worker
                      stores while the others encode */
} wpipe;

/* Shard i of a shard_tasks wave: its inner chunks in order, claimed one by one; then, streamed, once every
 * shard's task has begun, the chunks other shards' tasks have not reached yet (the wave's tail would
 * otherwise leave a worker idle while another encodes a whole shard; only there do two workers write one
 * shard's file). A direct shard's buffer grows as it is written: its own task alone writes it. */
static int
shard_task(wave *v, size_t i, int worker)
{
    size_t k;
    int    rc = ZARR_OK;
    __atomic_add_fetch(&v->started, 1, __ATOMIC_ACQ_REL);
    while ((k = __atomic_fetch_add(&v->s[i].next, 1, __ATOMIC_RELAXED)) < v->s[i].nt)
        ZARR_TRY(write_inner_task(v, v->s[i].t0 + k, worker));
    if (v->write == WRITE_STREAM &&
        __atomic_load_n(&v->started, __ATOMIC_ACQUIRE) == v->ns) /* direct: one writer a buffer */
        for (size_t o = 1; o < v->ns; o++) {
            wshard *h = &v->s[(i + o) % v->ns];
            while ((k = __atomic_fetch_add(&h->next, 1, __ATOMIC_RELAXED)) < h->nt)
                ZARR_TRY(write_inner_task(v, h->t0 + k, worker));
        }
done:
    return rc;
}

static int
write_step_task(void *arg, size_t i, int worker)
{
    const wpipe *p = arg;
    size_t       k = p->nstore ? i / p->stride : 0;
    if (p->nstore && i % p->stride == 0 && k < p->nstore)
        return store_task(p->prev, k);
    /* the encodes in order: i less the store tasks at or before it */
    k = p->nstore ? (k + 1 < p->nstore ? k + 1 : p->nstore) : 0;
    i -= k;
    if (!p->cur->shard_tasks)
        return write_inner_task(p->cur, i, worker);
    return shard_task(p->cur, i, worker);
}

/* Caches the indexes of a stored wave's shards and forgets the wave. */
static void
write_finish(wave *v)
{
    const zarr__shard_layout *l = v->j->shard;
    for (size_t i = 0; i < v->ns && !v->plain; i++) {
        wshard       *s = &v->s[i];
        zarr__sindex *e = s->empty ? zarr__sindex_put(v->j->a, s->key, NULL, l->ninner, 0, true)
                                   : zarr__sindex_put(v->j->a, s->key, s->newent, l->ninner, s->bytes, false);
        if (!s->empty)
            s->newent = NULL;             /* taken */
        zarr__sindex_release(v->j->a, e); /* cached (or dropped when out of memory) */
        zarr_error_clear();
    }
    wave_reset(v);
}

/* The write strategy of wave `v` (see the top of the file). */
static write_strategy
choose_write(const wave *v)
{
    if (v->plain)
        return WRITE_CHUNKS;
    if (large_local(v->j)) /* implies pool_sets */
        return WRITE_STREAM;
    return v->ns >= (size_t)v->nworkers ? WRITE_DIRECT : WRITE_GATHER;
}

/* One step of the pipeline: fetches what `cur` patches, then encodes `cur` while storing `prev`.
 * Either may be NULL. On error the indexes of both waves' shards are forgotten (some may have been
 * stored). */
static int
write_step(wave *cur, wave *prev, zarr__worker *w0)
{
    wpipe  p  = {cur, prev, 0, 1};
    wave  *v  = cur ? cur : prev;
    size_t nt = 0; /* encode tasks */
    int    rc = ZARR_OK;

    if (cur) {
        const job *j = cur->j;
        ZARR_TRY(write_fetch_old(cur, w0));
        cur->pool_sets = !j->a->store->prefers_batches;
        cur->write     = choose_write(cur);
        cur->shard_tasks =
            cur->write == WRITE_DIRECT || (cur->write == WRITE_STREAM && cur->ns >= (size_t)cur->nworkers);
        cur->started = 0;
        nt           = cur->shard_tasks ? cur->ns : cur->nt;
        for (size_t i = 0; write_strategies[cur->write].in_place && i < cur->ns; i++) {
            wshard *s = &cur->s[i];
            s->wpos   = zarr__shard_data_start(j->shard);
            if (cur->write == WRITE_DIRECT) {
                cur->obufs[i].size = 0;
                ZARR_TRY(shard_put(cur, i, 0, NULL, (size_t)s->wpos)); /* the index's room at the start */
                continue;
            }
            if ((rc = zarr_store_writer_open(j->a->store, s->key, &s->wr)) != ZARR_OK) {
                zarr_error_wrap(rc, "can't store shard '%s' of array '/%s': ", s->key, j->a->path);
                goto done;
            }
        }
    }
    if (prev) {
        p.nstore = prev->pool_sets ? prev->ns : 1;
        p.stride = (p.nstore + nt) / p.nstore;
    }
    {
        /* inline when the encoding is small and at most one store is to be made */
        uint64_t work;
        bool     small = zarr__mul_ok(cur ? cur->nt : 0, v->j->io.chunk_bytes, &work) &&
                     work < v->j->a->opts.inline_bytes && p.nstore <= 1;
        ZARR_TRY(zarr_pool_run(v->j->pool, write_step_task, &p, p.nstore + nt, small || p.nstore + nt == 1));
    }
    if (prev)
        write_finish(prev);
done:
    if (rc != ZARR_OK)
        for (int k = 0; k < 2; k++) {
            wave *w = k ? prev : cur;
            for (size_t i = 0; w && !w->plain && i < w->ns; i++)
                zarr__sindex_forget(w->j->a, w->s[i].key);
        }
    return rc;
}

/* ---- the job ---- */

int
zarr__batch_exec(zarr__job *j)
{
    wave          v[2], *cur, *prev = NULL;
    size_t        gi[ZARR_MAX_DIMS] = {0}, wave_max;
    zarr__worker *w0                = zarr__pool_worker(j->pool, 0);
    bool          write             = j->mode != ZARR__ENGINE_READ;
    int           rc                = ZARR_OK;

    memset(v, 0, sizeof v);
    v[0].j        = j;
    v[0].nworkers = zarr_pool_nthreads(j->pool);
    if (v[0].nworkers < 1)
        v[0].nworkers = 1;
    if (!w0)
        return zarr_error(ZARR_ENOMEM, "out of memory allocating worker scratch");
    /* A write keeps two waves alive (one stored while the next is encoded): half as large each. */
    wave_max = (size_t)v[0].nworkers * (write ? WAVE_SHARDS_PER_WORKER / 2 : WAVE_SHARDS_PER_WORKER);
    if (write && j->shard && large_local(j))
        wave_max = (size_t)v[0].nworkers * STREAM_SHARDS_PER_WORKER; /* streamed (write_step) */
    if (!j->shard) {
        /* Unsharded, on a store that wants batches: every chunk is a one-chunk "shard" without an index,
         * and a wave is a batch of chunks. */
        zarr__shard_layout *l = &v[0].plain_layout;
        v[0].plain            = true;
        l->ndim               = j->nd;
        l->ninner             = 1;
        for (int d = 0; d < j->nd; d++) {
            l->inner[d] = j->chunks[d];
            l->grid[d]  = 1;
        }
        l->inner_chain = j->io.chain;
        j->shard       = l;
        wave_max = (size_t)v[0].nworkers * (write ? PLAIN_CHUNKS_PER_WORKER / 2 : PLAIN_CHUNKS_PER_WORKER);
    }
    if (j->shard->ninner > UINT32_MAX)
        ZARR_FAIL(ZARR_EOVERFLOW, "array '/%s': %zu inner chunks per shard is too many", j->a->path,
                  j->shard->ninner);
    ZARR_TRY(group_dims(&v[0]));
    v[1] = v[0]; /* the second wave shares the job's grouping (freed with the first) */
    for (int k = 0; k < 2; k++)
        if (!(v[k].arena = calloc((size_t)v[0].nworkers, sizeof *v[k].arena)))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory for a sharded job");
    cur = &v[0];
    for (;;) {
        ZARR_TRY(push_shard(cur, gi));
        {
            int d = j->nd - 1;
            for (; d >= 0; d--) { /* next shard, row-major */
                if (++gi[d] < cur->ng[d])
                    break;
                gi[d] = 0;
            }
            if (cur->ns == wave_max || d < 0) {
                if (!write) {
                    ZARR_TRY(read_wave(cur, w0));
                    wave_reset(cur);
                }
                else {
                    ZARR_TRY(write_step(cur, prev, w0));
                    prev = cur;
                    cur  = cur == &v[0] ? &v[1] : &v[0];
                }
            }
            if (d < 0)
                break;
        }
    }
    if (prev)
        ZARR_TRY(write_step(NULL, prev, w0)); /* the last wave's stores */
done:
    for (int d = 0; d < ZARR_MAX_DIMS; d++)
        v[1].g[d] = NULL;
    wave_free(&v[1]);
    wave_free(&v[0]);
    return rc;
}
