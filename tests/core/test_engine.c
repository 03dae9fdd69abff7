/*
 * test_engine.c: the thread pool and the batched chunk engine.
 *
 * Pool: every task runs exactly once for jobs of 0, 1, few and many tasks on pools of 1, 2 and 5
 * threads; the first error and its message reach the caller; nested and concurrent jobs.
 * Engine: a property test of thousands of random region writes and reads (random starts, strides,
 * blocks, counts, chunk shapes overhanging the array, 1-D to 5-D, several element sizes, fill values)
 * against a dense reference array, byte for byte, inline and pooled, with write_empty_chunks on and off
 * (off: a chunk exists exactly when its data differs from the fill value), on the memory and
 * directory stores and with identity and non-identity codec chains. Plus resize, missing chunks, 0-d
 * arrays, bad regions and corrupt chunks.
 */
#include <unistd.h>

#include "runner.h"

#include "h5zarr/zarr.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdint.h>

/* ---- deterministic random numbers ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t
rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static uint64_t
rnd_below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

/* ---- pool ---- */

typedef struct count_job {
    int   *hits;
    int    nthreads;
    int    bad_worker;
    int    seen[64];
    size_t fail_at;
    int    sleep_us;
    int    wait_other;
} count_job;

static int
count_task(void *arg, size_t i, int worker)
{
    count_job *j = arg;
    if (worker < 0 || worker >= j->nthreads)
        __atomic_store_n(&j->bad_worker, 1, __ATOMIC_RELAXED);
    else
        __atomic_store_n(&j->seen[worker], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&j->hits[i], 1, __ATOMIC_RELAXED);
    if (j->sleep_us)
        usleep((useconds_t)j->sleep_us);
    if (j->wait_other && worker == 0) /* hold the caller until a pool thread took a task (max 10 s) */
        for (int k = 0; k < 10000; k++) {
            int other = 0;
            for (int w = 1; w < j->nthreads; w++)
                other |= __atomic_load_n(&j->seen[w], __ATOMIC_RELAXED);
            if (other)
                break;
            usleep(1000);
        }
    if (i == j->fail_at)
        return zarr_error(ZARR_ECODEC, "boom at task %zu on worker %d", i, worker);
    return ZARR_OK;
}

static int
test_pool_runs_every_task_once(void)
{
    const int    sizes[] = {1, 2, 5};
    const size_t ns[]    = {0, 1, 2, 3, 7, 1000, 10000};
    int         *hits    = calloc(10001, sizeof *hits);
    ASSERT(hits);
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        zarr_pool *p;
        ASSERT_OK(zarr_pool_new(sizes[si], &p));
        ASSERT_EQ_INT(zarr_pool_nthreads(p), sizes[si]);
        for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++)
            for (int inl = 0; inl < 2; inl++) {
                count_job j;
                memset(&j, 0, sizeof j);
                memset(hits, 0, 10001 * sizeof *hits);
                j.hits     = hits;
                j.nthreads = sizes[si];
                j.fail_at  = SIZE_MAX;
                ASSERT_OK(zarr_pool_run(p, count_task, &j, ns[ni], inl));
                for (size_t i = 0; i < ns[ni]; i++)
                    ASSERT_EQ_INT(hits[i], 1);
                ASSERT_EQ_INT(hits[ns[ni]], 0);
                ASSERT_EQ_INT(j.bad_worker, 0);
                if (inl || ns[ni] == 1)
                    for (int w = 1; w < sizes[si]; w++)
                        ASSERT_EQ_INT(j.seen[w], 0); /* inline: the caller only */
            }
        /* Many small jobs back to back. */
        for (int k = 0; k < 3000; k++) {
            count_job j;
            memset(&j, 0, sizeof j);
            hits[0] = hits[1] = hits[2] = 0;
            j.hits                      = hits;
            j.nthreads                  = sizes[si];
            j.fail_at                   = SIZE_MAX;
            ASSERT_OK(zarr_pool_run(p, count_task, &j, 3, false));
            ASSERT(hits[0] == 1 && hits[1] == 1 && hits[2] == 1);
        }
        /* With slow tasks the workers take part. */
        if (sizes[si] > 1) {
            count_job j;
            int       nseen = 0;
            memset(&j, 0, sizeof j);
            memset(hits, 0, 200 * sizeof *hits);
            j.hits       = hits;
            j.nthreads   = sizes[si];
            j.fail_at    = SIZE_MAX;
            j.sleep_us   = 100;
            j.wait_other = 1;
            ASSERT_OK(zarr_pool_run(p, count_task, &j, 200, false));
            for (int w = 0; w < sizes[si]; w++)
                nseen += j.seen[w];
            ASSERT(nseen > 1);
        }
        zarr_pool_free(p);
    }
    zarr_pool_free(NULL);
    ASSERT(zarr_pool_default() != NULL);
    ASSERT(zarr_pool_default() == zarr_pool_default());
    ASSERT(zarr_pool_nthreads(zarr_pool_default()) >= 1);
    free(hits);
    return 0;
}

static int
test_pool_error_propagates(void)
{
    int *hits = calloc(1000, sizeof *hits);
    ASSERT(hits);
    for (int size = 1; size <= 4; size += 3) {
        zarr_pool *p;
        ASSERT_OK(zarr_pool_new(size, &p));
        for (int inl = 0; inl < 2; inl++)
            for (int rep = 0; rep < 20; rep++) {
                count_job j;
                memset(&j, 0, sizeof j);
                memset(hits, 0, 1000 * sizeof *hits);
                j.hits     = hits;
                j.nthreads = size;
                j.fail_at  = 100 + (size_t)rep * 37;
                zarr_error_clear();
                ASSERT_ERR(zarr_pool_run(p, count_task, &j, 1000, inl), ZARR_ECODEC);
                char want[64];
                snprintf(want, sizeof want, "boom at task %zu on worker", j.fail_at);
                ASSERT(strstr(zarr_errmsg(), want) != NULL);
                ASSERT_EQ_INT(hits[j.fail_at], 1);
                int done = 0;
                for (int i = 0; i < 1000; i++) {
                    ASSERT(hits[i] <= 1);
                    done += hits[i];
                }
                if (inl || size == 1)
                    ASSERT_EQ_INT(done, j.fail_at + 1); /* nothing runs after the failure */
                /* The pool is fine afterwards. */
                j.fail_at = SIZE_MAX;
                memset(hits, 0, 1000 * sizeof *hits);
                ASSERT_OK(zarr_pool_run(p, count_task, &j, 1000, inl));
                for (int i = 0; i < 1000; i++)
                    ASSERT_EQ_INT(hits[i], 1);
            }
        zarr_pool_free(p);
    }
    free(hits);
    return 0;
}

typedef struct nest_job {
    zarr_pool *p, *other;
    int        total; /* atomic */
    int        errors;
} nest_job;

static int
inner_task(void *arg, size_t i, int worker)
{
    nest_job *j = arg;
    (void)i;
    (void)worker;
    __atomic_add_fetch(&j->total, 1, __ATOMIC_RELAXED);
    return ZARR_OK;
}

static int
outer_task(void *arg, size_t i, int worker)
{
    nest_job *j = arg;
    int       rc;
    (void)worker;
    /* Same pool: runs inline on this worker. Another pool: a job of its own. */
    if ((rc = zarr_pool_run(j->p, inner_task, j, i % 5, false)) != ZARR_OK)
        return rc;
    return zarr_pool_run(j->other, inner_task, j, 3, false);
}

static void *
job_thread(void *arg)
{
    nest_job *j = arg;
    for (int k = 0; k < 50; k++)
        if (zarr_pool_run(j->p, inner_task, j, 100, false) != ZARR_OK)
            __atomic_add_fetch(&j->errors, 1, __ATOMIC_RELAXED);
    return NULL;
}

static int
test_pool_nested_and_concurrent(void)
{
    zarr_pool *p, *q;
    nest_job   j;
    pthread_t  t[4];
    ASSERT_OK(zarr_pool_new(3, &p));
    ASSERT_OK(zarr_pool_new(2, &q));
    memset(&j, 0, sizeof j);
    j.p     = p;
    j.other = q;
    ASSERT_OK(zarr_pool_run(p, outer_task, &j, 100, false));
    /* sum over i<100 of i%5 = 200, plus 3 per outer task */
    ASSERT_EQ_INT(j.total, 200 + 300);
    /* Several threads running jobs on one pool at once. */
    memset(&j, 0, sizeof j);
    j.p = p;
    for (int i = 0; i < 4; i++)
        ASSERT(pthread_create(&t[i], NULL, job_thread, &j) == 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    ASSERT_EQ_INT(j.errors, 0);
    ASSERT_EQ_INT(j.total, 4 * 50 * 100);
    zarr_pool_free(p);
    zarr_pool_free(q);
    return 0;
}

/* ---- engine helpers ---- */

#ifdef STUB_CHAIN
void stub_chain_set_scramble(zarr_chain *c, int on);
#endif

enum { CHAIN_PLAIN, CHAIN_ZSTD, CHAIN_BLOSC, CHAIN_TRANSPOSE };

static const char *chain_names[] = {"plain", "zstd", "blosc", "transpose"};

/* Makes `m`'s chain one of the test chains. Returns TEST_SKIP if the build can't. */
static int
set_chain(zarr_array_meta *m, int kind)
{
    if (kind == CHAIN_PLAIN)
        return 0;
#ifdef STUB_CHAIN
    stub_chain_set_scramble(m->chain, 1);
    return 0;
#else
    const char *js = NULL;
    char        buf[512];
    if (kind == CHAIN_ZSTD)
        js = "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
             "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}]";
    else if (kind == CHAIN_BLOSC)
        js = "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},"
             "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":\"shuffle\","
             "\"typesize\":4,\"blocksize\":0}}]";
    else {
        int k = snprintf(buf, sizeof buf, "[{\"name\":\"transpose\",\"configuration\":{\"order\":[");
        for (int d = 0; d < m->ndim; d++)
            k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%d", d ? "," : "", m->ndim - 1 - d);
        snprintf(buf + k, sizeof buf - (size_t)k,
                 "]}},{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]");
        js = buf;
    }
    struct json_object *j = json_tokener_parse(js);
    zarr_chain         *c = NULL;
    int                 rc;
    if (!j)
        return 1;
    rc = zarr_chain_from_v3_json(j, m->dtype, m->ndim, &c);
    json_object_put(j);
    if (rc != ZARR_OK) {
        fprintf(stderr, "  can't build chain %s: %s\n", chain_names[kind], zarr_errmsg());
        return rc == ZARR_EUNSUPPORTED ? TEST_SKIP : 1;
    }
    zarr_chain_free(m->chain);
    m->chain = c;
    if (kind == CHAIN_BLOSC && m->dtype->size > 1)
        m->dtype->endian = '>'; /* v2 keeps the byte order in the dtype: make both agree */
    if (kind == CHAIN_TRANSPOSE)
        m->order = 'F'; /* v2 spells a reversing transpose as order F */
    return 0;
#endif
}

typedef struct ref_array {
    int      nd;
    uint64_t shape[5], chunks[5];
    size_t   es;
    uint8_t *data;
    uint8_t  fill[16];
} ref_array;

/* Linear index in the array of buffer element `b` of region `r`. */
static uint64_t
region_index(const ref_array *ra, const zarr_region *r, uint64_t b)
{
    uint64_t idx = 0, mul = 1;
    for (int d = ra->nd - 1; d >= 0; d--) {
        uint64_t ext = r->count[d] * r->block[d];
        uint64_t bi  = b % ext;
        b /= ext;
        uint64_t ai = r->start[d] + (bi / r->block[d]) * r->stride[d] + bi % r->block[d];
        idx += ai * mul;
        mul *= ra->shape[d];
    }
    return idx;
}

static void
random_region(const ref_array *ra, zarr_region *r)
{
    memset(r, 0, sizeof *r);
    bool whole = rnd_below(10) == 0;
    for (int d = 0; d < ra->nd; d++) {
        uint64_t n = ra->shape[d];
        if (whole) {
            r->start[d]  = 0;
            r->stride[d] = r->block[d] = 1;
            r->count[d]                = n;
            continue;
        }
        uint64_t block  = 1 + rnd_below(rnd_below(3) == 0 ? n : (n < 4 ? n : 4));
        uint64_t stride = block + (rnd_below(3) == 0 ? 0 : rnd_below(4));
        uint64_t start  = rnd_below(n - block + 1);
        uint64_t maxc   = (n - start - block) / stride + 1;
        uint64_t count  = 1 + rnd_below(maxc);
        if (rnd_below(4) == 0) { /* contiguous box written as count x block 1 */
            block  = 1;
            stride = 1;
            start  = rnd_below(n);
            count  = 1 + rnd_below(n - start);
        }
        r->start[d]  = start;
        r->stride[d] = stride;
        r->count[d]  = count;
        r->block[d]  = block;
    }
}

static bool
chunk_has_data(const ref_array *ra, const uint64_t *coords)
{
    uint64_t lo[5], hi[5], idx[5];
    for (int d = 0; d < ra->nd; d++) {
        lo[d]  = coords[d] * ra->chunks[d];
        hi[d]  = lo[d] + ra->chunks[d] < ra->shape[d] ? lo[d] + ra->chunks[d] : ra->shape[d];
        idx[d] = lo[d];
    }
    for (;;) {
        uint64_t li = 0;
        for (int d = 0; d < ra->nd; d++)
            li = li * ra->shape[d] + idx[d];
        if (memcmp(ra->data + li * ra->es, ra->fill, ra->es) != 0)
            return true;
        int d = ra->nd - 1;
        for (; d >= 0; d--) {
            if (++idx[d] < hi[d])
                break;
            idx[d] = lo[d];
        }
        if (d < 0)
            return false;
    }
}

static int
check_whole(zarr_array *a, const ref_array *ra)
{
    zarr_region r;
    uint64_t    n = 1;
    for (int d = 0; d < ra->nd; d++)
        n *= ra->shape[d];
    uint8_t *buf = malloc(n * ra->es);
    ASSERT(buf);
    memset(buf, 0xCD, n * ra->es);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_EQ_INT(zarr_region_nelem(ra->nd, &r), n);
    ASSERT_OK(zarr_array_read(a, &r, buf));
    for (uint64_t i = 0; i < n * ra->es; i++)
        if (buf[i] != ra->data[i]) {
            free(buf);
            FAILF("whole read differs at byte %llu", (unsigned long long)i);
        }
    free(buf);
    return 0;
}

typedef struct prop_cfg {
    zarr_store *store;
    zarr_pool  *pool;
    bool        pooled;
    bool        write_empty;
    int         chain;
    int         narrays;
    int         nops;
    int         zarr_format;
} prop_cfg;

static const size_t elem_sizes[] = {1, 2, 4, 8, 3, 12};

static int
run_property(const prop_cfg *cfg, long *nops_done)
{
    static const uint64_t maxdim[6] = {0, 400, 40, 14, 7, 5};
    int                   rc;

    for (int ai = 0; ai < cfg->narrays; ai++) {
        ref_array        ra;
        zarr_array_meta *m;
        zarr_array      *a;
        zarr_engine_opts o;
        uint64_t         n = 1;
        char             path[64];

        memset(&ra, 0, sizeof ra);
        ra.nd = 1 + (int)rnd_below(5);
        for (int d = 0; d < ra.nd; d++) {
            ra.shape[d]  = 1 + rnd_below(maxdim[ra.nd]);
            ra.chunks[d] = 1 + rnd_below(rnd_below(2) ? ra.shape[d] + 2 : (ra.shape[d] + 3) / 3);
            n *= ra.shape[d];
        }
        ra.es = elem_sizes[rnd_below(sizeof elem_sizes / sizeof *elem_sizes)];
        if (cfg->chain == CHAIN_BLOSC)
            ra.es = 4; /* the blosc config fixes typesize 4 */
        zarr_dtype *t = (ra.es & (ra.es - 1)) == 0 ? zarr_dtype_new(ZARR_UINT, ra.es)
                                                   : zarr_dtype_new(ZARR_FIXED_BYTES, ra.es);
        ASSERT(t);
        ASSERT_OK(zarr_array_meta_new(cfg->zarr_format, ra.nd, ra.shape, ra.chunks, t, &m));
        if (rnd_below(2))
            for (size_t k = 0; k < ra.es; k++)
                ra.fill[k] = (uint8_t)rnd();
        memcpy(m->fill, ra.fill, ra.es);
        m->fill_defined = true;
        if ((rc = set_chain(m, cfg->chain)) != 0) {
            zarr_array_meta_free(m);
            return rc;
        }
        snprintf(path, sizeof path, "grp/a%d", ai);
        ASSERT_OK(zarr_array_create(cfg->store, path, m, true, &a));
        zarr_engine_defaults(&o);
        o.pool               = cfg->pool;
        o.inline_bytes       = cfg->pooled ? 0 : SIZE_MAX;
        o.write_empty_chunks = cfg->write_empty;
        zarr_array_set_opts(a, &o);

        ra.data = malloc(n * ra.es);
        ASSERT(ra.data);
        for (uint64_t i = 0; i < n; i++)
            memcpy(ra.data + i * ra.es, ra.fill, ra.es);
        if (check_whole(a, &ra))
            return 1;

        for (int op = 0; op < cfg->nops; op++) {
            zarr_region r;
            random_region(&ra, &r);
            uint64_t sel = zarr_region_nelem(ra.nd, &r);
            uint8_t *buf = malloc(sel * ra.es + 1);
            ASSERT(buf);
            if (rnd_below(5) < 3) {
                int kind = (int)rnd_below(4); /* 0: fill only, 1: mixed, 2-3: random */
                for (uint64_t i = 0; i < sel; i++) {
                    bool f = kind == 0 || (kind == 1 && rnd_below(2));
                    for (size_t k = 0; k < ra.es; k++)
                        buf[i * ra.es + k] = f ? ra.fill[k] : (uint8_t)rnd();
                }
                rc = zarr_array_write(a, &r, buf);
                if (rc != ZARR_OK) {
                    free(buf);
                    FAILF("write failed (%d): %s", rc, zarr_errmsg());
                }
                for (uint64_t i = 0; i < sel; i++)
                    memcpy(ra.data + region_index(&ra, &r, i) * ra.es, buf + i * ra.es, ra.es);
            }
            else {
                memset(buf, 0xCD, sel * ra.es);
                rc = zarr_array_read(a, &r, buf);
                if (rc != ZARR_OK) {
                    free(buf);
                    FAILF("read failed (%d): %s", rc, zarr_errmsg());
                }
                for (uint64_t i = 0; i < sel; i++)
                    if (memcmp(buf + i * ra.es, ra.data + region_index(&ra, &r, i) * ra.es, ra.es) != 0) {
                        free(buf);
                        FAILF("array %d (nd %d, es %zu) op %d: read differs at element %llu", ai, ra.nd,
                              ra.es, op, (unsigned long long)i);
                    }
            }
            free(buf);
            (*nops_done)++;
        }
        if (check_whole(a, &ra))
            return 1;
        /* Chunk presence: without write_empty_chunks a chunk exists exactly when it holds data. */
        if (!cfg->write_empty) {
            uint64_t nch[5], c[5] = {0}, total = 1;
            for (int d = 0; d < ra.nd; d++) {
                nch[d] = (ra.shape[d] + ra.chunks[d] - 1) / ra.chunks[d];
                total *= nch[d];
            }
            for (uint64_t ci = 0; ci < total; ci++) {
                char     key[256];
                uint64_t x = ci;
                for (int d = ra.nd - 1; d >= 0; d--) {
                    c[d] = x % nch[d];
                    x /= nch[d];
                }
                ASSERT_OK(zarr_chunk_key(zarr_array_meta_get(a), zarr_array_path(a), c, key, sizeof key));
                bool exists = zarr_store_exists(cfg->store, key) == ZARR_OK;
                if (exists != chunk_has_data(&ra, c))
                    FAILF("chunk '%s' exists=%d but has data=%d", key, exists, !exists);
            }
        }
        zarr_array_close(a);
        /* Reopen from the store: same data. */
        ASSERT_OK(zarr_array_open(cfg->store, path, &a));
        zarr_array_set_opts(a, &o);
        if (check_whole(a, &ra))
            return 1;
        zarr_array_close(a);
        free(ra.data);
    }
    return 0;
}

static uint64_t
seed_from_env(void)
{
    const char *s = getenv("H5ZARR_TEST_SEED");
    return s ? strtoull(s, NULL, 0) : 0x1234567ULL;
}

static int
property_suite(zarr_store *s, int chain, int narrays, int nops)
{
    zarr_pool *pool;
    long       total = 0;
    int        rc    = 0;
    ASSERT_OK(zarr_pool_new(3, &pool));
    for (int fmt = 2; fmt <= 3 && !rc; fmt++)
        for (int pooled = 0; pooled < 2 && !rc; pooled++)
            for (int we = 0; we < 2 && !rc; we++) {
                prop_cfg cfg = {s, pool, pooled, we, chain, narrays, nops, fmt};
                rng_state    = seed_from_env() ^ ((uint64_t)(fmt * 4 + pooled * 2 + we + 1) << 32) ^
                            (uint64_t)(chain + 1) * 0x9E3779B97F4A7C15ULL;
                rc = run_property(&cfg, &total);
                if (rc && rc != TEST_SKIP)
                    fprintf(stderr, "  failed with format %d, pooled %d, write_empty %d, chain %s\n", fmt,
                            pooled, we, chain_names[chain]);
            }
    zarr_pool_free(pool);
    if (!rc)
        printf("  %ld random region operations (%s chain)\n", total, chain_names[chain]);
    return rc;
}

static int
test_property_mem(void)
{
    zarr_store *s;
    ASSERT_OK(zarr_store_new_mem(&s));
    int rc = property_suite(s, CHAIN_PLAIN, 25, 60);
    zarr_store_close(s);
    return rc;
}

static int
test_property_mem_codecs(void)
{
    int rc = 0;
    for (int chain = CHAIN_ZSTD; chain <= CHAIN_TRANSPOSE && (rc == 0 || rc == TEST_SKIP); chain++) {
        zarr_store *s;
        int         r;
        ASSERT_OK(zarr_store_new_mem(&s));
        r = property_suite(s, chain, 8, 50);
        zarr_store_close(s);
        if (r == TEST_SKIP)
            printf("  chain %s skipped\n", chain_names[chain]);
        else
            rc = r;
#ifdef STUB_CHAIN
        break; /* the stub has one non-identity chain */
#endif
    }
    return rc;
}

static int
test_property_dir(void)
{
    const char *dir = test_tmpdir("engine-prop");
    zarr_store *s;
    ASSERT(dir);
    ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_CREATE, &s));
    int rc = property_suite(s, CHAIN_PLAIN, 4, 30);
    zarr_store_close(s);
    return rc;
}

/* ---- targeted engine tests ---- */

static int
make_array(zarr_store *s, const char *path, int nd, const uint64_t *shape, const uint64_t *chunks,
           int32_t fill, zarr_array **out)
{
    zarr_array_meta *m;
    ASSERT_OK(zarr_array_meta_new(3, nd, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m));
    memcpy(m->fill, &fill, 4);
    m->fill_defined = true;
    ASSERT_OK(zarr_array_create(s, path, m, false, out));
    return 0;
}

static int
test_missing_chunks_read_fill(void)
{
    zarr_store *s;
    zarr_array *a;
    uint64_t    shape[2] = {10, 7}, chunks[2] = {4, 3};
    int32_t     buf[70];
    zarr_region r;
    uint64_t    nbytes = 99;
    ASSERT_OK(zarr_store_new_mem(&s));
    if (make_array(s, "x", 2, shape, chunks, -5, &a))
        return 1;
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_read(a, &r, buf));
    for (int i = 0; i < 70; i++)
        ASSERT_EQ_INT(buf[i], -5);
    ASSERT_OK(zarr_array_stored_bytes(a, &nbytes));
    ASSERT_EQ_INT(nbytes, 0);
    /* One element written: only its chunk appears, padded to the full chunk shape. */
    uint64_t st[2] = {9, 6}, ct[2] = {1, 1};
    int32_t  v = 42;
    zarr_region_box(2, st, ct, &r);
    ASSERT_OK(zarr_array_write(a, &r, &v));
    ASSERT_OK(zarr_store_exists(s, "x/c/2/2"));
    ASSERT_ERR(zarr_store_exists(s, "x/c/0/0"), ZARR_ENOTFOUND);
    ASSERT_OK(zarr_array_stored_bytes(a, &nbytes));
    ASSERT_EQ_INT(nbytes, 4 * 3 * 4); /* identity chain: the full chunk */
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_read(a, &r, buf));
    for (int i = 0; i < 70; i++)
        ASSERT_EQ_INT(buf[i], i == 69 ? 42 : -5);
    /* Writing the fill value back removes the chunk (write_empty_chunks off by default). */
    v = -5;
    zarr_region_box(2, st, ct, &r);
    ASSERT_OK(zarr_array_write(a, &r, &v));
    ASSERT_ERR(zarr_store_exists(s, "x/c/2/2"), ZARR_ENOTFOUND);
    zarr_array_close(a);
    zarr_store_close(s);
    return 0;
}

static int
test_bad_regions_and_corrupt_chunks(void)
{
    zarr_store *s;
    zarr_array *a;
    uint64_t    shape[2] = {10, 7}, chunks[2] = {4, 3};
    int32_t     buf[70] = {0};
    zarr_region r;
    ASSERT_OK(zarr_store_new_mem(&s));
    if (make_array(s, "x", 2, shape, chunks, 0, &a))
        return 1;
    {
        zarr_array_meta *m;
        zarr_array      *b = NULL;
        ASSERT_OK(zarr_array_meta_new(3, 2, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m));
        ASSERT_ERR(zarr_array_create(s, "x", m, false, &b), ZARR_EEXIST);
        ASSERT(b == NULL);
    }
    uint64_t st[2] = {8, 0}, ct[2] = {3, 1};
    zarr_region_box(2, st, ct, &r);
    ASSERT_ERR(zarr_array_read(a, &r, buf), ZARR_EINVAL); /* rows 8..10 of 10 */
    ASSERT(strstr(zarr_errmsg(), "dimension 0") != NULL);
    zarr_region_box(2, NULL, shape, &r);
    r.stride[1] = 2;
    r.block[1]  = 3;
    r.count[1]  = 2;
    ASSERT_ERR(zarr_array_write(a, &r, buf), ZARR_EINVAL); /* overlapping blocks */
    r.stride[1] = 1;
    r.block[1]  = 0;
    ASSERT_ERR(zarr_array_write(a, &r, buf), ZARR_EINVAL);
    zarr_region_box(2, NULL, shape, &r);
    r.count[0] = 0; /* empty selection: nothing to do */
    ASSERT_OK(zarr_array_write(a, &r, NULL));
    r.count[0] = UINT64_MAX;
    ASSERT(zarr_array_read(a, &r, buf) != ZARR_OK);
    /* A chunk of the wrong size is an error naming the chunk, from a worker or inline. */
    zarr_region_all(zarr_array_meta_get(a), &r);
    for (int i = 0; i < 70; i++)
        buf[i] = i + 1;
    ASSERT_OK(zarr_array_write(a, &r, buf));
    ASSERT_OK(zarr_store_set(s, "x/c/1/1", "short", 5));
    for (int pooled = 0; pooled < 2; pooled++) {
        zarr_engine_opts o;
        zarr_engine_defaults(&o);
        o.inline_bytes = pooled ? 0 : SIZE_MAX;
        zarr_array_set_opts(a, &o);
        zarr_error_clear();
        ASSERT_ERR(zarr_array_read(a, &r, buf), ZARR_ECODEC);
        ASSERT(strstr(zarr_errmsg(), "x/c/1/1") != NULL);
    }
    /* Read-only store: writes refused. */
    zarr_array_close(a);
    zarr_store_close(s);
    return 0;
}

static int
test_resize(void)
{
    zarr_store *stores[2];
    const char *dir = test_tmpdir("engine-resize");
    ASSERT(dir);
    ASSERT_OK(zarr_store_new_mem(&stores[0]));
    ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_CREATE, &stores[1]));
    for (int si = 0; si < 2; si++) {
        zarr_store *s = stores[si];
        zarr_array *a;
        uint64_t    shape[2] = {10, 9}, chunks[2] = {4, 4};
        int32_t     buf[200];
        zarr_region r;
        if (make_array(s, "r", 2, shape, chunks, 7, &a))
            return 1;
        for (int i = 0; i < 90; i++)
            buf[i] = 1000 + i;
        zarr_region_all(zarr_array_meta_get(a), &r);
        ASSERT_OK(zarr_array_write(a, &r, buf));
        ASSERT_OK(zarr_store_exists(s, "r/c/2/2"));
        /* Shrink to 5 x 3: chunk rows 2 and chunk cols 1,2 go; the edge chunks keep only the kept part. */
        uint64_t small[2] = {5, 3};
        ASSERT_OK(zarr_array_resize(a, small));
        ASSERT_EQ_INT(zarr_array_meta_get(a)->shape[0], 5);
        ASSERT_ERR(zarr_store_exists(s, "r/c/2/2"), ZARR_ENOTFOUND);
        ASSERT_ERR(zarr_store_exists(s, "r/c/2/0"), ZARR_ENOTFOUND);
        ASSERT_ERR(zarr_store_exists(s, "r/c/0/1"), ZARR_ENOTFOUND);
        ASSERT_OK(zarr_store_exists(s, "r/c/1/0"));
        zarr_region_all(zarr_array_meta_get(a), &r);
        ASSERT_OK(zarr_array_read(a, &r, buf));
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 3; j++)
                ASSERT_EQ_INT(buf[i * 3 + j], 1000 + i * 9 + j);
        zarr_array_close(a);
        /* Grow (reopened: the metadata was rewritten): the old contents beyond 5 x 3 read as fill. */
        ASSERT_OK(zarr_array_open(s, "r", &a));
        ASSERT_EQ_INT(zarr_array_meta_get(a)->shape[1], 3);
        uint64_t big[2] = {12, 11};
        ASSERT_OK(zarr_array_resize(a, big));
        zarr_region_all(zarr_array_meta_get(a), &r);
        ASSERT_OK(zarr_array_read(a, &r, buf));
        for (int i = 0; i < 12; i++)
            for (int j = 0; j < 11; j++)
                ASSERT_EQ_INT(buf[i * 11 + j], i < 5 && j < 3 ? 1000 + i * 9 + j : 7);
        /* Shrink to zero rows and back. */
        uint64_t zero[2] = {0, 11};
        ASSERT_OK(zarr_array_resize(a, zero));
        ASSERT_ERR(zarr_store_exists(s, "r/c/0/0"), ZARR_ENOTFOUND);
        ASSERT_OK(zarr_array_resize(a, big));
        ASSERT_OK(zarr_array_read(a, &r, buf));
        for (int i = 0; i < 132; i++)
            ASSERT_EQ_INT(buf[i], 7);
        zarr_array_close(a);
        zarr_store_close(s);
    }
    return 0;
}

static int
test_scalar_array(void)
{
    zarr_store      *s;
    zarr_array      *a;
    zarr_array_meta *m;
    zarr_region      r;
    double           v = 3.25, w = 0;
    ASSERT_OK(zarr_store_new_mem(&s));
    ASSERT_OK(zarr_array_meta_new(3, 0, NULL, NULL, zarr_dtype_new(ZARR_FLOAT, 8), &m));
    ASSERT_OK(zarr_array_create(s, "", m, false, &a));
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_EQ_INT(zarr_region_nelem(0, &r), 1);
    ASSERT_OK(zarr_array_read(a, &r, &w));
    ASSERT(w == 0);
    ASSERT_OK(zarr_array_write(a, &r, &v));
    ASSERT_OK(zarr_store_exists(s, "c"));
    ASSERT_OK(zarr_array_read(a, &r, &w));
    ASSERT(w == 3.25);
    zarr_array_close(a);
    zarr_store_close(s);
    return 0;
}

/* vlen strings: writes borrow the caller's pointers, reads allocate (freed with clear_elems). */
static int
test_vlen_strings(void)
{
    zarr_store      *s;
    zarr_pool       *pool;
    ref_array        ra;
    uint64_t         shape[2] = {13, 11}, chunks[2] = {4, 3};
    char            *ref[13 * 11];
    zarr_dtype      *t = zarr_dtype_new(ZARR_VLEN_UTF8, sizeof(char *));
    zarr_array_meta *m;
    zarr_array      *a;
    int              nops = 0;

    ASSERT(t);
    ASSERT_OK(zarr_store_new_mem(&s));
    ASSERT_OK(zarr_pool_new(3, &pool));
    ASSERT_OK(zarr_array_meta_new(3, 2, shape, chunks, t, &m));
    ASSERT_OK(zarr_array_create(s, "str", m, false, &a));
    memset(&ra, 0, sizeof ra);
    ra.nd = 2;
    memcpy(ra.shape, shape, sizeof shape);
    memcpy(ra.chunks, chunks, sizeof chunks);
    ra.es = sizeof(char *);
    for (int i = 0; i < 13 * 11; i++)
        ref[i] = NULL;
    rng_state = seed_from_env() ^ 0x5151;
    for (int pooled = 0; pooled < 2; pooled++) {
        zarr_engine_opts o;
        zarr_engine_defaults(&o);
        o.pool         = pool;
        o.inline_bytes = pooled ? 0 : SIZE_MAX;
        zarr_array_set_opts(a, &o);
        for (int op = 0; op < 300; op++) {
            zarr_region r;
            random_region(&ra, &r);
            uint64_t sel = zarr_region_nelem(2, &r);
            char   **buf = calloc(sel, sizeof *buf);
            ASSERT(buf);
            if (rnd_below(2)) {
                for (uint64_t i = 0; i < sel; i++) {
                    char tmp[64];
                    snprintf(tmp, sizeof tmp, "s%llu-%d", (unsigned long long)rnd_below(1000000), op);
                    buf[i] = rnd_below(8) == 0 ? NULL : strdup(tmp);
                }
                ASSERT_OK(zarr_array_write(a, &r, buf));
                for (uint64_t i = 0; i < sel; i++) {
                    uint64_t k = region_index(&ra, &r, i);
                    free(ref[k]);
                    ref[k] = buf[i] ? strdup(buf[i]) : NULL;
                }
                zarr_dtype_clear_elems(zarr_array_meta_get(a)->dtype, buf, sel); /* still ours */
            }
            else {
                ASSERT_OK(zarr_array_read(a, &r, buf));
                for (uint64_t i = 0; i < sel; i++) {
                    const char *want = ref[region_index(&ra, &r, i)];
                    if (strcmp(buf[i] ? buf[i] : "", want ? want : "") != 0)
                        FAILF("op %d element %llu: '%s' != '%s'", op, (unsigned long long)i,
                              buf[i] ? buf[i] : "", want ? want : "");
                }
                zarr_dtype_clear_elems(zarr_array_meta_get(a)->dtype, buf, sel);
            }
            free(buf);
            nops++;
        }
    }
    for (int i = 0; i < 13 * 11; i++)
        free(ref[i]);
    printf("  %d string region operations\n", nops);
    zarr_array_close(a);
    zarr_pool_free(pool);
    zarr_store_close(s);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(pool_runs_every_task_once),
    TEST_ENTRY(pool_error_propagates),
    TEST_ENTRY(pool_nested_and_concurrent),
    TEST_ENTRY(missing_chunks_read_fill),
    TEST_ENTRY(bad_regions_and_corrupt_chunks),
    TEST_ENTRY(resize),
    TEST_ENTRY(scalar_array),
    TEST_ENTRY(vlen_strings),
    TEST_ENTRY(property_mem),
    TEST_ENTRY(property_mem_codecs),
    TEST_ENTRY(property_dir),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
