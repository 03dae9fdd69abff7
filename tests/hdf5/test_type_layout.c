/*
 * test_type_layout.c: HDF5 datatypes whose layout is not zarr's natural one keep it (issue 26, found by
 * h5py's suite through the connector). Compounds with padding, with members out of offset order and
 * with padded compounds inside come back from a store exactly as created (H5Tequal, the same size,
 * member names, offsets and order) for datasets and attributes, in zarr v2 and v3, and the values round
 * trip; the stored element is the type's layout with its padding (the chunk holds size x n bytes, each
 * member at its offset), described to zarr readers as a struct with explicit void padding fields
 * (zarr-python 2.13 reads the members by name), and a user-defined fill value of such a type is zarr's
 * fill_value and HDF5's again. Custom float types (h5py's test_custom_float_promotion:
 * exponent biases beyond 2^esize - 1, other exponent sizes; and layouts with an offset, a shorter
 * precision, msbset normalization, internal padding, big-endian order; long double) are stored as raw
 * bytes with the type recorded: H5Tequal after reopening, the file type's bits read back exactly, and
 * converted reads equal HDF5's own conversion. Stores written before (packed compounds, custom floats
 * kept as zarr floats) still open, and recorded types with out-of-range fields are refused naming the
 * field.
 */
#include "runner.h"

#include <hdf5.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5test.h"

static char dir[400];

/* fapls made by the tests, and what a failed test left open, are closed at exit before HDF5 shuts down
 * (a fapl of the connector still open when HDF5 closes its property lists makes it crash) */
static hid_t made_fapls[32];
static int   n_made;

static hid_t
zfapl(int version)
{
    hid_t f = h5t_zarr_fapl(version);
    if (f >= 0 && n_made < (int)(sizeof made_fapls / sizeof *made_fapls))
        made_fapls[n_made++] = f;
    return f;
}

static void
close_leftovers(void)
{
    ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    hid_t  *ids;
    if (n > 0 && (ids = malloc((size_t)n * sizeof *ids))) {
        n = H5Fget_obj_ids(H5F_OBJ_ALL, H5F_OBJ_ALL, (size_t)n, ids);
        for (int pass = 0; pass < 2; pass++) /* objects first, then their files */
            for (ssize_t i = 0; i < n; i++) {
                H5I_type_t t = H5Iget_type(ids[i]);
                H5E_BEGIN_TRY
                {
                    if (pass == 0 && t == H5I_ATTR)
                        H5Aclose(ids[i]);
                    else if (pass == 0 && t != H5I_FILE)
                        H5Oclose(ids[i]);
                    else if (pass == 1 && t == H5I_FILE)
                        H5Fclose(ids[i]);
                }
                H5E_END_TRY
            }
        free(ids);
    }
    for (int i = 0; i < n_made; i++)
        if (H5Iis_valid(made_fapls[i]) > 0)
            H5Pclose(made_fapls[i]);
}

#define N 5 /* elements of the compound datasets */

/* ---- types -------------------------------------------------------------------------------------------- */
/* h5py's np.dtype({'names': ['f0','f1','f2'], 'formats': ['<i4','<f8','<i2'], 'offsets': [0,8,16],
 * 'itemsize': 24}) */
static hid_t
padded_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, 24);
    H5Tinsert(t, "f0", 0, H5T_STD_I32LE);
    H5Tinsert(t, "f1", 8, H5T_IEEE_F64LE);
    H5Tinsert(t, "f2", 16, H5T_STD_I16LE);
    return t;
}

/* names f1, f2, f3, formats <f4, <i4, <f8, offsets [0, 16, 8], itemsize 24 (members out of offset order) */
static hid_t
ooo_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, 24);
    H5Tinsert(t, "f1", 0, H5T_IEEE_F32LE);
    H5Tinsert(t, "f2", 16, H5T_STD_I32LE);
    H5Tinsert(t, "f3", 8, H5T_IEEE_F64LE);
    return t;
}

/* an aligned C-like struct holding one: {{int8 c @0; float64 d @8} s @0 (16 bytes); int8 k @16;
 * big-endian int32 v @20}, 32 bytes (trailing padding 24..31) */
static hid_t
nested_type(void)
{
    hid_t in = H5Tcreate(H5T_COMPOUND, 16), t = H5Tcreate(H5T_COMPOUND, 32);
    H5Tinsert(in, "c", 0, H5T_STD_I8LE);
    H5Tinsert(in, "d", 8, H5T_IEEE_F64LE);
    H5Tinsert(t, "s", 0, in);
    H5Tinsert(t, "k", 16, H5T_STD_I8LE);
    H5Tinsert(t, "v", 20, H5T_STD_I32BE);
    H5Tclose(in);
    return t;
}

/* Element i of each test compound, written into `e` (the type's size; padding bytes 0xAB, which the
 * connector need not keep). */
static void
fill_elem(int which, int i, uint8_t *e)
{
    int32_t i4 = 1000 * (i + 1) + 7, v = -70000 * (i + 1);
    int16_t i2 = (int16_t)(-3 * i - 1);
    int8_t  c = (int8_t)(i - 2), k = (int8_t)(10 + i);
    double  d = 0.25 + i * 1.5;
    float   f = -1.5f * (float)i;
    memset(e, 0xAB, which == 2 ? 32 : 24);
    if (which == 0) {
        memcpy(e, &i4, 4);
        memcpy(e + 8, &d, 8);
        memcpy(e + 16, &i2, 2);
    }
    else if (which == 1) {
        memcpy(e, &f, 4);
        memcpy(e + 16, &i4, 4);
        memcpy(e + 8, &d, 8);
    }
    else {
        uint8_t be[4] = {(uint8_t)((uint32_t)v >> 24), (uint8_t)((uint32_t)v >> 16),
                         (uint8_t)((uint32_t)v >> 8), (uint8_t)(uint32_t)v};
        memcpy(e, &c, 1);
        memcpy(e + 8, &d, 8);
        memcpy(e + 16, &k, 1);
        memcpy(e + 20, be, 4);
    }
}

/* True if the members of element `e` equal those of fill_elem(which, i) (padding ignored). */
static int
elem_equal(int which, int i, const uint8_t *e)
{
    uint8_t w[32];
    fill_elem(which, i, w);
    if (which == 0)
        return !memcmp(e, w, 4) && !memcmp(e + 8, w + 8, 8) && !memcmp(e + 16, w + 16, 2);
    if (which == 1)
        return !memcmp(e, w, 4) && !memcmp(e + 8, w + 8, 8) && !memcmp(e + 16, w + 16, 4);
    return e[0] == w[0] && !memcmp(e + 8, w + 8, 8) && e[16] == w[16] && !memcmp(e + 20, w + 20, 4);
}

/* `got` has the size, members (names, offsets, classes, in order) of `want` and H5Tequal holds. */
static int
expect_same_type(hid_t got, hid_t want, const char *what)
{
    int n = H5Tget_nmembers(want);
    if (H5Tget_size(got) != H5Tget_size(want))
        FAILF("%s: type of %zu bytes, expected %zu", what, H5Tget_size(got), H5Tget_size(want));
    ASSERT_EQ_INT(H5Tget_nmembers(got), n);
    for (int i = 0; i < n; i++) {
        char *a = H5Tget_member_name(got, (unsigned)i), *b = H5Tget_member_name(want, (unsigned)i);
        int   same = a && b && !strcmp(a, b);
        if (!same)
            FAILF("%s: member %d is '%s', expected '%s'", what, i, a ? a : "?", b ? b : "?");
        H5free_memory(a);
        H5free_memory(b);
        if (H5Tget_member_offset(got, (unsigned)i) != H5Tget_member_offset(want, (unsigned)i))
            FAILF("%s: member %d at offset %zu, expected %zu", what, i,
                  H5Tget_member_offset(got, (unsigned)i), H5Tget_member_offset(want, (unsigned)i));
    }
    if (H5Tequal(got, want) <= 0)
        FAILF("%s: H5Tequal with the type it was made with is false", what);
    return 0;
}

/* ---- store documents ---------------------------------------------------------------------------------- */
/* The array document of `name` (zarr.json or .zarray), parsed; NULL if missing. */
static struct json_object *
array_doc(const char *store, const char *name, int version)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s/%s", store, name, version == 3 ? "zarr.json" : ".zarray");
    return json_object_from_file(p);
}

/* The zarr data type of `name` as compact JSON text, into `out`. */
static int
dtype_text(const char *store, const char *name, int version, char *out, size_t n)
{
    struct json_object *doc = array_doc(store, name, version), *dt;
    ASSERT(doc);
    ASSERT(json_object_object_get_ex(doc, version == 3 ? "data_type" : "dtype", &dt));
    snprintf(out, n, "%s", json_object_to_json_string_ext(dt, JSON_C_TO_STRING_PLAIN));
    json_object_put(doc);
    return 0;
}

/* The bytes of chunk 0 of 1-D array `name` (malloc'ed into *buf), *len its size. */
static int
chunk0(const char *store, const char *name, int version, uint8_t **buf, size_t *len)
{
    char  p[1200];
    FILE *f;
    long  sz;
    snprintf(p, sizeof p, "%s/%s/%s", store, name, version == 3 ? "c/0" : "0");
    ASSERT((f = fopen(p, "rb")) != NULL);
    fseek(f, 0, SEEK_END);
    sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    ASSERT(sz >= 0 && (*buf = malloc((size_t)sz + 1)));
    ASSERT(fread(*buf, 1, (size_t)sz, f) == (size_t)sz);
    fclose(f);
    *len = (size_t)sz;
    return 0;
}

/* ---- compounds ---------------------------------------------------------------------------------------- */
static int
test_setup(void)
{
    snprintf(dir, sizeof dir, "%s", test_tmpdir("type_layout"));
    ASSERT(dir[0]);
    return 0;
}

/* A 1-D chunked dataset `name` of `type` (one chunk of N), written from `buf` with `type` as memory type. */
static int
write_dset(hid_t loc, const char *name, hid_t type, const void *buf)
{
    hsize_t n  = N;
    hid_t   sp = H5Screate_simple(1, &n, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d;
    ASSERT(H5Pset_chunk(dcpl, 1, &n) >= 0);
    ASSERT((d = H5Dcreate2(loc, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    ASSERT(H5Dclose(d) >= 0);
    H5Pclose(dcpl);
    H5Sclose(sp);
    return 0;
}

/* An attribute `name` of `type` with N elements on `loc`. */
static int
write_attr(hid_t loc, const char *name, hid_t type, const void *buf)
{
    hsize_t n  = N;
    hid_t   sp = H5Screate_simple(1, &n, NULL), a;
    ASSERT((a = H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, type, buf) >= 0);
    ASSERT(H5Aclose(a) >= 0);
    H5Sclose(sp);
    return 0;
}

/* Dataset `name` and its attribute "a" read back: the type as made, the values as written. */
static int
check_compound(hid_t f, const char *name, int which, hid_t want)
{
    size_t   sz = H5Tget_size(want);
    uint8_t *buf;
    hid_t    d, t, a;
    char     what[300];
    ASSERT((buf = malloc(N * sz)));
    ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
    ASSERT((t = H5Dget_type(d)) >= 0);
    snprintf(what, sizeof what, "dataset '%s'", name);
    if (expect_same_type(t, want, what))
        return 1;
    H5Tclose(t);
    memset(buf, 0, N * sz);
    ASSERT(H5Dread(d, want, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    for (int i = 0; i < N; i++)
        if (!elem_equal(which, i, buf + (size_t)i * sz))
            FAILF("%s: element %d differs from what was written", what, i);
    ASSERT((a = H5Aopen(d, "a", H5P_DEFAULT)) >= 0);
    ASSERT((t = H5Aget_type(a)) >= 0);
    snprintf(what, sizeof what, "attribute 'a' of '%s'", name);
    if (expect_same_type(t, want, what))
        return 1;
    H5Tclose(t);
    memset(buf, 0, N * sz);
    ASSERT(H5Aread(a, want, buf) >= 0);
    for (int i = 0; i < N; i++)
        if (!elem_equal(which, i, buf + (size_t)i * sz))
            FAILF("%s: element %d differs from what was written", what, i);
    H5Aclose(a);
    H5Dclose(d);
    free(buf);
    return 0;
}

/* The chunk of `name` holds N elements of `size` bytes, element i's member `off` (`len` bytes) as
 * fill_elem wrote it: the stored element is the HDF5 layout, padding included. */
static int
check_chunk(const char *store, const char *name, int version, int which, size_t size, size_t off, size_t len)
{
    uint8_t *c;
    size_t   n;
    uint8_t  w[32];
    if (chunk0(store, name, version, &c, &n))
        return 1;
    if (n != N * size)
        FAILF("%s: chunk of %zu bytes, expected %d x %zu", name, n, N, size);
    for (int i = 0; i < N; i++) {
        fill_elem(which, i, w);
        if (memcmp(c + (size_t)i * size + off, w + off, len))
            FAILF("%s: stored element %d has another value at byte %zu", name, i, off);
    }
    free(c);
    return 0;
}

static int
compounds(int version)
{
    char               store[600], text[2048];
    hid_t              fapl, f, types[3], g;
    uint8_t            buf[N * 32];
    static const char *names[3] = {"padded", "ooo", "nested"};

    snprintf(store, sizeof store, "%s/compounds_v%d.zarr", dir, version);
    types[0] = padded_type();
    types[1] = ooo_type();
    types[2] = nested_type();
    ASSERT((fapl = zfapl(version)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(store));
    for (int w = 0; w < 3; w++) {
        size_t sz = H5Tget_size(types[w]);
        hid_t  d;
        for (int i = 0; i < N; i++)
            fill_elem(w, i, buf + (size_t)i * sz);
        if (write_dset(f, names[w], types[w], buf))
            return 1;
        ASSERT((d = H5Dopen2(f, names[w], H5P_DEFAULT)) >= 0);
        if (write_attr(d, "a", types[w], buf))
            return 1;
        H5Dclose(d);
    }
    /* a user-defined fill value of the padded type: zarr's fill_value is the element with its padding */
    {
        hsize_t two = 2 * N, n = N;
        uint8_t fv[24];
        hid_t   sp = H5Screate_simple(1, &two, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d;
        fill_elem(0, 9, fv);
        ASSERT(H5Pset_chunk(dcpl, 1, &n) >= 0 && H5Pset_fill_value(dcpl, types[0], fv) >= 0);
        ASSERT((d = H5Dcreate2(f, "filled", types[0], sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
        for (int i = 0; i < N; i++)
            fill_elem(0, i, buf + (size_t)i * 24);
        {
            hid_t   fs = H5Dget_space(d), ms = H5Screate_simple(1, &n, NULL);
            hsize_t start = 0;
            ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &n, NULL) >= 0);
            ASSERT(H5Dwrite(d, types[0], ms, fs, H5P_DEFAULT, buf) >= 0);
            H5Sclose(ms);
            H5Sclose(fs);
        }
        H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(sp);
    }
    /* an attribute on a group too */
    ASSERT((g = H5Gopen2(f, "/", H5P_DEFAULT)) >= 0);
    for (int i = 0; i < N; i++)
        fill_elem(0, i, buf + (size_t)i * 24);
    if (write_attr(g, "ga", types[0], buf))
        return 1;
    H5Gclose(g);
    /* the same process sees them as made */
    for (int w = 0; w < 3; w++)
        if (check_compound(f, names[w], w, types[w]))
            return 1;
    ASSERT(H5Fclose(f) >= 0);

    /* what zarr readers see: a struct in offset order with the padding as void fields */
    ASSERT(dtype_text(store, "padded", version, text, sizeof text) == 0);
    if (version == 2)
        ASSERT_STR(text, "[[\"f0\",\"<i4\"],[\"_h5zarr_pad4\",\"|V4\"],[\"f1\",\"<f8\"],[\"f2\",\"<i2\"],"
                         "[\"_h5zarr_pad18\",\"|V6\"]]");
    else
        ASSERT_STR(text, "{\"name\":\"struct\",\"configuration\":{\"fields\":[{\"name\":\"f0\",\"data_type\":"
                         "\"int32\"},{\"name\":\"_h5zarr_pad4\",\"data_type\":\"r32\"},{\"name\":\"f1\","
                         "\"data_type\":\"float64\"},{\"name\":\"f2\",\"data_type\":\"int16\"},{\"name\":"
                         "\"_h5zarr_pad18\",\"data_type\":\"r48\"}]}}");
    ASSERT(dtype_text(store, "ooo", version, text, sizeof text) == 0);
    if (version == 2)
        ASSERT_STR(text, "[[\"f1\",\"<f4\"],[\"_h5zarr_pad4\",\"|V4\"],[\"f3\",\"<f8\"],[\"f2\",\"<i4\"],"
                         "[\"_h5zarr_pad20\",\"|V4\"]]");
    ASSERT(dtype_text(store, "nested", version, text, sizeof text) == 0);
    if (version == 2)
        ASSERT_STR(text,
                   "[[\"s\",[[\"c\",\"|i1\"],[\"_h5zarr_pad1\",\"|V7\"],[\"d\",\"<f8\"]]],[\"k\",\"|i1\"],"
                   "[\"_h5zarr_pad17\",\"|V3\"],[\"v\",\">i4\"],[\"_h5zarr_pad24\",\"|V8\"]]");
    /* the stored element is the HDF5 layout: 24 (32) bytes, members at their offsets */
    if (check_chunk(store, "padded", version, 0, 24, 8, 8) ||
        check_chunk(store, "padded", version, 0, 24, 16, 2) ||
        check_chunk(store, "ooo", version, 1, 24, 16, 4) || check_chunk(store, "ooo", version, 1, 24, 8, 8) ||
        check_chunk(store, "nested", version, 2, 32, 8, 8))
        return 1;

    /* reopened: the types as made, the values as written */
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    for (int w = 0; w < 3; w++)
        if (check_compound(f, names[w], w, types[w]))
            return 1;
    {
        hid_t a, t;
        ASSERT((a = H5Aopen_by_name(f, "/", "ga", H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT((t = H5Aget_type(a)) >= 0);
        if (expect_same_type(t, types[0], "attribute 'ga' of '/'"))
            return 1;
        memset(buf, 0, sizeof buf);
        ASSERT(H5Aread(a, types[0], buf) >= 0);
        for (int i = 0; i < N; i++)
            ASSERT(elem_equal(0, i, buf + (size_t)i * 24));
        H5Tclose(t);
        H5Aclose(a);
    }
    /* unwritten elements read as the fill value; the dcpl reports it */
    {
        uint8_t all[2 * N * 24], fv[24];
        hid_t   d, dcpl;
        ASSERT((d = H5Dopen2(f, "filled", H5P_DEFAULT)) >= 0);
        ASSERT(H5Dread(d, types[0], H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0);
        for (int i = 0; i < 2 * N; i++)
            if (!elem_equal(0, i < N ? i : 9, all + (size_t)i * 24))
                FAILF("filled[%d] is not %s", i, i < N ? "the value written" : "the fill value");
        ASSERT((dcpl = H5Dget_create_plist(d)) >= 0);
        ASSERT(H5Pget_fill_value(dcpl, types[0], fv) >= 0);
        ASSERT(elem_equal(0, 9, fv));
        H5Pclose(dcpl);
        H5Dclose(d);
    }
    /* reading one member through a memory type of its own (HDF5 converts by member name) */
    {
        hid_t  d, mt = H5Tcreate(H5T_COMPOUND, sizeof(double));
        double v[N];
        H5Tinsert(mt, "f3", 0, H5T_NATIVE_DOUBLE);
        ASSERT((d = H5Dopen2(f, "ooo", H5P_DEFAULT)) >= 0);
        ASSERT(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
        for (int i = 0; i < N; i++)
            if (v[i] != 0.25 + i * 1.5)
                FAILF("ooo.f3[%d] = %g, expected %g", i, v[i], 0.25 + i * 1.5);
        H5Dclose(d);
        H5Tclose(mt);
    }
    ASSERT(H5Fclose(f) >= 0);
    for (int w = 0; w < 3; w++)
        H5Tclose(types[w]);
    H5Pclose(fapl);
    return 0;
}

static int
test_compound_padding_v3(void)
{
    return compounds(3);
}

static int
test_compound_padding_v2(void)
{
    return compounds(2);
}

/* zarr-python 2.13 (Debian's) reads the v2 store written above: the members by name, the item size 24. */
static int
test_compound_zarr_python(void)
{
    char cmd[2000], store[600];
    int  rc;
    if (access("/usr/bin/python3", X_OK) != 0 ||
        system("/usr/bin/python3 -c 'import zarr' 2>/dev/null") != 0) {
        printf("skipped: no zarr-python (Debian's python3-zarr) to read the store\n");
        return TEST_SKIP;
    }
    snprintf(store, sizeof store, "%s/compounds_v2.zarr", dir);
    if (!h5t_is_zarr_store(store) && compounds(2)) /* run alone: write the store first */
        return 1;
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c 'import zarr, numpy as np\n"
             "z = zarr.open(\"%s\", mode=\"r\")\n"
             "a = z[\"padded\"]\n"
             "assert a.dtype.itemsize == 24, a.dtype\n"
             "assert a.dtype.fields[\"f1\"][1] == 8 and a.dtype.fields[\"f2\"][1] == 16, a.dtype\n"
             "v = a[:]\n"
             "assert list(v[\"f0\"]) == [1007, 2007, 3007, 4007, 5007], v\n"
             "assert list(v[\"f1\"]) == [0.25, 1.75, 3.25, 4.75, 6.25], v\n"
             "assert list(v[\"f2\"]) == [-1, -4, -7, -10, -13], v\n"
             "o = z[\"ooo\"][:]\n"
             "assert list(o[\"f2\"]) == [1007, 2007, 3007, 4007, 5007] and o.dtype.fields[\"f2\"][1] == 16\n"
             "n = z[\"nested\"][:]\n"
             "assert list(n[\"s\"][\"d\"]) == [0.25, 1.75, 3.25, 4.75, 6.25] and list(n[\"v\"]) == "
             "[-70000 * (i + 1) for i in range(5)], n\n"
             "w = z[\"filled\"][:]\n"
             "assert list(w[\"f0\"]) == [1007, 2007, 3007, 4007, 5007] + [10007] * 5, w\n"
             "assert list(w[\"f1\"][5:]) == [13.75] * 5 and list(w[\"f2\"][5:]) == [-28] * 5, w\n"
             "'",
             store);
    rc = system(cmd);
    if (rc != 0)
        FAILF("zarr-python could not read the compounds of %s (exit %d)", store, rc);
    return 0;
}

/* A store as written before: compounds were packed (H5Tpack) before they were stored. Such a store
 * opens with the packed type and its values. */
static int
test_compound_old_packed(void)
{
    char    store[600], text[1024];
    hid_t   fapl, f, d, t, packed = padded_type(), padded = padded_type();
    uint8_t buf[N * 24], pk[N * 14];
    ASSERT(H5Tpack(packed) >= 0 && H5Tget_size(packed) == 14);
    for (int i = 0; i < N; i++)
        fill_elem(0, i, buf + i * 24);
    snprintf(store, sizeof store, "%s/old_packed.zarr", dir);
    ASSERT((fapl = zfapl(2)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    {
        hsize_t n  = N;
        hid_t   sp = H5Screate_simple(1, &n, NULL);
        ASSERT((d = H5Dcreate2(f, "x", packed, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Dwrite(d, padded, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
        H5Dclose(d);
        H5Sclose(sp);
    }
    ASSERT(H5Fclose(f) >= 0);
    /* the earlier form: a packed struct, no padding fields */
    ASSERT(dtype_text(store, "x", 2, text, sizeof text) == 0);
    ASSERT_STR(text, "[[\"f0\",\"<i4\"],[\"f1\",\"<f8\"],[\"f2\",\"<i2\"]]");
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "x", H5P_DEFAULT)) >= 0);
    ASSERT((t = H5Dget_type(d)) >= 0);
    if (expect_same_type(t, packed, "old packed dataset"))
        return 1;
    ASSERT(H5Dread(d, packed, H5S_ALL, H5S_ALL, H5P_DEFAULT, pk) >= 0);
    for (int i = 0; i < N; i++) {
        uint8_t *e = pk + i * 14;
        ASSERT(!memcmp(e, buf + i * 24, 4) && !memcmp(e + 4, buf + i * 24 + 8, 8) &&
               !memcmp(e + 12, buf + i * 24 + 16, 2));
    }
    memset(buf, 0, sizeof buf);
    ASSERT(H5Dread(d, padded, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    for (int i = 0; i < N; i++)
        ASSERT(elem_equal(0, i, buf + i * 24));
    H5Tclose(t);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    H5Tclose(packed);
    H5Tclose(padded);
    H5Pclose(fapl);
    return 0;
}

/* ---- custom floats ------------------------------------------------------------------------------------ */
/* h5py's test_custom_float_promotion data (float32) */
static const float wdata[28]  = {-1.50066626e-09f, 1.40062184e-09f,  1.81216819e-10f,  4.01087163e-10f,
                                 4.27917257e-10f,  -7.04858394e-11f, 5.74800652e-10f,  -1.50066626e-09f,
                                 4.86579665e-10f,  3.42879503e-10f,  5.12045517e-10f,  5.10226528e-10f,
                                 2.24190444e-10f,  3.93356459e-10f,  -1.50066626e-09f, 5.24778443e-10f,
                                 8.19454726e-10f,  1.28966349e-09f,  1.68483894e-10f,  5.71276360e-11f,
                                 -1.08684617e-10f, -1.50066626e-09f, -1.08343556e-10f, -1.58934199e-10f,
                                 8.52196536e-10f,  6.18456397e-10f,  6.16637408e-10f,  1.31694833e-09f};
static const float wdata2[28] = {
    -1.50066626e-09f, 5.63886715e-10f,  -8.74251782e-11f, 1.32558853e-10f,  1.59161573e-10f, 2.29420039e-10f,
    -7.24185156e-11f, -1.50066626e-09f, 1.87810656e-10f,  7.74889486e-10f,  3.95630195e-10f, 9.42236511e-10f,
    8.38554115e-10f,  -8.71978045e-11f, -1.50066626e-09f, 6.20275387e-10f,  7.34871719e-10f, 6.64840627e-10f,
    2.64662958e-10f,  1.05319486e-09f,  1.68256520e-10f,  -1.50066626e-09f, 1.67347025e-10f, 5.12045517e-10f,
    3.36513040e-10f,  1.02545528e-10f,  1.28784450e-09f,  4.06089384e-10f};
/* wider values for the layouts whose exponent reaches ordinary numbers */
static const float wdata3[28] = {0.0f,   1.0f,     -1.0f,    0.5f,   3.140625f, -2.75f,   100.0f,
                                 0.125f, -0.0625f, 1000.5f,  7.0f,   -12.25f,   0.3f,     65504.0f,
                                 1e-3f,  -1e-4f,   2.0f,     4.0f,   8.0f,      16.0f,    -32.5f,
                                 1.5e5f, -7.5e-6f, 123.456f, -0.75f, 6.0f,      -100.25f, 42.0f};

#define NFLOAT 10

/* Custom float type `k` (new id); *data the values h5py-like code writes into it, *exact whether they
 * must read back unchanged as float32 (h5py asserts so for its first two), *conv whether HDF5 converts
 * to and from it at all (it has no conversion for msbset normalization). */
static hid_t
custom_float(int k, const float **data, int *exact, int *conv)
{
    hid_t t = H5I_INVALID_HID;
    *data   = wdata2;
    *exact  = 0;
    *conv   = 1;
    switch (k) {
        case 0: /* h5py mytype: larger bias */
            t = H5Tcopy(H5T_IEEE_F16LE);
            H5Tset_fields(t, 14, 9, 5, 0, 9);
            H5Tset_size(t, 2);
            H5Tset_ebias(t, 53);
            *data  = wdata;
            *exact = 1;
            break;
        case 1: /* h5py mytype2: larger exponent */
            t = H5Tcopy(H5T_IEEE_F16LE);
            H5Tset_fields(t, 15, 9, 6, 0, 9);
            H5Tset_size(t, 2);
            H5Tset_ebias(t, 53);
            *exact = 1;
            break;
        case 2: /* h5py mytype3: IEEE half re-made (the natural float16) */
            t = H5Tcopy(H5T_IEEE_F16LE);
            H5Tset_fields(t, 15, 10, 5, 0, 10);
            H5Tset_size(t, 2);
            H5Tset_ebias(t, 15);
            break;
        case 3: /* h5py mytype4: a bias far beyond 2^esize - 1 */
            t = H5Tcopy(H5T_IEEE_F16LE);
            H5Tset_fields(t, 15, 10, 5, 0, 10);
            H5Tset_size(t, 2);
            H5Tset_ebias(t, 258);
            break;
        case 4: /* long double (x86: 80 bits in 16 bytes, msb of the mantissa stored) */
            t     = H5Tcopy(H5T_NATIVE_LDOUBLE);
            *data = wdata3;
            break;
        case 5: /* every field custom: offset 6, precision 25, sign 30, exponent [22, 8], mantissa [6, 16]
                 * with its msb stored, bias 100, internal padding and lsb padding of ones */
            t = H5Tcopy(H5T_IEEE_F32LE);
            H5Tset_fields(t, 30, 22, 8, 6, 16);
            H5Tset_offset(t, 6);
            H5Tset_precision(t, 25);
            H5Tset_size(t, 4);
            H5Tset_ebias(t, 100);
            H5Tset_norm(t, H5T_NORM_NONE);
            H5Tset_inpad(t, H5T_PAD_ONE);
            H5Tset_pad(t, H5T_PAD_ONE, H5T_PAD_ZERO);
            *data = wdata3;
            break;
        case 6: /* fields partly below the offset (HDF5 allows it: H5Tset_offset does not move them) */
            t = H5Tcopy(H5T_IEEE_F32LE);
            H5Tset_fields(t, 23, 16, 7, 0, 16);
            H5Tset_precision(t, 24);
            H5Tset_offset(t, 8);
            H5Tset_ebias(t, 63);
            *data = wdata3;
            break;
        case 7: /* h5py's mytype, big-endian */
            t = H5Tcopy(H5T_IEEE_F16BE);
            H5Tset_fields(t, 14, 9, 5, 0, 9);
            H5Tset_size(t, 2);
            H5Tset_ebias(t, 53);
            *data = wdata;
            break;
        case 8: /* a 6-byte float: 1 + 11 + 36 bits, bias 2^32 - 1 (the largest HDF5's format keeps) */
            t = H5Tcopy(H5T_IEEE_F64LE);
            H5Tset_fields(t, 47, 36, 11, 0, 36);
            H5Tset_precision(t, 48);
            H5Tset_size(t, 6);
            H5Tset_ebias(t, 4294967295u);
            *data = wdata3;
            break;
        case 9: /* msbset normalization and internal padding (stored only: HDF5 converts none of it) */
            t = H5Tcopy(H5T_IEEE_F32LE);
            H5Tset_fields(t, 23, 16, 7, 0, 16);
            H5Tset_precision(t, 24);
            H5Tset_offset(t, 8);
            H5Tset_ebias(t, 63);
            H5Tset_norm(t, H5T_NORM_MSBSET);
            H5Tset_inpad(t, H5T_PAD_ONE);
            *conv = 0;
            break;
    }
    return t;
}

/* `n` elements of `t` in `a` and `b` are the same numbers: both converted by HDF5 to double, bit for bit
 * (bits of the element that are no part of the number may differ). */
static int
same_values(hid_t t, const uint8_t *a, const uint8_t *b, size_t n, const char *what)
{
    size_t   sz = H5Tget_size(t), big = sz > 8 ? sz : 8;
    uint8_t *x = calloc(n, big), *y = calloc(n, big);
    ASSERT(x && y);
    memcpy(x, a, n * sz);
    memcpy(y, b, n * sz);
    ASSERT(H5Tconvert(t, H5T_NATIVE_DOUBLE, n, x, NULL, H5P_DEFAULT) >= 0);
    ASSERT(H5Tconvert(t, H5T_NATIVE_DOUBLE, n, y, NULL, H5P_DEFAULT) >= 0);
    for (size_t i = 0; i < n; i++)
        if (memcmp(x + 8 * i, y + 8 * i, 8)) {
            double u, v;
            memcpy(&u, x + 8 * i, 8);
            memcpy(&v, y + 8 * i, 8);
            FAILF("%s[%zu] is %.17g, expected %.17g", what, i, u, v);
        }
    free(x);
    free(y);
    return 0;
}

/* Bytes no conversion made: element i's byte j is (i * 37 + j * 11 + 5) mod 256. */
static void
pattern(uint8_t *p, size_t n, size_t sz)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < sz; j++)
            p[i * sz + j] = (uint8_t)(i * 37 + j * 11 + 5);
}

static int
floats(int version)
{
    char    store[600], name[32];
    hid_t   fapl, f, types[NFLOAT];
    hsize_t dims[2] = {4, 7};

    snprintf(store, sizeof store, "%s/floats_v%d.zarr", dir, version);
    ASSERT((fapl = zfapl(version)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    for (int k = 0; k < NFLOAT; k++) {
        const float *data;
        int          exact, conv;
        hid_t        sp = H5Screate_simple(2, dims, NULL), d, a;
        size_t       sz;
        uint8_t     *raw;
        ASSERT((types[k] = custom_float(k, &data, &exact, &conv)) >= 0);
        sz = H5Tget_size(types[k]);
        ASSERT((raw = malloc(28 * sz)));
        pattern(raw, 28, sz);
        /* DS<k>: h5py's way, float32 values HDF5 converts; RAW<k>: bytes written as they are */
        snprintf(name, sizeof name, "DS%d", k);
        if ((d = H5Dcreate2(f, name, types[k], sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
            FAILF("can't create %s with custom float %d", name, k);
        if (conv)
            ASSERT(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
        else
            ASSERT(H5Dwrite(d, types[k], H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) >= 0);
        ASSERT((a = H5Acreate2(d, "a", types[k], sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        if (conv)
            ASSERT(H5Awrite(a, H5T_NATIVE_FLOAT, data) >= 0);
        else
            ASSERT(H5Awrite(a, types[k], raw) >= 0);
        H5Aclose(a);
        H5Dclose(d);
        snprintf(name, sizeof name, "RAW%d", k);
        ASSERT((d = H5Dcreate2(f, name, types[k], sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Dwrite(d, types[k], H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) >= 0);
        H5Dclose(d);
        H5Sclose(sp);
        free(raw);
    }
    ASSERT(H5Fclose(f) >= 0);

    /* what zarr readers see: raw bytes for the custom layouts, float16 only for IEEE's half */
    for (int k = 0; k < NFLOAT; k++) {
        char   text[1024], want[64];
        size_t sz = H5Tget_size(types[k]);
        snprintf(name, sizeof name, "DS%d", k);
        ASSERT(dtype_text(store, name, version, text, sizeof text) == 0);
        if (k == 2)
            snprintf(want, sizeof want, version == 2 ? "\"<f2\"" : "\"float16\"");
        else if (version == 2)
            snprintf(want, sizeof want, "\"|V%zu\"", sz);
        else
            snprintf(want, sizeof want, "\"r%zu\"", 8 * sz);
        if (strcmp(text, want))
            FAILF("%s (custom float %d): zarr data type %s, expected %s", name, k, text, want);
    }

    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    for (int k = 0; k < NFLOAT; k++) {
        const float *data;
        int          exact, conv;
        hid_t        d, t, a, tmp = custom_float(k, &data, &exact, &conv);
        size_t       sz = H5Tget_size(types[k]), bsz = sz > 4 ? sz : 4;
        uint8_t     *want = calloc(28, bsz), *got = calloc(28, sz), *raw = malloc(28 * sz);
        float        fg[28];
        H5Tclose(tmp);
        ASSERT(want && got && raw);
        pattern(raw, 28, sz);
        /* RAW<k>: the bytes written, bit for bit */
        snprintf(name, sizeof name, "RAW%d", k);
        ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
        ASSERT((t = H5Dget_type(d)) >= 0);
        if (H5Tequal(t, types[k]) <= 0)
            FAILF("%s: H5Dget_type is not the custom float %d it was made with", name, k);
        H5Tclose(t);
        ASSERT(H5Dread(d, types[k], H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
        if (memcmp(got, raw, 28 * sz))
            FAILF("%s: the bytes read back differ from those written (custom float %d)", name, k);
        H5Dclose(d);
        /* DS<k>: the numbers HDF5 makes of the float32 values in this type */
        if (conv) {
            memcpy(want, data, sizeof wdata);
            ASSERT(H5Tconvert(H5T_NATIVE_FLOAT, types[k], 28, want, NULL, H5P_DEFAULT) >= 0);
        }
        else
            memcpy(want, raw, 28 * sz);
        snprintf(name, sizeof name, "DS%d", k);
        ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
        ASSERT((t = H5Dget_type(d)) >= 0);
        if (H5Tequal(t, types[k]) <= 0)
            FAILF("%s: H5Dget_type is not the custom float %d it was made with", name, k);
        H5Tclose(t);
        memset(got, 0, 28 * sz);
        ASSERT(H5Dread(d, types[k], H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
        if (conv ? same_values(types[k], got, want, 28, name) : memcmp(got, want, 28 * sz) != 0)
            FAILF("%s: values differ from those written (custom float %d)", name, k);
        if (conv) {
            ASSERT(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, fg) >= 0);
            ASSERT(H5Tconvert(types[k], H5T_NATIVE_FLOAT, 28, want, NULL, H5P_DEFAULT) >= 0);
            if (memcmp(fg, want, sizeof fg))
                FAILF("%s: read as float32, not what HDF5 converts the stored numbers to", name);
            if (exact && memcmp(fg, data, sizeof fg))
                FAILF("%s: the values h5py writes do not read back equal (ebias/esize promotion)", name);
        }
        ASSERT((a = H5Aopen(d, "a", H5P_DEFAULT)) >= 0);
        ASSERT((t = H5Aget_type(a)) >= 0);
        if (H5Tequal(t, types[k]) <= 0)
            FAILF("%s: H5Aget_type is not the custom float %d it was made with", name, k);
        H5Tclose(t);
        memset(got, 0, 28 * sz);
        ASSERT(H5Aread(a, types[k], got) >= 0);
        if (conv) {
            memcpy(want, data, sizeof wdata);
            ASSERT(H5Tconvert(H5T_NATIVE_FLOAT, types[k], 28, want, NULL, H5P_DEFAULT) >= 0);
            if (same_values(types[k], got, want, 28, "attribute a"))
                return 1;
        }
        else if (memcmp(got, raw, 28 * sz))
            FAILF("%s: attribute a's bytes differ from those written", name);
        H5Aclose(a);
        H5Dclose(d);
        free(want);
        free(got);
        free(raw);
    }
    ASSERT(H5Fclose(f) >= 0);
    for (int k = 0; k < NFLOAT; k++)
        H5Tclose(types[k]);
    H5Pclose(fapl);
    return 0;
}

static int
test_custom_float_v3(void)
{
    return floats(3);
}

static int
test_custom_float_v2(void)
{
    return floats(2);
}

/* Rewrites key `key` of `name`'s reserved type record (v3 zarr.json, top-level _h5zarr.type) with the
 * JSON text `value`. */
static int
set_type_field(const char *store, const char *name, const char *key, const char *value)
{
    char                p[1200];
    struct json_object *doc, *meta, *type;
    snprintf(p, sizeof p, "%s/%s/zarr.json", store, name);
    ASSERT((doc = json_object_from_file(p)) != NULL);
    ASSERT(json_object_object_get_ex(doc, "_h5zarr", &meta) &&
           json_object_object_get_ex(meta, "type", &type) && json_object_is_type(type, json_type_object));
    json_object_object_add(type, key, json_tokener_parse(value));
    ASSERT(json_object_to_file_ext(p, doc, JSON_C_TO_STRING_PLAIN) == 0);
    json_object_put(doc);
    return 0;
}

/* H5Dopen2 of `name` fails with `needle` among the messages. */
static int
open_refused(hid_t f, const char *name, const char *needle)
{
    char  msgs[4096] = "";
    hid_t d;
    H5E_BEGIN_TRY { d = H5Dopen2(f, name, H5P_DEFAULT); }
    H5E_END_TRY
    if (d >= 0)
        FAILF("%s opened with a corrupt type record", name);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msgs);
    H5Eclear2(H5E_DEFAULT);
    if (!strstr(msgs, needle))
        FAILF("%s: expected \"%s\" in \"%s\"", name, needle, msgs);
    return 0;
}

/* Recorded float fields outside what HDF5 keeps are refused, naming the field; the biases HDF5 allows
 * are read. */
static int
test_custom_float_bad_fields(void)
{
    char         store[600];
    hid_t        fapl, f, t, d, sp;
    hsize_t      n = 4;
    const float *data;
    int          exact, conv;
    snprintf(store, sizeof store, "%s/bad_floats.zarr", dir);
    ASSERT((fapl = zfapl(3)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    t  = custom_float(0, &data, &exact, &conv);
    sp = H5Screate_simple(1, &n, NULL);
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, "b%d", i);
        ASSERT((d = H5Dcreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        H5Dclose(d);
    }
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(set_type_field(store, "b0", "ebias", "4294967296") == 0);
    ASSERT(set_type_field(store, "b1", "mantissa", "[10, 9]") == 0);
    ASSERT(set_type_field(store, "b2", "exponent", "[0, 64]") == 0);
    ASSERT(set_type_field(store, "b3", "ebias", "4294967295") == 0); /* allowed */
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    if (open_refused(f, "b0", "_h5zarr.type.ebias: 4294967296 is out of range (0..4294967295)") ||
        open_refused(f, "b1", "_h5zarr.type.mantissa: bits 10 + 9 exceed the 16 bits of the type") ||
        open_refused(f, "b2", "_h5zarr.type.exponent"))
        return 1;
    ASSERT((d = H5Dopen2(f, "b3", H5P_DEFAULT)) >= 0);
    {
        hid_t dt = H5Dget_type(d);
        ASSERT(H5Tget_ebias(dt) == 4294967295u);
        H5Tclose(dt);
    }
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    H5Sclose(sp);
    H5Tclose(t);
    H5Pclose(fapl);
    return 0;
}

/* A store as written before: a custom float kept as a zarr float of its size (its HDF5 type recorded).
 * It still opens, and its bits read back. */
static int
test_custom_float_old_form(void)
{
    char                store[600], p[1200];
    hid_t               fapl, f, t, d, sp, dt;
    hsize_t             n = 28;
    const float        *data;
    int                 exact, conv;
    uint8_t             want[28 * 4], got[28 * 2];
    struct json_object *doc;
    snprintf(store, sizeof store, "%s/old_float.zarr", dir);
    ASSERT((fapl = zfapl(2)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    t  = custom_float(3, &data, &exact, &conv);
    sp = H5Screate_simple(1, &n, NULL);
    ASSERT((d = H5Dcreate2(f, "x", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    /* the earlier form said "<f2" */
    snprintf(p, sizeof p, "%s/x/.zarray", store);
    ASSERT((doc = json_object_from_file(p)) != NULL);
    json_object_object_add(doc, "dtype", json_object_new_string("<f2"));
    ASSERT(json_object_to_file(p, doc) == 0);
    json_object_put(doc);
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "x", H5P_DEFAULT)) >= 0);
    ASSERT((dt = H5Dget_type(d)) >= 0);
    ASSERT(H5Tequal(dt, t) > 0);
    ASSERT(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    memcpy(want, data, sizeof wdata);
    ASSERT(H5Tconvert(H5T_NATIVE_FLOAT, t, 28, want, NULL, H5P_DEFAULT) >= 0);
    ASSERT(memcmp(got, want, sizeof got) == 0);
    H5Tclose(dt);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    H5Sclose(sp);
    H5Tclose(t);
    H5Pclose(fapl);
    return 0;
}

static const test_entry tests[] = {TEST_ENTRY(setup),
                                   TEST_ENTRY(compound_padding_v3),
                                   TEST_ENTRY(compound_padding_v2),
                                   TEST_ENTRY(compound_zarr_python),
                                   TEST_ENTRY(compound_old_packed),
                                   TEST_ENTRY(custom_float_v3),
                                   TEST_ENTRY(custom_float_v2),
                                   TEST_ENTRY(custom_float_bad_fields),
                                   TEST_ENTRY(custom_float_old_form)};

int
main(int argc, char **argv)
{
    /* registered after HDF5's own exit handler, so it runs first */
    H5open();
    atexit(close_leftovers);
    return RUN_TESTS(tests);
}
