/*
 * zarrcore: a small command-line front end to h5zarr's zarr core, used by the interop tests to read and
 * write stores through the core (and handy for looking at a store by hand).
 *
 *   zarrcore dump STORE PATH          prints the array at PATH as one JSON document:
 *       {"zarr_format", "shape", "chunks", "dtype" (the metadata's dtype JSON), "fill_value",
 *        "attrs", "dimension_names" (or null), "data": [flat C-order values]}
 *     Values: bool -> true/false; integers exact (int64/uint64, datetime/timedelta as int64);
 *     floats -> numbers, NaN/Infinity/-Infinity as strings; complex -> [re, im]; fixed bytes, raw and
 *     vlen bytes -> hex strings; fixed UTF-32 -> string (trailing NULs dropped, as numpy does);
 *     vlen strings -> strings; structs -> objects of fields (sub-array fields as flat lists).
 *   zarrcore write STORE PATH META DATA   creates the array at PATH from the metadata document in the
 *       file META (a v3 zarr.json, or a v2 {".zarray": {...}, ".zattrs": {...}} pair) and writes the
 *       whole array from DATA (a JSON file holding the flat C-order value list in dump's encoding).
 *       The metadata goes through the core's parser and writer, the data through the chunk engine.
 *   zarrcore group STORE PATH FORMAT [ATTRS]   creates a group (zarr format 2 or 3; ATTRS a JSON file).
 *   zarrcore consolidate STORE PATH   consolidates the hierarchy below PATH (v2 .zmetadata, v3 inline).
 *   zarrcore ls STORE PATH            prints the group's child nodes, one per line.
 * Exit status 0 on success; on failure the core's message goes to stderr and the status is 1.
 */
#define _POSIX_C_SOURCE 200809L

#include "h5zarr/zarr.h"
#include "h5zarr/zarr_consolidated.h"
#include "zjson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
die(const char *what)
{
    fprintf(stderr, "zarrcore: %s: %s\n", what, zarr_errmsg());
    return 1;
}

/* ---- half floats (read) ---- */
static double
half_to_double(uint16_t h)
{
    int      e = (h >> 10) & 0x1f;
    unsigned m = h & 0x3ff;
    double   v;
    if (e == 0)
        v = ldexp((double)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp((double)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

static uint16_t
double_to_half(double d)
{
    float    f = (float)d;
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    int      e    = (int)((x >> 23) & 0xff) - 127 + 15;
    uint32_t m    = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff)
        return sign | 0x7c00 | (m ? 0x200 : 0);
    if (e >= 31)
        return sign | 0x7c00;
    if (e <= 0) {
        if (e < -10)
            return sign;
        m |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t r     = m >> shift;
        if ((m >> (shift - 1)) & 1)
            r++;
        return sign | (uint16_t)r;
    }
    uint32_t r = ((uint32_t)e << 10) | (m >> 13);
    if (m & 0x1000)
        r++;
    return sign | (uint16_t)r;
}

static struct json_object *
num_json(double v)
{
    if (isnan(v))
        return json_object_new_string("NaN");
    if (isinf(v))
        return json_object_new_string(v > 0 ? "Infinity" : "-Infinity");
    return json_object_new_double(v);
}

static struct json_object *
hex_json(const uint8_t *p, size_t n)
{
    char *s = malloc(2 * n + 1), *q = s;
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++, q += 2)
        snprintf(q, 3, "%02x", p[i]);
    *q                    = '\0';
    struct json_object *j = json_object_new_string(s);
    free(s);
    return j;
}

static double
float_of(const zarr_dtype *t, const uint8_t *p)
{
    if (t->size == 2) {
        uint16_t h;
        memcpy(&h, p, 2);
        return half_to_double(h);
    }
    if (t->size == 4) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    double d;
    memcpy(&d, p, 8);
    return d;
}

/* One element (memory form) as JSON. */
static struct json_object *
elem_json(const zarr_dtype *t, const uint8_t *p)
{
    switch (t->kind) {
        case ZARR_BOOL:
            return json_object_new_boolean(p[0] != 0);
        case ZARR_INT:
        case ZARR_DATETIME:
        case ZARR_TIMEDELTA: {
            int64_t v = 0;
            switch (t->size) {
                case 1: {
                    int8_t x;
                    memcpy(&x, p, 1);
                    v = x;
                    break;
                }
                case 2: {
                    int16_t x;
                    memcpy(&x, p, 2);
                    v = x;
                    break;
                }
                case 4: {
                    int32_t x;
                    memcpy(&x, p, 4);
                    v = x;
                    break;
                }
                default:
                    memcpy(&v, p, 8);
            }
            return json_object_new_int64(v);
        }
        case ZARR_UINT: {
            uint64_t v = 0;
            switch (t->size) {
                case 1:
                    v = p[0];
                    break;
                case 2: {
                    uint16_t x;
                    memcpy(&x, p, 2);
                    v = x;
                    break;
                }
                case 4: {
                    uint32_t x;
                    memcpy(&x, p, 4);
                    v = x;
                    break;
                }
                default:
                    memcpy(&v, p, 8);
            }
            return json_object_new_uint64(v);
        }
        case ZARR_FLOAT:
            return num_json(float_of(t, p));
        case ZARR_COMPLEX: {
            zarr_dtype          half = *t;
            struct json_object *a    = json_object_new_array();
            half.kind                = ZARR_FLOAT;
            half.size                = t->size / 2;
            json_object_array_add(a, num_json(float_of(&half, p)));
            json_object_array_add(a, num_json(float_of(&half, p + half.size)));
            return a;
        }
        case ZARR_FIXED_BYTES:
        case ZARR_RAW:
            return hex_json(p, t->size);
        case ZARR_FIXED_UTF32: {
            size_t   n = t->size / 4, len = n;
            zarr_buf b = ZARR_BUF_INIT;
            while (len > 0) {
                uint32_t c;
                memcpy(&c, p + 4 * (len - 1), 4);
                if (c)
                    break;
                len--;
            }
            for (size_t i = 0; i < len; i++) {
                uint32_t c;
                uint8_t  u[4];
                size_t   k;
                memcpy(&c, p + 4 * i, 4);
                if (c < 0x80)
                    u[0] = (uint8_t)c, k = 1;
                else if (c < 0x800)
                    u[0] = (uint8_t)(0xc0 | c >> 6), u[1] = (uint8_t)(0x80 | (c & 0x3f)), k = 2;
                else if (c < 0x10000)
                    u[0] = (uint8_t)(0xe0 | c >> 12), u[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3f)),
                    u[2] = (uint8_t)(0x80 | (c & 0x3f)), k = 3;
                else
                    u[0] = (uint8_t)(0xf0 | c >> 18), u[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3f)),
                    u[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3f)), u[3] = (uint8_t)(0x80 | (c & 0x3f)), k = 4;
                zarr_buf_append(&b, u, k);
            }
            struct json_object *j =
                json_object_new_string_len(b.data ? (const char *)b.data : "", (int)b.size);
            zarr_buf_free(&b);
            return j;
        }
        case ZARR_VLEN_UTF8: {
            const char *s;
            memcpy(&s, p, sizeof s);
            return json_object_new_string(s ? s : "");
        }
        case ZARR_VLEN_BYTES: {
            zarr_vlen v;
            memcpy(&v, p, sizeof v);
            return hex_json(v.p, v.len);
        }
        case ZARR_STRUCT: {
            struct json_object *o = json_object_new_object();
            for (size_t i = 0; i < t->nfields; i++) {
                const zarr_field *f = &t->fields[i];
                if (f->ndim == 0)
                    json_object_object_add(o, f->name, elem_json(f->type, p + f->offset));
                else {
                    uint64_t            n = 1;
                    struct json_object *a = json_object_new_array();
                    for (int d = 0; d < f->ndim; d++)
                        n *= f->shape[d];
                    for (uint64_t k = 0; k < n; k++)
                        json_object_array_add(a, elem_json(f->type, p + f->offset + k * f->type->size));
                    json_object_object_add(o, f->name, a);
                }
            }
            return o;
        }
    }
    return NULL;
}

/* ---- JSON -> memory form (for write) ---- */
static int
hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static double
json_num(struct json_object *j)
{
    if (json_object_is_type(j, json_type_string)) {
        const char *s = json_object_get_string(j);
        if (!strcmp(s, "NaN"))
            return NAN;
        if (!strcmp(s, "Infinity"))
            return INFINITY;
        if (!strcmp(s, "-Infinity"))
            return -INFINITY;
        return strtod(s, NULL);
    }
    return json_object_get_double(j);
}

static int
store_float(size_t size, double v, uint8_t *p)
{
    if (size == 2) {
        uint16_t h = double_to_half(v);
        memcpy(p, &h, 2);
    }
    else if (size == 4) {
        float f = (float)v;
        memcpy(p, &f, 4);
    }
    else
        memcpy(p, &v, 8);
    return 0;
}

static int
elem_from_json(const zarr_dtype *t, struct json_object *j, uint8_t *p)
{
    switch (t->kind) {
        case ZARR_BOOL:
            p[0] = json_object_get_boolean(j) ? 1 : 0;
            return 0;
        case ZARR_INT:
        case ZARR_DATETIME:
        case ZARR_TIMEDELTA:
        case ZARR_UINT: {
            uint64_t u;
            int64_t  s;
            if (t->kind == ZARR_UINT && zarr__json_get_u64(j, &u))
                ;
            else if (zarr__json_get_i64(j, &s))
                u = (uint64_t)s;
            else {
                fprintf(stderr, "zarrcore: not an integer: %s\n", json_object_to_json_string(j));
                return 1;
            }
            /* little- or big-endian host: copy the low bytes */
            switch (t->size) {
                case 1: {
                    uint8_t x = (uint8_t)u;
                    memcpy(p, &x, 1);
                    break;
                }
                case 2: {
                    uint16_t x = (uint16_t)u;
                    memcpy(p, &x, 2);
                    break;
                }
                case 4: {
                    uint32_t x = (uint32_t)u;
                    memcpy(p, &x, 4);
                    break;
                }
                default:
                    memcpy(p, &u, 8);
            }
            return 0;
        }
        case ZARR_FLOAT:
            return store_float(t->size, json_num(j), p);
        case ZARR_COMPLEX:
            if (!json_object_is_type(j, json_type_array) || json_object_array_length(j) != 2)
                return 1;
            store_float(t->size / 2, json_num(json_object_array_get_idx(j, 0)), p);
            return store_float(t->size / 2, json_num(json_object_array_get_idx(j, 1)), p + t->size / 2);
        case ZARR_FIXED_BYTES:
        case ZARR_RAW:
        case ZARR_VLEN_BYTES: {
            const char *s = json_object_get_string(j);
            size_t      n = strlen(s) / 2;
            uint8_t    *dst;
            if (t->kind == ZARR_VLEN_BYTES) {
                zarr_vlen v = {n, n ? malloc(n) : NULL};
                memcpy(p, &v, sizeof v);
                dst = v.p;
            }
            else {
                memset(p, 0, t->size);
                if (n > t->size)
                    n = t->size;
                dst = p;
            }
            for (size_t i = 0; i < n; i++)
                dst[i] = (uint8_t)(hexval(s[2 * i]) << 4 | hexval(s[2 * i + 1]));
            return 0;
        }
        case ZARR_FIXED_UTF32: {
            const uint8_t *s = (const uint8_t *)json_object_get_string(j);
            size_t         n = 0, cap = t->size / 4;
            memset(p, 0, t->size);
            while (*s && n < cap) {
                uint32_t c;
                if (*s < 0x80)
                    c = *s++;
                else if ((*s & 0xe0) == 0xc0)
                    c = (uint32_t)(*s & 0x1f) << 6 | (s[1] & 0x3f), s += 2;
                else if ((*s & 0xf0) == 0xe0)
                    c = (uint32_t)(*s & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f), s += 3;
                else
                    c = (uint32_t)(*s & 0x07) << 18 | (uint32_t)(s[1] & 0x3f) << 12 |
                        (uint32_t)(s[2] & 0x3f) << 6 | (s[3] & 0x3f),
                    s += 4;
                memcpy(p + 4 * n++, &c, 4);
            }
            return 0;
        }
        case ZARR_VLEN_UTF8: {
            char *s = strdup(json_object_get_string(j));
            memcpy(p, &s, sizeof s);
            return 0;
        }
        case ZARR_STRUCT:
            memset(p, 0, t->size);
            for (size_t i = 0; i < t->nfields; i++) {
                const zarr_field   *f = &t->fields[i];
                struct json_object *v = json_object_object_get(j, f->name);
                if (!v)
                    return 1;
                if (f->ndim == 0) {
                    if (elem_from_json(f->type, v, p + f->offset))
                        return 1;
                }
                else
                    for (size_t k = 0; k < json_object_array_length(v); k++)
                        if (elem_from_json(f->type, json_object_array_get_idx(v, k),
                                           p + f->offset + k * f->type->size))
                            return 1;
            }
            return 0;
    }
    return 1;
}

static int
read_file(const char *path, zarr_buf *b)
{
    FILE  *f = fopen(path, "rb");
    char   tmp[65536];
    size_t n;
    if (!f) {
        perror(path);
        return 1;
    }
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        zarr_buf_append(b, tmp, n);
    fclose(f);
    return 0;
}

static int
cmd_dump(zarr_store *s, const char *path)
{
    zarr_array            *a = NULL;
    const zarr_array_meta *m;
    zarr_region            r;
    uint8_t               *buf = NULL;
    uint64_t               n;
    struct json_object    *o = NULL, *data, *v = NULL;
    int                    rc = 1;

    if (zarr_array_open(s, path, &a) != ZARR_OK)
        return die(path);
    m = zarr_array_meta_get(a);
    zarr_region_all(m, &r);
    n = zarr_region_nelem(m->ndim, &r);
    if (!(buf = calloc(n ? n : 1, m->dtype->size))) {
        fprintf(stderr, "zarrcore: out of memory\n");
        goto done;
    }
    if (zarr_array_read(a, &r, buf) != ZARR_OK) {
        rc = die(path);
        goto done;
    }
    o = json_object_new_object();
    json_object_object_add(o, "zarr_format", json_object_new_int(m->zarr_format));
    json_object_object_add(o, "shape", zarr__json_new_uint_list(m->shape, m->ndim));
    json_object_object_add(o, "chunks", zarr__json_new_uint_list(m->chunks, m->ndim));
    if ((m->zarr_format == 3 ? zarr_dtype_to_v3_json(m->dtype, &v) : zarr_dtype_to_v2_json(m->dtype, &v)) !=
        ZARR_OK) {
        rc = die("dtype");
        goto done;
    }
    json_object_object_add(o, "dtype", v);
    v = NULL;
    if (zarr_fill_to_json(m->dtype, m->zarr_format, m->fill, m->fill_defined, &v) == ZARR_OK)
        json_object_object_add(o, "fill_value", v);
    json_object_object_add(o, "attrs", json_object_get(m->attributes));
    if (m->has_dimension_names) {
        struct json_object *dn = json_object_new_array();
        for (int d = 0; d < m->ndim; d++)
            json_object_array_add(dn, m->dimension_names[d] ? json_object_new_string(m->dimension_names[d])
                                                            : NULL);
        json_object_object_add(o, "dimension_names", dn);
    }
    else
        json_object_object_add(o, "dimension_names", NULL);
    data = json_object_new_array_ext((int)n);
    for (uint64_t i = 0; i < n; i++)
        json_object_array_add(data, elem_json(m->dtype, buf + i * m->dtype->size));
    json_object_object_add(o, "data", data);
    fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), stdout);
    fputc('\n', stdout);
    rc = 0;
done:
    if (buf && zarr_dtype_has_vlen(m->dtype))
        zarr_dtype_clear_elems(m->dtype, buf, n);
    free(buf);
    json_object_put(o);
    zarr_array_close(a);
    return rc;
}

static int
cmd_write(zarr_store *s, const char *path, const char *metafile, const char *datafile)
{
    zarr_buf            mb = ZARR_BUF_INIT, db = ZARR_BUF_INIT;
    struct json_object *mj = NULL, *dj = NULL, *za, *zat;
    zarr_array_meta    *m = NULL;
    zarr_array         *a = NULL;
    zarr_region         r;
    uint8_t            *buf = NULL;
    uint64_t            n   = 0;
    int                 rc  = 1;
    char               *t1 = NULL, *t2 = NULL;

    if (read_file(metafile, &mb) || read_file(datafile, &db))
        goto done;
    if (zarr__json_parse((const char *)mb.data, mb.size, metafile, &mj) != ZARR_OK ||
        zarr__json_parse((const char *)db.data, db.size, datafile, &dj) != ZARR_OK) {
        rc = die("parse");
        goto done;
    }
    if (json_object_object_get_ex(mj, ".zarray", &za)) {
        t1 = strdup(json_object_to_json_string(za));
        t2 = json_object_object_get_ex(mj, ".zattrs", &zat) ? strdup(json_object_to_json_string(zat)) : NULL;
        if (zarr_array_meta_parse_v2(t1, strlen(t1), t2, t2 ? strlen(t2) : 0, metafile, &m) != ZARR_OK) {
            rc = die(metafile);
            goto done;
        }
    }
    else if (zarr_array_meta_parse_v3((const char *)mb.data, mb.size, metafile, &m) != ZARR_OK) {
        rc = die(metafile);
        goto done;
    }
    if (zarr_array_create(s, path, m, true, &a) != ZARR_OK) {
        m  = NULL;
        rc = die(path);
        goto done;
    }
    m                         = NULL;
    const zarr_array_meta *am = zarr_array_meta_get(a);
    zarr_region_all(am, &r);
    n = zarr_region_nelem(am->ndim, &r);
    if (!json_object_is_type(dj, json_type_array) || json_object_array_length(dj) != n) {
        fprintf(stderr, "zarrcore: %s must hold a list of %llu values\n", datafile, (unsigned long long)n);
        goto done;
    }
    if (!(buf = calloc(n ? n : 1, am->dtype->size)))
        goto done;
    for (uint64_t i = 0; i < n; i++)
        if (elem_from_json(am->dtype, json_object_array_get_idx(dj, i), buf + i * am->dtype->size)) {
            fprintf(stderr, "zarrcore: bad value %llu in %s\n", (unsigned long long)i, datafile);
            goto done;
        }
    if (zarr_array_write(a, &r, buf) != ZARR_OK) {
        rc = die(path);
        goto done;
    }
    rc = 0;
done:
    if (buf && a && zarr_dtype_has_vlen(zarr_array_meta_get(a)->dtype))
        zarr_dtype_clear_elems(zarr_array_meta_get(a)->dtype, buf, n);
    free(buf);
    free(t1);
    free(t2);
    zarr_array_meta_free(m);
    zarr_array_close(a);
    json_object_put(mj);
    json_object_put(dj);
    zarr_buf_free(&mb);
    zarr_buf_free(&db);
    return rc;
}

static int
cmd_group(zarr_store *s, const char *path, int format, const char *attrfile)
{
    zarr_group_meta *g  = NULL;
    zarr_buf         b  = ZARR_BUF_INIT;
    int              rc = 1;
    if (zarr_group_meta_new(format, &g) != ZARR_OK)
        return die("group");
    if (attrfile) {
        struct json_object *j = NULL;
        if (read_file(attrfile, &b) ||
            zarr__json_parse((const char *)b.data, b.size, attrfile, &j) != ZARR_OK)
            goto done;
        json_object_put(g->attributes);
        g->attributes = j;
    }
    if (zarr_group_write(s, path, g) != ZARR_OK) {
        rc = die(path);
        goto done;
    }
    rc = 0;
done:
    zarr_buf_free(&b);
    zarr_group_meta_free(g);
    return rc;
}

static int
print_child(const char *name, bool is_dir, void *ud)
{
    printf("%s\n", name);
    return 0;
}

int
main(int argc, char **argv)
{
    zarr_store *s  = NULL;
    int         rc = 2;
    if (argc < 4) {
        fprintf(stderr, "usage: zarrcore dump|write|group|consolidate|ls STORE PATH [...]\n");
        return 2;
    }
    const char *cmd = argv[1], *path = strcmp(argv[3], "/") == 0 ? "" : argv[3] + (argv[3][0] == '/');
    bool        w = strcmp(cmd, "dump") != 0 && strcmp(cmd, "ls") != 0;
    if (zarr_store_open(argv[2], w ? ZARR_STORE_CREATE | ZARR_STORE_RDWR : ZARR_STORE_RDONLY, &s) != ZARR_OK)
        return die(argv[2]);
    if (!strcmp(cmd, "dump"))
        rc = cmd_dump(s, path);
    else if (!strcmp(cmd, "write") && argc == 6)
        rc = cmd_write(s, path, argv[4], argv[5]);
    else if (!strcmp(cmd, "group") && (argc == 5 || argc == 6))
        rc = cmd_group(s, path, atoi(argv[4]), argc == 6 ? argv[5] : NULL);
    else if (!strcmp(cmd, "consolidate"))
        rc = zarr_consolidate(s, path) == ZARR_OK ? 0 : die(path);
    else if (!strcmp(cmd, "ls"))
        rc = zarr_group_children(s, path, print_child, NULL) == ZARR_OK ? 0 : die(path);
    else
        fprintf(stderr, "zarrcore: unknown command or wrong arguments: %s\n", cmd);
    if (zarr_store_flush(s) != ZARR_OK && rc == 0)
        rc = die("flush");
    zarr_store_close(s);
    return rc;
}
