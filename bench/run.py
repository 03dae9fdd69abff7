#!/usr/bin/python3
"""run.py: drives the benchmark suite and writes bench/results/results.md and results.png.

    run.py <build dir> [--reps N] [--only w1,w2,w3,w4,durable,meta,rss,chunks1m,micro,s3,s3-latency,convert] [--out DIR]
    H5ZARR_BENCH_FS_US=<us> (default 80): wait before each workload until a new file costs at most that

Per workload, repetition 0 is a discarded warm-up, then repetitions 1..N each run the C program
(h5zarr_bench: core API, VOL, native HDF5, NCZarr, floor) and the zarr-python peer one after the
other, alternating which goes first; inside the C program the implementations are interleaved too,
in an order rotated per repetition. Every repetition gets a fresh scratch directory (ext4 is slow to
create files right after deleting many: never reuse a path). Medians are reported.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse(out, results, notes, facts):
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "R" and len(f) == 6:
            results.setdefault((f[1], f[2], f[3], f[4]), []).append(float(f[5]))
        elif f[0] == "N" and len(f) == 5:
            notes[(f[1], f[2], f[3])] = f[4]
        elif f[0] == "M" and len(f) == 3:
            facts[f[1]] = f[2]


FAILURES = []

FS_PROBE_FILES = 300


def fs_probe(d):
    """Microseconds per new 4 KB file (open/write/close) in a new directory `d`, which is kept (deleting
    it would itself slow the next creations down)."""
    os.makedirs(d)
    buf = b"\0" * 4000
    t0 = time.perf_counter()
    for i in range(FS_PROBE_FILES):
        fd = os.open(os.path.join(d, str(i)), os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, buf)
        os.close(fd)
    return (time.perf_counter() - t0) / FS_PROBE_FILES * 1e6


def wait_for_fs(root, facts, what, limit_us, max_wait_s=420):
    """ext4 without a journal does not reuse an inode for 60 s after its file was deleted (360 s while
    its inode-table block is dirty: recently_deleted() in fs/ext4/ialloc.c), and scans past every such
    inode on each allocation: after a large delete (a test run, the previous bench run's scratch)
    creating files is 5-30x slower for minutes. Waits until creating files is fast again, so no
    workload is timed in that state, and records what it saw."""
    t0 = time.perf_counter()
    n = 0
    while True:
        n += 1
        us = fs_probe(os.path.join(root, f"fsprobe-{what}-{n}"))
        waited = time.perf_counter() - t0
        if us <= limit_us or waited >= max_wait_s:
            break
        sys.stderr.write(f"bench: creating files costs {us:.0f} us each (recent deletes?); waiting\n")
        time.sleep(10)
    state = "ok" if us <= limit_us else f"STILL SLOW (> {limit_us:.0f} us)"
    facts[f"filesystem before {what}"] = f"{us:.0f} us per new file after {waited:.0f} s of waiting ({state})"


def run(cmd, env, log):
    """Runs one repetition; a failure is recorded (and reported in results.md), not fatal: the rows
    printed before it still count."""
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log.write(f"$ {' '.join(cmd)}\n{p.stderr}")
    if p.returncode != 0:
        tail = p.stderr.strip().splitlines()[-1:] or [f"status {p.returncode}"]
        msg = f"`{' '.join(os.path.basename(c) for c in cmd[:2])}` failed: {tail[0][:300]}"
        if msg not in FAILURES:
            FAILURES.append(msg)
        sys.stderr.write(f"bench: {msg}\n")
    return p.stdout


def timed(cmd, env):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    t = time.perf_counter() - t0
    if p.returncode != 0:
        FAILURES.append(f"`{' '.join(cmd)}` failed: {p.stderr.strip()[-300:]}")
        return None
    return t


def remake_report(out):
    """Writes results.md/png again from results.json, e.g. after a change to report.py's verdicts."""
    j = json.load(open(os.path.join(out, "results.json")))
    results = {tuple(k.split("|")): v for k, v in j["results"].items()}
    notes = {tuple(k.split("|")): v for k, v in j["notes"].items()}
    med = {k: statistics.median(v) for k, v in results.items()}
    sys.path.insert(0, HERE)
    import report
    report.write(out, med, results, notes, j["facts"], j["reps"], j["runtime_s"])
    print(f"bench: wrote {out}/results.md and results.png again from results.json")
    return 0


LOW_DISK_GB = 12  # below this much free space a workload's repetitions are deleted as they end


def run_meta(scale, h5ls, root, env, env_vol, reps, results, notes, facts, log, fs_limit):
    """Issue 13's metadata scale rows, reported with W4: `h5ls -r` of a group with 10,000 members and
    open + visit + H5Dopen of 10,000 arrays with consolidated metadata, through the connector (zarr v3)
    and natively on the same structure, with the file floor's creates beside them. Creates and reads are
    repeated; creates rotate the order of native, ours and the floor, reads alternate which goes first."""
    wait_for_fs(root, facts, "meta", fs_limit)
    t0 = time.perf_counter()
    sd = os.path.join(root, "meta")
    os.makedirs(sd)
    m = {i: os.path.join(sd, f"members.{x}") for i, x in (("vol", "zarr"), ("hdf5", "h5"))}
    arr = {i: os.path.join(sd, f"arrays.{x}") for i, x in (("vol", "zarr"), ("hdf5", "h5"))}
    envs = {"vol": env_vol, "hdf5": env}
    # The creates, repeated like every other row so each ratio has its paired interval: native, ours and
    # the file floor of the two stores' layouts (h5zarr_scale floor-members / floor-arrays) in an order
    # rotated per repetition, each into a new path; repetition 0 is the warm-up whose stores the reads use.
    for rep in range(reps + 1):
        outs = []
        impls = ["hdf5", "vol", "floor"]
        impls = impls[rep % 3:] + impls[:rep % 3]
        for impl in impls:
            sfx = "" if rep == 0 else f".r{rep}"
            if impl == "floor":
                outs.append(run([scale, "floor-members", os.path.join(sd, f"members.floor{sfx}"), "10000"], env,
                                log))
                outs.append(run([scale, "floor-arrays", os.path.join(sd, f"arrays.floor{sfx}"), "100", "100"],
                                env, log))
            else:
                outs.append(run([scale, "members", m[impl] + sfx, "10000", impl, "3"], envs[impl], log))
                outs.append(run([scale, "arrays", arr[impl] + sfx, "100", "100", impl, "3"], envs[impl], log))
        for o in outs:
            parse(o, results if rep > 0 else {}, notes, facts)
    for rep in range(reps + 1):
        outs = []
        order = ["vol", "hdf5"] if rep % 2 else ["hdf5", "vol"]
        for impl in order:
            if os.path.exists(m[impl]):
                t = timed([h5ls, "-r", m[impl]], envs[impl])
                if t is not None:
                    outs.append(f"R\tW4\t10000-members\t{impl}\th5ls -r\t{t:.9f}\n")
            if os.path.exists(arr[impl]):
                outs.append(run([scale, "visit", arr[impl], impl, "10000"], envs[impl], log))
        for o in outs:
            parse(o, results if rep > 0 else {}, notes, facts)
    print(f"bench: meta done in {time.perf_counter() - t0:.1f} s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=7)  # medians of 7: the W1 directory rows vary by +-30% rep to rep here
    ap.add_argument("--only", default="w1,w3,w4,meta,w2,durable,rss,chunks1m,refs,micro,s3,s3-latency,convert")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--report-only", action="store_true",
                    help="remake results.md and results.png from the results.json in --out (no runs)")
    a = ap.parse_args()
    if a.report_only:
        return remake_report(a.out)
    build = os.path.abspath(a.build)
    deps = open(os.path.join(build, "deps.prefix")).read().strip()
    exe = os.path.join(build, "bench", "h5zarr_bench")
    parent = os.path.join(build, "bench-scratch")
    os.makedirs(parent, exist_ok=True)
    # Orlov top-directory flag: each run's scratch goes to a block group of its own, away from the
    # inodes the previous run just deleted (see wait_for_fs). Best effort (ext4 only).
    subprocess.run(["chattr", "+T", parent], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    scratch_root = os.path.join(parent, time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(scratch_root, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)

    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = f"{deps}/hdf5/lib:{deps}/netcdf/lib" + (
        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["H5ZARR_PLUGIN_DIR"] = os.path.join(build, "plugins")
    env["HDF5_PLUGIN_PATH"] = f"{deps}/netcdf/hdf5/lib/plugin"  # filters for native HDF5 and NCZarr
    env.pop("HDF5_VOL_CONNECTOR", None)
    env_vol = dict(env, HDF5_VOL_CONNECTOR="zarr", HDF5_PLUGIN_PATH=os.path.join(build, "plugins"))
    h5ls = f"{deps}/hdf5/bin/h5ls"
    scale = os.path.join(build, "bench", "h5zarr_scale")
    py = "/usr/bin/python3"
    peer = os.path.join(HERE, "peer_zarrpy.py")

    results, notes, facts = {}, {}, {}
    log = open(os.path.join(a.out, "run.log"), "w")
    t_start = time.perf_counter()
    only = a.only.split(",")
    fs_limit = float(os.environ.get("H5ZARR_BENCH_FS_US", "80"))
    for wl in [w for w in ["w1", "w3", "w4", "w2", "durable"] if w in only]:
        wait_for_fs(scratch_root, facts, wl, fs_limit)
        t_wl = time.perf_counter()
        for rep in range(a.reps + 1):
            sd = os.path.join(scratch_root, f"{wl}-r{rep}")
            outs = []
            cmds = [[exe, wl, sd, str(rep)]] + ([] if wl == "durable" else [[py, peer, wl, sd, str(rep)]])
            if wl == "w4":  # the file floor of W4's structure (h5zarr_scale floor, bench/README.md)
                cmds.append([scale, "floor", os.path.join(sd, "w4-floor")])
            if rep % 2:
                cmds.reverse()
            for c in cmds:
                outs.append(run(c, env, log))
            if wl == "w4":
                for impl, f, e in [("hdf5", os.path.join(sd, "w4-hdf5.h5"), env),
                                   ("vol", os.path.join(sd, "w4-vol.zarr"), env_vol),
                                   ("vol-v3", os.path.join(sd, "w4-vol3.zarr"), env_vol)]:
                    t = timed([h5ls, "-r", f], e) if os.path.exists(f) else None
                    if t is not None:
                        outs.append(f"R\tW4\t100g-x-10d-x-10a\t{impl}\th5ls -r\t{t:.9f}\n")
            if rep > 0:
                for o in outs:
                    parse(o, results, notes, facts)
            else:
                for o in outs:
                    parse(o, {}, notes, facts)
            # Nothing is deleted before the end of the run (W2: ~8.4 GB a repetition): every deleted
            # file's inode slows down the next file creations for minutes (see wait_for_fs), and a store
            # tree deleted per repetition penalised the many-file implementations rep after rep. Unless
            # the disk runs low: then this repetition's stores go (said in the report's facts).
            free_gb = shutil.disk_usage(scratch_root).free / 2**30
            if free_gb < LOW_DISK_GB:
                shutil.rmtree(sd, ignore_errors=True)
                facts[f"{wl}: stores deleted after each repetition (disk free below {LOW_DISK_GB} GiB)"] = \
                    f"{free_gb:.0f} GiB free after repetition {rep}"
        print(f"bench: {wl} done in {time.perf_counter() - t_wl:.1f} s", flush=True)
    if "meta" in only:
        run_meta(scale, h5ls, scratch_root, env, env_vol, a.reps, results, notes, facts, log, fs_limit)
    if "chunks1m" in only:  # issue 13's 1,000,000-chunk rows (h5zarr_bench chunks1m; unsharded opt-in)
        wait_for_fs(scratch_root, facts, "chunks1m", fs_limit)
        parse(run([exe, "chunks1m", os.path.join(scratch_root, "chunks1m"), "all"], env, log), results, notes,
              facts)
    if "refs" in only:  # issue 30's reference indexing rows: h5zarr-refs vs an h5py get_chunk_info loop
        wait_for_fs(scratch_root, facts, "refs", fs_limit)
        parse(run([py, os.path.join(HERE, "refs_index.py"), build, os.path.join(scratch_root, "refs")], env, log),
              results, notes, facts)
    if "rss" in only:
        for mode in ["core-zstd-1", "core-zstd-2", "vol-raw"]:
            sd = os.path.join(scratch_root, f"rss-{mode}")
            parse(run([exe, "rss", sd, mode], env, log), results, notes, facts)
    if "s3" in only:  # issue 16's S3 rows: the core's S3 store vs curl to s3rver on loopback (also writes s3.md)
        parse(run([py, os.path.join(HERE, "s3_bench.py"), build, "--reps", str(min(a.reps, 3)), "--out", a.out],
                  env, log), results, notes, facts)
    if "s3-latency" in only:  # issue 29's latency rows: through a delaying proxy at 0 and 20 ms (also writes s3-latency.md)
        parse(run([py, os.path.join(HERE, "s3_latency.py"), build, "--reps", "1", "--out", a.out], env, log),
              results, notes, facts)
    if "convert" in only:  # issue 30's conversion rows: h5zarr-convert vs h5repack/nccopy to zarr, native h5repack, cp (also writes convert.md)
        # h5repack and nccopy to zarr of the 10,000-variable file run past any limit (HDF5's H5DSattach_scale
        # floor, bench/dsattach_floor.c): stopped after H5ZARR_BENCH_CONVERT_LIMIT s (default 300)
        limit = os.environ.get("H5ZARR_BENCH_CONVERT_LIMIT", "300")
        parse(run([py, os.path.join(HERE, "convert_bench.py"), build, "--out", a.out, "--limit", limit], env, log),
              results, notes, facts)
    if "micro" in only:
        micro = os.path.join(build, "bench", "bench_micro")
        for line in run([micro, os.path.join(scratch_root, "micro")], env, log).splitlines():
            f = line.split("\t")
            if f[0] == "F" and len(f) == 4:
                facts[f"design: {f[1]}"] = f"{f[2]} {f[3]}"
    facts["load average at the end (2 cores; other sessions share the machine)"] = \
        open("/proc/loadavg").read().split()[0]
    total = time.perf_counter() - t_start
    shutil.rmtree(scratch_root, ignore_errors=True)

    med = {k: statistics.median(v) for k, v in results.items()}
    json.dump({"reps": a.reps, "runtime_s": total, "facts": facts,
               "results": {"|".join(k): v for k, v in results.items()},
               "notes": {"|".join(k): v for k, v in notes.items()}},
              open(os.path.join(a.out, "results.json"), "w"), indent=1)
    sys.path.insert(0, HERE)
    import report
    report.write(a.out, med, results, notes, facts, a.reps, total, FAILURES)
    print(f"bench: wrote {a.out}/results.md and results.png ({total:.0f} s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
