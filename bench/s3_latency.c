/*
 * s3_latency: the HDF5 programs of issue 29's latency rows, run through the connector on an s3:// store
 * (HDF5_VOL_CONNECTOR="zarr consolidated=1" and the AWS_* environment set by bench/s3_latency.py, which
 * puts tools/latency_proxy.py between the store and s3rver and counts the round trips of each phase).
 *
 *   s3_latency cf-write|cf-read|cf-readm|cf-writem|cf-read+1|w4-create|w4-visit|w2-write|w2-read URL
 *              [NVAR]
 *
 * cf-write: 100 CF-like variables, each float32 (4, 45, 90) in 4 chunks of (1, 45, 90), deflate level 1,
 * 6 string attributes, one H5Dwrite each, from H5Fcreate to H5Fclose. cf-read: H5Fopen, then H5Dopen +
 * H5Dread of every variable (checked against what cf-write wrote), H5Fclose. cf-readm: the same with one
 * H5Dread_multi of every variable; cf-writem: one H5Dwrite_multi of every variable (cf-write's values
 * plus 1, which cf-read+1 checks). w4-create / w4-visit: the
 * suite's W4 (100 groups x 10 int32 datasets of 10 x 10 int attributes; created, then opened and
 * visited with every attribute read). w2-write / w2-read: the suite's W2 shape (8192 x 8192 float32 in
 * 1 MiB chunks of 512 x 512, uncompressed) in one H5Dwrite / one H5Dread (checked). NVAR (default 100)
 * changes the number of cf variables (smaller in tests/scripts/latency_proxy.sh). Prints "T\t<seconds>" (the
 * time of the whole phase).
 */
#define _POSIX_C_SOURCE 200809L
#include "hdf5.h"

#include "w4.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NT 4
#define NY 45
#define NX 90

static int   nvar = 100;
static float bump; /* what cf-read expects on top of cf-write's values (cf-read+1: 1) */

#define CHECK(c, what)                                                                                       \
    do {                                                                                                     \
        if (!(c)) {                                                                                          \
            fprintf(stderr, "s3_latency: %s failed\n", what);                                                \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static float
value(int v, size_t i)
{
    return (float)v * 1000.0f + (float)(i % 997) * 0.25f;
}

static void
string_attr(hid_t obj, const char *name, const char *text)
{
    hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a;
    CHECK(t >= 0 && H5Tset_size(t, strlen(text)) >= 0, "string type");
    a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(a >= 0 && H5Awrite(a, t, text) >= 0, "string attribute");
    H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
}

static void
cf_write(const char *url, float *buf)
{
    hsize_t dims[3] = {NT, NY, NX}, chunk[3] = {1, NY, NX};
    hid_t   f = H5Fcreate(url, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), sp, dcpl;
    CHECK(f >= 0, "H5Fcreate");
    sp   = H5Screate_simple(3, dims, NULL);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(H5Pset_chunk(dcpl, 3, chunk) >= 0 && H5Pset_deflate(dcpl, 1) >= 0, "dcpl");
    for (int v = 0; v < nvar; v++) {
        char  name[32], text[64];
        hid_t d;
        snprintf(name, sizeof name, "var%03d", v);
        d = H5Dcreate2(f, name, H5T_IEEE_F32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        CHECK(d >= 0, "H5Dcreate2");
        snprintf(text, sizeof text, "variable number %d", v);
        string_attr(d, "long_name", text);
        snprintf(text, sizeof text, "var_%03d", v);
        string_attr(d, "standard_name", text);
        string_attr(d, "units", "K");
        string_attr(d, "cell_methods", "time: mean");
        string_attr(d, "coordinates", "time lat lon");
        string_attr(d, "grid_mapping", "crs");
        for (size_t i = 0; i < (size_t)NT * NY * NX; i++)
            buf[i] = value(v, i);
        CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "H5Dwrite");
        H5Dclose(d);
    }
    H5Pclose(dcpl);
    H5Sclose(sp);
    CHECK(H5Fclose(f) >= 0, "H5Fclose");
}

static void
cf_read(const char *url, float *buf)
{
    hid_t f = H5Fopen(url, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0, "H5Fopen");
    for (int v = 0; v < nvar; v++) {
        char  name[32];
        hid_t d;
        snprintf(name, sizeof name, "var%03d", v);
        d = H5Dopen2(f, name, H5P_DEFAULT);
        CHECK(d >= 0, "H5Dopen2");
        memset(buf, 0, sizeof(float) * NT * NY * NX);
        CHECK(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "H5Dread");
        for (size_t i = 0; i < (size_t)NT * NY * NX; i++)
            if (buf[i] != value(v, i) + bump) {
                fprintf(stderr, "s3_latency: %s[%zu] reads %g\n", name, i, (double)buf[i]);
                exit(1);
            }
        H5Dclose(d);
    }
    CHECK(H5Fclose(f) >= 0, "H5Fclose");
}

/* W2: 8192 x 8192 float32 (256 MiB) in 512 x 512 chunks (1 MiB), uncompressed, one H5Dwrite / H5Dread
 * of the whole (the read checked against the write). */
#define W2_N 8192
#define W2_C 512

static float
w2_value(size_t i)
{
    return (float)(i % 65521) * 0.5f;
}

static void
w2(const char *url, bool write)
{
    hsize_t dims[2] = {W2_N, W2_N}, chunk[2] = {W2_C, W2_C};
    size_t  n   = (size_t)W2_N * W2_N;
    float  *big = malloc(n * sizeof *big);
    hid_t   f, d;
    CHECK(big, "W2 buffer");
    if (write) {
        hid_t sp = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
        for (size_t i = 0; i < n; i++)
            big[i] = w2_value(i);
        CHECK((f = H5Fcreate(url, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0, "H5Fcreate");
        CHECK(H5Pset_chunk(dcpl, 2, chunk) >= 0, "dcpl");
        CHECK((d = H5Dcreate2(f, "w2", H5T_IEEE_F32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0,
              "H5Dcreate2");
        CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, big) >= 0, "H5Dwrite");
        H5Pclose(dcpl);
        H5Sclose(sp);
    }
    else {
        CHECK((f = H5Fopen(url, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0, "H5Fopen");
        CHECK((d = H5Dopen2(f, "w2", H5P_DEFAULT)) >= 0, "H5Dopen2");
        CHECK(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, big) >= 0, "H5Dread");
        for (size_t i = 0; i < n; i += 4099)
            CHECK(big[i] == w2_value(i), "W2's values read back");
    }
    H5Dclose(d);
    CHECK(H5Fclose(f) >= 0, "H5Fclose");
    free(big);
}

/* cf-readm: H5Fopen, H5Dopen of every variable, one H5Dread_multi of them all (checked), H5Fclose. */
static void
cf_read_multi(const char *url, float *buf)
{
    hid_t  f = H5Fopen(url, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t *d = calloc((size_t)nvar, sizeof *d), *mt = calloc((size_t)nvar, sizeof *mt),
          *sp  = calloc((size_t)nvar, sizeof *sp);
    void **b   = calloc((size_t)nvar, sizeof *b);
    float *all = calloc((size_t)nvar * NT * NY * NX, sizeof *all);
    (void)buf;
    CHECK(f >= 0 && d && mt && sp && b && all, "H5Fopen");
    for (int v = 0; v < nvar; v++) {
        char name[32];
        snprintf(name, sizeof name, "var%03d", v);
        CHECK((d[v] = H5Dopen2(f, name, H5P_DEFAULT)) >= 0, "H5Dopen2");
        mt[v] = H5T_NATIVE_FLOAT;
        sp[v] = H5S_ALL;
        b[v]  = all + (size_t)v * NT * NY * NX;
    }
    CHECK(H5Dread_multi((size_t)nvar, d, mt, sp, sp, H5P_DEFAULT, b) >= 0, "H5Dread_multi");
    for (int v = 0; v < nvar; v++) {
        for (size_t i = 0; i < (size_t)NT * NY * NX; i++)
            if (((float *)b[v])[i] != value(v, i)) {
                fprintf(stderr, "s3_latency: var%03d[%zu] reads %g\n", v, i, (double)((float *)b[v])[i]);
                exit(1);
            }
        H5Dclose(d[v]);
    }
    CHECK(H5Fclose(f) >= 0, "H5Fclose");
    free(all), free(b), free(sp), free(mt), free(d);
}

/* cf-writem: H5Fopen read-write, one H5Dwrite_multi of every variable (cf-write's values plus 1, which
 * cf-read+1 checks), H5Fclose. */
static void
cf_write_multi(const char *url)
{
    hid_t  f = H5Fopen(url, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t *d = calloc((size_t)nvar, sizeof *d), *mt = calloc((size_t)nvar, sizeof *mt),
          *sp        = calloc((size_t)nvar, sizeof *sp);
    const void **b   = calloc((size_t)nvar, sizeof *b);
    float       *all = calloc((size_t)nvar * NT * NY * NX, sizeof *all);
    CHECK(f >= 0 && d && mt && sp && b && all, "H5Fopen");
    for (int v = 0; v < nvar; v++) {
        char name[32];
        snprintf(name, sizeof name, "var%03d", v);
        CHECK((d[v] = H5Dopen2(f, name, H5P_DEFAULT)) >= 0, "H5Dopen2");
        mt[v] = H5T_NATIVE_FLOAT;
        sp[v] = H5S_ALL;
        for (size_t i = 0; i < (size_t)NT * NY * NX; i++)
            all[(size_t)v * NT * NY * NX + i] = value(v, i) + 1.0f;
        b[v] = all + (size_t)v * NT * NY * NX;
    }
    CHECK(H5Dwrite_multi((size_t)nvar, d, mt, sp, sp, H5P_DEFAULT, b) >= 0, "H5Dwrite_multi");
    for (int v = 0; v < nvar; v++)
        H5Dclose(d[v]);
    CHECK(H5Fclose(f) >= 0, "H5Fclose");
    free(all), free(b), free(sp), free(mt), free(d);
}

static void
w4_create(const char *url)
{
    hid_t       f = H5Fcreate(url, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const char *err;
    CHECK(f >= 0, "H5Fcreate");
    err = w4_populate(f);
    CHECK(!err, err ? err : "w4");
    CHECK(H5Fclose(f) >= 0, "H5Fclose");
}

static void
w4_visit(const char *url)
{
    visit_acc acc = {0, 0};
    hid_t     f   = H5Fopen(url, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0, "H5Fopen");
    CHECK(H5Ovisit3(f, H5_INDEX_NAME, H5_ITER_NATIVE, visit_cb, &acc, H5O_INFO_BASIC) >= 0, "H5Ovisit3");
    CHECK(H5Fclose(f) >= 0, "H5Fclose");
    CHECK(acc.objects == 1 + 100 + 1000 && acc.attrs == 10000, "the visit's counts");
}

int
main(int argc, char **argv)
{
    float *buf = malloc(sizeof(float) * NT * NY * NX);
    double t0;

    if (argc < 3 || argc > 4 || !buf || (argc == 4 && (nvar = atoi(argv[3])) < 1)) {
        fprintf(stderr,
                "usage: s3_latency cf-write|cf-read|cf-readm|cf-writem|cf-read+1|w4-create|w4-visit|w2-write|"
                "w2-read URL [NVAR]\n");
        return 2;
    }
    t0 = now();
    if (!strcmp(argv[1], "cf-write"))
        cf_write(argv[2], buf);
    else if (!strcmp(argv[1], "cf-read"))
        cf_read(argv[2], buf);
    else if (!strcmp(argv[1], "cf-read+1")) { /* after cf-writem */
        bump = 1.0f;
        cf_read(argv[2], buf);
    }
    else if (!strcmp(argv[1], "cf-readm"))
        cf_read_multi(argv[2], buf);
    else if (!strcmp(argv[1], "cf-writem"))
        cf_write_multi(argv[2]);
    else if (!strcmp(argv[1], "w4-create"))
        w4_create(argv[2]);
    else if (!strcmp(argv[1], "w4-visit"))
        w4_visit(argv[2]);
    else if (!strcmp(argv[1], "w2-write") || !strcmp(argv[1], "w2-read"))
        w2(argv[2], !strcmp(argv[1], "w2-write"));
    else {
        fprintf(stderr, "s3_latency: unknown phase '%s'\n", argv[1]);
        return 2;
    }
    printf("T\t%.6f\n", now() - t0);
    free(buf);
    return 0;
}
