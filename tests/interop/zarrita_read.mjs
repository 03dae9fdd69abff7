// zarrita_read.mjs: reads arrays of a zarr store with zarrita (an independent implementation) and
// prints them as one JSON document in C order, honouring the strides of what zarr.get returns (for
// arrays stored with a transpose codec zarrita hands back a strided view, not C-order data).
//
//   node zarrita_read.mjs STORE_DIR PATH [PATH...]
//
// Output: {"<path>": {"attrs": {...}, "shape": [...], "chunks": [...], "dtype": "float64",
//                      "dimension_names": [...] | null, "data": [...flat C-order values...]}}
// BigInts print as strings; NaN/Infinity as the strings "NaN", "Infinity", "-Infinity"; bools as
// true/false.
import * as zarr from "zarrita";
import { FileSystemStore } from "@zarrita/storage";

const [storeDir, ...paths] = process.argv.slice(2);
if (!storeDir || paths.length === 0) {
  console.error("usage: node zarrita_read.mjs STORE_DIR PATH [PATH...]");
  process.exit(2);
}
const root = zarr.root(new FileSystemStore(storeDir));

function plain(v) {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number" && !Number.isFinite(v)) return Number.isNaN(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
  return v;
}

function cOrder(chunk) {
  const { data, shape, stride } = chunk;
  const n = shape.reduce((a, b) => a * b, 1);
  const out = new Array(n);
  const idx = new Array(shape.length).fill(0);
  const get = typeof data.get === "function" ? (i) => data.get(i) : (i) => data[i];
  for (let k = 0; k < n; k++) {
    let off = 0;
    for (let d = 0; d < shape.length; d++) off += idx[d] * stride[d];
    out[k] = plain(get(off));
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

const out = {};
for (const p of paths) {
  const node = await zarr.open(root.resolve(p.replace(/^\//, "")), { kind: "array" });
  const chunk = await zarr.get(node);
  out[p] = {
    attrs: node.attrs, shape: node.shape, chunks: node.chunks, dtype: node.dtype,
    dimension_names: node.dimensionNames ?? null, data: cOrder(chunk),
  };
}
console.log(JSON.stringify(out));
