/*
 * store_impl.h: internal declarations shared by the store sources (store.c, store_*.c) and the few
 * core files that still reach past the store interface. Not part of the public interface, and not the
 * engine's header (engine.h).
 */
#ifndef H5ZARR_ZARR_STORE_IMPL_H
#define H5ZARR_ZARR_STORE_IMPL_H

#include "internal.h"

/* Validates a store key: non-empty, no leading '/', no empty, "." or ".." components, no backslash.
 * Returns ZARR_OK or ZARR_EINVAL with a message naming the key. `allow_empty` accepts "" (the root,
 * for list and del_prefix). */
int zarr__store_check_key(const char *key, bool allow_empty);
/* The immediate children of a prefix, gathered from flat keys (memory and zip stores): add every key
 * (keys outside the prefix are ignored), then emit each child name once, in byte order, as a directory
 * when some key continues below it. emit frees the list; free alone is for error paths. */
typedef struct zarr__children {
    struct zarr__child *v;
    size_t              n, cap;
} zarr__children;
int  zarr__children_add(zarr__children *c, const char *prefix, size_t plen, const char *key);
int  zarr__children_emit(zarr__children *c, zarr_list_cb cb, void *ud);
void zarr__children_free(zarr__children *c);
/* Size in bytes of the value at `key` (ZARR_ENOTFOUND if absent). Uses stat for the directory store
 * and the map for the memory store, a get otherwise. */
int zarr__store_size(zarr_store *s, const char *key, uint64_t *size);
/* Implementation hooks for zarr__store_size (defined in store_dir.c / store_mem.c). */
int zarr__store_dir_size(zarr_store *s, const char *key, uint64_t *size);
int zarr__store_mem_size(zarr_store *s, const char *key, uint64_t *size);
/* Calls `cb` for every key of a memory store with its value (under the store's read lock: `cb` must
 * not use the store). Stops at and returns the first non-zero `cb` result. */
int zarr__store_mem_foreach(zarr_store *s, int (*cb)(const char *key, const void *data, size_t n, void *ud),
                            void       *ud);
/* Reads the value at `key` straight into `dst`, which holds exactly `n` bytes (the engine's zero-copy
 * read of an uncompressed chunk: no intermediate buffer). ZARR_ENOTFOUND if absent, ZARR_ECODEC if the
 * value has another size (dst may then be partly overwritten). `key` must be valid (not checked). */
int zarr__store_dir_read_into(zarr_store *s, const char *key, void *dst, size_t n);
int zarr__store_mem_read_into(zarr_store *s, const char *key, void *dst, size_t n);
/* zarr__store_get_quiet for the directory and memory stores. `key` must be valid (not checked). */
int                         zarr__store_dir_get_quiet(zarr_store *s, const char *key, zarr_buf *out);
int                         zarr__store_mem_get_quiet(zarr_store *s, const char *key, zarr_buf *out);
extern const zarr_store_ops zarr__store_dir_ops;
extern const zarr_store_ops zarr__store_mem_ops;
/* The directory store's atomic-write paths (store_dir.c): whether a write has gone through O_TMPFILE
 * + linkat, and forcing the fallbacks (tests, benchmarks): ZARR__DIR_LINK_PROC links the unnamed file
 * through /proc/self/fd (kernels before 6.10), ZARR__DIR_RENAME writes a named temporary and renames
 * it (filesystems without O_TMPFILE). */
enum { ZARR__DIR_LINK_PROC = 1, ZARR__DIR_RENAME = 2 };
bool zarr__store_dir_tmpfile_used(zarr_store *s);
void zarr__store_dir_force(zarr_store *s, int how);

/* Number of values in a memory store (for choosing between probing and a scan). */
size_t zarr__store_mem_count(zarr_store *s);

#endif
