# netlib.sh: loopback servers for the network-store tests (sourced after tests/lib.sh, not run).
# Every server binds 127.0.0.1 on a port the system picks, is started by the test and stopped at exit
# by its process id. Provides:
#   net_static DIR [netserver options]   a static file server of DIR (byte ranges):  NET_PORT
#   net_pyhttp DIR                       python3 -m http.server (no byte ranges, HTTP/1.0): PY_PORT
#   s3_deps                              installs s3rver from tests/net/package-lock.json into
#                                        $H5ZARR_BUILD/s3server once (npm ci); exits 77 without npm
#   s3_start DATA BUCKET                 s3rver on DATA with BUCKET: S3_PORT; exports the AWS_* variables
#                                        of its account (S3RVER/S3RVER) and AWS_ENDPOINT_URL. Its service
#                                        endpoint is "localhost": virtual-hosted requests go to
#                                        http://BUCKET.s3.localhost:PORT (curl resolves *.localhost itself)
#   net_proxy UPSTREAM [options]         tests/net/netserver.py proxy (faults, SigV4 checks): NET_PORT
NETDIR=$H5ZARR_SRC/tests/net
PROBE=$H5ZARR_BUILD/tests/store_probe
NET_PIDS=()
net_cleanup() {
    local p
    for p in "${NET_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${NET_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$TMP"
}
trap net_cleanup EXIT

free_port() { $PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# wait_file F SECONDS: true once F exists
wait_file() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do [ -s "$1" ] && return 0; sleep 0.1; done
    return 1
}

# _net_start VAR netserver-args...: starts netserver.py, stores its port in VAR
_net_start() {
    local var=$1 pf
    shift
    pf=$(mktemp -u "$TMP/port.XXXXXX")
    $PY "$NETDIR/netserver.py" "$@" --port-file "$pf" >>"$TMP/netserver.log" 2>&1 &
    NET_PIDS+=($!)
    wait_file "$pf" 20 || fail "netserver.py $1 did not start (log: $(tail -3 "$TMP/netserver.log"))"
    printf -v "$var" '%s' "$(cat "$pf")"
}
net_static() { local d=$1; shift; _net_start NET_PORT static "$d" "$@"; }
net_proxy() { local u=$1; shift; _net_start NET_PORT proxy "$u" "$@"; }

net_pyhttp() {
    local i
    PY_PORT=$(free_port)
    $PY -m http.server --bind 127.0.0.1 --directory "$1" "$PY_PORT" >>"$TMP/pyhttp.log" 2>&1 &
    NET_PIDS+=($!)
    for ((i = 0; i < 200; i++)); do
        curl -s -o /dev/null "http://127.0.0.1:$PY_PORT/" && return 0
        sleep 0.1
    done
    fail "python3 -m http.server did not start"
}

s3_deps() {
    local dir=$H5ZARR_BUILD/s3server want
    command -v npm >/dev/null && command -v node >/dev/null || { echo "skipped: no node/npm for s3rver"; exit 77; }
    want=$(sha256sum "$NETDIR/package-lock.json" | cut -c1-16)
    [ -f "$dir/node_modules/.h5zarr-lock-hash" ] && [ "$(cat "$dir/node_modules/.h5zarr-lock-hash")" = "$want" ] &&
        return 0
    mkdir -p "$dir"
    cp "$NETDIR/package.json" "$NETDIR/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund >npm.log 2>&1) || fail "npm ci of s3rver failed (log: $dir/npm.log)"
    echo "$want" >"$dir/node_modules/.h5zarr-lock-hash"
}

s3_start() {
    local data=$1 bucket=$2 i log
    s3_deps
    S3_PORT=$(free_port)
    log=$TMP/s3rver.$S3_PORT.log
    : >"$log"
    # s3rver's continuation tokens use DES, which OpenSSL 3 keeps in its legacy provider
    node --openssl-legacy-provider "$H5ZARR_BUILD/s3server/node_modules/s3rver/bin/s3rver.js" -d "$data" \
        -a 127.0.0.1 -p "$S3_PORT" --service-endpoint localhost --configure-bucket "$bucket" >"$log" 2>&1 &
    NET_PIDS+=($!)
    for ((i = 0; i < 300; i++)); do
        grep -q "S3rver listening" "$log" && break
        sleep 0.1
    done
    grep -q "S3rver listening" "$log" || fail "s3rver did not start: $(tail -5 "$log")"
    export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1
    export AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT
    unset AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL_S3 H5ZARR_S3_ADDRESSING
    export AWS_SHARED_CREDENTIALS_FILE=$TMP/no-credentials AWS_CONFIG_FILE=$TMP/no-config
}

# Under the sanitizers (H5ZARR_TEST_PRELOAD set by tests/CMakeLists.txt), HDF5's uninstrumented tools
# load the sanitized connector with the runtimes preloaded (HDF5's own leaks not reported).
if [ -n "${H5ZARR_TEST_PRELOAD:-}" ]; then
    for _t in h5ls h5dump h5diff h5repack h5mkgrp; do
        eval "$_t() { LD_PRELOAD=\"\$H5ZARR_TEST_PRELOAD\" ASAN_OPTIONS=detect_leaks=0 command $_t \"\$@\"; }"
    done
fi
