#!/usr/bin/env bash
# guard.sh: instruction-count regression guard of the W1 write path (ctest bench.guard_w1_write, label
# bench-guard). Runs bench_guard (1,000,000 int32 in 1000 chunks, zarr v2, no compressor, memory
# store, core API, 1-thread pool) under callgrind, counting only the measured zarr_array_write, and
# fails if it executes more instructions than the budget. Counts are deterministic, so the budget only
# has to absorb libc differences (memcpy/malloc variants), not noise.
#
# Budget: 2,000,000 instructions. Measured (Debian 12, glibc 2.36, x86-64 AVX2): 1.28 M after the
# engine's snprintf-free chunk keys and the memory store's single-allocation set; 2.97 M before.
# snprintf keys alone add ~1.1 M, so that regression crosses the budget. See bench/README.md.
#   guard.sh <path to bench_guard> [budget]
set -euo pipefail
exe=$1
budget=${2:-2000000}
command -v valgrind >/dev/null || { echo "guard: valgrind not installed: skipped"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" --collect-atstart=no \
    --toggle-collect=guard_measured_write "$exe" raw >"$out/log" 2>&1 || { cat "$out/log"; exit 1; }
n=$(sed -n 's/^summary: *//p; s/^totals: *//p' "$out/cg.out" | head -1 | awk '{print $1}')
[ -n "$n" ] || { echo "guard: no instruction count in callgrind output"; cat "$out/log"; exit 1; }
echo "guard: W1 write path (memory store, 1 thread): $n instructions (budget $budget)"
if [ "$n" -gt "$budget" ]; then
    echo "guard: FAILED: over budget by $((n - budget)) instructions (see bench/README.md: profile with"
    echo "       valgrind --tool=callgrind --collect-atstart=no --toggle-collect=guard_measured_write)"
    exit 1
fi
