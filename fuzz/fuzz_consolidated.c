/*
 * fuzz_consolidated.c: harness for consolidated metadata. The input is put in an in-memory store twice:
 * as the root's v2 `.zmetadata` and as the root's v3 `zarr.json` (inline "consolidated_metadata").
 * For each store the consolidated metadata is read, and for every node it names (at most 32) the
 * node is probed and its array or group metadata read through the consolidated fallback. Finally the
 * hierarchy is consolidated again, which must leave metadata that reads back. The input is also parsed
 * both ways large documents are (zarr__json_parse and zarr__json_parse_wide, its consolidated object's
 * members on the pool, for the v3 and the v2 key path): the same result, message and tree.
 */
#define _POSIX_C_SOURCE 200809L

#include "fuzz_common.h"
#include "h5zarr/zarr_consolidated.h"
#include "meta_int.h"
#include "zjson.h"

#include <string.h>

static int
count_child(const char *name, bool is_dir, void *ud)
{
    (*(size_t *)ud)++;
    return 0;
}

static void
visit(zarr_store *s, const char *path)
{
    static const char *const docs[] = {"zarr.json", ".zarray", ".zgroup", ".zattrs"};
    zarr_node_type           t;
    int                      fmt;
    zarr_array_meta         *am     = NULL;
    zarr_group_meta         *gm     = NULL;
    zarr_buf                 b      = ZARR_BUF_INIT;
    size_t                   nchild = 0;

    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        int rc = zarr__consolidated_doc(s, path, docs[i], &b);
        FUZZ_CHECK(rc != ZARR_OK || b.size > 0, "consolidated document '%s' of '%s' is empty", docs[i], path);
    }
    zarr_buf_free(&b);
    if (zarr_node_probe(s, path, &t, &fmt) == ZARR_OK)
        FUZZ_CHECK(t == ZARR_NODE_NONE || fmt == 2 || fmt == 3, "probe of '%s' gave format %d", path, fmt);
    if (zarr_array_meta_read(s, path, &am) == ZARR_OK) {
        char *t1 = NULL, *t2 = NULL;
        FUZZ_CHECK(am != NULL, "array read without an output");
        if (am->zarr_format == 3)
            FUZZ_CHECK(zarr_array_meta_to_v3(am, &t1) == ZARR_OK, "consolidated array does not serialize");
        else
            FUZZ_CHECK(zarr_array_meta_to_v2(am, &t1, &t2) == ZARR_OK,
                       "consolidated array does not serialize");
        free(t1);
        free(t2);
    }
    if (zarr_group_read(s, path, &gm) == ZARR_OK)
        FUZZ_CHECK(gm != NULL, "group read without an output");
    zarr_group_children(s, path, count_child, &nchild);
    zarr_array_meta_free(am);
    zarr_group_meta_free(gm);
}

static void
one_store(const uint8_t *data, size_t size, const char *key)
{
    zarr_store         *s   = NULL;
    struct json_object *md  = NULL;
    int                 fmt = 0, n = 0;

    if (zarr_store_new_mem(&s) != ZARR_OK)
        return;
    if (zarr_store_set(s, key, data, size) != ZARR_OK)
        goto done;
    visit(s, "");
    if (zarr_consolidated_read(s, "", &fmt, &md) == ZARR_OK) {
        FUZZ_CHECK(json_object_is_type(md, json_type_object), "consolidated metadata is not an object");
        FUZZ_CHECK(fmt == 2 || fmt == 3, "consolidated format %d", fmt);
        json_object_object_foreach(md, k, v)
        {
            char  *path = strdup(k);
            size_t len;
            (void)v;
            if (!path)
                break;
            len = strlen(path);
            if (fmt == 2) { /* "a/b/.zarray" -> "a/b" */
                char *slash = strrchr(path, '/');
                if (slash)
                    *slash = '\0';
                else
                    path[0] = '\0';
            }
            else if (len && path[len - 1] == '/')
                path[len - 1] = '\0';
            visit(s, path);
            free(path);
            if (++n >= 32)
                break;
        }
        json_object_put(md);
        md = NULL;
    }
    if (zarr_consolidate(s, "") == ZARR_OK) {
        FUZZ_CHECK(zarr_consolidated_read(s, "", &fmt, &md) == ZARR_OK,
                   "metadata just consolidated does not read back");
        json_object_put(md);
    }
done:
    zarr_store_close(s);
}

/* The wide parse's job on the default pool, as zarr/node.c runs it. */
static void
run_on_pool(zarr_task_fn fn, void *job, size_t n)
{
    (void)zarr_pool_run(zarr_pool_default(), fn, job, n, false);
}

/* zarr__json_parse_wide against zarr__json_parse on `data` for the key path `keys[nkeys]`. */
static void
wide_same(const uint8_t *data, size_t size, const char *const *keys, int nkeys)
{
    struct json_object *a = NULL, *b = NULL;
    char                ma[1024], mb[1024];
    int                 ra, rb;

    zarr_error_clear(); /* a success leaves the message as it was: compared from empty */
    ra = zarr__json_parse((const char *)data, size, "doc", &a);
    zarr_error_save(ma, sizeof ma);
    zarr_error_clear();
    rb = zarr__json_parse_wide((const char *)data, size, "doc", keys, nkeys, 1, run_on_pool, &b);
    zarr_error_save(mb, sizeof mb);
    FUZZ_CHECK(ra == rb, "wide parse: %d, whole parse: %d", rb, ra);
    FUZZ_CHECK(strcmp(ma, mb) == 0, "wide parse says '%s', whole parse '%s'", mb, ma);
    if (ra == ZARR_OK) {
        char *da = zarr__json_dump(a), *db = zarr__json_dump(b);
        FUZZ_CHECK(da && db && strcmp(da, db) == 0, "wide parse gives another tree");
        free(da);
        free(db);
    }
    json_object_put(a);
    json_object_put(b);
    zarr_error_clear();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT)
        return 0;
    static const char *const v3[] = {"consolidated_metadata", "metadata"}, *const v2[] = {"metadata"};
    one_store(data, size, ".zmetadata");
    one_store(data, size, "zarr.json");
    wide_same(data, size, v3, 2);
    wide_same(data, size, v2, 1);
    zarr_error_clear();
    return 0;
}
