/*
 * test_reserved_place.c: where the connector keeps its reserved object `_h5zarr` (docs/FORMAT.md, "The
 * reserved object _h5zarr"): a top-level key of each node's own metadata document (zarr v2 .zarray /
 * .zgroup, v3 zarr.json with "must_understand": false), never a zarr attribute, so zarr readers do not
 * show it. Stores written before kept it as an attribute named `_h5zarr` (v2 .zattrs, v3 `attributes`):
 * they open and read as before, and a node written read-write moves it to its place.
 */
#include "runner.h"
#include "h5test.h"

#include <json-c/json.h>

static const char *dir;

/* The JSON document `rel` of `store` (new reference, or NULL). */
static struct json_object *
doc_of(const char *store, const char *rel)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", store, rel);
    return json_object_from_file(p);
}

/* Where `_h5zarr` is for node `node` ("" root) of a store of `version`: 1 top-level key of its
 * document only, 2 attribute only, 0 neither, -1 both (or a v3 key without "must_understand": false). */
static int
place_of(const char *store, const char *node, int version, bool group)
{
    char                rel[300];
    struct json_object *doc, *attrs = NULL, *top = NULL, *mu = NULL;
    int                 in_doc, in_attrs;

    snprintf(rel, sizeof rel, "%s%s%s", node, *node ? "/" : "",
             version == 3 ? "zarr.json"
             : group      ? ".zgroup"
                          : ".zarray");
    if (!(doc = doc_of(store, rel)))
        return -2;
    in_doc = json_object_object_get_ex(doc, "_h5zarr", &top);
    if (in_doc && version == 3 &&
        (!json_object_object_get_ex(top, "must_understand", &mu) || json_object_get_boolean(mu)))
        in_doc = -1;
    if (version == 3)
        json_object_object_get_ex(doc, "attributes", &attrs);
    else {
        json_object_put(doc);
        snprintf(rel, sizeof rel, "%s%s.zattrs", node, *node ? "/" : "");
        attrs = doc = doc_of(store, rel);
    }
    in_attrs = attrs && json_object_object_get_ex(attrs, "_h5zarr", NULL);
    json_object_put(doc);
    if (in_doc < 0 || (in_doc && in_attrs))
        return -1;
    return in_doc ? 1 : in_attrs ? 2 : 0;
}

/* Rewrites node `node` of `store` as the connector wrote it before: the reserved object (less v3's
 * must_understand) moved from the document's top level into its attributes. */
static int
make_legacy(const char *store, const char *node, int version, bool group)
{
    char                rel[300], p[1200];
    struct json_object *doc, *m, *attrs, *old;

    snprintf(rel, sizeof rel, "%s%s%s", node, *node ? "/" : "",
             version == 3 ? "zarr.json"
             : group      ? ".zgroup"
                          : ".zarray");
    snprintf(p, sizeof p, "%s/%s", store, rel);
    ASSERT((doc = json_object_from_file(p)) != NULL && json_object_object_get_ex(doc, "_h5zarr", &m));
    m = json_object_get(m);
    json_object_object_del(doc, "_h5zarr");
    json_object_object_del(m, "must_understand");
    if (version == 3) {
        ASSERT(json_object_object_get_ex(doc, "attributes", &attrs));
        json_object_object_add(attrs, "_h5zarr", m);
        ASSERT(json_object_to_file_ext(p, doc, JSON_C_TO_STRING_PRETTY) == 0);
        json_object_put(doc);
        return 0;
    }
    ASSERT(json_object_to_file_ext(p, doc, JSON_C_TO_STRING_PRETTY) == 0);
    json_object_put(doc);
    snprintf(p, sizeof p, "%s/%s%s.zattrs", store, node, *node ? "/" : "");
    if (!(old = json_object_from_file(p)))
        old = json_object_new_object();
    json_object_object_add(old, "_h5zarr", m);
    ASSERT(json_object_to_file_ext(p, old, JSON_C_TO_STRING_PRETTY) == 0);
    json_object_put(old);
    return 0;
}

/* A root with links made in the order b, a (creation order tracked), a dataset /b of int16 big-endian
 * (a recorded type) with an unlimited dimension (recorded maxdims), an int16 attribute on it and a
 * float attribute on the root (recorded types). */
static int
make_store(const char *store, int version)
{
    hid_t fapl = h5t_zarr_fapl(version), fcpl = H5Pcreate(H5P_FILE_CREATE),
          dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t   f, d, s, sa, a, g;
    hsize_t dims = 6, maxd = H5S_UNLIMITED, chunk = 4;
    short   v[6] = {1, -2, 3, -4, 5, -6}, av = -7;
    float   fv = 2.5f;

    ASSERT(H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) >= 0);
    ASSERT(H5Pset_chunk(dcpl, 1, &chunk) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, fcpl, fapl)) >= 0);
    ASSERT((s = H5Screate_simple(1, &dims, &maxd)) >= 0 && (sa = H5Screate(H5S_SCALAR)) >= 0);
    ASSERT((d = H5Dcreate2(f, "b", H5T_STD_I16BE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_SHORT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    ASSERT((a = H5Acreate2(d, "count", H5T_STD_I16LE, sa, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, H5T_NATIVE_SHORT, &av) >= 0 && H5Aclose(a) >= 0);
    ASSERT((g = H5Gcreate2(f, "a", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0 && H5Gclose(g) >= 0);
    ASSERT((a = H5Acreate2(f, "scale", H5T_IEEE_F32LE, sa, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, H5T_NATIVE_FLOAT, &fv) >= 0 && H5Aclose(a) >= 0);
    ASSERT(H5Dclose(d) >= 0 && H5Sclose(s) >= 0 && H5Sclose(sa) >= 0 && H5Fclose(f) >= 0);
    H5Pclose(fapl);
    H5Pclose(fcpl);
    H5Pclose(dcpl);
    return 0;
}

static herr_t
name_cb(hid_t loc, const char *name, const H5L_info2_t *info, void *ud)
{
    (void)loc;
    (void)info;
    strcat(ud, name);
    strcat(ud, ";");
    return 0;
}

static herr_t
attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *ud)
{
    (void)loc;
    (void)info;
    strcat(ud, name);
    strcat(ud, ";");
    return 0;
}

/* Everything make_store made reads back as made: types, values, max dims, link order; no attribute
 * named _h5zarr is listed. */
static int
check_store(const char *store, int version, unsigned intent)
{
    hid_t   fapl = h5t_zarr_fapl(version), f, d, t, s, a;
    hsize_t dims[1], maxd[1];
    short   v[6], av = 0;
    float   fv        = 0;
    char    links[64] = "", attrs[128] = "";

    ASSERT((f = H5Fopen(store, intent, fapl)) >= 0);
    ASSERT(H5Literate2(f, H5_INDEX_CRT_ORDER, H5_ITER_INC, NULL, name_cb, links) >= 0);
    ASSERT_STR(links, "b;a;");
    ASSERT(H5Aiterate2(f, H5_INDEX_NAME, H5_ITER_INC, NULL, attr_cb, attrs) >= 0);
    ASSERT_STR(attrs, "scale;");
    ASSERT((a = H5Aopen(f, "scale", H5P_DEFAULT)) >= 0 && (t = H5Aget_type(a)) >= 0);
    ASSERT(H5Tequal(t, H5T_IEEE_F32LE) > 0 && H5Aread(a, H5T_NATIVE_FLOAT, &fv) >= 0 && fv == 2.5f);
    ASSERT(H5Tclose(t) >= 0 && H5Aclose(a) >= 0);
    ASSERT((d = H5Dopen2(f, "b", H5P_DEFAULT)) >= 0 && (t = H5Dget_type(d)) >= 0);
    ASSERT(H5Tequal(t, H5T_STD_I16BE) > 0 && H5Tclose(t) >= 0);
    ASSERT((s = H5Dget_space(d)) >= 0 && H5Sget_simple_extent_dims(s, dims, maxd) == 1);
    ASSERT(dims[0] == 6 && maxd[0] == H5S_UNLIMITED && H5Sclose(s) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_SHORT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0 && v[1] == -2 && v[5] == -6);
    attrs[0] = '\0';
    ASSERT(H5Aiterate2(d, H5_INDEX_NAME, H5_ITER_INC, NULL, attr_cb, attrs) >= 0);
    ASSERT_STR(attrs, "count;");
    ASSERT(H5Aexists(d, "_h5zarr") == 0);
    ASSERT((a = H5Aopen(d, "count", H5P_DEFAULT)) >= 0 && (t = H5Aget_type(a)) >= 0);
    ASSERT(H5Tequal(t, H5T_STD_I16LE) > 0 && H5Aread(a, H5T_NATIVE_SHORT, &av) >= 0 && av == -7);
    ASSERT(H5Tclose(t) >= 0 && H5Aclose(a) >= 0 && H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_setup(void)
{
    ASSERT((dir = test_tmpdir("reserved_place")) != NULL);
    return 0;
}

/* New stores: the reserved object in the documents, none in the attributes. */
static int
test_new_stores(void)
{
    for (int version = 2; version <= 3; version++) {
        char store[600];
        snprintf(store, sizeof store, "%s/new%d.zarr", dir, version);
        ASSERT(make_store(store, version) == 0);
        ASSERT_EQ_INT(place_of(store, "", version, true), 1);
        ASSERT_EQ_INT(place_of(store, "b", version, false), 1);
        if (check_store(store, version, H5F_ACC_RDONLY))
            return 1;
    }
    return 0;
}

/* Stores written before: read as before read-only (nothing written), and moved when written read-write. */
static int
test_legacy_stores(void)
{
    for (int version = 2; version <= 3; version++) {
        char  store[600];
        hid_t fapl = h5t_zarr_fapl(version), f, d, sa, a;
        int   one  = 1;
        snprintf(store, sizeof store, "%s/old%d.zarr", dir, version);
        ASSERT(make_store(store, version) == 0);
        ASSERT(make_legacy(store, "", version, true) == 0 && make_legacy(store, "b", version, false) == 0);
        ASSERT_EQ_INT(place_of(store, "", version, true), 2);
        ASSERT_EQ_INT(place_of(store, "b", version, false), 2);
        if (check_store(store, version, H5F_ACC_RDONLY))
            return 1;
        ASSERT_EQ_INT(place_of(store, "", version, true), 2); /* read-only: unchanged */
        /* read-write without changes: nothing needs writing, the store stays as it was */
        if (check_store(store, version, H5F_ACC_RDWR))
            return 1;
        /* a change to both nodes writes them: the reserved object moves to the document */
        ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0 && (d = H5Dopen2(f, "b", H5P_DEFAULT)) >= 0);
        ASSERT((sa = H5Screate(H5S_SCALAR)) >= 0);
        ASSERT((a = H5Acreate2(d, "flag", H5T_STD_U8LE, sa, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Awrite(a, H5T_NATIVE_INT, &one) >= 0 && H5Aclose(a) >= 0 && H5Adelete(d, "flag") >= 0);
        ASSERT((a = H5Acreate2(f, "flag", H5T_STD_U8LE, sa, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Awrite(a, H5T_NATIVE_INT, &one) >= 0 && H5Aclose(a) >= 0 && H5Adelete(f, "flag") >= 0);
        ASSERT(H5Sclose(sa) >= 0 && H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
        ASSERT_EQ_INT(place_of(store, "", version, true), 1);
        ASSERT_EQ_INT(place_of(store, "b", version, false), 1);
        if (check_store(store, version, H5F_ACC_RDONLY))
            return 1;
        H5Pclose(fapl);
    }
    return 0;
}

/* zarr-python 2.13 (Debian) opens the v2 store and lists no _h5zarr attribute anywhere, also on a
 * store written before once converted. */
static int
test_zarr_python(void)
{
    char cmd[2000];
    if (access("/usr/bin/python3", X_OK) != 0 ||
        system(
            "env -u HDF5_PLUGIN_PATH -u HDF5_VOL_CONNECTOR /usr/bin/python3 -c 'import zarr' 2>/dev/null")) {
        printf("  skipped: zarr-python (Debian python3-zarr) missing\n");
        return 0;
    }
    snprintf(cmd, sizeof cmd,
             "env -u HDF5_PLUGIN_PATH -u HDF5_VOL_CONNECTOR /usr/bin/python3 -c '\n"
             "import sys, zarr\n"
             "for st in sys.argv[1:]:\n"
             "    g = zarr.open_group(st, mode=\"r\")\n"
             "    assert \"_h5zarr\" not in g.attrs and g.attrs[\"scale\"] == 2.5, dict(g.attrs)\n"
             "    b = g[\"b\"]\n"
             "    assert \"_h5zarr\" not in b.attrs and b.attrs[\"count\"] == -7, dict(b.attrs)\n"
             "    assert list(b[:]) == [1, -2, 3, -4, 5, -6], b[:]\n"
             "' %s/new2.zarr %s/old2.zarr",
             dir, dir);
    ASSERT(system(cmd) == 0);
    return 0;
}

static const test_entry tests[] = {TEST_ENTRY(setup), TEST_ENTRY(new_stores), TEST_ENTRY(legacy_stores),
                                   TEST_ENTRY(zarr_python)};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
