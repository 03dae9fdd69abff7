#!/usr/bin/env bash
# netCDF corpus (issue 12, docs/NC_CORPUS.md): every netCDF reference file of netCDF-C 4.9.3's ncdump and
# nc_test4 tests (ref_*.nc, and ref_*.cdl where no .nc of that name exists) is made into a netCDF-4
# original (a netCDF-4 .nc as it is; a classic/64-bit .nc with `nccopy -k nc4`; a .cdl with `ncgen -4`, or
# `ncgen -3` + `nccopy -k nc4` when only the classic model accepts it),
# converted into zarr through the connector by a netCDF program (`nccopy -k nc4 orig.nc out.nc` under
# HDF5_VOL_CONNECTOR=zarr and a config rule `[path *.nc] format = zarr`: out.nc becomes a pointer beside
# the store out.nc.zarr) and dumped back by path (`ncdump out.nc`, same environment); the dump must equal
# `ncdump` of the original, the first line (the name) aside. Each file must end as listed:
#   round-trip      converted, a zarr store came out, ncdump prints the same;
#   dump-differs    converted, ncdump differs in a listed way (files in NOFILL: only in the data of the
#                   listed never-written _NoFill variables, whose values are undefined in netCDF);
#   dump-fails      converted, but ncdump of the store fails (listed only as a connector bug);
#   refused         nccopy through the connector fails with a netCDF error (native nccopy succeeds), and
#                   h5repack of the original through the connector shows the connector's message;
#   crashed         nccopy through the connector dies of a signal (listed only as a connector bug);
#   timed-out       nccopy through the connector runs past its timeout (listed only as a connector bug);
#   slow            not run unless H5ZARR_CORPUS_SLOW=1 (a file that takes minutes through the connector);
#   unconvertible   nccopy fails even with a native destination (no connector);
#   no-original     no netCDF-4 original can be made (ncgen -4, or for a classic-only CDL ncgen -3 and
#                   nccopy -k nc4; nccopy -k nc4 of a classic .nc; ncdump of it: one fails natively).
# The filter plugins netCDF installs (bzip2, szip, ...) are on HDF5_PLUGIN_PATH after ours, as in the
# environment `make env` prints, so filtered reference files get an original.
# A file that ends otherwise fails the test; so does a listed file that starts to round-trip (update the
# list and docs/NC_CORPUS.md). Prints the counts.
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR H5ZARR_CONFIG
NC_PLUGINS=${H5ZARR_DEPS:-$HOME/.cache/h5zarr/deps}/netcdf/hdf5/lib/plugin
[ -d "$NC_PLUGINS" ] && export HDF5_PLUGIN_PATH=${HDF5_PLUGIN_PATH:+$HDF5_PLUGIN_PATH:}$NC_PLUGINS
SRC=${H5ZARR_NETCDF_SRC:-$HOME/.cache/h5zarr/deps/src/netcdf}
[ -f "$SRC/ncdump/ref_tst_small.cdl" ] && [ -d "$SRC/nc_test4" ] || {
    echo "SKIP: no netCDF-C source tree at $SRC"
    exit 77
}

# ---- expectations: name = <test dir>-<file name without .nc/.cdl>
declare -A EXPECT REASON
expect() { # expect OUTCOME "REASON" NAME...
    local o=$1 r=$2
    shift 2
    for n in "$@"; do EXPECT[$n]=$o REASON[$n]=$r; done
}
expect no-original "not an ncgen input: the template nc_test4's filter test fills in ('syntax error, unexpected invalid token')" \
    nc_test4-ref_any
expect no-original "not an ncgen input: the expected ncdump of the file ncdump's tst_enum_undef.c makes, an enum variable holding a value no constant names; ncgen -4 rejects it ('Undefined enum constant: _UNDEFINED')" \
    ncdump-ref_tst_enum_undef
expect no-original "ncgen -4 of netCDF-C 4.9.3 rejects it ('Datalist longer than the number of compound fields')" \
    ncdump-ref_tst_vlen_data2
expect no-original "needs filter 40000, the test filter nc_test4 builds for itself (not installed): 'Filter id=40000; filter not available'" \
    nc_test4-ref_multi nc_test4-ref_nccopyF
expect slow "2000 variables on one dimension: nccopy takes 1.2 s natively and about 90 s through the connector (not run unless H5ZARR_CORPUS_SLOW=1; with it the file round-trips). HDF5 1.14.5's H5DSattach_scale, for files that are not native, reopens every earlier reference of the scale on each attach and never closes them (hl/src/H5DS.c:588): 2000 attaches make about 2 million object opens and ids. The connector made it worse (a new file id per H5Iget_file_id: more than 15 minutes); it now hands out one per store (docs/NC_CORPUS.md)" \
    nc_test4-ref_hdf5_compat1
SLOW="nc_test4-ref_hdf5_compat1"
# never-written variables with _NoFill = "true": their values are undefined (native HDF5 hands back
# whatever bytes the reading program's buffer held, and differs from one ncdump to the next); compared
# with their data masked
declare -A NOFILL=([ncdump-ref_tst_ncf213]="var4 var5" [ncdump-ref_tst_special_atts]="var4"
    [ncdump-ref_tst_special_atts3]="var4" [nc_test4-ref_ncgenF]="var")
expect dump-differs "never-written _NoFill variables: undefined values, different in every ncdump of the original too (compared masked: equal otherwise; ref_ncgenF's is bzip2 + szip, stored as numcodecs.bz2 + hdf5_szip)" \
    ncdump-ref_tst_ncf213 ncdump-ref_tst_special_atts ncdump-ref_tst_special_atts3 nc_test4-ref_ncgenF
# mask VARS: replace the data of the named variables in an ncdump listing by "(undefined)"
mask() {
    awk -v vars=" $1 " '
        skip { if ($0 ~ /;[ \t]*$/) skip = 0; next }
        /^ +[A-Za-z_][A-Za-z0-9_]* =/ { # a variable in a group is indented further
            if (index(vars, " " $1 " ")) {
                print " " $1 " = (undefined) ;"
                if ($0 !~ /;[ \t]*$/) skip = 1
                next
            }
        }
        { print }'
}

# ---- one file: prints "NAME OUTCOME"
one() {
    local f=$1 d n o rc
    d=$(basename "$(dirname "$f")")
    n=$d-$(basename "${f%.*}")
    o=$NCC_OUT/$n
    if [ "${H5ZARR_CORPUS_SLOW:-0}" != 1 ] && [[ " $SLOW " == *" $n "* ]]; then
        echo "$n slow"
        return
    fi
    mkdir -p "$o"
    # the netCDF-4 original, made and dumped without the connector
    case $f in
    *.cdl)
        # a classic-model CDL that ncgen -4 rejects (netCDF-4 keywords as names): ncgen -3, then nccopy -k nc4
        (cd "$o" && timeout 60 ncgen -4 -o orig.nc "$f") >"$o/orig.log" 2>&1 ||
            { (cd "$o" && timeout 60 ncgen -3 -o classic.nc "$f" && timeout 60 nccopy -k nc4 classic.nc orig.nc) >>"$o/orig.log" 2>&1 &&
                echo "made with ncgen -3 + nccopy -k nc4" >>"$o/orig.log"; } ||
            { echo "$n no-original"; return; }
        ;;
    *.nc)
        local k
        k=$(timeout 30 ncdump -k "$f" 2>"$o/orig.log") || { echo "$n no-original"; return; }
        case $k in
        netCDF-4) cp "$f" "$o/orig.nc" ;;
        *) timeout 60 nccopy -k nc4 "$f" "$o/orig.nc" >>"$o/orig.log" 2>&1 || { echo "$n no-original"; return; } ;;
        esac
        ;;
    esac
    [ "$(timeout 30 ncdump -k "$o/orig.nc" 2>/dev/null)" = netCDF-4 ] || { echo "$n no-original"; return; }
    timeout 120 ncdump "$o/orig.nc" >"$o/d0.full" 2>>"$o/orig.log" || { echo "$n no-original"; return; }
    sed 1d "$o/d0.full" >"$o/d0"
    # through the connector: out.nc is a pointer, out.nc.zarr the store
    rc=0
    (cd "$o" && HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$NCC_RULES timeout 120 nccopy -k nc4 orig.nc out.nc) \
        >"$o/copy.log" 2>&1 || rc=$?
    if [ $rc != 0 ]; then
        echo "exit $rc" >>"$o/copy.log"
        if [ $rc = 124 ] || [ $rc = 137 ]; then
            echo "$n timed-out"
        elif [ $rc -gt 128 ]; then
            echo "$n crashed"
        elif (cd "$o" && timeout 120 nccopy -k nc4 orig.nc native.nc) >/dev/null 2>&1; then
            # netCDF prints only its error code ("NetCDF: HDF error"); the connector's message is on the
            # HDF5 error stack netCDF keeps quiet: h5repack through the connector shows it
            (cd "$o" && HDF5_VOL_CONNECTOR=zarr timeout 120 h5repack --enable-error-stack orig.nc why.zarr) \
                >"$o/why.log" 2>&1 || true
            echo "$n refused"
        else
            echo "$n unconvertible"
        fi
        return
    fi
    if ! tail -c 512 "$o/out.nc" 2>/dev/null | head -n 1 | grep -qx 'h5zarr pointer v2' ||
        ! grep -q '"zarr_format": *3' "$o/out.nc.zarr/zarr.json" 2>/dev/null; then
        echo "$n not-a-store"
        return
    fi
    rc=0
    (cd "$o" && HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$NCC_RULES timeout 120 ncdump out.nc) \
        >"$o/d1.full" 2>"$o/dump.log" || rc=$?
    if [ $rc != 0 ]; then
        echo "exit $rc" >>"$o/dump.log"
        echo "$n dump-fails"
        return
    fi
    sed 1d "$o/d1.full" >"$o/d1"
    if cmp -s "$o/d0" "$o/d1"; then
        echo "$n round-trip"
    elif [ -z "${NOFILL[$n]:-}" ]; then
        echo "$n dump-differs"
    elif cmp -s <(mask "${NOFILL[$n]}" <"$o/d0") <(mask "${NOFILL[$n]}" <"$o/d1"); then
        echo "$n dump-differs"
    else
        echo "$n dump-differs-more" # beyond the undefined data of its _NoFill variables
    fi
}

if [ "${1:-}" = --one ]; then
    one "$2"
    exit 0
fi

# the corpus: every ref_*.nc, and every ref_*.cdl without a .nc of the same name, of both test folders
for d in ncdump nc_test4; do
    for f in "$SRC/$d"/ref_*.nc "$SRC/$d"/ref_*.cdl; do
        [[ $f == *.cdl && -e ${f%.cdl}.nc ]] && continue
        echo "$f"
    done
done >"$TMP/files"
total=$(wc -l <"$TMP/files")
[ "$total" -ge 80 ] || fail "only $total reference files found under $SRC"

printf '# new *.nc paths are zarr stores (a pointer file at the name)\n[path *.nc]\nformat = zarr\n' >"$TMP/rules.conf"
export NCC_RULES=$TMP/rules.conf NCC_OUT=$TMP/out
mkdir -p "$NCC_OUT"
# the connector must load: a netCDF-4 conversion makes a pointer + zarr store
ncgen -4 -o "$TMP/probe_in.nc" "$SRC/ncdump/ref_tst_small.cdl" || fail "ncgen -4 (native)"
(cd "$TMP" && HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$NCC_RULES nccopy -k nc4 probe_in.nc probe.nc) ||
    fail "nccopy through the connector"
grep -q '"zarr_format": *3' "$TMP/probe.nc.zarr/zarr.json" || fail "nccopy through the connector made no zarr store"

xargs -P "$(nproc)" -I{} bash "$0" --one {} <"$TMP/files" >"$TMP/results" 2>/dev/null || true
# H5ZARR_NCC_KEEP=<dir>: keep each file's originals, stores, logs and dumps there (and the results)
if [ -n "${H5ZARR_NCC_KEEP:-}" ]; then
    rm -rf "$H5ZARR_NCC_KEEP"
    cp -r "$NCC_OUT" "$H5ZARR_NCC_KEEP"
    sort "$TMP/results" >"$H5ZARR_NCC_KEEP/results"
fi
[ "$(wc -l <"$TMP/results")" = "$total" ] || fail "$(wc -l <"$TMP/results") results for $total files"

bad=0
declare -A COUNT
while read -r n got; do
    want=${EXPECT[$n]:-round-trip}
    # a slow file run on request must round-trip
    [ "$want" = slow ] && [ "${H5ZARR_CORPUS_SLOW:-0}" = 1 ] && want=round-trip
    COUNT[$got]=$((${COUNT[$got]:-0} + 1))
    if [ "$got" != "$want" ]; then
        echo "UNEXPECTED: $n: $got (expected $want${REASON[$n]:+: ${REASON[$n]}})"
        for l in orig.log copy.log dump.log; do
            [ -s "$NCC_OUT/$n/$l" ] && grep -m4 -E 'h5zv|h5zarr|NetCDF|rror|exit' "$NCC_OUT/$n/$l" || true
        done
        [ -f "$NCC_OUT/$n/d1" ] && { diff "$NCC_OUT/$n/d0" "$NCC_OUT/$n/d1" | head -10 || true; }
        bad=$((bad + 1))
    fi
done <"$TMP/results"

# refusals must say why: a netCDF error from nccopy and the connector's message on the HDF5 stack
while read -r n got; do
    [ "$got" = refused ] || continue
    grep -q 'NetCDF: ' "$NCC_OUT/$n/copy.log" || fail "$n: refused without a netCDF error"
    grep -q 'h5zarr-DIAG' "$NCC_OUT/$n/why.log" ||
        fail "$n: refused without a message from the connector (h5repack of the original)"
done <"$TMP/results"

line="nc corpus: $total files:"
for k in round-trip dump-differs dump-differs-more dump-fails refused crashed timed-out unconvertible no-original not-a-store slow; do
    [ "${COUNT[$k]:-0}" = 0 ] || line="$line ${COUNT[$k]} $k,"
done
echo "${line%,}"
[ $bad = 0 ] || fail "$bad files ended otherwise than listed"
pass "netCDF corpus of $total ref_* files: every file ends as listed (docs/NC_CORPUS.md)"
finish
