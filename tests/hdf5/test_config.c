/*
 * test_config.c: the connector's configuration (vol/config.c, docs/CONFIG.md): defaults (behaviour
 * unchanged without a configuration), every key applied to the stores written (zarr.json / .zarray
 * contents: format, codecs, chunk shape, consolidated metadata, fill chunks written or not), per-path
 * rules of a config file, precedence (info over file over defaults), every bad-configuration message
 * (naming the file, line and key) failing H5Fcreate/H5Fopen instead of writing a native file, and the
 * routing of new paths under create=auto (a .h5 path is a native HDF5 file).
 */
#include "h5test.h"
#include "runner.h"

#include <H5VLconnector.h>
#include <dirent.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[4096];

/* Writes `text` to `path`. */
static int
put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

/* A fapl whose zarr info comes from info-string text, exactly as HDF5 makes it from
 * HDF5_VOL_CONNECTOR="zarr <text>" (create not set: auto). */
static hid_t
fapl_from_str(const char *text)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS),
          vol  = H5VLregister_connector_by_name(H5ZARR_VOL_NAME, H5P_DEFAULT);
    void *info = NULL;
    if (fapl < 0 || vol < 0 || H5VLconnector_str_to_info(text, vol, &info) < 0 ||
        H5Pset_vol(fapl, vol, info) < 0) {
        fprintf(stderr, "  can't make a fapl from info '%s'\n", text);
        return H5I_INVALID_HID;
    }
    H5VLfree_connector_info(vol, info);
    H5VLclose(vol);
    return fapl;
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

/* Creates `store` with fapl, one contiguous int32 dataset "d" of dims n0 x n1 written with `value`
 * everywhere, and a chunked one "c" (chunks 7x7, deflate 1); closes. 0 on success. */
static int
make_store(const char *store, hid_t fapl, hsize_t n0, hsize_t n1, int value)
{
    hsize_t dims[2] = {n0, n1}, cd[2] = {7, 7};
    hid_t   f, s, d, p;
    int    *buf = malloc(n0 * n1 * sizeof *buf);
    int     ok  = 0;
    if (!buf)
        return -1;
    for (hsize_t i = 0; i < n0 * n1; i++)
        buf[i] = value;
    if ((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0) {
        free(buf);
        return -1;
    }
    s = H5Screate_simple(2, dims, NULL);
    d = H5Dcreate2(f, "d", H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ok |= d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0;
    H5Dclose(d);
    p = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(p, 2, cd);
    H5Pset_deflate(p, 1);
    d = H5Dcreate2(f, "c", H5T_STD_I32LE, s, H5P_DEFAULT, p, H5P_DEFAULT);
    ok |= d < 0;
    H5Dclose(d);
    H5Pclose(p);
    H5Sclose(s);
    ok |= H5Fclose(f) < 0;
    free(buf);
    return ok ? -1 : 0;
}

/* The JSON document `rel` in `store` (new reference) or NULL. */
static struct json_object *
doc(const char *store, const char *rel)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", store, rel);
    return json_object_from_file(p);
}

/* The compact JSON text of doc[key] (static buffer; "" if absent). */
static const char *
member(struct json_object *j, const char *key)
{
    static char         buf[4096];
    struct json_object *v;
    buf[0] = '\0';
    if (j && json_object_object_get_ex(j, key, &v))
        snprintf(buf, sizeof buf, "%s", json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
    return buf;
}

#define EXPECT_MEMBER(j, key, want)                                                                          \
    do {                                                                                                     \
        const char *_m = member((j), (key));                                                                 \
        if (strcmp(_m, (want)) != 0)                                                                         \
            FAILF("%s: %s is %s, want %s", #j, key, _m, want);                                               \
    } while (0)

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
setup(const char *name)
{
    const char *t = test_tmpdir(name);
    if (!t)
        return -1;
    snprintf(tmp, sizeof tmp, "%s", t);
    unsetenv("H5ZARR_CONFIG");
    return 0;
}

/* ---- defaults ------------------------------------------------------------------------------------- */
/* No configuration: v3, no codec, the 1 MiB auto chunk shape dataset.c always used, fill chunks not
 * written, no consolidated metadata. */
static int
test_defaults(void)
{
    hid_t               fapl = h5t_zarr_fapl(0);
    const char         *st;
    struct json_object *j, *root;
    ASSERT(setup("cfg_defaults") == 0 && fapl >= 0);
    st = path_in("def.zarr");
    ASSERT(make_store(st, fapl, 1000, 1000, 0) == 0);
    ASSERT((j = doc(st, "d/zarr.json")));
    EXPECT_MEMBER(j, "zarr_format", "3");
    EXPECT_MEMBER(j, "chunk_grid", "{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[250,1000]}}");
    EXPECT_MEMBER(j, "codecs", "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]");
    json_object_put(j);
    /* the chunked, deflated dataset keeps exactly its filters */
    ASSERT((j = doc(st, "c/zarr.json")));
    ASSERT(strstr(member(j, "codecs"), "numcodecs.zlib") && !strstr(member(j, "codecs"), "zstd"));
    EXPECT_MEMBER(j, "chunk_grid", "{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[7,7]}}");
    json_object_put(j);
    ASSERT(!h5t_path_exists(st, "d/c/0/0")); /* all fill: elided */
    ASSERT((root = doc(st, "zarr.json")));
    EXPECT_MEMBER(root, "consolidated_metadata", "");
    json_object_put(root);
    H5Pclose(fapl);
    return 0;
}

/* ---- every key, from the info ------------------------------------------------------------------------ */
static int
test_info_keys_v2(void)
{
    hid_t               fapl = fapl_opts(2, "codec=zstd:5 chunks=100x50 write_empty_chunks=1 consolidated=1");
    const char         *st;
    struct json_object *j, *zm, *md;
    ASSERT(setup("cfg_info_v2") == 0 && fapl >= 0);
    st = path_in("v2.zarr");
    ASSERT(make_store(st, fapl, 200, 60, 0) == 0);
    ASSERT(h5t_path_exists(st, ".zgroup"));
    ASSERT((j = doc(st, "d/.zarray")));
    EXPECT_MEMBER(j, "compressor", "{\"id\":\"zstd\",\"level\":5}");
    EXPECT_MEMBER(j, "chunks", "[100,50]");
    json_object_put(j);
    ASSERT((j = doc(st, "c/.zarray"))); /* its own filter, not the configured codec */
    EXPECT_MEMBER(j, "compressor", "{\"id\":\"zlib\",\"level\":1}");
    json_object_put(j);
    ASSERT(h5t_path_exists(st, "d/0.0") && h5t_path_exists(st, "d/1.1")); /* fill chunks written */
    ASSERT((zm = doc(st, ".zmetadata")));
    ASSERT(json_object_object_get_ex(zm, "metadata", &md));
    ASSERT(json_object_object_get_ex(md, "d/.zarray", NULL) &&
           json_object_object_get_ex(md, "c/.zarray", NULL));
    json_object_put(zm);
    H5Pclose(fapl);
    return 0;
}

static int
test_info_keys_v3(void)
{
    struct {
        const char *opts, *codec, *chunks;
    } cases[] = {
        {"codec=blosc:lz4:7:bitshuffle chunks=whole consolidated=1",
         "{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"lz4\",\"clevel\":7,\"shuffle\":"
         "\"bitshuffle\",\"blocksize\":0}}",
         "[300,40]"},
        {"codec=blosc", /* defaults: zstd, clevel 5, byte shuffle */
         "{\"name\":\"blosc\",\"configuration\":{\"typesize\":4,\"cname\":\"zstd\",\"clevel\":5,\"shuffle\":"
         "\"shuffle\",\"blocksize\":0}}",
         "[300,40]"},
        {"codec=gzip:2 chunks=auto:8K", "{\"name\":\"gzip\",\"configuration\":{\"level\":2}}", "[38,40]"},
        {"codec=zlib chunks=1000x7", "{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":6}}",
         "[300,7]"},
        {"codec=zstd chunks=5", /* another rank: auto */
         "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}", "[300,40]"},
        {"codec=none chunks=auto", "", "[300,40]"},
    };
    ASSERT(setup("cfg_info_v3") == 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hid_t               fapl = fapl_opts(3, cases[i].opts);
        char                name[64], want[1024], grid[256];
        const char         *st;
        struct json_object *j;
        snprintf(name, sizeof name, "v3_%zu.zarr", i);
        st = path_in(name);
        ASSERT(fapl >= 0);
        ASSERT(make_store(st, fapl, 300, 40, 1) == 0);
        ASSERT((j = doc(st, "d/zarr.json")));
        snprintf(want, sizeof want, "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}%s%s]",
                 cases[i].codec[0] ? "," : "", cases[i].codec);
        if (strcmp(member(j, "codecs"), want) != 0)
            FAILF("%s: codecs %s, want %s", cases[i].opts, member(j, "codecs"), want);
        snprintf(grid, sizeof grid, "{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":%s}}",
                 cases[i].chunks);
        if (strcmp(member(j, "chunk_grid"), grid) != 0)
            FAILF("%s: chunk grid %s, want %s", cases[i].opts, member(j, "chunk_grid"), grid);
        json_object_put(j);
        /* the values read back */
        {
            hid_t f = H5Fopen(st, H5F_ACC_RDONLY, fapl), d = H5Dopen2(f, "d", H5P_DEFAULT);
            int  *buf = calloc(300 * 40, sizeof *buf);
            ASSERT(f >= 0 && d >= 0 && buf);
            ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
            ASSERT(buf[0] == 1 && buf[300 * 40 - 1] == 1);
            free(buf);
            H5Dclose(d);
            H5Fclose(f);
        }
        if (i == 0) { /* consolidated=1: inline consolidated metadata in the root zarr.json */
            struct json_object *root = doc(st, "zarr.json"), *cm, *md;
            ASSERT(root && json_object_object_get_ex(root, "consolidated_metadata", &cm));
            ASSERT(json_object_object_get_ex(cm, "metadata", &md));
            ASSERT(json_object_object_get_ex(md, "d", NULL) && json_object_object_get_ex(md, "c", NULL));
            json_object_put(root);
        }
        H5Pclose(fapl);
    }
    return 0;
}

/* write_empty_chunks: 0 (default) deletes chunks equal to the fill value, 1 writes them. */
static int
test_write_empty_chunks(void)
{
    ASSERT(setup("cfg_wec") == 0);
    for (int w = 0; w < 2; w++) {
        hid_t fapl =
            fapl_opts(3, w ? "write_empty_chunks=1 chunks=10x10" : "write_empty_chunks=0 chunks=10x10");
        const char *st = path_in(w ? "w1.zarr" : "w0.zarr");
        ASSERT(fapl >= 0 && make_store(st, fapl, 20, 20, 0) == 0);
        ASSERT_EQ_INT(h5t_path_exists(st, "d/c/0/0"), w);
        ASSERT_EQ_INT(h5t_path_exists(st, "d/c/1/1"), w);
        /* reopened: the setting applies to datasets opened too */
        {
            hid_t f = H5Fopen(st, H5F_ACC_RDWR, fapl), d = H5Dopen2(f, "d", H5P_DEFAULT);
            int   one[400], zero[400]                    = {0};
            for (int i = 0; i < 400; i++)
                one[i] = 1;
            ASSERT(d >= 0 && H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, one) >= 0);
            ASSERT(H5Dflush(d) >= 0 && h5t_path_exists(st, "d/c/0/0"));
            ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, zero) >= 0);
            H5Dclose(d);
            H5Fclose(f);
            ASSERT_EQ_INT(h5t_path_exists(st, "d/c/0/0"), w);
        }
        H5Pclose(fapl);
    }
    return 0;
}

/* Threads of this process. */
static int
nthreads_now(void)
{
    int            n = 0;
    DIR           *d = opendir("/proc/self/task");
    struct dirent *e;
    if (!d)
        return -1;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* threads=N: the store's arrays run on a pool of N workers (the caller and N-1 new threads, made at the
 * first store that asks for N); values are the same. */
static int
test_threads(void)
{
    ASSERT(setup("cfg_threads") == 0);
    for (int k = 0; k < 2; k++) {
        int         n = k ? 5 : 3, before, after;
        char        opts[64], name[32], again[32];
        hid_t       fapl;
        const char *st;
        snprintf(opts, sizeof opts, "threads=%d chunks=16x16 codec=zstd", n);
        snprintf(name, sizeof name, "t%d.zarr", n);
        ASSERT((fapl = fapl_opts(3, opts)) >= 0);
        st     = path_in(name);
        before = nthreads_now();
        ASSERT(make_store(st, fapl, 256, 256, 7) == 0);
        after = nthreads_now();
        ASSERT(h5t_path_exists(st, "d/c/15/15"));
        ASSERT_EQ_INT(after - before, n - 1);
        /* the pool is kept, not remade (a new name: truncating a store would start the trash thread, which
         * then waits for more trash) */
        snprintf(again, sizeof again, "again%d.zarr", n);
        ASSERT(make_store(path_in(again), fapl, 64, 64, 7) == 0);
        ASSERT_EQ_INT(nthreads_now(), after);
        H5Pclose(fapl);
    }
    return 0;
}

/* ---- the config file: rules -----------------------------------------------------------------------------
 */
static int
test_file_rules(void)
{
    char                conf[4096], text[4096];
    hid_t               fapl;
    struct json_object *j;
    ASSERT(setup("cfg_rules") == 0);
    snprintf(conf, sizeof conf, "%s/h5zarr.conf", tmp);
    snprintf(text, sizeof text,
             "# defaults\n"
             "version = 2\n"
             "codec = zlib:1   # inline comment\n"
             "\n"
             "[path %s/fast/*]\n"
             "version = 3\n"
             "codec = zstd:3\n"
             "[path *.big.zarr]   ; later rules win key by key\n"
             "chunks = 10x10\n"
             "[defaults]\n"
             "write_empty_chunks = 1\n",
             tmp);
    ASSERT(put_file(conf, text) == 0);
    ASSERT(mkdir(path_in("fast"), 0755) == 0);
    setenv("H5ZARR_CONFIG", conf, 1);
    ASSERT((fapl = h5t_zarr_fapl(0)) >= 0);

    ASSERT(make_store(path_in("a.zarr"), fapl, 20, 20, 0) == 0); /* top level only */
    ASSERT((j = doc(path_in("a.zarr"), "d/.zarray")));
    EXPECT_MEMBER(j, "compressor", "{\"id\":\"zlib\",\"level\":1}");
    EXPECT_MEMBER(j, "chunks", "[20,20]");
    json_object_put(j);
    ASSERT(h5t_path_exists(path_in("a.zarr"), "d/0.0")); /* write_empty_chunks = 1 ([defaults]) */

    ASSERT(make_store(path_in("fast/b.zarr"), fapl, 20, 20, 0) == 0); /* the rule, on the absolute path */
    ASSERT((j = doc(path_in("fast/b.zarr"), "d/zarr.json")));
    ASSERT(strstr(member(j, "codecs"), "\"zstd\"") && strstr(member(j, "codecs"), "\"level\":3"));
    EXPECT_MEMBER(j, "chunk_grid", "{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[20,20]}}");
    json_object_put(j);

    ASSERT(make_store(path_in("fast/c.big.zarr"), fapl, 20, 20, 0) == 0); /* both rules */
    ASSERT((j = doc(path_in("fast/c.big.zarr"), "d/zarr.json")));
    ASSERT(strstr(member(j, "codecs"), "\"zstd\""));
    EXPECT_MEMBER(j, "chunk_grid", "{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[10,10]}}");
    json_object_put(j);

    /* the name as given matches too: a relative name, from inside tmp */
    {
        char cwd[4096];
        ASSERT(getcwd(cwd, sizeof cwd) && chdir(tmp) == 0);
        int rc = make_store("rel.big.zarr", fapl, 20, 20, 0);
        ASSERT(chdir(cwd) == 0);
        ASSERT(rc == 0);
        ASSERT((j = doc(path_in("rel.big.zarr"), "d/.zarray")));
        EXPECT_MEMBER(j, "chunks", "[10,10]");
        json_object_put(j);
    }
    /* an opened store takes the rules too (write_empty_chunks here) */
    unsetenv("H5ZARR_CONFIG");
    H5Pclose(fapl);
    return 0;
}

/* examples/h5zarr.conf parses, and its rules apply (an analysis/ path: blosc lz4, consolidated). */
static int
test_example_conf(void)
{
    char                conf[4096];
    const char         *src = getenv("H5ZARR_SRC");
    hid_t               fapl;
    struct json_object *j;
    if (!src) {
        printf("  skip: H5ZARR_SRC not set (ctest sets it)\n");
        return TEST_SKIP;
    }
    ASSERT(setup("cfg_example") == 0);
    snprintf(conf, sizeof conf, "%s/examples/h5zarr.conf", src);
    setenv("H5ZARR_CONFIG", conf, 1);
    ASSERT(mkdir(path_in("analysis"), 0755) == 0);
    ASSERT((fapl = h5t_zarr_fapl(0)) >= 0);
    ASSERT(make_store(path_in("analysis/a.zarr"), fapl, 20, 20, 0) == 0);
    unsetenv("H5ZARR_CONFIG");
    ASSERT((j = doc(path_in("analysis/a.zarr"), "d/zarr.json")));
    ASSERT(strstr(member(j, "codecs"), "\"cname\":\"lz4\"") && strstr(member(j, "codecs"), "bitshuffle"));
    json_object_put(j);
    ASSERT((j = doc(path_in("analysis/a.zarr"), "zarr.json")));
    ASSERT(json_object_object_get_ex(j, "consolidated_metadata", NULL));
    json_object_put(j);
    H5Pclose(fapl);
    return 0;
}

/* ---- precedence: info over file over defaults --------------------------------------------------------- */
static int
test_precedence(void)
{
    char                conf[4096], conf2[4096], text[4096], opts[4200];
    hid_t               fapl;
    struct json_object *j;
    ASSERT(setup("cfg_prec") == 0);
    snprintf(conf, sizeof conf, "%s/a.conf", tmp);
    snprintf(conf2, sizeof conf2, "%s/b.conf", tmp);
    snprintf(text, sizeof text, "version = 2\ncodec = zlib:1\nchunks = 5x5\n[path *rule*]\ncodec = gzip:4\n");
    ASSERT(put_file(conf, text) == 0);
    ASSERT(put_file(conf2, "codec = zstd:9\n") == 0);
    setenv("H5ZARR_CONFIG", conf, 1);

    /* file over defaults: v2, zlib 1, chunks 5x5 */
    ASSERT((fapl = h5t_zarr_fapl(0)) >= 0);
    ASSERT(make_store(path_in("p1.zarr"), fapl, 20, 20, 0) == 0);
    ASSERT((j = doc(path_in("p1.zarr"), "d/.zarray")));
    EXPECT_MEMBER(j, "compressor", "{\"id\":\"zlib\",\"level\":1}");
    EXPECT_MEMBER(j, "chunks", "[5,5]");
    json_object_put(j);
    H5Pclose(fapl);

    /* info over file: the typed version (H5Pset_fapl_zarr(fapl, 3)) and options over the file's keys and
     * over a matching rule */
    ASSERT((fapl = fapl_opts(3, "codec=zstd:4")) >= 0);
    ASSERT(make_store(path_in("p2_rule.zarr"), fapl, 20, 20, 0) == 0);
    ASSERT((j = doc(path_in("p2_rule.zarr"), "d/zarr.json")));
    EXPECT_MEMBER(j, "zarr_format", "3");
    ASSERT(strstr(member(j, "codecs"), "\"zstd\"") && strstr(member(j, "codecs"), "\"level\":4"));
    EXPECT_MEMBER(j, "chunk_grid", "{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[5,5]}}");
    json_object_put(j);
    H5Pclose(fapl);

    /* a rule over the file's top level (no info key) */
    ASSERT((fapl = h5t_zarr_fapl(0)) >= 0);
    ASSERT(make_store(path_in("p3_rule.zarr"), fapl, 20, 20, 0) == 0);
    ASSERT((j = doc(path_in("p3_rule.zarr"), "d/.zarray")));
    EXPECT_MEMBER(j, "compressor", "{\"id\":\"gzip\",\"level\":4}");
    json_object_put(j);
    H5Pclose(fapl);

    /* the info key config= over H5ZARR_CONFIG; in the info string, the later of two keys wins */
    snprintf(opts, sizeof opts, "config=%s version=2 version=3", conf2);
    ASSERT((fapl = fapl_from_str(opts)) >= 0);
    ASSERT(make_store(path_in("p4.zarr"), fapl, 20, 20, 0) == 0);
    ASSERT((j = doc(path_in("p4.zarr"), "d/zarr.json")));
    ASSERT(strstr(member(j, "codecs"), "\"zstd\"") && strstr(member(j, "codecs"), "\"level\":9"));
    EXPECT_MEMBER(j, "chunk_grid", "{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[20,20]}}");
    json_object_put(j);
    H5Pclose(fapl);
    unsetenv("H5ZARR_CONFIG");
    return 0;
}

/* The info round-trips through HDF5's string form and compares equal; copies are deep. */
static int
test_info_roundtrip(void)
{
    hid_t          vol  = H5VLregister_connector_by_name(H5ZARR_VOL_NAME, H5P_DEFAULT);
    h5zarr_info_t  in   = {2, 4, H5ZARR_CREATE_ZARR, "codec=zstd:3  consolidated=1"};
    char          *s    = NULL;
    void          *back = NULL;
    int            cmp  = 1;
    hid_t          fapl, fapl2;
    h5zarr_info_t *got = NULL;
    ASSERT(vol >= 0);
    ASSERT(H5VLconnector_info_to_str(&in, vol, &s) >= 0 && s);
    ASSERT_STR(s, "codec=zstd:3 consolidated=1 version=2 threads=4 create=zarr");
    ASSERT(H5VLconnector_str_to_info(s, vol, &back) >= 0 && back);
    ASSERT(H5VLcmp_connector_info(&cmp, vol, &in, back) >= 0);
    ASSERT_EQ_INT(cmp, 0);
    /* a bad key is not an error here (HDF5 would fall back to native silently) */
    H5VLfree_connector_info(vol, back);
    back = NULL;
    ASSERT(H5VLconnector_str_to_info("bogus=1", vol, &back) >= 0 && back);
    H5VLfree_connector_info(vol, back);
    /* deep copies: the fapl's info outlives the application's text */
    {
        char          text[64] = "codec=gzip:1";
        h5zarr_info_t mine     = {0, 0, 0, text};
        ASSERT((fapl = H5Pcreate(H5P_FILE_ACCESS)) >= 0 && H5Pset_vol(fapl, vol, &mine) >= 0);
        strcpy(text, "XXXXXXXXXXXX");
        ASSERT((fapl2 = H5Pcopy(fapl)) >= 0 && H5Pget_vol_info(fapl2, (void **)&got) >= 0 && got);
        ASSERT_STR(got->options, "codec=gzip:1");
        H5VLfree_connector_info(vol, got);
        H5Pclose(fapl);
        H5Pclose(fapl2);
    }
    H5free_memory(s);
    H5VLclose(vol);
    return 0;
}

/* ---- bad configurations -------------------------------------------------------------------------- */
/* H5Fcreate of `name` with `fapl` must fail with a message holding each of `want` (NULL-terminated),
 * and leave nothing at `name`. */
static int
expect_create_fails(hid_t fapl, const char *name, const char *const *want)
{
    char        msg[4096] = "";
    hid_t       f;
    struct stat st;
    H5E_BEGIN_TRY
    {
        f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
    }
    H5E_END_TRY
    if (f >= 0) {
        H5Fclose(f);
        FAILF("H5Fcreate('%s') succeeded under a bad configuration", name);
    }
    for (size_t i = 0; want[i]; i++)
        if (!strstr(msg, want[i]))
            FAILF("H5Fcreate('%s'): error lacks \"%s\": %s", name, want[i], msg);
    if (stat(name, &st) == 0)
        FAILF("H5Fcreate('%s') failed but left something there (a native file?)", name);
    return 0;
}

static int
test_bad_file(void)
{
    struct {
        const char *text;
        const char *want[4];
    } cases[] = {
        {"version = 3\nbogus = 1\n", {"line 2", "unknown key 'bogus'", "known: version", NULL}},
        {"# c\n\ncodec = lzma\n", {"line 3", "key 'codec'", "bad value 'lzma'", NULL}},
        {"version = 4\n", {"line 1", "key 'version'", "want 2 or 3", NULL}},
        {"threads = many\n", {"line 1", "key 'threads'", "'many'", NULL}},
        {"codec = zstd:99\n", {"line 1", "key 'codec'", "zstd level '99'", NULL}},
        {"codec = blosc:nope\n", {"line 1", "key 'codec'", "blosc compressor 'nope'", NULL}},
        {"chunks = 0x5\n", {"line 1", "key 'chunks'", "'0x5'", NULL}},
        {"consolidated = yes\n", {"line 1", "key 'consolidated'", "want 0 or 1", NULL}},
        {"write_empty_chunks = 2\n", {"line 1", "key 'write_empty_chunks'", NULL}},
        {"create = always\n", {"line 1", "key 'create'", "want auto or zarr", NULL}},
        {"[pth *.h5]\nformat = zarr\n", {"line 1", "bad section header", "[pth *.h5]", NULL}},
        {"[path *.h5\n", {"line 1", "bad section header", NULL}},
        {"[path ]\n", {"line 1", "bad section header", NULL}},
        {"[path *.h5]\nformat = hdf4\n", {"line 2", "key 'format'", "want zarr or native", NULL}},
        {"format = zarr\n", {"line 1", "key 'format'", "can't be set in the top level", NULL}},
        {"[path *.h5]\ncreate = zarr\n", {"line 2", "key 'create'", "can't be set in a [path] rule", NULL}},
        {"config = /x\n", {"line 1", "key 'config'", NULL}},
        {"version 3\n", {"line 1", "expected 'key = value'", NULL}},
        {"[path *.nc]\nstore = /scratch/x\n", {"line 2", "key 'store'", "not a URL", NULL}},
        {"store = s3://u:pw@bkt/run42/\n", {"line 1", "key 'store'", "a URL holds no credentials", NULL}},
        {"allow_url = s3://bkt/../x/\n", {"line 1", "key 'allow_url'", "'.' or '..' path component", NULL}},
        {"allow_url = s3://bkt/x?y=1\n", {"line 1", "key 'allow_url'", "no query", NULL}},
    };
    char  conf[4096];
    hid_t fapl = h5t_zarr_fapl(0);
    ASSERT(setup("cfg_bad_file") == 0 && fapl >= 0);
    snprintf(conf, sizeof conf, "%s/bad.conf", tmp);
    setenv("H5ZARR_CONFIG", conf, 1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *want[6] = {conf, cases[i].want[0], cases[i].want[1], cases[i].want[2], cases[i].want[3],
                               NULL};
        ASSERT(put_file(conf, cases[i].text) == 0);
        if (expect_create_fails(fapl, path_in("x.zarr"), want))
            FAILF("config file case %zu: %s", i, cases[i].text);
    }
    /* H5Fopen of an existing store fails too */
    {
        hid_t       good      = h5t_zarr_fapl(3), f;
        char        msg[4096] = "";
        const char *st        = path_in("ok.zarr");
        unsetenv("H5ZARR_CONFIG");
        ASSERT(make_store(st, good, 4, 4, 0) == 0);
        setenv("H5ZARR_CONFIG", conf, 1);
        ASSERT(put_file(conf, "codec = lzma\n") == 0);
        H5E_BEGIN_TRY
        {
            f = H5Fopen(st, H5F_ACC_RDONLY, good);
            H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
        }
        H5E_END_TRY
        ASSERT(f < 0);
        ASSERT(strstr(msg, conf) && strstr(msg, "line 1") && strstr(msg, "key 'codec'"));
        H5Pclose(good);
    }
    /* unreadable file, named by H5ZARR_CONFIG and by the info key config= */
    {
        const char *w1[] = {"can't read config file '/nonexistent/h5zarr.conf'", "H5ZARR_CONFIG",
                            "No such file", NULL};
        const char *w2[] = {"can't read config file '/nonexistent/b.conf'", "connector info key 'config'",
                            NULL};
        hid_t       f2;
        setenv("H5ZARR_CONFIG", "/nonexistent/h5zarr.conf", 1);
        ASSERT(expect_create_fails(fapl, path_in("y.zarr"), w1) == 0);
        ASSERT((f2 = fapl_from_str("config=/nonexistent/b.conf")) >= 0);
        ASSERT(expect_create_fails(f2, path_in("y.zarr"), w2) == 0);
        H5Pclose(f2);
    }
    unsetenv("H5ZARR_CONFIG");
    H5Pclose(fapl);
    return 0;
}

static int
test_bad_info(void)
{
    struct {
        const char *text;
        const char *want[3];
    } cases[] = {
        {"bogus=1", {"connector info 'bogus=1'", "unknown key 'bogus'", NULL}},
        {"version=3 threads=many", {"key 'threads'", "bad value 'many'", NULL}},
        {"codec=zstd:x", {"key 'codec'", "zstd level 'x'", NULL}},
        {"version", {"expected key=value at 'version'", NULL}},
        {"format=zarr", {"key 'format'", "can't be set in the connector info", NULL}},
    };
    ASSERT(setup("cfg_bad_info") == 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* both ways in: HDF5's string form (create unset) and H5Pset_fapl_zarr_opts */
        hid_t fa = fapl_from_str(cases[i].text), fb = fapl_opts(0, cases[i].text);
        ASSERT(fa >= 0 && fb >= 0);
        if (expect_create_fails(fa, path_in("x.zarr"), cases[i].want) ||
            expect_create_fails(fb, path_in("x.zarr"), cases[i].want))
            FAILF("info case '%s'", cases[i].text);
        H5Pclose(fa);
        H5Pclose(fb);
    }
    return 0;
}

/* ---- routing of new paths (the router, vol/route.c) ---------------------------------------------------- */
/* Whether `name` is a version 2 pointer file naming `store`. */
static bool
is_pointer(const char *name, const char *store)
{
    size_t n = 0;
    char  *b = test_slurp(name, &n), want[300];
    bool   yes;
    snprintf(want, sizeof want, "h5zarr pointer v2\nstore=%s\n", store);
    yes = b && n > 512 && strncmp(b + n - 512, want, strlen(want)) == 0;
    free(b);
    return yes;
}

static int
test_routing(void)
{
    char  conf[4096], text[4096];
    hid_t fauto, fzarr, f;
    ASSERT(setup("cfg_routing") == 0);
    ASSERT((fauto = fapl_from_str("version=3")) >= 0); /* as from HDF5_VOL_CONNECTOR: create=auto */
    ASSERT((fzarr = h5t_zarr_fapl(3)) >= 0);           /* H5Pset_fapl_zarr: create=zarr */

    /* create=auto, no config: .h5 native, .zarr/.zr3 zarr */
    ASSERT((f = H5Fcreate(path_in("n.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, fauto)) >= 0 && H5Fclose(f) >= 0);
    ASSERT(h5t_is_native_file(path_in("n.h5")));
    ASSERT((f = H5Fcreate(path_in("z.zarr"), H5F_ACC_TRUNC, H5P_DEFAULT, fauto)) >= 0 && H5Fclose(f) >= 0);
    ASSERT(h5t_is_zarr_store(path_in("z.zarr")));
    ASSERT((f = H5Fcreate(path_in("z.zr3"), H5F_ACC_TRUNC, H5P_DEFAULT, fauto)) >= 0 && H5Fclose(f) >= 0);
    ASSERT(h5t_is_zarr_store(path_in("z.zr3")));
    /* H5Pset_fapl_zarr: every new path is zarr */
    ASSERT((f = H5Fcreate(path_in("code.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, fzarr)) >= 0 && H5Fclose(f) >= 0);
    ASSERT(h5t_is_zarr_store(path_in("code.h5")));

    /* rules: *.h5 under out/ is zarr, *.zarr under keep/ is native; create=zarr in the info over both */
    snprintf(conf, sizeof conf, "%s/r.conf", tmp);
    snprintf(text, sizeof text, "[path %s/out/*.h5]\nformat = zarr\n[path */keep/*]\nformat = native\n", tmp);
    ASSERT(put_file(conf, text) == 0 && mkdir(path_in("out"), 0755) == 0 &&
           mkdir(path_in("keep"), 0755) == 0);
    setenv("H5ZARR_CONFIG", conf, 1);
    ASSERT((f = H5Fcreate(path_in("out/a.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, fauto)) >= 0 && H5Fclose(f) >= 0);
    /* a rule's zarr path without .zarr/.zr3: the store beside it, the name a pointer (docs/FORMAT.md) */
    ASSERT(h5t_is_zarr_store(path_in("out/a.h5.zarr")));
    {
        size_t n = 0;
        char  *b = test_slurp(path_in("out/a.h5"), &n);
        ASSERT(b && n > 512 && memcmp(b, "\x89HDF\r\n\x1a\n", 8) == 0 &&
               strncmp(b + n - 512, "h5zarr pointer v2\nstore=a.h5.zarr\n", 33) == 0);
        free(b);
    }
    ASSERT((f = H5Fcreate(path_in("keep/b.zarr"), H5F_ACC_TRUNC, H5P_DEFAULT, fauto)) >= 0 &&
           H5Fclose(f) >= 0);
    ASSERT(h5t_is_native_file(path_in("keep/b.zarr")));
    ASSERT((f = H5Fcreate(path_in("keep/c.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, fzarr)) >= 0 && H5Fclose(f) >= 0);
    ASSERT(h5t_is_zarr_store(path_in("keep/c.h5")));
    ASSERT(put_file(conf, "create = zarr\n") == 0); /* the file's create, under an info that does not say */
    ASSERT((f = H5Fcreate(path_in("all.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, fauto)) >= 0 && H5Fclose(f) >= 0);
    /* create=zarr from configuration: the program does not know, so its name stays a file (a pointer) */
    ASSERT(h5t_is_zarr_store(path_in("all.h5.zarr")) && is_pointer(path_in("all.h5"), "all.h5.zarr"));
    ASSERT((f = H5Fcreate(path_in("all.zarr"), H5F_ACC_TRUNC, H5P_DEFAULT, fauto)) >= 0 && H5Fclose(f) >= 0);
    ASSERT(h5t_is_zarr_store(path_in("all.zarr"))); /* a zarr name is the store itself */
    snprintf(text, sizeof text, "[path %s/out/*]\nformat = zarr\n", tmp);
    ASSERT(put_file(conf, text) == 0);
    ASSERT((f = H5Fcreate(path_in("out/r.zarr"), H5F_ACC_TRUNC, H5P_DEFAULT, fauto)) >= 0 &&
           H5Fclose(f) >= 0);
    ASSERT(h5t_is_zarr_store(path_in("out/r.zarr")) && access(path_in("out/r.zarr.zarr"), F_OK) != 0);

    /* a bad configuration fails a native create too: no .h5 file is written */
    {
        const char *want[] = {conf, "line 1", "key 'format'", NULL};
        ASSERT(put_file(conf, "format = zarr\n") == 0);
        ASSERT(expect_create_fails(fauto, path_in("never.h5"), want) == 0);
    }
    unsetenv("H5ZARR_CONFIG");
    H5Pclose(fauto);
    H5Pclose(fzarr);
    return 0;
}

/* HDF5_VOL_CONNECTOR="zarr create=zarr" (h5py's users switch so): the names the program gives stay files
 * that behave as HDF5 files do for the program (its user block, its name, "exists", external links to it),
 * while the data is in the store beside each. */
static int
test_pointer_by_text(void)
{
    hid_t   fapl, fcpl, f, g, ef;
    char    name[4096], ub[512];
    hsize_t got = 0;
    ssize_t n;
    FILE   *fp;
    ASSERT(setup("cfg_pointer_text") == 0);
    ASSERT((fapl = fapl_from_str("create=zarr")) >= 0);

    /* a user block: the program's bytes at the front of the file, kept across writes and opens */
    ASSERT((fcpl = H5Pcreate(H5P_FILE_CREATE)) >= 0 && H5Pset_userblock(fcpl, 512) >= 0);
    ASSERT((f = H5Fcreate(path_in("ub.h5"), H5F_ACC_TRUNC, fcpl, fapl)) >= 0);
    ASSERT((g = H5Gcreate2(f, "Foobar", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0 && H5Gclose(g) >= 0);
    /* H5Fget_name: the name the program gave, not the store's */
    ASSERT((n = H5Fget_name(f, name, sizeof name)) > 0 && strcmp(name, path_in("ub.h5")) == 0);
    ASSERT(H5Fclose(f) >= 0 && H5Pclose(fcpl) >= 0);
    ASSERT(h5t_is_zarr_store(path_in("ub.h5.zarr")) && is_pointer(path_in("ub.h5"), "ub.h5.zarr"));
    memset(ub, 'X', sizeof ub);
    ASSERT((fp = fopen(path_in("ub.h5"), "r+b")) && fwrite(ub, 1, sizeof ub, fp) == sizeof ub &&
           fclose(fp) == 0);
    ASSERT((f = H5Fopen(path_in("ub.h5"), H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT(H5Lexists(f, "Foobar", H5P_DEFAULT) > 0);
    ASSERT((fcpl = H5Fget_create_plist(f)) >= 0 && H5Pget_userblock(fcpl, &got) >= 0 && got == 512);
    ASSERT(H5Pclose(fcpl) >= 0 && H5Fclose(f) >= 0);
    {
        size_t len = 0;
        char  *b   = test_slurp(path_in("ub.h5"), &len);
        ASSERT(b && len > 1024 && memcmp(b, ub, sizeof ub) == 0 &&
               memcmp(b + 512, "\x89HDF\r\n\x1a\n", 8) == 0);
        free(b);
    }
    /* a file-level copy opened for writing gets a store of its own and keeps its user block */
    {
        size_t len = 0;
        char  *b   = test_slurp(path_in("ub.h5"), &len);
        ASSERT(b && (fp = fopen(path_in("ub2.h5"), "wb")) && fwrite(b, 1, len, fp) == len && fclose(fp) == 0);
        free(b);
    }
    ASSERT((f = H5Fopen(path_in("ub2.h5"), H5F_ACC_RDWR, fapl)) >= 0 && H5Fclose(f) >= 0);
    {
        size_t len = 0;
        char  *b   = test_slurp(path_in("ub2.h5"), &len);
        ASSERT(b && len > 1024 && memcmp(b, ub, sizeof ub) == 0 &&
               is_pointer(path_in("ub2.h5"), "ub2.h5.zarr"));
        free(b);
    }

    /* H5F_ACC_EXCL over an existing name fails as HDF5 words it (programs read the errno from it) */
    H5E_BEGIN_TRY { f = H5Fcreate(path_in("ub.h5"), H5F_ACC_EXCL, H5P_DEFAULT, fapl); }
    H5E_END_TRY
    ASSERT(f < 0);

    /* references made in a file reached through its pointer name that file (H5Rget_file_name gives the
     * pointer's name, which is the file's) */
    {
        H5R_ref_t r, back;
        hid_t     s = H5Screate(H5S_SCALAR), a, o;
        ASSERT((f = H5Fopen(path_in("ub.h5"), H5F_ACC_RDWR, fapl)) >= 0);
        ASSERT(H5Rcreate_object(f, "Foobar", H5P_DEFAULT, &r) >= 0);
        ASSERT((a = H5Acreate2(f, "ref", H5T_STD_REF, s, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Awrite(a, H5T_STD_REF, &r) >= 0 && H5Aclose(a) >= 0 && H5Rdestroy(&r) >= 0);
        ASSERT(H5Fclose(f) >= 0);
        ASSERT((f = H5Fopen(path_in("ub.h5"), H5F_ACC_RDONLY, fapl)) >= 0);
        ASSERT((a = H5Aopen(f, "ref", H5P_DEFAULT)) >= 0 && H5Aread(a, H5T_STD_REF, &back) >= 0);
        ASSERT((o = H5Ropen_object(&back, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Iget_name(o, name, sizeof name) > 0 && strcmp(name, "/Foobar") == 0);
        ASSERT(H5Rget_file_name(&back, name, sizeof name) > 0 && strcmp(name, path_in("ub.h5")) == 0);
        ASSERT(H5Oclose(o) >= 0 && H5Rdestroy(&back) >= 0 && H5Aclose(a) >= 0 && H5Fclose(f) >= 0);
        H5Sclose(s);
    }

    /* an external link to a pointer file leads into its store */
    ASSERT((ef = H5Fcreate(path_in("main.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(H5Lcreate_external(path_in("ub.h5"), "/Foobar", ef, "ext", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT((g = H5Gopen2(ef, "ext", H5P_DEFAULT)) >= 0);
    ASSERT((n = H5Fget_name(g, name, sizeof name)) > 0 && strcmp(name, path_in("ub.h5")) == 0);
    ASSERT(H5Gclose(g) >= 0 && H5Fclose(ef) >= 0);
    ASSERT(is_pointer(path_in("main.h5"), "main.h5.zarr"));
    H5Pclose(fapl);
    return 0;
}

/* The config file is parsed once per version (vol/config.c): an edit made after the parse was kept (more
 * than 1 s after the file's last change), even one that keeps the file's size, takes effect at the next
 * create; so does one made within the same second as the next. */
static int
test_file_edited(void)
{
    char                conf[4096];
    hid_t               fapl;
    struct json_object *j;
    ASSERT(setup("cfg_edit") == 0);
    snprintf(conf, sizeof conf, "%s/h5zarr.conf", tmp);
    ASSERT(put_file(conf, "codec = zlib:1\n") == 0);
    setenv("H5ZARR_CONFIG", conf, 1);
    ASSERT((fapl = h5t_zarr_fapl(2)) >= 0);
    ASSERT(usleep(1200000) == 0); /* the parse is kept: the file is older than 1 s */
    ASSERT(make_store(path_in("a.zarr"), fapl, 20, 20, 0) == 0);
    ASSERT((j = doc(path_in("a.zarr"), "d/.zarray")));
    EXPECT_MEMBER(j, "compressor", "{\"id\":\"zlib\",\"level\":1}");
    json_object_put(j);
    ASSERT(put_file(conf, "codec = zlib:7\n") == 0); /* same size */
    ASSERT(make_store(path_in("b.zarr"), fapl, 20, 20, 0) == 0);
    ASSERT((j = doc(path_in("b.zarr"), "d/.zarray")));
    EXPECT_MEMBER(j, "compressor", "{\"id\":\"zlib\",\"level\":7}");
    json_object_put(j);
    ASSERT(put_file(conf, "codec = zlib:5\n") == 0); /* within the same second */
    ASSERT(make_store(path_in("c.zarr"), fapl, 20, 20, 0) == 0);
    ASSERT((j = doc(path_in("c.zarr"), "d/.zarray")));
    EXPECT_MEMBER(j, "compressor", "{\"id\":\"zlib\",\"level\":5}");
    json_object_put(j);
    unsetenv("H5ZARR_CONFIG");
    H5Pclose(fapl);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(defaults),           TEST_ENTRY(info_keys_v2), TEST_ENTRY(info_keys_v3),
    TEST_ENTRY(write_empty_chunks), TEST_ENTRY(threads),      TEST_ENTRY(file_rules),
    TEST_ENTRY(example_conf),       TEST_ENTRY(precedence),   TEST_ENTRY(info_roundtrip),
    TEST_ENTRY(bad_file),           TEST_ENTRY(bad_info),     TEST_ENTRY(routing),
    TEST_ENTRY(pointer_by_text),    TEST_ENTRY(file_edited),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
