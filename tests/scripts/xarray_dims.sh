#!/usr/bin/env bash
# Stores HDF5 and netCDF programs write through the connector open in xarray (issue 12): every array has
# dimension names (v2 _ARRAY_DIMENSIONS, v3 dimension_names), from dimension scales or h5netcdf-style
# phony names (docs/FORMAT.md), and netCDF's bookkeeping is no zarr attribute.
#   (a) h5repack of an ordinary HDF5 file (no scales) into zarr v2: xarray.open_zarr works, phony dims;
#   (b) three CF-style netCDF-4 files (ncgen -4 from tests/interop/cf/*.cdl: time/lat/lon coordinates
#       with units and calendars, a packed short with scale_factor/add_offset, _FillValue, an unlimited
#       dimension) converted with `nccopy -k nc4` under HDF5_VOL_CONNECTOR="zarr version=2", and
#       written by `ncgen -4` straight into zarr v2: with xarray's default decoding (mask_and_scale,
#       decode_times) open_zarr is xarray.testing.assert_identical to open_dataset of the original
#       (netCDF4 engine), _FillValue masking included (docs/FORMAT.md "Fill values"; see the notes at (b));
#   (c) zarrita reads dimension_names of the v3 stores.
#   (d) a CF file with bounds on a dimension without a coordinate variable (cf_bounds.cdl: time_bnds and
#       lat_bnds on 'bnds'), written by nccopy and by ncgen -4 into zarr v2 with consolidated=1 and into
#       v3: xarray (consolidated metadata) is assert_identical to the original and shows 'bnds' as a
#       dimension without coordinate; zarrita finds no node at /bnds in v3; ncdump through the connector
#       (pointer files, v2 and v3, consolidated or not) equals ncdump of the original. (b) covers the v2
#       stores without consolidated metadata.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR
cd "$TMP"
CF=$H5ZARR_SRC/tests/interop/cf
# Debian's python3-netcdf4 links Debian's HDF5, which must not see our 1.14 plugins
pyx() { env -u HDF5_PLUGIN_PATH -u HDF5_VOL_CONNECTOR "$PY" "$@"; }
pyx -c 'import xarray, netCDF4' 2>/dev/null || {
    echo "skipped: python3-xarray / python3-netcdf4 missing (scripts/debian-packages.txt)"
    exit 77
}

# ---- (a) an ordinary HDF5 file, h5repack'd into zarr v2 and v3
"$EXAMPLES/write_field" native.h5 >/dev/null || fail "write_field (native)"
h5repack --dst-vol-name=zarr --dst-vol-info="version=2" native.h5 f2.zarr || fail "h5repack native -> zarr v2"
h5repack --dst-vol-name=zarr native.h5 f3.zarr || fail "h5repack native -> zarr v3"
grep -q '"zarr_format": *2' f2.zarr/.zgroup || fail "h5repack did not write a zarr v2 store"
pyx - f2.zarr native.h5 <<'PY' || fail "xarray.open_zarr of the h5repack'd store"
import sys, json, xarray as xr, numpy as np, netCDF4
st, h5 = sys.argv[1], sys.argv[2]
ds = xr.open_zarr(st, group="model", consolidated=False)
t = ds["temperature"]
assert t.dims == ("phony_dim_0", "phony_dim_1"), t.dims
with netCDF4.Dataset(h5) as f:  # netCDF-C reads the plain HDF5 file with its own phony dims
    want = f["model"]["temperature"][:]
assert np.array_equal(t.values, np.asarray(want)), (t.values, want)
assert "_ARRAY_DIMENSIONS" not in t.attrs
z = json.load(open(st + "/model/temperature/.zattrs"))
assert z["_ARRAY_DIMENSIONS"] == ["phony_dim_0", "phony_dim_1"], z
PY
HDF5_VOL_CONNECTOR=zarr h5dump -A f2.zarr | grep -q _ARRAY_DIMENSIONS && fail "_ARRAY_DIMENSIONS shows as an HDF5 attribute"
pass "h5repack of an ordinary HDF5 file into zarr v2 opens in xarray (phony_dim_0/1, values as netCDF-C reads them)"

# ---- (b) CF-style netCDF-4 files through nccopy
n=0
for cdl in "$CF"/*.cdl; do
    b=$(basename "$cdl" .cdl)
    ncgen -4 -o "$b.nc" "$cdl" || fail "ncgen -4 $b"
    HDF5_VOL_CONNECTOR="zarr version=2" nccopy -k nc4 "$b.nc" "$b.zarr" || fail "nccopy -k nc4 $b.nc $b.zarr (v2)"
    HDF5_VOL_CONNECTOR="zarr version=3" nccopy -k nc4 "$b.nc" "$b.zr3" || fail "nccopy -k nc4 $b.nc $b.zr3 (v3)"
    grep -q '"zarr_format": *2' "$b.zarr/.zgroup" || fail "$b.zarr is no zarr v2 store"
    HDF5_VOL_CONNECTOR="zarr version=2" ncgen -4 -o "$b.g.zarr" "$cdl" || fail "ncgen -4 -o $b.g.zarr (v2)"
    # nccopy writes with NC_NOFILL: no HDF5 fill value, so the arrays' fill_value is the _FillValue
    # attribute where there is one (else null), and xarray's _FillValue is the .nc's. ncgen sets HDF5
    # fill values (the _FillValue attribute, else netCDF's default fill): they are zarr's fill_value.
    pyx - "$b.nc" "$b.zarr" "$b.g.zarr" <<'PY' || fail "xarray: $b.zarr or $b.g.zarr differs from $b.nc"
import sys, json, os, math, numpy as np, xarray as xr
nc, st, gst = sys.argv[1], sys.argv[2], sys.argv[3]
a = xr.open_dataset(nc).load()  # xarray's defaults: mask_and_scale=True, decode_times=True
assert a.attrs.get("_h5zarr") is None
# netCDF's default fill per type: what ncgen gives variables without a _FillValue attribute
ncfill = {"f4": 9.969209968386869e36, "f8": 9.969209968386869e36, "i4": -2147483647, "i2": -32767}
for path, nofill in ((st, True), (gst, False)):
    z = xr.open_zarr(path, consolidated=False).load()
    # the connector's reserved data is no zarr attribute (docs/FORMAT.md): nothing to take out
    assert "_h5zarr" not in z.attrs, z.attrs
    for n, v in z.variables.items():
        assert "_h5zarr" not in v.attrs, (path, n, v.attrs)
    xr.testing.assert_identical(a, z)
    for name, v in a.variables.items():
        zv, arr = z[name], json.load(open(os.path.join(path, name, ".zarray")))
        assert zv.dtype == v.dtype, (path, name, zv.dtype, v.dtype)
        assert zv.encoding.get("scale_factor") == v.encoding.get("scale_factor"), (path, name)
        assert zv.encoding.get("add_offset") == v.encoding.get("add_offset"), (path, name)
        assert zv.encoding.get("units") == v.encoding.get("units"), (path, name)
        assert zv.encoding.get("calendar") == v.encoding.get("calendar"), (path, name)
        want = v.encoding.get("_FillValue")
        got = zv.encoding.get("_FillValue")
        if nofill:
            # no HDF5 fill: zarr's fill_value is the _FillValue attribute when there is one (issue 27,
            # docs/FORMAT.md "Fill values"), else null; xarray's _FillValue is the .nc's
            fv = arr["fill_value"]
            fv = float("nan") if fv == "NaN" else fv
            if want is None:
                assert fv is None, (path, name, fv)
            else:
                assert fv == want or (math.isnan(fv) and math.isnan(want)), (path, name, fv, want)
            assert got == want or (got is not None and math.isnan(got) and math.isnan(want)), (path, name, got, want)
        elif want is not None:
            assert arr["fill_value"] == want and got == want, (path, name, arr["fill_value"], got, want)
        else:
            # a netCDF default fill is an HDF5 user-defined fill, so zarr's fill_value and xarray's
            # encoding _FillValue (never an attribute, no value equals it here: identical above)
            k = np.dtype(arr["dtype"]).kind + str(np.dtype(arr["dtype"]).itemsize)
            assert arr["fill_value"] == ncfill[k] and got == ncfill[k], (path, name, arr["fill_value"], got)
    # the values xarray masked: netCDF _FillValue cells are NaN, real zeros (time=0, lon=0) are not
    if "tas" in a:
        assert not np.isnat(z["time"].values[0]) and z["lon"].values[0] == 0, (z["time"].values, z["lon"].values)
        assert int(np.isnan(z["tas"].values).sum()) == 2, z["tas"].values
book = {"DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME", "_Netcdf4Coordinates", "_Netcdf4Dimid",
        "_NCProperties", "_nc3_strict"}
for root, dirs, files in os.walk(st):
    if ".zattrs" in files:
        attrs = json.load(open(os.path.join(root, ".zattrs")))
        bad = book & set(attrs)
        assert not bad, (root, bad)
        if ".zarray" in files:
            assert isinstance(attrs.get("_ARRAY_DIMENSIONS"), list), root
PY
    # HDF5 programs reading through the connector still see netCDF's bookkeeping attributes
    h5dump -A "$b.nc" | grep -c "ATTRIBUTE" >a.nc || fail "h5dump -A $b.nc"
    HDF5_VOL_CONNECTOR=zarr h5dump -A "$b.zarr" | grep -c "ATTRIBUTE" >a.zarr || fail "h5dump -A $b.zarr"
    h5dump -A "$b.nc" >d.nc
    HDF5_VOL_CONNECTOR=zarr h5dump -A "$b.zarr" >d.zarr
    for a in _Netcdf4Coordinates _Netcdf4Dimid DIMENSION_LIST REFERENCE_LIST CLASS NAME _NCProperties; do
        [ "$(grep -c "ATTRIBUTE \"$a\"" d.nc)" = "$(grep -c "ATTRIBUTE \"$a\"" d.zarr)" ] ||
            fail "$b.zarr: attribute $a not seen through the connector as often as in $b.nc"
    done
    cmp -s a.nc a.zarr || fail "$b.zarr: h5dump -A lists $(cat a.zarr) attributes, $b.nc $(cat a.nc)"
    n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "fewer than three CF files in $CF"
pass "$n CF-style netCDF-4 files: nccopy and ncgen into zarr v2, xarray.open_zarr assert_identical to open_dataset with default decoding (masking, times, packing)"

# ---- (c) zarrita sees dimension_names in v3
node "$INTEROP/zarrita_dump.mjs" cf_temperature.zr3 /tas /time /lat /lon >zt.json || fail "zarrita: cf_temperature.zr3"
node "$INTEROP/zarrita_dump.mjs" f3.zarr /model/temperature >zf.json || fail "zarrita: f3.zarr"
"$PY" - zt.json zf.json <<'PY' || fail "zarrita dimension_names"
import json, sys
t, f = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert t["/tas"]["dimension_names"] == ["time", "lat", "lon"], t["/tas"]["dimension_names"]
for c in ("time", "lat", "lon"):
    assert t["/" + c]["dimension_names"] == [c], (c, t["/" + c]["dimension_names"])
bad = {"DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME", "_Netcdf4Coordinates", "_Netcdf4Dimid"} & set(t["/tas"]["attrs"])
assert not bad, bad
assert t["/tas"]["attrs"]["units"] == "K"
assert f["/model/temperature"]["dimension_names"] == ["phony_dim_0", "phony_dim_1"], f
PY
pass "zarrita reads dimension_names of v3 stores (netCDF coordinates; phony names of an h5repack'd file)"

# ---- (d) bounds on a dimension without a coordinate variable (docs/FORMAT.md "Dimension names")
HDF5_VOL_CONNECTOR="zarr version=2 consolidated=1" nccopy -k nc4 cf_bounds.nc bc.zarr || fail "nccopy cf_bounds (v2, consolidated)"
HDF5_VOL_CONNECTOR="zarr version=2 consolidated=1" ncgen -4 -o bgc.zarr "$CF/cf_bounds.cdl" || fail "ncgen cf_bounds (v2, consolidated)"
HDF5_VOL_CONNECTOR="zarr version=3" ncgen -4 -o bg.zr3 "$CF/cf_bounds.cdl" || fail "ncgen cf_bounds (v3)"
for st in cf_bounds.zarr cf_bounds.g.zarr bc.zarr bgc.zarr; do
    [ -e $st/bnds/.h5zarr_array ] && [ ! -e $st/bnds/.zarray ] || fail "$st: bnds is not hidden"
done
grep -q '"bnds/.h5zarr_array"' bc.zarr/.zmetadata || fail "bc.zarr/.zmetadata lacks bnds/.h5zarr_array"
pyx - cf_bounds.nc bc.zarr bgc.zarr <<'PY' || fail "xarray: cf_bounds with consolidated metadata"
import sys, xarray as xr
a = xr.open_dataset(sys.argv[1]).load()
assert "bnds" in a.dims and "bnds" not in a.variables
for st in sys.argv[2:]:
    for cons in (True, None):
        z = xr.open_zarr(st, consolidated=cons).load()
        xr.testing.assert_identical(a, z)
        assert "bnds" not in z.variables and z["time_bnds"].dims == ("time", "bnds"), (st, list(z.variables))
PY
for st in cf_bounds.zr3 bg.zr3; do
    node "$INTEROP/zarrita_dump.mjs" $st /bnds >zb.json 2>zb.err && fail "zarrita: a node at /bnds of $st"
    grep -q NotFoundError zb.err || fail "zarrita /bnds of $st: $(cat zb.err)"
    node "$INTEROP/zarrita_dump.mjs" $st /time_bnds /lat_bnds >zb.json || fail "zarrita: $st"
    "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1]))
assert d["/time_bnds"]["dimension_names"] == ["time", "bnds"] and d["/lat_bnds"]["dimension_names"] == ["lat", "bnds"], d
assert d["/time_bnds"]["data"] == [0, 1, 1, 2, 2, 3], d["/time_bnds"]["data"]' zb.json || fail "zarrita: $st bounds"
done
for v in 2 3; do
    for c in 0 1; do
        printf '[path *.nc]\nformat = zarr\nversion = %s\nconsolidated = %s\n' $v $c >bnds$v$c.conf
        HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/bnds$v$c.conf nccopy -k nc4 cf_bounds.nc pb$v$c.nc ||
            fail "nccopy cf_bounds to a pointer (v$v consolidated=$c)"
        [ -d pb$v$c.nc.zarr ] || fail "no store came out (pb$v$c.nc)"
        diff <(ncdump cf_bounds.nc | sed 1d) <(HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/bnds$v$c.conf ncdump pb$v$c.nc | sed 1d) ||
            fail "ncdump of pb$v$c.nc (v$v consolidated=$c) differs from cf_bounds.nc's"
    done
done
pass "bounds on a dimension without coordinate variable: xarray identical (v2 consolidated), no zarrita node (v3), ncdump equal (v2/v3, consolidated or not)"
finish
