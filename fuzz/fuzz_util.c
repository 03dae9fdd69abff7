/*
 * fuzz_util.c: invariants the harnesses share: two parsed array descriptions say the same thing.
 */
#include "fuzz_common.h"
#include "fuzz_util.h"
#include "zjson.h"

#include <string.h>

void
fuzz_check_array_meta_equal(const zarr_array_meta *a, const zarr_array_meta *b, const char *what)
{
    FUZZ_CHECK(a->zarr_format == b->zarr_format, "%s: zarr_format %d != %d", what, a->zarr_format,
               b->zarr_format);
    FUZZ_CHECK(a->ndim == b->ndim, "%s: ndim %d != %d", what, a->ndim, b->ndim);
    for (int d = 0; d < a->ndim; d++) {
        FUZZ_CHECK(a->shape[d] == b->shape[d], "%s: shape[%d] differs", what, d);
        FUZZ_CHECK(a->chunks[d] == b->chunks[d], "%s: chunks[%d] differs", what, d);
        FUZZ_CHECK((a->dimension_names[d] == NULL) == (b->dimension_names[d] == NULL) &&
                       (!a->dimension_names[d] || strcmp(a->dimension_names[d], b->dimension_names[d]) == 0),
                   "%s: dimension_names[%d] differs", what, d);
    }
    FUZZ_CHECK(zarr_dtype_equal(a->dtype, b->dtype), "%s: data types differ", what);
    FUZZ_CHECK(a->fill_defined == b->fill_defined, "%s: fill_defined differs", what);
    FUZZ_CHECK(a->key_encoding == b->key_encoding, "%s: key encoding differs", what);
    FUZZ_CHECK(a->separator == b->separator, "%s: separator '%c' != '%c'", what, a->separator, b->separator);
    FUZZ_CHECK(a->zarr_format != 2 || a->order == b->order, "%s: order '%c' != '%c'", what, a->order,
               b->order);
    if (a->fill_defined) {
        struct json_object *fa = NULL, *fb = NULL;
        int                 ra = zarr_fill_to_json(a->dtype, a->zarr_format, a->fill, true, &fa);
        int                 rb = zarr_fill_to_json(b->dtype, b->zarr_format, b->fill, true, &fb);
        FUZZ_CHECK(ra == ZARR_OK && rb == ZARR_OK, "%s: a parsed fill value does not serialize", what);
        FUZZ_CHECK(zarr__json_equal(fa, fb), "%s: fill values differ: %s vs %s", what,
                   json_object_to_json_string(fa), json_object_to_json_string(fb));
        if (!zarr_dtype_has_vlen(a->dtype))
            FUZZ_CHECK(memcmp(a->fill, b->fill, a->dtype->size) == 0, "%s: fill bytes differ", what);
        json_object_put(fa);
        json_object_put(fb);
    }
    FUZZ_CHECK(zarr__json_equal(a->attributes, b->attributes), "%s: attributes differ", what);
    FUZZ_CHECK(zarr_chain_count(a->chain) == zarr_chain_count(b->chain), "%s: codec counts %zu != %zu", what,
               zarr_chain_count(a->chain), zarr_chain_count(b->chain));
    for (size_t i = 0; i < zarr_chain_count(a->chain); i++) {
        struct json_object *ca = NULL, *cb = NULL;
        FUZZ_CHECK(zarr_chain_codec_json(a->chain, i, &ca) == ZARR_OK &&
                       zarr_chain_codec_json(b->chain, i, &cb) == ZARR_OK,
                   "%s: codec %zu does not serialize", what, i);
        FUZZ_CHECK(zarr__json_equal(ca, cb), "%s: codec %zu differs: %s vs %s", what, i,
                   json_object_to_json_string(ca), json_object_to_json_string(cb));
        json_object_put(ca);
        json_object_put(cb);
    }
    {
        uint64_t coords[ZARR_MAX_DIMS];
        char     ka[256], kb[256];
        for (int d = 0; d < a->ndim; d++)
            coords[d] = (uint64_t)d * 7u;
        int ra = zarr_chunk_key(a, "p", coords, ka, sizeof ka),
            rb = zarr_chunk_key(b, "p", coords, kb, sizeof kb);
        FUZZ_CHECK(ra == rb && (ra != ZARR_OK || strcmp(ka, kb) == 0), "%s: chunk keys differ", what);
    }
}
