/*
 * test_flush_pool.c: H5Fflush/H5Fclose write the documents of every dirty node as one job over the
 * file's engine pool (vol/flush.c, h5zv_file_flush). As a test: a flush of many dirty nodes through a
 * pool of 3 threads writes every document right (read back by the core and, when /usr/bin/python3 has
 * zarr, by zarr-python); a node whose document can't be written fails the flush with an error naming
 * it while every other node is written, and it stays dirty, so the close that follows (the obstacle
 * gone) writes it.
 */
#include "runner.h"

#include "h5test.h"

#include <hdf5.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5zarr/h5zarr.h"
#include "h5zarr/zarr.h"

#define NG 16 /* groups */
#define ND 8  /* datasets per group */
#define NA 4  /* int32 attributes per node */

/* The value of attribute a<k> of group g (dataset -1) or of its dataset d. */
static int
attr_value(int g, int d, int k)
{
    return 100000 * (g + 1) + 1000 * (d + 1) + k;
}

static int
add_attrs(hid_t obj, int g, int d)
{
    hid_t sp  = H5Screate(H5S_SCALAR);
    int   ret = 0;
    for (int k = 0; k < NA && ret == 0; k++) {
        char  name[16];
        int   v = attr_value(g, d, k);
        hid_t a;
        snprintf(name, sizeof name, "a%d", k);
        a = H5Acreate2(obj, name, H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
        if (a < 0 || H5Awrite(a, H5T_NATIVE_INT, &v) < 0)
            ret = -1;
        if (a >= 0)
            H5Aclose(a);
    }
    H5Sclose(sp);
    return ret;
}

/* NG groups g<i>, each with NA attributes and ND scalar-ish datasets d<j> with NA attributes each. */
static int
make_tree(hid_t f)
{
    hsize_t dims[1] = {4};
    hid_t   sp      = H5Screate_simple(1, dims, NULL);
    int     ret     = 0;
    for (int g = 0; g < NG && ret == 0; g++) {
        char  name[32];
        hid_t gr;
        snprintf(name, sizeof name, "g%d", g);
        if ((gr = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 || add_attrs(gr, g, -1) < 0)
            ret = -1;
        for (int d = 0; d < ND && ret == 0; d++) {
            hid_t ds;
            snprintf(name, sizeof name, "d%d", d);
            ds = H5Dcreate2(gr, name, H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            if (ds < 0 || add_attrs(ds, g, d) < 0)
                ret = -1;
            if (ds >= 0)
                H5Dclose(ds);
        }
        if (gr >= 0)
            H5Gclose(gr);
    }
    H5Sclose(sp);
    return ret;
}

/* 1 if the attributes `attrs` hold a<k> = attr_value(g, d, k) for every k, else 0. */
static int
attrs_right(struct json_object *attrs, int g, int d)
{
    for (int k = 0; k < NA; k++) {
        char                name[16];
        struct json_object *v = NULL;
        snprintf(name, sizeof name, "a%d", k);
        if (!json_object_object_get_ex(attrs, name, &v) || !json_object_is_type(v, json_type_int) ||
            json_object_get_int64(v) != attr_value(g, d, k)) {
            fprintf(stderr, "  node g%d/d%d: attribute %s is %s\n", g, d, name,
                    v ? json_object_to_json_string(v) : "missing");
            return 0;
        }
    }
    return 1;
}

/* Checks through the core every node's attributes in the store `dir`, but for group `skip_g` (-1:
 * none), whose .zattrs is blocked. 0 when all are right. */
static int
check_store(const char *dir, int skip_g)
{
    zarr_store *s   = NULL;
    int         bad = 0;
    if (zarr_store_open_dir(dir, ZARR_STORE_RDONLY, &s) != ZARR_OK)
        return -1;
    for (int g = 0; g < NG; g++) {
        char             path[64];
        zarr_group_meta *gm = NULL;
        snprintf(path, sizeof path, "g%d", g);
        if (g == skip_g) /* its .zattrs is the obstacle (a directory): not readable */
            ;
        else if (zarr_group_read(s, path, &gm) != ZARR_OK) {
            fprintf(stderr, "  group %s: %s\n", path, zarr_errmsg());
            bad++;
        }
        else if (!attrs_right(gm->attributes, g, -1))
            bad++;
        zarr_group_meta_free(gm);
        for (int d = 0; d < ND; d++) {
            zarr_array *a = NULL;
            snprintf(path, sizeof path, "g%d/d%d", g, d);
            if (zarr_array_open(s, path, &a) != ZARR_OK) {
                fprintf(stderr, "  array %s: %s\n", path, zarr_errmsg());
                bad++;
            }
            else if (!attrs_right(zarr_array_meta_get(a)->attributes, g, d))
                bad++;
            zarr_array_close(a);
        }
    }
    zarr_store_close(s);
    return bad ? -1 : 0;
}

/* zarr-python 2.13 (Debian's /usr/bin/python3) reads every attribute: 0 right, 1 wrong, 77 no zarr. */
static int
check_zarr_python(const char *dir)
{
    char cmd[8192];
    int  st;
    if (access("/usr/bin/python3", X_OK) != 0)
        return TEST_SKIP;
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 - '%s' %d %d %d <<'EOF'\n"
             "import sys\n"
             "try:\n"
             "    import zarr\n"
             "except ImportError:\n"
             "    sys.exit(77)\n"
             "root = zarr.open_group(sys.argv[1], mode='r')\n"
             "ng, nd, na = map(int, sys.argv[2:5])\n"
             "val = lambda g, d, k: 100000 * (g + 1) + 1000 * (d + 1) + k\n"
             "bad = 0\n"
             "for g in range(ng):\n"
             "    grp = root['g%%d' %% g]\n"
             "    bad += sum(grp.attrs['a%%d' %% k] != val(g, -1, k) for k in range(na))\n"
             "    for d in range(nd):\n"
             "        arr = grp['d%%d' %% d]\n"
             "        bad += sum(arr.attrs['a%%d' %% k] != val(g, d, k) for k in range(na))\n"
             "sys.exit(1 if bad else 0)\n"
             "EOF\n",
             dir, NG, ND, NA);
    st = system(cmd);
    if (st == -1 || !WIFEXITED(st))
        return 1;
    return WEXITSTATUS(st);
}

/* Many dirty nodes (NG groups and NG*ND datasets, every one dirty at the close) through a pool of 3
 * (the caller and two workers: more tasks than the flush runs inline): all documents right. */
static int
test_many_dirty_nodes_through_the_pool(void)
{
    const char *tmp = test_tmpdir("flushpool");
    char        dir[4096];
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f;
    int         py;

    ASSERT(tmp);
    for (int v = 2; v <= 3; v++) {
        snprintf(dir, sizeof dir, "%s/many-v%d.zarr", tmp, v);
        ASSERT(H5Pset_fapl_zarr_opts(fapl, v, "threads=3") >= 0);
        ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
        ASSERT(make_tree(f) == 0);
        ASSERT(H5Fclose(f) >= 0);
        ASSERT(h5t_is_zarr_store(dir));
        ASSERT(check_store(dir, -1) == 0);
        if (v == 3)
            continue; /* zarr-python 2.13 reads v2 only */
        py = check_zarr_python(dir);
        if (py == TEST_SKIP)
            fprintf(stderr, "  (zarr-python not available: not checked with it)\n");
        else
            ASSERT_EQ_INT(py, 0);
    }
    H5Pclose(fapl);
    return 0;
}

/* A node whose .zattrs can't be written (a directory sits at its key: the rename of the written value
 * over it fails, whoever runs the test): H5Fflush fails naming that node, every other node is
 * written, and the node stays dirty, so H5Fclose after the obstacle is gone writes it too. The groups
 * are deferred creates (vol/node.c): nothing of /g5 is in the store before the flush, so the obstacle
 * is made in a directory of that name made for it. */
static int
test_one_failing_node(void)
{
    const char *tmp = test_tmpdir("flushfail");
    char        dir[4096], block[4096], inner[4200], msgs[4096] = "";
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f;
    herr_t      e;
    FILE       *fp;

    ASSERT(tmp);
    snprintf(dir, sizeof dir, "%s/fail.zarr", tmp);
    ASSERT(H5Pset_fapl_zarr_opts(fapl, 2, "threads=2") >= 0);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(make_tree(f) == 0);
    ASSERT(!h5t_path_exists(dir, "g5")); /* deferred: written at the flush */
    snprintf(block, sizeof block, "%s/g5", dir);
    ASSERT(mkdir(block, 0755) == 0);
    snprintf(block, sizeof block, "%s/g5/.zattrs", dir);
    snprintf(inner, sizeof inner, "%s/x", block);
    ASSERT(mkdir(block, 0755) == 0);
    ASSERT((fp = fopen(inner, "w")) != NULL);
    fclose(fp);

    H5E_BEGIN_TRY { e = H5Fflush(f, H5F_SCOPE_GLOBAL); }
    H5E_END_TRY
    ASSERT(e < 0);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msgs);
    if (!strstr(msgs, "can't write metadata of '/g5'"))
        FAILF("the error doesn't name /g5: %s", msgs);
    ASSERT(!strstr(msgs, "'/g4'") && !strstr(msgs, "'/g5/d"));
    ASSERT(check_store(dir, 5) == 0); /* every other node written */

    ASSERT(unlink(inner) == 0 && rmdir(block) == 0);
    ASSERT(H5Fclose(f) >= 0); /* /g5 still dirty: written now */
    ASSERT(h5t_path_exists(dir, "g5/.zattrs"));
    ASSERT(check_store(dir, -1) == 0);
    H5Pclose(fapl);
    return 0;
}

int
main(int argc, char **argv)
{
    static const test_entry tests[] = {TEST_ENTRY(many_dirty_nodes_through_the_pool),
                                       TEST_ENTRY(one_failing_node)};
    return RUN_TESTS(tests);
}
