/*
 * store_impl.h: internal declarations shared by the store sources (store.c, store_*.c) and the
 * engine, which calls the optional operations' generic forms without re-checking keys. Not part of the
 * public interface, and not the engine's header (engine.h).
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
/* The optional operations with their generic fallbacks (store.c), for the public wrappers, the
 * forwarding ops (store_fwd.c) and the engine. `key`/`prefix` must be valid (not checked); a missing
 * key is a bare ZARR_ENOTFOUND (no message), other failures set one. Ownership as the zarr_store_*
 * function of the same name (zarr.h). */
int zarr__store_op_size(zarr_store *s, const char *key, uint64_t *size);
int zarr__store_op_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud);
int zarr__store_op_get_many(zarr_store *s, size_t n, zarr_store_req *reqs);
int zarr__store_op_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data,
                            const size_t *sizes, int *results);
int zarr__store_op_del_many(zarr_store *s, size_t n, const char *const *keys, int *results);
/* A read-ahead view of `s` (store_prefetch.c): the values at `keys` (valid, borrowed) fetched with one
 * get_many, then answered from memory by the view's get, get_range, get_into, size and exists (absent
 * ones as bare ZARR_ENOTFOUND, without a request); every other key and operation goes to `s`, and a
 * write through the view drops the answers it could make stale. `*out` is a new reference (close it
 * with zarr_store_close); it is `s` itself when there is nothing to gain (n < 2, or a store that does
 * not prefer batches). Failures other than absence are not kept (the store is asked again). */
int zarr__store_prefetch(zarr_store *s, size_t n, const char *const *keys, zarr_store **out);
/* The writer ops (zarr_store_ops.writer_*) of `s`, or their generic form when it has none
 * (store_writer.c): a handle from one goes back to the same store. */
int zarr__store_op_writer_open(zarr_store *s, const char *key, void **h);
int zarr__store_op_writer_write(zarr_store *s, void *h, uint64_t off, const void *data, size_t n);
int zarr__store_op_writer_close(zarr_store *s, void *h, bool commit);
/* The value at `key` straight into `dst`, which holds exactly `n` bytes (the engine's zero-copy read of
 * an uncompressed chunk): the store's get_into, else a get and a copy. ZARR_ENOTFOUND (no message) if
 * absent, ZARR_ECODEC if the value has another size (dst may then be partly overwritten). `key` must
 * be valid (not checked). */
int zarr__store_get_into(zarr_store *s, const char *key, void *dst, size_t n);
/* `n` bytes from `off` of the value at `key` straight into `dst`: the store's get_range_into, else a
 * get_range and a copy. ZARR_ENOTFOUND (no message) if absent, ZARR_ECODEC if the value ends before
 * off + n (dst may then be partly overwritten). `key` must be valid (not checked). */
int zarr__store_get_range_into(zarr_store *s, const char *key, uint64_t off, void *dst, size_t n);
/* zarr_store_size with a quiet miss: key checked, ZARR_ENOTFOUND without a message. */
int zarr__store_size(zarr_store *s, const char *key, uint64_t *size);
/* Calls `cb` for every key of a memory store with its value (under the store's read lock: `cb` must
 * not use the store). Stops at and returns the first non-zero `cb` result. `s` must be a memory store
 * (its creator knows: the zip store's contents). */
int zarr__store_mem_foreach(zarr_store *s, int (*cb)(const char *key, const void *data, size_t n, void *ud),
                            void       *ud);
/* The directory store's atomic-write paths (store_dir.c): whether a write has gone through O_TMPFILE
 * + linkat, and forcing the fallbacks (tests, benchmarks): ZARR__DIR_LINK_PROC links the unnamed file
 * through /proc/self/fd (kernels before 6.10), ZARR__DIR_RENAME writes a named temporary and renames
 * it (filesystems without O_TMPFILE). */
enum { ZARR__DIR_LINK_PROC = 1, ZARR__DIR_RENAME = 2 };
bool zarr__store_dir_tmpfile_used(zarr_store *s);
void zarr__store_dir_force(zarr_store *s, int how);
/* Replacements (store_dir.c, rename_first): how many commits linked under an existing key's name and got
 * EEXIST (0 for a store of another kind), how many replaced a value by exchange + unlink (not durable),
 * and the process id the store puts in temporary names (this process's, also in a forked child). */
uint64_t zarr__store_dir_link_misses(zarr_store *s);
uint64_t zarr__store_dir_exchanges(zarr_store *s);
uint64_t zarr__store_dir_tmp_pid(void);
/* The directory store's durable-mode counters (tests): file fdatasyncs and directory fsyncs it has
 * made since it was opened. Both 0 for a store of another kind. Either pointer may be NULL. */
void zarr__store_dir_sync_counts(zarr_store *s, uint64_t *files, uint64_t *dirs);

/* Trash (store_trash.c): what a directory store's clear moved aside, under a name
 * ZARR__TRASH_PREFIX "<pid>.<n>" in the root's parent, deleted by a background thread of the core.
 * zarr__trash_make makes an empty directory under a new trash name of this process in `parent` (its
 * first `pn` bytes; pn 0 is "/") with `mode`, its path into `out`: 0, or the errno of the failure
 * (ENAMETOOLONG when the name does not fit). zarr__trash_put queues the tree at `path` (copied) for
 * deletion (on the caller when no thread can start). zarr__trash_sweep claims and queues the trash of
 * dead processes in `parent`, once per parent directory and process. zarr__trash_rm_contents removes
 * everything inside the open directory `fd` (takes fd; `path` for messages): the directory store's
 * del_prefix uses it too. zarr__trash_counts: trees deleted and trees whose deletion failed (tests).
 * zarr__trash_starts: threads started so far (tests: the thread waits idle for more trash until
 * zarr_store_clear_wait, so a process starts it once, not once per clear). */
#define ZARR__TRASH_PREFIX     ".h5zarr-trash."
#define ZARR__TRASH_PREFIX_LEN (sizeof(ZARR__TRASH_PREFIX) - 1)
/* The status and message of a failed system call `what` on `path` (errno `err`): ZARR_ENOTFOUND,
 * ZARR_ENOMEM, ZARR_EREADONLY or ZARR_EIO, with "can't <what> '<path>': <strerror>" (store_trash.c;
 * the directory store's errors too). */
int      zarr__store_io_error(const char *what, const char *path, int err);
int      zarr__trash_make(const char *parent, size_t pn, unsigned mode, char *out, size_t size);
void     zarr__trash_put(const char *path);
void     zarr__trash_sweep(const char *parent, size_t pn);
int      zarr__trash_rm_contents(int fd, const char *path);
void     zarr__trash_counts(uint64_t *removed, uint64_t *failed);
unsigned zarr__trash_starts(void);
/* Spare directories (store_trash.c, "Spare directories"): the trash thread keeps the emptied folders of
 * trash trees in a pool in the trash's parent instead of removing them. zarr__trash_take_dir renames a
 * spare of the pool in `parent` (first `pn` bytes, as zarr__trash_make takes it) to `path` when the pool
 * has one of permission bits `mode` (ZARR__SPARE_MKDIR: what mkdir(path, 0777) would make): 0, path is
 * now an empty directory; else -1 with errno (EAGAIN: no spare; EEXIST, ENOENT, ENOTDIR as mkdir gives
 * them), and the caller makes it with mkdir. zarr__trash_spares: spares kept and taken so far, and in the
 * pool now (tests; any pointer may be NULL). */
#define ZARR__SPARE_MKDIR 0xffffffffu
int  zarr__trash_take_dir(const char *parent, size_t pn, const char *path, unsigned mode);
void zarr__trash_spares(uint64_t *kept, uint64_t *taken, unsigned *pooled);
/* Test hooks of the directory store's clear (zarr__store_dir_force): ZARR__DIR_NO_EXCHANGE answers the
 * exchange as unsupported (EINVAL: the store falls back to del_prefix), ZARR__DIR_FAIL_EXCHANGE makes it
 * fail with EIO (an injected fault: the clear fails, the store keeps its content). */
enum { ZARR__DIR_NO_EXCHANGE = 4, ZARR__DIR_FAIL_EXCHANGE = 8 };

/* The built-in URL schemes, one line each: X("scheme", opener, kind). This list is the registry's only
 * source (store.c builds its table from it, tests/core/test_store_seam.c checks every line), so a new
 * store is its file, zarr/store_<name>.c, defining the opener, plus one line here. An opener has
 * zarr_store_register_scheme's `open` signature (the whole URL, zarr_store_open's flags, a new store);
 * its declaration below is made from this list. `kind` says how the scheme meets the callers' own
 * registrations (zarr.h, zarr_store_open):
 *  - ZARR__SCHEME_REGISTERED: registered before the first open or registration, as a caller would
 *    register it: a registration replaces it, and removing the scheme (open NULL) removes it;
 *  - ZARR__SCHEME_FALLBACK: opens the names no registration claims: a registration hides it, and
 *    removing that registration brings it back. */
enum { ZARR__SCHEME_REGISTERED, ZARR__SCHEME_FALLBACK };
#define ZARR__STORE_SCHEMES(X)                                                                               \
    X("file", zarr__store_open_file_url, ZARR__SCHEME_FALLBACK)     /* store.c: directory or zip */          \
    X("memory", zarr__store_open_memory_url, ZARR__SCHEME_FALLBACK) /* store.c: named memory stores */       \
    X("http", zarr__store_open_http, ZARR__SCHEME_REGISTERED)       /* store_http.c */                       \
    X("https", zarr__store_open_http, ZARR__SCHEME_REGISTERED)      /* store_http.c */                       \
    X("s3", zarr__store_open_s3, ZARR__SCHEME_REGISTERED)           /* store_s3.c */                         \
    X("reference", zarr__store_open_reference_url, ZARR__SCHEME_REGISTERED) /* store_ref.c */

#define ZARR__SCHEME_DECLARE(name, open, kind) int open(const char *url, int flags, zarr_store **out);
ZARR__STORE_SCHEMES(ZARR__SCHEME_DECLARE)
#undef ZARR__SCHEME_DECLARE

#endif
