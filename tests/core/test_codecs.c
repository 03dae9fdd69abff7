/*
 * test_codecs.c: the codec layer (zarr/kernels.c, zarr/codec.c). Decodes every numcodecs golden vector
 * in $H5ZARR_SHARED/testdata/numcodecs and round-trips it; checks byte order, transposes, JSON in both
 * zarr versions, the checksums against independently known values, and that corrupt, truncated or
 * wrongly sized input is refused with ZARR_ECODEC (never a crash, never a silently wrong value).
 * hdf5_lz4 (HDF5's lz4 filter framing) is checked against frames built here with liblz4.
 */
#include "h5zarr/zarr.h"
#include "kernels.h"
#include "runner.h"

#include <blosc.h>
#include <json-c/json.h>
#include <lz4.h>
#include <zstd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------------ */
/* A .npy v1.0 file: header fields and the raw data section. */
typedef struct npy {
    uint8_t       *file;
    char           descr[32];
    bool           fortran;
    int            ndim;
    uint64_t       shape[8];
    const uint8_t *data;
    size_t         nbytes;
} npy;

static int
npy_read(const char *path, npy *a)
{
    size_t      n = 0, hlen;
    const char *h, *p, *q;
    char        hdr[1024];

    memset(a, 0, sizeof *a);
    if (!(a->file = test_slurp(path, &n)) || n < 10 || memcmp(a->file, "\x93NUMPY", 6) != 0 ||
        a->file[6] != 1 || a->file[7] != 0)
        return -1;
    hlen = (size_t)a->file[8] | (size_t)a->file[9] << 8;
    if (10 + hlen > n || hlen >= sizeof hdr)
        return -1;
    memcpy(hdr, a->file + 10, hlen);
    hdr[hlen] = '\0';
    h         = hdr;
    if (!(p = strstr(h, "'descr':")) || !(p = strchr(p + 8, '\'')) || !(q = strchr(p + 1, '\'')) ||
        (size_t)(q - p - 1) >= sizeof a->descr)
        return -1;
    memcpy(a->descr, p + 1, (size_t)(q - p - 1));
    if (!(p = strstr(h, "'fortran_order':")))
        return -1;
    a->fortran = strncmp(p + 16 + strspn(p + 16, " "), "True", 4) == 0;
    if (!(p = strstr(h, "'shape':")) || !(p = strchr(p, '(')))
        return -1;
    for (p++; *p && *p != ')';) {
        char *end;
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            break;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || a->ndim >= 8)
            return -1;
        a->shape[a->ndim++] = v;
        p                   = end;
    }
    a->data   = a->file + 10 + hlen;
    a->nbytes = n - 10 - hlen;
    return 0;
}

/* A numpy descr ("<i4", "|b1", "|S3", "<M8[ns]") as a dtype (no fields). */
static int
dtype_from_descr(const char *d, zarr_dtype *t)
{
    memset(t, 0, sizeof *t);
    t->endian = d[0];
    t->size   = (size_t)atoi(d + 2);
    switch (d[1]) {
        case 'b':
            t->kind = ZARR_BOOL;
            break;
        case 'i':
            t->kind = ZARR_INT;
            break;
        case 'u':
            t->kind = ZARR_UINT;
            break;
        case 'f':
            t->kind = ZARR_FLOAT;
            break;
        case 'c':
            t->kind = ZARR_COMPLEX;
            break;
        case 'S':
            t->kind   = ZARR_FIXED_BYTES;
            t->nchars = t->size;
            break;
        case 'M':
            t->kind = ZARR_DATETIME;
            break;
        case 'm':
            t->kind = ZARR_TIMEDELTA;
            break;
        default:
            return -1;
    }
    return t->size ? 0 : -1;
}

static zarr_dtype
simple_dtype(zarr_kind kind, size_t size, char endian)
{
    zarr_dtype t;
    memset(&t, 0, sizeof t);
    t.kind   = kind;
    t.size   = size;
    t.endian = endian;
    if (kind == ZARR_FIXED_UTF32)
        t.nchars = size / 4;
    if (kind == ZARR_FIXED_BYTES || kind == ZARR_RAW)
        t.nchars = size;
    return t;
}

/* Parsed JSON for a call that borrows it; freed at exit. */
static struct json_object *jpool[512];
static size_t              njpool;

static struct json_object *
J(const char *text)
{
    struct json_object *j = json_tokener_parse(text);
    if (!j || njpool == sizeof jpool / sizeof jpool[0]) {
        fprintf(stderr, "bad JSON in test (or pool full): %s\n", text);
        abort();
    }
    return jpool[njpool++] = j;
}

static const char *
jstr(struct json_object *j)
{
    return json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
}

static int
hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c - 'A' + 10;
}

/* ------------------------------------------------------------------------------------------------
 * numcodecs golden vectors
 * ------------------------------------------------------------------------------------------------ */
typedef struct fixture_stats {
    int ok, skipped;
} fixture_stats;

/* Fixed-size fixtures: config.json is the v2 compressor; the decoded bytes are the .npy data section. */
static int
run_fixed_fixture(const char *codec, fixture_stats *st)
{
    char            path[8192];
    zarr_codec_ctx *ctx = zarr_codec_ctx_new();
    ASSERT(ctx);
    for (int m = 0; m < 20; m++) {
        snprintf(path, sizeof path, "%s/numcodecs/%s/codec.%02d/config.json", test_shared_dir(), codec, m);
        struct json_object *cfg = json_object_from_file(path);
        if (!cfg)
            continue;
        const char         *cname = NULL;
        struct json_object *cn;
        if (json_object_object_get_ex(cfg, "cname", &cn))
            cname = json_object_get_string(cn);
        for (int a = 0; a < 20; a++) {
            npy                 arr;
            size_t              encn = 0;
            uint8_t            *enc;
            zarr_dtype          t;
            zarr_chain         *c = NULL, *c3 = NULL;
            zarr_buf            out = ZARR_BUF_INIT;
            struct json_object *v3  = NULL;

            snprintf(path, sizeof path, "%s/numcodecs/%s/codec.%02d/encoded.%02d.dat", test_shared_dir(),
                     codec, m, a);
            if (!(enc = test_slurp(path, &encn)))
                continue;
            if (cname && !zarr__blosc_has_compressor(cname)) {
                printf("  skip %s codec.%02d encoded.%02d: c-blosc here lacks '%s' (has %s)\n", codec, m, a,
                       cname, blosc_list_compressors());
                st->skipped++;
                free(enc);
                continue;
            }
            snprintf(path, sizeof path, "%s/numcodecs/%s/array.%02d.npy", test_shared_dir(), codec, a);
            if (npy_read(path, &arr) != 0)
                FAILF("can't read %s", path);
            if (dtype_from_descr(arr.descr, &t) != 0)
                FAILF("%s: unexpected descr %s", path, arr.descr);
            uint64_t nelem = 1;
            for (int d = 0; d < arr.ndim; d++)
                nelem *= arr.shape[d];
            ASSERT_EQ_INT(nelem * t.size, arr.nbytes);
            uint8_t *mem = malloc(arr.nbytes + 1);
            ASSERT(mem);
            ASSERT_OK(zarr_chain_from_v2_json(NULL, cfg, 'C', &t, 1, &c));
            /* decode the golden vector */
            memset(mem, 0xAB, arr.nbytes);
            if (zarr_chain_decode(c, ctx, enc, encn, mem, &nelem) != ZARR_OK)
                FAILF("%s codec.%02d encoded.%02d: decode failed: %s", codec, m, a, zarr_errmsg());
            if (memcmp(mem, arr.data, arr.nbytes) != 0)
                FAILF("%s codec.%02d encoded.%02d: decoded values differ from array.%02d", codec, m, a, a);
            /* round trip */
            ASSERT_OK(zarr_chain_encode(c, ctx, arr.data, &nelem, &out));
            memset(mem, 0xCD, arr.nbytes);
            ASSERT_OK(zarr_chain_decode(c, ctx, out.data, out.size, mem, &nelem));
            if (memcmp(mem, arr.data, arr.nbytes) != 0)
                FAILF("%s codec.%02d array.%02d: round trip changed the values", codec, m, a);
            /* the same chain through v3 JSON decodes the vector too */
            ASSERT_OK(zarr_chain_to_v3_json(c, &v3));
            ASSERT_OK(zarr_chain_from_v3_json(v3, &t, 1, &c3));
            memset(mem, 0xEF, arr.nbytes);
            ASSERT_OK(zarr_chain_decode(c3, ctx, enc, encn, mem, &nelem));
            ASSERT(memcmp(mem, arr.data, arr.nbytes) == 0);
            /* and NULL ctx works */
            memset(mem, 0x12, arr.nbytes);
            ASSERT_OK(zarr_chain_decode(c3, NULL, enc, encn, mem, &nelem));
            ASSERT(memcmp(mem, arr.data, arr.nbytes) == 0);
            st->ok++;
            json_object_put(v3);
            zarr_chain_free(c);
            zarr_chain_free(c3);
            zarr_buf_free(&out);
            free(mem);
            free(enc);
            free(arr.file);
        }
        json_object_put(cfg);
    }
    zarr_codec_ctx_free(ctx);
    printf("  %s: %d cases decoded and round-tripped, %d skipped\n", codec, st->ok, st->skipped);
    return 0;
}

#define FIXED_FIXTURE_TEST(name, codec, min_cases)                                                           \
    static int test_numcodecs_##name(void)                                                                   \
    {                                                                                                        \
        fixture_stats st = {0, 0};                                                                           \
        if (run_fixed_fixture(codec, &st) != 0)                                                              \
            return 1;                                                                                        \
        ASSERT(st.ok >= (min_cases));                                                                        \
        return 0;                                                                                            \
    }

/* Case counts: configs x arrays present in the shared folder (see MANIFEST.md); blosc has 9 configs x
 * 13 arrays of which codec.09 (snappy) may be skipped. */
FIXED_FIXTURE_TEST(blosc, "blosc", 8 * 13)
FIXED_FIXTURE_TEST(zstd, "zstd", 7 * 13)
FIXED_FIXTURE_TEST(zlib, "zlib", 4 * 13)
FIXED_FIXTURE_TEST(gzip, "gzip", 4 * 13)
FIXED_FIXTURE_TEST(shuffle, "shuffle", 3 * 13)
FIXED_FIXTURE_TEST(lz4, "lz4", 5 * 13)
FIXED_FIXTURE_TEST(crc32c, "crc32c", 9)

/* vlen fixtures: values from the DERIVED array.NN.json (C order); the encoded item order is the array's
 * memory order, so fortran arrays go through the order-F transpose. Encoding is deterministic, so the
 * round trip must reproduce the golden bytes exactly. */
static int
run_vlen_fixture(const char *codec, bool utf8, int *ok)
{
    char            path[8192];
    zarr_codec_ctx *ctx = zarr_codec_ctx_new();
    ASSERT(ctx);
    snprintf(path, sizeof path, "%s/numcodecs/%s/codec.00/config.json", test_shared_dir(), codec);
    struct json_object *cfg = json_object_from_file(path);
    if (!cfg)
        FAILF("can't read %s", path);
    struct json_object *filters = json_object_new_array();
    json_object_array_add(filters, json_object_get(cfg));
    for (int a = 0; a < 10; a++) {
        size_t   encn = 0;
        uint8_t *enc;
        snprintf(path, sizeof path, "%s/numcodecs/%s/codec.00/encoded.%02d.dat", test_shared_dir(), codec, a);
        if (!(enc = test_slurp(path, &encn)))
            continue;
        snprintf(path, sizeof path, "%s/numcodecs/%s/array.%02d.json", test_shared_dir(), codec, a);
        struct json_object *doc = json_object_from_file(path), *shp, *vals, *fo;
        if (!doc)
            FAILF("can't read %s", path);
        ASSERT(json_object_object_get_ex(doc, "shape", &shp));
        ASSERT(json_object_object_get_ex(doc, "values", &vals));
        ASSERT(json_object_object_get_ex(doc, "fortran_order", &fo));
        int      ndim = (int)json_object_array_length(shp);
        uint64_t shape[8], nelem = 1;
        for (int d = 0; d < ndim; d++)
            nelem *= (shape[d] = (uint64_t)json_object_get_int64(json_object_array_get_idx(shp, (size_t)d)));
        ASSERT_EQ_INT(json_object_array_length(vals), nelem);
        zarr_dtype  t = utf8 ? simple_dtype(ZARR_VLEN_UTF8, sizeof(char *), '|')
                             : simple_dtype(ZARR_VLEN_BYTES, sizeof(zarr_vlen), '|');
        zarr_chain *c = NULL;
        ASSERT_OK(
            zarr_chain_from_v2_json(filters, NULL, json_object_get_boolean(fo) ? 'F' : 'C', &t, ndim, &c));
        /* expected values, memory form */
        void *want = calloc(nelem, t.size), *got = calloc(nelem, t.size);
        ASSERT(want && got);
        for (uint64_t i = 0; i < nelem; i++) {
            const char *s = json_object_get_string(json_object_array_get_idx(vals, i));
            if (utf8)
                ((char **)want)[i] = strdup(s);
            else {
                size_t     hl = strlen(s);
                zarr_vlen *v  = &((zarr_vlen *)want)[i];
                v->len        = hl / 2;
                v->p          = malloc(v->len + 1);
                for (size_t k = 0; k < v->len; k++)
                    ((uint8_t *)v->p)[k] = (uint8_t)(hexval(s[2 * k]) << 4 | hexval(s[2 * k + 1]));
            }
        }
        ASSERT_OK(zarr_chain_decode(c, ctx, enc, encn, got, shape));
        for (uint64_t i = 0; i < nelem; i++) {
            if (utf8) {
                if (strcmp(((char **)want)[i], ((char **)got)[i]) != 0)
                    FAILF("%s array.%02d item %llu: \"%s\" != \"%s\"", codec, a, (unsigned long long)i,
                          ((char **)got)[i], ((char **)want)[i]);
            }
            else {
                zarr_vlen *w = &((zarr_vlen *)want)[i], *g = &((zarr_vlen *)got)[i];
                if (w->len != g->len || (w->len && memcmp(w->p, g->p, w->len) != 0))
                    FAILF("%s array.%02d item %llu differs", codec, a, (unsigned long long)i);
            }
        }
        zarr_buf out = ZARR_BUF_INIT;
        ASSERT_OK(zarr_chain_encode(c, ctx, want, shape, &out));
        ASSERT_EQ_INT(out.size, encn);
        ASSERT(memcmp(out.data, enc, encn) == 0);
        for (uint64_t i = 0; i < nelem; i++) {
            free(utf8 ? (void *)((char **)want)[i] : ((zarr_vlen *)want)[i].p);
            free(utf8 ? (void *)((char **)got)[i] : ((zarr_vlen *)got)[i].p);
        }
        (*ok)++;
        free(want);
        free(got);
        zarr_buf_free(&out);
        zarr_chain_free(c);
        json_object_put(doc);
        free(enc);
    }
    json_object_put(filters);
    json_object_put(cfg);
    zarr_codec_ctx_free(ctx);
    printf("  %s: %d arrays decoded and re-encoded byte for byte\n", codec, *ok);
    return 0;
}

static int
test_numcodecs_vlen_utf8(void)
{
    int ok = 0;
    if (run_vlen_fixture("vlen-utf8", true, &ok))
        return 1;
    ASSERT_EQ_INT(ok, 3);
    return 0;
}

static int
test_numcodecs_vlen_bytes(void)
{
    int ok = 0;
    if (run_vlen_fixture("vlen-bytes", false, &ok))
        return 1;
    ASSERT_EQ_INT(ok, 3);
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * Checksums
 * ------------------------------------------------------------------------------------------------ */
static int
test_crc32c_check_value(void)
{
    /* The CRC-32C check value (RFC 3720 / reveng catalogue): "123456789" -> 0xE3069283. */
    ASSERT_EQ_INT(zarr__crc32c("123456789", 9), 0xE3069283u);
    ASSERT_EQ_INT(zarr__crc32c("", 0), 0);
    /* 32 zero bytes -> 0x8A9136AA (RFC 3720 B.4). */
    uint8_t z[32] = {0};
    ASSERT_EQ_INT(zarr__crc32c(z, 32), 0x8A9136AAu);
    /* the crc32c codec appends it little-endian */
    zarr_dtype  t = simple_dtype(ZARR_UINT, 1, '|');
    zarr_chain *c;
    zarr_buf    out = ZARR_BUF_INIT;
    uint64_t    n   = 9;
    ASSERT_OK(zarr_chain_from_v2_json(NULL, J("{\"id\":\"crc32c\"}"), 'C', &t, 1, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, "123456789", &n, &out));
    ASSERT_EQ_INT(out.size, 13);
    static const uint8_t tail[4] = {0x83, 0x92, 0x06, 0xE3};
    ASSERT(memcmp(out.data + 9, tail, 4) == 0);
    zarr_buf_free(&out);
    zarr_chain_free(c);
    return 0;
}

static int
test_fletcher32_known_values(void)
{
    /* Expected values from an independent Python implementation of the definition, run when this test
     * was written:
     *   def f32(d):
     *       if len(d) % 2: d = d + b'\0'            # odd byte = high byte of a last word
     *       s1 = s2 = 0
     *       for i in range(0, len(d), 2):
     *           w = d[i] << 8 | d[i+1]; s1 = (s1 + w) % 65535; s2 = (s2 + s1) % 65535
     *       return s2 << 16 | s1
     *   f32(b'abcde') = 0x4ff029c7, f32(b'abcdef') = 0x50562a2d,
     *   f32(bytes(i*7 % 256 for i in range(1001))) = 0x8ae494e7  (> 360 words: exercises folding) */
    uint8_t big[1001];
    for (int i = 0; i < 1001; i++)
        big[i] = (uint8_t)(i * 7 % 256);
    ASSERT_EQ_INT(zarr__fletcher32("abcde", 5), 0x4ff029c7u);
    ASSERT_EQ_INT(zarr__fletcher32("abcdef", 6), 0x50562a2du);
    ASSERT_EQ_INT(zarr__fletcher32(big, 1001), 0x8ae494e7u);
    ASSERT_EQ_INT(zarr__fletcher32_reversed(0x4ff029c7u), 0xf04fc729u);

    /* numcodecs fletcher32 codec: checksum appended little-endian; a flipped bit is detected */
    zarr_dtype  t = simple_dtype(ZARR_UINT, 1, '|');
    zarr_chain *c;
    zarr_buf    out = ZARR_BUF_INIT;
    uint64_t    n   = 5;
    uint8_t     back[5];
    ASSERT_OK(zarr_chain_from_v3_json(
        J("[\"bytes\",{\"name\":\"numcodecs.fletcher32\",\"configuration\":{}}]"), &t, 1, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, "abcde", &n, &out));
    ASSERT_EQ_INT(out.size, 9);
    static const uint8_t tail[4] = {0xc7, 0x29, 0xf0, 0x4f};
    ASSERT(memcmp(out.data + 5, tail, 4) == 0);
    ASSERT_OK(zarr_chain_decode(c, NULL, out.data, out.size, back, &n));
    ASSERT(memcmp(back, "abcde", 5) == 0);
    out.data[2] ^= 1;
    ASSERT_ERR(zarr_chain_decode(c, NULL, out.data, out.size, back, &n), ZARR_ECODEC);
    zarr_buf_free(&out);
    zarr_chain_free(c);
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * Bad input
 * ------------------------------------------------------------------------------------------------ */
static const char *const bad_input_compressors[] = {
    "{\"id\":\"zstd\",\"level\":1}",
    "{\"id\":\"zstd\",\"level\":3,\"checksum\":true}",
    "{\"id\":\"zlib\",\"level\":1}",
    "{\"id\":\"gzip\",\"level\":1}",
    "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}",
    "{\"id\":\"blosc\",\"cname\":\"zstd\",\"clevel\":3,\"shuffle\":2,\"blocksize\":0}",
    "{\"id\":\"lz4\",\"acceleration\":1}",
    "{\"id\":\"hdf5_lz4\",\"blocksize\":0}",
    "{\"id\":\"hdf5_lz4\",\"blocksize\":100}",
    "{\"id\":\"bz2\",\"level\":9}",
};

static void
fill_pattern(int32_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (int32_t)((i * i) % 1000) - 500;
}

static int
test_bad_truncated(void)
{
    int32_t         vals[1000], back[1000];
    uint64_t        n   = 1000;
    zarr_codec_ctx *ctx = zarr_codec_ctx_new();
    zarr_dtype      t   = simple_dtype(ZARR_INT, 4, '<');
    fill_pattern(vals, 1000);
    for (size_t k = 0; k < sizeof bad_input_compressors / sizeof bad_input_compressors[0]; k++) {
        zarr_chain *c;
        zarr_buf    out = ZARR_BUF_INIT;
        ASSERT_OK(zarr_chain_from_v2_json(NULL, J(bad_input_compressors[k]), 'C', &t, 1, &c));
        ASSERT_OK(zarr_chain_encode(c, ctx, vals, &n, &out));
        ASSERT(out.size > 16);
        for (size_t len = 0; len < out.size; len++) {
            /* a copy of exactly `len` bytes, so ASan sees any read past the end */
            uint8_t *cut = malloc(len ? len : 1);
            memcpy(cut, out.data, len);
            int rc = zarr_chain_decode(c, ctx, cut, len, back, &n);
            free(cut);
            if (rc != ZARR_ECODEC)
                FAILF("%s: %zu of %zu bytes: rc %d, expected ZARR_ECODEC (%s)", bad_input_compressors[k], len,
                      out.size, rc, zarr_errmsg());
        }
        ASSERT_OK(zarr_chain_decode(c, ctx, out.data, out.size, back, &n));
        ASSERT(memcmp(back, vals, sizeof vals) == 0);
        zarr_buf_free(&out);
        zarr_chain_free(c);
    }
    zarr_codec_ctx_free(ctx);
    return 0;
}

static int
test_bad_wrong_size(void)
{
    int32_t         vals[1000], back[1001];
    uint64_t        n = 1000, less = 999, more = 1001;
    zarr_codec_ctx *ctx = zarr_codec_ctx_new();
    zarr_dtype      t   = simple_dtype(ZARR_INT, 4, '<');
    fill_pattern(vals, 1000);
    for (size_t k = 0; k < sizeof bad_input_compressors / sizeof bad_input_compressors[0]; k++) {
        zarr_chain *c;
        zarr_buf    out = ZARR_BUF_INIT;
        ASSERT_OK(zarr_chain_from_v2_json(NULL, J(bad_input_compressors[k]), 'C', &t, 1, &c));
        ASSERT_OK(zarr_chain_encode(c, ctx, vals, &n, &out));
        ASSERT_ERR(zarr_chain_decode(c, ctx, out.data, out.size, back, &less), ZARR_ECODEC);
        if (!strstr(zarr_errmsg(), "3996")) /* the message names the expected size */
            FAILF("%s: message without the expected size: %s", bad_input_compressors[k], zarr_errmsg());
        ASSERT_ERR(zarr_chain_decode(c, ctx, out.data, out.size, back, &more), ZARR_ECODEC);
        zarr_buf_free(&out);
        zarr_chain_free(c);
    }
    /* plain chain: the stored size must match */
    zarr_chain *p;
    ASSERT_OK(zarr_chain_new_plain(&t, 1, '<', &p));
    ASSERT_ERR(zarr_chain_decode(p, ctx, vals, 3999, back, &n), ZARR_ECODEC);
    ASSERT_ERR(zarr_chain_decode(p, ctx, vals, 4000, back, &less), ZARR_ECODEC);
    ASSERT_OK(zarr_chain_decode(p, ctx, vals, 4000, back, &n));
    ASSERT(memcmp(back, vals, 4000) == 0);
    zarr_chain_free(p);
    zarr_codec_ctx_free(ctx);
    return 0;
}

static int
test_bad_corrupt_never_crashes(void)
{
    /* Random byte flips: the result is ZARR_ECODEC or (for formats without a checksum) some decoded
     * values, never a crash or an out-of-bounds access (run under ASan). */
    int32_t         vals[1000], back[1000];
    uint64_t        n   = 1000;
    zarr_codec_ctx *ctx = zarr_codec_ctx_new();
    zarr_dtype      t   = simple_dtype(ZARR_INT, 4, '<');
    uint32_t        rng = 12345;
    fill_pattern(vals, 1000);
    for (size_t k = 0; k < sizeof bad_input_compressors / sizeof bad_input_compressors[0]; k++) {
        zarr_chain *c;
        zarr_buf    out  = ZARR_BUF_INIT;
        int         errs = 0;
        ASSERT_OK(zarr_chain_from_v2_json(NULL, J(bad_input_compressors[k]), 'C', &t, 1, &c));
        ASSERT_OK(zarr_chain_encode(c, ctx, vals, &n, &out));
        uint8_t *copy = malloc(out.size);
        for (int trial = 0; trial < 300; trial++) {
            memcpy(copy, out.data, out.size);
            for (int f = 0; f < 1 + trial % 3; f++) {
                rng = rng * 1103515245u + 12345u;
                copy[(rng >> 8) % out.size] ^= (uint8_t)(1 + (rng >> 24) % 255);
            }
            int rc = zarr_chain_decode(c, ctx, copy, out.size, back, &n);
            ASSERT(rc == ZARR_OK || rc == ZARR_ECODEC || rc == ZARR_EUNSUPPORTED);
            errs += rc != ZARR_OK;
        }
        ASSERT(errs > 0);
        free(copy);
        zarr_buf_free(&out);
        zarr_chain_free(c);
    }
    zarr_codec_ctx_free(ctx);
    return 0;
}

static int
test_bad_crc32c(void)
{
    int32_t     vals[100], back[100];
    uint64_t    n = 100;
    zarr_dtype  t = simple_dtype(ZARR_INT, 4, '<');
    zarr_chain *c;
    zarr_buf    out = ZARR_BUF_INIT;
    fill_pattern(vals, 100);
    ASSERT_OK(
        zarr_chain_from_v3_json(J("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                                  "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}},"
                                  "\"crc32c\"]"),
                                &t, 1, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, vals, &n, &out));
    ASSERT_EQ_INT(zarr__load_le32(out.data + out.size - 4), zarr__crc32c(out.data, out.size - 4));
    for (size_t i = 0; i < out.size; i++) {
        out.data[i] ^= 0x10;
        ASSERT_ERR(zarr_chain_decode(c, NULL, out.data, out.size, back, &n), ZARR_ECODEC);
        ASSERT(i >= out.size - 4 || strstr(zarr_errmsg(), "crc32c") != NULL);
        out.data[i] ^= 0x10;
    }
    ASSERT_ERR(zarr_chain_decode(c, NULL, out.data, 3, back, &n), ZARR_ECODEC);
    ASSERT_OK(zarr_chain_decode(c, NULL, out.data, out.size, back, &n));
    ASSERT(memcmp(back, vals, sizeof vals) == 0);
    zarr_buf_free(&out);
    zarr_chain_free(c);
    return 0;
}

static int
test_bad_vlen(void)
{
    zarr_dtype  t = simple_dtype(ZARR_VLEN_UTF8, sizeof(char *), '|');
    zarr_chain *c;
    const char *vals[3] = {"ab", NULL, "xyz"};
    char       *back[4];
    uint64_t    n = 3, four = 4;
    zarr_buf    out = ZARR_BUF_INIT;
    ASSERT_OK(zarr_chain_from_v3_json(J("[{\"name\":\"vlen-utf8\",\"configuration\":{}}]"), &t, 1, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, vals, &n, &out));
    static const uint8_t want[] = {3, 0, 0, 0, 2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0, 3, 0, 0, 0, 'x', 'y', 'z'};
    ASSERT_EQ_INT(out.size, sizeof want);
    ASSERT(memcmp(out.data, want, sizeof want) == 0);
    ASSERT_OK(zarr_chain_decode(c, NULL, out.data, out.size, back, &n));
    ASSERT_STR(back[0], "ab");
    ASSERT_STR(back[1], "");
    ASSERT_STR(back[2], "xyz");
    for (int i = 0; i < 3; i++)
        free(back[i]);

    uint8_t bad[sizeof want];
    /* length of the last item past the end (items already decoded must be freed: LeakSanitizer) */
    memcpy(bad, want, sizeof want);
    bad[14] = 4;
    ASSERT_ERR(zarr_chain_decode(c, NULL, bad, sizeof bad, back, &n), ZARR_ECODEC);
    ASSERT(back[0] == NULL && back[2] == NULL);
    /* huge length */
    memcpy(bad, want, sizeof want);
    bad[7] = 0xff;
    ASSERT_ERR(zarr_chain_decode(c, NULL, bad, sizeof bad, back, &n), ZARR_ECODEC);
    /* wrong item count */
    ASSERT_ERR(zarr_chain_decode(c, NULL, want, sizeof want, back, &four), ZARR_ECODEC);
    ASSERT(strstr(zarr_errmsg(), "3 items") != NULL);
    memcpy(bad, want, sizeof want);
    bad[0] = 0xff;
    ASSERT_ERR(zarr_chain_decode(c, NULL, bad, sizeof bad, back, &n), ZARR_ECODEC);
    /* every truncation */
    for (size_t len = 0; len < sizeof want; len++) {
        uint8_t *cut = malloc(len ? len : 1);
        memcpy(cut, want, len);
        ASSERT_ERR(zarr_chain_decode(c, NULL, cut, len, back, &n), ZARR_ECODEC);
        free(cut);
    }
    zarr_buf_free(&out);
    zarr_chain_free(c);

    /* vlen-bytes with a transpose: a failure after decoding leaves nothing allocated */
    zarr_dtype  tb     = simple_dtype(ZARR_VLEN_BYTES, sizeof(zarr_vlen), '|');
    zarr_vlen   vb[4]  = {{1, "a"}, {0, NULL}, {2, "bc"}, {3, "def"}}, bb[4];
    uint64_t    shp[2] = {2, 2};
    zarr_chain *cb;
    ASSERT_OK(zarr_chain_from_v2_json(J("[{\"id\":\"vlen-bytes\"}]"), J("{\"id\":\"zlib\",\"level\":1}"), 'F',
                                      &tb, 2, &cb));
    ASSERT_OK(zarr_chain_encode(cb, NULL, vb, shp, &out));
    ASSERT_OK(zarr_chain_decode(cb, NULL, out.data, out.size, bb, shp));
    for (int i = 0; i < 4; i++) {
        ASSERT_EQ_INT(bb[i].len, vb[i].len);
        ASSERT(bb[i].len == 0 || memcmp(bb[i].p, vb[i].p, bb[i].len) == 0);
        free(bb[i].p);
    }
    out.data[out.size / 2] ^= 0x55;
    ASSERT_ERR(zarr_chain_decode(cb, NULL, out.data, out.size, bb, shp), ZARR_ECODEC);
    zarr_buf_free(&out);
    zarr_chain_free(cb);
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * Byte order and transposes
 * ------------------------------------------------------------------------------------------------ */
static int
encode_bytes(zarr_chain *c, const void *mem, uint64_t n, const uint8_t *want, size_t wn, void *back)
{
    zarr_buf out = ZARR_BUF_INIT;
    ASSERT_OK(zarr_chain_encode(c, NULL, mem, &n, &out));
    ASSERT_EQ_INT(out.size, wn);
    ASSERT(memcmp(out.data, want, wn) == 0);
    ASSERT_OK(zarr_chain_decode(c, NULL, out.data, out.size, back, &n));
    ASSERT(memcmp(back, mem, wn) == 0);
    zarr_buf_free(&out);
    return 0;
}

static int
test_byteswap(void)
{
    zarr_chain *c;
    uint8_t     back[64];

    /* >i4 (v2 dtype order) */
    zarr_dtype           ti4   = simple_dtype(ZARR_INT, 4, '>');
    int32_t              i4[3] = {1, 0x01020304, -2};
    static const uint8_t wi4[] = {0, 0, 0, 1, 1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe};
    ASSERT_OK(zarr_chain_from_v2_json(NULL, NULL, 'C', &ti4, 1, &c));
    ASSERT(!zarr_chain_is_identity(c));
    ASSERT_EQ_INT(zarr__chain_endian(c), '>');
    if (encode_bytes(c, i4, 3, wi4, sizeof wi4, back))
        return 1;
    zarr_chain_free(c);

    /* bytes codec big (v3), float64 1.5 and -2 */
    zarr_dtype           tf8   = simple_dtype(ZARR_FLOAT, 8, '<');
    double               f8[2] = {1.5, -2.0};
    static const uint8_t wf8[] = {0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0};
    ASSERT_OK(zarr_chain_from_v3_json(J("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}]"),
                                      &tf8, 1, &c));
    if (encode_bytes(c, f8, 2, wf8, sizeof wf8, back))
        return 1;
    zarr_chain_free(c);

    /* complex64 (1, -2): each half swapped, real part first */
    zarr_dtype           tc8   = simple_dtype(ZARR_COMPLEX, 8, '>');
    float                c8[2] = {1.0f, -2.0f};
    static const uint8_t wc8[] = {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0};
    ASSERT_OK(zarr_chain_from_v2_json(NULL, NULL, 'C', &tc8, 1, &c));
    if (encode_bytes(c, c8, 1, wc8, sizeof wc8, back))
        return 1;
    zarr_chain_free(c);

    /* fixed UTF-32 ">U2": 4-byte units; fixed bytes: no swap even for big endian */
    zarr_dtype           tu    = simple_dtype(ZARR_FIXED_UTF32, 8, '>');
    uint32_t             u2[2] = {'h', 0x1F600};
    static const uint8_t wu[]  = {0, 0, 0, 'h', 0, 0x01, 0xF6, 0x00};
    ASSERT_OK(zarr_chain_from_v2_json(NULL, NULL, 'C', &tu, 1, &c));
    if (encode_bytes(c, u2, 1, wu, sizeof wu, back))
        return 1;
    zarr_chain_free(c);
    zarr_dtype ts = simple_dtype(ZARR_FIXED_BYTES, 3, '|');
    ASSERT_OK(zarr_chain_from_v3_json(J("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}]"), &ts,
                                      1, &c));
    if (encode_bytes(c, "abcdef", 2, (const uint8_t *)"abcdef", 6, back))
        return 1;
    ASSERT(zarr_chain_is_identity(c));
    zarr_chain_free(c);

    /* struct {a: >i2 at 0, b: >f4 at 2, s: |S3 at 6, sub: >u2[2] at 9}, size 13; and the same with
     * little-endian fields (no swap) */
    zarr_dtype fa = simple_dtype(ZARR_INT, 2, '>'), fb = simple_dtype(ZARR_FLOAT, 4, '>'),
               fs = simple_dtype(ZARR_FIXED_BYTES, 3, '|'), fu = simple_dtype(ZARR_UINT, 2, '>');
    zarr_field fields[4] = {
        {"a", 0, &fa, 0, {0}}, {"b", 2, &fb, 0, {0}}, {"s", 6, &fs, 0, {0}}, {"sub", 9, &fu, 1, {2}}};
    zarr_dtype tst = simple_dtype(ZARR_STRUCT, 13, '|');
    tst.nfields    = 4;
    tst.fields     = fields;
    uint8_t  rec[13];
    int16_t  a      = 0x0102;
    float    b      = 1.0f;
    uint16_t sub[2] = {0x0304, 0x0506};
    memcpy(rec, &a, 2);
    memcpy(rec + 2, &b, 4);
    memcpy(rec + 6, "xyz", 3);
    memcpy(rec + 9, sub, 4);
    static const uint8_t wst[] = {1, 2, 0x3f, 0x80, 0, 0, 'x', 'y', 'z', 3, 4, 5, 6};
    ASSERT_OK(zarr_chain_from_v2_json(NULL, NULL, 'C', &tst, 1, &c));
    if (encode_bytes(c, rec, 1, wst, sizeof wst, back))
        return 1;
    zarr_chain_free(c);
    /* v3: the codec's endian applies to every field, whatever the field dtypes say */
    ASSERT_OK(zarr_chain_from_v3_json(J("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]"),
                                      &tst, 1, &c));
    ASSERT(zarr_chain_is_identity(c));
    if (encode_bytes(c, rec, 1, rec, sizeof rec, back))
        return 1;
    zarr_chain_free(c);
    ASSERT_OK(zarr_chain_from_v3_json(J("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}]"),
                                      &tst, 1, &c));
    if (encode_bytes(c, rec, 1, wst, sizeof wst, back))
        return 1;
    zarr_chain_free(c);

    /* big-endian int16 through a compressor (swap, then compress; decompress into scratch, swap) */
    zarr_dtype ti2 = simple_dtype(ZARR_INT, 2, '>');
    int16_t    i2[500], i2b[500];
    for (int i = 0; i < 500; i++)
        i2[i] = (int16_t)(i * 37 - 9000);
    zarr_buf out = ZARR_BUF_INIT;
    uint64_t n   = 500;
    ASSERT_OK(zarr_chain_from_v2_json(NULL, J("{\"id\":\"zstd\",\"level\":1}"), 'C', &ti2, 1, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, i2, &n, &out));
    uint8_t raw[1000];
    ASSERT_OK(zarr__zstd_decompress(NULL, out.data, out.size, raw, sizeof raw));
    ASSERT(raw[0] == (uint8_t)((uint16_t)i2[0] >> 8) && raw[1] == (uint8_t)i2[0]);
    ASSERT_OK(zarr_chain_decode(c, NULL, out.data, out.size, i2b, &n));
    ASSERT(memcmp(i2, i2b, sizeof i2) == 0);
    zarr_buf_free(&out);
    zarr_chain_free(c);
    return 0;
}

static int
test_transpose(void)
{
    zarr_chain *c;
    zarr_buf    out = ZARR_BUF_INIT;

    /* v2 order F: [[0,1,2],[3,4,5]] stored column-major */
    zarr_dtype t      = simple_dtype(ZARR_INT, 4, '<');
    int32_t    m[6]   = {0, 1, 2, 3, 4, 5}, back[24];
    uint64_t   s23[2] = {2, 3};
    ASSERT_OK(zarr_chain_from_v2_json(NULL, NULL, 'F', &t, 2, &c));
    ASSERT(!zarr_chain_is_identity(c));
    ASSERT_EQ_INT(zarr__chain_v2_order(c), 'F');
    ASSERT_OK(zarr_chain_encode(c, NULL, m, s23, &out));
    ASSERT_EQ_INT(out.size, 24);
    static const int32_t wf[6] = {0, 3, 1, 4, 2, 5};
    ASSERT(memcmp(out.data, wf, 24) == 0);
    ASSERT_OK(zarr_chain_decode(c, NULL, out.data, out.size, back, s23));
    ASSERT(memcmp(back, m, 24) == 0);
    zarr_chain_free(c);

    /* v3 transpose [1,2,0] on shape (2,3,4): encoded shape (3,4,2), enc[j][k][i] = mem[i][j][k] */
    int32_t  m3[24];
    uint64_t s234[3] = {2, 3, 4};
    for (int i = 0; i < 24; i++)
        m3[i] = i * 10;
    ASSERT_OK(zarr_chain_from_v3_json(J("[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,2,0]}},"
                                        "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},"
                                        "{\"name\":\"gzip\",\"configuration\":{\"level\":1}}]"),
                                      &t, 3, &c));
    ASSERT_EQ_INT(zarr__chain_v2_order(c), 'C');
    ASSERT_OK(zarr_chain_encode(c, NULL, m3, s234, &out));
    uint8_t raw[96];
    ASSERT_OK(zarr__inflate(NULL, ZARR__ZFMT_GZIP, out.data, out.size, raw, sizeof raw));
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 2; i++) {
                const uint8_t *p = raw + 4 * ((j * 4 + k) * 2 + i);
                int32_t        v =
                    (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
                ASSERT_EQ_INT(v, m3[(i * 3 + j) * 4 + k]);
            }
    ASSERT_OK(zarr_chain_decode(c, NULL, out.data, out.size, back, s234));
    ASSERT(memcmp(back, m3, 96) == 0);
    /* v2 can't say this transpose */
    struct json_object *f, *comp;
    ASSERT_ERR(zarr_chain_to_v2_json(c, &f, &comp), ZARR_EUNSUPPORTED);
    zarr_chain_free(c);

    /* two transposes compose: [2,0,1] then [2,0,1] == [1,2,0] */
    ASSERT_OK(zarr_chain_from_v3_json(J("[{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}},"
                                        "{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}},"
                                        "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]"),
                                      &t, 3, &c));
    zarr_buf out2 = ZARR_BUF_INIT;
    ASSERT_OK(zarr_chain_encode(c, NULL, m3, s234, &out2));
    ASSERT_EQ_INT(out2.size, 96);
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 2; i++)
                ASSERT_EQ_INT(((int32_t *)out2.data)[(j * 4 + k) * 2 + i], m3[(i * 3 + j) * 4 + k]);
    ASSERT_OK(zarr_chain_decode(c, NULL, out2.data, out2.size, back, s234));
    ASSERT(memcmp(back, m3, 96) == 0);
    zarr_chain_free(c);

    /* an identity transpose is free */
    ASSERT_OK(zarr_chain_from_v3_json(J("[{\"name\":\"transpose\",\"configuration\":{\"order\":[0,1,2]}},"
                                        "\"bytes\"]"),
                                      &t, 3, &c));
    ASSERT(zarr_chain_is_identity(c));
    zarr_chain_free(c);
    zarr_buf_free(&out);
    zarr_buf_free(&out2);

    /* vlen strings with order F */
    zarr_dtype  tv    = simple_dtype(ZARR_VLEN_UTF8, sizeof(char *), '|');
    const char *sv[6] = {"a", "b", "c", "d", "e", "f"};
    char       *sb[6];
    ASSERT_OK(zarr_chain_from_v2_json(J("[{\"id\":\"vlen-utf8\"}]"), NULL, 'F', &tv, 2, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, sv, s23, &out));
    static const uint8_t wv[] = {6, 0,   0, 0, 1, 0, 0,   0, 'a', 1, 0, 0,   0, 'd', 1, 0, 0,
                                 0, 'b', 1, 0, 0, 0, 'e', 1, 0,   0, 0, 'c', 1, 0,   0, 0, 'f'};
    ASSERT_EQ_INT(out.size, sizeof wv);
    ASSERT(memcmp(out.data, wv, sizeof wv) == 0);
    ASSERT_OK(zarr_chain_decode(c, NULL, out.data, out.size, sb, s23));
    for (int i = 0; i < 6; i++) {
        ASSERT_STR(sb[i], sv[i]);
        free(sb[i]);
    }
    zarr_buf_free(&out);
    zarr_chain_free(c);
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * JSON
 * ------------------------------------------------------------------------------------------------ */
static int
v3_roundtrip(const char *codecs_in, const zarr_dtype *t, int ndim, const char *want)
{
    zarr_chain         *c;
    struct json_object *j;
    ASSERT_OK(zarr_chain_from_v3_json(J(codecs_in), t, ndim, &c));
    ASSERT_OK(zarr_chain_to_v3_json(c, &j));
    ASSERT_STR(jstr(j), want);
    json_object_put(j);
    zarr_chain_free(c);
    return 0;
}

static int
test_json_v3(void)
{
    zarr_dtype i4 = simple_dtype(ZARR_INT, 4, '<'), u1 = simple_dtype(ZARR_UINT, 1, '|');
    if (v3_roundtrip("[\"bytes\",{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}]",
                     &i4, 1,
                     "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                     "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}]"))
        return 1;
    /* 1-byte types: no endian */
    if (v3_roundtrip("[{\"name\":\"bytes\"}]", &u1, 1, "[{\"name\":\"bytes\",\"configuration\":{}}]"))
        return 1;
    /* NCZarr's string level; numcodecs.* names; crc32c */
    if (v3_roundtrip(
            "[{\"name\":\"bytes\",\"configuration\":{}},{\"name\":\"zstd\",\"configuration\":{\"level\":"
            "\"3\"}},{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":1}},{\"name\":\"numcodecs."
            "shuffle\",\"configuration\":{\"elementsize\":4}},{\"name\":\"crc32c\",\"configuration\":{}}]",
            &i4, 1,
            "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"zstd\","
            "\"configuration\":{\"level\":3,\"checksum\":false}},{\"name\":\"numcodecs.zlib\","
            "\"configuration\":{\"level\":1}},{\"name\":\"numcodecs.shuffle\",\"configuration\":{"
            "\"elementsize\":4}},{\"name\":\"crc32c\"}]"))
        return 1;
    /* blosc: typesize from the dtype when absent */
    if (v3_roundtrip(
            "[\"bytes\",{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":1,\"shuffle\":"
            "\"noshuffle\",\"blocksize\":0}}]",
            &i4, 1,
            "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"blosc\","
            "\"configuration\":{\"typesize\":4,\"cname\":\"lz4\",\"clevel\":1,\"shuffle\":\"noshuffle\","
            "\"blocksize\":0}}]"))
        return 1;
    /* numcodecs.blosc (integer shuffle) becomes the native blosc codec */
    if (v3_roundtrip(
            "[\"bytes\",{\"name\":\"numcodecs.blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":3,"
            "\"shuffle\":2}}]",
            &i4, 1,
            "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"blosc\","
            "\"configuration\":{\"typesize\":4,\"cname\":\"zstd\",\"clevel\":3,\"shuffle\":\"bitshuffle\","
            "\"blocksize\":0}}]"))
        return 1;
    if (v3_roundtrip(
            "[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}},\"bytes\",{\"name\":\"gzip\","
            "\"configuration\":{\"level\":5}}]",
            &i4, 2,
            "[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}},{\"name\":\"bytes\","
            "\"configuration\":{\"endian\":\"little\"}},{\"name\":\"gzip\",\"configuration\":{\"level\":5}}"
            "]"))
        return 1;

    /* every bytes/crc32c/gzip/zstd/blosc/transpose case of zarr-python's zarr-metadata fixtures parses */
    static const char *const names[] = {"bytes", "crc32c", "gzip", "zstd", "blosc", "transpose"};
    zarr_dtype               f4      = simple_dtype(ZARR_FLOAT, 4, '<');
    int                      ncases  = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/zarr-python/zarr-metadata/v3/codec/%s/cases.json", test_shared_dir(),
                 names[i]);
        struct json_object *cases = json_object_from_file(path);
        if (!cases)
            FAILF("can't read %s", path);
        json_object_object_foreach(cases, key, val)
        {
            struct json_object *list = json_object_new_array();
            const char         *nm   = names[i];
            int                 ndim = strcmp(nm, "transpose") == 0 ? 3 : 1;
            const zarr_dtype   *t    = &f4;
            /* a bytes codec without endian only suits 1-byte types */
            if (strcmp(nm, "bytes") == 0 && strstr(key, "endian") == NULL)
                t = &u1;
            if (strcmp(nm, "bytes") != 0)
                json_object_array_add(list, json_object_new_string("bytes"));
            json_object_array_add(list, json_object_get(val));
            if (strcmp(nm, "transpose") == 0) { /* transpose comes first */
                json_object_put(list);
                list = json_object_new_array();
                json_object_array_add(list, json_object_get(val));
                json_object_array_add(list, json_object_new_string("bytes"));
            }
            zarr_chain *c;
            if (zarr_chain_from_v3_json(list, t, ndim, &c) != ZARR_OK)
                FAILF("%s case '%s' (%s): %s", nm, key, jstr(val), zarr_errmsg());
            /* and round trips a value through the codec */
            float    v[24], back[24];
            uint64_t shp[3] = {2, 3, 4}, n24 = 24;
            zarr_buf out = ZARR_BUF_INIT;
            for (int k = 0; k < 24; k++)
                v[k] = (float)k * 0.5f;
            ASSERT_OK(zarr_chain_encode(c, NULL, v, ndim == 3 ? shp : &n24, &out));
            ASSERT_OK(zarr_chain_decode(c, NULL, out.data, out.size, back, ndim == 3 ? shp : &n24));
            ASSERT(memcmp(v, back, t->size * 24) == 0);
            zarr_buf_free(&out);
            zarr_chain_free(c);
            json_object_put(list);
            ncases++;
        }
        json_object_put(cases);
    }
    ASSERT(ncases >= 11);
    return 0;
}

static int
test_json_errors(void)
{
    zarr_dtype  i4 = simple_dtype(ZARR_INT, 4, '<');
    zarr_chain *c  = (zarr_chain *)1;
    ASSERT_ERR(zarr_chain_from_v3_json(J("[\"bytes\",{\"name\":\"foo\"}]"), &i4, 1, &c), ZARR_EUNSUPPORTED);
    ASSERT(strstr(zarr_errmsg(), "'foo'") != NULL);
    ASSERT(c == NULL);
    /* sharding_indexed is supported; a configuration without chunk_shape is malformed (and it must be
     * the array->bytes codec, so it can't follow "bytes" either) */
    ASSERT_ERR(zarr_chain_from_v3_json(J("[\"bytes\",{\"name\":\"sharding_indexed\",\"configuration\":{}}]"),
                                       &i4, 1, &c),
               ZARR_EMETA);
    ASSERT(strstr(zarr_errmsg(), "chunk_shape") != NULL);
    ASSERT_ERR(zarr_chain_from_v2_json(NULL, J("{\"id\":\"lzma\",\"preset\":1}"), 'C', &i4, 1, &c),
               ZARR_EUNSUPPORTED);
    ASSERT(strstr(zarr_errmsg(), "lzma") != NULL);
    ASSERT_ERR(zarr_chain_from_v3_json(
                   J("[\"bytes\",{\"name\":\"gzip\",\"configuration\":{\"level\":\"x\"}}]"), &i4, 1, &c),
               ZARR_EMETA);
    ASSERT(strstr(zarr_errmsg(), "'level'") != NULL);
    ASSERT_ERR(zarr_chain_from_v3_json(
                   J("[\"bytes\",{\"name\":\"zstd\",\"configuration\":{\"checksum\":1}}]"), &i4, 1, &c),
               ZARR_EMETA);
    ASSERT(strstr(zarr_errmsg(), "'checksum'") != NULL);
    ASSERT_ERR(zarr_chain_from_v3_json(
                   J("[\"bytes\",{\"name\":\"zstd\",\"configuration\":{\"level\":\"3x\"}}]"), &i4, 1, &c),
               ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v3_json(J("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"middle\"}}]"),
                                       &i4, 1, &c),
               ZARR_EMETA);
    ASSERT(strstr(zarr_errmsg(), "'endian'") != NULL);
    ASSERT_ERR(zarr_chain_from_v3_json(J("[\"bytes\",{\"name\":\"blosc\",\"configuration\":{\"cname\":7}}]"),
                                       &i4, 1, &c),
               ZARR_EMETA);
    ASSERT(strstr(zarr_errmsg(), "'cname'") != NULL);
    ASSERT_ERR(zarr_chain_from_v3_json(
                   J("[\"bytes\",{\"name\":\"blosc\",\"configuration\":{\"shuffle\":\"x\"}}]"), &i4, 1, &c),
               ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v3_json(J("[\"bytes\",{\"name\":\"gzip\",\"configuration\":[]}]"), &i4, 1, &c),
               ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v3_json(J("{\"name\":\"bytes\"}"), &i4, 1, &c), ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v3_json(J("[{\"nom\":\"bytes\"}]"), &i4, 1, &c), ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v3_json(J("[\"gzip\"]"), &i4, 1, &c), ZARR_EMETA);            /* no bytes */
    ASSERT_ERR(zarr_chain_from_v3_json(J("[\"bytes\",\"bytes\"]"), &i4, 1, &c), ZARR_EMETA); /* two */
    ASSERT_ERR(zarr_chain_from_v3_json(J("[\"crc32c\",\"bytes\"]"), &i4, 1, &c), ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v3_json(
                   J("[\"bytes\",{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}]"), &i4, 2, &c),
               ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v3_json(
                   J("[{\"name\":\"transpose\",\"configuration\":{\"order\":[0,0]}},\"bytes\"]"), &i4, 2, &c),
               ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v3_json(
                   J("[{\"name\":\"transpose\",\"configuration\":{\"order\":[0]}},\"bytes\"]"), &i4, 2, &c),
               ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v3_json(J("[\"vlen-utf8\"]"), &i4, 1, &c), ZARR_EMETA);
    zarr_dtype s = simple_dtype(ZARR_VLEN_UTF8, sizeof(char *), '|');
    ASSERT_ERR(zarr_chain_from_v3_json(J("[\"bytes\"]"), &s, 1, &c), ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v3_json(J("[\"vlen-bytes\"]"), &s, 1, &c), ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v2_json(NULL, NULL, 'C', &s, 1, &c), ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v2_json(J("{\"id\":\"zlib\"}"), NULL, 'C', &i4, 1, &c), ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v2_json(NULL, J("{\"level\":1}"), 'C', &i4, 1, &c), ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v2_json(NULL, J("{\"id\":\"zlib\",\"level\":12}"), 'C', &i4, 1, &c),
               ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v2_json(NULL, NULL, 'X', &i4, 1, &c), ZARR_EMETA);
    /* append only takes bytes->bytes codecs */
    ASSERT_OK(zarr_chain_new_plain(&i4, 1, '<', &c));
    ASSERT_ERR(zarr_chain_append_json(c, J("{\"name\":\"bytes\"}")), ZARR_EINVAL);
    ASSERT_ERR(zarr_chain_append_json(c, J("{\"name\":\"nope\"}")), ZARR_EUNSUPPORTED);
    ASSERT_EQ_INT(zarr_chain_count(c), 1);
    zarr_chain_free(c);
    zarr_chain_free(NULL);
    return 0;
}

static int
test_json_v2(void)
{
    zarr_dtype          i4 = simple_dtype(ZARR_INT, 4, '<'), u1 = simple_dtype(ZARR_UINT, 1, '|');
    zarr_chain         *c, *d;
    struct json_object *f, *comp, *v3;

    /* blosc with shuffle -1 (auto: bit for 1-byte items, byte otherwise) keeps -1 in v2 */
    ASSERT_OK(zarr_chain_from_v2_json(NULL,
                                      J("{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":-1,"
                                        "\"blocksize\":0}"),
                                      'F', &u1, 2, &c));
    ASSERT_OK(zarr_chain_to_v2_json(c, &f, &comp));
    ASSERT(f == NULL);
    ASSERT_STR(jstr(comp),
               "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":-1,\"blocksize\":0}");
    json_object_put(comp);
    ASSERT_OK(zarr_chain_to_v3_json(c, &v3));
    ASSERT_STR(jstr(v3),
               "[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}},{\"name\":\"bytes\","
               "\"configuration\":{}},{\"name\":\"blosc\",\"configuration\":{\"typesize\":1,\"cname\":"
               "\"lz4\",\"clevel\":5,\"shuffle\":\"bitshuffle\",\"blocksize\":0}}]");
    json_object_put(v3);
    ASSERT_EQ_INT(zarr_chain_count(c), 3);
    ASSERT_OK(zarr_chain_codec_json(c, 2, &v3));
    ASSERT(strstr(jstr(v3), "\"blosc\"") != NULL);
    json_object_put(v3);
    ASSERT_ERR(zarr_chain_codec_json(c, 3, &v3), ZARR_EINVAL);
    /* copies are independent and equal */
    ASSERT((d = zarr_chain_copy(c)) != NULL);
    zarr_chain_free(c);
    ASSERT_OK(zarr_chain_to_v3_json(d, &v3));
    ASSERT(strstr(jstr(v3), "bitshuffle") != NULL);
    json_object_put(v3);
    zarr_chain_free(d);

    /* filters and compressor keep their places; zstd checksum only written when set */
    ASSERT_OK(zarr_chain_from_v2_json(J("[{\"id\":\"shuffle\",\"elementsize\":4},{\"id\":\"crc32c\"}]"),
                                      J("{\"id\":\"zstd\",\"level\":\"5\"}"), 'C', &i4, 1, &c));
    ASSERT_OK(zarr_chain_to_v2_json(c, &f, &comp));
    ASSERT_STR(jstr(f), "[{\"id\":\"shuffle\",\"elementsize\":4},{\"id\":\"crc32c\"}]");
    ASSERT_STR(jstr(comp), "{\"id\":\"zstd\",\"level\":5}");
    json_object_put(f);
    json_object_put(comp);
    zarr_chain_free(c);

    /* no compressor: json null both */
    ASSERT_OK(zarr_chain_from_v2_json(J("[]"), NULL, 'C', &i4, 1, &c));
    ASSERT(zarr_chain_is_identity(c));
    ASSERT_OK(zarr_chain_to_v2_json(c, &f, &comp));
    ASSERT(f == NULL && comp == NULL);
    /* appending a compressor makes it the v2 compressor */
    ASSERT_OK(zarr_chain_append_json(c, J("{\"name\":\"gzip\",\"configuration\":{\"level\":1}}")));
    ASSERT(!zarr_chain_is_identity(c));
    ASSERT_OK(zarr_chain_to_v2_json(c, &f, &comp));
    ASSERT(f == NULL);
    ASSERT_STR(jstr(comp), "{\"id\":\"gzip\",\"level\":1}");
    json_object_put(comp);
    zarr_chain_free(c);

    /* vlen: the object codec is the first filter */
    zarr_dtype s = simple_dtype(ZARR_VLEN_UTF8, sizeof(char *), '|');
    ASSERT_OK(zarr_chain_from_v2_json(J("[{\"id\":\"vlen-utf8\"}]"), J("{\"id\":\"zlib\",\"level\":1}"), 'C',
                                      &s, 1, &c));
    ASSERT(!zarr_chain_is_identity(c));
    ASSERT_EQ_INT(zarr__chain_endian(c), '|');
    ASSERT_OK(zarr_chain_to_v2_json(c, &f, &comp));
    ASSERT_STR(jstr(f), "[{\"id\":\"vlen-utf8\"}]");
    ASSERT_STR(jstr(comp), "{\"id\":\"zlib\",\"level\":1}");
    json_object_put(f);
    json_object_put(comp);
    ASSERT_OK(zarr_chain_to_v3_json(c, &v3));
    ASSERT_STR(jstr(v3), "[{\"name\":\"vlen-utf8\",\"configuration\":{}},{\"name\":\"numcodecs.zlib\","
                         "\"configuration\":{\"level\":1}}]");
    json_object_put(v3);
    zarr_chain_free(c);
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * Kernels on their own
 * ------------------------------------------------------------------------------------------------ */
static int
test_kernels_unknown_size(void)
{
    uint8_t  src[5000];
    zarr_buf enc = ZARR_BUF_INIT, dec = ZARR_BUF_INIT;
    for (int i = 0; i < 5000; i++)
        src[i] = (uint8_t)(i % 7 == 0 ? i : 3);
    /* zlib / gzip: streamed growth, limit enforced */
    for (int fmt = 0; fmt < 2; fmt++) {
        ASSERT_OK(zarr__deflate(NULL, (zarr__zfmt)fmt, 9, src, sizeof src, &enc));
        ASSERT_OK(zarr__inflate_buf(NULL, (zarr__zfmt)fmt, enc.data, enc.size, 5000, &dec));
        ASSERT(dec.size == 5000 && memcmp(dec.data, src, 5000) == 0);
        ASSERT_ERR(zarr__inflate_buf(NULL, (zarr__zfmt)fmt, enc.data, enc.size, 4999, &dec), ZARR_ECODEC);
    }
    /* gzip: two members concatenate */
    {
        zarr_buf two = ZARR_BUF_INIT;
        ASSERT_OK(zarr__deflate(NULL, ZARR__ZFMT_GZIP, 1, "abc", 3, &enc));
        ASSERT_OK(zarr_buf_append(&two, enc.data, enc.size));
        ASSERT_OK(zarr__deflate(NULL, ZARR__ZFMT_GZIP, 1, "de", 2, &enc));
        ASSERT_OK(zarr_buf_append(&two, enc.data, enc.size));
        char five[5];
        ASSERT_OK(zarr__inflate(NULL, ZARR__ZFMT_GZIP, two.data, two.size, five, 5));
        ASSERT(memcmp(five, "abcde", 5) == 0);
        zarr_buf_free(&two);
    }
    /* zstd: content size checked against the limit; streamed frames too */
    zarr_codec_ctx *ctx = zarr_codec_ctx_new();
    ASSERT_OK(zarr__zstd_compress(ctx, 3, true, src, sizeof src, &enc));
    ASSERT_OK(zarr__zstd_decompress_buf(ctx, enc.data, enc.size, 5000, &dec));
    ASSERT(dec.size == 5000 && memcmp(dec.data, src, 5000) == 0);
    ASSERT_ERR(zarr__zstd_decompress_buf(ctx, enc.data, enc.size, 4000, &dec), ZARR_ECODEC);
    {
        /* a frame without content size, made with the streaming API */
        ZSTD_CCtx     *zc = ZSTD_createCCtx();
        uint8_t        frame[8000];
        ZSTD_inBuffer  in  = {src, sizeof src, 0};
        ZSTD_outBuffer out = {frame, sizeof frame, 0};
        ZSTD_CCtx_setParameter(zc, ZSTD_c_contentSizeFlag, 0);
        while (ZSTD_compressStream2(zc, &out, &in, ZSTD_e_end) != 0)
            ;
        ZSTD_freeCCtx(zc);
        ASSERT_EQ_INT(ZSTD_getFrameContentSize(frame, out.pos), ZSTD_CONTENTSIZE_UNKNOWN);
        ASSERT_OK(zarr__zstd_decompress_buf(ctx, frame, out.pos, 1 << 20, &dec));
        ASSERT(dec.size == 5000 && memcmp(dec.data, src, 5000) == 0);
        ASSERT_ERR(zarr__zstd_decompress_buf(ctx, frame, out.pos, 4096, &dec), ZARR_ECODEC);
        ASSERT_ERR(zarr__zstd_decompress_buf(ctx, frame, out.pos - 3, 1 << 20, &dec), ZARR_ECODEC);
        uint8_t exact[5000];
        ASSERT_OK(zarr__zstd_decompress(ctx, frame, out.pos, exact, 5000));
        ASSERT(memcmp(exact, src, 5000) == 0);
        ASSERT_ERR(zarr__zstd_decompress(ctx, frame, out.pos, exact, 4999), ZARR_ECODEC);
    }
    zarr_codec_ctx_free(ctx);
    /* blosc / lz4: header sizes checked against the limit before allocating */
    ASSERT_OK(zarr__blosc_compress("lz4", 5, 1, 4, 0, src, sizeof src, &enc));
    ASSERT_ERR(zarr__blosc_decompress_buf(enc.data, enc.size, 4999, &dec), ZARR_ECODEC);
    ASSERT_OK(zarr__blosc_decompress_buf(enc.data, enc.size, 5000, &dec));
    ASSERT(dec.size == 5000 && memcmp(dec.data, src, 5000) == 0);
    ASSERT_OK(zarr__lz4_compress(1, src, sizeof src, &enc));
    ASSERT_EQ_INT(zarr__load_le32(enc.data), 5000);
    ASSERT_ERR(zarr__lz4_decompress_buf(enc.data, enc.size, 4999, &dec), ZARR_ECODEC);
    enc.data[0] = 0xff, enc.data[1] = 0xff, enc.data[2] = 0xff, enc.data[3] = 0x7f; /* claims 2 GiB */
    ASSERT_ERR(zarr__lz4_decompress_buf(enc.data, enc.size, 1 << 20, &dec), ZARR_ECODEC);
    /* blosc: incompressible data is stored with a copy header and still decodes */
    uint8_t  noise[3000];
    uint32_t r = 1;
    for (int i = 0; i < 3000; i++)
        noise[i] = (uint8_t)((r = r * 1664525u + 1013904223u) >> 24);
    ASSERT_OK(zarr__blosc_compress("zstd", 9, 1, 4, 0, noise, sizeof noise, &enc));
    ASSERT(enc.size <= sizeof noise + BLOSC_MAX_OVERHEAD);
    ASSERT_OK(zarr__blosc_decompress_buf(enc.data, enc.size, 3000, &dec));
    ASSERT(dec.size == 3000 && memcmp(dec.data, noise, 3000) == 0);
    ASSERT_ERR(zarr__blosc_compress("nope", 5, 1, 4, 0, src, 10, &enc), ZARR_EUNSUPPORTED);
    zarr_buf_free(&enc);
    zarr_buf_free(&dec);
    return 0;
}

/* bz2 (numcodecs BZ2, HDF5's bzip2 filter 307, NCZarr's "bz2"): a stream made by Python's bz2 module
 * decodes; ours is one bzip2 stream of the configured block size; bad input is refused by name. */
static int
test_bz2(void)
{
    static const uint8_t py[45] = {0x42, 0x5a, 0x68, 0x39, 0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0x9e, 0x62,
                                   0x5b, 0xfe, 0x00, 0x00, 0x02, 0x91, 0x00, 0x40, 0x00, 0x02, 0x44, 0xa0,
                                   0x00, 0x21, 0x14, 0x60, 0x66, 0x82, 0x91, 0xef, 0x23, 0x47, 0x0b, 0xb9,
                                   0x22, 0x9c, 0x28, 0x48, 0x4f, 0x31, 0x2d, 0xff, 0x00};
    static const char    text[] = "hello hello hello"; /* bz2.compress(text, 9) above */
    uint8_t              back[64], more[sizeof py + 1];
    zarr_buf             enc = ZARR_BUF_INIT, dec = ZARR_BUF_INIT;
    int32_t              vals[1000];
    zarr_chain          *c;
    zarr_dtype           t = simple_dtype(ZARR_INT, 4, '<');
    uint64_t             n = 1000;
    struct json_object  *f = NULL, *comp = NULL;

    ASSERT_OK(zarr__bz2_decompress(py, sizeof py, back, 17));
    ASSERT(memcmp(back, text, 17) == 0);
    ASSERT_OK(zarr__bz2_decompress_buf(py, sizeof py, 1 << 20, &dec));
    ASSERT(dec.size == 17 && memcmp(dec.data, text, 17) == 0);
    /* a limit below the decoded size, the wrong size, trailing bytes, not bzip2, corrupt */
    ASSERT_ERR(zarr__bz2_decompress_buf(py, sizeof py, 16, &dec), ZARR_ECODEC);
    ASSERT(strstr(zarr_errmsg(), "more than 16 bytes"));
    ASSERT_ERR(zarr__bz2_decompress(py, sizeof py, back, 18), ZARR_ECODEC);
    ASSERT(strstr(zarr_errmsg(), "17 bytes, expected 18"));
    memcpy(more, py, sizeof py);
    more[sizeof py] = 0;
    ASSERT_ERR(zarr__bz2_decompress(more, sizeof more, back, 17), ZARR_ECODEC);
    ASSERT(strstr(zarr_errmsg(), "after the end of the stream"));
    ASSERT_ERR(zarr__bz2_decompress(text, 17, back, 17), ZARR_ECODEC);
    ASSERT(strstr(zarr_errmsg(), "not a bzip2 stream"));
    memcpy(more, py, sizeof py);
    more[20] ^= 0x55;
    ASSERT_ERR(zarr__bz2_decompress(more, sizeof py, back, 17), ZARR_ECODEC);

    /* through the chain: v2 {"id": "bz2"} (numcodecs' default level 1), NCZarr's string level */
    fill_pattern(vals, 1000);
    ASSERT_OK(zarr_chain_from_v2_json(NULL, J("{\"id\":\"bz2\"}"), 'C', &t, 1, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, vals, &n, &enc));
    ASSERT(enc.size > 10 && enc.size < 4000 && memcmp(enc.data, "BZh1", 4) == 0);
    ASSERT_OK(zarr_chain_to_v2_json(c, &f, &comp));
    ASSERT_STR(json_object_to_json_string_ext(comp, JSON_C_TO_STRING_PLAIN), "{\"id\":\"bz2\",\"level\":1}");
    json_object_put(f);
    json_object_put(comp);
    zarr_chain_free(c);
    ASSERT_OK(zarr_chain_from_v2_json(NULL, J("{\"id\": \"bz2\", \"level\": \"9\"}"), 'C', &t, 1, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, vals, &n, &enc));
    ASSERT(memcmp(enc.data, "BZh9", 4) == 0);
    zarr_chain_free(c);
    ASSERT_OK(zarr_chain_from_v3_json(
        J("[\"bytes\",{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":4}}]"), &t, 1, &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, vals, &n, &enc));
    ASSERT(memcmp(enc.data, "BZh4", 4) == 0);
    {
        int32_t got[1000];
        ASSERT_OK(zarr_chain_decode(c, NULL, enc.data, enc.size, got, &n));
        ASSERT(memcmp(got, vals, sizeof vals) == 0);
    }
    zarr_chain_free(c);
    ASSERT_ERR(zarr_chain_from_v2_json(NULL, J("{\"id\":\"bz2\",\"level\":10}"), 'C', &t, 1, &c), ZARR_EMETA);
    ASSERT(strstr(zarr_errmsg(), "'level'"));
    zarr_buf_free(&enc);
    zarr_buf_free(&dec);
    return 0;
}

static int
test_h5lz4(void)
{
    uint8_t  src[10000], back[10000], noise[700];
    zarr_buf enc = ZARR_BUF_INIT, dec = ZARR_BUF_INIT;
    uint32_t r = 7;
    for (int i = 0; i < 10000; i++)
        src[i] = (uint8_t)(i / 100);
    for (int i = 0; i < 700; i++)
        noise[i] = (uint8_t)((r = r * 1664525u + 1013904223u) >> 24);
    /* header: 8-byte BE size, 4-byte BE block size; 3 blocks of 4000/4000/2000 */
    ASSERT_OK(zarr__h5lz4_compress(4000, src, sizeof src, &enc));
    static const uint8_t hdr[12] = {0, 0, 0, 0, 0, 0, 0x27, 0x10, 0, 0, 0x0f, 0xa0};
    ASSERT(memcmp(enc.data, hdr, 12) == 0);
    ASSERT_OK(zarr__h5lz4_decompress(enc.data, enc.size, back, sizeof back));
    ASSERT(memcmp(back, src, sizeof src) == 0);
    ASSERT_ERR(zarr__h5lz4_decompress(enc.data, enc.size, back, 9999), ZARR_ECODEC);
    for (size_t len = 0; len < enc.size; len++)
        ASSERT_ERR(zarr__h5lz4_decompress(enc.data, len, back, sizeof back), ZARR_ECODEC);
    /* default block size (1 GiB, capped to the input) */
    ASSERT_OK(zarr__h5lz4_compress(0, src, sizeof src, &enc));
    ASSERT_EQ_INT(enc.data[8] << 24 | enc.data[9] << 16 | enc.data[10] << 8 | enc.data[11], 10000);
    ASSERT_OK(zarr__h5lz4_decompress_buf(enc.data, enc.size, 10000, &dec));
    ASSERT(dec.size == 10000 && memcmp(dec.data, src, 10000) == 0);
    ASSERT_ERR(zarr__h5lz4_decompress_buf(enc.data, enc.size, 9999, &dec), ZARR_ECODEC);
    /* incompressible: block stored raw, its stored size equals the block size */
    ASSERT_OK(zarr__h5lz4_compress(0, noise, sizeof noise, &enc));
    ASSERT_EQ_INT(enc.size, 12 + 4 + 700);
    ASSERT_EQ_INT(enc.data[12] << 24 | enc.data[13] << 16 | enc.data[14] << 8 | enc.data[15], 700);
    ASSERT(memcmp(enc.data + 16, noise, 700) == 0);
    ASSERT_OK(zarr__h5lz4_decompress(enc.data, enc.size, back, 700));
    ASSERT(memcmp(back, noise, 700) == 0);
    zarr_buf_free(&enc);
    zarr_buf_free(&dec);
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * hdf5_lz4: the codec of HDF5's lz4 filter (32004) framing
 * ------------------------------------------------------------------------------------------------ */
static uint32_t
be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
put_be32(zarr_buf *b, uint32_t v)
{
    uint8_t p[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    zarr_buf_append(b, p, 4);
}

/* A chunk framed the way HDF5's lz4 filter frames it, written here block by block with liblz4 (not
 * with the core's kernel): 8-byte BE size, 4-byte BE block size, per block a BE stored size and the
 * LZ4 block, or the raw block when LZ4 did not shrink it. */
static void
hdf5_lz4_frame(const uint8_t *src, size_t n, size_t bs, zarr_buf *out)
{
    char tmp[LZ4_COMPRESSBOUND(4096)];
    out->size = 0;
    put_be32(out, (uint32_t)((uint64_t)n >> 32));
    put_be32(out, (uint32_t)n);
    put_be32(out, (uint32_t)bs);
    for (size_t at = 0; at < n; at += bs) {
        int len = (int)(n - at < bs ? n - at : bs);
        int r   = LZ4_compress_default((const char *)src + at, tmp, len, (int)sizeof tmp);
        if (r > 0 && r < len) {
            put_be32(out, (uint32_t)r);
            zarr_buf_append(out, tmp, (size_t)r);
        }
        else {
            put_be32(out, (uint32_t)len);
            zarr_buf_append(out, src + at, (size_t)len);
        }
    }
}

static int
test_hdf5_lz4_codec(void)
{
    enum { N = 1000 }; /* int32: 4000 bytes */
    int32_t             vals[N], back[N];
    uint8_t            *bytes = (uint8_t *)vals;
    uint64_t            n = N, less = N - 1;
    uint32_t            rng = 99;
    zarr_dtype          i4  = simple_dtype(ZARR_INT, 4, '<');
    zarr_chain         *c, *c2, *c3;
    zarr_buf            enc = ZARR_BUF_INIT, ref = ZARR_BUF_INIT;
    struct json_object *v3, *f, *comp;
    size_t              raw = 0, packed = 0, pos;

    /* 4000 bytes: compressible runs, with bytes 1024..1535 noise (blocks there cannot shrink) */
    for (int i = 0; i < N; i++)
        vals[i] = i / 50;
    for (int i = 1024; i < 1536; i++)
        bytes[i] = (uint8_t)((rng = rng * 1664525u + 1013904223u) >> 24);

    /* metadata: v3 name + configuration, v2 id, both written back as read */
    ASSERT_OK(zarr_chain_from_v3_json(J("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                                        "{\"name\":\"hdf5_lz4\",\"configuration\":{\"blocksize\":256}}]"),
                                      &i4, 1, &c));
    ASSERT_OK(zarr_chain_to_v3_json(c, &v3));
    ASSERT_STR(jstr(v3), "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":"
                         "\"hdf5_lz4\",\"configuration\":{\"blocksize\":256}}]");
    json_object_put(v3);
    ASSERT_OK(zarr_chain_to_v2_json(c, &f, &comp));
    ASSERT(f == NULL);
    ASSERT_STR(jstr(comp), "{\"id\":\"hdf5_lz4\",\"blocksize\":256}");
    ASSERT_OK(zarr_chain_from_v2_json(NULL, comp, 'C', &i4, 1, &c2));
    json_object_put(comp);
    ASSERT_OK(zarr_chain_from_v3_json(J("[\"bytes\",{\"name\":\"hdf5_lz4\"}]"), &i4, 1, &c3));
    ASSERT_OK(zarr_chain_to_v3_json(c3, &v3)); /* blocksize absent: 0, the filter's default */
    ASSERT(strstr(jstr(v3), "{\"name\":\"hdf5_lz4\",\"configuration\":{\"blocksize\":0}}") != NULL);
    json_object_put(v3);

    /* encoding: the filter plugin's bytes (same kernel) and, block by block, HDF5's framing */
    ASSERT_OK(zarr_chain_encode(c, NULL, vals, &n, &enc));
    ASSERT_OK(zarr__h5lz4_compress(256, vals, sizeof vals, &ref));
    ASSERT(enc.size == ref.size && memcmp(enc.data, ref.data, enc.size) == 0);
    ASSERT_EQ_INT(be32(enc.data), 0);
    ASSERT_EQ_INT(be32(enc.data + 4), 4000);
    ASSERT_EQ_INT(be32(enc.data + 8), 256);
    pos = 12;
    for (size_t at = 0; at < 4000; at += 256) {
        size_t   want = 4000 - at < 256 ? 4000 - at : 256; /* 15 blocks of 256, the last of 160 */
        uint32_t cs;
        ASSERT(pos + 4 <= enc.size);
        cs = be32(enc.data + pos);
        ASSERT(cs <= want);
        if (cs == want) {
            ASSERT(memcmp(enc.data + pos + 4, bytes + at, want) == 0);
            raw++;
        }
        else
            packed++;
        pos += 4 + cs;
    }
    ASSERT_EQ_INT(pos, enc.size);
    ASSERT_EQ_INT(raw, 2); /* bytes 1024..1535: blocks 4 and 5 */
    ASSERT_EQ_INT(packed, 14);
    hdf5_lz4_frame(bytes, 4000, 256, &ref);
    ASSERT(enc.size == ref.size && memcmp(enc.data, ref.data, enc.size) == 0);

    /* decoding through every parsed form */
    memset(back, 0, sizeof back);
    ASSERT_OK(zarr_chain_decode(c, NULL, enc.data, enc.size, back, &n));
    ASSERT(memcmp(back, vals, sizeof vals) == 0);
    memset(back, 0, sizeof back);
    ASSERT_OK(zarr_chain_decode(c2, NULL, enc.data, enc.size, back, &n));
    ASSERT(memcmp(back, vals, sizeof vals) == 0);
    /* a chain with another block size still reads it: the block size is in the data */
    memset(back, 0, sizeof back);
    ASSERT_OK(zarr_chain_decode(c3, NULL, enc.data, enc.size, back, &n));
    ASSERT(memcmp(back, vals, sizeof vals) == 0);
    /* default block size: one block */
    ASSERT_OK(zarr_chain_encode(c3, NULL, vals, &n, &enc));
    ASSERT_EQ_INT(be32(enc.data + 8), 4000);
    hdf5_lz4_frame(bytes, 4000, 4000, &ref);
    ASSERT(enc.size == ref.size && memcmp(enc.data, ref.data, enc.size) == 0);

    /* what HDF5 writes with other block sizes, incl. 1-byte blocks (all raw), decodes */
    {
        static const size_t sizes[] = {1, 3, 7, 100, 1000, 3999, 4000, 65536};
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t bs = sizes[k] > 4000 ? 4000 : sizes[k]; /* the filter caps it to the chunk */
            hdf5_lz4_frame(bytes, 4000, bs, &ref);
            memset(back, 0, sizeof back);
            if (zarr_chain_decode(c3, NULL, ref.data, ref.size, back, &n) != ZARR_OK)
                FAILF("block size %zu: %s", sizes[k], zarr_errmsg());
            ASSERT(memcmp(back, vals, sizeof vals) == 0);
        }
        ASSERT_EQ_INT(ref.size, enc.size);
    }
    zarr_chain_free(c2);
    zarr_chain_free(c3);

    /* 1-byte blocks are 5x the data: a compressor after hdf5_lz4 must be allowed to decode that much */
    ASSERT_OK(
        zarr_chain_from_v3_json(J("[\"bytes\",{\"name\":\"hdf5_lz4\",\"configuration\":{\"blocksize\":1}},"
                                  "{\"name\":\"zstd\",\"configuration\":{\"level\":1}}]"),
                                &i4, 1, &c2));
    ASSERT_OK(zarr_chain_encode(c2, NULL, vals, &n, &enc));
    memset(back, 0, sizeof back);
    ASSERT_OK(zarr_chain_decode(c2, NULL, enc.data, enc.size, back, &n));
    ASSERT(memcmp(back, vals, sizeof vals) == 0);
    zarr_chain_free(c2);

    /* bad input: each a ZARR_ECODEC with a message, never a crash (ASan) or a wrong value */
    ASSERT_OK(zarr_chain_encode(c, NULL, vals, &n, &enc));
    {
        zarr_buf bad = ZARR_BUF_INIT, dec = ZARR_BUF_INIT;
        /* decoded size other than the chunk's */
        ASSERT_ERR(zarr_chain_decode(c, NULL, enc.data, enc.size, back, &less), ZARR_ECODEC);
        ASSERT(strstr(zarr_errmsg(), "4000") && strstr(zarr_errmsg(), "3996"));
        /* truncated anywhere */
        for (size_t len = 0; len < enc.size; len++) {
            uint8_t *cut = malloc(len ? len : 1);
            memcpy(cut, enc.data, len);
            int rc = zarr_chain_decode(c, NULL, cut, len, back, &n);
            free(cut);
            if (rc != ZARR_ECODEC)
                FAILF("%zu of %zu bytes: rc %d, expected ZARR_ECODEC", len, enc.size, rc);
        }
        /* block size 0 for a non-empty chunk */
        zarr_buf_append(&bad, enc.data, enc.size);
        memset(bad.data + 8, 0, 4);
        ASSERT_ERR(zarr_chain_decode(c, NULL, bad.data, bad.size, back, &n), ZARR_ECODEC);
        ASSERT(strstr(zarr_errmsg(), "block size 0") != NULL);
        /* a block's stored size lying: past the end, or more than the block (not raw, not LZ4) */
        memcpy(bad.data, enc.data, enc.size);
        bad.data[12] = 0x7f;
        ASSERT_ERR(zarr_chain_decode(c, NULL, bad.data, bad.size, back, &n), ZARR_ECODEC);
        ASSERT(strstr(zarr_errmsg(), "truncated") != NULL);
        memcpy(bad.data, enc.data, enc.size);
        bad.data[12] = 0, bad.data[13] = 0, bad.data[14] = 0, bad.data[15] = 0; /* 0-byte first block */
        ASSERT_ERR(zarr_chain_decode(c, NULL, bad.data, bad.size, back, &n), ZARR_ECODEC);
        /* a compressed block that decodes to fewer bytes than the block size */
        {
            char blk[64];
            int  r = LZ4_compress_default((const char *)bytes, blk, 200, (int)sizeof blk);
            ASSERT(r > 0 && r < 200);
            bad.size = 0;
            put_be32(&bad, 0);
            put_be32(&bad, 256);
            put_be32(&bad, 256);
            put_be32(&bad, (uint32_t)r);
            zarr_buf_append(&bad, blk, (size_t)r);
            uint64_t n64 = 64;
            ASSERT_ERR(zarr_chain_decode(c, NULL, bad.data, bad.size, back, &n64), ZARR_ECODEC);
            ASSERT(strstr(zarr_errmsg(), "corrupt block") != NULL);
        }
        /* unknown decoded size (the kernel's growing form): sizes read from the data are checked before
         * anything is allocated: 2^40 bytes claimed; 2^64-1 bytes in 1-byte blocks (a block count that
         * overflows 32 bits); more than the stored bytes can hold */
        bad.size = 0;
        put_be32(&bad, 0x100);
        put_be32(&bad, 0);
        put_be32(&bad, 1 << 20);
        put_be32(&bad, 4);
        zarr_buf_append(&bad, "abcd", 4);
        ASSERT_ERR(zarr__h5lz4_decompress_buf(bad.data, bad.size, ZARR__DECODE_LIMIT, &dec), ZARR_ECODEC);
        ASSERT(strstr(zarr_errmsg(), "limit") != NULL);
        memset(bad.data, 0xff, 8);
        bad.data[8] = 0, bad.data[9] = 0, bad.data[10] = 0, bad.data[11] = 1;
        ASSERT_ERR(zarr__h5lz4_decompress_buf(bad.data, bad.size, ZARR__DECODE_LIMIT, &dec), ZARR_ECODEC);
        ASSERT_ERR(zarr__h5lz4_decompress(bad.data, bad.size, back, sizeof back), ZARR_ECODEC);
        memset(bad.data, 0, 8);
        bad.data[4] = 0x01; /* 16 MiB claimed from 20 bytes */
        ASSERT_ERR(zarr__h5lz4_decompress_buf(bad.data, bad.size, ZARR__DECODE_LIMIT, &dec), ZARR_ECODEC);
        ASSERT(strstr(zarr_errmsg(), "can hold") != NULL);
        ASSERT_EQ_INT(dec.size, 0);
        zarr_buf_free(&bad);
        zarr_buf_free(&dec);
    }

    /* configuration errors; the codec is h5zarr's, not numcodecs' */
    ASSERT_ERR(
        zarr_chain_from_v3_json(J("[\"bytes\",{\"name\":\"hdf5_lz4\",\"configuration\":{\"blocksize\":-1}}]"),
                                &i4, 1, &c2),
        ZARR_EMETA);
    ASSERT(strstr(zarr_errmsg(), "'blocksize'") != NULL);
    ASSERT_ERR(
        zarr_chain_from_v2_json(NULL, J("{\"id\":\"hdf5_lz4\",\"blocksize\":4294967296}"), 'C', &i4, 1, &c2),
        ZARR_EMETA);
    ASSERT_ERR(
        zarr_chain_from_v3_json(
            J("[\"bytes\",{\"name\":\"hdf5_lz4\",\"configuration\":{\"blocksize\":\"8\"}}]"), &i4, 1, &c2),
        ZARR_EMETA);
    ASSERT_ERR(zarr_chain_from_v3_json(J("[\"bytes\",{\"name\":\"numcodecs.hdf5_lz4\"}]"), &i4, 1, &c2),
               ZARR_EUNSUPPORTED);
    ASSERT_OK(
        zarr_chain_from_v2_json(NULL, J("{\"id\":\"hdf5_lz4\",\"blocksize\":4294967295}"), 'C', &i4, 1, &c2));
    ASSERT_OK(zarr_chain_encode(c2, NULL, vals, &n, &enc)); /* capped to the chunk, as HDF5 does */
    ASSERT_EQ_INT(be32(enc.data + 8), 4000);
    zarr_chain_free(c2);

    zarr_chain_free(c);
    zarr_buf_free(&enc);
    zarr_buf_free(&ref);
    return 0;
}

static int
test_shuffle_kernel(void)
{
    /* elementsize 4, 3 elements + 2 trailing bytes (copied unchanged) */
    const uint8_t        in[14] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    uint8_t              out[14], back[14];
    static const uint8_t want[14] = {1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12, 13, 14};
    zarr__shuffle(in, out, 14, 4);
    ASSERT(memcmp(out, want, 14) == 0);
    zarr__unshuffle(out, back, 14, 4);
    ASSERT(memcmp(back, in, 14) == 0);
    zarr__shuffle(in, out, 14, 3);
    zarr__unshuffle(out, back, 14, 3);
    ASSERT(memcmp(back, in, 14) == 0);
    zarr__shuffle(in, out, 14, 1);
    ASSERT(memcmp(out, in, 14) == 0);
    return 0;
}

static int
test_identity_and_empty(void)
{
    zarr_dtype  i4 = simple_dtype(ZARR_INT, 4, '<');
    zarr_chain *c;
    zarr_buf    out  = ZARR_BUF_INIT;
    int32_t     v[4] = {1, 2, 3, 4}, back[4];
    uint64_t    n4 = 4, zero = 0;
    ASSERT_OK(zarr_chain_new_plain(&i4, 1, '<', &c));
    ASSERT(zarr_chain_is_identity(c));
    ASSERT_OK(zarr_chain_encode(c, NULL, v, &n4, &out));
    ASSERT(out.size == 16 && memcmp(out.data, v, 16) == 0);
    zarr_chain_free(c);
    ASSERT_OK(zarr_chain_new_plain(&i4, 1, '>', &c));
    ASSERT(!zarr_chain_is_identity(c));
    zarr_chain_free(c);
    /* 0-d chunk (one element, shape NULL) and an empty chunk through every compressor */
    ASSERT_OK(zarr_chain_new_plain(&i4, 0, '<', &c));
    ASSERT_OK(zarr_chain_encode(c, NULL, v, NULL, &out));
    ASSERT_EQ_INT(out.size, 4);
    zarr_chain_free(c);
    for (size_t k = 0; k < sizeof bad_input_compressors / sizeof bad_input_compressors[0]; k++) {
        ASSERT_OK(zarr_chain_from_v2_json(NULL, J(bad_input_compressors[k]), 'C', &i4, 1, &c));
        ASSERT_OK(zarr_chain_encode(c, NULL, v, &zero, &out));
        ASSERT_OK(zarr_chain_decode(c, NULL, out.data, out.size, back, &zero));
        ASSERT_OK(zarr_chain_encode(c, NULL, v, &n4, &out));
        ASSERT_OK(zarr_chain_decode(c, NULL, out.data, out.size, back, &n4));
        ASSERT(memcmp(back, v, 16) == 0);
        zarr_chain_free(c);
    }
    zarr_buf_free(&out);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(numcodecs_blosc),
    TEST_ENTRY(numcodecs_zstd),
    TEST_ENTRY(numcodecs_zlib),
    TEST_ENTRY(numcodecs_gzip),
    TEST_ENTRY(numcodecs_shuffle),
    TEST_ENTRY(numcodecs_lz4),
    TEST_ENTRY(numcodecs_crc32c),
    TEST_ENTRY(numcodecs_vlen_utf8),
    TEST_ENTRY(numcodecs_vlen_bytes),
    TEST_ENTRY(crc32c_check_value),
    TEST_ENTRY(fletcher32_known_values),
    TEST_ENTRY(bad_truncated),
    TEST_ENTRY(bad_wrong_size),
    TEST_ENTRY(bad_corrupt_never_crashes),
    TEST_ENTRY(bad_crc32c),
    TEST_ENTRY(bad_vlen),
    TEST_ENTRY(byteswap),
    TEST_ENTRY(transpose),
    TEST_ENTRY(json_v3),
    TEST_ENTRY(json_errors),
    TEST_ENTRY(json_v2),
    TEST_ENTRY(kernels_unknown_size),
    TEST_ENTRY(bz2),
    TEST_ENTRY(h5lz4),
    TEST_ENTRY(hdf5_lz4_codec),
    TEST_ENTRY(shuffle_kernel),
    TEST_ENTRY(identity_and_empty),
};

int
main(int argc, char **argv)
{
    int rc = RUN_TESTS(tests);
    for (size_t i = 0; i < njpool; i++)
        json_object_put(jpool[i]);
    return rc;
}
