#!/usr/bin/python3
"""s3_latency.py: issue 29's latency rows of `make bench` ("measured, not assumed"): HDF5 programs and
tools through the connector on an s3:// store, with tools/latency_proxy.py between the store and s3rver
(loopback) adding a fixed delay to every request, at 0 and 20 ms. For every phase it reports the time at
each delay and, from the proxy, the requests (by method), the most in flight at once and the depth:
how many requests the phase waited for one after another (the longest chain of requests each starting
after the previous one ended), the number a pipelined client brings down. (t20 - t0) / 20 ms is shown
next to it as a check. Reported, never asserted.

    s3_latency.py <build dir> [--reps N] [--delays 0,20] [--only cf,w4,w2] [--out DIR]

Workloads (bench/s3_latency.c, HDF5_VOL_CONNECTOR="zarr consolidated=1", s3://bench/<name>.zarr):
  cf: 100 CF-like float32 (4, 45, 90) variables in 4 chunks, deflate 1, 6 string attributes, one
      H5Dwrite each (write); H5Dopen + H5Dread of each (read); `h5ls -r`; `h5dump -H`; H5Dopen of each
      and one H5Dread_multi of all (read multi); one H5Dwrite_multi of all (write multi).
  w4: the suite's W4 (100 groups x 10 datasets x 10 attributes): create; open + visit + every attribute.
  w2: the suite's W2 shape (8192 x 8192 float32, 1 MiB chunks, uncompressed): one H5Dwrite; one H5Dread.
  nc: `nccopy -k nc4 in.nc <dir>/out.nc` of a CF file of 200 variables (float32 (4, 45, 90), chunks
      (1, 45, 90), deflate 1, 6 attributes each; written by Debian's python3-netcdf4), its store put on
      S3 by a configuration rule (`[path .../out.nc]`, `format = zarr`, `store = s3://bench/nc/`): out.nc
      is a pointer file (nc_commands).
Prints rows "R\\tS3LAT\\t<workload>\\t<delay>ms\\t<phase>[:<count>]\\t<value>" (read by run.py) and
writes DIR/s3-latency.md.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import s3_bench  # noqa: E402 (s3rver from tests/net/package-lock.json)

PHASES = {"cf": ["write", "read", "h5ls -r", "h5dump -H", "read multi", "write multi"], "w4": ["create", "open-visit"],
          "w2": ["write", "read"], "nc": ["nccopy"]}
COUNTS = ["requests", "depth", "max_inflight", "GET", "PUT", "HEAD", "DELETE"]


def proxy(upstream, work):
    pf = os.path.join(work, "proxy.port")
    p = subprocess.Popen(["/usr/bin/python3", os.path.join(SRC, "tools", "latency_proxy.py"), upstream,
                          "--port-file", pf], stderr=open(os.path.join(work, "proxy.err"), "a"))
    for _ in range(300):
        if os.path.exists(pf):
            return p, int(open(pf).read())
        time.sleep(0.1)
    p.kill()
    raise SystemExit("s3_latency: latency_proxy.py did not start")


def control(port, what):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_proxy/{what}", timeout=30) as r:
        return json.loads(r.read())


def nc_commands(build, deps, url):
    """The nc row: nccopy of a 200-variable CF file (made once) to <dir>/out.nc, where a rule of a config
    file sends out.nc to zarr with its store under s3://bench/nc/ (a pointer file at out.nc)."""
    top = os.path.join(build, "s3latency-nc")
    src, conf = os.path.join(top, "in.nc"), os.path.join(top, "rules.conf")
    if not os.path.exists(src):
        os.makedirs(top, exist_ok=True)
        subprocess.run(["/usr/bin/python3", "-c", NC_MAKE, src + ".tmp"], check=True)
        os.rename(src + ".tmp", src)
    with open(conf, "w") as f:
        f.write(f"[path {top}/*/out.nc]\nformat = zarr\nstore = s3://bench/nc/\n")
    out = os.path.join(top, os.path.basename(url)[: -len(".zarr")], "out.nc")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    lib = f"{deps}/hdf5/lib:{deps}/netcdf/lib"
    return [("nccopy", ["/usr/bin/env", f"H5ZARR_CONFIG={conf}", f"LD_LIBRARY_PATH={lib}",
                        f"{deps}/netcdf/bin/nccopy", "-k", "nc4", src, out])]


NC_MAKE = """
import sys, numpy as np, netCDF4
d = netCDF4.Dataset(sys.argv[1], "w", format="NETCDF4")
d.Conventions = "CF-1.8"
d.createDimension("time", None); d.createDimension("lat", 45); d.createDimension("lon", 90)
for n, size, units in [("lat", 45, "degrees_north"), ("lon", 90, "degrees_east")]:
    v = d.createVariable(n, "f4", (n,)); v.units = units; v[:] = np.linspace(-90, 90, size)
t = d.createVariable("time", "f8", ("time",)); t.units = "days since 2000-01-01"; t[:] = np.arange(4)
rng = np.random.default_rng(29)
for i in range(200):
    v = d.createVariable(f"var{i:03d}", "f4", ("time", "lat", "lon"), zlib=True, complevel=1,
                         chunksizes=(1, 45, 90), fill_value=np.float32(1e20))
    v.units = "K"; v.long_name = f"variable {i}"; v.standard_name = "air_temperature"
    v.cell_methods = "time: mean"; v.coordinates = "lat lon"; v.comment = "issue 29 nccopy row"
    v[:] = (rng.standard_normal((4, 45, 90)) * 10 + 280).astype("f4")
d.close()
"""


def commands(build, deps, wl, url):
    exe = os.path.join(build, "bench", "s3_latency")
    if wl == "nc":
        return nc_commands(build, deps, url)
    if wl == "cf":
        return [("write", [exe, "cf-write", url]), ("read", [exe, "cf-read", url]),
                ("h5ls -r", [f"{deps}/hdf5/bin/h5ls", "-r", url]), ("h5dump -H", [f"{deps}/hdf5/bin/h5dump", "-H", url]),
                ("read multi", [exe, "cf-readm", url]), ("write multi", [exe, "cf-writem", url])]
    if wl == "w2":
        return [("write", [exe, "w2-write", url]), ("read", [exe, "w2-read", url])]
    return [("create", [exe, "w4-create", url]), ("open-visit", [exe, "w4-visit", url])]


def lines(med):
    """The latency section of results.md from medians keyed ("S3LAT", workload, delay, phase[:count])."""
    delays = sorted({int(k[2][:-2]) for k in med if k[0] == "S3LAT"})
    hi = max(delays)
    L = ["## S3 latency (issue 29): round trips in sequence through the connector", "",
         "HDF5 programs and tools through the connector (`zarr consolidated=1`) on `s3://` to s3rver on loopback, "
         "through tools/latency_proxy.py adding a fixed delay to every request (bench/s3_latency.py). **depth**: "
         "the requests the phase waited for one after another (longest chain of requests each starting after "
         f"the previous one ended, counted by the proxy at {hi} ms); **(t{hi} - t0) / {hi} ms**: the same "
         "estimated from the times. cf: 100 CF-like float32 (4, 45, 90) variables, 4 chunks, deflate 1, 6 string "
         "attributes, one H5Dwrite each (read multi / write multi: one H5Dread_multi / H5Dwrite_multi of all 100); "
         "w4: 100 groups x 10 datasets x 10 attributes; w2: 256 MiB of float32 in 1 MiB "
         "chunks, uncompressed, one H5Dwrite / H5Dread; nc: `nccopy -k nc4` of a CF file of 200 variables to a "
         "pointer file whose store a configuration rule puts on S3. Writes go through the connector's write-behind "
         "queue (its defaults: 256 MiB budget, 128 requests in flight). Times of h5ls, h5dump and nccopy "
         "include their start-up; counts are from the run at the largest delay.", "",
         "| workload | phase | " + " | ".join(f"ms at {d} ms" for d in delays) +
         f" | depth | (t{hi} - t0) / {hi} ms | requests | GET / PUT / HEAD / DELETE | max in flight |",
         "|---|---|" + "---|" * (len(delays) + 5)]
    for wl, phases in PHASES.items():
        for ph in phases:
            t = [med.get(("S3LAT", wl, f"{d}ms", ph)) for d in delays]
            if any(x is None for x in t):
                continue
            c = {n: med.get(("S3LAT", wl, f"{hi}ms", f"{ph}:{n}"), 0) for n in COUNTS}
            est = (t[-1] - t[0]) / (hi / 1e3) if hi else float("nan")
            L.append(f"| {wl} | {ph} | " + " | ".join(f"{x * 1e3:.0f}" for x in t) +
                     f" | {c['depth']:.0f} | {est:.0f} | {c['requests']:.0f} | "
                     f"{c['GET']:.0f} / {c['PUT']:.0f} / {c['HEAD']:.0f} / {c['DELETE']:.0f} | {c['max_inflight']:.0f} |")
    return L + [""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--delays", default="0,20")
    ap.add_argument("--only", default="cf,w4,w2,nc")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    deps = open(os.path.join(build, "deps.prefix")).read().strip()
    delays = [int(d) for d in a.delays.split(",")]
    work = tempfile.mkdtemp(prefix="s3latency-", dir=build)
    server, s3port = s3_bench.s3rver(build, work)
    prox, port = proxy(f"http://127.0.0.1:{s3port}", work)
    env = dict(os.environ, AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER", AWS_REGION="us-east-1",
               AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
               AWS_CONFIG_FILE="/nonexistent", HDF5_VOL_CONNECTOR="zarr consolidated=1",
               HDF5_PLUGIN_PATH=os.path.join(build, "plugins"))
    env["LD_LIBRARY_PATH"] = f"{deps}/hdf5/lib" + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    res = {}
    try:
        for rep in range(a.reps):
            for d in delays if rep % 2 == 0 else delays[::-1]:
                control(port, f"delay?ms={d}")
                for wl in a.only.split(","):
                    url = f"s3://bench/{wl}-d{d}-r{rep}.zarr"
                    for ph, cmd in commands(build, deps, wl, url):
                        control(port, "stats?reset=1")
                        t0 = time.perf_counter()
                        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                        t = time.perf_counter() - t0
                        st = control(port, "stats?reset=1")
                        if p.returncode != 0:
                            sys.stderr.write(f"s3_latency: {' '.join(cmd)} failed: {p.stderr[-500:]}\n")
                            raise SystemExit(1)
                        if p.stdout.startswith("T\t"):  # the program's own clock (no process start-up)
                            t = float(p.stdout.split("\t")[1])
                        vals = {"": t, ":requests": st["requests"], ":depth": st["depth"],
                                ":max_inflight": st["max_inflight"]}
                        vals.update({f":{m}": n for m, n in st["by_method"].items()})
                        for k, v in vals.items():
                            res.setdefault((wl, f"{d}ms", ph + k), []).append(v)
                            print(f"R\tS3LAT\t{wl}\t{d}ms\t{ph}{k}\t{v:.6f}", flush=True)
    finally:
        for p in (prox, server):
            p.terminate()
            p.wait()
        shutil.rmtree(work, ignore_errors=True)
    med = {("S3LAT",) + k: statistics.median(v) for k, v in res.items()}
    L = ["# S3 latency rows (issue 29)", "", f"Medians of {a.reps}; load average at the end "
         f"{open('/proc/loadavg').read().split()[0]} (2 cores, shared by other sessions).", ""] + lines(med)
    os.makedirs(a.out, exist_ok=True)
    open(os.path.join(a.out, "s3-latency.md"), "w").write("\n".join(L) + "\n")
    sys.stderr.write("\n".join(L) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
