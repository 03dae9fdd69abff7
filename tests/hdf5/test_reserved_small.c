/*
 * test_reserved_small.c: the reserved object `_h5zarr` holds only what zarr metadata cannot say
 * (docs/FORMAT.md, "What is left out"). Plain chunked datasets an HDF5 program makes (floats and ints,
 * compressed or not, with or without a user fill value, a scalar with the default dcpl, a sharded one)
 * carry no `_h5zarr` in zarr v2 and at most {"fill_default": true} in v3, and still report exactly the
 * dcpl they were made with after a reopen; xarray (open_zarr) and zarr-python (Debian's /usr/bin/python3)
 * list no `_h5zarr` attribute on them. Datasets with non-default creation properties keep a dcpl record
 * of just those (no filters: the codecs say them) and report every property back.
 */
#include "runner.h"

#include <hdf5.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5test.h"

/* The `_h5zarr` object of array `name` of `store` (new reference; NULL when there is none): a top-level
 * key of its .zarray / zarr.json (v3: less its "must_understand": false, which must be there), never an
 * attribute (an `_h5zarr` attribute gives a JSON string "attribute", which no test expects). */
static struct json_object *
reserved_of(const char *store, const char *name, int version)
{
    char                p[1200];
    struct json_object *doc, *attrs = NULL, *m = NULL, *mu = NULL, *src;
    snprintf(p, sizeof p, "%s/%s/%s", store, name, version == 3 ? "zarr.json" : ".zarray");
    if (!(doc = json_object_from_file(p)))
        return NULL;
    if (json_object_object_get_ex(doc, "_h5zarr", &src)) {
        if (json_object_deep_copy(src, &m, NULL) != 0)
            m = NULL;
        else if (version == 3) {
            if (!json_object_object_get_ex(m, "must_understand", &mu) ||
                !json_object_is_type(mu, json_type_boolean) || json_object_get_boolean(mu)) {
                json_object_put(m);
                m = json_object_new_string("no \"must_understand\": false");
            }
            else
                json_object_object_del(m, "must_understand");
        }
    }
    else
        m = NULL;
    if (version == 3)
        json_object_object_get_ex(doc, "attributes", &attrs);
    else {
        json_object_put(doc);
        snprintf(p, sizeof p, "%s/%s/.zattrs", store, name);
        attrs = doc = json_object_from_file(p); /* NULL: no attributes */
    }
    if (attrs && json_object_object_get_ex(attrs, "_h5zarr", NULL)) {
        json_object_put(m);
        m = json_object_new_string("attribute");
    }
    json_object_put(doc);
    return m;
}

/* A chunked dataset `name` of `type`, dims/chunks of rank `rank`; `deflate` >= 0 adds deflate (with
 * shuffle when `shuffle`); `fill` (of `type`) is a user fill when non-NULL; written with `data`. */
static int
make_chunked(hid_t f, const char *name, hid_t type, int rank, const hsize_t *dims, const hsize_t *chunks,
             int deflate, int shuffle, const void *fill, const void *data)
{
    hid_t sp = H5Screate_simple(rank, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d;
    ASSERT(H5Pset_chunk(dcpl, rank, chunks) >= 0);
    if (shuffle)
        ASSERT(H5Pset_shuffle(dcpl) >= 0);
    if (deflate >= 0)
        ASSERT(H5Pset_deflate(dcpl, (unsigned)deflate) >= 0);
    if (fill)
        ASSERT(H5Pset_fill_value(dcpl, type, fill) >= 0);
    ASSERT((d = H5Dcreate2(f, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(sp);
    return 0;
}

static double fdata[20 * 30];
static int    idata[100];
static short  udata[16];

/* The plain datasets of both tests: f (float64, deflate 6), i (int32, shuffle + deflate 1, fill -1), u
 * (uint16, no filters), x (a scalar float32 with the default dcpl). */
static int
make_plain(const char *store, int version)
{
    hid_t   fapl  = h5t_zarr_fapl(version), f, sp, d;
    hsize_t fd[2] = {20, 30}, fc[2] = {5, 30}, id = 100, ic = 10, ud[2] = {4, 4}, uc[2] = {2, 2};
    int     ifill = -1;
    float   x     = 2.5f;
    for (int i = 0; i < 600; i++)
        fdata[i] = i * 0.5 - 7;
    for (int i = 0; i < 100; i++)
        idata[i] = i * i - 50;
    for (int i = 0; i < 16; i++)
        udata[i] = (short)(i * 1000);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(store));
    ASSERT(make_chunked(f, "f", H5T_IEEE_F64LE, 2, fd, fc, 6, 0, NULL, fdata) == 0);
    ASSERT(make_chunked(f, "i", H5T_STD_I32LE, 1, &id, &ic, 1, 1, &ifill, idata) == 0);
    ASSERT(make_chunked(f, "u", H5T_STD_U16LE, 2, ud, uc, -1, 0, NULL, udata) == 0);
    ASSERT((sp = H5Screate(H5S_SCALAR)) >= 0);
    ASSERT((d = H5Dcreate2(f, "x", H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &x) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* Dataset `name` reports chunk dims `chunk` (rank `rank`; 0: contiguous), `nfilt` filters whose first is
 * `filt0` with cd_values[0] == `cd0` (when >= 0), and fill status `fs_want` (value `fill` when user-defined,
 * read as int). */
static int
expect_dcpl(hid_t f, const char *name, int rank, const hsize_t *chunk, int nfilt, H5Z_filter_t filt0, int cd0,
            H5D_fill_value_t fs_want, int fill)
{
    hid_t            d, p;
    hsize_t          c[4] = {0};
    H5D_fill_value_t fs   = H5D_FILL_VALUE_ERROR;
    hbool_t          tt   = false;
    ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0 && (p = H5Dget_create_plist(d)) >= 0);
    if (rank == 0)
        ASSERT_EQ_INT(H5Pget_layout(p), H5D_CONTIGUOUS);
    else {
        ASSERT_EQ_INT(H5Pget_layout(p), H5D_CHUNKED);
        ASSERT_EQ_INT(H5Pget_chunk(p, 4, c), rank);
        for (int i = 0; i < rank; i++)
            ASSERT_EQ_INT((int)c[i], (int)chunk[i]);
    }
    ASSERT_EQ_INT(H5Pget_nfilters(p), nfilt);
    if (nfilt > 0) {
        unsigned fl, cd[8];
        size_t   nc = 8;
        ASSERT(H5Pget_filter2(p, 0, &fl, &nc, cd, 0, NULL, NULL) == filt0);
        if (cd0 >= 0)
            ASSERT(nc >= 1 && (int)cd[0] == cd0);
    }
    ASSERT(H5Pfill_value_defined(p, &fs) >= 0);
    ASSERT_EQ_INT(fs, fs_want);
    if (fs_want == H5D_FILL_VALUE_USER_DEFINED) {
        int v = 0;
        ASSERT(H5Pget_fill_value(p, H5T_NATIVE_INT, &v) >= 0);
        ASSERT_EQ_INT(v, fill);
    }
    ASSERT(H5Pget_obj_track_times(p, &tt) >= 0 && tt);
    H5Pclose(p);
    H5Dclose(d);
    return 0;
}

static int
expect_plain(const char *store, int version)
{
    hid_t   fapl  = h5t_zarr_fapl(version), f, d;
    hsize_t fc[2] = {5, 30}, ic = 10, uc[2] = {2, 2};
    double  fr[600];
    int     ir[100];
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(expect_dcpl(f, "f", 2, fc, 1, H5Z_FILTER_DEFLATE, 6, H5D_FILL_VALUE_DEFAULT, 0) == 0);
    ASSERT(expect_dcpl(f, "i", 1, &ic, 2, H5Z_FILTER_SHUFFLE, -1, H5D_FILL_VALUE_USER_DEFINED, -1) == 0);
    ASSERT(expect_dcpl(f, "u", 2, uc, 0, 0, -1, H5D_FILL_VALUE_DEFAULT, 0) == 0);
    ASSERT(expect_dcpl(f, "x", 0, NULL, 0, 0, -1, H5D_FILL_VALUE_DEFAULT, 0) == 0);
    ASSERT((d = H5Dopen2(f, "f", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, fr) >= 0 && H5Dclose(d) >= 0);
    ASSERT(!memcmp(fr, fdata, sizeof fr));
    ASSERT((d = H5Dopen2(f, "i", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ir) >= 0 && H5Dclose(d) >= 0);
    ASSERT(!memcmp(ir, idata, sizeof ir));
    {
        hid_t t;
        ASSERT((d = H5Dopen2(f, "u", H5P_DEFAULT)) >= 0 && (t = H5Dget_type(d)) >= 0);
        ASSERT(H5Tequal(t, H5T_STD_U16LE) > 0);
        H5Tclose(t);
        H5Dclose(d);
    }
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* xarray.open_zarr and zarr-python see no `_h5zarr` on the plain arrays of the v2 store, and read the
 * values. */
static int
python_sees_nothing(const char *store)
{
    char        py[1200], cmd[3000], buf[4096];
    const char *src =
        "import json, sys, zarr, xarray\n"
        "st = sys.argv[1]\n"
        "g = zarr.open_group(st, mode='r')\n"
        "ds = xarray.open_zarr(st, consolidated=False)\n"
        "out = {}\n"
        "for n in ('f', 'i', 'u', 'x'):\n"
        "    out[n] = {'zarr': sorted(g[n].attrs.keys()), 'xarray': sorted(ds[n].attrs.keys())}\n"
        "out['i0'] = int(ds['i'].values[3])\n"
        "out['f1'] = float(ds['f'].values[0, 1])\n"
        "print(json.dumps(out))\n";
    FILE               *fp, *p;
    size_t              len;
    struct json_object *j, *o, *l;
    if (access("/usr/bin/python3", X_OK) != 0 ||
        system("env -u HDF5_PLUGIN_PATH -u HDF5_VOL_CONNECTOR /usr/bin/python3 -c 'import zarr, xarray' "
               "2>/dev/null")) {
        printf("  skipped: zarr-python / xarray (Debian python3-zarr, python3-xarray) missing\n");
        return 0;
    }
    snprintf(py, sizeof py, "%s.py", store);
    ASSERT((fp = fopen(py, "w")) && fputs(src, fp) >= 0 && fclose(fp) == 0);
    snprintf(cmd, sizeof cmd, "env -u HDF5_PLUGIN_PATH -u HDF5_VOL_CONNECTOR /usr/bin/python3 '%s' '%s'", py,
             store);
    ASSERT((p = popen(cmd, "r")) != NULL);
    len      = fread(buf, 1, sizeof buf - 1, p);
    buf[len] = 0;
    ASSERT(pclose(p) == 0);
    ASSERT((j = json_tokener_parse(buf)) != NULL);
    for (int i = 0; i < 4; i++) {
        static const char *names[] = {"f", "i", "u", "x"};
        ASSERT(json_object_object_get_ex(j, names[i], &o));
        for (int k = 0; k < 2; k++) {
            ASSERT(json_object_object_get_ex(o, k ? "xarray" : "zarr", &l));
            for (size_t e = 0; e < json_object_array_length(l); e++)
                if (!strcmp(json_object_get_string(json_object_array_get_idx(l, e)), "_h5zarr"))
                    FAILF("%s lists _h5zarr on '%s': %s", k ? "xarray" : "zarr-python", names[i], buf);
        }
    }
    ASSERT(json_object_object_get_ex(j, "i0", &o) && json_object_get_int(o) == idata[3]);
    ASSERT(json_object_object_get_ex(j, "f1", &o) && json_object_get_double(o) == fdata[1]);
    json_object_put(j);
    return 0;
}

static int
test_plain_v2_no_reserved(void)
{
    const char *tmp = test_tmpdir("reserved_small_v2");
    char        store[600];
    ASSERT(tmp);
    snprintf(store, sizeof store, "%s/plain.zarr", tmp);
    ASSERT(make_plain(store, 2) == 0);
    for (int i = 0; i < 4; i++) {
        static const char  *names[] = {"f", "i", "u", "x"};
        struct json_object *m       = reserved_of(store, names[i], 2);
        if (m)
            FAILF("'%s' carries _h5zarr %s", names[i], json_object_to_json_string(m));
    }
    ASSERT(expect_plain(store, 2) == 0);
    return python_sees_nothing(store);
}

static int
test_plain_v3_smallest(void)
{
    const char *tmp = test_tmpdir("reserved_small_v3");
    char        store[600];
    ASSERT(tmp);
    snprintf(store, sizeof store, "%s/plain.zarr", tmp);
    ASSERT(make_plain(store, 3) == 0);
    /* v3 requires a fill_value: HDF5's default fill beside zarr's 0 is the one thing to say */
    for (int i = 0; i < 4; i++) {
        static const char  *names[] = {"f", "i", "u", "x"};
        struct json_object *m       = reserved_of(store, names[i], 3);
        const char         *want    = i == 1 ? NULL : "{\"fill_default\":true}";
        const char         *got     = m ? json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN) : NULL;
        if ((want == NULL) != (got == NULL) || (want && strcmp(want, got)))
            FAILF("'%s' carries _h5zarr %s, expected %s", names[i], got ? got : "none", want ? want : "none");
        json_object_put(m);
    }
    ASSERT(expect_plain(store, 3) == 0);
    {
        /* a sharded dataset: the HDF5 chunk is the inner chunk, also said by the zarr metadata */
        hid_t               fapl = h5t_zarr_fapl(3), f, sp, dcpl, d;
        hsize_t             dims = 64, c = 8, sh = 32;
        struct json_object *m;
        ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0);
        ASSERT((sp = H5Screate_simple(1, &dims, NULL)) >= 0 && (dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
        ASSERT(H5Pset_chunk(dcpl, 1, &c) >= 0 && H5Pset_deflate(dcpl, 3) >= 0 &&
               H5Pset_zarr_shard(dcpl, 1, &sh) >= 0);
        ASSERT((d = H5Dcreate2(f, "sh", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
        H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(sp);
        ASSERT(H5Fclose(f) >= 0);
        m = reserved_of(store, "sh", 3);
        ASSERT(m && !json_object_object_get_ex(m, "dcpl", NULL));
        json_object_put(m);
        ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
        ASSERT(expect_dcpl(f, "sh", 1, &c, 1, H5Z_FILTER_DEFLATE, 3, H5D_FILL_VALUE_DEFAULT, 0) == 0);
        ASSERT(H5Fclose(f) >= 0);
        H5Pclose(fapl);
    }
    return 0;
}

/* Non-default properties: each dataset keeps a dcpl record of what differs (never its filters), and
 * reports every property back after a reopen. */
static int
nondefault(int version)
{
    const char         *tmp = test_tmpdir(version == 3 ? "reserved_small_nd3" : "reserved_small_nd2");
    char                store[600];
    hid_t               fapl = h5t_zarr_fapl(version), f, sp, dcpl, d, p;
    hsize_t             n = 40, c = 8;
    int                 fv = 7, v;
    unsigned            crt, mc, md;
    hbool_t             tt;
    H5D_alloc_time_t    at;
    H5D_fill_time_t     ft;
    H5D_fill_value_t    fs;
    struct json_object *m, *dj, *x;
    ASSERT(tmp);
    snprintf(store, sizeof store, "%s/nd.zarr", tmp);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0 && h5t_is_zarr_store(store));
    ASSERT((sp = H5Screate_simple(1, &n, NULL)) >= 0);
    /* chunked with everything else changed */
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_chunk(dcpl, 1, &c) >= 0);
    ASSERT(H5Pset_deflate(dcpl, 2) >= 0 && H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fv) >= 0);
    ASSERT(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) >= 0 &&
           H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0);
    ASSERT(H5Pset_obj_track_times(dcpl, false) >= 0);
    ASSERT(H5Pset_attr_creation_order(dcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) >= 0);
    ASSERT(H5Pset_attr_phase_change(dcpl, 4, 2) >= 0);
    ASSERT((d = H5Dcreate2(f, "all", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0 &&
           H5Dclose(d) >= 0);
    H5Pclose(dcpl);
    /* one property alone: the record holds it (and the chunk) */
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_chunk(dcpl, 1, &c) >= 0);
    ASSERT(H5Pset_obj_track_times(dcpl, false) >= 0);
    ASSERT((d = H5Dcreate2(f, "tt", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0 &&
           H5Dclose(d) >= 0);
    H5Pclose(dcpl);
    /* contiguous and compact layouts: not what the zarr metadata says (chunked) */
    ASSERT((d = H5Dcreate2(f, "contig", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
           H5Dclose(d) >= 0);
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_layout(dcpl, H5D_COMPACT) >= 0);
    ASSERT((d = H5Dcreate2(f, "compact", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0 &&
           H5Dclose(d) >= 0);
    H5Pclose(dcpl);
    H5Sclose(sp);
    ASSERT(H5Fclose(f) >= 0);

    /* the records */
    ASSERT((m = reserved_of(store, "all", version)) && json_object_object_get_ex(m, "dcpl", &dj));
    ASSERT(!json_object_object_get_ex(dj, "filters", NULL));
    ASSERT(json_object_object_get_ex(dj, "chunk", NULL) && json_object_object_get_ex(dj, "fill_value", &x) &&
           json_object_get_int(x) == 7);
    ASSERT(json_object_object_get_ex(dj, "alloc_time", NULL) &&
           json_object_object_get_ex(dj, "fill_time", NULL));
    ASSERT(json_object_object_get_ex(dj, "attr_creation_order", NULL) &&
           json_object_object_get_ex(dj, "attr_phase_change", NULL));
    json_object_put(m);
    ASSERT((m = reserved_of(store, "tt", version)) && json_object_object_get_ex(m, "dcpl", &dj));
    ASSERT_STR(json_object_to_json_string_ext(dj, JSON_C_TO_STRING_PLAIN),
               "{\"layout\":\"chunked\",\"chunk\":[8],\"track_times\":false}");
    json_object_put(m);
    ASSERT((m = reserved_of(store, "contig", version)) && json_object_object_get_ex(m, "dcpl", &dj));
    ASSERT_STR(json_object_to_json_string_ext(dj, JSON_C_TO_STRING_PLAIN), "{}");
    json_object_put(m);

    /* read back */
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "all", H5P_DEFAULT)) >= 0 && (p = H5Dget_create_plist(d)) >= 0);
    ASSERT_EQ_INT(H5Pget_layout(p), H5D_CHUNKED);
    ASSERT(H5Pget_chunk(p, 1, &n) == 1 && n == 8);
    {
        unsigned fl, cd[4];
        size_t   nc = 4;
        ASSERT(H5Pget_nfilters(p) == 1 &&
               H5Pget_filter2(p, 0, &fl, &nc, cd, 0, NULL, NULL) == H5Z_FILTER_DEFLATE && cd[0] == 2);
    }
    ASSERT(H5Pfill_value_defined(p, &fs) >= 0 && fs == H5D_FILL_VALUE_USER_DEFINED);
    ASSERT(H5Pget_fill_value(p, H5T_NATIVE_INT, &v) >= 0 && v == 7);
    ASSERT(H5Pget_alloc_time(p, &at) >= 0 && at == H5D_ALLOC_TIME_EARLY);
    ASSERT(H5Pget_fill_time(p, &ft) >= 0 && ft == H5D_FILL_TIME_NEVER);
    ASSERT(H5Pget_obj_track_times(p, &tt) >= 0 && !tt);
    ASSERT(H5Pget_attr_creation_order(p, &crt) >= 0 &&
           crt == (H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED));
    ASSERT(H5Pget_attr_phase_change(p, &mc, &md) >= 0 && mc == 4 && md == 2);
    H5Pclose(p);
    H5Dclose(d);
    ASSERT((d = H5Dopen2(f, "tt", H5P_DEFAULT)) >= 0 && (p = H5Dget_create_plist(d)) >= 0);
    ASSERT(H5Pget_obj_track_times(p, &tt) >= 0 && !tt && H5Pget_chunk(p, 1, &n) == 1 && n == 8);
    H5Pclose(p);
    H5Dclose(d);
    ASSERT((d = H5Dopen2(f, "contig", H5P_DEFAULT)) >= 0 && (p = H5Dget_create_plist(d)) >= 0);
    ASSERT_EQ_INT(H5Pget_layout(p), H5D_CONTIGUOUS);
    H5Pclose(p);
    H5Dclose(d);
    ASSERT((d = H5Dopen2(f, "compact", H5P_DEFAULT)) >= 0 && (p = H5Dget_create_plist(d)) >= 0);
    ASSERT_EQ_INT(H5Pget_layout(p), H5D_COMPACT);
    H5Pclose(p);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_nondefault_roundtrip_v3(void)
{
    return nondefault(3);
}

static int
test_nondefault_roundtrip_v2(void)
{
    return nondefault(2);
}

/* Chunked datasets made in a row from one dcpl changed between them (the connector keeps the JSON of the
 * last chunk shape's inferred list, vol/plist_json.c h5zv_dcpl_chunked_json): each is judged against its
 * own shape. Plain ones record no dcpl; the one with track_times off after a plain one of its shape, and
 * a 2-d one whose shape differs only in its rank, record exactly theirs; every chunk reads back. */
static int
test_chunk_shapes_in_a_row(void)
{
    const char *tmp = test_tmpdir("reserved_small_rows");
    char        store[600];
    hid_t       fapl  = h5t_zarr_fapl(3), f, dcpl, d, p;
    hsize_t     n2[2] = {16, 16}, n1 = 16;
    static const struct {
        const char *name;
        int         rank;
        hsize_t     c[2];
        bool        tt_off;
        const char *record; /* the dcpl recorded, or NULL */
    } rows[] = {
        {"a8", 1, {8, 0}, false, NULL},
        {"b4", 1, {4, 0}, false, NULL},
        {"c8", 1, {8, 0}, false, NULL},
        {"d8tt", 1, {8, 0}, true, "{\"layout\":\"chunked\",\"chunk\":[8],\"track_times\":false}"},
        {"e8", 1, {8, 0}, false, NULL},
        {"f8x4", 2, {8, 4}, false, NULL},
        {"g8x8", 2, {8, 8}, false, NULL},
        {"h4x8tt", 2, {4, 8}, true, "{\"layout\":\"chunked\",\"chunk\":[4,8],\"track_times\":false}"},
        {"i4", 1, {4, 0}, false, NULL},
    };
    ASSERT(tmp);
    snprintf(store, sizeof store, "%s/rows.zarr", tmp);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0 && h5t_is_zarr_store(store));
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        hid_t sp = H5Screate_simple(rows[i].rank, rows[i].rank == 1 ? &n1 : n2, NULL);
        ASSERT(sp >= 0 && H5Pset_chunk(dcpl, rows[i].rank, rows[i].c) >= 0);
        ASSERT(H5Pset_obj_track_times(dcpl, !rows[i].tt_off) >= 0);
        ASSERT((d = H5Dcreate2(f, rows[i].name, H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
        H5Dclose(d);
        H5Sclose(sp);
    }
    H5Pclose(dcpl);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct json_object *m = reserved_of(store, rows[i].name, 3), *dj = NULL;
        const char         *got;
        hsize_t             c[2] = {0, 0};
        hbool_t             tt   = true;
        ASSERT(m);
        got = json_object_object_get_ex(m, "dcpl", &dj)
                  ? json_object_to_json_string_ext(dj, JSON_C_TO_STRING_PLAIN)
                  : NULL;
        if ((rows[i].record == NULL) != (got == NULL) || (got && strcmp(got, rows[i].record)))
            FAILF("'%s' records dcpl %s, expected %s", rows[i].name, got ? got : "none",
                  rows[i].record ? rows[i].record : "none");
        json_object_put(m);
        ASSERT((d = H5Dopen2(f, rows[i].name, H5P_DEFAULT)) >= 0 && (p = H5Dget_create_plist(d)) >= 0);
        ASSERT_EQ_INT(H5Pget_chunk(p, 2, c), rows[i].rank);
        ASSERT(c[0] == rows[i].c[0] && c[1] == rows[i].c[1]);
        ASSERT(H5Pget_obj_track_times(p, &tt) >= 0 && tt == !rows[i].tt_off);
        H5Pclose(p);
        H5Dclose(d);
    }
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static const test_entry tests[] = {TEST_ENTRY(plain_v2_no_reserved), TEST_ENTRY(plain_v3_smallest),
                                   TEST_ENTRY(nondefault_roundtrip_v3), TEST_ENTRY(nondefault_roundtrip_v2),
                                   TEST_ENTRY(chunk_shapes_in_a_row)};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
