#!/usr/bin/env bash
# HDF5's command-line tools on zarr stores: h5ls -r, h5dump, h5diff (zarr vs native, zarr vs zarr),
# h5repack across connectors (native -> zarr v3 and v2, zarr -> native, zarr -> zarr), h5mkgrp and
# h5copy, with the connector chosen three ways: HDF5_VOL_CONNECTOR=zarr, the tools' --vol-name option,
# and auto-detection (only HDF5_PLUGIN_PATH set: HDF5 asks the plugin whether it can open the path).
# Every output that should be a zarr store is checked to be one (HDF5 falls back to native silently).
. "$(dirname "$0")/../lib.sh"
unset HDF5_VOL_CONNECTOR
cd "$TMP"

# is_zarr DIR [2|3]: DIR is a zarr store of that format (root zarr.json / .zgroup)
is_zarr() {
    local v=${2:-3}
    [ -d "$1" ] || return 1
    if [ "$v" = 3 ]; then grep -q '"zarr_format": *3' "$1/zarr.json"; else grep -q '"zarr_format": *2' "$1/.zgroup"; fi
}
# dump_of FILE OUT [h5dump args...]: h5dump output with the file name replaced by FILE
dump_of() {
    local f=$1 out=$2
    shift 2
    h5dump "$@" "$f" | sed "s|$f|FILE|" >"$out"
}

"$EXAMPLES/write_field" native.h5 >/dev/null || fail "write_field (native)"
HDF5_VOL_CONNECTOR=zarr "$EXAMPLES/write_field" f.zarr >/dev/null || fail "write_field (zarr)"
is_zarr f.zarr || fail "write_field did not make a zarr store: the connector did not load"
is_h5 native.h5 || fail "native.h5 is not an HDF5 file"

# ---- h5ls -r: three ways of choosing the connector, same listing as for the native file
h5ls -r native.h5 >ls.native || fail "h5ls native"
HDF5_VOL_CONNECTOR=zarr h5ls -r f.zarr >ls.env || fail "h5ls (HDF5_VOL_CONNECTOR)"
h5ls --vol-name=zarr -r f.zarr >ls.opt || fail "h5ls --vol-name=zarr"
h5ls -r f.zarr >ls.auto || fail "h5ls (auto-detected)"
grep -q '^/model/temperature *Dataset {10, 7}$' ls.native || fail "unexpected native listing"
for w in env opt auto; do diff -u ls.native ls.$w || fail "h5ls -r ($w) differs from native"; done
pass "h5ls -r: environment, --vol-name and auto-detection list what the native file lists"

# ---- h5dump: headers, data, attributes, dcpl (-p) identical to the native file's
dump_of native.h5 d.native -p || fail "h5dump native"
HDF5_VOL_CONNECTOR=zarr dump_of f.zarr d.env -p || fail "h5dump (HDF5_VOL_CONNECTOR)"
dump_of f.zarr d.opt -p --vol-name=zarr || fail "h5dump --vol-name=zarr"
dump_of f.zarr d.auto -p || fail "h5dump (auto-detected)"
grep -q 'CHUNKED ( 4, 3 )' d.native && grep -q '273.15' d.native || fail "unexpected native dump"
for w in env opt auto; do diff -u d.native d.$w || fail "h5dump -p ($w) differs from native"; done
pass "h5dump -p: environment, --vol-name and auto-detection print what the native file prints"

# ---- h5diff: zarr vs native, zarr vs zarr; a real difference is found
h5diff -v --vol-name-2=zarr native.h5 f.zarr >diff.opt || fail "h5diff native vs zarr (--vol-name-2)"
grep -q 'attribute: <valid_range of </model/temperature>>' diff.opt || fail "h5diff did not compare attributes"
h5diff native.h5 f.zarr || fail "h5diff native vs zarr (auto-detected)"
h5diff --vol-name-1=zarr f.zarr native.h5 || fail "h5diff zarr vs native (--vol-name-1)"
cp -r f.zarr g.zarr
h5diff --vol-name-1=zarr --vol-name-2=zarr f.zarr g.zarr || fail "h5diff zarr vs zarr (--vol-name-1/2)"
HDF5_VOL_CONNECTOR=zarr h5diff f.zarr g.zarr || fail "h5diff zarr vs zarr (HDF5_VOL_CONNECTOR)"
# change one value in a copy through the connector: h5diff must report exactly that difference
$PY - <<'PY' || fail "could not edit the copy"
import json, os, struct
p = "g.zarr/model/temperature/c/0/0"          # chunk (0,0): element (0,0) is the first float64
b = bytearray(open(p, "rb").read())
struct.pack_into("<d", b, 0, -1.0)
open(p, "wb").write(b)
PY
set +e
h5diff -r --vol-name-1=zarr --vol-name-2=zarr f.zarr g.zarr /model/temperature >diff.changed
rc=$?
set -e
[ $rc = 1 ] || fail "h5diff of a changed store exited $rc, expected 1"
grep -q '1 differences found' diff.changed && grep -q '^\[ 0 0 \] *273.15 *-1 *274.15' diff.changed ||
    { cat diff.changed; fail "h5diff did not report the changed value"; }
pass "h5diff: native vs zarr and zarr vs zarr report no difference; a changed value is reported"

# ---- h5repack across connectors
h5repack --dst-vol-name=zarr native.h5 n2z.zarr || fail "h5repack native -> zarr"
is_zarr n2z.zarr 3 || fail "h5repack --dst-vol-name=zarr did not write a zarr v3 store"
h5repack --dst-vol-name=zarr --dst-vol-info="version=2" native.h5 n2z2.zarr || fail "h5repack native -> zarr v2"
is_zarr n2z2.zarr 2 || fail "h5repack --dst-vol-info=version=2 did not write a zarr v2 store"
[ -f n2z2.zarr/model/temperature/.zarray ] || fail "v2 store has no .zarray"
h5repack --src-vol-name=zarr f.zarr z2n.h5 || fail "h5repack zarr -> native"
is_h5 z2n.h5 || fail "h5repack zarr -> native did not write an HDF5 file"
h5repack --src-vol-name=zarr --dst-vol-name=zarr f.zarr z2z.zarr || fail "h5repack zarr -> zarr"
is_zarr z2z.zarr 3 || fail "h5repack zarr -> zarr did not write a zarr store"
h5repack --src-vol-name=zarr --dst-vol-name=zarr --dst-vol-info="version=2" n2z.zarr z3to2.zarr ||
    fail "h5repack zarr v3 -> zarr v2"
is_zarr z3to2.zarr 2 || fail "h5repack zarr v3 -> v2 did not write a v2 store"
for s in n2z.zarr n2z2.zarr z2z.zarr z3to2.zarr; do
    h5diff --vol-name-2=zarr native.h5 $s || fail "h5diff native vs $s"
    dump_of $s d.$s -p --vol-name=zarr || fail "h5dump $s"
    diff -u d.native d.$s || fail "h5dump of $s differs from native"
done
h5diff native.h5 z2n.h5 || fail "h5diff native vs zarr -> native"
dump_of z2n.h5 d.z2n -p && diff -u d.native d.z2n || fail "h5dump of zarr -> native differs"
pass "h5repack native -> zarr v3/v2, zarr -> native, zarr -> zarr (v3 and v3 -> v2): same content"

# ---- h5mkgrp: three ways, groups land in the store as zarr groups
HDF5_VOL_CONNECTOR=zarr h5mkgrp -p f.zarr /a/b/c || fail "h5mkgrp -p (HDF5_VOL_CONNECTOR)"
h5mkgrp --vol-name=zarr f.zarr /viaopt || fail "h5mkgrp --vol-name=zarr"
h5mkgrp f.zarr /viaauto || fail "h5mkgrp (auto-detected)"
h5mkgrp --vol-name=zarr n2z2.zarr /v2grp || fail "h5mkgrp on a v2 store"
for g in a a/b a/b/c viaopt viaauto; do
    grep -q '"node_type": *"group"' f.zarr/$g/zarr.json || fail "h5mkgrp: no zarr group $g"
done
[ -f n2z2.zarr/v2grp/.zgroup ] || fail "h5mkgrp on a v2 store made no v2 group"
[ ! -e n2z2.zarr/v2grp/zarr.json ] || fail "h5mkgrp on a v2 store made a v3 node"
h5ls -r f.zarr | awk '{print $1}' >ls.after
printf '%s\n' / /a /a/b /a/b/c /model /model/temperature /viaauto /viaopt >ls.want
diff -u ls.want ls.after || fail "listing after h5mkgrp"
pass "h5mkgrp (environment, --vol-name, auto-detection, v2 store) makes zarr groups"

# ---- h5copy: within a store, into another store; across connectors refused (HDF5), across formats under
# one connector (pass-through) copied
HDF5_VOL_CONNECTOR=zarr h5copy -i f.zarr -o f.zarr -s /model/temperature -d /a/t2 || fail "h5copy (env)"
h5copy -i f.zarr -o f.zarr -s /model -d /model_opt || fail "h5copy (auto-detected)"
# h5copy has no --vol-name; a new output file is created with the default connector, so new stores
# need HDF5_VOL_CONNECTOR; an existing store is auto-detected
HDF5_VOL_CONNECTOR=zarr h5copy -i f.zarr -o other.zarr -s /model -d /m || fail "h5copy into a new store"
HDF5_VOL_CONNECTOR=zarr h5copy -p -i f.zarr -o other.zarr -s /model/temperature -d /x/y/t ||
    fail "h5copy -p into another store"
h5copy -i f.zarr -o other.zarr -s /a -d /auto_a || fail "h5copy into an existing store (auto-detected)"
[ -f other.zarr/auto_a/b/c/zarr.json ] || fail "h5copy (auto-detected): group tree missing"
is_zarr other.zarr || fail "h5copy did not write a zarr store"
[ -f f.zarr/a/t2/zarr.json ] && [ -f f.zarr/model_opt/temperature/zarr.json ] || fail "h5copy: nodes missing"
h5diff f.zarr f.zarr /model/temperature /a/t2 || fail "h5copy: copied dataset differs"
h5diff native.h5 f.zarr /model /model_opt || fail "h5copy: copied group differs"
h5diff native.h5 other.zarr /model /m || fail "h5copy: group copied into another store differs"
h5diff native.h5 other.zarr /model/temperature /x/y/t || fail "h5copy -p: dataset differs"
set +e
h5copy -i native.h5 -o f.zarr -s /model -d /fromnative >copy.err 2>&1
rc=$?
set -e
[ $rc != 0 ] || fail "h5copy native -> zarr claimed success (H5Ocopy cannot cross connectors)"
[ ! -e f.zarr/fromnative ] || fail "a refused h5copy left a node behind"
pass "h5copy within a store and into another store; native -> zarr refused across two connectors"
# under the one global setting both files go through the connector (native.h5 passed through), and
# H5Ocopy crosses formats both ways
HDF5_VOL_CONNECTOR=zarr h5copy -i native.h5 -o f.zarr -s /model -d /fromnative || fail "h5copy native -> zarr (global setting)"
[ -f f.zarr/fromnative/temperature/zarr.json ] || fail "h5copy native -> zarr made no zarr array"
h5diff native.h5 f.zarr /model /fromnative || fail "h5copy native -> zarr: copy differs"
HDF5_VOL_CONNECTOR=zarr h5copy -i f.zarr -o back.h5 -s /model -d /back || fail "h5copy zarr -> new native file"
is_h5 back.h5 || fail "h5copy zarr -> back.h5 made no native HDF5 file"
h5diff native.h5 back.h5 /model /back || fail "h5copy zarr -> native: copy differs"
pass "h5copy native -> zarr and zarr -> a new native file under HDF5_VOL_CONNECTOR=zarr"
finish
