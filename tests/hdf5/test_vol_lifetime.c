/*
 * test_vol_lifetime.c: object lifetime and identity through the zarr connector, as HDF5 defines them.
 * H5Fget_obj_count counts only what the application opened (the connector's own type ids are
 * predefined types, not copies); an object unlinked while open stays usable and can be linked again
 * (it is gone at close otherwise); a committed datatype counts the datasets and attributes that use it
 * in its reference count, and H5Dget_type/H5Aget_type hand out the committed type, also when it was
 * committed anonymously and named afterwards (as h5repack does).
 */
#include "runner.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "h5test.h"

static int
test_obj_count_sees_only_application_ids(void)
{
    const char *tmp = test_tmpdir("lifetime_count");
    char        path[512];
    hid_t       fapl = h5t_zarr_fapl(3), f, sp, a, d, t, g;
    snprintf(path, sizeof path, "%s/c.zarr", tmp);
    ASSERT(fapl >= 0);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(path));
    ASSERT((sp = H5Screate(H5S_SCALAR)) >= 0);
    ASSERT((t = H5Tcopy(H5T_NATIVE_INT)) >= 0);
    ASSERT(H5Tcommit2(f, "t", t, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT((a = H5Acreate2(f, "a", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((d = H5Dcreate2(f, "d", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT_EQ_INT(H5Fget_obj_count(f, H5F_OBJ_DATATYPE), 1);
    ASSERT_EQ_INT(H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_DATATYPE), 1);
    ASSERT_EQ_INT(H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL), 5); /* file, type, attr, dset, group */
    ASSERT(H5Tclose(t) >= 0);
    ASSERT_EQ_INT(H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_DATATYPE), 0);
    /* reopened objects hold no type ids either */
    ASSERT(H5Aclose(a) >= 0 && H5Dclose(d) >= 0);
    ASSERT((a = H5Aopen(f, "a", H5P_DEFAULT)) >= 0);
    ASSERT((d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0);
    ASSERT_EQ_INT(H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_DATATYPE), 0);
    {
        hid_t ty = H5Dget_type(d);
        ASSERT(H5Tequal(ty, H5T_IEEE_F64LE) > 0);
        ASSERT_EQ_INT(H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_DATATYPE), 1);
        ASSERT(H5Tclose(ty) >= 0);
    }
    ASSERT(H5Aclose(a) >= 0 && H5Dclose(d) >= 0 && H5Gclose(g) >= 0 && H5Sclose(sp) >= 0);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_unlinked_open_objects_stay_alive(void)
{
    const char *tmp = test_tmpdir("lifetime_unlink");
    char        path[512], name[64];
    hid_t       fapl = h5t_zarr_fapl(3), f, g, t, d, sp;
    int         v = 42, r = 0;
    snprintf(path, sizeof path, "%s/u.zarr", tmp);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(path));
    ASSERT((g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    /* a committed type unlinked while open, then linked again under another name */
    ASSERT((t = H5Tcopy(H5T_STD_U16BE)) >= 0);
    ASSERT(H5Tcommit2(g, "t", t, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Ldelete(g, "t", H5P_DEFAULT) >= 0);
    ASSERT_EQ_INT(H5Lexists(g, "t", H5P_DEFAULT), 0);
    ASSERT_EQ_INT((int)H5Iget_name(t, NULL, 0), 0);
    ASSERT(H5Lcreate_hard(t, ".", g, "t2", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Tclose(t) >= 0);
    /* a dataset unlinked while open: still readable and writable through the handle, gone after close */
    ASSERT((sp = H5Screate(H5S_SCALAR)) >= 0);
    ASSERT((d = H5Dcreate2(g, "d", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) >= 0);
    ASSERT(H5Ldelete(f, "g/d", H5P_DEFAULT) >= 0);
    ASSERT_EQ_INT(H5Lexists(g, "d", H5P_DEFAULT), 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &r) >= 0);
    ASSERT_EQ_INT(r, 42);
    ASSERT(H5Dclose(d) >= 0 && H5Sclose(sp) >= 0 && H5Gclose(g) >= 0);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(!h5t_path_exists(path, "g/d"));
    ASSERT(!h5t_path_exists(path, ".h5zarr_anon"));

    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT_EQ_INT(H5Lexists(f, "g/t", H5P_DEFAULT), 0);
    ASSERT_EQ_INT(H5Lexists(f, "g/d", H5P_DEFAULT), 0);
    ASSERT((t = H5Topen2(f, "g/t2", H5P_DEFAULT)) >= 0);
    ASSERT(H5Tequal(t, H5T_STD_U16BE) > 0);
    ASSERT(H5Iget_name(t, name, sizeof name) > 0);
    ASSERT_STR(name, "/g/t2");
    ASSERT(H5Tclose(t) >= 0 && H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* The type of `d` (dataset) or `a` (attribute) is the committed type at `tpath` of file `f`. */
static int
check_committed(hid_t f, hid_t ty, const char *tpath)
{
    H5O_info2_t x, y;
    int         cmp = 1;
    ASSERT(ty >= 0);
    ASSERT(H5Tcommitted(ty) > 0);
    ASSERT(H5Oget_info3(ty, &x, H5O_INFO_BASIC) >= 0);
    ASSERT(H5Oget_info_by_name3(f, tpath, &y, H5O_INFO_BASIC, H5P_DEFAULT) >= 0);
    ASSERT(H5Otoken_cmp(f, &x.token, &y.token, &cmp) >= 0);
    ASSERT_EQ_INT(cmp, 0);
    ASSERT(H5Tclose(ty) >= 0);
    return 0;
}

static int
test_committed_type_users(void)
{
    const char *tmp = test_tmpdir("lifetime_ctype");
    char        path[512];
    hid_t       fapl = h5t_zarr_fapl(3), f, t, u, sp, a, d, d2;
    H5O_info2_t oi;
    snprintf(path, sizeof path, "%s/t.zarr", tmp);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(path));
    ASSERT((sp = H5Screate(H5S_SCALAR)) >= 0);
    ASSERT((t = H5Tcreate(H5T_COMPOUND, 12)) >= 0);
    ASSERT(H5Tinsert(t, "i", 0, H5T_STD_I32LE) >= 0 && H5Tinsert(t, "x", 4, H5T_IEEE_F64LE) >= 0);
    ASSERT(H5Tcommit2(f, "t", t, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Oget_info_by_name3(f, "t", &oi, H5O_INFO_BASIC, H5P_DEFAULT) >= 0);
    ASSERT_EQ_INT(oi.rc, 1);
    ASSERT((a = H5Acreate2(f, "a", t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((d = H5Dcreate2(f, "d", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Oget_info_by_name3(f, "t", &oi, H5O_INFO_BASIC, H5P_DEFAULT) >= 0);
    ASSERT_EQ_INT(oi.rc, 3);
    ASSERT(check_committed(f, H5Dget_type(d), "/t") == 0);
    ASSERT(check_committed(f, H5Aget_type(a), "/t") == 0);
    /* committed anonymously, used, then named (h5repack's order) */
    ASSERT((u = H5Tcopy(H5T_STD_I64BE)) >= 0);
    ASSERT(H5Tcommit_anon(f, u, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT((d2 = H5Dcreate2(f, "d2", u, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Olink(u, f, "u", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Aclose(a) >= 0 && H5Dclose(d) >= 0 && H5Dclose(d2) >= 0 && H5Tclose(t) >= 0 && H5Tclose(u) >= 0);
    ASSERT(H5Adelete(f, "a") >= 0);
    ASSERT(H5Fclose(f) >= 0);

    ASSERT((f = H5Fopen(path, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT(H5Oget_info_by_name3(f, "t", &oi, H5O_INFO_BASIC, H5P_DEFAULT) >= 0);
    ASSERT_EQ_INT(oi.rc, 2); /* the link and the dataset; the attribute is gone */
    ASSERT((d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0);
    ASSERT(check_committed(f, H5Dget_type(d), "/t") == 0);
    ASSERT((d2 = H5Dopen2(f, "d2", H5P_DEFAULT)) >= 0);
    ASSERT(check_committed(f, H5Dget_type(d2), "/u") == 0);
    ASSERT(H5Dclose(d) >= 0 && H5Dclose(d2) >= 0);
    ASSERT(H5Ldelete(f, "d", H5P_DEFAULT) >= 0);
    ASSERT(H5Oget_info_by_name3(f, "t", &oi, H5O_INFO_BASIC, H5P_DEFAULT) >= 0);
    ASSERT_EQ_INT(oi.rc, 1);
    ASSERT(H5Sclose(sp) >= 0 && H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* The connector's messages reach the application's error stack also when the failing call cleans up
 * with HDF5 calls (each of which clears the stack on entry), and over-long names are refused by name. */
static int
test_errors_survive_cleanup(void)
{
    const char *tmp = test_tmpdir("lifetime_errors");
    char        path[512], msg[4096] = "", *longname;
    hid_t       fapl = h5t_zarr_fapl(3), f, t, s, d, g;
    hsize_t     one  = 1;
    snprintf(path, sizeof path, "%s/e.zarr", tmp);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(path));
    /* a compound with an old-style reference member: refused, and the reason is on the stack */
    ASSERT((t = H5Tcreate(H5T_COMPOUND, 16)) >= 0);
    ASSERT(H5Tinsert(t, "a", 0, H5T_NATIVE_INT) >= 0 && H5Tinsert(t, "r", 8, H5T_STD_REF_OBJ) >= 0);
    ASSERT((s = H5Screate_simple(1, &one, NULL)) >= 0);
    H5E_BEGIN_TRY
    {
        d = H5Dcreate2(f, "d", t, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
    }
    H5E_END_TRY
    ASSERT(d < 0);
    if (!strstr(msg, "can't create dataset '/d'") || !strstr(msg, "old-style references"))
        FAILF("error stack lacks the connector's reasons: %s", msg);
    /* a name component longer than a file name can be */
    ASSERT((longname = malloc(301)) != NULL);
    memset(longname, 'b', 300);
    longname[300] = '\0';
    msg[0]        = '\0';
    H5E_BEGIN_TRY
    {
        g = H5Gcreate2(f, longname, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
    }
    H5E_END_TRY
    free(longname);
    ASSERT(g < 0);
    if (!strstr(msg, "300 bytes") || !strstr(msg, "at most 255 bytes"))
        FAILF("long name: unclear error: %s", msg);
    ASSERT(H5Tclose(t) >= 0 && H5Sclose(s) >= 0 && H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* Links made with H5Lcreate_ud: an external-link value becomes an external link; any other value is
 * kept as it is (class and bytes), listed and read back, and never followed. */
static int
test_user_defined_links_kept(void)
{
    const char *tmp = test_tmpdir("lifetime_ud");
    char        path[512], other[512], val[64] = "";
    hid_t       fapl = h5t_zarr_fapl(3), f, g, o;
    H5L_info2_t li;
    uint8_t     ev[128];
    size_t      fl, ol;
    snprintf(path, sizeof path, "%s/l.zarr", tmp);
    snprintf(other, sizeof other, "%s/o.zarr", tmp);
    ASSERT((f = H5Fcreate(other, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(other));
    ASSERT((g = H5Gcreate2(f, "target", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Gclose(g) >= 0 && H5Fclose(f) >= 0);
    /* the packed external link value H5Lunpack_elink_val reads: version/flags byte, file, object */
    fl    = strlen(other) + 1;
    ol    = strlen("/target") + 1;
    ev[0] = 0;
    memcpy(ev + 1, other, fl);
    memcpy(ev + 1 + fl, "/target", ol);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(path));
    ASSERT(H5Lcreate_ud(f, "ext", H5L_TYPE_EXTERNAL, ev, 1 + fl + ol, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Lcreate_ud(f, "raw", H5L_TYPE_EXTERNAL, "udata", 5, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Fclose(f) >= 0);

    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(H5Lget_info2(f, "ext", &li, H5P_DEFAULT) >= 0);
    ASSERT_EQ_INT(li.type, H5L_TYPE_EXTERNAL);
    ASSERT((o = H5Oopen(f, "ext", H5P_DEFAULT)) >= 0); /* followed into the other store */
    ASSERT(H5Oclose(o) >= 0);
    ASSERT_EQ_INT(H5Lexists(f, "raw", H5P_DEFAULT), 1);
    ASSERT(H5Lget_info2(f, "raw", &li, H5P_DEFAULT) >= 0);
    ASSERT_EQ_INT(li.type, H5L_TYPE_EXTERNAL);
    ASSERT_EQ_INT((int)li.u.val_size, 5);
    ASSERT(H5Lget_val(f, "raw", val, sizeof val, H5P_DEFAULT) >= 0);
    ASSERT(memcmp(val, "udata", 5) == 0);
    H5E_BEGIN_TRY { o = H5Oopen(f, "raw", H5P_DEFAULT); }
    H5E_END_TRY
    ASSERT(o < 0);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* Object times: the modification time of the node's metadata for objects made with time tracking
 * (HDF5's default), 0 for those made without, as HDF5 reports them. */
static int
test_object_times(void)
{
    const char *tmp = test_tmpdir("lifetime_times");
    char        path[512];
    hid_t       fapl = h5t_zarr_fapl(3), f, g, sp, dcpl, d1, d2;
    H5O_info2_t oi;
    time_t      t0 = time(NULL);

    snprintf(path, sizeof path, "%s/t.zarr", tmp);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(path));
    ASSERT((g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((sp = H5Screate(H5S_SCALAR)) >= 0 && (dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT((d1 = H5Dcreate2(f, "tracked", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Pset_obj_track_times(dcpl, false) >= 0);
    ASSERT((d2 = H5Dcreate2(f, "untracked", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dclose(d1) >= 0 && H5Dclose(d2) >= 0 && H5Gclose(g) >= 0 && H5Fclose(f) >= 0);

    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(H5Oget_info_by_name3(f, "g", &oi, H5O_INFO_TIME, H5P_DEFAULT) >= 0);
    ASSERT(oi.mtime >= t0 - 2 && oi.mtime <= time(NULL) + 2 && oi.ctime == oi.mtime);
    ASSERT(H5Oget_info_by_name3(f, "tracked", &oi, H5O_INFO_TIME, H5P_DEFAULT) >= 0);
    ASSERT(oi.mtime >= t0 - 2 && oi.mtime <= time(NULL) + 2);
    ASSERT(H5Oget_info_by_name3(f, "untracked", &oi, H5O_INFO_TIME, H5P_DEFAULT) >= 0);
    ASSERT(oi.mtime == 0 && oi.ctime == 0);
    {
        hid_t   d = H5Dopen2(f, "untracked", H5P_DEFAULT), p = H5Dget_create_plist(d);
        hbool_t on = true;
        ASSERT(H5Pget_obj_track_times(p, &on) >= 0 && !on);
        H5Pclose(p);
        H5Dclose(d);
    }
    ASSERT(H5Sclose(sp) >= 0 && H5Pclose(dcpl) >= 0 && H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static herr_t
count_link(hid_t g, const char *name, const H5L_info2_t *info, void *ud)
{
    (void)g;
    (void)name;
    (void)info;
    (*(int *)ud)++;
    return 0;
}

/* A node with bad metadata in a v3 store: listings still show it, opening it fails with a message that
 * names it, and its siblings open. */
static int
test_listing_survives_a_bad_node(void)
{
    const char *tmp = test_tmpdir("lifetime_badnode");
    char        path[512], doc[600], msg[4096] = "";
    hid_t       fapl  = h5t_zarr_fapl(3), f, sp, d;
    hsize_t     n     = 4;
    int         links = 0;
    FILE       *fp;

    snprintf(path, sizeof path, "%s/b.zarr", tmp);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(path));
    ASSERT((sp = H5Screate_simple(1, &n, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "good", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dclose(d) >= 0);
    ASSERT((d = H5Dcreate2(f, "bad", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dclose(d) >= 0 && H5Sclose(sp) >= 0 && H5Fclose(f) >= 0);
    snprintf(doc, sizeof doc, "%s/bad/zarr.json", path);
    ASSERT((fp = fopen(doc, "w")) != NULL);
    fputs("{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [4], \"data_type\": \"no-such-type\"}\n",
          fp);
    fclose(fp);

    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(H5Literate2(f, H5_INDEX_NAME, H5_ITER_INC, NULL, count_link, &links) >= 0);
    ASSERT_EQ_INT(links, 2);
    ASSERT_EQ_INT(H5Lexists(f, "bad", H5P_DEFAULT), 1);
    H5E_BEGIN_TRY
    {
        d = H5Dopen2(f, "bad", H5P_DEFAULT);
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
    }
    H5E_END_TRY
    ASSERT(d < 0);
    if (!strstr(msg, "bad") || !strstr(msg, "no-such-type"))
        FAILF("unclear error: %s", msg);
    ASSERT((d = H5Dopen2(f, "good", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

int
main(int argc, char **argv)
{
    static const test_entry tests[] = {TEST_ENTRY(obj_count_sees_only_application_ids),
                                       TEST_ENTRY(unlinked_open_objects_stay_alive),
                                       TEST_ENTRY(committed_type_users),
                                       TEST_ENTRY(errors_survive_cleanup),
                                       TEST_ENTRY(user_defined_links_kept),
                                       TEST_ENTRY(object_times),
                                       TEST_ENTRY(listing_survives_a_bad_node)};
    return RUN_TESTS(tests);
}
