/*
 * zfp_lib.c: the one libzfp table (zfp_lib.h) shared by the hdf5_zfp and zfpy codecs, with its soname
 * from the build (H5ZARR_ZFP_SONAME, CMakeLists.txt).
 */
#include "zfp_lib.h"

#ifndef H5ZARR_ZFP_SONAME
#define H5ZARR_ZFP_SONAME "libzfp.so.1"
#endif

zarr__zfp_table zarr__zfp_fn;

static const char *const zfp_names[] = {ZARR__ZFP_FUNCS(ZARR__DYNLIB_NAME)};
_Static_assert(sizeof zarr__zfp_fn == sizeof zfp_names / sizeof *zfp_names * sizeof(void (*)(void)),
               "zarr__zfp_fn: a table of function pointers only");

zarr__dynlib zarr__zfp_lib = {H5ZARR_ZFP_SONAME,
                              "the zfp codecs (hdf5_zfp, zfpy) and the zfp filter",
                              zfp_names,
                              &zarr__zfp_fn,
                              sizeof zfp_names / sizeof *zfp_names,
                              0,
                              ""};
