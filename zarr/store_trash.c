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

#define TRASH_QUEUE_MAX 64 /* trash directories waiting: a clear past it waits for the thread */
#define SWEPT_MAX       32 /* parent directories already swept for dead processes' trash (hashes) */

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

/* ---- removing a tree ---- */

struct dirent64_raw {
    uint64_t       ino;
    int64_t        off;
    unsigned short reclen;
    unsigned char  type;
    char           name[];
};

/* Removes one entry `name` of the open directory `fd` (a directory with everything in it). */
static int
rm_entry(int fd, const char *name, unsigned char type)
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
    int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc;
    if (sub < 0)
        return errno == ENOENT ? ZARR_OK : zarr__store_io_error("open directory", name, errno);
    if ((rc = zarr__trash_rm_contents(sub, name)) != ZARR_OK)
        return rc;
    if (unlinkat(fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        return zarr__store_io_error("remove directory", name, errno);
    return ZARR_OK;
}

int
zarr__trash_rm_contents(int fd, const char *path)
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
            rc = rm_entry(fd, e->name, e->type);
        }
        if (rc != ZARR_OK)
            break;
    }
    close(fd);
    return rc;
}

/* The whole tree at `path` (a trash directory), itself included. */
static int
trash_remove(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc;
    if (fd < 0)
        return errno == ENOENT ? ZARR_OK : zarr__store_io_error("open directory", path, errno);
    if ((rc = zarr__trash_rm_contents(fd, path)) != ZARR_OK)
        return rc;
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
}

static void
tq_parent(void)
{
    pthread_mutex_unlock(&tq.mu);
}

/* A forked child: the queued trash is the parent's (its thread deletes it); the child starts empty. */
static void
tq_child(void)
{
    pthread_mutex_init(&tq.mu, NULL);
    pthread_cond_init(&tq.cv, NULL);
    for (size_t i = 0; i < tq.n; i++)
        free(tq.q[i]);
    tq.n       = 0;
    tq.running = tq.joinable = tq.stop = false;
    tq.nswept                          = 0;
    memset(tq.swept, 0, sizeof tq.swept);
}

static void
tq_init(void)
{
    (void)pthread_atfork(tq_prepare, tq_parent, tq_child);
}

/* Removes the trash at `path` and counts the outcome (under tq.mu, not held by the caller). A failure
 * stays on disk, claimed by no one: a later process sweeps it. */
static void
trash_remove_counted(const char *path)
{
    int rc = trash_remove(path);
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
        trash_remove_counted(p);
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
    trash_remove_counted(path);
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
        if (mkdir(out, mode) == 0)
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
