#!/usr/bin/python3
"""gen_testdata.py: makes, at test time, stand-ins for the shared test data sets that are plain
numcodecs / zarr-python output, for a clone without ../shared/testdata beside it (issue 11).

    /usr/bin/python3 tests/data-gen/gen_testdata.py OUTDIR numcodecs|zarr_implementations...

Run with Debian's /usr/bin/python3 (numcodecs 0.11, zarr-python 2.13, numpy), not a pyenv python.
Writes OUTDIR/<set>/ in the layout of ../shared/testdata/<set>/ (MANIFEST.md there):

  numcodecs/<codec>/array.NN.npy, codec.MM/config.json, codec.MM/encoded.NN.dat
      The same codec configurations (same MM numbers) and the same array dtypes, shapes and orders
      (same NN numbers) as the shared golden vectors, random contents from a fixed seed, encoded by
      numcodecs 0.11; each encoding is decoded back by numcodecs and checked before it is written.
      Not made, because numcodecs 0.11 cannot: zstd codec.07/08 (`checksum: true`), and crc32c (no
      codec in 0.11): its vectors are the payload + CRC-32C LE computed here by a table CRC-32C that
      is first checked against the standard check value (CRC-32C("123456789") = 0xE3069283).
      vlen-utf8/vlen-bytes: array.NN.json in the DERIVED form of the shared set (values in C order).
  zarr_implementations/zarr.zr (raw, gzip, zlib, blosc |u1 (512,512,3) arrays in 100x100x1 chunks,
      written by zarr-python 2.13) and reference_image.npy (the pixels written, a synthetic image).

Prints one line per set; exits 77 (the tests' skip code) if numpy, numcodecs or zarr is missing,
1 (with a message) if a check fails.
"""
import json
import os
import sys

try:
    import numpy as np
    import numcodecs  # noqa: F401
    import zarr  # noqa: F401
except ImportError as e:
    print("gen_testdata: %s cannot import %s (Debian: python3-numcodecs, python3-zarr)" % (sys.executable, e.name))
    sys.exit(77)

SEED = 20240611


def fixed_arrays(rng):
    """The 13 arrays of numcodecs' fixed-size fixtures (MANIFEST.md table), by index."""
    return [
        np.arange(1000, dtype="<i4"),
        np.linspace(1000, 1001, 1000, dtype="<f8"),
        rng.normal(loc=1000, scale=1, size=(100, 10)).astype("<f8"),
        rng.integers(0, 2, size=1000).astype(bool).reshape(100, 10, order="F"),
        rng.choice(np.array([b"a", b"bb", b"ccc"], dtype="S3"), size=1000).reshape(10, 10, 10),
        rng.integers(0, 2**60, size=1000, dtype="<u8").view("<M8[ns]"),
        rng.integers(0, 2**60, size=1000, dtype="<u8").view("<m8[ns]"),
        rng.integers(0, 2**25, size=1000, dtype="<u8").view("<M8[m]"),
        rng.integers(0, 2**25, size=1000, dtype="<u8").view("<m8[m]"),
        rng.integers(-(2**63), -(2**63) + 20, size=1000, dtype="<i8").view("<M8[ns]"),
        rng.integers(-(2**63), -(2**63) + 20, size=1000, dtype="<i8").view("<m8[ns]"),
        rng.integers(-(2**63), -(2**63) + 20, size=1000, dtype="<i8").view("<M8[m]"),
        rng.integers(-(2**63), -(2**63) + 20, size=1000, dtype="<i8").view("<m8[m]"),
    ]


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_CRC32C = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def numcodecs_set(out):
    import numcodecs
    from numcodecs import GZip, LZ4, Blosc, Shuffle, VLenBytes, VLenUTF8, Zlib, Zstd

    if crc32c(b"123456789") != 0xE3069283:
        sys.exit("gen_testdata: the CRC-32C here fails its check value")
    all_arrays = range(13)
    # codec -> ({config number: codec}, array numbers): the configurations of the shared set
    fixed = {
        "blosc": ({0: Blosc("lz4", 5, 1), 1: Blosc("lz4", 0, 1), 3: Blosc("lz4", 1, 0), 5: Blosc("lz4", 9, 2),
                   6: Blosc("zlib", 1, 0), 7: Blosc("zstd", 1, 1), 9: Blosc("snappy", 1, 2),
                   10: Blosc("lz4", 5, 1), 11: Blosc("lz4", 5, 1, blocksize=256)}, all_arrays),
        "zstd": ({0: Zstd(0), 1: Zstd(-1), 3: Zstd(1), 5: Zstd(22), 6: Zstd(100)}, all_arrays),
        "zlib": ({0: Zlib(1), 1: Zlib(-1), 2: Zlib(0), 3: Zlib(1)}, all_arrays),
        "gzip": ({0: GZip(1), 1: GZip(-1), 2: GZip(0), 3: GZip(1)}, all_arrays),
        "shuffle": ({0: Shuffle(4), 1: Shuffle(0), 2: Shuffle(4)}, all_arrays),
        "lz4": ({0: LZ4(1), 1: LZ4(-1), 2: LZ4(0), 3: LZ4(1), 4: LZ4(10)}, all_arrays),
        "crc32c": ({0: None}, (0, 1, 3, 4, 6, 7, 9, 10, 12)),
    }
    if "snappy" not in numcodecs.blosc.list_compressors():
        del fixed["blosc"][0][9]
    ncases = 0
    for name, (configs, which) in fixed.items():
        rng = np.random.default_rng(SEED + len(name))  # contents differ between codecs, as upstream
        arrays = fixed_arrays(rng)
        base = os.path.join(out, "numcodecs", name)
        os.makedirs(base, exist_ok=True)
        for a in which:
            np.save(os.path.join(base, "array.%02d.npy" % a), arrays[a])
        for m, codec in configs.items():
            cdir = os.path.join(base, "codec.%02d" % m)
            os.makedirs(cdir, exist_ok=True)
            cfg = codec.get_config() if codec else {"id": "crc32c"}
            with open(os.path.join(cdir, "config.json"), "w") as f:
                json.dump(cfg, f, sort_keys=True, indent=4)
            if codec:
                assert numcodecs.get_codec(cfg) == codec
            for a in which:
                arr = arrays[a]
                raw = arr.tobytes(order="A")  # memory order: column-major for the F array
                if codec:
                    enc = bytes(codec.encode(arr))
                    if bytes(codec.decode(enc)) != raw:
                        sys.exit("gen_testdata: numcodecs %s %s does not decode its own encoding" % (name, cfg))
                else:
                    enc = raw + crc32c(raw).to_bytes(4, "little")
                with open(os.path.join(cdir, "encoded.%02d.dat" % a), "wb") as f:
                    f.write(enc)
                ncases += 1

    greetings = ["¡Hola mundo!", "Hej Världen!", "Servus Woid!", "Hei maailma!", "Xin chào thế giới",
                 "Njatjeta Botë!", "Γεια σου κόσμε!", "こんにちは世界", "世界，你好！", "Helló, világ!",
                 "Zdravo svete!", "เฮลโลเวิลด์"]
    for name, codec, conv, etype in (("vlen-utf8", VLenUTF8(), lambda s: s, "utf8 string"),
                                     ("vlen-bytes", VLenBytes(), lambda s: s.encode("utf-8"),
                                      "bytes (hex-encoded here)")):
        items = [conv(s) for s in ("foo", "bar", "baz")]
        g = [conv(s) for s in greetings]
        arrays = {0: np.array(items * 300, dtype=object), 1: np.array(g * 100, dtype=object),
                  3: np.array(g * 1000, dtype=object).reshape(len(g), 100, 10, order="F")}
        base = os.path.join(out, "numcodecs", name)
        cdir = os.path.join(base, "codec.00")
        os.makedirs(cdir, exist_ok=True)
        with open(os.path.join(cdir, "config.json"), "w") as f:
            json.dump(codec.get_config(), f, sort_keys=True, indent=4)
        for a, arr in arrays.items():
            enc = bytes(codec.encode(arr))
            if list(codec.decode(enc)) != list(arr.ravel(order="A")):  # items in memory order
                sys.exit("gen_testdata: numcodecs %s does not decode its own encoding" % name)
            with open(os.path.join(cdir, "encoded.%02d.dat" % a), "wb") as f:
                f.write(enc)
            vals = [v if isinstance(v, str) else v.hex() for v in arr.ravel(order="C")]
            doc = {"descr": "|O", "shape": list(arr.shape), "fortran_order": bool(arr.ndim > 1 and arr.flags.f_contiguous),
                   "element_type": etype, "value_order": "C (row-major) logical order, regardless of fortran_order",
                   "values": vals}
            with open(os.path.join(base, "array.%02d.json" % a), "w") as f:
                json.dump(doc, f, ensure_ascii=False, indent=0)
            ncases += 1
    print("gen_testdata: numcodecs %s: %d golden vectors in %s" % (numcodecs.__version__, ncases,
                                                                   os.path.join(out, "numcodecs")))


def zarr_implementations_set(out):
    import zarr
    from numcodecs import GZip, Blosc, Zlib

    base = os.path.join(out, "zarr_implementations")
    os.makedirs(base, exist_ok=True)
    # a smooth synthetic RGB image with noise, no pixel 0 (so every chunk is written)
    y, x = np.mgrid[0:512, 0:512]
    rng = np.random.default_rng(SEED)
    img = np.stack([(x // 2) % 255, (y // 2) % 255, ((x + y) // 4) % 255], axis=-1)
    img = (img + rng.integers(0, 2, size=img.shape)).astype("|u1") + 1
    np.save(os.path.join(base, "reference_image.npy"), img)
    g = zarr.open_group(zarr.DirectoryStore(os.path.join(base, "zarr.zr")), mode="w")
    for name, comp in (("raw", None), ("gzip", GZip(1)), ("zlib", Zlib(1)), ("blosc", Blosc("lz4", 5, 1))):
        a = g.create_dataset(name, shape=img.shape, chunks=(100, 100, 1), dtype="|u1", compressor=comp,
                             fill_value=0, order="C")
        a[...] = img
        if not np.array_equal(g[name][...], img):
            sys.exit("gen_testdata: zarr-python does not read back its own %s array" % name)
    print("gen_testdata: zarr-python %s: zarr.zr (raw, gzip, zlib, blosc) in %s" % (zarr.__version__, base))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    sets = {"numcodecs": numcodecs_set, "zarr_implementations": zarr_implementations_set}
    for s in sys.argv[2:]:
        if s not in sets:
            sys.exit("gen_testdata: unknown set %r (have %s)" % (s, ", ".join(sets)))
        sets[s](out)


if __name__ == "__main__":
    main()
