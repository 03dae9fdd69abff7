#!/usr/bin/env bash
# h5zarr-convert into an S3 target (issue 30, docs/CONVERT.md "Resuming an interrupted run"), against the
# loopback s3rver: a run killed with SIGKILL after 120 of 200 chunks leaves its resume record as the
# store's key .h5zarr_convert (the head, the source's identity, "structure", chunks done); run again it
# resumes from the record (says so), ends with the record gone, and the store equals the source (h5diff,
# --verify-only). A record of another source is refused without --force; --force starts again. A run
# that is not interrupted sends its raw chunks in batches through the write-behind queue.
# Skips (77) without node/npm for s3rver or without Debian's h5py.
. "$(dirname "$0")/../lib.sh"
. "$H5ZARR_SRC/tests/net/netlib.sh"
unset HDF5_VOL_CONNECTOR H5ZARR_CONFIG
CONV=$H5ZARR_BUILD/bin/h5zarr-convert
PROBE=$H5ZARR_BUILD/tests/store_probe
[ -x "$CONV" ] || fail "no $CONV"
[ -x "$PROBE" ] || fail "no $PROBE"
cd "$TMP"

env -u HDF5_PLUGIN_PATH -u LD_LIBRARY_PATH "$PY" - <<'PY' || { [ $? = 77 ] && { echo "skipped: no Debian h5py"; exit 77; }; fail "h5py writer"; }
import sys
try:
    import h5py, numpy as np
except ImportError as e:
    print(e); sys.exit(77)
with h5py.File("big.h5", "w") as f:
    a = (np.arange(200 * 16384, dtype="<f4") % 977).reshape(200, 16384)
    f.create_dataset("d", data=a, chunks=(1, 16384), compression="gzip", shuffle=True)
    f.create_dataset("small", data=np.arange(10, dtype="i4"))
with h5py.File("other.h5", "w") as f:
    f.create_dataset("x", data=np.arange(4, dtype="i4"))
PY

s3_start "$TMP/s3data" bkt
URL=s3://bkt/res.zarr

# ---- killed part way: the record is in the store
set +e
H5ZARR_CONVERT_KILL_AFTER=120 "$CONV" -q big.h5 "$URL" 2>kill.log
rc=$?
set -e
[ $rc = 137 ] || { cat kill.log; fail "the run did not die of SIGKILL (exit $rc)"; }
[ "$("$PROBE" "$URL" exists .h5zarr_convert)" = yes ] || fail "no resume record in the S3 store after the kill"
"$PROBE" "$URL" get .h5zarr_convert >record.txt || fail "reading the record"
head -1 record.txt | grep -qx "h5zarr-convert resume 1" || fail "record head: $(head -2 record.txt)"
grep -q "^source $TMP/big.h5 size " record.txt || fail "record identity: $(sed -n 2p record.txt)"
grep -qx structure record.txt || fail "the record lacks the structure line: $(cat record.txt)"
done_chunks=$(awk '$1 == "obj" && $3 > 2 { n = $3 - 2 } END { print n + 0 }' record.txt)
[ "$done_chunks" -ge 64 ] && [ "$done_chunks" -lt 200 ] || { cat record.txt; fail "record: $done_chunks chunks done"; }
# every chunk the record names done is in the bucket
for ((c = 0; c < done_chunks; c++)); do
    [ "$("$PROBE" "$URL" exists "d/c/$c/0")" = yes ] || fail "chunk $c is recorded done but not stored"
done

# ---- another source's run does not touch it
set +e
"$CONV" -q other.h5 "$URL" 2>other.log
rc=$?
set -e
[ $rc = 1 ] && grep -q "unfinished conversion of another source" other.log || { cat other.log; fail "another source's run was not refused (exit $rc)"; }
[ "$("$PROBE" "$URL" exists .h5zarr_convert)" = yes ] || fail "the refused run removed the record"

# ---- resumed
"$CONV" big.h5 "$URL" 2>resume.log || { cat resume.log; fail "the resumed run failed"; }
grep -q "resuming the unfinished conversion in $URL" resume.log || { cat resume.log; fail "the second run did not resume"; }
[ "$("$PROBE" "$URL" exists .h5zarr_convert)" = no ] || fail "the record is still in the store after the resumed run"
h5diff --vol-name-2=zarr big.h5 "$URL" || fail "h5diff after resume"
"$CONV" -q --verify-only big.h5 "$URL" || fail "--verify-only after resume"
pass "S3: a run killed after 120 chunks leaves its record as the store's key (structure, $done_chunks chunks done, each stored); another source is refused; run again it resumes, the record goes, h5diff and --verify-only equal"

# ---- raw chunks in flight: they leave through the connector's write-behind queue in batches, not one PUT
# at a time (H5ZARR_HTTP_LOG=1: the queue's counts at close)
H5ZARR_HTTP_LOG=1 "$CONV" -q big.h5 s3://bkt/fresh.zarr 2>fresh.err || { tail -5 fresh.err; fail "converting to a new S3 store"; }
line=$(grep "write-behind of 's3://bkt/fresh.zarr'" fresh.err) || fail "no write-behind line: $(tail -3 fresh.err)"
set -- $(echo "$line" | sed -E 's/.*: ([0-9]+) batches, ([0-9]+) values, .*/\1 \2/')
[ "$2" -ge 200 ] && [ $(($1 * 2)) -le "$2" ] || fail "200 raw chunks: $line (want them batched: at most half as many batches as values)"
[ "$("$PROBE" s3://bkt/fresh.zarr exists .h5zarr_convert)" = no ] || fail "a finished run left its record"
h5diff --vol-name-2=zarr big.h5 s3://bkt/fresh.zarr || fail "h5diff of the new S3 store"
pass "S3: 200 raw chunks stored in $1 batches of $2 values (write-behind), no record left, h5diff equal"

# ---- a finished store is not replaced without --force; --force converts again
set +e
"$CONV" -q other.h5 "$URL" 2>exists.log
rc=$?
set -e
[ $rc = 1 ] || { cat exists.log; fail "an existing S3 store was replaced without --force"; }
"$CONV" -q --force other.h5 "$URL" 2>force.log || { cat force.log; fail "--force"; }
h5diff --vol-name-2=zarr other.h5 "$URL" || fail "h5diff after --force"
pass "S3: an existing store needs --force; with it the other source converts"

# ---- a prefix holding other objects (no zarr store) is not replaced without --force either
echo "not zarr" > note.txt
"$PROBE" s3://bkt/notes put keep/note.txt note.txt || fail "store_probe put"
set +e
"$CONV" -q other.h5 s3://bkt/notes 2>notes.log
rc=$?
set -e
[ $rc = 1 ] || { cat notes.log; fail "a prefix of other objects was converted into without --force"; }
grep -q "holds other objects" notes.log || { cat notes.log; fail "the refusal does not say why"; }
[ "$("$PROBE" s3://bkt/notes get keep/note.txt)" = "not zarr" ] || fail "the other object was touched"
pass "S3: a prefix of other objects is refused without --force, its objects untouched"
