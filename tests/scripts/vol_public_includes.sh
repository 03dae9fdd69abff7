#!/usr/bin/env bash
# The connector uses the core only through its public headers (include/h5zarr/): no source compiled
# into libh5zarr_vol.so (vol/*.c|h, plugin/vol_plugin.c, plugin/nczarr_codecs.c) includes a header of
# zarr/ (the core's internal ones: kernels.h, internal.h, codec_class.h, ...) or <blosc.h> (the core
# validates Blosc settings: zarr_blosc_* in h5zarr/zarr_filters.h), and CMake gives the vol target no
# zarr/ include directory, neither in CMakeLists.txt nor in the generated build. Issue #28.
. "$(dirname "$0")/../lib.sh"
SRC=$H5ZARR_SRC

# The core's internal headers, by file name (zarr/ and its subfolders).
declare -A internal=()
while IFS= read -r h; do internal[$h]=1; done < <(cd "$SRC/zarr" && find . -name '*.h' -printf '%f\n')
[ "${#internal[@]}" -ge 5 ] || fail "found only ${#internal[@]} headers under zarr/ (is H5ZARR_SRC right?)"
[ -n "${internal[kernels.h]:-}" ] || fail "zarr/kernels.h is not among the core's headers"

files=("$SRC"/vol/*.c "$SRC"/vol/*.h "$SRC/plugin/vol_plugin.c" "$SRC/plugin/nczarr_codecs.c")
[ "${#files[@]}" -ge 20 ] || fail "found only ${#files[@]} connector sources"
bad=()
nincl=0
for f in "${files[@]}"; do
    [ -f "$f" ] || fail "missing connector source $f"
    while IFS= read -r line; do
        nincl=$((nincl + 1))
        [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*[\<\"]([^\>\"]+) ]] || continue
        hdr=${BASH_REMATCH[1]}
        base=${hdr##*/}
        rel=${f#"$SRC"/}
        if [ "$base" = blosc.h ]; then
            bad+=("$rel: #include <$hdr> (use h5zarr/zarr_filters.h's zarr_blosc_*)")
        elif [[ $hdr != *..* ]] && [ -f "$SRC/include/$hdr" ]; then
            : # a public header (include/h5zarr/...)
        elif [ -n "${internal[$base]:-}" ] && ! { [ "$hdr" = "$base" ] && [ -f "$(dirname "$f")/$hdr" ]; }; then
            # (a header of the file's own folder of the same name, as vol/config.h, would be fine)
            bad+=("$rel: #include \"$hdr\" is the core's internal zarr/ header")
        fi
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include' "$f")
done
[ "$nincl" -ge 50 ] || fail "read only $nincl #include lines from ${#files[@]} files"
[ "${#bad[@]}" -eq 0 ] || fail "the connector includes core-internal headers or <blosc.h>:$(printf '\n  %s' "${bad[@]}")"
pass "${#files[@]} connector sources, $nincl #include lines: only public core headers, no <blosc.h>"

# CMakeLists.txt: every target_include_directories(h5zarr_vol ...) statement, up to its ')'.
stmts=$(awk '/target_include_directories\(h5zarr_vol[[:space:]]/ {on = 1} on {print} on && /\)/ {on = 0}' \
    "$SRC/CMakeLists.txt")
[ -n "$stmts" ] || fail "no target_include_directories(h5zarr_vol ...) in CMakeLists.txt"
grep -q '/vol"' <<<"$stmts" || fail "the vol include statement does not name vol/: $stmts"
if grep -qE '/zarr("|[[:space:]]|\)|$)' <<<"$stmts"; then
    fail "CMakeLists.txt gives the vol target the zarr/ include dir: $stmts"
fi
pass "CMakeLists.txt: the vol target's include dirs have no zarr/"

# The generated build: the compile lines of the vol target's objects.
ninja=$H5ZARR_BUILD/build.ninja
if [ -f "$ninja" ]; then
    incl=$(awk '/^build CMakeFiles\/h5zarr_vol\.dir\/.*\.o:/ {on = 1; next} /^build / {on = 0} on && /INCLUDES =/' \
        "$ninja")
    n=$(grep -c 'INCLUDES =' <<<"$incl" || true)
    [ "$n" -ge 20 ] || fail "build.ninja: found the include flags of only $n vol objects"
    if grep -qE -- "-I$SRC/zarr([[:space:]]|$)" <<<"$incl"; then
        fail "build.ninja compiles vol objects with -I$SRC/zarr"
    fi
    pass "build.ninja: $n vol objects compiled without -I$SRC/zarr"
else
    echo "skipped: no build.ninja in $H5ZARR_BUILD (not a Ninja build)"
fi
finish
