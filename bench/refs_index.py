"""refs_index.py BUILD SCRATCH [NCHUNKS] [SAMPLE]: issue 30's reference-indexing rows. Makes (once, with
Debian's h5py) a file of NCHUNKS chunks (default 1,000,000: a (1000, 1000) int32 dataset in (1, 1) chunks,
zlib level 1), then indexes it
  - with h5zarr-refs (the code of `h5zarr-convert --refs`: H5Dchunk_iter, streamed JSON), peak RSS from
    /usr/bin/time;
  - with a Python h5py 3.7 loop over DatasetID.get_chunk_info(i), building kerchunk's dict and dumping it
    (what kerchunk's HDF5 translator does). That loop is quadratic in HDF5 (each call walks the chunk
    index up to i), so it is run over the first SAMPLE chunks (default 20,000) and its per-chunk time is
    reported with the whole file's time extrapolated linearly from it: a lower bound of the real cost.
Prints bench rows (R, M) for run.py."""
import json
import os
import subprocess
import sys
import time


def make(path, n):
    import h5py
    import numpy as np
    side = int(round(n ** 0.5))
    with h5py.File(path, "w") as f:
        d = f.create_dataset("v", shape=(side, side), dtype="<i4", chunks=(1, 1), compression="gzip",
                             compression_opts=1)
        for r in range(0, side, 100):
            d[r:r + 100] = np.arange(r * side, min(r + 100, side) * side, dtype="<i4").reshape(-1, side)


def h5py_loop(path, sample):
    import h5py
    t = time.perf_counter()
    refs = {}
    with h5py.File(path, "r") as f:
        dsid = f["v"].id
        n = dsid.get_num_chunks()
        for i in range(min(sample, n)):
            info = dsid.get_chunk_info(i)
            key = "v/" + ".".join(str(o) for o in info.chunk_offset)
            refs[key] = [path, info.byte_offset, info.size]
    json.dumps({"version": 1, "refs": refs})
    return time.perf_counter() - t, n


def main():
    if sys.argv[1] == "--make":
        make(sys.argv[2], int(sys.argv[3]))
        return 0
    build, scratch = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000000
    sample = int(sys.argv[4]) if len(sys.argv) > 4 else 20000
    os.makedirs(scratch, exist_ok=True)
    src = os.path.join(scratch, f"chunks{n}.h5")
    if not os.path.exists(src):  # in a process of its own: this one stays small
        subprocess.check_call([sys.executable, __file__, "--make", src, str(n)])
    out, rss = os.path.join(scratch, "refs.json"), os.path.join(scratch, "rss.txt")
    # peak RSS from /usr/bin/time (a child forked from this Python would count the parent's pages)
    t = time.perf_counter()
    status = subprocess.call(["/usr/bin/time", "-f", "%M", "-o", rss,
                              os.path.join(build, "tools", "h5zarr-refs"), "--quiet", src, out])
    t_refs = time.perf_counter() - t
    if status != 0:
        print(f"M\trefs-index: h5zarr-refs failed\tstatus {status}")
        return 1
    peak_kib = float(open(rss).read().split()[-1])
    t_py, nchunks = h5py_loop(src, sample)
    per = t_py / min(sample, nchunks)
    print(f"R\trefs\t{nchunks}-chunks\th5zarr-refs\tindex\t{t_refs:.9f}")
    print(f"R\trefs\t{nchunks}-chunks\th5py-get_chunk_info\tindex (first {sample}, per chunk)\t{per:.9f}")
    print(f"R\trefs\t{nchunks}-chunks\th5py-get_chunk_info\tindex (extrapolated, lower bound)\t{per * nchunks:.9f}")
    print(f"M\trefs-index: h5zarr-refs peak RSS (MiB)\t{peak_kib / 1024:.1f}")
    print(f"M\trefs-index: reference JSON size (MiB)\t{os.path.getsize(out) / 2**20:.1f}")
    print(f"M\trefs-index: h5py loop over get_chunk_info, first {sample} chunks (s)\t{t_py:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
