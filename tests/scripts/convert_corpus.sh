#!/usr/bin/env bash
# h5zarr-convert over the corpora (issue 30, docs/CONVERT.md):
#   (a) every .h5 file HDF5 1.14.5 ships for h5dump, h5diff and h5repack (docs/CORPUS.md), into zarr v3
#       with --verify: each file is converted (and h5diff of the original, read natively, against the
#       store through the connector finds no difference), or refused up front with the reasons listed
#       here and no store, or unreadable (HDF5 itself can't open it: other file drivers, corrupt files)
#       with a clear error and no store;
#   (b) every netCDF reference file of netCDF-C 4.9.3 (docs/NC_CORPUS.md: ref_*.nc, ref_*.cdl made into
#       netCDF-4 originals as nc_corpus.sh does), into zarr v2 with --verify: ncdump through a pointer
#       file equals ncdump of the original (the four _NoFill files masked as in nc_corpus.sh);
#   (c) xarray: open_zarr of the converted CF files (tests/interop/cf) and of the listed reference files
#       is xarray.testing.assert_identical to open_dataset of the original (netCDF4 engine).
# A file that ends otherwise fails the test. Prints the counts.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR H5ZARR_CONFIG
CONV=$H5ZARR_BUILD/bin/h5zarr-convert
POINTER=$H5ZARR_BUILD/tools/h5zarr_pointer
HSRC=${H5ZARR_HDF5_SRC:-$HOME/.cache/h5zarr/deps/src/hdf5}/tools/test
NSRC=${H5ZARR_NETCDF_SRC:-$HOME/.cache/h5zarr/deps/src/netcdf}
[ -d "$HSRC/h5dump/testfiles" ] && [ -f "$NSRC/ncdump/ref_tst_small.cdl" ] || {
    echo "SKIP: no HDF5 or netCDF-C source tree (~/.cache/h5zarr/deps/src)"
    exit 77
}
NC_PLUGINS=${H5ZARR_DEPS:-$HOME/.cache/h5zarr/deps}/netcdf/hdf5/lib/plugin
[ -d "$NC_PLUGINS" ] && export HDF5_PLUGIN_PATH=${HDF5_PLUGIN_PATH:+$HDF5_PLUGIN_PATH:}$NC_PLUGINS
export HDF5_EXTFILE_PREFIX='${ORIGIN}'

# ---- (a) expectations: name = <tool dir>-<file name without .h5>; default: converted
declare -A EXPECT WHY
expect() { # expect OUTCOME PATTERN NAME...: the converter's message must match PATTERN
    local o=$1 r=$2
    shift 2
    for n in "$@"; do EXPECT[$n]=$o WHY[$n]=$r; done
}
expect refused "region references|a region or attribute reference" h5diff-h5diff_dset1 h5diff-h5diff_dset2 \
    h5diff-h5diff_dset3 h5dump-tarray1_big h5dump-tattrreg h5dump-tdatareg h5dump-trefer_compat \
    h5repack-h5repack_objs h5repack-h5repack_refs h5dump-trefer_attr h5dump-trefer_ext2 h5dump-trefer_obj \
    h5dump-trefer_reg h5dump-trefer_reg_1d
expect refused "references inside a compound, array or variable-length type" h5diff-h5diff_comp_vl_strs \
    h5repack-h5repack_attr_refs
expect refused "leads to no object of this file" h5dump-trefer_obj_del
expect refused "a user-defined link \(class 187\)" h5diff-h5diff_types h5dump-tall h5dump-tfcontents1 h5dump-tudlink
expect refused "no zarr codec is known for it" h5diff-tudfilter h5diff-tudfilter2 h5dump-tudfilter \
    h5dump-filter_fail h5repack-h5repack_layout.UD
expect refused "n-bit filter: zarr has no n-bit packing codec" h5dump-tfilters h5repack-h5repack_filters \
    h5repack-h5repack_nbit h5repack-h5repack_nested_8bit_enum_deflated
expect refused "at most 255 bytes" h5dump-tlonglinks
expect refused "cannot be opened|cannot be read" h5dump-err_attr_dspace h5dump-tCVE-2021-37501_attr_decode \
    h5dump-tCVE_2018_11206_fill_new h5dump-tCVE_2018_11206_fill_old h5repack-h5repack_CVE-2018-14460 \
    h5repack-h5repack_CVE-2018-17432
expect unreadable "not an HDF5 or netCDF-4 file, or a damaged one" h5dump-3790_infinite_loop \
    h5dump-test_subfiling_precreate_rank_0 h5dump-test_subfiling_stripe_sizes h5dump-tfamily00000 \
    h5dump-tfamily00001 h5dump-tfamily00002 h5dump-tfamily00003 h5dump-tfamily00004 h5dump-tfamily00005 \
    h5dump-tfamily00006 h5dump-tfamily00007 h5dump-tfamily00008 h5dump-tfamily00009 h5dump-tfamily00010 \
    h5dump-tmulti-b h5dump-tmulti-g h5dump-tmulti-l h5dump-tmulti-o h5dump-tmulti-r h5dump-tmulti-s \
    h5dump-tsplit_file-m h5dump-tsplit_file-r
# sparse datasets of 1-4 GiB that h5diff reads whole (repack_corpus.sh): run with H5ZARR_CORPUS_SLOW=1
SLOW="h5dump-tbigdims h5diff-h5diff_hyper1"

one_h5() { # FILE: prints NAME OUTCOME
    local f=$1 n o rc=0
    n=$(basename "$(dirname "$(dirname "$f")")")-$(basename "$f" .h5)
    o=$OUT/$n
    if [ "${H5ZARR_CORPUS_SLOW:-0}" != 1 ] && [[ " $SLOW " == *" $n "* ]]; then echo "$n slow"; return; fi
    timeout 300 "$CONV" -q --verify "$f" "$o.zarr" >"$o.log" 2>&1 || rc=$?
    if [ $rc = 3 ] || [ $rc = 1 ]; then
        [ -e "$o.zarr" ] && { echo "$n store-left"; return; }
        if [ $rc = 3 ]; then echo "$n refused"; else echo "$n unreadable"; fi
        return
    fi
    [ $rc = 0 ] || { echo "$n failed-$rc"; return; }
    grep -q '"zarr_format": *3' "$o.zarr/zarr.json" 2>/dev/null || { echo "$n not-a-store"; return; }
    rc=0
    timeout 300 h5diff --vol-name-2=zarr "$f" "$o.zarr" >"$o.diff" 2>&1 || rc=$?
    if [ $rc = 0 ]; then echo "$n converted"; else echo "$n h5diff-$rc"; fi
}

# ---- (b) the netCDF corpus (nc_corpus.sh's originals)
declare -A NOFILL=([ncdump-ref_tst_ncf213]="var4 var5" [ncdump-ref_tst_special_atts]="var4"
    [ncdump-ref_tst_special_atts3]="var4" [nc_test4-ref_ncgenF]="var")
NO_ORIGINAL="nc_test4-ref_any ncdump-ref_tst_enum_undef ncdump-ref_tst_vlen_data2 nc_test4-ref_multi nc_test4-ref_nccopyF"
mask() {
    awk -v vars=" $1 " '
        skip { if ($0 ~ /;[ \t]*$/) skip = 0; next }
        /^ +[A-Za-z_][A-Za-z0-9_]* =/ {
            if (index(vars, " " $1 " ")) {
                print " " $1 " = (undefined) ;"
                if ($0 !~ /;[ \t]*$/) skip = 1
                next
            }
        }
        { print }'
}
one_nc() { # FILE: prints NAME OUTCOME
    local f=$1 d n o rc=0 k
    d=$(basename "$(dirname "$f")")
    n=$d-$(basename "${f%.*}")
    o=$OUT/$n
    mkdir -p "$o"
    case $f in
    *.cdl)
        (cd "$o" && timeout 60 ncgen -4 -o orig.nc "$f") >"$o/orig.log" 2>&1 ||
            (cd "$o" && timeout 60 ncgen -3 -o classic.nc "$f" && timeout 60 nccopy -k nc4 classic.nc orig.nc) \
                >>"$o/orig.log" 2>&1 || { echo "$n no-original"; return; }
        ;;
    *.nc)
        k=$(timeout 30 ncdump -k "$f" 2>/dev/null) || { echo "$n no-original"; return; }
        if [ "$k" = netCDF-4 ]; then cp "$f" "$o/orig.nc"; else
            timeout 60 nccopy -k nc4 "$f" "$o/orig.nc" >"$o/orig.log" 2>&1 || { echo "$n no-original"; return; }
        fi
        ;;
    esac
    [ "$(timeout 30 ncdump -k "$o/orig.nc" 2>/dev/null)" = netCDF-4 ] || { echo "$n no-original"; return; }
    timeout 120 ncdump "$o/orig.nc" 2>/dev/null | sed 1d >"$o/d0" || { echo "$n no-original"; return; }
    timeout 300 "$CONV" -q -z 2 --verify "$o/orig.nc" "$o/out.zarr" >"$o/conv.log" 2>&1 || rc=$?
    [ $rc = 0 ] || { echo "$n failed-$rc"; return; }
    grep -q '"zarr_format": *2' "$o/out.zarr/.zgroup" 2>/dev/null || { echo "$n not-a-store"; return; }
    (cd "$o" && "$POINTER" out.nc out.zarr) || { echo "$n no-pointer"; return; }
    (cd "$o" && HDF5_VOL_CONNECTOR=zarr timeout 120 ncdump out.nc 2>dump.log) | sed 1d >"$o/d1"
    if cmp -s "$o/d0" "$o/d1"; then
        echo "$n converted"
    elif [ -n "${NOFILL[$n]:-}" ] && cmp -s <(mask "${NOFILL[$n]}" <"$o/d0") <(mask "${NOFILL[$n]}" <"$o/d1"); then
        echo "$n converted-nofill"
    else
        echo "$n dump-differs"
    fi
}

case ${1:-} in
--h5) one_h5 "$2"; exit 0 ;;
--nc) one_nc "$2"; exit 0 ;;
esac
export OUT=$TMP/out
mkdir -p "$OUT"
ls "$HSRC"/h5dump/testfiles/*.h5 "$HSRC"/h5diff/testfiles/*.h5 "$HSRC"/h5repack/testfiles/*.h5 >"$TMP/h5files"
for d in ncdump nc_test4; do
    for f in "$NSRC/$d"/ref_*.nc "$NSRC/$d"/ref_*.cdl; do
        [[ $f == *.cdl && -e ${f%.cdl}.nc ]] && continue
        echo "$f"
    done
done >"$TMP/ncfiles"
nh=$(wc -l <"$TMP/h5files")
nn=$(wc -l <"$TMP/ncfiles")
[ "$nh" -ge 200 ] && [ "$nn" -ge 80 ] || fail "only $nh HDF5 and $nn netCDF corpus files"
xargs -P "$(nproc)" -I{} bash "$0" --h5 {} <"$TMP/h5files" >"$TMP/h5res" 2>/dev/null || true
xargs -P "$(nproc)" -I{} bash "$0" --nc {} <"$TMP/ncfiles" >"$TMP/ncres" 2>/dev/null || true
[ "$(wc -l <"$TMP/h5res")" = "$nh" ] && [ "$(wc -l <"$TMP/ncres")" = "$nn" ] || fail "results missing"

bad=0
declare -A COUNT
while read -r n got; do
    want=${EXPECT[$n]:-converted}
    [[ " $SLOW " == *" $n "* ]] && [ "$got" = slow ] && want=slow
    COUNT[h5-$got]=$((${COUNT[h5-$got]:-0} + 1))
    if [ "$got" != "$want" ]; then
        echo "UNEXPECTED: $n: $got (expected $want)"
        head -5 "$OUT/$n.log" "$OUT/$n.diff" 2>/dev/null
        bad=$((bad + 1))
    elif [ -n "${WHY[$n]:-}" ] && ! grep -Eq "${WHY[$n]}" "$OUT/$n.log"; then
        echo "UNEXPECTED: $n: $got without the message '${WHY[$n]}':"
        head -5 "$OUT/$n.log"
        bad=$((bad + 1))
    fi
done <"$TMP/h5res"
while read -r n got; do
    want=converted
    [[ " $NO_ORIGINAL " == *" $n "* ]] && want=no-original
    [ -n "${NOFILL[$n]:-}" ] && want=converted-nofill
    COUNT[nc-$got]=$((${COUNT[nc-$got]:-0} + 1))
    if [ "$got" != "$want" ]; then
        echo "UNEXPECTED: $n: $got (expected $want)"
        head -5 "$OUT/$n/conv.log" 2>/dev/null
        [ -f "$OUT/$n/d1" ] && { diff "$OUT/$n/d0" "$OUT/$n/d1" | head -10 || true; }
        bad=$((bad + 1))
    fi
done <"$TMP/ncres"
echo "HDF5 corpus: $nh files: ${COUNT[h5-converted]:-0} converted (h5diff equal), ${COUNT[h5-refused]:-0} refused," \
    "${COUNT[h5-unreadable]:-0} unreadable, ${COUNT[h5-slow]:-0} slow (not run)"
echo "netCDF corpus: $nn files: $((${COUNT[nc-converted]:-0} + ${COUNT[nc-converted-nofill]:-0})) converted" \
    "(ncdump equal; ${COUNT[nc-converted-nofill]:-0} with undefined _NoFill data masked), ${COUNT[nc-no-original]:-0} no-original"
[ $bad = 0 ] || fail "$bad corpus files ended otherwise than listed"
pass "HDF5 tool corpus and netCDF ref_* corpus: every file converted and equal, or refused/unreadable as listed, no store left"

# ---- (c) xarray
pyx() { env -u HDF5_PLUGIN_PATH -u HDF5_VOL_CONNECTOR -u LD_LIBRARY_PATH PYTHONUTF8=1 "$PY" "$@"; }
pyx -c 'import xarray, netCDF4' 2>/dev/null || { echo "skipped (c): python3-xarray / python3-netcdf4 missing"; finish; exit 0; }
args=()
for cdl in "$H5ZARR_SRC"/tests/interop/cf/*.cdl; do
    b=$(basename "$cdl" .cdl)
    ncgen -4 -o "$TMP/$b.nc" "$cdl" || fail "ncgen -4 $b"
    "$CONV" -q -z 2 "$TMP/$b.nc" "$TMP/$b.zarr" || fail "h5zarr-convert $b.nc"
    args+=("$TMP/$b.nc" "$TMP/$b.zarr" strict)
done
# reference files whose original xarray opens and whose zarr form it reads the same; the others differ in
# ways that are the connector's mapping of netCDF to zarr, whichever program wrote the store (docs/CONVERT.md)
for n in nc_test4-ref_bloscx nc_test4-ref_filtered nc_test4-ref_fixedstring nc_test4-ref_ncgenF nc_test4-ref_szip \
    nc_test4-ref_tst_interops4 nc_test4-ref_unfiltered nc_test4-ref_unfilteredvv ncdump-ref_keyword1 \
    ncdump-ref_keyword2 ncdump-ref_null_byte_padding_test ncdump-ref_roman_szip_simple ncdump-ref_test_360_day_1900 \
    ncdump-ref_test_365_day_1900 ncdump-ref_test_366_day_1900 ncdump-ref_test_corrupt_magic \
    ncdump-ref_tst_compounds3 ncdump-ref_tst_enum_data ncdump-ref_tst_group_data ncdump-ref_tst_grp_spec \
    ncdump-ref_tst_irish_rover ncdump-ref_tst_nofilters ncdump-ref_tst_solar_1 ncdump-ref_tst_string_data; do
    args+=("$OUT/$n/orig.nc" "$OUT/$n/out.zarr" dims)
done
pyx - "${args[@]}" <<'PY' || fail "xarray: a converted file differs from its original"
import sys, warnings, xarray as xr
warnings.simplefilter("ignore")
a = sys.argv[1:]
n = 0
for i in range(0, len(a), 3):
    nc, st, mode = a[i:i + 3]
    x = xr.open_dataset(nc).load()
    z = xr.open_zarr(st, consolidated=False).load()
    extra = [v for v in z.variables if v not in x.variables]
    # netCDF dimensions without a coordinate variable are dimension-scale datasets in HDF5 and arrays
    # in zarr (docs/CONVERT.md); the CF files have none
    assert mode == "dims" or not extra, (nc, extra)
    xr.testing.assert_identical(x, z.drop_vars(extra))
    n += 1
print(n, "files identical in xarray")
PY
pass "xarray: $((${#args[@]} / 3)) converted netCDF files (3 CF files, 24 reference files) assert_identical to their originals"
finish
