/*
 * util.c: the floor of the connector (vol/util.h): helpers every vol/ file may use and that call nothing
 * of vol/ but the errors of vol/err.c: checking a property-list argument, an HDF5 object's binary
 * encoding as base64, base64 itself (RFC 4648, used for encoded HDF5 types and raw attribute bytes),
 * the hash that gives a path its token and a prefix test on node paths.
 */
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* ---- tokens and node paths ----------------------------------------------------------------------- */
void
h5zv_token_from_path(const char *path, H5O_token_t *tok)
{
    XXH128_hash_t h = XXH3_128bits(path, strlen(path));
    memset(tok, 0, sizeof *tok);
    memcpy(tok->__data, &h.low64, 8);
    memcpy(tok->__data + 8, &h.high64, 8);
}

bool
h5zv_path_under(const char *path, const char *top, size_t n)
{
    /* the first byte first: most paths differ there, and a rename walks every open object */
    if (n && path[0] != top[0])
        return false;
    return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/' || n == 0);
}

char *
h5zv_path_child(const char *parent, const char *leaf)
{
    size_t pl = strlen(parent), ll = strlen(leaf), sep = pl ? 1 : 0;
    char  *p = malloc(pl + sep + ll + 1);
    if (!p)
        return NULL;
    memcpy(p, parent, pl);
    p[pl] = '/';
    memcpy(p + pl + sep, leaf, ll + 1);
    return p;
}

uint64_t
h5zv_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void
h5zv_cat3(char *dst, size_t cap, const char *a, const char *b, const char *c)
{
    const char *s[3] = {a, b, c};
    size_t      n    = 0;
    for (int i = 0; i < 3; i++) {
        size_t l = strlen(s[i]);
        if (l > cap - 1 - n)
            l = cap - 1 - n;
        memmove(dst + n, s[i], l);
        n += l;
    }
    dst[n] = '\0';
}

char *
h5zv_path_moved(const char *path, size_t fl, const char *to)
{
    size_t tl = strlen(to), rl = strlen(path + fl);
    char  *p = malloc(tl + rl + 1);
    if (!p)
        return NULL;
    memcpy(p, to, tl);
    memcpy(p + tl, path + fl, rl + 1);
    return p;
}

/* ---- property-list arguments, HDF5 objects as base64 --------------------------------------------- */
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

/* ---- base64 -------------------------------------------------------------------------------------- */
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

bool
h5zv_b64_like(const char *s)
{
    size_t n = strlen(s);
    if (n < 12 || n % 4)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!b64val[(unsigned char)s[i]] && !(s[i] == '=' && i + 2 >= n))
            return false;
    return true;
}
