/*
 * store_zip.c: the zip store (a zarr hierarchy in one .zip archive, as zarr-python's ZipStore
 * writes), through libzip. Read-only opens read entries in place (libzip handles are not
 * thread-safe, so one mutex guards the archive: correct from many threads, but reads do not run in
 * parallel). RDWR/CREATE opens load the archive into a memory store, serve every operation from it,
 * and write a new archive (entries stored uncompressed, as zarr-python's ZipStore does; to a
 * temporary file renamed over the old one) on flush and on close: zip archives are rewritten whole.
 * Sizes and key listings come from the central directory; a missing key is a bare ZARR_ENOTFOUND.
 * Durable mode (zarr.h "Durability"): the new archive is fsync'ed before it is renamed over the old one
 * and its directory after, so a flush or close that returns has the archive on stable storage; writes
 * in between live in memory only (there is no sync op: nothing to sync before the archive is written).
 */
#include "store_impl.h"
#include "dynlib.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#ifndef H5ZARR_ZIP_SONAME
#define H5ZARR_ZIP_SONAME "libzip.so.4"
#endif
/* Loaded on first use (dynlib.h): the functions called, through zip_lib_fn. */
/* clang-format off */
#define ZIP_LIB_FUNCS(X)                                                                                     \
    X(zip_close) X(zip_discard) X(zip_error_fini) X(zip_error_init_with_code) X(zip_error_strerror)          \
    X(zip_fclose) X(zip_file_add) X(zip_file_get_error) X(zip_fopen_index) X(zip_fread)                      \
    X(zip_get_name) X(zip_get_num_entries) X(zip_name_locate) X(zip_open)                                    \
    X(zip_set_file_compression) X(zip_source_buffer) X(zip_source_free) X(zip_stat_index)                    \
    X(zip_stat_init) X(zip_strerror)
/* clang-format on */
ZARR__DYNLIB(zip_lib, ZIP_LIB_FUNCS, H5ZARR_ZIP_SONAME, "the zip store");

typedef struct zip_store {
    zarr_store      base;
    pthread_mutex_t lock;
    zip_t          *za;  /* read-only mode */
    zarr_store     *mem; /* read-write mode: the archive's contents */
    char           *path;
    bool            removed; /* remove_root deleted the archive: flush writes nothing */
} zip_store;

#define ROUTE(call)                                                                                          \
    do {                                                                                                     \
        if (((zip_store *)s)->mem) {                                                                         \
            zarr_store *m = ((zip_store *)s)->mem;                                                           \
            return m->ops->call;                                                                             \
        }                                                                                                    \
    } while (0)

static int
zip_fail(zip_store *z, int code, const char *what, const char *key)
{
    return zarr_error(code, "can't %s '%s' in zip store '%s': %s", what, key, z->path,
                      zip_lib_fn.zip_strerror(z->za));
}

static int
zs_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    zip_store  *z = (zip_store *)s;
    zip_stat_t  st;
    zip_file_t *f = NULL;
    zip_int64_t idx;
    int         rc = ZARR_OK;
    uint64_t    want;

    ROUTE(get_range(m, key, off, len, out));
    out->size = 0;
    pthread_mutex_lock(&z->lock);
    idx = zip_lib_fn.zip_name_locate(z->za, key, 0);
    if (idx < 0) {
        rc = ZARR_ENOTFOUND; /* no message: zarr.h */
        goto done;
    }
    zip_lib_fn.zip_stat_init(&st);
    if (zip_lib_fn.zip_stat_index(z->za, (zip_uint64_t)idx, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE)) {
        rc = zip_fail(z, ZARR_EIO, "stat", key);
        goto done;
    }
    if (off > st.size || (len != UINT64_MAX && len > st.size - off)) {
        rc = zarr_error(ZARR_ECODEC, "can't read bytes %llu+%llu of '%s': the value has only %llu bytes",
                        (unsigned long long)off, (unsigned long long)len, key, (unsigned long long)st.size);
        goto done;
    }
    want = len == UINT64_MAX ? st.size - off : len;
    if (want > SIZE_MAX || off + want > SIZE_MAX) {
        rc = zarr_error(ZARR_EOVERFLOW, "value '%s' is too large", key);
        goto done;
    }
    /* Entries are usually compressed: read from the start, skip `off` bytes. */
    if ((rc = zarr_buf_resize(out, (size_t)(off + want))) != ZARR_OK)
        goto done;
    if (!(f = zip_lib_fn.zip_fopen_index(z->za, (zip_uint64_t)idx, 0))) {
        rc = zip_fail(z, ZARR_EIO, "open", key);
        goto done;
    }
    {
        uint64_t got = 0;
        while (got < off + want) {
            zip_int64_t r = zip_lib_fn.zip_fread(f, out->data + got, off + want - got);
            if (r < 0) {
                rc = zarr_error(ZARR_EIO, "can't read '%s' in zip store '%s': %s", key, z->path,
                                zip_lib_fn.zip_error_strerror(zip_lib_fn.zip_file_get_error(f)));
                goto done;
            }
            if (r == 0)
                break;
            got += (uint64_t)r;
        }
        if (got < off + want) {
            rc = zarr_error(ZARR_ECODEC, "entry '%s' in zip store '%s' is truncated", key, z->path);
            goto done;
        }
    }
    if (off)
        memmove(out->data, out->data + off, (size_t)want);
    out->size = (size_t)want;
done:
    if (f)
        zip_lib_fn.zip_fclose(f);
    if (rc != ZARR_OK)
        out->size = 0;
    pthread_mutex_unlock(&z->lock);
    return rc;
}

static int
zs_get(zarr_store *s, const char *key, zarr_buf *out)
{
    return zs_get_range(s, key, 0, UINT64_MAX, out);
}

static int
read_only(zarr_store *s, const char *what, const char *key)
{
    return zarr_error(ZARR_EREADONLY, "can't %s '%s': zip store '%s' is open read-only", what, key, s->url);
}

static int
zs_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    ROUTE(set(m, key, data, n));
    return read_only(s, "write", key);
}

static int
zs_del(zarr_store *s, const char *key)
{
    ROUTE(del(m, key));
    return read_only(s, "delete", key);
}

static int
zs_del_prefix(zarr_store *s, const char *prefix)
{
    ROUTE(del_prefix(m, prefix));
    return read_only(s, "delete", prefix);
}

static int
zs_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud)
{
    zip_store     *z    = (zip_store *)s;
    size_t         plen = strlen(prefix);
    zarr__children c    = {0};
    int            rc   = ZARR_OK;
    zip_int64_t    ne;

    ROUTE(list(m, prefix, cb, ud));
    pthread_mutex_lock(&z->lock);
    ne = zip_lib_fn.zip_get_num_entries(z->za, 0);
    for (zip_int64_t e = 0; e < ne && rc == ZARR_OK; e++) {
        const char *key = zip_lib_fn.zip_get_name(z->za, (zip_uint64_t)e, 0);
        if (key)
            rc = zarr__children_add(&c, prefix, plen, key);
    }
    pthread_mutex_unlock(&z->lock);
    if (rc != ZARR_OK) {
        zarr__children_free(&c);
        return rc;
    }
    return zarr__children_emit(&c, cb, ud);
}

static int
zs_exists(zarr_store *s, const char *key)
{
    zip_store  *z = (zip_store *)s;
    zip_int64_t idx;
    ROUTE(exists(m, key));
    pthread_mutex_lock(&z->lock);
    idx = zip_lib_fn.zip_name_locate(z->za, key, 0);
    pthread_mutex_unlock(&z->lock);
    return idx >= 0 ? ZARR_OK : ZARR_ENOTFOUND;
}

/* From the central directory, without reading the entry. */
static int
zs_size(zarr_store *s, const char *key, uint64_t *size)
{
    zip_store  *z = (zip_store *)s;
    zip_stat_t  st;
    zip_int64_t idx;
    int         rc = ZARR_OK;

    ROUTE(size(m, key, size));
    pthread_mutex_lock(&z->lock);
    zip_lib_fn.zip_stat_init(&st);
    if ((idx = zip_lib_fn.zip_name_locate(z->za, key, 0)) < 0)
        rc = ZARR_ENOTFOUND;
    else if (zip_lib_fn.zip_stat_index(z->za, (zip_uint64_t)idx, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
        rc = zip_fail(z, ZARR_EIO, "stat", key);
    else
        *size = st.size;
    pthread_mutex_unlock(&z->lock);
    return rc;
}

/* Every entry below `prefix` with its size, from the central directory (gathered under the lock,
 * called back without it). */
static int
zs_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud)
{
    zip_store  *z    = (zip_store *)s;
    size_t      plen = strlen(prefix), n = 0;
    char      **keys  = NULL;
    uint64_t   *sizes = NULL;
    int         rc    = ZARR_OK;
    zip_int64_t ne;

    ROUTE(list_keys(m, prefix, cb, ud));
    pthread_mutex_lock(&z->lock);
    ne = zip_lib_fn.zip_get_num_entries(z->za, 0);
    if (ne > 0 &&
        (!(keys = calloc((size_t)ne, sizeof *keys)) || !(sizes = calloc((size_t)ne, sizeof *sizes))))
        rc = zarr_error(ZARR_ENOMEM, "out of memory listing zip store '%s'", z->path);
    for (zip_int64_t e = 0; e < ne && rc == ZARR_OK; e++) {
        const char *key = zip_lib_fn.zip_get_name(z->za, (zip_uint64_t)e, 0);
        zip_stat_t  st;
        size_t      k = key ? strlen(key) : 0;
        if (!key || k == 0 || key[k - 1] == '/' ||
            (plen && (strncmp(key, prefix, plen) != 0 || key[plen] != '/')))
            continue;
        if (zarr__store_check_key(key, false) != ZARR_OK) { /* not a key we could ever address */
            zarr_error_clear();
            continue;
        }
        zip_lib_fn.zip_stat_init(&st);
        if (zip_lib_fn.zip_stat_index(z->za, (zip_uint64_t)e, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
            rc = zip_fail(z, ZARR_EIO, "stat", key);
        else if (!(keys[n] = strdup(key)))
            rc = zarr_error(ZARR_ENOMEM, "out of memory listing zip store '%s'", z->path);
        else
            sizes[n++] = st.size;
    }
    pthread_mutex_unlock(&z->lock);
    for (size_t i = 0; i < n && rc == ZARR_OK; i++)
        rc = cb(keys[i], sizes[i], ud);
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
    free(sizes);
    return rc;
}

/* Deletes the archive file (its keys are gone already): close then writes nothing. */
static int
zs_remove_root(zarr_store *s)
{
    zip_store *z = (zip_store *)s;
    if (!z->mem)
        return read_only(s, "remove", z->path);
    __atomic_store_n(&z->removed, true, __ATOMIC_RELAXED);
    if (remove(z->path) != 0 && errno != ENOENT)
        return zarr_error(ZARR_EIO, "can't remove zip store '%s': %s", z->path, strerror(errno));
    return ZARR_OK;
}

static int
zs_rename(zarr_store *s, const char *from, const char *to)
{
    ROUTE(rename(m, from, to));
    (void)to;
    return read_only(s, "rename", from);
}

typedef struct add_ctx {
    zip_t      *za;
    const char *path;
} add_ctx;

static int
add_entry(const char *key, const void *data, size_t n, void *ud)
{
    add_ctx      *c = ud;
    void         *copy;
    zip_source_t *src;
    zip_int64_t   idx;

    /* libzip frees the copy of a non-empty value with the source (an empty one is not handed over) */
    if (n && !(copy = malloc(n)))
        return zarr_error(ZARR_ENOMEM, "out of memory writing zip store '%s'", c->path);
    if (n)
        memcpy(copy, data, n);
    else
        copy = NULL;
    if (!(src = zip_lib_fn.zip_source_buffer(c->za, copy, n, n > 0))) {
        free(copy);
        return zarr_error(ZARR_ENOMEM, "can't add '%s' to zip store '%s': %s", key, c->path,
                          zip_lib_fn.zip_strerror(c->za));
    }
    if ((idx = zip_lib_fn.zip_file_add(c->za, key, src, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8)) < 0) {
        zip_lib_fn.zip_source_free(src);
        return zarr_error(ZARR_EIO, "can't add '%s' to zip store '%s': %s", key, c->path,
                          zip_lib_fn.zip_strerror(c->za));
    }
    (void)zip_lib_fn.zip_set_file_compression(c->za, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
    return 0;
}

/* Writes the archive: a new file next to it, renamed over it. */
/* fsync of the file or directory at `path` (durable mode); `what` names it for the message. */
static int
sync_path(const char *path, bool dir, const char *what)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | (dir ? O_DIRECTORY : 0)), rc;
    if (fd < 0)
        return zarr_error(ZARR_EIO, "can't open %s '%s' to sync it: %s", what, path, strerror(errno));
    while ((rc = fsync(fd)) != 0 && errno == EINTR)
        ;
    if (rc != 0)
        rc = zarr_error(ZARR_EIO, "can't sync %s '%s': %s", what, path, strerror(errno));
    close(fd);
    return rc;
}

/* The directory holding the archive at `path`, synced after the rename. */
static int
sync_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    char       *dir;
    int         rc;
    if (!slash)
        return sync_path(".", true, "directory");
    if (slash == path)
        return sync_path("/", true, "directory");
    if (!(dir = strndup(path, (size_t)(slash - path))))
        return zarr_error(ZARR_ENOMEM, "out of memory syncing zip store '%s'", path);
    rc = sync_path(dir, true, "directory");
    free(dir);
    return rc;
}

static int
zs_flush(zarr_store *s)
{
    zip_store *z  = (zip_store *)s;
    int        rc = ZARR_OK, err = 0;
    char      *tmp;
    add_ctx    c;

    if (!z->mem || __atomic_load_n(&z->removed, __ATOMIC_RELAXED))
        return ZARR_OK;
    if (!(tmp = malloc(strlen(z->path) + 16)))
        return zarr_error(ZARR_ENOMEM, "out of memory writing zip store '%s'", z->path);
    strcpy(tmp, z->path);
    strcat(tmp, ".h5zarr-tmp");
    pthread_mutex_lock(&z->lock);
    if (!(c.za = zip_lib_fn.zip_open(tmp, ZIP_CREATE | ZIP_TRUNCATE, &err))) {
        zip_error_t ze;
        zip_lib_fn.zip_error_init_with_code(&ze, err);
        rc = zarr_error(ZARR_EIO, "can't write zip store '%s': %s", tmp, zip_lib_fn.zip_error_strerror(&ze));
        zip_lib_fn.zip_error_fini(&ze);
        goto done;
    }
    c.path = z->path;
    if ((rc = zarr__store_mem_foreach(z->mem, add_entry, &c)) != ZARR_OK) {
        zip_lib_fn.zip_discard(c.za);
        goto done;
    }
    if (zip_lib_fn.zip_get_num_entries(c.za, 0) == 0) {
        /* libzip writes no file for an empty archive: write the 22-byte end record ourselves. */
        static const unsigned char empty[22] = {0x50, 0x4b, 0x05, 0x06};
        FILE                      *f         = fopen(tmp, "wb");
        zip_lib_fn.zip_discard(c.za);
        if (!f || fwrite(empty, 1, sizeof empty, f) != sizeof empty) {
            if (f)
                fclose(f);
            rc = zarr_error(ZARR_EIO, "can't write zip store '%s'", tmp);
            goto done;
        }
        if (fclose(f) != 0) {
            rc = zarr_error(ZARR_EIO, "can't write zip store '%s'", tmp);
            goto done;
        }
    }
    else if (zip_lib_fn.zip_close(c.za) != 0) {
        rc = zarr_error(ZARR_EIO, "can't write zip store '%s': %s", tmp, zip_lib_fn.zip_strerror(c.za));
        zip_lib_fn.zip_discard(c.za);
        goto done;
    }
    if (s->durable && (rc = sync_path(tmp, false, "zip archive")) != ZARR_OK)
        goto done;
    if (rename(tmp, z->path) != 0)
        rc = zarr_error(ZARR_EIO, "can't rename '%s' to '%s'", tmp, z->path);
    else if (s->durable)
        rc = sync_parent(z->path); /* the archive's new entry; on failure tmp is gone already */
done:
    if (rc != ZARR_OK)
        remove(tmp);
    pthread_mutex_unlock(&z->lock);
    free(tmp);
    return rc;
}

static void
zs_destroy(zarr_store *s)
{
    zip_store *z = (zip_store *)s;
    if (z->za)
        zip_lib_fn.zip_discard(z->za);
    zarr_store_close(z->mem);
    pthread_mutex_destroy(&z->lock);
    free(z->path);
    free(s->url);
    free(z);
}

static const zarr_store_ops zip_ops = {
    .name        = "zip",
    .get         = zs_get,
    .get_range   = zs_get_range,
    .set         = zs_set,
    .del         = zs_del,
    .del_prefix  = zs_del_prefix,
    .list        = zs_list,
    .exists      = zs_exists,
    .get_many    = NULL,
    .set_many    = NULL,
    .rename      = zs_rename,
    .flush       = zs_flush,
    .destroy     = zs_destroy,
    .size        = zs_size,
    .list_keys   = zs_list_keys,
    .remove_root = zs_remove_root,
};

/* Copies every entry of the open archive `za` into the memory store `mem`. */
static int
load_all(zip_store *z, zip_t *za)
{
    zip_int64_t n     = zip_lib_fn.zip_get_num_entries(za, 0);
    zarr_buf    b     = ZARR_BUF_INIT;
    int         rc    = ZARR_OK;
    zip_t      *saved = z->za;

    z->za = za; /* read through the read-only path */
    for (zip_int64_t i = 0; i < n && rc == ZARR_OK; i++) {
        const char *name = zip_lib_fn.zip_get_name(za, (zip_uint64_t)i, 0);
        size_t      k    = name ? strlen(name) : 0;
        if (!name || k == 0 || name[k - 1] == '/')
            continue; /* directory entries */
        if (zarr__store_check_key(name, false) != ZARR_OK)
            continue; /* not a key we could ever address (absolute or escaping path) */
        zarr_store *mem = z->mem;
        z->mem          = NULL;
        rc              = zs_get_range(&z->base, name, 0, UINT64_MAX, &b);
        z->mem          = mem;
        if (rc == ZARR_OK)
            rc = zarr_store_set(mem, name, b.data, b.size);
    }
    z->za = saved;
    zarr_buf_free(&b);
    return rc;
}

int
zarr_store_open_zip(const char *path, int flags, zarr_store **out)
{
    zip_store *z;
    zip_t     *za  = NULL;
    int        err = 0, rc;
    bool       rw  = (flags & (ZARR_STORE_RDWR | ZARR_STORE_CREATE)) != 0;

    if (!path || !out)
        return zarr_error(ZARR_EINVAL, "zarr_store_open_zip: path and out must not be NULL");
    *out = NULL;
    if ((rc = zarr__dynlib_load(&zip_lib)) != ZARR_OK)
        return rc; /* every op below goes through an open store, so through this */
    if (!(z = calloc(1, sizeof *z)) || !(z->path = strdup(path)) || !(z->base.url = strdup(path))) {
        if (z)
            free(z->path);
        free(z);
        return zarr_error(ZARR_ENOMEM, "out of memory opening zip store '%s'", path);
    }
    pthread_mutex_init(&z->lock, NULL);
    z->base.ops             = &zip_ops;
    z->base.refcount        = 1;
    z->base.readonly        = !rw;
    z->base.atomic_writes   = true;
    z->base.prefers_batches = false;
    z->base.durable         = (flags & ZARR_STORE_DURABLE) != 0;
    za                      = zip_lib_fn.zip_open(path, ZIP_RDONLY, &err);
    if (!za && !(rw && (flags & ZARR_STORE_CREATE) && err == ZIP_ER_NOENT)) {
        zip_error_t ze;
        int         code = err == ZIP_ER_NOENT ? ZARR_ENOTFOUND : ZARR_EIO;
        zip_lib_fn.zip_error_init_with_code(&ze, err);
        zarr_error(code, "can't open zip store '%s': %s", path, zip_lib_fn.zip_error_strerror(&ze));
        zip_lib_fn.zip_error_fini(&ze);
        zs_destroy(&z->base);
        return code;
    }
    if (rw) {
        if ((rc = zarr_store_new_mem(&z->mem)) != ZARR_OK || (za && (rc = load_all(z, za)) != ZARR_OK)) {
            if (za)
                zip_lib_fn.zip_discard(za);
            zs_destroy(&z->base);
            return zarr_error_wrap(rc, "can't open zip store '%s': ", path);
        }
        if (za)
            zip_lib_fn.zip_discard(za);
    }
    else
        z->za = za;
    *out = &z->base;
    return ZARR_OK;
}
