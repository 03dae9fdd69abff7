/*
 * shard_cache.h: the per-array cache of decoded shard indexes (shard_cache.c), shared by the batched
 * executor (batch.c) and raw chunk access (chunk_raw.c). Not part of the public interface.
 */
#ifndef H5ZARR_ZARR_SHARD_CACHE_H
#define H5ZARR_ZARR_SHARD_CACHE_H

#include "engine.h"
#include "shard_format.h"

/* A decoded, validated shard index (zarr__shard_index_decode): ent[2 i], ent[2 i + 1] = offset and size
 * in the shard of inner chunk i (row-major over the shard's inner grid), both ZARR__SHARD_EMPTY when it
 * is not stored. Immutable once made; reference counted (zarr__sindex_release). */
typedef struct zarr__sindex {
    struct zarr__sindex *prev, *next; /* the cache's LRU list */
    uint64_t             h;
    uint64_t            *ent;    /* NULL when `absent` */
    uint64_t             total;  /* the shard's size in bytes, UINT64_MAX when not known */
    bool                 absent; /* the store has no shard: every inner chunk reads as fill */
    bool                 cached; /* in the cache's list */
    int                  refs;   /* under the cache's lock */
    size_t               bytes;
    char                 key[];
} zarr__sindex;

/* The cached index of shard `key`, with a reference for the caller, or NULL. */
zarr__sindex *zarr__sindex_get(zarr_array *a, const char *key);
/* Caches the index `ent` (taken, also on failure; NULL with `absent`) of shard `key`, replacing an
 * older one; returns it with a reference for the caller (NULL with a message when out of memory). */
zarr__sindex *zarr__sindex_put(zarr_array *a, const char *key, uint64_t *ent, size_t ninner, uint64_t total,
                               bool absent);
/* Drops the cached index of shard `key`, if any (its shard may have changed). */
void zarr__sindex_forget(zarr_array *a, const char *key);
/* Drops the caller's reference; accepts NULL. */
void zarr__sindex_release(zarr_array *a, zarr__sindex *e);
/* Frees the array's index cache; the next sharded job makes it anew. Only while no job runs on the
 * array (close, resize, discard). Accepts an array without one. */
void zarr__shard_state_free(zarr_array *a);

#endif
