#!/usr/bin/env bash
# deps-mpi.sh: the bootstrap of the MPI variant: a parallel HDF5 1.14.5 built against Debian's OpenMPI.
#
# 1. installs the Debian packages of scripts/debian-packages-mpi.txt (only those missing);
# 2. takes the same HDF5 source tarball as scripts/deps.sh (its name, Debian version and SHA-256 are
#    read from deps.sh, so the two builds cannot drift apart): from the cache's downloads/ folder where
#    deps.sh left it, else fetched the same way (Debian trixie's source package through a private apt
#    source list; /etc/apt is never touched), and checks its SHA-256 either way;
# 3. builds HDF5 with HDF5_ENABLE_PARALLEL (CMake's --enable-parallel) with CC=mpicc: C, HL, shared,
#    zlib and szip (libaec), no tools (the serial build has them; they read the same files) into
#    <cache>/deps-mpi/hdf5, beside the serial <cache>/deps.
#
# Like deps.sh: the prefix is keyed by a stamp (HDF5 version + this script's hash + deps.sh's HDF5 lines),
# built in place at its final path (h5pcc, the .pc file and libhdf5.settings name folders that exist),
# the stamp written last, a failed run removes what it built, builds serialized by a lock, logs outside
# the prefix, one line naming the failed step and its log. The serial cache is never touched.
#
# Usage: scripts/deps-mpi.sh          build if needed, print the prefix on stdout
#        H5ZARR_CACHE=/path ...        cache root (default ~/.cache/h5zarr)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The tarball deps.sh fetches (HDF5_DEB, HDF5_TAR, HDF5_SHA), read from its assignments.
h5lines=$(grep -E '^HDF5_(DEB|TAR|SHA)=[A-Za-z0-9.+:_-]+$' "$here/deps.sh")
[ "$(echo "$h5lines" | wc -l)" = 3 ] || { echo "deps-mpi: FAILED: HDF5_DEB/TAR/SHA not found in $here/deps.sh" >&2; exit 1; }
eval "$h5lines"
DEB_PKGS=$(grep -v '^#' "$here/debian-packages-mpi.txt")

root=${H5ZARR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/h5zarr}
stamp="hdf5=$HDF5_DEB parallel=openmpi script=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16) src=$HDF5_SHA"
prefix=$root/deps-mpi
jobs=$(nproc 2>/dev/null || echo 2)

say() { echo "deps-mpi: $*" >&2; }
fail() { echo "deps-mpi: FAILED: $1 (log: $2)" >&2; exit 1; }
step() {
    local name=$1 log=$2; shift 2
    say "$name ..."
    if ! "$@" >"$log" 2>&1; then
        tail -n 15 "$log" >&2 || true
        fail "$name" "$log"
    fi
}

install_debs() {
    local missing=""
    for p in $DEB_PKGS; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" != 0 ]; then
        echo "deps-mpi: FAILED: missing Debian packages:$missing (run as root or install them)" >&2
        exit 1
    fi
    mkdir -p "$root/logs"
    step "apt-get install$missing" "$root/logs/apt-mpi.log" \
        sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing"
}

fetch_source() {
    local dl=$root/downloads apt=$root/apt-mpi
    mkdir -p "$dl" "$root/logs"
    if [ -f "$dl/$HDF5_TAR" ] && echo "$HDF5_SHA  $dl/$HDF5_TAR" | sha256sum -c --quiet - 2>/dev/null; then
        return 0
    fi
    mkdir -p "$apt/lists/partial"
    cat >"$apt/sources.list" <<SRC
deb-src [signed-by=/usr/share/keyrings/debian-archive-trixie-stable.gpg] http://deb.debian.org/debian trixie main
SRC
    local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$apt/lists" -o Debug::NoLocking=1)
    step "apt-get update (private trixie source list)" "$root/logs/apt-src-mpi.log" apt-get "${opts[@]}" update
    local tmp=$dl/mpi.tmp.$$
    rm -rf "$tmp" && mkdir -p "$tmp"
    step "apt-get source --download-only --tar-only hdf5" "$root/logs/apt-src-mpi.log" \
        sh -c "cd '$tmp' && apt-get $(printf "%q " "${opts[@]}") source --download-only --tar-only hdf5=$HDF5_DEB"
    echo "$HDF5_SHA  $tmp/$HDF5_TAR" | sha256sum -c --quiet - || fail "checksum of $HDF5_TAR" "$tmp"
    mv "$tmp/$HDF5_TAR" "$dl/$HDF5_TAR.mpi.$$" && mv "$dl/$HDF5_TAR.mpi.$$" "$dl/$HDF5_TAR"
    rm -rf "$tmp"
}

build_hdf5() {
    local dst=$1 logs=$root/logs/build-mpi src=$1/src
    mkdir -p "$logs" "$src"
    # The checksum once more, on the bytes about to be unpacked (the file may have been replaced since).
    echo "$HDF5_SHA  $root/downloads/$HDF5_TAR" | sha256sum -c --quiet - ||
        fail "checksum of $HDF5_TAR" "$root/downloads"
    tar xzf "$root/downloads/$HDF5_TAR" -C "$src"
    local h5src
    h5src=$(echo "$src"/hdf5-1.14.5*)
    ln -s "$(basename "$h5src")" "$src/hdf5"

    # Debian's libaec ships no CMake package (the same shim as deps.sh).
    mkdir -p "$dst/shim/libaec"
    cat >"$dst/shim/libaec/libaec-config.cmake" <<'SHIM'
set(SZIP_FOUND TRUE)
set(libaec_FOUND TRUE)
find_path(SZIP_INCLUDE_DIR szlib.h)
find_library(SZIP_LIBRARY NAMES sz)
if(NOT TARGET szip-shared)
  add_library(szip-shared SHARED IMPORTED)
  set_target_properties(szip-shared PROPERTIES IMPORTED_LOCATION "${SZIP_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${SZIP_INCLUDE_DIR}" OUTPUT_NAME sz)
endif()
set(SZIP_LIBRARIES szip-shared)
set(SZIP_INCLUDE_DIRS ${SZIP_INCLUDE_DIR})
SHIM
    cp "$dst/shim/libaec/libaec-config.cmake" "$dst/shim/libaec/szip-config.cmake"

    step "configure parallel HDF5 1.14.5 (mpicc)" "$logs/hdf5-configure.log" \
        env CC=mpicc cmake -S "$h5src" -B "$dst/build/hdf5" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_COMPILER=mpicc -DHDF5_ENABLE_PARALLEL=ON -DHDF5_ENABLE_THREADSAFE=OFF \
        -DCMAKE_INSTALL_PREFIX="$dst/hdf5" -DCMAKE_PREFIX_PATH="$dst/shim/libaec" -Dlibaec_DIR="$dst/shim/libaec" \
        -DBUILD_SHARED_LIBS=ON -DONLY_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF -DBUILD_TESTING=OFF \
        -DHDF5_BUILD_EXAMPLES=OFF -DHDF5_BUILD_HL_LIB=ON -DHDF5_BUILD_TOOLS=OFF -DHDF5_BUILD_UTILS=OFF \
        -DHDF5_BUILD_FORTRAN=OFF -DHDF5_BUILD_CPP_LIB=OFF -DHDF5_BUILD_JAVA=OFF \
        -DHDF5_ENABLE_Z_LIB_SUPPORT=ON -DHDF5_ENABLE_SZIP_SUPPORT=ON -DHDF5_ENABLE_SZIP_ENCODING=ON \
        -DHDF5_ALLOW_EXTERNAL_SUPPORT=NO -DHDF5_ENABLE_DEPRECATED_SYMBOLS=ON \
        -DCMAKE_INSTALL_RPATH="$prefix/hdf5/lib" -DCMAKE_BUILD_WITH_INSTALL_RPATH=OFF
    grep -q "H5_HAVE_PARALLEL 1" "$dst/build/hdf5/src/H5pubconf.h" ||
        fail "HDF5 configured without parallel support (MPI not found by CMake)" "$logs/hdf5-configure.log"
    grep -q "H5_HAVE_FILTER_SZIP 1" "$dst/build/hdf5/src/H5pubconf.h" ||
        fail "HDF5 configured without szip (libaec shim not picked up)" "$logs/hdf5-configure.log"
    step "build parallel HDF5" "$logs/hdf5-build.log" cmake --build "$dst/build/hdf5" -j "$jobs"
    step "install parallel HDF5" "$logs/hdf5-install.log" cmake --install "$dst/build/hdf5"
    [ -x "$dst/hdf5/bin/h5pcc" ] || fail "install left no h5pcc" "$logs/hdf5-install.log"
    command -v mpirun >/dev/null || fail "mpirun not on PATH (openmpi-bin)" "$root/logs/apt-mpi.log"

    echo "$stamp" >"$dst/.stamp"
}

mkdir -p "$root"
install_debs
if [ -f "$prefix/.stamp" ] && [ "$(cat "$prefix/.stamp")" = "$stamp" ]; then
    echo "$prefix"
    exit 0
fi
exec 9>"$root/.lock-mpi"
flock 9
if [ -f "$prefix/.stamp" ] && [ "$(cat "$prefix/.stamp")" = "$stamp" ]; then
    echo "$prefix"
    exit 0
fi
fetch_source
rm -rf "$prefix"
trap 'rm -rf "$prefix"' EXIT
mkdir -p "$prefix"
rm -rf "$root/logs/build-mpi"
build_hdf5 "$prefix"
rm -rf "$prefix/build" "$prefix/src"
trap - EXIT
say "ready: $prefix"
echo "$prefix"
