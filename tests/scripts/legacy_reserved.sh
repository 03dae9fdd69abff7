#!/usr/bin/env bash
# Stores whose `_h5zarr` is in the earlier binary form (docs/FORMAT.md, "Stores written in the earlier
# binary form") through HDF5's own tools: h5dump refuses the field by default (the message on the error
# stack names it and says how to convert) and leaves the store as it is; with the opt-in
# HDF5_VOL_CONNECTOR="zarr legacy_reserved=1" h5dump reads it, and h5repack writes a converted copy (JSON
# form, in the .zgroup, not among the attributes) that h5dump then reads without the opt-in.
. "$(dirname "$0")/../lib.sh"
cd "$TMP"
# a v2 group whose attribute x (int32 -12) has its type as base64 of H5Tencode(H5T_STD_I32LE)
mkdir old.zarr
echo '{"zarr_format": 2}' > old.zarr/.zgroup
echo '{"_h5zarr": {"attrs": {"x": {"type": "AwAQCAAABAAAAAAAIAA=", "shape": []}}}, "x": -12}' > old.zarr/.zattrs
cp old.zarr/.zattrs before

HDF5_VOL_CONNECTOR=zarr h5dump --enable-error-stack -A old.zarr > out 2>&1 && fail "h5dump read the earlier form by default"
grep -q "'/.zattrs' _h5zarr.attrs.x.type: in the earlier binary form" out || fail "no message naming the field: $(cat out)"
grep -q 'HDF5_VOL_CONNECTOR="zarr legacy_reserved=1"' out || fail "the message does not say how to convert"
cmp -s before old.zarr/.zattrs || fail "the refused store was changed"
pass "by default the earlier form is refused, naming the field and how to convert; nothing written"

HDF5_VOL_CONNECTOR="zarr legacy_reserved=1" h5dump -A old.zarr > out || fail "h5dump with legacy_reserved=1"
grep -q "H5T_STD_I32LE" out && grep -q "(0): -12" out || fail "the opt-in read: $(cat out)"
cmp -s before old.zarr/.zattrs || fail "a read-only open with the opt-in changed the store"
pass "with legacy_reserved=1 it reads as written, read-only opens write nothing"

HDF5_VOL_CONNECTOR="zarr legacy_reserved=1 version=2" h5repack old.zarr new.zarr || fail "h5repack with the opt-in"
grep -q '"x": *"i4<"' new.zarr/.zgroup || fail "the copy is not in the JSON form: $(cat new.zarr/.zgroup)"
grep -q '_h5zarr' new.zarr/.zattrs && fail "the copy keeps _h5zarr among its attributes: $(cat new.zarr/.zattrs)"
HDF5_VOL_CONNECTOR=zarr h5dump -A new.zarr > out || fail "h5dump of the converted copy"
grep -q "H5T_STD_I32LE" out && grep -q "(0): -12" out || fail "the converted copy reads: $(cat out)"
pass "h5repack with the opt-in writes a copy in the JSON form, read without it"
finish
