/*
 * test_vol_interop.c: an HDF5 program writes zarr stores through the connector (H5Pset_fapl_zarr, v3
 * and v2) with many kinds of data: every integer width at its extremes, float32/64 with a NaN fill
 * value, the bool enum, fixed and variable-length strings, a compound (also one with big-endian members,
 * whose v2 chunk bytes are checked), chunked with overhanging edge
 * chunks, user fill values for elements never written, attributes of several kinds. Each test reads
 * the store back through HDF5 and checks the values; tests/scripts/vol_interop.sh runs it with
 * H5ZARR_INTEROP_OUT set (the stores stay there) and reads them with zarrita (v3) and zarr-python
 * 2.13 (v2).
 */
#include "runner.h"

#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>

#include "h5zarr/h5zarr.h"

#define N  7 /* 1-D datasets: 7 elements in chunks of 3 (the last chunk overhangs), 5 written */
#define NW 5

typedef struct rec {
    int32_t id;
    double  value;
    int16_t flag;
} rec;

static const char *
out_path(const char *name)
{
    static char p[4096];
    const char *dir = getenv("H5ZARR_INTEROP_OUT");
    if (!dir)
        dir = test_tmpdir("vol-interop");
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

/* A 1-D chunked dataset of `n` elements (chunks of 3), fill value `fill`, first NW elements written. */
static int
put_1d(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *fill, const void *data)
{
    hsize_t dims = N, chunk = 3, cnt = NW, start = 0;
    hid_t   sp = H5Screate_simple(1, &dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d, ms, fs;
    int     ok;
    H5Pset_chunk(dcpl, 1, &chunk);
    if (fill)
        H5Pset_fill_value(dcpl, mtype, fill);
    d  = H5Dcreate2(loc, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ms = H5Screate_simple(1, &cnt, NULL);
    fs = H5Scopy(sp);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &cnt, NULL);
    ok = d >= 0 && H5Dwrite(d, mtype, ms, fs, H5P_DEFAULT, data) >= 0;
    H5Sclose(ms);
    H5Sclose(fs);
    H5Sclose(sp);
    H5Pclose(dcpl);
    if (d >= 0)
        H5Dclose(d);
    return ok ? 0 : -1;
}

static int
put_attr(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims, const void *v)
{
    hid_t sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t a  = H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    int   ok = a >= 0 && H5Awrite(a, type, v) >= 0;
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(sp);
    return ok ? 0 : -1;
}

static hid_t
bool_type(void)
{
    hid_t  t = H5Tenum_create(H5T_NATIVE_INT8);
    int8_t v = 0;
    H5Tenum_insert(t, "FALSE", &v);
    v = 1;
    H5Tenum_insert(t, "TRUE", &v);
    return t;
}

/* records_be: record i, and its packed file type {id: I32BE at 0, value: F64BE at 4, flag: I16LE at 12} */
static rec
be_rec(int i)
{
    return (rec){1153 + i, 53.25 * (i + 1), (int16_t)(0x0102 * (i + 1))};
}

static hid_t
be_rec_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, 14);
    H5Tinsert(t, "id", 0, H5T_STD_I32BE);
    H5Tinsert(t, "value", 4, H5T_IEEE_F64BE);
    H5Tinsert(t, "flag", 12, H5T_STD_I16LE);
    return t;
}

/* v2: the chunk file records_be/0 (records 0-2, no compressor) holds each member in the byte order its
 * '>i4' / '>f8' / '<i2' field says, read straight from the file. */
static int
check_be_chunk(const char *path)
{
    char    p[4200], *za;
    uint8_t got[64], want[42];
    size_t  n;
    FILE   *fp;
    for (int i = 0; i < 3; i++) {
        rec      r  = be_rec(i);
        uint8_t *w  = want + 14 * i, b[8];
        uint32_t id = (uint32_t)r.id;
        uint16_t fl = (uint16_t)r.flag;
        uint64_t v;
        memcpy(&v, &r.value, 8);
        for (int k = 0; k < 4; k++)
            w[k] = (uint8_t)(id >> (8 * (3 - k)));
        for (int k = 0; k < 8; k++)
            b[k] = (uint8_t)(v >> (8 * (7 - k)));
        memcpy(w + 4, b, 8);
        w[12] = (uint8_t)fl;
        w[13] = (uint8_t)(fl >> 8);
    }
    ASSERT(want[0] == 0x00 && want[1] == 0x00 && want[2] == 0x04 && want[3] == 0x81); /* 1153 = 0x481 */
    snprintf(p, sizeof p, "%s/records_be/.zarray", path);
    ASSERT((fp = fopen(p, "rb")) != NULL);
    n = fread(p, 1, sizeof p - 1, fp);
    fclose(fp);
    p[n] = 0;
    ASSERT((za = strstr(p, "\"dtype\"")) != NULL);
    ASSERT(strstr(za, "\">i4\"") && strstr(za, "\">f8\"") && strstr(za, "\"<i2\""));
    ASSERT(strstr(p, "\"compressor\": null") && strstr(p, "\"filters\": null"));
    snprintf(p, sizeof p, "%s/records_be/0", path);
    ASSERT((fp = fopen(p, "rb")) != NULL);
    n = fread(got, 1, sizeof got, fp);
    fclose(fp);
    ASSERT_EQ_INT(n, 42);
    for (size_t k = 0; k < n; k++)
        if (got[k] != want[k]) {
            fprintf(stderr, "  records_be/0 byte %zu (record %zu, offset %zu) is %02x, expected %02x\n", k,
                    k / 14, k % 14, got[k], want[k]);
            return 1;
        }
    return 0;
}

static int
write_store(const char *path, int fmt)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f, g, t;
    ASSERT(H5Pset_fapl_zarr(fapl, fmt) >= 0);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    H5Pclose(fapl);

    /* integers: extremes, fill 42 for the two unwritten elements */
    {
        int8_t   i8[NW] = {INT8_MIN, -1, 0, 1, INT8_MAX}, f8 = 42;
        int16_t  i16[NW] = {INT16_MIN, -1, 0, 1, INT16_MAX}, f16 = 42;
        int32_t  i32[NW] = {INT32_MIN, -1, 0, 1, INT32_MAX}, f32 = 42;
        int64_t  i64[NW] = {INT64_MIN, -1, 0, 1, INT64_MAX}, f64 = 42;
        uint8_t  u8[NW] = {0, 1, 2, UINT8_MAX - 1, UINT8_MAX}, g8 = 42;
        uint16_t u16[NW] = {0, 1, 2, UINT16_MAX - 1, UINT16_MAX}, g16 = 42;
        uint32_t u32[NW] = {0, 1, 2, UINT32_MAX - 1, UINT32_MAX}, g32 = 42;
        uint64_t u64[NW] = {0, 1, 2, UINT64_MAX - 1, UINT64_MAX}, g64 = 42;
        ASSERT((g = H5Gcreate2(f, "ints", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(put_1d(g, "i8", H5T_STD_I8LE, H5T_NATIVE_INT8, &f8, i8) == 0);
        ASSERT(put_1d(g, "i16", H5T_STD_I16LE, H5T_NATIVE_INT16, &f16, i16) == 0);
        ASSERT(put_1d(g, "i32", H5T_STD_I32LE, H5T_NATIVE_INT32, &f32, i32) == 0);
        ASSERT(put_1d(g, "i64", H5T_STD_I64LE, H5T_NATIVE_INT64, &f64, i64) == 0);
        ASSERT(put_1d(g, "u8", H5T_STD_U8LE, H5T_NATIVE_UINT8, &g8, u8) == 0);
        ASSERT(put_1d(g, "u16", H5T_STD_U16LE, H5T_NATIVE_UINT16, &g16, u16) == 0);
        ASSERT(put_1d(g, "u32", H5T_STD_U32BE, H5T_NATIVE_UINT32, &g32, u32) == 0); /* big-endian */
        ASSERT(put_1d(g, "u64", H5T_STD_U64LE, H5T_NATIVE_UINT64, &g64, u64) == 0);
        H5Gclose(g);
    }
    /* floats: 2-D 5 x 3 in 2 x 2 chunks, NaN fill, the last row unwritten */
    {
        hsize_t dims[2] = {5, 3}, chunk[2] = {2, 2}, cnt[2] = {4, 3}, start[2] = {0, 0};
        float   fv[4][3], fnan = NAN;
        double  dv[4][3], dnan = NAN;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 3; j++) {
                fv[i][j] = (float)(i * 3 + j) + 0.5f;
                dv[i][j] = (i * 3 + j) * 0.25 - 1.0;
            }
        dv[0][1] = 1e300;
        dv[0][2] = -2.5e-300;
        hid_t sp = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), ms, d;
        H5Pset_chunk(dcpl, 2, chunk);
        ASSERT((g = H5Gcreate2(f, "floats", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ms = H5Screate_simple(2, cnt, NULL);
        H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, cnt, NULL);
        H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &fnan);
        ASSERT((d = H5Dcreate2(g, "f32", H5T_IEEE_F32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
        ASSERT(H5Dwrite(d, H5T_NATIVE_FLOAT, ms, sp, H5P_DEFAULT, fv) >= 0);
        {
            const char *units = "K";
            hid_t       st    = H5Tcopy(H5T_C_S1);
            double      sf    = 0.01;
            H5Tset_size(st, H5T_VARIABLE);
            H5Tset_cset(st, H5T_CSET_UTF8);
            ASSERT(put_attr(d, "units", st, 0, NULL, &units) == 0);
            ASSERT(put_attr(d, "scale_factor", H5T_NATIVE_DOUBLE, 0, NULL, &sf) == 0);
            H5Tclose(st);
        }
        H5Dclose(d);
        H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &dnan);
        ASSERT((d = H5Dcreate2(g, "f64", H5T_IEEE_F64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
        ASSERT(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, sp, H5P_DEFAULT, dv) >= 0);
        H5Dclose(d);
        H5Sclose(ms);
        H5Sclose(sp);
        H5Pclose(dcpl);
        H5Gclose(g);
    }
    /* bool enum, strings, compound */
    {
        int8_t b[NW] = {1, 0, 1, 1, 0}, bf = 0;
        t = bool_type();
        ASSERT(put_1d(f, "flags", t, t, &bf, b) == 0);
        H5Tclose(t);
    }
    {
        const char *vs[NW]    = {"alpha", "\xce\xb2-beta", "", "gamma delta", "end"};
        char        fs[NW][6] = {"ab", "cdef", "", "xyzuv", "q"};
        hid_t       vt = H5Tcopy(H5T_C_S1), ft = H5Tcopy(H5T_C_S1);
        H5Tset_size(vt, H5T_VARIABLE);
        H5Tset_cset(vt, H5T_CSET_UTF8);
        H5Tset_size(ft, 6);
        H5Tset_strpad(ft, H5T_STR_NULLPAD);
        ASSERT((g = H5Gcreate2(f, "strings", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(put_1d(g, "vlen", vt, vt, NULL, vs) == 0);
        ASSERT(put_1d(g, "fixed", ft, ft, NULL, fs) == 0);
        H5Tclose(vt);
        H5Tclose(ft);
        H5Gclose(g);
    }
    {
        rec   r[NW], rf = {-1, -1.5, -1};
        hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(rec)), fct;
        for (int i = 0; i < NW; i++)
            r[i] = (rec){i * 10, i + 0.125, (int16_t)(-i)};
        H5Tinsert(ct, "id", HOFFSET(rec, id), H5T_NATIVE_INT32);
        H5Tinsert(ct, "value", HOFFSET(rec, value), H5T_NATIVE_DOUBLE);
        H5Tinsert(ct, "flag", HOFFSET(rec, flag), H5T_NATIVE_INT16);
        fct = H5Tcopy(ct); /* padded like the C struct: the connector stores it packed */
        ASSERT(put_1d(f, "records", fct, ct, &rf, r) == 0);
        H5Tclose(fct);
        /* the same records in a packed file type with big-endian members (and one little-endian) */
        for (int i = 0; i < NW; i++)
            r[i] = be_rec(i);
        fct = be_rec_type();
        ASSERT(put_1d(f, "records_be", fct, ct, &rf, r) == 0);
        H5Tclose(fct);
        H5Tclose(ct);
    }
    /* attributes on the root group */
    {
        const char *title = "h5zarr interop";
        int64_t     big = INT64_MAX, m2[2][3] = {{1, 2, 3}, {4, 5, 6}};
        uint64_t    ubig  = UINT64_MAX;
        double      vr[2] = {-1.5, 2.25}, nan = NAN;
        int32_t     one      = 7;
        const char *names[3] = {"x", "y", "z"};
        int8_t      yes      = 1;
        hsize_t     d2 = 2, d3 = 3, dm[2] = {2, 3};
        hid_t       st = H5Tcopy(H5T_C_S1), fst = H5Tcopy(H5T_C_S1), bt = bool_type();
        H5Tset_size(st, H5T_VARIABLE);
        H5Tset_cset(st, H5T_CSET_UTF8);
        H5Tset_size(fst, strlen(title) + 1);
        ASSERT(put_attr(f, "title", fst, 0, NULL, title) == 0);
        ASSERT(put_attr(f, "count", H5T_NATIVE_INT32, 0, NULL, &one) == 0);
        ASSERT(put_attr(f, "big", H5T_NATIVE_INT64, 0, NULL, &big) == 0);
        ASSERT(put_attr(f, "ubig", H5T_NATIVE_UINT64, 0, NULL, &ubig) == 0);
        ASSERT(put_attr(f, "valid_range", H5T_NATIVE_DOUBLE, 1, &d2, vr) == 0);
        ASSERT(put_attr(f, "matrix", H5T_NATIVE_INT64, 2, dm, m2) == 0);
        ASSERT(put_attr(f, "missing", H5T_NATIVE_DOUBLE, 0, NULL, &nan) == 0);
        ASSERT(put_attr(f, "axes", st, 1, &d3, names) == 0);
        ASSERT(put_attr(f, "enabled", bt, 0, NULL, &yes) == 0);
        H5Tclose(st);
        H5Tclose(fst);
        H5Tclose(bt);
    }
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

/* Reads the store back through the connector and checks a sample of every kind. */
static int
check_store(const char *path, int fmt)
{
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f, d, a;
    struct stat st;
    char        probe[4200];
    snprintf(probe, sizeof probe, "%s/%s", path, fmt == 3 ? "zarr.json" : ".zgroup");
    ASSERT(stat(probe, &st) == 0); /* a zarr store of the asked format came out */
    ASSERT(H5Pset_fapl_zarr(fapl, 0) >= 0);
    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    H5Pclose(fapl);
    {
        int64_t  v[N];
        uint32_t u[N];
        ASSERT((d = H5Dopen2(f, "ints/i64", H5P_DEFAULT)) >= 0);
        ASSERT(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
        ASSERT(v[0] == INT64_MIN && v[4] == INT64_MAX && v[5] == 42 && v[6] == 42);
        H5Dclose(d);
        ASSERT((d = H5Dopen2(f, "ints/u32", H5P_DEFAULT)) >= 0);
        ASSERT(H5Dread(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, u) >= 0);
        ASSERT(u[4] == UINT32_MAX && u[3] == UINT32_MAX - 1 && u[6] == 42);
        hid_t t = H5Dget_type(d);
        ASSERT(H5Tget_order(t) == H5T_ORDER_BE);
        H5Tclose(t);
        H5Dclose(d);
    }
    {
        double v[5][3];
        ASSERT((d = H5Dopen2(f, "floats/f64", H5P_DEFAULT)) >= 0);
        ASSERT(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
        ASSERT(v[0][1] == 1e300 && v[3][2] == 11 * 0.25 - 1.0 && isnan(v[4][0]) && isnan(v[4][2]));
        H5Dclose(d);
    }
    {
        rec r[N];
        ASSERT((d = H5Dopen2(f, "records", H5P_DEFAULT)) >= 0);
        hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(rec));
        H5Tinsert(ct, "id", HOFFSET(rec, id), H5T_NATIVE_INT32);
        H5Tinsert(ct, "value", HOFFSET(rec, value), H5T_NATIVE_DOUBLE);
        H5Tinsert(ct, "flag", HOFFSET(rec, flag), H5T_NATIVE_INT16);
        ASSERT(H5Dread(d, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
        ASSERT(r[3].id == 30 && r[3].value == 3.125 && r[3].flag == -3);
        ASSERT(r[6].id == -1 && r[6].value == -1.5 && r[6].flag == -1);
        H5Dclose(d);
        if (fmt == 2) /* the stored bytes first: a wrong byte order shows there before in the values */
            ASSERT(check_be_chunk(path) == 0);
        ASSERT((d = H5Dopen2(f, "records_be", H5P_DEFAULT)) >= 0);
        memset(r, 0, sizeof r);
        ASSERT(H5Dread(d, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
        for (int i = 0; i < NW; i++) {
            rec w = be_rec(i);
            ASSERT(r[i].id == w.id && r[i].value == w.value && r[i].flag == w.flag);
        }
        ASSERT(r[6].id == -1 && r[6].value == -1.5 && r[6].flag == -1);
        hid_t ft = H5Dget_type(d), et = be_rec_type();
        ASSERT(H5Tequal(ft, et) > 0); /* the members keep their byte orders */
        H5Tclose(et);
        H5Tclose(ft);
        H5Tclose(ct);
        H5Dclose(d);
    }
    {
        char *s[N] = {0};
        hid_t vt   = H5Tcopy(H5T_C_S1);
        H5Tset_size(vt, H5T_VARIABLE);
        H5Tset_cset(vt, H5T_CSET_UTF8);
        ASSERT((d = H5Dopen2(f, "strings/vlen", H5P_DEFAULT)) >= 0);
        ASSERT(H5Dread(d, vt, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) >= 0);
        ASSERT_STR(s[1], "\xce\xb2-beta");
        ASSERT_STR(s[3], "gamma delta");
        for (int i = 0; i < N; i++)
            H5free_memory(s[i]);
        H5Tclose(vt);
        H5Dclose(d);
    }
    {
        int64_t big = 0;
        ASSERT((a = H5Aopen(f, "big", H5P_DEFAULT)) >= 0);
        ASSERT(H5Aread(a, H5T_NATIVE_INT64, &big) >= 0);
        ASSERT(big == INT64_MAX);
        H5Aclose(a);
    }
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

static int
test_write_v3(void)
{
    const char *p = out_path("v3.zarr");
    char        path[4096];
    snprintf(path, sizeof path, "%s", p);
    ASSERT(write_store(path, 3) == 0);
    return check_store(path, 3);
}

static int
test_write_v2(void)
{
    const char *p = out_path("v2.zarr");
    char        path[4096];
    snprintf(path, sizeof path, "%s", p);
    ASSERT(write_store(path, 2) == 0);
    return check_store(path, 2);
}

static const test_entry tests[] = {TEST_ENTRY(write_v3), TEST_ENTRY(write_v2)};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
