"""refs_compare.py ORIG.nc REFS.json [ORIG REFS ...]: opens each ORIG with xarray (netCDF4) and its REFS
through fsspec's ReferenceFileSystem (zarr 2.13, consolidated=False), and checks that every variable has
the same dimensions, dtype and values (NaN equal to NaN) and the same attributes. One line per pair;
exit 0 when all are identical, 1 when one differs, 77 when fsspec is not installed (python3-fsspec)."""
import sys

import numpy as np

try:
    import fsspec  # noqa: F401
except ImportError:
    print("SKIP: no fsspec (Debian python3-fsspec)")
    sys.exit(77)
import xarray as xr


def same_values(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        return np.array_equal(a, b, equal_nan=True)
    if a.dtype.kind == "O":  # strings, with NaN for missing ones
        return all(x == y or (x != x and y != y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist()))
    return np.array_equal(a, b)


def same_attr(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.size != y.size:
        return False
    if x.dtype.kind in "fc" and y.dtype.kind in "fc":
        return bool(np.array_equal(x.ravel(), y.ravel(), equal_nan=True))
    return bool(np.all(x.ravel() == y.ravel()))


def compare(orig, refs):
    """The differences between ORIG read with xarray and REFS read through fsspec (a list of lines)."""
    a = xr.open_dataset(orig)
    b = xr.open_dataset("reference://", engine="zarr",
                        backend_kwargs={"storage_options": {"fo": refs}, "consolidated": False})
    bad = []
    if set(a.variables) != set(b.variables):
        bad.append(f"variables differ: {sorted(set(a.variables) ^ set(b.variables))}")
    for name in sorted(set(a.variables) & set(b.variables)):
        va, vb = a[name].variable, b[name].variable
        if va.dims != vb.dims:
            bad.append(f"{name}: dims {va.dims} != {vb.dims}")
        elif not same_values(va.values, vb.values):
            bad.append(f"{name}: values differ ({va.dtype} {va.values!r:.200} vs {vb.dtype} {vb.values!r:.200})")
        for k in set(va.attrs) | set(vb.attrs):
            if k not in va.attrs or k not in vb.attrs or not same_attr(va.attrs[k], vb.attrs[k]):
                bad.append(f"{name}: attribute {k}: {va.attrs.get(k)!r} != {vb.attrs.get(k)!r}")
    for k in set(a.attrs) | set(b.attrs):
        if k not in a.attrs or k not in b.attrs or not same_attr(a.attrs[k], b.attrs[k]):
            bad.append(f"global attribute {k}: {a.attrs.get(k)!r} != {b.attrs.get(k)!r}")
    return bad


def main(args):
    """Pairs ORIG REFS: prints "ORIG identical", "ORIG differs: ...", or "ORIG no-xarray: ..." when
    xarray can't open the original itself. Exit 1 when any pair differs."""
    rc = 0
    for orig, refs in zip(args[0::2], args[1::2]):
        try:
            xr.open_dataset(orig).load()
        except Exception as e:  # the original is beyond xarray: nothing to compare
            print(f"{orig} no-xarray: {type(e).__name__}: {str(e)[:200]}".replace("\n", " "))
            continue
        try:
            bad = compare(orig, refs)
        except Exception as e:
            bad = [f"reading the references failed: {type(e).__name__}: {str(e)[:300]}"]
        if bad:
            rc = 1
            print((f"{orig} differs: " + "; ".join(bad))[:2000].replace("\n", " "))
        else:
            print(f"{orig} identical")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
