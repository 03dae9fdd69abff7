#!/usr/bin/env bash
# The include graph of zarr/ and vol/ keeps to the layers of tools/layers.txt (tools/depgraph.py): no
# file includes a header of a higher layer, no include cycle spans two layers, every file is placed.
# With the objects of this build, calls between files keep to the layers too (allowed calls up are
# listed in tools/layers.txt). The checker is first tried on tiny synthetic trees, so that a checker
# that passes everything fails.
. "$(dirname "$0")/../lib.sh"
[ -x "$PY" ] || { echo "SKIP: $PY is not installed"; exit 77; }
DG=$H5ZARR_SRC/tools/depgraph.py
cd "$TMP"

# mktree DIR: a module low (low.h, low.c) under a module high (high.h, high.c, which uses low.h)
mktree() {
    mkdir -p "$1/src"
    printf '#include "ext.h"\n' >"$1/src/low.h"
    printf '#include "low.h"\n' >"$1/src/low.c"
    printf '#include "low.h"\n' >"$1/src/high.h"
    printf '#include "high.h"\n#include <stdio.h>\n' >"$1/src/high.c"
    printf 'layer low\nsrc/low.h\nsrc/low.c\nlayer high\nsrc/high.h\nsrc/high.c\n' >"$1/layers.txt"
}
# expect_fail DIR PATTERN MSG: the checker refuses DIR and says PATTERN
expect_fail() {
    local out
    if out=$("$PY" "$DG" --root "$1" --layers "$1/layers.txt" -I src src 2>&1); then
        echo "$out" >&2
        fail "$3: the checker passed"
    fi
    echo "$out" | grep -q -- "$2" || { echo "$out" >&2; fail "$3: no '$2' in its report"; }
}

mktree good
"$PY" "$DG" --root good --layers good/layers.txt -I src src >out.good || { cat out.good >&2; fail "good tree refused"; }
grep -q '^depgraph: ok' out.good || fail "no ok line for the good tree"
pass "self-test: a tree that keeps its layers passes"

mktree up
printf '#include "high.h"\n' >>up/src/low.c
expect_fail up 'upward include: src/low.c:2 \[low\] -> src/high.h \[high\]' "upward include"
pass "self-test: a low file including a high header fails, naming the edge"

mktree unlisted
printf '#include "low.h"\n' >unlisted/src/new.c
expect_fail unlisted 'unlisted file: src/new.c' "unlisted file"
printf 'layer low\nsrc/low.h\nsrc/low.c\nsrc/gone.c\nlayer high\nsrc/high.h\nsrc/high.c\nsrc/new.c\n' >unlisted/layers.txt
expect_fail unlisted 'listed but not found: src/gone.c' "missing file"
pass "self-test: an unplaced file or a listed file that is gone fails"

# low.h's implementation uses high: modules low and high include each other, no edge goes up
mktree cycle
printf 'layer low\nsrc/low.h\nlayer high\nsrc/low.c\nsrc/high.h\nsrc/high.c\n' >cycle/layers.txt
printf '#include "high.h"\n' >>cycle/src/low.c
expect_fail cycle 'include cycle across layers low, high: modules src/high, src/low' "cycle across layers"
expect_fail cycle 'src/low.c:2 \[high\] -> src/high.h \[high\]' "cycle edges"
# the same cycle inside one layer is allowed
printf 'layer low\nlayer high\nsrc/low.h\nsrc/low.c\nsrc/high.h\nsrc/high.c\n' >cycle/layers.txt
"$PY" "$DG" --root cycle --layers cycle/layers.txt -I src src >/dev/null || fail "a cycle inside one layer refused"
pass "self-test: an include cycle across layers fails, one inside a layer passes"

# calls between objects (--objects): a low file calling a high one fails unless an 'up' line allows it
if command -v cc >/dev/null && command -v nm >/dev/null; then
    mkdir -p calls/src calls/obj/src
    printf 'int low_fn(void);\n' >calls/src/low.h
    printf '#include "low.h"\nint high_fn(void);\nint low_fn(void) { return high_fn(); }\n' >calls/src/low.c
    printf '#include "low.h"\nint high_fn(void);\n' >calls/src/high.h
    printf '#include "high.h"\nint high_fn(void) { return 1; }\nint use(void) { return low_fn(); }\n' \
        >calls/src/high.c
    for m in low high; do cc -c -o calls/obj/src/$m.c.o calls/src/$m.c || fail "cc $m.c"; done
    printf 'layer low\nsrc/low.h\nsrc/low.c\nlayer high\nsrc/high.h\nsrc/high.c\n' >calls/layers.txt
    "$PY" "$DG" --root calls --layers calls/layers.txt -I src src >/dev/null || fail "calls tree: includes refused"
    if "$PY" "$DG" --root calls --layers calls/layers.txt -I src --objects calls/obj src >out.calls; then
        fail "an upward call passed"
    fi
    grep -q 'upward call: src/low.c \[low\] -> src/high.c \[high\]: high_fn' out.calls ||
        { cat out.calls >&2; fail "the upward call is not named"; }
    printf 'up src/low.c src/high.c high_fn\nup src/low.c src/high.c gone_fn\n' >>calls/layers.txt
    "$PY" "$DG" --root calls --layers calls/layers.txt -I src --objects calls/obj src >out.calls ||
        { cat out.calls >&2; fail "an allowed upward call refused"; }
    grep -q 'note: allowance not used any more: up src/low.c src/high.c gone_fn' out.calls ||
        fail "a stale allowance is not reported"
    pass "self-test: an upward call between objects fails unless an 'up' line allows it"
else
    echo "note: no cc or nm: the self-test of --objects is left out"
fi

"$PY" "$DG" --root "$H5ZARR_SRC" >out.repo || { cat out.repo >&2; fail "zarr/ and vol/ break their layers (tools/layers.txt)"; }
pass "$(cat out.repo)"

# the calls of the objects of this build (CMake's object directories), when there
objs=()
for t in h5zarr_vol zarr_core; do
    [ -d "$H5ZARR_BUILD/CMakeFiles/$t.dir" ] && objs+=(--objects "$H5ZARR_BUILD/CMakeFiles/$t.dir")
done
if [ ${#objs[@]} -eq 4 ] && command -v nm >/dev/null; then
    "$PY" "$DG" --root "$H5ZARR_SRC" "${objs[@]}" >out.objs ||
        { cat out.objs >&2; fail "calls between the objects of zarr/ and vol/ go up (tools/layers.txt)"; }
    pass "with calls: $(tail -n 1 out.objs)"
else
    echo "note: no object directories of zarr_core and h5zarr_vol in $H5ZARR_BUILD (or no nm): calls not checked"
fi
finish
