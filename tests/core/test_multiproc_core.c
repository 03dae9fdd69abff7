/*
 * test_multiproc_core.c: one directory store shared by several processes through the core (fork()).
 *  - appending_writer_readers: a writer grows a zstd-compressed array along its first dimension one
 *    row at a time (resize, write the row, flush) while readers in other processes open the store
 *    again and again and read the whole array: every open parses, every chunk decodes, every row is
 *    all fill or all the writer's values (a row lies in one chunk, and chunks are replaced atomically),
 *    rows once seen stay written, and the shape never shrinks; the readers stop when they have seen
 *    the last row.
 *  - two_writers_disjoint: two processes write disjoint chunk ranges of one array at the same time,
 *    row by row (read-modify-write of their own chunks); the final read has every value.
 * Bounded: a fixed amount of work, and a deadline (DEADLINE_S) that fails a reader instead of hanging.
 * No sleeps: the processes run as fast as they can, a pipe starts the two writers together.
 */
#include "runner.h"

#include <json-c/json.h>
#include <signal.h>
#include <sys/wait.h>

#include "h5zarr/zarr.h"

#define COLS       64
#define ROWS       160 /* rows the appending writer writes; chunks of CHUNK_ROWS rows */
#define CHUNK_ROWS 4
#define NREADERS   3
#define DEADLINE_S 60

/* The value the writers give element (r, c): never 0, the fill value. */
static int32_t
val(uint64_t r, int c)
{
    return (int32_t)((r + 1) * 1000 + (uint64_t)c + 1);
}

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A new v3 int32 array [rows, COLS], chunks [CHUNK_ROWS, COLS], bytes + zstd, fill 0, at "a". */
static int
make_array(const char *dir, uint64_t rows)
{
    zarr_store         *s        = NULL;
    zarr_array_meta    *m        = NULL;
    zarr_array         *a        = NULL;
    zarr_chain         *c        = NULL;
    uint64_t            shape[2] = {rows, COLS}, chunks[2] = {CHUNK_ROWS, COLS};
    struct json_object *j =
        json_tokener_parse("[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                           "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":true}}]");
    int rc = 1;

    if (!j || zarr_store_open(dir, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s) != ZARR_OK ||
        zarr_array_meta_new(3, 2, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m) != ZARR_OK ||
        zarr_chain_from_v3_json(j, m->dtype, 2, &c) != ZARR_OK)
        goto done;
    zarr_chain_free(m->chain);
    m->chain        = c;
    m->fill_defined = true;
    if (zarr_array_create(s, "a", m, false, &a) != ZARR_OK) {
        m = NULL; /* taken */
        goto done;
    }
    m  = NULL;
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "  make_array: %s\n", zarr_errmsg());
    json_object_put(j);
    zarr_array_meta_free(m);
    zarr_array_close(a);
    zarr_store_close(s);
    return rc;
}

/* Opens "a" of `dir` (RDWR when `rw`). */
static int
open_array(const char *dir, bool rw, zarr_store **s, zarr_array **a)
{
    *s = NULL;
    *a = NULL;
    if (zarr_store_open(dir, rw ? ZARR_STORE_RDWR : ZARR_STORE_RDONLY, s) != ZARR_OK)
        return 1;
    if (zarr_array_open(*s, "a", a) != ZARR_OK) {
        zarr_store_close(*s);
        *s = NULL;
        return 1;
    }
    return 0;
}

/* Writes rows [first, last) of "a" one at a time (resizing first to row + 1 rows when `grow`), each
 * flushed before the next. Exit status for a child. */
static int
writer(const char *dir, uint64_t first, uint64_t last, bool grow, int start_fd)
{
    zarr_store *s;
    zarr_array *a;
    int32_t     row[COLS];
    char        go;

    if (start_fd >= 0 && read(start_fd, &go, 1) != 1)
        return 10;
    if (open_array(dir, true, &s, &a)) {
        fprintf(stderr, "  writer: can't open: %s\n", zarr_errmsg());
        return 11;
    }
    for (uint64_t r = first; r < last; r++) {
        uint64_t    shape[2] = {r + 1, COLS}, start[2] = {r, 0}, count[2] = {1, COLS};
        zarr_region reg;
        for (int c = 0; c < COLS; c++)
            row[c] = val(r, c);
        zarr_region_box(2, start, count, &reg);
        if ((grow && zarr_array_resize(a, shape) != ZARR_OK) || zarr_array_write(a, &reg, row) != ZARR_OK ||
            zarr_array_flush(a) != ZARR_OK) {
            fprintf(stderr, "  writer: row %llu: %s\n", (unsigned long long)r, zarr_errmsg());
            return 12;
        }
    }
    zarr_array_close(a);
    zarr_store_close(s);
    return 0;
}

/* Reads the whole of "a" again and again (a fresh open each time) until it has ROWS rows, all written;
 * checks what it sees (see the file comment). Exit status for a child. */
static int
reader(const char *dir, int id)
{
    static int32_t buf[ROWS * COLS];
    bool           seen[ROWS] = {false};
    uint64_t       last_rows  = 0;
    double         t0         = now_s();
    long           reads      = 0;

    for (;;) {
        zarr_store            *s;
        zarr_array            *a;
        const zarr_array_meta *m;
        zarr_region            reg;
        uint64_t               rows;
        int                    complete = 1;

        if (now_s() - t0 > DEADLINE_S) {
            fprintf(stderr, "  reader %d: deadline after %ld reads, %llu rows\n", id, reads,
                    (unsigned long long)last_rows);
            return 20;
        }
        if (open_array(dir, false, &s, &a)) {
            fprintf(stderr, "  reader %d: open failed (read %ld): %s\n", id, reads, zarr_errmsg());
            return 21;
        }
        m    = zarr_array_meta_get(a);
        rows = m->shape[0];
        if (m->ndim != 2 || m->shape[1] != COLS || rows > ROWS || rows < last_rows) {
            fprintf(stderr, "  reader %d: shape %llu x %llu after %llu rows\n", id, (unsigned long long)rows,
                    (unsigned long long)m->shape[1], (unsigned long long)last_rows);
            return 22;
        }
        zarr_region_all(m, &reg);
        if (rows > 0 && zarr_array_read(a, &reg, buf) != ZARR_OK) {
            fprintf(stderr, "  reader %d: read of %llu rows failed: %s\n", id, (unsigned long long)rows,
                    zarr_errmsg());
            return 23;
        }
        zarr_array_close(a);
        zarr_store_close(s);
        reads++;
        for (uint64_t r = 0; r < rows; r++) {
            int n = 0;
            for (int c = 0; c < COLS; c++) {
                int32_t v = buf[r * COLS + (uint64_t)c];
                if (v == val(r, c))
                    n++;
                else if (v != 0) {
                    fprintf(stderr, "  reader %d: element (%llu, %d) is %d: neither fill nor %d\n", id,
                            (unsigned long long)r, c, v, val(r, c));
                    return 24;
                }
            }
            if (n != 0 && n != COLS) {
                fprintf(stderr, "  reader %d: row %llu has %d of %d values written (torn)\n", id,
                        (unsigned long long)r, n, COLS);
                return 25;
            }
            if (!n && seen[r]) {
                fprintf(stderr, "  reader %d: row %llu was written and reads as fill again\n", id,
                        (unsigned long long)r);
                return 26;
            }
            seen[r] = seen[r] || n;
            complete &= n == COLS;
        }
        last_rows = rows;
        if (rows == ROWS && complete)
            break;
    }
    fprintf(stderr, "  reader %d: %ld whole reads\n", id, reads);
    return 0;
}

/* Waits for each child in `pids` and checks it exited with 0. */
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
    const char *dir = test_tmpdir("mp_append");
    pid_t       pids[NREADERS + 1];

    ASSERT(dir);
    ASSERT(make_array(dir, 0) == 0);
    fflush(NULL);
    for (int i = 0; i <= NREADERS; i++) {
        pids[i] = fork();
        ASSERT(pids[i] >= 0);
        if (pids[i] == 0)
            _exit(i == 0 ? writer(dir, 0, ROWS, true, -1) : reader(dir, i));
    }
    ASSERT_EQ_INT(wait_all(pids, NREADERS + 1), 0);
    return 0;
}

static int
test_two_writers_disjoint(void)
{
    static int32_t buf[ROWS * COLS];
    const char    *dir = test_tmpdir("mp_two");
    pid_t          pids[2];
    int            fds[2];
    zarr_store    *s;
    zarr_array    *a;
    zarr_region    reg;

    ASSERT(dir);
    ASSERT(ROWS / 2 % CHUNK_ROWS == 0); /* the halves are disjoint chunk ranges */
    ASSERT(make_array(dir, ROWS) == 0);
    ASSERT(pipe(fds) == 0);
    fflush(NULL);
    for (int i = 0; i < 2; i++) {
        pids[i] = fork();
        ASSERT(pids[i] >= 0);
        if (pids[i] == 0) {
            close(fds[1]);
            _exit(writer(dir, i ? ROWS / 2 : 0, i ? ROWS : ROWS / 2, false, fds[0]));
        }
    }
    close(fds[0]);
    ASSERT(write(fds[1], "gg", 2) == 2); /* both start now */
    close(fds[1]);
    ASSERT_EQ_INT(wait_all(pids, 2), 0);
    ASSERT(open_array(dir, false, &s, &a) == 0);
    zarr_region_all(zarr_array_meta_get(a), &reg);
    ASSERT_OK(zarr_array_read(a, &reg, buf));
    zarr_array_close(a);
    zarr_store_close(s);
    for (uint64_t r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            if (buf[r * COLS + (uint64_t)c] != val(r, c))
                FAILF("element (%llu, %d) is %d, expected %d", (unsigned long long)r, c,
                      buf[r * COLS + (uint64_t)c], val(r, c));
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
