#!/usr/bin/env bash
# The write-behind queue (zarr/store_behind.c) of the connector on S3 when the server fails mid-pipeline
# (issue 29): tests/net/behind_fault writes 6 datasets of 4 uncompressed chunks, one H5Dwrite each, through
# tests/net/netserver.py proxy in front of s3rver, then closes the file.
#  - a PUT answered 500 every time (var002's second chunk): retried (1 + H5ZARR_HTTP_RETRIES attempts, as
#    H5ZARR_HTTP_LOG shows; the proxy may reset a reused connection instead of answering one of them),
#    then H5Fclose fails naming the key, the dataset and the HTTP status; the key is not in the bucket and
#    every chunk object that is there has its whole size (no key half written);
#  - a PUT the server reads and never answers (var001's third chunk): with H5ZARR_HTTP_TIMEOUT=2 and one
#    retry, H5Fclose fails within (1 + retries) x timeout and a margin (10 s), naming the key and the timeout,
#    and the program ends by itself (no hang, no crash).
#  - the queue's own counts (H5ZARR_HTTP_LOG=1 prints them at close): 60 datasets' documents only are
#    stored in at most 2 batches (the root group's at H5Fcreate, every other document together at
#    H5Fclose; 1 when the sender had not sent the root's yet, which the close's then replaces); with
#    a 1 MiB budget (H5ZARR_WRITE_BEHIND_MB=1) a write of 40 datasets (2.6 MB of chunks) never queues more
#    than 1 MiB, and every chunk is stored whole.
# Skips (77) without node/npm for s3rver.
. "$(dirname "$0")/../lib.sh"
. "$H5ZARR_SRC/tests/net/netlib.sh"
unset HDF5_VOL_CONNECTOR
cd "$TMP"
BF=$H5ZARR_BUILD/tests/behind_fault
PROBE=$H5ZARR_BUILD/tests/store_probe
[ -x "$BF" ] || fail "$BF is not built"

s3_start "$TMP/s3data" bkt
S3=$AWS_ENDPOINT_URL
CHUNK=$((45 * 90 * 4))
# the proxy logs a request after answering it: wait (5 s at most) until `log` has `n` lines matching `re`
logged() { local i; for ((i = 0; i < 50; i++)); do [ "$(grep -c "$2" "$1")" -ge "$3" ] && break; sleep 0.1; done; grep -c "$2" "$1"; }

# ---- a PUT that fails after its retries
net_proxy "$S3" --fail-put "/f.zarr/var002/c/1/" --log "$TMP/fail.log"
AWS_ENDPOINT_URL=http://127.0.0.1:$NET_PORT H5ZARR_HTTP_LOG=1 H5ZARR_HTTP_RETRIES=2 H5ZARR_HTTP_BACKOFF_MS=10 \
    HDF5_VOL_CONNECTOR=zarr timeout 120 "$BF" s3://bkt/f.zarr 6 >f.out 2>f.err || fail "behind_fault: $(tail -5 f.err)"
grep -q '^close: failed$' f.out || fail "H5Fclose did not fail after a PUT failed for good: $(cat f.out)"
grep -q "var002/c/1/0/0" f.err || fail "no error names the failed key: $(grep -v '^ ' f.err | head -5)"
grep -q "dataset '/var002'" f.err || fail "no error names the failed key's dataset: $(grep -i 'store the writes' f.err)"
grep -q "HTTP 500" f.err || fail "no error gives the HTTP status: $(grep -i 'var002/c/1' f.err | head -3)"
# every attempt was made (H5ZARR_HTTP_LOG: one line a retry; the proxy answered 500 to what reached it)
grep -q "retrying PUT key 'var002/c/1/0/0' .*(attempt 3 of 3)" f.err && [ "$(logged fail.log 'PUT /bkt/f.zarr/var002/c/1/0/0 500$' 1)" -ge 1 ] ||
    fail "the failed PUT was not tried 1 + 2 times: $(grep 'var002/c/1/0/0' fail.log f.err | grep -v '^ ')"
[ "$("$PROBE" s3://bkt/f.zarr exists var002/c/1/0/0)" = no ] || fail "the failed key is in the bucket"
"$PROBE" s3://bkt/f.zarr keys "" >keys.txt || fail "listing the bucket"
grep -q '/c/' keys.txt || fail "no chunk was stored before the failure: $(cat keys.txt)"
awk -v c=$CHUNK '$1 ~ /\/c\// && $2 != c { bad = bad " " $0 } END { if (bad) { print bad; exit 1 } }' keys.txt ||
    fail "a chunk object without its whole size (half written)"
pass "a PUT failing for good: H5Fclose fails naming key, dataset and HTTP 500 after 3 attempts; the key absent, $(grep -c '/c/' keys.txt) chunks whole"

# ---- a server that stalls mid-pipeline
net_proxy "$S3" --stall-put "/s.zarr/var001/c/2/" --stall-s 60 --log "$TMP/stall.log"
t0=$(date +%s)
AWS_ENDPOINT_URL=http://127.0.0.1:$NET_PORT H5ZARR_HTTP_LOG=1 H5ZARR_HTTP_RETRIES=1 H5ZARR_HTTP_TIMEOUT=2 H5ZARR_HTTP_BACKOFF_MS=10 \
    HDF5_VOL_CONNECTOR=zarr timeout 100 "$BF" s3://bkt/s.zarr 4 >s.out 2>s.err || fail "behind_fault (stall): rc $? $(tail -5 s.err)"
t1=$(date +%s)
grep -q '^close: failed$' s.out || fail "H5Fclose did not fail on a stalled PUT: $(cat s.out)"
grep -q "var001/c/2/0/0" s.err || fail "no error names the stalled key: $(grep -v '^ ' s.err | head -5)"
grep -qiE "timeout|too slow|timed out" s.err || fail "no error says the request timed out: $(grep 'var001/c/2' s.err | head -3)"
grep -q "retrying PUT key 'var001/c/2/0/0' .*(attempt 2 of 2)" s.err && [ "$(logged stall.log 'PUT /bkt/s.zarr/var001/c/2/0/0 stall$' 1)" -ge 1 ] ||
    fail "the stalled PUT was not tried 1 + 1 times: $(grep 'var001/c/2/0/0' stall.log s.err | grep -v '^ ')"
# 2 attempts of 2 s each; the margin is for a loaded machine (libcurl's own low-speed check alone took 16 s)
close_s=$(sed -n 's/^close_s: //p' s.out)
$PY -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 10 else 1)" "$close_s" ||
    fail "a stalled PUT took $close_s s to fail at H5Fclose (2 attempts of 2 s): $(grep -v "^ " s.err | head)"
pass "a stalled PUT: H5Fclose fails in $((t1 - t0)) s (close $(sed -n 's/^close_s: //p' s.out) s) naming the key and the timeout"

# ---- the queue's structure: one batch per flush, the budget bounds what is queued
H5ZARR_HTTP_LOG=1 HDF5_VOL_CONNECTOR=zarr "$BF" s3://bkt/m.zarr 60 meta >m.out 2>m.err || fail "behind_fault meta: $(tail -3 m.err)"
grep -q '^close: ok$' m.out || fail "behind_fault meta: $(cat m.out; tail -5 m.err)"
line=$(grep "write-behind of 's3://bkt/m.zarr'" m.err) || fail "no write-behind line: $(tail -3 m.err)"
set -- $(echo "$line" | sed -E 's/.*: ([0-9]+) batches, ([0-9]+) values, at most ([0-9]+) of ([0-9]+) bytes.*/\1 \2 \3 \4/')
# the root group's document of H5Fcreate goes out on its own unless the close finds it still queued
[ "$1" -le 2 ] && [ "$2" -ge 61 ] || fail "60 datasets' documents: $line (want 2 batches at most: H5Fcreate's and H5Fclose's)"
pass "documents of 60 datasets: $1 batches of $2 values in all (the root's at create, the rest together at close)"
H5ZARR_WRITE_BEHIND_MB=1 H5ZARR_HTTP_LOG=1 HDF5_VOL_CONNECTOR=zarr "$BF" s3://bkt/b.zarr 40 >b.out 2>b.err ||
    fail "behind_fault budget: $(tail -3 b.err)"
grep -q '^close: ok$' b.out || fail "behind_fault budget: $(cat b.out; tail -5 b.err)"
line=$(grep "write-behind of 's3://bkt/b.zarr'" b.err) || fail "no write-behind line: $(tail -3 b.err)"
set -- $(echo "$line" | sed -E 's/.*: ([0-9]+) batches, ([0-9]+) values, at most ([0-9]+) of ([0-9]+) bytes.*/\1 \2 \3 \4/')
[ "$4" = 1048576 ] && [ "$3" -le "$4" ] && [ "$2" -ge 200 ] || fail "a 1 MiB budget: $line"
"$PROBE" s3://bkt/b.zarr keys "" >bkeys.txt || fail "listing b.zarr"
[ "$(grep -c '/c/' bkeys.txt)" = 160 ] && [ "$(awk -v c=$CHUNK '$1 ~ /\/c\// && $2 == c' bkeys.txt | wc -l)" = 160 ] ||
    fail "40 datasets of 4 chunks under a 1 MiB budget: $(grep -c '/c/' bkeys.txt) chunk keys"
pass "a 1 MiB budget: at most $3 bytes queued for 2.6 MB of chunks ($1 batches), all 160 chunks stored whole"
finish
