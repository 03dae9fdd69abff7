/*
 * store.c: the generic store layer. Every zarr_store_* call goes through here: keys are validated
 * (no path escapes), read-only stores refuse writes, and batch operations without a native form fall
 * back to a loop over the single-key operation. Also: reference counting and zarr_store_open, which
 * maps a URL or path onto the directory, memory or zip store.
 */
#include "store_impl.h"

#include <pthread.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
zarr__store_check_key(const char *key, bool allow_empty)
{
    const char *p, *c;

    if (!key)
        return zarr_error(ZARR_EINVAL, "store key is NULL");
    if (!*key)
        return allow_empty ? ZARR_OK : zarr_error(ZARR_EINVAL, "store key is empty");
    if (key[0] == '/')
        return zarr_error(ZARR_EINVAL, "store key '%s' starts with '/'", key);
    for (c = key;; c = p + 1) {
        size_t n;
        p = strchr(c, '/');
        n = p ? (size_t)(p - c) : strlen(c);
        if (n == 0)
            return zarr_error(ZARR_EINVAL, "store key '%s' has an empty path component", key);
        if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return zarr_error(ZARR_EINVAL, "store key '%s' has a '.' or '..' component", key);
        if (memchr(c, '\\', n))
            return zarr_error(ZARR_EINVAL, "store key '%s' contains a backslash", key);
        if (!p)
            break;
    }
    return ZARR_OK;
}

#define CHECK_KEY(k, empty)                                                                                  \
    do {                                                                                                     \
        int _rc;                                                                                             \
        if (!s)                                                                                              \
            return zarr_error(ZARR_EINVAL, "store is NULL");                                                 \
        if ((_rc = zarr__store_check_key((k), (empty))) != ZARR_OK)                                          \
            return _rc;                                                                                      \
    } while (0)

#define CHECK_WRITABLE(what, k)                                                                              \
    do {                                                                                                     \
        if (s->readonly)                                                                                     \
            return zarr_error(ZARR_EREADONLY, "can't %s '%s': store '%s' is read-only", (what), (k),         \
                              s->url ? s->url : "");                                                         \
    } while (0)

void
zarr_store_ref(zarr_store *s)
{
    if (s)
        __atomic_add_fetch(&s->refcount, 1, __ATOMIC_RELAXED);
}

void
zarr_store_close(zarr_store *s)
{
    if (!s)
        return;
    if (__atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    if (s->ops->flush && !s->readonly)
        (void)s->ops->flush(s);
    s->ops->destroy(s); /* frees s->url and s itself */
}

int
zarr_store_get(zarr_store *s, const char *key, zarr_buf *out)
{
    CHECK_KEY(key, false);
    return s->ops->get(s, key, out);
}

int
zarr__store_get_quiet(zarr_store *s, const char *key, zarr_buf *out)
{
    char saved[1024];
    int  rc;

    CHECK_KEY(key, false);
    if (s->ops == &zarr__store_dir_ops)
        return zarr__store_dir_get_quiet(s, key, out);
    if (s->ops == &zarr__store_mem_ops)
        return zarr__store_mem_get_quiet(s, key, out);
    /* other stores set a message on a miss: put the caller's back */
    zarr_error_save(saved, sizeof saved);
    rc = s->ops->get(s, key, out);
    if (rc == ZARR_ENOTFOUND)
        zarr_error_restore(rc, saved);
    return rc;
}

int
zarr_store_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    CHECK_KEY(key, false);
    return s->ops->get_range(s, key, off, len, out);
}

int
zarr_store_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    CHECK_KEY(key, false);
    CHECK_WRITABLE("write", key);
    if (!data && n)
        return zarr_error(ZARR_EINVAL, "can't write '%s': data is NULL", key);
    return s->ops->set(s, key, data, n);
}

int
zarr_store_del(zarr_store *s, const char *key)
{
    CHECK_KEY(key, false);
    CHECK_WRITABLE("delete", key);
    return s->ops->del(s, key);
}

int
zarr_store_del_prefix(zarr_store *s, const char *prefix)
{
    CHECK_KEY(prefix, true);
    CHECK_WRITABLE("delete", prefix);
    return s->ops->del_prefix(s, prefix);
}

int
zarr_store_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud)
{
    CHECK_KEY(prefix, true);
    if (!cb)
        return zarr_error(ZARR_EINVAL, "list callback is NULL");
    return s->ops->list(s, prefix, cb, ud);
}

int
zarr_store_exists(zarr_store *s, const char *key)
{
    CHECK_KEY(key, false);
    return s->ops->exists(s, key);
}

int
zarr_store_mtime(zarr_store *s, const char *key, int64_t *sec)
{
    CHECK_KEY(key, false);
    if (!s->ops->mtime)
        return ZARR_EUNSUPPORTED;
    return s->ops->mtime(s, key, sec);
}

/* Batch forms: results[i] gets each item's status; the return value is the first error (its message
 * is the one left on the thread), ZARR_ENOTFOUND items included. */
int
zarr_store_get_many(zarr_store *s, size_t n, const char *const *keys, zarr_buf *outs, int *results)
{
    int first = ZARR_OK;

    if (!s)
        return zarr_error(ZARR_EINVAL, "store is NULL");
    for (size_t i = 0; i < n; i++) {
        int rc = zarr__store_check_key(keys[i], false);
        if (rc != ZARR_OK) {
            results[i] = rc;
            return rc;
        }
    }
    if (s->ops->get_many)
        return s->ops->get_many(s, n, keys, outs, results);
    for (size_t i = 0; i < n; i++) {
        results[i] = s->ops->get(s, keys[i], &outs[i]);
        if (results[i] != ZARR_OK && first == ZARR_OK)
            first = results[i];
    }
    return first;
}

int
zarr_store_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data,
                    const size_t *sizes, int *results)
{
    int first = ZARR_OK;

    if (!s)
        return zarr_error(ZARR_EINVAL, "store is NULL");
    for (size_t i = 0; i < n; i++) {
        int rc = zarr__store_check_key(keys[i], false);
        if (rc != ZARR_OK) {
            results[i] = rc;
            return rc;
        }
        CHECK_WRITABLE("write", keys[i]);
    }
    if (s->ops->set_many)
        return s->ops->set_many(s, n, keys, data, sizes, results);
    for (size_t i = 0; i < n; i++) {
        results[i] = s->ops->set(s, keys[i], data[i], sizes[i]);
        if (results[i] != ZARR_OK && first == ZARR_OK)
            first = results[i];
    }
    return first;
}

int
zarr_store_rename(zarr_store *s, const char *from, const char *to)
{
    CHECK_KEY(from, false);
    CHECK_KEY(to, false);
    CHECK_WRITABLE("rename", from);
    if (!s->ops->rename)
        return zarr_error(ZARR_EUNSUPPORTED, "store '%s' (%s) can't rename", s->url ? s->url : "",
                          s->ops->name);
    return s->ops->rename(s, from, to);
}

int
zarr_store_flush(zarr_store *s)
{
    if (!s)
        return zarr_error(ZARR_EINVAL, "store is NULL");
    return s->ops->flush ? s->ops->flush(s) : ZARR_OK;
}

int
zarr__store_size(zarr_store *s, const char *key, uint64_t *size)
{
    zarr_buf b = ZARR_BUF_INIT;
    int      rc;

    CHECK_KEY(key, false);
    if (s->ops == &zarr__store_dir_ops)
        return zarr__store_dir_size(s, key, size);
    if (s->ops == &zarr__store_mem_ops)
        return zarr__store_mem_size(s, key, size);
    rc = s->ops->get(s, key, &b);
    if (rc == ZARR_OK)
        *size = b.size;
    zarr_buf_free(&b);
    return rc;
}

/* ---- named memory stores: "memory://name" opens the same store for the life of the process ---- */

typedef struct named_mem {
    char             *name;
    zarr_store       *store; /* the registry's own reference */
    struct named_mem *next;
} named_mem;

static pthread_mutex_t named_lock = PTHREAD_MUTEX_INITIALIZER;
static named_mem      *named_list;

static int
open_named_mem(const char *name, zarr_store **out)
{
    named_mem *m;
    int        rc = ZARR_OK;

    pthread_mutex_lock(&named_lock);
    for (m = named_list; m; m = m->next)
        if (strcmp(m->name, name) == 0)
            break;
    if (!m) {
        if (!(m = calloc(1, sizeof *m)) || !(m->name = strdup(name))) {
            if (m)
                free(m);
            rc = zarr_error(ZARR_ENOMEM, "out of memory opening memory store '%s'", name);
            goto done;
        }
        if ((rc = zarr_store_new_mem(&m->store)) != ZARR_OK) {
            free(m->name);
            free(m);
            goto done;
        }
        free(m->store->url);
        if (!(m->store->url = malloc(strlen(name) + 10))) {
            zarr_store_close(m->store);
            free(m->name);
            free(m);
            rc = zarr_error(ZARR_ENOMEM, "out of memory opening memory store '%s'", name);
            goto done;
        }
        strcpy(m->store->url, "memory://");
        strcat(m->store->url, name);
        m->next    = named_list;
        named_list = m;
    }
    zarr_store_ref(m->store);
    *out = m->store;
done:
    pthread_mutex_unlock(&named_lock);
    return rc;
}

static bool
ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

int
zarr_store_open(const char *url, int flags, zarr_store **out)
{
    zarr_store *s = NULL;
    int         rc;

    if (!url || !out)
        return zarr_error(ZARR_EINVAL, "zarr_store_open: url and out must not be NULL");
    *out = NULL;
    if (strncmp(url, "memory://", 9) == 0) {
        if (url[9] == '\0')
            rc = zarr_store_new_mem(&s);
        else
            rc = open_named_mem(url + 9, &s);
        /* Memory stores are shared objects: `flags` does not make them read-only. */
    }
    else if (strncmp(url, "file://", 7) == 0) {
        const char *path = url + 7;
        if (strncmp(path, "localhost/", 10) == 0)
            path += 9;
        if (path[0] != '/')
            return zarr_error(ZARR_EINVAL, "can't open '%s': file URLs must hold an absolute path", url);
        rc = ends_with(path, ".zip") ? zarr_store_open_zip(path, flags, &s)
                                     : zarr_store_open_dir(path, flags, &s);
    }
    else if (strstr(url, "://"))
        return zarr_error(ZARR_EUNSUPPORTED, "can't open '%s': unsupported URL scheme", url);
    else if (ends_with(url, ".zip"))
        rc = zarr_store_open_zip(url, flags, &s);
    else
        rc = zarr_store_open_dir(url, flags, &s);
    if (rc != ZARR_OK)
        return rc;
    *out = s;
    return ZARR_OK;
}

/* ---- listing flat key spaces ----------------------------------------------------------------------- */
struct zarr__child {
    char *name;
    bool  is_dir;
};

static int
child_cmp(const void *a, const void *b)
{
    return strcmp(((const struct zarr__child *)a)->name, ((const struct zarr__child *)b)->name);
}

int
zarr__children_add(zarr__children *c, const char *prefix, size_t plen, const char *key)
{
    const char *rest, *slash;
    size_t      k;
    if (plen) {
        if (strncmp(key, prefix, plen) != 0 || key[plen] != '/')
            return ZARR_OK;
        rest = key + plen + 1;
    }
    else
        rest = key;
    slash = strchr(rest, '/');
    k     = slash ? (size_t)(slash - rest) : strlen(rest);
    if (k == 0)
        return ZARR_OK; /* directory entries ("a/") of zip archives */
    if (c->n == c->cap) {
        size_t              cap = c->cap ? 2 * c->cap : 16;
        struct zarr__child *nv  = realloc(c->v, cap * sizeof *nv);
        if (!nv)
            return zarr_error(ZARR_ENOMEM, "out of memory listing '%s'", prefix);
        c->v   = nv;
        c->cap = cap;
    }
    if (!(c->v[c->n].name = strndup(rest, k)))
        return zarr_error(ZARR_ENOMEM, "out of memory listing '%s'", prefix);
    c->v[c->n++].is_dir = slash != NULL;
    return ZARR_OK;
}

void
zarr__children_free(zarr__children *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].name);
    free(c->v);
    c->v = NULL;
    c->n = c->cap = 0;
}

int
zarr__children_emit(zarr__children *c, zarr_list_cb cb, void *ud)
{
    int rc = ZARR_OK;
    if (c->n)
        qsort(c->v, c->n, sizeof *c->v, child_cmp);
    for (size_t i = 0, j; i < c->n && rc == ZARR_OK; i = j) {
        bool is_dir = c->v[i].is_dir;
        for (j = i + 1; j < c->n && strcmp(c->v[j].name, c->v[i].name) == 0; j++)
            is_dir |= c->v[j].is_dir;
        rc = cb(c->v[i].name, is_dir, ud);
    }
    zarr__children_free(c);
    return rc;
}
