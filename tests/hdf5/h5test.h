/*
 * h5test.h: helpers the HDF5-facing tests share (with tests/runner.h): a file access property list that
 * selects the zarr connector, the check that a zarr store came out (HDF5 silently falls back to the
 * native format when a named connector fails to load), and an error-stack walker that collects the
 * messages of a failed call. Header-only; every function is static.
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

#endif
