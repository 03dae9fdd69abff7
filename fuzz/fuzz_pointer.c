/*
 * fuzz_pointer.c: harness for the pointer-file parser (vol/pointer_parse.c). The input is a file's first
 * bytes (padded with spaces to the user block's size when shorter). A parse that succeeds must give a
 * plain, non-empty name without '/', control characters, "." or "..", and the block the writer would
 * make for that name (vol/pointer.c) must parse back to the same name.
 */
#include "fuzz_common.h"
#include "pointer_parse.h"

#include <string.h>

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char block[H5ZV_POINTER_BLOCK], again[H5ZV_POINTER_BLOCK];
    char         *name = NULL, *name2 = NULL, err[300];
    int           r, k;

    memset(block, ' ', sizeof block);
    memcpy(block, data, size < sizeof block ? size : sizeof block);
    /* as given, and with the magic in front (most inputs would not get past it) */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            size_t ml = strlen(H5ZV_POINTER_MAGIC);
            memmove(block + ml, block, sizeof block - ml);
            memcpy(block, H5ZV_POINTER_MAGIC, ml);
        }
        r = h5zv_pointer_parse(block, sizeof block, &name, err, sizeof err);
        FUZZ_CHECK(r >= -1 && r <= 1, "result %d", r);
        FUZZ_CHECK((r == 1) == (name != NULL), "result %d with name %p", r, (void *)name);
        if (r != 1)
            continue;
        FUZZ_CHECK(name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, ".."), "name '%s'",
                   name);
        for (const char *c = name; *c; c++)
            FUZZ_CHECK((unsigned char)*c >= 0x20 && *c != 0x7f, "control character in '%s'", name);
        /* the writer's block for the same name parses back to it */
        memset(again, ' ', sizeof again);
        k = snprintf((char *)again, sizeof again, H5ZV_POINTER_MAGIC "store=%s\n", name);
        if (k > 0 && (size_t)k < sizeof again) {
            again[k] = ' ';
            FUZZ_CHECK(h5zv_pointer_parse(again, sizeof again, &name2, err, sizeof err) == 1 && name2 &&
                           !strcmp(name, name2),
                       "'%s' did not parse back (%s)", name, err);
        }
        free(name2);
        name2 = NULL;
        free(name);
        name = NULL;
    }
    return 0;
}
