/*
 * test_vol_select.c: H5Dwrite and H5Dread selections through the connector give what native HDF5 gives.
 * The same calls run on a zarr store and a native file: regular hyperslabs (boxes, strides with blocks,
 * shifted with H5Soffset_simple in the file or in memory), points, irregular hyperslabs, all, none,
 * H5S_ALL and H5S_BLOCK memory spaces, memory spaces of another shape than the file selection, predefined
 * memory types alternating on one handle (the connector keeps a predefined type's size and equality per
 * handle: vol/dataset.c, xfer_mem_type) and a user type changed between writes. After each call the whole
 * dataset, and each read's buffer, are compared between the two, and a few values against what they
 * must be. The regular-hyperslab path reads the selection off the caller's space without copying it
 * (vol/dataset.c, xfer_plan): these cases are what it must keep.
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#include "h5test.h"

enum { R = 40, C = 30, MEMN = R * C };

static char dir[400];

/* A 40 x 30 int dataset "x" in chunks of 8 x 7 holding its linear index, in a zarr store (`zarr`) or a
 * native file. */
static hid_t
make_file(const char *name, bool zarr, hid_t *dset)
{
    char    path[600];
    hsize_t dims[2] = {R, C}, chunk[2] = {8, 7};
    int     v[MEMN];
    hid_t   fapl = zarr ? h5t_zarr_fapl(3) : H5Pcreate(H5P_FILE_ACCESS), f, sp, dcpl;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (f < 0)
        return f;
    sp   = H5Screate_simple(2, dims, NULL);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    *dset = H5Dcreate2(f, "x", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    for (int i = 0; i < MEMN; i++)
        v[i] = i;
    if (*dset < 0 || H5Dwrite(*dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        *dset = H5I_INVALID_HID;
    H5Sclose(sp);
    H5Pclose(dcpl);
    return f;
}

static hid_t
box_space(int nd, const hsize_t *dims, const hsize_t *start, const hsize_t *stride, const hsize_t *count,
          const hsize_t *block)
{
    hid_t s = H5Screate_simple(nd, dims, NULL);
    if (start && H5Sselect_hyperslab(s, H5S_SELECT_SET, start, stride, count, block) < 0) {
        H5Sclose(s);
        return H5I_INVALID_HID;
    }
    return s;
}

enum { NCASES = 14 };

/* Case `k`: the file and memory spaces (H5S_ALL / H5S_BLOCK or new ids) of one transfer. */
static int
case_spaces(hid_t d, int k, hid_t *fs, hid_t *ms)
{
    hsize_t st[2] = {5, 4}, ct[2] = {10, 9}, n90 = 90, m2020[2] = {20, 20};
    *fs = H5Dget_space(d);
    *ms = H5I_INVALID_HID;
    switch (k) {
        case 0: /* a box, memory of its shape */
            H5Sselect_hyperslab(*fs, H5S_SELECT_SET, st, NULL, ct, NULL);
            *ms = box_space(2, ct, NULL, NULL, NULL, NULL);
            break;
        case 1: /* a box, memory of another shape (90 in a row) */
            H5Sselect_hyperslab(*fs, H5S_SELECT_SET, st, NULL, ct, NULL);
            *ms = box_space(1, &n90, NULL, NULL, NULL, NULL);
            break;
        case 2: { /* strides with blocks, memory 14 x 18 */
            hsize_t s2[2] = {1, 2}, str[2] = {5, 4}, c2[2] = {7, 6}, b2[2] = {2, 3}, m[2] = {14, 18};
            H5Sselect_hyperslab(*fs, H5S_SELECT_SET, s2, str, c2, b2);
            *ms = box_space(2, m, NULL, NULL, NULL, NULL);
            break;
        }
        case 3: { /* a box shifted by an offset in the file */
            hssize_t off[2] = {3, -2};
            H5Sselect_hyperslab(*fs, H5S_SELECT_SET, st, NULL, ct, NULL);
            H5Soffset_simple(*fs, off);
            *ms = box_space(2, ct, NULL, NULL, NULL, NULL);
            break;
        }
        case 4: { /* a box; in memory a box of a 20 x 20 buffer shifted by an offset */
            hsize_t  ms0[2] = {2, 3};
            hssize_t off[2] = {1, 1};
            H5Sselect_hyperslab(*fs, H5S_SELECT_SET, st, NULL, ct, NULL);
            *ms = box_space(2, m2020, ms0, NULL, ct, NULL);
            H5Soffset_simple(*ms, off);
            break;
        }
        case 5: { /* points */
            hsize_t pts[7][2] = {{0, 0}, {39, 29}, {7, 6}, {8, 7}, {20, 3}, {1, 28}, {33, 14}}, n = 7;
            H5Sselect_elements(*fs, H5S_SELECT_SET, 7, &pts[0][0]);
            *ms = box_space(1, &n, NULL, NULL, NULL, NULL);
            break;
        }
        case 6: { /* an irregular hyperslab: two overlapping boxes */
            hsize_t s1[2] = {2, 2}, c1[2] = {6, 5}, s2[2] = {5, 4}, c2[2] = {7, 9}, n;
            H5Sselect_hyperslab(*fs, H5S_SELECT_SET, s1, NULL, c1, NULL);
            H5Sselect_hyperslab(*fs, H5S_SELECT_OR, s2, NULL, c2, NULL);
            n   = (hsize_t)H5Sget_select_npoints(*fs);
            *ms = box_space(1, &n, NULL, NULL, NULL, NULL);
            break;
        }
        case 7: /* everything: H5S_ALL for both */
            H5Sclose(*fs);
            *fs = H5S_ALL;
            *ms = H5S_ALL;
            break;
        case 8: /* nothing selected in either */
            H5Sselect_none(*fs);
            *ms = box_space(2, ct, NULL, NULL, NULL, NULL);
            H5Sselect_none(*ms);
            break;
        case 9: { /* memory H5S_ALL: the buffer has the file's shape and its (shifted) selection */
            hssize_t off[2] = {-2, 5};
            H5Sselect_hyperslab(*fs, H5S_SELECT_SET, st, NULL, ct, NULL);
            H5Soffset_simple(*fs, off);
            *ms = H5S_ALL;
            break;
        }
        case 10: /* H5S_BLOCK: the selected elements in a row */
            H5Sselect_hyperslab(*fs, H5S_SELECT_SET, st, NULL, ct, NULL);
            *ms = H5S_BLOCK;
            break;
        case 11: { /* the whole extent selected explicitly, memory a strided selection of 80 x 30 */
            hsize_t m[2] = {2 * R, C}, s0[2] = {1, 0}, str[2] = {2, 1}, c0[2] = {R, C};
            H5Sselect_all(*fs);
            *ms = box_space(2, m, s0, str, c0, NULL);
            break;
        }
        case 12: { /* a regular hyperslab of one block per row (count 1 with a stride given) */
            hsize_t s0[2] = {39, 0}, str[2] = {7, 1}, c0[2] = {1, 30}, n = 30;
            H5Sselect_hyperslab(*fs, H5S_SELECT_SET, s0, str, c0, NULL);
            *ms = box_space(1, &n, NULL, NULL, NULL, NULL);
            break;
        }
        case 13: { /* a 1 x 1 box at the last element, shifted there from the first */
            hsize_t  s0[2] = {0, 0}, c0[2] = {1, 1};
            hssize_t off[2] = {R - 1, C - 1};
            H5Sselect_hyperslab(*fs, H5S_SELECT_SET, s0, NULL, c0, NULL);
            H5Soffset_simple(*fs, off);
            *ms = box_space(2, c0, NULL, NULL, NULL, NULL);
            break;
        }
    }
    return (*fs >= 0 || *fs == H5S_ALL) && (*ms >= 0 || *ms == H5S_ALL || *ms == H5S_BLOCK) ? 0 : -1;
}

static void
close_spaces(hid_t fs, hid_t ms)
{
    if (fs != H5S_ALL)
        H5Sclose(fs);
    if (ms != H5S_ALL && ms != H5S_BLOCK)
        H5Sclose(ms);
}

/* One transfer of case `k` on dataset `d`: a write of `buf` or a read into it. */
static herr_t
transfer(hid_t d, int k, bool write, hid_t mtype, void *buf)
{
    hid_t  fs, ms;
    herr_t r;
    if (case_spaces(d, k, &fs, &ms) < 0)
        return -1;
    r = write ? H5Dwrite(d, mtype, ms, fs, H5P_DEFAULT, buf) : H5Dread(d, mtype, ms, fs, H5P_DEFAULT, buf);
    close_spaces(fs, ms);
    return r;
}

/* The whole datasets of both files are equal; their values in `z` (MEMN ints). */
static int
same_data(hid_t dz, hid_t dn, int *z)
{
    int n[MEMN];
    ASSERT(H5Dread(dz, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, z) >= 0);
    ASSERT(H5Dread(dn, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, n) >= 0);
    for (int i = 0; i < MEMN; i++)
        if (z[i] != n[i])
            FAILF("element (%d, %d): %d through the connector, %d natively", i / C, i % C, z[i], n[i]);
    return 0;
}

/* Every case written through an int memory buffer (2 * MEMN values, distinct per case) and read back
 * with the same spaces, on both files. */
static int
test_selections_like_native(void)
{
    hid_t dz, dn, fz = make_file("sel.zarr", true, &dz), fn = make_file("sel.h5", false, &dn);
    int  *w = malloc(sizeof(int) * 2 * MEMN), *rz = malloc(sizeof(int) * 2 * MEMN),
        *rn = malloc(sizeof(int) * 2 * MEMN), all[MEMN];
    ASSERT(fz >= 0 && fn >= 0 && dz >= 0 && dn >= 0 && w && rz && rn);
    for (int k = 0; k < NCASES; k++) {
        for (int i = 0; i < 2 * MEMN; i++)
            w[i] = -(k + 1) * 10000 - i;
        if (transfer(dz, k, true, H5T_NATIVE_INT, w) < 0 || transfer(dn, k, true, H5T_NATIVE_INT, w) < 0)
            FAILF("case %d: the write failed", k);
        if (same_data(dz, dn, all))
            FAILF("case %d: the datasets differ after the write", k);
        for (int i = 0; i < 2 * MEMN; i++)
            rz[i] = rn[i] = -7;
        if (transfer(dz, k, false, H5T_NATIVE_INT, rz) < 0 || transfer(dn, k, false, H5T_NATIVE_INT, rn) < 0)
            FAILF("case %d: the read failed", k);
        for (int i = 0; i < 2 * MEMN; i++)
            if (rz[i] != rn[i])
                FAILF("case %d: read element %d is %d through the connector, %d natively", k, i, rz[i],
                      rn[i]);
        /* what some cases must have written, worked out */
        if (k == 0)
            for (int i = 0; i < 90; i++)
                ASSERT_EQ_INT(all[(5 + i / 9) * C + 4 + i % 9], -10000 - i);
        if (k == 3) /* shifted to (8, 2) */
            for (int i = 0; i < 90; i++)
                ASSERT_EQ_INT(all[(8 + i / 9) * C + 2 + i % 9], -40000 - i);
        if (k == 4) /* from the memory box at (3, 4) of 20 x 20 */
            ASSERT_EQ_INT(all[5 * C + 4], -50000 - (3 * 20 + 4));
        if (k == 9) /* memory H5S_ALL: element (r, c) of the buffer goes to (r, c), at the shifted box */
            ASSERT_EQ_INT(all[3 * C + 9], -100000 - (3 * C + 9));
        if (k == 13)
            ASSERT_EQ_INT(all[MEMN - 1], -140000);
        if (k == 2) /* block (1, 2) .. : element 0 of the 14 x 18 buffer at (1, 2), element 3 at (1, 6) */
            ASSERT(all[1 * C + 2] == -30000 && all[1 * C + 6] == -30003 && all[2 * C + 2] == -30018);
    }
    free(w), free(rz), free(rn);
    H5Dclose(dz), H5Dclose(dn);
    ASSERT(H5Fclose(fz) >= 0 && H5Fclose(fn) >= 0);
    return 0;
}

/* Selections shifted out of the extent are refused by both, and change nothing. */
static int
test_shift_out_refused(void)
{
    hid_t    dz, dn, fz = make_file("out.zarr", true, &dz), fn = make_file("out.h5", false, &dn);
    hsize_t  st[2] = {5, 4}, ct[2] = {10, 9};
    hssize_t offs[3][2] = {{31, 0}, {0, -5}, {-6, 0}};
    int      buf[90]    = {0}, all[MEMN];
    ASSERT(fz >= 0 && fn >= 0 && dz >= 0 && dn >= 0);
    for (int k = 0; k < 3; k++)
        for (int z = 0; z < 2; z++) {
            hid_t d = z ? dz : dn, fs = H5Dget_space(d), ms = H5Screate_simple(2, ct, NULL);
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, ct, NULL);
            H5Soffset_simple(fs, offs[k]);
            H5E_BEGIN_TRY
            {
                if (H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf) >= 0)
                    FAILF("offset %d: written %s", k, z ? "through the connector" : "natively");
                if (H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf) >= 0)
                    FAILF("offset %d: read %s", k, z ? "through the connector" : "natively");
            }
            H5E_END_TRY
            H5Sclose(fs), H5Sclose(ms);
        }
    if (same_data(dz, dn, all))
        return 1;
    for (int i = 0; i < MEMN; i++)
        ASSERT_EQ_INT(all[i], i);
    H5Dclose(dz), H5Dclose(dn);
    ASSERT(H5Fclose(fz) >= 0 && H5Fclose(fn) >= 0);
    return 0;
}

/* Memory types on one handle: predefined ones alternating (int, double, short, int), and a user type
 * copied from int whose size is changed between two writes (never taken for the one before). */
static int
test_memory_types_alternate(void)
{
    hid_t     dz, dn, fz = make_file("types.zarr", true, &dz), fn = make_file("types.h5", false, &dn);
    int       iv[90], all[MEMN];
    double    dv[90];
    short     sv[90];
    hid_t     ut = H5Tcopy(H5T_NATIVE_INT);
    hid_t     types[5];
    void     *bufs[5];
    int64_t   lv[90];
    const int base[5] = {1000, 2000, 3000, 1000, 4000};
    ASSERT(fz >= 0 && fn >= 0 && dz >= 0 && dn >= 0 && ut >= 0);
    for (int i = 0; i < 90; i++) {
        iv[i] = 1000 + i;
        dv[i] = 2000.0 + i;
        sv[i] = (short)(3000 + i);
        lv[i] = 4000 + i;
    }
    types[0] = H5T_NATIVE_INT, bufs[0] = iv;
    types[1] = H5T_NATIVE_DOUBLE, bufs[1] = dv;
    types[2] = H5T_NATIVE_SHORT, bufs[2] = sv;
    types[3] = ut, bufs[3] = iv;
    types[4] = ut, bufs[4] = lv; /* after H5Tset_size(ut, 8) */
    for (int k = 0; k < 5; k++) {
        if (k == 4)
            ASSERT(H5Tset_size(ut, 8) >= 0);
        for (int z = 0; z < 2; z++)
            if (transfer(z ? dz : dn, 0, true, types[k], bufs[k]) < 0)
                FAILF("type %d: the write failed %s", k, z ? "through the connector" : "natively");
        if (same_data(dz, dn, all))
            FAILF("type %d: the datasets differ", k);
        for (int i = 0; i < 90; i++)
            ASSERT_EQ_INT(all[(5 + i / 9) * C + 4 + i % 9], base[k] + i);
        /* and read back through the same type */
        {
            double back[90];
            memset(back, 0, sizeof back);
            ASSERT(transfer(dz, 0, false, types[k], back) >= 0);
            if (k == 1)
                ASSERT(back[7] == 2007.0);
            else if (k == 2)
                ASSERT_EQ_INT(((short *)back)[7], 3007);
            else if (k == 4)
                ASSERT(((int64_t *)back)[7] == 4007);
            else
                ASSERT_EQ_INT(((int *)back)[7], base[k] + 7);
        }
    }
    H5Tclose(ut);
    H5Dclose(dz), H5Dclose(dn);
    ASSERT(H5Fclose(fz) >= 0 && H5Fclose(fn) >= 0);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(selections_like_native),
    TEST_ENTRY(shift_out_refused),
    TEST_ENTRY(memory_types_alternate),
};

int
main(int argc, char **argv)
{
    const char *t = test_tmpdir("vol_select");
    if (!t)
        return 1;
    snprintf(dir, sizeof dir, "%s", t);
    return RUN_TESTS(tests);
}
