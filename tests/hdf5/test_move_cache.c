/*
 * test_move_cache.c: what an H5Lmove leaves in the connector's node cache (vol/node.c, h5zv_node_moved) and
 * in the kept link listings of the two groups (vol/links.c). A move carries the cached nodes at and below
 * the moved name to their new paths, with their metadata and open arrays (zarr_array_set_path), instead of
 * forgetting them and reading them again from the store; the two groups' listings are edited in place
 * (the link out of one, into the other) instead of being listed again. As a test, for zarr v2 and v3:
 *  - a moved dataset serves its values and attributes at its new name, written before the move, through a
 *    handle left open across the move, and after it (whole and partial chunks), across groups, then a
 *    subtree move of the group holding it; a new dataset made at the old name is another object; after a
 *    reopen every value is where it was moved;
 *  - netCDF's rename pattern (each variable through a temporary name, the later ones moved out and back)
 *    with soft links created and deleted among the moves: the listings by creation order (names, creation
 *    order values, link types) and by name, in the open and after a reopen, are the same;
 *  - a moved node is the cache's, not read again from the store: an edit made to its document behind the
 *    connector's back (as to any cached node) is not seen at its new name, and a group made behind its back
 *    is not listed after a move (the kept listing is edited); a reopen sees both.
 */
#include "runner.h"

#include "h5test.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Makes int dataset `name` of 4 x 3 elements (chunks 2 x 3) holding base + k, with int attribute "tag" =
 * `tag`. */
static int
make_dset(hid_t loc, const char *name, int base, int tag)
{
    hsize_t dims[2] = {4, 3}, chunk[2] = {2, 3};
    int     v[12];
    hid_t   sp, dcpl, d, asp, a;
    for (int k = 0; k < 12; k++)
        v[k] = base + k;
    ASSERT((sp = H5Screate_simple(2, dims, NULL)) >= 0 && (dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
    ASSERT(H5Pset_chunk(dcpl, 2, chunk) >= 0);
    ASSERT((d = H5Dcreate2(loc, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    ASSERT((asp = H5Screate(H5S_SCALAR)) >= 0);
    ASSERT((a = H5Acreate2(d, "tag", H5T_NATIVE_INT, asp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, H5T_NATIVE_INT, &tag) >= 0 && H5Aclose(a) >= 0);
    H5Sclose(asp);
    H5Pclose(dcpl);
    H5Sclose(sp);
    ASSERT(H5Dclose(d) >= 0);
    return 0;
}

/* Checks that dataset `d` holds want[0..12) and its attribute "tag" is `tag`. */
static int
expect_open(hid_t d, const int *want, int tag)
{
    int   v[12], t = -1;
    hid_t a;
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    for (int k = 0; k < 12; k++)
        ASSERT_EQ_INT(v[k], want[k]);
    ASSERT((a = H5Aopen(d, "tag", H5P_DEFAULT)) >= 0);
    ASSERT(H5Aread(a, H5T_NATIVE_INT, &t) >= 0 && H5Aclose(a) >= 0);
    ASSERT_EQ_INT(t, tag);
    return 0;
}

/* expect_open of dataset `name` of `loc`, holding base + k (with want_at/want_val for one changed element,
 * want_at < 0: none). */
static int
expect_dset(hid_t loc, const char *name, int base, int tag, int want_at, int want_val)
{
    int   w[12];
    hid_t d;
    for (int k = 0; k < 12; k++)
        w[k] = k == want_at ? want_val : base + k;
    ASSERT((d = H5Dopen2(loc, name, H5P_DEFAULT)) >= 0);
    if (expect_open(d, w, tag) != 0) {
        fprintf(stderr, "  (dataset '%s')\n", name);
        H5Dclose(d);
        return 1;
    }
    ASSERT(H5Dclose(d) >= 0);
    return 0;
}

/* Writes value `val` at element (r, c) of open dataset `d` (a partial chunk: through the chunk cache). */
static int
poke(hid_t d, int r, int c, int val)
{
    hsize_t start[2] = {(hsize_t)r, (hsize_t)c}, one[2] = {1, 1};
    hid_t   fs, ms;
    ASSERT((fs = H5Dget_space(d)) >= 0 && (ms = H5Screate_simple(2, one, NULL)) >= 0);
    ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, one, NULL) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, &val) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    return 0;
}

static int
same_object(hid_t f, const char *a, const char *b)
{
    H5O_info2_t ia, ib;
    int         cmp = -1;
    if (H5Oget_info_by_name3(f, a, &ia, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ||
        H5Oget_info_by_name3(f, b, &ib, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ||
        H5Otoken_cmp(f, &ia.token, &ib.token, &cmp) < 0)
        return -1;
    return cmp == 0;
}

static int
moved_nodes_serve_their_values_v(int version)
{
    const char *tmp = test_tmpdir("move_cache");
    char        path[4096];
    hid_t       fapl = h5t_zarr_fapl(version), f, g, d, e;
    int         w[12];

    ASSERT(tmp && fapl >= 0);
    snprintf(path, sizeof path, "%s/values_v%d.zarr", tmp, version);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Gclose(g) >= 0 && H5Gcreate2(f, "g/sub", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(make_dset(f, "g/d", 100, 1) == 0 && make_dset(f, "g/sub/e", 200, 2) == 0);
    ASSERT(make_dset(f, "v", 300, 3) == 0);

    /* an open dataset moved twice (within its group, then to the root) with a partial write between */
    ASSERT((d = H5Dopen2(f, "g/d", H5P_DEFAULT)) >= 0);
    ASSERT(poke(d, 0, 1, -1) == 0);
    ASSERT(H5Lmove(f, "g/d", f, "g/d2", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(expect_dset(f, "g/d2", 100, 1, 1, -1) == 0);
    ASSERT(poke(d, 3, 2, -2) == 0); /* through the handle: lands in the moved dataset */
    ASSERT(H5Lmove(f, "g/d2", f, "d3", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Lexists(f, "g/d", H5P_DEFAULT) == 0 && H5Lexists(f, "g/d2", H5P_DEFAULT) == 0);
    for (int k = 0; k < 12; k++)
        w[k] = k == 1 ? -1 : k == 11 ? -2 : 100 + k;
    ASSERT(expect_open(d, w, 1) == 0);
    {
        hid_t d3 = H5Dopen2(f, "d3", H5P_DEFAULT);
        ASSERT(d3 >= 0 && expect_open(d3, w, 1) == 0 && H5Dclose(d3) >= 0);
    }
    /* a new dataset at the old name is another object; the moved handle still writes the moved one */
    ASSERT(make_dset(f, "g/d", 400, 4) == 0);
    ASSERT_EQ_INT(same_object(f, "g/d", "d3"), 0);
    ASSERT(poke(d, 2, 0, -3) == 0);
    w[6] = -3;
    ASSERT(expect_dset(f, "g/d", 400, 4, -1, 0) == 0);
    ASSERT(H5Dclose(d) >= 0);

    /* a subtree: the group holding an open dataset moves, and the nodes below it follow */
    ASSERT((e = H5Dopen2(f, "g/sub/e", H5P_DEFAULT)) >= 0);
    ASSERT(H5Lmove(f, "g", f, "h", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Lexists(f, "g", H5P_DEFAULT) == 0);
    ASSERT(expect_dset(f, "h/sub/e", 200, 2, -1, 0) == 0);
    ASSERT(expect_dset(f, "h/d", 400, 4, -1, 0) == 0);
    ASSERT(poke(e, 1, 1, -4) == 0);
    ASSERT(H5Lmove(f, "h/sub", f, "s2", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(expect_dset(f, "s2/e", 200, 2, 4, -4) == 0);
    ASSERT(H5Dclose(e) >= 0);
    /* back to the first name: a group made at a name moved away before */
    ASSERT(H5Lmove(f, "h", f, "g", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(expect_dset(f, "g/d", 400, 4, -1, 0) == 0 && expect_dset(f, "v", 300, 3, -1, 0) == 0);
    ASSERT(H5Fclose(f) >= 0);

    /* after a reopen, everything where it was moved */
    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    {
        hid_t d3 = H5Dopen2(f, "d3", H5P_DEFAULT);
        ASSERT(d3 >= 0 && expect_open(d3, w, 1) == 0 && H5Dclose(d3) >= 0);
    }
    ASSERT(expect_dset(f, "g/d", 400, 4, -1, 0) == 0);
    ASSERT(expect_dset(f, "s2/e", 200, 2, 4, -4) == 0);
    ASSERT(expect_dset(f, "v", 300, 3, -1, 0) == 0);
    ASSERT(H5Lexists(f, "h", H5P_DEFAULT) == 0 && H5Lexists(f, "g/sub", H5P_DEFAULT) == 0);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_moved_nodes_serve_their_values(void)
{
    return moved_nodes_serve_their_values_v(2) || moved_nodes_serve_their_values_v(3);
}

/* ---- listings ---------------------------------------------------------------------------------------- */
typedef struct {
    char   text[16384];
    size_t n;
} listing;

static herr_t
list_cb(hid_t g, const char *name, const H5L_info2_t *li, void *ud)
{
    listing *l = ud;
    (void)g;
    l->n += (size_t)snprintf(l->text + l->n, sizeof l->text - l->n, "%s:%lld:%d%s ", name,
                             li->corder_valid ? (long long)li->corder : -1LL, (int)li->type,
                             li->type == H5L_TYPE_HARD ? "" : "s");
    return l->n < sizeof l->text - 64 ? 0 : -1;
}

/* The links of group `path` by creation order then by name, as text. */
static int
list_group(hid_t f, const char *path, char *out, size_t cap)
{
    listing l1 = {{0}, 0}, l2 = {{0}, 0};
    hid_t   g;
    ASSERT((g = H5Gopen2(f, path, H5P_DEFAULT)) >= 0);
    ASSERT(H5Literate2(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, NULL, list_cb, &l1) >= 0);
    ASSERT(H5Literate2(g, H5_INDEX_NAME, H5_ITER_INC, NULL, list_cb, &l2) >= 0);
    ASSERT(H5Gclose(g) >= 0);
    snprintf(out, cap, "%s| %s", l1.text, l2.text);
    return 0;
}

static int
listing_after_moves_matches_reopen_v(int version)
{
    const char *tmp = test_tmpdir("move_cache");
    char        path[4096], name[32], to[32];
    static char open_root[40000], open_g[40000], re_root[40000], re_g[40000];
    hid_t       fapl = h5t_zarr_fapl(version), fcpl, gcpl, f, g;
    const int   nv   = 12;

    ASSERT(tmp && fapl >= 0);
    snprintf(path, sizeof path, "%s/listing_v%d.zarr", tmp, version);
    ASSERT((fcpl = H5Pcreate(H5P_FILE_CREATE)) >= 0 && (gcpl = H5Pcreate(H5P_GROUP_CREATE)) >= 0);
    ASSERT(H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) >= 0);
    ASSERT(H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) >= 0);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl)) >= 0);
    ASSERT((g = H5Gcreate2(f, "g", H5P_DEFAULT, gcpl, H5P_DEFAULT)) >= 0 && H5Gclose(g) >= 0);
    for (int i = 0; i < nv; i++) {
        snprintf(name, sizeof name, "v%d", i);
        ASSERT(make_dset(f, name, i * 10, i) == 0);
    }
    ASSERT(H5Fclose(f) >= 0);

    /* a reopen lists the groups from the store: their listings are kept, then edited by each move */
    ASSERT((f = H5Fopen(path, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT(list_group(f, "/", open_root, sizeof open_root) == 0);
    for (int i = 0; i < nv; i++) {
        /* netCDF's rename: through a temporary name, then the later variables out and back */
        snprintf(name, sizeof name, "v%d", i);
        snprintf(to, sizeof to, "new_%d", i);
        ASSERT(H5Lmove(f, name, f, "tmp", H5P_DEFAULT, H5P_DEFAULT) >= 0);
        ASSERT(H5Lmove(f, "tmp", f, to, H5P_DEFAULT, H5P_DEFAULT) >= 0);
        for (int j = i + 1; j < nv; j += 3) {
            snprintf(name, sizeof name, "v%d", j);
            ASSERT(H5Lmove(f, name, f, "tmp", H5P_DEFAULT, H5P_DEFAULT) >= 0);
            ASSERT(H5Lmove(f, "tmp", f, name, H5P_DEFAULT, H5P_DEFAULT) >= 0);
        }
        if (i % 4 == 0) { /* soft links among them, one moved into the group, one deleted */
            snprintf(name, sizeof name, "s%d", i);
            ASSERT(H5Lcreate_soft("/new_0", f, name, H5P_DEFAULT, H5P_DEFAULT) >= 0);
        }
        if (i == 5)
            ASSERT(H5Lmove(f, "s0", f, "g/s0", H5P_DEFAULT, H5P_DEFAULT) >= 0);
        if (i == 7)
            ASSERT(H5Ldelete(f, "s4", H5P_DEFAULT) >= 0);
        if (i == 9) /* a dataset into the group and one out of it */
            ASSERT(H5Lmove(f, "new_3", f, "g/n3", H5P_DEFAULT, H5P_DEFAULT) >= 0 &&
                   H5Lmove(f, "g/n3", f, "n3", H5P_DEFAULT, H5P_DEFAULT) >= 0 &&
                   H5Lmove(f, "new_2", f, "g/n2", H5P_DEFAULT, H5P_DEFAULT) >= 0);
        ASSERT(list_group(f, "/", open_root, sizeof open_root) == 0); /* kept listing, in between */
    }
    ASSERT(list_group(f, "/", open_root, sizeof open_root) == 0);
    ASSERT(list_group(f, "g", open_g, sizeof open_g) == 0);
    ASSERT(expect_dset(f, "n3", 30, 3, -1, 0) == 0 && expect_dset(f, "g/n2", 20, 2, -1, 0) == 0);
    ASSERT(expect_dset(f, "new_11", 110, 11, -1, 0) == 0);
    ASSERT(H5Fclose(f) >= 0);

    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(list_group(f, "/", re_root, sizeof re_root) == 0);
    ASSERT(list_group(f, "g", re_g, sizeof re_g) == 0);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT_STR(open_root, re_root);
    ASSERT_STR(open_g, re_g);
    ASSERT(strstr(re_root, "new_11:") && strstr(re_root, "n3:") && strstr(re_g, "s0:") &&
           strstr(re_g, "n2:") && !strstr(re_root, "s4:") && !strstr(re_root, " v"));
    H5Pclose(gcpl);
    H5Pclose(fcpl);
    H5Pclose(fapl);
    return 0;
}

static int
test_listing_after_moves_matches_reopen(void)
{
    return listing_after_moves_matches_reopen_v(2) || listing_after_moves_matches_reopen_v(3);
}

/* ---- a moved node is the cache's --------------------------------------------------------------------- */
/* Replaces the first "12345" in file `p` with "54321". */
static int
edit_behind(const char *p)
{
    FILE  *fp = fopen(p, "r+");
    char   buf[65536], *hit;
    size_t n;
    ASSERT(fp);
    n      = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    ASSERT((hit = strstr(buf, "12345")));
    memcpy(hit, "54321", 5);
    ASSERT(fseek(fp, 0, SEEK_SET) == 0 && fwrite(buf, 1, n, fp) == n && fclose(fp) == 0);
    return 0;
}

static int
moved_node_not_read_again_v(int version)
{
    const char *tmp = test_tmpdir("move_cache");
    char        path[4096], docp[4200];
    hid_t       fapl = h5t_zarr_fapl(version), f, d;

    ASSERT(tmp && fapl >= 0);
    snprintf(path, sizeof path, "%s/behind_v%d.zarr", tmp, version);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(make_dset(f, "a", 12345, 12345) == 0);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((f = H5Fopen(path, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "a", H5P_DEFAULT)) >= 0 && expect_dset(f, "a", 12345, 12345, -1, 0) == 0);
    /* the attribute's value in the stored document changes behind the connector */
    snprintf(docp, sizeof docp, "%s/a/%s", path, version == 3 ? "zarr.json" : ".zattrs");
    ASSERT(edit_behind(docp) == 0);
    ASSERT(H5Lmove(f, "a", f, "b", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(expect_dset(f, "b", 12345, 12345, -1, 0) == 0); /* the cache's node, at its new name */
    ASSERT(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(expect_dset(f, "b", 12345, 54321, -1, 0) == 0); /* the store's, after a reopen */
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_moved_node_not_read_again(void)
{
    return moved_node_not_read_again_v(2) || moved_node_not_read_again_v(3);
}

static int
kept_listing_edited_v(int version)
{
    const char *tmp = test_tmpdir("move_cache");
    static char text[40000];
    char        path[4096], docp[4200];
    hid_t       fapl = h5t_zarr_fapl(version), f;
    FILE       *fp;

    ASSERT(tmp && fapl >= 0);
    snprintf(path, sizeof path, "%s/listing_behind_v%d.zarr", tmp, version);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(make_dset(f, "a", 1, 1) == 0 && make_dset(f, "b", 2, 2) == 0);
    ASSERT(H5Fclose(f) >= 0);
    /* the root's listing, kept: a group made behind the connector's back is not listed after a move (the
     * listing is edited, not made again from the store) */
    ASSERT((f = H5Fopen(path, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT(list_group(f, "/", text, sizeof text) == 0 && strstr(text, "b:") && !strstr(text, "zz:"));
    snprintf(docp, sizeof docp, "%s/zz", path);
    ASSERT(mkdir(docp, 0777) == 0);
    snprintf(docp, sizeof docp, "%s/zz/%s", path, version == 3 ? "zarr.json" : ".zgroup");
    ASSERT((fp = fopen(docp, "w")) &&
           fputs(version == 3 ? "{\"zarr_format\": 3, \"node_type\": \"group\"}" : "{\"zarr_format\": 2}",
                 fp) >= 0 &&
           fclose(fp) == 0);
    ASSERT(H5Lmove(f, "b", f, "c", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(list_group(f, "/", text, sizeof text) == 0 && strstr(text, "c:") && !strstr(text, "zz:"));
    ASSERT(H5Lexists(f, "zz", H5P_DEFAULT) == 0);
    ASSERT(H5Fclose(f) >= 0);
    /* a reopen lists the store: there it is */
    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(H5Lexists(f, "zz", H5P_DEFAULT) > 0 && expect_dset(f, "c", 2, 2, -1, 0) == 0);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_kept_listing_edited(void)
{
    return kept_listing_edited_v(2) || kept_listing_edited_v(3);
}

/* A dataset the cache has not loaded (listed only) moved into a group made in this open (whose children
 * the cache knows): it is found there. */
static int
unloaded_node_moved_into_new_group_v(int version)
{
    const char *tmp = test_tmpdir("move_cache");
    static char text[40000];
    char        path[4096];
    hid_t       fapl = h5t_zarr_fapl(version), f, g;

    ASSERT(tmp && fapl >= 0);
    snprintf(path, sizeof path, "%s/unloaded_v%d.zarr", tmp, version);
    ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(make_dset(f, "a", 5, 6) == 0 && make_dset(f, "b", 7, 8) == 0);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((f = H5Fopen(path, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT(list_group(f, "/", text, sizeof text) == 0 && strstr(text, "a:"));
    ASSERT((g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0 && H5Gclose(g) >= 0);
    ASSERT(H5Lmove(f, "a", f, "g/a", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Lexists(f, "g/a", H5P_DEFAULT) > 0);
    ASSERT(list_group(f, "g", text, sizeof text) == 0 && strstr(text, "a:"));
    ASSERT(expect_dset(f, "g/a", 5, 6, -1, 0) == 0);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(expect_dset(f, "g/a", 5, 6, -1, 0) == 0 && expect_dset(f, "b", 7, 8, -1, 0) == 0);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_unloaded_node_moved_into_new_group(void)
{
    return unloaded_node_moved_into_new_group_v(2) || unloaded_node_moved_into_new_group_v(3);
}

int
main(int argc, char **argv)
{
    static const test_entry tests[] = {TEST_ENTRY(moved_nodes_serve_their_values),
                                       TEST_ENTRY(listing_after_moves_matches_reopen),
                                       TEST_ENTRY(moved_node_not_read_again), TEST_ENTRY(kept_listing_edited),
                                       TEST_ENTRY(unloaded_node_moved_into_new_group)};
    return RUN_TESTS(tests);
}
