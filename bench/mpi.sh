#!/usr/bin/env bash
# bench/mpi.sh [BUILD_MPI]: the MPI row of bench/README.md: h5zarr_bench_mpi (zarr connector and
# parallel native HDF5, the same decomposition and bytes) at 1, 2 and 4 ranks (4 oversubscribe a 2-core
# machine), REPS repetitions each (default 9), interleaved with the order alternating per repetition;
# prints every repetition, the median per cell and the paired ratio zarr / native with its ~95%
# interval (bench/report.py paired(): the i-th zarr run against the i-th native run). RANKS="1 2"
# limits the rank counts; H5ZARR_BENCH_PHASES=1 adds each rank's time per HDF5 call.
# Needs `make build-mpi` first; run as: bench/mpi.sh build-mpi
set -euo pipefail
b=$(cd "${1:-build-mpi}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
eval "$(cd "$src" && make -s env-mpi BUILD_MPI="$b")"
unset HDF5_VOL_CONNECTOR
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none
tmp=$(mktemp -d "${TMPDIR:-/tmp}/h5zarr-bench-mpi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
ranks=${RANKS:-1 2 4}
reps=${REPS:-9}
for np in $ranks; do
    for rep in $(seq 1 "$reps"); do
        order="zarr native"
        [ $((rep % 2)) = 0 ] && order="native zarr"
        for impl in $order; do
            # a fresh path per run, nothing deleted before the end (ext4's deleted inodes slow the next
            # file creations for a minute: bench/README.md, "traps of this machine's filesystem")
            ext=$([ $impl = zarr ] && echo zarr || echo h5)
            timeout 300 mpirun -np $np --oversubscribe "$b/bench/h5zarr_bench_mpi" $impl "$tmp/out.$np.$rep.$ext"
        done
    done
done | tee "$tmp/all.txt"
echo "medians (seconds, H5Fcreate..H5Fclose, slowest rank; 32 MiB int32, chunks 256 x 256, collective):"
python3 - "$tmp/all.txt" "$src/bench" <<'PY'
import re, sys, statistics
sys.path.insert(0, sys.argv[2])
from report import paired
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\w+) ranks=(\d+) seconds=([\d.]+)", line)
    if m:
        rows.setdefault((int(m.group(2)), m.group(1)), []).append(float(m.group(3)))
raw = {k: v for k, v in rows.items()}
print("| ranks | zarr connector (s) | native parallel HDF5 (s) | zarr / native, paired (median, ~95% interval, zarr faster in) | target (<= 1.2x) |")
print("|---|---|---|---|---|")
for np in sorted({k[0] for k in rows}):
    z, n = rows[(np, "zarr")], rows[(np, "native")]
    p = paired(raw, (np, "zarr"), (np, "native"))
    pr = "%.3f (%.3f-%.3f), %d of %d" % (p[0], p[1], p[2], p[4] - p[3], p[4]) if p else "n/a (fewer than 6 pairs)"
    ok = "met" if p and p[2] <= 1.2 else ("met (median)" if p and p[0] <= 1.2 else "MISSED")
    print("| %d | %.3f | %.3f | %s | %s |" % (np, statistics.median(z), statistics.median(n), pr, ok))
PY
