/*
 * test_interop.c: the codecs other implementations write that need more than a byte kernel:
 * sharding_indexed (whole shards through the chunk engine, the shard layout checked by hand against
 * the spec, corrupt shards refused) and numcodecs delta (exact encoded bytes, round trips, casts; v3
 * delta both as zarr-python 3 writes it, array->array before `bytes`, and after `bytes`).
 * The cross-implementation matrix itself runs in tests/scripts/interop_core.sh.
 */
#include "h5zarr/zarr.h"
#include "runner.h"
#include "zjson.h"

#include <math.h>
#include <stdint.h>

/* Parsed JSON, kept until J_free() (the calls below only borrow it). */
static struct json_object *J_kept[64];
static size_t              J_n;

static struct json_object *
J(const char *s)
{
    struct json_object *j = NULL;
    if (zarr__json_parse(s, strlen(s), "test", &j) != ZARR_OK)
        return NULL;
    if (J_n < 64)
        J_kept[J_n++] = j;
    return j;
}

static void
J_free(void)
{
    while (J_n)
        json_object_put(J_kept[--J_n]);
}

static uint64_t
le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* A v3 sharded int32 array of shape 10x13 (shards 4x6, inner chunks 2x3, fill -7) written by region,
 * read back whole and by region; shards are checked by hand: index at `loc`, inner chunks with the
 * plain bytes codec so their bytes are the values. */
static int
sharded_case(const char *loc, const char *aa)
{
    bool transposed = aa[0] != '\0';
    int  ci = transposed ? 3 : 2, cj = transposed ? 2 : 3; /* inner chunk in the encoded layout */
    char doc[2048];
    snprintf(doc, sizeof doc,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[10,13],\"data_type\":\"int32\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4,6]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":-7,"
             "\"codecs\":[%s{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[%d,%d],"
             "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
             "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
             "{\"name\":\"crc32c\"}],\"index_location\":\"%s\"}}]}",
             aa, ci, cj, loc);
    zarr_store      *s = NULL;
    zarr_array_meta *m = NULL;
    zarr_array      *a = NULL;
    zarr_region      r;
    int32_t          ref[10][13], got[10][13], box[3][5];
    zarr_buf         b    = ZARR_BUF_INIT;
    char            *text = NULL;

    ASSERT_OK(zarr_store_new_mem(&s));
    ASSERT_OK(zarr_array_meta_parse_v3(doc, strlen(doc), "sharded", &m));
    /* metadata round trip keeps the sharding configuration */
    ASSERT_OK(zarr_array_meta_to_v3(m, &text));
    {
        struct json_object *x = J(doc), *y = J(text);
        ASSERT(zarr__json_equal(json_object_object_get(x, "codecs"), json_object_object_get(y, "codecs")));
        free(text);
    }
    ASSERT_OK(zarr_array_create(s, "a", m, false, &a));
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 13; j++)
            ref[i][j] = -7;
    /* region rows 1..3, cols 2..6: touches shards (0,0) and (0,1), leaves other inner chunks fill */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            ref[1 + i][2 + j] = box[i][j] = 1000 * i + j - 50;
    uint64_t st[2] = {1, 2}, ct[2] = {3, 5};
    zarr_region_box(2, st, ct, &r);
    ASSERT_OK(zarr_array_write(a, &r, box));
    /* bottom-right edge shard (2,2) holds rows 8..9, cols 12: overhanging */
    ref[9][12]      = 123456;
    uint64_t st2[2] = {9, 12}, ct2[2] = {1, 1};
    zarr_region_box(2, st2, ct2, &r);
    ASSERT_OK(zarr_array_write(a, &r, &ref[9][12]));
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_read(a, &r, got));
    ASSERT(memcmp(got, ref, sizeof ref) == 0);
    ASSERT_OK(zarr_array_flush(a)); /* partial writes are in the chunk cache until flushed */
    /* untouched shards are not stored */
    ASSERT_ERR(zarr_store_exists(s, "a/c/1/0"), ZARR_ENOTFOUND);
    /* shard (0,0) by hand: 2x2 inner grid of 2x3 chunks; the index is 4 x (offset, nbytes) + crc32c */
    ASSERT_OK(zarr_store_get(s, "a/c/0/0", &b));
    {
        size_t         isz     = 4 * 16 + 4;
        const uint8_t *ix      = loc[0] == 'e' ? b.data + b.size - isz : b.data;
        int            nstored = 0;
        ASSERT(b.size >= isz);
        for (int k = 0; k < 4; k++) {
            uint64_t off = le64(ix + 16 * k), nb = le64(ix + 16 * k + 8);
            int      gi = k / 2, gj = k % 2;
            int32_t  inner[6];
            bool     all_fill = true;
            /* element (i, j) of inner chunk (gi, gj), row-major, in the encoded (maybe transposed) layout */
            for (int i = 0; i < ci; i++)
                for (int j = 0; j < cj; j++) {
                    int row = ci * gi + i, col = cj * gj + j; /* shard-local, encoded layout */
                    int v             = transposed ? ref[col][row] : ref[row][col];
                    inner[i * cj + j] = v;
                    all_fill &= v == -7;
                }
            if (all_fill) {
                if (off != UINT64_MAX || nb != UINT64_MAX)
                    FAILF("%s: inner chunk %d is fill but stored at %llu+%llu", loc, k,
                          (unsigned long long)off, (unsigned long long)nb);
                continue;
            }
            nstored++;
            ASSERT_EQ_INT(nb, sizeof inner);
            ASSERT(off + nb <= b.size);
            if (memcmp(b.data + off, inner, sizeof inner) != 0)
                FAILF("%s: inner chunk %d bytes differ", loc, k);
        }
        ASSERT(nstored >= 1);
        /* corrupt the index checksum: the read fails naming sharding, never a silent value */
        b.data[loc[0] == 'e' ? b.size - 1 : isz - 1] ^= 0xFF;
        ASSERT_OK(zarr_store_set(s, "a/c/0/0", b.data, b.size));
        zarr_array_discard_cache(a); /* the store changed behind the handle: drop its cached chunks */
        ASSERT_ERR(zarr_array_read(a, &r, got), ZARR_ECODEC);
        ASSERT(strstr(zarr_errmsg(), "sharding_indexed") && strstr(zarr_errmsg(), "crc32c"));
        /* a truncated shard */
        ASSERT_OK(zarr_store_set(s, "a/c/0/0", b.data, 10));
        ASSERT_ERR(zarr_array_read(a, &r, got), ZARR_ECODEC);
    }
    zarr_buf_free(&b);
    zarr_array_close(a);
    zarr_store_close(s);
    J_free();
    return 0;
}

static int
test_sharding_index_end(void)
{
    return sharded_case("end", "");
}

static int
test_sharding_index_start(void)
{
    return sharded_case("start", "");
}

static int
test_sharding_after_transpose(void)
{
    return sharded_case("end", "{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}},");
}

/* An index entry pointing outside the shard is refused (index built by hand, no checksum codec). */
static int
test_sharding_bad_offsets(void)
{
    zarr_dtype *t        = zarr_dtype_new(ZARR_UINT, 1);
    zarr_chain *c        = NULL;
    uint64_t    shape[1] = {4};
    uint8_t     shard[2 + 32], out[4];
    ASSERT_OK(zarr_chain_from_v3_json(
        J("[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[2],\"codecs\":[\"bytes\"],"
          "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
          "\"index_location\":\"end\"}}]"),
        t, 1, &c));
    memset(shard, 0, sizeof shard);
    shard[0] = 5, shard[1] = 6;
    /* entry 0: offset 0, nbytes 2; entry 1: offset 1, nbytes 2^63 */
    shard[2 + 8]      = 2;
    shard[2 + 16]     = 1;
    shard[2 + 24 + 7] = 0x80;
    ASSERT_ERR(zarr_chain_decode(c, NULL, shard, sizeof shard, out, shape), ZARR_ECODEC);
    ASSERT(strstr(zarr_errmsg(), "inner chunk 1"));
    /* entry 1 empty: reads as the fill value (0 here) */
    memset(shard + 2 + 16, 0xFF, 16);
    ASSERT_OK(zarr_chain_decode(c, NULL, shard, sizeof shard, out, shape));
    ASSERT(out[0] == 5 && out[1] == 6 && out[2] == 0 && out[3] == 0);
    /* shard shape not a multiple of the inner chunk */
    shape[0] = 3;
    ASSERT_ERR(zarr_chain_decode(c, NULL, shard, sizeof shard, out, shape), ZARR_EMETA);
    zarr_chain_free(c);
    zarr_dtype_free(t);
    J_free();
    return 0;
}

/* Decodes `b` with `c`, which must give back the `nbytes` of `v`, and checks the chain's v2 filters. */
static int
decodes_back_with_v2_filters(const zarr_chain *c, const zarr_buf *b, const void *v, size_t nbytes,
                             const uint64_t *shape, const char *filters)
{
    uint8_t             back[64];
    struct json_object *f = NULL, *comp = NULL;
    ASSERT(nbytes <= sizeof back);
    ASSERT_OK(zarr_chain_decode(c, NULL, b->data, b->size, back, shape));
    ASSERT(memcmp(back, v, nbytes) == 0);
    ASSERT_OK(zarr_chain_to_v2_json(c, &f, &comp));
    ASSERT_STR(json_object_to_json_string_ext(f, JSON_C_TO_STRING_PLAIN), filters);
    json_object_put(f);
    json_object_put(comp);
    return 0;
}

/* numcodecs delta: exact bytes, decode, astype narrowing, floats, big endian. */
static int
test_delta(void)
{
    zarr_dtype *i4 = zarr_dtype_new(ZARR_INT, 4), *f8 = zarr_dtype_new(ZARR_FLOAT, 8);
    zarr_chain *c        = NULL;
    zarr_buf    b        = ZARR_BUF_INIT;
    uint64_t    shape[1] = {5};
    int32_t     v[5]     = {1, 3, 6, 10, -5}, back[5];

    ASSERT_OK(zarr_chain_from_v2_json(J("[{\"id\":\"delta\",\"dtype\":\"<i4\"}]"), NULL, 'C', i4, 1, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, v, shape, &b));
    ASSERT_EQ_INT(b.size, 20);
    {
        int32_t want[5] = {1, 2, 3, 4, -15}, gotv[5];
        memcpy(gotv, b.data, 20); /* little-endian host */
        ASSERT(memcmp(gotv, want, 20) == 0);
    }
    ASSERT(decodes_back_with_v2_filters(c, &b, v, sizeof v, shape,
                                        "[{\"id\":\"delta\",\"dtype\":\"<i4\"}]") == 0);
    zarr_chain_free(c);

    /* astype <i2 with a compressor after it; big-endian dtype string */
    ASSERT_OK(zarr_chain_from_v2_json(J("[{\"id\":\"delta\",\"dtype\":\"<i4\",\"astype\":\">i2\"}]"),
                                      J("{\"id\":\"zlib\",\"level\":1}"), 'C', i4, 1, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, v, shape, &b));
    ASSERT_OK(zarr_chain_decode(c, NULL, b.data, b.size, back, shape));
    ASSERT(memcmp(back, v, sizeof v) == 0);
    zarr_chain_free(c);
    ASSERT_OK(zarr_chain_from_v2_json(J("[{\"id\":\"delta\",\"dtype\":\"<i4\",\"astype\":\">i2\"}]"), NULL,
                                      'C', i4, 1, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, v, shape, &b));
    ASSERT_EQ_INT(b.size, 10);
    ASSERT(b.data[0] == 0 && b.data[1] == 1 && b.data[8] == 0xFF && b.data[9] == 0xF1); /* -15 BE */
    /* wrong encoded size */
    ASSERT_ERR(zarr_chain_decode(c, NULL, b.data, 9, back, shape), ZARR_ECODEC);
    zarr_chain_free(c);

    /* floats */
    {
        double x[5] = {0.5, 1.5, -2.25, NAN, 1e300}, y[5];
        ASSERT_OK(zarr_chain_from_v2_json(J("[{\"id\":\"delta\",\"dtype\":\"<f8\"}]"), NULL, 'C', f8, 1, &c));
        ASSERT_OK(zarr_chain_encode(c, NULL, x, shape, &b));
        double d1;
        memcpy(&d1, b.data + 8, 8);
        ASSERT(d1 == 1.0);
        ASSERT_OK(zarr_chain_decode(c, NULL, b.data, b.size, y, shape));
        ASSERT(y[0] == 0.5 && y[1] == 1.5 && y[2] == -2.25 && isnan(y[3]));
        zarr_chain_free(c);
    }
    /* refused configurations */
    ASSERT_ERR(zarr_chain_from_v2_json(J("[{\"id\":\"delta\"}]"), NULL, 'C', i4, 1, &c), ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v2_json(J("[{\"id\":\"delta\",\"dtype\":\"<U4\"}]"), NULL, 'C', i4, 1, &c),
               ZARR_EUNSUPPORTED);
    ASSERT_ERR(zarr_chain_from_v2_json(J("[{\"id\":\"delta\",\"dtype\":\"<f8\",\"astype\":\"<i4\"}]"), NULL,
                                       'C', i4, 1, &c),
               ZARR_EUNSUPPORTED);
    zarr_buf_free(&b);
    zarr_dtype_free(i4);
    zarr_dtype_free(f8);
    J_free();
    return 0;
}

/* v3 numcodecs.delta before `bytes` (zarr-python 3 / numcodecs.zarr3: an array->array codec over the
 * elements in memory; `bytes` then stores the differences in its byte order). Expected bytes by hand. */
static int
test_delta_v3_array_to_array(void)
{
    zarr_dtype         *i4 = zarr_dtype_new(ZARR_INT, 4), *u2 = zarr_dtype_new(ZARR_UINT, 2);
    zarr_chain         *c        = NULL;
    zarr_buf            b        = ZARR_BUF_INIT;
    uint64_t            shape[2] = {2, 3};
    int32_t             v[6]     = {1, 3, 6, 10, -5, 7}, back[6];
    struct json_object *j        = NULL;
    static const char  *le_doc   = "[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i4\"}},"
                                   "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]";

    /* little endian: the chunk is flattened in C order, differences stored as <i4 */
    ASSERT_OK(zarr_chain_from_v3_json(J(le_doc), i4, 2, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, v, shape, &b));
    {
        static const uint8_t want[24] = {1, 0, 0, 0, 2,    0,    0,    0,    3,  0, 0, 0,
                                         4, 0, 0, 0, 0xF1, 0xFF, 0xFF, 0xFF, 12, 0, 0, 0};
        ASSERT_EQ_INT(b.size, 24);
        ASSERT(memcmp(b.data, want, 24) == 0);
    }
    ASSERT_OK(zarr_chain_decode(c, NULL, b.data, b.size, back, shape));
    ASSERT(memcmp(back, v, sizeof v) == 0);
    /* written back as configured: delta first, then bytes; codec by codec in the same order */
    ASSERT_OK(zarr_chain_to_v3_json(c, &j));
    ASSERT_STR(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN), le_doc);
    json_object_put(j);
    ASSERT_EQ_INT(zarr_chain_count(c), 2);
    ASSERT_OK(zarr_chain_codec_json(c, 0, &j));
    ASSERT(strstr(json_object_to_json_string(j), "numcodecs.delta"));
    json_object_put(j);
    ASSERT_OK(zarr_chain_codec_json(c, 1, &j));
    ASSERT(strstr(json_object_to_json_string(j), "\"bytes\""));
    json_object_put(j);
    zarr_chain_free(c);

    /* big endian `bytes`, numpy name for the dtype (what Delta(dtype="int32") records), a compressor */
    ASSERT_OK(
        zarr_chain_from_v3_json(J("[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"int32\"}},"
                                  "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}]"),
                                i4, 2, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, v, shape, &b));
    ASSERT_EQ_INT(b.size, 24);
    ASSERT(b.data[3] == 1 && b.data[7] == 2 && b.data[16] == 0xFF && b.data[19] == 0xF1 && b.data[23] == 12);
    /* as v2 filters the delta reads the big-endian bytes the v2 dtype (">i4") says */
    ASSERT(decodes_back_with_v2_filters(c, &b, v, sizeof v, shape,
                                        "[{\"id\":\"delta\",\"dtype\":\">i4\"}]") == 0);
    zarr_chain_free(c);

    /* same-size astype (unsigned differences of signed data), with zstd after bytes */
    ASSERT_OK(zarr_chain_from_v3_json(
        J("[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i4\",\"astype\":\"<u4\"}},"
          "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
          "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}]"),
        i4, 2, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, v, shape, &b));
    ASSERT_OK(zarr_chain_decode(c, NULL, b.data, b.size, back, shape));
    ASSERT(memcmp(back, v, sizeof v) == 0);
    zarr_chain_free(c);

    /* refused, each with a message: another size, not the array's type, after a transpose, before
     * sharding, no bytes codec, another astype size (zarr-python 3 can't read that either) */
    ASSERT_ERR(
        zarr_chain_from_v3_json(J("[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i2\"}},"
                                  "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]"),
                                i4, 2, &c),
        ZARR_EUNSUPPORTED);
    ASSERT(strstr(zarr_errmsg(), "not the array's data type"));
    ASSERT_ERR(
        zarr_chain_from_v3_json(J("[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<f4\"}},"
                                  "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]"),
                                i4, 2, &c),
        ZARR_EUNSUPPORTED);
    ASSERT_ERR(
        zarr_chain_from_v3_json(J("[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\">i4\"}},"
                                  "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]"),
                                i4, 2, &c),
        ZARR_EUNSUPPORTED);
    ASSERT(strstr(zarr_errmsg(), "byte order"));
    ASSERT_ERR(
        zarr_chain_from_v3_json(J("[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i4\"}},"
                                  "{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}},"
                                  "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]"),
                                i4, 2, &c),
        ZARR_EUNSUPPORTED);
    ASSERT(strstr(zarr_errmsg(), "transpose"));
    ASSERT_ERR(zarr_chain_from_v3_json(
                   J("[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i4\"}}]"), i4, 2, &c),
               ZARR_EMETA);
    ASSERT_ERR(
        zarr_chain_from_v3_json(J("[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<u2\","
                                  "\"astype\":\"<u1\"}},"
                                  "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]"),
                                u2, 2, &c),
        ZARR_EUNSUPPORTED);
    ASSERT(strstr(zarr_errmsg(), "astype"));
    ASSERT(c == NULL);

    /* the old placement after bytes still reads and writes back where it was */
    {
        static const char *b2b = "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                                 "{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i4\"}}]";
        ASSERT_OK(zarr_chain_from_v3_json(J(b2b), i4, 2, &c));
        ASSERT_OK(zarr_chain_encode(c, NULL, v, shape, &b));
        ASSERT(b.data[4] == 2 && b.data[16] == 0xF1);
        ASSERT_OK(zarr_chain_to_v3_json(c, &j));
        ASSERT_STR(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN), b2b);
        json_object_put(j);
        zarr_chain_free(c);
    }
    zarr_buf_free(&b);
    zarr_dtype_free(i4);
    zarr_dtype_free(u2);
    J_free();
    return 0;
}

/* NCZarr (netCDF-C 4.9.3) spells codec parameters as strings ({"id": "zlib", "level": "2"}) and
 * writes a shuffle it made before knowing the type size as {"elementsize": "0"}, which it reads with
 * the variable's type size: both are read so, and written back as numbers. numcodecs' own number 0
 * stays a shuffle of element size 0, which is no shuffle (the numcodecs golden vectors have one). */
static int
test_nczarr_codec_spellings(void)
{
    zarr_dtype         *i4       = zarr_dtype_new(ZARR_INT, 4);
    zarr_chain         *c        = NULL;
    zarr_buf            b        = ZARR_BUF_INIT;
    uint64_t            shape[1] = {6};
    int32_t             v[6]     = {1, -2, 300, 70000, -5, 6}, back[6];
    struct json_object *f = NULL, *comp = NULL;

    ASSERT_OK(zarr_chain_from_v2_json(J("[{\"id\": \"shuffle\", \"elementsize\": \"0\"}]"),
                                      J("{\"id\": \"zlib\", \"level\": \"2\"}"), 'C', i4, 1, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, v, shape, &b));
    ASSERT_OK(zarr_chain_decode(c, NULL, b.data, b.size, back, shape));
    ASSERT(memcmp(back, v, sizeof v) == 0);
    ASSERT_OK(zarr_chain_to_v2_json(c, &f, &comp));
    ASSERT_STR(json_object_to_json_string_ext(f, JSON_C_TO_STRING_PLAIN),
               "[{\"id\":\"shuffle\",\"elementsize\":4}]");
    ASSERT_STR(json_object_to_json_string_ext(comp, JSON_C_TO_STRING_PLAIN), "{\"id\":\"zlib\",\"level\":2}");
    json_object_put(f);
    json_object_put(comp);
    zarr_chain_free(c);
    /* a shuffle with elementsize 0 is the type's byte shuffle: the same bytes as elementsize 4 */
    {
        zarr_buf b4 = ZARR_BUF_INIT;
        ASSERT_OK(
            zarr_chain_from_v2_json(J("[{\"id\": \"shuffle\", \"elementsize\": 4}]"), NULL, 'C', i4, 1, &c));
        ASSERT_OK(zarr_chain_encode(c, NULL, v, shape, &b4));
        zarr_chain_free(c);
        ASSERT_OK(zarr_chain_from_v2_json(J("[{\"id\": \"shuffle\", \"elementsize\": \"0\"}]"), NULL, 'C', i4,
                                          1, &c));
        ASSERT_OK(zarr_chain_encode(c, NULL, v, shape, &b));
        ASSERT(b.size == b4.size && memcmp(b.data, b4.data, b.size) == 0 && b.data[0] == 1 &&
               b.data[1] == 0xFE);
        zarr_chain_free(c);
        zarr_buf_free(&b4);
    }
    /* numcodecs' number 0: a copy */
    ASSERT_OK(
        zarr_chain_from_v2_json(J("[{\"id\": \"shuffle\", \"elementsize\": 0}]"), NULL, 'C', i4, 1, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, v, shape, &b));
    ASSERT(b.size == sizeof v && memcmp(b.data, v, sizeof v) == 0);
    zarr_chain_free(c);
    /* strings that are not integers are still refused, with the key named */
    ASSERT_ERR(zarr_chain_from_v2_json(NULL, J("{\"id\": \"zlib\", \"level\": \"fast\"}"), 'C', i4, 1, &c),
               ZARR_EMETA);
    ASSERT(strstr(zarr_errmsg(), "'level'"));
    zarr_buf_free(&b);
    zarr_dtype_free(i4);
    J_free();
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(sharding_index_end),
    TEST_ENTRY(sharding_index_start),
    TEST_ENTRY(sharding_after_transpose),
    TEST_ENTRY(sharding_bad_offsets),
    TEST_ENTRY(delta),
    TEST_ENTRY(delta_v3_array_to_array),
    TEST_ENTRY(nczarr_codec_spellings),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
