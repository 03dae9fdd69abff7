/*
 * pointer.c: pointer files (see pointer.h): reading and validating one (either version), writing one
 * atomically, the owner record a store keeps (the key `.h5zarr_pointer`, read and written through the
 * store interface), copying a store on the first write through a copied pointer, and removing the
 * stores whose pointer another file replaced (the sweep: after a first full one, a process checks only
 * what changed in the directory since, watched with inotify: "what changed" below).
 *
 * The HDF5 part of a pointer is made by the native connector through the API (an empty file with one
 * root attribute); the record is then appended after HDF5's end of file, and the file renamed into
 * place. HDF5 accepts a file longer than its end-of-file address, so the pointer stays a plain HDF5
 * file with its signature at offset 0.
 *
 * A store may also live under a URL prefix (the setting `store = s3://bucket/run42/` for the pointer's
 * path): the pointer then records the store's URL, and the store's owner record also names the
 * pointer's directory (the URL does not say where its pointer is). A URL read from a pointer is used
 * only when the configuration in force for the pointer's path allows its prefix (`store` or
 * `allow_url`); else the pointer is refused before any request (url_allowed).
 */
#include "pointer.h"
#include "native.h"
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define RECORD_KEY ".h5zarr_pointer"
#define HDF5_SIG   "\x89HDF\r\n\x1a\n"

/* ---- names ------------------------------------------------------------------------------------------ */
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

static const char *
base_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* What tells a pointer's store from another: the URL of a store on object storage, the name of one
 * in the pointer's directory. */
static const char *
store_key(const char *store)
{
    return zarr_store_is_url(store) ? store : base_of(store);
}

/* The directory of the pointer `name`, absolute and resolved (malloc'ed; NULL if it can't be). */
static char *
abs_dir(const char *name)
{
    char *d = dir_of(name), *r = d ? realpath(*d ? d : ".", NULL) : NULL;
    free(d);
    return r;
}

/* a + b, malloc'ed */
static char *
cat2(const char *a, const char *b)
{
    char *s = malloc(strlen(a) + strlen(b) + 1);
    if (s)
        sprintf(s, "%s%s", a, b);
    return s;
}

/* A plain name a pointer or a record may give: not empty, no '/', no control character, not . or .. */
static bool
plain_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 255 || !strcmp(s, ".") || !strcmp(s, ".."))
        return false;
    for (const char *c = s; *c; c++)
        if (*c == '/' || (unsigned char)*c < 0x20 || *c == 0x7f)
            return false;
    return true;
}

static void
new_id(char *id)
{
    unsigned char r[H5ZV_POINTER_ID_LEN / 2];
    size_t        got = 0;
    while (got < sizeof r) {
        ssize_t k = getrandom(r + got, sizeof r - got, 0);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    if (got < sizeof r) { /* no getrandom: time, pid and an address, mixed */
        struct timespec ts;
        uint64_t        x;
        clock_gettime(CLOCK_REALTIME, &ts);
        x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 17) ^ (uintptr_t)&ts;
        for (size_t i = 0; i < sizeof r; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            r[i] = (unsigned char)x;
        }
    }
    for (size_t i = 0; i < sizeof r; i++)
        sprintf(id + 2 * i, "%02x", r[i]);
}

/* ---- reading a pointer ------------------------------------------------------------------------------ */
/* Where HDF5's signature is in the open file `fd` of `size` bytes: at 0, or after a user block (512,
 * 1024, 2048, ...; HDF5 looks at the same places), before the last `below` bytes. -1 if nowhere. */
static off_t
sig_offset(int fd, off_t size, off_t below)
{
    unsigned char sig[8];
    for (off_t at = 0; at + 8 <= size - below; at = at ? 2 * at : H5ZV_POINTER_BLOCK)
        if (pread(fd, sig, sizeof sig, at) == (ssize_t)sizeof sig && !memcmp(sig, HDF5_SIG, 8))
            return at;
    return -1;
}

/* h5zv_pointer_read without pushing: the version (1, 2), 0 (not a pointer), -1 (`why` says what is
 * wrong). A v1 record is the first 512 bytes; a v2 record the last 512 bytes of a file with HDF5's
 * signature at 0 or after a user block (whose bytes the program owns: they may be anything). When
 * `userblock` is not NULL, *userblock is where that signature is (0: no user block). */
static int
read_quiet_st(const char *name, const struct stat *known, char **store, char *id, off_t *userblock, char *why,
              size_t nwhy)
{
    unsigned char head[H5ZV_POINTER_BLOCK], tail[H5ZV_POINTER_BLOCK];
    char         *dir = NULL, *rel = NULL;
    struct stat   st;
    int           fd, p = 0;
    off_t         at = 0;

    *store = NULL;
    if (id)
        id[0] = '\0';
    if (userblock)
        *userblock = 0;
    /* A pointer file is a local file: a URL names a store (file.c), and is never looked up here. */
    if (known)
        st = *known;
    if (!name || zarr_store_is_url(name) || (!known && stat(name, &st) != 0) || !S_ISREG(st.st_mode) ||
        st.st_size < H5ZV_POINTER_BLOCK)
        return 0;
    if ((fd = open(name, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    if (pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head) {
        if (!memcmp(head, H5ZV_POINTER_MAGIC, strlen(H5ZV_POINTER_MAGIC)))
            p = h5zv_pointer_parse(head, sizeof head, &rel, id, why, nwhy);
        else if (st.st_size >= H5ZV_POINTER_BLOCK + 8 &&
                 pread(fd, tail, sizeof tail, st.st_size - H5ZV_POINTER_BLOCK) == (ssize_t)sizeof tail &&
                 !memcmp(tail, H5ZV_POINTER_MAGIC_V2, strlen(H5ZV_POINTER_MAGIC_V2)) &&
                 (at = memcmp(head, HDF5_SIG, 8) ? sig_offset(fd, st.st_size, H5ZV_POINTER_BLOCK) : 0) >= 0)
            p = h5zv_pointer_parse(tail, sizeof tail, &rel, id, why, nwhy);
    }
    close(fd);
    if (p <= 0)
        return p;
    if (userblock && p == 2)
        *userblock = at;
    if (zarr_store_is_url(rel)) { /* only version 2 records hold one (pointer_parse.c) */
        *store = rel;
        return p;
    }
    if (!(dir = dir_of(name)) || !(*store = cat2(dir, rel))) {
        snprintf(why, nwhy, "out of memory");
        p = -1;
    }
    free(dir);
    free(rel);
    return p;
}

static int
read_quiet(const char *name, char **store, char *id, off_t *userblock, char *why, size_t nwhy)
{
    return read_quiet_st(name, NULL, store, id, userblock, why, nwhy);
}

/* Whether the configuration in force for the pointer `name` (its rules, resolved with `fapl_id`) lets
 * it lead to `url`: under its `store` or its `allow_url` prefix. 1 yes; 0 no (error pushed naming the
 * pointer, the URL and both settings); -1 (bad configuration: error pushed). Makes no request. */
static int
url_allowed(const char *name, hid_t fapl_id, const char *url)
{
    h5zv_settings cfg;
    if (h5zv_config_get(fapl_id, name, &cfg) < 0)
        return -1;
    if ((cfg.store[0] && h5zv_pointer_url_under(url, cfg.store)) ||
        (cfg.allow_url[0] && h5zv_pointer_url_under(url, cfg.allow_url)))
        return 1;
    h5zv_err_push_code(H5E_FILE, H5E_BADVALUE,
                       "pointer file '%s' names the store URL '%s', which the configuration in force for it "
                       "does not allow: a pointer may lead only under the prefix of the setting 'store' or "
                       "'allow_url' for its path (here store = %s, allow_url = %s; docs/CONFIG.md). The "
                       "pointer is refused; no request was made",
                       name, url, cfg.store[0] ? cfg.store : "beside (no URL)",
                       cfg.allow_url[0] ? cfg.allow_url : "none");
    return 0;
}

int
h5zv_pointer_read_st(const char *name, const struct stat *st, hid_t fapl_id, char **store, char *id)
{
    char why[300];
    int  p = read_quiet_st(name, st, store, id, NULL, why, sizeof why);
    if (p < 0)
        h5zv_err_push(__func__, __LINE__, "pointer file '%s' %s", name, why);
    else if (p > 0 && zarr_store_is_url(*store) && url_allowed(name, fapl_id, *store) <= 0)
        p = -1;
    if (p < 0) {
        free(*store);
        *store = NULL;
    }
    return p < 0 ? -1 : p > 0;
}

int
h5zv_pointer_read(const char *name, hid_t fapl_id, char **store, char *id)
{
    return h5zv_pointer_read_st(name, NULL, fapl_id, store, id);
}

/* ---- the owner record in the store ------------------------------------------------------------------ */
/* An absolute directory a record of a store on object storage names: '/' first, no control character. */
static bool
record_dir_ok(const char *s, size_t len)
{
    if (len == 0 || len > 4095 || s[0] != '/' || strlen(s) != len)
        return false;
    for (const char *c = s; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return false;
    return true;
}

/* The record of `store`: 1 (id, *pointer: the owner's file name, malloc'ed; *dir, when `dir` is not NULL:
 * the owner's absolute directory, malloc'ed, which records of stores on object storage hold, else NULL),
 * 0 (none: no such store, a zip archive, or no key), -1 (a damaged record: `why`). Read through the
 * store interface. */
static int
record_get(const char *store, char *id, char **pointer, char **dir, char *why, size_t nwhy)
{
    zarr_store   *s = NULL;
    zarr_buf      b = ZARR_BUF_INIT;
    json_object  *j = NULL, *v, *i, *p, *d = NULL;
    json_tokener *tok = NULL;
    int           ret = 0, rc;
    size_t        n   = strlen(store);
    const char   *ps;

    *pointer = NULL;
    if (dir)
        *dir = NULL;
    if (n >= 4 && !strcmp(store + n - 4, ".zip"))
        return 0;
    if (!h5zv_file_is_dir(store) || zarr_store_open(store, ZARR_STORE_RDONLY, &s) != ZARR_OK)
        return 0;
    if ((rc = zarr_store_get(s, RECORD_KEY, &b)) != ZARR_OK) {
        if (rc != ZARR_ENOTFOUND) {
            snprintf(why, nwhy, "can't read its key '%s': %s", RECORD_KEY, zarr_errmsg());
            ret = -1;
        }
        goto done;
    }
    ret = -1;
    if (!(tok = json_tokener_new()))
        goto bad;
    j = json_tokener_parse_ex(tok, (const char *)b.data, (int)b.size);
    if (!j || json_tokener_get_error(tok) != json_tokener_success ||
        !json_object_is_type(j, json_type_object) || !json_object_object_get_ex(j, "h5zarr_pointer", &v) ||
        !json_object_is_type(v, json_type_int) || json_object_get_int64(v) != 1 ||
        !json_object_object_get_ex(j, "id", &i) || !json_object_is_type(i, json_type_string) ||
        !h5zv_pointer_id_ok(json_object_get_string(i)) || !json_object_object_get_ex(j, "pointer", &p) ||
        !json_object_is_type(p, json_type_string) || !plain_name(ps = json_object_get_string(p)) ||
        strlen(ps) != (size_t)json_object_get_string_len(p) || json_object_object_length(j) > 4 ||
        (json_object_object_length(j) == 4 &&
         (!json_object_object_get_ex(j, "dir", &d) || !json_object_is_type(d, json_type_string) ||
          !record_dir_ok(json_object_get_string(d), (size_t)json_object_get_string_len(d)))))
        goto bad;
    memcpy(id, json_object_get_string(i), H5ZV_POINTER_ID_LEN + 1);
    if (!(*pointer = strdup(ps)) || (d && dir && !(*dir = strdup(json_object_get_string(d))))) {
        snprintf(why, nwhy, "out of memory");
        free(*pointer);
        *pointer = NULL;
        goto done;
    }
    ret = 1;
    goto done;
bad:
    snprintf(why, nwhy,
             "has a damaged key '%s' (not {\"h5zarr_pointer\": 1, \"id\": \"<%d hex digits>\", \"pointer\": "
             "\"<file name>\"[, \"dir\": \"<absolute directory>\"]})",
             RECORD_KEY, H5ZV_POINTER_ID_LEN);
done:
    if (tok)
        json_tokener_free(tok);
    json_object_put(j);
    zarr_buf_free(&b);
    zarr_store_close(s);
    return ret;
}

/* Writes (id, pointer) as the record of `store`, or deletes it (id NULL); `pointer` is the owner's path
 * (its file name goes in the record, and for a store on object storage its absolute directory too). 0,
 * or -1 (`why`). */
static int
record_put(const char *store, const char *id, const char *pointer, char *why, size_t nwhy)
{
    zarr_store  *s = NULL;
    json_object *j = NULL;
    const char  *text;
    char        *adir = NULL;
    int          ret  = -1, rc;
    size_t       n    = strlen(store);

    if (n >= 4 && !strcmp(store + n - 4, ".zip"))
        return 0;
    if (zarr_store_open(store, ZARR_STORE_RDWR, &s) != ZARR_OK)
        goto zerr;
    if (!id) {
        rc = zarr_store_del(s, RECORD_KEY);
        if (rc != ZARR_OK && rc != ZARR_ENOTFOUND)
            goto zerr;
        ret = 0;
        goto done;
    }
    if (!(j = json_object_new_object()) ||
        json_object_object_add(j, "h5zarr_pointer", json_object_new_int(1)) < 0 ||
        json_object_object_add(j, "id", json_object_new_string(id)) < 0 ||
        json_object_object_add(j, "pointer", json_object_new_string(base_of(pointer))) < 0 ||
        (zarr_store_is_url(store) && (!(adir = abs_dir(pointer)) ||
                                      json_object_object_add(j, "dir", json_object_new_string(adir)) < 0)) ||
        !(text =
              json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE))) {
        snprintf(why, nwhy, "out of memory, or the pointer's directory can't be resolved");
        goto done;
    }
    if (zarr_store_set(s, RECORD_KEY, text, strlen(text)) != ZARR_OK)
        goto zerr;
    ret = 0;
    goto done;
zerr:
    snprintf(why, nwhy, "can't write its key '%s': %s", RECORD_KEY, zarr_errmsg());
done:
    free(adir);
    json_object_put(j);
    zarr_store_close(s);
    return ret;
}

/* ---- the pointers of a directory -------------------------------------------------------------------- */
typedef struct {
    char *file;  /* the pointer's file name */
    char *store; /* the store it gives: a name in the directory, or a URL (store_key) */
    char  id[H5ZV_POINTER_ID_LEN + 1];
} dir_pointer;

typedef struct {
    dir_pointer *p;
    size_t       n;
    bool         scanned;
} dir_scan;

static void
scan_free(dir_scan *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->p[i].file);
        free(d->p[i].store);
    }
    free(d->p);
    memset(d, 0, sizeof *d);
}

static bool watch_table(const char *dir, dir_scan *d);
static void scan_dir_read(const char *dir, dir_scan *d, bool *links);

/* Every pointer file in `dir` (read once, when first needed): from what the watch of the directory
 * knows when it knows it all (watch_table), else read. */
static void
scan_dir(const char *dir, dir_scan *d)
{
    if (d->scanned)
        return;
    d->scanned = true;
    if (!watch_table(dir, d))
        scan_dir_read(dir, d, NULL);
}

/* Reads every pointer file of `dir` into `d`; *links (when not NULL) set when a name is a symbolic
 * link or of unknown type. */
static void
scan_dir_read(const char *dir, dir_scan *d, bool *links)
{
    DIR           *dh;
    struct dirent *e;
    char          *path, *st, why[300], id[H5ZV_POINTER_ID_LEN + 1];
    if (!(dh = opendir(*dir ? dir : ".")))
        return;
    while ((e = readdir(dh))) {
        dir_pointer *np;
        if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN && e->d_type != DT_LNK)
            continue;
        if (links && e->d_type != DT_REG)
            *links = true;
        if (!(path = cat2(dir, e->d_name)))
            break;
        st = NULL;
        if (read_quiet(path, &st, id, NULL, why, sizeof why) > 0 &&
            (np = realloc(d->p, (d->n + 1) * sizeof *np))) {
            d->p = np;
            memcpy(np[d->n].id, id, sizeof id);
            np[d->n].file  = strdup(e->d_name);
            np[d->n].store = strdup(store_key(st));
            if (np[d->n].file && np[d->n].store)
                d->n++;
            else {
                free(np[d->n].file);
                free(np[d->n].store);
            }
        }
        free(st);
        free(path);
    }
    closedir(dh);
}

/* The pointers of the directory other than `except` that name the store `store_name` (with the id
 * `id` when not NULL); the first one's file name in *who (borrowed) when not NULL. */
static size_t
holders(const dir_scan *d, const char *store_name, const char *id, const char *except, const char **who)
{
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->p[i].store, store_name) && (!except || strcmp(d->p[i].file, except)) &&
            (!id || !strcmp(d->p[i].id, id))) {
            if (who && k == 0)
                *who = d->p[i].file;
            k++;
        }
    return k;
}

/* ---- ownership -------------------------------------------------------------------------------------- */
enum { OWNS, OWNS_RENAMED, FOREIGN };

/* Whether the pointer `name` (naming `store`, with `id`) owns it: OWNS (the record names it, or there is
 * no record, or the pointer has no id: version 1), OWNS_RENAMED (the record names another file that is no
 * copy of it: the pointer was renamed, or a store on object storage moved with its pointer to another
 * directory), FOREIGN (the store is another pointer's: *owner, malloc'ed, says whose, and `why` why);
 * -1 (`why`). */
static int
ownership(const char *name, const char *store, const char *id, char **owner, char *why, size_t nwhy)
{
    char rid[H5ZV_POINTER_ID_LEN + 1], *rname = NULL, *rdir = NULL, *here = NULL, *dir = NULL;
    char hid[H5ZV_POINTER_ID_LEN + 1], w2[300], *hpath = NULL, *hstore = NULL;
    int  r, ret;
    bool moved;

    *owner = NULL;
    if (!id || !id[0])
        return OWNS;
    if ((r = record_get(store, rid, &rname, &rdir, why, nwhy)) <= 0)
        return r < 0 ? -1 : OWNS;
    if (strcmp(rid, id) != 0) {
        snprintf(why, nwhy, "the store records another pointer as its owner ('%s', with another id)", rname);
        *owner = rname;
        free(rdir);
        return FOREIGN;
    }
    /* a store on object storage records its owner's directory: a pointer elsewhere is not that owner */
    moved = rdir && (!(here = abs_dir(name)) || strcmp(here, rdir) != 0);
    if (!moved && !strcmp(rname, base_of(name))) {
        free(rname);
        free(rdir);
        free(here);
        return OWNS;
    }
    ret = OWNS_RENAMED;
    if (moved && (hpath = malloc(strlen(rdir) + strlen(rname) + 2)))
        sprintf(hpath, "%s/%s", rdir, rname);
    if ((dir = dir_of(name)) && (hpath || (!moved && (hpath = cat2(dir, rname)))) &&
        read_quiet(hpath, &hstore, hid, NULL, w2, sizeof w2) == 2 && !strcmp(hid, id) &&
        !strcmp(store_key(hstore), store_key(store))) {
        snprintf(why, nwhy, "it is a copy of the pointer file '%s', which owns the store", hpath);
        *owner = rname;
        rname  = NULL;
        ret    = FOREIGN;
    }
    else if (dir) {
        /* renamed, unless another pointer of the directory holds the store too (the original renamed
         * after a copy was made): then which is the original is unknown, and this one copies */
        dir_scan    d   = {0};
        const char *who = NULL;
        scan_dir(dir, &d);
        if (holders(&d, store_key(store), id, base_of(name), &who) > 0) {
            snprintf(why, nwhy, "another pointer file, '%s', holds the store with the same id", who);
            *owner = strdup(who);
            ret    = FOREIGN;
        }
        scan_free(&d);
    }
    free(rname);
    free(rdir);
    free(here);
    free(dir);
    free(hpath);
    free(hstore);
    return ret;
}

int
h5zv_pointer_owns_store(const char *name, const char *store, const char *id)
{
    char why[400], *owner = NULL;
    int  o = ownership(name, store, id, &owner, why, sizeof why);
    free(owner);
    if (o < 0) {
        h5zv_err_push(__func__, __LINE__, "the store '%s' of pointer file '%s' %s", store, name, why);
        return -1;
    }
    return o != FOREIGN;
}

/* ---- what changed in a directory since its last sweep ------------------------------------------- */
/* A sweep used to read the record of every store of the directory and, for each, its owner pointer: at
 * every pointer create, that is quadratic in the number of stores of a directory (netCDF's tst_quantize
 * made 27 pointers in one directory: 2,500 record reads, 10,000 stats of pointer names). A store's
 * orphan state depends only on the pointer files of the directory (the one its record names, those
 * that name it) and on its record, which only the connector writes, always as a consequence of a
 * change of pointer files (a new store and its pointer, a renamed pointer taken over). So a process
 * watches each directory it sweeps (inotify: creates, deletes, renames and writes of the directory's
 * entries, not the stores' insides), and after a first full sweep checks only the stores that a
 * changed name may concern: the stores the changed pointer named before (as last read) and names now,
 * the stores whose record (as last read) names it, and the name itself when it is a store. Each such
 * store is checked as by a full sweep, its record read fresh. The pointers of the directory (which of
 * them name a store: holders) come from the watch's table once every changed name has been read again
 * (watch_table; on a local file system the kernel queues an event before the call that made the change
 * returns, so the table is what a read of the directory would give), for the sweep and for the other
 * users of scan_dir (a create over an existing pointer, a renamed pointer's write-open). A full sweep
 * is made again when the kernel's queue overflowed, when too many names changed, and for the first
 * sweep of a directory in a process; directories whose file system is not local (inotify does not see
 * other clients' changes), holding symbolic links (their targets' changes are not seen), beyond
 * WATCH_MAX of them, or without inotify, are read whole each time, as before. A forked child starts
 * over (the queue is shared with its parent). */
#define WATCH_MAX   64
#define CHANGED_MAX 4096
#define WATCH_MASK                                                                                           \
    (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE | IN_DELETE_SELF |     \
     IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)

typedef struct {
    char *name; /* a name of the directory */
    char *ptr;  /* the store key the pointer `name` gave when last read (NULL: no pointer) */
    char  id[H5ZV_POINTER_ID_LEN + 1]; /* and its id */
    char *owner; /* the owner's file name the record of the store `name` gave when last read (NULL: none) */
} known_name;

typedef struct {
    int         wd;
    bool        full;  /* the next sweep reads the whole directory */
    bool        links; /* a name was a symbolic link: its target's changes are not seen */
    known_name *k;
    size_t      nk;
    char      **chg; /* names with an event not yet read again */
    size_t      nchg;
    char      **cand; /* stores the names read again may concern, for the next sweep */
    size_t      ncand;
} watched_dir;

static struct {
    pthread_mutex_t lock;
    int             fd; /* -1: not opened yet; -2: inotify is not available */
    pid_t           pid;
    watched_dir     w[WATCH_MAX];
    size_t          nw;
} sw = {PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP, -1, 0, {{0}}, 0};

/* Frees the `*n` strings of `*v` and the array; both left empty. */
static void
strs_clear(char ***v, size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        free((*v)[i]);
    free(*v);
    *v = NULL;
    *n = 0;
}

static void
chg_clear(watched_dir *w)
{
    strs_clear(&w->chg, &w->nchg);
}

static void
known_clear(watched_dir *w)
{
    for (size_t i = 0; i < w->nk; i++) {
        free(w->k[i].name);
        free(w->k[i].ptr);
        free(w->k[i].owner);
    }
    free(w->k);
    w->k  = NULL;
    w->nk = 0;
}

static void
cand_clear(watched_dir *w)
{
    strs_clear(&w->cand, &w->ncand);
}

static void
watched_free(watched_dir *w)
{
    chg_clear(w);
    cand_clear(w);
    known_clear(w);
    memset(w, 0, sizeof *w);
}

/* The entry of `name` (made when `make`; NULL when absent or out of memory). */
static known_name *
known_get(watched_dir *w, const char *name, bool make)
{
    known_name *k;
    for (size_t i = 0; i < w->nk; i++)
        if (!strcmp(w->k[i].name, name))
            return &w->k[i];
    if (!make || !(k = realloc(w->k, (w->nk + 1) * sizeof *k)))
        return NULL;
    w->k = k;
    k    = &w->k[w->nk];
    memset(k, 0, sizeof *k);
    if (!(k->name = strdup(name)))
        return NULL;
    w->nk++;
    return k;
}

/* Sets *field to a copy of `v` (NULL: none). False when out of memory (the entry is then unknown). */
static bool
known_set(char **field, const char *v)
{
    free(*field);
    *field = v ? strdup(v) : NULL;
    return !v || *field;
}

/* Adds `name` to the names changed (a full sweep when too many changed, or out of memory). */
static void
chg_add(watched_dir *w, const char *name)
{
    char **c;
    if (w->full)
        return;
    for (size_t i = 0; i < w->nchg; i++)
        if (!strcmp(w->chg[i], name))
            return;
    if (w->nchg >= CHANGED_MAX || !(c = realloc(w->chg, (w->nchg + 1) * sizeof *c)) ||
        !(c[w->nchg] = strdup(name))) {
        if (w->nchg < CHANGED_MAX && c)
            w->chg = c;
        chg_clear(w);
        w->full = true;
        return;
    }
    w->chg = c;
    w->nchg++;
}

/* Reads every queued event into the names changed of its directory. Under sw.lock. */
static void
watch_drain(void)
{
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t n = read(sw.fd, buf, sizeof buf);
        if (n <= 0)
            return;
        for (char *at = buf; at < buf + n;) {
            const struct inotify_event *e = (const struct inotify_event *)at;
            watched_dir                *w = NULL;
            at += sizeof *e + e->len;
            if (e->mask & IN_Q_OVERFLOW) {
                for (size_t i = 0; i < sw.nw; i++) {
                    chg_clear(&sw.w[i]);
                    sw.w[i].full = true;
                }
                continue;
            }
            for (size_t i = 0; i < sw.nw && !w; i++)
                if (sw.w[i].wd == e->wd)
                    w = &sw.w[i];
            if (!w)
                continue;
            if (e->mask & IN_IGNORED) { /* the directory is gone, or its watch removed: a free slot (slots
                                         * never move: a sweep holds a pointer to its own) */
                watched_free(w);
                w->wd = -1;
                continue;
            }
            if (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) {
                chg_clear(w);
                w->full = true;
            }
            else if (e->len && e->name[0] &&
                     !zarr_store_trash_name(e->name)) /* trash: no pointer, no store */
                chg_add(w, e->name);
        }
    }
}

/* Whether inotify sees every change of the directory `path`: a local file system. */
static bool
local_fs(const char *path)
{
    struct statfs f;
    if (statfs(path, &f) != 0)
        return false;
    switch ((unsigned long)f.f_type) {
        case 0xEF53UL:     /* ext2/3/4 */
        case 0x58465342UL: /* xfs */
        case 0x9123683EUL: /* btrfs */
        case 0x01021994UL: /* tmpfs */
        case 0x794C7630UL: /* overlayfs */
        case 0x2FC12FC1UL: /* zfs */
        case 0xF2F52010UL: /* f2fs */
            return true;
        default:
            return false;
    }
}

/* Every watch and the inotify descriptor gone (the next watch_dir opens a new one). Under sw.lock. */
static void
watches_drop(void)
{
    for (size_t i = 0; i < sw.nw; i++)
        watched_free(&sw.w[i]);
    sw.nw = 0;
    if (sw.fd >= 0)
        close(sw.fd);
    sw.fd = -1;
}

/* The watch of `dir` ("" = the current directory), its events read: NULL when there is none (then a
 * full sweep, as before). A new watch asks for a full sweep. Under sw.lock. */
static watched_dir *
watch_dir(const char *dir)
{
    const char  *path = *dir ? dir : ".";
    watched_dir *w    = NULL;
    int          wd;
    if (sw.pid != getpid()) { /* a forked child: the queue is shared with the parent */
        watches_drop();
        sw.pid = getpid();
    }
    if (sw.fd == -1 && (sw.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
        sw.fd = -2;
    if (sw.fd < 0 || !local_fs(path) || (wd = inotify_add_watch(sw.fd, path, WATCH_MASK)) < 0)
        return NULL;
    watch_drain();
    for (size_t i = 0; i < sw.nw; i++)
        if (sw.w[i].wd == wd)
            return &sw.w[i];
    for (size_t i = 0; i < sw.nw && !w; i++)
        if (sw.w[i].wd == -1)
            w = &sw.w[i];
    if (!w && sw.nw == WATCH_MAX) {
        inotify_rm_watch(sw.fd, wd);
        return NULL;
    }
    if (!w)
        w = &sw.w[sw.nw++];
    memset(w, 0, sizeof *w);
    w->wd   = wd;
    w->full = true;
    return w;
}

/* ---- sweeping --------------------------------------------------------------------------------------- */
static bool
remove_store(const char *path)
{
    zarr_store *s = NULL;
    bool        ok;
    if (zarr_store_open(path, ZARR_STORE_RDWR, &s) != ZARR_OK)
        return false;
    ok = zarr_store_remove(s) == ZARR_OK;
    zarr_store_close(s);
    return ok;
}

/* Sweeps the entry `name` of `dir` (the pointers of the directory read into `d` when first needed):
 * removes it when it is an orphan store; updates its record when exactly one pointer, not the one the
 * record names, holds it (its owner, renamed). True when it was removed. When `w` is not NULL, what its
 * record names now is remembered there. */
static bool
sweep_one(const char *dir, const char *name, dir_scan *d, watched_dir *w)
{
    char        rid[H5ZV_POINTER_ID_LEN + 1], hid[H5ZV_POINTER_ID_LEN + 1], why[400];
    char       *path = NULL, *rname = NULL, *hpath = NULL, *hstore = NULL;
    const char *who = NULL, *owner = NULL;
    size_t      k;
    int         h       = 0;
    bool        removed = false;
    struct stat st;
    known_name *kn;

    if (zarr_store_trash_name(name)) /* content a clear moved aside: neither a store nor an orphan */
        return false;
    if (!(path = cat2(dir, name)) || lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        goto next;
    if (record_get(path, rid, &rname, NULL, why, sizeof why) != 1 || !(hpath = cat2(dir, rname)))
        goto next;
    owner = rname;
    /* its owner still holds it (a version 1 pointer naming it is taken as its owner: it has no id) */
    if ((h = read_quiet(hpath, &hstore, hid, NULL, why, sizeof why)) > 0 && (h == 1 || !strcmp(hid, rid)) &&
        !strcmp(store_key(hstore), name))
        goto next;
    /* other pointers of the directory hold it: one (its owner, renamed) owns it now; several (the
     * owner renamed after a copy was made) leave the record as it is */
    scan_dir(dir, d);
    if ((k = holders(d, name, rid, NULL, &who)) > 0 || holders(d, name, "", NULL, NULL) > 0) {
        if (k == 1 && record_put(path, rid, who, why, sizeof why) == 0)
            owner = who;
        goto next;
    }
    /* the owner's name is now another pointer (one renamed over it, a copy of another): an orphan.
     * The owner's name gone (deleted, moved away), or another kind of file (a native file written
     * over it; the pointer itself opened for writing by HDF5 without the connector, which cuts the
     * record off): the store is left as it is. */
    if (h > 0 && remove_store(path)) {
        removed = true;
        owner   = NULL;
    }
next:
    if (w && (kn = known_get(w, name, true)) && !known_set(&kn->owner, owner))
        w->full = true;
    free(path);
    free(rname);
    free(hpath);
    free(hstore);
    return removed;
}

/* The whole directory: every store's record (and, when `w` is not NULL, every pointer, remembered
 * there with the records). `except` (owned by `owner`, just written) is not read. */
static int
sweep_full(const char *dir, const char *except, const char *owner, watched_dir *w)
{
    DIR           *dh;
    struct dirent *e;
    dir_scan       d       = {0};
    int            removed = 0;
    known_name    *kn;

    if (w) {
        known_clear(w);
        chg_clear(w);
        cand_clear(w);
        w->full = w->links = false;
        d.scanned          = true; /* read here, not from the table being made */
        scan_dir_read(dir, &d, &w->links);
        for (size_t i = 0; i < d.n; i++)
            if (!(kn = known_get(w, d.p[i].file, true)) || !known_set(&kn->ptr, d.p[i].store))
                w->full = true;
            else
                memcpy(kn->id, d.p[i].id, sizeof kn->id);
        if (except && (!(kn = known_get(w, except, true)) || !known_set(&kn->owner, owner)))
            w->full = true;
    }
    if (!(dh = opendir(*dir ? dir : ".")))
        goto done;
    while ((e = readdir(dh))) {
        if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
            continue;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || (except && !strcmp(e->d_name, except)))
            continue;
        removed += sweep_one(dir, e->d_name, &d, w);
    }
    closedir(dh);
done:
    scan_free(&d);
    return removed;
}

/* Adds `name` to the list `c` of *n names, once. False when out of memory. */
static bool
cand_add(char ***c, size_t *n, const char *name)
{
    char **g;
    if (!name || zarr_store_is_url(name) || !plain_name(name))
        return true;
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*c)[i], name))
            return true;
    if (!(g = realloc(*c, (*n + 1) * sizeof *g)))
        return false;
    *c = g;
    if (!(g[*n] = strdup(name)))
        return false;
    (*n)++;
    return true;
}

/* Reads again the names changed since they were last read, and adds the stores they may concern to
 * the candidates of the next sweep (see "what changed" above). False when the table can't be trusted
 * (out of memory: w->full is then set). */
static bool
watch_refresh(const char *dir, watched_dir *w)
{
    char      **chg  = w->chg, why[300], id[H5ZV_POINTER_ID_LEN + 1];
    size_t      nchg = w->nchg;
    bool        ok   = true;
    known_name *kn;
    struct stat lst;

    w->chg  = NULL;
    w->nchg = 0;
    for (size_t i = 0; i < nchg && ok; i++) {
        char *path = cat2(dir, chg[i]), *st = NULL;
        ok = path && (kn = known_get(w, chg[i], true)) && cand_add(&w->cand, &w->ncand, chg[i]) &&
             cand_add(&w->cand, &w->ncand, kn->ptr);
        if (ok && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
            w->links = true;
        if (ok && read_quiet(path, &st, id, NULL, why, sizeof why) > 0) {
            ok = cand_add(&w->cand, &w->ncand, store_key(st)) && known_set(&kn->ptr, store_key(st));
            memcpy(kn->id, id, sizeof kn->id);
        }
        else if (ok)
            known_set(&kn->ptr, NULL);
        for (size_t j = 0; j < w->nk && ok; j++)
            if (w->k[j].owner && !strcmp(w->k[j].owner, chg[i]))
                ok = cand_add(&w->cand, &w->ncand, w->k[j].name);
        free(st);
        free(path);
    }
    for (size_t i = 0; i < nchg; i++)
        free(chg[i]);
    free(chg);
    if (!ok)
        w->full = true;
    return ok;
}

/* The pointers of `dir` from its watch's table, when it knows them all (a watch on a local file system,
 * after a full sweep, no symbolic link seen): true, *d filled; else false (d is then read). */
static bool
watch_table(const char *dir, dir_scan *d)
{
    watched_dir *w;
    bool         ok = false;
    pthread_mutex_lock(&sw.lock);
    if (!(w = watch_dir(dir)) || w->full || w->links || !watch_refresh(dir, w) || w->links)
        goto done;
    for (size_t i = 0; i < w->nk; i++) {
        dir_pointer *np;
        if (!w->k[i].ptr)
            continue;
        if (!(np = realloc(d->p, (d->n + 1) * sizeof *np)))
            goto done;
        d->p = np;
        memcpy(np[d->n].id, w->k[i].id, sizeof np[d->n].id);
        np[d->n].file  = strdup(w->k[i].name);
        np[d->n].store = strdup(w->k[i].ptr);
        if (!np[d->n].file || !np[d->n].store) {
            free(np[d->n].file);
            free(np[d->n].store);
            goto done;
        }
        d->n++;
    }
    ok = true;
done:
    if (!ok) { /* read instead */
        for (size_t i = 0; i < d->n; i++) {
            free(d->p[i].file);
            free(d->p[i].store);
        }
        free(d->p);
        d->p = NULL;
        d->n = 0;
    }
    pthread_mutex_unlock(&sw.lock);
    return ok;
}

/* The stores the names changed since the last sweep may concern. */
static int
sweep_changed(const char *dir, const char *except, const char *owner, watched_dir *w)
{
    dir_scan    d       = {0};
    int         removed = 0;
    char      **c;
    size_t      nc;
    known_name *kn;

    if (!watch_refresh(dir, w) ||
        (except && (!(kn = known_get(w, except, true)) || !known_set(&kn->owner, owner))))
        return sweep_full(dir, except, owner, w);
    c        = w->cand;
    nc       = w->ncand;
    w->cand  = NULL;
    w->ncand = 0;
    for (size_t i = 0; i < nc; i++)
        if (!except || strcmp(c[i], except))
            removed += sweep_one(dir, c[i], &d, w);
    for (size_t i = 0; i < nc; i++)
        free(c[i]);
    free(c);
    scan_free(&d);
    return removed;
}

/* h5zv_pointer_sweep, with the owner (a file name) of `except`, whose record was just written. */
static int
sweep_dir(const char *dir, const char *except, const char *owner)
{
    watched_dir *w;
    int          removed;
    pthread_mutex_lock(&sw.lock);
    w = watch_dir(dir);
    if (!w || w->full || w->links) /* a symbolic link's target may change unseen: read everything */
        removed = sweep_full(dir, except, owner, w);
    else
        removed = sweep_changed(dir, except, owner, w);
    pthread_mutex_unlock(&sw.lock);
    return removed;
}

int
h5zv_pointer_sweep(const char *dir, const char *except)
{
    return sweep_dir(dir, except, NULL);
}

/* ---- temporary names renamed before the process ends --------------------------------------------- */
/* The pointers this process wrote under NCO's temporary names (absolute names, and their stores): a
 * program that renames one over its final name before it exits (NCO does) leaves the replaced pointer's
 * store an orphan, which h5zv_pointer_sweep_renamed removes at the connector's term instead of at the
 * next create in the directory. */
typedef struct {
    char *name, *store; /* malloc'ed */
} tmp_pointer;
static struct {
    pthread_mutex_t lock;
    tmp_pointer    *v;
    size_t          n;
} tmp_made = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

static int url_sweep(const char *name, const char *store);

/* Remembers the pointer `name` (to `store`) when it has a temporary name. Best effort. */
static void
tmp_remember(const char *name, const char *store)
{
    char        *dir, *abs, *st;
    tmp_pointer *v = NULL;
    if (!h5zv_config_temp_base_len(base_of(name)) || !(dir = abs_dir(name)))
        return;
    if ((abs = malloc(strlen(dir) + strlen(base_of(name)) + 2)))
        sprintf(abs, "%s/%s", dir, base_of(name));
    free(dir);
    st = strdup(store);
    pthread_mutex_lock(&tmp_made.lock);
    if (abs && st && (v = realloc(tmp_made.v, (tmp_made.n + 1) * sizeof *v))) {
        tmp_made.v               = v;
        tmp_made.v[tmp_made.n++] = (tmp_pointer){abs, st};
    }
    pthread_mutex_unlock(&tmp_made.lock);
    if (!v) {
        free(abs);
        free(st);
    }
}

void
h5zv_pointer_sweep_renamed(void)
{
    struct stat st;
    pthread_mutex_lock(&tmp_made.lock);
    for (size_t i = 0; i < tmp_made.n; i++) {
        const tmp_pointer *t   = &tmp_made.v[i];
        char              *dir = dir_of(t->name);
        /* still there: not renamed (yet), nothing it replaced */
        if (dir && lstat(t->name, &st) < 0 && errno == ENOENT) {
            sweep_dir(dir, NULL, NULL);
            if (zarr_store_is_url(t->store))
                (void)url_sweep(t->name, t->store);
        }
        free(dir);
        free(t->name);
        free(t->store);
    }
    free(tmp_made.v);
    tmp_made.v = NULL;
    tmp_made.n = 0;
    pthread_mutex_unlock(&tmp_made.lock);
}

/* The pointer of `d` whose file name `c` is a store name for: <file name>.<8 hex digits>.zarr. */
static const dir_pointer *
url_candidate(const dir_scan *d, const char *c)
{
    size_t n = strlen(c);
    for (size_t i = 0; i < d->n; i++) {
        size_t k = strlen(d->p[i].file);
        if (n == k + 14 && !strncmp(c, d->p[i].file, k) && c[k] == '.' && !strcmp(c + k + 9, ".zarr"))
            return &d->p[i];
    }
    return NULL;
}

/* The sweep of stores on object storage, run where h5zv_pointer_sweep runs when the pointer `name`'s
 * store is the URL `store`: removes the stores beside it (under the same prefix, which the
 * configuration allowed) that are named for a pointer of `name`'s directory (<file name>.<8 hex>.zarr),
 * whose record names that directory and that file name with another id than the pointer there now has
 * (one renamed over it, a copy of another), and that no pointer of the directory names. One listing of
 * the prefix, and a read of the record of each such store. Best effort: pushes no error. Returns the
 * number of stores removed. */
static int
url_sweep(const char *name, const char *store)
{
    const char    *slash  = strrchr(store, '/');
    char          *prefix = NULL, *dir = NULL, *adir = NULL, *url = NULL, *rname = NULL, *rdir = NULL;
    char           rid[H5ZV_POINTER_ID_LEN + 1], why[400];
    zarr_store    *s       = NULL;
    zarr_name_list l       = {0};
    dir_scan       d       = {0};
    int            removed = 0;
    h5zv_errs     *es      = h5zv_err_save();

    if (!slash || !(prefix = strndup(store, (size_t)(slash - store))) || !(dir = dir_of(name)) ||
        !(adir = abs_dir(name)))
        goto done;
    scan_dir(dir, &d);
    if (zarr_store_open(prefix, ZARR_STORE_RDONLY, &s) != ZARR_OK ||
        zarr_store_list(s, "", zarr_name_list_collect_dir, &l) != 0)
        goto done;
    for (size_t i = 0; i < l.n; i++) {
        const dir_pointer *p = url_candidate(&d, l.names[i]);
        free(url);
        free(rname);
        free(rdir);
        url = rname = rdir = NULL;
        if (!p || !(url = malloc(strlen(prefix) + strlen(l.names[i]) + 2)))
            continue;
        sprintf(url, "%s/%s", prefix, l.names[i]);
        if (holders(&d, url, NULL, NULL, NULL) == 0 &&
            record_get(url, rid, &rname, &rdir, why, sizeof why) == 1 && rdir && !strcmp(rdir, adir) &&
            !strcmp(rname, p->file) && strcmp(rid, p->id) != 0 && remove_store(url))
            removed++;
    }
done:
    free(url);
    free(rname);
    free(rdir);
    zarr_name_list_clear(&l);
    zarr_store_close(s);
    scan_free(&d);
    free(prefix);
    free(dir);
    free(adir);
    h5zv_err_restore(es);
    return removed;
}

/* ---- writing a pointer ------------------------------------------------------------------------------ */
/* The HDF5 parts made last, by store name and user block size. HDF5 makes the same bytes for the same
 * empty file with one attribute each time (no time, address or process in them; checked byte for byte
 * across processes), and making them through H5Fcreate cost ~1.1 M instructions and ~20 system calls a
 * pointer: 5% of netCDF's tst_small, which creates its few names 40 times (tst_quantize: 110 creates of
 * 28 names). A part is made by HDF5 once, read back, and written as bytes the next times; the last
 * PART_MEMO parts are kept (round robin), none over PART_MAX bytes (large user blocks): 1 MiB at most. */
#define PART_MEMO 64
#define PART_MAX  16384
static struct {
    char          *rel;
    hsize_t        userblock;
    unsigned char *bytes;
    size_t         n;
} part_memo[PART_MEMO];
static unsigned        part_next;
static pthread_mutex_t part_lock = PTHREAD_MUTEX_INITIALIZER;

/* Writes the remembered part for (rel, userblock) to `tmp`: 1 done, 0 none remembered, -1 failed. */
static int
part_replay(const char *tmp, const char *rel, hsize_t userblock)
{
    int ret = 0, fd;
    pthread_mutex_lock(&part_lock);
    for (unsigned i = 0; i < PART_MEMO && !ret; i++) {
        if (!part_memo[i].rel || part_memo[i].userblock != userblock || strcmp(part_memo[i].rel, rel))
            continue;
        ret = -1;
        if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) >= 0) {
            if (write(fd, part_memo[i].bytes, part_memo[i].n) == (ssize_t)part_memo[i].n)
                ret = 1;
            if (close(fd) != 0)
                ret = -1;
        }
    }
    pthread_mutex_unlock(&part_lock);
    return ret;
}

/* The whole of the regular file `name` when it holds 1 to `max` bytes (*n of them, a new buffer: the
 * caller's), else NULL. */
static unsigned char *
file_bytes(const char *name, size_t max, size_t *n)
{
    struct stat    st;
    unsigned char *b  = NULL;
    int            fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= max &&
        (b = malloc((size_t)st.st_size)) && pread(fd, b, (size_t)st.st_size, 0) != (ssize_t)st.st_size) {
        free(b);
        b = NULL;
    }
    close(fd);
    *n = b ? (size_t)st.st_size : 0;
    return b;
}

/* Remembers the part HDF5 just wrote to `tmp` for (rel, userblock). Best effort. */
static void
part_keep(const char *tmp, const char *rel, hsize_t userblock)
{
    size_t         n;
    unsigned char *b = file_bytes(tmp, PART_MAX, &n);
    char          *r = b ? strdup(rel) : NULL;
    if (!r) {
        free(b);
        return;
    }
    pthread_mutex_lock(&part_lock);
    free(part_memo[part_next].rel);
    free(part_memo[part_next].bytes);
    part_memo[part_next].rel       = r;
    part_memo[part_next].userblock = userblock;
    part_memo[part_next].bytes     = b;
    part_memo[part_next].n         = n;
    part_next                      = (part_next + 1) % PART_MEMO;
    pthread_mutex_unlock(&part_lock);
}

/* True when the file `name` holds exactly the remembered part for (rel, userblock) followed by `block`:
 * the pointer that would be written is there already (created again by this process, its user block
 * untouched). Reads only. */
static bool
pointer_same(const char *name, const char *rel, hsize_t userblock, const char *block, size_t nblock)
{
    unsigned char *b    = NULL;
    size_t         n    = 0;
    bool           same = false;
    pthread_mutex_lock(&part_lock);
    for (unsigned i = 0; i < PART_MEMO; i++) {
        if (!part_memo[i].rel || part_memo[i].userblock != userblock || strcmp(part_memo[i].rel, rel))
            continue;
        b    = file_bytes(name, part_memo[i].n + nblock, &n);
        same = b && n == part_memo[i].n + nblock && !memcmp(b, part_memo[i].bytes, part_memo[i].n) &&
               !memcmp(b + part_memo[i].n, block, nblock);
        break;
    }
    pthread_mutex_unlock(&part_lock);
    free(b);
    return same;
}

/* The HDF5 part: an empty native file with a root attribute naming the store, after a user block of
 * `userblock` bytes (0: none; else a power of two >= 512, as H5Pset_userblock takes). */
static int
write_hdf5_part(const char *tmp, const char *rel, hsize_t userblock)
{
    hid_t fapl = -1, fcpl = -1, f = -1, s = -1, t = -1, a = -1;
    int   ret;
    if ((ret = part_replay(tmp, rel, userblock)) != 0)
        return ret > 0 ? 0 : -1;
    ret  = -1;
    fapl = h5zv_native_fapl(H5P_DEFAULT);
    if (fapl < 0 || (fcpl = H5Pcreate(H5P_FILE_CREATE)) < 0 ||
        (userblock && H5Pset_userblock(fcpl, userblock) < 0))
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
    h5zv_close(fcpl);
    h5zv_close(fapl);
    if (ret == 0)
        part_keep(tmp, rel, userblock);
    return ret;
}

void
h5zv_pointer_term(void)
{
    pthread_mutex_lock(&part_lock);
    for (unsigned i = 0; i < PART_MEMO; i++) {
        free(part_memo[i].rel);
        free(part_memo[i].bytes);
        memset(&part_memo[i], 0, sizeof part_memo[i]);
    }
    pthread_mutex_unlock(&part_lock);
    pthread_mutex_lock(&sw.lock);
    watches_drop();
    pthread_mutex_unlock(&sw.lock);
}

/* The user block of the pointer `name` (the bytes before HDF5's signature, which belong to the program):
 * *n bytes into *bytes (malloc'ed; NULL and 0 when it has none or is no version 2 pointer). -1 with
 * error pushed when it can't be read. */
static int
read_userblock(const char *name, unsigned char **bytes, hsize_t *n)
{
    char  why[300], *store = NULL;
    off_t at = 0;
    int   fd;
    *bytes = NULL;
    *n     = 0;
    if (read_quiet(name, &store, NULL, &at, why, sizeof why) != 2 || at <= 0) {
        free(store);
        return 0;
    }
    free(store);
    if (!(*bytes = malloc((size_t)at))) {
        h5zv_err_push(__func__, __LINE__, "out of memory");
        return -1;
    }
    if ((fd = open(name, O_RDONLY | O_CLOEXEC)) < 0 || pread(fd, *bytes, (size_t)at, 0) != (ssize_t)at) {
        h5zv_err_push(__func__, __LINE__, "can't read the user block of pointer file '%s': %s", name,
                      strerror(errno));
        if (fd >= 0)
            close(fd);
        free(*bytes);
        *bytes = NULL;
        return -1;
    }
    close(fd);
    *n = (hsize_t)at;
    return 0;
}

/* Writes the pointer `name` (version 2) for `store` with `id`, atomically, after a user block of
 * `userblock` bytes (0: none) holding `ub` (borrowed; NULL: zeros, as HDF5 leaves a new one). Its data
 * is fsync'ed before the rename only when `durable` (the setting: the store's own writes are atomic and
 * not synced otherwise, docs/CONFIG.md; a create of many small files paid one fsync each). A pointer
 * that holds these bytes already (pointer_same; not durable, zeros in the user block) is left as it
 * is. -1 with error
 * pushed. */
static int
write_pointer(const char *name, const char *store, const char *id, hsize_t userblock, const unsigned char *ub,
              bool durable)
{
    char        block[H5ZV_POINTER_BLOCK];
    const char *rel = store_key(store);
    char       *tmp = NULL;
    int         fd = -1, ret = -1, k;

    if (!(tmp = malloc(strlen(name) + 32)))
        H5ZV_GOTO_ERROR("out of memory");
    sprintf(tmp, "%s.h5zarr-tmp.%ld", name, (long)getpid());
    memset(block, ' ', sizeof block);
    k = snprintf(block, sizeof block,
                 H5ZV_POINTER_MAGIC_V2
                 "store=%s\n"
                 "id=%s\n"
                 "# This file stands for the zarr store '%s' beside it (h5zarr pointer file, see its\n"
                 "# docs/FORMAT.md): open it through the zarr VOL connector, or read the store directly.\n",
                 rel, id, rel);
    if (k < 0 || (size_t)k >= sizeof block)
        H5ZV_GOTO_ERROR("can't write pointer file '%s': store name '%s' too long", name, rel);
    block[k]                = ' ';
    block[sizeof block - 1] = '\n';
    /* created again with nothing of the program's in it: the same bytes are not written again (a new file
     * and a rename each time; netCDF's tests create one name tens of times). Durable: written and synced */
    if (!ub && !durable && pointer_same(name, rel, userblock, block, sizeof block)) {
        ret = 0;
        goto done;
    }
    if (write_hdf5_part(tmp, rel, userblock) < 0)
        H5ZV_GOTO_ERROR("can't write pointer file '%s' for store '%s'", name, store);
    /* the record after HDF5's end of file: HDF5 reads a file longer than its end-of-file address */
    if ((fd = open(tmp, O_WRONLY | O_CLOEXEC)) < 0 ||
        (ub && pwrite(fd, ub, (size_t)userblock, 0) != (ssize_t)userblock) || lseek(fd, 0, SEEK_END) < 0 ||
        write(fd, block, sizeof block) != (ssize_t)sizeof block || (durable && fsync(fd) != 0))
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

/* ---- creating --------------------------------------------------------------------------------------- */
/* The URL of a new store under `prefix` (ends in '/') for the pointer `name` with `id`:
 * <prefix><file name>.<8 hex digits of the id>.zarr, the file name's characters other than letters,
 * digits, '.', '-' and '_' as '_' (a readable name; the id keeps pointers of several directories
 * apart). Malloc'ed; NULL with error pushed. */
static char *
url_store_name(const char *prefix, const char *name, const char *id)
{
    const char *b = base_of(name);
    char       *s = malloc(strlen(prefix) + strlen(b) + 16), *c, why[200];
    if (!s) {
        h5zv_err_push(__func__, __LINE__, "out of memory");
        return NULL;
    }
    sprintf(s, "%s%s.%.8s.zarr", prefix, b, id);
    for (c = s + strlen(prefix); *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '-' || *c == '_'))
            *c = '_';
    if (h5zv_pointer_url_check(s, strlen(s), 0, why, sizeof why) < 0) { /* a name of dots */
        h5zv_err_push(__func__, __LINE__, "can't name a store under '%s' for pointer file '%s': %s", prefix,
                      name, why);
        free(s);
        return NULL;
    }
    return s;
}

/* A store name for a new pointer `name`: under the URL `prefix` when it is not "" (url_store_name);
 * else <name>.zarr when nothing is there, or when what is there is named by no other pointer of the
 * directory and `reuse` allows; else <name>.<id>.zarr (8, then all 32 hex digits of the id). Malloc'ed;
 * NULL with error pushed. */
static char *
new_store_name(const char *name, const char *id, dir_scan *d, const char *dir, bool reuse, const char *prefix)
{
    struct stat st;
    size_t      n = strlen(name);
    char       *s;
    if (prefix[0])
        return url_store_name(prefix, name, id);
    while (n > 1 && name[n - 1] == '/')
        n--;
    if (!(s = malloc(n + H5ZV_POINTER_ID_LEN + 8)))
        goto oom;
    snprintf(s, n + 6, "%.*s.zarr", (int)n, name);
    if (lstat(s, &st) != 0 && errno == ENOENT)
        return s;
    if (reuse && S_ISDIR(st.st_mode)) {
        scan_dir(dir, d);
        if (holders(d, base_of(s), NULL, base_of(name), NULL) == 0)
            return s;
    }
    for (int k = 8; k <= H5ZV_POINTER_ID_LEN; k += H5ZV_POINTER_ID_LEN - 8) {
        sprintf(s, "%.*s.%.*s.zarr", (int)n, name, k, id);
        if (lstat(s, &st) != 0 && errno == ENOENT)
            return s;
    }
    h5zv_err_push(__func__, __LINE__, "can't find a free store name for pointer file '%s' ('%s' exists)",
                  name, s);
    free(s);
    return NULL;
oom:
    h5zv_err_push(__func__, __LINE__, "out of memory");
    return NULL;
}

int
h5zv_pointer_plan(const char *name, hid_t fapl_id, char **store, char *id)
{
    char          why[400], oid[H5ZV_POINTER_ID_LEN + 1], *old = NULL, *dir = NULL, *owner = NULL;
    dir_scan      d   = {0};
    int           ret = -1, p, o = OWNS;
    h5zv_settings cfg;

    *store = NULL;
    new_id(id);
    if (h5zv_config_get(fapl_id, name, &cfg) < 0)
        goto done;
    if (!(dir = dir_of(name)))
        H5ZV_GOTO_ERROR("out of memory");
    if ((p = read_quiet(name, &old, oid, NULL, why, sizeof why)) < 0)
        H5ZV_GOTO_ERROR("pointer file '%s' %s", name, why);
    if (p > 0 && zarr_store_is_url(old) && url_allowed(name, fapl_id, old) <= 0)
        goto done;
    if (p > 0 && (o = ownership(name, old, oid, &owner, why, sizeof why)) < 0)
        H5ZV_GOTO_ERROR("the store '%s' of pointer file '%s' %s", old, name, why);
    if (p > 0 && o != FOREIGN) {
        /* the store of the pointer created again, unless a copy of the pointer reads it too */
        scan_dir(dir, &d);
        if (holders(&d, store_key(old), NULL, base_of(name), NULL) == 0) {
            *store = old;
            old    = NULL;
            /* the same id: the record stays true all along (a sweep elsewhere keeps the store) */
            if (oid[0]) {
                memcpy(id, oid, sizeof oid);
                ret = 0;
                goto done;
            }
        }
    }
    if (!*store && !(*store = new_store_name(name, id, &d, dir, !(p > 0 && o == FOREIGN), cfg.store)))
        goto done;
    /* an existing store taken over: no record until the new one (a sweep elsewhere never takes a store
     * without one). A new URL has a fresh id in it: nothing to take over. */
    if (!zarr_store_is_url(*store) && h5zv_file_is_dir(*store) &&
        record_put(*store, NULL, NULL, why, sizeof why) < 0)
        H5ZV_GOTO_ERROR("can't create the store '%s' for pointer file '%s': %s", *store, name, why);
    ret = 0;
done:
    if (ret < 0) {
        free(*store);
        *store = NULL;
    }
    scan_free(&d);
    free(old);
    free(owner);
    free(dir);
    return ret;
}

int
h5zv_pointer_commit(const char *name, const char *store, const char *id, hsize_t userblock, bool durable)
{
    char why[400], *dir = NULL;
    int  ret = -1;
    if (write_pointer(name, store, id, userblock, NULL, durable) < 0)
        goto done;
    if (record_put(store, id, name, why, sizeof why) < 0)
        H5ZV_GOTO_ERROR("can't record pointer file '%s' as the owner of the store '%s': %s", name, store,
                        why);
    if ((dir = dir_of(name)))
        sweep_dir(dir, store_key(store), base_of(name));
    if (zarr_store_is_url(store))
        url_sweep(name, store);
    tmp_remember(name, store);
    ret = 0;
done:
    free(dir);
    return ret;
}

/* ---- opening ---------------------------------------------------------------------------------------- */
typedef struct {
    char **keys;
    size_t n;
} key_list;

static int
collect_key(const char *key, uint64_t size, void *ud)
{
    key_list *l = ud;
    char    **k;
    (void)size;
    if (!strcmp(key, RECORD_KEY))
        return ZARR_OK;
    if (!(k = realloc(l->keys, (l->n + 1) * sizeof *k)) || !(k[l->n] = strdup(key))) {
        if (k)
            l->keys = k;
        return zarr_error(ZARR_ENOMEM, "out of memory");
    }
    l->keys = k;
    l->n++;
    return ZARR_OK;
}

/* Copies every value of the store `from` but its record into the new store `to`, through the store
 * interface. -1 with error pushed (the new store is then removed). */
static int
copy_store(const char *from, const char *to)
{
    zarr_store *a = NULL, *b = NULL;
    key_list    l   = {0};
    zarr_buf    buf = ZARR_BUF_INIT;
    int         ret = -1;
    if (zarr_store_open(from, ZARR_STORE_RDONLY, &a) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't open the store '%s' to copy it", from);
    if (zarr_store_open(to, ZARR_STORE_RDWR | ZARR_STORE_CREATE, &b) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't create the store '%s'", to);
    if (zarr_store_list_keys(a, "", collect_key, &l) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't list the store '%s' to copy it", from);
    for (size_t i = 0; i < l.n; i++) {
        if (zarr_store_get(a, l.keys[i], &buf) != ZARR_OK)
            H5ZV_GOTO_ZERR("can't copy '%s' of the store '%s'", l.keys[i], from);
        if (zarr_store_set(b, l.keys[i], buf.data ? (const void *)buf.data : "", buf.size) != ZARR_OK)
            H5ZV_GOTO_ZERR("can't copy '%s' to the store '%s'", l.keys[i], to);
        zarr_buf_free(&buf);
    }
    if (zarr_store_flush(b) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't copy to the store '%s'", to);
    ret = 0;
done:
    if (ret < 0 && b)
        zarr_store_remove(b);
    zarr_buf_free(&buf);
    for (size_t i = 0; i < l.n; i++)
        free(l.keys[i]);
    free(l.keys);
    zarr_store_close(a);
    zarr_store_close(b);
    return ret;
}

int
h5zv_pointer_open_store(const char *name, const struct stat *st, unsigned flags, hid_t fapl_id, char **store)
{
    char           id[H5ZV_POINTER_ID_LEN + 1], nid[H5ZV_POINTER_ID_LEN + 1], why[400], w2[300] = "";
    char          *dir = NULL, *owner = NULL, *copy = NULL;
    unsigned char *ub  = NULL;
    hsize_t        nub = 0;
    dir_scan       d   = {0};
    int            p, o, ret = -1;

    if ((p = h5zv_pointer_read_st(name, st, fapl_id, store, id)) <= 0)
        return p;
    /* a store on object storage: its open says what is missing (no request spent asking here) */
    if (!zarr_store_is_url(*store) && !h5zv_file_exists(*store))
        H5ZV_GOTO_ERROR(
            "can't open the zarr store '%s' that pointer file '%s' names: there is nothing by that "
            "name beside the pointer (a pointer copied or moved without its store? A pointer "
            "names a store in its own directory: copy or move the store along with it)",
            *store, name);
    if (!(flags & H5F_ACC_RDWR)) {
        ret = 1; /* reading through a copied pointer reads the store it names */
        goto done;
    }
    if (!(dir = dir_of(name)))
        H5ZV_GOTO_ERROR("out of memory");
    if ((o = ownership(name, *store, id, &owner, why, sizeof why)) < 0)
        H5ZV_GOTO_ERROR("can't open pointer file '%s' for writing: the store '%s' %s", name, *store, why);
    if (o == OWNS_RENAMED && record_put(*store, id, name, why, sizeof why) < 0)
        H5ZV_GOTO_ERROR("can't open pointer file '%s' for writing: the store '%s' %s", name, *store, why);
    if (o == FOREIGN) {
        /* copy on write: the pointer gets a store of its own before anything is written */
        new_id(nid);
        h5zv_settings cfg;
        if (h5zv_config_get(fapl_id, name, &cfg) < 0 ||
            !(copy = new_store_name(name, nid, &d, dir, false, cfg.store)))
            goto done;
        if (read_userblock(name, &ub, &nub) < 0)
            goto done;
        if (copy_store(*store, copy) < 0 || record_put(copy, nid, name, w2, sizeof w2) < 0 ||
            write_pointer(name, copy, nid, nub, ub, cfg.durable) < 0) {
            h5zv_err_push(__func__, __LINE__,
                          "can't open pointer file '%s' for writing: the store '%s' it names is not its own "
                          "(%s), and copying it to '%s' (copy on write) failed%s%s",
                          name, *store, why, copy, w2[0] ? ": " : "", w2);
            if (h5zv_file_is_dir(copy))
                remove_store(copy);
            goto done;
        }
        free(*store);
        *store = copy;
        copy   = NULL;
    }
    /* a renamed pointer may have replaced another one (write to a temporary name, then rename) */
    if (o != OWNS) {
        sweep_dir(dir, store_key(*store), base_of(name));
        if (zarr_store_is_url(*store))
            url_sweep(name, *store);
    }
    ret = 1;
done:
    if (ret < 0) {
        free(*store);
        *store = NULL;
    }
    scan_free(&d);
    free(ub);
    free(copy);
    free(owner);
    free(dir);
    return ret;
}
