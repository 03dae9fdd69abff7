/*
 * engine.c: the batched chunk engine. One region read or write is one job:
 *
 *  1. Plan (on the caller): per dimension, the chunks the selection touches and inside each chunk the
 *     runs of selected indices (buffer position, position in the chunk, length), adjacent runs
 *     merged. The chunk tasks are the cross product of the per-dimension chunk lists, so planning
 *     costs O(sum of per-dimension sizes), not O(chunks).
 *  2. Run all chunk tasks with one zarr_pool_run (inline on the caller when the job is small, see
 *     zarr_engine_defaults). A write task gathers the caller's elements into the worker's chunk buffer
 *     (read-modify-write for partial chunks: load the stored chunk, or start from fill values), and
 *     stores it through the one chunk-store path (chunk_io.c: elides chunks equal to the fill value
 *     when empty chunks are not written, encodes, sets). A read task loads (chunk_io.c) and scatters;
 *     a missing chunk reads as fill. Partial chunks go through the decoded-chunk cache (chunk_cache.c).
 *  3. Zero-copy: when a chunk is wholly inside the array and the selection, and its elements form one
 *     contiguous block of the caller's buffer, a write encodes straight from the caller's memory (and
 *     with an identity chain stores the caller's memory as is), and a read decodes straight into it.
 *
 * A sharded array whose chain is one sharding_indexed codec is planned on its inner-chunk grid and
 * run by batch.c (whole shards written once, byte-range reads), and so is an unsharded array on a store
 * that prefers batches; other sharded chains run here on whole shards. The task view and the copier
 * every kind of job uses are job.c's. Edge chunks that overhang the shape are always stored at the full chunk
 * shape, padded with fill values. vlen dtypes copy elements with zarr_dtype_copy_elems (deep) and free
 * decoded payloads with zarr_dtype_clear_elems. Per-worker buffers are reused across tasks, so a steady-state
 * job does no allocation per chunk besides what the store itself needs.
 */
#include "job.h"

#include <stdlib.h>
#include <string.h>

typedef zarr__job    job;
typedef zarr__tchunk tchunk;

/* ---- planning ---- */

/* Grows a list of `*cap` entries of `size` bytes (`*heap`: malloc'ed, else the job's own storage, copied
 * out on the first growth). */
static int
grow_list(void **list, size_t *cap, bool *heap, size_t used, size_t size)
{
    size_t ncap = *cap ? 2 * *cap : 16;
    void  *n    = *heap ? realloc(*list, ncap * size) : malloc(ncap * size);
    if (!n)
        return zarr_error(ZARR_ENOMEM, "out of memory planning a chunk job");
    if (!*heap && used)
        memcpy(n, *list, used * size);
    *list = n;
    *cap  = ncap;
    *heap = true;
    return ZARR_OK;
}

static int
push_chunk(zarr__dplan *p, uint64_t coord)
{
    if (p->nchunks == p->chunks_cap && grow_list((void **)&p->chunks, &p->chunks_cap, &p->chunks_heap,
                                                 p->nchunks, sizeof *p->chunks) != ZARR_OK)
        return ZARR_ENOMEM;
    p->chunks[p->nchunks++] = (zarr__dchunk){coord, p->nruns, 0, 0, false, false};
    return ZARR_OK;
}

static int
push_run(zarr__dplan *p, uint64_t b0, uint64_t o0, uint64_t len)
{
    zarr__dchunk *c = &p->chunks[p->nchunks - 1];
    if (c->nrun) {
        zarr__run *last = &p->runs[p->nruns - 1];
        if (last->b0 + last->len == b0 && last->o0 + last->len == o0) {
            last->len += len;
            c->nsel += len;
            return ZARR_OK;
        }
    }
    if (p->nruns == p->runs_cap &&
        grow_list((void **)&p->runs, &p->runs_cap, &p->runs_heap, p->nruns, sizeof *p->runs) != ZARR_OK)
        return ZARR_ENOMEM;
    p->runs[p->nruns++] = (zarr__run){b0, o0, len};
    c->nrun++;
    c->nsel += len;
    return ZARR_OK;
}

/* Plans dim `d` of job `j`: its lists start in what the job's own storage has left. */
static int
plan_dim(job *j, int d, uint64_t start, uint64_t stride, uint64_t count, uint64_t block, uint64_t chunk,
         uint64_t shape)
{
    zarr__dplan *p = &j->d[d];
    int          rc;

    p->chunks     = j->plan_chunks + j->plan_nchunks;
    p->chunks_cap = ZARR__PLAN_INLINE - j->plan_nchunks;
    p->runs       = j->plan_runs + j->plan_nruns;
    p->runs_cap   = ZARR__PLAN_INLINE - j->plan_nruns;

    if (count > 1 && stride == block) { /* contiguous: one block */
        block *= count;
        count = 1;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint64_t s = start + i * stride, bpos = i * block, left = block;
        while (left) {
            uint64_t c = s / chunk, o = s % chunk, n = chunk - o;
            if (n > left)
                n = left;
            if (!p->nchunks || p->chunks[p->nchunks - 1].coord != c)
                if ((rc = push_chunk(p, c)) != ZARR_OK)
                    return rc;
            if ((rc = push_run(p, bpos, o, n)) != ZARR_OK)
                return rc;
            s += n;
            bpos += n;
            left -= n;
        }
    }
    for (size_t k = 0; k < p->nchunks; k++) {
        zarr__dchunk *c     = &p->chunks[k];
        uint64_t      begin = c->coord * chunk;
        uint64_t      ext   = shape - begin < chunk ? shape - begin : chunk;
        c->full             = c->nsel == ext;
        c->edge             = ext < chunk;
    }
    if (!p->chunks_heap)
        j->plan_nchunks += p->nchunks;
    if (!p->runs_heap)
        j->plan_nruns += p->nruns;
    return ZARR_OK;
}

static void
job_free(job *j)
{
    for (int d = 0; d < j->nd; d++) { /* only lists that outgrew the job's own storage */
        if (j->d[d].chunks_heap)
            free(j->d[d].chunks);
        if (j->d[d].runs_heap)
            free(j->d[d].runs);
    }
}

/* ---- tasks (the task view and the copier are job.c's) ---- */

static int
write_task(void *arg, size_t i, int worker)
{
    const job       *j  = arg;
    const zarr__cio *io = &j->io;
    zarr__worker    *w  = zarr__pool_worker(j->pool, worker);
    tchunk           t;
    zarr__copier     c;
    uint8_t         *cb;
    const uint8_t   *mem;
    int              rc    = ZARR_OK;
    bool             owned = false; /* vlen: cb holds payloads to clear */

    if (!w)
        return zarr_error(ZARR_ENOMEM, "out of memory allocating worker scratch");
    if ((rc = zarr__task_setup(j, i, &t, true)) != ZARR_OK)
        return rc;
    if (j->mode == ZARR__ENGINE_WRITE && !io->vlen &&
        (t.full ? j->hold : j->use_cache || zarr__cache_nonempty(j->a))) {
        /* Through the cache: a partial chunk modifies the cached chunk, a whole one of a job that holds
         * its writes (zarr_array_hold_writes) is put there; stored when evicted or flushed. No room in
         * the cache: stored now, below. */
        zarr__cent *e;
        bool        missing;
        ZARR_TRY(zarr__cache_acquire(j, w, &t, j->use_cache, &e, &missing));
        if (e) {
            zarr__copier_init(&c, j, &t, e->data, true);
            rc = zarr__copy_chunk(&c); /* non-vlen: cannot fail */
            zarr__cache_release(j->a, e, true);
            ZARR_TRY(rc);
            return ZARR_OK;
        }
    }
    if (t.full) {
        /* Whole-chunk writes bypass the cache; a cached copy would be stale. */
        if (zarr__cache_nonempty(j->a))
            zarr__cache_invalidate(j->a, t.key);
        if (t.direct && j->mode == ZARR__ENGINE_WRITE) {
            ZARR_TRY(zarr__chunk_store(io, w, t.key, j->buf + t.boff * j->es));
            return ZARR_OK;
        }
    }
    ZARR_TRY(zarr_buf_resize(&w->chunk, io->chunk_bytes));
    cb = w->chunk.data;
    if (!t.full) {
        /* Read-modify-write. On failure the load leaves no payloads in cb. */
        ZARR_TRY(zarr__chunk_load(io, w, t.key, cb, &mem));
        if (!mem) {
            if (j->mode == ZARR__ENGINE_WRITE_FILL)
                return ZARR_OK; /* missing chunks already read as fill */
            if (io->vlen)
                ZARR_TRY(zarr_dtype_copy_elems(j->m->dtype, cb, io->fill_chunk, io->chunk_nelem, false));
            else
                memcpy(cb, io->fill_chunk, io->chunk_bytes);
        }
        owned = io->vlen;
    }
    else if (!t.edge) {
        if (io->vlen)
            memset(cb, 0, io->chunk_bytes); /* NULL payloads until gathered, so a failure can clear */
    }
    else {
        if (io->vlen) {
            ZARR_TRY(zarr_dtype_copy_elems(j->m->dtype, cb, io->fill_chunk, io->chunk_nelem, false));
            owned = true;
        }
        else
            memcpy(cb, io->fill_chunk, io->chunk_bytes);
    }
    zarr__copier_init(&c, j, &t, cb, true);
    c.dst_init = owned;
    c.bcast    = j->mode == ZARR__ENGINE_WRITE_FILL ? io->fill_chunk : NULL;
    rc         = zarr__copy_chunk(&c);
    if (io->vlen)
        owned = true; /* whole chunk now owned (fully covered non-edge chunks were written in full) */
    ZARR_TRY(rc);
    ZARR_TRY(zarr__chunk_store(io, w, t.key, cb));
done:
    if (owned)
        zarr_dtype_clear_elems(j->m->dtype, cb, io->chunk_nelem);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't write chunk '%s' of array '/%s': ", t.key, j->a->path);
    return ZARR_OK;
}

static int
read_task(void *arg, size_t i, int worker)
{
    const job       *j  = arg;
    const zarr__cio *io = &j->io;
    zarr__worker    *w  = zarr__pool_worker(j->pool, worker);
    tchunk           t;
    zarr__copier     c;
    const uint8_t   *mem;
    uint8_t         *cb    = NULL;
    int              rc    = ZARR_OK;
    bool             owned = false;

    if (!w)
        return zarr_error(ZARR_ENOMEM, "out of memory allocating worker scratch");
    if ((rc = zarr__task_setup(j, i, &t, true)) != ZARR_OK)
        return rc;
    if (!io->vlen && ((j->use_cache && !t.full) || zarr__cache_nonempty(j->a))) {
        /* Cached chunks are newer than the store. Partial-chunk reads fill the cache; whole-chunk
         * reads only look. */
        zarr__cent *e;
        bool        missing;
        ZARR_TRY(zarr__cache_acquire(j, w, &t, j->use_cache && !t.full, &e, &missing));
        if (e) {
            if (t.direct)
                memcpy(j->buf + t.boff * j->es, e->data, io->chunk_bytes);
            else {
                zarr__copier_init(&c, j, &t, e->data, false);
                rc = zarr__copy_chunk(&c);
            }
            zarr__cache_release(j->a, e, false);
            ZARR_TRY(rc);
            return ZARR_OK;
        }
        if (missing) {
            ZARR_TRY(zarr__read_fill(j, &t));
            return ZARR_OK;
        }
    }
    if (t.direct)
        /* Decoded straight into the caller's buffer (for an uncompressed chunk with zero_copy, read
         * straight into it by the store). */
        cb = j->buf + t.boff * j->es;
    else if (!io->identity) {
        ZARR_TRY(zarr_buf_resize(&w->chunk, io->chunk_bytes));
        cb = w->chunk.data;
    }
    ZARR_TRY(zarr__chunk_load(io, w, t.key, cb, &mem));
    if (!mem) {
        cb = NULL;
        ZARR_TRY(zarr__read_fill(j, &t));
        return ZARR_OK;
    }
    if (t.direct)
        return ZARR_OK;
    owned = io->vlen && cb;
    zarr__copier_init(&c, j, &t, (uint8_t *)mem, false);
    ZARR_TRY(zarr__copy_chunk(&c));
done:
    if (owned)
        zarr_dtype_clear_elems(j->m->dtype, cb, io->chunk_nelem);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't read chunk '%s' of array '/%s': ", t.key, j->a->path);
    return ZARR_OK;
}

/* ---- entry points ---- */

/* Validates region `r` against the array and plans job `j` on the grid of `chunks` (the array's chunk
 * shape, or a sharded array's inner chunks). `*nelem` = elements in the region (0: nothing to do),
 * `*ntasks` = chunks touched. */
static int
job_plan(job *j, zarr_array *a, const zarr_region *r, void *buf, zarr__engine_mode mode,
         const uint64_t *chunks, uint64_t *nelem_out, uint64_t *ntasks_out)
{
    int      rc    = ZARR_OK;
    uint64_t nelem = 1, ntasks = 1, bytes, chunk_nelem = 1;

    j->a       = a;
    j->m       = a->meta;
    j->mode    = mode;
    j->buf     = buf;
    j->es      = j->m->dtype->size;
    j->chunks  = chunks;
    *nelem_out = *ntasks_out = 0;
    if (j->m->ndim < 0 || j->m->ndim > ZARR_MAX_DIMS || j->es == 0)
        ZARR_FAIL(ZARR_EMETA, "array '/%s' has an invalid rank or element size", a->path);
    j->nd = j->m->ndim; /* job_free looks at the plans of nd dims */
    memset(j->d, 0, (size_t)j->nd * sizeof j->d[0]);

    /* Validate the region and the chunk shape. */
    for (int d = 0; d < j->nd; d++) {
        uint64_t start = r->start[d], stride = r->stride[d], count = r->count[d], block = r->block[d], last;
        uint64_t chunk = chunks[d];
        if (chunk == 0)
            ZARR_FAIL(ZARR_EMETA, "array '/%s' has a zero chunk size in dimension %d", a->path, d);
        if (!zarr__mul_ok(chunk_nelem, chunk, &chunk_nelem))
            ZARR_FAIL(ZARR_EOVERFLOW, "chunk size of array '/%s' overflows", a->path);
        if (block == 0)
            ZARR_FAIL(ZARR_EINVAL, "region block is 0 in dimension %d of '/%s' (use 1)", d, a->path);
        if (count > 1 && stride < block)
            ZARR_FAIL(ZARR_EINVAL,
                      "region blocks overlap in dimension %d of '/%s' (stride %llu < block %llu)", d, a->path,
                      (unsigned long long)stride, (unsigned long long)block);
        if (!zarr__mul_ok(count, block, &j->d[d].bext) || !zarr__mul_ok(nelem, j->d[d].bext, &nelem))
            ZARR_FAIL(ZARR_EOVERFLOW, "region size overflows in dimension %d of '/%s'", d, a->path);
        if (count == 0)
            continue;
        if (!zarr__mul_ok(count - 1, stride, &last) || !zarr__add_ok(last, start, &last) ||
            !zarr__add_ok(last, block - 1, &last) || last >= j->m->shape[d])
            ZARR_FAIL(
                ZARR_EINVAL,
                "region exceeds dimension %d of '/%s' (start %llu, stride %llu, count %llu, block %llu, "
                "extent %llu)",
                d, a->path, (unsigned long long)start, (unsigned long long)stride, (unsigned long long)count,
                (unsigned long long)block, (unsigned long long)j->m->shape[d]);
    }
    if (nelem == 0)
        return ZARR_OK;
    if (!zarr__mul_ok(chunk_nelem, j->es, &bytes) || bytes > SIZE_MAX ||
        !zarr__mul_ok(nelem, j->es, &bytes) || bytes > SIZE_MAX)
        ZARR_FAIL(ZARR_EOVERFLOW, "chunk or region byte size of '/%s' overflows", a->path);
    if (!buf && mode != ZARR__ENGINE_WRITE_FILL)
        ZARR_FAIL(ZARR_EINVAL, "buffer is NULL for a non-empty region of '/%s'", a->path);
    if (mode != ZARR__ENGINE_READ && a->store->readonly)
        ZARR_FAIL(ZARR_EREADONLY, "can't write array '/%s': the store is read-only", a->path);

    {
        uint64_t bs = 1, cs = 1;
        for (int d = j->nd - 1; d >= 0; d--) {
            j->d[d].bstride = bs;
            j->d[d].cstride = cs;
            bs *= j->d[d].bext;
            cs *= chunks[d];
        }
    }
    for (int d = 0; d < j->nd; d++) {
        ZARR_TRY(plan_dim(j, d, r->start[d], r->count[d] > 1 ? r->stride[d] : r->block[d], r->count[d],
                          r->block[d], chunks[d], j->m->shape[d]));
        if (!zarr__mul_ok(ntasks, j->d[d].nchunks, &ntasks) || ntasks > SIZE_MAX)
            ZARR_FAIL(ZARR_EOVERFLOW, "too many chunks in one request on '/%s'", a->path);
    }
    ZARR_TRY(zarr__array_fill_chunk(a, (size_t)(chunk_nelem * j->es)));
    j->io.a           = a;
    j->io.shape       = chunks;
    j->io.chunk_nelem = (size_t)chunk_nelem;
    j->io.chunk_bytes = (size_t)(chunk_nelem * j->es);
    j->io.fill_chunk  = a->fill_chunk;
    j->io.vlen        = zarr_dtype_has_vlen(j->m->dtype);
    j->write_empty    = a->opts.write_empty_chunks;
    j->io.elide = !j->io.vlen && zarr__has_fill(j->m) && (!j->write_empty || mode == ZARR__ENGINE_WRITE_FILL);
    j->pool     = a->opts.pool ? a->opts.pool : zarr_pool_default();
    *nelem_out  = nelem;
    *ntasks_out = ntasks;
done:
    return rc;
}

int
zarr__engine_run(zarr_array *a, const zarr_region *r, void *buf, zarr__engine_mode mode)
{
    return zarr__engine_run_in(a, r, buf, mode, NULL);
}

/* True when the array's jobs run batched on plain chunks (batch.c with j->shard NULL); `rc` gets what
 * the shard layout check said when it is an error. */
static bool
runs_plain_batched(zarr_array *a, int *rc)
{
    zarr__shard_layout l;
    *rc = ZARR_OK;
    if (!a->store->prefers_batches || zarr_dtype_has_vlen(a->meta->dtype))
        return false;
    if (a->meta->ndim >= 1 &&
        (*rc = zarr__chain_shard_layout(a->meta->chain, a->meta->chunks, &l)) == ZARR_OK)
        return false; /* sharded: inner-chunk batches of its own */
    if (*rc == ZARR_EUNSUPPORTED)
        *rc = ZARR_OK;
    return *rc == ZARR_OK;
}

int
zarr__engine_keys(zarr_array *a, const zarr_region *r, int (*fn)(void *ud, const char *key), void *ud)
{
    static uint8_t none; /* a buffer job_plan sees: nothing is read into it */
    job            j;
    tchunk         t;
    uint64_t       nelem = 0, ntasks = 0;
    int            rc = ZARR_OK;

    zarr__job_init(&j);
    if (!a || !r || !fn)
        return zarr_error(ZARR_EINVAL, "array, region and callback must not be NULL");
    if (!runs_plain_batched(a, &rc))
        return rc != ZARR_OK ? zarr_error_wrap(rc, "array '/%s': ", a->path) : ZARR_EUNSUPPORTED;
    ZARR_TRY(job_plan(&j, a, r, &none, ZARR__ENGINE_READ, a->meta->chunks, &nelem, &ntasks));
    zarr__job_key_setup(&j);
    for (size_t i = 0; nelem && i < (size_t)ntasks; i++) {
        ZARR_TRY(zarr__task_setup(&j, i, &t, true));
        if ((rc = fn(ud, t.key)) != 0)
            goto done;
    }
done:
    job_free(&j);
    return rc;
}

int
zarr__engine_run_in(zarr_array *a, const zarr_region *r, void *buf, zarr__engine_mode mode,
                    struct zarr_multi *m)
{
    job                j;
    zarr__shard_layout l;
    int                rc    = ZARR_OK;
    uint64_t           nelem = 0, ntasks = 0;
    bool               sharded;

    zarr__job_init(&j);
    if (!a || !r)
        return zarr_error(ZARR_EINVAL, "array and region must not be NULL");
    /* A sharded array with one sharding_indexed codec: inner-chunk I/O (batch.c), but for resize's
     * fill writes, which run the chain on whole shards. */
    sharded = mode != ZARR__ENGINE_WRITE_FILL && a->meta->ndim >= 1 && !zarr_dtype_has_vlen(a->meta->dtype) &&
              (rc = zarr__chain_shard_layout(a->meta->chain, a->meta->chunks, &l)) == ZARR_OK;
    if (!sharded && rc != ZARR_OK && rc != ZARR_EUNSUPPORTED)
        return zarr_error_wrap(rc, "array '/%s': ", a->path);
    rc = ZARR_OK;
    ZARR_TRY(job_plan(&j, a, r, buf, mode, sharded ? l.inner : a->meta->chunks, &nelem, &ntasks));
    if (nelem == 0)
        goto done;
    if (sharded) {
        j.shard       = &l;
        j.io.chain    = l.inner_chain;
        j.io.identity = zarr_chain_is_identity(l.inner_chain);
        j.use_cache   = false;
        zarr__job_key_setup(&j);
        rc = zarr__batch_exec(&j);
        goto done;
    }
    j.io.chain    = a->meta->chain;
    j.io.identity = zarr_chain_is_identity(a->meta->chain);
    if (a->store->prefers_batches && !j.io.vlen && mode != ZARR__ENGINE_WRITE_FILL) {
        /* A store with request latency: the job's gets and sets go out as batches (batch.c, one chunk
         * per "shard"); partial chunks are not cached then, so cached ones go to the store first. */
        if (zarr__cache_nonempty(a)) {
            ZARR_TRY(zarr__cache_flush(a));
            zarr__cache_drop(a);
        }
        j.use_cache = false;
        j.multi     = m;
        zarr__job_key_setup(&j);
        rc = zarr__batch_exec(&j);
        goto done;
    }
    j.use_cache = mode != ZARR__ENGINE_WRITE_FILL && !j.io.vlen && a->opts.cache_bytes >= j.io.chunk_bytes;
    zarr__job_key_setup(&j);
    {
        /* Inline when the job is small: chunk bytes touched below the threshold, or a single chunk.
         * Chunks already in the cache cost only the copy of the selection (the W3 box writes: 4
         * cached chunks are ~2 KB of copying, far below a worker wake-up), and one chunk to load is no
         * parallel work: another thread could only take the copies of the cached ones while this one
         * loads it (36 of W3's 400 box writes: 4 tasks, one load; a wake-up and a wait each). */
        uint64_t work;
        bool     small = !zarr__mul_ok(ntasks, j.io.chunk_bytes, &work) ? false : work < a->opts.inline_bytes;
        if (!small && ntasks <= 64 && !j.io.vlen && zarr__cache_nonempty(a)) {
            uint64_t miss = zarr__cache_misses(&j, (size_t)ntasks);
            small         = (miss ? miss - 1 : 0) * j.io.chunk_bytes + nelem * j.es < a->opts.inline_bytes;
        }
        /* A small write to an array that holds its writes: its whole chunks stay in the cache too (the
         * job runs inline: small) */
        j.hold = small && mode == ZARR__ENGINE_WRITE && j.use_cache && a->hold &&
                 zarr__cache_hold(a, ntasks * j.io.chunk_bytes);
        /* A vlen read hands payloads to the caller's buffer chunk by chunk: it starts from NULLs, and
         * a failed job frees what its finished tasks delivered (the caller gets nothing to reclaim). */
        if (mode == ZARR__ENGINE_READ && j.io.vlen)
            memset(buf, 0, (size_t)(nelem * j.es));
        rc = zarr_pool_run(j.pool, mode == ZARR__ENGINE_READ ? read_task : write_task, &j, (size_t)ntasks,
                           small || ntasks == 1);
        if (rc != ZARR_OK && mode == ZARR__ENGINE_READ && j.io.vlen)
            zarr_dtype_clear_elems(j.m->dtype, buf, (size_t)nelem);
    }
done:
    job_free(&j);
    return rc;
}

int
zarr_array_write(zarr_array *a, const zarr_region *r, const void *buf)
{
    int rc = zarr__engine_run(a, r, (void *)buf, ZARR__ENGINE_WRITE);
    /* a durable store: the cache's dirty chunks written too, then one sync pass for the job (zarr.h) */
    return rc == ZARR_OK && a->store->durable ? zarr_array_flush(a) : rc;
}

int
zarr_array_read(zarr_array *a, const zarr_region *r, void *buf)
{
    return zarr__engine_run(a, r, buf, ZARR__ENGINE_READ);
}

void
zarr_region_all(const zarr_array_meta *m, zarr_region *r)
{
    memset(r, 0, sizeof *r);
    for (int d = 0; m && d < m->ndim && d < ZARR_MAX_DIMS; d++) {
        r->stride[d] = 1;
        r->count[d]  = m->shape[d];
        r->block[d]  = 1;
    }
}

void
zarr_region_box(int ndim, const uint64_t *start, const uint64_t *count, zarr_region *r)
{
    memset(r, 0, sizeof *r);
    for (int d = 0; d < ndim && d < ZARR_MAX_DIMS; d++) {
        r->start[d]  = start ? start[d] : 0;
        r->stride[d] = 1;
        r->count[d]  = count[d];
        r->block[d]  = 1;
    }
}

uint64_t
zarr_region_nelem(int ndim, const zarr_region *r)
{
    uint64_t n = 1;
    for (int d = 0; d < ndim && d < ZARR_MAX_DIMS; d++)
        if (!zarr__mul_ok(n, r->count[d], &n) || !zarr__mul_ok(n, r->block[d], &n))
            return UINT64_MAX;
    return n;
}
