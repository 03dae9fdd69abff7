/*
 * behind_fault: a pipelined write through the connector for tests/scripts/s3_behind.sh (run with
 * HDF5_VOL_CONNECTOR=zarr and an S3 endpoint, usually a faulty proxy, in the environment). H5Fcreate of
 * URL, then NVAR datasets var000.. of float32 (4, 45, 90) in 4 uncompressed chunks of (1, 45, 90), one
 * attribute and one H5Dwrite each (value v * 1000 + i), then H5Fclose, timed. Prints to stdout one line
 * per failed H5Dwrite ("write varNNN: failed") and "close: ok" or "close: failed", then "close_s: S"
 * (seconds H5Fclose took); HDF5's error stack of each failure goes to stderr. Exits 0 when it got that
 * far (the script judges), 1 when H5Fcreate failed. A failed H5Fclose leaves the file id open: the
 * program ends with _exit so that the library's shutdown does not try the close again.
 *
 * With "meta" after NVAR the datasets get no H5Dwrite (documents only, all written at the close).
 *
 *   behind_fault URL NVAR [meta]
 */
#define _POSIX_C_SOURCE 200809L
#include <hdf5.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NT 4
#define NY 45
#define NX 90

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
    hsize_t dims[3] = {NT, NY, NX}, chunk[3] = {1, NY, NX};
    float  *buf = malloc(sizeof(float) * NT * NY * NX);
    int     nvar;
    hid_t   f, sp, dcpl, asp;
    double  t0;
    herr_t  rc;

    if (argc < 3 || argc > 4 || (nvar = atoi(argv[2])) < 1 || !buf) {
        fprintf(stderr, "usage: behind_fault URL NVAR [meta]\n");
        return 2;
    }
    if ((f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0) {
        H5Eprint2(H5E_DEFAULT, stderr);
        return 1;
    }
    sp   = H5Screate_simple(3, dims, NULL);
    asp  = H5Screate(H5S_SCALAR);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 3, chunk);
    for (int v = 0; v < nvar; v++) {
        char  name[32];
        hid_t d, a;
        snprintf(name, sizeof name, "var%03d", v);
        if ((d = H5Dcreate2(f, name, H5T_IEEE_F32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0) {
            printf("create %s: failed\n", name);
            H5Eprint2(H5E_DEFAULT, stderr);
            continue;
        }
        if ((a = H5Acreate2(d, "index", H5T_STD_I32LE, asp, H5P_DEFAULT, H5P_DEFAULT)) >= 0) {
            H5Awrite(a, H5T_NATIVE_INT, &v);
            H5Aclose(a);
        }
        if (argc == 4) {
            H5Dclose(d);
            continue;
        }
        for (size_t i = 0; i < (size_t)NT * NY * NX; i++)
            buf[i] = (float)v * 1000.0f + (float)(i % 997);
        if (H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
            printf("write %s: failed\n", name);
            H5Eprint2(H5E_DEFAULT, stderr);
        }
        H5Dclose(d);
    }
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Sclose(asp);
    t0 = now();
    rc = H5Fclose(f);
    printf("close: %s\nclose_s: %.3f\n", rc < 0 ? "failed" : "ok", now() - t0);
    if (rc < 0)
        H5Eprint2(H5E_DEFAULT, stderr);
    fflush(stdout);
    fflush(stderr);
    free(buf);
    _exit(0);
}
