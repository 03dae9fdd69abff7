/*
 * test_refs.c: object references (H5T_STD_REF, the H5R API) stored through the zarr connector in
 * attribute and dataset data, read back after reopening and followed with H5Ropen_object to the right
 * objects; null references; and HDF5 dimension scales (H5DS*), which store references in attributes
 * (DIMENSION_LIST: vlen of references; REFERENCE_LIST: compound holding a reference).
 */
#include "runner.h"

#include <hdf5.h>
#include <hdf5_hl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "h5test.h"

static int
is_zero(const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        if (c[i])
            return 0;
    return 1;
}

static int
test_object_references_in_attributes_and_datasets(void)
{
    const char *tmp = test_tmpdir("refs");
    char        dir[4096];
    hid_t       fapl = h5t_zarr_fapl(3), f, g, d, sp, a, ds;
    hsize_t     n = 4, dims[1] = {5};
    H5R_ref_t   w[4], r[4], s;

    ASSERT(tmp && fapl >= 0);
    snprintf(dir, sizeof dir, "%s/refs.zarr", tmp);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((g = H5Gcreate2(f, "g1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((sp = H5Screate_simple(1, dims, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(g, "d", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Gclose(g);
    memset(w, 0, sizeof w);
    ASSERT(H5Rcreate_object(f, "/g1", H5P_DEFAULT, &w[0]) >= 0);
    ASSERT(H5Rcreate_object(f, "g1/d", H5P_DEFAULT, &w[1]) >= 0);
    /* w[2] stays a null reference */
    ASSERT(H5Rcreate_object(f, "/", H5P_DEFAULT, &w[3]) >= 0);

    ASSERT((sp = H5Screate_simple(1, &n, NULL)) >= 0);
    ASSERT((a = H5Acreate2(f, "refs", H5T_STD_REF, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, H5T_STD_REF, w) >= 0);
    ASSERT(H5Aclose(a) >= 0);
    ASSERT((ds = H5Dcreate2(f, "refds", H5T_STD_REF, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(ds, H5T_STD_REF, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
    ASSERT(H5Dclose(ds) >= 0);
    H5Sclose(sp);
    /* a scalar reference attribute on a dataset */
    ASSERT((sp = H5Screate(H5S_SCALAR)) >= 0);
    ASSERT((d = H5Dopen2(f, "g1/d", H5P_DEFAULT)) >= 0);
    ASSERT((a = H5Acreate2(d, "self", H5T_STD_REF, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, H5T_STD_REF, &w[1]) >= 0);
    H5Aclose(a);
    H5Dclose(d);
    H5Sclose(sp);
    for (int i = 0; i < 4; i++)
        if (i != 2)
            ASSERT(H5Rdestroy(&w[i]) >= 0);
    ASSERT(H5Fclose(f) >= 0);

    /* other zarr readers see the paths as the attribute's value */
    {
        char   zj[4200];
        size_t len = 0;
        char  *doc;
        snprintf(zj, sizeof zj, "%s/zarr.json", dir);
        ASSERT((doc = test_slurp(zj, &len)) != NULL);
        {
            size_t k = 0; /* drop the layout: compare the compact text */
            for (size_t i = 0; i < len; i++)
                if (doc[i] != ' ' && doc[i] != '\n' && doc[i] != '\t')
                    doc[k++] = doc[i];
            doc[k] = 0;
        }
        ASSERT(strstr(doc, "\"refs\":[\"/g1\",\"/g1/d\",\"\",\"/\"]") != NULL);
        free(doc);
    }
    /* reopen read-only: the references lead to the same objects */
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((a = H5Aopen(f, "refs", H5P_DEFAULT)) >= 0);
    {
        hid_t t = H5Aget_type(a);
        ASSERT_EQ_INT(H5Tget_class(t), H5T_REFERENCE);
        ASSERT(H5Tequal(t, H5T_STD_REF) > 0);
        H5Tclose(t);
    }
    memset(r, 0xff, sizeof r);
    ASSERT(H5Aread(a, H5T_STD_REF, r) >= 0);
    ASSERT(H5Aclose(a) >= 0);
    ASSERT(h5t_check_ref(f, &r[0], "/g1") == 0);
    ASSERT(h5t_check_ref(f, &r[1], "/g1/d") == 0);
    ASSERT(is_zero(&r[2], sizeof r[2]));
    ASSERT(h5t_check_ref(f, &r[3], "/") == 0);
    for (int i = 0; i < 4; i++)
        if (i != 2)
            ASSERT(H5Rdestroy(&r[i]) >= 0);

    ASSERT((ds = H5Dopen2(f, "refds", H5P_DEFAULT)) >= 0);
    memset(r, 0xff, sizeof r);
    ASSERT(H5Dread(ds, H5T_STD_REF, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    ASSERT(h5t_check_ref(f, &r[0], "/g1") == 0);
    ASSERT(h5t_check_ref(f, &r[1], "/g1/d") == 0);
    ASSERT(is_zero(&r[2], sizeof r[2]));
    ASSERT(h5t_check_ref(f, &r[3], "/") == 0);
    for (int i = 0; i < 4; i++)
        if (i != 2)
            ASSERT(H5Rdestroy(&r[i]) >= 0);
    /* one element through a point selection */
    {
        hsize_t pt = 1, one = 1;
        hid_t   fs = H5Dget_space(ds), ms = H5Screate_simple(1, &one, NULL);
        H5Sselect_elements(fs, H5S_SELECT_SET, 1, &pt);
        ASSERT(H5Dread(ds, H5T_STD_REF, ms, fs, H5P_DEFAULT, &s) >= 0);
        ASSERT(h5t_check_ref(f, &s, "/g1/d") == 0);
        ASSERT(H5Rdestroy(&s) >= 0);
        H5Sclose(fs);
        H5Sclose(ms);
    }
    ASSERT(H5Dclose(ds) >= 0);
    ASSERT((a = H5Aopen_by_name(f, "g1/d", "self", H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Aread(a, H5T_STD_REF, &s) >= 0);
    ASSERT(h5t_check_ref(f, &s, "/g1/d") == 0);
    ASSERT(H5Rdestroy(&s) >= 0);
    H5Aclose(a);
    ASSERT(H5Fclose(f) >= 0);

    /* old-style references are refused with an error, not stored wrongly */
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT((sp = H5Screate(H5S_SCALAR)) >= 0);
    H5E_BEGIN_TRY { a = H5Acreate2(f, "old", H5T_STD_REF_OBJ, sp, H5P_DEFAULT, H5P_DEFAULT); }
    H5E_END_TRY
    ASSERT(a < 0);
    H5E_BEGIN_TRY { ds = H5Dcreate2(f, "oldds", H5T_STD_REF_OBJ, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT); }
    H5E_END_TRY
    ASSERT(ds < 0);
    /* a compound holding a reference, read and written with another member layout (the conversion
     * copies references bit for bit: each copy must stay valid after the connector frees its own) */
    {
        typedef struct {
            H5R_ref_t r;
            int       x;
        } rx_t;
        typedef struct {
            int       x;
            H5R_ref_t r;
        } xr_t;
        hid_t   trx = H5Tcreate(H5T_COMPOUND, sizeof(rx_t)), txr = H5Tcreate(H5T_COMPOUND, sizeof(xr_t));
        hid_t   sp2;
        hsize_t two = 2;
        xr_t    in[2], out[2];
        H5Tinsert(trx, "r", HOFFSET(rx_t, r), H5T_STD_REF);
        H5Tinsert(trx, "x", HOFFSET(rx_t, x), H5T_NATIVE_INT);
        H5Tinsert(txr, "x", HOFFSET(xr_t, x), H5T_NATIVE_INT);
        H5Tinsert(txr, "r", HOFFSET(xr_t, r), H5T_STD_REF);
        memset(in, 0, sizeof in);
        in[0].x = 10;
        in[1].x = 11;
        ASSERT(H5Rcreate_object(f, "g1/d", H5P_DEFAULT, &in[0].r) >= 0);
        ASSERT(H5Rcreate_object(f, "g1", H5P_DEFAULT, &in[1].r) >= 0);
        sp2 = H5Screate_simple(1, &two, NULL);
        ASSERT((a = H5Acreate2(f, "pairs", trx, sp2, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Awrite(a, txr, in) >= 0);
        ASSERT(H5Aclose(a) >= 0);
        ASSERT((ds = H5Dcreate2(f, "pairds", trx, sp2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Dwrite(ds, txr, H5S_ALL, H5S_ALL, H5P_DEFAULT, in) >= 0);
        ASSERT(H5Dclose(ds) >= 0);
        /* the caller's references are untouched by the writes */
        ASSERT(h5t_check_ref(f, &in[0].r, "/g1/d") == 0);
        ASSERT(H5Rdestroy(&in[0].r) >= 0);
        ASSERT(H5Rdestroy(&in[1].r) >= 0);
        memset(out, 0, sizeof out);
        ASSERT((a = H5Aopen(f, "pairs", H5P_DEFAULT)) >= 0);
        ASSERT(H5Aread(a, txr, out) >= 0);
        ASSERT(H5Aclose(a) >= 0);
        ASSERT_EQ_INT(out[1].x, 11);
        ASSERT(h5t_check_ref(f, &out[0].r, "/g1/d") == 0);
        ASSERT(h5t_check_ref(f, &out[1].r, "/g1") == 0);
        ASSERT(H5Rdestroy(&out[0].r) >= 0);
        ASSERT(H5Rdestroy(&out[1].r) >= 0);
        memset(out, 0, sizeof out);
        ASSERT((ds = H5Dopen2(f, "pairds", H5P_DEFAULT)) >= 0);
        ASSERT(H5Dread(ds, txr, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
        ASSERT(H5Dclose(ds) >= 0);
        ASSERT_EQ_INT(out[0].x, 10);
        ASSERT(h5t_check_ref(f, &out[0].r, "/g1/d") == 0);
        ASSERT(h5t_check_ref(f, &out[1].r, "/g1") == 0);
        ASSERT(H5Rdestroy(&out[0].r) >= 0);
        ASSERT(H5Rdestroy(&out[1].r) >= 0);
        H5Sclose(sp2);
        H5Tclose(trx);
        H5Tclose(txr);
    }
    /* a region reference has no stored form: the write fails, the stored data stays as it was */
    {
        hsize_t   one = 1, pt = 0;
        hid_t     dsp = H5Screate_simple(1, dims, NULL), ms = H5Screate_simple(1, &one, NULL), fs;
        H5R_ref_t reg;
        herr_t    e;
        H5Sselect_elements(dsp, H5S_SELECT_SET, 1, &pt);
        ASSERT(H5Rcreate_region(f, "g1/d", dsp, H5P_DEFAULT, &reg) >= 0);
        ASSERT((ds = H5Dopen2(f, "refds", H5P_DEFAULT)) >= 0);
        fs = H5Dget_space(ds);
        H5Sselect_elements(fs, H5S_SELECT_SET, 1, &pt);
        H5E_BEGIN_TRY { e = H5Dwrite(ds, H5T_STD_REF, ms, fs, H5P_DEFAULT, &reg); }
        H5E_END_TRY
        ASSERT(e < 0);
        ASSERT(H5Dread(ds, H5T_STD_REF, ms, fs, H5P_DEFAULT, &s) >= 0);
        ASSERT(h5t_check_ref(f, &s, "/g1") == 0);
        H5Rdestroy(&s);
        H5Rdestroy(&reg);
        H5Sclose(fs);
        H5Sclose(ms);
        H5Sclose(dsp);
        H5Dclose(ds);
    }
    H5Sclose(sp);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static herr_t
count_scale(hid_t did, unsigned dim, hid_t dsid, void *ud)
{
    char name[64] = "";
    (void)did;
    (void)dim;
    H5DSget_scale_name(dsid, name, sizeof name);
    if (!strcmp(name, "xdim"))
        (*(int *)ud)++;
    return 0;
}

static int
test_dimension_scales(void)
{
    const char *tmp = test_tmpdir("dimscales");
    char        dir[4096];
    hid_t       fapl  = h5t_zarr_fapl(3), f, sx, sv, x, y, v;
    hsize_t     dx[1] = {4}, dv[2] = {4, 3};
    int         cnt = 0;

    ASSERT(tmp && fapl >= 0);
    snprintf(dir, sizeof dir, "%s/dims.zarr", tmp);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    sx = H5Screate_simple(1, dx, NULL);
    sv = H5Screate_simple(2, dv, NULL);
    ASSERT((x = H5Dcreate2(f, "x", H5T_NATIVE_FLOAT, sx, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    dx[0] = 3;
    H5Sset_extent_simple(sx, 1, dx, NULL);
    ASSERT((y = H5Dcreate2(f, "y", H5T_NATIVE_FLOAT, sx, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((v = H5Dcreate2(f, "v", H5T_NATIVE_DOUBLE, sv, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5DSset_scale(x, "xdim") >= 0);
    ASSERT(H5DSset_scale(y, "ydim") >= 0);
    ASSERT(H5DSattach_scale(v, x, 0) >= 0);
    ASSERT(H5DSattach_scale(v, y, 1) >= 0);
    ASSERT_EQ_INT(H5DSis_attached(v, x, 0), 1);
    H5Dclose(x);
    H5Dclose(y);
    H5Dclose(v);
    ASSERT(H5Fclose(f) >= 0);

    ASSERT((f = H5Fopen(dir, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT((x = H5Dopen2(f, "x", H5P_DEFAULT)) >= 0);
    ASSERT((y = H5Dopen2(f, "y", H5P_DEFAULT)) >= 0);
    ASSERT((v = H5Dopen2(f, "v", H5P_DEFAULT)) >= 0);
    ASSERT_EQ_INT(H5DSis_scale(x), 1);
    ASSERT_EQ_INT(H5DSis_scale(v), 0);
    ASSERT_EQ_INT(H5DSis_attached(v, x, 0), 1);
    ASSERT_EQ_INT(H5DSis_attached(v, y, 1), 1);
    ASSERT_EQ_INT(H5DSis_attached(v, x, 1), 0);
    ASSERT_EQ_INT(H5DSget_num_scales(v, 0), 1);
    ASSERT_EQ_INT(H5DSget_num_scales(v, 1), 1);
    ASSERT(H5DSiterate_scales(v, 0, NULL, count_scale, &cnt) >= 0);
    ASSERT_EQ_INT(cnt, 1);
    /* detach rewrites both attributes */
    ASSERT(H5DSdetach_scale(v, y, 1) >= 0);
    ASSERT_EQ_INT(H5DSis_attached(v, y, 1), 0);
    ASSERT_EQ_INT(H5DSget_num_scales(v, 1), 0);
    H5Dclose(x);
    H5Dclose(y);
    H5Dclose(v);
    ASSERT(H5Fclose(f) >= 0);
    H5Sclose(sx);
    H5Sclose(sv);
    H5Pclose(fapl);
    return 0;
}

/* More objects than the connector's first node and token indexes have chains (1024): the indexes grow
 * while the datasets are made, and every object keeps being found by path and by reference afterwards,
 * through a dimension scale on many variables (REFERENCE_LIST rewritten with one reference more each
 * time), a move of one of them (the reference follows it) and a reopen. */
static int
test_references_past_index_growth(void)
{
    enum { NDS = 1100, NATT = 40 };
    const char *tmp = test_tmpdir("refs_grow");
    char        dir[4096], name[64];
    hid_t       fapl    = h5t_zarr_fapl(2), f, sp, x, d;
    hsize_t     dims[1] = {2};
    H5R_ref_t   r;

    ASSERT(tmp && fapl >= 0);
    snprintf(dir, sizeof dir, "%s/grow.zarr", tmp);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((sp = H5Screate_simple(1, dims, NULL)) >= 0);
    ASSERT((x = H5Dcreate2(f, "x", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5DSset_scale(x, "x") >= 0);
    for (int i = 0; i < NDS; i++) {
        snprintf(name, sizeof name, "v%04d", i);
        ASSERT((d = H5Dcreate2(f, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        if (i % (NDS / NATT) == 0)
            ASSERT(H5DSattach_scale(d, x, 0) >= 0);
        H5Dclose(d);
    }
    ASSERT_EQ_INT(H5Aget_num_attrs(x) > 0, 1);
    /* the first and the last made, by reference */
    ASSERT(H5Rcreate_object(f, "/v0000", H5P_DEFAULT, &r) >= 0);
    ASSERT(h5t_check_ref(f, &r, "/v0000") == 0);
    H5Rdestroy(&r);
    snprintf(name, sizeof name, "/v%04d", NDS - 1);
    ASSERT(H5Rcreate_object(f, name, H5P_DEFAULT, &r) >= 0);
    ASSERT(h5t_check_ref(f, &r, name) == 0);
    H5Rdestroy(&r);
    /* an attached variable moves: the scale's references follow it */
    ASSERT(H5Lmove(f, "v0000", f, "moved", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Dclose(x);
    ASSERT(H5Fclose(f) >= 0);

    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((x = H5Dopen2(f, "x", H5P_DEFAULT)) >= 0);
    for (int i = 0; i < NDS; i += NDS / NATT) {
        snprintf(name, sizeof name, i ? "v%04d" : "moved", i);
        ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
        ASSERT_EQ_INT(H5DSis_attached(d, x, 0), 1);
        H5Dclose(d);
    }
    ASSERT((d = H5Dopen2(f, "v0001", H5P_DEFAULT)) >= 0);
    ASSERT_EQ_INT(H5DSis_attached(d, x, 0), 0);
    H5Dclose(d);
    H5Dclose(x);
    ASSERT(H5Fclose(f) >= 0);
    H5Sclose(sp);
    H5Pclose(fapl);
    return 0;
}

/* A dataset reached through a reference (H5Ropen_object: the node found in the token index) names the
 * same object as by path: H5Rcreate_object(id, ".") gives a reference equal to one made by name. A
 * compound of a reference and an index (H5DS's REFERENCE_LIST form) written in the attribute's own
 * memory type (read where it is, not copied) and in a memory type with the members the other way round
 * (converted) reads back as written, each reference opening its dataset. */
static int
test_reference_compounds_written_as_is_and_converted(void)
{
    enum { N = 12 };
    typedef struct {
        H5R_ref_t ref;
        unsigned  idx;
    } ref_idx;
    typedef struct {
        unsigned  idx;
        H5R_ref_t ref;
    } idx_ref;
    const char *tmp = test_tmpdir("refs_compound");
    char        dir[4096], name[64];
    hid_t       fapl    = h5t_zarr_fapl(3), f, sp, d, o, a, t, t2, asp;
    hsize_t     dims[1] = {3}, n = N;
    H5R_ref_t   byname, bydot;
    ref_idx     w[N], r[N];
    idx_ref     w2[N];

    ASSERT(tmp && fapl >= 0);
    snprintf(dir, sizeof dir, "%s/compound.zarr", tmp);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((sp = H5Screate_simple(1, dims, NULL)) >= 0);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "g%d", i % 3);
        if (i < 3)
            ASSERT((o = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0 && H5Gclose(o) >= 0);
        snprintf(name, sizeof name, "g%d/d%02d", i % 3, i);
        ASSERT((d = H5Dcreate2(f, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        H5Dclose(d);
    }
    /* by token and back: the same object, the same reference */
    ASSERT(H5Rcreate_object(f, "g1/d04", H5P_DEFAULT, &byname) >= 0);
    ASSERT((o = H5Ropen_object(&byname, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT_EQ_INT(H5Iget_type(o), H5I_DATASET);
    ASSERT(H5Rcreate_object(o, ".", H5P_DEFAULT, &bydot) >= 0);
    ASSERT_EQ_INT(H5Requal(&byname, &bydot), 1);
    ASSERT(H5Rget_obj_name(&bydot, H5P_DEFAULT, name, sizeof name) > 0);
    ASSERT_STR(name, "/g1/d04");
    H5Rdestroy(&bydot);
    H5Oclose(o);
    H5Rdestroy(&byname);

    ASSERT((t = H5Tcreate(H5T_COMPOUND, sizeof(ref_idx))) >= 0);
    ASSERT(H5Tinsert(t, "dataset", HOFFSET(ref_idx, ref), H5T_STD_REF) >= 0);
    ASSERT(H5Tinsert(t, "dimension", HOFFSET(ref_idx, idx), H5T_NATIVE_UINT) >= 0);
    ASSERT((t2 = H5Tcreate(H5T_COMPOUND, sizeof(idx_ref))) >= 0);
    ASSERT(H5Tinsert(t2, "dimension", HOFFSET(idx_ref, idx), H5T_NATIVE_UINT) >= 0);
    ASSERT(H5Tinsert(t2, "dataset", HOFFSET(idx_ref, ref), H5T_STD_REF) >= 0);
    ASSERT((asp = H5Screate_simple(1, &n, NULL)) >= 0);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "/g%d/d%02d", i % 3, i);
        ASSERT(H5Rcreate_object(f, name, H5P_DEFAULT, &w[i].ref) >= 0);
        /* through the referenced object itself, as H5DSattach_scale rebuilds each one */
        ASSERT((o = H5Ropen_object(&w[i].ref, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Rcreate_object(o, ".", H5P_DEFAULT, &w2[N - 1 - i].ref) >= 0);
        H5Oclose(o);
        w[i].idx          = 100u + (unsigned)i;
        w2[N - 1 - i].idx = 200u + (unsigned)i;
    }
    /* in the attribute's own memory type */
    ASSERT((a = H5Acreate2(f, "as_is", t, asp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, t, w) >= 0);
    H5Aclose(a);
    /* members the other way round: converted */
    ASSERT((a = H5Acreate2(f, "converted", t, asp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, t2, w2) >= 0);
    H5Aclose(a);
    /* the caller's buffer is left as it was */
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "/g%d/d%02d", i % 3, i);
        ASSERT_EQ_INT((int)w[i].idx, 100 + i);
        ASSERT(h5t_check_ref(f, &w[i].ref, name) == 0);
        H5Rdestroy(&w[i].ref);
        H5Rdestroy(&w2[N - 1 - i].ref);
    }
    ASSERT(H5Fclose(f) >= 0);

    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    for (int k = 0; k < 2; k++) {
        memset(r, 0, sizeof r);
        ASSERT((a = H5Aopen(f, k ? "converted" : "as_is", H5P_DEFAULT)) >= 0);
        ASSERT(H5Aread(a, t, r) >= 0);
        H5Aclose(a);
        for (int i = 0; i < N; i++) {
            int j = k ? N - 1 - i : i; /* the converted list was written last to first */
            snprintf(name, sizeof name, "/g%d/d%02d", j % 3, j);
            ASSERT_EQ_INT((int)r[i].idx, (k ? 200 : 100) + j);
            ASSERT(h5t_check_ref(f, &r[i].ref, name) == 0);
            H5Rdestroy(&r[i].ref);
        }
    }
    ASSERT(H5Fclose(f) >= 0);
    H5Tclose(t);
    H5Tclose(t2);
    H5Sclose(asp);
    H5Sclose(sp);
    H5Pclose(fapl);
    return 0;
}

/* References stored in datasets' data follow the objects they name, as native addresses do: a plain
 * reference dataset (2-D, chunked, some chunks never written), a dataset of vlen sequences of references
 * (DIMENSION_LIST's type), v2 and v3; after moves of a dataset and of a group above another, and a new
 * object made at an old name, every reference leads to the moved object, before and after a reopen. */
static int
data_refs_case(int version)
{
    const char *tmp = test_tmpdir("refs");
    char        dir[4096];
    hid_t       fapl    = h5t_zarr_fapl(version), f, g, d, sp, ds, vt, dcpl;
    hsize_t     dims[2] = {3, 4}, ch[2] = {1, 4}, one = 2;
    H5R_ref_t   w[3][4], r[3][4];
    hvl_t       vw[2], vr[2];

    ASSERT(tmp && fapl >= 0);
    snprintf(dir, sizeof dir, "%s/datarefs%d.zarr", tmp, version);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Gclose(g);
    ASSERT((sp = H5Screate_simple(1, &one, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "a", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    ASSERT((d = H5Dcreate2(f, "g/b", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    memset(w, 0, sizeof w);
    for (int j = 0; j < 4; j++) { /* row 2 stays unwritten: a chunk never stored */
        ASSERT(H5Rcreate_object(f, j % 2 ? "g/b" : "a", H5P_DEFAULT, &w[0][j]) >= 0);
        ASSERT(H5Rcreate_object(f, j % 2 ? "g" : "/", H5P_DEFAULT, &w[1][j]) >= 0);
    }
    ASSERT((sp = H5Screate_simple(2, dims, NULL)) >= 0);
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_chunk(dcpl, 2, ch) >= 0);
    ASSERT((ds = H5Dcreate2(f, "refs2d", H5T_STD_REF, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    H5Sclose(sp);
    {
        hsize_t st[2] = {0, 0}, cnt[2] = {2, 4};
        hid_t   fs = H5Dget_space(ds), ms = H5Screate_simple(2, cnt, NULL);
        ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, cnt, NULL) >= 0);
        ASSERT(H5Dwrite(ds, H5T_STD_REF, ms, fs, H5P_DEFAULT, w) >= 0);
        H5Sclose(fs);
        H5Sclose(ms);
    }
    H5Dclose(ds);
    H5Pclose(dcpl);
    /* vlen sequences of references: {a, g/b} and {g} */
    vw[0].len = 2;
    vw[0].p   = (H5R_ref_t[]){w[0][0], w[0][1]};
    vw[1].len = 1;
    vw[1].p   = (H5R_ref_t[]){w[1][1]};
    ASSERT((vt = H5Tvlen_create(H5T_STD_REF)) >= 0);
    ASSERT((sp = H5Screate_simple(1, &one, NULL)) >= 0);
    ASSERT((ds = H5Dcreate2(f, "vrefs", vt, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(ds, vt, H5S_ALL, H5S_ALL, H5P_DEFAULT, vw) >= 0);
    H5Dclose(ds);
    H5Sclose(sp);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            H5Rdestroy(&w[i][j]);

    /* the dataset moves, then the group, and a newcomer takes the dataset's old name */
    ASSERT(H5Lmove(f, "a", f, "x", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Lmove(f, "g", f, "h", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT((sp = H5Screate_simple(1, &one, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "a", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    for (int pass = 0; pass < 2; pass++) {
        if (pass) { /* and after a reopen */
            ASSERT(H5Fclose(f) >= 0);
            ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
        }
        ASSERT((ds = H5Dopen2(f, "refs2d", H5P_DEFAULT)) >= 0);
        memset(r, 0xff, sizeof r);
        ASSERT(H5Dread(ds, H5T_STD_REF, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
        H5Dclose(ds);
        for (int j = 0; j < 4; j++) {
            ASSERT(h5t_check_ref(f, &r[0][j], j % 2 ? "/h/b" : "/x") == 0);
            ASSERT(h5t_check_ref(f, &r[1][j], j % 2 ? "/h" : "/") == 0);
            ASSERT(is_zero(&r[2][j], sizeof r[2][j])); /* never written: null references */
            H5Rdestroy(&r[0][j]);
            H5Rdestroy(&r[1][j]);
        }
        ASSERT((ds = H5Dopen2(f, "vrefs", H5P_DEFAULT)) >= 0);
        ASSERT(H5Dread(ds, vt, H5S_ALL, H5S_ALL, H5P_DEFAULT, vr) >= 0);
        ASSERT(vr[0].len == 2 && vr[1].len == 1);
        ASSERT(h5t_check_ref(f, &((H5R_ref_t *)vr[0].p)[0], "/x") == 0);
        ASSERT(h5t_check_ref(f, &((H5R_ref_t *)vr[0].p)[1], "/h/b") == 0);
        ASSERT(h5t_check_ref(f, &((H5R_ref_t *)vr[1].p)[0], "/h") == 0);
        {
            hid_t vs = H5Dget_space(ds);
            ASSERT(H5Treclaim(vt, vs, H5P_DEFAULT, vr) >= 0);
            H5Sclose(vs);
        }
        H5Dclose(ds);
    }
    H5Tclose(vt);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_references_in_data_follow_moves(void)
{
    ASSERT(data_refs_case(3) == 0);
    ASSERT(data_refs_case(2) == 0);
    return 0;
}

/* References stored in attributes follow moves by name, whatever they sit in: a vlen of references (as
 * DIMENSION_LIST) and a compound holding one (as REFERENCE_LIST). The connector checks each stored element
 * for the moved path before decoding it with its type (vol/attr.c: packed_mentions, on bytes decoded once
 * and kept), so this moves objects whose names are prefixes or pieces of the others' ("a", "ab", "b/a",
 * "a/x"), twice in a row in one open (the second move reads elements the first rewrote) and once more
 * after a reopen. */
typedef struct ref_rec {
    H5R_ref_t r;
    int       i;
} ref_rec;

static int
check_attr_refs(hid_t f, const char *const want[4])
{
    hid_t   at, vt, ct;
    hvl_t   v = {0, NULL};
    ref_rec c[4], u;
    ASSERT((vt = H5Tvlen_create(H5T_STD_REF)) >= 0);
    ASSERT((ct = H5Tcreate(H5T_COMPOUND, sizeof(ref_rec))) >= 0);
    ASSERT(H5Tinsert(ct, "r", HOFFSET(ref_rec, r), H5T_STD_REF) >= 0 &&
           H5Tinsert(ct, "i", HOFFSET(ref_rec, i), H5T_NATIVE_INT) >= 0);
    ASSERT((at = H5Aopen(f, "vr", H5P_DEFAULT)) >= 0);
    ASSERT(H5Aread(at, vt, &v) >= 0);
    H5Aclose(at);
    ASSERT_EQ_INT((int)v.len, 4);
    for (int i = 0; i < 4; i++)
        ASSERT(h5t_check_ref(f, &((H5R_ref_t *)v.p)[i], want[i]) == 0);
    for (int i = 0; i < 4; i++)
        H5Rdestroy(&((H5R_ref_t *)v.p)[i]);
    free(v.p);
    ASSERT((at = H5Aopen(f, "cr", H5P_DEFAULT)) >= 0);
    ASSERT(H5Aread(at, ct, c) >= 0);
    H5Aclose(at);
    for (int i = 0; i < 4; i++) {
        ASSERT_EQ_INT(c[i].i, 10 + i);
        ASSERT(h5t_check_ref(f, &c[i].r, want[i]) == 0);
        H5Rdestroy(&c[i].r);
    }
    /* the only reference of its attribute, below the moved object */
    ASSERT((at = H5Aopen(f, "ux", H5P_DEFAULT)) >= 0);
    ASSERT(H5Aread(at, ct, &u) >= 0);
    H5Aclose(at);
    ASSERT_EQ_INT(u.i, 7);
    ASSERT(h5t_check_ref(f, &u.r, want[1]) == 0);
    H5Rdestroy(&u.r);
    H5Tclose(vt);
    H5Tclose(ct);
    return 0;
}

static int
test_attribute_references_follow_moves(void)
{
    static const char *const names[4]  = {"a", "a/x", "ab", "b/a"};
    static const char *const after1[4] = {"/a", "/a/x", "/ab2", "/b/a"};
    static const char *const after2[4] = {"/a9", "/a9/x", "/ab2", "/b/a"};
    static const char *const after3[4] = {"/a9", "/a9/x", "/ab2", "/a"};
    /* vr: a vlen of the four; cr: a compound each (as REFERENCE_LIST); ux: one compound, "a/x" alone */
    const char *tmp = test_tmpdir("refs");
    char        dir[4096];
    hid_t       fapl = h5t_zarr_fapl(3), f, g, d, sp, one, at, vt, ct;
    hsize_t     two = 2, four = 4;
    H5R_ref_t   w[4];
    ref_rec     c[4];
    hvl_t       v;

    ASSERT(tmp && fapl >= 0);
    snprintf(dir, sizeof dir, "%s/attr_refs_moves.zarr", tmp);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((sp = H5Screate_simple(1, &two, NULL)) >= 0);
    ASSERT((g = H5Gcreate2(f, "a", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Gclose(g);
    ASSERT((g = H5Gcreate2(f, "b", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Gclose(g);
    for (int i = 0; i < 4; i++) {
        if (i != 0) {
            ASSERT((d = H5Dcreate2(f, names[i], H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >=
                   0);
            H5Dclose(d);
        }
        ASSERT(H5Rcreate_object(f, names[i], H5P_DEFAULT, &w[i]) >= 0);
        c[i].r = w[i];
        c[i].i = 10 + i;
    }
    ASSERT((vt = H5Tvlen_create(H5T_STD_REF)) >= 0);
    ASSERT((ct = H5Tcreate(H5T_COMPOUND, sizeof(ref_rec))) >= 0);
    ASSERT(H5Tinsert(ct, "r", HOFFSET(ref_rec, r), H5T_STD_REF) >= 0 &&
           H5Tinsert(ct, "i", HOFFSET(ref_rec, i), H5T_NATIVE_INT) >= 0);
    v.len = 4;
    v.p   = w;
    ASSERT((one = H5Screate(H5S_SCALAR)) >= 0);
    ASSERT((at = H5Acreate2(f, "vr", vt, one, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(at, vt, &v) >= 0);
    H5Aclose(at);
    H5Sclose(sp);
    ASSERT((sp = H5Screate_simple(1, &four, NULL)) >= 0);
    ASSERT((at = H5Acreate2(f, "cr", ct, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(at, ct, c) >= 0);
    H5Aclose(at);
    c[1].i = 7;
    ASSERT((at = H5Acreate2(f, "ux", ct, one, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(at, ct, &c[1]) >= 0);
    H5Aclose(at);
    for (int i = 0; i < 4; i++)
        H5Rdestroy(&w[i]);
    H5Sclose(sp);
    H5Sclose(one);
    H5Tclose(vt);
    H5Tclose(ct);

    ASSERT(H5Lmove(f, "ab", f, "ab2", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(check_attr_refs(f, after1) == 0);
    ASSERT(H5Lmove(f, "a", f, "a9", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(check_attr_refs(f, after2) == 0);
    ASSERT(H5Fclose(f) >= 0);

    ASSERT((f = H5Fopen(dir, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT(check_attr_refs(f, after2) == 0);
    ASSERT(H5Lmove(f, "b/a", f, "a", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(check_attr_refs(f, after3) == 0);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* A stored reference that doesn't match its type (a damaged store) names no object: H5Lmove of another
 * object still succeeds, as in HDF5, the good references beside it follow the move, the damaged one is
 * left as it is and reading the attribute still reports it. */
static int
test_move_past_a_damaged_reference(void)
{
    const char         *tmp = test_tmpdir("refs");
    char                dir[4096], doc[4200], *msg;
    hid_t               fapl = h5t_zarr_fapl(3), f, g, d, sp, at;
    hsize_t             two  = 2;
    H5R_ref_t           w[2];
    struct json_object *root, *packed;

    ASSERT(tmp && fapl >= 0);
    snprintf(dir, sizeof dir, "%s/damaged_ref.zarr", tmp);
    snprintf(doc, sizeof doc, "%s/zarr.json", dir);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Gclose(g);
    ASSERT((sp = H5Screate_simple(1, &two, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "a", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    ASSERT(H5Rcreate_object(f, "a", H5P_DEFAULT, &w[0]) >= 0 &&
           H5Rcreate_object(f, "g", H5P_DEFAULT, &w[1]) >= 0);
    ASSERT((at = H5Acreate2(f, "r", H5T_STD_REF, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(at, H5T_STD_REF, w) >= 0);
    H5Aclose(at);
    H5Sclose(sp);
    H5Rdestroy(&w[0]);
    H5Rdestroy(&w[1]);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(h5t_is_zarr_store(dir));
    /* the second element damaged: 3 bytes, too short for any reference */
    ASSERT((root = json_object_from_file(doc)));
    ASSERT((packed = json_object_object_get(
                json_object_object_get(
                    json_object_object_get(json_object_object_get(root, "_h5zarr"), "attrs"), "r"),
                "packed")));
    ASSERT_STR(json_object_get_string(json_object_array_get_idx(packed, 0)), "AgAAAAAAAAAvYQ=="); /* "/a" */
    json_object_array_put_idx(packed, 1, json_object_new_string("AQID"));
    ASSERT(json_object_to_file(doc, root) == 0);
    json_object_put(root);

    ASSERT((f = H5Fopen(dir, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT(H5Lmove(f, "a", f, "x", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((root = json_object_from_file(doc)));
    packed = json_object_object_get(
        json_object_object_get(json_object_object_get(json_object_object_get(root, "_h5zarr"), "attrs"), "r"),
        "packed");
    ASSERT(packed);
    ASSERT_STR(json_object_get_string(json_object_array_get_idx(packed, 0)), "AgAAAAAAAAAveA=="); /* "/x" */
    ASSERT_STR(json_object_get_string(json_object_array_get_idx(packed, 1)), "AQID");
    json_object_put(root);
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((at = H5Aopen(f, "r", H5P_DEFAULT)) >= 0);
    H5E_BEGIN_TRY { ASSERT(H5Aread(at, H5T_STD_REF, w) < 0); }
    H5E_END_TRY
    ASSERT((msg = h5t_error_text()));
    ASSERT(strstr(msg, "stored element 1 doesn't match its type") != NULL);
    free(msg);
    H5Aclose(at);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

int
main(int argc, char **argv)
{
    static const test_entry tests[] = {TEST_ENTRY(object_references_in_attributes_and_datasets),
                                       TEST_ENTRY(dimension_scales),
                                       TEST_ENTRY(references_past_index_growth),
                                       TEST_ENTRY(reference_compounds_written_as_is_and_converted),
                                       TEST_ENTRY(references_in_data_follow_moves),
                                       TEST_ENTRY(attribute_references_follow_moves),
                                       TEST_ENTRY(move_past_a_damaged_reference)};
    return RUN_TESTS(tests);
}
