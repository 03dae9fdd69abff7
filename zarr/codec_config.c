/*
 * codec_config.c: reading codec configurations (integers, numbers, booleans, strings, ranges) with
 * messages that name the codec and the key, and the small JSON and size helpers every codec class
 * (zarr/codecs/) shares.
 */
#include "codec_class.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct json_object *
zarr__codec_cfg_get(struct json_object *cfg, const char *key)
{
    struct json_object *v = NULL;
    if (cfg && json_object_object_get_ex(cfg, key, &v))
        return v;
    return NULL;
}

/* Integer config value; *present false (and *out = def) when absent. Strings holding an integer are
 * accepted when `allow_string`: NCZarr (netCDF-C 4.9) writes zstd and zlib levels and the shuffle
 * element size that way ({"id": "zlib", "level": "2"}, {"id": "shuffle", "elementsize": "0"}). */
int
zarr__codec_cfg_int(const char *codec, struct json_object *cfg, const char *key, bool allow_string,
                    long long def, long long *out)
{
    struct json_object *v = zarr__codec_cfg_get(cfg, key);
    *out                  = def;
    if (!v)
        return ZARR_OK;
    switch (json_object_get_type(v)) {
        case json_type_int:
            errno = 0;
            *out  = json_object_get_int64(v);
            if (errno == 0)
                return ZARR_OK;
            break;
        case json_type_double: {
            double d = json_object_get_double(v);
            if (d > -1e15 && d < 1e15 && d == (double)(long long)d) { /* range first: no UB cast */
                *out = (long long)d;
                return ZARR_OK;
            }
            break;
        }
        case json_type_string:
            if (allow_string) {
                const char *s = json_object_get_string(v);
                char       *end;
                errno       = 0;
                long long x = strtoll(s, &end, 10);
                if (*s && !*end && errno == 0) {
                    *out = x;
                    return ZARR_OK;
                }
            }
            break;
        default:
            break;
    }
    return zarr_error(ZARR_EMETA, "codec '%s': '%s' must be an integer, got %s", codec, key,
                      json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

int
zarr__codec_cfg_bool(const char *codec, struct json_object *cfg, const char *key, bool def, bool *out)
{
    struct json_object *v = zarr__codec_cfg_get(cfg, key);
    *out                  = def;
    if (!v)
        return ZARR_OK;
    if (json_object_is_type(v, json_type_boolean)) {
        *out = json_object_get_boolean(v);
        return ZARR_OK;
    }
    return zarr_error(ZARR_EMETA, "codec '%s': '%s' must be true or false, got %s", codec, key,
                      json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

int
zarr__codec_cfg_str(const char *codec, struct json_object *cfg, const char *key, const char *def,
                    const char **out)
{
    struct json_object *v = zarr__codec_cfg_get(cfg, key);
    *out                  = def;
    if (!v)
        return ZARR_OK;
    if (json_object_is_type(v, json_type_string)) {
        *out = json_object_get_string(v);
        return ZARR_OK;
    }
    return zarr_error(ZARR_EMETA, "codec '%s': '%s' must be a string, got %s", codec, key,
                      json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

int
zarr__codec_range_check(const char *codec, const char *key, long long v, long long lo, long long hi)
{
    if (v < lo || v > hi)
        return zarr_error(ZARR_EMETA, "codec '%s': '%s' is %lld, want %lld..%lld", codec, key, v, lo, hi);
    return ZARR_OK;
}

int
zarr__codec_cfg_int_range(const char *codec, struct json_object *cfg, const char *key, bool allow_string,
                          long long def, long long lo, long long hi, long long *out)
{
    int rc = zarr__codec_cfg_int(codec, cfg, key, allow_string, def, out);
    return rc != ZARR_OK ? rc : zarr__codec_range_check(codec, key, *out, lo, hi);
}

int
zarr__codec_cfg_num(const char *codec, struct json_object *cfg, const char *key, double def, double *out)
{
    struct json_object *v = zarr__codec_cfg_get(cfg, key);
    *out                  = def;
    if (!v)
        return ZARR_OK;
    if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) {
        *out = json_object_get_double(v);
        if (isfinite(*out))
            return ZARR_OK;
    }
    return zarr_error(ZARR_EMETA, "codec '%s': '%s' must be a finite number, got %s", codec, key,
                      json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

int
zarr__codec_json_add(struct json_object *o, const char *key, struct json_object *v)
{
    if (!v || json_object_object_add(o, key, v) != 0) {
        json_object_put(v);
        return zarr_error(ZARR_ENOMEM, "out of memory building codec JSON");
    }
    return ZARR_OK;
}

size_t
zarr__codec_grow_bound(size_t x)
{
    uint64_t r;
    if (x == ZARR__SIZE_UNKNOWN || !zarr__add_ok(x, x / 16 + 4096, &r) || r >= ZARR__SIZE_UNKNOWN)
        return ZARR__SIZE_UNKNOWN;
    return (size_t)r;
}
