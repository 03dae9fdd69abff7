/*
 * nc_rename.c: netCDF's renames on one file, as an operator does them (issue 27, "Identity survives
 * renames"). Run by tests/scripts/nc_rename.sh natively and through the connector; both runs must print
 * the same thing.
 *
 * Usage: nc_rename FILE. Creates FILE (netCDF-4) with dimensions lat(3), lon(4), coordinate variables
 * lat and lon, temp(lat, lon) and a group g with a variable; closes it; reopens it for writing and renames
 * the coordinate variable lon to x (netCDF then renames the dimension's scale), the dimension lat to
 * latitude, an attribute, the group g to h, and defines a new variable at an old name (lon); writes
 * through the renamed variables; closes; reopens read-only and prints every name and value.
 */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        int _e = (call);                                                                                     \
        if (_e != NC_NOERR) {                                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, nc_strerror(_e));                  \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static void
print_var(int nc, int v)
{
    char   name[NC_MAX_NAME + 1], dname[NC_MAX_NAME + 1];
    int    nd, dims[NC_MAX_VAR_DIMS], na;
    size_t n = 1, len;
    CHECK(nc_inq_var(nc, v, name, NULL, &nd, dims, &na));
    printf("  %s(", name);
    for (int i = 0; i < nd; i++) {
        CHECK(nc_inq_dim(nc, dims[i], dname, &len));
        printf("%s%s=%zu", i ? "," : "", dname, len);
        n *= len;
    }
    printf(")");
    for (int a = 0; a < na; a++) {
        CHECK(nc_inq_attname(nc, v, a, name));
        printf(" @%s", name);
    }
    {
        double *d = calloc(n ? n : 1, sizeof *d);
        CHECK(nc_get_var_double(nc, v, d));
        for (size_t i = 0; i < n; i++)
            printf(" %g", d[i]);
        free(d);
    }
    printf("\n");
}

static void
print_group(int nc, const char *label)
{
    int nv, ng, grps[16];
    printf("%s\n", label);
    CHECK(nc_inq_nvars(nc, &nv));
    for (int v = 0; v < nv; v++)
        print_var(nc, v);
    CHECK(nc_inq_grps(nc, &ng, grps));
    for (int i = 0; i < ng; i++) {
        char gname[NC_MAX_NAME + 1];
        CHECK(nc_inq_grpname(grps[i], gname));
        print_group(grps[i], gname);
    }
}

int
main(int argc, char **argv)
{
    int    nc, g, lat, lon, vlat, vlon, temp, gv, x, nlon, coordv;
    double la[3] = {-10, 0, 10}, lo[4] = {0, 90, 180, 270}, t[12], gd[4] = {5, 6, 7, 8};
    double newlon[4] = {-1, -2, -3, -4};
    int    dims[2];
    if (argc != 2) {
        fprintf(stderr, "usage: nc_rename FILE\n");
        return 2;
    }
    for (int i = 0; i < 12; i++)
        t[i] = 270 + i;
    CHECK(nc_create(argv[1], NC_CLOBBER | NC_NETCDF4, &nc));
    CHECK(nc_def_dim(nc, "lat", 3, &lat));
    CHECK(nc_def_dim(nc, "lon", 4, &lon));
    CHECK(nc_def_var(nc, "lat", NC_DOUBLE, 1, &lat, &vlat));
    CHECK(nc_def_var(nc, "lon", NC_DOUBLE, 1, &lon, &vlon));
    dims[0] = lat, dims[1] = lon;
    CHECK(nc_def_var(nc, "temp", NC_DOUBLE, 2, dims, &temp));
    CHECK(nc_put_att_text(nc, temp, "units", 1, "K"));
    CHECK(nc_def_grp(nc, "g", &g));
    CHECK(nc_def_var(g, "gv", NC_DOUBLE, 1, &lon, &gv));
    CHECK(nc_put_var_double(nc, vlat, la));
    CHECK(nc_put_var_double(nc, vlon, lo));
    CHECK(nc_put_var_double(nc, temp, t));
    CHECK(nc_put_var_double(g, gv, gd));
    CHECK(nc_close(nc));

    CHECK(nc_open(argv[1], NC_WRITE, &nc));
    CHECK(nc_inq_varid(nc, "lon", &x));
    CHECK(nc_inq_varid(nc, "temp", &temp));
    CHECK(nc_inq_grp_ncid(nc, "g", &g));
    CHECK(nc_redef(nc));
    CHECK(nc_rename_var(nc, x, "x"));
    CHECK(nc_rename_dim(nc, lat, "latitude"));
    CHECK(nc_rename_att(nc, temp, "units", "units_renamed"));
    CHECK(nc_rename_grp(g, "h"));
    CHECK(nc_def_var(nc, "lon", NC_DOUBLE, 1, &lon, &nlon)); /* a new variable at the old name */
    CHECK(nc_enddef(nc));
    lo[0] = 1, lo[1] = 2, lo[2] = 3, lo[3] = 4;
    CHECK(nc_put_var_double(nc, x, lo)); /* through the renamed variable */
    CHECK(nc_put_var_double(nc, nlon, newlon));
    CHECK(nc_inq_varid(nc, "lat", &coordv));
    CHECK(nc_close(nc));

    CHECK(nc_open(argv[1], NC_NOWRITE, &nc));
    print_group(nc, "root");
    CHECK(nc_close(nc));
    return 0;
}
