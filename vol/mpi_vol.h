/*
 * mpi_vol.h: zarr stores opened with H5Pset_fapl_mpio (vol/mpi_vol.c; docs/HACKING.md "MPI"). Compiled only
 * against a parallel HDF5 (H5_HAVE_PARALLEL); in a serial build every call below is an inline no-op and
 * h5zv_file.mpi stays NULL, so the serial connector is unchanged.
 *
 * The scheme, in short: every rank runs every collective metadata call (HDF5's rule for parallel
 * files) on its own node cache, so all ranks hold the same metadata; only rank 0 writes it. Such a call
 * is one *step*: ranks other than 0 run it first with every store write of theirs dropped (a wrapper
 * store), a barrier, then rank 0 runs it and writes, then an allreduce of the status, which is also the
 * barrier after which everyone may rely on what rank 0 wrote. Raw data: each rank writes the chunks
 * (shards) its selection covers whole, directly; pieces of chunks it covers in part are queued and, at
 * the next collective point (a collective H5Dwrite, H5Dclose, H5Fflush, H5Fclose), sent to the chunk's
 * owner rank, which read-modify-writes the chunk once with every rank's pieces (two-phase). A failure on
 * any rank fails the call on every rank (the allreduce), naming the lowest failing rank.
 */
#ifndef H5ZV_MPI_VOL_H
#define H5ZV_MPI_VOL_H

#include "h5zv.h"

typedef struct h5zv_mpi h5zv_mpi;

#ifdef H5_HAVE_PARALLEL
/* File create/open (file.c). open_begin: when `fapl_id` selects the MPI-IO driver, keeps its
 * communicator (duplicated) for the open under way and returns 1 (0: not MPI-IO, or an open nested in
 * another; -1: error pushed). opening_rank: this rank in that communicator. opening_share: rank 0's
 * `ok`, on every rank (a broadcast). attach: gives the file `f` that communicator (f->mpi, owned) and,
 * on ranks other than 0, wraps f->store so that they write no metadata; call right after the store is
 * opened; 0 or -1 (pushed). open_end: `o` (the new file object, or NULL) is this rank's result; returns
 * `o`, or NULL (o freed, error pushed) when any rank failed. A create is: rank 0 creates, shares its
 * outcome, the others then open what it made. opening_fapl: the fapl the open must use instead of the
 * caller's (its driver reset: copies of an MPI-IO fapl are collective). */
int   h5zv_mpi_open_begin(hid_t fapl_id);
int   h5zv_mpi_opening_rank(void);
hid_t h5zv_mpi_opening_fapl(hid_t fapl_id); /* what the open uses in place of `fapl_id` (see mpi_vol.c) */
bool  h5zv_mpi_opening_share(bool ok);
int   h5zv_mpi_attach(h5zv_file *f);
void *h5zv_mpi_open_end(void *o);
/* Frees what attach gave a file (at its last reference). Accepts NULL. */
void h5zv_mpi_free(h5zv_mpi *m);

/* One collective metadata step on file `f` (no-ops when f has no communicator): begin before running
 * it, end after with this rank's outcome; end returns the agreed outcome (false: some rank failed; an
 * error naming it is pushed on ranks that succeeded). `what` names the call in messages. */
void h5zv_mpi_begin(h5zv_file *f);
bool h5zv_mpi_end(h5zv_file *f, bool ok, const char *what);

/* Raw data: writes `buf` (dense, memory form, `esize` bytes an element) to region `r` of array `a`
 * (dataset `path` of `f`): whole chunks at once, pieces of partly covered chunks queued for the next
 * sync. Returns a zarr status (message set on failure). Regions must be boxes (stride = block). */
int h5zv_mpi_write(h5zv_file *f, const char *path, zarr_array *a, const zarr_region *r, const void *buf,
                   size_t esize);
/* Collective: sends the queued pieces of dataset `path` (NULL: of every dataset) to their owners, which
 * apply them; then drops every cached chunk of the file so reads see all ranks' writes. `ok` is this
 * rank's outcome so far; returns 0 when every rank succeeded, else -1 (error pushed). */
int h5zv_mpi_sync(h5zv_file *f, const char *path, bool ok);
/* True when `f` is an MPI file and `dxpl_id` asks for collective transfers (H5Pset_dxpl_mpio). */
bool h5zv_mpi_collective(h5zv_file *f, hid_t dxpl_id);
#else
static inline int
h5zv_mpi_open_begin(hid_t fapl_id)
{
    (void)fapl_id;
    return 0;
}
static inline int
h5zv_mpi_opening_rank(void)
{
    return 0;
}
static inline hid_t
h5zv_mpi_opening_fapl(hid_t fapl_id)
{
    return fapl_id;
}
static inline bool
h5zv_mpi_opening_share(bool ok)
{
    return ok;
}
static inline int
h5zv_mpi_attach(h5zv_file *f)
{
    (void)f;
    return 0;
}
static inline void *
h5zv_mpi_open_end(void *o)
{
    return o;
}
static inline void
h5zv_mpi_free(h5zv_mpi *m)
{
    (void)m;
}
static inline void
h5zv_mpi_begin(h5zv_file *f)
{
    (void)f;
}
static inline bool
h5zv_mpi_end(h5zv_file *f, bool ok, const char *what)
{
    (void)f, (void)what;
    return ok;
}
static inline int
h5zv_mpi_write(h5zv_file *f, const char *path, zarr_array *a, const zarr_region *r, const void *buf,
               size_t esize)
{
    (void)f, (void)path, (void)esize;
    return zarr_array_write(a, r, buf);
}
static inline int
h5zv_mpi_sync(h5zv_file *f, const char *path, bool ok)
{
    (void)f, (void)path;
    return ok ? 0 : -1;
}
static inline bool
h5zv_mpi_collective(h5zv_file *f, hid_t dxpl_id)
{
    (void)f, (void)dxpl_id;
    return false;
}
#endif

/* A step around a callback of an object of ours (route.c): `call` returns herr_t / a new object
 * (closed with `closer` when another rank failed). Files without a communicator just run `call`. */
#define H5ZV_MPI_STEP_HERR(file, what, call)                                                                 \
    ({                                                                                                       \
        h5zv_file *_f = (file);                                                                              \
        herr_t     _r;                                                                                       \
        if (!_f || !_f->mpi)                                                                                 \
            _r = (call);                                                                                     \
        else {                                                                                               \
            h5zv_file_incref(_f);                                                                            \
            h5zv_mpi_begin(_f);                                                                              \
            _r = (call);                                                                                     \
            if (!h5zv_mpi_end(_f, _r >= 0, what))                                                            \
                _r = -1;                                                                                     \
            h5zv_file_decref(_f);                                                                            \
        }                                                                                                    \
        _r;                                                                                                  \
    })
#define H5ZV_MPI_STEP_PTR(file, what, call, closer)                                                          \
    ({                                                                                                       \
        h5zv_file *_f = (file);                                                                              \
        void      *_r;                                                                                       \
        if (!_f || !_f->mpi)                                                                                 \
            _r = (call);                                                                                     \
        else {                                                                                               \
            h5zv_file_incref(_f);                                                                            \
            h5zv_mpi_begin(_f);                                                                              \
            _r = (call);                                                                                     \
            if (!h5zv_mpi_end(_f, _r != NULL, what) && _r) {                                                 \
                h5zv_errs *_es = h5zv_err_save();                                                            \
                closer(_r, H5P_DEFAULT, NULL);                                                               \
                h5zv_err_restore(_es);                                                                       \
                _r = NULL;                                                                                   \
            }                                                                                                \
            h5zv_file_decref(_f);                                                                            \
        }                                                                                                    \
        _r;                                                                                                  \
    })

#endif
