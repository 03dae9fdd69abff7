/*
 * test_durable_vol.c: the connector's durability setting (`durable=0|1`, docs/CONFIG.md). As a test:
 * a store written with durable=1 reads back the same, a partial H5Dwrite is in the store (seen by an
 * independent core reader) when the call returns, without a flush, and a bad value fails H5Fcreate.
 * With `--write <store>` it is the program that tests/scripts/durable_strace.sh runs under strace
 * (the connector chosen by HDF5_VOL_CONNECTOR): H5Fcreate, H5Dcreate of a 16 x 32 int32 dataset "d" in
 * 4 x 4 chunks, one whole H5Dwrite (32 chunk files in 4 directories d/c/<i>, plus d/c and d), H5Fclose.
 * The write is bracketed by prctl(PR_SET_NAME, "h5zmark-...") calls, markers the script finds in the
 * trace (a call that succeeds: the script traces successful calls only).
 */
#include "runner.h"

#include "h5test.h"

#include <hdf5.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "h5zarr/h5zarr.h"
#include "h5zarr/zarr.h"

#define NY 16
#define NX 32
#define CY 4
#define CX 4

static hid_t
make_dataset(hid_t f)
{
    hsize_t dims[2] = {NY, NX}, chunks[2] = {CY, CX};
    hid_t   sp = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d;
    H5Pset_chunk(dcpl, 2, chunks);
    d = H5Dcreate2(f, "d", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Sclose(sp);
    H5Pclose(dcpl);
    return d;
}

/* The strace subject: no output, exit status 0 on success. */
static int
write_store(const char *path)
{
    static int buf[NY * NX];
    hid_t      f, d;
    for (int i = 0; i < NY * NX; i++)
        buf[i] = i + 1; /* every chunk differs from the fill value: all 32 are stored */
    if ((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0 || (d = make_dataset(f)) < 0)
        return 2;
    (void)prctl(PR_SET_NAME, "h5zmark-begin");
    if (H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        return 3;
    (void)prctl(PR_SET_NAME, "h5zmark-end");
    if (H5Dclose(d) < 0 || H5Fclose(f) < 0)
        return 4;
    (void)prctl(PR_SET_NAME, "h5zmark-closed");
    if (!h5t_is_zarr_store(path)) { /* a pointer file (a configuration rule): its store <path>.zarr */
        char store[4096];
        snprintf(store, sizeof store, "%s.zarr", path);
        return h5t_is_zarr_store(store) ? 0 : 5;
    }
    return 0;
}

/* Element (i, j) of int32 array "d" of the store at `dir`, read by the core on its own. */
static int
peek(const char *dir, uint64_t i, uint64_t j, int32_t *v)
{
    zarr_store *s = NULL;
    zarr_array *a = NULL;
    zarr_region r;
    uint64_t    st[2] = {i, j}, ct[2] = {1, 1};
    int         rc;
    if ((rc = zarr_store_open_dir(dir, ZARR_STORE_RDONLY, &s)) != ZARR_OK)
        return rc;
    if ((rc = zarr_array_open(s, "d", &a)) == ZARR_OK) {
        zarr_region_box(2, st, ct, &r);
        rc = zarr_array_read(a, &r, v);
    }
    zarr_array_close(a);
    zarr_store_close(s);
    return rc;
}

static int
test_durable_roundtrip_and_write_through(void)
{
    const char *tmp = test_tmpdir("durable-vol");
    char        dir[4096];
    static int  buf[NY * NX], back[NY * NX];
    hsize_t     st[2] = {5, 6}, ct[2] = {1, 1}, one = 1;
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f, d, fs, ms;
    int         v    = 777;
    int32_t     got  = 0;

    ASSERT(tmp);
    snprintf(dir, sizeof dir, "%s/d.zarr", tmp);
    ASSERT(H5Pset_fapl_zarr_opts(fapl, 3, "durable=1") >= 0);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(dir));
    ASSERT((d = make_dataset(f)) >= 0);
    for (int i = 0; i < NY * NX; i++)
        buf[i] = 5 * i - 3;
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    ASSERT(h5t_path_exists(dir, "d/c/3/7"));
    /* one element: without durability it would wait in the chunk cache until a flush
     * (test_vol_flush); durable, it is in the store when H5Dwrite returns */
    fs = H5Dget_space(d);
    ms = H5Screate_simple(1, &one, NULL);
    ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, ct, NULL) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, &v) >= 0);
    ASSERT_OK(peek(dir, 5, 6, &got));
    ASSERT_EQ_INT(got, 777);
    H5Sclose(ms);
    H5Sclose(fs);
    ASSERT(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);

    buf[5 * NX + 6] = 777;
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0);
    ASSERT(memcmp(buf, back, sizeof buf) == 0);
    ASSERT(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_bad_value_fails_create(void)
{
    const char *tmp = test_tmpdir("durable-bad");
    char        dir[4096], *err;
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f;

    ASSERT(tmp);
    snprintf(dir, sizeof dir, "%s/bad.zarr", tmp);
    ASSERT(H5Pset_fapl_zarr_opts(fapl, 3, "durable=2") >= 0);
    H5E_BEGIN_TRY { f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl); }
    H5E_END_TRY
    ASSERT(f < 0);
    err = h5t_error_text();
    ASSERT(err && strstr(err, "durable"));
    free(err);
    ASSERT(!h5t_path_exists(dir, "zarr.json"));
    H5Pclose(fapl);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(durable_roundtrip_and_write_through),
    TEST_ENTRY(bad_value_fails_create),
};

int
main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write") == 0)
        return write_store(argv[2]);
    return RUN_TESTS(tests);
}
