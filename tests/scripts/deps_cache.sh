#!/usr/bin/env bash
# A second run of the dependency bootstrap reuses the cache: `make test` has just built (or reused) it,
# so scripts/deps.sh must answer with the same prefix in seconds, without building anything.
. "$(dirname "$0")/../lib.sh"
start=$(date +%s%N)
prefix=$("$H5ZARR_SRC/scripts/deps.sh" 2>"$TMP/err") || fail "deps.sh failed: $(cat "$TMP/err")"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$prefix" = "$H5ZARR_DEPS" ] || fail "deps.sh printed '$prefix', the build uses '$H5ZARR_DEPS'"
! grep -q "build HDF5\|configure" "$TMP/err" || fail "deps.sh rebuilt something: $(cat "$TMP/err")"
[ -f "$prefix/.stamp" ] && grep -q "hdf5=1.14.5" "$prefix/.stamp" || fail "no version stamp in $prefix"
[ "$ms" -lt 30000 ] || fail "a warm run took $ms ms"
pass "warm deps.sh run reused $prefix in $ms ms"
finish
