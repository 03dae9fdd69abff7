/*
 * pointer_parse.h: the parser of a pointer file's user block (vol/pointer.h), with no HDF5 in it, so
 * that it is fuzzed on its own (fuzz/fuzz_pointer.c).
 */
#ifndef H5ZV_POINTER_PARSE_H
#define H5ZV_POINTER_PARSE_H

#include <stddef.h>

/* The first line of a pointer file and the size of its user block (HDF5's superblock follows). */
#define H5ZV_POINTER_MAGIC "h5zarr pointer v1\n"
#define H5ZV_POINTER_BLOCK 512

/* Parses the first `n` bytes of a file. Returns 0 when they are not a pointer's (no magic, or fewer than
 * H5ZV_POINTER_BLOCK bytes); 1 when they are a valid pointer's: *store (malloc'ed, the caller frees) is
 * the store name, a plain name in the pointer's own directory; -1 when they start like a pointer's but
 * are damaged or name something a pointer may not: `err` (nerr bytes) says what. */
int h5zv_pointer_parse(const unsigned char *block, size_t n, char **store, char *err, size_t nerr);

#endif
