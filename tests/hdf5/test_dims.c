/*
 * test_dims.c: zarr dimension names from HDF5 dimension scales, and HDF5/netCDF bookkeeping kept out of
 * the zarr attributes (docs/FORMAT.md, "Dimension names" and "Hidden attributes").
 *
 * A store written through the connector (v2 and v3) with time/lat/lon scales attached to a 3-D variable
 * (lat named by its NAME, lon by its link name under netCDF's "not a variable" NAME) and 2-D datasets
 * without scales: the stored documents (read as JSON, not through the connector) carry v2
 * `_ARRAY_DIMENSIONS` / v3 `dimension_names` with the scale names and h5netcdf-style phony names, and
 * none of DIMENSION_LIST, REFERENCE_LIST, CLASS, NAME, _Netcdf4Coordinates, _Netcdf4Dimid,
 * _NCProperties as attributes; through the connector every attribute is there again (H5Aiterate order,
 * H5Aread values, H5DS calls). Detaching a scale after reopening renames the axis at close. lon, a netCDF
 * dimension without a coordinate variable, is no node to zarr readers: its document is the hidden one
 * (.h5zarr_array, no .zarray / zarr.json), and the connector still opens it.
 */
#include "runner.h"

#include <hdf5.h>
#include <hdf5_hl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5test.h"

#define NOT_A_VAR "This is a netCDF dimension but not a netCDF variable.         5"

/* True when `dir`/`node`/`name` exists. */
static bool
has_key(const char *dir, const char *node, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s/%s", dir, node, name);
    return access(p, F_OK) == 0;
}

/* The stored metadata of node `node` of the store at `dir`: v3 zarr.json (a hidden array's .h5zarr_array
 * when there is none), or v2 .zattrs (an empty object
 * when absent). New reference. */
static struct json_object *
doc(const char *dir, const char *node, int version)
{
    char                p[4096];
    struct json_object *j;
    snprintf(p, sizeof p, "%s/%s%s%s", dir, node, *node ? "/" : "", version == 3 ? "zarr.json" : ".zattrs");
    j = json_object_from_file(p);
    if (!j && version == 3) {
        snprintf(p, sizeof p, "%s/%s%s.h5zarr_array", dir, node, *node ? "/" : "");
        j = json_object_from_file(p);
    }
    return j ? j : (version == 2 ? json_object_new_object() : NULL);
}

/* The plain zarr attributes of the node (borrowed from `d`). */
static struct json_object *
plain_attrs(struct json_object *d, int version)
{
    struct json_object *a = NULL;
    if (version == 2)
        return d;
    json_object_object_get_ex(d, "attributes", &a);
    return a;
}

/* The node's dimension names as "a,b,c" (v3 dimension_names, v2 _ARRAY_DIMENSIONS), or "(none)". */
static void
dims_of(const char *dir, const char *node, int version, char *out, size_t n)
{
    struct json_object *d = doc(dir, node, version), *l = NULL;
    snprintf(out, n, "(none)");
    if (d &&
        (version == 3 ? json_object_object_get_ex(d, "dimension_names", &l)
                      : json_object_object_get_ex(d, "_ARRAY_DIMENSIONS", &l)) &&
        json_object_is_type(l, json_type_array)) {
        out[0] = '\0';
        for (size_t i = 0; i < json_object_array_length(l); i++)
            snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? "," : "",
                     json_object_get_string(json_object_array_get_idx(l, i)));
    }
    json_object_put(d);
}

/* Number of the given names present as plain zarr attributes of the node. */
static int
count_plain(const char *dir, const char *node, int version, const char *const *names)
{
    struct json_object *d = doc(dir, node, version), *a = d ? plain_attrs(d, version) : NULL;
    int                 k = 0;
    for (int i = 0; a && names[i]; i++)
        k += json_object_object_get_ex(a, names[i], NULL);
    json_object_put(d);
    return k;
}

static int
plain_has(const char *dir, const char *node, int version, const char *name)
{
    const char *names[] = {name, NULL};
    return count_plain(dir, node, version, names);
}

static const char *const bookkeeping[] = {"DIMENSION_LIST", "REFERENCE_LIST",      "CLASS",
                                          "NAME",           "_Netcdf4Coordinates", "_Netcdf4Dimid",
                                          "_NCProperties",  "_nc3_strict",         NULL};

static hid_t
mkdset(hid_t loc, const char *name, int nd, const hsize_t *dims)
{
    hid_t sp = H5Screate_simple(nd, dims, NULL), d;
    d        = H5Dcreate2(loc, name, H5T_NATIVE_FLOAT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sclose(sp);
    return d;
}

static int
put_int_attr(hid_t loc, const char *name, int n, const int *v)
{
    hsize_t dn = (hsize_t)n;
    hid_t   sp = n > 1 ? H5Screate_simple(1, &dn, NULL) : H5Screate(H5S_SCALAR), a;
    herr_t  e  = -1;
    if ((a = H5Acreate2(loc, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0) {
        e = H5Awrite(a, H5T_NATIVE_INT, v);
        H5Aclose(a);
    }
    H5Sclose(sp);
    return e < 0 ? -1 : 0;
}

static int
put_str_attr(hid_t loc, const char *name, const char *v)
{
    hid_t  t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a;
    herr_t e = -1;
    H5Tset_size(t, strlen(v) + 1);
    if ((a = H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0) {
        e = H5Awrite(a, t, v);
        H5Aclose(a);
    }
    H5Tclose(t);
    H5Sclose(sp);
    return e < 0 ? -1 : 0;
}

static int
get_str_attr(hid_t loc, const char *name, char *out, size_t n)
{
    hid_t  a = H5Aopen(loc, name, H5P_DEFAULT), t, mt;
    herr_t e = -1;
    if (a < 0)
        return -1;
    t  = H5Aget_type(a);
    mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, n);
    memset(out, 0, n);
    if (H5Tget_class(t) == H5T_STRING)
        e = H5Aread(a, mt, out);
    H5Tclose(mt);
    H5Tclose(t);
    H5Aclose(a);
    return e < 0 ? -1 : 0;
}

typedef struct names {
    char list[1024];
} names;

static herr_t
list_attr(hid_t loc, const char *name, const H5A_info_t *info, void *ud)
{
    names *l = ud;
    (void)loc;
    (void)info;
    snprintf(l->list + strlen(l->list), sizeof l->list - strlen(l->list), "%s%s", l->list[0] ? "," : "",
             name);
    return 0;
}

static int
attr_list(hid_t loc, char *out, size_t n)
{
    names   l   = {{0}};
    hsize_t idx = 0;
    if (H5Aiterate2(loc, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, list_attr, &l) < 0)
        return -1;
    snprintf(out, n, "%s", l.list);
    return 0;
}

static int
write_store(const char *dir, int version)
{
    hid_t   fapl  = h5t_zarr_fapl(version), f, g, tm, la, lo, v, grid, sq, gd;
    hsize_t d1[1] = {4}, d2[1] = {3}, d3[1] = {5}, dv[3] = {4, 3, 5}, dg[2] = {3, 7}, ds[2] = {7, 7};
    int     coords[3] = {0, 1, 2}, dimid = 0;

    ASSERT(fapl >= 0);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(put_str_attr(f, "_NCProperties", "version=2,netcdf=4.9.3,hdf5=1.14.5") == 0);
    ASSERT(put_str_attr(f, "title", "dims test") == 0);
    ASSERT((tm = mkdset(f, "time", 1, d1)) >= 0);
    ASSERT((la = mkdset(f, "lat", 1, d2)) >= 0);
    ASSERT((lo = mkdset(f, "lon", 1, d3)) >= 0);
    ASSERT((v = mkdset(f, "temp", 3, dv)) >= 0);
    ASSERT((grid = mkdset(f, "grid", 2, dg)) >= 0);
    ASSERT((sq = mkdset(f, "sq", 2, ds)) >= 0);
    ASSERT(H5DSset_scale(tm, "time") >= 0);
    ASSERT(H5DSset_scale(la, "latitude") >= 0); /* a plain NAME names the dimension */
    ASSERT(H5DSset_scale(lo, NOT_A_VAR) >= 0);  /* netCDF's pure dimension: the link name does */
    ASSERT(put_int_attr(lo, "_Netcdf4Dimid", 1, &dimid) == 0);
    ASSERT(put_str_attr(v, "units", "K") == 0);
    ASSERT(H5DSattach_scale(v, tm, 0) >= 0);
    ASSERT(H5DSattach_scale(v, la, 1) >= 0);
    ASSERT(H5DSattach_scale(v, lo, 2) >= 0);
    ASSERT(put_int_attr(v, "_Netcdf4Coordinates", 3, coords) == 0);
    ASSERT(put_str_attr(grid, "NAME", "not a scale") == 0); /* NAME of an ordinary dataset stays plain */
    ASSERT((g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(put_str_attr(g, "CLASS", "GROUP") == 0); /* PyTables' CLASS is no dimension scale */
    ASSERT((gd = mkdset(g, "x", 1, d3)) >= 0);
    /* dimension names are zarr's: no HDF5 attribute may take the v2 key */
    H5E_BEGIN_TRY { ASSERT(put_str_attr(gd, "_ARRAY_DIMENSIONS", "no") < 0); }
    H5E_END_TRY
    H5Dclose(gd);
    H5Gclose(g);
    H5Dclose(tm);
    H5Dclose(la);
    H5Dclose(lo);
    H5Dclose(v);
    H5Dclose(grid);
    H5Dclose(sq);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    ASSERT(h5t_is_zarr_store(dir));
    return 0;
}

static int
check_dims(int version)
{
    const char *tmp = test_tmpdir("dims");
    char        dir[4096], s[1024];
    hid_t       fapl      = h5t_zarr_fapl(version), f, v, lo, la, lat_only;
    int         coords[3] = {-1, -1, -1};

    ASSERT(tmp && fapl >= 0);
    snprintf(dir, sizeof dir, "%s/dims_v%d.zarr", tmp, version);
    if (write_store(dir, version))
        return 1;

    /* stored metadata, as zarr readers see it */
    dims_of(dir, "temp", version, s, sizeof s);
    ASSERT_STR(s, "time,latitude,lon");
    dims_of(dir, "time", version, s, sizeof s);
    ASSERT_STR(s, "time");
    dims_of(dir, "lat", version, s, sizeof s);
    ASSERT_STR(s, "latitude");
    dims_of(dir, "lon", version, s, sizeof s);
    ASSERT_STR(s, "lon");
    /* a dimension without a coordinate variable: hidden from zarr readers (docs/FORMAT.md) */
    ASSERT(has_key(dir, "lon", ".h5zarr_array"));
    ASSERT(!has_key(dir, "lon", "zarr.json") && !has_key(dir, "lon", ".zarray"));
    ASSERT(has_key(dir, "lat", version == 3 ? "zarr.json" : ".zarray"));
    ASSERT(!has_key(dir, "lat", ".h5zarr_array"));
    /* phony names: sizes in order of appearance (3, 7), as many of a size as one array needs (7: two) */
    dims_of(dir, "grid", version, s, sizeof s);
    ASSERT_STR(s, "phony_dim_0,phony_dim_1");
    dims_of(dir, "sq", version, s, sizeof s);
    ASSERT_STR(s, "phony_dim_1,phony_dim_2");
    dims_of(dir, "g/x", version, s, sizeof s); /* numbered per group */
    ASSERT_STR(s, "phony_dim_0");
    for (const char *const *nd = (const char *const[]){"", "time", "lat", "lon", "temp", "grid", "g", NULL};
         *nd; nd++)
        if (count_plain(dir, *nd, version, bookkeeping) != (!strcmp(*nd, "grid") || !strcmp(*nd, "g")))
            FAILF("node '/%s' (v%d) shows bookkeeping attributes as zarr attributes", *nd, version);
    ASSERT(plain_has(dir, "temp", version, "units"));
    ASSERT(plain_has(dir, "", version, "title"));
    ASSERT(plain_has(dir, "grid", version, "NAME"));
    ASSERT(plain_has(dir, "g", version, "CLASS"));
    if (version == 3)
        ASSERT(!plain_has(dir, "temp", version, "_ARRAY_DIMENSIONS"));

    /* through the connector: every attribute as written, in creation order */
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(attr_list(f, s, sizeof s) == 0);
    ASSERT_STR(s, "_NCProperties,title");
    ASSERT(get_str_attr(f, "_NCProperties", s, sizeof s) == 0);
    ASSERT_STR(s, "version=2,netcdf=4.9.3,hdf5=1.14.5");
    ASSERT((v = H5Dopen2(f, "temp", H5P_DEFAULT)) >= 0);
    ASSERT(attr_list(v, s, sizeof s) == 0);
    ASSERT_STR(s, "units,DIMENSION_LIST,_Netcdf4Coordinates");
    ASSERT_EQ_INT(H5Aexists(v, "_ARRAY_DIMENSIONS"), 0);
    {
        hid_t a = H5Aopen(v, "_Netcdf4Coordinates", H5P_DEFAULT);
        ASSERT(a >= 0 && H5Aread(a, H5T_NATIVE_INT, coords) >= 0);
        H5Aclose(a);
        ASSERT(coords[0] == 0 && coords[1] == 1 && coords[2] == 2);
    }
    ASSERT((lo = H5Dopen2(f, "lon", H5P_DEFAULT)) >= 0);
    ASSERT((la = H5Dopen2(f, "lat", H5P_DEFAULT)) >= 0);
    ASSERT(attr_list(lo, s, sizeof s) == 0);
    ASSERT_STR(s, "CLASS,NAME,_Netcdf4Dimid,REFERENCE_LIST");
    ASSERT(get_str_attr(lo, "CLASS", s, sizeof s) == 0);
    ASSERT_STR(s, "DIMENSION_SCALE");
    ASSERT(H5DSget_scale_name(lo, s, sizeof s) > 0);
    ASSERT_STR(s, NOT_A_VAR);
    ASSERT_EQ_INT(H5DSis_scale(la), 1);
    ASSERT_EQ_INT(H5DSis_attached(v, la, 1), 1);
    ASSERT_EQ_INT(H5DSis_attached(v, lo, 2), 1);
    ASSERT((lat_only = H5Dopen2(f, "grid", H5P_DEFAULT)) >= 0);
    ASSERT(get_str_attr(lat_only, "NAME", s, sizeof s) == 0);
    ASSERT_STR(s, "not a scale");
    H5Dclose(lat_only);
    H5Dclose(la);
    H5Dclose(lo);
    H5Dclose(v);
    ASSERT(H5Fclose(f) >= 0);

    /* a scale detached after reopening: the axis gets a phony name at close; the group's phony dims are
     * renumbered (size 5 now appears first) */
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT((v = H5Dopen2(f, "temp", H5P_DEFAULT)) >= 0);
    ASSERT((lo = H5Dopen2(f, "lon", H5P_DEFAULT)) >= 0);
    ASSERT(H5DSdetach_scale(v, lo, 2) >= 0);
    H5Dclose(lo);
    H5Dclose(v);
    ASSERT(H5Fclose(f) >= 0);
    dims_of(dir, "temp", version, s, sizeof s);
    ASSERT_STR(s, "time,latitude,phony_dim_0");
    dims_of(dir, "grid", version, s, sizeof s);
    ASSERT_STR(s, "phony_dim_1,phony_dim_2");
    dims_of(dir, "sq", version, s, sizeof s);
    ASSERT_STR(s, "phony_dim_2,phony_dim_3");
    dims_of(dir, "lon", version, s, sizeof s);
    ASSERT_STR(s, "lon");
    ASSERT(count_plain(dir, "temp", version, bookkeeping) == 0);
    ASSERT(count_plain(dir, "lon", version, bookkeeping) == 0);

    /* attached again, and a dataset made in a reopened file gets names too */
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT((v = H5Dopen2(f, "temp", H5P_DEFAULT)) >= 0);
    ASSERT((lo = H5Dopen2(f, "lon", H5P_DEFAULT)) >= 0);
    ASSERT(H5DSattach_scale(v, lo, 2) >= 0);
    {
        hsize_t d[1] = {5};
        hid_t   w    = mkdset(f, "wind", 1, d);
        ASSERT(w >= 0 && H5DSattach_scale(w, lo, 0) >= 0);
        H5Dclose(w);
    }
    H5Dclose(lo);
    H5Dclose(v);
    ASSERT(H5Fclose(f) >= 0);
    dims_of(dir, "temp", version, s, sizeof s);
    ASSERT_STR(s, "time,latitude,lon");
    dims_of(dir, "wind", version, s, sizeof s);
    ASSERT_STR(s, "lon");
    dims_of(dir, "grid", version, s, sizeof s);
    ASSERT_STR(s, "phony_dim_0,phony_dim_1");
    H5Pclose(fapl);
    return 0;
}

static int
test_dimension_names_v2(void)
{
    return check_dims(2);
}

static int
test_dimension_names_v3(void)
{
    return check_dims(3);
}

static herr_t
count_id(hid_t id, void *ud)
{
    (void)id;
    ++*(int *)ud;
    return 0;
}

/* How many dataset ids the library holds, of every file. */
static int
open_datasets(void)
{
    int n = 0;
    return H5Iiterate(H5I_DATASET, count_id, &n) < 0 ? -1 : n;
}

/* How many file ids the library holds. */
static int
open_files(void)
{
    int n = 0;
    return H5Iiterate(H5I_FILE, count_id, &n) < 0 ? -1 : n;
}

/* netCDF's close: H5F_CLOSE_WEAK, after a scale was attached to two datasets (HDF5's H5DSattach_scale
 * leaks the datasets it opens by reference on non-native files, H5DS.c:588). The store is closed as the
 * program sees it: a new create of the name works and starts empty, as nc_create after nc_close does.
 * A dataset the program opened through a reference and still uses keeps the store open, as in HDF5.
 * The ids HDF5 leaked in the store closed so are closed when its name is created again (they named
 * objects of the store that create replaces; each id left open slows every later walk of HDF5's id
 * table, netCDF's nc_test recreates its scratch file about 90 times), and so are the file ids the leaked
 * references hold (H5Rcreate_object looks its file id up among all of them). */
static int
weak_close_recreate(int version)
{
    const char *tmp = test_tmpdir("dims_weak");
    char        dir[4096];
    hid_t       fapl    = h5t_zarr_fapl(version), f, x, a, b, c;
    hsize_t     d[1]    = {4};
    int         vals[4] = {1, 2, 3, 4}, got[4] = {0}, before = open_datasets(), files = open_files();
    H5O_info2_t oi;
    H5R_ref_t   ref;

    ASSERT(tmp && fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_WEAK) >= 0 && before >= 0 && files >= 0);
    snprintf(dir, sizeof dir, "%s/weak_v%d.zarr", tmp, version);
    for (int round = 0; round < 2; round++) {
        ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
        ASSERT_EQ_INT(open_datasets(), before); /* the second round: what the first leaked is closed */
        ASSERT_EQ_INT(open_files(),
                      files + 1); /* f; in the second round the leaked references' file ids closed */
        ASSERT(H5Oexists_by_name(f, "x", H5P_DEFAULT) == 0); /* the second round starts empty */
        ASSERT((x = mkdset(f, "x", 1, d)) >= 0 && H5DSset_scale(x, "x") >= 0);
        ASSERT((a = mkdset(f, "a", 1, d)) >= 0 && H5DSattach_scale(a, x, 0) >= 0);
        ASSERT((b = mkdset(f, "b", 1, d)) >= 0 && H5DSattach_scale(b, x, 0) >= 0);
        ASSERT((c = mkdset(f, "c", 1, d)) >= 0 && H5DSattach_scale(c, x, 0) >= 0);
        ASSERT(H5Dwrite(b, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, vals) >= 0);
        H5Dclose(a), H5Dclose(b), H5Dclose(c), H5Dclose(x);
        ASSERT(H5Fclose(f) >= 0);
        ASSERT(open_datasets() > before); /* HDF5 1.14.5 leaked some (H5DS.c:588): this test sees them */
        ASSERT(open_files() > files);     /* and references holding a file id (H5DS.c:628, :648) */
        ASSERT(h5t_is_zarr_store(dir));
    }
    /* what the second round wrote is there, scales attached */
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((b = H5Dopen2(f, "b", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(b, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    ASSERT_EQ_INT(got[3], 4);
    ASSERT_EQ_INT(H5DSget_num_scales(b, 0), 1);
    /* a dataset opened through a reference and used keeps the store open after a weak close */
    ASSERT(H5Rcreate_object(f, "b", H5P_DEFAULT, &ref) >= 0);
    ASSERT((a = H5Ropen_object(&ref, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Rdestroy(&ref) >= 0);
    ASSERT(H5Oget_info3(a, &oi, H5O_INFO_BASIC) >= 0);
    memset(got, 0, sizeof got);
    ASSERT(H5Dread(a, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    H5Dclose(b);
    ASSERT(H5Fclose(f) >= 0);
    H5E_BEGIN_TRY { f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl); }
    H5E_END_TRY
    ASSERT(f < 0);
    memset(got, 0, sizeof got);
    ASSERT(H5Dread(a, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    ASSERT_EQ_INT(got[1], 2);
    ASSERT(H5Dclose(a) >= 0);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_weak_close_recreate_v2(void)
{
    return weak_close_recreate(2);
}

static int
test_weak_close_recreate_v3(void)
{
    return weak_close_recreate(3);
}

int
main(int argc, char **argv)
{
    static const test_entry tests[] = {TEST_ENTRY(dimension_names_v2), TEST_ENTRY(dimension_names_v3),
                                       TEST_ENTRY(weak_close_recreate_v2),
                                       TEST_ENTRY(weak_close_recreate_v3)};
    return RUN_TESTS(tests);
}
