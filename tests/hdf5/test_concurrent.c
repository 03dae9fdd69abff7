/*
 * test_concurrent.c: stores shared by processes (issue 14). A writer process appends rows along an
 * unlimited dimension (H5Dset_extent + H5Dwrite + H5Fflush) while a reader process (the core, on its own
 * handle) reopens the array again and again: it must always parse the metadata and see every chunk
 * either absent (fill) or whole with the writer's values, never torn. Two writer processes on disjoint
 * chunk ranges of one array lose nothing.
 */
#include "runner.h"

#include <hdf5.h>
#include <sys/wait.h>

#include "h5test.h"
#include "h5zarr/zarr.h"

#define ROWS  40
#define WIDTH 64 /* one row = one chunk of 64 int32 */
#define FILL  (-7)

static int
append_rows(const char *store)
{
    hid_t   fapl    = h5t_zarr_fapl(3), f, s, d, dcpl;
    hsize_t dims[2] = {0, WIDTH}, maxd[2] = {H5S_UNLIMITED, WIDTH}, chunk[2] = {1, WIDTH};
    int     row[WIDTH];
    if (fapl < 0 || (f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0)
        return 1;
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &(int){FILL});
    s = H5Screate_simple(2, dims, maxd);
    if ((d = H5Dcreate2(f, "rows", H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
        return 1;
    H5Sclose(s);
    H5Fflush(f, H5F_SCOPE_GLOBAL);
    for (int r = 0; r < ROWS; r++) {
        hsize_t nd[2] = {(hsize_t)r + 1, WIDTH}, st[2] = {(hsize_t)r, 0}, ct[2] = {1, WIDTH};
        hid_t   fs, ms;
        for (int i = 0; i < WIDTH; i++)
            row[i] = r * 1000 + i;
        if (H5Dset_extent(d, nd) < 0 || (fs = H5Dget_space(d)) < 0)
            return 1;
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, ct, NULL);
        ms = H5Screate_simple(2, ct, NULL);
        if (H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, row) < 0 || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
            return 1;
        H5Sclose(ms);
        H5Sclose(fs);
        usleep(2000); /* give the reader time to see each state */
    }
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Pclose(fapl);
    return H5Fclose(f) < 0;
}

/* The reader: reopens until the writer is done; every row it can see is absent or whole. */
static int
read_while_appending(const char *store, pid_t writer, int *seen_max, int *partial)
{
    int done = 0, status = 0, rc = 0;
    *seen_max = 0;
    *partial  = 0;
    for (int iter = 0; !done || iter < 2; iter++) {
        zarr_store *s = NULL;
        zarr_array *a = NULL;
        if (!done && waitpid(writer, &status, WNOHANG) == writer)
            done = 1;
        if (zarr_store_open_dir(store, ZARR_STORE_RDONLY, &s) != ZARR_OK) {
            usleep(1000);
            continue; /* not created yet */
        }
        rc = zarr_array_open(s, "rows", &a);
        if (rc == ZARR_ENOTFOUND) {
            zarr_store_close(s);
            usleep(1000);
            continue;
        }
        if (rc != ZARR_OK) {
            fprintf(stderr, "  reader: metadata unparseable: %s\n", zarr_errmsg());
            zarr_store_close(s);
            return 1;
        }
        {
            const zarr_array_meta *m = zarr_array_meta_get(a);
            uint64_t               n = m->shape[0];
            if (n > 0 && n < ROWS)
                (*partial)++;
            for (uint64_t r = 0; r < n; r++) {
                int32_t     row[WIDTH];
                uint64_t    st[2] = {r, 0}, ct[2] = {1, WIDTH};
                zarr_region reg;
                zarr_region_box(2, st, ct, &reg);
                if (zarr_array_read(a, &reg, row) != ZARR_OK) {
                    fprintf(stderr, "  reader: row %llu unreadable: %s\n", (unsigned long long)r,
                            zarr_errmsg());
                    zarr_array_close(a);
                    zarr_store_close(s);
                    return 1;
                }
                {
                    int unwritten = 1;
                    for (int i = 0; i < WIDTH; i++)
                        unwritten &= row[i] == FILL;
                    if (unwritten)
                        continue; /* not written yet (the shape grows first): all the fill value */
                }
                for (int i = 0; i < WIDTH; i++)
                    if (row[i] != (int32_t)(r * 1000 + (uint64_t)i)) {
                        fprintf(stderr, "  reader: row %llu element %d is %d: torn\n", (unsigned long long)r,
                                i, row[i]);
                        zarr_array_close(a);
                        zarr_store_close(s);
                        return 1;
                    }
                if ((int)r + 1 > *seen_max)
                    *seen_max = (int)r + 1;
            }
        }
        zarr_array_close(a);
        zarr_store_close(s);
    }
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int
test_reader_while_appending(void)
{
    char  store[512];
    int   seen = 0, partial = 0;
    pid_t w;
    snprintf(store, sizeof store, "%s/app.zarr", test_tmpdir("concurrent"));
    fflush(NULL);
    if ((w = fork()) == 0)
        _exit(append_rows(store));
    ASSERT(w > 0);
    ASSERT(read_while_appending(store, w, &seen, &partial) == 0);
    ASSERT_EQ_INT(seen, ROWS); /* after the writer exited, every row is there */
    ASSERT(partial > 0);       /* and the reader did look while it was appending */
    return 0;
}

/* Two writer processes on disjoint halves of one array's chunks. */
static int
write_half(const char *store, int half)
{
    hid_t f, d, fs, ms;
    int   row[WIDTH];
    if ((f = H5Fopen(store, H5F_ACC_RDWR, h5t_zarr_fapl(3))) < 0 ||
        (d = H5Dopen2(f, "grid", H5P_DEFAULT)) < 0)
        return 1;
    for (int r = half * (ROWS / 2); r < (half + 1) * (ROWS / 2); r++) {
        hsize_t st[2] = {(hsize_t)r, 0}, ct[2] = {1, WIDTH};
        for (int i = 0; i < WIDTH; i++)
            row[i] = -(r * 1000 + i) - 1;
        fs = H5Dget_space(d);
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, ct, NULL);
        ms = H5Screate_simple(2, ct, NULL);
        if (H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, row) < 0)
            return 1;
        H5Sclose(ms);
        H5Sclose(fs);
    }
    H5Dclose(d);
    return H5Fclose(f) < 0;
}

static int
create_grid(const char *store)
{
    hid_t   f, s, d, dcpl;
    hsize_t dims[2] = {ROWS, WIDTH}, chunk[2] = {1, WIDTH};
    if ((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, h5t_zarr_fapl(3))) < 0)
        return 1;
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    s = H5Screate_simple(2, dims, NULL);
    if ((d = H5Dcreate2(f, "grid", H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
        return 1;
    H5Dclose(d);
    H5Sclose(s);
    H5Pclose(dcpl);
    return H5Fclose(f) < 0;
}

static int
test_two_writers_disjoint(void)
{
    char  store[512];
    hid_t f, d;
    pid_t w[2];
    int   status, all[ROWS][WIDTH];
    snprintf(store, sizeof store, "%s/two.zarr", test_tmpdir("concurrent2"));
    /* made in a child too: this process starts HDF5 (and the engine's threads) only after every fork */
    fflush(NULL);
    if ((w[0] = fork()) == 0)
        _exit(create_grid(store));
    ASSERT(waitpid(w[0], &status, 0) == w[0] && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int k = 0; k < 2; k++)
        if ((w[k] = fork()) == 0)
            _exit(write_half(store, k));
    for (int k = 0; k < 2; k++) {
        ASSERT(waitpid(w[k], &status, 0) == w[k]);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, h5t_zarr_fapl(3))) >= 0);
    ASSERT((d = H5Dopen2(f, "grid", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0);
    H5Dclose(d);
    H5Fclose(f);
    for (int r = 0; r < ROWS; r++)
        for (int i = 0; i < WIDTH; i++)
            if (all[r][i] != -(r * 1000 + i) - 1)
                FAILF("row %d element %d is %d: a write was lost", r, i, all[r][i]);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(reader_while_appending),
    TEST_ENTRY(two_writers_disjoint),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
