/*
 * test_virtual.c: HDF5 virtual datasets (H5Pset_virtual) in zarr stores (vol/virtual.c, docs/FORMAT.md
 * "Virtual datasets"). A virtual dataset in a store maps zarr sources (other stores, relative names, its
 * own store ".") and native HDF5 sources; reads give the sources' values and the fill value where nothing
 * is mapped or a source is missing, before and after reopening; the dcpl reports the mappings
 * (H5Pget_virtual_*); unlimited and printf-style mappings take their extent from the sources; writes go
 * through to the sources; a store came out, with the mappings in `_h5zarr.virtual` and no chunks; a
 * malformed record is refused naming the field, and a dataset that maps itself fails instead of looping.
 */
#include "runner.h"

#include <hdf5.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "h5test.h"

static char dir[400];
static char errbuf[4096];

/* The messages on the error stack, then the stack cleared. */
static const char *
errors(void)
{
    errbuf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, errbuf);
    H5Eclear2(H5E_DEFAULT);
    return errbuf;
}

static const char *
at(const char *name)
{
    static char p[4][700];
    static int  k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static hid_t
native_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_vol(fapl, H5VL_NATIVE, NULL);
    return fapl;
}

/* Makes dataset `name` (ints, value base + i in C order; `chunk` chunked when not NULL) in file `path`
 * (created with `fapl`, or added to when `add`). */
static int
make_src(const char *path, hid_t fapl, bool add, const char *name, int rank, const hsize_t *dims,
         const hsize_t *maxdims, const hsize_t *chunk, int base)
{
    hid_t   f, s, p, d, l;
    hsize_t n = 1;
    int    *v;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    ASSERT((v = malloc((n ? n : 1) * sizeof *v)) != NULL);
    for (hsize_t i = 0; i < n; i++)
        v[i] = base + (int)i;
    f = add ? H5Fopen(path, H5F_ACC_RDWR, fapl) : H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    ASSERT(f >= 0);
    ASSERT((s = H5Screate_simple(rank, dims, maxdims)) >= 0);
    p = H5Pcreate(H5P_DATASET_CREATE);
    if (chunk)
        H5Pset_chunk(p, rank, chunk);
    l = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(l, 1);
    ASSERT((d = H5Dcreate2(f, name, H5T_NATIVE_INT, s, l, p, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Pclose(l);
    H5Pclose(p);
    H5Sclose(s);
    ASSERT(H5Fclose(f) >= 0);
    free(v);
    return 0;
}

/* Reads all of dataset `name` of `f` as ints into `v` (n elements expected) and compares with `want`. */
static int
expect_all(hid_t f, const char *name, const int *want, size_t n)
{
    hid_t    d, s;
    int     *v;
    hssize_t np;
    ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
    ASSERT((s = H5Dget_space(d)) >= 0 && (np = H5Sget_simple_extent_npoints(s)) >= 0);
    if ((size_t)np != n)
        FAILF("%s: %lld elements, expected %zu", name, (long long)np, n);
    ASSERT((v = calloc(n ? n : 1, sizeof *v)) != NULL);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    for (size_t i = 0; i < n; i++)
        if (v[i] != want[i])
            FAILF("%s: element %zu is %d, expected %d", name, i, v[i], want[i]);
    free(v);
    H5Sclose(s);
    H5Dclose(d);
    return 0;
}

/* Adds a mapping of a regular hyperslab of the virtual space to one of the source space. */
static int
map(hid_t dcpl, hid_t vspace, const hsize_t *vstart, const hsize_t *vstride, const hsize_t *vcount,
    const hsize_t *vblock, const char *file, const char *dset, hid_t sspace, const hsize_t *sstart,
    const hsize_t *sstride, const hsize_t *scount, const hsize_t *sblock)
{
    if (vstart)
        ASSERT(H5Sselect_hyperslab(vspace, H5S_SELECT_SET, vstart, vstride, vcount, vblock) >= 0);
    else
        ASSERT(H5Sselect_all(vspace) >= 0);
    if (sstart)
        ASSERT(H5Sselect_hyperslab(sspace, H5S_SELECT_SET, sstart, sstride, scount, sblock) >= 0);
    else
        ASSERT(H5Sselect_all(sspace) >= 0);
    ASSERT(H5Pset_virtual(dcpl, vspace, file, dset, sspace) >= 0);
    return 0;
}

/* ---- a virtual dataset over zarr sources ----------------------------------------------------------- */
/* a.zarr:/d = 0..9, b.zarr:/g/e = 100..109, vds.zarr:/own = 50..54; vds.zarr:/v (3 x 10, fill -1):
 * row 0 = a all, row 1 cols 0-4 = b[0:10:2], row 2 cols 5-9 = ./own; the rest unmapped. */
static const int want_v[30] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  100, 102, 104, 106, 108,
                               -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 50,  51,  52,  53,  54};

static int
make_zarr_vds(void)
{
    hid_t   fapl = h5t_zarr_fapl(3), f, dcpl, vs, s10, s5, d;
    hsize_t d10 = 10, d5 = 5, vd[2] = {3, 10}, one[2] = {1, 1};
    int     fill = -1;
    ASSERT(fapl >= 0);
    if (make_src(at("a.zarr"), fapl, false, "/d", 1, &d10, NULL, NULL, 0) ||
        make_src(at("b.zarr"), fapl, false, "/g/e", 1, &d10, NULL, NULL, 100) ||
        make_src(at("vds.zarr"), fapl, false, "/own", 1, &d5, NULL, NULL, 50))
        return 1;
    ASSERT((f = H5Fopen(at("vds.zarr"), H5F_ACC_RDWR, fapl)) >= 0);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill);
    vs  = H5Screate_simple(2, vd, NULL);
    s10 = H5Screate_simple(1, &d10, NULL);
    s5  = H5Screate_simple(1, &d5, NULL);
    {
        hsize_t v0[2] = {0, 0}, c0[2] = {1, 10}, v1[2] = {1, 0}, c1[2] = {1, 5}, v2[2] = {2, 5};
        hsize_t s0 = 0, st2 = 2, sc = 5;
        /* relative names: found beside the virtual dataset's store, not in the working directory */
        if (map(dcpl, vs, v0, NULL, c0, NULL, "a.zarr", "/d", s10, NULL, NULL, NULL, NULL) ||
            map(dcpl, vs, v1, NULL, c1, one, "b.zarr", "/g/e", s10, &s0, &st2, &sc, NULL) ||
            map(dcpl, vs, v2, NULL, c1, NULL, ".", "/own", s5, NULL, NULL, NULL, NULL))
            return 1;
    }
    ASSERT((d = H5Dcreate2(f, "v", H5T_NATIVE_INT, vs, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    /* read in the same open as the create */
    if (expect_all(f, "v", want_v, 30))
        return 1;
    H5Sclose(vs);
    H5Sclose(s10);
    H5Sclose(s5);
    H5Pclose(dcpl);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_zarr_sources(void)
{
    hid_t   fapl     = h5t_zarr_fapl(3), f, d, fs, ms;
    hsize_t start[2] = {0, 3}, count[2] = {2, 4};
    int     v[8];
    double  dv[30];
    if (make_zarr_vds())
        return 1;
    /* a store came out: the mappings in _h5zarr, the layout in the dcpl, no chunks */
    ASSERT(h5t_is_zarr_store(at("vds.zarr")) && h5t_path_exists(at("vds.zarr"), "v/zarr.json"));
    ASSERT(!h5t_path_exists(at("vds.zarr"), "v/c"));
    {
        struct json_object *doc = json_object_from_file(at("vds.zarr/v/zarr.json")), *m, *l, *x;
        ASSERT(doc && json_object_object_get_ex(doc, "_h5zarr", &m));
        ASSERT(json_object_object_get_ex(m, "virtual", &l) && json_object_array_length(l) == 3);
        ASSERT(json_object_object_get_ex(json_object_array_get_idx(l, 2), "file", &x) &&
               !strcmp(json_object_get_string(x), "."));
        ASSERT(json_object_object_get_ex(m, "dcpl", &x) && json_object_object_get_ex(x, "layout", &x) &&
               !strcmp(json_object_get_string(x), "virtual"));
        ASSERT(json_object_object_get_ex(doc, "fill_value", &x) && json_object_get_int(x) == -1);
        json_object_put(doc);
    }
    /* after reopening, from another working directory than the stores' */
    ASSERT((f = H5Fopen(at("vds.zarr"), H5F_ACC_RDONLY, fapl)) >= 0);
    if (expect_all(f, "v", want_v, 30))
        return 1;
    ASSERT((d = H5Dopen2(f, "v", H5P_DEFAULT)) >= 0);
    /* a hyperslab across two mappings and unmapped elements */
    fs = H5Dget_space(d);
    ms = H5Screate_simple(2, count, NULL);
    ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, v) >= 0);
    {
        const int w[8] = {3, 4, 5, 6, 106, 108, -1, -1};
        for (int i = 0; i < 8; i++)
            if (v[i] != w[i])
                FAILF("hyperslab element %d is %d, expected %d", i, v[i], w[i]);
    }
    H5Sclose(ms);
    /* points, in their own order */
    {
        hsize_t   pts[4][2] = {{2, 6}, {0, 9}, {1, 0}, {2, 0}}, n = 4;
        const int w[4] = {51, 9, 100, -1};
        ASSERT(H5Sselect_elements(fs, H5S_SELECT_SET, 4, &pts[0][0]) >= 0);
        ms = H5Screate_simple(1, &n, NULL);
        ASSERT(H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, v) >= 0);
        for (int i = 0; i < 4; i++)
            if (v[i] != w[i])
                FAILF("point %d is %d, expected %d", i, v[i], w[i]);
        H5Sclose(ms);
    }
    H5Sclose(fs);
    /* another memory type: the sources' ints converted, the fill value too */
    ASSERT(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, dv) >= 0);
    for (int i = 0; i < 30; i++)
        if (dv[i] != (double)want_v[i])
            FAILF("as double, element %d is %g, expected %d", i, dv[i], want_v[i]);
    /* the dcpl reports the mappings */
    {
        hid_t        p = H5Dget_create_plist(d), s;
        size_t       n = 0;
        char         name[64];
        hsize_t      st[2], sd[2], cn[2], bl[2], dims[2], sdims[1];
        int          fv = 0;
        H5D_layout_t lay;
        ASSERT(p >= 0);
        lay = H5Pget_layout(p);
        ASSERT_EQ_INT(lay, H5D_VIRTUAL);
        ASSERT(H5Pget_virtual_count(p, &n) >= 0);
        ASSERT_EQ_INT(n, 3);
        ASSERT(H5Pget_virtual_filename(p, 0, name, sizeof name) == 6);
        ASSERT_STR(name, "a.zarr");
        ASSERT(H5Pget_virtual_dsetname(p, 1, name, sizeof name) > 0);
        ASSERT_STR(name, "/g/e");
        ASSERT(H5Pget_virtual_filename(p, 2, name, sizeof name) == 1);
        ASSERT_STR(name, ".");
        ASSERT((s = H5Pget_virtual_vspace(p, 1)) >= 0);
        ASSERT(H5Sget_simple_extent_dims(s, dims, NULL) == 2 && dims[0] == 3 && dims[1] == 10);
        ASSERT(H5Sis_regular_hyperslab(s) > 0 && H5Sget_regular_hyperslab(s, st, sd, cn, bl) >= 0);
        ASSERT(st[0] == 1 && st[1] == 0 && cn[0] == 1 && cn[1] == 5 && bl[0] == 1 && bl[1] == 1);
        H5Sclose(s);
        ASSERT((s = H5Pget_virtual_srcspace(p, 1)) >= 0);
        ASSERT(H5Sget_simple_extent_dims(s, sdims, NULL) == 1 && sdims[0] == 10);
        ASSERT(H5Sget_regular_hyperslab(s, st, sd, cn, bl) >= 0);
        ASSERT(st[0] == 0 && sd[0] == 2 && cn[0] == 5 && bl[0] == 1);
        ASSERT_EQ_INT(H5Sget_select_npoints(s), 5);
        H5Sclose(s);
        ASSERT((s = H5Pget_virtual_srcspace(p, 0)) >= 0);
        ASSERT_EQ_INT(H5Sget_select_type(s), H5S_SEL_ALL);
        H5Sclose(s);
        ASSERT(H5Pget_fill_value(p, H5T_NATIVE_INT, &fv) >= 0);
        ASSERT_EQ_INT(fv, -1);
        H5Pclose(p);
    }
    {
        H5D_space_status_t st;
        ASSERT(H5Dget_space_status(d, &st) >= 0);
        ASSERT_EQ_INT(st, H5D_SPACE_STATUS_ALLOCATED); /* as HDF5 says of virtual datasets */
    }
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    /* a missing source reads as the fill value (HDF5's default view) */
    ASSERT(rename(at("b.zarr"), at("b-moved.zarr")) == 0);
    ASSERT((f = H5Fopen(at("vds.zarr"), H5F_ACC_RDONLY, fapl)) >= 0);
    {
        int w[30];
        memcpy(w, want_v, sizeof w);
        for (int i = 10; i < 15; i++)
            w[i] = -1;
        if (expect_all(f, "v", w, 30))
            return 1;
    }
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(rename(at("b-moved.zarr"), at("b.zarr")) == 0);
    H5Pclose(fapl);
    return 0;
}

/* ---- writes go through to the sources ------------------------------------------------------------------ */
static int
test_write_through(void)
{
    hid_t   fapl     = h5t_zarr_fapl(3), f, d, fs, ms;
    hsize_t start[2] = {1, 0}, count[2] = {1, 5};
    int     w[5] = {900, 901, 902, 903, 904}, row[10];
    if (make_zarr_vds())
        return 1;
    ASSERT((f = H5Fopen(at("vds.zarr"), H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "v", H5P_DEFAULT)) >= 0);
    fs = H5Dget_space(d);
    ms = H5Screate_simple(2, count, NULL);
    ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, w) >= 0);
    H5Sclose(ms);
    /* a write touching unmapped elements writes nothing and says why */
    {
        hsize_t s2[2] = {2, 3}, c2[2] = {1, 4};
        int     w2[4] = {-7, -7, -7, -7};
        herr_t  rc;
        ms = H5Screate_simple(2, c2, NULL);
        ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, s2, NULL, c2, NULL) >= 0);
        H5E_BEGIN_TRY { rc = H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, w2); }
        H5E_END_TRY
        ASSERT(rc < 0);
        ASSERT(strstr(errors(), "2 of the 4 elements selected have no source dataset"));
        H5Sclose(ms);
    }
    H5Sclose(fs);
    H5Dclose(d);
    {
        const int own[5] = {50, 51, 52, 53, 54};
        if (expect_all(f, "own", own, 5)) /* untouched by the refused write */
            return 1;
    }
    ASSERT(H5Fclose(f) >= 0);
    /* the source itself holds the values written */
    ASSERT((f = H5Fopen(at("b.zarr"), H5F_ACC_RDONLY, fapl)) >= 0);
    {
        const int e[10] = {900, 101, 901, 103, 902, 105, 903, 107, 904, 109};
        if (expect_all(f, "/g/e", e, 10))
            return 1;
    }
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((f = H5Fopen(at("vds.zarr"), H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "v", H5P_DEFAULT)) >= 0);
    fs       = H5Dget_space(d);
    count[1] = 10;
    ms       = H5Screate_simple(2, count, NULL);
    ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, row) >= 0);
    for (int i = 0; i < 10; i++)
        if (row[i] != (i < 5 ? 900 + i : -1))
            FAILF("row 1 element %d is %d after the write", i, row[i]);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* ---- a native HDF5 source; unlimited mappings ------------------------------------------------------ */
static int
test_native_source(void)
{
    hid_t   nfapl = native_fapl(), zfapl = h5t_zarr_fapl(3), f, dcpl, vs, ss, d, s;
    hsize_t sd[2] = {4, 5}, smax[2] = {H5S_UNLIMITED, 5}, chunk[2] = {2, 5};
    hsize_t vd[2] = {6, 5}, ud[2] = {1, 5}, umax[2] = {H5S_UNLIMITED, 5}, dims[2];
    hsize_t zero[2] = {0, 0}, one[2] = {1, 1}, ucount[2] = {H5S_UNLIMITED, 1}, ublock[2] = {1, 5};
    hsize_t two[2] = {2, 1};
    int     fill   = 7, want[35];
    if (make_src(at("n.h5"), nfapl, false, "/d", 2, sd, smax, chunk, 0))
        return 1;
    ASSERT(h5t_is_native_file(at("n.h5")));
    ASSERT((f = H5Fcreate(at("nv.zarr"), H5F_ACC_TRUNC, H5P_DEFAULT, zfapl)) >= 0);
    /* /v (6 x 5): rows 1-4 from the native file, by its absolute name */
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill);
    vs = H5Screate_simple(2, vd, NULL);
    ss = H5Screate_simple(2, sd, smax);
    {
        hsize_t st[2] = {1, 0};
        if (map(dcpl, vs, st, NULL, sd, NULL, at("n.h5"), "/d", ss, NULL, NULL, NULL, NULL))
            return 1;
    }
    ASSERT((d = H5Dcreate2(f, "v", H5T_NATIVE_INT, vs, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    H5Sclose(vs);
    H5Pclose(dcpl);
    /* /u: every row of the source, as many as it has (unlimited); /p: the same on every other row */
    vs = H5Screate_simple(2, ud, umax);
    for (int k = 0; k < 2; k++) {
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill);
        if (map(dcpl, vs, zero, k ? two : one, ucount, ublock, "n.h5", "/d", ss, zero, one, ucount, ublock))
            return 1;
        ASSERT((d = H5Dcreate2(f, k ? "p" : "u", H5T_NATIVE_INT, vs, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
        H5Dclose(d);
        H5Pclose(dcpl);
    }
    H5Sclose(vs);
    H5Sclose(ss);
    ASSERT(H5Fclose(f) >= 0);

    ASSERT((f = H5Fopen(at("nv.zarr"), H5F_ACC_RDONLY, zfapl)) >= 0);
    for (int i = 0; i < 30; i++)
        want[i] = i < 5 || i >= 25 ? 7 : i - 5;
    if (expect_all(f, "v", want, 30))
        return 1;
    /* the unlimited one: 4 rows, from the source's extent */
    ASSERT((d = H5Dopen2(f, "u", H5P_DEFAULT)) >= 0 && (s = H5Dget_space(d)) >= 0);
    ASSERT(H5Sget_simple_extent_dims(s, dims, NULL) == 2 && dims[0] == 4 && dims[1] == 5);
    H5Sclose(s);
    for (int i = 0; i < 20; i++)
        want[i] = i;
    if (expect_all(f, "u", want, 20))
        return 1;
    /* every other row: rows 0, 2, 4, 6 hold the source's rows, the odd ones the fill value */
    for (int i = 0; i < 35; i++)
        want[i] = (i / 5) % 2 ? 7 : (i / 10) * 5 + i % 5;
    if (expect_all(f, "p", want, 35))
        return 1;
    /* the source grows: so does the virtual dataset, on the same open handle */
    {
        hid_t   nf     = H5Fopen(at("n.h5"), H5F_ACC_RDWR, nfapl), nd, fs, ms;
        hsize_t nd7[2] = {7, 5}, st[2] = {4, 0}, c[2] = {3, 5};
        int     w[15];
        ASSERT(nf >= 0 && (nd = H5Dopen2(nf, "/d", H5P_DEFAULT)) >= 0);
        ASSERT(H5Dset_extent(nd, nd7) >= 0);
        for (int i = 0; i < 15; i++)
            w[i] = 20 + i;
        fs = H5Dget_space(nd);
        ms = H5Screate_simple(2, c, NULL);
        ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, c, NULL) >= 0);
        ASSERT(H5Dwrite(nd, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, w) >= 0);
        H5Sclose(ms);
        H5Sclose(fs);
        H5Dclose(nd);
        ASSERT(H5Fclose(nf) >= 0);
    }
    ASSERT((s = H5Dget_space(d)) >= 0);
    ASSERT(H5Sget_simple_extent_dims(s, dims, NULL) == 2 && dims[0] == 7);
    H5Sclose(s);
    H5Dclose(d);
    for (int i = 0; i < 35; i++)
        want[i] = i;
    if (expect_all(f, "u", want, 35))
        return 1;
    ASSERT((d = H5Dopen2(f, "p", H5P_DEFAULT)) >= 0 && (s = H5Dget_space(d)) >= 0);
    ASSERT(H5Sget_simple_extent_dims(s, dims, NULL) == 2 && dims[0] == 13); /* 0 + 6 * 2 + 1 */
    H5Sclose(s);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(nfapl);
    H5Pclose(zfapl);
    return 0;
}

/* ---- where sources are looked for: H5Pset_virtual_prefix ------------------------------------------- */
static int
test_prefix(void)
{
    hid_t   fapl = h5t_zarr_fapl(3), f, dcpl, vs, ss, d, dapl;
    hsize_t n    = 4;
    int     fill = -1, miss[4] = {-1, -1, -1, -1}, got[4] = {0, 1, 2, 3};
    char    pre[800];
    ASSERT(mkdir(at("pa"), 0755) == 0 && mkdir(at("pb"), 0755) == 0);
    if (make_src(at("pa/src.zarr"), fapl, false, "/d", 1, &n, NULL, NULL, 0))
        return 1;
    ASSERT((f = H5Fcreate(at("pb/vds.zarr"), H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill);
    vs = H5Screate_simple(1, &n, NULL);
    ss = H5Screate_simple(1, &n, NULL);
    ASSERT(H5Pset_virtual(dcpl, vs, "src.zarr", "d", ss) >= 0);
    ASSERT((d = H5Dcreate2(f, "v", H5T_NATIVE_INT, vs, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    /* not beside the store, not in the working directory: the fill value */
    if (expect_all(f, "v", miss, 4))
        return 1;
    /* the prefix finds it, also as ${ORIGIN} (the directory of the virtual dataset's file) */
    for (int k = 0; k < 2; k++) {
        int v[4];
        dapl = H5Pcreate(H5P_DATASET_ACCESS);
        snprintf(pre, sizeof pre, "%s", k ? "${ORIGIN}/../pa" : at("pa"));
        ASSERT(H5Pset_virtual_prefix(dapl, pre) >= 0);
        ASSERT((d = H5Dopen2(f, "v", dapl)) >= 0);
        ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
        ASSERT(memcmp(v, got, sizeof v) == 0);
        H5Pclose(dapl);
        {
            char  back[800];
            hid_t a = H5Dget_access_plist(d);
            ASSERT(a >= 0 && H5Pget_virtual_prefix(a, back, sizeof back) > 0);
            ASSERT_STR(back, pre);
            H5Pclose(a);
        }
        H5Dclose(d);
    }
    H5Sclose(vs);
    H5Sclose(ss);
    H5Pclose(dcpl);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* ---- printf-style source names ("%b"): one source per block, as many as exist ---------------------- */
static int
test_printf(void)
{
    hid_t   fapl = h5t_zarr_fapl(3), f, dcpl, vs, ss, d, s, dapl;
    hsize_t n = 3, vd[2] = {1, 3}, vmax[2] = {H5S_UNLIMITED, 3}, zero[2] = {0, 0}, one[2] = {1, 1};
    hsize_t cnt[2] = {H5S_UNLIMITED, 1}, blk[2] = {1, 3}, dims[2];
    int     fill = -3, want[15];
    char    name[64];
    for (int j = 0; j < 3; j++) {
        snprintf(name, sizeof name, "p_%d.zarr", j);
        if (make_src(at(name), fapl, false, "/d", 1, &n, NULL, NULL, 10 * j))
            return 1;
    }
    ASSERT((f = H5Fcreate(at("pf.zarr"), H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill);
    vs = H5Screate_simple(2, vd, vmax);
    ss = H5Screate_simple(1, &n, NULL);
    ASSERT(H5Sselect_hyperslab(vs, H5S_SELECT_SET, zero, one, cnt, blk) >= 0);
    ASSERT(H5Pset_virtual(dcpl, vs, "p_%b.zarr", "/d", ss) >= 0);
    ASSERT((d = H5Dcreate2(f, "v", H5T_NATIVE_INT, vs, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    H5Sclose(vs);
    H5Sclose(ss);
    H5Pclose(dcpl);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((f = H5Fopen(at("pf.zarr"), H5F_ACC_RDONLY, fapl)) >= 0);
    for (int i = 0; i < 9; i++)
        want[i] = 10 * (i / 3) + i % 3;
    if (expect_all(f, "v", want, 9))
        return 1;
    /* a source after a missing one counts only with a gap that reaches it */
    snprintf(name, sizeof name, "p_%d.zarr", 4);
    if (make_src(at(name), fapl, false, "/d", 1, &n, NULL, NULL, 40))
        return 1;
    if (expect_all(f, "v", want, 9))
        return 1;
    dapl = H5Pcreate(H5P_DATASET_ACCESS);
    H5Pset_virtual_printf_gap(dapl, 1);
    ASSERT((d = H5Dopen2(f, "v", dapl)) >= 0 && (s = H5Dget_space(d)) >= 0);
    ASSERT(H5Sget_simple_extent_dims(s, dims, NULL) == 2 && dims[0] == 5);
    {
        int v[15];
        ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
        for (int i = 9; i < 12; i++)
            want[i] = -3;
        for (int i = 12; i < 15; i++)
            want[i] = 40 + i % 3;
        for (int i = 0; i < 15; i++)
            if (v[i] != want[i])
                FAILF("with a gap, element %d is %d, expected %d", i, v[i], want[i]);
    }
    H5Sclose(s);
    H5Dclose(d);
    H5Pclose(dapl);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* ---- malformed records are refused, naming the field --------------------------------------------- */
/* Replaces _h5zarr.<key>... of m.zarr/v by the JSON `value` (path `k1`[.`k2`] inside virtual[0], or
 * virtual itself with k1 NULL; `dcpl_key` instead deletes that key of the dcpl), expects H5Dopen of v
 * to fail with `needle`, then restores the document. */
static int
corrupt(const char *k1, const char *k2, const char *value, const char *dcpl_key, const char *needle)
{
    const char         *doc_path = at("m.zarr/v/zarr.json");
    struct json_object *doc      = json_object_from_file(doc_path), *orig, *m, *t;
    hid_t               fapl     = h5t_zarr_fapl(3), f, d;
    ASSERT(doc && (orig = json_object_from_file(doc_path)) != NULL);
    ASSERT(json_object_object_get_ex(doc, "_h5zarr", &m));
    if (dcpl_key) {
        ASSERT(json_object_object_get_ex(m, "dcpl", &t));
        json_object_object_del(t, dcpl_key);
    }
    else if (!k1)
        json_object_object_add(m, "virtual", json_tokener_parse(value));
    else {
        ASSERT(json_object_object_get_ex(m, "virtual", &t) && (t = json_object_array_get_idx(t, 0)));
        if (k2)
            ASSERT(json_object_object_get_ex(t, k1, &t));
        json_object_object_add(t, k2 ? k2 : k1, json_tokener_parse(value));
    }
    ASSERT(json_object_to_file(doc_path, doc) == 0);
    ASSERT((f = H5Fopen(at("m.zarr"), H5F_ACC_RDONLY, fapl)) >= 0);
    H5E_BEGIN_TRY { d = H5Dopen2(f, "v", H5P_DEFAULT); }
    H5E_END_TRY
    if (d >= 0)
        FAILF("a record with %s.%s = %s opened", k1 ? k1 : "virtual", k2 ? k2 : "", value);
    if (!strstr(errors(), needle))
        FAILF("for %s.%s = %s: expected \"%s\" in \"%s\"", k1 ? k1 : "virtual", k2 ? k2 : "", value, needle,
              errbuf);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(json_object_to_file(doc_path, orig) == 0);
    json_object_put(doc);
    json_object_put(orig);
    H5Pclose(fapl);
    return 0;
}

static int
test_malformed(void)
{
    hid_t   fapl  = h5t_zarr_fapl(3), f, dcpl, vs, ss, d;
    hsize_t vd[2] = {2, 3}, n = 6, v0[2] = {0, 0};
    int     v[6], fill = 4;
#define W "_h5zarr.virtual"
    if (make_src(at("ms.zarr"), fapl, false, "/d", 1, &n, NULL, NULL, 0))
        return 1;
    ASSERT((f = H5Fcreate(at("m.zarr"), H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill);
    vs = H5Screate_simple(2, vd, NULL);
    ss = H5Screate_simple(1, &n, NULL);
    if (map(dcpl, vs, v0, NULL, vd, NULL, "ms.zarr", "/d", ss, NULL, NULL, NULL, NULL))
        return 1;
    ASSERT((d = H5Dcreate2(f, "v", H5T_NATIVE_INT, vs, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    /* a dataset mapping itself: refused at the read, not an endless recursion */
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    ASSERT(H5Sselect_all(vs) >= 0 && H5Pset_virtual(dcpl, vs, ".", "/loop", vs) >= 0);
    ASSERT((d = H5Dcreate2(f, "loop", H5T_NATIVE_INT, vs, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    {
        herr_t rc;
        H5E_BEGIN_TRY { rc = H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v); }
        H5E_END_TRY
        ASSERT(rc < 0);
        ASSERT(strstr(errors(), "virtual dataset '/loop' of"));
        ASSERT(strstr(errbuf, "maps itself (through its sources)"));
    }
    H5Dclose(d);
    H5Pclose(dcpl);
    /* a mapping beyond the dataset is refused when made */
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    {
        hsize_t big[2] = {3, 3};
        hid_t   bs     = H5Screate_simple(2, big, NULL), s9;
        hsize_t nine   = 9;
        s9             = H5Screate_simple(1, &nine, NULL);
        if (map(dcpl, bs, v0, NULL, big, NULL, "ms.zarr", "/d", s9, NULL, NULL, NULL, NULL))
            return 1;
        H5E_BEGIN_TRY { d = H5Dcreate2(f, "big", H5T_NATIVE_INT, vs, H5P_DEFAULT, dcpl, H5P_DEFAULT); }
        H5E_END_TRY
        ASSERT(d < 0);
        ASSERT(strstr(errors(), W "[0].vspace: dimension 0 ends at 3, beyond the dataset's size 2"));
        H5Sclose(bs);
        H5Sclose(s9);
    }
    H5Pclose(dcpl);
    H5Sclose(vs);
    H5Sclose(ss);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((f = H5Fopen(at("m.zarr"), H5F_ACC_RDONLY, fapl)) >= 0);
    {
        const int w[6] = {0, 1, 2, 3, 4, 5};
        if (expect_all(f, "v", w, 6))
            return 1;
    }
    ASSERT(H5Fclose(f) >= 0);

    if (corrupt(NULL, NULL, "{}", NULL, W ": must be a list of mappings") ||
        corrupt(NULL, NULL, "\"x\"", NULL, W ": must be a list of mappings") ||
        corrupt("file", NULL, "5", NULL, W "[0].file: must be a string, not an integer") ||
        corrupt("file", NULL, "\"\"", NULL, W "[0].file: an empty file name") ||
        corrupt("dataset", NULL, "null", NULL, W "[0].dataset: must be a string, not null") ||
        corrupt("extra", NULL, "1", NULL, W "[0].extra: unknown key") ||
        corrupt("src_dims", NULL, "[-2]", NULL, W "[0].src_dims[0]: -2 is out of range") ||
        corrupt("src_maxdims", NULL, "[3]", NULL, W "[0].src_maxdims[0]: 3 is below the size 6") ||
        corrupt("vspace", NULL, "\"some\"", NULL, W "[0].vspace: \"some\" is not a selection") ||
        corrupt("vspace", NULL, "[1]", NULL, W "[0].vspace: must be \"all\", \"none\" or an object") ||
        corrupt("vspace", "start", "[0]", NULL, W "[0].vspace.start: must be a list of 2 integers") ||
        corrupt("vspace", "start", "[1, 0]", NULL,
                W "[0].vspace: dimension 0 ends at 3, beyond the dataset's size 2") ||
        corrupt("vspace", "count", "[2.5, 3]", NULL,
                W "[0].vspace.count[0]: must be an integer, not a non-integer number") ||
        corrupt("vspace", "count", "[-1, -1]", NULL, W "[0].vspace: more than one unlimited count") ||
        corrupt("vspace", "stride", "[0, 1]", NULL, W "[0].vspace.stride[0]: 0 is out of range") ||
        corrupt("vspace", "bogus", "1", NULL, W "[0].vspace.bogus: unknown key") ||
        corrupt("vspace", "count", "[1, 3]", NULL, W "[0]: HDF5 refused the mapping") ||
        corrupt("src", NULL, "{\"blocks\": [[[4], [2]]]}", NULL,
                W "[0].src.blocks[0]: dimension 0 ends at 2, before its start 4") ||
        corrupt("src", NULL, "{\"blocks\": [[[0]]]}", NULL,
                W "[0].src.blocks[0]: must be a list [start, end]") ||
        corrupt("src", NULL, "{\"start\": [4611686018427387905], \"count\": [1]}", NULL,
                W "[0].src.start[0]: 4611686018427387905 is out of range") ||
        corrupt(NULL, NULL, "[]", "layout", W ": given for a dataset whose dcpl layout is not \"virtual\""))
        return 1;
#undef W
    H5Pclose(fapl);
    return 0;
}

static const test_entry tests[] = {TEST_ENTRY(zarr_sources),  TEST_ENTRY(write_through),
                                   TEST_ENTRY(native_source), TEST_ENTRY(prefix),
                                   TEST_ENTRY(printf),        TEST_ENTRY(malformed)};

int
main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "%s", test_tmpdir("virtual"));
    return RUN_TESTS(tests);
}
