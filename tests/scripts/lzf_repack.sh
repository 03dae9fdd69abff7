#!/usr/bin/env bash
# h5py files with LZF (h5py's filter 32000) and h5zarr's `lzf` codec (issue 15): an .h5 file h5py
# (Debian's python3-h5py, its own LZF) writes is converted to a zarr store with h5repack through the
# connector, and back to a native file; the store's chunks use the `lzf` codec, h5dump through the
# connector shows h5py's values and filter 32000, and h5py reads the file made back from the store.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR H5ZARR_CONFIG
cd "$TMP"
$PY - <<'PY' || { [ $? = 77 ] && { echo "skipped: no h5py"; exit 77; }; fail "h5py writer"; }
import sys
try:
    import h5py, numpy as np
except ImportError as e:
    print(e); sys.exit(77)
with h5py.File("lzf.h5", "w") as f:
    a = (np.sin(np.arange(120 * 50).reshape(120, 50) / 17.0) * 1000).astype("<f4")
    f.create_dataset("field", data=a, chunks=(32, 20), compression="lzf")
    f.create_dataset("ints", data=np.arange(3000, dtype="<i8") % 97, chunks=(700,), compression="lzf",
                     shuffle=True)
    a.tofile("field.want")
    (np.arange(3000, dtype="<i8") % 97).tofile("ints.want")
    assert f["field"].compression == "lzf"
print("h5py", h5py.__version__)
PY
is_h5 lzf.h5 || fail "h5py wrote no HDF5 file"
pass "h5py wrote an .h5 file with LZF datasets"

export HDF5_PLUGIN_PATH=$H5ZARR_BUILD/plugins
h5repack --src-vol-name=zarr --dst-vol-name=zarr lzf.h5 out.zarr >repack.log 2>&1 || { cat repack.log; fail "h5repack lzf.h5 -> out.zarr"; }
[ -f out.zarr/zarr.json ] || [ -f out.zarr/.zgroup ] || fail "h5repack made no zarr store (no connector?)"
grep -q '"lzf"' out.zarr/field/zarr.json out.zarr/field/.zarray 2>/dev/null || fail "the store's field does not use the lzf codec"
pass "h5repack converted it to a zarr store whose chunks use the lzf codec"

export HDF5_VOL_CONNECTOR=zarr
for n in field ints; do
    h5dump -d /$n -b LE -o $n.got out.zarr >$n.log 2>&1 || { cat $n.log; fail "h5dump /$n of the store"; }
    cmp -s $n.want $n.got || fail "/$n: the store holds other values than h5py wrote"
done
h5dump -p -H -d /field out.zarr | grep -q "USER_DEFINED_FILTER" || fail "h5dump -p shows no filter on /field"
h5dump -p -H -d /field out.zarr | grep -q "32000" || fail "h5dump -p does not show filter 32000"
pass "through the connector the store shows h5py's values and filter 32000"
unset HDF5_VOL_CONNECTOR

h5repack --src-vol-name=zarr out.zarr back.h5 >back.log 2>&1 || { cat back.log; fail "h5repack out.zarr -> back.h5"; }
is_h5 back.h5 || fail "no native file came back"
$PY - <<'PY' || fail "h5py can't read the file made from the store"
import h5py, numpy as np
with h5py.File("back.h5", "r") as f:
    assert f["field"].compression == "lzf", f["field"].compression
    assert (f["field"][...] == np.fromfile("field.want", "<f4").reshape(120, 50)).all()
    assert (f["ints"][...] == np.fromfile("ints.want", "<i8")).all()
PY
pass "h5repack made a native file back (our LZF plugin) that h5py reads with its own LZF"
finish
