#!/usr/bin/env bash
# netCDF programs reopen by the path they used (issue 12): a configuration rule sends new *.nc paths to
# zarr; the store is made beside the name as <name>.zarr and <name> is a pointer file (docs/FORMAT.md,
# "Pointer files") that netCDF routes to HDF5 by its signature and the connector follows. Checks:
# ncgen -4 / a C program (nc_simple) / nccopy write through the connector, ncdump of the same path
# equals ncdump of the netCDF-4 original; a program appending along the unlimited dimension by reopening
# (nc_append, three runs); nccopy from the pointer to a native file; bad pointers give a netCDF error
# with the connector's message on the HDF5 stack and write nothing.
. "$(dirname "$0")/../lib.sh"
cd "$TMP"
printf '# new *.nc paths are zarr stores (a pointer file at the name)\n[path *.nc]\nformat = zarr\n' >rules.conf
run_zarr() { HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/rules.conf "$@"; }
is_pointer() { [ -f "$1" ] && tail -c 512 "$1" | head -n 1 | grep -qx 'h5zarr pointer v2' && [ -f "$1.zarr/zarr.json" ]; }
# ncdump of both, the first line (the name) aside
same_dump() { diff <(ncdump "$1" | sed 1d) <(run_zarr ncdump "$2" | sed 1d); }

cat >cf.cdl <<'CDL'
netcdf cf {
dimensions:
	time = UNLIMITED ;
	lat = 3 ;
	lon = 4 ;
variables:
	double time(time) ;
		time:units = "days since 2000-01-01" ;
		time:calendar = "standard" ;
	float lat(lat) ;
		lat:units = "degrees_north" ;
	float lon(lon) ;
		lon:units = "degrees_east" ;
	short tas(time, lat, lon) ;
		tas:scale_factor = 0.01 ;
		tas:add_offset = 273.15 ;
		tas:_FillValue = -999s ;
		tas:units = "K" ;
	int flags(lat) ;
		flags:_DeflateLevel = 4 ;
		flags:_Shuffle = "true" ;
	int zflags(lat) ;
		zflags:_Filter = "32015,3" ;
	int bflags(lon) ;
		bflags:_Filter = "32001,2,2,4,16,5,1,1" ;

// global attributes:
		:title = "reopen by path" ;
		:Conventions = "CF-1.8" ;
data:
 time = 0, 1 ;
 lat = -10, 0, 10 ;
 lon = 0, 90, 180, 270 ;
 tas = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, _, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 ;
 flags = 7, 8, 9 ;
 zflags = 70, 80, 90 ;
 bflags = -1, -2, -3, -4 ;
}
CDL

# ---- ncgen -4 writes through the connector; ncdump reopens the same path
ncgen -4 -o native.nc cf.cdl || fail "ncgen -4 (native)"
run_zarr ncgen -4 -o out.nc cf.cdl || fail "ncgen -4 through the connector"
is_pointer out.nc || fail "out.nc is not a pointer beside a zarr store out.nc.zarr"
grep -q '"zarr_format": *3' out.nc.zarr/zarr.json || fail "out.nc.zarr is no zarr v3 store"
[ -f out.nc.zarr/tas/zarr.json ] || fail "no zarr array for tas"
same_dump native.nc out.nc || fail "ncdump out.nc differs from ncdump of the netCDF-4 original"
# the filters are zarr codecs in the store and netCDF's special attributes again through the connector
grep -q '"zstd"' out.nc.zarr/zflags/zarr.json || fail "zflags has no zstd codec in the store"
grep -q '"blosc"' out.nc.zarr/bflags/zarr.json || fail "bflags has no blosc codec in the store"
run_zarr ncdump -s -h out.nc >out.special || fail "ncdump -s -h out.nc"
grep -q 'zflags:_Filter = "32015,3"' out.special || { grep zflags out.special; fail "ncdump -s: no zstd _Filter on zflags"; }
grep -q 'bflags:_Filter = "32001' out.special || { grep bflags out.special; fail "ncdump -s: no blosc _Filter on bflags"; }
grep -q 'flags:_DeflateLevel = 4 ;' out.special && grep -q 'flags:_Shuffle = "true" ;' out.special ||
    fail "ncdump -s: deflate/shuffle of flags not reported"
pass "ncgen -4 out.nc (rule *.nc -> zarr) made a pointer + store; ncdump out.nc equals the netCDF-4 original; deflate, shuffle, zstd and blosc are zarr codecs and netCDF sees its filters again"

# ---- a C program (nc_create ... nc_put_vara) and nccopy, reopened by path
"$EXAMPLES/nc_simple" simple_native.nc >/dev/null || fail "nc_simple (native)"
run_zarr "$EXAMPLES/nc_simple" simple.nc >/dev/null || fail "nc_simple through the connector"
is_pointer simple.nc || fail "simple.nc is not a pointer + store"
same_dump simple_native.nc simple.nc || fail "ncdump simple.nc differs from the native file's"
run_zarr nccopy out.nc copy.nc || fail "nccopy out.nc copy.nc (zarr -> zarr by the rule)"
is_pointer copy.nc || fail "copy.nc is not a pointer + store"
same_dump native.nc copy.nc || fail "ncdump copy.nc differs"
run_zarr nccopy -k nc4 out.nc back.h5 || fail "nccopy -k nc4 out.nc back.h5 (zarr -> native)"
is_h5 back.h5 || fail "back.h5 is not a native HDF5 file"
diff <(ncdump native.nc | sed 1d) <(ncdump back.h5 | sed 1d) || fail "ncdump back.h5 differs"
pass "nc_simple and nccopy write through the connector and reopen by path; nccopy back to native"

# ---- append by reopening: three program runs grow the unlimited dimension
for i in 1 2 3; do
    out=$(run_zarr "$EXAMPLES/nc_append" app.nc) || fail "nc_append run $i"
    [ "$out" = "$i records" ] || fail "nc_append run $i: '$out'"
    "$EXAMPLES/nc_append" app_native.nc >/dev/null || fail "nc_append native run $i"
done
is_pointer app.nc || fail "app.nc is not a pointer + store"
same_dump app_native.nc app.nc || fail "ncdump app.nc after three appends differs from the native file's"
$PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["shape"] == [3, 3]' app.nc.zarr/temperature/zarr.json ||
    fail "the zarr array did not grow to 3 x 3"
pass "nc_append: three runs reopen app.nc with NC_WRITE and append along time (3 x 3 in the store)"

# ---- the tools and other readers
run_zarr h5dump -d /tas out.nc >tas.dump || fail "h5dump of the pointer"
grep -q 'DATASET "/tas"' tas.dump || fail "h5dump out.nc shows no /tas"
ncdump -h out.nc >plain.hdr || fail "ncdump of the pointer without the connector"
grep -q 'h5zarr_store = "out.nc.zarr"' plain.hdr || fail "without the connector, the pointer does not name its store"
pass "h5dump reads through the pointer; without the connector the pointer is an HDF5 file naming its store"

# ---- bad pointers: a netCDF error code and nothing written (the connector's messages: hdf5.test_pointer)
cp out.nc dangling.nc
sed -i 's|^store=out\.nc\.zarr$|store=gon.nc.zarr|' dangling.nc
grep -aq '^store=gon.nc.zarr$' dangling.nc || fail "dangling.nc was not edited"
set +e
run_zarr ncdump dangling.nc >/dev/null 2>dangling.err
rc=$?
set -e
[ $rc != 0 ] || fail "ncdump of a pointer to a missing store succeeded"
grep -q "NetCDF:" dangling.err || fail "no netCDF error for a dangling pointer: $(cat dangling.err)"
[ ! -e gon.nc.zarr ] || fail "opening a dangling pointer made a store"
pass "ncdump of a pointer to a missing store: a netCDF error, nothing made"
finish
