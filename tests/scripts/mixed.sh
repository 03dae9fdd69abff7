#!/usr/bin/env bash
# Mixed mode, read by others: tests/hdf5/test_mixed.c (one process under one global
# HDF5_VOL_CONNECTOR reads a native .h5, writes a .zarr store and a new native .h5, copies objects and
# links between them) run twice, for a v3 store read by zarrita and a v2 store read by zarr-python 2.13.
. "$(dirname "$0")/../lib.sh"
BIN=$H5ZARR_BUILD/tests/test_mixed
[ -x "$BIN" ] || fail "test_mixed not built"
for v in 3 2; do
    mkdir -p "$TMP/v$v"
    HDF5_VOL_CONNECTOR="zarr version=$v" H5ZARR_MIXED_OUT=$TMP/v$v "$BIN" >"$TMP/v$v.log" 2>&1 ||
        { cat "$TMP/v$v.log"; fail "test_mixed (version=$v)"; }
    is_h5 "$TMP/v$v/out.h5" || fail "out.h5 (version=$v) is not a native HDF5 file"
done
grep -q '"zarr_format": *3' "$TMP/v3/out.zarr/zarr.json" || fail "no zarr v3 store came out"
grep -q '"zarr_format": *2' "$TMP/v2/out.zarr/.zgroup" || fail "no zarr v2 store came out"
pass "one process wrote a v3 and a v2 store next to native files, under one global setting"

node "$INTEROP/zarrita_dump.mjs" "$TMP/v3/out.zarr" /doubled /copied/d /bare >"$TMP/zarrita.json" ||
    fail "zarrita could not read the mixed store"
$PY - "$TMP/zarrita.json" <<'PY' || fail "zarrita values"
import json, sys
d = json.load(open(sys.argv[1]))
base = [i * 10 - 5 for i in range(24)]
assert d["/doubled"]["shape"] == [4, 6] and d["/doubled"]["data"] == [2 * v for v in base], d["/doubled"]
assert d["/copied/d"]["dtype"] == "int32" and d["/copied/d"]["data"] == base, d["/copied/d"]
assert d["/copied/d"]["attrs"]["triple"] == [7, 8, 9], d["/copied/d"]["attrs"]
assert "triple" not in d["/bare"]["attrs"] and d["/bare"]["data"] == base, d["/bare"]
PY
pass "zarrita reads what the mixed process wrote (written, H5Ocopy'd from native, attributes)"

$PY - "$TMP/v2/out.zarr" <<'PY' || fail "zarr-python values"
import sys, zarr
g = zarr.open_group(sys.argv[1], mode="r")
base = [i * 10 - 5 for i in range(24)]
assert g["doubled"].shape == (4, 6) and g["doubled"][:].ravel().tolist() == [2 * v for v in base]
d = g["copied/d"]
assert d.dtype.str == ">i4" and d[:].ravel().tolist() == base, (d.dtype, d[:])
assert list(d.attrs["triple"]) == [7, 8, 9], dict(d.attrs)
assert g["bare"][:].ravel().tolist() == base
PY
pass "zarr-python 2.13 reads the v2 store the mixed process wrote"
finish
