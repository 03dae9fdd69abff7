/*
 * h5zarr_scale.c: the metadata scale rows of issue 13 (bench/README.md "Metadata at scale"), also used by
 * tests/scripts/scale_meta.sh to build its stores. One invocation = one step, timed, printed as the
 * suite's rows ("R\t<workload>\t<variant>\t<impl>\t<op>\t<seconds>", parsed by bench/run.py):
 *
 *   h5zarr_scale members <path> <n> vol|hdf5 [zarr version]
 *       a group /big with n members m00000.. (every 10th a group, the others scalar int32 datasets
 *       holding their number), through the connector (H5Pset_fapl_zarr) or native HDF5; op "create"
 *   h5zarr_scale arrays <path> <groups> <per group> vol|hdf5 [zarr version]
 *       groups g000.. of datasets a000.. (int32, 4 elements, one chunk, one attribute), through the
 *       connector with consolidated metadata written at close (consolidated=1) or native HDF5
 *   h5zarr_scale visit <path> vol|hdf5 <datasets>
 *       H5Fopen read-only, H5Ovisit3 of everything, H5Dopen + H5Dclose of every dataset; checks the count
 *   h5zarr_scale floor <path>
 *       W4's structure as plain files, the least a directory store can do for it: per group mkdir +
 *       .zgroup + .zattrs, per dataset mkdir + .zarray + .zattrs (documents of the sizes the connector
 *       writes), each an unnamed O_TMPFILE linked under its name (what the directory store's atomic
 *       writes of new keys do); row W4 100g-x-10d-x-10a floor-link create
 *   h5zarr_scale floor-members <path> <n>
 *   h5zarr_scale floor-arrays <path> <groups> <per group>
 *       the same least work for the two scale stores above as the connector lays them out in zarr v3:
 *       per member or dataset a directory and its zarr.json (and a dataset's chunk; the arrays' chunks
 *       in a c/ directory), each group's document, and the one large document written once at close
 *       (the members' link order in /big; the consolidated metadata in the root), sizes as the connector
 *       writes them, and the root's document written at create and replaced at close (linked under a
 *       temporary name, renamed over it) as the connector does; rows "<n>-members" /
 *       "<N>-arrays-consolidated" floor-link create
 *
 * Who owns what: everything here is the program's own; HDF5 ids are closed before each step ends.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_TMPFILE, AT_EMPTY_PATH */
#endif

#include <hdf5.h>

#include "h5zarr/h5zarr.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHECK(cond, what)                                                                                    \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "h5zarr_scale: %s failed\n", what);                                              \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static double
now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void
row(const char *variant, const char *impl, const char *op, double t)
{
    printf("R\tW4\t%s\t%s\t%s\t%.9f\n", variant, impl, op, t);
    fflush(stdout);
}

/* The connector (zarr `version`, info options) or native HDF5. */
static hid_t
fapl_of(const char *impl, int version, const char *opts)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    CHECK(fapl >= 0, "H5Pcreate");
    if (strcmp(impl, "vol") == 0)
        CHECK(H5Pset_fapl_zarr_opts(fapl, version, opts) >= 0,
              "H5Pset_fapl_zarr_opts (is HDF5_PLUGIN_PATH set to the plugin folder?)");
    else
        CHECK(strcmp(impl, "hdf5") == 0, "implementation vol|hdf5");
    return fapl;
}

static void
run_members(const char *path, int n, const char *impl, int version)
{
    hid_t  fapl = fapl_of(impl, version, NULL), f, big, sc;
    char   name[32], variant[32];
    double t0 = now();

    f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f >= 0, "create");
    big = H5Gcreate2(f, "big", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(big >= 0, "group big");
    sc = H5Screate(H5S_SCALAR);
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "m%05d", i);
        if (i % 10 == 0) {
            hid_t g = H5Gcreate2(big, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            CHECK(g >= 0, "member group");
            H5Gclose(g);
        }
        else {
            hid_t d = H5Dcreate2(big, name, H5T_STD_I32LE, sc, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            CHECK(d >= 0 && H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &i) >= 0,
                  "member dataset");
            H5Dclose(d);
        }
    }
    H5Sclose(sc);
    H5Gclose(big);
    CHECK(H5Fclose(f) >= 0, "close");
    snprintf(variant, sizeof variant, "%d-members", n);
    row(variant, impl, "create", now() - t0);
    H5Pclose(fapl);
}

static void
run_arrays(const char *path, int ngroups, int per, const char *impl, int version)
{
    hid_t   fapl    = fapl_of(impl, version, "consolidated=1"), f, sp, sc, dcpl;
    hsize_t dims[1] = {4};
    char    name[32], variant[48];
    double  t0 = now();

    f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f >= 0, "create");
    sp   = H5Screate_simple(1, dims, NULL);
    sc   = H5Screate(H5S_SCALAR);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(dcpl >= 0 && H5Pset_chunk(dcpl, 1, dims) >= 0, "dcpl");
    for (int g = 0; g < ngroups; g++) {
        hid_t gid;
        snprintf(name, sizeof name, "g%03d", g);
        gid = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(gid >= 0, "group");
        for (int k = 0; k < per; k++) {
            int   v[4] = {g, k, g * per + k, -1}, at = g * per + k;
            hid_t d, a;
            snprintf(name, sizeof name, "a%03d", k);
            d = H5Dcreate2(gid, name, H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
            CHECK(d >= 0 && H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0, "dataset");
            a = H5Acreate2(d, "n", H5T_STD_I32LE, sc, H5P_DEFAULT, H5P_DEFAULT);
            CHECK(a >= 0 && H5Awrite(a, H5T_NATIVE_INT, &at) >= 0, "attribute");
            H5Aclose(a);
            H5Dclose(d);
        }
        H5Gclose(gid);
    }
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Sclose(sc);
    CHECK(H5Fclose(f) >= 0, "close");
    snprintf(variant, sizeof variant, "%d-arrays-consolidated", ngroups * per);
    row(variant, impl, "create", now() - t0);
    H5Pclose(fapl);
}

typedef struct visit_acc {
    long objects, datasets;
} visit_acc;

static herr_t
visit_cb(hid_t root, const char *name, const H5O_info2_t *info, void *ud)
{
    visit_acc *acc = ud;
    acc->objects++;
    if (info->type == H5O_TYPE_DATASET) {
        hid_t d = H5Dopen2(root, name, H5P_DEFAULT);
        if (d < 0)
            return -1;
        H5Dclose(d);
        acc->datasets++;
    }
    return 0;
}

static void
run_visit(const char *path, const char *impl, long expect)
{
    hid_t     fapl = fapl_of(impl, 3, NULL), f;
    visit_acc acc  = {0, 0};
    char      variant[48];
    double    t0 = now();

    f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    CHECK(f >= 0, "open");
    CHECK(H5Ovisit3(f, H5_INDEX_NAME, H5_ITER_NATIVE, visit_cb, &acc, H5O_INFO_BASIC) >= 0, "visit");
    CHECK(H5Fclose(f) >= 0, "close");
    snprintf(variant, sizeof variant, "%ld-arrays-consolidated", expect);
    row(variant, impl, "open-visit", now() - t0);
    if (acc.datasets != expect) {
        fprintf(stderr, "h5zarr_scale: visited %ld datasets (%ld objects), expected %ld\n", acc.datasets,
                acc.objects, expect);
        exit(1);
    }
    H5Pclose(fapl);
}

/* One new file `name` in directory `dir` holding n bytes, written unnamed and linked (atomic). */
static void
put(const char *dir, const char *name, const char *doc, size_t n)
{
    char p[4096];
    int  fd = open(dir, O_WRONLY | O_TMPFILE | O_CLOEXEC, 0666);
    CHECK(fd >= 0, "O_TMPFILE");
    CHECK(write(fd, doc, n) == (ssize_t)n, "write");
    snprintf(p, sizeof p, "%s/%s", dir, name);
    CHECK(linkat(fd, "", AT_FDCWD, p, AT_EMPTY_PATH) == 0, "linkat");
    close(fd);
}

/* Replaces file `name` in directory `dir` with n bytes, atomically: an unnamed file linked under a
 * temporary name and renamed over it (what the directory store does when the key exists). */
static void
replace(const char *dir, const char *name, const char *doc, size_t n)
{
    char p[4096], t[4096];
    int  fd = open(dir, O_WRONLY | O_TMPFILE | O_CLOEXEC, 0666);
    CHECK(fd >= 0, "O_TMPFILE");
    CHECK(write(fd, doc, n) == (ssize_t)n, "write");
    snprintf(p, sizeof p, "%s/%s", dir, name);
    snprintf(t, sizeof t, "%s/.h5zarr-tmp.%d.1", dir, (int)getpid());
    CHECK(linkat(fd, "", AT_FDCWD, p, AT_EMPTY_PATH) != 0 && errno == EEXIST, "linkat over an existing file");
    CHECK(linkat(fd, "", AT_FDCWD, t, AT_EMPTY_PATH) == 0, "linkat");
    CHECK(rename(t, p) == 0, "rename");
    close(fd);
}

/* Makes the parents of `root` (untimed: the workload's scratch may not exist yet). */
static void
make_parents(const char *root)
{
    char g[4096];
    snprintf(g, sizeof g, "%s", root);
    for (char *q = g + 1; *q; q++)
        if (*q == '/') {
            *q = '\0';
            (void)mkdir(g, 0777);
            *q = '/';
        }
}

static void
run_floor(const char *root)
{
    /* what the connector's W4 documents weigh (v2): .zgroup 22 B, the root's .zattrs ~3 KB and a
     * group's ~530 B (link order), .zarray 200 B, a dataset's .zattrs (10 attributes, their records)
     * ~630 B */
    static char doc[4096];
    char        g[4096], d[4096];
    double      t0;
    memset(doc, ' ', sizeof doc);
    make_parents(root);
    t0 = now();
    CHECK(mkdir(root, 0777) == 0 || errno == EEXIST, "mkdir");
    put(root, ".zgroup", doc, 22);
    put(root, ".zattrs", doc, 3078);
    for (int i = 0; i < 100; i++) {
        snprintf(g, sizeof g, "%s/g%02d", root, i);
        CHECK(mkdir(g, 0777) == 0, "mkdir group");
        put(g, ".zgroup", doc, 22);
        put(g, ".zattrs", doc, 525);
        for (int k = 0; k < 10; k++) {
            snprintf(d, sizeof d, "%s/d%d", g, k);
            CHECK(mkdir(d, 0777) == 0, "mkdir dataset");
            put(d, ".zarray", doc, 200);
            put(d, ".zattrs", doc, 629);
        }
    }
    row("100g-x-10d-x-10a", "floor-link", "create", now() - t0);
}

/* Document sizes the connector writes for these stores (zarr v3; measured on stores of 30 to 10,000
 * members, tests/scripts/create_syscalls.sh checks them): a member group 131 B, a scalar int32 dataset
 * 543 B + its 4-byte chunk, /big's link order ~38 B a member, the root 209 B; an arrays group ~32 B a
 * member (its link order) + 188 B, a dataset 642 B + the digits of its attribute's value + a 16-byte
 * chunk, the consolidated root ~972 B an array. */
static void
run_floor_members(const char *root, int n)
{
    size_t big = (size_t)n * 38 + 200;
    char  *doc = malloc(big);
    char   p[4096], m[4096];
    double t0;
    CHECK(doc, "malloc");
    memset(doc, ' ', big);
    make_parents(root);
    t0 = now();
    CHECK(mkdir(root, 0777) == 0, "mkdir");
    put(root, "zarr.json", doc, 209);
    snprintf(p, sizeof p, "%s/big", root);
    CHECK(mkdir(p, 0777) == 0, "mkdir big");
    for (int i = 0; i < n; i++) {
        snprintf(m, sizeof m, "%s/m%05d", p, i);
        CHECK(mkdir(m, 0777) == 0, "mkdir member");
        put(m, "zarr.json", doc, i % 10 == 0 ? 131 : 543);
        if (i % 10)
            put(m, "c", doc, 4);
    }
    put(p, "zarr.json", doc, big);
    replace(root, "zarr.json", doc, 209); /* the root again at close: its link record of /big */
    snprintf(m, sizeof m, "%d-members", n);
    row(m, "floor-link", "create", now() - t0);
    free(doc);
}

static void
run_floor_arrays(const char *root, int ngroups, int per)
{
    size_t cons = (size_t)ngroups * (size_t)per * 972 + 1300, gdoc = (size_t)per * 32 + 188;
    char  *doc = malloc(cons);
    char   g[4096], a[4096], c[4200];
    double t0;
    CHECK(doc && gdoc <= cons, "malloc");
    memset(doc, ' ', cons);
    make_parents(root);
    t0 = now();
    CHECK(mkdir(root, 0777) == 0, "mkdir");
    put(root, "zarr.json", doc, 209); /* the root at create (a store that opens if the program dies) */
    for (int i = 0; i < ngroups; i++) {
        snprintf(g, sizeof g, "%s/g%03d", root, i);
        CHECK(mkdir(g, 0777) == 0, "mkdir group");
        put(g, "zarr.json", doc, gdoc);
        for (int k = 0; k < per; k++) {
            int at = i * per + k, digits = 1;
            while (at >= 10)
                at /= 10, digits++;
            snprintf(a, sizeof a, "%s/a%03d", g, k);
            CHECK(mkdir(a, 0777) == 0, "mkdir dataset");
            put(a, "zarr.json", doc, 642 + (size_t)digits);
            snprintf(c, sizeof c, "%s/c", a);
            CHECK(mkdir(c, 0777) == 0, "mkdir chunks");
            put(c, "0", doc, 16);
        }
    }
    replace(root, "zarr.json", doc, cons);
    snprintf(a, sizeof a, "%d-arrays-consolidated", ngroups * per);
    row(a, "floor-link", "create", now() - t0);
    free(doc);
}

int
main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "members") == 0)
        run_members(argv[2], atoi(argv[3]), argv[4], argc > 5 ? atoi(argv[5]) : 3);
    else if (argc >= 6 && strcmp(argv[1], "arrays") == 0)
        run_arrays(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5], argc > 6 ? atoi(argv[6]) : 3);
    else if (argc == 5 && strcmp(argv[1], "visit") == 0)
        run_visit(argv[2], argv[3], atol(argv[4]));
    else if (argc == 3 && strcmp(argv[1], "floor") == 0)
        run_floor(argv[2]);
    else if (argc == 4 && strcmp(argv[1], "floor-members") == 0)
        run_floor_members(argv[2], atoi(argv[3]));
    else if (argc == 5 && strcmp(argv[1], "floor-arrays") == 0)
        run_floor_arrays(argv[2], atoi(argv[3]), atoi(argv[4]));
    else {
        fprintf(stderr, "usage: h5zarr_scale members <path> <n> vol|hdf5 [version] | arrays <path> <groups> "
                        "<per group> vol|hdf5 [version] | visit <path> vol|hdf5 <datasets> | floor <path> | "
                        "floor-members <path> <n> | floor-arrays <path> <groups> <per group>\n");
        return 2;
    }
    return 0;
}
