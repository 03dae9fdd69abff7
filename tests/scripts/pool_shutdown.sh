#!/usr/bin/env bash
# The engine's thread pool shuts down with the library, checked under valgrind on
# tests/hdf5/test_pool_shutdown.c (a pool of 4 threads writing and reading through the connector):
#  - helgrind: no data race and no lock misuse while the pool runs jobs, stops at H5close, starts again
#    and stops again; then the same for a program that ends without H5close (HDF5's atexit handler
#    terminates the connector, which joins the threads);
#  - memcheck: no invalid access (nothing used after H5close) and nothing definitely, indirectly or
#    possibly lost at exit in either program (a pool thread still running at exit shows as its stack
#    and thread block, possibly lost).
# The thread counts themselves (/proc/self/task back to one thread after H5close) are asserted by the
# test program, which also runs on its own as hdf5.test_pool_shutdown. Skipped without valgrind.
. "$(dirname "$0")/../lib.sh"

command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed"; exit 77; }
prog=$H5ZARR_BUILD/tests/test_pool_shutdown
[ -x "$prog" ] || fail "$prog not built"

# libdeflate picks its decompressor for the CPU on first use and stores the choice in a global function
# pointer, unsynchronized: every thread writes the same value (a benign race inside libdeflate, not ours)
cat >"$TMP/libdeflate.supp" <<'EOF'
{
   libdeflate-dispatch-pointer
   Helgrind:Race
   obj:*/libdeflate.so*
}
{
   p11-kit-fini-destroys-a-static-mutex
   Helgrind:Misc
   ...
   obj:*/libp11-kit.so*
}
EOF
# (libp11-kit comes in with libcurl, which the core links for its network stores: at exit its
# destructor destroys a statically initialised mutex, which helgrind calls an invalid argument)

run_vg() { # run_vg NAME VALGRIND-ARGS... -- PROGRAM-ARGS...
    local name=$1
    shift
    local vgargs=()
    while [ "$1" != -- ]; do vgargs+=("$1"); shift; done
    shift
    if ! valgrind --error-exitcode=9 "${vgargs[@]}" "$prog" "$@" >"$TMP/$name.log" 2>&1; then
        grep -E -A25 'Possible data race|lost in loss record|Invalid (read|write)|Lock order|unlocked|ERROR SUMMARY' \
            "$TMP/$name.log" | head -80 >&2
        fail "$name: valgrind reported errors (or the program failed)"
    fi
    grep -q 'ERROR SUMMARY: 0 errors' "$TMP/$name.log" || fail "$name: no clean error summary"
}

hg=(--tool=helgrind --suppressions="$TMP/libdeflate.supp")
mc=(--leak-check=full --errors-for-leak-kinds=definite,indirect,possible --show-leak-kinds=definite,indirect,possible)

run_vg helgrind "${hg[@]}" --
grep -q '1 passed, 0 failed' "$TMP/helgrind.log" || fail "helgrind: the test program did not pass"
pass "helgrind: pool jobs, H5close, HDF5 again, H5close: no race"
run_vg helgrind-exit "${hg[@]}" -- --exit "$TMP/exit-hg.zarr"
pass "helgrind: exit without H5close: no race"
run_vg memcheck "${mc[@]}" --
grep -q '1 passed, 0 failed' "$TMP/memcheck.log" || fail "memcheck: the test program did not pass"
pass "memcheck: nothing used after H5close, nothing lost"
run_vg memcheck-exit "${mc[@]}" -- --exit "$TMP/exit-mc.zarr"
pass "memcheck: exit without H5close: no pool thread or scratch left behind"
finish
