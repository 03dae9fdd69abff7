/*
 * test_create_mode.c: what each zarr_create_mode asks of the store (counted with zarr_store_count):
 * EXCL probes and refuses an existing node, OVERWRITE removes the old keys, NEW only writes (no probe,
 * no removal, no stale-document delete), UNWRITTEN writes nothing until zarr_array_write_new (which
 * writes the documents alone), for arrays and groups, v2 and v3; and what NEW leaves when misused (stale
 * keys stay, nothing else is touched).
 */
#include "runner.h"

#include "h5zarr/zarr.h"
#include "h5zarr/zarr_store_count.h"

#include <string.h>

static zarr_store_count *g_count;

/* A counting store over a new memory store holding a stale v2 node at "old" (a .zattrs, a chunk). */
static zarr_store *
cstore_new(void)
{
    zarr_store *m = NULL;
    if (zarr_store_new_mem(&m) != ZARR_OK || zarr_store_set(m, "old/.zattrs", "{\"x\":1}", 7) != ZARR_OK ||
        zarr_store_set(m, "old/0.0", "abcd", 4) != ZARR_OK)
        return NULL;
    if (zarr_store_count_new(m, false, &g_count) != ZARR_OK)
        return NULL;
    return zarr_store_count_store(g_count);
}

static zarr_store_counts
C(void)
{
    zarr_store_counts n;
    zarr_store_count_read(g_count, &n);
    return n;
}

static zarr_array_meta *
meta(int format)
{
    const char *v3 = "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[4],\"data_type\":\"int32\","
                     "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2]}},"
                     "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,"
                     "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}";
    const char *v2 = "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"compressor\":null,"
                     "\"fill_value\":0,\"order\":\"C\",\"filters\":null}";
    zarr_array_meta *m = NULL;
    if (format == 3)
        (void)zarr_array_meta_parse_v3(v3, strlen(v3), "test", &m);
    else
        (void)zarr_array_meta_parse_v2(v2, strlen(v2), NULL, 0, "test", &m);
    return m;
}

static uint64_t
lookups(zarr_store_counts n)
{
    return n.get + n.get_range + n.get_into + n.get_many + n.exists + n.size + n.list + n.list_keys;
}

static int
array_modes_format(int format)
{
    zarr_store *s = cstore_new();
    zarr_array *a = NULL;
    zarr_buf    b = ZARR_BUF_INIT;
    ASSERT(s);

    /* NEW: the metadata document(s) written, nothing looked up or removed */
    zarr_store_count_reset(g_count);
    ASSERT_OK(zarr_array_create_as(s, "fresh", meta(format), ZARR_CREATE_NEW, &a));
    ASSERT_EQ_INT(C().set, 1);
    ASSERT_EQ_INT(C().del + C().del_prefix, 0);
    ASSERT_EQ_INT(lookups(C()), 0);
    ASSERT_OK(zarr_store_get(s, format == 3 ? "fresh/zarr.json" : "fresh/.zarray", &b));
    ASSERT(b.size > 10);
    zarr_array_close(a);

    /* EXCL: probes, refuses the node now there */
    zarr_store_count_reset(g_count);
    ASSERT_ERR(zarr_array_create_as(s, "fresh", meta(format), ZARR_CREATE_EXCL, &a), ZARR_EEXIST);
    ASSERT(lookups(C()) >= 1);
    ASSERT_EQ_INT(C().set + C().del + C().del_prefix, 0);
    ASSERT(a == NULL);

    /* OVERWRITE: the old keys go first (the stale chunk with them) */
    zarr_store_count_reset(g_count);
    ASSERT_OK(zarr_array_create_as(s, "old", meta(format), ZARR_CREATE_OVERWRITE, &a));
    ASSERT_EQ_INT(C().del_prefix, 1);
    ASSERT_ERR(zarr_store_get(s, "old/0.0", &b), ZARR_ENOTFOUND);
    ASSERT_ERR(zarr_store_get(s, "old/.zattrs", &b), ZARR_ENOTFOUND);
    zarr_array_close(a);

    /* NEW misused on an occupied path: the stale keys stay as they were, nothing is deleted */
    ASSERT_OK(zarr_store_set(s, "old2/0.0", "wxyz", 4));
    ASSERT_OK(zarr_store_set(s, "old2/.zattrs", "{\"y\":2}", 7));
    zarr_store_count_reset(g_count);
    ASSERT_OK(zarr_array_create_as(s, "old2", meta(format), ZARR_CREATE_NEW, &a));
    ASSERT_EQ_INT(C().del + C().del_prefix, 0);
    ASSERT_OK(zarr_store_get(s, "old2/0.0", &b));
    ASSERT(b.size == 4 && !memcmp(b.data, "wxyz", 4));
    zarr_array_close(a);

    /* UNWRITTEN: nothing at all until zarr_array_write_new; chunks can be written before it */
    zarr_store_count_reset(g_count);
    ASSERT_OK(zarr_array_create_as(s, "later", meta(format), ZARR_CREATE_UNWRITTEN, &a));
    ASSERT_EQ_INT(C().set + C().del + C().del_prefix + lookups(C()), 0);
    {
        zarr_node_type t;
        int32_t        v[4] = {1, 2, 3, 4}, r[4] = {0};
        zarr_region    reg;
        uint64_t       st[1] = {0}, ct[1] = {4};
        ASSERT_OK(zarr_node_probe(s, "later", &t, NULL));
        ASSERT_EQ_INT(t, ZARR_NODE_NONE);
        zarr_region_box(1, st, ct, &reg);
        ASSERT_OK(zarr_array_write(a, &reg, v));
        ASSERT_OK(zarr_array_flush(a));
        zarr_store_count_reset(g_count);
        ASSERT_OK(zarr_array_write_new(a));
        ASSERT_EQ_INT(C().set, 1); /* the one document (no attributes: no .zattrs, and none removed) */
        ASSERT_EQ_INT(C().del + C().del_prefix + lookups(C()), 0);
        ASSERT_OK(zarr_node_probe(s, "later", &t, NULL));
        ASSERT_EQ_INT(t, ZARR_NODE_ARRAY);
        zarr_array_close(a);
        ASSERT_OK(zarr_array_open(s, "later", &a));
        ASSERT_OK(zarr_array_read(a, &reg, r));
        ASSERT(r[0] == 1 && r[3] == 4);
    }
    zarr_array_close(a);

    /* a bad mode is refused before anything is written */
    zarr_store_count_reset(g_count);
    ASSERT_ERR(zarr_array_create_as(s, "bad", meta(format), (zarr_create_mode)7, &a), ZARR_EINVAL);
    ASSERT_EQ_INT(C().set, 0);
    zarr_buf_free(&b);
    zarr_store_close(s);
    return 0;
}

static int
test_array_modes_v2(void)
{
    return array_modes_format(2);
}

static int
test_array_modes_v3(void)
{
    return array_modes_format(3);
}

static int
test_group_write_new(void)
{
    zarr_store      *s = cstore_new();
    zarr_group_meta *g = NULL;
    zarr_buf         b = ZARR_BUF_INIT;
    ASSERT(s);
    ASSERT_OK(zarr_group_meta_new(2, &g));
    /* replacing: a group without attributes removes the .zattrs left there */
    zarr_store_count_reset(g_count);
    ASSERT_OK(zarr_group_write(s, "old", g));
    ASSERT_EQ_INT(C().del, 1);
    ASSERT_ERR(zarr_store_get(s, "old/.zattrs", &b), ZARR_ENOTFOUND);
    /* new: the .zgroup alone */
    zarr_store_count_reset(g_count);
    ASSERT_OK(zarr_group_write_new(s, "g", g));
    ASSERT_EQ_INT(C().set, 1);
    ASSERT_EQ_INT(C().del + C().del_prefix + lookups(C()), 0);
    ASSERT_OK(zarr_store_get(s, "g/.zgroup", &b));
    ASSERT(b.size > 10);
    zarr_group_meta_free(g);
    zarr_buf_free(&b);
    zarr_store_close(s);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(array_modes_v2),
    TEST_ENTRY(array_modes_v3),
    TEST_ENTRY(group_write_new),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
