#!/usr/bin/env bash
# tools/latency_proxy.py (issue 29's delaying proxy, used by bench/s3_latency.py) against s3rver on
# loopback: its accounting is checked, never the times it measures.
#  - a known sequence: 1 PUT then 5 GETs one after another on one keep-alive connection give depth 6 and
#    1 in flight; 4 GETs started at once give depth 1 and 4 in flight; bodies and response heads come
#    through byte for byte (the heads equal s3rver's own but for Date);
#  - the connector through it (bench/s3_latency: 3 CF-like variables of 4 chunks, one H5Dwrite each, then
#    read back and checked, and h5dump equal to h5dump straight from s3rver): the proxy's requests equal
#    what s3rver logged (and its PUTs the objects s3rver stored), its log has one line per request, at
#    least 2 were in flight during the multi-chunk writes, and the depth is the longest chain recomputed
#    from the log, with requests <= depth x max in flight and the phase lasting at least depth x delay.
# Skips (77) without node/npm for s3rver.
. "$(dirname "$0")/../lib.sh"
. "$H5ZARR_SRC/tests/net/netlib.sh"
unset HDF5_VOL_CONNECTOR
cd "$TMP"
LAT=$H5ZARR_BUILD/bench/s3_latency
[ -x "$LAT" ] || fail "$LAT is not built"

s3_start "$TMP/s3data" bkt
S3LOG=$TMP/s3rver.$S3_PORT.log
$PY "$H5ZARR_SRC/tools/latency_proxy.py" "http://127.0.0.1:$S3_PORT" --delay-ms 5 --port-file "$TMP/lp.port" \
    --log "$TMP/lp.log" 2>"$TMP/lp.err" &
NET_PIDS+=($!)
wait_file "$TMP/lp.port" 20 || fail "latency_proxy.py did not start: $(cat lp.err)"
LP=http://127.0.0.1:$(cat lp.port)
ctl() { curl -sS --fail "$LP/_proxy/$1"; }
SIGN=(--aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
field() { $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))' "$@"; }

# ---- a known sequence, parallel requests, bytes passed through
head -c 200000 /dev/urandom >obj
ctl "stats?reset=1" >/dev/null
curl -sS --fail "${SIGN[@]}" -T obj "$LP/bkt/o" -o /dev/null --next -sS --fail "${SIGN[@]}" \
    "$LP/bkt/o" -o g1 "$LP/bkt/o" -o g2 "$LP/bkt/o" -o g3 "$LP/bkt/o" -o g4 "$LP/bkt/o" -o g5 ||
    fail "PUT + 5 GETs through the proxy"
ctl "stats?reset=1" >seq.json
for g in g1 g2 g3 g4 g5; do cmp -s obj $g || fail "$g differs from the object PUT through the proxy"; done
[ "$(field seq.json 'by_method["PUT"], by_method["GET"], depth, max_inflight, unfinished')" = "(1, 5, 6, 1, 0)" ] ||
    fail "1 PUT + 5 serial GETs: $(cat seq.json)"
ctl "delay?ms=400" >/dev/null # a margin for a loaded machine: 4 requests started together overlap
curl -sS --fail "${SIGN[@]}" --parallel --parallel-immediate --parallel-max 4 "$LP/bkt/o" -o p1 "$LP/bkt/o" -o p2 \
    "$LP/bkt/o" -o p3 "$LP/bkt/o" -o p4 || fail "4 parallel GETs through the proxy"
ctl "stats?reset=1" >par.json
ctl "delay?ms=5" >/dev/null
for g in p1 p2 p3 p4; do cmp -s obj $g || fail "$g differs from the object"; done
[ "$(field par.json 'requests, depth, max_inflight')" = "(4, 1, 4)" ] || fail "4 parallel GETs: $(cat par.json)"
for u in "$LP" "http://127.0.0.1:$S3_PORT"; do
    curl -sS --fail "${SIGN[@]}" -D - -o body "$u/bkt/o" | grep -v '^Date:' >"head.${u##*:}" || fail "GET of $u"
    curl -sS --fail "${SIGN[@]}" -D - -o list "$u/bkt?list-type=2&prefix=o" | grep -v '^Date:' >>"head.${u##*:}"
    cmp -s body obj || fail "body through $u"
done
cmp -s "head.${LP##*:}" "head.$S3_PORT" || fail "response heads through the proxy differ: $(diff head.*)"
pass "known sequence: 1 PUT + 5 serial GETs depth 6, 4 parallel GETs depth 1 with 4 in flight; bytes passed through"

# ---- the connector through the proxy: counts equal s3rver's, depth consistent with the log
export AWS_ENDPOINT_URL=$LP
stored() { grep -c 'Stored object' "$S3LOG" || true; }
answered() { grep -cE ' [1-5][0-9]{2} [0-9.]+m?s [^ ]+$' "$S3LOG" || true; }
n_ans=$(answered) n_put=$(stored) n_log=$(wc -l <lp.log)
ctl "stats?reset=1" >/dev/null
HDF5_VOL_CONNECTOR="zarr consolidated=1" "$LAT" cf-write s3://bkt/m.zarr 3 >w.out 2>w.err || fail "cf-write: $(tail -3 w.err)"
ctl "stats?reset=1" >w.json
for ((i = 0; i < 50; i++)); do # s3rver's access log line follows its response: wait for it (5 s at most)
    [ $(($(answered) - n_ans)) -ge "$(field w.json requests)" ] && break
    sleep 0.1
done
sleep 0.2
w_ans=$(($(answered) - n_ans)) w_put=$(($(stored) - n_put)) w_log=$(($(wc -l <lp.log) - n_log))
[ "$(field w.json requests)" = "$w_ans" ] || fail "cf-write: the proxy counted $(field w.json requests), s3rver answered $w_ans"
[ "$(field w.json requests)" = "$w_log" ] || fail "cf-write: $(field w.json requests) requests but $w_log log lines"
[ "$(field w.json 'by_method.get("PUT", 0)')" = "$w_put" ] || fail "cf-write: PUTs $(cat w.json) vs $w_put stored"
[ "$(field w.json 'unfinished, by_status.get("none", 0)')" = "(0, 0)" ] || fail "cf-write: $(cat w.json)"
[ "$(field w.json 'max_inflight >= 2')" = True ] || fail "cf-write: 4-chunk H5Dwrites never had 2 requests in flight: $(cat w.json)"
tail -n "$w_log" lp.log >w.log
$PY - w.json w.log 5 <<'PY' || fail "cf-write: the depth is not consistent with the proxy's log"
import json, sys
st = json.load(open(sys.argv[1]))
spans = sorted((float(l.split()[-2]), float(l.split()[-1])) for l in open(sys.argv[2]))
chain = []  # the longest chain ending with each request, O(n^2) from the log
for i, (s, e) in enumerate(spans):
    chain.append(1 + max([chain[j] for j in range(i) if spans[j][1] <= s], default=0))
n, depth, k = st["requests"], st["depth"], st["max_inflight"]
assert depth == max(chain), (depth, max(chain))
assert n <= depth * k, (n, depth, k)  # a chain meets every set of overlapping requests at most once
assert max(e for _, e in spans) - spans[0][0] >= depth * float(sys.argv[3]) / 1e3 * 0.99, depth
assert len(spans) == n
PY
HDF5_VOL_CONNECTOR=zarr "$LAT" cf-read s3://bkt/m.zarr 3 >r.out 2>r.err || fail "cf-read through the proxy: $(tail -3 r.err)"
ctl "stats?reset=1" >r.json
[ "$(field r.json 'by_method.get("PUT", 0), unfinished')" = "(0, 0)" ] && [ "$(field r.json 'depth <= requests')" = True ] ||
    fail "cf-read: $(cat r.json)"
HDF5_VOL_CONNECTOR=zarr h5dump s3://bkt/m.zarr >d.proxy 2>d.err || fail "h5dump through the proxy: $(head -3 d.err)"
AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT HDF5_VOL_CONNECTOR=zarr h5dump s3://bkt/m.zarr >d.direct ||
    fail "h5dump straight from s3rver"
cmp -s d.proxy d.direct || fail "h5dump through the proxy differs from h5dump straight from s3rver"
grep -q 'var002' d.proxy && grep -q '"time: mean"' d.proxy || fail "h5dump shows no var002 or its attributes"
pass "connector: $(field w.json requests) write requests ($(field w.json 'by_method.get("PUT", 0)') PUTs) as s3rver saw, max in flight $(field w.json max_inflight), depth $(field w.json depth) = the log's longest chain; data read back intact"
[ ! -s lp.err ] || fail "the proxy reported errors: $(head -3 lp.err)"
finish
