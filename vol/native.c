/*
 * native.c: the wrapper around objects of native HDF5 files (mixed mode, see native.h) and the object
 * wrapping callbacks HDF5 uses for them.
 *
 * HDF5 registers objects the connector underneath creates on its own (the group handed to an
 * H5Literate callback, the file of an external link, H5Iget_file_id's file) through the wrapping
 * context of the object the call started from: for a native object we hand out a context that wraps
 * them as h5zv_native; for a zarr object there is none, and HDF5 registers our objects as they are.
 */
#include "native.h"

#include <stdint.h>

#include <stdlib.h>

hid_t
h5zv_native_vol_id(void)
{
    return H5VL_NATIVE;
}

h5zv_native *
h5zv_native_new(void *under, hid_t vol_id)
{
    h5zv_native *n;
    if (!under)
        return NULL;
    if (!(n = calloc(1, sizeof *n))) {
        h5zv_err_push(__func__, __LINE__, "out of memory");
        return NULL;
    }
    n->type         = H5ZV_NATIVE_TAG;
    n->under        = under;
    n->under_vol_id = vol_id;
    n->owner        = H5I_INVALID_HID;
    return n;
}

void
h5zv_native_free(h5zv_native *n)
{
    free(n);
}

hid_t
h5zv_native_fapl(hid_t fapl_id)
{
    hid_t f = H5Pcopy(fapl_id == H5P_DEFAULT || fapl_id < 0 ? H5P_FILE_ACCESS_DEFAULT : fapl_id);
    if (f < 0)
        return f;
    if (H5Pset_vol(f, h5zv_native_vol_id(), NULL) < 0) {
        h5zv_close(f);
        h5zv_err_push(__func__, __LINE__, "can't set the native connector on a file access property list");
        return H5I_INVALID_HID;
    }
    return f;
}

/* Set while the connector itself asks HDF5 for the object behind an id (h5zv_object_of). */
static bool own_lookup;

void *
h5zv_object_of(hid_t id)
{
    void *o;
    own_lookup = true;
    o          = H5VLobject(id);
    own_lookup = false;
    return o;
}

void *
h5zv_native_get_object(const void *obj)
{
    if (h5zv_is_native(obj)) {
        const h5zv_native *n = obj;
        return H5VLget_object(n->under, n->under_vol_id);
    }
    /* A named datatype of a store: HDF5 takes what this returns for its own datatype struct (H5T_t) and
     * reads it when it walks every datatype id (H5T_get_actual_type: at library close, marking types
     * read-only; H5Fget_obj_ids of native files). No public call hands out the H5T_t of the type the object
     * holds, so it gets an inert one: all zero (a transient type, not named, not immutable), whose `shared`
     * part is zero too (the second field of an H5T_t, after its H5O_shared_t). Returning the object itself
     * made HDF5 read this connector's memory as an H5T_t: a named datatype left open at exit crashed. */
    if (!own_lookup && ((const h5zv_obj *)obj)->type == H5I_DATATYPE) {
        static union {
            char  bytes[1024];
            void *align;
        } inert_shared, inert_type;
        struct h5o_shared_like {
            unsigned type;
            void    *file;
            unsigned msg_type_id;
            union {
                struct {
                    uint32_t index;
                    uint64_t oh_addr;
                } loc;
                uint8_t heap_id[8];
            } u;
        };
        void **shared = (void **)(inert_type.bytes + sizeof(struct h5o_shared_like));
        *shared       = &inert_shared;
        return &inert_type;
    }
    return (void *)obj;
}

herr_t
h5zv_native_get_wrap_ctx(const void *obj, void **wrap_ctx)
{
    const h5zv_native    *n = obj;
    h5zv_native_wrap_ctx *c;

    *wrap_ctx = NULL;
    if (!h5zv_is_native(obj))
        return 0; /* zarr objects: HDF5 registers what we hand it unwrapped */
    if (!(c = calloc(1, sizeof *c)))
        return -1;
    c->under_vol_id = n->under_vol_id;
    if (H5VLget_wrap_ctx(n->under, n->under_vol_id, &c->under_wrap_ctx) < 0) {
        free(c);
        return -1;
    }
    *wrap_ctx = c;
    return 0;
}

void *
h5zv_native_wrap_object(void *obj, H5I_type_t obj_type, void *wrap_ctx)
{
    h5zv_native_wrap_ctx *c = wrap_ctx;
    void                 *under;
    h5zv_native          *n;

    if (!c)
        return obj;
    if (!(under = H5VLwrap_object(obj, obj_type, c->under_vol_id, c->under_wrap_ctx)))
        return NULL;
    if (!(n = h5zv_native_new(under, c->under_vol_id)))
        return NULL;
    return n;
}

void *
h5zv_native_unwrap_object(void *obj)
{
    h5zv_native *n = obj;
    void        *under;
    if (!h5zv_is_native(obj))
        return obj;
    under = H5VLunwrap_object(n->under, n->under_vol_id);
    if (under)
        h5zv_native_free(n);
    return under;
}

herr_t
h5zv_native_free_wrap_ctx(void *wrap_ctx)
{
    h5zv_native_wrap_ctx *c   = wrap_ctx;
    herr_t                ret = 0;
    if (!c)
        return 0;
    if (c->under_wrap_ctx)
        ret = H5VLfree_wrap_ctx(c->under_wrap_ctx, c->under_vol_id);
    free(c);
    return ret;
}
