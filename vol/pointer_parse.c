/*
 * pointer_parse.c: parsing and validating a pointer file's user block (pointer_parse.h). A pointer comes
 * with the data it points to, so it is untrusted: it may only name a store in its own directory.
 */
#include "pointer_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
h5zv_pointer_parse(const unsigned char *block, size_t n, char **store, char *err, size_t nerr)
{
    const char *b = (const char *)block, *p, *e, *end = b + H5ZV_POINTER_BLOCK;
    size_t      ml = strlen(H5ZV_POINTER_MAGIC), len;
    char       *s;

    *store = NULL;
    if (!block || n < H5ZV_POINTER_BLOCK || memcmp(b, H5ZV_POINTER_MAGIC, ml) != 0)
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
    if (!(s = malloc(len + 1))) {
        snprintf(err, nerr, "out of memory");
        return -1;
    }
    memcpy(s, p, len);
    s[len] = '\0';
    *store = s;
    return 1;
}
