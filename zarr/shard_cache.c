/*
 * shard_cache.c: the per-array cache of decoded shard indexes (a->shards), for the batched executor
 * (batch.c) and raw chunk access (chunk_raw.c). Indexes are decoded and validated by the shard format
 * (shard_format.c) before they are put here.
 *
 * The cache keeps decoded indexes while the array is open, least recently used first out, bounded by
 * bytes (SHARD_INDEX_CACHE_BYTES, at least a few entries). Entries are immutable and reference counted:
 * a job holds the indexes it uses while another thread may replace them. Like the chunk cache it does
 * not see changes made to the store behind an open array by other handles.
 */
#include "shard_cache.h"

#include <stdlib.h>
#include <string.h>

#define SHARD_INDEX_CACHE_BYTES (8u << 20)
#define SHARD_INDEX_CACHE_MIN   8

typedef struct zarr__shard_state {
    pthread_mutex_t mu;
    zarr__sindex   *head, *tail; /* LRU list, head = most recent */
    size_t          n, bytes;
} zarr__shard_state;

/* ---- the cache ---- */

static zarr__shard_state *
state_of(zarr_array *a)
{
    zarr__shard_state *s;
    pthread_mutex_lock(&a->lock);
    if (!(s = a->shards) && (s = calloc(1, sizeof *s))) {
        pthread_mutex_init(&s->mu, NULL);
        a->shards = s;
    }
    pthread_mutex_unlock(&a->lock);
    return s;
}

static void
lru_unlink(zarr__shard_state *s, zarr__sindex *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        s->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        s->tail = e->prev;
    e->prev = e->next = NULL;
}

static void
lru_push(zarr__shard_state *s, zarr__sindex *e)
{
    e->prev = NULL;
    e->next = s->head;
    if (s->head)
        s->head->prev = e;
    s->head = e;
    if (!s->tail)
        s->tail = e;
}

static void
sindex_free(zarr__sindex *e)
{
    if (e) {
        free(e->ent);
        free(e);
    }
}

/* Under mu: takes `x` out of the cache; it is freed now, or by its last reference. */
static void
uncache(zarr__shard_state *s, zarr__sindex *x)
{
    lru_unlink(s, x);
    s->n--;
    s->bytes -= x->bytes;
    x->cached = false;
    if (x->refs == 0)
        sindex_free(x);
}

/* Under mu: drops a reference; frees an entry that left the cache. */
static void
unref(zarr__sindex *e)
{
    if (--e->refs == 0 && !e->cached)
        sindex_free(e);
}

zarr__sindex *
zarr__sindex_get(zarr_array *a, const char *key)
{
    zarr__shard_state *s = state_of(a);
    uint64_t           h = zarr__key_hash(key);
    zarr__sindex      *e;

    if (!s)
        return NULL;
    pthread_mutex_lock(&s->mu);
    for (e = s->head; e; e = e->next)
        if (e->h == h && strcmp(e->key, key) == 0)
            break;
    if (e) {
        lru_unlink(s, e);
        lru_push(s, e);
        e->refs++;
    }
    pthread_mutex_unlock(&s->mu);
    return e;
}

zarr__sindex *
zarr__sindex_put(zarr_array *a, const char *key, uint64_t *ent, size_t ninner, uint64_t total, bool absent)
{
    zarr__shard_state *s    = state_of(a);
    size_t             klen = strlen(key), bytes = ninner * 16 + sizeof(zarr__sindex) + klen;
    zarr__sindex      *e = calloc(1, sizeof *e + klen + 1), *x;

    if (!e) {
        free(ent);
        zarr_error(ZARR_ENOMEM, "out of memory caching the index of shard '%s'", key);
        return NULL;
    }
    memcpy(e->key, key, klen + 1);
    e->h      = zarr__key_hash(key);
    e->ent    = ent;
    e->total  = total;
    e->absent = absent;
    e->bytes  = bytes;
    e->refs   = 1; /* the caller's */
    if (!s)
        return e; /* uncached: the caller's reference only */
    pthread_mutex_lock(&s->mu);
    for (x = s->head; x; x = x->next)
        if (x->h == e->h && strcmp(x->key, key) == 0) {
            uncache(s, x);
            break;
        }
    while (s->tail && s->n >= SHARD_INDEX_CACHE_MIN && s->bytes + bytes > SHARD_INDEX_CACHE_BYTES) {
        x = s->tail;
        uncache(s, x);
    }
    e->cached = true;
    lru_push(s, e);
    s->n++;
    s->bytes += bytes;
    pthread_mutex_unlock(&s->mu);
    return e;
}

void
zarr__sindex_forget(zarr_array *a, const char *key)
{
    zarr__shard_state *s = a->shards;
    uint64_t           h = zarr__key_hash(key);
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    for (zarr__sindex *x = s->head; x; x = x->next)
        if (x->h == h && strcmp(x->key, key) == 0) {
            uncache(s, x);
            break;
        }
    pthread_mutex_unlock(&s->mu);
}

void
zarr__sindex_release(zarr_array *a, zarr__sindex *e)
{
    zarr__shard_state *s = a->shards;
    if (!e)
        return;
    if (!s) {
        if (--e->refs == 0)
            sindex_free(e);
        return;
    }
    pthread_mutex_lock(&s->mu);
    unref(e);
    pthread_mutex_unlock(&s->mu);
}

void
zarr__shard_state_free(zarr_array *a)
{
    zarr__shard_state *s = a ? a->shards : NULL;
    if (!s)
        return;
    for (zarr__sindex *e = s->head, *ne; e; e = ne) {
        ne = e->next;
        sindex_free(e); /* no job runs: no references are held */
    }
    pthread_mutex_destroy(&s->mu);
    free(s);
    a->shards = NULL;
}
