#!/usr/bin/env bash
# HDF5's own VOL API test suite (h5_api_test, built by scripts/deps.sh from HDF5 1.14.5's test/API)
# against the zarr connector. The pass-through connector over the native format passes 1074 of 1135.
# Gate: at least MIN_PASSED tests pass and at most MAX_FAILED fail; both move toward the issue's target
# (>= 1020 passed, 0 failed) as features land. docs/API_TESTS.md lists what still fails and why.
. "$(dirname "$0")/../lib.sh"
MIN_PASSED=1072
MAX_FAILED=0

bin=$H5ZARR_DEPS/api-test/h5_api_test
[ -x "$bin" ] || fail "h5_api_test not built ($bin)"
cd "$TMP"
# In a sanitized build (make asan) the plugins need the sanitizer runtimes preloaded into h5_api_test;
# leak checking is off there (HDF5 itself is not instrumented and keeps its globals to exit).
if [ -n "${H5ZARR_TEST_PRELOAD:-}" ]; then
    LD_PRELOAD="$H5ZARR_TEST_PRELOAD" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1 \
        HDF5_VOL_CONNECTOR=zarr HDF5_PLUGIN_PATH=$H5ZARR_PLUGIN_DIR "$bin" >"$TMP/api.log" 2>&1 || true
    ! grep -E "ERROR: AddressSanitizer|runtime error:" "$TMP/api.log" || fail "sanitizer report in h5_api_test"
else
    HDF5_VOL_CONNECTOR=zarr HDF5_PLUGIN_PATH=$H5ZARR_PLUGIN_DIR "$bin" >"$TMP/api.log" 2>&1 || true
fi
summary=$(grep "API tests passed with VOL connector" "$TMP/api.log" || true)
[ -n "$summary" ] || { tail -n 30 "$TMP/api.log"; fail "h5_api_test printed no summary (crashed?)"; }
echo "$summary"
grep -q "VOL connector 'zarr'" <<<"$summary" || fail "the suite did not run against the zarr connector"
passed=$(sed -E 's|^([0-9]+)/.*|\1|' <<<"$summary")
failed=$(grep "did not pass" "$TMP/api.log" | sed -E 's|^([0-9]+)/.*|\1|')
skipped=$(grep "were skipped" "$TMP/api.log" | sed -E 's|^([0-9]+)/.*|\1|')
echo "h5_api_test: $passed passed, $failed failed, $skipped skipped"
awk '/^Testing|^  Testing/{hdr=$0} /\*FAILED\*/{sub(/ +(HDF5-DIAG.*|\*FAILED\*)$/, "", hdr); print "  failed:" hdr}' "$TMP/api.log" | sort -u
[ "$passed" -ge "$MIN_PASSED" ] || fail "only $passed API tests passed (floor $MIN_PASSED)"
[ "$failed" -le "$MAX_FAILED" ] || fail "$failed API tests failed (ceiling $MAX_FAILED): a regression"
pass "h5_api_test: $passed passed (floor $MIN_PASSED), $failed failed (ceiling $MAX_FAILED)"
finish
