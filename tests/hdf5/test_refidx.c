/*
 * test_refidx.c: the reference index of an open file (vol/refidx.c). After the first H5Lmove of an open,
 * a move rewrites the references to the moved object only in the nodes the index names. These tests make
 * references of every stored kind (H5T_STD_REF arrays, vlen of references, compounds holding one, a
 * dataset of references), in nodes at and below moved groups, then move objects again and again in one
 * open while attributes holding references are created, written, renamed and deleted, datasets of
 * references made, holders copied (H5Ocopy), deleted, or linked from the anonymous area between the
 * moves: every reference must still open the moved object, in the open and after a reopen. A second test
 * counts the nodes each move visits (the H5ZV_DEBUG line of vol/refidx.c): the first move walks the file,
 * the later ones visit the holders of the moved path only, and what the index can't follow makes the next
 * move walk again.
 */
#include "runner.h"

#include <fcntl.h>
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5test.h"

typedef struct ref_rec {
    H5R_ref_t r;
    int       i;
} ref_rec;

/* How an attribute holds its references: a 1-D array of H5T_STD_REF, a scalar vlen of them, a 1-D array of
 * {ref, int} compounds (as REFERENCE_LIST). */
typedef enum { K_REF, K_VLEN, K_CMPD } kind;

static hid_t
cmpd_type(void)
{
    hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(ref_rec));
    if (ct >= 0 && (H5Tinsert(ct, "r", HOFFSET(ref_rec, r), H5T_STD_REF) < 0 ||
                    H5Tinsert(ct, "i", HOFFSET(ref_rec, i), H5T_NATIVE_INT) < 0)) {
        H5Tclose(ct);
        return H5I_INVALID_HID;
    }
    return ct;
}

/* Writes attribute `name` of object `obj` (created, or overwritten when it exists) holding references to
 * the `n` paths of `to` (n <= 4), in the form `k`. */
static int
put_attr(hid_t f, const char *obj, const char *name, kind k, int n, const char *const *to)
{
    H5R_ref_t w[4];
    ref_rec   c[4];
    hvl_t     v  = {(size_t)n, w};
    hsize_t   dn = (hsize_t)n;
    hid_t     t, sp, at;
    ASSERT(n <= 4);
    for (int i = 0; i < n; i++) {
        ASSERT(H5Rcreate_object(f, to[i], H5P_DEFAULT, &w[i]) >= 0);
        c[i].r = w[i];
        c[i].i = 100 + i;
    }
    ASSERT((t = k == K_REF    ? H5Tcopy(H5T_STD_REF)
                : k == K_VLEN ? H5Tvlen_create(H5T_STD_REF)
                              : cmpd_type()) >= 0);
    ASSERT((sp = k == K_VLEN ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dn, NULL)) >= 0);
    if (H5Aexists_by_name(f, obj, name, H5P_DEFAULT) > 0)
        ASSERT((at = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    else
        ASSERT((at = H5Acreate_by_name(f, obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(at, t, k == K_REF ? (void *)w : k == K_VLEN ? (void *)&v : (void *)c) >= 0);
    ASSERT(H5Aclose(at) >= 0);
    H5Sclose(sp);
    H5Tclose(t);
    for (int i = 0; i < n; i++)
        H5Rdestroy(&w[i]);
    return 0;
}

/* Checks that attribute `name` of `obj` (form `k`, `n` references) names the objects `want`. */
static int
expect_attr(hid_t f, const char *obj, const char *name, kind k, int n, const char *const *want)
{
    H5R_ref_t r[4];
    ref_rec   c[4];
    hvl_t     v = {0, NULL};
    hid_t     t, at;
    ASSERT(n <= 4);
    ASSERT((t = k == K_REF    ? H5Tcopy(H5T_STD_REF)
                : k == K_VLEN ? H5Tvlen_create(H5T_STD_REF)
                              : cmpd_type()) >= 0);
    if ((at = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        FAILF("no attribute '%s' on '%s'", name, obj);
    ASSERT(H5Aread(at, t, k == K_REF ? (void *)r : k == K_VLEN ? (void *)&v : (void *)c) >= 0);
    H5Aclose(at);
    H5Tclose(t);
    if (k == K_VLEN) {
        ASSERT_EQ_INT((int)v.len, n);
        memcpy(r, v.p, (size_t)n * sizeof *r);
        free(v.p);
    }
    for (int i = 0; i < n; i++) {
        if (k == K_CMPD) {
            ASSERT_EQ_INT(c[i].i, 100 + i);
            r[i] = c[i].r;
        }
        if (h5t_check_ref(f, &r[i], want[i]) != 0)
            FAILF("attribute '%s' of '%s', reference %d: expected '%s'", name, obj, i, want[i]);
    }
    for (int i = 0; i < n; i++)
        H5Rdestroy(&r[i]);
    return 0;
}

/* Makes dataset `name` of `n` references to `to`. */
static int
put_refs_dataset(hid_t f, const char *name, int n, const char *const *to)
{
    H5R_ref_t w[4];
    hsize_t   dn = (hsize_t)n;
    hid_t     sp, d;
    for (int i = 0; i < n; i++)
        ASSERT(H5Rcreate_object(f, to[i], H5P_DEFAULT, &w[i]) >= 0);
    ASSERT((sp = H5Screate_simple(1, &dn, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, name, H5T_STD_REF, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_STD_REF, H5S_ALL, H5S_ALL, H5P_DEFAULT, w) >= 0);
    ASSERT(H5Dclose(d) >= 0);
    H5Sclose(sp);
    for (int i = 0; i < n; i++)
        H5Rdestroy(&w[i]);
    return 0;
}

static int
expect_refs_dataset(hid_t f, const char *name, int n, const char *const *want)
{
    H5R_ref_t r[4];
    hid_t     d;
    ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_STD_REF, H5S_ALL, H5S_ALL, H5P_DEFAULT, r) >= 0);
    ASSERT(H5Dclose(d) >= 0);
    for (int i = 0; i < n; i++) {
        if (h5t_check_ref(f, &r[i], want[i]) != 0)
            FAILF("dataset '%s', reference %d: expected '%s'", name, i, want[i]);
        H5Rdestroy(&r[i]);
    }
    return 0;
}

static int
make_dset(hid_t f, const char *name)
{
    hsize_t two = 2;
    hid_t   sp  = H5Screate_simple(1, &two, NULL), d;
    ASSERT(sp >= 0);
    ASSERT((d = H5Dcreate2(f, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
    return 0;
}

static int
make_group(hid_t f, const char *name)
{
    hid_t g;
    ASSERT((g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    H5Gclose(g);
    return 0;
}

static int
mv(hid_t f, const char *from, const char *to)
{
    if (H5Lmove(f, from, f, to, H5P_DEFAULT, H5P_DEFAULT) < 0)
        FAILF("H5Lmove '%s' -> '%s' failed", from, to);
    return 0;
}

#define L(...) ((const char *const[]){__VA_ARGS__})

/* Every reference of the file after the last step of test_references_follow_every_move. */
static int
expect_final(hid_t f)
{
    ASSERT(expect_attr(f, "/", "r", K_REF, 2, L("/h/t2", "/d2b")) == 0);
    ASSERT(expect_attr(f, "/g2/sub", "vr", K_VLEN, 2, L("/d2b", "/g2")) == 0);
    ASSERT(expect_refs_dataset(f, "refds", 2, L("/d4b", "/g2/sub")) == 0);
    ASSERT(expect_refs_dataset(f, "refds2", 1, L("/d2b")) == 0);
    ASSERT(expect_attr(f, "/d5b", "late", K_REF, 1, L("/d4b")) == 0);
    ASSERT(expect_attr(f, "/d5copy", "late", K_REF, 1, L("/d4b")) == 0);
    ASSERT(expect_attr(f, "/h", "hr", K_VLEN, 1, L("/d0c")) == 0);
    ASSERT(expect_attr(f, "/linked", "an", K_CMPD, 2, L("/d5b", "/h")) == 0);
    ASSERT(expect_attr(f, "/self2", "me", K_REF, 1, L("/self2")) == 0);
    ASSERT(expect_attr(f, "/g2/sub/deep", "dr2", K_CMPD, 1, L("/g2/sub/deep")) == 0);
    return 0;
}

static int
test_references_follow_every_move(void)
{
    const char *tmp = test_tmpdir("refidx");
    char        dir[4096];
    hid_t       fapl = h5t_zarr_fapl(3), f, anon;

    ASSERT(tmp && fapl >= 0);
    snprintf(dir, sizeof dir, "%s/follow.zarr", tmp);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(make_group(f, "g") == 0 && make_group(f, "g/sub") == 0 && make_group(f, "g/sub/deep") == 0 &&
           make_group(f, "h") == 0);
    ASSERT(make_dset(f, "d0") == 0 && make_dset(f, "g/sub/d1") == 0 && make_dset(f, "d2") == 0 &&
           make_dset(f, "d3") == 0 && make_dset(f, "d4") == 0 && make_dset(f, "d5") == 0 &&
           make_dset(f, "h/t") == 0 && make_dset(f, "self") == 0);
    ASSERT(put_attr(f, "/", "r", K_REF, 2, L("d0", "g/sub/d1")) == 0);
    ASSERT(put_attr(f, "g/sub", "vr", K_VLEN, 2, L("d2", "g")) == 0);
    ASSERT(put_attr(f, "d3", "cr", K_CMPD, 2, L("d0", "h/t")) == 0);
    ASSERT(put_attr(f, "g/sub/deep", "dr", K_REF, 1, L("d0")) == 0);
    ASSERT(put_refs_dataset(f, "refds", 2, L("d4", "g/sub")) == 0);
    {
        hsize_t two = 2;
        hid_t   sp  = H5Screate_simple(1, &two, NULL);
        ASSERT(sp >= 0);
        ASSERT((anon = H5Dcreate_anon(f, H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(put_attr(anon, ".", "an", K_CMPD, 2, L("/d5", "/h")) == 0);
        H5Sclose(sp);
    }

    /* the first move of the open walks (and builds the index) */
    ASSERT(mv(f, "d2", "d2a") == 0);
    ASSERT(expect_attr(f, "g/sub", "vr", K_VLEN, 2, L("/d2a", "/g")) == 0);
    /* a group holding holders moves: they are found at their new paths from now on */
    ASSERT(mv(f, "g", "g2") == 0);
    ASSERT(expect_attr(f, "/", "r", K_REF, 2, L("/d0", "/g2/sub/d1")) == 0);
    ASSERT(expect_attr(f, "g2/sub", "vr", K_VLEN, 2, L("/d2a", "/g2")) == 0);
    ASSERT(expect_refs_dataset(f, "refds", 2, L("/d4", "/g2/sub")) == 0);
    ASSERT(mv(f, "d0", "d0a") == 0);
    ASSERT(expect_attr(f, "/", "r", K_REF, 2, L("/d0a", "/g2/sub/d1")) == 0);
    ASSERT(expect_attr(f, "d3", "cr", K_CMPD, 2, L("/d0a", "/h/t")) == 0);
    ASSERT(expect_attr(f, "g2/sub/deep", "dr", K_REF, 1, L("/d0a")) == 0);
    /* a new attribute of references on a node that had none */
    ASSERT(put_attr(f, "d5", "late", K_REF, 1, L("d4")) == 0);
    ASSERT(mv(f, "d4", "d4a") == 0);
    ASSERT(expect_attr(f, "d5", "late", K_REF, 1, L("/d4a")) == 0);
    ASSERT(expect_refs_dataset(f, "refds", 2, L("/d4a", "/g2/sub")) == 0);
    /* an attribute written again with other references */
    ASSERT(put_attr(f, "/", "r", K_REF, 2, L("h/t", "d2a")) == 0);
    ASSERT(mv(f, "h/t", "h/t2") == 0);
    ASSERT(expect_attr(f, "/", "r", K_REF, 2, L("/h/t2", "/d2a")) == 0);
    ASSERT(expect_attr(f, "d3", "cr", K_CMPD, 2, L("/d0a", "/h/t2")) == 0);
    /* a renamed attribute */
    ASSERT(H5Arename_by_name(f, "d3", "cr", "cr2", H5P_DEFAULT) >= 0);
    ASSERT(mv(f, "d0a", "d0b") == 0);
    ASSERT(expect_attr(f, "d3", "cr2", K_CMPD, 2, L("/d0b", "/h/t2")) == 0);
    ASSERT(expect_attr(f, "g2/sub/deep", "dr", K_REF, 1, L("/d0b")) == 0);
    /* a deleted attribute, a new one elsewhere, a deleted holder */
    ASSERT(H5Adelete_by_name(f, "g2/sub/deep", "dr", H5P_DEFAULT) >= 0);
    ASSERT(put_attr(f, "h", "hr", K_VLEN, 1, L("d0b")) == 0);
    ASSERT(H5Ldelete(f, "d3", H5P_DEFAULT) >= 0);
    ASSERT(mv(f, "d0b", "d0c") == 0);
    ASSERT(expect_attr(f, "h", "hr", K_VLEN, 1, L("/d0c")) == 0);
    ASSERT(mv(f, "d0c", "d0x") == 0 && mv(f, "d0x", "d0c") == 0); /* the index again, after the walk */
    /* a holder copied with H5Ocopy: the copy's references follow too */
    ASSERT(H5Ocopy(f, "d5", f, "d5copy", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(mv(f, "d4a", "d4b") == 0);
    ASSERT(expect_attr(f, "d5", "late", K_REF, 1, L("/d4b")) == 0);
    ASSERT(expect_attr(f, "d5copy", "late", K_REF, 1, L("/d4b")) == 0);
    /* a dataset of references made after the index */
    ASSERT(put_refs_dataset(f, "refds2", 1, L("d2a")) == 0);
    ASSERT(mv(f, "d2a", "d2b") == 0);
    ASSERT(expect_refs_dataset(f, "refds2", 1, L("/d2b")) == 0);
    ASSERT(expect_attr(f, "/", "r", K_REF, 2, L("/h/t2", "/d2b")) == 0);
    ASSERT(expect_attr(f, "g2/sub", "vr", K_VLEN, 2, L("/d2b", "/g2")) == 0);
    /* an anonymous dataset holding references (made before the first move: no walk visits it), linked into
     * the hierarchy */
    ASSERT(H5Olink(anon, f, "linked", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    ASSERT(H5Dclose(anon) >= 0);
    ASSERT(mv(f, "d5", "d5b") == 0);
    ASSERT(expect_attr(f, "linked", "an", K_CMPD, 2, L("/d5b", "/h")) == 0);
    ASSERT(expect_attr(f, "d5b", "late", K_REF, 1, L("/d4b")) == 0);
    /* a holder naming itself, moved; one naming its own group's child, moved with the group */
    ASSERT(put_attr(f, "self", "me", K_REF, 1, L("self")) == 0);
    ASSERT(mv(f, "self", "self2") == 0);
    ASSERT(expect_attr(f, "self2", "me", K_REF, 1, L("/self2")) == 0);
    ASSERT(put_attr(f, "g2/sub/deep", "dr2", K_CMPD, 1, L("g2/sub/deep")) == 0);
    ASSERT(mv(f, "g2", "g3") == 0);
    ASSERT(expect_attr(f, "g3/sub/deep", "dr2", K_CMPD, 1, L("/g3/sub/deep")) == 0);
    ASSERT(expect_attr(f, "g3/sub", "vr", K_VLEN, 2, L("/d2b", "/g3")) == 0);
    ASSERT(mv(f, "g3", "g2") == 0);
    ASSERT(expect_final(f) == 0);
    ASSERT(H5Fclose(f) >= 0);

    /* what the moves wrote is what a new open reads, and its own moves start over */
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT(expect_final(f) == 0);
    ASSERT(mv(f, "g2/sub/d1", "g2/sub/d1b") == 0 && mv(f, "g2/sub/d1b", "g2/sub/d1") == 0);
    ASSERT(expect_final(f) == 0);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* The moves' H5ZV_DEBUG lines while `fn` runs: the nodes each visited and whether through the index
 * ('i') or a walk ('w'), in `visits` / `how` (up to `max`); their count, or -1. */
typedef struct moves_seen {
    int    n;
    size_t visits[16];
    char   how[16];
} moves_seen;

static int
parse_moves(const char *text, moves_seen *m)
{
    const char *p = text;
    memset(m, 0, sizeof *m);
    while ((p = strstr(p, "h5zv: references moved from "))) {
        const char *q       = strstr(p, "': ");
        char        how[16] = "";
        size_t      v       = 0;
        if (!q || sscanf(q + 3, "%zu nodes visited (%15[a-z])", &v, how) != 2 || m->n == 16)
            return -1;
        m->visits[m->n] = v;
        m->how[m->n++]  = how[0];
        p               = q;
    }
    return m->n;
}

/* Runs the moves of `f` given in pairs in `mvs` (NULL-terminated) with stderr caught, into `m`. */
static int
caught_moves(hid_t f, const char *const *mvs, const char *log, moves_seen *m)
{
    int    fd, saved;
    char  *text;
    size_t len = 0;
    memset(m, 0, sizeof *m);
    ASSERT(setenv("H5ZV_DEBUG", "1", 1) == 0);
    fflush(stderr);
    ASSERT((fd = open(log, O_CREAT | O_TRUNC | O_WRONLY, 0644)) >= 0);
    ASSERT((saved = dup(2)) >= 0);
    ASSERT(dup2(fd, 2) == 2);
    close(fd);
    for (int i = 0; mvs[i]; i += 2)
        if (H5Lmove(f, mvs[i], f, mvs[i + 1], H5P_DEFAULT, H5P_DEFAULT) < 0)
            break;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    unsetenv("H5ZV_DEBUG");
    ASSERT((text = test_slurp(log, &len)));
    if (parse_moves(text, m) < 0) {
        free(text);
        FAILF("unexpected debug lines in %s", log);
    }
    free(text);
    return 0;
}

static int
test_later_moves_visit_holders_only(void)
{
    const char *tmp = test_tmpdir("refidx");
    char        dir[4096], log[4200];
    hid_t       fapl = h5t_zarr_fapl(3), f, at, sp;
    moves_seen  m;
    int         one = 1;

    ASSERT(tmp && fapl >= 0);
    snprintf(dir, sizeof dir, "%s/count.zarr", tmp);
    snprintf(log, sizeof log, "%s/moves.log", tmp);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%02d", i);
        ASSERT(make_dset(f, name) == 0);
    }
    ASSERT(make_dset(f, "t") == 0 && make_group(f, "holders") == 0 && make_dset(f, "holders/u") == 0);
    ASSERT(put_attr(f, "holders", "r", K_VLEN, 1, L("t")) == 0);
    ASSERT(put_attr(f, "holders/u", "r", K_REF, 1, L("f00")) == 0);

    /* the first move walks every node (root, 40 + t, holders, u); then only the holders of the path */
    ASSERT(caught_moves(f, L("t", "t1", "t1", "t2", "f10", "f10b", "f00", "g00", NULL), log, &m) == 0);
    ASSERT_EQ_INT(m.n, 4);
    ASSERT_EQ_INT(m.how[0], 'w');
    ASSERT_EQ_INT(m.visits[0], 44);
    ASSERT_EQ_INT(m.how[1], 'i');
    ASSERT_EQ_INT(m.visits[1], 1); /* holders */
    ASSERT_EQ_INT(m.visits[2], 0); /* f10 is named by no reference */
    ASSERT_EQ_INT(m.visits[3], 1); /* holders/u */
    ASSERT(expect_attr(f, "holders", "r", K_VLEN, 1, L("/t2")) == 0);
    ASSERT(expect_attr(f, "holders/u", "r", K_REF, 1, L("/g00")) == 0);

    /* an attribute written on another node: the next move visits it once more, then no longer */
    ASSERT((sp = H5Screate(H5S_SCALAR)) >= 0);
    ASSERT((at = H5Acreate2(f, "f20", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(at, H5T_NATIVE_INT, &one) >= 0 && H5Aclose(at) >= 0);
    H5Sclose(sp);
    ASSERT(caught_moves(f, L("t2", "t3", "t3", "t4", NULL), log, &m) == 0);
    ASSERT_EQ_INT(m.n, 2);
    ASSERT_EQ_INT(m.how[0], 'i');
    ASSERT_EQ_INT(m.visits[0], 2); /* holders, f20 */
    ASSERT_EQ_INT(m.visits[1], 1);

    /* a move of the group of the holders: they follow, and are visited at their new paths */
    ASSERT(caught_moves(f, L("holders", "hold2", "t4", "t5", "g00", "f00", NULL), log, &m) == 0);
    ASSERT_EQ_INT(m.n, 3);
    ASSERT_EQ_INT(m.how[0], 'i');
    ASSERT_EQ_INT(m.visits[0], 0);
    ASSERT_EQ_INT(m.visits[1], 1);
    ASSERT_EQ_INT(m.visits[2], 1);
    ASSERT(expect_attr(f, "hold2", "r", K_VLEN, 1, L("/t5")) == 0);
    ASSERT(expect_attr(f, "hold2/u", "r", K_REF, 1, L("/f00")) == 0);

    /* a deleted node: the next move walks again (and builds a new index) */
    ASSERT(H5Ldelete(f, "f30", H5P_DEFAULT) >= 0);
    ASSERT(caught_moves(f, L("t5", "t6", "t6", "t7", NULL), log, &m) == 0);
    ASSERT_EQ_INT(m.n, 2);
    ASSERT_EQ_INT(m.how[0], 'w');
    ASSERT_EQ_INT(m.visits[0], 43);
    ASSERT_EQ_INT(m.how[1], 'i');
    ASSERT_EQ_INT(m.visits[1], 1);
    ASSERT(expect_attr(f, "hold2", "r", K_VLEN, 1, L("/t7")) == 0);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

int
main(int argc, char **argv)
{
    static const test_entry tests[] = {TEST_ENTRY(references_follow_every_move),
                                       TEST_ENTRY(later_moves_visit_holders_only)};
    return RUN_TESTS(tests);
}
