/*
 * fuzz_meta_v2.c: harness for v2 .zarray + .zattrs (and .zgroup + .zattrs). The input is the .zarray
 * text, optionally followed by a NUL byte and the .zattrs text. Whatever parses must serialize and
 * read back to the same description, and serializing again must give the same texts.
 */
#include "fuzz_common.h"
#include "fuzz_util.h"

#include <string.h>

static bool
same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char      *doc = (const char *)data, *attrs = NULL;
    size_t           n = size, an = 0;
    const uint8_t   *nul;
    zarr_array_meta *m1 = NULL, *m2 = NULL;
    zarr_group_meta *g1 = NULL, *g2 = NULL;
    char            *z1 = NULL, *a1 = NULL, *z2 = NULL, *a2 = NULL;

    if (size > FUZZ_MAX_INPUT)
        return 0;
    if ((nul = memchr(data, 0, size)) != NULL) {
        n     = (size_t)(nul - data);
        attrs = (const char *)nul + 1;
        an    = size - n - 1;
    }
    if (zarr_array_meta_parse_v2(doc, n, attrs, an, "fuzz/.zarray", &m1) == ZARR_OK) {
        FUZZ_CHECK(zarr_array_meta_to_v2(m1, &z1, &a1) == ZARR_OK, "parsed v2 metadata does not serialize");
        FUZZ_CHECK(zarr_array_meta_parse_v2(z1, strlen(z1), a1, a1 ? strlen(a1) : 0,
                                            "fuzz/.zarray (rewritten)", &m2) == ZARR_OK,
                   "serialized v2 metadata does not parse back:\n%s\n%s", z1, a1 ? a1 : "");
        fuzz_check_array_meta_equal(m1, m2, "v2 array round trip");
        FUZZ_CHECK(zarr_array_meta_to_v2(m2, &z2, &a2) == ZARR_OK,
                   "re-parsed v2 metadata does not serialize");
        FUZZ_CHECK(same_str(z1, z2) && same_str(a1, a2), "serializing twice differs:\n%s\n----\n%s", z1, z2);
        free(z1);
        free(a1);
        free(z2);
        free(a2);
        z1 = a1 = z2 = a2 = NULL;
    }
    else
        FUZZ_CHECK(m1 == NULL, "failed parse left an output");
    if (zarr_group_meta_parse_v2(doc, n, attrs, an, "fuzz/.zgroup", &g1) == ZARR_OK) {
        FUZZ_CHECK(zarr_group_meta_to_v2(g1, &z1, &a1) == ZARR_OK, "parsed v2 group does not serialize");
        FUZZ_CHECK(zarr_group_meta_parse_v2(z1, strlen(z1), a1, a1 ? strlen(a1) : 0,
                                            "fuzz/.zgroup (rewritten)", &g2) == ZARR_OK,
                   "serialized v2 group does not parse back:\n%s", z1);
        free(z1);
        free(a1);
        z1 = a1 = NULL;
        FUZZ_CHECK(zarr_group_meta_to_v2(g2, &z1, &a1) == ZARR_OK, "re-parsed v2 group does not serialize");
        free(z1);
        free(a1);
    }
    zarr_array_meta_free(m1);
    zarr_array_meta_free(m2);
    zarr_group_meta_free(g1);
    zarr_group_meta_free(g2);
    zarr_error_clear();
    return 0;
}
