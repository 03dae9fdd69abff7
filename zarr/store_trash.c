/*
 * store_trash.c: deleting what the directory store moved aside. zarr_store_clear of a directory store
 * (store_dir.c, dir_clear) swaps the store's root with an empty directory made under a trash name
 * ".h5zarr-trash.<pid>.<n>" in the root's parent (one renameat2 RENAME_EXCHANGE), so a create that
 * truncates costs its caller a few system calls whatever the store held (docs/FORMAT.md "Trash"). The
 * old content, now under the trash name, is deleted here by one background thread of the core, fed
 * through a bounded queue. The thread starts at the first trash and then waits idle for more (a program
 * that truncates often, like nc_test, starts it once instead of once per clear); zarr_store_clear_wait
 * drains the queue and joins the thread (the connector
 * calls it at its termination, the library's destructor too). Trash left by a process that died (the
 * pid in its name runs no more) is claimed, by renaming it to a trash name of this process, when a clear
 * first meets its parent directory, and deleted the same way. Nothing here reads a value: a trash tree
 * is only listed and unlinked, and it is never a store: listings skip the names, the connector's
 * pointer sweeps ignore them.
 *
 * The tree removal (also the directory store's del_prefix) reads each directory with getdents64 on the
 * descriptor it opened: readdir's fdopendir costs an fstat and an fcntl more per directory. Entries
 * that vanish meanwhile (another process claiming the same trash, a concurrent delete) are not errors.
 *
 * Spare directories: a truncating create makes the same folders again (nc_test clears and re-creates its
 * store ~90 times, ~270 folders each), and on a file system that discards freed blocks at once (ext4
 * mounted with `discard`, as here) an rmdir costs about 1 ms and a mkdir allocates an inode and a block
 * again. So the thread does not remove the emptied folders of a trash tree: it renames them, empty, into
 * one pool directory of this process (itself under a trash name, `.h5zarr-trash.<pid>.<n>`, in the same
 * parent: listings skip it, a dead process's pool is claimed like its trash), at most SPARE_MAX of them,
 * and only those a mkdir there would make alike (owner, group, mode and device of the pool, which was
 * made with mkdir 0777). A directory store that is not durable asks zarr__trash_take_dir before each
 * mkdir below its root (and zarr__trash_make for the new root): one renameat2(RENAME_NOREPLACE) of an
 * empty spare to the name, which answers EEXIST and ENOENT as mkdir does, and nothing is freed or
 * allocated. What is left in the pool is removed at zarr_store_clear_wait, with the pool.
 */
#define _GNU_SOURCE
#include "store_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define TRASH_QUEUE_MAX 64   /* trash directories waiting: a clear past it waits for the thread */
#define SWEPT_MAX       32   /* parent directories already swept for dead processes' trash (hashes) */
#define SPARE_MAX       2048 /* emptied directories kept in the pool for reuse at most */

int
zarr__store_io_error(const char *what, const char *path, int err)
{
    int code = err == ENOENT || err == ENOTDIR                 ? ZARR_ENOTFOUND
               : err == ENOMEM                                 ? ZARR_ENOMEM
               : err == EROFS || err == EACCES || err == EPERM ? ZARR_EREADONLY
                                                               : ZARR_EIO;
    return zarr_error(code, "can't %s '%s': %s", what, path, strerror(err));
}

bool
zarr_store_trash_name(const char *name)
{
    const char *p;
    if (!name || strncmp(name, ZARR__TRASH_PREFIX, ZARR__TRASH_PREFIX_LEN) != 0)
        return false;
    p = name + ZARR__TRASH_PREFIX_LEN;
    if (*p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p++ != '.' || *p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    return *p == '\0';
}

/* ---- spare directories (the comment at the top) ---- */

static struct {
    int      fd;               /* the pool directory, -1: none (set and closed by the thread, or after it) */
    char     parent[PATH_MAX]; /* the directory holding it, as the trash paths name it */
    size_t   pn;
    char     path[PATH_MAX]; /* the pool's own path */
    dev_t    dev;
    uid_t    uid;
    gid_t    gid;
    unsigned mode;              /* permission bits of the pool: what mkdir(0777) makes in `parent` */
    unsigned ids[SPARE_MAX], n; /* names (decimal) of the spares in the pool, a stack; under sp_mu */
    unsigned next;              /* the next name (trash thread only) */
    bool     off;               /* a rename failed unexpectedly (EXDEV, EINVAL, ...): no more spares */
    uint64_t kept, taken;       /* under sp_mu (tests) */
} sp = {.fd = -1};

static pthread_mutex_t sp_mu = PTHREAD_MUTEX_INITIALIZER; /* sp's stack and counters */

static void
spare_name(unsigned id, char out[16])
{
    snprintf(out, 16, "%u", id);
}

/* Whether the directory described by `st` is what a mkdir in the pool's parent would make. */
static bool
spare_fits(const struct stat *st)
{
    return sp.fd >= 0 && !sp.off && S_ISDIR(st->st_mode) && st->st_dev == sp.dev && st->st_uid == sp.uid &&
           st->st_gid == sp.gid && (unsigned)(st->st_mode & 07777) == sp.mode;
}

/* Moves the emptied directory `name` of the open directory `fd` into the pool; false when it is full or
 * the rename fails (the caller then removes the directory). Trash thread only. */
static bool
spare_keep(int fd, const char *name)
{
    char     to[16];
    unsigned id;
    pthread_mutex_lock(&sp_mu);
    bool room = sp.n < SPARE_MAX && !sp.off;
    pthread_mutex_unlock(&sp_mu);
    if (!room)
        return false;
    id = sp.next++;
    spare_name(id, to);
    bool ok = renameat(fd, name, sp.fd, to) == 0;
    int  e  = errno;
    pthread_mutex_lock(&sp_mu);
    if (ok) {
        sp.ids[sp.n++] = id;
        sp.kept++;
    }
    else if (e != ENOENT && e != EEXIST)
        sp.off = true;
    pthread_mutex_unlock(&sp_mu);
    return ok;
}

int
zarr__trash_take_dir(const char *parent, size_t pn, const char *path, unsigned mode)
{
    char name[16];
    int  e = EAGAIN;
    pthread_mutex_lock(&sp_mu);
    if (sp.fd >= 0 && sp.n && !sp.off && sp.pn == pn && !memcmp(sp.parent, parent, pn) &&
        (mode == ZARR__SPARE_MKDIR || sp.mode == mode)) {
        unsigned id = sp.ids[--sp.n];
        spare_name(id, name);
        if (renameat2(sp.fd, name, AT_FDCWD, path, RENAME_NOREPLACE) == 0) {
            sp.taken++;
            pthread_mutex_unlock(&sp_mu);
            return 0;
        }
        e = errno;
        if (e == EXDEV || e == EINVAL || e == ENOSYS || e == EOPNOTSUPP)
            sp.off = true; /* no RENAME_NOREPLACE here, another file system: mkdir from now on */
        else if (e != ENOENT || faccessat(sp.fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
            sp.ids[sp.n++] = id; /* the name's fault (exists, no parent, no permission): the spare stays */
    }
    pthread_mutex_unlock(&sp_mu);
    errno = e;
    return -1;
}

void
zarr__trash_spares(uint64_t *kept, uint64_t *taken, unsigned *pooled)
{
    pthread_mutex_lock(&sp_mu);
    if (kept)
        *kept = sp.kept;
    if (taken)
        *taken = sp.taken;
    if (pooled)
        *pooled = sp.n;
    pthread_mutex_unlock(&sp_mu);
}

/* Makes the pool in `parent` (its first `pn` bytes) when there is none, or when the one there is empty
 * and in another directory (removed first). True when the trash of `parent` can be kept in it. Trash
 * thread only (or after it stopped). */
static bool
spare_pool_for(const char *parent, size_t pn)
{
    struct stat st;
    char        path[PATH_MAX];
    int         fd;
    if (sp.off || pn >= sizeof sp.parent)
        return false;
    if (sp.fd >= 0 && sp.pn == pn && !memcmp(sp.parent, parent, pn))
        return true;
    if (sp.fd >= 0) {
        pthread_mutex_lock(&sp_mu);
        bool empty = sp.n == 0;
        if (empty) {
            close(sp.fd);
            sp.fd = -1;
        }
        pthread_mutex_unlock(&sp_mu);
        if (!empty)
            return false;
        (void)rmdir(sp.path);
    }
    if (zarr__trash_make(parent, pn, 0777, path, sizeof path) != 0)
        return false;
    if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        (void)rmdir(path);
        return false;
    }
    pthread_mutex_lock(&sp_mu);
    memcpy(sp.parent, parent, pn);
    sp.pn = pn;
    strcpy(sp.path, path);
    sp.dev  = st.st_dev;
    sp.uid  = st.st_uid;
    sp.gid  = st.st_gid;
    sp.mode = (unsigned)(st.st_mode & 07777);
    sp.n    = 0;
    sp.fd   = fd;
    pthread_mutex_unlock(&sp_mu);
    return true;
}

/* Removes the pool and what is left in it (zarr_store_clear_wait, the thread stopped). */
static void
spare_pool_drop(void)
{
    int fd;
    pthread_mutex_lock(&sp_mu);
    fd    = sp.fd;
    sp.fd = -1;
    sp.n  = 0;
    pthread_mutex_unlock(&sp_mu);
    if (fd < 0)
        return;
    (void)zarr__trash_rm_contents(fd, sp.path); /* closes fd */
    (void)rmdir(sp.path);
}

/* ---- removing a tree ---- */

struct dirent64_raw {
    uint64_t       ino;
    int64_t        off;
    unsigned short reclen;
    unsigned char  type;
    char           name[];
};

static int rm_contents(int fd, const char *path, bool pool);

/* Removes one entry `name` of the open directory `fd` (a directory with everything in it; with `pool`,
 * a directory that fits is kept as a spare, emptied, instead of removed). */
static int
rm_entry(int fd, const char *name, unsigned char type, bool pool)
{
    bool is_dir;
    if (type == DT_UNKNOWN) {
        struct stat st;
        if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            return errno == ENOENT ? ZARR_OK : zarr__store_io_error("stat", name, errno);
        is_dir = S_ISDIR(st.st_mode);
    }
    else
        is_dir = type == DT_DIR;
    if (!is_dir) {
        if (unlinkat(fd, name, 0) == 0 || errno == ENOENT)
            return ZARR_OK;
        if (errno != EISDIR) /* a directory made under the name meanwhile: removed below */
            return zarr__store_io_error("delete", name, errno);
    }
    int         sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc;
    struct stat st;
    if (sub < 0)
        return errno == ENOENT ? ZARR_OK : zarr__store_io_error("open directory", name, errno);
    pool = pool && fstat(sub, &st) == 0 && spare_fits(&st);
    if ((rc = rm_contents(sub, name, pool)) != ZARR_OK)
        return rc;
    if (pool && spare_keep(fd, name))
        return ZARR_OK;
    if (unlinkat(fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        return zarr__store_io_error("remove directory", name, errno);
    return ZARR_OK;
}

int
zarr__trash_rm_contents(int fd, const char *path)
{
    return rm_contents(fd, path, false);
}

static int
rm_contents(int fd, const char *path, bool pool)
{
    char buf[8192] __attribute__((aligned(8)));
    int  rc = ZARR_OK;
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n < 0) {
            rc = zarr__store_io_error("list", path, errno);
            break;
        }
        if (n == 0)
            break;
        for (long at = 0; at < n && rc == ZARR_OK;) {
            const struct dirent64_raw *e = (const struct dirent64_raw *)(buf + at);
            at += e->reclen;
            if (e->name[0] == '.' && (!e->name[1] || (e->name[1] == '.' && !e->name[2])))
                continue;
            rc = rm_entry(fd, e->name, e->type, pool);
        }
        if (rc != ZARR_OK)
            break;
    }
    close(fd);
    return rc;
}

/* The whole tree at `path` (a trash directory), itself included; with `pool` (the trash thread, the pool
 * in the trash's parent) its directories that fit are kept as spares. */
static int
trash_remove(const char *path, bool pool)
{
    int         fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc;
    struct stat st;
    if (fd < 0)
        return errno == ENOENT ? ZARR_OK : zarr__store_io_error("open directory", path, errno);
    pool = pool && fstat(fd, &st) == 0 && spare_fits(&st);
    if ((rc = rm_contents(fd, path, pool)) != ZARR_OK)
        return rc;
    if (pool && spare_keep(AT_FDCWD, path))
        return ZARR_OK;
    if (rmdir(path) != 0 && errno != ENOENT)
        return zarr__store_io_error("remove directory", path, errno);
    return ZARR_OK;
}

/* ---- the queue and its thread ---- */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t  cv; /* any change: an item taken, the thread idle */
    char           *q[TRASH_QUEUE_MAX];
    size_t          n;
    bool            running;  /* the thread is in its loop (deleting, or idle waiting for trash) */
    bool            stop;     /* zarr_store_clear_wait: the thread leaves its loop once the queue is empty */
    unsigned        starts;   /* threads started (tests: an idle thread waits for more, it does not exit) */
    bool            joinable; /* a thread was started and is not joined yet */
    pthread_t       th;
    uint64_t        removed, failed;
    uint64_t        swept[SWEPT_MAX]; /* hashes of the parents swept, 0: free */
    unsigned        nswept;
    unsigned long   seq; /* the <n> of this process's trash names */
} tq = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static pthread_once_t tq_once = PTHREAD_ONCE_INIT;

static void
tq_prepare(void)
{
    pthread_mutex_lock(&tq.mu);
    pthread_mutex_lock(&sp_mu);
}

static void
tq_parent(void)
{
    pthread_mutex_unlock(&sp_mu);
    pthread_mutex_unlock(&tq.mu);
}

/* A forked child: the queued trash is the parent's (its thread deletes it); the child starts empty. */
static void
tq_child(void)
{
    pthread_cond_init(&tq.cv, NULL); /* no thread of the child waits on it */
    for (size_t i = 0; i < tq.n; i++)
        free(tq.q[i]);
    tq.n       = 0;
    tq.running = tq.joinable = tq.stop = false;
    tq.nswept                          = 0;
    memset(tq.swept, 0, sizeof tq.swept);
    if (sp.fd >= 0) /* the parent's pool, as its trash */
        close(sp.fd);
    sp.fd = -1;
    sp.n  = 0;
    /* unlocked, not made again: this thread took them in tq_prepare (a locked mutex must not be
     * initialised again, and a checker such as ThreadSanitizer would take it as held for ever) */
    pthread_mutex_unlock(&sp_mu);
    pthread_mutex_unlock(&tq.mu);
}

static void
tq_init(void)
{
    (void)pthread_atfork(tq_prepare, tq_parent, tq_child);
}

/* Removes the trash at `path` and counts the outcome (under tq.mu, not held by the caller). A failure
 * stays on disk, claimed by no one: a later process sweeps it. */
static void
trash_remove_counted(const char *path, bool pool)
{
    int rc = trash_remove(path, pool);
    pthread_mutex_lock(&tq.mu);
    if (rc == ZARR_OK)
        tq.removed++;
    else
        tq.failed++;
    pthread_mutex_unlock(&tq.mu);
}

static void *
trash_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&tq.mu);
    for (;;) {
        if (!tq.n) {
            if (tq.stop)
                break;
            pthread_cond_wait(&tq.cv, &tq.mu); /* idle: a later clear's trash, or the stop */
            continue;
        }
        char *p = tq.q[0];
        memmove(tq.q, tq.q + 1, --tq.n * sizeof *tq.q);
        pthread_cond_broadcast(&tq.cv);
        pthread_mutex_unlock(&tq.mu);
        const char *slash = strrchr(p, '/'); /* trash paths are "<parent>/<trash name>" (trash_path) */
        trash_remove_counted(p, slash && spare_pool_for(p, (size_t)(slash - p)));
        free(p);
        pthread_mutex_lock(&tq.mu);
    }
    tq.running = false;
    pthread_cond_broadcast(&tq.cv);
    pthread_mutex_unlock(&tq.mu);
    return NULL;
}

/* Starts the thread (under tq.mu); false when it can't. Signals are blocked in it. */
static bool
tq_start(void)
{
    sigset_t all, old;
    int      e;
    if (tq.joinable) { /* an earlier thread left its loop (running is false): it only returns now */
        pthread_join(tq.th, NULL);
        tq.joinable = false;
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    e = pthread_create(&tq.th, NULL, trash_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0)
        return false;
    tq.running = tq.joinable = true;
    tq.starts++;
    return true;
}

void
zarr__trash_put(const char *path)
{
    char *p      = strdup(path);
    bool  queued = false;
    pthread_once(&tq_once, tq_init);
    pthread_mutex_lock(&tq.mu);
    while (p && tq.n == TRASH_QUEUE_MAX && tq.running)
        pthread_cond_wait(&tq.cv, &tq.mu);
    if (p && tq.n < TRASH_QUEUE_MAX && (tq.running || tq_start())) {
        tq.q[tq.n++] = p;
        queued       = true;
        pthread_cond_broadcast(&tq.cv); /* the thread, idle */
    }
    pthread_mutex_unlock(&tq.mu);
    if (queued)
        return;
    /* no thread (or out of memory): deleted on the caller, as del_prefix would */
    trash_remove_counted(path, false);
    free(p);
}

void
zarr_store_clear_wait(void)
{
    pthread_t th;
    bool      join = false;
    pthread_once(&tq_once, tq_init);
    pthread_mutex_lock(&tq.mu);
    tq.stop = true;
    pthread_cond_broadcast(&tq.cv);
    while (tq.running)
        pthread_cond_wait(&tq.cv, &tq.mu);
    tq.stop = false;
    if (tq.joinable) {
        th          = tq.th;
        tq.joinable = false;
        join        = true;
    }
    pthread_mutex_unlock(&tq.mu);
    if (join)
        pthread_join(th, NULL);
    spare_pool_drop();
}

/* No thread outlives the library: at dlclose of a module holding the core (the connector) and at exit. */
__attribute__((destructor)) static void
trash_fini(void)
{
    if (tq.joinable)
        zarr_store_clear_wait();
}

unsigned
zarr__trash_starts(void)
{
    unsigned n;
    pthread_mutex_lock(&tq.mu);
    n = tq.starts;
    pthread_mutex_unlock(&tq.mu);
    return n;
}

void
zarr__trash_counts(uint64_t *removed, uint64_t *failed)
{
    pthread_mutex_lock(&tq.mu);
    if (removed)
        *removed = tq.removed;
    if (failed)
        *failed = tq.failed;
    pthread_mutex_unlock(&tq.mu);
}

/* ---- making trash names, and claiming dead processes' trash ---- */

/* parent + "/" + ".h5zarr-trash.<pid>.<n>" into out; false when it does not fit. */
static bool
trash_path(const char *parent, size_t pn, unsigned long n, char *out, size_t size)
{
    int k = snprintf(out, size, "%.*s/" ZARR__TRASH_PREFIX "%ld.%lu", (int)pn, parent, (long)getpid(), n);
    return k > 0 && (size_t)k < size;
}

int
zarr__trash_make(const char *parent, size_t pn, unsigned mode, char *out, size_t size)
{
    for (int tries = 0; tries < 8; tries++) {
        unsigned long n = __atomic_add_fetch(&tq.seq, 1, __ATOMIC_RELAXED);
        if (!trash_path(parent, pn, n, out, size))
            return ENAMETOOLONG;
        if (zarr__trash_take_dir(parent, pn, out, mode) == 0 || mkdir(out, mode) == 0)
            return 0;
        if (errno != EEXIST) /* EEXIST: a dead process of the same pid left it; the next number */
            return errno;
    }
    return EEXIST;
}

static uint64_t
path_hash(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* True for a trash name whose pid is not this process and runs no more here. */
static bool
trash_dead(const char *name)
{
    long pid = strtol(name + ZARR__TRASH_PREFIX_LEN, NULL, 10);
    if (pid <= 0 || pid == (long)getpid())
        return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

void
zarr__trash_sweep(const char *parent, size_t pn)
{
    char     buf[8192] __attribute__((aligned(8))), dir[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
    uint64_t h = path_hash(parent, pn);
    int      fd;
    bool     seen = false;

    pthread_once(&tq_once, tq_init);
    pthread_mutex_lock(&tq.mu);
    for (unsigned i = 0; i < SWEPT_MAX && !seen; i++)
        seen = tq.swept[i] == h;
    if (!seen)
        tq.swept[tq.nswept++ % SWEPT_MAX] = h;
    pthread_mutex_unlock(&tq.mu);
    if (seen || pn + 1 > sizeof dir)
        return;
    memcpy(dir, parent, pn);
    dir[pn] = '\0';
    if ((fd = open(pn ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return;
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (long at = 0; at < n;) {
            const struct dirent64_raw *e = (const struct dirent64_raw *)(buf + at);
            at += e->reclen;
            if (!zarr_store_trash_name(e->name) || !trash_dead(e->name))
                continue;
            /* claimed by renaming it to a name of ours: a concurrent sweep elsewhere gets ENOENT */
            unsigned long k = __atomic_add_fetch(&tq.seq, 1, __ATOMIC_RELAXED);
            if ((size_t)snprintf(from, sizeof from, "%s/%s", dir, e->name) >= sizeof from ||
                !trash_path(dir, pn, k, to, sizeof to) || rename(from, to) != 0)
                continue;
            zarr__trash_put(to);
        }
    }
    close(fd);
}
