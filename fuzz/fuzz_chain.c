/*
 * fuzz_chain.c: harness for chunk decoding through codec chains. Byte 0 picks a chain from the table
 * below (each codec alone, common combinations, sharding_indexed with inner zstd and a crc32c index,
 * v2 filters/compressor, hdf5_lz4, hdf5_szip, hdf5_scaleoffset, the numcodecs codecs of issue 15), byte 1 a
 * chunk shape; the rest is the encoded chunk. Decoding must either fail with a message or fill the chunk;
 * when it succeeds the chunk is encoded again and decoded again, and (for exact chains) must give the same
 * elements. Byte 0 is taken modulo the table size, so committed seeds and regressions hold the entry's index
 * itself and new entries go at the end.
 *
 * fuzz_gen_seeds (used by the replay driver's --gen) writes one valid encoded chunk per table entry and
 * shape, made with the core's own encoders, so the fuzzer starts from inputs that decode.
 */
#define _POSIX_C_SOURCE 200809L

#include "fuzz_common.h"
#include "meta_int.h"
#include "zjson.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

typedef struct entry {
    int         fmt;    /* 3: v3 data_type + codecs; 2: v2 dtype + filters + compressor */
    const char *dtype;  /* JSON */
    const char *codecs; /* v3: codecs list; v2: [filters, compressor, "C"|"F"] */
    bool        exact;  /* decode(encode(decode(x))) == decode(x) must hold */
    bool        fill;   /* give the chain a non-zero fill value (sharding uses it) */
    int         only;   /* 0: every chunk shape; k: only shapes[k - 1] (a configuration fixing one) */
} entry;

/* "@INNER@" is replaced by the sharding inner chunk shape for the chosen chunk shape. */
static const entry table[] = {
    {3, "\"int32\"", "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]", true, false},
    {3, "\"int16\"", "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}]", true, false},
    {3, "\"int32\"", "[\"bytes\",{\"name\":\"zstd\",\"configuration\":{\"level\":1}}]", true, false},
    {3, "\"float64\"", "[\"bytes\",{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":true}}]",
     true, false},
    {3, "\"uint8\"", "[\"bytes\",{\"name\":\"gzip\",\"configuration\":{\"level\":1}}]", true, false},
    {3, "\"int64\"", "[\"bytes\",{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":1}}]", true,
     false},
    {3, "\"int32\"",
     "[\"bytes\",{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":"
     "\"shuffle\","
     "\"typesize\":4,\"blocksize\":0}}]",
     true, false},
    {3, "\"float32\"",
     "[\"bytes\",{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":3,\"shuffle\":"
     "\"bitshuffle\",\"typesize\":4,\"blocksize\":0}}]",
     true, false},
    {3, "\"uint16\"", "[\"bytes\",{\"name\":\"numcodecs.lz4\",\"configuration\":{\"acceleration\":1}}]", true,
     false},
    {3, "\"int32\"",
     "[\"bytes\",{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":4}},{\"name\":\"zstd\"}]",
     true, false},
    {3, "\"uint32\"", "[\"bytes\",\"crc32c\"]", true, false},
    {3, "\"int8\"", "[\"bytes\",{\"name\":\"numcodecs.fletcher32\"}]", true, false},
    {3, "\"int32\"",
     "[\"bytes\",{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i4\"}},{\"name\":\"numcodecs."
     "zlib\"}]",
     true, false},
    {3, "\"float64\"",
     "[\"bytes\",{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<f8\",\"astype\":\"<f4\"}}]",
     false, false},
    {3, "\"int16\"",
     "[{\"name\":\"transpose\",\"configuration\":{\"order\":\"F\"}},{\"name\":\"bytes\",\"configuration\":{"
     "\"endian\":\"big\"}},\"crc32c\"]",
     true, false},
    {3, "\"string\"", "[\"vlen-utf8\",{\"name\":\"zstd\"}]", true, false},
    {3, "\"bytes\"", "[\"vlen-bytes\",{\"name\":\"gzip\"}]", true, false},
    {3, "\"int32\"",
     "[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":@INNER@,\"codecs\":[\"bytes\",{"
     "\"name\":\"zstd\"}],\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
     "\"crc32c\"],\"index_location\":\"end\"}}]",
     true, true},
    {3, "\"uint16\"",
     "[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":@INNER@,\"codecs\":[{\"name\":"
     "\"transpose\",\"configuration\":{\"order\":\"F\"}},{\"name\":\"bytes\",\"configuration\":{\"endian\":"
     "\"big\"}},{\"name\":\"gzip\"}],\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
     "\"big\"}}],\"index_location\":\"start\"}}]",
     true, false},
    {3, "\"float32\"",
     "[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":@INNER@,\"codecs\":[\"bytes\","
     "\"crc32c\"],\"index_codecs\":[\"bytes\",{\"name\":\"numcodecs.shuffle\",\"configuration\":{"
     "\"elementsize\":8}},{\"name\":\"numcodecs.fletcher32\"}]}},{\"name\":\"zstd\"}]",
     true, true},
    {3, "\"string\"",
     "[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":@INNER@,\"codecs\":[\"vlen-utf8\","
     "{\"name\":\"zstd\"}]}}]",
     true, false},
    {3, "\"int8\"",
     "[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":@INNER@,\"codecs\":[{\"name\":"
     "\"sharding_indexed\",\"configuration\":{\"chunk_shape\":@INNER@,\"codecs\":[\"bytes\"]}}]}}]",
     true, true},
    {3, "\"bool\"", "[\"bytes\",{\"name\":\"numcodecs.lz4\"}]", true, false},
    {3, "\"complex64\"", "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},{\"name\":\"gzip\"}]",
     true, false},
    {3, "\"float16\"",
     "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},{\"name\":\"blosc\",\"configuration\":{"
     "\"cname\":\"blosclz\",\"clevel\":9,\"shuffle\":\"noshuffle\",\"typesize\":2,\"blocksize\":64}}]",
     true, false},
    {3, "\"int64\"",
     "[\"bytes\",{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":8}},{\"name\":\"zstd\"},"
     "\"crc32c\",{\"name\":\"numcodecs.fletcher32\"}]",
     true, false},
    {2, "\"<i8\"",
     "[[{\"id\":\"delta\",\"dtype\":\"<i8\",\"astype\":\"<i2\"}],{\"id\":\"blosc\",\"cname\":\"lz4\","
     "\"clevel\":5,\"shuffle\":1,\"blocksize\":0},\"C\"]",
     false, false},
    {2, "\"|S5\"", "[null,{\"id\":\"zlib\",\"level\":1},\"C\"]", true, false},
    {2, "\"<U3\"", "[null,{\"id\":\"zstd\",\"level\":1},\"F\"]", true, false},
    {2, "[[\"a\",\"<i4\"],[\"b\",\">f8\"],[\"c\",\"|S3\",[2]]]", "[null,{\"id\":\"gzip\",\"level\":1},\"C\"]",
     true, false},
    {2, "\"|O\"", "[[{\"id\":\"vlen-utf8\"}],{\"id\":\"lz4\",\"acceleration\":1},\"C\"]", true, false},
    {2, "\"<M8[ns]\"", "[[{\"id\":\"shuffle\",\"elementsize\":8}],{\"id\":\"zstd\",\"level\":1},\"F\"]", true,
     false},
    {2, "\">f4\"",
     "[null,{\"id\":\"blosc\",\"cname\":\"zlib\",\"clevel\":1,\"shuffle\":2,\"blocksize\":0},\"C\"]", true,
     false},
    {2, "\"|O\"", "[[{\"id\":\"vlen-bytes\"},{\"id\":\"crc32c\"}],null,\"C\"]", true, false},
    /* hdf5_lz4 (HDF5's lz4 filter framing): several blocks; the default block; the unknown-size decode */
    {3, "\"int32\"", "[\"bytes\",{\"name\":\"hdf5_lz4\",\"configuration\":{\"blocksize\":12}}]", true, false},
    {2, "\"<f8\"", "[null,{\"id\":\"hdf5_lz4\",\"blocksize\":0},\"C\"]", true, false},
    {2, "\"|O\"", "[[{\"id\":\"vlen-bytes\"}],{\"id\":\"hdf5_lz4\",\"blocksize\":7},\"C\"]", true, false},
    /* v3 numcodecs.delta before bytes (zarr-python 3's array->array form), big and little endian */
    {3, "\"int32\"",
     "[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i4\"}},{\"name\":\"bytes\","
     "\"configuration\":{\"endian\":\"big\"}},{\"name\":\"zstd\"}]",
     true, false},
    {3, "\"uint16\"",
     "[{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"uint16\",\"astype\":\"<i2\"}},"
     "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]",
     true, false},
    /* bz2 (numcodecs BZ2, HDF5's bzip2 filter 307), v2 and v3 */
    {2, "\"<i4\"", "[null,{\"id\":\"bz2\",\"level\":1},\"C\"]", true, false},
    {3, "\"float32\"", "[\"bytes\",{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":9}}]", true,
     false}, /* issue 15: the numcodecs codecs beyond the common ones, v2 and v3 */
    {2, "\"<i4\"", "[[{\"id\":\"crc32\"}],null,\"C\"]", true, false},
    {3, "\"uint16\"", "[\"bytes\",{\"name\":\"numcodecs.adler32\"},{\"name\":\"zstd\"}]", true, false},
    {2, "\"<f8\"", "[null,{\"id\":\"lzma\",\"format\":1,\"check\":-1,\"preset\":1,\"filters\":null},\"C\"]",
     true, false},
    {3, "\"int16\"",
     "[\"bytes\",{\"name\":\"numcodecs.lzma\",\"configuration\":{\"format\":2,\"preset\":0}}]", true, false},
    {2, "\">i8\"", "[[{\"id\":\"delta\",\"dtype\":\">i8\"}],{\"id\":\"lzma\",\"preset\":0},\"C\"]", true,
     false},
    {2, "\"<f8\"",
     "[[{\"id\":\"fixedscaleoffset\",\"offset\":1.5,\"scale\":10.0,\"dtype\":\"<f8\",\"astype\":\"|u1\"}],"
     "null,"
     "\"C\"]",
     false, false},
    {3, "\"float32\"",
     "[{\"name\":\"numcodecs.fixedscaleoffset\",\"configuration\":{\"offset\":0,\"scale\":100,\"dtype\":"
     "\"float32\",\"astype\":\"<i2\"}},\"bytes\"]",
     false, false},
    {2, "\"<f4\"",
     "[[{\"id\":\"quantize\",\"digits\":2,\"dtype\":\"<f4\"}],{\"id\":\"zstd\",\"level\":1},\"C\"]", false,
     false},
    {3, "\"float64\"", "[\"bytes\",{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":7}}]",
     false, false},
    {2, "\"<f8\"", "[[{\"id\":\"astype\",\"encode_dtype\":\"<f4\",\"decode_dtype\":\"<f8\"}],null,\"C\"]",
     false, false},
    {2, "\"|b1\"", "[[{\"id\":\"packbits\"}],null,\"C\"]", true, false},
    {2, "\"<U4\"",
     "[[{\"id\":\"categorize\",\"labels\":[\"ab\",\"\\u00e9\",\"wxyz\"],\"dtype\":\"<U4\",\"astype\":\"<u2\"}"
     "],"
     "null,\"C\"]",
     false, false},
    {2, "\"<f8\"", "[null,{\"id\":\"zfpy\",\"mode\":4,\"tolerance\":0.01},\"C\"]", false, false},
    {3, "\"int32\"", "[\"bytes\",{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":5}}]", true, false},
    /* categorize as the object codec of a string array */
    {2, "\"|O\"",
     "[[{\"id\":\"categorize\",\"labels\":[\"a\",\"bc\"],\"dtype\":\"|O\"}],{\"id\":\"zstd\",\"level\":1},"
     "\"C\"]",
     true, false},
    /* lzf (h5zarr's codec: h5py's LZF filter bytes) */
    {2, "\"<i4\"", "[null,{\"id\":\"lzf\"},\"C\"]", true, false},
    {3, "\"float32\"", "[\"bytes\",\"lzf\"]", true, false},
    /* hdf5_zfp (H5Z-ZFP's chunks; cd_values hold zfp's header for a 4 x 4 chunk, made with
     * zarr_h5zfp_cd_from_generic: reversible float64, fixed-rate 8 int32), so fuzzed on that shape alone */
    {2, "\"<f8\"",
     "[null,{\"id\":\"hdf5_zfp\",\"cd_values\":[268456208,91252346,805306423,2281701376]},\"C\"]", true,
     false, 2},
    {2, "\"<i4\"",
     "[null,{\"id\":\"hdf5_zfp\",\"cd_values\":[268456208,91252346,805306420,133169152]},\"C\"]", false,
     false, 2}, /* hdf5_szip (HDF5's szip filter framing): 32-bit pixels (split into bytes), 16-bit MSB pixels
                 * with 4-pixel blocks and a scanline of 1.5 blocks, 64-bit pixels, the unknown-size decode */
    {3, "\"int32\"",
     "[\"bytes\",{\"name\":\"hdf5_szip\",\"configuration\":{\"options_mask\":169,\"pixels_per_block\":8,"
     "\"bits_per_pixel\":32,\"pixels_per_scanline\":16}}]",
     true, false},
    {2, "\">u2\"",
     "[null,{\"id\":\"hdf5_szip\",\"options_mask\":149,\"pixels_per_block\":4,\"bits_per_pixel\":16,"
     "\"pixels_per_scanline\":6},\"C\"]",
     true, false},
    {2, "\"<f8\"",
     "[null,{\"id\":\"hdf5_szip\",\"options_mask\":141,\"pixels_per_block\":16,\"bits_per_pixel\":64,"
     "\"pixels_per_scanline\":32},\"C\"]",
     true, false},
    {2, "\"|O\"",
     "[[{\"id\":\"vlen-bytes\"}],{\"id\":\"hdf5_szip\",\"options_mask\":169,\"pixels_per_block\":32,"
     "\"bits_per_pixel\":8,\"pixels_per_scanline\":1024},\"C\"]",
     true, false}, /* hdf5_scaleoffset (HDF5's scale-offset format; cd_values fix the chunk's 16 or 64
                    * elements): int16 big-endian with a fill value, uint8 without one before zlib (v2),
                    * float32 D=2, float64 big-endian D=-1 without a fill value, int64 with 12 given bits */
    {3, "\"int16\"",
     "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}},{\"name\":\"hdf5_scaleoffset\","
     "\"configuration\":{\"cd_values\":[2,0,16,0,2,1,1,1,65529,0,0,0,0,0,0,0,0,0,0,0]}}]",
     true, false, 1},
    {2, "\"|u1\"",
     "[[{\"id\":\"hdf5_scaleoffset\",\"cd_values\":[2,0,64,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}],{\"id\":"
     "\"zlib\",\"level\":1},\"C\"]",
     true, false, 8},
    {3, "\"float32\"",
     "[\"bytes\",{\"name\":\"hdf5_scaleoffset\",\"configuration\":{\"cd_values\":[0,2,16,1,4,0,0,1,0,0,0,0,0,"
     "0,0,0,0,0,0,0]}}]",
     false, false, 1},
    {2, "\">f8\"",
     "[[{\"id\":\"hdf5_scaleoffset\",\"cd_values\":[0,4294967295,64,1,8,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0]}],"
     "null,\"C\"]",
     false, false, 8},
    {3, "\"int64\"",
     "[\"bytes\",{\"name\":\"hdf5_scaleoffset\",\"configuration\":{\"cd_values\":[2,12,16,0,8,1,0,1,0,0,0,0,"
     "0,0,0,0,0,0,0,0]}}]",
     false, false, 1},
};
#define NTABLE (sizeof table / sizeof table[0])

static const struct {
    int      ndim;
    uint64_t shape[3];
} shapes[] = {{1, {16}}, {2, {4, 4}}, {3, {2, 4, 6}}, {1, {1}}, {1, {0}}, {2, {8, 2}}, {1, {3}}, {1, {64}}};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

/* Built chains, cached per (entry, shape): building is the slow part and not what is fuzzed here. */
static struct built {
    bool        tried;
    zarr_chain *chain;
    zarr_dtype *dtype;
} cache[NTABLE][NSHAPES];

static zarr_chain *
get_chain(size_t e, size_t s, zarr_dtype **dt)
{
    struct built *b = &cache[e][s];
    if (!b->tried) {
        const entry        *en = &table[e];
        char                inner[128], text[2048];
        struct json_object *dj = NULL, *cj = NULL;
        int                 pos = snprintf(inner, sizeof inner, "[");
        const char         *p;
        size_t              o = 0;

        b->tried = true;
        for (int d = 0; d < shapes[s].ndim; d++) {
            uint64_t x = shapes[s].shape[d];
            pos += snprintf(inner + pos, sizeof inner - (size_t)pos, "%s%llu", d ? "," : "",
                            (unsigned long long)(x % 2 == 0 && x ? x / 2 : (x ? x : 1)));
        }
        snprintf(inner + pos, sizeof inner - (size_t)pos, "]");
        for (p = en->codecs; *p && o + 128 < sizeof text;) {
            if (strncmp(p, "@INNER@", 7) == 0) {
                o += (size_t)snprintf(text + o, sizeof text - o, "%s", inner);
                p += 7;
            }
            else
                text[o++] = *p++;
        }
        text[o] = '\0';
        FUZZ_CHECK((dj = json_tokener_parse(en->dtype)) && (cj = json_tokener_parse(text)),
                   "bad table entry %zu", e);
        if (en->fmt == 3) {
            FUZZ_CHECK(zarr_dtype_from_v3_json(dj, &b->dtype) == ZARR_OK, "entry %zu: dtype", e);
            if (zarr_chain_from_v3_json(cj, b->dtype, shapes[s].ndim, &b->chain) != ZARR_OK)
                b->chain = NULL;
        }
        else {
            FUZZ_CHECK(zarr_dtype_from_v2_json(dj, &b->dtype) == ZARR_OK, "entry %zu: dtype", e);
            if (strcmp(en->dtype, "\"|O\"") == 0) {
                /* v2 "|O": the object codec in the filters decides strings or bytes (vlen-bytes: bytes;
                 * vlen-utf8 and categorize: strings) */
                struct json_object *f0 = json_object_array_get_idx(json_object_array_get_idx(cj, 0), 0);
                struct json_object *id = NULL;
                FUZZ_CHECK(json_object_object_get_ex(f0, "id", &id), "entry %zu: no object codec", e);
                zarr_dtype_free(b->dtype);
                b->dtype = zarr_dtype_new(
                    strcmp(json_object_get_string(id), "vlen-bytes") == 0 ? ZARR_VLEN_BYTES : ZARR_VLEN_UTF8,
                    0);
            }
            if (zarr_chain_from_v2_json(json_object_array_get_idx(cj, 0), json_object_array_get_idx(cj, 1),
                                        json_object_get_string(json_object_array_get_idx(cj, 2))[0], b->dtype,
                                        shapes[s].ndim, &b->chain) != ZARR_OK)
                b->chain = NULL;
        }
        if (b->chain && en->fill && !zarr_dtype_has_vlen(b->dtype)) {
            uint8_t *fill = malloc(b->dtype->size);
            FUZZ_CHECK(fill != NULL, "out of memory");
            memset(fill, 0xA5, b->dtype->size);
            FUZZ_CHECK(zarr__chain_set_fill(b->chain, fill) == ZARR_OK, "entry %zu: set fill", e);
            free(fill);
        }
        json_object_put(dj);
        json_object_put(cj);
        zarr_error_clear();
    }
    *dt = b->dtype;
    return b->chain;
}

static size_t
nelem_of(size_t s)
{
    size_t n = 1;
    for (int d = 0; d < shapes[s].ndim; d++)
        n *= (size_t)shapes[s].shape[d];
    return n;
}

static bool
same_elems(const zarr_dtype *t, const uint8_t *a, const uint8_t *b, size_t n)
{
    if (t->kind == ZARR_VLEN_UTF8) {
        for (size_t i = 0; i < n; i++) {
            const char *x, *y;
            memcpy(&x, a + i * sizeof x, sizeof x);
            memcpy(&y, b + i * sizeof y, sizeof y);
            if (strcmp(x ? x : "", y ? y : "") != 0)
                return false;
        }
        return true;
    }
    if (t->kind == ZARR_VLEN_BYTES) {
        for (size_t i = 0; i < n; i++) {
            zarr_vlen x, y;
            memcpy(&x, a + i * sizeof x, sizeof x);
            memcpy(&y, b + i * sizeof y, sizeof y);
            if (x.len != y.len || (x.len && memcmp(x.p, y.p, x.len) != 0))
                return false;
        }
        return true;
    }
    return memcmp(a, b, n * t->size) == 0;
}

static zarr_codec_ctx *ctx;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    zarr_dtype *t;
    zarr_chain *c;
    size_t      e, s, nelem, nbytes;
    uint8_t    *m1 = NULL, *m2 = NULL;
    zarr_buf    enc = ZARR_BUF_INIT;
    int         rc;

    if (size < 2 || size > FUZZ_MAX_INPUT * 4)
        return 0;
    if (!ctx && !(ctx = zarr_codec_ctx_new()))
        return 0;
    e = data[0] % NTABLE;
    s = table[e].only ? (size_t)table[e].only - 1 : data[1] % NSHAPES;
    if (!(c = get_chain(e, s, &t)))
        return 0;
    nelem  = nelem_of(s);
    nbytes = nelem * t->size;
    m1     = malloc(nbytes ? nbytes : 1);
    m2     = malloc(nbytes ? nbytes : 1);
    if (!m1 || !m2)
        goto done;
    memset(m1, 0x5A, nbytes);
    /* an exact-size copy of the chunk bytes so ASan sees any over-read */
    {
        size_t   n   = size - 2;
        uint8_t *cpy = malloc(n ? n : 1);
        if (!cpy)
            goto done;
        memcpy(cpy, data + 2, n);
        rc = zarr_chain_decode(c, ctx, n ? cpy : NULL, n, m1, shapes[s].shape);
        free(cpy);
    }
    if (rc != ZARR_OK) {
        FUZZ_CHECK(zarr_errmsg()[0] != '\0', "decode failed (%d) without a message", rc);
        if (zarr_dtype_has_vlen(t))
            for (size_t i = 0; i < nbytes; i++)
                FUZZ_CHECK(m1[i] == 0, "a failed vlen decode left element bytes behind");
        goto done;
    }
    rc = zarr_chain_encode(c, ctx, m1, shapes[s].shape, &enc);
    FUZZ_CHECK(rc == ZARR_OK, "entry %zu shape %zu: a decoded chunk does not encode", e, s);
    rc = zarr_chain_decode(c, ctx, enc.data, enc.size, m2, shapes[s].shape);
    FUZZ_CHECK(rc == ZARR_OK, "entry %zu shape %zu: the chain does not decode its own output", e, s);
    if (table[e].exact)
        FUZZ_CHECK(same_elems(t, m1, m2, nelem), "entry %zu shape %zu: decode(encode(x)) != x", e, s);
    zarr_dtype_clear_elems(t, m2, nelem);
    zarr_dtype_clear_elems(t, m1, nelem);
done:
    zarr_buf_free(&enc);
    free(m1);
    free(m2);
    zarr_error_clear();
    return 0;
}

/* Pattern elements for seed chunks. */
static void
pattern(const zarr_dtype *t, uint8_t *m, size_t nelem, char **strs)
{
    if (t->kind == ZARR_VLEN_UTF8) {
        for (size_t i = 0; i < nelem; i++) {
            char buf[32];
            snprintf(buf, sizeof buf, i % 5 == 4 ? "" : "s%zu-é", i * 7);
            strs[i] = strdup(buf);
            memcpy(m + i * sizeof(char *), &strs[i], sizeof(char *));
        }
    }
    else if (t->kind == ZARR_VLEN_BYTES) {
        for (size_t i = 0; i < nelem; i++) {
            zarr_vlen v = {i % 4, NULL};
            strs[i]     = malloc(4);
            memcpy(strs[i], "\x01\x00\xff\x7f", 4);
            v.p = v.len ? strs[i] : NULL;
            memcpy(m + i * sizeof v, &v, sizeof v);
        }
    }
    else
        for (size_t i = 0; i < nelem * t->size; i++)
            m[i] = (uint8_t)(i % 7 == 0 ? 0 : i * 13 / 3);
}

int fuzz_gen_seeds(const char *dir);

int
fuzz_gen_seeds(const char *dir)
{
    static const size_t seed_shapes[] = {0, 1, 2, 4};
    int                 nfail         = 0;
    char                cmd[4200];

    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    for (size_t e = 0; e < NTABLE; e++)
        for (size_t k = 0; k < sizeof seed_shapes / sizeof seed_shapes[0]; k++) {
            size_t      s = seed_shapes[k], nelem = nelem_of(s);
            zarr_dtype *t;
            zarr_chain *c;

            if (table[e].only && s != (size_t)table[e].only - 1)
                continue;
            c            = get_chain(e, s, &t);
            zarr_buf enc = ZARR_BUF_INIT;
            uint8_t *m;
            char   **strs;
            char     path[4200];
            FILE    *f;

            if (!c) {
                if (s == 0) { /* every entry must build for the 1-d shape */
                    fprintf(stderr, "fuzz_gen_seeds: entry %zu does not build: %s\n", e, zarr_errmsg());
                    nfail++;
                }
                continue;
            }
            m    = calloc(nelem ? nelem : 1, t->size);
            strs = calloc(nelem ? nelem : 1, sizeof *strs);
            if (!m || !strs)
                return 1;
            pattern(t, m, nelem, strs);
            if (zarr_chain_encode(c, NULL, m, shapes[s].shape, &enc) != ZARR_OK) {
                fprintf(stderr, "fuzz_gen_seeds: entry %zu shape %zu does not encode: %s\n", e, s,
                        zarr_errmsg());
                nfail++;
            }
            else {
                snprintf(path, sizeof path, "%s/gen-%02zu-%zu", dir, e, s);
                if (!(f = fopen(path, "wb")))
                    return 1;
                fputc((int)e, f);
                fputc((int)s, f);
                if (enc.size)
                    fwrite(enc.data, 1, enc.size, f);
                fclose(f);
            }
            for (size_t i = 0; i < nelem; i++)
                free(strs[i]);
            free(strs);
            free(m);
            zarr_buf_free(&enc);
        }
    return nfail ? 1 : 0;
}
