#!/usr/bin/env bash
# Metadata at scale (issue 13): a group with 10,000 members made through the connector lists completely
# with h5ls -r, exactly as the same structure in a native file does, without a stat of any member's
# document (their times come with their reads); a store of 10,000 arrays with
# consolidated metadata (consolidated=1) opened read-only, visited (H5Ovisit3) and every dataset opened
# (H5Dopen2) reads one document: strace counts the files opened under the store (v2: .zmetadata alone;
# v3: the root zarr.json, which vol/file.c's root probe reads once more before the node cache does:
# two opens, one document) and sees no directory listed. The stores are made by bench/h5zarr_scale,
# which also times these steps for `make bench`.
. "$(dirname "$0")/../lib.sh"
cd "$TMP"
SCALE=$H5ZARR_BUILD/bench/h5zarr_scale
[ -x "$SCALE" ] || fail "no $SCALE (built with the bench programs)"

# ---- h5ls -r of a group with 10,000 members (1,000 groups, 9,000 scalar datasets)
"$SCALE" members m.zarr 10000 vol 3 >/dev/null || fail "making the 10,000 members through the connector"
"$SCALE" members m.h5 10000 hdf5 >/dev/null || fail "making the 10,000 members natively"
[ -f m.zarr/zarr.json ] && [ -f m.zarr/big/m09999/zarr.json ] || fail "m.zarr is no zarr store of the members"
is_h5 m.h5 || fail "m.h5 is not an HDF5 file"
HDF5_VOL_CONNECTOR=zarr h5ls -r m.zarr >ls.zarr || fail "h5ls -r m.zarr"
h5ls -r m.h5 >ls.h5 || fail "h5ls -r m.h5"
n=$(grep -cE '^/big/m[0-9]{5} ' ls.zarr || true)
[ "$n" = 10000 ] || fail "h5ls -r lists $n members of /big, not 10000"
[ "$(wc -l <ls.zarr)" = 10002 ] || fail "h5ls -r prints $(wc -l <ls.zarr) lines (/, /big and 10,000 members expected)"
grep -qE '^/big/m00000 +Group$' ls.zarr || fail "m00000 is not listed as a group"
grep -qE '^/big/m05001 +Dataset \{SCALAR\}$' ls.zarr || fail "m05001 is not listed as a scalar dataset"
grep -qE '^/big/m09999 +Dataset \{SCALAR\}$' ls.zarr || fail "m09999 (the last member) is not listed"
diff -u ls.h5 ls.zarr >ls.diff || fail "h5ls -r of the store differs from the native file's: $(head -5 ls.diff)"
pass "h5ls -r lists all 10,000 members of a group, as for the native file"

# ---- and asks no document's time of its own (issue 31): H5Oget_info's times of a node come with the
# read of its zarr.json (the directory store's fstat, zarr_node_load_timed), not a stat per member (was
# 10,000 stats of m.zarr/big/*/zarr.json)
if command -v strace >/dev/null; then
    HDF5_VOL_CONNECTOR=zarr strace -f -e trace=stat,lstat,newfstatat,statx -o stats.log h5ls -r "$PWD/m.zarr" >/dev/null ||
        fail "h5ls -r m.zarr under strace"
    n=$(grep -F "\"$PWD/m.zarr/big/" stats.log | grep -c 'zarr\.json"' || true)
    [ "$n" = 0 ] || fail "h5ls -r stats $n member documents after reading them: $(grep -F "$PWD/m.zarr/big/" stats.log | head -2)"
    pass "h5ls -r of the 10,000 members stats no member document (their times come with their reads)"
    # v2: a listing reads its children's documents as one batch (h5zv_node_prefetch_kids: .zarray, else
    # .zgroup, with .zattrs); an array's time comes with the read of its .zarray and a group's with the
    # read of its .zgroup, so none is stat'ed (arrays: was one stat each, the probe's, before that batch;
    # two before the times came with the reads; groups: one each until 2026-12-07)
    "$SCALE" members m2.zarr 200 vol 2 >/dev/null || fail "making 200 members in zarr v2"
    HDF5_VOL_CONNECTOR=zarr strace -f -e status=successful -e trace=stat,lstat,newfstatat,statx -o stats2.log \
        h5ls -r "$PWD/m2.zarr" >/dev/null || fail "h5ls -r m2.zarr under strace"
    n=$(grep -c "\"$PWD/m2.zarr/big/[^\"]*/\.zarray\"" stats2.log || true)
    g=$({ grep -o "\"$PWD/m2.zarr/big/[^\"]*/\.zgroup\"" stats2.log || true; } | sort -u | wc -l)
    [ "$n" = 0 ] && [ "$g" = 0 ] ||
        fail "v2: h5ls -r stats $n .zarray and $g .zgroup documents of members (expected none: their times come with their reads)"
    pass "v2: h5ls -r stats no member's .zarray or .zgroup (its time comes with its read in the listing's batch)"
else
    echo "skipped: strace not installed, the stats of h5ls -r are not counted"
fi

# ---- 10,000 arrays with consolidated metadata, opened read-only: one document read
have_strace=1
command -v strace >/dev/null || have_strace=0
for v in 2 3; do
    "$SCALE" arrays a$v.zarr 100 100 vol $v >/dev/null || fail "making 10,000 arrays (v$v, consolidated=1)"
    if [ $v = 2 ]; then
        [ -f a$v.zarr/.zmetadata ] || fail "v2: no .zmetadata written"
    else
        grep -q '"consolidated_metadata"' a$v.zarr/zarr.json || fail "v3: no consolidated metadata in zarr.json"
    fi
    if [ $have_strace = 0 ]; then
        "$SCALE" visit a$v.zarr vol 10000 >/dev/null || fail "v$v: visiting the 10,000 arrays"
        echo "skipped: strace not installed, the files opened under a$v.zarr are not counted"
        continue
    fi
    root=$PWD/a$v.zarr # strace prints the names as the program passes them
    strace -f -e trace=openat,open -o opens.$v "$SCALE" visit "$root" vol 10000 >/dev/null ||
        fail "v$v: visiting the 10,000 arrays (H5Ovisit3 + H5Dopen2 of each)"

    grep -F "\"$root/" opens.$v | grep -v ' = -1 ' >opened.$v || true
    grep -F "\"$root\"" opens.$v | grep -v ' = -1 ' >>opened.$v || true
    if grep -q O_DIRECTORY opened.$v; then fail "v$v: a directory of the store was listed: $(grep O_DIRECTORY opened.$v | head -2)"; fi
    docs=$(sed -E 's/.*"([^"]*)".*/\1/' opened.$v | sort -u)
    want=$root/zarr.json
    [ $v = 2 ] && want=$root/.zmetadata
    [ "$(wc -l <opened.$v)" = 1 ] && [ "$docs" = "$want" ] ||
        fail "v$v: the visit opened $(wc -l <opened.$v) files under the store, not $want once: $docs"
    pass "v$v: opening and visiting 10,000 consolidated arrays opens one document once, lists nothing"
done

# ---- writable opens never use the consolidated copy; read-only ones trust it and still find by name
# what it does not list
cp -r a2.zarr s.zarr
HDF5_VOL_CONNECTOR=zarr h5mkgrp s.zarr /late >/dev/null 2>&1 || fail "h5mkgrp /late (writable open, consolidated=0)"
[ -f s.zarr/late/.zgroup ] || fail "h5mkgrp did not make /late"
HDF5_VOL_CONNECTOR=zarr h5ls s.zarr >ls.s || fail "h5ls s.zarr"
if grep -q '^late ' ls.s; then fail "a read-only listing used the store, not the consolidated metadata"; fi
HDF5_VOL_CONNECTOR=zarr h5ls s.zarr/late >/dev/null 2>&1 || fail "/late, absent from the consolidated metadata, is not found by name"
if HDF5_VOL_CONNECTOR=zarr h5ls s.zarr/nope >/dev/null 2>&1; then fail "h5ls finds /nope, which is nowhere"; fi
pass "read-only opens list what the consolidated metadata lists and still find other nodes by name"
finish
