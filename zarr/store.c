/*
 * store.c: the generic store layer. Every zarr_store_* call goes through here: keys are validated
 * (no path escapes), read-only stores refuse writes, missing keys get their message (the stores' ops
 * return a bare ZARR_ENOTFOUND, zarr.h), and every optional operation a store leaves NULL (size,
 * get_into, list_keys, get_many, set_many, remove_root) has its generic form here, built on the
 * required ones. Also: reference counting, and zarr_store_open with its URL-scheme registry, which
 * maps a URL or path onto a registered opener or a built-in one (the built-in schemes are the list
 * ZARR__STORE_SCHEMES in store_impl.h: file and memory here, http, https and s3 in their own files),
 * and the durability switch (zarr_store_sync: a durable store's sync pass, a no-op otherwise).
 */
#include "store_impl.h"

#include <pthread.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    if (s->durable && s->ops->sync && !s->readonly)
        (void)s->ops->sync(s); /* nothing can be reported here: callers that care flush first */
    s->ops->destroy(s);        /* frees s->url and s itself */
}

/* The message of a missing key, which the ops leave to the public wrappers (zarr.h). */
static int
not_found(const zarr_store *s, const char *key)
{
    return zarr_error(ZARR_ENOTFOUND, "no key '%s' in store '%s'", key, s->url ? s->url : "");
}

int
zarr_store_get(zarr_store *s, const char *key, zarr_buf *out)
{
    int rc;
    CHECK_KEY(key, false);
    rc = s->ops->get(s, key, out);
    return rc == ZARR_ENOTFOUND ? not_found(s, key) : rc;
}

/* A get of `key` (with `mtime`: as a one-item get_many, which gives the value's time) that leaves the
 * caller's message alone when the key is missing. The ops leave a missing key's message alone (zarr.h);
 * a store that formats one anyway gets the caller's put back. Costs a copy of the caller's message, no
 * formatting. */
static int
get_quiet(zarr_store *s, const char *key, zarr_buf *out, int64_t *mtime)
{
    const char *msg = zarr_errmsg();
    char        saved[1024]; /* error.c's message size */
    size_t      n;
    int         rc;

    if (mtime)
        *mtime = 0;
    CHECK_KEY(key, false);
    n = strnlen(msg, sizeof saved - 1);
    memcpy(saved, msg, n);
    saved[n] = '\0';
    if (mtime) {
        zarr_store_req r = {key, 0, UINT64_MAX, false, out, UINT64_MAX, ZARR_OK, 0};
        (void)zarr__store_op_get_many(s, 1, &r); /* the item's result */
        rc = r.result;
        if (rc == ZARR_OK)
            *mtime = r.mtime;
    }
    else
        rc = s->ops->get(s, key, out);
    if (rc == ZARR_ENOTFOUND && strncmp(msg, saved, sizeof saved) != 0)
        zarr_error_restore(rc, saved);
    return rc;
}

int
zarr__store_get_quiet(zarr_store *s, const char *key, zarr_buf *out)
{
    return get_quiet(s, key, out, NULL);
}

int
zarr__store_get_quiet_timed(zarr_store *s, const char *key, zarr_buf *out, int64_t *mtime)
{
    return get_quiet(s, key, out, mtime);
}

int
zarr_store_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    int rc;
    CHECK_KEY(key, false);
    rc = s->ops->get_range(s, key, off, len, out);
    return rc == ZARR_ENOTFOUND ? not_found(s, key) : rc;
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
zarr_name_list_collect_dir(const char *name, bool is_dir, void *ud)
{
    zarr_name_list *l = ud;
    if (!is_dir)
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **p   = realloc(l->names, cap * sizeof *p);
        if (!p)
            return ZARR_ENOMEM;
        l->names = p;
        l->cap   = cap;
    }
    if (!(l->names[l->n] = strdup(name)))
        return ZARR_ENOMEM;
    l->n++;
    return 0;
}

void
zarr_name_list_clear(zarr_name_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->names[i]);
    free(l->names);
    memset(l, 0, sizeof *l);
}

int
zarr_store_exists(zarr_store *s, const char *key)
{
    CHECK_KEY(key, false);
    return s->ops->exists(s, key); /* a question: ZARR_ENOTFOUND carries no message */
}

int
zarr_store_mtime(zarr_store *s, const char *key, int64_t *sec)
{
    int rc;
    CHECK_KEY(key, false);
    if (!sec)
        return zarr_error(ZARR_EINVAL, "zarr_store_mtime: sec is NULL");
    if (!s->ops->mtime)
        return ZARR_EUNSUPPORTED;
    rc = s->ops->mtime(s, key, sec);
    return rc == ZARR_ENOTFOUND ? not_found(s, key) : rc;
}

/* ---- optional operations: the store's own, else the generic form ---------------------------------- */

int
zarr__store_op_size(zarr_store *s, const char *key, uint64_t *size)
{
    zarr_buf b = ZARR_BUF_INIT;
    int      rc;

    if (s->ops->size)
        return s->ops->size(s, key, size);
    rc = s->ops->get(s, key, &b);
    if (rc == ZARR_OK)
        *size = b.size;
    zarr_buf_free(&b);
    return rc;
}

int
zarr__store_size(zarr_store *s, const char *key, uint64_t *size)
{
    CHECK_KEY(key, false);
    return zarr__store_op_size(s, key, size);
}

int
zarr_store_size(zarr_store *s, const char *key, uint64_t *size)
{
    int rc;
    CHECK_KEY(key, false);
    if (!size)
        return zarr_error(ZARR_EINVAL, "zarr_store_size: size is NULL");
    rc = zarr__store_op_size(s, key, size);
    return rc == ZARR_ENOTFOUND ? not_found(s, key) : rc;
}

int
zarr__store_get_into(zarr_store *s, const char *key, void *dst, size_t n)
{
    zarr_buf b = ZARR_BUF_INIT;
    int      rc;

    if (s->ops->get_into)
        return s->ops->get_into(s, key, dst, n);
    rc = s->ops->get(s, key, &b);
    if (rc == ZARR_OK && b.size != n)
        rc = zarr_error(ZARR_ECODEC, "value '%s' holds %zu bytes, expected %zu", key, b.size, n);
    if (rc == ZARR_OK && n)
        memcpy(dst, b.data, n);
    zarr_buf_free(&b);
    return rc;
}

int
zarr__store_get_range_into(zarr_store *s, const char *key, uint64_t off, void *dst, size_t n)
{
    zarr_buf b = ZARR_BUF_INIT;
    int      rc;

    if (s->ops->get_range_into)
        return s->ops->get_range_into(s, key, off, dst, n);
    rc = s->ops->get_range(s, key, off, n, &b);
    if (rc == ZARR_OK && b.size != n)
        rc = zarr_error(ZARR_ECODEC, "value '%s' has %zu bytes at %llu, expected %zu", key, b.size,
                        (unsigned long long)off, n);
    if (rc == ZARR_OK && n)
        memcpy(dst, b.data, n);
    zarr_buf_free(&b);
    return rc;
}

/* Generic list_keys: a walk of `prefix` level by level, with a size per value key. */
typedef struct keys_walk {
    zarr_store *s;
    zarr_key_cb cb;
    void       *ud;
    char      **names; /* children of the level being read */
    bool       *dirs;
    size_t      n, cap;
} keys_walk;

static int
keys_walk_add(const char *name, bool is_dir, void *ud)
{
    keys_walk *w = ud;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 32;
        char **v   = realloc(w->names, cap * sizeof *v);
        bool  *d;
        if (!v)
            return ZARR_ENOMEM;
        w->names = v;
        if (!(d = realloc(w->dirs, cap * sizeof *d)))
            return ZARR_ENOMEM;
        w->dirs = d;
        w->cap  = cap;
    }
    if (!(w->names[w->n] = strdup(name)))
        return ZARR_ENOMEM;
    w->dirs[w->n++] = is_dir;
    return 0;
}

static int
keys_walk_level(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud, int depth)
{
    keys_walk w  = {s, cb, ud, NULL, NULL, 0, 0};
    int       rc = ZARR_OK;
    size_t    pl = strlen(prefix);

    if (depth > 256)
        return zarr_error(ZARR_EINVAL, "can't list the keys below '%s': more than 256 levels", prefix);
    rc = s->ops->list(s, prefix, keys_walk_add, &w);
    if (rc == ZARR_ENOMEM)
        rc = zarr_error(ZARR_ENOMEM, "out of memory listing '%s'", prefix);
    for (size_t i = 0; i < w.n && rc == ZARR_OK; i++) {
        size_t k   = strlen(w.names[i]);
        char  *key = malloc(pl + 1 + k + 1);
        if (!key) {
            rc = zarr_error(ZARR_ENOMEM, "out of memory listing '%s'", prefix);
            break;
        }
        if (pl) {
            memcpy(key, prefix, pl);
            key[pl] = '/';
            memcpy(key + pl + 1, w.names[i], k + 1);
        }
        else
            memcpy(key, w.names[i], k + 1);
        if (zarr__store_check_key(key, false) != ZARR_OK) /* a name no key can have: not a value of ours */
            zarr_error_clear();
        else {
            uint64_t size;
            /* a flat key space may hold a value "a" and keys "a/..." both: list reports "a" once, as a
             * directory */
            if (!w.dirs[i] || s->ops->exists(s, key) == ZARR_OK) {
                rc = zarr__store_op_size(s, key, &size);
                if (rc == ZARR_ENOTFOUND) /* deleted since it was listed */
                    rc = ZARR_OK;
                else if (rc == ZARR_OK)
                    rc = cb(key, size, ud);
            }
            if (rc == ZARR_OK && w.dirs[i])
                rc = keys_walk_level(s, key, cb, ud, depth + 1);
        }
        free(key);
    }
    for (size_t i = 0; i < w.n; i++)
        free(w.names[i]);
    free(w.names);
    free(w.dirs);
    return rc;
}

int
zarr__store_op_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud)
{
    if (s->ops->list_keys)
        return s->ops->list_keys(s, prefix, cb, ud);
    return keys_walk_level(s, prefix, cb, ud, 0);
}

int
zarr_store_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud)
{
    CHECK_KEY(prefix, true);
    if (!cb)
        return zarr_error(ZARR_EINVAL, "list callback is NULL");
    return zarr__store_op_list_keys(s, prefix, cb, ud);
}

/* One item of a batched read without the store's own get_many. */
static int
get_one(zarr_store *s, zarr_store_req *r)
{
    int rc;

    r->total = UINT64_MAX;
    if (r->suffix) {
        uint64_t size;
        if ((rc = zarr__store_op_size(s, r->key, &size)) == ZARR_OK &&
            (rc = s->ops->get_range(s, r->key, r->len >= size ? 0 : size - r->len, UINT64_MAX, r->out)) ==
                ZARR_OK)
            r->total = size;
    }
    else if (r->off == 0 && r->len == UINT64_MAX) {
        if ((rc = s->ops->get(s, r->key, r->out)) == ZARR_OK)
            r->total = r->out->size;
    }
    else if ((rc = s->ops->get_range(s, r->key, r->off, r->len, r->out)) == ZARR_OK && r->len == UINT64_MAX)
        r->total = r->off + r->out->size;
    if (rc != ZARR_OK)
        r->out->size = 0;
    return r->result = rc;
}

int
zarr__store_op_get_many(zarr_store *s, size_t n, zarr_store_req *reqs)
{
    int first = ZARR_OK;

    if (s->ops->get_many)
        return s->ops->get_many(s, n, reqs);
    for (size_t i = 0; i < n; i++)
        if (get_one(s, &reqs[i]) != ZARR_OK && first == ZARR_OK)
            first = reqs[i].result;
    return first;
}

int
zarr_store_get_many(zarr_store *s, size_t n, zarr_store_req *reqs)
{
    if (!s)
        return zarr_error(ZARR_EINVAL, "store is NULL");
    if (n && !reqs)
        return zarr_error(ZARR_EINVAL, "zarr_store_get_many: reqs is NULL");
    for (size_t i = 0; i < n; i++) {
        int rc = zarr__store_check_key(reqs[i].key, false);
        if (rc == ZARR_OK && !reqs[i].out)
            rc = zarr_error(ZARR_EINVAL, "zarr_store_get_many: item %zu ('%s') has no out buffer", i,
                            reqs[i].key);
        if (rc != ZARR_OK) {
            for (size_t k = 0; k < n; k++) {
                reqs[k].result = ZARR_EINVAL;
                reqs[k].total  = UINT64_MAX;
            }
            return rc;
        }
        reqs[i].total  = UINT64_MAX;
        reqs[i].result = ZARR_OK;
    }
    return zarr__store_op_get_many(s, n, reqs);
}

int
zarr__store_op_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data,
                        const size_t *sizes, int *results)
{
    int first = ZARR_OK;

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
zarr__store_op_del_many(zarr_store *s, size_t n, const char *const *keys, int *results)
{
    int first = ZARR_OK;

    if (s->ops->del_many)
        return s->ops->del_many(s, n, keys, results);
    for (size_t i = 0; i < n; i++) {
        results[i] = s->ops->del(s, keys[i]);
        if (results[i] != ZARR_OK && first == ZARR_OK)
            first = results[i];
    }
    return first;
}

int
zarr_store_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data,
                    const size_t *sizes, int *results)
{
    if (!s)
        return zarr_error(ZARR_EINVAL, "store is NULL");
    if (n && (!keys || !data || !sizes || !results))
        return zarr_error(ZARR_EINVAL, "zarr_store_set_many: keys, data, sizes and results must not be NULL");
    for (size_t i = 0; i < n; i++) {
        int rc = zarr__store_check_key(keys[i], false);
        if (rc == ZARR_OK && !data[i] && sizes[i])
            rc = zarr_error(ZARR_EINVAL, "can't write '%s': data is NULL", keys[i]);
        if (rc != ZARR_OK) {
            results[i] = rc;
            return rc;
        }
        CHECK_WRITABLE("write", keys[i]);
    }
    return zarr__store_op_set_many(s, n, keys, data, sizes, results);
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
    if (s->ops->flush) {
        int rc = s->ops->flush(s);
        if (rc != ZARR_OK)
            return rc;
    }
    return zarr_store_sync(s);
}

int
zarr_store_sync(zarr_store *s)
{
    if (!s)
        return zarr_error(ZARR_EINVAL, "store is NULL");
    if (!s->durable || !s->ops->sync)
        return ZARR_OK;
    return s->ops->sync(s);
}

int
zarr_store_remove(zarr_store *s)
{
    int rc;
    if (!s)
        return zarr_error(ZARR_EINVAL, "store is NULL");
    CHECK_WRITABLE("remove", "the whole store");
    if ((rc = s->ops->del_prefix(s, "")) != ZARR_OK)
        return zarr_error_wrap(rc, "can't remove store '%s': ", s->url ? s->url : "");
    if (s->ops->remove_root && (rc = s->ops->remove_root(s)) != ZARR_OK)
        return zarr_error_wrap(rc, "can't remove store '%s': ", s->url ? s->url : "");
    return ZARR_OK;
}

int
zarr_store_clear(zarr_store *s)
{
    if (!s)
        return zarr_error(ZARR_EINVAL, "store is NULL");
    CHECK_WRITABLE("clear", "the whole store");
    return s->ops->clear ? s->ops->clear(s) : s->ops->del_prefix(s, "");
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
open_named_mem(const char *name, bool create, zarr_store **out)
{
    named_mem *m;
    int        rc = ZARR_OK;

    pthread_mutex_lock(&named_lock);
    for (m = named_list; m; m = m->next)
        if (strcmp(m->name, name) == 0)
            break;
    if (!m && !create) {
        rc = zarr_error(ZARR_ENOTFOUND,
                        "can't open 'memory://%s': no memory store of that name (open it "
                        "with ZARR_STORE_CREATE first)",
                        name);
        goto done;
    }
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

bool
zarr_store_path_is_file_store(const char *path)
{
    return path && (ends_with(path, ".json") || ends_with(path, ".zip"));
}

/* ---- URL schemes ------------------------------------------------------------------------------------ */

#define SCHEME_MAX 32

typedef int (*scheme_open_fn)(const char *url, int flags, zarr_store **out);

typedef struct scheme_ent {
    char               name[SCHEME_MAX + 1];
    scheme_open_fn     open;
    struct scheme_ent *next;
} scheme_ent;

static pthread_mutex_t scheme_lock = PTHREAD_MUTEX_INITIALIZER;
static scheme_ent     *schemes; /* registrations, newest first (read and changed under scheme_lock) */

/* Length of the scheme of `name` when it is "<scheme>://...", else 0. */
static size_t
scheme_len(const char *name)
{
    size_t k = 0;
    if (!name || !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z')))
        return 0;
    for (k = 1; name[k]; k++) {
        char c = name[k];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
              c == '-' || c == '.'))
            break;
    }
    return k <= SCHEME_MAX && strncmp(name + k, "://", 3) == 0 ? k : 0;
}

bool
zarr_store_is_url(const char *name)
{
    return scheme_len(name) > 0;
}

static int scheme_set(const char *scheme, scheme_open_fn open);

/* The built-in schemes (ZARR__STORE_SCHEMES, store_impl.h). The REGISTERED ones are registered before
 * the first registration or open (so that a caller's registration replaces them); the FALLBACK ones
 * are looked up here when no registration matches. */
static const struct {
    const char    *name;
    scheme_open_fn open;
    int            kind;
} builtin[] = {
#define ZARR__SCHEME_ROW(name, open, kind) {name, open, kind},
    ZARR__STORE_SCHEMES(ZARR__SCHEME_ROW)
#undef ZARR__SCHEME_ROW
};

static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void
builtin_schemes(void)
{
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        if (builtin[i].kind == ZARR__SCHEME_REGISTERED)
            (void)scheme_set(builtin[i].name, builtin[i].open);
}

int
zarr_store_register_scheme(const char *scheme, int (*open)(const char *url, int flags, zarr_store **out))
{
    pthread_once(&builtin_once, builtin_schemes);
    return scheme_set(scheme, open);
}

static int
scheme_set(const char *scheme, scheme_open_fn open)
{
    char        probe[SCHEME_MAX + 4];
    scheme_ent *e, **pp;
    size_t      k = scheme ? strlen(scheme) : 0;

    if (k == 0 || k > SCHEME_MAX)
        return zarr_error(ZARR_EINVAL, "can't register URL scheme '%s': %s", scheme ? scheme : "(null)",
                          k ? "longer than 32 characters" : "empty");
    memcpy(probe, scheme, k);
    memcpy(probe + k, "://", 4);
    if (scheme_len(probe) != k)
        return zarr_error(ZARR_EINVAL,
                          "can't register URL scheme '%s': a scheme is a letter followed by letters, digits, "
                          "'+', '-' or '.'",
                          scheme);
    pthread_mutex_lock(&scheme_lock);
    for (pp = &schemes; *pp; pp = &(*pp)->next)
        if (strcasecmp((*pp)->name, scheme) == 0)
            break;
    if (*pp && open)
        (*pp)->open = open;
    else if (*pp) {
        e   = *pp;
        *pp = e->next;
        free(e);
    }
    else if (open) {
        if (!(e = calloc(1, sizeof *e))) {
            pthread_mutex_unlock(&scheme_lock);
            return zarr_error(ZARR_ENOMEM, "out of memory registering URL scheme '%s'", scheme);
        }
        memcpy(e->name, scheme, k + 1);
        e->open = open;
        e->next = schemes;
        schemes = e;
    }
    pthread_mutex_unlock(&scheme_lock);
    return ZARR_OK;
}

/* A local path: a zip store for "*.zip", a reference store for a file "*.json" holding reference JSON
 * (zarr_store_is_ref_file), else a directory store (zarr_store_path_is_file_store says which names may
 * be files). */
static int
open_path(const char *path, int flags, zarr_store **out)
{
    struct stat st;
    if (ends_with(path, ".json") && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
        zarr_store_is_ref_file(path))
        return zarr_store_open_ref(path, flags, out);
    return ends_with(path, ".zip") ? zarr_store_open_zip(path, flags, out)
                                   : zarr_store_open_dir(path, flags, out);
}

/* "file:///abs/path" ("file://localhost/abs/path"): the store of the path (ZARR__STORE_SCHEMES). */
int
zarr__store_open_file_url(const char *url, int flags, zarr_store **out)
{
    const char *path = url + 7;
    if (strncmp(path, "localhost/", 10) == 0)
        path += 9;
    if (path[0] != '/')
        return zarr_error(ZARR_EINVAL, "can't open '%s': file URLs must hold an absolute path", url);
    return open_path(path, flags, out);
}

/* "memory://NAME", "memory://" (ZARR__STORE_SCHEMES). */
int
zarr__store_open_memory_url(const char *url, int flags, zarr_store **out)
{
    if (url[9] == '\0')
        return zarr_store_new_mem(out); /* a private store */
    return open_named_mem(url + 9, (flags & ZARR_STORE_CREATE) != 0, out);
}

int
zarr_store_open(const char *url, int flags, zarr_store **out)
{
    scheme_open_fn open = NULL;
    size_t         k;
    int            rc;

    if (!url || !out)
        return zarr_error(ZARR_EINVAL, "zarr_store_open: url and out must not be NULL");
    *out = NULL;
    if (!*url)
        return zarr_error(ZARR_EINVAL, "zarr_store_open: the name is empty");
    if ((k = scheme_len(url)) == 0)
        return open_path(url, flags, out); /* the directory and zip stores read ZARR_STORE_DURABLE */
    pthread_once(&builtin_once, builtin_schemes);
    pthread_mutex_lock(&scheme_lock);
    for (scheme_ent *e = schemes; e; e = e->next)
        if (strlen(e->name) == k && strncasecmp(e->name, url, k) == 0) {
            open = e->open;
            break;
        }
    pthread_mutex_unlock(&scheme_lock);
    for (size_t i = 0; !open && i < sizeof builtin / sizeof builtin[0]; i++)
        if (builtin[i].kind == ZARR__SCHEME_FALLBACK && strlen(builtin[i].name) == k &&
            strncasecmp(builtin[i].name, url, k) == 0)
            open = builtin[i].open;
    if (!open)
        return zarr_error(ZARR_EUNSUPPORTED, "can't open '%s': no store is registered for URL scheme '%.*s'",
                          url, (int)k, url);
    rc = open(url, flags, out);
    if (rc == ZARR_OK && !*out)
        return zarr_error(ZARR_EIO, "can't open '%s': the opener of scheme '%.*s' returned no store", url,
                          (int)k, url);
    if (rc == ZARR_OK && (flags & ZARR_STORE_DURABLE))
        (*out)->durable = true; /* every store: its sync op (if any) decides what a sync pass does */
    return rc;
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
