#!/usr/bin/env bash
# The dependency prefix names folders that exist, and `make env` is enough to build against it.
#  - nc-config's include, lib and plugin folders and netCDF's compiled-in plugin search path exist;
#    no config script, .pc file or settings file (no installed text file at all) names the temporary
#    deps.tmp.<pid> build folder the bootstrap used to rename into place.
#  - Two `make -s env` at once in one checkout (20 times) both succeed with the same output.
#  - From a bare environment, eval "$(make -s env)" alone gives a pkg-config that resolves hdf5 and
#    netcdf (and the build tree's h5zarr.pc when present) inside the deps prefix, and a tiny HDF5
#    program built with h5cc, one with pkg-config's hdf5 flags and a netCDF program built with
#    nc-config's flags compile, run, and write files that read back with the right values.
. "$(dirname "$0")/../lib.sh"
[ -n "${H5ZARR_DEPS:-}" ] && [ -x "$H5ZARR_DEPS/netcdf/bin/nc-config" ] ||
    { echo "SKIP: no deps prefix with nc-config (H5ZARR_DEPS=${H5ZARR_DEPS:-})"; exit 77; }
D=$H5ZARR_DEPS
NC=$D/netcdf/bin/nc-config

# ---- the prefix: folders that exist, no temporary paths ----
for opt in --includedir --libdir --prefix; do
    dir=$("$NC" "$opt")
    [ -d "$dir" ] || fail "nc-config $opt names '$dir', which does not exist"
    case $dir in "$D"/*) ;; *) fail "nc-config $opt is '$dir', outside $D" ;; esac
done
[ -f "$("$NC" --includedir)/netcdf.h" ] || fail "no netcdf.h in nc-config --includedir"
plugindir=$("$NC" --plugindir)
if [ -n "$plugindir" ]; then
    [ -d "$plugindir" ] || fail "nc-config --plugindir names '$plugindir', which does not exist"
    ls "$plugindir"/lib__nch5*.so >/dev/null 2>&1 || fail "no netCDF filter plugins in $plugindir"
fi
first=$("$NC" --plugin-searchpath | cut -d: -f1)
[ -d "$first" ] || fail "netCDF's compiled-in plugin search path starts with '$first', which does not exist"
# Every absolute path nc-config --all prints under the cache root exists.
root=$(dirname "$D")
for p in $("$NC" --all | grep -o "$root/[^ :]*" | sort -u); do
    [ -e "$p" ] || fail "nc-config --all names '$p', which does not exist"
done
pass "nc-config --includedir/--libdir/--plugindir ($plugindir) and the plugin search path exist"

files=$(ls "$D"/netcdf/bin/*config* "$D"/hdf5/bin/h5cc "$D"/hdf5/lib/pkgconfig/*.pc \
    "$D"/netcdf/lib/pkgconfig/*.pc "$D"/netcdf/lib/libnetcdf.settings "$D"/hdf5/lib/libhdf5.settings)
[ "$(wc -w <<<"$files")" -ge 6 ] || fail "expected config scripts, .pc and settings files, found: $files"
bad=$(grep -l 'deps\.tmp' $files || true)
[ -z "$bad" ] || fail "these name the temporary build folder: $bad"
bad=$(grep -rIl 'deps\.tmp' "$D/hdf5" "$D/netcdf" "$D/api-test" || true)
[ -z "$bad" ] || fail "installed text files name the temporary build folder: $bad"
grep -aq 'deps\.tmp' "$D"/netcdf/lib/libnetcdf.so && fail "libnetcdf.so names the temporary build folder"
pass "no config script, .pc, settings or other installed text file names deps.tmp.<pid>"

# ---- make env from a bare environment ----
cd "$TMP"
bare=(env -i "HOME=$HOME" "PATH=/usr/local/bin:/usr/bin:/bin" ${H5ZARR_CACHE:+"H5ZARR_CACHE=$H5ZARR_CACHE"}
    ${XDG_CACHE_HOME:+"XDG_CACHE_HOME=$XDG_CACHE_HOME"})
"${bare[@]}" make -s --no-print-directory -C "$H5ZARR_SRC" env BUILD="$H5ZARR_BUILD" >env.sh 2>env.err ||
    fail "make env failed: $(cat env.err)"
grep -q '^export PKG_CONFIG_PATH=' env.sh || fail "make env exports no PKG_CONFIG_PATH: $(cat env.sh)"
for v in PATH HDF5_PLUGIN_PATH LD_LIBRARY_PATH; do
    grep -q "^export $v=" env.sh || fail "make env lost its $v line"
done

# two shells evaluating $(make -s env) at once in one checkout (issue 28): each writes the prefix record
# through its own temporary, so neither fails and both print the same environment
for i in $(seq 1 20); do
    "${bare[@]}" make -s --no-print-directory -C "$H5ZARR_SRC" env BUILD="$H5ZARR_BUILD" >c1.sh 2>c1.err &
    p1=$!
    "${bare[@]}" make -s --no-print-directory -C "$H5ZARR_SRC" env BUILD="$H5ZARR_BUILD" >c2.sh 2>c2.err &
    p2=$!
    wait $p1 || fail "make env run $i (first of two at once) failed: $(cat c1.err)"
    wait $p2 || fail "make env run $i (second of two at once) failed: $(cat c2.err)"
    [ ! -s c1.err ] && [ ! -s c2.err ] || fail "make env run $i wrote errors: $(cat c1.err c2.err)"
    cmp -s c1.sh env.sh && cmp -s c2.sh env.sh || fail "make env run $i printed another environment"
done
ls "$H5ZARR_BUILD"/deps.prefix.* >/dev/null 2>&1 && fail "make env left temporaries: $(ls "$H5ZARR_BUILD"/deps.prefix.*)"
pass "make env twice at once, 20 times: the same environment, no error, no temporary left"

cat >h5prog.c <<'EOF'
#include <hdf5.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int     w[5] = {3, 1, 4, 1, 5}, r[5] = {0};
    hsize_t n = 5;
    hid_t   f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t   s = H5Screate_simple(1, &n, NULL);
    hid_t   d = H5Dcreate2(f, "pi", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (argc < 2 || f < 0 || d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) < 0)
        return 1;
    H5Dclose(d), H5Sclose(s), H5Fclose(f);
    f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    d = H5Dopen2(f, "pi", H5P_DEFAULT);
    if (H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) < 0)
        return 1;
    H5Dclose(d), H5Fclose(f);
    unsigned maj, min, rel;
    H5get_libversion(&maj, &min, &rel);
    printf("hdf5 %u.%u.%u: %d %d %d %d %d\n", maj, min, rel, r[0], r[1], r[2], r[3], r[4]);
    return 0;
}
EOF
cat >ncprog.c <<'EOF'
#include <netcdf.h>
#include <stdio.h>
#define OK(x) do { int e_ = (x); if (e_) { fprintf(stderr, "%s: %s\n", #x, nc_strerror(e_)); return 1; } } while (0)
int main(int argc, char **argv)
{
    int    nc, dim, var;
    double w[4] = {2.5, -1.25, 1e10, 0}, r[4] = {0};
    OK(nc_create(argv[1], NC_NETCDF4 | NC_CLOBBER, &nc));
    OK(nc_def_dim(nc, "t", 4, &dim));
    OK(nc_def_var(nc, "temp", NC_DOUBLE, 1, &dim, &var));
    OK(nc_put_var_double(nc, var, w));
    OK(nc_close(nc));
    OK(nc_open(argv[1], NC_NOWRITE, &nc));
    OK(nc_inq_varid(nc, "temp", &var));
    OK(nc_get_var_double(nc, var, r));
    OK(nc_close(nc));
    printf("%s: %g %g %g %g\n", nc_inq_libvers(), r[0], r[1], r[2], r[3]);
    return 0;
}
EOF
cat >build.sh <<'EOF'
set -eu
eval "$(cat env.sh)"
echo "pc-hdf5: $(pkg-config --cflags --libs hdf5)"
echo "pc-netcdf: $(pkg-config --cflags --libs netcdf)"
echo "pc-hdf5-libdir: $(pkg-config --variable=libdir hdf5)"
echo "pc-netcdf-libdir: $(pkg-config --variable=libdir netcdf)"
if [ -f "$H5ZARR_BUILD/pkgconfig/h5zarr.pc" ]; then echo "pc-h5zarr: $(pkg-config --variable=pcfiledir h5zarr)"; fi
echo "h5cc: $(command -v h5cc)"
echo "nc-config: $(command -v nc-config)"
h5cc -o h5prog h5prog.c
cc $(pkg-config --cflags hdf5) -o h5prog_pc h5prog.c $(pkg-config --libs hdf5)
$(nc-config --cc) $(nc-config --cflags) -o ncprog ncprog.c $(nc-config --libs)
echo "run-h5cc: $(./h5prog a.h5)"
echo "run-pc: $(./h5prog_pc b.h5)"
echo "run-nc: $(./ncprog c.nc)"
echo "ldd-h5: $(ldd ./h5prog | grep libhdf5)"
echo "ldd-nc: $(ldd ./ncprog | grep -E 'libnetcdf|libhdf5' | tr '\n' ' ')"
echo "dump-h5: $(h5dump -d pi -w 0 a.h5 | grep '(0)')"
echo "dump-nc: $(ncdump -v temp c.nc | tr -d '\n\t ' | sed 's/.*temp=//')"
EOF
"${bare[@]}" H5ZARR_BUILD="$H5ZARR_BUILD" bash build.sh >out.txt 2>err.txt ||
    fail "building/running against make env failed: $(cat err.txt) $(cat out.txt)"
val() { sed -n "s/^$1: //p" out.txt; }

# pkg-config resolves to the project's builds; every -I/-L folder exists.
for lib in hdf5 netcdf; do
    flags=$(val "pc-$lib")
    grep -q -- "-I$D/$lib/include" <<<"$flags" || fail "pkg-config $lib gives '$flags', not $D/$lib/include"
    grep -q -- "-L$D/$lib/lib" <<<"$flags" || fail "pkg-config $lib gives '$flags', not -L$D/$lib/lib"
    grep -q -- "-l$lib\b" <<<"$flags" || fail "pkg-config $lib gives no -l$lib: '$flags'"
    for f in $flags; do
        case $f in -I* | -L*) [ -d "${f:2}" ] || fail "pkg-config $lib names '${f:2}', which does not exist" ;; esac
    done
    [ "$(val "pc-$lib-libdir")" = "$D/$lib/lib" ] || fail "pkg-config --variable=libdir $lib is '$(val "pc-$lib-libdir")'"
done
if [ -f "$H5ZARR_BUILD/pkgconfig/h5zarr.pc" ]; then
    [ "$(val pc-h5zarr)" = "$H5ZARR_BUILD/pkgconfig" ] || fail "pkg-config h5zarr resolves to '$(val pc-h5zarr)'"
    pass "pkg-config h5zarr resolves to $H5ZARR_BUILD/pkgconfig/h5zarr.pc"
fi
pass "after make env, pkg-config hdf5 / netcdf resolve inside $D: $(val pc-hdf5) | $(val pc-netcdf)"
[ "$(val h5cc)" = "$D/hdf5/bin/h5cc" ] || fail "h5cc on make env's PATH is '$(val h5cc)'"
[ "$(val nc-config)" = "$D/netcdf/bin/nc-config" ] || fail "nc-config on make env's PATH is '$(val nc-config)'"

# The programs ran against the deps' libraries and read back what they wrote.
[ "$(val run-h5cc)" = "hdf5 1.14.5: 3 1 4 1 5" ] || fail "the h5cc program printed '$(val run-h5cc)'"
[ "$(val run-pc)" = "hdf5 1.14.5: 3 1 4 1 5" ] || fail "the pkg-config program printed '$(val run-pc)'"
grep -q '^4\.9\.3.*: 2.5 -1.25 1e+10 0$' <<<"$(val run-nc)" || fail "the nc-config program printed '$(val run-nc)'"
grep -q "=> $D/hdf5/lib/libhdf5.so" <<<"$(val ldd-h5)" || fail "the h5cc program loads '$(val ldd-h5)'"
grep -q "=> $D/netcdf/lib/libnetcdf.so" <<<"$(val ldd-nc)" || fail "the netCDF program loads '$(val ldd-nc)'"
grep -q "=> $D/hdf5/lib/libhdf5.so" <<<"$(val ldd-nc)" || fail "the netCDF program loads '$(val ldd-nc)'"
grep -q '3, 1, 4, 1, 5' <<<"$(val dump-h5)" || fail "h5dump of the h5cc program's file: '$(val dump-h5)'"
[ "$(val dump-nc)" = "2.5,-1.25,10000000000,0;}" ] || fail "ncdump of the netCDF program's file: '$(val dump-nc)'"
pass "h5cc, pkg-config hdf5 and nc-config programs build and run after make env (values read back)"
finish
