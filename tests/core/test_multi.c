/*
 * test_multi.c: several arrays' transfers as one store batch (zarr_multi, zarr.h), counted through the
 * store seam (a counting store that prefers batches, over a memory store): reads of k arrays planned
 * together are one get_many of all their chunks and nothing else, and every value reads back; writes of
 * k arrays are one set_many, nothing reaches the store before zarr_multi_store, a second write of one
 * array stores what was queued first (it reads what the first wrote), zarr_multi_free drops what was
 * queued; a sharded array in the batch is read alone with the right values; chunks missing from the
 * store read as fill.
 */
#include "runner.h"

#include "h5zarr/zarr.h"
#include "h5zarr/zarr_store_count.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K  5  /* arrays */
#define N  12 /* elements of each, in chunks of 4 */
#define CH 4

static zarr_store_count *g_count;

static zarr_store *
cstore_new(void)
{
    zarr_store *inner = NULL;
    if (zarr_store_new_mem(&inner) != ZARR_OK || zarr_store_count_new(inner, true, &g_count) != ZARR_OK)
        return NULL;
    return zarr_store_count_store(g_count);
}

static zarr_store_counts
C(void)
{
    zarr_store_counts n;
    zarr_store_count_read(g_count, &n);
    return n;
}

/* A 1-D int32 array of N elements in chunks of CH at `path`, fill -1; sharded: one shard of 3 inner
 * chunks. */
static int
make(zarr_store *s, const char *path, bool sharded, zarr_array **out)
{
    char             doc[1024];
    zarr_array_meta *m = NULL;
    snprintf(doc, sizeof doc,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%d],\"data_type\":\"int32\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[%d]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":-1,\"codecs\":[%s]}",
             N, sharded ? N : CH,
             sharded ? "{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[4],\"codecs\":"
                       "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],\"index_codecs\":"
                       "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}}"
                     : "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}");
    ASSERT_OK(zarr_array_meta_parse_v3(doc, strlen(doc), path, &m));
    ASSERT_OK(zarr_array_create(s, path, m, true, out));
    return 0;
}

static int32_t
val(int a, int i)
{
    return a * 100 + i;
}

static int
test_read_one_batch(void)
{
    zarr_store *s = cstore_new();
    zarr_array *a[K + 1];
    zarr_multi *m = NULL;
    zarr_region r;
    int32_t     buf[K + 1][N];
    ASSERT(s);
    for (int k = 0; k <= K; k++) {
        char p[16];
        snprintf(p, sizeof p, "v%d", k);
        ASSERT(make(s, p, k == K, &a[k]) == 0); /* the last one sharded */
        for (int i = 0; i < N; i++)
            buf[k][i] = val(k, i);
        zarr_region_all(zarr_array_meta_get(a[k]), &r);
        if (k != 2) /* v2 is never written: its chunks are missing, read as fill */
            ASSERT_OK(zarr_array_write(a[k], &r, buf[k]));
    }
    zarr_store_count_reset(g_count);
    ASSERT_OK(zarr_multi_new(&m));
    zarr_region_all(zarr_array_meta_get(a[0]), &r);
    for (int k = 0; k < K; k++)
        ASSERT_OK(zarr_multi_plan(m, a[k], &r));
    ASSERT_ERR(zarr_multi_plan(m, a[K], &r), ZARR_EUNSUPPORTED); /* sharded: read alone */
    ASSERT_EQ_INT((int)C().get_many, 0);                         /* planning reads nothing */
    ASSERT_OK(zarr_multi_fetch(m));
    ASSERT_EQ_INT((int)C().get_many, 1);
    ASSERT_EQ_INT((int)C().get_many_items, K * (N / CH));
    memset(buf, 0, sizeof buf);
    for (int k = 0; k < K; k++)
        ASSERT_OK(zarr_multi_read(m, a[k], &r, buf[k]));
    {
        zarr_store_counts n = C();
        /* nothing more for the planned arrays: no get, no metadata, no second batch */
        ASSERT_EQ_INT((int)(n.get + n.get_range + n.get_into + n.exists + n.size + n.list), 0);
        ASSERT_EQ_INT((int)n.get_many, 1);
    }
    ASSERT_OK(zarr_multi_read(m, a[K], &r, buf[K])); /* its own job (index, then ranges) */
    for (int k = 0; k <= K; k++)
        for (int i = 0; i < N; i++)
            ASSERT_EQ_INT(buf[k][i], k == 2 ? -1 : val(k, i));
    /* a second read of a chunk already handed out goes to the store, with the right values */
    memset(buf[0], 0, sizeof buf[0]);
    zarr_store_count_reset(g_count);
    ASSERT_OK(zarr_multi_read(m, a[0], &r, buf[0]));
    ASSERT_EQ_INT((int)C().get_many, 1);
    for (int i = 0; i < N; i++)
        ASSERT_EQ_INT(buf[0][i], val(0, i));
    zarr_multi_free(m);
    for (int k = 0; k <= K; k++)
        zarr_array_close(a[k]);
    zarr_store_close(s);
    return 0;
}

static int
test_write_one_batch(void)
{
    zarr_store *s = cstore_new();
    zarr_array *a[K];
    zarr_multi *m = NULL;
    zarr_region r, part;
    int32_t     buf[K][N], back[N];
    uint64_t    st = 2, cnt = 3;
    ASSERT(s);
    for (int k = 0; k < K; k++) {
        char p[16];
        snprintf(p, sizeof p, "w%d", k);
        ASSERT(make(s, p, false, &a[k]) == 0);
        for (int i = 0; i < N; i++)
            buf[k][i] = val(k, i) + 7;
    }
    zarr_region_all(zarr_array_meta_get(a[0]), &r);
    zarr_store_count_reset(g_count);
    ASSERT_OK(zarr_multi_new(&m));
    for (int k = 0; k < K; k++)
        ASSERT_OK(zarr_multi_write(m, a[k], &r, buf[k]));
    {
        zarr_store_counts n = C();
        ASSERT_EQ_INT((int)(n.set + n.set_many), 0); /* queued, not stored */
    }
    memset(buf, 0, sizeof buf); /* the caller's buffers are free once the writes returned */
    ASSERT_OK(zarr_multi_store(m));
    ASSERT_EQ_INT((int)C().set_many, 1);
    ASSERT_EQ_INT((int)C().set_many_items, K * (N / CH));
    ASSERT_EQ_INT((int)C().set, 0);
    for (int k = 0; k < K; k++) {
        ASSERT_OK(zarr_array_read(a[k], &r, back));
        for (int i = 0; i < N; i++)
            ASSERT_EQ_INT(back[i], val(k, i) + 7);
    }
    /* a second write of one array in a batch stores the first before its read-modify-write */
    zarr_region_box(1, &st, &cnt, &part);
    for (int i = 0; i < N; i++)
        buf[0][i] = 5000 + i;
    ASSERT_OK(zarr_multi_write(m, a[0], &r, buf[0]));
    ASSERT_OK(zarr_multi_write(m, a[0], &part, (int32_t[]){1, 2, 3}));
    ASSERT_OK(zarr_multi_store(m));
    ASSERT_OK(zarr_array_read(a[0], &r, back));
    for (int i = 0; i < N; i++)
        ASSERT_EQ_INT(back[i], i >= 2 && i < 5 ? i - 1 : 5000 + i);
    /* dropped: nothing queued reaches the store */
    for (int i = 0; i < N; i++)
        buf[1][i] = -5;
    ASSERT_OK(zarr_multi_write(m, a[1], &r, buf[1]));
    zarr_multi_free(m);
    ASSERT_OK(zarr_array_read(a[1], &r, back));
    for (int i = 0; i < N; i++)
        ASSERT_EQ_INT(back[i], val(1, i) + 7);
    for (int k = 0; k < K; k++)
        zarr_array_close(a[k]);
    zarr_store_close(s);
    return 0;
}

static int
test_null_and_local(void)
{
    zarr_store *s = NULL;
    zarr_array *a = NULL;
    zarr_multi *m = NULL;
    zarr_region r;
    int32_t     buf[N];
    ASSERT_ERR(zarr_multi_new(NULL), ZARR_EINVAL);
    zarr_multi_free(NULL);
    /* a store without batches: the calls are zarr_array_read / _write */
    ASSERT_OK(zarr_store_new_mem(&s));
    ASSERT(make(s, "x", false, &a) == 0);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_multi_new(&m));
    ASSERT_ERR(zarr_multi_plan(m, a, &r), ZARR_EUNSUPPORTED);
    for (int i = 0; i < N; i++)
        buf[i] = i * 3;
    ASSERT_OK(zarr_multi_write(m, a, &r, buf));
    ASSERT_OK(zarr_multi_store(m));
    memset(buf, 0, sizeof buf);
    ASSERT_OK(zarr_multi_fetch(m));
    ASSERT_OK(zarr_multi_read(m, a, &r, buf));
    for (int i = 0; i < N; i++)
        ASSERT_EQ_INT(buf[i], i * 3);
    zarr_multi_free(m);
    zarr_array_close(a);
    zarr_store_close(s);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(read_one_batch),
    TEST_ENTRY(write_one_batch),
    TEST_ENTRY(null_and_local),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
