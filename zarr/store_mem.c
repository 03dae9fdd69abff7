/*
 * store_mem.c: the in-memory store: a hash map from key to value behind a read-write lock (reads run
 * in parallel, writes are exclusive). Values are copied in and out, so callers never share memory
 * with the store. "Directories" are implied by '/' in keys, as in every key-value store. Sizes come
 * from the map; a missing key is a bare ZARR_ENOTFOUND (zarr.h).
 */
#include "store_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct mem_entry {
    struct mem_entry *next;
    uint64_t          hash;
    size_t            size;
    uint8_t          *data; /* right after the key (inl) or a separate allocation */
    bool              inl;
    char              key[]; /* NUL-terminated */
} mem_entry;

typedef struct mem_store {
    zarr_store       base;
    pthread_rwlock_t lock;
    mem_entry      **slots;
    size_t           nslots; /* power of two */
    size_t           count;
} mem_store;

/* Frees an entry and its value. */
static void
entry_free(mem_entry *e)
{
    if (e && !e->inl)
        free(e->data);
    free(e);
}

static uint64_t
hash_key(const char *k)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *k; k++) {
        h ^= (uint8_t)*k;
        h *= 1099511628211ULL;
    }
    return h ^ (h >> 29);
}

/* Slot holding the pointer to the entry with `key` (or to the NULL at the end of its chain). */
static mem_entry **
find(mem_store *m, const char *key, uint64_t h)
{
    mem_entry **pp = &m->slots[h & (m->nslots - 1)];
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->hash == h && strcmp((*pp)->key, key) == 0)
            break;
    return pp;
}

static void
grow(mem_store *m)
{
    size_t      n     = m->nslots * 2;
    mem_entry **slots = calloc(n, sizeof *slots);
    if (!slots)
        return; /* keep the longer chains */
    for (size_t i = 0; i < m->nslots; i++) {
        mem_entry *e = m->slots[i], *next;
        for (; e; e = next) {
            next                     = e->next;
            e->next                  = slots[e->hash & (n - 1)];
            slots[e->hash & (n - 1)] = e;
        }
    }
    free(m->slots);
    m->slots  = slots;
    m->nslots = n;
}

/* Reads under the read lock (how: as dir_read in store_dir.c). A missing key is a bare ZARR_ENOTFOUND
 * (zarr.h). `*total` (may be NULL) gets the value's size. */
enum { WHOLE, RANGE, SUFFIX };

static int
mem_read_locked(mem_store *m, const char *key, int how, uint64_t off, uint64_t len, zarr_buf *out,
                uint64_t *total)
{
    mem_entry *e;
    int        rc;
    size_t     n;

    out->size = 0;
    if (!(e = *find(m, key, hash_key(key))))
        return ZARR_ENOTFOUND;
    if (how == WHOLE) {
        off = 0;
        n   = e->size;
    }
    else if (how == SUFFIX) {
        n   = len < e->size ? (size_t)len : e->size;
        off = e->size - n;
    }
    else if (off > e->size || (len != UINT64_MAX && len > e->size - off))
        return zarr_error(ZARR_ECODEC, "can't read bytes %llu+%llu of '%s': the value has only %zu bytes",
                          (unsigned long long)off, (unsigned long long)len, key, e->size);
    else
        n = len == UINT64_MAX ? e->size - (size_t)off : (size_t)len;
    if ((rc = zarr_buf_resize(out, n)) != ZARR_OK)
        return rc;
    if (n)
        memcpy(out->data, e->data + off, n);
    if (total)
        *total = e->size;
    return ZARR_OK;
}

static int
mem_read(zarr_store *s, const char *key, int how, uint64_t off, uint64_t len, zarr_buf *out)
{
    mem_store *m = (mem_store *)s;
    int        rc;
    pthread_rwlock_rdlock(&m->lock);
    rc = mem_read_locked(m, key, how, off, len, out, NULL);
    pthread_rwlock_unlock(&m->lock);
    return rc;
}

static int
mem_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    return mem_read(s, key, RANGE, off, len, out);
}

static int
mem_get(zarr_store *s, const char *key, zarr_buf *out)
{
    return mem_read(s, key, WHOLE, 0, 0, out);
}

/* The whole batch under one read lock. */
static int
mem_get_many(zarr_store *s, size_t n, zarr_store_req *reqs)
{
    mem_store *m     = (mem_store *)s;
    int        first = ZARR_OK;
    pthread_rwlock_rdlock(&m->lock);
    for (size_t i = 0; i < n; i++) {
        zarr_store_req *r   = &reqs[i];
        int             how = r->suffix ? SUFFIX : r->off == 0 && r->len == UINT64_MAX ? WHOLE : RANGE;
        r->total            = UINT64_MAX;
        r->result           = mem_read_locked(m, r->key, how, r->off, r->len, r->out, &r->total);
        if (r->result != ZARR_OK) {
            r->total = UINT64_MAX;
            if (first == ZARR_OK)
                first = r->result;
        }
    }
    pthread_rwlock_unlock(&m->lock);
    return first;
}

static int
mem_get_into(zarr_store *s, const char *key, void *dst, size_t n)
{
    mem_store *m = (mem_store *)s;
    mem_entry *e;
    int        rc = ZARR_OK;
    pthread_rwlock_rdlock(&m->lock);
    e = *find(m, key, hash_key(key));
    if (!e)
        rc = ZARR_ENOTFOUND;
    else if (e->size != n)
        rc = zarr_error(ZARR_ECODEC, "chunk '%s' holds %zu bytes, expected %zu", key, e->size, n);
    else if (n)
        memcpy(dst, e->data, n);
    pthread_rwlock_unlock(&m->lock);
    return rc;
}

static int
mem_get_range_into(zarr_store *s, const char *key, uint64_t off, void *dst, size_t n)
{
    mem_store *m = (mem_store *)s;
    mem_entry *e;
    int        rc = ZARR_OK;
    pthread_rwlock_rdlock(&m->lock);
    e = *find(m, key, hash_key(key));
    if (!e)
        rc = ZARR_ENOTFOUND;
    else if (off > e->size || e->size - off < n)
        rc = zarr_error(ZARR_ECODEC, "can't read bytes %llu+%zu of '%s': the value has only %zu bytes",
                        (unsigned long long)off, n, key, e->size);
    else if (n)
        memcpy(dst, e->data + off, n);
    pthread_rwlock_unlock(&m->lock);
    return rc;
}

static int
mem_size(zarr_store *s, const char *key, uint64_t *size)
{
    mem_store *m = (mem_store *)s;
    mem_entry *e;
    pthread_rwlock_rdlock(&m->lock);
    e = *find(m, key, hash_key(key));
    if (e)
        *size = e->size;
    pthread_rwlock_unlock(&m->lock);
    return e ? ZARR_OK : ZARR_ENOTFOUND;
}

static int
mem_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    mem_store *m    = (mem_store *)s;
    size_t     klen = strlen(key);
    mem_entry *e, *old, **pp;

    /* One allocation (entry, key and value, built outside the lock), then one locked insert or swap:
     * a chunk store costs one malloc and one lock round trip (it was two of each). */
    if (n > SIZE_MAX - sizeof *e - klen - 1 || !(e = malloc(sizeof *e + klen + 1 + n)))
        return zarr_error(ZARR_ENOMEM, "out of memory storing %zu bytes at '%s'", n, key);
    memcpy(e->key, key, klen + 1);
    e->data = (uint8_t *)e->key + klen + 1;
    e->inl  = true;
    e->size = n;
    e->hash = hash_key(key);
    if (n)
        memcpy(e->data, data, n);
    pthread_rwlock_wrlock(&m->lock);
    pp = find(m, key, e->hash);
    if ((old = *pp))
        e->next = old->next; /* replace in place */
    else
        e->next = NULL;
    *pp = e;
    if (!old && ++m->count > m->nslots)
        grow(m);
    pthread_rwlock_unlock(&m->lock);
    entry_free(old); /* readers copy under the lock, so nobody still looks at it */
    return ZARR_OK;
}

static int
mem_del(zarr_store *s, const char *key)
{
    mem_store *m = (mem_store *)s;
    mem_entry *e, **pp;
    pthread_rwlock_wrlock(&m->lock);
    pp = find(m, key, hash_key(key));
    if ((e = *pp)) {
        *pp = e->next;
        m->count--;
    }
    pthread_rwlock_unlock(&m->lock);
    entry_free(e);
    return ZARR_OK;
}

/* True if `key` is `prefix` or below it ("" matches all). */
static bool
under(const char *key, const char *prefix, size_t plen)
{
    if (plen == 0)
        return true;
    return strncmp(key, prefix, plen) == 0 && (key[plen] == '\0' || key[plen] == '/');
}

static int
mem_del_prefix(zarr_store *s, const char *prefix)
{
    mem_store *m    = (mem_store *)s;
    size_t     plen = strlen(prefix);
    mem_entry *dead = NULL;

    pthread_rwlock_wrlock(&m->lock);
    for (size_t i = 0; i < m->nslots; i++) {
        mem_entry **pp = &m->slots[i];
        while (*pp) {
            mem_entry *e = *pp;
            if (under(e->key, prefix, plen)) {
                *pp     = e->next;
                e->next = dead;
                dead    = e;
                m->count--;
            }
            else
                pp = &e->next;
        }
    }
    pthread_rwlock_unlock(&m->lock);
    while (dead) {
        mem_entry *next = dead->next;
        entry_free(dead);
        dead = next;
    }
    return ZARR_OK;
}

static int
mem_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud)
{
    mem_store     *m    = (mem_store *)s;
    size_t         plen = strlen(prefix);
    zarr__children c    = {0};
    int            rc   = ZARR_OK;

    /* Collect under the lock, call back without it (callbacks may use the store). */
    pthread_rwlock_rdlock(&m->lock);
    for (size_t i = 0; i < m->nslots && rc == ZARR_OK; i++)
        for (mem_entry *e = m->slots[i]; e && rc == ZARR_OK; e = e->next)
            rc = zarr__children_add(&c, prefix, plen, e->key);
    pthread_rwlock_unlock(&m->lock);
    if (rc != ZARR_OK) {
        zarr__children_free(&c);
        return rc;
    }
    return zarr__children_emit(&c, cb, ud);
}

/* Every key below `prefix` with its size: gathered under the lock (one pass over the map), called back
 * without it (callbacks may use the store). */
static int
mem_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud)
{
    mem_store *m    = (mem_store *)s;
    size_t     plen = strlen(prefix), n = 0, cap = 0;
    char     **keys  = NULL;
    uint64_t  *sizes = NULL;
    int        rc    = ZARR_OK;

    pthread_rwlock_rdlock(&m->lock);
    for (size_t i = 0; i < m->nslots && rc == ZARR_OK; i++)
        for (mem_entry *e = m->slots[i]; e && rc == ZARR_OK; e = e->next) {
            if (plen && (strncmp(e->key, prefix, plen) != 0 || e->key[plen] != '/'))
                continue;
            if (n == cap) {
                size_t    nc = cap ? 2 * cap : 64;
                char    **nk = realloc(keys, nc * sizeof *nk);
                uint64_t *ns;
                if (nk)
                    keys = nk;
                if (!nk || !(ns = realloc(sizes, nc * sizeof *ns))) {
                    rc = zarr_error(ZARR_ENOMEM, "out of memory listing '%s'", prefix);
                    break;
                }
                sizes = ns;
                cap   = nc;
            }
            if (!(keys[n] = strdup(e->key))) {
                rc = zarr_error(ZARR_ENOMEM, "out of memory listing '%s'", prefix);
                break;
            }
            sizes[n++] = e->size;
        }
    pthread_rwlock_unlock(&m->lock);
    for (size_t i = 0; i < n && rc == ZARR_OK; i++)
        rc = cb(keys[i], sizes[i], ud);
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
    free(sizes);
    return rc;
}

static int
mem_exists(zarr_store *s, const char *key)
{
    mem_store *m = (mem_store *)s;
    bool       found;
    pthread_rwlock_rdlock(&m->lock);
    found = *find(m, key, hash_key(key)) != NULL;
    pthread_rwlock_unlock(&m->lock);
    return found ? ZARR_OK : ZARR_ENOTFOUND;
}

static int
mem_rename(zarr_store *s, const char *from, const char *to)
{
    mem_store *m    = (mem_store *)s;
    size_t     flen = strlen(from), tlen = strlen(to), i;
    mem_entry *moved = NULL;
    int        rc    = ZARR_OK;
    bool       any   = false;

    pthread_rwlock_wrlock(&m->lock);
    for (i = 0; i < m->nslots; i++)
        for (mem_entry *e = m->slots[i]; e; e = e->next) {
            if (under(e->key, to, tlen)) {
                rc = zarr_error(ZARR_EEXIST, "can't rename '%s' to '%s': the target exists", from, to);
                goto done;
            }
            any |= under(e->key, from, flen);
        }
    if (!any) {
        rc = zarr_error(ZARR_ENOTFOUND, "can't rename '%s': not found in memory store", from);
        goto done;
    }
    /* Unlink the moved entries, rebuild them under the new names, insert them again. */
    for (i = 0; i < m->nslots; i++) {
        mem_entry **pp = &m->slots[i];
        while (*pp) {
            mem_entry *e = *pp;
            if (under(e->key, from, flen)) {
                *pp     = e->next;
                e->next = moved;
                moved   = e;
                m->count--;
            }
            else
                pp = &e->next;
        }
    }
    while (moved) {
        mem_entry *e    = moved, *ne;
        size_t     rlen = strlen(e->key + flen);
        moved           = e->next;
        ne              = malloc(sizeof *ne + tlen + rlen + 1 + (e->inl ? e->size : 0));
        if (!ne) {
            rc = zarr_error(ZARR_ENOMEM, "out of memory renaming '%s'", from);
            ne = e; /* keep the old name rather than lose the value */
        }
        else {
            memcpy(ne->key, to, tlen);
            memcpy(ne->key + tlen, e->key + flen, rlen + 1);
            ne->inl  = e->inl;
            ne->data = e->data;
            if (e->inl) {
                ne->data = (uint8_t *)ne->key + tlen + rlen + 1;
                memcpy(ne->data, e->data, e->size);
            }
            ne->size = e->size;
            ne->hash = hash_key(ne->key);
            free(e);
        }
        ne->next                             = m->slots[ne->hash & (m->nslots - 1)];
        m->slots[ne->hash & (m->nslots - 1)] = ne;
        m->count++;
    }
done:
    pthread_rwlock_unlock(&m->lock);
    return rc;
}

int
zarr__store_mem_foreach(zarr_store *s, int (*cb)(const char *key, const void *data, size_t n, void *ud),
                        void       *ud)
{
    mem_store *m  = (mem_store *)s;
    int        rc = 0;
    pthread_rwlock_rdlock(&m->lock);
    for (size_t i = 0; i < m->nslots && !rc; i++)
        for (mem_entry *e = m->slots[i]; e && !rc; e = e->next)
            rc = cb(e->key, e->data, e->size, ud);
    pthread_rwlock_unlock(&m->lock);
    return rc;
}

static int
mem_flush(zarr_store *s)
{
    (void)s;
    return ZARR_OK;
}

static void
mem_destroy(zarr_store *s)
{
    mem_store *m = (mem_store *)s;
    for (size_t i = 0; i < m->nslots; i++) {
        mem_entry *e = m->slots[i], *next;
        for (; e; e = next) {
            next = e->next;
            entry_free(e);
        }
    }
    free(m->slots);
    pthread_rwlock_destroy(&m->lock);
    free(s->url);
    free(m);
}

static const zarr_store_ops mem_ops = {
    .name           = "mem",
    .get            = mem_get,
    .get_range      = mem_get_range,
    .set            = mem_set,
    .del            = mem_del,
    .del_prefix     = mem_del_prefix,
    .list           = mem_list,
    .exists         = mem_exists,
    .get_many       = mem_get_many,
    .set_many       = NULL,
    .rename         = mem_rename,
    .flush          = mem_flush,
    .destroy        = mem_destroy,
    .size           = mem_size,
    .get_into       = mem_get_into,
    .get_range_into = mem_get_range_into,
    .list_keys      = mem_list_keys,
    .sync           = NULL, /* durable or not: nothing here outlives the process, nothing to sync */
};

int
zarr_store_new_mem(zarr_store **out)
{
    mem_store *m;

    if (!out)
        return zarr_error(ZARR_EINVAL, "zarr_store_new_mem: out is NULL");
    *out = NULL;
    if (!(m = calloc(1, sizeof *m)) || !(m->slots = calloc(64, sizeof *m->slots)) ||
        !(m->base.url = strdup("memory://"))) {
        if (m)
            free(m->slots);
        free(m);
        return zarr_error(ZARR_ENOMEM, "out of memory creating a memory store");
    }
    m->nslots = 64;
    if (pthread_rwlock_init(&m->lock, NULL) != 0) {
        free(m->base.url);
        free(m->slots);
        free(m);
        return zarr_error(ZARR_ENOMEM, "can't create the memory store's lock");
    }
    m->base.ops             = &mem_ops;
    m->base.refcount        = 1;
    m->base.readonly        = false;
    m->base.atomic_writes   = true;
    m->base.prefers_batches = false; /* a call is a lock round trip */
    *out                    = &m->base;
    return ZARR_OK;
}
