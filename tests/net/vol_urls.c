/*
 * vol_urls: the connector on URL names, for tests/scripts/s3_store.sh (run with HDF5_VOL_CONNECTOR=zarr
 * and an S3 endpoint in the environment). Given a store URL prefix BASE ("s3://bkt/vu"), checks:
 *  - H5Fcreate of BASE/ext.zarr and of BASE/plain (no .zarr: a URL is always a store, no pointer file);
 *  - external links into a URL store, by its URL and by a name relative to a URL store holding the link;
 *  - object references inside a URL store;
 *  - H5Fis_accessible of a store and of an absent URL, H5Fdelete of a URL store.
 * Prints "ok: ..." lines; exits 1 with a message at the first failure.
 * With `delete NAME` (tests/scripts/nc_s3.sh): H5Fis_accessible, then H5Fdelete of NAME (a pointer file
 * whose store is on S3); prints "accessible N" and exits 0 when both succeed, else prints HDF5's error
 * stack and exits 1.
 *
 *   vol_urls BASE
 *   vol_urls delete NAME
 */
#include <hdf5.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c, ...)                                                                                        \
    do {                                                                                                     \
        if (!(c)) {                                                                                          \
            fprintf(stderr, "FAIL: " __VA_ARGS__);                                                           \
            fprintf(stderr, " (line %d)\n", __LINE__);                                                       \
            H5Eprint2(H5E_DEFAULT, stderr);                                                                  \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

/* A file holding /d = {0, 1, ..., 11} + add. */
static void
make(const char *name, int add)
{
    int     v[12];
    hsize_t dims[1] = {12};
    hid_t   f       = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), sp, d;
    CHECK(f >= 0, "H5Fcreate %s", name);
    for (int i = 0; i < 12; i++)
        v[i] = i + add;
    sp = H5Screate_simple(1, dims, NULL);
    d  = H5Dcreate2(f, "d", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(d >= 0 && H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0, "write %s/d", name);
    H5Dclose(d), H5Sclose(sp), H5Fclose(f);
}

/* /<path> of `f` holds {0..11} + add. */
static void
expect(hid_t f, const char *path, int add)
{
    int   v[12];
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    CHECK(d >= 0 && H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0, "read %s", path);
    for (int i = 0; i < 12; i++)
        CHECK(v[i] == i + add, "%s[%d] = %d, expected %d", path, i, v[i], i + add);
    H5Dclose(d);
}

int
main(int argc, char **argv)
{
    char  ext[512], plain[512], holder[512], local[] = "holder_local.zarr", tmp[600];
    hid_t f;
    if (argc == 3 && !strcmp(argv[1], "delete")) {
        htri_t a = H5Fis_accessible(argv[2], H5P_DEFAULT);
        if (a < 0 || H5Fdelete(argv[2], H5P_DEFAULT) < 0) {
            H5Eprint2(H5E_DEFAULT, stderr);
            return 1;
        }
        printf("accessible %d\n", (int)a);
        return 0;
    }
    if (argc != 2)
        return fprintf(stderr, "usage: vol_urls BASE | vol_urls delete NAME\n"), 2;
    snprintf(ext, sizeof ext, "%s/ext.zarr", argv[1]);
    snprintf(plain, sizeof plain, "%s/plain", argv[1]);
    snprintf(holder, sizeof holder, "%s/holder.zarr", argv[1]);

    make(ext, 100);
    make(plain, 200);
    CHECK(H5Fis_accessible(plain, H5P_DEFAULT) > 0, "%s is not accessible", plain);
    CHECK(fopen("plain", "r") == NULL, "a local pointer file 'plain' was made");
    f = H5Fopen(plain, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0, "H5Fopen %s", plain);
    expect(f, "d", 200);
    H5Fclose(f);
    printf("ok: H5Fcreate/H5Fopen of URL stores, with and without .zarr (no pointer file)\n");

    /* external links: from a local store by URL, from a URL store by URL and by a relative name */
    f = H5Fcreate(local, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f >= 0 && H5Lcreate_external(ext, "/d", f, "x", H5P_DEFAULT, H5P_DEFAULT) >= 0, "link in %s",
          local);
    H5Fclose(f);
    f = H5Fcreate(holder, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f >= 0 && H5Lcreate_external(ext, "/d", f, "byurl", H5P_DEFAULT, H5P_DEFAULT) >= 0 &&
              H5Lcreate_external("ext.zarr", "/d", f, "relative", H5P_DEFAULT, H5P_DEFAULT) >= 0,
          "links in %s", holder);
    H5Fclose(f);
    f = H5Fopen(local, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0, "reopen %s", local);
    expect(f, "x", 100);
    H5Fclose(f);
    f = H5Fopen(holder, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0, "reopen %s", holder);
    expect(f, "byurl", 100);
    expect(f, "relative", 100);
    H5Fclose(f);
    printf("ok: external links into a URL store, by URL and relative to a URL store\n");

    /* an object reference inside a URL store */
    {
        H5R_ref_t r, back;
        hid_t     sp, a, o;
        f = H5Fopen(ext, H5F_ACC_RDWR, H5P_DEFAULT);
        CHECK(f >= 0 && H5Rcreate_object(f, "d", H5P_DEFAULT, &r) >= 0, "reference to %s/d", ext);
        sp = H5Screate(H5S_SCALAR);
        a  = H5Acreate2(f, "ref", H5T_STD_REF, sp, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(a >= 0 && H5Awrite(a, H5T_STD_REF, &r) >= 0, "write the reference");
        H5Aclose(a), H5Sclose(sp), H5Rdestroy(&r), H5Fclose(f);
        f = H5Fopen(ext, H5F_ACC_RDONLY, H5P_DEFAULT);
        a = H5Aopen(f, "ref", H5P_DEFAULT);
        CHECK(a >= 0 && H5Aread(a, H5T_STD_REF, &back) >= 0, "read the reference");
        o = H5Ropen_object(&back, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(o >= 0, "dereference");
        {
            int v[12];
            CHECK(H5Dread(o, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0 && v[11] == 111,
                  "the referenced dataset");
        }
        H5Dclose(o), H5Rdestroy(&back), H5Aclose(a), H5Fclose(f);
    }
    printf("ok: an object reference inside a URL store\n");

    snprintf(tmp, sizeof tmp, "%s/none.zarr", argv[1]);
    H5E_BEGIN_TRY { CHECK(H5Fis_accessible(tmp, H5P_DEFAULT) <= 0, "%s is accessible", tmp); }
    H5E_END_TRY
    CHECK(H5Fdelete(plain, H5P_DEFAULT) >= 0, "H5Fdelete %s", plain);
    H5E_BEGIN_TRY { CHECK(H5Fis_accessible(plain, H5P_DEFAULT) <= 0, "%s is still accessible", plain); }
    H5E_END_TRY
    printf("ok: H5Fis_accessible of an absent URL store; H5Fdelete of a URL store\n");
    return 0;
}
