/*
 * fuzz_util.h: shared invariants of the fuzz harnesses (fuzz_util.c).
 */
#ifndef H5ZARR_FUZZ_UTIL_H
#define H5ZARR_FUZZ_UTIL_H

#include "h5zarr/zarr.h"

/* Aborts (FUZZ_CHECK) unless `a` and `b` (borrowed) describe the same array: format, shape, chunks,
 * dtype, fill value, key encoding, codecs, dimension names, attributes. `what` names the check. */
void fuzz_check_array_meta_equal(const zarr_array_meta *a, const zarr_array_meta *b, const char *what);

#endif
