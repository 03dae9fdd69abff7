/*
 * test_vol_caches.c: the connector remembers, per file, what it found at each path (present or
 * absent) and each group's link list. These tests change a group in every way a link can change
 * (create, soft link, delete, move, a node replaced by another kind) after the group was listed and
 * its paths probed, and check that listings, by-index lookups and existence answers follow, and that
 * moves keep every object's identity (token) whatever else is cached. An older dataset handle follows
 * another handle's H5Dset_extent in transfers with H5S_ALL (its own dataspace is a cache too).
 */
#include "runner.h"

#include <hdf5.h>
#include <sys/stat.h>

#include "h5zarr/h5zarr.h"

typedef struct names {
    char buf[256];
    int  n;
} names;

static herr_t
collect(hid_t g, const char *name, const H5L_info2_t *info, void *ud)
{
    names *nm = ud;
    (void)g;
    (void)info;
    if (nm->n++)
        strncat(nm->buf, ",", sizeof nm->buf - strlen(nm->buf) - 1);
    strncat(nm->buf, name, sizeof nm->buf - strlen(nm->buf) - 1);
    return 0;
}

/* The link names of group `path` in name order, comma-separated, into nm. */
static int
list(hid_t f, const char *path, names *nm)
{
    memset(nm, 0, sizeof *nm);
    return H5Literate_by_name2(f, path, H5_INDEX_NAME, H5_ITER_INC, NULL, collect, nm, H5P_DEFAULT) < 0 ? -1
                                                                                                        : 0;
}

/* Name of link `idx` (name order) in group `path`, into buf. */
static const char *
name_at(hid_t f, const char *path, hsize_t idx, char *buf, size_t n)
{
    if (H5Lget_name_by_idx(f, path, H5_INDEX_NAME, H5_ITER_INC, idx, buf, n, H5P_DEFAULT) < 0)
        return NULL;
    return buf;
}

static hid_t
make_dset(hid_t f, const char *name)
{
    hsize_t d  = 4;
    hid_t   sp = H5Screate_simple(1, &d, NULL);
    hid_t   id = H5Dcreate2(f, name, H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sclose(sp);
    return id;
}

/* A group's children are loaded as one batch on the engine pool when it is listed (v2, v3, and from a
 * consolidated view): the listing names every child, each dataset opens with its own values, and a
 * child whose document is corrupt fails alone, on every open (v3: its listing fails, as a probe of
 * each child always made it; the children still open by path). */
static int
test_listing_batched(void)
{
    for (int mode = 0; mode < 3; mode++) { /* v2, v3, v3 with consolidated metadata */
        const char *dir  = test_tmpdir(mode == 0   ? "caches-batch-2"
                                       : mode == 1 ? "caches-batch-3"
                                                   : "caches-batch-c");
        hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f, d;
        names       nm;
        char        path[64], bad[128];
        int         v[4];
        ASSERT(dir);
        ASSERT(H5Pset_fapl_zarr_opts(fapl, mode == 0 ? 2 : 3, mode == 2 ? "consolidated=1" : NULL) >= 0);
        ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
        ASSERT(H5Gclose(H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        for (int i = 0; i < 12; i++) {
            for (int k = 0; k < 4; k++)
                v[k] = i * 10 + k;
            snprintf(path, sizeof path, "g/d%02d", i);
            ASSERT((d = make_dset(f, path)) >= 0);
            ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
            H5Dclose(d);
        }
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "g/s%d", i);
            ASSERT(H5Gclose(H5Gcreate2(f, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        }
        ASSERT(H5Fclose(f) >= 0);
        if (mode < 2) { /* d05's own document corrupt (the consolidated view does not read it) */
            FILE *fp;
            snprintf(bad, sizeof bad, "%s/g/d05/%s", dir, mode == 0 ? ".zarray" : "zarr.json");
            ASSERT((fp = fopen(bad, "w")) != NULL);
            fputs("{\"zarr_format\": [", fp);
            fclose(fp);
        }
        ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
        if (mode == 1) { /* v3: a listing probes each child's zarr.json, so it fails */
            H5E_BEGIN_TRY { ASSERT(list(f, "g", &nm) < 0); }
            H5E_END_TRY
        }
        else {
            ASSERT(list(f, "g", &nm) == 0);
            ASSERT_STR(nm.buf, "d00,d01,d02,d03,d04,d05,d06,d07,d08,d09,d10,d11,s0,s1,s2");
        }
        for (int i = 0; i < 12; i++) {
            snprintf(path, sizeof path, "g/d%02d", i);
            if (i == 5 && mode < 2) {
                for (int again = 0; again < 2; again++) {
                    H5E_BEGIN_TRY { d = H5Dopen2(f, path, H5P_DEFAULT); }
                    H5E_END_TRY
                    ASSERT(d < 0);
                }
                continue;
            }
            ASSERT((d = H5Dopen2(f, path, H5P_DEFAULT)) >= 0);
            ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
            for (int k = 0; k < 4; k++)
                ASSERT_EQ_INT(v[k], i * 10 + k);
            H5Dclose(d);
        }
        ASSERT(H5Fclose(f) >= 0);
        H5Pclose(fapl);
    }
    return 0;
}

static int
test_listing_follows_link_changes(void)
{
    const char *tmp = test_tmpdir("volcaches");
    char        dir[4096], nb[64];
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f, g, d;
    names       nm;
    H5G_info_t  gi;

    ASSERT(tmp);
    snprintf(dir, sizeof dir, "%s/links.zarr", tmp);
    ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((d = make_dset(g, "c")) >= 0);
    H5Dclose(d);
    ASSERT((d = make_dset(g, "a")) >= 0);
    H5Dclose(d);

    ASSERT(list(f, "g", &nm) == 0);
    ASSERT_STR(nm.buf, "a,c");
    ASSERT_STR(name_at(f, "g", 1, nb, sizeof nb), "c");

    /* a new child after the listing */
    ASSERT((d = make_dset(g, "b")) >= 0);
    H5Dclose(d);
    ASSERT_STR(name_at(f, "g", 1, nb, sizeof nb), "b");
    /* a soft link (a record in the group, no node) */
    ASSERT(H5Lcreate_soft("/g/a", g, "s", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Gget_info(g, &gi) >= 0);
    ASSERT_EQ_INT(gi.nlinks, 4);
    ASSERT(list(f, "g", &nm) == 0);
    ASSERT_STR(nm.buf, "a,b,c,s");
    /* deleted */
    ASSERT(H5Ldelete(f, "g/a", H5P_DEFAULT) >= 0);
    ASSERT(list(f, "g", &nm) == 0);
    ASSERT_STR(nm.buf, "b,c,s");
    ASSERT_STR(name_at(f, "g", 0, nb, sizeof nb), "b");
    /* moved, within the group and out of it */
    ASSERT(H5Lmove(g, "c", g, "z", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(list(f, "g", &nm) == 0);
    ASSERT_STR(nm.buf, "b,s,z");
    ASSERT(H5Lmove(g, "b", f, "b2", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(list(f, "g", &nm) == 0);
    ASSERT_STR(nm.buf, "s,z");
    ASSERT(list(f, "/", &nm) == 0);
    ASSERT_STR(nm.buf, "b2,g");

    /* creation order still reported after all that */
    ASSERT(H5Gclose(g) >= 0);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(list(f, "g", &nm) == 0);
    ASSERT_STR(nm.buf, "s,z");
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_existence_follows_creates_and_deletes(void)
{
    const char *tmp = test_tmpdir("volcaches");
    char        dir[4096];
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f, d, g, o;
    H5O_info2_t oi;

    ASSERT(tmp);
    snprintf(dir, sizeof dir, "%s/exists.zarr", tmp);
    ASSERT(H5Pset_fapl_zarr(fapl, 2) >= 0);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);

    /* absent, then made */
    ASSERT(H5Lexists(f, "x", H5P_DEFAULT) == 0);
    ASSERT(H5Oexists_by_name(f, "x", H5P_DEFAULT) == 0);
    ASSERT((d = make_dset(f, "x")) >= 0);
    H5Dclose(d);
    ASSERT(H5Lexists(f, "x", H5P_DEFAULT) > 0);
    ASSERT(H5Oget_info_by_name3(f, "x", &oi, H5O_INFO_BASIC, H5P_DEFAULT) >= 0);
    ASSERT_EQ_INT(oi.type, H5O_TYPE_DATASET);

    /* deleted, then made again as another kind of object */
    ASSERT(H5Ldelete(f, "x", H5P_DEFAULT) >= 0);
    ASSERT(H5Lexists(f, "x", H5P_DEFAULT) == 0);
    ASSERT((g = H5Gcreate2(f, "x", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Gclose(g);
    ASSERT(H5Oget_info_by_name3(f, "x", &oi, H5O_INFO_BASIC, H5P_DEFAULT) >= 0);
    ASSERT_EQ_INT(oi.type, H5O_TYPE_GROUP);

    /* a name looked up (absent) and then made a soft link resolves to its target */
    ASSERT(H5Oexists_by_name(f, "x/s", H5P_DEFAULT) == 0);
    ASSERT((d = make_dset(f, "x/t")) >= 0);
    H5Dclose(d);
    ASSERT(H5Lcreate_soft("/x/t", f, "x/s", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT((o = H5Oopen(f, "x/s", H5P_DEFAULT)) >= 0);
    ASSERT(H5Oget_info3(o, &oi, H5O_INFO_BASIC) >= 0);
    ASSERT_EQ_INT(oi.type, H5O_TYPE_DATASET);
    H5Oclose(o);

    /* moved: the old name is gone, the new one is there */
    ASSERT(H5Lmove(f, "x/t", f, "y", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Lexists(f, "x/t", H5P_DEFAULT) == 0);
    ASSERT(H5Oget_info_by_name3(f, "y", &oi, H5O_INFO_BASIC, H5P_DEFAULT) >= 0);
    ASSERT_EQ_INT(oi.type, H5O_TYPE_DATASET);

    /* copied onto a name probed before */
    ASSERT(H5Lexists(f, "y2", H5P_DEFAULT) == 0);
    ASSERT(H5Ocopy(f, "y", f, "y2", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Oget_info_by_name3(f, "y2", &oi, H5O_INFO_BASIC, H5P_DEFAULT) >= 0);
    ASSERT_EQ_INT(oi.type, H5O_TYPE_DATASET);

    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* The token of the object at `path`, into *tok. */
static int
token_at(hid_t f, const char *path, H5O_token_t *tok)
{
    H5O_info2_t oi;
    if (H5Oget_info_by_name3(f, path, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
        return -1;
    *tok = oi.token;
    return 0;
}

/* 1 when the objects at paths a (in fa) and b (in fb) have the same token. */
static int
same_token(hid_t f, const char *a, const char *b)
{
    H5O_token_t ta, tb;
    int         cmp = 1;
    if (token_at(f, a, &ta) < 0 || token_at(f, b, &tb) < 0 || H5Otoken_cmp(f, &ta, &tb, &cmp) < 0)
        return -1;
    return cmp == 0;
}

/* Moves change no object's identity: the tokens of objects the moves do not touch stay as they were,
 * a moved object (and everything under a moved group) keeps its token under its new name, an open
 * handle follows it, and a new object made at the old name is another object. */
static int
test_tokens_follow_moves(void)
{
    const char *tmp = test_tmpdir("volcaches");
    char        dir[4096], p[64];
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f, g, d, lon, lon2;
    H5O_token_t before[8], t, t2;
    int         cmp, i, v[4] = {1, 2, 3, 4}, r[4];
    H5O_info2_t oi;

    ASSERT(tmp);
    snprintf(dir, sizeof dir, "%s/tokens.zarr", tmp);
    ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    /* bystanders: /o0../o3 at the root, /g/k0../g/k3 in a group that moves */
    ASSERT((g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    for (i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "o%d", i);
        ASSERT((d = make_dset(f, p)) >= 0);
        H5Dclose(d);
        ASSERT(token_at(f, p, &before[i]) == 0);
        snprintf(p, sizeof p, "g/k%d", i);
        ASSERT((d = make_dset(f, p)) >= 0);
        H5Dclose(d);
        ASSERT(token_at(f, p, &before[4 + i]) == 0);
    }
    for (i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "o%d", i);
        ASSERT(same_token(f, p, p) == 1);
        ASSERT(token_at(f, p, &t) == 0 && H5Otoken_cmp(f, &t, &before[4 + i], &cmp) >= 0);
        ASSERT(cmp != 0);
    }

    /* a coordinate variable renamed as netCDF does: open, moved, a new one made at the old name */
    ASSERT((lon = make_dset(f, "lon")) >= 0);
    ASSERT(H5Oget_info3(lon, &oi, H5O_INFO_BASIC) >= 0);
    t = oi.token;
    ASSERT(H5Lmove(f, "lon", f, "x", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT((lon2 = make_dset(f, "lon")) >= 0);
    ASSERT(H5Dwrite(lon, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    ASSERT(token_at(f, "x", &t2) == 0 && H5Otoken_cmp(f, &t, &t2, &cmp) >= 0);
    ASSERT_EQ_INT(cmp, 0);
    ASSERT(same_token(f, "x", "lon") == 0);
    ASSERT(H5Oget_info3(lon, &oi, H5O_INFO_BASIC) >= 0 && H5Otoken_cmp(f, &t, &oi.token, &cmp) >= 0);
    ASSERT_EQ_INT(cmp, 0);

    /* the group moves twice, its members with it */
    ASSERT(H5Lmove(f, "g", f, "h", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Lmove(f, "h", f, "h2", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    for (i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "o%d", i);
        ASSERT(token_at(f, p, &t2) == 0 && H5Otoken_cmp(f, &before[i], &t2, &cmp) >= 0);
        ASSERT_EQ_INT(cmp, 0);
        snprintf(p, sizeof p, "h2/k%d", i);
        ASSERT(token_at(f, p, &t2) == 0 && H5Otoken_cmp(f, &before[4 + i], &t2, &cmp) >= 0);
        ASSERT_EQ_INT(cmp, 0);
    }
    ASSERT(H5Gclose(g) >= 0);
    ASSERT(H5Dclose(lon) >= 0);
    ASSERT(H5Dclose(lon2) >= 0);

    /* the data went to the moved dataset, not to the newcomer */
    ASSERT((d = H5Dopen2(f, "x", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    ASSERT_EQ_INT(r[0], 1);
    ASSERT_EQ_INT(r[3], 4);
    H5Dclose(d);
    ASSERT((d = H5Dopen2(f, "lon", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    ASSERT_EQ_INT(r[0], 0);
    ASSERT_EQ_INT(r[3], 0);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* netCDF's nc_rename_var moves each variable through one temporary name: many rounds of renames, with
 * moves into and out of a group between them, keep every object's token; a newcomer at a name something
 * left has another one. */
static int
test_tokens_through_renames(void)
{
    enum { NV = 64, ROUNDS = 4 };
    const char *tmp = test_tmpdir("volcaches");
    char        dir[4096], p[64], q[64];
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f, d, g;
    H5O_token_t before[NV], t, tg;
    int         cmp, i, r;

    ASSERT(tmp);
    snprintf(dir, sizeof dir, "%s/renames.zarr", tmp);
    ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((g = H5Gcreate2(f, "grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Gclose(g) >= 0);
    ASSERT(token_at(f, "grp", &tg) == 0);
    for (i = 0; i < NV; i++) {
        snprintf(p, sizeof p, "v%d", i);
        ASSERT((d = make_dset(f, p)) >= 0);
        H5Dclose(d);
        ASSERT(token_at(f, p, &before[i]) == 0);
    }
    for (r = 0; r < ROUNDS; r++)
        for (i = 0; i < NV; i++) {
            snprintf(p, sizeof p, r % 2 ? "even_longer_v%d" : "v%d", i);
            snprintf(q, sizeof q, r % 2 ? "v%d" : "even_longer_v%d", i);
            ASSERT(H5Lmove(f, p, f, "_tmp_for_rename", H5P_DEFAULT, H5P_DEFAULT) >= 0);
            ASSERT(H5Lmove(f, "_tmp_for_rename", f, q, H5P_DEFAULT, H5P_DEFAULT) >= 0);
            if (i % 8 == 0) { /* through a group and back */
                snprintf(p, sizeof p, "grp/%s", q);
                ASSERT(H5Lmove(f, q, f, p, H5P_DEFAULT, H5P_DEFAULT) >= 0);
                ASSERT(H5Lmove(f, p, f, q, H5P_DEFAULT, H5P_DEFAULT) >= 0);
            }
        }
    for (i = 0; i < NV; i++) {
        snprintf(p, sizeof p, "v%d", i);
        ASSERT(token_at(f, p, &t) == 0 && H5Otoken_cmp(f, &t, &before[i], &cmp) >= 0);
        ASSERT_EQ_INT(cmp, 0);
    }
    ASSERT(token_at(f, "grp", &t) == 0 && H5Otoken_cmp(f, &t, &tg, &cmp) >= 0);
    ASSERT_EQ_INT(cmp, 0);
    /* newcomers at the temporary name and at a name a variable left are other objects */
    ASSERT((d = make_dset(f, "_tmp_for_rename")) >= 0);
    H5Dclose(d);
    ASSERT(H5Lmove(f, "v3", f, "w3", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT((d = make_dset(f, "v3")) >= 0);
    H5Dclose(d);
    ASSERT(token_at(f, "w3", &t) == 0 && H5Otoken_cmp(f, &t, &before[3], &cmp) >= 0);
    ASSERT_EQ_INT(cmp, 0);
    ASSERT(same_token(f, "w3", "v3") == 0);
    for (i = 0; i < NV; i++) {
        ASSERT(token_at(f, "_tmp_for_rename", &t) == 0 && H5Otoken_cmp(f, &t, &before[i], &cmp) >= 0);
        ASSERT(cmp != 0);
    }
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* A move writes only what it moves (and the new groups above its destination) before the store's keys
 * move; everything else stays dirty until the file's flush. Objects made and moved before any flush keep
 * their data, attributes and places across a close and a reopen. */
static int
test_moves_before_flush(void)
{
    const char *tmp = test_tmpdir("volcaches");
    char        dir[4096];
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f, g, d, a, sp;
    int         v[4] = {5, 6, 7, 8}, r[4] = {0}, av = 42, ar = 0;
    H5O_info2_t oi;

    ASSERT(tmp);
    snprintf(dir, sizeof dir, "%s/moveflush.zarr", tmp);
    ASSERT(H5Pset_fapl_zarr(fapl, 2) >= 0);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((g = H5Gcreate2(f, "g1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((d = make_dset(g, "d")) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    ASSERT((sp = H5Screate(H5S_SCALAR)) >= 0);
    ASSERT((a = H5Acreate2(d, "units", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, H5T_NATIVE_INT, &av) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Gclose(g);
    ASSERT((g = H5Gcreate2(f, "g2", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Gclose(g);
    ASSERT((g = H5Gcreate2(f, "g2/g3", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Gclose(g);
    ASSERT(H5Lmove(f, "g1/d", f, "g2/g3/d", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Lmove(f, "g1", f, "g2/g1b", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0); /* the open handle follows */
    ASSERT(H5Dclose(d) >= 0);
    ASSERT(H5Fclose(f) >= 0);

    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(H5Lexists(f, "g1", H5P_DEFAULT) == 0);
    ASSERT(H5Oget_info_by_name3(f, "g2/g1b", &oi, H5O_INFO_BASIC, H5P_DEFAULT) >= 0);
    ASSERT_EQ_INT(oi.type, H5O_TYPE_GROUP);
    ASSERT(H5Lexists(f, "g2/g1b/d", H5P_DEFAULT) == 0);
    ASSERT((d = H5Dopen2(f, "g2/g3/d", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    ASSERT_EQ_INT(r[0], 5);
    ASSERT_EQ_INT(r[3], 8);
    ASSERT((a = H5Aopen(d, "units", H5P_DEFAULT)) >= 0);
    ASSERT(H5Aread(a, H5T_NATIVE_INT, &ar) >= 0);
    ASSERT_EQ_INT(ar, 42);
    H5Aclose(a);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* The name HDF5 reports for open object `id`, into buf ("" when it has none). */
static const char *
name_of(hid_t id, char *buf, size_t n)
{
    buf[0] = '\0';
    return H5Iget_name(id, buf, n) < 0 ? "(failed)" : buf;
}

/* Open handles follow a move of their object or of a group above it, and only those: the connector finds
 * them by the first component of their path (vol/handle.c), so this moves objects to another first
 * component and back, next to names that share a prefix but not a component ("d5" and "d50", "grp" and
 * "grpX"), with enough open handles that the index grows several times. An unlink after the moves still
 * sees the moved handle (the object goes anonymous, its data stays readable through it). */
static int
test_open_handles_follow_moves(void)
{
    enum { NV = 300 };
    const char *tmp = test_tmpdir("volcaches");
    char        dir[4096], p[64], nb[256];
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f, g, gx, x, y, d[NV];
    int         v[4] = {1, 2, 3, 4}, r[4] = {0}, i;

    ASSERT(tmp);
    snprintf(dir, sizeof dir, "%s/handles.zarr", tmp);
    ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((g = H5Gcreate2(f, "grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((gx = H5Gcreate2(f, "grpX", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT((x = make_dset(f, "grp/x")) >= 0);
    ASSERT((y = make_dset(f, "grpX/y")) >= 0);
    for (i = 0; i < NV; i++) {
        snprintf(p, sizeof p, "d%d", i);
        ASSERT((d[i] = make_dset(f, p)) >= 0);
        v[0] = i;
        ASSERT(H5Dwrite(d[i], H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    }
    /* into a group: another first component */
    ASSERT(H5Lmove(f, "d5", f, "grp/d5", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT_STR(name_of(d[5], nb, sizeof nb), "/grp/d5");
    ASSERT_STR(name_of(d[50], nb, sizeof nb), "/d50");
    ASSERT_STR(name_of(d[51], nb, sizeof nb), "/d51");
    /* the group and everything open below it, next to a group whose name it prefixes */
    ASSERT(H5Lmove(f, "grp", f, "moved", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT_STR(name_of(g, nb, sizeof nb), "/moved");
    ASSERT_STR(name_of(x, nb, sizeof nb), "/moved/x");
    ASSERT_STR(name_of(d[5], nb, sizeof nb), "/moved/d5");
    ASSERT_STR(name_of(gx, nb, sizeof nb), "/grpX");
    ASSERT_STR(name_of(y, nb, sizeof nb), "/grpX/y");
    /* out again, under a name that was free: each handle is found at its latest place */
    ASSERT(H5Lmove(f, "moved/d5", f, "d5_back", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT_STR(name_of(d[5], nb, sizeof nb), "/d5_back");
    ASSERT_STR(name_of(x, nb, sizeof nb), "/moved/x");
    for (i = 0; i < NV; i++)
        if (i != 5) {
            snprintf(p, sizeof p, "/d%d", i);
            ASSERT_STR(name_of(d[i], nb, sizeof nb), p);
        }
    /* writes through the moved handle land in the moved object */
    v[0] = 555;
    ASSERT(H5Dwrite(d[5], H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    ASSERT(H5Dread(d[50], H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    ASSERT_EQ_INT(r[0], 50);
    /* unlinked while open: the handle keeps the object, as in HDF5 */
    ASSERT(H5Ldelete(f, "d5_back", H5P_DEFAULT) >= 0);
    ASSERT(H5Lexists(f, "d5_back", H5P_DEFAULT) == 0);
    memset(r, 0, sizeof r);
    ASSERT(H5Dread(d[5], H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    ASSERT_EQ_INT(r[0], 555);
    ASSERT_EQ_INT(r[3], 4);
    for (i = 0; i < NV; i++)
        ASSERT(H5Dclose(d[i]) >= 0);
    H5Dclose(x);
    H5Dclose(y);
    H5Gclose(g);
    H5Gclose(gx);
    ASSERT(H5Fclose(f) >= 0);

    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT(H5Lexists(f, "d5", H5P_DEFAULT) == 0);
    ASSERT(H5Lexists(f, "moved/x", H5P_DEFAULT) > 0);
    ASSERT(H5Lexists(f, "grpX/y", H5P_DEFAULT) > 0);
    ASSERT((d[0] = H5Dopen2(f, "d299", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d[0], H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    ASSERT_EQ_INT(r[0], 299);
    H5Dclose(d[0]);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* ---- the dataspace of an older handle after another handle's H5Dset_extent ---------------------------
 * Two handles of one dataset share the file's node, but each keeps its own dataspace. A transfer with
 * H5S_ALL on the older handle must use the extent as it is now: grown, every element of the new extent
 * is written and read; shrunk, only the elements left. Both for a plain type (int32) and for a type
 * stored in the packed form (a compound with a vlen string: vol/dataset.c's enc_xfer path). */
typedef struct rec {
    int   a;
    char *s;
} rec;

static hid_t
rec_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(rec)), str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, H5T_VARIABLE);
    H5Tinsert(t, "a", HOFFSET(rec, a), H5T_NATIVE_INT);
    H5Tinsert(t, "s", HOFFSET(rec, s), str);
    H5Tclose(str);
    return t;
}

/* The extent of dataset `d` as H5Dget_space reports it (-1 on failure). */
static long long
extent_of(hid_t d)
{
    hid_t     sp = H5Dget_space(d);
    hsize_t   n  = 0;
    long long r  = sp >= 0 && H5Sget_simple_extent_dims(sp, &n, NULL) == 1 ? (long long)n : -1;
    if (sp >= 0)
        H5Sclose(sp);
    return r;
}

/* Frees the strings HDF5 allocated in 8 read records (NULL ones included). */
static herr_t
reclaim8(hid_t t, rec *rr)
{
    hsize_t n  = 8;
    hid_t   ms = H5Screate_simple(1, &n, NULL);
    herr_t  r  = ms < 0 ? -1 : H5Treclaim(t, ms, H5P_DEFAULT, rr);
    if (ms >= 0)
        H5Sclose(ms);
    return r;
}

static int
extent_case(hid_t f, const char *name, bool packed)
{
    hsize_t dims = 4, maxd = H5S_UNLIMITED, chunk = 4, grown = 8, shrunk = 2;
    hid_t   sp = H5Screate_simple(1, &dims, &maxd), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t   t = packed ? rec_type() : H5Tcopy(H5T_NATIVE_INT), d1, d2, d3;
    int     iv[8], ir[8];
    rec     rv[8], rr[8];
    char    sbuf[8][8];
    void   *wbuf = packed ? (void *)rv : (void *)iv, *rbuf = packed ? (void *)rr : (void *)ir;

    ASSERT(sp >= 0 && dcpl >= 0 && t >= 0 && H5Pset_chunk(dcpl, 1, &chunk) >= 0);
    ASSERT((d1 = H5Dcreate2(f, name, t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    ASSERT((d2 = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
    for (int i = 0; i < 8; i++) {
        iv[i] = 100 + i;
        snprintf(sbuf[i], sizeof sbuf[i], "s%d", i);
        rv[i].a = 200 + i;
        rv[i].s = sbuf[i];
    }

    /* grown by the other handle: the older one writes and reads all 8 elements */
    ASSERT(H5Dset_extent(d2, &grown) >= 0);
    ASSERT(H5Dwrite(d1, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, wbuf) >= 0);
    ASSERT((d3 = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
    ASSERT_EQ_INT(extent_of(d3), 8);
    memset(rbuf, 0, packed ? sizeof rr : sizeof ir);
    ASSERT(H5Dread(d3, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rbuf) >= 0);
    for (int i = 0; i < 8; i++) {
        if (packed) {
            ASSERT_EQ_INT(rr[i].a, 200 + i);
            ASSERT_STR(rr[i].s, sbuf[i]);
        }
        else
            ASSERT_EQ_INT(ir[i], 100 + i);
    }
    if (packed)
        ASSERT(reclaim8(t, rr) >= 0);
    memset(rbuf, 0, packed ? sizeof rr : sizeof ir);
    ASSERT(H5Dread(d1, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rbuf) >= 0); /* the older handle reads 8 too */
    ASSERT(packed ? rr[7].a == 207 && rr[7].s && strcmp(rr[7].s, "s7") == 0 : ir[7] == 107);
    if (packed)
        ASSERT(reclaim8(t, rr) >= 0);
    ASSERT_EQ_INT(extent_of(d1), 8);

    /* shrunk by the other handle: the older one writes only the 2 elements left */
    ASSERT(H5Dset_extent(d2, &shrunk) >= 0);
    for (int i = 0; i < 8; i++)
        iv[i] = -1 - i, rv[i].a = -1 - i;
    ASSERT(H5Dwrite(d1, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, wbuf) >= 0);
    memset(rbuf, 0, packed ? sizeof rr : sizeof ir);
    ASSERT(H5Dread(d3, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rbuf) >= 0);
    ASSERT_EQ_INT(extent_of(d3), 2);
    ASSERT_EQ_INT(packed ? rr[0].a : ir[0], -1);
    ASSERT_EQ_INT(packed ? rr[1].a : ir[1], -2);
    ASSERT_EQ_INT(packed ? rr[2].a : ir[2], 0); /* nothing read past the extent */
    if (packed) {
        ASSERT_STR(rr[1].s, "s1");
        ASSERT(reclaim8(t, rr) >= 0);
    }

    H5Dclose(d3);
    H5Dclose(d2);
    H5Dclose(d1);
    H5Tclose(t);
    H5Pclose(dcpl);
    H5Sclose(sp);
    return 0;
}

static int
test_older_handle_sees_new_extent(void)
{
    const char *tmp = test_tmpdir("volcaches");
    char        dir[4096];
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), f;

    ASSERT(tmp);
    snprintf(dir, sizeof dir, "%s/extent.zarr", tmp);
    ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    if (extent_case(f, "plain", false) != 0)
        return 1;
    if (extent_case(f, "packed", true) != 0)
        return 1;
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* The first dimension of dataset `d`'s dataspace (H5Dget_space), or -1. */
static long long
dim0(hid_t d)
{
    hsize_t cur[1] = {0};
    hid_t   sp     = H5Dget_space(d);
    int ok = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 && H5Sget_simple_extent_dims(sp, cur, NULL) == 1;
    H5Sclose(sp);
    return ok ? (long long)cur[0] : -1;
}

/* A dataset handle keeps the node it found last while nothing joined, left or moved in the file's cache
 * (vol/dataset.c: dset_node, netCDF asks every variable's space over and over): its answers follow another
 * handle's H5Dset_extent, a move of its dataset (a new dataset made at the old name is another one, of
 * another shape), the deletion of a neighbour, and stay right for many handles asked in turn. */
static int
test_handle_node_follows_changes(void)
{
    const char *tmp = test_tmpdir("volcaches");
    char        dir[4096], name[16];
    hid_t       fapl  = H5Pcreate(H5P_FILE_ACCESS), f, sp, dcpl, d1, d2, d3, h[40];
    hsize_t     n4[1] = {4}, un[1] = {H5S_UNLIMITED}, ch[1] = {2}, six[1] = {6}, n3[1] = {3};
    int         v[6] = {1, 2, 3, 4, 5, 6}, got[6] = {0};

    for (int version = 2; version <= 3; version++) {
        ASSERT(tmp);
        snprintf(dir, sizeof dir, "%s/handle_node_v%d.zarr", tmp, version);
        ASSERT(H5Pset_fapl_zarr(fapl, version) >= 0);
        ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
        ASSERT((sp = H5Screate_simple(1, n4, un)) >= 0 && (dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0);
        ASSERT(H5Pset_chunk(dcpl, 1, ch) >= 0);
        ASSERT((d1 = H5Dcreate2(f, "x", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
        ASSERT((d2 = H5Dopen2(f, "x", H5P_DEFAULT)) >= 0);
        ASSERT_EQ_INT(dim0(d1), 4);
        ASSERT(H5Dset_extent(d2, six) >= 0);
        ASSERT_EQ_INT(dim0(d1), 6);
        ASSERT(H5Dwrite(d1, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
        ASSERT(H5Lmove(f, "x", f, "z", H5P_DEFAULT, H5P_DEFAULT) >= 0);
        ASSERT_EQ_INT(dim0(d1), 6);
        H5Sclose(sp);
        ASSERT((sp = H5Screate_simple(1, n3, NULL)) >= 0);
        ASSERT((d3 = H5Dcreate2(f, "x", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT_EQ_INT(dim0(d3), 3);
        ASSERT_EQ_INT(dim0(d1), 6);
        ASSERT_EQ_INT(dim0(d2), 6);
        ASSERT(H5Dread(d2, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
        ASSERT_EQ_INT(got[5], 6);
        for (int k = 0; k < 40; k++) { /* dataset k has k + 1 elements */
            hsize_t nk[1] = {(hsize_t)k + 1};
            hid_t   s     = H5Screate_simple(1, nk, NULL);
            snprintf(name, sizeof name, "v%d", k);
            ASSERT(s >= 0 && (h[k] = H5Dcreate2(f, name, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT,
                                                H5P_DEFAULT)) >= 0);
            H5Sclose(s);
        }
        ASSERT(H5Ldelete(f, "x", H5P_DEFAULT) >= 0);
        for (int round = 0; round < 3; round++)
            for (int k = 0; k < 40; k++)
                ASSERT_EQ_INT(dim0(h[k]), k + 1);
        ASSERT(H5Lmove(f, "v7", f, "w7", H5P_DEFAULT, H5P_DEFAULT) >= 0);
        ASSERT_EQ_INT(dim0(h[7]), 8);
        ASSERT_EQ_INT(dim0(h[8]), 9);
        for (int k = 0; k < 40; k++)
            H5Dclose(h[k]);
        H5Dclose(d1), H5Dclose(d2), H5Dclose(d3);
        H5Sclose(sp);
        H5Pclose(dcpl);
        ASSERT(H5Fclose(f) >= 0);
        ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0 && (d1 = H5Dopen2(f, "z", H5P_DEFAULT)) >= 0);
        ASSERT_EQ_INT(dim0(d1), 6);
        memset(got, 0, sizeof got);
        ASSERT(H5Dread(d1, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
        ASSERT_EQ_INT(got[0], 1);
        ASSERT_EQ_INT(got[5], 6);
        ASSERT(H5Oexists_by_name(f, "x", H5P_DEFAULT) == 0);
        H5Dclose(d1);
        ASSERT(H5Fclose(f) >= 0);
    }
    H5Pclose(fapl);
    return 0;
}

/* The first number after "shape": [ in the array document at `doc`, or -1. */
static long long
doc_shape0(const char *doc)
{
    size_t      n;
    char       *t = test_slurp(doc, &n);
    const char *p = t ? strstr(t, "\"shape\": [") : NULL;
    long long   v = p ? strtoll(p + strlen("\"shape\": ["), NULL, 10) : -1;
    free(t);
    return v;
}

/* The number of rows of 2-d int dataset `d` (1024 columns), and its row `i` into `got`; -1 on error. */
static long long
rows_and_row(hid_t d, hsize_t i, int *got)
{
    hsize_t cur[2], st[2] = {i, 0}, ct[2] = {1, 1024};
    hid_t   fs = H5Dget_space(d), ms = H5Screate_simple(2, ct, NULL);
    int     ok = fs >= 0 && ms >= 0 && H5Sget_simple_extent_dims(fs, cur, NULL) == 2 &&
             H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, ct, NULL) >= 0 &&
             H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, got) >= 0;
    H5Sclose(fs);
    H5Sclose(ms);
    return ok ? (long long)cur[0] : -1;
}

/* netCDF's record pattern: H5Dset_extent by one row, then a write of that row, on a chunk larger than
 * the connector's default chunk cache, with the dapl's chunk cache sized to hold it (as netCDF sets it).
 * The new extent and the chunk wait for the flush (as in HDF5's metadata and chunk caches): the
 * document on disk keeps the flushed shape and no chunk file appears until H5Fflush; this process sees
 * the new extent and values meanwhile, and a reopen sees them after. */
static int
test_extent_waits_for_flush(void)
{
    const char *tmp = test_tmpdir("volcaches");
    char        dir[4096], doc[4200], chunk[4200];
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t       dapl    = H5Pcreate(H5P_DATASET_ACCESS), f, sp, d, ms, fs;
    hsize_t     dims[2] = {0, 1024}, maxd[2] = {H5S_UNLIMITED, 1024}, ch[2] = {1024, 1024};
    hsize_t     st[2] = {0, 0}, ct[2] = {1, 1024}, cur[2];
    static int  row[1024], got[1024];
    struct stat sb, sb0;

    ASSERT(tmp);
    snprintf(dir, sizeof dir, "%s/records.zarr", tmp);
    snprintf(doc, sizeof doc, "%s/x/zarr.json", dir);
    snprintf(chunk, sizeof chunk, "%s/x/c/0/0", dir);
    ASSERT(H5Pset_fapl_zarr(fapl, 3) >= 0);
    ASSERT(H5Pset_chunk(dcpl, 2, ch) >= 0);                    /* 4 MiB of int: the default cache's size */
    ASSERT(H5Pset_chunk_cache(dapl, 521, 16 << 20, 1.0) >= 0); /* netCDF: room for the chunk */
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((sp = H5Screate_simple(2, dims, maxd)) >= 0);
    ASSERT((d = H5Dcreate2(f, "x", H5T_NATIVE_INT, sp, H5P_DEFAULT, dcpl, dapl)) >= 0);
    ASSERT(H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0);
    ASSERT_EQ_INT(doc_shape0(doc), 0);
    ASSERT((ms = H5Screate_simple(2, ct, NULL)) >= 0);
    for (int i = 0; i < 8; i++) {
        cur[0] = (hsize_t)i + 1;
        cur[1] = 1024;
        ASSERT(H5Dset_extent(d, cur) >= 0);
        for (int j = 0; j < 1024; j++)
            row[j] = 1000 * i + j;
        st[0] = (hsize_t)i;
        ASSERT((fs = H5Dget_space(d)) >= 0);
        ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, ct, NULL) >= 0);
        ASSERT(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, row) >= 0);
        H5Sclose(fs);
        if (i == 0) /* row 0 was all of the chunk inside the extent then: written through */
            ASSERT(stat(chunk, &sb0) == 0);
    }
    ASSERT_EQ_INT(doc_shape0(doc), 0); /* the document waits for the flush */
    ASSERT(stat(chunk, &sb) == 0);     /* and so do rows 1..7: in the cache the dapl asked for */
    ASSERT(sb.st_ino == sb0.st_ino && sb.st_mtim.tv_sec == sb0.st_mtim.tv_sec &&
           sb.st_mtim.tv_nsec == sb0.st_mtim.tv_nsec);
    ASSERT_EQ_INT(rows_and_row(d, 5, got), 8); /* this process sees both */
    ASSERT_EQ_INT(got[17], 5017);
    ASSERT(H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0);
    ASSERT_EQ_INT(doc_shape0(doc), 8);
    ASSERT(stat(chunk, &sb) == 0);
    ASSERT(sb.st_ino != sb0.st_ino || sb.st_mtim.tv_sec != sb0.st_mtim.tv_sec ||
           sb.st_mtim.tv_nsec != sb0.st_mtim.tv_nsec);
    ASSERT(H5Dclose(d) >= 0);
    ASSERT(H5Fclose(f) >= 0);

    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "x", H5P_DEFAULT)) >= 0);
    ASSERT_EQ_INT(rows_and_row(d, 7, got), 8);
    ASSERT_EQ_INT(got[1023], 8023);
    H5Dclose(d);
    H5Fclose(f);
    H5Sclose(ms);
    H5Sclose(sp);
    H5Pclose(dapl);
    H5Pclose(dcpl);
    H5Pclose(fapl);
    return 0;
}

int
main(int argc, char **argv)
{
    static const test_entry tests[] = {TEST_ENTRY(listing_follows_link_changes),
                                       TEST_ENTRY(existence_follows_creates_and_deletes),
                                       TEST_ENTRY(tokens_follow_moves),
                                       TEST_ENTRY(tokens_through_renames),
                                       TEST_ENTRY(moves_before_flush),
                                       TEST_ENTRY(open_handles_follow_moves),
                                       TEST_ENTRY(older_handle_sees_new_extent),
                                       TEST_ENTRY(extent_waits_for_flush),
                                       TEST_ENTRY(listing_batched),
                                       TEST_ENTRY(handle_node_follows_changes)};
    return RUN_TESTS(tests);
}
