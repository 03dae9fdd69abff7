#!/usr/bin/env bash
# GDAL (Debian's 3.6, its Zarr driver) and the connector, both ways:
# - a zarr v2 store that a netCDF program writes through the connector (`nccopy` of a CF file) reads in
#   GDAL's multidimensional API (`gdalmdiminfo -detailed`) with the netCDF dimensions, coordinate
#   variables, units, nodata (the _FillValue) and every value of the original;
# - a zarr v2 store that GDAL writes (`gdalmdimtranslate -of Zarr` of the same netCDF file) reads through
#   the connector in HDF5's tools (`h5dump`) with the values native h5dump shows for the netCDF file.
# GDAL 3.6 implements a draft of zarr v3 that predates the final specification (its reader looks for
# another layout), so v3 stores are not compared; GDAL 3.8 and later read final v3. Skipped when GDAL is
# not installed.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR
command -v gdalmdiminfo >/dev/null 2>&1 || { echo "skipped: GDAL (Debian package gdal-bin) not installed"; exit 77; }
gdalmdiminfo --formats 2>/dev/null | grep -q "^ *Zarr " || { echo "skipped: this GDAL has no Zarr driver"; exit 77; }
cd "$TMP"
# GDAL runs on Debian's libraries, HDF5's tools on the deps'
gdal() { env -u LD_LIBRARY_PATH -u LD_PRELOAD -u HDF5_PLUGIN_PATH "$@"; }

cp "$H5ZARR_SRC/tests/netcdf/cf_grid.cdl" cf.cdl
ncgen -4 -o cf.nc cf.cdl || fail "ncgen -4 cf.nc"

# ---- the connector writes (netCDF program, zarr v2), GDAL reads
HDF5_VOL_CONNECTOR="zarr version=2" nccopy cf.nc v2.zarr || fail "nccopy cf.nc v2.zarr through the connector"
[ -f v2.zarr/tas/.zarray ] || fail "no zarr v2 store came out of nccopy"
for a in tas pr time lat lon; do
    gdal gdalmdiminfo -detailed -array $a v2.zarr >$a.json 2>gdal.err || fail "gdalmdiminfo -array $a: $(head -3 gdal.err)"
done
"$PY" - <<'PY' || fail "GDAL reads other values, dimensions or attributes than the netCDF original's"
import json
def load(n):
    return json.load(open(n + ".json"))
def flat(v):
    return [y for x in v for y in flat(x)] if isinstance(v, list) else [v]
tas, pr = load("tas"), load("pr")
assert [d["name"] for d in tas["dimensions"]] == ["time", "lat", "lon"], tas["dimensions"]
assert [d["size"] for d in tas["dimensions"]] == [3, 4, 5], tas["dimensions"]
assert [d.get("indexing_variable") for d in tas["dimensions"]] == ["/time", "/lat", "/lon"], tas["dimensions"]
assert tas["datatype"] == "Float32" and tas["unit"] == "K" and tas["nodata_value"] == -999, tas
assert tas["attributes"]["long_name"]["value"] == "air temperature", tas["attributes"]
want = [250.0 + i for i in range(60)]
want[33] = -999.0
assert flat(tas["values"]) == want, flat(tas["values"])
assert pr["datatype"] == "Int16" and flat(pr["values"]) == list(range(60)), pr
assert pr.get("scale", pr.get("attributes", {}).get("scale_factor", {}).get("value")) == 0.01, pr
assert pr.get("offset", pr.get("attributes", {}).get("add_offset", {}).get("value")) == 1.0, pr
assert flat(load("time")["values"]) == [0, 31, 59], load("time")
assert flat(load("lat")["values"]) == [-45, -15, 15, 45] and load("lat")["unit"] == "degrees_north"
assert flat(load("lon")["values"]) == [0, 72, 144, 216, 288] and load("lon")["unit"] == "degrees_east"
PY
pass "GDAL 3.6 reads the v2 store nccopy wrote through the connector: dimensions, coordinates, units, nodata, every value"

# ---- GDAL writes (zarr v2), the connector reads
gdal gdalmdimtranslate -q cf.nc g.zarr -of Zarr 2>gdal.err || fail "gdalmdimtranslate -of Zarr: $(head -3 gdal.err)"
[ -f g.zarr/.zgroup ] && [ -f g.zarr/tas/.zarray ] || fail "GDAL wrote no zarr v2 store"
data() { sed -n '/DATA {/,/^   }/p'; }
for a in tas pr time lat lon; do
    h5dump -A 0 -d /$a cf.nc | data >n_$a.txt
    grep -q '(0' n_$a.txt || fail "native h5dump of /$a shows no data"
    HDF5_VOL_CONNECTOR=zarr h5dump -A 0 -d /$a g.zarr | data >z_$a.txt || fail "h5dump of GDAL's /$a through the connector"
    diff n_$a.txt z_$a.txt || fail "/$a of GDAL's store reads other values through the connector than natively"
done
grep -q -- '-999, 284' z_tas.txt || fail "GDAL's tas lost its missing cell: $(cat z_tas.txt)"
HDF5_VOL_CONNECTOR=zarr h5dump -a /tas/units g.zarr | grep -q '"K"' || fail "GDAL's tas units not read through the connector"
pass "h5dump through the connector reads the v2 store GDAL wrote with the netCDF file's values and units"
finish
