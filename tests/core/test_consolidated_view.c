/*
 * test_consolidated_view.c: a hierarchy opened from its consolidated metadata alone (issue 13's "opening
 * a store with 10,000 arrays and consolidated metadata reads one key"). 100 groups of 100 arrays are
 * written and consolidated; a counting store in front of the same memory store then sees
 * zarr_consolidated_open, a walk of every group's children and a load of every node: exactly one get
 * (the consolidated document), no list, no exists, no range read; every node's metadata is what was
 * written, and chunks still come from the store. The consolidated copy is trusted, as documented: a
 * node's own document changed afterwards is not seen, a node the document does not list is absent.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include "h5zarr/zarr.h"
#include "h5zarr/zarr_consolidated.h"
#include "runner.h"
#include "zjson.h"

#include <json-c/json.h>
#include <stdint.h>

#define NGROUPS 100
#define NARRAYS 100 /* per group */

/* ---- a store that forwards to another and counts what it is asked (atomically: pool workers call it) ----
 */
typedef struct counting_store {
    zarr_store  base;
    zarr_store *inner;
    int         gets, ranges, lists, exists, sets;
} counting_store;

static int
cs_get(zarr_store *s, const char *key, zarr_buf *out)
{
    counting_store *c = (counting_store *)s;
    __atomic_add_fetch(&c->gets, 1, __ATOMIC_RELAXED);
    return zarr_store_get(c->inner, key, out);
}
static int
cs_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    counting_store *c = (counting_store *)s;
    __atomic_add_fetch(&c->ranges, 1, __ATOMIC_RELAXED);
    return zarr_store_get_range(c->inner, key, off, len, out);
}
static int
cs_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    counting_store *c = (counting_store *)s;
    __atomic_add_fetch(&c->sets, 1, __ATOMIC_RELAXED);
    return zarr_store_set(c->inner, key, data, n);
}
static int
cs_del(zarr_store *s, const char *key)
{
    return zarr_store_del(((counting_store *)s)->inner, key);
}
static int
cs_del_prefix(zarr_store *s, const char *prefix)
{
    return zarr_store_del_prefix(((counting_store *)s)->inner, prefix);
}
static int
cs_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud)
{
    counting_store *c = (counting_store *)s;
    __atomic_add_fetch(&c->lists, 1, __ATOMIC_RELAXED);
    return zarr_store_list(c->inner, prefix, cb, ud);
}
static int
cs_exists(zarr_store *s, const char *key)
{
    counting_store *c = (counting_store *)s;
    __atomic_add_fetch(&c->exists, 1, __ATOMIC_RELAXED);
    return zarr_store_exists(c->inner, key);
}
static void
cs_destroy(zarr_store *s)
{
    counting_store *c = (counting_store *)s;
    zarr_store_close(c->inner);
    free(c);
}
static const zarr_store_ops cs_ops = {.name       = "counting",
                                      .get        = cs_get,
                                      .get_range  = cs_get_range,
                                      .set        = cs_set,
                                      .del        = cs_del,
                                      .del_prefix = cs_del_prefix,
                                      .list       = cs_list,
                                      .exists     = cs_exists,
                                      .destroy    = cs_destroy};

/* A counting store in front of `inner` (a new reference to it is taken). */
static counting_store *
counting_over(zarr_store *inner)
{
    counting_store *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    zarr_store_ref(inner);
    c->inner         = inner;
    c->base.ops      = &cs_ops;
    c->base.refcount = 1;
    return c;
}

/* 100 groups g00..g99 of 100 int32 arrays a00..a99 (shape 4, one chunk), attribute "i" = the array's
 * number; array g07/a03 holds 7003 + 0..3. Consolidated at the root. */
static int
make_hierarchy(zarr_store *s, int fmt)
{
    zarr_group_meta *g        = NULL;
    uint64_t         shape[1] = {4}, chunks[1] = {4};
    char             path[32];

    ASSERT_OK(zarr_group_meta_new(fmt, &g));
    json_object_object_add(g->attributes, "title", json_object_new_string("scale"));
    ASSERT_OK(zarr_group_write(s, "", g));
    json_object_object_del(g->attributes, "title");
    for (int i = 0; i < NGROUPS; i++) {
        snprintf(path, sizeof path, "g%02d", i);
        ASSERT_OK(zarr_group_write(s, path, g));
        for (int j = 0; j < NARRAYS; j++) {
            zarr_array_meta *m = NULL;
            zarr_array      *a = NULL;
            snprintf(path, sizeof path, "g%02d/a%02d", i, j);
            ASSERT_OK(zarr_array_meta_new(fmt, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m));
            json_object_object_add(m->attributes, "i", json_object_new_int(i * 1000 + j));
            ASSERT_OK(zarr_array_create(s, path, m, false, &a));
            if (i == 7 && j == 3) {
                int32_t     v[4] = {7003, 7004, 7005, 7006};
                zarr_region r;
                zarr_region_all(zarr_array_meta_get(a), &r);
                ASSERT_OK(zarr_array_write(a, &r, v));
            }
            zarr_array_close(a);
        }
    }
    zarr_group_meta_free(g);
    ASSERT_OK(zarr_consolidate(s, ""));
    return 0;
}

static zarr_store *built[4]; /* the hierarchy per format (kept while the process runs) */

typedef struct walk {
    zarr_consolidated *v;
    int                groups, arrays, bad;
    char               where[64];
} walk;

static int walk_group(walk *w, const char *path);

static int
walk_child(const char *name, bool is_dir, void *ud)
{
    walk            *w = ud;
    char             path[64];
    zarr_node_type   t;
    int              fmt;
    zarr_group_meta *g = NULL;
    zarr_array      *a = NULL;
    int              rc;

    if (!is_dir)
        return 0;
    snprintf(path, sizeof path, "%s%s%s", w->where, *w->where ? "/" : "", name);
    if ((rc = zarr_consolidated_load(w->v, path, &t, &fmt, &g, &a)) != ZARR_OK)
        return rc;
    if (t == ZARR_NODE_GROUP && g) {
        char saved[64];
        w->groups++;
        zarr_group_meta_free(g);
        snprintf(saved, sizeof saved, "%s", w->where);
        snprintf(w->where, sizeof w->where, "%s", path);
        rc = walk_group(w, path);
        snprintf(w->where, sizeof w->where, "%s", saved);
        return rc;
    }
    if (t == ZARR_NODE_ARRAY && a) {
        const zarr_array_meta *m = zarr_array_meta_get(a);
        struct json_object    *iv;
        int                    gi = -1, ai = -1;
        sscanf(path, "g%d/a%d", &gi, &ai);
        if (m->ndim != 1 || m->shape[0] != 4 || !json_object_object_get_ex(m->attributes, "i", &iv) ||
            json_object_get_int(iv) != gi * 1000 + ai)
            w->bad++;
        w->arrays++;
        zarr_array_close(a);
        return 0;
    }
    w->bad++; /* listed but not loadable */
    zarr_group_meta_free(g);
    zarr_array_close(a);
    return 0;
}

static int
walk_group(walk *w, const char *path)
{
    return zarr_consolidated_children(w->v, path, walk_child, w);
}

/* Open, walk every group, load every node: one get in all. */
static int
view_case(int fmt, int hint)
{
    zarr_store         *mem = NULL;
    counting_store     *c;
    zarr_consolidated  *v = NULL;
    walk                w = {0};
    zarr_node_type      t;
    zarr_group_meta    *root = NULL;
    struct json_object *title;

    if (!(mem = built[fmt])) {
        /* made once per format for both hints (10,000 arrays take a while) */
        ASSERT_OK(zarr_store_new_mem(&mem));
        if (make_hierarchy(mem, fmt))
            return 1;
        built[fmt] = mem;
    }
    ASSERT((c = counting_over(mem)));
    ASSERT_OK(zarr_consolidated_open(&c->base, "", hint, &v));
    w.v = v;
    ASSERT_OK(zarr_consolidated_load(v, "", &t, NULL, &root, NULL));
    ASSERT(t == ZARR_NODE_GROUP && root);
    ASSERT(json_object_object_get_ex(root->attributes, "title", &title));
    ASSERT_STR(json_object_get_string(title), "scale");
    zarr_group_meta_free(root);
    ASSERT_OK(walk_group(&w, ""));
    ASSERT_EQ_INT(w.groups, NGROUPS);
    ASSERT_EQ_INT(w.arrays, NGROUPS * NARRAYS);
    ASSERT_EQ_INT(w.bad, 0);
    /* v3 and a v2 store opened as v2: the consolidated document alone; v2 detected (hint 0) also looks
     * for a zarr.json first */
    ASSERT_EQ_INT(c->gets, fmt == 2 && hint == 0 ? 2 : 1);
    ASSERT_EQ_INT(c->lists, 0);
    ASSERT_EQ_INT(c->exists, 0);
    ASSERT_EQ_INT(c->ranges, 0);
    ASSERT_EQ_INT(c->sets, 0);
    {
        /* the data: one more get (the chunk) */
        zarr_array *a      = NULL;
        int32_t     got[4] = {0};
        zarr_region r;
        int         before = c->gets;
        ASSERT_OK(zarr_consolidated_load(v, "g07/a03", &t, NULL, NULL, &a));
        ASSERT(t == ZARR_NODE_ARRAY && a);
        zarr_region_all(zarr_array_meta_get(a), &r);
        ASSERT_OK(zarr_array_read(a, &r, got));
        zarr_array_close(a);
        ASSERT(got[0] == 7003 && got[3] == 7006);
        ASSERT_EQ_INT(c->gets - before, 1);
    }
    /* absent and outside: ZARR_OK with nothing, no store access */
    {
        int before = c->gets;
        ASSERT_OK(zarr_consolidated_load(v, "g07/nope", &t, NULL, NULL, NULL));
        ASSERT(t == ZARR_NODE_NONE);
        ASSERT_EQ_INT(c->gets, before);
    }
    zarr_consolidated_close(v);
    zarr_store_close(&c->base);
    return 0;
}

static int
test_v3_one_get(void)
{
    return view_case(3, 3) || view_case(3, 0);
}

static int
test_v2_one_get(void)
{
    return view_case(2, 2) || view_case(2, 0);
}

/* The consolidated copy is trusted: later edits of a node's own document are not seen; a store without
 * consolidated metadata answers ZARR_ENOTFOUND; a group's own view from zarr_group_read reads nothing. */
static int
test_trusted_copy(void)
{
    for (int fmt = 2; fmt <= 3; fmt++) {
        zarr_store         *mem = NULL;
        zarr_consolidated  *v   = NULL;
        zarr_array         *a   = NULL;
        zarr_node_type      t;
        struct json_object *iv;
        zarr_array_meta    *m        = NULL;
        uint64_t            shape[1] = {4}, chunks[1] = {4};

        ASSERT_OK(zarr_store_new_mem(&mem));
        {
            zarr_group_meta *g = NULL;
            ASSERT_OK(zarr_group_meta_new(fmt, &g));
            ASSERT_OK(zarr_group_write(mem, "", g));
            zarr_group_meta_free(g);
        }
        ASSERT_ERR(zarr_consolidated_open(mem, "", fmt, &v), ZARR_ENOTFOUND);
        ASSERT_OK(zarr_array_meta_new(fmt, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m));
        json_object_object_add(m->attributes, "i", json_object_new_int(1));
        ASSERT_OK(zarr_array_create(mem, "x", m, false, &a));
        ASSERT_OK(zarr_consolidate(mem, ""));
        /* changed after consolidation: the node's own document says 2, a new array y appears */
        json_object_object_add(zarr_array_meta_mut(a)->attributes, "i", json_object_new_int(2));
        ASSERT_OK(zarr_array_write_attrs(a));
        zarr_array_close(a);
        ASSERT_OK(zarr_array_meta_new(fmt, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m));
        ASSERT_OK(zarr_array_create(mem, "y", m, false, &a));
        zarr_array_close(a);
        ASSERT_OK(zarr_consolidated_open(mem, "", fmt, &v));
        ASSERT_OK(zarr_consolidated_load(v, "x", &t, NULL, NULL, &a));
        ASSERT(t == ZARR_NODE_ARRAY && a);
        ASSERT(json_object_object_get_ex(zarr_array_meta_get(a)->attributes, "i", &iv));
        ASSERT_EQ_INT(json_object_get_int(iv), 1);
        zarr_array_close(a);
        ASSERT_OK(zarr_consolidated_load(v, "y", &t, NULL, NULL, NULL));
        ASSERT(t == ZARR_NODE_NONE);
        zarr_consolidated_close(v);
        if (fmt == 3) {
            /* from a group already read: no store access needed */
            zarr_group_meta *g = NULL;
            counting_store  *c;
            ASSERT_OK(zarr_group_read(mem, "", &g));
            ASSERT((c = counting_over(mem)));
            ASSERT_OK(zarr_consolidated_from_group(&c->base, "", g, &v));
            zarr_group_meta_free(g);
            ASSERT_OK(zarr_consolidated_load(v, "x", &t, NULL, NULL, &a));
            ASSERT(t == ZARR_NODE_ARRAY && a);
            zarr_array_close(a);
            ASSERT_EQ_INT(c->gets + c->lists + c->exists, 0);
            zarr_consolidated_close(v);
            zarr_store_close(&c->base);
        }
        zarr_store_close(mem);
    }
    return 0;
}

/* A probe of a large zarr.json (a consolidated root) scans its top level for node_type instead of
 * parsing it; what the scan can't vouch for is parsed, with the parser's verdict. */
static int
test_probe_large_document(void)
{
    static const struct {
        const char    *head, *tail;
        zarr_node_type type;
        int            rc;
    } cases[] = {
        {"{\"zarr_format\": 3, \"node_type\": \"array\", \"pad\": \"", "\"}", ZARR_NODE_ARRAY, ZARR_OK},
        /* nested node_type keys don't count; the top-level one after them does */
        {"{\"a\": {\"node_type\": \"array\", \"b\": [1, {\"c\": \"}\"}]}, \"pad\": \"",
         "\", \"zarr_format\": 3, \"node_type\": \"group\"}", ZARR_NODE_GROUP, ZARR_OK},
        /* an escaped key: parsed (json-c decodes it to node_type) */
        {"{\"zarr_format\": 3, \"node\\u005ftype\": \"group\", \"pad\": \"", "\"}", ZARR_NODE_GROUP, ZARR_OK},
        /* not closed: parsed, and the parser refuses it */
        {"{\"zarr_format\": 3, \"node_type\": \"group\", \"pad\": \"", "\"", ZARR_NODE_NONE, ZARR_EMETA},
        /* an unknown node type: the parser's message */
        {"{\"zarr_format\": 3, \"node_type\": \"other\", \"pad\": \"", "\"}", ZARR_NODE_NONE, ZARR_EMETA},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zarr_store    *mem = NULL;
        size_t         hl = strlen(cases[i].head), tl = strlen(cases[i].tail), pad = 100000;
        char          *doc = malloc(hl + pad + tl);
        zarr_node_type t   = ZARR_NODE_NONE;
        int            fmt = 0, rc;
        ASSERT(doc);
        memcpy(doc, cases[i].head, hl);
        memset(doc + hl, 'x', pad);
        memcpy(doc + hl + pad, cases[i].tail, tl);
        ASSERT_OK(zarr_store_new_mem(&mem));
        ASSERT_OK(zarr_store_set(mem, "n/zarr.json", doc, hl + pad + tl));
        free(doc);
        rc = zarr_node_probe(mem, "n", &t, &fmt);
        if (rc != cases[i].rc)
            FAILF("case %zu: probe returned %d, expected %d (%s)", i, rc, cases[i].rc, zarr_errmsg());
        if (rc == ZARR_OK && (t != cases[i].type || fmt != 3))
            FAILF("case %zu: type %d format %d", i, (int)t, fmt);
        zarr_store_close(mem);
    }
    return 0;
}

/* ---- consolidating from documents the caller holds (zarr_consolidate_from) ---- */
typedef struct held {
    zarr_store *inner;  /* where the held documents come from (not counted) */
    const char *except; /* a group whose children and own document are not held, or NULL */
} held;

/* The node at `path` as `h` holds it (*g or *a, the caller frees): 1 when it does not hold it. */
static int
held_load(held *h, const char *path, bool *is_group, int *format, zarr_group_meta **g, zarr_array **a)
{
    zarr_node_type t;
    int            rc;

    if (h->except && strncmp(path, h->except, strlen(h->except)) == 0)
        return 1; /* the group and everything below it: read from the store */
    if ((rc = zarr_node_load(h->inner, path, 0, &t, format, g, a)) != ZARR_OK)
        return rc;
    *is_group = t == ZARR_NODE_GROUP;
    return ZARR_OK;
}

static int
held_node(void *ud, const char *path, bool *is_group, int *format, char **doc, char **attrs)
{
    zarr_group_meta *g = NULL;
    zarr_array      *a = NULL;
    int              rc;

    if ((rc = held_load(ud, path, is_group, format, &g, &a)) != ZARR_OK)
        return rc;
    if (g)
        rc = *format == 3 ? zarr_group_meta_to_v3(g, doc) : zarr_group_meta_to_v2(g, doc, attrs);
    else
        rc = *format == 3 ? zarr_array_meta_to_v3(zarr_array_meta_get(a), doc)
                          : zarr_array_meta_to_v2(zarr_array_meta_get(a), doc, attrs);
    zarr_group_meta_free(g);
    zarr_array_close(a);
    return rc;
}

/* held_node's v3 form (node_v3): the node's document as an object. The held description is changed
 * after the copy is made (an attribute added), so a copy that shares anything with it shows the change
 * in the consolidated document. */
static int
held_node_v3(void *ud, const char *path, bool *is_group, int *format, struct json_object **doc)
{
    zarr_group_meta *g = NULL;
    zarr_array      *a = NULL;
    int              rc;

    if ((rc = held_load(ud, path, is_group, format, &g, &a)) != ZARR_OK)
        return rc;
    if (*format != 3)
        rc = ZARR_OK;
    else if (g) {
        rc = zarr_group_meta_to_v3_copy(g, doc);
        json_object_object_add(g->attributes, "changed", json_object_new_boolean(1));
        if (g->reserved)
            json_object_object_add(g->reserved, "changed", json_object_new_boolean(1));
    }
    else {
        zarr_array_meta *m = (zarr_array_meta *)zarr_array_meta_get(a);
        rc                 = zarr_array_meta_to_v3_copy(m, doc);
        json_object_object_add(m->attributes, "changed", json_object_new_boolean(1));
    }
    zarr_group_meta_free(g);
    zarr_array_close(a);
    return rc;
}

/* held_node's text form (node_v3_text): the node's document printed into the consolidated text. */
static int
held_node_v3_text(void *ud, const char *path, bool *is_group, int *format, int level, zarr_buf *out)
{
    zarr_group_meta *g = NULL;
    zarr_array      *a = NULL;
    int              rc;

    if ((rc = held_load(ud, path, is_group, format, &g, &a)) != ZARR_OK)
        return rc;
    if (a && zarr_array_meta_get(a)->hidden)
        rc = 1; /* a hidden array: the core reads its document (as the connector's source answers) */
    else if (*format != 3)
        rc = ZARR_OK;
    else
        rc = g ? zarr_group_meta_write_v3(g, level, out)
               : zarr_array_meta_write_v3(zarr_array_meta_get(a), level, out);
    zarr_group_meta_free(g);
    zarr_array_close(a);
    return rc;
}

static int
held_children(void *ud, const char *path, zarr_list_cb cb, void *cbud)
{
    held *h = ud;
    if (h->except && strcmp(path, h->except) == 0)
        return 1;
    return zarr_group_children(h->inner, path, cb, cbud);
}

/* The consolidated document at the root, as stored. */
static char *
root_doc(zarr_store *s, int fmt)
{
    zarr_buf b = ZARR_BUF_INIT;
    char    *t = NULL;
    if (zarr_store_get(s, fmt == 3 ? "zarr.json" : ".zmetadata", &b) == ZARR_OK && (t = malloc(b.size + 1))) {
        memcpy(t, b.data, b.size);
        t[b.size] = '\0';
    }
    zarr_buf_free(&b);
    return t;
}

#define SGROUPS 5
#define SARRAYS 20

/* Everything held: no get, no list, no probe, and the document zarr_consolidate writes, byte for byte.
 * One group not held: the store is read for it and its arrays only. A smaller hierarchy than the view's
 * (SGROUPS x SARRAYS, groups with and without attributes, arrays with attributes), not consolidated. */
static int
from_memory_case(int fmt, int objects)
{
    zarr_store             *mem = NULL;
    counting_store         *c;
    held                    h        = {NULL, NULL};
    zarr_consolidate_source src      = {held_node, held_children, &h, objects == 1 ? held_node_v3 : NULL,
                                   objects == 2 ? held_node_v3_text : NULL};
    struct json_object     *md       = NULL;
    zarr_group_meta        *g        = NULL;
    uint64_t                shape[1] = {4}, chunks[1] = {2};
    char                    path[32], *want, *got;

    ASSERT_OK(zarr_store_new_mem(&mem));
    ASSERT_OK(zarr_group_meta_new(fmt, &g));
    json_object_object_add(g->attributes, "title", json_object_new_string("small"));
    ASSERT_OK(zarr_group_write(mem, "", g));
    for (int i = 0; i < SGROUPS; i++) {
        snprintf(path, sizeof path, "g%d", i);
        if (i == 1)
            json_object_object_del(g->attributes, "title");
        ASSERT_OK(zarr_group_write(mem, path, g));
        for (int j = 0; j < SARRAYS; j++) {
            zarr_array_meta *m = NULL;
            zarr_array      *a = NULL;
            snprintf(path, sizeof path, "g%d/a%02d", i, j);
            ASSERT_OK(zarr_array_meta_new(fmt, 1, shape, chunks, zarr_dtype_new(ZARR_FLOAT, 8), &m));
            json_object_object_add(m->attributes, "units", json_object_new_string("K"));
            ASSERT_OK(zarr_array_create(mem, path, m, false, &a));
            zarr_array_close(a);
        }
    }
    zarr_group_meta_free(g);
    h.inner = mem;
    ASSERT_OK(zarr_consolidate(mem, "")); /* what the store gives */
    ASSERT((want = root_doc(mem, fmt)));
    ASSERT((c = counting_over(mem)));
    /* objects 2: written as text (no tree asked for), each node's text from node_v3_text */
    ASSERT_OK(zarr_consolidate_from(&c->base, "", &src, objects == 2 ? NULL : &md, NULL));
    ASSERT(objects == 2 ||
           (md && json_object_object_length(md) ==
                      (fmt == 3 ? SGROUPS + SGROUPS * SARRAYS : 2 + SGROUPS + 1 + 2 * SGROUPS * SARRAYS)));
    json_object_put(md);
    ASSERT_EQ_INT(c->gets, 0);
    ASSERT_EQ_INT(c->lists, 0);
    ASSERT_EQ_INT(c->exists, 0);
    ASSERT_EQ_INT(c->ranges, 0);
    ASSERT_EQ_INT(c->sets, 1);
    ASSERT((got = root_doc(mem, fmt)));
    ASSERT_STR(got, want);
    free(got);
    h.except = "g3";
    c->gets = c->lists = c->exists = c->sets = 0;
    ASSERT_OK(zarr_consolidate_from(&c->base, "", &src, NULL, NULL));
    ASSERT_EQ_INT(c->lists, 1); /* g3's children */
    /* g3 and its arrays alone: v3 two gets each (the listing probes each child); v2 three documents each, an
     * absent one (an array's .zgroup) also looked for in the consolidated copies of its ancestors */
    if (c->gets < SARRAYS + 1 || c->gets > (fmt == 3 ? 2 : 10) * (SARRAYS + 1))
        FAILF("format %d: %d gets with g3 not held", fmt, c->gets);
    ASSERT((got = root_doc(mem, fmt)));
    ASSERT_STR(got, want);
    free(got);
    free(want);
    zarr_store_close(&c->base);
    zarr_store_close(mem);
    return 0;
}

/* Consolidated metadata written as text (zarr_consolidate, no tree asked for) against the tree's dump
 * (zarr_consolidate_from with md_out): the same bytes for a hierarchy of arrays of many data types, fill
 * values and codecs, attributes needing escapes, dimension names, a hidden array, a root and a group with
 * the reserved object and extension keys, and a group holding consolidated metadata of its own (left out
 * of the root's); also taking every node from node_v3_text. Each member of the written document equals
 * its node's own zarr.json (the group's without its consolidated metadata). */
static const char *const text_arrays[][2] = {
    {"a_i8",
     "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[5],\"data_type\":\"int8\",\"chunk_grid\":"
     "{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2]}},\"chunk_key_encoding\":{\"name\":"
     "\"default\",\"configuration\":{\"separator\":\"/\"}},\"fill_value\":-3,\"codecs\":[{\"name\":"
     "\"bytes\"}],\"attributes\":{\"a \\\"q\\\"\\n\":[1,-2,3.5,null,true,{}],\"\\u00e9\":\"\\t\"},"
     "\"dimension_names\":[\"x\"]}"},
    {"g0/a_u64",
     "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[3,4],\"data_type\":\"uint64\","
     "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[3,2]}},"
     "\"chunk_key_encoding\":{\"name\":\"v2\",\"configuration\":{\"separator\":\".\"}},"
     "\"fill_value\":18446744073709551615,\"codecs\":[{\"name\":\"bytes\",\"configuration\":"
     "{\"endian\":\"big\"}},{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}],"
     "\"attributes\":{},\"dimension_names\":[null,\"y\"]}"},
    {"g0/a_f32", "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[8],\"data_type\":\"float32\","
                 "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[8]}},"
                 "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
                 "\"fill_value\":\"NaN\",\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
                 "\"little\"}},{\"name\":\"crc32c\"}],\"attributes\":{\"units\":\"K\"},"
                 "\"_h5zarr\":{\"must_understand\":false,\"fill_default\":true}}"},
    {"g0/a_f64",
     "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[],\"data_type\":\"float64\","
     "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[]}},"
     "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
     "\"fill_value\":\"-Infinity\",\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
     "\"little\"}}],\"attributes\":{\"d\":0.1,\"big\":18446744073709551615,"
     "\"neg\":-9223372036854775808},\"my_ext\":{\"must_understand\":false,\"v\":[1,{\"a\":\"b\"}]}}"},
    {"g1/s", "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[6],\"data_type\":\"string\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[3]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":\"a\\nb\",\"codecs\":[{\"name\":\"vlen-utf8\"}],\"attributes\":{}}"},
    {"g1/sub/sh",
     "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[16,16],\"data_type\":\"int16\","
     "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[8,8]}},"
     "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
     "\"fill_value\":-1,\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":"
     "{\"chunk_shape\":[4,4],\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
     "\"little\"}}],\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":"
     "\"little\"}},{\"name\":\"crc32c\"}],\"index_location\":\"end\"}}],\"attributes\":{\"\":\"\"},"
     "\"dimension_names\":[null,null]}"},
    {"g1/b", "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[2],\"data_type\":\"bool\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2]}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":true,\"codecs\":[{\"name\":\"bytes\"}],\"attributes\":{}}"},
};

/* The member `rel` of the parsed consolidated document `md` equals the node's own zarr.json. */
static int
member_is_own_doc(zarr_store *s, struct json_object *md, const char *rel)
{
    zarr_buf            b   = ZARR_BUF_INIT;
    struct json_object *own = NULL, *mem = NULL;
    char                key[128];
    snprintf(key, sizeof key, "%s/zarr.json", rel);
    ASSERT_OK(zarr_store_get(s, key, &b));
    ASSERT_OK(zarr__json_parse((const char *)b.data, b.size, key, &own));
    json_object_object_del(own, "consolidated_metadata");
    if (!json_object_object_get_ex(md, rel, &mem) || !zarr__json_equal(own, mem))
        FAILF("member '%s' is not the node's own document", rel);
    json_object_put(own);
    zarr_buf_free(&b);
    return 0;
}

static int
test_consolidate_text(void)
{
    static const char *const groups[] = {"g0", "g1", "g1/sub"};
    zarr_store              *mem      = NULL;
    zarr_group_meta         *g        = NULL;
    struct json_object      *md = NULL, *hid = NULL, *doc = NULL, *m;
    held                     h   = {NULL, NULL};
    zarr_consolidate_source  src = {NULL, held_children, &h, NULL, held_node_v3_text};
    char                    *tree_text, *text;

    ASSERT_OK(zarr_store_new_mem(&mem));
    h.inner = mem;
    ASSERT_OK(zarr_group_meta_new(3, &g));
    json_object_object_add(g->attributes, "title", json_object_new_string("t\"\\\x01"));
    g->reserved = json_object_new_object();
    json_object_object_add(g->reserved, "links", json_object_new_string("g0"));
    g->extra = json_object_new_object();
    json_object_object_add(g->extra, "ext", json_object_new_object());
    json_object_object_add(json_object_object_get(g->extra, "ext"), "must_understand",
                           json_object_new_boolean(0));
    ASSERT_OK(zarr_group_write(mem, "", g));
    for (size_t i = 0; i < sizeof groups / sizeof *groups; i++) {
        json_object_object_add(g->attributes, "n", json_object_new_int((int)i));
        ASSERT_OK(zarr_group_write(mem, groups[i], g));
    }
    zarr_group_meta_free(g);
    for (size_t i = 0; i < sizeof text_arrays / sizeof *text_arrays; i++) {
        zarr_array_meta *am = NULL;
        zarr_array      *a  = NULL;
        if (zarr_array_meta_parse_v3(text_arrays[i][1], strlen(text_arrays[i][1]), text_arrays[i][0], &am))
            FAILF("%s: %s", text_arrays[i][0], zarr_errmsg());
        am->hidden = i == 6; /* g1/b: a hidden array */
        ASSERT_OK(zarr_array_create(mem, text_arrays[i][0], am, false, &a));
        zarr_array_close(a);
    }
    ASSERT_OK(zarr_consolidate(mem, "g1")); /* g1 holds consolidated metadata of its own */
    ASSERT_OK(zarr_consolidate_from(mem, "", NULL, &md, &hid)); /* the tree */
    ASSERT(md && json_object_object_length(md) == 9 && hid && json_object_object_length(hid) == 1);
    ASSERT((tree_text = root_doc(mem, 3)));
    ASSERT_OK(zarr_consolidate(mem, "")); /* written as text */
    ASSERT((text = root_doc(mem, 3)));
    ASSERT_STR(text, tree_text);
    free(text);
    ASSERT_OK(zarr_consolidate_from(mem, "", &src, NULL, NULL)); /* every node from node_v3_text */
    ASSERT((text = root_doc(mem, 3)));
    ASSERT_STR(text, tree_text);
    /* each member is its node's own document; nothing nested */
    ASSERT_OK(zarr__json_parse(text, strlen(text), "zarr.json", &doc));
    m = json_object_object_get(json_object_object_get(doc, "consolidated_metadata"), "metadata");
    ASSERT(m && zarr__json_equal(m, md));
    for (size_t i = 0; i < sizeof groups / sizeof *groups; i++)
        ASSERT(member_is_own_doc(mem, m, groups[i]) == 0);
    for (size_t i = 0; i < 6; i++)
        ASSERT(member_is_own_doc(mem, m, text_arrays[i][0]) == 0);
    ASSERT(!json_object_object_get_ex(json_object_object_get(m, "g1"), "consolidated_metadata", NULL));
    ASSERT(zarr__json_equal(
        json_object_object_get(json_object_object_get(doc, "consolidated_metadata"), "h5zarr_hidden"), hid));
    ASSERT_STR(
        json_object_get_string(json_object_object_get(json_object_object_get(doc, "attributes"), "title")),
        "t\"\\\x01");
    json_object_put(doc);
    json_object_put(md);
    json_object_put(hid);
    free(text);
    free(tree_text);
    zarr_store_close(mem);
    return 0;
}

static int
test_consolidate_from_memory(void)
{
    /* v3 also from the documents as objects (node_v3): the same bytes, nothing shared; and as text
     * (node_v3_text) */
    return from_memory_case(3, 0) || from_memory_case(3, 1) || from_memory_case(3, 2) ||
           from_memory_case(2, 0);
}

/* zarr__json_parse_wide (a large root zarr.json's consolidated members parsed on the pool) against
 * zarr__json_parse: the same result, message and tree for well-formed documents, for each thing the
 * scanner leaves to json-c (comments, single quotes, escaped keys, duplicate members, the path's key
 * twice, trailing commas, deep nesting), for a member that does not parse (its message gives the
 * byte of the whole text) and for text after the document; then a generated document of 3,000
 * members. */
/* The wide parse's job on the default pool, as zarr/node.c runs it. */
static void
run_on_pool(zarr_task_fn fn, void *job, size_t n)
{
    (void)zarr_pool_run(zarr_pool_default(), fn, job, n, false);
}

static int
wide_same(const char *text, size_t n, const char *const *keys, int nkeys, int want_rc)
{
    struct json_object *a = NULL, *b = NULL;
    char                ma[1024], mb[1024];
    int                 ra, rb;

    zarr_error_clear(); /* a success leaves the message as it was: compared from empty */
    ra = zarr__json_parse(text, n, "doc", &a);
    zarr_error_save(ma, sizeof ma);
    zarr_error_clear();
    rb = zarr__json_parse_wide(text, n, "doc", keys, nkeys, 1, run_on_pool, &b);
    zarr_error_save(mb, sizeof mb);
    if (ra != rb || strcmp(ma, mb) != 0)
        FAILF("'%.60s': wide %d '%s', whole %d '%s'", text, rb, mb, ra, ma);
    ASSERT_EQ_INT(ra, want_rc);
    if (ra == ZARR_OK) {
        char *da = zarr__json_dump(a), *db = zarr__json_dump(b);
        ASSERT(da && db);
        if (strcmp(da, db) != 0)
            FAILF("'%.60s': wide tree\n%s\nwhole tree\n%s", text, db, da);
        free(da);
        free(db);
    }
    json_object_put(a);
    json_object_put(b);
    zarr_error_clear();
    return 0;
}

static int
test_wide_parse(void)
{
    static const char *const v3[] = {"consolidated_metadata", "metadata"}, *const v2[] = {"metadata"};
    static const struct {
        const char *text;
        int         rc;
    } cases[] = {
        {"{\"zarr_format\": 3, \"consolidated_metadata\": {\"kind\": \"inline\", \"metadata\": {\"a\": "
         "{\"x\": 1, "
         "\"y\": [1, 2.50, -0.0, 1e300, NaN, -Infinity, true, null]}, \"b/c\": \"s\\u00e9\\n\", \"d\": {}}}, "
         "\"attributes\": {\"t\": 1}}\n",
         ZARR_OK},
        {"{\"consolidated_metadata\": {\"metadata\": {\"a\": [1, 2, \"b\": 3}}}", ZARR_EMETA},
        {"{\"consolidated_metadata\": {\"metadata\": {\"a\": 1, \"b\": {\"q\": 2}, \"a\": 3}}}", ZARR_OK},
        {"{\"consolidated_metadata\": {\"metadata\": {\"a\": /* c */ 1, \"b\": 2}}}", ZARR_OK},
        {"{\"consolidated_metadata\": {\"metadata\": {\"a\": 'x', \"b\": 2}}}", ZARR_OK},
        {"{\"consolidated_metadata\": {\"metadata\": {\"a\\u0041\": 1, \"b\": 2}}}", ZARR_OK},
        {"{\"consolidated_metadata\": {\"metadata\": {\"a\": 1, \"b\": 2,}}}", ZARR_OK},
        {"{\"consolidated_metadata\": {\"metadata\": {\"a\": 1}}, \"consolidated_metadata\": {\"metadata\": "
         "{\"b\": 2}}}",
         ZARR_OK},
        {"{\"consolidated_metadata\": {\"metadata\": {\"a\": 123456789012345678901234, \"b\": 2}}}",
         ZARR_EMETA},
        {"{\"consolidated_metadata\": {\"metadata\": {\"a\": 1, \"b\": 2}}} x", ZARR_EMETA},
        {"{\"consolidated_metadata\": {\"metadata\": {\"a\": 1, \"b\": tru}}}", ZARR_EMETA},
        {"{\"consolidated_metadata\": {\"metadata\": {\"a\": 1 2}}}", ZARR_EMETA},
        {"{\"consolidated_metadata\": {\"metadata\": []}}", ZARR_OK},
        {"{\"consolidated_metadata\": [], \"metadata\": {\"a\": 1}}", ZARR_OK},
        {"{\"consolidated_metadata\": {\"metadata\": {\"a\": \"\\\"}\", \"b\": [\"]\"]}}}", ZARR_OK},
        {"{\"consolidated_metadata\": {\"metadata\": {\"a\": 1, \"b\": 2}", ZARR_EMETA},
        {"", ZARR_EMETA},
        {"{}", ZARR_OK},
    };
    char  *big, *deep;
    size_t n = 0, cap = 3000 * 200 + 4096;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (wide_same(cases[i].text, strlen(cases[i].text), v3, 2, cases[i].rc))
            return 1;
    {
        const char *t = "{\"metadata\": {\"a/.zarray\": {\"chunks\": [1]}, \"a/.zattrs\": {}}, "
                        "\"zarr_consolidated_format\": 1}";
        if (wide_same(t, strlen(t), v2, 1, ZARR_OK))
            return 1;
    }
    /* a member nested past the depth json-c allows the whole document */
    ASSERT((deep = malloc(2 * 300 + 128)));
    n = (size_t)sprintf(deep, "{\"consolidated_metadata\": {\"metadata\": {\"a\": ");
    for (int d = 0; d < 300; d++)
        deep[n++] = '[';
    for (int d = 0; d < 300; d++)
        deep[n++] = ']';
    n += (size_t)sprintf(deep + n, "}}}");
    if (wide_same(deep, n, v3, 2, ZARR_EMETA))
        return 1;
    free(deep);
    /* many members, as a root zarr.json of consolidated arrays */
    ASSERT((big = malloc(cap)));
    n = (size_t)sprintf(big,
                        "{\n  \"zarr_format\": 3,\n  \"node_type\": \"group\",\n  \"consolidated_metadata\": "
                        "{\n    \"kind\": \"inline\",\n    \"metadata\": {");
    for (int i = 0; i < 3000; i++)
        n += (size_t)sprintf(
            big + n,
            "%s\n      \"g%02d/a%04d\": {\"node_type\": \"array\", \"shape\": [%d], \"attributes\": "
            "{\"v\": %d.5, \"s\": \"x\\ty\"}}",
            i ? "," : "", i % 30, i, i, -i);
    n += (size_t)sprintf(big + n, "\n    }\n  },\n  \"attributes\": {}\n}\n");
    if (wide_same(big, n, v3, 2, ZARR_OK))
        return 1;
    { /* no runner: the members parsed on the caller, the same tree */
        struct json_object *a = NULL, *b = NULL;
        char               *da, *db;
        ASSERT_OK(zarr__json_parse(big, n, "doc", &a));
        ASSERT_OK(zarr__json_parse_wide(big, n, "doc", v3, 2, 1, NULL, &b));
        da = zarr__json_dump(a);
        db = zarr__json_dump(b);
        ASSERT(da && db);
        ASSERT_STR(db, da);
        free(da);
        free(db);
        json_object_put(a);
        json_object_put(b);
    }
    *strchr(big + n / 2, ':') = '#'; /* a member broken in the middle: the whole text's message */
    if (wide_same(big, n, v3, 2, ZARR_EMETA))
        return 1;
    free(big);
    return 0;
}

/* zarr_consolidated_from_doc (a large root zarr.json made into a view from its text, the members made
 * into nodes as they are parsed): the same nodes as zarr_consolidated_open, no store access, a node
 * asked for again parsed again, a member's bad metadata reported by its load with
 * zarr_consolidated_open's message; not taken (ZARR_ENOTFOUND) for a member that is no JSON, two
 * members of one name, and a small document. */
static int
load_msg(zarr_consolidated *v, const char *path, char *msg, size_t n)
{
    zarr_node_type t;
    zarr_array    *a = NULL;
    int            rc;
    zarr_error_clear();
    rc = zarr_consolidated_load(v, path, &t, NULL, NULL, &a);
    zarr_error_save(msg, n);
    zarr_array_close(a);
    zarr_error_clear();
    return rc;
}

static int
test_from_doc(void)
{
    zarr_store         *mem = built[3], *bad = NULL;
    counting_store     *c;
    zarr_consolidated  *v = NULL, *w2 = NULL;
    zarr_buf            doc = ZARR_BUF_INIT;
    walk                w   = {0};
    zarr_node_type      t;
    zarr_group_meta    *root = NULL;
    zarr_array         *a    = NULL;
    struct json_object *title;
    char               *text, *at, ma[512], mb[512];
    int32_t             got[4] = {0};
    zarr_region         r;

    if (!mem) {
        ASSERT_OK(zarr_store_new_mem(&mem));
        if (make_hierarchy(mem, 3))
            return 1;
        built[3] = mem;
    }
    ASSERT_OK(zarr_store_get(mem, "zarr.json", &doc));
    ASSERT(doc.size >= (256u << 10));
    ASSERT((c = counting_over(mem)));
    ASSERT_OK(zarr_consolidated_from_doc(&c->base, "", doc.data, doc.size, &v));
    ASSERT_EQ_INT(c->gets + c->lists + c->exists + c->ranges + c->sets, 0); /* the text alone */
    ASSERT_OK(zarr_consolidated_load(v, "", &t, NULL, &root, NULL));
    ASSERT(t == ZARR_NODE_GROUP && root);
    ASSERT(json_object_object_get_ex(root->attributes, "title", &title));
    ASSERT_STR(json_object_get_string(title), "scale");
    ASSERT(root->consolidated && json_object_object_length(root->consolidated) == 0);
    zarr_group_meta_free(root);
    ASSERT_OK(zarr_consolidated_load(v, "g07/a03", &t, NULL, NULL, NULL)); /* the type only: not taken */
    ASSERT(t == ZARR_NODE_ARRAY);
    w.v = v;
    ASSERT_OK(walk_group(&w, "")); /* every node taken as made ahead; shapes and attributes checked */
    ASSERT_EQ_INT(w.groups, NGROUPS);
    ASSERT_EQ_INT(w.arrays, NGROUPS * NARRAYS);
    ASSERT_EQ_INT(w.bad, 0);
    w.groups = w.arrays = 0;
    ASSERT_OK(walk_group(&w, "")); /* again: each member's text parsed again, the same nodes */
    ASSERT_EQ_INT(w.groups, NGROUPS);
    ASSERT_EQ_INT(w.arrays, NGROUPS * NARRAYS);
    ASSERT_EQ_INT(w.bad, 0);
    ASSERT_OK(zarr_consolidated_load(v, "g07/a03", &t, NULL, NULL, &a));
    ASSERT(t == ZARR_NODE_ARRAY && a);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_read(a, &r, got)); /* the chunk from the store */
    ASSERT(got[0] == 7003 && got[1] == 7004 && got[2] == 7005 && got[3] == 7006);
    zarr_array_close(a);
    ASSERT_EQ_INT(c->gets, 1);
    ASSERT_OK(zarr_consolidated_load(v, "g07/nope", &t, NULL, NULL, NULL));
    ASSERT(t == ZARR_NODE_NONE);
    zarr_consolidated_close(v);
    v = NULL;

    ASSERT((text = malloc(doc.size + 1)));
    memcpy(text, doc.data, doc.size);
    text[doc.size] = '\0';
    /* g05/a05 with a data type no reader knows: taken, and its load fails as zarr_consolidated_open's */
    ASSERT((at = strstr(text, "\"g05/a05\": {")) && (at = strstr(at, "\"int32\"")));
    memcpy(at, "\"int99\"", 7);
    ASSERT_OK(zarr_store_new_mem(&bad));
    ASSERT_OK(zarr_store_set(bad, "zarr.json", text, doc.size));
    ASSERT_OK(zarr_consolidated_from_doc(bad, "", text, doc.size, &v));
    ASSERT_OK(zarr_consolidated_open(bad, "", 3, &w2));
    ASSERT(load_msg(v, "g05/a05", ma, sizeof ma) != ZARR_OK);
    ASSERT(load_msg(w2, "g05/a05", mb, sizeof mb) != ZARR_OK);
    ASSERT_STR(ma, mb);
    ASSERT(strstr(ma, "g05/a05") != NULL);
    ASSERT_OK(load_msg(v, "g05/a04", ma, sizeof ma)); /* its neighbours load */
    zarr_consolidated_close(v);
    zarr_consolidated_close(w2);
    v = w2 = NULL;
    memcpy(at, "\"int32\"", 7);
    /* a member that is no JSON: not taken (the whole document's parse says what is wrong) */
    ASSERT((at = strstr(text, "\"g05/a05\": {")) && (at = strstr(at, "\"shape\"")));
    ASSERT(at[9] == '[' && at[10] == '\n');
    at[10] = 'x'; /* "shape": [x */
    ASSERT(zarr_consolidated_from_doc(bad, "", text, doc.size, &v) == ZARR_ENOTFOUND && !v);
    at[10] = '\n';
    ASSERT_OK(zarr_consolidated_from_doc(bad, "", text, doc.size, &v)); /* white space again: taken */
    zarr_consolidated_close(v);
    v = NULL;
    /* two members of one name: not taken (json-c's answer, from the whole parse) */
    ASSERT((at = strstr(text, "\"g05/a05\": {")));
    memcpy(at, "\"g05/a04\"", 9);
    ASSERT(zarr_consolidated_from_doc(bad, "", text, doc.size, &v) == ZARR_ENOTFOUND && !v);
    /* a small document: not taken */
    ASSERT(zarr_consolidated_from_doc(bad, "", text, 1000, &v) == ZARR_ENOTFOUND && !v);
    free(text);
    zarr_store_close(bad);
    zarr_store_close(&c->base);
    zarr_buf_free(&doc);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(wide_parse),       TEST_ENTRY(probe_large_document),
    TEST_ENTRY(v3_one_get),       TEST_ENTRY(v2_one_get),
    TEST_ENTRY(trusted_copy),     TEST_ENTRY(consolidate_from_memory),
    TEST_ENTRY(consolidate_text), TEST_ENTRY(from_doc),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
