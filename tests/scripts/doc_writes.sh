#!/usr/bin/env bash
# No document written twice in one create (issue 31): every write of a store's documents is a new file
# (an atomic replace), so each one costs an inode. tests/netcdf/nc_dimonly.c's "create" stage (nc_create
# of a pointer file a.nc, dimensions, variables and attributes, nc_enddef, data, nc_close) runs through
# the connector (rule *.nc -> zarr, v3 and v2) under strace, twice on the same name (the second run
# creates the pointer and its store again, twice in one process), and the writes are counted per key
# (the names the directory store's atomic writes link or rename into place):
#  - the root document (zarr.json; v2 .zgroup) twice: once at H5Fcreate with the file creation properties
#    in it (it was written bare, then again with them: three times), once at nc_enddef's flush with the
#    attributes;
#  - the arrays of the unlimited dimension (time, t, time_bnds) twice (nc_enddef's flush, and the close
#    after their extent grew), every other document once;
#  - the store's owner record .h5zarr_pointer once per create (the truncation of the store removes it);
#  - nothing is removed in a first create, and a create again leaves what the first left (the same
#    files, the same bytes, the record with the same id: the pointer keeps its id);
#  - the pointer file a.nc once per process: the second run creates it twice ("create create"), and the
#    second create finds the bytes it would write there already (it wrote a new file and renamed it).
# With consolidated=1 (v3) the root document is written by H5Fclose's consolidation alone, not by the
# close's flush as well (tests/hdf5/test_durable_vol --write). Skipped without strace or without netCDF.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR
command -v strace >/dev/null || { echo "SKIP: strace is not installed"; exit 77; }
PROG=$H5ZARR_BUILD/tests/nc_dimonly
[ -x "$PROG" ] || { echo "SKIP: tests/nc_dimonly not built (no netCDF)"; exit 77; }
strace -f -o "$TMP/probe.log" -e trace=getpid true 2>/dev/null || { echo "SKIP: strace can't trace here (ptrace refused)"; exit 77; }
cd "$TMP"

# run V N STAGE...: nc_dimonly a.nc STAGE... in v$V/ under strace (successful calls only: -z), log
# v$V/run$N.log
run() {
    local v=$1 n=$2
    shift 2
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" HDF5_VOL_CONNECTOR=zarr \
        H5ZARR_CONFIG=$TMP/r$v.conf strace -f -qq -z -o "v$v/run$n.log" \
        -e trace=linkat,rename,renameat,renameat2,unlink,unlinkat "$PROG" "v$v/a.nc" "$@" \
        || fail "v$v run $n: nc_dimonly failed"
}
# writes LOG: "count key" of every document key written (linked from an O_TMPFILE, or renamed from, or
# exchanged with, the store's temporary name), keys relative to the store
writes() {
    sed -nE -e 's/.*linkat\([0-9]+, "", [^,]+, "[^"]*a\.nc\.zarr\/([^"]+)", AT_EMPTY_PATH\).*/\1/p' \
        -e 's/.*rename\("[^"]*\.h5zarr-tmp\.[^"]*", "[^"]*a\.nc\.zarr\/([^"]+)"\).*/\1/p' \
        -e 's/.*renameat2\(AT_FDCWD, "[^"]*\.h5zarr-tmp\.[^"]*", AT_FDCWD, "[^"]*a\.nc\.zarr\/([^"]+)", RENAME_EXCHANGE\).*/\1/p' "$1" \
        | grep -E '(^|/)(zarr\.json|\.zarray|\.zattrs|\.zgroup|\.zmetadata|\.h5zarr_[a-z]+)$' | sort | uniq -c \
        | awk '{print $1, $2}' || true
}
count_of() { awk -v k="$2" '$2 == k {print $1; f = 1} END {if (!f) print 0}' <<<"$1"; }

for v in 3 2; do
    printf '[path *.nc]\nformat = zarr\nversion = %s\n' "$v" >r$v.conf
    mkdir v$v
    if [ $v = 3 ]; then root=zarr.json; else root=.zgroup; fi
    run $v 1 create
    w=$(writes v$v/run1.log)
    [ -d v$v/a.nc.zarr ] && [ -f v$v/a.nc.zarr/$root ] || fail "v$v: no store came out"
    n=$(count_of "$w" $root)
    [ "$n" -eq 2 ] || fail "v$v: the root $root was written $n times in one create (expected 2: H5Fcreate, nc_enddef)"
    n=$(count_of "$w" .h5zarr_pointer)
    [ "$n" -eq 1 ] || fail "v$v: the owner record was written $n times (expected 1)"
    # every other document once, but the unlimited dimension's arrays (their extent grows after nc_enddef)
    twice=$(awk -v r="$root" '$1 > 1 && $2 != r {print $2}' <<<"$w" | sed 's,/.*,,' | sort -u | tr '\n' ' ')
    [ "$twice" = "t time time_bnds " ] || fail "v$v: documents written more than once: '$twice' ($(tr '\n' ';' <<<"$w"))"
    # (a replaced value is exchanged with its key and the old file unlinked under the temporary name)
    rm1=$(grep -E 'unlink(at)?\(' v$v/run1.log | grep -v '\.h5zarr-tmp\.' || true)
    [ -z "$rm1" ] || fail "v$v: a first create removed files: $(head -3 <<<"$rm1")"
    pass "v$v create: root $root written twice (H5Fcreate, nc_enddef), the owner record once, no document removed"

    id1=$(cat v$v/a.nc.zarr/.h5zarr_pointer)
    (cd v$v/a.nc.zarr && find . -type f ! -name .h5zarr_pointer -exec md5sum {} + | sort -k2) >v$v/sums1
    run $v 2 create create
    w=$(writes v$v/run2.log)
    n=$(count_of "$w" .h5zarr_pointer)
    [ "$n" -eq 2 ] || fail "v$v: two creates again wrote the store's record $n times (expected 2)"
    n=$(count_of "$w" $root)
    [ "$n" -eq 4 ] || fail "v$v: two creates again: the root $root was written $n times (expected 4)"
    # the pointer file itself: renamed into place by the process's first create (HDF5's part of it made
    # then), left as it is by the second (the same bytes)
    n=$(grep -cE 'rename\("[^"]*a\.nc\.h5zarr-tmp\.[0-9]+", "[^"]*a\.nc"\)' v$v/run2.log || true)
    [ "$n" -eq 1 ] || fail "v$v: two creates of the pointer in one process wrote it $n times (expected 1)"
    [ "$(cat v$v/a.nc.zarr/.h5zarr_pointer)" = "$id1" ] || fail "v$v: the record changed: $(cat v$v/a.nc.zarr/.h5zarr_pointer) (was $id1)"
    (cd v$v/a.nc.zarr && find . -type f ! -name .h5zarr_pointer -exec md5sum {} + | sort -k2) >v$v/sums2
    diff v$v/sums1 v$v/sums2 || fail "v$v: the store created again differs from the first"
    HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/r$v.conf "$PROG" v$v/a.nc print >v$v/print.txt \
        || fail "v$v: the store created again does not open through its pointer"
    grep -q '^dim bnds = 2$' v$v/print.txt || fail "v$v: read back: $(cat v$v/print.txt)"
    pass "v$v two creates again in one process: pointer written once (same id), root written twice each, the same store"
done

# consolidated=1 (v3): H5Fclose's consolidation writes the root zarr.json with the consolidated metadata;
# the close's flush left the dirty root to it (it wrote the root, then the consolidation wrote it again).
# tests/hdf5/test_durable_vol --write: H5Fcreate, one chunked dataset d, H5Fwrite, H5Fclose.
DV=$H5ZARR_BUILD/tests/test_durable_vol
[ -x "$DV" ] || fail "$DV not built"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" HDF5_VOL_CONNECTOR="zarr consolidated=1" \
    strace -f -qq -z -o cons.log -e trace=linkat,rename,renameat2 "$DV" --write "$TMP/c.zarr" || fail "consolidated=1: the program failed"
n=$(grep -cE '(linkat\(.*|rename\("[^"]*\.h5zarr-tmp[^"]*", |renameat2\(AT_FDCWD, "[^"]*\.h5zarr-tmp[^"]*", AT_FDCWD, )"[^"]*/c\.zarr/zarr\.json"' cons.log || true)
[ "$n" -eq 2 ] || fail "consolidated=1: the root zarr.json was written $n times (expected 2: H5Fcreate, H5Fclose's consolidation)"
n=$(grep -cE '(linkat\(.*|rename\("[^"]*\.h5zarr-tmp[^"]*", |renameat2\(AT_FDCWD, "[^"]*\.h5zarr-tmp[^"]*", AT_FDCWD, )"[^"]*/c\.zarr/d/zarr\.json"' cons.log || true)
[ "$n" -eq 1 ] || fail "consolidated=1: d/zarr.json was written $n times (expected 1)"
$PY - "$TMP/c.zarr/zarr.json" <<'PYEOF' || fail "consolidated=1: the root document lacks the consolidated metadata of d"
import json, sys
doc = json.load(open(sys.argv[1]))
md = doc["consolidated_metadata"]["metadata"]
assert md["d"]["node_type"] == "array" and md["d"]["shape"] == [16, 32], md
PYEOF
pass "consolidated=1: the root zarr.json written twice (H5Fcreate, the consolidation at H5Fclose), with d in it"
finish
