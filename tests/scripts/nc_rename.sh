#!/usr/bin/env bash
# netCDF's renames through the connector (issue 27, "Identity survives renames"): tests/netcdf/nc_rename.c
# renames a coordinate variable (lon -> x, the HDF5 dataset moved under an open handle), a dimension, an
# attribute and a group, defines a new variable at the old name and writes through both; natively and
# through the connector (rule *.nc -> zarr, v2 and v3) it must print the same names and values, ncdump of
# both must agree, the zarr keys must have moved (readers of the new names find them), and xarray (v2)
# must read the renamed and the new variable with their values.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR
cd "$TMP"
PROG=$H5ZARR_BUILD/tests/nc_rename
[ -x "$PROG" ] || fail "tests/nc_rename not built"
"$PROG" native.nc >native.txt || fail "nc_rename natively"
grep -q '^  x(lon=4) 1 2 3 4$' native.txt || fail "native run: unexpected output: $(cat native.txt)"
for v in 2 3; do
    printf '[path *.nc]\nformat = zarr\nversion = %s\n' "$v" >rules$v.conf
    HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/rules$v.conf "$PROG" z$v.nc >z$v.txt ||
        fail "nc_rename through the connector (v$v)"
    [ -d z$v.nc.zarr ] || fail "no store came out (v$v)"
    diff native.txt z$v.txt || fail "v$v: nc_rename prints other names or values than natively"
    diff <(ncdump native.nc | sed 1d) <(HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/rules$v.conf ncdump z$v.nc | sed 1d) ||
        fail "v$v: ncdump differs from native's"
    for k in x h/gv lon temp; do [ -d z$v.nc.zarr/$k ] || fail "v$v: no zarr node '$k' after the renames"; done
    [ ! -e z$v.nc.zarr/g ] || fail "v$v: the renamed group's old key 'g' is still there"
done
pass "nc_rename_var/dim/att/grp and a new variable at the old name: same as native (v2, v3), keys moved"

if env -u HDF5_PLUGIN_PATH "$PY" -c 'import xarray, zarr' 2>/dev/null; then
    env -u HDF5_PLUGIN_PATH "$PY" - z2.nc.zarr <<'PY' || fail "xarray reading the renamed v2 store"
import sys, xarray as xr, numpy as np
ds = xr.open_zarr(sys.argv[1], consolidated=False)
assert list(ds["x"].values) == [1, 2, 3, 4], ds["x"].values
assert list(ds["lon"].values) == [-1, -2, -3, -4], ds["lon"].values
assert ds["temp"].dims == ("latitude", "lon"), ds["temp"].dims
assert "units_renamed" in ds["temp"].attrs and "units" not in ds["temp"].attrs
h = xr.open_zarr(sys.argv[1], group="h", consolidated=False)
assert list(h["gv"].values) == [5, 6, 7, 8], h["gv"].values
PY
    pass "xarray reads the renamed variable, the new one at the old name, the renamed dimension and group"
else
    echo "skipped: xarray check (python3-xarray / python3-zarr missing)"
fi
finish
