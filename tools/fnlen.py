#!/usr/bin/env python3
"""fnlen.py: functions over a length limit in the project's C sources (issue #28: "no function over 150
lines in vol/ or zarr/, other than tables").

A function is a line starting with `{` at column 0 whose signature (the lines just above it, back to a
blank line, a comment, a preprocessor line or the end of a statement) has a parenthesised parameter list
and no `=` outside parentheses; it runs to the next line starting with `}` at column 0, and its length
counts both brace lines. A `{` at column 0 after `... =` opens a data table, which is not a function.

Long functions listed in the allow file (`file:function  # reason`, one a line, `#` comments) are
accepted; an entry naming a function that is gone or no longer long is stale. Exits 1 on any unlisted
long function or stale entry, 2 on bad usage, 0 otherwise.

  tools/fnlen.py [--root DIR] [--allow FILE] [--limit N] [FILE...]

FILE... (relative to the root) replaces the default set: vol/*.c, zarr/*.c, zarr/codecs/*.c,
filters/*.c, plugin/*.c.
"""
import argparse
import glob
import os
import re
import sys

DEFAULT_GLOBS = ["vol/*.c", "zarr/*.c", "zarr/codecs/*.c", "filters/*.c", "plugin/*.c"]
IDENT_BEFORE_PAREN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*$")
COMMENT = re.compile(r"/\*.*?\*/")


def signature(lines, i):
    """The signature lines above line i (a `{` at column 0), joined, or '' when there are none."""
    sig = []
    k = i - 1
    while k >= 0:
        raw = lines[k].strip()
        t = COMMENT.sub("", raw).split("//")[0].strip()  # a signature line's own trailing comment dropped
        if not t or t.endswith((";", "}")) or raw.startswith(("#", "/*", "*", "//")):
            break
        sig.insert(0, t)
        k -= 1
    return " ".join(sig)


def function_name(sig):
    """The function's name in `sig`, or None for anything else (a table, a struct or enum body)."""
    depth = 0
    name = None
    for pos, ch in enumerate(sig):
        if ch == "(":
            if depth == 0 and name is None:
                m = IDENT_BEFORE_PAREN.search(sig[:pos])
                if not m:
                    return None
                name = m.group(1)
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "=" and depth == 0:
            return None  # an initialiser: a data table
    return name


def functions(path):
    """(name, first line, length) of each function in the file at `path`."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("{"):
            name = function_name(signature(lines, i))
            j = i + 1
            while j < len(lines) and not lines[j].startswith("}"):
                j += 1
            if name:
                out.append((name, i + 1, j - i + 1))
            i = j
        i += 1
    return out


def read_allow(path):
    """{"file:function": line number} of the allow file (missing file: none)."""
    allow = {}
    if not path or not os.path.exists(path):
        return allow
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            entry = raw.split("#", 1)[0].strip()
            if entry:
                allow[entry] = n
    return allow


def main():
    ap = argparse.ArgumentParser(description="C functions over a length limit")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.dirname(here), help="project root (default: this tool's ..)")
    ap.add_argument("--allow", help="allow file (default: ROOT/tools/fnlen_allow.txt)")
    ap.add_argument("--limit", type=int, default=150, help="longest accepted function, in lines")
    ap.add_argument("files", nargs="*", help="files relative to ROOT (default: the project's sources)")
    a = ap.parse_args()
    allow_path = a.allow or os.path.join(a.root, "tools", "fnlen_allow.txt")
    if a.files:
        files = a.files
    else:
        files = sorted({os.path.relpath(p, a.root) for g in DEFAULT_GLOBS
                        for p in glob.glob(os.path.join(a.root, g))})
    allow = read_allow(allow_path)
    long_fns = {}
    for rel in files:
        for name, line, length in functions(os.path.join(a.root, rel)):
            if length > a.limit:
                long_fns[f"{rel}:{name}"] = (line, length)
    bad = 0
    for key, (line, length) in sorted(long_fns.items()):
        where = key.split(":")[0]
        if key in allow:
            print(f"allowed: {where}:{line}: {key.split(':')[1]} is {length} lines")
        else:
            print(f"LONG: {where}:{line}: {key.split(':')[1]} is {length} lines (limit {a.limit}): "
                  f"split it, or list '{key}' with a reason in {os.path.relpath(allow_path, a.root)}")
            bad += 1
    for key, n in sorted(allow.items(), key=lambda kv: kv[1]):
        if key not in long_fns:
            print(f"STALE: {os.path.relpath(allow_path, a.root)}:{n}: '{key}' is gone or no longer over "
                  f"{a.limit} lines: remove the entry")
            bad += 1
    print(f"fnlen: {len(files)} files, {len(long_fns)} functions over {a.limit} lines, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
