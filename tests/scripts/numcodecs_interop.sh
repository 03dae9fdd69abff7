#!/usr/bin/env bash
# Stores written by zarr-python 2.13 (Debian's /usr/bin/python3, numcodecs 0.11) with the numcodecs
# codecs beyond the common ones (issue 15: crc32, adler32, lzma, delta of every integer and float
# type, fixedscaleoffset, quantize, bitround, astype, packbits, categorize, zfpy), read through the connector
# with h5dump: every array's values equal what zarr-python itself reads back. And the connector's
# refusal of pickle names the reason in h5dump's error stack.
. "$(dirname "$0")/../lib.sh"
unset H5ZARR_CONFIG
cd "$TMP"
$PY - "$TMP" <<'PY' || { [ $? = 77 ] && { echo "skipped: zarr-python 2.13 not importable"; exit 77; }; fail "zarr-python writer"; }
import sys
try:
    import numpy as np, zarr, numcodecs
    from numcodecs import (CRC32, LZMA, Adler32, AsType, BitRound, Categorize, Delta, FixedScaleOffset,
                           PackBits, Pickle, Quantize)
except ImportError as e:
    print(e); sys.exit(77)
out = sys.argv[1]
g = zarr.open_group(out + "/nc.zarr", mode="w")
field = (np.sin(np.linspace(0, 20, 997)) * 100 + 50)
ramp = np.arange(997, dtype="<i4") * 7 - 300
arrays = {
    "crc32": (ramp, None, CRC32()),
    "adler32": (ramp.astype("<u2"), None, Adler32()),
    "lzma": (field, None, LZMA(preset=1)),
    "lzma_alone": (ramp, None, LZMA(format=2)),
    "fso": (field, [FixedScaleOffset(offset=-50, scale=1.0, dtype="<f8", astype="u1")], None),
    "fso_i2": (field.astype("<f4"), [FixedScaleOffset(offset=0.5, scale=100, dtype="<f4", astype="<i2")], LZMA()),
    "quantize": (field, [Quantize(digits=2, dtype="<f8")], CRC32()),
    "bitround": (field.astype("<f4"), [BitRound(keepbits=6)], None),
    "astype": (field, [AsType(encode_dtype="<f4", decode_dtype="<f8")], Adler32()),
}
for t in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8"):
    dt = ("|" if t[1] == "1" else "<") + t
    vals = (field * 3).astype(dt) if t[0] == "f" else (np.arange(997) * 37 % 251).astype(dt)
    arrays["delta_" + t] = (vals, [Delta(dtype=dt)], LZMA(preset=0))
for name, (vals, filters, comp) in arrays.items():
    a = g.create_dataset(name, shape=vals.shape, chunks=(100,), dtype=vals.dtype, filters=filters,
                         compressor=comp, fill_value=0)
    a[:] = vals
    back = a[:]
    back.astype(back.dtype.newbyteorder("<")).tofile(f"{out}/{name}.want")
# zfpy (python3-zfpy): chunks of 2 and 3 dims, a lossy and a reversible mode
try:
    from numcodecs import ZFPY
    z2 = g.create_dataset("zfpy_2d", shape=(60, 50), chunks=(16, 20), dtype="<f8",
                          compressor=ZFPY(mode=4, tolerance=0.001), fill_value=0)
    z2[:] = np.sin(np.arange(3000).reshape(60, 50) / 40.0)
    z3 = g.create_dataset("zfpy_3d", shape=(10, 12, 14), chunks=(5, 6, 7), dtype="<i4", compressor=ZFPY(),
                          fill_value=0)
    z3[:] = (np.arange(10 * 12 * 14).reshape(10, 12, 14) * 37) % 1001 - 500
    for a in (z2, z3):
        a[:].tofile(f"{out}/{a.basename}.want")
except ImportError:
    print("no zfpy: no zfpy arrays")
c = g.create_dataset("cat", shape=(40,), chunks=(16,), dtype="<U5", compressor=None,
                     filters=[Categorize(labels=["foo", "bar", "baz"], dtype="<U5")])
c[:] = np.array(["foo", "bar", "", "baz", "qux"] * 8, dtype="<U5")
import warnings
with warnings.catch_warnings():  # zarr 2.13: "missing object_codec" (categorize is the object codec)
    warnings.simplefilter("ignore")
    o = g.create_dataset("cat_obj", shape=(30,), chunks=(8,), dtype=object,
                         filters=[Categorize(labels=["foo", "bar", "baz"], dtype=object)])
o[:] = np.array(["foo", "bar", "", "baz", "qux", "foo"] * 5, dtype=object)
b = g.create_dataset("packbits", shape=(997,), chunks=(100,), dtype=bool, filters=[PackBits()],
                     compressor=None, fill_value=False)
b[:] = np.arange(997) % 3 == 0
open(f"{out}/packbits.txt", "w").write(" ".join("TRUE" if v else "FALSE" for v in b[:]))
# an unreadable array makes h5dump give up on its whole file: the pickled one has a store of its own
p = zarr.open_array(out + "/pickled.zarr", mode="w", shape=(4,), chunks=(4,), dtype="<i4",
                    filters=[Pickle()])
p[:] = [1, 2, 3, 4]
print(f"zarr {zarr.__version__}, numcodecs {numcodecs.__version__}: {len(arrays) + 2} arrays")
PY
grep -q '"zarr_format": 2' nc.zarr/.zgroup || fail "zarr-python wrote no v2 store"
pass "zarr-python 2.13 wrote a v2 store with the numcodecs codecs"

export HDF5_VOL_CONNECTOR=zarr
for want in *.want; do
    name=${want%.want}
    h5dump -d "/$name" -b LE -o "$name.got" nc.zarr >"$name.log" 2>&1 || { cat "$name.log"; fail "h5dump /$name"; }
    cmp -s "$want" "$name.got" || fail "/$name: the connector reads other values than zarr-python ($(cmp "$want" "$name.got" | head -1))"
done
pass "$(ls *.want | wc -l) arrays read through the connector equal zarr-python's values"

# the connector reads "<U5" as 5 code points (H5T_ARRAY of 5 uint32)
h5dump -d /cat nc.zarr >cat.dump 2>cat.err || { cat cat.err; fail "h5dump /cat"; }
$PY - cat.dump <<'PY' || fail "categorize: not the strings zarr-python stored"
import re, sys
groups = re.findall(r"\[([0-9, ]+)\]", open(sys.argv[1]).read().split("   DATA {", 1)[1])
vals = ["".join(chr(int(x)) for x in g.split(",") if int(x)) for g in groups]
assert vals == ["foo", "bar", "", "baz", ""] * 8, vals   # "qux" is no label: stored as 0, read as ""
PY
h5dump -d /cat_obj nc.zarr >cat_obj.dump 2>cat_obj.err || { cat cat_obj.err; fail "h5dump /cat_obj"; }
$PY - cat_obj.dump <<'PY' || fail "categorize of an object array: not the strings zarr-python stored"
import re, sys
vals = re.findall(r'"([^"]*)"', open(sys.argv[1], encoding="utf-8").read().split("   DATA {", 1)[1])
assert vals == ["foo", "bar", "", "baz", "", "foo"] * 5, vals  # "qux" is no label: ""
PY
pass "categorize: strings stored as codes read back as zarr-python reads them (fixed unicode and object arrays)"

h5dump -d /packbits nc.zarr >packbits.dump 2>packbits.err || { cat packbits.err; fail "h5dump /packbits"; }
$PY - packbits.dump packbits.txt <<'PY' || fail "packbits values through the connector"
import re, sys
got = re.findall(r"\b(TRUE|FALSE)\b", open(sys.argv[1]).read().split("   DATA {", 1)[1])
want = open(sys.argv[2]).read().split()
assert got == want, (len(got), len(want))
PY
pass "packbits: the bool array reads as zarr-python reads it"

if h5dump --enable-error-stack -d / pickled.zarr >pick.txt 2>&1; then fail "a pickle array was read"; fi
grep -q "only Python" pick.txt || { cat pick.txt; fail "the pickle refusal does not say why"; }
pass "pickle is refused, and the message says why"
finish
