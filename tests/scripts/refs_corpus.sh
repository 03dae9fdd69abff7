#!/usr/bin/env bash
# Reference files for the netCDF corpus (issue 30, docs/NC_CORPUS.md) and the CF files: every netCDF-4
# original nc_corpus.sh makes (ref_*.nc and ref_*.cdl of netCDF-C's ncdump and nc_test4) and
# tests/interop/cf/*.cdl (ncgen -4) is indexed with the reference writer ($REFS: `h5zarr-refs`, the same
# code as `h5zarr-convert --refs`), then read
#   - by xarray through fsspec's ReferenceFileSystem (Debian's fsspec, zarr 2.13): every variable's
#     dimensions, values and attributes as xarray reads the original (tests/interop/refs_compare.py);
#   - through the connector: every array of the references dumped by `h5dump -d VAR -b` from the
#     reference file (HDF5_VOL_CONNECTOR=zarr) must be byte for byte the dump of the original.
# Files the writer can't express whole (exit 3: vlen strings in chunks, filters numcodecs lacks) are
# listed with the reason, and checked for the variables they hold. Expected outcomes are below; a file
# that ends otherwise fails the test.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR H5ZARR_CONFIG
REFS=${H5ZARR_REFS:-$H5ZARR_BUILD/tools/h5zarr-refs}
NC_PLUGINS=${H5ZARR_DEPS:-$HOME/.cache/h5zarr/deps}/netcdf/hdf5/lib/plugin
[ -d "$NC_PLUGINS" ] && export HDF5_PLUGIN_PATH=${HDF5_PLUGIN_PATH:+$HDF5_PLUGIN_PATH:}$NC_PLUGINS
SRC=${H5ZARR_NETCDF_SRC:-$HOME/.cache/h5zarr/deps/src/netcdf}
[ -f "$SRC/ncdump/ref_tst_small.cdl" ] && [ -d "$SRC/nc_test4" ] || { echo "SKIP: no netCDF-C source tree at $SRC"; exit 77; }
command -v ncgen >/dev/null && command -v h5dump >/dev/null || { echo "SKIP: no ncgen/h5dump on PATH"; exit 77; }
$PY -c 'import fsspec' 2>/dev/null || { echo "SKIP: no fsspec for $PY (Debian python3-fsspec)"; exit 77; }

# ---- expectations (name = <dir>-<file without .nc/.cdl>): xarray outcome of files that don't compare
declare -A XEXPECT
xexpect() { local o=$1; shift; for n in "$@"; do XEXPECT[$n]=$o; done; }
. "$(dirname "$0")/refs_corpus.expect"

# never-written _NoFill variables (nc_corpus.sh's NOFILL): undefined values, different in every read
declare -A NOFILL=([ncdump-ref_tst_ncf213]="var4 var5" [ncdump-ref_tst_special_atts]="var4"
    [ncdump-ref_tst_special_atts3]="var4" [nc_test4-ref_ncgenF]="var")

# ---- the originals
W=$TMP/w
mkdir -p "$W"
origs=()
make_orig() { # SRCFILE NAME
    local f=$1 o=$W/$2
    mkdir -p "$o"
    case $f in
    *.cdl) (cd "$o" && timeout 60 ncgen -4 -o orig.nc "$f") >/dev/null 2>&1 || return 1 ;;
    *) case $(timeout 30 ncdump -k "$f" 2>/dev/null) in
        netCDF-4) cp "$f" "$o/orig.nc" ;;
        *) timeout 60 nccopy -k nc4 "$f" "$o/orig.nc" >/dev/null 2>&1 || return 1 ;;
        esac ;;
    esac
    [ "$(timeout 30 ncdump -k "$o/orig.nc" 2>/dev/null)" = netCDF-4 ]
}
for d in ncdump nc_test4; do
    for f in "$SRC/$d"/ref_*.nc "$SRC/$d"/ref_*.cdl; do
        [ -f "$f" ] || continue
        b=$(basename "${f%.*}")
        [[ $f == *.cdl && -f $SRC/$d/$b.nc ]] && continue
        make_orig "$f" "$d-$b" && origs+=("$d-$b")
    done
done
for f in "$INTEROP"/cf/*.cdl; do
    b=$(basename "${f%.cdl}")
    make_orig "$f" "cf-$b" && origs+=("cf-$b")
done
[ ${#origs[@]} -gt 20 ] || fail "only ${#origs[@]} originals made"

# ---- references, and the connector's view of them
pairs=()
nleft=0 nh5=0
for n in "${origs[@]}"; do
    o=$W/$n
    rc=0
    (cd "$o" && "$REFS" --quiet orig.nc refs.json) 2>"$o/refs.log" || rc=$?
    case $rc in
    0) ;;
    3) nleft=$((nleft + 1)); sed "s/^/  $n: /" "$o/refs.log" ;;
    *) cat "$o/refs.log"; fail "$n: the reference writer failed (exit $rc)" ;;
    esac
    [ -f "$o/refs.json" ] || fail "$n: no reference file"
    pairs+=("$o/orig.nc" "$o/refs.json")
    # every array of the references (but never-written _NoFill ones), dumped raw in one h5dump through
    # the connector and one natively
    arrays=()
    for a in $($PY -c 'import json,sys; r=json.load(open(sys.argv[1]))["refs"]; print(" ".join(k[:-8] for k in r if k.endswith("/.zarray")))' "$o/refs.json"); do
        [[ " ${NOFILL[$n]:-} " == *" $a "* ]] || arrays+=(-d "/$a")
    done
    [ ${#arrays[@]} -gt 0 ] || continue
    if ! (cd "$o" && timeout 120 h5dump "${arrays[@]}" -b LE -o native.bin orig.nc >/dev/null 2>&1 &&
        HDF5_VOL_CONNECTOR=zarr timeout 120 h5dump "${arrays[@]}" -b LE -o conn.bin refs.json >/dev/null 2>&1 &&
        cmp -s native.bin conn.bin); then
        # array by array: enums are referenced as their base type (zarr v2 has no enum), and h5dump -b
        # of an enum is not the integers' bytes; an array native h5dump can't read is not compared
        for ((i = 1; i < ${#arrays[@]}; i += 2)); do
            a=${arrays[$i]}
            (cd "$o" && timeout 60 h5dump -H -d "$a" orig.nc 2>/dev/null | grep -q H5T_ENUM) && continue
            (cd "$o" && rm -f native.bin conn.bin && timeout 60 h5dump -d "$a" -b LE -o native.bin orig.nc >/dev/null 2>&1) || continue
            (cd "$o" && HDF5_VOL_CONNECTOR=zarr timeout 60 h5dump -d "$a" -b LE -o conn.bin refs.json >"$o/h5dump.log" 2>&1) ||
                { cat "$o/h5dump.log"; fail "$n: h5dump of $a through the connector failed"; }
            cmp -s "$o/native.bin" "$o/conn.bin" || fail "$n: $a through the connector differs from the original"
        done
    fi
    nh5=$((nh5 + ${#arrays[@]} / 2))
    rm -f "$o/native.bin" "$o/conn.bin"
done
pass "${#origs[@]} files indexed ($nleft with objects left out, listed), $nh5 arrays read through the connector byte for byte as h5dump reads the originals"

# ---- xarray through fsspec
$PY "$INTEROP/refs_compare.py" "${pairs[@]}" >"$W/xarray.txt" 2>"$W/xarray.err" || true
bad=0 same=0 noxr=0
while read -r path outcome rest; do
    n=$(basename "$(dirname "$path")")
    want=${XEXPECT[$n]:-identical}
    if [ "$outcome" = no-xarray: ]; then
        noxr=$((noxr + 1)) # xarray can't read the original itself: nothing to compare
    elif [ "$outcome" = identical ]; then
        same=$((same + 1))
        [ "$want" = identical ] || { echo "FAIL: $n now reads identical: update refs_corpus.expect"; bad=1; }
    elif [ "${outcome%:}" != "$want" ]; then
        echo "FAIL: $n: $outcome $rest"
        bad=1
    fi
done <"$W/xarray.txt"
[ "$(wc -l <"$W/xarray.txt")" -eq "${#origs[@]}" ] || { cat "$W/xarray.err"; fail "refs_compare.py did not report every file"; }
[ $bad = 0 ] || fail "xarray reads of the references differ from the originals (above)"
pass "$same files read identical in xarray through fsspec; $noxr originals xarray can't read; the others as refs_corpus.expect lists"
finish
