/*
 * swmr.c: HDF5's single-writer/multiple-reader mode (SWMR) on zarr stores.
 *
 * What SWMR needs from a file format is that a reader never sees a torn update, and that what a writer
 * flushed becomes visible to readers that look again. A zarr store gives the first for free: every
 * document and chunk is one store value, written whole (the directory store writes a temporary and
 * renames it into place), so a reader in another process reads the old value or the new one, never a
 * mix. The rest is bookkeeping, kept here:
 *  - the intent flags (h5zv_file.swmr): H5F_ACC_SWMR_READ from a read-only H5Fopen, H5F_ACC_SWMR_WRITE
 *    from an H5Fopen/H5Fcreate asking for it or from H5Fstart_swmr_write; H5Fget_intent reports them
 *    as the native connector does (h5py's `File.swmr_mode` reads them). A second open of a store open
 *    in this process follows HDF5's rules for the flags (H5Fint.c, H5F_open);
 *  - H5Fstart_swmr_write (the native file optional op H5VL_NATIVE_FILE_START_SWMR_WRITE): refused as
 *    natively on a read-only file, a file already in SWMR writing mode, a file access list whose high
 *    libver bound is below 1.10, and under MPI-IO; otherwise everything made so far is flushed (readers
 *    can then open it) and the file is in SWMR writing mode until it closes;
 *  - H5Drefresh in a read-only open: the array's metadata is read again from the store and its shape
 *    taken over (the writer's H5Dset_extent), and the cached chunks and shard indexes are dropped so
 *    the next read fetches what the writer stored. A writable open refreshes nothing (its own cache is
 *    what the store holds after its next flush), as natively (H5O_refresh_metadata).
 * docs/FORMAT.md, "SWMR", says what a reader sees and when.
 */
#include "h5zv.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SWMR_FLAGS (H5F_ACC_SWMR_READ | H5F_ACC_SWMR_WRITE)

int
h5zv_swmr_open(h5zv_file *f, unsigned flags, bool shared)
{
    unsigned want = flags & SWMR_FLAGS;
    int      ret  = -1;

    if (shared) {
        /* the store is open in this process already: HDF5's checks for a second open of a file */
        if ((want & H5F_ACC_SWMR_WRITE) && !(f->swmr & H5F_ACC_SWMR_WRITE))
            H5ZV_GOTO_ERROR_CODE(H5E_FILE, H5E_CANTOPENFILE,
                                 "can't open '%s' for SWMR writing: it is already open without SWMR write "
                                 "access (SWMR write access flag not the same for file that is already open)",
                                 f->name);
        if ((want & H5F_ACC_SWMR_READ) && !(f->swmr & SWMR_FLAGS) && f->intent != H5F_ACC_RDWR)
            H5ZV_GOTO_ERROR_CODE(
                H5E_FILE, H5E_CANTOPENFILE,
                "can't open '%s' for SWMR reading: it is already open read-only without SWMR "
                "(SWMR read access flag not the same for file that is already open)",
                f->name);
        return 0;
    }
    if (want && f->mpi)
        H5ZV_GOTO_ERROR_CODE(H5E_FILE, H5E_BADVALUE,
                             "can't open '%s' with SWMR access through MPI-IO: SWMR needs a single writer "
                             "process (as in HDF5, whose MPI-IO driver has no SWMR)",
                             f->name);
    if (want & H5F_ACC_SWMR_READ)
        /* no consolidated view: its copy of the metadata is what the store held when it was written (the
         * writer's close at the earliest), not what the writer has flushed since */
        f->cview_state = -1;
    f->swmr = want;
    ret     = 0;
done:
    return ret;
}

unsigned
h5zv_swmr_intent(const h5zv_file *f)
{
    /* as the native connector reports it (H5VLnative_file.c): RDWR with SWMR_WRITE, RDONLY with SWMR_READ */
    if (f->intent == H5F_ACC_RDWR)
        return H5F_ACC_RDWR | (f->swmr & H5F_ACC_SWMR_WRITE);
    return H5F_ACC_RDONLY | (f->swmr & H5F_ACC_SWMR_READ);
}

int
h5zv_swmr_start_write(h5zv_file *f)
{
    H5F_libver_t lo = H5F_LIBVER_EARLIEST, hi = H5F_LIBVER_LATEST;
    herr_t       got;
    int          ret = -1;

    /* the native connector's checks, with its messages (H5Fint.c, H5F__start_swmr_write) */
    if (f->intent != H5F_ACC_RDWR)
        H5ZV_GOTO_ERROR_CODE(
            H5E_FILE, H5E_BADVALUE,
            "can't start SWMR writing on '%s': no write intent on file (it is open read-only)", f->name);
    if (f->swmr & H5F_ACC_SWMR_WRITE)
        H5ZV_GOTO_ERROR_CODE(H5E_FILE, H5E_BADVALUE,
                             "can't start SWMR writing on '%s': file already in SWMR writing mode", f->name);
    if (f->mpi)
        H5ZV_GOTO_ERROR_CODE(
            H5E_FILE, H5E_BADVALUE,
            "can't start SWMR writing on '%s': not through MPI-IO (SWMR needs a single writer "
            "process, as in HDF5, whose MPI-IO driver has no SWMR)",
            f->name);
    /* A zarr store has no superblock version, so the low bound (which natively must be 1.10 or the file's
     * superblock must say so) is not asked for; a high bound below 1.10 asks for a format without SWMR. */
    H5E_BEGIN_TRY { got = H5Pget_libver_bounds(f->fapl_id, &lo, &hi); }
    H5E_END_TRY
    if (got >= 0 && hi < H5F_LIBVER_V110)
        H5ZV_GOTO_ERROR_CODE(H5E_FILE, H5E_BADVALUE,
                             "can't start SWMR writing on '%s': file format version does not support SWMR - "
                             "needs to be 1.10 or greater (the file access property list's high bound is "
                             "lower)",
                             f->name);
    /* What was made so far reaches the store (deferred creates, attributes, cached chunks): readers can
     * open it from now on. */
    if (h5zv_file_flush(f) < 0)
        H5ZV_GOTO_ERROR_CODE(H5E_FILE, H5E_CANTFLUSH,
                             "can't start SWMR writing on '%s': unable to flush file's cached information",
                             f->name);
    f->swmr = (f->swmr & ~(unsigned)SWMR_FLAGS) | H5F_ACC_SWMR_WRITE;
    ret     = 0;
done:
    return ret;
}

/* The array metadata `m` as text with what a writer may change under SWMR left out (the shape; the
 * dimension names, which follow sizes; the attributes, not taken over): two arrays with the same text
 * are the same array in every other respect (rank, data type, chunks, codecs, fill value, keys).
 * malloc'ed; NULL when out of memory (the core's message set). */
static char *
fixed_part(const zarr_array_meta *m)
{
    zarr_array_meta *c    = zarr_array_meta_copy(m);
    char            *text = NULL, *zattrs = NULL;

    if (!c)
        return NULL;
    for (int d = 0; d < c->ndim; d++) {
        c->shape[d] = 0;
        free(c->dimension_names[d]);
        c->dimension_names[d] = NULL;
    }
    c->has_dimension_names = false;
    json_object_put(c->attributes);
    c->attributes = json_object_new_object();
    json_object_put(c->reserved); /* the connector's records (attribute records, link bookkeeping) */
    c->reserved = NULL;
    if (c->attributes && (c->zarr_format == 3 ? zarr_array_meta_to_v3(c, &text)
                                              : zarr_array_meta_to_v2(c, &text, &zattrs)) != ZARR_OK) {
        free(text);
        text = NULL;
    }
    free(zattrs);
    zarr_array_meta_free(c);
    return text;
}

int
h5zv_swmr_refresh(h5zv_file *f, h5zv_node *n)
{
    zarr_array            *a = NULL;
    const zarr_array_meta *now;
    zarr_array_meta       *m;
    char                  *was = NULL, *is = NULL;
    int                    ret = -1;

    h5zv_refidx_drop(f); /* the store's documents read again: the next move walks (vol/refidx.c) */
    if (f->intent == H5F_ACC_RDWR || !n->a)
        return 0; /* a writable open's cache is newer than the store: nothing to reload (as natively) */
    if (zarr_array_open_format(f->store, n->path, n->format, &a) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't refresh dataset '/%s' of '%s': can't read its metadata again", n->path,
                       f->name);
    now = zarr_array_meta_get(a);
    m   = zarr_array_meta_mut(n->a);
    if (!(was = fixed_part(m)) || !(is = fixed_part(now)))
        H5ZV_GOTO_ZERR("can't refresh dataset '/%s' of '%s'", n->path, f->name);
    if (now->ndim != m->ndim || strcmp(was, is) != 0)
        H5ZV_GOTO_ERROR(
            "can't refresh dataset '/%s' of '%s': its array changed in more than its shape (data "
            "type, rank, chunks or codecs); a SWMR writer may only extend it: open the file again "
            "to see the new array",
            n->path, f->name);
    memcpy(m->shape, now->shape, (size_t)m->ndim * sizeof m->shape[0]);
    h5zv_node_shape_changed(n);
    /* chunks (and shard indexes) read before may have been replaced by the writer */
    zarr_array_discard_cache(n->a);
    ret = 0;
done:
    free(was);
    free(is);
    zarr_array_close(a);
    return ret;
}
