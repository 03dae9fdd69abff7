#!/usr/bin/env bash
# python.sh: builds h5py against the project's HDF5 (scripts/deps.sh) into the dependency cache, so that
# Python HDF5 programs run on zarr with one setting (`make env` puts it on PYTHONPATH).
#
# Debian's python3-h5py links Debian's HDF5 1.10, which has no VOL API; h5py 3.13 (the version Debian
# trixie packages) builds unchanged against HDF5 1.14 with bookworm's Cython and numpy. Its source is
# taken from $H5ZARR_SHARED/deps (../shared/deps from the project root) or $H5PY_TARBALL, checked
# against its SHA-256. The build is keyed by the h5py version and the deps prefix's stamp; a failed
# or interrupted build leaves nothing a later run trusts.
#
# Usage: scripts/python.sh DEPS_PREFIX   build if needed; print the folder to put on PYTHONPATH
#        scripts/python.sh DEPS_PREFIX --if-built   print it only if built (exit 1 otherwise)
# Exit 3 (with one line saying why) when the h5py source is not here: a user's clone without
# ../shared, and no network to fetch it (see README, "Python programs").
set -euo pipefail

H5PY_VER=3.13.0
H5PY_SHA=92fd9ad21fcdd503dddb91457aa0feb9da1a408b4d9cb2e997e94ebe48ceb0c4
PKGS="cython3 python3-pkgconfig python3-numpy python3-dev python3-pytest python3-pytest-timeout python3-pytest-mpi"

deps=${1:?usage: python.sh DEPS_PREFIX}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shared=${H5ZARR_SHARED:-$here/../../shared}
tarball=${H5PY_TARBALL:-$shared/deps/h5py-$H5PY_VER.tar.gz}
root=$(dirname "$deps")
stamp="h5py=$H5PY_VER deps=$(sha256sum <"$deps/.stamp" | cut -c1-16)"
dst=$root/python/h5py-$H5PY_VER

say() { echo "python: $*" >&2; }

if [ -f "$dst/.stamp" ] && [ "$(cat "$dst/.stamp")" = "$stamp" ]; then
    echo "$dst/lib"
    exit 0
fi
[ "${2:-}" != --if-built ] || exit 1
if [ ! -f "$tarball" ]; then
    say "skipped: no h5py $H5PY_VER source at $tarball (set H5PY_TARBALL, or get it with" \
        "'pip download --no-binary h5py --no-deps h5py==$H5PY_VER')"
    exit 3
fi
echo "$H5PY_SHA  $tarball" | sha256sum -c --quiet - || { say "FAILED: checksum of $tarball"; exit 1; }

missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
mkdir -p "$root/logs" "$root/python"
if [ -n "$missing" ]; then
    [ "$(id -u)" = 0 ] || { say "FAILED: missing Debian packages:$missing (run as root or install them)"; exit 1; }
    say "apt-get install$missing ..."
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing; } \
        >"$root/logs/python-apt.log" 2>&1 || { tail -n 15 "$root/logs/python-apt.log" >&2; say "FAILED: apt-get (log: $root/logs/python-apt.log)"; exit 1; }
fi

exec 9>"$root/python/.lock"
flock 9
if [ -f "$dst/.stamp" ] && [ "$(cat "$dst/.stamp")" = "$stamp" ]; then
    echo "$dst/lib"
    exit 0
fi
rm -rf "$dst"
trap 'rm -rf "$dst"' EXIT
mkdir -p "$dst/src"
tar xzf "$tarball" -C "$dst/src" --strip-components=1
log=$root/logs/python-h5py.log
say "build h5py $H5PY_VER against $deps/hdf5 (about 3 minutes) ..."
if ! (cd "$dst/src" && HDF5_DIR="$deps/hdf5" H5PY_SETUP_REQUIRES=0 /usr/bin/python3 setup.py build -j "$(nproc)") \
    >"$log" 2>&1; then
    tail -n 15 "$log" >&2
    say "FAILED: h5py build (log: $log)"
    exit 1
fi
mv "$dst"/src/build/lib.*/ "$dst/lib"
cp "$dst/src/pytest.ini" "$dst/lib/"
rm -rf "$dst/src"
echo "$stamp" >"$dst/.stamp"
trap - EXIT
say "ready: $dst/lib"
echo "$dst/lib"
