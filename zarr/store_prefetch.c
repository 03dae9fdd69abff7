/*
 * store_prefetch.c: read-ahead views of a store (zarr__store_prefetch, store_impl.h). A caller about
 * to read many small values one after another (the documents of a group's children, probed and read
 * node by node) asks for them all at once: one get_many, which a store with latency runs with its
 * requests in flight together. The view answers get, get_range, get_into, size and exists of those
 * keys from memory, absent ones too (without a request), and forwards everything else to the store.
 * A write, delete or rename through the view drops the answers it could make stale first. The view is
 * short-lived: made for one listing or consolidation pass, then closed.
 */
#include "store_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    char    *key;
    zarr_buf val;
    int      result; /* ZARR_OK or ZARR_ENOTFOUND: the answer kept */
    bool     live;   /* false once dropped (a write through the view) */
} pf_entry;

typedef struct {
    zarr_store_fwd fwd;
    pf_entry      *e; /* sorted by key */
    size_t         n;
} pf_store;

#define PF(s) ((pf_store *)(s))

static int
cmp_entry(const void *a, const void *b)
{
    return strcmp(((const pf_entry *)a)->key, ((const pf_entry *)b)->key);
}

/* The live answer kept for `key`, or NULL (the store is asked). */
static pf_entry *
pf_find(zarr_store *s, const char *key)
{
    pf_entry  probe = {(char *)key, ZARR_BUF_INIT, 0, false};
    pf_entry *e     = PF(s)->n ? bsearch(&probe, PF(s)->e, PF(s)->n, sizeof *PF(s)->e, cmp_entry) : NULL;
    return e && e->live ? e : NULL;
}

static void
pf_drop_all(zarr_store *s)
{
    for (size_t i = 0; i < PF(s)->n; i++)
        PF(s)->e[i].live = false;
}

static int
pf_get(zarr_store *s, const char *key, zarr_buf *out)
{
    pf_entry *e = pf_find(s, key);
    out->size   = 0;
    if (!e)
        return zarr_store_fwd_get(s, key, out);
    return e->result != ZARR_OK ? e->result : zarr_buf_append(out, e->val.data, e->val.size);
}

static int
pf_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    pf_entry *e = pf_find(s, key);
    out->size   = 0;
    if (!e)
        return zarr_store_fwd_get_range(s, key, off, len, out);
    if (e->result != ZARR_OK)
        return e->result;
    if (off > e->val.size || (len != UINT64_MAX && len > e->val.size - off))
        return zarr_error(ZARR_ECODEC, "range %llu+%llu of key '%s' is past its end (%zu bytes)",
                          (unsigned long long)off, (unsigned long long)len, key, e->val.size);
    return zarr_buf_append(out, e->val.data + off, len == UINT64_MAX ? e->val.size - off : (size_t)len);
}

static int
pf_get_into(zarr_store *s, const char *key, void *dst, size_t n)
{
    pf_entry *e = pf_find(s, key);
    if (!e)
        return zarr_store_fwd_get_into(s, key, dst, n);
    if (e->result != ZARR_OK)
        return e->result;
    if (e->val.size != n)
        return zarr_error(ZARR_ECODEC, "key '%s' holds %zu bytes, not %zu", key, e->val.size, n);
    if (n)
        memcpy(dst, e->val.data, n);
    return ZARR_OK;
}

static int
pf_exists(zarr_store *s, const char *key)
{
    pf_entry *e = pf_find(s, key);
    return e ? e->result : zarr_store_fwd_exists(s, key);
}

static int
pf_size(zarr_store *s, const char *key, uint64_t *size)
{
    pf_entry *e = pf_find(s, key);
    if (!e)
        return zarr_store_fwd_size(s, key, size);
    if (e->result == ZARR_OK)
        *size = e->val.size;
    return e->result;
}

/* Writes: the answers they could make stale are dropped first, then the store does the write. */
static int
pf_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    pf_entry *e = pf_find(s, key);
    if (e)
        e->live = false;
    return zarr_store_fwd_set(s, key, data, n);
}

static int
pf_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data, const size_t *sizes,
            int *results)
{
    for (size_t i = 0; i < n; i++) {
        pf_entry *e = pf_find(s, keys[i]);
        if (e)
            e->live = false;
    }
    return zarr_store_fwd_set_many(s, n, keys, data, sizes, results);
}

static int
pf_del(zarr_store *s, const char *key)
{
    pf_entry *e = pf_find(s, key);
    if (e)
        e->live = false;
    return zarr_store_fwd_del(s, key);
}

static int
pf_del_prefix(zarr_store *s, const char *prefix)
{
    pf_drop_all(s);
    return zarr_store_fwd_del_prefix(s, prefix);
}

static int
pf_rename(zarr_store *s, const char *from, const char *to)
{
    pf_drop_all(s);
    return zarr_store_fwd_rename(s, from, to);
}

static void
pf_destroy(zarr_store *s)
{
    for (size_t i = 0; i < PF(s)->n; i++) {
        free(PF(s)->e[i].key);
        zarr_buf_free(&PF(s)->e[i].val);
    }
    free(PF(s)->e);
    zarr_store_fwd_fini(&PF(s)->fwd);
    free(s);
}

static const zarr_store_ops prefetch_ops = {
    .name           = "prefetch",
    .get            = pf_get,
    .get_range      = pf_get_range,
    .set            = pf_set,
    .del            = pf_del,
    .del_prefix     = pf_del_prefix,
    .list           = zarr_store_fwd_list,
    .exists         = pf_exists,
    .get_many       = zarr_store_fwd_get_many,
    .set_many       = pf_set_many,
    .rename         = pf_rename,
    .flush          = zarr_store_fwd_flush,
    .destroy        = pf_destroy,
    .mtime          = zarr_store_fwd_mtime,
    .size           = pf_size,
    .get_into       = pf_get_into,
    .list_keys      = zarr_store_fwd_list_keys,
    .remove_root    = zarr_store_fwd_remove_root,
    .sync           = zarr_store_fwd_sync,
    .get_range_into = zarr_store_fwd_get_range_into,
    /* no writer ops: the generic form gathers the pieces and stores the value with pf_set */
};

int
zarr__store_prefetch(zarr_store *s, size_t n, const char *const *keys, zarr_store **out)
{
    pf_store       *p    = NULL;
    zarr_store_req *reqs = NULL;
    int             rc   = ZARR_OK;

    *out = NULL;
    if (!s || (n && !keys))
        return zarr_error(ZARR_EINVAL, "zarr__store_prefetch: a store and keys are needed");
    zarr_store_ref(s);
    if (n < 2 || !s->prefers_batches) { /* nothing to gain: the store itself */
        *out = s;
        return ZARR_OK;
    }
    if (!(p = calloc(1, sizeof *p))) {
        zarr_store_close(s);
        return zarr_error(ZARR_ENOMEM, "out of memory");
    }
    if ((rc = zarr_store_fwd_init(&p->fwd, &prefetch_ops, s)) != ZARR_OK) { /* closed our reference */
        free(p);
        return rc;
    }
    if (!(p->e = calloc(n, sizeof *p->e)) || !(reqs = calloc(n, sizeof *reqs)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++, p->n++)
        if (!(p->e[i].key = strdup(keys[i])))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    qsort(p->e, p->n, sizeof *p->e, cmp_entry);
    for (size_t i = 0; i < n; i++)
        reqs[i] = (zarr_store_req){p->e[i].key, 0, UINT64_MAX, false, &p->e[i].val, UINT64_MAX, ZARR_OK};
    (void)zarr__store_op_get_many(s, n, reqs); /* per item results */
    zarr_error_clear();
    for (size_t i = 0; i < n; i++) {
        p->e[i].result = reqs[i].result;
        /* a failure other than absence is not kept: the store is asked again and reports it */
        p->e[i].live = reqs[i].result == ZARR_OK || reqs[i].result == ZARR_ENOTFOUND;
        /* a duplicate key: the first of the run answers (bsearch may find either: both hold the same) */
    }
    *out = &p->fwd.base;
    p    = NULL;
done:
    free(reqs);
    if (p)
        pf_destroy(&p->fwd.base);
    return rc;
}
