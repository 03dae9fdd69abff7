/*
 * test_store_clear.c: zarr_store_clear, the truncation of a store for a create that truncates
 * (docs/FORMAT.md "Trash"). The directory store swaps its root with an empty directory and deletes the
 * old content, under a trash name beside the root, on a background thread: after the clear the store is
 * empty and writable, and after zarr_store_clear_wait no trash is left. Trash of a dead process is
 * claimed and deleted, a live process's is left alone, listings never show trash names; a fault
 * injected at the exchange fails with a clear message and keeps every key; where the exchange can't be
 * made (unsupported, a parent that is a zarr node, a root that is a symbolic link) the store is emptied
 * by del_prefix as before; a durable clear records the parent for the sync pass. The emptied folders of
 * the trash are kept as spares and renamed into place by the next mkdirs of a store that is not durable
 * (same modes and owner as a mkdir's, every value readable), and the pool goes at zarr_store_clear_wait.
 */
#define _GNU_SOURCE
#include "runner.h"

#include "store_impl.h"
#include "h5zarr/zarr.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int
count_cb(const char *name, bool is_dir, void *ud)
{
    (void)name;
    (void)is_dir;
    (*(int *)ud)++;
    return 0;
}

/* Children of the store's root. */
static int
root_children(zarr_store *s)
{
    int n = 0;
    if (zarr_store_list(s, "", count_cb, &n) != ZARR_OK)
        return -1;
    return n;
}

/* `narrays` arrays' worth of keys: a document and a few v3 chunk keys each. */
static int
fill(zarr_store *s, int narrays)
{
    char key[256], val[64];
    for (int i = 0; i < narrays; i++) {
        int n = snprintf(val, sizeof val, "{\"array\": %d}", i);
        snprintf(key, sizeof key, "v%d/zarr.json", i);
        if (zarr_store_set(s, key, val, (size_t)n) != ZARR_OK)
            return -1;
        for (int c = 0; c < 3; c++) {
            snprintf(key, sizeof key, "v%d/c/%d/0", i, c);
            if (zarr_store_set(s, key, val, (size_t)n) != ZARR_OK)
                return -1;
        }
    }
    return zarr_store_set(s, "zarr.json", "{}", 2);
}

static uint64_t
removed_count(void)
{
    uint64_t r = 0;
    zarr__trash_counts(&r, NULL);
    return r;
}

static int
test_trash_names(void)
{
    ASSERT(zarr_store_trash_name(".h5zarr-trash.123.0"));
    ASSERT(zarr_store_trash_name(".h5zarr-trash.1.99999"));
    ASSERT(!zarr_store_trash_name(".h5zarr-trash.123"));
    ASSERT(!zarr_store_trash_name(".h5zarr-trash..1"));
    ASSERT(!zarr_store_trash_name(".h5zarr-trash.1.2.zarr"));
    ASSERT(!zarr_store_trash_name(".h5zarr-tmp.1.2"));
    ASSERT(!zarr_store_trash_name("x.nc.zarr"));
    ASSERT(!zarr_store_trash_name(NULL));
    return 0;
}

/* A store of many arrays cleared: empty at once (through this handle and another one on the same path),
 * writable, and no trash left once the thread is waited for. */
static int
test_clear_many_arrays(void)
{
    const char *dir = test_tmpdir("clear-many");
    char        root[4096];
    zarr_store *s = NULL, *other = NULL;
    zarr_buf    b = ZARR_BUF_INIT;
    uint64_t    r0;

    ASSERT(dir);
    snprintf(root, sizeof root, "%s/a.zarr", dir);
    ASSERT_OK(zarr_store_open(root, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
    ASSERT_OK(zarr_store_open(root, ZARR_STORE_RDWR, &other));
    ASSERT(fill(s, 136) == 0);
    ASSERT_EQ_INT(root_children(s), 137);
    zarr_store_clear_wait();
    r0 = removed_count();
    ASSERT_OK(zarr_store_clear(s));
    ASSERT_EQ_INT(root_children(s), 0);
    ASSERT_EQ_INT(root_children(other), 0);
    ASSERT_ERR(zarr_store_get(other, "v7/zarr.json", &b), ZARR_ENOTFOUND);
    ASSERT_ERR(zarr_store_get(s, "zarr.json", &b), ZARR_ENOTFOUND);
    ASSERT_EQ_INT(test_dir_count(root, NULL), 0);
    /* writable at once, through both handles */
    ASSERT_OK(zarr_store_set(s, "zarr.json", "{\"new\": 1}", 10));
    ASSERT_OK(zarr_store_get(other, "zarr.json", &b));
    ASSERT(b.size == 10 && !memcmp(b.data, "{\"new\": 1}", 10));
    zarr_store_clear_wait();
    ASSERT_EQ_INT(removed_count(), r0 + 1);
    ASSERT_EQ_INT(test_dir_count(dir, ".h5zarr-trash."), 0);
    ASSERT_EQ_INT(test_dir_count(dir, NULL), 1); /* a.zarr alone */
    ASSERT_EQ_INT(root_children(s), 1);
    /* a store just made (empty): nothing moved, no trash made */
    ASSERT_OK(zarr_store_clear(s)); /* holds zarr.json: moved */
    ASSERT_OK(zarr_store_clear(s)); /* empty now: nothing to move */
    zarr_store_clear_wait();
    ASSERT_EQ_INT(removed_count(), r0 + 2);
    ASSERT_EQ_INT(test_dir_count(dir, ".h5zarr-trash."), 0);
    zarr_buf_free(&b);
    zarr_store_close(other);
    zarr_store_close(s);
    return 0;
}

/* Trash left by a dead process ("crashed" after its exchange) is claimed and deleted by the next clear
 * in its directory; a live process's trash is left to it; neither is ever listed as a key. */
static int
test_leftover_trash(void)
{
    const char *dir = test_tmpdir("clear-leftover");
    char        root[4096], dead[4200], live[4200], path[4400];
    zarr_store *s = NULL, *parent = NULL;
    pid_t       pid;
    int         st, n = 0;

    ASSERT(dir);
    if ((pid = fork()) == 0)
        _exit(0);
    ASSERT(pid > 0 && waitpid(pid, &st, 0) == pid);
    snprintf(dead, sizeof dead, "%s/.h5zarr-trash.%ld.7", dir, (long)pid);
    snprintf(live, sizeof live, "%s/.h5zarr-trash.%ld.3", dir, (long)getppid());
    ASSERT(mkdir(dead, 0777) == 0 && mkdir(live, 0777) == 0);
    /* the dead one: an old store's content, as an exchange leaves it */
    {
        zarr_store *t;
        ASSERT_OK(zarr_store_open(dead, ZARR_STORE_RDWR, &t));
        ASSERT(fill(t, 5) == 0);
        zarr_store_close(t);
    }
    snprintf(root, sizeof root, "%s/b.zarr", dir);
    ASSERT_OK(zarr_store_open(root, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
    ASSERT(fill(s, 3) == 0);
    /* a store rooted at the parent does not list trash */
    ASSERT_OK(zarr_store_open(dir, ZARR_STORE_RDONLY, &parent));
    ASSERT_OK(zarr_store_list(parent, "", count_cb, &n));
    ASSERT_EQ_INT(n, 1); /* b.zarr */
    ASSERT_EQ_INT(test_dir_count(dir, ".h5zarr-trash."), 2);
    ASSERT_OK(zarr_store_clear(s));
    zarr_store_clear_wait();
    ASSERT(access(dead, F_OK) != 0 && errno == ENOENT);
    ASSERT(access(live, F_OK) == 0); /* its owner may be deleting it */
    ASSERT_EQ_INT(test_dir_count(dir, ".h5zarr-trash."), 1);
    ASSERT_EQ_INT(root_children(s), 0);
    ASSERT(rmdir(live) == 0);
    snprintf(path, sizeof path, "%s/v0", root);
    ASSERT(access(path, F_OK) != 0);
    zarr_store_close(parent);
    zarr_store_close(s);
    return 0;
}

/* A create of a new store (empty: nothing to move) still claims a dead process's trash beside it. */
static int
test_leftover_trash_new_store(void)
{
    const char *dir = test_tmpdir("clear-leftover-new");
    char        root[4096], dead[4200];
    zarr_store *s = NULL, *t = NULL;
    pid_t       pid;
    int         st;
    uint64_t    r0;

    ASSERT(dir);
    if ((pid = fork()) == 0)
        _exit(0);
    ASSERT(pid > 0 && waitpid(pid, &st, 0) == pid);
    snprintf(dead, sizeof dead, "%s/.h5zarr-trash.%ld.1", dir, (long)pid);
    ASSERT_OK(zarr_store_open(dead, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &t));
    ASSERT(fill(t, 2) == 0);
    zarr_store_close(t);
    zarr_store_clear_wait();
    r0 = removed_count();
    snprintf(root, sizeof root, "%s/new.zarr", dir);
    ASSERT_OK(zarr_store_open(root, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
    ASSERT_OK(zarr_store_clear(s));
    zarr_store_clear_wait();
    ASSERT_EQ_INT(removed_count(), r0 + 1);
    ASSERT_EQ_INT(test_dir_count(dir, ".h5zarr-trash."), 0);
    ASSERT_EQ_INT(test_dir_count(dir, NULL), 1); /* new.zarr */
    zarr_store_close(s);
    return 0;
}

/* A fault injected at the exchange: a clear error naming the store, every key still there, no trash. */
static int
test_injected_fault(void)
{
    const char *dir = test_tmpdir("clear-fault");
    char        root[4096];
    zarr_store *s = NULL;
    zarr_buf    b = ZARR_BUF_INIT;

    ASSERT(dir);
    snprintf(root, sizeof root, "%s/c.zarr", dir);
    ASSERT_OK(zarr_store_open(root, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
    ASSERT(fill(s, 10) == 0);
    zarr__store_dir_force(s, ZARR__DIR_FAIL_EXCHANGE);
    ASSERT_ERR(zarr_store_clear(s), ZARR_EIO);
    ASSERT(strstr(zarr_errmsg(), "can't clear store") && strstr(zarr_errmsg(), root) &&
           strstr(zarr_errmsg(), "injected"));
    ASSERT_EQ_INT(root_children(s), 11);
    ASSERT_OK(zarr_store_get(s, "v9/c/2/0", &b));
    ASSERT(b.size == 12 && !memcmp(b.data, "{\"array\": 9}", 12));
    ASSERT_EQ_INT(test_dir_count(dir, ".h5zarr-trash."), 0);
    ASSERT_EQ_INT(test_dir_count(dir, NULL), 1);
    /* an exchange the file system refuses: deleted key by key, no trash */
    zarr_store_clear_wait();
    uint64_t r0 = removed_count();
    zarr__store_dir_force(s, ZARR__DIR_NO_EXCHANGE);
    ASSERT_OK(zarr_store_clear(s));
    ASSERT_EQ_INT(root_children(s), 0);
    ASSERT_EQ_INT(test_dir_count(dir, ".h5zarr-trash."), 0);
    zarr_store_clear_wait();
    ASSERT_EQ_INT(removed_count(), r0);
    zarr_buf_free(&b);
    zarr_store_close(s);
    return 0;
}

/* Where trash would show or the swap would change what the name is: deleted key by key. */
static int
test_no_trash_places(void)
{
    const char *dir = test_tmpdir("clear-places");
    char        root[4096], group[4096], target[4096], link[4096];
    zarr_store *s = NULL;
    uint64_t    r0;
    struct stat st;

    ASSERT(dir);
    zarr_store_clear_wait();
    r0 = removed_count();
    /* inside a zarr hierarchy: the parent is a node */
    snprintf(group, sizeof group, "%s/h.zarr", dir);
    snprintf(root, sizeof root, "%s/h.zarr/sub", dir);
    ASSERT_OK(zarr_store_open(group, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
    ASSERT_OK(zarr_store_set(s, "zarr.json", "{}", 2));
    zarr_store_close(s);
    ASSERT_OK(zarr_store_open(root, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
    ASSERT(fill(s, 4) == 0);
    ASSERT_OK(zarr_store_clear(s));
    ASSERT_EQ_INT(root_children(s), 0);
    ASSERT_EQ_INT(test_dir_count(group, ".h5zarr-trash."), 0);
    zarr_store_close(s);
    /* a root that is a symbolic link: not swapped (the link would become a directory); del_prefix as
     * before (which removes the link itself: the store's name then holds nothing) */
    snprintf(target, sizeof target, "%s/target.zarr", dir);
    snprintf(link, sizeof link, "%s/link.zarr", dir);
    ASSERT(mkdir(target, 0777) == 0 && symlink(target, link) == 0);
    ASSERT_OK(zarr_store_open(link, ZARR_STORE_RDWR, &s));
    ASSERT(fill(s, 4) == 0);
    ASSERT_OK(zarr_store_clear(s));
    ASSERT_EQ_INT(root_children(s), 0);
    ASSERT(lstat(target, &st) == 0 && S_ISDIR(st.st_mode));
    ASSERT_EQ_INT(test_dir_count(dir, ".h5zarr-trash."), 0);
    zarr_store_close(s);
    zarr_store_clear_wait();
    ASSERT_EQ_INT(removed_count(), r0);
    return 0;
}

/* Durable: the parent's changed entries are synced by the next sync pass (one directory). */
static int
test_durable_clear(void)
{
    const char *dir = test_tmpdir("clear-durable");
    char        root[4096];
    zarr_store *s = NULL;
    uint64_t    d0, d1;

    ASSERT(dir);
    snprintf(root, sizeof root, "%s/d.zarr", dir);
    ASSERT_OK(zarr_store_open(root, ZARR_STORE_CREATE | ZARR_STORE_RDWR | ZARR_STORE_DURABLE, &s));
    ASSERT(fill(s, 3) == 0);
    ASSERT_OK(zarr_store_sync(s));
    zarr__store_dir_sync_counts(s, NULL, &d0);
    ASSERT_OK(zarr_store_clear(s));
    ASSERT_OK(zarr_store_sync(s));
    zarr__store_dir_sync_counts(s, NULL, &d1);
    ASSERT_EQ_INT(d1 - d0, 1); /* the parent, holding the root's and the trash's entries */
    ASSERT_EQ_INT(root_children(s), 0);
    zarr_store_clear_wait();
    ASSERT_EQ_INT(test_dir_count(dir, ".h5zarr-trash."), 0);
    zarr_store_close(s);
    return 0;
}

/* Clears one after another, each deleted before the next (the thread idle between them): one thread
 * serves them all (it waits for more trash rather than exiting and starting again per clear, which cost
 * nc_test 45 thread starts), and zarr_store_clear_wait still drains, joins, and lets a later clear start
 * a new one. */
static int
test_clears_one_thread(void)
{
    const char *dir = test_tmpdir("clear-one-thread");
    char        root[4096];
    zarr_store *s = NULL;
    uint64_t    r0;
    unsigned    t0;

    ASSERT(dir);
    snprintf(root, sizeof root, "%s/a.zarr", dir);
    ASSERT_OK(zarr_store_open(root, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
    zarr_store_clear_wait();
    r0 = removed_count();
    t0 = zarr__trash_starts();
    for (int i = 1; i <= 6; i++) {
        ASSERT(fill(s, 4) == 0);
        ASSERT_OK(zarr_store_clear(s));
        for (int w = 0; w < 20000 && removed_count() < r0 + (uint64_t)i; w++)
            usleep(500); /* the thread deletes it; then it is idle */
        ASSERT_EQ_INT(removed_count(), r0 + (uint64_t)i);
        ASSERT_EQ_INT(test_dir_count(dir, ".h5zarr-trash."), 1); /* the spare directories' pool alone */
        ASSERT_EQ_INT(root_children(s), 0);
    }
    ASSERT_EQ_INT(zarr__trash_starts(), t0 + 1);
    zarr_store_clear_wait(); /* joins the idle thread */
    ASSERT(fill(s, 2) == 0);
    ASSERT_OK(zarr_store_clear(s));
    zarr_store_clear_wait();
    ASSERT_EQ_INT(zarr__trash_starts(), t0 + 2);
    ASSERT_EQ_INT(removed_count(), r0 + 7);
    ASSERT_EQ_INT(test_dir_count(dir, ".h5zarr-trash."), 0);
    ASSERT_EQ_INT(test_dir_count(dir, NULL), 1);
    zarr_store_close(s);
    return 0;
}

/* Mode bits of `path`, -1 when it can't be statted. */
static int
mode_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

/* The folders of a cleared store come back as spares: the store made again after a clear renames them
 * into place instead of making new ones (kept and taken counted; the folders hold exactly the new values
 * and nothing of the old ones, with a mkdir's mode); a durable store takes none; zarr_store_clear_wait
 * removes the pool and what is left in it. */
static int
test_spares_reused(void)
{
    const char *dir = test_tmpdir("clear-spares");
    char        root[4096], path[4200], key[64], want[64];
    zarr_store *s = NULL, *dur = NULL;
    zarr_buf    b = ZARR_BUF_INIT;
    uint64_t    k0, t0, k1, t1, r0;
    unsigned    pooled;
    int         mk;

    ASSERT(dir);
    snprintf(root, sizeof root, "%s/a.zarr", dir);
    snprintf(path, sizeof path, "%s/probe", dir);
    ASSERT(mkdir(path, 0777) == 0);
    mk = mode_of(path); /* what a mkdir makes here */
    ASSERT(rmdir(path) == 0);
    ASSERT_OK(zarr_store_open(root, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
    zarr_store_clear_wait();
    r0 = removed_count();
    zarr__trash_spares(&k0, &t0, &pooled);
    ASSERT_EQ_INT(pooled, 0);
    ASSERT(fill(s, 10) == 0); /* 10 arrays: v<i>, v<i>/c, v<i>/c/0..2: 50 folders */
    ASSERT_OK(zarr_store_clear(s));
    for (int w = 0; w < 20000 && removed_count() < r0 + 1; w++)
        usleep(500);
    ASSERT_EQ_INT(removed_count(), r0 + 1);
    zarr__trash_spares(&k1, &t1, &pooled);
    ASSERT_EQ_INT(k1 - k0, 51); /* the 50 folders and the old root */
    ASSERT_EQ_INT(pooled, 51);
    ASSERT_EQ_INT(t1, t0);
    /* the store made again: its folders are spares renamed into place */
    for (int i = 0; i < 10; i++) {
        int n = snprintf(want, sizeof want, "new %d", i);
        snprintf(key, sizeof key, "v%d/c/1/0", i);
        ASSERT_OK(zarr_store_set(s, key, want, (size_t)n));
    }
    zarr__trash_spares(NULL, &t1, &pooled);
    ASSERT_EQ_INT(t1 - t0, 30); /* v<i>, v<i>/c, v<i>/c/1 */
    ASSERT_EQ_INT(pooled, 21);
    for (int i = 0; i < 10; i++) {
        int n = snprintf(want, sizeof want, "new %d", i);
        snprintf(key, sizeof key, "v%d/c/1/0", i);
        ASSERT_OK(zarr_store_get(s, key, &b));
        ASSERT(b.size == (size_t)n && !memcmp(b.data, want, (size_t)n));
        snprintf(key, sizeof key, "v%d/zarr.json", i);
        ASSERT_ERR(zarr_store_get(s, key, &b), ZARR_ENOTFOUND);
        snprintf(key, sizeof key, "v%d/c/0/0", i);
        ASSERT_ERR(zarr_store_get(s, key, &b), ZARR_ENOTFOUND);
        snprintf(path, sizeof path, "%s/v%d/c/1", root, i);
        ASSERT_EQ_INT(test_dir_count(path, NULL), 1); /* the new value alone */
        ASSERT_EQ_INT(mode_of(path), mk);
        snprintf(path, sizeof path, "%s/v%d", root, i);
        ASSERT_EQ_INT(test_dir_count(path, NULL), 1); /* c alone */
    }
    ASSERT_EQ_INT(root_children(s), 10);
    /* a durable store in the same folder makes its own */
    snprintf(path, sizeof path, "%s/d.zarr", dir);
    ASSERT_OK(zarr_store_open(path, ZARR_STORE_CREATE | ZARR_STORE_RDWR | ZARR_STORE_DURABLE, &dur));
    ASSERT_OK(zarr_store_set(dur, "x/c/0", "1", 1));
    zarr__trash_spares(NULL, &t1, &pooled);
    ASSERT_EQ_INT(t1 - t0, 30);
    ASSERT_EQ_INT(pooled, 21);
    zarr_store_close(dur);
    zarr_store_clear_wait(); /* the pool and its 21 spares removed */
    zarr__trash_spares(NULL, NULL, &pooled);
    ASSERT_EQ_INT(pooled, 0);
    ASSERT_EQ_INT(test_dir_count(dir, ".h5zarr-trash."), 0);
    ASSERT_EQ_INT(test_dir_count(dir, NULL), 2); /* a.zarr, d.zarr */
    zarr_buf_free(&b);
    zarr_store_close(s);
    return 0;
}

/* Stores without a clear of their own (memory): del_prefix "", as before. */
static int
test_memory_clear(void)
{
    zarr_store *s = NULL;
    ASSERT_OK(zarr_store_open("memory://clear-test", ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
    ASSERT(fill(s, 3) == 0);
    ASSERT_OK(zarr_store_clear(s));
    ASSERT_EQ_INT(root_children(s), 0);
    zarr_store_close(s);
    ASSERT_OK(zarr_store_open("memory://clear-test-ro", ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
    s->readonly = true;
    ASSERT_ERR(zarr_store_clear(s), ZARR_EREADONLY);
    zarr_store_close(s);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(trash_names),       TEST_ENTRY(clear_many_arrays),
    TEST_ENTRY(leftover_trash),    TEST_ENTRY(leftover_trash_new_store),
    TEST_ENTRY(injected_fault),    TEST_ENTRY(no_trash_places),
    TEST_ENTRY(durable_clear),     TEST_ENTRY(memory_clear),
    TEST_ENTRY(clears_one_thread), TEST_ENTRY(spares_reused),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
