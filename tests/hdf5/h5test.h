/*
 * h5test.h: helpers the HDF5-facing tests share (with tests/runner.h): a file access property list that
 * selects the zarr connector, the check that a zarr store came out (HDF5 silently falls back to the
 * native format when a named connector fails to load), and an error-stack walker that collects the
 * messages of a failed call, and the check that a reference opens the object at a path. Header-only;
 * every function is static.
 */
#ifndef H5ZARR_TESTS_H5TEST_H
#define H5ZARR_TESTS_H5TEST_H

#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "h5zarr/h5zarr.h"

/* A new fapl using the zarr connector, new stores in zarr `version` (2 or 3); negative on failure.
 * The caller closes it. */
static inline hid_t
h5t_zarr_fapl(int version)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fapl_zarr(fapl, version) < 0) {
        H5Pclose(fapl);
        return H5I_INVALID_HID;
    }
    return fapl;
}

/* True if `path` is a directory holding a zarr root document (zarr.json or .zgroup/.zarray). */
static inline int
h5t_is_zarr_store(const char *path)
{
    static const char *const docs[] = {"zarr.json", ".zgroup", ".zarray"};
    char                     p[4096];
    struct stat              st;
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", path, docs[i]);
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
            return 1;
    }
    return 0;
}

/* True if `rel` exists below directory `dir`. */
static inline int
h5t_path_exists(const char *dir, const char *rel)
{
    char        p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return stat(p, &st) == 0;
}

/* True if `path` is a native HDF5 file: HDF5's signature in its first 8 bytes. */
static inline int
h5t_is_native_file(const char *path)
{
    unsigned char sig[8] = {0};
    FILE         *f      = fopen(path, "rb");
    size_t        n      = f ? fread(sig, 1, 8, f) : 0;
    if (f)
        fclose(f);
    return n == 8 && memcmp(sig, "\x89HDF\r\n\x1a\n", 8) == 0;
}

/* The current HDF5 error stack as H5Eprint2 prints it, class names included (malloc'ed; NULL on failure). */
static inline char *
h5t_error_text(void)
{
    char  *text = NULL;
    size_t n    = 0;
    FILE  *m    = open_memstream(&text, &n);
    if (!m)
        return NULL;
    H5Eprint2(H5E_DEFAULT, m);
    fclose(m);
    return text;
}

/* H5Ewalk2 callback: appends each description and " | " to the 4096-byte buffer `ud`. */
static inline herr_t
h5t_collect_msg(unsigned n, const H5E_error2_t *e, void *ud)
{
    char *buf = ud;
    (void)n;
    if (e->desc)
        snprintf(buf + strlen(buf), 4096 - strlen(buf), "%s | ", e->desc);
    return 0;
}

/* Opens reference `ref` (H5R_OBJECT2) and checks that the object is `path`: its name, and its token the
 * one `path` has through `f`. 0, or -1 with what differed printed. */
static inline int
h5t_check_ref(hid_t f, H5R_ref_t *ref, const char *path)
{
    char        name[256] = "";
    H5O_info2_t a, b;
    int         cmp = 1, ret = -1;
    hid_t       o = H5I_INVALID_HID;
    if (H5Rget_type(ref) != H5R_OBJECT2)
        fprintf(stderr, "h5t_check_ref: '%s': not an H5R_OBJECT2 reference\n", path);
    else if ((o = H5Ropen_object(ref, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        fprintf(stderr, "h5t_check_ref: '%s': H5Ropen_object failed\n", path);
    else if (H5Iget_name(o, name, sizeof name) <= 0 || strcmp(name, path) != 0)
        fprintf(stderr, "h5t_check_ref: the reference names '%s', want '%s'\n", name, path);
    else if (H5Oget_info3(o, &a, H5O_INFO_BASIC) < 0 ||
             H5Oget_info_by_name3(f, path, &b, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ||
             H5Otoken_cmp(f, &a.token, &b.token, &cmp) < 0 || cmp != 0)
        fprintf(stderr, "h5t_check_ref: '%s': the referenced object is not the one at that path\n", path);
    else
        ret = 0;
    if (o >= 0 && H5Oclose(o) < 0)
        ret = -1;
    return ret;
}

#endif
