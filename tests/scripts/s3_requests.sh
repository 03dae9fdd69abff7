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
#    docs/FORMAT.md);
#  - issue 29's "no serial probes": h5ls -r and h5dump -H of the consolidated store make at most 5
#    requests, as many for 10 variables as for 100, none naming an object; reading N variables
#    (H5Dopen + H5Dread each) makes 4 chunk GETs per variable and otherwise only the open's requests
#    (as many for 10 as for 100);
#  - without consolidated metadata, a visit (h5dump -H) reads a group's children in one batch: at 40 ms a
#    request its depth for 60 variables is within 2 of that for 10;
#  - H5Dread_multi / H5Dwrite_multi of 10 variables is one batch (at 40 ms a request: the read's depth is
#    the open's and one batch's, the write's chunk PUTs wait at most 3 in sequence), values checked;
#  - without consolidated metadata, a visit of nested groups (h5dump -H, h5ls -r) lists the child groups
#    of each level in parallel: at 40 ms a request, 40 groups of 2 subgroups wait no more requests in
#    sequence than 10 but the extra waves of 32 listings and 64 requests in flight (6 at most; one group
#    at a time: 2 each, 60 more);
#  - without consolidated metadata, h5ls -r and h5ls -r -v (times and storage sizes) make as many HEADs
#    for 60 variables as for 10: times come with the batch that reads the children's documents, sizes
#    from a listing of each array's keys, not a HEAD per object or per chunk;
#  - a writable reopen (consolidated=1) that opens every variable by name and writes them (cf-writem):
#    the group's children are read ahead in one batch at the second lookup, and the consolidation at
#    close reads the untouched nodes in one batch: the metadata requests (all but the chunk PUTs) wait
#    no more in sequence for 100 variables than for 10 but for the waves of one batch (one at a time:
#    200 more), and no variable's document is read more than 3 times.
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
CHUNK='^GET [^ ]*/var[0-9]+/(c/)?[0-9]+[./][0-9]+[./][0-9]+ '

for v in 3 2; do
    doc=zarr.json
    [ $v = 2 ] && doc=.zmetadata
    for n in 10 100; do
        phase "w$v-$n" env HDF5_VOL_CONNECTOR="zarr consolidated=1 version=$v" "$LAT" cf-write "s3://bkt/v$v-$n.zarr" $n
        if grep -E '^GET [^ ]*/(zarr\.json|\.zarray|\.zattrs|\.zgroup|\.zmetadata) ' "w$v-$n.log" | grep -q var; then
            fail "v$v, $n variables: the close read back documents it wrote: $(grep -E '^GET .*var' "w$v-$n.log" | head -3)"
        fi
        phase "ls$v-$n" env HDF5_VOL_CONNECTOR=zarr h5ls -r "s3://bkt/v$v-$n.zarr"
        phase "dump$v-$n" env HDF5_VOL_CONNECTOR=zarr h5dump -H "s3://bkt/v$v-$n.zarr"
        phase "r$v-$n" env HDF5_VOL_CONNECTOR=zarr "$LAT" cf-read "s3://bkt/v$v-$n.zarr" $n
        # reading N variables: 4 chunk GETs each, and besides them only the open's requests
        [ "$(grep -cE "$CHUNK" "r$v-$n.log")" = $((4 * n)) ] || fail "cf-read of v$v-$n: $(grep -cE "$CHUNK" "r$v-$n.log") chunk GETs"
        grep -vE "$CHUNK" "r$v-$n.log" >"r$v-$n.meta"
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
    # a consolidated open + visit: a constant number of requests, at most 5, no per-object probe; so is
    # the open of a read, after which only chunks are read
    for p in ls dump; do
        [ "$(field $p$v-10.json requests)" = "$(field $p$v-100.json requests)" ] && [ "$(field $p$v-100.json requests)" -le 5 ] ||
            fail "v$v: $p made $(field $p$v-10.json requests) requests for 10 variables, $(field $p$v-100.json requests) for 100"
        ! grep -E '/var[0-9]' $p$v-100.log || fail "v$v: $p asked the store about an object: $(grep -E '/var[0-9]' $p$v-100.log | head -2)"
    done
    [ "$(wc -l <r$v-10.meta)" = "$(wc -l <r$v-100.meta)" ] && [ "$(wc -l <r$v-100.meta)" -le 4 ] ||
        fail "v$v: cf-read made $(wc -l <r$v-10.meta) other requests for 10 variables, $(wc -l <r$v-100.meta) for 100: $(head -5 r$v-100.meta)"
    for k in requests 'by_method.get("HEAD", 0)'; do
        [ "$(field ls$v-10.json "$k")" = "$(field ls$v-100.json "$k")" ] ||
            fail "v$v: h5ls -r made $k $(field ls$v-10.json "$k") for 10 variables, $(field ls$v-100.json "$k") for 100"
    done
    pass "v$v consolidated=1: $(gets w$v-100) GETs to create and close 10 or 100 variables, none of a written document; $doc as the core writes it; h5ls -r $(field ls$v-100.json requests) requests for either"
done
# H5Dread_multi / H5Dwrite_multi over 10 variables (4 chunks each) of the v3 store: one batch each. With a
# delay of 40 ms per request and room for every chunk in flight, the read waits for the open (the bucket
# check, the root document) and one batch (6 at most, a margin for a loaded machine opening 40
# connections; 10 H5Dread calls wait 12); the write's 40 chunk PUTs wait at most 3 one after another
# (one set_many; a write per variable waits 10), and what it wrote reads back (cf-read+1 checks every
# value).
for n in 10 60; do # without consolidated metadata
    HDF5_VOL_CONNECTOR=zarr "$LAT" cf-write "s3://bkt/nc$n.zarr" $n >/dev/null || fail "cf-write nc$n"
done
ctl "delay?ms=40" >/dev/null
export H5ZARR_HTTP_INFLIGHT=64
# a visit without consolidated metadata reads a group's children's documents in one batch: h5dump -H of
# 60 variables waits no more requests in sequence than of 10 (one at a time: 50 more)
for n in 10 60; do phase nd$n env HDF5_VOL_CONNECTOR=zarr h5dump -H "s3://bkt/nc$n.zarr"; done
[ "$(grep -c 'var0[0-9][0-9]/zarr.json' nd60.log)" -ge 60 ] && [ "$(field nd60.json depth)" -le $(($(field nd10.json depth) + 2)) ] ||
    fail "h5dump -H without consolidated metadata: depth $(field nd10.json depth) for 10 variables, $(field nd60.json depth) for 60"
pass "h5dump -H without consolidated metadata: depth $(field nd10.json depth) for 10 variables, $(field nd60.json depth) for 60 (children read in one batch)"
for n in 10 40; do
    HDF5_VOL_CONNECTOR=zarr "$LAT" cf-write "s3://bkt/nest$n.zarr" 1 >/dev/null || fail "cf-write nest$n"
    HDF5_VOL_CONNECTOR=zarr h5mkgrp -p "s3://bkt/nest$n.zarr" $(for i in $(seq -w 1 $n); do echo /g$i/a /g$i/b; done) ||
        fail "h5mkgrp nest$n"
    phase nest$n env HDF5_VOL_CONNECTOR=zarr h5dump -H "s3://bkt/nest$n.zarr"
    phase nestls$n env HDF5_VOL_CONNECTOR=zarr h5ls -r "s3://bkt/nest$n.zarr"
    [ "$(grep -c 'GROUP "[ab]"' nest$n.out)" = $((2 * n)) ] && [ "$(grep -c '^/g[0-9]*/[ab] ' nestls$n.out)" = $((2 * n)) ] ||
        fail "h5dump -H / h5ls -r of nest$n.zarr: $(grep -c 'GROUP "[ab]"' nest$n.out) / $(grep -c '^/g[0-9]*/[ab] ' nestls$n.out) subgroups"
done
for p in nest nestls; do
    [ "$(field ${p}40.json depth)" -le $(($(field ${p}10.json depth) + 6)) ] ||
        fail "a visit without consolidated metadata ($p): depth $(field ${p}10.json depth) for 10 groups, $(field ${p}40.json depth) for 40"
done
pass "a visit without consolidated metadata lists each level's groups in parallel: h5dump -H depth $(field nest10.json depth) for 10 groups of 2, $(field nest40.json depth) for 40; h5ls -r $(field nestls10.json depth) and $(field nestls40.json depth)"
heads() { field "$1.json" 'by_method.get("HEAD", 0)'; }
ctl "delay?ms=0" >/dev/null # counts only
for n in 10 60; do
    phase nls$n env HDF5_VOL_CONNECTOR=zarr h5ls -r "s3://bkt/nc$n.zarr"
    phase nlsv$n env HDF5_VOL_CONNECTOR=zarr h5ls -r -v "s3://bkt/nc$n.zarr"
    [ "$(grep -c 'Modified:' nlsv$n.out)" -gt $n ] && [ "$(grep -c 'Chunks:' nlsv$n.out)" -ge $n ] ||
        fail "h5ls -r -v of nc$n.zarr shows no times or storage: $(head -5 nlsv$n.out)"
done
[ "$(heads nls10)" = "$(heads nls60)" ] && [ "$(heads nlsv10)" = "$(heads nlsv60)" ] && [ "$(heads nlsv60)" -le 3 ] ||
    fail "without consolidated metadata: h5ls -r made $(heads nls10) HEADs for 10 variables, $(heads nls60) for 60; h5ls -r -v $(heads nlsv10) and $(heads nlsv60)"
ctl "delay?ms=40" >/dev/null
pass "without consolidated metadata: h5ls -r and h5ls -r -v make $(heads nls60) and $(heads nlsv60) HEADs for 10 or 60 variables (times from the children's batch, sizes from listings)"
phase rm env HDF5_VOL_CONNECTOR=zarr "$LAT" cf-readm s3://bkt/v3-10.zarr 10
[ "$(grep -cE "$CHUNK" rm.log)" = 40 ] && [ "$(field rm.json depth)" -le 6 ] ||
    fail "H5Dread_multi of 10 variables: $(grep -cE "$CHUNK" rm.log) chunk GETs, depth $(field rm.json depth) (6 at most): $(cat rm.json)"
phase wm env HDF5_VOL_CONNECTOR=zarr "$LAT" cf-writem s3://bkt/v3-10.zarr 10
grep -E '^PUT [^ ]*/var[0-9]+/c/' wm.log >wm.chunks
[ "$(wc -l <wm.chunks)" = 40 ] || fail "H5Dwrite_multi of 10 variables: $(wc -l <wm.chunks) chunk PUTs"
chain() { # the longest chain of the logged requests each starting after the previous one ended
    $PY -c 'import sys
t = sorted((float(l.split()[-2]), float(l.split()[-1])) for l in open(sys.argv[1]))
best = []
for i, (s, e) in enumerate(t):
    best.append(1 + max([best[j] for j in range(i) if t[j][1] <= s] or [0]))
print(max(best or [0]))' "$1"
}
[ "$(chain wm.chunks)" -le 3 ] ||
    fail "H5Dwrite_multi of 10 variables: its chunk PUTs waited $(chain wm.chunks) one after another (one batch: 3 at most)"
# a writable reopen of 10 and of 100 variables (consolidated=1): the metadata requests' chain
for n in 10 100; do
    phase wmc$n env HDF5_VOL_CONNECTOR="zarr consolidated=1" "$LAT" cf-writem "s3://bkt/v3-$n.zarr" $n
    grep -vE '^PUT ' wmc$n.log | grep -vE "$CHUNK" >wmc$n.meta
    [ "$(grep -c '/var000/zarr.json' wmc$n.meta)" -le 3 ] && [ "$(grep -c '/var009/zarr.json' wmc$n.meta)" -le 3 ] ||
        fail "cf-writem of $n variables read var000/zarr.json $(grep -c '/var000/zarr.json' wmc$n.meta) times"
done
[ "$(chain wmc100.meta)" -le $(($(chain wmc10.meta) + 5)) ] ||
    fail "a writable reopen: its metadata requests waited $(chain wmc10.meta) in sequence for 10 variables, $(chain wmc100.meta) for 100"
pass "a writable reopen of 10 or 100 variables (H5Dopen of each, H5Dwrite_multi, consolidated close): metadata requests $(chain wmc10.meta) and $(chain wmc100.meta) in sequence"
ctl "delay?ms=0" >/dev/null
unset H5ZARR_HTTP_INFLIGHT
phase r1 env HDF5_VOL_CONNECTOR=zarr "$LAT" cf-read+1 s3://bkt/v3-10.zarr 10
pass "H5Dread_multi of 10 variables: 40 chunk GETs, depth $(field rm.json depth) with the open; H5Dwrite_multi: 40 chunk PUTs, $(chain wm.chunks) in sequence, read back"
[ ! -s lp.err ] || fail "the proxy reported errors: $(head -3 lp.err)"
finish
