# debian_on_deps.sh: runs Debian's netCDF programs (NCO, CDO: built on Debian's netCDF 4.9.0 and HDF5 1.10,
# which has no VOL) on the deps' netCDF-C and HDF5 1.14, so their files can go through the connector
# (sourced by tests/scripts/nco_ops.sh and cdo_ops.sh, after tests/lib.sh, in $TMP). Provides:
#   debian_on_deps PROGRAM   a library directory $TMP/lib of soname links (PROGRAM's libnetcdf.so.N and
#                            libhdf5_serial*.so.N to the deps' libraries) and a no-op nc_set_log_level
#                            (exported only by netCDF builds with logging), put first on LD_LIBRARY_PATH
#                            and LD_PRELOAD for the commands that follow; sets NCVER to the deps' netCDF
#                            version, which the caller checks the program reports
#   ND                       the deps' ncdump
#   zrun CMD...              CMD with every *.nc a zarr store (rule [path *.nc] + format = zarr)
debian_on_deps() {
    local prog=$1 nclib h5lib h5hl so
    mkdir -p "$TMP/lib"
    nclib=$(ls "$H5ZARR_DEPS"/netcdf/lib/libnetcdf.so.[0-9]* | head -1)
    h5lib=$(ls "$H5ZARR_DEPS"/hdf5/lib/libhdf5.so.[0-9]* | sort | head -1)
    h5hl=$(ls "$H5ZARR_DEPS"/hdf5/lib/libhdf5_hl.so.[0-9]* | sort | head -1)
    for so in $(ldd "$prog" | awk '{print $1}'); do
        case $so in
        libnetcdf.so.*) ln -sf "$nclib" "$TMP/lib/$so" ;;
        libhdf5_serial_hl.so.* | libhdf5_hl.so.*) ln -sf "$h5hl" "$TMP/lib/$so" ;;
        libhdf5_serial.so.* | libhdf5.so.*) ln -sf "$h5lib" "$TMP/lib/$so" ;;
        esac
    done
    ls "$TMP"/lib/libnetcdf.so.* >/dev/null 2>&1 || fail "$prog does not link a libnetcdf: $(ldd "$prog")"
    printf 'int nc_set_log_level(int level) { (void)level; return 0; }\n' >"$TMP/lib/shim.c"
    ${CC:-cc} -shared -fPIC -o "$TMP/lib/libncshim.so" "$TMP/lib/shim.c" || fail "compiling the nc_set_log_level shim"
    export LD_LIBRARY_PATH=$TMP/lib:$H5ZARR_DEPS/hdf5/lib:$H5ZARR_DEPS/netcdf/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_PRELOAD=$TMP/lib/libncshim.so
    NCVER=$(sed -n 's/^#define NC_VERSION *"\(.*\)".*/\1/p' "$H5ZARR_DEPS"/netcdf/include/netcdf_meta.h)
    [ -n "$NCVER" ] || fail "no NC_VERSION in the deps' netcdf_meta.h"
    printf '[path *.nc]\nformat = zarr\n' >"$TMP/rules.conf"
}
ND="$H5ZARR_DEPS/netcdf/bin/ncdump"
zrun() { HDF5_VOL_CONNECTOR=zarr H5ZARR_CONFIG=$TMP/rules.conf "$@"; }
