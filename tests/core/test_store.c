/*
 * test_store.c: store semantics for the directory and memory stores (get/set/overwrite, byte ranges,
 * list, delete, delete a subtree, rename, key validation, read-only refusal), atomic writes leaving no
 * temporary files, concurrent writers, and opening stores by URL.
 */
#include <unistd.h>

#include "runner.h"

#include "store_impl.h"
#include "h5zarr/zarr.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

typedef struct names {
    char n[64][64];
    bool dir[64];
    int  count;
} names;

static int
collect(const char *name, bool is_dir, void *ud)
{
    names *v = ud;
    if (v->count < 64) {
        snprintf(v->n[v->count], sizeof v->n[0], "%s", name);
        v->dir[v->count] = is_dir;
        v->count++;
    }
    return 0;
}

static int
find_name(const names *v, const char *name)
{
    for (int i = 0; i < v->count; i++)
        if (strcmp(v->n[i], name) == 0)
            return i;
    return -1;
}

static int
stop_at_first(const char *name, bool is_dir, void *ud)
{
    (void)name;
    (void)is_dir;
    (*(int *)ud)++;
    return 42;
}

static int
get_str(zarr_store *s, const char *key, const char *want)
{
    zarr_buf b = ZARR_BUF_INIT;
    int      rc;
    ASSERT_OK(zarr_store_get(s, key, &b));
    rc = b.size == strlen(want) && (b.size == 0 || memcmp(b.data, want, b.size) == 0);
    if (!rc)
        fprintf(stderr, "  value of '%s' is '%.*s', expected '%s'\n", key, (int)b.size, (char *)b.data, want);
    zarr_buf_free(&b);
    ASSERT(rc);
    return 0;
}

/* The shared semantics every store must have. */
static int
check_semantics(zarr_store *s)
{
    zarr_buf b = ZARR_BUF_INIT;
    names    v;
    int      calls = 0;

    ASSERT_ERR(zarr_store_get(s, "nope", &b), ZARR_ENOTFOUND);
    ASSERT_ERR(zarr_store_exists(s, "nope"), ZARR_ENOTFOUND);
    ASSERT_OK(zarr_store_set(s, "zarr.json", "{}", 2));
    ASSERT_OK(zarr_store_set(s, "a/b/c/0", "hello world", 11));
    ASSERT_OK(zarr_store_set(s, "a/b/c/1", "", 0));
    ASSERT_OK(zarr_store_set(s, "a/b/.zarray", "za", 2));
    ASSERT_OK(zarr_store_set(s, "a/x", "xx", 2));
    ASSERT(get_str(s, "a/b/c/0", "hello world") == 0);
    ASSERT(get_str(s, "a/b/c/1", "") == 0);
    ASSERT_OK(zarr_store_set(s, "a/b/c/0", "bye", 3)); /* overwrite, shorter */
    ASSERT(get_str(s, "a/b/c/0", "bye") == 0);
    ASSERT_OK(zarr_store_set(s, "a/b/c/0", "hello world", 11));
    ASSERT_OK(zarr_store_exists(s, "a/b/c/0"));
    ASSERT_ERR(zarr_store_exists(s, "a/b"), ZARR_ENOTFOUND); /* a "directory" is not a value */

    /* Byte ranges. */
    ASSERT_OK(zarr_store_get_range(s, "a/b/c/0", 6, 5, &b));
    ASSERT(b.size == 5 && memcmp(b.data, "world", 5) == 0);
    ASSERT_OK(zarr_store_get_range(s, "a/b/c/0", 6, UINT64_MAX, &b));
    ASSERT(b.size == 5 && memcmp(b.data, "world", 5) == 0);
    ASSERT_OK(zarr_store_get_range(s, "a/b/c/0", 11, 0, &b));
    ASSERT_EQ_INT(b.size, 0);
    ASSERT_ERR(zarr_store_get_range(s, "a/b/c/0", 6, 6, &b), ZARR_ECODEC);
    ASSERT_ERR(zarr_store_get_range(s, "a/b/c/0", 12, UINT64_MAX, &b), ZARR_ECODEC);
    ASSERT_ERR(zarr_store_get_range(s, "a/b/c/9", 0, 1, &b), ZARR_ENOTFOUND);

    /* Listing: immediate children only, directories flagged. */
    memset(&v, 0, sizeof v);
    ASSERT_OK(zarr_store_list(s, "", collect, &v));
    ASSERT_EQ_INT(v.count, 2);
    ASSERT(find_name(&v, "zarr.json") >= 0 && !v.dir[find_name(&v, "zarr.json")]);
    ASSERT(find_name(&v, "a") >= 0 && v.dir[find_name(&v, "a")]);
    memset(&v, 0, sizeof v);
    ASSERT_OK(zarr_store_list(s, "a/b", collect, &v));
    ASSERT_EQ_INT(v.count, 2);
    ASSERT(find_name(&v, "c") >= 0 && v.dir[find_name(&v, "c")]);
    ASSERT(find_name(&v, ".zarray") >= 0 && !v.dir[find_name(&v, ".zarray")]);
    memset(&v, 0, sizeof v);
    ASSERT_OK(zarr_store_list(s, "a/b/c", collect, &v));
    ASSERT_EQ_INT(v.count, 2);
    memset(&v, 0, sizeof v);
    ASSERT_OK(zarr_store_list(s, "missing/dir", collect, &v));
    ASSERT_EQ_INT(v.count, 0);
    ASSERT_EQ_INT(zarr_store_list(s, "a", stop_at_first, &calls), 42);
    ASSERT_EQ_INT(calls, 1);

    /* Path escapes and malformed keys. */
    ASSERT_ERR(zarr_store_set(s, "../evil", "x", 1), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_set(s, "a/../../evil", "x", 1), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_set(s, "/etc/evil", "x", 1), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_set(s, "a//b", "x", 1), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_set(s, "a/", "x", 1), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_set(s, "a\\..\\b", "x", 1), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_set(s, "a/./b", "x", 1), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_set(s, "", "x", 1), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_get(s, "..", &b), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_del_prefix(s, ".."), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_list(s, "../", collect, &v), ZARR_EINVAL);
    ASSERT(strstr(zarr_errmsg(), "../") != NULL);

    /* Delete: absent is fine; del_prefix removes the subtree and the key itself. */
    ASSERT_OK(zarr_store_del(s, "a/x"));
    ASSERT_OK(zarr_store_del(s, "a/x"));
    ASSERT_ERR(zarr_store_exists(s, "a/x"), ZARR_ENOTFOUND);
    ASSERT_OK(zarr_store_set(s, "a/bb", "keep", 4)); /* shares the prefix string, not the path */
    ASSERT_OK(zarr_store_del_prefix(s, "a/b"));
    ASSERT_ERR(zarr_store_exists(s, "a/b/c/0"), ZARR_ENOTFOUND);
    ASSERT_ERR(zarr_store_exists(s, "a/b/.zarray"), ZARR_ENOTFOUND);
    ASSERT_OK(zarr_store_exists(s, "a/bb"));
    memset(&v, 0, sizeof v);
    ASSERT_OK(zarr_store_list(s, "a", collect, &v));
    ASSERT_EQ_INT(v.count, 1);
    ASSERT_STR(v.n[0], "bb");
    ASSERT_OK(zarr_store_del_prefix(s, "a/bb")); /* a single key */
    ASSERT_ERR(zarr_store_exists(s, "a/bb"), ZARR_ENOTFOUND);
    ASSERT_OK(zarr_store_del_prefix(s, "not/there"));

    /* Rename a key and a subtree. */
    ASSERT_OK(zarr_store_set(s, "g/t/zarr.json", "T", 1));
    ASSERT_OK(zarr_store_set(s, "g/t/c/0", "0", 1));
    ASSERT_OK(zarr_store_rename(s, "g/t", "h/u"));
    ASSERT_ERR(zarr_store_exists(s, "g/t/zarr.json"), ZARR_ENOTFOUND);
    ASSERT(get_str(s, "h/u/zarr.json", "T") == 0);
    ASSERT(get_str(s, "h/u/c/0", "0") == 0);
    ASSERT_OK(zarr_store_rename(s, "h/u/c/0", "h/u/c/1"));
    ASSERT(get_str(s, "h/u/c/1", "0") == 0);
    ASSERT_ERR(zarr_store_rename(s, "nothing", "h/z"), ZARR_ENOTFOUND);
    /* a missing source makes none of the target's missing parents (the directory store tries the rename
     * first and makes parents only for a source that exists) */
    ASSERT_ERR(zarr_store_rename(s, "nothing", "p/q/r"), ZARR_ENOTFOUND);
    ASSERT_ERR(zarr_store_exists(s, "p/q"), ZARR_ENOTFOUND);
    memset(&v, 0, sizeof v);
    ASSERT_OK(zarr_store_list(s, "", collect, &v));
    ASSERT(find_name(&v, "h") >= 0 && find_name(&v, "p") < 0);

    /* del_prefix("") empties the store. */
    ASSERT_OK(zarr_store_del_prefix(s, ""));
    memset(&v, 0, sizeof v);
    ASSERT_OK(zarr_store_list(s, "", collect, &v));
    ASSERT_EQ_INT(v.count, 0);
    zarr_buf_free(&b);
    return 0;
}

static int
test_mem_semantics(void)
{
    zarr_store *s;
    ASSERT_OK(zarr_store_new_mem(&s));
    ASSERT_STR(s->ops->name, "mem");
    int rc = check_semantics(s);
    zarr_store_close(s);
    return rc;
}

/* Counts files whose name starts with the temp prefix anywhere below `path`. */
static int
count_temp(const char *path)
{
    DIR           *d = opendir(path);
    struct dirent *e;
    int            n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d))) {
        char sub[4096];
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (strstr(e->d_name, "h5zarr-tmp"))
            n++;
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        if (e->d_type == DT_DIR)
            n += count_temp(sub);
    }
    closedir(d);
    return n;
}

static int
test_dir_semantics(void)
{
    const char *dir = test_tmpdir("store-dir");
    char        root[4096], path[4200];
    zarr_store *s;
    struct stat st;
    int         rc;

    ASSERT(dir);
    snprintf(root, sizeof root, "%s/new/store.zarr", dir);
    ASSERT_ERR(zarr_store_open_dir(root, ZARR_STORE_RDWR, &s), ZARR_ENOTFOUND);
    ASSERT_OK(zarr_store_open_dir(root, ZARR_STORE_CREATE, &s));
    ASSERT_STR(s->ops->name, "dir");
    ASSERT(s->atomic_writes);
    rc = check_semantics(s);
    if (rc)
        return rc;
    /* Values are plain files at the key's path. */
    ASSERT_OK(zarr_store_set(s, "x/y/z", "abc", 3));
    snprintf(path, sizeof path, "%s/x/y/z", root);
    ASSERT(stat(path, &st) == 0 && st.st_size == 3);
    ASSERT_EQ_INT(count_temp(root), 0);
    /* A value larger than the store's write piece (written in several write() calls), new and
     * replacing, comes back whole. */
    {
        size_t   n   = (3u << 20) + 7;
        uint8_t *big = malloc(n);
        zarr_buf b   = ZARR_BUF_INIT;
        ASSERT(big);
        for (int pass = 0; pass < 2; pass++) {
            for (size_t i = 0; i < n; i++)
                big[i] = (uint8_t)(i * 31 + i / 4099 + (size_t)pass);
            ASSERT_OK(zarr_store_set(s, "big/v", big, n));
            ASSERT_OK(zarr_store_get(s, "big/v", &b));
            ASSERT(b.size == n && memcmp(b.data, big, n) == 0);
        }
        snprintf(path, sizeof path, "%s/big/v", root);
        ASSERT(stat(path, &st) == 0 && (size_t)st.st_size == n);
        ASSERT_OK(zarr_store_del(s, "big/v"));
        zarr_buf_free(&b);
        free(big);
    }
    /* A stray temp file is not listed. */
    snprintf(path, sizeof path, "%s/x/y/.h5zarr-tmp.1.1", root);
    FILE *f = fopen(path, "w");
    ASSERT(f);
    fclose(f);
    names v;
    memset(&v, 0, sizeof v);
    ASSERT_OK(zarr_store_list(s, "x/y", collect, &v));
    ASSERT_EQ_INT(v.count, 1);
    ASSERT_STR(v.n[0], "z");
    unlink(path);
    /* In-place writes. */
    s->atomic_writes = false;
    ASSERT_OK(zarr_store_set(s, "x/y/z", "abcdef", 6));
    ASSERT_OK(zarr_store_set(s, "x/y/z", "ab", 2));
    ASSERT_OK(zarr_store_set(s, "p/q/r", "new", 3));
    ASSERT(get_str(s, "x/y/z", "ab") == 0);
    ASSERT(get_str(s, "p/q/r", "new") == 0);
    s->atomic_writes = true;
    /* A key that is a directory can't be written over. */
    ASSERT(zarr_store_set(s, "x/y", "no", 2) != ZARR_OK);
    ASSERT_EQ_INT(count_temp(root), 0);
    zarr_store_close(s);

    /* Read-only store refuses writes but reads. */
    ASSERT_OK(zarr_store_open_dir(root, ZARR_STORE_RDONLY, &s));
    ASSERT(s->readonly);
    ASSERT(get_str(s, "p/q/r", "new") == 0);
    ASSERT_ERR(zarr_store_set(s, "k", "v", 1), ZARR_EREADONLY);
    ASSERT_ERR(zarr_store_del(s, "p/q/r"), ZARR_EREADONLY);
    ASSERT_ERR(zarr_store_del_prefix(s, ""), ZARR_EREADONLY);
    zarr_store_close(s);
    /* Not a directory. */
    snprintf(path, sizeof path, "%s/new/store.zarr/p/q/r", dir);
    ASSERT_ERR(zarr_store_open_dir(path, ZARR_STORE_RDWR, &s), ZARR_EINVAL);
    return 0;
}

/* One pass over the atomic-write cases: a new key, a new key in new directories, replacing a value
 * (a reader holding the old file keeps the old bytes: the value was replaced, not rewritten in
 * place), a key that is a directory; never a temporary file left. */
static int
check_atomic_writes(zarr_store *s, const char *root)
{
    char path[4200], got[16] = {0};
    int  fd;

    ASSERT_OK(zarr_store_set(s, "k", "first", 5));
    ASSERT(get_str(s, "k", "first") == 0);
    ASSERT_OK(zarr_store_set(s, "d1/d2/k", "deep", 4));
    ASSERT(get_str(s, "d1/d2/k", "deep") == 0);
    snprintf(path, sizeof path, "%s/k", root);
    ASSERT((fd = open(path, O_RDONLY)) >= 0);
    ASSERT_OK(zarr_store_set(s, "k", "second", 6));
    ASSERT(pread(fd, got, sizeof got, 0) == 5 && memcmp(got, "first", 5) == 0);
    close(fd);
    ASSERT(get_str(s, "k", "second") == 0);
    ASSERT_OK(zarr_store_set(s, "d1/d2/k", "", 0));
    ASSERT(get_str(s, "d1/d2/k", "") == 0);
    ASSERT(zarr_store_set(s, "d1/d2", "no", 2) != ZARR_OK);
    ASSERT_EQ_INT(count_temp(root), 0);
    return 0;
}

/* A new array's folders (store_dir.c's `fresh` folders): a key below a folder the store made is written
 * with its folders made top-down, and a wrong guess (the folder removed, or a subfolder made, behind the
 * store's back) still writes the value where it belongs. */
static int
test_dir_fresh_folders(void)
{
    const char *dir = test_tmpdir("store-fresh");
    char        root[4096], path[4200];
    zarr_store *s;
    struct stat st;

    ASSERT(dir);
    snprintf(root, sizeof root, "%s/f.zarr", dir);
    ASSERT_OK(zarr_store_open_dir(root, ZARR_STORE_CREATE, &s));
    /* the array's document makes its folder; its first chunk needs c/0 below it */
    ASSERT_OK(zarr_store_set(s, "a/zarr.json", "{}", 2));
    ASSERT_OK(zarr_store_set(s, "a/c/0/0", "chunk", 5));
    ASSERT_OK(get_str(s, "a/c/0/0", "chunk"));
    ASSERT_OK(zarr_store_set(s, "a/c/0/1", "next", 4));
    ASSERT_OK(zarr_store_set(s, "a/c/1/0", "row1", 4));
    ASSERT_OK(get_str(s, "a/c/1/0", "row1"));
    snprintf(path, sizeof path, "%s/a/c/1", root);
    ASSERT(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    /* the folder removed behind the store's back: made again */
    ASSERT_OK(zarr_store_set(s, "b/zarr.json", "{}", 2));
    snprintf(path, sizeof path, "%s/b/zarr.json", root);
    ASSERT(unlink(path) == 0);
    snprintf(path, sizeof path, "%s/b", root);
    ASSERT(rmdir(path) == 0);
    ASSERT_OK(zarr_store_set(s, "b/c/0/0", "again", 5));
    ASSERT_OK(get_str(s, "b/c/0/0", "again"));
    /* a subfolder made behind the store's back: EEXIST, the value still written */
    ASSERT_OK(zarr_store_set(s, "d/zarr.json", "{}", 2));
    snprintf(path, sizeof path, "%s/d/c", root);
    ASSERT(mkdir(path, 0777) == 0);
    snprintf(path, sizeof path, "%s/d/c/0", root);
    ASSERT(mkdir(path, 0777) == 0);
    ASSERT_OK(zarr_store_set(s, "d/c/0/0", "there", 5));
    ASSERT_OK(get_str(s, "d/c/0/0", "there"));
    /* a new root: the members of one group, each a new folder below folders the store made (the
     * 10,000-member create: no folder of theirs is looked for first), every value where it belongs */
    for (int i = 0; i < 40; i++) {
        char key[64], val[16];
        snprintf(key, sizeof key, "big/m%02d/%s", i, i % 10 ? "c" : "zarr.json");
        snprintf(val, sizeof val, "v%d", i);
        ASSERT_OK(zarr_store_set(s, key, val, strlen(val)));
    }
    ASSERT_OK(get_str(s, "big/m00/zarr.json", "v0"));
    ASSERT_OK(get_str(s, "big/m39/c", "v39"));
    ASSERT_OK(zarr_store_set(s, "g/a/c/0", "deep", 4)); /* three new folders below the new root */
    ASSERT_OK(get_str(s, "g/a/c/0", "deep"));
    /* a folder made behind the store's back below one it made, holding a value already (another
     * process, or a folder renamed there): the guess fails with EEXIST, the value is written beside the
     * old one, and the folder is known from then on (its own new subfolder made as the store's) */
    snprintf(path, sizeof path, "%s/big/x", root);
    ASSERT(mkdir(path, 0777) == 0);
    snprintf(path, sizeof path, "%s/big/x/y", root);
    ASSERT(mkdir(path, 0777) == 0);
    {
        FILE *fp;
        snprintf(path, sizeof path, "%s/big/x/y/old", root);
        ASSERT((fp = fopen(path, "w")) != NULL);
        ASSERT(fputs("kept", fp) >= 0 && fclose(fp) == 0);
    }
    ASSERT_OK(zarr_store_set(s, "big/x/y/new", "added", 5));
    ASSERT_OK(get_str(s, "big/x/y/new", "added"));
    ASSERT_OK(get_str(s, "big/x/y/old", "kept"));
    ASSERT_OK(zarr_store_set(s, "big/x/z/w", "sub", 3));
    ASSERT_OK(get_str(s, "big/x/z/w", "sub"));
    ASSERT_OK(get_str(s, "big/x/y/old", "kept"));
    /* in place (not atomic) writes take the same path */
    s->atomic_writes = false;
    ASSERT_OK(zarr_store_set(s, "e/zarr.json", "{}", 2));
    ASSERT_OK(zarr_store_set(s, "e/c/0/0", "inplace", 7));
    ASSERT_OK(get_str(s, "e/c/0/0", "inplace"));
    ASSERT_EQ_INT(count_temp(root), 0);
    zarr_store_close(s);
    return 0;
}

/* Atomic writes go through O_TMPFILE + linkat where the filesystem has it (linked by AT_EMPTY_PATH,
 * or through /proc/self/fd on older kernels), and through a named temporary + rename otherwise; all
 * three keep the store's semantics. */
static int
test_dir_atomic_paths(void)
{
    const char   *dir = test_tmpdir("store-atomic");
    char          root[4096], path[4200];
    zarr_store   *s;
    struct statfs fs;
    struct stat   st;
    mode_t        mask = umask(022);

    umask(mask);
    ASSERT(dir);
    snprintf(root, sizeof root, "%s/a.zarr", dir);
    ASSERT_OK(zarr_store_open_dir(root, ZARR_STORE_CREATE, &s));
    ASSERT(check_atomic_writes(s, root) == 0);
    /* ext4, xfs, btrfs and tmpfs have O_TMPFILE: there the fast path must have been taken */
    ASSERT(statfs(root, &fs) == 0);
    if (fs.f_type == EXT4_SUPER_MAGIC || fs.f_type == XFS_SUPER_MAGIC || fs.f_type == BTRFS_SUPER_MAGIC ||
        fs.f_type == TMPFS_MAGIC)
        ASSERT(zarr__store_dir_tmpfile_used(s));
    /* the unnamed file gets the same permissions as a created one */
    snprintf(path, sizeof path, "%s/k", root);
    ASSERT(stat(path, &st) == 0);
    ASSERT_EQ_INT((int)(st.st_mode & 0777), (int)(0666 & ~mask));
    zarr_store_close(s);

    bool fast = fs.f_type == EXT4_SUPER_MAGIC || fs.f_type == XFS_SUPER_MAGIC ||
                fs.f_type == BTRFS_SUPER_MAGIC || fs.f_type == TMPFS_MAGIC;
    snprintf(root, sizeof root, "%s/b.zarr", dir);
    ASSERT_OK(zarr_store_open_dir(root, ZARR_STORE_CREATE, &s));
    zarr__store_dir_force(s, ZARR__DIR_LINK_PROC);
    ASSERT(check_atomic_writes(s, root) == 0);
    ASSERT(!fast || zarr__store_dir_tmpfile_used(s));
    zarr_store_close(s);

    snprintf(root, sizeof root, "%s/c.zarr", dir);
    ASSERT_OK(zarr_store_open_dir(root, ZARR_STORE_CREATE, &s));
    zarr__store_dir_force(s, ZARR__DIR_RENAME);
    ASSERT(check_atomic_writes(s, root) == 0);
    ASSERT(!zarr__store_dir_tmpfile_used(s));
    zarr_store_close(s);
    return 0;
}

/* File systems with renameat2's RENAME_EXCHANGE (the directory store's replacements when not durable). */
static bool
exchange_fs(const char *path)
{
    struct statfs fs;
    return statfs(path, &fs) == 0 && (fs.f_type == EXT4_SUPER_MAGIC || fs.f_type == XFS_SUPER_MAGIC ||
                                      fs.f_type == BTRFS_SUPER_MAGIC || fs.f_type == TMPFS_MAGIC);
}

/* Sets key `k` of `s` to the text "<tag>-<i>", and checks that it reads back so. */
static int
put_tagged(zarr_store *s, const char *k, int tag, int i)
{
    char v[64];
    snprintf(v, sizeof v, "%d-%d", tag, i);
    ASSERT_OK(zarr_store_set(s, k, v, strlen(v)));
    return 0;
}

/* Replacing values: not durable, the new file is exchanged with the key and the old one unlinked (no
 * rename over an existing file, after which ext4 allocates the new file's blocks at once); durable, it
 * is renamed over the key after its fdatasync, as before. Either way a reader holding the old file sees
 * the old bytes, the key the new ones, nothing else is left in the folder, the old file's link count
 * drops to 0, and a key that names a folder is refused with the folder left as it was. */
static int
test_dir_replace_exchange(void)
{
    const char *dir = test_tmpdir("store-exchange");
    char        root[4096], path[4200], key[64], want[64], got[16] = {0};
    zarr_store *s;
    struct stat st;
    int         fd;

    ASSERT(dir);
    for (int durable = 0; durable < 2; durable++) {
        snprintf(root, sizeof root, "%s/%c.zarr", dir, durable ? 'd' : 'n');
        ASSERT_OK(zarr_store_open_dir(root, ZARR_STORE_CREATE | (durable ? ZARR_STORE_DURABLE : 0), &s));
        ASSERT_OK(zarr_store_set(s, "a/zarr.json", "old", 3));
        snprintf(path, sizeof path, "%s/a/zarr.json", root);
        ASSERT((fd = open(path, O_RDONLY)) >= 0);
        for (int i = 0; i < 5; i++) {
            snprintf(key, sizeof key, "a/c/%d", i);
            ASSERT(put_tagged(s, key, 1, i) == 0);
            ASSERT(put_tagged(s, key, 2, i) == 0);
            ASSERT_OK(zarr_store_set(s, "a/zarr.json", "new", 3));
        }
        ASSERT(pread(fd, got, sizeof got, 0) == 3 && memcmp(got, "old", 3) == 0);
        ASSERT(fstat(fd, &st) == 0);
        ASSERT_EQ_INT((int)st.st_nlink, 0); /* replaced: no name left for it */
        close(fd);
        ASSERT(get_str(s, "a/zarr.json", "new") == 0);
        for (int i = 0; i < 5; i++) {
            snprintf(key, sizeof key, "a/c/%d", i);
            snprintf(want, sizeof want, "2-%d", i);
            ASSERT(get_str(s, key, want) == 0);
        }
        /* a key that is a folder: refused (the exchange is undone), the folder and its keys intact */
        ASSERT(zarr_store_set(s, "a/c", "no", 2) != ZARR_OK);
        ASSERT(get_str(s, "a/c/0", "2-0") == 0);
        snprintf(path, sizeof path, "%s/a/c", root);
        ASSERT_EQ_INT(test_dir_count(path, NULL), 5);
        ASSERT_EQ_INT(count_temp(root), 0);
        ASSERT_EQ_INT(zarr__store_dir_exchanges(s), durable || !exchange_fs(root) ? 0 : 10);
        zarr_store_close(s);
    }
    return 0;
}

/* Rewriting existing keys: after two commits in a row found their key existing, the store links under a
 * temporary name and renames straight away, and probes the direct link every 16th commit (store_dir.c,
 * rename_first): 40 rewrites cost 2 + 2 failed links, not 40. A probe that makes a new key ends the run.
 * Every value as written, no temporary left, and in a forked child the temporaries carry its own pid. */
static int
test_dir_replace_first(void)
{
    const char *dir = test_tmpdir("store-replace");
    char        root[4096], key[64];
    zarr_store *s;
    int         status;
    pid_t       pid;

    ASSERT(dir);
    snprintf(root, sizeof root, "%s/r.zarr", dir);
    ASSERT_OK(zarr_store_open_dir(root, ZARR_STORE_CREATE, &s));
    for (int i = 0; i < 40; i++) {
        snprintf(key, sizeof key, "k/%d", i);
        ASSERT(put_tagged(s, key, 1, i) == 0);
    }
    ASSERT_EQ_INT(zarr__store_dir_link_misses(s), 0); /* new keys: each linked under its name */
    ASSERT_EQ_INT(zarr__store_dir_exchanges(s), 0);
    for (int i = 0; i < 40; i++) {
        snprintf(key, sizeof key, "k/%d", i);
        ASSERT(put_tagged(s, key, 2, i) == 0);
    }
    if (exchange_fs(root)) /* not durable: each replacement an exchange with the key, then an unlink */
        ASSERT_EQ_INT(zarr__store_dir_exchanges(s), 40);
    if (zarr__store_dir_tmpfile_used(s)) {                /* O_TMPFILE here: the replacement path above */
        ASSERT_EQ_INT(zarr__store_dir_link_misses(s), 4); /* rewrites 1, 2, then probes 16 and 32 */
        /* new keys while renaming first: the probe at 48 (the 10th) makes a new key and ends the run */
        for (int i = 0; i < 20; i++) {
            snprintf(key, sizeof key, "n/%d", i);
            ASSERT(put_tagged(s, key, 3, i) == 0);
        }
        ASSERT_EQ_INT(zarr__store_dir_link_misses(s), 4);
        snprintf(key, sizeof key, "k/0"); /* linking first again: this rewrite's link fails */
        ASSERT(put_tagged(s, key, 4, 0) == 0);
        ASSERT_EQ_INT(zarr__store_dir_link_misses(s), 5);
    }
    else {
        for (int i = 0; i < 20; i++) {
            snprintf(key, sizeof key, "n/%d", i);
            ASSERT(put_tagged(s, key, 3, i) == 0);
        }
        ASSERT(put_tagged(s, "k/0", 4, 0) == 0);
    }
    for (int i = 0; i < 40; i++) {
        char want[64];
        snprintf(key, sizeof key, "k/%d", i);
        snprintf(want, sizeof want, "%d-%d", i ? 2 : 4, i);
        ASSERT(get_str(s, key, want) == 0);
    }
    for (int i = 0; i < 20; i++) {
        char want[64];
        snprintf(key, sizeof key, "n/%d", i);
        snprintf(want, sizeof want, "3-%d", i);
        ASSERT(get_str(s, key, want) == 0);
    }
    ASSERT_EQ_INT(count_temp(root), 0);

    /* a forked child names its temporaries with its own pid (the parent's was asked before the fork) */
    ASSERT_EQ_INT(zarr__store_dir_tmp_pid(), (uint64_t)getpid());
    pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        int ok = zarr__store_dir_tmp_pid() == (uint64_t)getpid();
        for (int i = 0; ok && i < 40; i++) {
            snprintf(key, sizeof key, "k/%d", i);
            ok = put_tagged(s, key, 5, i) == 0;
        }
        _exit(ok ? 0 : 1);
    }
    ASSERT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_EQ_INT(zarr__store_dir_tmp_pid(), (uint64_t)getpid());
    for (int i = 0; i < 40; i++) {
        char want[64];
        snprintf(key, sizeof key, "k/%d", i);
        snprintf(want, sizeof want, "5-%d", i);
        ASSERT(get_str(s, key, want) == 0);
    }
    ASSERT_EQ_INT(count_temp(root), 0);
    zarr_store_close(s);
    return 0;
}

typedef struct thr_arg {
    zarr_store *s;
    int         id;
    int         fails;
} thr_arg;

static void *
writer(void *p)
{
    thr_arg *a = p;
    char     key[64], val[4096];
    for (int i = 0; i < 200; i++) {
        /* Shared keys (everyone writes "shared/<i>") and own keys. */
        size_t n = 100 + (size_t)(a->id * 37 + i) % 3000;
        memset(val, 'a' + a->id, n);
        snprintf(key, sizeof key, "shared/%d/v", i % 20);
        if (zarr_store_set(a->s, key, val, n) != ZARR_OK)
            a->fails++;
        snprintf(key, sizeof key, "own/%d/%d", a->id, i);
        if (zarr_store_set(a->s, key, val, n) != ZARR_OK)
            a->fails++;
    }
    return NULL;
}

static int
check_concurrent(zarr_store *s)
{
    pthread_t t[8];
    thr_arg   a[8];
    zarr_buf  b = ZARR_BUF_INIT;
    for (int i = 0; i < 8; i++) {
        a[i] = (thr_arg){s, i, 0};
        ASSERT(pthread_create(&t[i], NULL, writer, &a[i]) == 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        ASSERT_EQ_INT(a[i].fails, 0);
    }
    /* Every shared value is one writer's whole value, never a mix. */
    for (int i = 0; i < 20; i++) {
        char key[64];
        snprintf(key, sizeof key, "shared/%d/v", i);
        ASSERT_OK(zarr_store_get(s, key, &b));
        ASSERT(b.size >= 100);
        for (size_t k = 1; k < b.size; k++)
            ASSERT(b.data[k] == b.data[0]);
        int id = b.data[0] - 'a';
        ASSERT(id >= 0 && id < 8);
    }
    for (int id = 0; id < 8; id++)
        for (int i = 0; i < 200; i += 17) {
            char key[64];
            snprintf(key, sizeof key, "own/%d/%d", id, i);
            ASSERT_OK(zarr_store_get(s, key, &b));
            ASSERT_EQ_INT(b.size, 100 + (size_t)(id * 37 + i) % 3000);
            ASSERT(b.data[0] == 'a' + id);
        }
    zarr_buf_free(&b);
    return 0;
}

static int
test_concurrent_sets(void)
{
    const char *dir = test_tmpdir("store-conc");
    zarr_store *s;
    ASSERT(dir);
    ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_RDWR, &s));
    if (check_concurrent(s))
        return 1;
    ASSERT_EQ_INT(count_temp(dir), 0);
    zarr_store_close(s);
    ASSERT_OK(zarr_store_new_mem(&s));
    if (check_concurrent(s))
        return 1;
    zarr_store_close(s);
    return 0;
}

static int
test_open_url(void)
{
    const char *dir = test_tmpdir("store-url");
    char        url[4200];
    zarr_store *a, *b;
    ASSERT(dir);
    /* Named memory stores are shared; anonymous ones are not. */
    ASSERT_OK(zarr_store_open("memory://shared-test", ZARR_STORE_CREATE, &a));
    ASSERT_OK(zarr_store_open("memory://shared-test", ZARR_STORE_RDWR, &b));
    ASSERT(a == b);
    ASSERT_OK(zarr_store_set(a, "k", "v", 1));
    ASSERT(get_str(b, "k", "v") == 0);
    zarr_store_close(a);
    zarr_store_close(b);
    ASSERT_OK(zarr_store_open("memory://shared-test", ZARR_STORE_RDWR, &a));
    ASSERT(get_str(a, "k", "v") == 0); /* lives as long as the process */
    zarr_store_close(a);
    ASSERT_OK(zarr_store_open("memory://", ZARR_STORE_CREATE, &a));
    ASSERT_ERR(zarr_store_exists(a, "k"), ZARR_ENOTFOUND);
    zarr_store_close(a);
    /* file:// and plain paths are directory stores. */
    snprintf(url, sizeof url, "file://%s/u.zarr", dir);
    ASSERT_OK(zarr_store_open(url, ZARR_STORE_CREATE, &a));
    ASSERT_STR(a->ops->name, "dir");
    ASSERT_OK(zarr_store_set(a, "k", "file", 4));
    zarr_store_close(a);
    snprintf(url, sizeof url, "%s/u.zarr", dir);
    ASSERT_OK(zarr_store_open(url, ZARR_STORE_RDONLY, &a));
    ASSERT(get_str(a, "k", "file") == 0);
    zarr_store_ref(a);
    zarr_store_close(a); /* still one reference */
    ASSERT(get_str(a, "k", "file") == 0);
    zarr_store_close(a);
    zarr_store_close(NULL);
    ASSERT_ERR(zarr_store_open("gopher://x/y", ZARR_STORE_RDONLY, &a), ZARR_EUNSUPPORTED);
    ASSERT_ERR(zarr_store_open("file://relative", ZARR_STORE_RDONLY, &a), ZARR_EINVAL);
    return 0;
}

static int
test_batch(void)
{
    zarr_store    *s;
    const char    *keys[3]  = {"b/0", "b/1", "b/2"};
    const void    *data[3]  = {"zero", "one", "two"};
    size_t         sizes[3] = {4, 3, 3};
    int            res[3];
    zarr_buf       outs[3] = {ZARR_BUF_INIT, ZARR_BUF_INIT, ZARR_BUF_INIT};
    zarr_store_req reqs[3];
    ASSERT_OK(zarr_store_new_mem(&s));
    ASSERT_OK(zarr_store_set_many(s, 3, keys, data, sizes, res));
    ASSERT_OK(zarr_store_del(s, "b/1"));
    for (int i = 0; i < 3; i++)
        reqs[i] = (zarr_store_req){.key = keys[i], .len = UINT64_MAX, .out = &outs[i]};
    zarr_error(ZARR_EIO, "sentinel");
    ASSERT_ERR(zarr_store_get_many(s, 3, reqs), ZARR_ENOTFOUND);
    ASSERT_STR(zarr_errmsg(), "sentinel"); /* a missing item formats no message */
    ASSERT_EQ_INT(reqs[0].result, ZARR_OK);
    ASSERT_EQ_INT(reqs[1].result, ZARR_ENOTFOUND);
    ASSERT_EQ_INT(reqs[2].result, ZARR_OK);
    ASSERT(reqs[0].total == 4 && reqs[1].total == UINT64_MAX && reqs[2].total == 3);
    ASSERT(outs[0].size == 4 && memcmp(outs[0].data, "zero", 4) == 0);
    ASSERT(outs[2].size == 3 && memcmp(outs[2].data, "two", 3) == 0);
    for (int i = 0; i < 3; i++)
        zarr_buf_free(&outs[i]);
    zarr_store_close(s);
    return 0;
}

/* A directory store's batched read tells each value's modification time, from the fstat of its read
 * (zarr_store_req.mtime): what zarr_store_mtime would say, without a stat of its own (the connector's
 * H5Oget_info of a node it read asks no more: tests/scripts/scale_meta.sh). zarr_node_load_timed
 * passes it on for a v3 node's zarr.json, zarr_array_open_format_timed for a v2 array's .zarray. */
static int
test_dir_batch_mtime(void)
{
    const char      *dir = test_tmpdir("store-batch-mtime");
    char             path[4200];
    zarr_store      *s;
    zarr_buf         out = ZARR_BUF_INIT, out2 = ZARR_BUF_INIT;
    zarr_store_req   r[2];
    struct timespec  ts[2] = {{1500000000, 0}, {1500000000, 0}};
    int64_t          t = -1, lt = -1;
    zarr_node_type   type;
    int              fmt;
    zarr_group_meta *g     = NULL;
    zarr_array      *a     = NULL;
    const char      *doc   = "{\"zarr_format\": 3, \"node_type\": \"group\", \"attributes\": {}}";
    const char      *v2doc = "{\"zarr_format\": 2, \"shape\": [4], \"chunks\": [4], \"dtype\": \"<i4\", "
                             "\"compressor\": null, \"fill_value\": 0, \"order\": \"C\", \"filters\": null}";

    ASSERT(dir);
    snprintf(path, sizeof path, "%s/a.zarr", dir);
    ASSERT_OK(zarr_store_open_dir(path, ZARR_STORE_CREATE, &s));
    ASSERT_OK(zarr_store_set(s, "g/zarr.json", doc, strlen(doc)));
    snprintf(path, sizeof path, "%s/a.zarr/g/zarr.json", dir);
    ASSERT(utimensat(AT_FDCWD, path, ts, 0) == 0); /* a time no clock gives now */
    r[0] = (zarr_store_req){.key = "g/zarr.json", .len = UINT64_MAX, .out = &out};
    r[1] = (zarr_store_req){.key = "g/nope", .len = UINT64_MAX, .out = &out2, .mtime = 7};
    ASSERT_ERR(zarr_store_get_many(s, 2, r), ZARR_ENOTFOUND);
    ASSERT_EQ_INT(r[0].result, ZARR_OK);
    ASSERT(out.size == strlen(doc));
    ASSERT(r[0].mtime == 1500000000);
    ASSERT(r[1].mtime == 7); /* a miss leaves it as the caller set it */
    ASSERT_OK(zarr_store_mtime(s, "g/zarr.json", &t));
    ASSERT(t == r[0].mtime);
    /* a range read learns it too */
    r[0] = (zarr_store_req){.key = "g/zarr.json", .off = 1, .len = 4, .out = &out};
    ASSERT_OK(zarr_store_get_many(s, 1, r));
    ASSERT(r[0].mtime == 1500000000 && out.size == 4);
    /* the node load passes it on; a node without a zarr.json of its own: 0 (not known) */
    ASSERT_OK(zarr_node_load_timed(s, "g", 3, &type, &fmt, &g, &a, &lt));
    ASSERT(type == ZARR_NODE_GROUP && fmt == 3 && g && !a);
    ASSERT(lt == 1500000000);
    zarr_group_meta_free(g);
    g = NULL;
    ASSERT_OK(zarr_node_load_timed(s, "absent", 3, &type, &fmt, &g, &a, &lt));
    ASSERT(type == ZARR_NODE_NONE && lt == 0);
    /* a v2 array's open gives its .zarray's time */
    ASSERT_OK(zarr_store_set(s, "v/.zarray", v2doc, strlen(v2doc)));
    snprintf(path, sizeof path, "%s/a.zarr/v/.zarray", dir);
    ASSERT(utimensat(AT_FDCWD, path, ts, 0) == 0);
    ASSERT_OK(zarr_array_open_format_timed(s, "v", 2, &a, &lt));
    ASSERT(a && lt == 1500000000);
    zarr_array_close(a);
    zarr_buf_free(&out);
    zarr_buf_free(&out2);
    zarr_store_close(s);
    return 0;
}

static int
test_zip(void)
{
    const char *dir = test_tmpdir("store-zip");
    char        path[4200];
    zarr_store *s;
    ASSERT(dir);
    snprintf(path, sizeof path, "%s/a.zip", dir);
    ASSERT_ERR(zarr_store_open_zip(path, ZARR_STORE_RDONLY, &s), ZARR_ENOTFOUND);
    ASSERT_OK(zarr_store_open(path, ZARR_STORE_CREATE, &s));
    ASSERT_STR(s->ops->name, "zip");
    if (check_semantics(s))
        return 1;
    ASSERT_OK(zarr_store_set(s, "zarr.json", "{\"zarr_format\":3}", 17));
    ASSERT_OK(zarr_store_set(s, "t/c/0", "0123456789", 10));
    ASSERT_OK(zarr_store_flush(s));
    ASSERT(get_str(s, "t/c/0", "0123456789") == 0);
    ASSERT_OK(zarr_store_set(s, "t/c/1", "after flush", 11));
    zarr_store_close(s); /* writes the archive */
    ASSERT_OK(zarr_store_open(path, ZARR_STORE_RDONLY, &s));
    ASSERT(s->readonly);
    ASSERT(get_str(s, "zarr.json", "{\"zarr_format\":3}") == 0);
    ASSERT(get_str(s, "t/c/1", "after flush") == 0);
    zarr_buf b = ZARR_BUF_INIT;
    ASSERT_OK(zarr_store_get_range(s, "t/c/0", 3, 4, &b));
    ASSERT(b.size == 4 && memcmp(b.data, "3456", 4) == 0);
    zarr_buf_free(&b);
    names v;
    memset(&v, 0, sizeof v);
    ASSERT_OK(zarr_store_list(s, "t/c", collect, &v));
    ASSERT_EQ_INT(v.count, 2);
    ASSERT_ERR(zarr_store_set(s, "x", "y", 1), ZARR_EREADONLY);
    zarr_store_close(s);
    return 0;
}

/* A chunk key that exists but is not a regular file (a directory, a fifo, a dangling symbolic link) is
 * an error naming the key, never a fill-valued chunk; reading a fifo never blocks. A chunk that is
 * simply absent still reads as the fill value. */
static int
test_dir_not_regular_chunks(void)
{
    const char      *dir = test_tmpdir("notreg");
    zarr_store      *s   = NULL;
    zarr_array      *a   = NULL;
    zarr_array_meta *m;
    uint64_t         shape[1] = {8}, chunks[1] = {2};
    int32_t          v[8], fill                = 42;
    char             key[256], path[512], target[600];
    zarr_region      r;
    uint64_t         st[1], ct[1] = {2};

    ASSERT(dir);
    ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
    ASSERT_OK(zarr_array_meta_new(3, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m));
    memcpy(m->fill, &fill, 4);
    m->fill_defined = true;
    ASSERT_OK(zarr_array_create(s, "a", m, false, &a));
    for (int i = 0; i < 8; i++)
        v[i] = i;
    zarr_region_box(1, (uint64_t[]){0}, shape, &r);
    ASSERT_OK(zarr_array_write(a, &r, v));
    ASSERT_OK(zarr_array_flush(a));
    /* chunk 1: a directory; chunk 2: a fifo; chunk 3: a dangling symbolic link */
    for (int c = 1; c <= 3; c++) {
        ASSERT_OK(zarr_chunk_key(zarr_array_meta_get(a), "a", (uint64_t[]){(uint64_t)c}, key, sizeof key));
        snprintf(path, sizeof path, "%s/%s", dir, key);
        ASSERT(unlink(path) == 0);
        if (c == 1)
            ASSERT(mkdir(path, 0755) == 0);
        else if (c == 2)
            ASSERT(mkfifo(path, 0644) == 0);
        else {
            snprintf(target, sizeof target, "%s/nowhere", dir);
            ASSERT(symlink(target, path) == 0);
        }
    }
    zarr_array_close(a);
    a = NULL;
    ASSERT_OK(zarr_array_open(s, "a", &a));
    for (int c = 1; c <= 3; c++) {
        int rc;
        st[0] = 2 * (uint64_t)c;
        zarr_region_box(1, st, ct, &r);
        rc = zarr_array_read(a, &r, v);
        if (rc == ZARR_OK)
            FAILF("chunk %d (not a regular file) read as %d, %d", c, v[0], v[1]);
        ASSERT_OK(zarr_chunk_key(zarr_array_meta_get(a), "a", (uint64_t[]){(uint64_t)c}, key, sizeof key));
        if (!strstr(zarr_errmsg(), key))
            FAILF("chunk %d: the message does not name the key '%s': %s", c, key, zarr_errmsg());
        ASSERT(strstr(zarr_errmsg(), c == 1 ? "a directory" : c == 2 ? "a fifo" : "dangling symbolic link"));
    }
    /* chunk 0 still there, an absent chunk (deleted) reads as the fill */
    st[0] = 0;
    zarr_region_box(1, st, ct, &r);
    ASSERT_OK(zarr_array_read(a, &r, v));
    ASSERT(v[0] == 0 && v[1] == 1);
    zarr_array_close(a);
    zarr_store_close(s);
    return 0;
}

/* True when a library whose file name holds `needle` is mapped into this process. */
static bool
lib_mapped(const char *needle)
{
    char  line[4096];
    bool  hit = false;
    FILE *f   = fopen("/proc/self/maps", "r");
    if (!f)
        return false;
    while (!hit && fgets(line, sizeof line, f))
        hit = strstr(line, needle) != NULL;
    fclose(f);
    return hit;
}

/* libcurl and libxml2 are loaded by the first network store, never by local ones (netlib.c): a process
 * that only uses directory, memory and zip stores maps neither. */
static int
test_network_libs_on_demand(void)
{
    const char *dir = test_tmpdir("netlib");
    zarr_store *s   = NULL;
    zarr_buf    b   = ZARR_BUF_INIT;
    char        path[4096];

    if (!lib_mapped("libc.so") && !lib_mapped("libc-")) {
        printf("  skipped: /proc/self/maps does not list this process's libraries\n");
        return TEST_SKIP;
    }
    ASSERT(dir);
    ASSERT(!lib_mapped("libcurl") && !lib_mapped("libxml2"));
    snprintf(path, sizeof path, "%s/a.zarr", dir);
    ASSERT_OK(zarr_store_open(path, ZARR_STORE_RDWR | ZARR_STORE_CREATE, &s));
    ASSERT_OK(zarr_store_set(s, "k", "v", 1));
    ASSERT_OK(zarr_store_get(s, "k", &b));
    zarr_store_close(s);
    s = NULL;
    ASSERT_OK(zarr_store_open("memory://netlib", ZARR_STORE_RDWR | ZARR_STORE_CREATE, &s));
    zarr_store_close(s);
    s = NULL;
    ASSERT(!lib_mapped("libcurl") && !lib_mapped("libxml2"));
    /* an HTTP store (nothing listens on port 9; open may fail or not): libcurl is loaded now */
    setenv("H5ZARR_HTTP_RETRIES", "0", 1);
    (void)zarr_store_open("http://127.0.0.1:9/a.zarr", ZARR_STORE_RDONLY, &s);
    zarr_store_close(s);
    ASSERT(lib_mapped("libcurl"));
    zarr_buf_free(&b);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(mem_semantics),
    TEST_ENTRY(dir_semantics),
    TEST_ENTRY(dir_fresh_folders),
    TEST_ENTRY(concurrent_sets),
    TEST_ENTRY(open_url),
    TEST_ENTRY(batch),
    TEST_ENTRY(dir_batch_mtime),
    TEST_ENTRY(zip),
    TEST_ENTRY(dir_atomic_paths),
    TEST_ENTRY(dir_replace_first),
    TEST_ENTRY(dir_replace_exchange),
    TEST_ENTRY(dir_not_regular_chunks),
    TEST_ENTRY(network_libs_on_demand),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
