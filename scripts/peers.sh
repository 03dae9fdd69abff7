#!/usr/bin/env bash
# peers.sh: other projects' own test suites, natively and through the connector (make test-peers).
# h5py's suite: tests/peers/h5py_suite.py (docs/PEERS.md says what it compares and lists the exceptions).
# Without the h5py source (a user's clone has no ../shared), it says so and skips.
# netCDF-C 4.9.3's own tests: tests/peers/netcdf_suite.py, compiled from the source tree in the deps cache
# (docs/PEERS.md, "netCDF-C 4.9.3's own tests"). Both run; the script fails if either fails.
# Usage: scripts/peers.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: peers.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps=$(cat "$build/deps.prefix")
out=$build/peers
mkdir -p "$out"
status=0

rc=0
lib=$("$here/scripts/python.sh" "$deps") || rc=$?
if [ "$rc" = 3 ]; then
    echo "peers: h5py suite skipped: its source is not here (see above)"
elif [ "$rc" != 0 ]; then
    exit "$rc"
else
    LD_LIBRARY_PATH="$deps/hdf5/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        /usr/bin/python3 "$here/tests/peers/h5py_suite.py" --h5py "$lib" --plugins "$build/plugins" \
        --out "$out/h5py" || status=1
fi

/usr/bin/python3 "$here/tests/peers/netcdf_suite.py" --deps "$deps" --plugins "$build/plugins" \
    --out "$out/netcdf" || status=1

[ "$status" = 0 ] || echo "peers: FAILED: a suite above has a regression, a crash or a hang not listed" >&2
exit "$status"
