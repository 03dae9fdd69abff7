#!/usr/bin/python3
"""s3_bench.py: the S3 rows of `make bench` (issue 16): W1 and W2 whole writes and reads through the
core's S3 store to s3rver on loopback (tests/net/package-lock.json, `npm ci` into the build tree),
with H5ZARR_HTTP_INFLIGHT requests in flight, against the floor: curl (`--parallel`, SigV4, the same
number of objects of the same sizes, the same requests in flight) moving the same bytes to and from
the same server. s3rver (node, one process, every object a file plus an md5 and a metadata file) is
the bottleneck of both: the ratio says how close the store comes to what the server can take.

    s3_bench.py <build dir> [--reps N] [--out DIR]

Prints the rows ("R\\tS3\\t<row>\\t<impl>\\t<op>\\t<seconds>", read by run.py) and writes DIR/s3.md.
"""
import argparse
import hashlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
# row: (workload, objects, bytes per object, requests in flight)
ROWS = [("w1", 1000, 4000, 1), ("w1", 1000, 4000, 4), ("w1", 1000, 4000, 16),
        ("w2", 256, 1 << 20, 4), ("w2", 256, 1 << 20, 16)]
# Tries of one row: s3rver (node) sometimes dies under parallel uploads, and is started again
ATTEMPTS = 3


def s3rver(build, data):
    d = os.path.join(build, "s3server")
    lock = os.path.join(SRC, "tests", "net", "package-lock.json")
    want = hashlib.sha256(open(lock, "rb").read()).hexdigest()[:16]
    stamp = os.path.join(d, "node_modules", ".h5zarr-lock-hash")
    if not (os.path.exists(stamp) and open(stamp).read().strip() == want):
        os.makedirs(d, exist_ok=True)
        for f in ("package.json", "package-lock.json"):
            shutil.copy(os.path.join(SRC, "tests", "net", f), d)
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=d, check=True, stdout=subprocess.DEVNULL)
        open(stamp, "w").write(want + "\n")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    log = open(os.path.join(data, "s3rver.log"), "a")  # kept across restarts: its tail explains a death
    p = subprocess.Popen(["node", "--openssl-legacy-provider", os.path.join(d, "node_modules/s3rver/bin/s3rver.js"),
                          "-d", os.path.join(data, "s3"), "-a", "127.0.0.1", "-p", str(port), "--silent",
                          "--configure-bucket", "bench"], stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return p, port
        except OSError:
            time.sleep(0.1)
    p.kill()
    raise SystemExit("s3_bench: s3rver did not start")


def curl(port, n, size, inflight, prefix, up, files):
    """Seconds for curl to PUT (up) or GET n objects of `size` bytes with `inflight` in parallel."""
    cfg = os.path.join(files, f"curl-{prefix}.cfg")
    with open(cfg, "w") as f:
        for i in range(n):
            f.write(f'url = "http://127.0.0.1:{port}/bench/{prefix}/{i}"\n')
            f.write(f'upload-file = "{files}/obj{size}"\n' if up else 'output = "/dev/null"\n')
    cmd = ["curl", "-sS", "--no-progress-meter", "--fail", "--parallel", "--parallel-max", str(inflight), "--aws-sigv4",
           "aws:amz:us-east-1:s3", "--user", "S3RVER:S3RVER", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
           "-H", "Expect:", "-K", cfg]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def lines(med):
    """The S3 section of results.md from medians keyed ("S3", row, impl, op) (also used by report.py)."""
    L = ["## S3 (issue 16): the core's S3 store vs curl, both to s3rver on loopback", "",
         "W1: 1000 objects of 4000 bytes (1e6 int32, 1000 chunks); W2: 256 objects of 1 MiB (8192 x 8192 "
         "float32, 512 x 512 chunks); uncompressed, plus the store's metadata documents and (write) its "
         "opening listing. **core**: `zarr_array_write`/`read` on `s3://` (bench/s3_bench.c) with "
         "`H5ZARR_HTTP_INFLIGHT` = the row's requests in flight; **curl**: `curl --parallel --parallel-max K "
         "--aws-sigv4` moving the same objects with the same requests in flight, the floor of what the "
         "server takes (s3rver: one node process writing each object as three files). core / curl: 1.00 = "
         "the floor.", "",
         "| row | op | in flight | core ms | core MB/s | curl ms | curl MB/s | core / curl |",
         "|---|---|---|---|---|---|---|---|"]
    for w, n, size, k in ROWS:
        row = f"{w}-inflight{k}"
        for op in ("write", "read"):
            c, f = med.get(("S3", row, "core", op)), med.get(("S3", row, "curl", op))
            if c is None or f is None:
                continue
            mb = n * size / 1e6
            L.append(f"| {w.upper()} | {op} | {k} | {c * 1e3:.0f} | {mb / c:.1f} | {f * 1e3:.0f} | {mb / f:.1f} "
                     f"| {c / f:.2f} |")
    return L + [""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    exe = os.path.join(build, "bench", "s3_bench")
    work = tempfile.mkdtemp(prefix="s3bench-", dir=os.path.join(build))
    server, port = s3rver(build, work)
    env = dict(os.environ, AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER", AWS_REGION="us-east-1",
               AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
               AWS_CONFIG_FILE="/nonexistent")
    for size in {r[2] for r in ROWS}:
        open(os.path.join(work, f"obj{size}"), "wb").write(os.urandom(size))
    res = {}
    restarts = 0
    try:
        for rep in range(a.reps + 1):  # rep 0: warm-up, discarded
            for w, n, size, k in ROWS:
                row = f"{w}-inflight{k}"
                e = dict(env, H5ZARR_HTTP_INFLIGHT=str(k))
                url = f"s3://bench/{row}-r{rep}.zarr"
                order = ["core", "curl"] if rep % 2 else ["curl", "core"]
                for impl in order:
                    for op in ("write", "read"):
                        for attempt in range(ATTEMPTS):
                            # s3rver (node) sometimes dies under parallel uploads: start it again (same
                            # data folder) and measure the row once more; the restarts are reported
                            if server.poll() is not None:
                                server, port = s3rver(build, work)
                                e["AWS_ENDPOINT_URL"] = env["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{port}"
                                restarts += 1
                            try:
                                if impl == "core":
                                    out = subprocess.run([exe, w, op, url], env=e, check=True,
                                                         stdout=subprocess.PIPE, text=True).stdout
                                    t = float(out.split("\t")[5])
                                else:
                                    t = curl(port, n, size, k, f"curl-{row}-r{rep}", op == "write", work)
                                break
                            except subprocess.CalledProcessError:
                                if attempt == ATTEMPTS - 1:
                                    tail = open(os.path.join(work, "s3rver.log"), errors="replace").read()[-2000:]
                                    sys.stderr.write(f"s3_bench: {row} {impl} {op} failed {ATTEMPTS} times; the end of "
                                                     f"s3rver's log:\n{tail}\n")
                                    raise
                                server.terminate()  # dying or wedged: the next attempt starts a new one
                                server.wait()
                        if rep:
                            res.setdefault((row, impl, op), []).append(t)
                            print(f"R\tS3\t{row}\t{impl}\t{op}\t{t:.6f}", flush=True)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)
    med = {("S3",) + k: statistics.median(v) for k, v in res.items()}
    L = ["# S3 rows (issue 16)", "", f"Medians of {a.reps} after a warm-up; load average at the end "
         f"{open('/proc/loadavg').read().split()[0]} (2 cores, shared by other sessions)"
         + (f"; s3rver died and was restarted {restarts} time(s), the rows it broke measured again." if restarts
            else "."), ""] + lines(med)
    os.makedirs(a.out, exist_ok=True)
    open(os.path.join(a.out, "s3.md"), "w").write("\n".join(L) + "\n")
    sys.stderr.write("\n".join(L) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
