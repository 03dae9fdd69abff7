#!/usr/bin/env bash
# Real netCDF programs through the connector (issue 27, "independent checks with other real netCDF
# programs"): Debian's CDO 2.1 (Climate Data Operators: copy, selections, statistics, arithmetic,
# remapping, merges, chained operators) run once natively and once with every *.nc a zarr store (rule
# [path *.nc] + format = zarr); ncdump of each output must be the native one's, `cdo sinfon`/`infon` of
# the stores must print what they print natively, and every output written through the connector must be a
# pointer with its store beside it. CDO links Debian's netCDF (HDF5 1.10, no VOL): it runs here on the deps'
# netCDF-C and HDF5 1.14 (tests/netcdf/debian_on_deps.sh), and the test checks that it reports the deps'
# netCDF version. Skipped when CDO is not installed.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR
command -v cdo >/dev/null 2>&1 || { echo "skipped: CDO (Debian package cdo) not installed"; exit 77; }
CDO=$(command -v cdo)
cd "$TMP"
. "$H5ZARR_SRC/tests/netcdf/debian_on_deps.sh"
debian_on_deps "$CDO"
linked=$(cdo -V 2>&1 | sed -n 's/^ *NetCDF library version *: *\([^ ]*\) .*/\1/p' | head -1)
[ "$linked" = "$NCVER" ] || fail "CDO does not run on the deps' netCDF $NCVER: it reports '$linked'"
pass "CDO $(cdo -V 2>&1 | sed -n 's/.*Climate Data Operators version \([0-9.]*\).*/\1/p' | head -1) runs on the deps' netCDF $NCVER"

# a CF file: unlimited time, a lat-lon grid, a fill value with a missing cell, a packed variable
cp "$H5ZARR_SRC/tests/netcdf/cf_grid.cdl" cf.cdl
ncgen -4 -o cf.nc cf.cdl || fail "ncgen -4 cf.nc"
zrun nccopy cf.nc z_in.nc || fail "nccopy cf.nc through the connector"
zrun nccopy cf.nc z_in2.nc || fail "nccopy cf.nc through the connector"
[ -d z_in.nc.zarr ] || fail "nccopy made no store of z_in.nc"

# dump FILE [CONNECTOR]: ncdump with the file's own name and CDO's history and version lines left out
dump() {
    local f=$1
    shift
    "$@" "$ND" "$f" | sed -e '1d' -e '/:history = /,/;$/d' -e '/:CDO = /d' -e '/:CDI = /d'
}

# op "OPERATORS" [N]: cdo -f nc4 OPERATORS on N inputs (1 or 2) into a new file, natively from cf.nc and
# through the connector from the stores; same ncdump, the connector's output a pointer with its store
n_ops=0
op() {
    local ops=$1 n=${2:-1} nin zin r=0
    nin="cf.nc"
    zin="z_in.nc"
    [ "$n" = 2 ] && nin="cf.nc cf.nc" && zin="z_in.nc z_in2.nc"
    rm -rf n_out.nc z_out.nc*
    # shellcheck disable=SC2086
    cdo -L -s -f nc4 $ops $nin n_out.nc >n_log 2>&1 || fail "natively: cdo $ops: $(grep -v 'no version information' n_log | head -3)"
    # shellcheck disable=SC2086
    zrun cdo -L -s -f nc4 $ops $zin z_out.nc >z_log 2>&1 || r=$?
    [ "$r" = 0 ] || fail "through the connector: cdo $ops: exit $r: $(grep -v 'no version information' z_log | head -3)"
    is_h5 z_out.nc && [ -f z_out.nc.zarr/zarr.json ] || fail "cdo $ops: z_out.nc is not a pointer with its store"
    dump n_out.nc >n_cdl && dump z_out.nc zrun >z_cdl && grep -q '^ *data:' n_cdl || fail "cdo $ops: no ncdump"
    diff n_cdl z_cdl >d_log || fail "cdo $ops: ncdump differs from native's: $(head -20 d_log)"
    n_ops=$((n_ops + 1))
}
op copy
op "selvar,tas"
op "seltimestep,2/3"
op "sellonlatbox,0,150,-50,0"
op timmean
op fldmean
op zonmean
op "timmax -selvar,pr"
op "setunit,degC -subc,273.15 -selvar,tas"
op "mulc,2 -selvar,tas"
op "expr,t2=tas*2+1"
op "remapnn,r10x5 -selvar,tas"
op "invertlat"
op "cat" 2
op "sub" 2
pass "$n_ops CDO commands give the native output through the connector (each a pointer with its store)"

for info in sinfon infon; do
    cdo -s $info cf.nc 2>/dev/null | sed 's/cf\.nc/FILE/' >n_info
    zrun cdo -s $info z_in.nc 2>/dev/null | sed 's/z_in\.nc/FILE/' >z_info
    grep -q ' tas *$' n_info || fail "cdo $info cf.nc: no line for tas: $(head -5 n_info)"
    diff n_info z_info >d_log || fail "cdo $info of the store differs from native's: $(head -20 d_log)"
done
pass "cdo sinfon and infon of a store through its pointer print what they print for the native file"
finish
