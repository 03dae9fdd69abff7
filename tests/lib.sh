# lib.sh: helpers shared by the shell tests (sourced, not run). Provides:
#   fail MSG        print "FAIL: MSG" and exit 1
#   check COND MSG  fail unless the command COND succeeds
#   tmpdir          a fresh scratch directory (removed at exit)
#   zarr_env        exports HDF5_VOL_CONNECTOR=zarr for the commands that follow
#   PY              the Debian python3 (zarr-python 2.13, numcodecs, xarray)
#   is_h5 PATH      true if PATH is a native HDF5 file (HDF5's signature in its first 8 bytes)
set -euo pipefail
: "${H5ZARR_BUILD:?run through ctest (H5ZARR_BUILD unset)}"
PY=/usr/bin/python3
EXAMPLES=$H5ZARR_BUILD/examples
INTEROP=$H5ZARR_SRC/tests/interop
is_h5() { [ -f "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 894844460d0a1a0a ]; }
fail() { echo "FAIL: $*" >&2; exit 1; }
check() { local msg=$1; shift; "$@" || fail "$msg"; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/h5zarr-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# The closing line ctest and CI read.
passed=0
pass() { echo "ok: $*"; passed=$((passed + 1)); }
finish() { echo "$passed passed, 0 failed"; }
