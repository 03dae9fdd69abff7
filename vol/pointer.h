/*
 * pointer.h: pointer files, which let programs that pick a file's format from its first bytes (netCDF)
 * reopen a zarr store by the name they created it with.
 *
 * When a configuration rule sends a new path that does not end in .zarr/.zr3 (say out.nc) to zarr, the
 * store is made beside it as <name>.zarr and <name> becomes a pointer: a small valid HDF5 file with a
 * 512-byte user block that names the store. netCDF finds HDF5's signature (at offset 512, where it
 * looks), hands the path to HDF5, and the connector follows the pointer; native HDF5 tools without
 * the connector see an empty file whose root attribute `h5zarr_store` names the store. Format:
 * docs/FORMAT.md ("Pointer files").
 *
 * A pointer is untrusted input: it may only name a store in its own directory (a plain name, no `/`).
 */
#ifndef H5ZV_POINTER_H
#define H5ZV_POINTER_H

#include "h5zv.h"
#include "pointer_parse.h"

/* Whether `name` is a pointer file: 1 (then *store, malloc'ed, is the path of the store it names:
 * the pointer's directory + the stored name), 0 (not a pointer; nothing pushed), -1 (a pointer that is
 * damaged or names something it may not: error pushed naming the file and what is wrong). */
int h5zv_pointer_read(const char *name, char **store);
/* The store path for a new pointer `name`: "<name>.zarr" (malloc'ed). */
char *h5zv_pointer_store_for(const char *name);
/* Writes the pointer `name` for the store `store` (a path in the same directory), replacing what is
 * there atomically (a temporary file renamed over it). -1 with error pushed. */
int h5zv_pointer_write(const char *name, const char *store);

#endif
