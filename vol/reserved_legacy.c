/*
 * reserved_legacy.c: stores written before the JSON form of `_h5zarr` (docs/FORMAT.md, "Stores written in
 * the earlier binary form"). Their datatypes and creation property lists are base64 of HDF5's own
 * encodings (H5Tencode, H5Pencode), which only HDF5's decoders read, and those are not written for
 * hostile input. By default nothing here runs: readers refuse such a field with the message of
 * h5zv_reserved_legacy_refuse. With the connector setting `legacy_reserved=1` (docs/CONFIG.md), for
 * stores the user trusts, each node is converted as it is loaded into the node cache
 * (h5zv_reserved_upgrade): every field in the earlier form is decoded and replaced by its JSON form, in
 * memory, so readers see only the JSON form; a store opened read-write is walked whole at open
 * (h5zv_reserved_upgrade_all) and every converted node is written back at flush/close, which converts
 * the store in place.
 */
#include "h5zv.h"
#include "config.h"
#include "reserved.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

void
h5zv_reserved_legacy_refuse(const char *file, const char *func, int line, const char *where, const char *enc)
{
    h5zv_err_push_at(
        file, func, line,
        "%s: in the earlier binary form of " H5ZV_META_KEY
        " (base64 of HDF5's %s output), which is not read by default: HDF5's decoders are not made "
        "for untrusted input. To convert a store you trust, open it read-write once with the "
        "connector setting legacy_reserved=1 (HDF5_VOL_CONNECTOR=\"zarr legacy_reserved=1\", or the "
        "configuration key): its reserved objects are rewritten in the JSON form "
        "(docs/FORMAT.md, \"Stores written in the earlier binary form\")",
        where, enc);
}

/* ---- one field ---------------------------------------------------------------------------------------- */
/* The datatype in `v` (earlier form) as JSON (*out, new), or -1 with an error pushed. */
static int
type_convert(struct json_object *v, const char *where, struct json_object **out)
{
    hid_t t   = h5zv_type_decode(json_object_get_string(v));
    int   ret = -1;
    *out      = NULL;
    if (t < 0)
        H5ZV_GOTO_ERROR("%s: does not decode as a datatype (H5Tdecode; legacy_reserved=1)", where);
    if (h5zv_type_to_json(t, out) < 0)
        H5ZV_GOTO_ERROR("%s: the decoded datatype has no JSON form", where);
    ret = 0;
done:
    h5zv_close(t);
    return ret;
}

/* Replaces meta[key], a datatype in the earlier form, by its JSON form. 1 converted, 0 nothing to do, -1
 * error pushed (the field stays). */
static int
type_field(h5zv_node *n, struct json_object *meta, const char *key)
{
    struct json_object *v, *j = NULL;
    h5zv_jpath          w;
    if (!json_object_object_get_ex(meta, key, &v) || !h5zv_reserved_legacy(v))
        return 0;
    if (type_convert(v, h5zv_meta_where(&w, n, key), &j) < 0)
        return -1;
    json_object_object_add(meta, key, j);
    return 1;
}

/* The property list in `v` (earlier form) of class `cls` as JSON (*out, new); `type`: a dataset's type
 * (dcpls). -1 with an error pushed. */
static int
plist_convert(struct json_object *v, hid_t cls, hid_t type, bool ptr_fill_kept, const char *where,
              struct json_object **out)
{
    hid_t            p = H5I_INVALID_HID, c = H5I_INVALID_HID;
    H5D_fill_value_t fs  = H5D_FILL_VALUE_DEFAULT;
    int              ret = -1, rc = -1;
    *out = NULL;
    H5E_BEGIN_TRY { p = h5zv_plist_decode(json_object_get_string(v)); }
    H5E_END_TRY
    if (p < 0 || H5Pisa_class(p, cls) <= 0)
        H5ZV_GOTO_ERROR("%s: does not decode as a property list of its class (H5Pdecode; legacy_reserved=1)",
                        where);
    if (cls == H5P_DATASET_CREATE) {
        if (type >= 0 && h5zv_type_has_pointers(type)) {
            /* the fill bytes were a pointer of the writing process (zeroed by h5zv_plist_decode): the value
             * is kept beside the dcpl ("fill", "fill_packed") when the store has it, else lost, and the
             * dataset reads HDF5's default fill, as the earlier reader gave it */
            H5Pfill_value_defined(p, &fs);
            if ((c = H5Pcopy(p)) < 0 || H5Pset_fill_value(c, type, NULL) < 0)
                H5ZV_GOTO_ERROR("%s: can't take out the fill value", where);
            rc = h5zv_dcpl_to_json(c, type, out);
            if (rc == 0 && !ptr_fill_kept && fs != H5D_FILL_VALUE_UNDEFINED)
                json_object_object_del(*out, "fill_undefined");
        }
        else
            rc = h5zv_dcpl_to_json(p, type, out);
    }
    else if (cls == H5P_FILE_CREATE)
        rc = h5zv_fcpl_to_json(p, out);
    else if (cls == H5P_GROUP_CREATE)
        rc = h5zv_gcpl_to_json(p, out);
    else
        rc = h5zv_acpl_to_json(p, out);
    if (rc < 0)
        H5ZV_GOTO_ERROR("%s: the decoded property list has no JSON form", where);
    ret = 0;
done:
    h5zv_close(p);
    h5zv_close(c);
    return ret;
}

static int
plist_field(h5zv_node *n, struct json_object *meta, const char *key, hid_t cls, hid_t type, bool kept)
{
    struct json_object *v, *j = NULL;
    h5zv_jpath          w;
    if (!json_object_object_get_ex(meta, key, &v) || !h5zv_reserved_legacy(v))
        return 0;
    if (plist_convert(v, cls, type, kept, h5zv_meta_where(&w, n, key), &j) < 0)
        return -1;
    json_object_object_add(meta, key, j);
    return 1;
}

/* The attribute records (_h5zarr.attrs): compact records and records' "type" and "acpl". 1 if any
 * changed. */
static int
attrs_fields(h5zv_node *n, struct json_object *meta)
{
    struct json_object *recs, *t, *j;
    h5zv_jpath          w;
    int                 changed = 0;
    if (!json_object_object_get_ex(meta, "attrs", &recs) || !json_object_is_type(recs, json_type_object))
        return 0;
    json_object_object_foreach(recs, name, rec)
    {
        char at[sizeof w.s];
        snprintf(at, sizeof at, "%s.%s", h5zv_meta_where(&w, n, "attrs"), name);
        if (h5zv_reserved_legacy(rec)) {
            /* a compact record: stays compact when the type has a short name */
            if (type_convert(rec, at, &j) < 0)
                continue;
            if (!json_object_is_type(j, json_type_string)) {
                struct json_object *full = json_object_new_object();
                json_object_object_add(full, "type", j);
                json_object_object_add(full, "shape", json_object_new_array());
                j = full;
            }
            json_object_object_add(recs, name, j); /* replaces the value; the key (and its order) stays */
            changed = 1;
            continue;
        }
        if (!json_object_is_type(rec, json_type_object))
            continue;
        if (json_object_object_get_ex(rec, "type", &t) && h5zv_reserved_legacy(t)) {
            char tat[sizeof w.s + 8];
            snprintf(tat, sizeof tat, "%s.type", at);
            if (type_convert(t, tat, &j) == 0) {
                json_object_object_add(rec, "type", j);
                changed = 1;
            }
        }
        if (json_object_object_get_ex(rec, "acpl", &t) && h5zv_reserved_legacy(t)) {
            char tat[sizeof w.s + 8];
            snprintf(tat, sizeof tat, "%s.acpl", at);
            if (plist_convert(t, H5P_ATTRIBUTE_CREATE, H5I_INVALID_HID, false, tat, &j) == 0) {
                json_object_object_add(rec, "acpl", j);
                changed = 1;
            }
        }
    }
    return changed;
}

/* ---- nodes -----------------------------------------------------------------------------------------------
 */
/* Ends a conversion step begun with es = h5zv_err_save(): what it pushed is dropped (a field that does
 * not convert stays as it is, and its reader refuses it), the caller's pending errors stay. */
static void
quiet_end(h5zv_errs *es)
{
    if (es)
        h5zv_err_restore(es);
    else
        H5Eclear2(H5E_DEFAULT);
}

void
h5zv_reserved_upgrade(h5zv_file *f, h5zv_node *n)
{
    struct json_object *meta, *v;
    hid_t               type    = H5I_INVALID_HID;
    bool                changed = false;
    h5zv_errs          *es;

    if (!n || (!n->g && !n->a) || !(meta = h5zv_node_meta(n, false)) ||
        !h5zv_file_settings(f)->legacy_reserved)
        return;
    es = h5zv_err_save();
    changed |= type_field(n, meta, "type") > 0;
    changed |= type_field(n, meta, "datatype") > 0;
    changed |= plist_field(n, meta, "gcpl", H5P_GROUP_CREATE, H5I_INVALID_HID, false) > 0;
    changed |= plist_field(n, meta, "fcpl", H5P_FILE_CREATE, H5I_INVALID_HID, false) > 0;
    if (n->type == ZARR_NODE_ARRAY && json_object_object_get_ex(meta, "dcpl", &v) &&
        h5zv_reserved_legacy(v)) {
        /* the dataset's type (converted above) reads the fill value */
        bool kept = json_object_object_get_ex(meta, "fill", NULL) ||
                    json_object_object_get_ex(meta, "fill_packed", NULL);
        if ((type = h5zv_type_from_zarr(zarr_array_meta_get(n->a)->dtype, meta)) >= 0)
            changed |= plist_field(n, meta, "dcpl", H5P_DATASET_CREATE, type, kept) > 0;
    }
    changed |= attrs_fields(n, meta) > 0;
    h5zv_close(type);
    quiet_end(es);
    if (changed && f->intent == H5F_ACC_RDWR)
        h5zv_node_mark_dirty(n); /* written at the next flush: the store is converted */
}

/* ---- the whole store ------------------------------------------------------------------------------------
 */
typedef struct names {
    char **v;
    size_t n, cap;
} names;

static int
name_cb(const char *name, bool is_dir, void *ud)
{
    names *l = ud;
    char  *c;
    (void)is_dir;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **v   = realloc(l->v, cap * sizeof *v);
        if (!v)
            return 1;
        l->v   = v;
        l->cap = cap;
    }
    if (!(c = strdup(name)))
        return 1;
    l->v[l->n++] = c;
    return 0;
}

/* Loads every node below group `path` (depth: nesting so far). */
static void
walk(h5zv_file *f, const char *path, int depth)
{
    names l = {0};
    if (depth > 256 || zarr_group_children(f->store, path, name_cb, &l) != ZARR_OK)
        zarr_error_clear();
    for (size_t i = 0; i < l.n; i++) {
        size_t     len = strlen(path) + strlen(l.v[i]) + 2;
        char      *c   = malloc(len);
        h5zv_node *k;
        if (c) {
            snprintf(c, len, "%s%s%s", path, *path ? "/" : "", l.v[i]);
            if ((k = h5zv_node_get(f, c)) && k->type == ZARR_NODE_GROUP)
                walk(f, c, depth + 1);
        }
        free(c);
        free(l.v[i]);
    }
    free(l.v);
}

void
h5zv_reserved_upgrade_all(h5zv_file *f)
{
    h5zv_errs *es;
    if (f->intent != H5F_ACC_RDWR || !h5zv_file_settings(f)->legacy_reserved)
        return;
    es = h5zv_err_save();
    /* nodes that fail to load are reported when they are opened */
    H5E_BEGIN_TRY { walk(f, "", 0); }
    H5E_END_TRY
    quiet_end(es);
}
