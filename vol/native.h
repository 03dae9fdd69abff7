/*
 * native.h: objects of files that are not zarr stores, handed to HDF5's native connector underneath
 * (the pass-through, or mixed mode).
 *
 * With the connector set for a whole process (HDF5_VOL_CONNECTOR=zarr), every file HDF5 opens goes
 * through it. Zarr stores are served by vol/<kind>.c; everything else is an h5zv_native: the object the
 * connector underneath (native HDF5) returned, wrapped so that HDF5 keeps calling us for it, and every
 * callback forwards it (vol/route.c), the way HDF5's pass-through connector wraps another one.
 *
 * An h5zv_native starts with the same two members as an h5zv_obj (an H5I type and a file pointer), so
 * code that inspects any object of ours reads a tag no h5zv_obj carries and a NULL file.
 */
#ifndef H5ZV_NATIVE_H
#define H5ZV_NATIVE_H

#include "h5zv.h"

/* The tag in h5zv_native.type: not an H5I type. */
#define H5ZV_NATIVE_TAG ((H5I_type_t)0x4e415456)

typedef struct h5zv_native {
    H5I_type_t type;         /* H5ZV_NATIVE_TAG */
    h5zv_file *file;         /* always NULL */
    void      *under;        /* the native connector's object (owned: closed through the native connector) */
    hid_t      under_vol_id; /* the connector underneath (HDF5's native one; not counted) */
    hid_t      owner;        /* when not negative: an id of ours that holds `under` open (an object opened
                              * through the API across formats, xcopy.c); closing releases the id */
} h5zv_native;

/* The wrapping context for objects the connector underneath hands HDF5 during a callback (iteration,
 * external links, H5Iget_file_id): HDF5 asks us to wrap them (h5zv_native_wrap_object). */
typedef struct h5zv_native_wrap_ctx {
    hid_t under_vol_id;
    void *under_wrap_ctx;
} h5zv_native_wrap_ctx;

/* True if `obj` (any object of ours; NULL: false) is a native one. */
static inline bool
h5zv_is_native(const void *obj)
{
    return obj && ((const h5zv_native *)obj)->type == H5ZV_NATIVE_TAG;
}
#define H5ZV_NATIVE(obj) ((h5zv_native *)(obj))

/* The native connector's id (HDF5 owns it). */
hid_t h5zv_native_vol_id(void);
/* Wraps `under` (taken; NULL: returns NULL) for connector `vol_id`. NULL on allocation failure (then
 * `under` is left to the caller). */
h5zv_native *h5zv_native_new(void *under, hid_t vol_id);
/* Frees the wrapper only (the object underneath has been closed). Accepts NULL. */
void h5zv_native_free(h5zv_native *n);
/* A copy of `fapl_id` (H5P_DEFAULT: the default fapl) whose VOL is the native connector: what native
 * file callbacks are given. Negative on failure. */
hid_t h5zv_native_fapl(hid_t fapl_id);

/* wrap_cls callbacks (HDF5 calls them on every object of ours: zarr objects answer "nothing to wrap"). */
void  *h5zv_native_get_object(const void *obj);
herr_t h5zv_native_get_wrap_ctx(const void *obj, void **wrap_ctx);
void  *h5zv_native_wrap_object(void *obj, H5I_type_t obj_type, void *wrap_ctx);
void  *h5zv_native_unwrap_object(void *obj);
herr_t h5zv_native_free_wrap_ctx(void *wrap_ctx);

#endif
