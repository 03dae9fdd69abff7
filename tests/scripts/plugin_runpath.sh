#!/usr/bin/env bash
# The plugins' library search path names no relative folder: every RUNPATH/RPATH entry of each plugin
# of the build (HDF5_PLUGIN_PATH's first folder) is an absolute path, with no empty entry (an empty
# entry, which CMake's padded build RPATH left, is the program's working folder: the loader then looked
# for each of a plugin's libraries there first, 12 failed opens a library in every process that loads
# the connector, and would load a library of that name found in it). With strace, loading the
# connector (h5dump of a native file through it, from a scratch folder) opens no library by a relative
# name.
. "$(dirname "$0")/../lib.sh"
dir=${H5ZARR_PLUGIN_DIR:-$H5ZARR_BUILD/plugins}
n=0
for so in "$dir"/*.so; do
    [ -e "$so" ] || fail "no plugin in $dir"
    rp=$(readelf -d "$so" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
    [ -n "$rp" ] || continue
    IFS=: read -r -a parts <<<"$rp"
    [ "${rp%:}" = "$rp" ] && [ "${rp#:}" = "$rp" ] && [ "${rp/::/}" = "$rp" ] ||
        fail "$(basename "$so"): empty entry in its run path '$rp'"
    for p in "${parts[@]}"; do
        case $p in /*) ;; *) fail "$(basename "$so"): relative entry '$p' in its run path '$rp'" ;; esac
    done
    n=$((n + 1))
done
[ "$n" -gt 0 ] || fail "no plugin of $dir has a run path (libhdf5 is found through it)"
pass "$n plugins: run paths absolute, no empty entry"

h5dump=${H5ZARR_DEPS:+$H5ZARR_DEPS/hdf5/bin/h5dump}
if command -v strace >/dev/null && [ -x "${h5dump:-}" ]; then
    cd "$TMP"
    "$H5ZARR_DEPS/hdf5/bin/h5mkgrp" -p n.h5 g 2>/dev/null || fail "h5mkgrp could not make a native file"
    HDF5_VOL_CONNECTOR=zarr strace -f -e trace=openat -o trace.txt "$h5dump" -H n.h5 >/dev/null ||
        fail "h5dump through the connector failed"
    grep -q 'libh5zarr_vol.so' trace.txt || fail "the connector was not loaded (HDF5_PLUGIN_PATH=$HDF5_PLUGIN_PATH)"
    rel=$(grep -E 'openat\(AT_FDCWD, "[^/][^"]*\.so[."]' trace.txt || true)
    [ -z "$rel" ] || fail "libraries looked for by a relative name: $(echo "$rel" | head -3)"
    pass "loading the connector opens no library by a relative name"
fi
finish
