#!/usr/bin/env bash
# netCDF programs on object storage by configuration (issue 29): a rule
#     [path $TMP/run42/*.nc]   format = zarr   store = s3://bkt/run42/
# sends new *.nc paths under run42/ to zarr stores on S3 (s3rver on loopback, through
# tools/latency_proxy.py, which counts the requests); each local name is a pointer file recording the
# store's URL (docs/FORMAT.md "Stores on object storage"). Checks:
#  - unmodified ncgen -4, nccopy -k nc4 and a C program (examples/nc_append: nc_create, then nc_open
#    NC_WRITE appending, three runs) write their out.nc; ncdump of it equals ncdump of the native
#    original; nothing is stored beside the pointer; the objects are in the bucket under run42/ (listed
#    through the store interface); zarr-python 2.13 reads a v2 store over plain HTTP GETs from the
#    server (a mapping of its own: no s3fs here), and store_probe reads the v3 ones;
#  - the pointer holds the URL and no credential; a file-level copy opened for writing gets a store
#    of its own under the prefix (copy on write), the original unchanged; a renamed pointer keeps its
#    store;
#  - bad input: a pointer naming a URL the configuration in force does not allow (a copy outside
#    run42/, a pointer edited to another bucket) is refused, the message naming the pointer and the
#    settings, and no request reaches the server; the top-level `allow_url` lets the copy read; a
#    pointer with a malformed URL is refused clearly, also with no request.
# Skips (77) without node/npm for s3rver.
. "$(dirname "$0")/../lib.sh"
. "$H5ZARR_SRC/tests/net/netlib.sh"
unset HDF5_VOL_CONNECTOR
cd "$TMP"
[ -x "$EXAMPLES/nc_append" ] || { echo "skipped: examples/nc_append not built (no netCDF)"; exit 77; }
command -v ncgen >/dev/null && command -v nccopy >/dev/null || { echo "skipped: no netCDF tools"; exit 77; }

s3_start "$TMP/s3data" bkt
$PY "$H5ZARR_SRC/tools/latency_proxy.py" "http://127.0.0.1:$S3_PORT" --port-file "$TMP/lp.port" \
    --log "$TMP/lp.log" 2>"$TMP/lp.err" &
NET_PIDS+=($!)
wait_file "$TMP/lp.port" 20 || fail "latency_proxy.py did not start: $(cat lp.err)"
LP=http://127.0.0.1:$(cat lp.port)
export AWS_ENDPOINT_URL=$LP
ctl() { curl -sS --fail "$LP/_proxy/$1"; }
requests() { ctl "stats?reset=1" | $PY -c 'import json, sys; print(json.load(sys.stdin)["requests"])'; }

mkdir run42 elsewhere
cat >rules.conf <<EOF
[path $TMP/run42/*.nc]
format = zarr
store = s3://bkt/run42/
[path $TMP/run42/v2*.nc]
version = 2
consolidated = 1
EOF
run_zarr() { HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/rules.conf "$@"; }
# url_of POINTER: the store URL its record names (the record: the file's last 512 bytes)
url_of() { tail -c 512 "$1" | sed -n 's/^store=//p'; }
# on_s3 POINTER: a v2 pointer whose URL is under s3://bkt/run42/, nothing stored beside it
on_s3() {
    tail -c 512 "$1" | head -n 1 | grep -qx 'h5zarr pointer v2' || fail "$1 is no pointer file"
    [[ "$(url_of "$1")" == s3://bkt/run42/"$(basename "$1")".*.zarr ]] || fail "$1 names '$(url_of "$1")'"
    [ -z "$(find "$(dirname "$1")" -name "$(basename "$1").*zarr*")" ] || fail "a local store beside $1"
}
# objects URL: the keys of the store at URL, through the store interface (a listing of the bucket)
objects() { AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT "$PROBE" "$1" keys "" | cut -d' ' -f1 | sort; }
same_dump() { diff <(ncdump "$1" | sed 1d) <(run_zarr ncdump "$2" | sed 1d); }

cat >cf.cdl <<'CDL'
netcdf cf {
dimensions:
	time = UNLIMITED ;
	lat = 3 ;
	lon = 4 ;
variables:
	double time(time) ;
		time:units = "days since 2000-01-01" ;
	float lat(lat) ;
		lat:units = "degrees_north" ;
	float lon(lon) ;
		lon:units = "degrees_east" ;
	short tas(time, lat, lon) ;
		tas:scale_factor = 0.01 ;
		tas:_FillValue = -999s ;
		tas:units = "K" ;
	int flags(lat) ;
		flags:_DeflateLevel = 4 ;
		flags:_Shuffle = "true" ;

// global attributes:
		:title = "netCDF on S3 by a rule" ;
		:Conventions = "CF-1.8" ;
data:
 time = 0, 1 ;
 lat = -10, 0, 10 ;
 lon = 0, 90, 180, 270 ;
 tas = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, _, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 ;
 flags = 7, 8, 9 ;
}
CDL
ncgen -4 -o native.nc cf.cdl || fail "ncgen -4 (native)"

# ---- ncgen -4, nccopy -k nc4 and a C program write through the rule; ncdump reopens by the same path
run_zarr ncgen -4 -o run42/gen.nc cf.cdl || fail "ncgen -4 -o run42/gen.nc"
on_s3 run42/gen.nc
same_dump native.nc run42/gen.nc || fail "ncdump run42/gen.nc differs from the native original's"
run_zarr nccopy -k nc4 native.nc run42/copy.nc || fail "nccopy -k nc4 native.nc run42/copy.nc"
on_s3 run42/copy.nc
same_dump native.nc run42/copy.nc || fail "ncdump run42/copy.nc differs from the native original's"
for i in 1 2 3; do
    [ "$(run_zarr "$EXAMPLES/nc_append" run42/app.nc)" = "$i records" ] || fail "nc_append run42/app.nc run $i"
    "$EXAMPLES/nc_append" app_native.nc >/dev/null || fail "nc_append native run $i"
done
on_s3 run42/app.nc
same_dump app_native.nc run42/app.nc || fail "ncdump run42/app.nc after three appends differs from the native file's"
pass "ncgen -4, nccopy -k nc4 and nc_append (nc_create, then nc_open NC_WRITE x2) write run42/*.nc to s3://bkt/run42/ by the rule; ncdump of each equals the native original's"

# ---- the objects are in the bucket under the prefix; other readers read them
for f in gen copy app; do
    url=$(url_of run42/$f.nc)
    objects "$url" >$f.keys
    grep -qx zarr.json $f.keys && grep -qx .h5zarr_pointer $f.keys || fail "$url holds no zarr v3 store: $(head -5 $f.keys)"
done
grep -qx 'tas/zarr.json' gen.keys && grep -q '^tas/c/' gen.keys || fail "no array tas with chunks in $(url_of run42/gen.nc)"
[ "$(objects s3://bkt | grep -vc '^run42/')" = 0 ] || fail "objects outside run42/: $(objects s3://bkt | grep -v '^run42/' | head -3)"
# the owner record names the pointer and its directory; neither it nor the pointer holds a credential
AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT "$PROBE" "$(url_of run42/gen.nc)" get .h5zarr_pointer >rec.json
$PY - rec.json "$(cd run42 && pwd -P)" "$(tail -c 512 run42/gen.nc | sed -n 's/^id=//p')" <<'PY' || fail "owner record: $(cat rec.json)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r == {"h5zarr_pointer": 1, "id": sys.argv[3], "pointer": "gen.nc", "dir": sys.argv[2]}, r
PY
! grep -aq S3RVER run42/gen.nc rec.json || fail "a credential in the pointer or its record"
AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT "$PROBE" "$(url_of run42/gen.nc)" get tas/zarr.json >tas.json
$PY -c 'import json, sys; assert json.load(open(sys.argv[1]))["shape"] == [2, 3, 4]' tas.json ||
    fail "store_probe: tas/zarr.json of $(url_of run42/gen.nc) is not (2, 3, 4): $(head -c 300 tas.json)"
# zarr-python 2.13 (v2 only) reads a v2 store (the rule's version = 2 for v2*.nc) over plain GETs, by its
# consolidated metadata (consolidated = 1: written at nccopy's nc_close; HDF5's dimension-scale calls
# leak file handles that close at exit, after the TLS library's own exit handler: they write nothing)
run_zarr nccopy -k nc4 native.nc run42/v2cf.nc || fail "nccopy to run42/v2cf.nc"
on_s3 run42/v2cf.nc
u=$(url_of run42/v2cf.nc)
$PY - "http://127.0.0.1:$S3_PORT/bkt/${u#s3://bkt/}" <<'PY' 2>zpy.err || fail "zarr-python: $(tail -3 zpy.err)"
import collections.abc, sys, urllib.error, urllib.request
import numpy as np, zarr
class Get(collections.abc.Mapping):  # a read-only zarr store of plain HTTP GETs
    def __init__(self, base): self.base = base
    def __getitem__(self, k):
        try:
            with urllib.request.urlopen(f"{self.base}/{k}") as r: return r.read()
        except urllib.error.HTTPError as e:
            raise KeyError(k) from e
    def __iter__(self): return iter(())
    def __len__(self): return 0
g = zarr.open_consolidated(zarr.storage.KVStore(Get(sys.argv[1])), mode="r")
tas = g["tas"]
assert tas.shape == (2, 3, 4) and tas.attrs["units"] == "K", (tas.shape, dict(tas.attrs))
want = np.arange(1, 25, dtype="i2").reshape(2, 3, 4); want[0, 2, 3] = -999
assert (tas[...] == want).all(), tas[...]
assert list(g["flags"][...]) == [7, 8, 9] and g.attrs["title"] == "netCDF on S3 by a rule"
PY
pass "the stores' objects are in s3://bkt under run42/ only (zarr.json, chunks, the owner record naming pointer and directory, no credential); zarr-python 2.13 reads a consolidated v2 one over HTTP, store_probe a v3 one"

# ---- copies and renames of pointers
cp run42/app.nc run42/app2.nc
[ "$(run_zarr "$EXAMPLES/nc_append" run42/app2.nc)" = "4 records" ] || fail "nc_append through the copy run42/app2.nc"
[ "$(url_of run42/app2.nc)" != "$(url_of run42/app.nc)" ] || fail "writing through a copy did not copy its store"
on_s3 run42/app2.nc
same_dump app_native.nc run42/app.nc || fail "writing through a copy changed the original's store"
mv run42/app2.nc run42/app3.nc
u3=$(url_of run42/app3.nc)
out=$(run_zarr "$EXAMPLES/nc_append" run42/app3.nc 2>&1) && [ "$out" = "5 records" ] || fail "nc_append through the renamed run42/app3.nc: $out"
[ "$(url_of run42/app3.nc)" = "$u3" ] || fail "a renamed pointer did not keep its store"
AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT "$PROBE" "$u3" get .h5zarr_pointer | grep -q '"pointer":"app3.nc"' ||
    fail "the renamed pointer did not take its store over"
pass "a copy opened for writing gets its own store under the prefix (the original unchanged); a renamed pointer keeps its store and takes it over"

# ---- NCO's write to a temporary name, then rename: the replaced pointer's store goes at the next create
old=$(url_of run42/gen.nc)
run_zarr nccopy -k nc4 native.nc run42/gen.nc.pid4242.ncks.tmp || fail "nccopy to NCO's temporary name"
tmpurl=$(url_of run42/gen.nc.pid4242.ncks.tmp)
[[ "$tmpurl" == s3://bkt/run42/gen.nc.pid4242.ncks.tmp.*.zarr ]] || fail "the temporary name's store: '$tmpurl'"
mv run42/gen.nc.pid4242.ncks.tmp run42/gen.nc
[ -n "$(objects "$old")" ] || fail "the replaced store went before anything was created"
# another directory's store of the same name under the prefix is not this directory's to remove
mkdir run42/sub
run_zarr ncgen -4 -o run42/sub/gen.nc cf.cdl || fail "ncgen -4 -o run42/sub/gen.nc"
subold=$(url_of run42/sub/gen.nc)
run_zarr ncgen -4 -o run42/next.nc cf.cdl || fail "ncgen -4 -o run42/next.nc (a create after the rename)"
[ -z "$(objects "$old")" ] || fail "the store of the replaced run42/gen.nc was not removed: $(objects "$old" | head -3)"
[ -n "$(objects "$subold")" ] || fail "a store of another directory was removed"
same_dump native.nc run42/gen.nc || fail "ncdump run42/gen.nc after the rename"
same_dump native.nc run42/sub/gen.nc || fail "ncdump run42/sub/gen.nc"
pass "NCO's temporary name is sent to S3 by the rule for its final name; the store its rename replaced is removed at the next create in the directory (not another directory's)"

# ---- H5Fdelete of a pointer removes its store on S3, then the pointer
nexturl=$(url_of run42/next.nc)
[ "$(run_zarr "$H5ZARR_BUILD/tests/vol_urls" delete run42/next.nc)" = "accessible 1" ] || fail "H5Fdelete of run42/next.nc"
[ ! -e run42/next.nc ] && [ -z "$(objects "$nexturl")" ] || fail "H5Fdelete left the pointer or its store $nexturl"
pass "H5Fis_accessible and H5Fdelete of a pointer: its store on S3 and the pointer are removed"

# ---- bad input: URLs the configuration does not allow, malformed URLs; no request reaches the server
# with_url POINTER URL: the pointer's record rewritten to name URL (the same 512-byte record)
with_url() {
    $PY - "$1" "$2" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
rec = b[-512:].decode("latin-1").split("\n")
rec[1] = "store=" + sys.argv[2]
t = "\n".join(rec[:3]) + "\n"
b[-512:] = (t + " " * (511 - len(t)) + "\n").encode("latin-1")
open(sys.argv[1], "wb").write(b)
PY
}
# refused POINTER WHAT: h5dump and ncdump of POINTER fail, h5dump's error stack saying WHAT; no request.
# (h5dump is held to the zarr connector: without --vol-name, HDF5's tools retry a failed open with the
# native connector, which shows the pointer's own empty HDF5 file.)
refused() {
    requests >/dev/null
    ! run_zarr h5dump --enable-error-stack=2 --vol-name=zarr -H "$1" >ref.out 2>ref.err || fail "h5dump $1 succeeded"
    grep -q "$2" ref.err || fail "h5dump $1: no '$2' in: $(grep -m3 -i pointer ref.err)"
    ! run_zarr ncdump -h "$1" >/dev/null 2>ref.nc || fail "ncdump $1 succeeded"
    grep -q 'NetCDF:' ref.nc || fail "ncdump $1: no netCDF error: $(cat ref.nc)"
    [ "$(requests)" = 0 ] || fail "opening $1 made requests"
}
cp run42/gen.nc elsewhere/gen.nc
refused elsewhere/gen.nc "pointer file 'elsewhere/gen.nc' names the store URL '$(url_of run42/gen.nc)', which the configuration in force for it does not allow.*store = beside (no URL), allow_url = none"
cp run42/gen.nc run42/other.nc
with_url run42/other.nc s3://otherbkt/run42/x.zarr
refused run42/other.nc "pointer file 'run42/other.nc' names the store URL 's3://otherbkt/run42/x.zarr'.*store = s3://bkt/run42/, allow_url = none"
with_url run42/other.nc s3://bkt/run420/x.zarr
refused run42/other.nc "names the store URL 's3://bkt/run420/x.zarr', which the configuration"
# H5Fcreate over it, and H5Fdelete of it, are refused as well (nothing is truncated or removed)
! run_zarr nccopy -k nc4 native.nc run42/other.nc 2>/dev/null || fail "nccopy over a pointer to a URL not allowed succeeded"
! run_zarr "$H5ZARR_BUILD/tests/vol_urls" delete run42/other.nc >/dev/null 2>del.err || fail "H5Fdelete of a pointer to a URL not allowed succeeded"
grep -q "names the store URL 's3://bkt/run420/x.zarr', which the configuration" del.err || fail "H5Fdelete: $(grep -m2 pointer del.err)"
[ -f run42/other.nc ] || fail "H5Fdelete of a pointer to a URL not allowed removed it"
[ "$(requests)" = 0 ] || fail "nccopy over, or H5Fdelete of, a pointer to a URL not allowed made requests"
for bad in 's3://bkt/run42/../secret.zarr' 's3://bkt/run42//x.zarr' 's3://bkt/run42/x.zarr?versionId=1' 's3://key:secret@bkt/run42/x.zarr' 's3:/bkt/x'; do
    with_url run42/other.nc "$bad"
    refused run42/other.nc "pointer file 'run42/other.nc' names a malformed store URL\|pointer file 'run42/other.nc' names '"
done
# the top-level allow_url lets a copy outside run42/ read the store
printf '[defaults]\nallow_url = s3://bkt/run42/\n' >>rules.conf
same_dump native.nc elsewhere/gen.nc || fail "ncdump elsewhere/gen.nc with allow_url = s3://bkt/run42/"
# writing through a copy in another directory copies the store first (beside it: store = beside there)
cp run42/app.nc elsewhere/app.nc
[ "$(run_zarr "$EXAMPLES/nc_append" elsewhere/app.nc)" = "4 records" ] || fail "nc_append through elsewhere/app.nc"
[ "$(url_of elsewhere/app.nc)" = app.nc.zarr ] && [ -f elsewhere/app.nc.zarr/zarr.json ] ||
    fail "writing through a copy in another directory: it names '$(url_of elsewhere/app.nc)'"
same_dump app_native.nc run42/app.nc || fail "writing through a copy in another directory changed the original"
pass "pointers naming URLs the configuration does not allow (another directory, bucket or prefix) and malformed URLs ('..', '//', a query, credentials, one slash) are refused naming the pointer and the settings, with no request; allow_url admits the prefix, and a copy there written copies the store beside it"

[ ! -s lp.err ] || fail "the proxy reported errors: $(head -3 lp.err)"
finish
