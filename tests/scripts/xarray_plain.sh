#!/usr/bin/env bash
# xarray sees plain zarr (issue 27): the connector's reserved data is no zarr attribute (docs/FORMAT.md,
# "The reserved object _h5zarr"), so a CF netCDF file written to zarr v2 through the connector opens in
# xarray identical to the netCDF original and writes back to netCDF. The file: coordinate variables for
# every dimension (time unlimited, lat, lon), a packed short (scale_factor, add_offset, _FillValue) and
# a float with _FillValue whose cells are partly never written (a whole time step and a latitude band:
# missing chunks and partly written ones). Written by a small netCDF-C program (compiled here against
# the deps' netCDF):
#   (a) natively, then copied with `nccopy -k nc4` through the connector into a zarr v2 store;
#   (b) through the connector straight into a zarr v2 store.
# /usr/bin/python3: xarray.open_zarr(store, consolidated=False) is xr.testing.assert_identical to
# xarray.open_dataset of the native file (xarray's default decoding), no `_h5zarr` in any attrs of the
# dataset or its variables (nor in any .zattrs), and Dataset.to_netcdf of what open_zarr gave works and
# reads back identical.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR
cd "$TMP"
# Debian's python3-netcdf4 links Debian's HDF5, which must not see our 1.14 plugins
pyx() { env -u HDF5_PLUGIN_PATH -u HDF5_VOL_CONNECTOR "$PY" "$@"; }
pyx -c 'import xarray, netCDF4' 2>/dev/null || {
    echo "skipped: python3-xarray / python3-netcdf4 missing (scripts/debian-packages.txt)"
    exit 77
}
NCP=${H5ZARR_DEPS:-}/netcdf
[ -n "${H5ZARR_DEPS:-}" ] && [ -f "$NCP/include/netcdf.h" ] || {
    echo "skipped: no netCDF-C under H5ZARR_DEPS=${H5ZARR_DEPS:-} (netcdf/include/netcdf.h)"
    exit 77
}

cat >nc_cf.c <<'C'
/* A CF file: time(time) unlimited, lat(lat), lon(lon) coordinates; tas packed short; pr float with
 * _FillValue, time step 2 and latitude 2 never written. */
#include <netcdf.h>
#include <stdio.h>
#include <string.h>
#define TRY(c) do { int s_ = (c); if (s_) { fprintf(stderr, "line %d: %s\n", __LINE__, nc_strerror(s_)); return 1; } } while (0)
#define NT 4
#define NY 3
#define NX 4
int main(int argc, char **argv)
{
    int    nc, dt, dy, dx, vt, vy, vx, vtas, vpr, d3[3];
    double time[NT] = {0, 1, 2, 3}, scale = 0.01, offset = 273.15;
    float  lat[NY] = {-10, 0, 10}, lon[NX] = {0, 90, 180, 270}, prfill = 1.0e20f, pr[NT][NY][NX];
    short  tas[NT][NY][NX], tasfill = -999;
    size_t start[3] = {0, 0, 0}, count[3] = {1, NY - 1, NX};
    if (argc < 2) return 2;
    for (int t = 0; t < NT; t++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) {
                tas[t][y][x] = (short)(100 * t + 10 * y + x);
                pr[t][y][x] = 0.5f * (float)(t + y + x); /* a real 0 at [0][0][0]: not masked */
            }
    tas[1][2][3] = tasfill;
    TRY(nc_create(argv[1], NC_NETCDF4 | NC_CLOBBER, &nc));
    TRY(nc_def_dim(nc, "time", NC_UNLIMITED, &dt));
    TRY(nc_def_dim(nc, "lat", NY, &dy));
    TRY(nc_def_dim(nc, "lon", NX, &dx));
    TRY(nc_def_var(nc, "time", NC_DOUBLE, 1, &dt, &vt));
    TRY(nc_put_att_text(nc, vt, "units", strlen("days since 2000-01-01"), "days since 2000-01-01"));
    TRY(nc_put_att_text(nc, vt, "calendar", strlen("standard"), "standard"));
    TRY(nc_def_var(nc, "lat", NC_FLOAT, 1, &dy, &vy));
    TRY(nc_put_att_text(nc, vy, "units", strlen("degrees_north"), "degrees_north"));
    TRY(nc_def_var(nc, "lon", NC_FLOAT, 1, &dx, &vx));
    TRY(nc_put_att_text(nc, vx, "units", strlen("degrees_east"), "degrees_east"));
    d3[0] = dt, d3[1] = dy, d3[2] = dx;
    TRY(nc_def_var(nc, "tas", NC_SHORT, 3, d3, &vtas));
    TRY(nc_put_att_double(nc, vtas, "scale_factor", NC_DOUBLE, 1, &scale));
    TRY(nc_put_att_double(nc, vtas, "add_offset", NC_DOUBLE, 1, &offset));
    TRY(nc_put_att_short(nc, vtas, "_FillValue", NC_SHORT, 1, &tasfill));
    TRY(nc_put_att_text(nc, vtas, "units", 1, "K"));
    TRY(nc_def_var(nc, "pr", NC_FLOAT, 3, d3, &vpr));
    TRY(nc_put_att_float(nc, vpr, "_FillValue", NC_FLOAT, 1, &prfill));
    TRY(nc_put_att_text(nc, vpr, "units", strlen("mm/day"), "mm/day"));
    TRY(nc_put_att_text(nc, NC_GLOBAL, "title", strlen("issue 27"), "issue 27"));
    TRY(nc_put_att_text(nc, NC_GLOBAL, "Conventions", strlen("CF-1.8"), "CF-1.8"));
    TRY(nc_enddef(nc));
    TRY(nc_put_var_float(nc, vy, lat));
    TRY(nc_put_var_float(nc, vx, lon));
    {
        size_t s1 = 0, c1 = NT, s3[3] = {0, 0, 0}, c3[3] = {NT, NY, NX};
        TRY(nc_put_vara_double(nc, vt, &s1, &c1, time));
        TRY(nc_put_vara_short(nc, vtas, s3, c3, &tas[0][0][0]));
    }
    for (int t = 0; t < NT; t++) { /* pr: never time step 2, never latitude 2 */
        if (t == 2)
            continue;
        start[0] = (size_t)t;
        TRY(nc_put_vara_float(nc, vpr, start, count, &pr[t][0][0]));
    }
    TRY(nc_close(nc));
    return 0;
}
C
cc -I"$NCP/include" -o nc_cf nc_cf.c -L"$NCP/lib" -Wl,-rpath,"$NCP/lib" -lnetcdf || fail "compiling nc_cf.c"

./nc_cf native.nc || fail "nc_cf (native)"
HDF5_VOL_CONNECTOR="zarr version=2" nccopy -k nc4 native.nc copied.zarr || fail "nccopy -k nc4 native.nc copied.zarr"
HDF5_VOL_CONNECTOR="zarr version=2" ./nc_cf written.zarr || fail "nc_cf through the connector"
for s in copied.zarr written.zarr; do
    grep -q '"zarr_format": *2' "$s/.zgroup" || fail "$s is no zarr v2 store"
done

pyx - native.nc copied.zarr written.zarr <<'PY' || fail "xarray: a store differs from the netCDF file (above)"
import sys, os, json, numpy as np, xarray as xr
nc, stores = sys.argv[1], sys.argv[2:]
a = xr.open_dataset(nc).load()
assert int(np.isnan(a["pr"].values).sum()) == 3 * 4 + 3 * 4, a["pr"].values  # step 2, then lat 2 of 3 steps
assert a["pr"].values[0, 0, 0] == 0 and int(np.isnan(a["tas"].values).sum()) == 1
for st in stores:
    for root, dirs, files in os.walk(st):
        if ".zattrs" in files:
            z = json.load(open(os.path.join(root, ".zattrs")))
            assert "_h5zarr" not in z, (root, z)
    z = xr.open_zarr(st, consolidated=False).load()
    assert "_h5zarr" not in z.attrs, (st, z.attrs)
    for n, v in z.variables.items():
        assert "_h5zarr" not in v.attrs, (st, n, v.attrs)
        assert "_h5zarr" not in v.encoding, (st, n, v.encoding)
    xr.testing.assert_identical(a, z)
    # the zarr fill_value of pr is its _FillValue (docs/FORMAT.md "Fill values"): zarr readers fill the
    # chunks never written with it
    arr = json.load(open(os.path.join(st, "pr", ".zarray")))
    assert arr["fill_value"] == 1e20 or abs(arr["fill_value"] - 1e20) < 1e13, (st, arr["fill_value"])
    out = st + ".nc"
    z.to_netcdf(out)  # was: TypeError: Invalid value for attr '_h5zarr'
    b = xr.open_dataset(out).load()
    xr.testing.assert_identical(a, b)
    print(st, "ok")
PY
pass "a CF netCDF file (nccopy'd, and written by a netCDF program) into zarr v2: xarray.open_zarr assert_identical to open_dataset, no _h5zarr in any attrs, to_netcdf works"
finish
