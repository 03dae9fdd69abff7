#!/usr/bin/env bash
# Bad input for netCDF programs through the connector (issue 12): a store whose metadata is corrupt,
# whose dimension metadata is inconsistent (v3 dimension_names not matching the shape) or whose chunk is
# corrupt, opened by its pointer (a *.nc rule) with ncdump: a netCDF error code, never a crash or a
# silently wrong value, and nothing written to the store. (The connector's message on the HDF5 error
# stack for the same H5Fopen is checked in hdf5.test_pointer: netCDF clears the stack before it returns.)
. "$(dirname "$0")/../lib.sh"
cd "$TMP"
printf '[path *.nc]\nformat = zarr\n' >rules.conf
run_zarr() { HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/rules.conf "$@"; }
cat >t.cdl <<'CDL'
netcdf t {
dimensions: x = 4 ; t = UNLIMITED ;
variables: float v(t, x) ; v:units = "K" ; v:_Storage = "chunked" ; v:_ChunkSizes = 1, 4 ; v:_Zstandard = 3 ;
data: v = 1,2,3,4,5,6,7,8 ;
}
CDL
sums() { find "$1" -type f -print0 | sort -z | xargs -0 sha256sum; }
# expect_nc_error NAME: ncdump NAME fails with a netCDF error, and the store is unchanged
expect_nc_error() {
    local before after rc
    before=$(sums "$1.zarr")
    set +e
    run_zarr ncdump "$1" >"$1.out" 2>"$1.err"
    rc=$?
    set -e
    [ $rc != 0 ] || fail "ncdump $1 succeeded on a bad store: $(head -5 "$1.out")"
    [ $rc -lt 128 ] || fail "ncdump $1 died (signal $((rc - 128)))"
    grep -q "NetCDF: " "$1.err" || fail "ncdump $1: no netCDF error: $(cat "$1.err")"
    after=$(sums "$1.zarr")
    [ "$before" = "$after" ] || fail "opening $1 changed the store"
}
make_store() { run_zarr ncgen -4 -o "$1" t.cdl || fail "ncgen -4 $1"; [ -f "$1.zarr/v/zarr.json" ] || fail "no store for $1"; }

make_store meta.nc
printf '{"zarr_format": 3, "node_type": "array", "shape": [2' >meta.nc.zarr/v/zarr.json
expect_nc_error meta.nc
pass "a truncated array zarr.json: a netCDF error, the store unchanged"

make_store root.nc
printf 'not json' >root.nc.zarr/zarr.json
expect_nc_error root.nc
pass "a root zarr.json that is not JSON: a netCDF error, the store unchanged"

make_store dims.nc
$PY - dims.nc.zarr/v/zarr.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["dimension_names"] == ["t", "x"], d.get("dimension_names")
d["dimension_names"] = ["t"]  # one name for two dimensions
json.dump(d, open(sys.argv[1], "w"))
PY
expect_nc_error dims.nc
pass "v3 dimension_names inconsistent with the shape: a netCDF error, the store unchanged"

make_store chunk.nc
c=$(find chunk.nc.zarr/v -path '*/c/*' -type f | sort | head -1)
[ -n "$c" ] || fail "no chunk file in chunk.nc.zarr/v"
printf '\x28\xb5\x2f\xfd garbage' >"$c"
expect_nc_error chunk.nc
pass "a corrupt zstd chunk: ncdump fails with a netCDF error (no silently wrong value), the store unchanged"
finish
