#!/usr/bin/env bash
# deps.sh: one idempotent bootstrap for everything h5zarr builds against.
#
# 1. installs the Debian packages the project needs (only those missing);
# 2. fetches the HDF5 1.14.5 and netCDF-C 4.9.3 upstream tarballs from Debian trixie's *source*
#    packages through a private apt source list (the system's /etc/apt is never touched) and checks
#    their SHA-256;
# 3. builds HDF5 (C, HL, tools, zlib, szip through libaec; shared), netCDF-C (netCDF-4, NCZarr,
#    filter plugins, utilities) and HDF5's VOL API test suite `h5_api_test` into a cache prefix
#    outside the work tree.
#
# The prefix is keyed by a stamp (versions + this script's hash). Everything is configured and
# installed at its final prefix, so nc-config, h5cc, the .pc files, netCDF's compiled-in plugin
# search path and HDF5's messages name folders that exist. A rebuild first removes the stale prefix;
# the stamp is written last, and a failed run removes what it built, so a failed or interrupted run
# never leaves a cache a later run trusts. Builds are serialized by a lock; the build logs live
# outside the prefix. On failure the script prints one line naming the step and its log.
#
# Usage: scripts/deps.sh            build if needed, print the prefix on stdout
#        H5ZARR_CACHE=/path ...      cache root (default ~/.cache/h5zarr)
set -euo pipefail

HDF5_DEB=1.14.5+repack-3
HDF5_TAR=hdf5_1.14.5+repack.orig.tar.gz
HDF5_SHA=71cdb04c151ef4e8a7f88907adfc4f3b75afd44e96fbd55775e1c9d7c4e7c112
NC_DEB=1:4.9.3-1
NC_TAR=netcdf_4.9.3.orig.tar.gz
NC_SHA=990f46d49525d6ab5dc4249f8684c6deeaf54de6fec63a187e9fb382cc0ffdff

# The Debian packages live in a list of their own so that editing it does not invalidate the build cache.
DEB_PKGS=$(grep -v '^#' "$(dirname "${BASH_SOURCE[0]}")/debian-packages.txt")

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=${H5ZARR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/h5zarr}
stamp="hdf5=$HDF5_DEB netcdf=$NC_DEB script=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)"
prefix=$root/deps
jobs=$(nproc 2>/dev/null || echo 2)

say() { echo "deps: $*" >&2; }
fail() { echo "deps: FAILED: $1 (log: $2)" >&2; exit 1; }

# Runs "$@" with output to a log; on failure prints the one-line diagnosis and the log's tail.
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
    command -v node >/dev/null || missing="$missing nodejs npm"
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" != 0 ]; then
        echo "deps: FAILED: missing Debian packages:$missing (run as root or install them)" >&2
        exit 1
    fi
    local log=$root/logs/apt.log
    mkdir -p "$root/logs"
    step "apt-get install$missing" "$log" \
        sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing"
}

fetch_sources() {
    local dl=$root/downloads apt=$root/apt
    mkdir -p "$dl" "$apt/lists/partial" "$root/logs"
    if [ -f "$dl/$HDF5_TAR" ] && [ -f "$dl/$NC_TAR" ] &&
        echo "$HDF5_SHA  $dl/$HDF5_TAR" | sha256sum -c --quiet - 2>/dev/null &&
        echo "$NC_SHA  $dl/$NC_TAR" | sha256sum -c --quiet - 2>/dev/null; then
        return 0
    fi
    cat >"$apt/sources.list" <<SRC
deb-src [signed-by=/usr/share/keyrings/debian-archive-trixie-stable.gpg] http://deb.debian.org/debian trixie main
SRC
    local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$apt/lists" -o Debug::NoLocking=1)
    step "apt-get update (private trixie source list)" "$root/logs/apt-src.log" apt-get "${opts[@]}" update
    rm -f "$dl"/*.part
    step "apt-get source --download-only --tar-only hdf5 netcdf" "$root/logs/apt-src.log" \
        sh -c "cd '$dl' && apt-get $(printf "%q " "${opts[@]}") source --download-only --tar-only hdf5=$HDF5_DEB netcdf=$NC_DEB"
    echo "$HDF5_SHA  $dl/$HDF5_TAR" | sha256sum -c --quiet - || fail "checksum of $HDF5_TAR" "$dl"
    echo "$NC_SHA  $dl/$NC_TAR" | sha256sum -c --quiet - || fail "checksum of $NC_TAR" "$dl"
}

# Builds into $1, which is the final prefix (the build trees go to $1/build, removed by the caller).
build_all() {
    local dst=$1 logs=$root/logs/build src=$1/src
    mkdir -p "$logs" "$src"
    tar xzf "$root/downloads/$HDF5_TAR" -C "$src"
    tar xzf "$root/downloads/$NC_TAR" -C "$src"
    local h5src nsrc
    h5src=$(echo "$src"/hdf5-1.14.5*) nsrc=$(echo "$src"/netcdf-c-4.9.3)
    ln -s "$(basename "$h5src")" "$src/hdf5"
    ln -s "$(basename "$nsrc")" "$src/netcdf"

    # Debian's libaec ships no CMake package; HDF5 looks for one named libaec. This shim says where it is.
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

    step "configure HDF5 1.14.5" "$logs/hdf5-configure.log" \
        cmake -S "$h5src" -B "$dst/build/hdf5" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_INSTALL_PREFIX="$dst/hdf5" -DCMAKE_PREFIX_PATH="$dst/shim/libaec" -Dlibaec_DIR="$dst/shim/libaec" \
        -DBUILD_SHARED_LIBS=ON -DONLY_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF -DBUILD_TESTING=OFF \
        -DHDF5_BUILD_EXAMPLES=OFF -DHDF5_BUILD_HL_LIB=ON -DHDF5_BUILD_TOOLS=ON -DHDF5_BUILD_UTILS=ON \
        -DHDF5_BUILD_FORTRAN=OFF -DHDF5_BUILD_CPP_LIB=OFF -DHDF5_BUILD_JAVA=OFF \
        -DHDF5_ENABLE_Z_LIB_SUPPORT=ON -DHDF5_ENABLE_SZIP_SUPPORT=ON -DHDF5_ENABLE_SZIP_ENCODING=ON \
        -DHDF5_ALLOW_EXTERNAL_SUPPORT=NO -DHDF5_ENABLE_DEPRECATED_SYMBOLS=ON \
        -DCMAKE_INSTALL_RPATH="$prefix/hdf5/lib" -DCMAKE_BUILD_WITH_INSTALL_RPATH=OFF
    grep -q "H5_HAVE_FILTER_SZIP 1" "$dst/build/hdf5/src/H5pubconf.h" ||
        fail "HDF5 configured without szip (libaec shim not picked up)" "$logs/hdf5-configure.log"
    step "build HDF5" "$logs/hdf5-build.log" cmake --build "$dst/build/hdf5" -j "$jobs"
    step "install HDF5" "$logs/hdf5-install.log" cmake --install "$dst/build/hdf5"

    # Binaries carry the installed rpath; netCDF's build-tree tools find HDF5 through this too.
    export LD_LIBRARY_PATH="$dst/hdf5/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    step "configure netCDF-C 4.9.3" "$logs/netcdf-configure.log" \
        cmake -S "$nsrc" -B "$dst/build/netcdf" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_INSTALL_PREFIX="$dst/netcdf" -DCMAKE_PREFIX_PATH="$dst/hdf5;$dst/shim/libaec" \
        -DHDF5_ROOT="$dst/hdf5" -DHDF5_DIR="$dst/hdf5/cmake" \
        -DENABLE_NETCDF_4=ON -DENABLE_HDF5=ON -DENABLE_NCZARR=ON -DENABLE_NCZARR_FILTERS=ON \
        -DENABLE_PLUGINS=ON -DENABLE_PLUGIN_INSTALL=ON \
        -DENABLE_FILTER_BLOSC=ON -DENABLE_FILTER_ZSTD=ON -DENABLE_DAP=OFF -DENABLE_BYTERANGE=OFF \
        -DENABLE_TESTS=OFF -DENABLE_EXAMPLES=OFF -DBUILD_UTILITIES=ON -DENABLE_DOXYGEN=OFF \
        -DBUILD_SHARED_LIBS=ON -DENABLE_NCZARR_S3=OFF -DENABLE_S3=OFF \
        -DCMAKE_SHARED_LINKER_FLAGS="-Wl,-rpath,$prefix/hdf5/lib" \
        -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath,$prefix/hdf5/lib" \
        -DCMAKE_INSTALL_RPATH="$prefix/netcdf/lib;$prefix/hdf5/lib"
    step "build netCDF-C" "$logs/netcdf-build.log" cmake --build "$dst/build/netcdf" -j "$jobs"
    step "install netCDF-C" "$logs/netcdf-install.log" cmake --install "$dst/build/netcdf"

    # HDF5's VOL API test suite, built standalone against the installed library.
    local at=$dst/api-test t=$h5src/test
    mkdir -p "$at/gen"
    sed -e 's/#cmakedefine \(.*\)$/\/* #undef \1 *\//' "$t/API/H5_api_test_config.h.in" >"$at/gen/H5_api_test_config.h"
    sed -e "s|@srcdir@|$t|" "$t/H5srcdir_str.h.in" >"$at/gen/H5srcdir_str.h"
    local parts="attribute dataset datatype file group link misc object"
    local srcs="$t/API/H5_api_test.c $t/API/H5_api_test_util.c $t/API/H5_api_async_test.c"
    for p in $parts; do srcs="$srcs $t/API/H5_api_${p}_test.c"; done
    step "build h5_api_test" "$logs/api-test-build.log" \
        cc -O1 -g -w -DH5_HAVE_TEST_API -DH5_TEST_EXPRESS_LEVEL_DEFAULT=3 \
        -I"$at/gen" -I"$t/API" -I"$t" -I"$h5src/src" -I"$dst/build/hdf5/src" -I"$dst/hdf5/include" \
        -o "$at/h5_api_test" $srcs "$t/h5test.c" "$t/testframe.c" \
        -L"$dst/hdf5/lib" -lhdf5 -Wl,-rpath,"$prefix/hdf5/lib" -lm -ldl -lpthread

    echo "$stamp" >"$dst/.stamp"
}

mkdir -p "$root"
install_debs
if [ -f "$prefix/.stamp" ] && [ "$(cat "$prefix/.stamp")" = "$stamp" ]; then
    echo "$prefix"
    exit 0
fi
# One build at a time per cache: a second caller waits, then finds the fresh cache.
exec 9>"$root/.lock"
flock 9
if [ -f "$prefix/.stamp" ] && [ "$(cat "$prefix/.stamp")" = "$stamp" ]; then
    echo "$prefix"
    exit 0
fi
fetch_sources
# Leftovers of the layout that built in deps.tmp.<pid> and renamed it (its files named the temporary path).
rm -rf "$root"/deps.tmp.* "$prefix.old"
# Build in place: the stale prefix goes first; until .stamp is written (last), nothing here is trusted.
rm -rf "$prefix"
trap 'rm -rf "$prefix"' EXIT
mkdir -p "$prefix"
# Build logs live outside the prefix so a failure leaves them readable.
rm -rf "$root/logs/build"
build_all "$prefix"
rm -rf "$prefix/build"
trap - EXIT
say "ready: $prefix"
echo "$prefix"
