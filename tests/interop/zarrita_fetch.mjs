// zarrita_fetch.mjs: reads arrays of a zarr store served over HTTP with zarrita's FetchStore (an
// independent zarr implementation, reading through its own HTTP client) and prints them as one JSON
// document, for the network-store tests (tests/scripts/s3_store.sh) to compare with the core's reads.
//
//   node zarrita_fetch.mjs STORE_URL PATH [PATH...]
//
// Output: {"<path>": {"shape": [...], "dtype": "...", "data": [...flat C-order values...]}}
// BigInts print as strings; NaN/Infinity as the strings "NaN", "Infinity", "-Infinity".
import * as zarr from "zarrita";
import { FetchStore } from "@zarrita/storage";

const [url, ...paths] = process.argv.slice(2);
if (!url || paths.length === 0) {
  console.error("usage: node zarrita_fetch.mjs STORE_URL PATH [PATH...]");
  process.exit(2);
}
const root = zarr.root(new FetchStore(url));

function plain(v) {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number" && !Number.isFinite(v)) return Number.isNaN(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
  return v;
}

const out = {};
for (const p of paths) {
  const node = await zarr.open(root.resolve(p.replace(/^\//, "")), { kind: "array" });
  const chunk = await zarr.get(node);
  out[p] = { shape: node.shape, dtype: node.dtype, data: Array.from(chunk.data, plain) };
}
console.log(JSON.stringify(out));
