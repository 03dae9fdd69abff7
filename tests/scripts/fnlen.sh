#!/usr/bin/env bash
# Function length (issue #28): tools/fnlen.py finds no function over 150 lines in vol/, zarr/,
# zarr/codecs/, filters/ and plugin/ other than those tools/fnlen_allow.txt lists with a reason, and no
# stale entry in that list. Then the tool itself, on a synthetic tree: a long function is flagged, a
# long data table is not, a listed long function is accepted, and entries for a function that is gone or
# now short are flagged as stale.
. "$(dirname "$0")/../lib.sh"
FNLEN=$H5ZARR_SRC/tools/fnlen.py

# 1. the project
set +e
"$PY" "$FNLEN" --root "$H5ZARR_SRC" >"$TMP/out" 2>&1
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "tools/fnlen.py (exit $rc): $(cat "$TMP/out")"
grep -q "problems" "$TMP/out" || fail "no summary line: $(cat "$TMP/out")"
pass "$(tail -n 1 "$TMP/out")"

# 2. a synthetic tree: a long function, one with a comment after its signature, a long table, a listed
# long function, a short one. body N: N lines of statements
body() { for ((i = 0; i < $1; i++)); do echo "    x += $i;"; done; }
mkdir -p "$TMP/p/vol" "$TMP/p/zarr"
{
    echo "/* a long function, a long table, a listed long one, a short one */"
    echo "static int"
    echo "long_one(int x)"
    echo "{"
    body 160
    echo "    return x;"
    echo "}"
    echo
    echo "static const int long_table[] ="
    echo "{"
    for ((i = 0; i < 200; i++)); do echo "    $i,"; done
    echo "};"
    echo
    echo "int"
    echo "allowed_one(int x,"
    echo "            int y)"
    echo "{"
    body 151
    echo "    return x + y;"
    echo "}"
    echo
    echo "static int"
    echo "commented_one(int x) /* a comment after the signature */"
    echo "{"
    body 150
    echo "}"
    echo
    echo "static int"
    echo "short_one(int x)"
    echo "{"
    body 10
    echo "    return x;"
    echo "}"
} >"$TMP/p/vol/long.c"
cat >"$TMP/p/allow.txt" <<'A'
# reasons
vol/long.c:allowed_one  # kept long on purpose
vol/long.c:gone_fn      # no such function
vol/long.c:short_one    # short now
A
set +e
"$PY" "$FNLEN" --root "$TMP/p" --allow "$TMP/p/allow.txt" >"$TMP/syn" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "synthetic tree: exit $rc, expected 1: $(cat "$TMP/syn")"
grep -q "^LONG: vol/long.c:4: long_one is 163 lines" "$TMP/syn" || fail "long_one not flagged: $(cat "$TMP/syn")"
! grep -q "long_table" "$TMP/syn" || fail "a data table was taken for a function: $(cat "$TMP/syn")"
grep -q "^allowed: vol/long.c:.*allowed_one is 154 lines" "$TMP/syn" || fail "allowed_one: $(cat "$TMP/syn")"
! grep -q "^LONG:.*allowed_one" "$TMP/syn" || fail "a listed function was flagged: $(cat "$TMP/syn")"
grep -q "^STALE: allow.txt:3: 'vol/long.c:gone_fn'" "$TMP/syn" || fail "gone_fn not stale: $(cat "$TMP/syn")"
grep -q "^STALE: allow.txt:4: 'vol/long.c:short_one'" "$TMP/syn" || fail "short_one not stale: $(cat "$TMP/syn")"
grep -q "^LONG: vol/long.c:.*commented_one is 152 lines" "$TMP/syn" || fail "commented_one: $(cat "$TMP/syn")"
[ "$(grep -c '^LONG:\|^STALE:' "$TMP/syn")" -eq 4 ] || fail "expected 4 problems: $(cat "$TMP/syn")"
pass "synthetic tree: two long functions and two stale entries flagged, a table and a listed function not"

# 3. the same tree with only the listed function left long (the others removed) and only its entry: clean
sed -i '/^long_one/,/^}/d; /^commented_one/,/^}/d' "$TMP/p/vol/long.c"
sed -i '/gone_fn\|short_one/d' "$TMP/p/allow.txt"
"$PY" "$FNLEN" --root "$TMP/p" --allow "$TMP/p/allow.txt" >"$TMP/syn" 2>&1 ||
    fail "synthetic tree, fixed: $(cat "$TMP/syn")"
pass "synthetic tree, fixed: $(tail -n 1 "$TMP/syn")"
finish
