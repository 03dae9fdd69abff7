#!/usr/bin/env bash
# bench.sh: the `make bench` entry point. Runs the benchmark suite (bench/run.py with Debian's
# /usr/bin/python3: zarr-python 2.13 and matplotlib) against the build directory and writes
# bench/results/results.md, results.png, results.json and run.log. Takes ~10 minutes.
#   scripts/bench.sh [build dir] [run.py options, e.g. --reps 7 --only w1,w3]
#   scripts/bench.sh build --only s3-latency --out DIR   issue 29's latency rows alone (bench/s3_latency.py)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
shift || true
here=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -x "$build/bench/h5zarr_bench" ]; then
    echo "bench: $build/bench/h5zarr_bench is not built (make build)" >&2
    exit 1
fi
exec /usr/bin/python3 "$here/bench/run.py" "$build" "$@"
