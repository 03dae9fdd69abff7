#!/usr/bin/env bash
# NCZarr and the zarr connector in one environment: HDF5_PLUGIN_PATH = our plugin folder (the connector,
# libh5zarr_vol.so, and our filters) + netCDF's filter folder, as `make env` sets it.
#  - A control: a VOL plugin without an NCZarr codec table on that path makes NCZarr fail (the problem
#    the table solves), so the checks below do test the connector's NCZ_codec_info_defaults.
#  (a) ncgen -4 and nccopy write NCZarr stores (file://...#mode=zarr,file), unfiltered and with netCDF's
#      zlib+shuffle and zstd; ncdump shows the right values.
#  (b) In the same environment, HDF5_VOL_CONNECTOR=zarr runs an unmodified HDF5 program into a v3 and a
#      v2 store; h5dump shows the values, and ncdump reads the v2 one.
#  (c) The connector's codec table: NCZarr variables with HDF5's lz4 filter (32004; ncgen _Filter and
#      nccopy -F) are stored as h5zarr's hdf5_lz4 codec, compressed, read back by ncdump, and read with
#      equal values by the core (zarrcore) and the connector (h5dump, which reports filter 32004); an
#      hdf5_lz4 array the core writes is read by ncdump.
. "$(dirname "$0")/../lib.sh"
[ -n "${H5ZARR_DEPS:-}" ] && [ -x "$H5ZARR_DEPS/netcdf/bin/ncdump" ] ||
    { echo "SKIP: no netCDF build in the deps prefix (H5ZARR_DEPS=${H5ZARR_DEPS:-})"; exit 77; }
OURS=$H5ZARR_PLUGIN_DIR
THEIRS=$H5ZARR_DEPS/netcdf/hdf5/lib/plugin
ZC=$H5ZARR_BUILD/tools/zarrcore
[ -f "$OURS/libh5zarr_vol.so" ] && [ -f "$OURS/libh5zarr_lz4.so" ] || fail "no connector/lz4 plugin in $OURS"
[ -f "$THEIRS/lib__nczhdf5filters.so" ] || fail "netCDF's NCZarr filter plugins missing in $THEIRS"
[ -x "$ZC" ] || fail "no $ZC"
export LD_LIBRARY_PATH="$H5ZARR_DEPS/netcdf/lib:$H5ZARR_DEPS/hdf5/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HDF5_PLUGIN_PATH="$OURS:$THEIRS"
unset HDF5_VOL_CONNECTOR
cd "$TMP"
url() { echo "file://$TMP/$1#mode=zarr,file"; }
# vals URL VAR: VAR's values as ncdump prints them, comma-separated, no blanks
vals() { ncdump -v "$2" "$1" | tr -d ' \n\t' | sed -n "s/.*data:$2=\(.*\);}\$/\1/p"; }
# h5vals STORE DSET: the dataset's values through the connector, comma-separated
h5vals() {
    HDF5_VOL_CONNECTOR=zarr h5dump -d "$2" -y -w 0 -A 0 "$1" | sed -n '/DATA {/,/}/p' | sed '1d;$d' | tr -d ' \n'
}
# zvals STORE PATH: the array's values through the core
zvals() { "$ZC" dump "$1" "$2" | sed -n 's/.*"data":\[\(.*\)\]}$/\1/p'; }

# 2000 compressible int32 values in chunks of 500.
N=2000
expect=$(seq 0 $((N - 1)) | awk '{printf "%s%d", (NR>1?",":""), int($1/3) - 300}')
{
    echo "netcdf t { dimensions: x = $N ; variables:"
    echo '  int plain(x) ; plain:_ChunkSizes = 500 ;'
    echo '  int zl(x) ; zl:_ChunkSizes = 500 ; zl:_DeflateLevel = 2 ; zl:_Shuffle = "true" ;'
    echo '  int zs(x) ; zs:_ChunkSizes = 500 ; zs:_Filter = "32015,3" ;'
    echo '  int l4(x) ; l4:_ChunkSizes = 500 ; l4:_Filter = "32004,0" ;'
    echo "data: plain = $expect ; zl = $expect ; zs = $expect ; l4 = $expect ; }"
} >t.cdl

# ---- control: a VOL plugin without the codec table breaks NCZarr on this path ----
mkdir stub
printf 'int H5PLget_plugin_type(void) { return 1; }\nconst void *H5PLget_plugin_info(void) { static int x; return &x; }\n' >stub.c
cc -shared -fPIC -o stub/libstub_vol.so stub.c || fail "can't build the stub VOL plugin"
if HDF5_PLUGIN_PATH="$TMP/stub:$THEIRS" ncgen -4 -o "$(url stub.zarr)" t.cdl 2>stub.err; then
    fail "NCZarr accepted a VOL plugin without a codec table: the control does not reproduce the problem"
fi
pass "control: a VOL plugin without an NCZarr codec table on HDF5_PLUGIN_PATH makes ncgen fail ($(head -n 1 stub.err))"
syms=$(nm -D --defined-only "$OURS/libh5zarr_vol.so")
grep -q ' NCZ_codec_info_defaults$' <<<"$syms" || fail "libh5zarr_vol.so does not export NCZ_codec_info_defaults"

# ---- (a) ncgen -4 and nccopy into NCZarr stores ----
ncgen -4 -o "$(url g.zarr)" t.cdl 2>err || fail "ncgen -4 into an NCZarr store with the connector on the path: $(cat err)"
[ -f g.zarr/.zgroup ] && [ -f g.zarr/plain/.zarray ] || fail "ncgen made no zarr v2 store"
for v in plain zl zs; do
    [ "$(vals "$(url g.zarr)" $v)" = "$expect" ] || fail "ncdump of the ncgen store: $v has other values"
done
grep -q '"zlib"' g.zarr/zl/.zarray && grep -q '"zstd"' g.zarr/zs/.zarray || fail "netCDF's codecs not in the .zarray files"
pass "ncgen -4 wrote an NCZarr store (plain, zlib+shuffle, zstd) with the connector on the path; ncdump: $N equal values each"

ncgen -k nc4 -o src.nc t.cdl || fail "ncgen -k nc4"
nccopy -F "plain,32004,65536" src.nc "$(url c.zarr)" 2>err || fail "nccopy into an NCZarr store: $(cat err)"
for v in plain zl zs l4; do
    [ "$(vals "$(url c.zarr)" $v)" = "$expect" ] || fail "ncdump of the nccopy store: $v has other values"
done
pass "nccopy wrote an NCZarr store from a netCDF-4 file; ncdump: equal values in all four variables"

# ---- (b) the connector in the same environment ----
HDF5_VOL_CONNECTOR=zarr "$EXAMPLES/write_field" f3.zarr >/dev/null || fail "write_field through the connector (v3)"
HDF5_VOL_CONNECTOR="zarr version=2" "$EXAMPLES/write_field" f2.zarr >/dev/null || fail "write_field through the connector (v2)"
[ -f f3.zarr/zarr.json ] && [ -f f2.zarr/.zgroup ] || fail "write_field made no zarr v3/v2 stores"
for s in f3.zarr f2.zarr; do
    t=$(h5vals $s /model/temperature)
    [ "$(tr ',' '\n' <<<"$t" | wc -l)" -eq 70 ] || fail "h5dump of $s: not 70 values: $t"
    [ "$(cut -d, -f1 <<<"$t")" = 273.15 ] && [ "$(cut -d, -f70 <<<"$t")" = 285.15 ] && [ "$(cut -d, -f8 <<<"$t")" = 274.65 ] ||
        fail "h5dump of $s shows other values: $t"
done
nt=$(ncdump -v temperature "$(url f2.zarr)" | tr -d ' \n\t' | sed -n 's/.*temperature=\(.*\);}\/\/groupmodel.*/\1/p')
[ "$nt" = "$(h5vals f2.zarr /model/temperature)" ] || fail "ncdump of the connector's v2 store: '$nt'"
pass "same environment: the connector writes v3 and v2 stores (h5dump: 70 right values), ncdump reads the v2 one"

# ---- (c) HDF5's lz4 filter through the connector's codec table ----
for s in g.zarr:l4 c.zarr:l4 c.zarr:plain; do
    st=${s%%:*} v=${s#*:}
    grep -q '"id": "hdf5_lz4"' "$st/$v/.zarray" || fail "$st/$v is not stored with hdf5_lz4: $(cat "$st/$v/.zarray")"
    raw=$(($(sed -n 's/.*"chunks": \[\([0-9]*\)\].*/\1/p' "$st/$v/.zarray") * 4)) size=$(stat -c %s "$st/$v/0")
    [ "$raw" -gt 0 ] && [ "$size" -lt $((raw / 2)) ] || fail "$st/$v/0 is not compressed ($size bytes for $raw)"
    [ "$(vals "$(url "$st")" $v)" = "$expect" ] || fail "ncdump of $st: $v has other values"
    [ "$(zvals "$st" $v)" = "$expect" ] || fail "the core reads other values from $st/$v: $(zvals "$st" $v | head -c 200)"
    [ "$(h5vals "$st" /$v)" = "$expect" ] || fail "the connector reads other values from $st/$v"
    hdr=$(HDF5_VOL_CONNECTOR=zarr h5dump -p -H -d /$v "$st")
    grep -q 'FILTER_ID 32004' <<<"$hdr" || fail "h5dump -p of $st/$v: no filter 32004"
done
grep -q '"blocksize": 0' g.zarr/l4/.zarray && grep -q '"blocksize": 65536' c.zarr/plain/.zarray ||
    fail "the blocksize parameter did not reach the codec JSON"
[ "$(ncdump -s -h "$(url c.zarr)" | sed -n 's/.*plain:_Filter = "\(.*\)" ;/\1/p')" = "32004,65536" ] ||
    fail "ncdump -s does not show plain's filter as 32004,65536"
pass "NCZarr writes HDF5 lz4 (32004) as hdf5_lz4 (ncgen _Filter, nccopy -F; compressed chunks); ncdump, the core and the connector (filter 32004) read equal values"

# The other way: the core writes an hdf5_lz4 v2 array, NCZarr reads it.
"$ZC" group core.zarr / 2 || fail "zarrcore group"
cat >meta.json <<EOF
{".zarray": {"zarr_format": 2, "shape": [$N], "chunks": [500], "dtype": "<i4", "fill_value": 0, "order": "C",
 "compressor": {"id": "hdf5_lz4", "blocksize": 4096}, "filters": null}, ".zattrs": {"_ARRAY_DIMENSIONS": ["n"]}}
EOF
echo "[$expect]" >data.json
"$ZC" write core.zarr q meta.json data.json || fail "zarrcore write"
[ "$(stat -c %s core.zarr/q/0)" -lt 1000 ] || fail "the core's hdf5_lz4 chunk is not compressed"
[ "$(vals "$(url core.zarr)" q)" = "$expect" ] || fail "ncdump reads other values from the core's hdf5_lz4 array"
[ "$(ncdump -s -h "$(url core.zarr)" | sed -n 's/.*q:_Filter = "\(.*\)" ;/\1/p')" = "32004,4096" ] ||
    fail "ncdump -s does not show the core's array as filter 32004,4096"
pass "ncdump reads the core's hdf5_lz4 array (blocksize 4096) as filter 32004 with equal values"
finish
