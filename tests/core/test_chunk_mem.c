/*
 * test_chunk_mem.c: the cache entries' memory (zarr/chunk_mem.c). Entries of 64 KiB .. 2 MiB come from
 * 2 MiB regions as runs of 64 KiB slots, never overlapping; what is given back is used again without new
 * page faults; at most four wholly free regions stay mapped; other sizes come from malloc; two threads
 * allocating and freeing at once never share a byte. Under AddressSanitizer every size comes from malloc
 * and only the last check runs.
 */
#include "runner.h"

#include "h5zarr/zarr.h"
#include "job.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>

#define SKIP(why)                                                                                            \
    do {                                                                                                     \
        printf("  skipped: %s\n", why);                                                                      \
        return TEST_SKIP;                                                                                    \
    } while (0)

#define KIB 1024u
#define MIB (1024u * 1024u)

static long
minflt(void)
{
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) ? 0 : u.ru_minflt;
}

static bool
regions_on(void)
{
    unsigned n, f;
    void    *p = zarr__chunk_mem_alloc(64 * KIB);
    zarr__chunk_mem_stats(&n, &f);
    zarr__chunk_mem_free(p, 64 * KIB);
    return p && n > 0;
}

/* Whether [a, a+an) and [b, b+bn) overlap. */
static bool
overlap(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    return a < b + bn && b < a + an;
}

/* 64 entries of W3's chunk size: two regions, no overlap; freed and taken again: the same memory, and
 * touching it again faults no page in. */
static int
test_slots_reused(void)
{
    enum { N = 64 };
    uint8_t *p[N], *q[N];
    unsigned n, f;
    long     f0;
    if (!regions_on())
        SKIP("regions are off in this build (AddressSanitizer)");
    for (int i = 0; i < N; i++) {
        ASSERT((p[i] = zarr__chunk_mem_alloc(64 * KIB)));
        ASSERT(((uintptr_t)p[i] & (64 * KIB - 1)) == 0); /* on a slot */
        memset(p[i], i + 1, 64 * KIB);
    }
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            ASSERT(!overlap(p[i], 64 * KIB, p[j], 64 * KIB));
    for (int i = 0; i < N; i++)
        ASSERT(p[i][0] == (uint8_t)(i + 1) && p[i][64 * KIB - 1] == (uint8_t)(i + 1));
    zarr__chunk_mem_stats(&n, &f);
    ASSERT(n >= 2);
    for (int i = 0; i < N; i++)
        zarr__chunk_mem_free(p[i], 64 * KIB);
    zarr__chunk_mem_stats(&n, &f);
    ASSERT(f >= 2 && f <= 4 && f == n); /* the two kept for reuse */
    f0 = minflt();
    for (int i = 0; i < N; i++) {
        ASSERT((q[i] = zarr__chunk_mem_alloc(64 * KIB)));
        memset(q[i], 0x5a, 64 * KIB);
    }
    if (minflt() - f0 > 16)
        FAILF("%ld page faults touching reused entries (want none: the memory was touched before)",
              minflt() - f0);
    for (int i = 0; i < N; i++) {
        bool seen = false;
        for (int j = 0; j < N && !seen; j++)
            seen = q[i] == p[j];
        if (!seen)
            FAILF("entry %d at %p is not memory given back before", i, (void *)q[i]);
    }
    for (int i = 0; i < N; i++)
        zarr__chunk_mem_free(q[i], 64 * KIB);
    return 0;
}

/* Sizes: a run of slots for 64 KiB .. 2 MiB (rounded up to whole slots), malloc below and above; at most
 * four wholly free regions stay mapped. */
static int
test_sizes_and_release(void)
{
    size_t   sz[] = {100 * KIB, 64 * KIB + 1, 1 * MIB, 2 * MIB, 130 * KIB, 64 * KIB};
    uint8_t *p[6], *big, *small;
    uint8_t *r[10];
    unsigned n, f, n0, f0;
    if (!regions_on())
        SKIP("regions are off in this build (AddressSanitizer)");
    zarr__chunk_mem_stats(&n0, &f0);
    for (int i = 0; i < 6; i++) {
        ASSERT((p[i] = zarr__chunk_mem_alloc(sz[i])));
        memset(p[i], 0xc0 + i, sz[i]);
    }
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++)
            ASSERT(!overlap(p[i], (sz[i] + 64 * KIB - 1) & ~(size_t)(64 * KIB - 1), p[j],
                            (sz[j] + 64 * KIB - 1) & ~(size_t)(64 * KIB - 1)));
    for (int i = 0; i < 6; i++)
        ASSERT(p[i][0] == 0xc0 + i && p[i][sz[i] - 1] == 0xc0 + i);
    ASSERT(((uintptr_t)p[3] & (2 * MIB - 1)) == 0); /* 2 MiB: a whole region */
    zarr__chunk_mem_stats(&n, &f);
    ASSERT_EQ_INT(f, 0u); /* every mapped region has an entry */
    ASSERT((big = zarr__chunk_mem_alloc(3 * MIB)) && (small = zarr__chunk_mem_alloc(4000)));
    memset(big, 1, 3 * MIB);
    memset(small, 2, 4000);
    zarr__chunk_mem_stats(&n0, &f0);
    ASSERT_EQ_INT(n0, n); /* malloc'd: no region for them */
    zarr__chunk_mem_free(big, 3 * MIB);
    zarr__chunk_mem_free(small, 4000);
    zarr__chunk_mem_free(NULL, 64 * KIB);
    for (int i = 0; i < 6; i++)
        zarr__chunk_mem_free(p[i], sz[i]);
    /* ten whole regions at once, then all freed: four stay */
    for (int i = 0; i < 10; i++)
        ASSERT((r[i] = zarr__chunk_mem_alloc(2 * MIB)));
    zarr__chunk_mem_stats(&n, &f);
    ASSERT(n >= 10 && f == 0);
    for (int i = 0; i < 10; i++)
        zarr__chunk_mem_free(r[i], 2 * MIB);
    zarr__chunk_mem_stats(&n, &f);
    ASSERT_EQ_INT(n, 4u);
    ASSERT_EQ_INT(f, 4u);
    return 0;
}

/* Two threads taking and giving back entries of several sizes at once: each fills its entry with its own
 * byte and finds it intact before giving it back. */
typedef struct churn {
    int      id, bad;
    uint64_t seed;
} churn;

static void *
churn_run(void *arg)
{
    churn   *c        = arg;
    uint8_t *held[8]  = {0};
    size_t   sizes[8] = {0};
    for (int it = 0; it < 4000; it++) {
        int k;
        c->seed = c->seed * 6364136223846793005ULL + 1442695040888963407ULL;
        k       = (int)((c->seed >> 33) % 8);
        if (held[k]) {
            for (size_t i = 0; i < sizes[k]; i += 4093)
                c->bad |= held[k][i] != (uint8_t)(c->id * 16 + k);
            c->bad |= held[k][sizes[k] - 1] != (uint8_t)(c->id * 16 + k);
            zarr__chunk_mem_free(held[k], sizes[k]);
            held[k] = NULL;
        }
        else {
            sizes[k] = (size_t)(c->seed >> 40) % (2 * MIB) + 1;
            if (!(held[k] = zarr__chunk_mem_alloc(sizes[k]))) {
                c->bad = 1;
                break;
            }
            memset(held[k], c->id * 16 + k, sizes[k]);
        }
    }
    for (int k = 0; k < 8; k++)
        zarr__chunk_mem_free(held[k], sizes[k]);
    return NULL;
}

static int
test_two_threads(void)
{
    pthread_t th;
    churn     a = {1, 0, 12345}, b = {2, 0, 67890};
    ASSERT(pthread_create(&th, NULL, churn_run, &a) == 0);
    churn_run(&b);
    pthread_join(th, NULL);
    ASSERT_EQ_INT(a.bad, 0);
    ASSERT_EQ_INT(b.bad, 0);
    return 0;
}

/* The chunk cache takes its entries from the regions: a read-modify-write over the corners of 4 stored
 * chunks of 128 x 128 int32 (64 KiB: W3's) holds them in regions while cached and gives them back at
 * close; a second array's read-modify-write then faults no new page in for its entries. Values checked. */
static int
rmw_once(zarr_store *s, const char *path, unsigned *held)
{
    enum { N = 256, C = 128 };
    uint64_t         shape[2] = {N, N}, chunks[2] = {C, C}, st[2] = {C - 10, C - 10}, ct[2] = {20, 20};
    zarr_array_meta *m;
    zarr_array      *a;
    zarr_region      r;
    int32_t         *all = malloc(sizeof(int32_t) * N * N), box[400];
    unsigned         f;
    ASSERT(all);
    for (int i = 0; i < N * N; i++)
        all[i] = i;
    for (int i = 0; i < 400; i++)
        box[i] = -i - 1;
    ASSERT_OK(zarr_array_meta_new(3, 2, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m));
    ASSERT_OK(zarr_array_create(s, path, m, false, &a));
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, all)); /* whole chunks: stored, not cached */
    zarr_region_box(2, st, ct, &r);
    ASSERT_OK(zarr_array_write(a, &r, box)); /* 4 chunks loaded into the cache */
    zarr__chunk_mem_stats(held, &f);
    *held -= f;
    ASSERT_OK(zarr_array_flush(a));
    zarr_array_close(a);
    ASSERT_OK(zarr_array_open(s, path, &a));
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_read(a, &r, all));
    for (int i = 0; i < N * N; i++) {
        uint64_t y = (uint64_t)i / N, x = (uint64_t)i % N;
        bool     in   = y >= st[0] && y < st[0] + 20 && x >= st[1] && x < st[1] + 20;
        int32_t  want = in ? box[(y - st[0]) * 20 + x - st[1]] : i;
        if (all[i] != want)
            FAILF("%s[%d] = %d, want %d", path, i, all[i], want);
    }
    zarr_array_close(a);
    free(all);
    return 0;
}

static int
test_cache_uses_regions(void)
{
    zarr_store *s;
    unsigned    held, n, f;
    long        f0;
    if (!regions_on())
        SKIP("regions are off in this build (AddressSanitizer)");
    ASSERT_OK(zarr_store_new_mem(&s));
    if (rmw_once(s, "a", &held))
        return 1;
    ASSERT(held >= 1); /* 4 entries of 64 KiB: in one region */
    zarr__chunk_mem_stats(&n, &f);
    ASSERT_EQ_INT(f, n); /* closed: every entry given back */
    f0 = minflt();
    {
        void *p[4];
        for (int i = 0; i < 4; i++) /* what the second array's entries will take */
            ASSERT((p[i] = zarr__chunk_mem_alloc(64 * KIB)));
        for (int i = 0; i < 4; i++) {
            memset(p[i], 7, 64 * KIB);
            zarr__chunk_mem_free(p[i], 64 * KIB);
        }
    }
    if (minflt() - f0 > 4)
        FAILF("%ld page faults for 4 entries after the first array gave its back", minflt() - f0);
    if (rmw_once(s, "b", &held))
        return 1;
    zarr_store_close(s);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(cache_uses_regions),
    TEST_ENTRY(slots_reused),
    TEST_ENTRY(sizes_and_release),
    TEST_ENTRY(two_threads),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
