#!/usr/bin/python3
"""peer_zarrpy.py: the zarr-python 2.13 peer of the benchmark suite (Debian /usr/bin/python3).

One invocation = one repetition of one workload, printing the same tab-separated lines as
h5zarr_bench ("R <workload> <variant> zarr-python <op> <seconds>"). bench/run.py alternates it with the
C program. Timed sections run from opening the array to having the data in the store / in memory.

    peer_zarrpy.py w1|w3 <scratch dir> <rep>
"""
import os
import sys
import time

import numcodecs
import numpy as np
import zarr

IMPL = "zarr-python"


def settle():
    """Like the C program's settle() for W1 and W3: write back the dirty page cache first, so no other
    section's writeback runs during the timing."""
    os.sync()


def emit(w, variant, op, sec):
    print(f"R\t{w}\t{variant}\t{IMPL}\t{op}\t{sec:.9f}", flush=True)


def w1(scratch):
    data = np.arange(1_000_000, dtype="<i4")
    variants = [("raw-v2", None), ("zstd-v2", numcodecs.Zstd(level=1)), ("zlib-v2", numcodecs.Zlib(level=1))]
    for name, comp in variants:
        for kind in ("dir", "mem"):
            if kind == "dir":
                path = os.path.join(scratch, f"w1-{name}-zarrpy.zarr")
                settle()
                t0 = time.perf_counter()
                store = zarr.DirectoryStore(path)
            else:
                t0 = time.perf_counter()
                store = zarr.MemoryStore()
            z = zarr.open_array(store, mode="w", path="a", shape=data.shape, chunks=(1000,), dtype="<i4",
                                compressor=comp, fill_value=0)
            z[...] = data
            emit("W1", f"{name}-{kind}", "write", time.perf_counter() - t0)
            t0 = time.perf_counter()
            if kind == "dir":
                store = zarr.DirectoryStore(path)
            z = zarr.open_array(store, mode="r", path="a")
            back = z[...]
            emit("W1", f"{name}-{kind}", "read", time.perf_counter() - t0)
            if not np.array_equal(back, data):
                sys.exit(f"peer_zarrpy: W1 {name}-{kind} read back wrong data")
    for kind in ("dir", "mem"):
        print(f"N\tW1\traw-v3-{kind}\t{IMPL}\tzarr-python 2.13 writes zarr v2 only", flush=True)


def box_pos(k):
    # Same boxes as h5zarr_bench.c (every one straddles a chunk corner).
    return 128 * (1 + k % 7) - 10 + (k * 13) % 5, 128 * (1 + (k // 7) % 7) - 10 + (k * 7) % 5


def w3(scratch):
    n, c, b, nbox = 1024, 128, 20, 400
    v = "int32-1024sq-c128"
    allv = np.arange(n * n, dtype="<i4").reshape(n, n)
    box = -np.arange(b * b, dtype="<i4").reshape(b, b)
    path = os.path.join(scratch, "w3-zarrpy.zarr")
    z = zarr.open_array(zarr.DirectoryStore(path), mode="w", path="a", shape=(n, n), chunks=(c, c),
                        dtype="<i4", compressor=None, fill_value=0)
    z[...] = allv
    settle()
    t0 = time.perf_counter()
    for k in range(nbox):
        r, q = box_pos(k)
        z[r:r + b, q:q + b] = box
    emit("W3", v, "rmw", time.perf_counter() - t0)
    t0 = time.perf_counter()
    for k in range(nbox):
        r, q = box_pos(k)
        back = z[r:r + b, q:q + b]
    emit("W3", v, "boxread", time.perf_counter() - t0)
    if not np.array_equal(back, box):
        sys.exit("peer_zarrpy: W3 box read back wrong data")
    t0 = time.perf_counter()
    s = z[1:1 + 3 * 341:3, 1:1 + 3 * 341:3]
    emit("W3", v, "strided", time.perf_counter() - t0)
    assert s.shape == (341, 341)


def main():
    work, scratch = sys.argv[1], sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    {"w1": w1, "w3": w3}[work](scratch)


if __name__ == "__main__":
    main()
