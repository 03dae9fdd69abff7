/*
 * test_nodes.c: finding and opening nodes the cheap way. A probe of an absent path is a success that
 * sets no error message (on directory, memory and other stores) and reads each ancestor's
 * consolidated metadata once; an open told the node's format (zarr_array_open_format,
 * zarr_group_read_format) gives the same node as the probing open, also when the hint is wrong or
 * only consolidated metadata describes the node; opening a group as an array still says so.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include "h5zarr/zarr.h"
#include "h5zarr/zarr_consolidated.h"
#include "runner.h"
#include "zjson.h"

#include <pthread.h>
#include <stdint.h>

/* ---- a store of another kind: forwards to a memory store and counts the gets of each key.
 * zarr_node_load_many calls it from the pool's workers, so the counts are kept under a lock. ---- */
#define MAX_KEYS 64

typedef struct counting_store {
    zarr_store      base;
    zarr_store     *inner;
    char           *keys[MAX_KEYS];
    int             gets[MAX_KEYS];
    int             nkeys, total, exists;
    pthread_mutex_t mu;
} counting_store;

static int
cs_get(zarr_store *s, const char *key, zarr_buf *out)
{
    counting_store *c = (counting_store *)s;
    int             i;
    pthread_mutex_lock(&c->mu);
    for (i = 0; i < c->nkeys && strcmp(c->keys[i], key) != 0; i++)
        ;
    if (i == c->nkeys && c->nkeys < MAX_KEYS)
        c->keys[c->nkeys++] = strdup(key);
    if (i < MAX_KEYS)
        c->gets[i]++;
    c->total++;
    pthread_mutex_unlock(&c->mu);
    return zarr_store_get(c->inner, key, out); /* sets a message when the key is missing */
}
static int
cs_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    return zarr_store_get_range(((counting_store *)s)->inner, key, off, len, out);
}
static int
cs_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    return zarr_store_set(((counting_store *)s)->inner, key, data, n);
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
    return zarr_store_list(((counting_store *)s)->inner, prefix, cb, ud);
}
static int
cs_exists(zarr_store *s, const char *key)
{
    counting_store *c = (counting_store *)s;
    pthread_mutex_lock(&c->mu);
    c->exists++;
    pthread_mutex_unlock(&c->mu);
    return zarr_store_exists(((counting_store *)s)->inner, key);
}
static void
cs_destroy(zarr_store *s)
{
    counting_store *c = (counting_store *)s;
    for (int i = 0; i < c->nkeys; i++)
        free(c->keys[i]);
    zarr_store_close(c->inner);
    pthread_mutex_destroy(&c->mu);
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

static counting_store *
counting_new(void)
{
    counting_store *c = calloc(1, sizeof *c);
    if (!c || zarr_store_new_mem(&c->inner) != ZARR_OK) {
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    c->base.ops      = &cs_ops;
    c->base.refcount = 1;
    return c;
}

static void
counting_reset(counting_store *c)
{
    for (int i = 0; i < c->nkeys; i++)
        free(c->keys[i]);
    c->nkeys = c->total = c->exists = 0;
    memset(c->gets, 0, sizeof c->gets);
}

/* ---- helpers ---- */

/* Groups "" and "g" and the array "g/a" (int16, shape 6, chunks 4, attribute "units", data 0..5). */
static int
make_tree(zarr_store *s, int fmt)
{
    zarr_group_meta *g        = NULL;
    zarr_array_meta *m        = NULL;
    zarr_array      *a        = NULL;
    uint64_t         shape[1] = {6}, chunks[1] = {4};
    int16_t          v[6] = {0, 1, 2, 3, 4, 5};
    zarr_region      r;

    ASSERT_OK(zarr_group_meta_new(fmt, &g));
    ASSERT_OK(zarr_group_write(s, "", g));
    json_object_object_add(g->attributes, "title", json_object_new_string("sub"));
    ASSERT_OK(zarr_group_write(s, "g", g));
    zarr_group_meta_free(g);
    ASSERT_OK(zarr_array_meta_new(fmt, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 2), &m));
    json_object_object_add(m->attributes, "units", json_object_new_string("m"));
    ASSERT_OK(zarr_array_create(s, "g/a", m, false, &a));
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, v));
    zarr_array_close(a);
    return 0;
}

/* The metadata of an array as text (both formats' serialisation), to compare two opens. */
static char *
meta_text(const zarr_array_meta *m)
{
    char *t = NULL, *t2 = NULL, *t3 = NULL, *all;
    if (m->zarr_format == 3)
        zarr_array_meta_to_v3(m, &t);
    else
        zarr_array_meta_to_v2(m, &t, &t2);
    t3  = zarr__json_dump(m->attributes);
    all = malloc((t ? strlen(t) : 0) + (t2 ? strlen(t2) : 0) + (t3 ? strlen(t3) : 0) + 4);
    if (all)
        sprintf(all, "%s|%s|%s", t ? t : "", t2 ? t2 : "", t3 ? t3 : "");
    free(t);
    free(t2);
    free(t3);
    return all;
}

/* Opens `path` with zarr_array_open and with zarr_array_open_format for `hint`; both must give the
 * same metadata and data. */
static int
same_array(zarr_store *s, const char *path, int hint, int want_format)
{
    zarr_array *a = NULL, *b = NULL;
    char       *ta, *tb;
    int16_t     va[6] = {-1, -1, -1, -1, -1, -1}, vb[6] = {-2, -2, -2, -2, -2, -2};
    zarr_region r;

    ASSERT_OK(zarr_array_open(s, path, &a));
    ASSERT_OK(zarr_array_open_format(s, path, hint, &b));
    ASSERT_EQ_INT(zarr_array_meta_get(a)->zarr_format, want_format);
    ASSERT_EQ_INT(zarr_array_meta_get(b)->zarr_format, want_format);
    ASSERT_EQ_INT(zarr_array_meta_get(b)->shape[0], 6);
    ASSERT_STR(json_object_get_string(json_object_object_get(zarr_array_meta_get(b)->attributes, "units")),
               "m");
    ta = meta_text(zarr_array_meta_get(a));
    tb = meta_text(zarr_array_meta_get(b));
    ASSERT(ta && tb);
    if (strcmp(ta, tb) != 0)
        FAILF("'%s' hint %d: metadata differs:\n%s\n---\n%s", path, hint, ta, tb);
    free(ta);
    free(tb);
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_read(a, &r, va));
    ASSERT_OK(zarr_array_read(b, &r, vb));
    ASSERT(memcmp(va, vb, sizeof va) == 0 && vb[5] == 5);
    zarr_array_close(a);
    zarr_array_close(b);
    return 0;
}

static int
same_group(zarr_store *s, const char *path, int hint, int want_format)
{
    zarr_group_meta *a = NULL, *b = NULL;
    char            *ta = NULL, *tb = NULL;

    ASSERT_OK(zarr_group_read(s, path, &a));
    ASSERT_OK(zarr_group_read_format(s, path, hint, &b));
    ASSERT_EQ_INT(a->zarr_format, want_format);
    ASSERT_EQ_INT(b->zarr_format, want_format);
    ta = zarr__json_dump(a->attributes);
    tb = zarr__json_dump(b->attributes);
    ASSERT_STR(ta, tb);
    ASSERT(strstr(tb, "\"title\": \"sub\""));
    free(ta);
    free(tb);
    zarr_group_meta_free(a);
    zarr_group_meta_free(b);
    return 0;
}

/* ---- tests ---- */

/* Probing absent paths leaves the caller's message alone, on every kind of store, with and without
 * consolidated metadata above. */
static int
probe_quiet_case(zarr_store *s, int fmt)
{
    static const char *absent[] = {"nothing", "g/nothing", "g/a/nothing", "g/nothing/deeper/still"};
    zarr_node_type     t;
    int                f;

    if (make_tree(s, fmt))
        return 1;
    for (int round = 0; round < 2; round++) {
        if (round == 1)
            ASSERT_OK(zarr_consolidate(s, ""));
        for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++) {
            zarr_error(ZARR_EIO, "sentinel %d", (int)i);
            f = -1;
            ASSERT_OK(zarr_node_probe(s, absent[i], &t, &f));
            ASSERT_EQ_INT(t, ZARR_NODE_NONE);
            ASSERT_EQ_INT(f, 0);
            char want[32];
            snprintf(want, sizeof want, "sentinel %d", (int)i);
            ASSERT_STR(zarr_errmsg(), want);
        }
        /* present nodes are still found, and found quietly */
        zarr_error(ZARR_EIO, "sentinel");
        ASSERT_OK(zarr_node_probe(s, "g/a", &t, &f));
        ASSERT(t == ZARR_NODE_ARRAY && f == fmt);
        ASSERT_OK(zarr_node_probe(s, "g", &t, &f));
        ASSERT(t == ZARR_NODE_GROUP && f == fmt);
        ASSERT_STR(zarr_errmsg(), "sentinel");
    }
    /* a failure that is reported still gets its message */
    ASSERT_ERR(zarr_group_read(s, "g/nothing", &(zarr_group_meta *){NULL}), ZARR_ENOTFOUND);
    ASSERT(strstr(zarr_errmsg(), "no group at '/g/nothing'"));
    ASSERT_ERR(zarr_array_open(s, "g/nothing", &(zarr_array *){NULL}), ZARR_ENOTFOUND);
    ASSERT(strstr(zarr_errmsg(), "no array at '/g/nothing'"));
    ASSERT_ERR(
        zarr_store_get(s, fmt == 3 ? "g/nothing/zarr.json" : "g/nothing/.zarray", &(zarr_buf)ZARR_BUF_INIT),
        ZARR_ENOTFOUND);
    ASSERT(strstr(zarr_errmsg(), "nothing"));
    return 0;
}

static int
test_probe_absent_sets_no_message(void)
{
    for (int fmt = 2; fmt <= 3; fmt++) {
        zarr_store     *s   = NULL;
        counting_store *c   = NULL;
        const char     *dir = test_tmpdir(fmt == 2 ? "nodes-quiet-2" : "nodes-quiet-3");
        ASSERT(dir);
        ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_CREATE, &s));
        if (probe_quiet_case(s, fmt))
            FAILF("directory store, v%d", fmt);
        zarr_store_close(s);
        ASSERT_OK(zarr_store_new_mem(&s));
        if (probe_quiet_case(s, fmt))
            FAILF("memory store, v%d", fmt);
        zarr_store_close(s);
        ASSERT((c = counting_new()));
        if (probe_quiet_case(&c->base, fmt))
            FAILF("other store, v%d", fmt);
        zarr_store_close(&c->base);
    }
    return 0;
}

/* An absent path's probe reads every document it looks at once: its own zarr.json, then one
 * consolidated-metadata read per level (the node's own .zmetadata, then zarr.json and .zmetadata of
 * each ancestor) for all three document names together. */
static int
test_probe_absent_reads_each_level_once(void)
{
    counting_store *c = counting_new();
    zarr_node_type  t;
    int             f;

    ASSERT(c);
    for (int fmt = 2; fmt <= 3; fmt++) {
        ASSERT_OK(zarr_store_del_prefix(&c->base, ""));
        if (make_tree(&c->base, fmt))
            return 1;
        counting_reset(c);
        ASSERT_OK(zarr_node_probe(&c->base, "g/x/y", &t, &f));
        ASSERT_EQ_INT(t, ZARR_NODE_NONE);
        for (int i = 0; i < c->nkeys; i++)
            if (c->gets[i] != 1)
                FAILF("v%d: '%s' read %d times", fmt, c->keys[i], c->gets[i]);
        /* g/x/y/zarr.json, g/x/y/.h5zarr_array (a hidden array's document, zarr.h ZARR_HIDDEN_DOC),
         * g/x/y/.zmetadata, then zarr.json + .zmetadata of g/x, g and the root; a v3 group's zarr.json is
         * read but, holding no consolidated metadata, .zmetadata is not */
        ASSERT_EQ_INT(c->total, fmt == 2 ? 9 : 7);
        ASSERT_EQ_INT(c->exists, 2); /* g/x/y/.zarray and .zgroup */
        /* with consolidated metadata at the root: the same reads, the hit found once */
        ASSERT_OK(zarr_consolidate(&c->base, ""));
        counting_reset(c);
        ASSERT_OK(zarr_node_probe(&c->base, "g/x/y", &t, &f));
        ASSERT_EQ_INT(t, ZARR_NODE_NONE);
        ASSERT_EQ_INT(c->total, fmt == 2 ? 9 : 7);
        /* a node that only the root's consolidated metadata describes */
        ASSERT_OK(zarr_store_del(&c->base, fmt == 3 ? "g/a/zarr.json" : "g/a/.zarray"));
        counting_reset(c);
        ASSERT_OK(zarr_node_probe(&c->base, "g/a", &t, &f));
        ASSERT(t == ZARR_NODE_ARRAY && f == fmt);
        for (int i = 0; i < c->nkeys; i++)
            if (c->gets[i] != 1)
                FAILF("v%d: '%s' read %d times", fmt, c->keys[i], c->gets[i]);
    }
    zarr_store_close(&c->base);
    return 0;
}

/* Opens told the format give what the probing opens give, whatever the hint. */
static int
test_open_with_known_format(void)
{
    for (int fmt = 2; fmt <= 3; fmt++) {
        zarr_store     *s = NULL;
        zarr_node_type  t;
        int             f;
        zarr_array     *a = NULL;
        counting_store *c = NULL;

        ASSERT_OK(zarr_store_new_mem(&s));
        if (make_tree(s, fmt))
            return 1;
        ASSERT_OK(zarr_node_probe(s, "g/a", &t, &f));
        ASSERT(t == ZARR_NODE_ARRAY && f == fmt);
        for (int hint = 0; hint <= 3; hint++) {
            if (hint == 1)
                continue;
            if (same_array(s, "g/a", hint, fmt) || same_group(s, "g", hint, fmt))
                FAILF("v%d store, hint %d", fmt, hint);
        }
        /* a group is not an array, however asked */
        for (int hint = 0; hint <= 3; hint++) {
            if (hint == 1)
                continue;
            ASSERT_ERR(zarr_array_open_format(s, "g", hint, &a), ZARR_ENOTFOUND);
            ASSERT(strstr(zarr_errmsg(), "it is a group"));
        }
        ASSERT_ERR(zarr_group_read_format(s, "g/a", fmt, &(zarr_group_meta *){NULL}),
                   fmt == 3 ? ZARR_EMETA : ZARR_EINVAL);
        ASSERT_ERR(zarr_array_open_format(s, "g/a", 1, &a), ZARR_EINVAL);
        ASSERT_ERR(zarr_group_read_format(s, "g", 4, &(zarr_group_meta *){NULL}), ZARR_EINVAL);
        /* only consolidated metadata describes the nodes: the hinted open falls back to it */
        ASSERT_OK(zarr_consolidate(s, ""));
        ASSERT_OK(zarr_store_del(s, fmt == 3 ? "g/a/zarr.json" : "g/a/.zarray"));
        ASSERT_OK(zarr_store_del(s, fmt == 3 ? "g/zarr.json" : "g/.zgroup"));
        if (fmt == 2) {
            ASSERT_OK(zarr_store_del(s, "g/a/.zattrs"));
            ASSERT_OK(zarr_store_del(s, "g/.zattrs"));
        }
        if (same_array(s, "g/a", fmt, fmt) || same_group(s, "g", fmt, fmt))
            FAILF("v%d store from consolidated metadata", fmt);
        zarr_store_close(s);

        /* the hinted open of a v2 array reads .zarray and .zattrs and nothing else; v3 reads zarr.json
         * once (the probing open read it twice: probe, then open) */
        ASSERT((c = counting_new()));
        if (make_tree(&c->base, fmt))
            return 1;
        counting_reset(c);
        ASSERT_OK(zarr_array_open_format(&c->base, "g/a", fmt, &a));
        zarr_array_close(a);
        ASSERT_EQ_INT(c->total, fmt == 2 ? 2 : 1);
        ASSERT_EQ_INT(c->gets[0], 1);
        ASSERT_STR(c->keys[0], fmt == 2 ? "g/a/.zarray" : "g/a/zarr.json");
        /* a v2 group: .zgroup and .zattrs, no zarr.json lookup */
        counting_reset(c);
        {
            zarr_group_meta *g = NULL;
            ASSERT_OK(zarr_group_read_format(&c->base, "g", fmt, &g));
            zarr_group_meta_free(g);
        }
        ASSERT_EQ_INT(c->total, fmt == 2 ? 2 : 1);
        ASSERT_STR(c->keys[0], fmt == 2 ? "g/.zgroup" : "g/zarr.json");
        zarr_store_close(&c->base);
    }
    return 0;
}

/* zarr_node_probe_as: the same answers as zarr_node_probe for every preference; preferring the store's
 * own format reads no document of the other format for nodes that exist. */
static int
test_probe_as_prefers_a_format(void)
{
    static const char *const paths[] = {"", "g", "g/a", "g/none", "x/y"};
    counting_store          *c       = counting_new();

    ASSERT(c);
    for (int fmt = 2; fmt <= 3; fmt++) {
        ASSERT_OK(zarr_store_del_prefix(&c->base, ""));
        if (make_tree(&c->base, fmt))
            return 1;
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
            zarr_node_type t0, t;
            int            f0, f;
            ASSERT_OK(zarr_node_probe(&c->base, paths[i], &t0, &f0));
            for (int prefer = 2; prefer <= 3; prefer++) {
                counting_reset(c);
                ASSERT_OK(zarr_node_probe_as(&c->base, paths[i], prefer, &t, &f));
                if (t != t0 || f != f0)
                    FAILF("v%d '%s' prefer %d: type %d format %d, probe says %d %d", fmt, paths[i], prefer,
                          (int)t, f, (int)t0, f0);
                if (t != ZARR_NODE_NONE && prefer == fmt && fmt == 2 && c->total != 0)
                    FAILF("v2 '%s' preferring v2: %d document reads (zarr.json tried?)", paths[i], c->total);
            }
        }
    }
    zarr_store_close(&c->base);
    return 0;
}

/* zarr_node_load: the node a probe and an open give, for every path, format and preference; a v3 node
 * from one read of its zarr.json. */
static int
test_node_load(void)
{
    static const char *const paths[] = {"", "g", "g/a", "g/none"};
    counting_store          *c       = counting_new();

    ASSERT(c);
    for (int fmt = 2; fmt <= 3; fmt++) {
        ASSERT_OK(zarr_store_del_prefix(&c->base, ""));
        if (make_tree(&c->base, fmt))
            return 1;
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
            for (int prefer = 2; prefer <= 3; prefer++) {
                zarr_node_type   t0, t;
                int              f0, f;
                zarr_group_meta *g = NULL;
                zarr_array      *a = NULL;
                ASSERT_OK(zarr_node_probe(&c->base, paths[i], &t0, &f0));
                counting_reset(c);
                zarr_error_clear();
                ASSERT_OK(zarr_node_load(&c->base, paths[i], prefer, &t, &f, &g, &a));
                if (t != t0 || f != f0)
                    FAILF("v%d '%s' prefer %d: type %d format %d, probe says %d %d", fmt, paths[i], prefer,
                          (int)t, f, (int)t0, f0);
                ASSERT((t == ZARR_NODE_GROUP) == (g != NULL) && (t == ZARR_NODE_ARRAY) == (a != NULL));
                if (t == ZARR_NODE_NONE)
                    ASSERT_STR(zarr_errmsg(), "");
                for (int k = 0; k < c->nkeys; k++) /* no document is read twice */
                    if (c->gets[k] != 1)
                        FAILF("v%d '%s' prefer %d: '%s' read %d times", fmt, paths[i], prefer, c->keys[k],
                              c->gets[k]);
                if (fmt == 3 && prefer == 3 && t != ZARR_NODE_NONE)
                    ASSERT_EQ_INT(c->total, 1); /* zarr.json, once */
                if (a) {
                    zarr_group_meta_free(g);
                    zarr_array_close(a);
                    if (same_array(&c->base, paths[i], f, fmt))
                        return 1;
                }
                else if (g) {
                    ASSERT_EQ_INT(g->zarr_format, fmt);
                    if (*paths[i])
                        ASSERT_STR(json_object_get_string(json_object_object_get(g->attributes, "title")),
                                   "sub");
                    zarr_group_meta_free(g);
                }
            }
        }
    }
    zarr_store_close(&c->base);
    return 0;
}

/* A store marked as holding no consolidated metadata: absent nodes cost only their own documents;
 * zarr_consolidate clears the mark, so what it writes is found again. */
static int
test_no_consolidated_hint(void)
{
    counting_store *c = counting_new();
    zarr_node_type  t;
    int             f;

    ASSERT(c);
    for (int fmt = 2; fmt <= 3; fmt++) {
        ASSERT_OK(zarr_store_del_prefix(&c->base, ""));
        if (make_tree(&c->base, fmt))
            return 1;
        c->base.no_consolidated = true;
        counting_reset(c);
        ASSERT_OK(zarr_node_probe(&c->base, "g/x/y", &t, &f));
        ASSERT_EQ_INT(t, ZARR_NODE_NONE);
        /* g/x/y/zarr.json and .h5zarr_array only (the v2 documents are exists checks) */
        ASSERT_EQ_INT(c->total, 2);
        /* consolidating clears the hint: a node only the consolidated metadata holds is found */
        ASSERT_OK(zarr_consolidate(&c->base, ""));
        ASSERT(!c->base.no_consolidated);
        ASSERT_OK(zarr_store_del(&c->base, fmt == 3 ? "g/a/zarr.json" : "g/a/.zarray"));
        ASSERT_OK(zarr_node_probe(&c->base, "g/a", &t, &f));
        ASSERT(t == ZARR_NODE_ARRAY && f == fmt);
    }
    zarr_store_close(&c->base);
    return 0;
}

/* zarr_array_set_path: an open array whose keys were moved (zarr_store_rename) reads and writes at its new
 * path, with a chunk held in its cache before the move dropped (not written back at the old path); a bad
 * path is refused and leaves the handle as it was. */
static int
test_array_set_path(void)
{
    for (int fmt = 2; fmt <= 3; fmt++) {
        zarr_store      *s = NULL;
        zarr_array      *a = NULL, *b = NULL;
        const char      *dir = test_tmpdir(fmt == 2 ? "nodes-repath-2" : "nodes-repath-3");
        int16_t          v[6], one = -7;
        uint64_t         st[1] = {5}, cnt[1] = {1};
        zarr_region      r, r1;
        zarr_engine_opts o;
        zarr_node_type   t;
        ASSERT(dir);
        ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_CREATE, &s));
        ASSERT(make_tree(s, fmt) == 0);
        ASSERT_OK(zarr_array_open(s, "g/a", &a));
        zarr_engine_defaults(&o);
        o.cache_bytes = 1 << 20;
        zarr_array_set_opts(a, &o);
        zarr_region_all(zarr_array_meta_get(a), &r);
        zarr_region_box(1, st, cnt, &r1);
        ASSERT_OK(zarr_array_read(a, &r, v)); /* the partial chunk [4, 6) is held in the cache */
        ASSERT_OK(zarr_array_flush(a));
        ASSERT_OK(zarr_store_rename(s, "g", "h"));
        ASSERT_ERR(zarr_array_set_path(a, "h/../x"), ZARR_EINVAL);
        ASSERT_STR(zarr_array_path(a), "g/a");
        ASSERT_OK(zarr_array_set_path(a, "/h/a/"));
        ASSERT_STR(zarr_array_path(a), "h/a");
        memset(v, 0, sizeof v);
        ASSERT_OK(zarr_array_read(a, &r, v));
        for (int i = 0; i < 6; i++)
            ASSERT_EQ_INT(v[i], i);
        ASSERT_OK(zarr_array_write(a, &r1, &one)); /* a partial chunk: through the cache */
        zarr_array_close(a);
        ASSERT_OK(zarr_node_probe(s, "g/a", &t, NULL));
        ASSERT_EQ_INT(t, ZARR_NODE_NONE); /* nothing written back at the old path */
        ASSERT_OK(zarr_array_open(s, "h/a", &b));
        ASSERT_OK(zarr_array_read(b, &r, v));
        for (int i = 0; i < 6; i++)
            ASSERT_EQ_INT(v[i], i == 5 ? -7 : i);
        zarr_array_close(b);
        zarr_store_close(s);
    }
    return 0;
}

/* zarr_node_load_many on a directory store (its workers read what they parse) and on the counting store
 * marked as preferring batches (one get_many first): 40 groups and arrays, each given the same node as
 * zarr_node_load_timed one by one (type, attributes, metadata text, time); a corrupt document, one
 * naming no node type, a directory with no zarr.json and a gone path fail alone, each with its own
 * result and a message naming its path, and poison no other item; on a pool of two threads and on
 * the default pool. Then v2 (format 2): the same nodes as zarr_array_open_format_timed and
 * zarr_group_read_format of format 2 give, a corrupt .zarray or .zattrs failing alone. */
#define MANY_N 40
static int
many_check(zarr_store *s, zarr_pool *pool, char paths[][32], size_t n, int *bad_at)
{
    zarr_node_item items[MANY_N + 4] = {{0}};

    for (size_t i = 0; i < n; i++)
        items[i].path = paths[i];
    ASSERT_OK(zarr_node_load_many(s, pool, 3, n, items));
    for (size_t i = 0; i < n; i++) {
        zarr_node_type   t;
        int              f;
        zarr_group_meta *g = NULL;
        zarr_array      *a = NULL;
        int64_t          mt;
        int              rc = zarr_node_load_timed(s, paths[i], 3, &t, &f, &g, &a, &mt);
        if (bad_at[i]) { /* 1: corrupt or no type (an error), 2: no zarr.json (absent) */
            ASSERT_ERR(rc, bad_at[i] == 2 ? ZARR_OK : ZARR_EMETA);
            ASSERT_EQ_INT(items[i].result, bad_at[i] == 2 ? ZARR_ENOTFOUND : ZARR_EMETA);
            ASSERT(!items[i].g && !items[i].a && items[i].type == ZARR_NODE_NONE);
            if (bad_at[i] == 1 && (!items[i].msg || !strstr(items[i].msg, paths[i])))
                FAILF("item '%s': message '%s' does not name it", paths[i], items[i].msg ? items[i].msg : "");
            if (bad_at[i] == 2)
                ASSERT(!items[i].msg);
            zarr_group_meta_free(g);
            zarr_array_close(a);
            continue;
        }
        ASSERT_OK(rc);
        if (items[i].result != ZARR_OK || items[i].type != t)
            FAILF("item '%s': result %d type %d, one by one type %d (%s)", paths[i], items[i].result,
                  (int)items[i].type, (int)t, items[i].msg ? items[i].msg : "");
        ASSERT(!items[i].msg);
        ASSERT_EQ_INT(items[i].mtime, mt);
        if (t == ZARR_NODE_GROUP) {
            char *x = zarr__json_dump(g->attributes), *y = zarr__json_dump(items[i].g->attributes);
            ASSERT(x && y && !items[i].a);
            ASSERT_STR(y, x);
            ASSERT(strstr(y, paths[i]));
            free(x);
            free(y);
        }
        else {
            char *x = meta_text(zarr_array_meta_get(a)), *y = meta_text(zarr_array_meta_get(items[i].a));
            ASSERT(x && y && !items[i].g);
            ASSERT_STR(y, x);
            ASSERT(strstr(y, paths[i]));
            ASSERT_STR(zarr_array_path(items[i].a), paths[i]);
            free(x);
            free(y);
        }
        zarr_group_meta_free(g);
        zarr_array_close(a);
    }
    /* a taken node stays the caller's: the rest are freed */
    zarr_group_meta_free(items[0].g);
    items[0].g = NULL;
    zarr_node_items_free(n, items);
    return 0;
}

static int
many_tree(zarr_store *s, char paths[][32], int *bad_at, size_t *n)
{
    uint64_t shape[1] = {6}, chunks[1] = {4};
    *n = 0;
    for (int i = 0; i < MANY_N; i++) {
        char *p = paths[(*n)++];
        snprintf(p, 32, "top/n%02d", i);
        if (i % 3 == 0) {
            zarr_group_meta *g = NULL;
            ASSERT_OK(zarr_group_meta_new(3, &g));
            json_object_object_add(g->attributes, "name", json_object_new_string(p));
            ASSERT_OK(zarr_group_write(s, p, g));
            zarr_group_meta_free(g);
        }
        else {
            zarr_array_meta *m = NULL;
            zarr_array      *a = NULL;
            ASSERT_OK(zarr_array_meta_new(3, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 2), &m));
            json_object_object_add(m->attributes, "name", json_object_new_string(p));
            ASSERT_OK(zarr_array_create(s, p, m, false, &a));
            zarr_array_close(a);
        }
    }
    /* the failures, among the others */
    ASSERT_OK(zarr_store_set(s, "top/n05/zarr.json", "{\"zarr_format\": 3, \"node_type\": [", 32));
    bad_at[5] = 1;
    ASSERT_OK(zarr_store_set(s, "top/n17/zarr.json", "{\"zarr_format\": 3, \"node_type\": \"table\"}", 41));
    bad_at[17] = 1;
    ASSERT_OK(zarr_store_set(s, "top/n30/zarr.json", "\x01\xff garbage", 10));
    bad_at[30] = 1;
    ASSERT_OK(zarr_store_del(s, "top/n22/zarr.json"));
    ASSERT_OK(zarr_store_set(s, "top/n22/c/0", "x", 1)); /* a directory with no zarr.json */
    bad_at[22] = 2;
    snprintf(paths[(*n)++], 32, "top/gone");
    bad_at[*n - 1] = 2;
    return 0;
}

static int
test_load_many(void)
{
    zarr_pool *pool = NULL;
    ASSERT_OK(zarr_pool_new(2, &pool));
    for (int kind = 0; kind < 2; kind++) {
        char            paths[MANY_N + 4][32];
        int             bad_at[MANY_N + 4] = {0};
        size_t          n;
        zarr_store     *s = NULL;
        counting_store *c = NULL;
        if (kind == 0)
            ASSERT_OK(zarr_store_open_dir(test_tmpdir("nodes-load-many"), ZARR_STORE_CREATE, &s));
        else {
            ASSERT((c = counting_new()));
            c->base.prefers_batches = true; /* get_many: the store's default loop over get */
            s                       = &c->base;
        }
        if (many_tree(s, paths, bad_at, &n) || many_check(s, pool, paths, n, bad_at) ||
            many_check(s, NULL, paths, n, bad_at))
            return 1;
        if (c) { /* one read of each document per batch: nothing read again on the workers */
            counting_reset(c);
            zarr_node_item items[MANY_N + 4] = {{0}};
            for (size_t i = 0; i < n; i++)
                items[i].path = paths[i];
            ASSERT_OK(zarr_node_load_many(s, pool, 3, n, items));
            ASSERT_EQ_INT(c->total, (int)n);
            zarr_node_items_free(n, items);
        }
        ASSERT_OK(zarr_node_load_many(s, pool, 3, 0, NULL));
        {
            zarr_node_item none = {0}, one = {.path = "top/n01"};
            ASSERT_ERR(zarr_node_load_many(s, pool, 3, 1, &none), ZARR_EINVAL);
            ASSERT_ERR(zarr_node_load_many(s, pool, 4, 1, &one), ZARR_EINVAL);
        }
        zarr_store_close(s);
    }
    zarr_pool_free(pool);
    return 0;
}

static int
test_load_many_v2(void)
{
    zarr_pool     *pool = NULL;
    zarr_store    *s    = NULL;
    zarr_node_item items[12];
    uint64_t       shape[1] = {6}, chunks[1] = {4};
    char           paths[12][32], key[64];
    const char    *bad[] = {"top/n04/.zarray", "top/n07/.zattrs"};

    ASSERT_OK(zarr_pool_new(2, &pool));
    ASSERT_OK(zarr_store_open_dir(test_tmpdir("nodes-load-many-v2"), ZARR_STORE_CREATE, &s));
    for (int i = 0; i < 10; i++) {
        snprintf(paths[i], 32, "top/n%02d", i);
        if (i % 4 == 0 && i != 4) {
            zarr_group_meta *g = NULL;
            ASSERT_OK(zarr_group_meta_new(2, &g));
            json_object_object_add(g->attributes, "name", json_object_new_string(paths[i]));
            ASSERT_OK(zarr_group_write(s, paths[i], g));
            zarr_group_meta_free(g);
        }
        else {
            zarr_array_meta *m = NULL;
            zarr_array      *a = NULL;
            ASSERT_OK(zarr_array_meta_new(2, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 2), &m));
            json_object_object_add(m->attributes, "name", json_object_new_string(paths[i]));
            ASSERT_OK(zarr_array_create(s, paths[i], m, false, &a));
            zarr_array_close(a);
        }
    }
    snprintf(paths[10], 32, "top/gone");
    ASSERT_OK(zarr_store_set(s, bad[0], "{\"zarr_format\": 2, \"shape\": [", 29));
    ASSERT_OK(zarr_store_set(s, bad[1], "{\"name\": }", 10));
    memset(items, 0, sizeof items);
    for (int i = 0; i < 11; i++)
        items[i].path = paths[i];
    ASSERT_OK(zarr_node_load_many(s, pool, 2, 11, items));
    for (int i = 0; i < 11; i++) {
        zarr_group_meta *g = NULL;
        zarr_array      *a = NULL;
        int64_t          mt;
        if (i == 10) {
            ASSERT_EQ_INT(items[i].result, ZARR_ENOTFOUND);
            ASSERT(!items[i].msg && !items[i].g && !items[i].a);
            continue;
        }
        if (i == 4 || i == 7) {
            ASSERT_EQ_INT(items[i].result, ZARR_EMETA);
            ASSERT(!items[i].g && !items[i].a && items[i].type == ZARR_NODE_NONE);
            if (!items[i].msg || !strstr(items[i].msg, paths[i]))
                FAILF("item '%s': message '%s' does not name it", paths[i], items[i].msg ? items[i].msg : "");
            continue;
        }
        if (items[i].result != ZARR_OK)
            FAILF("item '%s': %d (%s)", paths[i], items[i].result, items[i].msg ? items[i].msg : "");
        if (i % 4 == 0) {
            char *x, *y;
            ASSERT_EQ_INT(items[i].type, ZARR_NODE_GROUP);
            ASSERT_OK(zarr_group_read_format(s, paths[i], 2, &g));
            ASSERT_EQ_INT(items[i].g->zarr_format, 2);
            x = zarr__json_dump(g->attributes);
            y = zarr__json_dump(items[i].g->attributes);
            ASSERT(x && y);
            ASSERT_STR(y, x);
            /* a group keeps its .zgroup's time as an array its .zarray's (h5ls asks every object's) */
            ASSERT_OK(zarr_store_mtime(s, strcat(strcpy(key, paths[i]), "/.zgroup"), &mt));
            ASSERT(mt > 0);
            ASSERT_EQ_INT(items[i].mtime, mt);
            free(x);
            free(y);
            zarr_group_meta_free(g);
        }
        else {
            char *x, *y;
            ASSERT_EQ_INT(items[i].type, ZARR_NODE_ARRAY);
            ASSERT_OK(zarr_array_open_format_timed(s, paths[i], 2, &a, &mt));
            x = meta_text(zarr_array_meta_get(a));
            y = meta_text(zarr_array_meta_get(items[i].a));
            ASSERT(x && y && strstr(y, paths[i]));
            ASSERT_STR(y, x);
            ASSERT_EQ_INT(items[i].mtime, mt);
            ASSERT(mt > 0);
            free(x);
            free(y);
            zarr_array_close(a);
        }
    }
    zarr_node_items_free(11, items);
    zarr_store_close(s);
    zarr_pool_free(pool);
    return 0;
}

/* Gets of `suffix` keys (".zarray", ...) the counting store saw, and how many of them. */
static int
gets_of(const counting_store *c, const char *suffix, int *keys)
{
    int n = 0;
    *keys = 0;
    for (int i = 0; i < c->nkeys; i++) {
        size_t lk = strlen(c->keys[i]), ls = strlen(suffix);
        if (lk >= ls && !strcmp(c->keys[i] + lk - ls, suffix)) {
            n += c->gets[i];
            (*keys)++;
        }
    }
    return n;
}

/* A v2 batch of siblings of one kind tries their kind's document first once a sibling has shown it: a
 * listing of 16 groups reads each .zgroup and .zattrs once and looks for .zarray at most once per
 * worker that started before the first group was found (the pool's 2 and the caller), not 16 times;
 * a batch of arrays never looks for .zgroup. Attributes are read whenever they are there: a .zattrs
 * written after the first load is read by the next, and one that is no JSON fails that item only,
 * with a message naming the document. */
static int
test_load_many_v2_probes(void)
{
    zarr_pool      *pool = NULL;
    counting_store *c    = counting_new();
    zarr_store     *s    = (zarr_store *)c;
    zarr_node_item  items[16];
    char            paths[16][16];
    int             nk, nget;
    uint64_t        shape[1] = {3}, chunks[1] = {3};

    ASSERT(c);
    ASSERT_OK(zarr_pool_new(2, &pool));
    for (int i = 0; i < 16; i++) {
        zarr_group_meta *g = NULL;
        snprintf(paths[i], sizeof paths[i], "g%02d", i);
        ASSERT_OK(zarr_group_meta_new(2, &g));
        ASSERT_OK(zarr_group_write(s, paths[i], g)); /* no attributes: no .zattrs */
        zarr_group_meta_free(g);
    }
    counting_reset(c);
    memset(items, 0, sizeof items);
    for (int i = 0; i < 16; i++)
        items[i].path = paths[i];
    ASSERT_OK(zarr_node_load_many(s, pool, 2, 16, items));
    for (int i = 0; i < 16; i++) {
        ASSERT_EQ_INT(items[i].result, ZARR_OK);
        ASSERT_EQ_INT(items[i].type, ZARR_NODE_GROUP);
        ASSERT_EQ_INT(json_object_object_length(items[i].g->attributes), 0);
    }
    nget = gets_of(c, "/.zarray", &nk);
    if (nget < 1 || nget > 3)
        FAILF("%d failed .zarray lookups for 16 groups (want 1..3: the first group's and the other "
              "workers' started with it)",
              nget);
    ASSERT_EQ_INT(gets_of(c, "/.zgroup", &nk), 16);
    ASSERT_EQ_INT(nk, 16);
    ASSERT_EQ_INT(gets_of(c, "/.zattrs", &nk), 16);
    zarr_node_items_free(16, items);

    /* attributes that appear later are read; bad ones fail their item, naming it */
    ASSERT_OK(zarr_store_set(s, "g03/.zattrs", "{\"late\": 7}", 11));
    ASSERT_OK(zarr_store_set(s, "g05/.zattrs", "{\"late\": }", 10));
    memset(items, 0, sizeof items);
    for (int i = 0; i < 16; i++)
        items[i].path = paths[i];
    ASSERT_OK(zarr_node_load_many(s, pool, 2, 16, items));
    {
        struct json_object *v = NULL;
        ASSERT_EQ_INT(items[3].result, ZARR_OK);
        ASSERT(json_object_object_get_ex(items[3].g->attributes, "late", &v));
        ASSERT_EQ_INT(json_object_get_int(v), 7);
    }
    ASSERT_EQ_INT(items[5].result, ZARR_EMETA);
    ASSERT(!items[5].g && items[5].type == ZARR_NODE_NONE);
    if (!items[5].msg || !strstr(items[5].msg, "g05"))
        FAILF("bad .zattrs: message '%s' does not name the node", items[5].msg ? items[5].msg : "");
    ASSERT_EQ_INT(items[6].result, ZARR_OK);
    zarr_node_items_free(16, items);

    /* arrays: .zarray first from the start, no .zgroup looked for */
    for (int i = 0; i < 8; i++) {
        zarr_array_meta *m = NULL;
        zarr_array      *a = NULL;
        snprintf(paths[i], sizeof paths[i], "a%02d", i);
        ASSERT_OK(zarr_array_meta_new(2, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m));
        ASSERT_OK(zarr_array_create(s, paths[i], m, false, &a));
        zarr_array_close(a);
    }
    counting_reset(c);
    memset(items, 0, sizeof items);
    for (int i = 0; i < 8; i++)
        items[i].path = paths[i];
    ASSERT_OK(zarr_node_load_many(s, pool, 2, 8, items));
    for (int i = 0; i < 8; i++) {
        ASSERT_EQ_INT(items[i].result, ZARR_OK);
        ASSERT_EQ_INT(items[i].type, ZARR_NODE_ARRAY);
        ASSERT_EQ_INT((int)zarr_array_meta_get(items[i].a)->shape[0], 3);
    }
    ASSERT_EQ_INT(gets_of(c, "/.zgroup", &nk), 0);
    ASSERT_EQ_INT(gets_of(c, "/.zarray", &nk), 8);
    zarr_node_items_free(8, items);
    zarr_store_close(s);
    zarr_pool_free(pool);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(load_many_v2_probes),
    TEST_ENTRY(load_many_v2),
    TEST_ENTRY(load_many),
    TEST_ENTRY(no_consolidated_hint),
    TEST_ENTRY(array_set_path),
    TEST_ENTRY(node_load),
    TEST_ENTRY(probe_as_prefers_a_format),
    TEST_ENTRY(probe_absent_sets_no_message),
    TEST_ENTRY(probe_absent_reads_each_level_once),
    TEST_ENTRY(open_with_known_format),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
