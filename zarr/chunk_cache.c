/*
 * chunk_cache.c: the decoded-chunk cache of an array (a->cache): chunks in memory form that partial
 * writes modify and partial reads are served from, written back (through the one chunk-store path,
 * chunk_io.c) when evicted or flushed.
 *
 * Per array, keyed by chunk key, LRU, bounded by opts.cache_bytes. All map and list state is under
 * c->mu; an entry's data belongs to the one thread that set `busy` (others wait on c->cv), so chunk
 * copies, loads, encodes and store I/O run without the lock. Eviction picks the least recently used
 * non-busy entries; dirty victims stay in the map (busy, unlinked from the list) while the evicting
 * task writes them back, so a concurrent lookup of that chunk waits instead of reading a stale store
 * value. c->n is also read without the lock (atomically) so that jobs on an array whose cache is empty
 * (every whole-chunk W1 job) pay one load and nothing else.
 */
#include "job.h"
#include "shard_cache.h" /* zarr__shard_state_free */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

typedef zarr__job    job;
typedef zarr__tchunk tchunk;

#define CACHE_MIN_SLOTS 8 /* doubled as entries come: an array that holds its small writes has one or two */
/* Held writes (zarr_array_hold_writes) of all arrays together: at most this many bytes reserved (arrays
 * give theirs back when their cache is flushed or dropped). */
#define ZARR__HELD_MAX ((uint64_t)64 << 20)

static uint64_t held_total; /* atomic: bytes reserved by every array's held writes */

bool
zarr__cache_hold(zarr_array *a, uint64_t bytes)
{
    uint64_t was = __atomic_fetch_add(&held_total, bytes, __ATOMIC_RELAXED);
    if (was + bytes > ZARR__HELD_MAX || was + bytes < was) {
        __atomic_fetch_sub(&held_total, bytes, __ATOMIC_RELAXED);
        return false;
    }
    __atomic_fetch_add(&a->held, (size_t)bytes, __ATOMIC_RELAXED);
    return true;
}

/* Gives back what array `a` reserved for held writes (its cache was flushed or dropped). */
static void
hold_return(zarr_array *a)
{
    size_t n = __atomic_exchange_n(&a->held, 0, __ATOMIC_RELAXED);
    if (n)
        __atomic_fetch_sub(&held_total, (uint64_t)n, __ATOMIC_RELAXED);
}

bool
zarr__cache_nonempty(zarr_array *a)
{
    return __atomic_load_n(&a->cache.n, __ATOMIC_ACQUIRE) != 0;
}

/* Maps a new entry's buffer in one call (outside the lock, by the thread that owns the entry) instead of
 * one page fault per page as the load fills it: MADV_POPULATE_WRITE (Linux 5.14). On a VM that hands
 * free memory back to its host a first touch costs 5-18 us per page; populating 64 KiB buffers this
 * way cut the cost of 4 MiB of new entries by 30-40% (bench/README.md, "W3 against native HDF5").
 * Advisory: a kernel without it says EINVAL once and is not asked again. */
static void
prefault(void *p, size_t n)
{
#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
    static int unsupported;
    uintptr_t  pg = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi;
    if (__atomic_load_n(&unsupported, __ATOMIC_RELAXED) || pg == 0 || pg == (uintptr_t)-1 || n < 4 * pg)
        return;
    lo = ((uintptr_t)p + pg - 1) & ~(pg - 1);
    hi = ((uintptr_t)p + n) & ~(pg - 1);
    if (hi > lo && madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) != 0 && errno == EINVAL)
        __atomic_store_n(&unsupported, 1, __ATOMIC_RELAXED);
#else
    (void)p;
    (void)n;
#endif
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
        zarr__chunk_mem_free(e->data, e->bytes);
        free(e);
    }
}

/* Encodes and stores one cached chunk (or deletes it when it equals the fill value and empty chunks
 * are not written). The caller owns `e` (busy); `w` is its worker scratch. */
static int
cache_writeback(zarr_array *a, zarr__worker *w, zarr__cent *e)
{
    zarr__cio io;
    int       rc;

    zarr__cio_of_array(&io, a);
    if (!w)
        rc = zarr_error(ZARR_ENOMEM, "out of memory allocating worker scratch");
    else
        rc = zarr__chunk_store(&io, w, e->key, e->data);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't write back cached chunk '%s' of array '/%s': ", e->key, a->path);
    e->dirty = false;
    return ZARR_OK;
}

int
zarr__cache_acquire(const job *j, zarr__worker *w, const tchunk *t, bool insert, zarr__cent **out,
                    bool *missing)
{
    zarr_array  *a = j->a;
    zarr__cache *c = &a->cache;
    uint64_t     h = t->has_hash ? t->hash : zarr__key_hash(t->key);
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
    while (c->bytes + j->io.chunk_bytes > cap && v) {
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
    if (c->bytes + j->io.chunk_bytes <= cap) {
        klen = strlen(t->key);
        if ((e = calloc(1, sizeof *e + klen + 1)) && (e->data = zarr__chunk_mem_alloc(j->io.chunk_bytes))) {
            memcpy(e->key, t->key, klen + 1);
            e->h     = h;
            e->bytes = j->io.chunk_bytes;
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
    prefault(e->data, j->io.chunk_bytes);
    if (j->hold && t->full) { /* held whole chunk: the job writes all of it (an edge chunk's tail: fill) */
        if (t->edge)
            memcpy(e->data, j->io.fill_chunk, j->io.chunk_bytes);
        *out = e;
        return ZARR_OK;
    }
    {
        const uint8_t *mem;
        rc       = zarr__chunk_load(&j->io, w, t->key, e->data, &mem);
        *missing = rc == ZARR_OK && !mem;
    }
    if (rc == ZARR_OK && *missing) {
        if (j->mode == ZARR__ENGINE_READ)
            rc = ZARR_ENOTFOUND; /* not inserted: reads of missing chunks come from the fill chunk */
        else {
            memcpy(e->data, j->io.fill_chunk, j->io.chunk_bytes);
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

void
zarr__cache_release(zarr_array *a, zarr__cent *e, bool dirtied)
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

void
zarr__cache_invalidate(zarr_array *a, const char *key)
{
    zarr__cache *c = &a->cache;
    zarr__cent  *e;
    pthread_mutex_lock(&c->mu);
    if ((e = cache_wait(c, key, zarr__key_hash(key)))) {
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

    if (!zarr__cache_nonempty(a)) {
        hold_return(a); /* what a write that found no room in it reserved */
        return ZARR_OK;
    }
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
        /* The chunks are claimed (busy) now, and a job of another thread holding the pool may be waiting
         * for exactly these chunks: waiting for the pool here would deadlock against it. So the pool's
         * threads write them only when the pool is free at this moment (zarr__pool_try_run never waits),
         * else this thread writes them all; a few bytes always go on this thread. */
        if (bytes < a->opts.inline_bytes)
            rc = zarr_pool_run(fj.pool, flush_task, &fj, n, true);
        else
            rc = zarr__pool_try_run(fj.pool, flush_task, &fj, n);
        pthread_mutex_lock(&c->mu);
        for (size_t k = 0; k < n; k++)
            fj.v[k]->busy = false; /* failed ones stay dirty */
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
    }
    free(fj.v);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't flush the chunk cache of array '/%s': ", a->path);
    hold_return(a);
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
    hold_return(a);
    zarr__shard_state_free(a);
}

uint64_t
zarr__cache_misses(zarr__job *j, size_t n)
{
    zarr__cache *c    = &j->a->cache;
    uint64_t     miss = 0;
    size_t       used = 0, len;
    tchunk       t;
    j->nkeys = 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < n; i++) {
        if (zarr__task_setup(j, i, &t, true) != ZARR_OK) {
            zarr_error_clear();
            miss = n;
            break;
        }
        t.hash = zarr__key_hash(t.key);
        miss += cache_find(c, t.key, t.hash) == NULL;
        /* kept for task i while they are the first tasks in a row and fit */
        len = strlen(t.key);
        if (j->nkeys == i && i < ZARR__KEY_MEMO && used + len + 1 <= sizeof j->key_text) {
            memcpy(j->key_text + used, t.key, len + 1);
            j->key_off[i]  = (uint16_t)used;
            j->key_len[i]  = (uint16_t)len;
            j->key_hash[i] = t.hash;
            used += len + 1;
            j->nkeys = i + 1;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return miss;
}
