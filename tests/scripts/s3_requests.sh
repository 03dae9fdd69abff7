#!/usr/bin/env bash
# Issue 29's "metadata from memory" and "no request per object", counted by tools/latency_proxy.py (no
# delay) in front of s3rver: request counts and which keys they name, never times.
#  - consolidated=1, v3 and v2: closing a store created in this open with N CF-like variables
#    (bench/s3_latency cf-write) reads none of the documents it just wrote (no GET of a node's zarr.json,
#    .zarray, .zattrs or .zgroup in the proxy's log), and makes as many GETs for N = 10 as for N = 100
#    (what remains is opening and truncating the store);
#  - the consolidated document so written equals, byte for byte, what `zarrcore consolidate` (the core
#    reading every document back from the store) writes over it; so does the one written when the store
#    is reopened to add a group (h5mkgrp: untouched nodes read back, the new ones from memory);
#  - h5ls -r of the consolidated store (H5Literate and H5Oget_info with H5O_INFO_BASIC | H5O_INFO_TIME
#    of every object): as many requests for N = 10 as for N = 100, as many HEADs; h5ls -r -v shows the
#    same time for every object read from the consolidated metadata (the consolidated document's:
#    docs/FORMAT.md).
# Skips (77) without node/npm for s3rver.
. "$(dirname "$0")/../lib.sh"
. "$H5ZARR_SRC/tests/net/netlib.sh"
unset HDF5_VOL_CONNECTOR
cd "$TMP"
LAT=$H5ZARR_BUILD/bench/s3_latency
ZC=$H5ZARR_BUILD/tools/zarrcore
[ -x "$LAT" ] && [ -x "$ZC" ] || fail "$LAT or $ZC is not built"

s3_start "$TMP/s3data" bkt
$PY "$H5ZARR_SRC/tools/latency_proxy.py" "http://127.0.0.1:$S3_PORT" --port-file "$TMP/lp.port" \
    --log "$TMP/lp.log" 2>"$TMP/lp.err" &
NET_PIDS+=($!)
wait_file "$TMP/lp.port" 20 || fail "latency_proxy.py did not start: $(cat lp.err)"
LP=http://127.0.0.1:$(cat lp.port)
export AWS_ENDPOINT_URL=$LP
ctl() { curl -sS --fail "$LP/_proxy/$1"; }
field() { $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))' "$@"; }
SIGN=(--aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
fetch() { curl -sS --fail "${SIGN[@]}" "$LP/bkt/$1" -o "$2" || fail "GET $1"; }

# phase NAME CMD...: runs CMD, keeps the proxy's counts in NAME.json and its log lines in NAME.log
phase() {
    local name=$1 n0
    shift
    n0=$(wc -l <lp.log)
    ctl "stats?reset=1" >/dev/null
    "$@" >"$name.out" 2>"$name.err" || fail "$name: $* failed: $(tail -3 "$name.err")"
    ctl "stats?reset=1" >"$name.json"
    tail -n "+$((n0 + 1))" lp.log >"$name.log"
}
gets() { field "$1.json" 'by_method.get("GET", 0)'; }

for v in 3 2; do
    doc=zarr.json
    [ $v = 2 ] && doc=.zmetadata
    for n in 10 100; do
        phase "w$v-$n" env HDF5_VOL_CONNECTOR="zarr consolidated=1 version=$v" "$LAT" cf-write "s3://bkt/v$v-$n.zarr" $n
        if grep -E '^GET [^ ]*/(zarr\.json|\.zarray|\.zattrs|\.zgroup|\.zmetadata) ' "w$v-$n.log" | grep -q var; then
            fail "v$v, $n variables: the close read back documents it wrote: $(grep -E '^GET .*var' "w$v-$n.log" | head -3)"
        fi
        phase "ls$v-$n" env HDF5_VOL_CONNECTOR=zarr h5ls -r "s3://bkt/v$v-$n.zarr"
        [ "$(grep -c '^/var' "ls$v-$n.out")" = $n ] || fail "h5ls -r of v$v-$n lists $(grep -c '^/var' "ls$v-$n.out") variables"
        # -v prints the times (and reads more: storage sizes)
        HDF5_VOL_CONNECTOR=zarr h5ls -r -v "s3://bkt/v$v-$n.zarr" >"lsv$v-$n.out" || fail "h5ls -r -v of v$v-$n"
        [ "$(grep -c 'Modified:' "lsv$v-$n.out")" -gt $n ] && [ "$(grep 'Modified:' "lsv$v-$n.out" | sort -u | wc -l)" -le 2 ] ||
            fail "h5ls -r -v of v$v-$n: objects from the consolidated metadata report different times"
        # the core's own consolidation of the same store (every document read back) writes the same bytes
        fetch "v$v-$n.zarr/$doc" "c$v-$n.mem"
        AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT "$ZC" consolidate "s3://bkt/v$v-$n.zarr" "" >/dev/null ||
            fail "zarrcore consolidate v$v-$n"
        fetch "v$v-$n.zarr/$doc" "c$v-$n.store"
        cmp -s "c$v-$n.mem" "c$v-$n.store" || fail "v$v, $n variables: $doc from memory differs from the core's"
    done
    # an existing store opened for appending: its untouched nodes are read back, the new group is not
    HDF5_VOL_CONNECTOR="zarr consolidated=1" h5mkgrp -p "s3://bkt/v$v-10.zarr" /added/sub || fail "h5mkgrp into v$v-10"
    fetch "v$v-10.zarr/$doc" "a$v.mem"
    grep -q '"added/sub' "a$v.mem" || fail "v$v: the group made on reopen is not in $doc"
    AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT "$ZC" consolidate "s3://bkt/v$v-10.zarr" "" >/dev/null ||
        fail "zarrcore consolidate v$v-10 after the append"
    fetch "v$v-10.zarr/$doc" "a$v.store"
    cmp -s "a$v.mem" "a$v.store" || fail "v$v: $doc after an append differs from the core's"
    [ "$(gets w$v-10)" = "$(gets w$v-100)" ] ||
        fail "v$v: create + close made $(gets w$v-10) GETs for 10 variables, $(gets w$v-100) for 100"
    for k in requests 'by_method.get("HEAD", 0)'; do
        [ "$(field ls$v-10.json "$k")" = "$(field ls$v-100.json "$k")" ] ||
            fail "v$v: h5ls -r made $k $(field ls$v-10.json "$k") for 10 variables, $(field ls$v-100.json "$k") for 100"
    done
    pass "v$v consolidated=1: $(gets w$v-100) GETs to create and close 10 or 100 variables, none of a written document; $doc as the core writes it; h5ls -r $(field ls$v-100.json requests) requests for either"
done
[ ! -s lp.err ] || fail "the proxy reported errors: $(head -3 lp.err)"
finish
