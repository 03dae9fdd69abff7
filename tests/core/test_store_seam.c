/*
 * test_store_seam.c: the store interface as one seam (zarr.h "Stores"): the optional ops (size,
 * get_into, list_keys, get_many with ranges and suffixes, remove_root) on the directory, memory and zip
 * stores and through the generic fallbacks of a store that has only the required ops; the missing-key
 * contract (ops return a bare ZARR_ENOTFOUND, the public wrappers add the message); the URL-scheme
 * registry and its built-in schemes (ZARR__STORE_SCHEMES: each one opens and refuses as it should);
 * forwarding stores; the counting store; zarr_array_stored_bytes measuring without reading; values
 * written in pieces (zarr_store_writer_*) on every store kind and through the generic form.
 */
#include "runner.h"

#include "store_impl.h"
#include "h5zarr/zarr.h"
#include "h5zarr/zarr_store_count.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a store with the required ops only: every optional one takes the generic path ---------------- */

static const zarr_store_ops bare_ops = {
    .name       = "bare",
    .get        = zarr_store_fwd_get,
    .get_range  = zarr_store_fwd_get_range,
    .set        = zarr_store_fwd_set,
    .del        = zarr_store_fwd_del,
    .del_prefix = zarr_store_fwd_del_prefix,
    .list       = zarr_store_fwd_list,
    .exists     = zarr_store_fwd_exists,
    .destroy    = zarr_store_fwd_destroy,
};

/* A bare store over a new memory store; NULL on failure. */
static zarr_store *
bare_new(void)
{
    zarr_store     *inner = NULL;
    zarr_store_fwd *f     = calloc(1, sizeof *f);
    if (!f || zarr_store_new_mem(&inner) != ZARR_OK || zarr_store_fwd_init(f, &bare_ops, inner) != ZARR_OK) {
        free(f);
        return NULL;
    }
    return &f->base;
}

/* ---- the optional ops, on any store ------------------------------------------------------------------ */

typedef struct keyset {
    char     key[32][64];
    uint64_t size[32];
    int      n;
} keyset;

static int
keyset_add(const char *key, uint64_t size, void *ud)
{
    keyset *k = ud;
    if (k->n < 32) {
        snprintf(k->key[k->n], sizeof k->key[0], "%s", key);
        k->size[k->n++] = size;
    }
    return 0;
}

/* Size of `key` in `k`, or -1. */
static long long
keyset_size(const keyset *k, const char *key)
{
    for (int i = 0; i < k->n; i++)
        if (!strcmp(k->key[i], key))
            return (long long)k->size[i];
    return -1;
}

static int
stop_cb(const char *key, uint64_t size, void *ud)
{
    (void)key, (void)size;
    (*(int *)ud)++;
    return 7;
}

/* Fills the store used by check_ops. */
static int
fill(zarr_store *s)
{
    ASSERT_OK(zarr_store_set(s, "a/x", "0123456789", 10));
    ASSERT_OK(zarr_store_set(s, "a/b/y", "hello", 5));
    ASSERT_OK(zarr_store_set(s, "a/b/c/z", "", 0));
    ASSERT_OK(zarr_store_set(s, "top", "t", 1));
    ASSERT_OK(zarr_store_set(s, "ab/not-below-a", "nope", 4));
    return 0;
}

/* size, get_into, list_keys and get_many on a store holding fill()'s keys. */
static int
check_ops(zarr_store *s, const char *what)
{
    uint64_t       size = 0;
    char           into[16];
    keyset         ks;
    int            calls = 0;
    zarr_buf       b[8];
    zarr_store_req r[8];

    printf("  %s\n", what);
    /* size */
    ASSERT_OK(zarr_store_size(s, "a/x", &size));
    ASSERT_EQ_INT(size, 10);
    ASSERT_OK(zarr_store_size(s, "a/b/c/z", &size));
    ASSERT_EQ_INT(size, 0);
    ASSERT_ERR(zarr_store_size(s, "a/none", &size), ZARR_ENOTFOUND);
    ASSERT(strstr(zarr_errmsg(), "a/none")); /* the wrapper names the key */
    ASSERT_ERR(zarr_store_size(s, "../x", &size), ZARR_EINVAL);
    /* the op itself (through the internal entry: keys valid) leaves the message alone on a miss */
    zarr_error(ZARR_EIO, "sentinel");
    ASSERT_ERR(zarr__store_op_size(s, "a/none", &size), ZARR_ENOTFOUND);
    ASSERT_STR(zarr_errmsg(), "sentinel");
    ASSERT_ERR(s->ops->get(s, "a/none", &(zarr_buf)ZARR_BUF_INIT), ZARR_ENOTFOUND);
    ASSERT_ERR(s->ops->get_range(s, "a/none", 0, 1, &(zarr_buf)ZARR_BUF_INIT), ZARR_ENOTFOUND);
    ASSERT_ERR(s->ops->exists(s, "a/none"), ZARR_ENOTFOUND);
    ASSERT_STR(zarr_errmsg(), "sentinel");
    ASSERT_ERR(zarr_store_get(s, "a/none", &(zarr_buf)ZARR_BUF_INIT), ZARR_ENOTFOUND);
    ASSERT(strstr(zarr_errmsg(), "no key 'a/none'"));

    /* get_into */
    memset(into, '#', sizeof into);
    ASSERT_OK(zarr__store_get_into(s, "a/x", into, 10));
    ASSERT(memcmp(into, "0123456789", 10) == 0 && into[10] == '#');
    ASSERT_OK(zarr__store_get_into(s, "a/b/c/z", into, 0));
    ASSERT_ERR(zarr__store_get_into(s, "a/x", into, 9), ZARR_ECODEC);
    ASSERT(strstr(zarr_errmsg(), "10 bytes") && strstr(zarr_errmsg(), "expected 9"));
    ASSERT_ERR(zarr__store_get_into(s, "a/x", into, 11), ZARR_ECODEC);
    zarr_error(ZARR_EIO, "sentinel");
    ASSERT_ERR(zarr__store_get_into(s, "a/none", into, 10), ZARR_ENOTFOUND);
    ASSERT_STR(zarr_errmsg(), "sentinel");

    /* list_keys: every value below the prefix, recursively, with its size; not "ab/..." for "a" */
    memset(&ks, 0, sizeof ks);
    ASSERT_OK(zarr_store_list_keys(s, "a", keyset_add, &ks));
    ASSERT_EQ_INT(ks.n, 3);
    ASSERT_EQ_INT(keyset_size(&ks, "a/x"), 10);
    ASSERT_EQ_INT(keyset_size(&ks, "a/b/y"), 5);
    ASSERT_EQ_INT(keyset_size(&ks, "a/b/c/z"), 0);
    memset(&ks, 0, sizeof ks);
    ASSERT_OK(zarr_store_list_keys(s, "", keyset_add, &ks));
    ASSERT_EQ_INT(ks.n, 5);
    ASSERT_EQ_INT(keyset_size(&ks, "top"), 1);
    ASSERT_EQ_INT(keyset_size(&ks, "ab/not-below-a"), 4);
    memset(&ks, 0, sizeof ks);
    ASSERT_OK(zarr_store_list_keys(s, "a/b/c", keyset_add, &ks));
    ASSERT(ks.n == 1 && !strcmp(ks.key[0], "a/b/c/z"));
    memset(&ks, 0, sizeof ks);
    ASSERT_OK(zarr_store_list_keys(s, "nothing/here", keyset_add, &ks));
    ASSERT_EQ_INT(ks.n, 0);
    ASSERT_OK(zarr_store_list_keys(s, "top", keyset_add, &ks)); /* a value, not a prefix: nothing below */
    ASSERT_EQ_INT(ks.n, 0);
    ASSERT_EQ_INT(zarr_store_list_keys(s, "a", stop_cb, &calls), 7); /* the callback's stop value */
    ASSERT_EQ_INT(calls, 1);
    ASSERT_ERR(zarr_store_list_keys(s, "/a", keyset_add, &ks), ZARR_EINVAL);

    /* get_many: whole, range, to-the-end, suffix shorter and longer than the value, missing, past the
     * end, an empty value */
    for (int i = 0; i < 8; i++)
        b[i] = (zarr_buf)ZARR_BUF_INIT;
    r[0] = (zarr_store_req){.key = "a/x", .len = UINT64_MAX, .out = &b[0]};
    r[1] = (zarr_store_req){.key = "a/x", .off = 2, .len = 3, .out = &b[1]};
    r[2] = (zarr_store_req){.key = "a/x", .off = 7, .len = UINT64_MAX, .out = &b[2]};
    r[3] = (zarr_store_req){.key = "a/x", .len = 4, .suffix = true, .out = &b[3]};
    r[4] = (zarr_store_req){.key = "a/b/y", .len = 99, .suffix = true, .out = &b[4]};
    r[5] = (zarr_store_req){.key = "a/none", .len = UINT64_MAX, .out = &b[5]};
    r[6] = (zarr_store_req){.key = "a/b/y", .off = 3, .len = 3, .out = &b[6]};
    r[7] = (zarr_store_req){.key = "a/b/c/z", .len = UINT64_MAX, .out = &b[7]};
    zarr_buf_append(&b[5], "stale", 5);                       /* reset first */
    ASSERT_ERR(zarr_store_get_many(s, 8, r), ZARR_ENOTFOUND); /* the first non-OK item: r[5] */
    ASSERT_EQ_INT(r[0].result, ZARR_OK);
    ASSERT(b[0].size == 10 && !memcmp(b[0].data, "0123456789", 10) && r[0].total == 10);
    ASSERT_EQ_INT(r[1].result, ZARR_OK);
    ASSERT(b[1].size == 3 && !memcmp(b[1].data, "234", 3));
    ASSERT(r[1].total == 10 || r[1].total == UINT64_MAX); /* known to some stores only */
    ASSERT_EQ_INT(r[2].result, ZARR_OK);
    ASSERT(b[2].size == 3 && !memcmp(b[2].data, "789", 3) && r[2].total == 10);
    ASSERT_EQ_INT(r[3].result, ZARR_OK);
    ASSERT(b[3].size == 4 && !memcmp(b[3].data, "6789", 4) && r[3].total == 10);
    ASSERT_EQ_INT(r[4].result, ZARR_OK); /* a suffix longer than the value: all of it */
    ASSERT(b[4].size == 5 && !memcmp(b[4].data, "hello", 5) && r[4].total == 5);
    ASSERT_EQ_INT(r[5].result, ZARR_ENOTFOUND);
    ASSERT(b[5].size == 0 && r[5].total == UINT64_MAX);
    ASSERT_EQ_INT(r[6].result, ZARR_ECODEC); /* 3+3 of a 5-byte value */
    ASSERT_EQ_INT(r[7].result, ZARR_OK);
    ASSERT(b[7].size == 0 && r[7].total == 0);
    /* all OK: ZARR_OK; the missing item is the first non-OK one; a range error comes first here */
    ASSERT_OK(zarr_store_get_many(s, 5, r));
    ASSERT_OK(zarr_store_get_many(s, 0, NULL));
    ASSERT_ERR(zarr_store_get_many(s, 2, &r[6]), ZARR_ECODEC);
    ASSERT(strstr(zarr_errmsg(), "a/b/y"));
    /* an invalid key fails the whole call, every item marked */
    r[1].key = "a//x";
    ASSERT_ERR(zarr_store_get_many(s, 3, r), ZARR_EINVAL);
    ASSERT(r[0].result == ZARR_EINVAL && r[1].result == ZARR_EINVAL && r[2].result == ZARR_EINVAL);
    for (int i = 0; i < 8; i++)
        zarr_buf_free(&b[i]);
    return 0;
}

static int
test_ops_mem(void)
{
    zarr_store *s;
    ASSERT_OK(zarr_store_new_mem(&s));
    ASSERT(!s->prefers_batches);
    if (fill(s) || check_ops(s, "memory store"))
        return 1;
    keyset ks;
    memset(&ks, 0, sizeof ks);
    ASSERT_OK(zarr_store_set(s, "a/b", "both", 4)); /* a value and a prefix */
    ASSERT_OK(zarr_store_list_keys(s, "a", keyset_add, &ks));
    ASSERT_EQ_INT(ks.n, 4);
    ASSERT_EQ_INT(keyset_size(&ks, "a/b"), 4);
    zarr_store_close(s);
    return 0;
}

static int
test_ops_dir(void)
{
    const char *dir = test_tmpdir("seam-dir");
    zarr_store *s;
    char        path[4200];
    uint64_t    size;
    ASSERT(dir);
    ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_CREATE, &s));
    ASSERT(!s->prefers_batches);
    if (fill(s) || check_ops(s, "directory store"))
        return 1;
    /* a directory at a key is no value: size says so like a read does; list_keys skips temporaries
     * and files whose names no key can have */
    ASSERT_ERR(zarr_store_size(s, "a/b", &size), ZARR_EIO);
    ASSERT(strstr(zarr_errmsg(), "a directory"));
    snprintf(path, sizeof path, "%s/a/.h5zarr-tmp.1.2", dir);
    FILE *f = fopen(path, "w");
    ASSERT(f && fclose(f) == 0);
    snprintf(path, sizeof path, "%s/a/back\\slash", dir);
    ASSERT((f = fopen(path, "w")) && fclose(f) == 0);
    keyset ks;
    memset(&ks, 0, sizeof ks);
    ASSERT_OK(zarr_store_list_keys(s, "a", keyset_add, &ks));
    ASSERT_EQ_INT(ks.n, 3);
    zarr_store_close(s);
    return 0;
}

static int
test_ops_zip(void)
{
    const char *dir = test_tmpdir("seam-zip");
    char        path[4200];
    zarr_store *s;
    ASSERT(dir);
    snprintf(path, sizeof path, "%s/s.zip", dir);
    ASSERT_OK(zarr_store_open(path, ZARR_STORE_CREATE, &s));
    ASSERT(!s->prefers_batches);
    if (fill(s) || check_ops(s, "zip store, read-write"))
        return 1;
    zarr_store_close(s);
    ASSERT_OK(zarr_store_open(path, ZARR_STORE_RDONLY, &s)); /* entries read from the archive */
    if (check_ops(s, "zip store, read-only"))
        return 1;
    zarr_store_close(s);
    return 0;
}

static int
test_ops_fallbacks(void)
{
    zarr_store *s = bare_new();
    ASSERT(s);
    ASSERT(!s->ops->size && !s->ops->get_into && !s->ops->list_keys && !s->ops->get_many);
    if (fill(s) || check_ops(s, "required ops only (generic size, get_into, list_keys, get_many)"))
        return 1;
    /* a value whose key is also a prefix of others (flat key spaces allow it): listed as both */
    keyset ks;
    memset(&ks, 0, sizeof ks);
    ASSERT_OK(zarr_store_set(s, "a/b", "both", 4));
    ASSERT_OK(zarr_store_list_keys(s, "a", keyset_add, &ks));
    ASSERT_EQ_INT(ks.n, 4);
    ASSERT_EQ_INT(keyset_size(&ks, "a/b"), 4);
    ASSERT_EQ_INT(keyset_size(&ks, "a/b/y"), 5);
    /* mtime and rename are optional too */
    int64_t sec;
    ASSERT_ERR(zarr_store_mtime(s, "top", &sec), ZARR_EUNSUPPORTED);
    ASSERT_ERR(zarr_store_rename(s, "top", "top2"), ZARR_EUNSUPPORTED);
    zarr_store_close(s);
    return 0;
}

/* ---- removing a whole store ---------------------------------------------------------------------------- */

static int
test_remove(void)
{
    const char *dir = test_tmpdir("seam-remove");
    char        root[4200], zip[4200];
    struct stat st;
    zarr_store *s;
    uint64_t    size;

    ASSERT(dir);
    snprintf(root, sizeof root, "%s/store.zarr", dir);
    ASSERT_OK(zarr_store_open(root, ZARR_STORE_CREATE, &s));
    if (fill(s))
        return 1;
    ASSERT_OK(zarr_store_remove(s));
    zarr_store_close(s);
    ASSERT(stat(root, &st) != 0); /* the root folder went too */
    ASSERT_OK(zarr_store_open(root, ZARR_STORE_CREATE, &s));
    zarr_store_close(s);
    ASSERT_OK(zarr_store_open(root, ZARR_STORE_RDONLY, &s));
    ASSERT_ERR(zarr_store_remove(s), ZARR_EREADONLY);
    zarr_store_close(s);
    ASSERT(stat(root, &st) == 0);

    snprintf(zip, sizeof zip, "%s/store.zip", dir);
    ASSERT_OK(zarr_store_open(zip, ZARR_STORE_CREATE, &s));
    if (fill(s))
        return 1;
    ASSERT_OK(zarr_store_flush(s));
    ASSERT(stat(zip, &st) == 0);
    ASSERT_OK(zarr_store_remove(s));
    zarr_store_close(s); /* writes nothing */
    ASSERT(stat(zip, &st) != 0);

    ASSERT_OK(zarr_store_new_mem(&s)); /* no container: just the keys */
    if (fill(s))
        return 1;
    ASSERT_OK(zarr_store_remove(s));
    ASSERT_ERR(zarr_store_size(s, "top", &size), ZARR_ENOTFOUND);
    zarr_store_close(s);
    return 0;
}

/* ---- the URL-scheme registry ----------------------------------------------------------------------------
 */

static char last_url[256];
static int  last_flags = -1;

static int
open_test_scheme(const char *url, int flags, zarr_store **out)
{
    int rc;
    snprintf(last_url, sizeof last_url, "%s", url);
    last_flags = flags;
    if (strstr(url, "fail"))
        return zarr_error(ZARR_EIO, "test scheme refuses '%s'", url);
    if ((rc = zarr_store_new_mem(out)) != ZARR_OK)
        return rc;
    free((*out)->url);
    (*out)->url             = strdup(url);
    (*out)->prefers_batches = true; /* as an object store would */
    return ZARR_OK;
}

static int
open_nothing(const char *url, int flags, zarr_store **out)
{
    (void)url, (void)flags, (void)out;
    return ZARR_OK; /* a buggy opener: success without a store */
}

static int
test_registry(void)
{
    zarr_store *s = NULL;
    const char *dir;
    char        url[4300];

    ASSERT(zarr_store_is_url("s3://bucket/x") && zarr_store_is_url("file:///a") &&
           zarr_store_is_url("x+y.z-1://"));
    ASSERT(!zarr_store_is_url("/abs/path") && !zarr_store_is_url("rel/a://b") &&
           !zarr_store_is_url("1x://a") && !zarr_store_is_url("noscheme:/x") && !zarr_store_is_url("") &&
           !zarr_store_is_url(NULL));
    /* the names a regular file opens as a store under (reference JSON, zip), as the connector's routing asks
     */
    ASSERT(zarr_store_path_is_file_store("refs.json") && zarr_store_path_is_file_store("/a/B.JSON") &&
           zarr_store_path_is_file_store("x.zip") && zarr_store_path_is_file_store("x.nc.Zip"));
    ASSERT(!zarr_store_path_is_file_store("x.nc") && !zarr_store_path_is_file_store("json") &&
           !zarr_store_path_is_file_store("x.zarr") && !zarr_store_path_is_file_store("a.json/x") &&
           !zarr_store_path_is_file_store(""));
    ASSERT(!zarr_store_path_is_file_store(NULL));

    /* unknown: the message names the scheme */
    ASSERT_ERR(zarr_store_open("seamtest://bucket/a.zarr", ZARR_STORE_RDONLY, &s), ZARR_EUNSUPPORTED);
    ASSERT(strstr(zarr_errmsg(), "'seamtest'"));
    ASSERT(s == NULL);

    ASSERT_OK(zarr_store_register_scheme("seamtest", open_test_scheme));
    ASSERT_OK(zarr_store_open("seamtest://bucket/a.zarr", ZARR_STORE_RDWR, &s));
    ASSERT_STR(last_url, "seamtest://bucket/a.zarr");
    ASSERT_EQ_INT(last_flags, ZARR_STORE_RDWR);
    ASSERT_STR(s->url, "seamtest://bucket/a.zarr");
    ASSERT(s->prefers_batches);
    ASSERT_OK(zarr_store_set(s, "k", "v", 1));
    zarr_store_close(s);
    s = NULL;
    /* schemes match without regard to case; the opener's errors come through */
    ASSERT_OK(zarr_store_open("SeamTest://other", ZARR_STORE_RDONLY, &s));
    ASSERT_STR(last_url, "SeamTest://other");
    zarr_store_close(s);
    s = NULL;
    ASSERT_ERR(zarr_store_open("seamtest://fail", ZARR_STORE_RDONLY, &s), ZARR_EIO);
    ASSERT(strstr(zarr_errmsg(), "test scheme refuses"));
    /* registering again replaces; NULL removes */
    ASSERT_OK(zarr_store_register_scheme("SEAMTEST", open_nothing));
    ASSERT_ERR(zarr_store_open("seamtest://x", ZARR_STORE_RDONLY, &s), ZARR_EIO);
    ASSERT(strstr(zarr_errmsg(), "returned no store"));
    ASSERT_OK(zarr_store_register_scheme("seamtest", NULL));
    ASSERT_ERR(zarr_store_open("seamtest://x", ZARR_STORE_RDONLY, &s), ZARR_EUNSUPPORTED);
    ASSERT_OK(zarr_store_register_scheme("never-registered", NULL)); /* removing nothing is fine */
    /* malformed schemes */
    ASSERT_ERR(zarr_store_register_scheme("", open_test_scheme), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_register_scheme(NULL, open_test_scheme), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_register_scheme("9p", open_test_scheme), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_register_scheme("a b", open_test_scheme), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_register_scheme("s3://", open_test_scheme), ZARR_EINVAL);
    ASSERT_ERR(zarr_store_register_scheme("abcdefghijklmnopqrstuvwxyz0123456", open_test_scheme),
               ZARR_EINVAL);

    /* the built-in "file" can be replaced and comes back when the registration goes */
    ASSERT((dir = test_tmpdir("seam-registry")));
    snprintf(url, sizeof url, "file://%s", dir);
    ASSERT_OK(zarr_store_register_scheme("file", open_test_scheme));
    ASSERT_OK(zarr_store_open(url, ZARR_STORE_RDONLY, &s));
    ASSERT_STR(s->ops->name, "mem");
    zarr_store_close(s);
    ASSERT_OK(zarr_store_register_scheme("file", NULL));
    ASSERT_OK(zarr_store_open(url, ZARR_STORE_RDONLY, &s));
    ASSERT_STR(s->ops->name, "dir");
    zarr_store_close(s);

    /* memory://NAME: made by CREATE, shared after; unknown without CREATE */
    ASSERT_ERR(zarr_store_open("memory://seam-nobody", ZARR_STORE_RDWR, &s), ZARR_ENOTFOUND);
    ASSERT(strstr(zarr_errmsg(), "seam-nobody"));
    ASSERT_OK(zarr_store_open("memory://seam-one", ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
    ASSERT_OK(zarr_store_set(s, "k", "v", 1));
    zarr_store_close(s);
    ASSERT_OK(zarr_store_open("memory://seam-one", ZARR_STORE_RDONLY, &s));
    ASSERT(zarr_store_exists(s, "k") == ZARR_OK);
    zarr_store_close(s);
    return 0;
}

/* Registering and removing schemes while other threads open stores: every open of a scheme that stays
 * registered works. */
typedef struct reg_worker {
    int failures;
    int opens;
} reg_worker;

/* An opener that touches no shared state (several threads call it). */
static int
open_plain_mem(const char *url, int flags, zarr_store **out)
{
    (void)url, (void)flags;
    return zarr_store_new_mem(out);
}

static void *
reg_open_loop(void *arg)
{
    reg_worker *w = arg;
    for (int i = 0; i < 2000; i++) {
        zarr_store *s = NULL;
        if (zarr_store_open("seamstable://x", ZARR_STORE_RDONLY, &s) != ZARR_OK || !s)
            w->failures++;
        else
            w->opens++;
        zarr_store_close(s);
    }
    return NULL;
}

static int
test_registry_threads(void)
{
    pthread_t  th[2];
    reg_worker w[2] = {{0, 0}, {0, 0}};
    char       name[32];

    ASSERT_OK(zarr_store_register_scheme("seamstable", open_plain_mem));
    for (int i = 0; i < 2; i++)
        ASSERT(pthread_create(&th[i], NULL, reg_open_loop, &w[i]) == 0);
    for (int i = 0; i < 2000; i++) {
        snprintf(name, sizeof name, "seamchurn%d", i % 7);
        ASSERT_OK(zarr_store_register_scheme(name, open_plain_mem));
        ASSERT_OK(zarr_store_register_scheme(name, NULL));
    }
    for (int i = 0; i < 2; i++)
        ASSERT(pthread_join(th[i], NULL) == 0);
    ASSERT_EQ_INT(w[0].failures + w[1].failures, 0);
    ASSERT_EQ_INT(w[0].opens + w[1].opens, 4000);
    ASSERT_OK(zarr_store_register_scheme("seamstable", NULL));
    return 0;
}

/* Every built-in scheme of ZARR__STORE_SCHEMES (store_impl.h) is known to zarr_store_open, opens what
 * it should as the store kind it should, and refuses what it should with its own opener's error (not
 * "no store is registered"); its `kind` holds (a REGISTERED scheme is replaced and removed like a
 * caller's, a FALLBACK one comes back when a registration hiding it goes). A line added to the list
 * without a line in `expect` below fails here, as does a line here for a scheme not in the list. No
 * network: the HTTP store makes no request at open, and the S3 case is a refused bucket name. */
typedef struct scheme_expect {
    const char *scheme;
    int         kind_of_scheme; /* ZARR__SCHEME_REGISTERED or ZARR__SCHEME_FALLBACK */
    const char *opens;          /* a URL the scheme opens read-only ("%s": the scratch directory), or NULL */
    const char *kind;           /* the opened store's ops->name */
    const char *refused;        /* a URL its opener refuses */
    int         rflags;         /* ... with these flags */
    int         rcode;          /* ... with this code */
    const char *rmessage;       /* ... and a message holding this */
} scheme_expect;

static const scheme_expect expect[] = {
    {"file", ZARR__SCHEME_FALLBACK, "file://%s", "dir", "file://relative/a.zarr", ZARR_STORE_RDONLY,
     ZARR_EINVAL, "absolute path"},
    {"memory", ZARR__SCHEME_FALLBACK, "memory://", "mem", "memory://seam-never-created", ZARR_STORE_RDONLY,
     ZARR_ENOTFOUND, "seam-never-created"},
    {"http", ZARR__SCHEME_REGISTERED, "http://127.0.0.1:9/a.zarr", "http", "http://127.0.0.1:9/a.zarr",
     ZARR_STORE_RDWR, ZARR_EREADONLY, "read-only"},
    {"https", ZARR__SCHEME_REGISTERED, "https://127.0.0.1:9/a.zarr", "http",
     "https://user@127.0.0.1:9/a.zarr", ZARR_STORE_RDONLY, ZARR_EINVAL, "credentials"},
    {"s3", ZARR__SCHEME_REGISTERED, NULL, NULL, "s3://no_such!bucket/a.zarr", ZARR_STORE_RDONLY, ZARR_EINVAL,
     "not a bucket name"},
    {"reference", ZARR__SCHEME_REGISTERED, NULL, NULL, "reference://seam-refs.json", ZARR_STORE_RDWR,
     ZARR_EREADONLY, "read-only"},
};

static int
test_builtin_schemes(void)
{
    static const struct {
        const char *name;
        int (*open)(const char *, int, zarr_store **);
        int kind;
    } list[] = {
#define ROW(name, open, kind) {name, open, kind},
        ZARR__STORE_SCHEMES(ROW)
#undef ROW
    };
    const size_t nlist = sizeof list / sizeof list[0], nexp = sizeof expect / sizeof expect[0];
    const char  *dir = test_tmpdir("seam-schemes");
    char         url[4300];
    zarr_store  *s = NULL;

    ASSERT(dir);
    ASSERT_EQ_INT((int)nlist, (int)nexp); /* one expectation a scheme, each for a listed scheme */
    for (size_t i = 0; i < nlist; i++) {
        const scheme_expect *e = NULL;
        for (size_t k = 0; k < nexp; k++)
            if (strcmp(expect[k].scheme, list[i].name) == 0)
                e = &expect[k];
        if (!e) {
            fprintf(stderr, "built-in scheme '%s' has no line in test_builtin_schemes' expect[]\n",
                    list[i].name);
            return 1;
        }
        ASSERT_EQ_INT(list[i].kind, e->kind_of_scheme);
        if (e->opens) {
            snprintf(url, sizeof url, e->opens, dir);
            ASSERT_OK(zarr_store_open(url, ZARR_STORE_RDONLY, &s));
            ASSERT_STR(s->ops->name, e->kind);
            zarr_store_close(s);
            s = NULL;
        }
        ASSERT_ERR(zarr_store_open(e->refused, e->rflags, &s), e->rcode);
        ASSERT(s == NULL);
        if (!strstr(zarr_errmsg(), e->rmessage) || strstr(zarr_errmsg(), "no store is registered")) {
            fprintf(stderr, "'%s' refused with '%s', expected '%s'\n", e->refused, zarr_errmsg(),
                    e->rmessage);
            return 1;
        }
        /* a caller's registration replaces the built-in; what removing it does depends on the kind */
        snprintf(url, sizeof url, "%s://seam-replaced", list[i].name);
        ASSERT_OK(zarr_store_register_scheme(list[i].name, open_test_scheme));
        ASSERT_OK(zarr_store_open(url, ZARR_STORE_RDONLY, &s));
        ASSERT_STR(s->ops->name, "mem");
        zarr_store_close(s);
        s = NULL;
        ASSERT_OK(zarr_store_register_scheme(list[i].name, NULL));
        if (list[i].kind == ZARR__SCHEME_REGISTERED) {
            ASSERT_ERR(zarr_store_open(url, ZARR_STORE_RDONLY, &s), ZARR_EUNSUPPORTED);
            ASSERT(strstr(zarr_errmsg(), "no store is registered"));
            ASSERT_OK(zarr_store_register_scheme(list[i].name, list[i].open)); /* as it was */
        }
        ASSERT_ERR(zarr_store_open(e->refused, e->rflags, &s), e->rcode); /* the built-in again */
        ASSERT(strstr(zarr_errmsg(), e->rmessage));
    }
    return 0;
}

/* ---- forwarding stores ----------------------------------------------------------------------------- */

/* A wrapper that changes one thing (keys upper-cased on the way in: "k" is stored as "K") and forwards
 * the rest. */
static int
upper_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    char k[64];
    snprintf(k, sizeof k, "%s", key);
    for (char *p = k; *p; p++)
        if (*p >= 'a' && *p <= 'z')
            *p = (char)(*p - 'a' + 'A');
    return zarr_store_fwd_set(s, k, data, n);
}

static int
test_forwarding(void)
{
    zarr_store     *inner, *s;
    zarr_store_fwd *f = calloc(1, sizeof *f);
    zarr_store_ops  ops;
    zarr_buf        b = ZARR_BUF_INIT;
    uint64_t        size;

    ASSERT(f);
    ASSERT_OK(zarr_store_new_mem(&inner));
    inner->no_consolidated = true;
    zarr_store_ref(inner); /* one reference for the wrapper (taken), one for this test */
    ASSERT_OK(zarr_store_fwd_init(f, &zarr_store_fwd_ops, inner));
    s = &f->base;
    ASSERT(f->inner == inner && s->refcount == 1 && s->no_consolidated && !s->readonly);
    ASSERT_STR(s->url, inner->url);
    if (fill(s) || check_ops(s, "transparent forwarding store"))
        return 1;
    /* it went to the inner store, and back */
    ASSERT_OK(zarr_store_size(inner, "a/x", &size));
    ASSERT_EQ_INT(size, 10);
    ASSERT_OK(zarr_store_rename(s, "top", "top2"));
    ASSERT(zarr_store_exists(inner, "top2") == ZARR_OK);
    ASSERT_OK(zarr_store_del_prefix(s, "a"));
    ASSERT(zarr_store_exists(inner, "a/x") == ZARR_ENOTFOUND);
    zarr_store_close(s); /* closes its reference to inner */
    ASSERT_EQ_INT(inner->refcount, 1);
    ASSERT(zarr_store_exists(inner, "top2") == ZARR_OK);

    /* a wrapper with one op of its own */
    ops      = zarr_store_fwd_ops;
    ops.name = "upper";
    ops.set  = upper_set;
    ASSERT((f = calloc(1, sizeof *f)));
    zarr_store_ref(inner);
    ASSERT_OK(zarr_store_fwd_init(f, &ops, inner));
    ASSERT_OK(zarr_store_set(&f->base, "low/key", "v", 1));
    ASSERT_OK(zarr_store_get(inner, "LOW/KEY", &b));
    ASSERT(b.size == 1 && b.data[0] == 'v');
    ASSERT_ERR(zarr_store_get(&f->base, "low/key", &b), ZARR_ENOTFOUND);
    zarr_store_close(&f->base);

    /* read-only inner: the wrapper is read-only too; NULL inner is refused */
    zarr_store *ro;
    const char *dir = test_tmpdir("seam-fwd");
    ASSERT(dir);
    ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_RDONLY, &ro));
    ASSERT((f = calloc(1, sizeof *f)));
    ASSERT_OK(zarr_store_fwd_init(f, &zarr_store_fwd_ops, ro));
    ASSERT(f->base.readonly);
    ASSERT_ERR(zarr_store_set(&f->base, "k", "v", 1), ZARR_EREADONLY);
    zarr_store_close(&f->base);
    zarr_store_fwd cf;
    ASSERT_ERR(zarr_store_fwd_init(&cf, &zarr_store_fwd_ops, NULL), ZARR_EINVAL);
    zarr_store_fwd_fini(NULL);
    zarr_buf_free(&b);
    zarr_store_close(inner);
    return 0;
}

/* ---- the counting store --------------------------------------------------------------------------- */

static int
count_list_cb(const char *name, bool is_dir, void *ud)
{
    (void)name, (void)is_dir, (void)ud;
    return 0;
}

static int
test_counting(void)
{
    zarr_store       *inner, *s;
    zarr_store_count *c;
    zarr_store_counts n;
    zarr_buf          b = ZARR_BUF_INIT, o[3] = {ZARR_BUF_INIT, ZARR_BUF_INIT, ZARR_BUF_INIT};
    uint64_t          size;
    char              into[4];
    keyset            ks;
    const char       *keys[2]  = {"m/0", "m/1"};
    const void       *data[2]  = {"ab", "cde"};
    size_t            sizes[2] = {2, 3};
    int               res[2];
    zarr_store_req    r[3];

    ASSERT_OK(zarr_store_new_mem(&inner));
    ASSERT_OK(zarr_store_count_new(inner, true, &c));
    s = zarr_store_count_store(c);
    ASSERT(s && s->prefers_batches && !inner->prefers_batches);
    zarr_store_count_read(c, &n);
    ASSERT(n.get == 0 && n.set == 0 && n.bytes_read == 0);

    ASSERT_OK(zarr_store_set(s, "k", "1234", 4));
    ASSERT_OK(zarr_store_set_many(s, 2, keys, data, sizes, res));
    ASSERT_OK(zarr_store_get(s, "k", &b));
    ASSERT_OK(zarr_store_get_range(s, "k", 1, 2, &b));
    ASSERT_ERR(zarr_store_get(s, "none", &b), ZARR_ENOTFOUND);
    ASSERT_OK(zarr__store_get_into(s, "k", into, 4));
    ASSERT_OK(zarr_store_size(s, "k", &size));
    r[0] = (zarr_store_req){.key = "m/0", .len = UINT64_MAX, .out = &o[0]};
    r[1] = (zarr_store_req){.key = "m/1", .len = 2, .suffix = true, .out = &o[1]};
    r[2] = (zarr_store_req){.key = "k", .off = 1, .len = 1, .out = &o[2]};
    ASSERT_OK(zarr_store_get_many(s, 3, r));
    ASSERT(o[1].size == 2 && !memcmp(o[1].data, "de", 2));
    ASSERT_OK(zarr_store_del(s, "m/0"));
    ASSERT_OK(zarr_store_list(s, "", count_list_cb, NULL));
    memset(&ks, 0, sizeof ks);
    ASSERT_OK(zarr_store_list_keys(s, "", keyset_add, &ks));
    ASSERT_EQ_INT(ks.n, 2);
    ASSERT(zarr_store_exists(s, "k") == ZARR_OK);
    ASSERT_OK(zarr_store_flush(s));

    zarr_store_count_read(c, &n);
    ASSERT_EQ_INT(n.set, 1);
    ASSERT_EQ_INT(n.set_many, 1);
    ASSERT_EQ_INT(n.set_many_items, 2);
    ASSERT_EQ_INT(n.get, 2); /* the miss counts too */
    ASSERT_EQ_INT(n.get_range, 1);
    ASSERT_EQ_INT(n.get_into, 1);
    ASSERT_EQ_INT(n.size, 1);
    ASSERT_EQ_INT(n.get_many, 1);
    ASSERT_EQ_INT(n.get_many_items, 3);
    ASSERT_EQ_INT(n.get_many_suffix, 1);
    ASSERT_EQ_INT(n.del, 1);
    ASSERT_EQ_INT(n.list, 1);
    ASSERT_EQ_INT(n.list_keys, 1);
    ASSERT_EQ_INT(n.exists, 1);
    ASSERT_EQ_INT(n.flush, 1);
    ASSERT_EQ_INT(n.bytes_written, 4 + 2 + 3);
    ASSERT_EQ_INT(n.bytes_read, 4 + 2 + 4 + (2 + 2 + 1));
    zarr_store_count_reset(c);
    zarr_store_count_read(c, &n);
    ASSERT(n.get == 0 && n.set_many_items == 0 && n.bytes_read == 0 && n.flush == 0);

    zarr_store_close(s);
    zarr_buf_free(&b);
    for (int i = 0; i < 3; i++)
        zarr_buf_free(&o[i]);
    ASSERT_ERR(zarr_store_count_new(NULL, false, &c), ZARR_EINVAL);
    return 0;
}

/* ---- stored bytes: measured, never read -------------------------------------------------------------- */

/* An int32 array of `n` chunks of 4 elements with chunks 0, 2, 4, ... written (every second one), on
 * `s`; returns the bytes the written chunks hold (uncompressed: 16 each). */
static int
stored_case(zarr_store *s, zarr_store_count *c, const char *path, uint64_t nchunks, const char *what)
{
    zarr_array       *a;
    zarr_array_meta  *m;
    uint64_t          shape[1] = {4 * nchunks}, chunks[1] = {4}, got = 0, positions = nchunks;
    int32_t           v[4] = {1, 2, 3, 4};
    zarr_region       r;
    zarr_store_counts n;

    printf("  %s, %llu chunk positions\n", what, (unsigned long long)nchunks);
    ASSERT_OK(zarr_array_meta_new(3, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m));
    ASSERT_OK(zarr_array_create(s, path, m, true, &a));
    for (uint64_t i = 0; i < nchunks; i += 2) {
        zarr_region_box(1, (uint64_t[]){4 * i}, (uint64_t[]){4}, &r);
        ASSERT_OK(zarr_array_write(a, &r, v));
    }
    ASSERT_OK(zarr_array_flush(a));
    ASSERT_OK(zarr_store_set(s, "unrelated/c/0", "xx", 2)); /* not the array's */
    zarr_store_count_reset(c);
    ASSERT_OK(zarr_array_stored_bytes(a, &got));
    zarr_store_count_read(c, &n);
    ASSERT_EQ_INT(got, 16 * ((nchunks + 1) / 2));
    if (n.get || n.get_range || n.get_into || n.get_many)
        FAILF("stored_bytes read chunks: %llu gets, %llu range gets, %llu get_into, %llu get_many",
              (unsigned long long)n.get, (unsigned long long)n.get_range, (unsigned long long)n.get_into,
              (unsigned long long)n.get_many);
    if (positions <= 64) {
        ASSERT_EQ_INT(n.size, positions); /* one size lookup per position */
        ASSERT_EQ_INT(n.list_keys, 0);
    }
    else {
        ASSERT_EQ_INT(n.list_keys, 1); /* one listing of the array's keys */
        ASSERT_EQ_INT(n.size, 0);
    }
    zarr_array_close(a);
    return 0;
}

static int
test_stored_bytes_reads_nothing(void)
{
    const char       *dir = test_tmpdir("seam-stored");
    zarr_store       *inner;
    zarr_store_count *c;

    ASSERT(dir);
    for (int kind = 0; kind < 3; kind++) {
        if (kind == 0)
            ASSERT_OK(zarr_store_new_mem(&inner));
        else if (kind == 1)
            ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &inner));
        else {
            zarr_store *bare = bare_new(); /* generic size (a get on the bare store, below the counter) */
            ASSERT(bare);
            inner = bare;
        }
        ASSERT_OK(zarr_store_count_new(inner, false, &c));
        const char *what = kind == 0 ? "memory store" : kind == 1 ? "directory store" : "required ops only";
        if (stored_case(zarr_store_count_store(c), c, "g/small", 9, what) ||
            stored_case(zarr_store_count_store(c), c, "g/large", 200, what) ||
            stored_case(zarr_store_count_store(c), c, "", 101, what))
            return 1;
        zarr_store_close(zarr_store_count_store(c));
    }
    return 0;
}

/* ---- values written in pieces (zarr_store_writer_*) ------------------------------------------------ */

typedef struct piece_worker {
    zarr_store_writer *w;
    int                first, rc;
} piece_worker;

/* Writes pieces first, first + 2, ...: 64 pieces of 4 KiB in all, each filled with its number. */
static void *
piece_loop(void *arg)
{
    piece_worker *p = arg;
    uint8_t       b[4096];
    for (int i = p->first; i < 64 && p->rc == ZARR_OK; i += 2) {
        memset(b, i, sizeof b);
        p->rc = zarr_store_writer_write(p->w, (uint64_t)(63 - i) * sizeof b, b, sizeof b);
    }
    return NULL;
}

/* The writer contract on `s`: pieces in any order with a gap (zeros), the old value until the commit,
 * a dropped writer changes nothing, two threads writing one value, read-only and bad keys refused. */
static int
check_writer(zarr_store *s, const char *what)
{
    zarr_store_writer *w = NULL;
    zarr_buf           b = ZARR_BUF_INIT;
    pthread_t          th[2];
    piece_worker       pw[2];

    (void)what;
    ASSERT_OK(zarr_store_set(s, "w/k", "old", 3));
    ASSERT_OK(zarr_store_writer_open(s, "w/k", &w));
    ASSERT_OK(zarr_store_writer_write(w, 5, "world", 5));
    ASSERT_OK(zarr_store_writer_write(w, 0, "hello", 5));
    ASSERT_OK(zarr_store_writer_write(w, 12, "!", 1));
    ASSERT_OK(zarr_store_get(s, "w/k", &b)); /* not committed: the old value (unless rewritten in place) */
    ASSERT(!s->atomic_writes || (b.size == 3 && !memcmp(b.data, "old", 3)));
    ASSERT_OK(zarr_store_writer_close(w, true));
    ASSERT_OK(zarr_store_get(s, "w/k", &b));
    ASSERT_EQ_INT(b.size, 13);
    ASSERT(!memcmp(b.data, "helloworld\0\0!", 13));
    /* dropped: the committed value stays (atomic writes), a new key never appears */
    ASSERT_OK(zarr_store_writer_open(s, s->atomic_writes ? "w/k" : "w/k2", &w));
    ASSERT_OK(zarr_store_writer_write(w, 0, "zzz", 3));
    ASSERT_OK(zarr_store_writer_close(w, false));
    ASSERT_OK(zarr_store_get(s, "w/k", &b));
    ASSERT_EQ_INT(b.size, 13);
    ASSERT_OK(zarr_store_writer_open(s, "w/new/deeper", &w));
    ASSERT_OK(zarr_store_writer_write(w, 0, "x", 1));
    ASSERT_OK(zarr_store_writer_close(w, false));
    if (s->atomic_writes) /* in place, the piece is in the file already */
        ASSERT_ERR(zarr_store_exists(s, "w/new/deeper"), ZARR_ENOTFOUND);
    /* an empty value; a new key in a new directory */
    ASSERT_OK(zarr_store_writer_open(s, "w/e", &w));
    ASSERT_OK(zarr_store_writer_close(w, true));
    ASSERT_OK(zarr_store_get(s, "w/e", &b));
    ASSERT_EQ_INT(b.size, 0);
    /* two threads, interleaved pieces written back to front */
    ASSERT_OK(zarr_store_writer_open(s, "w/p/big", &w));
    for (int i = 0; i < 2; i++) {
        pw[i] = (piece_worker){w, i, ZARR_OK};
        ASSERT(pthread_create(&th[i], NULL, piece_loop, &pw[i]) == 0);
    }
    for (int i = 0; i < 2; i++)
        ASSERT(pthread_join(th[i], NULL) == 0);
    ASSERT_OK(pw[0].rc);
    ASSERT_OK(pw[1].rc);
    ASSERT_OK(zarr_store_writer_close(w, true));
    ASSERT_OK(zarr_store_get(s, "w/p/big", &b));
    ASSERT_EQ_INT(b.size, 64 * 4096);
    for (size_t k = 0; k < b.size; k++)
        if (b.data[k] != (uint8_t)(63 - k / 4096))
            ASSERT(!"a piece landed in the wrong place");
    /* refused */
    ASSERT_ERR(zarr_store_writer_open(s, "../x", &w), ZARR_EINVAL);
    ASSERT(w == NULL);
    ASSERT_OK(zarr_store_writer_close(NULL, true));
    s->readonly = true;
    ASSERT_ERR(zarr_store_writer_open(s, "w/ro", &w), ZARR_EREADONLY);
    s->readonly = false;
    zarr_buf_free(&b);
    return 0;
}

static int
test_writer(void)
{
    const char       *dir = test_tmpdir("seam-writer");
    char              sub[4300];
    zarr_store       *s;
    zarr_store_count *c;
    zarr_store_counts n;

    ASSERT(dir);
    ASSERT_OK(zarr_store_new_mem(&s)); /* the generic form (gathered, then set) */
    ASSERT(check_writer(s, "mem") == 0);
    zarr_store_close(s);
    ASSERT((s = bare_new()));
    ASSERT(check_writer(s, "bare") == 0);
    zarr_store_close(s);
    /* the directory store: O_TMPFILE linked (or renamed over), /proc links, named temporaries, in place */
    for (int how = 0; how < 4; how++) {
        snprintf(sub, sizeof sub, "%s/d%d", dir, how);
        ASSERT_OK(zarr_store_open_dir(sub, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
        if (how == 1)
            zarr__store_dir_force(s, ZARR__DIR_LINK_PROC);
        if (how == 2)
            zarr__store_dir_force(s, ZARR__DIR_RENAME);
        if (how == 3)
            s->atomic_writes = false;
        ASSERT(check_writer(s, "dir") == 0);
        ASSERT_EQ_INT(test_tmp_files(sub), 0);
        if (how == 0)
            ASSERT(zarr__store_dir_tmpfile_used(s));
        zarr_store_close(s);
    }
    /* durable: a committed value is one file sync */
    snprintf(sub, sizeof sub, "%s/durable", dir);
    ASSERT_OK(zarr_store_open_dir(sub, ZARR_STORE_CREATE | ZARR_STORE_RDWR | ZARR_STORE_DURABLE, &s));
    {
        zarr_store_writer *w;
        uint64_t           files = 0;
        ASSERT_OK(zarr_store_writer_open(s, "a/b", &w));
        ASSERT_OK(zarr_store_writer_write(w, 0, "d", 1));
        ASSERT_OK(zarr_store_writer_close(w, true));
        zarr__store_dir_sync_counts(s, &files, NULL);
        ASSERT_EQ_INT(files, 1);
    }
    zarr_store_close(s);
    /* through a counting store over a directory store: counted, and forwarded to the native ops */
    snprintf(sub, sizeof sub, "%s/count", dir);
    ASSERT_OK(zarr_store_open_dir(sub, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
    ASSERT_OK(zarr_store_count_new(s, false, &c));
    s = zarr_store_count_store(c);
    ASSERT(check_writer(s, "count") == 0);
    zarr_store_count_read(c, &n);
    ASSERT_EQ_INT(n.writer_open, 5);
    ASSERT_EQ_INT(n.writer_write, 3 + 1 + 1 + 64);
    ASSERT_EQ_INT(n.set, 1 + 3); /* the set of "old", and the three commits */
    zarr_store_close(s);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(ops_mem),          TEST_ENTRY(ops_dir),
    TEST_ENTRY(ops_zip),          TEST_ENTRY(ops_fallbacks),
    TEST_ENTRY(remove),           TEST_ENTRY(registry),
    TEST_ENTRY(registry_threads), TEST_ENTRY(forwarding),
    TEST_ENTRY(counting),         TEST_ENTRY(stored_bytes_reads_nothing),
    TEST_ENTRY(writer),           TEST_ENTRY(builtin_schemes),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
