/*
 * job.c: the steps every kind of job shares (job.h), below the engine's entry point (engine.c), the
 * batched executor (batch.c) and the chunk cache (chunk_cache.c): the view of task `i` of a planned job
 * (its chunk's per-dimension plans, whether it is whole and contiguous in the caller's buffer, its key),
 * the copier between a chunk buffer and the caller's buffer, and the read of a chunk that is not stored
 * (fill values). It calls nothing above it: chunk keys come from chunk_io.c.
 */
#include "job.h"

#include <stddef.h>
#include <string.h>

typedef zarr__job    job;
typedef zarr__tchunk tchunk;

/* ---- copying between a chunk buffer and the caller's buffer ---- */

static int
copy_elems(const zarr__copier *c, uint64_t coff, uint64_t boff, uint64_t n)
{
    const job     *j = c->j;
    uint8_t       *dst;
    const uint8_t *src;

    if (c->to_chunk) {
        dst = c->chunk + coff * j->es;
        src = c->bcast ? c->bcast + coff * j->es : c->buf + boff * j->es;
    }
    else {
        dst = c->buf + boff * j->es;
        src = c->chunk + coff * j->es;
    }
    if (j->io.vlen)
        return zarr_dtype_copy_elems(j->m->dtype, dst, src, (size_t)n, c->dst_init);
    memcpy(dst, src, (size_t)n * j->es);
    return ZARR_OK;
}

/* memcpy with the common element sizes as constants (inlined: a strided read copies one element a run). */
static inline void
copy_bytes(uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n > 8)
        memcpy(dst, src, n);
    else if (n == 4)
        memcpy(dst, src, 4);
    else if (n == 8)
        memcpy(dst, src, 8);
    else
        memcpy(dst, src, n);
}

/* The two innermost dims `d` and `d + 1` (== c->last) of a fixed-size copy: a row of runs for each index
 * of d, each run one memcpy, on byte pointers kept in locals (memcpy may alias the plans as far as the
 * compiler knows). The recursion paid a call of copy_rec and of copy_elems per row: W3's box writes copy
 * 10 rows of 10 elements into each of 4 chunks, ~130 instructions per row of 40 bytes. */
static void
copy_rows(const zarr__copier *c, int d, uint64_t coff, uint64_t boff)
{
    const job          *j = c->j;
    const zarr__dplan  *p = &j->d[d], *q = &j->d[d + 1];
    const zarr__dchunk *dc = c->dc[d], *ec = c->dc[d + 1];
    const zarr__run    *r = p->runs + dc->run0, *s = q->runs + ec->run0;
    const size_t        es = j->es, nk = dc->nrun, nm = ec->nrun;
    const bool          to_chunk = c->to_chunk;
    /* the other side: the caller's buffer, or (gathering from `bcast`) a chunk-shaped source */
    const bool     bc    = to_chunk && c->bcast;
    uint8_t       *cbase = c->chunk + coff * es;
    uint8_t       *obase = bc ? (uint8_t *)c->bcast + coff * es : c->buf + boff * es;
    const uint64_t pc = p->cstride * es, po = (bc ? p->cstride : p->bstride) * es;
    const uint64_t qc = q->cstride * es, qo = (bc ? q->cstride : q->bstride) * es, ub = c->unit * es;

    for (size_t k = 0; k < nk; k++) {
        uint8_t       *cr  = cbase + r[k].o0 * pc;
        uint8_t       *orw = obase + (bc ? r[k].o0 : r[k].b0) * po;
        const uint64_t len = r[k].len;
        if (nm == 1) { /* one run a row (boxes): its offsets and size hoisted */
            const size_t   n  = (size_t)(s[0].len * ub);
            const uint64_t cx = s[0].o0 * qc, ox = (bc ? s[0].o0 : s[0].b0) * qo;
            for (uint64_t i = 0; i < len; i++, cr += pc, orw += po) {
                if (to_chunk)
                    copy_bytes(cr + cx, orw + ox, n);
                else
                    copy_bytes(orw + ox, cr + cx, n);
            }
            continue;
        }
        for (uint64_t i = 0; i < len; i++, cr += pc, orw += po)
            for (size_t m = 0; m < nm; m++) {
                size_t   n  = (size_t)(s[m].len * ub);
                uint8_t *cx = cr + s[m].o0 * qc, *ox = orw + (bc ? s[m].o0 : s[m].b0) * qo;
                if (to_chunk)
                    copy_bytes(cx, ox, n);
                else
                    copy_bytes(ox, cx, n);
            }
    }
}

static int
copy_rec(const zarr__copier *c, int d, uint64_t coff, uint64_t boff)
{
    const zarr__dplan  *p  = &c->j->d[d];
    const zarr__dchunk *dc = c->dc[d];
    const zarr__run    *r  = p->runs + dc->run0;
    int                 rc;

    if (d + 1 == c->last && !c->j->io.vlen) {
        copy_rows(c, d, coff, boff);
        return ZARR_OK;
    }
    if (d == c->last) {
        for (size_t k = 0; k < dc->nrun; k++)
            if ((rc = copy_elems(c, coff + r[k].o0 * p->cstride, boff + r[k].b0 * p->bstride,
                                 r[k].len * c->unit)) != ZARR_OK)
                return rc;
        return ZARR_OK;
    }
    for (size_t k = 0; k < dc->nrun; k++)
        for (uint64_t i = 0; i < r[k].len; i++)
            if ((rc = copy_rec(c, d + 1, coff + (r[k].o0 + i) * p->cstride,
                               boff + (r[k].b0 + i) * p->bstride)) != ZARR_OK)
                return rc;
    return ZARR_OK;
}

int
zarr__copy_chunk(zarr__copier *c)
{
    const job *j = c->j;
    int        d = j->nd - 1;

    if (j->nd == 0)
        return copy_elems(c, 0, 0, 1);
    /* Merge trailing dims that are whole in both the chunk and the buffer. */
    while (d > 0) {
        const zarr__dchunk *dc = c->dc[d];
        const zarr__run    *r  = &j->d[d].runs[dc->run0];
        if (dc->nrun != 1 || r->o0 != 0 || r->b0 != 0 || r->len != j->chunks[d] || r->len != j->d[d].bext)
            break;
        d--;
    }
    c->last = d;
    c->unit = j->d[d].cstride;
    return copy_rec(c, 0, 0, 0);
}

void
zarr__copier_init(zarr__copier *c, const job *j, const tchunk *t, uint8_t *chunk, bool to_chunk)
{
    memset(c, 0, sizeof *c);
    c->j        = j;
    c->to_chunk = to_chunk;
    c->chunk    = chunk;
    c->buf      = j->buf;
    memcpy(c->dc, t->dc, sizeof c->dc);
}

/* ---- tasks ---- */

void
zarr__job_init(job *j)
{
    memset(j, 0, offsetof(job, d));
}

int
zarr__task_setup(const job *j, size_t i, tchunk *t, bool with_key)
{
    int    rc;
    bool   single = true, outer_one = true;
    size_t i0 = i;

    t->full = true;
    t->edge = false;
    t->boff = 0;
    for (int d = j->nd - 1; d >= 0; d--) {
        size_t n = j->d[d].nchunks;
        t->dc[d] = &j->d[d].chunks[i % n];
        i /= n;
        t->coords[d] = t->dc[d]->coord;
        t->full &= t->dc[d]->full;
        t->edge |= t->dc[d]->edge;
        single &= t->dc[d]->nrun == 1;
    }
    t->direct = t->full && !t->edge && single;
    if (t->direct) {
        /* Contiguous iff, going outwards, once a dim is narrower than the buffer all outer dims are 1. */
        for (int d = j->nd - 1; d >= 0; d--) {
            const zarr__run *r = &j->d[d].runs[t->dc[d]->run0];
            if (!outer_one && r->len != 1) {
                t->direct = false;
                break;
            }
            if (r->len != j->d[d].bext)
                outer_one = false;
            t->boff += r->b0 * j->d[d].bstride;
        }
    }
    t->has_hash = false;
    if (with_key && i0 < j->nkeys) { /* kept by the caller (zarr__cache_misses) */
        memcpy(t->key, j->key_text + j->key_off[i0], (size_t)j->key_len[i0] + 1);
        t->hash     = j->key_hash[i0];
        t->has_hash = true;
    }
    else if (with_key && (rc = zarr__job_key(j, t->coords, t->key)) != ZARR_OK)
        return zarr_error_wrap(rc, "can't make a chunk key for '%s': ", j->a->path);
    return ZARR_OK;
}

int
zarr__read_fill(const job *j, const tchunk *t)
{
    zarr__copier c;
    if (t->direct && !j->io.vlen) {
        memcpy(j->buf + t->boff * j->es, j->io.fill_chunk, j->io.chunk_bytes);
        return ZARR_OK;
    }
    zarr__copier_init(&c, j, t, (uint8_t *)j->io.fill_chunk, false); /* only read from */
    return zarr__copy_chunk(&c);
}
