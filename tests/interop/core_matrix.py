"""core_matrix.py: the interop matrix of h5zarr's zarr core against independent implementations.

    python3 core_matrix.py DIRECTION WORKDIR

DIRECTION is one of
  zarrita-to-core   zarrita (node) writes v3 arrays; the core (zarrcore dump) reads them
  zarrpy-to-core    zarr-python 2.13 writes v2 arrays; the core reads them
  core-to-zarrita   the core (zarrcore write) writes v3 arrays; zarrita reads them
  core-to-zarrpy    the core writes v2 arrays; zarr-python 2.13 reads them, and NCZarr's ncdump too
  nczarr-to-core    netCDF's own tools (ncgen -4, then nccopy into file://...#mode=zarr,file) write
                    v2 stores through NCZarr, with netCDF's filters; the core reads them

Expected values are made here with numpy (seeded random data plus extremes) and never come from the
implementation under test. Each case prints one line "ok: ..." or "MISMATCH: ..."; the exit status is
1 when any case mismatched or failed. Environment: ZARRCORE (the tool), NODE, INTEROP (tests/interop).
"""
import json
import math
import os
import re
import subprocess
import sys

import numpy as np

ZARRCORE = os.environ["ZARRCORE"]
NODE = os.environ.get("NODE", "node")
INTEROP = os.environ["INTEROP"]
failures = []
count = 0


def report(ok, label, why=""):
    global count
    count += 1
    if ok:
        print(f"ok: {label}")
    else:
        print(f"MISMATCH: {label}: {why}")
        failures.append(label)


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[:2000]}")
    return p.stdout


# ---- values in zarrcore's dump encoding ----------------------------------------------------------
def enc_float(x):
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def enc_elem(v, dt):
    k = dt.kind
    if dt.fields is not None:
        out = {}
        for name in dt.names:
            fdt = dt.fields[name][0]
            fv = v[name]
            if fdt.subdtype is not None:
                base = fdt.subdtype[0]
                out[name] = [enc_elem(x, base) for x in np.asarray(fv).reshape(-1)]
            else:
                out[name] = enc_elem(fv, fdt)
        return out
    if k == "b":
        return bool(v)
    if k in "iu":
        return int(v)
    if k == "f":
        return enc_float(v)
    if k == "c":
        return [enc_float(v.real), enc_float(v.imag)]
    if k == "S":
        return np.array(v, dtype=dt).tobytes().hex()
    if k == "U":
        return str(v)
    if k == "O":
        return v if isinstance(v, str) else bytes(v).hex()
    if k in "mM":
        return int(np.array(v, dtype=dt).view("i8"))
    raise ValueError(f"no encoding for {dt}")


def encode(arr):
    return [enc_elem(v, arr.dtype) for v in arr.reshape(-1, order="C")]


def same(a, b, dt):
    """Element equality in dump encoding; floats compared after rounding to the dtype."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], dt.fields[k][0] if dt.fields else dt) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        base = dt.subdtype[0] if dt.subdtype else (np.dtype(dt.type(0).real.dtype) if dt.kind == "c" else dt)
        return len(a) == len(b) and all(same(x, y, base) for x, y in zip(a, b))
    if dt.kind == "f" or dt.kind == "c":
        fa = float(a) if not isinstance(a, str) else float(a.replace("Infinity", "inf"))
        fb = float(b) if not isinstance(b, str) else float(b.replace("Infinity", "inf"))
        ft = dt.type if dt.kind == "f" else np.float64
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        return ft(fa) == ft(fb)
    if dt.kind in "iumM":
        return int(a) == int(b)
    return a == b


def compare(label, expected, got, dt):
    if len(expected) != len(got):
        return report(False, label, f"{len(got)} values, expected {len(expected)}")
    for i, (e, g) in enumerate(zip(expected, got)):
        if not same(e, g, dt):
            return report(False, label, f"value {i}: got {g!r}, expected {e!r}")
    report(True, label)


def dump(store, path):
    return json.loads(run([ZARRCORE, "dump", store, path]))


# ---- data ----------------------------------------------------------------------------------------
rng = np.random.default_rng(20261129)


def numbers(dtype, shape):
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    if dt.kind == "b":
        a = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, n, dtype=dt.newbyteorder("="), endpoint=True).astype(dt)
        a[:2] = [info.min, info.max]
    else:
        a = (rng.standard_normal(n) * 1000).astype(dt)
        a[:3] = [np.inf, -np.inf, np.finfo(dt).max]
        if n > 5:
            a[5] = np.nan
    return a.reshape(shape)


# ---- zarrita writes, the core reads --------------------------------------------------------------
ZARRITA_CASES = [
    # name, dtype, shape, chunks, codecs, fill
    ("i8_bytes", "int8", [7, 5], [3, 2], [{"name": "bytes"}], -3),
    ("u8_blosc", "uint8", [33], [8], [{"name": "bytes"}, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 1, "blocksize": 0}}], 7),
    ("i16_big", "int16", [9, 4], [4, 3], [{"name": "bytes", "configuration": {"endian": "big"}}], 0),
    ("u16_zstd", "uint16", [20, 3], [6, 3], [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 3, "checksum": False}}], 65535),
    ("i32_transpose", "int32", [5, 6, 7], [2, 4, 3], [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, {"name": "bytes", "configuration": {"endian": "little"}}], -1),
    ("u32_blosc_zstd", "uint32", [50], [16], [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}}], 0),
    ("i64_extremes", "int64", [11], [4], [{"name": "bytes", "configuration": {"endian": "little"}}], 0),
    ("u64_big_zstd", "uint64", [4, 5], [3, 3], [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": True}}], 1),
    ("f32_nan_fill", "float32", [13, 3], [5, 2], [{"name": "bytes", "configuration": {"endian": "little"}}], "NaN"),
    ("f64_big_shuffle", "float64", [17], [5], [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "numcodecs.shuffle", "configuration": {"elementsize": 8}}], "Infinity"),
    ("f64_lz4", "float64", [6, 6], [4, 4], [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}], 0.5),
    ("bool_bytes", "bool", [10, 3], [4, 2], [{"name": "bytes"}], True),
]


def zarrita_to_core(work):
    store = os.path.join(work, "zarrita.zarr")
    cases, expect = [], {}
    for name, dtype, shape, chunks, codecs, fill in ZARRITA_CASES:
        a = numbers(dtype, shape)
        rows = shape[0] - 2 if name in ("f32_nan_fill", "i16_big", "bool_bytes") else shape[0]
        full = a.copy()
        fv = {"NaN": np.nan, "Infinity": np.inf}.get(fill, fill) if isinstance(fill, str) else fill
        full[rows:] = fv  # rows never written read as the fill value
        dims = [f"{name}_d{i}" for i in range(len(shape))] if len(shape) > 1 else None
        attrs = {"case": name, "nested": {"list": [1, 2.5, None, "x"]}, "big": 2**53}  # JS numbers: exact up to 2^53
        cases.append({"path": name, "shape": shape, "chunks": chunks, "dtype": dtype, "codecs": codecs,
                      "fill_value": fill, "dimension_names": dims, "attributes": attrs,
                      "data": [str(v) if dtype.endswith("int64") else v for v in encode(a[:rows])], "rows": rows})
        expect[name] = (full, shape, chunks, dims, attrs)
    cf = os.path.join(work, "zarrita_cases.json")
    with open(cf, "w") as f:
        json.dump(cases, f)
    print(run([NODE, os.path.join(INTEROP, "zarrita_write.mjs"), store, cf], cwd=INTEROP).strip())
    for name, (full, shape, chunks, dims, attrs) in expect.items():
        label = f"zarrita v3 {name} ({full.dtype}) -> core"
        try:
            d = dump(store, name)
        except RuntimeError as e:
            report(False, label, str(e))
            continue
        if d["shape"] != shape or d["chunks"] != chunks:
            report(False, label, f"shape/chunks {d['shape']}/{d['chunks']}")
        elif d["dimension_names"] != dims:
            report(False, label, f"dimension_names {d['dimension_names']}")
        elif d["attrs"] != attrs:
            report(False, label, f"attributes {d['attrs']}")
        else:
            compare(label, encode(full), d["data"], full.dtype)


# ---- zarr-python 2.13 writes v2, the core reads --------------------------------------------------
def zarrpy_to_core(work):
    import numcodecs
    import zarr

    store = os.path.join(work, "zarrpy.zarr")
    root = zarr.open_group(store, mode="w")
    root.attrs["writer"] = "zarr-python"
    blosc = numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE)
    cases = []

    def add(name, arr, chunks, **kw):
        z = root.create_dataset(name, shape=arr.shape, chunks=chunks, dtype=arr.dtype, **kw)
        z[...] = arr
        z.attrs["case"] = name
        cases.append((name, arr, z))

    add("i4_C_dot_blosc", numbers("<i4", (9, 7)), (4, 3), compressor=numcodecs.Blosc(cname="lz4", clevel=5))
    add("f8_F_slash_zstd", numbers("<f8", (8, 5, 3)), (3, 2, 2), order="F", compressor=numcodecs.Zstd(level=3),
        dimension_separator="/")
    add("u2_big_zlib", numbers(">u2", (30,)), (7,), compressor=numcodecs.Zlib(level=1))
    add("i8_gzip_F", numbers("<i8", (6, 6)), (4, 5), order="F", compressor=numcodecs.GZip(level=5))
    add("u8_lz4", numbers("<u8", (25,)), (10,), compressor=numcodecs.LZ4())
    add("i2_bz2", numbers("<i2", (40,)), (12,), compressor=numcodecs.BZ2(level=3))
    add("f4_bitshuffle_slash", numbers("<f4", (10, 10)), (3, 4), compressor=blosc, dimension_separator="/")
    add("i4_delta_filter", np.cumsum(rng.integers(-50, 50, 40)).astype("<i4"), (16,),
        filters=[numcodecs.Delta(dtype="<i4")], compressor=numcodecs.Zlib(level=1))
    add("f8_delta_astype", np.arange(30, dtype="<f8") * 0.25, (8,),
        filters=[numcodecs.Delta(dtype="<f8", astype="<f4")], compressor=None)
    add("b1_none", numbers("|b1", (11, 2)), (4, 2), compressor=None)
    c = np.empty(12, dtype="<c16")
    c.real, c.imag = numbers("<f8", (12,)), numbers("<f8", (12,))[::-1]
    add("c16_none", c, (5,), compressor=None)
    st = np.dtype([("x", "<i2"), ("y", ">f8"), ("v", "<u1", (3,)), ("name", "S5")])
    sa = np.zeros(14, dtype=st)
    sa["x"] = rng.integers(-3000, 3000, 14)
    sa["y"] = rng.standard_normal(14)
    sa["v"] = rng.integers(0, 255, (14, 3))
    sa["name"] = [b"ab", b"hello", b"", b"x\x00y"] * 3 + [b"z", b"q"]
    add("struct_zlib", sa, (4,), compressor=numcodecs.Zlib(level=1))
    add("S6_fixed", np.array([b"abc", b"", b"longer", b"\x01\x02"] * 3, dtype="S6"), (5,))
    add("U4_unicode", np.array(["ab", "\u00e9t\u00e9", "", "\U0001F600x", "abcd"] * 2, dtype="<U4"), (3,))
    vs = np.array(["", "short", "a longer string", "\u00fcnic\u00f6de \u2713", "x" * 300] * 3, dtype=object)
    add("vlen_utf8", vs, (4,), object_codec=numcodecs.VLenUTF8(), compressor=numcodecs.Zstd(level=1))
    f = numbers("<f8", (5, 9))
    z = root.create_dataset("f8_nan_fill_partial", shape=(5, 9), chunks=(2, 4), dtype="<f8", fill_value=np.nan)
    z[:2, :5] = f[:2, :5]
    z.attrs["case"] = "f8_nan_fill_partial"
    full = np.full((5, 9), np.nan)
    full[:2, :5] = f[:2, :5]
    cases.append(("f8_nan_fill_partial", full, z))
    add("M8_ns", (np.datetime64("2020-01-01T00:00:00", "ns") + rng.integers(0, 10**15, 9).astype("m8[ns]")), (4,))
    add("m8_s", rng.integers(-10**9, 10**9, 9).astype("m8[s]"), (4,))

    for name, arr, z in cases:
        label = f"zarr-python v2 {name} ({arr.dtype.str}, order {z.order}) -> core"
        try:
            d = dump(store, name)
        except RuntimeError as e:
            report(False, label, str(e))
            continue
        if d["shape"] != list(arr.shape) or d["chunks"] != list(z.chunks):
            report(False, label, f"shape/chunks {d['shape']}/{d['chunks']}")
        elif d["attrs"].get("case") != name:
            report(False, label, f"attributes {d['attrs']}")
        else:
            compare(label, encode(arr), d["data"], arr.dtype)
    # consolidated: zarr-python's .zmetadata alone describes the hierarchy for the core
    zarr.consolidate_metadata(store)
    os.remove(os.path.join(store, "i4_C_dot_blosc", ".zarray"))
    label = "zarr-python consolidated .zmetadata -> core (array whose .zarray is gone)"
    try:
        listing = run([ZARRCORE, "ls", store, "/"]).split()
        report("i4_C_dot_blosc" in listing, label, f"ls gave {listing}")
    except RuntimeError as e:
        report(False, label, str(e))


# ---- the core writes, others read ------------------------------------------------------------------
def v3_doc(dtype, shape, chunks, codecs, fill, dims, attrs):
    return {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": codecs, "attributes": attrs,
            **({"dimension_names": dims} if dims else {})}


BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}
CORE_V3_CASES = [
    ("i8_plain", "int8", [7, 5], [3, 2], [BYTES_LE], -128),
    ("u16_big_gzip", "uint16", [20], [6], [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 5}}], 3),
    ("i32_transpose_zstd", "int32", [5, 6, 7], [2, 4, 3], [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, BYTES_LE, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}], 0),
    ("u32_blosc", "uint32", [40], [16], [BYTES_LE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}], 0),
    ("i64_crc32c", "int64", [11], [4], [BYTES_LE, {"name": "crc32c"}], -1),
    ("u64_extremes", "uint64", [9], [4], [{"name": "bytes", "configuration": {"endian": "big"}}], 0),
    ("f32_nan", "float32", [13, 3], [5, 2], [BYTES_LE, {"name": "gzip", "configuration": {"level": 1}}], "NaN"),
    ("f64_sharded", "float64", [10, 13], [4, 6], [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 3], "codecs": [BYTES_LE, {"name": "gzip", "configuration": {"level": 1}}], "index_codecs": [BYTES_LE, {"name": "crc32c"}], "index_location": "end"}}], "NaN"),
    ("i16_sharded_plain", "int16", [9], [4], [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2], "codecs": [BYTES_LE], "index_codecs": [BYTES_LE, {"name": "crc32c"}], "index_location": "end"}}], 5),
    ("bool_plain", "bool", [10, 3], [4, 2], [{"name": "bytes"}], False),
]


def core_write(store, path, meta, arr_or_values, work):
    mf = os.path.join(work, f"{path.replace('/', '_')}.meta.json")
    df = os.path.join(work, f"{path.replace('/', '_')}.data.json")
    with open(mf, "w") as f:
        json.dump(meta, f)
    with open(df, "w") as f:
        json.dump(arr_or_values, f)
    run([ZARRCORE, "write", store, path, mf, df])


def core_to_zarrita(work):
    store = os.path.join(work, "core3.zarr")
    run([ZARRCORE, "group", store, "/", "3"])
    expect = {}
    for name, dtype, shape, chunks, codecs, fill in CORE_V3_CASES:
        a = numbers(dtype, shape)
        if name == "f64_sharded":
            a[:, 6:] = np.nan  # whole inner chunks equal to the fill: stored as empty (2^64-1) entries
        dims = [f"d{i}" for i in range(len(shape))]
        attrs = {"case": name, "pi": 3.25, "list": [1, "two", None]}
        core_write(store, name, v3_doc(dtype, shape, chunks, codecs, fill, dims, attrs), encode(a), work)
        expect[name] = (a, attrs, dims)
    out = json.loads(run([NODE, os.path.join(INTEROP, "zarrita_read.mjs"), store] + ["/" + n for n in expect],
                         cwd=INTEROP))
    for name, (a, attrs, dims) in expect.items():
        label = f"core v3 {name} ({a.dtype}) -> zarrita"
        d = out["/" + name]
        if d["shape"] != list(a.shape) or d["attrs"] != attrs or d["dimension_names"] != dims:
            report(False, label, f"shape {d['shape']} attrs {d['attrs']} dimension_names {d['dimension_names']}")
            continue
        got = [bool(x) if a.dtype.kind == "b" else x for x in d["data"]]
        compare(label, encode(a), got, a.dtype)


CORE_V2_CASES = [
    # name, dtype, shape, chunks, order, separator, compressor, filters, fill
    ("i2_C_dot", "<i2", [9, 7], [4, 3], "C", ".", None, None, -32768),
    ("f4_F_slash_zlib", "<f4", [6, 5], [4, 2], "F", "/", {"id": "zlib", "level": 1}, None, "NaN"),
    ("f4_C_slash_zlib", "<f4", [7, 5], [4, 2], "C", "/", {"id": "zlib", "level": 1}, None, "NaN"),
    ("f8_blosc", "<f8", [25], [10], "C", ".", {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}, None, 0.0),
    ("i8_big_zstd", ">i8", [4, 6], [3, 4], "C", ".", {"id": "zstd", "level": 3}, None, 0),
    ("u1_gzip", "|u1", [50], [16], "C", ".", {"id": "gzip", "level": 1}, None, 0),
    ("u1_none", "|u1", [50], [16], "C", "/", None, None, 7),
    ("i4_delta", "<i4", [30], [8], "C", ".", {"id": "zlib", "level": 1}, [{"id": "delta", "dtype": "<i4"}], 0),
    ("i4_bz2", "<i4", [5, 9], [2, 4], "C", ".", {"id": "bz2", "level": 9}, None, 3),
]


# NCZarr 4.9.3 maps zlib, blosc, zstd and bz2 (and no compressor); it has no numcodecs gzip or delta, and it
# reads order "F" arrays as if they were C order (zarr-python reads them right), so those are left out.
NCZARR_CASES = {"i2_C_dot", "f4_C_slash_zlib", "f8_blosc", "i8_big_zstd", "u1_none", "i4_bz2"}


def core_to_zarrpy(work):
    import zarr

    store = os.path.join(work, "core2.zarr")
    attrs_file = os.path.join(work, "root_attrs.json")
    with open(attrs_file, "w") as f:
        json.dump({"title": "written by h5zarr's core"}, f)
    run([ZARRCORE, "group", store, "/", "2", attrs_file])
    expect = {}
    for name, dtype, shape, chunks, order, sep, comp, filters, fill in CORE_V2_CASES:
        a = numbers(dtype, shape)
        if name == "i4_delta":
            a = np.cumsum(rng.integers(-100, 100, 30)).astype(dtype)
        dims = [f"{name}_dim{i}" for i in range(len(shape))]
        zarray = {"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": dtype, "compressor": comp,
                  "fill_value": fill, "order": order, "filters": filters, "dimension_separator": sep}
        attrs = {"_ARRAY_DIMENSIONS": dims, "case": name}
        core_write(store, name, {".zarray": zarray, ".zattrs": attrs}, encode(a), work)
        expect[name] = (a, fill, attrs)
    g = zarr.open_group(store, mode="r")
    for name, (a, fill, attrs) in expect.items():
        label = f"core v2 {name} ({a.dtype.str}) -> zarr-python 2.13"
        z = g[name]
        got = z[...]
        if got.dtype != a.dtype or dict(z.attrs) != attrs:
            report(False, label, f"dtype {got.dtype} attrs {dict(z.attrs)}")
            continue
        compare(label, encode(a), encode(got), a.dtype)
    # the core's consolidation, read by zarr-python
    run([ZARRCORE, "consolidate", store, "/"])
    label = "core v2 .zmetadata -> zarr-python open_consolidated"
    try:
        cg = zarr.open_consolidated(store, mode="r")
        ok = sorted(cg.array_keys()) == sorted(expect) and cg.attrs["title"] == "written by h5zarr's core"
        ok = ok and all(np.array_equal(cg[n][...], expect[n][0], equal_nan=expect[n][0].dtype.kind == "f")
                        for n in expect)
        report(ok, label, f"keys {sorted(cg.array_keys())}")
    except Exception as e:  # noqa: BLE001 - any failure is a mismatch to report
        report(False, label, repr(e))
    ncdump_check(store, expect)


def parse_ncdump(text, var):
    m = re.search(r"\n\s*" + re.escape(var) + r"\s*=\s*(.*?);", text.split("data:", 1)[1], re.S)
    if not m:
        raise RuntimeError(f"no data for {var} in ncdump output")
    return [t.strip() for t in m.group(1).replace("\n", " ").split(",") if t.strip()]


def ncdump_check(store, expect):
    for name, (a, fill, attrs) in expect.items():
        if name not in NCZARR_CASES:
            continue
        label = f"core v2 {name} ({a.dtype.str}) -> NCZarr ncdump"
        url = f"file://{os.path.abspath(store)}#mode=zarr,file"
        try:
            text = run(["ncdump", "-p", "9,17", "-v", name, url])
            toks = parse_ncdump(text, name)
        except RuntimeError as e:
            report(False, label, str(e))
            continue
        flat = a.reshape(-1)
        if len(toks) != flat.size:
            report(False, label, f"{len(toks)} values, expected {flat.size}")
            continue
        bad = None
        for i, (t, e) in enumerate(zip(toks, flat)):
            if t == "_":  # ncdump prints values equal to _FillValue as "_"
                f = float("nan") if fill == "NaN" else float(fill)
                ok = (math.isnan(f) and np.isnan(e)) or (not math.isnan(f) and e == f)
            elif a.dtype.kind in "iu":
                ok = int(t) == int(e)
            else:  # -p 9,17: enough digits to read back exactly
                t = t[:-1] if t.endswith("f") and not t.endswith("Inf") else t  # ncdump's float suffix
                v = float(t.replace("Infinity", "inf"))
                ok = (math.isnan(v) and np.isnan(e)) or a.dtype.type(v) == e
            if not ok:
                bad = (i, t, e)
                break
        report(bad is None, label, f"value {bad[0]}: ncdump {bad[1]}, expected {bad[2]}" if bad else "")


# ---- NCZarr writes, the core reads -----------------------------------------------------------------
# name, dtype, shape, chunks, CDL attributes (netCDF's filter attributes: NCZarr writes the codecs in
# its own spelling, e.g. {"id": "zlib", "level": "1"}, {"id": "shuffle", "elementsize": "0"}), data
NC_TYPES = {"int8": ("byte", "b"), "uint8": ("ubyte", "ub"), "int16": ("short", "s"), "uint16": ("ushort", "us"),
            "int32": ("int", ""), "uint32": ("uint", "u"), "int64": ("int64", "ll"), "uint64": ("uint64", "ull"),
            "float32": ("float", "f"), "float64": ("double", "")}
NCZARR_WRITES = [
    ("i1_plain", "int8", [13], [5], [], "random"),
    ("u1_zlib", "uint8", [7, 5], [3, 2], ["_DeflateLevel = 1"], "random"),
    ("i2_shuffle_zlib", "int16", [20], [6], ["_DeflateLevel = 4", '_Shuffle = "true"'], "random"),
    ("u2_zstd", "uint16", [9, 4], [4, 3], ['_Filter = "32015,3"'], "random"),
    ("i4_blosc", "int32", [500], [128], ['_Filter = "32001,0,0,4,0,5,1,1"'], "small"),
    ("u4_fletcher32", "uint32", [11], [4], ['_Fletcher32 = "true"'], "random"),
    # (_Shuffle with _Filter but no _DeflateLevel makes ncgen add a zlib level 0 filter whose chunks
    # netCDF 4.9.3 cannot read back itself; the core refuses them too: "zlib: data is truncated")
    ("i8_shuffle_zlib6", "int64", [17], [5], ['_Shuffle = "true"', "_DeflateLevel = 6"], "random"),
    ("u8_zlib9", "uint64", [6, 3], [4, 2], ["_DeflateLevel = 9"], "random"),
    ("f4_shuffle_zlib", "float32", [13, 3], [5, 2], ["_DeflateLevel = 2", '_Shuffle = "true"'], "random"),
    ("f8_zstd", "float64", [25], [7], ['_Filter = "32015,5"'], "random"),
    ("i4_bz2", "int32", [6, 7], [4, 3], ['_Filter = "307,9"'], "random"),
]


def cdl_value(x, dt):
    _, suffix = NC_TYPES[dt.name]
    if dt.kind == "f":
        f = float(x)
        if math.isnan(f):
            return "NaN" + suffix
        if math.isinf(f):
            return ("Infinity" if f > 0 else "-Infinity") + suffix
        return repr(f) + suffix
    return f"{int(x)}{suffix}"


def nczarr_write(work, name, a, chunks, attrs, unlimited=False, group=None):
    """Writes `a` as variable v (in `group` if given) straight into an NCZarr store with ncgen -4
    (chunking and filters from netCDF's special attributes). Returns the store."""
    dims = [f"d{i}" for i in range(a.ndim)]
    decl = ", ".join(f"{d} = {'unlimited' if unlimited and i == 0 else n}" for i, (d, n) in
                     enumerate(zip(dims, a.shape)))
    va = ['case = "' + name + '"', '_Storage = "chunked"', f"_ChunkSizes = {', '.join(map(str, chunks))}"] + attrs
    body = (f"variables: {NC_TYPES[a.dtype.name][0]} v({', '.join(dims)}) ; "
            + " ".join(f"v:{x} ;" for x in va)
            + f" data: v = {', '.join(cdl_value(x, a.dtype) for x in a.reshape(-1))} ;")
    if group:
        body = f"group: {group} {{ {body} }}"
    cdl = os.path.join(work, f"{name}.cdl")
    store = os.path.join(work, f"{name}.zarr")
    with open(cdl, "w") as f:
        f.write(f"netcdf {name} {{ dimensions: {decl} ; {body} }}\n")
    run(["ncgen", "-4", "-o", f"file://{os.path.abspath(store)}#mode=zarr,file", cdl])
    return store


def nczarr_to_core(work):
    cases = [(n, numbers(t, s) if k == "random" else rng.integers(0, 10, s).astype(t), c, at, {})
             for n, t, s, c, at, k in NCZARR_WRITES]
    # an unlimited dimension (4 records of 3), and a variable inside a group
    cases += [("unlimited", numbers("int32", [4, 3]), [1, 3], ["_DeflateLevel = 1", '_Shuffle = "true"'],
               {"unlimited": True}),
              ("in_group", numbers("float64", [5, 2]), [2, 2], ['_Filter = "32015,2"'], {"group": "sub"})]
    for name, a, chunks, attrs, kw in cases:
        label = f"NCZarr {name} ({a.dtype.str}, {'; '.join(attrs) or 'no filter'}) -> core"
        try:
            store = nczarr_write(work, name, a, chunks, attrs, **kw)
            d = dump(store, "sub/v" if kw.get("group") else "v")
        except RuntimeError as e:
            report(False, label, str(e))
            continue
        if np.dtype(d["dtype"]) != a.dtype or d["chunks"] != chunks or d["attrs"].get("case") != name or \
                d["shape"] != list(a.shape):
            report(False, label, f"dtype {d['dtype']} shape {d['shape']} chunks {d['chunks']} attrs {d['attrs']}")
            continue
        compare(label, encode(a), d["data"], a.dtype)
    # nccopy of a netCDF-4 file with deflate + shuffle (how most stores get converted); nccopy keeps
    # the filters but not the chunking here
    a = numbers("int16", [30])
    label = "NCZarr nccopy -d 3 -s of a netCDF-4 file (<i2) -> core"
    try:
        cdl = os.path.join(work, "copied.cdl")
        with open(cdl, "w") as f:
            f.write(f"netcdf copied {{ dimensions: x = 30 ; variables: short v(x) ; "
                    f"data: v = {', '.join(cdl_value(x, a.dtype) for x in a)} ; }}\n")
        nc, store = os.path.join(work, "copied.nc"), os.path.join(work, "copied.zarr")
        run(["ncgen", "-4", "-o", nc, cdl])
        run(["nccopy", "-d", "3", "-s", nc, f"file://{os.path.abspath(store)}#mode=zarr,file"])
        with open(os.path.join(store, "v", ".zarray")) as f:
            zarray = json.load(f)
        filters = [x["id"] for x in zarray.get("filters") or []] + [(zarray.get("compressor") or {}).get("id")]
        d = dump(store, "v")
        if filters != ["shuffle", "zlib"]:
            report(False, label, f"NCZarr wrote filters {filters}, expected shuffle + zlib")
        else:
            compare(label, encode(a), d["data"], a.dtype)
    except RuntimeError as e:
        report(False, label, str(e))


def main():
    direction, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    {"zarrita-to-core": zarrita_to_core, "zarrpy-to-core": zarrpy_to_core,
     "core-to-zarrita": core_to_zarrita, "core-to-zarrpy": core_to_zarrpy,
     "nczarr-to-core": nczarr_to_core}[direction](work)
    print(f"{direction}: {count - len(failures)} of {count} cases equal")
    if failures or count == 0:
        sys.exit(1)


if __name__ == "__main__":
    main()
