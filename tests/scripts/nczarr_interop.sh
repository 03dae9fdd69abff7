#!/usr/bin/env bash
# NCZarr interop both ways for netCDF programs (issue 12).
#  (a) A zarr v2 store written through the connector by netCDF programs (ncgen -4, and nccopy -k nc4 of a
#      native netCDF-4 file, HDF5_VOL_CONNECTOR="zarr version=2") is read by netCDF's own NCZarr in
#      pure-zarr mode (ncdump 'file://...#mode=zarr,file'): every variable's values and dimension lengths
#      equal ncdump of the netCDF-4 original, types and attributes too, with the differences NCZarr
#      4.9.3's pure-zarr mode makes asserted one by one (below).
#  (b) Stores NCZarr writes (ncgen -4 into '#mode=zarr,file' and '#mode=nczarr,file') are read by netCDF
#      programs through HDF5 and the connector: tools/h5zarr_pointer makes a pointer file for the store
#      (docs/FORMAT.md "Pointer files"); HDF5_VOL_CONNECTOR=zarr ncdump / nccopy of the pointer show
#      the values NCZarr's own ncdump shows, on netCDF's phony dimensions of the same lengths.
#  The pointer tool refuses stores outside the pointer's directory, non-stores, and replacing a file
#  that is not a pointer.
. "$(dirname "$0")/../lib.sh"
[ -n "${H5ZARR_DEPS:-}" ] && [ -x "$H5ZARR_DEPS/netcdf/bin/ncdump" ] ||
    { echo "SKIP: no netCDF build in the deps prefix (H5ZARR_DEPS=${H5ZARR_DEPS:-})"; exit 77; }
PTR=$H5ZARR_BUILD/tools/h5zarr_pointer
[ -x "$PTR" ] || fail "no $PTR"
# As `make env` sets it: our plugin folder (connector + filters) and netCDF's NCZarr filter folder.
export HDF5_PLUGIN_PATH="$H5ZARR_PLUGIN_DIR:$H5ZARR_DEPS/netcdf/hdf5/lib/plugin"
export LD_LIBRARY_PATH="$H5ZARR_DEPS/netcdf/lib:$H5ZARR_DEPS/hdf5/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset HDF5_VOL_CONNECTOR H5ZARR_CONFIG
cd "$TMP"
url() { echo "file://$TMP/$1#mode=$2,file"; }

cat >t.cdl <<'CDL'
netcdf t {
dimensions:
	time = UNLIMITED ;
	lat = 3 ;
	lon = 4 ;
	nv = 2 ;
variables:
	double time(time) ;
		time:units = "days since 2000-01-01" ;
		time:calendar = "standard" ;
	float lat(lat) ;
		lat:units = "degrees_north" ;
	float lon(lon) ;
		lon:units = "degrees_east" ;
	short tas(time, lat, lon) ;
		tas:scale_factor = 0.01 ;
		tas:add_offset = 273.15 ;
		tas:_FillValue = -999s ;
		tas:units = "K" ;
	int flags(lat) ;
		flags:_DeflateLevel = 4 ;
		flags:_Shuffle = "true" ;
		flags:valid_range = 0, 100 ;
	float bnds(lat, nv) ;
	int scalar ;
		scalar:note = "a scalar" ;

// global attributes:
		:title = "interop" ;
		:Conventions = "CF-1.8" ;
		:version = 3 ;
data:
 time = 0, 1 ;
 lat = -10, 0, 10 ;
 lon = 0, 90, 180, 270 ;
 tas = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, _, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 ;
 flags = 7, 8, 9 ;
 bnds = -15, -5, -5, 5, 5, 15 ;
 scalar = 42 ;

group: sub {
  dimensions:
	x = 5 ;
  variables:
	float v(x) ;
		v:long_name = "in a group" ;
	int w(lat) ;
  data:
	v = 0.5, 1.5, 2.5, 3.5, 4.5 ;
	w = 1, 2, 3 ;
  }
}
CDL

# cdl.py: ncdump output -> facts (dims, variables, attributes, data tokens per group)
cat >cdl.py <<'PY'
import re, sys, json
def facts(text):
    """ncdump output -> {'dims': {(grp,name): len}, 'vars': {(grp,name): (type, dims)},
    'atts': {(grp,var,name): (type, value)}, 'data': {(grp,name): [tokens]}}"""
    out = {'dims': {}, 'vars': {}, 'atts': {}, 'data': {}}
    grp, sec, cur, buf = [], None, None, None
    for line in text.splitlines():
        s = line.strip()
        g = re.match(r'group: (\S+) \{$', s)
        if g: grp.append(g.group(1)); sec = None; continue
        if s.startswith('} // group'): grp.pop(); sec = None; continue
        if s in ('dimensions:', 'variables:', 'data:'): sec = s[:-1]; continue
        if s.startswith('// global attributes:') or s.startswith('// group attributes:'): sec = 'variables'; continue
        G = '/'.join(grp)
        if sec == 'dimensions' and s:
            m = re.match(r'(\S+) = (UNLIMITED ; // \((\d+) currently\)|(\d+) ;)$', s)
            out['dims'][(G, m.group(1))] = int(m.group(3) or m.group(4))
        elif sec == 'variables' and s:
            m = re.match(r'(?:(\w+) )?(\w*):(\w+) = (.*) ;$', s)
            if m:
                out['atts'][(G, m.group(2), m.group(3))] = (m.group(1) or '', m.group(4)); continue
            m = re.match(r'(\w+) (\w+)(?:\((.*)\))? ;$', s)
            out['vars'][(G, m.group(2))] = (m.group(1), tuple(x.strip() for x in (m.group(3) or '').split(',') if x.strip()))
        elif sec == 'data' and s:
            if cur is None:
                m = re.match(r'(\w+) =(.*)$', s); cur, buf = m.group(1), m.group(2)
            else:
                buf += ' ' + s
            if buf.rstrip().endswith(';'):
                out['data'][(G, cur)] = [t for t in re.split(r'[,\s]+', buf.rstrip()[:-1]) if t]
                cur = None
    return out
def load(path): return facts(open(path).read())
PY
cat >check.py <<'PY'
import json, os, re, sys
sys.path.insert(0, os.getcwd())
import cdl

def dimlen(f, g, name):
    """Length of dimension `name` seen from group g (netCDF looks in the group, then its ancestors)."""
    parts = g.split('/') if g else []
    for i in range(len(parts), -1, -1):
        k = ('/'.join(parts[:i]), name)
        if k in f['dims']:
            return f['dims'][k]
    raise AssertionError(f"no dimension {name} for group '{g}'")

def shapes(f):
    return {k: tuple(dimlen(f, k[0], d) for d in dims) for k, (t, dims) in f['vars'].items()}

def check_a(native, nczarr, store):
    """A store the connector wrote, read by NCZarr (pure zarr) vs the netCDF-4 original."""
    a, b = cdl.load(native), cdl.load(nczarr)
    # 1. NCZarr 4.9.3 suppresses arrays of shape [] (its pure-zarr reader: "Empty shape ... suppressed"):
    #    the scalar variable is in the store, not in NCZarr's view.
    assert json.load(open(f"{store}/scalar/.zarray"))["shape"] == [], "scalar not stored as shape []"
    assert ('', 'scalar') in a['vars'] and ('', 'scalar') not in b['vars'], b['vars']
    # 2. netCDF dimensions without a coordinate variable (nv, sub/x) are HDF5 dimension scales whose
    #    document the connector hides from zarr readers (docs/FORMAT.md "Dimension names"): NCZarr sees
    #    no variable for them, only the dimensions the arrays' _ARRAY_DIMENSIONS name.
    extra = set(b['vars']) - set(a['vars'])
    assert extra == set(), extra
    assert os.path.exists(f"{store}/nv/.h5zarr_array") and not os.path.exists(f"{store}/nv/.zarray")
    assert os.path.exists(f"{store}/sub/x/.h5zarr_array") and not os.path.exists(f"{store}/sub/x/.zarray")
    # 3. values: every variable (but the scalar) equal, fill values included (shown as _)
    for k, vals in a['data'].items():
        if k != ('', 'scalar'):
            assert b['data'].get(k) == vals, (k, vals, b['data'].get(k))
    # 4. types and dimensions by name and length; NCZarr's pure-zarr mode makes every
    #    _ARRAY_DIMENSIONS name a dimension of the root group and has no unlimited dimensions
    #    (time = 2, not UNLIMITED ; // (2 currently)).
    for k, (t, dims) in a['vars'].items():
        if k != ('', 'scalar'):
            assert b['vars'][k] == (t, dims), (k, a['vars'][k], b['vars'][k])
    assert all(g == '' for g, _ in b['dims']), b['dims']
    assert {n: l for (g, n), l in a['dims'].items()} == {n: l for (g, n), l in b['dims'].items()}
    assert shapes(b) == {k: v for k, v in shapes(a).items() if k != ('', 'scalar')} | \
        {k: shapes(b)[k] for k in extra}
    # 5. attributes: equal with their netCDF types; the connector's reserved `_h5zarr` is a top-level
    #    key of the .zarray/.zgroup (as NCZarr's own _nczarr_array), which NCZarr ignores: no attribute.
    want = {k: v for k, v in a['atts'].items() if k[1] != 'scalar'}
    assert b['atts'] == want, (set(b['atts'].items()) ^ set(want.items()))
    assert not [k for k in b['atts'] if k[2] == '_h5zarr'], b['atts']

def check_b(own, via, mode):
    """A store NCZarr wrote: NCZarr's own ncdump vs ncdump through the connector (pointer file)."""
    a, b = cdl.load(own), cdl.load(via)
    # values: every variable, fill values included
    assert set(a['data']) == set(b['data']), set(a['data']) ^ set(b['data'])
    for k, vals in a['data'].items():
        assert b['data'][k] == vals, (k, vals, b['data'][k])
    # netCDF sees HDF5 datasets without dimension scales: its phony dimensions, of the same lengths;
    # the scalar (NCZarr stores shape [1]) is 1-D of length 1 through the connector
    assert all(re.fullmatch(r'phony_dim_\d+', n) for g, n in b['dims']), b['dims']
    sa, sb = shapes(a), shapes(b)
    assert set(sa) == set(sb)
    for k in sa:
        want = sa[k] if sa[k] else (1,)
        assert sb[k] == want, (k, sa[k], sb[k])
        assert a['vars'][k][0] == b['vars'][k][0], (k, a['vars'][k], b['vars'][k])
    # attributes: in nczarr mode NCZarr records each attribute's netCDF type (_nczarr_attr.types),
    # which the connector uses: equal with types. In pure-zarr mode there are only JSON values: the
    # connector infers int64 (3LL) and string attributes where NCZarr infers int and char; _FillValue
    # has the variable's type in both.
    if mode == 'nczarr':
        assert a['atts'] == b['atts'], set(a['atts'].items()) ^ set(b['atts'].items())
    else:
        norm = lambda t, v: re.sub(r'(-?\d+)LL\b', r'\1', v)
        assert {k: norm(*v) for k, v in a['atts'].items()} == {k: norm(*v) for k, v in b['atts'].items()}
        for k, (t, v) in b['atts'].items():
            if v.startswith('"'):
                assert t == 'string' and a['atts'][k][0] == '', (k, a['atts'][k], b['atts'][k])
    assert b['atts'][('', 'tas', '_FillValue')] == ('', '-999s'), b['atts'][('', 'tas', '_FillValue')]

globals()[sys.argv[1]](*sys.argv[2:])
PY

# ---- (a) netCDF programs write v2 through the connector; NCZarr (pure zarr) reads it
ncgen -4 -o native.nc t.cdl || fail "ncgen -4 (native)"
ncdump native.nc >native.cdl || fail "ncdump native.nc"
HDF5_VOL_CONNECTOR="zarr version=2" ncgen -4 -o "$TMP/x.zarr" t.cdl || fail "ncgen -4 through the connector"
HDF5_VOL_CONNECTOR="zarr version=2" nccopy -k nc4 native.nc "$TMP/y.zarr" || fail "nccopy -k nc4 through the connector"
for s in x y; do
    grep -q '"zarr_format": *2' $s.zarr/.zgroup || fail "$s.zarr is no zarr v2 store"
    grep -q '"id": *"zlib"' $s.zarr/flags/.zarray || fail "$s.zarr/flags is not deflated: $(cat $s.zarr/flags/.zarray)"
    [ "$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["_ARRAY_DIMENSIONS"])' $s.zarr/tas/.zattrs)" = \
        "['time', 'lat', 'lon']" ] || fail "$s.zarr/tas has no _ARRAY_DIMENSIONS [time, lat, lon]"
    ncdump "$(url $s.zarr zarr)" >$s.nczarr.cdl 2>$s.err || fail "NCZarr's ncdump of $s.zarr: $(cat $s.err)"
    $PY check.py check_a native.cdl $s.nczarr.cdl $s.zarr || fail "NCZarr's view of $s.zarr differs (above)"
done
pass "ncgen -4 / nccopy -k nc4 into zarr v2 through the connector: NCZarr (mode=zarr) reads equal values, types, dims and attributes (listed differences: the shape-[] scalar suppressed, dimension-only arrays as variables, no unlimited, dims in the root group, _h5zarr as a JSON string)"

# ---- (b) NCZarr writes, netCDF programs read through a pointer file and the connector
for mode in zarr nczarr; do
    ncgen -4 -o "$(url n_$mode.zarr $mode)" t.cdl || fail "ncgen -4 into NCZarr ($mode)"
    "$PTR" n_$mode.nc n_$mode.zarr || fail "h5zarr_pointer n_$mode.nc n_$mode.zarr"
    tail -c 512 n_$mode.nc | head -n 2 | cmp -s - <(printf 'h5zarr pointer v2\nstore=n_%s.zarr\n' $mode) ||
        fail "n_$mode.nc does not end with a pointer record"
    [ "$(head -c 8 n_$mode.nc | od -An -tx1 | tr -d ' \n')" = 894844460d0a1a0a ] ||
        fail "n_$mode.nc has no HDF5 signature at 0"
    grep -q '"pointer":"n_'$mode'.nc"' n_$mode.zarr/.h5zarr_pointer || fail "n_$mode.zarr records no owner"
    ncdump "$(url n_$mode.zarr $mode)" >n_$mode.own.cdl || fail "NCZarr's ncdump ($mode)"
    HDF5_VOL_CONNECTOR=zarr ncdump n_$mode.nc >n_$mode.via.cdl 2>n_$mode.err ||
        fail "ncdump through the connector of the NCZarr store ($mode): $(cat n_$mode.err)"
    $PY check.py check_b n_$mode.own.cdl n_$mode.via.cdl $mode || fail "the connector's view of n_$mode.zarr differs (above)"
    # a netCDF program reading through the connector and writing native netCDF-4 (pass-through)
    HDF5_VOL_CONNECTOR=zarr nccopy -k nc4 n_$mode.nc back_$mode.nc || fail "nccopy from the pointer ($mode)"
    is_h5 back_$mode.nc || fail "back_$mode.nc is not native"
    diff <(sed 1d n_$mode.via.cdl) <(ncdump back_$mode.nc | sed 1d) || fail "nccopy'd native copy differs ($mode)"
done
# without the connector the pointer is an empty HDF5 file naming its store
ncdump -h n_zarr.nc >plain.hdr || fail "ncdump of the pointer without the connector"
grep -q 'h5zarr_store = "n_zarr.zarr"' plain.hdr || fail "the pointer does not name its store to plain netCDF"
pass "NCZarr stores (mode=zarr and mode=nczarr) read by ncdump/nccopy through h5zarr_pointer + the connector: NCZarr's values, phony dims of the same lengths, attributes (nczarr mode: with NCZarr's types)"

# ---- the pointer tool refuses what a pointer cannot be
mkdir -p other && cp -r n_zarr.zarr other/s.zarr
! "$PTR" p.nc other/s.zarr 2>err.txt && grep -q 'not in the directory' err.txt || fail "a store elsewhere: $(cat err.txt)"
mkdir plain
! "$PTR" p.nc plain 2>err.txt && grep -q 'is no zarr store' err.txt || fail "a non-store: $(cat err.txt)"
! "$PTR" native.nc n_zarr.zarr 2>err.txt && grep -q 'not a pointer file' err.txt || fail "replacing a data file: $(cat err.txt)"
ncdump native.nc | sed 1d | diff - <(sed 1d native.cdl) >/dev/null || fail "native.nc was changed"
[ ! -e p.nc ] || fail "a refused pointer was written"
! "$PTR" n_zarr.nc n_nczarr.zarr 2>err.txt && grep -q 'already belongs to a pointer file' err.txt ||
    fail "a store that has another owner: $(cat err.txt)"
grep -aq 'store=n_zarr.zarr' n_zarr.nc || fail "a refused pointer replaced the old one"
old=$(tail -c 512 n_zarr.nc | sed -n 3p)
"$PTR" n_zarr.nc n_zarr.zarr || fail "replacing a pointer"
[ "$(tail -c 512 n_zarr.nc | sed -n 3p)" != "$old" ] || fail "the pointer was not replaced"
grep -q "\"$(tail -c 512 n_zarr.nc | sed -n 3p | cut -c4-)\"" n_zarr.zarr/.h5zarr_pointer || fail "the store does not record the new pointer's id"
pass "h5zarr_pointer refuses a store in another directory, a non-store, a store another pointer owns, and replacing a non-pointer; replaces a pointer"
finish
