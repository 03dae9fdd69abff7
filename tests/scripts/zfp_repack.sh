#!/usr/bin/env bash
# Files written with the H5Z-ZFP filter (32013) and h5zarr's `hdf5_zfp` codec (issue 15): Debian's
# h5py with Debian's H5Z-ZFP plugin (hdf5-filter-plugin-zfp-serial) writes an .h5 file (accuracy and
# reversible modes, float64 and int32); h5repack through the connector, with h5zarr's zfp plugin,
# makes a store whose chunks use `hdf5_zfp`; h5dump through the connector shows the values H5Z-ZFP
# decodes; h5repack back to a native file writes chunks H5Z-ZFP itself reads (through h5py): the
# reversible ones byte for byte the original chunks (the same encoder), the lossy ones within the
# tolerance (h5repack re-encodes decoded values).
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR H5ZARR_CONFIG
DEBZFP=/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins
[ -f "$DEBZFP/libh5zzfp.so" ] || { echo "skipped: no H5Z-ZFP plugin ($DEBZFP/libh5zzfp.so, hdf5-filter-plugin-zfp-serial)"; exit 77; }
cd "$TMP"
HDF5_PLUGIN_PATH=$DEBZFP $PY - <<'PY' || { [ $? = 77 ] && { echo "skipped: no h5py"; exit 77; }; fail "h5py writer"; }
import struct, sys
try:
    import h5py, numpy as np
except ImportError as e:
    print(e); sys.exit(77)
a = np.sin(np.arange(64 * 40).reshape(64, 40) / 30.0)
tol = struct.unpack("<II", struct.pack("<d", 0.001))
with h5py.File("z.h5", "w") as f:
    f.create_dataset("acc", data=a, chunks=(32, 20), compression=32013, compression_opts=(3, 0, tol[0], tol[1], 0, 0))
    f.create_dataset("rev", data=(np.arange(3000) * 37 % 1001 - 500).astype("<i4"), chunks=(700,),
                     compression=32013, compression_opts=(5, 0, 0, 0, 0, 0))
with h5py.File("z.h5", "r") as f:
    for n in ("acc", "rev"):
        d = f[n]
        d[...].astype(d.dtype.newbyteorder("<")).tofile(n + ".want")   # H5Z-ZFP's own decoding
        open(n + ".chunk0", "wb").write(d.id.read_direct_chunk((0,) * d.ndim)[1])
print("h5py", h5py.__version__)
PY
is_h5 z.h5 || fail "h5py wrote no HDF5 file"
pass "h5py wrote an .h5 file with H5Z-ZFP datasets"

export HDF5_PLUGIN_PATH=$H5ZARR_BUILD/plugins
h5repack --src-vol-name=zarr --dst-vol-name=zarr z.h5 out.zarr >repack.log 2>&1 || { cat repack.log; fail "h5repack z.h5 -> out.zarr"; }
[ -f out.zarr/zarr.json ] || [ -f out.zarr/.zgroup ] || fail "h5repack made no zarr store (no connector?)"
grep -q '"hdf5_zfp"' out.zarr/acc/zarr.json out.zarr/acc/.zarray 2>/dev/null || fail "the store's /acc does not use hdf5_zfp"
pass "h5repack converted it to a zarr store whose chunks use the hdf5_zfp codec"

export HDF5_VOL_CONNECTOR=zarr
for n in acc rev; do
    h5dump -d /$n -b LE -o $n.got out.zarr >$n.log 2>&1 || { cat $n.log; fail "h5dump /$n of the store"; }
    cmp -s $n.want $n.got || fail "/$n: the store reads other values than H5Z-ZFP decodes"
done
h5dump -p -H -d /acc out.zarr | grep -q "32013" || fail "h5dump -p does not show filter 32013"
pass "through the connector the store shows H5Z-ZFP's values and filter 32013"
unset HDF5_VOL_CONNECTOR

h5repack --src-vol-name=zarr out.zarr back.h5 >back.log 2>&1 || { cat back.log; fail "h5repack out.zarr -> back.h5"; }
is_h5 back.h5 || fail "no native file came back"
HDF5_PLUGIN_PATH=$DEBZFP $PY - <<'PY' || fail "H5Z-ZFP can't read the file made from the store"
import h5py, numpy as np
with h5py.File("back.h5", "r") as f:
    for n in ("acc", "rev"):
        d = f[n]
        got, want = d[...].astype(d.dtype.newbyteorder("<")), np.fromfile(n + ".want", d.dtype.newbyteorder("<"))
        if n == "rev":
            assert got.tobytes() == want.tobytes(), n
            assert d.id.read_direct_chunk((0,) * d.ndim)[1] == open(n + ".chunk0", "rb").read(), n + ": other bytes"
        else:
            assert np.abs(got.ravel() - want).max() <= 0.001, np.abs(got.ravel() - want).max()
PY
pass "h5repack wrote back a native file whose chunks H5Z-ZFP reads (reversible: the original bytes)"
finish
