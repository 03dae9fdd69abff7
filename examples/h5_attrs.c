/*
 * h5_attrs.c: attributes on a group and on a dataset. The group "/station" gets a fixed-length string
 * and an integer array; its dataset "readings" gets a units string, a variable-length string, a
 * 2-element integer array and a scalar double. The program reopens the file, counts and lists the
 * attributes with H5Aiterate2 (in name order) and reads every one back.
 *
 *     h5_attrs [FILE]         (default h5_attrs.h5)
 */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#define FILE_NAME "h5_attrs.h5"

#define TRY(call)                                                                                            \
    do {                                                                                                     \
        if ((call) < 0) {                                                                                    \
            fprintf(stderr, "h5_attrs: line %d: %s failed\n", __LINE__, #call);                              \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

/* Writes a scalar fixed-length string attribute (the string and its terminating NUL). */
static herr_t
write_string_attr(hid_t obj_id, const char *name, const char *value)
{
    hid_t  type_id = H5Tcopy(H5T_C_S1), space_id = H5Screate(H5S_SCALAR), attr_id = -1;
    herr_t status = -1;

    if (type_id >= 0 && space_id >= 0 && H5Tset_size(type_id, strlen(value) + 1) >= 0 &&
        H5Tset_strpad(type_id, H5T_STR_NULLTERM) >= 0 &&
        (attr_id = H5Acreate2(obj_id, name, type_id, space_id, H5P_DEFAULT, H5P_DEFAULT)) >= 0)
        status = H5Awrite(attr_id, type_id, value);
    if (attr_id >= 0)
        H5Aclose(attr_id);
    H5Sclose(space_id);
    H5Tclose(type_id);
    return status;
}

/* Writes a 1-D attribute of `n` values of `mem_type`, stored as `file_type`. */
static herr_t
write_array_attr(hid_t obj_id, const char *name, hid_t file_type, hid_t mem_type, hsize_t n, const void *buf)
{
    hid_t  space_id = H5Screate_simple(1, &n, NULL), attr_id;
    herr_t status   = -1;

    if ((attr_id = H5Acreate2(obj_id, name, file_type, space_id, H5P_DEFAULT, H5P_DEFAULT)) >= 0) {
        status = H5Awrite(attr_id, mem_type, buf);
        H5Aclose(attr_id);
    }
    H5Sclose(space_id);
    return status;
}

/* Reads a scalar fixed-length string attribute and compares it with `expected` (1 when equal). */
static int
check_string_attr(hid_t obj_id, const char *name, const char *expected)
{
    char   buf[64] = "";
    hid_t  attr_id, type_id, mem_type;
    size_t size;
    int    ok = 0;

    if ((attr_id = H5Aopen(obj_id, name, H5P_DEFAULT)) < 0)
        return 0;
    type_id = H5Aget_type(attr_id);
    size    = H5Tget_size(type_id);
    if (H5Tget_class(type_id) == H5T_STRING && !H5Tis_variable_str(type_id) && size < sizeof(buf)) {
        mem_type = H5Tcopy(H5T_C_S1);
        H5Tset_size(mem_type, size);
        ok = H5Aread(attr_id, mem_type, buf) >= 0 && strcmp(buf, expected) == 0;
        H5Tclose(mem_type);
    }
    H5Tclose(type_id);
    H5Aclose(attr_id);
    if (!ok)
        fprintf(stderr, "h5_attrs: attribute %s = \"%s\", expected \"%s\"\n", name, buf, expected);
    return ok;
}

/* H5Aiterate2 callback: appends each attribute name to the list in op_data. */
static herr_t
list_attr(hid_t loc_id, const char *name, const H5A_info_t *info, void *op_data)
{
    char *list = op_data;

    if (strlen(list) + strlen(name) + 2 > 256)
        return -1;
    if (list[0])
        strcat(list, ",");
    strcat(list, name);
    return 0;
}

int
main(int argc, char *argv[])
{
    const char *file_name = argc > 1 ? argv[1] : FILE_NAME;
    hsize_t     dims[2] = {2, 3}, idx = 0;
    int         data[2][3]     = {{10, 11, 12}, {20, 21, 22}};
    int         station_ids[3] = {7, 42, 1999}, valid_range[2] = {0, 100};
    int         read_ids[3], read_range[2];
    double      scale = 0.125, read_scale = 0;
    const char *history = "created by h5_attrs", *read_history = NULL;
    char        names[256] = "";
    hid_t       file_id, group_id, space_id, dset_id, attr_id, vstr_type, mem_type;
    H5O_info2_t oinfo;
    int         nerrors = 0;

    TRY(file_id = H5Fcreate(file_name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    TRY(group_id = H5Gcreate2(file_id, "/station", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    TRY(write_string_attr(group_id, "name", "Mauna Loa"));
    TRY(write_array_attr(group_id, "ids", H5T_STD_I32LE, H5T_NATIVE_INT, 3, station_ids));

    TRY(space_id = H5Screate_simple(2, dims, NULL));
    TRY(dset_id =
            H5Dcreate2(group_id, "readings", H5T_STD_I32LE, space_id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    TRY(H5Dwrite(dset_id, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
    TRY(H5Sclose(space_id));
    TRY(write_string_attr(dset_id, "units", "ppm"));
    TRY(write_array_attr(dset_id, "valid_range", H5T_STD_I32LE, H5T_NATIVE_INT, 2, valid_range));
    TRY(space_id = H5Screate(H5S_SCALAR));
    TRY(attr_id = H5Acreate2(dset_id, "scale_factor", H5T_IEEE_F64LE, space_id, H5P_DEFAULT, H5P_DEFAULT));
    TRY(H5Awrite(attr_id, H5T_NATIVE_DOUBLE, &scale));
    TRY(H5Aclose(attr_id));
    TRY(vstr_type = H5Tcopy(H5T_C_S1));
    TRY(H5Tset_size(vstr_type, H5T_VARIABLE));
    TRY(attr_id = H5Acreate2(dset_id, "history", vstr_type, space_id, H5P_DEFAULT, H5P_DEFAULT));
    TRY(H5Awrite(attr_id, vstr_type, &history));
    TRY(H5Aclose(attr_id));
    TRY(H5Sclose(space_id));
    TRY(H5Dclose(dset_id));
    TRY(H5Gclose(group_id));
    TRY(H5Fclose(file_id));

    /* Reopen and read everything back. */
    TRY(file_id = H5Fopen(file_name, H5F_ACC_RDONLY, H5P_DEFAULT));
    TRY(group_id = H5Gopen2(file_id, "station", H5P_DEFAULT));
    nerrors += !check_string_attr(group_id, "name", "Mauna Loa");
    TRY(attr_id = H5Aopen(group_id, "ids", H5P_DEFAULT));
    TRY(H5Aread(attr_id, H5T_NATIVE_INT, read_ids));
    TRY(H5Aclose(attr_id));
    nerrors += memcmp(read_ids, station_ids, sizeof(read_ids)) != 0;

    TRY(dset_id = H5Dopen2(group_id, "readings", H5P_DEFAULT));
    TRY(H5Oget_info3(dset_id, &oinfo, H5O_INFO_NUM_ATTRS));
    if (oinfo.num_attrs != 4) {
        fprintf(stderr, "h5_attrs: readings has %d attributes, expected 4\n", (int)oinfo.num_attrs);
        nerrors++;
    }
    TRY(H5Aiterate2(dset_id, H5_INDEX_NAME, H5_ITER_INC, &idx, list_attr, names));
    if (strcmp(names, "history,scale_factor,units,valid_range") != 0) {
        fprintf(stderr, "h5_attrs: readings lists attributes %s\n", names);
        nerrors++;
    }
    nerrors += !check_string_attr(dset_id, "units", "ppm");
    TRY(attr_id = H5Aopen(dset_id, "valid_range", H5P_DEFAULT));
    TRY(H5Aread(attr_id, H5T_NATIVE_INT, read_range));
    TRY(H5Aclose(attr_id));
    nerrors += read_range[0] != valid_range[0] || read_range[1] != valid_range[1];
    TRY(attr_id = H5Aopen_by_name(file_id, "/station/readings", "scale_factor", H5P_DEFAULT, H5P_DEFAULT));
    TRY(H5Aread(attr_id, H5T_NATIVE_DOUBLE, &read_scale));
    TRY(H5Aclose(attr_id));
    nerrors += read_scale != scale;
    TRY(attr_id = H5Aopen(dset_id, "history", H5P_DEFAULT));
    TRY(mem_type = H5Aget_type(attr_id));
    if (!H5Tis_variable_str(mem_type)) {
        fprintf(stderr, "h5_attrs: history is not a variable-length string\n");
        nerrors++;
    }
    else {
        TRY(H5Aread(attr_id, vstr_type, &read_history));
        nerrors += read_history == NULL || strcmp(read_history, history) != 0;
        TRY(space_id = H5Aget_space(attr_id));
        TRY(H5Treclaim(vstr_type, space_id, H5P_DEFAULT, &read_history));
        TRY(H5Sclose(space_id));
    }
    TRY(H5Tclose(mem_type));
    TRY(H5Aclose(attr_id));
    TRY(H5Tclose(vstr_type));
    TRY(H5Dclose(dset_id));
    TRY(H5Gclose(group_id));
    TRY(H5Fclose(file_id));

    if (nerrors) {
        fprintf(stderr, "h5_attrs: %d wrong attributes\n", nerrors);
        return 1;
    }
    printf("h5_attrs: wrote and read back %s: 2 attributes on /station, 4 on /station/readings\n", file_name);
    return 0;
}
