/*
 * w4_visit.h: W4's open-visit, shared by the bench programs that time it (h5zarr_bench.c on local stores,
 * s3_latency.c on S3 behind the latency proxy): H5Ovisit3 over the file, every dataset opened and every
 * attribute of it read, counting objects and attributes. Header-only (static functions): each bench is one
 * executable.
 */
#ifndef H5ZARR_BENCH_W4_VISIT_H
#define H5ZARR_BENCH_W4_VISIT_H

#include <hdf5.h>

typedef struct visit_acc {
    long objects, attrs;
} visit_acc;

/* H5Aiterate2 callback: reads the attribute (an int) and counts it. */
static herr_t
attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *ud)
{
    visit_acc *acc = ud;
    int        v   = 0;
    hid_t      a   = H5Aopen(loc, name, H5P_DEFAULT);
    (void)info;
    if (a < 0 || H5Aread(a, H5T_NATIVE_INT, &v) < 0)
        return -1;
    H5Aclose(a);
    acc->attrs++;
    return 0;
}

/* H5Ovisit3 callback: counts the object; a dataset is opened and its attributes read (attr_cb). */
static herr_t
visit_cb(hid_t root, const char *name, const H5O_info2_t *info, void *ud)
{
    visit_acc *acc = ud;
    acc->objects++;
    if (info->type == H5O_TYPE_DATASET) {
        hid_t d = H5Dopen2(root, name, H5P_DEFAULT);
        if (d < 0 || H5Aiterate2(d, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, attr_cb, acc) < 0)
            return -1;
        H5Dclose(d);
    }
    return 0;
}

#endif
