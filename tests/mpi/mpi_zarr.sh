#!/usr/bin/env bash
# mpi_zarr.sh LAYOUT XFER | error: one MPI case of tests/mpi/mpi_zarr.c. Writes a store under
# `mpirun -np 4 --oversubscribe` (under a timeout: a hang is a failure), then checks it with a serial
# read through the connector (mpi_zarr verify: every value, shape, attribute, group, layout) and with
# zarrita (an independent reader: shape, chunk grid, every value). `error`: a collective H5Dwrite that
# fails on rank 2 alone and an H5Gcreate that fails on rank 1 alone must fail on all four ranks, each
# saying so, and the run must end. `durable`: the aligned write with durable=1, its syncs counted with
# strace on every rank.
. "$(dirname "$0")/../lib.sh"
BIN=${H5ZARR_MPI_BIN:?}
[ -x "$BIN" ] || fail "mpi_zarr not built"
command -v mpirun >/dev/null || fail "mpirun not found (openmpi-bin)"
export HDF5_VOL_CONNECTOR=zarr
# OpenMPI refuses root unless told; CI runs as root
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# no network interfaces needed: ranks on this machine talk through shared memory
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
run4() { timeout 180 mpirun -np 4 --oversubscribe "$@"; }
cd "$TMP"

if [ "$1" = error ]; then
    S=$TMP/err.zarr
    rc=0
    run4 "$BIN" error "$S" >run.out 2>run.err || rc=$?
    [ $rc = 124 ] && { cat run.err; fail "the error case hung (killed after 180 s)"; }
    [ $rc = 0 ] || { cat run.out run.err; fail "the error case (exit $rc)"; }
    for r in 0 1 2 3; do
        grep -q "^rank $r: H5Dwrite failed on every rank as it should" run.err || { cat run.err; fail "rank $r: no H5Dwrite failure"; }
        grep -q "^rank $r: H5Gcreate failed on every rank as it should" run.err || { cat run.err; fail "rank $r: no H5Gcreate failure"; }
    done
    [ "$(grep -c 'failed on rank 2 of 4' run.err)" -ge 3 ] || { cat run.err; fail "ranks 0, 1, 3 do not name rank 2"; }
    pass "a collective H5Dwrite failing on rank 2 fails on all 4 ranks (the others name rank 2); no hang"
    pass "an H5Gcreate failing on rank 1 fails on all 4 ranks; no hang"
    finish
    exit 0
fi

if [ "$1" = durable ]; then
    # durable=1 under MPI: each rank's H5Dwrite of whole chunks fdatasyncs each chunk file it writes and
    # then fsyncs the directories it changed, before the call returns (the rank's store view forwards
    # the sync pass); counted with strace on every rank between markers around that H5Dwrite
    command -v strace >/dev/null || { echo "SKIP: strace is not installed"; exit 77; }
    strace -f -o probe.log -e trace=getpid true 2>/dev/null || { echo "SKIP: strace can't trace here"; exit 77; }
    S=$TMP/durable.zarr
    H5ZARR_MPI_OPTS=durable=1 run4 strace -f -ff -qq -z -e trace=fsync,fdatasync,prctl -o "$TMP/st" \
        "$BIN" write aligned coll "$S" >run.out 2>run.err || { cat run.out run.err; fail "mpirun write (durable=1)"; }
    "$BIN" verify aligned "$S" || fail "serial read of $S"
    ranks=0
    for f in "$TMP"/st.*; do
        grep -q 'h5zmark-begin' "$f" || continue # not a rank's main thread
        ranks=$((ranks + 1))
        fd=$(sed -n '/h5zmark-begin/,/h5zmark-end/p' "$f" | grep -c 'fdatasync(' || true)
        fs=$(sed -n '/h5zmark-begin/,/h5zmark-end/p' "$f" | grep -c 'fsync(' || true)
        [ "$fd" -ge 1 ] || fail "durable=1: a rank's H5Dwrite made no fdatasync ($f)"
        [ "$fs" -ge 1 ] || fail "durable=1: a rank's H5Dwrite made no directory fsync: the sync pass did not reach the store ($f)"
    done
    [ "$ranks" -eq 4 ] || fail "durable=1: found the markers in $ranks traces, expected 4 ranks"
    pass "durable=1 under MPI: each of 4 ranks fdatasyncs its chunk files and fsyncs their directories inside its H5Dwrite"
    finish
    exit 0
fi

layout=$1 xfer=$2
S=$TMP/$layout-$xfer.zarr
run4 "$BIN" write "$layout" "$xfer" "$S" >run.out 2>run.err || { cat run.out run.err; fail "mpirun write $layout $xfer"; }
pass "4 ranks wrote $layout/$xfer (create, group, dataset, attribute, blocks, extend, new rows, close; reread under MPI-IO)"
"$BIN" verify "$layout" "$S" || fail "serial read of $S"
pass "serial read through the connector: every value, shape 50 x 36, attribute, group, layout"

node "$INTEROP/zarrita_read.mjs" "$S" /d >zarrita.json || fail "zarrita could not read $S"
$PY - zarrita.json "$layout" <<'PY' || fail "zarrita values"
import json, sys
d = json.load(open(sys.argv[1]))["/d"]
layout = sys.argv[2]
assert d["shape"] == [50, 36] and d["dtype"] == "int32", (d["shape"], d["dtype"])
want_chunks = {"aligned": [10, 9], "unaligned": [7, 8], "sharded": [5, 6]}[layout]  # sharded: the inner chunk
assert d["chunks"] == want_chunks, d["chunks"]
want = [i * 1000 + j + 1 for i in range(50) for j in range(36)]
bad = [k for k, (a, b) in enumerate(zip(d["data"], want)) if a != b]
assert not bad, "%d wrong, first at %s: %s != %s" % (len(bad), divmod(bad[0], 36), d["data"][bad[0]], want[bad[0]])
PY
pass "zarrita reads shape, chunk grid and every value"
if [ "$layout" = sharded ]; then
    $PY - "$S/d/zarr.json" <<'PY' || fail "shard grid"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["chunk_grid"]["configuration"]["chunk_shape"] == [10, 12], m["chunk_grid"]
c = m["codecs"][0]
assert c["name"] == "sharding_indexed" and c["configuration"]["chunk_shape"] == [5, 6], c
PY
    pass "zarr.json: shards of 10 x 12 holding inner chunks of 5 x 6 (shards shared by ranks)"
fi
finish
