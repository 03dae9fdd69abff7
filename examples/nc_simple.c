/*
 * nc_simple.c: an ordinary netCDF-4 program. It defines an unlimited "time" dimension and fixed "lat"
 * and "lon" dimensions, coordinate variables for lat and lon, and a float variable
 * temperature(time, lat, lon) with the shuffle and deflate filters and attributes, plus global
 * attributes. It writes two time steps with nc_put_vara, then a third, reads the variable back while
 * the file is still open, checks every value and closes the file.
 *
 * The program does not reopen the file: it is also run with HDF5_VOL_CONNECTOR=zarr writing a zarr
 * store, which netCDF cannot open by path yet (it picks a format by the file's magic bytes).
 *
 *     nc_simple [FILE]        (default nc_simple.nc)
 */
#include <netcdf.h>
#include <stdio.h>
#include <string.h>

#define FILE_NAME "nc_simple.nc"
#define NLAT      6
#define NLON      8
#define NTIME     3

/* Every netCDF call returns NC_NOERR on success: stop at the first failure. */
#define TRY(call)                                                                                            \
    do {                                                                                                     \
        int status_ = (call);                                                                                \
        if (status_ != NC_NOERR) {                                                                           \
            fprintf(stderr, "nc_simple: line %d: %s: %s\n", __LINE__, #call, nc_strerror(status_));          \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

static float
temperature(int t, int i, int j)
{
    return 280.0f + (float)t + 0.5f * (float)i - 0.25f * (float)j;
}

int
main(int argc, char *argv[])
{
    const char *file_name = argc > 1 ? argv[1] : FILE_NAME;
    int         ncid, time_dim, lat_dim, lon_dim, lat_var, lon_var, temp_var, dimids[3];
    int         shuffle, deflate, level, ndims, nvars, ngatts, unlimdim, nerrors = 0, t, i, j;
    size_t      start[3] = {0, 0, 0}, count[3] = {2, NLAT, NLON}, ntime;
    float       lats[NLAT], lons[NLON], data[NTIME][NLAT][NLON], back[NTIME][NLAT][NLON];
    float       valid_range[2] = {200.0f, 350.0f};
    int         version[3]     = {1, 0, 2};
    char        units[32]      = "";

    for (i = 0; i < NLAT; i++)
        lats[i] = 25.0f + 5.0f * (float)i;
    for (j = 0; j < NLON; j++)
        lons[j] = -125.0f + 5.0f * (float)j;
    for (t = 0; t < NTIME; t++)
        for (i = 0; i < NLAT; i++)
            for (j = 0; j < NLON; j++)
                data[t][i][j] = temperature(t, i, j);

    TRY(nc_create(file_name, NC_NETCDF4 | NC_CLOBBER, &ncid));
    TRY(nc_def_dim(ncid, "time", NC_UNLIMITED, &time_dim));
    TRY(nc_def_dim(ncid, "lat", NLAT, &lat_dim));
    TRY(nc_def_dim(ncid, "lon", NLON, &lon_dim));

    TRY(nc_def_var(ncid, "lat", NC_FLOAT, 1, &lat_dim, &lat_var));
    TRY(nc_put_att_text(ncid, lat_var, "units", strlen("degrees_north"), "degrees_north"));
    TRY(nc_def_var(ncid, "lon", NC_FLOAT, 1, &lon_dim, &lon_var));
    TRY(nc_put_att_text(ncid, lon_var, "units", strlen("degrees_east"), "degrees_east"));

    dimids[0] = time_dim, dimids[1] = lat_dim, dimids[2] = lon_dim;
    TRY(nc_def_var(ncid, "temperature", NC_FLOAT, 3, dimids, &temp_var));
    TRY(nc_def_var_deflate(ncid, temp_var, 1, 1, 4));
    TRY(nc_put_att_text(ncid, temp_var, "units", strlen("K"), "K"));
    TRY(nc_put_att_text(ncid, temp_var, "long_name", strlen("surface temperature"), "surface temperature"));
    TRY(nc_put_att_float(ncid, temp_var, "valid_range", NC_FLOAT, 2, valid_range));

    TRY(nc_put_att_text(ncid, NC_GLOBAL, "title", strlen("nc_simple example"), "nc_simple example"));
    TRY(nc_put_att_int(ncid, NC_GLOBAL, "version", NC_INT, 3, version));
    TRY(nc_enddef(ncid));

    TRY(nc_put_var_float(ncid, lat_var, lats));
    TRY(nc_put_var_float(ncid, lon_var, lons));
    TRY(nc_put_vara_float(ncid, temp_var, start, count, &data[0][0][0])); /* time steps 0 and 1 */
    start[0] = 2, count[0] = 1;
    TRY(nc_put_vara_float(ncid, temp_var, start, count, &data[2][0][0])); /* time step 2 */
    TRY(nc_sync(ncid));

    /* Check what the library now reports and holds, before closing. */
    TRY(nc_inq(ncid, &ndims, &nvars, &ngatts, &unlimdim));
    TRY(nc_inq_dimlen(ncid, time_dim, &ntime));
    if (ndims != 3 || nvars != 3 || ngatts != 2 || unlimdim != time_dim || ntime != NTIME) {
        fprintf(stderr, "nc_simple: %d dims, %d vars, %d global attributes, %zu time steps\n", ndims, nvars,
                ngatts, ntime);
        nerrors++;
    }
    TRY(nc_inq_var_deflate(ncid, temp_var, &shuffle, &deflate, &level));
    if (!shuffle || !deflate || level != 4) {
        fprintf(stderr, "nc_simple: temperature has shuffle %d, deflate %d level %d\n", shuffle, deflate,
                level);
        nerrors++;
    }
    TRY(nc_get_att_text(ncid, temp_var, "units", units));
    nerrors += strcmp(units, "K") != 0;
    start[0] = 0, count[0] = NTIME;
    TRY(nc_get_vara_float(ncid, temp_var, start, count, &back[0][0][0]));
    for (t = 0; t < NTIME; t++)
        for (i = 0; i < NLAT; i++)
            for (j = 0; j < NLON; j++)
                if (back[t][i][j] != data[t][i][j] && nerrors++ == 0)
                    fprintf(stderr, "nc_simple: temperature[%d][%d][%d] = %g, expected %g\n", t, i, j,
                            back[t][i][j], data[t][i][j]);
    TRY(nc_close(ncid));

    if (nerrors) {
        fprintf(stderr, "nc_simple: %d errors\n", nerrors);
        return 1;
    }
    printf("nc_simple: wrote %s: temperature(time=%d, lat=%d, lon=%d) float, shuffle + deflate 4\n",
           file_name, NTIME, NLAT, NLON);
    return 0;
}
