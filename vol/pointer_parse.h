/*
 * pointer_parse.h: the parser of a pointer file's record (vol/pointer.h), with no HDF5 in it, so that it
 * is fuzzed on its own (fuzz/fuzz_pointer.c).
 *
 * A record is a 512-byte text block. Version 2 (written now) is the last 512 bytes of a plain HDF5 file,
 * after HDF5's end-of-file address; version 1 (written before; still read) is the file's 512-byte user
 * block, before HDF5's superblock. A version 2 record may name a store by URL (s3://bucket/run42/...,
 * docs/FORMAT.md "Stores on object storage"): its syntax is checked here; whether the configuration in
 * force allows it is pointer.c's question, asked before any request.
 */
#ifndef H5ZV_POINTER_PARSE_H
#define H5ZV_POINTER_PARSE_H

#include <stddef.h>

/* The first lines of a record, its size, and the length of a v2 pointer's id (lowercase hex). */
#define H5ZV_POINTER_MAGIC    "h5zarr pointer v1\n"
#define H5ZV_POINTER_MAGIC_V2 "h5zarr pointer v2\n"
#define H5ZV_POINTER_BLOCK    512
#define H5ZV_POINTER_ID_LEN   32

/* Parses a record (the first `n` bytes given). Returns 0 when they are not a record (no magic of either
 * version, or fewer than H5ZV_POINTER_BLOCK bytes); 1 or 2 (the version) when they are a valid one:
 * *store (malloc'ed, the caller frees) is the store name, a plain name in the pointer's own directory
 * or (version 2 only) a URL that h5zv_pointer_url_check accepts, and `id` (H5ZV_POINTER_ID_LEN + 1
 * bytes, may be NULL) the pointer's id ("" for version 1, which has none); -1 when they start like a
 * record but are damaged or name something a pointer may not: `err` (nerr bytes) says what. */
int h5zv_pointer_parse(const unsigned char *block, size_t n, char **store, char *id, char *err, size_t nerr);

/* Whether the `n` bytes at `s` start like a URL: a scheme (a letter, then letters, digits, '+', '-', '.';
 * at most 32) and "://". */
int h5zv_pointer_is_url(const char *s, size_t n);

/* Checks the URL of `n` bytes at `s`: "<scheme>://<host or bucket>/<path>", the host of letters, digits,
 * '.', '-', '_' and ':' (no '@': no credentials in a URL), the path of non-empty components other than
 * "." and "..", each of letters, digits and "._~+=,:@-" (no query, fragment, percent escape, blank or
 * control character). A store URL (`prefix` 0) has a non-empty path without a trailing '/'; a prefix
 * (`prefix` 1: the settings `store` and `allow_url`) may have an empty path or end in '/'. 0 when it is
 * well formed, else -1 and `why` (nwhy bytes) says what is wrong. */
int h5zv_pointer_url_check(const char *s, size_t n, int prefix, char *why, size_t nwhy);

/* Whether `url` lies under `prefix` (both checked URLs): `prefix` taken as a directory (a '/' after it
 * when it has none), so s3://b/run4 does not hold s3://b/run42/x. */
int h5zv_pointer_url_under(const char *url, const char *prefix);

/* Whether `s` is a well-formed pointer id (H5ZV_POINTER_ID_LEN lowercase hex digits, then the end). */
int h5zv_pointer_id_ok(const char *s);

#endif
