/*
 * h5zarr_bench_mpi.c: the MPI benchmark row (bench/mpi.sh, bench/README.md "MPI"): N ranks write one
 * 2-D int32 dataset (4096 x 2048, 32 MiB, chunks 256 x 256) with H5Pset_fapl_mpio, each rank a block of
 * whole rows (4096 / N, chunk-aligned for N = 1, 2, 4), collective transfers; the same decomposition
 * and bytes for both implementations:
 *   zarr    the zarr connector (H5Pset_fapl_zarr), a directory store;
 *   native  parallel native HDF5 (the MPI-IO driver), one .h5 file, the same chunked layout.
 * Times H5Fcreate .. H5Fclose (data in the store/file when the clock stops), the slowest rank's, and
 * prints one line: "<impl> ranks=<N> seconds=<s> MiB/s=<rate>". Usage: mpirun -np N h5zarr_bench_mpi
 * zarr|native PATH
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5zarr/h5zarr.h"

#define NR 4096
#define NC 2048
#define CH 256

int
main(int argc, char **argv)
{
    int     rank, n, rc = 1;
    hsize_t dims[2] = {NR, NC}, chunk[2] = {CH, CH}, start[2], count[2];
    double  t0, t1, mine, worst, ph[6];
    bool    phases = getenv("H5ZARR_BENCH_PHASES") != NULL;
    hid_t   fapl, dcpl, dxpl, f, s, d, fs, ms;
    int    *buf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc != 3 || (strcmp(argv[1], "zarr") && strcmp(argv[1], "native")) || NR % n) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np N h5zarr_bench_mpi zarr|native PATH (N divides %d)\n", NR);
        MPI_Finalize();
        return 2;
    }
    start[0] = (hsize_t)rank * (NR / n), start[1] = 0, count[0] = NR / n, count[1] = NC;
    buf = malloc(count[0] * count[1] * sizeof *buf);
    for (hsize_t i = 0; i < count[0] * count[1]; i++)
        buf[i] = (int)(start[0] * NC + i);
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    if (!strcmp(argv[1], "zarr"))
        H5Pset_fapl_zarr(fapl, 3);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if ((f = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0)
        goto done;
    ph[0] = MPI_Wtime();
    s     = H5Screate_simple(2, dims, NULL);
    d     = H5Dcreate2(f, "d", H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ph[1] = MPI_Wtime();
    fs    = H5Dget_space(d);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    ms = H5Screate_simple(2, count, NULL);
    if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, ms, fs, dxpl, buf) < 0)
        goto done;
    ph[2] = MPI_Wtime();
    H5Sclose(ms);
    H5Sclose(fs);
    H5Sclose(s);
    if (H5Dclose(d) < 0)
        goto done;
    ph[3] = MPI_Wtime();
    if (H5Fclose(f) < 0)
        goto done;
    t1   = MPI_Wtime();
    mine = t1 - t0;
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s ranks=%d seconds=%.4f MiB/s=%.1f\n", argv[1], n, worst,
               (double)NR * NC * sizeof(int) / (1 << 20) / worst);
    if (phases) /* H5ZARR_BENCH_PHASES: where this rank's time went (ms) */
        printf("  rank %d: Fcreate %.2f Dcreate %.2f Dwrite %.2f Dclose %.2f Fclose %.2f\n", rank,
               1e3 * (ph[0] - t0), 1e3 * (ph[1] - ph[0]), 1e3 * (ph[2] - ph[1]), 1e3 * (ph[3] - ph[2]),
               1e3 * (t1 - ph[3]));
    rc = 0;
done:
    if (rc)
        fprintf(stderr, "rank %d: %s write failed\n", rank, argv[1]);
    free(buf);
    H5Pclose(fapl);
    H5Pclose(dcpl);
    H5Pclose(dxpl);
    H5close();
    MPI_Finalize();
    return rc;
}
