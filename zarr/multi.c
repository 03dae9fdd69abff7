/*
 * multi.c: several arrays' transfers as one store batch (zarr_multi, zarr.h; H5Dread_multi and
 * H5Dwrite_multi in the connector). Reads: the chunk keys of every planned (array, region) are gathered
 * (zarr__engine_keys), fetched with one get_many, and kept by key; each array's read is then its own
 * batched job (batch.c) whose fetch takes its chunks from here (zarr__multi_get). Writes: each array's
 * job encodes as usual and hands its wave of chunks to zarr__multi_queue (copied), and zarr_multi_store
 * sends them all with one set_many. Only jobs that run batched on plain chunks take part (a store that
 * prefers batches, unsharded, fixed-size dtype: engine.c decides); others run alone.
 */
#include "job.h"

#include <stdlib.h>
#include <string.h>

/* Bytes queued by writes before zarr_multi_write stores them (a bound on what a batch holds). */
#define MULTI_QUEUE_MAX ((uint64_t)256 << 20)

typedef struct mitem { /* a planned chunk read */
    char    *key;
    zarr_buf buf;
    uint64_t total;
    int      result;
    bool     fetched; /* result known (ZARR_OK or ZARR_ENOTFOUND) */
    bool     taken;   /* handed to a job: a second read of it goes to the store */
} mitem;

typedef struct qitem { /* a queued chunk store */
    char    *key;
    uint8_t *data;
    size_t   size;
    char    *path; /* its array's, for messages */
} qitem;

struct zarr_multi {
    zarr_store        *store; /* the arrays' store (borrowed: the arrays hold it while `m` is used) */
    mitem             *it;
    size_t             nit, itcap, nsorted; /* it[0 .. nsorted) sorted by key, unique */
    qitem             *q;
    size_t             nq, qcap;
    uint64_t           qbytes;
    const zarr_array **wrote; /* arrays with chunks in the queue */
    size_t             nwrote, wrcap;
};

static int
grow(void **p, size_t *cap, size_t need, size_t size)
{
    size_t c = *cap ? *cap : 16;
    void  *n;
    if (need <= *cap)
        return ZARR_OK;
    while (c < need)
        c *= 2;
    if (!(n = realloc(*p, c * size)))
        return zarr_error(ZARR_ENOMEM, "out of memory for a multi-array batch");
    *p   = n;
    *cap = c;
    return ZARR_OK;
}

int
zarr_multi_new(zarr_multi **out)
{
    if (!out)
        return zarr_error(ZARR_EINVAL, "zarr_multi_new: out must not be NULL");
    if (!(*out = calloc(1, sizeof **out)))
        return zarr_error(ZARR_ENOMEM, "out of memory for a multi-array batch");
    return ZARR_OK;
}

static void
queue_clear(zarr_multi *m)
{
    for (size_t i = 0; i < m->nq; i++) {
        free(m->q[i].key);
        free(m->q[i].data);
        free(m->q[i].path);
    }
    m->nq = m->nwrote = 0;
    m->qbytes         = 0;
}

void
zarr_multi_free(zarr_multi *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nit; i++) {
        free(m->it[i].key);
        zarr_buf_free(&m->it[i].buf);
    }
    queue_clear(m);
    free(m->it);
    free(m->q);
    free(m->wrote);
    free(m);
}

/* ---- reads ---- */

static int
plan_key(void *ud, const char *key)
{
    zarr_multi *m = ud;
    mitem      *t;
    int         rc;
    if ((rc = grow((void **)&m->it, &m->itcap, m->nit + 1, sizeof *m->it)) != ZARR_OK)
        return rc;
    t = &m->it[m->nit];
    memset(t, 0, sizeof *t);
    if (!(t->key = strdup(key)))
        return zarr_error(ZARR_ENOMEM, "out of memory for a multi-array batch");
    m->nit++;
    return ZARR_OK;
}

int
zarr_multi_plan(zarr_multi *m, zarr_array *a, const zarr_region *r)
{
    int rc;
    if (!m || !a || !r)
        return zarr_error(ZARR_EINVAL, "zarr_multi_plan: arguments must not be NULL");
    if (m->store && a->store != m->store)
        return ZARR_EUNSUPPORTED; /* another store: read alone */
    rc = zarr__engine_keys(a, r, plan_key, m);
    if (rc == ZARR_OK)
        m->store = a->store;
    return rc;
}

static int
item_cmp(const void *x, const void *y)
{
    return strcmp(((const mitem *)x)->key, ((const mitem *)y)->key);
}

/* Sorts the items and drops repeated keys (a chunk two regions touch is fetched once). */
static void
sort_items(zarr_multi *m)
{
    size_t k = 0;
    if (m->nit == 0) { /* nothing planned: qsort must not see a NULL array */
        m->nsorted = 0;
        return;
    }
    qsort(m->it, m->nit, sizeof *m->it, item_cmp);
    for (size_t i = 0; i < m->nit; i++) {
        if (k && !strcmp(m->it[k - 1].key, m->it[i].key)) {
            /* a repeat: the kept one is fetched if either was (new ones are not yet) */
            if (m->it[i].fetched && !m->it[k - 1].fetched) {
                mitem t      = m->it[k - 1];
                m->it[k - 1] = m->it[i];
                m->it[i]     = t;
            }
            free(m->it[i].key);
            zarr_buf_free(&m->it[i].buf);
            continue;
        }
        m->it[k++] = m->it[i];
    }
    m->nit = m->nsorted = k;
}

int
zarr_multi_fetch(zarr_multi *m)
{
    zarr_store_req *reqs  = NULL;
    size_t         *which = NULL, n = 0;
    int             rc = ZARR_OK;

    if (!m)
        return zarr_error(ZARR_EINVAL, "zarr_multi_fetch: m must not be NULL");
    sort_items(m);
    if (!m->nit || !m->store)
        return ZARR_OK;
    if (!(reqs = malloc(m->nit * sizeof *reqs)) || !(which = malloc(m->nit * sizeof *which)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory for a multi-array batch");
    for (size_t i = 0; i < m->nit; i++)
        if (!m->it[i].fetched && !m->it[i].taken) {
            reqs[n]    = (zarr_store_req){m->it[i].key, 0, UINT64_MAX, false, &m->it[i].buf, UINT64_MAX, 0};
            which[n++] = i;
        }
    if (n)
        (void)zarr_store_get_many(m->store, n, reqs); /* per item results */
    for (size_t k = 0; k < n; k++) {
        mitem *t   = &m->it[which[k]];
        t->result  = reqs[k].result;
        t->total   = reqs[k].total;
        t->fetched = t->result == ZARR_OK || t->result == ZARR_ENOTFOUND;
        if (!t->fetched)
            zarr_buf_free(&t->buf); /* fetched again, and its failure reported, by the array's read */
    }
    zarr_error_clear();
done:
    free(reqs);
    free(which);
    return rc;
}

static mitem *
find(zarr_multi *m, const char *key)
{
    mitem t;
    t.key = (char *)key;
    return m->nsorted ? bsearch(&t, m->it, m->nsorted, sizeof *m->it, item_cmp) : NULL;
}

int
zarr__multi_get(zarr_multi *m, zarr_store *s, size_t n, zarr_store_req *reqs)
{
    zarr_store_req *rest  = NULL;
    size_t         *which = NULL, nrest = 0;
    int             rc = ZARR_OK, first = ZARR_OK;

    if (!m || s != m->store)
        return zarr_store_get_many(s, n, reqs);
    if (!(rest = malloc((n ? n : 1) * sizeof *rest)) || !(which = malloc((n ? n : 1) * sizeof *which)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory for a multi-array batch");
    for (size_t k = 0; k < n; k++) {
        zarr_store_req *q = &reqs[k];
        mitem          *t = !q->suffix && q->off == 0 && q->len == UINT64_MAX ? find(m, q->key) : NULL;
        if (t && t->fetched && !t->taken) {
            zarr_buf_free(q->out); /* the item's bytes move to the job */
            *q->out   = t->buf;
            t->buf    = (zarr_buf)ZARR_BUF_INIT;
            t->taken  = true;
            q->result = t->result;
            q->total  = t->total;
            continue;
        }
        rest[nrest]    = *q;
        which[nrest++] = k;
    }
    if (nrest)
        (void)zarr_store_get_many(s, nrest, rest); /* per item results */
    for (size_t k = 0; k < nrest; k++) {
        reqs[which[k]].result = rest[k].result;
        reqs[which[k]].total  = rest[k].total;
    }
    for (size_t k = 0; k < n && first == ZARR_OK; k++)
        first = reqs[k].result;
    rc = first;
done:
    free(rest);
    free(which);
    return rc;
}

int
zarr_multi_read(zarr_multi *m, zarr_array *a, const zarr_region *r, void *buf)
{
    return m ? zarr__engine_run_in(a, r, buf, ZARR__ENGINE_READ, m) : zarr_array_read(a, r, buf);
}

/* ---- writes ---- */

int
zarr__multi_queue(zarr_multi *m, const zarr_array *a, size_t n, const char *const *keys,
                  const void *const *data, const size_t *sizes)
{
    int rc = ZARR_OK;
    ZARR_TRY(grow((void **)&m->q, &m->qcap, m->nq + n, sizeof *m->q));
    for (size_t i = 0; i < n; i++) {
        qitem *t = &m->q[m->nq];
        memset(t, 0, sizeof *t);
        t->key  = strdup(keys[i]);
        t->path = strdup(a->path);
        t->data = malloc(sizes[i] ? sizes[i] : 1);
        t->size = sizes[i];
        m->nq++; /* owned from here: freed by queue_clear */
        if (!t->key || !t->path || !t->data)
            ZARR_FAIL(ZARR_ENOMEM, "out of memory queueing chunk '%s' of array '/%s'", keys[i], a->path);
        memcpy(t->data, data[i], sizes[i]);
        m->qbytes += sizes[i];
    }
done:
    return rc;
}

int
zarr_multi_store(zarr_multi *m)
{
    const char **keys  = NULL;
    const void **data  = NULL;
    size_t      *sizes = NULL;
    int         *res   = NULL;
    int          rc    = ZARR_OK;

    if (!m)
        return zarr_error(ZARR_EINVAL, "zarr_multi_store: m must not be NULL");
    if (!m->nq)
        goto done;
    if (!(keys = malloc(m->nq * sizeof *keys)) || !(data = malloc(m->nq * sizeof *data)) ||
        !(sizes = malloc(m->nq * sizeof *sizes)) || !(res = malloc(m->nq * sizeof *res)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory storing a multi-array batch");
    for (size_t i = 0; i < m->nq; i++) {
        keys[i]  = m->q[i].key;
        data[i]  = m->q[i].data;
        sizes[i] = m->q[i].size;
        res[i]   = ZARR_OK;
    }
    if ((rc = zarr_store_set_many(m->store, m->nq, keys, data, sizes, res)) != ZARR_OK)
        for (size_t i = 0; i < m->nq; i++)
            if (res[i] != ZARR_OK) {
                zarr_error_wrap(rc, "can't store chunk '%s' of array '/%s': ", keys[i], m->q[i].path);
                break;
            }
done:
    if (m)
        queue_clear(m); /* stored, or failed: a failed batch is not retried */
    free(keys);
    free(data);
    free(sizes);
    free(res);
    return rc;
}

int
zarr_multi_write(zarr_multi *m, zarr_array *a, const zarr_region *r, const void *buf)
{
    int rc = ZARR_OK;
    if (!m || !a || a->store->durable)
        return zarr_array_write(a, r, buf); /* durable: each job synced as zarr_array_write does */
    if (m->nq && a->store != m->store)
        ZARR_TRY(zarr_multi_store(m)); /* one store per batch */
    for (size_t i = 0; i < m->nwrote; i++)
        if (m->wrote[i] == a) { /* a second write of it reads what the first stored */
            ZARR_TRY(zarr_multi_store(m));
            break;
        }
    if (m->qbytes >= MULTI_QUEUE_MAX)
        ZARR_TRY(zarr_multi_store(m));
    ZARR_TRY(grow((void **)&m->wrote, &m->wrcap, m->nwrote + 1, sizeof *m->wrote));
    m->store              = a->store;
    m->wrote[m->nwrote++] = a;
    rc                    = zarr__engine_run_in(a, r, (void *)buf, ZARR__ENGINE_WRITE, m);
done:
    return rc;
}
