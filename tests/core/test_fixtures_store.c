/*
 * test_fixtures_store.c: whole stores through the core. The zarr_implementations store written by
 * zarr-python (raw, gzip, zlib, blosc arrays; the shared one, else one written at test time by Debian's
 * zarr-python 2.13, tests/testdata.h) must read equal to the reference image byte for byte, and
 * consolidated metadata (v2 .zmetadata, v3 inline) is written, read back and used as the documented
 * fallback when a node's own documents are absent.
 */
#include "h5zarr/zarr.h"
#include "h5zarr/zarr_consolidated.h"
#include "runner.h"
#include "testdata.h"
#include "zjson.h"

#include <stdint.h>

/* Each array of zarr.zr reads equal to reference_image.npy (|u1, (512, 512, 3), C order). */
static int
test_zarr_implementations(void)
{
    static const char *arrays[] = {"raw", "gzip", "zlib", "blosc"};
    char               dir[4096], npy[4096];
    size_t             n = 0, hdr;
    uint8_t           *ref;
    zarr_store        *s = NULL;
    const char        *data;
    bool               gen;
    int                rc = test_data_dir("zarr_implementations", &data, &gen);

    if (rc != 0)
        return rc;
    snprintf(dir, sizeof dir, "%s/zarr_implementations/zarr.zr", data);
    snprintf(npy, sizeof npy, "%s/zarr_implementations/reference_image.npy", data);
    if (!(ref = test_slurp(npy, &n)))
        FAILF("no reference image at %s", npy);
    /* .npy v1.0: magic, version, u16 LE header length, header text */
    ASSERT(n > 10 && memcmp(ref, "\x93NUMPY\x01\x00", 8) == 0);
    hdr = 10 + (size_t)(ref[8] | ref[9] << 8);
    ASSERT(strstr((char *)ref + 10, "'descr': '|u1'") && strstr((char *)ref + 10, "(512, 512, 3)"));
    ASSERT_EQ_INT(n - hdr, 512 * 512 * 3);
    ASSERT_OK(zarr_store_open_dir(dir, ZARR_STORE_RDONLY, &s));
    for (size_t i = 0; i < 4; i++) {
        zarr_array            *a = NULL;
        const zarr_array_meta *m;
        zarr_region            r;
        uint8_t               *buf = malloc(n - hdr);
        ASSERT(buf);
        memset(buf, 0xAB, n - hdr);
        ASSERT_OK(zarr_array_open(s, arrays[i], &a));
        m = zarr_array_meta_get(a);
        ASSERT_EQ_INT(m->ndim, 3);
        ASSERT(m->shape[0] == 512 && m->shape[1] == 512 && m->shape[2] == 3);
        ASSERT(m->chunks[0] == 100 && m->chunks[1] == 100 && m->chunks[2] == 1);
        zarr_region_all(m, &r);
        ASSERT_OK(zarr_array_read(a, &r, buf));
        if (memcmp(buf, ref + hdr, n - hdr) != 0) {
            size_t k = 0;
            while (buf[k] == ref[hdr + k])
                k++;
            FAILF("array '%s' differs from the reference image at byte %zu (%u != %u)", arrays[i], k, buf[k],
                  ref[hdr + k]);
        }
        /* and a region crossing edge chunks: rows 450..511, cols 90..110, channel 1 */
        {
            uint64_t start[3] = {450, 90, 1}, count[3] = {62, 21, 1};
            uint8_t  sub[62 * 21];
            zarr_region_box(3, start, count, &r);
            ASSERT_OK(zarr_array_read(a, &r, sub));
            for (int y = 0; y < 62; y++)
                for (int x = 0; x < 21; x++)
                    ASSERT_EQ_INT(sub[y * 21 + x], ref[hdr + ((size_t)(450 + y) * 512 + 90 + x) * 3 + 1]);
        }
        printf("  %s: 786432 bytes equal to the reference image%s\n", arrays[i],
               gen ? " (store and image generated here)" : "");
        free(buf);
        zarr_array_close(a);
    }
    zarr_store_close(s);
    free(ref);
    return 0;
}

/* ---- consolidated metadata ---- */
static int
make_array(zarr_store *s, int fmt, const char *path, const char *attr)
{
    uint64_t         shape[1] = {5}, chunks[1] = {2};
    zarr_array_meta *m = NULL;
    zarr_array      *a = NULL;
    zarr_region      r;
    int32_t          v[5] = {1, 2, 3, 4, 5};
    ASSERT_OK(zarr_array_meta_new(fmt, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 4), &m));
    json_object_object_add(m->attributes, "name", json_object_new_string(attr));
    ASSERT_OK(zarr_array_create(s, path, m, false, &a));
    zarr_region_all(zarr_array_meta_get(a), &r);
    ASSERT_OK(zarr_array_write(a, &r, v));
    zarr_array_close(a);
    return 0;
}

static int
check_hierarchy(zarr_store *s, const char *label)
{
    zarr_node_type   t;
    int              fmt;
    zarr_group_meta *g = NULL;
    zarr_array_meta *m = NULL;
    ASSERT_OK(zarr_node_probe(s, "grp/arr", &t, &fmt));
    if (t != ZARR_NODE_ARRAY)
        FAILF("%s: grp/arr probed as %d", label, (int)t);
    ASSERT_OK(zarr_node_probe(s, "grp", &t, &fmt));
    if (t != ZARR_NODE_GROUP)
        FAILF("%s: grp probed as %d", label, (int)t);
    ASSERT_OK(zarr_node_probe(s, "nothing", &t, NULL));
    ASSERT(t == ZARR_NODE_NONE);
    ASSERT_OK(zarr_group_read(s, "grp", &g));
    ASSERT_STR(json_object_get_string(json_object_object_get(g->attributes, "kind")), "subgroup");
    zarr_group_meta_free(g);
    ASSERT_OK(zarr_array_meta_read(s, "grp/arr", &m));
    ASSERT_EQ_INT(m->shape[0], 5);
    ASSERT_STR(json_object_get_string(json_object_object_get(m->attributes, "name")), "inner");
    zarr_array_meta_free(m);
    return 0;
}

static int
consolidated_case(int fmt)
{
    zarr_store         *s      = NULL;
    zarr_group_meta    *g      = NULL;
    struct json_object *md     = NULL;
    int                 f      = 0;
    zarr_buf            b      = ZARR_BUF_INIT;
    const char         *arrdoc = fmt == 3 ? "grp/arr/zarr.json" : "grp/arr/.zarray";
    const char         *grpdoc = fmt == 3 ? "grp/zarr.json" : "grp/.zgroup";

    ASSERT_OK(zarr_store_new_mem(&s));
    ASSERT_OK(zarr_group_meta_new(fmt, &g));
    ASSERT_OK(zarr_group_write(s, "", g));
    json_object_object_add(g->attributes, "kind", json_object_new_string("subgroup"));
    ASSERT_OK(zarr_group_write(s, "grp", g));
    zarr_group_meta_free(g);
    g = NULL;
    if (make_array(s, fmt, "top", "top") || make_array(s, fmt, "grp/arr", "inner"))
        return 1;
    ASSERT_ERR(zarr_consolidated_read(s, "", &f, &md), ZARR_ENOTFOUND);
    ASSERT_OK(zarr_consolidate(s, ""));
    ASSERT_ERR(zarr_consolidate(s, "top"), ZARR_EINVAL);
    ASSERT_OK(zarr_consolidated_read(s, "", &f, &md));
    ASSERT_EQ_INT(f, fmt);
    /* the consolidated entries equal the documents they stand for */
    {
        static const char *v3keys[] = {"top", "grp", "grp/arr"};
        static const char *v2keys[] = {".zgroup",     "top/.zarray",     "top/.zattrs",    "grp/.zgroup",
                                       "grp/.zattrs", "grp/arr/.zarray", "grp/arr/.zattrs"};
        size_t             nk       = fmt == 3 ? 3 : 7;
        ASSERT_EQ_INT(json_object_object_length(md), nk);
        for (size_t i = 0; i < nk; i++) {
            char                key[256];
            struct json_object *doc = NULL, *e = NULL;
            snprintf(key, sizeof key, fmt == 3 ? "%s/zarr.json" : "%s", fmt == 3 ? v3keys[i] : v2keys[i]);
            ASSERT(json_object_object_get_ex(md, fmt == 3 ? v3keys[i] : v2keys[i], &e));
            ASSERT_OK(zarr_store_get(s, key, &b));
            ASSERT_OK(zarr__json_parse((const char *)b.data, b.size, key, &doc));
            if (!zarr__json_equal(doc, e))
                FAILF("v%d consolidated entry '%s' differs from the document", fmt, key);
            json_object_put(doc);
        }
    }
    json_object_put(md);
    md = NULL;
    if (check_hierarchy(s, "with documents"))
        return 1;
    /* fallback: the nodes' own documents gone, the consolidated metadata describes them */
    ASSERT_OK(zarr_store_del(s, arrdoc));
    ASSERT_OK(zarr_store_del(s, grpdoc));
    if (fmt == 2) {
        ASSERT_OK(zarr_store_del(s, "grp/arr/.zattrs"));
        ASSERT_OK(zarr_store_del(s, "grp/.zattrs"));
    }
    if (check_hierarchy(s, "from consolidated metadata"))
        return 1;
    /* precedence: a node's own document wins over the consolidated copy */
    {
        uint64_t         shape[1] = {7}, chunks[1] = {7};
        zarr_array_meta *m = NULL, *r = NULL;
        zarr_array      *a = NULL;
        ASSERT_OK(zarr_array_meta_new(fmt, 1, shape, chunks, zarr_dtype_new(ZARR_INT, 2), &m));
        ASSERT_OK(zarr_array_create(s, "grp/arr", m, true, &a));
        zarr_array_close(a);
        ASSERT_OK(zarr_array_meta_read(s, "grp/arr", &r));
        ASSERT_EQ_INT(r->shape[0], 7);
        ASSERT_EQ_INT(r->dtype->size, 2);
        zarr_array_meta_free(r);
    }
    /* re-consolidating picks the change up */
    ASSERT_OK(zarr_consolidate(s, ""));
    ASSERT_OK(zarr_consolidated_read(s, "", &f, &md));
    {
        struct json_object *e  = json_object_object_get(md, fmt == 3 ? "grp/arr" : "grp/arr/.zarray");
        uint64_t            sh = 0;
        ASSERT(e);
        ASSERT(zarr__json_get_u64(json_object_array_get_idx(json_object_object_get(e, "shape"), 0), &sh));
        ASSERT_EQ_INT(sh, 7);
    }
    json_object_put(md);
    zarr_buf_free(&b);
    zarr_store_close(s);
    return 0;
}

static int
test_consolidated_v2(void)
{
    return consolidated_case(2);
}

static int
test_consolidated_v3(void)
{
    return consolidated_case(3);
}

/* The zarr-python fixture .zmetadata, as the only document of a store, describes the hierarchy. */
static int
test_consolidated_fixture_store(void)
{
    char             path[4096];
    size_t           n;
    uint8_t         *text;
    zarr_store      *s = NULL;
    zarr_node_type   t;
    int              fmt;
    zarr_array_meta *m = NULL;
    zarr_group_meta *g = NULL;

    snprintf(path, sizeof path, "%s/zarr-python/zarr-metadata/v2/consolidated/with_array_and_group.json",
             test_shared_dir());
    if (!(text = test_slurp(path, &n))) {
        printf("  no fixture at %s\n", path);
        return TEST_SKIP;
    }
    ASSERT_OK(zarr_store_new_mem(&s));
    ASSERT_OK(zarr_store_set(s, ".zmetadata", text, n));
    ASSERT_OK(zarr_node_probe(s, "", &t, &fmt));
    ASSERT(t == ZARR_NODE_GROUP && fmt == 2);
    ASSERT_OK(zarr_node_probe(s, "data", &t, &fmt));
    ASSERT(t == ZARR_NODE_ARRAY && fmt == 2);
    ASSERT_OK(zarr_group_read(s, "", &g));
    ASSERT_STR(json_object_get_string(json_object_object_get(g->attributes, "description")),
               "root group attrs");
    ASSERT_OK(zarr_array_meta_read(s, "data", &m));
    ASSERT_EQ_INT(m->shape[0], 100);
    ASSERT_EQ_INT(m->chunks[0], 10);
    ASSERT_STR(json_object_get_string(json_object_object_get(m->attributes, "units")), "meters");
    zarr_array_meta_free(m);
    zarr_group_meta_free(g);
    /* a corrupt .zmetadata is an error naming it, not a silent miss */
    ASSERT_OK(zarr_store_set(s, ".zmetadata", "{\"metadata\": 3}", 15));
    ASSERT_ERR(zarr_consolidated_read(s, "", &fmt, &(struct json_object *){NULL}), ZARR_EMETA);
    ASSERT(strstr(zarr_errmsg(), ".zmetadata"));
    zarr_store_close(s);
    free(text);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(zarr_implementations),
    TEST_ENTRY(consolidated_v2),
    TEST_ENTRY(consolidated_v3),
    TEST_ENTRY(consolidated_fixture_store),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
