/*
 * dtype.c: zarr data types and fill values.
 *
 * Parses and writes v2 dtypes (NumPy type strings and structured lists) and v3 data_type values
 * (names and {"name","configuration"} objects: string, bytes, fixed_length_utf32,
 * null_terminated_bytes, raw_bytes, numpy.datetime64/timedelta64, struct/structured), computes the
 * memory form of each (see zarr.h), manages vlen payloads in memory-form elements, and converts fill
 * values between metadata JSON (v2 and v3 rules) and one memory-form element.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, clock_gettime */

#include "internal.h"
#include "zjson.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_ENDIAN '>'
#else
#define HOST_ENDIAN '<'
#endif

/* Largest fixed-length string / raw element accepted (bytes). */
#define MAX_FIXED_BYTES ((size_t)1 << 30)

/* ------------------------------------------------------------------------------------------------
 * Construction and basic operations
 * ------------------------------------------------------------------------------------------------ */
static zarr_dtype *
dtype_alloc(zarr_kind kind, size_t size, char endian)
{
    zarr_dtype *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->kind   = kind;
    t->size   = size;
    t->endian = endian;
    return t;
}

zarr_dtype *
zarr_dtype_new(zarr_kind kind, size_t size)
{
    switch (kind) {
        case ZARR_BOOL:
            if (size != 1)
                return NULL;
            return dtype_alloc(kind, 1, '|');
        case ZARR_INT:
        case ZARR_UINT:
            if (size != 1 && size != 2 && size != 4 && size != 8)
                return NULL;
            return dtype_alloc(kind, size, size == 1 ? '|' : '<');
        case ZARR_FLOAT:
            if (size != 2 && size != 4 && size != 8)
                return NULL;
            return dtype_alloc(kind, size, '<');
        case ZARR_COMPLEX:
            if (size != 8 && size != 16)
                return NULL;
            return dtype_alloc(kind, size, '<');
        case ZARR_DATETIME:
        case ZARR_TIMEDELTA:
            return dtype_alloc(kind, 8, '<');
        case ZARR_FIXED_BYTES:
        case ZARR_RAW: {
            if (size == 0 || size > MAX_FIXED_BYTES)
                return NULL;
            zarr_dtype *t = dtype_alloc(kind, size, '|');
            if (t)
                t->nchars = size;
            return t;
        }
        case ZARR_FIXED_UTF32: {
            if (size == 0 || size % 4 || size > MAX_FIXED_BYTES)
                return NULL;
            zarr_dtype *t = dtype_alloc(kind, size, '<');
            if (t)
                t->nchars = size / 4;
            return t;
        }
        case ZARR_VLEN_UTF8:
            return dtype_alloc(kind, sizeof(char *), '|');
        case ZARR_VLEN_BYTES:
            return dtype_alloc(kind, sizeof(zarr_vlen), '|');
        case ZARR_STRUCT:
            return dtype_alloc(kind, 0, '|');
    }
    return NULL;
}

void
zarr_dtype_free(zarr_dtype *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nfields; i++) {
        free(t->fields[i].name);
        zarr_dtype_free(t->fields[i].type);
    }
    free(t->fields);
    free(t);
}

zarr_dtype *
zarr_dtype_copy(const zarr_dtype *t)
{
    zarr_dtype *c;
    if (!t || !(c = malloc(sizeof *c)))
        return NULL;
    *c         = *t;
    c->fields  = NULL;
    c->nfields = 0;
    if (t->nfields) {
        if (!(c->fields = calloc(t->nfields, sizeof *c->fields))) {
            free(c);
            return NULL;
        }
        for (size_t i = 0; i < t->nfields; i++) {
            c->fields[i]      = t->fields[i];
            c->nfields        = i + 1;
            c->fields[i].name = strdup(t->fields[i].name);
            c->fields[i].type = zarr_dtype_copy(t->fields[i].type);
            if (!c->fields[i].name || !c->fields[i].type) {
                zarr_dtype_free(c);
                return NULL;
            }
        }
    }
    return c;
}

/* Byte order matters only for multi-byte numbers and UTF-32. */
static bool
endian_matters(const zarr_dtype *t)
{
    switch (t->kind) {
        case ZARR_INT:
        case ZARR_UINT:
        case ZARR_FLOAT:
        case ZARR_COMPLEX:
        case ZARR_DATETIME:
        case ZARR_TIMEDELTA:
            return t->size > 1;
        case ZARR_FIXED_UTF32:
            return true;
        default:
            return false;
    }
}

bool
zarr_dtype_equal(const zarr_dtype *a, const zarr_dtype *b)
{
    if (!a || !b)
        return a == b;
    if (a->kind != b->kind || a->size != b->size || a->nchars != b->nchars || a->nfields != b->nfields ||
        strcmp(a->unit, b->unit) != 0)
        return false;
    if (endian_matters(a) && a->endian != b->endian)
        return false;
    for (size_t i = 0; i < a->nfields; i++) {
        const zarr_field *fa = &a->fields[i], *fb = &b->fields[i];
        if (strcmp(fa->name, fb->name) || fa->offset != fb->offset || fa->ndim != fb->ndim ||
            memcmp(fa->shape, fb->shape, sizeof(uint64_t) * (size_t)fa->ndim) ||
            !zarr_dtype_equal(fa->type, fb->type))
            return false;
    }
    return true;
}

bool
zarr_dtype_has_vlen(const zarr_dtype *t)
{
    if (!t)
        return false;
    if (t->kind == ZARR_VLEN_UTF8 || t->kind == ZARR_VLEN_BYTES)
        return true;
    for (size_t i = 0; i < t->nfields; i++)
        if (zarr_dtype_has_vlen(t->fields[i].type))
            return true;
    return false;
}

static size_t
field_count(const zarr_field *f)
{
    size_t n = 1;
    for (int d = 0; d < f->ndim; d++)
        n *= (size_t)f->shape[d]; /* checked against overflow when the struct was built */
    return n;
}

static void
clear_one(const zarr_dtype *t, uint8_t *p)
{
    if (t->kind == ZARR_VLEN_UTF8) {
        char *s;
        memcpy(&s, p, sizeof s);
        free(s);
        memset(p, 0, sizeof s);
    }
    else if (t->kind == ZARR_VLEN_BYTES) {
        zarr_vlen v;
        memcpy(&v, p, sizeof v);
        free(v.p);
        memset(p, 0, sizeof v);
    }
    else if (t->kind == ZARR_STRUCT) {
        for (size_t i = 0; i < t->nfields; i++) {
            const zarr_field *f = &t->fields[i];
            if (!zarr_dtype_has_vlen(f->type))
                continue;
            size_t n = field_count(f);
            for (size_t k = 0; k < n; k++)
                clear_one(f->type, p + f->offset + k * f->type->size);
        }
    }
}

void
zarr_dtype_clear_elems(const zarr_dtype *t, void *elems, size_t n)
{
    if (!t || !elems || !zarr_dtype_has_vlen(t))
        return;
    for (size_t i = 0; i < n; i++)
        clear_one(t, (uint8_t *)elems + i * t->size);
}

/* Copies one element into a zeroed `dst`, duplicating payloads. On failure dst owns what it holds. */
static int
copy_one(const zarr_dtype *t, uint8_t *dst, const uint8_t *src)
{
    if (t->kind == ZARR_VLEN_UTF8) {
        char *s, *d = NULL;
        memcpy(&s, src, sizeof s);
        if (s && !(d = strdup(s)))
            return zarr_error(ZARR_ENOMEM, "out of memory copying a string");
        memcpy(dst, &d, sizeof d);
    }
    else if (t->kind == ZARR_VLEN_BYTES) {
        zarr_vlen v, d = {0, NULL};
        memcpy(&v, src, sizeof v);
        if (v.len && v.p) {
            if (!(d.p = malloc(v.len)))
                return zarr_error(ZARR_ENOMEM, "out of memory copying %zu bytes", v.len);
            memcpy(d.p, v.p, v.len);
            d.len = v.len;
        }
        memcpy(dst, &d, sizeof d);
    }
    else if (t->kind == ZARR_STRUCT && zarr_dtype_has_vlen(t)) {
        for (size_t i = 0; i < t->nfields; i++) {
            const zarr_field *f = &t->fields[i];
            size_t            n = field_count(f);
            for (size_t k = 0; k < n; k++) {
                int rc = copy_one(f->type, dst + f->offset + k * f->type->size,
                                  src + f->offset + k * f->type->size);
                if (rc != ZARR_OK)
                    return rc;
            }
        }
    }
    else
        memcpy(dst, src, t->size);
    return ZARR_OK;
}

int
zarr_dtype_copy_elems(const zarr_dtype *t, void *dst, const void *src, size_t n, bool dst_initialized)
{
    if (!zarr_dtype_has_vlen(t)) {
        if (n && dst != src)
            memmove(dst, src, n * t->size);
        return ZARR_OK;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t *d = (uint8_t *)dst + i * t->size;
        if (dst_initialized)
            clear_one(t, d);
        memset(d, 0, t->size);
        int rc = copy_one(t, d, (const uint8_t *)src + i * t->size);
        if (rc != ZARR_OK)
            return rc;
    }
    return ZARR_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Datetime units
 * ------------------------------------------------------------------------------------------------ */
static const char *const time_units[] = {"Y",  "M",  "W",         "D",  "h",  "m",  "s",
                                         "ms", "us", "\xce\xbcs", "ns", "ps", "fs", "as"};

static bool
unit_name_ok(const char *u, size_t n)
{
    for (size_t i = 0; i < sizeof time_units / sizeof *time_units; i++)
        if (strlen(time_units[i]) == n && memcmp(time_units[i], u, n) == 0)
            return true;
    return false;
}

/* Sets t->unit from "<scale><unit>" text of length n ("ns", "10s"). */
static int
set_unit(zarr_dtype *t, const char *u, size_t n)
{
    size_t   i     = 0;
    uint64_t scale = 0;
    while (i < n && u[i] >= '0' && u[i] <= '9') {
        scale = scale * 10 + (uint64_t)(u[i] - '0');
        if (scale > INT32_MAX)
            return zarr_error(ZARR_EMETA, "datetime unit '%.*s' has a too large scale", (int)n, u);
        i++;
    }
    if ((i > 0 && scale == 0) || !unit_name_ok(u + i, n - i))
        return zarr_error(ZARR_EUNSUPPORTED, "unsupported datetime unit '%.*s'", (int)n, u);
    /* numpy's own spelling: no scale of 1, no leading zeros ("010s" is "10s"); at most 10 digits and
     * a 3-byte unit, so it always fits (the text as given may not: "0000000000000000000010s") */
    if (i == 0 || scale == 1)
        snprintf(t->unit, sizeof t->unit, "%.*s", (int)(n - i), u + i);
    else
        snprintf(t->unit, sizeof t->unit, "%" PRIu64 "%.*s", scale, (int)(n - i), u + i);
    return ZARR_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Structs
 * ------------------------------------------------------------------------------------------------ */
/* Appends a field (takes `ft`); computes its offset and grows the struct's size. */
static int
struct_add(zarr_dtype *st, const char *name, zarr_dtype *ft, int ndim, const uint64_t *shape)
{
    zarr_field *nf;
    uint64_t    cnt = 1, bytes, size;
    int         rc  = ZARR_OK;

    for (size_t i = 0; i < st->nfields; i++)
        if (strcmp(st->fields[i].name, name) == 0)
            ZARR_FAIL(ZARR_EMETA, "duplicate struct field name '%s'", name);
    for (int d = 0; d < ndim; d++)
        if (!zarr__mul_ok(cnt, shape[d], &cnt))
            ZARR_FAIL(ZARR_EOVERFLOW, "struct field '%s' is too large", name);
    if (!zarr__mul_ok(cnt, ft->size, &bytes) || !zarr__add_ok(st->size, bytes, &size) ||
        size > MAX_FIXED_BYTES)
        ZARR_FAIL(ZARR_EOVERFLOW, "struct field '%s' is too large", name);
    if (!(nf = realloc(st->fields, (st->nfields + 1) * sizeof *nf)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    st->fields = nf;
    nf         = &st->fields[st->nfields];
    memset(nf, 0, sizeof *nf);
    if (!(nf->name = strdup(name)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    nf->offset = st->size;
    nf->type   = ft;
    ft         = NULL;
    nf->ndim   = ndim;
    for (int d = 0; d < ndim; d++)
        nf->shape[d] = shape[d];
    st->nfields++;
    st->size = (size_t)size;
done:
    zarr_dtype_free(ft);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * v2 dtypes
 * ------------------------------------------------------------------------------------------------ */
static int
v2_from_string(const char *s, zarr_dtype **out)
{
    const char *p     = s, *end;
    char        order = '|', kind;
    uint64_t    n     = 0;
    bool        has_n = false;
    zarr_dtype *t     = NULL;
    int         rc    = ZARR_OK;

    *out = NULL;
    if (*p == '<' || *p == '>' || *p == '|' || *p == '=')
        order = *p++;
    if (order == '=')
        order = HOST_ENDIAN;
    kind = *p ? *p++ : '\0';
    while (*p >= '0' && *p <= '9') {
        n     = n * 10 + (uint64_t)(*p++ - '0');
        has_n = true;
        if (n > MAX_FIXED_BYTES)
            ZARR_FAIL(ZARR_EUNSUPPORTED, "dtype '%s' is too large", s);
    }
    end = p;
    /* multi-byte numbers with '|' (NumPy: native order) */
    char num_order = (order == '|') ? HOST_ENDIAN : order;
    switch (kind) {
        case 'b':
            if (n == 1 && !*end)
                t = zarr_dtype_new(ZARR_BOOL, 1);
            break;
        case 'i':
        case 'u':
            if ((n == 1 || n == 2 || n == 4 || n == 8) && !*end) {
                t = zarr_dtype_new(kind == 'i' ? ZARR_INT : ZARR_UINT, (size_t)n);
                if (t && n > 1)
                    t->endian = num_order;
            }
            break;
        case 'f':
            if ((n == 2 || n == 4 || n == 8) && !*end && (t = zarr_dtype_new(ZARR_FLOAT, (size_t)n)))
                t->endian = num_order;
            break;
        case 'c':
            if ((n == 8 || n == 16) && !*end && (t = zarr_dtype_new(ZARR_COMPLEX, (size_t)n)))
                t->endian = num_order;
            break;
        case 'M':
        case 'm': {
            size_t ul;
            if (n != 8 || *end != '[' || !(ul = strlen(end)) || end[ul - 1] != ']')
                break;
            if (!(t = zarr_dtype_new(kind == 'M' ? ZARR_DATETIME : ZARR_TIMEDELTA, 8)))
                ZARR_FAIL(ZARR_ENOMEM, "out of memory");
            t->endian = num_order;
            ZARR_TRY(set_unit(t, end + 1, ul - 2));
            break;
        }
        case 'S':
        case 'V':
            if (has_n && n == 0)
                ZARR_FAIL(ZARR_EUNSUPPORTED, "zero-size dtype '%s' is not supported", s);
            if (has_n && !*end)
                t = zarr_dtype_new(kind == 'S' ? ZARR_FIXED_BYTES : ZARR_RAW, (size_t)n);
            break;
        case 'U':
            if (has_n && n == 0)
                ZARR_FAIL(ZARR_EUNSUPPORTED, "zero-size dtype '%s' is not supported", s);
            if (has_n && !*end && n <= MAX_FIXED_BYTES / 4 &&
                (t = zarr_dtype_new(ZARR_FIXED_UTF32, (size_t)n * 4)))
                t->endian = num_order;
            break;
        case 'O':
            if ((!has_n || n == 8) && !*end)
                t = zarr_dtype_new(ZARR_VLEN_UTF8, 0);
            break;
        default:
            break;
    }
    if (!t)
        ZARR_FAIL(ZARR_EUNSUPPORTED, "unsupported dtype '%s'", s);
    *out = t;
    t    = NULL;
done:
    zarr_dtype_free(t);
    return rc;
}

int
zarr_dtype_from_v2_json(struct json_object *j, zarr_dtype **out)
{
    zarr_dtype *st = NULL, *ft = NULL;
    int         rc = ZARR_OK;
    size_t      n;

    *out = NULL;
    if (json_object_is_type(j, json_type_string))
        return v2_from_string(json_object_get_string(j), out);
    if (!json_object_is_type(j, json_type_array))
        return zarr_error(ZARR_EMETA, "dtype must be a string or a list of fields");
    if ((n = json_object_array_length(j)) == 0)
        return zarr_error(ZARR_EMETA, "structured dtype has no fields");
    if (!(st = zarr_dtype_new(ZARR_STRUCT, 0)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        struct json_object *f = json_object_array_get_idx(j, i), *name, *shp = NULL;
        uint64_t            shape[8];
        int                 ndim = 0;
        size_t              fl   = json_object_is_type(f, json_type_array) ? json_object_array_length(f) : 0;
        if (fl < 2 || fl > 3 ||
            !json_object_is_type(name = json_object_array_get_idx(f, 0), json_type_string))
            ZARR_FAIL(ZARR_EMETA, "structured dtype field %zu must be [name, dtype] or [name, dtype, shape]",
                      i);
        if ((rc = zarr_dtype_from_v2_json(json_object_array_get_idx(f, 1), &ft)) != ZARR_OK) {
            zarr_error_wrap(rc, "field '%s': ", json_object_get_string(name));
            goto done;
        }
        if (fl == 3) {
            shp = json_object_array_get_idx(f, 2);
            if ((rc = zarr__json_uint_list(shp, json_object_get_string(name), 1, "dtype", shape, 8, &ndim)) !=
                ZARR_OK)
                goto done;
        }
        rc = struct_add(st, json_object_get_string(name), ft, ndim, shape);
        ft = NULL;
        if (rc != ZARR_OK)
            goto done;
    }
    *out = st;
    st   = NULL;
done:
    zarr_dtype_free(st);
    zarr_dtype_free(ft);
    return rc;
}

int
zarr_dtype_to_v2_json(const zarr_dtype *t, struct json_object **out)
{
    char                buf[64];
    char                e  = (t->size > 1 && t->endian != '|') ? t->endian : '|';
    struct json_object *ar = NULL;
    int                 rc = ZARR_OK;

    *out = NULL;
    switch (t->kind) {
        case ZARR_BOOL:
            snprintf(buf, sizeof buf, "|b1");
            break;
        case ZARR_INT:
        case ZARR_UINT:
        case ZARR_FLOAT:
        case ZARR_COMPLEX:
            snprintf(buf, sizeof buf, "%c%c%zu", e,
                     "iufc"[t->kind == ZARR_INT     ? 0
                            : t->kind == ZARR_UINT  ? 1
                            : t->kind == ZARR_FLOAT ? 2
                                                    : 3],
                     t -> size);
            break;
        case ZARR_DATETIME:
        case ZARR_TIMEDELTA:
            snprintf(buf, sizeof buf, "%c%c8[%s]", e == '|' ? '<' : e, t->kind == ZARR_DATETIME ? 'M' : 'm',
                     t->unit);
            break;
        case ZARR_FIXED_BYTES:
            snprintf(buf, sizeof buf, "|S%zu", t->nchars);
            break;
        case ZARR_RAW:
            snprintf(buf, sizeof buf, "|V%zu", t->nchars);
            break;
        case ZARR_FIXED_UTF32:
            snprintf(buf, sizeof buf, "%cU%zu", t->endian == '>' ? '>' : '<', t->nchars);
            break;
        case ZARR_VLEN_UTF8:
        case ZARR_VLEN_BYTES:
            snprintf(buf, sizeof buf, "|O");
            break;
        case ZARR_STRUCT:
            if (!(ar = json_object_new_array()))
                ZARR_FAIL(ZARR_ENOMEM, "out of memory");
            for (size_t i = 0; i < t->nfields; i++) {
                const zarr_field   *f = &t->fields[i];
                struct json_object *fj, *ftj = NULL;
                if (!(fj = json_object_new_array()) || json_object_array_add(ar, fj))
                    ZARR_FAIL(ZARR_ENOMEM, "out of memory");
                ZARR_TRY(zarr_dtype_to_v2_json(f->type, &ftj));
                json_object_array_add(fj, json_object_new_string(f->name));
                json_object_array_add(fj, ftj);
                if (f->ndim)
                    json_object_array_add(fj, zarr__json_new_uint_list(f->shape, f->ndim));
            }
            *out = ar;
            return ZARR_OK;
    }
    if (!(*out = json_object_new_string(buf)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
done:
    if (rc != ZARR_OK)
        json_object_put(ar);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * v3 data types
 * ------------------------------------------------------------------------------------------------ */
static const struct {
    const char *name;
    zarr_kind   kind;
    size_t      size;
} v3_simple[] = {
    {"bool", ZARR_BOOL, 1},
    {"int8", ZARR_INT, 1},
    {"int16", ZARR_INT, 2},
    {"int32", ZARR_INT, 4},
    {"int64", ZARR_INT, 8},
    {"uint8", ZARR_UINT, 1},
    {"uint16", ZARR_UINT, 2},
    {"uint32", ZARR_UINT, 4},
    {"uint64", ZARR_UINT, 8},
    {"float16", ZARR_FLOAT, 2},
    {"float32", ZARR_FLOAT, 4},
    {"float64", ZARR_FLOAT, 8},
    {"complex64", ZARR_COMPLEX, 8},
    {"complex128", ZARR_COMPLEX, 16},
    {"string", ZARR_VLEN_UTF8, 0},
    {"bytes", ZARR_VLEN_BYTES, 0},
    {"variable_length_bytes", ZARR_VLEN_BYTES, 0},
};

static int
v3_struct_fields(struct json_object *fields, zarr_dtype **out)
{
    zarr_dtype *st = NULL, *ft = NULL;
    int         rc = ZARR_OK;
    size_t      n;

    if (!json_object_is_type(fields, json_type_array) || (n = json_object_array_length(fields)) == 0)
        return zarr_error(ZARR_EMETA, "struct data_type needs a non-empty 'fields' list");
    if (!(st = zarr_dtype_new(ZARR_STRUCT, 0)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        struct json_object *f = json_object_array_get_idx(fields, i), *name = NULL, *dt = NULL;
        if (json_object_is_type(f, json_type_object)) {
            json_object_object_get_ex(f, "name", &name);
            json_object_object_get_ex(f, "data_type", &dt);
        }
        else if (json_object_is_type(f, json_type_array) && json_object_array_length(f) == 2) {
            name = json_object_array_get_idx(f, 0);
            dt   = json_object_array_get_idx(f, 1);
        }
        if (!json_object_is_type(name, json_type_string) || !dt)
            ZARR_FAIL(ZARR_EMETA, "struct field %zu must be {\"name\": .., \"data_type\": ..}", i);
        if ((rc = zarr_dtype_from_v3_json(dt, &ft)) != ZARR_OK) {
            zarr_error_wrap(rc, "field '%s': ", json_object_get_string(name));
            goto done;
        }
        rc = struct_add(st, json_object_get_string(name), ft, 0, NULL);
        ft = NULL;
        if (rc != ZARR_OK)
            goto done;
    }
    *out = st;
    st   = NULL;
done:
    zarr_dtype_free(st);
    return rc;
}

static int
config_length_bytes(struct json_object *conf, const char *name, uint64_t *len)
{
    struct json_object *v = NULL;
    if (!json_object_is_type(conf, json_type_object) ||
        !json_object_object_get_ex(conf, "length_bytes", &v) || !zarr__json_get_u64(v, len) || *len == 0 ||
        *len > MAX_FIXED_BYTES)
        return zarr_error(ZARR_EMETA, "data_type '%s' needs a positive integer 'length_bytes'", name);
    return ZARR_OK;
}

int
zarr_dtype_from_v3_json(struct json_object *j, zarr_dtype **out)
{
    struct json_object *conf = NULL, *nm = NULL;
    const char         *name;
    zarr_dtype         *t  = NULL;
    int                 rc = ZARR_OK;
    uint64_t            len;

    *out = NULL;
    if (json_object_is_type(j, json_type_object)) {
        if (!json_object_object_get_ex(j, "name", &nm) || !json_object_is_type(nm, json_type_string))
            return zarr_error(ZARR_EMETA, "data_type object needs a string 'name'");
        json_object_object_get_ex(j, "configuration", &conf);
        if (conf && !json_object_is_type(conf, json_type_object))
            return zarr_error(ZARR_EMETA, "data_type 'configuration' must be an object");
        name = json_object_get_string(nm);
    }
    else if (json_object_is_type(j, json_type_string))
        name = json_object_get_string(j);
    else
        return zarr_error(ZARR_EMETA, "data_type must be a string or an object");

    for (size_t i = 0; i < sizeof v3_simple / sizeof *v3_simple; i++)
        if (strcmp(name, v3_simple[i].name) == 0) {
            if (!(t = zarr_dtype_new(v3_simple[i].kind, v3_simple[i].size)))
                return zarr_error(ZARR_ENOMEM, "out of memory");
            *out = t;
            return ZARR_OK;
        }
    if (name[0] == 'r' && name[1] >= '1' && name[1] <= '9') {
        char              *e;
        unsigned long long bits = strtoull(name + 1, &e, 10);
        if (*e || bits % 8 || bits / 8 > MAX_FIXED_BYTES)
            return zarr_error(ZARR_EMETA, "data_type '%s': raw bits must be a multiple of 8", name);
        if (!(t = zarr_dtype_new(ZARR_RAW, (size_t)bits / 8)))
            return zarr_error(ZARR_ENOMEM, "out of memory");
        *out = t;
        return ZARR_OK;
    }
    if (strcmp(name, "fixed_length_utf32") == 0) {
        ZARR_TRY(config_length_bytes(conf, name, &len));
        if (len % 4)
            ZARR_FAIL(ZARR_EMETA, "data_type '%s': 'length_bytes' must be a multiple of 4", name);
        t = zarr_dtype_new(ZARR_FIXED_UTF32, (size_t)len);
    }
    else if (strcmp(name, "null_terminated_bytes") == 0 || strcmp(name, "fixed_length_bytes") == 0) {
        ZARR_TRY(config_length_bytes(conf, name, &len));
        t = zarr_dtype_new(ZARR_FIXED_BYTES, (size_t)len);
    }
    else if (strcmp(name, "raw_bytes") == 0) {
        ZARR_TRY(config_length_bytes(conf, name, &len));
        t = zarr_dtype_new(ZARR_RAW, (size_t)len);
    }
    else if (strcmp(name, "numpy.datetime64") == 0 || strcmp(name, "numpy.timedelta64") == 0) {
        struct json_object *u = NULL, *sf = NULL;
        uint64_t            scale = 1;
        char                ubuf[40];
        if (conf) {
            json_object_object_get_ex(conf, "unit", &u);
            json_object_object_get_ex(conf, "scale_factor", &sf);
        }
        if (!json_object_is_type(u, json_type_string))
            ZARR_FAIL(ZARR_EMETA, "data_type '%s' needs a string 'unit'", name);
        if (sf && (!zarr__json_get_u64(sf, &scale) || scale < 1 || scale > INT32_MAX))
            ZARR_FAIL(ZARR_EMETA, "data_type '%s': 'scale_factor' must be a positive integer", name);
        if (!(t = zarr_dtype_new(name[6] == 'd' ? ZARR_DATETIME : ZARR_TIMEDELTA, 8)))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        if (strlen(json_object_get_string(u)) > 8)
            ZARR_FAIL(ZARR_EUNSUPPORTED, "unsupported datetime unit '%s'", json_object_get_string(u));
        snprintf(ubuf, sizeof ubuf, "%" PRIu64 "%s", scale, json_object_get_string(u));
        ZARR_TRY(set_unit(t, ubuf, strlen(ubuf)));
        *out = t;
        return ZARR_OK;
    }
    else if (strcmp(name, "struct") == 0 || strcmp(name, "structured") == 0) {
        struct json_object *fields = NULL;
        if (conf)
            json_object_object_get_ex(conf, "fields", &fields);
        return v3_struct_fields(fields, out);
    }
    else
        return zarr_error(ZARR_EUNSUPPORTED, "unsupported data_type '%s'", name);
    if (!t)
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    *out = t;
    t    = NULL;
done:
    zarr_dtype_free(t);
    return rc;
}

static struct json_object *
named(const char *name, struct json_object *conf)
{
    struct json_object *o = json_object_new_object();
    if (!o || !conf) {
        json_object_put(o);
        json_object_put(conf);
        return NULL;
    }
    json_object_object_add(o, "name", json_object_new_string(name));
    json_object_object_add(o, "configuration", conf);
    return o;
}

static struct json_object *
conf_length(size_t n)
{
    struct json_object *c = json_object_new_object();
    if (c)
        json_object_object_add(c, "length_bytes", json_object_new_uint64(n));
    return c;
}

int
zarr_dtype_to_v3_json(const zarr_dtype *t, struct json_object **out)
{
    char                buf[48];
    struct json_object *o = NULL, *conf = NULL, *fields = NULL;
    int                 rc = ZARR_OK;

    *out = NULL;
    switch (t->kind) {
        case ZARR_BOOL:
            o = json_object_new_string("bool");
            break;
        case ZARR_INT:
        case ZARR_UINT:
        case ZARR_FLOAT:
        case ZARR_COMPLEX:
            snprintf(buf, sizeof buf, "%s%zu",
                     t->kind == ZARR_INT     ? "int"
                     : t->kind == ZARR_UINT  ? "uint"
                     : t->kind == ZARR_FLOAT ? "float"
                                             : "complex",
                     t->size * 8);
            o = json_object_new_string(buf);
            break;
        case ZARR_RAW:
            snprintf(buf, sizeof buf, "r%zu", t->nchars * 8);
            o = json_object_new_string(buf);
            break;
        case ZARR_VLEN_UTF8:
            o = json_object_new_string("string");
            break;
        case ZARR_VLEN_BYTES:
            o = json_object_new_string("bytes");
            break;
        case ZARR_FIXED_UTF32:
            o = named("fixed_length_utf32", conf_length(t->size));
            break;
        case ZARR_FIXED_BYTES:
            o = named("null_terminated_bytes", conf_length(t->size));
            break;
        case ZARR_DATETIME:
        case ZARR_TIMEDELTA: {
            const char        *u     = t->unit;
            unsigned long long scale = 1;
            if (*u >= '0' && *u <= '9')
                scale = strtoull(u, (char **)&u, 10);
            if (!(conf = json_object_new_object()))
                break;
            json_object_object_add(conf, "unit", json_object_new_string(u));
            json_object_object_add(conf, "scale_factor", json_object_new_uint64(scale));
            o    = named(t->kind == ZARR_DATETIME ? "numpy.datetime64" : "numpy.timedelta64", conf);
            conf = NULL;
            break;
        }
        case ZARR_STRUCT:
            if (!(conf = json_object_new_object()) || !(fields = json_object_new_array()))
                ZARR_FAIL(ZARR_ENOMEM, "out of memory");
            json_object_object_add(conf, "fields", fields);
            for (size_t i = 0; i < t->nfields; i++) {
                struct json_object *f, *ft = NULL;
                if (t->fields[i].ndim)
                    ZARR_FAIL(ZARR_EUNSUPPORTED,
                              "struct field '%s' has a sub-array shape, which zarr v3 cannot describe",
                              t->fields[i].name);
                ZARR_TRY(zarr_dtype_to_v3_json(t->fields[i].type, &ft));
                if (!(f = json_object_new_object())) {
                    json_object_put(ft);
                    ZARR_FAIL(ZARR_ENOMEM, "out of memory");
                }
                json_object_array_add(fields, f);
                json_object_object_add(f, "name", json_object_new_string(t->fields[i].name));
                json_object_object_add(f, "data_type", ft);
            }
            o    = named("struct", conf);
            conf = NULL;
            break;
    }
    if (!o)
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    *out = o;
done:
    json_object_put(conf);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * Base64 and byte order helpers for fill values
 * ------------------------------------------------------------------------------------------------ */
static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *
b64_encode(const uint8_t *p, size_t n)
{
    char  *s = malloc(4 * ((n + 2) / 3) + 1), *o = s;
    size_t i;
    if (!s)
        return NULL;
    for (i = 0; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++       = b64chars[v >> 18];
        *o++       = b64chars[(v >> 12) & 63];
        *o++       = b64chars[(v >> 6) & 63];
        *o++       = b64chars[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        *o++       = b64chars[v >> 18];
        *o++       = b64chars[(v >> 12) & 63];
        *o++       = i + 1 < n ? b64chars[(v >> 6) & 63] : '=';
        *o++       = '=';
    }
    *o = '\0';
    return s;
}

/* Decodes base64 text into a new buffer; false if the text is not valid base64. */
static bool
b64_decode(const char *s, size_t n, uint8_t **out, size_t *outn)
{
    uint8_t *d = malloc(n / 4 * 3 + 3), *o = d;
    uint32_t acc  = 0;
    int      bits = 0, pad = 0;

    if (!d)
        return false;
    for (size_t i = 0; i < n; i++) {
        const char *c;
        if (s[i] == '=') {
            pad++;
            continue;
        }
        if (pad || !s[i] || !(c = strchr(b64chars, s[i]))) {
            free(d);
            return false;
        }
        acc = (acc << 6) | (uint32_t)(c - b64chars);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *o++ = (uint8_t)(acc >> bits);
        }
    }
    if (pad > 2 || bits >= 6 || (acc & ((1u << bits) - 1))) {
        free(d);
        return false;
    }
    *out  = d;
    *outn = (size_t)(o - d);
    return true;
}

/* Swaps, in place, every multi-byte field stored big-endian (the stored <-> memory form of a
 * fixed-size element; applying it twice is the identity). */
static void
swap_stored(const zarr_dtype *t, uint8_t *p, char default_endian)
{
    if (t->kind == ZARR_STRUCT) {
        for (size_t i = 0; i < t->nfields; i++) {
            const zarr_field *f = &t->fields[i];
            size_t            n = field_count(f);
            for (size_t k = 0; k < n; k++)
                swap_stored(f->type, p + f->offset + k * f->type->size, default_endian);
        }
        return;
    }
    char e = default_endian ? default_endian : t->endian;
    if (!endian_matters(t) || e == HOST_ENDIAN || e == '|')
        return;
    size_t w = t->kind == ZARR_COMPLEX ? t->size / 2 : t->kind == ZARR_FIXED_UTF32 ? 4 : t->size;
    for (size_t off = 0; off + w <= t->size; off += w)
        for (size_t a = 0, b = w - 1; a < b; a++, b--) {
            uint8_t x  = p[off + a];
            p[off + a] = p[off + b];
            p[off + b] = x;
        }
}

/* ------------------------------------------------------------------------------------------------
 * Floats
 * ------------------------------------------------------------------------------------------------ */
uint16_t
zarr__half_from_double(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    uint16_t sign = (uint16_t)((b >> 48) & 0x8000);
    int      exp  = (int)((b >> 52) & 0x7ff);
    uint64_t man  = b & 0xfffffffffffffULL;
    if (exp == 0x7ff)
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 42) : 0));
    int e = exp - 1023 + 15;
    if (e >= 31)
        return sign | 0x7c00;
    if (e <= 0) {
        if (e < -10)
            return sign;
        man |= 1ULL << 52;
        int      shift = 43 - e;
        uint64_t h = man >> shift, rem = man & ((1ULL << shift) - 1), half = 1ULL << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint64_t h = man >> 42, rem = man & ((1ULL << 42) - 1), half = 1ULL << 41;
    uint32_t r = ((uint32_t)e << 10) | (uint32_t)h;
    if (rem > half || (rem == half && (r & 1)))
        r++;
    return (uint16_t)(sign | r);
}

double
zarr__half_to_double(uint16_t h)
{
    int    e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0)
        v = ldexp(m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

double
zarr__half_round(double v)
{
    return zarr__half_to_double(zarr__half_from_double(v));
}

/* Reads a float fill (number, "NaN", "Infinity", "-Infinity", and in v3 "0x<bits>") into `size` bytes.
 * v2 has no hex form and can only write NaN as "NaN": a hex NaN payload would silently become the
 * canonical NaN on the next rewrite, so v2 refuses hex. */
static int
float_from_json(struct json_object *j, size_t size, int fmt, void *dst)
{
    double d;
    if (json_object_is_type(j, json_type_string)) {
        const char *s = json_object_get_string(j);
        if (strcmp(s, "NaN") == 0) {
            uint64_t bits = size == 2 ? 0x7e00 : size == 4 ? 0x7fc00000 : 0x7ff8000000000000ULL;
            if (size == 2) {
                uint16_t v = (uint16_t)bits;
                memcpy(dst, &v, 2);
            }
            else if (size == 4) {
                uint32_t v = (uint32_t)bits;
                memcpy(dst, &v, 4);
            }
            else
                memcpy(dst, &bits, 8);
            return ZARR_OK;
        }
        if (strcmp(s, "Infinity") == 0 || strcmp(s, "+Infinity") == 0)
            d = INFINITY;
        else if (strcmp(s, "-Infinity") == 0)
            d = -INFINITY;
        else if (fmt == 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
            return zarr_error(ZARR_EMETA,
                              "fill_value \"%s\": hex floats are v3 only (zarr v2 has no such form)", s);
        else if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && strlen(s + 2) == size * 2 &&
                 strspn(s + 2, "0123456789abcdefABCDEF") == size * 2) {
            uint64_t bits = strtoull(s + 2, NULL, 16);
            if (size == 2) {
                uint16_t v = (uint16_t)bits;
                memcpy(dst, &v, 2);
            }
            else if (size == 4) {
                uint32_t v = (uint32_t)bits;
                memcpy(dst, &v, 4);
            }
            else
                memcpy(dst, &bits, 8);
            return ZARR_OK;
        }
        else
            return zarr_error(ZARR_EMETA, "fill_value \"%s\" is not a valid float", s);
    }
    else if (json_object_is_type(j, json_type_double))
        d = json_object_get_double(j);
    else if (json_object_is_type(j, json_type_int))
        d = zarr__json_is_negative_int(j) ? (double)json_object_get_int64(j)
                                          : (double)json_object_get_uint64(j);
    else
        return zarr_error(ZARR_EMETA, "fill_value %s is not a valid float", json_object_to_json_string(j));
    if (size == 8)
        memcpy(dst, &d, 8);
    else if (size == 4) {
        if (isfinite(d) && fabs(d) > FLT_MAX)
            return zarr_error(ZARR_EMETA, "fill_value %s is out of range for float32",
                              json_object_to_json_string(j));
        float f = (float)d;
        memcpy(dst, &f, 4);
    }
    else {
        uint16_t h = zarr__half_from_double(d);
        if (isfinite(d) && (h & 0x7c00) == 0x7c00)
            return zarr_error(ZARR_EMETA, "fill_value %s is out of range for float16",
                              json_object_to_json_string(j));
        memcpy(dst, &h, 2);
    }
    return ZARR_OK;
}

static struct json_object *
float_to_json(const void *src, size_t size, int fmt)
{
    uint64_t bits = 0, canon;
    double   d;
    char     hex[24];

    if (size == 2) {
        uint16_t h;
        memcpy(&h, src, 2);
        bits  = h;
        canon = 0x7e00;
        d     = zarr__half_to_double(h);
    }
    else if (size == 4) {
        uint32_t u;
        float    f;
        memcpy(&u, src, 4);
        memcpy(&f, src, 4);
        bits  = u;
        canon = 0x7fc00000;
        d     = f;
    }
    else {
        memcpy(&bits, src, 8);
        memcpy(&d, src, 8);
        canon = 0x7ff8000000000000ULL;
    }
    if (isnan(d)) {
        if (fmt == 2 || bits == canon)
            return json_object_new_string("NaN");
        snprintf(hex, sizeof hex, "0x%0*llx", (int)size * 2, (unsigned long long)bits);
        return json_object_new_string(hex);
    }
    if (isinf(d))
        return json_object_new_string(d > 0 ? "Infinity" : "-Infinity");
    return json_object_new_double(d);
}

/* ------------------------------------------------------------------------------------------------
 * Fill values
 * ------------------------------------------------------------------------------------------------ */
static const char *
kind_name(const zarr_dtype *t, char *buf, size_t n)
{
    switch (t->kind) {
        case ZARR_INT:
            snprintf(buf, n, "int%zu", t->size * 8);
            break;
        case ZARR_UINT:
            snprintf(buf, n, "uint%zu", t->size * 8);
            break;
        default:
            snprintf(buf, n, "this data type");
    }
    return buf;
}

/* Bytes from a byte list ([1,2,3]) or base64 text; *p is new. */
static int
bytes_from_json(struct json_object *j, bool allow_list, uint8_t **p, size_t *n)
{
    *p = NULL;
    *n = 0;
    if (json_object_is_type(j, json_type_string)) {
        if (!b64_decode(json_object_get_string(j), (size_t)json_object_get_string_len(j), p, n))
            return zarr_error(ZARR_EMETA, "fill_value \"%s\" is not valid base64", json_object_get_string(j));
        return ZARR_OK;
    }
    if (allow_list && json_object_is_type(j, json_type_array)) {
        size_t len = json_object_array_length(j);
        if (!(*p = malloc(len ? len : 1)))
            return zarr_error(ZARR_ENOMEM, "out of memory");
        for (size_t i = 0; i < len; i++) {
            uint64_t v;
            if (!zarr__json_get_u64(json_object_array_get_idx(j, i), &v) || v > 255) {
                free(*p);
                *p = NULL;
                return zarr_error(ZARR_EMETA, "fill_value byte list must hold integers 0..255");
            }
            (*p)[i] = (uint8_t)v;
        }
        *n = len;
        return ZARR_OK;
    }
    return zarr_error(ZARR_EMETA, "fill_value %s must be %s", json_object_to_json_string(j),
                      allow_list ? "a list of bytes or a base64 string" : "a base64 string");
}

/* v2 writers put 0 as the fill of string/bytes/structured types: read it as all zeros. */
static bool
is_zero_number(struct json_object *j)
{
    int64_t i;
    return (zarr__json_get_i64(j, &i) && i == 0) ||
           (json_object_is_type(j, json_type_double) && json_object_get_double(j) == 0.0);
}

static int
decode_utf8(const char *s, size_t n, uint32_t *cps, size_t max, size_t *count)
{
    size_t i = 0, k = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        uint32_t      cp;
        int           len;
        if (c < 0x80)
            cp = c, len = 1;
        else if ((c & 0xe0) == 0xc0)
            cp = c & 0x1f, len = 2;
        else if ((c & 0xf0) == 0xe0)
            cp = c & 0x0f, len = 3;
        else if ((c & 0xf8) == 0xf0)
            cp = c & 0x07, len = 4;
        else
            return zarr_error(ZARR_EMETA, "fill_value is not valid UTF-8");
        if (i + (size_t)len > n)
            return zarr_error(ZARR_EMETA, "fill_value is not valid UTF-8");
        for (int b = 1; b < len; b++) {
            if (((unsigned char)s[i + b] & 0xc0) != 0x80)
                return zarr_error(ZARR_EMETA, "fill_value is not valid UTF-8");
            cp = (cp << 6) | ((unsigned char)s[i + b] & 0x3f);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000))
            return zarr_error(ZARR_EMETA, "fill_value is not valid UTF-8 (overlong encoding)");
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return zarr_error(ZARR_EMETA, "fill_value holds an invalid code point U+%X", cp);
        if (k >= max)
            return zarr_error(ZARR_EMETA, "fill_value has more than the %zu characters of the data type",
                              max);
        cps[k++] = cp;
        i += (size_t)len;
    }
    *count = k;
    return ZARR_OK;
}

static int fill_parse(const zarr_dtype *t, int fmt, struct json_object *j, uint8_t *elem);

/* An integer fill value (a JSON integer, or a double with no fraction) range-checked for the int or uint
 * type `t` and stored in its `size` bytes, two's complement in host order. */
static int
fill_parse_int(const zarr_dtype *t, struct json_object *j, uint8_t *elem)
{
    char     nb[32];
    int64_t  i = 0;
    uint64_t u = 0;
    bool     ok, neg;
    int      rc = ZARR_OK;
    if (json_object_is_type(j, json_type_double)) {
        double d = json_object_get_double(j);
        ok       = d == floor(d) && d >= -9223372036854775808.0 && d < 18446744073709551616.0;
        neg      = d < 0;
        if (ok && neg)
            i = (int64_t)d;
        else if (ok)
            u = (uint64_t)d;
    }
    else if (json_object_is_type(j, json_type_int)) {
        ok  = true;
        neg = zarr__json_is_negative_int(j);
        if (neg)
            i = json_object_get_int64(j);
        else
            u = json_object_get_uint64(j);
    }
    else
        ZARR_FAIL(ZARR_EMETA, "fill_value %s must be an integer", json_object_to_json_string(j));
    if (ok) {
        unsigned bits = (unsigned)t->size * 8;
        if (t->kind == ZARR_UINT)
            ok = !neg && (bits == 64 || u < (1ULL << bits));
        else if (neg)
            ok = bits == 64 || i >= -(int64_t)(1ULL << (bits - 1));
        else
            ok = u <= (uint64_t)INT64_MAX >> (64 - bits);
        if (!neg)
            i = (int64_t)u;
    }
    if (!ok)
        ZARR_FAIL(ZARR_EMETA, "fill_value %s is out of range for %s", json_object_to_json_string(j),
                  kind_name(t, nb, sizeof nb));
    /* two's complement: the low `size` bytes of i in host order */
    switch (t->size) {
        case 1: {
            uint8_t v = (uint8_t)i;
            memcpy(elem, &v, 1);
            break;
        }
        case 2: {
            uint16_t v = (uint16_t)i;
            memcpy(elem, &v, 2);
            break;
        }
        case 4: {
            uint32_t v = (uint32_t)i;
            memcpy(elem, &v, 4);
            break;
        }
        default: {
            uint64_t v = (uint64_t)i;
            memcpy(elem, &v, 8);
        }
    }
done:
    return rc;
}

/* A struct fill value given as an object of every field's value, each parsed into its field of `elem`. */
static int
fill_parse_struct_fields(const zarr_dtype *t, int fmt, struct json_object *j, uint8_t *elem)
{
    int rc = ZARR_OK;
    if (json_object_object_length(j) != (int)t->nfields)
        ZARR_FAIL(ZARR_EMETA, "struct fill_value must give each of the %zu fields", t->nfields);
    for (size_t i = 0; i < t->nfields; i++) {
        const zarr_field   *f = &t->fields[i];
        struct json_object *fv;
        if (!json_object_object_get_ex(j, f->name, &fv))
            ZARR_FAIL(ZARR_EMETA, "struct fill_value misses field '%s'", f->name);
        if (f->ndim)
            ZARR_FAIL(ZARR_EUNSUPPORTED, "struct fill_value for sub-array field '%s'", f->name);
        if (!fv)
            ZARR_FAIL(ZARR_EMETA, "struct fill_value for field '%s' is null", f->name);
        if ((rc = fill_parse(f->type, fmt, fv, elem + f->offset)) != ZARR_OK) {
            zarr_error_wrap(rc, "field '%s': ", f->name);
            goto done;
        }
    }
done:
    return rc;
}

/* The fill value of a fixed bytes, raw or struct type: v2's 0 (all zeros), a struct's object of fields,
 * or its bytes (base64, or for v3 bytes and raw a list of bytes); a struct's bytes are in stored order. */
static int
fill_parse_bytes(const zarr_dtype *t, int fmt, struct json_object *j, uint8_t *elem)
{
    uint8_t *bytes = NULL;
    size_t   nbytes;
    int      rc = ZARR_OK;
    if (fmt == 2 && is_zero_number(j))
        goto done;
    if (t->kind == ZARR_STRUCT && json_object_is_type(j, json_type_object)) {
        rc = fill_parse_struct_fields(t, fmt, j, elem);
        goto done;
    }
    if (t->kind == ZARR_STRUCT && zarr_dtype_has_vlen(t))
        ZARR_FAIL(ZARR_EUNSUPPORTED, "base64 fill_value for a struct with variable-length fields");
    ZARR_TRY(bytes_from_json(j, fmt == 3 && t->kind != ZARR_STRUCT, &bytes, &nbytes));
    if (nbytes > t->size || (t->kind == ZARR_STRUCT && nbytes != t->size))
        ZARR_FAIL(ZARR_EMETA, "fill_value has %zu bytes; the data type holds %zu", nbytes, t->size);
    if (nbytes)
        memcpy(elem, bytes, nbytes);
    if (t->kind == ZARR_STRUCT)
        swap_stored(t, elem, fmt == 3 ? '<' : 0);
done:
    free(bytes);
    return rc;
}

/* A fixed-length UTF-32 fill value: a string of at most the type's characters (v2's 0: all zeros). */
static int
fill_parse_utf32(const zarr_dtype *t, int fmt, struct json_object *j, uint8_t *elem)
{
    uint32_t *cps = NULL;
    size_t    count;
    int       rc = ZARR_OK;
    if (fmt == 2 && is_zero_number(j))
        goto done;
    if (!json_object_is_type(j, json_type_string))
        ZARR_FAIL(ZARR_EMETA, "fill_value %s must be a string", json_object_to_json_string(j));
    if (!(cps = calloc(t->nchars, sizeof *cps)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    rc =
        decode_utf8(json_object_get_string(j), (size_t)json_object_get_string_len(j), cps, t->nchars, &count);
    if (rc == ZARR_OK)
        memcpy(elem, cps, t->nchars * 4);
done:
    free(cps);
    return rc;
}

/* A variable-length UTF-8 fill value: a new copy of a string without NUL (v2's 0: a null pointer). */
static int
fill_parse_vlen_utf8(int fmt, struct json_object *j, uint8_t *elem)
{
    char  *s = NULL;
    size_t len;
    int    rc = ZARR_OK;
    if (fmt == 2 && is_zero_number(j))
        goto done;
    if (!json_object_is_type(j, json_type_string))
        ZARR_FAIL(ZARR_EMETA, "fill_value %s must be a string", json_object_to_json_string(j));
    len = (size_t)json_object_get_string_len(j);
    if (memchr(json_object_get_string(j), '\0', len))
        ZARR_FAIL(ZARR_EUNSUPPORTED, "fill_value string contains a NUL character");
    if (!(s = strdup(json_object_get_string(j))))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    memcpy(elem, &s, sizeof s);
done:
    return rc;
}

/* A variable-length bytes fill value: new bytes from a byte list or base64 (v2's 0: none). */
static int
fill_parse_vlen_bytes(int fmt, struct json_object *j, uint8_t *elem)
{
    zarr_vlen v     = {0, NULL};
    uint8_t  *bytes = NULL;
    size_t    nbytes;
    int       rc = ZARR_OK;
    if (fmt == 2 && is_zero_number(j))
        goto done;
    ZARR_TRY(bytes_from_json(j, true, &bytes, &nbytes));
    if (nbytes) {
        v.p   = bytes;
        v.len = nbytes;
        bytes = NULL;
    }
    memcpy(elem, &v, sizeof v);
done:
    free(bytes);
    return rc;
}

/* The fill value `j` (zarr format `fmt`'s rules) into `elem`, by the kind's helper above. */
static int
fill_parse(const zarr_dtype *t, int fmt, struct json_object *j, uint8_t *elem)
{
    int rc = ZARR_OK;

    switch (t->kind) {
        case ZARR_BOOL: {
            int64_t i;
            if (json_object_is_type(j, json_type_boolean))
                elem[0] = json_object_get_boolean(j) ? 1 : 0;
            else if (fmt == 2 && zarr__json_get_i64(j, &i) && (i == 0 || i == 1))
                elem[0] = (uint8_t)i;
            else
                ZARR_FAIL(ZARR_EMETA, "fill_value %s must be true or false", json_object_to_json_string(j));
            break;
        }
        case ZARR_INT:
        case ZARR_UINT:
            rc = fill_parse_int(t, j, elem);
            break;
        case ZARR_FLOAT:
            rc = float_from_json(j, t->size, fmt, elem);
            break;
        case ZARR_COMPLEX:
            if (!json_object_is_type(j, json_type_array) || json_object_array_length(j) != 2)
                ZARR_FAIL(ZARR_EMETA, "fill_value %s must be a [real, imaginary] pair",
                          json_object_to_json_string(j));
            ZARR_TRY(float_from_json(json_object_array_get_idx(j, 0), t->size / 2, fmt, elem));
            ZARR_TRY(float_from_json(json_object_array_get_idx(j, 1), t->size / 2, fmt, elem + t->size / 2));
            break;
        case ZARR_DATETIME:
        case ZARR_TIMEDELTA: {
            int64_t i;
            if (json_object_is_type(j, json_type_string) && strcmp(json_object_get_string(j), "NaT") == 0)
                i = INT64_MIN;
            else if (!zarr__json_get_i64(j, &i))
                ZARR_FAIL(ZARR_EMETA, "fill_value %s must be an int64 or \"NaT\"",
                          json_object_to_json_string(j));
            memcpy(elem, &i, 8);
            break;
        }
        case ZARR_FIXED_BYTES:
        case ZARR_RAW:
        case ZARR_STRUCT:
            rc = fill_parse_bytes(t, fmt, j, elem);
            break;
        case ZARR_FIXED_UTF32:
            rc = fill_parse_utf32(t, fmt, j, elem);
            break;
        case ZARR_VLEN_UTF8:
            rc = fill_parse_vlen_utf8(fmt, j, elem);
            break;
        case ZARR_VLEN_BYTES:
            rc = fill_parse_vlen_bytes(fmt, j, elem);
            break;
    }
done:
    return rc;
}

int
zarr_fill_from_json(const zarr_dtype *t, int zarr_format, struct json_object *j, void *elem, bool *defined)
{
    int rc;
    memset(elem, 0, t->size);
    *defined = false;
    if (!j)
        return ZARR_OK;
    if ((rc = fill_parse(t, zarr_format, j, elem)) != ZARR_OK) {
        zarr_dtype_clear_elems(t, elem, 1);
        memset(elem, 0, t->size);
        return rc;
    }
    *defined = true;
    return ZARR_OK;
}

static struct json_object *
byte_list(const uint8_t *p, size_t n)
{
    struct json_object *a = json_object_new_array_ext((int)n);
    for (size_t i = 0; a && i < n; i++)
        json_object_array_add(a, json_object_new_int(p[i]));
    return a;
}

static struct json_object *
b64_json(const uint8_t *p, size_t n)
{
    char               *s = b64_encode(p, n);
    struct json_object *o = s ? json_object_new_string(s) : NULL;
    free(s);
    return o;
}

static int fill_emit(const zarr_dtype *t, int fmt, const uint8_t *elem, struct json_object **out);

/* A signed integer fill value of `size` bytes (host order) as a JSON integer (new; NULL: out of memory). */
static struct json_object *
fill_emit_int(size_t size, const uint8_t *elem)
{
    int64_t v;
    if (size == 1) {
        int8_t x;
        memcpy(&x, elem, 1);
        v = x;
    }
    else if (size == 2) {
        int16_t x;
        memcpy(&x, elem, 2);
        v = x;
    }
    else if (size == 4) {
        int32_t x;
        memcpy(&x, elem, 4);
        v = x;
    }
    else
        memcpy(&v, elem, 8);
    return json_object_new_int64(v);
}

/* An unsigned integer fill value of `size` bytes (host order) as a JSON integer (new; NULL: out of
 * memory). */
static struct json_object *
fill_emit_uint(size_t size, const uint8_t *elem)
{
    uint64_t v;
    if (size == 1)
        v = elem[0];
    else if (size == 2) {
        uint16_t x;
        memcpy(&x, elem, 2);
        v = x;
    }
    else if (size == 4) {
        uint32_t x;
        memcpy(&x, elem, 4);
        v = x;
    }
    else
        memcpy(&v, elem, 8);
    return json_object_new_uint64(v);
}

/* A struct fill value (*out new; NULL: out of memory): v2 its bytes in stored order as base64 (0 for the
 * all-zero value of a struct with variable-length fields, which has no other v2 form), v3 an object of
 * its fields' values. */
static int
fill_emit_struct(const zarr_dtype *t, int fmt, const uint8_t *elem, struct json_object **out)
{
    struct json_object *o  = NULL;
    int                 rc = ZARR_OK;
    if (fmt == 2) {
        uint8_t *tmp;
        if (zarr_dtype_has_vlen(t)) {
            /* only the all-zero value (null payloads) has a v2 form: 0, which reads back */
            size_t i = 0;
            while (i < t->size && elem[i] == 0)
                i++;
            if (i < t->size)
                ZARR_FAIL(ZARR_EUNSUPPORTED, "struct fill value with variable-length fields");
            o = json_object_new_int(0);
            goto done;
        }
        if (!(tmp = malloc(t->size)))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
        memcpy(tmp, elem, t->size);
        swap_stored(t, tmp, 0);
        o = b64_json(tmp, t->size);
        free(tmp);
        goto done;
    }
    if (!(o = json_object_new_object()))
        goto done;
    for (size_t i = 0; i < t->nfields; i++) {
        struct json_object *fv = NULL;
        if (t->fields[i].ndim)
            ZARR_FAIL(ZARR_EUNSUPPORTED, "struct fill value for sub-array field '%s'", t->fields[i].name);
        ZARR_TRY(fill_emit(t->fields[i].type, fmt, elem + t->fields[i].offset, &fv));
        json_object_object_add(o, t->fields[i].name, fv);
    }
done:
    if (rc == ZARR_OK)
        *out = o;
    else
        json_object_put(o);
    return rc;
}

/* A fixed-length UTF-32 fill value as a JSON string (*out new; NULL: out of memory), trailing NULs left
 * out; refused when it holds a code point that is not a character. */
static int
fill_emit_utf32(const zarr_dtype *t, const uint8_t *elem, struct json_object **out)
{
    zarr_buf b    = ZARR_BUF_INIT;
    size_t   used = t->nchars; /* trailing NULs are padding (numpy); embedded ones are kept */
    int      rc   = ZARR_OK;
    while (used > 0) {
        uint32_t last;
        memcpy(&last, elem + 4 * (used - 1), 4);
        if (last != 0)
            break;
        used--;
    }
    for (size_t i = 0; i < used; i++) {
        uint32_t cp;
        uint8_t  u[4];
        size_t   n;
        memcpy(&cp, elem + 4 * i, 4);
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            ZARR_FAIL(ZARR_EINVAL, "fill value holds an invalid code point U+%X", cp);
        if (cp < 0x80)
            u[0] = (uint8_t)cp, n = 1;
        else if (cp < 0x800)
            u[0] = (uint8_t)(0xc0 | cp >> 6), u[1] = (uint8_t)(0x80 | (cp & 63)), n = 2;
        else if (cp < 0x10000)
            u[0] = (uint8_t)(0xe0 | cp >> 12), u[1] = (uint8_t)(0x80 | ((cp >> 6) & 63)),
            u[2] = (uint8_t)(0x80 | (cp & 63)), n = 3;
        else
            u[0] = (uint8_t)(0xf0 | cp >> 18), u[1] = (uint8_t)(0x80 | ((cp >> 12) & 63)),
            u[2] = (uint8_t)(0x80 | ((cp >> 6) & 63)), u[3] = (uint8_t)(0x80 | (cp & 63)), n = 4;
        if (zarr_buf_append(&b, u, n) != ZARR_OK)
            ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    }
    *out = json_object_new_string_len(b.data ? (const char *)b.data : "", (int)b.size);
done:
    zarr_buf_free(&b);
    return rc;
}

/* The fill value in `elem` as zarr format `fmt`'s JSON (*out new), by the kind's helper above. */
static int
fill_emit(const zarr_dtype *t, int fmt, const uint8_t *elem, struct json_object **out)
{
    struct json_object *o  = NULL;
    int                 rc = ZARR_OK;

    switch (t->kind) {
        case ZARR_BOOL:
            o = json_object_new_boolean(elem[0] != 0);
            break;
        case ZARR_INT:
            o = fill_emit_int(t->size, elem);
            break;
        case ZARR_UINT:
            o = fill_emit_uint(t->size, elem);
            break;
        case ZARR_FLOAT:
            o = float_to_json(elem, t->size, fmt);
            break;
        case ZARR_COMPLEX:
            if ((o = json_object_new_array())) {
                json_object_array_add(o, float_to_json(elem, t->size / 2, fmt));
                json_object_array_add(o, float_to_json(elem + t->size / 2, t->size / 2, fmt));
            }
            break;
        case ZARR_DATETIME:
        case ZARR_TIMEDELTA: {
            int64_t v;
            memcpy(&v, elem, 8);
            o = (fmt == 3 && v == INT64_MIN) ? json_object_new_string("NaT") : json_object_new_int64(v);
            break;
        }
        case ZARR_FIXED_BYTES: { /* NumPy "S" values drop trailing NULs */
            size_t n = t->size;
            while (n && elem[n - 1] == 0)
                n--;
            o = b64_json(elem, n);
            break;
        }
        case ZARR_RAW:
            o = fmt == 3 ? byte_list(elem, t->size) : b64_json(elem, t->size);
            break;
        case ZARR_STRUCT:
            ZARR_TRY(fill_emit_struct(t, fmt, elem, &o));
            break;
        case ZARR_FIXED_UTF32:
            ZARR_TRY(fill_emit_utf32(t, elem, &o));
            break;
        case ZARR_VLEN_UTF8: {
            const char *s;
            memcpy(&s, elem, sizeof s);
            o = json_object_new_string(s ? s : "");
            break;
        }
        case ZARR_VLEN_BYTES: {
            zarr_vlen v;
            memcpy(&v, elem, sizeof v);
            o = b64_json(v.p ? v.p : (const uint8_t *)"", v.p ? v.len : 0);
            break;
        }
    }
    if (!o)
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    *out = o;
    o    = NULL;
done:
    json_object_put(o);
    return rc;
}

int
zarr_fill_to_json(const zarr_dtype *t, int zarr_format, const void *elem, bool defined,
                  struct json_object **out)
{
    *out = NULL;
    if (!defined)
        return ZARR_OK;
    return fill_emit(t, zarr_format, elem, out);
}
