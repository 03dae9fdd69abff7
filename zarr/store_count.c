/*
 * store_count.c: the counting store of zarr_store_count.h: a forwarding store (store_fwd.c) whose every
 * op adds one to its counter (atomically) and forwards to the inner store. For tests and benchmarks
 * that assert how many store calls the core makes.
 */
#include "h5zarr/zarr_store_count.h"
#include "store_impl.h"

#include <stdlib.h>
#include <string.h>

#define CNT(s)    (&((zarr_store_count *)(s))->n)
#define BUMP(f)   __atomic_add_fetch(&CNT(s)->f, 1, __ATOMIC_RELAXED)
#define ADD(f, v) __atomic_add_fetch(&CNT(s)->f, (uint64_t)(v), __ATOMIC_RELAXED)

static int
c_get(zarr_store *s, const char *key, zarr_buf *out)
{
    int rc;
    BUMP(get);
    if ((rc = zarr_store_fwd_get(s, key, out)) == ZARR_OK)
        ADD(bytes_read, out->size);
    return rc;
}

static int
c_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    int rc;
    BUMP(get_range);
    if ((rc = zarr_store_fwd_get_range(s, key, off, len, out)) == ZARR_OK)
        ADD(bytes_read, out->size);
    return rc;
}

static int
c_get_into(zarr_store *s, const char *key, void *dst, size_t n)
{
    int rc;
    BUMP(get_into);
    if ((rc = zarr_store_fwd_get_into(s, key, dst, n)) == ZARR_OK)
        ADD(bytes_read, n);
    return rc;
}

/* A ranged read like get_range's, counted as one. */
static int
c_get_range_into(zarr_store *s, const char *key, uint64_t off, void *dst, size_t n)
{
    int rc;
    BUMP(get_range);
    if ((rc = zarr_store_fwd_get_range_into(s, key, off, dst, n)) == ZARR_OK)
        ADD(bytes_read, n);
    return rc;
}

static int
c_get_many(zarr_store *s, size_t n, zarr_store_req *reqs)
{
    int rc;
    BUMP(get_many);
    ADD(get_many_items, n);
    for (size_t i = 0; i < n; i++)
        if (reqs[i].suffix)
            BUMP(get_many_suffix);
    rc = zarr_store_fwd_get_many(s, n, reqs);
    for (size_t i = 0; i < n; i++)
        if (reqs[i].result == ZARR_OK)
            ADD(bytes_read, reqs[i].out->size);
    return rc;
}

static int
c_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    BUMP(set);
    ADD(bytes_written, n);
    return zarr_store_fwd_set(s, key, data, n);
}

static int
c_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data, const size_t *sizes,
           int *results)
{
    BUMP(set_many);
    ADD(set_many_items, n);
    for (size_t i = 0; i < n; i++)
        ADD(bytes_written, sizes[i]);
    return zarr_store_fwd_set_many(s, n, keys, data, sizes, results);
}

static int
c_writer_open(zarr_store *s, const char *key, void **h)
{
    BUMP(writer_open);
    return zarr_store_fwd_writer_open(s, key, h);
}

static int
c_writer_write(zarr_store *s, void *h, uint64_t off, const void *data, size_t n)
{
    BUMP(writer_write);
    ADD(bytes_written, n);
    return zarr_store_fwd_writer_write(s, h, off, data, n);
}

static int
c_writer_close(zarr_store *s, void *h, bool commit)
{
    if (commit)
        BUMP(set); /* a value stored */
    return zarr_store_fwd_writer_close(s, h, commit);
}

static int
c_del(zarr_store *s, const char *key)
{
    BUMP(del);
    return zarr_store_fwd_del(s, key);
}

static int
c_del_prefix(zarr_store *s, const char *prefix)
{
    BUMP(del_prefix);
    return zarr_store_fwd_del_prefix(s, prefix);
}

static int
c_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud)
{
    BUMP(list);
    return zarr_store_fwd_list(s, prefix, cb, ud);
}

static int
c_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud)
{
    BUMP(list_keys);
    return zarr_store_fwd_list_keys(s, prefix, cb, ud);
}

static int
c_exists(zarr_store *s, const char *key)
{
    BUMP(exists);
    return zarr_store_fwd_exists(s, key);
}

static int
c_size(zarr_store *s, const char *key, uint64_t *size)
{
    BUMP(size);
    return zarr_store_fwd_size(s, key, size);
}

static int
c_mtime(zarr_store *s, const char *key, int64_t *sec)
{
    BUMP(mtime);
    return zarr_store_fwd_mtime(s, key, sec);
}

static int
c_rename(zarr_store *s, const char *from, const char *to)
{
    BUMP(rename);
    return zarr_store_fwd_rename(s, from, to);
}

static int
c_flush(zarr_store *s)
{
    BUMP(flush);
    return zarr_store_fwd_flush(s);
}

static int
c_sync(zarr_store *s)
{
    BUMP(sync);
    return zarr_store_fwd_sync(s);
}

static const zarr_store_ops count_ops = {
    .name           = "count",
    .get            = c_get,
    .get_range      = c_get_range,
    .set            = c_set,
    .del            = c_del,
    .del_prefix     = c_del_prefix,
    .list           = c_list,
    .exists         = c_exists,
    .get_many       = c_get_many,
    .set_many       = c_set_many,
    .rename         = c_rename,
    .flush          = c_flush,
    .destroy        = zarr_store_fwd_destroy,
    .mtime          = c_mtime,
    .size           = c_size,
    .get_into       = c_get_into,
    .get_range_into = c_get_range_into,
    .list_keys      = c_list_keys,
    .remove_root    = zarr_store_fwd_remove_root,
    .sync           = c_sync,
    .writer_open    = c_writer_open,
    .writer_write   = c_writer_write,
    .writer_close   = c_writer_close,
};

int
zarr_store_count_new(zarr_store *inner, bool prefers_batches, zarr_store_count **out)
{
    zarr_store_count *c;
    int               rc;

    if (!out || !inner) {
        zarr_store_close(inner);
        return zarr_error(ZARR_EINVAL, "zarr_store_count_new: inner and out must not be NULL");
    }
    *out = NULL;
    if (!(c = calloc(1, sizeof *c))) {
        zarr_store_close(inner);
        return zarr_error(ZARR_ENOMEM, "out of memory making a counting store");
    }
    if ((rc = zarr_store_fwd_init(&c->fwd, &count_ops, inner)) != ZARR_OK) {
        free(c);
        return rc;
    }
    c->fwd.base.prefers_batches = prefers_batches;
    *out                        = c;
    return ZARR_OK;
}

zarr_store *
zarr_store_count_store(zarr_store_count *c)
{
    return c ? &c->fwd.base : NULL;
}

void
zarr_store_count_read(const zarr_store_count *c, zarr_store_counts *out)
{
    const uint64_t *src;
    uint64_t       *dst;
    if (!c || !out)
        return;
    src = (const uint64_t *)&c->n;
    dst = (uint64_t *)out;
    for (size_t i = 0; i < sizeof *out / sizeof(uint64_t); i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

void
zarr_store_count_reset(zarr_store_count *c)
{
    uint64_t *p;
    if (!c)
        return;
    p = (uint64_t *)&c->n;
    for (size_t i = 0; i < sizeof c->n / sizeof(uint64_t); i++)
        __atomic_store_n(&p[i], 0, __ATOMIC_RELAXED);
}
