#!/usr/bin/env bash
# bench.sh: runs the benchmark suite (bench/) and writes bench/results/. The suite itself is issue 6;
# until it lands this runs the quick W1 engine timing the core ships with.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
if [ -x "$build/bench/bench_w1" ]; then
    exec "$build/bench/bench_w1"
fi
echo "bench: no benchmark built yet (issue 6)"
