/*
 * dsattach_floor.c: what HDF5 1.14.5's H5DSattach_scale costs by itself when a file is not native, with no
 * zarr connector in the loop (issue 27's 3x limit on netCDF's tst_vars, tst_vars3, tst_camrun; PEERS.md).
 *
 * For any connector but the native one, H5DSattach_scale (hl/src/H5DS.c:520-660) takes the scale's whole
 * REFERENCE_LIST (H5R_OBJECT2 references), opens every reference in it with H5Ropen_object (the id is
 * never closed), rebuilds each with H5Rcreate_object, deletes the attribute and writes it back one element
 * longer: attaching N datasets to one scale opens N(N-1)/2 references and leaves as many ids registered.
 * Rows, each for N datasets on one scale (default 2000, netCDF's tst_vars "lots of variables"):
 *   native   H5DSattach_scale on a native file in memory (core driver): old-style references, the cost
 *            the native netCDF test pays;
 *   newref   the same attaches done as H5DSattach_scale does them for other connectors (its new-style
 *            reference branch, step by step), on the same kind of native file: HDF5's own library and
 *            native connector doing what the zarr connector is asked to do;
 *   ids      only H5Iregister of N(N-1)/2 objects kept until the end (the ids H5Ropen_object registers
 *            and H5DSattach_scale leaks), then their release (H5Idestroy_type; at exit for the leaked):
 *            HDF5's id table alone, which no connector can avoid or release.
 * Usage: dsattach_floor [N [row...]]; prints one line per row: "row N seconds".
 */
#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A native file in memory with a scale "x" of 10 floats and n datasets "a_<i>" on it. */
static hid_t
make_file(int n, hid_t *scale, hid_t **dsets)
{
    hid_t   fapl    = H5Pcreate(H5P_FILE_ACCESS), f, sp;
    hsize_t dims[1] = {10};
    char    name[32];
    H5Pset_fapl_core(fapl, 1 << 20, 0);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST); /* as netCDF-4 makes its files */
    f = H5Fcreate("dsattach_floor.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    sp     = H5Screate_simple(1, dims, NULL);
    *scale = H5Dcreate2(f, "x", H5T_NATIVE_FLOAT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5DSset_scale(*scale, "x");
    *dsets = malloc((size_t)n * sizeof **dsets);
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "a_%d", i);
        (*dsets)[i] = H5Dcreate2(f, name, H5T_NATIVE_FLOAT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    }
    H5Sclose(sp);
    return f;
}

typedef struct {
    H5R_ref_t ref;
    unsigned  dim_idx;
} nds_list_t; /* H5DS.c's REFERENCE_LIST element for new-style references */

/* H5DSattach_scale's REFERENCE_LIST step for other connectors (H5DS.c:520-660), on `dsid` for `did`:
 * read every reference, open each (the id is not closed, as there), rebuild each from the open object,
 * delete the attribute, create it one element longer and write it. */
static int
newref_attach(hid_t did, hid_t dsid, unsigned idx)
{
    hid_t       aid, tid, ntid, sid, sid_w;
    hssize_t    nelmts;
    hsize_t     dims[1];
    nds_list_t *buf, *buf_w, one;
    if (H5Rcreate_object(did, ".", H5P_DEFAULT, &one.ref) < 0)
        return -1;
    one.dim_idx = idx;
    if (H5Aexists(dsid, "REFERENCE_LIST") <= 0) {
        dims[0] = 1;
        sid     = H5Screate_simple(1, dims, NULL);
        tid     = H5Tcreate(H5T_COMPOUND, sizeof(nds_list_t));
        H5Tinsert(tid, "dataset", HOFFSET(nds_list_t, ref), H5T_STD_REF);
        H5Tinsert(tid, "dimension", HOFFSET(nds_list_t, dim_idx), H5T_NATIVE_UINT);
        aid = H5Acreate2(dsid, "REFERENCE_LIST", tid, sid, H5P_DEFAULT, H5P_DEFAULT);
        if (aid < 0 || H5Awrite(aid, tid, &one) < 0)
            return -1;
        H5Rdestroy(&one.ref);
        H5Aclose(aid);
        H5Tclose(tid);
        H5Sclose(sid);
        return 0;
    }
    aid    = H5Aopen(dsid, "REFERENCE_LIST", H5P_DEFAULT);
    tid    = H5Aget_type(aid);
    ntid   = H5Tget_native_type(tid, H5T_DIR_ASCEND);
    sid    = H5Aget_space(aid);
    nelmts = H5Sget_simple_extent_npoints(sid) + 1;
    buf    = malloc((size_t)nelmts * sizeof *buf);
    buf_w  = malloc((size_t)nelmts * sizeof *buf_w);
    if (!buf || !buf_w || H5Aread(aid, ntid, buf) < 0)
        return -1;
    H5Aclose(aid);
    for (hssize_t j = 0; j < nelmts - 1; j++) {
        hid_t tmp        = H5Ropen_object(&buf[j].ref, H5P_DEFAULT, H5P_DEFAULT); /* never closed there */
        buf_w[j].dim_idx = buf[j].dim_idx;
        if (tmp < 0 || H5Rcreate_object(tmp, ".", H5P_DEFAULT, &buf_w[j].ref) < 0)
            return -1;
    }
    buf_w[nelmts - 1] = one;
    if (H5Adelete(dsid, "REFERENCE_LIST") < 0)
        return -1;
    dims[0] = (hsize_t)nelmts;
    sid_w   = H5Screate_simple(1, dims, NULL);
    aid     = H5Acreate2(dsid, "REFERENCE_LIST", tid, sid_w, H5P_DEFAULT, H5P_DEFAULT);
    if (aid < 0 || H5Awrite(aid, ntid, buf_w) < 0)
        return -1;
    H5Treclaim(tid, sid, H5P_DEFAULT, buf_w); /* as there: the new element's reference is not reclaimed */
    H5Aclose(aid);
    H5Sclose(sid);
    H5Sclose(sid_w);
    H5Tclose(tid);
    H5Tclose(ntid);
    free(buf); /* as there: the references read are freed without H5Rdestroy */
    free(buf_w);
    return 0;
}

static double
row_attach(int n, int newref)
{
    hid_t  scale, *d, f = make_file(n, &scale, &d);
    double t0 = now();
    int    rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = newref ? newref_attach(d[i], scale, 0) : H5DSattach_scale(d[i], scale, 0) < 0 ? -1 : 0;
    for (int i = 0; i < n; i++)
        H5Dclose(d[i]);
    H5Dclose(scale);
    H5Fclose(f);
    H5close(); /* the ids the attaches left are released here (at exit otherwise) */
    free(d);
    if (rc < 0) {
        fprintf(stderr, "dsattach_floor: an attach failed\n");
        exit(1);
    }
    return now() - t0;
}

static herr_t
free_nothing(void *obj, void **req)
{
    (void)obj;
    (void)req;
    return 0;
}

static double
row_ids(int n)
{
    static char obj;
    long long   nids = (long long)n * (n - 1) / 2;
    double      t0   = now();
    H5I_type_t  t    = H5Iregister_type(0, 0, free_nothing);
    for (long long i = 0; i < nids; i++)
        if (H5Iregister(t, &obj) < 0) {
            fprintf(stderr, "dsattach_floor: H5Iregister failed\n");
            exit(1);
        }
    H5Idestroy_type(t); /* releases every id of the type, as H5close does the leaked ones at exit */
    return now() - t0;
}

int
main(int argc, char **argv)
{
    int         n     = argc > 1 ? atoi(argv[1]) : 2000;
    const char *all[] = {"native", "newref", "ids"};
    int         nrows = argc > 2 ? argc - 2 : 3;
    if (n < 2) {
        fprintf(stderr, "usage: dsattach_floor [N >= 2 [native|newref|ids ...]]\n");
        return 2;
    }
    for (int r = 0; r < nrows; r++) {
        const char *row = argc > 2 ? argv[2 + r] : all[r];
        double      s;
        if (!strcmp(row, "native"))
            s = row_attach(n, 0);
        else if (!strcmp(row, "newref"))
            s = row_attach(n, 1);
        else if (!strcmp(row, "ids"))
            s = row_ids(n);
        else {
            fprintf(stderr, "dsattach_floor: unknown row '%s'\n", row);
            return 2;
        }
        printf("%s %d %.3f\n", row, n, s);
        fflush(stdout);
    }
    return 0;
}
