/*
 * reserved.c: the readers of reserved fields (`_h5zarr`, vol/reserved.h) in either form: the JSON one
 * (vol/type_json.c, vol/plist_json.c) or the earlier binary one, which is refused here with the message
 * that names the opt-in (vol/reserved_legacy.c converts it when the user allows), and where a field
 * lives, for messages.
 */
#include "h5zv.h"
#include "reserved.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

const char *
h5zv_meta_where(h5zv_jpath *p, h5zv_node *n, const char *key)
{
    snprintf(p->s, sizeof p->s, "'/%s%s%s' %s.%s", n->path, *n->path ? "/" : "",
             n->type == ZARR_NODE_ARRAY && n->a && zarr_array_meta_get(n->a)->hidden ? ZARR_HIDDEN_DOC
             : n->format != 2                                                        ? "zarr.json"
             : n->reserved_from_attrs                                                ? ".zattrs"
             : n->type == ZARR_NODE_GROUP                                            ? ".zgroup"
                                                                                     : ".zarray",
             H5ZV_META_KEY, key);
    return p->s;
}

bool
h5zv_reserved_legacy(struct json_object *v)
{
    return json_object_is_type(v, json_type_string) && h5zv_b64_like(json_object_get_string(v));
}

int
h5zv_reserved_plist(struct json_object *v, hid_t cls, hid_t type, const char *where, hid_t *out)
{
    *out = H5I_INVALID_HID;
    if (h5zv_reserved_legacy(v)) {
        H5ZV_LEGACY_REFUSE(where, "H5Pencode");
        return -1;
    }
    if (cls == H5P_DATASET_CREATE)
        return h5zv_dcpl_from_json(v, type, where, out);
    if (cls == H5P_GROUP_CREATE)
        return h5zv_gcpl_from_json(v, where, out);
    if (cls == H5P_FILE_CREATE)
        return h5zv_fcpl_from_json(v, where, out);
    if (cls == H5P_ATTRIBUTE_CREATE)
        return h5zv_acpl_from_json(v, where, out);
    h5zv_err_push(__func__, __LINE__, "%s: no reader for this property list class", where);
    return -1;
}

int
h5zv_reserved_type(struct json_object *v, const char *where, hid_t *out)
{
    *out = H5I_INVALID_HID;
    if (h5zv_reserved_legacy(v)) {
        H5ZV_LEGACY_REFUSE(where, "H5Tencode");
        return -1;
    }
    return h5zv_type_from_json(v, where, out);
}

bool
h5zv_reserved_track_times(struct json_object *v)
{
    struct json_object *t;
    /* the earlier form is not decoded here (vol/reserved_legacy.c converts it when allowed) */
    return !(json_object_is_type(v, json_type_object) && json_object_object_get_ex(v, "track_times", &t) &&
             json_object_is_type(t, json_type_boolean) && !json_object_get_boolean(t));
}
