#!/usr/bin/env bash
# Stores written by an HDF5 program through the connector (tests/hdf5/test_vol_interop.c: every
# integer width at its extremes, float32/64 with NaN fill, the bool enum, fixed and vlen strings, a
# compound, overhanging edge chunks, user fill values, attributes of several kinds), read by other
# zarr implementations: zarrita (v3 store) and zarr-python 2.13 (v2 store), with equal values and
# natural attributes. And the other way: a store netCDF writes through NCZarr (ncgen -4, netCDF's own
# filters) read through the connector by h5dump, values, attributes and filters.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR
BIN=$H5ZARR_BUILD/tests/test_vol_interop
[ -x "$BIN" ] || fail "test_vol_interop not built"
H5ZARR_INTEROP_OUT=$TMP "$BIN" >"$TMP/writer.log" 2>&1 || { cat "$TMP/writer.log"; fail "writer"; }
grep -q '"zarr_format": *3' "$TMP/v3.zarr/zarr.json" || fail "no zarr v3 store: the connector did not load"
grep -q '"zarr_format": *2' "$TMP/v2.zarr/.zgroup" || fail "no zarr v2 store"
pass "an HDF5 program wrote a v3 and a v2 store through the connector and read them back"

# ---- zarrita reads the v3 store
node "$INTEROP/zarrita_dump.mjs" "$TMP/v3.zarr" / /ints/i8 /ints/i16 /ints/i32 /ints/i64 /ints/u8 /ints/u16 \
    /ints/u32 /ints/u64 /floats/f32 /floats/f64 /flags /strings/vlen >"$TMP/zarrita.json" ||
    fail "zarrita could not read the v3 store"
$PY - "$TMP/zarrita.json" "$TMP/v3.zarr" <<'PY' || fail "zarrita values (v3)"
import json, sys
d = json.load(open(sys.argv[1]))
F = 42
def ints(lo, hi): return [lo, -1, 0, 1, hi, F, F]
def s(v): return [str(x) for x in v]       # zarrita prints 64-bit integers as strings
want = {
    "/ints/i8": ("int8", ints(-128, 127)), "/ints/i16": ("int16", ints(-32768, 32767)),
    "/ints/i32": ("int32", ints(-2**31, 2**31 - 1)), "/ints/i64": ("int64", s(ints(-2**63, 2**63 - 1))),
    "/ints/u8": ("uint8", [0, 1, 2, 254, 255, F, F]), "/ints/u16": ("uint16", [0, 1, 2, 65534, 65535, F, F]),
    "/ints/u32": ("uint32", [0, 1, 2, 2**32 - 2, 2**32 - 1, F, F]),
    "/ints/u64": ("uint64", s([0, 1, 2, 2**64 - 2, 2**64 - 1, F, F])),
}
for p, (dt, vals) in want.items():
    a = d[p]
    assert a["kind"] == "array" and a["dtype"] == dt, (p, a["dtype"])
    assert a["shape"] == [7] and a["chunks"] == [3], (p, a["shape"], a["chunks"])
    assert a["data"] == vals, (p, a["data"])
f32 = d["/floats/f32"]
assert f32["dtype"] == "float32" and f32["shape"] == [5, 3] and f32["chunks"] == [2, 2]
assert f32["data"] == [i + 0.5 for i in range(12)] + ["NaN"] * 3, f32["data"]
assert f32["attrs"]["units"] == "K" and f32["attrs"]["scale_factor"] == 0.01, f32["attrs"]
f64 = d["/floats/f64"]["data"]
want64 = [k * 0.25 - 1.0 for k in range(12)]
want64[1], want64[2] = 1e300, -2.5e-300
assert f64 == want64 + ["NaN"] * 3, f64
fl = d["/flags"]
assert fl["dtype"] == "bool" and fl["data"] == [True, False, True, True, False, False, False], fl
vs = d["/strings/vlen"]
assert vs["data"][:5] == ["alpha", "\u03b2-beta", "", "gamma delta", "end"], vs["data"]
# attributes: natural JSON; the connector's own records are no attribute (a top-level _h5zarr key)
ra = d["/"]["attrs"]
assert ra["title"] == "h5zarr interop" and ra["count"] == 7, ra
assert ra["valid_range"] == [-1.5, 2.25] and ra["matrix"] == [[1, 2, 3], [4, 5, 6]], ra
assert ra["missing"] == "NaN" and ra["axes"] == ["x", "y", "z"] and ra["enabled"] is True, ra
assert set(ra) == {"title", "count", "big", "ubig", "valid_range", "matrix", "missing", "axes", "enabled"}, \
    sorted(ra)
# 64-bit extremes exactly (JavaScript numbers can't hold them; read the JSON with Python)
raw = json.load(open(sys.argv[2] + "/zarr.json"))["attributes"]
assert raw["big"] == 2**63 - 1 and raw["ubig"] == 2**64 - 1, (raw["big"], raw["ubig"])
# the fill values are in the metadata
assert json.load(open(sys.argv[2] + "/ints/u64/zarr.json"))["fill_value"] == 42
assert json.load(open(sys.argv[2] + "/floats/f32/zarr.json"))["fill_value"] == "NaN"
print("zarrita v3 ok")
PY
pass "zarrita reads the v3 store: integers at their extremes, NaN fill, bool, vlen strings, attributes"

# fixed-length strings and compounds use zarr v3 extension data types (null_terminated_bytes, struct)
# that zarrita does not implement; when it does, its values must be right.
for p in /strings/fixed /records; do
    if node "$INTEROP/zarrita_dump.mjs" "$TMP/v3.zarr" $p >"$TMP/ext.json" 2>/dev/null; then
        $PY - "$TMP/ext.json" $p <<'PY' || fail "zarrita reads $p with wrong values"
import json, sys
d = json.load(open(sys.argv[1]))[sys.argv[2]]
print(sys.argv[2], d["dtype"], d["data"][:5])
assert d["shape"] == [7]
PY
    else
        echo "note: zarrita cannot read $p ($(grep -o '"name": *"[a-z_]*"' "$TMP/v3.zarr$p/zarr.json" | head -1))"
    fi
done
python3 -c "import json;assert json.load(open('$TMP/v3.zarr/strings/fixed/zarr.json'))['data_type']['name'] == 'null_terminated_bytes'" ||
    fail "fixed strings: unexpected v3 data type"

# ---- zarr-python 2.13 reads the v2 store
$PY - "$TMP/v2.zarr" <<'PY' || fail "zarr-python values (v2)"
import math, sys
import numpy as np, zarr
assert zarr.__version__.startswith("2."), zarr.__version__
g = zarr.open_group(sys.argv[1], mode="r")
F = 42
def ints(lo, hi): return [lo, -1, 0, 1, hi, F, F]
want = {
    "ints/i8": ("int8", ints(-128, 127)), "ints/i16": ("int16", ints(-32768, 32767)),
    "ints/i32": ("int32", ints(-2**31, 2**31 - 1)), "ints/i64": ("int64", ints(-2**63, 2**63 - 1)),
    "ints/u8": ("uint8", [0, 1, 2, 254, 255, F, F]), "ints/u16": ("uint16", [0, 1, 2, 65534, 65535, F, F]),
    "ints/u32": (">u4", [0, 1, 2, 2**32 - 2, 2**32 - 1, F, F]),
    "ints/u64": ("uint64", [0, 1, 2, 2**64 - 2, 2**64 - 1, F, F]),
}
for p, (dt, vals) in want.items():
    a = g[p]
    assert a.dtype == np.dtype(dt), (p, a.dtype)
    assert a.shape == (7,) and a.chunks == (3,) and a.fill_value == F, (p, a.shape, a.chunks, a.fill_value)
    assert a[...].tolist() == vals, (p, a[...].tolist())
f32 = g["floats/f32"]
assert f32.dtype == np.float32 and f32.shape == (5, 3) and f32.chunks == (2, 2) and math.isnan(f32.fill_value)
v = f32[...]
assert v[:4].ravel().tolist() == [i + 0.5 for i in range(12)] and np.isnan(v[4]).all(), v
assert dict(f32.attrs)["units"] == "K" and dict(f32.attrs)["scale_factor"] == 0.01
v = g["floats/f64"][...]
want64 = [k * 0.25 - 1.0 for k in range(12)]
want64[1], want64[2] = 1e300, -2.5e-300
assert v[:4].ravel().tolist() == want64 and np.isnan(v[4]).all(), v
fl = g["flags"]
assert fl.dtype == np.bool_ and fl[...].tolist() == [True, False, True, True, False, False, False]
vs = g["strings/vlen"][...].tolist()
assert vs[:6] == ["alpha", "\u03b2-beta", "", "gamma delta", "end", ""], vs
assert vs[6] in ("", None), vs  # in a chunk never written: the v2 fill_value null reads as None
fx = g["strings/fixed"]
# element 6 is in a chunk never written: no fill value (v2 null, HDF5's default fill), so zarr-python
# leaves it uninitialised (docs/FORMAT.md "Fill values"); the padded rest of chunk 1 is stored zeros
assert fx.dtype == np.dtype("S6") and fx.fill_value is None, (fx.dtype, fx.fill_value)
assert fx[...].tolist()[:6] == [b"ab", b"cdef", b"", b"xyzuv", b"q", b""], fx[...]
rec = g["records"]
# HDF5's layout (a C struct: 24 bytes, value at 8, flag at 16), the padding as void fields
assert rec.dtype.names == ("id", "_h5zarr_pad4", "value", "flag", "_h5zarr_pad18"), rec.dtype
assert rec.dtype.itemsize == 24 and rec.dtype.fields["value"][1] == 8 and rec.dtype.fields["flag"][1] == 16, rec.dtype
r = rec[...][["id", "value", "flag"]].tolist()
assert r[:5] == [(i * 10, i + 0.125, -i) for i in range(5)] and r[5:] == [(-1, -1.5, -1)] * 2, r
rb = g["records_be"]  # big-endian members: the chunk bytes must be in the order the dtype says
assert rb.dtype == np.dtype([("id", ">i4"), ("value", ">f8"), ("flag", "<i2")]), rb.dtype
r = rb[...].tolist()
assert r[:5] == [(1153 + i, 53.25 * (i + 1), 0x0102 * (i + 1)) for i in range(5)], r
assert r[5:] == [(-1, -1.5, -1)] * 2, r
ra = {k: v for k, v in g.attrs.items()}
assert ra["title"] == "h5zarr interop" and ra["count"] == 7, ra
assert ra["big"] == 2**63 - 1 and ra["ubig"] == 2**64 - 1, ra
assert ra["valid_range"] == [-1.5, 2.25] and ra["matrix"] == [[1, 2, 3], [4, 5, 6]], ra
assert ra["missing"] == "NaN" and ra["axes"] == ["x", "y", "z"] and ra["enabled"] is True, ra
print("zarr-python v2 ok")
PY
pass "zarr-python 2.13 reads the v2 store: all dtypes incl. fixed strings and the compounds (one with big-endian members), natural attributes"

# ---- the connector reads what zarrita and h5dump agree on: h5dump of both stores prints the same data
h5dump --vol-name=zarr -d /ints/i64 -d /records "$TMP/v3.zarr" | sed '1s/.*//' >"$TMP/d3" || fail "h5dump v3"
h5dump --vol-name=zarr -d /ints/i64 -d /records "$TMP/v2.zarr" | sed '1s/.*//' >"$TMP/d2" || fail "h5dump v2"
diff -u "$TMP/d3" "$TMP/d2" || fail "h5dump of the v3 and v2 stores differ"
grep -q -- '-9223372036854775808' "$TMP/d3" || fail "h5dump: int64 minimum missing"
pass "h5dump prints the same for the v3 and the v2 store"

# ---- NCZarr writes (netCDF's plugins only on the path: NCZarr refuses a folder with the VOL plugin in
# it), the connector reads: shuffle + deflate, zstd and bzip2 in NCZarr's spelling, a group, attributes
cat >"$TMP/nc.cdl" <<'CDL'
netcdf nc {
dimensions: x = 6 ; y = 4 ;
variables:
  short temp(x, y) ; temp:units = "K" ; temp:_Storage = "chunked" ; temp:_ChunkSizes = 4, 3 ;
    temp:_DeflateLevel = 2 ; temp:_Shuffle = "true" ;
  double z(x) ; z:_Storage = "chunked" ; z:_ChunkSizes = 4 ; z:_Filter = "32015,3" ;
  :title = "written by NCZarr" ;
data:
  temp = 0s, 1s, 2s, 3s, 4s, 5s, 6s, 7s, 8s, 9s, 10s, 11s, 12s, 13s, 14s, 15s, 16s, 17s, 18s, 19s, 20s,
    21s, 22s, -32767s ;
  z = 0.5, -1.25, 1e300, -Infinity, NaN, 6 ;
group: sub {
  variables: int n(x) ; n:_Storage = "chunked" ; n:_ChunkSizes = 5 ; n:_Filter = "307,9" ;
  data: n = -2147483647, -1, 0, 1, 2147483647, 42 ;
}
}
CDL
HDF5_PLUGIN_PATH="$H5ZARR_DEPS/netcdf/hdf5/lib/plugin" \
    LD_LIBRARY_PATH="$H5ZARR_DEPS/netcdf/lib:$H5ZARR_DEPS/hdf5/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ncgen -4 -o "file://$TMP/nc.zarr#mode=zarr,file" "$TMP/nc.cdl" ||
    fail "ncgen could not write the NCZarr store"
grep -q '"id": "shuffle", "elementsize": "0"' "$TMP/nc.zarr/temp/.zarray" ||
    fail "NCZarr no longer writes the shuffle this test is about: $(cat "$TMP/nc.zarr/temp/.zarray")"
h5dump --vol-name=zarr -p -A 0 -d /temp -d /z -d /sub/n "$TMP/nc.zarr" >"$TMP/nc.dump" 2>&1 ||
    { cat "$TMP/nc.dump"; fail "h5dump through the connector could not read the NCZarr store"; }
h5dump --vol-name=zarr -a /title -a /temp/units "$TMP/nc.zarr" >"$TMP/nc.attrs" 2>&1 || fail "h5dump attributes"
$PY - "$TMP/nc.dump" "$TMP/nc.attrs" <<'PY' || { cat "$TMP/nc.dump"; fail "NCZarr store through the connector"; }
import re, sys
text, attrs = open(sys.argv[1]).read(), open(sys.argv[2]).read()
def data(name):
    block = text.split(f'DATASET "{name}"', 1)[1].split("DATA {", 1)[1].split("}", 1)[0]
    return [v.strip() for v in re.sub(r"\(\d+(,\d+)*\):", " ", block).replace("\n", " ").split(",") if v.strip()]
def block(name):
    return text.split(f'DATASET "{name}"', 1)[1].split("DATA {", 1)[0]
assert data("/temp") == [str(i) for i in range(23)] + ["-32767"], data("/temp")
assert data("/z") == ["0.5", "-1.25", "1e+300", "-inf", "nan", "6"], data("/z")
assert data("/sub/n") == ["-2147483647", "-1", "0", "1", "2147483647", "42"], data("/sub/n")
t = block("/temp")
assert "H5T_STD_I16LE" in t and "CHUNKED ( 4, 3 )" in t, t
assert "SHUFFLE" in t and re.search(r"DEFLATE\s*{\s*LEVEL 2", t), t   # the "0" element size, read right
assert "32015" in block("/z") and "307" in block("/sub/n"), (block("/z"), block("/sub/n"))
assert '"written by NCZarr"' in attrs and '"K"' in attrs, attrs
print("NCZarr store ok")
PY
pass "the connector reads an NCZarr store (shuffle + deflate, zstd, bzip2, a group, attributes): h5dump values and filters"
finish
