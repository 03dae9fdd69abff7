/*
 * bitround.c: the numcodecs `bitround` codec (v2 "bitround", v3 "numcodecs.bitround"; lossy, float
 * arrays only): keeps `keepbits` mantissa bits of each value, rounding half to even on the integer view
 * of the float as numcodecs does; decode leaves the bits as they are. The element type is the array's
 * (bitround has no dtype of its own), in the byte order the elements reach it.
 */
#include "codec_class.h"

#include <stdio.h>

typedef struct bitround_cfg {
    zarr__typed t; /* dtype = astype = the array's float type */
    int         keepbits, maskbits;
} bitround_cfg;
ZARR__CODEC_CFG_FITS(bitround_cfg);

static uint64_t
bitround_fn(const zarr_codec *k, uint64_t bits, bool encode)
{
    const bitround_cfg *c = ZARR__CODEC_CCFG(k, bitround_cfg);
    uint64_t            m = (uint64_t)c->maskbits, mask, half;
    if (!encode || m == 0)
        return bits;
    mask = ~(uint64_t)0 << m;
    half = ((uint64_t)1 << (m - 1)) - 1;
    bits += ((bits >> m) & 1) + half; /* wraps as numpy's signed add does, in the low bytes kept */
    return bits & mask;
}

static int
bitround_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    bitround_cfg *c = ZARR__CODEC_CFG(k, bitround_cfg);
    long long     x;
    int           mant, rc;
    char          e = zarr__chain_element_endian(p);
    if (!zarr__codec_cfg_get(cfg, "keepbits"))
        return zarr_error(ZARR_EMETA, "codec 'bitround': missing 'keepbits'");
    if ((rc = zarr__codec_cfg_int_range("bitround", cfg, "keepbits", false, 0, 0, 52, &x)) != ZARR_OK)
        return rc;
    if (p->chain->kind != ZARR_FLOAT || p->chain->esize > 8)
        return zarr_error(ZARR_EUNSUPPORTED, "codec 'bitround': the array's data type is not a float type "
                                             "(only float16, float32 and float64 can be bit-rounded)");
    mant = p->chain->esize == 2 ? 10 : p->chain->esize == 4 ? 23 : 52;
    if (x > mant)
        return zarr_error(ZARR_EMETA,
                          "codec 'bitround': 'keepbits' is %lld, more than the %d mantissa bits of a "
                          "%zu-byte float",
                          x, mant, p->chain->esize);
    c->keepbits       = (int)x;
    c->maskbits       = mant - (int)x;
    c->t.dtype.kind   = 'f';
    c->t.dtype.size   = (int)p->chain->esize;
    c->t.dtype.endian = e;
    snprintf(c->t.dtype.str, sizeof c->t.dtype.str, "%cf%zu", e, p->chain->esize);
    c->t.astype = c->t.dtype;
    c->t.fn     = bitround_fn;
    return ZARR_OK;
}

static int
bitround_to_json(const zarr_chain *ch, const zarr_codec *k, bool v2, struct json_object *o)
{
    (void)ch, (void)v2;
    return zarr__codec_json_add(o, "keepbits",
                                json_object_new_int(ZARR__CODEC_CCFG(k, bitround_cfg)->keepbits));
}

/* Before `bytes` (zarr-python 3's array->array form): the array's own type, in `bytes`' order. */
static int
bitround_as_a2a(const zarr_dtype *t, zarr_codec *k)
{
    (void)t;
    ZARR__CODEC_CFG(k, zarr__typed)->a2a = true;
    return ZARR_OK;
}

const zarr__codec_class zarr__codec_bitround = {
    .v3name        = "numcodecs.bitround",
    .v2id          = "bitround",
    .stage         = ZARR__STAGE_B2B,
    .parse         = bitround_parse,
    .to_json       = bitround_to_json,
    .encode        = zarr__typed_encode,
    .decode        = zarr__typed_decode,
    .decode_buf    = zarr__typed_decode_buf,
    .encoded_size  = zarr__typed_encoded_size,
    .encoded_bound = zarr__typed_encoded_bound,
    .v3_as_a2a     = bitround_as_a2a,
    .v3_a2a_endian = zarr__typed_a2a_endian,
    .v3_before_a2b = zarr__typed_before_a2b,
};
