/*
 * vol_plugin.c: the H5PL entry points that make libh5zarr_vol.so a loadable VOL connector: HDF5 finds
 * it on HDF5_PLUGIN_PATH, asks its type, and takes the connector class from it.
 */
#include "h5zv.h"

#include <H5PLextern.h>

__attribute__((visibility("default"))) H5PL_type_t
H5PLget_plugin_type(void)
{
    return H5PL_TYPE_VOL;
}

__attribute__((visibility("default"))) const void *
H5PLget_plugin_info(void)
{
    return &h5zv_class;
}
