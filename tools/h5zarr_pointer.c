/*
 * h5zarr_pointer: writes a pointer file for an existing zarr store, so that programs which pick a file's
 * format from its first bytes (netCDF-C) can open the store through HDF5 and the zarr VOL connector.
 *
 *   h5zarr_pointer NAME STORE
 *
 * NAME becomes a pointer file (docs/FORMAT.md, "Pointer files"): a valid, empty native HDF5 file whose
 * root attribute `h5zarr_store` names the store, followed after HDF5's end of file by a 512-byte record
 * "h5zarr pointer v2\nstore=<store name>\nid=<32 hex digits>\n...". The store gets the key
 * `.h5zarr_pointer` naming NAME as its owner (with the id), written through the zarr store interface; a
 * store that already has another owner is refused (copy its pointer instead). STORE must be a zarr store (a
 * directory with zarr.json, .zgroup, .zarray or .zmetadata) in NAME's own directory: a pointer may only
 * name a store beside it. Then
 *
 *   HDF5_VOL_CONNECTOR=zarr ncdump NAME
 *
 * reads the store (for example one NCZarr wrote) through netCDF-4 -> HDF5 -> the connector. The pointer
 * is written to a temporary file and renamed over NAME; an existing NAME is replaced only when it is
 * itself a pointer file (either version). The HDF5 part is made with HDF5's native connector whatever
 * HDF5_VOL_CONNECTOR says. The format is the one the connector writes (vol/pointer.c); nothing of vol/
 * is linked.
 * Exit status 0 on success, 1 with a message on stderr otherwise, 2 for a usage error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <hdf5.h>

#include "h5zarr/zarr.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define POINTER_MAGIC    "h5zarr pointer v1\n"
#define POINTER_MAGIC_V2 "h5zarr pointer v2\n"
#define POINTER_BLOCK    512
#define RECORD_KEY       ".h5zarr_pointer"

static int
die(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "h5zarr_pointer: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return 1;
}

/* The real path of the directory holding `path` (malloc'ed), NULL with errno set. */
static char *
real_dir(const char *path)
{
    char *copy = strdup(path), *r = NULL;
    if (copy)
        r = realpath(dirname(copy), NULL);
    free(copy);
    return r;
}

static int
is_file(const char *dir, const char *leaf)
{
    char        p[PATH_MAX];
    struct stat st;
    return snprintf(p, sizeof p, "%s/%s", dir, leaf) < (int)sizeof p && stat(p, &st) == 0 &&
           S_ISREG(st.st_mode);
}

/* Whether `path` is a reference file (zarr_store_open_ref) with a zarr node at its root. */
static int
is_reference_file(const char *path)
{
    zarr_store *s  = NULL;
    size_t      n  = strlen(path);
    int         ok = n > 5 && strcmp(path + n - 5, ".json") == 0 &&
             zarr_store_open_ref(path, ZARR_STORE_RDONLY, &s) == ZARR_OK &&
             (zarr_store_exists(s, ".zgroup") == ZARR_OK || zarr_store_exists(s, ".zarray") == ZARR_OK);
    zarr_store_close(s);
    return ok;
}

/* Whether `name` is a pointer file: the version 1 magic at its start, or HDF5's signature at its start
 * and the version 2 magic 512 bytes before its end. */
static int
is_pointer(const char *name)
{
    char   head[sizeof POINTER_MAGIC], tail[sizeof POINTER_MAGIC];
    size_t ml = sizeof POINTER_MAGIC - 1;
    FILE  *fp = fopen(name, "rb");
    int    yes;
    if (!fp)
        return 0;
    yes = fread(head, 1, ml, fp) == ml && !memcmp(head, POINTER_MAGIC, ml);
    if (!yes && !memcmp(head, "\x89HDF\r\n\x1a\n", 8) && fseek(fp, -POINTER_BLOCK, SEEK_END) == 0)
        yes = fread(tail, 1, ml, fp) == ml && !memcmp(tail, POINTER_MAGIC_V2, ml);
    fclose(fp);
    return yes;
}

/* `s` as a JSON string body into out (n bytes): '"' and '\\' escaped; 0, or -1 when too long. */
static int
json_body(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s; s++) {
        if (k + 3 > n)
            return -1;
        if (*s == '"' || *s == '\\')
            out[k++] = '\\';
        out[k++] = *s;
    }
    out[k] = '\0';
    return 0;
}

/* The store's owner record: refuses a store that has one (it is another pointer's), else writes one
 * naming `pointer` with `id`. 0, or 1 with a message. */
static int
record_owner(const char *spath, const char *pointer, const char *id)
{
    zarr_store *s = NULL;
    zarr_buf    b = ZARR_BUF_INIT;
    char        body[1024], text[1200];
    int         rc, ret = 1;
    if (zarr_store_open(spath, ZARR_STORE_RDWR, &s) != ZARR_OK) {
        ret = die("can't open the store '%s': %s", spath, zarr_errmsg());
        goto done;
    }
    if (json_body(pointer, body, sizeof body) < 0) {
        ret = die("'%s': name too long%s", pointer, "");
        goto done;
    }
    snprintf(text, sizeof text, "\"pointer\":\"%s\"}", body);
    if ((rc = zarr_store_get(s, RECORD_KEY, &b)) == ZARR_OK && b.size < 2048 &&
        memmem(b.data, b.size, text, strlen(text))) {
        rc = ZARR_ENOTFOUND; /* NAME's own store: its pointer written again */
    }
    else if (rc == ZARR_OK) {
        snprintf(text, sizeof text, "%.*s", (int)(b.size > 400 ? 400 : b.size), (const char *)b.data);
        ret = die("the store '%s' already belongs to a pointer file (its key " RECORD_KEY
                  ": %s): copy that pointer to make another one (a copy reads the store, and copies it "
                  "before its first write), or delete the key to give the store a new owner",
                  spath, text);
        goto done;
    }
    if (rc != ZARR_ENOTFOUND) {
        ret = die("can't read the store '%s': %s", spath, zarr_errmsg());
        goto done;
    }
    snprintf(text, sizeof text, "{\"h5zarr_pointer\":1,\"id\":\"%s\",\"pointer\":\"%s\"}", id, body);
    if (zarr_store_set(s, RECORD_KEY, text, strlen(text)) != ZARR_OK) {
        ret = die("can't write to the store '%s': %s", spath, zarr_errmsg());
        goto done;
    }
    ret = 0;
done:
    zarr_buf_free(&b);
    zarr_store_close(s);
    return ret;
}

/* The HDF5 part: an empty native file with the root attribute h5zarr_store. */
static int
write_hdf5_part(const char *tmp, const char *rel)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1, s = -1, t = -1, a = -1;
    int   ret = -1;
    if (fapl < 0 || H5Pset_fapl_sec2(fapl) < 0 || H5Pset_vol(fapl, H5VL_NATIVE, NULL) < 0)
        goto done;
    if ((f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0 || (s = H5Screate(H5S_SCALAR)) < 0 ||
        (t = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_size(t, strlen(rel)) < 0 ||
        (a = H5Acreate2(f, "h5zarr_store", t, s, H5P_DEFAULT, H5P_DEFAULT)) < 0 || H5Awrite(a, t, rel) < 0)
        goto done;
    ret = 0;
done:
    if (a >= 0)
        H5Aclose(a);
    if (t >= 0)
        H5Tclose(t);
    if (s >= 0)
        H5Sclose(s);
    if (f >= 0 && H5Fclose(f) < 0)
        ret = -1;
    if (fapl >= 0)
        H5Pclose(fapl);
    return ret;
}

int
main(int argc, char **argv)
{
    const char   *name, *store, *rel;
    char         *ndir = NULL, *sdir = NULL, *spath = NULL, tmp[PATH_MAX], block[POINTER_BLOCK], id[33];
    unsigned char r[16];
    struct stat   st;
    int           refs = 0;
    int           fd = -1, k, ret = 1;

    if (argc != 3) {
        fprintf(stderr,
                "usage: h5zarr_pointer NAME STORE\n"
                "  writes NAME, an h5zarr pointer file for the zarr store STORE in NAME's directory\n");
        return 2;
    }
    name  = argv[1];
    store = argv[2];
    rel   = strrchr(store, '/') ? strrchr(store, '/') + 1 : store;
    if (!*rel || !strcmp(rel, ".") || !strcmp(rel, ".."))
        return die("'%s': give the store by its name, not as a directory path ending in '/' or '.'%s", store,
                   "");
    for (const char *c = rel; *c; c++)
        if ((unsigned char)*c < 0x20)
            return die("'%s': a control character in the store name%s", store, "");
    if (!(ndir = real_dir(name)))
        return die("no directory for '%s': %s", name, strerror(errno));
    /* A bare store name is looked for beside NAME; a path must lead there. */
    if (strchr(store, '/')) {
        if (!(sdir = real_dir(store))) {
            ret = die("no directory for '%s': %s", store, strerror(errno));
            goto done;
        }
        if (strcmp(sdir, ndir)) {
            ret = die("the store '%s' is not in the directory of '%s': a pointer may only name a store "
                      "beside it",
                      store, name);
            goto done;
        }
    }
    if (!(spath = malloc(strlen(ndir) + strlen(rel) + 2))) {
        ret = die("out of memory%s%s", "", "");
        goto done;
    }
    sprintf(spath, "%s/%s", ndir, rel);
    refs = stat(spath, &st) == 0 && S_ISREG(st.st_mode) && is_reference_file(spath);
    if (!refs && (stat(spath, &st) != 0 || !S_ISDIR(st.st_mode))) {
        ret = die("no zarr store '%s' (a directory, or a reference file *.json) beside '%s'", spath, name);
        goto done;
    }
    if (!refs && !is_file(spath, "zarr.json") && !is_file(spath, ".zgroup") && !is_file(spath, ".zarray") &&
        !is_file(spath, ".zmetadata")) {
        ret = die("'%s' is no zarr store (no zarr.json, .zgroup, .zarray or .zmetadata in it)%s", spath, "");
        goto done;
    }
    if (lstat(name, &st) == 0 && !is_pointer(name)) {
        ret = die("'%s' exists and is not a pointer file; not replacing it%s", name, "");
        goto done;
    }
    for (const char *c = name; *c; c++)
        if ((unsigned char)*c < 0x20)
            return die("'%s': a control character in the name%s", name, "");
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        ret = die("can't make an id: %s%s", strerror(errno), "");
        goto done;
    }
    for (size_t i = 0; i < sizeof r; i++)
        sprintf(id + 2 * i, "%02x", r[i]);
    memset(block, ' ', sizeof block);
    k = snprintf(block, sizeof block,
                 POINTER_MAGIC_V2
                 "store=%s\nid=%s\n"
                 "# This file stands for the zarr store '%s' beside it (h5zarr pointer file, "
                 "see its\n"
                 "# docs/FORMAT.md): open it through the zarr VOL connector, or read the "
                 "store directly.\n",
                 rel, id, rel);
    if (k < 0 || (size_t)k >= sizeof block) {
        ret = die("store name '%s' too long for a pointer%s", rel, "");
        goto done;
    }
    block[k]                = ' ';
    block[sizeof block - 1] = '\n';
    if (snprintf(tmp, sizeof tmp, "%s.h5zarr-tmp.%ld", name, (long)getpid()) >= (int)sizeof tmp) {
        ret = die("'%s': name too long%s", name, "");
        goto done;
    }
    if (write_hdf5_part(tmp, rel) < 0) {
        ret = die("can't write the HDF5 part of '%s' (HDF5's error stack above)%s", tmp, "");
        goto cleanup;
    }
    /* the record after HDF5's end of file (HDF5 reads a file longer than its end-of-file address) */
    if ((fd = open(tmp, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0 ||
        write(fd, block, sizeof block) != (ssize_t)sizeof block || fsync(fd) != 0) {
        ret = die("can't write '%s': %s", tmp, strerror(errno));
        goto cleanup;
    }
    k  = close(fd);
    fd = -1;
    if (k != 0) {
        ret = die("can't write '%s': %s", tmp, strerror(errno));
        goto cleanup;
    }
    {
        const char *nb = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
        if (!refs && record_owner(spath, nb, id) != 0) /* a reference store is read-only: no owner */
            goto cleanup;
    }
    if (rename(tmp, name) != 0) {
        ret = die("can't put '%s' in place: %s", name, strerror(errno));
        goto cleanup;
    }
    ret = 0;
    goto done;
cleanup:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
done:
    free(ndir);
    free(sdir);
    free(spath);
    return ret;
}
