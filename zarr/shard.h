/*
 * shard.h: internal declarations of the sharded fast path, shared by shard.c (the sharded job) and
 * shard_index.c (index decoding and the per-array index cache). Not part of the public interface.
 */
#ifndef H5ZARR_ZARR_SHARD_H
#define H5ZARR_ZARR_SHARD_H

#include "job.h"

/* A decoded, validated shard index: ent[2 i], ent[2 i + 1] = offset and size in the shard of inner
 * chunk i (row-major over the shard's inner grid), both UINT64_MAX when it is not stored. Immutable
 * once made; reference counted (zarr__sindex_release). */
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

/* Bytes [off, end) of a shard holding inner chunk or task `i`; zarr__span_cmp orders them by offset
 * (qsort), for the index's overlap check and for coalescing the ranges a read fetches. */
typedef struct zarr__span {
    uint64_t off, end;
    size_t   i;
} zarr__span;
int zarr__span_cmp(const void *a, const void *b);

/* "i/j/k": inner chunk `i` (row-major) of a shard of layout `l` as its position in the shard, for
 * messages; written into `out` (cap bytes), which is returned. */
const char *zarr__shard_inner_name(const zarr__shard_layout *l, size_t i, char *out, size_t cap);
/* Decodes and validates the encoded index `ix` (n bytes) of shard `key` whose size is `total`
 * (UINT64_MAX: not known; entries are then checked against the index's own place only). `*out`
 * (malloc'ed, 2 * ninner words) is the caller's. Errors name the shard key and the inner chunk. */
int zarr__sindex_decode(const zarr__shard_layout *l, zarr__worker *w, const char *key, const uint8_t *ix,
                        size_t n, uint64_t total, uint64_t **out);
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

#endif
