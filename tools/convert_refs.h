/*
 * convert_refs.h: `h5zarr-convert --refs`, the reference writer (convert_refs.c): indexes an HDF5 or netCDF-4
 * file in place as kerchunk-style reference JSON (version 1) that zarr readers (fsspec's ReferenceFileSystem,
 * the connector's reference store) read as a zarr v2 hierarchy whose chunks are byte ranges of the file.
 * Format and limits: docs/FORMAT.md ("Reference stores").
 */
#ifndef H5ZARR_TOOLS_CONVERT_REFS_H
#define H5ZARR_TOOLS_CONVERT_REFS_H

/* The --refs mode: `argv` holds the options after `--refs` (argv[0] the program's name for messages):
 * [--inline BYTES] [--url URL] [--strict] [--quiet] IN OUT.json. Writes OUT.json (atomically: a
 * temporary file renamed into place) and lists on stderr every object or attribute references can't
 * express. Returns the process exit status: 0 (everything referenced), 3 (written, with the listed
 * objects left out), 1 (an error, or --strict with something left out: nothing written), 2 (usage). */
int h5zarr_refs_main(int argc, char **argv);

#endif
