/*
 * test_shard.c: sharded arrays from HDF5 programs (vol/shard.c, docs/FORMAT.md "Sharding"):
 *  - policy: datasets created under the info key shard_bytes get the shard shape of the documented
 *    policy (1-D balanced, 3-D grown along the slowest dims first, capped by the extent, by finite max
 *    dims, one chunk along an unlimited dim, no sharding when a shard would hold one chunk); the
 *    zarr.json has sharding_indexed with that chunk grid, the HDF5 chunk as inner chunk_shape, index
 *    bytes + crc32c at the end; the size suffixes;
 *  - inner codecs: exactly the codecs the same dataset gets unsharded (no filter, deflate, shuffle +
 *    zstd, the configured codec);
 *  - rules: shard_bytes in a config file's top level and [path GLOB] rules;
 *  - H5Pset_zarr_shard: wins over shard_bytes, survives H5Pcopy, H5Pget_zarr_shard, removal; errors at
 *    H5Dcreate (not a multiple of the chunk, rank, not chunked, a zarr v2 store); v2 stores ignore a
 *    global shard_bytes; bad shard_bytes values fail the create naming the key (info and file line);
 *  - data: H5Dwrite/H5Dread round trips with partial hyperslabs across shard borders (values
 *    asserted), after reopening too; H5Pget_chunk and the filters report the inner chunk; records
 *    appended along an unlimited dim (H5Dset_extent), one shard each; variable-length strings;
 *  - other writers' sharded arrays (made here through the core from zarr.json text): the HDF5 chunk is
 *    the inner chunk (innermost for nested sharding; the shard after a transpose), filters are the
 *    inner codecs', values read.
 * With H5ZARR_SHARD_OUT=<dir> the test interop_store leaves its store there for
 * tests/scripts/shard_interop.sh (zarrita, h5dump, h5ls).
 */
#include "h5test.h"
#include "h5zarr/zarr.h"
#include "runner.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#define F_ZSTD 32015

static char tmp[4096];

static int
setup(const char *name)
{
    const char *t = test_tmpdir(name);
    if (!t)
        return -1;
    snprintf(tmp, sizeof tmp, "%s", t);
    unsetenv("H5ZARR_CONFIG");
    return 0;
}

static const char *
path_in(const char *rel)
{
    static char buf[8][4096];
    static int  k;
    char       *b = buf[k++ % 8];
    snprintf(b, 4096, "%s/%s", tmp, rel);
    return b;
}

static int
put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static hid_t
fapl_opts(int version, const char *opts)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fapl_zarr_opts(fapl, version, opts) < 0) {
        H5Pclose(fapl);
        return H5I_INVALID_HID;
    }
    return fapl;
}

/* The array document of `name` in `store` (new reference) or NULL. */
static struct json_object *
doc(const char *store, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s/zarr.json", store, name);
    return json_object_from_file(p);
}

/* Compact JSON text of j[key] (one of four static buffers; "" if absent). */
static const char *
member(struct json_object *j, const char *key)
{
    static char         buf[4][8192];
    static int          k;
    char               *b = buf[k++ % 4];
    struct json_object *v;
    b[0] = '\0';
    if (j && json_object_object_get_ex(j, key, &v))
        snprintf(b, 8192, "%s", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
    return b;
}

#define INDEX_CODECS "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"crc32c\"}]"
#define BYTES_LE     "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]"

/* Checks the array `name` of `store`: chunk grid `grid` (e.g. "[10,20]"), and when `inner` is not NULL
 * one sharding_indexed codec with chunk_shape `inner`, inner codecs `codecs` (NULL: bytes little only),
 * index bytes + crc32c at the end; when `inner` is NULL, unsharded with codecs `codecs` (NULL: bytes). */
static int
check_meta(const char *store, const char *name, const char *grid, const char *inner, const char *codecs)
{
    struct json_object *j = doc(store, name), *cl, *c0, *cfg;
    char                want[512];
    if (!j)
        FAILF("%s: no zarr.json", name);
    snprintf(want, sizeof want, "{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":%s}}", grid);
    if (strcmp(member(j, "chunk_grid"), want) != 0)
        FAILF("%s: chunk_grid %s, want %s", name, member(j, "chunk_grid"), want);
    ASSERT(json_object_object_get_ex(j, "codecs", &cl));
    if (!inner) {
        if (strcmp(member(j, "codecs"), codecs ? codecs : BYTES_LE) != 0)
            FAILF("%s: unsharded codecs %s, want %s", name, member(j, "codecs"), codecs ? codecs : BYTES_LE);
        json_object_put(j);
        return 0;
    }
    if (json_object_array_length(cl) != 1)
        FAILF("%s: codecs %s, want one sharding_indexed", name, member(j, "codecs"));
    c0 = json_object_array_get_idx(cl, 0);
    if (strcmp(member(c0, "name"), "\"sharding_indexed\"") != 0)
        FAILF("%s: codec %s, want sharding_indexed", name, member(c0, "name"));
    ASSERT(json_object_object_get_ex(c0, "configuration", &cfg));
    if (strcmp(member(cfg, "chunk_shape"), inner) != 0)
        FAILF("%s: inner chunk_shape %s, want %s", name, member(cfg, "chunk_shape"), inner);
    if (strcmp(member(cfg, "codecs"), codecs ? codecs : BYTES_LE) != 0)
        FAILF("%s: inner codecs %s, want %s", name, member(cfg, "codecs"), codecs ? codecs : BYTES_LE);
    if (strcmp(member(cfg, "index_codecs"), INDEX_CODECS) != 0)
        FAILF("%s: index codecs %s", name, member(cfg, "index_codecs"));
    if (strcmp(member(cfg, "index_location"), "\"end\"") != 0)
        FAILF("%s: index_location %s", name, member(cfg, "index_location"));
    json_object_put(j);
    return 0;
}

/* The codecs JSON text of unsharded array `name` (static buffer). */
static const char *
codecs_of(const char *store, const char *name)
{
    static char         buf[8192];
    struct json_object *j = doc(store, name);
    snprintf(buf, sizeof buf, "%s", member(j, "codecs"));
    json_object_put(j);
    return buf;
}

/* Creates dataset `name` in `f`: type `type`, dims/maxdims (NULL = dims), chunks (NULL: contiguous),
 * an optional deflate level (>= 0), shuffle+zstd (zstd >= 1: that level), and a shard shape (NULL: none).
 * Returns the open dataset or negative. */
static hid_t
mk(hid_t f, const char *name, hid_t type, int rank, const hsize_t *dims, const hsize_t *maxdims,
   const hsize_t *chunks, int deflate, int zstd, const hsize_t *shard)
{
    hid_t s = H5Screate_simple(rank, dims, maxdims), p = H5Pcreate(H5P_DATASET_CREATE), d;
    if (chunks)
        H5Pset_chunk(p, rank, chunks);
    if (deflate >= 0)
        H5Pset_deflate(p, (unsigned)deflate);
    if (zstd > 0) {
        unsigned cd = (unsigned)zstd;
        H5Pset_shuffle(p);
        H5Pset_filter(p, F_ZSTD, H5Z_FLAG_MANDATORY, 1, &cd);
    }
    if (shard)
        H5Pset_zarr_shard(p, rank, shard);
    d = H5Dcreate2(f, name, type, s, H5P_DEFAULT, p, H5P_DEFAULT);
    H5Pclose(p);
    H5Sclose(s);
    return d;
}

/* H5Dcreate2 of `name` with dcpl `p` must fail with a message holding `want1` and `want2`. */
static int
expect_dcreate_fails(hid_t f, const char *name, int rank, const hsize_t *dims, hid_t p, const char *want1,
                     const char *want2)
{
    char  msg[4096] = "";
    hid_t s         = H5Screate_simple(rank, dims, NULL), d;
    H5E_BEGIN_TRY
    {
        d = H5Dcreate2(f, name, H5T_STD_I32LE, s, H5P_DEFAULT, p, H5P_DEFAULT);
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
    }
    H5E_END_TRY
    H5Sclose(s);
    if (d >= 0) {
        H5Dclose(d);
        FAILF("H5Dcreate2('%s') succeeded", name);
    }
    if (!strstr(msg, want1) || (want2 && !strstr(msg, want2)))
        FAILF("H5Dcreate2('%s'): error lacks \"%s\" / \"%s\": %s", name, want1, want2 ? want2 : "", msg);
    return 0;
}

/* ---- the policy ----------------------------------------------------------------------------------- */
static int
test_policy(void)
{
    hid_t       fapl = fapl_opts(3, "shard_bytes=64KiB"), f, d;
    const char *st;
    ASSERT(setup("shard_policy") == 0 && fapl >= 0);
    st = path_in("p.zarr");
    ASSERT((f = H5Fcreate(st, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    {
        /* 1-D: chunks of 4000 B, 16 per shard; 100 chunks -> 7 shards, spread evenly: 15 chunks each */
        hsize_t n = 100000, c = 1000;
        ASSERT((d = mk(f, "one", H5T_STD_I32LE, 1, &n, NULL, &c, -1, 0, NULL)) >= 0);
        H5Dclose(d);
    }
    {
        /* 3-D float64, chunks 2x5x10 = 800 B, 81 per shard: dim 0 whole (10 chunks), dim 1 whole
         * (6: 60), dim 2 one chunk (81 / 60) */
        hsize_t n[3] = {20, 30, 40}, c[3] = {2, 5, 10};
        ASSERT((d = mk(f, "three", H5T_IEEE_F64LE, 3, n, NULL, c, -1, 0, NULL)) >= 0);
        H5Dclose(d);
    }
    {
        /* capped by the extent: a 4x6 array of 2x3 chunks is one shard, the whole array */
        hsize_t n[2] = {4, 6}, c[2] = {2, 3};
        ASSERT((d = mk(f, "small", H5T_STD_I32LE, 2, n, NULL, c, -1, 0, NULL)) >= 0);
        H5Dclose(d);
    }
    {
        /* finite max dims bound the shard, not the current extent: 10x10 of max 100x10, chunks 10x10 */
        hsize_t n[2] = {10, 10}, mx[2] = {100, 10}, c[2] = {10, 10};
        ASSERT((d = mk(f, "maxd", H5T_STD_I32LE, 2, n, mx, c, -1, 0, NULL)) >= 0);
        H5Dclose(d);
    }
    {
        /* unlimited dim (records): one chunk along it, the fixed dim whole */
        hsize_t n[2] = {0, 1000}, mx[2] = {H5S_UNLIMITED, 1000}, c[2] = {1, 100};
        ASSERT((d = mk(f, "rec", H5T_STD_I32LE, 2, n, mx, c, -1, 0, NULL)) >= 0);
        H5Dclose(d);
    }
    {
        /* 1-D unlimited: a shard would be one chunk: unsharded */
        hsize_t n = 0, mx = H5S_UNLIMITED, c = 100;
        ASSERT((d = mk(f, "rec1", H5T_STD_I32LE, 1, &n, &mx, &c, -1, 0, NULL)) >= 0);
        H5Dclose(d);
    }
    {
        /* a chunk above shard_bytes: unsharded */
        hsize_t n = 100000, c = 50000;
        ASSERT((d = mk(f, "big", H5T_STD_I32LE, 1, &n, NULL, &c, -1, 0, NULL)) >= 0);
        H5Dclose(d);
    }
    {
        /* a contiguous dataset: its auto chunk (the whole 100x100 array, 40 KB) is one shard's worth:
         * unsharded */
        hsize_t n[2] = {100, 100};
        ASSERT((d = mk(f, "contig", H5T_STD_I32LE, 2, n, NULL, NULL, -1, 0, NULL)) >= 0);
        H5Dclose(d);
    }
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(check_meta(st, "one", "[15000]", "[1000]", NULL) == 0);
    ASSERT(check_meta(st, "three", "[20,30,10]", "[2,5,10]", NULL) == 0);
    ASSERT(check_meta(st, "small", "[4,6]", "[2,3]", NULL) == 0);
    ASSERT(check_meta(st, "maxd", "[100,10]", "[10,10]", NULL) == 0);
    ASSERT(check_meta(st, "rec", "[1,1000]", "[1,100]", NULL) == 0);
    ASSERT(check_meta(st, "rec1", "[100]", NULL, NULL) == 0);
    ASSERT(check_meta(st, "big", "[50000]", NULL, NULL) == 0);
    ASSERT(check_meta(st, "contig", "[100,100]", NULL, NULL) == 0);
    H5Pclose(fapl);

    /* the suffixes: 65536, 64k, 64K, 64 KiB are one size; 1MiB grows the 1-D shard to the whole array */
    {
        const char *opts[] = {"shard_bytes=65536", "shard_bytes=64k", "shard_bytes=64kib", "shard_bytes=1MiB",
                              "shard_bytes=0"};
        const char *grid[] = {"[15000]", "[15000]", "[15000]", "[100000]", "[1000]"};
        for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
            hsize_t n = 100000, c = 1000;
            char    name[32];
            ASSERT((fapl = fapl_opts(3, opts[i])) >= 0);
            snprintf(name, sizeof name, "s%zu.zarr", i);
            st = path_in(name);
            ASSERT((f = H5Fcreate(st, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
            ASSERT((d = mk(f, "one", H5T_STD_I32LE, 1, &n, NULL, &c, -1, 0, NULL)) >= 0);
            H5Dclose(d);
            ASSERT(H5Fclose(f) >= 0);
            if (check_meta(st, "one", grid[i], i < 4 ? "[1000]" : NULL, NULL))
                FAILF("with %s", opts[i]);
            H5Pclose(fapl);
        }
    }
    return 0;
}

/* ---- inner codecs: what the unsharded dataset gets --------------------------------------------------- */
static int
test_inner_codecs(void)
{
    const char *cfgs[] = {"", "codec=zstd:1"};
    ASSERT(setup("shard_codecs") == 0);
    for (int k = 0; k < 2; k++) {
        hid_t       fu, fs, d, fapl_u, fapl_s;
        char        opts[128], un[32], sh[32];
        const char *su, *ss;
        hsize_t     n[2] = {64, 64}, c[2] = {8, 8};
        snprintf(opts, sizeof opts, "%s shard_bytes=4KiB", cfgs[k]);
        ASSERT((fapl_u = fapl_opts(3, cfgs[k])) >= 0 && (fapl_s = fapl_opts(3, opts)) >= 0);
        snprintf(un, sizeof un, "u%d.zarr", k);
        snprintf(sh, sizeof sh, "s%d.zarr", k);
        su = path_in(un);
        ss = path_in(sh);
        ASSERT((fu = H5Fcreate(su, H5F_ACC_TRUNC, H5P_DEFAULT, fapl_u)) >= 0);
        ASSERT((fs = H5Fcreate(ss, H5F_ACC_TRUNC, H5P_DEFAULT, fapl_s)) >= 0);
        for (hid_t f = fu;; f = fs) {
            ASSERT((d = mk(f, "plain", H5T_STD_I32LE, 2, n, NULL, c, -1, 0, NULL)) >= 0 && H5Dclose(d) >= 0);
            ASSERT((d = mk(f, "deflate", H5T_STD_I32LE, 2, n, NULL, c, 4, 0, NULL)) >= 0 && H5Dclose(d) >= 0);
            ASSERT((d = mk(f, "zstd", H5T_IEEE_F32BE, 2, n, NULL, c, -1, 2, NULL)) >= 0 && H5Dclose(d) >= 0);
            if (f == fs)
                break;
        }
        ASSERT(H5Fclose(fu) >= 0 && H5Fclose(fs) >= 0);
        /* 8x8 int32 = 256 B, 16 per 4 KiB shard: 8 chunks' rows (the 64 rows), then 2 along dim 1 */
        ASSERT(check_meta(ss, "plain", "[64,16]", "[8,8]", codecs_of(su, "plain")) == 0);
        ASSERT(check_meta(ss, "deflate", "[64,16]", "[8,8]", codecs_of(su, "deflate")) == 0);
        ASSERT(check_meta(ss, "zstd", "[64,16]", "[8,8]", codecs_of(su, "zstd")) == 0);
        /* the unsharded references are what vol/filter.c and the codec key map to */
        ASSERT(strstr(codecs_of(su, "deflate"), "\"numcodecs.zlib\"") &&
               strstr(codecs_of(su, "deflate"), "\"level\":4"));
        ASSERT(strstr(codecs_of(su, "zstd"), "\"numcodecs.shuffle\"") &&
               strstr(codecs_of(su, "zstd"), "\"level\":2") && strstr(codecs_of(su, "zstd"), "\"big\""));
        ASSERT(!k == !strstr(codecs_of(su, "plain"), "\"zstd\""));
        H5Pclose(fapl_u);
        H5Pclose(fapl_s);
    }
    return 0;
}

/* ---- config file: top level and rules ----------------------------------------------------------------- */
static int
test_config_rules(void)
{
    char        conf[4096];
    hid_t       fapl    = h5t_zarr_fapl(3), f, d;
    const char *names[] = {"top.zarr", "rule.zarr", "off.zarr"};
    const char *grid[]  = {"[32]", "[128]", "[8]"};
    ASSERT(setup("shard_rules") == 0 && fapl >= 0);
    snprintf(conf, sizeof conf, "%s/h5zarr.conf", tmp);
    ASSERT(put_file(conf, "shard_bytes = 128      # 4 chunks of 8 int32\n"
                          "[path *rule.zarr]\n"
                          "shard_bytes = 512 \n"
                          "[path *off.zarr]\n"
                          "shard_bytes = 0\n") == 0);
    setenv("H5ZARR_CONFIG", conf, 1);
    for (int i = 0; i < 3; i++) {
        hsize_t n = 1000, c = 8;
        ASSERT((f = H5Fcreate(path_in(names[i]), H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
        ASSERT((d = mk(f, "x", H5T_STD_I32LE, 1, &n, NULL, &c, -1, 0, NULL)) >= 0);
        H5Dclose(d);
        ASSERT(H5Fclose(f) >= 0);
        if (check_meta(path_in(names[i]), "x", grid[i], i < 2 ? "[8]" : NULL, NULL))
            FAILF("store %s", names[i]);
    }
    /* the info wins over the file */
    {
        hid_t   fi = fapl_opts(3, "shard_bytes=64"), n1;
        hsize_t n = 1000, c = 8;
        ASSERT(fi >= 0 && (f = H5Fcreate(path_in("rule.zarr"), H5F_ACC_TRUNC, H5P_DEFAULT, fi)) >= 0);
        ASSERT((n1 = mk(f, "x", H5T_STD_I32LE, 1, &n, NULL, &c, -1, 0, NULL)) >= 0);
        H5Dclose(n1);
        ASSERT(H5Fclose(f) >= 0);
        ASSERT(check_meta(path_in("rule.zarr"), "x", "[16]", "[8]", NULL) == 0);
        H5Pclose(fi);
    }
    unsetenv("H5ZARR_CONFIG");
    H5Pclose(fapl);
    return 0;
}

/* ---- bad values ------------------------------------------------------------------------------------- */
static int
test_bad_values(void)
{
    const char *bad[] = {"-1", "12XB", "2TiB", "1.5MiB", "", "MiB", "99999999999999999999"};
    char        conf[4096], text[256], opts[128];
    ASSERT(setup("shard_bad") == 0);
    snprintf(conf, sizeof conf, "%s/bad.conf", tmp);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char  msg[4096] = "";
        hid_t fapl, f;
        /* the info string */
        snprintf(opts, sizeof opts, "shard_bytes=%s", bad[i]);
        ASSERT((fapl = fapl_opts(3, opts)) >= 0);
        H5E_BEGIN_TRY
        {
            f = H5Fcreate(path_in("x.zarr"), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
            H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
        }
        H5E_END_TRY
        H5Pclose(fapl);
        if (f >= 0 || !strstr(msg, "key 'shard_bytes'") || !strstr(msg, "KiB, MiB or GiB"))
            FAILF("info '%s': created or message lacks the key: %s", opts, msg);
        /* the file, at line 2 */
        snprintf(text, sizeof text, "version = 3\nshard_bytes = %s\n", bad[i]);
        ASSERT(put_file(conf, text) == 0);
        setenv("H5ZARR_CONFIG", conf, 1);
        msg[0] = '\0';
        ASSERT((fapl = h5t_zarr_fapl(3)) >= 0);
        H5E_BEGIN_TRY
        {
            f = H5Fcreate(path_in("y.zarr"), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
            H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
        }
        H5E_END_TRY
        unsetenv("H5ZARR_CONFIG");
        H5Pclose(fapl);
        if (f >= 0 || !strstr(msg, conf) || !strstr(msg, "line 2") || !strstr(msg, "key 'shard_bytes'"))
            FAILF("file value '%s': created or message lacks file/line/key: %s", bad[i], msg);
        ASSERT(!h5t_path_exists(tmp, "x.zarr") && !h5t_path_exists(tmp, "y.zarr"));
    }
    return 0;
}

/* ---- H5Pset_zarr_shard ------------------------------------------------------------------------------ */
static int
test_set_shard(void)
{
    hid_t       fapl = fapl_opts(3, "shard_bytes=1GiB"), f, d, p, q, pl;
    hsize_t     n[2] = {12, 16}, c[2] = {3, 4}, sh[2] = {6, 8}, got[2] = {0, 0};
    const char *st;
    ASSERT(setup("shard_set") == 0 && fapl >= 0);
    st = path_in("set.zarr");
    ASSERT((f = H5Fcreate(st, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    /* wins over shard_bytes (which would make the whole array one shard) */
    ASSERT((d = mk(f, "a", H5T_STD_I32LE, 2, n, NULL, c, -1, 0, sh)) >= 0);
    H5Dclose(d);
    /* the setting is on the dcpl: H5Pget_zarr_shard, H5Pcopy keeps it, rank 0 removes it */
    ASSERT((p = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_chunk(p, 2, c) >= 0);
    ASSERT(H5Pget_zarr_shard(p, 2, got) == 0);
    ASSERT(H5Pset_zarr_shard(p, 2, sh) >= 0);
    sh[0] = 12;
    ASSERT(H5Pset_zarr_shard(p, 2, sh) >= 0); /* set again: replaced */
    ASSERT(H5Pget_zarr_shard(p, 2, got) == 2 && got[0] == 12 && got[1] == 8);
    ASSERT((q = H5Pcopy(p)) >= 0);
    memset(got, 0, sizeof got);
    ASSERT(H5Pget_zarr_shard(q, 2, got) == 2 && got[0] == 12 && got[1] == 8);
    {
        hid_t s = H5Screate_simple(2, n, NULL);
        ASSERT((d = H5Dcreate2(f, "copied", H5T_STD_I32LE, s, H5P_DEFAULT, q, H5P_DEFAULT)) >= 0);
        /* the dataset's dcpl: the HDF5 chunk is the inner chunk */
        ASSERT((pl = H5Dget_create_plist(d)) >= 0);
        ASSERT(H5Pget_chunk(pl, 2, got) == 2 && got[0] == 3 && got[1] == 4);
        H5Pclose(pl);
        H5Dclose(d);
        H5Sclose(s);
    }
    ASSERT(H5Pset_zarr_shard(q, 0, NULL) >= 0 && H5Pget_zarr_shard(q, 2, got) == 0);
    {
        hid_t s = H5Screate_simple(2, n, NULL);
        ASSERT((d = H5Dcreate2(f, "removed", H5T_STD_I32LE, s, H5P_DEFAULT, q, H5P_DEFAULT)) >= 0);
        H5Dclose(d);
        H5Sclose(s);
    }
    /* bad arguments fail in the helper */
    H5E_BEGIN_TRY
    {
        hsize_t zero[2] = {0, 8};
        ASSERT(H5Pset_zarr_shard(p, 2, zero) < 0);
        ASSERT(H5Pset_zarr_shard(p, -1, sh) < 0);
        ASSERT(H5Pset_zarr_shard(p, 2, NULL) < 0);
        ASSERT(H5Pset_zarr_shard(fapl, 2, sh) < 0);
    }
    H5E_END_TRY
    H5Pclose(q);
    H5Pclose(p);

    /* errors at H5Dcreate */
    {
        hsize_t bad[2] = {7, 8}, one[1] = {6}, big[2] = {6, 8};
        ASSERT((p = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_chunk(p, 2, c) >= 0);
        ASSERT(H5Pset_zarr_shard(p, 2, bad) >= 0);
        ASSERT(expect_dcreate_fails(f, "e1", 2, n, p, "shard dim 0 (7, H5Pset_zarr_shard) is not a multiple",
                                    "chunk dim 0 (3, H5Pset_chunk)") == 0);
        ASSERT(H5Pset_zarr_shard(p, 1, one) >= 0);
        ASSERT(expect_dcreate_fails(f, "e2", 2, n, p, "gave 1 shard dims for a dataset of rank 2", NULL) ==
               0);
        H5Pclose(p);
        ASSERT((p = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_zarr_shard(p, 2, big) >= 0);
        ASSERT(expect_dcreate_fails(f, "e3", 2, n, p, "needs a chunked layout", NULL) == 0);
        H5Pclose(p);
    }
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(check_meta(st, "a", "[6,8]", "[3,4]", NULL) == 0);
    ASSERT(check_meta(st, "copied", "[12,8]", "[3,4]", NULL) == 0);
    ASSERT(check_meta(st, "removed", "[12,16]", "[3,4]", NULL) == 0); /* shard_bytes again: whole array */
    ASSERT(!h5t_path_exists(st, "e1") && !h5t_path_exists(st, "e2") && !h5t_path_exists(st, "e3"));
    H5Pclose(fapl);
    return 0;
}

/* zarr v2: a global shard_bytes is ignored, H5Pset_zarr_shard is an error. */
static int
test_v2(void)
{
    hid_t               fapl = fapl_opts(2, "shard_bytes=1MiB"), f, d, p;
    hsize_t             n[2] = {100, 100}, c[2] = {10, 10}, sh[2] = {20, 20};
    const char         *st;
    char                pth[4096];
    struct json_object *j;
    ASSERT(setup("shard_v2") == 0 && fapl >= 0);
    st = path_in("v2.zarr");
    ASSERT((f = H5Fcreate(st, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((d = mk(f, "plain", H5T_STD_I32LE, 2, n, NULL, c, -1, 0, NULL)) >= 0);
    H5Dclose(d);
    ASSERT((p = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_chunk(p, 2, c) >= 0 &&
           H5Pset_zarr_shard(p, 2, sh) >= 0);
    ASSERT(expect_dcreate_fails(f, "sharded", 2, n, p, "zarr v2, which has no sharding", "version=3") == 0);
    H5Pclose(p);
    ASSERT(H5Fclose(f) >= 0);
    snprintf(pth, sizeof pth, "%s/plain/.zarray", st);
    ASSERT((j = json_object_from_file(pth)));
    ASSERT(!strcmp(member(j, "chunks"), "[10,10]"));
    json_object_put(j);
    ASSERT(!h5t_path_exists(st, "sharded"));
    H5Pclose(fapl);
    return 0;
}

/* ---- data --------------------------------------------------------------------------------------------- */
static int
value3(hsize_t i, hsize_t j, hsize_t k)
{
    return (int)(i * 10000 + j * 100 + k);
}

/* Writes a 3-D int32 array (sharded by `shard_opts`, chunks 3x4x5, zstd or not) in pieces that cross
 * shard borders, reads hyperslabs back, reopens, reads again. */
static int
roundtrip(const char *store, const char *opts, int zstd, const hsize_t *shard)
{
    hid_t   fapl = fapl_opts(3, opts), f, d, fs, ms, pl;
    hsize_t n[3] = {13, 17, 19}, c[3] = {3, 4, 5}, got[3];
    int    *all = calloc(13 * 17 * 19, sizeof *all), *buf = calloc(13 * 17 * 19, sizeof *buf);
    ASSERT(fapl >= 0 && all && buf);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((d = mk(f, "v", H5T_STD_I32LE, 3, n, NULL, c, -1, zstd, shard)) >= 0);
    /* two overlapping partial writes: [0:8, :, :] = v, then [5:13, 2:15, 1:18] = -v */
    for (hsize_t i = 0; i < 13; i++)
        for (hsize_t j = 0; j < 17; j++)
            for (hsize_t k = 0; k < 19; k++) {
                int  v                     = value3(i, j, k);
                bool in2                   = i >= 5 && j >= 2 && j < 15 && k >= 1 && k < 18;
                all[(i * 17 + j) * 19 + k] = in2 ? -v : i < 8 ? v : 0;
            }
    {
        hsize_t st[3] = {0, 0, 0}, ct[3] = {8, 17, 19};
        size_t  m = 0;
        for (hsize_t i = 0; i < 8; i++)
            for (hsize_t j = 0; j < 17; j++)
                for (hsize_t k = 0; k < 19; k++)
                    buf[m++] = value3(i, j, k);
        fs = H5Dget_space(d);
        ms = H5Screate_simple(3, ct, NULL);
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, ct, NULL);
        ASSERT(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf) >= 0);
        H5Sclose(ms);
        H5Sclose(fs);
    }
    {
        hsize_t st[3] = {5, 2, 1}, ct[3] = {8, 13, 17};
        size_t  m = 0;
        for (hsize_t i = 5; i < 13; i++)
            for (hsize_t j = 2; j < 15; j++)
                for (hsize_t k = 1; k < 18; k++)
                    buf[m++] = -value3(i, j, k);
        fs = H5Dget_space(d);
        ms = H5Screate_simple(3, ct, NULL);
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, ct, NULL);
        ASSERT(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf) >= 0);
        H5Sclose(ms);
        H5Sclose(fs);
    }
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    for (int pass = 0; pass < 2; pass++) {
        ASSERT((f = H5Fopen(store, pass ? H5F_ACC_RDONLY : H5F_ACC_RDWR, fapl)) >= 0);
        ASSERT((d = H5Dopen2(f, "v", H5P_DEFAULT)) >= 0);
        memset(buf, 0x55, 13 * 17 * 19 * sizeof *buf);
        ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
        for (size_t m = 0; m < 13 * 17 * 19; m++)
            if (buf[m] != all[m])
                FAILF("%s pass %d: element %zu is %d, want %d", store, pass, m, buf[m], all[m]);
        /* a strided partial read across shards: [1:13:3, 3:16:4, 0:19:6] */
        {
            hsize_t st[3] = {1, 3, 0}, sd[3] = {3, 4, 6}, ct[3] = {4, 4, 4}, m = 0;
            fs = H5Dget_space(d);
            ms = H5Screate_simple(3, ct, NULL);
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, sd, ct, NULL);
            ASSERT(H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf) >= 0);
            for (hsize_t a = 0; a < 4; a++)
                for (hsize_t b = 0; b < 4; b++)
                    for (hsize_t e = 0; e < 4; e++, m++) {
                        hsize_t i = 1 + 3 * a, j = 3 + 4 * b, k = 6 * e;
                        if (buf[m] != all[(i * 17 + j) * 19 + k])
                            FAILF("%s strided read (%llu,%llu,%llu): %d, want %d", store,
                                  (unsigned long long)i, (unsigned long long)j, (unsigned long long)k, buf[m],
                                  all[(i * 17 + j) * 19 + k]);
                    }
            H5Sclose(ms);
            H5Sclose(fs);
        }
        /* the HDF5 chunk is the inner chunk; the filters are the inner codecs' */
        ASSERT((pl = H5Dget_create_plist(d)) >= 0);
        ASSERT(H5Pget_chunk(pl, 3, got) == 3 && got[0] == 3 && got[1] == 4 && got[2] == 5);
        ASSERT(H5Pget_nfilters(pl) == (zstd ? 2 : 0));
        if (zstd)
            ASSERT(H5Pget_filter2(pl, 1, NULL, NULL, NULL, 0, NULL, NULL) == F_ZSTD);
        H5Pclose(pl);
        H5Dclose(d);
        ASSERT(H5Fclose(f) >= 0);
    }
    H5Pclose(fapl);
    free(all);
    free(buf);
    return 0;
}

static int
test_roundtrip(void)
{
    hsize_t sh[3] = {6, 8, 10};
    ASSERT(setup("shard_rt") == 0);
    /* 3x4x5 int32 = 240 B, shard_bytes 2000: 8 chunks per shard; dim 0 has 5 (all of them), then one
     * along dims 1 and 2 (8 / 5) */
    ASSERT(roundtrip(path_in("bytes.zarr"), "shard_bytes=2000", 0, NULL) == 0);
    ASSERT(check_meta(path_in("bytes.zarr"), "v", "[15,4,5]", "[3,4,5]", NULL) == 0);
    ASSERT(roundtrip(path_in("zstd.zarr"), "shard_bytes=2000", 3, NULL) == 0);
    ASSERT(roundtrip(path_in("set.zarr"), "", 0, sh) == 0);
    ASSERT(check_meta(path_in("set.zarr"), "v", "[6,8,10]", "[3,4,5]", NULL) == 0);
    ASSERT(roundtrip(path_in("setz.zarr"), "", 1, sh) == 0);
    /* shards written in part are stored; shard (2,2,1) (i 12, j 16, k 10..18) was never written */
    ASSERT(h5t_path_exists(path_in("set.zarr"), "v/c/0/0/0") &&
           h5t_path_exists(path_in("set.zarr"), "v/c/2/1/1"));
    ASSERT(!h5t_path_exists(path_in("set.zarr"), "v/c/2/2/1"));
    return 0;
}

/* Appending records along an unlimited dim of a sharded array (shards of 1 x 1000: one record each):
 * H5Dset_extent + a one-record write, five times, then every record read back. */
static int
test_append(void)
{
    hid_t       fapl = fapl_opts(3, "shard_bytes=64KiB"), f, d, fs, ms;
    hsize_t     n[2] = {0, 1000}, mx[2] = {H5S_UNLIMITED, 1000}, c[2] = {1, 100}, one[2] = {1, 1000};
    int         rec[1000], all[5000];
    const char *st;
    ASSERT(setup("shard_append") == 0 && fapl >= 0);
    st = path_in("rec.zarr");
    ASSERT((f = H5Fcreate(st, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((d = mk(f, "rec", H5T_STD_I32LE, 2, n, mx, c, -1, 0, NULL)) >= 0);
    for (hsize_t r = 0; r < 5; r++) {
        hsize_t ext[2] = {r + 1, 1000}, at[2] = {r, 0};
        for (int j = 0; j < 1000; j++)
            rec[j] = (int)(r * 1000 + (hsize_t)j) * 7 - 3;
        ASSERT(H5Dset_extent(d, ext) >= 0);
        fs = H5Dget_space(d);
        ms = H5Screate_simple(2, one, NULL);
        ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, at, NULL, one, NULL) >= 0);
        ASSERT(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, rec) >= 0);
        H5Sclose(ms);
        H5Sclose(fs);
    }
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(check_meta(st, "rec", "[1,1000]", "[1,100]", NULL) == 0);
    ASSERT((f = H5Fopen(st, H5F_ACC_RDONLY, fapl)) >= 0 && (d = H5Dopen2(f, "rec", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0);
    for (int i = 0; i < 5000; i++)
        if (all[i] != i * 7 - 3)
            FAILF("element %d is %d, want %d", i, all[i], i * 7 - 3);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(h5t_path_exists(st, "rec/c/4/0") && !h5t_path_exists(st, "rec/c/5/0"));
    H5Pclose(fapl);
    return 0;
}

/* Variable-length strings in a sharded array (inner codec vlen-utf8): written, reopened, read back. */
static int
test_vlen(void)
{
    hid_t       fapl = fapl_opts(3, ""), f, d, t, sp, p;
    hsize_t     n = 10, c = 4, sh = 8;
    const char *w[10] = {"a", "", "sharded", "zarr", "\xc3\xa9t\xc3\xa9", "x", "yy", "zzz", "", "last one"};
    char       *r[10] = {0};
    const char *st;
    ASSERT(setup("shard_vlen") == 0 && fapl >= 0);
    st = path_in("vlen.zarr");
    ASSERT((t = H5Tcopy(H5T_C_S1)) >= 0 && H5Tset_size(t, H5T_VARIABLE) >= 0 &&
           H5Tset_cset(t, H5T_CSET_UTF8) >= 0);
    ASSERT((f = H5Fcreate(st, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((sp = H5Screate_simple(1, &n, NULL)) >= 0 && (p = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT(H5Pset_chunk(p, 1, &c) >= 0 && H5Pset_zarr_shard(p, 1, &sh) >= 0);
    ASSERT((d = H5Dcreate2(f, "s", t, sp, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((f = H5Fopen(st, H5F_ACC_RDONLY, fapl)) >= 0 && (d = H5Dopen2(f, "s", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    for (int i = 0; i < 10; i++)
        if (!r[i] || strcmp(r[i], w[i]) != 0)
            FAILF("string %d is '%s', want '%s'", i, r[i] ? r[i] : "(null)", w[i]);
    H5Treclaim(t, sp, H5P_DEFAULT, r);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    {
        struct json_object *j = doc(st, "s");
        ASSERT(j && strstr(member(j, "codecs"), "sharding_indexed") &&
               strstr(member(j, "codecs"), "vlen-utf8"));
        json_object_put(j);
    }
    H5Sclose(sp);
    H5Pclose(p);
    H5Tclose(t);
    H5Pclose(fapl);
    return 0;
}

/* ---- sharded arrays of other writers ----------------------------------------------------------------- */
#define GROUP_DOC "{\"zarr_format\":3,\"node_type\":\"group\",\"attributes\":{}}"

/* Writes array `name` of `store` from zarr.json text `js` through the core, values i (int32, 8x8). */
static int
core_array(const char *store, const char *name, const char *js)
{
    zarr_store      *s = NULL;
    zarr_array_meta *m = NULL;
    zarr_array      *a = NULL;
    zarr_region      r;
    int              buf[128];
    for (int i = 0; i < 128; i++)
        buf[i] = i * 3 - 7;
    ASSERT_OK(zarr_store_open_dir(store, ZARR_STORE_RDWR | ZARR_STORE_CREATE, &s));
    ASSERT_OK(zarr_array_meta_parse_v3(js, strlen(js), name, &m));
    ASSERT_OK(zarr_array_create(s, name, m, true, &a));
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, buf));
    ASSERT_OK(zarr_array_flush(a));
    zarr_array_close(a);
    zarr_store_close(s);
    return 0;
}

static int
test_foreign(void)
{
    const char *st;
    char        js[2048];
    hid_t       fapl = h5t_zarr_fapl(3), f, d, pl;
    struct {
        const char *name, *codecs;
        hsize_t     c0, c1;
        int         nfilters;
    } cases[] = {
        /* as zarr-python 3 / zarrita write it: shard 8x8, inner 4x2 with zstd, index at the start */
        {"zp3",
         "[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[4,2],\"codecs\":[{\"name\":"
         "\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"zstd\",\"configuration\":{"
         "\"level\":0,\"checksum\":false}}],\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{"
         "\"endian\":\"little\"}},{\"name\":\"crc32c\"}],\"index_location\":\"start\"}}]",
         4, 2, 1},
        /* nested: 8x8 -> 4x4 -> 2x4 with zlib inside: the innermost chunk and its filter */
        {"nested",
         "[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[4,4],\"codecs\":[{\"name\":"
         "\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[2,4],\"codecs\":[{\"name\":\"bytes\","
         "\"configuration\":{\"endian\":\"little\"}},{\"name\":\"numcodecs.zlib\",\"configuration\":{"
         "\"level\":1}}],\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
         "\"index_location\":\"end\"}}],\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
         "\"little\"}}],\"index_location\":\"end\"}}]",
         2, 4, 1},
        /* a transpose before sharding: the inner chunk is in the transposed order, so the shard is the
         * HDF5 chunk */
        {"transposed",
         "[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}},{\"name\":\"sharding_indexed\","
         "\"configuration\":{\"chunk_shape\":[2,4],\"codecs\":[{\"name\":\"bytes\",\"configuration\":{"
         "\"endian\":\"little\"}}],\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
         "\"little\"}}],\"index_location\":\"end\"}}]",
         8, 8, 0},
    };
    ASSERT(setup("shard_foreign") == 0 && fapl >= 0);
    st = path_in("other.zarr");
    {
        char p[4096];
        snprintf(p, sizeof p, "mkdir -p '%s'", st);
        ASSERT(system(p) == 0);
        snprintf(p, sizeof p, "%s/zarr.json", st);
        ASSERT(put_file(p, GROUP_DOC) == 0);
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(js, sizeof js,
                 "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[16,8],\"data_type\":\"int32\","
                 "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[8,8]}},"
                 "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
                 "\"fill_value\":0,\"codecs\":%s,\"attributes\":{}}",
                 cases[i].codecs);
        if (core_array(st, cases[i].name, js))
            FAILF("case %s", cases[i].name);
    }
    ASSERT((f = H5Fopen(st, H5F_ACC_RDONLY, fapl)) >= 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hsize_t got[2] = {0, 0};
        int     buf[128];
        ASSERT((d = H5Dopen2(f, cases[i].name, H5P_DEFAULT)) >= 0);
        ASSERT((pl = H5Dget_create_plist(d)) >= 0);
        ASSERT(H5Pget_layout(pl) == H5D_CHUNKED && H5Pget_chunk(pl, 2, got) == 2);
        if (got[0] != cases[i].c0 || got[1] != cases[i].c1 || H5Pget_nfilters(pl) != cases[i].nfilters)
            FAILF("%s: HDF5 chunk %llux%llu with %d filters, want %llux%llu with %d", cases[i].name,
                  (unsigned long long)got[0], (unsigned long long)got[1], H5Pget_nfilters(pl),
                  (unsigned long long)cases[i].c0, (unsigned long long)cases[i].c1, cases[i].nfilters);
        H5Pclose(pl);
        ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
        for (int k = 0; k < 128; k++)
            if (buf[k] != k * 3 - 7)
                FAILF("%s: element %d is %d", cases[i].name, k, buf[k]);
        H5Dclose(d);
    }
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* ---- a store for shard_interop.sh -----------------------------------------------------------------------
 */
/* /grid: 40x30 float64 i*0.5 - j, chunks 4x5, deflate 1, shard_bytes 1 KiB: 6 chunks of 160 B per
 * shard, 10 along dim 0 -> 2 shards of 5; /ids: 1000 int64 (i * i) % 9973, chunks 50, no filter,
 * H5Pset_zarr_shard 200; /part: 20x20 int16, chunks 5x5, zstd 1, H5Pset_zarr_shard 10x10, fill -1,
 * written only in [3:14, 11:20] (i*20+j). */
static int
test_interop_store(void)
{
    const char *out = getenv("H5ZARR_SHARD_OUT");
    char        st[4096];
    hid_t       fapl = fapl_opts(3, "shard_bytes=1KiB"), f, d, p, s;
    ASSERT(setup("shard_interop") == 0 && fapl >= 0);
    snprintf(st, sizeof st, "%s/sharded.zarr", out && *out ? out : tmp);
    ASSERT((f = H5Fcreate(st, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    {
        hsize_t n[2] = {40, 30}, c[2] = {4, 5};
        double *g = malloc(40 * 30 * sizeof *g);
        ASSERT(g);
        for (int i = 0; i < 40; i++)
            for (int j = 0; j < 30; j++)
                g[i * 30 + j] = i * 0.5 - j;
        ASSERT((d = mk(f, "grid", H5T_IEEE_F64LE, 2, n, NULL, c, 1, 0, NULL)) >= 0);
        ASSERT(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, g) >= 0);
        H5Dclose(d);
        free(g);
    }
    {
        hsize_t    n = 1000, c = 50, sh = 200;
        long long *v = malloc(1000 * sizeof *v);
        ASSERT(v);
        for (long long i = 0; i < 1000; i++)
            v[i] = (i * i) % 9973;
        ASSERT((d = mk(f, "ids", H5T_STD_I64LE, 1, &n, NULL, &c, -1, 0, &sh)) >= 0);
        ASSERT(H5Dwrite(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
        H5Dclose(d);
        free(v);
    }
    {
        hsize_t n[2] = {20, 20}, c[2] = {5, 5}, sh[2] = {10, 10}, st0[2] = {3, 11}, ct[2] = {11, 9};
        short   fill = -1, v[99];
        hid_t   ms;
        for (int i = 0; i < 11; i++)
            for (int j = 0; j < 9; j++)
                v[i * 9 + j] = (short)((i + 3) * 20 + j + 11);
        p = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_chunk(p, 2, c);
        H5Pset_fill_value(p, H5T_NATIVE_SHORT, &fill);
        H5Pset_zarr_shard(p, 2, sh);
        {
            unsigned cd = 1;
            H5Pset_filter(p, F_ZSTD, H5Z_FLAG_MANDATORY, 1, &cd);
        }
        s = H5Screate_simple(2, n, NULL);
        ASSERT((d = H5Dcreate2(f, "part", H5T_STD_I16LE, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
        ms = H5Screate_simple(2, ct, NULL);
        H5Sselect_hyperslab(s, H5S_SELECT_SET, st0, NULL, ct, NULL);
        ASSERT(H5Dwrite(d, H5T_NATIVE_SHORT, ms, s, H5P_DEFAULT, v) >= 0);
        H5Sclose(ms);
        H5Sclose(s);
        H5Pclose(p);
        H5Dclose(d);
    }
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(check_meta(st, "grid", "[20,5]", "[4,5]",
                      "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":"
                      "\"numcodecs.zlib\",\"configuration\":{\"level\":1}}]") == 0);
    ASSERT(check_meta(st, "ids", "[200]", "[50]", NULL) == 0);
    {
        char p2[4096];
        /* shards (0,1) and (1,1) hold written chunks; (0,0) and (1,0) none: not stored */
        snprintf(p2, sizeof p2, "%s/part", st);
        ASSERT(h5t_path_exists(p2, "c/0/1") && h5t_path_exists(p2, "c/1/1"));
        ASSERT(!h5t_path_exists(p2, "c/0/0") && !h5t_path_exists(p2, "c/1/0"));
    }
    H5Pclose(fapl);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(policy),    TEST_ENTRY(inner_codecs), TEST_ENTRY(config_rules),  TEST_ENTRY(bad_values),
    TEST_ENTRY(set_shard), TEST_ENTRY(v2),           TEST_ENTRY(roundtrip),     TEST_ENTRY(append),
    TEST_ENTRY(vlen),      TEST_ENTRY(foreign),      TEST_ENTRY(interop_store),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
