/*
 * store_dir.c: the local directory store (the default store). A key is a file path relative to the
 * root directory; "directories" are real directories.
 *
 * Writes are atomic by default: a reader sees the old or the new value, never a torn one. The value
 * goes to an unnamed file (O_TMPFILE) in the key's directory, which is then given the key's name
 * with linkat: a new key costs one directory entry instead of the create + rename of a named
 * temporary, and renames no longer serialize writers on the directory (see bench/README.md, "What the
 * engine does", Directory store row). When the key already exists (linkat can't replace) the unnamed
 * file is linked under a temporary name (".h5zarr-tmp.<pid>.<n>", never listed) and renamed over
 * the key; after two such replacements in a row the store goes to the temporary name first (probing the
 * direct link every 16th write: REPLACE_RUN, rename_first). Not in durable mode, the temporary is
 * exchanged with the key (renameat2 RENAME_EXCHANGE, same atomicity for readers) and the old value, now
 * under the temporary name, unlinked: a rename over an existing file makes ext4 (auto_da_alloc) allocate
 * and start writing the new file's blocks at once, so that a rewrite chain (a growing array's document
 * and last chunk, rewritten per record) allocated a block per version and freed one per replacement,
 * which with online discard costs ~0.6 ms each. The new value is then written back when the file system
 * writes back, like a new key's; after an OS crash a value written since may read as empty, as a new
 * key's could already (durable=1 is the mode that syncs). A process killed between the exchange and the
 * unlink leaves the old value under a temporary name (never listed). Where O_TMPFILE or linking it isn't
 * available (some filesystems, no /proc) the store falls back for good to writing the named temporary and
 * renaming it. A crash never leaves a partial value under a key, and on the O_TMPFILE path leaves no
 * temporary file behind either. With store->atomic_writes false the file is rewritten in place (for scratch
 * stores). Parent directories are created lazily: a write first tries to create its file and only on ENOENT
 * creates the missing directories (walking up until one exists). In steady state that costs no mkdir or stat
 * syscall at all, and unlike a cache of known directories it stays correct when someone else deletes a
 * directory. One exception saves the failed calls of a new array (its `zarr.json` makes its folder at the
 * flush, later its first chunk needs `c/0` below it): the store remembers the directories it made or found
 * made (`made`, at most FRESH_MAX). A key whose directory is not remembered but has a remembered ancestor
 * can't have its directory yet (the store made that ancestor and would remember a folder it made below it),
 * so the missing directories are made top-down from that ancestor before the first open: no failed O_TMPFILE
 * open, no failed mkdir of a folder whose parent is missing, also for the 10,000th new member of one
 * group (bench/README.md, "Metadata creates at scale"). A folder found made (EEXIST: someone else made
 * it, or renamed one there) is remembered from then on. Once a directory could not be remembered
 * (FRESH_MAX, out of memory) the guess also needs the ancestor to have no subdirectory the store made
 * (`with_sub`), as the record then misses folders. A wrong guess (someone else made or removed a folder
 * meanwhile) costs an EEXIST or falls back to the ENOENT path: never a wrong result. Every read (whole
 * value, range, suffix, straight into the caller's buffer, each get_many item) = open + fstat + pread
 * (a get_many item's mtime comes from that fstat); size = stat; list_keys walks the directories once.
 * A missing key is a bare ZARR_ENOTFOUND (zarr.h).
 *
 * Durable mode (store->durable, zarr.h "Durability"): each value's file is fdatasync'ed before it gets
 * its name (linkat / rename; in the writing thread, so a job's workers sync their chunks in parallel,
 * and a name never points at data that is not on disk), and every directory whose entries change (the
 * key's directory on set, del, rename; the parent of each directory the store creates; the parent of a
 * deleted prefix) is recorded in a set, once however many keys it received. The sync op (dir_sync)
 * fsyncs each recorded directory and empties the set: one fsync per directory per pass, not per chunk.
 */
#define _GNU_SOURCE
#include "store_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define TMP_PREFIX     ".h5zarr-tmp."
#define TMP_PREFIX_LEN (sizeof(TMP_PREFIX) - 1)

typedef struct dir_store {
    zarr_store base;
    char      *root; /* without trailing '/' (except "/" itself, stored as "") */
    size_t     rootlen;
    int        no_tmpfile;   /* set (atomically) once O_TMPFILE + linkat failed: named temporaries only */
    int        tmpfile_used; /* set (atomically) once a write went through O_TMPFILE + linkat */
    int        link_by_proc; /* set (atomically) once linkat(AT_EMPTY_PATH) was refused: use /proc */
    unsigned   replaced;    /* atomic: commits in a row that found their key existing (REPLACE_RUN at most) */
    unsigned   probe;       /* atomic: commits made renaming first (every REPLACE_PROBE-th links first) */
    uint64_t   link_misses; /* atomic: links under a key's name that found it existing (tests) */
    uint64_t   exchanges;   /* atomic: values replaced by exchange + unlink instead of rename (tests) */
    int        clear_force; /* test hooks of dir_clear (ZARR__DIR_NO_EXCHANGE, ZARR__DIR_FAIL_EXCHANGE) */
    /* durable mode: the directories whose entries changed since the last sync pass (full paths,
     * owned; an open-addressing set, `cap` a power of two or 0), under `mu` */
    pthread_mutex_t mu;
    char          **dirs;
    size_t          ndirs, cap;
    uint64_t        files_synced, dirs_synced; /* atomic: fdatasyncs and directory fsyncs made */
    /* the directories this store made, and those of them it made a subdirectory in (full paths, owned;
     * string sets as `dirs`), under `fmu` (the comment above) */
    pthread_mutex_t fmu;
    char          **made, **with_sub;
    size_t          nmade, made_cap, nwith_sub, with_sub_cap;
    bool            made_lost; /* a directory made was not remembered (FRESH_MAX, out of memory) */
} dir_store;

#define FRESH_MAX ((size_t)1 << 18) /* directories remembered at most (then the ENOENT path only) */

static unsigned long tmp_counter;

/* This process's id for temporary names, asked once (a forked child asks again: tmp_pid_reset). */
static pid_t          tmp_pid;
static pthread_once_t tmp_pid_once = PTHREAD_ONCE_INIT;

static void
tmp_pid_reset(void)
{
    tmp_pid = 0;
}

static void
tmp_pid_init(void)
{
    (void)pthread_atfork(NULL, NULL, tmp_pid_reset);
}

static uint64_t
self_pid(void)
{
    pid_t p = __atomic_load_n(&tmp_pid, __ATOMIC_RELAXED);
    if (p == 0) {
        pthread_once(&tmp_pid_once, tmp_pid_init);
        p = getpid();
        __atomic_store_n(&tmp_pid, p, __ATOMIC_RELAXED);
    }
    return (uint64_t)p;
}

/* Rewrites of existing keys (a flushed chunk cache, a rewritten array): linkat under the key's name fails
 * with EEXIST every time, a wasted call under the directory's lock before the temporary name and the
 * rename. Once REPLACE_RUN commits in a row found their key existing, the store links under a temporary
 * name and renames it over the key straight away (as right for a new key: rename gives it the name), and
 * links first again every REPLACE_PROBE-th commit; a probe that makes a new key ends the run. */
#define REPLACE_RUN   2u
#define REPLACE_PROBE 16u

static bool
rename_first(dir_store *d)
{
    if (__atomic_load_n(&d->replaced, __ATOMIC_RELAXED) < REPLACE_RUN)
        return false;
    return __atomic_add_fetch(&d->probe, 1, __ATOMIC_RELAXED) % REPLACE_PROBE != 0;
}

/* A commit's link under the key's name made a new key (`existed` false) or found one (true). */
static void
note_link(dir_store *d, bool existed)
{
    unsigned r = __atomic_load_n(&d->replaced, __ATOMIC_RELAXED);
    if (!existed && r != 0)
        __atomic_store_n(&d->replaced, 0, __ATOMIC_RELAXED);
    else if (existed && r < REPLACE_RUN)
        __atomic_store_n(&d->replaced, r + 1, __ATOMIC_RELAXED);
    if (existed)
        __atomic_add_fetch(&d->link_misses, 1, __ATOMIC_RELAXED);
}

/* Sets rc to a status whose message is already set, and jumps to done. */
#define FAIL_WITH(expr)                                                                                      \
    do {                                                                                                     \
        rc = (expr);                                                                                         \
        goto done;                                                                                           \
    } while (0)

/* root + "/" + key into `path`; key "" gives the root itself. */
static int
make_path(const dir_store *d, const char *key, char *path, size_t n)
{
    size_t k = strlen(key);
    if (d->rootlen + 1 + k + 1 > n)
        return zarr_error(ZARR_EINVAL, "path of key '%s' under '%s' is too long", key, d->root);
    memcpy(path, d->root, d->rootlen);
    if (k) {
        path[d->rootlen] = '/';
        memcpy(path + d->rootlen + 1, key, k + 1);
    }
    else if (d->rootlen == 0) {
        path[0] = '/';
        path[1] = '\0';
    }
    else
        path[d->rootlen] = '\0';
    return ZARR_OK;
}

/* Writes `v` in decimal at `p` (at most 20 bytes, no NUL); returns the length. The temporary file
 * names of atomic writes are made with it, not with snprintf (see bench/README.md, "Figures behind
 * comments in the sources"). */
static size_t
put_decimal(char *p, uint64_t v)
{
    char   tmp[20];
    size_t n = 0, k = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        p[k++] = tmp[--n];
    return k;
}

/* ---- durable mode: the set of directories to sync ---- */

/* A hash of the `n` bytes at `p`, eight at a time (the paths hashed are long: the root's path, then the
 * key's folders; a byte at a time it was most of make_fresh's work, once per folder level looked up). The
 * low bits (the table's slot) mix every byte. */
static uint64_t
str_hash(const char *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    if (n) {
        w = 0;
        memcpy(&w, p, n);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
    }
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}

/* Inserts the owned string `p` (hash `h`) into the table `v` of `cap` slots (a power of two, with room);
 * returns false (and leaves `p` to the caller) when an equal string is there. */
static bool
set_insert(char **v, size_t cap, char *p, size_t n, uint64_t h)
{
    for (size_t i = (size_t)h & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (!v[i]) {
            v[i] = p;
            return true;
        }
        if (strncmp(v[i], p, n) == 0 && v[i][n] == '\0')
            return false;
    }
}

/* True when the set `v` of `cap` slots (0: none) holds `p` (its first `n` bytes, hash `h`). */
static bool
set_has_h(char *const *v, size_t cap, const char *p, size_t n, uint64_t h)
{
    if (cap)
        for (size_t i = (size_t)h & (cap - 1); v[i]; i = (i + 1) & (cap - 1))
            if (strncmp(v[i], p, n) == 0 && v[i][n] == '\0')
                return true;
    return false;
}

/* True when the set `v` of `cap` slots (0: none) holds `p` (its first `n` bytes). */
static bool
set_has(char *const *v, size_t cap, const char *p, size_t n)
{
    return cap && set_has_h(v, cap, p, n, str_hash(p, n));
}

/* set_add of `p` whose hash `h` the caller has. */
static int
set_add_h(char ***v, size_t *count, size_t *cap, const char *p, size_t n, uint64_t h)
{
    char *q;
    if (set_has_h(*v, *cap, p, n, h)) /* the common case (every chunk of a job in a few directories) */
        return 0;
    if (2 * (*count + 1) > *cap) {
        size_t ncap = *cap ? 2 * *cap : 16;
        char **nv   = calloc(ncap, sizeof *nv);
        if (!nv)
            return -1;
        for (size_t i = 0; i < *cap; i++)
            if ((*v)[i]) {
                size_t k = strlen((*v)[i]);
                set_insert(nv, ncap, (*v)[i], k, str_hash((*v)[i], k));
            }
        free(*v);
        *v   = nv;
        *cap = ncap;
    }
    if (!(q = strndup(p, n)))
        return -1;
    set_insert(*v, *cap, q, n, h);
    (*count)++;
    return 0;
}

/* Adds a copy of `p` (its first `n` bytes) to the set `*v` of `*cap` slots holding `*count` strings,
 * growing it to stay at most half full. 0 (added or already there), or -1 out of memory (unchanged). */
static int
set_add(char ***v, size_t *count, size_t *cap, const char *p, size_t n)
{
    return set_add_h(v, count, cap, p, n, str_hash(p, n));
}

/* Frees the set `v` of `cap` slots. */
static void
set_free(char **v, size_t cap)
{
    for (size_t i = 0; i < cap; i++)
        free(v[i]);
    free(v);
}

/* Records directory `dir` (its first `n` bytes; "" is "/") for the next sync pass. Only in durable
 * mode; ZARR_ENOMEM with a message when the set can't grow (the write then fails: it would not be
 * durable). */
static int
rec_dir(dir_store *d, const char *dir, size_t n)
{
    int rc = ZARR_OK;
    if (n == 0)
        dir = "/", n = 1;
    pthread_mutex_lock(&d->mu);
    if (set_add(&d->dirs, &d->ndirs, &d->cap, dir, n) != 0)
        rc = zarr_error(ZARR_ENOMEM, "out of memory recording directory '%.*s' to sync", (int)n, dir);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

/* Records the directory holding `path` (a path under the root, or the root itself). */
static int
rec_parent(dir_store *d, const char *path)
{
    const char *slash;
    if (!d->base.durable)
        return ZARR_OK;
    slash = strrchr(path, '/');
    return rec_dir(d, path, slash ? (size_t)(slash - path) : 0);
}

/* fdatasync of the file being written at `path` (durable mode only). */
static int
sync_file(dir_store *d, int fd, const char *path)
{
    if (!d->base.durable)
        return ZARR_OK;
    while (fdatasync(fd) != 0)
        if (errno != EINTR)
            return zarr__store_io_error("sync", path, errno);
    __atomic_add_fetch(&d->files_synced, 1, __ATOMIC_RELAXED);
    return ZARR_OK;
}

/* Remembers that directory `dir` (its first `n` bytes) exists, made by the store (or found made below a
 * folder it made): its parent, if remembered, now has a subdirectory. Out of memory or FRESH_MAX: not
 * remembered, and made_lost set (make_fresh then also asks with_sub). A directory made again after
 * someone removed it keeps its mark of a subdirectory. */
static void
fresh_made(dir_store *d, const char *dir, size_t n)
{
    const char *slash = memrchr(dir, '/', n);
    size_t      pn    = slash ? (size_t)(slash - dir) : 0;
    uint64_t    ph    = slash ? str_hash(dir, pn) : 0; /* the parent's, looked up in both sets */
    pthread_mutex_lock(&d->fmu);
    if (slash && set_has_h(d->made, d->made_cap, dir, pn, ph))
        (void)set_add_h(&d->with_sub, &d->nwith_sub, &d->with_sub_cap, dir, pn, ph);
    if (d->nmade >= FRESH_MAX || set_add(&d->made, &d->nmade, &d->made_cap, dir, n) != 0)
        d->made_lost = true;
    pthread_mutex_unlock(&d->fmu);
}

/* Forgets every directory remembered and remembers the root alone: the store's root is a new, empty
 * directory (dir_clear), so nothing the record held is there any more and nothing below the root exists. */
static void
fresh_reset_root(dir_store *d)
{
    pthread_mutex_lock(&d->fmu);
    set_free(d->made, d->made_cap);
    set_free(d->with_sub, d->with_sub_cap);
    d->made = d->with_sub = NULL;
    d->nmade = d->made_cap = d->nwith_sub = d->with_sub_cap = 0;
    d->made_lost                                            = false;
    pthread_mutex_unlock(&d->fmu);
    if (d->rootlen)
        fresh_made(d, d->root, d->rootlen);
}

/* The directory holding the root (`*pn` bytes; "." when the root has no slash), where clear puts trash. */
static const char *
root_parent(const dir_store *d, size_t *pn)
{
    const char *slash = memrchr(d->root, '/', d->rootlen);
    if (!slash) {
        *pn = 1;
        return ".";
    }
    *pn = (size_t)(slash - d->root);
    return d->root;
}

/* mkdir(dir, 0777), or a spare directory of the trash renamed there (store_trash.c: the emptied folders
 * of this store's cleared content, kept in the root's parent; not in durable mode, whose records and
 * syncs follow each mkdir). Same outcome and errno as mkdir. */
static int
dir_mkdir(const dir_store *d, const char *dir)
{
    size_t      pn;
    const char *parent = root_parent(d, &pn);
    if (!d->base.durable && d->rootlen && zarr__trash_take_dir(parent, pn, dir, ZARR__SPARE_MKDIR) == 0)
        return 0;
    return mkdir(dir, 0777);
}

/* Creates the directories above `path` (a file path under the root) that don't exist. */
static int
make_parents(dir_store *d, const char *path)
{
    char   dir[PATH_MAX];
    char  *slash;
    size_t n;

    slash = strrchr(path, '/');
    if (!slash || (size_t)(slash - path) <= d->rootlen)
        return ZARR_OK; /* directly under the root */
    n = (size_t)(slash - path);
    memcpy(dir, path, n);
    dir[n] = '\0';
    if (dir_mkdir(d, dir) == 0) {
        fresh_made(d, dir, n);
        return rec_parent(d, dir); /* the new entry in its parent */
    }
    if (errno == EEXIST)
        return ZARR_OK;
    if (errno != ENOENT)
        return zarr__store_io_error("create directory", dir, errno);
    if (make_parents(d, dir) != ZARR_OK)
        return ZARR_EIO;
    if (dir_mkdir(d, dir) == 0) {
        fresh_made(d, dir, n);
        return rec_parent(d, dir);
    }
    if (errno == EEXIST)
        return ZARR_OK;
    return zarr__store_io_error("create directory", dir, errno);
}

/* When the nearest ancestor of `path`'s directory the store remembers making has no subdirectory (so the
 * directory can't exist yet), makes the directories below that ancestor top-down. 1: made (the caller
 * opens once); 0: no such ancestor, or a mkdir failed (the caller takes the ENOENT path); or an error. */
static int
make_fresh(dir_store *d, const char *path)
{
    char        dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    bool        known = false;
    size_t      n, m = 0;
    int         rc;
    if (!slash || (n = (size_t)(slash - path)) >= sizeof dir || n <= d->rootlen)
        return 0;
    memcpy(dir, path, n);
    dir[n] = '\0';
    pthread_mutex_lock(&d->fmu);
    for (m = n; m > d->rootlen; m = (size_t)((char *)memrchr(dir, '/', m) - dir))
        if ((known = set_has(d->made, d->made_cap, dir, m)) || !memrchr(dir, '/', m))
            break;
    if (!known && m == d->rootlen && m) /* the root, when this store made it (zarr_store_open_dir) */
        known = set_has(d->made, d->made_cap, dir, m);
    rc = known && m < n && (!d->made_lost || !set_has(d->with_sub, d->with_sub_cap, dir, m));
    pthread_mutex_unlock(&d->fmu);
    if (!rc)
        return 0; /* the directory itself was made (exists), or nothing known */
    for (size_t k = m + 1; k <= n; k++) {
        if (k < n && dir[k] != '/')
            continue;
        dir[k] = '\0';
        if (dir_mkdir(d, dir) == 0) {
            fresh_made(d, dir, k);
            if ((rc = rec_parent(d, dir)) != ZARR_OK)
                return rc;
        }
        else if (errno == EEXIST)
            fresh_made(d, dir, k); /* made by someone else: remembered, no second wrong guess */
        else
            return 0;
        if (k < n)
            dir[k] = '/';
    }
    return 1;
}

#define WRITE_PIECE ((size_t)256 << 10)

/* Opens `path` for writing with `oflags`, creating missing parent directories on ENOENT. */
static int
open_create(dir_store *d, const char *path, int oflags, int *fd)
{
    int rc = make_fresh(d, path);
    if (rc < 0)
        return rc;
    if ((*fd = open(path, oflags, 0666)) >= 0)
        return ZARR_OK;
    if (errno != ENOENT)
        return zarr__store_io_error("create", path, errno);
    if ((rc = make_parents(d, path)) != ZARR_OK)
        return rc;
    if ((*fd = open(path, oflags, 0666)) >= 0)
        return ZARR_OK;
    return zarr__store_io_error("create", path, errno);
}

/* Writes the name of a temporary file next to `path` (whose last '/' is at `slash`) into `tmp`. */
static int
tmp_name(const dir_store *d, const char *key, const char *path, const char *slash, char *tmp, size_t n)
{
    size_t dn = (size_t)(slash - path) + 1;
    if (dn + TMP_PREFIX_LEN + 48 > n)
        return zarr_error(ZARR_EINVAL, "path of key '%s' under '%s' is too long", key, d->root);
    memcpy(tmp, path, dn);
    memcpy(tmp + dn, TMP_PREFIX, TMP_PREFIX_LEN);
    dn += TMP_PREFIX_LEN;
    dn += put_decimal(tmp + dn, self_pid());
    tmp[dn++] = '.';
    dn += put_decimal(tmp + dn, __atomic_add_fetch(&tmp_counter, 1, __ATOMIC_RELAXED));
    tmp[dn] = '\0';
    return ZARR_OK;
}

#ifdef O_TMPFILE
/* Gives the open unnamed file `fd` the name `to`; -1 with errno EEXIST when `to` exists, and
 * EOPNOTSUPP when this process can't link unnamed files at all. linkat(AT_EMPTY_PATH) is tried first
 * (cheaper than resolving /proc/self/fd/N: see bench/README.md, "What the engine does", Directory
 * store row; kernels before 6.10 allow it only with CAP_DAC_READ_SEARCH and answer ENOENT), then the
 * /proc path, which the store keeps to once it worked. ENOENT from both, with /proc present: the
 * key's directory went away. */
static int
link_fd(dir_store *d, int fd, const char *to)
{
    char proc[32] = "/proc/self/fd/";
    int  err;

    if (!__atomic_load_n(&d->link_by_proc, __ATOMIC_RELAXED)) {
        if (linkat(fd, "", AT_FDCWD, to, AT_EMPTY_PATH) == 0)
            return 0;
        if (errno != ENOENT && errno != EPERM)
            return -1;
    }
    proc[14 + put_decimal(proc + 14, (uint64_t)fd)] = '\0';
    if (linkat(AT_FDCWD, proc, AT_FDCWD, to, AT_SYMLINK_FOLLOW) == 0) {
        if (!__atomic_load_n(&d->link_by_proc, __ATOMIC_RELAXED))
            __atomic_store_n(&d->link_by_proc, 1, __ATOMIC_RELAXED);
        return 0;
    }
    err = errno;
    if (err == ENOENT && access("/proc/self/fd", F_OK) != 0)
        err = EOPNOTSUPP;
    errno = err;
    return -1;
}

#endif

/* One value being written (dir_set, and the writer ops): the file its bytes go to until the commit
 * gives them the key's name. WR_TMPFILE: an unnamed O_TMPFILE in the key's directory, linked under
 * the key (or, when the key exists, under a temporary name renamed over it); WR_NAMED: a named
 * temporary beside the key, renamed over it (no O_TMPFILE here); WR_INPLACE: the key's own file,
 * truncated (store->atomic_writes off). */
enum { WR_TMPFILE, WR_NAMED, WR_INPLACE };
typedef struct dir_wr {
    int  fd, how;
    char path[PATH_MAX]; /* the key's file */
    char tmp[PATH_MAX];  /* WR_NAMED: the temporary */
} dir_wr;

/* The file being written, for messages. */
static const char *
wr_file(const dir_wr *w)
{
    return w->how == WR_NAMED ? w->tmp : w->path;
}

/* Opens the file a value for `key` is written to, creating missing parent directories on ENOENT. */
static int
wr_open(dir_store *d, const char *key, dir_wr *w)
{
    char *slash;
    int   rc;

    w->fd = -1;
    if ((rc = make_path(d, key, w->path, sizeof w->path)) != ZARR_OK)
        return rc;
    if (!d->base.atomic_writes) {
        w->how = WR_INPLACE;
        return open_create(d, w->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, &w->fd);
    }
    slash = strrchr(w->path, '/');
#ifdef O_TMPFILE
    if (!__atomic_load_n(&d->no_tmpfile, __ATOMIC_RELAXED)) {
        int err;
        if ((rc = make_fresh(d, w->path)) < 0)
            return rc;
        *slash = '\0'; /* path is now the key's directory */
        if ((w->fd = open(w->path, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666)) < 0 && errno == ENOENT) {
            *slash = '/';
            if ((rc = make_parents(d, w->path)) != ZARR_OK)
                return rc;
            *slash = '\0';
            w->fd  = open(w->path, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        }
        err    = w->fd < 0 ? errno : 0;
        *slash = '/';
        if (w->fd >= 0) {
            w->how = WR_TMPFILE;
            return ZARR_OK;
        }
        if (err != EOPNOTSUPP && err != EISDIR && err != EINVAL)
            return zarr__store_io_error("create a file for", w->path, err);
        __atomic_store_n(&d->no_tmpfile, 1, __ATOMIC_RELAXED); /* named temporaries from now on */
    }
#endif
    w->how = WR_NAMED;
    if ((rc = tmp_name(d, key, w->path, slash, w->tmp, sizeof w->tmp)) != ZARR_OK)
        return rc;
    return open_create(d, w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, &w->fd);
}

/* `n` bytes at `off` of the file being written, in WRITE_PIECE calls: one write of a whole large value
 * (a 16 MiB shard) runs several times slower than the same bytes in pieces on the kernels measured
 * (see bench/README.md, "W2 sharded write"). */
static int
wr_pwrite(dir_wr *w, uint64_t off, const void *data, size_t n)
{
    const uint8_t *p = data;
    if (off > (uint64_t)INT64_MAX - n)
        return zarr_error(ZARR_EOVERFLOW, "can't write %zu bytes at %llu of '%s': past any file size", n,
                          (unsigned long long)off, w->path);
    while (n) {
        ssize_t k = pwrite(w->fd, p, n < WRITE_PIECE ? n : WRITE_PIECE, (off_t)off);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return zarr__store_io_error("write", wr_file(w), errno);
        }
        p += k;
        off += (uint64_t)k;
        n -= (size_t)k;
    }
    return ZARR_OK;
}

/* Drops a value being written: nothing changes at its key. */
static void
wr_abort(dir_wr *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    if (w->how == WR_NAMED)
        unlink(w->tmp);
}

#ifdef O_TMPFILE
/* The unnamed file `from` copied into the named temporary `w->tmp` (created): for a filesystem that
 * gave an O_TMPFILE but can't link it. */
static int
copy_to_named(dir_store *d, const char *key, dir_wr *w, int from)
{
    uint8_t *buf   = malloc(WRITE_PIECE);
    char    *slash = strrchr(w->path, '/');
    off_t    off   = 0;
    int      rc;

    if (!buf)
        return zarr_error(ZARR_ENOMEM, "out of memory copying the new file of '%s'", w->path);
    if ((rc = tmp_name(d, key, w->path, slash, w->tmp, sizeof w->tmp)) != ZARR_OK ||
        (rc = open_create(d, w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, &w->fd)) != ZARR_OK) {
        free(buf);
        return rc;
    }
    w->how = WR_NAMED;
    for (;;) {
        ssize_t k = pread(from, buf, WRITE_PIECE, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            rc = zarr__store_io_error("read back the new file of", w->path, errno);
            break;
        }
        if (k == 0)
            break;
        if ((rc = wr_pwrite(w, (uint64_t)off, buf, (size_t)k)) != ZARR_OK)
            break;
        off += k;
    }
    free(buf);
    return rc;
}
#endif

/* Gives the value written its key's name, atomically (durable mode: its data synced first), and
 * closes it; on failure nothing changes at the key. */
static int
wr_commit(dir_store *d, const char *key, dir_wr *w)
{
    int rc = ZARR_OK, err;

    ZARR_TRY(sync_file(d, w->fd, wr_file(w))); /* durable: the data before the name */
#ifdef O_TMPFILE
    if (w->how == WR_TMPFILE) {
        int  fd     = w->fd;
        bool rfirst = rename_first(d);
        if (!rfirst && link_fd(d, fd, w->path) == 0) {
            if (!__atomic_load_n(&d->tmpfile_used, __ATOMIC_RELAXED))
                __atomic_store_n(&d->tmpfile_used, 1, __ATOMIC_RELAXED);
            note_link(d, false);
            goto named;
        }
        if (rfirst || errno == EEXIST) { /* replacing a value: link under a temporary name, rename it over */
            if (!rfirst)
                note_link(d, true);
            ZARR_TRY(tmp_name(d, key, w->path, strrchr(w->path, '/'), w->tmp, sizeof w->tmp));
            if (link_fd(d, fd, w->tmp) != 0)
                FAIL_WITH(zarr__store_io_error("link a temporary file for", w->path, errno));
            w->how = WR_NAMED; /* from here on the temporary is removed on failure */
            goto rename;
        }
        if (errno == ENOENT || errno == ENOTDIR)
            FAIL_WITH(zarr__store_io_error("link the new file of", w->path, errno));
        /* EOPNOTSUPP (old kernel, no /proc), EXDEV, ...: named temporaries from now on, and this
         * value is copied into one */
        __atomic_store_n(&d->no_tmpfile, 1, __ATOMIC_RELAXED);
        w->fd = -1;
        rc    = copy_to_named(d, key, w, fd);
        close(fd);
        ZARR_TRY(rc);
        ZARR_TRY(sync_file(d, w->fd, w->tmp));
    }
#endif
    if (w->how == WR_INPLACE)
        goto named;
    err   = close(w->fd) != 0 ? errno : 0;
    w->fd = -1;
    if (err)
        FAIL_WITH(zarr__store_io_error("write", w->tmp, err));
#ifdef O_TMPFILE
rename:
#endif
    if (!d->base.durable && renameat2(AT_FDCWD, w->tmp, AT_FDCWD, w->path, RENAME_EXCHANGE) == 0) {
        if (unlink(w->tmp) == 0 || errno == ENOENT) { /* the old value, now under the temporary name */
            __atomic_add_fetch(&d->exchanges, 1, __ATOMIC_RELAXED);
            w->how = WR_TMPFILE; /* named: nothing to remove */
            goto named;
        }
        /* the key was a directory (EISDIR): swapped back, and the rename below refuses as before */
        (void)renameat2(AT_FDCWD, w->tmp, AT_FDCWD, w->path, RENAME_EXCHANGE);
    }
    if (rename(w->tmp, w->path) != 0) {
        rc = zarr__store_io_error("rename a temporary file onto", w->path, errno);
        FAIL_WITH(rc == ZARR_ENOTFOUND ? ZARR_EIO : rc);
    }
    w->how = WR_TMPFILE; /* renamed: nothing to remove */
named:
    rc = rec_parent(d, w->path); /* the entry may be new */
done:
    if (w->fd >= 0 && close(w->fd) != 0 && rc == ZARR_OK)
        rc = zarr__store_io_error("write", wr_file(w), errno);
    w->fd = -1;
    if (rc != ZARR_OK)
        wr_abort(w);
    return rc;
}

static void dir_destroy(zarr_store *s);

/* The test hooks' guard: whether `s` is a store of this file (they touch its private state). */
static bool
is_dir_store(const zarr_store *s)
{
    return s && s->ops->destroy == dir_destroy;
}

bool
zarr__store_dir_tmpfile_used(zarr_store *s)
{
    return is_dir_store(s) && __atomic_load_n(&((dir_store *)s)->tmpfile_used, __ATOMIC_RELAXED);
}

uint64_t
zarr__store_dir_exchanges(zarr_store *s)
{
    return is_dir_store(s) ? __atomic_load_n(&((dir_store *)s)->exchanges, __ATOMIC_RELAXED) : 0;
}

uint64_t
zarr__store_dir_link_misses(zarr_store *s)
{
    return is_dir_store(s) ? __atomic_load_n(&((dir_store *)s)->link_misses, __ATOMIC_RELAXED) : 0;
}

uint64_t
zarr__store_dir_tmp_pid(void)
{
    return self_pid();
}

void
zarr__store_dir_force(zarr_store *s, int how)
{
    if (!is_dir_store(s))
        return;
    if (how == ZARR__DIR_NO_EXCHANGE || how == ZARR__DIR_FAIL_EXCHANGE) {
        ((dir_store *)s)->clear_force = how;
        return;
    }
    __atomic_store_n(how == ZARR__DIR_RENAME ? &((dir_store *)s)->no_tmpfile
                                             : &((dir_store *)s)->link_by_proc,
                     1, __ATOMIC_RELAXED);
}

static int
dir_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    dir_store *d = (dir_store *)s;
    dir_wr     w;
    int        rc;

    ZARR_TRY(wr_open(d, key, &w));
    if ((rc = wr_pwrite(&w, 0, data, n)) != ZARR_OK) {
        wr_abort(&w);
        return rc;
    }
    return wr_commit(d, key, &w);
done:
    return rc;
}

/* The writer ops: a dir_wr on the heap, written with pwrite from any thread. */
static int
dir_writer_open(zarr_store *s, const char *key, void **h)
{
    dir_wr *w = malloc(sizeof *w);
    int     rc;
    if (!w)
        return zarr_error(ZARR_ENOMEM, "out of memory starting a value at '%s'", key);
    if ((rc = wr_open((dir_store *)s, key, w)) != ZARR_OK) {
        free(w);
        return rc;
    }
    *h = w;
    return ZARR_OK;
}

static int
dir_writer_write(zarr_store *s, void *h, uint64_t off, const void *data, size_t n)
{
    (void)s;
    return wr_pwrite(h, off, data, n);
}

static int
dir_writer_close(zarr_store *s, void *h, bool commit)
{
    dir_wr     *w   = h;
    dir_store  *d   = (dir_store *)s;
    int         rc  = ZARR_OK;
    const char *key = NULL;
    if (!w)
        return ZARR_OK;
    if (commit) {
        /* the key, for messages and temporary names: the path below the root */
        key = w->path + d->rootlen + 1; /* make_path: root, '/', key */
        rc  = wr_commit(d, key, w);
    }
    else
        wr_abort(w);
    free(w);
    return rc;
}

/* What a non-regular file at a key is, for messages. */
static const char *
kind_of(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISFIFO(m) ? "a fifo"
           : S_ISSOCK(m) ? "a socket"
                         : "a device or special file";
}

/* Why nothing could be opened or stat'ed at `path` (errno `e`): "nothing there" is a bare
 * ZARR_ENOTFOUND (the ops' contract, zarr.h); a dangling symbolic link is an error naming it, never an
 * absent (fill-valued) chunk. */
static int
open_failure(const char *path, int e)
{
    struct stat lst;
    if (e == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
        return zarr_error(ZARR_EIO, "can't read '%s': it is a dangling symbolic link", path);
    if (e == ENOENT || e == ENOTDIR)
        return ZARR_ENOTFOUND;
    return zarr__store_io_error("read", path, e);
}

/* Opens the value at `path` to read it. Only "nothing there" is quiet (ZARR_ENOTFOUND without a
 * message): a key that exists but is no regular file (a directory, a fifo, a socket, a device) or is a
 * dangling symbolic link is an error naming it. Never blocks: a fifo is opened O_NONBLOCK and refused.
 * On success *fd is open and *st describes it. */
static int
open_value(const char *path, int *fd, struct stat *st)
{
    int e;
    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (*fd < 0)
        return open_failure(path, errno);
    if (fstat(*fd, st) != 0) {
        e = errno;
        close(*fd);
        *fd = -1;
        return zarr__store_io_error("stat", path, e);
    }
    if (!S_ISREG(st->st_mode)) {
        close(*fd);
        *fd = -1;
        return zarr_error(ZARR_EIO, "can't read '%s': it is %s, not a regular file", path,
                          kind_of(st->st_mode));
    }
    return ZARR_OK;
}

/* pread until `n` bytes are in `dst` or the file ends; returns the bytes read, or -1 (errno set). */
static ssize_t
pread_all(int fd, uint8_t *dst, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, dst + got, n - got, (off_t)(off + got));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* How dir_read reads: the whole value, bytes off..off+len (len UINT64_MAX = to the end), or the last
 * len bytes. */
enum { WHOLE, RANGE, SUFFIX };

/* One open + fstat + pread: every read of the store. `*total` (may be NULL) gets the value's size,
 * `*mtime` (may be NULL) its modification time from the same fstat (get_many items: a caller that wants
 * the time, like H5Oget_info of a node it read, needs no stat of its own). */
static int
dir_read(zarr_store *s, const char *key, int how, uint64_t off, uint64_t len, zarr_buf *out, uint64_t *total,
         int64_t *mtime)
{
    dir_store  *d = (dir_store *)s;
    char        path[PATH_MAX];
    int         fd = -1, rc = ZARR_OK;
    struct stat st;
    uint64_t    size, want;
    ssize_t     got;

    out->size = 0;
    ZARR_TRY(make_path(d, key, path, sizeof path));
    ZARR_TRY(open_value(path, &fd, &st));
    size = (uint64_t)st.st_size;
    if (mtime)
        *mtime = (int64_t)st.st_mtime;
    if (how == WHOLE) {
        off  = 0;
        want = size;
    }
    else if (how == SUFFIX) {
        want = len < size ? len : size;
        off  = size - want;
    }
    else {
        if (off > size || (len != UINT64_MAX && len > size - off))
            FAIL_WITH(
                zarr_error(ZARR_ECODEC, "can't read bytes %llu+%llu of '%s': the value has only %llu bytes",
                           (unsigned long long)off, (unsigned long long)len, path, (unsigned long long)size));
        want = len == UINT64_MAX ? size - off : len;
    }
    if (want > SIZE_MAX)
        FAIL_WITH(zarr_error(ZARR_EOVERFLOW, "value '%s' is too large", path));
    ZARR_TRY(zarr_buf_resize(out, (size_t)want));
    if ((got = pread_all(fd, out->data, (size_t)want, off)) < 0)
        FAIL_WITH(zarr__store_io_error("read", path, errno));
    if ((uint64_t)got < want && how != WHOLE)
        FAIL_WITH(zarr_error(ZARR_ECODEC, "value '%s' shrank while reading it", path));
    out->size = (size_t)got;
    if (total)
        *total = how == WHOLE ? (uint64_t)got : size;
done:
    if (fd >= 0)
        close(fd);
    if (rc != ZARR_OK)
        out->size = 0;
    return rc;
}

/* `n` bytes from `off` of the value at `key` straight into `dst`: get_into (`whole`: the value must hold
 * exactly n bytes) and get_range_into (it must hold off + n at least). */
static int
read_into(zarr_store *s, const char *key, uint64_t off, void *dst, size_t n, bool whole)
{
    dir_store  *d = (dir_store *)s;
    char        path[PATH_MAX];
    int         fd = -1, rc = ZARR_OK;
    struct stat st;
    ssize_t     got;

    ZARR_TRY(make_path(d, key, path, sizeof path));
    ZARR_TRY(open_value(path, &fd, &st));
    if (whole && (uint64_t)st.st_size != (uint64_t)n)
        FAIL_WITH(zarr_error(ZARR_ECODEC, "chunk '%s' holds %llu bytes, expected %zu", path,
                             (unsigned long long)st.st_size, n));
    if (off > (uint64_t)st.st_size || (uint64_t)st.st_size - off < n || off > (uint64_t)INT64_MAX)
        FAIL_WITH(zarr_error(ZARR_ECODEC, "can't read bytes %llu+%zu of '%s': the value has only %llu bytes",
                             (unsigned long long)off, n, path, (unsigned long long)st.st_size));
    if ((got = pread_all(fd, dst, n, (off_t)off)) < 0)
        FAIL_WITH(zarr__store_io_error("read", path, errno));
    if ((size_t)got < n)
        FAIL_WITH(zarr_error(ZARR_ECODEC, "value '%s' shrank while reading it", path));
done:
    if (fd >= 0)
        close(fd);
    return rc;
}

static int
dir_get_into(zarr_store *s, const char *key, void *dst, size_t n)
{
    return read_into(s, key, 0, dst, n, true);
}

static int
dir_get_range_into(zarr_store *s, const char *key, uint64_t off, void *dst, size_t n)
{
    return read_into(s, key, off, dst, n, false);
}

static int
dir_get(zarr_store *s, const char *key, zarr_buf *out)
{
    return dir_read(s, key, WHOLE, 0, 0, out, NULL, NULL);
}

static int
dir_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    return dir_read(s, key, RANGE, off, len, out, NULL, NULL);
}

/* Item by item, one open each; suffix reads natively (fstat gives the size), and each item's mtime from
 * the same fstat. */
static int
dir_get_many(zarr_store *s, size_t n, zarr_store_req *reqs)
{
    int first = ZARR_OK;
    for (size_t i = 0; i < n; i++) {
        zarr_store_req *r   = &reqs[i];
        int             how = r->suffix ? SUFFIX : r->off == 0 && r->len == UINT64_MAX ? WHOLE : RANGE;
        r->total            = UINT64_MAX;
        r->result           = dir_read(s, r->key, how, r->off, r->len, r->out, &r->total, &r->mtime);
        if (r->result != ZARR_OK) {
            r->total = UINT64_MAX;
            if (first == ZARR_OK)
                first = r->result;
        }
    }
    return first;
}

static int
dir_del(zarr_store *s, const char *key)
{
    dir_store *d = (dir_store *)s;
    char       path[PATH_MAX];
    int        rc;

    if ((rc = make_path(d, key, path, sizeof path)) != ZARR_OK)
        return rc;
    if (unlink(path) == 0)
        return rec_parent(d, path);
    if (errno == ENOENT || errno == ENOTDIR || errno == EISDIR)
        return ZARR_OK;
    return zarr__store_io_error("delete", path, errno);
}

static int
dir_del_prefix(zarr_store *s, const char *prefix)
{
    dir_store  *d = (dir_store *)s;
    char        path[PATH_MAX];
    struct stat st;
    int         rc, fd;

    if ((rc = make_path(d, prefix, path, sizeof path)) != ZARR_OK)
        return rc;
    if (lstat(path, &st) != 0)
        return errno == ENOENT || errno == ENOTDIR ? ZARR_OK : zarr__store_io_error("stat", path, errno);
    if (!S_ISDIR(st.st_mode)) {
        if (unlink(path) == 0)
            return rec_parent(d, path);
        return errno == ENOENT ? ZARR_OK : zarr__store_io_error("delete", path, errno);
    }
    if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return zarr__store_io_error("open directory", path, errno);
    if ((rc = zarr__trash_rm_contents(fd, path)) != ZARR_OK)
        return zarr_error_wrap(rc, "can't delete '%s': ", path);
    if (*prefix && rmdir(path) != 0 && errno != ENOENT)
        return zarr__store_io_error("remove directory", path, errno);
    /* durable: the removed entry in the parent; the root itself when it was emptied */
    return *prefix ? rec_parent(d, path) : d->base.durable ? rec_dir(d, d->root, d->rootlen) : ZARR_OK;
}

static int
dir_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud)
{
    dir_store     *d = (dir_store *)s;
    char           path[PATH_MAX];
    DIR           *dir;
    struct dirent *e;
    int            rc;

    if ((rc = make_path(d, prefix, path, sizeof path)) != ZARR_OK)
        return rc;
    if (!(dir = opendir(path)))
        return errno == ENOENT || errno == ENOTDIR ? ZARR_OK : zarr__store_io_error("list", path, errno);
    while ((e = readdir(dir))) {
        bool is_dir;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            strncmp(e->d_name, TMP_PREFIX, TMP_PREFIX_LEN) == 0 || zarr_store_trash_name(e->d_name))
            continue;
        if (e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) {
            struct stat st;
            if (fstatat(dirfd(dir), e->d_name, &st, 0) != 0)
                continue;
            is_dir = S_ISDIR(st.st_mode);
        }
        else
            is_dir = e->d_type == DT_DIR;
        if ((rc = cb(e->d_name, is_dir, ud)) != 0)
            break;
    }
    closedir(dir);
    return rc;
}

static int
dir_exists(zarr_store *s, const char *key)
{
    dir_store  *d = (dir_store *)s;
    char        path[PATH_MAX];
    struct stat st;
    int         rc;

    if ((rc = make_path(d, key, path, sizeof path)) != ZARR_OK)
        return rc;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        return ZARR_OK;
    return ZARR_ENOTFOUND;
}

/* stat of the regular file holding `key`: a bare ZARR_ENOTFOUND when there is none. Something else
 * at the key (a directory, a fifo, a dangling symbolic link) is ZARR_ENOTFOUND too unless `strict`,
 * where it is the error a read of it gives (size: never a silently absent chunk). */
static int
dir_stat_file(zarr_store *s, const char *key, bool strict, struct stat *st)
{
    dir_store *d = (dir_store *)s;
    char       path[PATH_MAX];
    int        rc;

    if ((rc = make_path(d, key, path, sizeof path)) != ZARR_OK)
        return rc;
    if (stat(path, st) != 0)
        return strict                                ? open_failure(path, errno)
               : errno == ENOENT || errno == ENOTDIR ? ZARR_ENOTFOUND
                                                     : zarr__store_io_error("stat", path, errno);
    if (!S_ISREG(st->st_mode))
        return strict ? zarr_error(ZARR_EIO, "can't read '%s': it is %s, not a regular file", path,
                                   kind_of(st->st_mode))
                      : ZARR_ENOTFOUND;
    return ZARR_OK;
}

static int
dir_mtime(zarr_store *s, const char *key, int64_t *sec)
{
    struct stat st;
    int         rc = dir_stat_file(s, key, false, &st);
    if (rc == ZARR_OK)
        *sec = (int64_t)st.st_mtime;
    return rc;
}

static int
dir_size(zarr_store *s, const char *key, uint64_t *size)
{
    struct stat st;
    int         rc = dir_stat_file(s, key, true, &st);
    if (rc == ZARR_OK)
        *size = (uint64_t)st.st_size;
    return rc;
}

/* The regular files below the open directory `fd` (taken), whose key is `key` (klen bytes, "" for the
 * root; room for PATH_MAX), for list_keys. Symbolic links to files count, symbolic links to directories
 * are not followed (no loops); temporaries of atomic writes are skipped. */
static int
keys_below(int fd, char *key, size_t klen, zarr_key_cb cb, void *ud, int depth)
{
    DIR           *dir;
    struct dirent *e;
    int            rc = ZARR_OK;

    if (!(dir = fdopendir(fd))) {
        rc = zarr__store_io_error("list", *key ? key : ".", errno);
        close(fd);
        return rc;
    }
    while (rc == ZARR_OK && (e = readdir(dir))) {
        size_t      n = strlen(e->d_name), kn;
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            strncmp(e->d_name, TMP_PREFIX, TMP_PREFIX_LEN) == 0 || zarr_store_trash_name(e->d_name) ||
            klen + 1 + n + 1 > PATH_MAX)
            continue;
        kn = klen;
        if (klen)
            key[kn++] = '/';
        memcpy(key + kn, e->d_name, n + 1);
        if (e->d_type == DT_DIR ||
            (e->d_type == DT_UNKNOWN && fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
             S_ISDIR(st.st_mode))) {
            int sub;
            if (depth >= 256) {
                rc = zarr_error(ZARR_EINVAL, "can't list the keys below '%s': more than 256 levels", key);
                break;
            }
            if ((sub = openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
                if (errno != ENOENT)
                    rc = zarr__store_io_error("open directory", key, errno);
            }
            else
                rc = keys_below(sub, key, kn + n, cb, ud, depth + 1);
        }
        else if (fstatat(dirfd(dir), e->d_name, &st, 0) == 0 && S_ISREG(st.st_mode) &&
                 zarr__store_check_key(key, false) == ZARR_OK)
            rc = cb(key, (uint64_t)st.st_size, ud);
        else
            zarr_error_clear(); /* gone, dangling, special, or a name no key can have: not a value */
        key[klen] = '\0';
    }
    closedir(dir);
    return rc;
}

static int
dir_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud)
{
    dir_store *d = (dir_store *)s;
    char       path[PATH_MAX], key[PATH_MAX];
    size_t     k = strlen(prefix);
    int        rc, fd;

    if ((rc = make_path(d, prefix, path, sizeof path)) != ZARR_OK)
        return rc;
    if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return errno == ENOENT || errno == ENOTDIR ? ZARR_OK : zarr__store_io_error("list", path, errno);
    memcpy(key, prefix, k + 1); /* fits: make_path checked a longer string */
    return keys_below(fd, key, k, cb, ud, 0);
}

/* The root folder, once del_prefix("") emptied it. "/" itself is never removed. */
static int
dir_remove_root(zarr_store *s)
{
    dir_store *d = (dir_store *)s;
    if (d->rootlen == 0)
        return zarr_error(ZARR_EINVAL, "can't remove the directory store rooted at '/'");
    if (rmdir(d->root) == 0)
        return rec_parent(d, d->root);
    if (errno == ENOENT)
        return ZARR_OK;
    return zarr__store_io_error("remove directory", d->root, errno);
}

/* True when the directory `dir` holds no entry (a store just created): a clear has nothing to move. */
static bool
dir_empty(const char *dir)
{
    DIR           *h = opendir(dir);
    struct dirent *e;
    bool           empty = h != NULL;
    while (h && (e = readdir(h)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            empty = false;
            break;
        }
    if (h)
        closedir(h);
    return empty;
}

/* True when the parent directory (`parent`, `pn` bytes; 0: "/") is itself a zarr node: trash made there
 * would be listed as a child by zarr readers of that hierarchy until deleted, so clear deletes instead. */
static bool
parent_is_node(const char *parent, size_t pn)
{
    static const char *const docs[] = {"zarr.json", ".zgroup", ".zarray"};
    char                     p[PATH_MAX];
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        if ((size_t)snprintf(p, sizeof p, "%.*s/%s", (int)pn, parent, docs[i]) >= sizeof p ||
            access(p, F_OK) == 0)
            return true;
    }
    return false;
}

/* Failures of the move aside that leave the store as it was and mean "can't here" (no RENAME_EXCHANGE on
 * this file system, the root a mount point, no write permission on the parent, no room for a
 * directory, a name too long): the clear then deletes key by key, as del_prefix. */
static bool
clear_falls_back(int err)
{
    return err == EINVAL || err == ENOSYS || err == EOPNOTSUPP || err == EXDEV || err == EBUSY ||
           err == EACCES || err == EPERM || err == ENAMETOOLONG || err == EMLINK || err == ENOSPC ||
           err == EDQUOT || err == EROFS || err == EEXIST || err == ENOENT || err == ENOTDIR;
}

/* Empties the store for a create that truncates: an empty directory made under a trash name beside the
 * root is swapped with the root in one renameat2(RENAME_EXCHANGE), so at every instant the root's name
 * holds the old content or the empty directory, and the old content, now under the trash name, is
 * deleted by the core's background thread (store_trash.c; docs/FORMAT.md "Trash"). A few system calls
 * on the caller whatever the store held. Durable: the parent's two changed entries are recorded for
 * the sync pass. A root at "/", a symbolic link, a parent that is a zarr node, or a "can't here"
 * failure (clear_falls_back) delete key by key instead; any other failure is an error, and the store
 * holds what it held. */
static int
dir_clear(zarr_store *s)
{
    dir_store  *d = (dir_store *)s;
    char        trash[PATH_MAX];
    const char *parent;
    size_t      pn;
    struct stat st;
    int         err, rc;

    if (d->rootlen == 0 || lstat(d->root, &st) != 0 || !S_ISDIR(st.st_mode))
        return dir_del_prefix(s, "");
    parent = root_parent(d, &pn);
    zarr__trash_sweep(parent, pn); /* dead processes' trash there: once per parent directory and process */
    if (dir_empty(d->root)) {
        fresh_reset_root(d);
        return ZARR_OK;
    }
    if (parent_is_node(parent, pn))
        return dir_del_prefix(s, "");
    if ((err = zarr__trash_make(parent, pn, st.st_mode & 07777, trash, sizeof trash)) != 0)
        return clear_falls_back(err)
                   ? dir_del_prefix(s, "")
                   : zarr_error(ZARR_EIO, "can't clear store '%s': can't make a directory beside it: %s",
                                d->root, strerror(err));
    err = d->clear_force == ZARR__DIR_FAIL_EXCHANGE                             ? EIO
          : d->clear_force == ZARR__DIR_NO_EXCHANGE                             ? EINVAL
          : renameat2(AT_FDCWD, trash, AT_FDCWD, d->root, RENAME_EXCHANGE) == 0 ? 0
                                                                                : errno;
    if (err) {
        (void)rmdir(trash); /* still the empty directory made above */
        if (clear_falls_back(err))
            return dir_del_prefix(s, "");
        return zarr_error(err == ENOMEM ? ZARR_ENOMEM : ZARR_EIO,
                          "can't clear store '%s': can't swap it with the empty directory '%s': %s%s",
                          d->root, trash, strerror(err), d->clear_force ? " (injected)" : "");
    }
    /* durable: the parent's entries (the root, the trash name) */
    rc = rec_parent(d, trash);
    zarr__trash_put(trash);
    fresh_reset_root(d); /* the arrays made again in the new root: no failed open or mkdir (make_fresh) */
    return rc;
}

static int
dir_rename(zarr_store *s, const char *from, const char *to)
{
    dir_store *d = (dir_store *)s;
    char       pf[PATH_MAX], pt[PATH_MAX];
    int        rc;

    if ((rc = make_path(d, from, pf, sizeof pf)) != ZARR_OK ||
        (rc = make_path(d, to, pt, sizeof pt)) != ZARR_OK)
        return rc;
    /* the target's parent usually exists (a rename within a group): made only when the first try says
     * something is missing, and then the source is checked first */
    int ok = rename(pf, pt) == 0;
    if (!ok && errno == ENOENT) {
        if (access(pf, F_OK) != 0)
            return zarr__store_io_error("rename", pf, errno);
        if ((rc = make_parents(d, pt)) != ZARR_OK)
            return rc;
        ok = rename(pf, pt) == 0;
    }
    if (ok) {
        if ((rc = rec_parent(d, pf)) != ZARR_OK)
            return rc;
        return rec_parent(d, pt);
    }
    if (errno == ENOTEMPTY || errno == EEXIST)
        return zarr_error(ZARR_EEXIST, "can't rename '%s' to '%s': the target exists", pf, pt);
    rc = zarr__store_io_error("rename", pf, errno);
    return rc == ZARR_ENOTFOUND ? ZARR_EIO : rc;
}

static int
dir_flush(zarr_store *s)
{
    (void)s;
    return ZARR_OK; /* nothing buffered (the sync pass is dir_sync) */
}

/* The sync pass: fsync of every directory recorded since the last one, each once. The set is taken
 * out under the lock (writes may go on meanwhile: they record into a new set). A directory gone since
 * (deleted with its prefix, whose parent was recorded then) is skipped. On a failure the directories
 * not synced yet are recorded again for the next pass. */
static int
dir_sync(zarr_store *s)
{
    dir_store *d = (dir_store *)s;
    char     **v;
    size_t     cap, i;
    int        rc = ZARR_OK;

    pthread_mutex_lock(&d->mu);
    v       = d->dirs;
    cap     = d->cap;
    d->dirs = NULL;
    d->cap = d->ndirs = 0;
    pthread_mutex_unlock(&d->mu);
    for (i = 0; i < cap; i++) {
        int fd;
        if (!v[i])
            continue;
        if ((fd = open(v[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                continue;
            rc = zarr__store_io_error("open directory to sync", v[i], errno);
            break;
        }
        while ((rc = fsync(fd)) != 0 && errno == EINTR)
            ;
        if (rc != 0)
            rc = zarr__store_io_error("sync directory", v[i], errno);
        close(fd);
        if (rc != ZARR_OK)
            break;
        __atomic_add_fetch(&d->dirs_synced, 1, __ATOMIC_RELAXED);
    }
    if (rc != ZARR_OK) { /* the failed directory and the rest back into the set, for the next pass */
        char msg[1024];
        zarr_error_save(msg, sizeof msg);
        for (size_t k = i; k < cap; k++)
            if (v[k])
                (void)rec_dir(d, v[k], strlen(v[k])); /* best effort: the error reported is rc's */
        zarr_error_restore(rc, msg);
    }
    for (size_t k = 0; k < cap; k++)
        free(v[k]);
    free(v);
    return rc;
}

void
zarr__store_dir_sync_counts(zarr_store *s, uint64_t *files, uint64_t *dirs)
{
    bool ok = is_dir_store(s);
    if (files)
        *files = ok ? __atomic_load_n(&((dir_store *)s)->files_synced, __ATOMIC_RELAXED) : 0;
    if (dirs)
        *dirs = ok ? __atomic_load_n(&((dir_store *)s)->dirs_synced, __ATOMIC_RELAXED) : 0;
}

static void
dir_destroy(zarr_store *s)
{
    dir_store *d = (dir_store *)s;
    set_free(d->dirs, d->cap);
    set_free(d->made, d->made_cap);
    set_free(d->with_sub, d->with_sub_cap);
    pthread_mutex_destroy(&d->mu);
    pthread_mutex_destroy(&d->fmu);
    free(d->root);
    free(s->url);
    free(d);
}

static const zarr_store_ops dir_ops = {
    .name           = "dir",
    .get            = dir_get,
    .get_range      = dir_get_range,
    .set            = dir_set,
    .del            = dir_del,
    .del_prefix     = dir_del_prefix,
    .list           = dir_list,
    .exists         = dir_exists,
    .mtime          = dir_mtime,
    .get_many       = dir_get_many,
    .set_many       = NULL,
    .rename         = dir_rename,
    .flush          = dir_flush,
    .destroy        = dir_destroy,
    .size           = dir_size,
    .get_into       = dir_get_into,
    .get_range_into = dir_get_range_into,
    .list_keys      = dir_list_keys,
    .remove_root    = dir_remove_root,
    .clear          = dir_clear,
    .sync           = dir_sync,
    .writer_open    = dir_writer_open,
    .writer_write   = dir_writer_write,
    .writer_close   = dir_writer_close,
};

/* Creates the store's root directory and its missing parents; in durable mode each new directory's
 * entry in its parent is recorded for the first sync pass. */
static int
mkdir_p(dir_store *d, char *path)
{
    int rc = ZARR_OK;
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0777) == 0)
            rc = rec_parent(d, path);
        else if (errno != EEXIST)
            rc = zarr__store_io_error("create directory", path, errno);
        *p = '/';
        if (rc != ZARR_OK)
            return rc;
    }
    if (mkdir(path, 0777) == 0) {
        fresh_made(d, path, strlen(path)); /* a new, empty root: nothing below it exists yet */
        return rec_parent(d, path);
    }
    if (errno != EEXIST)
        return zarr__store_io_error("create directory", path, errno);
    return ZARR_OK;
}

int
zarr_store_open_dir(const char *path, int flags, zarr_store **out)
{
    dir_store  *d  = NULL;
    int         rc = ZARR_OK;
    struct stat st;
    size_t      n;

    if (!path || !out || !*path)
        return zarr_error(ZARR_EINVAL, "zarr_store_open_dir: empty path");
    *out = NULL;
    if (!(d = calloc(1, sizeof *d)))
        return zarr_error(ZARR_ENOMEM, "out of memory opening '%s'", path);
    pthread_mutex_init(&d->mu, NULL);
    pthread_mutex_init(&d->fmu, NULL);
    d->base.durable = (flags & ZARR_STORE_DURABLE) != 0;
    if (!(d->root = strdup(path)) || !(d->base.url = strdup(path)))
        FAIL_WITH(zarr_error(ZARR_ENOMEM, "out of memory opening '%s'", path));
    n = strlen(d->root);
    while (n > 0 && d->root[n - 1] == '/')
        d->root[--n] = '\0';
    d->rootlen = n;
    if (n >= PATH_MAX - 2)
        FAIL_WITH(zarr_error(ZARR_EINVAL, "directory path '%s' is too long", path));
    if ((flags & ZARR_STORE_CREATE) && n > 0)
        ZARR_TRY(mkdir_p(d, d->root));
    if (stat(n ? d->root : "/", &st) != 0)
        FAIL_WITH(zarr__store_io_error("open store directory", path, errno));
    if (!S_ISDIR(st.st_mode))
        FAIL_WITH(zarr_error(ZARR_EINVAL, "can't open '%s' as a directory store: not a directory", path));
    d->base.ops             = &dir_ops;
    d->base.refcount        = 1;
    d->base.readonly        = !(flags & (ZARR_STORE_RDWR | ZARR_STORE_CREATE));
    d->base.atomic_writes   = true;
    d->base.prefers_batches = false; /* a read is a few syscalls: workers call the store in parallel */
    *out                    = &d->base;
    d                       = NULL;
done:
    if (d) {
        set_free(d->dirs, d->cap);
        set_free(d->made, d->made_cap);
        set_free(d->with_sub, d->with_sub_cap);
        pthread_mutex_destroy(&d->mu);
        pthread_mutex_destroy(&d->fmu);
        free(d->root);
        free(d->base.url);
        free(d);
    }
    return rc;
}
