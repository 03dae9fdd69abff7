/*
 * json.c: parsing, printing and checked access of JSON documents for the core (see json.h).
 *
 * json-c does the tokenizing; this file adds what zarr metadata needs on top: whole-document checks,
 * exact 64-bit integers (json-c silently clamps out-of-range integers, so they are refused here before
 * parsing), Python-compatible pretty printing with shortest round-trip doubles, semantic comparison
 * and key getters whose messages name the document and the key.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, clock_gettime */

#include "zjson.h"
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nesting allowed in documents (attributes can be deep; json-c's default is 32). */
#define ZARR_JSON_DEPTH 256

/* Checks that every integer literal outside strings fits int64 (negative) or uint64 (positive):
 * json-c would clamp it. Returns the byte offset of the first bad literal, or SIZE_MAX. */
static size_t
find_bad_integer(const char *s, size_t n)
{
    static const char maxneg[] = "9223372036854775808";
    static const char maxpos[] = "18446744073709551615";
    size_t            i        = 0;

    while (i < n) {
        char c = s[i];
        if (c == '"' || c == '\'') {
            char q = c;
            for (i++; i < n && s[i] != q; i++)
                if (s[i] == '\\')
                    i++;
            i++;
            continue;
        }
        if ((c == '-' || isdigit((unsigned char)c)) &&
            (i == 0 || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '.'))) {
            size_t start = i, j = i, d0, nd;
            bool   neg = (c == '-'), integral = true;
            if (neg)
                j++;
            d0 = j;
            while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '.' || s[j] == '+' || s[j] == '-')) {
                if (!isdigit((unsigned char)s[j]))
                    integral = false;
                j++;
            }
            if (integral && j > d0) {
                const char *lim = neg ? maxneg : maxpos;
                size_t      nl  = strlen(lim);
                while (d0 < j - 1 && s[d0] == '0')
                    d0++;
                nd = j - d0;
                if (nd > nl || (nd == nl && memcmp(s + d0, lim, nl) > 0))
                    return start;
            }
            i = j;
            continue;
        }
        i++;
    }
    return SIZE_MAX;
}

int
zarr__json_parse(const char *text, size_t n, const char *where, struct json_object **out)
{
    struct json_tokener    *tok  = NULL;
    struct json_object     *j    = NULL;
    char                   *copy = NULL;
    int                     rc   = ZARR_OK;
    size_t                  bad, end;
    enum json_tokener_error err;

    *out = NULL;
    if (!where)
        where = "(json)";
    if (n >= (size_t)INT32_MAX)
        ZARR_FAIL(ZARR_EMETA, "'%s': document of %zu bytes is too large", where, n);
    if (!(copy = malloc(n + 1)))
        ZARR_FAIL(ZARR_ENOMEM, "'%s': out of memory", where);
    if (n)
        memcpy(copy, text, n);
    copy[n] = '\0';
    if ((bad = find_bad_integer(copy, n)) != SIZE_MAX)
        ZARR_FAIL(ZARR_EMETA, "'%s': integer at byte %zu does not fit in 64 bits", where, bad);
    if (!(tok = json_tokener_new_ex(ZARR_JSON_DEPTH)))
        ZARR_FAIL(ZARR_ENOMEM, "'%s': out of memory", where);
    json_tokener_set_flags(tok, 0); /* non-strict: NaN, Infinity, -Infinity */
    j   = json_tokener_parse_ex(tok, copy, (int)n + 1);
    err = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    if (err != json_tokener_success)
        ZARR_FAIL(ZARR_EMETA, "'%s': invalid JSON at byte %zu: %s", where, end > n ? n : end,
                  json_tokener_error_desc(err));
    for (size_t i = end; i < n; i++)
        if (!isspace((unsigned char)copy[i]))
            ZARR_FAIL(ZARR_EMETA, "'%s': invalid JSON: unexpected characters after the document at byte %zu",
                      where, i);
    *out = j;
    j    = NULL;
done:
    json_object_put(j);
    if (tok)
        json_tokener_free(tok); /* json-c 0.16 does not accept NULL */
    free(copy);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * Printing
 * ------------------------------------------------------------------------------------------------ */
static int
put(zarr_buf *b, const char *s)
{
    return zarr_buf_append(b, s, strlen(s));
}

static int
put_indent(zarr_buf *b, int level)
{
    int rc = zarr_buf_append(b, "\n", 1);
    for (int i = 0; rc == ZARR_OK && i < level; i++)
        rc = zarr_buf_append(b, "  ", 2);
    return rc;
}

static int
put_string(zarr_buf *b, const char *s, size_t n)
{
    int rc = zarr_buf_append(b, "\"", 1);
    for (size_t i = 0; rc == ZARR_OK && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char          esc[8];
        switch (c) {
            case '"':
                rc = put(b, "\\\"");
                break;
            case '\\':
                rc = put(b, "\\\\");
                break;
            case '\n':
                rc = put(b, "\\n");
                break;
            case '\r':
                rc = put(b, "\\r");
                break;
            case '\t':
                rc = put(b, "\\t");
                break;
            case '\b':
                rc = put(b, "\\b");
                break;
            case '\f':
                rc = put(b, "\\f");
                break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    snprintf(esc, sizeof esc, "\\u%04x", c);
                    rc = put(b, esc);
                }
                else
                    rc = zarr_buf_append(b, &s[i], 1);
        }
    }
    if (rc == ZARR_OK)
        rc = zarr_buf_append(b, "\"", 1);
    return rc;
}

/* Shortest of %.15g/%.16g/%.17g that reads back to exactly `d`; integral values keep a ".0". */
static void
format_double(double d, char *s, size_t n)
{
    if (isnan(d)) {
        snprintf(s, n, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(s, n, d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(s, n, "%.*g", prec, d);
        if (strtod(s, NULL) == d)
            break;
    }
    if (!strpbrk(s, ".eEn")) {
        size_t l = strlen(s);
        if (l + 2 < n)
            memcpy(s + l, ".0", 3);
    }
}

static int
dump_rec(zarr_buf *b, struct json_object *j, int level)
{
    char tmp[64];
    int  rc = ZARR_OK;

    switch (j ? json_object_get_type(j) : json_type_null) {
        case json_type_null:
            return put(b, "null");
        case json_type_boolean:
            return put(b, json_object_get_boolean(j) ? "true" : "false");
        case json_type_int:
            if (zarr__json_is_negative_int(j))
                snprintf(tmp, sizeof tmp, "%lld", (long long)json_object_get_int64(j));
            else
                snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)json_object_get_uint64(j));
            return put(b, tmp);
        case json_type_double:
            format_double(json_object_get_double(j), tmp, sizeof tmp);
            return put(b, tmp);
        case json_type_string:
            return put_string(b, json_object_get_string(j), (size_t)json_object_get_string_len(j));
        case json_type_array: {
            size_t len = json_object_array_length(j);
            if (len == 0)
                return put(b, "[]");
            if ((rc = put(b, "[")) != ZARR_OK)
                return rc;
            for (size_t i = 0; i < len; i++) {
                if (i && (rc = put(b, ",")) != ZARR_OK)
                    return rc;
                if ((rc = put_indent(b, level + 1)) != ZARR_OK ||
                    (rc = dump_rec(b, json_object_array_get_idx(j, i), level + 1)) != ZARR_OK)
                    return rc;
            }
            if ((rc = put_indent(b, level)) != ZARR_OK)
                return rc;
            return put(b, "]");
        }
        case json_type_object: {
            bool first = true;
            if (json_object_object_length(j) == 0)
                return put(b, "{}");
            if ((rc = put(b, "{")) != ZARR_OK)
                return rc;
            json_object_object_foreach(j, key, val)
            {
                if (!first && (rc = put(b, ",")) != ZARR_OK)
                    return rc;
                first = false;
                if ((rc = put_indent(b, level + 1)) != ZARR_OK ||
                    (rc = put_string(b, key, strlen(key))) != ZARR_OK || (rc = put(b, ": ")) != ZARR_OK ||
                    (rc = dump_rec(b, val, level + 1)) != ZARR_OK)
                    return rc;
            }
            if ((rc = put_indent(b, level)) != ZARR_OK)
                return rc;
            return put(b, "}");
        }
    }
    return rc;
}

char *
zarr__json_dump(struct json_object *j)
{
    zarr_buf b = ZARR_BUF_INIT;
    if (dump_rec(&b, j, 0) != ZARR_OK || zarr_buf_append(&b, "", 1) != ZARR_OK) {
        zarr_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}

/* ------------------------------------------------------------------------------------------------
 * Numbers and comparison
 * ------------------------------------------------------------------------------------------------ */
bool
zarr__json_is_negative_int(struct json_object *j)
{
    return json_object_is_type(j, json_type_int) && json_object_get_int64(j) < 0;
}

bool
zarr__json_is_number(struct json_object *j)
{
    return json_object_is_type(j, json_type_int) || json_object_is_type(j, json_type_double);
}

bool
zarr__json_get_i64(struct json_object *j, int64_t *out)
{
    if (!json_object_is_type(j, json_type_int))
        return false;
    if (zarr__json_is_negative_int(j)) {
        *out = json_object_get_int64(j);
        return true;
    }
    uint64_t u = json_object_get_uint64(j);
    if (u > INT64_MAX)
        return false;
    *out = (int64_t)u;
    return true;
}

bool
zarr__json_get_u64(struct json_object *j, uint64_t *out)
{
    if (!json_object_is_type(j, json_type_int) || zarr__json_is_negative_int(j))
        return false;
    *out = json_object_get_uint64(j);
    return true;
}

bool
zarr__json_equal(struct json_object *a, struct json_object *b)
{
    json_type ta = a ? json_object_get_type(a) : json_type_null;
    json_type tb = b ? json_object_get_type(b) : json_type_null;

    if (zarr__json_is_number(a) && zarr__json_is_number(b)) {
        if (ta == json_type_int && tb == json_type_int) {
            if (zarr__json_is_negative_int(a) != zarr__json_is_negative_int(b))
                return false;
            if (zarr__json_is_negative_int(a))
                return json_object_get_int64(a) == json_object_get_int64(b);
            return json_object_get_uint64(a) == json_object_get_uint64(b);
        }
        double da = json_object_get_double(a), db = json_object_get_double(b);
        if (ta == json_type_int)
            da = zarr__json_is_negative_int(a) ? (double)json_object_get_int64(a)
                                               : (double)json_object_get_uint64(a);
        if (tb == json_type_int)
            db = zarr__json_is_negative_int(b) ? (double)json_object_get_int64(b)
                                               : (double)json_object_get_uint64(b);
        return da == db || (isnan(da) && isnan(db));
    }
    if (ta != tb)
        return false;
    switch (ta) {
        case json_type_null:
            return true;
        case json_type_boolean:
            return json_object_get_boolean(a) == json_object_get_boolean(b);
        case json_type_string:
            return json_object_get_string_len(a) == json_object_get_string_len(b) &&
                   memcmp(json_object_get_string(a), json_object_get_string(b),
                          (size_t)json_object_get_string_len(a)) == 0;
        case json_type_array: {
            size_t n = json_object_array_length(a);
            if (n != json_object_array_length(b))
                return false;
            for (size_t i = 0; i < n; i++)
                if (!zarr__json_equal(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i)))
                    return false;
            return true;
        }
        case json_type_object: {
            if (json_object_object_length(a) != json_object_object_length(b))
                return false;
            json_object_object_foreach(a, key, va)
            {
                struct json_object *vb;
                if (!json_object_object_get_ex(b, key, &vb) || !zarr__json_equal(va, vb))
                    return false;
            }
            return true;
        }
        default:
            return false;
    }
}

/* ------------------------------------------------------------------------------------------------
 * Getters
 * ------------------------------------------------------------------------------------------------ */
bool
zarr__json_has(struct json_object *obj, const char *key)
{
    return json_object_is_type(obj, json_type_object) && json_object_object_get_ex(obj, key, NULL);
}

int
zarr__json_get_key(struct json_object *obj, const char *key, json_type type, bool required, const char *where,
                   const char *what, struct json_object **out)
{
    struct json_object *v = NULL;

    *out = NULL;
    if (!json_object_is_type(obj, json_type_object))
        return zarr_error(ZARR_EMETA, "'%s': expected a JSON object", where);
    if (!json_object_object_get_ex(obj, key, &v)) {
        if (required)
            return zarr_error(ZARR_EMETA, "'%s': missing required key '%s'", where, key);
        return ZARR_OK;
    }
    if (type != json_type_null && !json_object_is_type(v, type))
        return zarr_error(ZARR_EMETA, "'%s': '%s' must be %s", where, key, what);
    *out = v;
    return ZARR_OK;
}

int
zarr__json_get_str(struct json_object *obj, const char *key, bool required, const char *where,
                   const char **out)
{
    struct json_object *v;
    int                 rc = zarr__json_get_key(obj, key, json_type_string, required, where, "a string", &v);
    *out                   = (rc == ZARR_OK && v) ? json_object_get_string(v) : NULL;
    return rc;
}

int
zarr__json_uint_list(struct json_object *list, const char *name, uint64_t min, const char *where,
                     uint64_t *vals, int max, int *n)
{
    const char *what = min ? "positive integers" : "non-negative integers";
    size_t      len;

    *n = 0;
    if (!json_object_is_type(list, json_type_array))
        return zarr_error(ZARR_EMETA, "'%s': '%s' must be a list of %s", where, name, what);
    len = json_object_array_length(list);
    if (len > (size_t)max)
        return zarr_error(ZARR_EMETA, "'%s': '%s' has %zu entries, more than the %d supported", where, name,
                          len, max);
    for (size_t i = 0; i < len; i++) {
        uint64_t v;
        if (!zarr__json_get_u64(json_object_array_get_idx(list, i), &v) || v < min)
            return zarr_error(ZARR_EMETA, "'%s': '%s' must be a list of %s", where, name, what);
        vals[i] = v;
    }
    *n = (int)len;
    return ZARR_OK;
}

int
zarr__json_get_uint_list(struct json_object *obj, const char *key, uint64_t min, const char *where,
                         uint64_t *vals, int max, int *n)
{
    struct json_object *v;
    int                 rc;

    *n = 0;
    if ((rc = zarr__json_get_key(obj, key, json_type_null, true, where, NULL, &v)) != ZARR_OK)
        return rc;
    return zarr__json_uint_list(v, key, min, where, vals, max, n);
}

struct json_object *
zarr__json_new_uint_list(const uint64_t *vals, int n)
{
    struct json_object *a = json_object_new_array_ext(n);
    if (!a)
        return NULL;
    for (int i = 0; i < n; i++) {
        struct json_object *v = json_object_new_uint64(vals[i]);
        if (!v || json_object_array_add(a, v) != 0) {
            json_object_put(v);
            json_object_put(a);
            return NULL;
        }
    }
    return a;
}

int
zarr__json_add(struct json_object *obj, const char *key, struct json_object *val)
{
    if (json_object_object_add(obj, key, val) != 0) {
        json_object_put(val);
        return zarr_error(ZARR_ENOMEM, "out of memory adding '%s' to a JSON object", key);
    }
    return ZARR_OK;
}
