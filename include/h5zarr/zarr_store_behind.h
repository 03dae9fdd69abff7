/*
 * zarr_store_behind.h: write-behind for stores whose requests have latency (object stores: S3). A
 * write-behind store wraps such a store (zarr_store_fwd, zarr.h): a set or set_many returns once the
 * value is copied into a queue, and a sender thread of its own stores the queue on the inner store as
 * batches (one set_many each, which the network stores run with H5ZARR_HTTP_INFLIGHT requests in
 * flight), so the PUTs of many calls and many arrays overlap each other and the caller's own work. A
 * memory budget bounds the queued bytes: a set that would pass it waits until a batch has been stored
 * (backpressure, never an error). A del or del_many is queued the same way (an item without a value,
 * stored with the inner store's del_many): a key's delete and writes replace each other while queued,
 * so the last call on a key is what the store keeps. Everything that must observe the store waits
 * first: a read, size or exists of a queued key waits until that key is stored (or deleted);
 * del_prefix, list, list_keys, rename, flush, sync and close wait until the whole queue is stored, so
 * nothing overtakes a queued write of the same keys. The first failed write or delete (after the inner
 * store's own retries) is kept with its key and
 * message: flush returns it (and every later flush), queued writes not yet sent are dropped and later
 * sets refused with it, so no write is reported stored that is not. Values are stored whole by the
 * inner store's atomic set, so a failure leaves each key with its old value or its new one.
 *
 * Used by the connector for writable stores that say prefers_batches (vol/file.c); see README
 * "Object storage" for the semantics beside HDF5's own.
 */
#ifndef H5ZARR_ZARR_STORE_BEHIND_H
#define H5ZARR_ZARR_STORE_BEHIND_H

#include "h5zarr/zarr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zarr_store_behind zarr_store_behind;

/* What a write-behind store has done since it was opened (tests and benchmarks). */
typedef struct zarr_store_behind_stats {
    uint64_t budget;     /* the memory budget in bytes */
    uint64_t queued;     /* bytes queued now (waiting or being stored) */
    uint64_t max_queued; /* the most bytes ever queued at once */
    uint64_t batches;    /* set_many calls made on the inner store */
    uint64_t items;      /* values stored through them */
    uint64_t waits;      /* sets that waited for the budget */
} zarr_store_behind_stats;

/* The budget from the environment: H5ZARR_WRITE_BEHIND_MB (MiB, 0..65536; default 256); 0 means no
 * write-behind (the connector then uses the store as it is). */
uint64_t zarr_store_behind_budget_env(void);

/* A write-behind store around `inner` with a budget of `budget` bytes (a value larger than the budget
 * is still queued, alone). Takes a reference of its own to `inner` (the caller keeps its own) and
 * starts the sender thread. `*out` is new: hand zarr_store_behind_store(*out) to the core and close
 * that with zarr_store_close (which stores the queue first; a failure there can only be dropped:
 * callers that care flush first). ZARR_EINVAL (NULL, a read-only store), ZARR_ENOMEM, ZARR_EIO (no
 * thread) with a message; nothing is changed then. */
int zarr_store_behind_new(zarr_store *inner, uint64_t budget, zarr_store_behind **out);
/* The store (borrowed: owned by the store's own reference count). */
zarr_store *zarr_store_behind_store(zarr_store_behind *b);
/* Hold: while one or more holds are in force the sender starts no batch (unless a caller waits for
 * the queue, or the budget is full), so the values queued meanwhile go out together, as one batch,
 * at the release. Both accept NULL (no-ops). */
void zarr_store_behind_hold(zarr_store_behind *b);
void zarr_store_behind_release(zarr_store_behind *b);
/* Waits until everything queued is stored; ZARR_OK, or the first failed write's code with its message
 * (the same as the store's flush, without flushing the inner store). Accepts NULL (ZARR_OK). */
int zarr_store_behind_drain(zarr_store_behind *b);
/* The first failed write: its code (ZARR_OK: none) and key, copied into key[nkey] (may be NULL). */
int  zarr_store_behind_failed(zarr_store_behind *b, char *key, size_t nkey);
void zarr_store_behind_stats_get(zarr_store_behind *b, zarr_store_behind_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* H5ZARR_ZARR_STORE_BEHIND_H */
