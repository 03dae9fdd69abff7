#!/usr/bin/env bash
# Install and use from outside the tree: `cmake --install` of this build into a scratch prefix (the
# build itself is not re-run), then
#   (1) an out-of-tree CMake project (tests/install/cmake_project: find_package(h5zarr), h5zarr::h5zarr),
#   (2) a Makefile project using `pkg-config --cflags --libs h5zarr` (tests/install/make_project),
# each building main.c (H5Pset_fapl_zarr, write a 4x5 int dataset, read it back) and running it with the
# installed plugin folder; each output is checked to be a zarr v3 store with the right array metadata
# (HDF5 falls back to native silently when a connector fails to load). (3) `eval "$(h5zarr-config --env)"`
# in a shell with none of the build's environment: h5dump reads the store through the connector;
# h5zarr-config's --version, --codecs, --features, --cflags/--libs. Also the build tree's own uninstalled
# h5zarr.pc and h5zarr-config, and that the installed prefix still works after it is moved.
. "$(dirname "$0")/../lib.sh"
[ -n "${H5ZARR_DEPS:-}" ] && [ -d "$H5ZARR_DEPS/hdf5/lib" ] ||
    { echo "SKIP: no HDF5 deps prefix (H5ZARR_DEPS=${H5ZARR_DEPS:-})"; exit 77; }
[ -f "$H5ZARR_BUILD/install-gen/h5zarr-config" ] ||
    fail "$H5ZARR_BUILD/install-gen/h5zarr-config was not built (target h5zarr_config)"
HDF5=$H5ZARR_DEPS/hdf5
# Nothing of the build's environment: the installed files must be enough.
unset HDF5_PLUGIN_PATH HDF5_VOL_CONNECTOR LD_LIBRARY_PATH PKG_CONFIG_PATH
export PATH=/usr/local/bin:/usr/bin:/bin
cd "$TMP"
PREFIX=$TMP/prefix
CONFIG=$PREFIX/bin/h5zarr-config
VERSION=$(sed -n 's/^project(h5zarr VERSION \([0-9.]*\).*/\1/p' "$H5ZARR_SRC/CMakeLists.txt")
[ -n "$VERSION" ] || fail "no project version in $H5ZARR_SRC/CMakeLists.txt"

# check_store STORE: a zarr v3 store whose root is a group and whose /values is a 4x5 int32 array
check_store() {
    $PY - "$1" <<'PY' || fail "$1 is not the zarr store main.c writes (the connector did not load?)"
import json, sys
root = sys.argv[1]
g = json.load(open(root + "/zarr.json"))
assert g["zarr_format"] == 3 and g["node_type"] == "group", g
a = json.load(open(root + "/values/zarr.json"))
assert a["node_type"] == "array" and a["shape"] == [4, 5] and a["data_type"] == "int32", a
PY
}

# ---- the install
cmake --install "$H5ZARR_BUILD" --prefix "$PREFIX" >install.log 2>&1 || { cat install.log; fail "cmake --install"; }
for f in lib/h5zarr/plugin/libh5zarr_vol.so lib/h5zarr/plugin/libh5zarr_blosc.so lib/h5zarr/plugin/libh5zarr_zstd.so \
    lib/h5zarr/plugin/libh5zarr_lz4.so include/h5zarr/h5zarr.h include/h5zarr/zarr.h lib/cmake/h5zarr/h5zarrConfig.cmake \
    lib/cmake/h5zarr/h5zarrConfigVersion.cmake lib/pkgconfig/h5zarr.pc bin/h5zarr-config; do
    [ -e "$PREFIX/$f" ] || fail "not installed: $f"
done
[ -x "$CONFIG" ] || fail "h5zarr-config is not executable"
# h5zarr-convert (docs/CONVERT.md): installed, finds HDF5 by itself, and the plugins next to it
[ -x "$PREFIX/bin/h5zarr-convert" ] || fail "not installed: bin/h5zarr-convert"
"$PREFIX/bin/h5zarr-convert" --help | grep -q "usage: h5zarr-convert" || fail "h5zarr-convert --help"
"$H5ZARR_BUILD/examples/write_field" conv_src.h5 >/dev/null || fail "write_field"
env -u HDF5_PLUGIN_PATH "$PREFIX/bin/h5zarr-convert" -q conv_src.h5 conv.zarr || fail "installed h5zarr-convert"
grep -q '"zarr_format": *3' conv.zarr/zarr.json || fail "installed h5zarr-convert made no zarr store"
for p in "$PREFIX"/lib/h5zarr/plugin/*.so; do
    ldd "$p" >ldd.out 2>&1 || fail "ldd $p"
    grep -q "libhdf5.so.* => $HDF5/lib/" ldd.out || { cat ldd.out; fail "$(basename "$p") does not find HDF5's libhdf5 by itself (RPATH)"; }
    ! grep -q "not found" ldd.out || { cat ldd.out; fail "$(basename "$p") has unresolved libraries"; }
done
pass "cmake --install: plugins (finding libhdf5 through their RPATH), headers, CMake package, h5zarr.pc, h5zarr-config"

PLUGINDIR=$("$CONFIG" --plugindir)
[ "$PLUGINDIR" = "$PREFIX/lib/h5zarr/plugin" ] || fail "h5zarr-config --plugindir: $PLUGINDIR"

# ---- (1) CMake project: find_package(h5zarr) + h5zarr::h5zarr
cp -r "$H5ZARR_SRC/tests/install/cmake_project" cm
cmake -S cm -B cm/build -DCMAKE_PREFIX_PATH="$PREFIX;$HDF5" >cm.log 2>&1 || { cat cm.log; fail "configure the CMake project"; }
cmake --build cm/build >>cm.log 2>&1 || { cat cm.log; fail "build the CMake project"; }
[ "$(sed -n 1p cm/build/h5zarr-package.txt)" = "$VERSION" ] || fail "H5ZARR_VERSION is not $VERSION"
[ "$(sed -n 2p cm/build/h5zarr-package.txt)" = "$PLUGINDIR" ] || fail "H5ZARR_PLUGIN_DIR is not $PLUGINDIR"
mkdir run1
(cd run1 && HDF5_PLUGIN_PATH=$PLUGINDIR ../cm/build/app out.zarr) || fail "the CMake project's app"
check_store run1/out.zarr
pass "CMake project: find_package(h5zarr), h5zarr::h5zarr, H5ZARR_VERSION/H5ZARR_PLUGIN_DIR; its app wrote a zarr v3 store and read it back"

# ---- (2) Makefile project: pkg-config --cflags --libs h5zarr
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig:$HDF5/lib/pkgconfig
PKG_CONFIG=pkg-config
h5pc_prefix=$(pkg-config --variable=prefix hdf5) || fail "pkg-config finds no hdf5 in $HDF5/lib/pkgconfig"
if [ ! -d "$h5pc_prefix" ]; then
    # HDF5's own hdf5.pc names a folder that does not exist (the deps were built elsewhere and moved).
    echo "note: $HDF5/lib/pkgconfig/hdf5.pc names prefix $h5pc_prefix, which does not exist; using pkg-config --define-prefix"
    PKG_CONFIG="pkg-config --define-prefix"
fi
[ "$($PKG_CONFIG --modversion h5zarr)" = "$VERSION" ] || fail "pkg-config --modversion h5zarr"
pc_plugindir=$(readlink -f "$($PKG_CONFIG --variable=plugindir h5zarr)")
[ "$pc_plugindir" = "$PLUGINDIR" ] || fail "pkg-config --variable=plugindir h5zarr: $pc_plugindir, not $PLUGINDIR"
cp -r "$H5ZARR_SRC/tests/install/make_project" mk
make -C mk SRC="$TMP/cm/main.c" PKG_CONFIG="$PKG_CONFIG" >mk.log 2>&1 || { cat mk.log; fail "build the Makefile project"; }
mkdir run2
(cd run2 && LD_LIBRARY_PATH=$HDF5/lib HDF5_PLUGIN_PATH=$pc_plugindir ../mk/app out.zarr) || fail "the Makefile project's app"
check_store run2/out.zarr
pass "Makefile project: pkg-config --cflags --libs h5zarr (Requires: hdf5), plugindir variable; its app wrote a zarr v3 store"
unset PKG_CONFIG_PATH

# ---- (3) h5zarr-config: --env, then h5dump through the connector; the other options
"$CONFIG" --env >env.sh || fail "h5zarr-config --env"
grep -qx "export HDF5_VOL_CONNECTOR=zarr" env.sh || fail "--env sets no HDF5_VOL_CONNECTOR=zarr"
grep -q "^export HDF5_PLUGIN_PATH='$PLUGINDIR[:']" env.sh || fail "--env: HDF5_PLUGIN_PATH does not start with the plugin folder"
(
    eval "$(cat env.sh)"
    [ "$(command -v h5dump)" = "$HDF5/bin/h5dump" ] || fail "after --env, h5dump is $(command -v h5dump), not HDF5's"
    h5dump -d /values run1/out.zarr >dump.out 2>dump.err || { cat dump.err; fail "h5dump through the connector"; }
    # NCZarr in the same environment: a deflate+shuffle variable (netCDF's codec tables come after ours)
    if command -v ncgen >/dev/null; then
        printf 'netcdf n {\ndimensions: x = 6 ;\nvariables: int v(x) ; v:_DeflateLevel = 2 ; v:_Shuffle = "true" ;\ndata: v = 5, 4, 3, 2, 1, 0 ;\n}\n' >n.cdl
        ncgen -4 -o "file://$PWD/nz.zarr#mode=zarr,file" n.cdl 2>ncgen.err || { cat ncgen.err; fail "NCZarr ncgen after --env"; }
        ncdump "file://$PWD/nz.zarr#mode=zarr,file" >nz.out 2>&1 || { cat nz.out; fail "NCZarr ncdump after --env"; }
        grep -q 'v = 5, 4, 3, 2, 1, 0' nz.out || { cat nz.out; fail "NCZarr ncdump values after --env"; }
        grep -q '"id": *"zlib"' nz.zarr/v/.zarray || fail "NCZarr wrote no zlib codec after --env"
    fi
) || exit 1
grep -q '(0,0): 0, 1, 2, 3, 4,' dump.out && grep -q '(3,0): 30, 31, 32, 33, 34' dump.out ||
    { cat dump.out; fail "h5dump does not show the values"; }
pass "eval \"\$(h5zarr-config --env)\": h5dump (on PATH from it) reads the store through the connector; NCZarr URLs with filters work in the same environment"

[ "$("$CONFIG" --version)" = "$VERSION" ] || fail "h5zarr-config --version: $("$CONFIG" --version), not $VERSION"
[ "$("$CONFIG" --prefix)" = "$PREFIX" ] || fail "h5zarr-config --prefix: $("$CONFIG" --prefix)"
codecs=" $("$CONFIG" --codecs) "
for c in zstd blosc gzip bytes zlib lz4 crc32c transpose sharding_indexed; do
    case $codecs in *" $c "*) ;; *) fail "h5zarr-config --codecs lacks $c: $codecs" ;; esac
done
features=" $("$CONFIG" --features) "
for f in zarr-v2 zarr-v3 vol-connector filter-blosc filter-zstd filter-lz4; do
    case $features in *" $f "*) ;; *) fail "h5zarr-config --features lacks $f: $features" ;; esac
done
"$CONFIG" --all >all.out && grep -q -- "--codecs *-> .*zstd" all.out || fail "h5zarr-config --all"
"$CONFIG" --help | grep -q -- --env || fail "h5zarr-config --help"
! "$CONFIG" --no-such-option 2>/dev/null || fail "h5zarr-config accepted an unknown option"
# --cflags --libs compile the same program
cc $("$CONFIG" --cflags) -o app3 cm/main.c $("$CONFIG" --libs) || fail "cc \$(h5zarr-config --cflags) ... \$(h5zarr-config --libs)"
mkdir run3
(cd run3 && eval "$(cat ../env.sh)" && ../app3 out.zarr) || fail "the app built with h5zarr-config's flags"
check_store run3/out.zarr
pass "h5zarr-config: --version $VERSION, --prefix, --codecs ($(echo $codecs)), --features, --all, --help; --cflags/--libs build the app"

# ---- the build tree: uninstalled h5zarr.pc and h5zarr-config
[ "$(PKG_CONFIG_PATH=$H5ZARR_BUILD/pkgconfig:$HDF5/lib/pkgconfig $PKG_CONFIG --variable=plugindir h5zarr)" = "$H5ZARR_PLUGIN_DIR" ] ||
    fail "the build tree's h5zarr.pc: plugindir is not $H5ZARR_PLUGIN_DIR"
PKG_CONFIG_PATH=$H5ZARR_BUILD/pkgconfig:$HDF5/lib/pkgconfig $PKG_CONFIG --cflags h5zarr | grep -q -- "-I$H5ZARR_SRC/include" ||
    fail "the build tree's h5zarr.pc: no -I$H5ZARR_SRC/include"
[ "$("$H5ZARR_BUILD/h5zarr-config" --plugindir)" = "$H5ZARR_PLUGIN_DIR" ] || fail "build-tree h5zarr-config --plugindir"
"$H5ZARR_BUILD/h5zarr-config" --cflags | grep -q -- "-I$H5ZARR_SRC/include" || fail "build-tree h5zarr-config --cflags"
pass "build tree: pkgconfig/h5zarr.pc and h5zarr-config point at the source headers and $H5ZARR_PLUGIN_DIR"

# ---- the installed prefix is relocatable
mv prefix moved
[ "$("$TMP/moved/bin/h5zarr-config" --plugindir)" = "$TMP/moved/lib/h5zarr/plugin" ] || fail "h5zarr-config after a move"
[ "$(readlink -f "$(PKG_CONFIG_PATH=$TMP/moved/lib/pkgconfig:$HDF5/lib/pkgconfig $PKG_CONFIG --variable=plugindir h5zarr)")" = \
    "$TMP/moved/lib/h5zarr/plugin" ] || fail "h5zarr.pc after a move"
rm -rf cm/build
cmake -S cm -B cm/build -DCMAKE_PREFIX_PATH="$TMP/moved;$HDF5" >cm2.log 2>&1 || { cat cm2.log; fail "find_package after a move"; }
[ "$(sed -n 2p cm/build/h5zarr-package.txt)" = "$TMP/moved/lib/h5zarr/plugin" ] || fail "H5ZARR_PLUGIN_DIR after a move"
pass "the installed prefix still works after it is moved (h5zarr-config, h5zarr.pc, the CMake package)"
finish
