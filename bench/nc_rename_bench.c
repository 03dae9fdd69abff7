/*
 * nc_rename_bench.c: netCDF-C's nc_test rename pattern as a program to profile (issue 27: nc_test through the
 * connector within 3x of native). Each repetition creates scratch.nc with NV int variables on two shared
 * dimensions, writes each, closes; reopens it for writing and renames every variable (netCDF's
 * nc_rename_var moves the dataset twice, through a temporary name, with H5Lmove: each move rewrites the
 * references the dimension scales hold to it); reopens it read-only and checks every value under its new
 * name. It runs the same natively or through the connector (HDF5_VOL_CONNECTOR=zarr with a `*.nc` rule);
 * bench/README.md ("netCDF renames") gives the callgrind command and figures.
 * Usage: nc_rename_bench [NV [REPS]] (default 60 2), in the current directory; exits non-zero on a wrong
 * value.
 */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                                \
    do {                                                                                                     \
        int r_ = (x);                                                                                        \
        if (r_) {                                                                                            \
            fprintf(stderr, "nc_rename_bench: %s:%d: %s\n", __FILE__, __LINE__, nc_strerror(r_));            \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static void
write_file(int nv)
{
    int  nc, d[2], v, buf[12];
    char name[64];
    CK(nc_create("scratch.nc", NC_NETCDF4 | NC_CLOBBER, &nc));
    CK(nc_def_dim(nc, "x", 4, &d[0]));
    CK(nc_def_dim(nc, "y", 3, &d[1]));
    for (int i = 0; i < nv; i++) {
        snprintf(name, sizeof name, "v%d", i);
        CK(nc_def_var(nc, name, NC_INT, 2, d, &v));
    }
    CK(nc_enddef(nc));
    for (int i = 0; i < nv; i++) {
        for (int k = 0; k < 12; k++)
            buf[k] = i * 100 + k;
        CK(nc_put_var_int(nc, i, buf));
    }
    CK(nc_close(nc));
}

static void
rename_all(int nv)
{
    int  nc;
    char name[64];
    CK(nc_open("scratch.nc", NC_WRITE, &nc));
    CK(nc_redef(nc));
    for (int i = 0; i < nv; i++) {
        snprintf(name, sizeof name, "new_%d", i);
        CK(nc_rename_var(nc, i, name));
    }
    CK(nc_enddef(nc));
    CK(nc_close(nc));
}

static int
check_all(int nv)
{
    int  nc, v, buf[12];
    char name[64];
    CK(nc_open("scratch.nc", NC_NOWRITE, &nc));
    for (int i = 0; i < nv; i++) {
        snprintf(name, sizeof name, "new_%d", i);
        CK(nc_inq_varid(nc, name, &v));
        CK(nc_get_var_int(nc, v, buf));
        for (int k = 0; k < 12; k++)
            if (buf[k] != i * 100 + k) {
                fprintf(stderr, "nc_rename_bench: %s[%d] = %d, want %d\n", name, k, buf[k], i * 100 + k);
                return 1;
            }
    }
    CK(nc_close(nc));
    return 0;
}

int
main(int argc, char **argv)
{
    int nv = argc > 1 ? atoi(argv[1]) : 60, reps = argc > 2 ? atoi(argv[2]) : 2;
    if (nv < 1 || reps < 1) {
        fprintf(stderr, "usage: nc_rename_bench [NV [REPS]]\n");
        return 2;
    }
    for (int r = 0; r < reps; r++) {
        write_file(nv);
        rename_all(nv);
        if (check_all(nv))
            return 1;
    }
    return 0;
}
