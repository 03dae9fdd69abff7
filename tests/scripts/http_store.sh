#!/usr/bin/env bash
# The read-only HTTP store (zarr/store_http.c) against static servers on loopback, started and stopped
# here: tests/net/netserver.py static (byte ranges: 206, suffixes, 416) and python3 -m http.server
# (ignores Range: 200 with the whole file, HTTP/1.0). Stores written by the connector (v3 and v2, with
# consolidated metadata, one sharded) are read through the core (store_probe: gets, ranges, suffixes,
# batches; zarrcore dump) and through the connector (h5ls -r, h5dump), each compared with the same
# store read from the local folder; missing keys, ranges past the end, writes, listings and a server
# that answers 500 give clear errors naming the key and status. Through the connector, h5ls -r and
# h5dump -H of a consolidated store make at most 5 requests, none per object (issue 29).
. "$(dirname "$0")/../lib.sh"
. "$H5ZARR_SRC/tests/net/netlib.sh"
unset HDF5_VOL_CONNECTOR
cd "$TMP"
ZC=$H5ZARR_BUILD/tools/zarrcore
mkdir -p www

# ---- stores written by the connector: v3 and v2, consolidated on close, and a sharded v3 array
HDF5_VOL_CONNECTOR="zarr consolidated=1" "$EXAMPLES/write_field" www/f.zarr >/dev/null || fail "write_field v3"
HDF5_VOL_CONNECTOR="zarr version=2 consolidated=1" "$EXAMPLES/write_field" www/f2.zarr >/dev/null ||
    fail "write_field v2"
grep -q '"zarr_format": *3' www/f.zarr/zarr.json && grep -q consolidated_metadata www/f.zarr/zarr.json ||
    fail "www/f.zarr is not a consolidated zarr v3 store (the connector did not load?)"
[ -f www/f2.zarr/.zmetadata ] && grep -q '"zarr_format": *2' www/f2.zarr/.zgroup || fail "www/f2.zarr is not consolidated v2"
HDF5_VOL_CONNECTOR="zarr consolidated=1 shard_bytes=256" "$EXAMPLES/write_field" www/s.zarr >/dev/null ||
    fail "sharded store"
grep -rq sharding_indexed www/s.zarr || fail "www/s.zarr has no sharded array"

net_static www --log "$TMP/static.log"
U=http://127.0.0.1:$NET_PORT
net_pyhttp www
P=http://127.0.0.1:$PY_PORT

# ---- the store interface: whole values, ranges, suffixes, sizes, batches (both servers)
key=model/temperature/c/0/0
[ -f "www/f.zarr/$key" ] || fail "no chunk $key in the v3 store"
local_size=$(stat -c %s "www/f.zarr/$key")
for base in "$U" "$P"; do
    "$PROBE" "$base/f.zarr" get "$key" >got || fail "get $key from $base"
    cmp -s got "www/f.zarr/$key" || fail "get $key from $base: other bytes than the file"
    "$PROBE" "$base/f.zarr" range "$key" 3 10 >got || fail "range from $base"
    tail -c +4 "www/f.zarr/$key" | head -c 10 | cmp -s - got || fail "range 3+10 from $base: wrong bytes"
    "$PROBE" "$base/f.zarr" range "$key" 5 end >got || fail "open range from $base"
    tail -c +6 "www/f.zarr/$key" | cmp -s - got || fail "range 5+end from $base: wrong bytes"
    "$PROBE" "$base/f.zarr" suffix "$key" 7 >got || fail "suffix from $base"
    tail -c 7 "www/f.zarr/$key" | cmp -s - got || fail "suffix 7 from $base: wrong bytes"
    "$PROBE" "$base/f.zarr" suffix "$key" 100000 >got || fail "long suffix from $base"
    cmp -s got "www/f.zarr/$key" || fail "a suffix longer than the value is not the whole value ($base)"
    [ "$("$PROBE" "$base/f.zarr" size "$key")" = "$local_size" ] || fail "size from $base"
    [ "$("$PROBE" "$base/f.zarr" exists zarr.json)" = yes ] || fail "exists zarr.json ($base)"
    [ "$("$PROBE" "$base/f.zarr" exists nothere)" = no ] || fail "exists nothere ($base)"
    [ "$("$PROBE" "$base/f.zarr" exists model)" = no ] || fail "a folder is not a value ($base)"
    # one batch: whole values, ranges, suffixes, a missing key, a range past the end
    items=(zarr.json "$key" "$key@2+5" "$key@-4" "$key@1+end" nothere "$key@$((local_size + 5))+3")
    "$PROBE" "$base/f.zarr" many "${items[@]}" >many.out || true
    $PY - "$TMP/www/f.zarr" "$local_size" "$key" many.out >many.err 2>&1 <<'PY' || fail "get_many from $base: $(cat many.err)"
import sys
root, size, key = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def fnv(b):
    h = 1469598103934665603
    for x in b:
        h = ((h ^ x) * 1099511628211) & (2**64 - 1)
    return "%016x" % h
z = open(root + "/zarr.json", "rb").read()
c = open(root + "/" + key, "rb").read()
want = [("0", str(len(z)), z), ("0", str(size), c), ("0", None, c[2:7]), ("0", str(size), c[-4:]),
        ("0", str(size), c[1:]), ("-3", "-", b""), ("-6", None, b"")]
got = [l.split() for l in open(sys.argv[4]).read().splitlines()]
assert len(got) == len(want), got
for i, ((r, t, b), g) in enumerate(zip(want, got)):
    assert g[0] == r, (i, g, r)
    if t is not None:
        assert g[1] == t, (i, g, t)
    assert g[2] == str(len(b)) and g[3] == fnv(b), (i, g, len(b))
PY
done
pass "HTTP store: gets, ranges, suffixes, sizes and one batch equal the files (ranged server and http.server)"
grep -q ' GET /f.zarr/model/temperature/c/0/0 206' static.log || fail "the ranged server answered no 206"

# ---- errors: missing key, write, listing, a range past the end, a 500 that stays
"$PROBE" "$U/f.zarr" get nothere/zarr.json 2>err && fail "get of a missing key succeeded"
grep -q "no key 'nothere/zarr.json' in store '$U/f.zarr'" err || fail "missing key message: $(cat err)"
"$PROBE" "$U/f.zarr" put k /etc/hostname 2>err && fail "a write to an HTTP store succeeded"
grep -q "read-only" err || fail "write message: $(cat err)"
"$PROBE" "$U/f.zarr" list "" 2>err && fail "listing an HTTP store succeeded"
grep -q "HTTP servers can't list" err || fail "list message: $(cat err)"
"$PROBE" "$U/f.zarr" range "$key" $((local_size + 1)) 4 2>err && fail "a range past the end succeeded"
grep -q "the value has only $local_size bytes" err || fail "range past the end message: $(cat err)"
net_static www --faults 1
H5ZARR_HTTP_RETRIES=2 H5ZARR_HTTP_BACKOFF_MS=1 "$PROBE" "http://127.0.0.1:$NET_PORT/f.zarr" get zarr.json 2>err &&
    fail "a server failing every request still gave a value"
grep -Eq "key 'zarr.json' of 'http://127.0.0.1:$NET_PORT/f.zarr'.*(HTTP 5|attempts)" err || fail "500 message: $(cat err)"
pass "HTTP store: missing keys, writes, listings, ranges past the end and failing servers give clear errors"

# ---- through the core: zarrcore dump of every array equals the local store's
for st in f.zarr f2.zarr s.zarr; do
    arrays=$($PY -c '
import json, os, sys
for d, _, fs in os.walk(sys.argv[1]):
    rel = os.path.relpath(d, sys.argv[1])
    if ".zarray" in fs or ("zarr.json" in fs and json.load(open(d + "/zarr.json"))["node_type"] == "array"):
        print(rel)' "www/$st")
    [ -n "$arrays" ] || fail "no arrays found in $st"
    for a in $arrays; do
        "$ZC" dump "www/$st" "$a" >d.local || fail "zarrcore dump local $st/$a"
        "$ZC" dump "$U/$st" "$a" >d.http || fail "zarrcore dump $U/$st $a"
        cmp -s d.local d.http || fail "$st/$a read over HTTP differs from the local store"
    done
done
pass "core: every array of the v3, v2 and sharded stores reads over HTTP as from the folder"

# ---- through the connector: h5ls -r and h5dump equal the local store's (file names aside)
for st in f.zarr f2.zarr s.zarr; do
    for base in "$U" "$P"; do
        HDF5_VOL_CONNECTOR=zarr h5ls -r "www/$st" >ls.local || fail "h5ls local $st"
        HDF5_VOL_CONNECTOR=zarr h5ls -r "$base/$st" >ls.http 2>ls.err || fail "h5ls $base/$st: $(head -5 ls.err)"
        diff -u ls.local ls.http || fail "h5ls -r of $base/$st differs from the local store's"
        HDF5_VOL_CONNECTOR=zarr h5dump "www/$st" | sed "s|www/$st|FILE|" >d.local || fail "h5dump local $st"
        HDF5_VOL_CONNECTOR=zarr h5dump "$base/$st" 2>d.err | sed "s|$base/$st|FILE|" >d.http
        [ "${PIPESTATUS[0]}" = 0 ] || fail "h5dump $base/$st: $(head -5 d.err)"
        diff -u d.local d.http || fail "h5dump of $base/$st differs from the local store's"
    done
done
grep -q '273.15' d.http || grep -q 'DATA' d.http || fail "the h5dump output holds no data"
pass "connector: h5ls -r and h5dump of the stores over HTTP (both servers) equal the local stores'"

# ---- issue 29 on HTTP: a consolidated store opens and lists in a constant number of requests (counted in
# the static server's log): h5ls -r and h5dump -H of the v3 and v2 stores make at most 5, none naming an
# object below the root
for st in f.zarr f2.zarr; do
    for cmd in "h5ls -r" "h5dump -H"; do
        n0=$(wc -l <static.log)
        HDF5_VOL_CONNECTOR=zarr $cmd "$U/$st" >/dev/null 2>cnt.err || fail "$cmd $U/$st: $(head -3 cnt.err)"
        tail -n "+$((n0 + 1))" static.log >cnt.log
        [ "$(wc -l <cnt.log)" -le 5 ] || fail "$cmd of $st over HTTP made $(wc -l <cnt.log) requests: $(cat cnt.log)"
        ! grep -E " /$st/[^ .z][^ ]*/" cnt.log || fail "$cmd of $st over HTTP asked about an object: $(cat cnt.log)"
    done
done
pass "connector: h5ls -r and h5dump -H of the consolidated v3 and v2 stores over HTTP: at most 5 requests, none per object"
# ... and as many for 100 variables as for 10 (bench/s3_latency's CF-like variables), read or not: an open
# and a visit cost no request per object whatever their number
LAT=$H5ZARR_BUILD/bench/s3_latency
for v in 3 2; do
    for n in 10 100; do
        HDF5_VOL_CONNECTOR="zarr consolidated=1 version=$v" "$LAT" cf-write "www/cf$v-$n.zarr" $n >/dev/null ||
            fail "cf-write www/cf$v-$n.zarr"
        for cmd in "h5ls -r" "h5dump -H"; do
            n0=$(wc -l <static.log)
            HDF5_VOL_CONNECTOR=zarr $cmd "$U/cf$v-$n.zarr" >cnt.out 2>cnt.err || fail "$cmd $U/cf$v-$n.zarr: $(head -3 cnt.err)"
            [ "$(grep -c var0 cnt.out)" -ge $n ] || fail "$cmd of cf$v-$n.zarr over HTTP lists $(grep -c var0 cnt.out) variables"
            echo $(($(wc -l <static.log) - n0)) >"cnt-${cmd% *}-$v-$n"
        done
    done
    for cmd in h5ls h5dump; do
        [ "$(cat cnt-$cmd-$v-10)" = "$(cat cnt-$cmd-$v-100)" ] && [ "$(cat cnt-$cmd-$v-100)" -le 5 ] ||
            fail "$cmd of v$v over HTTP: $(cat cnt-$cmd-$v-10) requests for 10 variables, $(cat cnt-$cmd-$v-100) for 100"
    done
done
pass "connector: h5ls -r and h5dump -H over HTTP make as many requests for 100 variables as for 10 (v3 $(cat cnt-h5ls-3-100) and $(cat cnt-h5dump-3-100), v2 $(cat cnt-h5ls-2-100) and $(cat cnt-h5dump-2-100))"

# a write open of an HTTP URL through the connector fails with the store's reason
HDF5_VOL_CONNECTOR=zarr h5mkgrp "$U/f.zarr" /newgroup 2>err && fail "h5mkgrp on an HTTP store succeeded"
HDF5_VOL_CONNECTOR=zarr h5repack --enable-error-stack=2 www/f.zarr "$U/new.zarr" >err 2>&1 &&
    fail "h5repack to an HTTP store succeeded"
grep -q "HTTP stores are read-only" err || fail "h5repack message: $(head -30 err)"
[ ! -e www/new.zarr ] && [ ! -e "$U" ] && [ ! -e http: ] || fail "a write to an HTTP URL made a local file"
pass "connector: writes to an HTTP store are refused as read-only, and nothing local is made"
finish
