/*
 * test_exit_open.c: a program that exits with a store's objects still open (issue 27: netCDF's
 * ncdump/tst_special_atts crashed at exit). At shutdown HDF5 closes every datatype id left in one
 * mark-and-sweep pass (H5T_top_term_package); a committed datatype of a store closing in that pass
 * released the type id the connector held for it, which the same pass had freed already (SIGSEGV in
 * H5Tget_class). Each case runs in a child process (this process never starts HDF5, so the engine's
 * threads never meet a fork) that reads real values, leaves the committed compound type, datasets and
 * attributes using it open, and exits (or calls H5close first): its exit status must be 0.
 */
#include "runner.h"

#include <hdf5.h>
#include <stdint.h>
#include <sys/wait.h>

#include "h5test.h"

static char dir[400], store[600];

typedef struct obs {
    int    day;
    double temp;
} obs;

static hid_t
obs_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(obs));
    H5Tinsert(t, "day", HOFFSET(obs, day), H5T_NATIVE_INT);
    H5Tinsert(t, "temp", HOFFSET(obs, temp), H5T_NATIVE_DOUBLE);
    return t;
}

/* Child: exit status 0 on success, 1 on a failed check. */
#define CHECK(c)                                                                                             \
    do {                                                                                                     \
        if (!(c)) {                                                                                          \
            fprintf(stderr, "%s:%d: child check failed: %s\n", __FILE__, __LINE__, #c);                      \
            _exit(1);                                                                                        \
        }                                                                                                    \
    } while (0)

/* Makes the store: committed compound "obs_t", dataset "d" (3 of them) and root attribute "a" of it.
 * With `leave_open`, nothing is closed. */
static void
child_create(int leave_open)
{
    hid_t   fapl = h5t_zarr_fapl(3), f, t = obs_type(), sp, d, a;
    hsize_t n    = 3;
    obs     v[3] = {{1, 10.5}, {2, -3.25}, {3, 0.125}};
    CHECK(fapl >= 0);
    CHECK((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    CHECK(H5Tcommit2(f, "obs_t", t, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    sp = H5Screate_simple(1, &n, NULL);
    CHECK((d = H5Dcreate2(f, "d", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    CHECK(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    CHECK((a = H5Acreate2(f, "a", t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    CHECK(H5Awrite(a, t, v) >= 0);
    if (leave_open)
        exit(0); /* HDF5's atexit handler closes everything */
    CHECK(H5Aclose(a) >= 0 && H5Dclose(d) >= 0 && H5Sclose(sp) >= 0 && H5Tclose(t) >= 0);
    CHECK(H5Fclose(f) >= 0 && H5Pclose(fapl) >= 0);
    exit(0);
}

/* Reopens the store, reads d and a back through the committed type, leaves every id open and exits;
 * with `call_close`, H5close() first. */
static void
child_reopen(int call_close)
{
    hid_t fapl = h5t_zarr_fapl(3), f, t, d, dt, a, at;
    obs   r[3] = {{0}};
    CHECK(fapl >= 0);
    CHECK((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    CHECK((t = H5Topen2(f, "obs_t", H5P_DEFAULT)) >= 0);
    CHECK(H5Tcommitted(t) > 0 && H5Tget_class(t) == H5T_COMPOUND && H5Tget_nmembers(t) == 2);
    CHECK((d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0);
    CHECK((dt = H5Dget_type(d)) >= 0 && H5Tcommitted(dt) > 0);
    CHECK(H5Dread(d, dt, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    CHECK(r[0].day == 1 && r[0].temp == 10.5 && r[1].day == 2 && r[1].temp == -3.25 && r[2].day == 3 &&
          r[2].temp == 0.125);
    memset(r, 0, sizeof r);
    CHECK((a = H5Aopen(f, "a", H5P_DEFAULT)) >= 0);
    CHECK((at = H5Aget_type(a)) >= 0);
    CHECK(H5Aread(a, at, r) >= 0);
    CHECK(r[2].day == 3 && r[2].temp == 0.125);
    if (call_close)
        CHECK(H5close() >= 0);
    exit(0);
}

/* Runs fn(arg) in a child; the child's exit status (a signal: 128 + its number). */
static int
in_child(void (*fn)(int), int arg)
{
    int   status;
    pid_t p;
    fflush(NULL);
    if ((p = fork()) == 0) {
        fn(arg);
        _exit(2);
    }
    if (p < 0 || waitpid(p, &status, 0) != p)
        return -1;
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static int
test_setup(void)
{
    snprintf(dir, sizeof dir, "%s", test_tmpdir("exit_open"));
    ASSERT(dir[0]);
    snprintf(store, sizeof store, "%s/s.zarr", dir);
    ASSERT_EQ_INT(in_child(child_create, 0), 0);
    ASSERT(h5t_is_zarr_store(store));
    return 0;
}

/* The tst_special_atts case: reopened, committed type and its users left open at exit. */
static int
test_reopen_exit(void)
{
    ASSERT_EQ_INT(in_child(child_reopen, 0), 0);
    return 0;
}

static int
test_reopen_h5close(void)
{
    ASSERT_EQ_INT(in_child(child_reopen, 1), 0);
    return 0;
}

/* Made in this run and left open: exit writes the store and closes the ids; it then reads back. */
static int
test_create_exit(void)
{
    snprintf(store, sizeof store, "%s/open.zarr", dir);
    ASSERT_EQ_INT(in_child(child_create, 1), 0);
    ASSERT_EQ_INT(in_child(child_reopen, 0), 0);
    return 0;
}

static const test_entry tests[] = {TEST_ENTRY(setup), TEST_ENTRY(reopen_exit), TEST_ENTRY(reopen_h5close),
                                   TEST_ENTRY(create_exit)};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
