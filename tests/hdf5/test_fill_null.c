/*
 * test_fill_null.c: HDF5's default fill value in zarr (issue 12). In zarr v2 a dataset whose HDF5 fill
 * value is not user-defined has `"fill_value": null` (no fill value), so xarray does not take zeros for
 * _FillValue; a user-defined fill stays zarr's fill_value. Through the connector the dcpl reads back as
 * it was made (H5Pfill_value_defined, H5Pget_fill_value, H5Pget_fill_time) and unwritten elements read
 * as 0. Without a fill value zarr-python leaves missing chunks undefined, so every chunk written is
 * stored, all-zero ones too (no elision, also not when a shrink resets an edge chunk). v3 requires a
 * fill_value: the default fill stays the zero element there. Stores written before (v2 fill_value 0
 * with `_h5zarr.fill_default`) open as before.
 */
#include "runner.h"

#include <hdf5.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "h5test.h"

static char dir[400];

/* The array's zarr `fill_value` (a new reference, NULL for JSON null or absent) and whether its
 * `_h5zarr.fill_default` is true (the reserved object of its document; for stores written before, the
 * attribute of that name). */
static int
array_fill(const char *store, const char *name, int version, struct json_object **fill, int *fill_default)
{
    char                p[1200];
    struct json_object *doc, *attrs = NULL, *meta, *v;
    *fill         = NULL;
    *fill_default = 0;
    snprintf(p, sizeof p, "%s/%s/%s", store, name, version == 3 ? "zarr.json" : ".zarray");
    ASSERT((doc = json_object_from_file(p)) != NULL);
    ASSERT(json_object_object_get_ex(doc, "fill_value", &v)); /* present, null or not */
    *fill = json_object_get(v);
    if (json_object_object_get_ex(doc, "_h5zarr", &meta))
        ;
    else if (version == 3) {
        if (json_object_object_get_ex(doc, "attributes", &attrs))
            json_object_object_get_ex(attrs, "_h5zarr", &meta);
    }
    else {
        json_object_put(doc);
        snprintf(p, sizeof p, "%s/%s/.zattrs", store, name);
        doc = json_object_from_file(p); /* none: no attributes */
        if (doc)
            json_object_object_get_ex(doc, "_h5zarr", &meta);
    }
    if (meta && json_object_object_get_ex(meta, "fill_default", &v))
        *fill_default = json_object_get_boolean(v);
    json_object_put(doc);
    return 0;
}

/* Expects `name`'s zarr fill_value: JSON null (`want_null`) or the number `want`; and fill_default. */
static int
expect_fill(const char *store, const char *name, int version, int want_null, double want, int want_default)
{
    struct json_object *fv;
    int                 fd;
    if (array_fill(store, name, version, &fv, &fd))
        return 1;
    if (want_null && fv)
        FAILF("%s: fill_value is %s, expected null", name, json_object_to_json_string(fv));
    if (!want_null) {
        if (!fv || (!json_object_is_type(fv, json_type_int) && !json_object_is_type(fv, json_type_double)))
            FAILF("%s: fill_value is %s, expected %g", name, fv ? json_object_to_json_string(fv) : "null",
                  want);
        if (json_object_get_double(fv) != want)
            FAILF("%s: fill_value is %s, expected %g", name, json_object_to_json_string(fv), want);
    }
    json_object_put(fv);
    if (fd != want_default)
        FAILF("%s: _h5zarr.fill_default is %d, expected %d", name, fd, want_default);
    return 0;
}

static int
chunk_exists(const char *store, const char *name, int version, int c)
{
    char rel[600];
    if (version == 3)
        snprintf(rel, sizeof rel, "%s/c/%d", name, c);
    else
        snprintf(rel, sizeof rel, "%s/%d", name, c);
    return h5t_path_exists(store, rel);
}

/* A chunked 1-D dataset of 8 elements (chunks of 4) of `type`; `fill` user-defined when non-NULL,
 * fill time `ft` when not H5D_FILL_TIME_ERROR; unlimited when `unlim`. */
static hid_t
make_dset(hid_t f, const char *name, hid_t type, const void *fill, H5D_fill_time_t ft, int unlim)
{
    hsize_t n = 8, c = 4, mx = H5S_UNLIMITED;
    hid_t   sp = H5Screate_simple(1, &n, unlim ? &mx : NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d;
    H5Pset_chunk(dcpl, 1, &c);
    if (fill)
        H5Pset_fill_value(dcpl, type, fill);
    if (ft != H5D_FILL_TIME_ERROR)
        H5Pset_fill_time(dcpl, ft);
    d = H5Dcreate2(f, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(sp);
    return d;
}

/* Writes `n` ints from element `start` of `d`. */
static int
write_ints(hid_t d, hsize_t start, hsize_t n, const int *v)
{
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(1, &n, NULL);
    ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &n, NULL) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, v) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    return 0;
}

/* The dcpl of `d` reports fill status `want_fs`, fill value `want` (read as double) and fill time
 * `want_ft`. */
static int
expect_dcpl(hid_t f, const char *name, H5D_fill_value_t want_fs, double want, H5D_fill_time_t want_ft)
{
    hid_t            d, p;
    H5D_fill_value_t fs = H5D_FILL_VALUE_ERROR;
    H5D_fill_time_t  ft = H5D_FILL_TIME_ERROR;
    double           v  = -1;
    ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
    ASSERT((p = H5Dget_create_plist(d)) >= 0);
    ASSERT(H5Pfill_value_defined(p, &fs) >= 0);
    ASSERT(H5Pget_fill_value(p, H5T_NATIVE_DOUBLE, &v) >= 0);
    ASSERT(H5Pget_fill_time(p, &ft) >= 0);
    if (fs != want_fs || v != want || ft != want_ft)
        FAILF("%s: fill status %d value %g time %d, expected %d %g %d", name, (int)fs, v, (int)ft,
              (int)want_fs, want, (int)want_ft);
    H5Pclose(p);
    H5Dclose(d);
    return 0;
}

/* Reads all of `name` as ints and compares with `want` (`n` values). */
static int
expect_ints(hid_t f, const char *name, const int *want, int n)
{
    int   got[16];
    hid_t d;
    ASSERT(n <= 16);
    ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
    {
        hid_t sp = H5Dget_space(d);
        ASSERT_EQ_INT(H5Sget_simple_extent_npoints(sp), n);
        H5Sclose(sp);
    }
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            FAILF("%s[%d] = %d, expected %d", name, i, got[i], want[i]);
    H5Dclose(d);
    return 0;
}

static int
test_setup(void)
{
    snprintf(dir, sizeof dir, "%s", test_tmpdir("fill_null"));
    ASSERT(dir[0]);
    return 0;
}

/* Datasets of a v2 store:
 *   def    H5P_DEFAULT dcpl (contiguous), never written         -> null
 *   never  chunked, default fill, fill time NEVER (netCDF NOFILL), all zeros written -> null, 2 chunks
 *   part   chunked, default fill, chunk 0 written with zeros     -> null, chunk 0 stored, 1 missing
 *   user   chunked, user fill -999, chunk 0 written {1,2,3,4}, fill time ALLOC -> -999
 *   user0  chunked, user fill 0, all zeros written               -> 0, chunks elided (a fill value)
 *   shrink chunked unlimited, default fill, {1,2,3,4,0,0,7,8}, shrunk to 6 -> chunk 1 kept (zeros) */
static int
write_v2(const char *store)
{
    hid_t   fapl, f, d, sp;
    int     zeros[8] = {0}, v14[4] = {1, 2, 3, 4}, sh[8] = {1, 2, 3, 4, 0, 0, 7, 8};
    float   fm999 = -999.0f;
    int     z0    = 0;
    hsize_t n = 6, six = 6;

    ASSERT((fapl = h5t_zarr_fapl(2)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(store));
    ASSERT((sp = H5Screate_simple(1, &n, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "def", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    ASSERT((d = make_dset(f, "never", H5T_IEEE_F64LE, NULL, H5D_FILL_TIME_NEVER, 0)) >= 0);
    ASSERT(write_ints(d, 0, 8, zeros) == 0);
    H5Dclose(d);
    ASSERT((d = make_dset(f, "part", H5T_STD_I32LE, NULL, H5D_FILL_TIME_ERROR, 0)) >= 0);
    ASSERT(write_ints(d, 0, 4, zeros) == 0);
    H5Dclose(d);
    ASSERT((d = make_dset(f, "user", H5T_IEEE_F32LE, &fm999, H5D_FILL_TIME_ALLOC, 0)) >= 0);
    ASSERT(write_ints(d, 0, 4, v14) == 0);
    H5Dclose(d);
    ASSERT((d = make_dset(f, "user0", H5T_STD_I32LE, &z0, H5D_FILL_TIME_ERROR, 0)) >= 0);
    ASSERT(write_ints(d, 0, 8, zeros) == 0);
    H5Dclose(d);
    ASSERT((d = make_dset(f, "shrink", H5T_STD_I32LE, NULL, H5D_FILL_TIME_ERROR, 1)) >= 0);
    ASSERT(write_ints(d, 0, 8, sh) == 0);
    ASSERT(H5Dset_extent(d, &six) >= 0);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* zarr-python 2.13 (Debian's /usr/bin/python3) reads the arrays: fill_value None for the default
 * fills, the zeros the connector stored (every chunk present), -999 for the user fill. */
static int
zarr_python_reads(const char *store)
{
    char                py[1400], cmd[2000];
    const char         *src = "import json, sys, zarr\n"
                              "g = zarr.open_group(sys.argv[1], mode='r')\n"
                              "out = {}\n"
                              "for n in ('def', 'never', 'user', 'user0', 'shrink'):\n"
                              "    a = g[n]\n"
                              "    out[n] = {'fill': a.fill_value if a.fill_value is None else float(a.fill_value),\n"
                              "              'data': [float(x) for x in a[...].ravel()] if n != 'def' else None}\n"
                              "print(json.dumps(out))\n";
    FILE               *f, *p;
    char                buf[8192];
    size_t              len;
    struct json_object *j, *o, *v, *data;
    if (access("/usr/bin/python3", X_OK) != 0 || system("/usr/bin/python3 -c 'import zarr' 2>/dev/null")) {
        printf("  skipped: zarr-python (Debian python3-zarr) missing\n");
        return 0;
    }
    snprintf(py, sizeof py, "%s/read.py", dir);
    ASSERT((f = fopen(py, "w")) && fputs(src, f) >= 0 && fclose(f) == 0);
    snprintf(cmd, sizeof cmd, "env -u HDF5_PLUGIN_PATH -u HDF5_VOL_CONNECTOR /usr/bin/python3 '%s' '%s'", py,
             store);
    ASSERT((p = popen(cmd, "r")) != NULL);
    len      = fread(buf, 1, sizeof buf - 1, p);
    buf[len] = 0;
    ASSERT(pclose(p) == 0);
    ASSERT((j = json_tokener_parse(buf)) != NULL);
    {
        static const struct {
            const char *name;
            int         null_fill;
            double      fill;
            int         n;
            double      data[8];
        } want[] = {{"def", 1, 0, 0, {0}},
                    {"never", 1, 0, 8, {0, 0, 0, 0, 0, 0, 0, 0}},
                    {"user", 0, -999, 8, {1, 2, 3, 4, -999, -999, -999, -999}},
                    {"user0", 0, 0, 8, {0, 0, 0, 0, 0, 0, 0, 0}},
                    {"shrink", 1, 0, 6, {1, 2, 3, 4, 0, 0}}};
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            ASSERT(json_object_object_get_ex(j, want[i].name, &o));
            ASSERT(json_object_object_get_ex(o, "fill", &v));
            if (want[i].null_fill ? v != NULL : (!v || json_object_get_double(v) != want[i].fill))
                FAILF("zarr-python: %s.fill_value is %s", want[i].name,
                      v ? json_object_to_json_string(v) : "None");
            if (!want[i].n)
                continue;
            ASSERT(json_object_object_get_ex(o, "data", &data));
            ASSERT_EQ_INT(json_object_array_length(data), want[i].n);
            for (int k = 0; k < want[i].n; k++)
                if (json_object_get_double(json_object_array_get_idx(data, (size_t)k)) != want[i].data[k])
                    FAILF("zarr-python: %s[%d] = %s, expected %g", want[i].name, k,
                          json_object_to_json_string(json_object_array_get_idx(data, (size_t)k)),
                          want[i].data[k]);
        }
    }
    json_object_put(j);
    return 0;
}

static int
test_v2_default_fill_null(void)
{
    char  store[600];
    hid_t fapl, f, d;
    int   zeros[8] = {0}, user[8] = {1, 2, 3, 4, -999, -999, -999, -999}, sh6[6] = {1, 2, 3, 4, 0, 0},
        sh8[8]    = {1, 2, 3, 4, 0, 0, 0, 0};
    hsize_t eight = 8;

    snprintf(store, sizeof store, "%s/v2.zarr", dir);
    if (write_v2(store))
        return 1;
    /* the stored metadata */
    /* v2's null fill_value already says "HDF5's default fill": no _h5zarr.fill_default beside it */
    if (expect_fill(store, "def", 2, 1, 0, 0) || expect_fill(store, "never", 2, 1, 0, 0) ||
        expect_fill(store, "part", 2, 1, 0, 0) || expect_fill(store, "user", 2, 0, -999, 0) ||
        expect_fill(store, "user0", 2, 0, 0, 0) || expect_fill(store, "shrink", 2, 1, 0, 0))
        return 1;
    /* all-zero chunks are stored when there is no fill value; elided when the fill is a user 0 */
    ASSERT(chunk_exists(store, "never", 2, 0) && chunk_exists(store, "never", 2, 1));
    ASSERT(chunk_exists(store, "part", 2, 0) && !chunk_exists(store, "part", 2, 1));
    ASSERT(chunk_exists(store, "user", 2, 0) && !chunk_exists(store, "user", 2, 1));
    ASSERT(!chunk_exists(store, "user0", 2, 0) && !chunk_exists(store, "user0", 2, 1));
    ASSERT(chunk_exists(store, "shrink", 2, 0) &&
           chunk_exists(store, "shrink", 2, 1)); /* 1: {0,0,fill,fill} */

    /* the HDF5 view on reopen: as made, unwritten elements read as 0 */
    ASSERT((fapl = h5t_zarr_fapl(2)) >= 0);
    ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0);
    if (expect_dcpl(f, "def", H5D_FILL_VALUE_DEFAULT, 0, H5D_FILL_TIME_IFSET) ||
        expect_dcpl(f, "never", H5D_FILL_VALUE_DEFAULT, 0, H5D_FILL_TIME_NEVER) ||
        expect_dcpl(f, "part", H5D_FILL_VALUE_DEFAULT, 0, H5D_FILL_TIME_IFSET) ||
        expect_dcpl(f, "user", H5D_FILL_VALUE_USER_DEFINED, -999, H5D_FILL_TIME_ALLOC) ||
        expect_dcpl(f, "user0", H5D_FILL_VALUE_USER_DEFINED, 0, H5D_FILL_TIME_IFSET) ||
        expect_dcpl(f, "shrink", H5D_FILL_VALUE_DEFAULT, 0, H5D_FILL_TIME_IFSET))
        return 1;
    if (expect_ints(f, "def", zeros, 6) || expect_ints(f, "never", zeros, 8) ||
        expect_ints(f, "part", zeros, 8) || expect_ints(f, "user", user, 8) ||
        expect_ints(f, "user0", zeros, 8) || expect_ints(f, "shrink", sh6, 6))
        return 1;
    ASSERT(H5Fclose(f) >= 0);

    if (zarr_python_reads(store))
        return 1;

    /* grown again: the elements cut off read as 0 (the edge chunk was reset, not left stale) */
    ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "shrink", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dset_extent(d, &eight) >= 0);
    H5Dclose(d);
    if (expect_ints(f, "shrink", sh8, 8))
        return 1;
    /* writing zeros over a stored chunk of a null-fill array rewrites it, never deletes it */
    ASSERT((d = H5Dopen2(f, "shrink", H5P_DEFAULT)) >= 0);
    ASSERT(write_ints(d, 0, 4, zeros) == 0);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(chunk_exists(store, "shrink", 2, 0) && chunk_exists(store, "shrink", 2, 1));
    H5Pclose(fapl);
    return 0;
}

/* v3 requires a fill_value: the default fill is the zero element (with fill_default), and chunks equal
 * to it are elided as before. */
static int
test_v3_default_fill_zero(void)
{
    char  store[600];
    hid_t fapl, f, d;
    int   zeros[8] = {0};
    float fm999    = -999.0f;

    snprintf(store, sizeof store, "%s/v3.zarr", dir);
    ASSERT((fapl = h5t_zarr_fapl(3)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((d = make_dset(f, "never", H5T_IEEE_F64LE, NULL, H5D_FILL_TIME_NEVER, 0)) >= 0);
    ASSERT(write_ints(d, 0, 8, zeros) == 0);
    H5Dclose(d);
    ASSERT((d = make_dset(f, "user", H5T_IEEE_F32LE, &fm999, H5D_FILL_TIME_ERROR, 0)) >= 0);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    if (expect_fill(store, "never", 3, 0, 0, 1) || expect_fill(store, "user", 3, 0, -999, 0))
        return 1;
    ASSERT(!chunk_exists(store, "never", 3, 0) && !chunk_exists(store, "never", 3, 1));
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    if (expect_dcpl(f, "never", H5D_FILL_VALUE_DEFAULT, 0, H5D_FILL_TIME_NEVER) ||
        expect_dcpl(f, "user", H5D_FILL_VALUE_USER_DEFINED, -999, H5D_FILL_TIME_IFSET) ||
        expect_ints(f, "never", zeros, 8))
        return 1;
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* A v2 store written before this rule: the default fill stored as fill_value 0 with fill_default.
 * It opens as before (default fill, zeros), and all-zero chunks are still elided (0 is its fill). */
static int
test_old_store(void)
{
    char                store[600], p[800];
    hid_t               fapl, f, d;
    int                 zeros[8] = {0}, v[8] = {5, 6, 7, 8, 0, 0, 0, 0};
    struct json_object *doc, *m              = NULL, *old;

    snprintf(store, sizeof store, "%s/old.zarr", dir);
    ASSERT((fapl = h5t_zarr_fapl(2)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((d = make_dset(f, "a", H5T_STD_I32LE, NULL, H5D_FILL_TIME_NEVER, 0)) >= 0);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    snprintf(p, sizeof p, "%s/a/.zarray", store);
    ASSERT((doc = json_object_from_file(p)) != NULL);
    json_object_object_add(doc, "fill_value", json_object_new_int(0)); /* what the connector wrote then */
    /* and the reserved object where it was then: an attribute, with _h5zarr.fill_default */
    ASSERT(json_object_object_get_ex(doc, "_h5zarr", &m));
    m = json_object_get(m);
    json_object_object_del(doc, "_h5zarr");
    ASSERT(json_object_to_file_ext(p, doc, JSON_C_TO_STRING_PRETTY) == 0);
    json_object_put(doc);
    json_object_object_add(m, "fill_default", json_object_new_boolean(1));
    old = json_object_new_object();
    json_object_object_add(old, "_h5zarr", m);
    snprintf(p, sizeof p, "%s/a/.zattrs", store);
    ASSERT(json_object_to_file_ext(p, old, JSON_C_TO_STRING_PRETTY) == 0);
    json_object_put(old);
    if (expect_fill(store, "a", 2, 0, 0, 1))
        return 1;

    ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0);
    if (expect_dcpl(f, "a", H5D_FILL_VALUE_DEFAULT, 0, H5D_FILL_TIME_NEVER) || expect_ints(f, "a", zeros, 8))
        return 1;
    ASSERT((d = H5Dopen2(f, "a", H5P_DEFAULT)) >= 0);
    ASSERT(write_ints(d, 0, 8, v) == 0);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(chunk_exists(store, "a", 2, 0) && !chunk_exists(store, "a", 2, 1));
    if (expect_fill(store, "a", 2, 0, 0, 1))
        return 1;
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    if (expect_ints(f, "a", v, 8))
        return 1;
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* Writes a scalar attribute `name` of type `type` holding the int `v` on dataset `dname`. */
static int
put_attr(hid_t f, const char *dname, const char *name, hid_t type, int v)
{
    hid_t d, sp, a;
    ASSERT((d = H5Dopen2(f, dname, H5P_DEFAULT)) >= 0 && (sp = H5Screate(H5S_SCALAR)) >= 0);
    ASSERT((a = H5Acreate2(d, name, type, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, H5T_NATIVE_INT, &v) >= 0);
    ASSERT(H5Aclose(a) >= 0 && H5Sclose(sp) >= 0 && H5Dclose(d) >= 0);
    return 0;
}

/* netCDF's _FillValue attribute is zarr's fill_value (issue 27), HDF5's own fill value reads back as
 * HDF5 set it: a default fill (v2 null / v3 0), a user fill that differs; an attribute of another type
 * or with data already stored against another defined fill changes nothing; deleting it goes back to
 * HDF5's rule. Unwritten elements read as zarr's fill_value. */
static int
test_fillvalue_attr(void)
{
    for (int version = 2; version <= 3; version++) {
        char  store[600];
        hid_t fapl  = h5t_zarr_fapl(version), f, d;
        int   seven = 7, m5[8] = {-5, -5, -5, -5, -5, -5, -5, -5}, v[8] = {1, 2, 3, 4, 0, 0, 0, 0};
        snprintf(store, sizeof store, "%s/fv%d.zarr", dir, version);
        ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
        ASSERT((d = make_dset(f, "dflt", H5T_STD_I32LE, NULL, H5D_FILL_TIME_ERROR, 0)) >= 0 &&
               H5Dclose(d) >= 0);
        ASSERT((d = make_dset(f, "user", H5T_STD_I32LE, &seven, H5D_FILL_TIME_ERROR, 0)) >= 0 &&
               H5Dclose(d) >= 0);
        ASSERT((d = make_dset(f, "other", H5T_STD_I32LE, NULL, H5D_FILL_TIME_ERROR, 0)) >= 0 &&
               H5Dclose(d) >= 0);
        ASSERT((d = make_dset(f, "late", H5T_STD_I32LE, &seven, H5D_FILL_TIME_ERROR, 0)) >= 0);
        ASSERT(write_ints(d, 0, 4, v) == 0 && H5Dclose(d) >= 0);
        ASSERT(put_attr(f, "dflt", "_FillValue", H5T_STD_I32LE, -5) == 0);
        ASSERT(put_attr(f, "user", "_FillValue", H5T_NATIVE_INT, -5) == 0);
        ASSERT(put_attr(f, "other", "_FillValue", H5T_STD_I16LE, -5) == 0); /* not the dataset's type */
        ASSERT(put_attr(f, "late", "_FillValue", H5T_STD_I32LE, -5) == 0);  /* chunks stored against 7 */
        if (expect_dcpl(f, "dflt", H5D_FILL_VALUE_DEFAULT, 0, H5D_FILL_TIME_IFSET) ||
            expect_dcpl(f, "user", H5D_FILL_VALUE_USER_DEFINED, 7, H5D_FILL_TIME_IFSET))
            return 1;
        ASSERT(H5Fclose(f) >= 0);
        if (expect_fill(store, "dflt", version, 0, -5, 1) || expect_fill(store, "user", version, 0, -5, 0) ||
            expect_fill(store, "other", version, version == 2, 0, version == 3) ||
            expect_fill(store, "late", version, 0, 7, 0))
            return 1;
        ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0);
        if (expect_dcpl(f, "dflt", H5D_FILL_VALUE_DEFAULT, 0, H5D_FILL_TIME_IFSET) ||
            expect_dcpl(f, "user", H5D_FILL_VALUE_USER_DEFINED, 7, H5D_FILL_TIME_IFSET) ||
            expect_dcpl(f, "other", H5D_FILL_VALUE_DEFAULT, 0, H5D_FILL_TIME_IFSET) ||
            expect_ints(f, "dflt", m5, 8))
            return 1;
        v[4] = v[5] = v[6] = v[7] = 7;
        if (expect_ints(f, "late", v, 8))
            return 1;
        /* deleted: back to HDF5's rule */
        ASSERT((d = H5Dopen2(f, "user", H5P_DEFAULT)) >= 0 && H5Adelete(d, "_FillValue") >= 0 &&
               H5Dclose(d) >= 0);
        ASSERT((d = H5Dopen2(f, "dflt", H5P_DEFAULT)) >= 0 && H5Adelete(d, "_FillValue") >= 0 &&
               H5Dclose(d) >= 0);
        ASSERT(H5Fclose(f) >= 0);
        if (expect_fill(store, "user", version, 0, 7, 0) ||
            expect_fill(store, "dflt", version, version == 2, 0, version == 3))
            return 1;
        ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
        if (expect_dcpl(f, "dflt", H5D_FILL_VALUE_DEFAULT, 0, H5D_FILL_TIME_IFSET) ||
            expect_dcpl(f, "user", H5D_FILL_VALUE_USER_DEFINED, 7, H5D_FILL_TIME_IFSET))
            return 1;
        ASSERT(H5Fclose(f) >= 0);
        H5Pclose(fapl);
    }
    return 0;
}

static const test_entry tests[] = {TEST_ENTRY(setup), TEST_ENTRY(v2_default_fill_null),
                                   TEST_ENTRY(v3_default_fill_zero), TEST_ENTRY(old_store),
                                   TEST_ENTRY(fillvalue_attr)};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
