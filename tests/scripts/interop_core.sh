#!/usr/bin/env bash
# The core's interop matrix (issue 3), generated during the run by tests/interop/core_matrix.py:
#   zarrita (node) writes v3 arrays      -> the core reads them (tools/zarrcore dump)
#   zarr-python 2.13 writes v2 arrays    -> the core reads them
#   the core writes v3 (zarrcore write)  -> zarrita reads them
#   the core writes v2                   -> zarr-python 2.13 and netCDF's NCZarr (ncdump) read them
#   netCDF (ncgen -4 + nccopy) writes v2 stores through NCZarr, with its filters -> the core reads them
# One line per case; any mismatch fails the test.
. "$(dirname "$0")/../lib.sh"

export ZARRCORE=$H5ZARR_BUILD/tools/zarrcore INTEROP NODE=node
[ -x "$ZARRCORE" ] || fail "no $ZARRCORE (tools/ not built)"
[ -d "$INTEROP/node_modules/zarrita" ] || { echo "skip: zarrita is not installed (make interop-deps)"; exit 77; }
# ncdump: netCDF's libraries and its own HDF5 filter plugins (NCZarr maps zarr codecs through them)
export LD_LIBRARY_PATH="$H5ZARR_DEPS/netcdf/lib:$H5ZARR_DEPS/hdf5/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HDF5_PLUGIN_PATH="$H5ZARR_DEPS/netcdf/hdf5/lib/plugin"

status=0
for direction in zarrita-to-core zarrpy-to-core core-to-zarrita core-to-zarrpy nczarr-to-core; do
    if $PY "$INTEROP/core_matrix.py" "$direction" "$TMP/$direction"; then
        pass "$direction"
    else
        echo "FAIL: $direction" >&2
        status=1
    fi
done
[ "$status" = 0 ] || fail "interop matrix mismatches (see above)"
finish
