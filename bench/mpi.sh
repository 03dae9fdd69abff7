#!/usr/bin/env bash
# bench/mpi.sh [BUILD_MPI]: the MPI row of bench/README.md: h5zarr_bench_mpi (zarr connector and
# parallel native HDF5, the same decomposition and bytes) at 1, 2 and 4 ranks (4 oversubscribe a 2-core
# machine), 5 repetitions each, interleaved; prints every repetition and the median per cell.
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
for np in 1 2 4; do
    for rep in 1 2 3 4 5; do
        for impl in zarr native; do
            rm -rf "$tmp"/out.*
            ext=$([ $impl = zarr ] && echo zarr || echo h5)
            timeout 300 mpirun -np $np --oversubscribe "$b/bench/h5zarr_bench_mpi" $impl "$tmp/out.$ext"
        done
    done
done | tee "$tmp/all.txt"
echo "medians (seconds, H5Fcreate..H5Fclose, slowest rank; 32 MiB int32, chunks 256 x 256, collective):"
python3 - "$tmp/all.txt" <<'PY'
import re, sys, statistics
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\w+) ranks=(\d+) seconds=([\d.]+)", line)
    if m:
        rows.setdefault((int(m.group(2)), m.group(1)), []).append(float(m.group(3)))
print("| ranks | zarr connector (s) | native parallel HDF5 (s) | zarr MiB/s | native MiB/s |")
print("|---|---|---|---|---|")
for np in (1, 2, 4):
    z, n = statistics.median(rows[(np, "zarr")]), statistics.median(rows[(np, "native")])
    print("| %d | %.3f | %.3f | %.0f | %.0f |" % (np, z, n, 32 / z, 32 / n))
PY
