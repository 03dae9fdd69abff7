/*
 * fuzz_meta_v3.c: harness for v3 zarr.json (array and group). The input is the document. Whatever
 * parses must serialize, the serialized text must parse back to the same description, serializing
 * again must give the same text, and a copy must serialize the same.
 */
#include "fuzz_common.h"
#include "fuzz_util.h"

#include <string.h>

static void
array_case(const uint8_t *data, size_t size)
{
    zarr_array_meta *m1 = NULL, *m2 = NULL, *cp = NULL;
    char            *t1 = NULL, *t2 = NULL, *t3 = NULL;

    if (zarr_array_meta_parse_v3((const char *)data, size, "fuzz/zarr.json", &m1) != ZARR_OK) {
        FUZZ_CHECK(m1 == NULL, "failed parse left an output");
        FUZZ_CHECK(zarr_errmsg()[0] != '\0', "failed parse without a message");
        return;
    }
    FUZZ_CHECK(zarr_array_meta_to_v3(m1, &t1) == ZARR_OK, "parsed array metadata does not serialize");
    FUZZ_CHECK(zarr_array_meta_parse_v3(t1, strlen(t1), "fuzz/zarr.json (rewritten)", &m2) == ZARR_OK,
               "serialized array metadata does not parse back:\n%s", t1);
    fuzz_check_array_meta_equal(m1, m2, "v3 array round trip");
    FUZZ_CHECK(zarr_array_meta_to_v3(m2, &t2) == ZARR_OK, "re-parsed array metadata does not serialize");
    FUZZ_CHECK(strcmp(t1, t2) == 0, "serializing twice differs:\n%s\n----\n%s", t1, t2);
    FUZZ_CHECK((cp = zarr_array_meta_copy(m1)) != NULL, "copy failed");
    FUZZ_CHECK(zarr_array_meta_to_v3(cp, &t3) == ZARR_OK && strcmp(t1, t3) == 0,
               "a copy serializes differently");
    free(t1);
    free(t2);
    free(t3);
    zarr_array_meta_free(m1);
    zarr_array_meta_free(m2);
    zarr_array_meta_free(cp);
}

static void
group_case(const uint8_t *data, size_t size)
{
    zarr_group_meta *g1 = NULL, *g2 = NULL;
    char            *t1 = NULL, *t2 = NULL;

    if (zarr_group_meta_parse_v3((const char *)data, size, "fuzz/zarr.json", &g1) != ZARR_OK) {
        FUZZ_CHECK(g1 == NULL, "failed parse left an output");
        return;
    }
    FUZZ_CHECK(zarr_group_meta_to_v3(g1, &t1) == ZARR_OK, "parsed group metadata does not serialize");
    FUZZ_CHECK(zarr_group_meta_parse_v3(t1, strlen(t1), "fuzz/zarr.json (rewritten)", &g2) == ZARR_OK,
               "serialized group metadata does not parse back:\n%s", t1);
    FUZZ_CHECK(zarr_group_meta_to_v3(g2, &t2) == ZARR_OK && strcmp(t1, t2) == 0,
               "group: serializing twice differs:\n%s\n----\n%s", t1, t2 ? t2 : "(null)");
    free(t1);
    free(t2);
    zarr_group_meta_free(g1);
    zarr_group_meta_free(g2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT)
        return 0;
    array_case(data, size);
    group_case(data, size);
    zarr_error_clear();
    return 0;
}
