#!/usr/bin/env bash
# Bad input for the dependency bootstrap: when a dependency cannot be fetched, scripts/deps.sh stops
# with one line naming the step and its log, exits non-zero, and leaves no cache a later run trusts.
. "$(dirname "$0")/../lib.sh"

# An apt-get that always fails stands in for an unreachable archive (the packages are installed, so
# the first thing that needs apt is the source download).
mkdir -p "$TMP/bin"
printf '#!/bin/sh\necho "E: simulated failure: could not reach the archive" >&2\nexit 100\n' >"$TMP/bin/apt-get"
chmod +x "$TMP/bin/apt-get"

set +e
PATH="$TMP/bin:$PATH" H5ZARR_CACHE="$TMP/cache" "$H5ZARR_SRC/scripts/deps.sh" >"$TMP/out" 2>"$TMP/err"
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "deps.sh succeeded although apt-get failed"
line=$(grep "deps: FAILED:" "$TMP/err" || true)
[ "$(grep -c "deps: FAILED:" "$TMP/err")" -eq 1 ] || fail "expected exactly one FAILED line, got: $(cat "$TMP/err")"
grep -q "apt-get" <<<"$line" || fail "the FAILED line does not name the step: $line"
log=$(sed -E 's/.*\(log: (.*)\)$/\1/' <<<"$line")
[ -f "$log" ] || fail "the FAILED line names no existing log: $line"
grep -q "simulated failure" "$log" || fail "the log does not hold the failing command's output"
[ ! -e "$TMP/cache/deps" ] || fail "a cache prefix was left behind after a failed run"
[ -z "$(ls "$TMP/cache" | grep '^deps.tmp' || true)" ] || fail "a temporary build tree was left behind"
[ ! -s "$TMP/out" ] || fail "stdout (the prefix) must be empty on failure"
pass "deps.sh fails with one clear line ($line) and leaves no cache"
finish
