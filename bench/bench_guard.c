/*
 * bench_guard.c: the W1 write path (1,000,000 int32 in 1000 chunks of 1000, zarr v2, no compressor,
 * memory store, core API, a 1-thread pool) for an instruction-count regression guard. guard.sh runs it
 * under `valgrind --tool=callgrind --collect-atstart=no --toggle-collect=guard_measured_write`, so only
 * the measured zarr_array_write is counted: one warm-up write first sets up the per-thread scratch,
 * and the array creation stays outside the count. Instruction counts are deterministic (no timing).
 *
 *   bench_guard [raw|zstd]   (default raw; zstd = the same path with a {"id":"zstd","level":1} chain)
 */
#include <h5zarr/zarr.h>
#include <json-c/json.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N     1000000
#define CHUNK 1000

static int
make_array(zarr_store *s, const char *path, const char *compressor, zarr_pool *pool, zarr_array **out)
{
    uint64_t         shape[1] = {N}, chunks[1] = {CHUNK};
    zarr_array_meta *m;
    zarr_engine_opts o;
    int              rc;

    if ((rc = zarr_array_meta_new(2, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m)) != ZARR_OK)
        return rc;
    if (compressor) {
        struct json_object *j = json_tokener_parse(compressor);
        zarr_chain         *c = NULL;
        if (!j || (rc = zarr_chain_from_v2_json(NULL, j, 'C', m->dtype, 1, &c)) != ZARR_OK) {
            json_object_put(j);
            zarr_array_meta_free(m);
            return rc ? rc : ZARR_EINVAL;
        }
        json_object_put(j);
        zarr_chain_free(m->chain);
        m->chain = c;
    }
    if ((rc = zarr_array_create(s, path, m, true, out)) != ZARR_OK)
        return rc;
    zarr_engine_defaults(&o);
    o.pool = pool;
    zarr_array_set_opts(*out, &o);
    return ZARR_OK;
}

/* The measured call (callgrind toggles collection on this function). */
__attribute__((noinline)) int
guard_measured_write(zarr_array *a, const zarr_region *r, const void *buf)
{
    return zarr_array_write(a, r, buf);
}

int
main(int argc, char **argv)
{
    const char *comp = argc > 1 && strcmp(argv[1], "zstd") == 0 ? "{\"id\":\"zstd\",\"level\":1}" : NULL;
    int        *data = malloc(N * sizeof(int)), *back = malloc(N * sizeof(int));
    zarr_pool  *pool;
    zarr_store *warm, *s;
    zarr_array *a, *b;
    zarr_region r;

    if (!data || !back)
        return 1;
    for (int i = 0; i < N; i++)
        data[i] = i;
    if (zarr_pool_new(1, &pool) != ZARR_OK || zarr_store_new_mem(&warm) != ZARR_OK ||
        zarr_store_new_mem(&s) != ZARR_OK || make_array(warm, "a", comp, pool, &a) != ZARR_OK ||
        make_array(s, "a", comp, pool, &b) != ZARR_OK) {
        fprintf(stderr, "bench_guard: setup failed: %s\n", zarr_errmsg());
        return 1;
    }
    zarr_region_all(zarr_array_meta_get(a), &r);
    if (zarr_array_write(a, &r, data) != ZARR_OK || guard_measured_write(b, &r, data) != ZARR_OK ||
        zarr_array_read(b, &r, back) != ZARR_OK) {
        fprintf(stderr, "bench_guard: write failed: %s\n", zarr_errmsg());
        return 1;
    }
    if (memcmp(data, back, N * sizeof(int)) != 0) {
        fprintf(stderr, "bench_guard: read back wrong data\n");
        return 1;
    }
    zarr_array_close(a);
    zarr_array_close(b);
    zarr_store_close(warm);
    zarr_store_close(s);
    zarr_pool_free(pool);
    free(data);
    free(back);
    return 0;
}
