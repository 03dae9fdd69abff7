#!/usr/bin/python3
"""gen_numcodecs_more.py OUTDIR: codec vectors for test_codecs' numcodecs_more test, written with
Debian's numcodecs 0.11 at test time (no shared data holds these codecs). Per case OUTDIR/<name>/:
config.json (the codec's get_config()), decoded.bin (the input array, C order, in the host's byte
order: the memory form), encoded.bin (codec.encode), roundtrip.bin (codec.decode of encoded.bin in
the host's byte order: what a reader must decode to). OUTDIR/cases.txt lists "name dtype nelem exact" (exact 1: our encoder must write
encoded.bin byte for byte). Exit 77 (skip) without numcodecs."""
import json
import os
import sys

try:
    import numpy as np
    import numcodecs
    from numcodecs import (CRC32, LZMA, Adler32, AsType, BitRound, Categorize, Delta, FixedScaleOffset,
                           PackBits, Quantize)
except ImportError as e:  # pragma: no cover
    print(f"  skipped: numcodecs not importable ({e})")
    sys.exit(77)

out = sys.argv[1]
rng = np.random.default_rng(15)
cases = []


def case(name, codec, arr, exact=True):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    arr = np.ascontiguousarray(arr)
    enc = np.asarray(codec.encode(arr)).tobytes()
    dec = np.frombuffer(np.asarray(codec.decode(enc)).tobytes(), dtype=arr.dtype)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(codec.get_config(), f)
    native = arr.dtype.newbyteorder("=")  # the reader's memory form: the host's byte order
    for fn, b in (("decoded.bin", arr.astype(native).tobytes()), ("encoded.bin", enc),
                  ("roundtrip.bin", dec.astype(native).tobytes())):
        with open(os.path.join(d, fn), "wb") as f:
            f.write(b)
    cases.append(f"{name} {arr.dtype.str} {arr.size} {1 if exact else 0}")


ramp = np.arange(1000, dtype="<i4") * 7 - 300
noise = rng.integers(0, 256, 1000, dtype="u1")
field = (np.sin(np.linspace(0, 20, 1000)) * 100 + 50).astype("<f8")
field[3] = -0.0
field[5] = 1e-300

for cls in (CRC32, Adler32):
    case(f"{cls.codec_id}-i4", cls(), ramp)
    case(f"{cls.codec_id}-u1", cls(), noise)
    case(f"{cls.codec_id}-empty", cls(), np.zeros(0, "u1"))

case("lzma-default", LZMA(), ramp)
case("lzma-preset1", LZMA(preset=1), field)
case("lzma-check-none", LZMA(check=0, preset=2), noise)
case("lzma-check-sha256", LZMA(check=10), ramp)
case("lzma-check-crc32-extreme", LZMA(check=1, preset=3 | 0x80000000), field)
case("lzma-alone", LZMA(format=2), ramp)

for t in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"):
    for e in ("<", ">") if t[1] != "1" else ("|",):
        dt = e + t
        if t[0] == "f":
            a = (field * 3).astype(dt)
        else:
            info = np.iinfo(dt)
            a = rng.integers(info.min, info.max, 500, dtype=dt[1:], endpoint=True).astype(dt)
            a[:100] = np.arange(100).astype(dt)
        case(f"delta-{t}-{'be' if e == '>' else 'le'}", Delta(dtype=dt), a)
case("delta-i8-astype-i2", Delta(dtype="<i8", astype="<i2"), np.arange(300, dtype="<i8") * 3)
case("delta-f8-astype-f4", Delta(dtype="<f8", astype="<f4"), field, exact=True)

case("fso-f8-u1", FixedScaleOffset(offset=50, scale=1.0, dtype="<f8", astype="u1"), field.clip(0, 255))
case("fso-f8-i2", FixedScaleOffset(offset=0.5, scale=100.0, dtype="<f8", astype="<i2"), field)
case("fso-f4-u2", FixedScaleOffset(offset=-60.25, scale=300, dtype="<f4", astype="<u2"), field.astype("<f4"))
case("fso-f8-f8", FixedScaleOffset(offset=10, scale=0.125, dtype="<f8"), field)
case("fso-i4-u1-int", FixedScaleOffset(offset=100, scale=2, dtype="<i4", astype="|u1"),
     (np.arange(1000) % 120 + 100).astype("<i4"))
case("fso-i4-float", FixedScaleOffset(offset=0.5, scale=0.25, dtype="<i4", astype="<i2"), ramp)
case("fso-f4-f4-be", FixedScaleOffset(offset=1.5, scale=10.0, dtype=">f4", astype=">f4"), field.astype(">f4"))

case("quantize-f8-d1", Quantize(digits=1, dtype="<f8"), field)
case("quantize-f8-d3", Quantize(digits=3, dtype="<f8"), field)
case("quantize-f4-d2", Quantize(digits=2, dtype="<f4"), field.astype("<f4"))
case("quantize-f8-f4", Quantize(digits=4, dtype="<f8", astype="<f4"), field)
case("quantize-f8-neg", Quantize(digits=-1, dtype="<f8"), field * 1000)
# float16: numpy rounds every step to half (the core does it in software, no _Float16)
case("quantize-f2-d2", Quantize(digits=2, dtype="<f2"), field.astype("<f2"))
case("fso-f2-i2", FixedScaleOffset(offset=0.75, scale=30.0, dtype="<f2", astype="<i2"), field.astype("<f2"))
case("fso-f2-f2", FixedScaleOffset(offset=1.5, scale=3.0, dtype="<f2", astype="<f2"), field.astype("<f2"))

case("bitround-f4-5", BitRound(keepbits=5), field.astype("<f4"))
case("bitround-f8-10", BitRound(keepbits=10), field)
case("bitround-f8-0", BitRound(keepbits=0), field)
case("bitround-f4-23", BitRound(keepbits=23), field.astype("<f4"))
case("bitround-f2-3", BitRound(keepbits=3), field.astype("<f2"))

case("astype-f8-f4", AsType(encode_dtype="<f4", decode_dtype="<f8"), field)
case("astype-i8-i2", AsType(encode_dtype="<i2", decode_dtype="<i8"), np.arange(-500, 500, dtype="<i8") * 60)
case("astype-f4-f8", AsType(encode_dtype="<f8", decode_dtype="<f4"), field.astype("<f4"))
case("astype-f8-i4", AsType(encode_dtype="<i4", decode_dtype="<f8"), field * 1000.7)
case("astype-u1-f4", AsType(encode_dtype="<f4", decode_dtype="|u1"), noise)
case("astype-f8-f2", AsType(encode_dtype="<f2", decode_dtype="<f8"), field)

for n in (100, 8, 13, 1):
    case(f"packbits-{n}", PackBits(), rng.integers(0, 2, n).astype(bool))

words = np.array(["foo", "bar", "", "baz", "qux", "bar", "foo", "x"] * 25, dtype="<U5")
case("categorize-u5-u1", Categorize(labels=["foo", "bar", "baz"], dtype="<U5"), words)
case("categorize-u5-i2", Categorize(labels=["bar", "\u00e9t\u00e9", "qux", "bar"], dtype="<U5", astype="<i2"),
     np.array(["\u00e9t\u00e9", "bar", "qux", "foo"] * 10, dtype="<U5"))
case("categorize-u3-cut", Categorize(labels=["abcdef", "xy"], dtype="<U3", astype="<u2"),
     np.array(["abc", "xy", "", "xy"] * 5, dtype="<U3"))

try:
    from numcodecs import ZFPY  # needs Debian's python3-zfpy
    case("zfpy-f8-reversible", ZFPY(), field)
    case("zfpy-f8-tolerance", ZFPY(mode=4, tolerance=0.01), field)
    case("zfpy-f4-rate", ZFPY(mode=2, rate=12), field.astype("<f4"))
    case("zfpy-f8-precision", ZFPY(mode=3, precision=20), field)
    case("zfpy-i4-reversible", ZFPY(), ramp)
    case("zfpy-i8-precision", ZFPY(mode=3, precision=40), ramp.astype("<i8") * 12345)
except ImportError:
    print("  no zfpy (python3-zfpy): no zfpy vectors")

# lzf (h5zarr's codec, h5py's LZF filter bytes): a chunk h5py itself wrote, read back raw
try:
    import h5py
    vals = (np.arange(2000) % 13 * 1000).astype("<i4")
    with h5py.File(os.path.join(out, "lzf.h5"), "w") as f:
        f.create_dataset("x", data=vals, chunks=(2000,), compression="lzf")
    with h5py.File(os.path.join(out, "lzf.h5"), "r") as f:
        mask, raw = f["x"].id.read_direct_chunk((0,))
    d = os.path.join(out, "lzf-h5py")
    os.makedirs(d, exist_ok=True)
    json.dump({"id": "lzf"}, open(os.path.join(d, "config.json"), "w"))
    for fn, b in (("decoded.bin", vals.tobytes()), ("encoded.bin", raw), ("roundtrip.bin", vals.tobytes())):
        open(os.path.join(d, fn), "wb").write(b)
    cases.append(f"lzf-h5py <i4 {vals.size} 0")
except ImportError:
    print("  no h5py (python3-h5py): no lzf vector")

with open(os.path.join(out, "cases.txt"), "w") as f:
    f.write("\n".join(cases) + "\n")
print(f"  {len(cases)} numcodecs {numcodecs.__version__} vectors in {out}")
