/*
 * zarr_filters.h: what an HDF5 filter mapping needs from h5zarr's zarr core (part of the public
 * interface; see zarr.h for the conventions). The HDF5 side (the connector's filter table in
 * vol/filter.c, the H5Z plugins in filters/, the NCZarr codec table in plugin/) names HDF5's registered
 * filter ids, translates hdf5-blosc's cd_values (compressor and shuffle codes) to the `blosc` codec's
 * names and H5Z-ZFP's generic cd_values to the `hdf5_zfp` codec's, and checks settings against what
 * this build's c-blosc has: all of it here, so nothing outside the core includes <blosc.h> or a core
 * header. No HDF5 header is needed; every function is thread-safe and allocates nothing.
 */
#ifndef H5ZARR_ZARR_FILTERS_H
#define H5ZARR_ZARR_FILTERS_H

#include "h5zarr/zarr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- HDF5's registered ids of the filters whose chunks the core's codecs read and write ---------- */
#define ZARR_H5Z_BZIP2      307
#define ZARR_H5Z_LZF        32000
#define ZARR_H5Z_BLOSC      32001
#define ZARR_H5Z_LZ4        32004
#define ZARR_H5Z_BITSHUFFLE 32008 /* no codec: named in messages only */
#define ZARR_H5Z_ZFP        32013
#define ZARR_H5Z_ZSTD       32015

/* ---- Blosc1 (the `blosc` codec; hdf5-blosc's filter 32001) ----------------------------------------
 * Compressor codes are c-blosc's (BLOSC_BLOSCLZ .. BLOSC_ZSTD), what hdf5-blosc's cd_values[6] counts:
 * 0 blosclz, 1 lz4, 2 lz4hc, 3 snappy, 4 zlib, 5 zstd. Shuffle codes are cd_values[5]'s and the v3
 * codec's names: 0 "noshuffle", 1 "shuffle", 2 "bitshuffle". */
#define ZARR_BLOSC_NCOMP          6   /* compressor codes 0 .. ZARR_BLOSC_NCOMP - 1 */
#define ZARR_BLOSC_NSHUFFLE       3   /* shuffle codes 0 .. 2 */
#define ZARR_BLOSC_MAX_TYPESIZE   255 /* Blosc1's largest type size; larger ones are taken as 1 */
#define ZARR_BLOSC_VERSION_FORMAT 2   /* the Blosc1 frame format written (hdf5-blosc's cd_values[1]) */

/* The name of compressor `code` (a static string), NULL when `code` is not 0 .. ZARR_BLOSC_NCOMP - 1. */
const char *zarr_blosc_compname(int code);
/* The code of compressor `cname`, or -1 when it is not one of Blosc1's names (NULL included). Whether
 * this build's c-blosc has it is zarr_blosc_has_compressor's question. */
int zarr_blosc_compcode(const char *cname);
/* The v3 name of shuffle `code` (a static string), NULL when `code` is not 0, 1 or 2. */
const char *zarr_blosc_shuffle_name(int code);
/* The code of shuffle name `name` ("noshuffle" 0, "shuffle" 1, "bitshuffle" 2), -1 for anything else. */
int zarr_blosc_shuffle_code(const char *name);
/* Whether this build's c-blosc has the compressor `cname` (false for NULL and unknown names). */
bool zarr_blosc_has_compressor(const char *cname);
/* ZARR_OK when `cname` is a compressor this build's c-blosc has; else ZARR_EINVAL (not a Blosc1 name)
 * or ZARR_EUNSUPPORTED (not built in), with a message naming it and listing the compressors there are. */
int zarr_blosc_check_compressor(const char *cname);
/* The type size hdf5-blosc and the codec use for elements of `size` bytes: `size`, or 1 when it is 0
 * or above ZARR_BLOSC_MAX_TYPESIZE. */
unsigned zarr_blosc_typesize(size_t size);

/* ---- H5Z-ZFP (filter 32013; the `hdf5_zfp` codec) ------------------------------------------------ */
#define ZARR_H5ZFP_MAX_CD 16 /* the most cd_values of the kept form */

/* H5Z-ZFP's "generic" cd_values `gen[ngen]` ([0] mode 1 rate, 2 precision, 3 accuracy, 4 expert, 5
 * reversible, then its parameters; doubles as two 32-bit words) turned into the form the filter keeps
 * in a file ([0] its version word, [1..] zfp's full header), which is the `hdf5_zfp` codec's
 * cd_values, for a chunk of `ndim` dims `shape` (dims of extent 1 left out; at most 4 others) and zfp
 * type `type` (1 int32, 2 int64, 3 float, 4 double), as the filter's set_local does. Writes at most
 * ZARR_H5ZFP_MAX_CD values to the caller's `cd` and their count to *ncd. ZARR_EINVAL (bad mode, missing
 * parameters, bad type or arguments) or ZARR_EUNSUPPORTED (more than 4 dims above 1) with a message. */
int zarr_h5zfp_cd_from_generic(const unsigned *gen, size_t ngen, int type, int ndim, const uint64_t *shape,
                               unsigned *cd, size_t *ncd);

#ifdef __cplusplus
}
#endif

#endif
