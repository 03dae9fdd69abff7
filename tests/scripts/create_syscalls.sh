#!/usr/bin/env bash
# Metadata creates at scale make the file system calls of their plain-C floor (issue 31; bench/README.md
# "Metadata creates at scale"): bench/h5zarr_scale's members (a group of 300 members, every 10th a group,
# the others scalar int32 datasets) and arrays (3 groups of 10 datasets, consolidated metadata at close)
# through the connector (zarr v3), under strace, against floor-members / floor-arrays, the same files
# written the least way (per folder one mkdir, per file one O_TMPFILE open + linkat, the root's document
# written at create and replaced at close: linkat under a temporary name + rename; the connector's store,
# not durable, exchanges it with the key instead and unlinks the old file: one unlink more, under the
# temporary name, zarr/store_dir.c):
#  - no failed O_TMPFILE open and no failed mkdir under the store (the directory store makes a new
#    member's folders top-down below the folders it made, zarr/store_dir.c make_fresh; it used to try
#    the open first: one failed open per member, and per array one more failed mkdir);
#  - as many mkdir, O_TMPFILE opens, linkat and renames under the store as the floor, and no unlink but
#    the replaced root document's;
#  - the same files of the same sizes as the floor's (so the floor is what the connector must write);
#  - created again over the store (a truncating create: the root swapped for an empty one), no failed
#    open or mkdir either (zarr/store_dir.c fresh_reset_root);
#  - the datasets' chunks, written by H5Dwrite before the first flush, are written at the close with
#    each dataset's document, over the pool of 2 threads (vol/flush.c, zarr_array_hold_writes): the
#    members' by more than one thread (they used to be all the caller's, one after another at
#    H5Dwrite/H5Dclose).
# Skipped without strace.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR
command -v strace >/dev/null || { echo "SKIP: strace is not installed"; exit 77; }
strace -f -o "$TMP/probe.log" -e trace=getpid true 2>/dev/null || { echo "SKIP: strace can't trace here (ptrace refused)"; exit 77; }
SCALE=$H5ZARR_BUILD/bench/h5zarr_scale
export H5ZARR_THREADS=2 # the pool of the close's flush, whatever the cores
[ -x "$SCALE" ] || fail "no $SCALE (built with the bench programs)"
cd "$TMP"

# trace NAME ARGS...: h5zarr_scale ARGS under strace (every call, failed ones too), log NAME.log (one
# file per thread first, -ff: no call split in two by another thread's)
trace() {
    local name=$1
    shift
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -ff -qq -o "$name.t" \
        -e trace=openat,mkdir,mkdirat,linkat,rename,renameat,renameat2,unlink,unlinkat "$SCALE" "$@" >/dev/null \
        || fail "$name: h5zarr_scale $* failed"
    cat "$name".t.* >"$name.log"
}
# calls LOG STORE: "kind count" of the calls under STORE's path (successful and failed), one per line
calls() {
    local log=$1
    grep -F -e "\"$PWD/$2/" -e "\"$PWD/$2\"" "$log" | awk '
        /^openat\(.*O_TMPFILE/ { k = "tmpfile" } /^openat\(/ && !/O_TMPFILE/ { next }
        /^mkdir/ { k = "mkdir" } /^linkat/ { k = "linkat" } /^rename/ { k = "rename" } /^unlink/ { k = "unlink" }
        { if (/= -1 /) k = k "-failed"; n[k]++ }
        END { for (k in n) print k, n[k] }' | sort
}
# sizes STORE: "path size" of every file below STORE
sizes() { (cd "$1" && find . -type f -printf '%p %s\n' | sort); }

for kind in members arrays; do
    if [ $kind = members ]; then
        args=(300 vol 3)
        floor=(floor-members fm 300)
    else
        args=(3 10 vol 3)
        floor=(floor-arrays fa 3 10)
    fi
    trace vol-$kind $kind "$PWD/$kind.zarr" "${args[@]}"
    trace floor-$kind "${floor[0]}" "$PWD/$kind.floor" "${floor[@]:2}"
    v=$(calls vol-$kind.log $kind.zarr)
    f=$(calls floor-$kind.log $kind.floor)
    # (one failed linkat is the root's replacement at close: EEXIST, then a temporary name and a rename)
    if grep -qE '^(tmpfile|mkdir)-failed' <<<"$v"; then
        fail "$kind: failed calls under the store: $(grep -- -failed <<<"$v" | tr '\n' ' ') ($(grep -F "$PWD/$kind.zarr/" vol-$kind.log | grep -m3 '= -1 E[NO]' | tr '\n' ';'))"
    fi
    [ "$(awk '$1 == "linkat-failed" {print $2}' <<<"$v")" = 1 ] || fail "$kind: one failed linkat expected (the root's replacement): $v"
    [ "$(awk '$1 == "unlink" {print $2}' <<<"$v")" = 1 ] ||
        fail "$kind: one unlink expected (the root's old document after the exchange at close): $v"
    grep -q '\.h5zarr-tmp\.' <(grep -E '^unlink' vol-$kind.log | grep -F "\"$PWD/$kind.zarr/") ||
        fail "$kind: the unlink is not of the store's temporary name: $(grep -E '^unlink' vol-$kind.log | head -2)"
    v=$(grep -v '^unlink ' <<<"$v")
    [ "$v" = "$f" ] || fail "$kind: the connector's calls [$(tr '\n' ' ' <<<"$v")] differ from the floor's [$(tr '\n' ' ' <<<"$f")]"
    # the per-member figures the floor stands for, exactly
    dirs=$(find $kind.zarr -type d | wc -l) # the root too
    files=$(find $kind.zarr -type f | wc -l)
    [ "$(awk '$1 == "mkdir" {print $2}' <<<"$v")" = "$dirs" ] || fail "$kind: $dirs folders but mkdir calls: $v"
    [ "$(awk '$1 == "tmpfile" {print $2}' <<<"$v")" = "$((files + 1))" ] ||
        fail "$kind: $files files (the root twice) but O_TMPFILE opens: $v"
    [ "$(awk '$1 == "rename" {print $2}' <<<"$v")" = 1 ] || fail "$kind: one rename expected (the root at close): $v"
    diff <(sizes $kind.zarr | cut -d' ' -f1) <(sizes $kind.floor | cut -d' ' -f1) >/dev/null ||
        fail "$kind: the connector's files are not the floor's: $(diff <(sizes $kind.zarr | cut -d' ' -f1) <(sizes $kind.floor | cut -d' ' -f1) | head -4 | tr '\n' ' ')"
    pass "$kind: $dirs folders, $files files, the floor's calls ($(tr '\n' ' ' <<<"$v")), no failed open or mkdir"
    # the chunks' linkat per thread (members: big/m<i>/c, arrays: g<i>/a<k>/c/0)
    per=$(for t in vol-$kind.t.*; do
        grep -cE "^linkat\(.*\"$PWD/$kind\.zarr/[^\"]*/c(/0)?\", AT_EMPTY_PATH\) = 0" "$t" || true
    done | awk '$1 > 0' | sort -rn | tr '\n' ' ')
    chunks=$(find $kind.zarr -type f \( -name c -o -path '*/c/0' \) | wc -l)
    [ "$(tr ' ' '\n' <<<"$per" | awk '{ s += $1 } END { print s }')" = "$chunks" ] ||
        fail "$kind: $chunks chunks, but chunk linkats per thread: $per"
    # (members: 270 chunks, a pool job of ~10 ms that the second thread joins; the arrays' 30 may all go
    # to the first thread on a loaded machine before the second wakes: reported, not asserted)
    [ $kind = arrays ] || [ "$(wc -w <<<"$per")" -ge 2 ] || fail "$kind: every chunk written by one thread ($per of $chunks)"
    pass "$kind: $chunks chunks written by $(wc -w <<<"$per") threads ($per)"
done
# the sizes: every member's and array's document and chunk as the floor writes them, exactly; the
# documents whose size grows with their members (a group's link order, /big's, the consolidated root)
# within 5% (the floor sizes them by a rule, bench/h5zarr_scale.c)
for kind in members arrays; do
    grown='^\./(zarr\.json|big/zarr\.json|g[0-9]+/zarr\.json) '
    d=$(diff <(sizes $kind.zarr | grep -vE "$grown") <(sizes $kind.floor | grep -vE "$grown") | head -4 | tr '\n' ' ' || true)
    [ -z "$d" ] || fail "$kind: files of other sizes than the floor's: $d"
    n=0
    while read -r f zs; do
        fs=$(stat -c %s "$kind.floor/$f")
        [ $((fs * 100)) -ge $((zs * 95)) ] && [ $((fs * 100)) -le $((zs * 105)) ] ||
            fail "$kind: the floor's $f is $fs bytes, the connector's $zs"
        n=$((n + 1))
    done < <(sizes $kind.zarr | grep -E "$grown")
    pass "$kind: every file the size of the floor's ($n growing documents within 5%)"
done
# a truncating create over the members' store (H5F_ACC_TRUNC: the old content swapped aside as trash,
# docs/FORMAT.md "Trash"): the new, empty root is all the store made, so the members are made again
# without a failed open or mkdir, and the store holds the same files
sizes members.zarr >members.before
trace vol-again members "$PWD/members.zarr" 300 vol 3
v=$(calls vol-again.log members.zarr)
# (the root's own mkdir finds it: EEXIST, before the swap)
if grep -qE '^tmpfile-failed' <<<"$v" || grep -E '^mkdir\(' vol-again.log | grep -F "\"$PWD/members.zarr/" | grep -q '= -1 '; then
    fail "members again: failed calls under the store: $(grep -- -failed <<<"$v" | tr '\n' ' ') ($(grep -F "$PWD/members.zarr" vol-again.log | grep -m3 '= -1 E' | tr '\n' ';'))"
fi
diff members.before <(sizes members.zarr) >/dev/null || fail "members again: other files than the first create's"
pass "members created again over the store: no failed open or mkdir ($(tr '\n' ' ' <<<"$v")), the same files"
finish
