#!/usr/bin/env bash
# The durability setting's syncs are real system calls, counted with strace on an HDF5 program writing
# through the connector (tests/hdf5/test_durable_vol.c --write: H5Fcreate, a 16 x 32 int32 dataset in
# 4 x 4 chunks, one whole H5Dwrite, H5Fclose):
#  - HDF5_VOL_CONNECTOR="zarr durable=1": every file the store writes is fdatasync'ed once (fdatasyncs
#    = files written, counted as the O_TMPFILE / named-temporary opens of atomic writes); the H5Dwrite
#    alone is 32 fdatasyncs (its 32 chunks) and 6 directory fsyncs (d/c/0 .. d/c/3, d/c, d: each
#    changed directory once, not one per chunk), all before H5Dwrite returns;
#  - durable=0 (and the default): not one fsync or fdatasync in the whole run.
# Every run must leave a zarr store (zarr.json) with the 32 chunk files. Skipped without strace.
. "$(dirname "$0")/../lib.sh"

command -v strace >/dev/null || { echo "SKIP: strace is not installed"; exit 77; }
prog=$H5ZARR_BUILD/tests/test_durable_vol
[ -x "$prog" ] || fail "$prog not built"
strace -f -o "$TMP/probe.log" -e trace=getpid true 2>/dev/null || { echo "SKIP: strace can't trace here (ptrace refused)"; exit 77; }

# trace MODE NAME: runs the program under strace with connector info "zarr MODE", log in $TMP/NAME.log;
# -z: successful calls only (one line each, no "unfinished"/"resumed" halves from other threads)
trace() {
    local info=$1 name=$2 store=$TMP/$2.zarr
    # LeakSanitizer can't run under ptrace (sanitized builds); hdf5.test_durable_vol checks leaks untraced
    HDF5_VOL_CONNECTOR="zarr $info" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -qq -o "$TMP/$name.log" \
        -z -e trace=fsync,fdatasync,openat,prctl "$prog" --write "$store" \
        || fail "$name: the program failed (status $?)"
    [ -f "$store/zarr.json" ] || fail "$name: no zarr store came out (zarr.json missing)"
    [ "$(find "$store/d/c" -type f | wc -l)" -eq 32 ] || fail "$name: expected 32 chunk files"
}
# count FILE REGEX [FROM TO]: lines of the trace matching REGEX, between the marker lines FROM and TO
count() {
    local log=$1 re=$2 from=${3:-} to=${4:-}
    if [ -n "$from" ]; then
        sed -n "/h5zmark-$from/,/h5zmark-$to/p" "$log" | grep -cE "$re" || true
    else
        grep -cE "$re" "$log" || true
    fi
}
FDS='^[0-9]+ +fdatasync\('
FS='^[0-9]+ +fsync\('
WR='^[0-9]+ +openat\(.*(O_TMPFILE|h5zarr-tmp\.[^"]*", [^)]*O_CREAT)'

trace durable=1 on
grep -q 'h5zmark-begin' "$TMP/on.log" && grep -q 'h5zmark-end' "$TMP/on.log" \
    || fail "the markers around H5Dwrite are not in the trace"
w=$(count "$TMP/on.log" "$WR" begin end)
fd=$(count "$TMP/on.log" "$FDS" begin end)
ds=$(count "$TMP/on.log" "$FS" begin end)
[ "$w" -eq 32 ] || fail "durable=1: H5Dwrite wrote $w files, expected 32 chunks"
[ "$fd" -eq 32 ] || fail "durable=1: H5Dwrite made $fd fdatasyncs for 32 chunk files"
[ "$ds" -eq 6 ] || fail "durable=1: H5Dwrite made $ds directory fsyncs, expected 6 (one per changed directory)"
pass "durable=1: H5Dwrite of 32 chunks: 32 fdatasyncs, 6 directory fsyncs, before it returned"
wt=$(count "$TMP/on.log" "$WR")
fdt=$(count "$TMP/on.log" "$FDS")
dst=$(count "$TMP/on.log" "$FS")
[ "$fdt" -eq "$wt" ] || fail "durable=1: $fdt fdatasyncs for $wt files written in the whole run"
[ "$dst" -ge 6 ] && [ "$dst" -lt "$wt" ] || fail "durable=1: $dst directory fsyncs for $wt files (want fewer)"
pass "durable=1: whole run: $fdt fdatasyncs = $wt files written, $dst directory fsyncs"

for mode in durable=0 "version=3"; do
    name=off-${mode%%=*}
    trace "$mode" "$name"
    n=$(count "$TMP/$name.log" "$FDS|$FS")
    [ "$n" -eq 0 ] || fail "$mode: $n syncs, expected none"
    [ "$(count "$TMP/$name.log" "$WR")" -gt 32 ] || fail "$mode: the trace shows no file writes"
    pass "$mode: no fsync or fdatasync in the whole run"
done

# A pointer file (a rule sends *.nc to zarr): written atomically (temporary + rename), fsync'ed only
# when durable, like the store's own files (netCDF's tst_files made 44 pointer fsyncs, 6x its native time)
printf '[path *.nc]\nformat = zarr\n' > "$TMP/ptr.conf"
for mode in durable=0 durable=1; do
    log=$TMP/ptr-${mode#durable=}.log
    HDF5_VOL_CONNECTOR="zarr $mode" H5ZARR_CONFIG="$TMP/ptr.conf" \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -qq -y -o "$log" -z -e trace=fsync,fdatasync "$prog" --write "$TMP/p${mode#durable=}.nc" \
        || fail "pointer, $mode: the program failed (status $?)"
    [ -f "$TMP/p${mode#durable=}.nc" ] && [ -f "$TMP/p${mode#durable=}.nc.zarr/zarr.json" ] \
        || fail "pointer, $mode: no pointer file and store came out"
    n=$(grep -cE "fsync\(.*\.nc\.h5zarr-tmp" "$log" || true)
    if [ "$mode" = durable=0 ]; then
        [ "$(count "$log" "$FDS|$FS")" -eq 0 ] || fail "pointer, durable=0: syncs in the run"
    else
        [ "$n" -eq 1 ] || fail "pointer, durable=1: $n fsyncs of the pointer's temporary file, expected 1"
    fi
    pass "pointer, $mode: $n fsyncs of the pointer file"
done
finish
