/*
 * h5_compound.c: a dataset of a compound (struct) type. It writes four sensor records (an int, a
 * fixed-length string, two doubles) with a packed file type, reopens the file, reads the whole records
 * back, then reads a single field ("Temperature") through a compound memory type with only that
 * member, as HDF5's tutorials show.
 *
 *     h5_compound [FILE]      (default h5_compound.h5)
 */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#define FILE_NAME "h5_compound.h5"
#define DATASET   "sensors"
#define NRECORDS  4
#define NAME_LEN  16

#define TRY(call)                                                                                            \
    do {                                                                                                     \
        if ((call) < 0) {                                                                                    \
            fprintf(stderr, "h5_compound: line %d: %s failed\n", __LINE__, #call);                           \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

typedef struct {
    int    serial_no;
    char   location[NAME_LEN];
    double temperature;
    double pressure;
} sensor_t;

int
main(int argc, char *argv[])
{
    const char *file_name       = argc > 1 ? argv[1] : FILE_NAME;
    sensor_t    wdata[NRECORDS] = {{1153, "Exterior", 53.23, 24.57},
                                   {1184, "Intake", 55.12, 22.95},
                                   {1027, "Intake manifold", 103.55, 31.23},
                                   {1313, "Exhaust", 1252.89, 84.11}};
    sensor_t    rdata[NRECORDS];
    double      temperature[NRECORDS];
    hsize_t     dims[1] = {NRECORDS};
    hid_t       file_id, space_id, dset_id, str_type, mem_type, file_type, temp_type;
    int         i, nmembers, nerrors = 0;

    TRY(str_type = H5Tcopy(H5T_C_S1));
    TRY(H5Tset_size(str_type, NAME_LEN));

    /* The memory type follows the C struct; the file type is packed, with standard types. */
    TRY(mem_type = H5Tcreate(H5T_COMPOUND, sizeof(sensor_t)));
    TRY(H5Tinsert(mem_type, "Serial number", HOFFSET(sensor_t, serial_no), H5T_NATIVE_INT));
    TRY(H5Tinsert(mem_type, "Location", HOFFSET(sensor_t, location), str_type));
    TRY(H5Tinsert(mem_type, "Temperature (F)", HOFFSET(sensor_t, temperature), H5T_NATIVE_DOUBLE));
    TRY(H5Tinsert(mem_type, "Pressure (inHg)", HOFFSET(sensor_t, pressure), H5T_NATIVE_DOUBLE));

    TRY(file_type = H5Tcreate(H5T_COMPOUND, 4 + NAME_LEN + 8 + 8));
    TRY(H5Tinsert(file_type, "Serial number", 0, H5T_STD_I32BE));
    TRY(H5Tinsert(file_type, "Location", 4, str_type));
    TRY(H5Tinsert(file_type, "Temperature (F)", 4 + NAME_LEN, H5T_IEEE_F64BE));
    TRY(H5Tinsert(file_type, "Pressure (inHg)", 4 + NAME_LEN + 8, H5T_IEEE_F64BE));

    TRY(file_id = H5Fcreate(file_name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    TRY(space_id = H5Screate_simple(1, dims, NULL));
    TRY(dset_id = H5Dcreate2(file_id, DATASET, file_type, space_id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    TRY(H5Dwrite(dset_id, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, wdata));
    TRY(H5Dclose(dset_id));
    TRY(H5Sclose(space_id));
    TRY(H5Tclose(file_type));
    TRY(H5Fclose(file_id));

    /* Reopen: the stored type must still be a compound of four members. */
    TRY(file_id = H5Fopen(file_name, H5F_ACC_RDONLY, H5P_DEFAULT));
    TRY(dset_id = H5Dopen2(file_id, DATASET, H5P_DEFAULT));
    TRY(file_type = H5Dget_type(dset_id));
    TRY(nmembers = H5Tget_nmembers(file_type));
    if (H5Tget_class(file_type) != H5T_COMPOUND || nmembers != 4) {
        fprintf(stderr, "h5_compound: %s is not a compound of 4 members\n", DATASET);
        return 1;
    }
    memset(rdata, 0, sizeof(rdata));
    TRY(H5Dread(dset_id, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rdata));
    for (i = 0; i < NRECORDS; i++)
        if (rdata[i].serial_no != wdata[i].serial_no || strcmp(rdata[i].location, wdata[i].location) != 0 ||
            rdata[i].temperature != wdata[i].temperature || rdata[i].pressure != wdata[i].pressure) {
            if (nerrors++ == 0)
                fprintf(stderr, "h5_compound: record %d = {%d, \"%s\", %g, %g}\n", i, rdata[i].serial_no,
                        rdata[i].location, rdata[i].temperature, rdata[i].pressure);
        }

    /* One field only: a memory compound type naming just that member. */
    TRY(temp_type = H5Tcreate(H5T_COMPOUND, sizeof(double)));
    TRY(H5Tinsert(temp_type, "Temperature (F)", 0, H5T_NATIVE_DOUBLE));
    TRY(H5Dread(dset_id, temp_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, temperature));
    for (i = 0; i < NRECORDS; i++)
        if (temperature[i] != wdata[i].temperature && nerrors++ == 0)
            fprintf(stderr, "h5_compound: temperature %d = %g, expected %g\n", i, temperature[i],
                    wdata[i].temperature);

    TRY(H5Tclose(temp_type));
    TRY(H5Tclose(file_type));
    TRY(H5Tclose(mem_type));
    TRY(H5Tclose(str_type));
    TRY(H5Dclose(dset_id));
    TRY(H5Fclose(file_id));

    if (nerrors) {
        fprintf(stderr, "h5_compound: %d wrong records\n", nerrors);
        return 1;
    }
    printf("h5_compound: wrote and read back %s /%s (%d records; one field read alone)\n", file_name, DATASET,
           NRECORDS);
    return 0;
}
