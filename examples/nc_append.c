/*
 * nc_append.c: a classic netCDF-4 program run twice on the same file: the first run creates it (a
 * `time` record dimension, a fixed `station` dimension, a float variable), every later run reopens it
 * with NC_WRITE and appends one more record. It prints the number of records after its run.
 *
 *   nc_append FILE
 *
 * Unmodified netCDF code: which format FILE is (netCDF-4/HDF5, or a zarr store through the connector
 * and a configuration rule) is decided outside the program.
 */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>

#define NSTATION 3

#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        int rc_ = (call);                                                                                    \
        if (rc_ != NC_NOERR) {                                                                               \
            fprintf(stderr, "nc_append: %s: %s\n", #call, nc_strerror(rc_));                                 \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

int
main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "append.nc";
    int         nc, dims[2], var, tdim;
    size_t      nrec, start[2], count[2] = {1, NSTATION};
    float       row[NSTATION];
    FILE       *probe = fopen(path, "r");

    if (!probe) { /* first run: create */
        CHECK(nc_create(path, NC_NETCDF4 | NC_CLOBBER, &nc));
        CHECK(nc_def_dim(nc, "time", NC_UNLIMITED, &dims[0]));
        CHECK(nc_def_dim(nc, "station", NSTATION, &dims[1]));
        CHECK(nc_def_var(nc, "temperature", NC_FLOAT, 2, dims, &var));
        CHECK(nc_put_att_text(nc, var, "units", 1, "K"));
        CHECK(nc_enddef(nc));
    }
    else {
        fclose(probe);
        CHECK(nc_open(path, NC_WRITE, &nc));
        CHECK(nc_inq_varid(nc, "temperature", &var));
    }
    CHECK(nc_inq_dimid(nc, "time", &tdim));
    CHECK(nc_inq_dimlen(nc, tdim, &nrec));
    for (int i = 0; i < NSTATION; i++)
        row[i] = (float)(100 * nrec + i);
    start[0] = nrec;
    start[1] = 0;
    CHECK(nc_put_vara_float(nc, var, start, count, row));
    CHECK(nc_close(nc));

    /* read back what is there now */
    CHECK(nc_open(path, NC_NOWRITE, &nc));
    CHECK(nc_inq_dimid(nc, "time", &tdim));
    CHECK(nc_inq_dimlen(nc, tdim, &nrec));
    CHECK(nc_inq_varid(nc, "temperature", &var));
    for (size_t r = 0; r < nrec; r++) {
        start[0] = r;
        CHECK(nc_get_vara_float(nc, var, start, count, row));
        for (int i = 0; i < NSTATION; i++)
            if (row[i] != (float)(100 * r + i)) {
                fprintf(stderr, "nc_append: record %zu station %d is %g, not %d\n", r, i, row[i],
                        (int)(100 * r + i));
                return 1;
            }
    }
    CHECK(nc_close(nc));
    printf("%zu records\n", nrec);
    return 0;
}
