/*
 * engine.c: the batched chunk engine. One region read or write is one job:
 *
 *  1. Plan (on the caller): per dimension, the chunks the selection touches and inside each chunk the
 *     runs of selected indices (buffer position, position in the chunk, length), adjacent runs
 *     merged. The chunk tasks are the cross product of the per-dimension chunk lists, so planning
 *     costs O(sum of per-dimension sizes), not O(chunks).
 *  2. Run all chunk tasks with one zarr_pool_run (inline on the caller when the job is small, see
 *     zarr_engine_defaults). A write task gathers the caller's elements into the worker's chunk buffer
 *     (read-modify-write for partial chunks: fetch + decode the stored chunk, or start from fill
 *     values), elides chunks equal to the fill value (write_empty_chunks false: delete instead; never
 *     for a v2 array without a fill value, whose missing chunks other readers leave undefined),
 *     encodes and stores. A read task fetches, decodes and scatters; a missing chunk reads as fill.
 *  3. Zero-copy: when a chunk is wholly inside the array and the selection, and its elements form one
 *     contiguous block of the caller's buffer, a write encodes straight from the caller's memory (and
 *     with an identity chain stores the caller's memory as is), and a read decodes straight into it.
 *
 * Edge chunks that overhang the shape are always stored at the full chunk shape, padded with fill
 * values. vlen dtypes copy elements with zarr_dtype_copy_elems (deep) and free decoded payloads with
 * zarr_dtype_clear_elems. Per-worker buffers are reused across tasks, so a steady-state job does no
 * allocation per chunk besides what the store itself needs.
 */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#define KEY_MAX 1024

typedef struct run {
    uint64_t b0;  /* first buffer index along the dim */
    uint64_t o0;  /* first index inside the chunk */
    uint64_t len; /* number of consecutive indices */
} run;

typedef struct dchunk {
    uint64_t coord; /* chunk grid coordinate */
    size_t   run0;  /* first run in dplan.runs */
    size_t   nrun;
    uint64_t nsel; /* selected indices inside the chunk */
    bool     full; /* the selection covers the chunk's in-shape extent */
    bool     edge; /* the chunk overhangs the shape */
} dchunk;

typedef struct dplan {
    dchunk  *chunks;
    size_t   nchunks, chunks_cap;
    run     *runs;
    size_t   nruns, runs_cap;
    uint64_t bext;    /* buffer extent (count * block) */
    uint64_t bstride; /* buffer stride in elements */
    uint64_t cstride; /* chunk stride in elements */
} dplan;

typedef struct job {
    zarr_array            *a;
    const zarr_array_meta *m;
    zarr__engine_mode      mode;
    uint8_t               *buf;
    zarr_pool             *pool;
    int                    nd;
    dplan                  d[ZARR_MAX_DIMS];
    size_t                 es;
    size_t                 chunk_nelem, chunk_bytes;
    bool                   identity, vlen, write_empty;
    bool                   has_fill;  /* the array has a fill value (v3 always; v2 unless null) */
    bool                   use_cache; /* partial chunks go through the array's chunk cache */
    const uint8_t         *fill_chunk;
    /* Chunk keys: the constant prefix ("<path>/" + "c" for v3 default keys) is built once per job and
     * the coordinates appended with a plain integer formatter (snprintf was a third of the W1 write
     * path's instructions). `fast_key` false = use zarr_chunk_key. */
    bool        fast_key, v3_keys;
    char        key_sep;
    size_t      key_plen;
    char        key_prefix[KEY_MAX];
    zarr_store *store; /* keys are built from a validated path: call the store's ops directly */
    int (*read_into)(zarr_store *, const char *, void *, size_t); /* zero-copy identity reads, or NULL */
} job;

/* ---- planning ---- */

static int
push_chunk(dplan *p, uint64_t coord)
{
    if (p->nchunks == p->chunks_cap) {
        size_t  cap = p->chunks_cap ? 2 * p->chunks_cap : 16;
        dchunk *n   = realloc(p->chunks, cap * sizeof *n);
        if (!n)
            return zarr_error(ZARR_ENOMEM, "out of memory planning a chunk job");
        p->chunks     = n;
        p->chunks_cap = cap;
    }
    p->chunks[p->nchunks++] = (dchunk){coord, p->nruns, 0, 0, false, false};
    return ZARR_OK;
}

static int
push_run(dplan *p, uint64_t b0, uint64_t o0, uint64_t len)
{
    dchunk *c = &p->chunks[p->nchunks - 1];
    if (c->nrun) {
        run *last = &p->runs[p->nruns - 1];
        if (last->b0 + last->len == b0 && last->o0 + last->len == o0) {
            last->len += len;
            c->nsel += len;
            return ZARR_OK;
        }
    }
    if (p->nruns == p->runs_cap) {
        size_t cap = p->runs_cap ? 2 * p->runs_cap : 16;
        run   *n   = realloc(p->runs, cap * sizeof *n);
        if (!n)
            return zarr_error(ZARR_ENOMEM, "out of memory planning a chunk job");
        p->runs     = n;
        p->runs_cap = cap;
    }
    p->runs[p->nruns++] = (run){b0, o0, len};
    c->nrun++;
    c->nsel += len;
    return ZARR_OK;
}

static int
plan_dim(dplan *p, uint64_t start, uint64_t stride, uint64_t count, uint64_t block, uint64_t chunk,
         uint64_t shape)
{
    int rc;

    if (count > 1 && stride == block) { /* contiguous: one block */
        block *= count;
        count = 1;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint64_t s = start + i * stride, bpos = i * block, left = block;
        while (left) {
            uint64_t c = s / chunk, o = s % chunk, n = chunk - o;
            if (n > left)
                n = left;
            if (!p->nchunks || p->chunks[p->nchunks - 1].coord != c)
                if ((rc = push_chunk(p, c)) != ZARR_OK)
                    return rc;
            if ((rc = push_run(p, bpos, o, n)) != ZARR_OK)
                return rc;
            s += n;
            bpos += n;
            left -= n;
        }
    }
    for (size_t k = 0; k < p->nchunks; k++) {
        dchunk  *c     = &p->chunks[k];
        uint64_t begin = c->coord * chunk;
        uint64_t ext   = shape - begin < chunk ? shape - begin : chunk;
        c->full        = c->nsel == ext;
        c->edge        = ext < chunk;
    }
    return ZARR_OK;
}

static void
job_free(job *j)
{
    for (int d = 0; d < ZARR_MAX_DIMS; d++) {
        free(j->d[d].chunks);
        free(j->d[d].runs);
    }
}

/* ---- copying between a chunk buffer and the caller's buffer ---- */

typedef struct copier {
    const job     *j;
    const dchunk  *dc[ZARR_MAX_DIMS];
    int            last;     /* innermost dim copied run by run (-1 for 0-d) */
    uint64_t       unit;     /* elements per index of `last` (merged trailing dims) */
    bool           to_chunk; /* gather (buffer -> chunk) or scatter (chunk -> buffer) */
    bool           dst_init; /* vlen: the destination holds owned payloads */
    uint8_t       *chunk;    /* chunk buffer (src when scattering) */
    const uint8_t *bcast;    /* gather: take elements from this chunk-shaped source instead of buf */
    uint8_t       *buf;
} copier;

static int
copy_elems(const copier *c, uint64_t coff, uint64_t boff, uint64_t n)
{
    const job     *j = c->j;
    uint8_t       *dst;
    const uint8_t *src;

    if (c->to_chunk) {
        dst = c->chunk + coff * j->es;
        src = c->bcast ? c->bcast + coff * j->es : c->buf + boff * j->es;
    }
    else {
        dst = c->buf + boff * j->es;
        src = c->chunk + coff * j->es;
    }
    if (j->vlen)
        return zarr_dtype_copy_elems(j->m->dtype, dst, src, (size_t)n, c->dst_init);
    memcpy(dst, src, (size_t)n * j->es);
    return ZARR_OK;
}

static int
copy_rec(const copier *c, int d, uint64_t coff, uint64_t boff)
{
    const dplan  *p  = &c->j->d[d];
    const dchunk *dc = c->dc[d];
    const run    *r  = p->runs + dc->run0;
    int           rc;

    if (d == c->last) {
        for (size_t k = 0; k < dc->nrun; k++)
            if ((rc = copy_elems(c, coff + r[k].o0 * p->cstride, boff + r[k].b0 * p->bstride,
                                 r[k].len * c->unit)) != ZARR_OK)
                return rc;
        return ZARR_OK;
    }
    for (size_t k = 0; k < dc->nrun; k++)
        for (uint64_t i = 0; i < r[k].len; i++)
            if ((rc = copy_rec(c, d + 1, coff + (r[k].o0 + i) * p->cstride,
                               boff + (r[k].b0 + i) * p->bstride)) != ZARR_OK)
                return rc;
    return ZARR_OK;
}

static int
copy_chunk(copier *c)
{
    const job *j = c->j;
    int        d = j->nd - 1;

    if (j->nd == 0)
        return copy_elems(c, 0, 0, 1);
    /* Merge trailing dims that are whole in both the chunk and the buffer. */
    while (d > 0) {
        const dchunk *dc = c->dc[d];
        const run    *r  = &j->d[d].runs[dc->run0];
        if (dc->nrun != 1 || r->o0 != 0 || r->b0 != 0 || r->len != j->m->chunks[d] || r->len != j->d[d].bext)
            break;
        d--;
    }
    c->last = d;
    c->unit = j->d[d].cstride;
    return copy_rec(c, 0, 0, 0);
}

/* ---- chunk keys ---- */

/* Appends the decimal form of v at p; returns the new end. */
static char *
put_u64(char *p, uint64_t v)
{
    char  tmp[20];
    char *t = tmp + sizeof tmp;
    do {
        *--t = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    memcpy(p, t, (size_t)(tmp + sizeof tmp - t));
    return p + (tmp + sizeof tmp - t);
}

/* The same key as zarr_chunk_key (meta.c), without snprintf. */
static int
job_key(const job *j, const uint64_t *coords, char *key)
{
    char *p;
    if (!j->fast_key)
        return zarr_chunk_key(j->m, j->a->path, coords, key, KEY_MAX);
    memcpy(key, j->key_prefix, j->key_plen);
    p = key + j->key_plen;
    if (j->v3_keys)
        for (int d = 0; d < j->nd; d++) {
            *p++ = j->key_sep;
            p    = put_u64(p, coords[d]);
        }
    else if (j->nd == 0)
        *p++ = '0';
    else
        for (int d = 0; d < j->nd; d++) {
            if (d)
                *p++ = j->key_sep;
            p = put_u64(p, coords[d]);
        }
    *p = '\0';
    return ZARR_OK;
}

/* Sets up the job's key prefix and checks the fast form against zarr_chunk_key and the store's key
 * rules once (on the largest coordinates of the job); any doubt falls back to the checked path. */
static void
job_key_setup(job *j)
{
    const char *path = j->a->path;
    size_t      pl   = strlen(path);
    uint64_t    last[ZARR_MAX_DIMS];
    char        k1[KEY_MAX], k2[KEY_MAX];

    j->fast_key = false;
    j->store    = NULL;
    j->v3_keys  = j->m->key_encoding == ZARR_KEYS_DEFAULT;
    j->key_sep  = j->m->separator == '.' ? '.' : '/';
    /* prefix + "c" + per dim a separator and at most 20 digits + NUL must fit */
    if (pl + 2 + 21 * (size_t)(j->nd + 1) + 1 > KEY_MAX)
        return;
    j->key_plen = 0;
    if (pl) {
        memcpy(j->key_prefix, path, pl);
        j->key_prefix[pl] = '/';
        j->key_plen       = pl + 1;
    }
    if (j->v3_keys)
        j->key_prefix[j->key_plen++] = 'c';
    for (int d = 0; d < j->nd; d++)
        last[d] = j->d[d].nchunks ? j->d[d].chunks[j->d[d].nchunks - 1].coord : 0;
    j->fast_key = true;
    if (job_key(j, last, k1) != ZARR_OK || zarr_chunk_key(j->m, path, last, k2, sizeof k2) != ZARR_OK ||
        strcmp(k1, k2) != 0) {
        j->fast_key = false;
        zarr_error_clear();
        return;
    }
    if (zarr__store_check_key(k1, false) == ZARR_OK)
        j->store = j->a->store;
    else
        zarr_error_clear();
    j->read_into = NULL;
    if (j->store && j->identity && !j->vlen) {
        if (j->store->ops == &zarr__store_dir_ops)
            j->read_into = zarr__store_dir_read_into;
        else if (j->store->ops == &zarr__store_mem_ops)
            j->read_into = zarr__store_mem_read_into;
    }
}

/* Store calls of a task: straight to the store's ops when the job's keys were checked (job_key_setup),
 * else through the checking zarr_store_* wrappers. Writability was checked when the job started. */
static int
st_get(const job *j, const char *key, zarr_buf *out)
{
    return j->store ? j->store->ops->get(j->store, key, out) : zarr_store_get(j->a->store, key, out);
}

static int
st_set(const job *j, const char *key, const void *data, size_t n)
{
    return j->store ? j->store->ops->set(j->store, key, data, n) : zarr_store_set(j->a->store, key, data, n);
}

static int
st_del(const job *j, const char *key)
{
    return j->store ? j->store->ops->del(j->store, key) : zarr_store_del(j->a->store, key);
}

/* ---- tasks ---- */

/* Per-task view of one chunk. */
typedef struct tchunk {
    const dchunk *dc[ZARR_MAX_DIMS];
    uint64_t      coords[ZARR_MAX_DIMS];
    bool          full, edge;
    bool          direct; /* wholly inside and contiguous in the caller's buffer */
    uint64_t      boff;   /* buffer offset (elements) of the chunk's first element when direct */
    char          key[KEY_MAX];
} tchunk;

static int
task_setup(const job *j, size_t i, tchunk *t)
{
    int  rc;
    bool single = true, outer_one = true;

    t->full = true;
    t->edge = false;
    t->boff = 0;
    for (int d = j->nd - 1; d >= 0; d--) {
        size_t n = j->d[d].nchunks;
        t->dc[d] = &j->d[d].chunks[i % n];
        i /= n;
        t->coords[d] = t->dc[d]->coord;
        t->full &= t->dc[d]->full;
        t->edge |= t->dc[d]->edge;
        single &= t->dc[d]->nrun == 1;
    }
    t->direct = t->full && !t->edge && single;
    if (t->direct) {
        /* Contiguous iff, going outwards, once a dim is narrower than the buffer all outer dims are 1. */
        for (int d = j->nd - 1; d >= 0; d--) {
            const run *r = &j->d[d].runs[t->dc[d]->run0];
            if (!outer_one && r->len != 1) {
                t->direct = false;
                break;
            }
            if (r->len != j->d[d].bext)
                outer_one = false;
            t->boff += r->b0 * j->d[d].bstride;
        }
    }
    if ((rc = job_key(j, t->coords, t->key)) != ZARR_OK)
        return zarr_error_wrap(rc, "can't make a chunk key for '%s': ", j->a->path);
    return ZARR_OK;
}

static bool
fill_test(const zarr_array *a, const uint8_t *p, size_t n)
{
    if (a->fill_is_zero) {
        /* Word-wise zero test, early exit. */
        size_t k = 0;
        for (; k + 8 <= n; k += 8) {
            uint64_t w;
            memcpy(&w, p + k, 8);
            if (w)
                return false;
        }
        for (; k < n; k++)
            if (p[k])
                return false;
        return true;
    }
    return memcmp(p, a->fill_chunk, n) == 0;
}

static bool
is_fill(const job *j, const uint8_t *p)
{
    return fill_test(j->a, p, j->chunk_bytes);
}

/* True if the array has a fill value that missing chunks read as for every reader: v3 always (its
 * fill_value is required), v2 unless `fill_value` is null. A v2 array without one (zarr-python 2.13
 * leaves missing chunks uninitialised then) never has chunks elided: every chunk written is stored,
 * even when it holds only the zeros this library reads missing chunks as. */
static bool
has_fill(const zarr_array_meta *m)
{
    return m->zarr_format != 2 || m->fill_defined;
}

/* Stores the chunk `mem` (memory form, chunk shape), or deletes it if it equals the fill value and
 * empty chunks are not written (or the job writes fill values) and the array has a fill value. */
static int
store_chunk(const job *j, zarr__worker *w, const tchunk *t, const uint8_t *mem)
{
    zarr_codec_ctx *ctx;
    int             rc;

    if (!j->vlen && j->has_fill && (!j->write_empty || j->mode == ZARR__ENGINE_WRITE_FILL) && is_fill(j, mem))
        return st_del(j, t->key);
    if (j->identity)
        return st_set(j, t->key, mem, j->chunk_bytes);
    if (!(ctx = zarr__worker_ctx(w)))
        return ZARR_ENOMEM;
    if ((rc = zarr_chain_encode(j->m->chain, ctx, mem, j->m->chunks, &w->enc)) != ZARR_OK)
        return rc;
    return st_set(j, t->key, w->enc.data, w->enc.size);
}

/* ---- the decoded-chunk cache ----
 *
 * Per array (a->cache), keyed by chunk key, LRU, bounded by opts.cache_bytes. All map and list state
 * is under c->mu; an entry's data belongs to the one thread that set `busy` (others wait on c->cv), so
 * chunk copies, loads, encodes and store I/O run without the lock. Eviction picks the least recently
 * used non-busy entries; dirty victims stay in the map (busy, unlinked from the list) while the evicting
 * task writes them back, so a concurrent lookup of that chunk waits instead of reading a stale store
 * value. c->n is also read without the lock (atomically) so that jobs on an array whose cache is empty
 * (every whole-chunk W1 job) pay one load and nothing else. */

#define CACHE_MIN_SLOTS 64

static uint64_t
key_hash(const char *k)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *k; k++)
        h = (h ^ (uint8_t)*k) * 1099511628211ULL;
    return h;
}

static bool
cache_nonempty(zarr_array *a)
{
    return __atomic_load_n(&a->cache.n, __ATOMIC_ACQUIRE) != 0;
}

static zarr__cent *
cache_find(zarr__cache *c, const char *key, uint64_t h)
{
    if (!c->nslots)
        return NULL;
    for (zarr__cent *e = c->slots[h & (c->nslots - 1)]; e; e = e->hnext)
        if (e->h == h && strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

/* Under mu: the entry of `key` once no other thread is busy with it (NULL if absent). */
static zarr__cent *
cache_wait(zarr__cache *c, const char *key, uint64_t h)
{
    zarr__cent *e;
    while ((e = cache_find(c, key, h)) && e->busy)
        pthread_cond_wait(&c->cv, &c->mu);
    return e;
}

static void
lru_unlink(zarr__cache *c, zarr__cent *e)
{
    if (!e->linked)
        return;
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
    e->linked         = false;
}

static void
lru_push(zarr__cache *c, zarr__cent *e, bool at_head)
{
    lru_unlink(c, e);
    if (at_head) {
        e->prev = NULL;
        e->next = c->head;
        if (c->head)
            c->head->prev = e;
        c->head = e;
        if (!c->tail)
            c->tail = e;
    }
    else {
        e->next = NULL;
        e->prev = c->tail;
        if (c->tail)
            c->tail->next = e;
        c->tail = e;
        if (!c->head)
            c->head = e;
    }
    e->linked = true;
}

/* Under mu: adds `e` to the map (not the list). */
static int
map_insert(zarr__cache *c, zarr__cent *e)
{
    if (c->n + 1 > c->nslots) {
        size_t       ns = c->nslots ? 2 * c->nslots : CACHE_MIN_SLOTS;
        zarr__cent **sl = calloc(ns, sizeof *sl);
        if (!sl) {
            if (!c->nslots)
                return zarr_error(ZARR_ENOMEM, "out of memory creating a chunk cache");
        }
        else {
            for (size_t i = 0; i < c->nslots; i++)
                for (zarr__cent *x = c->slots[i], *nx; x; x = nx) {
                    nx                  = x->hnext;
                    x->hnext            = sl[x->h & (ns - 1)];
                    sl[x->h & (ns - 1)] = x;
                }
            free(c->slots);
            c->slots  = sl;
            c->nslots = ns;
        }
    }
    e->hnext                         = c->slots[e->h & (c->nslots - 1)];
    c->slots[e->h & (c->nslots - 1)] = e;
    __atomic_store_n(&c->n, c->n + 1, __ATOMIC_RELEASE);
    return ZARR_OK;
}

/* Under mu: removes `e` from the map and the list (does not free it). */
static void
map_remove(zarr__cache *c, zarr__cent *e)
{
    zarr__cent **pp = &c->slots[e->h & (c->nslots - 1)];
    while (*pp && *pp != e)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = e->hnext;
    lru_unlink(c, e);
    __atomic_store_n(&c->n, c->n - 1, __ATOMIC_RELEASE);
}

static void
cent_free(zarr__cent *e)
{
    if (e) {
        free(e->data);
        free(e);
    }
}

/* Encodes and stores one cached chunk (or deletes it when it equals the fill value and empty chunks
 * are not written). The caller owns `e` (busy); `w` is its worker scratch. */
static int
cache_writeback(zarr_array *a, zarr__worker *w, zarr__cent *e)
{
    const zarr_array_meta *m = a->meta;
    zarr_codec_ctx        *ctx;
    int                    rc;

    if (!w)
        rc = zarr_error(ZARR_ENOMEM, "out of memory allocating worker scratch");
    else if (!a->opts.write_empty_chunks && has_fill(m) && fill_test(a, e->data, e->bytes))
        rc = zarr_store_del(a->store, e->key);
    else if (zarr_chain_is_identity(m->chain))
        rc = zarr_store_set(a->store, e->key, e->data, e->bytes);
    else if (!(ctx = zarr__worker_ctx(w)))
        rc = ZARR_ENOMEM;
    else if ((rc = zarr_chain_encode(m->chain, ctx, e->data, m->chunks, &w->enc)) == ZARR_OK)
        rc = zarr_store_set(a->store, e->key, w->enc.data, w->enc.size);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't write back cached chunk '%s' of array '/%s': ", e->key, a->path);
    e->dirty = false;
    return ZARR_OK;
}

/* Reads the stored chunk of task `t` into `dst` (chunk_bytes, memory form); `*missing` when the store
 * has no value for it (dst untouched). */
static int
cache_load(const job *j, zarr__worker *w, const tchunk *t, uint8_t *dst, bool *missing)
{
    int rc;

    *missing = false;
    if (j->read_into) {
        rc = j->read_into(j->store, t->key, dst, j->chunk_bytes);
        if (rc == ZARR_ENOTFOUND) {
            zarr_error_clear();
            *missing = true;
            return ZARR_OK;
        }
        return rc;
    }
    rc = st_get(j, t->key, &w->enc);
    if (rc == ZARR_ENOTFOUND) {
        zarr_error_clear();
        *missing = true;
        return ZARR_OK;
    }
    if (rc != ZARR_OK)
        return rc;
    if (j->identity) {
        if (w->enc.size != j->chunk_bytes)
            return zarr_error(ZARR_ECODEC, "chunk holds %zu bytes, expected %zu", w->enc.size,
                              j->chunk_bytes);
        memcpy(dst, w->enc.data, j->chunk_bytes);
        return ZARR_OK;
    }
    {
        zarr_codec_ctx *ctx = zarr__worker_ctx(w);
        if (!ctx)
            return ZARR_ENOMEM;
        return zarr_chain_decode(j->m->chain, ctx, w->enc.data, w->enc.size, dst, j->m->chunks);
    }
}

/* The cached chunk of task `t`, busy for the caller (release with cache_release / cache_forget), in
 * `*out`; NULL when it is not cached and `insert` is false or there is no room (the caller then takes
 * the uncached path). With `insert`, a miss evicts (writing dirty victims back on this task), inserts
 * and loads the chunk; a chunk missing from the store becomes fill values when writing, and is not
 * inserted when reading (`*missing` set, `*out` NULL). */
static int
cache_acquire(const job *j, zarr__worker *w, const tchunk *t, bool insert, zarr__cent **out, bool *missing)
{
    zarr_array  *a = j->a;
    zarr__cache *c = &a->cache;
    uint64_t     h = key_hash(t->key);
    zarr__cent  *e = NULL, *victims = NULL, *v, *nv;
    size_t       cap = a->opts.cache_bytes, klen;
    int          rc  = ZARR_OK;

    *out     = NULL;
    *missing = false;
    pthread_mutex_lock(&c->mu);
    if ((e = cache_wait(c, t->key, h))) {
        e->busy = true;
        pthread_mutex_unlock(&c->mu);
        *out = e;
        return ZARR_OK;
    }
    if (!insert) {
        pthread_mutex_unlock(&c->mu);
        return ZARR_OK;
    }
    /* Make room: least recently used first, skipping entries other threads hold. */
    v = c->tail;
    while (c->bytes + j->chunk_bytes > cap && v) {
        zarr__cent *prev = v->prev;
        if (!v->busy) {
            lru_unlink(c, v);
            c->bytes -= v->bytes;
            if (!v->dirty) {
                map_remove(c, v);
                cent_free(v);
            }
            else {
                v->busy = true;
                v->next = victims; /* unlinked: `next` chains the victims */
                victims = v;
            }
        }
        v = prev;
    }
    if (c->bytes + j->chunk_bytes <= cap) {
        klen = strlen(t->key);
        if ((e = calloc(1, sizeof *e + klen + 1)) && (e->data = malloc(j->chunk_bytes))) {
            memcpy(e->key, t->key, klen + 1);
            e->h     = h;
            e->bytes = j->chunk_bytes;
            e->busy  = true;
            if (map_insert(c, e) == ZARR_OK) {
                lru_push(c, e, true);
                c->bytes += e->bytes;
            }
            else {
                zarr_error_clear();
                cent_free(e);
                e = NULL;
            }
        }
        else {
            cent_free(e); /* no memory for the entry: take the uncached path */
            e = NULL;
        }
    }
    pthread_mutex_unlock(&c->mu);

    if (victims) {
        for (v = victims; v && rc == ZARR_OK; v = v->next)
            rc = cache_writeback(a, w, v);
        pthread_mutex_lock(&c->mu);
        for (v = victims; v; v = nv) {
            nv      = v->next;
            v->next = NULL;
            if (!v->dirty) {
                map_remove(c, v);
                cent_free(v);
            }
            else { /* not written: keep its data */
                v->busy = false;
                lru_push(c, v, false);
                c->bytes += v->bytes;
            }
        }
        if (rc != ZARR_OK && e) {
            map_remove(c, e);
            c->bytes -= e->bytes;
            cent_free(e);
            e = NULL;
        }
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        if (rc != ZARR_OK)
            return rc;
    }
    if (!e)
        return ZARR_OK;
    rc = cache_load(j, w, t, e->data, missing);
    if (rc == ZARR_OK && *missing) {
        if (j->mode == ZARR__ENGINE_READ)
            rc = ZARR_ENOTFOUND; /* not inserted: reads of missing chunks come from the fill chunk */
        else {
            memcpy(e->data, j->fill_chunk, j->chunk_bytes);
            *missing = false;
        }
    }
    if (rc != ZARR_OK) {
        pthread_mutex_lock(&c->mu);
        map_remove(c, e);
        c->bytes -= e->bytes;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        cent_free(e);
        return rc == ZARR_ENOTFOUND ? ZARR_OK : rc;
    }
    *out = e;
    return ZARR_OK;
}

/* Gives a busy entry back, most recently used; `dirtied` when the caller changed its data. */
static void
cache_release(zarr_array *a, zarr__cent *e, bool dirtied)
{
    zarr__cache *c = &a->cache;
    pthread_mutex_lock(&c->mu);
    if (dirtied)
        e->dirty = true;
    e->busy = false;
    lru_push(c, e, true);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* Drops the cached copy of `key` (a whole-chunk write replaces it in the store). */
static void
cache_invalidate(zarr_array *a, const char *key)
{
    zarr__cache *c = &a->cache;
    zarr__cent  *e;
    pthread_mutex_lock(&c->mu);
    if ((e = cache_wait(c, key, key_hash(key)))) {
        map_remove(c, e);
        c->bytes -= e->bytes;
        cent_free(e);
    }
    pthread_mutex_unlock(&c->mu);
}

/* Under mu: waits until no entry is busy. */
static void
cache_quiesce(zarr__cache *c)
{
    for (;;) {
        bool busy = false;
        for (size_t i = 0; i < c->nslots && !busy; i++)
            for (zarr__cent *e = c->slots[i]; e && !busy; e = e->hnext)
                busy = e->busy;
        if (!busy)
            return;
        pthread_cond_wait(&c->cv, &c->mu);
    }
}

typedef struct flush_job {
    zarr_array  *a;
    zarr_pool   *pool;
    zarr__cent **v;
} flush_job;

static int
flush_task(void *arg, size_t i, int worker)
{
    flush_job *fj = arg;
    return cache_writeback(fj->a, zarr__pool_worker(fj->pool, worker), fj->v[i]);
}

int
zarr__cache_flush(zarr_array *a)
{
    zarr__cache *c = &a->cache;
    flush_job    fj;
    size_t       n = 0, cap = 0, bytes = 0;
    int          rc = ZARR_OK;

    if (!cache_nonempty(a))
        return ZARR_OK;
    memset(&fj, 0, sizeof fj);
    fj.a    = a;
    fj.pool = a->opts.pool ? a->opts.pool : zarr_pool_default();
    pthread_mutex_lock(&c->mu);
    cache_quiesce(c);
    for (size_t i = 0; i < c->nslots; i++)
        for (zarr__cent *e = c->slots[i]; e; e = e->hnext)
            if (e->dirty) {
                if (n == cap) {
                    zarr__cent **nv = realloc(fj.v, (cap = cap ? 2 * cap : 16) * sizeof *nv);
                    if (!nv) {
                        rc = zarr_error(ZARR_ENOMEM, "out of memory flushing the chunk cache of '/%s'",
                                        a->path);
                        goto unlock;
                    }
                    fj.v = nv;
                }
                fj.v[n++] = e;
                bytes += e->bytes;
            }
    for (size_t k = 0; k < n; k++)
        fj.v[k]->busy = true;
unlock:
    pthread_mutex_unlock(&c->mu);
    if (rc == ZARR_OK && n) {
        /* On this thread: the chunks are claimed (busy) now, and a job of another thread holding the pool
         * may be waiting for exactly these chunks; asking the pool here would deadlock against it. */
        rc = zarr_pool_run(fj.pool, flush_task, &fj, n, true);
        pthread_mutex_lock(&c->mu);
        for (size_t k = 0; k < n; k++)
            fj.v[k]->busy = false; /* failed ones stay dirty */
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
    }
    free(fj.v);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't flush the chunk cache of array '/%s': ", a->path);
    return ZARR_OK;
}

void
zarr__cache_drop(zarr_array *a)
{
    zarr__cache *c = &a->cache;
    pthread_mutex_lock(&c->mu);
    cache_quiesce(c);
    for (size_t i = 0; i < c->nslots; i++)
        for (zarr__cent *e = c->slots[i], *ne; e; e = ne) {
            ne = e->hnext;
            cent_free(e);
        }
    free(c->slots);
    c->slots  = NULL;
    c->nslots = 0;
    c->head = c->tail = NULL;
    c->bytes          = 0;
    __atomic_store_n(&c->n, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&c->mu);
}

static int
write_task(void *arg, size_t i, int worker)
{
    const job    *j = arg;
    zarr__worker *w = zarr__pool_worker(j->pool, worker);
    tchunk        t;
    copier        c;
    uint8_t      *cb;
    int           rc    = ZARR_OK;
    bool          owned = false; /* vlen: cb holds payloads to clear */

    if (!w)
        return zarr_error(ZARR_ENOMEM, "out of memory allocating worker scratch");
    if ((rc = task_setup(j, i, &t)) != ZARR_OK)
        return rc;
    if (t.full) {
        /* Whole-chunk writes bypass the cache; a cached copy would be stale. */
        if (cache_nonempty(j->a))
            cache_invalidate(j->a, t.key);
        if (t.direct && j->mode == ZARR__ENGINE_WRITE) {
            ZARR_TRY(store_chunk(j, w, &t, j->buf + t.boff * j->es));
            return ZARR_OK;
        }
    }
    else if (j->mode == ZARR__ENGINE_WRITE && !j->vlen && (j->use_cache || cache_nonempty(j->a))) {
        /* Partial chunk through the cache: modify the cached chunk, store it when it is evicted or
         * flushed. */
        zarr__cent *e;
        bool        missing;
        ZARR_TRY(cache_acquire(j, w, &t, j->use_cache, &e, &missing));
        if (e) {
            memset(&c, 0, sizeof c);
            c.j        = j;
            c.to_chunk = true;
            c.chunk    = e->data;
            c.buf      = j->buf;
            memcpy(c.dc, t.dc, sizeof c.dc);
            rc = copy_chunk(&c); /* non-vlen: cannot fail */
            cache_release(j->a, e, true);
            ZARR_TRY(rc);
            return ZARR_OK;
        }
    }
    ZARR_TRY(zarr_buf_resize(&w->chunk, j->chunk_bytes));
    cb = w->chunk.data;
    if (!t.full) {
        /* Read-modify-write. */
        rc = st_get(j, t.key, &w->enc);
        if (rc == ZARR_ENOTFOUND) {
            if (j->mode == ZARR__ENGINE_WRITE_FILL)
                return ZARR_OK; /* missing chunks already read as fill */
            rc = ZARR_OK;
            if (j->vlen)
                ZARR_TRY(zarr_dtype_copy_elems(j->m->dtype, cb, j->fill_chunk, j->chunk_nelem, false));
            else
                memcpy(cb, j->fill_chunk, j->chunk_bytes);
        }
        else if (rc != ZARR_OK)
            goto done;
        else if (j->identity) {
            if (w->enc.size != j->chunk_bytes)
                ZARR_FAIL(ZARR_ECODEC, "chunk holds %zu bytes, expected %zu", w->enc.size, j->chunk_bytes);
            memcpy(cb, w->enc.data, j->chunk_bytes);
        }
        else {
            zarr_codec_ctx *ctx = zarr__worker_ctx(w);
            if (!ctx)
                ZARR_FAIL(ZARR_ENOMEM, "out of memory creating a codec context");
            /* On failure decode frees what it allocated; cb is not ours to clear then. */
            ZARR_TRY(zarr_chain_decode(j->m->chain, ctx, w->enc.data, w->enc.size, cb, j->m->chunks));
        }
        owned = j->vlen;
    }
    else if (!t.edge) {
        if (j->vlen)
            memset(cb, 0, j->chunk_bytes); /* NULL payloads until gathered, so a failure can clear */
    }
    else {
        if (j->vlen) {
            ZARR_TRY(zarr_dtype_copy_elems(j->m->dtype, cb, j->fill_chunk, j->chunk_nelem, false));
            owned = true;
        }
        else
            memcpy(cb, j->fill_chunk, j->chunk_bytes);
    }
    memset(&c, 0, sizeof c);
    c.j        = j;
    c.to_chunk = true;
    c.dst_init = owned;
    c.chunk    = cb;
    c.bcast    = j->mode == ZARR__ENGINE_WRITE_FILL ? j->fill_chunk : NULL;
    c.buf      = j->buf;
    memcpy(c.dc, t.dc, sizeof c.dc);
    rc = copy_chunk(&c);
    if (j->vlen)
        owned = true; /* whole chunk now owned (fully covered non-edge chunks were written in full) */
    ZARR_TRY(rc);
    ZARR_TRY(store_chunk(j, w, &t, cb));
done:
    if (owned)
        zarr_dtype_clear_elems(j->m->dtype, cb, j->chunk_nelem);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't write chunk '%s' of array '/%s': ", t.key, j->a->path);
    return ZARR_OK;
}

static int
read_task(void *arg, size_t i, int worker)
{
    const job    *j = arg;
    zarr__worker *w = zarr__pool_worker(j->pool, worker);
    tchunk        t;
    copier        c;
    int           rc    = ZARR_OK;
    bool          owned = false;
    uint8_t      *cb    = NULL;

    if (!w)
        return zarr_error(ZARR_ENOMEM, "out of memory allocating worker scratch");
    if ((rc = task_setup(j, i, &t)) != ZARR_OK)
        return rc;
    memset(&c, 0, sizeof c);
    c.j   = j;
    c.buf = j->buf;
    memcpy(c.dc, t.dc, sizeof c.dc);
    if (!j->vlen && ((j->use_cache && !t.full) || cache_nonempty(j->a))) {
        /* Cached chunks are newer than the store. Partial-chunk reads fill the cache; whole-chunk
         * reads only look. */
        zarr__cent *e;
        bool        missing;
        ZARR_TRY(cache_acquire(j, w, &t, j->use_cache && !t.full, &e, &missing));
        if (e) {
            if (t.direct)
                memcpy(j->buf + t.boff * j->es, e->data, j->chunk_bytes);
            else {
                c.chunk = e->data;
                rc      = copy_chunk(&c);
            }
            cache_release(j->a, e, false);
            ZARR_TRY(rc);
            return ZARR_OK;
        }
        if (missing) {
            if (t.direct)
                memcpy(j->buf + t.boff * j->es, j->fill_chunk, j->chunk_bytes);
            else {
                c.chunk = (uint8_t *)j->fill_chunk; /* only read from */
                ZARR_TRY(copy_chunk(&c));
            }
            return ZARR_OK;
        }
    }
    if (t.direct && j->read_into) {
        /* Uncompressed chunk, contiguous in the caller's buffer: the store reads straight into it. */
        rc = j->read_into(j->store, t.key, j->buf + t.boff * j->es, j->chunk_bytes);
        if (rc == ZARR_ENOTFOUND) {
            zarr_error_clear();
            memcpy(j->buf + t.boff * j->es, j->fill_chunk, j->chunk_bytes);
            return ZARR_OK;
        }
        ZARR_TRY(rc);
        return ZARR_OK;
    }
    rc = st_get(j, t.key, &w->enc);
    if (rc == ZARR_ENOTFOUND) {
        rc = ZARR_OK;
        if (t.direct && !j->vlen) {
            memcpy(j->buf + t.boff * j->es, j->fill_chunk, j->chunk_bytes);
            return ZARR_OK;
        }
        c.chunk = (uint8_t *)j->fill_chunk; /* only read from */
        ZARR_TRY(copy_chunk(&c));
        return ZARR_OK;
    }
    ZARR_TRY(rc);
    if (j->identity) {
        if (w->enc.size != j->chunk_bytes)
            ZARR_FAIL(ZARR_ECODEC, "chunk holds %zu bytes, expected %zu", w->enc.size, j->chunk_bytes);
        if (t.direct) {
            memcpy(j->buf + t.boff * j->es, w->enc.data, j->chunk_bytes);
            return ZARR_OK;
        }
        c.chunk = w->enc.data;
        ZARR_TRY(copy_chunk(&c));
        return ZARR_OK;
    }
    {
        zarr_codec_ctx *ctx = zarr__worker_ctx(w);
        if (!ctx)
            ZARR_FAIL(ZARR_ENOMEM, "out of memory creating a codec context");
        if (t.direct)
            ZARR_TRY(zarr_chain_decode(j->m->chain, ctx, w->enc.data, w->enc.size, j->buf + t.boff * j->es,
                                       j->m->chunks));
        else {
            ZARR_TRY(zarr_buf_resize(&w->chunk, j->chunk_bytes));
            cb = w->chunk.data;
            ZARR_TRY(zarr_chain_decode(j->m->chain, ctx, w->enc.data, w->enc.size, cb, j->m->chunks));
            owned   = j->vlen;
            c.chunk = cb;
            ZARR_TRY(copy_chunk(&c));
        }
    }
done:
    if (owned)
        zarr_dtype_clear_elems(j->m->dtype, cb, j->chunk_nelem);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't read chunk '%s' of array '/%s': ", t.key, j->a->path);
    return ZARR_OK;
}

/* ---- entry points ---- */

int
zarr__engine_run(zarr_array *a, const zarr_region *r, void *buf, zarr__engine_mode mode)
{
    job      j;
    int      rc    = ZARR_OK;
    uint64_t nelem = 1, ntasks = 1, bytes;

    memset(&j, 0, sizeof j);
    if (!a || !r)
        return zarr_error(ZARR_EINVAL, "array and region must not be NULL");
    j.a    = a;
    j.m    = a->meta;
    j.mode = mode;
    j.buf  = buf;
    j.nd   = j.m->ndim;
    j.es   = j.m->dtype->size;
    if (j.nd < 0 || j.nd > ZARR_MAX_DIMS || j.es == 0)
        ZARR_FAIL(ZARR_EMETA, "array '/%s' has an invalid rank or element size", a->path);

    /* Validate the region and the chunk shape. */
    j.chunk_nelem = 1;
    for (int d = 0; d < j.nd; d++) {
        uint64_t start = r->start[d], stride = r->stride[d], count = r->count[d], block = r->block[d], last;
        uint64_t chunk = j.m->chunks[d];
        if (chunk == 0)
            ZARR_FAIL(ZARR_EMETA, "array '/%s' has a zero chunk size in dimension %d", a->path, d);
        if (!zarr__mul_ok(j.chunk_nelem, chunk, &j.chunk_nelem))
            ZARR_FAIL(ZARR_EOVERFLOW, "chunk size of array '/%s' overflows", a->path);
        if (block == 0)
            ZARR_FAIL(ZARR_EINVAL, "region block is 0 in dimension %d of '/%s' (use 1)", d, a->path);
        if (count > 1 && stride < block)
            ZARR_FAIL(ZARR_EINVAL,
                      "region blocks overlap in dimension %d of '/%s' (stride %llu < block %llu)", d, a->path,
                      (unsigned long long)stride, (unsigned long long)block);
        if (!zarr__mul_ok(count, block, &j.d[d].bext) || !zarr__mul_ok(nelem, j.d[d].bext, &nelem))
            ZARR_FAIL(ZARR_EOVERFLOW, "region size overflows in dimension %d of '/%s'", d, a->path);
        if (count == 0)
            continue;
        if (!zarr__mul_ok(count - 1, stride, &last) || !zarr__add_ok(last, start, &last) ||
            !zarr__add_ok(last, block - 1, &last) || last >= j.m->shape[d])
            ZARR_FAIL(
                ZARR_EINVAL,
                "region exceeds dimension %d of '/%s' (start %llu, stride %llu, count %llu, block %llu, "
                "extent %llu)",
                d, a->path, (unsigned long long)start, (unsigned long long)stride, (unsigned long long)count,
                (unsigned long long)block, (unsigned long long)j.m->shape[d]);
    }
    if (nelem == 0)
        return ZARR_OK;
    if (!zarr__mul_ok(j.chunk_nelem, j.es, &bytes) || bytes > SIZE_MAX ||
        !zarr__mul_ok(nelem, j.es, &bytes) || bytes > SIZE_MAX)
        ZARR_FAIL(ZARR_EOVERFLOW, "chunk or region byte size of '/%s' overflows", a->path);
    j.chunk_bytes = (size_t)(j.chunk_nelem * j.es);
    if (!buf && mode != ZARR__ENGINE_WRITE_FILL)
        ZARR_FAIL(ZARR_EINVAL, "buffer is NULL for a non-empty region of '/%s'", a->path);
    if (mode != ZARR__ENGINE_READ && a->store->readonly)
        ZARR_FAIL(ZARR_EREADONLY, "can't write array '/%s': the store is read-only", a->path);

    /* Plan. */
    {
        uint64_t bs = 1, cs = 1;
        for (int d = j.nd - 1; d >= 0; d--) {
            j.d[d].bstride = bs;
            j.d[d].cstride = cs;
            bs *= j.d[d].bext;
            cs *= j.m->chunks[d];
        }
    }
    for (int d = 0; d < j.nd; d++) {
        ZARR_TRY(plan_dim(&j.d[d], r->start[d], r->count[d] > 1 ? r->stride[d] : r->block[d], r->count[d],
                          r->block[d], j.m->chunks[d], j.m->shape[d]));
        if (!zarr__mul_ok(ntasks, j.d[d].nchunks, &ntasks) || ntasks > SIZE_MAX)
            ZARR_FAIL(ZARR_EOVERFLOW, "too many chunks in one request on '/%s'", a->path);
    }
    ZARR_TRY(zarr__array_fill_chunk(a));
    j.fill_chunk  = a->fill_chunk;
    j.identity    = zarr_chain_is_identity(j.m->chain);
    j.vlen        = zarr_dtype_has_vlen(j.m->dtype);
    j.write_empty = a->opts.write_empty_chunks;
    j.has_fill    = has_fill(j.m);
    j.pool        = a->opts.pool ? a->opts.pool : zarr_pool_default();
    j.use_cache   = mode != ZARR__ENGINE_WRITE_FILL && !j.vlen && a->opts.cache_bytes >= j.chunk_bytes;
    job_key_setup(&j);

    {
        /* Inline when the job is small: chunk bytes touched below the threshold, or a single chunk.
         * Chunks already in the cache cost only the copy of the selection (the W3 box writes: 4
         * cached chunks are ~2 KB of copying, far below a worker wake-up). */
        uint64_t work;
        bool     small = !zarr__mul_ok(ntasks, j.chunk_bytes, &work) ? false : work < a->opts.inline_bytes;
        if (!small && ntasks <= 64 && !j.vlen && cache_nonempty(a)) {
            uint64_t miss = 0;
            tchunk   t;
            for (size_t i = 0; i < (size_t)ntasks; i++) {
                if (task_setup(&j, i, &t) != ZARR_OK) {
                    zarr_error_clear();
                    miss = ntasks;
                    break;
                }
                pthread_mutex_lock(&a->cache.mu);
                miss += cache_find(&a->cache, t.key, key_hash(t.key)) == NULL;
                pthread_mutex_unlock(&a->cache.mu);
            }
            small = miss * j.chunk_bytes + nelem * j.es < a->opts.inline_bytes;
        }
        rc = zarr_pool_run(j.pool, mode == ZARR__ENGINE_READ ? read_task : write_task, &j, (size_t)ntasks,
                           small || ntasks == 1);
    }
done:
    job_free(&j);
    return rc;
}

int
zarr_array_write(zarr_array *a, const zarr_region *r, const void *buf)
{
    return zarr__engine_run(a, r, (void *)buf, ZARR__ENGINE_WRITE);
}

int
zarr_array_read(zarr_array *a, const zarr_region *r, void *buf)
{
    return zarr__engine_run(a, r, buf, ZARR__ENGINE_READ);
}

void
zarr_region_all(const zarr_array_meta *m, zarr_region *r)
{
    memset(r, 0, sizeof *r);
    for (int d = 0; m && d < m->ndim && d < ZARR_MAX_DIMS; d++) {
        r->stride[d] = 1;
        r->count[d]  = m->shape[d];
        r->block[d]  = 1;
    }
}

void
zarr_region_box(int ndim, const uint64_t *start, const uint64_t *count, zarr_region *r)
{
    memset(r, 0, sizeof *r);
    for (int d = 0; d < ndim && d < ZARR_MAX_DIMS; d++) {
        r->start[d]  = start ? start[d] : 0;
        r->stride[d] = 1;
        r->count[d]  = count[d];
        r->block[d]  = 1;
    }
}

uint64_t
zarr_region_nelem(int ndim, const zarr_region *r)
{
    uint64_t n = 1;
    for (int d = 0; d < ndim && d < ZARR_MAX_DIMS; d++)
        if (!zarr__mul_ok(n, r->count[d], &n) || !zarr__mul_ok(n, r->block[d], &n))
            return UINT64_MAX;
    return n;
}
