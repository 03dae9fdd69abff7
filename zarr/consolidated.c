/*
 * consolidated.c: consolidated metadata. Writes v2 `.zmetadata` and v3 inline
 * "consolidated_metadata" for a hierarchy (zarr_consolidate; zarr_consolidate_from takes the documents
 * and child lists a caller holds, reading the store only for the rest), reads them back
 * (zarr_consolidated_read), and looks up one node's documents in its ancestors' consolidated metadata
 * for node.c when the node's own documents are absent (zarr__consolidated_doc). The precedence rules
 * are in include/h5zarr/zarr_consolidated.h. Hidden arrays (ZARR_HIDDEN_DOC, zarr.h) are consolidated
 * where zarr readers do not take them for nodes: v2 as `<rel>/.h5zarr_array` keys, v3 in the
 * "h5zarr_hidden" object beside "metadata"; views list and load them like the other arrays. Store
 * access goes through zarr_store_* only.
 */
#define _GNU_SOURCE /* strdup, memmem */

#include "h5zarr/zarr_consolidated.h"
#include "internal.h"
#include "meta_int.h"
#include "zjson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "<a>/<b>", "<b>" when a is empty, "<a>" when b is empty; malloc'ed. */
static char *
join(const char *a, const char *b)
{
    size_t la = a ? strlen(a) : 0, lb = b ? strlen(b) : 0;
    char  *s = malloc(la + lb + 2);
    if (!s)
        return NULL;
    if (la)
        memcpy(s, a, la);
    if (la && lb)
        s[la++] = '/';
    if (lb)
        memcpy(s + la, b, lb);
    s[la + lb] = '\0';
    return s;
}

/* Document `name` of the node at `path`: its own, else (`copies`) the consolidated copy (ZARR_ENOTFOUND
 * if neither). */
static int
get_node_json(zarr_store *s, const char *path, const char *name, bool copies, struct json_object **out)
{
    zarr_buf b = ZARR_BUF_INIT;
    char    *k = join(path, name);
    int      rc;
    *out = NULL;
    if (!k)
        return zarr_error(ZARR_ENOMEM, "out of memory");
    rc = zarr__store_get_quiet(s, k, &b);
    if (rc == ZARR_ENOTFOUND && copies)
        rc = zarr__consolidated_doc(s, path, name, &b);
    if (rc == ZARR_OK)
        rc = zarr__json_parse((const char *)b.data, b.size, k, out);
    zarr_buf_free(&b);
    free(k);
    return rc;
}

/* True when a zarr.json text may hold the key "consolidated_metadata": it contains those bytes, or a
 * \u escape that could spell them. When false the document need not be parsed to know it has none. */
static bool
may_hold_consolidated(const zarr_buf *b)
{
    static const char key[] = "consolidated_metadata";
    return memmem(b->data, b->size, key, sizeof key - 1) || memmem(b->data, b->size, "\\u", 2);
}

/* The consolidated metadata at group `path` (see zarr_consolidated_read). With `quiet` (lookups): a
 * group without any sets no message, and a zarr.json that cannot hold it is not parsed. With `v2_only`
 * only `.zmetadata` is read (the caller knows there is no zarr.json at `path`). */
static int
read_md(zarr_store *s, const char *path, bool quiet, bool v2_only, int *format, struct json_object **out)
{
    struct json_object *root = NULL, *cm, *md;
    zarr_buf            b    = ZARR_BUF_INIT;
    char               *k    = NULL;
    int                 rc   = ZARR_ENOTFOUND;

    *out = NULL;
    if (!v2_only) {
        if (!(k = join(path, "zarr.json")))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        rc = zarr__store_get_quiet(s, k, &b);
        if (rc == ZARR_OK) {
            if (quiet && !may_hold_consolidated(&b)) {
                rc = ZARR_ENOTFOUND;
                goto done;
            }
            ZARR_TRY(zarr__json_parse((const char *)b.data, b.size, k, &root));
            if (json_object_object_get_ex(root, "consolidated_metadata", &cm) &&
                json_object_is_type(cm, json_type_object) && json_object_object_get_ex(cm, "metadata", &md) &&
                json_object_is_type(md, json_type_object)) {
                *out    = json_object_get(md);
                *format = 3;
                goto done;
            }
            rc =
                quiet ? ZARR_ENOTFOUND : zarr_error(ZARR_ENOTFOUND, "'%s' holds no consolidated metadata", k);
            goto done;
        }
        if (rc != ZARR_ENOTFOUND)
            goto done;
        free(k);
    }
    if (!(k = join(path, ".zmetadata")))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    rc = zarr__store_get_quiet(s, k, &b);
    if (rc == ZARR_ENOTFOUND && !quiet)
        rc = zarr_error(ZARR_ENOTFOUND, "no consolidated metadata at '/%s'", path ? path : "");
    if (rc != ZARR_OK)
        goto done;
    ZARR_TRY(zarr__json_parse((const char *)b.data, b.size, k, &root));
    if (!json_object_object_get_ex(root, "metadata", &md) || !json_object_is_type(md, json_type_object))
        ZARR_FAIL(ZARR_EMETA, "'%s': 'metadata' must be an object", k);
    if (!json_object_object_get_ex(root, "zarr_consolidated_format", &cm) ||
        !json_object_is_type(cm, json_type_int) || json_object_get_int(cm) != 1)
        ZARR_FAIL(ZARR_EMETA, "'%s': 'zarr_consolidated_format' must be 1", k);
    *out    = json_object_get(md);
    *format = 2;
done:
    json_object_put(root);
    zarr_buf_free(&b);
    free(k);
    return rc;
}

int
zarr_consolidated_read(zarr_store *s, const char *path, int *format, struct json_object **out)
{
    return read_md(s, path, false, false, format, out);
}

int
zarr__consolidated_find(zarr_store *s, const char *path, const char *const *names, int nnames,
                        bool no_zarr_json, int *which, struct json_object **doc)
{
    struct json_object *hit[ZARR__CONSOLIDATED_MAX_NAMES] = {NULL};
    char               *anc = NULL, *key = NULL;
    int                 rc = ZARR_ENOTFOUND, best = nnames;
    bool                want_v2 = false;
    size_t              plen;

    *doc   = NULL;
    *which = -1;
    if (nnames < 1 || nnames > ZARR__CONSOLIDATED_MAX_NAMES)
        return zarr_error(ZARR_EINVAL, "consolidated lookup of %d names", nnames);
    if (s->no_consolidated)
        return ZARR_ENOTFOUND;
    if (!path)
        path = "";
    for (int i = 0; i < nnames; i++)
        want_v2 |= strcmp(names[i], "zarr.json") != 0;
    plen = strlen(path);
    if (!(anc = strdup(path)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    /* Each level's consolidated metadata is read once, nearest first (v2: the node itself counts;
     * v3: only ancestors); every name keeps its nearest hit; the first name with a hit wins. */
    for (bool self = true; best > 0; self = false) {
        size_t              alen = strlen(anc);
        const char         *rel  = path + alen + (alen && alen < plen);
        struct json_object *md   = NULL;
        int                 fmt = 0, r = ZARR_ENOTFOUND;

        if (!self)
            r = read_md(s, anc, true, false, &fmt, &md);
        else if (want_v2) {
            /* the node's own .zmetadata counts only when it has no zarr.json */
            r = ZARR_ENOTFOUND;
            if (!no_zarr_json) {
                char *k = join(anc, "zarr.json");
                if (!k) {
                    rc = zarr_error(ZARR_ENOMEM, "out of memory");
                    break;
                }
                r = zarr_store_exists(s, k);
                free(k);
                if (r == ZARR_OK)
                    r = ZARR_ENOTFOUND; /* has one: nothing at this level */
                else if (r == ZARR_ENOTFOUND)
                    r = read_md(s, anc, true, true, &fmt, &md);
            }
            else
                r = read_md(s, anc, true, true, &fmt, &md);
        }
        if (r != ZARR_OK && r != ZARR_ENOTFOUND && r != ZARR_EMETA) {
            rc = r;
            break;
        }
        for (int i = 0; r == ZARR_OK && i < best; i++) {
            bool                v3 = strcmp(names[i], "zarr.json") == 0;
            struct json_object *d;
            if (hit[i] || fmt != (v3 ? 3 : 2) || (v3 && self))
                continue;
            free(key);
            if (!(key = v3 ? strdup(rel) : join(rel, names[i]))) {
                rc = zarr_error(ZARR_ENOMEM, "out of memory");
                break;
            }
            if (json_object_object_get_ex(md, key, &d) && json_object_is_type(d, json_type_object)) {
                hit[i] = json_object_get(d);
                if (i < best)
                    best = i;
            }
        }
        json_object_put(md);
        if (rc == ZARR_ENOMEM || !anc[0])
            break;
        char *slash = strrchr(anc, '/');
        if (slash)
            *slash = '\0';
        else
            anc[0] = '\0';
    }
    if (rc == ZARR_ENOTFOUND && best < nnames) {
        *which    = best;
        *doc      = hit[best];
        hit[best] = NULL;
        rc        = ZARR_OK;
    }
    for (int i = 0; i < nnames; i++)
        json_object_put(hit[i]);
    free(anc);
    free(key);
    return rc;
}

int
zarr__consolidated_doc(zarr_store *s, const char *path, const char *name, zarr_buf *out)
{
    struct json_object *doc = NULL;
    char               *tmp = NULL;
    int                 which, rc;

    out->size = 0;
    rc        = zarr__consolidated_find(s, path, &name, 1, false, &which, &doc);
    if (rc == ZARR_OK) {
        if (!(tmp = zarr__json_dump(doc)))
            rc = zarr_error(ZARR_ENOMEM, "out of memory");
        else
            rc = zarr_buf_append(out, tmp, strlen(tmp));
    }
    json_object_put(doc);
    free(tmp);
    return rc;
}

/* ---- reading array metadata with the fallback ---- */
int
zarr_array_meta_read(zarr_store *s, const char *path, zarr_array_meta **out)
{
    zarr_buf b = ZARR_BUF_INIT, a = ZARR_BUF_INIT;
    char    *k = NULL;
    int      rc;
    bool     have_attrs;

    *out = NULL;
    if (!(k = join(path, "zarr.json")))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    rc = zarr__store_get_quiet(s, k, &b);
    if (rc == ZARR_ENOTFOUND)
        rc = zarr__consolidated_doc(s, path, "zarr.json", &b);
    if (rc == ZARR_OK) {
        rc = zarr_array_meta_parse_v3((const char *)b.data, b.size, k, out);
        goto done;
    }
    if (rc != ZARR_ENOTFOUND)
        goto done;
    free(k);
    if (!(k = join(path, ".zarray")))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    rc = zarr__store_get_quiet(s, k, &b);
    if (rc == ZARR_OK) {
        char *ak = join(path, ".zattrs");
        if (!ak)
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        rc = zarr__store_get_quiet(s, ak, &a);
        free(ak);
    }
    else if (rc == ZARR_ENOTFOUND) {
        rc = zarr__consolidated_doc(s, path, ".zarray", &b);
        if (rc == ZARR_ENOTFOUND)
            ZARR_FAIL(ZARR_ENOTFOUND, "no array at '/%s'", path ? path : "");
        if (rc == ZARR_OK)
            rc = zarr__consolidated_doc(s, path, ".zattrs", &a);
    }
    if (rc != ZARR_OK && rc != ZARR_ENOTFOUND)
        goto done;
    have_attrs = rc == ZARR_OK;
    rc = zarr_array_meta_parse_v2((const char *)b.data, b.size, have_attrs ? (const char *)a.data : NULL,
                                  have_attrs ? a.size : 0, k, out);
done:
    zarr_buf_free(&b);
    zarr_buf_free(&a);
    free(k);
    return rc;
}

/* ---- consolidating ---- */
/* Where the gathered documents go: the "metadata" object as a tree (`md`), or, for a v3 document
 * written as text (zarr_consolidate_from without md_out), that object's text in `text` as the dumper
 * prints it at level 2 of the group's zarr.json: "{", each member's key and its document at level 3,
 * closed by sink_close. */
typedef struct {
    struct json_object *md;
    zarr_buf           *text; /* NULL: the tree */
    size_t              n;    /* members written to `text` */
} cons_sink;

/* Starts the member `rel` of the text: "{" before the first, its key. */
static int
sink_key(cons_sink *k, const char *rel)
{
    int rc = k->n == 0 ? zarr__json_w_raw(k->text, "{") : ZARR_OK;
    return rc == ZARR_OK ? zarr__json_w_key(k->text, 2, k->n == 0, rel) : rc;
}

/* Adds the document `o` (taken) as member `rel`. */
static int
sink_add(cons_sink *k, const char *rel, struct json_object *o)
{
    int rc;
    if (!k->text)
        return zarr__json_add(k->md, rel, o);
    if ((rc = sink_key(k, rel)) == ZARR_OK && (rc = zarr__json_w_value(k->text, o, 3)) == ZARR_OK)
        k->n++;
    json_object_put(o);
    return rc;
}

static int
sink_close(cons_sink *k)
{
    return k->n == 0 ? zarr__json_w_raw(k->text, "{}") : zarr__json_w_close(k->text, 2, '}');
}

/* gather_held for a v3 node `src` holds as text (its node_v3_text, printed into the sink's text at the
 * member's place) or as a JSON object (its node_v3: a copy that holds no consolidated metadata of its
 * own, taken as it is). */
static int
gather_held_v3(const zarr_consolidate_source *src, const char *path, const char *rel, cons_sink *md,
               bool *group)
{
    struct json_object *o        = NULL;
    int                 fmt      = 0, rc;
    bool                is_group = false;

    if (md->text && src->node_v3_text) {
        size_t at = md->text->size; /* what the text had: a node not written is taken back */
        if ((rc = rel[0] ? sink_key(md, rel) : ZARR_OK) == ZARR_OK) {
            size_t doc = md->text->size;
            rc         = src->node_v3_text(src->ud, path, &is_group, &fmt, 3, md->text);
            if (rc == ZARR_OK && fmt == 3 && rel[0] && md->text->size == doc)
                rc = zarr_error(ZARR_EINVAL, "consolidate: no document of node '/%s' given", path);
            if (rc == ZARR_OK && fmt == 3 && rel[0])
                md->n++;
            else
                md->text->size = at;
        }
        if (rc == ZARR_OK)
            *group = fmt == 3 && is_group; /* the other format: not consolidated (as from the store) */
        return rc;
    }
    if ((rc = src->node_v3(src->ud, path, &is_group, &fmt, &o)) != ZARR_OK)
        goto done; /* 1: not held */
    *group = false;
    if (!o || fmt != 3)
        goto done; /* a node of the other format: not consolidated (as from the store) */
    *group = is_group;
    if (rel[0]) {
        rc = sink_add(md, rel, o);
        o  = NULL;
    }
done:
    json_object_put(o);
    return rc;
}

/* The documents of the node at `path` that `src` holds (zarr_consolidate_from), added to `md` as
 * gather adds the stored ones: 1 when `src` does not hold them (gather reads the store), ZARR_OK (with
 * `*group`) when added, or skipped like a node of the other format; an error otherwise. */
static int
gather_held(const zarr_consolidate_source *src, const char *path, const char *rel, int format, cons_sink *md,
            bool *group)
{
    char               *doc = NULL, *attrs = NULL, *ck = NULL;
    struct json_object *j = NULL, *ja = NULL;
    int                 fmt      = 0, rc;
    bool                is_group = false;

    if (src && (src->node_v3 || (md->text && src->node_v3_text)) && format == 3)
        return gather_held_v3(src, path, rel, md, group);
    if (!src || !src->node)
        return 1;
    if ((rc = src->node(src->ud, path, &is_group, &fmt, &doc, &attrs)) != ZARR_OK)
        goto done; /* 1: not held */
    *group = false;
    if (!doc || fmt != format)
        goto done; /* a node of the other format: not consolidated (as from the store) */
    *group = is_group;
    if (!(ck = join(rel, format == 3 ? "" : is_group ? ".zgroup" : ".zarray")))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    ZARR_TRY(zarr__json_parse(doc, strlen(doc), ck, &j));
    if (format == 3) {
        if (rel[0]) {
            json_object_object_del(j, "consolidated_metadata"); /* no nested, possibly stale copies */
            rc = sink_add(md, rel, j);
            j  = NULL;
            goto done;
        }
        else
            json_object_put(j);
        j = NULL;
        goto done;
    }
    ZARR_TRY(zarr__json_add(md->md, ck, j));
    j = NULL;
    if (attrs) {
        free(ck);
        if (!(ck = join(rel, ".zattrs")))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        ZARR_TRY(zarr__json_parse(attrs, strlen(attrs), ck, &ja));
        ZARR_TRY(zarr__json_add(md->md, ck, ja));
        ja = NULL;
    }
done:
    json_object_put(j);
    json_object_put(ja);
    free(doc);
    free(attrs);
    free(ck);
    return rc;
}

/* Adds the documents of the node at `path` (relative name `rel`) and of everything below it, from
 * `src` where it holds them (may be NULL), else from the store. A node known only from the
 * consolidated metadata being replaced keeps its entry. */
/* A v3 hidden array at `path` (no zarr.json there): its document added to `hid` under `rel`. */
static int
gather_hidden_v3(zarr_store *s, const char *path, const char *rel, struct json_object *hid)
{
    zarr_buf            b   = ZARR_BUF_INIT;
    struct json_object *doc = NULL;
    char               *k   = join(path, ZARR_HIDDEN_DOC);
    int                 rc, fmt;

    if (!k)
        return zarr_error(ZARR_ENOMEM, "out of memory");
    rc = zarr__store_get_quiet(s, k, &b);
    if (rc == ZARR_ENOTFOUND) {
        rc = ZARR_OK; /* a v2 node inside a v3 hierarchy, or nothing: not consolidated */
        goto done;
    }
    if (rc != ZARR_OK || !rel[0])
        goto done;
    ZARR_TRY(zarr__hidden_format((const char *)b.data, b.size, k, &fmt));
    if (fmt != 3)
        goto done;
    ZARR_TRY(zarr__json_parse((const char *)b.data, b.size, k, &doc));
    ZARR_TRY(zarr__json_add(hid, rel, doc));
    doc = NULL;
done:
    json_object_put(doc);
    zarr_buf_free(&b);
    free(k);
    return rc;
}

static int
gather(zarr_store *s, const zarr_consolidate_source *src, const char *path, const char *rel, int format,
       cons_sink *md, struct json_object *hid, int depth)
{
    static const char *const v2docs[] = {".zgroup", ".zarray", ".zattrs", ZARR_HIDDEN_DOC};
    zarr_name_list           l        = {NULL, 0, 0}; /* the children (each reported as a directory) */
    zarr_store              *docs     = NULL;         /* the children's documents read ahead */
    struct json_object      *doc      = NULL;
    char                    *ck = NULL, *crel = NULL;
    int                      rc    = ZARR_OK;
    bool                     group = false;

    if (depth > 64)
        return zarr_error(ZARR_EUNSUPPORTED, "consolidate: the hierarchy is nested too deeply at '/%s'",
                          path);
    if ((rc = gather_held(src, path, rel, format, md, &group)) != 1) {
        if (rc != ZARR_OK)
            goto done;
    }
    else if (format == 3) {
        rc = ZARR_OK;
        if ((rc = get_node_json(s, path, "zarr.json", true, &doc)) == ZARR_ENOTFOUND) {
            rc = gather_hidden_v3(s, path, rel, hid);
            goto done;
        }
        if (rc != ZARR_OK)
            goto done;
        group = json_object_is_type(json_object_object_get(doc, "node_type"), json_type_string) &&
                strcmp(json_object_get_string(json_object_object_get(doc, "node_type")), "group") == 0;
        if (rel[0]) {
            json_object_object_del(doc, "consolidated_metadata"); /* no nested, possibly stale copies */
            rc  = sink_add(md, rel, doc);
            doc = NULL;
            if (rc != ZARR_OK)
                goto done;
        }
    }
    else {
        bool node = false; /* a .zgroup or .zarray: no hidden document to look for */
        bool own  = false; /* the node has a .zgroup or .zarray of its own: no copies looked up */
        rc        = ZARR_OK;
        group     = false;
        for (int i = 0; i < 2 && !own; i++) {
            char *k = join(path, v2docs[i]);
            if (!k)
                ZARR_FAIL(ZARR_ENOMEM, "out of memory");
            rc = zarr_store_exists(s, k);
            free(k);
            if (rc != ZARR_OK && rc != ZARR_ENOTFOUND)
                goto done;
            own = rc == ZARR_OK;
        }
        for (int i = 0; i < 4; i++) {
            free(ck);
            ck = NULL;
            if (i == 3 && node)
                break;
            if (!(ck = join(rel, v2docs[i])))
                ZARR_FAIL(ZARR_ENOMEM, "out of memory");
            /* the hidden document only as the node's own (no lookup in the copies of its ancestors); a
             * node with documents of its own takes none from the copies (a lookup there reads every
             * ancestor's consolidated metadata: a request and a parse of it for each node) */
            rc = get_node_json(s, path, v2docs[i], i != 3 && !own, &doc);
            if (rc == ZARR_ENOTFOUND) {
                rc = ZARR_OK;
                continue;
            }
            if (rc != ZARR_OK)
                goto done;
            node |= i < 2;
            if (i == 0)
                group = true;
            ZARR_TRY(zarr__json_add(md->md, ck, doc));
            doc = NULL;
        }
    }
    if (!group)
        goto done;
    rc = src && src->children ? src->children(src->ud, path, zarr_name_list_collect_dir, &l) : 1;
    if (rc == 1) /* not known to `src`: the store's listing, the children's documents in one batch */
        rc = zarr__group_children_docs(s, path, format, zarr_name_list_collect_dir, &l, &docs);
    if (rc != ZARR_OK)
        goto done;
    for (size_t i = 0; i < l.n; i++) {
        char *cp = join(path, l.names[i]);
        free(crel);
        crel = join(rel, l.names[i]);
        if (!cp || !crel) {
            free(cp);
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        }
        rc = gather(docs ? docs : s, src, cp, crel, format, md, hid, depth + 1);
        free(cp);
        if (rc != ZARR_OK)
            goto done;
    }
done:
    zarr_name_list_clear(&l);
    zarr_store_close(docs);
    json_object_put(doc);
    free(ck);
    free(crel);
    return rc;
}

int
zarr_consolidate(zarr_store *s, const char *path)
{
    return zarr_consolidate_from(s, path, NULL, NULL, NULL);
}

int
zarr_consolidate_from(zarr_store *s, const char *path, const zarr_consolidate_source *src,
                      struct json_object **md_out, struct json_object **hidden_out)
{
    zarr_node_type      t;
    int                 format = 0, rc, held = 1;
    struct json_object *md = NULL, *root = NULL, *hid = NULL;
    zarr_group_meta    *g    = NULL;
    char               *text = NULL, *k = NULL, *rdoc = NULL, *rattrs = NULL;
    bool                is_group = false;
    zarr_buf            mtext = ZARR_BUF_INIT, doc = ZARR_BUF_INIT;
    cons_sink           sink = {NULL, NULL, 0};

    if (md_out)
        *md_out = NULL;
    if (hidden_out)
        *hidden_out = NULL;
    if (s)
        s->no_consolidated = false; /* from now on there is some to look at */
    if (!path)
        path = "";
    if (src && src->node && (held = src->node(src->ud, path, &is_group, &format, &rdoc, &rattrs)) < 0) {
        rc = held;
        goto done;
    }
    if (held == 0 && rdoc)
        t = is_group ? ZARR_NODE_GROUP : ZARR_NODE_ARRAY;
    else
        ZARR_TRY(zarr_node_probe(s, path, &t, &format));
    if (t == ZARR_NODE_NONE)
        ZARR_FAIL(ZARR_ENOTFOUND, "no group at '/%s'", path);
    if (t != ZARR_NODE_GROUP)
        ZARR_FAIL(ZARR_EINVAL, "'/%s' is an array; only groups can be consolidated", path);
    if (!(md = json_object_new_object()) || !(hid = json_object_new_object()))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    sink.md = md;
    if (format == 3 && !md_out && !hidden_out) /* no tree asked for: the document written as text */
        sink.text = &mtext;
    ZARR_TRY(gather(s, src, path, "", format, &sink, hid, 0));
    if (sink.text) {
        ZARR_TRY(sink_close(&sink));
        if (held == 0 && rdoc)
            ZARR_TRY(zarr_group_meta_parse_v3(rdoc, strlen(rdoc), "zarr.json", &g));
        else
            ZARR_TRY(zarr_group_read(s, path, &g));
        json_object_put(g->consolidated_hidden);
        g->consolidated_hidden = json_object_object_length(hid) ? json_object_get(hid) : NULL;
        ZARR_TRY(zarr__group_meta_v3_text_md(g, (const char *)mtext.data, mtext.size, &doc));
        if (!(k = join(path, "zarr.json")))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        ZARR_TRY(zarr_store_set(s, k, doc.data, doc.size - 1));
        ZARR_TRY(zarr_store_sync(s)); /* durable stores, as zarr_group_write */
    }
    else if (format == 3) {
        if (held == 0 && rdoc) /* the group as held: what the store has (no read back) */
            ZARR_TRY(zarr_group_meta_parse_v3(rdoc, strlen(rdoc), "zarr.json", &g));
        else
            ZARR_TRY(zarr_group_read(s, path, &g));
        json_object_put(g->consolidated);
        g->consolidated = md;
        md              = NULL;
        json_object_put(g->consolidated_hidden);
        g->consolidated_hidden = json_object_object_length(hid) ? json_object_get(hid) : NULL;
        ZARR_TRY(zarr_group_write(s, path, g));
        if (md_out)
            *md_out = json_object_get(g->consolidated);
        if (hidden_out && g->consolidated_hidden)
            *hidden_out = json_object_get(g->consolidated_hidden);
    }
    else {
        if (!(root = json_object_new_object()))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        ZARR_TRY(zarr__json_add(root, "metadata", md));
        if (md_out)
            *md_out = json_object_get(md);
        md = NULL;
        ZARR_TRY(zarr__json_add(root, "zarr_consolidated_format", json_object_new_int(1)));
        if (!(text = zarr__json_dump(root)) || !(k = join(path, ".zmetadata")))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        ZARR_TRY(zarr_store_set(s, k, text, strlen(text)));
        ZARR_TRY(zarr_store_sync(s)); /* durable stores (v3: zarr_group_write syncs) */
    }
done:
    if (rc != ZARR_OK && rc != ZARR_ENOMEM)
        zarr_error_wrap(rc, "can't consolidate '/%s': ", path ? path : "");
    json_object_put(md);
    json_object_put(hid);
    json_object_put(root);
    zarr_group_meta_free(g);
    zarr_buf_free(&mtext);
    zarr_buf_free(&doc);
    free(text);
    free(k);
    free(rdoc);
    free(rattrs);
    return rc;
}

/* ---- a hierarchy opened from its consolidated metadata alone (zarr_consolidated_open) ---- */
/* A member of "metadata" in a view made from a document's text (zarr_consolidated_from_doc): its text,
 * and the node made from it as the document was read. */
typedef struct {
    const char      *key; /* the node's path relative to the view's group (in `keys`) */
    const char      *val; /* its document's text (in `text`), `vn` bytes */
    size_t           vn;
    zarr_node_type   type; /* of the node made ahead; ZARR_NODE_NONE: none made (a load parses `val`) */
    zarr_group_meta *g;    /* the node made ahead, until the first load asking for it takes it */
    zarr_array      *a;
} cons_member;

struct zarr_consolidated {
    zarr_store         *store;  /* a reference */
    char               *path;   /* the group's path ("" = root) */
    int                 format; /* 2 or 3 */
    zarr_group_meta    *own;    /* v3: the group itself (its `consolidated` is `md`); v2: NULL */
    struct json_object *md;     /* the "metadata" object (a reference); empty when `mem` holds it */
    struct json_object *hidden; /* v3: the "h5zarr_hidden" object (a reference), or NULL */
    struct json_object *kids;   /* group path relative to `path` -> array of child names (sorted) */
    char               *text;   /* zarr_consolidated_from_doc: the document, */
    char               *keys;   /* its members' names (NUL-terminated, one after another) */
    cons_member        *mem;    /* and its members, sorted by name (`nmem`), instead of `md`'s */
    size_t              nmem;
};

static int
cmp_json_str(const void *a, const void *b)
{
    return strcmp(json_object_get_string(*(struct json_object *const *)a),
                  json_object_get_string(*(struct json_object *const *)b));
}

/* The node a consolidated key stands for (relative path, malloc'ed), or NULL with *skip set for keys
 * that name no node of their own (v2 .zattrs, the group's own .zgroup). */
static char *
key_node(int format, const char *key, bool *skip)
{
    const char *slash, *doc;
    *skip = false;
    if (format == 3)
        return strdup(key);
    slash = strrchr(key, '/');
    doc   = slash ? slash + 1 : key;
    if (strcmp(doc, ".zarray") != 0 && strcmp(doc, ".zgroup") != 0 && strcmp(doc, ZARR_HIDDEN_DOC) != 0) {
        *skip = true;
        return NULL;
    }
    if (!slash) { /* the group's own .zgroup */
        *skip = true;
        return NULL;
    }
    return strndup(key, (size_t)(slash - key));
}

/* Adds node `node` (relative path, taken) to the children index `kids`. */
static int
index_node(struct json_object *kids, char *node)
{
    struct json_object *list;
    char               *slash;
    int                 rc = ZARR_OK;

    if (!*node)
        goto done;
    slash = strrchr(node, '/');
    if (slash)
        *slash = '\0';
    if (!json_object_object_get_ex(kids, slash ? node : "", &list)) {
        if (!(list = json_object_new_array()) || json_object_object_add(kids, slash ? node : "", list)) {
            json_object_put(list);
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        }
    }
    if (json_object_array_add(list, json_object_new_string(slash ? slash + 1 : node)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
done:
    free(node);
    return rc;
}

/* Indexes the children of every group the document lists (and of the hidden arrays, v3):
 * kids[parent] = [names...], sorted. */
static int
cons_index(zarr_consolidated *c)
{
    int rc = ZARR_OK;
    if (!(c->kids = json_object_new_object()))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->nmem; i++) {
        char *node = strdup(c->mem[i].key);
        if (!node)
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        ZARR_TRY(index_node(c->kids, node));
    }
    json_object_object_foreach(c->md, key, val)
    {
        bool  skip;
        char *node = key_node(c->format, key, &skip);
        (void)val;
        if (!node) {
            if (skip)
                continue;
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        }
        ZARR_TRY(index_node(c->kids, node));
    }
    if (c->hidden) {
        json_object_object_foreach(c->hidden, hkey, hval)
        {
            char *node = strdup(hkey);
            (void)hval;
            if (!node)
                ZARR_FAIL(ZARR_ENOMEM, "out of memory");
            ZARR_TRY(index_node(c->kids, node));
        }
    }
    {
        json_object_object_foreach(c->kids, k2, list) /* byte order, as a store listing is sorted */
        {
            (void)k2;
            json_object_array_sort(list, cmp_json_str);
        }
    }
done:
    return rc;
}

void
zarr_consolidated_close(zarr_consolidated *c)
{
    if (!c)
        return;
    zarr_store_close(c->store);
    zarr_group_meta_free(c->own);
    json_object_put(c->md);
    json_object_put(c->hidden);
    json_object_put(c->kids);
    for (size_t i = 0; i < c->nmem; i++) { /* made ahead, never asked for */
        zarr_group_meta_free(c->mem[i].g);
        zarr_array_close(c->mem[i].a);
    }
    free(c->mem);
    free(c->keys);
    free(c->text);
    free(c->path);
    free(c);
}

static int
cons_new(zarr_store *s, const char *path, zarr_consolidated **out)
{
    zarr_consolidated *c = calloc(1, sizeof *c);
    *out                 = NULL;
    if (!c || !(c->path = strdup(path ? path : ""))) {
        free(c);
        return zarr_error(ZARR_ENOMEM, "out of memory");
    }
    zarr_store_ref(s);
    c->store = s;
    *out     = c;
    return ZARR_OK;
}

int
zarr_consolidated_open(zarr_store *s, const char *path, int format, zarr_consolidated **out)
{
    zarr_consolidated  *c    = NULL;
    zarr_buf            b    = ZARR_BUF_INIT;
    struct json_object *root = NULL, *md;
    char               *k    = NULL;
    int                 rc;

    *out = NULL;
    if (!s || (format != 0 && format != 2 && format != 3))
        return zarr_error(ZARR_EINVAL, "zarr_consolidated_open: a store and format 0, 2 or 3 are needed");
    ZARR_TRY(cons_new(s, path, &c));
    if (format != 2) {
        if (!(k = join(c->path, "zarr.json")))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        rc = zarr__store_get_quiet(s, k, &b);
        if (rc == ZARR_OK) {
            ZARR_TRY(zarr__json_parse_doc((const char *)b.data, b.size, k, 3, &root));
            ZARR_TRY(zarr__group_meta_from_v3(root, k, &c->own));
            if (!c->own->consolidated) {
                rc = ZARR_ENOTFOUND;
                goto done;
            }
            c->format = 3;
            c->md     = json_object_get(c->own->consolidated);
            c->hidden = json_object_get(c->own->consolidated_hidden); /* NULL stays NULL */
        }
        else if (rc != ZARR_ENOTFOUND || format == 3)
            goto done;
        free(k);
        k = NULL;
    }
    if (!c->md) {
        if (!(k = join(c->path, ".zmetadata")))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        ZARR_TRY(zarr__store_get_quiet(s, k, &b));
        ZARR_TRY(zarr__json_parse_doc((const char *)b.data, b.size, k, 2, &root));
        if (!json_object_object_get_ex(root, "metadata", &md) || !json_object_is_type(md, json_type_object))
            ZARR_FAIL(ZARR_EMETA, "'%s': 'metadata' must be an object", k);
        c->format = 2;
        c->md     = json_object_get(md);
    }
    ZARR_TRY(cons_index(c));
    *out = c;
    c    = NULL;
done:
    if (rc != ZARR_OK && rc != ZARR_ENOTFOUND && rc != ZARR_ENOMEM)
        zarr_error_wrap(rc, "can't open the consolidated metadata of '/%s': ", path ? path : "");
    zarr_consolidated_close(c);
    json_object_put(root);
    zarr_buf_free(&b);
    free(k);
    return rc;
}

int
zarr_consolidated_from_group(zarr_store *s, const char *path, const zarr_group_meta *g,
                             zarr_consolidated **out)
{
    zarr_consolidated *c = NULL;
    int                rc;

    *out = NULL;
    if (!s || !g)
        return zarr_error(ZARR_EINVAL, "zarr_consolidated_from_group: store and group must not be NULL");
    if (g->zarr_format != 3 || !g->consolidated)
        return ZARR_ENOTFOUND;
    ZARR_TRY(cons_new(s, path, &c));
    ZARR_TRY(zarr_group_meta_new(3, &c->own));
    json_object_put(c->own->attributes);
    c->own->attributes = NULL;
    if (json_object_deep_copy(g->attributes, &c->own->attributes, NULL) != 0 ||
        (g->extra && json_object_deep_copy(g->extra, &c->own->extra, NULL) != 0) ||
        (g->reserved && json_object_deep_copy(g->reserved, &c->own->reserved, NULL) != 0))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    c->own->consolidated        = json_object_get(g->consolidated);
    c->own->consolidated_hidden = json_object_get(g->consolidated_hidden);
    c->format                   = 3;
    c->md                       = json_object_get(g->consolidated);
    c->hidden                   = json_object_get(g->consolidated_hidden);
    ZARR_TRY(cons_index(c));
    *out = c;
    c    = NULL;
done:
    zarr_consolidated_close(c);
    return rc;
}

/* `path` relative to the view's group, or NULL when it is outside. */
static const char *
cons_rel(const zarr_consolidated *c, const char *path)
{
    size_t n = strlen(c->path);
    if (!path)
        path = "";
    if (!n)
        return path;
    if (strncmp(path, c->path, n) != 0 || (path[n] != '\0' && path[n] != '/'))
        return NULL;
    return path[n] ? path + n + 1 : path + n;
}

/* The text of v2 document `doc` of node `rel` in the metadata, into `out` (ZARR_ENOTFOUND if absent). */
static int
cons_v2_doc(const zarr_consolidated *c, const char *rel, const char *doc, zarr_buf *out)
{
    struct json_object *d;
    char               *k = join(rel, doc), *text;
    int                 rc;
    out->size = 0;
    if (!k)
        return zarr_error(ZARR_ENOMEM, "out of memory");
    if (!json_object_object_get_ex(c->md, k, &d) || !json_object_is_type(d, json_type_object)) {
        free(k);
        return ZARR_ENOTFOUND;
    }
    free(k);
    if (!(text = zarr__json_dump(d)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    rc = zarr_buf_append(out, text, strlen(text));
    free(text);
    return rc;
}

/* The member `rel` of a view made from a document's text, or NULL. */
static cons_member *
cons_find(const zarr_consolidated *c, const char *rel)
{
    size_t lo = 0, hi = c->nmem;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int    r   = strcmp(rel, c->mem[mid].key);
        if (r == 0)
            return &c->mem[mid];
        if (r < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* A load of member `mem` answered by the node made ahead: its type, and its group or array when asked
 * for (taken: the first load asking has it, later ones parse the text again). False: none made. */
static bool
cons_take(cons_member *mem, zarr_node_type *type, zarr_group_meta **g, zarr_array **a)
{
    if (mem->type == ZARR_NODE_NONE)
        return false;
    if (mem->type == ZARR_NODE_GROUP && g && !(*g = __atomic_exchange_n(&mem->g, NULL, __ATOMIC_ACQ_REL)))
        return false;
    if (mem->type == ZARR_NODE_ARRAY && a && !(*a = __atomic_exchange_n(&mem->a, NULL, __ATOMIC_ACQ_REL)))
        return false;
    *type = mem->type;
    return true;
}

/* A v3 node's consolidated document `doc` (an object, borrowed; `where` names it): its type, and its
 * group (`g` not NULL) or array metadata (`m` not NULL) when it is one. */
static int
v3_member(const char *where, struct json_object *doc, zarr_node_type *type, zarr_group_meta **g,
          zarr_array_meta **m)
{
    struct json_object *nt;
    if (!json_object_object_get_ex(doc, "node_type", &nt) || !json_object_is_type(nt, json_type_string))
        return zarr_error(ZARR_EMETA, "'%s': missing required key 'node_type'", where);
    if (strcmp(json_object_get_string(nt), "group") == 0) {
        *type = ZARR_NODE_GROUP;
        return g ? zarr__group_meta_from_v3(doc, where, g) : ZARR_OK;
    }
    if (strcmp(json_object_get_string(nt), "array") == 0) {
        *type = ZARR_NODE_ARRAY;
        return m ? zarr__array_meta_from_v3(doc, where, m) : ZARR_OK;
    }
    return zarr_error(ZARR_EMETA, "'%s': 'node_type' must be \"array\" or \"group\"", where);
}

/* zarr_consolidated_from_doc's job: task i parses member i's text and makes its node (a member that is
 * no JSON sets `bad`: the whole document is parsed instead, for its message). */
typedef struct {
    zarr_consolidated *c;
    int                bad;
} ahead_job;

static int
ahead_task(void *job, size_t i, int worker)
{
    ahead_job          *j     = job;
    cons_member        *mem   = &j->c->mem[i];
    struct json_object *doc   = NULL;
    zarr_array_meta    *m     = NULL;
    zarr_node_type      type  = ZARR_NODE_NONE;
    char               *path  = join(j->c->path, mem->key);
    char               *where = path ? join(path, "zarr.json (consolidated)") : NULL;

    (void)worker;
    if (!where || zarr__json_parse(mem->val, mem->vn, where, &doc) != ZARR_OK) {
        __atomic_store_n(&j->bad, 1, __ATOMIC_RELAXED);
        goto done;
    }
    /* not an object, or not a node zarr_consolidated_load makes: none made (its load says what is wrong) */
    if (!json_object_is_type(doc, json_type_object) || v3_member(where, doc, &type, &mem->g, &m) != ZARR_OK)
        goto done;
    if (m) {
        int rc = zarr__array_from_meta(j->c->store, path, m, &mem->a); /* takes m */
        m      = NULL;
        if (rc != ZARR_OK)
            goto done;
    }
    mem->type = type;
done:
    if (mem->type == ZARR_NODE_NONE) {
        zarr_group_meta_free(mem->g);
        zarr_array_close(mem->a);
        mem->g = NULL;
        mem->a = NULL;
    }
    zarr_array_meta_free(m);
    json_object_put(doc);
    free(where);
    free(path);
    zarr_error_clear();
    return ZARR_OK;
}

static int
cmp_member(const void *a, const void *b)
{
    return strcmp(((const cons_member *)a)->key, ((const cons_member *)b)->key);
}

int
zarr_consolidated_from_doc(zarr_store *s, const char *path, const void *doc, size_t n,
                           zarr_consolidated **out)
{
    static const char *const keys[] = {"consolidated_metadata", "metadata"};
    zarr_consolidated       *c      = NULL;
    zarr__json_span         *sp     = NULL;
    struct json_object      *rest   = NULL, *nt;
    ahead_job                j      = {NULL, 0};
    char                    *where  = NULL, *k;
    size_t                   nm = 0, kb = 0;
    int                      rc;

    *out = NULL;
    if (!s || !doc)
        return zarr_error(ZARR_EINVAL, "zarr_consolidated_from_doc: store and document must not be NULL");
    if (n < ZARR_JSON_WIDE_BYTES)
        return ZARR_ENOTFOUND;
    ZARR_TRY(cons_new(s, path, &c));
    if (!(c->text = malloc(n)) || !(where = join(c->path, "zarr.json")))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    memcpy(c->text, doc, n);
    rc = ZARR_ENOTFOUND; /* from here: not taken (the caller parses the whole document) */
    if (zarr__json_split_wide(c->text, n, where, keys, 2, 64, &sp, &nm, &rest) != ZARR_OK ||
        !json_object_object_get_ex(rest, "node_type", &nt) || !json_object_is_type(nt, json_type_string) ||
        strcmp(json_object_get_string(nt), "group") != 0 ||
        zarr__group_meta_from_v3(rest, where, &c->own) != ZARR_OK || !c->own->consolidated)
        goto done;
    c->format = 3;
    c->md     = json_object_get(c->own->consolidated); /* empty: the members are `mem` */
    c->hidden = json_object_get(c->own->consolidated_hidden);
    for (size_t i = 0; i < nm; i++)
        kb += sp[i].kn + 1;
    if (!(c->keys = malloc(kb)) || !(c->mem = calloc(nm, sizeof *c->mem))) {
        rc = zarr_error(ZARR_ENOMEM, "out of memory");
        goto done;
    }
    k = c->keys;
    for (size_t i = 0; i < nm; i++) {
        memcpy(k, c->text + sp[i].ks, sp[i].kn);
        k[sp[i].kn] = '\0';
        c->mem[i]   = (cons_member){k, c->text + sp[i].vs, sp[i].vn, ZARR_NODE_NONE, NULL, NULL};
        k += sp[i].kn + 1;
    }
    c->nmem = nm;
    qsort(c->mem, nm, sizeof *c->mem, cmp_member);
    for (size_t i = 1; i < nm; i++)
        if (strcmp(c->mem[i - 1].key, c->mem[i].key) == 0)
            goto done; /* two members of one name: json-c's answer */
    j.c = c;
    (void)zarr_pool_run(zarr_pool_default(), ahead_task, &j, nm, false); /* its tasks never fail */
    if (j.bad)
        goto done;
    ZARR_TRY(cons_index(c));
    *out = c;
    c    = NULL;
done:
    if (rc == ZARR_ENOTFOUND)
        zarr_error_clear();
    zarr_consolidated_close(c);
    json_object_put(rest);
    free(sp);
    free(where);
    return rc;
}

int
zarr_consolidated_load(zarr_consolidated *c, const char *path, zarr_node_type *type, int *format,
                       zarr_group_meta **g, zarr_array **a)
{
    const char         *rel;
    struct json_object *doc = NULL, *parsed = NULL;
    cons_member        *mem;
    zarr_buf            b = ZARR_BUF_INIT, at = ZARR_BUF_INIT;
    zarr_array_meta    *m     = NULL;
    char               *where = NULL;
    int                 rc    = ZARR_OK;

    if (g)
        *g = NULL;
    if (a)
        *a = NULL;
    *type = ZARR_NODE_NONE;
    if (format)
        *format = 0;
    if (!c || !(rel = cons_rel(c, path)))
        return ZARR_OK; /* outside the view: nothing it knows of */
    if (!(where = join(path, c->format == 3 ? "zarr.json (consolidated)" : ".zarray (consolidated)")))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    if (c->format == 3) {
        if (!*rel) {
            *type = ZARR_NODE_GROUP;
            if (g) {
                ZARR_TRY(zarr_group_meta_new(3, g));
                json_object_put((*g)->attributes);
                (*g)->attributes = NULL;
                if (json_object_deep_copy(c->own->attributes, &(*g)->attributes, NULL) != 0 ||
                    (c->own->extra && json_object_deep_copy(c->own->extra, &(*g)->extra, NULL) != 0) ||
                    (c->own->reserved && json_object_deep_copy(c->own->reserved, &(*g)->reserved, NULL) != 0))
                    ZARR_FAIL(ZARR_ENOMEM, "out of memory");
                (*g)->consolidated        = json_object_get(c->md);
                (*g)->consolidated_hidden = json_object_get(c->hidden);
            }
            goto found;
        }
        if (c->mem && (mem = cons_find(c, rel))) {
            if (cons_take(mem, type, g, a))
                goto found; /* made as the document was read */
            ZARR_TRY(zarr__json_parse(mem->val, mem->vn, where, &parsed));
            doc = parsed;
        }
        else
            json_object_object_get_ex(c->md, rel, &doc);
        if (!doc || !json_object_is_type(doc, json_type_object)) {
            /* a hidden array (zarr.h, ZARR_HIDDEN_DOC) */
            if (!c->hidden || !json_object_object_get_ex(c->hidden, rel, &doc) ||
                !json_object_is_type(doc, json_type_object))
                goto done;
            *type = ZARR_NODE_ARRAY;
            if (a) {
                ZARR_TRY(zarr__array_meta_from_v3(doc, where, &m));
                m->hidden = true;
            }
            goto found;
        }
        ZARR_TRY(v3_member(where, doc, type, g, a ? &m : NULL));
    }
    else {
        bool hidden = false;
        rc          = cons_v2_doc(c, rel, ".zarray", &b);
        if (rc == ZARR_ENOTFOUND && (rc = cons_v2_doc(c, rel, ZARR_HIDDEN_DOC, &b)) == ZARR_OK)
            hidden = true;
        if (rc == ZARR_ENOTFOUND) {
            rc = cons_v2_doc(c, rel, ".zgroup", &b);
            if (rc == ZARR_ENOTFOUND) {
                rc = ZARR_OK;
                if (*rel)
                    goto done;
                /* the group itself without a consolidated .zgroup entry */
                ZARR_TRY(zarr_buf_append(&b, "{\"zarr_format\": 2}", 18));
            }
            else if (rc != ZARR_OK)
                goto done;
            *type = ZARR_NODE_GROUP;
        }
        else if (rc != ZARR_OK)
            goto done;
        else
            *type = ZARR_NODE_ARRAY;
        if (g || a) {
            rc = cons_v2_doc(c, rel, ".zattrs", &at);
            if (rc != ZARR_OK && rc != ZARR_ENOTFOUND)
                goto done;
            rc = ZARR_OK;
            if (*type == ZARR_NODE_GROUP && g)
                ZARR_TRY(zarr_group_meta_parse_v2((const char *)b.data, b.size,
                                                  at.size ? (const char *)at.data : NULL, at.size, where, g));
            else if (*type == ZARR_NODE_ARRAY && a) {
                ZARR_TRY(zarr_array_meta_parse_v2((const char *)b.data, b.size,
                                                  at.size ? (const char *)at.data : NULL, at.size, where,
                                                  &m));
                m->hidden = hidden;
            }
        }
    }
found:
    if (format)
        *format = c->format;
    if (m) {
        rc = zarr__array_from_meta(c->store, path, m, a);
        m  = NULL;
    }
done:
    if (rc != ZARR_OK) {
        if (g) {
            zarr_group_meta_free(*g);
            *g = NULL;
        }
        *type = ZARR_NODE_NONE;
    }
    zarr_array_meta_free(m);
    json_object_put(parsed);
    zarr_buf_free(&b);
    zarr_buf_free(&at);
    free(where);
    return rc;
}

int
zarr_consolidated_children(zarr_consolidated *c, const char *path, zarr_list_cb cb, void *ud)
{
    const char         *rel;
    struct json_object *list;
    if (!c || !cb)
        return zarr_error(ZARR_EINVAL, "zarr_consolidated_children: view and callback must not be NULL");
    if (!(rel = cons_rel(c, path)))
        return ZARR_ENOTFOUND;
    if (!json_object_object_get_ex(c->kids, rel, &list))
        return ZARR_OK; /* no children listed */
    for (size_t i = 0, n = json_object_array_length(list); i < n; i++) {
        int r = cb(json_object_get_string(json_object_array_get_idx(list, i)), true, ud);
        if (r)
            return r;
    }
    return ZARR_OK;
}
