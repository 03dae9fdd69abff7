#!/usr/bin/env python3
"""depgraph.py: checks that the #include "..." graph of the sources keeps to their layers.

Reads the quoted includes of every .c and .h file under the scanned directories (by default vol/,
zarr/ and zarr/codecs/ of the repository) and the layer file (by default tools/layers.txt), which
assigns every one of those files to a named layer, lowest first. It fails (exit 1) and prints the
offending files or edges when:
  - a scanned file is not in the layer file (new files must be placed), or the layer file names a file
    that does not exist;
  - a file includes a header of a higher layer;
  - an include cycle spans more than one layer. Cycles are found between modules: a module is a .c
    file and the .h of the same name (zarr/engine.c + zarr/engine.h), so a header whose implementation
    includes what includes that header closes a cycle; cycles inside one layer are allowed.

With --objects DIR (the compiled objects of those files, e.g. a CMake target's directory), calls are
checked too: a file whose object uses a symbol defined in the object of a file of a higher layer fails,
unless the layer file allows that call ('up FROM TO SYMBOL...': a known call up, kept visible). Only
calls between scanned files count; allowances no call uses any more are reported, not failed.

An include resolves as the compiler sees it: next to the including file, then in the include
directories (-I, by default vol, zarr and include). Includes that resolve outside the scanned files
(public headers, system headers in quotes) are not edges.

Layer file format: '#' starts a comment; 'layer NAME' starts a layer (each one above the previous);
'up FROM TO SYMBOL...' allows calls up (see --objects); every other non-empty line is a file path
relative to the root.

Usage: depgraph.py [--root DIR] [--layers FILE] [-I DIR]... [--objects DIR]... [DIR...]
"""

import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_layers(path, allowed=None):
    """Returns (names of the layers lowest first, {file: layer index}, errors); fills `allowed` with
    {(from, to): set of symbols} of the 'up' lines."""
    names, where, errors = [], {}, []
    with open(path, encoding="utf-8") as fh:
        for no, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("up "):
                parts = line.split()
                if len(parts) < 4:
                    errors.append(f"{path}:{no}: want 'up FROM TO SYMBOL...'")
                elif allowed is not None:
                    allowed.setdefault((parts[1], parts[2]), set()).update(parts[3:])
                continue
            if line.startswith("layer "):
                name = line[6:].strip()
                if not name or name in names:
                    errors.append(f"{path}:{no}: layer name '{name}' missing or used twice")
                names.append(name)
                continue
            if not names:
                errors.append(f"{path}:{no}: '{line}' comes before any 'layer NAME' line")
                continue
            if line in where:
                errors.append(f"{path}:{no}: '{line}' is listed twice")
            where[line] = len(names) - 1
    return names, where, errors


def scan(root, dirs):
    """The .c and .h files directly in each of `dirs` (relative paths, sorted)."""
    files = []
    for d in dirs:
        full = os.path.join(root, d)
        for name in sorted(os.listdir(full)):
            if name.endswith((".c", ".h")) and os.path.isfile(os.path.join(full, name)):
                files.append(os.path.normpath(os.path.join(d, name)))
    return files


def includes(root, files, incdirs):
    """{file: [(included file, line)]} for the includes that resolve to one of `files`."""
    known, edges = set(files), {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        out = []
        for m in INCLUDE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            for base in [os.path.dirname(f)] + incdirs:
                cand = os.path.normpath(os.path.join(base, m.group(1)))
                if os.path.isfile(os.path.join(root, cand)):
                    if cand in known:
                        out.append((cand, line))
                    break
        edges[f] = out
    return edges


def module(f):
    return os.path.splitext(f)[0]


def sccs(nodes, succ):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(succ.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(succ.get(nxt, ())))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def symbols(objdirs, root_files):
    """{source file: (defined symbols, undefined symbols)} of the objects under `objdirs` whose sources
    (the object's path below its directory without .o: CMake's vol/node.c.o) are in `root_files`."""
    out = {}
    for d in objdirs:
        for dirpath, _, fnames in os.walk(d):
            for name in fnames:
                if not name.endswith(".o"):
                    continue
                obj = os.path.join(dirpath, name)
                src = os.path.normpath(os.path.relpath(obj, d)[:-2])
                if src not in root_files:
                    continue
                res = subprocess.run(["nm", obj], capture_output=True, text=True, check=True)
                defs, undefs = out.setdefault(src, (set(), set()))
                for line in res.stdout.splitlines():
                    p = line.split()
                    if len(p) == 3 and p[1] in "TDBRC":
                        defs.add(p[2])
                    elif len(p) == 2 and p[0] == "U":
                        undefs.add(p[1])
    return out


def check_calls(names, where, allowed, syms):
    """The upward calls between objects not allowed by 'up' lines; and the stale allowances."""
    errors, notes, used = [], [], set()
    owner = {}
    for src, (defs, _) in syms.items():
        for d in defs:
            owner[d] = src
    ncalls = 0
    for src in sorted(syms):
        up = {}
        for u in syms[src][1]:
            dst = owner.get(u)
            if dst is None or dst == src:
                continue
            ncalls += 1
            if where[dst] > where[src]:
                if u in allowed.get((src, dst), ()):
                    used.add((src, dst, u))
                else:
                    up.setdefault(dst, []).append(u)
        for dst in sorted(up):
            errors.append(f"upward call: {src} [{names[where[src]]}] -> {dst} [{names[where[dst]]}]: "
                          f"{', '.join(sorted(up[dst]))}")
    for (src, dst), us in sorted(allowed.items()):
        for u in sorted(us):
            if (src, dst, u) not in used:
                notes.append(f"note: allowance not used any more: up {src} {dst} {u}")
    return errors, notes, ncalls


def check(root, layers_path, dirs, incdirs, objdirs=()):
    allowed = {}
    names, where, errors = read_layers(layers_path, allowed)
    files = scan(root, dirs)
    for f in files:
        if f not in where:
            errors.append(f"unlisted file: {f} (place it in a layer of {os.path.relpath(layers_path, root)})")
    scanned = set(files)
    for f in sorted(where):
        if f not in scanned:
            errors.append(f"listed but not found: {f}")
    for (src, dst) in allowed:
        for f in (src, dst):
            if f not in where:
                errors.append(f"'up' line names a file in no layer: {f}")
    if errors:
        return errors, [], 0, 0
    edges = includes(root, files, incdirs)
    nedges = 0
    for f in files:
        for h, line in edges[f]:
            nedges += 1
            if where[h] > where[f]:
                errors.append(f"upward include: {f}:{line} [{names[where[f]]}] -> {h} [{names[where[h]]}]")
    succ = {}
    for f in files:
        for h, _ in edges[f]:
            if module(h) != module(f):
                succ.setdefault(module(f), set()).add(module(h))
    members = {}
    for f in files:
        members.setdefault(module(f), []).append(f)
    for comp in sccs(sorted(members), succ):
        if len(comp) < 2:
            continue
        inside = set(comp)
        spanned = sorted({names[where[f]] for m in comp for f in members[m]}, key=names.index)
        if len(spanned) < 2:
            continue
        errors.append(f"include cycle across layers {', '.join(spanned)}: modules {', '.join(comp)}")
        for m in comp:
            for f in members[m]:
                for h, line in edges[f]:
                    if module(h) in inside and module(h) != m:
                        errors.append(f"  {f}:{line} [{names[where[f]]}] -> {h} [{names[where[h]]}]")
    notes, ncalls = [], 0
    if objdirs:
        cerr, notes, ncalls = check_calls(names, where, allowed, symbols(objdirs, set(files)))
        errors += cerr
    return errors, notes, nedges, ncalls


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.dirname(here), help="the repository (default: above tools/)")
    ap.add_argument("--layers", help="the layer file (default: ROOT/tools/layers.txt)")
    ap.add_argument("-I", dest="incdirs", action="append", help="include directory, relative to ROOT")
    ap.add_argument("--objects", action="append", default=[], help="a directory of compiled objects")
    ap.add_argument("dirs", nargs="*", help="directories to scan, relative to ROOT")
    a = ap.parse_args()
    layers = a.layers or os.path.join(a.root, "tools", "layers.txt")
    dirs = a.dirs or ["vol", "zarr", "zarr/codecs"]
    incdirs = a.incdirs or ["vol", "zarr", "include"]
    errors, notes, nedges, ncalls = check(a.root, layers, dirs, incdirs, a.objects)
    for n in notes:
        print(n)
    if errors:
        for e in errors:
            print(e)
        print(f"depgraph: FAILED ({sum(1 for e in errors if not e.startswith('  '))} problems)")
        return 1
    calls = f", {ncalls} calls between objects" if a.objects else ""
    print(f"depgraph: ok ({len(scan(a.root, dirs))} files, {nedges} include edges{calls}, layers hold)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
