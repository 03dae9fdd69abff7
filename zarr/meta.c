/*
 * meta.c: array and group metadata documents (v2 .zarray/.zgroup + .zattrs, v3 zarr.json).
 *
 * Parsing checks every field and fails with a message naming the document and the key; the codec
 * chain is built by chain.c from the `codecs` (v3) or `filters`/`compressor` (v2) fields. Unknown
 * top-level keys are kept in `extra` and written back: in v3 only extension objects marked
 * "must_understand": false are accepted, anything else unknown is refused. The top-level key
 * ZARR_RESERVED_KEY (an object; in v3 one marked "must_understand": false) is the layer above's
 * (`reserved`): kept whole and written back, never interpreted here. A v3 group's inline consolidated
 * metadata is kept as `consolidated` (its "metadata") and `consolidated_hidden` (its "h5zarr_hidden":
 * hidden arrays, zarr.h ZARR_HIDDEN_DOC). Serialization writes the key order zarr-python uses, 2-space
 * indented.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, clock_gettime */

#include "meta_int.h"
#include "internal.h"
#include "zjson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Adds `val` (taken) under the literal `key` to an object being built that does not have it yet:
 * json-c then neither looks the key up nor copies it (see bench/README.md, "Figures behind comments in
 * the sources"). */
#define ADD_NEW(obj, key, val)                                                                               \
    json_object_object_add_ex((obj), (key), (val),                                                           \
                              JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_KEY_IS_CONSTANT)

/* ------------------------------------------------------------------------------------------------
 * Shared helpers
 * ------------------------------------------------------------------------------------------------ */
static bool
is_key(const char *k, const char *const *keys)
{
    for (; *keys; keys++)
        if (strcmp(k, *keys) == 0)
            return true;
    return false;
}

/* v3 rule for a key this reader does not know: keep it if it is an extension object marked
 * "must_understand": false, refuse it otherwise. */
static int
keep_extension(struct json_object **extra, const char *key, struct json_object *val, const char *where)
{
    struct json_object *mu = NULL;
    if (!json_object_is_type(val, json_type_object) ||
        !json_object_object_get_ex(val, "must_understand", &mu) ||
        !json_object_is_type(mu, json_type_boolean) || json_object_get_boolean(mu))
        return zarr_error(
            ZARR_EUNSUPPORTED,
            "'%s': unknown extension '%s' must be understood (\"must_understand\" is not false)", where, key);
    if (!*extra && !(*extra = json_object_new_object()))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    return zarr__json_add(*extra, key, json_object_get(val));
}

/* The reserved object of a document: `val` under ZARR_RESERVED_KEY. v2: any JSON object (taken as it
 * is); v3: an extension object with "must_understand": false, which is left out of what is kept. Sets
 * *took when `val` went to `*reserved`; other values are the caller's (kept as extras, or refused as
 * v3 extensions are). */
static int
keep_reserved(struct json_object **reserved, int fmt, struct json_object *val, bool *took)
{
    struct json_object *mu = NULL, *o;

    *took = false;
    if (*reserved || !json_object_is_type(val, json_type_object))
        return ZARR_OK;
    if (fmt == 2) {
        *reserved = json_object_get(val);
        *took     = true;
        return ZARR_OK;
    }
    if (!json_object_object_get_ex(val, "must_understand", &mu) ||
        !json_object_is_type(mu, json_type_boolean) || json_object_get_boolean(mu))
        return ZARR_OK;
    if (!(o = json_object_new_object()))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    json_object_object_foreach(val, k, v)
    {
        int rc;
        if (strcmp(k, "must_understand") == 0)
            continue;
        if ((rc = zarr__json_add(o, k, json_object_get(v))) != ZARR_OK) {
            json_object_put(o);
            return rc;
        }
    }
    *reserved = o;
    *took     = true;
    return ZARR_OK;
}

static int
keep_extra(struct json_object **extra, const char *key, struct json_object *val)
{
    if (!*extra && !(*extra = json_object_new_object()))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    return zarr__json_add(*extra, key, json_object_get(val));
}

static int
check_format(struct json_object *root, int want, const char *where)
{
    struct json_object *v;
    int64_t             f;
    int rc = zarr__json_get_key(root, "zarr_format", json_type_int, true, where, "an integer", &v);
    if (rc != ZARR_OK)
        return rc;
    if (!zarr__json_get_i64(v, &f) || f != want)
        return zarr_error(f == 2 || f == 3 ? ZARR_EMETA : ZARR_EUNSUPPORTED,
                          "'%s': 'zarr_format' is %s, expected %d", where, json_object_to_json_string(v),
                          want);
    return ZARR_OK;
}

/* Name of the .zattrs document next to a .zarray/.zgroup one, for messages. */
static void
attrs_where(const char *where, char *buf, size_t n)
{
    const char *slash = strrchr(where, '/');
    size_t      dir   = slash ? (size_t)(slash - where + 1) : 0;
    snprintf(buf, n, "%.*s.zattrs", (int)dir, where);
}

static int
parse_attrs(const char *text, size_t n, const char *where, struct json_object **out)
{
    struct json_object *a = NULL;
    int                 rc;

    *out = NULL;
    if (text) {
        if ((rc = zarr__json_parse(text, n, where, &a)) != ZARR_OK)
            return rc;
        if (!json_object_is_type(a, json_type_object)) {
            json_object_put(a);
            return zarr_error(ZARR_EMETA, "'%s': attributes must be a JSON object", where);
        }
    }
    else if (!(a = json_object_new_object()))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    *out = a;
    return ZARR_OK;
}

/* Element count and byte size checks for one chunk. The array as a whole may hold more than 2^64
 * elements (HDF5 and netCDF allow such a shape, e.g. several large unlimited-sized dimensions, as long as
 * no selection that large is read or written): nothing here counts them all; each job checks the region
 * it moves. */
static int
check_sizes(const zarr_array_meta *m, const char *where)
{
    uint64_t c = 1, bytes;
    for (int d = 0; d < m->ndim; d++)
        if (!zarr__mul_ok(c, m->chunks[d], &c))
            return zarr_error(ZARR_EOVERFLOW,
                              "'%s': the chunk shape has too many elements (overflows 64 bits)", where);
    if (!zarr__mul_ok(c, m->dtype->size, &bytes) || bytes > (uint64_t)SIZE_MAX / 2)
        return zarr_error(ZARR_EOVERFLOW, "'%s': one chunk would hold more bytes than can be addressed",
                          where);
    return ZARR_OK;
}

static int
alloc_meta(int fmt, zarr_array_meta **out)
{
    zarr_array_meta *m = calloc(1, sizeof *m);
    *out               = m;
    if (!m)
        return zarr_error(ZARR_ENOMEM, "out of memory");
    m->zarr_format  = fmt;
    m->order        = 'C';
    m->key_encoding = fmt == 2 ? ZARR_KEYS_V2 : ZARR_KEYS_DEFAULT;
    m->separator    = fmt == 2 ? '.' : '/';
    return ZARR_OK;
}

static int
alloc_fill(zarr_array_meta *m)
{
    if (!(m->fill = calloc(1, m->dtype->size ? m->dtype->size : 1)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    return ZARR_OK;
}

/* ------------------------------------------------------------------------------------------------
 * v3 array
 * ------------------------------------------------------------------------------------------------ */
static const char *const v3_array_keys[] = {
    "zarr_format", "node_type", "shape",      "data_type",       "chunk_grid",           "chunk_key_encoding",
    "fill_value",  "codecs",    "attributes", "dimension_names", "storage_transformers", NULL};

static int
parse_chunk_grid(struct json_object *root, zarr_array_meta *m, const char *where)
{
    struct json_object *g, *name = NULL, *conf = NULL, *cs = NULL;
    int                 rc, n;

    if ((rc = zarr__json_get_key(root, "chunk_grid", json_type_object, true, where, "an object", &g)) !=
        ZARR_OK)
        return rc;
    json_object_object_get_ex(g, "name", &name);
    if (!json_object_is_type(name, json_type_string))
        return zarr_error(ZARR_EMETA, "'%s': 'chunk_grid' needs a string 'name'", where);
    if (strcmp(json_object_get_string(name), "regular") != 0)
        return zarr_error(ZARR_EUNSUPPORTED, "'%s': 'chunk_grid' '%s' is not supported (only 'regular')",
                          where, json_object_get_string(name));
    json_object_object_get_ex(g, "configuration", &conf);
    if (!json_object_is_type(conf, json_type_object) || !json_object_object_get_ex(conf, "chunk_shape", &cs))
        return zarr_error(ZARR_EMETA, "'%s': 'chunk_grid' needs a configuration with 'chunk_shape'", where);
    if ((rc = zarr__json_uint_list(cs, "chunk_shape", 1, where, m->chunks, ZARR_MAX_DIMS, &n)) != ZARR_OK)
        return rc;
    if (n != m->ndim)
        return zarr_error(ZARR_EMETA, "'%s': 'chunk_shape' has %d entries but 'shape' has %d", where, n,
                          m->ndim);
    return ZARR_OK;
}

static int
parse_key_encoding(struct json_object *root, zarr_array_meta *m, const char *where)
{
    struct json_object *e, *name = NULL, *conf = NULL, *sep = NULL;
    const char         *nm;
    int                 rc;

    if ((rc = zarr__json_get_key(root, "chunk_key_encoding", json_type_null, true, where, NULL, &e)) !=
        ZARR_OK)
        return rc;
    if (json_object_is_type(e, json_type_string))
        name = e;
    else if (json_object_is_type(e, json_type_object)) {
        json_object_object_get_ex(e, "name", &name);
        json_object_object_get_ex(e, "configuration", &conf);
    }
    if (!json_object_is_type(name, json_type_string))
        return zarr_error(ZARR_EMETA, "'%s': 'chunk_key_encoding' must be an object with a string 'name'",
                          where);
    nm = json_object_get_string(name);
    if (strcmp(nm, "default") == 0) {
        m->key_encoding = ZARR_KEYS_DEFAULT;
        m->separator    = '/';
    }
    else if (strcmp(nm, "v2") == 0) {
        m->key_encoding = ZARR_KEYS_V2;
        m->separator    = '.';
    }
    else
        return zarr_error(ZARR_EUNSUPPORTED, "'%s': 'chunk_key_encoding' '%s' is not supported", where, nm);
    if (conf && !json_object_is_type(conf, json_type_object))
        return zarr_error(ZARR_EMETA, "'%s': 'chunk_key_encoding' configuration must be an object", where);
    if (conf && json_object_object_get_ex(conf, "separator", &sep)) {
        const char *s = json_object_is_type(sep, json_type_string) ? json_object_get_string(sep) : "";
        if (strcmp(s, "/") != 0 && strcmp(s, ".") != 0)
            return zarr_error(ZARR_EMETA, "'%s': 'chunk_key_encoding' separator must be \"/\" or \".\"",
                              where);
        m->separator = s[0];
    }
    return ZARR_OK;
}

static int
parse_dimension_names(struct json_object *root, zarr_array_meta *m, const char *where)
{
    struct json_object *dn;
    int                 rc;

    if ((rc = zarr__json_get_key(root, "dimension_names", json_type_null, false, where, NULL, &dn)) !=
            ZARR_OK ||
        !dn)
        return rc;
    if (!json_object_is_type(dn, json_type_array) || json_object_array_length(dn) != (size_t)m->ndim)
        return zarr_error(ZARR_EMETA, "'%s': 'dimension_names' must be a list of %d strings or nulls", where,
                          m->ndim);
    for (int d = 0; d < m->ndim; d++) {
        struct json_object *v = json_object_array_get_idx(dn, (size_t)d);
        if (!v)
            continue;
        if (!json_object_is_type(v, json_type_string))
            return zarr_error(ZARR_EMETA, "'%s': 'dimension_names' must be a list of %d strings or nulls",
                              where, m->ndim);
        if (!(m->dimension_names[d] = strdup(json_object_get_string(v))))
            return zarr_error(ZARR_ENOMEM, "out of memory");
    }
    m->has_dimension_names = true;
    return ZARR_OK;
}

static int
array_from_v3(struct json_object *root, const char *where, zarr_array_meta **out)
{
    zarr_array_meta    *m = NULL;
    struct json_object *v;
    const char         *nt;
    int                 rc;

    *out = NULL;
    ZARR_TRY(alloc_meta(3, &m));
    if (!json_object_is_type(root, json_type_object))
        ZARR_FAIL(ZARR_EMETA, "'%s': the document must be a JSON object", where);
    ZARR_TRY(check_format(root, 3, where));
    ZARR_TRY(zarr__json_get_str(root, "node_type", true, where, &nt));
    if (strcmp(nt, "array") != 0)
        ZARR_FAIL(ZARR_EMETA, "'%s': 'node_type' is '%s', not 'array'", where, nt);
    ZARR_TRY(zarr__json_get_uint_list(root, "shape", 0, where, m->shape, ZARR_MAX_DIMS, &m->ndim));
    ZARR_TRY(zarr__json_get_key(root, "data_type", json_type_null, true, where, NULL, &v));
    if ((rc = zarr_dtype_from_v3_json(v, &m->dtype)) != ZARR_OK) {
        zarr_error_wrap(rc, "'%s': 'data_type': ", where);
        goto done;
    }
    ZARR_TRY(parse_chunk_grid(root, m, where));
    ZARR_TRY(parse_key_encoding(root, m, where));
    ZARR_TRY(check_sizes(m, where));
    ZARR_TRY(alloc_fill(m));
    ZARR_TRY(zarr__json_get_key(root, "fill_value", json_type_null, true, where, NULL, &v));
    if ((rc = zarr_fill_from_json(m->dtype, 3, v, m->fill, &m->fill_defined)) != ZARR_OK) {
        zarr_error_wrap(rc, "'%s': 'fill_value': ", where);
        goto done;
    }
    ZARR_TRY(zarr__json_get_key(root, "storage_transformers", json_type_null, false, where, NULL, &v));
    if (v && (!json_object_is_type(v, json_type_array)))
        ZARR_FAIL(ZARR_EMETA, "'%s': 'storage_transformers' must be a list", where);
    if (v && json_object_array_length(v) > 0)
        ZARR_FAIL(ZARR_EUNSUPPORTED, "'%s': 'storage_transformers' are not supported", where);
    ZARR_TRY(zarr__json_get_key(root, "attributes", json_type_object, false, where, "an object", &v));
    if (!(m->attributes = v ? json_object_get(v) : json_object_new_object()))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    ZARR_TRY(parse_dimension_names(root, m, where));
    json_object_object_foreach(root, key, val)
    {
        bool took = false;
        if (strcmp(key, ZARR_RESERVED_KEY) == 0)
            ZARR_TRY(keep_reserved(&m->reserved, 3, val, &took));
        if (!took && !is_key(key, v3_array_keys))
            ZARR_TRY(keep_extension(&m->extra, key, val, where));
    }
    ZARR_TRY(zarr__json_get_key(root, "codecs", json_type_array, true, where, "a list", &v));
    if ((rc = zarr_chain_from_v3_json(v, m->dtype, m->ndim, &m->chain)) != ZARR_OK) {
        zarr_error_wrap(rc, "'%s': 'codecs': ", where);
        goto done;
    }
    ZARR_TRY(zarr__chain_set_fill(m->chain, m->fill));
    *out = m;
    m    = NULL;
done:
    zarr_array_meta_free(m);
    return rc;
}

int
zarr__array_meta_from_v3(struct json_object *root, const char *where, zarr_array_meta **out)
{
    *out = NULL;
    return array_from_v3(root, where ? where : "zarr.json", out);
}

int
zarr_array_meta_parse_v3(const char *text, size_t n, const char *where, zarr_array_meta **out)
{
    struct json_object *root = NULL;
    int                 rc;

    *out = NULL;
    if (!where)
        where = "zarr.json";
    if ((rc = zarr__json_parse(text, n, where, &root)) != ZARR_OK)
        return rc;
    rc = array_from_v3(root, where, out);
    json_object_put(root);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * v2 array
 * ------------------------------------------------------------------------------------------------ */
static const char *const v2_array_keys[] = {"zarr_format",         "shape",      "chunks", "dtype",
                                            "compressor",          "fill_value", "order",  "filters",
                                            "dimension_separator", NULL};

/* |O arrays: the object codec in `filters` says whether elements are strings or bytes. */
static int
resolve_object_dtype(zarr_array_meta *m, struct json_object *filters, const char *where)
{
    bool utf8 = false, bytes = false;
    if (m->dtype->kind != ZARR_VLEN_UTF8)
        return ZARR_OK;
    for (size_t i = 0; json_object_is_type(filters, json_type_array) && i < json_object_array_length(filters);
         i++) {
        struct json_object *id = NULL;
        const char         *s;
        json_object_object_get_ex(json_object_array_get_idx(filters, i), "id", &id);
        s = json_object_is_type(id, json_type_string) ? json_object_get_string(id) : "";
        utf8 |= strcmp(s, "vlen-utf8") == 0 || strcmp(s, "categorize") == 0; /* categorize: of strings */
        bytes |= strcmp(s, "vlen-bytes") == 0;
    }
    if (bytes && !utf8) {
        zarr_dtype *t = zarr_dtype_new(ZARR_VLEN_BYTES, 0);
        if (!t)
            return zarr_error(ZARR_ENOMEM, "out of memory");
        zarr_dtype_free(m->dtype);
        m->dtype = t;
    }
    else if (!utf8)
        return zarr_error(
            ZARR_EUNSUPPORTED,
            "'%s': 'dtype' \"|O\" needs a vlen-utf8, vlen-bytes or categorize filter (other object codecs "
            "are not supported)",
            where);
    return ZARR_OK;
}

int
zarr_array_meta_parse_v2(const char *zarray, size_t n, const char *zattrs, size_t an, const char *where,
                         zarr_array_meta **out)
{
    struct json_object *root = NULL, *v, *filters, *compressor;
    zarr_array_meta    *m    = NULL;
    const char         *s;
    char                aw[512];
    int                 rc, nc;

    *out = NULL;
    if (!where)
        where = ".zarray";
    ZARR_TRY(alloc_meta(2, &m));
    ZARR_TRY(zarr__json_parse(zarray, n, where, &root));
    if (!json_object_is_type(root, json_type_object))
        ZARR_FAIL(ZARR_EMETA, "'%s': the document must be a JSON object", where);
    ZARR_TRY(check_format(root, 2, where));
    ZARR_TRY(zarr__json_get_uint_list(root, "shape", 0, where, m->shape, ZARR_MAX_DIMS, &m->ndim));
    ZARR_TRY(zarr__json_get_uint_list(root, "chunks", 1, where, m->chunks, ZARR_MAX_DIMS, &nc));
    if (nc != m->ndim)
        ZARR_FAIL(ZARR_EMETA, "'%s': 'chunks' has %d entries but 'shape' has %d", where, nc, m->ndim);
    ZARR_TRY(zarr__json_get_key(root, "dtype", json_type_null, true, where, NULL, &v));
    if ((rc = zarr_dtype_from_v2_json(v, &m->dtype)) != ZARR_OK) {
        zarr_error_wrap(rc, "'%s': 'dtype': ", where);
        goto done;
    }
    ZARR_TRY(zarr__json_get_key(root, "filters", json_type_null, false, where, NULL, &filters));
    if (filters && !json_object_is_type(filters, json_type_array))
        ZARR_FAIL(ZARR_EMETA, "'%s': 'filters' must be null or a list", where);
    ZARR_TRY(zarr__json_get_key(root, "compressor", json_type_null, true, where, NULL, &compressor));
    if (compressor && !json_object_is_type(compressor, json_type_object))
        ZARR_FAIL(ZARR_EMETA, "'%s': 'compressor' must be null or an object", where);
    ZARR_TRY(resolve_object_dtype(m, filters, where));
    ZARR_TRY(check_sizes(m, where));
    ZARR_TRY(zarr__json_get_str(root, "order", true, where, &s));
    if (strcmp(s, "C") != 0 && strcmp(s, "F") != 0)
        ZARR_FAIL(ZARR_EMETA, "'%s': 'order' must be \"C\" or \"F\"", where);
    m->order = s[0];
    ZARR_TRY(zarr__json_get_str(root, "dimension_separator", false, where, &s));
    if (s && strcmp(s, ".") != 0 && strcmp(s, "/") != 0)
        ZARR_FAIL(ZARR_EMETA, "'%s': 'dimension_separator' must be \".\" or \"/\"", where);
    if (s)
        m->separator = s[0];
    ZARR_TRY(alloc_fill(m));
    ZARR_TRY(zarr__json_get_key(root, "fill_value", json_type_null, true, where, NULL, &v));
    if ((rc = zarr_fill_from_json(m->dtype, 2, v, m->fill, &m->fill_defined)) != ZARR_OK) {
        zarr_error_wrap(rc, "'%s': 'fill_value': ", where);
        goto done;
    }
    json_object_object_foreach(root, key, val)
    {
        bool took = false;
        if (strcmp(key, ZARR_RESERVED_KEY) == 0)
            ZARR_TRY(keep_reserved(&m->reserved, 2, val, &took));
        if (!took && !is_key(key, v2_array_keys))
            ZARR_TRY(keep_extra(&m->extra, key, val));
    }
    attrs_where(where, aw, sizeof aw);
    ZARR_TRY(parse_attrs(zattrs, an, aw, &m->attributes));
    if ((rc = zarr_chain_from_v2_json(filters, compressor, m->order, m->dtype, m->ndim, &m->chain)) !=
        ZARR_OK) {
        zarr_error_wrap(rc, "'%s': 'filters'/'compressor': ", where);
        goto done;
    }
    *out = m;
    m    = NULL;
done:
    zarr_array_meta_free(m);
    json_object_put(root);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * Array serialization
 * ------------------------------------------------------------------------------------------------ */
/* `v` for a document being built: a new reference to it, or with `copy` a deep copy (the document
 * shares nothing with the description then). NULL stays NULL (JSON null); *out NULL and ZARR_ENOMEM
 * when the copy fails. */
static int
ref_of(struct json_object *v, bool copy, struct json_object **out)
{
    *out = NULL;
    if (!copy || !v) {
        *out = json_object_get(v);
        return ZARR_OK;
    }
    return json_object_deep_copy(v, out, NULL) == 0 ? ZARR_OK : zarr_error(ZARR_ENOMEM, "out of memory");
}

/* zarr__json_add of ref_of(val, copy). */
static int
add_ref(struct json_object *o, const char *key, struct json_object *val, bool copy)
{
    struct json_object *v;
    int                 rc = ref_of(val, copy, &v);
    if (rc == ZARR_OK && (rc = zarr__json_add(o, key, v)) != ZARR_OK)
        json_object_put(v);
    return rc;
}

static int
add_extra(struct json_object *o, struct json_object *extra, bool copy)
{
    if (!extra)
        return ZARR_OK;
    json_object_object_foreach(extra, key, val)
    {
        if (!zarr__json_has(o, key)) {
            int rc = add_ref(o, key, val, copy);
            if (rc != ZARR_OK)
                return rc;
        }
    }
    return ZARR_OK;
}

/* Adds the reserved object under ZARR_RESERVED_KEY (v3: first "must_understand": false, as the spec
 * asks of extra top-level keys); nothing for none or an empty one. */
static int
add_reserved(struct json_object *o, struct json_object *reserved, int fmt, bool copy)
{
    struct json_object *r;
    if (!reserved || !json_object_is_type(reserved, json_type_object) ||
        json_object_object_length(reserved) == 0)
        return ZARR_OK;
    if (fmt == 2)
        return add_ref(o, ZARR_RESERVED_KEY, reserved, copy);
    if (!(r = json_object_new_object()))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    ADD_NEW(r, "must_understand", json_object_new_boolean(0));
    json_object_object_foreach(reserved, k, v)
    {
        int rc;
        if (strcmp(k, "must_understand") == 0)
            continue;
        if ((rc = add_ref(r, k, v, copy)) != ZARR_OK) {
            json_object_put(r);
            return rc;
        }
    }
    return zarr__json_add(o, ZARR_RESERVED_KEY, r);
}

static int
finish_text(struct json_object *o, char **out)
{
    if (!(*out = zarr__json_dump(o)))
        return zarr_error(ZARR_ENOMEM, "out of memory serializing metadata");
    return ZARR_OK;
}

static bool
attrs_empty(struct json_object *a)
{
    return !a || json_object_object_length(a) == 0;
}

/* The array's zarr.json as a new object; with `copy` it shares nothing with `m`. */
static int
array_v3_json(const zarr_array_meta *m, bool copy, struct json_object **out)
{
    struct json_object *o = NULL, *v = NULL, *g, *c;
    int                 rc = ZARR_OK;

    *out = NULL;
    /* the chain learns the fill value the caller may have set after building it (sharding needs it);
     * zarr_array_create writes the metadata before any chunk is encoded */
    if (m->chain && m->fill)
        ZARR_TRY(zarr__chain_set_fill(m->chain, m->fill));
    if (!(o = json_object_new_object()))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    ADD_NEW(o, "zarr_format", json_object_new_int(3));
    ADD_NEW(o, "node_type", json_object_new_string("array"));
    ADD_NEW(o, "shape", zarr__json_new_uint_list(m->shape, m->ndim));
    ZARR_TRY(zarr_dtype_to_v3_json(m->dtype, &v));
    ADD_NEW(o, "data_type", v);
    v = NULL;
    g = json_object_new_object();
    c = json_object_new_object();
    if (!g || !c) {
        json_object_put(g);
        json_object_put(c);
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    }
    ADD_NEW(g, "name", json_object_new_string("regular"));
    ADD_NEW(c, "chunk_shape", zarr__json_new_uint_list(m->chunks, m->ndim));
    ADD_NEW(g, "configuration", c);
    ADD_NEW(o, "chunk_grid", g);
    g = json_object_new_object();
    c = json_object_new_object();
    if (!g || !c) {
        json_object_put(g);
        json_object_put(c);
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    }
    ADD_NEW(g, "name", json_object_new_string(m->key_encoding == ZARR_KEYS_V2 ? "v2" : "default"));
    ADD_NEW(c, "separator", json_object_new_string(m->separator == '.' ? "." : "/"));
    ADD_NEW(g, "configuration", c);
    ADD_NEW(o, "chunk_key_encoding", g);
    /* v3 always has a fill value: an undefined one is written as the zero element */
    ZARR_TRY(zarr_fill_to_json(m->dtype, 3, m->fill, true, &v));
    ADD_NEW(o, "fill_value", v);
    v = NULL;
    ZARR_TRY(zarr_chain_to_v3_json(m->chain, &v));
    ADD_NEW(o, "codecs", v);
    v = NULL;
    if (m->attributes)
        ZARR_TRY(add_ref(o, "attributes", m->attributes, copy));
    else
        ADD_NEW(o, "attributes", json_object_new_object());
    if (m->has_dimension_names) {
        struct json_object *dn = json_object_new_array();
        if (!dn)
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        for (int d = 0; d < m->ndim; d++)
            json_object_array_add(dn, m->dimension_names[d] ? json_object_new_string(m->dimension_names[d])
                                                            : NULL);
        ADD_NEW(o, "dimension_names", dn);
    }
    ZARR_TRY(add_reserved(o, m->reserved, 3, copy));
    ZARR_TRY(add_extra(o, m->extra, copy));
    *out = o;
    o    = NULL;
done:
    json_object_put(v);
    json_object_put(o);
    return rc;
}

int
zarr_array_meta_to_v3_copy(const zarr_array_meta *m, struct json_object **out)
{
    return array_v3_json(m, true, out);
}

/* The v3 reserved object (add_reserved's, in its order) as a member of an object at level `lv` of `b`:
 * nothing for none or an empty one. */
static int
text_reserved(zarr_buf *b, int lv, struct json_object *reserved)
{
    int rc;
    if (!reserved || !json_object_is_type(reserved, json_type_object) ||
        json_object_object_length(reserved) == 0)
        return ZARR_OK;
    ZARR_TRY(ZARR__W_KEY(b, lv, false, ZARR_RESERVED_KEY));
    ZARR_TRY(zarr__json_w_raw(b, "{"));
    ZARR_TRY(ZARR__W_KEY(b, lv + 1, true, "must_understand"));
    ZARR_TRY(zarr__json_w_raw(b, "false"));
    json_object_object_foreach(reserved, k, v)
    {
        if (strcmp(k, "must_understand") == 0)
            continue;
        ZARR_TRY(zarr__json_w_key(b, lv + 1, false, k));
        ZARR_TRY(zarr__json_w_value(b, v, lv + 2));
    }
    ZARR_TRY(zarr__json_w_close(b, lv + 1, '}'));
done:
    return rc;
}

/* The member `key` of the object at level `lv` holding {"name": `name` (a JSON literal), "configuration":
 * {`conf_key`: ...}}, up to where the configuration's one value goes (at level lv + 3); text_named_close
 * ends both objects. */
static int
text_named_open(zarr_buf *b, int lv, const char *key, const char *name, const char *conf_key)
{
    int rc;
    ZARR_TRY(zarr__json_w_key(b, lv, false, key));
    ZARR_TRY(zarr__json_w_raw(b, "{"));
    ZARR_TRY(ZARR__W_KEY(b, lv + 1, true, "name"));
    ZARR_TRY(zarr__json_w_raw(b, name));
    ZARR_TRY(ZARR__W_KEY(b, lv + 1, false, "configuration"));
    ZARR_TRY(zarr__json_w_raw(b, "{"));
    ZARR_TRY(zarr__json_w_key(b, lv + 2, true, conf_key));
done:
    return rc;
}

static int
text_named_close(zarr_buf *b, int lv)
{
    int rc = zarr__json_w_close(b, lv + 2, '}');
    return rc == ZARR_OK ? zarr__json_w_close(b, lv + 1, '}') : rc;
}

/* The v3 data type of `t` written as zarr_dtype_to_v3_json's string prints, without making it, for the
 * plain numeric kinds ("int32", "float64", "bool", ...): 1 when written, 0 for the others (left to
 * zarr_dtype_to_v3_json), or an error. */
static int
text_dtype_plain(zarr_buf *b, const zarr_dtype *t)
{
    const char *kind = t->kind == ZARR_INT       ? "\"int"
                       : t->kind == ZARR_UINT    ? "\"uint"
                       : t->kind == ZARR_FLOAT   ? "\"float"
                       : t->kind == ZARR_COMPLEX ? "\"complex"
                                                 : NULL;
    int         rc;
    if (t->kind == ZARR_BOOL)
        return (rc = zarr__json_w_raw(b, "\"bool\"")) == ZARR_OK ? 1 : rc;
    if (!kind || t->size == 0 || t->size > SIZE_MAX / 8)
        return 0;
    if ((rc = zarr__json_w_raw(b, kind)) != ZARR_OK ||
        (rc = zarr__json_w_u64(b, (uint64_t)t->size * 8)) != ZARR_OK ||
        (rc = zarr__json_w_raw(b, "\"")) != ZARR_OK)
        return rc;
    return 1;
}

/* The array's zarr.json text written straight into `b`: the bytes zarr__json_dump prints for
 * array_v3_json's tree (the same members in the same order; the values that are trees already, the
 * data type, fill value, codecs, attributes and reserved members, are printed by the dumper), without
 * building that tree (bench/README.md, "Issue 31's check of the scale rows"); printed as a value at
 * level `lv` (a member of consolidated metadata: 3). */
static int
array_v3_text(const zarr_array_meta *m, int lv, zarr_buf *b)
{
    struct json_object *v  = NULL;
    int                 rc = ZARR_OK;
    bool                res;

    if (m->chain && m->fill) /* as array_v3_json */
        ZARR_TRY(zarr__chain_set_fill(m->chain, m->fill));
    ZARR_TRY(zarr__json_w_raw(b, "{"));
    ZARR_TRY(ZARR__W_KEY(b, lv, true, "zarr_format"));
    ZARR_TRY(zarr__json_w_raw(b, "3"));
    ZARR_TRY(ZARR__W_KEY(b, lv, false, "node_type"));
    ZARR_TRY(zarr__json_w_raw(b, "\"array\""));
    ZARR_TRY(ZARR__W_KEY(b, lv, false, "shape"));
    ZARR_TRY(zarr__json_w_u64_list(b, m->shape, m->ndim, lv + 1));
    ZARR_TRY(ZARR__W_KEY(b, lv, false, "data_type"));
    if ((rc = text_dtype_plain(b, m->dtype)) < 0)
        goto done;
    if (rc == 0) {
        ZARR_TRY(zarr_dtype_to_v3_json(m->dtype, &v));
        ZARR_TRY(zarr__json_w_value(b, v, lv + 1));
        json_object_put(v);
        v = NULL;
    }
    rc = ZARR_OK;
    ZARR_TRY(text_named_open(b, lv, "chunk_grid", "\"regular\"", "chunk_shape"));
    ZARR_TRY(zarr__json_w_u64_list(b, m->chunks, m->ndim, lv + 3));
    ZARR_TRY(text_named_close(b, lv));
    ZARR_TRY(text_named_open(b, lv, "chunk_key_encoding",
                             m->key_encoding == ZARR_KEYS_V2 ? "\"v2\"" : "\"default\"", "separator"));
    ZARR_TRY(zarr__json_w_raw(b, m->separator == '.' ? "\".\"" : "\"/\""));
    ZARR_TRY(text_named_close(b, lv));
    ZARR_TRY(ZARR__W_KEY(b, lv, false, "fill_value"));
    ZARR_TRY(zarr_fill_to_json(m->dtype, 3, m->fill, true, &v));
    ZARR_TRY(zarr__json_w_value(b, v, lv + 1));
    json_object_put(v);
    v = NULL;
    ZARR_TRY(ZARR__W_KEY(b, lv, false, "codecs"));
    ZARR_TRY(zarr__chain_v3_text(m->chain, lv + 1, b));
    ZARR_TRY(ZARR__W_KEY(b, lv, false, "attributes"));
    ZARR_TRY(m->attributes ? zarr__json_w_value(b, m->attributes, lv + 1) : zarr__json_w_raw(b, "{}"));
    if (m->has_dimension_names) {
        ZARR_TRY(ZARR__W_KEY(b, lv, false, "dimension_names"));
        if (m->ndim <= 0)
            ZARR_TRY(zarr__json_w_raw(b, "[]"));
        else {
            ZARR_TRY(zarr__json_w_raw(b, "["));
            for (int d = 0; d < m->ndim; d++) {
                ZARR_TRY(zarr__json_w_item(b, lv + 1, d == 0));
                ZARR_TRY(zarr__json_w_string(b, m->dimension_names[d]));
            }
            ZARR_TRY(zarr__json_w_close(b, lv + 1, ']'));
        }
    }
    ZARR_TRY(text_reserved(b, lv, m->reserved));
    /* the unknown keys that array_v3_json's tree does not hold already (add_extra) */
    res = m->reserved && json_object_is_type(m->reserved, json_type_object) &&
          json_object_object_length(m->reserved) > 0;
    if (m->extra) {
        json_object_object_foreach(m->extra, key, val)
        {
            static const char *const mine[] = {
                "zarr_format",        "node_type",  "shape",  "data_type",  "chunk_grid",
                "chunk_key_encoding", "fill_value", "codecs", "attributes", NULL};
            if (is_key(key, mine) || (m->has_dimension_names && !strcmp(key, "dimension_names")) ||
                (res && !strcmp(key, ZARR_RESERVED_KEY)))
                continue;
            ZARR_TRY(zarr__json_w_key(b, lv, false, key));
            ZARR_TRY(zarr__json_w_value(b, val, lv + 1));
        }
    }
    ZARR_TRY(zarr__json_w_close(b, lv, '}'));
done:
    json_object_put(v);
    return rc;
}

int
zarr_array_meta_to_v3(const zarr_array_meta *m, char **json)
{
    zarr_buf b  = ZARR_BUF_INIT;
    int      rc = ZARR_OK;

    *json = NULL;
    /* one allocation for most documents, as zarr__json_dump */
    if ((rc = zarr_buf_reserve(&b, 1024)) != ZARR_OK || (rc = array_v3_text(m, 0, &b)) != ZARR_OK ||
        (rc = zarr_buf_append(&b, "", 1)) != ZARR_OK) {
        zarr_buf_free(&b);
        return rc == ZARR_ENOMEM ? zarr_error(ZARR_ENOMEM, "out of memory serializing metadata") : rc;
    }
    *json = (char *)b.data;
    return ZARR_OK;
}

int
zarr_array_meta_write_v3(const zarr_array_meta *m, int level, zarr_buf *out)
{
    if (!m || !out || level < 0)
        return zarr_error(ZARR_EINVAL, "zarr_array_meta_write_v3: metadata and buffer needed");
    if (m->zarr_format != 3)
        return zarr_error(ZARR_EINVAL, "zarr_array_meta_write_v3: a v%d array has no zarr.json",
                          m->zarr_format);
    return array_v3_text(m, level, out);
}

/* The array's .zarray text written straight into `b`: the bytes zarr__json_dump printed for the tree the
 * json-c path built (zarr_format, shape, chunks, dtype, compressor, fill_value, order, filters,
 * dimension_separator, the reserved object as it is, then the unknown keys not written already), the
 * values that are trees (data type, codecs, fill value, reserved, unknown keys) printed by the dumper. */
static int
array_v2_text(const zarr_array_meta *m, zarr_buf *b)
{
    static const char *const mine[] = {"zarr_format",         "shape",      "chunks", "dtype",
                                       "compressor",          "fill_value", "order",  "filters",
                                       "dimension_separator", NULL};
    struct json_object      *v = NULL, *filters = NULL, *compressor = NULL;
    int                      rc = ZARR_OK;
    bool                     res;

    ZARR_TRY(zarr__json_w_raw(b, "{"));
    ZARR_TRY(ZARR__W_KEY(b, 0, true, "zarr_format"));
    ZARR_TRY(zarr__json_w_raw(b, "2"));
    ZARR_TRY(ZARR__W_KEY(b, 0, false, "shape"));
    ZARR_TRY(zarr__json_w_u64_list(b, m->shape, m->ndim, 1));
    ZARR_TRY(ZARR__W_KEY(b, 0, false, "chunks"));
    ZARR_TRY(zarr__json_w_u64_list(b, m->chunks, m->ndim, 1));
    ZARR_TRY(zarr_dtype_to_v2_json(m->dtype, &v));
    ZARR_TRY(ZARR__W_KEY(b, 0, false, "dtype"));
    ZARR_TRY(zarr__json_w_value(b, v, 1));
    json_object_put(v);
    v = NULL;
    ZARR_TRY(zarr_chain_to_v2_json(m->chain, &filters, &compressor));
    ZARR_TRY(ZARR__W_KEY(b, 0, false, "compressor"));
    ZARR_TRY(zarr__json_w_value(b, compressor, 1));
    ZARR_TRY(zarr_fill_to_json(m->dtype, 2, m->fill, m->fill_defined, &v));
    ZARR_TRY(ZARR__W_KEY(b, 0, false, "fill_value"));
    ZARR_TRY(zarr__json_w_value(b, v, 1));
    ZARR_TRY(ZARR__W_KEY(b, 0, false, "order"));
    ZARR_TRY(zarr__json_w_raw(b, m->order == 'F' ? "\"F\"" : "\"C\""));
    ZARR_TRY(ZARR__W_KEY(b, 0, false, "filters"));
    ZARR_TRY(zarr__json_w_value(b, filters, 1));
    ZARR_TRY(ZARR__W_KEY(b, 0, false, "dimension_separator"));
    ZARR_TRY(zarr__json_w_raw(b, m->separator == '/' ? "\"/\"" : "\".\""));
    /* v2: the reserved object as it is (add_reserved) */
    res = m->reserved && json_object_is_type(m->reserved, json_type_object) &&
          json_object_object_length(m->reserved) > 0;
    if (res) {
        ZARR_TRY(ZARR__W_KEY(b, 0, false, ZARR_RESERVED_KEY));
        ZARR_TRY(zarr__json_w_value(b, m->reserved, 1));
    }
    if (m->extra) {
        json_object_object_foreach(m->extra, key, val)
        {
            if (is_key(key, mine) || (res && !strcmp(key, ZARR_RESERVED_KEY)))
                continue;
            ZARR_TRY(zarr__json_w_key(b, 0, false, key));
            ZARR_TRY(zarr__json_w_value(b, val, 1));
        }
    }
    ZARR_TRY(zarr__json_w_close(b, 0, '}'));
done:
    json_object_put(v);
    json_object_put(filters);
    json_object_put(compressor);
    return rc;
}

int
zarr_array_meta_to_v2(const zarr_array_meta *m, char **zarray, char **zattrs)
{
    zarr_buf b  = ZARR_BUF_INIT;
    int      rc = ZARR_OK;

    *zarray = NULL;
    if (zattrs)
        *zattrs = NULL;
    if ((rc = zarr_buf_reserve(&b, 1024)) != ZARR_OK || (rc = array_v2_text(m, &b)) != ZARR_OK ||
        (rc = zarr_buf_append(&b, "", 1)) != ZARR_OK) {
        zarr_buf_free(&b);
        return rc == ZARR_ENOMEM ? zarr_error(ZARR_ENOMEM, "out of memory serializing metadata") : rc;
    }
    *zarray = (char *)b.data;
    if (zattrs && !attrs_empty(m->attributes) && !(*zattrs = zarr__json_dump(m->attributes))) {
        free(*zarray);
        *zarray = NULL;
        return zarr_error(ZARR_ENOMEM, "out of memory serializing attributes");
    }
    return ZARR_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Array descriptions: new, copy, free
 * ------------------------------------------------------------------------------------------------ */
int
zarr_array_meta_new(int zarr_format, int ndim, const uint64_t *shape, const uint64_t *chunks,
                    zarr_dtype *dtype, zarr_array_meta **out)
{
    zarr_array_meta *m = NULL;
    int              rc;

    *out = NULL;
    if (!dtype)
        return zarr_error(ZARR_EINVAL, "zarr_array_meta_new: no data type");
    if ((zarr_format != 2 && zarr_format != 3) || ndim < 0 || ndim > ZARR_MAX_DIMS || (ndim && !shape)) {
        zarr_dtype_free(dtype);
        return zarr_error(ZARR_EINVAL, "zarr_array_meta_new: bad format %d or rank %d (at most %d)",
                          zarr_format, ndim, ZARR_MAX_DIMS);
    }
    if ((rc = alloc_meta(zarr_format, &m)) != ZARR_OK) {
        zarr_dtype_free(dtype);
        return rc;
    }
    m->dtype = dtype;
    m->ndim  = ndim;
    for (int d = 0; d < ndim; d++) {
        m->shape[d]  = shape[d];
        m->chunks[d] = chunks ? chunks[d] : (shape[d] ? shape[d] : 1);
        if (m->chunks[d] == 0)
            ZARR_FAIL(ZARR_EINVAL, "chunk size in dimension %d must be at least 1", d);
    }
    ZARR_TRY(check_sizes(m, "new array"));
    ZARR_TRY(alloc_fill(m));
    if (!(m->attributes = json_object_new_object()))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    /* v2 keeps the byte order in the dtype, per struct field: the chain is the one the .zarray written
     * for this array (no filters, no compressor, order C) reads back as, so that a compound with
     * big-endian members is stored as its '>i4'/'>f8' fields say. A plain chain would take one byte
     * order for the whole element, the struct's '|' (so little-endian). Object dtypes get their vlen
     * codec from the plain chain (their .zarray names it as the first filter). */
    if (zarr_format == 2 && !zarr_dtype_has_vlen(m->dtype))
        ZARR_TRY(zarr_chain_from_v2_json(NULL, NULL, 'C', m->dtype, ndim, &m->chain));
    else
        ZARR_TRY(zarr_chain_new_plain(m->dtype, ndim, dtype->endian == '>' ? '>' : '<', &m->chain));
    *out = m;
    m    = NULL;
done:
    zarr_array_meta_free(m);
    return rc;
}

static struct json_object *
deep_copy(struct json_object *j)
{
    struct json_object *c = NULL;
    if (j && json_object_deep_copy(j, &c, NULL) != 0)
        return NULL;
    return c;
}

zarr_array_meta *
zarr_array_meta_copy(const zarr_array_meta *m)
{
    zarr_array_meta *c;
    if (!m || !(c = calloc(1, sizeof *c)))
        return NULL;
    *c       = *m;
    c->dtype = NULL;
    c->fill  = NULL;
    c->chain = NULL;
    memset(c->dimension_names, 0, sizeof c->dimension_names);
    c->attributes = c->extra = c->reserved = NULL;
    if (!(c->dtype = zarr_dtype_copy(m->dtype)) ||
        !(c->fill = calloc(1, m->dtype->size ? m->dtype->size : 1)))
        goto fail;
    if (zarr_dtype_copy_elems(m->dtype, c->fill, m->fill, 1, false) != ZARR_OK)
        goto fail;
    if (m->chain && !(c->chain = zarr_chain_copy(m->chain)))
        goto fail;
    for (int d = 0; d < m->ndim; d++)
        if (m->dimension_names[d] && !(c->dimension_names[d] = strdup(m->dimension_names[d])))
            goto fail;
    if ((m->attributes && !(c->attributes = deep_copy(m->attributes))) ||
        (m->extra && !(c->extra = deep_copy(m->extra))) ||
        (m->reserved && !(c->reserved = deep_copy(m->reserved))))
        goto fail;
    return c;
fail:
    zarr_array_meta_free(c);
    zarr_error(ZARR_ENOMEM, "out of memory copying array metadata");
    return NULL;
}

void
zarr_array_meta_free(zarr_array_meta *m)
{
    if (!m)
        return;
    if (m->fill && m->dtype)
        zarr_dtype_clear_elems(m->dtype, m->fill, 1);
    free(m->fill);
    zarr_dtype_free(m->dtype);
    zarr_chain_free(m->chain);
    for (int d = 0; d < ZARR_MAX_DIMS; d++)
        free(m->dimension_names[d]);
    json_object_put(m->attributes);
    json_object_put(m->extra);
    json_object_put(m->reserved);
    free(m);
}

/* ------------------------------------------------------------------------------------------------
 * Groups
 * ------------------------------------------------------------------------------------------------ */
int
zarr_group_meta_new(int zarr_format, zarr_group_meta **out)
{
    zarr_group_meta *m;
    *out = NULL;
    if (zarr_format != 2 && zarr_format != 3)
        return zarr_error(ZARR_EINVAL, "zarr_group_meta_new: bad format %d", zarr_format);
    if (!(m = calloc(1, sizeof *m)) || !(m->attributes = json_object_new_object())) {
        free(m);
        return zarr_error(ZARR_ENOMEM, "out of memory");
    }
    m->zarr_format = zarr_format;
    *out           = m;
    return ZARR_OK;
}

void
zarr_group_meta_free(zarr_group_meta *m)
{
    if (!m)
        return;
    json_object_put(m->attributes);
    json_object_put(m->extra);
    json_object_put(m->consolidated);
    json_object_put(m->consolidated_hidden);
    json_object_put(m->reserved);
    free(m);
}

int
zarr_group_meta_parse_v3(const char *text, size_t n, const char *where, zarr_group_meta **out)
{
    struct json_object *root = NULL;
    int                 rc;

    *out = NULL;
    if (!where)
        where = "zarr.json";
    if ((rc = zarr__json_parse(text, n, where, &root)) != ZARR_OK)
        return rc;
    rc = zarr__group_meta_from_v3(root, where, out);
    json_object_put(root);
    return rc;
}

int
zarr__group_meta_from_v3(struct json_object *root, const char *where, zarr_group_meta **out)
{
    struct json_object *v;
    zarr_group_meta    *m = NULL;
    const char         *nt;
    int                 rc;

    *out = NULL;
    if (!where)
        where = "zarr.json";
    ZARR_TRY(zarr_group_meta_new(3, &m));
    if (!json_object_is_type(root, json_type_object))
        ZARR_FAIL(ZARR_EMETA, "'%s': the document must be a JSON object", where);
    ZARR_TRY(check_format(root, 3, where));
    ZARR_TRY(zarr__json_get_str(root, "node_type", true, where, &nt));
    if (strcmp(nt, "group") != 0)
        ZARR_FAIL(ZARR_EMETA, "'%s': 'node_type' is '%s', not 'group'", where, nt);
    ZARR_TRY(zarr__json_get_key(root, "attributes", json_type_object, false, where, "an object", &v));
    if (v) {
        json_object_put(m->attributes);
        m->attributes = json_object_get(v);
    }
    json_object_object_foreach(root, key, val)
    {
        bool took = false;
        if (strcmp(key, "zarr_format") == 0 || strcmp(key, "node_type") == 0 ||
            strcmp(key, "attributes") == 0)
            continue;
        if (strcmp(key, ZARR_RESERVED_KEY) == 0) {
            ZARR_TRY(keep_reserved(&m->reserved, 3, val, &took));
            if (took)
                continue;
        }
        if (strcmp(key, "consolidated_metadata") == 0) {
            struct json_object *kind = NULL, *md = NULL;
            if (!val)
                continue; /* zarr-python writes null when not consolidated */
            if (json_object_is_type(val, json_type_object) && json_object_object_get_ex(val, "kind", &kind) &&
                json_object_is_type(kind, json_type_string) &&
                strcmp(json_object_get_string(kind), "inline") == 0) {
                json_object_object_get_ex(val, "metadata", &md);
                if (!json_object_is_type(md, json_type_object))
                    ZARR_FAIL(ZARR_EMETA, "'%s': 'consolidated_metadata' needs a 'metadata' object", where);
                m->consolidated = json_object_get(md);
                /* hidden arrays (zarr.h, ZARR_HIDDEN_DOC) beside the nodes */
                if (json_object_object_get_ex(val, "h5zarr_hidden", &md) &&
                    json_object_is_type(md, json_type_object))
                    m->consolidated_hidden = json_object_get(md);
                continue;
            }
        }
        ZARR_TRY(keep_extension(&m->extra, key, val, where));
    }
    *out = m;
    m    = NULL;
done:
    zarr_group_meta_free(m);
    return rc;
}

int
zarr_group_meta_parse_v2(const char *zgroup, size_t n, const char *zattrs, size_t an, const char *where,
                         zarr_group_meta **out)
{
    struct json_object *root = NULL;
    zarr_group_meta    *m    = NULL;
    char                aw[512];
    int                 rc;

    *out = NULL;
    if (!where)
        where = ".zgroup";
    ZARR_TRY(zarr_group_meta_new(2, &m));
    ZARR_TRY(zarr__json_parse(zgroup, n, where, &root));
    if (!json_object_is_type(root, json_type_object))
        ZARR_FAIL(ZARR_EMETA, "'%s': the document must be a JSON object", where);
    ZARR_TRY(check_format(root, 2, where));
    json_object_object_foreach(root, key, val)
    {
        bool took = false;
        if (strcmp(key, ZARR_RESERVED_KEY) == 0)
            ZARR_TRY(keep_reserved(&m->reserved, 2, val, &took));
        if (!took && strcmp(key, "zarr_format") != 0)
            ZARR_TRY(keep_extra(&m->extra, key, val));
    }
    json_object_put(m->attributes);
    m->attributes = NULL;
    attrs_where(where, aw, sizeof aw);
    ZARR_TRY(parse_attrs(zattrs, an, aw, &m->attributes));
    *out = m;
    m    = NULL;
done:
    zarr_group_meta_free(m);
    json_object_put(root);
    return rc;
}

/* The group's zarr.json as a new object; with `copy` it shares nothing with `m` and leaves out the
 * consolidated metadata. */
static int
group_v3_json(const zarr_group_meta *m, bool copy, struct json_object **out)
{
    struct json_object *o;
    int                 rc = ZARR_OK;

    *out = NULL;
    if (!(o = json_object_new_object()))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    ADD_NEW(o, "zarr_format", json_object_new_int(3));
    ADD_NEW(o, "node_type", json_object_new_string("group"));
    if (m->attributes)
        ZARR_TRY(add_ref(o, "attributes", m->attributes, copy));
    else
        ADD_NEW(o, "attributes", json_object_new_object());
    if (m->consolidated && !copy) {
        struct json_object *c = json_object_new_object();
        if (!c)
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        ADD_NEW(c, "kind", json_object_new_string("inline"));
        ADD_NEW(c, "must_understand", json_object_new_boolean(0));
        ADD_NEW(c, "metadata", json_object_get(m->consolidated));
        if (m->consolidated_hidden && json_object_object_length(m->consolidated_hidden) > 0)
            ADD_NEW(c, "h5zarr_hidden", json_object_get(m->consolidated_hidden));
        ADD_NEW(o, "consolidated_metadata", c);
    }
    ZARR_TRY(add_reserved(o, m->reserved, 3, copy));
    ZARR_TRY(add_extra(o, m->extra, copy));
    *out = o;
    o    = NULL;
done:
    json_object_put(o);
    return rc;
}

int
zarr_group_meta_to_v3_copy(const zarr_group_meta *m, struct json_object **out)
{
    return group_v3_json(m, true, out);
}

/* The group's zarr.json text written straight into `b` at level `lv`: the bytes zarr__json_dump prints
 * for group_v3_json's tree (the same members in the same order, the trees among them printed by the
 * dumper). The consolidated metadata: none when `cons` is 0 (group_v3_json's copy); with `cons` 1,
 * m->consolidated's (and m->consolidated_hidden's) when it has some; with `cons` 2, the "metadata"
 * object is `md_text` (`md_n` bytes, printed at level lv + 2 already: zarr__consolidated_write_v3) and
 * the hidden arrays m->consolidated_hidden's. */
static int
group_v3_text(const zarr_group_meta *m, int lv, int cons, const char *md_text, size_t md_n, zarr_buf *b)
{
    int  rc = ZARR_OK;
    bool res, has_cons = cons == 2 || (cons == 1 && m->consolidated);

    ZARR_TRY(zarr__json_w_raw(b, "{"));
    ZARR_TRY(ZARR__W_KEY(b, lv, true, "zarr_format"));
    ZARR_TRY(zarr__json_w_raw(b, "3"));
    ZARR_TRY(ZARR__W_KEY(b, lv, false, "node_type"));
    ZARR_TRY(zarr__json_w_raw(b, "\"group\""));
    ZARR_TRY(ZARR__W_KEY(b, lv, false, "attributes"));
    ZARR_TRY(m->attributes ? zarr__json_w_value(b, m->attributes, lv + 1) : zarr__json_w_raw(b, "{}"));
    if (has_cons) {
        ZARR_TRY(ZARR__W_KEY(b, lv, false, "consolidated_metadata"));
        ZARR_TRY(zarr__json_w_raw(b, "{"));
        ZARR_TRY(ZARR__W_KEY(b, lv + 1, true, "kind"));
        ZARR_TRY(zarr__json_w_raw(b, "\"inline\""));
        ZARR_TRY(ZARR__W_KEY(b, lv + 1, false, "must_understand"));
        ZARR_TRY(zarr__json_w_raw(b, "false"));
        ZARR_TRY(ZARR__W_KEY(b, lv + 1, false, "metadata"));
        if (cons == 2)
            ZARR_TRY(zarr_buf_append(b, md_text, md_n));
        else
            ZARR_TRY(zarr__json_w_value(b, m->consolidated, lv + 2));
        if (m->consolidated_hidden && json_object_object_length(m->consolidated_hidden) > 0) {
            ZARR_TRY(ZARR__W_KEY(b, lv + 1, false, "h5zarr_hidden"));
            ZARR_TRY(zarr__json_w_value(b, m->consolidated_hidden, lv + 2));
        }
        ZARR_TRY(zarr__json_w_close(b, lv + 1, '}'));
    }
    ZARR_TRY(text_reserved(b, lv, m->reserved));
    /* the unknown keys that group_v3_json's tree does not hold already (add_extra) */
    res = m->reserved && json_object_is_type(m->reserved, json_type_object) &&
          json_object_object_length(m->reserved) > 0;
    if (m->extra) {
        json_object_object_foreach(m->extra, key, val)
        {
            static const char *const mine[] = {"zarr_format", "node_type", "attributes", NULL};
            if (is_key(key, mine) || (has_cons && !strcmp(key, "consolidated_metadata")) ||
                (res && !strcmp(key, ZARR_RESERVED_KEY)))
                continue;
            ZARR_TRY(zarr__json_w_key(b, lv, false, key));
            ZARR_TRY(zarr__json_w_value(b, val, lv + 1));
        }
    }
    ZARR_TRY(zarr__json_w_close(b, lv, '}'));
done:
    return rc;
}

int
zarr_group_meta_write_v3(const zarr_group_meta *m, int level, zarr_buf *out)
{
    if (!m || !out || level < 0)
        return zarr_error(ZARR_EINVAL, "zarr_group_meta_write_v3: metadata and buffer needed");
    if (m->zarr_format != 3)
        return zarr_error(ZARR_EINVAL, "zarr_group_meta_write_v3: a v%d group has no zarr.json",
                          m->zarr_format);
    return group_v3_text(m, level, 0, NULL, 0, out);
}

int
zarr__group_meta_v3_text_md(const zarr_group_meta *m, const char *md_text, size_t md_n, zarr_buf *out)
{
    int rc = zarr_buf_reserve(out, md_n + 1024);
    if (rc == ZARR_OK)
        rc = group_v3_text(m, 0, 2, md_text, md_n, out);
    if (rc == ZARR_OK)
        rc = zarr_buf_append(out, "", 1);
    return rc == ZARR_ENOMEM ? zarr_error(ZARR_ENOMEM, "out of memory serializing metadata") : rc;
}

int
zarr_group_meta_to_v3(const zarr_group_meta *m, char **json)
{
    zarr_buf b  = ZARR_BUF_INIT;
    int      rc = ZARR_OK;

    *json = NULL;
    if ((rc = zarr_buf_reserve(&b, 1024)) != ZARR_OK ||
        (rc = group_v3_text(m, 0, 1, NULL, 0, &b)) != ZARR_OK ||
        (rc = zarr_buf_append(&b, "", 1)) != ZARR_OK) {
        zarr_buf_free(&b);
        return rc == ZARR_ENOMEM ? zarr_error(ZARR_ENOMEM, "out of memory serializing metadata") : rc;
    }
    *json = (char *)b.data;
    return ZARR_OK;
}

int
zarr_group_meta_to_v2(const zarr_group_meta *m, char **zgroup, char **zattrs)
{
    struct json_object *o;
    int                 rc = ZARR_OK;

    *zgroup = NULL;
    if (zattrs)
        *zattrs = NULL;
    if (!(o = json_object_new_object()))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    ADD_NEW(o, "zarr_format", json_object_new_int(2));
    ZARR_TRY(add_reserved(o, m->reserved, 2, false));
    ZARR_TRY(add_extra(o, m->extra, false));
    ZARR_TRY(finish_text(o, zgroup));
    if (zattrs && !attrs_empty(m->attributes) && !(*zattrs = zarr__json_dump(m->attributes))) {
        free(*zgroup);
        *zgroup = NULL;
        ZARR_FAIL(ZARR_ENOMEM, "out of memory serializing attributes");
    }
done:
    json_object_put(o);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * Chunk keys
 * ------------------------------------------------------------------------------------------------ */
/* Parses a canonical decimal (no sign, no leading zero) of `len` chars below `limit` into *v. */
static bool
parse_coord(const char *p, size_t len, uint64_t limit, uint64_t *v)
{
    *v = 0;
    if (len == 0 || len > 20 || (len > 1 && p[0] == '0'))
        return false;
    for (size_t k = 0; k < len; k++)
        if (p[k] < '0' || p[k] > '9' || !zarr__mul_ok(*v, 10, v) ||
            !zarr__add_ok(*v, (uint64_t)(p[k] - '0'), v))
            return false;
    return *v < limit;
}

bool
zarr__chunk_key_coords(const zarr_array_meta *m, const char *rel, const uint64_t *lim, uint64_t *c)
{
    char        sep = m->separator == '.' ? '.' : '/';
    const char *p   = rel;

    if (m->key_encoding == ZARR_KEYS_DEFAULT) {
        if (*p++ != 'c')
            return false;
        if (m->ndim == 0)
            return *p == '\0';
        if (*p++ != sep)
            return false;
    }
    else if (m->ndim == 0)
        return strcmp(p, "0") == 0;
    for (int d = 0; d < m->ndim; d++) {
        const char *e = p;
        while (*e && *e != sep)
            e++;
        if (!parse_coord(p, (size_t)(e - p), lim[d], &c[d]))
            return false;
        if (d + 1 < m->ndim) {
            if (*e != sep)
                return false;
            p = e + 1;
        }
        else if (*e)
            return false;
    }
    return true;
}

int
zarr_chunk_key(const zarr_array_meta *m, const char *path, const uint64_t *coords, char *key, size_t n)
{
    size_t pos = 0;
    int    w;
    char   sep = m->separator == '.' ? '.' : '/';

#define EMIT(...)                                                                                            \
    do {                                                                                                     \
        w = snprintf(key + pos, pos < n ? n - pos : 0, __VA_ARGS__);                                         \
        if (w < 0 || (size_t)w >= (pos < n ? n - pos : 0))                                                   \
            return zarr_error(ZARR_EOVERFLOW, "chunk key of '%s' does not fit in %zu bytes",                 \
                              path ? path : "", n);                                                          \
        pos += (size_t)w;                                                                                    \
    } while (0)

    if (!key || n == 0)
        return zarr_error(ZARR_EOVERFLOW, "no room for a chunk key");
    key[0] = '\0';
    if (path && *path)
        EMIT("%s/", path);
    if (m->key_encoding == ZARR_KEYS_DEFAULT) {
        EMIT("c");
        for (int d = 0; d < m->ndim; d++)
            EMIT("%c%llu", sep, (unsigned long long)coords[d]);
    }
    else if (m->ndim == 0)
        EMIT("0");
    else
        for (int d = 0; d < m->ndim; d++) {
            if (d)
                EMIT("%c", sep);
            EMIT("%llu", (unsigned long long)coords[d]);
        }
#undef EMIT
    return ZARR_OK;
}
