/*
 * pointer.h: pointer files, which let programs that pick a file's format from its first bytes (netCDF)
 * reopen a zarr store by the name they created it with.
 *
 * When the configuration (a rule, or create=zarr given as text: HDF5_VOL_CONNECTOR, a config file)
 * sends a new path that does not end in .zarr/.zr3 (say out.nc) to zarr, the store is made beside it (as
 * <name>.zarr when that name is free) and <name> becomes a pointer: a plain, empty HDF5 file (HDF5's
 * signature at offset 0, or after the user block the fcpl asked for) followed, after HDF5's end-of-file
 * address, by a 512-byte record that names the store and carries the pointer's random id. The store
 * holds the key `.h5zarr_pointer` naming the pointer that owns it (its id and file name), so that a
 * pointer copied at the file level is told from the one it was copied from (opening the copy for writing
 * copies the store first), a renamed pointer keeps its store, and the store of a pointer that another
 * file replaced is removed. Native HDF5 tools without the connector see an empty file whose root
 * attribute `h5zarr_store` names the store. Pointers of version 1 (the record in a 512-byte user block,
 * no id) are still read. Format: docs/FORMAT.md ("Pointer files").
 *
 * A pointer is untrusted input: it may only name a store in its own directory (a plain name, no `/`),
 * or a well-formed URL under a prefix that the configuration in force for the pointer's path allows (the
 * settings `store` and `allow_url`, docs/CONFIG.md): else it is refused, naming the pointer and the
 * settings, before any request. The stores of new pointers go under the `store` prefix when it is set
 * (say s3://bucket/run42/out.nc.4f0c1d9e.zarr for /scratch/run42/out.nc).
 */
#ifndef H5ZV_POINTER_H
#define H5ZV_POINTER_H

#include "h5zv.h"
#include "pointer_parse.h"

/* Whether `name` is a pointer file: 1 (then *store, malloc'ed, is the path of the store it names:
 * the pointer's directory + the stored name, or the URL it records, allowed by the configuration that
 * `fapl_id` and the pointer's path resolve; `id`, when not NULL, H5ZV_POINTER_ID_LEN + 1 bytes, its id,
 * "" for a version 1 pointer), 0 (not a pointer; nothing pushed), -1 (a pointer that is damaged or
 * names something it may not: error pushed naming the file and what is wrong, and for a URL the
 * settings that do not allow it). Makes no request to a store. */
int h5zv_pointer_read(const char *name, hid_t fapl_id, char **store, char *id);
/* h5zv_pointer_read with the stat of `name` the caller made just now (`st`; NULL: stat it here). */
struct stat;
int h5zv_pointer_read_st(const char *name, const struct stat *st, hid_t fapl_id, char **store, char *id);

/* The store to open for the pointer `name` with the H5Fopen `flags`: 0 (not a pointer), 1 (*store,
 * malloc'ed, is it), -1 (error pushed). Opening for reading gives the store the pointer names. Opening
 * for writing a pointer whose store belongs to another pointer (a file-level copy: `cp in.nc out.nc`)
 * first copies the store to one of its own and rewrites the pointer (copy on write), so no write
 * reaches another file's store; a renamed pointer takes its store over. Opening a renamed pointer or
 * a copy for writing also removes the orphan stores of the directory (h5zv_pointer_sweep). `st`: the stat
 * of `name` the caller made just now, or NULL (stat'ed here). */
int h5zv_pointer_open_store(const char *name, const struct stat *st, unsigned flags, hid_t fapl_id,
                            char **store);

/* For H5Fcreate of the pointer `name`: the store to create (*store, malloc'ed) and the new pointer's id
 * (`id`, H5ZV_POINTER_ID_LEN + 1 bytes). The store an existing pointer at `name` owns is reused (created
 * again, the pointer keeping its id) unless another pointer names it too; else, when the setting `store`
 * (resolved with `fapl_id` for `name`) gives a URL prefix, <prefix><file name>.<8 hex digits of the
 * id>.zarr; else <name>.zarr when it is free (or no other pointer names it), else <name>.<8 hex digits
 * of the id>.zarr. -1 with error pushed. */
int h5zv_pointer_plan(const char *name, hid_t fapl_id, char **store, char *id);
/* After the store of h5zv_pointer_plan is made: writes the pointer `name` (atomically: a temporary file
 * renamed over it) with a user block of `userblock` bytes (0: none; the fcpl's H5Pget_userblock: the
 * program owns those bytes of the file, as in a native file), records the owner in the store, and
 * removes the directory's orphan stores. The pointer's data is fsync'ed before the rename when `durable`
 * (the file's setting). -1 with error pushed (the pointer is then not written). */
int h5zv_pointer_commit(const char *name, const char *store, const char *id, hsize_t userblock, bool durable);

/* Whether H5Fdelete of the pointer `name` (naming `store`, with `id`) removes the store too: 1 when the
 * pointer owns it (or the store records no owner), 0 when it is another pointer's (a copy's delete
 * removes only the copy), -1 with error pushed. */
int h5zv_pointer_owns_store(const char *name, const char *store, const char *id);

/* Removes the stores of `dir` ("" = the current directory) that record an owner pointer which another
 * pointer has replaced (the owner's name is now a pointer to another store or with another id, and no
 * pointer in the directory names the store with its id). The first sweep of a directory in a process
 * reads every store's record; later ones, on a local file system, only the stores that the names
 * changed since may concern (an inotify watch: pointer.c, "what changed"). Best effort: pushes no
 * error. Returns the number of stores removed. */
int h5zv_pointer_sweep(const char *dir, const char *except);

/* For each pointer this process wrote under NCO's temporary name (h5zv_config_temp_base_len) that is gone
 * now (renamed over its final name, as NCO does before it exits), sweeps its directory (and its URL
 * prefix), so the store of the pointer it replaced does not outlive the run; then forgets them. Called
 * at the connector's term, before the pools stop. Best effort: pushes no error. */
void h5zv_pointer_sweep_renamed(void);

/* Drops what the sweeps remember of directories, closes their watch, and drops the remembered HDF5
 * parts of pointers (the connector's term). */
void h5zv_pointer_term(void);

#endif
