// zarrita_write.mjs: writes zarr v3 arrays with zarrita (an independent implementation) for the
// interop tests to read through h5zarr's core.
//
//   node zarrita_write.mjs STORE_DIR CASES.json
//
// CASES.json: [{"path": "a", "shape": [..], "chunks": [..], "dtype": "int16", "codecs": [...],
//   "fill_value": ..., "dimension_names": [..] | null, "attributes": {...},
//   "data": [flat C-order values; 64-bit integers as strings, NaN/Infinity as strings],
//   "rows": optional number of leading rows (along dim 0) to write; the rest stays unwritten}]
// The root group gets {"writer": "zarrita"} as attributes.
import * as zarr from "zarrita";
import { FileSystemStore } from "@zarrita/storage";
import { readFileSync } from "node:fs";

const [storeDir, casesFile] = process.argv.slice(2);
if (!storeDir || !casesFile) {
  console.error("usage: node zarrita_write.mjs STORE_DIR CASES.json");
  process.exit(2);
}
const cases = JSON.parse(readFileSync(casesFile, "utf8"));
const root = zarr.root(new FileSystemStore(storeDir));
await zarr.create(root, { attributes: { writer: "zarrita" } });

const ctors = {
  int8: Int8Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array,
  uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array,
  float32: Float32Array, float64: Float64Array, bool: Uint8Array,
};
function value(v, dtype) {
  if (dtype === "int64" || dtype === "uint64") return BigInt(v);
  if (dtype === "bool") return v ? 1 : 0;
  if (v === "NaN") return NaN;
  if (v === "Infinity") return Infinity;
  if (v === "-Infinity") return -Infinity;
  return v;
}
function strides(shape) {
  const s = new Array(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) { s[i] = acc; acc *= shape[i]; }
  return s;
}

for (const c of cases) {
  const arr = await zarr.create(root.resolve(c.path), {
    shape: c.shape, chunkShape: c.chunks, dtype: c.dtype, codecs: c.codecs,
    fillValue: c.fill_value, dimensionNames: c.dimension_names ?? undefined, attributes: c.attributes,
  });
  const rows = c.rows ?? c.shape[0];
  const shape = [rows, ...c.shape.slice(1)];
  const n = shape.reduce((a, b) => a * b, 1);
  const Ctor = ctors[c.dtype];
  let data = new Ctor(n);
  for (let i = 0; i < n; i++) data[i] = value(c.data[i], c.dtype);
  if (c.dtype === "bool") data = new zarr.BoolArray(data.buffer);
  const sel = [zarr.slice(0, rows), ...c.shape.slice(1).map(() => null)];
  await zarr.set(arr, sel, { data, shape, stride: strides(shape) });
}
console.log(`zarrita wrote ${cases.length} arrays`);
