/*
 * route.c: the connector's class. Every callback decides whether it serves a zarr store (vol/<kind>.c)
 * or a native HDF5 file (forwarded to HDF5's native connector underneath, see native.h), so that one
 * global HDF5_VOL_CONNECTOR=zarr serves both.
 *
 * Which files are zarr: an existing path that holds a zarr store (h5zv_file_is_store); a new path the
 * configuration sends to zarr (h5zv_config_new_is_zarr: names ending in .zarr or .zr3, rules, or
 * `create=zarr`). Every other file is native, and its objects are h5zv_native wrappers that each
 * callback here forwards unchanged, so a native file's bytes are exactly what native HDF5 writes.
 *
 * Callbacks with two locations (link copy/move, object copy, hard link creation) and multi-dataset
 * transfers may mix the two kinds: they are split here, and vol/xcopy.c copies across formats.
 */
#include "native.h"
#include "config.h"
#include "xcopy.h"
#include "pointer.h"
#include "pointer_parse.h"
#include "mpi_vol.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* Calls into the native connector, whose failures the caller's HDF5 call reports (with ours): the
 * nested H5VL* API call must not print them first. */
#define QUIET(call)                                                                                          \
    ({                                                                                                       \
        __typeof__(call) _r;                                                                                 \
        H5E_BEGIN_TRY { _r = (call); }                                                                       \
        H5E_END_TRY                                                                                          \
        _r;                                                                                                  \
    })
#define UNDER(o) (H5ZV_NATIVE(o)->under)
#define VOLOF(o) (H5ZV_NATIVE(o)->under_vol_id)

/* Wraps what a native callback returned for an object of parent `p` (NULL: the error is pushed). */
static void *
wrap_like(void *p, void *under)
{
    return under ? h5zv_native_new(under, VOLOF(p)) : NULL;
}

/* Frees a native wrapper after its object was closed underneath (`rc` is the close's result). */
static herr_t
closed(void *obj, herr_t rc)
{
    if (rc >= 0)
        h5zv_native_free(obj);
    return rc;
}

/* Closes a native object held by an id of ours (native.h: owner) instead of closing it underneath. */
#define OWNED_CLOSE(obj)                                                                                     \
    do {                                                                                                     \
        if (H5ZV_NATIVE(obj)->owner >= 0) {                                                                  \
            hid_t _id = H5ZV_NATIVE(obj)->owner;                                                             \
            h5zv_native_free(obj);                                                                           \
            return H5Idec_ref(_id) < 0 ? -1 : 0;                                                             \
        }                                                                                                    \
    } while (0)

/* MPI files (vol/mpi_vol.h): the file of a zarr object (NULL: none), and what drops a new object made on a
 * rank when another rank failed the same collective call (no collective work: not the close callback). */
#define MPI_FILE(o) ((o) ? ((h5zv_obj *)(o))->file : NULL)
/* the same for callbacks that only some operations make collective (the others may run on one rank) */
#define MPI_FILE_IF(o, cond) ((cond) ? MPI_FILE(o) : NULL)
static herr_t
mpi_drop(void *o, hid_t dxpl_id, void **req)
{
    (void)dxpl_id, (void)req;
    h5zv_obj_free(o);
    return 0;
}

/* After a failed open of `loc` (datasets, groups, named datatypes): an external link into a file of the
 * other kind is followed there (xcopy.c); the object must be of `want`. */
static void *
open_across(void *obj, const H5VL_loc_params_t *loc, const char *name, H5I_type_t want, hid_t dxpl_id)
{
    H5I_type_t got = H5I_BADID;
    void      *o   = h5zv_xcopy_follow_elink(obj, loc, name, &got, dxpl_id);
    if (o && got != want) {
        h5zv_err_push(__func__, __LINE__, "the external link leads to an object of another kind");
        switch (got) {
            case H5I_GROUP:
                h5zv_class.group_cls.close(o, dxpl_id, NULL);
                break;
            case H5I_DATASET:
                h5zv_class.dataset_cls.close(o, dxpl_id, NULL);
                break;
            case H5I_DATATYPE:
                h5zv_class.datatype_cls.close(o, dxpl_id, NULL);
                break;
            default:
                break;
        }
        return NULL;
    }
    return o;
}

/* An object reached from `parent` counts as opened through the same file handle (H5Fget_obj_ids with
 * H5F_OBJ_LOCAL: h5py closes one handle's objects with it, and must not close another handle's). */
static void *
via(void *parent, void *child)
{
    if (child && parent && !h5zv_is_native(parent) && !h5zv_is_native(child))
        ((h5zv_obj *)child)->via = ((h5zv_obj *)parent)->via;
    return child;
}

/* True for a native object. A zarr object handed to a callback counts as used (h5zv_obj.ref_idle); the
 * callbacks that only name an object (object get and lookup, file get), close it, compare tokens or look
 * into the class use h5zv_is_native instead. */
static bool
native_else_used(void *obj)
{
    if (h5zv_is_native(obj))
        return true;
    if (obj)
        ((h5zv_obj *)obj)->ref_idle = false;
    return false;
}

/* ---- attributes ------------------------------------------------------------------------------------ */
static void *
route_attr_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t type_id, hid_t space_id,
                  hid_t acpl_id, hid_t aapl_id, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return wrap_like(obj, QUIET(H5VLattr_create(UNDER(obj), loc, VOLOF(obj), name, type_id, space_id,
                                                    acpl_id, aapl_id, dxpl_id, req)));
    return via(obj, H5ZV_MPI_STEP_PTR(
                        MPI_FILE(obj), "H5Acreate",
                        h5zv_attr_create(obj, loc, name, type_id, space_id, acpl_id, aapl_id, dxpl_id, req),
                        mpi_drop));
}

static void *
route_attr_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t aapl_id, hid_t dxpl_id,
                void **req)
{
    if (native_else_used(obj))
        return wrap_like(obj, QUIET(H5VLattr_open(UNDER(obj), loc, VOLOF(obj), name, aapl_id, dxpl_id, req)));
    return via(obj, h5zv_attr_open(obj, loc, name, aapl_id, dxpl_id, req));
}

static herr_t
route_attr_read(void *attr, hid_t mem_type_id, void *buf, hid_t dxpl_id, void **req)
{
    if (native_else_used(attr))
        return QUIET(H5VLattr_read(UNDER(attr), VOLOF(attr), mem_type_id, buf, dxpl_id, req));
    return h5zv_attr_read(attr, mem_type_id, buf, dxpl_id, req);
}

static herr_t
route_attr_write(void *attr, hid_t mem_type_id, const void *buf, hid_t dxpl_id, void **req)
{
    if (native_else_used(attr))
        return QUIET(H5VLattr_write(UNDER(attr), VOLOF(attr), mem_type_id, buf, dxpl_id, req));
    return H5ZV_MPI_STEP_HERR(MPI_FILE(attr), "H5Awrite",
                              h5zv_attr_write(attr, mem_type_id, buf, dxpl_id, req));
}

static herr_t
route_attr_get(void *obj, H5VL_attr_get_args_t *args, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLattr_get(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
    return h5zv_attr_get(obj, args, dxpl_id, req);
}

static herr_t
route_attr_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_attr_specific_args_t *args, hid_t dxpl_id,
                    void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLattr_specific(UNDER(obj), loc, VOLOF(obj), args, dxpl_id, req));
    return H5ZV_MPI_STEP_HERR(MPI_FILE_IF(obj, args->op_type == H5VL_ATTR_DELETE ||
                                                   args->op_type == H5VL_ATTR_DELETE_BY_IDX ||
                                                   args->op_type == H5VL_ATTR_RENAME),
                              "an attribute delete/rename", h5zv_attr_specific(obj, loc, args, dxpl_id, req));
}

static herr_t
route_attr_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLattr_optional(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
    return h5zv_attr_optional(obj, args, dxpl_id, req);
}

static herr_t
route_attr_close(void *attr, hid_t dxpl_id, void **req)
{
    if (h5zv_is_native(attr)) {
        OWNED_CLOSE(attr);
        return closed(attr, QUIET(H5VLattr_close(UNDER(attr), VOLOF(attr), dxpl_id, req)));
    }
    return h5zv_attr_close(attr, dxpl_id, req);
}

/* ---- datasets -------------------------------------------------------------------------------------- */
static void *
route_dataset_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl_id, hid_t type_id,
                     hid_t space_id, hid_t dcpl_id, hid_t dapl_id, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return wrap_like(obj, QUIET(H5VLdataset_create(UNDER(obj), loc, VOLOF(obj), name, lcpl_id, type_id,
                                                       space_id, dcpl_id, dapl_id, dxpl_id, req)));
    return via(obj, H5ZV_MPI_STEP_PTR(MPI_FILE(obj), "H5Dcreate",
                                      h5zv_dataset_create(obj, loc, name, lcpl_id, type_id, space_id, dcpl_id,
                                                          dapl_id, dxpl_id, req),
                                      mpi_drop));
}

static void *
route_dataset_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t dapl_id, hid_t dxpl_id,
                   void **req)
{
    void *o = native_else_used(obj) ? wrap_like(obj, QUIET(H5VLdataset_open(UNDER(obj), loc, VOLOF(obj), name,
                                                                            dapl_id, dxpl_id, req)))
                                    : h5zv_dataset_open(obj, loc, name, dapl_id, dxpl_id, req);
    return via(obj, o ? o : open_across(obj, loc, name, H5I_DATASET, dxpl_id));
}

/* A multi-dataset transfer: all native (one native call), all zarr (one zarr call), or mixed (one call
 * per dataset, in order). */
typedef enum { XFER_ZARR, XFER_NATIVE, XFER_MIXED } xfer_kind;

static xfer_kind
xfer_of(size_t count, void *dset[])
{
    size_t nat = 0;
    for (size_t i = 0; i < count; i++)
        nat += native_else_used(dset[i]);
    return nat == 0 ? XFER_ZARR : nat == count ? XFER_NATIVE : XFER_MIXED;
}

/* One transfer direction for both: `buf` is the caller's (const for writes). */
static herr_t
route_dataset_xfer(size_t count, void *dset[], hid_t mem_type_id[], hid_t mem_space_id[],
                   hid_t file_space_id[], hid_t dxpl_id, void *buf[], void **req, bool write)
{
    xfer_kind k = xfer_of(count, dset);
    if (k == XFER_ZARR)
        return write ? h5zv_dataset_write(count, dset, mem_type_id, mem_space_id, file_space_id, dxpl_id,
                                          (const void **)buf, req)
                     : h5zv_dataset_read(count, dset, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf,
                                         req);
    if (k == XFER_NATIVE) {
        void  *one[1], **under = count == 1 ? one : malloc(count * sizeof *under);
        herr_t rc;
        if (!under)
            return -1;
        for (size_t i = 0; i < count; i++)
            under[i] = UNDER(dset[i]);
        rc = write ? QUIET(H5VLdataset_write(count, under, VOLOF(dset[0]), mem_type_id, mem_space_id,
                                             file_space_id, dxpl_id, (const void **)buf, req))
                   : QUIET(H5VLdataset_read(count, under, VOLOF(dset[0]), mem_type_id, mem_space_id,
                                            file_space_id, dxpl_id, buf, req));
        if (under != one)
            free(under);
        return rc;
    }
    for (size_t i = 0; i < count; i++)
        if (route_dataset_xfer(1, &dset[i], &mem_type_id[i], &mem_space_id[i], &file_space_id[i], dxpl_id,
                               &buf[i], req, write) < 0)
            return -1;
    return 0;
}

static herr_t
route_dataset_read(size_t count, void *dset[], hid_t mem_type_id[], hid_t mem_space_id[],
                   hid_t file_space_id[], hid_t dxpl_id, void *buf[], void **req)
{
    return route_dataset_xfer(count, dset, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf, req,
                              false);
}

static herr_t
route_dataset_write(size_t count, void *dset[], hid_t mem_type_id[], hid_t mem_space_id[],
                    hid_t file_space_id[], hid_t dxpl_id, const void *buf[], void **req)
{
    /* the buffers are only read on this path (cast back to const before any use) */
    return route_dataset_xfer(count, dset, mem_type_id, mem_space_id, file_space_id, dxpl_id, (void **)buf,
                              req, true);
}

static herr_t
route_dataset_get(void *obj, H5VL_dataset_get_args_t *args, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLdataset_get(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
    return h5zv_dataset_get(obj, args, dxpl_id, req);
}

static herr_t
route_dataset_specific(void *obj, H5VL_dataset_specific_args_t *args, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLdataset_specific(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
    return H5ZV_MPI_STEP_HERR(MPI_FILE_IF(obj, args->op_type == H5VL_DATASET_SET_EXTENT), "H5Dset_extent",
                              h5zv_dataset_specific(obj, args, dxpl_id, req));
}

static herr_t
route_dataset_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLdataset_optional(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
    return h5zv_dataset_optional(obj, args, dxpl_id, req);
}

static herr_t
route_dataset_close(void *dset, hid_t dxpl_id, void **req)
{
    if (h5zv_is_native(dset)) {
        OWNED_CLOSE(dset);
        return closed(dset, QUIET(H5VLdataset_close(UNDER(dset), VOLOF(dset), dxpl_id, req)));
    }
    return h5zv_dataset_close(dset, dxpl_id, req);
}

/* ---- named datatypes ------------------------------------------------------------------------------- */
static void *
route_datatype_commit(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t type_id, hid_t lcpl_id,
                      hid_t tcpl_id, hid_t tapl_id, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return wrap_like(obj, QUIET(H5VLdatatype_commit(UNDER(obj), loc, VOLOF(obj), name, type_id, lcpl_id,
                                                        tcpl_id, tapl_id, dxpl_id, req)));
    return via(obj, H5ZV_MPI_STEP_PTR(MPI_FILE(obj), "H5Tcommit",
                                      h5zv_datatype_commit(obj, loc, name, type_id, lcpl_id, tcpl_id, tapl_id,
                                                           dxpl_id, req),
                                      mpi_drop));
}

static void *
route_datatype_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t tapl_id, hid_t dxpl_id,
                    void **req)
{
    void *o = native_else_used(obj) ? wrap_like(obj, QUIET(H5VLdatatype_open(UNDER(obj), loc, VOLOF(obj),
                                                                             name, tapl_id, dxpl_id, req)))
                                    : h5zv_datatype_open(obj, loc, name, tapl_id, dxpl_id, req);
    return via(obj, o ? o : open_across(obj, loc, name, H5I_DATATYPE, dxpl_id));
}

static herr_t
route_datatype_get(void *obj, H5VL_datatype_get_args_t *args, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLdatatype_get(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
    return h5zv_datatype_get(obj, args, dxpl_id, req);
}

static herr_t
route_datatype_specific(void *obj, H5VL_datatype_specific_args_t *args, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLdatatype_specific(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
    return h5zv_datatype_specific(obj, args, dxpl_id, req);
}

static herr_t
route_datatype_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLdatatype_optional(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
    return h5zv_datatype_optional(obj, args, dxpl_id, req);
}

static herr_t
route_datatype_close(void *dt, hid_t dxpl_id, void **req)
{
    if (h5zv_is_native(dt)) {
        OWNED_CLOSE(dt);
        return closed(dt, QUIET(H5VLdatatype_close(UNDER(dt), VOLOF(dt), dxpl_id, req)));
    }
    return h5zv_datatype_close(dt, dxpl_id, req);
}

/* ---- files ------------------------------------------------------------------------------------------ */
/* The native connector's file callbacks, for a file that is not a zarr store. */
static void *
native_file_open_or_create(const char *name, unsigned flags, hid_t fcpl_id, hid_t fapl_id, hid_t dxpl_id,
                           void **req, bool create)
{
    hid_t under_fapl = h5zv_native_fapl(fapl_id);
    void *under;
    if (under_fapl < 0)
        return NULL;
    under = create ? QUIET(H5VLfile_create(name, flags, fcpl_id, under_fapl, dxpl_id, req))
                   : QUIET(H5VLfile_open(name, flags, under_fapl, dxpl_id, req));
    h5zv_close(under_fapl);
    if (!under)
        return NULL;
    return h5zv_native_new(under, h5zv_native_vol_id());
}

/* A new zarr store the configuration (a rule, or create=zarr as text) sent a name without .zarr/.zr3
 * to: the store goes beside it (pointer.h picks its name), and <name> becomes a pointer to it, so
 * programs that open files by their first bytes (netCDF, h5py.is_hdf5) reopen it by the name they
 * created, and the name stays a file (copied, removed, its user block written, as the program expects). */
static void *
create_with_pointer(const char *name, unsigned flags, hid_t fcpl_id, hid_t fapl_id, hid_t dxpl_id, void **req)
{
    char    id[H5ZV_POINTER_ID_LEN + 1];
    char   *store = NULL, *old = NULL;
    void   *o  = NULL;
    hsize_t ub = 0;
    int     p;

    if ((flags & H5F_ACC_EXCL) && h5zv_file_exists(name)) {
        /* worded as HDF5 words it: programs (h5py) take the errno from the message */
        h5zv_err_push_code(
            H5E_FILE, H5E_FILEEXISTS,
            "unable to create file: name = '%s', errno = %d, error message = '%s' (H5F_ACC_EXCL)", name,
            EEXIST, strerror(EEXIST));
        return NULL;
    }
    if ((p = h5zv_pointer_read(name, fapl_id, &old, NULL)) < 0)
        return NULL;
    free(old);
    if (p == 0 && h5zv_file_is_dir(name)) {
        /* a store (or directory) already at the name itself: made before pointers, or by hand */
        return h5zv_file_create(name, flags, fcpl_id, fapl_id, dxpl_id, req);
    }
    if (fcpl_id != H5P_DEFAULT && fcpl_id != H5P_FILE_CREATE_DEFAULT && H5Pget_userblock(fcpl_id, &ub) < 0)
        return NULL;
    if (h5zv_pointer_plan(name, fapl_id, &store, id) < 0)
        return NULL;
    if ((o = h5zv_file_create_as(store, name, flags & ~(unsigned)H5F_ACC_EXCL, fcpl_id, fapl_id, dxpl_id,
                                 req)) &&
        (h5zv_pointer_commit(name, store, id, ub, h5zv_file_settings(((h5zv_obj *)o)->file)->durable) < 0 ||
         h5zv_file_set_shown_name(o, name) < 0)) {
        h5zv_file_close(o, dxpl_id, NULL);
        o = NULL;
    }
    free(store);
    return o;
}

/* True if the fapl's file driver keeps files as files by name (sec2, the default, and its kin, or MPI-IO):
 * a store can stand in for such a file. Any other driver (core: in-memory files and file images; family,
 * split and multi; h5py's Python file objects; ...) decides where the bytes go itself: such files stay
 * native HDF5, as HDF5 would make them, and are never written as a store on disk. */
static bool
driver_is_files(hid_t fapl_id)
{
    h5zv_errs *es;
    hid_t      drv;
    bool       yes;
    if (fapl_id == H5P_DEFAULT || fapl_id == H5P_FILE_ACCESS_DEFAULT)
        return true;
    es  = h5zv_err_save();
    drv = H5Pget_driver(fapl_id);
    yes = drv < 0 || drv == H5FD_SEC2 || drv == H5FD_STDIO
#ifdef H5_HAVE_PARALLEL
          || drv == H5FD_MPIO
#endif
        ;
    h5zv_err_restore(es);
    return yes;
}

static void *
route_file_create(const char *name, unsigned flags, hid_t fcpl_id, hid_t fapl_id, hid_t dxpl_id, void **req)
{
    h5zv_route why;
    int        z;
    if (!zarr_store_is_url(name) && !driver_is_files(fapl_id))
        return native_file_open_or_create(name, flags, fcpl_id, fapl_id, dxpl_id, req, true);
    if ((z = h5zv_config_new_route(fapl_id, name, &why)) < 0)
        return NULL;
    /* a URL (s3://...) is always a zarr store, named as given: no pointer file, no native file */
    if ((why == H5ZV_ROUTE_RULE || why == H5ZV_ROUTE_CONFIG) && !zarr_store_is_url(name))
        return create_with_pointer(name, flags, fcpl_id, fapl_id, dxpl_id, req);
    if (z || zarr_store_is_url(name))
        return h5zv_file_create(name, flags, fcpl_id, fapl_id, dxpl_id, req);
    return native_file_open_or_create(name, flags, fcpl_id, fapl_id, dxpl_id, req, true);
}

/* A file image (H5Pset_file_image, H5LTopen_file_image, netCDF's nc_open_mem) holds a file's bytes
 * without the file: HDF5's record of it on the fapl, the property "file_image_info" (H5FDprivate.h's
 * H5FD_file_image_info_t, mirrored here and checked by size). H5Pget hands back a copy made through
 * the application's callbacks (H5Pfapl.c's H5P__facc_file_image_info_get), released here as HDF5
 * releases a property list's (H5P__file_image_info_free). */
typedef struct image_info {
    void                       *buffer;
    size_t                      size;
    H5FD_file_image_callbacks_t callbacks;
} image_info;

static void
image_info_release(image_info *ii)
{
    if (ii->buffer && ii->size > 0) {
        if (ii->callbacks.image_free)
            ii->callbacks.image_free(ii->buffer, H5FD_FILE_IMAGE_OP_PROPERTY_LIST_CLOSE, ii->callbacks.udata);
        else
            H5free_memory(ii->buffer);
    }
    if (ii->callbacks.udata && ii->callbacks.udata_free)
        ii->callbacks.udata_free(ii->callbacks.udata);
    memset(ii, 0, sizeof *ii);
}

/* True (error pushed) if the fapl carries a file image of a pointer file (or of a damaged one). A
 * pointer names its store relative to its own directory, which an image does not have: the store can't
 * be found, and opening the image natively would show the pointer's empty HDF5 file instead of the data. */
static bool
image_is_pointer(const char *name, hid_t fapl_id)
{
    image_info ii = {0};
    size_t     sz = 0;
    char       why[300], *rel = NULL;
    int        p   = 0;
    h5zv_errs *es  = h5zv_err_save();
    bool       got = H5Pexist(fapl_id, "file_image_info") > 0 &&
               H5Pget_size(fapl_id, "file_image_info", &sz) >= 0 && sz == sizeof ii &&
               H5Pget(fapl_id, "file_image_info", &ii) >= 0;
    h5zv_err_restore(es);
    if (!got)
        return false;
    if (!ii.buffer || ii.size < H5ZV_POINTER_BLOCK) {
        image_info_release(&ii);
        return false;
    }
    /* a version 2 record ends the file; version 1 is its user block */
    p = h5zv_pointer_parse((const unsigned char *)ii.buffer + ii.size - H5ZV_POINTER_BLOCK,
                           H5ZV_POINTER_BLOCK, &rel, NULL, why, sizeof why);
    if (p == 0)
        p = h5zv_pointer_parse(ii.buffer, ii.size, &rel, NULL, why, sizeof why);
    if (p > 0)
        h5zv_err_push(__func__, __LINE__,
                      "can't open the file image '%s': it is an h5zarr pointer file; its data is in the zarr "
                      "store '%s' beside the file the image was read from; open the file by name",
                      name, rel);
    else if (p < 0)
        h5zv_err_push(__func__, __LINE__,
                      "can't open the file image '%s': it is an h5zarr pointer file that %s", name, why);
    free(rel);
    image_info_release(&ii);
    return p != 0;
}

/* Refuses an image image_is_pointer found. H5LTopen_file_image's shared record of the buffer (H5LT.c's
 * udata) is released by the core driver's close of the image, so refusing before the driver opens it
 * would leak it: the image is opened natively and closed again, balancing the record, before the open
 * fails with the error already pushed. */
static void
image_refuse(const char *name, hid_t fapl_id, hid_t dxpl_id)
{
    h5zv_errs *es = h5zv_err_save();
    void *u = native_file_open_or_create(name, H5F_ACC_RDONLY, H5P_DEFAULT, fapl_id, dxpl_id, NULL, false);
    if (u)
        closed(u, QUIET(H5VLfile_close(UNDER(u), VOLOF(u), dxpl_id, NULL)));
    h5zv_err_restore(es);
}

/* What one stat of a local name tells the routing (issue 27: netCDF asks H5Fis_accessible and H5Fopen of
 * every name, and each probe below stats it again): NAME_NOTHING when nothing is there (no pointer, no
 * store, no native file), NAME_PLAIN for a regular file no store opens (zarr_store_path_is_file_store: only a
 * pointer or a native file), NAME_ASK for anything
 * else (a URL, a directory, a reference or zip file): the probes decide. */
enum { NAME_ASK, NAME_NOTHING, NAME_PLAIN };

static int
name_kind(const char *name, struct stat *stp)
{
    struct stat st;
    if (!name || zarr_store_is_url(name))
        return NAME_ASK;
    if (stat(name, &st) != 0)
        return NAME_NOTHING;
    if (stp)
        *stp = st;
    if (!S_ISREG(st.st_mode) || zarr_store_path_is_file_store(name))
        return NAME_ASK;
    return NAME_PLAIN;
}

static void *
route_file_open(const char *name, unsigned flags, hid_t fapl_id, hid_t dxpl_id, void **req)
{
    char       *store = NULL;
    int         p;
    h5zv_probe  pr;
    struct stat st;
    /* a directory is never a native HDF5 file: the zarr side says what is wrong with it. What the probe
     * opened and read is the open's (no second round of requests to a remote store). A plain local file
     * (name_kind) is no store and no directory: not probed. */
    int kind = name_kind(name, &st);
    memset(&pr, 0, sizeof pr);
    if (kind != NAME_PLAIN && (h5zv_file_probe(name, &pr) || h5zv_file_is_dir(name))) {
        void *o = h5zv_file_open_probed(name, flags, fapl_id, dxpl_id, req, &pr);
        h5zv_probe_release(&pr);
        return o;
    }
    h5zv_probe_release(&pr);
    if ((p = h5zv_pointer_open_store(name, kind == NAME_PLAIN ? &st : NULL, flags, fapl_id, &store)) != 0) {
        void *o = p > 0 ? h5zv_file_open(store, flags, fapl_id, dxpl_id, req) : NULL;
        if (p > 0 && !o)
            h5zv_err_push(__func__, __LINE__, "can't open the zarr store '%s' that pointer file '%s' names",
                          store, name);
        if (o && h5zv_file_set_shown_name(o, name) < 0) {
            h5zv_file_close(o, dxpl_id, NULL);
            o = NULL;
        }
        free(store);
        return o;
    }
    if (!driver_is_files(fapl_id) && image_is_pointer(name, fapl_id)) {
        image_refuse(name, fapl_id, dxpl_id);
        return NULL;
    }
    if (!h5zv_file_exists(name) && driver_is_files(fapl_id)) {
        /* nothing there: the error of whichever format the configuration names for this path */
        int z = h5zv_config_new_is_zarr(fapl_id, name);
        if (z < 0)
            return NULL;
        if (z)
            return h5zv_file_open(name, flags, fapl_id, dxpl_id, req);
    }
    return native_file_open_or_create(name, flags, H5P_DEFAULT, fapl_id, dxpl_id, req, false);
}

static herr_t
route_file_get(void *obj, H5VL_file_get_args_t *args, hid_t dxpl_id, void **req)
{
    if (h5zv_is_native(obj))
        return QUIET(H5VLfile_get(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
    return h5zv_file_get(obj, args, dxpl_id, req);
}

/* IS_ACCESSIBLE and DELETE come without an object: a zarr store is ours, anything else native's. */
static herr_t
native_file_by_name(H5VL_file_specific_args_t *args, hid_t *fapl_field, hid_t dxpl_id, void **req)
{
    hid_t  orig = *fapl_field, under_fapl = h5zv_native_fapl(orig);
    herr_t rc;
    if (under_fapl < 0)
        return -1;
    *fapl_field = under_fapl;
    rc          = QUIET(H5VLfile_specific(NULL, h5zv_native_vol_id(), args, dxpl_id, req));
    *fapl_field = orig;
    h5zv_close(under_fapl);
    return rc;
}

/* IS_ACCESSIBLE and DELETE of a pointer file: its store's answer; deleting removes both, or only the
 * pointer when the store is another pointer's (the pointer is a file-level copy). */
static herr_t
pointer_by_name(H5VL_file_specific_args_t *args, const char *store, const char *id, const char *name,
                hid_t dxpl_id, void **req)
{
    H5VL_file_specific_args_t a = *args;
    herr_t                    rc;
    int                       own;
    if (a.op_type == H5VL_FILE_IS_ACCESSIBLE) { /* one probe of the store (h5zv_file_specific's answer) */
        *a.args.is_accessible.accessible = h5zv_file_is_store(store);
        return 0;
    }
    a.args.del.filename = store;
    if ((own = h5zv_pointer_owns_store(name, store, id)) < 0)
        return -1;
    if (own && h5zv_file_is_store(store) && (rc = h5zv_file_specific(NULL, &a, dxpl_id, req)) < 0)
        return rc;
    if (unlink(name) != 0) {
        h5zv_err_push(__func__, __LINE__, "can't remove pointer file '%s': %s", name, strerror(errno));
        return -1;
    }
    return 0;
}

static herr_t
route_file_specific(void *obj, H5VL_file_specific_args_t *args, hid_t dxpl_id, void **req)
{
    int         kind = NAME_ASK;
    struct stat st;
    if (args->op_type == H5VL_FILE_IS_ACCESSIBLE) {
        kind = name_kind(args->args.is_accessible.filename, &st);
        if (kind == NAME_NOTHING) { /* not a pointer, not a store, no native file: one stat, not four */
            *args->args.is_accessible.accessible = false;
            return 0;
        }
    }
    if (args->op_type == H5VL_FILE_IS_ACCESSIBLE || args->op_type == H5VL_FILE_DELETE) {
        const char *fname = args->op_type == H5VL_FILE_IS_ACCESSIBLE ? args->args.is_accessible.filename
                                                                     : args->args.del.filename;
        hid_t       fapl  = args->op_type == H5VL_FILE_IS_ACCESSIBLE ? args->args.is_accessible.fapl_id
                                                                     : args->args.del.fapl_id;
        char        id[H5ZV_POINTER_ID_LEN + 1], *store = NULL;
        int         p = h5zv_pointer_read_st(fname, kind == NAME_PLAIN ? &st : NULL, fapl, &store, id);
        if (p != 0) {
            herr_t rc = p > 0 ? pointer_by_name(args, store, id, fname, dxpl_id, req) : -1;
            free(store);
            return rc;
        }
    }
    if (args->op_type == H5VL_FILE_IS_ACCESSIBLE && kind == NAME_PLAIN) /* neither a store nor a folder */
        return native_file_by_name(args, &args->args.is_accessible.fapl_id, dxpl_id, req);
    if (args->op_type == H5VL_FILE_IS_ACCESSIBLE) {
        if (h5zv_file_is_store(args->args.is_accessible.filename)) { /* probed once, not again */
            *args->args.is_accessible.accessible = true;
            return 0;
        }
        if (!h5zv_file_exists(args->args.is_accessible.filename) ||
            h5zv_file_is_dir(args->args.is_accessible.filename)) {
            *args->args.is_accessible.accessible = false;
            return 0;
        }
        return native_file_by_name(args, &args->args.is_accessible.fapl_id, dxpl_id, req);
    }
    if (args->op_type == H5VL_FILE_DELETE) {
        if (h5zv_file_is_store(args->args.del.filename))
            return h5zv_file_specific(obj, args, dxpl_id, req);
        return native_file_by_name(args, &args->args.del.fapl_id, dxpl_id, req);
    }
    if (native_else_used(obj)) {
        herr_t rc = QUIET(H5VLfile_specific(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
        if (rc >= 0 && args->op_type == H5VL_FILE_REOPEN && *args->args.reopen.file) {
            h5zv_native *n = h5zv_native_new(*args->args.reopen.file, VOLOF(obj));
            if (!n) {
                QUIET(H5VLfile_close(*args->args.reopen.file, VOLOF(obj), dxpl_id, NULL));
                return -1;
            }
            *args->args.reopen.file = n;
        }
        return rc;
    }
    /* IS_EQUAL: HDF5 compares the terminal connectors first, so obj2 is ours here */
    return h5zv_file_specific(obj, args, dxpl_id, req);
}

static herr_t
route_file_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLfile_optional(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
    return h5zv_file_optional(obj, args, dxpl_id, req);
}

static herr_t
route_file_close(void *file, hid_t dxpl_id, void **req)
{
    if (h5zv_is_native(file)) {
        OWNED_CLOSE(file);
        return closed(file, QUIET(H5VLfile_close(UNDER(file), VOLOF(file), dxpl_id, req)));
    }
    return h5zv_file_close(file, dxpl_id, req);
}

/* ---- groups ---------------------------------------------------------------------------------------- */
static void *
route_group_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl_id, hid_t gcpl_id,
                   hid_t gapl_id, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return wrap_like(obj, QUIET(H5VLgroup_create(UNDER(obj), loc, VOLOF(obj), name, lcpl_id, gcpl_id,
                                                     gapl_id, dxpl_id, req)));
    return via(obj,
               H5ZV_MPI_STEP_PTR(MPI_FILE(obj), "H5Gcreate",
                                 h5zv_group_create(obj, loc, name, lcpl_id, gcpl_id, gapl_id, dxpl_id, req),
                                 mpi_drop));
}

static void *
route_group_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t gapl_id, hid_t dxpl_id,
                 void **req)
{
    void *o =
        native_else_used(obj)
            ? wrap_like(obj, QUIET(H5VLgroup_open(UNDER(obj), loc, VOLOF(obj), name, gapl_id, dxpl_id, req)))
            : h5zv_group_open(obj, loc, name, gapl_id, dxpl_id, req);
    return via(obj, o ? o : open_across(obj, loc, name, H5I_GROUP, dxpl_id));
}

static herr_t
route_group_get(void *obj, H5VL_group_get_args_t *args, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLgroup_get(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
    return h5zv_group_get(obj, args, dxpl_id, req);
}

static herr_t
route_group_specific(void *obj, H5VL_group_specific_args_t *args, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj)) {
        H5VL_group_specific_args_t a = *args;
        if (a.op_type == H5VL_GROUP_MOUNT) {
            /* the child file is one of our objects: hand the native one its own */
            if (!native_else_used(a.args.mount.child_file)) {
                h5zv_err_push(__func__, __LINE__, "can't mount a zarr store on a native HDF5 file");
                return -1;
            }
            a.args.mount.child_file = UNDER(a.args.mount.child_file);
        }
        return QUIET(H5VLgroup_specific(UNDER(obj), VOLOF(obj), &a, dxpl_id, req));
    }
    return h5zv_group_specific(obj, args, dxpl_id, req);
}

static herr_t
route_group_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLgroup_optional(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
    return h5zv_group_optional(obj, args, dxpl_id, req);
}

static herr_t
route_group_close(void *grp, hid_t dxpl_id, void **req)
{
    if (h5zv_is_native(grp)) {
        OWNED_CLOSE(grp);
        return closed(grp, QUIET(H5VLgroup_close(UNDER(grp), VOLOF(grp), dxpl_id, req)));
    }
    return h5zv_group_close(grp, dxpl_id, req);
}

/* ---- links ------------------------------------------------------------------------------------------ */
static herr_t
route_link_create(H5VL_link_create_args_t *args, void *obj, const H5VL_loc_params_t *loc, hid_t lcpl_id,
                  hid_t lapl_id, hid_t dxpl_id, void **req)
{
    void *target = args->op_type == H5VL_LINK_CREATE_HARD ? args->args.hard.curr_obj : NULL;
    /* a hard link's location may be NULL (H5L_SAME_LOC): its target's kind decides */
    void *kind = obj ? obj : target;

    if (target && obj && native_else_used(target) != native_else_used(obj)) {
        h5zv_err_push(__func__, __LINE__,
                      "can't make a hard link between a native HDF5 file and a zarr store (hard links stay "
                      "inside one file; use an external link)");
        return -1;
    }
    if (native_else_used(kind)) {
        H5VL_link_create_args_t a = *args;
        if (target)
            a.args.hard.curr_obj = UNDER(target);
        return QUIET(
            H5VLlink_create(&a, obj ? UNDER(obj) : NULL, loc, VOLOF(kind), lcpl_id, lapl_id, dxpl_id, req));
    }
    return H5ZV_MPI_STEP_HERR(MPI_FILE(obj), "H5Lcreate",
                              h5zv_link_create(args, obj, loc, lcpl_id, lapl_id, dxpl_id, req));
}

/* Link copy and move: both native, both zarr, or across formats (xcopy.c). A NULL location is the
 * other one (H5L_SAME_LOC). */
static herr_t
route_link_copy_or_move(void *src_obj, const H5VL_loc_params_t *loc1, void *dst_obj,
                        const H5VL_loc_params_t *loc2, hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id,
                        void **req, bool move)
{
    void *s = src_obj ? src_obj : dst_obj, *d = dst_obj ? dst_obj : src_obj;
    if (native_else_used(s) && native_else_used(d))
        return (move ? H5VLlink_move : H5VLlink_copy)(src_obj ? UNDER(src_obj) : NULL, loc1,
                                                      dst_obj ? UNDER(dst_obj) : NULL, loc2, VOLOF(s),
                                                      lcpl_id, lapl_id, dxpl_id, req);
    if (!native_else_used(s) && !native_else_used(d))
        return (move ? h5zv_link_move : h5zv_link_copy)(src_obj, loc1, dst_obj, loc2, lcpl_id, lapl_id,
                                                        dxpl_id, req);
    return h5zv_xcopy_link(s, loc1, d, loc2, lcpl_id, lapl_id, dxpl_id, move);
}

static herr_t
route_link_copy(void *src_obj, const H5VL_loc_params_t *loc1, void *dst_obj, const H5VL_loc_params_t *loc2,
                hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id, void **req)
{
    return route_link_copy_or_move(src_obj, loc1, dst_obj, loc2, lcpl_id, lapl_id, dxpl_id, req, false);
}

static herr_t
route_link_move(void *src_obj, const H5VL_loc_params_t *loc1, void *dst_obj, const H5VL_loc_params_t *loc2,
                hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id, void **req)
{
    return route_link_copy_or_move(src_obj, loc1, dst_obj, loc2, lcpl_id, lapl_id, dxpl_id, req, true);
}

static herr_t
route_link_get(void *obj, const H5VL_loc_params_t *loc, H5VL_link_get_args_t *args, hid_t dxpl_id, void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLlink_get(UNDER(obj), loc, VOLOF(obj), args, dxpl_id, req));
    return h5zv_link_get(obj, loc, args, dxpl_id, req);
}

static herr_t
route_link_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_link_specific_args_t *args, hid_t dxpl_id,
                    void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLlink_specific(UNDER(obj), loc, VOLOF(obj), args, dxpl_id, req));
    return H5ZV_MPI_STEP_HERR(MPI_FILE_IF(obj, args->op_type == H5VL_LINK_DELETE), "H5Ldelete",
                              h5zv_link_specific(obj, loc, args, dxpl_id, req));
}

static herr_t
route_link_optional(void *obj, const H5VL_loc_params_t *loc, H5VL_optional_args_t *args, hid_t dxpl_id,
                    void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLlink_optional(UNDER(obj), loc, VOLOF(obj), args, dxpl_id, req));
    return h5zv_link_optional(obj, loc, args, dxpl_id, req);
}

/* ---- objects ---------------------------------------------------------------------------------------- */
static void *
route_object_open(void *obj, const H5VL_loc_params_t *loc, H5I_type_t *opened_type, hid_t dxpl_id, void **req)
{
    void *o;
    if (h5zv_is_native(obj)) {
        if ((o = wrap_like(obj,
                           QUIET(H5VLobject_open(UNDER(obj), loc, VOLOF(obj), opened_type, dxpl_id, req)))))
            return o;
        /* the last link may be an external link into a zarr store, which native HDF5 can't follow */
        return h5zv_xcopy_follow_elink(obj, loc, NULL, opened_type, dxpl_id);
    }
    if ((o = h5zv_object_open(obj, loc, opened_type, dxpl_id, req)))
        return via(obj, o);
    /* ... or one from a store into a native file */
    return h5zv_xcopy_follow_elink(obj, loc, NULL, opened_type, dxpl_id);
}

static herr_t
route_object_copy(void *src_obj, const H5VL_loc_params_t *loc1, const char *src_name, void *dst_obj,
                  const H5VL_loc_params_t *loc2, const char *dst_name, hid_t ocpypl_id, hid_t lcpl_id,
                  hid_t dxpl_id, void **req)
{
    if (native_else_used(src_obj) && native_else_used(dst_obj))
        return QUIET(H5VLobject_copy(UNDER(src_obj), loc1, src_name, UNDER(dst_obj), loc2, dst_name,
                                     VOLOF(src_obj), ocpypl_id, lcpl_id, dxpl_id, req));
    if (!native_else_used(src_obj) && !native_else_used(dst_obj))
        return h5zv_object_copy(src_obj, loc1, src_name, dst_obj, loc2, dst_name, ocpypl_id, lcpl_id, dxpl_id,
                                req);
    return h5zv_xcopy_object(src_obj, loc1, src_name, dst_obj, loc2, dst_name, ocpypl_id, lcpl_id, dxpl_id);
}

static herr_t
route_object_get(void *obj, const H5VL_loc_params_t *loc, H5VL_object_get_args_t *args, hid_t dxpl_id,
                 void **req)
{
    /* OBJECT_GET_FILE hands back the native file unwrapped: HDF5 looks it up among its ids by the
     * terminal object and wraps it itself when it registers a new id */
    if (h5zv_is_native(obj))
        return QUIET(H5VLobject_get(UNDER(obj), loc, VOLOF(obj), args, dxpl_id, req));
    return h5zv_object_get(obj, loc, args, dxpl_id, req);
}

static herr_t
route_object_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_object_specific_args_t *args,
                      hid_t dxpl_id, void **req)
{
    if (args->op_type == H5VL_OBJECT_LOOKUP ? h5zv_is_native(obj) : native_else_used(obj))
        return QUIET(H5VLobject_specific(UNDER(obj), loc, VOLOF(obj), args, dxpl_id, req));
    return h5zv_object_specific(obj, loc, args, dxpl_id, req);
}

static herr_t
route_object_optional(void *obj, const H5VL_loc_params_t *loc, H5VL_optional_args_t *args, hid_t dxpl_id,
                      void **req)
{
    if (native_else_used(obj))
        return QUIET(H5VLobject_optional(UNDER(obj), loc, VOLOF(obj), args, dxpl_id, req));
    return h5zv_object_optional(obj, loc, args, dxpl_id, req);
}

/* ---- introspection ------------------------------------------------------------------------------------ */
static herr_t
route_get_conn_cls(void *obj, H5VL_get_conn_lvl_t lvl, const H5VL_class_t **cls)
{
    /* the terminal connector of a native object is the native one: HDF5's native-only paths
     * (old-style references, H5Fget_vfd_handle, ...) then work on it */
    if (lvl == H5VL_GET_CONN_LVL_TERM && h5zv_is_native(obj))
        return QUIET(H5VLintrospect_get_conn_cls(UNDER(obj), VOLOF(obj), lvl, cls));
    *cls = &h5zv_class;
    return 0;
}

static herr_t
route_get_cap_flags(const void *info, uint64_t *flags)
{
    const h5zarr_info_t *i   = info;
    uint64_t             nat = 0;
    if (!flags)
        return -1;
    /* What the files this configuration makes can do (HDF5 asks per fapl, not per file): with every new
     * path zarr, what zarr stores can; else what either kind can. */
    if (!h5zv_config_info_creates_zarr(i) &&
        QUIET(H5VLintrospect_get_cap_flags(NULL, h5zv_native_vol_id(), &nat)) < 0)
        nat = 0;
    *flags = h5zv_cap_flags(info) | nat;
    return 0;
}

static herr_t
route_opt_query(void *obj, H5VL_subclass_t cls, int opt_type, uint64_t *flags)
{
    if (h5zv_is_native(obj))
        return QUIET(H5VLintrospect_opt_query(UNDER(obj), VOLOF(obj), cls, opt_type, flags));
    *flags = 0; /* no optional operation on zarr objects */
    return 0;
}

static herr_t
route_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    if (h5zv_is_native(obj))
        return QUIET(H5VLoptional(UNDER(obj), VOLOF(obj), args, dxpl_id, req));
    h5zv_err_push(__func__, __LINE__, "optional operation %d is not supported by the zarr connector",
                  args ? args->op_type : -1);
    return -1;
}

/* ---- blobs (variable-length data in native files; zarr stores keep theirs in chunks) ----------------- */
static herr_t
route_blob_put(void *obj, const void *buf, size_t size, void *blob_id, void *ctx)
{
    if (h5zv_is_native(obj))
        return QUIET(H5VLblob_put(UNDER(obj), VOLOF(obj), buf, size, blob_id, ctx));
    h5zv_err_push(__func__, __LINE__, "zarr stores keep no blobs");
    return -1;
}

static herr_t
route_blob_get(void *obj, const void *blob_id, void *buf, size_t size, void *ctx)
{
    if (h5zv_is_native(obj))
        return QUIET(H5VLblob_get(UNDER(obj), VOLOF(obj), blob_id, buf, size, ctx));
    h5zv_err_push(__func__, __LINE__, "zarr stores keep no blobs");
    return -1;
}

static herr_t
route_blob_specific(void *obj, void *blob_id, H5VL_blob_specific_args_t *args)
{
    if (h5zv_is_native(obj))
        return QUIET(H5VLblob_specific(UNDER(obj), VOLOF(obj), blob_id, args));
    h5zv_err_push(__func__, __LINE__, "zarr stores keep no blobs");
    return -1;
}

static herr_t
route_blob_optional(void *obj, void *blob_id, H5VL_optional_args_t *args)
{
    if (h5zv_is_native(obj))
        return QUIET(H5VLblob_optional(UNDER(obj), VOLOF(obj), blob_id, args));
    h5zv_err_push(__func__, __LINE__, "zarr stores keep no blobs");
    return -1;
}

/* ---- tokens ------------------------------------------------------------------------------------------- */
static herr_t
route_token_cmp(void *obj, const H5O_token_t *t1, const H5O_token_t *t2, int *cmp_value)
{
    if (h5zv_is_native(obj))
        return QUIET(H5VLtoken_cmp(UNDER(obj), VOLOF(obj), t1, t2, cmp_value));
    return h5zv_token_cmp(obj, t1, t2, cmp_value);
}

static herr_t
route_token_to_str(void *obj, H5I_type_t obj_type, const H5O_token_t *token, char **token_str)
{
    if (h5zv_is_native(obj))
        return QUIET(H5VLtoken_to_str(UNDER(obj), obj_type, VOLOF(obj), token, token_str));
    return h5zv_token_to_str(obj, obj_type, token, token_str);
}

static herr_t
route_token_from_str(void *obj, H5I_type_t obj_type, const char *token_str, H5O_token_t *token)
{
    if (h5zv_is_native(obj))
        return QUIET(H5VLtoken_from_str(UNDER(obj), obj_type, VOLOF(obj), token_str, token));
    return h5zv_token_from_str(obj, obj_type, token_str, token);
}

/* ---- the class ---------------------------------------------------------------------------------------- */
const H5VL_class_t h5zv_class = {
    H5VL_VERSION,
    H5ZV_VALUE,
    H5ZV_NAME,
    1,
    H5ZV_CAP_FLAGS,
    h5zv_init,
    h5zv_term,
    {sizeof(h5zarr_info_t), h5zv_info_copy, h5zv_info_cmp, h5zv_info_free, h5zv_info_to_str,
     h5zv_info_from_str},
    {h5zv_native_get_object, h5zv_native_get_wrap_ctx, h5zv_native_wrap_object, h5zv_native_unwrap_object,
     h5zv_native_free_wrap_ctx},
    {route_attr_create, route_attr_open, route_attr_read, route_attr_write, route_attr_get,
     route_attr_specific, route_attr_optional, route_attr_close},
    {route_dataset_create, route_dataset_open, route_dataset_read, route_dataset_write, route_dataset_get,
     route_dataset_specific, route_dataset_optional, route_dataset_close},
    {route_datatype_commit, route_datatype_open, route_datatype_get, route_datatype_specific,
     route_datatype_optional, route_datatype_close},
    {route_file_create, route_file_open, route_file_get, route_file_specific, route_file_optional,
     route_file_close},
    {route_group_create, route_group_open, route_group_get, route_group_specific, route_group_optional,
     route_group_close},
    {route_link_create, route_link_copy, route_link_move, route_link_get, route_link_specific,
     route_link_optional},
    {route_object_open, route_object_copy, route_object_get, route_object_specific, route_object_optional},
    {route_get_conn_cls, route_get_cap_flags, route_opt_query},
    {NULL, NULL, NULL, NULL, NULL, NULL},
    {route_blob_put, route_blob_get, route_blob_specific, route_blob_optional},
    {route_token_cmp, route_token_to_str, route_token_from_str},
    route_optional,
};
