#!/usr/bin/env bash
# The S3 store (zarr/store_s3.c) against s3rver on loopback (pinned in tests/net/package-lock.json,
# `npm ci` into the build tree), started and stopped here. s3rver does not check SigV4 signatures, so
# most requests go through tests/net/netserver.py proxy --sigv4, which does (with a secret of its own).
#  - the store interface: set_many, paginated listings (with and without the delimiter), gets, ranges,
#    suffixes, sizes, deletes, del_prefix, equal to what was written;
#  - the connector: write_field (v3, v2) and h5repack write to s3://, and a reopen adds a group; h5ls -r,
#    h5dump and h5diff read back equal to the same programs' local stores, every object equal to the local
#    store's files (same keys, same bytes); zarrita reads the S3 store through its own FetchStore;
#  - virtual-hosted addressing and credentials from a profile of the shared files;
#  - bad credentials (unknown key id, wrong secret), a missing bucket and an unreachable endpoint each give
#    a clear error; the secret appears in no output or log;
#  - through a proxy injecting 5xx bursts and dropped connections, writes and reads retry, and the bucket
#    ends up holding exactly the local store's keys and bytes (nothing lost or duplicated).
. "$(dirname "$0")/../lib.sh"
. "$H5ZARR_SRC/tests/net/netlib.sh"
unset HDF5_VOL_CONNECTOR
cd "$TMP"
ZC=$H5ZARR_BUILD/tools/zarrcore
SECRET="h5zarr-Secret-$$-Qx7Zp"

s3_start "$TMP/s3data" bkt
S3=http://127.0.0.1:$S3_PORT
net_proxy "$S3" --sigv4 "S3RVER:$SECRET" --log "$TMP/proxy.log"
PROXY=http://127.0.0.1:$NET_PORT
export AWS_SECRET_ACCESS_KEY=$SECRET AWS_ENDPOINT_URL=$PROXY H5ZARR_HTTP_LOG=1

# ---- the store interface
"$PROBE" s3://bkt/probe putmany 40 p 2>probe.err || fail "set_many of 40 keys: $(cat probe.err)"
H5ZARR_S3_MAX_KEYS=7 "$PROBE" s3://bkt/probe keys "" >keys.out 2>>probe.err || fail "list_keys: $(cat probe.err)"
$PY - keys.out <<'PY' || fail "list_keys (pages of 7) differs from the 40 keys written"
import sys
got = sorted(l.split() for l in open(sys.argv[1]).read().splitlines())
want = sorted([f"p/{i}", str(len(f"value {i}\n") * (i + 1))] for i in range(40))
assert got == want, (got[:5], want[:5])
PY
[ "$(grep -c 'list-type=2' proxy.log)" -ge 6 ] || fail "list_keys of 40 keys in pages of 7 made fewer than 6 requests"
H5ZARR_S3_MAX_KEYS=3 "$PROBE" s3://bkt/probe list "" >list.out 2>>probe.err || fail "list root"
[ "$(cat list.out)" = "d p" ] || fail "list of the root: $(cat list.out)"
H5ZARR_S3_MAX_KEYS=9 "$PROBE" s3://bkt/probe list p | sort -k2 -n >list.out 2>>probe.err || fail "list p"
[ "$(wc -l <list.out)" = 40 ] && [ "$(head -1 list.out)" = "v 0" ] && [ "$(tail -1 list.out)" = "v 39" ] ||
    fail "list of p: $(head -3 list.out)"
printf 'value 3\nvalue 3\nvalue 3\nvalue 3\n' >want3
"$PROBE" s3://bkt/probe get p/3 >got && cmp -s got want3 || fail "get p/3"
"$PROBE" s3://bkt/probe range p/3 8 7 >got && [ "$(cat got)" = "value 3" ] || fail "range p/3 8+7"
"$PROBE" s3://bkt/probe suffix p/3 8 >got && tail -c 8 want3 | cmp -s - got || fail "suffix p/3 8"
[ "$("$PROBE" s3://bkt/probe size p/3)" = 32 ] || fail "size p/3"
"$PROBE" s3://bkt/probe many p/0 p/39@0+8 p/5@-3 nothere p/1@100+1 >many.out || true
$PY - many.out <<'PY' || fail "get_many: $(cat many.out)"
import sys
g = [l.split() for l in open(sys.argv[1]).read().splitlines()]
assert [x[0] for x in g] == ["0", "0", "0", "-3", "-6"], g
assert g[0][1:3] == ["8", "8"] and g[1][2] == "8" and g[2][1:3] == ["48", "3"], g
PY
head -c 100000 /dev/urandom >big
"$PROBE" s3://bkt/probe put big/one big && "$PROBE" s3://bkt/probe get big/one >got && cmp -s got big ||
    fail "a 100 kB value does not come back equal"
"$PROBE" s3://bkt/probe del big/one && [ "$("$PROBE" s3://bkt/probe exists big/one)" = no ] || fail "del"
"$PROBE" s3://bkt/probe get big/one 2>err && fail "get of a deleted key succeeded"
grep -q "no key 'big/one' in store 's3://bkt/probe'" err || fail "missing key message: $(cat err)"
"$PROBE" s3://bkt/probe delprefix p && [ -z "$("$PROBE" s3://bkt/probe keys "")" ] || fail "del_prefix p"
pass "store: set_many, paginated listings, gets, ranges, suffixes, a batch, deletes and del_prefix (SigV4 checked)"

# ---- the connector: writes to s3:// and reads back, against the same programs' local stores
HDF5_VOL_CONNECTOR=zarr "$EXAMPLES/write_field" f.zarr >/dev/null || fail "write_field local"
HDF5_VOL_CONNECTOR=zarr "$EXAMPLES/write_field" s3://bkt/f.zarr >w.out 2>w.err || fail "write_field s3: $(tail -5 w.err)"
HDF5_VOL_CONNECTOR="zarr version=2" "$EXAMPLES/write_field" f2.zarr >/dev/null || fail "write_field v2 local"
HDF5_VOL_CONNECTOR="zarr version=2" "$EXAMPLES/write_field" s3://bkt/f2.zarr >w2.out 2>w2.err || fail "write_field v2 s3"
"$PROBE" s3://bkt/f.zarr get zarr.json | grep -q '"zarr_format": *3' || fail "no zarr v3 store came out at s3://bkt/f.zarr"
"$PROBE" s3://bkt/f2.zarr get .zgroup | grep -q '"zarr_format": *2' || fail "no zarr v2 store came out at s3://bkt/f2.zarr"
[ ! -e s3: ] && [ ! -e bkt ] && [ ! -e f.zarr.zarr ] || fail "writing to s3:// made a local file: $(ls "$TMP")"
# same_objects LOCAL URL: the S3 store holds exactly the local store's keys, with the same bytes
same_objects() {
    (cd "$1" && find . -type f | sed 's|^\./||' | sort) >keys.local
    "$PROBE" "$2" keys "" | cut -d' ' -f1 | sort >keys.s3 || fail "keys of $2"
    diff -u keys.local keys.s3 || fail "the keys of $2 differ from $1's"
    while read -r k; do
        "$PROBE" "$2" get "$k" >obj || fail "get $k of $2"
        cmp -s obj "$1/$k" || fail "key $k of $2 differs from $1/$k"
    done <keys.local
}
same_objects f.zarr s3://bkt/f.zarr
same_objects f2.zarr s3://bkt/f2.zarr
for st in f.zarr f2.zarr; do
    HDF5_VOL_CONNECTOR=zarr h5ls -r "$st" >ls.local || fail "h5ls local"
    HDF5_VOL_CONNECTOR=zarr h5ls -r "s3://bkt/$st" >ls.s3 2>ls.err || fail "h5ls s3://bkt/$st: $(head -3 ls.err)"
    diff -u ls.local ls.s3 || fail "h5ls -r of s3://bkt/$st differs"
    HDF5_VOL_CONNECTOR=zarr h5dump "$st" | sed "s|$st|FILE|" >d.local
    HDF5_VOL_CONNECTOR=zarr h5dump "s3://bkt/$st" 2>d.err | sed "s|s3://bkt/$st|FILE|" >d.s3
    diff -u d.local d.s3 || fail "h5dump of s3://bkt/$st differs: $(head -3 d.err)"
done
grep -q 273.15 d.s3 || fail "the h5dump of the S3 store holds no data"
"$EXAMPLES/write_field" native.h5 >/dev/null || fail "write_field native"
HDF5_VOL_CONNECTOR=zarr h5repack native.h5 s3://bkt/r.zarr 2>rp.err || fail "h5repack to s3: $(tail -5 rp.err)"
"$PROBE" s3://bkt/r.zarr get zarr.json | grep -q '"zarr_format": *3' || fail "h5repack made no zarr store on S3"
h5diff --vol-name-2=zarr native.h5 s3://bkt/r.zarr || fail "h5diff native.h5 vs s3://bkt/r.zarr"
HDF5_VOL_CONNECTOR=zarr h5mkgrp s3://bkt/f.zarr /extra || fail "h5mkgrp on s3://bkt/f.zarr"
HDF5_VOL_CONNECTOR=zarr h5ls "s3://bkt/f.zarr" | grep -q '^extra *Group' || fail "the group added on S3 is not listed"
"$PROBE" s3://bkt/f.zarr exists extra/zarr.json | grep -q yes || fail "no extra/zarr.json on S3"
pass "connector: write_field (v3, v2), h5repack and h5mkgrp on s3://; objects, h5ls, h5dump, h5diff equal local"

# URL names in the connector: create without .zarr, external links, references, is_accessible, delete
(HDF5_VOL_CONNECTOR=zarr "$H5ZARR_BUILD/tests/vol_urls" s3://bkt/vu >vu.out 2>vu.err) ||
    fail "vol_urls: $(head -30 vu.err)"
[ "$(grep -c '^ok:' vu.out)" = 4 ] || fail "vol_urls: $(cat vu.out)"
"$PROBE" s3://bkt/vu/ext.zarr get zarr.json | grep -q '"zarr_format": *3' || fail "no zarr store at s3://bkt/vu/ext.zarr"
[ -z "$("$PROBE" s3://bkt/vu/plain keys "")" ] || fail "H5Fdelete left keys of s3://bkt/vu/plain"
[ ! -e plain ] && [ -d holder_local.zarr ] || fail "vol_urls made a local 'plain' or no holder_local.zarr"
pass "connector on URL names: create without .zarr, external links (URL, relative), references, delete"

# ---- an independent client: zarrita's FetchStore reads the arrays straight from s3rver
arrays=$($PY -c '
import json, os, sys
for d, _, fs in os.walk(sys.argv[1]):
    if "zarr.json" in fs and json.load(open(d + "/zarr.json"))["node_type"] == "array":
        print(os.path.relpath(d, sys.argv[1]))' f.zarr)
[ -n "$arrays" ] || fail "no arrays in f.zarr"
for a in $arrays; do
    node "$INTEROP/zarrita_fetch.mjs" "$S3/bkt/f.zarr" "$a" >zt.json 2>zt.err || fail "zarrita fetch $a: $(cat zt.err)"
    "$ZC" dump f.zarr "$a" >zc.json || fail "zarrcore dump $a"
    $PY - zt.json zc.json "$a" <<'PY' || fail "zarrita's read of s3://bkt/f.zarr/$a differs from the local store's"
import json, sys
zt = json.load(open(sys.argv[1]))[sys.argv[3]]
zc = json.load(open(sys.argv[2]))
assert zt["shape"] == zc["shape"] and zt["data"] == zc["data"], (zt["shape"], zc["shape"])
assert len(zt["data"]) > 0
PY
done
pass "interop: zarrita (FetchStore over HTTP from s3rver) reads what the connector wrote to S3"

# ---- virtual-hosted addressing, and credentials and endpoint from a profile of the shared files
: >proxy.log
AWS_ENDPOINT_URL=http://s3.localhost:$NET_PORT H5ZARR_S3_ADDRESSING=virtual HDF5_VOL_CONNECTOR=zarr \
    h5dump s3://bkt/f.zarr 2>vh.err | sed "s|s3://bkt/f.zarr|FILE|" >d.vh
grep -q 273.15 d.vh || fail "h5dump with virtual-hosted addressing: $(head -3 vh.err)"
grep -q ' GET /f.zarr/zarr.json ' proxy.log && ! grep -q ' /bkt/' proxy.log ||
    fail "virtual-hosted requests named the bucket in the path: $(head -3 proxy.log)"
cat >creds <<EOF
[default]
aws_access_key_id = NOPE
aws_secret_access_key = NOPE
[tester]
aws_access_key_id = S3RVER
aws_secret_access_key = $SECRET
EOF
cat >conf <<EOF
[profile tester]
region = us-east-1
s3 =
    endpoint_url = $PROXY
    addressing_style = path
EOF
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_ENDPOINT_URL AWS_SHARED_CREDENTIALS_FILE=$TMP/creds \
    AWS_CONFIG_FILE=$TMP/conf AWS_PROFILE=tester "$PROBE" s3://bkt/f2.zarr get .zgroup >prof.out 2>prof.err ||
    fail "profile 'tester' of the shared files: $(cat prof.err)"
cmp -s prof.out f2.zarr/.zgroup || fail ".zgroup read with profile credentials differs"
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_SHARED_CREDENTIALS_FILE=$TMP/creds AWS_CONFIG_FILE=$TMP/conf \
    AWS_PROFILE=nobody "$PROBE" s3://bkt/f.zarr get zarr.json 2>prof.err && fail "an unknown profile worked"
grep -q "AWS profile 'nobody' (AWS_PROFILE) is in neither" prof.err || fail "unknown profile message: $(cat prof.err)"
pass "virtual-hosted addressing (bkt.s3.localhost), and credentials and endpoint from a shared-files profile"

# ---- errors: bad credentials, missing bucket, unreachable endpoint (core and connector)
AWS_ACCESS_KEY_ID=NOPE "$PROBE" s3://bkt/f.zarr get zarr.json 2>e1.err && fail "an unknown access key worked"
grep -q "can't open 's3://bkt/f.zarr': access denied (HTTP 403 InvalidAccessKeyId" e1.err || fail "bad key id: $(cat e1.err)"
AWS_SECRET_ACCESS_KEY=wrong-secret-value "$PROBE" s3://bkt/f.zarr get zarr.json 2>e2.err && fail "a wrong secret worked"
grep -q "access denied (HTTP 403 SignatureDoesNotMatch" e2.err || fail "wrong secret: $(cat e2.err)"
"$PROBE" s3://nobucket/f.zarr get zarr.json 2>e3.err && fail "a missing bucket worked"
grep -q "bucket 'nobucket' does not exist at endpoint $PROXY" e3.err || fail "missing bucket: $(cat e3.err)"
dead=$(free_port)
AWS_ENDPOINT_URL=http://127.0.0.1:$dead H5ZARR_HTTP_RETRIES=2 H5ZARR_HTTP_BACKOFF_MS=5 \
    "$PROBE" s3://bkt/f.zarr get zarr.json 2>e4.err && fail "an unreachable endpoint worked"
grep -q "can't open 's3://bkt/f.zarr'.*onnect.*(endpoint http://127.0.0.1:$dead, 3 attempts)" e4.err ||
    fail "unreachable endpoint: $(cat e4.err)"
AWS_ACCESS_KEY_ID=NOPE HDF5_VOL_CONNECTOR=zarr h5dump --enable-error-stack=2 s3://bkt/f.zarr >e5.err 2>&1 &&
    fail "h5dump with a bad key id worked"
grep -q "InvalidAccessKeyId" e5.err || fail "the connector's error stack lacks the S3 error: $(grep -i zarr e5.err | head)"
HDF5_VOL_CONNECTOR=zarr h5dump --enable-error-stack=2 s3://nobucket/f.zarr >e6.err 2>&1 && fail "h5dump of a missing bucket"
grep -q "bucket 'nobucket' does not exist" e6.err || fail "connector, missing bucket: $(grep -i zarr e6.err | head)"
pass "bad credentials, a missing bucket and an unreachable endpoint give clear errors (core and connector)"

# ---- faults: 5xx bursts and dropped connections between the store and s3rver
net_proxy "$S3" --sigv4 "S3RVER:$SECRET" --faults 20 --log "$TMP/faults.log"
export AWS_ENDPOINT_URL=http://127.0.0.1:$NET_PORT H5ZARR_HTTP_RETRIES=10 H5ZARR_HTTP_BACKOFF_MS=5
HDF5_VOL_CONNECTOR=zarr "$EXAMPLES/write_field" s3://bkt/faulty.zarr >/dev/null 2>faults.err ||
    fail "write_field through the faulty proxy: $(grep -v retrying faults.err | tail -5)"
"$PROBE" s3://bkt/probe2 putmany 120 q 2>>faults.err || fail "set_many through the faulty proxy"
HDF5_VOL_CONNECTOR=zarr h5dump s3://bkt/faulty.zarr 2>>faults.err | sed "s|s3://bkt/faulty.zarr|FILE|" >d.faulty
HDF5_VOL_CONNECTOR=zarr h5dump f.zarr | sed "s|f.zarr|FILE|" >d.local0
diff -u d.local0 d.faulty || fail "h5dump through the faulty proxy differs from the local store's"
for f in 503 500 drop drop-after; do grep -q " $f\$" faults.log || fail "the proxy injected no '$f' fault"; done
[ "$(grep -c '^h5zarr: retrying' faults.err)" -ge 4 ] || fail "no retries were logged: $(head -3 faults.err)"
export AWS_ENDPOINT_URL=$PROXY
same_objects f.zarr s3://bkt/faulty.zarr
"$PROBE" s3://bkt/probe2 keys "" | sort >k2.out
$PY - k2.out <<'PY' || fail "the 120 keys written through the faulty proxy are not exactly the 120 written"
import sys
got = sorted(tuple(l.split()) for l in open(sys.argv[1]).read().splitlines())
want = sorted((f"q/{i}", str(len(f"value {i}\n") * (i + 1))) for i in range(120))
assert got == want, (len(got), len(want))
PY
for i in 0 57 119; do
    "$PROBE" s3://bkt/probe2 get q/$i >got || fail "get q/$i"
    [ "$(sort -u got)" = "value $i" ] && [ "$(wc -l <got)" = $((i + 1)) ] || fail "q/$i holds other bytes"
done
nfaults=$(grep -cE ' (503|500|drop|drop-after)$' faults.log)
nretries=$(grep -c '^h5zarr: retrying' faults.err)
n5xx=$(grep -cE ' (503|500)$' faults.log)
# every 5xx is retried by the store; a dropped connection by the store or, on a reused connection, by
# libcurl itself (which reconnects once without telling)
[ "$nretries" -ge "$n5xx" ] && [ "$nretries" -le "$nfaults" ] ||
    fail "$nfaults faults injected ($n5xx of them 5xx) but $nretries retries logged"
pass "faults: $nfaults injected ($n5xx 5xx, the rest dropped connections), $nretries retries; nothing lost or duplicated"

# ---- the secret appears nowhere but in the credentials file made above: outputs, error messages, retry
# logs, proxy and server logs, the server's data folder
[ "$(grep -rlF -e "$SECRET" "$TMP" | sed "s|^$TMP/||")" = creds ] ||
    fail "the secret appears in: $(grep -rlF -e "$SECRET" "$TMP")"
pass "the secret access key appears in no output, message or log"
finish
