/*
 * shard_index.c: shard indexes for the sharded fast path (shard.c): decoding and validating an index
 * read from a store, and the per-array cache of decoded indexes.
 *
 * An index is an untrusted document: every entry must be empty (both words 2^64-1) or lie inside the
 * shard's data region, and no two entries may overlap; the index codecs' checksum (crc32c) is checked
 * by the index chain. Errors name the shard key and, for entries, the inner chunk.
 *
 * The cache (a->shards) keeps decoded indexes while the array is open, least recently used first out,
 * bounded by bytes (SHARD_INDEX_CACHE_BYTES, at least a few entries). Entries are immutable and
 * reference counted: a job holds the indexes it uses while another thread may replace them. Like the
 * chunk cache it does not see changes made to the store behind an open array by other handles.
 */
#include "shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHARD_INDEX_CACHE_BYTES (8u << 20)
#define SHARD_INDEX_CACHE_MIN   8

typedef struct zarr__shard_state {
    pthread_mutex_t mu;
    zarr__sindex   *head, *tail; /* LRU list, head = most recent */
    size_t          n, bytes;
} zarr__shard_state;

int
zarr__span_cmp(const void *a, const void *b)
{
    const zarr__span *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off ? 1 : 0;
}

const char *
zarr__shard_inner_name(const zarr__shard_layout *l, size_t i, char *out, size_t cap)
{
    uint64_t c[ZARR_MAX_DIMS];
    size_t   k = 0;
    for (int d = l->ndim - 1; d >= 0; d--) {
        c[d] = i % l->grid[d];
        i /= l->grid[d];
    }
    out[0] = '\0';
    for (int d = 0; d < l->ndim && k < cap; d++) {
        int w = snprintf(out + k, cap - k, d ? "/%llu" : "%llu", (unsigned long long)c[d]);
        if (w < 0)
            break;
        k += (size_t)w;
    }
    return out;
}

int
zarr__sindex_decode(const zarr__shard_layout *l, zarr__worker *w, const char *key, const uint8_t *ix,
                    size_t n, uint64_t total, uint64_t **out)
{
    zarr_codec_ctx *ctx;
    uint64_t       *e  = NULL;
    zarr__span     *sp = NULL;
    uint64_t        lo = 0, hi = UINT64_MAX;
    size_t          ns = 0;
    char            nm[ZARR_MAX_DIMS * 21];
    int             rc = ZARR_OK;

    *out = NULL;
    if (n != l->index_bytes)
        ZARR_FAIL(ZARR_ECODEC,
                  "sharding_indexed shard '%s': the index has %zu bytes, expected %zu (truncated shard?)",
                  key, n, l->index_bytes);
    if (total != UINT64_MAX) {
        if (total < l->index_bytes)
            ZARR_FAIL(ZARR_ECODEC, "sharding_indexed shard '%s' has %llu bytes, less than its index of %zu",
                      key, (unsigned long long)total, l->index_bytes);
        lo = l->index_end ? 0 : l->index_bytes;
        hi = l->index_end ? total - l->index_bytes : total;
    }
    else if (!l->index_end)
        lo = l->index_bytes;
    if (!(ctx = zarr__worker_ctx(w)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory creating a codec context");
    if (!(e = malloc(l->ninner * 2 * sizeof *e)) || !(sp = malloc((l->ninner ? l->ninner : 1) * sizeof *sp)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory for the index of shard '%s'", key);
    if ((rc = zarr_chain_decode(l->index_chain, ctx, ix, n, e, l->grid)) != ZARR_OK) {
        zarr_error_wrap(rc, "sharding_indexed shard '%s': can't decode its index: ", key);
        goto done;
    }
    for (size_t i = 0; i < l->ninner; i++) {
        uint64_t off = e[2 * i], nb = e[2 * i + 1];
        if (off == UINT64_MAX && nb == UINT64_MAX)
            continue;
        if (off == UINT64_MAX || nb == UINT64_MAX || off < lo || off > hi || nb > hi - off) {
            zarr__shard_inner_name(l, i, nm, sizeof nm);
            ZARR_FAIL(ZARR_ECODEC,
                      "sharding_indexed shard '%s': the index entry of inner chunk %s (bytes %llu..+%llu) is "
                      "outside the "
                      "shard's data (bytes %llu..%llu)",
                      key, nm, (unsigned long long)off, (unsigned long long)nb, (unsigned long long)lo,
                      (unsigned long long)hi);
        }
        sp[ns++] = (zarr__span){off, off + nb, i};
    }
    qsort(sp, ns, sizeof *sp, zarr__span_cmp);
    for (size_t k = 1; k < ns; k++)
        if (sp[k].off < sp[k - 1].end) {
            char nm2[sizeof nm];
            zarr__shard_inner_name(l, sp[k - 1].i, nm, sizeof nm);
            zarr__shard_inner_name(l, sp[k].i, nm2, sizeof nm2);
            ZARR_FAIL(ZARR_ECODEC,
                      "sharding_indexed shard '%s': inner chunks %s and %s overlap in the shard's bytes", key,
                      nm, nm2);
        }
    *out = e;
    e    = NULL;
done:
    free(e);
    free(sp);
    return rc;
}

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
