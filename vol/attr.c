/*
 * attr.c: HDF5 attributes as zarr attributes.
 *
 * An attribute's value is stored as natural JSON in the node's `attributes` (numbers, strings, bools,
 * lists, nested lists for N-D), so zarr-python, xarray and zarrita see ordinary attributes. What JSON
 * cannot say is kept per attribute in the reserved object (docs/FORMAT.md):
 *     "_h5zarr": {"attrs": {"units": {"type": "<H5Tencode, base64>", "shape": [2]}, ...}}
 * "type" is present when the HDF5 type differs from the type a plain JSON value implies (int64,
 * float64, UTF-8 string, bool); "shape" when the dataspace is not what the JSON implies; "raw" (base64
 * of the memory-form bytes) when the value has no natural JSON form (compound, opaque...), in which
 * case the natural value is null. Creation order is the key order of "attrs"; attributes written by
 * other tools (no record) follow in their JSON order with types inferred from their values. Non-finite
 * floats are stored as the strings "NaN", "Infinity", "-Infinity" (zarr's fill-value convention), so
 * every JSON reader can parse the document.
 *
 * HDF5's and netCDF's bookkeeping (dimension-scale attributes, _Netcdf4*, _NCProperties, _nc3_strict) is
 * no zarr attribute: its natural values live in "_h5zarr": {"hidden": {...}} (records as for the
 * others), so zarr readers see plain attributes and dimension names while HDF5 callers see every
 * attribute as written. On arrays `_ARRAY_DIMENSIONS` is zarr's dimension metadata, never an HDF5
 * attribute (dims.c writes it).
 */
#include "h5zv.h"
#include "reserved.h"

#include <json-c/json.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- records and inference --------------------------------------------------------------------- */
static struct json_object *
attr_records(h5zv_node *n, bool create)
{
    struct json_object *m = h5zv_node_meta(n, create), *a = NULL;
    if (!m)
        return NULL;
    if (!json_object_object_get_ex(m, "attrs", &a) && create) {
        a = json_object_new_object();
        json_object_object_add(m, "attrs", a);
    }
    return a;
}

/* The record of attribute `name`: an object, or (compact form, docs/FORMAT.md) a string, the type of a
 * scalar attribute with nothing else recorded. Lookups of other keys on a compact record find nothing. */
static struct json_object *
attr_record(h5zv_node *n, const char *name)
{
    struct json_object *a = attr_records(n, false), *r = NULL;
    if (a)
        json_object_object_get_ex(a, name, &r);
    return r;
}

static bool
rec_is_compact(struct json_object *rec)
{
    return rec && json_object_is_type(rec, json_type_string);
}

/* The record as an object, for editing (a compact record is expanded in place). */
static struct json_object *
attr_record_obj(h5zv_node *n, const char *name)
{
    struct json_object *r = attr_record(n, name), *o;
    if (!rec_is_compact(r))
        return r;
    o = json_object_new_object();
    json_object_object_add(o, "type", json_object_get(r));
    json_object_object_add(o, "shape", json_object_new_array());
    json_object_object_add(attr_records(n, false), name, o); /* replaces the string */
    return o;
}

/* Stores {"type": T, "shape": []} with nothing else as the string T: a third of the objects of a
 * W4 dataset's .zattrs, which every reader of the node parses and frees. */
static void
record_compact(struct json_object *recs, const char *name, struct json_object *r)
{
    struct json_object *t, *sh;
    if (!recs || !json_object_is_type(r, json_type_object) || json_object_object_length(r) != 2 ||
        !json_object_object_get_ex(r, "type", &t) || !json_object_is_type(t, json_type_string) ||
        !json_object_object_get_ex(r, "shape", &sh) || !json_object_is_type(sh, json_type_array) ||
        json_object_array_length(sh) != 0)
        return;
    json_object_object_add(recs, name, json_object_get(t)); /* replaces (and frees) the object */
}

static void
attr_record_compact(h5zv_node *n, const char *name)
{
    struct json_object *recs = attr_records(n, false), *r = NULL;
    if (recs && json_object_object_get_ex(recs, name, &r))
        record_compact(recs, name, r);
}

/* An attribute's type as recorded (vol/reserved.h: a short name for the predefined types most
 * attributes have, which the compact record can be). */
static struct json_object *
attr_type_json(hid_t type_id)
{
    struct json_object *j = NULL;
    return h5zv_type_to_json(type_id, &j) < 0 ? NULL : j;
}

/* The type recorded in `tv` (the compact record itself, or a record's "type") of attribute `name` of `n`,
 * as h5zv_type_keep gives it (release with h5zv_type_release); negative with an error pushed. Records in
 * the earlier form (base64 of H5Tencode) are refused (converted at load when legacy_reserved=1). */
static hid_t
attr_type_read(h5zv_node *n, const char *name, struct json_object *tv, bool compact)
{
    h5zv_jpath w;
    hid_t      t = H5I_INVALID_HID;
    if ((t = h5zv_type_named_std(tv)) >= 0)
        return t; /* a predefined integer or float by its short name: the library's id, no copy */
    /* where the record is, for the messages of what follows (made only here: most types are above) */
    h5zv_meta_where(&w, n, "attrs");
    snprintf(w.s + strlen(w.s), sizeof w.s - strlen(w.s), ".%s%s", name, compact ? "" : ".type");
    if (h5zv_reserved_legacy(tv)) {
        /* the earlier form (H5Tencode): not decoded (vol/reserved_legacy.c converts it when allowed) */
        H5ZV_LEGACY_REFUSE(w.s, "H5Tencode");
        return H5I_INVALID_HID;
    }
    if (h5zv_type_from_json(tv, w.s, &t) < 0)
        return H5I_INVALID_HID;
    return h5zv_type_keep(t);
}

/* ---- the hidden set: HDF5/netCDF bookkeeping kept out of the zarr attributes (docs/FORMAT.md) ---- */
#define ATTR_DIMS_KEY "_ARRAY_DIMENSIONS"

static struct json_object *
attr_hidden(h5zv_node *n, bool create)
{
    struct json_object *m = h5zv_node_meta(n, create), *h = NULL;
    if (!m)
        return NULL;
    if ((!json_object_object_get_ex(m, "hidden", &h) || !json_object_is_type(h, json_type_object)) &&
        create) {
        h = json_object_new_object();
        json_object_object_add(m, "hidden", h);
    }
    return h && json_object_is_type(h, json_type_object) ? h : NULL;
}

/* Names whose values are always bookkeeping: dimension-scale links and netCDF-4's own attributes (a name
 * is told by its first letter before a compare: most names set are none of these, W4). */
static bool
attr_always_hidden(const char *name)
{
    static const char *const names[] = {"DIMENSION_LIST",
                                        "REFERENCE_LIST",
                                        "_Netcdf4Coordinates",
                                        "_Netcdf4Dimid",
                                        "_NCProperties",
                                        "_nc3_strict",
                                        NULL};
    for (int i = 0; names[i]; i++)
        if (name[0] == names[i][0] && !strcmp(name, names[i]))
            return true;
    return false;
}

static bool
json_is_str(struct json_object *v, const char *s)
{
    return v && json_object_is_type(v, json_type_string) && !strcmp(json_object_get_string(v), s);
}

/* Whether attribute `name` with natural value `val` (NULL: not written yet) is kept hidden: the always
 * hidden names; CLASS when it says DIMENSION_SCALE (or before its first write); NAME on a dimension
 * scale (H5DSset_scale writes CLASS first), or before its first write on an array. */
static bool
attr_hides(h5zv_node *n, const char *name, struct json_object *val)
{
    struct json_object *h;
    if (attr_always_hidden(name))
        return true;
    if (!strcmp(name, "CLASS"))
        return val ? json_is_str(val, "DIMENSION_SCALE") : n->type == ZARR_NODE_ARRAY;
    if (!strcmp(name, "NAME")) {
        if (!val)
            return n->type == ZARR_NODE_ARRAY;
        h                     = attr_hidden(n, false);
        struct json_object *c = NULL;
        return h && json_object_object_get_ex(h, "CLASS", &c) && json_is_str(c, "DIMENSION_SCALE");
    }
    return false;
}

/* A plain zarr attribute that is no HDF5 attribute: the reserved key, and dimension names on arrays. */
static bool
attr_not_hdf5(h5zv_node *n, const char *key)
{
    return !strcmp(key, H5ZV_META_KEY) || (n->type == ZARR_NODE_ARRAY && !strcmp(key, ATTR_DIMS_KEY));
}

/* attr_value_get with the node's hidden values `h` (NULL: none) already looked up, and its attributes
 * `attrs` too (NULL: looked up here, only when needed). */
static bool
value_in(h5zv_node *n, struct json_object *h, struct json_object *attrs, const char *name,
         struct json_object **v)
{
    *v = NULL;
    if (h && json_object_object_get_ex(h, name, v))
        return true;
    if (attr_not_hdf5(n, name))
        return false;
    return json_object_object_get_ex(attrs ? attrs : h5zv_node_attrs(n), name, v);
}

/* The natural value of `name` (borrowed) and whether there is one (hidden values first). */
static bool
attr_value_get(h5zv_node *n, const char *name, struct json_object **v)
{
    return value_in(n, attr_hidden(n, false), NULL, name, v);
}

/* Stores the natural value of `name` (takes `val`, may be NULL) where attr_hides says, as the last
 * member of that object (an earlier value of it removed, from either place). A value that is the last
 * member already (an H5Awrite after its H5Acreate) is replaced where it is, which leaves the same order:
 * one lookup instead of a delete and an insert (bench/README.md "2026-12-07 evening: creates"). */
static void
attr_value_set(h5zv_node *n, const char *name, struct json_object *val)
{
    struct json_object *h = attr_hidden(n, false), *attrs = h5zv_node_attrs(n), *dst;
    struct lh_table    *t;
    struct lh_entry    *e;

    dst = attr_hides(n, name, val) ? (h ? h : attr_hidden(n, true)) : attrs;
    if (!dst) { /* out of memory making the hidden object: dropped, as json_object_object_add would */
        json_object_put(val);
        return;
    }
    if (h && h != dst)
        json_object_object_del(h, name);
    if (attrs != dst)
        json_object_object_del(attrs, name);
    t = json_object_get_object(dst);
    e = lh_table_lookup_entry(t, name);
    if (e && e == t->tail) {
        json_object_object_add(dst, name, val); /* replaced in place */
        return;
    }
    if (e)
        json_object_object_del(dst, name);
    json_object_object_add_ex(dst, name, val, JSON_C_OBJECT_ADD_KEY_IS_NEW);
}

static void
attr_value_del(h5zv_node *n, const char *name)
{
    struct json_object *h = attr_hidden(n, false);
    if (h)
        json_object_object_del(h, name);
    json_object_object_del(h5zv_node_attrs(n), name);
}

struct json_object *
h5zv_attr_value(h5zv_node *n, const char *name)
{
    struct json_object *v = NULL;
    return attr_value_get(n, name, &v) ? v : NULL;
}

struct json_object *
h5zv_attr_packed(h5zv_node *n, const char *name)
{
    struct json_object *rec = attr_record(n, name), *p = NULL;
    if (!rec || rec_is_compact(rec) || !json_object_object_get_ex(rec, "packed", &p) ||
        !json_object_is_type(p, json_type_array))
        return NULL;
    return p;
}

/* The natural value of a plain reference attribute (paths, nested lists for N-D) with the paths at or
 * below `from` moved below `to`: a new value, or NULL when none moved. */
static struct json_object *
moved_paths(struct json_object *v, const char *from, const char *to, bool *any)
{
    if (json_object_is_type(v, json_type_array)) {
        struct json_object *l = json_object_new_array();
        for (size_t i = 0; l && i < json_object_array_length(v); i++) {
            struct json_object *e = json_object_array_get_idx(v, i), *m = moved_paths(e, from, to, any);
            json_object_array_add(l, m ? m : json_object_get(e));
        }
        return l;
    }
    if (json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v), *rel = s + (s[0] == '/');
        size_t      fl = strlen(from);
        if (!strncmp(rel, from, fl) && (rel[fl] == '\0' || rel[fl] == '/')) {
            char               *p = malloc(strlen(to) + strlen(rel + fl) + 2);
            struct json_object *r;
            if (!p)
                return NULL;
            sprintf(p, "/%s%s", to, rel + fl);
            r = json_object_new_string(p);
            free(p);
            *any = true;
            return r;
        }
    }
    return json_object_get(v);
}

/* The bytes of packed element `s` (a base64 string of a `packed` list), decoded once and kept on the JSON
 * string itself (json-c userdata, freed with it): a run of renames asks every attribute of the file once
 * per move. An element is never edited in place (a rewritten one is a new string), so what is kept stays
 * true. NULL when `s` does not decode (or out of memory). */
typedef struct elem_bytes {
    size_t        len;
    unsigned char p[];
} elem_bytes;

static void
elem_bytes_free(struct json_object *s, void *ud)
{
    (void)s;
    free(ud);
}

static const elem_bytes *
packed_elem_bytes(struct json_object *s)
{
    elem_bytes *e = json_object_get_userdata(s);
    size_t      len;
    void       *p;
    if (e)
        return e;
    if (!json_object_is_type(s, json_type_string) || !(p = h5zv_b64_decode(json_object_get_string(s), &len)))
        return NULL;
    if ((e = malloc(sizeof *e + len))) {
        e->len = len;
        memcpy(e->p, p, len);
        json_object_set_userdata(s, e, elem_bytes_free);
    }
    free(p);
    return e;
}

/* Whether the packed bytes `p[0..len)` may hold a reference to `path` or below it. A reference is packed as
 * its length (8 bytes, little-endian) and its path, "/" first (docs/FORMAT.md "Object references"): only an
 * occurrence of `path` after such a length and slash, ending the path or followed by '/', is one (a
 * variable-length string of the same form counts too: the full pass decides). */
static bool
bytes_mention(const unsigned char *p, size_t len, const char *path, size_t pl)
{
    for (const unsigned char *q = p; pl && (q = memmem(q, len - (size_t)(q - p), path, pl)); q++) {
        size_t   at = (size_t)(q - p), slash = at && q[-1] == '/' ? 1 : 0;
        uint64_t n;
        if (at < 8 + slash)
            continue;
        n = h5zv_le64(q - (ptrdiff_t)slash - 8);
        if (n < slash + pl || n > len - at + slash)
            continue;
        if (n == slash + pl || q[pl] == '/')
            return true;
    }
    return false;
}

/* Whether a packed element of `packed` holds a reference to `path` or below (bytes_mention): an attribute
 * with none has nothing to move and its type is never built (a run of renames visits every attribute of
 * the file once per move). An element that does not decode counts as a hit: the full pass reports it. */
static bool
packed_mentions(struct json_object *packed, const char *path)
{
    size_t pl = strlen(path);
    for (size_t i = 0; i < json_object_array_length(packed); i++) {
        const elem_bytes *e = packed_elem_bytes(json_object_array_get_idx(packed, i));
        if (!e || bytes_mention(e->p, e->len, path, pl))
            return true;
    }
    return false;
}

/* Every string the packed bytes `p[0..len)` may hold as a reference: at each offset, an 8-byte LE length
 * that fits the bytes left, and the bytes it counts, without a leading '/' and cut at a NUL; fn(s, sl, ud)
 * for each non-empty one. A superset of bytes_mention: whenever bytes_mention(p, len, path) holds, one
 * of them is `path` or begins with `path` + '/' (vol/refidx.c files its holder under them). */
static void
bytes_paths(const unsigned char *p, size_t len, h5zv_ref_target_fn fn, void *ud)
{
    for (size_t i = 0; len > 8 && i < len - 8; i++) {
        uint64_t             n = h5zv_le64(p + i);
        const unsigned char *s = p + i + 8, *z;
        size_t               sl;
        if (n == 0 || n > len - i - 8)
            continue;
        sl = (size_t)n;
        if (s[0] == '/') {
            s++;
            sl--;
        }
        if ((z = memchr(s, 0, sl)))
            sl = (size_t)(z - s);
        if (sl)
            fn((const char *)s, sl, ud);
    }
}

void
h5zv_attrs_ref_targets(h5zv_node *n, h5zv_ref_target_fn fn, void *ud)
{
    struct json_object *recs = attr_records(n, false);
    if (!recs)
        return;
    json_object_object_foreach(recs, name, rec)
    {
        struct json_object *packed;
        (void)name;
        /* what h5zv_attrs_move_refs looks at (whatever the type: a superset) */
        if (rec_is_compact(rec) || !json_object_object_get_ex(rec, "packed", &packed) ||
            !json_object_is_type(packed, json_type_array))
            continue;
        for (size_t i = 0; i < json_object_array_length(packed); i++) {
            const elem_bytes *e = packed_elem_bytes(json_object_array_get_idx(packed, i));
            if (!e)
                fn(NULL, 0, ud); /* packed_mentions counts it a hit for every path */
            else
                bytes_paths(e->p, e->len, fn, ud);
        }
    }
}

int
h5zv_attrs_move_refs(h5zv_node *n, const char *from, const char *to)
{
    struct json_object *recs = attr_records(n, false);
    int                 ret  = 0;
    size_t              fl   = strlen(from);
    if (!recs)
        return 0;
    json_object_object_foreach(recs, name, rec)
    {
        struct json_object *packed, *tv;
        hid_t               t;
        h5zv_enc_plan      *plan = NULL;
        bool                refs;
        if (rec_is_compact(rec) || !json_object_object_get_ex(rec, "packed", &packed) ||
            !json_object_is_type(packed, json_type_array) || !json_object_object_get_ex(rec, "type", &tv) ||
            !packed_mentions(packed, from))
            continue;
        if ((t = attr_type_read(n, name, tv, false)) < 0)
            return -1;
        refs = H5Tdetect_class(t, H5T_REFERENCE) > 0;
        if (refs && !(plan = h5zv_enc_plan_new(t))) {
            h5zv_type_release(t);
            h5zv_err_push(__func__, __LINE__, "can't read the type of attribute '%s'", name);
            return -1;
        }
        for (size_t i = 0; refs && i < json_object_array_length(packed); i++) {
            const elem_bytes *eb = packed_elem_bytes(json_object_array_get_idx(packed, i));
            zarr_vlen         e = {0}, moved = {0};
            char             *b64;
            int               rc;
            /* an element that does not mention `from` (as packed_mentions asks of the attribute) holds no
             * reference to move: not decoded (a REFERENCE_LIST of every variable on a dimension changes one
             * element per move) */
            if (!eb || !bytes_mention(eb->p, eb->len, from, fl))
                continue;
            e.p   = (void *)eb->p;
            e.len = eb->len;
            rc    = h5zv_enc_move_refs(plan, &e, from, to, &moved);
            /* an element that doesn't match its type names no object: it is left as it is (reading the
             * attribute reports it), and the move goes on, as HDF5 moves whatever other objects hold */
            if (rc <= 0)
                continue;
            b64 = h5zv_b64_encode(moved.p, moved.len);
            free(moved.p);
            if (!b64) {
                h5zv_err_push(__func__, __LINE__, "out of memory");
                ret = -1;
                break;
            }
            json_object_array_put_idx(packed, i, json_object_new_string(b64));
            free(b64);
            h5zv_node_mark_dirty(n);
        }
        if (ret == 0 && refs && H5Tget_class(t) == H5T_REFERENCE) {
            struct json_object *v   = NULL, *m;
            bool                any = false;
            if (attr_value_get(n, name, &v) && v && (m = moved_paths(v, from, to, &any))) {
                if (any)
                    attr_value_set(n, name, m);
                else
                    json_object_put(m);
            }
        }
        h5zv_enc_plan_free(plan);
        plan = NULL;
        h5zv_type_release(t);
        if (ret < 0)
            break;
    }
    return ret;
}

/* netCDF's _FillValue on a dataset: zarr's fill_value follows it (vol/dataset.c). -1 with an error
 * pushed. */
static int
attr_fill_touch(h5zv_file *f, h5zv_node *n, const char *name)
{
    if (n->type != ZARR_NODE_ARRAY || strcmp(name, "_FillValue") != 0)
        return 0;
    return h5zv_dataset_fill_follow(f, n);
}

/* Attributes whose changes move dimension names: dimension-scale links and a scale's identity. */
static void
attr_dims_touch(h5zv_file *f, h5zv_node *n, const char *name)
{
    if (n->type == ZARR_NODE_ARRAY &&
        (!strcmp(name, "DIMENSION_LIST") || !strcmp(name, "CLASS") || !strcmp(name, "NAME") ||
         !strcmp(name, "REFERENCE_LIST") || !strcmp(name, "_Netcdf4Coordinates") ||
         !strcmp(name, "_Netcdf4Dimid")))
        h5zv_dims_touch(f, n->path);
}

static bool
attr_exists(h5zv_node *n, const char *name)
{
    struct json_object *v;
    return strcmp(name, H5ZV_META_KEY) != 0 && attr_value_get(n, name, &v);
}

/* Names in creation order: recorded ones first, then foreign ones in JSON order. */
static char **
attr_names(h5zv_node *n, size_t *count)
{
    struct json_object *attrs = h5zv_node_attrs(n), *recs = attr_records(n, false);
    struct json_object *hid = attr_hidden(n, false);
    size_t              cap = (size_t)json_object_object_length(attrs) +
                 (hid ? (size_t)json_object_object_length(hid) : 0) + 1,
           k     = 0;
    char **names = calloc(cap, sizeof *names);
    if (!names)
        return NULL;
    if (recs) {
        json_object_object_foreach(recs, key, val)
        {
            struct json_object *v;
            (void)val;
            /* attr_exists, with the node's objects looked up once for the list */
            if (strcmp(key, H5ZV_META_KEY) != 0 && value_in(n, hid, attrs, key, &v) && k < cap)
                names[k++] = strdup(key);
        }
    }
    json_object_object_foreach(attrs, key2, val2)
    {
        (void)val2;
        if (attr_not_hdf5(n, key2) || (recs && json_object_object_get_ex(recs, key2, NULL)))
            continue;
        if (k < cap)
            names[k++] = strdup(key2);
    }
    *count = k;
    return names;
}

static void
names_free(char **names, size_t n)
{
    if (!names)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static int
cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Attribute names in byte order (H5_INDEX_NAME); names are unique on an object. */
static void
sort_names(char **names, size_t n)
{
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_names);
}

/* An attribute of an iteration: its name (borrowed from attr_names' list) and its creation-order
 * position, its index in that list (what attr_walk would find). */
typedef struct {
    const char *name;
    long        pos;
} attr_at;

static int
cmp_at(const void *a, const void *b)
{
    return strcmp(((const attr_at *)a)->name, ((const attr_at *)b)->name);
}

/* The iteration's list: `names` (attr_names' creation order) with their positions, in byte order of
 * the names when `by_name` (H5_INDEX_NAME; names are unique on an object). Malloc'ed; NULL when out of
 * memory. */
static attr_at *
attr_order(char **names, size_t n, bool by_name)
{
    attr_at *at = malloc((n ? n : 1) * sizeof *at);
    if (!at)
        return NULL;
    for (size_t i = 0; i < n; i++)
        at[i] = (attr_at){names[i], (long)i};
    if (by_name && n > 1)
        qsort(at, n, sizeof *at, cmp_at);
    return at;
}

/* Walks the names in creation order (attr_names' order) without copying them: the position of `name`,
 * or the count when `name` is NULL; -1 when `name` is not there. */
static long
attr_walk(h5zv_node *n, const char *name)
{
    struct json_object *attrs = h5zv_node_attrs(n), *recs = attr_records(n, false),
                       *hidden = attr_hidden(n, false);
    long k                     = 0;
    if (recs) {
        json_object_object_foreach(recs, key, val)
        {
            struct json_object *v;
            (void)val;
            /* attr_exists, with the node's objects looked up once for the walk */
            if (!strcmp(key, H5ZV_META_KEY) || !value_in(n, hidden, attrs, key, &v))
                continue;
            if (name && !strcmp(key, name))
                return k;
            k++;
        }
    }
    json_object_object_foreach(attrs, key2, val2)
    {
        (void)val2;
        if (attr_not_hdf5(n, key2) || (recs && json_object_object_get_ex(recs, key2, NULL)))
            continue;
        if (name && !strcmp(key2, name))
            return k;
        k++;
    }
    return name ? -1 : k;
}

static long
attr_position(h5zv_node *n, const char *name)
{
    return attr_walk(n, name);
}

int
h5zv_attr_count(h5zv_node *n)
{
    return (int)attr_walk(n, NULL);
}

/* Rectangular shape of nested JSON lists; false if ragged or mixed. */
static bool
json_shape(struct json_object *v, int depth, int *ndim, hsize_t *dims)
{
    if (!json_object_is_type(v, json_type_array)) {
        if (*ndim < 0)
            *ndim = depth;
        return *ndim == depth;
    }
    size_t n = json_object_array_length(v);
    if (depth >= 32)
        return false;
    if (*ndim >= 0 && depth >= *ndim)
        return false;
    if (dims[depth] == (hsize_t)-1)
        dims[depth] = n;
    else if (dims[depth] != n)
        return false;
    if (n == 0)
        return *ndim < 0 ? (*ndim = depth + 1, true) : *ndim == depth + 1;
    for (size_t i = 0; i < n; i++)
        if (!json_shape(json_object_array_get_idx(v, i), depth + 1, ndim, dims))
            return false;
    return true;
}

/* Visits the leaves of a nested list in C order. */
typedef int (*leaf_fn)(struct json_object *leaf, size_t i, void *ud);
static int
json_leaves(struct json_object *v, leaf_fn fn, void *ud, size_t *i)
{
    if (json_object_is_type(v, json_type_array)) {
        for (size_t k = 0; k < json_object_array_length(v); k++)
            if (json_leaves(json_object_array_get_idx(v, k), fn, ud, i) < 0)
                return -1;
        return 0;
    }
    return fn(v, (*i)++, ud);
}

typedef struct infer {
    bool any_float, any_int, any_bool, any_str, any_other, any_big;
} infer;

static int
infer_leaf(struct json_object *l, size_t i, void *ud)
{
    infer *f = ud;
    (void)i;
    switch (json_object_get_type(l)) {
        case json_type_int:
            f->any_int = true;
            if (json_object_get_int64(l) == INT64_MAX && json_object_get_uint64(l) > (uint64_t)INT64_MAX)
                f->any_big = true;
            break;
        case json_type_double:
            f->any_float = true;
            break;
        case json_type_boolean:
            f->any_bool = true;
            break;
        case json_type_string:
            f->any_str = true;
            break;
        default:
            f->any_other = true;
    }
    return 0;
}

/* A type for an attribute without a record (written by another tool) that is better than inference from
 * its JSON value, or -1: NCZarr's own record of the attribute's netCDF type (`_nczarr_attr.types`, in
 * stores NCZarr writes in its nczarr mode: "<i2", ">S1" = char, ...), then for `_FillValue` on an array
 * the array's data type (netCDF requires a fill value of the variable's type; NCZarr reads it so too). */
static hid_t
foreign_type_hint(h5zv_node *n, const char *name, const infer *f, struct json_object *v)
{
    struct json_object *na, *types, *ts;
    zarr_dtype         *dt  = NULL;
    hid_t               t   = H5I_INVALID_HID;
    bool                num = (f->any_int || f->any_float) && !f->any_bool;

    if (json_object_object_get_ex(h5zv_node_attrs(n), "_nczarr_attr", &na) &&
        json_object_is_type(na, json_type_object) && json_object_object_get_ex(na, "types", &types) &&
        json_object_is_type(types, json_type_object) && json_object_object_get_ex(types, name, &ts) &&
        json_object_is_type(ts, json_type_string)) {
        h5zv_errs *e = h5zv_err_save();
        if (zarr_dtype_from_v2_json(ts, &dt) != 0)
            dt = NULL;
        h5zv_err_restore(e);
        if (dt && dt->kind == ZARR_FIXED_BYTES && dt->size == 1 && f->any_str && !num &&
            json_object_is_type(v, json_type_string)) {
            /* NC_CHAR: a fixed-size string holding the text, as netCDF-4 writes char attributes */
            size_t len = (size_t)json_object_get_string_len(v);
            t          = H5Tcopy(H5T_C_S1);
            H5Tset_size(t, len ? len : 1);
        }
        else if (dt && (dt->kind == ZARR_INT || dt->kind == ZARR_UINT || dt->kind == ZARR_FLOAT) &&
                 (num || (dt->kind == ZARR_FLOAT && f->any_str && !f->any_bool)))
            t = h5zv_type_keep(h5zv_type_from_zarr(dt, NULL));
        zarr_dtype_free(dt);
        if (t >= 0)
            return t;
    }
    if (n->type == ZARR_NODE_ARRAY && n->a && !strcmp(name, "_FillValue") && !f->any_bool) {
        const zarr_dtype *at = zarr_array_meta_get(n->a)->dtype;
        if (at && ((at->kind == ZARR_INT || at->kind == ZARR_UINT) ? num && !f->any_str
                   : at->kind == ZARR_FLOAT                        ? num || f->any_str
                                                                   : false))
            t = h5zv_type_keep(h5zv_type_from_zarr(at, NULL));
    }
    return t;
}

/* Type and space of attribute `name`: the type as h5zv_type_keep gives it (release with
 * h5zv_type_release), the space a new id. Values that have no HDF5 form (objects, null, ragged
 * lists) read as a UTF-8 string holding their JSON text. */
static int
attr_type_space(h5zv_node *n, const char *name, hid_t *type, hid_t *space, bool *as_json_text)
{
    struct json_object *v = NULL, *rec = attr_record(n, name), *t, *s;
    hsize_t             dims[32];
    int                 ndim = -1;

    *as_json_text = false;
    attr_value_get(n, name, &v);
    if (rec && !rec_is_compact(rec) && !json_object_is_type(rec, json_type_object)) {
        h5zv_jpath w;
        h5zv_meta_where(&w, n, "attrs");
        h5zv_err_push(__func__, __LINE__, "%s.%s: must be a datatype name or a record object", w.s, name);
        return -1;
    }
    if (rec_is_compact(rec)) {
        if ((*type = attr_type_read(n, name, rec, true)) < 0)
            return -1;
        *space = H5Screate(H5S_SCALAR);
        return 0;
    }
    for (int i = 0; i < 32; i++)
        dims[i] = (hsize_t)-1;
    if (rec && json_object_object_get_ex(rec, "type", &t)) {
        if ((*type = attr_type_read(n, name, t, false)) < 0)
            return -1;
    }
    else
        *type = H5I_INVALID_HID;
    if (rec && json_object_object_get_ex(rec, "shape", &s)) {
        bool ok = json_object_is_type(s, json_type_null) ||
                  (json_object_is_type(s, json_type_array) && json_object_array_length(s) <= H5S_MAX_RANK);
        for (size_t i = 0; ok && s && i < json_object_array_length(s); i++) {
            struct json_object *e = json_object_array_get_idx(s, i);
            ok                    = json_object_is_type(e, json_type_int) && json_object_get_int64(e) >= 0;
        }
        if (!ok) {        /* a store is untrusted: json-c aborts on a list operation on anything else */
            h5zv_jpath w; /* *type is the caller's to release, as on the other failures */
            h5zv_meta_where(&w, n, "attrs");
            h5zv_err_push(__func__, __LINE__, "%s.%s.shape: must be null or a list of at most %d sizes", w.s,
                          name, H5S_MAX_RANK);
            return -1;
        }
        if (json_object_is_type(s, json_type_null))
            *space = H5Screate(H5S_NULL);
        else {
            ndim = (int)json_object_array_length(s);
            for (int i = 0; i < ndim && i < 32; i++)
                dims[i] = (hsize_t)json_object_get_int64(json_object_array_get_idx(s, (size_t)i));
            *space = ndim == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(ndim, dims, NULL);
        }
        if (*type >= 0)
            return 0;
    }
    else
        *space = H5I_INVALID_HID;

    /* Infer from the value. */
    infer  f    = {0};
    size_t cnt  = 0;
    bool   rect = json_shape(v, 0, &ndim, dims);
    if (rect)
        json_leaves(v, infer_leaf, &f, &cnt);
    if (!rect || f.any_other || (f.any_str + (f.any_int || f.any_float) + f.any_bool) > 1 ||
        (json_object_is_type(v, json_type_array) && cnt == 0)) {
        *as_json_text = true;
        if (*type < 0)
            *type = h5zv_type_vlen_utf8();
        if (*space < 0)
            *space = H5Screate(H5S_SCALAR);
        return 0;
    }
    if (*type < 0)
        *type = foreign_type_hint(n, name, &f, v);
    if (*type < 0) {
        if (f.any_str)
            *type = h5zv_type_vlen_utf8();
        else if (f.any_bool)
            *type = h5zv_type_bool();
        else if (f.any_float)
            *type = H5T_IEEE_F64LE;
        else
            *type = f.any_big ? H5T_STD_U64LE : H5T_STD_I64LE;
    }
    if (*space < 0)
        *space = ndim <= 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(ndim, dims, NULL);
    return 0;
}

/* ---- JSON <-> memory form --------------------------------------------------------------------------- */
typedef struct fill_ctx {
    hid_t       mf; /* memory form type */
    H5T_class_t cls;
    size_t      size;
    uint8_t    *buf; /* n elements of the memory form */
    int64_t    *i64; /* scratch for integers / enums */
    double     *f64; /* scratch for floats */
    bool        is_unsigned;
    H5T_str_t   pad;
    size_t      n; /* elements the buffers hold: a value with more leaves is refused */
} fill_ctx;

static int
fill_leaf(struct json_object *l, size_t i, void *ud)
{
    fill_ctx *c = ud;
    if (i >= c->n)
        return -1; /* more leaves than the recorded shape holds (an untrusted store) */
    switch (c->cls) {
        case H5T_INTEGER:
        case H5T_BITFIELD:
        case H5T_ENUM:
            if (json_object_is_type(l, json_type_boolean))
                c->i64[i] = json_object_get_boolean(l);
            else if (c->is_unsigned)
                ((uint64_t *)c->i64)[i] = json_object_get_uint64(l);
            else
                c->i64[i] = json_object_get_int64(l);
            break;
        case H5T_FLOAT:
            if (json_object_is_type(l, json_type_string)) {
                const char *s = json_object_get_string(l);
                c->f64[i]     = !strcmp(s, "NaN")         ? NAN
                                : !strcmp(s, "Infinity")  ? INFINITY
                                : !strcmp(s, "-Infinity") ? -INFINITY
                                                          : strtod(s, NULL);
            }
            else
                c->f64[i] = json_object_get_double(l);
            break;
        case H5T_STRING:
            if (H5Tis_variable_str(c->mf) > 0) {
                const char *s = json_object_get_string(l);
                if (!l) /* JSON null: a NULL string */
                    ((char **)c->buf)[i] = NULL;
                else if (!(((char **)c->buf)[i] = strdup(s ? s : "")))
                    return -1;
            }
            else {
                const char *s = json_object_get_string(l);
                size_t      k = s ? (size_t)json_object_get_string_len(l) : 0; /* NUL bytes included */
                if (!s)
                    s = "";
                uint8_t *d = c->buf + i * c->size;
                memset(d, c->pad == H5T_STR_SPACEPAD ? ' ' : 0, c->size);
                memcpy(d, s, k < c->size ? k : c->size);
            }
            break;
        default:
            return -1;
    }
    return 0;
}

/* Fills `buf` (n elements of memory-form type mf) from the JSON value. */
/* n integers (int64, or uint64 when `is_unsigned`) stored as little-endian native integers of type
 * `dst` (1, 2, 4 or 8 bytes, same signedness) when every value fits; false (nothing trusted in `out`)
 * otherwise, and H5Tconvert does it (clamping as HDF5 does). */
static bool
native_int_fits(hid_t dst, bool is_unsigned, const int64_t *v, size_t n, void *out)
{
    H5T_class_t cls;
    size_t      sz;
    bool        sg, be;
    if (!H5ZV_HOST_LE)
        return false;
    if (h5zv_type_std_info(dst, &cls, &sz, &sg, &be)) { /* a predefined type: no HDF5 call */
        if (cls != H5T_INTEGER || be || sg == is_unsigned)
            return false;
    }
    else if ((sz = H5Tget_size(dst)) == 0 || H5Tget_class(dst) != H5T_INTEGER ||
             H5Tget_order(dst) != H5T_ORDER_LE || (H5Tget_sign(dst) == H5T_SGN_NONE) != is_unsigned ||
             H5Tget_precision(dst) != 8 * sz || H5Tget_offset(dst) != 0 ||
             (sz != 1 && sz != 2 && sz != 4 && sz != 8))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (is_unsigned) {
            uint64_t u = (uint64_t)v[i];
            if (sz < 8 && u >> (8 * sz))
                return false;
        }
        else if (sz < 8) {
            int64_t lo = -((int64_t)1 << (8 * sz - 1)), hi = ((int64_t)1 << (8 * sz - 1)) - 1;
            if (v[i] < lo || v[i] > hi)
                return false;
        }
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t u = (uint64_t)v[i]; /* two's complement: the low bytes are the value */
        memcpy((uint8_t *)out + i * sz, &u, sz);
    }
    return true;
}

static int
json_to_mem(struct json_object *v, bool as_text, hid_t mf, size_t n, void *buf)
{
    fill_ctx c   = {mf, H5T_NO_CLASS, 0, buf, NULL, NULL, false, H5T_STR_NULLTERM, n};
    size_t   i   = 0;
    int      ret = -1;
    hid_t    src = H5I_INVALID_HID, dst = H5I_INVALID_HID;
    bool     sg, std = h5zv_type_std_info(mf, &c.cls, &c.size, &sg, NULL); /* predefined: no HDF5 call */

    if (!std) {
        c.cls  = H5Tget_class(mf);
        c.size = H5Tget_size(mf);
    }

    if (as_text) {
        if (c.cls != H5T_STRING || H5Tis_variable_str(mf) <= 0)
            return -1;
        ((char **)buf)[0] = strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
        return 0;
    }
    if (c.cls == H5T_STRING)
        c.pad = H5Tget_strpad(mf);
    if (c.cls == H5T_INTEGER || c.cls == H5T_BITFIELD || c.cls == H5T_ENUM) {
        dst           = c.cls == H5T_ENUM ? H5Tget_super(mf) : mf;
        c.is_unsigned = std                                ? !sg
                        : H5Tget_class(dst) == H5T_INTEGER ? H5Tget_sign(dst) == H5T_SGN_NONE
                                                           : true;
        if (!(c.i64 = calloc(n ? n : 1, 8)))
            goto done;
    }
    else if (c.cls == H5T_FLOAT) {
        dst = mf;
        if (!(c.f64 = calloc(n ? n : 1, 8)))
            goto done;
    }
    else if (c.cls != H5T_STRING)
        goto done;
    if (json_leaves(v, fill_leaf, &c, &i) < 0 || i != n) {
        if (c.cls == H5T_STRING && H5Tis_variable_str(mf) > 0) /* free the strings copied so far */
            for (size_t k = 0; k < i && k < n; k++) {
                free(((char **)buf)[k]);
                ((char **)buf)[k] = NULL;
            }
        goto done;
    }
    if (c.i64 || c.f64) {
        size_t big = c.size > 8 ? c.size : 8;
        void  *tmp = malloc(n * big + 1);
        if (!tmp)
            goto done;
        if (!c.f64 && native_int_fits(dst, c.is_unsigned, c.i64, n, buf)) {
            free(tmp); /* stored straight: the common case of in-range native integers */
        }
        else {
            memcpy(tmp, c.i64 ? (void *)c.i64 : (void *)c.f64, n * 8);
            src = c.f64 ? H5T_NATIVE_DOUBLE : c.is_unsigned ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64;
            if (H5Tconvert(src, dst, n, tmp, NULL, H5P_DEFAULT) < 0) {
                free(tmp);
                goto done;
            }
            memcpy(buf, tmp, n * c.size);
            free(tmp);
        }
    }
    ret = 0;
done:
    free(c.i64);
    free(c.f64);
    if (dst >= 0 && dst != mf)
        h5zv_close(dst);
    return ret;
}

/* One little-endian integer of `size` (1, 2, 4 or 8) bytes, signed when `sg`, as JSON (what H5Tconvert
 * to int64 / uint64 gives). */
static struct json_object *
std_int_json(const uint8_t *p, size_t size, bool sg)
{
    uint64_t u = 0;
    memcpy(&u, p, size); /* little-endian on a little-endian host */
    if (!sg)
        return json_object_new_uint64(u);
    return json_object_new_int64(
        size == 8 ? (int64_t)u : (int64_t)(u ^ (1ULL << (8 * size - 1))) - (int64_t)(1ULL << (8 * size - 1)));
}

/* One IEEE single (size 4) or double float as JSON: a double, or "NaN", "Infinity", "-Infinity". */
static struct json_object *
std_float_json(const uint8_t *p, size_t size)
{
    double d;
    if (size == 4) {
        float f;
        memcpy(&f, p, sizeof f);
        d = (double)f;
    }
    else
        memcpy(&d, p, sizeof d);
    return isnan(d)   ? json_object_new_string("NaN")
           : isinf(d) ? json_object_new_string(d > 0 ? "Infinity" : "-Infinity")
                      : json_object_new_double(d);
}

/* The n leaves nested by the dataspace `space`'s dims (class `sclass`; scalar: the leaf itself); the
 * leaves it takes are set NULL in `leaf`. NULL when out of memory. */
static struct json_object *
leaves_nest(hid_t space, H5S_class_t sclass, size_t n, struct json_object **leaf)
{
    int                  ndim = sclass == H5S_SIMPLE ? H5Sget_simple_extent_ndims(space) : 0;
    hsize_t              dims[32];
    size_t               cnt = n;
    struct json_object **cur = leaf, *res;
    if (ndim <= 0) {
        res     = leaf[0];
        leaf[0] = NULL;
        return res;
    }
    H5Sget_simple_extent_dims(space, dims, NULL);
    /* build bottom-up: group leaves by the last dim, then the next ... */
    for (int d = ndim - 1; d >= 0; d--) {
        size_t               groups = dims[d] ? cnt / dims[d] : 1;
        struct json_object **next   = calloc(groups ? groups : 1, sizeof *next);
        if (!next) {
            if (cur != leaf) {
                for (size_t gi = 0; gi < cnt; gi++)
                    json_object_put(cur[gi]);
                free(cur);
            }
            return NULL;
        }
        for (size_t gi = 0; gi < groups; gi++) {
            next[gi] = json_object_new_array();
            for (size_t k = 0; k < dims[d]; k++) {
                json_object_array_add(next[gi], cur[gi * dims[d] + k]);
                cur[gi * dims[d] + k] = NULL;
            }
        }
        if (cur != leaf)
            free(cur);
        cur = next;
        cnt = groups;
    }
    res = cur[0];
    free(cur);
    return res;
}

/* Natural JSON of n memory-form elements shaped by `space` (of class `sclass`); NULL when there is none
 * (raw instead). */
static struct json_object *
mem_to_json(hid_t mf, hid_t space, H5S_class_t sclass, size_t n, const void *buf)
{
    H5T_class_t          cls;
    size_t               size;
    struct json_object **leaf = NULL, *res = NULL;
    hid_t                dst     = H5I_INVALID_HID;
    void                *tmp     = NULL;
    bool                 is_bool = false, sg, be;
    bool                 std     = h5zv_type_std_info(mf, &cls, &size, &sg, &be);

    if (!std) {
        cls  = H5Tget_class(mf);
        size = H5Tget_size(mf);
    }
    /* One native-order integer of full precision in a scalar space (most attributes): read as is,
     * without the type copies and the conversion below. */
    if (n == 1 && cls == H5T_INTEGER && (size == 1 || size == 2 || size == 4 || size == 8) &&
        sclass == H5S_SCALAR && H5ZV_HOST_LE &&
        (std ? !be
             : H5Tget_order(mf) == H5T_ORDER_LE && H5Tget_precision(mf) == 8 * size &&
                   H5Tget_offset(mf) == 0)) {
        bool     uns = std ? !sg : H5Tget_sign(mf) == H5T_SGN_NONE;
        uint64_t u   = 0;
        int64_t  v;
        memcpy(&u, buf, size); /* a little-endian value on a little-endian host */
        if (uns)
            return json_object_new_uint64(u);
        v = size == 8 ? (int64_t)u
                      : (int64_t)(u ^ (1ULL << (8 * size - 1))) - (int64_t)(1ULL << (8 * size - 1));
        return json_object_new_int64(v);
    }

    /* HDF5's predefined little-endian integers and IEEE single/double floats (netCDF's attributes: the
     * _Netcdf4Coordinates of every variable): each element read as is on a little-endian host, without
     * the two type copies and the H5Tconvert below (~5,000 instructions), which give the same values
     * (to int64/uint64 and to double, these conversions are exact) */
    if (std && !be && H5ZV_HOST_LE &&
        ((cls == H5T_INTEGER && (size == 1 || size == 2 || size == 4 || size == 8)) ||
         (cls == H5T_FLOAT && (size == 4 || size == 8)))) {
        if (!(leaf = calloc(n ? n : 1, sizeof *leaf)))
            return NULL;
        for (size_t i = 0; i < n; i++)
            leaf[i] = cls == H5T_FLOAT ? std_float_json((const uint8_t *)buf + i * size, size)
                                       : std_int_json((const uint8_t *)buf + i * size, size, sg);
        goto nest;
    }
    if (cls == H5T_ENUM) {
        hid_t b = h5zv_type_bool();
        is_bool = H5Tequal(b, mf) > 0;
        H5Tclose(b);
    }
    /* A float that is not IEEE half/single/double (long double, custom fields and biases) does not survive
     * a trip through a JSON double: NULL, so the caller keeps its bytes (`raw`). */
    if ((cls == H5T_FLOAT && !std && !h5zv_type_is_ieee_float(mf)) ||
        ((cls == H5T_INTEGER || cls == H5T_ENUM || cls == H5T_BITFIELD) && size > 8))
        return NULL; /* and integers wider than 64 bits: the conversion to int64 would clamp them */
    if (!(leaf = calloc(n ? n : 1, sizeof *leaf)))
        return NULL;
    if (cls == H5T_INTEGER || cls == H5T_FLOAT || cls == H5T_ENUM || cls == H5T_BITFIELD) {
        hid_t srct = cls == H5T_ENUM ? H5Tget_super(mf) : H5Tcopy(mf);
        bool  uns =
            cls != H5T_FLOAT && (H5Tget_class(srct) != H5T_INTEGER || H5Tget_sign(srct) == H5T_SGN_NONE);
        dst = H5Tcopy(cls == H5T_FLOAT ? H5T_NATIVE_DOUBLE : uns ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64);
        if (!(tmp = malloc(n * (size > 8 ? size : 8) + 1))) {
            H5Tclose(srct);
            goto fail;
        }
        memcpy(tmp, buf, n * size);
        herr_t e = H5Tconvert(srct, dst, n, tmp, NULL, H5P_DEFAULT);
        H5Tclose(srct);
        if (e < 0)
            goto fail;
        for (size_t i = 0; i < n; i++) {
            if (cls == H5T_FLOAT) {
                double d = ((double *)tmp)[i];
                leaf[i]  = isnan(d)   ? json_object_new_string("NaN")
                           : isinf(d) ? json_object_new_string(d > 0 ? "Infinity" : "-Infinity")
                                      : json_object_new_double(d);
            }
            else if (is_bool)
                leaf[i] = json_object_new_boolean(((uint64_t *)tmp)[i] != 0);
            else if (uns)
                leaf[i] = json_object_new_uint64(((uint64_t *)tmp)[i]);
            else
                leaf[i] = json_object_new_int64(((int64_t *)tmp)[i]);
        }
    }
    else if (cls == H5T_STRING) {
        bool vl = H5Tis_variable_str(mf) > 0;
        for (size_t i = 0; i < n; i++) {
            const char *s = vl ? ((char *const *)buf)[i] : (const char *)buf + i * size;
            size_t      k = vl ? (s ? strlen(s) : 0) : size;
            /* a fixed-size string keeps its bytes up to its padding: NUL bytes inside it are data (netCDF's
             * NC_CHAR attributes hold any bytes), only the trailing pad characters go */
            if (!vl)
                while (k && s[k - 1] == (H5Tget_strpad(mf) == H5T_STR_SPACEPAD ? ' ' : '\0'))
                    k--;
            /* a NULL string is JSON null (FORMAT.md "NULL strings"), distinct from "" */
            leaf[i] = vl && !s ? NULL : json_object_new_string_len(s ? s : "", (int)k);
        }
    }
    else
        goto fail;

    /* Nest by the dataspace's dims (scalar: the leaf itself). */
nest:
    if (!(res = leaves_nest(space, sclass, n, leaf)))
        goto fail;
    for (size_t i = 0; i < n; i++)
        json_object_put(leaf[i]);
    free(leaf);
    free(tmp);
    if (dst >= 0)
        H5Tclose(dst);
    return res;
fail:
    for (size_t i = 0; i < n; i++)
        json_object_put(leaf[i]);
    free(leaf);
    free(tmp);
    if (dst >= 0)
        H5Tclose(dst);
    return NULL;
}

/* True if the value is one NULL variable-length string: its natural JSON is null (mem_to_json's NULL
 * then says so, not "no natural form"). */
static bool
attr_null_string(hid_t mf, size_t n, const void *buf)
{
    char *s;
    if (n != 1 || h5zv_type_std_info(mf, NULL, NULL, NULL, NULL) || H5Tget_class(mf) != H5T_STRING ||
        H5Tis_variable_str(mf) <= 0)
        return false;
    memcpy(&s, buf, sizeof s);
    return !s;
}

static char *attr_by_idx(h5zv_node *n, H5_index_t it, H5_iter_order_t order, hsize_t idx);

/* ---- callbacks --------------------------------------------------------------------------------------- */
static h5zv_node *
attr_parent(h5zv_obj *o, const H5VL_loc_params_t *loc, char **path_out)
{
    char      *path = h5zv_loc_path(o, loc);
    h5zv_node *n    = path ? h5zv_node_get(o->file, path) : NULL;
    if (path_out)
        *path_out = path;
    else
        free(path);
    return n;
}

/* Sets a->attr_space to `space` (taken) with its class and element count; `sc` is its class when the
 * caller knows it (H5S_NO_CLASS: asked). A scalar or null space needs no further HDF5 call. A scalar
 * attribute opened from a compact record has no space id (H5I_INVALID_HID, class H5S_SCALAR):
 * H5Aget_space makes one. */
static void
attr_obj_space(h5zv_obj *a, hid_t space, H5S_class_t sc)
{
    a->attr_space  = space;
    a->attr_sclass = sc != H5S_NO_CLASS || space < 0 ? sc : H5Sget_simple_extent_type(space);
    a->attr_npts   = a->attr_sclass == H5S_NULL     ? 0
                     : a->attr_sclass == H5S_SCALAR ? 1
                     : space >= 0                   ? H5Sget_simple_extent_npoints(space)
                                                    : -1;
}

static h5zv_obj *
attr_obj(h5zv_obj *o, const char *path, h5zv_node *n, const char *name)
{
    h5zv_obj           *a  = h5zv_obj_new(o->file, H5I_ATTR, path);
    hid_t               sp = H5I_INVALID_HID;
    struct json_object *rec;
    bool                txt;
    int                 rc;
    if (!a)
        return NULL;
    a->attr_name = strdup(name);
    rec          = attr_record(n, name);
    if (rec_is_compact(rec)) { /* a scalar: no dataspace made unless asked for (H5Aget_space) */
        a->attr_type = attr_type_read(n, name, rec, true);
        rc           = a->attr_type < 0 ? -1 : 0;
        attr_obj_space(a, H5I_INVALID_HID, H5S_SCALAR);
    }
    else {
        rc = attr_type_space(n, name, &a->attr_type, &sp, &txt);
        attr_obj_space(a, sp, H5S_NO_CLASS); /* taken: released with a */
    }
    if (rc < 0 || a->attr_type < 0 || (a->attr_space < 0 && a->attr_sclass != H5S_SCALAR)) {
        h5zv_err_push(__func__, __LINE__, "can't determine the type of attribute '%s' of '/%s'", name, path);
        h5zv_obj_free(a);
        return NULL;
    }
    a->attr_type = h5zv_type_keep(a->attr_type); /* vlen strings, bools: copies stay */
    return a;
}

void *
h5zv_attr_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t type_id, hid_t space_id,
                 hid_t acpl_id, hid_t aapl_id, hid_t dxpl_id, void **req)
{
    h5zv_obj           *o = obj, *a = NULL, *ct;
    h5zv_node          *n;
    char               *path = NULL;
    struct json_object *enc  = NULL;
    struct json_object *rec, *recs;
    H5S_class_t         sc;
    hid_t               kept = H5I_INVALID_HID;
    bool                committed, std;
    (void)dxpl_id;
    (void)req;

    /* the default lists (what HDF5 passes when the caller gave H5P_DEFAULT) need no check */
    if ((aapl_id != H5P_ATTRIBUTE_ACCESS_DEFAULT &&
         h5zv_check_plist(aapl_id, H5P_ATTRIBUTE_ACCESS, "attribute access property list") < 0) ||
        (acpl_id != H5P_ATTRIBUTE_CREATE_DEFAULT &&
         h5zv_check_plist(acpl_id, H5P_ATTRIBUTE_CREATE, "attribute creation property list") < 0))
        return NULL;

    if (!(n = attr_parent(o, loc, &path)))
        goto done;
    if (o->file->intent != H5F_ACC_RDWR)
        H5ZV_GOTO_ERROR("can't create attribute '%s' on '/%s': file is read-only", name, path);
    if (!strcmp(name, H5ZV_META_KEY))
        H5ZV_GOTO_ERROR("can't create attribute '%s': the name is reserved by the zarr connector", name);
    if (attr_not_hdf5(n, name))
        H5ZV_GOTO_ERROR("can't create attribute '%s' on dataset '/%s': zarr keeps the dimension names of "
                        "arrays under that name",
                        name, path);
    if (attr_exists(n, name))
        H5ZV_GOTO_ERROR("can't create attribute '%s' on '/%s': it exists", name, path);
    std = h5zv_type_std_info(type_id, NULL, NULL, NULL, NULL); /* a predefined integer or float */
    if (!std) {
        H5T_class_t c = H5Tget_class(type_id);
        if (c == H5T_TIME)
            H5ZV_GOTO_ERROR("can't create attribute '%s' on '/%s': time datatypes are not supported", name,
                            path);
        /* types with pointers inside (vlen sequences, references, compounds or arrays of such) are
         * stored in the packed form, one base64 string per element */
        if (!h5zv_type_refs_ok(type_id))
            H5ZV_GOTO_ERROR("can't create attribute '%s' on '/%s': unsupported reference type", name, path);
    }
    committed = !std && H5Tcommitted(type_id) > 0; /* a predefined type is never committed */
    ct        = committed ? h5zv_type_committed_obj(type_id) : NULL;
    if (ct && ct->file != o->file)
        ct = NULL;
    /* The HDF5 type is always recorded: JSON alone can't tell int32 from int64 or ASCII from UTF-8. */
    sc = H5Sget_simple_extent_type(space_id);
    h5zv_refidx_touch(o->file, n->path); /* references the next move rewrites (vol/refidx.c) */
    attr_value_set(n, name, NULL);
    /* what the attribute object holds: the predefined id when the type equals one, whose record is then
     * made without asking HDF5 (h5zv_type_to_json's short name; the same one it finds for `type_id`) */
    kept = h5zv_type_keep_copy(type_id);
    if (!(enc = attr_type_json(h5zv_type_std_info(kept, NULL, NULL, NULL, NULL) ? kept : type_id)))
        H5ZV_GOTO_ERROR("can't record the datatype of attribute '%s'", name);
    if (sc == H5S_SCALAR && !ct && (acpl_id == H5P_DEFAULT || acpl_id == H5P_ATTRIBUTE_CREATE_DEFAULT) &&
        json_object_is_type(enc, json_type_string)) {
        /* the compact record (attr_record_compact) straight away */
        json_object_object_add(attr_records(n, true), name, enc);
        enc = NULL;
        goto made;
    }
    rec = json_object_new_object();
    json_object_object_add(rec, "type", enc);
    enc = NULL;
    if (sc == H5S_NULL)
        json_object_object_add(rec, "shape", NULL);
    else {
        struct json_object *s = json_object_new_array();
        hsize_t             dims[32];
        int                 nd = sc == H5S_SCALAR ? 0 : H5Sget_simple_extent_dims(space_id, dims, NULL);
        for (int i = 0; i < nd; i++)
            json_object_array_add(s, json_object_new_int64((int64_t)dims[i]));
        json_object_object_add(rec, "shape", s);
    }
    if (acpl_id != H5P_DEFAULT && acpl_id != H5P_ATTRIBUTE_CREATE_DEFAULT) {
        struct json_object *pj = NULL;
        if (h5zv_acpl_to_json(acpl_id, &pj) == 0)
            json_object_object_add(rec, "acpl", pj);
    }
    if (ct) {
        json_object_object_add(rec, "ctype", json_object_new_string(ct->path));
        h5zv_type_use(o->file, path, name, ct->path);
    }
    recs = attr_records(n, true);
    json_object_object_add(recs, name, rec);
    record_compact(recs, name, rec); /* (rec is the one just added) */
made:
    h5zv_node_mark_dirty(n);
    attr_dims_touch(o->file, n, name);
    if (!(a = h5zv_obj_new(o->file, H5I_ATTR, path)))
        H5ZV_GOTO_ERROR("out of memory");
    a->attr_name = strdup(name);
    a->attr_type = kept;
    kept         = H5I_INVALID_HID;
    attr_obj_space(a, H5Scopy(space_id), sc);
done:
    h5zv_type_release(kept);
    free(path);
    json_object_put(enc);
    return a;
}

void *
h5zv_attr_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t aapl_id, hid_t dxpl_id,
               void **req)
{
    h5zv_obj  *o = obj, *a = NULL;
    h5zv_node *n;
    char      *path = NULL, *nm = NULL;
    (void)dxpl_id;
    (void)req;
    if (h5zv_check_plist(aapl_id, H5P_ATTRIBUTE_ACCESS, "attribute access property list") < 0)
        return NULL;

    if (loc->type == H5VL_OBJECT_BY_IDX) {
        /* H5Aopen_by_idx: loc names the object, the index picks the attribute. */
        H5VL_loc_params_t lp            = *loc;
        lp.type                         = H5VL_OBJECT_BY_NAME;
        lp.loc_data.loc_by_name.name    = loc->loc_data.loc_by_idx.name;
        lp.loc_data.loc_by_name.lapl_id = loc->loc_data.loc_by_idx.lapl_id;
        if (!(n = attr_parent(o, &lp, &path)))
            goto done;
        if (!(nm = attr_by_idx(n, loc->loc_data.loc_by_idx.idx_type, loc->loc_data.loc_by_idx.order,
                               loc->loc_data.loc_by_idx.n)))
            H5ZV_GOTO_ERROR("attribute index %llu of '/%s' out of range",
                            (unsigned long long)loc->loc_data.loc_by_idx.n, path);
        name = nm;
    }
    else if (!(n = attr_parent(o, loc, &path)))
        goto done;
    if (!attr_exists(n, name))
        H5ZV_GOTO_ERROR("can't open attribute '%s' of '/%s': it doesn't exist", name, path);
    a = attr_obj(o, path, n, name);
done:
    free(path);
    free(nm);
    return a;
}

/* H5Tequal(mf, mem) > 0, without asking HDF5 when both are predefined integer or float types or native
 * ones equal to such: `mem_std` is h5zv_type_std_of(mem), which the caller has already asked (the memory
 * type of most attribute reads and writes). */
static bool
attr_same_type(hid_t mf, hid_t mem, hid_t mem_std)
{
    hid_t a = h5zv_type_std_of(mf);
    if (a >= 0 && mem_std >= 0)
        return a == mem_std;
    return H5Tequal(mf, mem) > 0;
}

/* Fills `out` (npts elements of memory-form type mf, zeroed by the caller) with the stored value of
 * attribute `name`; an attribute never written reads as zeros, like HDF5's. vlen strings are malloc'ed. */
/* True if attributes of memory-form type `mf` are stored in the packed form (docs/FORMAT.md): types
 * with pointers inside other than a variable-length string, which has a natural JSON form. */
static bool
attr_is_packed(hid_t mf)
{
    return h5zv_type_has_pointers(mf) && H5Tget_class(mf) != H5T_STRING;
}

static int
attr_load(h5zv_file *f, h5zv_node *n, const char *name, const char *path, hid_t mf, size_t npts, void *out)
{
    struct json_object *v = NULL, *rec = attr_record(n, name), *raw, *packed;
    hid_t               t = H5I_INVALID_HID, s = H5I_INVALID_HID;
    size_t              fsize = H5Tget_size(mf);
    bool                txt;
    int                 ret = -1;

    if (!attr_value_get(n, name, &v))
        H5ZV_GOTO_ERROR("attribute '%s' of '/%s' no longer exists", name, path);
    if (rec && json_object_object_get_ex(rec, "packed", &packed)) {
        size_t i = 0;
        if (!json_object_is_type(packed, json_type_array) || json_object_array_length(packed) != npts)
            H5ZV_GOTO_ERROR("attribute '%s' of '/%s': stored packed value doesn't have %zu elements", name,
                            path, npts);
        h5zv_enc_plan *plan = h5zv_enc_plan_new(mf);
        if (!plan)
            H5ZV_GOTO_ERROR("attribute '%s' of '/%s': can't read its datatype", name, path);
        h5zv_refs_begin(f);
        for (; i < npts; i++) {
            zarr_vlen e = {0};
            e.p    = h5zv_b64_decode(json_object_get_string(json_object_array_get_idx(packed, i)), &e.len);
            int rc = e.p || e.len == 0 ? h5zv_enc_unpack_plan(plan, &e, (uint8_t *)out + i * fsize) : -1;
            free(e.p);
            if (rc < 0) {
                h5zv_reclaim(mf, i + 1, out);
                memset(out, 0, npts * fsize);
                break;
            }
        }
        h5zv_refs_end();
        h5zv_enc_plan_free(plan);
        if (i < npts)
            H5ZV_GOTO_ERROR("attribute '%s' of '/%s': stored element %zu doesn't match its type", name, path,
                            i);
    }
    else if (rec && json_object_object_get_ex(rec, "raw", &raw)) {
        size_t k = 0;
        void  *b = h5zv_b64_decode(json_object_get_string(raw), &k);
        if (!b || k != npts * fsize) {
            free(b);
            H5ZV_GOTO_ERROR("attribute '%s' of '/%s': stored raw value has %zu bytes, expected %zu", name,
                            path, k, npts * fsize);
        }
        memcpy(out, b, k);
        free(b);
    }
    else if (v) {
        /* a recorded type and shape: the value is never JSON text (attr_type_space) */
        if (rec_is_compact(rec) || (rec && json_object_object_get_ex(rec, "type", NULL) &&
                                    json_object_object_get_ex(rec, "shape", NULL)))
            txt = false;
        else if (attr_type_space(n, name, &t, &s, &txt) < 0)
            goto done;
        if (json_to_mem(v, txt, mf, npts, out) < 0)
            H5ZV_GOTO_ERROR("attribute '%s' of '/%s': its stored value doesn't match its type and shape",
                            name, path);
    }
    ret = 0;
done:
    h5zv_type_release(t);
    h5zv_close(s);
    return ret;
}

herr_t
h5zv_attr_read(void *attr, hid_t mem_type_id, void *buf, hid_t dxpl_id, void **req)
{
    h5zv_obj  *a  = attr;
    h5zv_node *n  = h5zv_node_get(a->file, a->path);
    hid_t      mf = H5I_INVALID_HID, mstd;
    hssize_t   npts;
    size_t     fsize, msize;
    void      *src = NULL, *tmp = NULL, *bkg = NULL;
    herr_t     ret = -1;
    (void)req;

    if (!n)
        goto done;
    npts = a->attr_npts;
    if (npts <= 0) {
        ret = 0;
        goto done;
    }
    mf = h5zv_type_memform_kept(a->attr_type);
    if (!h5zv_type_std_info(mf, NULL, &fsize, NULL, NULL))
        fsize = H5Tget_size(mf);
    mstd = h5zv_type_std_of(mem_type_id);
    if (!h5zv_type_std_info(mstd, NULL, &msize, NULL, NULL))
        msize = H5Tget_size(mem_type_id);
    if (!(src = calloc((size_t)npts, fsize)))
        H5ZV_GOTO_ERROR("out of memory");
    if (attr_load(a->file, n, a->attr_name, a->path, mf, (size_t)npts, src) < 0)
        goto done;
    if (attr_same_type(mf, mem_type_id, mstd)) {
        memcpy(buf, src, (size_t)npts * msize); /* vlen payloads now belong to the caller */
        ret = 0;
        goto done;
    }
    if (!(tmp = calloc((size_t)npts, fsize > msize ? fsize : msize)))
        H5ZV_GOTO_ERROR("out of memory");
    memcpy(tmp, src, (size_t)npts * fsize);
    if (H5Tget_class(mem_type_id) == H5T_COMPOUND) {
        if (!(bkg = malloc((size_t)npts * msize)))
            H5ZV_GOTO_ERROR("out of memory");
        memcpy(bkg, buf, (size_t)npts * msize);
    }
    if (H5Tconvert(mf, mem_type_id, (size_t)npts, tmp, bkg, dxpl_id) < 0) {
        h5zv_reclaim(mf, (size_t)npts, src);
        H5ZV_GOTO_ERROR("can't convert attribute '%s' of '/%s' to the memory type", a->attr_name, a->path);
    }
    h5zv_type_zero_refs(mf, src, (size_t)npts); /* references were copied bit for bit: now the caller's */
    h5zv_reclaim(mf, (size_t)npts, src);        /* the conversion made the caller's copies */
    memcpy(buf, tmp, (size_t)npts * msize);
    ret = 0;
done:
    free(src);
    free(tmp);
    free(bkg);
    h5zv_type_release(mf);
    return ret;
}

herr_t
h5zv_attr_write(void *attr, hid_t mem_type_id, const void *buf, hid_t dxpl_id, void **req)
{
    h5zv_obj           *a  = attr;
    h5zv_node          *n  = h5zv_node_get(a->file, a->path);
    hid_t               mf = H5I_INVALID_HID, mstd;
    hssize_t            npts;
    size_t              fsize, msize;
    void               *tmp = NULL, *bkg = NULL;
    const void         *src       = buf; /* the value in the memory form of the attribute's type */
    struct json_object *val       = NULL, *rec;
    bool                converted = false;
    herr_t              ret       = -1;
    (void)req;

    if (!n)
        goto done;
    if (a->file->intent != H5F_ACC_RDWR)
        H5ZV_GOTO_ERROR("can't write attribute '%s': file is read-only", a->attr_name);
    h5zv_refidx_touch(a->file, n->path); /* references the next move rewrites (vol/refidx.c) */
    npts = a->attr_npts;
    mf   = h5zv_type_memform_kept(a->attr_type); /* released with h5zv_type_release */
    if (!h5zv_type_std_info(mf, NULL, &fsize, NULL, NULL))
        fsize = H5Tget_size(mf);
    mstd = h5zv_type_std_of(mem_type_id);
    if (!h5zv_type_std_info(mstd, NULL, &msize, NULL, NULL))
        msize = H5Tget_size(mem_type_id);
    if (npts > 0 && !attr_same_type(mf, mem_type_id, mstd)) {
        /* converted in a copy; a value already in the attribute's memory form is read where it is (a
         * reference list of thousands of elements, rewritten at each H5DSattach_scale, is not copied) */
        if (!(tmp = calloc((size_t)npts, fsize > msize ? fsize : msize)))
            H5ZV_GOTO_ERROR("out of memory");
        memcpy(tmp, buf, (size_t)npts * msize);
        src = tmp;
        {
            if (H5Tget_class(mf) == H5T_COMPOUND) {
                /* members the memory type lacks keep their stored values */
                if (!(bkg = calloc((size_t)npts, fsize)))
                    H5ZV_GOTO_ERROR("out of memory");
                if (attr_load(a->file, n, a->attr_name, a->path, mf, (size_t)npts, bkg) < 0)
                    goto done;
            }
            if (H5Tconvert(mem_type_id, mf, (size_t)npts, tmp, bkg, dxpl_id) < 0)
                H5ZV_GOTO_ERROR("can't convert the value of attribute '%s' to its type", a->attr_name);
            converted = true;
        }
    }
    /* a compact record (a type string) holds no raw or packed value: it is expanded only for one */
    rec = attr_record(n, a->attr_name);
    if (!rec_is_compact(rec)) {
        if (!rec) {
            rec = json_object_new_object();
            json_object_object_add(attr_records(n, true), a->attr_name, rec);
        }
        json_object_object_del(rec, "raw");
        json_object_object_del(rec, "packed");
    }
    if (npts > 0 && attr_is_packed(mf)) {
        rec                     = attr_record_obj(n, a->attr_name);
        struct json_object *arr = json_object_new_array();
        int                 rc  = 0;
        /* object references also get a natural value for other readers: their paths ("" = null) */
        bool           is_ref = H5Tget_class(mf) == H5T_REFERENCE;
        char         **paths  = is_ref ? calloc((size_t)npts, sizeof *paths) : NULL;
        h5zv_enc_plan *plan   = h5zv_enc_plan_new(mf);
        if ((is_ref && !paths) || !plan)
            rc = -1;
        h5zv_refs_begin(a->file);
        for (hssize_t i = 0; i < npts && rc == 0; i++) {
            zarr_vlen e = {0};
            char     *b64;
            if ((rc = h5zv_enc_pack_plan(plan, (const uint8_t *)src + (size_t)i * fsize, &e)) == 0) {
                if ((b64 = h5zv_b64_encode(e.p ? e.p : (void *)"", e.len)))
                    json_object_array_add(arr, json_object_new_string(b64));
                else
                    rc = -1;
                free(b64);
                /* a packed reference: u64 byte count, then the path */
                if (paths && e.len >= 8 && !(paths[i] = strndup((const char *)e.p + 8, e.len - 8)))
                    rc = -1;
            }
            free(e.p);
        }
        h5zv_refs_end();
        h5zv_enc_plan_free(plan);
        if (paths) {
            if (rc == 0) {
                hid_t vs = h5zv_type_vlen_utf8();
                val      = mem_to_json(vs, a->attr_space, a->attr_sclass, (size_t)npts, paths);
                H5Tclose(vs);
            }
            for (hssize_t i = 0; i < npts; i++)
                free(paths[i]);
            free(paths);
        }
        if (rc < 0) {
            json_object_put(arr);
            H5ZV_GOTO_ERROR("can't store the value of attribute '%s' of '/%s'", a->attr_name, a->path);
        }
        json_object_object_add(rec, "packed", arr);
    }
    else if (npts > 0 && !(val = mem_to_json(mf, a->attr_space, a->attr_sclass, (size_t)npts, src)) &&
             !attr_null_string(mf, (size_t)npts, src)) {
        char *b64 = h5zv_b64_encode(src, (size_t)npts * fsize);
        if (!b64)
            H5ZV_GOTO_ERROR("out of memory");
        rec = attr_record_obj(n, a->attr_name);
        json_object_object_add(rec, "raw", json_object_new_string(b64));
        free(b64);
    }
    /* One value in a 1-D dataspace (how netCDF writes every attribute) is a JSON scalar, as zarr tools
     * write single values; the recorded shape keeps [1] for HDF5 readers. */
    if (val && json_object_is_type(val, json_type_array) && json_object_array_length(val) == 1 &&
        a->attr_sclass == H5S_SIMPLE && H5Sget_simple_extent_ndims(a->attr_space) == 1) {
        struct json_object *one = json_object_get(json_object_array_get_idx(val, 0));
        json_object_put(val);
        val = one;
    }
    attr_value_set(n, a->attr_name, val);
    val = NULL;
    attr_record_compact(n, a->attr_name); /* nothing to do for a compact record */
    h5zv_node_mark_dirty(n);
    attr_dims_touch(a->file, n, a->attr_name);
    if (attr_fill_touch(a->file, n, a->attr_name) < 0)
        goto done;
    ret = 0;
done:
    if (converted && tmp && npts > 0 && h5zv_type_has_pointers(mf)) {
        /* the conversion allocated vlen parts (ours to free) and bit-copied references (the caller's) */
        h5zv_type_zero_refs(mf, tmp, (size_t)npts);
        h5zv_reclaim(mf, (size_t)npts, tmp);
    }
    json_object_put(val);
    free(tmp);
    free(bkg);
    h5zv_type_release(mf);
    return ret;
}

/* H5A_info_t of attribute `name`; `pos` its creation-order position when the caller knows it (an
 * iteration: attr_order), else -1 (found by a walk of the node's attributes). */
static int
attr_info(h5zv_node *n, const char *name, long pos, H5A_info_t *info)
{
    hid_t t = H5I_INVALID_HID, s = H5I_INVALID_HID;
    bool  txt;
    int   ret = -1;

    if (pos < 0)
        pos = attr_position(n, name);

    memset(info, 0, sizeof *info);
    if (pos >= 0) {
        info->corder_valid = true;
        info->corder       = (H5O_msg_crt_idx_t)pos;
    }
    {
        /* a recorded type and shape answer without making a dataspace */
        struct json_object *rec = attr_record(n, name), *jt, *js;
        size_t              sz;
        if (rec_is_compact(rec) && (t = attr_type_read(n, name, rec, true)) >= 0) {
            if (h5zv_type_std_info(t, NULL, &sz, NULL, NULL)) { /* a predefined integer or float */
                info->cset      = H5T_CSET_ASCII;
                info->data_size = sz;
            }
            else {
                info->cset      = H5Tget_class(t) == H5T_STRING ? H5Tget_cset(t) : H5T_CSET_ASCII;
                info->data_size = H5Tget_size(t);
            }
            ret = 0;
            goto done;
        }
        if (rec && json_object_object_get_ex(rec, "type", &jt) &&
            json_object_object_get_ex(rec, "shape", &js) &&
            (json_object_is_type(js, json_type_null) || json_object_is_type(js, json_type_array)) &&
            (t = attr_type_read(n, name, jt, false)) >= 0) {
            hsize_t np = json_object_is_type(js, json_type_null) ? 0 : 1;
            for (size_t i = 0; np && i < json_object_array_length(js); i++)
                np *= (hsize_t)json_object_get_int64(json_object_array_get_idx(js, i));
            info->cset      = H5Tget_class(t) == H5T_STRING ? H5Tget_cset(t) : H5T_CSET_ASCII;
            info->data_size = np * H5Tget_size(t);
            ret             = 0;
            goto done;
        }
    }
    if (attr_type_space(n, name, &t, &s, &txt) < 0)
        goto done;
    info->cset = H5Tget_class(t) == H5T_STRING ? H5Tget_cset(t) : H5T_CSET_ASCII;
    info->data_size =
        (hsize_t)(H5Sget_simple_extent_type(s) == H5S_NULL ? 0 : H5Sget_simple_extent_npoints(s)) *
        H5Tget_size(t);
    ret = 0;
done:
    h5zv_type_release(t);
    h5zv_close(s);
    return ret;
}

/* The name of the attribute at index `idx` in the given index type and order. */
static char *
attr_by_idx(h5zv_node *n, H5_index_t it, H5_iter_order_t order, hsize_t idx)
{
    size_t cnt   = 0;
    char **names = attr_names(n, &cnt), *res = NULL;
    if (!names)
        return NULL;
    if (it == H5_INDEX_NAME)
        sort_names(names, cnt);
    if (idx < cnt)
        res = strdup(names[order == H5_ITER_DEC ? cnt - 1 - idx : idx]);
    names_free(names, cnt);
    return res;
}

herr_t
h5zv_attr_get(void *obj, H5VL_attr_get_args_t *args, hid_t dxpl_id, void **req)
{
    h5zv_obj  *o = obj;
    h5zv_node *n;
    herr_t     ret = -1;
    char      *nm  = NULL;
    (void)dxpl_id;
    (void)req;

    switch (args->op_type) {
        case H5VL_ATTR_GET_ACPL: {
            struct json_object *rec, *v;
            hid_t               p = H5I_INVALID_HID;
            h5zv_jpath          w;
            if ((n = h5zv_node_get(o->file, o->path)) && (rec = attr_record(n, o->attr_name)) &&
                json_object_object_get_ex(rec, "acpl", &v)) {
                h5zv_meta_where(&w, n, "attrs");
                snprintf(w.s + strlen(w.s), sizeof w.s - strlen(w.s), ".%s.acpl", o->attr_name);
                if (h5zv_reserved_plist(v, H5P_ATTRIBUTE_CREATE, H5I_INVALID_HID, w.s, &p) < 0)
                    goto done;
            }
            args->args.get_acpl.acpl_id = p >= 0 ? p : H5Pcreate(H5P_ATTRIBUTE_CREATE);
            break;
        }
        case H5VL_ATTR_GET_SPACE:
            args->args.get_space.space_id =
                o->attr_space >= 0 ? H5Scopy(o->attr_space) : H5Screate(o->attr_sclass);
            break;
        case H5VL_ATTR_GET_TYPE: {
            struct json_object *rec, *v;
            hid_t               id = H5I_INVALID_HID;
            if ((n = h5zv_node_get(o->file, o->path)) && (rec = attr_record(n, o->attr_name)) &&
                json_object_object_get_ex(rec, "ctype", &v))
                id = h5zv_type_committed_id(o->file, json_object_get_string(v));
            args->args.get_type.type_id = id >= 0 ? id : H5Tcopy(o->attr_type);
            break;
        }
        case H5VL_ATTR_GET_STORAGE_SIZE: {
            *args->args.get_storage_size.data_size = (hsize_t)o->attr_npts * H5Tget_size(o->attr_type);
            break;
        }
        case H5VL_ATTR_GET_NAME: {
            H5VL_attr_get_name_args_t *g = &args->args.get_name;
            const char                *name;
            if (g->loc_params.type == H5VL_OBJECT_BY_SELF)
                name = o->attr_name;
            else {
                H5VL_loc_params_t lp            = g->loc_params;
                lp.type                         = H5VL_OBJECT_BY_NAME;
                lp.loc_data.loc_by_name.name    = g->loc_params.loc_data.loc_by_idx.name;
                lp.loc_data.loc_by_name.lapl_id = g->loc_params.loc_data.loc_by_idx.lapl_id;
                if (!(n = attr_parent(o, &lp, NULL)))
                    goto done;
                if (!(nm = attr_by_idx(n, g->loc_params.loc_data.loc_by_idx.idx_type,
                                       g->loc_params.loc_data.loc_by_idx.order,
                                       g->loc_params.loc_data.loc_by_idx.n)))
                    H5ZV_GOTO_ERROR("attribute index %llu out of range",
                                    (unsigned long long)g->loc_params.loc_data.loc_by_idx.n);
                name = nm;
            }
            if (!name)
                H5ZV_GOTO_ERROR("not an attribute");
            if (g->buf && g->buf_size) {
                size_t k = strlen(name) < g->buf_size - 1 ? strlen(name) : g->buf_size - 1;
                memcpy(g->buf, name, k);
                g->buf[k] = '\0';
            }
            if (g->attr_name_len)
                *g->attr_name_len = strlen(name);
            break;
        }
        case H5VL_ATTR_GET_INFO: {
            H5VL_attr_get_info_args_t *g = &args->args.get_info;
            const char                *name;
            if (g->loc_params.type == H5VL_OBJECT_BY_SELF && !g->attr_name) {
                if (!(n = h5zv_node_get(o->file, o->path)))
                    goto done;
                name = o->attr_name;
            }
            else if (g->loc_params.type == H5VL_OBJECT_BY_IDX) {
                H5VL_loc_params_t lp            = g->loc_params;
                lp.type                         = H5VL_OBJECT_BY_NAME;
                lp.loc_data.loc_by_name.name    = g->loc_params.loc_data.loc_by_idx.name;
                lp.loc_data.loc_by_name.lapl_id = g->loc_params.loc_data.loc_by_idx.lapl_id;
                if (!(n = attr_parent(o, &lp, NULL)))
                    goto done;
                if (!(nm = attr_by_idx(n, g->loc_params.loc_data.loc_by_idx.idx_type,
                                       g->loc_params.loc_data.loc_by_idx.order,
                                       g->loc_params.loc_data.loc_by_idx.n)))
                    H5ZV_GOTO_ERROR("attribute index out of range");
                name = nm;
            }
            else {
                if (!(n = attr_parent(o, &g->loc_params, NULL)))
                    goto done;
                name = g->attr_name;
            }
            if (!name || !attr_exists(n, name))
                H5ZV_GOTO_ERROR("attribute '%s' doesn't exist", name ? name : "");
            if (attr_info(n, name, -1, g->ainfo) < 0)
                goto done;
            break;
        }
        default:
            H5ZV_GOTO_ERROR("attribute get operation %d is not supported", (int)args->op_type);
    }
    ret = 0;
done:
    free(nm);
    return ret;
}

/* Attribute `name` of `n` is deleted: its committed type, if any, loses a user. */
static void
attr_release_ctype(h5zv_file *f, h5zv_node *n, const char *name)
{
    struct json_object *rec = attr_record(n, name), *v;
    if (rec && json_object_object_get_ex(rec, "ctype", &v))
        h5zv_type_users_add(f, json_object_get_string(v), -1);
}

static void
attr_remove(h5zv_file *f, h5zv_node *n, const char *name)
{
    struct json_object *recs = attr_records(n, false);
    h5zv_refidx_touch(f, n->path); /* references the next move rewrites (vol/refidx.c) */
    attr_value_del(n, name);
    if (recs)
        json_object_object_del(recs, name);
    h5zv_node_mark_dirty(n);
}

herr_t
h5zv_attr_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_attr_specific_args_t *args, hid_t dxpl_id,
                   void **req)
{
    h5zv_obj  *o = obj;
    h5zv_node *n;
    char      *path = NULL, *nm = NULL;
    herr_t     ret = -1;
    (void)dxpl_id;
    (void)req;

    if (!(n = attr_parent(o, loc, &path)))
        goto done;
    switch (args->op_type) {
        case H5VL_ATTR_EXISTS:
            *args->args.exists.exists = attr_exists(n, args->args.exists.name);
            break;
        case H5VL_ATTR_DELETE:
            if (o->file->intent != H5F_ACC_RDWR)
                H5ZV_GOTO_ERROR("can't delete attribute: file is read-only");
            if (!attr_exists(n, args->args.del.name))
                H5ZV_GOTO_ERROR("can't delete attribute '%s' of '/%s': it doesn't exist", args->args.del.name,
                                path);
            attr_release_ctype(o->file, n, args->args.del.name);
            attr_remove(o->file, n, args->args.del.name);
            attr_dims_touch(o->file, n, args->args.del.name);
            if (attr_fill_touch(o->file, n, args->args.del.name) < 0)
                goto done;
            break;
        case H5VL_ATTR_DELETE_BY_IDX: {
            H5VL_attr_delete_by_idx_args_t *d = &args->args.delete_by_idx;
            if (o->file->intent != H5F_ACC_RDWR)
                H5ZV_GOTO_ERROR("can't delete attribute: file is read-only");
            if (!(nm = attr_by_idx(n, d->idx_type, d->order, d->n)))
                H5ZV_GOTO_ERROR("attribute index %llu of '/%s' out of range", (unsigned long long)d->n, path);
            attr_release_ctype(o->file, n, nm);
            attr_remove(o->file, n, nm);
            attr_dims_touch(o->file, n, nm);
            if (attr_fill_touch(o->file, n, nm) < 0)
                goto done;
            break;
        }
        case H5VL_ATTR_RENAME: {
            const char         *from = args->args.rename.old_name, *to = args->args.rename.new_name;
            struct json_object *v = NULL, *recs = attr_records(n, false), *r = NULL;
            if (o->file->intent != H5F_ACC_RDWR)
                H5ZV_GOTO_ERROR("can't rename attribute: file is read-only");
            if (!attr_exists(n, from))
                H5ZV_GOTO_ERROR("can't rename attribute '%s' of '/%s': it doesn't exist", from, path);
            if (attr_exists(n, to))
                H5ZV_GOTO_ERROR("can't rename attribute '%s' to '%s': the new name exists", from, to);
            if (attr_not_hdf5(n, to))
                H5ZV_GOTO_ERROR("can't rename attribute '%s' to '%s': zarr keeps the dimension names of "
                                "arrays under that name",
                                from, to);
            attr_value_get(n, from, &v);
            v = json_object_get(v);
            if (recs && json_object_object_get_ex(recs, from, &r))
                json_object_object_add(recs, to, json_object_get(r));
            attr_remove(o->file, n, from);
            attr_value_set(n, to, v);
            attr_dims_touch(o->file, n, from);
            attr_dims_touch(o->file, n, to);
            if (attr_fill_touch(o->file, n, from) < 0 || attr_fill_touch(o->file, n, to) < 0)
                goto done;
            break;
        }
        case H5VL_ATTR_ITER: {
            H5VL_attr_iterate_args_t *it  = &args->args.iterate;
            size_t                    cnt = 0;
            char                    **names;
            attr_at                  *at;
            hid_t                     loc_id;
            h5zv_obj                 *holder;
            H5I_type_t                t = n->type == ZARR_NODE_GROUP ? H5I_GROUP : H5I_DATASET;
            if (!(names = attr_names(n, &cnt)))
                H5ZV_GOTO_ERROR("out of memory");
            /* each attribute's position from the list: no walk of the attributes per attribute */
            if (!(at = attr_order(names, cnt, it->idx_type == H5_INDEX_NAME))) {
                names_free(names, cnt);
                H5ZV_GOTO_ERROR("out of memory");
            }
            /* the callback's location: a dataset is loaded (type, space) when the callback asks it
             * something (h5zv_dataset_ready), as one opened by token is; H5Aopen on it needs only the
             * node */
            if (!(holder = t == H5I_DATASET ? h5zv_dataset_open_lazy(o->file, path)
                                            : h5zv_obj_new(o->file, H5I_GROUP, path))) {
                free(at);
                names_free(names, cnt);
                goto done;
            }
            if ((loc_id = H5VLwrap_register(holder, t)) < 0) {
                h5zv_obj_free(holder);
                free(at);
                names_free(names, cnt);
                H5ZV_GOTO_ERROR("can't register an id for '/%s'", path);
            }
            herr_t r = 0;
            for (size_t k = it->idx ? (size_t)*it->idx : 0; k < cnt; k++) {
                size_t     i = it->order == H5_ITER_DEC ? cnt - 1 - k : k;
                H5A_info_t info;
                attr_info(n, at[i].name, at[i].pos, &info);
                r = it->op(loc_id, at[i].name, &info, it->op_data);
                if (it->idx)
                    *it->idx = k + 1;
                if (r != 0)
                    break;
            }
            H5Idec_ref(loc_id);
            free(at);
            names_free(names, cnt);
            free(path);
            return r;
        }
    }
    ret = 0;
done:
    free(path);
    free(nm);
    return ret;
}

herr_t
h5zv_attr_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    (void)obj;
    (void)dxpl_id;
    (void)req;
    h5zv_err_push(__func__, __LINE__, "native-only attribute operation %d is not supported", args->op_type);
    return -1;
}

herr_t
h5zv_attr_close(void *attr, hid_t dxpl_id, void **req)
{
    (void)dxpl_id;
    (void)req;
    h5zv_obj_free(attr);
    return 0;
}
