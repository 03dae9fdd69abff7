/*
 * fuzz_pointer.c: harness for the pointer-file parser (vol/pointer_parse.c). The input is a file's first
 * bytes (padded with spaces to the record's size when shorter). A parse that succeeds must give a
 * plain, non-empty name without '/', control characters, "." or ".." (or, for version 2, a store URL that
 * h5zv_pointer_url_check accepts), a well-formed id for version 2 and
 * none for version 1, and the record the writer would make for that name and id (vol/pointer.c) must
 * parse back to the same name and id.
 */
#include "fuzz_common.h"
#include "pointer_parse.h"

#include <string.h>

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char block[H5ZV_POINTER_BLOCK], again[H5ZV_POINTER_BLOCK];
    char *name = NULL, *name2 = NULL, err[300], id[H5ZV_POINTER_ID_LEN + 1], id2[H5ZV_POINTER_ID_LEN + 1];
    int   r, k;

    memset(block, ' ', sizeof block);
    memcpy(block, data, size < sizeof block ? size : sizeof block);
    /* as given, and with either version's magic in front (most inputs would not get past it) */
    for (int pass = 0; pass < 3; pass++) {
        if (pass > 0) {
            const char *magic = pass == 1 ? H5ZV_POINTER_MAGIC : H5ZV_POINTER_MAGIC_V2;
            size_t      ml    = strlen(magic);
            memset(block, ' ', sizeof block);
            memcpy(block + ml, data, size < sizeof block - ml ? size : sizeof block - ml);
            memcpy(block, magic, ml);
        }
        r = h5zv_pointer_parse(block, sizeof block, &name, id, err, sizeof err);
        FUZZ_CHECK(r >= -1 && r <= 2, "result %d", r);
        FUZZ_CHECK((r >= 1) == (name != NULL), "result %d with name %p", r, (void *)name);
        if (r < 1)
            continue;
        FUZZ_CHECK(r == 2 ? h5zv_pointer_id_ok(id) : id[0] == '\0', "version %d with id '%s'", r, id);
        if (r == 2 && h5zv_pointer_is_url(name, strlen(name))) /* a store URL: well formed */
            FUZZ_CHECK(h5zv_pointer_url_check(name, strlen(name), 0, err, sizeof err) == 0, "URL '%s'", name);
        else
            FUZZ_CHECK(name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, ".."), "name '%s'",
                       name);
        for (const char *c = name; *c; c++)
            FUZZ_CHECK((unsigned char)*c >= 0x20 && *c != 0x7f, "control character in '%s'", name);
        /* the writer's block for the same name parses back to it */
        memset(again, ' ', sizeof again);
        k = r == 2
                ? snprintf((char *)again, sizeof again, H5ZV_POINTER_MAGIC_V2 "store=%s\nid=%s\n", name, id)
                : snprintf((char *)again, sizeof again, H5ZV_POINTER_MAGIC "store=%s\n", name);
        if (k > 0 && (size_t)k < sizeof again) {
            again[k] = ' ';
            FUZZ_CHECK(h5zv_pointer_parse(again, sizeof again, &name2, id2, err, sizeof err) == r && name2 &&
                           !strcmp(name, name2) && !strcmp(id, id2),
                       "'%s' did not parse back (%s)", name, err);
        }
        free(name2);
        name2 = NULL;
        free(name);
        name = NULL;
    }
    return 0;
}
