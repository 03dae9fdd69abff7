#!/usr/bin/env bash
# The filter plugins against netCDF's own HDF5 filter plugins (a separate build of blosc and zstd), and
# the filters the connector reports for stores written by zarr-python.
#  - A native .h5 written through our blosc/zstd plugins (h5repack, HDF5_PLUGIN_PATH = our folder only)
#    reads through netCDF's plugins (HDF5_PLUGIN_PATH = netCDF's folder only) with h5dump and ncdump, and
#    the reverse; the values equal the unfiltered file's.
#  - zarr-python 2.13 stores (shuffle + zlib, blosc bitshuffle, zstd) opened through the connector:
#    h5dump -p shows the equivalent HDF5 filters and the data.
. "$(dirname "$0")/../lib.sh"
: "${H5ZARR_DEPS:?H5ZARR_DEPS unset}"
OURS=$H5ZARR_PLUGIN_DIR
THEIRS=$H5ZARR_DEPS/netcdf/hdf5/lib/plugin
export LD_LIBRARY_PATH="$H5ZARR_DEPS/netcdf/lib:$H5ZARR_DEPS/hdf5/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -f "$THEIRS/lib__nch5blosc.so" ] && [ -f "$THEIRS/lib__nch5zstd.so" ] || fail "netCDF's blosc/zstd plugins missing in $THEIRS"

# The unfiltered source: 4000 int32 in chunks of 1000, compressible, via ncgen (a netCDF-4/HDF5 file).
{
    echo 'netcdf t { dimensions: x = 4000 ; variables: int v(x) ; v:_ChunkSizes = 1000 ; data: v = '
    seq 0 3999 | awk '{printf "%s%d", (NR>1?",":""), int($1/3) - 500}'
    echo ' ; }'
} >"$TMP/t.cdl"
ncgen -k nc4 -o "$TMP/plain.h5" "$TMP/t.cdl" || fail "ncgen"
h5dump -d v -y -w 0 -A 0 "$TMP/plain.h5" | sed -n '/DATA {/,/}/p' >"$TMP/plain.vals" || fail "h5dump plain"
[ "$(grep -c -- '-500' "$TMP/plain.vals")" -ge 1 ] || fail "unexpected plain values"

# values NAME FILE PLUGIN_DIR: h5dump's data section through the given plugin folder only
values() { HDF5_PLUGIN_PATH=$3 h5dump -d v -y -w 0 -A 0 "$2" | sed -n '/DATA {/,/}/p' >"$TMP/$1.vals"; }

for spec in "blosc:32001,0,7,0,0,0,0,5,1,1" "blosc-zstd-bit:32001,0,7,0,0,0,0,7,2,5" \
    "blosc-blosclz:32001,0,7,0,0,0,0,5,1,0" "zstd:32015,0,1,3" "zstd-neg:32015,0,1,4294967295" \
    "zstd-19:32015,0,1,19"; do
    name=${spec%%:*}
    ud=${spec#*:}
    id=${ud%%,*}
    for writer in ours theirs; do
        [ $writer = ours ] && wdir=$OURS rdir=$THEIRS || { wdir=$THEIRS; rdir=$OURS; }
        reader=$([ $writer = ours ] && echo theirs || echo ours)
        f="$TMP/$name.$writer.h5"
        HDF5_PLUGIN_PATH=$wdir h5repack -f "v:UD=$ud" "$TMP/plain.h5" "$f" || fail "$name: h5repack through $writer"
        HDF5_PLUGIN_PATH=$rdir h5dump -p -H -d v "$f" | grep -q "FILTER_ID $id" || fail "$name: $f has no filter $id"
        size=$(HDF5_PLUGIN_PATH=$rdir h5dump -p -H -d v "$f" | sed -n 's/.*SIZE \([0-9]*\).*/\1/p')
        [ "$size" -lt 16000 ] || fail "$name: $writer's file is not compressed ($size bytes)"
        values "$name.$writer" "$f" "$rdir" || fail "$name: h5dump through $reader's plugin can't read $writer's file"
        cmp -s "$TMP/plain.vals" "$TMP/$name.$writer.vals" || fail "$name: $reader reads other values from $writer's file"
        HDF5_PLUGIN_PATH=$rdir ncdump -v v "$f" | tr -d ' ,;\n' | grep -q -- '-500-500-500-499' ||
            fail "$name: ncdump through $reader's plugin can't read $writer's file"
        pass "$name: written through $writer's plugin, read through $reader's (h5dump, ncdump): equal values"
    done
done

# Incompressible data through our blosc (netCDF's blosc refuses to write it; reading ours works).
$PY - "$TMP/rand.cdl" <<'PY' || fail "random cdl"
import random, sys
random.seed(7)
vals = ",".join(str(random.randint(-2**31, 2**31 - 1)) for _ in range(4000))
open(sys.argv[1], "w").write("netcdf t { dimensions: x = 4000 ; variables: int v(x) ; v:_ChunkSizes = 1000 ; data: v = %s ; }" % vals)
PY
ncgen -k nc4 -o "$TMP/rand.h5" "$TMP/rand.cdl" || fail "ncgen random"
values rand "$TMP/rand.h5" "$OURS"
HDF5_PLUGIN_PATH=$OURS h5repack -f "v:UD=32001,0,7,0,0,0,0,5,1,1" "$TMP/rand.h5" "$TMP/rand.blosc.h5" ||
    fail "our blosc failed on incompressible data"
values rand.theirs "$TMP/rand.blosc.h5" "$THEIRS"
cmp -s "$TMP/rand.vals" "$TMP/rand.theirs.vals" || fail "incompressible blosc chunks differ through netCDF's plugin"
pass "incompressible data: our blosc stores it, netCDF's blosc reads it back"

# zarr-python 2.13 stores opened through the connector report the equivalent filters.
$PY - "$TMP/zp.zarr" <<'PY' || fail "zarr-python store"
import sys, numpy as np, zarr
from numcodecs import Blosc, Zlib, Shuffle, Zstd
g = zarr.open_group(sys.argv[1], mode="w")
x = (np.arange(4000, dtype="<i4") // 3) - 500
g.create_dataset("sz", data=x, chunks=(1000,), compressor=Zlib(level=3), filters=[Shuffle(elementsize=4)])
g.create_dataset("bl", data=x, chunks=(1000,), compressor=Blosc(cname="lz4", clevel=5, shuffle=Blosc.BITSHUFFLE))
g.create_dataset("zs", data=x, chunks=(1000,), compressor=Zstd(level=-3))
PY
dump() { HDF5_VOL_CONNECTOR=zarr HDF5_PLUGIN_PATH=$OURS h5dump -p -d "$1" -w 0 "$TMP/zp.zarr"; }
dump /sz >"$TMP/sz.dump" || fail "h5dump of zarr-python's shuffle+zlib array"
grep -q "SHUFFLE" "$TMP/sz.dump" && grep -q "DEFLATE { LEVEL 3 }" "$TMP/sz.dump" || fail "shuffle+zlib not reported: $(head -c 600 "$TMP/sz.dump")"
grep -q -- "-500, -500, -500, -499" "$TMP/sz.dump" || fail "shuffle+zlib data"
dump /bl >"$TMP/bl.dump" || fail "h5dump of zarr-python's blosc array"
grep -q "FILTER_ID 32001" "$TMP/bl.dump" && grep -q "PARAMS { 2 2 4 4000 5 2 1 }" "$TMP/bl.dump" ||
    fail "blosc not reported: $(head -c 600 "$TMP/bl.dump")"
grep -q -- "-500, -500, -500, -499" "$TMP/bl.dump" || fail "blosc data"
dump /zs >"$TMP/zs.dump" || fail "h5dump of zarr-python's zstd array"
grep -q "FILTER_ID 32015" "$TMP/zs.dump" && grep -q "PARAMS { -3 }" "$TMP/zs.dump" ||
    fail "zstd not reported: $(head -c 600 "$TMP/zs.dump")"
grep -q -- "-500, -500, -500, -499" "$TMP/zs.dump" || fail "zstd data"
pass "h5dump -p of zarr-python stores shows shuffle+deflate, blosc 32001 and zstd 32015 (negative level) with the data"
finish
