#!/usr/bin/env bash
# demo.sh: the showcase. An unmodified HDF5 program writes a zarr v3 store when HDF5_VOL_CONNECTOR=zarr
# is set; h5dump reads it back through the connector; zarrita (an independent JavaScript zarr
# implementation) reads the same values.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
deps=$(cat "$build/deps.prefix")
export PATH="$deps/hdf5/bin:$PATH" HDF5_PLUGIN_PATH="$build/plugins"
out=$(mktemp -d "${TMPDIR:-/tmp}/h5zarr-demo.XXXXXX")
trap 'rm -rf "$out"' EXIT
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "1. An ordinary HDF5 program (examples/write_field.c), told by the environment to write zarr"
echo "\$ HDF5_VOL_CONNECTOR=zarr write_field $out/field.zarr"
HDF5_VOL_CONNECTOR=zarr "$build/examples/write_field" "$out/field.zarr"

say "2. What it wrote: a zarr v3 store"
(cd "$out/field.zarr" && find . -type f | sort | sed 's|^\./||' | head -20)
echo "--- model/temperature/zarr.json"
cat "$out/field.zarr/model/temperature/zarr.json"; echo

say "3. h5dump reads the store through the connector"
echo "\$ HDF5_VOL_CONNECTOR=zarr h5dump $out/field.zarr"
HDF5_VOL_CONNECTOR=zarr h5dump "$out/field.zarr"

say "4. zarrita (JavaScript, knows nothing of HDF5) reads the same store"
node "$src/tests/interop/zarrita_dump.mjs" "$out/field.zarr" /model/temperature | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)["/model/temperature"]
print("shape", d["shape"], d["dtype"], "chunks", d["chunks"])
print("attributes", json.dumps(d["attrs"]), "(the HDF5 types are in the zarr.json key _h5zarr, see docs/FORMAT.md)")
w = d["shape"][1]
for i in range(d["shape"][0]):
    print("  ", " ".join("%7.2f" % v for v in d["data"][i * w:(i + 1) * w]))'
