/*
 * filter.c: the mapping between HDF5 filter pipelines and zarr codec chains (both ways).
 *
 * Placeholder until the filter issue lands: no filter is mapped yet, so any filter fails at
 * H5Dcreate with a message naming it, and opened datasets report no filters.
 */
#include "h5zv.h"

int
h5zv_filters_to_chain(hid_t dcpl_id, hid_t type_id, zarr_array_meta *m, const char *path)
{
    unsigned     flags;
    size_t       nelem     = 0;
    char         fname[64] = "";
    H5Z_filter_t id;
    (void)type_id;
    (void)m;
    if (H5Pget_nfilters(dcpl_id) <= 0)
        return 0;
    id = H5Pget_filter2(dcpl_id, 0, &flags, &nelem, NULL, sizeof fname, fname, NULL);
    h5zv_err_push(__func__, __LINE__,
                  "can't create dataset '/%s': HDF5 filter %d (%s) is not mapped to a zarr codec", path,
                  (int)id, fname);
    return -1;
}

int
h5zv_filters_from_chain(const zarr_array_meta *m, hid_t dcpl_id)
{
    (void)m;
    (void)dcpl_id;
    return 0;
}
