/*
 * s3_bench: one timed whole-array write or read through the core API on a store URL, for the S3 rows of
 * `make bench` (bench/s3_bench.py drives it against s3rver on loopback, with curl as the floor).
 *
 *   s3_bench w1|w2 write|read URL
 *
 * W1: 1,000,000 int32 in 1000 chunks of 1000 (4000-byte objects); W2: 8192 x 8192 float32 in 512 x 512
 * chunks (256 objects of 1 MiB), the shapes of the suite's W1 and W2. Uncompressed (the bytes codec), so the
 * bytes moved are the data's. The requests in flight are the store's H5ZARR_HTTP_INFLIGHT (the environment).
 * Prints "R\tS3\t<w>\tcore\t<op>\t<seconds>" and, for reads, fails unless every value is the one written.
 */
#define _POSIX_C_SOURCE 200809L
#include "h5zarr/zarr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ZOK(x)                                                                                               \
    do {                                                                                                     \
        if ((x) != ZARR_OK) {                                                                                \
            fprintf(stderr, "s3_bench: %s: %s\n", #x, zarr_errmsg());                                        \
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

int
main(int argc, char **argv)
{
    bool        w1;
    int         ndim;
    uint64_t    shape[2], chunks[2], n;
    zarr_store *s;
    zarr_array *a;
    zarr_region r;
    uint32_t   *buf;
    double      t0, t;
    bool        wr;

    if (argc != 4 || (strcmp(argv[1], "w1") && strcmp(argv[1], "w2")) ||
        (strcmp(argv[2], "write") && strcmp(argv[2], "read"))) {
        fprintf(stderr, "usage: s3_bench w1|w2 write|read URL\n");
        return 2;
    }
    w1 = !strcmp(argv[1], "w1");
    wr = !strcmp(argv[2], "write");
    if (w1) {
        ndim = 1, shape[0] = 1000000, chunks[0] = 1000;
    }
    else {
        ndim = 2, shape[0] = 8192, shape[1] = 8192, chunks[0] = 512, chunks[1] = 512;
    }
    n = ndim == 1 ? shape[0] : shape[0] * shape[1];
    if (!(buf = malloc(n * 4)))
        return fprintf(stderr, "s3_bench: out of memory\n"), 1;
    t0 = now();
    if (wr) {
        zarr_array_meta *m;
        for (uint64_t i = 0; i < n; i++)
            buf[i] = (uint32_t)(i * 2654435761u);
        ZOK(zarr_store_open(argv[3], ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
        ZOK(zarr_array_meta_new(3, ndim, shape, chunks, zarr_dtype_new(w1 ? ZARR_INT : ZARR_FLOAT, 4), &m));
        t0 = now(); /* the store's open (one listing request) is not the write */
        ZOK(zarr_array_create(s, "a", m, true, &a));
        zarr_region_all(zarr_array_meta_get(a), &r);
        ZOK(zarr_array_write(a, &r, buf));
        zarr_array_close(a);
    }
    else {
        /* the destination touched before the clock starts, as curl's files are: a first touch costs up
         * to 18 us a page on this VM (bench/README.md), 1.2 s for W2's 256 MiB, which is not the store's */
        memset(buf, 0, n * 4);
        ZOK(zarr_store_open(argv[3], ZARR_STORE_RDONLY, &s));
        t0 = now();
        ZOK(zarr_array_open(s, "a", &a));
        zarr_region_all(zarr_array_meta_get(a), &r);
        ZOK(zarr_array_read(a, &r, buf));
        zarr_array_close(a);
    }
    zarr_store_close(s);
    t = now() - t0;
    if (!wr)
        for (uint64_t i = 0; i < n; i++)
            if (buf[i] != (uint32_t)(i * 2654435761u)) {
                fprintf(stderr, "s3_bench: element %llu reads %u\n", (unsigned long long)i, buf[i]);
                return 1;
            }
    printf("R\tS3\t%s\tcore\t%s\t%.6f\n", argv[1], argv[2], t);
    free(buf);
    return 0;
}
