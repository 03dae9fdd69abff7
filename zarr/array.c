/*
 * array.c: array handles. Opening reads the metadata documents directly (zarr.json, else .zarray +
 * .zattrs, or the known format's first; zarr_node_probe only when the node has none of its own);
 * creating writes it; the handle owns a store reference, the metadata, the engine options and a
 * lazily built "fill chunk" (one chunk of fill elements in memory form) that the engine uses to
 * initialise partial chunks, pad edge chunks, answer reads of missing chunks and detect chunks equal
 * to the fill value. Also: resize and the stored-bytes count, both run as pool jobs. An array whose
 * metadata says `hidden` keeps its document as ZARR_HIDDEN_DOC instead of .zarray / zarr.json (zarr
 * readers see no node there): opening finds it after the format's own document, and a metadata write
 * that changes the form removes the other document.
 */
#include "engine.h"
#include "meta_int.h" /* zarr__chain_set_fill */
#include "h5zarr/zarr_consolidated.h"
#include "job.h" /* zarr__cache_nonempty */
#include "zjson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
zarr_engine_defaults(zarr_engine_opts *o)
{
    if (!o)
        return;
    o->pool = NULL;
    /* Below 64 KiB of chunk data a job runs on the caller: waking a worker and handing the job back
     * (futex wake, context switch, cache misses) costs about what memcpy/encode of 64 KiB costs; above
     * it the second core pays for itself (see bench/README.md, "What the engine does", Inline
     * threshold). One-chunk jobs always run inline. */
    o->inline_bytes       = 64 * 1024;
    o->write_empty_chunks = false;
    /* 4 MiB of decoded chunks per array (HDF5's default chunk cache is 1 MiB per dataset). Only arrays
     * that see partial-chunk writes or reads ever allocate it. See bench/README.md for the figures. */
    o->cache_bytes = 4 * 1024 * 1024;
}

/* "<path>/<name>" or "<name>" for the root. */
static int
node_key(const char *path, const char *name, char *key, size_t n)
{
    size_t lp = strlen(path), ln = strlen(name), k = lp ? lp + 1 : 0;
    if (k + ln >= n)
        return zarr_error(ZARR_EOVERFLOW, "key for '%s' under '/%s' is too long", name, path);
    memcpy(key, path, lp);
    if (lp)
        key[lp] = '/';
    memcpy(key + k, name, ln + 1);
    return ZARR_OK;
}

/* Copies `path` without leading and trailing '/'. */
static char *
norm_path(const char *path)
{
    size_t n;
    char  *p;
    if (!path)
        path = "";
    while (*path == '/')
        path++;
    n = strlen(path);
    while (n && path[n - 1] == '/')
        n--;
    if (!(p = malloc(n + 1)))
        return NULL;
    memcpy(p, path, n);
    p[n] = '\0';
    return p;
}

static int
array_new(zarr_store *s, const char *path, zarr_array **out)
{
    zarr_array *a;
    int         rc;

    if (!(a = calloc(1, sizeof *a)) || !(a->path = norm_path(path))) {
        free(a);
        return zarr_error(ZARR_ENOMEM, "out of memory opening array '%s'", path ? path : "");
    }
    if (*a->path && (rc = zarr__store_check_key(a->path, false)) != ZARR_OK) {
        free(a->path);
        free(a);
        return zarr_error_wrap(rc, "invalid array path: ");
    }
    pthread_mutex_init(&a->lock, NULL);
    pthread_mutex_init(&a->cache.mu, NULL);
    pthread_cond_init(&a->cache.cv, NULL);
    zarr_engine_defaults(&a->opts);
    zarr_store_ref(s);
    a->store = s;
    *out     = a;
    return ZARR_OK;
}

void
zarr_array_close(zarr_array *a)
{
    if (!a)
        return;
    /* Write-back of the chunk cache; a failure cannot be reported here (its message stays in
     * zarr_errmsg): callers that care call zarr_array_flush first. */
    if (a->meta && zarr__cache_nonempty(a) && zarr__cache_flush(a) == ZARR_OK && !a->store->readonly)
        (void)zarr_store_sync(a->store); /* a durable store: what the write-back wrote */
    zarr__cache_drop(a);
    zarr_array_meta_free(a->meta);
    free(a->doc);
    zarr_store_close(a->store);
    zarr__array_fill_free(a);
    free(a->path);
    free(a->key_memo.prefix);
    pthread_mutex_destroy(&a->lock);
    pthread_cond_destroy(&a->cache.cv);
    pthread_mutex_destroy(&a->cache.mu);
    free(a);
}

int
zarr_array_flush(zarr_array *a)
{
    int rc;
    if (!a)
        return zarr_error(ZARR_EINVAL, "zarr_array_flush: array is NULL");
    if ((rc = zarr__cache_flush(a)) != ZARR_OK)
        return rc;
    /* a durable store: one sync pass for whatever this array's writes left unsynced (zarr.h) */
    if ((rc = zarr_store_sync(a->store)) != ZARR_OK)
        return zarr_error_wrap(rc, "can't sync the chunks of '/%s': ", a->path);
    return ZARR_OK;
}

void
zarr_array_discard_cache(zarr_array *a)
{
    if (a)
        zarr__cache_drop(a);
}

static int
check_meta(const zarr_array_meta *m, const char *path)
{
    if (!m || !m->dtype || !m->chain)
        return zarr_error(ZARR_EMETA, "array '/%s' has incomplete metadata", path);
    if (m->ndim < 0 || m->ndim > ZARR_MAX_DIMS)
        return zarr_error(ZARR_EMETA, "array '/%s' has rank %d (at most %d)", path, m->ndim, ZARR_MAX_DIMS);
    if (m->dtype->size == 0)
        return zarr_error(ZARR_EMETA, "array '/%s' has a zero-size data type", path);
    for (int d = 0; d < m->ndim; d++)
        if (m->chunks[d] == 0)
            return zarr_error(ZARR_EMETA, "array '/%s' has chunk size 0 in dimension %d", path, d);
    return ZARR_OK;
}

/* Why the node at `path` is not an array, after its zarr.json failed to parse as one (`rc`, message
 * set): a group is ZARR_ENOTFOUND "(it is a group)", as zarr_array_open has always said; anything
 * else keeps `rc` and its message. */
static int
not_an_array(zarr_store *s, const char *path, int rc)
{
    char           saved[1024];
    zarr_node_type t;

    zarr_error_save(saved, sizeof saved);
    if (zarr_node_probe(s, path, &t, NULL) == ZARR_OK && t == ZARR_NODE_GROUP)
        return zarr_error(ZARR_ENOTFOUND, "no array at '/%s' (it is a group)", path);
    zarr_error_restore(rc, saved);
    return rc;
}

/* The metadata of the array at `path`: the documents of `format` (0: zarr.json first), then those of
 * the other format, then, when the node has none of its own, what zarr_node_probe and
 * zarr_array_meta_read find (a group, consolidated metadata, nothing). Own documents are read once
 * and parsed once; absent ones cost no message. */
static int
load_meta(zarr_store *s, const char *path, int format, zarr_array_meta **out, int64_t *mtime)
{
    char           key[4096];
    zarr_buf       doc = ZARR_BUF_INIT;
    zarr_node_type type;
    int            rc = ZARR_OK;

    for (int pass = 0; pass < 3; pass++) {
        /* the format's document, the hidden one (a caller that knows the format: second; else last),
         * the other format's */
        bool hid = pass == (format ? 1 : 2), v3 = (format == 2) == (pass == (format ? 2 : 1));
        if (!hid && !v3) { /* .zarray with its .zattrs (the one v2 reader, node.c) */
            zarr_group_meta *none = NULL;
            rc = zarr__node_read_v2(s, path, ZARR_NODE_ARRAY, false, &type, out, &none, mtime);
            if (rc == ZARR_ENOTFOUND)
                continue;
            goto done;
        }
        ZARR_TRY(node_key(path, hid ? ZARR_HIDDEN_DOC : "zarr.json", key, sizeof key));
        rc = zarr__store_get_quiet_timed(s, key, &doc, mtime);
        if (rc == ZARR_ENOTFOUND)
            continue;
        if (rc != ZARR_OK)
            goto done;
        if (hid)
            rc = zarr__array_meta_hidden(s, path, (const char *)doc.data, doc.size, out);
        else if ((rc = zarr_array_meta_parse_v3((const char *)doc.data, doc.size, key, out)) == ZARR_EMETA)
            rc = not_an_array(s, path, rc);
        goto done;
    }
    /* no document of its own: a v2 group, or a node only an ancestor's consolidated metadata holds
     * (zarr_consolidated.h) */
    ZARR_TRY(zarr_node_probe(s, path, &type, NULL));
    if (type != ZARR_NODE_ARRAY)
        ZARR_FAIL(ZARR_ENOTFOUND, "no array at '/%s'%s", path,
                  type == ZARR_NODE_GROUP ? " (it is a group)" : "");
    rc = zarr_array_meta_read(s, path, out);
done:
    zarr_buf_free(&doc);
    return rc;
}

int
zarr__array_from_meta(zarr_store *s, const char *path, zarr_array_meta *meta, zarr_array **out)
{
    zarr_array *a  = NULL;
    int         rc = ZARR_OK;

    *out = NULL;
    if ((rc = array_new(s, path, &a)) != ZARR_OK) {
        zarr_array_meta_free(meta);
        return rc;
    }
    a->meta          = meta;
    a->stored_hidden = meta->hidden;
    ZARR_TRY(check_meta(a->meta, a->path));
    *out = a;
    a    = NULL;
done:
    zarr_array_close(a);
    return rc;
}

int
zarr__hidden_format(const char *text, size_t n, const char *where, int *format)
{
    struct json_object *root = NULL, *f;
    int                 rc;

    *format = 0;
    if ((rc = zarr__json_parse(text, n, where, &root)) != ZARR_OK)
        return rc;
    if (json_object_object_get_ex(root, "zarr_format", &f) && json_object_is_type(f, json_type_int) &&
        (json_object_get_int(f) == 2 || json_object_get_int(f) == 3))
        *format = json_object_get_int(f);
    else
        rc = zarr_error(ZARR_EMETA, "'%s': 'zarr_format' must be 2 or 3", where);
    json_object_put(root);
    return rc;
}

int
zarr__array_meta_hidden(zarr_store *s, const char *path, const char *text, size_t n, zarr_array_meta **out)
{
    char     key[4096], key2[4096];
    zarr_buf attrs = ZARR_BUF_INIT;
    int      rc, fmt;

    *out = NULL;
    ZARR_TRY(node_key(path, ZARR_HIDDEN_DOC, key, sizeof key));
    ZARR_TRY(zarr__hidden_format(text, n, key, &fmt));
    if (fmt == 3)
        ZARR_TRY(zarr_array_meta_parse_v3(text, n, key, out));
    else {
        ZARR_TRY(node_key(path, ".zattrs", key2, sizeof key2));
        rc = zarr__store_get_quiet(s, key2, &attrs);
        if (rc != ZARR_OK && rc != ZARR_ENOTFOUND)
            goto done;
        ZARR_TRY(zarr_array_meta_parse_v2(text, n, rc == ZARR_OK ? (const char *)attrs.data : NULL,
                                          rc == ZARR_OK ? attrs.size : 0, key, out));
    }
    (*out)->hidden = true;
done:
    zarr_buf_free(&attrs);
    return rc;
}

int
zarr_array_open(zarr_store *s, const char *path, zarr_array **out)
{
    return zarr_array_open_format(s, path, 0, out);
}

static int
open_format(zarr_store *s, const char *path, int format, zarr_array **out, int64_t *mtime)
{
    zarr_array *a  = NULL;
    int         rc = ZARR_OK;

    if (!s || !out)
        return zarr_error(ZARR_EINVAL, "zarr_array_open: store and out must not be NULL");
    *out = NULL;
    if (format != 0 && format != 2 && format != 3)
        return zarr_error(ZARR_EINVAL, "can't open array '/%s': zarr format %d", path ? path : "", format);
    ZARR_TRY(array_new(s, path, &a));
    ZARR_TRY(load_meta(s, a->path, format, &a->meta, mtime));
    a->stored_hidden = a->meta->hidden;
    ZARR_TRY(check_meta(a->meta, a->path));
    *out = a;
    a    = NULL;
done:
    zarr_array_close(a);
    return rc;
}

int
zarr_array_open_format(zarr_store *s, const char *path, int format, zarr_array **out)
{
    return open_format(s, path, format, out, NULL);
}

int
zarr_array_open_format_timed(zarr_store *s, const char *path, int format, zarr_array **out, int64_t *mtime)
{
    if (!mtime)
        return zarr_error(ZARR_EINVAL, "zarr_array_open_format_timed: mtime is NULL");
    *mtime = 0;
    return open_format(s, path, format, out, mtime);
}

static int array_write_meta(zarr_array *a, bool attrs_only, bool fresh);

/* The kept zarr.json text goes: the metadata may change (or was just changed). */
static void
doc_forget(zarr_array *a)
{
    free(a->doc);
    a->doc  = NULL;
    a->ndoc = 0;
}

int
zarr_array_write_meta(zarr_array *a)
{
    return array_write_meta(a, false, false);
}

int
zarr_array_write_attrs(zarr_array *a)
{
    return array_write_meta(a, true, false);
}

int
zarr_array_write_new(zarr_array *a)
{
    if (a)
        a->hold = false; /* its documents are out: its chunks may be seen from now on */
    return array_write_meta(a, false, true);
}

void
zarr_array_hold_writes(zarr_array *a, bool on)
{
    if (a)
        a->hold = on && !a->store->durable;
}

size_t
zarr_array_cached_bytes(zarr_array *a)
{
    size_t n;
    if (!a)
        return 0;
    pthread_mutex_lock(&a->cache.mu);
    n = a->cache.bytes;
    pthread_mutex_unlock(&a->cache.mu);
    return n;
}

bool
zarr_array_holds_all(zarr_array *a)
{
    return a && a->hold && zarr_array_cached_bytes(a) <= __atomic_load_n(&a->held, __ATOMIC_RELAXED);
}

/* `fresh`: nothing is at the array's path (no stale .zattrs to remove). The document goes under
 * ZARR_HIDDEN_DOC when the metadata says `hidden`; when the store holds the other form, it is removed
 * after the new one is written (a failure in between leaves both: the visible one is read first). */
static int
array_write_meta(zarr_array *a, bool attrs_only, bool fresh)
{
    char *text = NULL, *zattrs = NULL;
    char  key[4096];
    int   rc = ZARR_OK;
    bool  v3, moved;

    if (!a)
        return zarr_error(ZARR_EINVAL, "array is NULL");
    v3    = a->meta->zarr_format == 3;
    moved = !fresh && a->stored_hidden != a->meta->hidden;
    if (v3) {
        doc_forget(a);
        ZARR_TRY(zarr_array_meta_to_v3(a->meta, &text));
        ZARR_TRY(node_key(a->path, a->meta->hidden ? ZARR_HIDDEN_DOC : "zarr.json", key, sizeof key));
        ZARR_TRY(zarr_store_set(a->store, key, text, strlen(text)));
        a->ndoc = strlen(text); /* kept for zarr_array_doc_print (a consolidated document) */
        a->doc  = text;
        text    = NULL;
    }
    else {
        ZARR_TRY(zarr_array_meta_to_v2(a->meta, &text, &zattrs));
        /* the reserved object is in the .zarray (zarr.h) */
        if (!attrs_only || a->meta->reserved || moved) {
            ZARR_TRY(node_key(a->path, a->meta->hidden ? ZARR_HIDDEN_DOC : ".zarray", key, sizeof key));
            ZARR_TRY(zarr_store_set(a->store, key, text, strlen(text)));
        }
        ZARR_TRY(node_key(a->path, ".zattrs", key, sizeof key));
        if (zattrs)
            ZARR_TRY(zarr_store_set(a->store, key, zattrs, strlen(zattrs)));
        else if (!fresh)
            ZARR_TRY(zarr_store_del(a->store, key)); /* replacing: no stale attributes */
    }
    if (moved) { /* the document of the other form goes: the node has one */
        ZARR_TRY(node_key(a->path,
                          a->stored_hidden ? ZARR_HIDDEN_DOC
                          : v3             ? "zarr.json"
                                           : ".zarray",
                          key, sizeof key));
        rc = zarr_store_del(a->store, key);
        if (rc != ZARR_OK && rc != ZARR_ENOTFOUND)
            goto done;
        rc = ZARR_OK;
    }
    a->stored_hidden = a->meta->hidden;
    ZARR_TRY(zarr_store_sync(a->store)); /* durable: the documents (and what came before) on disk */
done:
    free(text);
    free(zattrs);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't write the metadata of array '/%s': ", a->path);
    return rc;
}

int
zarr_array_create(zarr_store *s, const char *path, zarr_array_meta *meta, bool overwrite, zarr_array **out)
{
    return zarr_array_create_as(s, path, meta, overwrite ? ZARR_CREATE_OVERWRITE : ZARR_CREATE_EXCL, out);
}

int
zarr_array_create_as(zarr_store *s, const char *path, zarr_array_meta *meta, zarr_create_mode mode,
                     zarr_array **out)
{
    zarr_array    *a = NULL;
    zarr_node_type type;
    int            rc = ZARR_OK;

    if (out)
        *out = NULL;
    if (!s || !out || !meta) {
        zarr_array_meta_free(meta);
        return zarr_error(ZARR_EINVAL, "zarr_array_create: store, meta and out must not be NULL");
    }
    if ((rc = array_new(s, path, &a)) != ZARR_OK) {
        zarr_array_meta_free(meta);
        return rc;
    }
    a->meta = meta;
    ZARR_TRY(check_meta(meta, a->path));
    if (meta->zarr_format != 2 && meta->zarr_format != 3)
        ZARR_FAIL(ZARR_EINVAL, "can't create array '/%s': zarr_format %d", a->path, meta->zarr_format);
    if (mode == ZARR_CREATE_OVERWRITE)
        ZARR_TRY(zarr_store_del_prefix(s, a->path)); /* the old node and all its chunks */
    else if (mode == ZARR_CREATE_EXCL) {
        ZARR_TRY(zarr_node_probe(s, a->path, &type, NULL));
        if (type != ZARR_NODE_NONE)
            ZARR_FAIL(ZARR_EEXIST, "can't create array '/%s': a %s exists there", a->path,
                      type == ZARR_NODE_GROUP ? "group" : "array");
    }
    else if (mode != ZARR_CREATE_NEW && mode != ZARR_CREATE_UNWRITTEN)
        ZARR_FAIL(ZARR_EINVAL, "can't create array '/%s': create mode %d", a->path, (int)mode);
    if (mode != ZARR_CREATE_UNWRITTEN) /* else the caller writes them (zarr_array_write_new) */
        ZARR_TRY(array_write_meta(a, false, mode == ZARR_CREATE_NEW));
    *out = a;
    a    = NULL;
done:
    zarr_array_close(a);
    return rc;
}

const zarr_array_meta *
zarr_array_meta_get(const zarr_array *a)
{
    return a ? a->meta : NULL;
}

zarr_array_meta *
zarr_array_meta_mut(zarr_array *a)
{
    if (!a)
        return NULL;
    doc_forget(a); /* the caller may change what the kept text says */
    return a->meta;
}

int
zarr_array_doc_print(zarr_array *a, int level, zarr_buf *out)
{
    const char *p, *end, *nl;
    size_t      pad = 2 * (size_t)(level > 0 ? level : 0), lines = 0;
    uint8_t    *q;
    int         rc;

    if (!a || !out || level < 0)
        return zarr_error(ZARR_EINVAL, "zarr_array_doc_print: array and buffer needed");
    if (!a->doc || a->meta->zarr_format != 3)
        return zarr_array_meta_write_v3(a->meta, level, out);
    /* the printer indents two spaces a level after each line break, and a JSON text has no other line
     * break (one inside a string is escaped): the text at `level` is the kept one with `pad` more spaces
     * after each; sized first, then copied in one pass */
    end = a->doc + a->ndoc;
    for (p = a->doc; (nl = memchr(p, '\n', (size_t)(end - p))); p = nl + 1)
        lines++;
    if ((rc = zarr_buf_reserve(out, out->size + a->ndoc + lines * pad)) != ZARR_OK)
        return rc;
    q = out->data + out->size;
    for (p = a->doc; (nl = memchr(p, '\n', (size_t)(end - p))); p = nl + 1) {
        memcpy(q, p, (size_t)(nl - p) + 1);
        q += (nl - p) + 1;
        memset(q, ' ', pad);
        q += pad;
    }
    memcpy(q, p, (size_t)(end - p));
    out->size = (size_t)(q - out->data) + (size_t)(end - p);
    return ZARR_OK;
}

int
zarr_array_set_fill(zarr_array *a, const void *elem, bool defined)
{
    zarr_array_meta *m;
    void            *nf = NULL;
    int              rc = ZARR_OK;
    if (!a || !(m = a->meta) || !m->dtype)
        return zarr_error(ZARR_EINVAL, "zarr_array_set_fill: no array");
    doc_forget(a);
    /* cached chunks were made (and are elided) against the old value: stored first, then dropped */
    if ((rc = zarr_array_flush(a)) != ZARR_OK)
        return rc;
    zarr__cache_drop(a);
    if (!(nf = calloc(1, m->dtype->size ? m->dtype->size : 1)))
        return zarr_error(ZARR_ENOMEM, "out of memory for the fill value of '/%s'", a->path);
    if (elem && (rc = zarr_dtype_copy_elems(m->dtype, nf, elem, 1, false)) != ZARR_OK) {
        free(nf);
        return rc;
    }
    if ((rc = zarr__chain_set_fill(m->chain, nf)) != ZARR_OK) {
        zarr_dtype_clear_elems(m->dtype, nf, 1);
        free(nf);
        return rc;
    }
    pthread_mutex_lock(&a->lock);
    if ((rc = zarr__array_fill_retire(a)) != ZARR_OK) { /* made from the old value */
        pthread_mutex_unlock(&a->lock);
        zarr_dtype_clear_elems(m->dtype, nf, 1);
        free(nf);
        return rc;
    }
    if (m->fill)
        zarr_dtype_clear_elems(m->dtype, m->fill, 1);
    free(m->fill);
    m->fill         = nf;
    m->fill_defined = defined || m->zarr_format == 3;
    pthread_mutex_unlock(&a->lock);
    return ZARR_OK;
}

const char *
zarr_array_path(const zarr_array *a)
{
    return a ? a->path : NULL;
}

int
zarr_array_set_path(zarr_array *a, const char *path)
{
    char *p;
    int   rc;
    if (!a)
        return zarr_error(ZARR_EINVAL, "zarr_array_set_path: array is NULL");
    if (!(p = norm_path(path)))
        return zarr_error(ZARR_ENOMEM, "out of memory re-pathing array '/%s'", a->path);
    if (*p && (rc = zarr__store_check_key(p, false)) != ZARR_OK) {
        free(p);
        return zarr_error_wrap(rc, "can't re-path array '/%s': ", a->path);
    }
    zarr__cache_drop(a); /* its chunks and shard indexes are keyed by the old path */
    free(a->path);
    a->path = p;
    return ZARR_OK;
}

void
zarr_array_set_opts(zarr_array *a, const zarr_engine_opts *o)
{
    if (!a)
        return;
    if (o)
        a->opts = *o;
    else
        zarr_engine_defaults(&a->opts);
}

/* ---- resize ---- */

typedef struct del_job {
    zarr_array *a;
    int         nd;
    uint64_t    lo[ZARR_MAX_DIMS], n[ZARR_MAX_DIMS]; /* a box of chunk coordinates */
} del_job;

static int
del_task(void *arg, size_t i, int worker)
{
    del_job *j = arg;
    uint64_t coords[ZARR_MAX_DIMS];
    char     key[1024];
    int      rc;
    (void)worker;
    for (int d = j->nd - 1; d >= 0; d--) {
        coords[d] = j->lo[d] + i % j->n[d];
        i /= j->n[d];
    }
    if ((rc = zarr_chunk_key(j->a->meta, j->a->path, coords, key, sizeof key)) != ZARR_OK ||
        (rc = zarr_store_del(j->a->store, key)) != ZARR_OK)
        return zarr_error_wrap(rc, "can't delete a chunk of '/%s' while shrinking it: ", j->a->path);
    return ZARR_OK;
}

static uint64_t
nchunks(uint64_t extent, uint64_t chunk)
{
    return extent / chunk + (extent % chunk != 0);
}

static int array_resize(zarr_array *a, const uint64_t *shape, bool write_meta);

int
zarr_array_resize(zarr_array *a, const uint64_t *shape)
{
    return array_resize(a, shape, true);
}

int
zarr_array_resize_unwritten(zarr_array *a, const uint64_t *shape)
{
    return array_resize(a, shape, false);
}

/* True when `shape` is at least `old` in every dimension: no chunk changes. */
static bool
grows_only(const uint64_t *old, const uint64_t *shape, int nd)
{
    for (int d = 0; d < nd; d++)
        if (shape[d] < old[d])
            return false;
    return true;
}

static int
array_resize(zarr_array *a, const uint64_t *shape, bool write_meta)
{
    zarr_array_meta *m;
    uint64_t         old[ZARR_MAX_DIMS];
    int              rc = ZARR_OK, nd;
    zarr_pool       *pool;

    if (!a || (!shape && a->meta->ndim > 0))
        return zarr_error(ZARR_EINVAL, "zarr_array_resize: array and shape must not be NULL");
    m  = a->meta;
    nd = m->ndim;
    doc_forget(a);
    if (a->store->readonly)
        return zarr_error(ZARR_EREADONLY, "can't resize array '/%s': the store is read-only", a->path);
    pool = a->opts.pool ? a->opts.pool : zarr_pool_default();
    memcpy(old, m->shape, sizeof old);
    if (grows_only(old, shape, nd)) /* no chunk changes: cached ones stay valid, and stay cached */
        goto set_shape;
    /* The steps below work on the store: write cached chunks back and forget them first. */
    ZARR_TRY(zarr__cache_flush(a));
    zarr__cache_drop(a);

    /* 1. In edge chunks that stay, reset the part beyond the new extent to fill values. */
    for (int d = 0; d < nd; d++) {
        zarr_region r;
        uint64_t    end;
        if (shape[d] >= old[d] || shape[d] % m->chunks[d] == 0)
            continue;
        end = nchunks(shape[d], m->chunks[d]) * m->chunks[d];
        memset(&r, 0, sizeof r);
        for (int k = 0; k < nd; k++) {
            r.start[k]  = 0;
            r.stride[k] = 1;
            r.block[k]  = 1;
            /* other dims: every chunk that stays (up to the end of the new grid, within the old shape) */
            uint64_t keep = nchunks(shape[k], m->chunks[k]) * m->chunks[k];
            r.count[k]    = old[k] < keep ? old[k] : keep;
        }
        r.start[d] = shape[d];
        r.count[d] = (old[d] < end ? old[d] : end) - shape[d];
        ZARR_TRY(zarr__engine_run(a, &r, NULL, ZARR__ENGINE_WRITE_FILL));
    }
    /* 2. Delete chunks wholly outside the new shape: for each shrunk dim d, the box of chunks with
     * coordinate >= the new count in d, inside the kept range in dims before d (no double visits). */
    for (int d = 0; d < nd; d++) {
        del_job  j;
        uint64_t total = 1;
        uint64_t nnew = nchunks(shape[d], m->chunks[d]), nold = nchunks(old[d], m->chunks[d]);
        if (nnew >= nold)
            continue;
        memset(&j, 0, sizeof j);
        j.a  = a;
        j.nd = nd;
        for (int k = 0; k < nd; k++) {
            uint64_t ko = nchunks(old[k], m->chunks[k]), kn = nchunks(shape[k], m->chunks[k]);
            j.lo[k] = 0;
            j.n[k]  = k < d ? (ko < kn ? ko : kn) : ko;
        }
        j.lo[d] = nnew;
        j.n[d]  = nold - nnew;
        for (int k = 0; k < nd; k++)
            if (!zarr__mul_ok(total, j.n[k], &total) || total > SIZE_MAX)
                ZARR_FAIL(ZARR_EOVERFLOW, "too many chunks to delete while shrinking '/%s'", a->path);
        ZARR_TRY(zarr_pool_run(pool, del_task, &j, (size_t)total, total < 16));
    }
set_shape: /* 3. The new shape. */
    memcpy(m->shape, shape, (size_t)nd * sizeof *shape);
    if (write_meta && (rc = zarr_array_write_meta(a)) != ZARR_OK)
        memcpy(m->shape, old, sizeof old);
done:
    return rc;
}

/* ---- stored bytes ---- */

typedef struct size_job {
    zarr_array *a;
    int         nd;
    uint64_t    n[ZARR_MAX_DIMS];
    uint64_t    total; /* atomic */
} size_job;

static int
size_task(void *arg, size_t i, int worker)
{
    size_job *j = arg;
    uint64_t  coords[ZARR_MAX_DIMS], size;
    char      key[1024];
    int       rc;
    (void)worker;
    for (int d = j->nd - 1; d >= 0; d--) {
        coords[d] = i % j->n[d];
        i /= j->n[d];
    }
    if ((rc = zarr_chunk_key(j->a->meta, j->a->path, coords, key, sizeof key)) != ZARR_OK)
        return rc;
    rc = zarr__store_size(j->a->store, key, &size);
    if (rc == ZARR_ENOTFOUND)
        return ZARR_OK;
    if (rc != ZARR_OK)
        return rc;
    __atomic_add_fetch(&j->total, size, __ATOMIC_RELAXED);
    return ZARR_OK;
}

/* Counting by listing: one zarr_store_list_keys of the array's prefix gives every key below it with
 * its size (a directory walk, one pass over a memory store's map, a zip central directory, an object
 * store's listing pages). A listed key counts only if it is exactly the key zarr_chunk_key gives for
 * in-grid coordinates, as the probe would find it. */
typedef struct list_ctx {
    zarr_array *a;
    size_t      plen; /* strlen("<path>/"), 0 for the root */
    uint64_t    n[ZARR_MAX_DIMS];
    uint64_t    total;
} list_ctx;

static int
listed_key_cb(const char *key, uint64_t size, void *ud)
{
    list_ctx   *l    = ud;
    const char *path = l->a->path;
    if (l->plen && (strncmp(key, path, l->plen - 1) != 0 || key[l->plen - 1] != '/'))
        return 0;
    uint64_t c[ZARR_MAX_DIMS];
    if (zarr__chunk_key_coords(l->a->meta, key + l->plen, l->n, c))
        l->total += size;
    return 0;
}

/* Up to this many chunk positions, one size lookup each (no chunk is read: the store's size op) is at
 * least as cheap as listing the array's keys; above it (large or sparse grids) the keys are listed. */
#define PROBE_MAX 64

int
zarr_array_stored_bytes(zarr_array *a, uint64_t *nbytes)
{
    size_job   j;
    list_ctx   l;
    uint64_t   total = 1;
    zarr_pool *pool;
    int        rc;
    bool       overflow = false;

    if (!a || !nbytes)
        return zarr_error(ZARR_EINVAL, "zarr_array_stored_bytes: array and nbytes must not be NULL");
    if ((rc = zarr__cache_flush(a)) != ZARR_OK)
        return zarr_error_wrap(rc, "can't count the stored bytes of '/%s': ", a->path);
    memset(&j, 0, sizeof j);
    memset(&l, 0, sizeof l);
    j.a  = a;
    j.nd = a->meta->ndim;
    l.a  = a;
    for (int d = 0; d < j.nd; d++) {
        j.n[d] = l.n[d] = nchunks(a->meta->shape[d], a->meta->chunks[d]);
        if (!zarr__mul_ok(total, j.n[d], &total) || total > SIZE_MAX)
            overflow = true;
    }
    pool = a->opts.pool ? a->opts.pool : zarr_pool_default();
    /* a store with latency lists the array's keys with their sizes (a request per 1000 keys) rather
     * than asking each chunk's size (a request each, one after another) */
    if (!overflow && total <= PROBE_MAX && (total < 2 || !a->store->prefers_batches)) {
        rc = zarr_pool_run(pool, size_task, &j, (size_t)total, true);
        if (rc != ZARR_OK)
            return zarr_error_wrap(rc, "can't count the stored bytes of '/%s': ", a->path);
        *nbytes = j.total;
        return ZARR_OK;
    }
    l.plen = *a->path ? strlen(a->path) + 1 : 0;
    rc     = zarr_store_list_keys(a->store, a->path, listed_key_cb, &l);
    if (rc != ZARR_OK)
        return zarr_error_wrap(rc, "can't count the stored bytes of '/%s': ", a->path);
    *nbytes = l.total;
    return ZARR_OK;
}
