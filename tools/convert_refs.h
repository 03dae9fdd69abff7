/*
 * convert_refs.h: `h5zarr-convert --refs`, the reference writer (convert_refs.c): indexes an HDF5 or netCDF-4
 * file in place as kerchunk-style reference JSON (version 1) that zarr readers (fsspec's ReferenceFileSystem,
 * the connector's reference store) read as a zarr v2 hierarchy whose chunks are byte ranges of the file.
 * Format and limits: docs/FORMAT.md ("Reference stores").
 */
#ifndef H5ZARR_TOOLS_CONVERT_REFS_H
#define H5ZARR_TOOLS_CONVERT_REFS_H

#include <hdf5.h>
#include <stdint.h>

/* What to add to a chunk address from H5Dchunk_iter to find the chunk in a file whose user block is `ub`
 * bytes: HDF5 counts the user block in these addresses since 1.14.4 (its pull request 4236), and did not
 * before. H5Dget_offset has always counted it. */
static inline uint64_t
cv_chunk_addr_base(hsize_t ub)
{
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    return maj > 1 || min > 14 || (min == 14 && rel >= 4) ? 0 : (uint64_t)ub;
}

/* The --refs mode: `argv` holds the options after `--refs` (argv[0] the program's name for messages):
 * [--inline BYTES] [--url URL] [--strict] [--quiet] IN OUT.json. Writes OUT.json (atomically: a
 * temporary file renamed into place) and lists on stderr every object or attribute references can't
 * express. Returns the process exit status: 0 (everything referenced), 3 (written, with the listed
 * objects left out), 1 (an error, or --strict with something left out: nothing written), 2 (usage). */
int h5zarr_refs_main(int argc, char **argv);

#endif
