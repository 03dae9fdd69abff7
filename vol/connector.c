/*
 * connector.c: the zarr side of the connector's class (the class table itself is in route.c):
 * initialization (the error class: vol/err.c), capability flags, object tokens, property-list encoding,
 * base64, and the readers of reserved fields in either form (JSON, vol/reserved.h, or the earlier binary
 * one).
 *
 * Tokens: an object's token is the 128-bit XXH3 hash of its node path, so tokens are stable across
 * opens and processes; the file keeps no table, and a token is turned back into a path by walking
 * the hierarchy (h5zv_token_to_path).
 */
#include "h5zv.h"
#include "config.h"
#include "reserved.h"

#include <ctype.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* HDF5 registers the class again whenever no application id of an earlier registration is left (each
 * H5Pset_fapl_zarr closes its id) and calls init/term per registration: the shared state (error class,
 * memos) lives until the last registration goes, or errors pushed after closing one fapl would be lost. */
static int h5zv_nregs;

herr_t
h5zv_init(hid_t vipl_id)
{
    (void)vipl_id;
    h5zv_nregs++;
    h5zv_err_init();
    return 0;
}

static void plist_memo_clear(void);

herr_t
h5zv_term(void)
{
    if (h5zv_nregs > 0 && --h5zv_nregs > 0)
        return 0;
    plist_memo_clear();
    h5zv_plist_defaults_clear();
    /* no pool thread outlives the library (H5close, or HDF5's atexit handler): the engine's jobs are
     * synchronous, so none is running; pools restart their threads if HDF5 is used again */
    zarr_pool_stop_all();
    h5zv_err_term();
    return 0;
}

/* ---- info: vol/config.c (h5zv_info_copy/cmp/free/to_str/from_str) ------------------------------- */

/* ---- introspection ------------------------------------------------------------------------------- */
uint64_t
h5zv_cap_flags(const void *info)
{
    (void)info;
    return H5ZV_CAP_FLAGS;
}

/* ---- tokens -------------------------------------------------------------------------------------- */
void
h5zv_token_from_path(const char *path, H5O_token_t *tok)
{
    XXH128_hash_t h = XXH3_128bits(path, strlen(path));
    memset(tok, 0, sizeof *tok);
    memcpy(tok->__data, &h.low64, 8);
    memcpy(tok->__data + 8, &h.high64, 8);
}

herr_t
h5zv_token_cmp(void *obj, const H5O_token_t *t1, const H5O_token_t *t2, int *cmp_value)
{
    (void)obj;
    *cmp_value = memcmp(t1, t2, sizeof *t1);
    return 0;
}

herr_t
h5zv_token_to_str(void *obj, H5I_type_t obj_type, const H5O_token_t *token, char **token_str)
{
    char *s = H5allocate_memory(2 * H5O_MAX_TOKEN_SIZE + 1, false);
    (void)obj;
    (void)obj_type;
    if (!s)
        return -1;
    for (int i = 0; i < H5O_MAX_TOKEN_SIZE; i++)
        sprintf(s + 2 * i, "%02x", token->__data[i]);
    *token_str = s;
    return 0;
}

herr_t
h5zv_token_from_str(void *obj, H5I_type_t obj_type, const char *token_str, H5O_token_t *token)
{
    (void)obj;
    (void)obj_type;
    if (!token_str || strlen(token_str) != 2 * H5O_MAX_TOKEN_SIZE) {
        h5zv_err_push(__func__, __LINE__, "token string '%s' is not %d hex digits",
                      token_str ? token_str : "", 2 * H5O_MAX_TOKEN_SIZE);
        return -1;
    }
    for (int i = 0; i < H5O_MAX_TOKEN_SIZE; i++) {
        unsigned v;
        if (sscanf(token_str + 2 * i, "%2x", &v) != 1) {
            h5zv_err_push(__func__, __LINE__, "token string '%s' is not hex", token_str);
            return -1;
        }
        token->__data[i] = (uint8_t)v;
    }
    return 0;
}

/* ---- property lists ------------------------------------------------------------------------------ */
int
h5zv_check_plist(hid_t id, hid_t cls, const char *what)
{
    /* HDF5 hands a callback its class's default list when the caller passed H5P_DEFAULT: a list of that
     * class by construction, known without the two API calls below (the library's globals, read as they
     * are: the connector runs inside an open library). */
    static const hid_t *const defaults[][2] = {
        {&H5P_CLS_ATTRIBUTE_ACCESS_ID_g, &H5P_LST_ATTRIBUTE_ACCESS_ID_g},
        {&H5P_CLS_ATTRIBUTE_CREATE_ID_g, &H5P_LST_ATTRIBUTE_CREATE_ID_g},
        {&H5P_CLS_DATASET_ACCESS_ID_g, &H5P_LST_DATASET_ACCESS_ID_g},
        {&H5P_CLS_DATASET_CREATE_ID_g, &H5P_LST_DATASET_CREATE_ID_g},
        {&H5P_CLS_DATATYPE_ACCESS_ID_g, &H5P_LST_DATATYPE_ACCESS_ID_g},
        {&H5P_CLS_DATATYPE_CREATE_ID_g, &H5P_LST_DATATYPE_CREATE_ID_g},
        {&H5P_CLS_GROUP_ACCESS_ID_g, &H5P_LST_GROUP_ACCESS_ID_g},
        {&H5P_CLS_GROUP_CREATE_ID_g, &H5P_LST_GROUP_CREATE_ID_g},
        {&H5P_CLS_LINK_ACCESS_ID_g, &H5P_LST_LINK_ACCESS_ID_g},
        {&H5P_CLS_LINK_CREATE_ID_g, &H5P_LST_LINK_CREATE_ID_g},
        {&H5P_CLS_OBJECT_COPY_ID_g, &H5P_LST_OBJECT_COPY_ID_g},
    };
    if (id == H5P_DEFAULT)
        return 0;
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        if (cls == *defaults[i][0] && id == *defaults[i][1])
            return 0;
    if (H5Iget_type(id) != H5I_GENPROP_LST || H5Pisa_class(id, cls) <= 0) {
        h5zv_err_push(__func__, __LINE__, "invalid %s (id %lld is not one)", what, (long long)id);
        return -1;
    }
    return 0;
}

herr_t
h5zv_pencode(hid_t plist, void *buf, size_t *n)
{
    return H5Pencode2(plist, buf, n, H5P_DEFAULT);
}

char *
h5zv_encode_b64(hid_t id, herr_t (*enc)(hid_t, void *, size_t *))
{
    size_t n = 0;
    void  *buf;
    char  *s;
    if (enc(id, NULL, &n) < 0 || !(buf = malloc(n)))
        return NULL;
    if (enc(id, buf, &n) < 0) {
        free(buf);
        return NULL;
    }
    s = h5zv_b64_encode(buf, n);
    free(buf);
    return s;
}

hid_t
h5zv_decode_b64(const char *b64, hid_t (*dec)(const void *))
{
    size_t n = 0;
    void  *buf;
    hid_t  id;
    if (!b64 || !(buf = h5zv_b64_decode(b64, &n)))
        return H5I_INVALID_HID;
    id = dec(buf);
    free(buf);
    return id;
}

char *
h5zv_plist_encode(hid_t plist)
{
    return h5zv_encode_b64(plist, h5zv_pencode);
}

/* Decoded property lists, by their base64 text: every dataset of a file usually carries the same
 * dcpl, and H5Pdecode costs ~3x an H5Pcopy (W4 opens 1000 datasets). Callers get a copy, never the
 * kept list. Cleared when the connector is terminated (before HDF5 closes its ids). */
#define PLIST_MEMO 8
static struct {
    char *b64;
    hid_t id;
} plist_memo[PLIST_MEMO];
static unsigned plist_memo_next;

static void
plist_memo_clear(void)
{
    for (unsigned i = 0; i < PLIST_MEMO; i++) {
        if (plist_memo[i].b64 && H5Iis_valid(plist_memo[i].id))
            H5Pclose(plist_memo[i].id);
        free(plist_memo[i].b64);
        plist_memo[i].b64 = NULL;
        plist_memo[i].id  = H5I_INVALID_HID;
    }
}

/* Stores written before the fix of issue 12 hold dcpls whose fill value is of a type with pointers
 * (a vlen string: H5Pencode copies the fill buffer, i.e. a pointer of the writing process). HDF5
 * follows such a pointer whenever it copies, converts or frees the fill value (H5Pcopy, H5Pclose,
 * H5Pget_fill_value), so those bytes must never reach H5Pdecode as they are. This zeroes them in the
 * encoded list `buf` (`n` bytes): NULL pointers and zero lengths, which HDF5 copies and frees safely.
 * The property is H5P__dcrt_fill_value_enc's: "fill_value\0", alloc time and fill time (1 byte each),
 * the fill size (int64 LE; <= 0: no buffer follows), the buffer, a 1-byte length L, the encoded type's
 * size (L bytes LE), the type (H5Tencode: 0x03 0x00 ...). Returns -1 (nothing pushed) when a
 * "fill_value" property is there but does not parse, so its bytes can't be made safe: the caller then
 * does without the list. */
static int
plist_clear_pointer_fill(uint8_t *buf, size_t n)
{
    static const char name[] = "fill_value"; /* with its NUL: 11 bytes */
    int               bad = 0, ok = 0;

    for (size_t i = 2; i + sizeof name <= n; i++) {
        size_t   j = i + sizeof name, k, t, dts = 0;
        int64_t  size = 0;
        unsigned L;
        hid_t    ft;
        bool     ptrs;

        if (memcmp(buf + i, name, sizeof name) != 0)
            continue;
        if (j + 10 > n) {
            bad++;
            continue;
        }
        for (int b = 7; b >= 0; b--)
            size = (int64_t)(((uint64_t)size << 8) | buf[j + 2 + (size_t)b]);
        if (size <= 0) { /* default (0) or undefined (-1): no buffer */
            ok++;
            continue;
        }
        k = j + 10;
        if ((uint64_t)size > n - k || n - k - (size_t)size < 1) {
            bad++;
            continue;
        }
        t = k + (size_t)size;
        L = buf[t++];
        if (L < 1 || L > 8 || L > n - t) {
            bad++;
            continue;
        }
        for (unsigned b = L; b-- > 0;)
            dts = (dts << 8) | buf[t + b];
        t += L;
        /* the type, then at least the list's terminating byte */
        if (dts < 2 || dts >= n - t || buf[t] != 0x03 || buf[t + 1] != 0x00) {
            bad++;
            continue;
        }
        H5E_BEGIN_TRY { ft = H5Tdecode(buf + t); }
        H5E_END_TRY
        if (ft < 0 || H5Tget_size(ft) != (size_t)size) {
            h5zv_close(ft);
            bad++;
            continue;
        }
        ptrs = h5zv_type_has_pointers(ft);
        h5zv_close(ft);
        if (ptrs)
            memset(buf + k, 0, (size_t)size);
        ok++;
        i = t + dts - 1;
    }
    return bad && !ok ? -1 : 0;
}

hid_t
h5zv_plist_decode(const char *b64)
{
    hid_t  id, keep;
    size_t n = 0;
    void  *buf;
    if (!b64)
        return H5I_INVALID_HID;
    for (unsigned i = 0; i < PLIST_MEMO; i++)
        if (plist_memo[i].b64 && strcmp(plist_memo[i].b64, b64) == 0 &&
            H5Iget_type(plist_memo[i].id) == H5I_GENPROP_LST)
            return H5Pcopy(plist_memo[i].id);
    if (!(buf = h5zv_b64_decode(b64, &n)))
        return H5I_INVALID_HID;
    id = plist_clear_pointer_fill(buf, n) < 0 ? H5I_INVALID_HID : H5Pdecode(buf);
    free(buf);
    if (id < 0)
        return id;
    if ((keep = H5Pcopy(id)) >= 0) {
        unsigned i = plist_memo_next++ % PLIST_MEMO;
        char    *t = strdup(b64);
        if (!t) {
            H5Pclose(keep);
            return id;
        }
        if (plist_memo[i].b64 && H5Iis_valid(plist_memo[i].id))
            H5Pclose(plist_memo[i].id);
        free(plist_memo[i].b64);
        plist_memo[i].b64 = t;
        plist_memo[i].id  = keep;
    }
    return id;
}

/* ---- base64 (RFC 4648, used for encoded HDF5 types and raw attribute bytes) ---------------------- */
static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *
h5zv_b64_encode(const void *p, size_t n)
{
    const uint8_t *s   = p;
    char          *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
    size_t         i;

    if (!out)
        return NULL;
    for (i = 0; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        *o++       = b64chars[v >> 18 & 63];
        *o++       = b64chars[v >> 12 & 63];
        *o++       = b64chars[v >> 6 & 63];
        *o++       = b64chars[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0);
        *o++       = b64chars[v >> 18 & 63];
        *o++       = b64chars[v >> 12 & 63];
        *o++       = i + 1 < n ? b64chars[v >> 6 & 63] : '=';
        *o++       = '=';
    }
    *o = '\0';
    return out;
}

/* Value of each base64 character plus one (0: not a base64 character). */
static const uint8_t b64val[256] = {
    ['A'] = 1,  ['B'] = 2,  ['C'] = 3,  ['D'] = 4,  ['E'] = 5,  ['F'] = 6,  ['G'] = 7,  ['H'] = 8,
    ['I'] = 9,  ['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13, ['N'] = 14, ['O'] = 15, ['P'] = 16,
    ['Q'] = 17, ['R'] = 18, ['S'] = 19, ['T'] = 20, ['U'] = 21, ['V'] = 22, ['W'] = 23, ['X'] = 24,
    ['Y'] = 25, ['Z'] = 26, ['a'] = 27, ['b'] = 28, ['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32,
    ['g'] = 33, ['h'] = 34, ['i'] = 35, ['j'] = 36, ['k'] = 37, ['l'] = 38, ['m'] = 39, ['n'] = 40,
    ['o'] = 41, ['p'] = 42, ['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48,
    ['w'] = 49, ['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56,
    ['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, ['+'] = 63, ['/'] = 64,
};

void *
h5zv_b64_decode(const char *s, size_t *n)
{
    size_t   len = strlen(s), k = 0;
    uint8_t *out  = malloc(len / 4 * 3 + 3);
    uint32_t acc  = 0;
    int      bits = 0;

    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        unsigned v = b64val[(unsigned char)s[i]];
        if (s[i] == '=')
            break;
        if (!v) {
            free(out);
            return NULL;
        }
        acc = acc << 6 | (uint32_t)(v - 1);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[k++] = (uint8_t)(acc >> bits);
        }
    }
    *n = k;
    return out;
}

/* ---- reserved fields in either form ------------------------------------------------------------- */
const char *
h5zv_meta_where(h5zv_jpath *p, h5zv_node *n, const char *key)
{
    snprintf(p->s, sizeof p->s, "'/%s%s%s' %s.%s", n->path, *n->path ? "/" : "",
             n->format != 2               ? "zarr.json"
             : n->reserved_from_attrs     ? ".zattrs"
             : n->type == ZARR_NODE_GROUP ? ".zgroup"
                                          : ".zarray",
             H5ZV_META_KEY, key);
    return p->s;
}

bool
h5zv_reserved_legacy(struct json_object *v)
{
    const char *s;
    size_t      n;
    if (!json_object_is_type(v, json_type_string))
        return false;
    s = json_object_get_string(v);
    n = strlen(s);
    if (n < 12 || n % 4)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!b64val[(unsigned char)s[i]] && !(s[i] == '=' && i + 2 >= n))
            return false;
    return true;
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
