/*
 * w4.h: the W4 metadata workload, shared by the bench programs that time it (h5zarr_bench.c on local
 * stores, s3_latency.c on S3 behind the latency proxy): its create (100 groups x 10 datasets x 10 int
 * attributes) and its open-visit (H5Ovisit3 over the file, every dataset opened and every attribute of it
 * read, counting objects and attributes). Header-only (static functions): each bench is one executable.
 */
#ifndef H5ZARR_BENCH_W4_H
#define H5ZARR_BENCH_W4_H

#include <hdf5.h>
#include <stdio.h>

/* Fills the open file `f` with W4's hierarchy. NULL, or what failed. */
static const char *
w4_populate(hid_t f)
{
    hsize_t     dims[1] = {10};
    hid_t       sp = H5Screate_simple(1, dims, NULL), sc = H5Screate(H5S_SCALAR);
    const char *err = NULL;
    for (int g = 0; g < 100 && !err; g++) {
        char  name[32];
        hid_t gid;
        snprintf(name, sizeof name, "g%02d", g);
        if ((gid = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) {
            err = "group";
            break;
        }
        for (int ds = 0; ds < 10 && !err; ds++) {
            hid_t did;
            snprintf(name, sizeof name, "d%d", ds);
            if ((did = H5Dcreate2(gid, name, H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) {
                err = "dataset";
                break;
            }
            for (int at = 0; at < 10 && !err; at++) {
                int   val = g * 100 + ds * 10 + at;
                hid_t aid;
                snprintf(name, sizeof name, "a%d", at);
                aid = H5Acreate2(did, name, H5T_STD_I32LE, sc, H5P_DEFAULT, H5P_DEFAULT);
                if (aid < 0 || H5Awrite(aid, H5T_NATIVE_INT, &val) < 0)
                    err = "attribute";
                if (aid >= 0)
                    H5Aclose(aid);
            }
            H5Dclose(did);
        }
        H5Gclose(gid);
    }
    H5Sclose(sp);
    H5Sclose(sc);
    return err;
}

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
