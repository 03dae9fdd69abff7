#!/usr/bin/env bash
# h5zarr-convert (issue 30, docs/CONVERT.md) on files made here:
#   (a) h5py-written files (Debian's h5py on Debian's HDF5 1.10: old-style references): dimension scales,
#       object references (a dataset and an attribute of them), LZF, compound types, groups, a soft
#       link: converted to zarr v3 and v2, h5diff finds no difference, dimension_names/_ARRAY_DIMENSIONS
#       come from the scales and the connector serves the scales and references back;
#       h5repack of the same file to zarr fails (the issue's starting point); with one source dataset
#       kept open past the scan (the rest opened again by each pass) the store is the same;
#   (b) an interrupted run (SIGKILL in the middle of a dataset's chunks) resumes where its record says and
#       ends equal to the source;
#   (c) --verify-only catches a corrupted chunk in the store;
#   (d) a truncated source: a clear error, no store; a file with an n-bit and a user-defined filter:
#       refused up front with each object and reason, no store; an existing target is not replaced
#       without --force;
#   (e) raw chunks: a deflate + shuffle and a zstd dataset go over without re-encoding (the store's
#       chunk files hold the source's chunk bytes), and --codec re-encodes;
#   (f) a source with a user block (MATLAB v7.3 files have one): converted raw, and --refs finds the
#       chunks where they are (HDF5 1.14.4+ counts the user block in chunk addresses).
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR H5ZARR_CONFIG
CONV=$H5ZARR_BUILD/bin/h5zarr-convert
[ -x "$CONV" ] || fail "no $CONV"
cd "$TMP"

# ---- (a) h5py files
pyh() { env -u HDF5_PLUGIN_PATH -u LD_LIBRARY_PATH "$PY" "$@"; }
pyh - <<'PY' || { [ $? = 77 ] && { echo "skipped: no Debian h5py (python3-h5py)"; exit 77; }; fail "h5py writer"; }
import sys
try:
    import h5py, numpy as np
except ImportError as e:
    print(e); sys.exit(77)
with h5py.File("py.h5", "w") as f:
    f.attrs["title"] = "h5py file"
    t = f.create_dataset("time", data=np.arange(6, dtype="f8"))
    t.make_scale("time")
    x = f.create_dataset("x", data=np.linspace(0, 1, 5).astype("f4"))
    x.make_scale("x")
    v = f.create_dataset("temp", data=np.arange(30, dtype="f4").reshape(6, 5), chunks=(2, 5), compression="lzf")
    v.dims[0].attach_scale(t)
    v.dims[1].attach_scale(x)
    v.attrs["units"] = "K"
    g = f.create_group("grp/sub")
    c = np.dtype([("a", "<i4"), ("b", "<f8"), ("s", "S8")])
    comp = np.array([(i, i * 0.5, b"n%d" % i) for i in range(7)], dtype=c)
    g.create_dataset("comp", data=comp, chunks=(3,), compression="gzip", shuffle=True)
    r = f.create_dataset("refs", (3,), dtype=h5py.ref_dtype)
    r[0], r[1], r[2] = f["temp"].ref, f["grp/sub"].ref, f["grp/sub/comp"].ref
    f["temp"].attrs.create("see_also", [f["time"].ref, f["x"].ref], dtype=h5py.ref_dtype)
    f["link"] = h5py.SoftLink("/grp/sub/comp")
    f.create_dataset("ints", data=np.arange(1000, dtype="<i8"), chunks=(100,), compression="gzip")
PY
is_h5 py.h5 || fail "h5py wrote no HDF5 file"
if HDF5_VOL_CONNECTOR=zarr h5repack --src-vol-name=zarr --dst-vol-name=zarr py.h5 repack.zarr >repack.log 2>&1; then
    echo "note: h5repack converted the h5py file"
else
    pass "h5repack to zarr fails on the h5py file with scales and references (the issue's starting point)"
fi
for v in 3 2; do
    "$CONV" -q -z $v --verify py.h5 py$v.zarr || fail "h5zarr-convert -z $v py.h5"
    if [ $v = 3 ]; then grep -q '"zarr_format": *3' py3.zarr/zarr.json || fail "no zarr v3 store"; else
        grep -q '"zarr_format": *2' py2.zarr/.zgroup || fail "no zarr v2 store"; fi
    h5diff --vol-name-2=zarr py.h5 py$v.zarr >diff$v.log 2>&1 || { cat diff$v.log; fail "h5diff py.h5 py$v.zarr"; }
done
# past the scan's window of open source datasets (H5ZARR_CONVERT_KEEP_OPEN; 4096 by default), every pass
# opens a dataset again and closes it after: the same store, and --verify passes
H5ZARR_CONVERT_KEEP_OPEN=1 "$CONV" -q -z 3 --verify py.h5 py3k.zarr || fail "h5zarr-convert with one dataset kept open"
diff -r py3.zarr py3k.zarr >keep.log || { cat keep.log; fail "datasets opened again per pass: a different store"; }
pass "with one source dataset kept open (the rest opened again by each pass) the store is byte-identical"
grep -q '"lzf"' py3.zarr/temp/zarr.json || fail "/temp's LZF chunks are not lzf in the store"
"$PY" - <<'PY' || fail "dimension names"
import json
z = json.load(open("py3.zarr/temp/zarr.json"))
assert z["dimension_names"] == ["time", "x"], z.get("dimension_names")
a = json.load(open("py2.zarr/temp/.zattrs"))
assert a["_ARRAY_DIMENSIONS"] == ["time", "x"], a
PY
HDF5_VOL_CONNECTOR=zarr h5dump -A -d /temp py3.zarr >temp.dump || fail "h5dump -A /temp"
grep -q 'DATASET "py3.zarr/time"' temp.dump && grep -q 'DATASET "py3.zarr/x"' temp.dump || { cat temp.dump; fail "DIMENSION_LIST of /temp not served back"; }
HDF5_VOL_CONNECTOR=zarr h5dump -d /refs py3.zarr >refs.dump || fail "h5dump /refs"
for p in 'DATASET "py3.zarr/temp"' 'GROUP "py3.zarr/grp/sub"' 'DATASET "py3.zarr/grp/sub/comp"'; do
    grep -q "$p" refs.dump || { cat refs.dump; fail "reference $p not served back"; }
done
pass "h5py file (scales, old-style references in a dataset and an attribute, LZF, compound, groups, soft link): zarr v3 and v2 equal under h5diff, dimension names from the scales, scales and references served back"

# a dataset's attributes without references are copied when the dataset is made (structure pass 2), those
# of a dataset with a reference attribute after every object (pass 4): /aaa's reference points at a group
# made after it, /bbb's attributes (one of a named type, made before the datasets) go over with it, in
# their creation order
pyh - <<'PY' || fail "h5py writer (attribute order)"
import h5py, numpy as np
with h5py.File("attrs.h5", "w", track_order=True) as f:
    f["ntype"] = np.dtype([("p", "<i4"), ("q", "<f4")])
    a = f.create_dataset("aaa", data=np.arange(4, dtype="<i4"), track_order=True)
    f.create_group("zzz/inner")
    a.attrs["before"] = "plain"
    a.attrs.create("later", [f["zzz/inner"].ref], dtype=h5py.ref_dtype)
    b = f.create_dataset("bbb", data=np.arange(3, dtype="<f8"), track_order=True)
    b.attrs["units"] = "m"
    b.attrs.create("typed", np.array((7, 2.5), dtype=f["ntype"].dtype), dtype=f["ntype"])
    b.attrs["alpha"] = 1.5
PY
for k in 4096 1; do
    H5ZARR_CONVERT_KEEP_OPEN=$k "$CONV" -q --verify attrs.h5 attrs$k.zarr || fail "h5zarr-convert attrs.h5 (keep open $k)"
    h5diff --vol-name-2=zarr attrs.h5 attrs$k.zarr >attrs.log 2>&1 || { cat attrs.log; fail "h5diff attrs.h5 attrs$k.zarr"; }
done
diff -r attrs4096.zarr attrs1.zarr >attrs.log || { cat attrs.log; fail "attributes: a different store with one dataset kept open"; }
HDF5_VOL_CONNECTOR=zarr h5dump -A -d /aaa attrs1.zarr >aaa.dump || fail "h5dump -A /aaa"
grep -q 'GROUP "attrs1.zarr/zzz/inner"' aaa.dump || { cat aaa.dump; fail "/aaa's reference to a later group not served back"; }
HDF5_VOL_CONNECTOR=zarr h5dump --sort_by=creation_order -A -d /bbb attrs1.zarr >bbb.dump || fail "h5dump -A /bbb"
"$PY" - <<'PY' || { cat bbb.dump; fail "/bbb's attributes"; }
import re
t = open("bbb.dump").read()
names = re.findall(r'ATTRIBUTE "(\w+)"', t)
assert names == ["units", "typed", "alpha"], names
assert '"/ntype"' in t or "/ntype" in t, "the named type of /bbb's attribute 'typed' is not the store's /ntype"
assert re.search(r"7,\s*2\.5", t), "typed's value"
PY
pass "attributes: a reference attribute to an object made later, plain and named-type attributes in creation order, the same store with one dataset kept open"

# ---- (e) raw chunks, --codec
h5py_big() { pyh - "$@" <<'PY'
import sys, h5py, numpy as np
n, comp = int(sys.argv[1]), sys.argv[2]
with h5py.File("big.h5", "w") as f:
    a = (np.arange(n * 16384, dtype="<f4") % 977).reshape(n, 16384)
    f.create_dataset("d", data=a, chunks=(1, 16384), compression=comp, shuffle=True)
PY
}
h5py_big 200 gzip || fail "h5py big.h5"
"$CONV" -q -v big.h5 raw.zarr 2>raw.log || { cat raw.log; fail "convert big.h5"; }
grep -q "/d: raw chunks" raw.log || fail "the deflate+shuffle dataset did not go over as raw chunks"
"$PY" - <<'PY' || fail "raw chunk bytes"
import h5py, zlib, numpy as np
# the store's chunk 5 holds the source's stored bytes for chunk 5 (read with h5py's low-level chunk API)
with h5py.File("big.h5", "r") as f:
    d = f["d"]
    mask, want = d.id.read_direct_chunk((5, 0))
got = open("raw.zarr/d/c/5/0", "rb").read()
assert got == want, (len(got), len(want))
PY
h5diff --vol-name-2=zarr big.h5 raw.zarr || fail "h5diff big.h5 raw.zarr"
"$CONV" -q -v --codec zstd:1 big.h5 zstd.zarr 2>zstd.log || fail "--codec zstd:1"
grep -q "/d: values" zstd.log || fail "--codec did not re-encode"
grep -q '"zstd"' zstd.zarr/d/zarr.json || fail "--codec zstd:1: no zstd codec in the store"
h5diff --vol-name-2=zarr big.h5 zstd.zarr || fail "h5diff big.h5 zstd.zarr"
# the progress bar: on a terminal (script(1) gives one) objects, MiB, rate and ETA; nothing otherwise
"$CONV" big.h5 quiet.zarr 2>quiet.log && [ ! -s quiet.log ] || fail "output without a terminal: $(cat quiet.log)"
if command -v script >/dev/null; then
    script -qc "'$CONV' big.h5 tty.zarr" /dev/null >tty.log 2>&1 || fail "h5zarr-convert on a terminal"
    tr '\r' '\n' <tty.log | grep -Eq '^\[#+\] 2/2 objects  [0-9.]+/[0-9.]+ MiB  [0-9.]+ MiB/s  ETA 0s' ||
        { cat tty.log; fail "no progress bar on a terminal"; }
fi
pass "deflate+shuffle chunks copied raw (store chunk == source chunk bytes); --codec zstd:1 re-encodes; both equal"

# ---- (f) a user block
pyh - <<'PY' || fail "h5py ub.h5"
import h5py, numpy as np
with h5py.File("ub.h5", "w", userblock_size=1024) as f:
    f.create_dataset("c", data=np.arange(4000, dtype="<i4").reshape(40, 100), chunks=(5, 50), compression="gzip")
    f.create_dataset("k", data=np.arange(10, dtype="<f8"))
PY
"$CONV" -q -v ub.h5 ub.zarr 2>ub.log && grep -q "/c: raw chunks" ub.log || { cat ub.log; fail "ub.h5: /c not raw"; }
h5diff --vol-name-2=zarr ub.h5 ub.zarr || fail "h5diff ub.h5 ub.zarr"
"$CONV" --refs --quiet ub.h5 ub.json || fail "--refs ub.h5"
if "$PY" -c 'import fsspec, zarr' 2>/dev/null; then
    "$PY" - <<'PY' || fail "--refs of a file with a user block: wrong values through fsspec"
import fsspec, zarr, numpy as np
g = zarr.open(fsspec.get_mapper("reference://", fo="ub.json"), mode="r")
assert (g["c"][:] == np.arange(4000).reshape(40, 100)).all(), g["c"][:2]
assert (g["k"][:] == np.arange(10)).all(), g["k"][:]
PY
    pass "a 1024-byte user block: raw chunks (h5diff equal), --refs values equal through fsspec"
else
    pass "a 1024-byte user block: raw chunks (h5diff equal; no fsspec for --refs)"
fi

# ---- (b) resume after a kill
set +e
H5ZARR_CONVERT_KILL_AFTER=120 "$CONV" -q big.h5 res.zarr 2>kill.log
rc=$?
set -e
[ $rc = 137 ] || { cat kill.log; fail "the run did not die of SIGKILL (exit $rc)"; }
[ -f res.zarr/.h5zarr_convert ] || fail "no resume record after the kill"
grep -q '^structure$' res.zarr/.h5zarr_convert || fail "the record lacks the structure line"
done_chunks=$(awk '$1 == "obj" && $3 > 2 { n = $3 - 2 } END { print n + 0 }' res.zarr/.h5zarr_convert)
[ "$done_chunks" -gt 0 ] && [ "$done_chunks" -lt 200 ] || { cat res.zarr/.h5zarr_convert; fail "record: $done_chunks chunks done"; }
set +e
"$CONV" big.h5 res.zarr 2>resume.log
rc=$?
set -e
[ $rc = 0 ] || { cat resume.log; fail "the resumed run failed"; }
grep -q "resuming the unfinished conversion" resume.log || fail "the second run did not resume"
[ ! -e res.zarr/.h5zarr_convert ] || fail "the record is still there after the resumed run"
h5diff --vol-name-2=zarr big.h5 res.zarr || fail "h5diff after resume"
"$CONV" -q --verify-only big.h5 res.zarr || fail "--verify-only after resume"
pass "a run killed after 120 chunks (record: $done_chunks done) resumes and ends equal (h5diff, --verify-only)"

# ---- (b2) a small dataset's data goes with the structure (held once) and is recorded done with it: a run
# killed in the data pass of a big dataset after it has /a (object 1) done, and does not write it again
pyh - <<'PY' || fail "h5py mixed.h5"
import h5py, numpy as np
with h5py.File("mixed.h5", "w") as f:
    f.create_dataset("a", data=np.arange(10, dtype="<f8"))
    a = (np.arange(200 * 16384, dtype="<f4") % 977).reshape(200, 16384)
    f.create_dataset("d", data=a, chunks=(1, 16384), compression="gzip", shuffle=True)
PY
set +e
H5ZARR_CONVERT_KILL_AFTER=120 "$CONV" -q mixed.h5 mix.zarr 2>mkill.log
rc=$?
set -e
[ $rc = 137 ] || { cat mkill.log; fail "mixed.h5: the run did not die of SIGKILL (exit $rc)"; }
grep -qx 'obj 1 1' mix.zarr/.h5zarr_convert || { cat mix.zarr/.h5zarr_convert; fail "/a not recorded done with the structure"; }
[ -f mix.zarr/a/c/0 ] || fail "/a's chunk not written with the structure"
! grep -qx 'obj 2 1' mix.zarr/.h5zarr_convert || fail "/d recorded done before its chunks were written"
"$CONV" -q -v mixed.h5 mix.zarr 2>mres.log || { cat mres.log; fail "mixed.h5: the resumed run failed"; }
! grep -q '/a: values' mres.log || fail "the resumed run wrote /a again"
h5diff --vol-name-2=zarr mixed.h5 mix.zarr || fail "h5diff after resume (mixed.h5)"
pass "a small dataset's data goes with the structure, is recorded done with it and not written again on resume"

# ---- (c) --verify catches a corrupted chunk
cp -r raw.zarr bad.zarr
printf '\x01\x02\x03\x04' | dd of=bad.zarr/d/c/7/0 bs=1 seek=100 conv=notrunc 2>/dev/null
set +e
"$CONV" -q --verify-only big.h5 bad.zarr 2>verify.log
rc=$?
set -e
[ $rc = 1 ] || { cat verify.log; fail "--verify-only passed a corrupted chunk (exit $rc)"; }
grep -q "/d: the chunk at offset 7,0 differs" verify.log || { cat verify.log; fail "--verify-only did not name the chunk"; }
"$CONV" -q --verify-only big.h5 raw.zarr || fail "--verify-only of the intact store"
pass "--verify-only names the corrupted chunk (7,0) and passes the intact store"

# ---- (d) bad input, refusals, existing targets
head -c $(($(stat -c %s big.h5) / 2)) big.h5 >trunc.h5
set +e
"$CONV" trunc.h5 trunc.zarr 2>trunc.log
rc=$?
set -e
[ $rc = 1 ] || fail "truncated source: exit $rc"
grep -q "damaged" trunc.log && grep -q "truncated file" trunc.log || { cat trunc.log; fail "truncated source: no clear error"; }
[ ! -e trunc.zarr ] || fail "truncated source: a store was written"
head -c 100 /dev/urandom >junk.nc
set +e; "$CONV" junk.nc junk.zarr 2>junk.log; rc=$?; set -e
[ $rc = 1 ] && [ ! -e junk.zarr ] && grep -q "not an HDF5 or netCDF-4 file" junk.log || fail "junk source"
printf 'CDF\001' >classic.nc
set +e; "$CONV" classic.nc classic.zarr 2>classic.log; rc=$?; set -e
[ $rc = 1 ] && grep -q "classic netCDF file" classic.log || fail "classic netCDF source"
HSRC=${H5ZARR_HDF5_SRC:-$HOME/.cache/h5zarr/deps/src/hdf5}/tools/test/h5dump/testfiles
if [ -f "$HSRC/tfilters.h5" ]; then
    set +e; "$CONV" "$HSRC/tfilters.h5" filt.zarr 2>filt.log; rc=$?; set -e
    [ $rc = 3 ] || fail "tfilters.h5: exit $rc"
    [ ! -e filt.zarr ] || fail "tfilters.h5: a store was written"
    grep -q "/nbit: n-bit filter" filt.log && grep -q "/all: n-bit filter" filt.log &&
        grep -q "/myfilter: filter 405 (myfilter): no zarr codec" filt.log || { cat filt.log; fail "tfilters.h5 reasons"; }
    pass "tfilters.h5 refused up front with each object and reason (n-bit x2, filter 405), no store"
fi
set +e; "$CONV" -q big.h5 raw.zarr 2>exists.log; rc=$?; set -e
[ $rc = 1 ] && grep -q "exists (use --force" exists.log || fail "an existing target was not refused"
"$CONV" -q --force big.h5 raw.zarr || fail "--force"
pass "truncated, junk and classic sources: clear errors, nothing written; existing targets need --force"
finish
