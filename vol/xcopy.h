/*
 * xcopy.h: operations between a native HDF5 file and a zarr store in one process (mixed mode): link
 * copy/move, object copy (H5Ocopy), and following an external link from one format into the other.
 *
 * Each is called by vol/route.c only when its two sides are of different kinds; same-kind calls go to
 * the native connector or to vol/<kind>.c as before. Objects are the connector's own (h5zv_obj or
 * h5zv_native), borrowed.
 */
#ifndef H5ZV_XCOPY_H
#define H5ZV_XCOPY_H

#include "h5zv.h"

/* H5Lcopy / H5Lmove across formats: soft, external and user-defined links are made again in the
 * destination (a move then deletes the source); hard links are refused (they stay inside one file:
 * H5Ocopy copies the object). */
herr_t h5zv_xcopy_link(void *src, const H5VL_loc_params_t *loc1, void *dst, const H5VL_loc_params_t *loc2,
                       hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id, bool move);
/* H5Ocopy across formats: a deep copy through the HDF5 API (groups, datasets with their type, space,
 * dcpl and data, attributes, named datatypes, soft and external links; objects linked twice are copied
 * once and hard-linked again). H5O_COPY_WITHOUT_ATTR_FLAG and H5O_COPY_SHALLOW_HIERARCHY_FLAG are
 * honoured; data holding references is refused (the references would name the other file). */
herr_t h5zv_xcopy_object(void *src, const H5VL_loc_params_t *loc1, const char *src_name, void *dst,
                         const H5VL_loc_params_t *loc2, const char *dst_name, hid_t ocpypl_id, hid_t lcpl_id,
                         hid_t dxpl_id);
/* After an object open at `loc` relative to `obj` failed (`name`: the name below `loc` of a dataset, group
 * or datatype open, whose `loc` is the object itself; NULL for an object open by name): if the last link of
 * that path is an external link into a file of the other kind (a zarr store from a native file, or a native
 * file from a store), opens the object there and returns it (the errors of the failed open are cleared). NULL
 * otherwise, with the original errors left on the stack. */
void *h5zv_xcopy_follow_elink(void *obj, const H5VL_loc_params_t *loc, const char *name,
                              H5I_type_t *opened_type, hid_t dxpl_id);

#endif
