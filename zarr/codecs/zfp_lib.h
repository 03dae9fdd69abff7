/*
 * zfp_lib.h: libzfp loaded on first use (dynlib.h) for the two codecs that call it, hdf5_zfp.c (and
 * through it the zfp filter plugin) and zfpy.c: one table of the functions either calls, filled once per
 * process. A caller runs zarr__dynlib_load(&zarr__zfp_lib) before its first call through zarr__zfp_fn.
 */
#ifndef H5ZARR_ZARR_CODECS_ZFP_LIB_H
#define H5ZARR_ZARR_CODECS_ZFP_LIB_H

#include "dynlib.h"

#include <zfp.h>

/* clang-format off */
#define ZARR__ZFP_FUNCS(X)                                                                                   \
    X(stream_close) X(stream_open) X(zfp_compress) X(zfp_decompress) X(zfp_field_1d) X(zfp_field_2d)         \
    X(zfp_field_3d) X(zfp_field_4d) X(zfp_field_alloc) X(zfp_field_free) X(zfp_field_set_pointer)            \
    X(zfp_read_header) X(zfp_stream_close) X(zfp_stream_compressed_size) X(zfp_stream_flush)                 \
    X(zfp_stream_maximum_size) X(zfp_stream_open) X(zfp_stream_rewind) X(zfp_stream_set_accuracy)            \
    X(zfp_stream_set_bit_stream) X(zfp_stream_set_params) X(zfp_stream_set_precision)                        \
    X(zfp_stream_set_rate) X(zfp_stream_set_reversible) X(zfp_type_size) X(zfp_write_header)
/* clang-format on */

typedef struct zarr__zfp_table {
    ZARR__ZFP_FUNCS(ZARR__DYNLIB_MEMBER)
} zarr__zfp_table;

/* Defined in zfp_lib.c; the library stays loaded for the life of the process. */
extern zarr__zfp_table zarr__zfp_fn;
extern zarr__dynlib    zarr__zfp_lib;

#endif
