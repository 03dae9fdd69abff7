/*
 * zarr.h: the public interface of h5zarr's HDF5-free zarr core.
 *
 * The core reads and writes zarr v2 and v3 hierarchies: stores (where bytes live), data types,
 * codecs, metadata documents, and the batched chunk engine that turns one N-D region read or write
 * into one job over a persistent thread pool. Nothing here knows HDF5; the VOL connector (vol/) and
 * the filter plugins (filters/) are built on top of it.
 *
 * Conventions
 *  - Functions return an int status: ZARR_OK (0) or a negative zarr_status. On failure a message
 *    saying what failed, on which object and why is left in a thread-local buffer (zarr_errmsg()).
 *  - `_new/_free` and `_open/_close` pair up; every free/close accepts NULL.
 *  - Ownership is stated per function: "borrowed" means the callee keeps no reference beyond the
 *    call (or the caller keeps the object alive), "takes" means the callee frees it.
 *  - Store keys are '/'-separated paths relative to the store root, without a leading '/':
 *    "zarr.json", "grp/temp/zarr.json", "grp/temp/c/0/1". The root node's path is "".
 */
#ifndef H5ZARR_ZARR_H
#define H5ZARR_ZARR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZARR_MAX_DIMS 32

/* json-c's object type; the core's metadata keeps attributes and unknown keys as JSON trees. */
struct json_object;

/* ------------------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------------------ */
typedef enum zarr_status {
    ZARR_OK           = 0,
    ZARR_ENOMEM       = -1, /* allocation failed */
    ZARR_EIO          = -2, /* the store failed (errno text in the message) */
    ZARR_ENOTFOUND    = -3, /* key or node does not exist */
    ZARR_EINVAL       = -4, /* bad argument from the caller */
    ZARR_EMETA        = -5, /* malformed or inconsistent metadata */
    ZARR_ECODEC       = -6, /* a codec failed: corrupt, truncated or wrongly sized data */
    ZARR_EUNSUPPORTED = -7, /* valid zarr that this build cannot handle (unknown codec, dtype, ext.) */
    ZARR_EEXIST       = -8, /* node or key already exists */
    ZARR_EOVERFLOW    = -9, /* a size computation overflows */
    ZARR_EREADONLY    = -10 /* write to a read-only store */
} zarr_status;

/* The message of the last error set on this thread ("" if none). Valid until the next error. */
const char *zarr_errmsg(void);
/* Sets this thread's message (printf format) and returns `code`. */
int zarr_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepends context to this thread's message ("can't decode chunk c/0/1 of '/temp': " + old) and
 * returns `code`. */
int zarr_error_wrap(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clears this thread's message. */
void zarr_error_clear(void);
/* Copies this thread's message out / sets it from a saved copy (used to move a worker's error to the
 * calling thread). */
void zarr_error_save(char *dst, size_t n);
void zarr_error_restore(int code, const char *msg);

/* ------------------------------------------------------------------------------------------------
 * Growable byte buffers
 * ------------------------------------------------------------------------------------------------ */
typedef struct zarr_buf {
    uint8_t *data;
    size_t   size; /* bytes in use */
    size_t   cap;  /* bytes allocated */
} zarr_buf;

#define ZARR_BUF_INIT                                                                                        \
    {                                                                                                        \
        NULL, 0, 0                                                                                           \
    }
int  zarr_buf_reserve(zarr_buf *b, size_t cap); /* keeps contents */
int  zarr_buf_resize(zarr_buf *b, size_t size); /* reserve + set size */
int  zarr_buf_append(zarr_buf *b, const void *p, size_t n);
void zarr_buf_free(zarr_buf *b); /* frees data, resets to empty; accepts NULL */

/* ------------------------------------------------------------------------------------------------
 * Stores: where keys and values live. One interface for directory, memory, zip and (later) remote
 * stores: every byte the core and the connector read or write goes through it. All functions are
 * safe to call from several threads at once on one store.
 *
 * The interface is a table of operations (zarr_store_ops) behind the zarr_store_* functions, which
 * validate keys (no path escapes), refuse writes to read-only stores, format the message of a
 * missing key and fall back to a generic form for every optional operation a store leaves NULL. A
 * store is a struct whose first member is a `struct zarr_store`; its ops never see an invalid key.
 *
 * Contract of the ops:
 *  - An absent key is a bare ZARR_ENOTFOUND: get, get_range, size, get_into, exists, mtime and each
 *    get_many item return it WITHOUT setting a message (absence is an answer to probes, which make
 *    thousands of lookups; formatting costs more than the lookup). The public wrappers add the
 *    message ("no key 'a/zarr.json' in store '<url>'"). Every other failure sets a message.
 *  - A read past the end of a value (get_range, get_many) is ZARR_ECODEC with a message.
 *  - `out` buffers are reset (size 0) first and hold nothing useful after a failure.
 *  - set is atomic for stores where that applies: a reader sees the old or the new value.
 *  - Durability (zarr_store.durable, the open flag ZARR_STORE_DURABLE): by default nothing is synced
 *    to stable storage; a power loss (or an OS crash) can lose writes that returned, though never
 *    tears a value as readers see it while the system runs; after such a crash a value the file system
 *    had not written back yet may read as empty: a new key's, and a replaced one's (the directory store
 *    replaces by exchanging the new file with the key, not by renaming over it: store_dir.c).
 *    A durable store makes every write it performs recoverable once a sync pass
 *    (zarr_store_sync) that follows it returns: the directory store fdatasyncs each value's file
 *    before giving it its name (in the calling thread, so a job's workers sync their chunks in
 *    parallel) and records the directories whose entries changed (set, del, del_prefix, rename,
 *    created parent directories; a committed writer the same as a set); its sync op fsyncs each recorded
 * directory once and forgets it. The core runs one sync pass at the end of every call that writes: each
 * zarr_array_write job (after writing the chunk cache's dirty chunks, so a durable store's cache is
 * write-through), zarr_array_flush, zarr_array_resize, zarr_array_create, zarr_array_write_new,
 *    zarr_array_write_meta/_attrs,
 *    zarr_group_write/_attrs, zarr_node_delete, zarr_consolidate; also zarr_store_flush and
 *    zarr_store_close. The zip store writes its archive only on flush and close, and with
 *    durable syncs it (the file, then its directory) there; the memory store has nothing to sync.
 * Wrappers (views, counters, fault injection) forward what they do not change to an inner store
 * with zarr_store_fwd_init and the zarr_store_fwd_* ops below.
 * ------------------------------------------------------------------------------------------------ */
typedef struct zarr_store zarr_store;

/* Called once per immediate child name of a listed prefix; return non-zero to stop (that value is
 * returned by zarr_store_list). */
typedef int (*zarr_list_cb)(const char *name, bool is_dir, void *ud);
/* A list of names the caller owns (each malloc'ed, in `names`); zero-initialize it. */
typedef struct zarr_name_list {
    char **names;
    size_t n, cap;
} zarr_name_list;
/* A zarr_list_cb that adds the directories it is given (is_dir true: the child nodes of a listed group)
 * to the zarr_name_list `ud` (strdup'ed); ZARR_ENOMEM when out of memory (what was added stays). */
int zarr_name_list_collect_dir(const char *name, bool is_dir, void *ud);
/* Frees the names and the array; the list is empty again. NULL is accepted. */
void zarr_name_list_clear(zarr_name_list *l);
/* Called once per value key below a prefix (full key from the store root) with its size in bytes;
 * return non-zero to stop (that value is returned by zarr_store_list_keys). */
typedef int (*zarr_key_cb)(const char *key, uint64_t size, void *ud);

/* One item of a batched read (zarr_store_get_many). The caller fills key, off, len, suffix and out;
 * the store fills out, total and result. */
typedef struct zarr_store_req {
    const char *key;    /* borrowed */
    uint64_t    off;    /* first byte */
    uint64_t    len;    /* bytes wanted; UINT64_MAX = to the end of the value */
    bool        suffix; /* the last `len` bytes of the value instead (off ignored): one request on object
                         * stores; a suffix longer than the value gives the whole value */
    zarr_buf *out;      /* filled (reset first); caller-owned */
    uint64_t  total;    /* out: the value's full size when the store learnt it (always for suffix reads
                         * that succeed), else UINT64_MAX */
    int result;         /* out: ZARR_OK, ZARR_ENOTFOUND (absent: no message formatted), or an error with
                         * a message (ZARR_ECODEC for a range past the end of the value) */
    int64_t mtime;      /* out: the value's modification time (seconds since the epoch) when the store
                         * learnt it with the read (HTTP and S3: Last-Modified; directory store: the
                         * fstat of the read), else left as the caller set it (0 in the initializers
                         * that leave it out) */
} zarr_store_req;

typedef struct zarr_store_ops {
    const char *name; /* "dir", "mem", "zip", ... (for messages: no code takes a path by a store's kind) */
    /* Whole value into `out` (reset first). ZARR_ENOTFOUND (no message) if absent. */
    int (*get)(zarr_store *s, const char *key, zarr_buf *out);
    /* `len` bytes from `off` (len UINT64_MAX = to the end). Short values give ZARR_ECODEC. */
    int (*get_range)(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out);
    /* Stores a value, atomically (write then rename) for stores where that applies. */
    int (*set)(zarr_store *s, const char *key, const void *data, size_t n);
    /* Removes a key; absent is not an error. */
    int (*del)(zarr_store *s, const char *key);
    /* Removes every key below `prefix` ("a/b" removes "a/b/..." and the key "a/b" itself). */
    int (*del_prefix)(zarr_store *s, const char *prefix);
    /* Immediate children of `prefix` ("" = root): value keys and "directories". */
    int (*list)(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud);
    /* ZARR_OK if the key holds a value, ZARR_ENOTFOUND (no message) if not. */
    int (*exists)(zarr_store *s, const char *key);
    /* Optional batched reads (NULL: a loop over get / get_range / size in store.c). Fills every
     * item's out, total and result; returns ZARR_OK when every item is OK, else the first non-OK
     * item's result. Stores with latency keep many requests in flight. */
    int (*get_many)(zarr_store *s, size_t n, zarr_store_req *reqs);
    /* Optional batched writes (NULL: a loop over set). results[i] per item; returns the first error. */
    int (*set_many)(zarr_store *s, size_t n, const char *const *keys, const void *const *data,
                    const size_t *sizes, int *results);
    /* Moves a key or whole prefix (used by renames of nodes). */
    int (*rename)(zarr_store *s, const char *from, const char *to);
    int (*flush)(zarr_store *s);
    void (*destroy)(zarr_store *s); /* frees implementation state, s->url and s itself */
    /* Optional (NULL: not known): the last modification time of a value, seconds since the epoch. */
    int (*mtime)(zarr_store *s, const char *key, int64_t *sec);
    /* Optional (NULL: a get, measured): the size in bytes of the value at `key`, without reading it. */
    int (*size)(zarr_store *s, const char *key, uint64_t *size);
    /* Optional (NULL: a get and a copy): the whole value straight into `dst`, which holds exactly `n`
     * bytes (no intermediate buffer). ZARR_ENOTFOUND (no message) if absent, ZARR_ECODEC if the value
     * has another size (dst may then be partly overwritten). */
    int (*get_into)(zarr_store *s, const char *key, void *dst, size_t n);
    /* Optional (NULL: list walked level by level, with a size per key): every value key below
     * `prefix` ("" = all; "a/b" = the keys "a/b/..."), recursively, in any order, with its size. */
    int (*list_keys)(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud);
    /* Optional (NULL: nothing to remove): removes the store's own container once it holds no key
     * (the directory store's root folder, the zip store's archive file), for deleting a store. Absent
     * already is not an error. After it the handle may only be closed (closing writes nothing). */
    int (*remove_root)(zarr_store *s);
    /* Optional (NULL: nothing to sync): the sync pass of a durable store (zarr_store.durable): makes
     * every write, delete and rename this store performed so far durable (their data and the
     * directory entries naming them on stable storage), then forgets them; each directory (or file)
     * once, however many values it received. Called by zarr_store_sync only when `durable` is set.
     * A failure sets a message naming what could not be synced and keeps it for the next pass.
     * Wrappers must forward it (zarr_store_fwd_sync), or a durable inner store is never synced. */
    int (*sync)(zarr_store *s);
    /* Optional, all three or none (NULL: the pieces are gathered in memory and set at the commit): a
     * value written in pieces (zarr_store_writer_open). writer_open starts the value at `key` and
     * gives the store's handle; writer_write puts `n` bytes at offset `off` (several threads may
     * write distinct ranges of one value at once; bytes never written read as zero); writer_close
     * commits the value (commit true: from then on exactly as if set with the bytes written: atomic,
     * durable as set is) or drops it (false), and frees the handle either way. Until the commit
     * readers see the old value or none. Lets a writer store a value built by many threads without
     * holding it in memory: the engine writes each inner chunk of a shard as it is encoded (the
     * directory store: pwrite into the unnamed file that the commit links under the key). */
    int (*writer_open)(zarr_store *s, const char *key, void **h);
    int (*writer_write)(zarr_store *s, void *h, uint64_t off, const void *data, size_t n);
    int (*writer_close)(zarr_store *s, void *h, bool commit);
    /* Optional (NULL: a get_range and a copy): exactly `n` bytes from `off` of the value at `key`
     * straight into `dst` (no intermediate buffer: a sharded read of uncompressed inner chunks lands in
     * the caller's memory). ZARR_ENOTFOUND (no message) if absent, ZARR_ECODEC if the value ends before
     * off + n (dst may then be partly overwritten). */
    int (*get_range_into)(zarr_store *s, const char *key, uint64_t off, void *dst, size_t n);
    /* Optional batched deletes (NULL: a loop over del). results[i] per item (absent is no error);
     * returns the first error. Stores with latency keep many requests in flight. */
    int (*del_many)(zarr_store *s, size_t n, const char *const *keys, int *results);
    /* Optional (NULL: del_prefix ""): empties the store, as del_prefix "" does, for a create that
     * truncates. The directory store swaps its root with an empty directory (one atomic exchange) and
     * deletes the old content, renamed to a trash name beside it, on a background thread
     * (zarr_store_clear_wait). Afterwards the store holds no key; on failure it holds what it held. */
    int (*clear)(zarr_store *s);
} zarr_store_ops;

struct zarr_store {
    const zarr_store_ops *ops;
    int                   refcount; /* atomic */
    bool                  readonly;
    bool                  atomic_writes; /* dir store: write-then-rename (default true) */
    /* Set by a caller that knows the store holds no consolidated metadata (one it created, or a root
     * without any that it writes): lookups of absent nodes then skip reading every ancestor's
     * consolidated documents. zarr_consolidate clears it. Default false. */
    bool no_consolidated;
    /* Requests have latency (object stores): the engine gathers a job's gets and sets into
     * get_many / set_many calls instead of one call per chunk from each worker. False for the
     * directory, memory and zip stores (a call costs a few syscalls or a lock: workers call them
     * directly, in parallel). Set by the store's open function (wrappers copy their inner store's). */
    bool prefers_batches;
    /* Writes are made durable by sync passes (see "Durability" above); default false (nothing is
     * synced). Set by ZARR_STORE_DURABLE at open (zarr_store_open sets it for every store it opens,
     * whatever the opener did), copied by wrappers from their inner store; a caller may also set it
     * before the store's first write. */
    bool  durable;
    char *url; /* what it was opened as (owned) */
};

/* Open flags. ZARR_STORE_DURABLE (with RDWR/CREATE): zarr_store.durable (see "Durability").
 * ZARR_STORE_REF_PATHS and ZARR_STORE_REF_URLS (reference stores, zarr_store_open_ref): references may
 * also name absolute local paths outside the reference file's directory, and http(s):// and s3:// URLs. */
enum {
    ZARR_STORE_RDONLY    = 0,
    ZARR_STORE_RDWR      = 1,
    ZARR_STORE_CREATE    = 2,
    ZARR_STORE_DURABLE   = 4,
    ZARR_STORE_REF_PATHS = 8,
    ZARR_STORE_REF_URLS  = 16
};

/* Local directory store rooted at `path`. CREATE makes the directory (and parents). */
int zarr_store_open_dir(const char *path, int flags, zarr_store **out);
/* In-memory store (empty). */
int zarr_store_new_mem(zarr_store **out);
/* Zip store (read; write when flags has RDWR/CREATE, the archive is rewritten on close). */
int zarr_store_open_zip(const char *path, int flags, zarr_store **out);
/* Reference store (read-only; RDWR/CREATE are ZARR_EREADONLY): the kerchunk-style reference file (JSON,
 * version 1 or 0) at the local `path`, checked whole at open. Its keys are the file's keys; its values
 * are its inline strings ("base64:" ones decoded) or byte ranges of other files, read through the
 * directory, HTTP or S3 stores. Relative paths (and absolute ones below the file's directory) are
 * allowed; other absolute paths need ZARR_STORE_REF_PATHS, URLs ZARR_STORE_REF_URLS: reading a key whose
 * target is not allowed fails (ZARR_EINVAL) naming the key and why. docs/FORMAT.md "Reference stores". */
int zarr_store_open_ref(const char *path, int flags, zarr_store **out);
/* Whether the local file `path` looks like reference JSON, from its first 64 KiB: a JSON object (after
 * white space or a UTF-8 BOM, no NUL byte) with a "refs" object or a "version" number (version 1), or a
 * ".zgroup", ".zarray" or "zarr.json" key whose value is a string or an array (version 0; a zarr document or
 * consolidated metadata holds objects there). Only a name ending in ".json" that is such a file opens as a
 * reference store by name (zarr_store_open, the connector); any other "*.json" is an ordinary file. False
 * when it can't be read. The open still checks the whole document. */
bool zarr_store_is_ref_file(const char *path);
/* Opens a store by URL or path; `*out` is new (close with zarr_store_close). A name "<scheme>://..."
 * (scheme: a letter, then letters, digits, '+', '-', '.'; matched without regard to case) goes to
 * the opener registered for the scheme (zarr_store_register_scheme), an unknown scheme is
 * ZARR_EUNSUPPORTED naming it. Built in:
 *  - plain paths and "file:///abs/path" (also "file://localhost/abs/path"): a directory store, a
 *    zip store when the name ends in ".zip", a reference store when it ends in ".json" and is a file of
 *    reference JSON (zarr_store_is_ref_file);
 *  - "reference://PATH": the reference store of the local file PATH (zarr_store_open_ref);
 *  - "memory://NAME": the process-wide memory store NAME (made by the first open with
 *    ZARR_STORE_CREATE, shared by every later open, kept until the process ends; an open without
 *    CREATE of an unknown NAME is ZARR_ENOTFOUND); "memory://" alone is a new private memory store.
 *    `flags` does not make memory stores read-only;
 *  - "http://..." and "https://...": the read-only HTTP store (no listing; CREATE/RDWR refused);
 *  - "s3://bucket/path": the S3 store (account settings from the AWS environment variables and shared
 *    files, README "Object storage"; opening checks the bucket and credentials with one request).
 *  The network schemes are registered with zarr_store_register_scheme before the first open or
 *  registration, so a caller's registration replaces them. */
int zarr_store_open(const char *url, int flags, zarr_store **out);
/* Registers `open` as the opener of URLs "<scheme>://..." for zarr_store_open (and so for the
 * connector: every store name the connector is given is opened through zarr_store_open). `scheme`
 * is copied; registering a scheme again replaces its opener (the built-in "file" and "memory" too);
 * `open` NULL removes a registration. `open` receives the whole URL and zarr_store_open's flags and
 * returns a new store in `*out` (or an error with a message). Thread-safe: may be called while other
 * threads open stores. ZARR_EINVAL for a malformed scheme. */
int zarr_store_register_scheme(const char *scheme, int (*open)(const char *url, int flags, zarr_store **out));
/* True when `name` is a URL ("<scheme>://..." with a well-formed scheme), not a local path. */
bool zarr_store_is_url(const char *name);
/* True when zarr_store_open of the local path `path` may open a regular file there as a store: its name
 * ends in ".json" (a reference file) or ".zip" (a zip store), case-insensitively. Any other regular file
 * is no store (zarr_store_open opens a directory store there, which fails). */
bool zarr_store_path_is_file_store(const char *path);
void zarr_store_ref(zarr_store *s);
void zarr_store_close(zarr_store *s); /* drops a reference; accepts NULL */

/* The operations. Keys are validated here; missing keys get their message here (ZARR_ENOTFOUND). */
int zarr_store_get(zarr_store *s, const char *key, zarr_buf *out);
int zarr_store_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out);
int zarr_store_set(zarr_store *s, const char *key, const void *data, size_t n);
/* A value written in pieces, then committed whole (zarr_store_ops.writer_open): open gives a new
 * writer (`*out`, owned by the caller until zarr_store_writer_close, which frees it whatever it
 * returns; it holds a reference to `s`); write puts `n` bytes (borrowed) at `off` and may be called
 * from several threads at once for distinct ranges; close with commit true makes the value at `key`
 * the bytes written (gaps read as zero), atomically, as zarr_store_set would; with commit false, or
 * after a failed write, nothing changes at `key`. Close accepts NULL. */
typedef struct zarr_store_writer zarr_store_writer;
int zarr_store_writer_open(zarr_store *s, const char *key, zarr_store_writer **out);
int zarr_store_writer_write(zarr_store_writer *w, uint64_t off, const void *data, size_t n);
int zarr_store_writer_close(zarr_store_writer *w, bool commit);
int zarr_store_del(zarr_store *s, const char *key);
int zarr_store_del_prefix(zarr_store *s, const char *prefix);
int zarr_store_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud);
/* Every value key below `prefix` with its size (see zarr_store_ops.list_keys); "" = the whole store. */
int zarr_store_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud);
int zarr_store_exists(zarr_store *s, const char *key);
/* The size in bytes of the value at `key` (ZARR_ENOTFOUND if absent), without reading the value where
 * the store can tell (directory: stat; memory: its map; zip: the central directory). */
int zarr_store_size(zarr_store *s, const char *key, uint64_t *size);
/* When the value at `key` was last modified (seconds since the epoch): ZARR_ENOTFOUND if absent,
 * ZARR_EUNSUPPORTED (no message) for stores that don't know. */
int zarr_store_mtime(zarr_store *s, const char *key, int64_t *sec);
/* Batched reads with byte ranges: `reqs` (borrowed, n items) as described at zarr_store_req. Every
 * item's own status is in its `result`; returns ZARR_OK when all are OK, else the first non-OK item's
 * result (ZARR_ENOTFOUND included: missing items carry no message). An invalid key fails the whole
 * call before anything is read: every item's result is then ZARR_EINVAL (the message names the key).
 * Without a store's own get_many: get (whole values), get_range (ranges) and size + get_range
 * (suffixes), item by item. */
int zarr_store_get_many(zarr_store *s, size_t n, zarr_store_req *reqs);
/* Batched writes: results[i] per item (n items; all arrays borrowed); returns the first error. Keys
 * are validated first (an invalid one fails the call before anything is written). */
int zarr_store_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data,
                        const size_t *sizes, int *results);
int zarr_store_rename(zarr_store *s, const char *from, const char *to);
/* Writes out what the store buffers (the zip store's archive); on a durable store then runs its sync
 * pass (zarr_store_sync), so everything written before is on stable storage when it returns. */
int zarr_store_flush(zarr_store *s);
/* The sync pass of a durable store (zarr_store_ops.sync): every value written, deleted or renamed
 * through `s` before the call is on stable storage with the directory entries naming it when it
 * returns ZARR_OK. A no-op (ZARR_OK, no system call) on a store that is not durable, and for stores
 * without a sync op (memory; the zip store syncs on flush and close). ZARR_EIO with a message naming
 * the directory or file that could not be synced (kept for the next pass). */
int zarr_store_sync(zarr_store *s);
/* Deletes a whole store: every key (del_prefix "") and then its container (remove_root: the
 * directory store's root folder, the zip store's archive). The handle may only be closed afterwards.
 * ZARR_EREADONLY for a read-only store. */
int zarr_store_remove(zarr_store *s);
/* Empties the store (zarr_store_ops.clear, else del_prefix ""): afterwards it holds no key, as after
 * zarr_store_del_prefix(s, ""), and on a durable store the change is recorded for the next sync pass.
 * The directory store's form costs the caller a few system calls whatever the store held: the old
 * content leaves under a trash name in the root's parent directory (docs/FORMAT.md "Trash"), never
 * read as data, and a background thread of the core deletes it. ZARR_EREADONLY for a read-only store;
 * on any other failure the store still holds what it held. */
int zarr_store_clear(zarr_store *s);
/* Waits until every trash directory queued so far by zarr_store_clear (and the leftovers of dead
 * processes it found) is deleted, and joins the deleting thread. The connector calls it when HDF5
 * terminates it; the core's library destructor calls it too. Safe to call at any time, from any thread
 * but the deleting one. */
void zarr_store_clear_wait(void);
/* True when `name` (one path component, no '/') has the form of a directory store's trash name
 * (".h5zarr-trash.<pid>.<n>"): content moved aside by zarr_store_clear, to be deleted. Such a name is
 * never a store nor a key: listings skip it, and the connector's pointer sweeps ignore it. */
bool zarr_store_trash_name(const char *name);

/* Forwarding stores, for wrappers of another store (views, counters, fault injection). A wrapper is a
 * struct whose first member is a zarr_store_fwd; its ops table points at its own functions for what
 * it changes and at the zarr_store_fwd_* functions below for the rest, which call the inner store's
 * ops straight away (keys are already valid, optional ops fall back as the zarr_store_* functions
 * do). zarr_store_fwd_init sets `self` up around `inner` and TAKES the caller's reference to
 * `inner` (zarr_store_fwd_destroy closes it); readonly, atomic_writes, no_consolidated,
 * prefers_batches and durable are copied from `inner` (a wrapper may change them after); the url is a copy of
 * inner's. ZARR_EINVAL (NULL arguments) or ZARR_ENOMEM (the url) close `inner` too. The wrapper's
 * destroy is zarr_store_fwd_destroy (for a wrapper malloc'ed as a whole), or its own, which calls
 * zarr_store_fwd_fini (closes inner, frees the url; accepts NULL) and frees the wrapper. The
 * forwarding ops return what the inner store returns (a miss is a bare ZARR_ENOTFOUND). A wrapper
 * that changes set (or the keys) changes the writer ops too, or leaves them NULL: the generic form then
 * gathers the pieces and stores the value with the wrapper's own set. */
typedef struct zarr_store_fwd {
    zarr_store  base;
    zarr_store *inner; /* owned reference */
} zarr_store_fwd;
int  zarr_store_fwd_init(zarr_store_fwd *self, const zarr_store_ops *ops, zarr_store *inner);
void zarr_store_fwd_fini(zarr_store_fwd *self);
int  zarr_store_fwd_get(zarr_store *s, const char *key, zarr_buf *out);
int  zarr_store_fwd_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out);
int  zarr_store_fwd_get_range_into(zarr_store *s, const char *key, uint64_t off, void *dst, size_t n);
int  zarr_store_fwd_set(zarr_store *s, const char *key, const void *data, size_t n);
int  zarr_store_fwd_del(zarr_store *s, const char *key);
int  zarr_store_fwd_del_prefix(zarr_store *s, const char *prefix);
int  zarr_store_fwd_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud);
int  zarr_store_fwd_exists(zarr_store *s, const char *key);
int  zarr_store_fwd_get_many(zarr_store *s, size_t n, zarr_store_req *reqs);
int  zarr_store_fwd_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data,
                             const size_t *sizes, int *results);
int  zarr_store_fwd_rename(zarr_store *s, const char *from, const char *to);
int  zarr_store_fwd_flush(zarr_store *s);
void zarr_store_fwd_destroy(zarr_store *s); /* zarr_store_fwd_fini, then frees `s` (malloc'ed) */
int  zarr_store_fwd_mtime(zarr_store *s, const char *key, int64_t *sec);
int  zarr_store_fwd_size(zarr_store *s, const char *key, uint64_t *size);
int  zarr_store_fwd_get_into(zarr_store *s, const char *key, void *dst, size_t n);
int  zarr_store_fwd_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud);
int  zarr_store_fwd_remove_root(zarr_store *s);
int  zarr_store_fwd_sync(zarr_store *s);
int  zarr_store_fwd_writer_open(zarr_store *s, const char *key, void **h);
int  zarr_store_fwd_writer_write(zarr_store *s, void *h, uint64_t off, const void *data, size_t n);
int  zarr_store_fwd_writer_close(zarr_store *s, void *h, bool commit);
int  zarr_store_fwd_del_many(zarr_store *s, size_t n, const char *const *keys, int *results);
int  zarr_store_fwd_clear(zarr_store *s);
/* An ops table forwarding every op (a transparent wrapper: a zarr_store_fwd malloc'ed by the caller). */
extern const zarr_store_ops zarr_store_fwd_ops;

/* ------------------------------------------------------------------------------------------------
 * Data types
 *
 * Every element has a "memory form": the layout the engine hands to callers.
 *  - numbers, bool, datetime: `size` bytes in the host's byte order (bool: one byte 0/1);
 *  - complex: two floats (re, im) in host order;
 *  - fixed bytes (v2 "|S<n>", v3 "bytes"? no: fixed_length_bytes/r<bits>): `size` raw bytes;
 *  - fixed UTF-32 (v2 "<U<n>", v3 "fixed_length_utf32"): n code points, host order (size 4n);
 *  - vlen UTF-8 string: a `char *`, NUL-terminated, malloc'ed (NULL reads as "");
 *  - vlen bytes: a zarr_vlen {size_t len; void *p} with malloc'ed p;
 *  - struct: the fields packed at their offsets (numpy layout).
 * `endian` records the byte order the store keeps ('<', '>', or '|' when it does not apply);
 * byte swapping happens in the codec chain (bytes codec / v2 dtype), never in memory form.
 * ------------------------------------------------------------------------------------------------ */
typedef enum zarr_kind {
    ZARR_BOOL,
    ZARR_INT,
    ZARR_UINT,
    ZARR_FLOAT,
    ZARR_COMPLEX,
    ZARR_FIXED_BYTES, /* v2 |S<n>; v3 "fixed_length_bytes" / r<8n> raw bits */
    ZARR_FIXED_UTF32, /* v2 <U<n>; v3 fixed_length_utf32 */
    ZARR_VLEN_UTF8,   /* v2 |O + vlen-utf8; v3 string */
    ZARR_VLEN_BYTES,  /* v2 |O + vlen-bytes; v3 bytes */
    ZARR_STRUCT,      /* v2 structured list; v3 struct */
    ZARR_DATETIME,    /* numpy datetime64 (int64 + unit) */
    ZARR_TIMEDELTA,   /* numpy timedelta64 (int64 + unit) */
    ZARR_RAW          /* v2 |V<n>, v3 r<bits>: opaque bytes */
} zarr_kind;

typedef struct zarr_vlen {
    size_t len;
    void  *p;
} zarr_vlen;

typedef struct zarr_dtype zarr_dtype;

typedef struct zarr_field {
    char       *name;
    size_t      offset; /* byte offset in the struct's memory form */
    zarr_dtype *type;   /* element type of the field (owned by the struct dtype) */
    int         ndim;   /* sub-array dims (0 = scalar field) */
    uint64_t    shape[8];
} zarr_field;

struct zarr_dtype {
    zarr_kind   kind;
    size_t      size;     /* bytes of one element in memory form */
    char        endian;   /* '<', '>', '|' */
    char        unit[24]; /* datetime/timedelta unit as numpy writes it ("ns", "10s"); else "" */
    size_t      nfields;  /* ZARR_STRUCT only */
    zarr_field *fields;
    size_t      nchars; /* FIXED_UTF32: code points; FIXED_BYTES/RAW: bytes */
};

/* Parse a v2 dtype (a string like "<f8" or a list for structured types) / a v3 data_type (a string
 * like "float64" or an object {"name":..,"configuration":..}). `*out` is new; caller frees. */
int zarr_dtype_from_v2_json(struct json_object *j, zarr_dtype **out);
int zarr_dtype_from_v3_json(struct json_object *j, zarr_dtype **out);
/* New JSON for the dtype (caller owns the reference). v2 form includes the byte order. */
int zarr_dtype_to_v2_json(const zarr_dtype *t, struct json_object **out);
int zarr_dtype_to_v3_json(const zarr_dtype *t, struct json_object **out);
/* Simple constructors for numbers/bool (endian '<' by default). */
zarr_dtype *zarr_dtype_new(zarr_kind kind, size_t size);
zarr_dtype *zarr_dtype_copy(const zarr_dtype *t);
bool        zarr_dtype_equal(const zarr_dtype *a, const zarr_dtype *b);
void        zarr_dtype_free(zarr_dtype *t);
/* True if the memory form holds pointers (vlen kinds, or a struct containing them). */
bool zarr_dtype_has_vlen(const zarr_dtype *t);
/* Frees the pointers owned by `n` elements in memory form (vlen payloads), not the array itself. */
void zarr_dtype_clear_elems(const zarr_dtype *t, void *elems, size_t n);
/* Deep-copies n elements (vlen payloads duplicated). dst's previous payloads are freed first when
 * `dst_initialized`. */
int zarr_dtype_copy_elems(const zarr_dtype *t, void *dst, const void *src, size_t n, bool dst_initialized);

/* Fill values: one element in memory form. Parse from metadata JSON (v2 or v3 rules; NULL/json null
 * = undefined -> `*defined` false and zeros), and back. */
int zarr_fill_from_json(const zarr_dtype *t, int zarr_format, struct json_object *j, void *elem,
                        bool *defined);
int zarr_fill_to_json(const zarr_dtype *t, int zarr_format, const void *elem, bool defined,
                      struct json_object **out);

/* ------------------------------------------------------------------------------------------------
 * Codecs. A chain is: array->array codecs (transpose), exactly one array->bytes codec (bytes with an
 * endian, vlen-utf8, vlen-bytes), then bytes->bytes codecs (compressors, shuffle, crc32c...). v2
 * metadata (order, dtype byte order, filters, compressor) is mapped onto the same chain.
 * ------------------------------------------------------------------------------------------------ */
typedef struct zarr_codec     zarr_codec;
typedef struct zarr_chain     zarr_chain;
typedef struct zarr_codec_ctx zarr_codec_ctx;

/* Per-thread scratch and reusable compressor contexts (zstd, ...). One per worker; not shared. */
zarr_codec_ctx *zarr_codec_ctx_new(void);
void            zarr_codec_ctx_free(zarr_codec_ctx *ctx);

/* Builds a chain from v3 `codecs` JSON (borrowed) for arrays of dtype `t` (borrowed, copied). */
int zarr_chain_from_v3_json(struct json_object *codecs, const zarr_dtype *t, int ndim, zarr_chain **out);
/* Builds a chain from v2 fields: `filters` and `compressor` may be NULL or json null. */
int zarr_chain_from_v2_json(struct json_object *filters, struct json_object *compressor, char order,
                            const zarr_dtype *t, int ndim, zarr_chain **out);
/* New JSON: v3 `codecs` list; v2 `filters` (json null when none) and `compressor` (json null). */
int zarr_chain_to_v3_json(const zarr_chain *c, struct json_object **out);
int zarr_chain_to_v2_json(const zarr_chain *c, struct json_object **filters, struct json_object **compressor);
void        zarr_chain_free(zarr_chain *c);
zarr_chain *zarr_chain_copy(const zarr_chain *c);
/* A plain chain: bytes codec with `endian` ('<' or '>'), nothing else. */
int zarr_chain_new_plain(const zarr_dtype *t, int ndim, char endian, zarr_chain **out);
/* Appends a bytes->bytes codec given as v3 JSON ({"name":"zstd","configuration":{...}}). */
int zarr_chain_append_json(zarr_chain *c, struct json_object *codec);

/* True when encode would be a byte copy of the memory form (bytes codec in host order, no other
 * codecs, C order, no vlen): the engine then reads and writes chunk values in place. */
bool zarr_chain_is_identity(const zarr_chain *c);

/* Encodes one chunk (memory form, C order, `nelem` elements of the chain's dtype, chunk shape
 * `shape`) into `out` (reset first). `mem` is borrowed and not modified. */
int zarr_chain_encode(const zarr_chain *c, zarr_codec_ctx *ctx, const void *mem, const uint64_t *shape,
                      zarr_buf *out);
/* Decodes `n` bytes into `mem` (nelem x dtype size bytes, caller-allocated). Checks every size; an
 * encoded chunk that decodes to the wrong number of bytes is ZARR_ECODEC. For vlen dtypes the
 * elements are allocated (caller frees with zarr_dtype_clear_elems). */
int zarr_chain_decode(const zarr_chain *c, zarr_codec_ctx *ctx, const void *enc, size_t n, void *mem,
                      const uint64_t *shape);

/* Introspection for the VOL's filter mapping: number of codecs, and codec i of the v3 `codecs` list (in
 * its written order) as v3 JSON (new ref). */
size_t zarr_chain_count(const zarr_chain *c);
int    zarr_chain_codec_json(const zarr_chain *c, size_t i, struct json_object **out);
/* The v3 name of codec i (written order), borrowed from the codec's class (static), without building its
 * JSON; NULL when there is no codec i. */
const char *zarr_chain_codec_name(const zarr_chain *c, size_t i);

/* ------------------------------------------------------------------------------------------------
 * Thread pool: persistent workers; one job = `n` tasks run by the workers and the caller.
 * ------------------------------------------------------------------------------------------------ */
typedef struct zarr_pool zarr_pool;
/* Task i of a job; `worker` is 0..nthreads (the caller is worker 0). Return ZARR_OK or an error. */
typedef int (*zarr_task_fn)(void *job, size_t i, int worker);

/* nthreads 0 = number of online cores. */
int  zarr_pool_new(int nthreads, zarr_pool **out);
void zarr_pool_free(zarr_pool *p);
int  zarr_pool_nthreads(const zarr_pool *p);
/* Runs tasks 0..n-1; returns after all finished. Returns the first error (its message is moved to the
 * caller's thread). `inline_only` runs everything on the caller. In a child forked after the pool was
 * made (whose threads stayed in the parent) every job runs inline, and zarr_pool_free only frees. */
int zarr_pool_run(zarr_pool *p, zarr_task_fn fn, void *job, size_t n, bool inline_only);
/* The process-wide default pool (created on first use; size from H5ZARR_THREADS or cores). */
zarr_pool *zarr_pool_default(void);
/* Stops and joins the threads of every pool of this process (the default one included) and frees their
 * scratch and the calling thread's; waits for running jobs first. Pools stay valid: a later job starts
 * their threads again. The connector calls it when HDF5 terminates it (H5close, exit). Not from a task. */
void zarr_pool_stop_all(void);

/* ------------------------------------------------------------------------------------------------
 * Array metadata (v2 .zarray + .zattrs, v3 zarr.json)
 * ------------------------------------------------------------------------------------------------ */
typedef enum { ZARR_KEYS_DEFAULT, ZARR_KEYS_V2 } zarr_key_encoding;

/* The top-level key of a node's own metadata document (v2 .zarray/.zgroup, v3 zarr.json) under which a
 * layer above the core (the HDF5 VOL connector) keeps what zarr has no place for. Zarr readers do not
 * show it (v2 readers ignore unknown keys of those documents; in v3 it is an extension object marked
 * "must_understand": false). The core keeps the object opaque: `reserved` in the metadata structs
 * below, written back as it is. */
#define ZARR_RESERVED_KEY "_h5zarr"

/* The document of a hidden array: an array that a layer above the core keeps for its own programs but
 * that zarr readers must not see as a node (the connector's netCDF dimensions without a coordinate
 * variable, docs/FORMAT.md "Dimension names"). Its text is what the array's .zarray (v2; its .zattrs
 * stays beside it) or zarr.json (v3) would hold, under this key of the node instead; zarr readers look
 * only for .zarray/.zgroup and zarr.json, so the node's directory is no node to them. The core finds
 * it after the format's own documents (one more lookup for a path where nothing is). Consolidated
 * metadata: v2 `<rel>/.h5zarr_array` keys of .zmetadata; v3 the "h5zarr_hidden" object beside
 * "metadata" in "consolidated_metadata" (every entry of "metadata" is a node to zarr-python 3). */
#define ZARR_HIDDEN_DOC ".h5zarr_array"

typedef struct zarr_array_meta {
    int                 zarr_format; /* 2 or 3 */
    int                 ndim;        /* 0 = scalar */
    uint64_t            shape[ZARR_MAX_DIMS];
    uint64_t            chunks[ZARR_MAX_DIMS];
    zarr_dtype         *dtype; /* owned */
    void               *fill;  /* owned, one element in memory form (zeros when undefined) */
    bool                fill_defined;
    zarr_chain         *chain;        /* owned */
    zarr_key_encoding   key_encoding; /* v2 metadata is always ZARR_KEYS_V2 */
    char                separator;    /* '/' or '.' */
    char                order;        /* v2 'C' or 'F' (F is also recorded as a transpose in chain) */
    char               *dimension_names[ZARR_MAX_DIMS]; /* owned; NULL entries = unnamed */
    bool                has_dimension_names;
    struct json_object *attributes; /* owned ref; an object (possibly empty) */
    struct json_object *extra;      /* owned ref; unknown top-level keys kept for rewrite, or NULL */
    /* owned ref: the object under ZARR_RESERVED_KEY in the node's document (v3: without its
     * "must_understand"), or NULL. Not interpreted by the core: serialised as it is (an empty object is
     * left out of the document). A v2 attributes-only write (zarr_array_write_attrs) rewrites the
     * .zarray too while this is not NULL, so edits of it reach the store. */
    struct json_object *reserved;
    /* The array's document is written as ZARR_HIDDEN_DOC, not as .zarray / zarr.json (set on metadata
     * read from there; a writer sets or clears it, and the next metadata write of the array moves the
     * document: it writes the new form and removes the other one, so the node has exactly one). */
    bool hidden;
} zarr_array_meta;

typedef struct zarr_group_meta {
    int                 zarr_format;
    struct json_object *attributes;   /* owned ref, an object */
    struct json_object *extra;        /* unknown keys, or NULL */
    struct json_object *consolidated; /* v3 inline consolidated "metadata" object, or NULL */
    struct json_object *reserved;     /* as zarr_array_meta.reserved (v2: the .zgroup holds it) */
    /* v3 "consolidated_metadata" "h5zarr_hidden": hidden arrays below (ZARR_HIDDEN_DOC) by relative
     * path, or NULL */
    struct json_object *consolidated_hidden;
} zarr_group_meta;

/* Parsing takes the documents' text (not NUL-terminated necessarily); `attrs` is the v2 .zattrs text
 * (NULL if absent). Errors name the offending key ("'.zarray': 'chunks' must be a list of ...").
 * `where` names the document for messages (e.g. "temp/zarr.json"). */
int zarr_array_meta_parse_v3(const char *text, size_t n, const char *where, zarr_array_meta **out);
int zarr_array_meta_parse_v2(const char *zarray, size_t n, const char *zattrs, size_t an, const char *where,
                             zarr_array_meta **out);
int zarr_group_meta_parse_v3(const char *text, size_t n, const char *where, zarr_group_meta **out);
int zarr_group_meta_parse_v2(const char *zgroup, size_t n, const char *zattrs, size_t an, const char *where,
                             zarr_group_meta **out);
/* Serialize. v3: one zarr.json text. v2: .zarray/.zgroup text and .zattrs text (NULL if no attrs).
 * Returned strings are malloc'ed; caller frees. */
int zarr_array_meta_to_v3(const zarr_array_meta *m, char **json);
int zarr_array_meta_to_v2(const zarr_array_meta *m, char **zarray, char **zattrs);
int zarr_group_meta_to_v3(const zarr_group_meta *m, char **json);
int zarr_group_meta_to_v2(const zarr_group_meta *m, char **zgroup, char **zattrs);
/* The v3 zarr.json as a new JSON object (`*out`, caller puts) sharing nothing with `m`, what a copy of
 * the node in consolidated metadata holds: what the _to_v3 forms serialize, without a group's own
 * consolidated metadata. */
int zarr_array_meta_to_v3_copy(const zarr_array_meta *m, struct json_object **out);
int zarr_group_meta_to_v3_copy(const zarr_group_meta *m, struct json_object **out);
/* What the _copy forms hold, as text appended to `out`: the v3 zarr.json printed as a JSON value nested
 * `level` objects deep in a document the core writes (two spaces an indent; level 0: the document's own
 * text, without the NUL), so a consolidated document is written without a tree per node. A group's
 * own consolidated metadata is left out. */
int zarr_array_meta_write_v3(const zarr_array_meta *m, int level, zarr_buf *out);
int zarr_group_meta_write_v3(const zarr_group_meta *m, int level, zarr_buf *out);

/* A new array description with defaults: v3 (or 2), chunks = shape (at least 1), plain chain (v2: the
 * chain its .zarray reads as, each struct field in its own byte order), fill 0 undefined, separator
 * '/' (v3) / '.' (v2), empty attributes. Takes `dtype`. */
int              zarr_array_meta_new(int zarr_format, int ndim, const uint64_t *shape, const uint64_t *chunks,
                                     zarr_dtype *dtype, zarr_array_meta **out);
zarr_array_meta *zarr_array_meta_copy(const zarr_array_meta *m);
void             zarr_array_meta_free(zarr_array_meta *m);
int              zarr_group_meta_new(int zarr_format, zarr_group_meta **out);
void             zarr_group_meta_free(zarr_group_meta *m);

/* The store key of a chunk: "<path>/c/1/2" (v3 default), "<path>/1.2" (v2 '.' separator). `path` may
 * be "" (root array). Writes at most n bytes; returns ZARR_EOVERFLOW if it does not fit. */
int zarr_chunk_key(const zarr_array_meta *m, const char *path, const uint64_t *coords, char *key, size_t n);

/* ------------------------------------------------------------------------------------------------
 * Nodes: groups and arrays in a store
 * ------------------------------------------------------------------------------------------------ */
typedef enum { ZARR_NODE_NONE = 0, ZARR_NODE_GROUP = 1, ZARR_NODE_ARRAY = 2 } zarr_node_type;

/* What is at `path`: looks for zarr.json (v3), then .zarray/.zgroup (v2), then an ancestor's
 * consolidated metadata (zarr_consolidated.h). `*type` is ZARR_NODE_NONE when nothing is there: that
 * is a success and leaves this thread's error message as it was. `*format` (may be NULL) is 2 or 3,
 * 0 for NONE: pass it to zarr_array_open_format / zarr_group_read_format. */
int zarr_node_probe(zarr_store *s, const char *path, zarr_node_type *type, int *format);
/* The same, looking for the documents of zarr format `prefer` (2 or 3) first (a node with documents of
 * both formats then answers with the preferred one): fewer
 * store reads when the caller knows what the store mostly holds (a v2 store's nodes then cost one
 * lookup, not a failed zarr.json read first). */
int zarr_node_probe_as(zarr_store *s, const char *path, int prefer, zarr_node_type *type, int *format);
/* Group metadata at `path`: read / write (creates or replaces the document). `*out` is new (caller
 * frees with zarr_group_meta_free); `s` and `m` are borrowed. */
int zarr_group_read(zarr_store *s, const char *path, zarr_group_meta **out);
/* zarr_group_read for a caller that already knows the node's zarr format (2 or 3, as zarr_node_probe
 * reported it): that format's documents are read first, so a v2 group costs no failed zarr.json
 * lookup. 0 = not known (zarr_group_read). If the node has no document of that format (it changed
 * since the probe), the other format's and then consolidated metadata are tried, as zarr_group_read
 * does. Ownership as zarr_group_read. */
int zarr_group_read_format(zarr_store *s, const char *path, int format, zarr_group_meta **out);
/* Writes a group's documents, replacing what is there (v2: a .zattrs left from before is removed when
 * the group has no attributes). `s` and `m` are borrowed. */
int zarr_group_write(zarr_store *s, const char *path, const zarr_group_meta *m);
/* zarr_group_write for a group at a path the caller knows holds nothing (ZARR_CREATE_NEW): no stale
 * document is looked for. Ownership as zarr_group_write. */
int zarr_group_write_new(zarr_store *s, const char *path, const zarr_group_meta *m);
/* The same for a group whose attributes alone changed: v2 rewrites .zattrs only, and the .zgroup too
 * when `m->reserved` is not NULL (v3: zarr.json). */
int zarr_group_write_attrs(zarr_store *s, const char *path, const zarr_group_meta *m);

/* Lists the names of child nodes (groups and arrays, not chunk keys or metadata files) of the group
 * at `path`, in store order (callers sort). Non-node directories are skipped. */
int zarr_group_children(zarr_store *s, const char *path, zarr_list_cb cb, void *ud);

/* Deletes a node and everything below it. */
int zarr_node_delete(zarr_store *s, const char *path);

/* ------------------------------------------------------------------------------------------------
 * Arrays and the batched chunk engine
 * ------------------------------------------------------------------------------------------------ */
typedef struct zarr_array zarr_array;

/* Opens the array at `path` (v2 or v3, detected: zarr.json, then .zarray, then consolidated
 * metadata). `*out` is new (caller closes with zarr_array_close); the array holds its own reference
 * to `s` (borrowed by the call). A group there is ZARR_ENOTFOUND ("it is a group"). */
int zarr_array_open(zarr_store *s, const char *path, zarr_array **out);
/* zarr_array_open for a caller that already knows what is at `path` (an array) and its zarr format
 * (2 or 3, as zarr_node_probe reported it): that format's documents are read straight away, no probe
 * and no failed lookup of the other format's (for v3 the zarr.json is read and parsed once). 0 = not
 * known (zarr_array_open). If the node has no document of that format of its own (it changed since
 * the probe, or only consolidated metadata holds it), the other format's and then consolidated
 * metadata are tried, so the array is the one zarr_array_open gives. Ownership as zarr_array_open. */
int zarr_array_open_format(zarr_store *s, const char *path, int format, zarr_array **out);
/* zarr_array_open_format that also gives the time of the document it read (`*mtime`, seconds since the
 * epoch: .zarray, zarr.json or the hidden document, whichever holds the array) when the store learns it
 * with the read (zarr_store_req.mtime), else 0 (ask zarr_store_mtime). The document is read as a one-item
 * zarr_store_get_many. */
int zarr_array_open_format_timed(zarr_store *s, const char *path, int format, zarr_array **out,
                                 int64_t *mtime);
/* What is at `path` and the node itself, from one read of its documents where the format allows (a
 * v3 zarr.json gives the type and the node at once; probe + open would read and parse it twice).
 * `prefer` as for zarr_node_probe_as. On success exactly one of `*g` (a group) and `*a` (an array) is
 * set (new; caller frees/closes) unless `*type` is ZARR_NODE_NONE (nothing there: a success that sets
 * no message). `format` may be NULL. */
int zarr_node_load(zarr_store *s, const char *path, int prefer, zarr_node_type *type, int *format,
                   zarr_group_meta **g, zarr_array **a);
/* zarr_node_load that also gives the time of the node's zarr.json (`*mtime`, seconds since the epoch)
 * when the store learns it with the read (zarr_store_req.mtime: the directory store from the read's
 * fstat, HTTP and S3 from Last-Modified), else 0 (not known, or the node has no zarr.json: ask
 * zarr_store_mtime). The zarr.json is read as a one-item zarr_store_get_many. */
int zarr_node_load_timed(zarr_store *s, const char *path, int prefer, zarr_node_type *type, int *format,
                         zarr_group_meta **g, zarr_array **a, int64_t *mtime);
/* zarr_node_load of a v3 node whose zarr.json the caller has read already (`doc`, `n` bytes, borrowed):
 * parsed as zarr_node_load parses it, without reading it again (an array keeps a reference to `s`). */
int zarr_node_load_v3_doc(zarr_store *s, const char *path, const void *doc, size_t n, zarr_node_type *type,
                          zarr_group_meta **g, zarr_array **a);
/* One node of zarr_node_load_many: the caller sets `path` (borrowed) and zeroes the rest; the call fills
 * them. `result` ZARR_OK: the node from its zarr.json (`type`, exactly one of `g` / `a`, new: the caller
 * takes them or zarr_node_items_free frees them; `mtime` as zarr_node_load_timed gives it); ZARR_ENOTFOUND:
 * no zarr.json there (no message: a v2 node, a directory that is no node, or gone); else the error of
 * that node alone, `msg` its message naming the node (malloc'ed; NULL only when out of memory). */
typedef struct zarr_node_item {
    const char      *path;
    int              result;
    char            *msg;
    zarr_node_type   type;
    zarr_group_meta *g;
    zarr_array      *a;
    int64_t          mtime;
} zarr_node_item;
/* `n` nodes loaded as one job of `pool` (NULL: zarr_pool_default()). `format` 3: as zarr_node_load_timed
 * loads a v3 node (each item's zarr.json; no v2 or consolidated fallback: ZARR_ENOTFOUND); stores that
 * prefer batches read every zarr.json with one zarr_store_get_many first, the others are read by the
 * job's workers, each reading and parsing what it takes. `format` 2: each item's .zarray (an array as
 * zarr_array_open_format opens a v2 one, `mtime` the .zarray's), else its .zgroup (a group as
 * zarr_group_read_format reads a v2 one; `mtime` the .zgroup's), each with its .zattrs, read by the
 * workers (the kind of document the batch last found is tried first); neither:
 * ZARR_ENOTFOUND. One node's failure is that item's result and stops no other. Every json-c object
 * made on a worker belongs to one item, handed over after the job's join. Returns ZARR_OK (per item
 * results) or ZARR_EINVAL / ZARR_ENOMEM when the batch could not run (then no item is filled). */
int zarr_node_load_many(zarr_store *s, zarr_pool *pool, int format, size_t n, zarr_node_item *items);
/* Frees what zarr_node_load_many left in `items` (msg, and g / a the caller did not take: set them to
 * NULL to keep them). The items themselves are the caller's. */
void zarr_node_items_free(size_t n, zarr_node_item *items);
/* What a create does about what may be at its path already. */
typedef enum zarr_create_mode {
    ZARR_CREATE_EXCL,      /* fail with ZARR_EEXIST if a node is there (one probe) */
    ZARR_CREATE_OVERWRITE, /* remove every key at and below the path first (the node and its chunks) */
    ZARR_CREATE_NEW,       /* the caller knows no key is at or below the path (it made the parent and
                            * everything in it): no probe, no removal, no stale documents to delete.
                            * Wrong use leaves stale keys behind, never loses other data. */
    ZARR_CREATE_UNWRITTEN, /* as NEW, and nothing is written: the handle works at once (chunks can be
                            * written), the store holds no node at the path until the caller writes
                            * the documents with zarr_array_write_new (the VOL's deferred creates,
                            * written at H5Fflush over the pool) */
} zarr_create_mode;
/* Creates an array (writes its metadata; fails with ZARR_EEXIST if a node is there unless
 * `overwrite`). Takes `meta`. */
int zarr_array_create(zarr_store *s, const char *path, zarr_array_meta *meta, bool overwrite,
                      zarr_array **out);
/* zarr_array_create with the create mode spelled out (zarr_array_create is EXCL or OVERWRITE).
 * Ownership as zarr_array_create. */
int  zarr_array_create_as(zarr_store *s, const char *path, zarr_array_meta *meta, zarr_create_mode mode,
                          zarr_array **out);
void zarr_array_close(zarr_array *a);
const zarr_array_meta *zarr_array_meta_get(const zarr_array *a);
const char            *zarr_array_path(const zarr_array *a);
/* The array's keys now live at `path` (the caller moved them in the store, as zarr_store_rename does): the
 * handle reads and writes there from now on, with the same metadata and options. Its cached chunks and
 * shard indexes, keyed by the old path, are dropped without being written: flush them first
 * (zarr_array_flush) before the keys move. The path is checked as zarr_array_open checks it; on an error
 * the handle is unchanged. */
int zarr_array_set_path(zarr_array *a, const char *path);
/* Mutable metadata for attribute / dimension-name edits; call zarr_array_write_meta after. */
zarr_array_meta *zarr_array_meta_mut(zarr_array *a);
/* The array's v3 zarr.json appended to `out` as zarr_array_meta_write_v3 prints it at `level`: the text
 * the array's last metadata write stored, indented for `level`, when its metadata was not handed out for
 * change since (zarr_array_meta_mut; zarr_array_set_fill and zarr_array_resize change it too), else
 * printed from the metadata. Bytes identical either way; a caller that edits a JSON value inside the
 * metadata it got from zarr_array_meta_get (attributes) must ask zarr_array_meta_mut first. ZARR_EINVAL
 * for NULL or a negative level; ZARR_ENOMEM. */
int zarr_array_doc_print(zarr_array *a, int level, zarr_buf *out);
int zarr_array_write_meta(zarr_array *a);
/* Changes the fill value of an open array: `fill` is one element in memory form (deep-copied; NULL:
 * zeros, e.g. a NULL string), with `defined` as its fill_defined (v2 false: "fill_value": null; v3 always
 * has one). Cached chunks are written first and dropped; chunks already stored stay as they are (a
 * missing chunk reads as the new value from now on: callers change it before chunks that equal the old
 * one were left out, or when there was none). The metadata is written by the next
 * zarr_array_write_meta; a reader whose own records say what missing elements are (the connector's NULL
 * string fill, which zarr v3 can only write as "") calls it before reading and writes nothing. */
int zarr_array_set_fill(zarr_array *a, const void *fill, bool defined);
/* The same when only the attributes (or the reserved object) changed: v2 rewrites .zattrs only, and the
 * .zarray too when the metadata's `reserved` is not NULL (v3: zarr.json). */
int zarr_array_write_attrs(zarr_array *a);
/* Every document of an array made with ZARR_CREATE_UNWRITTEN (or at a path known to hold nothing):
 * v2 .zarray and .zattrs (when it has attributes), v3 zarr.json; no stale document is looked for. */
int zarr_array_write_new(zarr_array *a);
/* With `on`, an array's small writes are held in memory until its cache is flushed: a write whose chunks
 * come to fewer than opts.inline_bytes keeps its whole chunks, as partial ones are kept, in the array's
 * chunk cache (within cache_bytes, and within a process-wide 64 MiB of held chunks: beyond either it
 * stores them at once, as without) instead of storing them now. Reads see them. They are stored by
 * zarr_array_flush (or an eviction, or zarr_array_close), with exactly the bytes and keys they would have
 * had, only later: for an array whose documents are not written yet (ZARR_CREATE_UNWRITTEN), whose
 * chunks no reader can see before they are, the caller stores them with the documents (the VOL's flush
 * does, in the pool task that writes the node). zarr_array_write_new turns it off. Not for a durable
 * store (every write is synced before it returns there). */
void zarr_array_hold_writes(zarr_array *a, bool on);
/* Bytes of chunks in the array's chunk cache now (dirty or clean). */
size_t zarr_array_cached_bytes(zarr_array *a);
/* True when the array holds its writes (zarr_array_hold_writes) and its cache has no more bytes than
 * its held writes reserved from the process-wide budget: what it keeps for later is bounded by that. */
bool zarr_array_holds_all(zarr_array *a);

/* Engine options (per array; defaults from zarr_engine_defaults()). */
typedef struct zarr_engine_opts {
    zarr_pool *pool;               /* NULL = zarr_pool_default() */
    size_t     inline_bytes;       /* jobs touching fewer bytes than this run on the caller */
    bool       write_empty_chunks; /* false: chunks equal to the fill value are deleted, not written;
                                    * never for a v2 array whose fill_value is null (no fill value:
                                    * other readers leave missing chunks undefined), whose chunks
                                    * are always stored */
    /* Decoded-chunk cache (write-back), per array: at most this many bytes of chunks in memory form.
     * Partial-chunk writes modify cached chunks (read-modify-write without re-reading or re-writing
     * the store each time) and partial-chunk reads are served from and fill it (LRU). Dirty chunks
     * are encoded and stored when evicted, by zarr_array_flush, zarr_array_close, and before
     * zarr_array_resize / zarr_array_stored_bytes. Whole-chunk writes bypass it (a cached copy is
     * dropped). Chunks larger than this, and vlen dtypes, are never cached; 0 disables caching.
     * Default 4 MiB (HDF5's default is 1 MiB per dataset). A smaller value takes effect at the next
     * insertion. Like HDF5's chunk cache, it does not see changes made to the store behind an open
     * handle for chunks it holds (zarr_array_discard_cache drops them). */
    size_t cache_bytes;
} zarr_engine_opts;
void zarr_array_set_opts(zarr_array *a, const zarr_engine_opts *o);
void zarr_engine_defaults(zarr_engine_opts *o);

/* A regular N-D selection, HDF5-hyperslab style: in each dim d the indices
 * start[d] + i*stride[d] + j for i < count[d], j < block[d]. stride/block NULL = 1. The selected
 * elements, in row-major order of the (count*block) grid, map one to one onto a dense caller buffer
 * `buf` of that shape, in memory form. */
typedef struct zarr_region {
    uint64_t start[ZARR_MAX_DIMS];
    uint64_t stride[ZARR_MAX_DIMS];
    uint64_t count[ZARR_MAX_DIMS];
    uint64_t block[ZARR_MAX_DIMS];
} zarr_region;
/* Whole-array region / simple box helpers. */
void     zarr_region_all(const zarr_array_meta *m, zarr_region *r);
void     zarr_region_box(int ndim, const uint64_t *start, const uint64_t *count, zarr_region *r);
uint64_t zarr_region_nelem(int ndim, const zarr_region *r);

/* One batched job each: every chunk the region touches is planned, gathered (zero-copy where the
 * chunk is contiguous in `buf` and the chain is the identity), encoded and stored (write), or
 * fetched, decoded and scattered (read), over the pool. Missing chunks read as the fill value; partial
 * chunks are read-modify-written. vlen elements: write borrows the caller's pointers; read allocates
 * with malloc (caller frees with zarr_dtype_clear_elems). A write that fails may have stored some of
 * its chunks (or shards) already; each one stored is whole (the store's set, or writer commit, is
 * atomic), none is torn. */
int zarr_array_write(zarr_array *a, const zarr_region *r, const void *buf);
int zarr_array_read(zarr_array *a, const zarr_region *r, void *buf);

/* Several arrays' transfers as one store batch (H5Dread_multi / H5Dwrite_multi): a zarr_multi gathers
 * the chunk requests of region reads, or the chunk stores of region writes, of arrays on one store
 * that prefers batches (zarr_store.prefers_batches) into one get_many, or one set_many. Only unsharded
 * arrays of fixed-size dtypes take part; the others (and arrays on another store) run as their own jobs
 * through the same calls, which then equal zarr_array_read / zarr_array_write.
 *  - Reads: zarr_multi_plan each (array, region), then zarr_multi_fetch (one get_many of every planned
 *    chunk), then zarr_multi_read each: served from the fetched chunks (a chunk not fetched, or fetched
 *    already by an earlier read, comes from the store).
 *  - Writes: zarr_multi_write each (the chunks are encoded and copied into `m`: the caller's buffer is
 *    free when it returns), then zarr_multi_store: one set_many of every chunk queued. Nothing queued is
 *    in the store before zarr_multi_store returns ZARR_OK (its error names the key and the array);
 *    zarr_multi_free drops what is still queued. A second write of the same array, or more than 256 MiB
 *    queued, stores what is queued first. Chunks equal to the fill value are deleted at once, as
 *    zarr_array_write does.
 * `m` is used by one thread at a time; it borrows no array (the arrays stay the caller's). */
typedef struct zarr_multi zarr_multi;
int                       zarr_multi_new(zarr_multi **out);
void                      zarr_multi_free(zarr_multi *m);
/* ZARR_OK: the chunks of region `r` of `a` are planned for the fetch; ZARR_EUNSUPPORTED (no message):
 * `a` does not take part (zarr_multi_read then reads it alone). */
int zarr_multi_plan(zarr_multi *m, zarr_array *a, const zarr_region *r);
/* One get_many of every chunk planned and not fetched yet. Missing chunks are remembered as missing
 * (fill); a failed item is left for its array's read to fetch again (and report). */
int zarr_multi_fetch(zarr_multi *m);
/* zarr_array_read / zarr_array_write of `a` within `m` (m NULL: the plain calls). */
int zarr_multi_read(zarr_multi *m, zarr_array *a, const zarr_region *r, void *buf);
int zarr_multi_write(zarr_multi *m, zarr_array *a, const zarr_region *r, const void *buf);
/* Stores every chunk zarr_multi_write queued: one set_many. */
int zarr_multi_store(zarr_multi *m);
/* Changes the shape; shrinking deletes chunks wholly outside the new shape and clears the stale part
 * of edge chunks so a later grow reads fill values. Rewrites the metadata. A resize that shrinks no
 * dimension touches no chunk: the chunk cache keeps its chunks (edge chunks hold fill values beyond the
 * old extent already). */
int zarr_array_resize(zarr_array *a, const uint64_t *shape);
/* zarr_array_resize without the metadata write: the shape changes in memory only, and the caller
 * writes the document later (zarr_array_write_meta), as a connector does at its flush. */
int zarr_array_resize_unwritten(zarr_array *a, const uint64_t *shape);
/* Bytes stored for chunks (sum of chunk value sizes). Flushes the chunk cache first. Reads no chunk:
 * sizes come from the store (zarr_store_size for each position of grids up to 64 chunks, else one
 * zarr_store_list_keys of the array's prefix, cheaper for large or sparse grids). */
int zarr_array_stored_bytes(zarr_array *a, uint64_t *nbytes);

/* Writes the dirty chunks of the array's chunk cache to the store (encoded, one pool job), so that
 * every write made so far is in the store; cached chunks stay cached (clean). zarr_array_close does
 * the same but cannot report a failure: call this first where errors matter (H5Dflush, H5Fflush,
 * dataset close). On failure the chunks that could not be written stay dirty (a retry may work). */
int zarr_array_flush(zarr_array *a);
/* Drops every cached chunk WITHOUT writing dirty ones back: for when the array's keys were deleted
 * or replaced underneath the handle (node deleted, overwritten by a new array) and a later write-back
 * would resurrect stale chunks. Accepts NULL. */
void zarr_array_discard_cache(zarr_array *a);

/* ------------------------------------------------------------------------------------------------
 * Raw chunks (zarr/chunk_raw.c): single chunks as their stored, still-encoded bytes, for HDF5's chunk
 * API (H5Dread_chunk, H5Dwrite_chunk, H5Dget_chunk_info, ...; vol/chunk.c). A raw chunk is a chunk of
 * the array's grid, or for an array whose chain is one sharding_indexed codec of a fixed-size dtype an
 * inner chunk (its bytes: the range its shard's index gives). Coordinates are in that grid. Every call
 * writes the array's chunk cache back first; a write drops the chunk and shard index caches after it.
 * ------------------------------------------------------------------------------------------------ */
/* The raw chunk shape (m->ndim entries into `shape`); `*inner` (may be NULL): raw chunks are inner
 * chunks of shards. */
int zarr_array_raw_chunk_shape(zarr_array *a, uint64_t *shape, bool *inner);
/* Every stored raw chunk that starts inside the array's shape, in row-major order of its coordinates:
 * `*n` chunks, `*coords` (n x ndim) and `*sizes` (bytes stored) malloc'ed (caller frees; NULL when n
 * is 0). Reads no chunk: one listing of the array's keys, and the indexes of sharded arrays. */
int zarr_array_raw_list(zarr_array *a, uint64_t **coords, uint64_t **sizes, size_t *n);
/* Whether raw chunk `coords` is stored (false also outside the shape) and its size in bytes. */
int zarr_array_raw_stat(zarr_array *a, const uint64_t *coords, bool *stored, uint64_t *nbytes);
/* The stored bytes of raw chunk `coords` into `out` (reset first). ZARR_ENOTFOUND with a message when
 * it is not stored. */
int zarr_array_raw_read(zarr_array *a, const uint64_t *coords, zarr_buf *out);
/* Stores `n` bytes (borrowed) as raw chunk `coords` (inside the shape), once they decode with the
 * array's chain (the inner chain) to one chunk; a sharded array's shard is rewritten with the inner
 * chunk replaced. ZARR_EINVAL outside the shape, ZARR_ECODEC (message saying so) for bytes that are not
 * a chunk of the chain. */
int zarr_array_raw_write(zarr_array *a, const uint64_t *coords, const void *data, size_t n);
/* zarr_array_raw_write with `flags`: ZARR_RAW_TRUSTED stores the bytes without the decode check (the
 * caller vouches that they are what the chain writes: bytes copied from another encoder of the same
 * codecs, as HDF5's filters for h5zarr-convert); 0 is zarr_array_raw_write. */
#define ZARR_RAW_TRUSTED 1u
int zarr_array_raw_write_opt(zarr_array *a, const uint64_t *coords, const void *data, size_t n,
                             unsigned flags);

#ifdef __cplusplus
}
#endif
#endif /* H5ZARR_ZARR_H */
