/*
 * test_external.c: external storage (H5Pset_external) through the connector (vol/external.c, docs/FORMAT.md
 * "External storage"). The same program runs natively (a plain HDF5 file) and through the connector (a
 * store), each in its own folder: the external files hold byte for byte what native HDF5 writes there
 * (several files with offsets and a header before the data kept, the dataset's big-endian file order, type
 * conversion on the way, a compound packed on disk, an extendible dataset whose last file is
 * H5F_UNLIMITED, H5Dset_extent); reads give the same values (bytes past a file's end are zeros, a missing
 * file fails, as natively); after reopening H5Pget_external_count/H5Pget_external, the layout, the storage
 * size and space status are native's; relative names follow H5Pset_efile_prefix ("${ORIGIN}") and
 * HDF5_EXTFILE_PREFIX, and H5Dget_access_plist reports the prefix as native does; what native HDF5 refuses
 * (chunked layout, too little storage, unlimited dims on finite storage, a second extendible dimension)
 * and what the connector can't carry (variable-length types, compact layout, stores at URLs) is refused
 * leaving nothing behind, and a device named as an external file is not read; a damaged list in
 * `_h5zarr.dcpl.external` is refused naming the field.
 */
#include "runner.h"

#include <hdf5.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5test.h"

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

/* "<dir>/<name>" in one of four rotating buffers. */
static const char *
in(const char *dir, const char *name)
{
    static char p[4][700];
    static int  k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static int
write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    int   ok;
    if (!f)
        return -1;
    ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Both files hold the same bytes (and exist). */
static int
same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char  *x = test_slurp(a, &na), *y = test_slurp(b, &nb);
    int    same = x && y && na == nb && !memcmp(x, y, na);
    if (!same)
        fprintf(stderr, "  %s (%zu bytes) and %s (%zu bytes) differ\n", a, na, b, nb);
    free(x);
    free(y);
    return same;
}

static const char HEADER[17] = "HEADER-16-BYTES!";

typedef struct mem_cpd {
    int    a;
    double b;
} mem_cpd;

/* The program: dataset d (big-endian int32, 10 elements, extendible, over a.raw from 16 for 20 bytes and
 * b.raw from 8 unlimited), f (big-endian float32 4x6 in c.raw from 100), c (a packed compound in e.raw);
 * partial writes, points, an extension, conversions. `file` is made with `fapl`; externals in `dir`. */
static int
prog_write(const char *file, hid_t fapl, const char *dir)
{
    hid_t   f, s, p, d, fs, ms, ct, mt;
    hsize_t dims[1] = {10}, maxd[1] = {H5S_UNLIMITED}, start[2], stride[2], count[2], n14[1] = {14};
    int     v[7], pv[2] = {109, 100};
    short   sv[4]  = {110, 111, 112, 113};
    hsize_t pts[2] = {9, 0};
    double  fv[6]  = {1.5, -2.25, 3e10, 0.125, -0.0, 7};
    mem_cpd cv[3]  = {{1, 0.5}, {-2, 1e100}, {3, -8}};

    ASSERT(write_file(in(dir, "a.raw"), HEADER, 16) == 0);
    ASSERT((f = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((s = H5Screate_simple(1, dims, maxd)) >= 0 && (p = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT(H5Pset_external(p, in(dir, "a.raw"), 16, 20) >= 0);
    ASSERT(H5Pset_external(p, in(dir, "b.raw"), 8, H5F_UNLIMITED) >= 0);
    ASSERT((d = H5Dcreate2(f, "d", H5T_STD_I32BE, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
    ASSERT(access(in(dir, "b.raw"), F_OK) != 0); /* nothing written at create */
    for (int i = 0; i < 7; i++)
        v[i] = 102 + i;
    start[0] = 2, count[0] = 7;
    ASSERT((fs = H5Scopy(s)) >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
    ASSERT((ms = H5Screate_simple(1, count, NULL)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, v) >= 0); /* across a.raw and b.raw */
    H5Sclose(ms);
    count[0] = 2;
    ASSERT(H5Sselect_elements(fs, H5S_SELECT_SET, 2, pts) >= 0 &&
           (ms = H5Screate_simple(1, count, NULL)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, pv) >= 0); /* points, out of order */
    H5Sclose(ms);
    H5Sclose(fs);
    ASSERT(H5Dset_extent(d, n14) >= 0);
    start[0] = 10, count[0] = 4;
    ASSERT((fs = H5Dget_space(d)) >= 0 &&
           H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
    ASSERT((ms = H5Screate_simple(1, count, NULL)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_SHORT, ms, fs, H5P_DEFAULT, sv) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    ASSERT(H5Dget_storage_size(d) == 40); /* as recorded at create */
    H5Dclose(d);
    H5Sclose(s);
    H5Pclose(p);

    /* f: a strided hyperslab of a 2-D float dataset, written from doubles */
    {
        hsize_t d2[2] = {4, 6};
        ASSERT((s = H5Screate_simple(2, d2, NULL)) >= 0 && (p = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
        ASSERT(H5Pset_external(p, in(dir, "c.raw"), 100, 96) >= 0);
        ASSERT((d = H5Dcreate2(f, "f", H5T_IEEE_F32BE, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
        start[0] = 0, start[1] = 1, stride[0] = stride[1] = 2, count[0] = 2, count[1] = 3;
        ASSERT(H5Sselect_hyperslab(s, H5S_SELECT_SET, start, stride, count, NULL) >= 0);
        ASSERT((ms = H5Screate_simple(2, count, NULL)) >= 0);
        ASSERT(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, s, H5P_DEFAULT, fv) >= 0);
        H5Sclose(ms);
        H5Dclose(d);
        H5Sclose(s);
        H5Pclose(p);
    }
    /* c: a compound packed on disk (12 bytes), written from the padded memory struct */
    ASSERT((ct = H5Tcreate(H5T_COMPOUND, 12)) >= 0 && H5Tinsert(ct, "a", 0, H5T_STD_I32LE) >= 0 &&
           H5Tinsert(ct, "b", 4, H5T_IEEE_F64LE) >= 0);
    ASSERT((mt = H5Tcreate(H5T_COMPOUND, sizeof(mem_cpd))) >= 0 &&
           H5Tinsert(mt, "a", HOFFSET(mem_cpd, a), H5T_NATIVE_INT) >= 0 &&
           H5Tinsert(mt, "b", HOFFSET(mem_cpd, b), H5T_NATIVE_DOUBLE) >= 0);
    dims[0] = 3;
    ASSERT((s = H5Screate_simple(1, dims, NULL)) >= 0 && (p = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT(H5Pset_external(p, in(dir, "e.raw"), 0, H5F_UNLIMITED) >= 0);
    /* native HDF5 reads the file for the conversion's background first, and fails when it does not exist */
    ASSERT(write_file(in(dir, "e.raw"), "", 0) == 0);
    ASSERT((d = H5Dcreate2(f, "c", ct, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, cv) >= 0);
    {
        mem_cpd back[3];
        memset(back, 0, sizeof back);
        ASSERT(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0);
        ASSERT(back[1].a == -2 && back[1].b == 1e100 && back[2].b == -8);
    }
    H5Dclose(d);
    H5Sclose(s);
    H5Pclose(p);
    H5Tclose(ct);
    H5Tclose(mt);
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

/* Reopened: the list, layout, sizes and values. */
static int
prog_read(const char *file, hid_t fapl, const char *dir)
{
    hid_t              f, d, p, s;
    long long          got[14];
    const long long    want[14] = {100, 0, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113};
    char               name[700];
    off_t              off = 0;
    hsize_t            sz  = 0, dims[1];
    H5D_space_status_t st  = H5D_SPACE_STATUS_ERROR;

    ASSERT((f = H5Fopen(file, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0 && (p = H5Dget_create_plist(d)) >= 0);
    ASSERT_EQ_INT(H5Pget_external_count(p), 2);
    ASSERT(H5Pget_external(p, 0, sizeof name, name, &off, &sz) >= 0);
    ASSERT_STR(name, in(dir, "a.raw"));
    ASSERT(off == 16 && sz == 20);
    ASSERT(H5Pget_external(p, 1, sizeof name, name, &off, &sz) >= 0);
    ASSERT_STR(name, in(dir, "b.raw"));
    ASSERT(off == 8 && sz == H5F_UNLIMITED);
    ASSERT_EQ_INT(H5Pget_layout(p), H5D_CONTIGUOUS);
    ASSERT_EQ_INT(H5Pget_nfilters(p), 0);
    ASSERT_EQ_INT(H5Dget_storage_size(d), 40);
    ASSERT(H5Dget_space_status(d, &st) >= 0 && st == H5D_SPACE_STATUS_ALLOCATED);
    ASSERT((s = H5Dget_space(d)) >= 0 && H5Sget_simple_extent_dims(s, dims, NULL) == 1 && dims[0] == 14);
    ASSERT(H5Dread(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    for (int i = 0; i < 14; i++)
        if (got[i] != want[i])
            FAILF("%s: d[%d] = %lld, expected %lld", file, i, got[i], want[i]);
    {
        /* an irregular selection: points in reverse */
        hsize_t pts[3] = {13, 4, 1}, three = 3;
        int     pv[3] = {0, 0, -1};
        hid_t   ms    = H5Screate_simple(1, &three, NULL);
        ASSERT(H5Sselect_elements(s, H5S_SELECT_SET, 3, pts) >= 0);
        ASSERT(H5Dread(d, H5T_NATIVE_INT, ms, s, H5P_DEFAULT, pv) >= 0);
        ASSERT(pv[0] == 113 && pv[1] == 104 && pv[2] == 0);
        H5Sclose(ms);
    }
    H5Sclose(s);
    H5Pclose(p);
    H5Dclose(d);
    {
        float   fv[4][6];
        hsize_t dummy = 0;
        (void)dummy;
        ASSERT((d = H5Dopen2(f, "f", H5P_DEFAULT)) >= 0);
        ASSERT(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, fv) >= 0);
        ASSERT(fv[0][1] == 1.5f && fv[0][3] == -2.25f && fv[2][1] == 0.125f && fv[2][5] == 7.0f &&
               fv[1][1] == 0.0f && fv[3][5] == 0.0f);
        ASSERT_EQ_INT(H5Dget_storage_size(d), 96);
        H5Dclose(d);
    }
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

/* The program natively and through the connector: the same external bytes, the same reads. */
static int
test_native_bytes(void)
{
    const char *tmp = test_tmpdir("external_bytes");
    char        nd[600], zd[600], nf[700], zf[700];
    hid_t       fapl = h5t_zarr_fapl(3);
    ASSERT(tmp && fapl >= 0);
    snprintf(nd, sizeof nd, "%s/native", tmp);
    snprintf(zd, sizeof zd, "%s/zarr", tmp);
    ASSERT(mkdir(nd, 0777) == 0 && mkdir(zd, 0777) == 0);
    snprintf(nf, sizeof nf, "%s/n.h5", nd);
    snprintf(zf, sizeof zf, "%s/z.zarr", zd);
    if (prog_write(nf, H5P_DEFAULT, nd) != 0 || prog_write(zf, fapl, zd) != 0)
        return 1;
    ASSERT(h5t_is_native_file(nf) && h5t_is_zarr_store(zf));
    ASSERT(same_file(in(nd, "a.raw"), in(zd, "a.raw")));
    ASSERT(same_file(in(nd, "b.raw"), in(zd, "b.raw")));
    ASSERT(same_file(in(nd, "c.raw"), in(zd, "c.raw")));
    ASSERT(same_file(in(nd, "e.raw"), in(zd, "e.raw")));
    {
        /* what native HDF5 wrote, spelled out: the header kept, big-endian elements, element 1 a hole */
        static const unsigned char a[36] = {'H', 'E', 'A', 'D', 'E', 'R', '-', '1', '6', '-', 'B', 'Y',
                                            'T', 'E', 'S', '!', 0,   0,   0,   100, 0,   0,   0,   0,
                                            0,   0,   0,   102, 0,   0,   0,   103, 0,   0,   0,   104};
        size_t                     n     = 0;
        char                      *x     = test_slurp(in(zd, "a.raw"), &n);
        ASSERT(x && n == 36 && !memcmp(x, a, 36));
        free(x);
        ASSERT((x = test_slurp(in(zd, "b.raw"), &n)));
        ASSERT(n == 8 + 9 * 4 && (unsigned char)x[8 + 3] == 105 && (unsigned char)x[8 + 8 * 4 + 3] == 113);
        free(x);
        ASSERT((x = test_slurp(in(zd, "e.raw"), &n)));
        ASSERT(n == 36 && x[12] == -2 && x[13] == -1); /* the packed compound: element 1's a at 12 */
        free(x);
    }
    /* no chunk in the store */
    ASSERT(!h5t_path_exists(zf, "d/c") && h5t_path_exists(zf, "d/zarr.json"));
    if (prog_read(nf, H5P_DEFAULT, nd) != 0 || prog_read(zf, fapl, zd) != 0)
        return 1;
    H5Pclose(fapl);
    return 0;
}

/* Relative names: the dapl's prefix ("${ORIGIN}": next to the file), H5Dget_access_plist's prefix, a reopen
 * without it failing as natively, HDF5_EXTFILE_PREFIX (the connector's side: native HDF5 reads it once). */
static int
prefix_prog(const char *file, hid_t fapl, const char *dir)
{
    hid_t   f, s, p, a, d, ap;
    hsize_t dims[1] = {6};
    int     v[6] = {1, 2, 3, 4, 5, 6}, back[6] = {0};
    char    pre[700] = "", want[700];

    ASSERT((f = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((s = H5Screate_simple(1, dims, NULL)) >= 0 && (p = H5Pcreate(H5P_DATASET_CREATE)) >= 0 &&
           (a = H5Pcreate(H5P_DATASET_ACCESS)) >= 0);
    ASSERT(H5Pset_external(p, "p.raw", 4, H5F_UNLIMITED) >= 0 && H5Pset_efile_prefix(a, "${ORIGIN}") >= 0);
    ASSERT((d = H5Dcreate2(f, "p", H5T_NATIVE_INT, s, H5P_DEFAULT, p, a)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    ASSERT((ap = H5Dget_access_plist(d)) >= 0 && H5Pget_efile_prefix(ap, pre, sizeof pre) > 0);
    snprintf(want, sizeof want, "%s/", dir);
    ASSERT_STR(pre, want);
    H5Pclose(ap);
    H5Dclose(d);
    ASSERT(access(in(dir, "p.raw"), F_OK) == 0);
    /* reopened without the prefix: p.raw is looked for in the working directory */
    H5E_BEGIN_TRY
    {
        ASSERT((d = H5Dopen2(f, "p", H5P_DEFAULT)) >= 0);
        ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0);
        H5Dclose(d);
    }
    H5E_END_TRY
    ASSERT(H5Pset_efile_prefix(a, dir) >= 0 && (d = H5Dopen2(f, "p", a)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0);
    ASSERT(back[0] == 1 && back[5] == 6);
    H5Dclose(d);
    H5Pclose(a);
    H5Pclose(p);
    H5Sclose(s);
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

static int
test_prefix(void)
{
    const char *tmp = test_tmpdir("external_prefix");
    char        nd[600], zd[600], sub[700];
    hid_t       fapl    = h5t_zarr_fapl(2), f, d;
    int         back[6] = {0};
    ASSERT(tmp && fapl >= 0);
    snprintf(nd, sizeof nd, "%s/native", tmp);
    snprintf(zd, sizeof zd, "%s/zarr", tmp);
    ASSERT(mkdir(nd, 0777) == 0 && mkdir(zd, 0777) == 0);
    if (prefix_prog(in(nd, "n.h5"), H5P_DEFAULT, nd) != 0 || prefix_prog(in(zd, "z.zarr"), fapl, zd) != 0)
        return 1;
    ASSERT(same_file(in(nd, "p.raw"), in(zd, "p.raw")));
    /* the environment's prefix wins over the dapl's */
    snprintf(sub, sizeof sub, "%s/env", zd);
    ASSERT(mkdir(sub, 0777) == 0 && rename(in(zd, "p.raw"), in(sub, "p.raw")) == 0);
    setenv("HDF5_EXTFILE_PREFIX", sub, 1);
    ASSERT((f = H5Fopen(in(zd, "z.zarr"), H5F_ACC_RDONLY, fapl)) >= 0 &&
           (d = H5Dopen2(f, "p", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0);
    unsetenv("HDF5_EXTFILE_PREFIX");
    ASSERT(back[0] == 1 && back[5] == 6);
    H5Dclose(d);
    H5Fclose(f);
    H5Pclose(fapl);
    return 0;
}

/* Unwritten parts: a file that does not exist can't be read; past a file's end is zeros, also with a
 * fill value (native HDF5 never writes fill values to external files). */
static int
unwritten_prog(const char *file, hid_t fapl, const char *dir, int *out)
{
    hid_t   f, s, p, d, fs, ms;
    hsize_t dims[1] = {8}, one = 1, three = 3;
    int     fill = -7, v = 33, r;
    ASSERT((f = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((s = H5Screate_simple(1, dims, NULL)) >= 0 && (p = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT(H5Pset_external(p, in(dir, "u.raw"), 0, H5F_UNLIMITED) >= 0);
    ASSERT(H5Pset_fill_value(p, H5T_NATIVE_INT, &fill) >= 0);
    ASSERT((d = H5Dcreate2(f, "u", H5T_STD_I32LE, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
    H5E_BEGIN_TRY { r = H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out); }
    H5E_END_TRY
    ASSERT(r < 0);
    ASSERT((fs = H5Scopy(s)) >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, &three, NULL, &one, NULL) >= 0);
    ASSERT((ms = H5Screate_simple(1, &one, NULL)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, &v) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    H5Pclose(p);
    H5Sclose(s);
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

static int
test_unwritten(void)
{
    const char *tmp = test_tmpdir("external_unwritten");
    char        nd[600], zd[600];
    int         a[8], b[8];
    hid_t       fapl = h5t_zarr_fapl(3);
    ASSERT(tmp && fapl >= 0);
    snprintf(nd, sizeof nd, "%s/native", tmp);
    snprintf(zd, sizeof zd, "%s/zarr", tmp);
    ASSERT(mkdir(nd, 0777) == 0 && mkdir(zd, 0777) == 0);
    memset(a, 0x55, sizeof a);
    memset(b, 0x55, sizeof b);
    if (unwritten_prog(in(nd, "n.h5"), H5P_DEFAULT, nd, a) != 0 ||
        unwritten_prog(in(zd, "z.zarr"), fapl, zd, b) != 0)
        return 1;
    for (int i = 0; i < 8; i++) {
        ASSERT_EQ_INT(a[i], i == 3 ? 33 : 0);
        ASSERT_EQ_INT(b[i], a[i]);
    }
    ASSERT(same_file(in(nd, "u.raw"), in(zd, "u.raw")));
    H5Pclose(fapl);
    return 0;
}

/* One H5Dcreate2 that must fail through the connector (and natively when `native_too`), with `needle` in the
 * connector's messages, leaving no dataset. */
static int
refuse(hid_t zf, hid_t nf, const char *name, hid_t type, hid_t space, hid_t dcpl, const char *needle)
{
    hid_t d;
    H5E_BEGIN_TRY { d = H5Dcreate2(zf, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT); }
    H5E_END_TRY
    if (d >= 0)
        FAILF("'%s' was created through the connector", name);
    if (!strstr(errors(), needle))
        FAILF("'%s': no '%s' in: %s", name, needle, errbuf);
    ASSERT(H5Lexists(zf, name, H5P_DEFAULT) == 0);
    if (nf >= 0) {
        H5E_BEGIN_TRY { d = H5Dcreate2(nf, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT); }
        H5E_END_TRY
        if (d >= 0)
            FAILF("'%s' was created natively", name);
    }
    return 0;
}

static int
test_refused(void)
{
    const char *tmp     = test_tmpdir("external_refused");
    hid_t       fapl    = h5t_zarr_fapl(3), zf, nf, p, s, s2, s3, vs;
    hsize_t     dims[1] = {10}, un[1] = {H5S_UNLIMITED}, d2[2] = {2, 3}, m2[2] = {2, 6}, ch[1] = {5};
    ASSERT(tmp && fapl >= 0);
    ASSERT((zf = H5Fcreate(in(tmp, "z.zarr"), H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((nf = H5Fcreate(in(tmp, "n.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((s = H5Screate_simple(1, dims, NULL)) >= 0 && (s2 = H5Screate_simple(1, dims, un)) >= 0 &&
           (s3 = H5Screate_simple(2, d2, m2)) >= 0);
    /* chunked layout */
    ASSERT((p = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_chunk(p, 1, ch) >= 0 &&
           H5Pset_external(p, in(tmp, "x.raw"), 0, H5F_UNLIMITED) >= 0);
    ASSERT(refuse(zf, nf, "chunked", H5T_NATIVE_INT, s, p, "needs the contiguous layout") == 0);
    H5Pclose(p);
    /* too small, finite storage for unlimited dims, a second extendible dimension */
    ASSERT((p = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_external(p, in(tmp, "x.raw"), 0, 39) >= 0);
    ASSERT(refuse(zf, nf, "small", H5T_NATIVE_INT, s, p, "exceeds the external storage size 39") == 0);
    ASSERT(refuse(zf, nf, "unlim", H5T_NATIVE_INT, s2, p,
                  "unlimited dataspace but finite external storage") == 0);
    H5Pclose(p);
    ASSERT((p = H5Pcreate(H5P_DATASET_CREATE)) >= 0 &&
           H5Pset_external(p, in(tmp, "x.raw"), 0, H5F_UNLIMITED) >= 0);
    ASSERT(refuse(zf, nf, "dim1", H5T_NATIVE_INT, s3, p, "only the first dimension can be extendible") == 0);
    /* what the connector can't carry: variable-length data (native writes heap addresses), compact layout
     * (native HDF5 1.14.5 crashes on it) */
    ASSERT((vs = H5Tcopy(H5T_C_S1)) >= 0 && H5Tset_size(vs, H5T_VARIABLE) >= 0);
    ASSERT(refuse(zf, -1, "vlen", vs, s, p, "variable-length parts or references") == 0);
    ASSERT(H5Pset_layout(p, H5D_COMPACT) >= 0);
    ASSERT(refuse(zf, -1, "compact", H5T_NATIVE_INT, s, p, "needs the contiguous layout, not compact") == 0);
    H5Pclose(p);
    ASSERT(access(in(tmp, "x.raw"), F_OK) != 0);
    {
        /* only regular files are read or written (native HDF5 would read a device or block on a FIFO) */
        hid_t  d;
        int    buf[10];
        herr_t r;
        ASSERT((p = H5Pcreate(H5P_DATASET_CREATE)) >= 0 &&
               H5Pset_external(p, "/dev/zero", 0, H5F_UNLIMITED) >= 0);
        ASSERT((d = H5Dcreate2(zf, "dev", H5T_NATIVE_INT, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
        H5E_BEGIN_TRY { r = H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf); }
        H5E_END_TRY
        ASSERT(r < 0);
        if (!strstr(errors(), "external file '/dev/zero' is not a regular file"))
            FAILF("no refusal of /dev/zero in: %s", errbuf);
        H5Dclose(d);
        H5Pclose(p);
    }
    ASSERT(H5Fclose(nf) >= 0);
    ASSERT(H5Fclose(zf) >= 0);
    /* a store that is not local */
    {
        hid_t mf;
        ASSERT((mf = H5Fcreate("memory://h5zarr-test-external", H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
        ASSERT((p = H5Pcreate(H5P_DATASET_CREATE)) >= 0 &&
               H5Pset_external(p, "m.raw", 0, H5F_UNLIMITED) >= 0);
        ASSERT(refuse(mf, -1, "url", H5T_NATIVE_INT, s, p, "is not a local store") == 0);
        H5Pclose(p);
        ASSERT(H5Fclose(mf) >= 0);
    }
    H5Tclose(vs);
    H5Sclose(s);
    H5Sclose(s2);
    H5Sclose(s3);
    H5Pclose(fapl);
    return 0;
}

/* A damaged list: `_h5zarr.dcpl.external` of x/zarr.json changed by `edit`, then H5Dopen2 fails naming it. */
typedef void (*edit_fn)(struct json_object *dcpl, struct json_object *ext);

static void
e_offset(struct json_object *dcpl, struct json_object *ext)
{
    (void)dcpl;
    json_object_object_add(json_object_array_get_idx(ext, 0), "offset", json_object_new_int64(-1));
}
static void
e_size(struct json_object *dcpl, struct json_object *ext)
{
    (void)dcpl;
    json_object_object_add(json_object_array_get_idx(ext, 1), "size", json_object_new_string("big"));
}
static void
e_name(struct json_object *dcpl, struct json_object *ext)
{
    (void)dcpl;
    json_object_object_add(json_object_array_get_idx(ext, 0), "name", json_object_new_string(""));
}
static void
e_unlim(struct json_object *dcpl, struct json_object *ext)
{
    (void)dcpl;
    json_object_object_add(json_object_array_get_idx(ext, 0), "size", json_object_new_int64(-1));
}
static void
e_small(struct json_object *dcpl, struct json_object *ext)
{
    (void)dcpl;
    json_object_array_del_idx(ext, 1, 1);
}
static void
e_key(struct json_object *dcpl, struct json_object *ext)
{
    (void)dcpl;
    json_object_object_add(json_object_array_get_idx(ext, 0), "mode", json_object_new_int64(1));
}
static void
e_type(struct json_object *dcpl, struct json_object *ext)
{
    (void)ext;
    json_object_object_add(dcpl, "external", json_object_new_string("a.raw"));
}
static void
e_layout(struct json_object *dcpl, struct json_object *ext)
{
    struct json_object *c = json_object_new_array();
    (void)ext;
    json_object_array_add(c, json_object_new_int64(5));
    json_object_object_add(dcpl, "layout", json_object_new_string("chunked"));
    json_object_object_add(dcpl, "chunk", c);
}

static int
test_damaged(void)
{
    static const struct {
        edit_fn     edit;
        const char *needle;
    } cases[] = {
        {e_offset, "_h5zarr.dcpl.external[0].offset: -1 is out of range"},
        {e_size, "_h5zarr.dcpl.external[1].size: must be an integer, not a string"},
        {e_name, "_h5zarr.dcpl.external[0].name: must not be empty"},
        {e_unlim, "_h5zarr.dcpl.external[1]: HDF5 refused it"},
        {e_small, "exceeds the external storage size 20"},
        {e_key, "_h5zarr.dcpl.external[0].mode: unknown key"},
        {e_type, "_h5zarr.dcpl.external: must be a list, not a string"},
        {e_layout, "_h5zarr.dcpl.external: given for a chunked layout"},
    };
    const char *tmp = test_tmpdir("external_damaged");
    char        store[700], doc[800];
    char       *orig;
    size_t      n       = 0;
    hid_t       fapl    = h5t_zarr_fapl(3), f, s, p, d;
    hsize_t     dims[1] = {10};
    ASSERT(tmp && fapl >= 0);
    snprintf(store, sizeof store, "%s/d.zarr", tmp);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((s = H5Screate_simple(1, dims, NULL)) >= 0 && (p = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT(H5Pset_external(p, "a.raw", 0, 20) >= 0 && H5Pset_external(p, "b.raw", 0, 20) >= 0);
    ASSERT((d = H5Dcreate2(f, "x", H5T_NATIVE_INT, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    H5Pclose(p);
    H5Sclose(s);
    ASSERT(H5Fclose(f) >= 0);
    snprintf(doc, sizeof doc, "%s/x/zarr.json", store);
    ASSERT((orig = test_slurp(doc, &n)));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct json_object *j = json_object_from_file(doc), *r, *dc, *ext;
        ASSERT(j && json_object_object_get_ex(j, "_h5zarr", &r) &&
               json_object_object_get_ex(r, "dcpl", &dc) && json_object_object_get_ex(dc, "external", &ext));
        cases[i].edit(dc, ext);
        ASSERT(json_object_to_file(doc, j) == 0);
        json_object_put(j);
        ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
        H5E_BEGIN_TRY { d = H5Dopen2(f, "x", H5P_DEFAULT); }
        H5E_END_TRY
        if (d >= 0)
            FAILF("case %zu: the damaged dataset opened", i);
        if (!strstr(errors(), cases[i].needle))
            FAILF("case %zu: no '%s' in: %s", i, cases[i].needle, errbuf);
        ASSERT(H5Fclose(f) >= 0);
        ASSERT(write_file(doc, orig, n) == 0);
    }
    /* the original opens */
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0 && (d = H5Dopen2(f, "x", H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    H5Fclose(f);
    free(orig);
    H5Pclose(fapl);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(native_bytes), TEST_ENTRY(prefix),  TEST_ENTRY(unwritten),
    TEST_ENTRY(refused),      TEST_ENTRY(damaged),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
