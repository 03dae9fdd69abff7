/*
 * test_durable.c: durable stores (zarr.h "Durability"), through the counting store and the directory
 * store's own sync counters: a write job of N chunks is N file syncs and ONE sync pass that fsyncs each
 * changed directory once (not one per chunk); metadata writes, resizes, deletes and renames sync before
 * they return; a store that is not durable syncs nothing; a durable array's partial writes are
 * written through the chunk cache; a failed sync pass fails the call that needed it, with its message.
 */
#include "runner.h"

#include "store_impl.h"
#include "h5zarr/zarr.h"
#include "h5zarr/zarr_store_count.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Syncs the directory store made so far (files fdatasync'ed, directories fsync'ed). */
typedef struct syncs {
    uint64_t files, dirs;
} syncs;

static syncs
dir_syncs(zarr_store *dir)
{
    syncs s;
    zarr__store_dir_sync_counts(dir, &s.files, &s.dirs);
    return s;
}

/* A counting store around a new directory store at `path` (durable or not); *dir is the inner store
 * (borrowed: owned by the counting store). */
static int
open_counted(const char *path, bool durable, zarr_store_count **c, zarr_store **dir)
{
    zarr_store *d;
    int         rc =
        zarr_store_open(path, ZARR_STORE_CREATE | ZARR_STORE_RDWR | (durable ? ZARR_STORE_DURABLE : 0), &d);
    if (rc != ZARR_OK)
        return rc;
    *dir = d;
    return zarr_store_count_new(d, false, c);
}

/* An int32 array at `path` of `ndim` dims, shape chunks[d] * grid[d], chunk shape `chunks`. */
static int
make_array(zarr_store *s, const char *path, int ndim, const uint64_t *grid, const uint64_t *chunks,
           zarr_array **a)
{
    uint64_t         shape[2];
    zarr_array_meta *m;
    int              rc;
    for (int d = 0; d < ndim; d++)
        shape[d] = grid[d] * chunks[d];
    if ((rc = zarr_array_meta_new(3, ndim, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m)) != ZARR_OK)
        return rc;
    return zarr_array_create(s, path, m, false, a);
}

static bool
is_file(const char *dir, const char *key)
{
    char        p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, key);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* A 4 x 8 grid of 4 x 4 chunks, "a/c/<i>/<j>": one whole-array write is 32 chunk files in the
 * directories a/c/0 .. a/c/3 (4), whose entries a/c gains (1), which a gains (1): 6 directories. */
static int
test_job_one_pass(void)
{
    const char       *root = test_tmpdir("durable-job");
    char              path[4200];
    zarr_store_count *c;
    zarr_store       *dir, *s;
    zarr_array       *a;
    zarr_store_counts n;
    zarr_region       r;
    uint64_t          grid[2] = {4, 8}, chunks[2] = {4, 4};
    int32_t           buf[16 * 32], back[16 * 32];
    syncs             s0, s1;

    snprintf(path, sizeof path, "%s/store.zarr", root);
    ASSERT_OK(open_counted(path, true, &c, &dir));
    s = zarr_store_count_store(c);
    ASSERT(s->durable && dir->durable);

    ASSERT_OK(make_array(s, "a", 2, grid, chunks, &a));
    zarr_store_count_read(c, &n);
    ASSERT_EQ_INT(n.sync, 1); /* the create: its zarr.json, synced before it returned */
    s0 = dir_syncs(dir);
    ASSERT_EQ_INT(s0.files, 1);
    /* "a" (zarr.json), the root ("a" is new), the root's parent (the store's root folder is new) */
    ASSERT_EQ_INT(s0.dirs, 3);

    for (int i = 0; i < 16 * 32; i++)
        buf[i] = i + 1; /* no chunk equals the fill value: all 32 are stored */
    zarr_region_all(zarr_array_meta_get(a), &r);
    zarr_store_count_reset(c);
    ASSERT_OK(zarr_array_write(a, &r, buf));
    zarr_store_count_read(c, &n);
    ASSERT_EQ_INT(n.set, 32);
    ASSERT_EQ_INT(n.sync, 1); /* one pass for the whole job */
    s1 = dir_syncs(dir);
    ASSERT_EQ_INT(s1.files - s0.files, 32);
    ASSERT_EQ_INT(s1.dirs - s0.dirs, 6);
    ASSERT(is_file(path, "a/zarr.json") && is_file(path, "a/c/3/7"));

    /* replacing every chunk: the same files, no new directory, so only the 4 holding them */
    for (int i = 0; i < 16 * 32; i++)
        buf[i] = -i - 1;
    zarr_store_count_reset(c);
    ASSERT_OK(zarr_array_write(a, &r, buf));
    zarr_store_count_read(c, &n);
    ASSERT_EQ_INT(n.set, 32);
    ASSERT_EQ_INT(n.sync, 1);
    s0 = dir_syncs(dir);
    ASSERT_EQ_INT(s0.files - s1.files, 32);
    ASSERT_EQ_INT(s0.dirs - s1.dirs, 4);

    /* nothing left to sync: flush and close make passes that sync nothing */
    ASSERT_OK(zarr_array_flush(a));
    zarr_array_close(a);
    s1 = dir_syncs(dir);
    ASSERT_EQ_INT(s1.files, s0.files);
    ASSERT_EQ_INT(s1.dirs, s0.dirs);

    ASSERT_OK(zarr_array_open(s, "a", &a));
    memset(back, 0, sizeof back);
    ASSERT_OK(zarr_array_read(a, &r, back));
    ASSERT(memcmp(back, buf, sizeof buf) == 0);
    zarr_array_close(a);
    zarr_store_close(s);
    return 0;
}

/* 300 chunks in one directory: 300 file syncs, 2 directory syncs (a/c and a), one pass. */
static int
test_many_chunks_dedup(void)
{
    const char       *root = test_tmpdir("durable-many");
    char              path[4200];
    zarr_store_count *c;
    zarr_store       *dir, *s;
    zarr_array       *a;
    zarr_store_counts n;
    zarr_region       r;
    uint64_t          grid[1] = {300}, chunks[1] = {16};
    static int32_t    buf[300 * 16];
    syncs             s0, s1;

    snprintf(path, sizeof path, "%s/store.zarr", root);
    ASSERT_OK(open_counted(path, true, &c, &dir));
    s = zarr_store_count_store(c);
    ASSERT_OK(make_array(s, "a", 1, grid, chunks, &a));
    for (int i = 0; i < 300 * 16; i++)
        buf[i] = 3 * i + 7;
    zarr_region_all(zarr_array_meta_get(a), &r);
    s0 = dir_syncs(dir);
    zarr_store_count_reset(c);
    ASSERT_OK(zarr_array_write(a, &r, buf));
    zarr_store_count_read(c, &n);
    s1 = dir_syncs(dir);
    ASSERT_EQ_INT(n.set, 300);
    ASSERT_EQ_INT(n.sync, 1);
    ASSERT_EQ_INT(s1.files - s0.files, 300);
    ASSERT_EQ_INT(s1.dirs - s0.dirs, 2);
    ASSERT(is_file(path, "a/c/299"));
    zarr_array_close(a);
    zarr_store_close(s);
    return 0;
}

/* The same calls on a store that is not durable: no sync pass reaches the store, nothing is synced. */
static int
test_not_durable_syncs_nothing(void)
{
    const char       *root = test_tmpdir("durable-off");
    char              path[4200];
    zarr_store_count *c;
    zarr_store       *dir, *s;
    zarr_array       *a;
    zarr_store_counts n;
    zarr_region       r;
    zarr_group_meta  *g;
    uint64_t          grid[2] = {4, 8}, chunks[2] = {4, 4}, shape[2] = {8, 8};
    int32_t           buf[16 * 32];
    syncs             s1;

    snprintf(path, sizeof path, "%s/store.zarr", root);
    ASSERT_OK(open_counted(path, false, &c, &dir));
    s = zarr_store_count_store(c);
    ASSERT(!s->durable && !dir->durable);
    ASSERT_OK(zarr_group_meta_new(3, &g));
    ASSERT_OK(zarr_group_write(s, "", g));
    zarr_group_meta_free(g);
    ASSERT_OK(make_array(s, "a", 2, grid, chunks, &a));
    for (int i = 0; i < 16 * 32; i++)
        buf[i] = i + 1;
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, buf));
    ASSERT_OK(zarr_array_resize(a, shape));
    ASSERT_OK(zarr_array_flush(a));
    zarr_array_close(a);
    ASSERT_OK(zarr_node_delete(s, "a"));
    ASSERT_OK(zarr_store_flush(s));
    ASSERT_OK(zarr_store_sync(s));
    zarr_store_count_read(c, &n);
    ASSERT_EQ_INT(n.sync, 0);
    ASSERT(n.set >= 34 && n.flush == 1);
    s1 = dir_syncs(dir);
    ASSERT_EQ_INT(s1.files, 0);
    ASSERT_EQ_INT(s1.dirs, 0);
    zarr_store_close(s);
    return 0;
}

/* Groups, resizes, deletes and renames: one pass each, the directories they changed. */
static int
test_metadata_deletes_renames(void)
{
    const char       *root = test_tmpdir("durable-meta");
    char              path[4200];
    zarr_store_count *c;
    zarr_store       *dir, *s;
    zarr_array       *a;
    zarr_group_meta  *g;
    zarr_store_counts n;
    zarr_region       r;
    uint64_t          grid[1] = {8}, chunks[1] = {4}, shape[1] = {10};
    int32_t           buf[32];
    syncs             s0, s1;

    snprintf(path, sizeof path, "%s/store.zarr", root);
    ASSERT_OK(open_counted(path, true, &c, &dir));
    s = zarr_store_count_store(c);

    ASSERT_OK(zarr_group_meta_new(3, &g));
    zarr_store_count_reset(c);
    ASSERT_OK(zarr_group_write(s, "g", g));
    zarr_store_count_read(c, &n);
    ASSERT_EQ_INT(n.sync, 1);
    s0 = dir_syncs(dir);
    ASSERT_EQ_INT(s0.files, 1);
    ASSERT_EQ_INT(s0.dirs, 3); /* g, the root (g is new), the root's parent (the root is new) */
    zarr_store_count_reset(c);
    ASSERT_OK(zarr_group_write_attrs(s, "g", g));
    zarr_store_count_read(c, &n);
    ASSERT_EQ_INT(n.sync, 1);
    s1 = dir_syncs(dir);
    ASSERT_EQ_INT(s1.files - s0.files, 1);
    ASSERT_EQ_INT(s1.dirs - s0.dirs, 1); /* g alone */
    zarr_group_meta_free(g);

    ASSERT_OK(make_array(s, "g/a", 1, grid, chunks, &a));
    for (int i = 0; i < 32; i++)
        buf[i] = i + 100;
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, buf));
    /* shrink to 10 elements: chunks 3..7 deleted, the edge chunk 2 cleared, zarr.json rewritten */
    s0 = dir_syncs(dir);
    zarr_store_count_reset(c);
    ASSERT_OK(zarr_array_resize(a, shape));
    zarr_store_count_read(c, &n);
    ASSERT_EQ_INT(n.del, 5);
    ASSERT_EQ_INT(n.sync, 1);
    s1 = dir_syncs(dir);
    ASSERT_EQ_INT(s1.files - s0.files, 2); /* the edge chunk and zarr.json */
    ASSERT_EQ_INT(s1.dirs - s0.dirs, 2);   /* g/a/c (deletes, the edge chunk) and g/a (zarr.json) */
    ASSERT(!is_file(path, "g/a/c/3") && is_file(path, "g/a/c/2"));
    zarr_array_close(a);

    /* a rename outside any array: x/k -> y/k syncs x, y and the root (y is new) */
    ASSERT_OK(zarr_store_set(s, "x/k", "v", 1));
    ASSERT_OK(zarr_store_sync(s));
    s0 = dir_syncs(dir);
    ASSERT_OK(zarr_store_rename(s, "x/k", "y/k"));
    ASSERT_OK(zarr_store_sync(s));
    s1 = dir_syncs(dir);
    ASSERT_EQ_INT(s1.files - s0.files, 0);
    ASSERT_EQ_INT(s1.dirs - s0.dirs, 3);
    ASSERT(is_file(path, "y/k") && !is_file(path, "x/k"));

    /* a node delete: the parent of the removed prefix, in the pass zarr_node_delete runs itself */
    zarr_store_count_reset(c);
    ASSERT_OK(zarr_node_delete(s, "g"));
    zarr_store_count_read(c, &n);
    ASSERT_EQ_INT(n.sync, 1);
    s0 = dir_syncs(dir);
    ASSERT_EQ_INT(s0.dirs - s1.dirs, 1);
    ASSERT(!is_file(path, "g/zarr.json"));
    /* an empty pass syncs nothing */
    ASSERT_OK(zarr_store_sync(s));
    s1 = dir_syncs(dir);
    ASSERT_EQ_INT(s1.dirs, s0.dirs);
    zarr_store_close(s);
    return 0;
}

/* A durable array's partial-chunk writes go through the cache to the store before the write returns
 * (write-through); without durability they stay in the cache until a flush. */
static int
test_partial_write_through(void)
{
    const char *root = test_tmpdir("durable-partial");
    for (int durable = 0; durable <= 1; durable++) {
        char              path[4200];
        zarr_store_count *c;
        zarr_store       *dir, *s;
        zarr_array       *a, *b;
        zarr_store_counts n;
        zarr_region       r;
        uint64_t          grid[1] = {4}, chunks[1] = {8}, start[1] = {9}, count[1] = {1};
        int32_t           v = 4242, got = 0;

        snprintf(path, sizeof path, "%s/store%d.zarr", root, durable);
        ASSERT_OK(open_counted(path, durable, &c, &dir));
        s = zarr_store_count_store(c);
        ASSERT_OK(make_array(s, "a", 1, grid, chunks, &a));
        zarr_region_box(1, start, count, &r);
        zarr_store_count_reset(c);
        ASSERT_OK(zarr_array_write(a, &r, &v));
        zarr_store_count_read(c, &n);
        ASSERT_EQ_INT(n.set, durable ? 1 : 0);
        ASSERT_EQ_INT(n.sync, durable ? 1 : 0);
        ASSERT(is_file(path, "a/c/1") == (durable == 1));
        /* another handle reads the store: the value if it was written through, else the fill value */
        ASSERT_OK(zarr_array_open(s, "a", &b));
        ASSERT_OK(zarr_array_read(b, &r, &got));
        ASSERT_EQ_INT(got, durable ? 4242 : 0);
        zarr_array_close(b);
        ASSERT_OK(zarr_array_flush(a));
        ASSERT(is_file(path, "a/c/1"));
        zarr_array_close(a);
        zarr_store_close(s);
    }
    return 0;
}

/* ---- a forwarding store whose sync pass fails --------------------------------------------------------- */

static int
failing_sync(zarr_store *s)
{
    (void)s;
    return zarr_error(ZARR_EIO, "can't sync directory '/nowhere': Input/output error (injected)");
}

static int
test_failed_sync_fails_the_call(void)
{
    zarr_store_ops   ops = zarr_store_fwd_ops;
    zarr_store_fwd  *w   = calloc(1, sizeof *w);
    zarr_store      *mem, *s;
    zarr_array      *a;
    zarr_group_meta *g;
    zarr_region      r;
    uint64_t         grid[1] = {4}, chunks[1] = {8};
    int32_t          buf[32];

    ASSERT(w);
    ops.sync = failing_sync;
    ASSERT_OK(zarr_store_open("memory://", ZARR_STORE_DURABLE, &mem));
    ASSERT(mem->durable); /* zarr_store_open sets it for every store */
    ASSERT_OK(zarr_store_fwd_init(w, &ops, mem));
    s = &w->base;
    ASSERT(s->durable); /* copied from the inner store */

    ASSERT_OK(zarr_group_meta_new(3, &g));
    ASSERT_ERR(zarr_group_write(s, "", g), ZARR_EIO);
    ASSERT(strstr(zarr_errmsg(), "injected") && strstr(zarr_errmsg(), "can't write group"));
    /* the array's metadata write fails the create the same way */
    {
        zarr_array_meta *m;
        uint64_t         shape[1] = {32};
        ASSERT_OK(zarr_array_meta_new(3, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m));
        ASSERT_ERR(zarr_array_create(s, "a", m, false, &a), ZARR_EIO);
        ASSERT(strstr(zarr_errmsg(), "injected"));
    }
    /* the writes themselves went through (only their sync failed); not durable, no pass runs */
    ASSERT(zarr_store_exists(s, "zarr.json") == ZARR_OK && zarr_store_exists(s, "a/zarr.json") == ZARR_OK);
    s->durable = false;
    ASSERT_OK(zarr_group_write(s, "", g));
    ASSERT_OK(make_array(s, "b", 1, grid, chunks, &a));
    s->durable = true;
    for (int i = 0; i < 32; i++)
        buf[i] = i + 1;
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_ERR(zarr_array_write(a, &r, buf), ZARR_EIO);
    ASSERT(strstr(zarr_errmsg(), "injected"));
    ASSERT_ERR(zarr_array_flush(a), ZARR_EIO);
    ASSERT_ERR(zarr_store_flush(s), ZARR_EIO);
    ASSERT_ERR(zarr_store_sync(s), ZARR_EIO);
    s->durable = false;
    zarr_array_close(a);
    zarr_group_meta_free(g);
    zarr_store_close(s);
    return 0;
}

/* The zip store syncs its archive on flush; the memory store has no sync op (a pass is a no-op). */
static int
test_zip_and_mem(void)
{
    const char *root = test_tmpdir("durable-zip");
    char        path[4200];
    zarr_store *z, *m;
    zarr_buf    b = ZARR_BUF_INIT;

    snprintf(path, sizeof path, "%s/s.zip", root);
    ASSERT_OK(zarr_store_open(path, ZARR_STORE_CREATE | ZARR_STORE_RDWR | ZARR_STORE_DURABLE, &z));
    ASSERT(z->durable);
    ASSERT_OK(zarr_store_set(z, "k", "value", 5));
    ASSERT_OK(zarr_store_sync(z));
    ASSERT(!is_file(root, "s.zip")); /* in memory until the flush */
    ASSERT_OK(zarr_store_flush(z));
    ASSERT(is_file(root, "s.zip") && !is_file(root, "s.zip.h5zarr-tmp"));
    zarr_store_close(z);
    ASSERT_OK(zarr_store_open(path, ZARR_STORE_RDONLY, &z));
    ASSERT_OK(zarr_store_get(z, "k", &b));
    ASSERT(b.size == 5 && memcmp(b.data, "value", 5) == 0);
    zarr_store_close(z);

    ASSERT_OK(zarr_store_open("memory://", ZARR_STORE_DURABLE, &m));
    ASSERT_OK(zarr_store_set(m, "k", "v", 1));
    ASSERT_OK(zarr_store_sync(m));
    ASSERT_OK(zarr_store_flush(m));
    zarr_store_close(m);
    zarr_buf_free(&b);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(job_one_pass),
    TEST_ENTRY(many_chunks_dedup),
    TEST_ENTRY(not_durable_syncs_nothing),
    TEST_ENTRY(metadata_deletes_renames),
    TEST_ENTRY(partial_write_through),
    TEST_ENTRY(failed_sync_fails_the_call),
    TEST_ENTRY(zip_and_mem),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
