/*
 * external.c: external storage (H5Pset_external) of datasets in zarr stores (docs/FORMAT.md, "External
 * storage").
 *
 * A dataset made with an external file list keeps its raw data in the files the program named, as native
 * HDF5 keeps it: the contiguous layout of the dataset's elements (C order, the dataset's own datatype and
 * byte order) laid over the files in list order, each file from its offset for its size (the last one may
 * be H5F_UNLIMITED). The list is the "external" key of the dataset's `_h5zarr.dcpl` (vol/plist_json.c
 * writes and reads it field by field and rebuilds the dcpl with H5Pset_external); the zarr array itself
 * never gets a chunk. Native HDF5's rules are followed (H5Defl.c): files are created when first written,
 * nothing is written at H5Dcreate (no fill value), a file that does not exist can't be read, bytes past a
 * file's end read as zeros, relative names are taken relative to the prefix (HDF5_EXTFILE_PREFIX, else the
 * dapl's H5Pset_efile_prefix, "${ORIGIN}" = the directory of the file's name) or the working directory.
 *
 * Why POSIX calls here, outside the store interface (docs/HACKING.md, "Store interface"): the external
 * files are not part of the store. They are files the program named, anywhere (absolute names, names
 * relative to the working directory or a prefix), written in place at the given offsets among bytes that
 * are not ours (a header, other datasets' data), where a store's keys are names below its root and its
 * writes replace whole values. So, like vol/pointer.c's calls on names, the file I/O is confined to this
 * file, and it runs on the caller's thread; stores at URLs and MPI-IO opens refuse external storage.
 * Ownership: every function here borrows its arguments; what it opens or allocates it releases.
 */
#include "h5zv.h"
#include "reserved.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXT_SEQ 1024 /* sequences asked of a selection iterator at a time */

/* One entry of the list; `size` UINT64_MAX for H5F_UNLIMITED. */
typedef struct ext_file {
    char    *name; /* as listed */
    char    *full; /* with the prefix, as it is opened */
    uint64_t offset;
    uint64_t size;
    uint64_t start; /* the dataset's byte address of the entry's first byte */
} ext_file;

typedef struct ext_list {
    ext_file *e;
    size_t    n;
    /* the file open now (one at a time: entries naming the same file share it), its access mode */
    int       fd;
    char     *fd_name;
    bool      fd_write;
    h5zv_obj *d;
} ext_list;

static void
ext_list_free(ext_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->e[i].name);
        free(l->e[i].full);
    }
    free(l->e);
    if (l->fd >= 0)
        close(l->fd);
    free(l->fd_name);
    memset(l, 0, sizeof *l);
    l->fd = -1;
}

bool
h5zv_external_is(h5zv_node *n)
{
    struct json_object *meta = n ? h5zv_node_meta(n, false) : NULL, *dj;
    return meta && json_object_object_get_ex(meta, "dcpl", &dj) &&
           json_object_is_type(dj, json_type_object) && json_object_object_get_ex(dj, "external", NULL);
}

/* ---- the checks native HDF5 makes (H5Pset_external, H5Dcreate) and ours --------------------------- */

/* The list's total size (UINT64_MAX: unlimited), or -1 with an error pushed. */
static int
ext_total(hid_t dcpl, const char *what, uint64_t *total)
{
    int n  = H5Pget_external_count(dcpl);
    *total = 0;
    if (n < 0) {
        h5zv_err_push(__func__, __LINE__, "%s: can't read the external file list", what);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        off_t   off = 0;
        hsize_t sz  = 0;
        char    c[2];
        if (H5Pget_external(dcpl, (unsigned)i, sizeof c, c, &off, &sz) < 0) {
            h5zv_err_push(__func__, __LINE__, "%s: can't read external file %d", what, i);
            return -1;
        }
        if (sz == H5F_UNLIMITED) {
            *total = UINT64_MAX;
            return 0;
        }
        if (*total > UINT64_MAX - 1 - sz) {
            h5zv_err_push(__func__, __LINE__, "%s: the sizes of the external files overflow", what);
            return -1;
        }
        *total += sz;
    }
    return 0;
}

/* The rules for a dataset of type `type` and dataspace `space` with the external files of `dcpl`; `what`
 * names the dataset in messages. */
static int
ext_rules(const char *what, hid_t dcpl, hid_t type, hid_t space)
{
    hsize_t     dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
    int         nd = 0, ret = -1;
    size_t      es    = H5Tget_size(type);
    uint64_t    total = 0, maxpts = 1, pts = 1;
    bool        unlim = false;
    H5S_class_t sc    = H5Sget_simple_extent_type(space);

    if (H5Pget_layout(dcpl) != H5D_CONTIGUOUS)
        H5ZV_GOTO_ERROR_CODE(
            H5E_DATASET, H5E_BADVALUE,
            "%s: external storage (H5Pset_external) needs the contiguous layout, not %s (HDF5 "
            "refuses a chunked one)",
            what,
            H5Pget_layout(dcpl) == H5D_CHUNKED   ? "chunked"
            : H5Pget_layout(dcpl) == H5D_COMPACT ? "compact"
                                                 : "virtual");
    if (H5Pget_nfilters(dcpl) > 0)
        H5ZV_GOTO_ERROR_CODE(H5E_DATASET, H5E_BADVALUE,
                             "%s: filters can only be used with chunked layout, and external storage is "
                             "contiguous",
                             what);
    if (es == 0 || H5Tis_variable_str(type) > 0 || H5Tdetect_class(type, H5T_VLEN) > 0 ||
        H5Tdetect_class(type, H5T_REFERENCE) > 0 || h5zv_type_has_pointers(type))
        H5ZV_GOTO_ERROR_CODE(
            H5E_DATASET, H5E_UNSUPPORTED,
            "%s: external storage of a datatype with variable-length parts or references is not "
            "supported by the zarr connector (native HDF5 would put its own heap addresses in "
            "the external files); use a fixed-size type",
            what);
    if (ext_total(dcpl, what, &total) < 0)
        goto done;
    if (sc == H5S_SIMPLE) {
        if ((nd = H5Sget_simple_extent_dims(space, dims, maxdims)) < 0)
            H5ZV_GOTO_ERROR("%s: can't read the dataspace", what);
        for (int i = 0; i < nd; i++) {
            if (i > 0 && maxdims[i] != dims[i])
                H5ZV_GOTO_ERROR_CODE(H5E_DATASET, H5E_UNSUPPORTED,
                                     "%s: only the first dimension can be extendible with external storage "
                                     "(as in HDF5)",
                                     what);
            if (maxdims[i] == H5S_UNLIMITED)
                unlim = true;
            else if (maxdims[i] && maxpts > UINT64_MAX / maxdims[i])
                H5ZV_GOTO_ERROR("%s: the dataspace's maximum size overflows", what);
            else
                maxpts *= maxdims[i];
            pts *= dims[i]; /* at most maxpts */
        }
    }
    else if (sc == H5S_NULL)
        maxpts = pts = 0;
    if (unlim && total != UINT64_MAX)
        H5ZV_GOTO_ERROR_CODE(
            H5E_DATASET, H5E_BADVALUE,
            "%s: unlimited dataspace but finite external storage (give the last external file "
            "the size H5F_UNLIMITED)",
            what);
    if (!unlim && (maxpts > UINT64_MAX / es || (total != UINT64_MAX && maxpts * es > total)))
        H5ZV_GOTO_ERROR_CODE(H5E_DATASET, H5E_BADVALUE,
                             "%s: the dataspace (%llu elements of %zu bytes at most) exceeds the external "
                             "storage size %llu",
                             what, (unsigned long long)maxpts, es, (unsigned long long)total);
    if (total != UINT64_MAX && pts * es > total) /* a store whose shape outgrew its list */
        H5ZV_GOTO_ERROR(
            "%s: the dataspace (%llu elements of %zu bytes) exceeds the external storage size %llu", what,
            (unsigned long long)pts, es, (unsigned long long)total);
    ret = 0;
done:
    return ret;
}

int
h5zv_external_create_check(h5zv_file *f, const char *path, hid_t dcpl, hid_t type, hid_t space)
{
    char what[512];
    int  n = H5Pget_external_count(dcpl), ret = -1;

    snprintf(what, sizeof what, "can't create dataset '/%s'", path);
    if (n < 0)
        H5ZV_GOTO_ERROR("%s: can't read the external file list", what);
    if ((size_t)n > H5ZV_EXT_FILES_MAX)
        H5ZV_GOTO_ERROR("%s: %d external files (at most %u)", what, n, (unsigned)H5ZV_EXT_FILES_MAX);
    if (zarr_store_is_url(f->name) && strncmp(f->name, "file://", 7) != 0)
        H5ZV_GOTO_ERROR_CODE(H5E_DATASET, H5E_UNSUPPORTED,
                             "%s: external storage (H5Pset_external) keeps raw data in local files named "
                             "relative to the HDF5 file, and '%s' is not a local store; create the dataset "
                             "without external files",
                             what, f->name);
    if (f->mpi)
        H5ZV_GOTO_ERROR_CODE(H5E_DATASET, H5E_UNSUPPORTED,
                             "%s: external storage (H5Pset_external) is not supported through MPI-IO", what);
    for (int i = 0; i < n; i++) {
        char   *name = malloc(H5ZV_EXT_NAME_MAX + 2);
        off_t   off  = 0;
        hsize_t sz   = 0;
        bool    ok  = name && H5Pget_external(dcpl, (unsigned)i, H5ZV_EXT_NAME_MAX + 2, name, &off, &sz) >= 0;
        bool    len = ok && strlen(name) <= H5ZV_EXT_NAME_MAX, utf = len && h5zv_utf8_ok(name);
        free(name);
        if (!ok)
            H5ZV_GOTO_ERROR("%s: can't read external file %d", what, i);
        if (!len || !utf)
            H5ZV_GOTO_ERROR_CODE(
                H5E_DATASET, H5E_UNSUPPORTED,
                "%s: the name of external file %d is %s: the zarr metadata keeping the list is "
                "JSON text",
                what, i, !len ? "longer than 4096 bytes" : "not UTF-8");
        if (sz != H5F_UNLIMITED && (uint64_t)off > (uint64_t)INT64_MAX - sz)
            H5ZV_GOTO_ERROR_CODE(H5E_DATASET, H5E_BADVALUE,
                                 "%s: external file %d: offset + size overflow a file offset", what, i);
    }
    ret = ext_rules(what, dcpl, type, space);
done:
    return ret;
}

int
h5zv_external_open_check(h5zv_obj *d, hid_t p)
{
    char what[512];
    int  n = H5Pget_external_count(p);
    if (n == 0)
        return 0;
    snprintf(what, sizeof what, "dataset '/%s' (external storage recorded in _h5zarr.dcpl.external)",
             d->path);
    if (n < 0) {
        h5zv_err_push(__func__, __LINE__, "%s: can't read the external file list", what);
        return -1;
    }
    if (ext_rules(what, p, d->type_id, d->space_id) < 0)
        return -1;
    /* a store at a URL naming local files: never followed (as at create) */
    if (zarr_store_is_url(d->file->name) && strncmp(d->file->name, "file://", 7) != 0) {
        h5zv_err_push(__func__, __LINE__,
                      "%s: '%s' is not a local store, and external storage names local files; the zarr "
                      "connector does not read them for a store at a URL",
                      what, d->file->name);
        return -1;
    }
    return 0;
}

/* ---- names ---------------------------------------------------------------------------------------- */

/* The directory of the file's name as HDF5 builds it (H5_build_extpath): an absolute name's directory,
 * else the working directory joined with the name's; with its trailing '/'. NULL when out of memory or
 * when the working directory can't be read. */
static char *
origin_dir(const char *name)
{
    const char *slash;
    char       *cwd = NULL, *out = NULL;
    size_t      n;

    if (!strncmp(name, "file://", 7))
        name += 7;
    slash = strrchr(name, '/');
    n     = slash ? (size_t)(slash - name) + 1 : 0;
    if (name[0] == '/') {
        if ((out = malloc(n + 1))) {
            memcpy(out, name, n);
            out[n] = '\0';
        }
        return out;
    }
    if (!(cwd = getcwd(NULL, 0)))
        return NULL;
    {
        size_t c = strlen(cwd), len = c + 1 + n + 1;
        if ((out = malloc(len)))
            snprintf(out, len, "%s%s%.*s", cwd, c && cwd[c - 1] == '/' ? "" : "/", (int)n, name);
    }
    free(cwd);
    return out;
}

int
h5zv_external_prefix(h5zv_obj *d, char **out)
{
    const char *env = getenv("HDF5_EXTFILE_PREFIX");
    char       *dp = NULL, *dir = NULL;
    const char *pre = NULL;
    int         ret = -1;

    *out = NULL;
    if (env && *env)
        pre = env;
    else if (d->dapl_id >= 0) {
        ssize_t n = H5Pget_efile_prefix(d->dapl_id, NULL, 0);
        if (n < 0)
            H5ZV_GOTO_ERROR("dataset '/%s': can't read the external file prefix of its access properties",
                            d->path);
        if (n > 0) {
            if (!(dp = calloc(1, (size_t)n + 1)))
                H5ZV_GOTO_ERROR("out of memory");
            if (H5Pget_efile_prefix(d->dapl_id, dp, (size_t)n + 1) < 0)
                H5ZV_GOTO_ERROR("dataset '/%s': can't read the external file prefix", d->path);
            pre = dp;
        }
    }
    if (!pre || !*pre || !strcmp(pre, ".")) {
        ret = 0; /* relative to the working directory */
        goto done;
    }
    if (!strncmp(pre, "${ORIGIN}", 9)) {
        size_t len;
        if (!(dir = origin_dir(d->file->name)))
            H5ZV_GOTO_ERROR("dataset '/%s': can't tell the directory of '%s' for ${ORIGIN}", d->path,
                            d->file->name);
        len = strlen(dir) + strlen(pre + 9) + 1;
        if (!(*out = malloc(len)))
            H5ZV_GOTO_ERROR("out of memory");
        snprintf(*out, len, "%s%s", dir, pre + 9);
    }
    else if (!(*out = strdup(pre)))
        H5ZV_GOTO_ERROR("out of memory");
    ret = 0;
done:
    free(dp);
    free(dir);
    return ret;
}

/* `name` with `prefix` before it unless it is absolute (malloc'ed). */
static char *
combine(const char *prefix, const char *name)
{
    size_t p, len;
    char  *out;
    if (!prefix || !*prefix || name[0] == '/')
        return strdup(name);
    p   = strlen(prefix);
    len = p + 1 + strlen(name) + 1;
    if ((out = malloc(len)))
        snprintf(out, len, "%s%s%s", prefix, prefix[p - 1] == '/' ? "" : "/", name);
    return out;
}

/* The list of d->dcpl_id with full names. */
static int
ext_list_load(h5zv_obj *d, ext_list *l)
{
    char    *prefix = NULL, *name = NULL;
    int      n = H5Pget_external_count(d->dcpl_id), ret = -1;
    uint64_t start = 0;

    memset(l, 0, sizeof *l);
    l->fd = -1;
    l->d  = d;
    if (n <= 0)
        H5ZV_GOTO_ERROR("dataset '/%s' has no external file list", d->path);
    if (h5zv_external_prefix(d, &prefix) < 0)
        goto done;
    if (!(l->e = calloc((size_t)n, sizeof *l->e)) || !(name = malloc(H5ZV_EXT_NAME_MAX + 2)))
        H5ZV_GOTO_ERROR("out of memory");
    l->n = (size_t)n;
    for (int i = 0; i < n; i++) {
        off_t   off = 0;
        hsize_t sz  = 0;
        if (H5Pget_external(d->dcpl_id, (unsigned)i, H5ZV_EXT_NAME_MAX + 2, name, &off, &sz) < 0)
            H5ZV_GOTO_ERROR("dataset '/%s': can't read external file %d", d->path, i);
        if (!(l->e[i].name = strdup(name)) || !(l->e[i].full = combine(prefix, name)))
            H5ZV_GOTO_ERROR("out of memory");
        l->e[i].offset = (uint64_t)off;
        l->e[i].size   = sz == H5F_UNLIMITED ? UINT64_MAX : (uint64_t)sz;
        l->e[i].start  = start;
        start          = l->e[i].size == UINT64_MAX || start > UINT64_MAX - l->e[i].size ? UINT64_MAX
                                                                                         : start + l->e[i].size;
    }
    ret = 0;
done:
    free(prefix);
    free(name);
    return ret;
}

/* Opens entry `e` for reading or writing (writing creates the file, as HDF5 does). 0 opened, 1 for a read
 * with `missing_ok` of a file that does not exist, -1 with an error pushed. */
static int
ext_open(ext_list *l, const ext_file *e, bool write, bool missing_ok)
{
    if (l->fd >= 0 && !strcmp(l->fd_name, e->full) && (l->fd_write || !write))
        return 0;
    if (l->fd >= 0)
        close(l->fd);
    free(l->fd_name);
    l->fd_name = NULL;
    /* O_NONBLOCK: a FIFO named in the list must not block the open (it is refused below) */
    l->fd = write ? open(e->full, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0666)
                  : open(e->full, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (l->fd < 0) {
        int err = errno;
        if (!write && missing_ok && err == ENOENT)
            return 1;
        h5zv_err_push(__func__, __LINE__, "dataset '/%s': can't open external file '%s' for %s: %s",
                      l->d->path, e->full, write ? "writing" : "reading", strerror(err));
        return -1;
    }
    {
        /* only regular files: a device or FIFO (a store naming /dev/stdin or /dev/zero) would block or
         * never end (native HDF5 opens anything) */
        struct stat st;
        if (fstat(l->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            close(l->fd);
            l->fd = -1;
            h5zv_err_push(__func__, __LINE__, "dataset '/%s': external file '%s' is not a regular file",
                          l->d->path, e->full);
            return -1;
        }
    }
    if (!(l->fd_name = strdup(e->full))) {
        close(l->fd);
        l->fd = -1;
        h5zv_err_push(__func__, __LINE__, "out of memory");
        return -1;
    }
    l->fd_write = write;
    return 0;
}

/* Moves `len` bytes at the dataset's byte address `addr` between the files and `buf`. Reads past a file's
 * end give zeros (as HDF5 reads them); `missing_ok` (background reads) takes a file that does not exist
 * as zeros too. */
static int
ext_io(ext_list *l, uint64_t addr, uint64_t len, uint8_t *buf, bool write, bool missing_ok)
{
    size_t lo = 0, hi = l->n;
    /* the last entry starting at or before addr */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->e[mid].start <= addr)
            lo = mid;
        else
            hi = mid;
    }
    while (len > 0) {
        const ext_file *e;
        uint64_t        skip, n;
        int             o;
        /* the entry holding addr: past those that end at or before it (empty ones too); every start is
         * at most addr (starts grow with the index, the first is 0) */
        while (lo < l->n && l->e[lo].size != UINT64_MAX && addr - l->e[lo].start >= l->e[lo].size)
            lo++;
        if (lo >= l->n) {
            h5zv_err_push(__func__, __LINE__,
                          "dataset '/%s': byte %llu is past the end of its external storage", l->d->path,
                          (unsigned long long)addr);
            return -1;
        }
        e    = &l->e[lo];
        skip = addr - e->start;
        n    = e->size == UINT64_MAX ? len : e->size - skip < len ? e->size - skip : len;
        if (e->offset + skip > (uint64_t)INT64_MAX - n) {
            h5zv_err_push(__func__, __LINE__, "dataset '/%s': external file '%s': the offset overflows",
                          l->d->path, e->full);
            return -1;
        }
        if ((o = ext_open(l, e, write, missing_ok)) < 0)
            return -1;
        if (o == 1)
            memset(buf, 0, (size_t)n);
        else
            for (uint64_t done = 0; done < n;) {
                size_t  chunk = n - done > (1u << 30) ? (1u << 30) : (size_t)(n - done);
                off_t   at    = (off_t)(e->offset + skip + done);
                ssize_t r =
                    write ? pwrite(l->fd, buf + done, chunk, at) : pread(l->fd, buf + done, chunk, at);
                if (r < 0 && errno == EINTR)
                    continue;
                if (r < 0 || (r == 0 && write)) {
                    h5zv_err_push(__func__, __LINE__, "dataset '/%s': can't %s external file '%s': %s",
                                  l->d->path, write ? "write" : "read", e->full,
                                  r < 0 ? strerror(errno) : "nothing written");
                    return -1;
                }
                if (r == 0) { /* the file's end: zeros, as HDF5 reads them */
                    memset(buf + done, 0, (size_t)(n - done));
                    break;
                }
                done += (uint64_t)r;
            }
        buf += n;
        addr += n;
        len -= n;
        lo++;
    }
    return 0;
}

/* Moves the elements of file selection `fsel` (elements of `es` bytes) between the files and `dense`
 * (selection order). */
static int
ext_sel_io(ext_list *l, hid_t fsel, size_t es, uint8_t *dense, bool write, bool missing_ok)
{
    hid_t   it   = H5Ssel_iter_create(fsel, es, 0);
    size_t  nseq = 0, nelem = 0, pos = 0;
    hsize_t off[EXT_SEQ];
    size_t  len[EXT_SEQ];
    int     ret = -1;

    if (it < 0)
        H5ZV_GOTO_ERROR("dataset '/%s': can't walk the file selection", l->d->path);
    do {
        if (H5Ssel_iter_get_seq_list(it, EXT_SEQ, SIZE_MAX, &nseq, &nelem, off, len) < 0)
            H5ZV_GOTO_ERROR("dataset '/%s': can't walk the file selection", l->d->path);
        for (size_t s = 0; s < nseq; s++) {
            if (ext_io(l, off[s], len[s], dense + pos, write, missing_ok) < 0)
                goto done;
            pos += len[s];
        }
    } while (nseq > 0);
    ret = 0;
done:
    h5zv_close(it); /* not H5Ssel_iter_close: an API call clears the errors pushed */
    return ret;
}

int
h5zv_external_xfer(h5zv_obj *d, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl_id, void *buf,
                   bool write)
{
    ext_list l    = {.fd = -1};
    hid_t    fsel = H5I_INVALID_HID, msel = H5I_INVALID_HID;
    hssize_t nsel;
    size_t   fsize = H5Tget_size(d->type_id), msize = H5Tget_size(mem_type), esize;
    uint8_t *dense = NULL, *bkg = NULL;
    bool     conv;
    int      ret = -1;

    if (write && d->file->intent != H5F_ACC_RDWR)
        H5ZV_GOTO_ERROR("can't write dataset '/%s': file '%s' is open read-only", d->path, d->file->name);
    if (write && d->file->mpi)
        H5ZV_GOTO_ERROR("can't write dataset '/%s': external storage is not supported through MPI-IO",
                        d->path);
    if ((fsel = h5zv_dataset_file_space(d, file_space)) < 0 || (nsel = H5Sget_select_npoints(fsel)) < 0)
        H5ZV_GOTO_ERROR("can't resolve the file selection of '/%s'", d->path);
    if (nsel == 0) {
        ret = 0;
        goto done;
    }
    if (fsize == 0 || msize == 0)
        H5ZV_GOTO_ERROR("dataset '/%s': can't size the transfer", d->path);
    if (ext_list_load(d, &l) < 0)
        goto done;
    if ((msel = h5zv_dataset_mem_space(mem_space, fsel, nsel)) < 0)
        H5ZV_GOTO_ERROR("can't resolve the memory selection for '/%s'", d->path);
    esize = fsize > msize ? fsize : msize;
    conv  = H5Tequal(d->type_id, mem_type) <= 0;
    if (!(dense = calloc((size_t)nsel, esize)))
        H5ZV_GOTO_ERROR("out of memory for %lld elements of '/%s'", (long long)nsel, d->path);
    if (write) {
        /* user buffer -> dense (gather) -> the dataset's type -> the files */
        if (H5Dgather(msel, buf, mem_type, (size_t)nsel * esize, dense, NULL, NULL) < 0)
            H5ZV_GOTO_ERROR("can't gather the memory selection for '/%s'", d->path);
        if (conv) {
            if (H5Tget_class(d->type_id) == H5T_COMPOUND) {
                /* members the memory type lacks keep their stored values (none stored yet: zeros) */
                if (!(bkg = calloc((size_t)nsel, fsize)))
                    H5ZV_GOTO_ERROR("out of memory");
                if (ext_sel_io(&l, fsel, fsize, bkg, false, true) < 0)
                    goto done;
            }
            if (H5Tconvert(mem_type, d->type_id, (size_t)nsel, dense, bkg, dxpl_id) < 0)
                H5ZV_GOTO_ERROR("can't convert data for '/%s' to its stored type", d->path);
        }
        if (ext_sel_io(&l, fsel, fsize, dense, true, false) < 0)
            goto done;
    }
    else {
        /* the files -> dense -> the memory type -> user buffer (scatter) */
        if (ext_sel_io(&l, fsel, fsize, dense, false, false) < 0)
            goto done;
        if (conv) {
            if (H5Tget_class(mem_type) == H5T_COMPOUND) {
                if (!(bkg = calloc((size_t)nsel, msize)))
                    H5ZV_GOTO_ERROR("out of memory");
                if (H5Dgather(msel, buf, mem_type, (size_t)nsel * msize, bkg, NULL, NULL) < 0)
                    H5ZV_GOTO_ERROR("can't gather the memory selection for '/%s'", d->path);
            }
            if (H5Tconvert(d->type_id, mem_type, (size_t)nsel, dense, bkg, dxpl_id) < 0)
                H5ZV_GOTO_ERROR("can't convert data of '/%s' to the memory type", d->path);
        }
        if (h5zv_scatter_dense(dense, (size_t)nsel * msize, mem_type, msel, buf) < 0)
            H5ZV_GOTO_ERROR("can't scatter into the memory selection for '/%s'", d->path);
    }
    ret = 0;
done:
    ext_list_free(&l);
    free(dense);
    free(bkg);
    h5zv_close(fsel);
    h5zv_close(msel);
    return ret;
}
