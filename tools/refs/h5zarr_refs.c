/*
 * h5zarr_refs.c: `h5zarr-refs`, the reference writer (tools/convert_refs.c) as a program of its own until
 * `h5zarr-convert --refs` calls h5zarr_refs_main: `h5zarr-refs [options] IN OUT.json`.
 */
#include "convert_refs.h"

int
main(int argc, char **argv)
{
    return h5zarr_refs_main(argc, argv);
}
