/*
 * node.c: groups and arrays as nodes in a store.
 *
 * Finds what is at a path (v3 zarr.json first, then v2 .zarray/.zgroup, then the document of a hidden
 * array, ZARR_HIDDEN_DOC, then, only when the node has no document of its own, the consolidated
 * metadata of its ancestors: see zarr_consolidated.h), reads
 * and writes group metadata documents, lists a group's child nodes and deletes whole subtrees. Store
 * access goes through the zarr_store_* functions only.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, clock_gettime */

#include "internal.h"
#include "meta_int.h"
#include "store_impl.h"
#include "zjson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "<path>/<name>" or "<name>" for the root; malloc'ed. */
static char *
join(const char *path, const char *name)
{
    size_t lp = path ? strlen(path) : 0, ln = strlen(name);
    char  *s = malloc(lp + ln + 2);
    if (!s)
        return NULL;
    if (lp) {
        memcpy(s, path, lp);
        s[lp++] = '/';
    }
    memcpy(s + lp, name, ln + 1);
    return s;
}

/* Gets `path`/`name` into `out`; a missing document is ZARR_ENOTFOUND without a message. `mtime` (may be
 * NULL) gets the document's time when the store learns it with the read (zarr__store_get_quiet_timed),
 * else 0. */
static int
get_doc(zarr_store *s, const char *path, const char *name, zarr_buf *out, char **key, int64_t *mtime)
{
    char *k = join(path, name);
    int   rc;
    if (!k)
        return zarr_error(ZARR_ENOMEM, "out of memory");
    rc = zarr__store_get_quiet_timed(s, k, out, mtime);
    if (key && rc == ZARR_OK) {
        free(*key);
        *key = k;
    }
    else
        free(k);
    return rc;
}

/* The node type a zarr.json document names ("array" or "group"); ZARR_EMETA naming `where` else. */
static int
v3_node_type(struct json_object *root, const char *where, zarr_node_type *type)
{
    struct json_object *nt = NULL;
    const char         *t;

    if (!json_object_object_get_ex(root, "node_type", &nt) || !json_object_is_type(nt, json_type_string))
        return zarr_error(ZARR_EMETA, "'%s': missing required key 'node_type'", where);
    t = json_object_get_string(nt);
    if (strcmp(t, "array") == 0)
        *type = ZARR_NODE_ARRAY;
    else if (strcmp(t, "group") == 0)
        *type = ZARR_NODE_GROUP;
    else
        return zarr_error(ZARR_EMETA, "'%s': 'node_type' must be \"array\" or \"group\", not '%s'", where, t);
    return ZARR_OK;
}

/* ---- the node type of a large zarr.json without parsing it ----
 * A probe needs only the top-level "node_type"; a root zarr.json with the consolidated metadata of
 * 10,000 nodes is megabytes that json-c parses at a cost of many instructions a byte (and frees again;
 * see bench/README.md, "Figures behind comments in the sources"). For
 * large documents the top level is scanned instead: keys are read, values skipped (strings with their
 * escapes, nested objects and lists by depth). Anything unexpected (a key or the value with an escape,
 * a syntax error at the top level) gives up, and the caller parses as before; what is deeper than the
 * top level is not validated here (the load that follows a probe parses the whole document). */
#define SCAN_MIN_BYTES (64 << 10)

static size_t
scan_ws(const char *p, size_t i, size_t n)
{
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
        i++;
    return i;
}

/* Past the string starting at p[i] == '"'; n + 1 when it does not end. `esc` tells whether it holds a
 * backslash. */
static size_t
scan_string(const char *p, size_t i, size_t n, bool *esc)
{
    *esc = false;
    for (i++; i < n; i++) {
        if (p[i] == '\\') {
            *esc = true;
            i++;
        }
        else if (p[i] == '"')
            return i + 1;
    }
    return n + 1;
}

/* Past the value starting at p[i]; n + 1 on a malformed one. */
static size_t
scan_value(const char *p, size_t i, size_t n)
{
    bool   esc;
    size_t depth = 0;
    if (i >= n)
        return n + 1;
    if (p[i] == '"')
        return scan_string(p, i, n, &esc);
    if (p[i] != '{' && p[i] != '[') { /* a number, true, false, null */
        while (i < n && p[i] != ',' && p[i] != '}' && p[i] != ']' && p[i] != ' ' && p[i] != '\n' &&
               p[i] != '\t' && p[i] != '\r')
            i++;
        return i;
    }
    while (i < n) {
        char c = p[i];
        if (c == '"') {
            i = scan_string(p, i, n, &esc);
            continue;
        }
        if (c == '{' || c == '[')
            depth++;
        else if ((c == '}' || c == ']') && --depth == 0)
            return i + 1;
        i++;
    }
    return n + 1;
}

/* 1 and *type set when the top level of `p` names a node_type ("array"/"group"; the last one counts,
 * as json-c keeps the last of duplicate keys), 0 when the caller must parse. */
static int
scan_node_type(const char *p, size_t n, zarr_node_type *type)
{
    size_t         i     = scan_ws(p, 0, n);
    zarr_node_type found = ZARR_NODE_NONE;
    bool           esc;

    if (i >= n || p[i] != '{')
        return 0;
    i = scan_ws(p, i + 1, n);
    while (i < n && p[i] != '}') {
        size_t k0 = i, k1, v0, v1;
        if (p[i] != '"' || (k1 = scan_string(p, i, n, &esc)) > n || esc)
            return 0;
        i = scan_ws(p, k1, n);
        if (i >= n || p[i] != ':')
            return 0;
        v0 = i = scan_ws(p, i + 1, n);
        if ((v1 = scan_value(p, i, n)) > n)
            return 0;
        if (k1 - k0 == 11 && memcmp(p + k0, "\"node_type\"", 11) == 0) {
            if (p[v0] != '"' || (scan_string(p, v0, n, &esc), esc))
                return 0;
            if (v1 - v0 == 7 && memcmp(p + v0, "\"array\"", 7) == 0)
                found = ZARR_NODE_ARRAY;
            else if (v1 - v0 == 7 && memcmp(p + v0, "\"group\"", 7) == 0)
                found = ZARR_NODE_GROUP;
            else
                return 0; /* the parser's message says what is wrong */
        }
        i = scan_ws(p, v1, n);
        if (i < n && p[i] == ',')
            i = scan_ws(p, i + 1, n);
        else if (i >= n || p[i] != '}')
            return 0;
    }
    if (i >= n || found == ZARR_NODE_NONE)
        return 0;
    *type = found;
    return 1;
}

/* .zarray, then .zgroup at `path`: ZARR_OK with *type (and *format 2) set, ZARR_ENOTFOUND (no message)
 * when neither is there, or the store's error. */
static int
probe_v2(zarr_store *s, const char *path, zarr_node_type *type, int *format)
{
    for (int i = 0; i < 2; i++) {
        char *k = join(path, i == 0 ? ".zarray" : ".zgroup");
        int   rc;
        if (!k)
            return zarr_error(ZARR_ENOMEM, "out of memory");
        rc = zarr_store_exists(s, k);
        free(k);
        if (rc == ZARR_OK) {
            *type = i == 0 ? ZARR_NODE_ARRAY : ZARR_NODE_GROUP;
            if (format)
                *format = 2;
        }
        if (rc != ZARR_ENOTFOUND)
            return rc;
    }
    return ZARR_ENOTFOUND;
}

int
zarr_node_probe(zarr_store *s, const char *path, zarr_node_type *type, int *format)
{
    return zarr_node_probe_as(s, path, 3, type, format);
}

static int probe_impl(zarr_store *s, const char *path, int prefer, unsigned skip, zarr_node_type *type,
                      int *format, zarr_buf *hidden);

int
zarr_node_probe_as(zarr_store *s, const char *path, int prefer, zarr_node_type *type, int *format)
{
    return probe_impl(s, path, prefer, 0, type, format, NULL);
}

/* The hidden array document at `path` (ZARR_HIDDEN_DOC): ZARR_OK with *format and the text in `b`,
 * ZARR_ENOTFOUND (no message) when there is none. */
static int
probe_hidden(zarr_store *s, const char *path, zarr_buf *b, char **key, int *format)
{
    int rc = get_doc(s, path, ZARR_HIDDEN_DOC, b, key, NULL);
    if (rc == ZARR_OK)
        rc = zarr__hidden_format((const char *)b->data, b->size, *key, format);
    return rc;
}

/* `skip`: what the caller has just found missing at `path` (1: zarr.json, 2: the v2 documents).
 * `hidden` (may be NULL): receives the text of a hidden array's document when that is what is there. */
static int
probe_impl(zarr_store *s, const char *path, int prefer, unsigned skip, zarr_node_type *type, int *format,
           zarr_buf *hidden)
{
    static const char *const docs[] = {"zarr.json", ".zarray", ".zgroup"};
    zarr_buf                 b      = ZARR_BUF_INIT;
    struct json_object      *root = NULL, *doc = NULL, *nt = NULL;
    char                    *key = NULL;
    int                      rc, which;

    *type = ZARR_NODE_NONE;
    if (format)
        *format = 0;
    if (prefer == 2) { /* v2 documents first: a v2 store's nodes answer without a failed zarr.json open */
        rc = probe_v2(s, path, type, format);
        if (rc != ZARR_ENOTFOUND)
            goto done;
    }
    rc = (skip & 1) ? ZARR_ENOTFOUND : get_doc(s, path, "zarr.json", &b, &key, NULL);
    if (rc == ZARR_OK) {
        if (b.size < SCAN_MIN_BYTES || !scan_node_type((const char *)b.data, b.size, type)) {
            ZARR_TRY(zarr__json_parse((const char *)b.data, b.size, key, &root));
            ZARR_TRY(v3_node_type(root, key, type));
        }
        if (format)
            *format = 3;
        goto done;
    }
    if (rc != ZARR_ENOTFOUND)
        goto done;
    if (prefer != 2 && !(skip & 2) && (rc = probe_v2(s, path, type, format)) != ZARR_ENOTFOUND)
        goto done;
    {
        int fmt = 0;
        rc      = probe_hidden(s, path, &b, &key, &fmt);
        if (rc == ZARR_OK) {
            *type = ZARR_NODE_ARRAY;
            if (format)
                *format = fmt;
            if (hidden) {
                zarr_buf t = *hidden;
                *hidden    = b;
                b          = t;
            }
            goto done;
        }
        if (rc != ZARR_ENOTFOUND)
            goto done;
    }
    /* no document of its own: an ancestor's consolidated metadata may describe it (one read per
     * ancestor for all three names; absence sets no message) */
    rc = zarr__consolidated_find(s, path ? path : "", docs, 3, true, &which, &doc);
    if (rc == ZARR_ENOTFOUND) {
        rc = ZARR_OK;
        goto done;
    }
    if (rc != ZARR_OK)
        goto done;
    if (which == 0) {
        const char *t;
        if (!json_object_object_get_ex(doc, "node_type", &nt) || !json_object_is_type(nt, json_type_string))
            ZARR_FAIL(ZARR_EMETA, "consolidated metadata of '/%s': missing 'node_type'", path ? path : "");
        t     = json_object_get_string(nt);
        *type = strcmp(t, "array") == 0   ? ZARR_NODE_ARRAY
                : strcmp(t, "group") == 0 ? ZARR_NODE_GROUP
                                          : ZARR_NODE_NONE;
    }
    else
        *type = which == 1 ? ZARR_NODE_ARRAY : ZARR_NODE_GROUP;
    if (format && *type != ZARR_NODE_NONE)
        *format = which == 0 ? 3 : 2;
done:
    if (rc != ZARR_OK && rc != ZARR_ENOMEM)
        zarr_error_wrap(rc, "can't probe node '/%s': ", path ? path : "");
    json_object_put(root);
    json_object_put(doc);
    zarr_buf_free(&b);
    free(key);
    return rc;
}

/* zarr__json_parse_wide's job on the default pool. */
static void
run_on_pool(zarr_task_fn fn, void *job, size_t n)
{
    (void)zarr_pool_run(zarr_pool_default(), fn, job, n, false);
}

int
zarr__json_parse_doc(const char *text, size_t n, const char *where, int format, struct json_object **out)
{
    static const char *const v3[] = {"consolidated_metadata", "metadata"}, *const v2[] = {"metadata"};
    if (n < ZARR_JSON_WIDE_BYTES || zarr_pool_nthreads(zarr_pool_default()) < 2)
        return zarr__json_parse(text, n, where, out);
    return zarr__json_parse_wide(text, n, where, format == 2 ? v2 : v3, format == 2 ? 1 : 2, 64, run_on_pool,
                                 out);
}

/* The v3 node at `path` from its zarr.json `b` (read from `key`). */
static int
load_v3(zarr_store *s, const char *path, const char *key, const zarr_buf *b, zarr_node_type *type,
        zarr_group_meta **g, zarr_array **a)
{
    struct json_object *root = NULL;
    zarr_array_meta    *m    = NULL;
    int                 rc   = ZARR_OK;
    ZARR_TRY(zarr__json_parse_doc((const char *)b->data, b->size, key, 3, &root));
    ZARR_TRY(v3_node_type(root, key, type));
    if (*type == ZARR_NODE_GROUP)
        ZARR_TRY(zarr__group_meta_from_v3(root, key, g));
    else {
        ZARR_TRY(zarr__array_meta_from_v3(root, key, &m));
        ZARR_TRY(zarr__array_from_meta(s, path, m, a));
    }
done:
    json_object_put(root);
    return rc;
}

int
zarr_node_load_v3_doc(zarr_store *s, const char *path, const void *doc, size_t n, zarr_node_type *type,
                      zarr_group_meta **g, zarr_array **a)
{
    zarr_buf b   = {(uint8_t *)doc, n, n}; /* borrowed: never freed or grown here */
    char    *key = NULL;
    int      rc  = ZARR_OK;

    *type = ZARR_NODE_NONE;
    *g    = NULL;
    *a    = NULL;
    if (!s || !doc)
        return zarr_error(ZARR_EINVAL, "zarr_node_load_v3_doc: store and document must not be NULL");
    if (!(key = join(path ? path : "", "zarr.json")))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    rc = load_v3(s, path ? path : "", key, &b, type, g, a);
    if (rc != ZARR_OK) {
        zarr_group_meta_free(*g);
        zarr_array_close(*a);
        *g    = NULL;
        *a    = NULL;
        *type = ZARR_NODE_NONE;
        if (rc != ZARR_ENOMEM)
            zarr_error_wrap(rc, "can't load node '/%s': ", path ? path : "");
    }
    free(key);
    return rc;
}

static int
node_load(zarr_store *s, const char *path, int prefer, zarr_node_type *type, int *format, zarr_group_meta **g,
          zarr_array **a, int64_t *mtime)
{
    zarr_buf            b    = ZARR_BUF_INIT;
    struct json_object *root = NULL;
    char               *key  = NULL;
    int                 rc = ZARR_OK, fmt = 0;

    *type = ZARR_NODE_NONE;
    *g    = NULL;
    *a    = NULL;
    if (format)
        *format = 0;
    if (prefer == 2) { /* v2 documents first (exists checks), then as below */
        rc = probe_v2(s, path, type, &fmt);
        if (rc == ZARR_OK)
            goto open_v2;
        if (rc != ZARR_ENOTFOUND)
            goto done;
    }
    {
        /* v3: one read and one parse give both the node type and the node */
        rc = get_doc(s, path, "zarr.json", &b, &key, mtime);
        if (rc == ZARR_OK) {
            ZARR_TRY(load_v3(s, path, key, &b, type, g, a));
            if (format)
                *format = 3;
            goto done;
        }
        if (rc != ZARR_ENOTFOUND)
            goto done;
        rc = ZARR_OK;
    }
    /* no zarr.json: v2 documents (unless looked for already), then consolidated metadata; then read that
     * format's documents */
    b.size = 0;
    ZARR_TRY(probe_impl(s, path, 3, prefer == 2 ? 3 : 1, type, &fmt, &b));
    if (*type == ZARR_NODE_ARRAY && b.size) { /* a hidden array: its document was just read */
        zarr_array_meta *m = NULL;
        ZARR_TRY(zarr__array_meta_hidden(s, path, (const char *)b.data, b.size, &m));
        ZARR_TRY(zarr__array_from_meta(s, path, m, a));
        if (format)
            *format = fmt;
        goto done;
    }
open_v2:
    if (*type == ZARR_NODE_GROUP)
        ZARR_TRY(zarr_group_read_format(s, path, fmt, g));
    else if (*type == ZARR_NODE_ARRAY)
        ZARR_TRY(zarr_array_open_format(s, path, fmt, a));
    if (format)
        *format = fmt;
done:
    if (rc != ZARR_OK) {
        zarr_group_meta_free(*g);
        zarr_array_close(*a);
        *g    = NULL;
        *a    = NULL;
        *type = ZARR_NODE_NONE;
        if (rc != ZARR_ENOMEM)
            zarr_error_wrap(rc, "can't load node '/%s': ", path ? path : "");
    }
    json_object_put(root);
    zarr_buf_free(&b);
    free(key);
    return rc;
}

int
zarr_node_load(zarr_store *s, const char *path, int prefer, zarr_node_type *type, int *format,
               zarr_group_meta **g, zarr_array **a)
{
    return node_load(s, path, prefer, type, format, g, a, NULL);
}

int
zarr_node_load_timed(zarr_store *s, const char *path, int prefer, zarr_node_type *type, int *format,
                     zarr_group_meta **g, zarr_array **a, int64_t *mtime)
{
    if (!mtime)
        return zarr_error(ZARR_EINVAL, "zarr_node_load_timed: mtime is NULL");
    *mtime = 0;
    return node_load(s, path, prefer, type, format, g, a, mtime);
}

/* ---- many v3 nodes at once (zarr_node_load_many) ------------------------------------------------------
 * A listing's children read and parsed as one pool job (one dispatch for the batch). Each task is one
 * item: it reads the item's zarr.json (unless the batch was read already) and parses it with load_v3,
 * as zarr_node_load_timed does; its failure becomes the item's result and message, and the task
 * returns ZARR_OK so that the pool hands out the others. */
typedef struct {
    zarr_store     *s;
    zarr_node_item *items;
    zarr_buf       *docs; /* [n]: the documents read by one get_many, or NULL: each task reads its own */
    char          **keys; /* [n]: "<path>/zarr.json" (v3) */
    int             format;
    zarr_node_type  v2_first; /* v2: the kind whose document is tried first (many_v2) */
} many_job;

int
zarr__node_read_v2(zarr_store *s, const char *path, zarr_node_type first, bool other, zarr_node_type *type,
                   zarr_array_meta **m, zarr_group_meta **g, int64_t *mtime)
{
    zarr_buf b = ZARR_BUF_INIT, at = ZARR_BUF_INIT;
    char    *key = NULL;
    int      rc  = ZARR_ENOTFOUND, arc;
    bool     arr = false;

    *type = ZARR_NODE_NONE;
    *m    = NULL;
    *g    = NULL;
    if (mtime)
        *mtime = 0;
    for (int i = 0; i < (other ? 2 : 1) && rc == ZARR_ENOTFOUND; i++) {
        arr = (first == ZARR_NODE_GROUP) == (i == 1);
        rc  = get_doc(s, path, arr ? ".zarray" : ".zgroup", &b, &key, mtime);
    }
    if (rc != ZARR_OK)
        goto done;
    arc = get_doc(s, path, ".zattrs", &at, NULL, NULL);
    if (arc != ZARR_OK && arc != ZARR_ENOTFOUND)
        ZARR_FAIL(arc, "%s", zarr_errmsg());
    if (arr)
        rc = zarr_array_meta_parse_v2((const char *)b.data, b.size,
                                      arc == ZARR_OK ? (const char *)at.data : NULL,
                                      arc == ZARR_OK ? at.size : 0, key, m);
    else
        rc = zarr_group_meta_parse_v2((const char *)b.data, b.size,
                                      arc == ZARR_OK ? (const char *)at.data : NULL,
                                      arc == ZARR_OK ? at.size : 0, key, g);
    if (rc == ZARR_OK)
        *type = arr ? ZARR_NODE_ARRAY : ZARR_NODE_GROUP;
done:
    if (rc != ZARR_OK && mtime)
        *mtime = 0;
    zarr_buf_free(&b);
    zarr_buf_free(&at);
    free(key);
    return rc;
}

/* A v2 node as zarr_node_probe_as (preferring v2) finds it and the VOL then opens it: an array (as
 * zarr_array_open_format(format 2) opens it, `mtime` the .zarray's) or a group (as
 * zarr_group_read_format(format 2) reads it, `mtime` the .zgroup's), or ZARR_ENOTFOUND without a message (the
 * probe's other places: zarr.json, a hidden array, consolidated metadata). The document of the kind the
 * batch's last found node had is tried first (`*first`: siblings are mostly of one kind, so a batch of groups
 * costs one failed .zarray lookup, not one each); which was first never changes what is read. */
static int
many_v2(zarr_store *s, zarr_node_item *it, zarr_node_type *first)
{
    zarr_node_type   t, f = __atomic_load_n(first, __ATOMIC_RELAXED);
    zarr_array_meta *m  = NULL;
    int              rc = zarr__node_read_v2(s, it->path, f, true, &t, &m, &it->g, &it->mtime);
    if (rc != ZARR_OK)
        return rc;
    if (t != f)
        __atomic_store_n(first, t, __ATOMIC_RELAXED);
    it->type = t;
    if (t == ZARR_NODE_ARRAY)
        rc = zarr__array_from_meta(s, it->path, m, &it->a); /* takes m */
    return rc;
}

static int
many_task(void *job, size_t i, int worker)
{
    many_job       *j  = job;
    zarr_node_item *it = &j->items[i];
    zarr_buf        b  = ZARR_BUF_INIT;
    const zarr_buf *d  = j->docs ? &j->docs[i] : &b;
    int             rc = it->result; /* ZARR_OK, or what the batch's get_many said */

    (void)worker;
    if (j->format == 2)
        rc = many_v2(j->s, it, &j->v2_first);
    else if (!j->docs && rc == ZARR_OK)
        rc = zarr__store_get_quiet_timed(j->s, j->keys[i], &b, &it->mtime);
    if (j->format == 2) {
        if (rc != ZARR_OK && rc != ZARR_ENOTFOUND && rc != ZARR_ENOMEM)
            zarr_error_wrap(rc, "can't load node '/%s': ", it->path);
    }
    else if (rc == ZARR_OK) {
        rc = load_v3(j->s, it->path, j->keys[i], d, &it->type, &it->g, &it->a);
        if (rc != ZARR_OK && rc != ZARR_ENOMEM)
            zarr_error_wrap(rc, "can't load node '/%s': ", it->path);
    }
    if (rc != ZARR_OK) {
        zarr_group_meta_free(it->g);
        zarr_array_close(it->a);
        it->g    = NULL;
        it->a    = NULL;
        it->type = ZARR_NODE_NONE;
        if (rc != ZARR_ENOTFOUND)
            it->msg = strdup(zarr_errmsg()); /* NULL when out of memory: the result still says it */
    }
    it->result = rc;
    zarr_error_clear();
    zarr_buf_free(&b);
    return ZARR_OK;
}

/* One get_many for the whole batch (stores that prefer batches keep its requests in flight together);
 * each item's result and time from it. ZARR_ENOMEM when the requests can't be made. */
static int
many_read(zarr_store *s, size_t n, zarr_node_item *items, char **keys, zarr_buf *docs)
{
    zarr_store_req *reqs = calloc(n, sizeof *reqs);
    if (!reqs)
        return zarr_error(ZARR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        reqs[i] = (zarr_store_req){keys[i], 0, UINT64_MAX, false, &docs[i], UINT64_MAX, ZARR_OK, 0};
    (void)zarr_store_get_many(s, n, reqs); /* per item results */
    for (size_t i = 0; i < n; i++) {
        items[i].result = reqs[i].result;
        items[i].mtime  = reqs[i].result == ZARR_OK ? reqs[i].mtime : 0;
        if (reqs[i].result != ZARR_OK && reqs[i].result != ZARR_ENOTFOUND)
            items[i].msg = strdup(zarr_errmsg()); /* the store's message for the batch's first failure */
    }
    zarr_error_clear();
    free(reqs);
    return ZARR_OK;
}

int
zarr_node_load_many(zarr_store *s, zarr_pool *pool, int format, size_t n, zarr_node_item *items)
{
    many_job j  = {s, items, NULL, NULL, format, ZARR_NODE_ARRAY};
    int      rc = ZARR_OK;

    if (!s || (n && !items))
        return zarr_error(ZARR_EINVAL, "zarr_node_load_many: store and items must not be NULL");
    if (format != 2 && format != 3)
        return zarr_error(ZARR_EINVAL, "zarr_node_load_many: zarr format %d (2 or 3)", format);
    for (size_t i = 0; i < n; i++)
        if (!items[i].path)
            return zarr_error(ZARR_EINVAL, "zarr_node_load_many: item %zu has no path", i);
    if (!n)
        return ZARR_OK;
    if (!(j.keys = calloc(n, sizeof *j.keys)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (!(j.keys[i] = join(items[i].path, "zarr.json")))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        items[i] = (zarr_node_item){.path = items[i].path, .result = ZARR_OK, .type = ZARR_NODE_NONE};
    if (s->prefers_batches && format == 3) {
        if (!(j.docs = calloc(n, sizeof *j.docs)))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        ZARR_TRY(many_read(s, n, items, j.keys, j.docs));
    }
    (void)zarr_pool_run(pool ? pool : zarr_pool_default(), many_task, &j, n, false); /* tasks never fail */
done:
    for (size_t i = 0; i < n; i++) {
        free(j.keys[i]);
        if (j.docs)
            zarr_buf_free(&j.docs[i]);
    }
    free(j.keys);
    free(j.docs);
    return rc;
}

void
zarr_node_items_free(size_t n, zarr_node_item *items)
{
    for (size_t i = 0; items && i < n; i++) {
        zarr_group_meta_free(items[i].g);
        zarr_array_close(items[i].a);
        free(items[i].msg);
        items[i].g   = NULL;
        items[i].a   = NULL;
        items[i].msg = NULL;
    }
}

int
zarr_group_read(zarr_store *s, const char *path, zarr_group_meta **out)
{
    return zarr_group_read_format(s, path, 0, out);
}

int
zarr_group_read_format(zarr_store *s, const char *path, int format, zarr_group_meta **out)
{
    static const char *const docs[] = {"zarr.json", ".zgroup"};
    zarr_buf                 b = ZARR_BUF_INIT, a = ZARR_BUF_INIT;
    struct json_object      *doc = NULL;
    char                    *key = NULL, *text = NULL;
    int                      rc = ZARR_OK, which;

    if (!out)
        return zarr_error(ZARR_EINVAL, "zarr_group_read: out must not be NULL");
    *out = NULL;
    if (format != 0 && format != 2 && format != 3)
        return zarr_error(ZARR_EINVAL, "can't read group '/%s': zarr format %d", path ? path : "", format);
    /* the known format's documents first; the other format's when they are absent */
    for (int pass = 0; pass < 2; pass++) {
        bool v3 = (format == 2) == (pass == 1);
        if (v3) {
            rc = get_doc(s, path, "zarr.json", &b, &key, NULL);
            if (rc == ZARR_OK) {
                rc = zarr_group_meta_parse_v3((const char *)b.data, b.size, key, out);
                goto done;
            }
        }
        else {
            zarr_array_meta *none;
            zarr_node_type   t;
            rc = zarr__node_read_v2(s, path, ZARR_NODE_GROUP, false, &t, &none, out, NULL);
            if (rc == ZARR_OK)
                goto done;
        }
        if (rc != ZARR_ENOTFOUND)
            goto done;
    }
    {
        char *k = join(path, ".zarray");
        if (!k)
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        rc = zarr_store_exists(s, k);
        free(k);
        if (rc == ZARR_OK)
            ZARR_FAIL(ZARR_EINVAL, "'/%s' is an array, not a group", path ? path : "");
    }
    /* no document of its own: an ancestor's consolidated metadata may hold it */
    rc = zarr__consolidated_find(s, path ? path : "", docs, 2, false, &which, &doc);
    if (rc == ZARR_ENOTFOUND)
        ZARR_FAIL(ZARR_ENOTFOUND, "no group at '/%s'", path ? path : "");
    if (rc != ZARR_OK)
        goto done;
    if (!(text = zarr__json_dump(doc)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    if (which == 0) {
        rc = zarr_group_meta_parse_v3(text, strlen(text), "consolidated zarr.json", out);
        goto done;
    }
    rc = zarr__consolidated_doc(s, path ? path : "", ".zattrs", &a);
    if (rc != ZARR_OK && rc != ZARR_ENOTFOUND)
        goto done;
    rc = zarr_group_meta_parse_v2(text, strlen(text), rc == ZARR_OK ? (const char *)a.data : NULL, a.size,
                                  "consolidated .zgroup", out);
done:
    json_object_put(doc);
    zarr_buf_free(&b);
    zarr_buf_free(&a);
    free(key);
    free(text);
    return rc;
}

static int group_write(zarr_store *s, const char *path, const zarr_group_meta *m, bool attrs_only,
                       bool fresh);

int
zarr_group_write(zarr_store *s, const char *path, const zarr_group_meta *m)
{
    return group_write(s, path, m, false, false);
}

int
zarr_group_write_new(zarr_store *s, const char *path, const zarr_group_meta *m)
{
    return group_write(s, path, m, false, true);
}

int
zarr_group_write_attrs(zarr_store *s, const char *path, const zarr_group_meta *m)
{
    return group_write(s, path, m, true, false);
}

/* `fresh`: nothing is at the path (no stale .zattrs to remove). */
static int
group_write(zarr_store *s, const char *path, const zarr_group_meta *m, bool attrs_only, bool fresh)
{
    char *doc = NULL, *attrs = NULL, *k = NULL;
    int   rc;

    if (m->zarr_format == 3) {
        ZARR_TRY(zarr_group_meta_to_v3(m, &doc));
        if (!(k = join(path, "zarr.json")))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        ZARR_TRY(zarr_store_set(s, k, doc, strlen(doc)));
    }
    else {
        ZARR_TRY(zarr_group_meta_to_v2(m, &doc, &attrs));
        if (!attrs_only || m->reserved) { /* the reserved object is in the .zgroup (zarr.h) */
            if (!(k = join(path, ".zgroup")))
                ZARR_FAIL(ZARR_ENOMEM, "out of memory");
            ZARR_TRY(zarr_store_set(s, k, doc, strlen(doc)));
            free(k);
        }
        if (!(k = join(path, ".zattrs")))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        if (attrs)
            ZARR_TRY(zarr_store_set(s, k, attrs, strlen(attrs)));
        else if (!fresh)
            ZARR_TRY(zarr_store_del(s, k)); /* replacing: no stale attributes */
    }
    ZARR_TRY(zarr_store_sync(s)); /* durable stores: the documents on stable storage (zarr.h) */
done:
    if (rc != ZARR_OK && rc != ZARR_ENOMEM)
        zarr_error_wrap(rc, "can't write group '/%s': ", path ? path : "");
    free(doc);
    free(attrs);
    free(k);
    return rc;
}

/* The documents a child's probe (and, with `format` 2, its load) reads: zarr.json first (probes ask it
 * whatever the format), then the v2 ones. */
static const char *const child_docs[] = {"zarr.json", ".zarray", ".zgroup", ".zattrs"};

/* One get_many of the documents of every listed child (a view answering them, store_prefetch.c): the
 * probes and loads that follow ask the store nothing. `format` 3: zarr.json only; 2: the v2 documents
 * and their attributes too; 0: what a probe reads. `*view` is a new reference (`s` itself when the
 * store prefers no batches). */
static int
children_view(zarr_store *s, const char *path, const zarr_name_list *l, int format, zarr_store **view)
{
    size_t per = format == 3 ? 1 : format == 2 ? 4 : 3, nk = 0;
    char **keys;
    int    rc = ZARR_OK;

    *view = NULL;
    if (l->n < 2 || !s->prefers_batches) {
        zarr_store_ref(s);
        *view = s;
        return ZARR_OK;
    }
    if (!(keys = calloc(l->n * per, sizeof *keys)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    for (size_t i = 0; i < l->n; i++) {
        char *child = join(path, l->names[i]);
        for (size_t d = 0; child && d < per; d++)
            if ((keys[nk] = join(child, child_docs[d])))
                nk++;
        free(child);
        if (nk != (i + 1) * per)
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    }
    rc = zarr__store_prefetch(s, nk, (const char *const *)keys, view);
done:
    for (size_t i = 0; i < nk; i++)
        free(keys[i]);
    free(keys);
    return rc;
}

int
zarr__group_children_docs(zarr_store *s, const char *path, int format, zarr_list_cb cb, void *ud,
                          zarr_store **docs)
{
    zarr_name_list l    = {NULL, 0, 0};
    zarr_store    *view = NULL;
    int            rc   = ZARR_OK;

    if (docs)
        *docs = NULL;
    /* collect first: probing from inside the store's list callback could re-enter the store */
    rc = zarr_store_list(s, path ? path : "", zarr_name_list_collect_dir, &l);
    if (rc == ZARR_ENOMEM)
        ZARR_FAIL(ZARR_ENOMEM, "out of memory listing '/%s'", path ? path : "");
    if (rc == ZARR_ENOTFOUND)
        rc = ZARR_OK;
    if (rc != ZARR_OK)
        goto done;
    ZARR_TRY(children_view(s, path, &l, format, &view));
    for (size_t i = 0; i < l.n; i++) {
        zarr_node_type t;
        char          *child = join(path, l.names[i]);
        if (!child)
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        rc = zarr_node_probe(view, child, &t, NULL);
        free(child);
        if (rc != ZARR_OK)
            goto done;
        if (t != ZARR_NODE_NONE && (rc = cb(l.names[i], true, ud)) != 0)
            goto done;
    }
    if (docs) {
        *docs = view;
        view  = NULL;
    }
done:
    zarr_store_close(view);
    zarr_name_list_clear(&l);
    return rc;
}

int
zarr_group_children(zarr_store *s, const char *path, zarr_list_cb cb, void *ud)
{
    return zarr__group_children_docs(s, path, 0, cb, ud, NULL);
}

int
zarr_node_delete(zarr_store *s, const char *path)
{
    int rc = zarr_store_del_prefix(s, path ? path : "");
    if (rc == ZARR_OK)
        rc = zarr_store_sync(s); /* durable stores: the removal on stable storage */
    if (rc != ZARR_OK && rc != ZARR_ENOMEM)
        zarr_error_wrap(rc, "can't delete node '/%s': ", path ? path : "");
    return rc;
}
