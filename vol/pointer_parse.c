/*
 * pointer_parse.c: parsing and validating a pointer file's record (pointer_parse.h). A pointer comes
 * with the data it points to, so it is untrusted: it may only name a store in its own directory or a
 * well-formed URL (which pointer.c then checks against the configuration in force), and its id must
 * have the one form ids have.
 */
#include "pointer_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
h5zv_pointer_id_ok(const char *s)
{
    for (int i = 0; i < H5ZV_POINTER_ID_LEN; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return s[H5ZV_POINTER_ID_LEN] == '\0';
}

int
h5zv_pointer_is_url(const char *s, size_t n)
{
    size_t k;
    if (n == 0 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
        return 0;
    for (k = 1; k < n && k <= 32; k++)
        if (!((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= '0' && s[k] <= '9') ||
              s[k] == '+' || s[k] == '-' || s[k] == '.'))
            break;
    return k <= 32 && n - k >= 3 && memcmp(s + k, "://", 3) == 0;
}

static int
url_char_ok(char c, int host)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
        c == '_' || c == ':')
        return 1;
    return !host && c != '\0' && strchr("~+=,@", c) != NULL;
}

int
h5zv_pointer_url_check(const char *s, size_t n, int prefix, char *why, size_t nwhy)
{
    const char *p, *end = s + n, *host;
    if (!h5zv_pointer_is_url(s, n)) {
        snprintf(why, nwhy, "not a URL (want <scheme>://<host or bucket>/<path>)");
        return -1;
    }
    host = memchr(s, ':', n);
    host += 3;
    for (p = host; p < end && *p != '/'; p++)
        if (!url_char_ok(*p, 1)) {
            snprintf(why, nwhy, "%s in its host or bucket (letters, digits, '.', '-', '_' and ':' only%s)",
                     (unsigned char)*p < 0x20 || *p == 0x7f ? "a control character" : "a bad character",
                     *p == '@' ? "; a URL holds no credentials" : "");
            return -1;
        }
    if (p == host) {
        snprintf(why, nwhy, "no host or bucket after '://'");
        return -1;
    }
    if (p == end || p + 1 == end) {
        if (prefix)
            return 0;
        snprintf(why, nwhy, "no path after its host or bucket");
        return -1;
    }
    for (p++; p < end;) {
        const char *c = p;
        while (c < end && *c != '/')
            c++;
        if (c == p) {
            snprintf(why, nwhy, "an empty path component ('//')");
            return -1;
        }
        if ((c - p == 1 && p[0] == '.') || (c - p == 2 && p[0] == '.' && p[1] == '.')) {
            snprintf(why, nwhy, "a '.' or '..' path component");
            return -1;
        }
        for (const char *q = p; q < c; q++)
            if (!url_char_ok(*q, 0)) {
                snprintf(why, nwhy,
                         "%s in its path (letters, digits and \"._~+=,:@-\" only: no query, fragment, "
                         "percent escape or blank)",
                         (unsigned char)*q < 0x20 || *q == 0x7f ? "a control character" : "a bad character");
                return -1;
            }
        if (c == end)
            break;
        p = c + 1;
        if (p == end && !prefix) {
            snprintf(why, nwhy, "a trailing '/' (a store URL names the store itself)");
            return -1;
        }
    }
    return 0;
}

int
h5zv_pointer_url_under(const char *url, const char *prefix)
{
    size_t k = strlen(prefix);
    while (k && prefix[k - 1] == '/')
        k--;
    if (!k || strncmp(url, prefix, k) != 0)
        return 0;
    /* a prefix that is only "<scheme>://<bucket>" holds the whole bucket */
    return url[k] == '/' && url[k + 1] != '\0';
}

int
h5zv_pointer_parse(const unsigned char *block, size_t n, char **store, char *id, char *err, size_t nerr)
{
    const char *b = (const char *)block, *p, *e, *end = b + H5ZV_POINTER_BLOCK;
    size_t      ml = strlen(H5ZV_POINTER_MAGIC), len;
    int         version;
    char       *s;

    *store = NULL;
    if (id)
        id[0] = '\0';
    if (!block || n < H5ZV_POINTER_BLOCK)
        return 0;
    if (memcmp(b, H5ZV_POINTER_MAGIC, ml) == 0)
        version = 1;
    else if (memcmp(b, H5ZV_POINTER_MAGIC_V2, ml) == 0)
        version = 2;
    else
        return 0;
    p = b + ml;
    if ((size_t)(end - p) < 6 || memcmp(p, "store=", 6) != 0) {
        snprintf(err, nerr, "is damaged: no 'store=' line after its first line");
        return -1;
    }
    p += 6;
    if (!(e = memchr(p, '\n', (size_t)(end - p)))) {
        snprintf(err, nerr, "is damaged: its 'store=' line does not end");
        return -1;
    }
    if ((len = (size_t)(e - p)) == 0) {
        snprintf(err, nerr, "names no store");
        return -1;
    }
    for (const char *c = p; c < e; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) {
            snprintf(err, nerr, "is damaged: a control character in the store name");
            return -1;
        }
    if (version == 2 && h5zv_pointer_is_url(p, len)) {
        char why[200];
        if (h5zv_pointer_url_check(p, len, 0, why, sizeof why) < 0) {
            snprintf(err, nerr, "names a malformed store URL '%.*s': %s", (int)(len > 200 ? 200 : len), p,
                     why);
            return -1;
        }
    }
    else if (memchr(p, '/', len) || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
        snprintf(err, nerr, "names '%.*s': a pointer may only name a store in its own directory",
                 (int)(len > 200 ? 200 : len), p);
        return -1;
    }
    if (version == 2) {
        /* "id=" and H5ZV_POINTER_ID_LEN lowercase hex digits on the next line */
        const char *q = e + 1;
        char        tmp[H5ZV_POINTER_ID_LEN + 1];
        if ((size_t)(end - q) < 3 + H5ZV_POINTER_ID_LEN + 1 || memcmp(q, "id=", 3) != 0 ||
            q[3 + H5ZV_POINTER_ID_LEN] != '\n') {
            snprintf(err, nerr, "is damaged: no 'id=' line after its 'store=' line");
            return -1;
        }
        memcpy(tmp, q + 3, H5ZV_POINTER_ID_LEN);
        tmp[H5ZV_POINTER_ID_LEN] = '\0';
        if (!h5zv_pointer_id_ok(tmp)) {
            snprintf(err, nerr, "is damaged: its id is not %d lowercase hex digits", H5ZV_POINTER_ID_LEN);
            return -1;
        }
        if (id)
            memcpy(id, tmp, sizeof tmp);
    }
    if (!(s = malloc(len + 1))) {
        snprintf(err, nerr, "out of memory");
        return -1;
    }
    memcpy(s, p, len);
    s[len] = '\0';
    *store = s;
    return version;
}
