#!/usr/bin/env bash
# netCDF dimensions without a coordinate variable (issue 27, "Readers see plain zarr"; docs/FORMAT.md
# "Dimension names"): tests/netcdf/nc_dimonly.c makes a file with such dimensions (bnds, x, and a second
# unlimited one, obs), appends along the unlimited dimensions with nc_open(NC_WRITE), renames bnds to nv,
# and on a second file defines a coordinate variable for x after the fact. Natively and through the
# connector (rule *.nc -> zarr; v2 and v3, with and without consolidated=1) it must print the same
# names and values, and ncdump must agree. In the stores the dimension-only datasets keep their array
# document as .h5zarr_array (no .zarray / zarr.json: no node to zarr readers), the renamed one moved
# (nv, no bnds), the one that got a coordinate variable is an ordinary array again. xarray opens the v2
# stores (with and without consolidated metadata) assert_identical to the netCDF original; zarrita finds
# no node at the dimensions' paths in v3. A store written before (the dimension as a plain .zarray)
# still opens and appends.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR
cd "$TMP"
PROG=$H5ZARR_BUILD/tests/nc_dimonly
[ -x "$PROG" ] || fail "tests/nc_dimonly not built"
A=(create obs append rename) # file a: appends and the rename
C=(create coord)             # file c: a coordinate variable defined later
"$PROG" a.nc "${A[@]}" print >a.txt || fail "nc_dimonly natively (a)"
"$PROG" c.nc "${C[@]}" print >c.txt || fail "nc_dimonly natively (c)"
grep -q '^dim nv = 2$' a.txt && grep -q '^var o(obs) 7 8 2.5$' a.txt || fail "native run (a): $(cat a.txt)"
grep -q '^var x(x) @units 100 200 300 400$' c.txt || fail "native run (c): $(cat c.txt)"
# the document of node $2 in store $1: 'hidden', 'plain' or 'none'
form() {
    if [ -e "$1/$2/.h5zarr_array" ]; then
        [ ! -e "$1/$2/.zarray" ] && [ ! -e "$1/$2/zarr.json" ] || { echo both; return; }
        echo hidden
    elif [ -e "$1/$2/.zarray" ] || [ -e "$1/$2/zarr.json" ]; then echo plain; else echo none; fi
}
for v in 2 3; do
    for c in 0 1; do
        printf '[path *.nc]\nformat = zarr\nversion = %s\nconsolidated = %s\n' "$v" "$c" >r$v$c.conf
        export H5ZARR_CONFIG=$TMP/r$v$c.conf
        for f in a c; do
            z=z$v$c$f.nc
            if [ $f = a ]; then st=("${A[@]}"); else st=("${C[@]}"); fi
            HDF5_VOL_CONNECTOR=zarr "$PROG" $z "${st[@]}" print >$z.txt || fail "nc_dimonly $f (v$v consolidated=$c)"
            [ -d $z.zarr ] || fail "no store came out ($z)"
            diff $f.txt $z.txt || fail "v$v consolidated=$c: nc_dimonly $f prints other names or values than natively"
            diff <(ncdump $f.nc | sed 1d) <(HDF5_VOL_CONNECTOR=zarr ncdump $z | sed 1d) ||
                fail "v$v consolidated=$c: ncdump of $z differs from $f.nc's"
        done
        s=z$v${c}a.nc.zarr
        [ "$(form $s nv)" = hidden ] && [ "$(form $s obs)" = hidden ] && [ "$(form $s x)" = hidden ] ||
            fail "v$v consolidated=$c: nv/obs/x are $(form $s nv)/$(form $s obs)/$(form $s x), not hidden"
        [ ! -e $s/bnds ] || fail "v$v: the renamed dimension's old key bnds is still there"
        for k in time time_bnds lat t v o; do [ "$(form $s $k)" = plain ] || fail "v$v: $k is $(form $s $k)"; done
        s=z$v${c}c.nc.zarr
        [ "$(form $s x)" = plain ] && [ "$(form $s bnds)" = hidden ] ||
            fail "v$v consolidated=$c: x (coordinate variable now) is $(form $s x), bnds $(form $s bnds)"
        if [ $c = 1 ]; then
            if [ $v = 2 ]; then
                grep -q '"nv/.h5zarr_array"' z21a.nc.zarr/.zmetadata || fail "v2 .zmetadata lacks nv/.h5zarr_array"
                grep -q '"nv/.zarray"' z21a.nc.zarr/.zmetadata && fail "v2 .zmetadata shows nv as an array"
            else
                "$PY" - z31a.nc.zarr/zarr.json <<'PY' || fail "v3 consolidated metadata"
import json, sys
cm = json.load(open(sys.argv[1]))["consolidated_metadata"]
assert set(cm["h5zarr_hidden"]) == {"nv", "obs", "x"}, cm.get("h5zarr_hidden")
assert not {"nv", "obs", "x", "bnds"} & set(cm["metadata"]), sorted(cm["metadata"])
PY
            fi
        fi
    done
done
unset H5ZARR_CONFIG
pass "dimension-only datasets hidden from zarr readers; append, rename, coordinate variable later: same as native (v2, v3, consolidated or not)"

# ---- xarray (v2) and zarrita (v3)
if env -u HDF5_PLUGIN_PATH "$PY" -c 'import xarray, netCDF4' 2>/dev/null; then
    env -u HDF5_PLUGIN_PATH "$PY" - <<'PY' || fail "xarray: the v2 stores differ from the netCDF originals"
import xarray as xr
for f in ("a", "c"):
    nat = xr.open_dataset(f + ".nc").load()
    for c, cons in (("0", False), ("1", True), ("1", None)):
        z = xr.open_zarr(f"z2{c}{f}.nc.zarr", consolidated=cons).load()
        xr.testing.assert_identical(nat, z)
        assert "nv" not in z.variables and "obs" not in z.variables, list(z.variables)
PY
    pass "xarray.open_zarr of the v2 stores (consolidated or not) is assert_identical to the netCDF originals"
else
    echo "skipped: xarray check (python3-xarray / python3-netcdf4 missing)"
fi
if [ -e "$INTEROP/node_modules/zarrita" ] && command -v node >/dev/null; then
    for p in /nv /obs /x; do
        node "$INTEROP/zarrita_dump.mjs" z30a.nc.zarr $p >zr.json 2>zr.err && fail "zarrita found a node at $p"
        grep -q NotFoundError zr.err || fail "zarrita at $p: $(cat zr.err)"
    done
    node "$INTEROP/zarrita_dump.mjs" z30a.nc.zarr /time_bnds /o >zr.json || fail "zarrita: time_bnds, o"
    "$PY" - zr.json <<'PY' || fail "zarrita: dimension names"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["/time_bnds"]["dimension_names"] == ["time", "nv"], d["/time_bnds"]
assert d["/o"]["dimension_names"] == ["obs"] and d["/o"]["data"] == [7, 8, 2.5], d["/o"]
PY
    pass "zarrita (v3) finds no node at the dimensions' paths; the arrays name them"
else
    echo "skipped: zarrita check (tests/interop/node_modules missing)"
fi

# ---- a store written before: the dimension as a plain array (.zarray / zarr.json)
for v in 2 3; do
    cp -r z${v}0a.nc.zarr old$v.nc.zarr
    rm -f old$v.nc.zarr/.h5zarr_pointer # the copy is another store: a pointer of its own
    "$H5ZARR_BUILD/tools/h5zarr_pointer" old$v.nc old$v.nc.zarr || fail "h5zarr_pointer old$v.nc"
    for d in nv obs x; do mv old$v.nc.zarr/$d/.h5zarr_array old$v.nc.zarr/$d/$([ $v = 2 ] && echo .zarray || echo zarr.json); done
    export H5ZARR_CONFIG=$TMP/r${v}0.conf
    diff <(ncdump a.nc | sed 1d) <(HDF5_VOL_CONNECTOR=zarr ncdump old$v.nc | sed 1d) ||
        fail "v$v: a store with plain dimension arrays no longer reads the same"
    HDF5_VOL_CONNECTOR=zarr "$PROG" old$v.nc append print >old$v.txt || fail "v$v: appending to a store written before"
    grep -q '^dim time = 4 (unlimited)$' old$v.txt && grep -q '^var o(obs) 7 8 2.5 2.5$' old$v.txt ||
        fail "v$v: append to the store written before: $(cat old$v.txt)"
    for d in nv obs x; do [ "$(form old$v.nc.zarr $d)" != both ] || fail "v$v: $d has both documents"; done
    unset H5ZARR_CONFIG
done
pass "stores written before (dimension-only datasets as plain arrays) still read the same and append"
finish
