/*
 * pointer.c: pointer files (see pointer.h): reading and validating one, writing one atomically.
 *
 * The HDF5 part of a pointer is made by the native connector through the API (a file with a 512-byte
 * user block and one root attribute); the user block is then filled in and the file renamed into place.
 */
#include "pointer.h"
#include "native.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory part of `path` with its trailing '/' ("" for a bare name); malloc'ed. */
static char *
dir_of(const char *path)
{
    const char *s = strrchr(path, '/');
    size_t      n = s ? (size_t)(s - path) + 1 : 0;
    char       *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

int
h5zv_pointer_read(const char *name, char **store)
{
    unsigned char block[H5ZV_POINTER_BLOCK];
    char          why[300], *dir = NULL, *rel = NULL;
    struct stat   st;
    ssize_t       n;
    int           fd, p;

    *store = NULL;
    /* A pointer file is a local file: a URL names a store (file.c), and is never looked up here. */
    if (!name || zarr_store_is_url(name) || stat(name, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size < H5ZV_POINTER_BLOCK)
        return 0;
    if ((fd = open(name, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    n = pread(fd, block, sizeof block, 0);
    close(fd);
    if (n != (ssize_t)sizeof block)
        return 0;
    if ((p = h5zv_pointer_parse(block, sizeof block, &rel, why, sizeof why)) <= 0) {
        if (p < 0)
            h5zv_err_push(__func__, __LINE__, "pointer file '%s' %s", name, why);
        return p;
    }
    if (!(dir = dir_of(name)) || !(*store = malloc(strlen(dir) + strlen(rel) + 1))) {
        free(dir);
        free(rel);
        h5zv_err_push(__func__, __LINE__, "out of memory");
        return -1;
    }
    sprintf(*store, "%s%s", dir, rel);
    free(dir);
    free(rel);
    return 1;
}

char *
h5zv_pointer_store_for(const char *name)
{
    size_t n = strlen(name);
    char  *s;
    while (n > 1 && name[n - 1] == '/')
        n--;
    if ((s = malloc(n + 6)))
        snprintf(s, n + 6, "%.*s.zarr", (int)n, name);
    return s;
}

/* The HDF5 part: an empty native file with a user block and a root attribute naming the store. */
static int
write_hdf5_part(const char *tmp, const char *rel)
{
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = h5zv_native_fapl(H5P_DEFAULT), f = -1, s = -1, t = -1,
          a = -1;
    int ret = -1;
    if (fcpl < 0 || fapl < 0 || H5Pset_userblock(fcpl, H5ZV_POINTER_BLOCK) < 0)
        goto done;
    if ((f = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, fapl)) < 0 || (s = H5Screate(H5S_SCALAR)) < 0 ||
        (t = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_size(t, strlen(rel)) < 0 ||
        (a = H5Acreate2(f, "h5zarr_store", t, s, H5P_DEFAULT, H5P_DEFAULT)) < 0 || H5Awrite(a, t, rel) < 0)
        goto done;
    ret = 0;
done:
    h5zv_close(a);
    h5zv_close(t);
    h5zv_close(s);
    if (f >= 0 && H5Fclose(f) < 0)
        ret = -1;
    h5zv_close(fapl);
    h5zv_close(fcpl);
    return ret;
}

int
h5zv_pointer_write(const char *name, const char *store)
{
    char        block[H5ZV_POINTER_BLOCK];
    const char *rel = strrchr(store, '/') ? strrchr(store, '/') + 1 : store;
    char       *tmp = NULL;
    int         fd = -1, ret = -1, k;

    if (!(tmp = malloc(strlen(name) + 32)))
        H5ZV_GOTO_ERROR("out of memory");
    sprintf(tmp, "%s.h5zarr-tmp.%ld", name, (long)getpid());
    if (write_hdf5_part(tmp, rel) < 0)
        H5ZV_GOTO_ERROR("can't write pointer file '%s' for store '%s'", name, store);
    memset(block, ' ', sizeof block);
    k = snprintf(block, sizeof block,
                 H5ZV_POINTER_MAGIC
                 "store=%s\n"
                 "# This file stands for the zarr store '%s' beside it (h5zarr pointer file, see its\n"
                 "# docs/FORMAT.md): open it through the zarr VOL connector, or read the store directly.\n",
                 rel, rel);
    if (k < 0 || (size_t)k >= sizeof block)
        H5ZV_GOTO_ERROR("can't write pointer file '%s': store name '%s' too long", name, rel);
    block[k]                = ' ';
    block[sizeof block - 1] = '\n';
    if ((fd = open(tmp, O_WRONLY | O_CLOEXEC)) < 0 ||
        pwrite(fd, block, sizeof block, 0) != (ssize_t)sizeof block || fsync(fd) != 0)
        H5ZV_GOTO_ERROR("can't write pointer file '%s': %s", tmp, strerror(errno));
    if (close(fd) != 0) {
        fd = -1;
        H5ZV_GOTO_ERROR("can't write pointer file '%s': %s", tmp, strerror(errno));
    }
    fd = -1;
    if (rename(tmp, name) != 0)
        H5ZV_GOTO_ERROR("can't put pointer file '%s' in place: %s", name, strerror(errno));
    ret = 0;
done:
    if (fd >= 0)
        close(fd);
    if (ret < 0 && tmp)
        unlink(tmp);
    free(tmp);
    return ret;
}
