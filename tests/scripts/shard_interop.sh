#!/usr/bin/env bash
# Sharded stores written through the connector, read by others: tests/hdf5/test_shard.c's interop_store
# writes sharded.zarr (shard_bytes, H5Pset_zarr_shard, deflate and zstd inner codecs, a partly written
# array with a fill value); zarrita reads every array with the values the program wrote; h5ls -r lists
# it, h5dump -p shows the inner chunk as the HDF5 chunk with the inner codecs as filters and prints the
# values; h5repack makes a native file with those chunks and filters that h5diff finds equal.
. "$(dirname "$0")/../lib.sh"
BIN=$H5ZARR_BUILD/tests/test_shard
[ -x "$BIN" ] || fail "test_shard not built"
unset HDF5_VOL_CONNECTOR
cd "$TMP"
H5ZARR_SHARD_OUT=$TMP "$BIN" interop_store >write.log 2>&1 || { cat write.log; fail "test_shard interop_store"; }
S=$TMP/sharded.zarr
grep -q '"sharding_indexed"' "$S/grid/zarr.json" || fail "grid is not sharded"
grep -q '"sharding_indexed"' "$S/ids/zarr.json" && grep -q '"sharding_indexed"' "$S/part/zarr.json" ||
    fail "ids / part are not sharded"
pass "the connector wrote a sharded v3 store (shard_bytes and H5Pset_zarr_shard)"

# ---- zarrita: the values the program wrote
node "$INTEROP/zarrita_read.mjs" "$S" /grid /ids /part >zarrita.json || fail "zarrita could not read the store"
$PY - zarrita.json <<'PY' || fail "zarrita values"
import json, sys
d = json.load(open(sys.argv[1]))
g = d["/grid"]
assert g["shape"] == [40, 30] and g["dtype"] == "float64", (g["shape"], g["dtype"])
assert g["data"] == [i * 0.5 - j for i in range(40) for j in range(30)], g["data"][:10]
ids = d["/ids"]
assert ids["dtype"] == "int64" and [int(v) for v in ids["data"]] == [(i * i) % 9973 for i in range(1000)]
p = d["/part"]
want = [(i * 20 + j) if 3 <= i < 14 and 11 <= j < 20 else -1 for i in range(20) for j in range(20)]
assert p["dtype"] == "int16" and p["data"] == want, p["data"][:40]
PY
pass "zarrita reads the sharded arrays with the values written (deflate and zstd inner chunks, fill -1)"

# ---- HDF5's tools through the connector
export HDF5_VOL_CONNECTOR=zarr
h5ls -r "$S" >ls.out || fail "h5ls -r"
grep -q '^/grid *Dataset {40, 30}$' ls.out && grep -q '^/ids *Dataset {1000}$' ls.out &&
    grep -q '^/part *Dataset {20, 20}$' ls.out || { cat ls.out; fail "h5ls -r listing"; }
pass "h5ls -r lists the sharded datasets"

h5dump -p -H "$S" >dump.h || fail "h5dump -p -H"
# the HDF5 chunk of each dataset is its inner chunk, the filters are the inner codecs'
$PY - dump.h <<'PY' || { cat dump.h; fail "h5dump -p: chunks / filters"; }
import re, sys
t = open(sys.argv[1]).read()
def block(name):
    m = re.search(r'DATASET "%s" \{(.*?)\n   \}' % name, t, re.S)
    assert m, name
    return m.group(1)
g, i, p = block("grid"), block("ids"), block("part")
assert "CHUNKED ( 4, 5 )" in g and re.search(r"COMPRESSION DEFLATE \{ LEVEL 1 \}", g), g
assert "CHUNKED ( 50 )" in i and "NONE" in i.split("FILTERS")[1].split("}")[0], i
assert "CHUNKED ( 5, 5 )" in p and "32015" in p and re.search(r"FILLVALUE \{\s*FILL_TIME \S+\s*VALUE\s+-1", p), p
PY
pass "h5dump -p: HDF5 chunk = inner chunk (4x5, 50, 5x5), filters = inner codecs (deflate 1, none, zstd)"

h5dump -d /ids -s 990 -c 10 -w 0 "$S" >dump.ids || fail "h5dump -d /ids"
want=$($PY -c 'print(", ".join(str((i * i) % 9973) for i in range(990, 1000)))')
grep -q "(990): $want" dump.ids || { cat dump.ids; fail "h5dump -d /ids values (want $want)"; }
h5dump -d /part -s 13,10 -c 2,3 -w 0 "$S" >dump.part || fail "h5dump -d /part"
grep -q "(13,10): -1, 271, 272" dump.part && grep -q "(14,10): -1, -1, -1" dump.part ||
    { cat dump.part; fail "h5dump -d /part values"; }
pass "h5dump prints the values of hyperslabs of the sharded datasets"

# ---- h5repack to a native file: the inner chunk and filters carry over, h5diff finds no difference
h5repack "$S" native.h5 || fail "h5repack sharded store -> native"
is_h5 native.h5 || fail "h5repack did not write a native HDF5 file"
unset HDF5_VOL_CONNECTOR
h5dump -p -H native.h5 >dump.native || fail "h5dump native.h5"
grep -q "CHUNKED ( 4, 5 )" dump.native && grep -q "CHUNKED ( 5, 5 )" dump.native || { cat dump.native; fail "native chunks"; }
HDF5_VOL_CONNECTOR=zarr h5diff "$S" native.h5 || fail "h5diff sharded store vs its native repack"
pass "h5repack to native keeps the inner chunks and filters; h5diff finds the two equal"
finish
