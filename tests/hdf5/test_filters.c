/*
 * test_filters.c: the H5Z filter plugins (filters/) and the filter <-> codec mapping of the connector
 * (vol/filter.c).
 *
 *  - plugins_native: blosc, zstd and lz4 round-trip compressible and incompressible chunks in plain
 *    native HDF5 files; set_local fills the cd_values readers rely on.
 *  - golden_h5z: the numcodecs golden vectors (blosc, zstd, zlib, shuffle; the shared ones, else ones
 *    generated with Debian's numcodecs, tests/testdata.h) written raw with H5Dwrite_chunk into native
 *    datasets carrying the HDF5 filter decode through H5Dread, and through the core's chain, to the
 *    vectors' arrays.
 *  - dcpl_roundtrip: for every supported combination, v2 and v3 stores: the reopened dataset reports
 *    what a native file with the same dcpl reports (H5Pget_filter2), the data reads back, every stored
 *    chunk is byte-identical to the native file's raw chunk (H5Dread_chunk) -- with deflate, whose
 *    streams the core writes with libdeflate and HDF5 with zlib, the chunks move between the two
 *    instead (each side's raw chunks read back through the other) --, and zarrita (v3) and
 *    zarr-python 2.13 (v2) read the same values; arrays with hdf5_lz4 (lz4, 32004) they refuse with
 *    an unknown-codec error instead.
 *  - lz4_cd_values: lz4's cd_values after reopen: all of them ({1,2,3}, as HDF5's API test sets) from
 *    the persisted dcpl while its block size is the codec's, {blocksize} once the codec says otherwise.
 *  - szip: szip (4) -> hdf5_szip for int8/16/32, 12-bit, float32/64, both byte orders and the
 *    scanline rules: H5Pget_filter2 reports native HDF5's set_local values (computed by the connector),
 *    the data reads back, raw chunks equal native ones (H5Dread_chunk from both) and, where native
 *    HDF5 skipped the optional filter on noise, the connector's chunks decode in a native file; a type
 *    szip can't take and a block larger than a chunk are refused at create.
 *  - scaleoffset: scale-offset (6) -> hdf5_scaleoffset for signed/unsigned integers of 1, 2, 4 and 8
 *    bytes (minimum bits computed or given, lossy, the full width), floats and doubles with D-scale
 *    (negative too), both byte orders, default, user and undefined fill values, all-equal chunks:
 *    H5Pget_filter2 reports native HDF5's set_local values, the data reads back as native HDF5 reads it
 *    (lossy values included), raw chunks equal native ones and decode in a native file; chunks at the
 *    full width (written by HDF5 1.14.5, which refuses to read them back) decode through the connector;
 *    a type, scale type or minimum bits HDF5 can't use is refused at create.
 *  - unsupported: nbit (optional, but HDF5 applies it), bitshuffle and an unknown filter (mandatory) fail
 *    at H5Dcreate with a message naming the filter and an alternative, and leave no array behind; the
 *    H5ZARR_UNSUPPORTED_FILTER switch substitutes zstd.
 *  - left_out: an optional filter neither zarr nor HDF5 can apply (h5py's allow_unknown_filter) is left
 *    out as HDF5 leaves it out: v2 and v3, alone and between shuffle and deflate, the dcpl reports what
 *    a native file with the same dcpl reports (flags, cd_values, place), on the new dataset and after
 *    reopen; the data reads back; the zarr metadata has no codec for it (the chunks of the lone one are
 *    the native file's raw chunks, which HDF5 stored with the filter skipped); zarr-python and zarrita
 *    read the values; a record that makes it mandatory is refused naming the field.
 *  - open_foreign: stores written by others' codec lists (gzip, crc32c, numcodecs.lz4, hdf5_lz4) report
 *    the equivalent filters or none, and read.
 */
#include "runner.h"
#include "testdata.h"

#include <hdf5.h>
#include <json-c/json.h>
#include <stdint.h>
#include <sys/stat.h>

#include "h5zarr/h5zarr.h"
#include "h5test.h"
#include "kernels.h"

#define F_BLOSC      32001
#define F_ZSTD       32015
#define F_LZ4        32004
#define F_BITSHUFFLE 32008

/* The plugins must come from our folder: fail loudly if HDF5_PLUGIN_PATH is not set. */
static int
need_plugins(void)
{
    if (!getenv("HDF5_PLUGIN_PATH")) {
        printf("  HDF5_PLUGIN_PATH is not set (run through ctest)\n");
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * Plugins in native files
 * ------------------------------------------------------------------------------------------------ */
static int
native_roundtrip(const char *path, H5Z_filter_t id, size_t ncd, const unsigned *cd, bool random,
                 size_t *stored)
{
    enum { N = 5000, C = 1000 };
    hsize_t  dims[1] = {N}, chunk[1] = {C};
    int32_t *w = malloc(N * sizeof *w), *r = malloc(N * sizeof *r);
    uint32_t x = 12345;
    hid_t    f, s, p, d;
    int      ret = 1;
    if (!w || !r)
        goto out;
    for (int i = 0; i < N; i++) {
        x    = x * 1103515245u + 12345u;
        w[i] = random ? (int32_t)(x ^ (x >> 13) * 2654435761u) : i / 7;
    }
    f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    s = H5Screate_simple(1, dims, NULL);
    p = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(p, 1, chunk);
    if (H5Pset_filter(p, id, H5Z_FLAG_MANDATORY, ncd, cd) < 0)
        goto out;
    if ((d = H5Dcreate2(f, "d", H5T_STD_I32LE, s, H5P_DEFAULT, p, H5P_DEFAULT)) < 0)
        goto out;
    if (H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) < 0)
        goto out;
    *stored = (size_t)H5Dget_storage_size(d);
    H5Dclose(d);
    H5Pclose(p);
    H5Sclose(s);
    H5Fclose(f);
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    d = H5Dopen2(f, "d", H5P_DEFAULT);
    memset(r, 0, N * sizeof *r);
    if (H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) < 0)
        goto out;
    H5Dclose(d);
    H5Fclose(f);
    ret = memcmp(w, r, N * sizeof *r) != 0;
out:
    free(w);
    free(r);
    return ret;
}

static int
test_plugins_native(void)
{
    const char *dir = test_tmpdir("fnative");
    char        path[4096];
    size_t      stored = 0;
    if (need_plugins())
        return 1;
    ASSERT(dir);
    snprintf(path, sizeof path, "%s/n.h5", dir);
    ASSERT(H5Zfilter_avail(F_BLOSC) > 0 && H5Zfilter_avail(F_ZSTD) > 0 && H5Zfilter_avail(F_LZ4) > 0);
    struct {
        H5Z_filter_t id;
        size_t       ncd;
        unsigned     cd[7];
    } cases[] = {
        {F_BLOSC, 7, {0, 0, 0, 0, 5, 1, 1}},
        {F_BLOSC, 7, {0, 0, 0, 0, 9, 2, 5}},
        {F_BLOSC, 7, {0, 0, 0, 0, 1, 0, 4}},
        {F_BLOSC, 7, {0, 0, 0, 0, 5, 1, 0}},
        {F_BLOSC, 0, {0}},
        {F_ZSTD, 1, {3}},
        {F_ZSTD, 1, {4294967295u}},
        {F_ZSTD, 1, {22}},
        {F_ZSTD, 0, {0}},
        {F_LZ4, 0, {0}},
        {F_LZ4, 1, {1024}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* compressible data shrinks */
        if (native_roundtrip(path, cases[i].id, cases[i].ncd, cases[i].cd, false, &stored) != 0)
            FAILF("filter %d case %zu: compressible round trip failed", (int)cases[i].id, i);
        if (stored >= 5000 * 4 / 2)
            FAILF("filter %d case %zu: stored %zu bytes for 20000 compressible bytes", (int)cases[i].id, i,
                  stored);
        /* incompressible data is stored (slightly larger) and reads back */
        if (native_roundtrip(path, cases[i].id, cases[i].ncd, cases[i].cd, true, &stored) != 0)
            FAILF("filter %d case %zu: incompressible round trip failed", (int)cases[i].id, i);
        ASSERT(stored >= 5000 * 4);
    }
    /* set_local: blosc fills [0..3] (revision 2, format 2, type size, chunk bytes), zstd records level 3 */
    {
        hsize_t  dims[1] = {100}, chunk[1] = {10};
        unsigned cd[8] = {0, 0, 0, 0, 7, 1, 5}, flags;
        size_t   n     = 8;
        hid_t    f     = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
              s        = H5Screate_simple(1, dims, NULL);
        hid_t p        = H5Pcreate(H5P_DATASET_CREATE), d, q;
        H5Pset_chunk(p, 1, chunk);
        H5Pset_filter(p, F_BLOSC, H5Z_FLAG_OPTIONAL, 7, cd);
        H5Pset_filter(p, F_ZSTD, H5Z_FLAG_OPTIONAL, 0, NULL);
        ASSERT((d = H5Dcreate2(f, "d", H5T_IEEE_F64LE, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
        q = H5Dget_create_plist(d);
        ASSERT(H5Pget_filter2(q, 0, &flags, &n, cd, 0, NULL, NULL) == F_BLOSC);
        ASSERT_EQ_INT(n, 7);
        ASSERT(cd[0] == 2 && cd[1] == 2 && cd[2] == 8 && cd[3] == 80 && cd[4] == 7 && cd[5] == 1 &&
               cd[6] == 5);
        n = 8;
        ASSERT(H5Pget_filter2(q, 1, &flags, &n, cd, 0, NULL, NULL) == F_ZSTD);
        ASSERT(n == 1 && cd[0] == 3);
        H5Pclose(q);
        H5Dclose(d);
        H5Pclose(p);
        H5Sclose(s);
        H5Fclose(f);
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * numcodecs golden vectors through the H5Z path
 * ------------------------------------------------------------------------------------------------ */
/* The data section of a .npy v1.0 file (malloc'ed whole file in *file). */
static const uint8_t *
npy_data(const char *path, uint8_t **file, size_t *nbytes)
{
    size_t n = 0, hlen;
    if (!(*file = test_slurp(path, &n)) || n < 10 || memcmp(*file, "\x93NUMPY", 6) != 0 || (*file)[6] != 1)
        return NULL;
    hlen = (size_t)(*file)[8] | (size_t)(*file)[9] << 8;
    if (10 + hlen > n)
        return NULL;
    *nbytes = n - 10 - hlen;
    return *file + 10 + hlen;
}

/* Decodes the golden vectors under <data>/numcodecs/<codec>; *ncases counts them. */
static int
golden_codec(const char *data, const char *codec, int *ncases)
{
    char            path[8192], h5[4096];
    const char     *dir = test_tmpdir("fgolden");
    zarr_codec_ctx *ctx = zarr_codec_ctx_new();
    ASSERT(dir && ctx);
    snprintf(h5, sizeof h5, "%s/g.h5", dir);
    for (int m = 0; m < 20; m++) {
        snprintf(path, sizeof path, "%s/numcodecs/%s/codec.%02d/config.json", data, codec, m);
        struct json_object *cfg = json_object_from_file(path), *v;
        if (!cfg)
            continue;
        const char *cname = json_object_object_get_ex(cfg, "cname", &v) ? json_object_get_string(v) : NULL;
        size_t      esize =
            json_object_object_get_ex(cfg, "elementsize", &v) ? (size_t)json_object_get_int64(v) : 1;
        if (esize == 0)
            esize = 1;
        for (int a = 0; a < 20; a++) {
            uint8_t       *enc, *file = NULL, *out;
            size_t         encn = 0, nbytes = 0;
            const uint8_t *want;
            snprintf(path, sizeof path, "%s/numcodecs/%s/codec.%02d/encoded.%02d.dat", data, codec, m, a);
            if (!(enc = test_slurp(path, &encn)))
                continue;
            if (cname && !zarr_blosc_has_compressor(cname)) {
                printf("  skip %s codec.%02d encoded.%02d: this c-blosc lacks '%s'\n", codec, m, a, cname);
                free(enc);
                continue;
            }
            snprintf(path, sizeof path, "%s/numcodecs/%s/array.%02d.npy", data, codec, a);
            if (!(want = npy_data(path, &file, &nbytes)))
                FAILF("can't read %s", path);
            ASSERT(nbytes % esize == 0 && (out = malloc(nbytes + 1)));

            /* the H5Z path: raw chunk in, H5Dread out */
            hsize_t dims[1] = {nbytes / esize}, off[1] = {0};
            hid_t   f      = H5Fcreate(h5, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                  s        = H5Screate_simple(1, dims, NULL);
            hid_t p        = H5Pcreate(H5P_DATASET_CREATE),
                  t        = esize == 1 ? H5Tcopy(H5T_NATIVE_UCHAR) : H5Tcreate(H5T_OPAQUE, esize), d;
            unsigned cd[7] = {0, 0, 0, 0, 5, 1, 0};
            H5Pset_chunk(p, 1, dims);
            if (strcmp(codec, "blosc") == 0)
                H5Pset_filter(p, F_BLOSC, H5Z_FLAG_MANDATORY, 7, cd);
            else if (strcmp(codec, "zstd") == 0)
                H5Pset_filter(p, F_ZSTD, H5Z_FLAG_MANDATORY, 0, NULL);
            else if (strcmp(codec, "zlib") == 0)
                H5Pset_deflate(p, 1);
            else
                H5Pset_shuffle(p);
            ASSERT((d = H5Dcreate2(f, "g", t, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
            ASSERT(H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, encn, enc) >= 0);
            memset(out, 0xA5, nbytes);
            if (H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
                FAILF("%s codec.%02d encoded.%02d: H5Dread through the filter failed", codec, m, a);
            if (memcmp(out, want, nbytes) != 0)
                FAILF("%s codec.%02d encoded.%02d: the H5Z path decoded other values", codec, m, a);
            H5Dclose(d);
            H5Tclose(t);
            H5Pclose(p);
            H5Sclose(s);
            H5Fclose(f);

            /* the core's chain, from the same numcodecs configuration */
            {
                zarr_dtype *u8 = zarr_dtype_new(ZARR_UINT, 1);
                zarr_chain *c  = NULL;
                uint64_t    ne = nbytes;
                ASSERT(u8);
                ASSERT_OK(zarr_chain_from_v2_json(NULL, strcmp(codec, "shuffle") == 0 ? NULL : cfg, 'C', u8,
                                                  1, &c));
                if (strcmp(codec, "shuffle") == 0) {
                    zarr_chain_free(c);
                    struct json_object *fl = json_object_new_array();
                    json_object_array_add(fl, json_object_get(cfg));
                    ASSERT_OK(zarr_chain_from_v2_json(fl, NULL, 'C', u8, 1, &c));
                    json_object_put(fl);
                }
                memset(out, 0x5A, nbytes);
                ASSERT_OK(zarr_chain_decode(c, ctx, enc, encn, out, &ne));
                if (memcmp(out, want, nbytes) != 0)
                    FAILF("%s codec.%02d encoded.%02d: the core decoded other values", codec, m, a);
                zarr_chain_free(c);
                zarr_dtype_free(u8);
            }
            (*ncases)++;
            free(out);
            free(file);
            free(enc);
        }
        json_object_put(cfg);
    }
    zarr_codec_ctx_free(ctx);
    printf("  %s: %d golden vectors decoded by the H5Z filter and the core\n", codec, *ncases);
    return 0;
}

static int
test_golden_h5z(void)
{
    int         n, rc;
    const char *data;
    bool        gen;
    if (need_plugins())
        return 1;
    if ((rc = test_data_dir("numcodecs", &data, &gen)) != 0)
        return rc;
    /* case counts: configs x 13 arrays present (MANIFEST.md); blosc's snappy config may be skipped; the
     * generated set (tests/data-gen) lacks zstd codec.07/08 (checksum: true, not in numcodecs 0.11) */
    n = 0;
    ASSERT(golden_codec(data, "blosc", &n) == 0 && n >= 8 * 13);
    n = 0;
    ASSERT(golden_codec(data, "zstd", &n) == 0 && n == (gen ? 5 : 7) * 13);
    n = 0;
    ASSERT(golden_codec(data, "zlib", &n) == 0 && n == 4 * 13);
    n = 0;
    ASSERT(golden_codec(data, "shuffle", &n) == 0 && n == 3 * 13);
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * dcpl round trip through the connector, byte identity, independent readers
 * ------------------------------------------------------------------------------------------------ */
#define RT_D0 40
#define RT_D1 30
#define RT_C0 16
#define RT_C1 16

typedef struct filt {
    H5Z_filter_t id;
    unsigned     flags;
    size_t       ncd;
    unsigned     cd[7];
} filt;

typedef struct combo {
    const char *name;
    int         n;
    filt        f[3];
} combo;

#define DEFL(l)                                                                                              \
    {                                                                                                        \
        H5Z_FILTER_DEFLATE, H5Z_FLAG_OPTIONAL, 1, { l }                                                      \
    }
#define SHUF                                                                                                 \
    {                                                                                                        \
        H5Z_FILTER_SHUFFLE, H5Z_FLAG_OPTIONAL, 0, { 0 }                                                      \
    }
#define F32                                                                                                  \
    {                                                                                                        \
        H5Z_FILTER_FLETCHER32, H5Z_FLAG_MANDATORY, 0, { 0 }                                                  \
    }
#define ZSTD(l)                                                                                              \
    {                                                                                                        \
        F_ZSTD, H5Z_FLAG_MANDATORY, 1, { (unsigned)(l) }                                                     \
    }
#define BLOSC(clevel, sh, code)                                                                              \
    {                                                                                                        \
        F_BLOSC, H5Z_FLAG_MANDATORY, 7, { 0, 0, 0, 0, clevel, sh, code }                                     \
    }
#define SZIP(mask, ppb)                                                                                      \
    {                                                                                                        \
        H5Z_FILTER_SZIP, H5Z_FLAG_OPTIONAL, 2, { mask, ppb }                                                 \
    }
#define SOFF(minbits)                                                                                        \
    {                                                                                                        \
        H5Z_FILTER_SCALEOFFSET, H5Z_FLAG_OPTIONAL, 2, { H5Z_SO_INT, minbits }                                \
    }
#define LZ4(flags, ncd, ...)                                                                                 \
    {                                                                                                        \
        F_LZ4, flags, ncd, { __VA_ARGS__ }                                                                   \
    }

static const combo combos[] = {
    {"deflate", 1, {DEFL(6)}},
    {"shuffle_deflate", 2, {SHUF, DEFL(1)}},
    {"fletcher32", 1, {F32}},
    {"shuffle_deflate_fletcher32", 3, {SHUF, DEFL(9), F32}},
    {"shuffle", 1, {SHUF}},
    {"zstd", 1, {ZSTD(3)}},
    {"zstd_neg", 1, {ZSTD(-1)}},
    {"zstd_22", 1, {ZSTD(22)}},
    {"shuffle_zstd", 2, {SHUF, ZSTD(1)}},
    {"zstd_fletcher32", 2, {ZSTD(5), F32}},
    {"blosc_lz4", 1, {BLOSC(5, 1, 1)}},
    {"blosc_zstd_bit", 1, {BLOSC(9, 2, 5)}},
    {"blosc_zlib_noshuffle", 1, {BLOSC(1, 0, 4)}},
    {"blosc_blosclz", 1, {BLOSC(5, 1, 0)}},
    {"blosc_lz4hc", 1, {BLOSC(3, 1, 2)}},
    {"shuffle_blosc", 2, {SHUF, BLOSC(5, 0, 1)}},
    /* lz4 (32004) -> hdf5_lz4: chunks of 16x16 int32 = 1 KiB */
    {"lz4", 1, {LZ4(H5Z_FLAG_MANDATORY, 0, 0)}},                /* no cd_values: default block */
    {"lz4_block0", 1, {LZ4(H5Z_FLAG_MANDATORY, 1, 0)}},         /* 0: default block */
    {"lz4_blocks", 1, {LZ4(H5Z_FLAG_MANDATORY, 1, 100)}},       /* 11 blocks, the last of 24 bytes */
    {"lz4_raw_blocks", 1, {LZ4(H5Z_FLAG_MANDATORY, 1, 16)}},    /* 16-byte blocks don't shrink: raw */
    {"lz4_3cd", 1, {LZ4(H5Z_FLAG_OPTIONAL, 3, 256, 7, 9)}},     /* cd_values [1], [2] kept, flag kept */
    {"lz4_api_test", 1, {LZ4(H5Z_FLAG_MANDATORY, 3, 1, 2, 3)}}, /* HDF5's API test: 1-byte blocks */
    {"shuffle_lz4_fletcher32", 3, {SHUF, LZ4(H5Z_FLAG_MANDATORY, 1, 64), F32}},
    /* szip (4) -> hdf5_szip: set_local's values computed by the connector (H5Pset_szip's 2 given) */
    {"szip_nn", 1, {SZIP(H5_SZIP_NN_OPTION_MASK, 8)}},
    {"szip_ec_32", 1, {SZIP(H5_SZIP_EC_OPTION_MASK, 32)}},
    {"shuffle_szip_fletcher32", 3, {SHUF, SZIP(H5_SZIP_NN_OPTION_MASK, 16), F32}},
    /* scaleoffset (6) -> hdf5_scaleoffset (computed bits: lossless), before and after byte filters */
    {"scaleoffset", 1, {SOFF(0)}},
    {"scaleoffset_deflate_fletcher32", 3, {SOFF(0), DEFL(6), F32}},
    {"shuffle_scaleoffset_zstd", 3, {SHUF, SOFF(0), ZSTD(3)}},
};

/* Whether the combination's pipeline has the filter `id`. */
static bool
combo_has(const combo *c, H5Z_filter_t id)
{
    for (int k = 0; k < c->n; k++)
        if (c->f[k].id == id)
            return true;
    return false;
}

static int32_t
rt_value(int i, int j)
{
    return (int32_t)(i * 1000 + j * 3 - 777);
}

static hid_t
combo_dcpl(const combo *c)
{
    hsize_t chunk[2] = {RT_C0, RT_C1};
    hid_t   p        = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(p, 2, chunk);
    for (int k = 0; k < c->n; k++)
        if (H5Pset_filter(p, c->f[k].id, c->f[k].flags, c->f[k].ncd, c->f[k].cd) < 0) {
            H5Pclose(p);
            return H5I_INVALID_HID;
        }
    return p;
}

/* Writes the test array with `dcpl` to file `f` as `name`. */
static int
write_array(hid_t f, const char *name, hid_t dcpl)
{
    static int32_t w[RT_D0][RT_D1];
    hsize_t        dims[2] = {RT_D0, RT_D1};
    hid_t          s       = H5Screate_simple(2, dims, NULL), d;
    int            ret     = -1;
    for (int i = 0; i < RT_D0; i++)
        for (int j = 0; j < RT_D1; j++)
            w[i][j] = rt_value(i, j);
    if ((d = H5Dcreate2(f, name, H5T_STD_I32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0) {
        ret = H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) < 0 ? -1 : 0;
        H5Dclose(d);
    }
    H5Sclose(s);
    return ret;
}

static int
compare_filters(const char *what, hid_t native, hid_t ours)
{
    int n = H5Pget_nfilters(native);
    if (n != H5Pget_nfilters(ours))
        FAILF("%s: native reports %d filters, the connector %d", what, n, H5Pget_nfilters(ours));
    for (int k = 0; k < n; k++) {
        unsigned     fa, fb, ca[32] = {0}, cb[32] = {0};
        size_t       na = 32, nb = 32;
        char         sa[64] = "", sb[64] = "";
        H5Z_filter_t a = H5Pget_filter2(native, (unsigned)k, &fa, &na, ca, sizeof sa, sa, NULL);
        H5Z_filter_t b = H5Pget_filter2(ours, (unsigned)k, &fb, &nb, cb, sizeof sb, sb, NULL);
        if (a != b || fa != fb || na != nb || na > 32 || memcmp(ca, cb, na * sizeof ca[0]) != 0 ||
            strcmp(sa, sb) != 0) {
            fprintf(stderr, "  native: id %d flags %u name '%s' cd[%zu] =", (int)a, fa, sa, na);
            for (size_t i = 0; i < na && i < 32; i++)
                fprintf(stderr, " %u", ca[i]);
            fprintf(stderr, "\n  ours:   id %d flags %u name '%s' cd[%zu] =", (int)b, fb, sb, nb);
            for (size_t i = 0; i < nb && i < 32; i++)
                fprintf(stderr, " %u", cb[i]);
            fprintf(stderr, "\n");
            FAILF("%s: filter %d differs", what, k);
        }
    }
    return 0;
}

/* Runs `cmd` and parses its stdout as JSON (NULL on failure). */
static struct json_object *
run_json(const char *cmd)
{
    FILE               *p = popen(cmd, "r");
    zarr_buf            b = ZARR_BUF_INIT;
    char                chunk[4096];
    size_t              n;
    struct json_object *j = NULL;
    if (!p)
        return NULL;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
        zarr_buf_append(&b, chunk, n);
    if (pclose(p) == 0 && zarr_buf_append(&b, "", 1) == ZARR_OK)
        j = json_tokener_parse((const char *)b.data);
    zarr_buf_free(&b);
    return j;
}

static int
check_values(const char *what, struct json_object *data)
{
    if (!data || !json_object_is_type(data, json_type_array) ||
        json_object_array_length(data) != RT_D0 * RT_D1)
        FAILF("%s: no data array of %d values", what, RT_D0 * RT_D1);
    for (int i = 0; i < RT_D0; i++)
        for (int j = 0; j < RT_D1; j++)
            if (json_object_get_int64(json_object_array_get_idx(data, (size_t)(i * RT_D1 + j))) !=
                rt_value(i, j))
                FAILF("%s: value [%d][%d] differs", what, i, j);
    return 0;
}

/* Independent fletcher32 (HDF5's algorithm) for the readers that lack the codec: zarrita 0.7 has no
 * numcodecs.fletcher32, Debian's numcodecs 0.11 predates it. */
static const char *JS_F32 =
    "function f32(d){let s1=0,s2=0,i=0,len=d.length>>1;const fold=x=>(x%65536)+Math.floor(x/65536);"
    "while(len){let t=Math.min(len,360);len-=t;do{s1+=(d[i]<<8)|d[i+1];i+=2;s2+=s1;}while(--t);"
    "s1=fold(s1);s2=fold(s2);}if(d.length&1){s1+=d[i]<<8;s2+=s1;s1=fold(s1);s2=fold(s2);}"
    "s1=fold(s1);s2=fold(s2);return (s2*65536+s1)>>>0;}"
    "class F32{static fromConfig(){return new F32();} kind='bytes_to_bytes';"
    "decode(b){const n=b.length-4;const d=b.subarray(0,n);const v=(b[n]|b[n+1]<<8|b[n+2]<<16|b[n+3]<<24)>>>0;"
    "if(v!==f32(d))throw new Error('fletcher32 mismatch');return d;}}";

static const char *PY_F32 =
    "import numcodecs, numpy as np\n"
    "from numcodecs.abc import Codec\n"
    "def f32(d):\n"
    "    s1=s2=0; i=0; n=len(d)//2\n"
    "    fold=lambda x:(x&0xffff)+(x>>16)\n"
    "    while n:\n"
    "        t=min(n,360); n-=t\n"
    "        for _ in range(t):\n"
    "            s1+=(d[i]<<8)|d[i+1]; i+=2; s2+=s1\n"
    "        s1=fold(s1); s2=fold(s2)\n"
    "    if len(d)&1:\n"
    "        s1+=d[i]<<8; s2+=s1; s1=fold(s1); s2=fold(s2)\n"
    "    s1=fold(s1); s2=fold(s2)\n"
    "    return ((s2<<16)|s1)&0xffffffff\n"
    "class F32(Codec):\n"
    "    codec_id='fletcher32'\n"
    "    def encode(self,b): raise NotImplementedError\n"
    "    def decode(self,b,out=None):\n"
    "        b=bytes(b); d=b[:-4]\n"
    "        assert int.from_bytes(b[-4:],'little')==f32(d), 'fletcher32 mismatch'\n"
    "        return d if out is None else numcodecs.compat.ndarray_copy(np.frombuffer(d,'u1'),out)\n"
    "try:\n"
    "    numcodecs.get_codec({'id':'fletcher32'})\n"
    "except Exception:\n"
    "    numcodecs.register_codec(F32)\n";

/* Runs `cmd` (stderr too) and expects it to fail with the reader's unknown-codec error naming
 * `codec` (hdf5_lz4, hdf5_szip): zarrita's UnknownCodecError when it reads a chunk, zarr-python's
 * "codec not available" at open. */
static int
expect_unknown_codec(const char *reader, const char *codec, const char *cmd)
{
    char     full[16500], chunk[4096];
    FILE    *p;
    zarr_buf b = ZARR_BUF_INIT;
    size_t   n;
    int      status, ret = 1;
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    if (!(p = popen(full, "r")))
        FAILF("%s: can't run", reader);
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
        zarr_buf_append(&b, chunk, n);
    status = pclose(p);
    zarr_buf_append(&b, "", 1);
    if (status == 0)
        fprintf(stderr, "  %s read an %s array: %s\n", reader, codec, (const char *)b.data);
    else if (!strstr((const char *)b.data, codec) || (!strstr((const char *)b.data, "Unknown codec") &&
                                                      !strstr((const char *)b.data, "codec not available")))
        fprintf(stderr, "  %s failed without an unknown-codec error: %s\n", reader, (const char *)b.data);
    else
        ret = 0;
    zarr_buf_free(&b);
    return ret;
}

/* zarrita (v3) or zarr-python (v2) reads the array: the test values, or (`refuse`, the name of the
 * h5zarr codec the array has: hdf5_lz4, hdf5_szip) an unknown-codec error. */
static int
external_readers(int fmt, const char *store, const char *name, const char *refuse)
{
    char                cmd[16384];
    const char         *src = getenv("H5ZARR_SRC");
    struct json_object *j, *v;
    int                 rc;
    if (!src)
        FAILF("H5ZARR_SRC is not set (run through ctest)");
    if (fmt == 3) {
        snprintf(cmd, sizeof cmd,
                 "cd '%s/tests/interop' && node --input-type=module -e \"import * as zarr from 'zarrita';"
                 "import {FileSystemStore} from '@zarrita/storage';%s"
                 "zarr.registry.set('numcodecs.fletcher32',()=>F32);"
                 "const [dir,p]=process.argv.slice(1);const a=await zarr.open(zarr.root(new "
                 "FileSystemStore(dir)).resolve(p),{kind:'array'});const c=await zarr.get(a);"
                 "console.log(JSON.stringify({data:Array.from(c.data)}));\" '%s' '%s'",
                 src, JS_F32, store, name);
        if (refuse)
            return expect_unknown_codec("zarrita", refuse, cmd);
        if (!(j = run_json(cmd)))
            FAILF("zarrita could not read %s/%s", store, name);
        json_object_object_get_ex(j, "data", &v);
        rc = check_values("zarrita", v);
    }
    else {
        char py[8192];
        snprintf(py, sizeof py,
                 "%simport zarr, json, sys\na = zarr.open(sys.argv[1], mode='r')[sys.argv[2]]\n"
                 "print(json.dumps({'data': a[...].ravel().tolist()}))\n",
                 PY_F32);
        FILE *f = NULL;
        char  pyfile[4200];
        snprintf(pyfile, sizeof pyfile, "%s.py", store);
        ASSERT((f = fopen(pyfile, "w")) && fputs(py, f) >= 0 && fclose(f) == 0);
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' '%s'", pyfile, store, name);
        if (refuse)
            return expect_unknown_codec("zarr-python", refuse, cmd);
        if (!(j = run_json(cmd)))
            FAILF("zarr-python could not read %s/%s", store, name);
        json_object_object_get_ex(j, "data", &v);
        rc = check_values("zarr-python", v);
    }
    json_object_put(j);
    return rc;
}

/* The file of chunk (ci, cj) of array `name` in `store`. */
static void
chunk_file(int fmt, const char *store, const char *name, int ci, int cj, char *key, size_t n)
{
    if (fmt == 3)
        snprintf(key, n, "%s/%s/c/%d/%d", store, name, ci, cj);
    else
        snprintf(key, n, "%s/%s/%d.%d", store, name, ci, cj);
}

/* Every chunk the connector stored equals the native file's raw chunk. */
static int
chunks_identical(int fmt, const char *what, const char *store, const char *name, hid_t nd)
{
    for (int ci = 0; ci * RT_C0 < RT_D0; ci++)
        for (int cj = 0; cj * RT_C1 < RT_D1; cj++) {
            char     key[8192];
            hsize_t  off[2] = {(hsize_t)ci * RT_C0, (hsize_t)cj * RT_C1};
            hsize_t  nbytes = 0;
            uint32_t mask   = 1;
            size_t   zn     = 0;
            uint8_t *z, *h;
            chunk_file(fmt, store, name, ci, cj, key, sizeof key);
            if (!(z = test_slurp(key, &zn)))
                FAILF("%s: no chunk %s", what, key);
            ASSERT(H5Dget_chunk_storage_size(nd, off, &nbytes) >= 0);
            ASSERT((h = malloc(nbytes + 1)));
            ASSERT(H5Dread_chunk(nd, H5P_DEFAULT, off, &mask, h) >= 0);
            if (mask != 0)
                FAILF("%s: native chunk (%d,%d) skipped a filter (mask %u)", what, ci, cj, mask);
            if (zn != nbytes || memcmp(z, h, zn) != 0)
                FAILF("%s: chunk (%d,%d) differs: zarr %zu bytes, native %llu bytes", what, ci, cj, zn,
                      (unsigned long long)nbytes);
            free(z);
            free(h);
        }
    return 0;
}

/* With deflate the chunk bytes differ (the core's DEFLATE streams come from libdeflate, HDF5's from
 * zlib; both valid zlib streams), so what byte identity gave is checked directly: chunks move between
 * .h5 files and stores without re-encoding. The store's raw chunks, written with H5Dwrite_chunk into a
 * native dataset "moved" in `nf` with the same dcpl, read back through HDF5's own filters; the native
 * dataset's raw chunks, put in the store in place of its own, read back through the connector (the
 * store must be closed). */
static int
chunks_interchange(int fmt, const char *what, const char *store, hid_t nf, hid_t nd, hid_t dcpl, hid_t fapl)
{
    static int32_t r[RT_D0][RT_D1];
    hsize_t        dims[2] = {RT_D0, RT_D1};
    hid_t          s       = H5Screate_simple(2, dims, NULL), md, zf, zd;
    ASSERT(s >= 0);
    ASSERT((md = H5Dcreate2(nf, "moved", H5T_STD_I32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    H5Sclose(s);
    for (int pass = 0; pass < 2; pass++)
        for (int ci = 0; ci * RT_C0 < RT_D0; ci++)
            for (int cj = 0; cj * RT_C1 < RT_D1; cj++) {
                char     key[8192];
                hsize_t  off[2] = {(hsize_t)ci * RT_C0, (hsize_t)cj * RT_C1};
                hsize_t  nbytes = 0;
                uint32_t mask   = 1;
                size_t   zn     = 0;
                uint8_t *b;
                FILE    *f;
                chunk_file(fmt, store, "a", ci, cj, key, sizeof key);
                if (pass == 0) { /* store -> native */
                    if (!(b = test_slurp(key, &zn)))
                        FAILF("%s: no chunk %s", what, key);
                    ASSERT(H5Dwrite_chunk(md, H5P_DEFAULT, 0, off, zn, b) >= 0);
                }
                else { /* native -> store */
                    ASSERT(H5Dget_chunk_storage_size(nd, off, &nbytes) >= 0);
                    ASSERT((b = malloc(nbytes + 1)));
                    ASSERT(H5Dread_chunk(nd, H5P_DEFAULT, off, &mask, b) >= 0 && mask == 0);
                    ASSERT((f = fopen(key, "wb")) && fwrite(b, 1, nbytes, f) == nbytes && fclose(f) == 0);
                }
                free(b);
            }
    memset(r, 0, sizeof r);
    ASSERT(H5Dread(md, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    H5Dclose(md);
    for (int a = 0; a < RT_D0; a++)
        for (int b = 0; b < RT_D1; b++)
            if (r[a][b] != rt_value(a, b))
                FAILF("%s: the store's chunks in a native file read [%d][%d] as %d", what, a, b, r[a][b]);
    ASSERT((zf = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((zd = H5Dopen2(zf, "a", H5P_DEFAULT)) >= 0);
    memset(r, 0, sizeof r);
    ASSERT(H5Dread(zd, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    H5Dclose(zd);
    H5Fclose(zf);
    for (int a = 0; a < RT_D0; a++)
        for (int b = 0; b < RT_D1; b++)
            if (r[a][b] != rt_value(a, b))
                FAILF("%s: the native chunks in the store read [%d][%d] as %d", what, a, b, r[a][b]);
    return 0;
}

/* The array's metadata document (zarr.json or .zarray), parsed; NULL if absent. */
static struct json_object *
array_meta(int fmt, const char *store, const char *name)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s/%s", store, name, fmt == 3 ? "zarr.json" : ".zarray");
    return json_object_from_file(path);
}

/* The hdf5_lz4 codec's JSON (borrowed from `meta`) in v3 `codecs` or v2 `filters`/`compressor`. */
static struct json_object *
lz4_codec(int fmt, struct json_object *meta)
{
    struct json_object *list = NULL, *v;
    if (fmt == 2 && json_object_object_get_ex(meta, "compressor", &v) &&
        json_object_object_get_ex(v, "id", &list) && strcmp(json_object_get_string(list), "hdf5_lz4") == 0)
        return v;
    if (!json_object_object_get_ex(meta, fmt == 3 ? "codecs" : "filters", &list) ||
        !json_object_is_type(list, json_type_array))
        return NULL;
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        struct json_object *e = json_object_array_get_idx(list, i), *id;
        if (json_object_object_get_ex(e, fmt == 3 ? "name" : "id", &id) &&
            strcmp(json_object_get_string(id), "hdf5_lz4") == 0)
            return e;
    }
    return NULL;
}

/* The block size the store's hdf5_lz4 codec holds; -1 when there is none. */
static long long
lz4_blocksize(int fmt, const char *store, const char *name)
{
    struct json_object *m  = array_meta(fmt, store, name), *k, *cfg, *v;
    long long           bs = -1;
    if (m && (k = lz4_codec(fmt, m))) {
        cfg = k;
        if (fmt == 3 && !json_object_object_get_ex(k, "configuration", &cfg))
            cfg = NULL;
        if (cfg && json_object_object_get_ex(cfg, "blocksize", &v) && json_object_is_type(v, json_type_int))
            bs = json_object_get_int64(v);
    }
    json_object_put(m);
    return bs;
}

/* A zarr store came out: the root group's document exists. */
static bool
is_zarr_store(int fmt, const char *store)
{
    char        path[8192];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", store, fmt == 3 ? "zarr.json" : ".zgroup");
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int
test_dcpl_roundtrip(void)
{
    const char *tmp = test_tmpdir("fround");
    char        dir[4096], native[4200], store[4200];
    if (need_plugins())
        return 1;
    ASSERT(tmp);
    snprintf(dir, sizeof dir, "%s", tmp);
    for (int fmt = 2; fmt <= 3; fmt++)
        for (size_t i = 0; i < sizeof combos / sizeof combos[0]; i++) {
            const combo *c = &combos[i];
            char         what[128];
            hid_t        p = combo_dcpl(c), fapl = H5Pcreate(H5P_FILE_ACCESS), nf, zf, nd, zd, np, zp;
            int32_t      r[RT_D0][RT_D1];
            snprintf(what, sizeof what, "v%d %s", fmt, c->name);
            snprintf(native, sizeof native, "%s/%s.h5", dir, c->name);
            snprintf(store, sizeof store, "%s/v%d_%s.zarr", dir, fmt, c->name);
            ASSERT(p >= 0);
            /* native reference */
            ASSERT((nf = H5Fcreate(native, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
            ASSERT(write_array(nf, "a", p) == 0);
            /* connector */
            ASSERT(H5Pset_fapl_zarr(fapl, fmt) >= 0);
            ASSERT((zf = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
            if (write_array(zf, "a", p) != 0)
                FAILF("%s: create/write through the connector failed", what);
            ASSERT(H5Fclose(zf) >= 0);
            if (!is_zarr_store(fmt, store))
                FAILF("%s: %s is not a zarr v%d store", what, store, fmt);
            for (int k = 0; k < c->n; k++)
                if (c->f[k].id == F_LZ4 &&
                    lz4_blocksize(fmt, store, "a") != (c->f[k].ncd > 0 ? (long long)c->f[k].cd[0] : 0))
                    FAILF("%s: the store's hdf5_lz4 codec has block size %lld", what,
                          lz4_blocksize(fmt, store, "a"));
            ASSERT((zf = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
            ASSERT((zd = H5Dopen2(zf, "a", H5P_DEFAULT)) >= 0);
            ASSERT((nd = H5Dopen2(nf, "a", H5P_DEFAULT)) >= 0);
            np = H5Dget_create_plist(nd);
            zp = H5Dget_create_plist(zd);
            if (compare_filters(what, np, zp) != 0)
                return 1;
            memset(r, 0, sizeof r);
            ASSERT(H5Dread(zd, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
            for (int a = 0; a < RT_D0; a++)
                for (int b = 0; b < RT_D1; b++)
                    if (r[a][b] != rt_value(a, b))
                        FAILF("%s: value [%d][%d] read back as %d", what, a, b, r[a][b]);
            if (!combo_has(c, H5Z_FILTER_DEFLATE) && chunks_identical(fmt, what, store, "a", nd) != 0)
                return 1;
            H5Pclose(np);
            H5Pclose(zp);
            H5Dclose(zd);
            H5Fclose(zf);
            if (combo_has(c, H5Z_FILTER_DEFLATE) &&
                chunks_interchange(fmt, what, store, nf, nd, p, fapl) != 0)
                return 1;
            H5Dclose(nd);
            H5Fclose(nf);
            H5Pclose(p);
            H5Pclose(fapl);
            if (external_readers(fmt, store, "a",
                                 combo_has(c, F_LZ4)                    ? "hdf5_lz4"
                                 : combo_has(c, H5Z_FILTER_SZIP)        ? "hdf5_szip"
                                 : combo_has(c, H5Z_FILTER_SCALEOFFSET) ? "hdf5_scaleoffset"
                                                                        : NULL) != 0)
                FAILF("%s: an independent reader disagrees", what);
        }
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * lz4's cd_values: the codec keeps the block size, the persisted dcpl the rest
 * ------------------------------------------------------------------------------------------------ */
/* Reopens `store` and checks the lz4 filter of dataset `name` and its values (i * 3 - 50). */
static int
check_lz4_dataset(hid_t fapl, const char *store, const char *name, unsigned want_flags, size_t want_ncd,
                  const unsigned *want_cd, int n)
{
    unsigned flags = 99, cd[8] = {0};
    size_t   ncd       = 8;
    char     fname[32] = "";
    int      r[256];
    hid_t    f, d, q;
    ASSERT(n <= 256);
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
    ASSERT((q = H5Dget_create_plist(d)) >= 0);
    ASSERT_EQ_INT(H5Pget_nfilters(q), 1);
    ASSERT_EQ_INT(H5Pget_filter2(q, 0, &flags, &ncd, cd, sizeof fname, fname, NULL), F_LZ4);
    ASSERT_EQ_INT(flags, want_flags);
    ASSERT_EQ_INT(ncd, want_ncd);
    for (size_t i = 0; i < want_ncd; i++)
        if (cd[i] != want_cd[i])
            FAILF("%s: cd_values[%zu] is %u, expected %u", name, i, cd[i], want_cd[i]);
    ASSERT_STR(fname, "lz4");
    memset(r, 0, sizeof r);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    for (int i = 0; i < n; i++)
        if (r[i] != i * 3 - 50)
            FAILF("%s: value %d read back as %d", name, i, r[i]);
    H5Pclose(q);
    H5Dclose(d);
    H5Fclose(f);
    return 0;
}

/* Sets the block size of the array's hdf5_lz4 codec in its metadata document (another tool's edit). */
static int
edit_lz4_blocksize(int fmt, const char *store, const char *name, int bs)
{
    char                path[8192];
    struct json_object *m   = array_meta(fmt, store, name), *k, *cfg;
    int                 ret = -1;
    snprintf(path, sizeof path, "%s/%s/%s", store, name, fmt == 3 ? "zarr.json" : ".zarray");
    if (m && (k = lz4_codec(fmt, m))) {
        cfg = k;
        if (fmt == 3)
            json_object_object_get_ex(k, "configuration", &cfg);
        json_object_object_add(cfg, "blocksize", json_object_new_int(bs));
        ret = json_object_to_file(path, m);
    }
    json_object_put(m);
    return ret;
}

static int
test_lz4_cd_values(void)
{
    enum { N = 200 };
    const char           *tmp = test_tmpdir("flz4cd");
    char                  store[4200], key[4400];
    hsize_t               dims[1] = {N}, chunk[1] = {32};
    int                   w[N];
    static const unsigned api[3] = {1, 2, 3}, edited[1] = {64}, none[1] = {0};
    if (need_plugins())
        return 1;
    ASSERT(tmp);
    for (int i = 0; i < N; i++)
        w[i] = i * 3 - 50;
    for (int fmt = 2; fmt <= 3; fmt++) {
        hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f, s = H5Screate_simple(1, dims, NULL), p, d;
        snprintf(store, sizeof store, "%s/v%d.zarr", tmp, fmt);
        ASSERT(H5Pset_fapl_zarr(fapl, fmt) >= 0);
        ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
        /* {1, 2, 3} as HDF5's API test sets them; and no cd_values at all */
        p = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_chunk(p, 1, chunk);
        ASSERT(H5Pset_filter(p, F_LZ4, H5Z_FLAG_MANDATORY, 3, api) >= 0);
        ASSERT((d = H5Dcreate2(f, "api", H5T_NATIVE_INT, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
        ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
        H5Dclose(d);
        H5Premove_filter(p, H5Z_FILTER_ALL);
        ASSERT(H5Pset_filter(p, F_LZ4, H5Z_FLAG_OPTIONAL, 0, NULL) >= 0);
        ASSERT((d = H5Dcreate2(f, "nocd", H5T_NATIVE_INT, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
        ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
        H5Dclose(d);
        H5Pclose(p);
        ASSERT(H5Fclose(f) >= 0);
        ASSERT(is_zarr_store(fmt, store));
        ASSERT_EQ_INT(lz4_blocksize(fmt, store, "api"), 1);
        ASSERT_EQ_INT(lz4_blocksize(fmt, store, "nocd"), 0);
        if (check_lz4_dataset(fapl, store, "api", H5Z_FLAG_MANDATORY, 3, api, N) != 0 ||
            check_lz4_dataset(fapl, store, "nocd", H5Z_FLAG_OPTIONAL, 0, none, N) != 0)
            FAILF("v%d: the dcpl as created did not come back", fmt);
        /* 1-byte blocks: each chunk (128 bytes) is the header and 128 raw blocks of 1 + 4 bytes */
        {
            size_t   zn = 0;
            uint8_t *z;
            snprintf(key, sizeof key, fmt == 3 ? "%s/api/c/0" : "%s/api/0", store);
            ASSERT((z = test_slurp(key, &zn)));
            ASSERT_EQ_INT(zn, 12 + 128 * 5);
            ASSERT(z[11] == 1 && z[15] == 1 && z[16] == (uint8_t)(-50 & 0xff));
            free(z);
        }
        /* the codec edited by another tool: its block size wins (the data still reads: each chunk
         * says its block size) and is what new chunks use */
        ASSERT(edit_lz4_blocksize(fmt, store, "api", 64) == 0);
        if (check_lz4_dataset(fapl, store, "api", H5Z_FLAG_MANDATORY, 1, edited, N) != 0)
            FAILF("v%d: the edited codec is not what the dcpl reports", fmt);
        ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0);
        ASSERT((d = H5Dopen2(f, "api", H5P_DEFAULT)) >= 0);
        ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
        H5Dclose(d);
        H5Fclose(f);
        {
            size_t   zn = 0;
            uint8_t *z;
            ASSERT((z = test_slurp(key, &zn)));
            ASSERT(zn > 12 && z[8] == 0 && z[9] == 0 && z[10] == 0 && z[11] == 64);
            free(z);
        }
        ASSERT(check_lz4_dataset(fapl, store, "api", H5Z_FLAG_MANDATORY, 1, edited, N) == 0);
        H5Sclose(s);
        H5Pclose(fapl);
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * Unsupported filters
 * ------------------------------------------------------------------------------------------------ */
static int
test_unsupported(void)
{
    const char *tmp = test_tmpdir("funsup");
    char        store[4200], msg[4096];
    hsize_t     dims[1] = {100}, chunk[1] = {10};
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f, s = H5Screate_simple(1, dims, NULL);
    struct {
        const char  *name;
        H5Z_filter_t id;
        const char  *expect[3];
    } cases[] = {
        {"nbit", H5Z_FILTER_NBIT, {"filter 5", "nbit", "shuffle + zstd"}},
        {"bitshuffle", F_BITSHUFFLE, {"filter 32008", "bitshuffle", "bit-shuffle"}},
        {"unknown", 40123, {"filter 40123", "no zarr codec", "zstd (filter 32015)"}},
    };
    if (need_plugins())
        return 1;
    ASSERT(tmp);
    snprintf(store, sizeof store, "%s/u.zarr", tmp);
    ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    unsetenv("H5ZARR_UNSUPPORTED_FILTER");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hid_t    p     = H5Pcreate(H5P_DATASET_CREATE), d;
        unsigned cd[4] = {4, 8, 0, 0};
        char     dpath[4400];
        H5Pset_chunk(p, 1, chunk);
        if (cases[i].id == H5Z_FILTER_NBIT)
            H5Pset_nbit(p);
        else /* mandatory (optional ones HDF5 can't apply either are left out: test_left_out) */
            ASSERT(H5Pset_filter(p, cases[i].id, H5Z_FLAG_MANDATORY, 0, cd) >= 0);
        msg[0] = '\0';
        H5E_BEGIN_TRY
        {
            d = H5Dcreate2(f, cases[i].name, H5T_STD_I32LE, s, H5P_DEFAULT, p, H5P_DEFAULT);
            H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
        }
        H5E_END_TRY
        if (d >= 0)
            FAILF("%s: H5Dcreate succeeded with an unsupported filter", cases[i].name);
        for (int k = 0; k < 3; k++)
            if (!strstr(msg, cases[i].expect[k]))
                FAILF("%s: error message lacks \"%s\": %s", cases[i].name, cases[i].expect[k], msg);
        if (!strstr(msg, "H5ZARR_UNSUPPORTED_FILTER"))
            FAILF("%s: error message does not mention the switch: %s", cases[i].name, msg);
        /* HDF5's own n-bit is optional: the message says why it is not left out */
        if (cases[i].id == H5Z_FILTER_NBIT && !strstr(msg, "optional, but HDF5 would apply it"))
            FAILF("%s: error message does not say why an optional filter is refused: %s", cases[i].name, msg);
        snprintf(dpath, sizeof dpath, "%s/%s", store, cases[i].name);
        struct stat st;
        ASSERT(stat(dpath, &st) != 0); /* nothing left behind */
        H5Pclose(p);
    }
    /* the switch: substitute:zstd stores n-bit data with zstd and reports zstd */
    {
        hid_t    p = H5Pcreate(H5P_DATASET_CREATE), d, q;
        unsigned flags, v[4];
        size_t   n = 4;
        int      w[100], r[100];
        for (int k = 0; k < 100; k++)
            w[k] = k * k;
        H5Pset_chunk(p, 1, chunk);
        H5Pset_shuffle(p);
        H5Pset_nbit(p);
        setenv("H5ZARR_UNSUPPORTED_FILTER", "substitute:zstd", 1);
        d = H5Dcreate2(f, "subst", H5T_STD_I32LE, s, H5P_DEFAULT, p, H5P_DEFAULT);
        unsetenv("H5ZARR_UNSUPPORTED_FILTER");
        ASSERT(d >= 0);
        ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
        H5Dclose(d);
        ASSERT((d = H5Dopen2(f, "subst", H5P_DEFAULT)) >= 0);
        q = H5Dget_create_plist(d);
        ASSERT_EQ_INT(H5Pget_nfilters(q), 2);
        ASSERT(H5Pget_filter2(q, 0, &flags, &n, v, 0, NULL, NULL) == H5Z_FILTER_SHUFFLE);
        n = 4;
        ASSERT(H5Pget_filter2(q, 1, &flags, &n, v, 0, NULL, NULL) == F_ZSTD && n == 1 && v[0] == 3);
        ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
        ASSERT(memcmp(w, r, sizeof w) == 0);
        H5Pclose(q);
        H5Dclose(d);
        /* a value the switch does not know is an error too */
        setenv("H5ZARR_UNSUPPORTED_FILTER", "substitute:snappy", 1);
        H5E_BEGIN_TRY { d = H5Dcreate2(f, "bad", H5T_STD_I32LE, s, H5P_DEFAULT, p, H5P_DEFAULT); }
        H5E_END_TRY
        unsetenv("H5ZARR_UNSUPPORTED_FILTER");
        ASSERT(d < 0);
        H5Pclose(p);
    }
    H5Fclose(f);
    H5Sclose(s);
    H5Pclose(fapl);
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * Optional filters neither zarr nor HDF5 can apply: left out, as HDF5 leaves them out
 * ------------------------------------------------------------------------------------------------ */
#define F_UNKNOWN 40123 /* no H5Z class registered, no codec */

/* The names of the array's codecs (v3 `codecs`; v2 `filters` then `compressor`), comma-separated. */
static void
codec_names(int fmt, struct json_object *meta, char *out, size_t n)
{
    struct json_object *l = NULL, *c = NULL, *nm = NULL;
    out[0] = '\0';
    if (fmt == 3 && json_object_object_get_ex(meta, "codecs", &l) && json_object_is_type(l, json_type_array))
        for (size_t i = 0; i < json_object_array_length(l); i++)
            if (json_object_object_get_ex(json_object_array_get_idx(l, i), "name", &nm))
                snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? "," : "",
                         json_object_get_string(nm));
    if (fmt == 2) {
        if (json_object_object_get_ex(meta, "filters", &l) && json_object_is_type(l, json_type_array))
            for (size_t i = 0; i < json_object_array_length(l); i++)
                if (json_object_object_get_ex(json_object_array_get_idx(l, i), "id", &nm))
                    snprintf(out + strlen(out), n - strlen(out), "%s%s", *out ? "," : "",
                             json_object_get_string(nm));
        if (json_object_object_get_ex(meta, "compressor", &c) && json_object_object_get_ex(c, "id", &nm))
            snprintf(out + strlen(out), n - strlen(out), "%s%s", *out ? "," : "", json_object_get_string(nm));
    }
}

/* The `_h5zarr.dcpl.filters` list of the array's metadata (borrowed), or NULL. */
static struct json_object *
recorded_filters(struct json_object *meta)
{
    struct json_object *r, *d, *l;
    if (json_object_object_get_ex(meta, "attributes", &r) && json_object_object_get_ex(r, "_h5zarr", &d))
        r = d;
    else if (!json_object_object_get_ex(meta, "_h5zarr", &r))
        return NULL;
    return json_object_object_get_ex(r, "dcpl", &d) && json_object_object_get_ex(d, "filters", &l) ? l : NULL;
}

static int
test_left_out(void)
{
    static const combo combos_lo[] = {
        {"alone", 1, {{F_UNKNOWN, H5Z_FLAG_OPTIONAL, 3, {1, 2, 3}}}},
        {"between", 3, {SHUF, {F_UNKNOWN, H5Z_FLAG_OPTIONAL, 1, {7}}, DEFL(6)}},
    };
    const char *tmp = test_tmpdir("fleft");
    char        native[4200], store[4200], what[128], codecs[256], msg[4096], path[8300];
    if (need_plugins())
        return 1;
    ASSERT(tmp);
    ASSERT(H5Zfilter_avail(F_UNKNOWN) == 0);
    for (int fmt = 2; fmt <= 3; fmt++)
        for (size_t i = 0; i < sizeof combos_lo / sizeof combos_lo[0]; i++) {
            const combo        *c = &combos_lo[i];
            hid_t               p = combo_dcpl(c), fapl = H5Pcreate(H5P_FILE_ACCESS), nf, zf, nd, zd, np, zp;
            int32_t             r[RT_D0][RT_D1];
            struct json_object *meta, *rec;
            snprintf(what, sizeof what, "v%d %s", fmt, c->name);
            snprintf(native, sizeof native, "%s/%s.h5", tmp, c->name);
            snprintf(store, sizeof store, "%s/v%d_%s.zarr", tmp, fmt, c->name);
            ASSERT(p >= 0 && H5Pset_fapl_zarr(fapl, fmt) >= 0);
            /* native HDF5 makes the dataset and skips the filter */
            ASSERT((nf = H5Fcreate(native, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
            ASSERT(write_array(nf, "a", p) == 0);
            ASSERT((nd = H5Dopen2(nf, "a", H5P_DEFAULT)) >= 0 && (np = H5Dget_create_plist(nd)) >= 0);
            ASSERT((zf = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
            if (write_array(zf, "a", p) != 0)
                FAILF("%s: create/write through the connector failed", what);
            /* the dataset just made reports it (h5py's ds._filters) */
            {
                hsize_t dims[2] = {RT_D0, RT_D1};
                hid_t   s       = H5Screate_simple(2, dims, NULL), fd, fp;
                ASSERT((fd = H5Dcreate2(zf, "fresh", H5T_STD_I32LE, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
                ASSERT((fp = H5Dget_create_plist(fd)) >= 0);
                if (compare_filters(what, np, fp) != 0)
                    return 1;
                H5Pclose(fp), H5Dclose(fd), H5Sclose(s);
            }
            ASSERT(H5Fclose(zf) >= 0);
            /* and after reopen, with the values */
            ASSERT((zf = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
            ASSERT((zd = H5Dopen2(zf, "a", H5P_DEFAULT)) >= 0 && (zp = H5Dget_create_plist(zd)) >= 0);
            if (compare_filters(what, np, zp) != 0)
                return 1;
            memset(r, 0, sizeof r);
            ASSERT(H5Dread(zd, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
            for (int a = 0; a < RT_D0; a++)
                for (int b = 0; b < RT_D1; b++)
                    if (r[a][b] != rt_value(a, b))
                        FAILF("%s: value [%d][%d] read back as %d", what, a, b, r[a][b]);
            H5Pclose(zp), H5Dclose(zd), H5Fclose(zf);
            /* the chunk API reports the left-out filter's bit in every chunk's mask, as HDF5 does, and
             * takes chunks back with it; mask 0 (the filter applied) can't be true here: refused */
            {
                hsize_t  off[2] = {0, 0}, zoff[2], zaddr, zsize, nbytes = 0;
                uint32_t nmask = 0, zmask = 99, imask = 99;
                uint8_t *h, *z;
                herr_t   w0;
                ASSERT((zf = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0 &&
                       (zd = H5Dopen2(zf, "a", H5P_DEFAULT)) >= 0);
                ASSERT(H5Dget_chunk_storage_size(nd, off, &nbytes) >= 0 && (h = malloc(nbytes + 1)));
                ASSERT(H5Dread_chunk(nd, H5P_DEFAULT, off, &nmask, h) >= 0);
                ASSERT_EQ_INT(nmask, c->n == 1 ? 1 : 2);
                ASSERT((z = malloc(nbytes + 64)) && H5Dread_chunk(zd, H5P_DEFAULT, off, &zmask, z) >= 0);
                ASSERT_EQ_INT(zmask, nmask);
                ASSERT(H5Dget_chunk_info(zd, H5S_ALL, 0, zoff, &imask, &zaddr, &zsize) >= 0);
                ASSERT_EQ_INT(imask, nmask);
                ASSERT(H5Dwrite_chunk(zd, H5P_DEFAULT, nmask, off, nbytes, h) >= 0);
                H5E_BEGIN_TRY { w0 = H5Dwrite_chunk(zd, H5P_DEFAULT, 0, off, nbytes, h); }
                H5E_END_TRY
                ASSERT(w0 < 0);
                free(h), free(z);
                H5Dclose(zd), H5Fclose(zf);
            }
            /* plain zarr metadata: no codec for it; the record keeps it */
            ASSERT((meta = array_meta(fmt, store, "a")));
            codec_names(fmt, meta, codecs, sizeof codecs);
            if (strcmp(codecs, c->n == 1
                                   ? (fmt == 3 ? "bytes" : "")
                                   : (fmt == 3 ? "bytes,numcodecs.shuffle,numcodecs.zlib" : "shuffle,zlib")))
                FAILF("%s: codecs '%s'", what, codecs);
            if (!(rec = recorded_filters(meta)) || json_object_array_length(rec) != (size_t)c->n)
                FAILF("%s: _h5zarr.dcpl.filters does not hold the %d filters", what, c->n);
            {
                struct json_object *e = json_object_array_get_idx(rec, c->n == 1 ? 0 : 1), *v;
                ASSERT(json_object_object_get_ex(e, "id", &v) && json_object_get_int(v) == F_UNKNOWN);
                ASSERT(json_object_object_get_ex(e, "flags", &v) &&
                       json_object_get_int(v) == H5Z_FLAG_OPTIONAL);
            }
            /* the lone one: every chunk is the native file's raw chunk, which HDF5 stored unfiltered */
            for (int ci = 0; c->n == 1 && ci * RT_C0 < RT_D0; ci++)
                for (int cj = 0; cj * RT_C1 < RT_D1; cj++) {
                    char     key[8192];
                    hsize_t  off[2] = {(hsize_t)ci * RT_C0, (hsize_t)cj * RT_C1}, nbytes = 0;
                    uint32_t mask = 0;
                    size_t   zn   = 0;
                    uint8_t *z, *h;
                    chunk_file(fmt, store, "a", ci, cj, key, sizeof key);
                    ASSERT((z = test_slurp(key, &zn)));
                    ASSERT(H5Dget_chunk_storage_size(nd, off, &nbytes) >= 0 && (h = malloc(nbytes + 1)));
                    ASSERT(H5Dread_chunk(nd, H5P_DEFAULT, off, &mask, h) >= 0);
                    ASSERT_EQ_INT(mask, 1); /* HDF5 skipped filter 0 */
                    if (zn != nbytes || zn != (size_t)RT_C0 * RT_C1 * 4 || memcmp(z, h, zn) != 0)
                        FAILF("%s: chunk (%d,%d) is not the plain chunk", what, ci, cj);
                    free(z), free(h);
                }
            H5Pclose(np), H5Dclose(nd), H5Fclose(nf), H5Pclose(p);
            if (external_readers(fmt, store, "a", NULL) != 0)
                FAILF("%s: an independent reader disagrees", what);
            /* a record that makes it mandatory is refused, naming the field */
            json_object_object_add(json_object_array_get_idx(rec, c->n == 1 ? 0 : 1), "flags",
                                   json_object_new_int(H5Z_FLAG_MANDATORY));
            snprintf(path, sizeof path, "%s/a/%s", store, fmt == 3 ? "zarr.json" : ".zarray");
            ASSERT(json_object_to_file(path, meta) == 0);
            json_object_put(meta);
            msg[0] = '\0';
            ASSERT((zf = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
            H5E_BEGIN_TRY
            {
                zd = H5Dopen2(zf, "a", H5P_DEFAULT);
                zp = zd >= 0 ? H5Dget_create_plist(zd) : H5I_INVALID_HID;
                H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
            }
            H5E_END_TRY
            if (zp >= 0)
                FAILF("%s: a mandatory filter without a codec in the record was accepted", what);
            if (!strstr(msg, c->n == 1 ? "_h5zarr.dcpl.filters[0]" : "_h5zarr.dcpl.filters[1]") ||
                !strstr(msg, "mandatory"))
                FAILF("%s: the refusal does not name the field: %s", what, msg);
            if (zd >= 0)
                H5Dclose(zd);
            H5Fclose(zf), H5Pclose(fapl);
        }
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * Stores written by others: gzip reports deflate; crc32c and numcodecs.lz4 report nothing
 * ------------------------------------------------------------------------------------------------ */
static int
write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static int
test_open_foreign(void)
{
    const char *tmp = test_tmpdir("fforeign");
    char        p[4400];
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f, d, q;
    unsigned    flags, cd[8];
    size_t      n = 8;
    ASSERT(tmp);
    snprintf(p, sizeof p, "%s/s.zarr", tmp);
    ASSERT(mkdir(p, 0777) == 0);
    snprintf(p, sizeof p, "%s/s.zarr/zarr.json", tmp);
    ASSERT(write_text(p, "{\"zarr_format\":3,\"node_type\":\"group\",\"attributes\":{}}") == 0);
    snprintf(p, sizeof p, "%s/s.zarr/g", tmp);
    ASSERT(mkdir(p, 0777) == 0);
    snprintf(p, sizeof p, "%s/s.zarr/g/zarr.json", tmp);
    ASSERT(write_text(p, "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[8],\"data_type\":\"int16\","
                         "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4]}},"
                         "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,\"codecs\":["
                         "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                         "{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":2}},"
                         "{\"name\":\"gzip\",\"configuration\":{\"level\":4}},{\"name\":\"crc32c\"}]}") == 0);
    ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0);
    snprintf(p, sizeof p, "%s/s.zarr", tmp);
    ASSERT((f = H5Fopen(p, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "g", H5P_DEFAULT)) >= 0);
    q = H5Dget_create_plist(d);
    ASSERT_EQ_INT(H5Pget_nfilters(q), 2);
    ASSERT(H5Pget_filter2(q, 0, &flags, &n, cd, 0, NULL, NULL) == H5Z_FILTER_SHUFFLE && n == 1 && cd[0] == 2);
    n = 8;
    ASSERT(H5Pget_filter2(q, 1, &flags, &n, cd, 0, NULL, NULL) == H5Z_FILTER_DEFLATE && n == 1 && cd[0] == 4);
    H5Pclose(q);
    H5Dclose(d);
    H5Fclose(f);

    /* hdf5_lz4 without an `_h5zarr` dcpl: lz4 {blocksize}, mandatory; a chunk framed by hand (6-byte
     * blocks: one of 6 raw bytes, one of 2) reads back */
    {
        static const uint8_t chunk0[] = {0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 6, 0, 0,
                                         0, 6, 1, 0, 2, 0, 3, 0, 0, 0, 0, 2, 4, 0};
        int16_t              r[8];
        FILE                *fp;
        snprintf(p, sizeof p, "%s/s.zarr/l", tmp);
        ASSERT(mkdir(p, 0777) == 0);
        snprintf(p, sizeof p, "%s/s.zarr/l/c", tmp);
        ASSERT(mkdir(p, 0777) == 0);
        snprintf(p, sizeof p, "%s/s.zarr/l/c/0", tmp);
        ASSERT((fp = fopen(p, "wb")) && fwrite(chunk0, 1, sizeof chunk0, fp) == sizeof chunk0 &&
               fclose(fp) == 0);
        snprintf(p, sizeof p, "%s/s.zarr/l/zarr.json", tmp);
        ASSERT(write_text(p,
                          "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[8],\"data_type\":\"int16\","
                          "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4]}},"
                          "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":7,\"codecs\":["
                          "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                          "{\"name\":\"hdf5_lz4\",\"configuration\":{\"blocksize\":6}}]}") == 0);
        snprintf(p, sizeof p, "%s/s.zarr", tmp);
        ASSERT((f = H5Fopen(p, H5F_ACC_RDONLY, fapl)) >= 0);
        ASSERT((d = H5Dopen2(f, "l", H5P_DEFAULT)) >= 0);
        q = H5Dget_create_plist(d);
        n = 8;
        ASSERT_EQ_INT(H5Pget_nfilters(q), 1);
        ASSERT(H5Pget_filter2(q, 0, &flags, &n, cd, 0, NULL, NULL) == F_LZ4);
        ASSERT(n == 1 && cd[0] == 6 && flags == H5Z_FLAG_MANDATORY);
        ASSERT(H5Dread(d, H5T_NATIVE_INT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
        for (int i = 0; i < 8; i++)
            ASSERT_EQ_INT(r[i], i < 4 ? i + 1 : 7);
        H5Pclose(q);
        H5Dclose(d);
        H5Fclose(f);
    }
    H5Pclose(fapl);
    return 0;
}

/* bzip2 (307: netCDF's and PyTables' filter; its plugin is not on this test's path) becomes
 * numcodecs.bz2 {level = cd_values[0]} in v2 and v3; the chunks are bzip2 streams of that block size,
 * the dcpl reports the filter again on open, zarr-python reads the v2 store, and a block size out of
 * 1..9 is refused with the filter named. */
static int
test_bzip2(void)
{
    const char *tmp   = test_tmpdir("fbz2");
    unsigned    seven = 7, ten = 10;
    ASSERT(tmp);
    for (int fmt = 2; fmt <= 3; fmt++) {
        char     store[4200], doc[4300], key[8192], head[4] = {0};
        hid_t    fapl = H5Pcreate(H5P_FILE_ACCESS), p = H5Pcreate(H5P_DATASET_CREATE), f, d, q;
        hsize_t  chunk[2] = {RT_C0, RT_C1};
        unsigned flags = 0, cd[4] = {0};
        size_t   ncd = 4;
        int32_t  r[RT_D0][RT_D1];
        char    *text;
        FILE    *fp;
        snprintf(store, sizeof store, "%s/v%d_bzip2.zarr", tmp, fmt);
        ASSERT(H5Pset_fapl_zarr(fapl, fmt) >= 0 && H5Pset_chunk(p, 2, chunk) >= 0);
        ASSERT(H5Pset_filter(p, 307, H5Z_FLAG_MANDATORY, 1, &seven) >= 0);
        ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
        if (write_array(f, "a", p) != 0)
            FAILF("v%d bzip2: create/write through the connector failed", fmt);
        ASSERT(H5Fclose(f) >= 0);
        if (!is_zarr_store(fmt, store))
            FAILF("v%d bzip2: %s is not a zarr v%d store", fmt, store, fmt);
        snprintf(doc, sizeof doc, "%s/a/%s", store, fmt == 3 ? "zarr.json" : ".zarray");
        ASSERT((text = test_slurp(doc, &ncd)) != NULL);
        ncd = 4;
        if (!strstr(text, fmt == 3 ? "\"numcodecs.bz2\"" : "\"bz2\"") || !strstr(text, "\"level\": 7"))
            FAILF("v%d bzip2: the metadata has no bz2 codec of level 7: %s", fmt, text);
        free(text);
        chunk_file(fmt, store, "a", 1, 1, key, sizeof key);
        ASSERT((fp = fopen(key, "rb")) && fread(head, 1, 4, fp) == 4 && fclose(fp) == 0);
        ASSERT(memcmp(head, "BZh7", 4) == 0);
        ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0 && (d = H5Dopen2(f, "a", H5P_DEFAULT)) >= 0);
        ASSERT((q = H5Dget_create_plist(d)) >= 0);
        ASSERT(H5Pget_nfilters(q) == 1 && H5Pget_filter2(q, 0, &flags, &ncd, cd, 0, NULL, NULL) == 307);
        ASSERT(ncd == 1 && cd[0] == 7 && flags == H5Z_FLAG_MANDATORY);
        ASSERT(H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
        for (int a = 0; a < RT_D0; a++)
            for (int b = 0; b < RT_D1; b++)
                if (r[a][b] != rt_value(a, b))
                    FAILF("v%d bzip2: value [%d][%d] read back as %d", fmt, a, b, r[a][b]);
        H5Pclose(q);
        H5Dclose(d);
        H5Fclose(f);
        if (fmt == 2 && external_readers(2, store, "a", NULL) != 0)
            FAILF("v2 bzip2: zarr-python disagrees");
        /* block size 10: refused at H5Dcreate, the filter named */
        {
            char    msg[4096] = "";
            hsize_t dims[2]   = {RT_D0, RT_D1};
            hid_t   bad = H5Pcreate(H5P_DATASET_CREATE), sp = H5Screate_simple(2, dims, NULL), bd;
            ASSERT(H5Pset_chunk(bad, 2, chunk) >= 0 &&
                   H5Pset_filter(bad, 307, H5Z_FLAG_MANDATORY, 1, &ten) >= 0);
            ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0);
            H5E_BEGIN_TRY { bd = H5Dcreate2(f, "b", H5T_STD_I32LE, sp, H5P_DEFAULT, bad, H5P_DEFAULT); }
            H5E_END_TRY
            H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg); /* before any other API call */
            ASSERT(bd < 0);
            H5Sclose(sp);
            H5Fclose(f);
            H5Pclose(bad);
            if (!strstr(msg, "bzip2 filter (307)"))
                FAILF("v%d bzip2: block size 10 refused without naming the filter: %s", fmt, msg);
        }
        H5Pclose(p);
        H5Pclose(fapl);
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * szip (4) -> hdf5_szip: set_local's values and the chunk bytes, across types and chunk shapes
 * ------------------------------------------------------------------------------------------------ */
typedef struct szip_case {
    const char *name;
    hid_t       type; /* file and memory type (raw bytes written as they are) */
    int         nd;
    hsize_t     dims[2], chunk[2];
    unsigned    mask, ppb;
    bool        noise;   /* incompressible: native HDF5 skips the optional filter on those chunks */
    unsigned    want[4]; /* the cd_values native HDF5 reports */
} szip_case;

/* The raw chunk at `off` of `d` (malloc'ed, size in *n, filter mask in *mask). */
static uint8_t *
raw_chunk(hid_t d, const hsize_t *off, size_t *n, uint32_t *mask)
{
    hsize_t  nb = 0;
    uint8_t *b;
    if (H5Dget_chunk_storage_size(d, off, &nb) < 0 || !(b = malloc(nb + 1)))
        return NULL;
    *mask = 0;
    if (H5Dread_chunk(d, H5P_DEFAULT, off, mask, b) < 0) {
        free(b);
        return NULL;
    }
    *n = (size_t)nb;
    return b;
}

static int
szip_one(int fmt, const char *dir, const szip_case *c)
{
    char     native[4200], store[4200], what[128];
    size_t   es = H5Tget_size(c->type), nel = (size_t)(c->dims[0] * (c->nd > 1 ? c->dims[1] : 1));
    uint8_t *w = malloc(nel * es), *r = malloc(nel * es);
    uint32_t x = 12345;
    hid_t    p = H5Pcreate(H5P_DATASET_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS),
          s        = H5Screate_simple(c->nd, c->dims, NULL), nf, zf, nd, zd, np, zp, md;
    unsigned flags = 0, cd[8] = {0};
    size_t   ncd        = 8;
    hsize_t  nchunks[2] = {1, 1}, off[2] = {0, 0};
    int      skipped = 0;

    snprintf(what, sizeof what, "v%d szip %s", fmt, c->name);
    snprintf(native, sizeof native, "%s/%s.h5", dir, c->name);
    snprintf(store, sizeof store, "%s/v%d_%s.zarr", dir, fmt, c->name);
    ASSERT(w && r && p >= 0 && s >= 0);
    for (size_t i = 0; i < nel * es; i++) { /* smooth values, or noise */
        x    = x * 1103515245u + 12345u;
        w[i] = c->noise ? (uint8_t)(x >> 16) : (uint8_t)(i % es == es - 1 ? (i / es / 7) & 0x7 : 0);
    }
    ASSERT(H5Pset_chunk(p, c->nd, c->chunk) >= 0 && H5Pset_szip(p, c->mask, c->ppb) >= 0);
    ASSERT(H5Pset_fapl_zarr(fapl, fmt) >= 0);
    /* native reference; the same data through the connector */
    ASSERT((nf = H5Fcreate(native, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((nd = H5Dcreate2(nf, "a", c->type, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(nd, c->type, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
    ASSERT((zf = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    if ((zd = H5Dcreate2(zf, "a", c->type, s, H5P_DEFAULT, p, H5P_DEFAULT)) < 0)
        FAILF("%s: H5Dcreate through the connector failed", what);
    ASSERT(H5Dwrite(zd, c->type, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
    ASSERT(H5Dclose(zd) >= 0 && H5Fclose(zf) >= 0);
    /* H5Pget_filter2: native's set_local values, and the connector's after reopen */
    np = H5Dget_create_plist(nd);
    ASSERT(H5Pget_filter2(np, 0, &flags, &ncd, cd, 0, NULL, NULL) == H5Z_FILTER_SZIP);
    if (ncd != 4 || flags != H5Z_FLAG_OPTIONAL || memcmp(cd, c->want, sizeof c->want) != 0)
        FAILF("%s: native HDF5 reports flags %u cd[%zu] = %u %u %u %u, the test expects %u %u %u %u", what,
              flags, ncd, cd[0], cd[1], cd[2], cd[3], c->want[0], c->want[1], c->want[2], c->want[3]);
    ASSERT((zf = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0 && (zd = H5Dopen2(zf, "a", H5P_DEFAULT)) >= 0);
    zp = H5Dget_create_plist(zd);
    if (compare_filters(what, np, zp) != 0)
        return 1;
    memset(r, 0xA5, nel * es);
    ASSERT(H5Dread(zd, c->type, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    if (memcmp(w, r, nel * es) != 0)
        FAILF("%s: the data read back differs", what);
    /* the raw chunks: identical where native HDF5 applied the filter; where it skipped it (noise),
     * the connector's chunk written into a native dataset decodes through HDF5's filter */
    ASSERT((md = H5Dcreate2(nf, "moved", c->type, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
    for (int k = 0; k < c->nd; k++)
        nchunks[k] = (c->dims[k] + c->chunk[k] - 1) / c->chunk[k];
    for (hsize_t i = 0; i < nchunks[0]; i++)
        for (hsize_t j = 0; j < nchunks[1]; j++) {
            size_t   nn = 0, zn = 0;
            uint32_t nmask = 1, zmask = 1;
            uint8_t *nb, *zb;
            off[0] = i * c->chunk[0];
            off[1] = c->nd > 1 ? j * c->chunk[1] : 0;
            ASSERT((nb = raw_chunk(nd, off, &nn, &nmask)) && (zb = raw_chunk(zd, off, &zn, &zmask)));
            if (zmask != 0)
                FAILF("%s: the connector reports filter mask %u", what, zmask);
            if (nmask == 0 && (nn != zn || memcmp(nb, zb, nn) != 0))
                FAILF("%s: chunk (%llu,%llu) differs: native %zu bytes, zarr %zu", what,
                      (unsigned long long)i, (unsigned long long)j, nn, zn);
            if (!c->noise && nmask != 0)
                FAILF("%s: native HDF5 skipped szip on a compressible chunk", what);
            skipped += nmask != 0;
            ASSERT(H5Dwrite_chunk(md, H5P_DEFAULT, 0, off, zn, zb) >= 0);
            free(nb);
            free(zb);
        }
    if (c->noise && skipped == 0)
        FAILF("%s: native HDF5 applied szip to every noise chunk (the case tests the skipped ones)", what);
    memset(r, 0xA5, nel * es);
    ASSERT(H5Dread(md, c->type, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    if (memcmp(w, r, nel * es) != 0)
        FAILF("%s: the connector's chunks in a native file read back differently", what);
    H5Dclose(md);
    H5Pclose(np);
    H5Pclose(zp);
    H5Dclose(zd);
    H5Fclose(zf);
    H5Dclose(nd);
    H5Fclose(nf);
    H5Pclose(p);
    H5Pclose(fapl);
    H5Sclose(s);
    free(w);
    free(r);
    return 0;
}

/* The cases cover set_local's rules: bits per pixel from the precision (8, 16, 12 of a 16-bit type,
 * 32, 64), the byte order bit (LSB / MSB), the scanline (the chunk's fastest dimension; 128 blocks at
 * most; the whole chunk, at most 128 blocks, when the dimension is shorter than a block), K13/RAW
 * added and CHIP removed by H5Pset_szip; incompressible chunks. */
static int
test_szip(void)
{
    const char    *tmp = test_tmpdir("fszip");
    const unsigned NN = H5_SZIP_NN_OPTION_MASK, EC = H5_SZIP_EC_OPTION_MASK,
                   K13 = H5_SZIP_ALLOW_K13_OPTION_MASK, RAW = 128, LSB = 8, MSB = 16;
    hid_t u12 = H5Tcopy(H5T_STD_U16LE);
    ASSERT(tmp && u12 >= 0 && H5Tset_precision(u12, 12) >= 0);
    const szip_case cases[] = {
        {"i32le_nn", H5T_STD_I32LE, 2, {40, 30}, {16, 16}, NN, 8, false, {K13 | LSB | NN | RAW, 8, 32, 16}},
        {"i16be_ec", H5T_STD_I16BE, 1, {1000}, {300}, EC, 16, false, {K13 | EC | MSB | RAW, 16, 16, 300}},
        {"u8_wide", H5T_STD_U8LE, 1, {6000}, {5000}, NN, 32, false, {K13 | LSB | NN | RAW, 32, 8, 4096}},
        {"f64_long_line",
         H5T_IEEE_F64LE,
         2,
         {8, 3000},
         {4, 3000},
         NN,
         8,
         false,
         {K13 | LSB | NN | RAW, 8, 64, 1024}},
        {"f32_short_line",
         H5T_IEEE_F32BE,
         2,
         {50, 3},
         {20, 3},
         EC | H5_SZIP_CHIP_OPTION_MASK,
         8,
         false,
         {K13 | EC | MSB | RAW, 8, 32, 60}},
        {"u16_prec12", u12, 1, {500}, {250}, NN, 8, false, {K13 | LSB | NN | RAW, 8, 12, 250}},
        {"i32_noise", H5T_STD_I32LE, 1, {2000}, {700}, NN, 16, true, {K13 | LSB | NN | RAW, 16, 32, 700}},
    };
    if (need_plugins())
        return 1;
    for (int fmt = 2; fmt <= 3; fmt++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            if (szip_one(fmt, tmp, &cases[i]) != 0)
                return 1;
    /* refused at create with the filter named: a type szip can't take, a block larger than a chunk */
    {
        char    store[4200], msg[4096];
        hsize_t dims[1] = {100}, chunk[1] = {4};
        hid_t   fapl = H5Pcreate(H5P_FILE_ACCESS), f, d, s = H5Screate_simple(1, dims, NULL),
              p = H5Pcreate(H5P_DATASET_CREATE), t16 = H5Tcreate(H5T_OPAQUE, 16);
        snprintf(store, sizeof store, "%s/bad.zarr", tmp);
        ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0 &&
               (f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
        ASSERT(H5Pset_chunk(p, 1, chunk) >= 0 && H5Pset_szip(p, NN, 8) >= 0);
        for (int k = 0; k < 2; k++) {
            msg[0] = '\0';
            H5E_BEGIN_TRY
            {
                d = H5Dcreate2(f, "b", k ? H5T_STD_I32LE : t16, s, H5P_DEFAULT, p, H5P_DEFAULT);
                H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
            }
            H5E_END_TRY
            ASSERT(d < 0);
            if (!strstr(msg, "szip filter (4)") || !strstr(msg, k ? "greater than" : "can't be applied"))
                FAILF("szip case %d refused without the reason: %s", k, msg);
        }
        H5Tclose(t16);
        H5Pclose(p);
        H5Sclose(s);
        H5Fclose(f);
        H5Pclose(fapl);
    }
    H5Tclose(u12);
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * scaleoffset (6) -> hdf5_scaleoffset: set_local's values, the values read back and the chunk bytes
 * ------------------------------------------------------------------------------------------------ */
typedef struct so_case {
    const char *name;
    hid_t       type; /* file type; memory: long long for integers, double for floats */
    int         nd;
    hsize_t     dims[2], chunk[2];
    int         scale_type, factor;
    int         fill;       /* 0 default, 1 user-defined (fillv), 2 undefined */
    double      fillv;      /* also put in the data, every 13th element */
    double      base, span; /* values base + [0, span) */
    bool        flat;       /* the first chunk all one value (not the fill value) */
    bool        full;       /* chunks at the full width: native HDF5 1.14.5 can't read them back */
} so_case;

static int
so_one(int fmt, const char *dir, const so_case *c)
{
    char     native[4200], store[4200], what[128];
    bool     isf = H5Tget_class(c->type) == H5T_FLOAT;
    hid_t    mt  = isf ? H5T_NATIVE_DOUBLE : H5T_NATIVE_LLONG;
    size_t   nel = (size_t)(c->dims[0] * (c->nd > 1 ? c->dims[1] : 1)), per = 1;
    uint8_t *w = malloc(nel * 8), *r = malloc(nel * 8), *nr = malloc(nel * 8);
    uint32_t x = 777;
    hid_t    p = H5Pcreate(H5P_DATASET_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS),
          s            = H5Screate_simple(c->nd, c->dims, NULL), nf, zf, nd, zd, np, zp, md;
    hsize_t nchunks[2] = {1, 1}, off[2] = {0, 0};
    herr_t  st;

    snprintf(what, sizeof what, "v%d scaleoffset %s", fmt, c->name);
    snprintf(native, sizeof native, "%s/%s.h5", dir, c->name);
    snprintf(store, sizeof store, "%s/v%d_%s.zarr", dir, fmt, c->name);
    ASSERT(w && r && nr && p >= 0 && s >= 0);
    for (int k = 0; k < c->nd; k++)
        per *= (size_t)c->chunk[k];
    for (size_t i = 0; i < nel; i++) {
        double v;
        x = x * 1103515245u + 12345u;
        v = c->base + c->span * (double)(x >> 8) / 16777216.0;
        if (c->flat &&
            (c->nd == 1 ? i < c->chunk[0] : i / c->dims[1] < c->chunk[0] && i % c->dims[1] < c->chunk[1]))
            v = c->base + 3;
        else if (i % 13 == 5)
            v = c->fillv;
        if (c->full && i < 2) /* the extremes: a span only the full width holds */
            v = i ? c->base + c->span : c->base;
        if (isf)
            memcpy(w + 8 * i, &v, 8);
        else {
            long long l = (long long)v;
            memcpy(w + 8 * i, &l, 8);
        }
    }
    ASSERT(H5Pset_chunk(p, c->nd, c->chunk) >= 0);
    if (c->factor >= 0)
        ASSERT(H5Pset_scaleoffset(p, (H5Z_SO_scale_type_t)c->scale_type, c->factor) >= 0);
    else /* H5Pset_scaleoffset refuses a negative D; the filter takes it (10^-D) */
        ASSERT(H5Pset_filter(p, H5Z_FILTER_SCALEOFFSET, H5Z_FLAG_OPTIONAL, 2,
                             (const unsigned[]){(unsigned)c->scale_type, (unsigned)c->factor}) >= 0);
    if (c->fill == 1) {
        long long l = (long long)c->fillv;
        ASSERT(H5Pset_fill_value(p, mt, isf ? (const void *)&c->fillv : (const void *)&l) >= 0);
    }
    if (c->fill == 2)
        ASSERT(H5Pset_fill_value(p, c->type, NULL) >= 0);
    ASSERT(H5Pset_fapl_zarr(fapl, fmt) >= 0);
    ASSERT((nf = H5Fcreate(native, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((nd = H5Dcreate2(nf, "a", c->type, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(nd, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
    /* reopened, so reads decode the stored chunks (not HDF5's chunk cache) */
    ASSERT(H5Dclose(nd) >= 0 && H5Fclose(nf) >= 0);
    ASSERT((nf = H5Fopen(native, H5F_ACC_RDWR, H5P_DEFAULT)) >= 0 &&
           (nd = H5Dopen2(nf, "a", H5P_DEFAULT)) >= 0);
    ASSERT((zf = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    if ((zd = H5Dcreate2(zf, "a", c->type, s, H5P_DEFAULT, p, H5P_DEFAULT)) < 0)
        FAILF("%s: H5Dcreate through the connector failed", what);
    ASSERT(H5Dwrite(zd, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
    /* the dcpl right after create, and after reopen: native's set_local values */
    np = H5Dget_create_plist(nd);
    zp = H5Dget_create_plist(zd);
    if (compare_filters(what, np, zp) != 0)
        return 1;
    H5Pclose(zp);
    ASSERT(H5Dclose(zd) >= 0 && H5Fclose(zf) >= 0);
    ASSERT((zf = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0 && (zd = H5Dopen2(zf, "a", H5P_DEFAULT)) >= 0);
    zp = H5Dget_create_plist(zd);
    if (compare_filters(what, np, zp) != 0)
        return 1;
    /* values: what native HDF5 reads (lossy ones included), bit for bit */
    memset(r, 0xA5, nel * 8);
    ASSERT(H5Dread(zd, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    H5E_BEGIN_TRY { st = H5Dread(nd, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, nr); }
    H5E_END_TRY
    if (c->full) {
        /* HDF5 1.14.5 refuses its own full-width chunks ("minimum number of bits exceeds size of
         * type"); the connector reads them: the values written, exactly */
        if (st >= 0)
            FAILF("%s: native HDF5 read full-width chunks (the case expects 1.14.5's refusal)", what);
        if (memcmp(r, w, nel * 8) != 0)
            FAILF("%s: full-width chunks read back differently", what);
    }
    else {
        ASSERT(st >= 0);
        if (memcmp(r, nr, nel * 8) != 0) {
            for (size_t i = 0; i < nel; i++)
                if (memcmp(r + 8 * i, nr + 8 * i, 8) != 0)
                    FAILF("%s: element %zu reads differently from native HDF5's", what, i);
        }
    }
    /* the raw chunks equal native's; the connector's chunks decode in a native file */
    ASSERT((md = H5Dcreate2(nf, "moved", c->type, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
    for (int k = 0; k < c->nd; k++)
        nchunks[k] = (c->dims[k] + c->chunk[k] - 1) / c->chunk[k];
    for (hsize_t i = 0; i < nchunks[0]; i++)
        for (hsize_t j = 0; j < nchunks[1]; j++) {
            size_t   nn = 0, zn = 0;
            uint32_t nmask = 1, zmask = 1;
            uint8_t *nb, *zb;
            off[0] = i * c->chunk[0];
            off[1] = c->nd > 1 ? j * c->chunk[1] : 0;
            ASSERT((nb = raw_chunk(nd, off, &nn, &nmask)) && (zb = raw_chunk(zd, off, &zn, &zmask)));
            if (zmask != 0 || nmask != 0)
                FAILF("%s: filter masks %u (native) %u (connector)", what, nmask, zmask);
            if (nn != zn || memcmp(nb, zb, nn) != 0)
                FAILF("%s: chunk (%llu,%llu) differs: native %zu bytes, zarr %zu", what,
                      (unsigned long long)i, (unsigned long long)j, nn, zn);
            ASSERT(H5Dwrite_chunk(md, H5P_DEFAULT, 0, off, zn, zb) >= 0);
            free(nb);
            free(zb);
        }
    if (!c->full) {
        memset(r, 0xA5, nel * 8);
        ASSERT(H5Dread(md, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
        if (memcmp(r, nr, nel * 8) != 0)
            FAILF("%s: the connector's chunks in a native file read back differently", what);
    }
    H5Dclose(md);
    H5Pclose(np);
    H5Pclose(zp);
    H5Dclose(zd);
    H5Fclose(zf);
    H5Dclose(nd);
    H5Fclose(nf);
    H5Pclose(p);
    H5Pclose(fapl);
    H5Sclose(s);
    free(w);
    free(r);
    free(nr);
    return 0;
}

static int
test_scaleoffset(void)
{
    const char *tmp = test_tmpdir("fso");
    const int   I = H5Z_SO_INT, D = H5Z_SO_FLOAT_DSCALE;
    /* name, type, nd, dims, chunk, scale type, factor, fill (0 default, 1 user, 2 undefined), fill value,
     * base, span, flat first chunk, full width */
    const so_case cases[] = {
        {"i8_auto", H5T_STD_I8LE, 2, {20, 30}, {10, 16}, I, 0, 0, 0, -60, 100, false, false},
        {"u8_nofill_flat", H5T_STD_U8LE, 1, {300}, {128}, I, 0, 2, 0, 10, 50, true, false},
        {"i8_nofill_full", H5T_STD_I8LE, 1, {64}, {32}, I, 0, 2, 0, -128, 255, false, true},
        {"i16be_user_fill", H5T_STD_I16BE, 1, {500}, {100}, I, 0, 1, -7, -3000, 5000, true, false},
        {"u16_minbits5_lossy", H5T_STD_U16LE, 1, {400}, {150}, I, 5, 0, 0, 100, 90, false, false},
        {"i16_minbits16", H5T_STD_I16LE, 1, {100}, {40}, I, 16, 0, 0, -20000, 40000, false, false},
        {"u32_user_fill", H5T_STD_U32LE, 2, {12, 40}, {5, 40}, I, 0, 1, 5, 1000000, 70000, false, false},
        {"i32be_nofill", H5T_STD_I32BE, 1, {256}, {64}, I, 0, 2, 0, -100000, 3, true, false},
        {"u32_full", H5T_STD_U32LE, 1, {64}, {64}, I, 0, 0, 0, 1, 4294967294.0, false, true},
        {"i64_auto", H5T_STD_I64LE, 2, {100, 30}, {50, 30}, I, 0, 0, 0, 0, 4095, false, false},
        {"i64_minbits12_lossy", H5T_STD_I64LE, 1, {1000}, {300}, I, 12, 0, 0, 0, 8191, false, false},
        {"u64be_minbits40", H5T_STD_U64BE, 1, {200}, {64}, I, 40, 2, 0, 1e12, 1e11, false, false},
        {"f32_d2", H5T_IEEE_F32LE, 2, {30, 20}, {16, 20}, D, 2, 0, 0, -50, 100, false, false},
        {"f32be_d3_nofill", H5T_IEEE_F32BE, 1, {500}, {128}, D, 3, 2, 0, 1, 2, true, false},
        {"f32_d1_user_fill", H5T_IEEE_F32LE, 1, {300}, {100}, D, 1, 1, -999, 5, 1000, false, false},
        {"f64_d4", H5T_IEEE_F64LE, 2, {100, 30}, {50, 30}, D, 4, 0, 0, -1e5, 2e5, false, false},
        {"f64be_dneg1_user_fill", H5T_IEEE_F64BE, 1, {400}, {128}, D, -1, 1, 1e30, -1e6, 3e6, true, false},
        {"f64_d0_nofill", H5T_IEEE_F64LE, 1, {256}, {256}, D, 0, 2, 0, 0.25, 1e6, false, false},
    };
    if (need_plugins())
        return 1;
    ASSERT(tmp);
    for (int fmt = 2; fmt <= 3; fmt++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            if (so_one(fmt, tmp, &cases[i]) != 0)
                return 1;
    /* refused at create with the filter named: a type it can't take, a scale type not the type's,
     * more minimum bits than the type has */
    {
        char    store[4200], msg[4096];
        hsize_t dims[1] = {100}, chunk[1] = {10};
        hid_t   fapl = H5Pcreate(H5P_FILE_ACCESS), f, d, s = H5Screate_simple(1, dims, NULL),
              t16 = H5Tcopy(H5T_C_S1);
        const struct {
            hid_t       type;
            int         st, factor;
            const char *needle;
        } bad[] = {
            {t16, H5Z_SO_INT, 0, "can't be applied"},
            {H5T_STD_I32LE, H5Z_SO_FLOAT_DSCALE, 2, "scale type 0"},
            {H5T_IEEE_F32LE, H5Z_SO_FLOAT_ESCALE, 2, "E-scaling"},
            {H5T_STD_U8LE, H5Z_SO_INT, 9, "9 minimum bits"},
        };
        H5Tset_size(t16, 4);
        snprintf(store, sizeof store, "%s/bad.zarr", tmp);
        ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0 &&
               (f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            hid_t p = H5Pcreate(H5P_DATASET_CREATE);
            ASSERT(H5Pset_chunk(p, 1, chunk) >= 0);
            ASSERT(H5Pset_filter(p, H5Z_FILTER_SCALEOFFSET, H5Z_FLAG_OPTIONAL, 2,
                                 (const unsigned[]){(unsigned)bad[k].st, (unsigned)bad[k].factor}) >= 0);
            msg[0] = '\0';
            H5E_BEGIN_TRY
            {
                d = H5Dcreate2(f, "b", bad[k].type, s, H5P_DEFAULT, p, H5P_DEFAULT);
                H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
            }
            H5E_END_TRY
            ASSERT(d < 0);
            if (!strstr(msg, "scale-offset filter (6)") || !strstr(msg, bad[k].needle))
                FAILF("scale-offset case %zu refused without the reason: %s", k, msg);
            H5Pclose(p);
        }
        H5Tclose(t16);
        H5Sclose(s);
        H5Fclose(f);
        H5Pclose(fapl);
    }
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(plugins_native), TEST_ENTRY(golden_h5z),  TEST_ENTRY(dcpl_roundtrip),
    TEST_ENTRY(lz4_cd_values),  TEST_ENTRY(unsupported), TEST_ENTRY(left_out),
    TEST_ENTRY(open_foreign),   TEST_ENTRY(bzip2),       TEST_ENTRY(szip),
    TEST_ENTRY(scaleoffset),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
