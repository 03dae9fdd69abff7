/*
 * astype.c: the numcodecs `astype` codec (v2 "astype", v3 "numcodecs.astype"): elements of
 * `decode_dtype` stored as `encode_dtype` and cast back on decode, with numpy's casts (floats rounded
 * to nearest, floats to integers truncated, integers wrapped), so values are numcodecs' own.
 */
#include "codec_class.h"

#include <stdio.h>

typedef struct astype_cfg {
    zarr__typed t; /* dtype = decode_dtype (the array's), astype = encode_dtype (stored) */
} astype_cfg;
ZARR__CODEC_CFG_FITS(astype_cfg);

static uint64_t
astype_fn(const zarr_codec *k, uint64_t bits, bool encode)
{
    const astype_cfg *c = ZARR__CODEC_CCFG(k, astype_cfg);
    return encode ? zarr__num_cast(&c->t.dtype, &c->t.astype, bits)
                  : zarr__num_cast(&c->t.astype, &c->t.dtype, bits);
}

static int
astype_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    astype_cfg *c = ZARR__CODEC_CFG(k, astype_cfg);
    const char *et, *dt;
    int         rc;
    (void)p;
    if ((rc = zarr__codec_cfg_str("astype", cfg, "encode_dtype", NULL, &et)) != ZARR_OK ||
        (rc = zarr__codec_cfg_str("astype", cfg, "decode_dtype", NULL, &dt)) != ZARR_OK)
        return rc;
    if (!et)
        return zarr_error(ZARR_EMETA, "codec 'astype': missing 'encode_dtype'");
    if (!dt)
        return zarr_error(ZARR_EMETA, "codec 'astype': missing 'decode_dtype'");
    if ((rc = zarr__numtype_parse("astype", "encode_dtype", et, "iufb", &c->t.astype)) != ZARR_OK ||
        (rc = zarr__numtype_parse("astype", "decode_dtype", dt, "iufb", &c->t.dtype)) != ZARR_OK)
        return rc;
    c->t.fn = astype_fn;
    return ZARR_OK;
}

static int
astype_to_json(const zarr_chain *ch, const zarr_codec *k, bool v2, struct json_object *o)
{
    const astype_cfg *c = ZARR__CODEC_CCFG(k, astype_cfg);
    char              dt[12], et[12];
    int               rc;
    (void)ch;
    zarr__typed_json_types(&c->t, v2, dt, et);
    if ((rc = zarr__codec_json_add(o, "encode_dtype", json_object_new_string(et))) != ZARR_OK)
        return rc;
    return zarr__codec_json_add(o, "decode_dtype", json_object_new_string(dt));
}

const zarr__codec_class zarr__codec_astype = {
    .v3name        = "numcodecs.astype",
    .v2id          = "astype",
    .stage         = ZARR__STAGE_B2B,
    .parse         = astype_parse,
    .to_json       = astype_to_json,
    .encode        = zarr__typed_encode,
    .decode        = zarr__typed_decode,
    .decode_buf    = zarr__typed_decode_buf,
    .encoded_size  = zarr__typed_encoded_size,
    .encoded_bound = zarr__typed_encoded_bound,
    .v3_as_a2a     = zarr__typed_as_a2a,
    .v3_a2a_endian = zarr__typed_a2a_endian,
    .v3_before_a2b = zarr__typed_before_a2b,
};
