/*
 * test_multiproc.c: one store shared by several processes through the connector (fork()), as HDF5
 * programs would share it (tests/core/test_multiproc.c does the same through the core).
 *  - appending_writer_readers: a writer extends a compressed dataset with an unlimited first dimension
 *    one row at a time (H5Dset_extent, write the row, H5Fflush) while readers in other processes open
 *    the store again and again (H5Fopen, H5Dopen2, the whole dataset read): every open and read
 *    succeeds, every row is all fill or all the writer's values, a row once written stays written, the
 *    extent never shrinks; the readers stop when they have seen the last row.
 *  - two_writers_disjoint: two processes open the store read-write at the same time and write disjoint
 *    chunk ranges of one dataset row by row; the final read (a fresh open) has every value.
 * The parent makes the stores and forks with no HDF5 object open. Bounded: a fixed amount of work
 * and a deadline (DEADLINE_S) that fails a reader instead of hanging; no sleeps.
 */
#include "runner.h"
#include "h5test.h"

#include <sys/wait.h>
#include <time.h>

#define COLS       32
#define ROWS       96
#define CHUNK_ROWS 4
#define NREADERS   3
#define DEADLINE_S 60

static int
val(hsize_t r, int c)
{
    return (int)((r + 1) * 1000 + (hsize_t)c + 1);
}

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A store at `path` with dataset "d": int [rows, COLS] (max [unlimited, COLS]), chunks of CHUNK_ROWS
 * rows, deflate, fill 0. */
static int
make_store(const char *path, hsize_t rows)
{
    hsize_t dims[2] = {rows, COLS}, maxd[2] = {H5S_UNLIMITED, COLS}, ch[2] = {CHUNK_ROWS, COLS};
    hid_t   fapl = h5t_zarr_fapl(3), f = -1, sp = -1, dcpl = -1, d = -1;
    int     fill = 0, rc = 1;

    if (fapl < 0 || (f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0 ||
        (sp = H5Screate_simple(2, dims, maxd)) < 0 || (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 ||
        H5Pset_chunk(dcpl, 2, ch) < 0 || H5Pset_deflate(dcpl, 1) < 0 ||
        H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill) < 0 ||
        (d = H5Dcreate2(f, "d", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
        goto done;
    rc = 0;
done:
    if (d >= 0)
        H5Dclose(d);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (sp >= 0)
        H5Sclose(sp);
    if (f >= 0 && H5Fclose(f) < 0)
        rc = 1;
    if (fapl >= 0)
        H5Pclose(fapl);
    return rc;
}

/* Writes rows [first, last) of "d" in `path`, one at a time, each flushed (H5Fflush) before the next;
 * extends the dataset to row + 1 rows first when `grow`. Exit status for a child. */
static int
writer(const char *path, hsize_t first, hsize_t last, bool grow, int start_fd)
{
    hid_t fapl = h5t_zarr_fapl(3), f, d;
    int   row[COLS];
    char  go;

    if (start_fd >= 0 && read(start_fd, &go, 1) != 1)
        return 10;
    if (fapl < 0 || (f = H5Fopen(path, H5F_ACC_RDWR, fapl)) < 0 || (d = H5Dopen2(f, "d", H5P_DEFAULT)) < 0)
        return 11;
    for (hsize_t r = first; r < last; r++) {
        hsize_t ext[2] = {r + 1, COLS}, start[2] = {r, 0}, count[2] = {1, COLS};
        hid_t   fs, ms;
        for (int c = 0; c < COLS; c++)
            row[c] = val(r, c);
        if (grow && H5Dset_extent(d, ext) < 0)
            return 12;
        if ((fs = H5Dget_space(d)) < 0 ||
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            (ms = H5Screate_simple(2, count, NULL)) < 0 ||
            H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, row) < 0 || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
            return 13;
        H5Sclose(ms);
        H5Sclose(fs);
    }
    if (H5Dclose(d) < 0 || H5Fclose(f) < 0)
        return 14;
    H5Pclose(fapl);
    return 0;
}

/* Opens and reads the whole dataset again and again until it has ROWS rows, all written, checking
 * what it sees (the file comment). Exit status for a child. */
static int
reader(const char *path, int id)
{
    static int buf[ROWS * COLS];
    bool       seen[ROWS] = {false};
    hsize_t    last_rows  = 0;
    double     t0         = now_s();
    long       reads      = 0;
    hid_t      fapl       = h5t_zarr_fapl(3);

    if (fapl < 0)
        return 20;
    for (;;) {
        hid_t   f, d, sp;
        hsize_t dims[2]  = {0, 0};
        bool    complete = true;

        if (now_s() - t0 > DEADLINE_S) {
            fprintf(stderr, "  reader %d: deadline after %ld reads\n", id, reads);
            return 21;
        }
        if ((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0 || (d = H5Dopen2(f, "d", H5P_DEFAULT)) < 0) {
            fprintf(stderr, "  reader %d: open failed after %ld reads\n", id, reads);
            H5Eprint2(H5E_DEFAULT, stderr);
            return 22;
        }
        if ((sp = H5Dget_space(d)) < 0 || H5Sget_simple_extent_dims(sp, dims, NULL) != 2 || dims[1] != COLS ||
            dims[0] > ROWS || dims[0] < last_rows) {
            fprintf(stderr, "  reader %d: extent %llu x %llu after %llu rows\n", id,
                    (unsigned long long)dims[0], (unsigned long long)dims[1], (unsigned long long)last_rows);
            return 23;
        }
        if (dims[0] > 0 && H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
            fprintf(stderr, "  reader %d: read of %llu rows failed\n", id, (unsigned long long)dims[0]);
            H5Eprint2(H5E_DEFAULT, stderr);
            return 24;
        }
        H5Sclose(sp);
        H5Dclose(d);
        H5Fclose(f);
        reads++;
        for (hsize_t r = 0; r < dims[0]; r++) {
            int n = 0;
            for (int c = 0; c < COLS; c++) {
                int v = buf[r * COLS + (hsize_t)c];
                if (v == val(r, c))
                    n++;
                else if (v != 0) {
                    fprintf(stderr, "  reader %d: element (%llu, %d) is %d: neither fill nor %d\n", id,
                            (unsigned long long)r, c, v, val(r, c));
                    return 25;
                }
            }
            if (n != 0 && n != COLS) {
                fprintf(stderr, "  reader %d: row %llu torn (%d of %d written)\n", id, (unsigned long long)r,
                        n, COLS);
                return 26;
            }
            if (!n && seen[r]) {
                fprintf(stderr, "  reader %d: row %llu reads as fill again\n", id, (unsigned long long)r);
                return 27;
            }
            seen[r] = seen[r] || n;
            complete &= n == COLS;
        }
        last_rows = dims[0];
        if (dims[0] == ROWS && complete)
            break;
    }
    H5Pclose(fapl);
    fprintf(stderr, "  reader %d: %ld whole reads\n", id, reads);
    return 0;
}

static int
wait_all(const pid_t *pids, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int st = 0;
        if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "  child %d: %s %d\n", i, WIFEXITED(st) ? "exit status" : "signal",
                    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            bad++;
        }
    }
    return bad;
}

static int
test_appending_writer_readers(void)
{
    const char *dir = test_tmpdir("h5mp_append");
    char        path[4096];
    pid_t       pids[NREADERS + 1];

    ASSERT(dir);
    snprintf(path, sizeof path, "%s/grow.zarr", dir);
    ASSERT(make_store(path, 0) == 0);
    ASSERT(h5t_is_zarr_store(path));
    fflush(NULL);
    for (int i = 0; i <= NREADERS; i++) {
        pids[i] = fork();
        ASSERT(pids[i] >= 0);
        if (pids[i] == 0)
            _exit(i == 0 ? writer(path, 0, ROWS, true, -1) : reader(path, i));
    }
    ASSERT_EQ_INT(wait_all(pids, NREADERS + 1), 0);
    return 0;
}

static int
test_two_writers_disjoint(void)
{
    static int  buf[ROWS * COLS];
    const char *dir = test_tmpdir("h5mp_two");
    char        path[4096];
    pid_t       pids[2];
    int         fds[2];
    hid_t       fapl, f, d;

    ASSERT(dir);
    ASSERT(ROWS / 2 % CHUNK_ROWS == 0); /* the halves are disjoint chunk ranges */
    snprintf(path, sizeof path, "%s/two.zarr", dir);
    ASSERT(make_store(path, ROWS) == 0);
    ASSERT(pipe(fds) == 0);
    fflush(NULL);
    for (int i = 0; i < 2; i++) {
        pids[i] = fork();
        ASSERT(pids[i] >= 0);
        if (pids[i] == 0) {
            close(fds[1]);
            _exit(writer(path, i ? ROWS / 2 : 0, i ? ROWS : ROWS / 2, false, fds[0]));
        }
    }
    close(fds[0]);
    ASSERT(write(fds[1], "gg", 2) == 2); /* both start now */
    close(fds[1]);
    ASSERT_EQ_INT(wait_all(pids, 2), 0);
    ASSERT((fapl = h5t_zarr_fapl(3)) >= 0);
    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    H5Dclose(d);
    H5Fclose(f);
    H5Pclose(fapl);
    for (hsize_t r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            if (buf[r * COLS + (hsize_t)c] != val(r, c))
                FAILF("element (%llu, %d) is %d, expected %d", (unsigned long long)r, c,
                      buf[r * COLS + (hsize_t)c], val(r, c));
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(appending_writer_readers),
    TEST_ENTRY(two_writers_disjoint),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
