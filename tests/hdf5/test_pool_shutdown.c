/*
 * test_pool_shutdown.c: the engine's thread pool ends with the library. A program writes and reads a
 * chunked dataset through the connector with a pool of several threads (threads=4), so that jobs run
 * on pool threads; after H5close no thread of the connector is left (the threads of the process, as
 * /proc/self/task lists them, are back to what they were before HDF5 was used), and HDF5 used again
 * after H5close gets its threads back and correct data. tests/scripts/pool_shutdown.sh runs the same
 * program under valgrind (helgrind, then memcheck), and its `--exit` mode (no H5close: HDF5's atexit
 * handler ends the library), to check that nothing races or touches freed memory at termination and
 * that the pool's threads and scratch are gone (nothing definitely or indirectly lost).
 */
#include "runner.h"
#include "h5test.h"

#include <dirent.h>

#define N   256 /* rows; chunks of 16 rows: 16 chunks (128 KiB) per job, above the engine's inline size */
#define COL 128

/* Threads of this process now. */
static int
count_threads(void)
{
    DIR           *d = opendir("/proc/self/task");
    struct dirent *e;
    int            n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static hid_t
fapl_threads(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fapl_zarr_opts(fapl, 3, "threads=4") < 0) {
        H5Pclose(fapl);
        return H5I_INVALID_HID;
    }
    return fapl;
}

/* Writes (when `write`) then reads back the dataset "d" of `path`, checking every value; returns the
 * number of threads seen while the file was open, or negative on a failure. */
static int
write_read(const char *path, bool write)
{
    static int buf[N][COL];
    hsize_t    dims[2] = {N, COL}, ch[2] = {16, COL};
    hid_t      fapl = fapl_threads(), f, sp, dcpl, d;
    int        seen;

    if (fapl < 0)
        return -1;
    if (write) {
        for (int i = 0; i < N; i++)
            for (int j = 0; j < COL; j++)
                buf[i][j] = i * 1000 + j;
        f    = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        sp   = H5Screate_simple(2, dims, NULL);
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        if (f < 0 || sp < 0 || dcpl < 0 || H5Pset_chunk(dcpl, 2, ch) < 0 || H5Pset_deflate(dcpl, 1) < 0)
            return -2;
        d = H5Dcreate2(f, "d", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
            return -3;
        H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(sp);
        if (H5Fclose(f) < 0)
            return -4;
    }
    memset(buf, 0, sizeof buf);
    if ((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0 || (d = H5Dopen2(f, "d", H5P_DEFAULT)) < 0 ||
        H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        return -5;
    seen = count_threads();
    H5Dclose(d);
    H5Fclose(f);
    H5Pclose(fapl);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < COL; j++)
            if (buf[i][j] != i * 1000 + j) {
                fprintf(stderr, "  value [%d][%d] is %d, expected %d\n", i, j, buf[i][j], i * 1000 + j);
                return -6;
            }
    return seen;
}

static int
test_threads_end_at_h5close(void)
{
    const char *dir = test_tmpdir("pool_shutdown");
    char        path[4096];
    int         before, during, after, again, after2;

    ASSERT(dir);
    snprintf(path, sizeof path, "%s/s.zarr", dir);
    ASSERT((before = count_threads()) >= 1);
    during = write_read(path, true);
    ASSERT(during > 0);
    ASSERT(h5t_is_zarr_store(path));
    /* a pool of 4 is the caller and 3 threads */
    ASSERT(during >= before + 3);
    ASSERT(H5close() >= 0);
    after = count_threads();
    ASSERT_EQ_INT(after, before);
    /* HDF5 again after H5close: the pool starts its threads again, the data reads back */
    again = write_read(path, false);
    ASSERT(again > 0);
    ASSERT(again >= before + 3);
    ASSERT(H5close() >= 0);
    after2 = count_threads();
    ASSERT_EQ_INT(after2, before);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(threads_end_at_h5close),
};

/* `--exit PATH`: writes and reads PATH with the pool's threads running and returns from main without
 * H5close (HDF5's atexit handler terminates the connector); pool_shutdown.sh runs it under valgrind. */
int
main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--exit")) {
        int seen = write_read(argv[2], true);
        if (seen < 4) {
            fprintf(stderr, "write_read: %d (want at least 4 threads running)\n", seen);
            return 1;
        }
        return 0;
    }
    return RUN_TESTS(tests);
}
