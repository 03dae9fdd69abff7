/*
 * fuzz_dtype.c: harness for data types and fill values. The input is JSON: either an object
 * {"dtype": D, "fill": F} or a bare D (then a fixed set of fill values is tried). D is parsed as a v2
 * dtype and as a v3 data_type. Each type that parses must serialize and parse back equal (a copy
 * too); each fill value that parses must serialize and parse back to the same element, and
 * copy/clear of the element must be clean (ASan checks the vlen payloads).
 */
#include "fuzz_common.h"
#include "zjson.h"

#include <string.h>

static const char *const stock_fills[] = {"null",
                                          "0",
                                          "1",
                                          "-1",
                                          "1.5",
                                          "\"NaN\"",
                                          "\"Infinity\"",
                                          "\"-Infinity\"",
                                          "\"0x7fc00001\"",
                                          "true",
                                          "\"\"",
                                          "\"AAAA\"",
                                          "\"héllo\"",
                                          "[0, 0]",
                                          "[1, 2, 3]",
                                          "[\"NaN\", 1]",
                                          "\"NaT\"",
                                          "18446744073709551615",
                                          "-9223372036854775808",
                                          "{}",
                                          "{\"a\": 1}"};

static void
check_fill(const zarr_dtype *t, int fmt, struct json_object *f)
{
    uint8_t            *e1 = calloc(1, t->size), *e2 = calloc(1, t->size), *e3 = calloc(1, t->size);
    struct json_object *j1 = NULL, *j2 = NULL;
    bool                d1 = false, d2 = false;

    if (!e1 || !e2 || !e3)
        goto done;
    if (zarr_fill_from_json(t, fmt, f, e1, &d1) != ZARR_OK) {
        for (size_t i = 0; i < t->size; i++)
            FUZZ_CHECK(e1[i] == 0, "a failed fill parse left bytes in the element");
        goto done;
    }
    FUZZ_CHECK(d1 == (f != NULL), "fill defined=%d for %s", (int)d1, f ? "a value" : "NULL");
    if (!d1)
        goto done;
    FUZZ_CHECK(zarr_fill_to_json(t, fmt, e1, true, &j1) == ZARR_OK,
               "v%d fill %s parses but does not serialize", fmt, json_object_to_json_string(f));
    FUZZ_CHECK(zarr_fill_from_json(t, fmt, j1, e2, &d2) == ZARR_OK && d2,
               "v%d fill %s serializes as %s, which does not parse back", fmt, json_object_to_json_string(f),
               json_object_to_json_string(j1));
    if (!zarr_dtype_has_vlen(t))
        FUZZ_CHECK(memcmp(e1, e2, t->size) == 0, "v%d fill %s -> %s changes the value", fmt,
                   json_object_to_json_string(f), json_object_to_json_string(j1));
    FUZZ_CHECK(zarr_fill_to_json(t, fmt, e2, true, &j2) == ZARR_OK && zarr__json_equal(j1, j2),
               "v%d fill %s: serializing twice differs", fmt, json_object_to_json_string(f));
    FUZZ_CHECK(zarr_dtype_copy_elems(t, e3, e1, 1, false) == ZARR_OK, "copying a fill element failed");
    zarr_dtype_clear_elems(t, e3, 1);
    zarr_dtype_clear_elems(t, e2, 1);
    zarr_dtype_clear_elems(t, e1, 1);
done:
    json_object_put(j1);
    json_object_put(j2);
    free(e1);
    free(e2);
    free(e3);
}

static void
check_type(const zarr_dtype *t, int fmt, struct json_object *fill)
{
    struct json_object *j = NULL, *jo = NULL;
    zarr_dtype         *t2 = NULL, *cp = NULL, *to = NULL;
    int                 rc;

    FUZZ_CHECK(t->size > 0 || t->kind == ZARR_STRUCT, "a parsed type has size 0");
    rc = fmt == 2 ? zarr_dtype_to_v2_json(t, &j) : zarr_dtype_to_v3_json(t, &j);
    FUZZ_CHECK(rc == ZARR_OK, "a parsed v%d type does not serialize", fmt);
    rc = fmt == 2 ? zarr_dtype_from_v2_json(j, &t2) : zarr_dtype_from_v3_json(j, &t2);
    FUZZ_CHECK(rc == ZARR_OK, "v%d type serializes as %s, which does not parse back", fmt,
               json_object_to_json_string(j));
    FUZZ_CHECK(zarr_dtype_equal(t, t2), "v%d type changes through %s", fmt, json_object_to_json_string(j));
    FUZZ_CHECK((cp = zarr_dtype_copy(t)) != NULL && zarr_dtype_equal(t, cp), "dtype copy differs");
    /* the other format's form, when there is one, must read back in that format */
    rc = fmt == 2 ? zarr_dtype_to_v3_json(t, &jo) : zarr_dtype_to_v2_json(t, &jo);
    if (rc == ZARR_OK) {
        rc = fmt == 2 ? zarr_dtype_from_v3_json(jo, &to) : zarr_dtype_from_v2_json(jo, &to);
        FUZZ_CHECK(rc == ZARR_OK, "v%d type's v%d form %s does not parse", fmt, fmt == 2 ? 3 : 2,
                   json_object_to_json_string(jo));
        /* v2 "|O" reads as a placeholder until the metadata's object codec resolves it */
        FUZZ_CHECK(zarr_dtype_has_vlen(t) || (to->kind == t->kind && to->size == t->size),
                   "v%d type's v%d form %s changes kind or size", fmt, fmt == 2 ? 3 : 2,
                   json_object_to_json_string(jo));
    }
    if (t->size > 0 && t->size <= (1u << 16)) {
        if (fill)
            check_fill(t, fmt, fill);
        else
            for (size_t i = 0; i < sizeof stock_fills / sizeof stock_fills[0]; i++) {
                struct json_object *f = json_tokener_parse(stock_fills[i]);
                check_fill(t, fmt, f);
                json_object_put(f);
            }
    }
    json_object_put(j);
    json_object_put(jo);
    zarr_dtype_free(t2);
    zarr_dtype_free(cp);
    zarr_dtype_free(to);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct json_object *root = NULL, *d = NULL, *f = NULL;
    zarr_dtype         *t = NULL;

    if (size > FUZZ_MAX_INPUT)
        return 0;
    if (zarr__json_parse((const char *)data, size, "fuzz", &root) != ZARR_OK)
        goto done;
    if (json_object_is_type(root, json_type_object) && json_object_object_get_ex(root, "dtype", &d))
        json_object_object_get_ex(root, "fill", &f);
    else
        d = root;
    for (int fmt = 2; fmt <= 3; fmt++) {
        int rc = fmt == 2 ? zarr_dtype_from_v2_json(d, &t) : zarr_dtype_from_v3_json(d, &t);
        if (rc == ZARR_OK) {
            FUZZ_CHECK(t != NULL, "parse succeeded without a type");
            check_type(t, fmt, f);
        }
        else
            FUZZ_CHECK(zarr_errmsg()[0] != '\0', "a failed dtype parse gave no message");
        zarr_dtype_free(t);
        t = NULL;
    }
done:
    json_object_put(root);
    zarr_error_clear();
    return 0;
}

/* Seeds from the shared test data, read in place: every value of every
 * zarr-metadata/v3/data_type/<name>/fill_values.json becomes {"dtype": <name>, "fill": value}
 * (numpy_datetime64 -> numpy.datetime64 with a "ns" unit). Nothing is written when the data is
 * absent. */
int fuzz_gen_seeds(const char *dir);

int
fuzz_gen_seeds(const char *dir)
{
    static const char *const names[] = {"bool",
                                        "int8",
                                        "int16",
                                        "int32",
                                        "int64",
                                        "uint8",
                                        "uint16",
                                        "uint32",
                                        "uint64",
                                        "float16",
                                        "float32",
                                        "float64",
                                        "complex64",
                                        "complex128",
                                        "string",
                                        "bytes",
                                        "raw",
                                        "struct",
                                        "numpy_datetime64",
                                        "numpy_timedelta64"};
    const char              *env     = getenv("H5ZARR_SHARED");
    char                     path[4096], cmd[4200];
    int                      nseeds = 0;

    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct json_object *vals, *dt;
        snprintf(path, sizeof path, "%s/testdata/zarr-python/zarr-metadata/v3/data_type/%s/fill_values.json",
                 env ? env : "../shared", names[i]);
        if (!(vals = json_object_from_file(path)))
            continue;
        if (strncmp(names[i], "numpy_", 6) == 0) {
            char nm[64];
            snprintf(nm, sizeof nm, "numpy.%s", names[i] + 6);
            dt = json_object_new_object();
            json_object_object_add(dt, "name", json_object_new_string(nm));
            json_object_object_add(dt, "configuration",
                                   json_tokener_parse("{\"unit\":\"ns\",\"scale_factor\":1}"));
        }
        else
            dt = json_object_new_string(names[i]);
        if (json_object_is_type(vals, json_type_object)) {
            json_object_object_foreach(vals, k, v)
            {
                struct json_object *o = json_object_new_object();
                FILE               *f;
                json_object_object_add(o, "dtype", json_object_get(dt));
                json_object_object_add(o, "fill", json_object_get(v));
                snprintf(path, sizeof path, "%s/%s-%s", dir, names[i], k);
                if ((f = fopen(path, "w")) != NULL) {
                    fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), f);
                    fclose(f);
                    nseeds++;
                }
                json_object_put(o);
            }
        }
        json_object_put(dt);
        json_object_put(vals);
    }
    fprintf(stderr, "fuzz_gen_seeds: %d dtype seeds from the shared data\n", nseeds);
    return 0;
}
