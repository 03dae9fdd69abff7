/*
 * pointer.c: pointer files (see pointer.h): reading and validating one (either version), writing one
 * atomically, the owner record a store keeps (the key `.h5zarr_pointer`, read and written through the
 * store interface), copying a store on the first write through a copied pointer, and removing the
 * stores whose pointer another file replaced.
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
#include <sys/random.h>
#include <sys/stat.h>
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
read_quiet(const char *name, char **store, char *id, off_t *userblock, char *why, size_t nwhy)
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
    if (!name || zarr_store_is_url(name) || stat(name, &st) != 0 || !S_ISREG(st.st_mode) ||
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
h5zv_pointer_read(const char *name, hid_t fapl_id, char **store, char *id)
{
    char why[300];
    int  p = read_quiet(name, store, id, NULL, why, sizeof why);
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

/* Every pointer file in `dir` (read once, when first needed). */
static void
scan_dir(const char *dir, dir_scan *d)
{
    DIR           *dh;
    struct dirent *e;
    char          *path, *st, why[300], id[H5ZV_POINTER_ID_LEN + 1];
    if (d->scanned)
        return;
    d->scanned = true;
    if (!(dh = opendir(*dir ? dir : ".")))
        return;
    while ((e = readdir(dh))) {
        dir_pointer *np;
        if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN && e->d_type != DT_LNK)
            continue;
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

int
h5zv_pointer_sweep(const char *dir, const char *except)
{
    DIR           *dh;
    struct dirent *e;
    dir_scan       d       = {0};
    int            removed = 0;

    if (!(dh = opendir(*dir ? dir : ".")))
        return 0;
    while ((e = readdir(dh))) {
        char        rid[H5ZV_POINTER_ID_LEN + 1], hid[H5ZV_POINTER_ID_LEN + 1], why[400];
        char       *path = NULL, *rname = NULL, *hpath = NULL, *hstore = NULL;
        const char *who = NULL;
        size_t      k;
        int         h;
        struct stat st;
        if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
            continue;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || (except && !strcmp(e->d_name, except)))
            continue;
        if (!(path = cat2(dir, e->d_name)) || lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) ||
            record_get(path, rid, &rname, NULL, why, sizeof why) != 1 || !(hpath = cat2(dir, rname)))
            goto next;
        /* its owner still holds it (a version 1 pointer naming it is taken as its owner: it has no id) */
        if ((h = read_quiet(hpath, &hstore, hid, NULL, why, sizeof why)) > 0 &&
            (h == 1 || !strcmp(hid, rid)) && !strcmp(store_key(hstore), e->d_name))
            goto next;
        /* other pointers of the directory hold it: one (its owner, renamed) owns it now; several (the
         * owner renamed after a copy was made) leave the record as it is */
        scan_dir(dir, &d);
        if ((k = holders(&d, e->d_name, rid, NULL, &who)) > 0 || holders(&d, e->d_name, "", NULL, NULL) > 0) {
            if (k == 1)
                record_put(path, rid, who, why, sizeof why);
            goto next;
        }
        /* the owner's name is now another pointer (one renamed over it, a copy of another): an orphan.
         * The owner's name gone (deleted, moved away), or another kind of file (a native file written
         * over it; the pointer itself opened for writing by HDF5 without the connector, which cuts the
         * record off): the store is left as it is. */
        if (h > 0 && remove_store(path))
            removed++;
    next:
        free(path);
        free(rname);
        free(hpath);
        free(hstore);
    }
    closedir(dh);
    scan_free(&d);
    return removed;
}

typedef struct {
    char **names;
    size_t n;
} name_list;

static int
collect_dir(const char *name, bool is_dir, void *ud)
{
    name_list *l = ud;
    char     **k;
    if (!is_dir)
        return 0;
    if (!(k = realloc(l->names, (l->n + 1) * sizeof *k)) || !(k[l->n] = strdup(name))) {
        if (k)
            l->names = k;
        return 1;
    }
    l->names = k;
    l->n++;
    return 0;
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
    const char *slash  = strrchr(store, '/');
    char       *prefix = NULL, *dir = NULL, *adir = NULL, *url = NULL, *rname = NULL, *rdir = NULL;
    char        rid[H5ZV_POINTER_ID_LEN + 1], why[400];
    zarr_store *s       = NULL;
    name_list   l       = {0};
    dir_scan    d       = {0};
    int         removed = 0;
    h5zv_errs  *es      = h5zv_err_save();

    if (!slash || !(prefix = strndup(store, (size_t)(slash - store))) || !(dir = dir_of(name)) ||
        !(adir = abs_dir(name)))
        goto done;
    scan_dir(dir, &d);
    if (zarr_store_open(prefix, ZARR_STORE_RDONLY, &s) != ZARR_OK ||
        zarr_store_list(s, "", collect_dir, &l) != 0)
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
    for (size_t i = 0; i < l.n; i++)
        free(l.names[i]);
    free(l.names);
    zarr_store_close(s);
    scan_free(&d);
    free(prefix);
    free(dir);
    free(adir);
    h5zv_err_restore(es);
    return removed;
}

/* ---- writing a pointer ------------------------------------------------------------------------------ */
/* The HDF5 part: an empty native file with a root attribute naming the store, after a user block of
 * `userblock` bytes (0: none; else a power of two >= 512, as H5Pset_userblock takes). */
static int
write_hdf5_part(const char *tmp, const char *rel, hsize_t userblock)
{
    hid_t fapl = h5zv_native_fapl(H5P_DEFAULT), fcpl = -1, f = -1, s = -1, t = -1, a = -1;
    int   ret = -1;
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
    return ret;
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
 * not synced otherwise, docs/CONFIG.md; a create of many small files paid one fsync each). -1 with error
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
        h5zv_pointer_sweep(dir, store_key(store));
    if (zarr_store_is_url(store))
        url_sweep(name, store);
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
h5zv_pointer_open_store(const char *name, unsigned flags, hid_t fapl_id, char **store)
{
    char           id[H5ZV_POINTER_ID_LEN + 1], nid[H5ZV_POINTER_ID_LEN + 1], why[400], w2[300] = "";
    char          *dir = NULL, *owner = NULL, *copy = NULL;
    unsigned char *ub  = NULL;
    hsize_t        nub = 0;
    dir_scan       d   = {0};
    int            p, o, ret = -1;

    if ((p = h5zv_pointer_read(name, fapl_id, store, id)) <= 0)
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
        h5zv_pointer_sweep(dir, store_key(*store));
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
