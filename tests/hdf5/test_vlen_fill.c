/*
 * test_vlen_fill.c: fill values of datasets whose type holds pointers (issue 12). HDF5 keeps a dcpl's
 * fill value as one memory-form element; for a variable-length string that is a pointer, which the
 * connector once persisted inside the encoded dcpl, so every later reader (h5ls, h5dump, netCDF)
 * crashed. The fill value is now kept as data in `_h5zarr` ("fill" / "fill_packed"), the dcpl is
 * encoded without it, and a dcpl from an old store with pointer bytes is refused by default, read with
 * the opt-in legacy_reserved=1 without touching them, and converted by a read-write open with it.
 */
#include "runner.h"

#include <hdf5.h>
#include <json-c/json.h>
#include <stdint.h>

#include "h5test.h"

static char dir[400];

/* The array's `_h5zarr` object and zarr `fill_value` (new references; either may be NULL). */
static int
array_meta(const char *store, const char *name, int version, struct json_object **meta,
           struct json_object **fill)
{
    char                p[1200];
    struct json_object *doc, *attrs = NULL, *v;
    *meta = *fill = NULL;
    snprintf(p, sizeof p, "%s/%s/%s", store, name, version == 3 ? "zarr.json" : ".zarray");
    ASSERT((doc = json_object_from_file(p)) != NULL);
    if (json_object_object_get_ex(doc, "fill_value", &v))
        *fill = json_object_get(v);
    /* the reserved object is a top-level key of the array's own document, never an attribute */
    if (json_object_object_get_ex(doc, "_h5zarr", &v))
        *meta = json_object_get(v);
    if (version == 3)
        json_object_object_get_ex(doc, "attributes", &attrs);
    if (attrs && json_object_object_get_ex(attrs, "_h5zarr", NULL))
        FAILF("'%s' has _h5zarr among its attributes", name);
    json_object_put(doc);
    return 0;
}

static hid_t
str_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

/* Writes `s` (4 strings, chunks of 2, fill "abc", only element 0 written), `t` (scalar, fill
 * "scalar fill", never written), `n` (no fill value set, element 0 written), `v` (vlen of int, fill
 * {1,2,3}, never written) and `a` (array of 2 vlen strings: the packed form, fill {"x","yz"}). */
static int
write_store(const char *store, int version)
{
    hid_t       fapl, f, t, sp, dcpl, d, msp, vt, at;
    hsize_t     n = 4, c = 2, one = 1, two = 2, start = 0;
    const char *fill = "abc", *sfill = "scalar fill", *w0 = "w0";
    int         vals[3]  = {1, 2, 3};
    hvl_t       vfill    = {3, vals};
    const char *afill[2] = {"x", "yz"};

    ASSERT((fapl = h5t_zarr_fapl(version)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    t = str_type();
    ASSERT((sp = H5Screate_simple(1, &n, NULL)) >= 0);
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT(H5Pset_chunk(dcpl, 1, &c) >= 0);
    ASSERT(H5Pset_fill_value(dcpl, t, &fill) >= 0);
    ASSERT((d = H5Dcreate2(f, "s", t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    ASSERT((msp = H5Screate_simple(1, &one, NULL)) >= 0);
    ASSERT(H5Sselect_hyperslab(sp, H5S_SELECT_SET, &start, NULL, &one, NULL) >= 0);
    ASSERT(H5Dwrite(d, t, msp, sp, H5P_DEFAULT, &w0) >= 0);
    H5Dclose(d);
    H5Pclose(dcpl);

    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT(H5Pset_chunk(dcpl, 1, &c) >= 0);
    ASSERT((d = H5Dcreate2(f, "n", t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, t, msp, sp, H5P_DEFAULT, &w0) >= 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(msp);
    H5Sclose(sp);

    ASSERT((sp = H5Screate(H5S_SCALAR)) >= 0);
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT(H5Pset_fill_value(dcpl, t, &sfill) >= 0);
    ASSERT((d = H5Dcreate2(f, "t", t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);

    ASSERT((sp = H5Screate_simple(1, &two, NULL)) >= 0);
    ASSERT((vt = H5Tvlen_create(H5T_NATIVE_INT)) >= 0);
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT(H5Pset_fill_value(dcpl, vt, &vfill) >= 0);
    ASSERT((d = H5Dcreate2(f, "v", vt, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    ASSERT((at = H5Tarray_create2(t, 1, &two)) >= 0);
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT(H5Pset_fill_value(dcpl, at, afill) >= 0);
    ASSERT((d = H5Dcreate2(f, "a", at, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Tclose(at);
    H5Tclose(vt);
    H5Sclose(sp);
    H5Tclose(t);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    ASSERT(h5t_is_zarr_store(store));
    return 0;
}

/* The dcpl of `name` reports fill value `want` (NULL: the default fill). */
static int
check_dcpl_fill(hid_t f, const char *name, const char *want)
{
    hid_t            d, p, p2, t = str_type();
    H5D_fill_value_t fs  = H5D_FILL_VALUE_ERROR;
    char            *got = NULL;
    ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
    ASSERT((p = H5Dget_create_plist(d)) >= 0);
    ASSERT((p2 = H5Pcopy(p)) >= 0); /* HDF5 copies the fill value (the vlen conversion that crashed) */
    ASSERT(H5Pfill_value_defined(p2, &fs) >= 0);
    ASSERT_EQ_INT(fs, want ? H5D_FILL_VALUE_USER_DEFINED : H5D_FILL_VALUE_DEFAULT);
    if (want) {
        ASSERT(H5Pget_fill_value(p2, t, &got) >= 0);
        ASSERT_STR(got, want);
        H5free_memory(got);
    }
    H5Pclose(p2);
    H5Pclose(p);
    H5Dclose(d);
    H5Tclose(t);
    return 0;
}

static int
check_store(const char *store, int version)
{
    hid_t               f, d, t = str_type(), vt, at, p;
    char               *s[4] = {0}, *sc = NULL, *an[2] = {0};
    int                 vals[3] = {0};
    hvl_t               v[2], vf = {0, NULL};
    hsize_t             two = 2;
    struct json_object *meta, *fill, *x;

    /* the metadata: the fill value as data, no fill_default, zarr fill_value the string */
    ASSERT(array_meta(store, "s", version, &meta, &fill) == 0);
    ASSERT(meta && json_object_object_get_ex(meta, "fill", &x) && json_object_is_type(x, json_type_string));
    ASSERT_STR(json_object_get_string(x), "abc");
    ASSERT(!json_object_object_get_ex(meta, "fill_default", NULL));
    ASSERT(json_object_object_get_ex(meta, "dcpl", NULL));
    ASSERT(fill && json_object_is_type(fill, json_type_string));
    ASSERT_STR(json_object_get_string(fill), "abc");
    json_object_put(meta);
    json_object_put(fill);
    ASSERT(array_meta(store, "a", version, &meta, &fill) == 0);
    ASSERT(meta && json_object_object_get_ex(meta, "fill_packed", &x) &&
           json_object_is_type(x, json_type_string));
    json_object_put(meta);
    json_object_put(fill);

    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0);
    if (check_dcpl_fill(f, "s", "abc") || check_dcpl_fill(f, "t", "scalar fill") ||
        check_dcpl_fill(f, "n", NULL))
        return 1;
    /* unwritten elements read as the fill value */
    ASSERT((d = H5Dopen2(f, "s", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) >= 0);
    ASSERT_STR(s[0], "w0");
    for (int i = 1; i < 4; i++)
        ASSERT_STR(s[i], "abc");
    for (int i = 0; i < 4; i++)
        H5free_memory(s[i]);
    H5Dclose(d);
    ASSERT((d = H5Dopen2(f, "t", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &sc) >= 0);
    ASSERT_STR(sc, "scalar fill");
    H5free_memory(sc);
    H5Dclose(d);
    ASSERT((d = H5Dopen2(f, "n", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) >= 0);
    ASSERT_STR(s[0], "w0");
    ASSERT(s[1] == NULL || s[1][0] == '\0'); /* HDF5's default fill: no string */
    for (int i = 0; i < 4; i++)
        H5free_memory(s[i]);
    H5Dclose(d);

    /* other types with pointers: the fill value comes back from its packed form */
    ASSERT((vt = H5Tvlen_create(H5T_NATIVE_INT)) >= 0);
    ASSERT((d = H5Dopen2(f, "v", H5P_DEFAULT)) >= 0);
    ASSERT((p = H5Dget_create_plist(d)) >= 0);
    ASSERT(H5Pget_fill_value(p, vt, &vf) >= 0);
    ASSERT_EQ_INT(vf.len, 3);
    memcpy(vals, vf.p, sizeof vals);
    ASSERT(vals[0] == 1 && vals[1] == 2 && vals[2] == 3);
    H5free_memory(vf.p);
    H5Pclose(p);
    memset(v, 0, sizeof v);
    ASSERT(H5Dread(d, vt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    {
        hid_t sp = H5Dget_space(d);
        H5Treclaim(vt, sp, H5P_DEFAULT, v);
        H5Sclose(sp);
    }
    H5Dclose(d);
    ASSERT((at = H5Tarray_create2(t, 1, &two)) >= 0);
    ASSERT((d = H5Dopen2(f, "a", H5P_DEFAULT)) >= 0);
    ASSERT((p = H5Dget_create_plist(d)) >= 0);
    ASSERT(H5Pget_fill_value(p, at, an) >= 0);
    ASSERT_STR(an[0], "x");
    ASSERT_STR(an[1], "yz");
    H5free_memory(an[0]);
    H5free_memory(an[1]);
    H5Pclose(p);
    H5Dclose(d);
    H5Tclose(at);
    H5Tclose(vt);
    H5Tclose(t);
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

static int
test_setup(void)
{
    snprintf(dir, sizeof dir, "%s", test_tmpdir("vlen_fill"));
    ASSERT(dir[0]);
    return 0;
}

static int
test_string_fill_v3(void)
{
    char store[600];
    snprintf(store, sizeof store, "%s/v3.zarr", dir);
    if (write_store(store, 3))
        return 1;
    return check_store(store, 3);
}

static int
test_string_fill_v2(void)
{
    char store[600];
    snprintf(store, sizeof store, "%s/v2.zarr", dir);
    if (write_store(store, 2))
        return 1;
    return check_store(store, 2);
}

static char *
b64(const uint8_t *p, size_t n)
{
    static const char c[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char             *o = malloc(4 * ((n + 2) / 3) + 1), *q = o;
    for (size_t i = 0; o && i < n; i += 3) {
        uint32_t v =
            (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        *q++ = c[v >> 18 & 63];
        *q++ = c[v >> 12 & 63];
        *q++ = i + 1 < n ? c[v >> 6 & 63] : '=';
        *q++ = i + 2 < n ? c[v & 63] : '=';
    }
    if (o)
        *q = '\0';
    return o;
}

/* A store as the connector wrote it before the fix: `_h5zarr.dcpl` holds H5Pencode of a dcpl whose fill
 * value is a vlen string, i.e. a pointer (here made invalid on purpose, as it is in any other process).
 * Refused by default (the earlier form); with legacy_reserved=1 it opens, lists and reads, the dcpl
 * reports the default fill (the value is lost) and can be copied; a read-write open converts it. */
static int
test_old_store(void)
{
    char                store[600], doc[700];
    hid_t               fapl, f, t = str_type(), sp, dcpl, d;
    hsize_t             n = 3, c = 3;
    const char         *fill = "old", *w[3] = {"a", "b", "c"};
    char               *r[3] = {0}, *enc;
    size_t              sz   = 0;
    uint8_t            *buf, *hit = NULL;
    struct json_object *root, *attrs, *meta;

    snprintf(store, sizeof store, "%s/old.zarr", dir);
    ASSERT((fapl = h5t_zarr_fapl(3)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((sp = H5Screate_simple(1, &n, NULL)) >= 0);
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT(H5Pset_chunk(dcpl, 1, &c) >= 0);
    ASSERT(H5Pset_fill_value(dcpl, t, &fill) >= 0);
    ASSERT((d = H5Dcreate2(f, "s", t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    /* the old encoding: the fill buffer is the pointer's bytes; make them point nowhere */
    ASSERT(H5Pencode2(dcpl, NULL, &sz, H5P_DEFAULT) >= 0 && (buf = malloc(sz)));
    ASSERT(H5Pencode2(dcpl, buf, &sz, H5P_DEFAULT) >= 0);
    for (size_t i = 0; i + 11 <= sz && !hit; i++)
        if (!memcmp(buf + i, "fill_value", 11))
            hit = buf + i + 11;
    ASSERT(hit && hit[2] == sizeof(char *)); /* alloc time, fill time, int64 size = one pointer */
    memset(hit + 10, 0x41, sizeof(char *));
    ASSERT((enc = b64(buf, sz)));
    free(buf);
    H5Pclose(dcpl);
    snprintf(doc, sizeof doc, "%s/s/zarr.json", store);
    ASSERT((root = json_object_from_file(doc)));
    ASSERT(json_object_object_get_ex(root, "_h5zarr", &meta));
    json_object_object_del(meta, "fill");
    json_object_object_add(meta, "dcpl", json_object_new_string(enc));
    free(enc);
    ASSERT(json_object_to_file(doc, root) == 0);
    json_object_put(root);

    {
        /* by default the earlier form is refused, naming the field (docs/FORMAT.md) */
        hid_t p         = H5I_INVALID_HID;
        char  msg[4096] = "";
        ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
        ASSERT((d = H5Dopen2(f, "s", H5P_DEFAULT)) >= 0);
        H5E_BEGIN_TRY { p = H5Dget_create_plist(d); }
        H5E_END_TRY
        ASSERT(p < 0);
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
        ASSERT(strstr(msg, "'/s/zarr.json' _h5zarr.dcpl: in the earlier binary form") &&
               strstr(msg, "legacy_reserved=1"));
        H5Dclose(d);
        ASSERT(H5Fclose(f) >= 0);
    }
    /* the user's opt-in (a trusted store): read as before */
    H5Pclose(fapl);
    ASSERT((fapl = H5Pcreate(H5P_FILE_ACCESS)) >= 0 &&
           H5Pset_fapl_zarr_opts(fapl, 3, "legacy_reserved=1") >= 0);
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    if (check_dcpl_fill(f, "s", NULL))
        return 1;
    ASSERT((d = H5Dopen2(f, "s", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    ASSERT_STR(r[0], "a");
    ASSERT_STR(r[2], "c");
    for (int i = 0; i < 3; i++)
        H5free_memory(r[i]);
    {
        H5O_info2_t oi; /* object info decodes the dcpl too (time tracking) */
        ASSERT(H5Oget_info3(d, &oi, H5O_INFO_ALL) >= 0);
    }
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    /* opened read-write with the opt-in: converted; then it reads the same without it */
    ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0 && H5Fclose(f) >= 0);
    H5Pclose(fapl);
    ASSERT((root = json_object_from_file(doc)));
    ASSERT(json_object_object_get_ex(root, "_h5zarr", &meta) &&
           json_object_object_get_ex(meta, "dcpl", &attrs) && json_object_is_type(attrs, json_type_object));
    json_object_put(root);
    ASSERT((fapl = h5t_zarr_fapl(3)) >= 0);
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    if (check_dcpl_fill(f, "s", NULL))
        return 1;
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    H5Sclose(sp);
    H5Tclose(t);
    return 0;
}

static const test_entry tests[] = {TEST_ENTRY(setup), TEST_ENTRY(string_fill_v3), TEST_ENTRY(string_fill_v2),
                                   TEST_ENTRY(old_store)};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
