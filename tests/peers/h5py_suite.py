#!/usr/bin/python3
"""h5py_suite.py: h5py's own test suite, natively and through the connector, compared test by test.

Each of h5py's test files runs in its own interpreter, twice: natively (plain HDF5: no connector named and
none on the plugin path) and with
HDF5_VOL_CONNECTOR="zarr create=zarr", which makes every file the tests create a zarr store (the name a
pointer file, the store beside it as <name>.zarr: docs/FORMAT.md "Pointer files"). A test that
takes the interpreter down is recorded as a crash and its file runs again without it, so one crash costs
one test. A test that passes natively and not through the connector fails this run unless
h5py_exceptions.txt lists it with its reason (docs/PEERS.md gives the evidence for each reason).

Usage: h5py_suite.py --h5py LIB --plugins DIR --out DIR [--files PATTERN ...]
  LIB      the built h5py (scripts/python.sh prints it); it holds h5py/tests and pytest.ini
  DIR      the folder holding only the connector's plugin (HDF5_PLUGIN_PATH)
  --out    scratch and results (results.json, per-file logs)
Prints the counts of each run and a closing line "h5py: N passed, N failed, N open" where passed counts the
native passes that pass through the connector (or are listed exceptions), open those h5py_open.txt lists
as still to be fixed (issue 26: not exceptions, and never a reason to pass), and failed the rest, which
fail the run: a new regression, a crash or a hang.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FILE_TIMEOUT = 1200  # seconds for one test file's interpreter; pytest-timeout bounds each test at 300


def read_exceptions(path):
    """nodeid -> reason, from lines `nodeid  reason-tag: words` (# starts a comment line)."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            nodeid, _, reason = line.partition(" ")
            out[nodeid] = reason.strip()
    return out


def run_file(lib, relpath, env, scratch, log):
    """Runs one test file until every test in it has an outcome; returns {nodeid: outcome}."""
    results, deselect = {}, []
    for attempt in range(50):
        rec = os.path.join(scratch, "record.txt")
        if os.path.exists(rec):
            os.unlink(rec)
        tmp = os.path.join(scratch, "tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        e = dict(env, H5ZARR_PEER_RECORD=rec, TMPDIR=tmp)
        cmd = [sys.executable, "-m", "pytest", "-p", "h5py_record", "-p", "no:cacheprovider", "-q",
               "--timeout=300", "-o", "cache_dir=" + os.path.join(scratch, "cache"), relpath]
        for d in deselect:
            cmd += ["--deselect", d]
        t0 = time.time()
        try:
            p = subprocess.run(cmd, cwd=lib, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=FILE_TIMEOUT)
            out, rc = p.stdout, p.returncode
        except subprocess.TimeoutExpired as x:
            out, rc = x.stdout or b"", "timeout"
        log.write("==== %s (attempt %d, rc %s, %.1f s)\n" % (relpath, attempt + 1, rc, time.time() - t0))
        log.write(out.decode("utf-8", "replace"))
        started = None
        if os.path.exists(rec):
            with open(rec) as f:
                for line in f:
                    kind, _, rest = line.rstrip("\n").partition(" ")
                    if kind == "START":
                        started = rest
                    elif kind == "END":
                        nodeid, _, outcome = rest.rpartition(" ")
                        results[nodeid] = outcome
                        started = None
        if started is None:
            if rc not in (0, 1, 5) and not results:
                results[relpath] = "error rc=%s" % rc  # collection failed or the interpreter died
            return results
        results[started] = "hang" if rc == "timeout" else "crash"
        deselect.append(started)
    return results


def run_mode(mode, args, files, base_env):
    env = dict(base_env)
    env.pop("HDF5_VOL_CONNECTOR", None)
    if mode == "zarr":
        env["HDF5_VOL_CONNECTOR"] = "zarr create=zarr"
    else:  # plain HDF5: the connector not even on the plugin path (tests/hdf5/test_plugin checks probing)
        env.pop("HDF5_PLUGIN_PATH", None)
    scratch = os.path.join(args.out, mode)
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    results = {}
    t0 = time.time()
    with open(os.path.join(args.out, mode + ".log"), "w") as log:
        for rel in files:
            results.update(run_file(args.h5py, rel, env, scratch, log))
            log.flush()
    return results, time.time() - t0


def check_stores_come_out(args, env):
    """The zarr run means something only if h5py's files really become stores: one file, checked."""
    d = os.path.join(args.out, "probe")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    code = ("import h5py, sys; f = h5py.File(sys.argv[1], 'w'); f['x'] = [1, 2, 3]; f.close()")
    e = dict(env, HDF5_VOL_CONNECTOR="zarr create=zarr")
    name = os.path.join(d, "probe.hdf5")
    subprocess.run([sys.executable, "-c", code, name], env=e, check=True)
    # create=zarr given as text makes the name a pointer file and the store <name>.zarr beside it
    if not os.path.isfile(os.path.join(name + ".zarr", "zarr.json")):
        sys.exit("h5py_suite: FAILED: a file h5py created under HDF5_VOL_CONNECTOR='zarr create=zarr' "
                 "is not a zarr store (%s.zarr): the connector did not load" % name)
    with open(name, "rb") as f:
        f.seek(-512, os.SEEK_END)
        if not f.read(18).startswith(b"h5zarr pointer v2\n"):
            sys.exit("h5py_suite: FAILED: %s is not the store's pointer file" % name)


def summarize(res):
    c = {}
    for v in res.values():
        k = v.split(" ")[0]
        c[k] = c.get(k, 0) + 1
    return ", ".join("%d %s" % (n, k) for k, n in sorted(c.items()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--h5py", required=True)
    ap.add_argument("--plugins", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--files", nargs="*", help="only these test files (paths under LIB, globs allowed)")
    ap.add_argument("--exceptions", default=os.path.join(HERE, "h5py_exceptions.txt"))
    ap.add_argument("--open", default=os.path.join(HERE, "h5py_open.txt"),
                    help="tests still failing through the connector that issue 26 is to fix (not exceptions)")
    args = ap.parse_args()
    args.h5py = os.path.abspath(args.h5py)
    os.makedirs(args.out, exist_ok=True)

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([args.h5py, HERE])
    env["HDF5_PLUGIN_PATH"] = os.path.abspath(args.plugins)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    for k in ("H5ZARR_CONFIG", "HDF5_VOL_CONNECTOR"):
        env.pop(k, None)
    env["H5ZARR_CONFIG"] = os.devnull  # no user configuration: the connector's defaults only

    pats = args.files or ["h5py/tests/test_*.py", "h5py/tests/*/test_*.py"]
    files = sorted({os.path.relpath(p, args.h5py) for pat in pats
                    for p in glob.glob(os.path.join(args.h5py, pat))})
    if not files:
        sys.exit("h5py_suite: FAILED: no test files under %s" % args.h5py)
    check_stores_come_out(args, env)
    exceptions = read_exceptions(args.exceptions)
    still_open = read_exceptions(args.open) if os.path.exists(args.open) else {}

    native, tn = run_mode("native", args, files, env)
    zarr, tz = run_mode("zarr", args, files, env)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"native": native, "zarr": zarr}, f, indent=1, sort_keys=True)

    print("h5py native: %d tests in %.0f s: %s" % (len(native), tn, summarize(native)))
    print("h5py zarr:   %d tests in %.0f s: %s" % (len(zarr), tz, summarize(zarr)))
    regress, excused, stale, known = [], [], [], []
    npass = 0
    for nodeid, outcome in sorted(native.items()):
        if outcome != "passed":
            continue
        got = zarr.get(nodeid, "missing")
        if got == "passed":
            npass += 1
            if nodeid in exceptions or nodeid in still_open:
                stale.append(nodeid)
        elif nodeid in exceptions:
            excused.append((nodeid, got))
        elif nodeid in still_open:
            known.append((nodeid, got))
        else:
            regress.append((nodeid, got))
    bad = [n for n, o in zarr.items() if o in ("crash", "hang")]
    print("h5py: of %d native passes, %d pass through the connector, %d are listed exceptions "
          "(h5py_exceptions.txt), %d still fail as listed in h5py_open.txt (issue 26's open work), %d regress"
          % (npass + len(excused) + len(known) + len(regress), npass, len(excused), len(known), len(regress)))
    for n in stale:
        print("  listed but passes now (take it off the list): %s" % n)
    for n, o in known:
        print("  open (%s): %s" % (o, n))
    for n, o in regress:
        print("  REGRESSION %s: %s" % (o, n))
    for n in bad:
        if n not in dict(regress):
            print("  %s through the connector (not a native pass): %s" % (zarr[n].upper(), n))
    print("h5py: %d passed, %d failed, %d open (h5py_open.txt)" % (npass + len(excused), len(regress) + len(
        [n for n in bad if n not in dict(regress)]), len(known)))
    return 1 if regress or bad else 0


if __name__ == "__main__":
    sys.exit(main())
