#!/usr/bin/env bash
# The first end-to-end slice: an unmodified HDF5 program (examples/write_field.c) run with
# HDF5_VOL_CONNECTOR=zarr writes a zarr v3 store; h5dump prints the same as for the native file the
# same program writes without the variable; zarrita reads the same values and attributes.
. "$(dirname "$0")/../lib.sh"

"$EXAMPLES/write_field" "$TMP/native.h5" >/dev/null || fail "write_field (native)"
HDF5_VOL_CONNECTOR=zarr "$EXAMPLES/write_field" "$TMP/field.zarr" >/dev/null || fail "write_field (zarr)"

# A zarr store came out (HDF5 silently falls back to native when the connector fails to load).
[ -d "$TMP/field.zarr" ] || fail "no store directory: the connector did not load"
$PY - "$TMP/field.zarr" <<'PY' || fail "store layout"
import json, os, sys
root = sys.argv[1]
g = json.load(open(os.path.join(root, "zarr.json")))
assert g["zarr_format"] == 3 and g["node_type"] == "group", g
a = json.load(open(os.path.join(root, "model/temperature/zarr.json")))
assert a["node_type"] == "array" and a["shape"] == [10, 7], a
assert a["data_type"] == "float64", a["data_type"]
assert a["chunk_grid"]["configuration"]["chunk_shape"] == [4, 3], a["chunk_grid"]
assert [c["name"] for c in a["codecs"]] == ["bytes"], a["codecs"]
# 3 x 3 chunks with keys c/i/j
keys = sorted(os.path.relpath(os.path.join(d, f), os.path.join(root, "model/temperature"))
              for d, _, fs in os.walk(os.path.join(root, "model/temperature")) for f in fs if f != "zarr.json")
want = sorted(f"c/{i}/{j}" for i in range(3) for j in range(3))
assert keys == want, keys
# every chunk is a whole 4x3 float64 chunk (edge chunks overhang)
for k in keys:
    assert os.path.getsize(os.path.join(root, "model/temperature", k)) == 4 * 3 * 8, k
print("layout ok")
PY
pass "write_field made a zarr v3 store with c/i/j chunk keys and the bytes codec"

# h5dump: identical output apart from the file name.
h5dump "$TMP/native.h5" | sed "s|$TMP/native.h5|FILE|" >"$TMP/native.dump" || fail "h5dump native"
HDF5_VOL_CONNECTOR=zarr h5dump "$TMP/field.zarr" | sed "s|$TMP/field.zarr|FILE|" >"$TMP/zarr.dump" ||
    fail "h5dump zarr"
diff -u "$TMP/native.dump" "$TMP/zarr.dump" || fail "h5dump differs between native and zarr"
grep -q '"units"' "$TMP/zarr.dump" || fail "h5dump shows no attributes"
pass "h5dump of the zarr store equals h5dump of the native file"

# zarrita reads the array and the attributes with equal values.
node "$INTEROP/zarrita_dump.mjs" "$TMP/field.zarr" /model /model/temperature >"$TMP/zarrita.json" ||
    fail "zarrita could not read the store"
$PY - "$TMP/zarrita.json" <<'PY' || fail "zarrita values"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["/model/temperature"]
assert t["shape"] == [10, 7] and t["dtype"] == "float64", (t["shape"], t["dtype"])
want = [273.15 + i * 1.5 - j * 0.25 for i in range(10) for j in range(7)]
assert t["data"] == want, "data differs"
assert t["attrs"]["units"] == "K", t["attrs"]
assert t["attrs"]["step"] == 42, t["attrs"]
assert t["attrs"]["valid_range"] == [200.5, 330.25], t["attrs"]
assert d["/model"]["attrs"]["title"] == "h5zarr demo model", d["/model"]["attrs"]
print("zarrita ok")
PY
pass "zarrita reads the same values and attributes"
finish
