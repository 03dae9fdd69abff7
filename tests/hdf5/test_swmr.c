/*
 * test_swmr.c: HDF5's single-writer/multiple-reader mode on zarr stores (vol/swmr.c, docs/FORMAT.md
 * "SWMR").
 *  - intent_flags: H5Fget_intent reports H5F_ACC_SWMR_READ / H5F_ACC_SWMR_WRITE as the native connector
 *    does (open flags, H5Fcreate with SWMR write, H5Fstart_swmr_write); what HDF5 refuses is refused
 *    (starting SWMR writing on a read-only file or twice, a high libver bound below 1.10, a second open
 *    in the process whose SWMR flags don't agree with the first's); H5Fstart_swmr_write flushes what
 *    was made so far (a deferred create's document is in the store when it returns).
 *  - writer_reader_v3 / _v2 / _sharded: a writer process in SWMR writing mode appends STEP rows at a
 *    time (H5Dset_extent, H5Dwrite, H5Dflush) while a reader process, which opened the store once with
 *    H5F_ACC_SWMR_READ and keeps the dataset open, refreshes (H5Drefresh) after each step. Pipes make the
 *    two take turns, so each check is exact: before the refresh the reader still sees the previous
 *    extent, after it the new one and every value; appended rows fill chunks the reader has cached
 *    (STEP is not a multiple of the chunk's rows, and the reader reads part of a chunk each step); a
 *    last step overwrites the first rows in place, which the reader sees after its refresh (its cached
 *    chunk dropped). The sharded variant also drops cached shard indexes. A child that hangs is killed
 *    by alarm(); its partner then reads end-of-file on its pipe and fails.
 */
#include "runner.h"
#include "h5test.h"

#include <signal.h>
#include <sys/wait.h>

#define COLS       32
#define STEP       3 /* rows per append: not a multiple of the chunk rows */
#define NSTEPS     6
#define DEADLINE_S 60
#define FILL       (-1)

static int
val(hsize_t r, int c, int gen)
{
    return gen * 100000 + (int)r * 100 + c + 1;
}

/* The connector's messages of the last failed call contain `want`. */
static int
errors_say(const char *want)
{
    char *t  = h5t_error_text();
    int   ok = t && strstr(t, want) != NULL;
    if (!ok)
        fprintf(stderr, "  '%s' not in the error stack:\n%s\n", want, t ? t : "(none)");
    free(t);
    return ok;
}

static unsigned
intent_of(hid_t f)
{
    unsigned i = 0xffff;
    if (H5Fget_intent(f, &i) < 0)
        return 0xffff;
    return i;
}

/* A store at `path` holding "d": int32 [rows, COLS], max [unlimited, COLS], chunks `ch`, fill FILL; a
 * shard shape when `shard` is not NULL. The file is closed. */
static int
make_store(const char *path, int version, const hsize_t *ch, const hsize_t *shard)
{
    hsize_t dims[2] = {0, COLS}, maxd[2] = {H5S_UNLIMITED, COLS};
    hid_t   fapl = h5t_zarr_fapl(version), f = -1, sp = -1, dcpl = -1, d = -1;
    int     fill = FILL, rc = 1;

    if (fapl < 0 || (f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0 ||
        (sp = H5Screate_simple(2, dims, maxd)) < 0 || (dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 ||
        H5Pset_chunk(dcpl, 2, ch) < 0 || H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill) < 0 ||
        (shard && H5Pset_zarr_shard(dcpl, 2, shard) < 0) ||
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

/* Writes rows [r0, r0 + n) of "d" with generation `gen`'s values. */
static int
write_rows(hid_t d, hsize_t r0, hsize_t n, int gen)
{
    static int buf[NSTEPS * STEP * COLS];
    hsize_t    start[2] = {r0, 0}, count[2] = {n, COLS};
    hid_t      fs = H5Dget_space(d), ms = H5Screate_simple(2, count, NULL);
    int        rc = -1;

    for (hsize_t r = 0; r < n; r++)
        for (int c = 0; c < COLS; c++)
            buf[r * COLS + (hsize_t)c] = val(r0 + r, c, gen);
    if (fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
        H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, buf) >= 0)
        rc = 0;
    if (fs >= 0)
        H5Sclose(fs);
    if (ms >= 0)
        H5Sclose(ms);
    return rc;
}

/* Reads `count` elements of row `r` from column 0 (a part of a chunk: it goes through the chunk
 * cache) into `out`. */
static int
read_row_part(hid_t d, hsize_t r, hsize_t ncols, int *out)
{
    hsize_t start[2] = {r, 0}, count[2] = {1, ncols};
    hid_t   fs = H5Dget_space(d), ms = H5Screate_simple(2, count, NULL);
    int     rc = -1;
    if (fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
        H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, out) >= 0)
        rc = 0;
    if (fs >= 0)
        H5Sclose(fs);
    if (ms >= 0)
        H5Sclose(ms);
    return rc;
}

static hsize_t
rows_of(hid_t d)
{
    hsize_t dims[2] = {0, 0};
    hid_t   sp      = H5Dget_space(d);
    int     nd      = sp >= 0 ? H5Sget_simple_extent_dims(sp, dims, NULL) : -1;
    if (sp >= 0)
        H5Sclose(sp);
    return nd == 2 && dims[1] == COLS ? dims[0] : (hsize_t)-1;
}

/* One byte over a pipe: the other process may go on. */
static int
tell(int fd)
{
    return write(fd, "x", 1) == 1 ? 0 : -1;
}

static int
await(int fd)
{
    char c;
    return read(fd, &c, 1) == 1 ? 0 : -1;
}

/* The writer: SWMR writing, then NSTEPS appends and an overwrite, each flushed and then announced on
 * `to_reader`; it goes on when the reader answers on `from_reader`. Exit status for a child. */
static int
writer(const char *path, int version, int to_reader, int from_reader)
{
    hid_t fapl = h5t_zarr_fapl(version), f, d;

    alarm(DEADLINE_S);
    if (fapl < 0 || (f = H5Fopen(path, H5F_ACC_RDWR, fapl)) < 0 || (d = H5Dopen2(f, "d", H5P_DEFAULT)) < 0)
        return 10;
    if (intent_of(f) != H5F_ACC_RDWR || H5Fstart_swmr_write(f) < 0 ||
        intent_of(f) != (H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE))
        return 11;
    if (tell(to_reader) < 0 || await(from_reader) < 0) /* the reader has the store open */
        return 12;
    for (int k = 1; k <= NSTEPS; k++) {
        hsize_t ext[2] = {(hsize_t)k * STEP, COLS};
        if (H5Dset_extent(d, ext) < 0 || write_rows(d, ext[0] - STEP, STEP, 0) < 0 || H5Dflush(d) < 0) {
            H5Eprint2(H5E_DEFAULT, stderr);
            return 13;
        }
        if (tell(to_reader) < 0 || await(from_reader) < 0)
            return 14;
    }
    /* in place, no new extent: the first rows get new values */
    if (write_rows(d, 0, STEP, 1) < 0 || H5Dflush(d) < 0)
        return 15;
    if (tell(to_reader) < 0 || await(from_reader) < 0)
        return 16;
    if (H5Dclose(d) < 0 || H5Fclose(f) < 0)
        return 17;
    H5Pclose(fapl);
    return 0;
}

/* Checks every value of "d" (its current extent, `rows` rows): rows below `newgen_rows` hold generation
 * 1's values, the others generation 0's. */
static int
check_all(hid_t d, hsize_t rows, hsize_t newgen_rows)
{
    static int buf[NSTEPS * STEP * COLS];
    if (H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        return -1;
    for (hsize_t r = 0; r < rows; r++)
        for (int c = 0; c < COLS; c++) {
            int want = val(r, c, r < newgen_rows ? 1 : 0);
            if (buf[r * COLS + (hsize_t)c] != want) {
                fprintf(stderr, "  reader: element (%llu, %d) of %llu rows is %d, expected %d\n",
                        (unsigned long long)r, c, (unsigned long long)rows, buf[r * COLS + (hsize_t)c], want);
                return -1;
            }
        }
    return 0;
}

/* The reader: opens the store once for SWMR reading and follows the writer's steps (file comment).
 * Exit status for a child. */
static int
reader(const char *path, int version, int from_writer, int to_writer)
{
    hid_t fapl = h5t_zarr_fapl(version), f, d;
    int   part[COLS];

    alarm(DEADLINE_S);
    if (fapl < 0 || await(from_writer) < 0) /* the writer is in SWMR writing mode */
        return 20;
    if ((f = H5Fopen(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl)) < 0 ||
        (d = H5Dopen2(f, "d", H5P_DEFAULT)) < 0)
        return 21;
    if (intent_of(f) != (H5F_ACC_RDONLY | H5F_ACC_SWMR_READ) || rows_of(d) != 0)
        return 22;
    if (tell(to_writer) < 0)
        return 23;
    for (int k = 1; k <= NSTEPS; k++) {
        hsize_t rows = (hsize_t)k * STEP;
        if (await(from_writer) < 0)
            return 24;
        /* the dataset's extent is what it was when it was opened or last refreshed, as natively */
        if (rows_of(d) != rows - STEP) {
            fprintf(stderr, "  reader: %llu rows before refresh %d\n", (unsigned long long)rows_of(d), k);
            return 25;
        }
        if (H5Drefresh(d) < 0) {
            H5Eprint2(H5E_DEFAULT, stderr);
            return 26;
        }
        if (rows_of(d) != rows) {
            fprintf(stderr, "  reader: %llu rows after refresh %d\n", (unsigned long long)rows_of(d), k);
            return 27;
        }
        if (check_all(d, rows, 0) < 0)
            return 28;
        /* part of the last row's chunk and of the first: both cached now, and the writer changes both
         * next (the next rows fill the last chunk, the overwrite changes the first) */
        if (read_row_part(d, rows - 1, COLS / 2, part) < 0 || part[0] != val(rows - 1, 0, 0) ||
            read_row_part(d, 0, COLS / 2, part) < 0 || part[1] != val(0, 1, 0))
            return 29;
        if (tell(to_writer) < 0)
            return 30;
    }
    if (await(from_writer) < 0 || H5Drefresh(d) < 0 || rows_of(d) != NSTEPS * STEP)
        return 31;
    if (read_row_part(d, 0, COLS / 2, part) < 0 || part[0] != val(0, 0, 1))
        return 32;
    if (check_all(d, NSTEPS * STEP, STEP) < 0)
        return 33;
    if (tell(to_writer) < 0 || H5Dclose(d) < 0 || H5Fclose(f) < 0)
        return 34;
    H5Pclose(fapl);
    return 0;
}

static int
wait_child(pid_t pid, const char *who)
{
    int st = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "  %s: %s %d\n", who, WIFEXITED(st) ? "exit status" : "signal",
                WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        return 1;
    }
    return 0;
}

static int
writer_reader(const char *name, int version, const hsize_t *ch, const hsize_t *shard)
{
    const char *dir = test_tmpdir(name);
    char        path[4096];
    int         w2r[2], r2w[2], bad;
    pid_t       wp, rp;

    ASSERT(dir);
    snprintf(path, sizeof path, "%s/swmr.zarr", dir);
    ASSERT(make_store(path, version, ch, shard) == 0);
    ASSERT(h5t_is_zarr_store(path));
    ASSERT(pipe(w2r) == 0 && pipe(r2w) == 0);
    fflush(NULL);
    ASSERT((wp = fork()) >= 0);
    if (wp == 0) {
        close(w2r[0]);
        close(r2w[1]);
        _exit(writer(path, version, w2r[1], r2w[0]));
    }
    ASSERT((rp = fork()) >= 0);
    if (rp == 0) {
        close(w2r[1]);
        close(r2w[0]);
        _exit(reader(path, version, w2r[0], r2w[1]));
    }
    close(w2r[0]);
    close(w2r[1]);
    close(r2w[0]);
    close(r2w[1]);
    bad = wait_child(wp, "writer") + wait_child(rp, "reader");
    ASSERT_EQ_INT(bad, 0);
    return 0;
}

static int
test_writer_reader_v3(void)
{
    hsize_t ch[2] = {4, COLS};
    return writer_reader("swmr_v3", 3, ch, NULL);
}

static int
test_writer_reader_v2(void)
{
    hsize_t ch[2] = {4, COLS / 2};
    return writer_reader("swmr_v2", 2, ch, NULL);
}

static int
test_writer_reader_sharded(void)
{
    hsize_t ch[2] = {2, COLS / 2}, shard[2] = {4, COLS};
    return writer_reader("swmr_shard", 3, ch, shard);
}

static int
test_intent_flags(void)
{
    const char *dir = test_tmpdir("swmr_intent");
    char        path[4096], p2[4096];
    hsize_t     dims[1] = {4}, maxd[1] = {H5S_UNLIMITED}, ch[1] = {2};
    hid_t       fapl, f, f2, sp, dcpl, d;
    herr_t      rc;

    ASSERT(dir);
    snprintf(path, sizeof path, "%s/a.zarr", dir);
    ASSERT((fapl = h5t_zarr_fapl(3)) >= 0);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT_EQ_INT(intent_of(f), H5F_ACC_RDWR);
    ASSERT((sp = H5Screate_simple(1, dims, maxd)) >= 0 && (dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT(H5Pset_chunk(dcpl, 1, ch) >= 0);
    ASSERT((d = H5Dcreate2(f, "d", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    /* a create under a group this open made waits for a flush (deferred); starting SWMR flushes */
    ASSERT(!h5t_path_exists(path, "d/zarr.json"));
    ASSERT(H5Fstart_swmr_write(f) >= 0);
    ASSERT(h5t_path_exists(path, "d/zarr.json"));
    ASSERT_EQ_INT(intent_of(f), H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE);
    H5E_BEGIN_TRY { rc = H5Fstart_swmr_write(f); }
    H5E_END_TRY
    ASSERT(rc < 0 && errors_say("file already in SWMR writing mode"));
    /* a second open in this process: SWMR reading of a file open for SWMR writing is allowed, and reports
     * the shared file's flags (as natively) */
    ASSERT((f2 = H5Fopen(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl)) >= 0);
    ASSERT_EQ_INT(intent_of(f2), H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE);
    ASSERT(H5Fclose(f2) >= 0);
    ASSERT(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);

    /* read-only, SWMR reading */
    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl)) >= 0);
    ASSERT_EQ_INT(intent_of(f), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ);
    H5E_BEGIN_TRY { rc = H5Fstart_swmr_write(f); }
    H5E_END_TRY
    ASSERT(rc < 0 && errors_say("no write intent on file"));
    ASSERT_EQ_INT(intent_of(f), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ);
    ASSERT((d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0 && H5Drefresh(d) >= 0 && H5Dclose(d) >= 0);
    ASSERT(H5Fclose(f) >= 0);

    /* plain read-only: no SWMR flag; a second open asking for SWMR reading is refused, as natively */
    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT_EQ_INT(intent_of(f), H5F_ACC_RDONLY);
    H5E_BEGIN_TRY { f2 = H5Fopen(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl); }
    H5E_END_TRY
    ASSERT(f2 < 0 && errors_say("SWMR read access flag not the same"));
    ASSERT(H5Fclose(f) >= 0);

    /* read-write without SWMR; a second open asking for SWMR writing is refused, as natively */
    ASSERT((f = H5Fopen(path, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT_EQ_INT(intent_of(f), H5F_ACC_RDWR);
    H5E_BEGIN_TRY { f2 = H5Fopen(path, H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE, fapl); }
    H5E_END_TRY
    ASSERT(f2 < 0 && errors_say("SWMR write access flag not the same"));
    ASSERT(H5Fclose(f) >= 0);

    /* read-write with SWMR writing from the open */
    ASSERT((f = H5Fopen(path, H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE, fapl)) >= 0);
    ASSERT_EQ_INT(intent_of(f), H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE);
    ASSERT(H5Fclose(f) >= 0);

    /* HDF5 itself refuses SWMR reading with write access (before any connector) */
    H5E_BEGIN_TRY { f = H5Fopen(path, H5F_ACC_RDWR | H5F_ACC_SWMR_READ, fapl); }
    H5E_END_TRY
    ASSERT(f < 0);

    /* H5Fcreate with SWMR writing */
    snprintf(p2, sizeof p2, "%s/b.zarr", dir);
    ASSERT((f = H5Fcreate(p2, H5F_ACC_TRUNC | H5F_ACC_SWMR_WRITE, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(p2));
    ASSERT_EQ_INT(intent_of(f), H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE);
    ASSERT(H5Fclose(f) >= 0);

    /* a file access list whose high bound is below 1.10 asks for a format without SWMR */
    ASSERT(H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_V18) >= 0);
    ASSERT((f = H5Fopen(path, H5F_ACC_RDWR, fapl)) >= 0);
    H5E_BEGIN_TRY { rc = H5Fstart_swmr_write(f); }
    H5E_END_TRY
    ASSERT(rc < 0 && errors_say("does not support SWMR"));
    ASSERT_EQ_INT(intent_of(f), H5F_ACC_RDWR);
    ASSERT(H5Fclose(f) >= 0);

    H5Sclose(sp);
    H5Pclose(dcpl);
    H5Pclose(fapl);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(intent_flags),
    TEST_ENTRY(writer_reader_v3),
    TEST_ENTRY(writer_reader_v2),
    TEST_ENTRY(writer_reader_sharded),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
