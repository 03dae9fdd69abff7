/*
 * file.c: HDF5 files as zarr stores: create, open, close, flush, get, is_accessible, delete.
 *
 * An HDF5 file name is a store name: a local path (a directory store, or a zip archive for "*.zip") or
 * a URL ("file:///abs/path", "memory://name", and whatever scheme zarr_store_register_scheme adds).
 * Stores are opened, created, probed and deleted only through the core's store interface
 * (zarr_store_open and the zarr_store_* calls), never with POSIX calls on the name: the connector
 * does not assume a store is a local directory. New stores are zarr v3 unless the configuration
 * asks for v2 (vol/config.h: HDF5_VOL_CONNECTOR="zarr version=2", H5Pset_fapl_zarr, H5ZARR_CONFIG);
 * existing stores open as whatever version they are. The settings resolved at create/open are kept
 * in the open file (h5zv_file.settings, from file_new on: nodes loaded while opening see them);
 * close applies `consolidated`. The file object is reference counted:
 * HDF5 closes the file handle while objects may stay open, and the store lives until the last of them is
 * closed.
 */
#include "h5zv.h"
#include "reserved.h"
#include "config.h"
#include "mpi_vol.h"
#include "pointer.h"
#include "h5zarr/zarr_consolidated.h"
#include "h5zarr/zarr_store_behind.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned long next_fileno = 1;

/* Stores open in this process: opening one again shares its h5zv_file (one node cache per store, as
 * HDF5 shares one H5F_shared_t per file), so every handle sees the same metadata. */
static h5zv_file *open_files;

/* What identifies a store among the open ones (malloc'ed, NULL if unknown): a local path, also as a
 * "file://" URL, by its realpath, so that two spellings of one directory share one h5zv_file (a question
 * about the local name, asked of the file system: no store I/O); any other URL as given. */
static char *
store_identity(const char *name)
{
    if (!strncasecmp(name, "file://", 7)) {
        const char *path = name + 7;
        if (!strncasecmp(path, "localhost/", 10))
            path += 9;
        return path[0] == '/' ? realpath(path, NULL) : NULL;
    }
    if (zarr_store_is_url(name))
        return strdup(name);
    return realpath(name, NULL);
}

static h5zv_file *
find_open(const char *name)
{
    char      *id = store_identity(name);
    h5zv_file *f;
    if (!id)
        return NULL;
    for (f = open_files; f; f = f->next_open)
        if (f->real && !strcmp(f->real, id))
            break;
    free(id);
    return f;
}

static void
register_open(h5zv_file *f)
{
    if ((f->real = store_identity(f->name))) {
        f->next_open = open_files;
        open_files   = f;
    }
}

void
h5zv_file_unregister(h5zv_file *f)
{
    for (h5zv_file **p = &open_files; *p; p = &(*p)->next_open)
        if (*p == f) {
            *p = f->next_open;
            break;
        }
    free(f->real);
    f->real = NULL;
}

/* True when the open store `s` holds a zarr node at its root. */
static bool
has_root_node(zarr_store *s)
{
    static const char *marks[] = {"zarr.json", ".zgroup", ".zarray"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (zarr_store_exists(s, marks[i]) == ZARR_OK)
            return true;
    return false;
}

static int
any_entry_cb(const char *name, bool is_dir, void *ud)
{
    (void)name, (void)is_dir, (void)ud;
    return 1; /* the first one answers */
}

/* True when the open store `s` holds nothing at all (not even files that are not zarr keys), or cannot
 * be listed (an HTTP server: opening it for writing then says why it can't be created). */
static bool
is_empty_store(zarr_store *s)
{
    int rc = zarr_store_list(s, "", any_entry_cb, NULL);
    return rc == ZARR_OK || rc == ZARR_EUNSUPPORTED;
}

/* Opens the store `name` read-only for a question about it (quiet: nothing pushed, and the core's
 * thread message is left as it was). NULL when no store opens there. */
static zarr_store *
open_quietly(const char *name)
{
    zarr_store *s = NULL;
    char        saved[1024];
    if (!name || !*name)
        return NULL;
    zarr_error_save(saved, sizeof saved);
    if (zarr_store_open(name, ZARR_STORE_RDONLY, &s) != ZARR_OK)
        s = NULL;
    zarr_error_restore(ZARR_OK, saved);
    return s;
}

void
h5zv_probe_release(h5zv_probe *p)
{
    if (!p)
        return;
    zarr_store_close(p->s);
    zarr_buf_free(&p->doc);
    p->s = NULL;
}

bool
h5zv_file_probe(const char *name, h5zv_probe *p)
{
    char saved[1024];
    int  rc;
    memset(p, 0, sizeof *p);
    if (!(p->s = open_quietly(name)))
        return false;
    /* the v3 root document is read rather than asked about: the open that follows needs it (a missing
     * or unreadable one: the other formats' marks, as has_root_node asks) */
    zarr_error_save(saved, sizeof saved);
    rc = zarr_store_get(p->s, "zarr.json", &p->doc);
    zarr_error_restore(ZARR_OK, saved);
    if (rc == ZARR_OK)
        return true;
    zarr_buf_free(&p->doc);
    if (zarr_store_exists(p->s, ".zgroup") == ZARR_OK)
        p->v2 = ZARR_NODE_GROUP;
    else if (zarr_store_exists(p->s, ".zarray") == ZARR_OK)
        p->v2 = ZARR_NODE_ARRAY;
    if (p->v2 != ZARR_NODE_NONE)
        return true;
    h5zv_probe_release(p);
    return false;
}

bool
h5zv_file_is_store(const char *name)
{
    h5zv_probe p;
    bool       yes = h5zv_file_probe(name, &p);
    h5zv_probe_release(&p);
    return yes;
}

/* h5zv_file_exists and h5zv_file_is_dir answer route.c's routing questions. A URL names a store,
 * never a native HDF5 file: it exists when a store opens there, and counts as a "directory" (sent to
 * the zarr side, which says what is wrong with it). Only a name that is not a URL is asked of the
 * local file system: it may be a native HDF5 file or a pointer file (pointer.c), not a store. */
bool
h5zv_file_exists(const char *name)
{
    struct stat st;
    if (name && zarr_store_is_url(name)) {
        zarr_store *s  = open_quietly(name);
        bool        ok = s != NULL;
        zarr_store_close(s);
        return ok;
    }
    return name && stat(name, &st) == 0;
}

bool
h5zv_file_is_dir(const char *name)
{
    struct stat st;
    size_t      n = name ? strlen(name) : 0;
    if (name && zarr_store_is_url(name))
        return true;
    if (!name || stat(name, &st) != 0)
        return false;
    /* a reference file (zarr_store_open_ref) is a store too, never a native file; any other *.json (an
     * HDF5 file so named, other JSON) is an ordinary file */
    return S_ISDIR(st.st_mode) || (S_ISREG(st.st_mode) && n > 5 && strcasecmp(name + n - 5, ".json") == 0 &&
                                   zarr_store_is_ref_file(name));
}

/* ---- root-array stores ------------------------------------------------------------------------------
 * A store whose root node is an array (zarr.open_array, GDAL) opens through a view of the store: the
 * view's root is a group with no attributes holding one child, H5ZV_ROOT_ARRAY_NAME, which is the
 * store's root array ("data/<key>" in the view is "<key>" in the store). The rest of the connector sees
 * an ordinary hierarchy. The root group is read-only: writes outside the array are refused. The view
 * is a forwarding store (zarr.h: zarr_store_fwd): every op maps its key and forwards to the store's own
 * op (batches, sizes and zero-copy reads included). */
#define H5ZV_ROOT_ARRAY_NAME "data"

typedef struct rootview {
    zarr_store_fwd fwd; /* fwd.inner: the store (owned reference) */
    int            format;
} rootview;

static const char *
rv_meta_key(const zarr_store *s)
{
    return ((const rootview *)s)->format == 2 ? ".zgroup" : "zarr.json";
}

static const char *
rv_meta(const zarr_store *s)
{
    return ((const rootview *)s)->format == 2
               ? "{\"zarr_format\": 2}"
               : "{\"zarr_format\": 3, \"node_type\": \"group\", \"attributes\": {}}";
}

/* The store key for view key `key`, or NULL when it is not in the array. "data" itself maps to "". */
static const char *
rv_map(const char *key)
{
    size_t n = strlen(H5ZV_ROOT_ARRAY_NAME);
    if (!strncmp(key, H5ZV_ROOT_ARRAY_NAME, n) && (key[n] == '\0' || key[n] == '/'))
        return key[n] ? key + n + 1 : "";
    return NULL;
}

/* The store key of a value of the array, or NULL (the view's root document, or nothing). */
static const char *
rv_value(const char *key)
{
    const char *k = rv_map(key);
    return k && *k ? k : NULL;
}

static int
rv_refuse(zarr_store *s, const char *key)
{
    return zarr_error(ZARR_EREADONLY,
                      "can't write '%s' in '%s': the store's root is an array, shown as '/%s' in a read-only "
                      "root group",
                      key, s->url ? s->url : "", H5ZV_ROOT_ARRAY_NAME);
}

/* Bytes off..off+len (len UINT64_MAX = to the end) of the view's root document. */
static int
rv_meta_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    const char *m = rv_meta(s);
    uint64_t    n = strlen(m);
    out->size     = 0;
    if (off > n || (len != UINT64_MAX && len > n - off))
        return zarr_error(ZARR_ECODEC, "range past the end of '%s'", key);
    return zarr_buf_append(out, m + off, (size_t)(len == UINT64_MAX ? n - off : len));
}

static int
rv_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    const char *k = rv_value(key);
    if (!strcmp(key, rv_meta_key(s)))
        return rv_meta_range(s, key, off, len, out);
    return k ? zarr_store_fwd_get_range(s, k, off, len, out) : ZARR_ENOTFOUND;
}

static int
rv_get(zarr_store *s, const char *key, zarr_buf *out)
{
    const char *k = rv_value(key);
    if (!strcmp(key, rv_meta_key(s)))
        return rv_meta_range(s, key, 0, UINT64_MAX, out);
    return k ? zarr_store_fwd_get(s, k, out) : ZARR_ENOTFOUND;
}

static int
rv_get_into(zarr_store *s, const char *key, void *dst, size_t n)
{
    const char *k = rv_value(key);
    if (!strcmp(key, rv_meta_key(s))) {
        if (strlen(rv_meta(s)) != n)
            return zarr_error(ZARR_ECODEC, "'%s' holds %zu bytes, expected %zu", key, strlen(rv_meta(s)), n);
        memcpy(dst, rv_meta(s), n);
        return ZARR_OK;
    }
    return k ? zarr_store_fwd_get_into(s, k, dst, n) : ZARR_ENOTFOUND;
}

static int
rv_size(zarr_store *s, const char *key, uint64_t *size)
{
    const char *k = rv_value(key);
    if (!strcmp(key, rv_meta_key(s))) {
        *size = strlen(rv_meta(s));
        return ZARR_OK;
    }
    return k ? zarr_store_fwd_size(s, k, size) : ZARR_ENOTFOUND;
}

static int
rv_exists(zarr_store *s, const char *key)
{
    const char *k = rv_value(key);
    if (!strcmp(key, rv_meta_key(s)))
        return ZARR_OK;
    return k ? zarr_store_fwd_exists(s, k) : ZARR_ENOTFOUND;
}

static int
rv_mtime(zarr_store *s, const char *key, int64_t *sec)
{
    const char *k = rv_value(key);
    return k ? zarr_store_fwd_mtime(s, k, sec) : ZARR_EUNSUPPORTED;
}

static int
rv_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    const char *k = rv_value(key);
    return k ? zarr_store_fwd_set(s, k, data, n) : rv_refuse(s, key);
}

static int
rv_writer_open(zarr_store *s, const char *key, void **h)
{
    const char *k = rv_value(key);
    return k ? zarr_store_fwd_writer_open(s, k, h) : rv_refuse(s, key);
}

static int
rv_del(zarr_store *s, const char *key)
{
    const char *k = rv_value(key);
    return k ? zarr_store_fwd_del(s, k) : rv_refuse(s, key);
}

static int
rv_del_prefix(zarr_store *s, const char *prefix)
{
    const char *k = rv_value(prefix); /* the array itself can't go: that would empty the store */
    return k ? zarr_store_fwd_del_prefix(s, k) : rv_refuse(s, prefix);
}

static int
rv_rename(zarr_store *s, const char *from, const char *to)
{
    const char *a = rv_value(from), *b = rv_value(to);
    return a && b ? zarr_store_fwd_rename(s, a, b) : rv_refuse(s, from);
}

static int
rv_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud)
{
    const char *k = rv_map(prefix);
    int         rc;
    if (!*prefix) {
        if ((rc = cb(rv_meta_key(s), false, ud)) != 0)
            return rc;
        return cb(H5ZV_ROOT_ARRAY_NAME, true, ud);
    }
    return k ? zarr_store_fwd_list(s, k, cb, ud) : ZARR_OK;
}

/* list_keys of the store, its keys shown under "data/". */
typedef struct rv_keys {
    zarr_key_cb cb;
    void       *ud;
    char        key[4096];
} rv_keys;

static int
rv_keys_cb(const char *key, uint64_t size, void *ud)
{
    rv_keys *r = ud;
    int      w = snprintf(r->key, sizeof r->key, "%s/%s", H5ZV_ROOT_ARRAY_NAME, key);
    if (w < 0 || (size_t)w >= sizeof r->key)
        return 0; /* longer than any key the connector makes */
    return r->cb(r->key, size, r->ud);
}

static int
rv_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud)
{
    const char *k = rv_map(prefix);
    rv_keys     r = {cb, ud, ""};
    int         rc;
    if (!*prefix && (rc = cb(rv_meta_key(s), strlen(rv_meta(s)), ud)) != 0)
        return rc;
    if (!*prefix)
        k = "";
    return k ? zarr_store_fwd_list_keys(s, k, rv_keys_cb, &r) : ZARR_OK;
}

/* The array's items go to the store as one batch; the view's own document and keys outside the array
 * are answered here. */
static int
rv_get_many(zarr_store *s, size_t n, zarr_store_req *reqs)
{
    zarr_store_req *fw = malloc((n ? n : 1) * sizeof *fw);
    size_t         *at = malloc((n ? n : 1) * sizeof *at), m = 0;
    int             first = ZARR_OK;

    if (!fw || !at) {
        free(fw);
        free(at);
        return zarr_error(ZARR_ENOMEM, "out of memory reading %zu keys of '%s'", n, s->url ? s->url : "");
    }
    for (size_t i = 0; i < n; i++) {
        const char *k = rv_value(reqs[i].key);
        if (k) {
            fw[m]     = reqs[i];
            fw[m].key = k;
            at[m++]   = i;
            continue;
        }
        reqs[i].total = UINT64_MAX;
        if (!strcmp(reqs[i].key, rv_meta_key(s))) {
            uint64_t len = strlen(rv_meta(s));
            if (reqs[i].suffix)
                reqs[i].result = rv_meta_range(s, reqs[i].key, reqs[i].len < len ? len - reqs[i].len : 0,
                                               UINT64_MAX, reqs[i].out);
            else
                reqs[i].result = rv_meta_range(s, reqs[i].key, reqs[i].off, reqs[i].len, reqs[i].out);
            if (reqs[i].result == ZARR_OK)
                reqs[i].total = len;
        }
        else {
            reqs[i].out->size = 0;
            reqs[i].result    = ZARR_ENOTFOUND;
        }
    }
    if (m)
        (void)zarr_store_fwd_get_many(s, m, fw);
    for (size_t j = 0; j < m; j++) {
        reqs[at[j]].total  = fw[j].total;
        reqs[at[j]].result = fw[j].result;
    }
    for (size_t i = 0; i < n && first == ZARR_OK; i++)
        first = reqs[i].result;
    free(fw);
    free(at);
    return first;
}

static int
rv_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data, const size_t *sizes,
            int *results)
{
    const char **ks = malloc((n ? n : 1) * sizeof *ks);
    int          rc;
    if (!ks)
        return zarr_error(ZARR_ENOMEM, "out of memory writing %zu keys of '%s'", n, s->url ? s->url : "");
    for (size_t i = 0; i < n; i++)
        if (!(ks[i] = rv_value(keys[i]))) {
            results[i] = rc = rv_refuse(s, keys[i]);
            free(ks);
            return rc;
        }
    rc = zarr_store_fwd_set_many(s, n, ks, data, sizes, results);
    free(ks);
    return rc;
}

static const zarr_store_ops rootview_ops = {
    .name         = "root-array view",
    .get          = rv_get,
    .get_range    = rv_get_range,
    .set          = rv_set,
    .del          = rv_del,
    .del_prefix   = rv_del_prefix,
    .list         = rv_list,
    .exists       = rv_exists,
    .get_many     = rv_get_many,
    .set_many     = rv_set_many,
    .rename       = rv_rename,
    .flush        = zarr_store_fwd_flush,
    .destroy      = zarr_store_fwd_destroy,
    .mtime        = rv_mtime,
    .size         = rv_size,
    .get_into     = rv_get_into,
    .list_keys    = rv_list_keys,
    .sync         = zarr_store_fwd_sync,
    .writer_open  = rv_writer_open,
    .writer_write = zarr_store_fwd_writer_write,
    .writer_close = zarr_store_fwd_writer_close,
};

/* Whether `s` is a root-array view (this file's own wrapper: its root group can't be written). */
static bool
is_rootview(const zarr_store *s)
{
    return s->ops->get == rv_get;
}

/* A view of `inner` (whose root is an array of zarr format `format`) with the array under the root
 * group; takes the reference to `inner` (closed on failure too). NULL: out of memory. */
static zarr_store *
rootview_new(zarr_store *inner, int format)
{
    rootview *v = calloc(1, sizeof *v);
    if (!v) {
        zarr_store_close(inner);
        return NULL;
    }
    if (zarr_store_fwd_init(&v->fwd, &rootview_ops, inner) != ZARR_OK) {
        free(v);
        return NULL;
    }
    v->format = format;
    return &v->fwd.base;
}

/* The settings of open file `f`: its own (resolved at create/open, copied in by file_new). */
const h5zv_settings *
h5zv_file_settings(const h5zv_file *f)
{
    return &f->settings;
}

static h5zv_file *
file_new(const char *name, unsigned intent, hid_t fapl_id, hid_t fcpl_id, const h5zv_settings *cfg)
{
    h5zv_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->rc       = 1;
    f->name     = strdup(name);
    f->intent   = intent;
    f->fapl_id  = H5Pcopy(fapl_id >= 0 ? fapl_id : H5P_FILE_ACCESS_DEFAULT);
    f->fcpl_id  = H5Pcopy(fcpl_id >= 0 && fcpl_id != H5P_DEFAULT ? fcpl_id : H5P_FILE_CREATE_DEFAULT);
    f->fileno   = next_fileno++;
    f->format   = cfg->version;
    f->settings = *cfg;
    return f;
}

/* The errno of `name` when it is a local path that does not exist or can't be looked at, else 0. */
static int
local_errno(const char *name)
{
    struct stat st;
    if (zarr_store_is_url(name) && strncmp(name, "file://", 7) != 0)
        return 0;
    if (strncmp(name, "file://", 7) == 0)
        name += 7;
    return stat(name, &st) == 0 ? 0 : errno;
}

/* The page buffer HDF5 reports for an open file (H5Fget_access_plist): none for a file made without the
 * paged file space strategy, else at least one page and a whole number of pages (HDF5 1.14.4 and later).
 * A store has no pages to buffer; the settings are kept as HDF5 would keep them. Negative when a page
 * buffer is asked for a file without pages, which H5Fcreate refuses. */
static int
page_buffer_fit(h5zv_file *f)
{
    size_t                pbs = 0, want;
    unsigned              mm = 0, mr = 0;
    H5F_fspace_strategy_t st      = H5F_FSPACE_STRATEGY_FSM_AGGR;
    hbool_t               persist = false;
    hsize_t               thr = 1, psz = 4096;
    h5zv_errs            *es  = h5zv_err_save();
    int                   ret = 0;
    if (H5Pget_page_buffer_size(f->fapl_id, &pbs, &mm, &mr) >= 0 && pbs > 0 &&
        H5Pget_file_space_strategy(f->fcpl_id, &st, &persist, &thr) >= 0 &&
        H5Pget_file_space_page_size(f->fcpl_id, &psz) >= 0 && psz > 0) {
        want = st != H5F_FSPACE_STRATEGY_PAGE ? 0 : pbs < psz ? (size_t)psz : pbs / psz * psz;
        ret  = want ? 0 : -1;
        if (want != pbs)
            H5Pset_page_buffer_size(f->fapl_id, want, mm, mr);
    }
    h5zv_err_restore(es);
    return ret;
}

/* True when no handle of the program holds the open store `f` any more, only objects HDF5 opened through a
 * reference and leaked: HDF5 1.14.5's H5DSattach_scale opens each scale already attached to a dataset
 * (H5Ropen_object) to rewrite REFERENCE_LIST and never closes it on non-native files (H5DS.c:588), and its
 * H5Rcreate_object holds a file id (h5zv_file.getfile_objs). netCDF closes with H5F_CLOSE_WEAK, so any file
 * with two variables on one dimension stayed open after nc_close, and the next nc_create of the name failed.
 * Objects the program uses (h5zv_obj.ref_idle cleared) or a file handle of its own keep the store open. */
static bool
held_only_by_leaks(h5zv_file *f)
{
    for (h5zv_obj *o = f->objs; o; o = o->next_obj)
        if (!o->getfile && !o->ref_idle)
            return false;
    return true;
}

/* The ids HDF5 leaked in a store closed as the program sees it (held_only_by_leaks): the datasets and groups
 * H5DSattach_scale opened by reference and never closed (h5zv_obj.ref_idle), found among the library's ids
 * by their objects. */
typedef struct leak_ids {
    h5zv_obj **objs; /* the store's idle objects, sorted by address */
    size_t     nobjs;
    hid_t     *ids;
    size_t     n, cap;
} leak_ids;

static int
cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (h5zv_obj *const *)a, y = (uintptr_t) * (h5zv_obj *const *)b;
    return x < y ? -1 : x > y;
}

static herr_t
leak_collect(hid_t id, void *ud)
{
    leak_ids *l = ud;
    void     *o = H5VLobject(id); /* compared by address only: it may be no object of ours */
    if (!o || !bsearch(&o, l->objs, l->nobjs, sizeof *l->objs, cmp_ptr))
        return 0;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 64;
        hid_t *ni = realloc(l->ids, nc * sizeof *ni);
        if (!ni)
            return -1;
        l->ids = ni, l->cap = nc;
    }
    l->ids[l->n++] = id;
    return 0;
}

/* Closes those ids when the store's name is created again (file_create): they name objects of the store
 * the create replaces, which native HDF5 would have refused to truncate while they were open, and every id
 * left open makes each later walk of HDF5's id table longer (the native H5Fclose of each pointer file walks
 * every dataset id, H5D_flush_all; netCDF's nc_test recreates its scratch file about 90 times). The file
 * ids of the store's H5VL_OBJECT_GET_FILE objects (h5zv_file.getfile_objs) go too, whatever holds them:
 * each reference H5DSattach_scale leaked holds one (H5DS.c:628, :648), so they were never closed, and
 * H5Rcreate_object looks its file id up among every file id of the process (H5F_get_file_id): nc_test
 * ended with about 180 of them, two more at each create. An H5Iget_file_id handle or a reference the
 * program still holds on the old store is closed with them, as its datasets are: native HDF5 would have
 * refused the truncating create while it was open. Out of memory: they stay open. May free `f`. */
static void
leaks_close(h5zv_file *f)
{
    leak_ids   l     = {0};
    H5I_type_t t[]   = {H5I_DATASET, H5I_GROUP, H5I_FILE};
    size_t     nfile = 0; /* ids before this index are datasets and groups, from it files */
    if (!(l.objs = malloc((f->nobjs + 1) * sizeof *l.objs)))
        return;
    for (h5zv_obj *o = f->objs; o; o = o->next_obj)
        if ((o->ref_idle && o->type != H5I_FILE) || o->getfile)
            l.objs[l.nobjs++] = o;
    qsort(l.objs, l.nobjs, sizeof *l.objs, cmp_ptr);
    for (size_t i = 0; l.nobjs && i < sizeof t / sizeof t[0]; i++) {
        if (t[i] == H5I_FILE)
            nfile = l.n;
        H5Iiterate(t[i], leak_collect, &l);
    }
    free(l.objs);
    for (size_t i = 0; i < l.n; i++)
        if (i < nfile)
            H5Idec_ref(l.ids[i]);
        else /* one count for each leaked reference: to zero, which closes the object (h5zv_file_close) */
            while (H5Idec_ref(l.ids[i]) > 0)
                ;
    free(l.ids);
}

/* The store `f` is closed as the program sees it (held_only_by_leaks): it is flushed and forgotten as an
 * open store, so a create of its name starts afresh; its anonymous objects go now. The leaked objects keep
 * the struct until HDF5 closes their ids (at exit). */
static void
leaks_detach(h5zv_file *f)
{
    h5zv_file_flush(f);
    h5zv_file_unregister(f);
    if (f->anon_seq && f->intent == H5F_ACC_RDWR)
        zarr_node_delete(f->store, H5ZV_ANON_DIR);
    f->anon_seq = 0;
}

/* A write-behind queue in front of a writable object store (one whose requests have latency: the store
 * says prefers_batches), so that H5Dwrite returns once its chunks are encoded and queued and the PUTs of
 * many calls overlap (zarr_store_behind.h; budget H5ZARR_WRITE_BEHIND_MB, 0: none). Not under MPI-IO
 * (other ranks rely on what rank 0 wrote at each barrier) nor SWMR writing (readers poll the store). A
 * queue that can't start leaves the store as it is. 0, or -1 with an error pushed. */
static int
h5zv_file_behind(h5zv_file *f)
{
    zarr_store_behind *b;
    uint64_t           budget = zarr_store_behind_budget_env();
    if (f->behind || f->intent != H5F_ACC_RDWR || !f->store->prefers_batches || f->store->readonly ||
        f->mpi || f->swmr || !budget)
        return 0;
    if (zarr_store_behind_new(f->store, budget, &b) != ZARR_OK) {
        if (getenv("H5ZV_DEBUG"))
            fprintf(stderr, "h5zv: no write-behind for '%s': %s\n", f->name, zarr_errmsg());
        return 0;
    }
    zarr_store_close(f->store); /* the queue holds its own reference */
    f->store  = zarr_store_behind_store(b);
    f->behind = b;
    return 0;
}

static void *
file_create(const char *name, const char *rule_name, unsigned flags, hid_t fcpl_id, hid_t fapl_id,
            hid_t dxpl_id, void **req)
{
    h5zv_file       *f = NULL;
    h5zv_obj        *o = NULL;
    h5zv_node       *root;
    zarr_group_meta *g     = NULL;
    zarr_store      *old   = NULL;
    h5zv_file       *old_f = NULL;
    h5zv_settings    cfg;
    void            *ret = NULL;
    (void)dxpl_id;
    (void)req;

    h5zv_err_guard(64);
    if (h5zv_config_get(fapl_id, rule_name, &cfg) < 0)
        return NULL; /* a bad configuration: H5Fcreate fails (error pushed naming source, line, key) */
    if ((old_f = find_open(name)) && !held_only_by_leaks(old_f))
        H5ZV_GOTO_ERROR("can't create '%s': the store is open; close it before truncating it", name);
    if (old_f) {
        leaks_detach(old_f);
        leaks_close(old_f); /* may free old_f */
    }
    if ((flags & H5F_ACC_EXCL) && h5zv_file_exists(name))
        H5ZV_GOTO_ERROR_CODE(H5E_FILE, H5E_FILEEXISTS,
                             "unable to create file: name = '%s', errno = %d, error message = '%s' "
                             "(H5F_ACC_EXCL)",
                             name, EEXIST, strerror(EEXIST));
    if (!zarr_store_is_url(name) && h5zv_file_exists(name) && !h5zv_file_is_dir(name) && unlink(name) != 0)
        /* H5F_ACC_TRUNC over a file that is not a directory: truncated, as HDF5 truncates any file */
        H5ZV_GOTO_ERROR_CODE(H5E_FILE, H5E_CANTCREATE,
                             "unable to truncate file: name = '%s', errno = %d, error message = '%s'", name,
                             errno, strerror(errno));
    if ((old = open_quietly(name))) {
        /* something is there already: only a zarr store or an empty one is replaced */
        bool store = has_root_node(old), empty = !store && is_empty_store(old);
        zarr_store_close(old);
        if (!store && !empty)
            H5ZV_GOTO_ERROR("can't create zarr store '%s': it is not empty and holds no zarr store; refusing "
                            "to delete it",
                            name);
    }
    if (!(f = file_new(name, H5F_ACC_RDWR, fapl_id, fcpl_id, &cfg)))
        H5ZV_GOTO_ERROR("out of memory");
    if (page_buffer_fit(f) < 0)
        H5ZV_GOTO_ERROR_CODE(
            H5E_FILE, H5E_CANTINIT,
            "can't create '%s': page buffering (H5Pset_page_buffer_size) needs the paged file "
            "space strategy (H5Pset_file_space_strategy with H5F_FSPACE_STRATEGY_PAGE), as in "
            "HDF5",
            name);
    if (zarr_store_open(name, ZARR_STORE_CREATE | ZARR_STORE_RDWR | (cfg.durable ? ZARR_STORE_DURABLE : 0),
                        &f->store) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't create zarr store '%s'", name);
    if (h5zv_mpi_attach(f) < 0) /* MPI-IO: ranks other than 0 write no metadata (vol/mpi_vol.h) */
        goto done;
    if (h5zv_swmr_open(f, flags & H5F_ACC_SWMR_WRITE, false) < 0) /* H5Fcreate may ask for SWMR writing */
        goto done;
    if (h5zv_file_behind(f) < 0)
        goto done;
    /* the old content moved aside and deleted off this thread (zarr_store_clear; docs/FORMAT.md "Trash") */
    if (zarr_store_clear(f->store) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't truncate zarr store '%s'", name);
    f->store->no_consolidated = true; /* a new store: absent nodes need no consolidated lookups */
    if (zarr_group_meta_new(f->format, &g) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't make the root group of '%s'", name);
    if (!(root = h5zv_node_add(f, "", g, NULL)))
        H5ZV_GOTO_ERROR("out of memory");
    g = NULL;
    if (fcpl_id != H5P_DEFAULT && fcpl_id != H5P_FILE_CREATE_DEFAULT) {
        /* Keep the creation properties so H5Fget_create_plist tells the same after a reopen. */
        struct json_object *fj = NULL;
        if (h5zv_fcpl_to_json(fcpl_id, &fj) < 0)
            H5ZV_GOTO_ERROR("can't record the fcpl of '%s'", name);
        json_object_object_add(h5zv_node_meta(root, true), "fcpl", fj);
    }
    /* the root document once, with the fcpl in it (a store is a store from H5Fcreate on: other opens
     * and SWMR readers see its zarr.json); the store was emptied just above */
    if (zarr_group_write_new(f->store, "", root->g) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't write the root group of '%s'", name);
    if (!(o = h5zv_obj_new(f, H5I_FILE, "")))
        H5ZV_GOTO_ERROR("out of memory");
    register_open(f);
    ret = o;
done:
    zarr_group_meta_free(g);
    h5zv_file_decref(f); /* the object holds the reference now */
    return ret;
}

/* True if two fapls ask for the same file locking (H5Pset_file_locking): HDF5 refuses a second open of an
 * open file that asks otherwise (H5Fint.c, "file locking flag values don't match"). */
static bool
same_locking(hid_t a, hid_t b)
{
    hbool_t    ua = true, ia = false, ub = true, ib = false;
    h5zv_errs *es = h5zv_err_save();
    bool       ok = a < 0 || b < 0 || H5Pget_file_locking(a, &ua, &ia) < 0 ||
              H5Pget_file_locking(b == H5P_DEFAULT ? H5P_FILE_ACCESS_DEFAULT : b, &ub, &ib) < 0 ||
              (ua == ub && ia == ib);
    h5zv_err_restore(es);
    return ok;
}

/* No store opens at `name` (the core says why: no such directory, an unknown URL scheme, ...), or one
 * without a zarr node at its root: -1 with the error pushed. */
static int
open_check(const char *name)
{
    zarr_store *s   = NULL;
    bool        ok  = zarr_store_open(name, ZARR_STORE_RDONLY, &s) == ZARR_OK;
    int         ret = -1;
    if (ok && !has_root_node(s)) {
        zarr_store_close(s);
        H5ZV_GOTO_ERROR("can't open '%s': not a zarr store (no zarr.json, .zgroup or .zarray at its root)",
                        name);
    }
    zarr_store_close(s);
    if (!ok && local_errno(name))
        H5ZV_GOTO_ERROR_CODE(H5E_FILE, H5E_CANTOPENFILE,
                             "unable to open file: name = '%s', errno = %d, error message = '%s'", name,
                             local_errno(name), strerror(local_errno(name)));
    if (!ok)
        H5ZV_GOTO_ZERR("can't open '%s': not a zarr store", name);
    ret = 0;
done:
    return ret;
}

/* Reads what is at the root of f's store: its type and format; a v3 root group seeds the node cache.
 * `doc`: the root zarr.json a probe read just now (not read again; empty: the probe found none, and `v2`
 * what it found instead), or NULL: asked of the store.
 * -1 with the error pushed. */
static int
open_root(h5zv_file *f, const zarr_buf *doc, zarr_node_type v2, zarr_node_type *type, int *fmt)
{
    zarr_group_meta *g   = NULL;
    zarr_array      *a   = NULL;
    int              ret = -1, rc;
    zarr_buf         own = ZARR_BUF_INIT;
    bool             v3;

    if (!doc) { /* read rather than asked about (one stat less an open): absent or unreadable is "not v3" */
        char saved[1024];
        zarr_error_save(saved, sizeof saved);
        if (zarr_store_get(f->store, "zarr.json", &own) == ZARR_OK)
            doc = &own;
        zarr_error_restore(ZARR_OK, saved);
    }
    v3   = doc && doc->size > 0;
    *fmt = 0;
    if (!v3 && v2 != ZARR_NODE_NONE) { /* the probe found the v2 root just now */
        *type = v2;
        *fmt  = 2;
        ret   = 0;
        goto done;
    }
    if (!v3) {
        if (zarr_node_probe(f->store, "", type, fmt) != ZARR_OK)
            H5ZV_GOTO_ZERR("can't read the root of '%s'", f->name);
        ret = 0;
        goto done;
    }
    /* v3: the root document is read once, and the node cache starts from it; read-only with a large
     * consolidated document, the view is made from its text and the root from the view */
    if ((rc = h5zv_node_seed_root_doc(f, doc->data, doc->size)) != 0) {
        if (rc < 0)
            H5ZV_GOTO_ERROR("can't read the root group of '%s'", f->name);
        *type = ZARR_NODE_GROUP;
        *fmt  = 3;
        ret   = 0;
        goto done;
    }
    rc = zarr_node_load_v3_doc(f->store, "", doc->data, doc->size, type, &g, &a);
    if (rc != ZARR_OK)
        H5ZV_GOTO_ZERR("can't read the root of '%s'", f->name);
    *fmt = 3;
    zarr_array_close(a); /* a root array is opened again through the root-array view */
    if (*type == ZARR_NODE_GROUP) {
        zarr_group_meta *root = g;
        g                     = NULL; /* the cache's, even when seeding fails */
        f->format             = *fmt;
        if (!h5zv_node_seed_root(f, root))
            H5ZV_GOTO_ERROR("can't read the root group of '%s'", f->name);
    }
    ret = 0;
done:
    zarr_group_meta_free(g);
    zarr_buf_free(&own);
    return ret;
}

static void *
file_open(const char *name, unsigned flags, hid_t fapl_id, hid_t dxpl_id, void **req, h5zv_probe *p)
{
    bool           probed = p && p->s; /* h5zv_file_probe found a store there just now */
    h5zv_file     *f      = NULL;
    h5zv_obj      *o      = NULL;
    h5zv_node     *root;
    zarr_node_type type;
    int            fmt = 0;
    h5zv_settings  cfg;
    void          *ret = NULL;
    (void)dxpl_id;
    (void)req;

    h5zv_err_guard(64);
    if (!probed && open_check(name) < 0)
        goto done;
    if ((f = find_open(name))) {
        /* Already open: share it. Upgrading a read-only open to read-write is refused, as in HDF5. */
        if ((flags & H5F_ACC_RDWR) && f->intent != H5F_ACC_RDWR) {
            f = NULL;
            H5ZV_GOTO_ERROR("can't open '%s' read-write: it is already open read-only", name);
        }
        if (!same_locking(f->fapl_id, fapl_id)) {
            f = NULL;
            H5ZV_GOTO_ERROR_CODE(H5E_FILE, H5E_CANTOPENFILE,
                                 "can't open '%s': it is already open with other file locking settings "
                                 "(H5Pset_file_locking), which HDF5 refuses too",
                                 name);
        }
        if (h5zv_swmr_open(f, flags, true) < 0) { /* SWMR flags as HDF5 checks them (vol/swmr.c) */
            f = NULL;
            goto done;
        }
        if (!(o = h5zv_obj_new(f, H5I_FILE, "")))
            H5ZV_GOTO_ERROR("out of memory");
        return o;
    }
    /* the settings of the first open apply while the store stays open (handles share one state) */
    if (h5zv_config_get(fapl_id, name, &cfg) < 0)
        goto done; /* a bad configuration: H5Fopen fails */
    if (!(f = file_new(name, (flags & H5F_ACC_RDWR) ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl_id, H5P_DEFAULT,
                       &cfg)))
        H5ZV_GOTO_ERROR("out of memory");
    if (p && p->s && !(flags & H5F_ACC_RDWR) && !cfg.durable && !cfg.refs_allow) {
        f->store = p->s; /* the probe's read-only store: opened once */
        p->s     = NULL;
    }
    else if (zarr_store_open(name,
                             ((flags & H5F_ACC_RDWR) ? ZARR_STORE_RDWR : ZARR_STORE_RDONLY) |
                                 (cfg.durable ? ZARR_STORE_DURABLE : 0) |
                                 (cfg.refs_allow & H5ZV_REFS_PATHS ? ZARR_STORE_REF_PATHS : 0) |
                                 (cfg.refs_allow & H5ZV_REFS_URLS ? ZARR_STORE_REF_URLS : 0),
                             &f->store) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't open zarr store '%s'", name);
    if (h5zv_mpi_attach(f) < 0 || h5zv_swmr_open(f, flags, false) < 0 || /* before the root is read */
        h5zv_file_behind(f) < 0)
        goto done;
    if (open_root(f, probed ? &p->doc : NULL, probed ? p->v2 : ZARR_NODE_NONE, &type, &fmt) < 0)
        goto done;
    if (type == ZARR_NODE_ARRAY) {
        /* a root array: shown as the dataset /data (H5ZV_ROOT_ARRAY_NAME) in a read-only root group */
        zarr_store *inner = f->store;
        f->store          = NULL;
        if (!(f->store = rootview_new(inner, fmt)))
            H5ZV_GOTO_ERROR("out of memory");
    }
    else if (type != ZARR_NODE_GROUP)
        H5ZV_GOTO_ERROR("can't open '%s': no zarr group or array at its root", name);
    f->format = fmt;
    if (!(root = h5zv_node_get(f, "")))
        H5ZV_GOTO_ERROR("can't read the root group of '%s'", name);
    if (f->intent == H5F_ACC_RDWR && type == ZARR_NODE_GROUP && !root->g->consolidated &&
        zarr_store_exists(f->store, ".zmetadata") == ZARR_ENOTFOUND)
        /* a store we write whose root has no consolidated metadata: consolidated-only nodes (a read-only
         * publishing form) are not looked for when a path is absent (docs/FORMAT.md) */
        f->store->no_consolidated = true;
    {
        struct json_object *m = h5zv_node_meta(root, false), *v;
        hid_t               p = H5I_INVALID_HID;
        h5zv_jpath          where;
        if (m && json_object_object_get_ex(m, "fcpl", &v)) {
            if (h5zv_reserved_plist(v, H5P_FILE_CREATE, H5I_INVALID_HID,
                                    h5zv_meta_where(&where, root, "fcpl"), &p) < 0)
                H5ZV_GOTO_ERROR("can't open '%s'", name);
            if (p >= 0) {
                H5Pclose(f->fcpl_id);
                f->fcpl_id = p;
            }
        }
    }
    h5zv_reserved_upgrade_all(f); /* legacy_reserved=1, read-write: the store is converted */
    page_buffer_fit(f);
    if (!(o = h5zv_obj_new(f, H5I_FILE, "")))
        H5ZV_GOTO_ERROR("out of memory");
    register_open(f);
    if (getenv("H5ZV_DEBUG"))
        fprintf(stderr, "h5zv: file open %p (%s)\n", (void *)o, name);
    ret = o;
done:
    h5zv_file_decref(f);
    return ret;
}

/* Open ids of this store, by walking HDF5's id tables and keeping the ids whose object is ours and
 * belongs to `f` (HDF5 leaves this to the connector). */
typedef struct ids_ctx {
    h5zv_file      *f;
    const h5zv_obj *self; /* the file handle asked about */
    size_t          count, max;
    hid_t          *out;
    H5I_type_t      type;
    bool            local;
} ids_ctx;

static herr_t
ids_cb(hid_t id, void *ud)
{
    ids_ctx  *c        = ud;
    char      name[16] = "";
    h5zv_obj *o;
    ssize_t   k;
    H5E_BEGIN_TRY { k = H5VLget_connector_name(id, name, sizeof name); }
    H5E_END_TRY
    if (k <= 0 || strcmp(name, H5ZV_NAME) != 0)
        return 0;
    H5E_BEGIN_TRY { o = h5zv_object_of(id); }
    H5E_END_TRY
    if (!o || o->file != c->f)
        return 0;
    if (c->type == H5I_DATATYPE && H5Tcommitted(id) <= 0)
        return 0;
    if (c->type == H5I_FILE && c->local && o != c->self && !(o->via && o->via == c->self->via))
        return 0; /* H5F_OBJ_LOCAL: the file id asked about, and H5Iget_file_id's for the same handle */
    if (c->type != H5I_FILE && c->local && o->via && o->via != c->self->via)
        return 0; /* ... and the objects opened through it */
    if (c->out && c->count < c->max)
        c->out[c->count] = id;
    c->count++;
    return 0;
}

static size_t
count_ids(const h5zv_obj *self, unsigned types, size_t max, hid_t *out)
{
    static const struct {
        unsigned   flag;
        H5I_type_t type;
    } kinds[] = {{H5F_OBJ_FILE, H5I_FILE},
                 {H5F_OBJ_DATASET, H5I_DATASET},
                 {H5F_OBJ_GROUP, H5I_GROUP},
                 {H5F_OBJ_DATATYPE, H5I_DATATYPE},
                 {H5F_OBJ_ATTR, H5I_ATTR}};
    ids_ctx c = {self->file, self, 0, max, out, H5I_BADID, (types & H5F_OBJ_LOCAL) != 0};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (types & kinds[i].flag) {
            c.type = kinds[i].type;
            H5Iiterate(kinds[i].type, ids_cb, &c);
        }
    return out && c.count > max ? max : c.count;
}

herr_t
h5zv_file_get(void *obj, H5VL_file_get_args_t *args, hid_t dxpl_id, void **req)
{
    h5zv_obj  *o   = obj;
    h5zv_file *f   = o->file;
    herr_t     ret = -1;
    (void)dxpl_id;
    (void)req;

    switch (args->op_type) {
        case H5VL_FILE_GET_CONT_INFO:
            args->args.get_cont_info.info->feature_flags = 0;
            args->args.get_cont_info.info->token_size    = H5O_MAX_TOKEN_SIZE;
            args->args.get_cont_info.info->blob_id_size  = 0;
            break;
        case H5VL_FILE_GET_FAPL:
            if ((args->args.get_fapl.fapl_id = H5Pcopy(f->fapl_id)) < 0)
                H5ZV_GOTO_ERROR("can't copy the fapl of '%s'", f->name);
            break;
        case H5VL_FILE_GET_FCPL:
            if ((args->args.get_fcpl.fcpl_id = H5Pcopy(f->fcpl_id)) < 0)
                H5ZV_GOTO_ERROR("can't copy the fcpl of '%s'", f->name);
            break;
        case H5VL_FILE_GET_FILENO:
            *args->args.get_fileno.fileno = f->fileno;
            break;
        case H5VL_FILE_GET_INTENT:
            *args->args.get_intent.flags = h5zv_swmr_intent(f); /* with the SWMR flags, as natively */
            break;
        case H5VL_FILE_GET_NAME: {
            H5VL_file_get_name_args_t *a   = &args->args.get_name;
            const char                *nm  = f->shown ? f->shown : f->name;
            size_t                     len = strlen(nm);
            if (a->buf && a->buf_size) {
                size_t k = len < a->buf_size - 1 ? len : a->buf_size - 1;
                memcpy(a->buf, nm, k);
                a->buf[k] = '\0';
            }
            if (a->file_name_len)
                *a->file_name_len = len;
            break;
        }
        case H5VL_FILE_GET_OBJ_COUNT:
            *args->args.get_obj_count.count = count_ids(obj, args->args.get_obj_count.types, 0, NULL);
            break;
        case H5VL_FILE_GET_OBJ_IDS:
            *args->args.get_obj_ids.count =
                count_ids(obj, args->args.get_obj_ids.types, args->args.get_obj_ids.max_objs,
                          args->args.get_obj_ids.oid_list);
            break;
        default:
            H5ZV_GOTO_ERROR("file get operation %d is not supported", (int)args->op_type);
    }
    ret = 0;
done:
    return ret;
}

/* Deletes a whole store (every key, then its container: zarr_store_remove), only when it is a zarr
 * store. */
static int
delete_store(const char *name)
{
    zarr_store *s   = NULL;
    int         ret = -1;
    if (zarr_store_open(name, ZARR_STORE_RDWR, &s) != ZARR_OK || !has_root_node(s)) {
        h5zv_err_push(__func__, __LINE__, "can't delete '%s': not a zarr store", name);
        goto done;
    }
    if (zarr_store_remove(s) != ZARR_OK) {
        h5zv_err_push(__func__, __LINE__, "can't delete zarr store '%s': %s", name, zarr_errmsg());
        goto done;
    }
    ret = 0;
done:
    zarr_store_close(s);
    return ret;
}

herr_t
h5zv_file_specific(void *obj, H5VL_file_specific_args_t *args, hid_t dxpl_id, void **req)
{
    h5zv_obj *o   = obj;
    herr_t    ret = -1;
    (void)dxpl_id;
    (void)req;

    switch (args->op_type) {
        case H5VL_FILE_FLUSH:
            if (h5zv_file_flush(o->file) < 0)
                goto done;
            break;
        case H5VL_FILE_REOPEN: {
            h5zv_obj *n = h5zv_obj_new(o->file, H5I_FILE, "");
            if (!n)
                H5ZV_GOTO_ERROR("out of memory");
            *args->args.reopen.file = n;
            break;
        }
        case H5VL_FILE_IS_ACCESSIBLE:
            *args->args.is_accessible.accessible = h5zv_file_is_store(args->args.is_accessible.filename);
            break;
        case H5VL_FILE_DELETE:
            if (delete_store(args->args.del.filename) < 0)
                goto done;
            break;
        case H5VL_FILE_IS_EQUAL: {
            h5zv_obj *o2                   = args->args.is_equal.obj2;
            *args->args.is_equal.same_file = o2 && o2->file == o->file;
            break;
        }
        default:
            H5ZV_GOTO_ERROR("file operation %d is not supported", (int)args->op_type);
    }
    ret = 0;
done:
    return ret;
}

herr_t
h5zv_file_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    h5zv_obj *o = obj;
    (void)dxpl_id;
    (void)req;
    H5VL_native_file_optional_args_t *a = args->args;
    switch (args->op_type) {
        case H5VL_NATIVE_FILE_START_SWMR_WRITE: /* H5Fstart_swmr_write (vol/swmr.c) */
            return h5zv_swmr_start_write(o->file) < 0 ? -1 : 0;
        /* HDF5's metadata cache has no counterpart here (node documents are parsed once per open): its
         * configuration is kept as set on the fapl or with H5Fset_mdc_config, and it reports an empty cache
         * with no hits, as native HDF5 does for a file with nothing cached yet */
        case H5VL_NATIVE_FILE_GET_MDC_CONF:
            return H5Pget_mdc_config(o->file->fapl_id, a->get_mdc_config.config) < 0 ? -1 : 0;
        case H5VL_NATIVE_FILE_SET_MDC_CONFIG:
            return H5Pset_mdc_config(o->file->fapl_id, (H5AC_cache_config_t *)a->set_mdc_config.config) < 0
                       ? -1
                       : 0;
        case H5VL_NATIVE_FILE_GET_MDC_HR:
            *a->get_mdc_hit_rate.hit_rate = 0.0;
            return 0;
        case H5VL_NATIVE_FILE_GET_MDC_SIZE: {
            H5VL_native_file_get_mdc_size_t *z = &a->get_mdc_size;
            if (z->max_size)
                *z->max_size = 0;
            if (z->min_clean_size)
                *z->min_clean_size = 0;
            if (z->cur_size)
                *z->cur_size = 0;
            if (z->cur_num_entries)
                *z->cur_num_entries = 0;
            return 0;
        }
        case H5VL_NATIVE_FILE_RESET_MDC_HIT_RATE:
            return 0;
        default:
            /* the others are about HDF5's own file format: its metadata cache, free space, superblock */
            h5zv_err_push(__func__, __LINE__,
                          "native-only file operation %d is not supported by the zarr connector",
                          args->op_type);
            return -1;
    }
}

/* consolidated=1: consolidated metadata of the whole hierarchy (v2 .zmetadata, v3 inline in the root
 * zarr.json), written after the final flush of each H5Fclose of a writable file. Not for root-array
 * stores (their root group is a read-only view). */
static int
consolidate(h5zv_file *f, h5zv_node *pending)
{
    h5zv_node *root;
    if (is_rootview(f->store))
        return 0;
    /* from the documents the node cache holds; the store is read only for the rest (node.c). v3: written
     * as text, no tree of it kept (bench/README.md "2026-12-07 evening: creates") */
    if (h5zv_node_consolidate(f, NULL, NULL, pending != NULL) != ZARR_OK) {
        h5zv_err_push(__func__, __LINE__, "can't write consolidated metadata of '%s' (consolidated=1): %s",
                      f->name, zarr_errmsg());
        return -1;
    }
    /* v3: the cached root no longer holds the consolidated metadata it was read with (stale now); a later
     * write of it (only a failed close's retry, which consolidates again) writes none */
    if (f->format == 3 && (root = h5zv_node_get(f, "")) && root->g && root->g->zarr_format == 3) {
        json_object_put(root->g->consolidated);
        json_object_put(root->g->consolidated_hidden);
        root->g->consolidated        = NULL;
        root->g->consolidated_hidden = NULL;
    }
    if (pending) /* its document was written just now, with the consolidated metadata */
        pending->dirty = pending->unwritten = pending->doc_dirty = pending->reserved_from_attrs = false;
    return 0;
}

/* The flush of the last close of a writable file: the nodes, the consolidated metadata (consolidated=1),
 * then the store. A dirty v3 root group is written once, by the consolidation (its document holds the
 * consolidated metadata): the flush leaves it out. Behind a write-behind queue the documents and the
 * consolidated metadata are held and leave as one batch. 0, or -1 with errors pushed. */
static int
close_flush(h5zv_file *f)
{
    int        ret = 0;
    h5zv_node *root, *pending = NULL;
    if (!h5zv_file_settings(f)->consolidated)
        return h5zv_file_flush(f);
    if (f->format == 3 && !is_rootview(f->store) && (root = h5zv_node_get(f, "")) && !root->deleted &&
        root->dirty && root->type == ZARR_NODE_GROUP && root->g && root->g->zarr_format == 3)
        pending = root;
    zarr_store_behind_hold(f->behind);
    if (h5zv_file_flush_nodes(f, !pending) < 0 || consolidate(f, pending) < 0)
        ret = -1;
    if (pending && pending->dirty && h5zv_node_write(f, pending) < 0) /* no consolidation: the root alone */
        ret = -1;
    zarr_store_behind_release(f->behind);
    if (h5zv_file_store_flush(f) < 0)
        ret = -1;
    return ret;
}

herr_t
h5zv_file_close(void *file, hid_t dxpl_id, void **req)
{
    h5zv_obj *o = file;
    (void)dxpl_id;
    (void)req;
    if (getenv("H5ZV_DEBUG"))
        fprintf(stderr, "h5zv: file close %p (%s)\n", (void *)o, o->file->name);
    /* MPI-IO (vol/mpi_vol.h): the shared chunks' pieces go to their owners, then the close is one step */
    if (o->file->mpi && o->file->intent == H5F_ACC_RDWR && h5zv_mpi_sync(o->file, NULL, true) < 0)
        return -1;
    h5zv_mpi_begin(o->file);
    {
        /* The last file handle flushes; closing another one (H5Iget_file_id's, or H5Rcreate_object's
         * short-lived file id, which H5DSattach_scale makes for every scale reference it rewrites) does
         * not, as HDF5 flushes a file when it really closes. A failed flush keeps the handle open (HDF5
         * keeps the id): nothing written is dropped silently. */
        h5zv_file *f    = o->file;
        bool       last = f->nhandles - (f->ngetfile - o->getfile) <= 1 || f->mpi;
        bool       ok =
            !last || (o->getfile && f->program_closed) || f->intent != H5F_ACC_RDWR || close_flush(f) == 0;
        if (last && ok && !o->getfile)
            f->program_closed = true;
        if (!h5zv_mpi_end(o->file, ok, "H5Fclose"))
            return -1;
    }
    h5zv_obj_free(o);
    return 0;
}

h5zv_file *
h5zv_file_open_store(const char *name, unsigned intent, hid_t fapl_id)
{
    unsigned   flags = intent == H5F_ACC_RDWR ? H5F_ACC_RDWR : H5F_ACC_RDONLY;
    char      *store = NULL;
    int        p     = h5zv_pointer_open_store(name, NULL, flags, fapl_id, &store);
    h5zv_obj  *o     = p < 0 ? NULL : h5zv_file_open(p ? store : name, flags, fapl_id, H5P_DEFAULT, NULL);
    h5zv_file *f;
    free(store);
    if (o && p > 0 && h5zv_file_set_shown_name(o, name) < 0) {
        h5zv_obj_free(o);
        return NULL;
    }
    if (!o)
        return NULL;
    f = o->file;
    h5zv_file_incref(f);
    h5zv_obj_free(o);
    return f;
}

/* Create and open: with an MPI-IO file access list, one collective step each (vol/mpi_vol.h). */
void *
h5zv_file_create_as(const char *name, const char *rule_name, unsigned flags, hid_t fcpl_id, hid_t fapl_id,
                    hid_t dxpl_id, void **req)
{
    int   mp = h5zv_mpi_open_begin(fapl_id);
    void *o  = NULL;
    if (mp <= 0)
        return mp < 0
                   ? NULL
                   : h5zv_mpi_open_end(file_create(name, rule_name, flags, fcpl_id, fapl_id, dxpl_id, req));
    /* rank 0 creates; after it (a broadcast of its outcome) the others open what it made */
    fapl_id = h5zv_mpi_opening_fapl(fapl_id);
    if (h5zv_mpi_opening_rank() == 0)
        h5zv_mpi_opening_share((o = file_create(name, rule_name, flags, fcpl_id, fapl_id, dxpl_id, req)) !=
                               NULL);
    else if (h5zv_mpi_opening_share(true))
        o = file_open(name, H5F_ACC_RDWR, fapl_id, dxpl_id, req, NULL);
    return h5zv_mpi_open_end(o);
}

void *
h5zv_file_create(const char *name, unsigned flags, hid_t fcpl_id, hid_t fapl_id, hid_t dxpl_id, void **req)
{
    return h5zv_file_create_as(name, name, flags, fcpl_id, fapl_id, dxpl_id, req);
}

bool
h5zv_file_is_named(const h5zv_file *f, const char *fname)
{
    char *real, *shown = NULL;
    bool  yes;
    if (!strcmp(fname, f->name) || (f->shown && !strcmp(fname, f->shown)))
        return true;
    if (zarr_store_is_url(fname) || !(real = realpath(fname, NULL)))
        return false;
    yes = (f->real && !strcmp(real, f->real)) ||
          (f->shown && (shown = realpath(f->shown, NULL)) && !strcmp(real, shown));
    free(real);
    free(shown);
    return yes;
}

int
h5zv_file_set_shown_name(void *o, const char *pointer)
{
    h5zv_file *f = ((h5zv_obj *)o)->file;
    char      *s = strdup(pointer);
    if (!s) {
        h5zv_err_push(__func__, __LINE__, "out of memory");
        return -1;
    }
    free(f->shown);
    f->shown = s;
    return 0;
}

void *
h5zv_file_open_probed(const char *name, unsigned flags, hid_t fapl_id, hid_t dxpl_id, void **req,
                      h5zv_probe *p)
{
    if (h5zv_mpi_open_begin(fapl_id) < 0)
        return NULL;
    return h5zv_mpi_open_end(file_open(name, flags, h5zv_mpi_opening_fapl(fapl_id), dxpl_id, req, p));
}

void *
h5zv_file_open(const char *name, unsigned flags, hid_t fapl_id, hid_t dxpl_id, void **req)
{
    return h5zv_file_open_probed(name, flags, fapl_id, dxpl_id, req, NULL);
}
