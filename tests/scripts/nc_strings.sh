#!/usr/bin/env bash
# netCDF `string` variables through the connector (issue 12). The connector once persisted the fill value
# of a variable-length string dataset (netCDF always sets one) as a raw pointer inside the encoded dcpl,
# so h5ls -r and h5dump of such a store crashed (SIGSEGV in H5T__vlen_mem_str_getlen). Checks, for zarr
# v3 and v2 stores written by ncgen -4: h5ls -r and h5dump -p succeed; the string data and the fill value
# (`_FillValue = "none"`: unwritten records read as it) equal h5dump of the netCDF-4 original; the fill
# value is data in `_h5zarr.fill` and zarr's fill_value; ncdump (through a pointer, docs/FORMAT.md)
# equals ncdump of the native file.
. "$(dirname "$0")/../lib.sh"
cd "$TMP"

cat >strs.cdl <<'CDL'
netcdf strs {
dimensions:
	x = 3 ;
	rec = UNLIMITED ;
variables:
	string s(x) ;
	string t ;
	string f(rec) ;
		f:_FillValue = "none" ;
	int r(rec) ;
		r:note = "a string attribute" ;
data:
 s = "alpha", "", "gamma \"quoted\"" ;
 t = "scalar" ;
 f = "one" ;
 r = 1, 2, 3 ;
}
CDL
ncgen -4 -o native.nc strs.cdl || fail "ncgen -4 (native)"
# the string datasets' types, data and fill values as h5dump shows them; the file name and the object
# references of DIMENSION_LIST (addresses vs paths, STD_REF_OBJECT vs STD_REF) and the storage details
# aside. strings_dump FILE [VAR=VALUE...]
strings_dump() {
    local f=$1
    shift
    env "$@" h5dump -p -d /s -d /t -d /f "$f" 2>&1 | sed 1d | grep -v -e 'H5T_REFERENCE' -e '(DATASET ' |
        awk '/STORAGE_LAYOUT|FILTERS|ALLOCATION_TIME/{skip=1} skip&&/^ *}/{skip=0; next} !skip'
}
strings_dump native.nc >native.dump || fail "h5dump -p of the native file"
grep -q '"one", "none", "none"' native.dump || fail "native h5dump: unexpected data of f: $(cat native.dump)"

for v in 3 2; do
    store=v$v.zarr
    HDF5_VOL_CONNECTOR="zarr version=$v" ncgen -4 -o $store strs.cdl || fail "ncgen -4 -o $store through the connector"
    [ -f $store/f/$([ $v = 3 ] && echo zarr.json || echo .zarray) ] || fail "$store: no zarr v$v array for f"
    HDF5_VOL_CONNECTOR=zarr h5ls -r $store >ls.txt 2>&1 || fail "h5ls -r $store: $(tail -3 ls.txt)"
    for d in '/s  *Dataset {3}' '/t  *Dataset {SCALAR}' '/f  *Dataset {3/Inf}'; do
        grep -q "^$d" ls.txt || fail "h5ls -r $store lacks '$d': $(cat ls.txt)"
    done
    HDF5_VOL_CONNECTOR=zarr h5dump $store >full.txt 2>&1 || fail "h5dump $store: $(tail -3 full.txt)"
    grep -q '"alpha", "", "gamma "quoted""' full.txt || fail "h5dump $store: strings of s missing"
    strings_dump $store HDF5_VOL_CONNECTOR=zarr >zarr.dump || fail "h5dump -p $store"
    diff native.dump zarr.dump || fail "h5dump -p of $store (strings, fill values) differs from the native file's"
    grep -q 'VALUE  "none"' zarr.dump || fail "h5dump -p $store: fill value of f is not \"none\""
    $PY - "$store" "$v" <<'PY' || fail "$store: the fill value is not data in the metadata"
import json, sys
store, v = sys.argv[1], sys.argv[2]
if v == "3":
    a = json.load(open(f"{store}/f/zarr.json")); fill, meta = a["fill_value"], a["_h5zarr"]
    assert meta["must_understand"] is False and "_h5zarr" not in a["attributes"], a
else:
    a = json.load(open(f"{store}/f/.zarray"))
    fill, meta = a["fill_value"], a["_h5zarr"]
assert fill == "none", fill
assert meta["fill"] == "none", meta
PY
    if [ $v = 2 ]; then
        # zarr-python 2.13 reads the strings and the fill
        $PY -c "
import zarr, sys
a = zarr.open_array('$store/f', mode='r')
assert list(a[:]) == ['one', 'none', 'none'], list(a[:])
assert a.fill_value == 'none', a.fill_value
" || fail "zarr-python 2.13 reading $store/f"
    fi
    pass "zarr v$v: ncgen -4 with string variables; h5ls -r and h5dump succeed; strings and fill equal the native file's"
done

# ncdump through a pointer (a rule sends *.nc to zarr): the same as the native file's ncdump
printf '[path *.nc]\nformat = zarr\n' >rules.conf
HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/rules.conf ncgen -4 -o p.nc strs.cdl || fail "ncgen -4 -o p.nc (rule)"
diff <(ncdump native.nc | sed 1d) <(HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/rules.conf ncdump p.nc | sed 1d) ||
    fail "ncdump p.nc differs from ncdump of the native file"
pass "ncdump of the string variables through the connector equals ncdump of the netCDF-4 original"
finish
