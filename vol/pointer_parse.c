/*
 * pointer_parse.c: parsing and validating a pointer file's record (pointer_parse.h). A pointer comes
 * with the data it points to, so it is untrusted: it may only name a store in its own directory, and its
 * id must have the one form ids have.
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
    if (memchr(p, '/', len) || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
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
