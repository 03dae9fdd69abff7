/*
 * chunk_raw.c: single chunks as their stored, still-encoded bytes (zarr.h "Raw chunks"), for HDF5's
 * chunk API through the connector (vol/chunk.c: H5Dget_num_chunks, H5Dget_chunk_info[_by_coord],
 * H5Dchunk_iter, H5Dget_chunk_storage_size, H5Dread_chunk, H5Dwrite_chunk).
 *
 * A raw chunk is a chunk of the array's grid, or, for an array on the engine's sharded fast path (its
 * chain one sharding_indexed codec, a fixed-size dtype), an inner chunk of a shard. Its bytes are what
 * the chain (the inner chain) writes: the chunk's whole value, or the byte range its shard's index
 * gives. Everything goes through the store interface; shard indexes are decoded and validated by
 * the shard format (shard_format.c) and shared with the engine's index cache (shard_cache.c). Listing finds
 * the stored chunks (shards) with one zarr_store_list_keys of the array's prefix and reads the indexes the
 * cache lacks in one batch.
 *
 * A write stores the given bytes after checking that they decode to one chunk with the chain, so a
 * store never holds a chunk no reader can decode; unless the caller vouches for them (ZARR_RAW_TRUSTED:
 * bytes another encoder of the same codecs wrote, as h5zarr-convert's chunks copied from HDF5's
 * filters), when they are stored as they are, with no decode. An inner chunk is written by rewriting its
 * shard: read whole, the inner chunk replaced, the others copied as bytes (never decoded), a new index (the
 * simple form of the engine's partial shard writes, batch.c). Every call first writes the array's chunk
 * cache back (the store then holds every write made so far, as HDF5 flushes its chunk cache before these
 * operations); a write then drops the chunk and index caches, so later reads see the new bytes.
 */
#include "job.h"
#include "shard_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The raw chunk grid of an array. */
typedef struct raw_grid {
    bool               sharded; /* raw chunks are the inner chunks of `l` */
    zarr__shard_layout l;
    int                nd;
    uint64_t           chunk[ZARR_MAX_DIMS]; /* raw chunk shape */
    uint64_t           n[ZARR_MAX_DIMS];     /* raw chunks along each dim that start inside the shape */
    uint64_t           ns[ZARR_MAX_DIMS];    /* array chunks (shards) along each dim inside the shape */
} raw_grid;

static uint64_t
ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

static int
raw_grid_of(zarr_array *a, raw_grid *g)
{
    const zarr_array_meta *m = a->meta;
    int                    rc;

    memset(g, 0, sizeof *g);
    g->nd = m->ndim;
    if (m->ndim >= 1 && !zarr_dtype_has_vlen(m->dtype)) {
        rc = zarr__chain_shard_layout(m->chain, m->chunks, &g->l);
        if (rc == ZARR_OK)
            g->sharded = true;
        else if (rc != ZARR_EUNSUPPORTED)
            return zarr_error_wrap(rc, "array '/%s': ", a->path);
    }
    for (int d = 0; d < m->ndim; d++) {
        g->chunk[d] = g->sharded ? g->l.inner[d] : m->chunks[d];
        g->n[d]     = ceil_div(m->shape[d], g->chunk[d]);
        g->ns[d]    = ceil_div(m->shape[d], m->chunks[d]);
    }
    return ZARR_OK;
}

/* Elements of one raw chunk, and its bytes in memory form. */
static int
raw_chunk_size(const zarr_array *a, const raw_grid *g, size_t *nelem, size_t *bytes)
{
    uint64_t n = 1, b;
    for (int d = 0; d < g->nd; d++)
        if (!zarr__mul_ok(n, g->chunk[d], &n))
            return zarr_error(ZARR_EOVERFLOW, "array '/%s': the chunk's element count overflows", a->path);
    if (!zarr__mul_ok(n, a->meta->dtype->size, &b) || b > SIZE_MAX / 2)
        return zarr_error(ZARR_EOVERFLOW, "array '/%s': the chunk's size overflows", a->path);
    *nelem = (size_t)n;
    *bytes = (size_t)b;
    return ZARR_OK;
}

/* "[1, 2]": raw chunk coordinates for messages, into `out` (cap bytes), which is returned. */
static const char *
coords_name(int nd, const uint64_t *c, char *out, size_t cap)
{
    size_t k = 0;
    out[0]   = '\0';
    for (int d = 0; d < nd && k + 1 < cap; d++) {
        int w = snprintf(out + k, cap - k, "%s%llu", d ? ", " : "[", (unsigned long long)c[d]);
        if (w < 0)
            break;
        k += (size_t)w;
    }
    if (k + 1 < cap)
        snprintf(out + k, cap - k, nd ? "]" : "[]");
    return out;
}

/* ---- shard indexes --------------------------------------------------------------------------------- */

/* The indexes of shards `keys[0..n)` into `ix` (a reference each; absent shards give `absent` entries):
 * from the array's index cache, the others read in one batch, decoded, validated and cached. On failure
 * the references taken so far are in `ix` (the caller releases every non-NULL one). */
static int
load_indexes(zarr_array *a, const zarr__shard_layout *l, char *const *keys, size_t n, zarr__sindex **ix)
{
    zarr_store_req *q     = NULL;
    zarr_buf       *bufs  = NULL;
    size_t         *which = NULL, nq = 0;
    zarr__worker   *w0 = zarr__pool_worker(a->opts.pool, 0);
    int             rc = ZARR_OK;

    for (size_t i = 0; i < n; i++)
        ix[i] = NULL;
    if (!n)
        return ZARR_OK;
    if (!(q = calloc(n, sizeof *q)) || !(bufs = calloc(n, sizeof *bufs)) ||
        !(which = malloc(n * sizeof *which)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory reading the shard indexes of array '/%s'", a->path);
    for (size_t i = 0; i < n; i++) {
        if ((ix[i] = zarr__sindex_get(a, keys[i])))
            continue;
        q[nq] = (zarr_store_req){
            .key = keys[i], .off = 0, .len = l->index_bytes, .suffix = l->index_end, .out = &bufs[nq]};
        which[nq++] = i;
    }
    if (nq)
        (void)zarr_store_get_many(a->store, nq, q); /* per item results below */
    for (size_t k = 0; k < nq; k++) {
        const char *key = keys[which[k]];
        uint64_t   *ent = NULL;
        if (q[k].result == ZARR_ENOTFOUND) {
            zarr_error_clear();
            if (!(ix[which[k]] = zarr__sindex_put(a, key, NULL, l->ninner, 0, true)))
                ZARR_FAIL(ZARR_ENOMEM, "out of memory reading shard '%s'", key);
            continue;
        }
        if ((rc = q[k].result) != ZARR_OK) {
            zarr_error_wrap(rc, "can't read the index of shard '%s' of array '/%s': ", key, a->path);
            goto done;
        }
        if (bufs[k].size < l->index_bytes)
            ZARR_FAIL(ZARR_ECODEC, "shard '%s' of array '/%s' has %zu bytes, less than its index of %zu", key,
                      a->path, bufs[k].size, l->index_bytes);
        if ((rc = zarr__shard_index_decode(l, zarr__worker_ctx(w0), key, bufs[k].data, bufs[k].size,
                                           q[k].total, &ent)) != ZARR_OK) {
            zarr_error_wrap(rc, "array '/%s': ", a->path);
            goto done;
        }
        if (!(ix[which[k]] = zarr__sindex_put(a, key, ent, l->ninner, q[k].total, false)))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory reading shard '%s'", key);
    }
done:
    for (size_t k = 0; bufs && k < n; k++)
        zarr_buf_free(&bufs[k]);
    free(bufs);
    free(q);
    free(which);
    return rc;
}

/* ---- where a raw chunk is -------------------------------------------------------------------------- */

typedef struct raw_loc {
    char     key[ZARR__KEY_MAX]; /* the chunk's key, or its shard's */
    size_t   ipos;               /* sharded: the inner chunk's position in the shard (row-major) */
    bool     stored;
    uint64_t off, len; /* its bytes in the value at `key` (unsharded: 0 and the value's size) */
} raw_loc;

/* Finds raw chunk `c` (grid coordinates, checked to lie in the grid by the caller). */
static int
raw_locate(zarr_array *a, const raw_grid *g, const uint64_t *c, raw_loc *loc)
{
    uint64_t      sc[ZARR_MAX_DIMS];
    zarr__sindex *ix = NULL;
    char         *k  = loc->key;
    int           rc;

    memset(loc, 0, sizeof *loc);
    if (!g->sharded) {
        if ((rc = zarr_chunk_key(a->meta, a->path, c, loc->key, sizeof loc->key)) != ZARR_OK)
            return rc;
        rc = zarr__store_size(a->store, loc->key, &loc->len);
        if (rc == ZARR_ENOTFOUND)
            return ZARR_OK;
        if (rc != ZARR_OK)
            return zarr_error_wrap(rc, "array '/%s': ", a->path);
        loc->stored = true;
        return ZARR_OK;
    }
    for (int d = 0; d < g->nd; d++) {
        sc[d]     = c[d] / g->l.grid[d];
        loc->ipos = loc->ipos * (size_t)g->l.grid[d] + (size_t)(c[d] % g->l.grid[d]);
    }
    if ((rc = zarr_chunk_key(a->meta, a->path, sc, loc->key, sizeof loc->key)) != ZARR_OK)
        return rc;
    if ((rc = load_indexes(a, &g->l, &k, 1, &ix)) == ZARR_OK && !ix->absent &&
        ix->ent[2 * loc->ipos] != UINT64_MAX) {
        loc->stored = true;
        loc->off    = ix->ent[2 * loc->ipos];
        loc->len    = ix->ent[2 * loc->ipos + 1];
    }
    zarr__sindex_release(a, ix);
    return rc;
}

/* True if grid coordinates `c` name a raw chunk that starts inside the array's shape. */
static bool
in_grid(const raw_grid *g, const uint64_t *c)
{
    for (int d = 0; d < g->nd; d++)
        if (c[d] >= g->n[d])
            return false;
    return true;
}

/* ---- the public functions ---------------------------------------------------------------------------- */

int
zarr_array_raw_chunk_shape(zarr_array *a, uint64_t *shape, bool *inner)
{
    raw_grid g;
    int      rc;
    if (!a || !shape)
        return zarr_error(ZARR_EINVAL, "zarr_array_raw_chunk_shape: array and shape must not be NULL");
    if ((rc = raw_grid_of(a, &g)) != ZARR_OK)
        return rc;
    memcpy(shape, g.chunk, (size_t)g.nd * sizeof *shape);
    if (inner)
        *inner = g.sharded;
    return ZARR_OK;
}

int
zarr_array_raw_stat(zarr_array *a, const uint64_t *coords, bool *stored, uint64_t *nbytes)
{
    raw_grid g;
    raw_loc  loc;
    int      rc;
    if (!a || !coords || !stored || !nbytes)
        return zarr_error(ZARR_EINVAL, "zarr_array_raw_stat: no argument may be NULL");
    *stored = false;
    *nbytes = 0;
    if ((rc = zarr__cache_flush(a)) != ZARR_OK || (rc = raw_grid_of(a, &g)) != ZARR_OK)
        return rc;
    if (!in_grid(&g, coords))
        return ZARR_OK;
    if ((rc = raw_locate(a, &g, coords, &loc)) != ZARR_OK)
        return rc;
    *stored = loc.stored;
    *nbytes = loc.stored ? loc.len : 0;
    return ZARR_OK;
}

int
zarr_array_raw_read(zarr_array *a, const uint64_t *coords, zarr_buf *out)
{
    raw_grid g;
    raw_loc  loc;
    char     cn[ZARR_MAX_DIMS * 22 + 4];
    int      rc;
    if (!a || !coords || !out)
        return zarr_error(ZARR_EINVAL, "zarr_array_raw_read: no argument may be NULL");
    out->size = 0;
    if ((rc = zarr__cache_flush(a)) != ZARR_OK || (rc = raw_grid_of(a, &g)) != ZARR_OK)
        return rc;
    coords_name(g.nd, coords, cn, sizeof cn);
    if (!in_grid(&g, coords))
        return zarr_error(ZARR_ENOTFOUND, "chunk %s of array '/%s' is outside its shape", cn, a->path);
    if ((rc = raw_locate(a, &g, coords, &loc)) != ZARR_OK)
        return rc;
    if (!loc.stored)
        return zarr_error(ZARR_ENOTFOUND, "chunk %s of array '/%s' is not stored", cn, a->path);
    rc = g.sharded ? zarr_store_get_range(a->store, loc.key, loc.off, loc.len, out)
                   : zarr_store_get(a->store, loc.key, out);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't read chunk %s of array '/%s': ", cn, a->path);
    return ZARR_OK;
}

/* ---- listing ------------------------------------------------------------------------------------------ */

typedef struct list_ctx {
    zarr_array *a;
    const char *path;
    size_t      plen; /* strlen("<path>/"), 0 for the root */
    int         nd;
    uint64_t    lim[ZARR_MAX_DIMS]; /* chunks along each dim inside the shape */
    uint64_t   *c;                  /* nd coordinates per listed chunk */
    uint64_t   *size;
    size_t      n, cap;
} list_ctx;

static int
push_chunk(list_ctx *l, const uint64_t *c, uint64_t size)
{
    if (l->n == l->cap) {
        size_t    cap = l->cap ? 2 * l->cap : 64;
        uint64_t *nc  = realloc(l->c, cap * (size_t)(l->nd ? l->nd : 1) * sizeof *nc), *ns;
        if (!nc)
            return zarr_error(ZARR_ENOMEM, "out of memory listing the chunks of array '/%s'", l->path);
        l->c = nc;
        if (!(ns = realloc(l->size, cap * sizeof *ns)))
            return zarr_error(ZARR_ENOMEM, "out of memory listing the chunks of array '/%s'", l->path);
        l->size = ns;
        l->cap  = cap;
    }
    memcpy(l->c + l->n * (size_t)l->nd, c, (size_t)l->nd * sizeof *c);
    l->size[l->n++] = size;
    return ZARR_OK;
}

static int
listed_key_cb(const char *key, uint64_t size, void *ud)
{
    list_ctx *l = ud;
    uint64_t  c[ZARR_MAX_DIMS];
    if (l->plen && (strncmp(key, l->path, l->plen - 1) != 0 || key[l->plen - 1] != '/'))
        return 0;
    if (!zarr__chunk_key_coords(l->a->meta, key + l->plen, l->lim, c))
        return 0;
    return push_chunk(l, c, size) == ZARR_OK ? 0 : ZARR_ENOMEM;
}

/* Up to this many positions in the array's chunk grid, one size lookup each is at least as cheap as
 * listing the array's keys (as zarr_array_stored_bytes decides); a store that can't list (HTTP) is
 * probed so up to RAW_PROBE_FALLBACK positions. */
#define RAW_PROBE_MAX      64
#define RAW_PROBE_FALLBACK 4096

/* The array's stored chunks (shards) into `l`: by listing its keys, or position by position. */
static int
list_stored(list_ctx *l)
{
    zarr_array *a     = l->a;
    uint64_t    total = 1, c[ZARR_MAX_DIMS], size;
    char        key[ZARR__KEY_MAX];
    int         rc;

    for (int d = 0; d < l->nd; d++)
        if (!zarr__mul_ok(total, l->lim[d], &total))
            total = UINT64_MAX;
    if (total > RAW_PROBE_MAX) {
        rc = zarr_store_list_keys(a->store, a->path, listed_key_cb, l);
        if (rc == ZARR_OK)
            return ZARR_OK;
        if (rc != ZARR_EUNSUPPORTED || total > RAW_PROBE_FALLBACK)
            return zarr_error_wrap(rc, "can't list the chunks of array '/%s': ", a->path);
        zarr_error_clear();
        l->n = 0;
    }
    for (uint64_t i = 0; i < total; i++) {
        uint64_t r = i;
        for (int d = l->nd - 1; d >= 0; d--) {
            c[d] = r % l->lim[d];
            r /= l->lim[d];
        }
        if ((rc = zarr_chunk_key(a->meta, a->path, c, key, sizeof key)) != ZARR_OK)
            return rc;
        rc = zarr__store_size(a->store, key, &size);
        if (rc == ZARR_ENOTFOUND)
            continue;
        if (rc != ZARR_OK || (rc = push_chunk(l, c, size)) != ZARR_OK)
            return zarr_error_wrap(rc, "can't look up the chunks of array '/%s': ", a->path);
    }
    return ZARR_OK;
}

typedef struct raw_ent {
    const uint64_t *c;
    uint64_t        size;
    int             nd;
} raw_ent;

static int
ent_cmp(const void *x, const void *y)
{
    const raw_ent *a = x, *b = y;
    for (int d = 0; d < a->nd; d++)
        if (a->c[d] != b->c[d])
            return a->c[d] < b->c[d] ? -1 : 1;
    return 0;
}

int
zarr_array_raw_list(zarr_array *a, uint64_t **coords, uint64_t **sizes, size_t *n)
{
    raw_grid        g;
    list_ctx        l, in;
    char          **keys = NULL;
    zarr__sindex  **ix   = NULL;
    raw_ent        *e    = NULL;
    uint64_t       *oc = NULL, *os = NULL;
    const list_ctx *src;
    int             rc;

    memset(&l, 0, sizeof l);
    memset(&in, 0, sizeof in);
    if (!a || !coords || !sizes || !n)
        return zarr_error(ZARR_EINVAL, "zarr_array_raw_list: no argument may be NULL");
    *coords = *sizes = NULL;
    *n               = 0;
    ZARR_TRY(zarr__cache_flush(a));
    ZARR_TRY(raw_grid_of(a, &g));
    l.a    = a;
    l.path = a->path;
    l.plen = *a->path ? strlen(a->path) + 1 : 0;
    l.nd   = g.nd;
    memcpy(l.lim, g.ns, sizeof l.lim);
    ZARR_TRY(list_stored(&l));
    src = &l;
    if (g.sharded && l.n) {
        /* the listed values are shards: their inner chunks from their indexes */
        in.a    = a;
        in.path = a->path;
        in.nd   = g.nd;
        if (!(keys = calloc(l.n, sizeof *keys)) || !(ix = calloc(l.n, sizeof *ix)))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory listing the chunks of array '/%s'", a->path);
        for (size_t s = 0; s < l.n; s++) {
            if (!(keys[s] = malloc(ZARR__KEY_MAX)))
                ZARR_FAIL(ZARR_ENOMEM, "out of memory listing the chunks of array '/%s'", a->path);
            ZARR_TRY(zarr_chunk_key(a->meta, a->path, l.c + s * (size_t)g.nd, keys[s], ZARR__KEY_MAX));
        }
        ZARR_TRY(load_indexes(a, &g.l, keys, l.n, ix));
        for (size_t s = 0; s < l.n; s++) {
            const uint64_t *sc = l.c + s * (size_t)g.nd;
            if (ix[s]->absent) /* deleted since the listing */
                continue;
            for (size_t k = 0; k < g.l.ninner; k++) {
                uint64_t c[ZARR_MAX_DIMS];
                size_t   r = k;
                if (ix[s]->ent[2 * k] == UINT64_MAX)
                    continue;
                for (int d = g.nd - 1; d >= 0; d--) {
                    c[d] = sc[d] * g.l.grid[d] + r % g.l.grid[d];
                    r /= g.l.grid[d];
                }
                if (in_grid(&g, c))
                    ZARR_TRY(push_chunk(&in, c, ix[s]->ent[2 * k + 1]));
            }
        }
        src = &in;
    }
    else if (g.sharded)
        src = &in;
    if (src->n) {
        if (!(e = malloc(src->n * sizeof *e)) ||
            !(oc = malloc(src->n * (size_t)(g.nd ? g.nd : 1) * sizeof *oc)) ||
            !(os = malloc(src->n * sizeof *os)))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory listing the chunks of array '/%s'", a->path);
        for (size_t i = 0; i < src->n; i++)
            e[i] = (raw_ent){src->c + i * (size_t)g.nd, src->size[i], g.nd};
        qsort(e, src->n, sizeof *e, ent_cmp);
        for (size_t i = 0; i < src->n; i++) {
            memcpy(oc + i * (size_t)g.nd, e[i].c, (size_t)g.nd * sizeof *oc);
            os[i] = e[i].size;
        }
    }
    *coords = oc;
    *sizes  = os;
    *n      = src->n;
    oc = os = NULL;
done:
    for (size_t s = 0; ix && s < l.n; s++)
        zarr__sindex_release(a, ix[s]);
    for (size_t s = 0; keys && s < l.n; s++)
        free(keys[s]);
    free(keys);
    free(ix);
    free(e);
    free(oc);
    free(os);
    free(l.c);
    free(l.size);
    free(in.c);
    free(in.size);
    return rc;
}

/* ---- writing ------------------------------------------------------------------------------------------ */

/* Fails unless `data` (n bytes) decodes with `chain` to one chunk of the raw grid. */
static int
check_decodes(zarr_array *a, const raw_grid *g, const zarr_chain *chain, const void *data, size_t n,
              const char *cn)
{
    size_t          nelem = 0, bytes = 0;
    uint8_t        *mem = NULL;
    zarr_codec_ctx *ctx;
    int             rc;

    ZARR_TRY(raw_chunk_size(a, g, &nelem, &bytes));
    if (!(ctx = zarr__worker_ctx(zarr__pool_worker(a->opts.pool, 0))))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory creating a codec context");
    if (!(mem = malloc(bytes ? bytes : 1)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory checking chunk %s of array '/%s'", cn, a->path);
    if ((rc = zarr_chain_decode(chain, ctx, data, n, mem, g->chunk)) != ZARR_OK)
        goto done;
    zarr_dtype_clear_elems(a->meta->dtype, mem, nelem);
done:
    free(mem);
    if (rc != ZARR_OK)
        zarr_error_wrap(rc,
                        "the %zu bytes given for chunk %s of array '/%s' are not a chunk of its codecs "
                        "(they must be what its codec chain writes): ",
                        n, cn, a->path);
    return rc;
}

/* Replaces inner chunk `loc->ipos` of shard `loc->key` with `data` (n bytes). */
static int
write_inner(zarr_array *a, const raw_grid *g, const raw_loc *loc, const void *data, size_t n, const char *cn)
{
    const zarr__shard_layout *l   = &g->l;
    zarr_buf                  old = ZARR_BUF_INIT, out = ZARR_BUF_INIT;
    uint64_t                 *oldent = NULL, off, ixoff, total;
    zarr__shard_builder       b      = {0};
    bool                      has_old;
    zarr_codec_ctx           *ctx;
    zarr__worker             *w0 = zarr__pool_worker(a->opts.pool, 0);
    int                       rc;

    if (!(ctx = zarr__worker_ctx(w0)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory creating a codec context");
    rc = zarr_store_get(a->store, loc->key, &old);
    if (rc != ZARR_OK && rc != ZARR_ENOTFOUND) {
        zarr_error_wrap(rc, "can't read shard '%s' to write its chunk %s: ", loc->key, cn);
        goto done;
    }
    has_old = rc == ZARR_OK;
    rc      = ZARR_OK;
    zarr_error_clear();
    if (has_old && (rc = zarr__shard_index_read(l, ctx, loc->key, old.data, old.size, &oldent)) != ZARR_OK) {
        zarr_error_wrap(rc, "array '/%s': ", a->path);
        goto done;
    }
    /* the new shard: every stored inner chunk in order, the given one replaced, the others copied as
     * bytes (placed first, then copied into one buffer) */
    ZARR_TRY(zarr__shard_builder_init(&b, l));
    for (size_t k = 0; k < l->ninner; k++)
        if (k == loc->ipos)
            ZARR_TRY(zarr__shard_builder_append(&b, k, n, &off));
        else if (has_old && oldent[2 * k] != ZARR__SHARD_EMPTY)
            ZARR_TRY(zarr__shard_builder_append(&b, k, oldent[2 * k + 1], &off));
    ZARR_TRY(zarr_buf_resize(&out, (size_t)zarr__shard_builder_size(&b, NULL)));
    for (size_t k = 0; k < l->ninner; k++) {
        const uint8_t *src = k == loc->ipos ? data : has_old ? old.data + oldent[2 * k] : NULL;
        if (b.ent[2 * k] != ZARR__SHARD_EMPTY && b.ent[2 * k + 1])
            memcpy(out.data + b.ent[2 * k], src, (size_t)b.ent[2 * k + 1]); /* old: validated inside */
    }
    ZARR_TRY(zarr__shard_builder_finish(&b, ctx, &w0->enc, &ixoff, &total));
    memcpy(out.data + ixoff, w0->enc.data, l->index_bytes);
    if ((rc = zarr_store_set(a->store, loc->key, out.data, out.size)) != ZARR_OK)
        zarr_error_wrap(rc, "can't write shard '%s' holding chunk %s: ", loc->key, cn);
done:
    zarr_buf_free(&old);
    zarr_buf_free(&out);
    zarr__shard_builder_free(&b);
    free(oldent);
    return rc;
}

int
zarr_array_raw_write(zarr_array *a, const uint64_t *coords, const void *data, size_t n)
{
    return zarr_array_raw_write_opt(a, coords, data, n, 0);
}

int
zarr_array_raw_write_opt(zarr_array *a, const uint64_t *coords, const void *data, size_t n, unsigned flags)
{
    raw_grid g;
    raw_loc  loc;
    char     cn[ZARR_MAX_DIMS * 22 + 4];
    int      rc;

    if (!a || !coords || (!data && n))
        return zarr_error(ZARR_EINVAL, "zarr_array_raw_write: array, coords and data must not be NULL");
    if ((rc = zarr__cache_flush(a)) != ZARR_OK)
        return rc; /* the dirty chunks stay cached */
    ZARR_TRY(raw_grid_of(a, &g));
    coords_name(g.nd, coords, cn, sizeof cn);
    if (a->store->readonly)
        ZARR_FAIL(ZARR_EREADONLY, "can't write chunk %s of array '/%s': the store is read-only", cn, a->path);
    if (!in_grid(&g, coords))
        ZARR_FAIL(ZARR_EINVAL, "can't write chunk %s of array '/%s': it lies outside the array's shape", cn,
                  a->path);
    if (!(flags & ZARR_RAW_TRUSTED))
        ZARR_TRY(check_decodes(a, &g, g.sharded ? g.l.inner_chain : a->meta->chain, data, n, cn));
    if (!g.sharded) {
        ZARR_TRY(zarr_chunk_key(a->meta, a->path, coords, loc.key, sizeof loc.key));
        if ((rc = zarr_store_set(a->store, loc.key, data, n)) != ZARR_OK) {
            zarr_error_wrap(rc, "can't write chunk %s of array '/%s': ", cn, a->path);
            goto done;
        }
    }
    else {
        ZARR_TRY(raw_locate(a, &g, coords, &loc));
        ZARR_TRY(write_inner(a, &g, &loc, data, n, cn));
    }
    if ((rc = zarr_store_sync(a->store)) != ZARR_OK)
        zarr_error_wrap(rc, "can't sync chunk %s of array '/%s': ", cn, a->path);
done:
    /* cached chunks (all clean after the flush) and shard indexes may hold what was there before;
     * dropped after a failure too (the shard may have changed) */
    zarr__cache_drop(a);
    return rc;
}
