/*
 * test_shard_stream.c: streamed shard writes (zarr/shard.c, wave.stream): with inner chunks of 64 KiB
 * or more on a store that does not prefer batches, each shard is a store writer (zarr_store_writer)
 * that every inner chunk goes into as soon as it is encoded, committed when the shard is finished.
 * Counted through a counting store over a memory store (the generic, gathered writer) and over a
 * directory store (its own writer: pwrite into an unnamed file linked at the commit): a whole write
 * opens and commits one writer per shard, one piece per inner chunk plus the index, and reads
 * nothing; the shards decode with the whole-shard codec; a partial shard write copies untouched inner
 * chunks as bytes (a corrupted one is carried over); fill inner chunks are left out and an emptied
 * shard is deleted; a failing piece fails the write with the shard named, the old shards intact and
 * no temporary file left; one shard encoded by several workers at once; and reads of such arrays, each
 * inner chunk read by its own decode task (every stored byte read once).
 */
#include "runner.h"

#include "h5zarr/zarr.h"
#include "h5zarr/zarr_store_count.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Inner chunks 128 x 128 int32 (64 KiB), shards 256 x 256 (2 x 2 inner chunks). */
#define IN 128
#define SH 256
#define NR 512 /* the array: 2 x 3 shards */
#define NC 768

static zarr_store_count *g_count;

static zarr_store_counts
C(void)
{
    zarr_store_counts n;
    zarr_store_count_read(g_count, &n);
    return n;
}

/* A counting store (not preferring batches) over `inner` (taken). */
static zarr_store *
counted(zarr_store *inner)
{
    if (!inner || zarr_store_count_new(inner, false, &g_count) != ZARR_OK)
        return NULL;
    return zarr_store_count_store(g_count);
}

/* A counting store over a new directory store at `dir`; with `inner`, the directory store itself, with
 * a reference of the caller's own (closed by the caller after the counting store). */
static zarr_store *
counted_dir(const char *dir, zarr_store **inner)
{
    zarr_store *d = NULL;
    if (!dir || zarr_store_open_dir(dir, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &d) != ZARR_OK)
        return NULL;
    if (inner) {
        zarr_store_ref(d);
        *inner = d;
    }
    return counted(d);
}

static int
make_array(zarr_store *s, const char *shape, const char *loc, zarr_array **out)
{
    char             doc[2048];
    zarr_array_meta *m = NULL;
    snprintf(doc, sizeof doc,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":%s,\"data_type\":\"int32\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[%d,%d]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":-1,"
             "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[%d,%d],"
             "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
             "{\"name\":\"zstd\",\"configuration\":{\"level\":1}}],"
             "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
             "{\"name\":\"crc32c\"}],\"index_location\":\"%s\"}}]}",
             shape, SH, SH, IN, IN, loc);
    ASSERT_OK(zarr_array_meta_parse_v3(doc, strlen(doc), "stream", &m));
    ASSERT_OK(zarr_array_create(s, "a", m, true, out));
    return 0;
}

/* Values that compress to different sizes per inner chunk (so offsets differ between runs of the
 * pool), never the fill value. */
static int32_t
val(int i, int j, int gen)
{
    uint32_t x = (uint32_t)(i * 7919 + j * 104729 + gen * 15485863);
    x ^= x >> 13;
    return (int32_t)((i / IN + j / IN) % 2 ? (x & 0xffff) : (uint32_t)(i * NC + j + gen)) & 0x7fffffff;
}

static void
fill_ref(int32_t (*ref)[NC], int gen)
{
    for (int i = 0; i < NR; i++)
        for (int j = 0; j < NC; j++)
            ref[i][j] = val(i, j, gen);
}

/* The 4 index entries (offset, size) of shard bytes `b`. */
static void
index_of(const zarr_buf *b, bool end, uint64_t e[8])
{
    const uint8_t *ix = end ? b->data + b->size - 68 : b->data;
    for (int i = 0; i < 8; i++)
        e[i] = test_le64(ix + 8 * i);
}

/* Every shard of `a` decoded by the array's whole-shard codec equals `ref`. */
static int
shards_equal(zarr_store *s, zarr_array *a, int32_t (*ref)[NC])
{
    const zarr_array_meta *m = zarr_array_meta_get(a);
    static int32_t         sh[SH][SH];
    zarr_buf               b = ZARR_BUF_INIT;
    char                   key[64];
    for (int si = 0; si < NR / SH; si++)
        for (int sj = 0; sj < NC / SH; sj++) {
            snprintf(key, sizeof key, "a/c/%d/%d", si, sj);
            ASSERT_OK(zarr_store_get(s, key, &b));
            ASSERT_OK(zarr_chain_decode(m->chain, NULL, b.data, b.size, sh, m->chunks));
            for (int i = 0; i < SH; i++)
                for (int j = 0; j < SH; j++)
                    if (sh[i][j] != ref[si * SH + i][sj * SH + j])
                        FAILF("shard %s (%d,%d): %d, expected %d", key, i, j, sh[i][j],
                              ref[si * SH + i][sj * SH + j]);
        }
    zarr_buf_free(&b);
    return 0;
}

static int
read_equal(zarr_array *a, int32_t (*ref)[NC])
{
    static int32_t got[NR][NC];
    zarr_region    r;
    memset(got, 0, sizeof got);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_read(a, &r, got));
    ASSERT(memcmp(got, ref, sizeof got) == 0);
    return 0;
}

/* A whole write: one writer per shard, one piece per inner chunk and one for the index, one commit
 * (counted as a set) per shard, nothing read, no set_many. */
static int
whole_write(zarr_store *inner, const char *dir, const char *loc)
{
    static int32_t ref[NR][NC];
    zarr_store    *s = counted(inner);
    zarr_array    *a = NULL;
    zarr_region    r;

    ASSERT(s);
    ASSERT(make_array(s, "[512,768]", loc, &a) == 0);
    fill_ref(ref, 0);
    zarr_region_all(zarr_array_meta_get(a), &r);
    zarr_store_count_reset(g_count);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    ASSERT_EQ_INT(C().writer_open, 6);
    ASSERT_EQ_INT(C().writer_write, 6 * 4 + 6);
    ASSERT_EQ_INT(C().set, 6);
    ASSERT_EQ_INT(C().set_many + C().del, 0);
    ASSERT_EQ_INT(C().get + C().get_range + C().get_many + C().get_into, 0);
    ASSERT(shards_equal(s, a, ref) == 0);
    ASSERT(read_equal(a, ref) == 0);
    /* rewritten whole: the same counts, the new values */
    fill_ref(ref, 1);
    zarr_store_count_reset(g_count);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    ASSERT_EQ_INT(C().writer_open, 6);
    ASSERT_EQ_INT(C().set, 6);
    zarr_array_close(a);
    ASSERT_OK(zarr_array_open(s, "a", &a));
    ASSERT(shards_equal(s, a, ref) == 0);
    ASSERT(read_equal(a, ref) == 0);
    zarr_array_close(a);
    zarr_store_close(s);
    if (dir)
        ASSERT_EQ_INT(test_tmp_files(dir), 0);
    return 0;
}

static int
test_whole_write_mem(void)
{
    zarr_store *m = NULL;
    ASSERT_OK(zarr_store_new_mem(&m));
    return whole_write(m, NULL, "end");
}

static int
test_whole_write_dir(void)
{
    const char *dir = test_tmpdir("stream-whole");
    zarr_store *d   = NULL;
    ASSERT(dir);
    ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &d));
    return whole_write(d, dir, "end");
}

static int
test_whole_write_index_start(void)
{
    const char *dir = test_tmpdir("stream-start");
    zarr_store *d   = NULL;
    ASSERT(dir);
    ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &d));
    return whole_write(d, dir, "start");
}

/* A one-element write into a shard whose inner chunk (0,0) is corrupt: one old shard read, that
 * chunk's bytes carried over as they are (it is never decoded), one piece for the new chunk, three
 * copied, one index; the corrupt chunk still fails to read, naming the shard and the inner chunk. */
static int
test_partial_write_copies_untouched(void)
{
    static int32_t ref[NR][NC], got[SH][NC];
    const char    *dir   = test_tmpdir("stream-partial");
    zarr_store    *inner = NULL, *s;
    zarr_array    *a     = NULL;
    zarr_region    r;
    zarr_buf       b = ZARR_BUF_INIT, b2 = ZARR_BUF_INIT;
    uint64_t       e[8], e2[8], st[2] = {200, 130}, ct[2] = {1, 1};
    int32_t        v = 424242, one = 0;

    ASSERT((s = counted_dir(dir, &inner)));
    ASSERT(make_array(s, "[512,768]", "end", &a) == 0);
    fill_ref(ref, 0);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    zarr_array_close(a);
    ASSERT_OK(zarr_store_get(inner, "a/c/0/0", &b));
    index_of(&b, true, e);
    ASSERT(e[0] != UINT64_MAX && e[1] > 16);
    for (uint64_t k = e[0] + 4; k < e[0] + e[1]; k++) /* zstd would refuse it */
        b.data[k] ^= 0x5A;
    ASSERT_OK(zarr_store_set(inner, "a/c/0/0", b.data, b.size));
    ASSERT_OK(zarr_array_open(s, "a", &a));
    zarr_store_count_reset(g_count);
    zarr_region_box(2, st, ct, &r); /* inner chunk (1,1) of shard (0,0) */
    ASSERT_OK(zarr_array_write(a, &r, &v));
    ASSERT_EQ_INT(C().get_many_items + C().get, 1); /* the old shard, once */
    ASSERT_EQ_INT(C().writer_open, 1);
    ASSERT_EQ_INT(C().writer_write, 1 + 3 + 1);
    ASSERT_EQ_INT(C().set, 1);
    ASSERT_OK(zarr_store_get(inner, "a/c/0/0", &b2));
    index_of(&b2, true, e2);
    ASSERT(e2[1] == e[1] && memcmp(b2.data + e2[0], b.data + e[0], (size_t)e[1]) == 0);
    ASSERT_EQ_INT(b2.size, e2[1] + e2[3] + e2[5] + e2[7] + 68); /* nothing else in it */
    ref[200][130] = v;
    st[0] = st[1] = 3;
    zarr_region_box(2, st, ct, &r);
    ASSERT_ERR(zarr_array_read(a, &r, &one), ZARR_ECODEC);
    ASSERT(strstr(zarr_errmsg(), "a/c/0/0") && strstr(zarr_errmsg(), "inner chunk 0/0"));
    {
        uint64_t st2[2] = {SH, 0}, ct2[2] = {SH, NC}, st3[2] = {IN, 0}, ct3[2] = {IN, NC};
        zarr_region_box(2, st2, ct2, &r);
        ASSERT_OK(zarr_array_read(a, &r, got));
        ASSERT(memcmp(got, ref[SH], sizeof got) == 0);
        zarr_region_box(2, st3, ct3, &r); /* the rows of inner chunk (1,1), with the new element */
        ASSERT_OK(zarr_array_read(a, &r, got));
        ASSERT(memcmp(got, ref[IN], (size_t)IN * NC * sizeof(int32_t)) == 0);
    }
    zarr_buf_free(&b);
    zarr_buf_free(&b2);
    zarr_array_close(a);
    zarr_store_close(s);
    zarr_store_close(inner);
    ASSERT_EQ_INT(test_tmp_files(dir), 0);
    return 0;
}

/* Inner chunks equal to the fill value are left out (an empty index entry, not a piece); a shard left
 * with none is dropped (its writer never committed) and deleted. */
static int
test_fill_elision(void)
{
    static int32_t ref[NR][NC], fills[SH][SH];
    const char    *dir = test_tmpdir("stream-fill");
    zarr_store    *s;
    zarr_array    *a = NULL;
    zarr_region    r;
    zarr_buf       b = ZARR_BUF_INIT;
    uint64_t       e[8];

    ASSERT((s = counted_dir(dir, NULL)));
    ASSERT(make_array(s, "[512,768]", "end", &a) == 0);
    fill_ref(ref, 0);
    for (int i = 0; i < IN; i++) /* inner chunk (0,1) of shard (0,0) is fill */
        for (int j = IN; j < SH; j++)
            ref[i][j] = -1;
    for (int i = SH; i < NR; i++) /* and all of shard (1,2) */
        for (int j = 2 * SH; j < NC; j++)
            ref[i][j] = -1;
    zarr_region_all(zarr_array_meta_get(a), &r);
    zarr_store_count_reset(g_count);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    ASSERT_EQ_INT(C().writer_open, 6);
    ASSERT_EQ_INT(C().writer_write, 4 * 5 + 3 + 1); /* 4 full shards, one of 3 chunks, (1,2) none */
    ASSERT_EQ_INT(C().set, 5);
    ASSERT_ERR(zarr_store_exists(s, "a/c/1/2"), ZARR_ENOTFOUND);
    ASSERT_OK(zarr_store_get(s, "a/c/0/0", &b));
    index_of(&b, true, e);
    ASSERT(e[2] == UINT64_MAX && e[3] == UINT64_MAX);
    ASSERT(e[0] != UINT64_MAX && e[4] != UINT64_MAX && e[6] != UINT64_MAX);
    ASSERT_EQ_INT(b.size, e[1] + e[5] + e[7] + 68);
    ASSERT(read_equal(a, ref) == 0);
    /* shard (0,1), written before, made all fill: deleted */
    for (int i = 0; i < SH; i++)
        for (int j = 0; j < SH; j++)
            fills[i][j] = ref[i][SH + j] = -1;
    {
        uint64_t st[2] = {0, SH}, ct[2] = {SH, SH};
        zarr_region_box(2, st, ct, &r);
    }
    ASSERT_OK(zarr_array_write(a, &r, fills));
    ASSERT_ERR(zarr_store_exists(s, "a/c/0/1"), ZARR_ENOTFOUND);
    ASSERT(read_equal(a, ref) == 0);
    zarr_array_close(a);
    zarr_store_close(s);
    ASSERT_EQ_INT(test_tmp_files(dir), 0);
    zarr_buf_free(&b);
    return 0;
}

/* A store whose writer_write fails from its `after`-th piece on. */
typedef struct failing {
    zarr_store_fwd fwd;
    int            after, calls;
} failing;

static int
failing_write(zarr_store *s, void *h, uint64_t off, const void *data, size_t n)
{
    failing *f = (failing *)s;
    if (__atomic_add_fetch(&f->calls, 1, __ATOMIC_RELAXED) >= f->after)
        return zarr_error(ZARR_EIO, "injected write failure");
    return zarr_store_fwd_writer_write(s, h, off, data, n);
}

/* A piece that fails: the write fails naming the shard, every shard keeps its old value (a writer
 * that was not committed changes nothing), no temporary file is left; the next write succeeds. */
static int
test_failing_piece(void)
{
    static int32_t ref[NR][NC], ref2[NR][NC];
    const char    *dir   = test_tmpdir("stream-fail");
    zarr_store    *inner = NULL, *s;
    zarr_array    *a = NULL, *b = NULL;
    zarr_region    r;
    zarr_store_ops ops = zarr_store_fwd_ops;
    failing       *f   = calloc(1, sizeof *f);

    ASSERT(dir && f);
    ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &inner));
    zarr_store_ref(inner);
    ops.name         = "failing";
    ops.writer_write = failing_write;
    ASSERT_OK(zarr_store_fwd_init(&f->fwd, &ops, inner));
    s        = &f->fwd.base;
    f->after = 1 << 30;
    ASSERT(make_array(s, "[512,768]", "end", &a) == 0);
    fill_ref(ref, 0);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    ASSERT_EQ_INT(f->calls, 30);
    fill_ref(ref2, 1);
    for (int after = 1; after <= 30; after += 7) {
        f->calls = 0;
        f->after = after;
        ASSERT_ERR(zarr_array_write(a, &r, ref2), ZARR_EIO);
        if (!strstr(zarr_errmsg(), "injected write failure") || !strstr(zarr_errmsg(), "a/c/"))
            FAILF("after %d: message '%s'", after, zarr_errmsg());
        ASSERT_EQ_INT(test_tmp_files(dir), 0);
        /* the store as a new reader sees it: some shards may be new, none torn, the rest old */
        ASSERT_OK(zarr_array_open(inner, "a", &b));
        {
            static int32_t got[NR][NC];
            zarr_region    all;
            zarr_region_all(zarr_array_meta_get(b), &all);
            ASSERT_OK(zarr_array_read(b, &all, got));
            for (int si = 0; si < 2; si++)
                for (int sj = 0; sj < 3; sj++) {
                    bool old = true, neu = true;
                    for (int i = si * SH; i < (si + 1) * SH; i++)
                        for (int j = sj * SH; j < (sj + 1) * SH; j++) {
                            old = old && got[i][j] == ref[i][j];
                            neu = neu && got[i][j] == ref2[i][j];
                        }
                    if (!old && !neu)
                        FAILF("after %d: shard %d/%d is torn", after, si, sj);
                    if (neu) /* committed before the failure: the reference follows */
                        for (int i = si * SH; i < (si + 1) * SH; i++)
                            memcpy(&ref[i][sj * SH], &ref2[i][sj * SH], SH * sizeof(int32_t));
                }
            /* the failed writer's handle reads the same (no stale shard index kept) */
            ASSERT(read_equal(a, got) == 0);
        }
        zarr_array_close(b);
    }
    /* the failure gone: the write goes through */
    f->after = 1 << 30;
    ASSERT_OK(zarr_array_write(a, &r, ref2));
    ASSERT(read_equal(a, ref2) == 0);
    zarr_array_close(a);
    zarr_store_close(s);
    zarr_store_close(inner);
    return 0;
}

/* One shard, fewer shards than workers: its inner chunks are encoded by several workers at once, each
 * writing its piece at the offset it took; the shard decodes whole. */
static int
test_one_shard_many_workers(void)
{
    static int32_t   ref[SH][SH], got[SH][SH], sh[SH][SH];
    const char      *dir = test_tmpdir("stream-workers");
    zarr_store      *s;
    zarr_array      *a    = NULL;
    zarr_pool       *pool = NULL;
    zarr_engine_opts o;
    zarr_region      r;
    zarr_buf         b = ZARR_BUF_INIT;

    ASSERT((s = counted_dir(dir, NULL)));
    ASSERT_OK(zarr_pool_new(3, &pool));
    ASSERT(make_array(s, "[256,256]", "end", &a) == 0);
    zarr_engine_defaults(&o);
    o.pool         = pool;
    o.inline_bytes = 0;
    zarr_array_set_opts(a, &o);
    for (int rep = 0; rep < 5; rep++) {
        for (int i = 0; i < SH; i++)
            for (int j = 0; j < SH; j++)
                ref[i][j] = val(i, j, rep);
        zarr_region_all(zarr_array_meta_get(a), &r);
        zarr_store_count_reset(g_count);
        ASSERT_OK(zarr_array_write(a, &r, ref));
        ASSERT_EQ_INT(C().writer_open, 1);
        ASSERT_EQ_INT(C().writer_write, 4 + 1);
        ASSERT_EQ_INT(C().set, 1);
        ASSERT_OK(zarr_store_get(s, "a/c/0/0", &b));
        ASSERT_OK(zarr_chain_decode(zarr_array_meta_get(a)->chain, NULL, b.data, b.size, sh,
                                    zarr_array_meta_get(a)->chunks));
        ASSERT(memcmp(sh, ref, sizeof sh) == 0);
        ASSERT_OK(zarr_array_read(a, &r, got));
        ASSERT(memcmp(got, ref, sizeof got) == 0);
    }
    zarr_buf_free(&b);
    zarr_array_close(a);
    zarr_pool_free(pool);
    zarr_store_close(s);
    ASSERT_EQ_INT(test_tmp_files(dir), 0);
    return 0;
}

/* A whole read of large inner chunks on a store that does not prefer batches: each decode task reads its
 * own inner chunk (a batch of one), after one suffix read per shard for the indexes; every stored byte
 * is read once, nothing else. A shard cut short behind the cached index fails naming it. */
static int
test_whole_read_own_ranges(void)
{
    static int32_t ref[NR][NC], got[NR][NC];
    const char    *dir   = test_tmpdir("stream-read");
    zarr_store    *inner = NULL, *s;
    zarr_array    *a     = NULL;
    zarr_region    r;
    zarr_buf       b      = ZARR_BUF_INIT;
    uint64_t       stored = 0;
    char           key[64];

    ASSERT((s = counted_dir(dir, &inner)));
    ASSERT(make_array(s, "[512,768]", "end", &a) == 0);
    fill_ref(ref, 2);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    zarr_array_close(a);
    for (int si = 0; si < 2; si++)
        for (int sj = 0; sj < 3; sj++) {
            snprintf(key, sizeof key, "a/c/%d/%d", si, sj);
            ASSERT_OK(zarr_store_get(inner, key, &b));
            stored += b.size;
        }
    ASSERT_OK(zarr_array_open(s, "a", &a));
    zarr_store_count_reset(g_count);
    ASSERT_OK(zarr_array_read(a, &r, got));
    ASSERT(memcmp(got, ref, sizeof got) == 0);
    ASSERT_EQ_INT(C().get_many_suffix, 6);        /* the indexes */
    ASSERT_EQ_INT(C().get_many_items, 6 + 6 * 4); /* and one range per inner chunk */
    ASSERT_EQ_INT(C().get + C().get_range + C().get_into, 0);
    ASSERT_EQ_INT(C().bytes_read, stored); /* each stored byte once */
    /* shard (0,0) cut to half behind the cached index */
    ASSERT_OK(zarr_store_get(inner, "a/c/0/0", &b));
    ASSERT_OK(zarr_store_set(inner, "a/c/0/0", b.data, b.size / 2));
    ASSERT_ERR(zarr_array_read(a, &r, got), ZARR_ECODEC);
    if (!strstr(zarr_errmsg(), "a/c/0/0"))
        FAILF("message '%s'", zarr_errmsg());
    zarr_buf_free(&b);
    zarr_array_close(a);
    zarr_store_close(s);
    zarr_store_close(inner);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(whole_write_mem),
    TEST_ENTRY(whole_write_dir),
    TEST_ENTRY(whole_write_index_start),
    TEST_ENTRY(partial_write_copies_untouched),
    TEST_ENTRY(fill_elision),
    TEST_ENTRY(failing_piece),
    TEST_ENTRY(one_shard_many_workers),
    TEST_ENTRY(whole_read_own_ranges),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
