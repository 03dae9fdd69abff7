/*
 * bench_micro.c: the figures behind the engine's design choices (bench/README.md), printed as
 * "F <name> <value> <unit>" lines that bench/run.py puts into results.md. Medians of 7 runs each.
 *
 *  - pool dispatch: one zarr_pool_run of 2 tasks on a 2-thread pool that must run on both threads (each
 *    waits until the other has started), vs 2 empty tasks inline: the cost of waking a worker;
 *  - inline vs pooled W1 (1000 chunks of 4 KB, memory store), raw and zstd;
 *  - codec context: zstd-1 encode of 1000 4 KB chunks with a fresh context per chunk vs one reused;
 *  - fill-chunk elision: writing an all-zero W1 array to a directory store, elided vs written.
 *
 *   bench_micro <scratch dir>
 */
#include <h5zarr/zarr.h>
#include <json-c/json.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define N     1000000
#define CHUNK 1000
#define REPS  7

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int
cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

static void
die(const char *what)
{
    fprintf(stderr, "bench_micro: %s: %s\n", what, zarr_errmsg());
    exit(1);
}

/* Both tasks of a job wait until the other has started, so the job can only finish once the worker
 * has woken up and taken one: the job's time is the dispatch (wake-up) latency. A job whose tasks were
 * both taken by one thread would never finish: the wait gives up after 1 s and the figure says so. */
typedef struct rendezvous {
    int started;
    int timed_out;
} rendezvous;

static int
meet(void *job, size_t i, int worker)
{
    rendezvous *r = job;
    double      t0;
    (void)i;
    (void)worker;
    __atomic_add_fetch(&r->started, 1, __ATOMIC_ACQ_REL);
    t0 = now();
    while (__atomic_load_n(&r->started, __ATOMIC_ACQUIRE) < 2)
        if (now() - t0 > 1.0) {
            r->timed_out = 1;
            break;
        }
    return 0;
}

static int
noop(void *job, size_t i, int worker)
{
    (void)job;
    (void)i;
    (void)worker;
    return 0;
}

static zarr_array *
w1_array(zarr_store *s, const char *path, const char *comp, zarr_pool *pool, size_t inline_bytes,
         bool write_empty)
{
    uint64_t         shape[1] = {N}, chunks[1] = {CHUNK};
    zarr_array_meta *m;
    zarr_array      *a;
    zarr_engine_opts o;
    if (zarr_array_meta_new(2, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m) != ZARR_OK)
        die("meta");
    if (comp) {
        struct json_object *j = json_tokener_parse(comp);
        zarr_chain         *c = NULL;
        if (!j || zarr_chain_from_v2_json(NULL, j, 'C', m->dtype, 1, &c) != ZARR_OK)
            die("chain");
        json_object_put(j);
        zarr_chain_free(m->chain);
        m->chain = c;
    }
    if (zarr_array_create(s, path, m, true, &a) != ZARR_OK)
        die("create");
    zarr_engine_defaults(&o);
    o.pool               = pool;
    o.inline_bytes       = inline_bytes;
    o.write_empty_chunks = write_empty;
    zarr_array_set_opts(a, &o);
    return a;
}

int
main(int argc, char **argv)
{
    const char *scratch = argc > 1 ? argv[1] : "/tmp";
    int        *data = malloc(N * sizeof(int)), *zero = calloc(N, sizeof(int));
    zarr_pool  *p2;
    double      t[REPS], t2[REPS];
    char        dir[4096];

    if (!data || !zero)
        return 1;
    for (int i = 0; i < N; i++)
        data[i] = i;
    mkdir(scratch, 0777);
    if (zarr_pool_new(2, &p2) != ZARR_OK)
        die("pool");

    /* pool dispatch */
    int timed_out = 0;
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        for (int k = 0; k < 2000; k++) {
            rendezvous rv = {0, 0};
            zarr_pool_run(p2, meet, &rv, 2, false);
            timed_out |= rv.timed_out;
        }
        t[r] = (now() - t0) / 2000;
        t0   = now();
        for (int k = 0; k < 2000; k++)
            zarr_pool_run(p2, noop, NULL, 2, true);
        t2[r] = (now() - t0) / 2000;
    }
    if (timed_out)
        printf("F\tpool dispatch (2 tasks on both threads)\tFAILED: a worker never took a task\t\n");
    else
        printf("F\tpool dispatch (2 tasks that must run on both threads)\t%.2f\tus\n", median(t, REPS) * 1e6);
    printf("F\tinline run (2 empty tasks)\t%.3f\tus\n", median(t2, REPS) * 1e6);

    /* inline vs pooled W1 on the memory store */
    for (int c = 0; c < 2; c++) {
        const char *comp = c ? "{\"id\":\"zstd\",\"level\":1}" : NULL;
        for (int mode = 0; mode < 2; mode++) {
            for (int r = 0; r < REPS; r++) {
                zarr_store *s;
                zarr_array *a;
                zarr_region rg;
                double      t0;
                if (zarr_store_new_mem(&s) != ZARR_OK)
                    die("mem");
                a = w1_array(s, "a", comp, p2, mode ? 0 : SIZE_MAX, false);
                zarr_region_all(zarr_array_meta_get(a), &rg);
                t0 = now();
                if (zarr_array_write(a, &rg, data) != ZARR_OK)
                    die("write");
                t[r] = now() - t0;
                t0   = now();
                if (zarr_array_read(a, &rg, zero) != ZARR_OK)
                    die("read");
                t2[r] = now() - t0;
                memset(zero, 0, N * sizeof(int));
                zarr_array_close(a);
                zarr_store_close(s);
            }
            printf("F\tW1 memory %s write, %s\t%.3f\tms\n", c ? "zstd" : "raw",
                   mode ? "2 threads" : "inline (1 thread)", median(t, REPS) * 1e3);
            printf("F\tW1 memory %s read, %s\t%.3f\tms\n", c ? "zstd" : "raw",
                   mode ? "2 threads" : "inline (1 thread)", median(t2, REPS) * 1e3);
        }
    }

    /* codec context: fresh per chunk vs reused */
    {
        uint64_t            shape[1] = {N}, chunks[1] = {CHUNK};
        zarr_array_meta    *m;
        zarr_chain         *c   = NULL;
        zarr_buf            out = ZARR_BUF_INIT;
        struct json_object *j   = json_tokener_parse("{\"id\":\"zstd\",\"level\":1}");
        if (zarr_array_meta_new(2, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m) != ZARR_OK ||
            zarr_chain_from_v2_json(NULL, j, 'C', m->dtype, 1, &c) != ZARR_OK)
            die("chain");
        json_object_put(j);
        for (int r = 0; r < REPS; r++) {
            zarr_codec_ctx *ctx = zarr_codec_ctx_new();
            double          t0  = now();
            for (int k = 0; k < 1000; k++) {
                zarr_codec_ctx *fresh = zarr_codec_ctx_new();
                if (zarr_chain_encode(c, fresh, data + k * CHUNK, chunks, &out) != ZARR_OK)
                    die("encode");
                zarr_codec_ctx_free(fresh);
            }
            t[r] = now() - t0;
            t0   = now();
            for (int k = 0; k < 1000; k++)
                if (zarr_chain_encode(c, ctx, data + k * CHUNK, chunks, &out) != ZARR_OK)
                    die("encode");
            t2[r] = now() - t0;
            zarr_codec_ctx_free(ctx);
        }
        printf("F\tzstd-1 encode of 1000 4 KB chunks, fresh context each\t%.2f\tms\n", median(t, REPS) * 1e3);
        printf("F\tzstd-1 encode of 1000 4 KB chunks, one reused context\t%.2f\tms\n",
               median(t2, REPS) * 1e3);
        zarr_buf_free(&out);
        zarr_chain_free(c);
        zarr_array_meta_free(m);
    }

    /* fill-chunk elision: an all-zero array to a directory store */
    memset(zero, 0, N * sizeof(int));
    for (int we = 0; we < 2; we++) {
        for (int r = 0; r < REPS; r++) {
            zarr_store *s;
            zarr_array *a;
            zarr_region rg;
            double      t0;
            snprintf(dir, sizeof dir, "%s/fill-%d-%d", scratch, we, r);
            t0 = now();
            if (zarr_store_open_dir(dir, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s) != ZARR_OK)
                die("dir");
            a = w1_array(s, "a", NULL, p2, 64 * 1024, we);
            zarr_region_all(zarr_array_meta_get(a), &rg);
            if (zarr_array_write(a, &rg, zero) != ZARR_OK)
                die("write");
            zarr_array_close(a);
            zarr_store_close(s);
            t[r] = now() - t0;
        }
        printf("F\tW1 all-zero write to a directory store, %s\t%.2f\tms\n",
               we ? "write_empty_chunks (1000 files)" : "fill chunks elided (no files)",
               median(t, REPS) * 1e3);
    }
    zarr_pool_free(p2);
    free(data);
    free(zero);
    return 0;
}
