/*
 * test_ref_store.c: reference files (zarr/store_ref.c) opened through the connector. A hand-written
 * kerchunk-style JSON whose chunks are byte ranges of a local file, an absolute path below its directory
 * and an inline base64 value reads back exactly, by name (*.json) and as reference://. Untrusted input
 * is refused with an error on the HDF5 stack naming the key and the reason, and writes nothing: broken
 * JSON, an unsupported version, a bad key, negative or overflowing offsets (at open); a range past the
 * end of its file, a truncated source file, a '..' path, an absolute path outside the directory and a
 * URL the configuration does not allow (at the read of that key). refs_allow=paths lets the absolute
 * path through; a read-write open is refused. A "*.json" that is not reference JSON (an HDF5 file so
 * named, other JSON) is an ordinary file, not a reference store.
 */
#include "runner.h"

#include <dirent.h>
#include <hdf5.h>
#include <stdlib.h>
#include <unistd.h>

#include "h5test.h"
#include "h5zarr/zarr.h"

static char dir[400], other[400];

static int
put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ASSERT(f);
    ASSERT(fputs(text, f) >= 0);
    ASSERT(fclose(f) == 0);
    return 0;
}

static int
put_ints(const char *path, int n)
{
    FILE *f = fopen(path, "wb");
    ASSERT(f);
    for (int i = 0; i < n; i++) {
        unsigned char b[4] = {(unsigned char)i, 0, 0, 0};
        ASSERT(fwrite(b, 1, 4, f) == 4);
    }
    ASSERT(fclose(f) == 0);
    return 0;
}

/* A reference file for the array v (10 int32 in two chunks) whose chunks are `c0` and `c1` (JSON). */
static int
put_refs(const char *name, const char *c0, const char *c1)
{
    char path[600], text[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(text, sizeof text,
             "{\"version\":1,\"refs\":{\".zgroup\":\"{\\\"zarr_format\\\":2}\","
             "\"v/.zarray\":\"{\\\"chunks\\\":[5],\\\"compressor\\\":null,\\\"dtype\\\":\\\"<i4\\\","
             "\\\"fill_value\\\":null,\\\"filters\\\":null,\\\"order\\\":\\\"C\\\",\\\"shape\\\":[10],"
             "\\\"zarr_format\\\":2}\",\"v/.zattrs\":\"{\\\"units\\\":\\\"m\\\"}\","
             "\"v/0\":%s,\"v/1\":%s}}",
             c0, c1);
    return put(path, text);
}

/* Reads v of reference file `name` (in dir) with `opts` (connector info text, or NULL); 0 when it gives
 * 0..9. */
static int
read_v(const char *name, const char *opts, int *out)
{
    char  path[600];
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1, d = -1;
    int   rc = -1;
    snprintf(path, sizeof path, "%s%s%s", strncmp(name, "reference://", 12) ? dir : "",
             strncmp(name, "reference://", 12) ? "/" : "", name);
    if (fapl < 0 || H5Pset_fapl_zarr_opts(fapl, 2, opts) < 0)
        goto done;
    H5E_BEGIN_TRY
    {
        if ((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0 && (d = H5Dopen2(f, "v", H5P_DEFAULT)) >= 0 &&
            H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0)
            rc = 0;
    }
    H5E_END_TRY
done:
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0)
        H5Fclose(f);
    H5Pclose(fapl);
    return rc;
}

/* The call that failed last left a stack holding every string of `want` (NULL-terminated). */
static int
stack_says(const char *const *want)
{
    char *text = h5t_error_text();
    int   ok   = text != NULL;
    for (int i = 0; ok && want[i]; i++)
        if (!strstr(text, want[i])) {
            fprintf(stderr, "error stack lacks '%s':\n%s\n", want[i], text);
            ok = 0;
        }
    free(text);
    return ok;
}

static int
test_setup(void)
{
    char        p[600];
    const char *t = test_tmpdir("refstore");
    ASSERT(t);
    snprintf(dir, sizeof dir, "%s/d", t);
    snprintf(other, sizeof other, "%s/other", t);
    snprintf(p, sizeof p, "mkdir -p '%s' '%s'", dir, other);
    ASSERT(system(p) == 0);
    snprintf(p, sizeof p, "%s/data.bin", dir);
    ASSERT(put_ints(p, 10) == 0);
    snprintf(p, sizeof p, "%s/data.bin", other);
    return put_ints(p, 10);
}

static int
test_reads_back(void)
{
    char c1[700], url[700];
    int  v[10] = {0};
    /* v/1 by absolute path below the directory; the attribute through .zattrs */
    snprintf(c1, sizeof c1, "[\"%s/data.bin\",20,20]", dir);
    ASSERT(put_refs("good.json", "[\"data.bin\",0,20]", c1) == 0);
    ASSERT(read_v("good.json", NULL, v) == 0);
    for (int i = 0; i < 10; i++)
        ASSERT_EQ_INT(v[i], i);
    /* inline base64 (5, 6, 7, 8, 9) and reference:// */
    ASSERT(put_refs("inline.json", "[\"data.bin\",0,20]", "\"base64:BQAAAAYAAAAHAAAACAAAAAkAAAA=\"") == 0);
    snprintf(url, sizeof url, "reference://%s/inline.json", dir);
    memset(v, 0, sizeof v);
    ASSERT(read_v(url, NULL, v) == 0);
    for (int i = 0; i < 10; i++)
        ASSERT_EQ_INT(v[i], i);
    return 0;
}

/* Refused at open: nothing opens, the stack names the file and the reason, nothing is written. */
static int
refused_at_open(const char *name, const char *text, const char *reason)
{
    char        path[600];
    int         v[10], before;
    const char *want[] = {name, reason, NULL};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ASSERT(put(path, text) == 0);
    before = test_dir_count(dir, NULL);
    ASSERT(read_v(name, NULL, v) < 0);
    H5E_BEGIN_TRY
    {
        hid_t fapl = h5t_zarr_fapl(2), f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
        ASSERT(f < 0);
        ASSERT(stack_says(want));
        H5Pclose(fapl);
    }
    H5E_END_TRY
    ASSERT_EQ_INT(test_dir_count(dir, NULL), before);
    return 0;
}

static int
test_bad_documents(void)
{
    ASSERT(refused_at_open("broken.json", "{\"version\":1,\"refs\":{\".zgroup\":", "broken.json") == 0);
    ASSERT(refused_at_open("v2.json", "{\"version\":2,\"refs\":{}}", "unsupported version") == 0);
    ASSERT(refused_at_open("norefs.json", "{\"version\":1}", "without a 'refs' object") == 0);
    ASSERT(refused_at_open("key.json", "{\"version\":1,\"refs\":{\"../x\":\"a\"}}", "../x") == 0);
    ASSERT(refused_at_open("neg.json",
                           "{\"version\":1,\"refs\":{\".zgroup\":\"{}\",\"a/0\":[\"data.bin\",-1,4]}}",
                           "offset and length must be integers") == 0);
    ASSERT(refused_at_open("huge.json",
                           "{\"version\":1,\"refs\":{\".zgroup\":\"{}\",\"a/0\":[\"data.bin\","
                           "9223372036854775807,9223372036854775807]}}",
                           "a/0") == 0);
    ASSERT(refused_at_open("shape.json", "{\"version\":1,\"refs\":{\"a/0\":[\"data.bin\",1]}}",
                           "want a string, [url] or [url, offset, length]") == 0);
    ASSERT(refused_at_open("b64.json", "{\"version\":1,\"refs\":{\".zgroup\":\"base64:@@\"}}",
                           "bad base64") == 0);
    ASSERT(refused_at_open("tmpl.json", "{\"version\":1,\"refs\":{\"a/0\":[\"{{u}}\",0,1]}}",
                           "template 'u'") == 0);
    return 0;
}

/* Opens, but reading v fails with the key and the reason on the stack; nothing is written. */
static int
refused_at_read(const char *name, const char *c1, const char *opts, const char *reason)
{
    int         v[10], before;
    const char *want[] = {"v/1", reason, NULL};
    ASSERT(put_refs(name, "[\"data.bin\",0,20]", c1) == 0);
    before = test_dir_count(dir, NULL);
    ASSERT(read_v(name, opts, v) < 0);
    {
        char  path[600];
        hid_t fapl = h5t_zarr_fapl(2), f, d;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (opts)
            H5Pset_fapl_zarr_opts(fapl, 2, opts);
        ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
        ASSERT((d = H5Dopen2(f, "v", H5P_DEFAULT)) >= 0);
        H5E_BEGIN_TRY
        {
            ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0);
            ASSERT(stack_says(want));
        }
        H5E_END_TRY
        H5Dclose(d);
        H5Fclose(f);
        H5Pclose(fapl);
    }
    ASSERT_EQ_INT(test_dir_count(dir, NULL), before);
    return 0;
}

static int
test_bad_targets(void)
{
    char c1[700], p[600];
    int  v[10];
    ASSERT(refused_at_read("range.json", "[\"data.bin\",30,20]", NULL, "only 40 bytes") == 0);
    ASSERT(refused_at_read("dotdot.json", "[\"../d/data.bin\",20,20]", NULL, "leaves the reference file's") ==
           0);
    ASSERT(refused_at_read("url.json", "[\"https://example.invalid/data.bin\",20,20]", NULL,
                           "refs_allow=urls") == 0);
    ASSERT(refused_at_read("s3.json", "[\"s3://bucket/data.bin\",20,20]", "refs_allow=paths",
                           "refs_allow=urls") == 0);
    ASSERT(refused_at_read("ftp.json", "[\"ftp://host/data.bin\",20,20]", "refs_allow=all",
                           "other than http") == 0);
    ASSERT(refused_at_read("missing.json", "[\"nothere.bin\",20,20]", NULL, "does not exist") == 0);
    snprintf(c1, sizeof c1, "[\"%s/data.bin\",20,20]", other);
    ASSERT(refused_at_read("abs.json", c1, NULL, "refs_allow=paths") == 0);
    /* the configuration lets that path through */
    ASSERT(read_v("abs.json", "refs_allow=paths", v) == 0);
    ASSERT_EQ_INT(v[9], 9);
    /* a source file truncated after the references were written */
    snprintf(p, sizeof p, "%s/trunc.bin", dir);
    ASSERT(put_ints(p, 10) == 0);
    ASSERT(put_refs("trunc.json", "[\"trunc.bin\",0,20]", "[\"trunc.bin\",20,20]") == 0);
    ASSERT(read_v("trunc.json", NULL, v) == 0);
    ASSERT(truncate(p, 24) == 0);
    ASSERT(refused_at_read("trunc.json", "[\"trunc.bin\",20,20]", NULL, "only 24 bytes") == 0);
    return 0;
}

static int
test_read_only(void)
{
    char        path[600];
    hid_t       fapl   = h5t_zarr_fapl(2), f;
    const char *want[] = {"read-only", NULL};
    snprintf(path, sizeof path, "%s/good.json", dir);
    H5E_BEGIN_TRY
    {
        f = H5Fopen(path, H5F_ACC_RDWR, fapl);
        ASSERT(f < 0);
        ASSERT(stack_says(want));
    }
    H5E_END_TRY
    H5Pclose(fapl);
    return 0;
}

/* A "*.json" name goes to the reference store only when the file holds reference JSON: an HDF5 file so
 * named opens as the HDF5 file it is, through the connector and through the core's store open; other JSON
 * (a zarr document, consolidated metadata, any object) is an ordinary file, which HDF5 can't open, and the
 * error says nothing of reference files. zarr_store_is_ref_file on each. */
static int
test_json_not_refs(void)
{
    char        path[600];
    const char *others[] = {
        "{\"zarr_format\": 2, \"name\": \"x\"}",
        "{\"metadata\": {\".zgroup\": {\"zarr_format\": 2}}, \"zarr_consolidated_format\": 1}", "[1, 2, 3]",
        "{\"version\": \"1.0\", \"refs_count\": 3}"};
    hid_t       fapl, nfapl, f, d, s;
    hsize_t     n    = 3;
    int         w[3] = {4, 5, 6}, r[3] = {0, 0, 0};
    zarr_store *st = NULL;

    /* an HDF5 file named native.json, made by HDF5's own connector */
    snprintf(path, sizeof path, "%s/native.json", dir);
    ASSERT((nfapl = H5Pcreate(H5P_FILE_ACCESS)) >= 0 && H5Pset_vol(nfapl, H5VL_NATIVE, NULL) >= 0);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, nfapl)) >= 0);
    ASSERT((s = H5Screate_simple(1, &n, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "v", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(nfapl);
    ASSERT(!zarr_store_is_ref_file(path));
    ASSERT((fapl = h5t_zarr_fapl(2)) >= 0);
    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "v", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    ASSERT(r[0] == 4 && r[1] == 5 && r[2] == 6);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    /* the core's open by name: not a reference store (a directory store can't be a file) */
    ASSERT(zarr_store_open(path, ZARR_STORE_RDONLY, &st) != ZARR_OK && st == NULL);
    ASSERT(!strstr(zarr_errmsg(), "reference file"));
    /* other JSON */
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        snprintf(path, sizeof path, "%s/other%zu.json", dir, i);
        ASSERT(put(path, others[i]) == 0);
        ASSERT(!zarr_store_is_ref_file(path));
        H5E_BEGIN_TRY
        {
            char *text;
            ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0);
            ASSERT((text = h5t_error_text()) != NULL);
            if (strstr(text, "reference file"))
                FAILF("other JSON %zu is taken for a reference file:\n%s", i, text);
            free(text);
        }
        H5E_END_TRY
    }
    /* and reference JSON is, with or without a BOM and white space first, also when broken */
    snprintf(path, sizeof path, "%s/good.json", dir);
    ASSERT(zarr_store_is_ref_file(path));
    snprintf(path, sizeof path, "%s/bom.json", dir);
    ASSERT(put(path, "\xef\xbb\xbf \n {\".zgroup\": \"{\\\"zarr_format\\\":2}\"}") == 0);
    ASSERT(zarr_store_is_ref_file(path));
    snprintf(path, sizeof path, "%s/broken.json", dir);
    ASSERT(zarr_store_is_ref_file(path));
    H5Pclose(fapl);
    return 0;
}

static const test_entry tests[] = {TEST_ENTRY(setup),         TEST_ENTRY(reads_back),
                                   TEST_ENTRY(bad_documents), TEST_ENTRY(bad_targets),
                                   TEST_ENTRY(read_only),     TEST_ENTRY(json_not_refs)};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
