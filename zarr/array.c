/*
 * array.c: array handles. Opening reads the metadata (zarr_node_probe, then the v3 or v2 parser);
 * creating writes it; the handle owns a store reference, the metadata, the engine options and a
 * lazily built "fill chunk" (one chunk of fill elements in memory form) that the engine uses to
 * initialise partial chunks, pad edge chunks, answer reads of missing chunks and detect chunks equal
 * to the fill value. Also: resize and the stored-bytes count, both run as pool jobs.
 */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
zarr_engine_defaults(zarr_engine_opts *o)
{
    if (!o)
        return;
    o->pool = NULL;
    /* Below 64 KiB of chunk data a job runs on the caller: waking a worker and handing the job back
     * costs ~10-30 us (futex wake, context switch, cache misses), which is what memcpy/encode of 64
     * KiB costs; above it the second core pays for itself. One-chunk jobs always run inline. */
    o->inline_bytes       = 64 * 1024;
    o->write_empty_chunks = false;
}

/* "<path>/<name>" or "<name>" for the root. */
static int
node_key(const char *path, const char *name, char *key, size_t n)
{
    int k = *path ? snprintf(key, n, "%s/%s", path, name) : snprintf(key, n, "%s", name);
    if (k < 0 || (size_t)k >= n)
        return zarr_error(ZARR_EOVERFLOW, "key for '%s' under '/%s' is too long", name, path);
    return ZARR_OK;
}

/* Copies `path` without leading and trailing '/'. */
static char *
norm_path(const char *path)
{
    size_t n;
    char  *p;
    if (!path)
        path = "";
    while (*path == '/')
        path++;
    n = strlen(path);
    while (n && path[n - 1] == '/')
        n--;
    if (!(p = malloc(n + 1)))
        return NULL;
    memcpy(p, path, n);
    p[n] = '\0';
    return p;
}

static int
array_new(zarr_store *s, const char *path, zarr_array **out)
{
    zarr_array *a;
    int         rc;

    if (!(a = calloc(1, sizeof *a)) || !(a->path = norm_path(path))) {
        free(a);
        return zarr_error(ZARR_ENOMEM, "out of memory opening array '%s'", path ? path : "");
    }
    if (*a->path && (rc = zarr__store_check_key(a->path, false)) != ZARR_OK) {
        free(a->path);
        free(a);
        return zarr_error_wrap(rc, "invalid array path: ");
    }
    pthread_mutex_init(&a->lock, NULL);
    zarr_engine_defaults(&a->opts);
    zarr_store_ref(s);
    a->store = s;
    *out     = a;
    return ZARR_OK;
}

void
zarr_array_close(zarr_array *a)
{
    if (!a)
        return;
    zarr_array_meta_free(a->meta);
    zarr_store_close(a->store);
    free(a->fill_chunk);
    free(a->path);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

static int
check_meta(const zarr_array_meta *m, const char *path)
{
    if (!m || !m->dtype || !m->chain)
        return zarr_error(ZARR_EMETA, "array '/%s' has incomplete metadata", path);
    if (m->ndim < 0 || m->ndim > ZARR_MAX_DIMS)
        return zarr_error(ZARR_EMETA, "array '/%s' has rank %d (at most %d)", path, m->ndim, ZARR_MAX_DIMS);
    if (m->dtype->size == 0)
        return zarr_error(ZARR_EMETA, "array '/%s' has a zero-size data type", path);
    for (int d = 0; d < m->ndim; d++)
        if (m->chunks[d] == 0)
            return zarr_error(ZARR_EMETA, "array '/%s' has chunk size 0 in dimension %d", path, d);
    return ZARR_OK;
}

int
zarr_array_open(zarr_store *s, const char *path, zarr_array **out)
{
    zarr_array    *a = NULL;
    zarr_node_type type;
    int            format = 0, rc = ZARR_OK;
    char           key[4096], key2[4096];
    zarr_buf       doc = ZARR_BUF_INIT, attrs = ZARR_BUF_INIT;

    if (!s || !out)
        return zarr_error(ZARR_EINVAL, "zarr_array_open: store and out must not be NULL");
    *out = NULL;
    ZARR_TRY(array_new(s, path, &a));
    ZARR_TRY(zarr_node_probe(s, a->path, &type, &format));
    if (type != ZARR_NODE_ARRAY)
        ZARR_FAIL(ZARR_ENOTFOUND, "no array at '/%s'%s", a->path,
                  type == ZARR_NODE_GROUP ? " (it is a group)" : "");
    if (format == 3) {
        ZARR_TRY(node_key(a->path, "zarr.json", key, sizeof key));
        ZARR_TRY(zarr_store_get(s, key, &doc));
        ZARR_TRY(zarr_array_meta_parse_v3((const char *)doc.data, doc.size, key, &a->meta));
    }
    else {
        bool have_attrs;
        ZARR_TRY(node_key(a->path, ".zarray", key, sizeof key));
        ZARR_TRY(node_key(a->path, ".zattrs", key2, sizeof key2));
        ZARR_TRY(zarr_store_get(s, key, &doc));
        rc = zarr_store_get(s, key2, &attrs);
        if (rc != ZARR_OK && rc != ZARR_ENOTFOUND)
            goto done;
        have_attrs = rc == ZARR_OK;
        rc         = ZARR_OK;
        ZARR_TRY(zarr_array_meta_parse_v2((const char *)doc.data, doc.size,
                                          have_attrs ? (const char *)attrs.data : NULL,
                                          have_attrs ? attrs.size : 0, key, &a->meta));
    }
    ZARR_TRY(check_meta(a->meta, a->path));
    *out = a;
    a    = NULL;
done:
    zarr_buf_free(&doc);
    zarr_buf_free(&attrs);
    zarr_array_close(a);
    return rc;
}

int
zarr_array_write_meta(zarr_array *a)
{
    char *text = NULL, *zattrs = NULL;
    char  key[4096];
    int   rc = ZARR_OK;

    if (!a)
        return zarr_error(ZARR_EINVAL, "array is NULL");
    if (a->meta->zarr_format == 3) {
        ZARR_TRY(zarr_array_meta_to_v3(a->meta, &text));
        ZARR_TRY(node_key(a->path, "zarr.json", key, sizeof key));
        ZARR_TRY(zarr_store_set(a->store, key, text, strlen(text)));
    }
    else {
        ZARR_TRY(zarr_array_meta_to_v2(a->meta, &text, &zattrs));
        ZARR_TRY(node_key(a->path, ".zarray", key, sizeof key));
        ZARR_TRY(zarr_store_set(a->store, key, text, strlen(text)));
        ZARR_TRY(node_key(a->path, ".zattrs", key, sizeof key));
        if (zattrs)
            ZARR_TRY(zarr_store_set(a->store, key, zattrs, strlen(zattrs)));
        else
            ZARR_TRY(zarr_store_del(a->store, key));
    }
done:
    free(text);
    free(zattrs);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't write the metadata of array '/%s': ", a->path);
    return rc;
}

int
zarr_array_create(zarr_store *s, const char *path, zarr_array_meta *meta, bool overwrite, zarr_array **out)
{
    zarr_array    *a = NULL;
    zarr_node_type type;
    int            rc = ZARR_OK;

    if (out)
        *out = NULL;
    if (!s || !out || !meta) {
        zarr_array_meta_free(meta);
        return zarr_error(ZARR_EINVAL, "zarr_array_create: store, meta and out must not be NULL");
    }
    if ((rc = array_new(s, path, &a)) != ZARR_OK) {
        zarr_array_meta_free(meta);
        return rc;
    }
    a->meta = meta;
    ZARR_TRY(check_meta(meta, a->path));
    if (meta->zarr_format != 2 && meta->zarr_format != 3)
        ZARR_FAIL(ZARR_EINVAL, "can't create array '/%s': zarr_format %d", a->path, meta->zarr_format);
    if (overwrite)
        ZARR_TRY(zarr_store_del_prefix(s, a->path)); /* the old node and all its chunks */
    else {
        ZARR_TRY(zarr_node_probe(s, a->path, &type, NULL));
        if (type != ZARR_NODE_NONE)
            ZARR_FAIL(ZARR_EEXIST, "can't create array '/%s': a %s exists there", a->path,
                      type == ZARR_NODE_GROUP ? "group" : "array");
    }
    ZARR_TRY(zarr_array_write_meta(a));
    *out = a;
    a    = NULL;
done:
    zarr_array_close(a);
    return rc;
}

const zarr_array_meta *
zarr_array_meta_get(const zarr_array *a)
{
    return a ? a->meta : NULL;
}

zarr_array_meta *
zarr_array_meta_mut(zarr_array *a)
{
    return a ? a->meta : NULL;
}

const char *
zarr_array_path(const zarr_array *a)
{
    return a ? a->path : NULL;
}

void
zarr_array_set_opts(zarr_array *a, const zarr_engine_opts *o)
{
    if (!a)
        return;
    if (o)
        a->opts = *o;
    else
        zarr_engine_defaults(&a->opts);
}

int
zarr__array_fill_chunk(zarr_array *a)
{
    const zarr_array_meta *m  = a->meta;
    size_t                 es = m->dtype->size, n = es, bytes;
    uint64_t               nelem = 1;
    int                    rc    = ZARR_OK;
    uint8_t               *p;

    for (int d = 0; d < m->ndim; d++)
        if (!zarr__mul_ok(nelem, m->chunks[d], &nelem))
            return zarr_error(ZARR_EOVERFLOW, "chunk size of '/%s' overflows", a->path);
    if (!zarr__mul_ok(nelem, es, &nelem) || nelem > SIZE_MAX)
        return zarr_error(ZARR_EOVERFLOW, "chunk size of '/%s' overflows", a->path);
    bytes = (size_t)nelem;
    pthread_mutex_lock(&a->lock);
    if (a->fill_chunk && a->fill_chunk_bytes == bytes)
        goto done;
    free(a->fill_chunk);
    a->fill_chunk = NULL;
    if (!(p = malloc(bytes ? bytes : 1))) {
        rc = zarr_error(ZARR_ENOMEM, "out of memory allocating a fill chunk of %zu bytes for '/%s'", bytes,
                        a->path);
        goto done;
    }
    if (m->fill)
        memcpy(p, m->fill, es);
    else
        memset(p, 0, es);
    a->fill_is_zero = true;
    for (size_t k = 0; k < es; k++)
        if (p[k])
            a->fill_is_zero = false;
    if (a->fill_is_zero)
        memset(p, 0, bytes);
    else
        for (; n < bytes; n *= 2) /* doubling copies */
            memcpy(p + n, p, n <= bytes - n ? n : bytes - n);
    a->fill_chunk       = p;
    a->fill_chunk_bytes = bytes;
done:
    pthread_mutex_unlock(&a->lock);
    return rc;
}

/* ---- resize ---- */

typedef struct del_job {
    zarr_array *a;
    int         nd;
    uint64_t    lo[ZARR_MAX_DIMS], n[ZARR_MAX_DIMS]; /* a box of chunk coordinates */
} del_job;

static int
del_task(void *arg, size_t i, int worker)
{
    del_job *j = arg;
    uint64_t coords[ZARR_MAX_DIMS];
    char     key[1024];
    int      rc;
    (void)worker;
    for (int d = j->nd - 1; d >= 0; d--) {
        coords[d] = j->lo[d] + i % j->n[d];
        i /= j->n[d];
    }
    if ((rc = zarr_chunk_key(j->a->meta, j->a->path, coords, key, sizeof key)) != ZARR_OK ||
        (rc = zarr_store_del(j->a->store, key)) != ZARR_OK)
        return zarr_error_wrap(rc, "can't delete a chunk of '/%s' while shrinking it: ", j->a->path);
    return ZARR_OK;
}

static uint64_t
nchunks(uint64_t extent, uint64_t chunk)
{
    return extent / chunk + (extent % chunk != 0);
}

int
zarr_array_resize(zarr_array *a, const uint64_t *shape)
{
    zarr_array_meta *m;
    uint64_t         old[ZARR_MAX_DIMS];
    int              rc = ZARR_OK, nd;
    zarr_pool       *pool;

    if (!a || (!shape && a->meta->ndim > 0))
        return zarr_error(ZARR_EINVAL, "zarr_array_resize: array and shape must not be NULL");
    m  = a->meta;
    nd = m->ndim;
    if (a->store->readonly)
        return zarr_error(ZARR_EREADONLY, "can't resize array '/%s': the store is read-only", a->path);
    pool = a->opts.pool ? a->opts.pool : zarr_pool_default();
    memcpy(old, m->shape, sizeof old);

    /* 1. In edge chunks that stay, reset the part beyond the new extent to fill values. */
    for (int d = 0; d < nd; d++) {
        zarr_region r;
        uint64_t    end;
        if (shape[d] >= old[d] || shape[d] % m->chunks[d] == 0)
            continue;
        end = nchunks(shape[d], m->chunks[d]) * m->chunks[d];
        memset(&r, 0, sizeof r);
        for (int k = 0; k < nd; k++) {
            r.start[k]  = 0;
            r.stride[k] = 1;
            r.block[k]  = 1;
            /* other dims: every chunk that stays (up to the end of the new grid, within the old shape) */
            uint64_t keep = nchunks(shape[k], m->chunks[k]) * m->chunks[k];
            r.count[k]    = old[k] < keep ? old[k] : keep;
        }
        r.start[d] = shape[d];
        r.count[d] = (old[d] < end ? old[d] : end) - shape[d];
        ZARR_TRY(zarr__engine_run(a, &r, NULL, ZARR__ENGINE_WRITE_FILL));
    }
    /* 2. Delete chunks wholly outside the new shape: for each shrunk dim d, the box of chunks with
     * coordinate >= the new count in d, inside the kept range in dims before d (no double visits). */
    for (int d = 0; d < nd; d++) {
        del_job  j;
        uint64_t total = 1;
        uint64_t nnew = nchunks(shape[d], m->chunks[d]), nold = nchunks(old[d], m->chunks[d]);
        if (nnew >= nold)
            continue;
        memset(&j, 0, sizeof j);
        j.a  = a;
        j.nd = nd;
        for (int k = 0; k < nd; k++) {
            uint64_t ko = nchunks(old[k], m->chunks[k]), kn = nchunks(shape[k], m->chunks[k]);
            j.lo[k] = 0;
            j.n[k]  = k < d ? (ko < kn ? ko : kn) : ko;
        }
        j.lo[d] = nnew;
        j.n[d]  = nold - nnew;
        for (int k = 0; k < nd; k++)
            if (!zarr__mul_ok(total, j.n[k], &total) || total > SIZE_MAX)
                ZARR_FAIL(ZARR_EOVERFLOW, "too many chunks to delete while shrinking '/%s'", a->path);
        ZARR_TRY(zarr_pool_run(pool, del_task, &j, (size_t)total, total < 16));
    }
    /* 3. The new shape. */
    memcpy(m->shape, shape, (size_t)nd * sizeof *shape);
    if ((rc = zarr_array_write_meta(a)) != ZARR_OK)
        memcpy(m->shape, old, sizeof old);
done:
    return rc;
}

/* ---- stored bytes ---- */

typedef struct size_job {
    zarr_array *a;
    int         nd;
    uint64_t    n[ZARR_MAX_DIMS];
    uint64_t    total; /* atomic */
} size_job;

static int
size_task(void *arg, size_t i, int worker)
{
    size_job *j = arg;
    uint64_t  coords[ZARR_MAX_DIMS], size;
    char      key[1024];
    int       rc;
    (void)worker;
    for (int d = j->nd - 1; d >= 0; d--) {
        coords[d] = i % j->n[d];
        i /= j->n[d];
    }
    if ((rc = zarr_chunk_key(j->a->meta, j->a->path, coords, key, sizeof key)) != ZARR_OK)
        return rc;
    rc = zarr__store_size(j->a->store, key, &size);
    if (rc == ZARR_ENOTFOUND)
        return ZARR_OK;
    if (rc != ZARR_OK)
        return rc;
    __atomic_add_fetch(&j->total, size, __ATOMIC_RELAXED);
    return ZARR_OK;
}

int
zarr_array_stored_bytes(zarr_array *a, uint64_t *nbytes)
{
    size_job   j;
    uint64_t   total = 1;
    zarr_pool *pool;
    int        rc;

    if (!a || !nbytes)
        return zarr_error(ZARR_EINVAL, "zarr_array_stored_bytes: array and nbytes must not be NULL");
    memset(&j, 0, sizeof j);
    j.a  = a;
    j.nd = a->meta->ndim;
    for (int d = 0; d < j.nd; d++) {
        j.n[d] = nchunks(a->meta->shape[d], a->meta->chunks[d]);
        if (!zarr__mul_ok(total, j.n[d], &total) || total > SIZE_MAX)
            return zarr_error(ZARR_EOVERFLOW, "too many chunks in '/%s'", a->path);
    }
    pool = a->opts.pool ? a->opts.pool : zarr_pool_default();
    rc   = zarr_pool_run(pool, size_task, &j, (size_t)total, total < 64);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't count the stored bytes of '/%s': ", a->path);
    *nbytes = j.total;
    return ZARR_OK;
}
