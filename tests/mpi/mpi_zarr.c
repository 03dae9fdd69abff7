/*
 * mpi_zarr.c: the MPI tests' program (tests/mpi/mpi_zarr.sh runs it under mpirun -np 4, then once
 * without MPI to verify). Modes:
 *   write LAYOUT XFER STORE   (under mpirun) every rank opens STORE with H5Pset_fapl_mpio + the zarr
 *       connector (options from $H5ZARR_MPI_OPTS); collectively: H5Fcreate, H5Gcreate /g, H5Dcreate /d
 * (int32, 40 x 36, unlimited rows), an attribute; each rank writes its block of a 2 x 2 decomposition (20 x
 * 18 elements); then H5Dset_extent to 50 rows and each rank writes its quarter of the new rows (10 x 9);
 * closes. LAYOUT: aligned (chunks 10 x 9: every chunk is one rank's), unaligned (chunks 7 x 8: chunks shared
 * by 2 or 4 ranks), sharded (inner chunks 5 x 6 in shards 10 x 12, H5Pset_zarr_shard: shards shared). XFER:
 * coll or indep (H5Pset_dxpl_mpio). verify LAYOUT STORE       (one process, no MPI) reads STORE back through
 * the connector: every value (i * 1000 + j + 1), the shape, the attribute, the group, the chunk/shard layout
 * in zarr.json. error STORE               (under mpirun) a collective H5Dwrite in which rank 2 alone fails (a
 * memory type that can't convert), then an H5Gcreate that fails on rank 1 alone (its name is taken): every
 * rank must see both calls fail (not hang), and the others' error stacks must name the failing rank. Exit 0
 * when every check held (each rank checks its own part); messages on stderr prefixed by the rank.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "h5zarr/h5zarr.h"

#define ROWS  40
#define XROWS 50
#define COLS  36

static int rank = 0, nranks = 1;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__);                              \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fprintf(stderr, "\n");                                                                           \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

static int
value(hsize_t i, hsize_t j)
{
    return (int)(i * 1000 + j + 1);
}

/* Writes box (r0, c0, nr, nc) of /d with the test's values. */
static int
write_box(hid_t d, hid_t dxpl, hsize_t r0, hsize_t c0, hsize_t nr, hsize_t nc)
{
    hsize_t start[2] = {r0, c0}, count[2] = {nr, nc};
    int    *buf = malloc(nr * nc * sizeof *buf);
    hid_t   fs = H5Dget_space(d), ms = H5Screate_simple(2, count, NULL);
    herr_t  rc;
    for (hsize_t i = 0; i < nr; i++)
        for (hsize_t j = 0; j < nc; j++)
            buf[i * nc + j] = value(r0 + i, c0 + j);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    rc = H5Dwrite(d, H5T_NATIVE_INT, ms, fs, dxpl, buf);
    H5Sclose(fs);
    H5Sclose(ms);
    free(buf);
    return rc < 0 ? -1 : 0;
}

/* MPI-IO + the zarr connector (v3; connector options from $H5ZARR_MPI_OPTS, e.g. "durable=1") */
static hid_t
mpi_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) < 0 ||
        H5Pset_fapl_zarr_opts(fapl, 3, getenv("H5ZARR_MPI_OPTS")) < 0)
        return H5I_INVALID_HID;
    return fapl;
}

static int
do_write(const char *layout, const char *xfer, const char *store)
{
    hid_t   fapl    = mpi_fapl(), f, g, d, a, s, dcpl, dxpl, as;
    hsize_t dims[2] = {ROWS, COLS}, maxdims[2] = {H5S_UNLIMITED, COLS}, chunk[2], xdims[2] = {XROWS, COLS};
    int     pr = rank / 2, pc = rank % 2, n = nranks;

    CHECK(nranks == 4, "run with mpirun -np 4 (got %d ranks)", nranks);
    CHECK(fapl >= 0, "fapl");
    CHECK((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0, "H5Fcreate %s", store);
    CHECK((g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0, "H5Gcreate /g");
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (!strcmp(layout, "aligned"))
        chunk[0] = 10, chunk[1] = 9;
    else if (!strcmp(layout, "unaligned"))
        chunk[0] = 7, chunk[1] = 8;
    else
        chunk[0] = 5, chunk[1] = 6;
    H5Pset_chunk(dcpl, 2, chunk);
    if (!strcmp(layout, "sharded")) {
        hsize_t shard[2] = {10, 12};
        CHECK(H5Pset_zarr_shard(dcpl, 2, shard) >= 0, "H5Pset_zarr_shard");
    }
    s = H5Screate_simple(2, dims, maxdims);
    CHECK((d = H5Dcreate2(f, "d", H5T_STD_I32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0, "H5Dcreate /d");
    as = H5Screate(H5S_SCALAR);
    CHECK((a = H5Acreate2(d, "ranks", H5T_NATIVE_INT, as, H5P_DEFAULT, H5P_DEFAULT)) >= 0, "H5Acreate");
    CHECK(H5Awrite(a, H5T_NATIVE_INT, &n) >= 0, "H5Awrite");
    H5Aclose(a);
    dxpl = H5Pcreate(H5P_DATASET_XFER);
    CHECK(H5Pset_dxpl_mpio(dxpl, !strcmp(xfer, "coll") ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT) >= 0,
          "H5Pset_dxpl_mpio");
    /* the 2 x 2 decomposition of the first 40 rows (between markers a traced run looks for: the
     * thread name, set with prctl) */
    prctl(PR_SET_NAME, "h5zmark-begin");
    CHECK(write_box(d, dxpl, (hsize_t)pr * 20, (hsize_t)pc * 18, 20, 18) == 0, "H5Dwrite of the block");
    prctl(PR_SET_NAME, "h5zmark-end");
    /* extend (collective), then each rank a quarter of the new rows */
    CHECK(H5Dset_extent(d, xdims) >= 0, "H5Dset_extent");
    CHECK(write_box(d, dxpl, ROWS, (hsize_t)rank * 9, XROWS - ROWS, 9) == 0, "H5Dwrite of the new rows");
    /* every rank sees the new extent */
    {
        hid_t   fs = H5Dget_space(d);
        hsize_t cur[2];
        H5Sget_simple_extent_dims(fs, cur, NULL);
        H5Sclose(fs);
        CHECK(cur[0] == XROWS && cur[1] == COLS, "extent after H5Dset_extent: %llu x %llu",
              (unsigned long long)cur[0], (unsigned long long)cur[1]);
    }
    H5Pclose(dxpl);
    CHECK(H5Dclose(d) >= 0, "H5Dclose");
    H5Sclose(as);
    H5Sclose(s);
    H5Pclose(dcpl);
    H5Gclose(g);
    CHECK(H5Fclose(f) >= 0, "H5Fclose");
    H5Pclose(fapl);
    /* after the collective close, any rank reads the whole dataset back (another open, MPI-IO again) */
    if ((fapl = mpi_fapl()) >= 0 && (f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0) {
        int *buf = malloc(XROWS * COLS * sizeof *buf);
        bool ok  = (d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0 &&
                  H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0;
        for (hsize_t i = 0; ok && i < XROWS; i++)
            for (hsize_t j = 0; ok && j < COLS; j++)
                if (buf[i * COLS + j] != value(i, j)) {
                    fprintf(stderr, "rank %d: FAIL reread (%llu, %llu) = %d, want %d\n", rank,
                            (unsigned long long)i, (unsigned long long)j, buf[i * COLS + j], value(i, j));
                    ok = false;
                }
        free(buf);
        H5Dclose(d);
        H5Fclose(f);
        H5Pclose(fapl);
        CHECK(ok, "reading back under MPI-IO");
    }
    else
        CHECK(0, "H5Fopen of %s under MPI-IO", store);
    return 0;
}

static int
exists(const char *dir, const char *leaf)
{
    char        p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, leaf);
    return stat(p, &st) == 0;
}

static int
do_verify(const char *layout, const char *store)
{
    hid_t   fapl = H5Pcreate(H5P_FILE_ACCESS), f, d, a, s, dcpl;
    hsize_t cur[2], chunk[2];
    int    *buf = malloc(XROWS * COLS * sizeof *buf), n = 0, bad = 0;
    char    zj[4096];
    FILE   *fp;

    /* a zarr store came out (not a native file the library fell back to) */
    CHECK(exists(store, "zarr.json") && exists(store, "d/zarr.json") && exists(store, "g/zarr.json"),
          "%s is not a zarr v3 store with /d and /g", store);
    snprintf(zj, sizeof zj, "%s/d/zarr.json", store);
    CHECK((fp = fopen(zj, "r")) != NULL, "open %s", zj);
    {
        char   text[16384];
        size_t k = fread(text, 1, sizeof text - 1, fp);
        text[k]  = '\0';
        fclose(fp);
        CHECK(!strcmp(layout, "sharded") == (strstr(text, "sharding_indexed") != NULL),
              "%s: sharding_indexed %s expected", zj, !strcmp(layout, "sharded") ? "" : "not");
    }
    CHECK(H5Pset_fapl_zarr(fapl, 3) >= 0, "H5Pset_fapl_zarr");
    CHECK((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0, "H5Fopen %s", store);
    CHECK(H5Lexists(f, "g", H5P_DEFAULT) > 0, "/g missing");
    CHECK((d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0, "H5Dopen /d");
    s = H5Dget_space(d);
    H5Sget_simple_extent_dims(s, cur, NULL);
    CHECK(cur[0] == XROWS && cur[1] == COLS, "shape %llu x %llu, want %d x %d", (unsigned long long)cur[0],
          (unsigned long long)cur[1], XROWS, COLS);
    dcpl = H5Dget_create_plist(d);
    CHECK(H5Pget_chunk(dcpl, 2, chunk) == 2, "H5Pget_chunk");
    CHECK(chunk[0] == (!strcmp(layout, "aligned")     ? 10
                       : !strcmp(layout, "unaligned") ? 7
                                                      : 5),
          "HDF5 chunk %llu", (unsigned long long)chunk[0]);
    CHECK((a = H5Aopen(d, "ranks", H5P_DEFAULT)) >= 0 && H5Aread(a, H5T_NATIVE_INT, &n) >= 0 && n == 4,
          "attribute ranks = %d, want 4", n);
    CHECK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "H5Dread");
    for (hsize_t i = 0; i < XROWS; i++)
        for (hsize_t j = 0; j < COLS; j++)
            if (buf[i * COLS + j] != value(i, j) && bad++ < 10)
                fprintf(stderr, "verify: (%llu, %llu) = %d, want %d\n", (unsigned long long)i,
                        (unsigned long long)j, buf[i * COLS + j], value(i, j));
    CHECK(bad == 0, "%d wrong values", bad);
    H5Aclose(a);
    H5Pclose(dcpl);
    H5Sclose(s);
    H5Dclose(d);
    H5Fclose(f);
    H5Pclose(fapl);
    free(buf);
    printf("verify %s: %d x %d values, attribute, group and layout as written\n", layout, XROWS, COLS);
    return 0;
}

/* Collects the messages of the error stack (as H5Eprint would show them) into `out`. */
static herr_t
collect_cb(unsigned n, const H5E_error2_t *e, void *ud)
{
    char *out = ud;
    (void)n;
    if (e->desc && strlen(out) + strlen(e->desc) + 2 < 8192) {
        strcat(out, e->desc);
        strcat(out, "\n");
    }
    return 0;
}

static int
do_error(const char *store)
{
    hid_t   fapl    = mpi_fapl(), f, d, s, dxpl, g, bad;
    hsize_t dims[2] = {8, 8}, chunk[2] = {4, 4};
    int     buf[64]    = {0};
    char    msgs[8192] = "";
    herr_t  rc;

    CHECK(nranks == 4, "run with mpirun -np 4");
    CHECK((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0, "H5Fcreate");
    {
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_chunk(dcpl, 2, chunk);
        s = H5Screate_simple(2, dims, NULL);
        CHECK((d = H5Dcreate2(f, "d", H5T_STD_I32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0, "H5Dcreate");
        H5Pclose(dcpl);
    }
    dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    /* rank 2 writes with a memory type that can't be converted to int32 (an opaque type) */
    bad = H5Tcreate(H5T_OPAQUE, 4);
    H5Tset_tag(bad, "not a number");
    H5E_BEGIN_TRY { rc = H5Dwrite(d, rank == 2 ? bad : H5T_NATIVE_INT, H5S_ALL, H5S_ALL, dxpl, buf); }
    H5E_END_TRY
    CHECK(rc < 0, "the collective H5Dwrite succeeded although rank 2 failed");
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_cb, msgs);
    if (rank != 2)
        CHECK(strstr(msgs, "failed on rank 2 of 4") != NULL, "the error does not name rank 2:\n%s", msgs);
    fprintf(stderr, "rank %d: H5Dwrite failed on every rank as it should: %s", rank,
            rank == 2 ? "(this rank's own failure)\n" : strstr(msgs, "failed on rank 2"));
    /* a metadata step that fails on rank 1 alone: its group's name is the dataset's */
    msgs[0] = '\0';
    H5E_BEGIN_TRY { g = H5Gcreate2(f, rank == 1 ? "d" : "newgroup", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT); }
    H5E_END_TRY
    CHECK(g < 0, "H5Gcreate succeeded although rank 1 failed");
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_cb, msgs);
    if (rank != 1)
        CHECK(strstr(msgs, "failed on rank 1 of 4") != NULL, "the error does not name rank 1:\n%s", msgs);
    fprintf(stderr, "rank %d: H5Gcreate failed on every rank as it should\n", rank);
    H5Tclose(bad);
    H5Pclose(dxpl);
    H5Sclose(s);
    H5Dclose(d);
    H5Fclose(f);
    H5Pclose(fapl);
    return 0;
}

int
main(int argc, char **argv)
{
    int rc;
    if (argc == 4 && !strcmp(argv[1], "verify"))
        return do_verify(argv[2], argv[3]);
    if (!((argc == 5 && !strcmp(argv[1], "write")) || (argc == 3 && !strcmp(argv[1], "error")))) {
        fprintf(stderr,
                "usage: mpi_zarr write aligned|unaligned|sharded coll|indep STORE | verify LAYOUT STORE "
                "| error STORE\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    rc = !strcmp(argv[1], "write") ? do_write(argv[2], argv[3], argv[4]) : do_error(argv[2]);
    H5close(); /* before MPI_Finalize: the connector's property lists hold communicators */
    MPI_Finalize();
    return rc;
}
