/*
 * store_fwd.c: forwarding stores, the base of every store that wraps another one (the connector's
 * root-array view, the counting store of store_count.c, later fault injection and caches). A wrapper
 * embeds a zarr_store_fwd, points its ops table at its own functions for what it changes and at the
 * zarr_store_fwd_* functions for the rest. These call the inner store's ops directly with the key they
 * are given (already valid: the public wrappers checked it on the way in, or the wrapper mapped a
 * valid key onto another), and use the generic forms of store.c for optional ops the inner store
 * lacks, so a wrapper never loses the inner store's own fast forms (sizes, batches, zero-copy reads).
 */
#include "store_impl.h"

#include <stdlib.h>
#include <string.h>

#define INNER(s) (((zarr_store_fwd *)(s))->inner)

int
zarr_store_fwd_init(zarr_store_fwd *self, const zarr_store_ops *ops, zarr_store *inner)
{
    if (!self || !ops || !inner) {
        zarr_store_close(inner);
        return zarr_error(ZARR_EINVAL, "zarr_store_fwd_init: self, ops and inner must not be NULL");
    }
    memset(self, 0, sizeof *self);
    if (!(self->base.url = strdup(inner->url ? inner->url : ""))) {
        zarr_store_close(inner);
        return zarr_error(ZARR_ENOMEM, "out of memory wrapping store '%s'", inner->url ? inner->url : "");
    }
    self->base.ops             = ops;
    self->base.refcount        = 1;
    self->base.readonly        = inner->readonly;
    self->base.atomic_writes   = inner->atomic_writes;
    self->base.no_consolidated = inner->no_consolidated;
    self->base.prefers_batches = inner->prefers_batches;
    self->base.durable         = inner->durable;
    self->inner                = inner;
    return ZARR_OK;
}

void
zarr_store_fwd_fini(zarr_store_fwd *self)
{
    if (!self)
        return;
    zarr_store_close(self->inner);
    self->inner = NULL;
    free(self->base.url);
    self->base.url = NULL;
}

int
zarr_store_fwd_get(zarr_store *s, const char *key, zarr_buf *out)
{
    return INNER(s)->ops->get(INNER(s), key, out);
}

int
zarr_store_fwd_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    return INNER(s)->ops->get_range(INNER(s), key, off, len, out);
}

int
zarr_store_fwd_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    return INNER(s)->ops->set(INNER(s), key, data, n);
}

int
zarr_store_fwd_del(zarr_store *s, const char *key)
{
    return INNER(s)->ops->del(INNER(s), key);
}

int
zarr_store_fwd_del_prefix(zarr_store *s, const char *prefix)
{
    return INNER(s)->ops->del_prefix(INNER(s), prefix);
}

int
zarr_store_fwd_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud)
{
    return INNER(s)->ops->list(INNER(s), prefix, cb, ud);
}

int
zarr_store_fwd_exists(zarr_store *s, const char *key)
{
    return INNER(s)->ops->exists(INNER(s), key);
}

int
zarr_store_fwd_get_many(zarr_store *s, size_t n, zarr_store_req *reqs)
{
    return zarr__store_op_get_many(INNER(s), n, reqs);
}

int
zarr_store_fwd_del_many(zarr_store *s, size_t n, const char *const *keys, int *results)
{
    return zarr__store_op_del_many(INNER(s), n, keys, results);
}

int
zarr_store_fwd_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data,
                        const size_t *sizes, int *results)
{
    return zarr__store_op_set_many(INNER(s), n, keys, data, sizes, results);
}

int
zarr_store_fwd_rename(zarr_store *s, const char *from, const char *to)
{
    zarr_store *in = INNER(s);
    if (!in->ops->rename)
        return zarr_error(ZARR_EUNSUPPORTED, "store '%s' (%s) can't rename", in->url ? in->url : "",
                          in->ops->name);
    return in->ops->rename(in, from, to);
}

int
zarr_store_fwd_flush(zarr_store *s)
{
    zarr_store *in = INNER(s);
    return in->ops->flush ? in->ops->flush(in) : ZARR_OK;
}

void
zarr_store_fwd_destroy(zarr_store *s)
{
    zarr_store_fwd_fini((zarr_store_fwd *)s);
    free(s);
}

int
zarr_store_fwd_mtime(zarr_store *s, const char *key, int64_t *sec)
{
    zarr_store *in = INNER(s);
    return in->ops->mtime ? in->ops->mtime(in, key, sec) : ZARR_EUNSUPPORTED;
}

int
zarr_store_fwd_size(zarr_store *s, const char *key, uint64_t *size)
{
    return zarr__store_op_size(INNER(s), key, size);
}

int
zarr_store_fwd_get_into(zarr_store *s, const char *key, void *dst, size_t n)
{
    return zarr__store_get_into(INNER(s), key, dst, n);
}

int
zarr_store_fwd_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud)
{
    return zarr__store_op_list_keys(INNER(s), prefix, cb, ud);
}

int
zarr_store_fwd_remove_root(zarr_store *s)
{
    zarr_store *in = INNER(s);
    return in->ops->remove_root ? in->ops->remove_root(in) : ZARR_OK;
}

int
zarr_store_fwd_sync(zarr_store *s)
{
    zarr_store *in = INNER(s);
    return in->ops->sync ? in->ops->sync(in) : ZARR_OK;
}

int
zarr_store_fwd_writer_open(zarr_store *s, const char *key, void **h)
{
    return zarr__store_op_writer_open(INNER(s), key, h);
}

int
zarr_store_fwd_writer_write(zarr_store *s, void *h, uint64_t off, const void *data, size_t n)
{
    return zarr__store_op_writer_write(INNER(s), h, off, data, n);
}

int
zarr_store_fwd_writer_close(zarr_store *s, void *h, bool commit)
{
    return zarr__store_op_writer_close(INNER(s), h, commit);
}

int
zarr_store_fwd_get_range_into(zarr_store *s, const char *key, uint64_t off, void *dst, size_t n)
{
    return zarr__store_get_range_into(INNER(s), key, off, dst, n);
}

int
zarr_store_fwd_clear(zarr_store *s)
{
    zarr_store *in = INNER(s);
    return in->ops->clear ? in->ops->clear(in) : in->ops->del_prefix(in, "");
}

const zarr_store_ops zarr_store_fwd_ops = {
    .name           = "forward",
    .get            = zarr_store_fwd_get,
    .get_range      = zarr_store_fwd_get_range,
    .set            = zarr_store_fwd_set,
    .del            = zarr_store_fwd_del,
    .del_prefix     = zarr_store_fwd_del_prefix,
    .list           = zarr_store_fwd_list,
    .exists         = zarr_store_fwd_exists,
    .get_many       = zarr_store_fwd_get_many,
    .set_many       = zarr_store_fwd_set_many,
    .del_many       = zarr_store_fwd_del_many,
    .rename         = zarr_store_fwd_rename,
    .flush          = zarr_store_fwd_flush,
    .destroy        = zarr_store_fwd_destroy,
    .mtime          = zarr_store_fwd_mtime,
    .size           = zarr_store_fwd_size,
    .get_into       = zarr_store_fwd_get_into,
    .list_keys      = zarr_store_fwd_list_keys,
    .remove_root    = zarr_store_fwd_remove_root,
    .sync           = zarr_store_fwd_sync,
    .writer_open    = zarr_store_fwd_writer_open,
    .writer_write   = zarr_store_fwd_writer_write,
    .writer_close   = zarr_store_fwd_writer_close,
    .get_range_into = zarr_store_fwd_get_range_into,
    .clear          = zarr_store_fwd_clear,
};
