#!/usr/bin/env bash
# `make env-mpi` prints an environment whose folders exist (issue 28): it builds build-mpi first, so the
# HDF5_PLUGIN_PATH it prints holds the connector plugin (libh5zarr_vol.so) built against the parallel
# HDF5; its PATH leads to h5pcc and mpirun, its LD_LIBRARY_PATH to the parallel libhdf5; and its stdout
# is only comment and export lines (`eval "$(make -s env-mpi)"`), the build's output going to stderr.
#
# Where it runs: in the MPI build (`make test-mpi`: ctest -L mpi in build-mpi/, which has just been
# built, so `make env-mpi` there takes seconds), or anywhere with H5ZARR_TEST_MPI=1, which builds the
# parallel HDF5 (scripts/deps-mpi.sh, minutes the first time) and a fresh build-mpi in the scratch folder.
# Otherwise (the serial `make test`) it is skipped, as it is without an MPI compiler and mpirun.
. "$(dirname "$0")/../lib.sh"

if [ -n "${H5ZARR_DEPS:-}" ] && grep -q '^#define H5_HAVE_PARALLEL 1' "$H5ZARR_DEPS/hdf5/include/H5pubconf.h" 2>/dev/null; then
    B=$H5ZARR_BUILD # the MPI build this test runs in
elif [ "${H5ZARR_TEST_MPI:-}" = 1 ]; then
    B=$TMP/build-mpi
else
    echo "SKIP: not the MPI build (make test-mpi runs this test; H5ZARR_TEST_MPI=1 runs it here, building the parallel HDF5)"
    exit 77
fi
command -v mpicc >/dev/null && command -v mpirun >/dev/null ||
    { echo "SKIP: no MPI compiler and mpirun (scripts/debian-packages-mpi.txt)"; exit 77; }

cd "$TMP"
# From a bare environment, as a user's shell would run it; twice: the second run finds everything built.
bare=(env -i "HOME=$HOME" "PATH=$PATH" ${H5ZARR_CACHE:+"H5ZARR_CACHE=$H5ZARR_CACHE"}
    ${XDG_CACHE_HOME:+"XDG_CACHE_HOME=$XDG_CACHE_HOME"})
for run in 1 2; do
    "${bare[@]}" make -s --no-print-directory -C "$H5ZARR_SRC" env-mpi BUILD_MPI="$B" >env$run.sh 2>env$run.err ||
        { tail -n 30 env$run.err; fail "make env-mpi (run $run) failed"; }
done
cmp -s env1.sh env2.sh || fail "make env-mpi printed another environment the second time: $(diff env1.sh env2.sh)"
bad=$(grep -v -e '^export [A-Z0-9_]*=' -e '^#' env1.sh || true)
[ -z "$bad" ] || fail "make env-mpi's stdout holds more than export lines (build output?): $bad"
for v in PATH HDF5_PLUGIN_PATH LD_LIBRARY_PATH; do
    grep -q "^export $v=" env1.sh || fail "make env-mpi exports no $v: $(cat env1.sh)"
done
pass "make env-mpi: only export lines on stdout, the same twice"

# The folders it names, read in a clean shell after eval.
"${bare[@]}" bash -c 'set -e; eval "$(cat env1.sh)"
    echo "plugin: $HDF5_PLUGIN_PATH"
    echo "path1: ${PATH%%:*}"
    echo "lib1: ${LD_LIBRARY_PATH%%:*}"
    echo "mpirun: $(command -v mpirun)"' >vars.txt || fail "eval of make env-mpi's output failed"
val() { sed -n "s/^$1: //p" vars.txt; }
plugin=$(val plugin)
[ "$plugin" = "$(cd "$B" && pwd)/plugins" ] || fail "HDF5_PLUGIN_PATH is '$plugin', not $B/plugins"
[ -d "$plugin" ] || fail "HDF5_PLUGIN_PATH names '$plugin', which does not exist"
[ -f "$plugin/libh5zarr_vol.so" ] || fail "HDF5_PLUGIN_PATH '$plugin' holds no connector plugin: $(ls -A "$plugin")"
syms=$(nm -D --defined-only "$plugin/libh5zarr_vol.so")
grep -qw H5PLget_plugin_info <<<"$syms" ||
    fail "$plugin/libh5zarr_vol.so is not an HDF5 plugin (no H5PLget_plugin_info)"
pass "HDF5_PLUGIN_PATH ($plugin) exists and holds libh5zarr_vol.so"

lib=$(val lib1)
[ -d "$lib" ] || fail "LD_LIBRARY_PATH starts with '$lib', which does not exist"
ls "$lib"/libhdf5.so* >/dev/null 2>&1 || fail "no libhdf5.so in LD_LIBRARY_PATH's '$lib'"
deps=$(LD_LIBRARY_PATH="$lib" ldd "$plugin/libh5zarr_vol.so")
grep -q "libmpi" <<<"$deps" || fail "the plugin in '$plugin' does not load MPI (not the parallel build?): $deps"
[ -x "$(val path1)/h5pcc" ] || fail "PATH starts with '$(val path1)', which holds no h5pcc"
[ -n "$(val mpirun)" ] || fail "no mpirun on make env-mpi's PATH"
pass "LD_LIBRARY_PATH holds the parallel libhdf5 (the plugin loads MPI through it), h5pcc and mpirun on PATH"
finish
