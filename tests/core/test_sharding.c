/*
 * test_sharding.c: the sharded fast path (zarr/shard.c): inner-chunk writes and byte-range reads of
 * sharded arrays, checked against the whole-shard codec (zarr_chain_decode of the array's chain) and
 * by counting the store calls the engine makes through a counting wrapper: a whole-shard write is one
 * set per shard, a one-element read is one index get plus one range get, a partial shard write copies
 * the inner chunks it does not touch as bytes (a corrupted one is carried over, not decoded), fill
 * inner chunks are left out and an emptied shard deleted; and a shard whose index is truncated, out of
 * bounds, overlapping or fails its crc32c gives an error naming the shard and the inner chunk, with
 * nothing written.
 */
#include "runner.h"

#include "h5zarr/zarr.h"
#include "h5zarr/zarr_store_count.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- a counting store (zarr_store_count.h) over a memory store ---- */

static zarr_store_count *g_count; /* the current test's counting store */
static zarr_store       *g_inner; /* its memory store (a reference of the test's own) */

/* A counting store over a new memory store; `batches`: the engine batches for it. */
static zarr_store *
cstore_new_as(bool batches)
{
    if (zarr_store_new_mem(&g_inner) != ZARR_OK)
        return NULL;
    zarr_store_ref(g_inner); /* one for the counting store, one for the test */
    if (zarr_store_count_new(g_inner, batches, &g_count) != ZARR_OK)
        return NULL;
    return zarr_store_count_store(g_count);
}

static zarr_store *
cstore_new(void)
{
    return cstore_new_as(false);
}

static void
cstore_close(zarr_store *s)
{
    zarr_store_close(s);
    zarr_store_close(g_inner);
    g_inner = NULL;
    g_count = NULL;
}

static void
creset(zarr_store *s)
{
    (void)s;
    zarr_store_count_reset(g_count);
}

static zarr_store_counts
C(void)
{
    zarr_store_counts n;
    zarr_store_count_read(g_count, &n);
    return n;
}

/* ---- fixtures ---- */

/* A 2-D int32 array 20x30, shards 10x15 (2x2 shards), inner chunks 5x5 (2x3 per shard), fill -1,
 * inner codecs bytes + `inner_b2b` (e.g. ",{\"name\":\"zstd\"}" or ""), index at `loc`. */
static int
make_array(zarr_store *s, const char *loc, const char *inner_b2b, zarr_array **out)
{
    char             doc[2048];
    zarr_array_meta *m = NULL;
    snprintf(doc, sizeof doc,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[20,30],\"data_type\":\"int32\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[10,15]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":-1,"
             "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[5,5],"
             "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}%s],"
             "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
             "{\"name\":\"crc32c\"}],\"index_location\":\"%s\"}}]}",
             inner_b2b, loc);
    ASSERT_OK(zarr_array_meta_parse_v3(doc, strlen(doc), "sharded", &m));
    ASSERT_OK(zarr_array_create(s, "a", m, true, out));
    return 0;
}

static void
fill_ref(int32_t ref[20][30])
{
    for (int i = 0; i < 20; i++)
        for (int j = 0; j < 30; j++)
            ref[i][j] = i * 1000 + j * 7 + 3;
}

/* Decodes shard `key` of `a` with the array's own chain (the whole-shard codec, independent of the
 * fast path) into `out`, which holds one whole shard. */
static int
decode_shard(zarr_store *s, zarr_array *a, const char *key, void *out)
{
    const zarr_array_meta *m = zarr_array_meta_get(a);
    zarr_buf               b = ZARR_BUF_INIT;
    ASSERT_OK(zarr_store_get(s, key, &b));
    ASSERT_OK(zarr_chain_decode(m->chain, NULL, b.data, b.size, out, m->chunks));
    zarr_buf_free(&b);
    return 0;
}

/* Index entries of shard bytes `b` (6 inner chunks: 96 bytes + a crc32c). */
static void
index_of(const zarr_buf *b, bool end, uint64_t e[12])
{
    const uint8_t *ix = end ? b->data + b->size - 100 : b->data;
    for (int i = 0; i < 12; i++)
        e[i] = test_le64(ix + 8 * i);
}

/* ---- tests ---- */

/* `batches`: the store prefers batches (the wave's shards go out in one set_many), else each shard is
 * set by its own pool task. */
static int
roundtrip(const char *loc, bool batches)
{
    zarr_store *s = cstore_new_as(batches);
    zarr_array *a = NULL;
    zarr_region r;
    int32_t     ref[20][30], got[20][30], sh[10][15];

    ASSERT(s);
    ASSERT(make_array(s, loc, ",{\"name\":\"zstd\",\"configuration\":{\"level\":1}}", &a) == 0);
    fill_ref(ref);
    zarr_region_all(zarr_array_meta_get(a), &r);
    creset(s);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    /* four shards, each stored once (one set_many per wave of one shard per worker when the store wants
     * batches); nothing read */
    ASSERT_EQ_INT(C().set + C().set_many_items, 4);
    {
        int nw = zarr_pool_nthreads(zarr_pool_default()), per = nw < 1 ? 1 : nw;
        ASSERT_EQ_INT(C().set_many, batches ? (4 + per - 1) / per : 0);
    }
    ASSERT_EQ_INT(C().get + C().get_range + C().get_many, 0);
    /* the whole-shard codec reads what the fast path wrote */
    ASSERT(decode_shard(s, a, "a/c/1/1", sh) == 0);
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 15; j++)
            ASSERT_EQ_INT(sh[i][j], ref[10 + i][15 + j]);
    memset(got, 0, sizeof got);
    ASSERT_OK(zarr_array_read(a, &r, got));
    ASSERT(memcmp(got, ref, sizeof ref) == 0);
    /* a strided region across all shards */
    {
        uint64_t st[2] = {1, 2}, sd[2] = {3, 4}, ct[2] = {6, 7}, bl[2] = {2, 1};
        int32_t  box[12][7];
        memset(&r, 0, sizeof r);
        for (int d = 0; d < 2; d++) {
            r.start[d]  = st[d];
            r.stride[d] = sd[d];
            r.count[d]  = ct[d];
            r.block[d]  = bl[d];
        }
        ASSERT_OK(zarr_array_read(a, &r, box));
        for (int i = 0; i < 6; i++)
            for (int b = 0; b < 2; b++)
                for (int j = 0; j < 7; j++)
                    ASSERT_EQ_INT(box[i * 2 + b][j], ref[1 + i * 3 + b][2 + j * 4]);
        /* and written back doubled */
        for (int i = 0; i < 12; i++)
            for (int j = 0; j < 7; j++) {
                box[i][j] *= 2;
                ref[1 + (i / 2) * 3 + i % 2][2 + j * 4] *= 2;
            }
        ASSERT_OK(zarr_array_write(a, &r, box));
    }
    zarr_array_close(a);
    /* reopened (no cached index): all values */
    ASSERT_OK(zarr_array_open(s, "a", &a));
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_read(a, &r, got));
    ASSERT(memcmp(got, ref, sizeof ref) == 0);
    zarr_array_close(a);
    cstore_close(s);
    return 0;
}

static int
test_roundtrip_index_end(void)
{
    return roundtrip("end", true);
}

static int
test_roundtrip_index_start(void)
{
    return roundtrip("start", false);
}

/* One element read: one index get and one range get; the next read of the same shard only the range. */
static int
test_one_element_read_counts(void)
{
    zarr_store *s = cstore_new();
    zarr_array *a = NULL;
    zarr_region r;
    int32_t     ref[20][30], v = 0;
    uint64_t    st[2] = {12, 17}, ct[2] = {1, 1};

    ASSERT(s);
    ASSERT(make_array(s, "end", ",{\"name\":\"zstd\"}", &a) == 0);
    fill_ref(ref);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    zarr_array_close(a);
    ASSERT_OK(zarr_array_open(s, "a", &a));
    creset(s);
    zarr_region_box(2, st, ct, &r);
    ASSERT_OK(zarr_array_read(a, &r, &v));
    ASSERT_EQ_INT(v, ref[12][17]);
    /* one index get (a suffix read) and one range get, each a batch of one */
    ASSERT_EQ_INT(C().get_many, 2);
    ASSERT_EQ_INT(C().get_many_items, 2);
    ASSERT_EQ_INT(C().get_many_suffix, 1);
    ASSERT_EQ_INT(C().get + C().get_range + C().size, 0);
    creset(s);
    st[0] = 13;
    st[1] = 28;
    zarr_region_box(2, st, ct, &r);
    ASSERT_OK(zarr_array_read(a, &r, &v));
    ASSERT_EQ_INT(v, ref[13][28]);
    ASSERT_EQ_INT(C().get_many, 1); /* the index is cached: the range alone */
    ASSERT_EQ_INT(C().get_many_items, 1);
    ASSERT_EQ_INT(C().get_many_suffix + C().size + C().get, 0);
    ASSERT_EQ_INT(C().set + C().set_many + C().del, 0);
    zarr_array_close(a);
    cstore_close(s);
    return 0;
}

/* Uncompressed inner chunks that lie in their shard as they lie in the caller's buffer are read
 * straight into it, one ranged read per run (whole rows of a 2-D array too); partial and scattered
 * ones decode from fetched ranges as before; values are right either way, and a shard that ends
 * before its index says is an error, never a silent fill. */
static int
test_uncompressed_read_lands(void)
{
    static const char *const shapes[][3] = {
        /* shape, shard, inner */
        {"[1000]", "[250]", "[25]"},
        {"[20,30]", "[10,30]", "[5,30]"},
    };
    for (int c = 0; c < 2; c++) {
        zarr_store      *s = cstore_new();
        zarr_array      *a = NULL;
        zarr_array_meta *m = NULL;
        zarr_region      r;
        char             doc[1024];
        static int32_t   ref[1000], got[1000];
        uint64_t         idx;

        ASSERT(s);
        snprintf(doc, sizeof doc,
                 "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":%s,\"data_type\":\"int32\","
                 "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":%s}},"
                 "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":-1,"
                 "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":%s,"
                 "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
                 "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                 "{\"name\":\"crc32c\"}],\"index_location\":\"start\"}}]}",
                 shapes[c][0], shapes[c][1], shapes[c][2]);
        ASSERT_OK(zarr_array_meta_parse_v3(doc, strlen(doc), "sharded", &m));
        ASSERT_OK(zarr_array_create(s, "a", m, true, &a));
        for (int i = 0; i < 600; i++)
            ref[i] = i * 13 - 7;
        for (int i = 600; i < 1000; i++)
            ref[i] = c ? 0 : i * 13 - 7;
        zarr_region_all(zarr_array_meta_get(a), &r);
        ASSERT_OK(zarr_array_write(a, &r, ref));
        zarr_array_close(a);
        /* reopened: the whole array, one index read and one data read per shard */
        ASSERT_OK(zarr_array_open(s, "a", &a));
        creset(s);
        memset(got, 0, sizeof got);
        ASSERT_OK(zarr_array_read(a, &r, got));
        ASSERT(memcmp(got, ref, (c ? 600 : 1000) * sizeof *ref) == 0);
        idx = C().get_many_items;
        ASSERT_EQ_INT(idx, c ? 2 : 4);           /* the indexes */
        ASSERT_EQ_INT(C().get_range, c ? 2 : 4); /* each shard's inner chunks: one run */
        ASSERT_EQ_INT(C().get_many_suffix + C().get, 0);
        /* a region with partial chunks at both ends: the whole ones land, the partial ones decode */
        {
            uint64_t st[2] = {c ? 3 : 30, 0}, ct[2] = {c ? 14 : 940, 30};
            int      n = c ? 14 * 30 : 940;
            zarr_region_box(c ? 2 : 1, st, ct, &r);
            memset(got, 0x55, sizeof got);
            ASSERT_OK(zarr_array_read(a, &r, got));
            ASSERT(memcmp(got, ref + (c ? 3 * 30 : 30), (size_t)n * sizeof *ref) == 0);
            ASSERT_EQ_INT(got[n], 0x55555555); /* nothing past the region */
        }
        zarr_array_close(a);
        if (c == 0) {
            /* the last shard cut short: its data read fails naming the shard, never a silent fill */
            zarr_buf b = ZARR_BUF_INIT;
            ASSERT_OK(zarr_store_get(g_inner, "a/c/3", &b));
            ASSERT_OK(zarr_store_set(g_inner, "a/c/3", b.data, b.size - 40));
            zarr_buf_free(&b);
            ASSERT_OK(zarr_array_open(s, "a", &a));
            zarr_region_all(zarr_array_meta_get(a), &r);
            ASSERT(zarr_array_read(a, &r, got) != ZARR_OK);
            ASSERT(strstr(zarr_errmsg(), "a/c/3") != NULL);
            zarr_array_close(a);
        }
        cstore_close(s);
    }
    return 0;
}

/* A partial shard write reads the shard once, writes it once, and copies untouched inner chunks as
 * bytes: a corrupted inner chunk that the write does not touch is carried over unchanged. */
static int
test_partial_write_copies_untouched(void)
{
    zarr_store *s = cstore_new();
    zarr_array *a = NULL;
    zarr_region r;
    int32_t     ref[20][30], v = 424242, got[20][30];
    uint64_t    e[12], e2[12], st[2] = {7, 12}, ct[2] = {1, 1};
    zarr_buf    b = ZARR_BUF_INIT, b2 = ZARR_BUF_INIT;

    ASSERT(s);
    ASSERT(make_array(s, "end", ",{\"name\":\"zstd\"}", &a) == 0);
    fill_ref(ref);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    /* corrupt inner chunk (0,0) of shard (0,0) (zstd bytes: its decoder would fail) */
    ASSERT_OK(zarr_store_get(s, "a/c/0/0", &b));
    index_of(&b, true, e);
    ASSERT(e[0] != UINT64_MAX && e[1] > 8);
    for (uint64_t k = e[0] + 4; k < e[0] + e[1]; k++)
        b.data[k] ^= 0x5A;
    ASSERT_OK(zarr_store_set(g_inner, "a/c/0/0", b.data, b.size));
    zarr_array_close(a);
    ASSERT_OK(zarr_array_open(s, "a", &a));
    /* write one element of inner chunk (1,2) of that shard */
    creset(s);
    zarr_region_box(2, st, ct, &r);
    ASSERT_OK(zarr_array_write(a, &r, &v));
    ASSERT_EQ_INT(C().get_many_items, 1); /* the old shard, once */
    ASSERT_EQ_INT(C().get + C().get_range, 0);
    ASSERT_EQ_INT(C().set, 1); /* the new shard, once */
    ASSERT_EQ_INT(C().set_many, 0);
    ASSERT_OK(zarr_store_get(g_inner, "a/c/0/0", &b2));
    index_of(&b2, true, e2);
    ASSERT(e2[1] == e[1] && memcmp(b2.data + e2[0], b.data + e[0], (size_t)e[1]) == 0);
    /* the corrupted chunk fails when read, naming the shard and the inner chunk; the others read */
    st[0] = 1;
    st[1] = 1;
    zarr_region_box(2, st, ct, &r);
    ASSERT_ERR(zarr_array_read(a, &r, &v), ZARR_ECODEC);
    ASSERT(strstr(zarr_errmsg(), "a/c/0/0") && strstr(zarr_errmsg(), "inner chunk 0/0"));
    ref[7][12] = 424242;
    {
        uint64_t st3[2] = {5, 0}, ct3[2] = {15, 30};
        zarr_region_box(2, st3, ct3, &r);
        ASSERT_OK(zarr_array_read(a, &r, got));
        for (int i = 0; i < 15; i++)
            for (int j = 0; j < 30; j++)
                ASSERT_EQ_INT(got[i][j], ref[5 + i][j]);
    }
    zarr_buf_free(&b);
    zarr_buf_free(&b2);
    zarr_array_close(a);
    cstore_close(s);
    return 0;
}

/* Inner chunks equal to the fill value are left out of the shard; a shard left empty is deleted. */
static int
test_fill_elision(void)
{
    zarr_store *s = cstore_new();
    zarr_array *a = NULL;
    zarr_region r;
    int32_t     ref[20][30], fills[10][15], got[20][30];
    uint64_t    e[12], st[2] = {0, 5}, ct[2] = {5, 5};
    zarr_buf    b = ZARR_BUF_INIT;

    ASSERT(s);
    ASSERT(make_array(s, "end", "", &a) == 0);
    fill_ref(ref);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 15; j++)
            fills[i][j] = -1;
    /* inner chunk (0,1) of shard (0,0) becomes fill: an empty index entry */
    zarr_region_box(2, st, ct, &r);
    ASSERT_OK(zarr_array_write(a, &r, fills));
    ASSERT_OK(zarr_store_get(s, "a/c/0/0", &b));
    index_of(&b, true, e);
    ASSERT(e[2] == UINT64_MAX && e[3] == UINT64_MAX);
    ASSERT(e[0] != UINT64_MAX && e[4] != UINT64_MAX);
    ASSERT_EQ_INT(b.size, 5 * 25 * 4 + 100); /* 5 inner chunks + the index (6 x 16 + crc32c) */
    /* the whole shard (1,0) becomes fill: deleted */
    st[0] = 10;
    st[1] = 0;
    ct[0] = 10;
    ct[1] = 15;
    zarr_region_box(2, st, ct, &r);
    ASSERT_OK(zarr_array_write(a, &r, fills));
    ASSERT_ERR(zarr_store_exists(s, "a/c/1/0"), ZARR_ENOTFOUND);
    for (int i = 0; i < 5; i++)
        for (int j = 5; j < 10; j++)
            ref[i][j] = -1;
    for (int i = 10; i < 20; i++)
        for (int j = 0; j < 15; j++)
            ref[i][j] = -1;
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_read(a, &r, got));
    ASSERT(memcmp(got, ref, sizeof ref) == 0);
    zarr_buf_free(&b);
    zarr_array_close(a);
    cstore_close(s);
    return 0;
}

/* Re-encodes index entries `e` (crc32c included) into shard bytes `b` (index at the end). */
static int
put_index(zarr_buf *b, const uint64_t e[12])
{
    zarr_chain *ix       = NULL;
    zarr_dtype *u64      = zarr_dtype_new(ZARR_UINT, 8);
    zarr_buf    enc      = ZARR_BUF_INIT;
    uint64_t    shape[3] = {2, 3, 2};
    const char *cj = "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"crc32c\"}]";
    struct json_object *j = json_tokener_parse(cj);
    ASSERT(u64 && j);
    ASSERT_OK(zarr_chain_from_v3_json(j, u64, 3, &ix));
    ASSERT_OK(zarr_chain_encode(ix, NULL, e, shape, &enc));
    ASSERT_EQ_INT(enc.size, 100);
    memcpy(b->data + b->size - 100, enc.data, 100);
    zarr_buf_free(&enc);
    zarr_chain_free(ix);
    zarr_dtype_free(u64);
    json_object_put(j);
    return 0;
}

/* Bad shards: each read fails naming the shard (and the inner chunk where one is at fault), a write
 * over a bad shard fails too, and nothing is written. */
static int
test_bad_shards(void)
{
    zarr_store *s = cstore_new();
    zarr_array *a = NULL;
    zarr_region r;
    int32_t     ref[20][30], got[20][30];
    uint64_t    e[12], bad[12], st[2] = {2, 2}, ct[2] = {1, 1};
    zarr_buf    good = ZARR_BUF_INIT, b = ZARR_BUF_INIT, after = ZARR_BUF_INIT;
    struct {
        const char *what, *expect;
    } cases[] = {
        {"crc", "crc32c"},      {"truncated", "less than its index"}, {"bounds", "inner chunk 0/1"},
        {"overlap", "overlap"}, {"half-empty", "inner chunk 1/0"},
    };

    ASSERT(s);
    ASSERT(make_array(s, "end", "", &a) == 0);
    fill_ref(ref);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    ASSERT_OK(zarr_store_get(s, "a/c/0/0", &good));
    index_of(&good, true, e);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        b.size = 0;
        ASSERT_OK(zarr_buf_append(&b, good.data, good.size));
        memcpy(bad, e, sizeof bad);
        if (!strcmp(cases[c].what, "crc"))
            b.data[b.size - 1] ^= 1;
        else if (!strcmp(cases[c].what, "truncated"))
            b.size = 50;
        else {
            if (!strcmp(cases[c].what, "bounds"))
                bad[2] = b.size; /* inner chunk (0,1) starts past the data */
            else if (!strcmp(cases[c].what, "overlap"))
                bad[4] = bad[2] + 4; /* (0,2) starts inside (0,1) */
            else
                bad[7] = UINT64_MAX; /* (1,0): offset given, size "empty" */
            ASSERT(put_index(&b, bad) == 0);
        }
        ASSERT_OK(zarr_store_set(g_inner, "a/c/0/0", b.data, b.size));
        zarr_array_discard_cache(a);
        creset(s);
        zarr_region_all(zarr_array_meta_get(a), &r);
        ASSERT_ERR(zarr_array_read(a, &r, got), ZARR_ECODEC);
        if (!strstr(zarr_errmsg(), "a/c/0/0") || !strstr(zarr_errmsg(), cases[c].expect))
            FAILF("%s: message '%s'", cases[c].what, zarr_errmsg());
        zarr_array_discard_cache(a);
        zarr_region_box(2, st, ct, &r);
        ASSERT_ERR(zarr_array_write(a, &r, got), ZARR_ECODEC);
        ASSERT(strstr(zarr_errmsg(), "a/c/0/0"));
        ASSERT_EQ_INT(C().set + C().set_many + C().del, 0);
        ASSERT_OK(zarr_store_get(g_inner, "a/c/0/0", &after));
        ASSERT(after.size == b.size && memcmp(after.data, b.data, b.size) == 0);
    }
    zarr_buf_free(&good);
    zarr_buf_free(&b);
    zarr_buf_free(&after);
    zarr_array_close(a);
    cstore_close(s);
    return 0;
}

/* The index rules are the shard format's (zarr/shard_format.c), one decoder for every path: the same
 * shard gives the same error, or the same values, read through the engine's fast path (zarr_array_read:
 * index, then byte ranges), through the codec on the whole shard (zarr_chain_decode of the array's
 * chain, the path of nested sharding, a codec before sharding, vlen and resize) and through raw chunk
 * access. Overlapping entries are refused, exact duplicates too (docs/FORMAT.md "Sharding"); so are
 * entries past the data or in the index's own bytes and half-empty ones; the empty marker reads as fill;
 * unused bytes between inner chunks are allowed; an entry of 0 bytes overlaps nothing. */
static int
test_index_rules_both_paths(void)
{
    zarr_store *s = cstore_new();
    zarr_array *a = NULL;
    zarr_region r;
    int32_t     ref[20][30], got[20][30], shard[10][15];
    uint64_t    e[12], bad[12], c00[2] = {0, 0}, c01[2] = {0, 1};
    zarr_buf    good = ZARR_BUF_INIT, b = ZARR_BUF_INIT, raw = ZARR_BUF_INIT;
    struct {
        const char *what;
        int         rc;     /* expected of every path */
        const char *expect; /* in every path's message (rc != ZARR_OK) */
    } cases[] = {
        {"overlap", ZARR_ECODEC, "inner chunks 0/1 and 0/2 overlap"},
        {"duplicate", ZARR_ECODEC, "inner chunks 0/0 and 0/1 overlap"},
        {"past-end", ZARR_ECODEC, "inner chunk 0/1 (bytes 700..+100) is outside the shard's data"},
        {"in-index", ZARR_ECODEC, "inner chunk 0/1 (bytes 600..+100) is outside the shard's data"},
        {"half-empty", ZARR_ECODEC, "inner chunk 1/0"},
        {"empty", ZARR_OK, NULL},
        {"gap", ZARR_OK, NULL},
        {"zero-length", ZARR_ECODEC, "inner chunk 0/1"},
    };

    ASSERT(s);
    ASSERT(make_array(s, "end", "", &a) == 0);
    fill_ref(ref);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    ASSERT_OK(zarr_store_get(s, "a/c/0/0", &good));
    ASSERT_EQ_INT(good.size, 700); /* 6 inner chunks of 100 bytes in order, the index (100) */
    index_of(&good, true, e);
    for (int k = 0; k < 6; k++)
        ASSERT(e[2 * k] == (uint64_t)k * 100 && e[2 * k + 1] == 100);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *w = cases[c].what;
        int         rcs[3];
        b.size = 0;
        ASSERT_OK(zarr_buf_append(&b, good.data, good.size));
        memcpy(bad, e, sizeof bad);
        if (!strcmp(w, "overlap"))
            bad[4] = bad[2] + 4; /* (0,2) starts inside (0,1) */
        else if (!strcmp(w, "duplicate"))
            bad[2] = bad[0]; /* (0,1) names (0,0)'s bytes */
        else if (!strcmp(w, "past-end"))
            bad[2] = 700;
        else if (!strcmp(w, "in-index"))
            bad[2] = 600; /* inside the shard, but its bytes are the index's */
        else if (!strcmp(w, "half-empty"))
            bad[7] = UINT64_MAX;
        else if (!strcmp(w, "empty"))
            bad[2] = bad[3] = UINT64_MAX;
        else if (!strcmp(w, "zero-length"))
            bad[2] = 50, bad[3] = 0; /* inside (0,0)'s bytes: no overlap, but no inner chunk either */
        else {                       /* gap: 64 unused bytes between the data and the index */
            uint8_t pad[64];
            memset(pad, 0xEE, sizeof pad);
            b.size = 600;
            ASSERT_OK(zarr_buf_append(&b, pad, sizeof pad));
            ASSERT_OK(zarr_buf_append(&b, good.data + 600, 100));
        }
        ASSERT(put_index(&b, bad) == 0);
        ASSERT_OK(zarr_store_set(g_inner, "a/c/0/0", b.data, b.size));
        /* the fast path */
        zarr_array_discard_cache(a);
        memset(got, 0, sizeof got);
        rcs[0] = zarr_array_read(a, &r, got);
        if (rcs[0] != cases[c].rc || (cases[c].expect && !strstr(zarr_errmsg(), cases[c].expect)))
            FAILF("%s, fast path: %d '%s'", w, rcs[0], zarr_errmsg());
        if (rcs[0] != ZARR_OK && strcmp(w, "zero-length") == 0 && strstr(zarr_errmsg(), "overlap"))
            FAILF("%s: a 0-byte entry overlaps nothing: '%s'", w, zarr_errmsg());
        /* the codec on the whole shard */
        memset(shard, 0, sizeof shard);
        rcs[1] = zarr_chain_decode(zarr_array_meta_get(a)->chain, NULL, b.data, b.size, shard,
                                   zarr_array_meta_get(a)->chunks);
        if (rcs[1] != cases[c].rc || (cases[c].expect && !strstr(zarr_errmsg(), cases[c].expect)))
            FAILF("%s, codec: %d '%s'", w, rcs[1], zarr_errmsg());
        /* raw chunk access: inner chunk (0,0) through its shard's index */
        zarr_array_discard_cache(a);
        rcs[2] = zarr_array_raw_read(a, c00, &raw);
        if (!strcmp(w, "zero-length"))
            ASSERT_OK(rcs[2]); /* its own bytes are intact: only (0,1) is no chunk */
        else if (rcs[2] != cases[c].rc || (cases[c].expect && !strstr(zarr_errmsg(), cases[c].expect)))
            FAILF("%s, raw read: %d '%s'", w, rcs[2], zarr_errmsg());
        if (cases[c].rc != ZARR_OK)
            continue;
        /* the values: the stored ones, (0,1) as fill when its entry is empty; the same on both paths */
        for (int i = 0; i < 20; i++)
            for (int j = 0; j < 30; j++) {
                bool    fill = !strcmp(w, "empty") && i < 5 && j >= 5 && j < 10;
                int32_t want = fill ? -1 : ref[i][j];
                if (got[i][j] != want || (i < 10 && j < 15 && shard[i][j] != want))
                    FAILF("%s: element (%d, %d) is %d / %d, expected %d", w, i, j, got[i][j],
                          i < 10 && j < 15 ? shard[i][j] : want, want);
            }
        ASSERT_EQ_INT(raw.size, 100);
        ASSERT(memcmp(raw.data, good.data, 100) == 0);
        ASSERT_ERR(zarr_array_raw_read(a, c01, &raw), !strcmp(w, "empty") ? ZARR_ENOTFOUND : ZARR_OK);
    }
    zarr_buf_free(&good);
    zarr_buf_free(&b);
    zarr_buf_free(&raw);
    zarr_array_close(a);
    cstore_close(s);
    return 0;
}

/* Many shards in several waves through a pool with workers, against a plain reference. */
static int
test_many_shards_pool(void)
{
    zarr_store      *s    = NULL;
    zarr_array      *a    = NULL;
    zarr_array_meta *m    = NULL;
    zarr_pool       *pool = NULL;
    zarr_engine_opts o;
    zarr_region      r;
    const char      *doc =
        "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[200,77],\"data_type\":\"uint16\","
        "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[8,12]}},"
        "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\".\"}},\"fill_"
        "value\":0,"
        "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[4,3],"
        "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},{\"name\":\"gzip\","
        "\"configuration\":{\"level\":1}}]}}]}";
    static uint16_t ref[200][77], got[200][77];

    ASSERT_OK(zarr_store_new_mem(&s));
    ASSERT_OK(zarr_pool_new(3, &pool));
    ASSERT_OK(zarr_array_meta_parse_v3(doc, strlen(doc), "many", &m));
    ASSERT_OK(zarr_array_create(s, "m", m, true, &a));
    zarr_engine_defaults(&o);
    o.pool         = pool;
    o.inline_bytes = 0;
    zarr_array_set_opts(a, &o);
    for (int i = 0; i < 200; i++)
        for (int j = 0; j < 77; j++)
            ref[i][j] = (uint16_t)((i * 31 + j * 17) % 5 == 0 ? 0 : i * 77 + j);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    ASSERT_OK(zarr_array_read(a, &r, got));
    ASSERT(memcmp(got, ref, sizeof ref) == 0);
    ASSERT_OK(zarr_store_exists(s, "m/c.24.6"));
    /* an unaligned box over many shards, rewritten and read back whole */
    {
        uint64_t        st[2] = {3, 5}, ct[2] = {190, 70};
        static uint16_t box[190][70];
        for (int i = 0; i < 190; i++)
            for (int j = 0; j < 70; j++)
                box[i][j] = ref[3 + i][5 + j] = (uint16_t)(60000 - i - j);
        zarr_region_box(2, st, ct, &r);
        ASSERT_OK(zarr_array_write(a, &r, box));
        zarr_array_close(a);
        ASSERT_OK(zarr_array_open(s, "m", &a));
        zarr_array_set_opts(a, &o);
        zarr_region_all(zarr_array_meta_get(a), &r);
        ASSERT_OK(zarr_array_read(a, &r, got));
        ASSERT(memcmp(got, ref, sizeof ref) == 0);
    }
    zarr_array_close(a);
    zarr_pool_free(pool);
    cstore_close(s);
    return 0;
}

/* An unsharded array on a store that prefers batches goes through the same batched path: values as
 * with the plain engine, partial chunks patched, fill chunks deleted, missing chunks read as fill. */
static int
test_unsharded_batched(void)
{
    zarr_store      *s = cstore_new_as(true), *ref_s = NULL;
    zarr_array      *a = NULL, *b = NULL;
    zarr_array_meta *m = NULL, *m2 = NULL;
    zarr_region      r;
    const char *doc = "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[37,41],\"data_type\":\"int32\","
                      "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[8,9]}},"
                      "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":5,"
                      "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                      "{\"name\":\"zstd\"}]}";
    static int32_t v[20][30], got[37][41], want[37][41];
    uint64_t       st[2] = {3, 4}, ct[2] = {20, 30};

    ASSERT(s && s->prefers_batches);
    ASSERT_OK(zarr_store_new_mem(&ref_s));
    ASSERT_OK(zarr_array_meta_parse_v3(doc, strlen(doc), "batched", &m));
    ASSERT_OK(zarr_array_meta_parse_v3(doc, strlen(doc), "plain", &m2));
    ASSERT_OK(zarr_array_create(s, "a", m, true, &a));
    ASSERT_OK(zarr_array_create(ref_s, "a", m2, true, &b));
    for (int i = 0; i < 20; i++)
        for (int j = 0; j < 30; j++)
            v[i][j] = (i >= 13 && i <= 19) ? 5 : i * 100 + j + 1; /* array rows 16..22: fill */
    zarr_region_box(2, st, ct, &r);
    creset(s);
    ASSERT_OK(zarr_array_write(a, &r, v));
    /* the partly written chunks fetched in one batch, the chunks stored in one */
    ASSERT_EQ_INT(C().get_many, 1);
    ASSERT_EQ_INT(C().set_many, 1);
    ASSERT_EQ_INT(C().get + C().set, 0);
    ASSERT_OK(zarr_array_write(b, &r, v));
    ASSERT_OK(zarr_array_flush(b));
    /* the chunks of rows 16..23 hold only fill: not stored */
    ASSERT_ERR(zarr_store_exists(s, "a/c/2/1"), ZARR_ENOTFOUND);
    ASSERT_OK(zarr_store_exists(s, "a/c/1/1"));
    zarr_region_all(zarr_array_meta_get(a), &r);
    creset(s);
    ASSERT_OK(zarr_array_read(a, &r, got));
    ASSERT_EQ_INT(C().get_many, 1); /* all 25 chunks in one batch */
    ASSERT_EQ_INT(C().get_many_items, 25);
    ASSERT_OK(zarr_array_read(b, &r, want));
    ASSERT(memcmp(got, want, sizeof got) == 0);
    ASSERT_EQ_INT(got[0][0], 5);
    ASSERT_EQ_INT(got[3][4], 1); /* v[0][0] lands at (3, 4) */
    zarr_array_close(a);
    zarr_array_close(b);
    cstore_close(s);
    zarr_store_close(ref_s);
    return 0;
}

/* Nested sharding (shards of 8x8 holding inner shards of 4x4 holding chunks of 2x2, as zarr-python 3
 * can write): the fast path handles the outer level, the inner chain the rest; both agree with the
 * whole-shard codec, and an index-at-start inner level reads too. */
static int
test_nested_sharding(void)
{
    zarr_store      *s = NULL;
    zarr_array      *a = NULL;
    zarr_array_meta *m = NULL;
    zarr_region      r;
    const char      *doc =
        "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[13,11],\"data_type\":\"float64\","
        "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[8,8]}},"
        "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":\"NaN\","
        "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[4,4],"
        "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[2,2],"
        "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},{\"name\":\"zstd\"}],"
        "\"index_location\":\"start\"}}]}}]}";
    double   v[13][11], got[13][11], sh[8][8];
    uint64_t st[2] = {5, 3}, ct[2] = {4, 6};
    double   box[4][6];

    ASSERT_OK(zarr_store_new_mem(&s));
    ASSERT_OK(zarr_array_meta_parse_v3(doc, strlen(doc), "nested", &m));
    ASSERT_OK(zarr_array_create(s, "n", m, true, &a));
    for (int i = 0; i < 13; i++)
        for (int j = 0; j < 11; j++)
            v[i][j] = i * 0.5 - j * 3.25;
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, v));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++)
            box[i][j] = v[5 + i][3 + j] = 1e6 + i * 10 + j;
    zarr_region_box(2, st, ct, &r);
    ASSERT_OK(zarr_array_write(a, &r, box));
    zarr_array_close(a);
    ASSERT_OK(zarr_array_open(s, "n", &a));
    ASSERT(decode_shard(s, a, "n/c/0/0", sh) == 0);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            ASSERT(sh[i][j] == v[i][j]);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_read(a, &r, got));
    ASSERT(memcmp(got, v, sizeof v) == 0);
    zarr_array_close(a);
    zarr_store_close(s);
    return 0;
}

/* A shrink then a grow after inner-chunk writes: the resize's fill writes run on whole shards, so the
 * fill chunk the inner-chunk jobs built (one inner chunk) grows to a shard while the array is open, and
 * the cut-off parts read back as fill. */
static int
test_resize_after_inner_writes(void)
{
    zarr_store *s = cstore_new();
    zarr_array *a = NULL;
    zarr_region r;
    int32_t     ref[20][30], got[20][30];
    uint64_t    small[2] = {17, 27}, full[2] = {20, 30};

    ASSERT(s);
    ASSERT(make_array(s, "end", "", &a) == 0);
    fill_ref(ref);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, ref));
    ASSERT_OK(zarr_array_read(a, &r, got));
    ASSERT(memcmp(got, ref, sizeof ref) == 0);
    ASSERT_OK(zarr_array_resize(a, small));
    ASSERT_OK(zarr_array_resize(a, full));
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_read(a, &r, got));
    for (int i = 0; i < 20; i++)
        for (int j = 0; j < 30; j++)
            ASSERT_EQ_INT(got[i][j], i < 17 && j < 27 ? ref[i][j] : -1);
    zarr_array_close(a);
    cstore_close(s);
    return 0;
}

/* A shard far larger than memory (1 TiB of uint8, 4096x4096 inner chunks, fill 7): a write of part of one
 * inner chunk and reads around it work on inner chunks alone, never on a whole shard (the fill chunk a
 * job builds is one inner chunk: a whole shard of fill could not be allocated at all). */
static int
test_huge_shard(void)
{
    zarr_store      *s = cstore_new();
    zarr_array      *a = NULL;
    zarr_array_meta *m = NULL;
    zarr_region      r;
    uint64_t         st[2] = {4196, 8192}, ct[2] = {3, 5};
    uint8_t          box[3][5], got[5][9];
    char             doc[2048];

    ASSERT(s);
    snprintf(doc, sizeof doc,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[1048576,1048576],\"data_type\":\"uint8\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[1048576,1048576]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":7,"
             "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[4096,4096],"
             "\"codecs\":[{\"name\":\"bytes\"},{\"name\":\"zstd\",\"configuration\":{\"level\":1}}],"
             "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
             "{\"name\":\"crc32c\"}],\"index_location\":\"end\"}}]}");
    ASSERT_OK(zarr_array_meta_parse_v3(doc, strlen(doc), "huge", &m));
    ASSERT_OK(zarr_array_create(s, "h", m, true, &a));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            box[i][j] = (uint8_t)(100 + i * 5 + j);
    zarr_region_box(2, st, ct, &r);
    creset(s);
    ASSERT_OK(zarr_array_write(a, &r, box));
    ASSERT_EQ_INT(C().set, 1); /* the one shard: one inner chunk and the index of 256 x 256 entries */
    {
        zarr_buf b = ZARR_BUF_INIT;
        ASSERT_OK(zarr_store_get(s, "h/c/0/0", &b));
        ASSERT(b.size > 65536 * 16 && b.size < 65536 * 16 + 65536);
        zarr_buf_free(&b);
    }
    zarr_array_close(a);
    /* reopened: a box around the written one, reaching into the empty inner chunk on its left */
    ASSERT_OK(zarr_array_open(s, "h", &a));
    st[0] = 4195;
    st[1] = 8188;
    ct[0] = 5;
    ct[1] = 9;
    zarr_region_box(2, st, ct, &r);
    ASSERT_OK(zarr_array_read(a, &r, got));
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 9; j++) {
            uint64_t y = st[0] + (uint64_t)i, x = st[1] + (uint64_t)j;
            bool     in = y >= 4196 && y < 4199 && x >= 8192 && x < 8197;
            ASSERT_EQ_INT(got[i][j], in ? 100 + (int)(y - 4196) * 5 + (int)(x - 8192) : 7);
        }
    zarr_array_close(a);
    cstore_close(s);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(nested_sharding),
    TEST_ENTRY(unsharded_batched),
    TEST_ENTRY(roundtrip_index_end),
    TEST_ENTRY(roundtrip_index_start),
    TEST_ENTRY(one_element_read_counts),
    TEST_ENTRY(uncompressed_read_lands),
    TEST_ENTRY(partial_write_copies_untouched),
    TEST_ENTRY(fill_elision),
    TEST_ENTRY(bad_shards),
    TEST_ENTRY(index_rules_both_paths),
    TEST_ENTRY(many_shards_pool),
    TEST_ENTRY(resize_after_inner_writes),
    TEST_ENTRY(huge_shard),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
