/*
 * test_dtype.c: data types and fill values of the core (zarr/dtype.c).
 *
 * v2 dtype strings and structured lists, v3 data_type names and objects (including the zarr-python
 * fixtures under $H5ZARR_SHARED/testdata/zarr-python/zarr-metadata/v3/data_type), memory-form sizes,
 * vlen element handling, and every fixture fill value per data type: parsed, checked against known
 * values and written back. Fill values written by zarr-python 2.13 (v2 rules) are checked byte for byte.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, clock_gettime */

#include <unistd.h>

#include "runner.h"

#include "h5zarr/zarr.h"
#include "zjson.h"

#include <dirent.h>
#include <math.h>

static struct json_object *
J(const char *text)
{
    struct json_object *j = NULL;
    if (zarr__json_parse(text, strlen(text), "test", &j) != ZARR_OK) {
        fprintf(stderr, "bad test JSON %s: %s\n", text, zarr_errmsg());
        abort();
    }
    return j;
}

static struct json_object *
load_json(const char *rel)
{
    char                path[4096];
    size_t              n;
    char               *s;
    struct json_object *j = NULL;
    snprintf(path, sizeof path, "%s/zarr-python/zarr-metadata/%s", test_shared_dir(), rel);
    if (!(s = test_slurp(path, &n)))
        return NULL;
    if (zarr__json_parse(s, n, path, &j) != ZARR_OK)
        j = NULL;
    free(s);
    return j;
}

static int
dtype_v2(const char *text, zarr_dtype **out)
{
    struct json_object *j  = J(text);
    int                 rc = zarr_dtype_from_v2_json(j, out);
    json_object_put(j);
    return rc;
}

static int
dtype_v3(const char *text, zarr_dtype **out)
{
    struct json_object *j  = J(text);
    int                 rc = zarr_dtype_from_v3_json(j, out);
    json_object_put(j);
    return rc;
}

/* ------------------------------------------------------------------------------------------------ */
static int
test_v2_strings(void)
{
    static const struct {
        const char *s;
        zarr_kind   kind;
        size_t      size;
        char        endian;
        const char *unit;
        size_t      nchars;
    } cases[] = {
        {"<f8", ZARR_FLOAT, 8, '<', "", 0},
        {">i2", ZARR_INT, 2, '>', "", 0},
        {"|b1", ZARR_BOOL, 1, '|', "", 0},
        {"|u1", ZARR_UINT, 1, '|', "", 0},
        {"|i1", ZARR_INT, 1, '|', "", 0},
        {"<u8", ZARR_UINT, 8, '<', "", 0},
        {"<f2", ZARR_FLOAT, 2, '<', "", 0},
        {">c16", ZARR_COMPLEX, 16, '>', "", 0},
        {"<c8", ZARR_COMPLEX, 8, '<', "", 0},
        {"<M8[ns]", ZARR_DATETIME, 8, '<', "ns", 0},
        {"<m8[10s]", ZARR_TIMEDELTA, 8, '<', "10s", 0},
        {">M8[D]", ZARR_DATETIME, 8, '>', "D", 0},
        {"|S3", ZARR_FIXED_BYTES, 3, '|', "", 3},
        {"<U4", ZARR_FIXED_UTF32, 16, '<', "", 4},
        {">U2", ZARR_FIXED_UTF32, 8, '>', "", 2},
        {"|V5", ZARR_RAW, 5, '|', "", 5},
        {"|O", ZARR_VLEN_UTF8, sizeof(char *), '|', "", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        zarr_dtype         *t = NULL;
        struct json_object *back;
        char                q[64];
        snprintf(q, sizeof q, "\"%s\"", cases[i].s);
        ASSERT_OK(dtype_v2(q, &t));
        ASSERT_EQ_INT(t->kind, cases[i].kind);
        ASSERT_EQ_INT(t->size, cases[i].size);
        ASSERT_EQ_INT(t->endian, cases[i].endian);
        ASSERT_STR(t->unit, cases[i].unit);
        ASSERT_EQ_INT(t->nchars, cases[i].nchars);
        ASSERT_OK(zarr_dtype_to_v2_json(t, &back));
        ASSERT_STR(json_object_get_string(back), cases[i].s);
        json_object_put(back);
        zarr_dtype *c = zarr_dtype_copy(t);
        ASSERT(zarr_dtype_equal(t, c));
        zarr_dtype_free(c);
        zarr_dtype_free(t);
    }
    /* "=" is the host order; "|" on a multi-byte number is NumPy's native order too */
    zarr_dtype *t = NULL;
    ASSERT_OK(dtype_v2("\"=i4\"", &t));
    ASSERT_EQ_INT(t->endian, '<');
    zarr_dtype_free(t);
    /* datetime scales are kept as numpy spells them: no leading zeros, no scale of 1, however long
     * the text was (a 29-character unit once overflowed the 24-byte field and did not serialize) */
    static const struct {
        const char *in, *unit, *out;
    } scales[] = {
        {"<m8[010s]", "10s", "<m8[10s]"},
        {"<M8[01D]", "D", "<M8[D]"},
        {"<M8[000000000000000000800000000s]", "800000000s", "<M8[800000000s]"},
        {"<M8[0000000000000000000000000002147483647\xce\xbcs]", "2147483647\xce\xbcs",
         "<M8[2147483647\xce\xbcs]"},
    };
    for (size_t i = 0; i < sizeof scales / sizeof *scales; i++) {
        struct json_object *back;
        char                q[96];
        snprintf(q, sizeof q, "\"%s\"", scales[i].in);
        ASSERT_OK(dtype_v2(q, &t));
        ASSERT_STR(t->unit, scales[i].unit);
        ASSERT_OK(zarr_dtype_to_v2_json(t, &back));
        ASSERT_STR(json_object_get_string(back), scales[i].out);
        json_object_put(back);
        zarr_dtype_free(t);
    }
    return 0;
}

static int
test_v2_invalid(void)
{
    zarr_dtype *t = NULL;
    ASSERT_ERR(dtype_v2("\"<f3\"", &t), ZARR_EUNSUPPORTED);
    ASSERT(strstr(zarr_errmsg(), "<f3"));
    ASSERT_ERR(dtype_v2("\"x\"", &t), ZARR_EUNSUPPORTED);
    ASSERT_ERR(dtype_v2("\"<M8\"", &t), ZARR_EUNSUPPORTED);
    ASSERT_ERR(dtype_v2("\"<M8[xx]\"", &t), ZARR_EUNSUPPORTED);
    ASSERT(strstr(zarr_errmsg(), "xx"));
    ASSERT_ERR(dtype_v2("\"|S0\"", &t), ZARR_EUNSUPPORTED);
    ASSERT_ERR(dtype_v2("\"<i4 \"", &t), ZARR_EUNSUPPORTED);
    ASSERT_ERR(dtype_v2("\"<i\"", &t), ZARR_EUNSUPPORTED);
    ASSERT_ERR(dtype_v2("12", &t), ZARR_EMETA);
    ASSERT_ERR(dtype_v2("[]", &t), ZARR_EMETA);
    ASSERT_ERR(dtype_v2("[[\"a\"]]", &t), ZARR_EMETA);
    ASSERT_ERR(dtype_v2("[[\"a\",\"<i4\"],[\"a\",\"<i4\"]]", &t), ZARR_EMETA);
    ASSERT(strstr(zarr_errmsg(), "duplicate"));
    ASSERT_ERR(dtype_v2("[[\"a\",\"<i4\",[0]]]", &t), ZARR_EMETA);
    ASSERT_ERR(dtype_v2("[[\"a\",\"<i9\"]]", &t), ZARR_EUNSUPPORTED);
    ASSERT(strstr(zarr_errmsg(), "field 'a'"));
    ASSERT(t == NULL);
    return 0;
}

static int
test_v2_structured(void)
{
    const char *text = "[[\"a\",\"<i4\"],[\"b\",[[\"c\",\"|u1\"],[\"d\",\">f8\",[2,3]]]],[\"s\",\"|O\"]]";
    zarr_dtype *t    = NULL;
    struct json_object *back, *orig = J(text);
    ASSERT_OK(zarr_dtype_from_v2_json(orig, &t));
    ASSERT_EQ_INT(t->kind, ZARR_STRUCT);
    ASSERT_EQ_INT(t->nfields, 3);
    ASSERT_STR(t->fields[0].name, "a");
    ASSERT_EQ_INT(t->fields[0].offset, 0);
    ASSERT_EQ_INT(t->fields[1].offset, 4);
    ASSERT_EQ_INT(t->fields[1].type->size, 1 + 48);
    ASSERT_EQ_INT(t->fields[1].type->fields[1].ndim, 2);
    ASSERT_EQ_INT(t->fields[1].type->fields[1].shape[1], 3);
    ASSERT_EQ_INT(t->fields[1].type->fields[1].offset, 1);
    ASSERT_EQ_INT(t->fields[2].offset, 53);
    ASSERT_EQ_INT(t->size, 53 + sizeof(char *));
    ASSERT(zarr_dtype_has_vlen(t));
    ASSERT_OK(zarr_dtype_to_v2_json(t, &back));
    ASSERT(zarr__json_equal(back, orig));
    json_object_put(back);
    /* v3 cannot describe sub-array fields */
    ASSERT_ERR(zarr_dtype_to_v3_json(t, &back), ZARR_EUNSUPPORTED);
    ASSERT(strstr(zarr_errmsg(), "'b'") || strstr(zarr_errmsg(), "'d'"));
    zarr_dtype_free(t);
    json_object_put(orig);
    return 0;
}

static int
test_v3_names(void)
{
    static const struct {
        const char *json;
        zarr_kind   kind;
        size_t      size;
        const char *back; /* expected to_v3 JSON, NULL = same */
    } cases[] = {
        {"\"bool\"", ZARR_BOOL, 1, NULL},
        {"\"int8\"", ZARR_INT, 1, NULL},
        {"\"int16\"", ZARR_INT, 2, NULL},
        {"\"int32\"", ZARR_INT, 4, NULL},
        {"\"int64\"", ZARR_INT, 8, NULL},
        {"\"uint8\"", ZARR_UINT, 1, NULL},
        {"\"uint16\"", ZARR_UINT, 2, NULL},
        {"\"uint32\"", ZARR_UINT, 4, NULL},
        {"\"uint64\"", ZARR_UINT, 8, NULL},
        {"\"float16\"", ZARR_FLOAT, 2, NULL},
        {"\"float32\"", ZARR_FLOAT, 4, NULL},
        {"\"float64\"", ZARR_FLOAT, 8, NULL},
        {"\"complex64\"", ZARR_COMPLEX, 8, NULL},
        {"\"complex128\"", ZARR_COMPLEX, 16, NULL},
        {"\"r24\"", ZARR_RAW, 3, NULL},
        {"\"string\"", ZARR_VLEN_UTF8, sizeof(char *), NULL},
        {"\"bytes\"", ZARR_VLEN_BYTES, sizeof(zarr_vlen), NULL},
        {"\"variable_length_bytes\"", ZARR_VLEN_BYTES, sizeof(zarr_vlen), "\"bytes\""},
        {"{\"name\":\"int32\"}", ZARR_INT, 4, "\"int32\""},
        {"{\"name\":\"fixed_length_utf32\",\"configuration\":{\"length_bytes\":20}}", ZARR_FIXED_UTF32, 20,
         NULL},
        {"{\"name\":\"null_terminated_bytes\",\"configuration\":{\"length_bytes\":7}}", ZARR_FIXED_BYTES, 7,
         NULL},
        {"{\"name\":\"raw_bytes\",\"configuration\":{\"length_bytes\":2}}", ZARR_RAW, 2, "\"r16\""},
        {"{\"name\":\"numpy.datetime64\",\"configuration\":{\"unit\":\"ns\",\"scale_factor\":1}}",
         ZARR_DATETIME, 8, NULL},
        {"{\"name\":\"numpy.timedelta64\",\"configuration\":{\"unit\":\"s\",\"scale_factor\":10}}",
         ZARR_TIMEDELTA, 8, NULL},
        {"{\"name\":\"structured\",\"configuration\":{\"fields\":[[\"x\",\"float32\"],[\"y\",\"int8\"]]}}",
         ZARR_STRUCT, 5,
         "{\"name\":\"struct\",\"configuration\":{\"fields\":[{\"name\":\"x\",\"data_type\":\"float32\"},"
         "{\"name\":\"y\",\"data_type\":\"int8\"}]}}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        zarr_dtype         *t = NULL, *t2 = NULL;
        struct json_object *back, *want   = J(cases[i].back ? cases[i].back : cases[i].json);
        ASSERT_OK(dtype_v3(cases[i].json, &t));
        ASSERT_EQ_INT(t->kind, cases[i].kind);
        ASSERT_EQ_INT(t->size, cases[i].size);
        ASSERT_OK(zarr_dtype_to_v3_json(t, &back));
        if (!zarr__json_equal(back, want))
            FAILF("case %s wrote %s", cases[i].json, json_object_to_json_string(back));
        ASSERT_OK(zarr_dtype_from_v3_json(back, &t2));
        ASSERT(zarr_dtype_equal(t, t2));
        json_object_put(back);
        json_object_put(want);
        zarr_dtype_free(t);
        zarr_dtype_free(t2);
    }
    zarr_dtype *t = NULL;
    ASSERT_OK(dtype_v3(
        "{\"name\":\"numpy.timedelta64\",\"configuration\":{\"unit\":\"s\",\"scale_factor\":10}}", &t));
    ASSERT_STR(t->unit, "10s");
    zarr_dtype_free(t);
    return 0;
}

static int
test_v3_invalid(void)
{
    zarr_dtype *t = NULL;
    ASSERT_ERR(dtype_v3("\"int7\"", &t), ZARR_EUNSUPPORTED);
    ASSERT(strstr(zarr_errmsg(), "'int7'"));
    ASSERT_ERR(dtype_v3("\"r7\"", &t), ZARR_EMETA);
    ASSERT_ERR(dtype_v3("\"r\"", &t), ZARR_EUNSUPPORTED);
    ASSERT_ERR(dtype_v3("{\"name\":\"fixed_length_utf32\",\"configuration\":{\"length_bytes\":5}}", &t),
               ZARR_EMETA);
    ASSERT(strstr(zarr_errmsg(), "length_bytes"));
    ASSERT_ERR(dtype_v3("{\"name\":\"fixed_length_utf32\"}", &t), ZARR_EMETA);
    ASSERT_ERR(dtype_v3("{\"configuration\":{}}", &t), ZARR_EMETA);
    ASSERT_ERR(dtype_v3("{\"name\":\"numpy.datetime64\",\"configuration\":{\"unit\":\"lightyear\"}}", &t),
               ZARR_EUNSUPPORTED);
    ASSERT_ERR(
        dtype_v3("{\"name\":\"numpy.datetime64\",\"configuration\":{\"unit\":\"s\",\"scale_factor\":0}}", &t),
        ZARR_EMETA);
    ASSERT_ERR(dtype_v3("{\"name\":\"struct\",\"configuration\":{\"fields\":[]}}", &t), ZARR_EMETA);
    ASSERT_ERR(
        dtype_v3(
            "{\"name\":\"struct\",\"configuration\":{\"fields\":[{\"name\":\"a\",\"data_type\":\"x\"}]}}",
            &t),
        ZARR_EUNSUPPORTED);
    ASSERT(strstr(zarr_errmsg(), "field 'a'"));
    ASSERT_ERR(dtype_v3("7", &t), ZARR_EMETA);
    ASSERT(t == NULL);
    return 0;
}

static int
test_v3_fixture_types(void)
{
    static const char *files[] = {"v3/data_type/numpy_datetime64/data_type.json",
                                  "v3/data_type/numpy_timedelta64/data_type.json",
                                  "v3/data_type/struct/data_type.json"};
    for (size_t i = 0; i < 3; i++) {
        struct json_object *j = load_json(files[i]), *back = NULL;
        zarr_dtype         *t = NULL;
        if (!j) {
            printf("  no fixture %s under %s/zarr-python/zarr-metadata\n", files[i], test_shared_dir());
            return TEST_SKIP;
        }
        ASSERT_OK(zarr_dtype_from_v3_json(j, &t));
        ASSERT_OK(zarr_dtype_to_v3_json(t, &back));
        if (!zarr__json_equal(j, back))
            FAILF("%s wrote back %s", files[i], json_object_to_json_string(back));
        if (i == 2) {
            ASSERT_EQ_INT(t->size, 16);
            ASSERT_EQ_INT(t->fields[2].offset, 8);
            ASSERT_EQ_INT(t->fields[2].type->kind, ZARR_DATETIME);
            ASSERT_STR(t->fields[2].type->unit, "ns");
        }
        json_object_put(j);
        json_object_put(back);
        zarr_dtype_free(t);
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * Fill values
 * ------------------------------------------------------------------------------------------------ */

/* Parses `fill` for `t`, writes it back, parses that again: both elements must be identical. Returns the
 * written JSON in *back (caller puts) and the element in elem. */
static int
fill_roundtrip(const zarr_dtype *t, int fmt, struct json_object *fill, void *elem, struct json_object **back)
{
    bool     defined = false, d2 = false;
    uint8_t *e2 = calloc(1, t->size);
    int      rc = zarr_fill_from_json(t, fmt, fill, elem, &defined);
    if (rc != ZARR_OK) {
        free(e2);
        return rc;
    }
    if ((rc = zarr_fill_to_json(t, fmt, elem, defined, back)) == ZARR_OK &&
        (rc = zarr_fill_from_json(t, fmt, *back, e2, &d2)) == ZARR_OK) {
        if (d2 != defined)
            rc = zarr_error(ZARR_EINVAL, "defined flag changed");
        else if (!zarr_dtype_has_vlen(t) && memcmp(elem, e2, t->size) != 0)
            rc = zarr_error(ZARR_EINVAL, "element changed on round trip (wrote %s)",
                            json_object_to_json_string(*back));
        else if (t->kind == ZARR_VLEN_UTF8) {
            char *a, *b;
            memcpy(&a, elem, sizeof a);
            memcpy(&b, e2, sizeof b);
            if (strcmp(a ? a : "", b ? b : "") != 0)
                rc = zarr_error(ZARR_EINVAL, "string changed on round trip");
        }
        else if (t->kind == ZARR_VLEN_BYTES) {
            zarr_vlen a, b;
            memcpy(&a, elem, sizeof a);
            memcpy(&b, e2, sizeof b);
            if (a.len != b.len || (a.len && memcmp(a.p, b.p, a.len)))
                rc = zarr_error(ZARR_EINVAL, "bytes changed on round trip");
        }
    }
    zarr_dtype_clear_elems(t, e2, 1);
    free(e2);
    return rc;
}

static zarr_dtype *
fixture_dtype(const char *dir)
{
    char                rel[512];
    struct json_object *j;
    zarr_dtype         *t = NULL;
    snprintf(rel, sizeof rel, "v3/data_type/%s/data_type.json", dir);
    if ((j = load_json(rel))) {
        zarr_dtype_from_v3_json(j, &t);
        json_object_put(j);
        return t;
    }
    if (strcmp(dir, "raw") == 0)
        j = json_object_new_string("r32");
    else
        j = json_object_new_string(dir);
    zarr_dtype_from_v3_json(j, &t);
    json_object_put(j);
    return t;
}

static int
test_fill_fixtures(void)
{
    char           path[4096];
    DIR           *d;
    struct dirent *e;
    int            ncases = 0, ntypes = 0;

    snprintf(path, sizeof path, "%s/zarr-python/zarr-metadata/v3/data_type", test_shared_dir());
    if (!(d = opendir(path))) {
        printf("  no fixtures at %s\n", path);
        return TEST_SKIP;
    }
    while ((e = readdir(d))) {
        char                rel[600];
        struct json_object *cases;
        zarr_dtype         *t;
        if (e->d_name[0] == '.')
            continue;
        snprintf(rel, sizeof rel, "v3/data_type/%s/fill_values.json", e->d_name);
        if (!(cases = load_json(rel)))
            continue;
        if (!(t = fixture_dtype(e->d_name))) {
            closedir(d);
            FAILF("no data type for fixture folder %s: %s", e->d_name, zarr_errmsg());
        }
        ntypes++;
        json_object_object_foreach(cases, name, fill)
        {
            uint8_t            *elem = calloc(1, t->size);
            struct json_object *back = NULL;
            int                 rc   = fill_roundtrip(t, 3, fill, elem, &back);
            if (rc != ZARR_OK) {
                closedir(d);
                FAILF("%s/%s (%s): %s", e->d_name, name, json_object_to_json_string(fill), zarr_errmsg());
            }
            /* written form equals the fixture except where several spellings exist */
            bool same = zarr__json_equal(fill, back);
            bool alt  = strstr(name, "hex") || strcmp(name, "tuple") == 0;
            if (!same && !alt) {
                closedir(d);
                FAILF("%s/%s: %s written back as %s", e->d_name, name, json_object_to_json_string(fill),
                      json_object_to_json_string(back));
            }
            ncases++;
            zarr_dtype_clear_elems(t, elem, 1);
            free(elem);
            json_object_put(back);
        }
        json_object_put(cases);
        zarr_dtype_free(t);
    }
    closedir(d);
    ASSERT(ntypes >= 20);
    ASSERT(ncases >= 60);
    return 0;
}

/* Parses a v3 or v2 fill and returns the element bytes in `elem` (size t->size). */
static int
fill_of(const char *dtype_json, int fmt, const char *fill_json, void *elem, zarr_dtype **tout)
{
    zarr_dtype         *t = NULL;
    struct json_object *f = J(fill_json);
    bool                defined;
    int                 rc = fmt == 3 ? dtype_v3(dtype_json, &t) : dtype_v2(dtype_json, &t);
    if (rc == ZARR_OK)
        rc = zarr_fill_from_json(t, fmt, f, elem, &defined);
    json_object_put(f);
    if (tout && rc == ZARR_OK)
        *tout = t;
    else
        zarr_dtype_free(t);
    return rc;
}

static int
emit_str(const char *dtype_json, int fmt, const void *elem, char *out, size_t n)
{
    zarr_dtype         *t  = NULL;
    struct json_object *j  = NULL;
    int                 rc = fmt == 3 ? dtype_v3(dtype_json, &t) : dtype_v2(dtype_json, &t);
    if (rc == ZARR_OK && (rc = zarr_fill_to_json(t, fmt, elem, true, &j)) == ZARR_OK)
        snprintf(out, n, "%s", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    json_object_put(j);
    zarr_dtype_free(t);
    return rc;
}

static int
test_fill_values(void)
{
    uint8_t  e[64];
    char     s[256];
    uint16_t h;
    uint32_t u32;
    uint64_t u64;
    int64_t  i64;
    double   dv;
    float    fv;

    /* exact 64-bit integers */
    ASSERT_OK(fill_of("\"int64\"", 3, "-9223372036854775808", e, NULL));
    memcpy(&i64, e, 8);
    ASSERT(i64 == INT64_MIN);
    ASSERT_OK(emit_str("\"int64\"", 3, e, s, sizeof s));
    ASSERT_STR(s, "-9223372036854775808");
    ASSERT_OK(fill_of("\"int64\"", 3, "9223372036854775807", e, NULL));
    memcpy(&i64, e, 8);
    ASSERT(i64 == INT64_MAX);
    ASSERT_OK(fill_of("\"uint64\"", 3, "18446744073709551615", e, NULL));
    memcpy(&u64, e, 8);
    ASSERT(u64 == UINT64_MAX);
    ASSERT_OK(emit_str("\"uint64\"", 3, e, s, sizeof s));
    ASSERT_STR(s, "18446744073709551615");
    ASSERT_OK(fill_of("\"int16\"", 3, "-32768", e, NULL));
    ASSERT_OK(emit_str("\"int16\"", 3, e, s, sizeof s));
    ASSERT_STR(s, "-32768");

    /* out of range and wrong types */
    ASSERT_ERR(fill_of("\"uint8\"", 3, "300", e, NULL), ZARR_EMETA);
    ASSERT(strstr(zarr_errmsg(), "300") && strstr(zarr_errmsg(), "uint8"));
    ASSERT_ERR(fill_of("\"uint8\"", 3, "-1", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"int8\"", 3, "-129", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"int8\"", 3, "128", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"int64\"", 3, "9223372036854775808", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"int32\"", 3, "1.5", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"int32\"", 3, "\"1\"", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"float32\"", 3, "1e39", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"float16\"", 3, "65520", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"float32\"", 3, "\"0x7fc0\"", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"float32\"", 3, "\"nan\"", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"bool\"", 3, "2", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"complex64\"", 3, "[1.0]", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"r32\"", 3, "[1,2,3,4,5]", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"r32\"", 3, "[1,2,3,256]", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"bytes\"", 3, "\"A!!=\"", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("{\"name\":\"fixed_length_utf32\",\"configuration\":{\"length_bytes\":8}}", 3,
                       "\"abc\"", e, NULL),
               ZARR_EMETA);
    ASSERT_ERR(
        fill_of("{\"name\":\"numpy.datetime64\",\"configuration\":{\"unit\":\"s\"}}", 3, "\"nat\"", e, NULL),
        ZARR_EMETA);

    /* floats: sentinels, hex bit patterns, float16 */
    ASSERT_OK(fill_of("\"float32\"", 3, "\"0x7fa00000\"", e, NULL));
    memcpy(&u32, e, 4);
    ASSERT_EQ_INT(u32, 0x7fa00000);
    ASSERT_OK(emit_str("\"float32\"", 3, e, s, sizeof s));
    ASSERT_STR(s, "\"0x7fa00000\"");
    ASSERT_OK(emit_str("\"<f4\"", 2, e, s, sizeof s));
    ASSERT_STR(s, "\"NaN\"");
    ASSERT_OK(fill_of("\"float32\"", 3, "\"0x7fc00000\"", e, NULL));
    ASSERT_OK(emit_str("\"float32\"", 3, e, s, sizeof s));
    ASSERT_STR(s, "\"NaN\"");
    ASSERT_OK(fill_of("\"float64\"", 3, "\"-Infinity\"", e, NULL));
    memcpy(&dv, e, 8);
    ASSERT(isinf(dv) && dv < 0);
    ASSERT_OK(fill_of("\"float64\"", 3, "0.1", e, NULL));
    memcpy(&dv, e, 8);
    ASSERT(dv == 0.1);
    ASSERT_OK(fill_of("\"float32\"", 3, "0.1", e, NULL));
    memcpy(&fv, e, 4);
    ASSERT(fv == 0.1f);
    ASSERT_OK(fill_of("\"float16\"", 3, "1.5", e, NULL));
    memcpy(&h, e, 2);
    ASSERT_EQ_INT(h, 0x3e00);
    ASSERT_OK(fill_of("\"float16\"", 3, "65504", e, NULL));
    memcpy(&h, e, 2);
    ASSERT_EQ_INT(h, 0x7bff);
    ASSERT_OK(fill_of("\"float16\"", 3, "-5.960464477539063e-08", e, NULL));
    memcpy(&h, e, 2);
    ASSERT_EQ_INT(h, 0x8001);
    ASSERT_OK(emit_str("\"float16\"", 3, e, s, sizeof s));
    ASSERT(strncmp(s, "-5.96046447753906", 17) == 0);
    ASSERT_OK(fill_of("\"float16\"", 3, "\"0x7d00\"", e, NULL));
    memcpy(&h, e, 2);
    ASSERT_EQ_INT(h, 0x7d00);
    ASSERT_OK(emit_str("\"float16\"", 3, e, s, sizeof s));
    ASSERT_STR(s, "\"0x7d00\"");
    ASSERT_OK(fill_of("\"complex128\"", 3, "[1.5, \"-Infinity\"]", e, NULL));
    memcpy(&dv, e, 8);
    ASSERT(dv == 1.5);
    memcpy(&dv, e + 8, 8);
    ASSERT(isinf(dv) && dv < 0);
    ASSERT_OK(emit_str("\"complex128\"", 3, e, s, sizeof s));
    ASSERT_STR(s, "[1.5,\"-Infinity\"]");

    /* bytes, raw, strings, datetimes */
    zarr_dtype *t = NULL;
    zarr_vlen   v;
    ASSERT_OK(fill_of("\"bytes\"", 3, "[1,2,3]", e, &t));
    memcpy(&v, e, sizeof v);
    ASSERT(v.len == 3 && memcmp(v.p, "\x01\x02\x03", 3) == 0);
    ASSERT_OK(emit_str("\"bytes\"", 3, e, s, sizeof s));
    ASSERT_STR(s, "\"AQID\"");
    zarr_dtype_clear_elems(t, e, 1);
    zarr_dtype_free(t);
    t = NULL;
    ASSERT_OK(fill_of("\"r32\"", 3, "[0,1,2,255]", e, NULL));
    ASSERT(memcmp(e, "\x00\x01\x02\xff", 4) == 0);
    ASSERT_OK(emit_str("\"r32\"", 3, e, s, sizeof s));
    ASSERT_STR(s, "[0,1,2,255]");
    ASSERT_OK(fill_of("{\"name\":\"fixed_length_utf32\",\"configuration\":{\"length_bytes\":12}}", 3,
                      "\"h\\u00e9\\ud83d\\ude00\"", e, NULL));
    memcpy(&u32, e + 4, 4);
    ASSERT_EQ_INT(u32, 0xe9);
    memcpy(&u32, e + 8, 4);
    ASSERT_EQ_INT(u32, 0x1f600);
    ASSERT_OK(emit_str("{\"name\":\"fixed_length_utf32\",\"configuration\":{\"length_bytes\":12}}", 3, e, s,
                       sizeof s));
    ASSERT_STR(s, "\"h\xc3\xa9\xf0\x9f\x98\x80\"");
    ASSERT_OK(
        fill_of("{\"name\":\"numpy.datetime64\",\"configuration\":{\"unit\":\"s\"}}", 3, "\"NaT\"", e, NULL));
    memcpy(&i64, e, 8);
    ASSERT(i64 == INT64_MIN);
    ASSERT_OK(
        emit_str("{\"name\":\"numpy.datetime64\",\"configuration\":{\"unit\":\"s\"}}", 3, e, s, sizeof s));
    ASSERT_STR(s, "\"NaT\"");

    /* undefined */
    bool defined = true;
    ASSERT_OK(dtype_v3("\"int32\"", &t));
    memset(e, 0xab, sizeof e);
    ASSERT_OK(zarr_fill_from_json(t, 3, NULL, e, &defined));
    ASSERT(!defined);
    ASSERT(e[0] == 0 && e[3] == 0);
    struct json_object *j = (struct json_object *)1;
    ASSERT_OK(zarr_fill_to_json(t, 3, e, false, &j));
    ASSERT(j == NULL);
    zarr_dtype_free(t);
    return 0;
}

/* Fill values as zarr-python 2.13 writes them in .zarray (captured from its output). */
static int
test_fill_v2(void)
{
    static const struct {
        const char *dtype, *fill;
        const char *bytes; /* expected element bytes (host = little endian), NULL = not checked */
        size_t      n;
        const char *back; /* expected written form, NULL = same as fill */
    } cases[] = {
        {"\"|S4\"", "\"YWI=\"", "ab\0\0", 4, NULL},
        {"\"<U3\"", "\"xy\"", "x\0\0\0y\0\0\0\0\0\0\0", 12, NULL},
        {"[[\"a\",\">i4\"],[\"b\",\"<f8\",[2]]]", "\"AAAAAQAAAAAAAARAAAAAAAAACEA=\"",
         "\x01\0\0\0\0\0\0\0\0\0\x04\x40\0\0\0\0\0\0\x08\x40", 20, NULL},
        {"\"<M8[10s]\"", "-9223372036854775808", "\0\0\0\0\0\0\0\x80", 8, NULL},
        {"\"<c8\"", "[1.0,2.0]", "\0\0\x80\x3f\0\0\0\x40", 8, NULL},
        {"\"<f4\"", "\"NaN\"", "\0\0\xc0\x7f", 4, NULL},
        {"\"<f2\"", "\"-Infinity\"", "\0\xfc", 2, NULL},
        {"\"|V3\"", "\"YWJj\"", "abc", 3, NULL},
        {"\"<f8\"", "0.0", "\0\0\0\0\0\0\0\0", 8, NULL},
        {"\"|b1\"", "true", "\x01", 1, NULL},
        {"\"|S4\"", "0", "\0\0\0\0", 4, "\"\""},
        {"[[\"x\",\"<f4\"],[\"y\",\"<f4\"]]", "0", "\0\0\0\0\0\0\0\0", 8, "\"AAAAAAAAAAA=\""},
        {"\"|O\"", "\"\"", NULL, 0, NULL},
        {"\"|O\"", "0", NULL, 0, "\"\""},
        {"\"|O\"", "\"abc\"", NULL, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        zarr_dtype         *t = NULL;
        struct json_object *f = J(cases[i].fill), *back = NULL,
                           *want = J(cases[i].back ? cases[i].back : cases[i].fill);
        uint8_t elem[64];
        ASSERT_OK(dtype_v2(cases[i].dtype, &t));
        if (fill_roundtrip(t, 2, f, elem, &back) != ZARR_OK)
            FAILF("case %zu (%s): %s", i, cases[i].fill, zarr_errmsg());
        if (cases[i].bytes && memcmp(elem, cases[i].bytes, cases[i].n) != 0)
            FAILF("case %zu (%s): wrong element bytes", i, cases[i].fill);
        if (!zarr__json_equal(back, want))
            FAILF("case %zu: %s written back as %s", i, cases[i].fill, json_object_to_json_string(back));
        zarr_dtype_clear_elems(t, elem, 1);
        json_object_put(f);
        json_object_put(back);
        json_object_put(want);
        zarr_dtype_free(t);
    }
    /* datetime in v2 is written as an integer, v3 as "NaT" */
    uint8_t e[8];
    char    s[64];
    ASSERT_OK(fill_of("\"<M8[ns]\"", 2, "\"NaT\"", e, NULL));
    ASSERT_OK(emit_str("\"<M8[ns]\"", 2, e, s, sizeof s));
    ASSERT_STR(s, "-9223372036854775808");
    ASSERT_ERR(fill_of("\"|S2\"", 2, "\"YWJj\"", e, NULL), ZARR_EMETA); /* 3 bytes into S2 */
    ASSERT_ERR(fill_of("\"<f8\"", 2, "\"abc\"", e, NULL), ZARR_EMETA);
    ASSERT_ERR(fill_of("\"|u1\"", 2, "300", e, NULL), ZARR_EMETA);
    return 0;
}

static int
test_struct_fill_v3(void)
{
    struct json_object *j = load_json("v3/data_type/struct/data_type.json"), *cases, *back = NULL;
    zarr_dtype         *t = NULL;
    uint8_t             e[16];
    float               x, y;
    int64_t             w;
    if (!j) {
        printf("  no fixture v3/data_type/struct/data_type.json under %s/zarr-python/zarr-metadata\n",
               test_shared_dir());
        return TEST_SKIP;
    }
    ASSERT_OK(zarr_dtype_from_v3_json(j, &t));
    cases = load_json("v3/data_type/struct/fill_values.json");
    ASSERT(cases);
    ASSERT_OK(fill_roundtrip(t, 3, json_object_object_get(cases, "all_fields"), e, &back));
    memcpy(&x, e, 4);
    memcpy(&y, e + 4, 4);
    memcpy(&w, e + 8, 8);
    ASSERT(x == 0.0f && y == 1.0f && w == 0);
    ASSERT(zarr__json_equal(back, json_object_object_get(cases, "all_fields")));
    json_object_put(back);
    /* missing field */
    struct json_object *bad = J("{\"x\": 0.0, \"y\": 1.0}");
    bool                d;
    ASSERT_ERR(zarr_fill_from_json(t, 3, bad, e, &d), ZARR_EMETA);
    json_object_put(bad);
    bad = J("{\"x\": 0.0, \"y\": 1.0, \"when\": \"x\"}");
    ASSERT_ERR(zarr_fill_from_json(t, 3, bad, e, &d), ZARR_EMETA);
    ASSERT(strstr(zarr_errmsg(), "'when'"));
    json_object_put(bad);
    json_object_put(cases);
    json_object_put(j);
    zarr_dtype_free(t);
    return 0;
}

static int
test_vlen_elems(void)
{
    zarr_dtype *t = NULL;
    ASSERT_OK(dtype_v3(
        "{\"name\":\"struct\",\"configuration\":{\"fields\":[{\"name\":\"s\",\"data_type\":\"string\"},"
        "{\"name\":\"b\",\"data_type\":\"bytes\"},{\"name\":\"i\",\"data_type\":\"int32\"}]}}",
        &t));
    ASSERT(zarr_dtype_has_vlen(t));
    size_t    sz  = t->size;
    uint8_t  *src = calloc(2, sz), *dst = calloc(2, sz);
    char     *s = strdup("hello");
    zarr_vlen v = {3, malloc(3)};
    memcpy(v.p, "xyz", 3);
    memcpy(src, &s, sizeof s);
    memcpy(src + t->fields[1].offset, &v, sizeof v);
    int32_t i = 42;
    memcpy(src + t->fields[2].offset, &i, 4);
    ASSERT_OK(zarr_dtype_copy_elems(t, dst, src, 2, false));
    ASSERT_OK(zarr_dtype_copy_elems(t, dst, src, 2, true)); /* replaces, frees the old payloads */
    char *ds;
    memcpy(&ds, dst, sizeof ds);
    ASSERT(ds != s && strcmp(ds, "hello") == 0);
    zarr_vlen dv;
    memcpy(&dv, dst + t->fields[1].offset, sizeof dv);
    ASSERT(dv.p != v.p && dv.len == 3 && memcmp(dv.p, "xyz", 3) == 0);
    memcpy(&i, dst + t->fields[2].offset, 4);
    ASSERT_EQ_INT(i, 42);
    zarr_dtype_clear_elems(t, src, 2);
    zarr_dtype_clear_elems(t, dst, 2);
    memcpy(&ds, dst, sizeof ds);
    ASSERT(ds == NULL);
    free(src);
    free(dst);
    zarr_dtype_free(t);

    /* constructors */
    t = zarr_dtype_new(ZARR_INT, 3);
    ASSERT(t == NULL);
    t = zarr_dtype_new(ZARR_UINT, 2);
    ASSERT(t && t->endian == '<' && t->size == 2);
    zarr_dtype_free(t);
    zarr_dtype_free(NULL);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(v2_strings), TEST_ENTRY(v2_invalid),       TEST_ENTRY(v2_structured), TEST_ENTRY(v3_names),
    TEST_ENTRY(v3_invalid), TEST_ENTRY(v3_fixture_types), TEST_ENTRY(fill_fixtures), TEST_ENTRY(fill_values),
    TEST_ENTRY(fill_v2),    TEST_ENTRY(struct_fill_v3),   TEST_ENTRY(vlen_elems),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
