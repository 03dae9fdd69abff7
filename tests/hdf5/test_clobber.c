/*
 * test_clobber.c: H5Fcreate with H5F_ACC_TRUNC over an existing store (netCDF's nc_create(NC_CLOBBER)).
 * The old content leaves with one exchange of directories and is deleted off the caller's thread
 * (zarr_store_clear, docs/FORMAT.md "Trash"): the new store is empty and readable at once, the old
 * content unreachable, and no trash is left once HDF5 terminates the connector (H5close) or the process
 * exits. A store still open is not truncated ("the store is open"), and a regular file at the name is
 * replaced by a store, as before.
 */
#include "runner.h"

#include <dirent.h>
#include <hdf5.h>
#include <sys/wait.h>

#include "h5test.h"

/* A store at `path` with `n` chunked int datasets "v<i>" of 8 values (i*10 + j), two chunks each. */
static int
make_store(const char *path, hid_t fapl, int n)
{
    hid_t   f, s, p, d;
    hsize_t dims[1] = {8}, chunk[1] = {4};
    int     vals[8];
    char    name[32];
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((s = H5Screate_simple(1, dims, NULL)) >= 0);
    ASSERT((p = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_chunk(p, 1, chunk) >= 0);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < 8; j++)
            vals[j] = i * 10 + j;
        snprintf(name, sizeof name, "v%d", i);
        ASSERT((d = H5Dcreate2(f, name, H5T_NATIVE_INT, s, H5P_DEFAULT, p, H5P_DEFAULT)) >= 0);
        ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, vals) >= 0);
        H5Dclose(d);
    }
    H5Pclose(p);
    H5Sclose(s);
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

/* Reads dataset `name` of the store at `path`: its 8 values into `out`. */
static int
read_vals(const char *path, hid_t fapl, const char *name, int *out, hsize_t *nlinks)
{
    hid_t      f, d;
    H5G_info_t gi;
    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(H5Gget_info(f, &gi) >= 0);
    *nlinks = gi.nlinks;
    if (name) {
        ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
        ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
        H5Dclose(d);
    }
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

/* Truncates a store of 136 datasets (as nc_test's scratch file holds): empty at once, the new content
 * reads back, and after H5close no trash is left beside it. */
static int
truncate_many(int version)
{
    const char *tmp = test_tmpdir("clobber_many");
    char        path[4096];
    hid_t       fapl = h5t_zarr_fapl(version), f;
    hsize_t     nl   = 99;
    int         got[8];
    H5G_info_t  gi;

    ASSERT(tmp && fapl >= 0);
    snprintf(path, sizeof path, "%s/many_v%d.zarr", tmp, version);
    if (make_store(path, fapl, 136) || read_vals(path, fapl, "v135", got, &nl))
        return 1;
    ASSERT_EQ_INT(nl, 136);
    ASSERT_EQ_INT(got[7], 1357);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(H5Gget_info(f, &gi) >= 0);
    ASSERT_EQ_INT(gi.nlinks, 0);
    ASSERT(H5Lexists(f, "v135", H5P_DEFAULT) == 0);
    ASSERT(h5t_is_zarr_store(path));
    ASSERT(!h5t_path_exists(path, "v0"));
    ASSERT(H5Fclose(f) >= 0);
    if (make_store(path, fapl, 2) || read_vals(path, fapl, "v1", got, &nl))
        return 1;
    ASSERT_EQ_INT(nl, 2);
    ASSERT_EQ_INT(got[0], 10);
    ASSERT_EQ_INT(got[7], 17);
    H5Pclose(fapl);
    H5close(); /* terminates the connector: the trash thread is drained and joined */
    ASSERT_EQ_INT(test_dir_count(tmp, ".h5zarr-trash."), 0);
    fapl = h5t_zarr_fapl(version);
    if (read_vals(path, fapl, "v1", got, &nl))
        return 1;
    ASSERT_EQ_INT(nl, 2);
    ASSERT_EQ_INT(got[3], 13);
    H5Pclose(fapl);
    return 0;
}

static int
test_truncate_many_v3(void)
{
    return truncate_many(3);
}

static int
test_truncate_many_v2(void)
{
    return truncate_many(2);
}

/* A process that truncates and exits without H5close: HDF5's exit handler terminates the connector,
 * which waits for the deletion; nothing is left. */
static int
test_truncate_then_exit(void)
{
    const char *tmp = test_tmpdir("clobber_exit");
    char        path[4096];
    hid_t       fapl = h5t_zarr_fapl(3);
    hsize_t     nl   = 99;
    int         got[8], st = 0;
    pid_t       pid;

    ASSERT(tmp && fapl >= 0);
    snprintf(path, sizeof path, "%s/exit.zarr", tmp);
    if (make_store(path, fapl, 40))
        return 1;
    fflush(NULL);
    if ((pid = fork()) == 0) {
        hid_t fa = h5t_zarr_fapl(3), f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fa);
        if (f < 0 || H5Fclose(f) < 0 || make_store(path, fa, 1))
            _exit(2);
        exit(0); /* atexit: H5close, the connector's termination */
    }
    ASSERT(pid > 0 && waitpid(pid, &st, 0) == pid);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ASSERT_EQ_INT(test_dir_count(tmp, ".h5zarr-trash."), 0);
    if (read_vals(path, fapl, "v0", got, &nl))
        return 1;
    ASSERT_EQ_INT(nl, 1);
    ASSERT_EQ_INT(got[5], 5);
    H5Pclose(fapl);
    return 0;
}

/* A store open in this process is not truncated; nothing moves. A regular file at the name becomes a
 * store. */
static int
test_truncate_refused_and_file(void)
{
    const char *tmp = test_tmpdir("clobber_open");
    char        path[4096], file[4096], buf[4096] = "";
    hid_t       fapl = h5t_zarr_fapl(3), f, g, d;
    int         got[8];
    FILE       *fp;

    ASSERT(tmp && fapl >= 0);
    snprintf(path, sizeof path, "%s/open.zarr", tmp);
    if (make_store(path, fapl, 3))
        return 1;
    ASSERT((f = H5Fopen(path, H5F_ACC_RDWR, fapl)) >= 0);
    H5E_BEGIN_TRY { g = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl); }
    H5E_END_TRY
    ASSERT(g < 0);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, buf);
    ASSERT(strstr(buf, "the store is open") != NULL);
    ASSERT_EQ_INT(test_dir_count(tmp, ".h5zarr-trash."), 0);
    ASSERT((d = H5Dopen2(f, "v2", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    ASSERT_EQ_INT(got[6], 26);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    /* a regular file under the name */
    snprintf(file, sizeof file, "%s/plain.zarr", tmp);
    ASSERT((fp = fopen(file, "w")) != NULL);
    fputs("not a store\n", fp);
    fclose(fp);
    ASSERT((f = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(h5t_is_zarr_store(file));
    ASSERT_EQ_INT(test_dir_count(tmp, ".h5zarr-trash."), 0);
    H5Pclose(fapl);
    return 0;
}

int
main(int argc, char **argv)
{
    static const test_entry tests[] = {TEST_ENTRY(truncate_many_v3), TEST_ENTRY(truncate_many_v2),
                                       TEST_ENTRY(truncate_then_exit), TEST_ENTRY(truncate_refused_and_file)};
    return RUN_TESTS(tests);
}
