/*
 * nc_dimonly.c: netCDF dimensions without a coordinate variable over a file's life (issue 27, "Readers see
 * plain zarr"). Run by tests/scripts/nc_dimonly.sh natively and through the connector; both runs must
 * print the same thing.
 *
 * Usage: nc_dimonly FILE STAGE..., each stage opening and closing FILE: "create" makes it (netCDF-4)
 * with time (unlimited), bnds(2), lat(3) and x(4); coordinate variables time and lat; time_bnds(time,
 * bnds), t(time, lat) and v(x), two time steps. bnds and x have no coordinate variable (HDF5 dimension
 * scales netCDF never writes data to). "obs" adds a second unlimited dimension without a coordinate
 * variable, obs, and o(obs) with two values. "append" appends a time step at the end of the unlimited
 * dimension (time_bnds and t too; and an observation at the end of obs when there is one). "rename"
 * renames the dimension bnds to nv. "coord" defines a coordinate variable for x (netCDF replaces the
 * dimension's dataset by the variable's) and writes it. "print" prints every dimension and variable
 * with its values. (netCDF-C 4.9.3 natively fails to read a file where "coord" followed "obs", so
 * tests/scripts/nc_dimonly.sh runs them on two files.)
 */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        int _e = (call);                                                                                     \
        if (_e != NC_NOERR) {                                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, nc_strerror(_e));                  \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static void
create(const char *path)
{
    int    nc, time, bnds, lat, x, vt, vb, vl, vtt, vv, d[2];
    double tv[2] = {0.5, 1.5}, bv[4] = {0, 1, 1, 2}, lv[3] = {-30, 0, 30}, t[6] = {1, 2, 3, 4, 5, 6};
    double vx[4] = {7, 8, 9, 10};

    CHECK(nc_create(path, NC_CLOBBER | NC_NETCDF4, &nc));
    CHECK(nc_def_dim(nc, "time", NC_UNLIMITED, &time));
    CHECK(nc_def_dim(nc, "bnds", 2, &bnds));
    CHECK(nc_def_dim(nc, "lat", 3, &lat));
    CHECK(nc_def_dim(nc, "x", 4, &x));
    CHECK(nc_def_var(nc, "time", NC_DOUBLE, 1, &time, &vt));
    CHECK(nc_put_att_text(nc, vt, "bounds", 9, "time_bnds"));
    d[0] = time, d[1] = bnds;
    CHECK(nc_def_var(nc, "time_bnds", NC_DOUBLE, 2, d, &vb));
    CHECK(nc_def_var(nc, "lat", NC_DOUBLE, 1, &lat, &vl));
    d[1] = lat;
    CHECK(nc_def_var(nc, "t", NC_DOUBLE, 2, d, &vtt));
    CHECK(nc_def_var(nc, "v", NC_DOUBLE, 1, &x, &vv));
    CHECK(nc_enddef(nc));
    {
        size_t st[2] = {0, 0}, ct[2] = {2, 2};
        CHECK(nc_put_vara_double(nc, vt, st, ct, tv));
        CHECK(nc_put_vara_double(nc, vb, st, ct, bv));
        ct[1] = 3;
        CHECK(nc_put_vara_double(nc, vtt, st, ct, t));
    }
    CHECK(nc_put_var_double(nc, vl, lv));
    CHECK(nc_put_var_double(nc, vv, vx));
    CHECK(nc_close(nc));
}

/* a second unlimited dimension, obs, without a coordinate variable, and o(obs) with two values */
static void
obs(const char *path)
{
    int    nc, dim, vo;
    double ov[2] = {7, 8};
    size_t st = 0, ct = 2;
    CHECK(nc_open(path, NC_WRITE, &nc));
    CHECK(nc_redef(nc));
    CHECK(nc_def_dim(nc, "obs", NC_UNLIMITED, &dim));
    CHECK(nc_def_var(nc, "o", NC_DOUBLE, 1, &dim, &vo));
    CHECK(nc_enddef(nc));
    CHECK(nc_put_vara_double(nc, vo, &st, &ct, ov));
    CHECK(nc_close(nc));
}

/* one more time step along the unlimited dimension (and one more observation when there is obs) */
static void
append(const char *path)
{
    int    nc, v, dim;
    double tv = 2.5, bv[2] = {2, 3}, t[3] = {7, 8, 9};
    size_t st[2] = {0, 0}, ct[2] = {1, 2};

    CHECK(nc_open(path, NC_WRITE, &nc));
    CHECK(nc_inq_dimid(nc, "time", &dim));
    CHECK(nc_inq_dimlen(nc, dim, &st[0])); /* at the end */
    CHECK(nc_inq_varid(nc, "time", &v));
    CHECK(nc_put_vara_double(nc, v, st, ct, &tv));
    CHECK(nc_inq_varid(nc, "time_bnds", &v));
    CHECK(nc_put_vara_double(nc, v, st, ct, bv));
    CHECK(nc_inq_varid(nc, "t", &v));
    ct[1] = 3;
    CHECK(nc_put_vara_double(nc, v, st, ct, t));
    if (nc_inq_varid(nc, "o", &v) == NC_NOERR) {
        CHECK(nc_inq_dimid(nc, "obs", &dim));
        CHECK(nc_inq_dimlen(nc, dim, &st[0]));
        CHECK(nc_put_vara_double(nc, v, st, ct, &tv));
    }
    CHECK(nc_close(nc));
}

/* the dimension without a coordinate variable renamed */
static void
rename_dim(const char *path)
{
    int nc, dim;
    CHECK(nc_open(path, NC_WRITE, &nc));
    CHECK(nc_inq_dimid(nc, "bnds", &dim));
    CHECK(nc_redef(nc));
    CHECK(nc_rename_dim(nc, dim, "nv"));
    CHECK(nc_enddef(nc));
    CHECK(nc_close(nc));
}

/* a coordinate variable for x, defined after the fact */
static void
coord_later(const char *path)
{
    int    nc, x, vx;
    double xv[4] = {100, 200, 300, 400};
    CHECK(nc_open(path, NC_WRITE, &nc));
    CHECK(nc_inq_dimid(nc, "x", &x));
    CHECK(nc_redef(nc));
    CHECK(nc_def_var(nc, "x", NC_DOUBLE, 1, &x, &vx));
    CHECK(nc_put_att_text(nc, vx, "units", 1, "m"));
    CHECK(nc_enddef(nc));
    CHECK(nc_put_var_double(nc, vx, xv));
    CHECK(nc_close(nc));
}

static void
print(const char *path)
{
    int  nc, nd, nv, unlim;
    char name[NC_MAX_NAME + 1], dname[NC_MAX_NAME + 1];

    CHECK(nc_open(path, NC_NOWRITE, &nc));
    CHECK(nc_inq(nc, &nd, &nv, NULL, &unlim));
    for (int d = 0; d < nd; d++) {
        size_t len;
        CHECK(nc_inq_dim(nc, d, name, &len));
        printf("dim %s = %zu%s\n", name, len, d == unlim ? " (unlimited)" : "");
    }
    for (int v = 0; v < nv; v++) {
        int    vnd, dims[NC_MAX_VAR_DIMS], na;
        size_t n = 1, len;
        CHECK(nc_inq_var(nc, v, name, NULL, &vnd, dims, &na));
        printf("var %s(", name);
        for (int i = 0; i < vnd; i++) {
            CHECK(nc_inq_dim(nc, dims[i], dname, &len));
            printf("%s%s", i ? "," : "", dname);
            n *= len;
        }
        printf(")");
        for (int a = 0; a < na; a++) {
            CHECK(nc_inq_attname(nc, v, a, name));
            printf(" @%s", name);
        }
        {
            double *buf = calloc(n ? n : 1, sizeof *buf);
            if (!buf)
                exit(1);
            CHECK(nc_get_var_double(nc, v, buf));
            for (size_t i = 0; i < n; i++)
                printf(" %g", buf[i]);
            free(buf);
        }
        printf("\n");
    }
    CHECK(nc_close(nc));
}

int
main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*run)(const char *);
    } stages[] = {{"create", create},     {"obs", obs},           {"append", append},
                  {"rename", rename_dim}, {"coord", coord_later}, {"print", print}};
    if (argc < 3) {
        fprintf(stderr, "usage: nc_dimonly FILE STAGE... (create obs append rename coord print)\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        size_t k = 0;
        while (k < sizeof stages / sizeof stages[0] && strcmp(stages[k].name, argv[i]) != 0)
            k++;
        if (k == sizeof stages / sizeof stages[0]) {
            fprintf(stderr, "nc_dimonly: unknown stage '%s'\n", argv[i]);
            return 2;
        }
        stages[k].run(argv[1]);
    }
    return 0;
}
