/*
 * test_null_strings.c: NULL variable-length strings (issue 27: netCDF's tst_fills2 and tst_h_scalar). In
 * HDF5 a variable-length string whose pointer is NULL is a value of its own, distinct from "": netCDF
 * writes NULL fill values and ncdump prints NIL for them. Through the connector a NULL string must read
 * back as NULL, in zarr v2 and v3: as a dataset element (written, unwritten in a missing chunk or in
 * the rest of a written one), as the dataset's fill value (HDF5's default fill, or H5Pset_fill_value
 * with a NULL char *), and in attributes (written or never written). Stores: an attribute's NULL
 * string is JSON null; a vlen-utf8 chunk holding NULL strings ends with the "H5ZN" bitmap trailer
 * after numcodecs' items (docs/FORMAT.md "NULL strings"); a trailer that lies is refused.
 */
#include "runner.h"

#include <hdf5.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>

#include "h5test.h"

static char dir[400];

static hid_t
vstr(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    return t;
}

/* Reads the whole 1-D dataset `name` (n <= 8 elements) and compares it with `want` (NULL = a NULL
 * string). */
static int
expect_strings(hid_t f, const char *name, size_t n, const char *const *want)
{
    hid_t d, t = vstr();
    char *r[8] = {0};
    ASSERT(n <= 8);
    ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    for (size_t i = 0; i < n; i++) {
        if (!want[i] && r[i])
            FAILF("%s[%zu] is \"%s\", expected NULL", name, i, r[i]);
        if (want[i] && !r[i])
            FAILF("%s[%zu] is NULL, expected \"%s\"", name, i, want[i]);
        if (want[i])
            ASSERT_STR(r[i], want[i]);
        H5free_memory(r[i]);
    }
    H5Dclose(d);
    H5Tclose(t);
    return 0;
}

/* Reads attribute `name` of `obj` (n <= 4 elements) and compares it with `want`. */
static int
expect_attr(hid_t obj, const char *name, size_t n, const char *const *want)
{
    hid_t a, t = vstr();
    char *r[4] = {(char *)1, (char *)1, (char *)1, (char *)1}; /* not NULL: the read must set them */
    ASSERT(n <= 4);
    ASSERT((a = H5Aopen(obj, name, H5P_DEFAULT)) >= 0);
    ASSERT(H5Aread(a, t, r) >= 0);
    for (size_t i = 0; i < n; i++) {
        if (!want[i] && r[i])
            FAILF("attribute %s[%zu] is \"%s\", expected NULL", name, i, r[i]);
        if (want[i] && !r[i])
            FAILF("attribute %s[%zu] is NULL, expected \"%s\"", name, i, want[i]);
        if (want[i])
            ASSERT_STR(r[i], want[i]);
        H5free_memory(r[i]);
    }
    H5Aclose(a);
    H5Tclose(t);
    return 0;
}

/* A 1-D dataset of n strings in chunks of `chunk`, with the fill value `fill` when `set_fill`. */
static hid_t
make_dset(hid_t f, const char *name, hsize_t n, hsize_t chunk, int set_fill, const char *fill)
{
    hid_t t = vstr(), sp = H5Screate_simple(1, &n, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d;
    H5Pset_chunk(dcpl, 1, &chunk);
    if (set_fill)
        H5Pset_fill_value(dcpl, t, &fill);
    d = H5Dcreate2(f, name, t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Tclose(t);
    return d;
}

/* Writes string `s` (may be NULL) at element i of d. */
static int
put1(hid_t d, hsize_t i, const char *s)
{
    hid_t   t = vstr(), fs = H5Dget_space(d), ms;
    hsize_t one = 1;
    ms          = H5Screate_simple(1, &one, NULL);
    ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &i, NULL, &one, NULL) >= 0);
    ASSERT(H5Dwrite(d, t, ms, fs, H5P_DEFAULT, &s) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Tclose(t);
    return 0;
}

static int
write_store(const char *store, int version)
{
    hid_t       fapl, f, d, t = vstr(), sp, a;
    hsize_t     three   = 3;
    const char *all[4]  = {NULL, "", "a", NULL};
    const char *vals[3] = {NULL, "", "b"};
    const char *null    = NULL;
    ASSERT((fapl = h5t_zarr_fapl(version)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    /* d: written whole, NULL and "" apart; default fill */
    ASSERT((d = make_dset(f, "d", 4, 4, 0, NULL)) >= 0);
    ASSERT(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0);
    H5Dclose(d);
    /* u: never written, default fill (HDF5's: NULL) */
    ASSERT((d = make_dset(f, "u", 8, 4, 0, NULL)) >= 0);
    H5Dclose(d);
    /* e: fill "", element 1 written NULL (netCDF's string variables: fill "" by default) */
    ASSERT((d = make_dset(f, "e", 8, 4, 1, "")) >= 0);
    if (put1(d, 1, NULL))
        return 1;
    H5Dclose(d);
    /* n: fill NULL set by the user (tst_fills2's _FillValue), element 2 written */
    ASSERT((d = make_dset(f, "n", 8, 4, 1, NULL)) >= 0);
    if (put1(d, 2, "x"))
        return 1;
    H5Dclose(d);
    /* attributes: a scalar written NULL, a scalar never written, a 1-D one with NULL, "" and "b" */
    sp = H5Screate(H5S_SCALAR);
    ASSERT((a = H5Acreate2(f, "wnull", t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, t, &null) >= 0);
    H5Aclose(a);
    ASSERT((a = H5Acreate2(f, "unwritten", t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    sp = H5Screate_simple(1, &three, NULL);
    ASSERT((a = H5Acreate2(f, "list", t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, t, vals) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    H5Tclose(t);
    return 0;
}

static int
check_values(hid_t f)
{
    const char *d[4] = {NULL, "", "a", NULL};
    const char *u[8] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    const char *e[8] = {"", NULL, "", "", "", "", "", ""};
    const char *n[8] = {NULL, NULL, "x", NULL, NULL, NULL, NULL, NULL};
    const char *l[3] = {NULL, "", "b"};
    const char *one  = NULL;
    if (expect_strings(f, "d", 4, d) || expect_strings(f, "u", 8, u) || expect_strings(f, "e", 8, e) ||
        expect_strings(f, "n", 8, n))
        return 1;
    if (expect_attr(f, "wnull", 1, &one) || expect_attr(f, "unwritten", 1, &one) ||
        expect_attr(f, "list", 3, l))
        return 1;
    /* the fill values read back as made: NULL for n, "" for e */
    {
        hid_t ds, dcpl, t = vstr();
        char *fv = (char *)1;
        ASSERT((ds = H5Dopen2(f, "n", H5P_DEFAULT)) >= 0 && (dcpl = H5Dget_create_plist(ds)) >= 0);
        ASSERT(H5Pget_fill_value(dcpl, t, &fv) >= 0);
        ASSERT(fv == NULL);
        H5Pclose(dcpl);
        H5Dclose(ds);
        ASSERT((ds = H5Dopen2(f, "e", H5P_DEFAULT)) >= 0 && (dcpl = H5Dget_create_plist(ds)) >= 0);
        ASSERT(H5Pget_fill_value(dcpl, t, &fv) >= 0);
        ASSERT(fv != NULL);
        ASSERT_STR(fv, "");
        H5free_memory(fv);
        H5Pclose(dcpl);
        H5Dclose(ds);
        H5Tclose(t);
    }
    return 0;
}

/* The bytes of store key `rel` (at most cap); -1 if missing. */
static long
read_key(const char *store, const char *rel, uint8_t *buf, size_t cap)
{
    char  p[1200];
    FILE *fp;
    long  n;
    snprintf(p, sizeof p, "%s/%s", store, rel);
    if (!(fp = fopen(p, "rb")))
        return -1;
    n = (long)fread(buf, 1, cap, fp);
    fclose(fp);
    return n;
}

/* What other zarr readers see: the stored forms. */
static int
check_stored(const char *store, int version)
{
    char                p[1200];
    struct json_object *doc, *attrs = NULL, *v;
    /* d's chunk: numcodecs' 4 items (NULL ones as "") and the trailer "H5ZN" + bitmap 0b1001 */
    static const uint8_t want[] = {4, 0, 0, 0,   0, 0, 0, 0, 0,   0,   0,   0,   1,
                                   0, 0, 0, 'a', 0, 0, 0, 0, 'H', '5', 'Z', 'N', 0x09};
    uint8_t              got[64];
    long                 n = read_key(store, version == 3 ? "d/c/0" : "d/0", got, sizeof got);
    if (n != (long)sizeof want || memcmp(got, want, sizeof want))
        FAILF("d's chunk: %ld bytes, not numcodecs' items + the NULL trailer", n);
    /* e's chunk 0 holds a NULL (item 1), chunk 1 was never written (fill) */
    ASSERT(read_key(store, version == 3 ? "e/c/0" : "e/0", got, sizeof got) == 4 + 4 * 4 + 4 + 1);
    ASSERT(read_key(store, version == 3 ? "e/c/1" : "e/1", got, sizeof got) < 0);
    /* the attributes: natural values null, null, [null, "", "b"] */
    snprintf(p, sizeof p, "%s/%s", store, version == 3 ? "zarr.json" : ".zattrs");
    ASSERT((doc = json_object_from_file(p)) != NULL);
    if (version == 3)
        ASSERT(json_object_object_get_ex(doc, "attributes", &attrs));
    else
        attrs = doc;
    ASSERT(json_object_object_get_ex(attrs, "wnull", &v) && v == NULL);
    ASSERT(json_object_object_get_ex(attrs, "unwritten", &v) && v == NULL);
    ASSERT(json_object_object_get_ex(attrs, "list", &v) && json_object_is_type(v, json_type_array));
    ASSERT(json_object_array_length(v) == 3 && json_object_array_get_idx(v, 0) == NULL);
    ASSERT_STR(json_object_get_string(json_object_array_get_idx(v, 1)), "");
    ASSERT_STR(json_object_get_string(json_object_array_get_idx(v, 2)), "b");
    json_object_put(doc);
    /* u's fill: v2 null (zarr-python reads None), v3 "" (the string type has no null) with fill_default */
    snprintf(p, sizeof p, "%s/u/%s", store, version == 3 ? "zarr.json" : ".zarray");
    ASSERT((doc = json_object_from_file(p)) != NULL);
    ASSERT(json_object_object_get_ex(doc, "fill_value", &v));
    if (version == 2)
        ASSERT(v == NULL);
    else
        ASSERT(json_object_is_type(v, json_type_string) && json_object_get_string_len(v) == 0);
    json_object_put(doc);
    return 0;
}

static int
run(int version)
{
    char  store[600];
    hid_t fapl, f;
    snprintf(store, sizeof store, "%s/v%d.zarr", dir, version);
    if (write_store(store, version))
        return 1;
    if (check_stored(store, version))
        return 1;
    ASSERT((fapl = h5t_zarr_fapl(version)) >= 0);
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    if (check_values(f))
        return 1;
    ASSERT(H5Fclose(f) >= 0);
    /* read-write: a rewrite of d keeps its NULLs */
    ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0);
    {
        hid_t d;
        ASSERT((d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0);
        if (put1(d, 1, "z"))
            return 1;
        H5Dclose(d);
        const char *want[4] = {NULL, "z", "a", NULL};
        if (expect_strings(f, "d", 4, want))
            return 1;
    }
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_setup(void)
{
    snprintf(dir, sizeof dir, "%s", test_tmpdir("null_strings"));
    ASSERT(dir[0]);
    return 0;
}

static int
test_null_v3(void)
{
    return run(3);
}

static int
test_null_v2(void)
{
    return run(2);
}

/* A trailer that marks a non-empty item, or bytes after the items that are no trailer: refused. */
static int
test_bad_trailer(void)
{
    char        store[600], p[1200];
    hid_t       fapl, f, d, t = vstr();
    char       *r[4] = {0};
    herr_t      rc;
    FILE       *fp;
    uint8_t     b[64];
    long        n;
    const char *junk[] = {"bitmap", "tail"};
    for (int k = 0; k < 2; k++) {
        snprintf(store, sizeof store, "%s/bad%d.zarr", dir, k);
        if (write_store(store, 3))
            return 1;
        ASSERT((n = read_key(store, "d/c/0", b, sizeof b)) == 26);
        if (k == 0)
            b[25] = 0x0d; /* marks item 2, which holds "a" */
        else
            b[21] = 'X'; /* no trailer magic */
        snprintf(p, sizeof p, "%s/d/c/0", store);
        ASSERT((fp = fopen(p, "wb")) && fwrite(b, 1, (size_t)n, fp) == (size_t)n && fclose(fp) == 0);
        ASSERT((fapl = h5t_zarr_fapl(3)) >= 0);
        ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
        ASSERT((d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0);
        H5E_BEGIN_TRY { rc = H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, r); }
        H5E_END_TRY
        if (rc >= 0)
            FAILF("a chunk with a bad NULL %s read without an error", junk[k]);
        H5Dclose(d);
        H5Fclose(f);
        H5Pclose(fapl);
    }
    H5Tclose(t);
    return 0;
}

static const test_entry tests[] = {TEST_ENTRY(setup), TEST_ENTRY(null_v3), TEST_ENTRY(null_v2),
                                   TEST_ENTRY(bad_trailer)};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
