#!/usr/bin/env bash
# A pointer create costs the same in a directory of 200 pointers as in one of 40 (issue 27: netCDF's
# tst_quantize made 27 pointers in one directory; the orphan sweep at each create read the owner record
# of every store there, 2,500 record reads, so the cost grew with the square of the number of files).
# tests/hdf5/test_pointer --many DIR N 10 creates N pointers (rule *.nc -> zarr) in one directory; strace
# counts the system calls of the last 10 creates (between the program's prctl markers) and the opens of
# stores' owner records (.h5zarr_pointer) among them:
#  - a create reads no other store's record (at most 2 record opens a create: the one it writes);
#  - the system calls of a create at N = 200 are those at N = 40, within 15% (not 5x);
#  - a pointer created again writes its HDF5 part from memory (no H5Fcreate: no flock), same bytes;
#  - H5Fis_accessible of a pointer probes its store once (one read of zarr.json), not twice;
#  - the config file (H5ZARR_CONFIG) is opened once in a whole run, not at each resolution of the settings
#    (tst_quantize opened it 390 times; it is written more than 1 s before the run: vol/config.c keeps no
#    parse of a file changed within the last second);
# and every create must leave its pointer and store. Skipped without strace.
. "$(dirname "$0")/../lib.sh"

command -v strace >/dev/null || { echo "SKIP: strace is not installed"; exit 77; }
prog=$H5ZARR_BUILD/tests/test_pointer
[ -x "$prog" ] || fail "$prog not built"
strace -f -o "$TMP/probe.log" -e trace=getpid true 2>/dev/null || { echo "SKIP: strace can't trace here (ptrace refused)"; exit 77; }
printf '[path *.nc]\nformat = zarr\n' >"$TMP/rules.conf"
sleep 1.2

# run N: N creates in $TMP/dN; prints "SYSCALLS RECORD_OPENS" of the last 10
run() {
    local n=$1 d=$TMP/d$1 log=$TMP/d$1.log
    mkdir "$d"
    # LeakSanitizer can't run under ptrace (sanitized builds)
    HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/rules.conf \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -qq -o "$log" "$prog" --many "$d" "$n" 10 || fail "N=$n: the program failed (status $?)"
    [ "$(find "$d" -maxdepth 1 -name 'f*.nc' -type f | wc -l)" -eq "$n" ] || fail "N=$n: not $n pointer files"
    [ "$(find "$d" -maxdepth 1 -name 'f*.nc.zarr' -type d | wc -l)" -eq "$n" ] || fail "N=$n: not $n stores"
    sed -n '/h5zmark-begin/,/h5zmark-end/p' "$log" >"$log.mid"
    [ -s "$log.mid" ] || fail "N=$n: the markers are not in the trace"
    echo "$(grep -vc 'resumed>' "$log.mid") $(grep -c 'open.*/\.h5zarr_pointer".*O_RDONLY' "$log.mid" || true)" \
        "$(grep -c 'open.*rules\.conf"' "$log" || true)"
}
read -r s40 r40 c40 <<<"$(run 40)"
read -r s200 r200 c200 <<<"$(run 200)"
echo "last 10 creates: N=40: $s40 system calls, $r40 record opens; N=200: $s200 system calls, $r200 record opens"
[ "$r40" -le 20 ] && [ "$r200" -le 20 ] || fail "a create read other stores' records ($r40 at N=40, $r200 at N=200 for 10 creates)"
pass "10 creates: $r40 record opens at N=40, $r200 at N=200"
[ "$s200" -le $((s40 * 115 / 100)) ] || fail "a create at N=200 made $s200 system calls (10 creates), at N=40 $s40: not flat"
pass "10 creates: $s40 system calls at N=40, $s200 at N=200"
[ "$c40" -eq 1 ] && [ "$c200" -eq 1 ] || fail "the config file was opened $c40 times (N=40), $c200 times (N=200), not once"
pass "the config file opened once a run (N=40: $c40, N=200: $c200)"
# The same names created again (a second pass over 20 names): the pointer's HDF5 part is written from
# memory, not made again by HDF5's H5Fcreate (which takes a file lock: one flock a create), and the files
# are the same bytes as after the first pass.
mkdir "$TMP/again"
HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/rules.conf ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    "$prog" --many "$TMP/again" 20 0 || fail "again: the first pass failed"
cp -r "$TMP/again" "$TMP/again.first"
HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/rules.conf ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -qq -o "$TMP/again.log" "$prog" --many "$TMP/again" 20 10 2 || fail "again: the program failed"
sed -n '/h5zmark-begin/,/h5zmark-end/p' "$TMP/again.log" >"$TMP/again.mid"
fl=$(grep -c 'flock(' "$TMP/again.mid" || true)
[ "$fl" -eq 0 ] || fail "creating 10 pointers again: $fl file locks (HDF5 made the pointer's HDF5 part again)"
for f in "$TMP"/again/f*.nc; do
    n=$(stat -c %s "$f")
    cmp -s <(head -c $((n - 512)) "$f") <(head -c $((n - 512)) "$TMP/again.first/${f##*/}") ||
        fail "${f##*/}: its HDF5 part differs from the first pass's"
done
pass "10 pointers created again: $fl file locks, the same HDF5 parts as the first time"

# H5Fis_accessible of a pointer (netCDF asks before each open) reads its store's root document once, not
# twice (the store was probed, then probed again to answer).
HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/rules.conf ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -qq -o "$TMP/acc.log" "$prog" --accessible "$TMP/again/f00003.nc" 10 || fail "H5Fis_accessible failed"
sed -n '/h5zmark-begin/,/h5zmark-end/p' "$TMP/acc.log" >"$TMP/acc.mid"
za=$(grep -c 'open.*f00003\.nc\.zarr/zarr\.json"' "$TMP/acc.mid" || true)
[ "$za" -eq 10 ] || fail "10 H5Fis_accessible of a pointer opened its store's zarr.json $za times, expected 10"
pass "10 H5Fis_accessible of a pointer: its store's zarr.json opened $za times"
finish
