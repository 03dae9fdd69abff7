#!/usr/bin/env bash
# Real netCDF operators through the connector (issue 27, "independent checks with other real netCDF
# programs"): Debian's NCO 5.1.4 (ncks, ncatted, ncrename, ncap2, ncra, ncrcat, ncwa, ncpdq, ncbo, ncflint,
# nces, ncecat) run once natively and once with every *.nc a zarr store (rule [path *.nc] + format = zarr);
# ncdump of each output must be the native one's, and every output written through the connector must be a
# pointer with its store beside it. NCO writes each output to out.nc.pid<N>.<program>.tmp and renames it
# over out.nc before it exits: no orphan store may be left by an overwrite; edits in place and appends go
# to the store; a file-level copy edited in place leaves its original unchanged.
#
# Debian's NCO links Debian's netCDF (libnetcdf.so.19, HDF5 1.10, no VOL). It runs here on the deps'
# netCDF-C 4.9.3 and HDF5 1.14 (tests/netcdf/debian_on_deps.sh). The test checks that NCO reports the
# deps' netCDF version, so it never passes by running Debian's libraries. Skipped when NCO is not installed.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR
command -v ncks >/dev/null 2>&1 || { echo "skipped: NCO (Debian package nco) not installed"; exit 77; }
NCKS=$(command -v ncks)
cd "$TMP"

# ---- NCO on the deps' netCDF and HDF5
. "$H5ZARR_SRC/tests/netcdf/debian_on_deps.sh"
debian_on_deps "$NCKS"
linked=$(ncks -r 2>&1 | sed -n 's/^Linked to netCDF library version \([^ ]*\) .*/\1/p')
[ "$linked" = "$NCVER" ] || fail "NCO does not run on the deps' netCDF $NCVER: it reports '$linked'"
pass "NCO $(ncks --version 2>&1 | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -1) runs on the deps' netCDF $NCVER"

# ---- a CF file: unlimited time, coordinates, a fill value with a missing cell, a packed variable, a group
sed '$d' "$H5ZARR_SRC/tests/netcdf/cf_grid.cdl" >cf.cdl
cat >>cf.cdl <<'CDL'

group: g1 {
  dimensions:
	n = 3 ;
  variables:
	int counts(n) ;
  data:
	counts = 7, 8, 9 ;
  }
}
CDL
ncgen -4 -o cf.nc cf.cdl || fail "ncgen -4 cf.nc"

# dump FILE [CONNECTOR]: ncdump with the file's own name, NCO's history and version lines left out
dump() {
    local f=$1
    shift
    "$@" "$ND" "$f" | sed -e '1d' -e '/:history = /,/;$/d' -e '/:history_of_appended_files = /,/;$/d' \
        -e '/:NCO = /d'
}
# is_pointer NAME: a pointer file (native HDF5, small) with a zarr store beside it
is_pointer() {
    local f=$1 s
    is_h5 "$f" || return 1
    [ "$(stat -c %s "$f")" -lt 8192 ] || return 1
    s=$(ls -d "$f".*zarr "$f".zarr 2>/dev/null | head -1)
    [ -n "$s" ] && [ -f "$s/zarr.json" -o -f "$s/.zgroup" ]
}

# op "COMMAND": IN, IN2 and OUT replaced by fresh native and connector files (IN, IN2: cf.nc copied by cp
# and by nccopy through the connector);
# the output (OUT, or IN for an edit in place) must dump as natively, the connector's a pointer.
n_ops=0
op() {
    local cmd=$1 c out r1 r2
    rm -rf n_* z_*
    cp cf.nc n_in.nc && cp cf.nc n_in2.nc
    zrun nccopy cf.nc z_in.nc && zrun nccopy cf.nc z_in2.nc || fail "nccopy cf.nc through the connector"
    is_pointer z_in.nc || fail "nccopy made no store of z_in.nc"
    c=${cmd//IN2/n_in2.nc}; c=${c//IN/n_in.nc}; c=${c//OUT/n_out.nc}
    r1=0; eval "$c" >n_log 2>&1 || r1=$?
    c=${cmd//IN2/z_in2.nc}; c=${c//IN/z_in.nc}; c=${c//OUT/z_out.nc}
    r2=0; eval "zrun $c" >z_log 2>&1 || r2=$?
    [ "$r1" = 0 ] || fail "natively: $cmd: exit $r1: $(head -3 n_log)"
    [ "$r2" = 0 ] || fail "through the connector: $cmd: exit $r2: $(head -3 z_log)"
    out=out
    [[ "$cmd" == *OUT* ]] || out=in
    is_pointer z_$out.nc || fail "$cmd: z_$out.nc is not a pointer with its store: $(ls -la)"
    dump n_$out.nc >n_cdl && dump z_$out.nc zrun >z_cdl && grep -q '^ *data:' n_cdl || fail "$cmd: no ncdump"
    diff n_cdl z_cdl >d_log || fail "$cmd: ncdump differs from native's: $(head -20 d_log)"
    n_ops=$((n_ops + 1))
}
op "ncks -O IN OUT"
op "ncks -O -d time,0,1 -v tas IN OUT"
op "ncks -O -d lat,1,2 -d lon,0,3,2 IN OUT"
op "ncks -O -4 -L 1 --cnk_dmn lat,2 IN OUT"
op "ncks -O --fix_rec_dmn time IN OUT"
op "ncks -O --mk_rec_dmn lat IN OUT"
op "ncks -O -C -x -v pr IN OUT"
op "ncks -O -G g1 IN OUT"
op "ncks -O --ppc tas=3 IN OUT"
op "ncks -A -v tas IN2 IN"
op "ncatted -O -a units,tas,o,c,degC IN OUT"
op "ncatted -a units,tas,o,c,degC -a comment,global,c,c,edited IN"
op "ncatted -O -a ,global,d,, IN OUT"
op "ncrename -O -v tas,tas2 -d lat,latitude IN OUT"
op "ncrename -O -v lon,longitude IN OUT"
op "ncrename -O -d time,t IN OUT"
op "ncrename -v lat,latitude IN"
op "ncrename -O -a tas@units,unit IN OUT"
op "ncap2 -O -s 'tas3=tas*2' IN OUT"
op "ncwa -O -a time IN OUT"
op "ncra -O IN OUT"
op "ncrcat -O IN IN2 OUT"
op "ncpdq -O -a lon,lat IN OUT"
op "ncpdq -O -P all_new IN OUT"
op "ncbo -O --op_typ=sbt IN IN2 OUT"
op "ncflint -O -w 0.3,0.7 IN IN2 OUT"
op "nces -O IN IN2 OUT"
op "ncecat -O IN IN2 OUT"
pass "$n_ops NCO commands give the native output through the connector (each a pointer with its store)"

# ---- overwrites through NCO's temporary names leave one store per output
rm -rf o.nc*
for i in 1 2 3; do zrun ncks -O cf.nc o.nc || fail "ncks -O cf.nc o.nc (run $i)"; done
zrun ncks -O -v tas o.nc o.nc || fail "ncks -O -v tas o.nc o.nc (the input overwritten)"
[ "$(ls -d o.nc*.zarr | wc -l)" = 1 ] || fail "overwrites left orphan stores: $(ls -d o.nc*)"
diff <(ncks -O -v tas cf.nc n_o.nc && dump n_o.nc) <(dump o.nc zrun) || fail "o.nc after the overwrites"
pass "four overwrites of o.nc through NCO's temporary names leave exactly one store"

# ---- a file-level copy edited in place: the original's store is not written
rm -rf a.nc* b.nc*
zrun ncks -O cf.nc a.nc || fail "ncks -O cf.nc a.nc"
cp a.nc b.nc
zrun ncatted -a units,tas,o,c,degC b.nc || fail "ncatted in place on the copy b.nc"
dump a.nc zrun | grep -q 'tas:units = "K"' || fail "editing the copy b.nc changed a.nc"
dump b.nc zrun | grep -q 'tas:units = "degC"' || fail "the edit of b.nc is not in b.nc"
[ "$(ls -d a.nc*.zarr | wc -l)" = 1 ] && [ "$(ls -d b.nc*.zarr | wc -l)" = 1 ] ||
    fail "the copy has no store of its own: $(ls -d a.nc* b.nc*)"
pass "ncatted in place on a cp of a pointer writes the copy's own store, the original unchanged"
finish
