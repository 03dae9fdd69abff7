/*
 * h5_groups.c: groups and the names that reach them. It creates nested groups with absolute names
 * ("/MyGroup", "/MyGroup/Group_A") and names relative to a group ("Group_B" in /MyGroup, then
 * "Group_B/Group_C"), puts datasets in them by absolute and by relative name, then reopens the file and
 * walks the links of each group with H5Literate2 in name order, checking what it finds.
 *
 *     h5_groups [FILE]        (default h5_groups.h5)
 */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>

#define FILE_NAME "h5_groups.h5"

#define TRY(call)                                                                                            \
    do {                                                                                                     \
        if ((call) < 0) {                                                                                    \
            fprintf(stderr, "h5_groups: line %d: %s failed\n", __LINE__, #call);                             \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

/* H5Literate2 callback: appends "name(G)" or "name(D)" for each link to the list in op_data. */
static herr_t
list_link(hid_t group_id, const char *name, const H5L_info2_t *info, void *op_data)
{
    char       *list = op_data;
    H5O_info2_t oinfo;

    if (H5Oget_info_by_name3(group_id, name, &oinfo, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
        return -1;
    if (strlen(list) + strlen(name) + 5 > 256)
        return -1;
    if (list[0])
        strcat(list, ",");
    strcat(list, name);
    strcat(list, oinfo.type == H5O_TYPE_GROUP ? "(G)" : oinfo.type == H5O_TYPE_DATASET ? "(D)" : "(?)");
    return 0;
}

/* Lists the links of the group at `path` (relative to loc_id) and compares with `expected`. */
static int
check_links(hid_t loc_id, const char *path, const char *expected)
{
    char    list[256] = "";
    hsize_t idx       = 0;

    if (H5Literate_by_name2(loc_id, path, H5_INDEX_NAME, H5_ITER_INC, &idx, list_link, list, H5P_DEFAULT) <
            0 ||
        strcmp(list, expected) != 0) {
        fprintf(stderr, "h5_groups: %s holds {%s}, expected {%s}\n", path, list, expected);
        return 0;
    }
    return 1;
}

/* Writes a small 1-D int dataset named `name` relative to loc_id. */
static herr_t
write_dataset(hid_t loc_id, const char *name, int first)
{
    hsize_t n = 5;
    int     buf[5], i;
    hid_t   space_id, dset_id;
    herr_t  status = -1;

    for (i = 0; i < 5; i++)
        buf[i] = first + i;
    if ((space_id = H5Screate_simple(1, &n, NULL)) < 0)
        return -1;
    if ((dset_id =
             H5Dcreate2(loc_id, name, H5T_STD_I32LE, space_id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0) {
        status = H5Dwrite(dset_id, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
        H5Dclose(dset_id);
    }
    H5Sclose(space_id);
    return status;
}

int
main(int argc, char *argv[])
{
    const char *file_name = argc > 1 ? argv[1] : FILE_NAME;
    hid_t       file_id, group_id, group_a, group_b, group_c, dset_id;
    H5G_info_t  ginfo;
    int         buf[5], nerrors = 0;

    TRY(file_id = H5Fcreate(file_name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    /* Absolute names. */
    TRY(group_id = H5Gcreate2(file_id, "/MyGroup", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    TRY(group_a = H5Gcreate2(file_id, "/MyGroup/Group_A", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    /* Names relative to /MyGroup. */
    TRY(group_b = H5Gcreate2(group_id, "Group_B", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    TRY(group_c = H5Gcreate2(group_id, "Group_B/Group_C", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    /* Datasets: by absolute name from the file, by a name relative to a group. */
    TRY(write_dataset(file_id, "/MyGroup/Group_A/dset1", 1));
    TRY(write_dataset(group_a, "dset2", 10));
    TRY(write_dataset(group_c, "deep", 100));
    TRY(write_dataset(file_id, "top", 1000));
    TRY(H5Gclose(group_c));
    TRY(H5Gclose(group_b));
    TRY(H5Gclose(group_a));
    TRY(H5Gclose(group_id));
    TRY(H5Fclose(file_id));

    TRY(file_id = H5Fopen(file_name, H5F_ACC_RDONLY, H5P_DEFAULT));
    nerrors += !check_links(file_id, "/", "MyGroup(G),top(D)");
    nerrors += !check_links(file_id, "/MyGroup", "Group_A(G),Group_B(G)");
    nerrors += !check_links(file_id, "/MyGroup/Group_A", "dset1(D),dset2(D)");
    TRY(group_id = H5Gopen2(file_id, "/MyGroup", H5P_DEFAULT));
    nerrors += !check_links(group_id, "Group_B", "Group_C(G)");
    nerrors += !check_links(group_id, "Group_B/Group_C", "deep(D)");
    TRY(H5Gget_info(group_id, &ginfo));
    if (ginfo.nlinks != 2) {
        fprintf(stderr, "h5_groups: /MyGroup has %d links, expected 2\n", (int)ginfo.nlinks);
        nerrors++;
    }
    if (H5Lexists(group_id, "Group_B/Group_C/deep", H5P_DEFAULT) != 1 ||
        H5Lexists(group_id, "Group_C", H5P_DEFAULT) != 0) {
        fprintf(stderr, "h5_groups: H5Lexists answers wrongly in /MyGroup\n");
        nerrors++;
    }
    /* The same dataset through a relative and an absolute name. */
    TRY(dset_id = H5Dopen2(group_id, "Group_A/dset2", H5P_DEFAULT));
    TRY(H5Dread(dset_id, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    TRY(H5Dclose(dset_id));
    nerrors += buf[0] != 10 || buf[4] != 14;
    TRY(dset_id = H5Dopen2(group_id, "/MyGroup/Group_B/Group_C/deep", H5P_DEFAULT));
    TRY(H5Dread(dset_id, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    TRY(H5Dclose(dset_id));
    nerrors += buf[0] != 100 || buf[4] != 104;
    TRY(H5Gclose(group_id));
    TRY(H5Fclose(file_id));

    if (nerrors) {
        fprintf(stderr, "h5_groups: %d errors\n", nerrors);
        return 1;
    }
    printf("h5_groups: wrote and walked %s: 4 groups, 4 datasets\n", file_name);
    return 0;
}
