/*
 * zarr_store_count.h: a counting store, for tests and benchmarks that assert how the core uses a
 * store ("a whole-shard write is one set per shard", "a one-element read is one index get plus one
 * range get"). Part of the core's public interface but meant for tests: nothing in the core or the
 * connector uses it. See zarr.h for the conventions.
 *
 * A counting store forwards every operation to an inner store (zarr_store_fwd, zarr.h) and counts
 * each call that reaches it, per operation, before forwarding: what the caller asked, not how the
 * inner store answers it (a get_many to a counting store is one get_many call of `n` items, whatever
 * the inner store does with it). Counters are updated atomically and may be read while other threads
 * use the store.
 */
#ifndef H5ZARR_ZARR_STORE_COUNT_H
#define H5ZARR_ZARR_STORE_COUNT_H

#include "h5zarr/zarr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Calls per operation. Reads: get, get_range, get_into and get_many (calls; their items in
 * get_many_items, of which get_many_suffix were suffix reads); bytes_read sums the bytes every
 * successful read returned (get_many: its OK items). Writes: set (every value stored on its own: a
 * set call, or a writer committed), set_many (calls; items in set_many_items), writer_open and
 * writer_write (values started in pieces, and their pieces); bytes_written sums the bytes of every
 * write asked for. */
typedef struct zarr_store_counts {
    uint64_t get, get_range, get_into, get_many, get_many_items, get_many_suffix;
    uint64_t set, set_many, set_many_items;
    uint64_t del, del_prefix, list, list_keys, exists, size, mtime, rename, flush;
    uint64_t writer_open, writer_write;
    uint64_t sync; /* sync passes that reached the store (zarr_store_sync calls it on durable stores only) */
    uint64_t bytes_read, bytes_written;
} zarr_store_counts;

typedef struct zarr_store_count {
    zarr_store_fwd    fwd; /* the store: pass zarr_store_count_store(c) (or &c->fwd.base) */
    zarr_store_counts n;   /* read with zarr_store_count_read */
} zarr_store_count;

/* A counting store around `inner`; TAKES the caller's reference to `inner` (closed with the counting
 * store, and on failure). `prefers_batches` sets the counting store's own zarr_store.prefers_batches
 * (the engine then batches its gets and sets for it, whatever the inner store prefers). `*out` is new:
 * close it with zarr_store_close(zarr_store_count_store(*out)). */
int zarr_store_count_new(zarr_store *inner, bool prefers_batches, zarr_store_count **out);
/* The store to hand to the core (borrowed: owned by `c`). */
zarr_store *zarr_store_count_store(zarr_store_count *c);
/* A snapshot of the counters / sets them all to zero. */
void zarr_store_count_read(const zarr_store_count *c, zarr_store_counts *out);
void zarr_store_count_reset(zarr_store_count *c);

#ifdef __cplusplus
}
#endif
#endif /* H5ZARR_ZARR_STORE_COUNT_H */
