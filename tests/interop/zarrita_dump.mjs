// zarrita_dump.mjs: reads nodes of a zarr store with zarrita (an independent zarr implementation)
// and prints them as one JSON document, for the interop tests to compare with expected values.
//
//   node zarrita_dump.mjs STORE_DIR PATH [PATH...]
//
// Output: {"<path>": {"kind": "array"|"group", "attrs": {...}, "shape": [...], "chunks": [...],
//                      "dtype": "float64", "dimension_names": [...] | null,
//                      "data": [...flat C-order values...]}}
// BigInts print as strings; NaN/Infinity as the strings "NaN", "Infinity", "-Infinity".
import * as zarr from "zarrita";
import { FileSystemStore } from "@zarrita/storage";

const [storeDir, ...paths] = process.argv.slice(2);
if (!storeDir || paths.length === 0) {
  console.error("usage: node zarrita_dump.mjs STORE_DIR PATH [PATH...]");
  process.exit(2);
}
const root = zarr.root(new FileSystemStore(storeDir));

function plain(v) {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number" && !Number.isFinite(v)) return Number.isNaN(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
  if (v instanceof Uint8Array) return Array.from(v);
  return v;
}

const out = {};
for (const p of paths) {
  const loc = p === "/" ? root : root.resolve(p.replace(/^\//, ""));
  const node = await zarr.open(loc);
  if (node instanceof zarr.Array) {
    const chunk = await zarr.get(node);
    const data = Array.from(chunk.data, plain);
    out[p] = {
      kind: "array", attrs: node.attrs, shape: node.shape, chunks: node.chunks, dtype: node.dtype,
      dimension_names: node.dimensionNames ?? null, data,
    };
  } else {
    out[p] = { kind: "group", attrs: node.attrs };
  }
}
console.log(JSON.stringify(out, null, 1));
