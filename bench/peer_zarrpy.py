#!/usr/bin/python3
"""peer_zarrpy.py: the zarr-python 2.13 peer of the benchmark suite (Debian /usr/bin/python3).

One invocation = one repetition of one workload, printing the same tab-separated lines as
h5zarr_bench ("R <workload> <variant> zarr-python <op> <seconds>"). bench/run.py alternates it with the
C program. Timed sections run from opening the array to having the data in the store / in memory.

    peer_zarrpy.py w1|w2|w3|w4 <scratch dir> <rep>
"""
import os
import sys
import time

import numcodecs
import numpy as np
import zarr

IMPL = "zarr-python"


def settle(drop=False):
    """Like the C program's settle(): write back the dirty page cache first, so no other section's
    writeback runs during the timing; with `drop` (W2) also drop the clean page cache (root only)."""
    if os.environ.get("H5ZARR_BENCH_NO_SETTLE"):
        return
    os.sync()
    if drop:
        try:
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("1")
        except OSError:
            pass


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


def smooth_field(ny, nx, phase):
    """The W2 field of h5zarr_bench.c: sin(0.0021 x + phase) * cos(0.0017 y), float32."""
    sx = np.sin(np.float32(0.0021) * np.arange(nx, dtype=np.float32) + np.float32(phase))
    cy = np.cos(np.float32(0.0017) * np.arange(ny, dtype=np.float32))
    return (cy[:, None] * sx[None, :]).astype(np.float32)


W2_VARIANTS = [("zstd1", lambda: numcodecs.Zstd(level=1)),
               ("blosc-lz4-shuf", lambda: numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE,
                                                          blocksize=0))]


def w2(scratch):
    """Whole write and read of the 8192 x 8192 field in 512 x 512 chunks, then the append loop (16 steps
    of a 1024 x 1024 slab along an unlimited first dimension, chunks (1, 512, 512)), as the C rows.
    numcodecs' Blosc runs its own threads by default; that is zarr-python's natural configuration."""
    n, c, ts, nt = 8192, 512, 1024, 16
    data = smooth_field(n, n, 0.0)
    slab = smooth_field(ts, ts, 0.3)
    for name, comp in W2_VARIANTS + [("raw", lambda: None)]:
        if name != "raw":
            path = os.path.join(scratch, f"w2-{name}-zarrpy.zarr")
            settle(True)
            t0 = time.perf_counter()
            z = zarr.open_array(zarr.DirectoryStore(path), mode="w", path="a", shape=(n, n), chunks=(c, c),
                                dtype="<f4", compressor=comp(), fill_value=0)
            z[...] = data
            emit("W2", name, "write", time.perf_counter() - t0)
            t0 = time.perf_counter()
            back = zarr.open_array(zarr.DirectoryStore(path), mode="r", path="a")[...]
            emit("W2", name, "read", time.perf_counter() - t0)
            if not np.array_equal(back, data):
                sys.exit(f"peer_zarrpy: W2 {name} read back wrong data")
            del back
        path = os.path.join(scratch, f"w2-append-{name}-zarrpy.zarr")
        settle(True)
        t0 = time.perf_counter()
        z = zarr.open_array(zarr.DirectoryStore(path), mode="w", path="a", shape=(0, ts, ts), chunks=(1, c, c),
                            dtype="<f4", compressor=comp(), fill_value=0)
        for t in range(nt):
            z.resize((t + 1, ts, ts))
            z[t] = slab
        emit("W2", f"append-{name}", "write", time.perf_counter() - t0)
        if not np.array_equal(zarr.open_array(zarr.DirectoryStore(path), mode="r", path="a")[nt - 1], slab):
            sys.exit(f"peer_zarrpy: W2 append-{name} read back wrong data")


def w4(scratch):
    """100 groups x 10 arrays (10 int32, never written) x 10 int attributes, as the C rows: create, then
    open + visit every group and array and read every attribute. The attributes of an array are set
    with one update (one .zattrs write), the cheapest way zarr-python offers."""
    v = "100g-x-10d-x-10a"
    path = os.path.join(scratch, "w4-zarrpy.zarr")
    settle()
    t0 = time.perf_counter()
    root = zarr.open_group(zarr.DirectoryStore(path), mode="w")
    for g in range(100):
        grp = root.create_group(f"g{g:02d}")
        for ds in range(10):
            z = grp.create(f"d{ds}", shape=(10,), chunks=(10,), dtype="<i4", compressor=None, fill_value=0)
            z.attrs.update({f"a{at}": g * 100 + ds * 10 + at for at in range(10)})
    emit("W4", v, "create", time.perf_counter() - t0)
    t0 = time.perf_counter()
    root = zarr.open_group(zarr.DirectoryStore(path), mode="r")
    ngroups = narrays = nattrs = total = 0
    for _, grp in root.groups():
        ngroups += 1
        for _, z in grp.arrays():
            narrays += 1
            for val in z.attrs.asdict().values():
                nattrs += 1
                total += val
    emit("W4", v, "open-visit", time.perf_counter() - t0)
    want = sum(g * 100 + ds * 10 + at for g in range(100) for ds in range(10) for at in range(10))
    if (ngroups, narrays, nattrs, total) != (100, 1000, 10000, want):
        sys.exit(f"peer_zarrpy: W4 visit found {ngroups} groups, {narrays} arrays, {nattrs} attributes")


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
    {"w1": w1, "w2": w2, "w3": w3, "w4": w4}[work](scratch)


if __name__ == "__main__":
    main()
