/*
 * hdf5_scaleoffset.c: h5zarr's own `hdf5_scaleoffset` codec (v3 name and v2 id) and its kernel: chunks
 * in the format of HDF5's built-in scale-offset filter (H5Z_FILTER_SCALEOFFSET = 6, H5Zscaleoffset.c),
 * so chunks move between .h5 files and stores unchanged (docs/FORMAT.md). The configuration is the
 * filter's 20 cd_values after HDF5's set_local, {"cd_values": [...]}: [0] scale type (0 float D-scale,
 * 2 integer), [1] scale factor (decimal digits for floats; minimum bits for integers, 0 or less =
 * computed per chunk), [2] elements per chunk, [3] class (0 integer, 1 float), [4] element size, [5]
 * sign (1 two's complement), [6] byte order (0 little, 1 big), [7] fill value defined, [8..9] the fill
 * value's bits (low 32, high 32). The connector computes them at dataset create as
 * H5Z__set_local_scaleoffset does (vol/filter.c). Other zarr readers do not know it.
 *
 * A chunk: a 21-byte header (minbits as 4 little-endian bytes, the byte 8, the chunk's minimum as 8
 * little-endian bytes, 8 zero bytes), then each element's code in `minbits` bits, most significant bit
 * first, packed without gaps (floor(n * minbits / 8) + 1 bytes). An integer's code is its difference
 * from the minimum, a float's round((x - min) * 10^D); an element equal to the fill value (floats:
 * within 10^-D of it) gets the all-ones code and decodes to the fill value. When minbits is the
 * element's full width the elements follow the header unchanged, little-endian (HDF5 1.14.5 writes such
 * chunks but refuses to read them back; this codec reads them); an integer scale factor equal to the
 * full width stores the elements as they are, without a header. The arithmetic is HDF5's, step by step
 * and in the element's precision (float steps in float), with the same libm calls, so encoded bytes
 * and lossy decoded values equal HDF5's. Where HDF5 writes a chunk nobody can read (a float32 chunk whose
 * span overflows: NaN first, or infinities only: a header of 64 bits and no codes) the codec writes the
 * chunk at the full width instead, which keeps the values.
 */
#include "codec_class.h"

#include <math.h>
#include <string.h>

#define SO_NCD    20 /* H5Z_SCALEOFFSET_TOTAL_NPARMS */
#define SO_HEADER 21 /* minbits (4), sizeof minval (1), minval (8), unused (8) */

enum {
    SO_SCALETYPE,
    SO_SCALEFACTOR,
    SO_NELMTS,
    SO_CLASS,
    SO_SIZE,
    SO_SIGN,
    SO_ORDER,
    SO_FILAVAIL,
    SO_FILVAL
};
enum { SO_FLOAT_DSCALE = 0, SO_FLOAT_ESCALE = 1, SO_INT = 2 };

typedef struct so_cfg {
    unsigned cd[SO_NCD];
    /* derived from cd by so_check */
    unsigned size;        /* bytes per element: 1, 2, 4, 8 */
    bool     is_float;    /* class 1 */
    bool     is_signed;   /* two's complement integers */
    bool     big;         /* elements stored big-endian */
    bool     fill;        /* a fill value is defined */
    bool     passthrough; /* integer scale factor == full width: the chunk is the elements */
    int      factor;      /* (int)cd[1]: integers' minimum bits (<= 0: computed), floats' D */
    uint64_t fillbits;    /* the fill value's bits (size bytes) */
} so_cfg;
ZARR__CODEC_CFG_FITS(so_cfg);

/* ------------------------------------------------------------------------------------------------
 * Elements and bits
 * ------------------------------------------------------------------------------------------------ */
static uint64_t
so_mask(unsigned size)
{
    return size >= 8 ? UINT64_MAX : ((uint64_t)1 << (8 * size)) - 1;
}

static uint64_t
so_load(const uint8_t *p, unsigned size, bool big)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < size; i++)
        v |= (uint64_t)p[big ? size - 1 - i : i] << (8 * i);
    return v;
}

static void
so_store(uint8_t *p, unsigned size, bool big, uint64_t v)
{
    for (unsigned i = 0; i < size; i++)
        p[big ? size - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

/* `v` (size bytes) sign-extended to 64 bits. */
static int64_t
so_sext(uint64_t v, unsigned size)
{
    unsigned sh = 64 - 8 * size;
    return sh ? (int64_t)(v << sh) >> sh : (int64_t)v;
}

static bool
so_less(const so_cfg *c, uint64_t a, uint64_t b)
{
    return c->is_signed ? so_sext(a, c->size) < so_sext(b, c->size) : a < b;
}

/* HDF5's H5Z__scaleoffset_log2: ceil(log2(x)), and 1 for 0. */
static unsigned
so_log2(uint64_t x)
{
    unsigned v = 0;
    for (uint64_t t = x; t >>= 1;)
        v++;
    return x == (uint64_t)1 << v ? v : v + 1;
}

/* The low `nb` bits of `v` at bit `*pos` of `buf` (zeroed), most significant first. */
static void
so_put(uint8_t *buf, uint64_t *pos, uint64_t v, unsigned nb)
{
    while (nb) {
        unsigned off = (unsigned)(*pos & 7), room = 8 - off, take = nb < room ? nb : room;
        unsigned part = (unsigned)(v >> (nb - take)) & ((1u << take) - 1);
        buf[*pos >> 3] |= (uint8_t)(part << (room - take));
        *pos += take;
        nb -= take;
    }
}

static uint64_t
so_get(const uint8_t *buf, uint64_t *pos, unsigned nb)
{
    uint64_t v = 0;
    while (nb) {
        unsigned off = (unsigned)(*pos & 7), room = 8 - off, take = nb < room ? nb : room;
        v = v << take | ((buf[*pos >> 3] >> (room - take)) & ((1u << take) - 1));
        *pos += take;
        nb -= take;
    }
    return v;
}

static float
so_f32(uint64_t bits)
{
    uint32_t b = (uint32_t)bits;
    float    f;
    memcpy(&f, &b, 4);
    return f;
}
static uint64_t
so_f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}
static double
so_f64(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, 8);
    return d;
}
static uint64_t
so_f64_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

/* ------------------------------------------------------------------------------------------------
 * Configuration
 * ------------------------------------------------------------------------------------------------ */
/* Checks the cd_values and derives the fields; messages name the entry. */
static int
so_check(so_cfg *c, int code)
{
    const unsigned *cd = c->cd;
    unsigned        fillwords;
    if (cd[SO_CLASS] > 1)
        return zarr_error(code,
                          "codec 'hdf5_scaleoffset': cd_values[3] (class) is %u, want 0 integer or 1 float",
                          cd[SO_CLASS]);
    c->is_float = cd[SO_CLASS] == 1;
    c->size     = cd[SO_SIZE];
    if (c->is_float ? c->size != 4 && c->size != 8
                    : c->size != 1 && c->size != 2 && c->size != 4 && c->size != 8)
        return zarr_error(code, "codec 'hdf5_scaleoffset': cd_values[4] (size) is %u, want %s", c->size,
                          c->is_float ? "4 or 8 for floats" : "1, 2, 4 or 8 for integers");
    if (cd[SO_SIGN] > 1 || (c->is_float && cd[SO_SIGN]))
        return zarr_error(code, "codec 'hdf5_scaleoffset': cd_values[5] (sign) is %u, want %s", cd[SO_SIGN],
                          c->is_float ? "0 for floats" : "0 unsigned or 1 signed");
    c->is_signed = cd[SO_SIGN] == 1;
    if (cd[SO_ORDER] > 1)
        return zarr_error(code, "codec 'hdf5_scaleoffset': cd_values[6] (byte order) is %u, want 0 or 1",
                          cd[SO_ORDER]);
    c->big = cd[SO_ORDER] == 1;
    if (cd[SO_FILAVAIL] > 1)
        return zarr_error(code,
                          "codec 'hdf5_scaleoffset': cd_values[7] (fill value defined) is %u, want 0 or 1",
                          cd[SO_FILAVAIL]);
    c->fill = cd[SO_FILAVAIL] == 1;
    if (cd[SO_NELMTS] == 0)
        return zarr_error(code, "codec 'hdf5_scaleoffset': cd_values[2] (elements per chunk) is 0");
    c->factor = (int)cd[SO_SCALEFACTOR];
    if (c->is_float) {
        if (cd[SO_SCALETYPE] == SO_FLOAT_ESCALE)
            return zarr_error(code, "codec 'hdf5_scaleoffset': cd_values[0] (scale type) is 1, E-scaling, "
                                    "which HDF5 does not implement either");
        if (cd[SO_SCALETYPE] != SO_FLOAT_DSCALE)
            return zarr_error(code,
                              "codec 'hdf5_scaleoffset': cd_values[0] (scale type) is %u, want 0 (D-scale) "
                              "for floats",
                              cd[SO_SCALETYPE]);
        c->passthrough = false;
    }
    else {
        if (cd[SO_SCALETYPE] != SO_INT)
            return zarr_error(
                code, "codec 'hdf5_scaleoffset': cd_values[0] (scale type) is %u, want 2 for integers",
                cd[SO_SCALETYPE]);
        if (c->factor < 0) /* HDF5 takes a negative minimum as "compute it" */
            c->factor = 0;
        if (c->factor > (int)(8 * c->size))
            return zarr_error(code,
                              "codec 'hdf5_scaleoffset': cd_values[1] (minimum bits) is %d, more than the %u "
                              "bits of the elements",
                              c->factor, 8 * c->size);
        c->passthrough = c->factor == (int)(8 * c->size);
    }
    /* the fill value: its bits in cd[8] (and cd[9] for 8 bytes), nothing else */
    fillwords   = c->fill ? (c->size == 8 ? 2 : 1) : 0;
    c->fillbits = 0;
    for (unsigned i = SO_FILVAL; i < SO_NCD; i++) {
        if (i >= SO_FILVAL + fillwords && cd[i])
            return zarr_error(code, "codec 'hdf5_scaleoffset': cd_values[%u] is %u, want 0 (%s)", i, cd[i],
                              c->fill ? "past the fill value" : "no fill value is defined");
        if (i < SO_FILVAL + fillwords)
            c->fillbits |= (uint64_t)cd[i] << (32 * (i - SO_FILVAL));
    }
    if (c->fillbits & ~so_mask(c->size))
        return zarr_error(code,
                          "codec 'hdf5_scaleoffset': cd_values[8] (fill value) %u has more than %u bits",
                          cd[SO_FILVAL], 8 * c->size);
    return ZARR_OK;
}

static size_t
so_chunk_bytes(const so_cfg *c)
{
    return (size_t)c->cd[SO_NELMTS] * c->size;
}

/* ------------------------------------------------------------------------------------------------
 * Encoding: the minimum, the minimum bits and the codes, as H5Z__filter_scaleoffset computes them
 * ------------------------------------------------------------------------------------------------ */
typedef struct so_plan {
    unsigned minbits;
    uint64_t minval; /* as the header stores it */
    bool     full;   /* minbits is the full width: the elements as they are */
} so_plan;

static void
so_int_plan(const so_cfg *c, const uint8_t *src, size_t ne, so_plan *pl)
{
    uint64_t min = 0, max = 0, m = so_mask(c->size);
    bool     seen = false;
    unsigned full = 8 * c->size;
    for (size_t i = 0; i < ne; i++) { /* elements equal to the fill value left out */
        uint64_t v = so_load(src + i * c->size, c->size, c->big);
        if (c->fill && v == c->fillbits)
            continue;
        if (!seen)
            min = max = v, seen = true;
        if (so_less(c, max, v))
            max = v;
        if (so_less(c, v, min))
            min = v;
    }
    pl->minval = c->is_signed ? (uint64_t)so_sext(min, c->size) : min;
    if (c->factor > 0)
        pl->minbits = (unsigned)c->factor;
    else {
        uint64_t diff = (max - min) & m;
        if (diff > m - 2) { /* HDF5 stops here: full width, the minimum left unset (0) ... */
            pl->minbits = full;
            /* ... except for signed char without a fill value, where it is set */
            if (!(c->size == 1 && c->is_signed && !c->fill))
                pl->minval = 0;
        }
        else
            pl->minbits = so_log2(diff + 1 + (c->fill ? 1 : 0));
    }
    pl->full = pl->minbits == full;
}

static uint64_t
so_int_code(const so_cfg *c, const so_plan *pl, uint64_t v)
{
    if (c->fill && v == c->fillbits)
        return ((uint64_t)1 << pl->minbits) - 1;
    return v - pl->minval;
}

static int
so_f32_plan(const so_cfg *c, const uint8_t *src, size_t ne, so_plan *pl)
{
    float  fv = so_f32(c->fillbits), min = 0, max = 0, p = powf(10.0f, (float)(double)c->factor);
    double tol  = pow(10.0, -(double)c->factor);
    bool   seen = false;
    for (size_t i = 0; i < ne; i++) {
        float x = so_f32(so_load(src + 4 * i, 4, c->big));
        if (c->fill && fabs((double)(x - fv)) < tol)
            continue;
        if (!seen)
            min = max = x, seen = true;
        if (x > max)
            max = x;
        if (x < min)
            min = x;
    }
    pl->minval = 0;
    if (roundf(max * p - min * p) > powf(2.0f, 31.0f)) {
        pl->minbits = 32, pl->full = true;
        return ZARR_OK;
    }
    {
        uint64_t span = (uint64_t)llroundf(max * p - min * p) + 1;
        pl->minbits   = so_log2(c->fill ? span + 1 : span);
    }
    if (pl->minbits > 32) { /* NaN first, or infinities only: HDF5 writes an unreadable chunk */
        pl->minbits = 32, pl->full = true;
        return ZARR_OK;
    }
    pl->full   = pl->minbits == 32;
    pl->minval = so_f32_bits(min);
    return ZARR_OK;
}

static uint64_t
so_f32_code(const so_cfg *c, const so_plan *pl, uint64_t bits)
{
    float x = so_f32(bits), min = so_f32(pl->minval), p = powf(10.0f, (float)(double)c->factor);
    if (c->fill && fabsf(x - so_f32(c->fillbits)) < powf(10.0f, (float)-(double)c->factor))
        return ((uint64_t)1 << pl->minbits) - 1;
    return (uint64_t)lroundf(x * p - min * p);
}

static int
so_f64_plan(const so_cfg *c, const uint8_t *src, size_t ne, so_plan *pl)
{
    double fv = so_f64(c->fillbits), min = 0, max = 0, p = pow(10.0, (double)c->factor),
           tol = pow(10.0, -(double)c->factor);
    bool seen  = false;
    for (size_t i = 0; i < ne; i++) {
        double x = so_f64(so_load(src + 8 * i, 8, c->big));
        if (c->fill && fabs(x - fv) < tol)
            continue;
        if (!seen)
            min = max = x, seen = true;
        if (x > max)
            max = x;
        if (x < min)
            min = x;
    }
    pl->minval = 0;
    if (round(max * p - min * p) > pow(2.0, 63.0)) {
        pl->minbits = 64, pl->full = true;
        return ZARR_OK;
    }
    {
        uint64_t span = (uint64_t)llround(max * p - min * p) + 1;
        pl->minbits   = so_log2(c->fill ? span + 1 : span);
    }
    pl->full   = pl->minbits == 64;
    pl->minval = so_f64_bits(min);
    return ZARR_OK;
}

static uint64_t
so_f64_code(const so_cfg *c, const so_plan *pl, uint64_t bits)
{
    double x = so_f64(bits), min = so_f64(pl->minval), p = pow(10.0, (double)c->factor);
    if (c->fill && fabs(x - so_f64(c->fillbits)) < pow(10.0, -(double)c->factor))
        return ((uint64_t)1 << pl->minbits) - 1;
    return (uint64_t)lround(x * p - min * p);
}

static int
so_compress(const so_cfg *c, const uint8_t *src, size_t n, zarr_buf *out)
{
    size_t   ne  = c->cd[SO_NELMTS], total;
    so_plan  pl  = {0};
    uint64_t pos = 0;
    int      rc  = ZARR_OK;

    out->size = 0;
    if (n != so_chunk_bytes(c))
        ZARR_FAIL(ZARR_EUNSUPPORTED,
                  "hdf5_scaleoffset: a chunk of %zu bytes, the configuration says %zu elements of %u bytes",
                  n, ne, c->size);
    if (c->passthrough) { /* HDF5 leaves the chunk as it is */
        ZARR_TRY(zarr_buf_reserve(out, n));
        memcpy(out->data, src, n);
        out->size = n;
        goto done;
    }
    if (!c->is_float)
        so_int_plan(c, src, ne, &pl);
    else
        ZARR_TRY(c->size == 4 ? so_f32_plan(c, src, ne, &pl) : so_f64_plan(c, src, ne, &pl));
    total = SO_HEADER + (pl.full ? n : (size_t)((uint64_t)ne * pl.minbits / 8) + 1);
    ZARR_TRY(zarr_buf_reserve(out, total));
    memset(out->data, 0, total);
    so_store(out->data, 4, false, pl.minbits);
    out->data[4] = 8;
    so_store(out->data + 5, 8, false, pl.minval);
    if (pl.full) /* the elements, little-endian (the writer's memory order) */
        for (size_t i = 0; i < ne; i++)
            so_store(out->data + SO_HEADER + i * c->size, c->size, false,
                     so_load(src + i * c->size, c->size, c->big));
    else if (pl.minbits)
        for (size_t i = 0; i < ne; i++) {
            uint64_t v = so_load(src + i * c->size, c->size, c->big);
            uint64_t k = !c->is_float   ? so_int_code(c, &pl, v)
                         : c->size == 4 ? so_f32_code(c, &pl, v)
                                        : so_f64_code(c, &pl, v);
            so_put(out->data + SO_HEADER, &pos, k, pl.minbits);
        }
    out->size = total;
done:
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * Decoding
 * ------------------------------------------------------------------------------------------------ */
static int
so_decompress(const so_cfg *c, const uint8_t *in, size_t n, uint8_t *dst, size_t dst_n)
{
    size_t   ne = c->cd[SO_NELMTS], msize;
    unsigned minbits, full = 8 * c->size;
    uint64_t minval = 0, pos = 0, need;

    if (dst_n != so_chunk_bytes(c))
        return zarr_error(ZARR_ECODEC,
                          "hdf5_scaleoffset: decoding into %zu bytes, the configuration says %zu elements of "
                          "%u bytes",
                          dst_n, ne, c->size);
    if (c->passthrough) {
        if (n != dst_n)
            return zarr_error(ZARR_ECODEC, "hdf5_scaleoffset: data holds %zu bytes, expected %zu", n, dst_n);
        memcpy(dst, in, n);
        return ZARR_OK;
    }
    if (n < SO_HEADER)
        return zarr_error(ZARR_ECODEC,
                          "hdf5_scaleoffset: data is truncated (%zu bytes, the header alone is %d)", n,
                          SO_HEADER);
    minbits = (unsigned)so_load(in, 4, false);
    if (minbits > full)
        return zarr_error(ZARR_ECODEC,
                          "hdf5_scaleoffset: header says %u bits per element, more than the %u of "
                          "the elements",
                          minbits, full);
    msize = in[4] < 8 ? in[4] : 8;
    for (size_t i = 0; i < msize; i++)
        minval |= (uint64_t)in[5 + i] << (8 * i);
    need = minbits == full ? dst_n : ((uint64_t)ne * minbits + 7) / 8;
    if (n - SO_HEADER < need)
        return zarr_error(
            ZARR_ECODEC,
            "hdf5_scaleoffset: data is truncated (%zu bytes after the header, %llu needed for %zu "
            "elements of %u bits)",
            n - SO_HEADER, (unsigned long long)need, ne, minbits);
    in += SO_HEADER;
    if (minbits == full) {
        for (size_t i = 0; i < ne; i++)
            so_store(dst + i * c->size, c->size, c->big, so_load(in + i * c->size, c->size, false));
        return ZARR_OK;
    }
    for (size_t i = 0; i < ne; i++) {
        uint64_t k = so_get(in, &pos, minbits), v, ones = ((uint64_t)1 << minbits) - 1;
        if (c->fill && k == ones)
            v = c->fillbits;
        else if (!c->is_float)
            v = (k + minval) & so_mask(c->size);
        else if (c->size == 4)
            v = so_f32_bits((float)(int32_t)k / powf(10.0f, (float)(double)c->factor) + so_f32(minval));
        else
            v = so_f64_bits((double)(int64_t)k / pow(10.0, (double)c->factor) + so_f64(minval));
        so_store(dst + i * c->size, c->size, c->big, v);
    }
    return ZARR_OK;
}

/* ------------------------------------------------------------------------------------------------
 * The class
 * ------------------------------------------------------------------------------------------------ */
static int
so_parse(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k)
{
    so_cfg             *c  = ZARR__CODEC_CFG(k, so_cfg);
    struct json_object *l  = zarr__codec_cfg_get(cfg, "cd_values");
    const zarr_chain   *ch = p->chain;
    int                 rc;
    bool                want_signed;

    if (!l || !json_object_is_type(l, json_type_array))
        return zarr_error(ZARR_EMETA,
                          "codec 'hdf5_scaleoffset': 'cd_values' must be a list of %d integers "
                          "(HDF5's scale-offset cd_values after set_local)",
                          SO_NCD);
    if (json_object_array_length(l) != SO_NCD)
        return zarr_error(ZARR_EMETA, "codec 'hdf5_scaleoffset': 'cd_values' has %zu entries, want %d",
                          json_object_array_length(l), SO_NCD);
    for (size_t i = 0; i < SO_NCD; i++) {
        struct json_object *e = json_object_array_get_idx(l, i);
        int64_t             v = json_object_is_type(e, json_type_int) ? json_object_get_int64(e) : -1;
        if (v < 0 || v > UINT32_MAX)
            return zarr_error(
                ZARR_EMETA, "codec 'hdf5_scaleoffset': 'cd_values' entry %zu is not an integer 0..4294967295",
                i);
        c->cd[i] = (unsigned)v;
    }
    if ((rc = so_check(c, ZARR_EMETA)) != ZARR_OK)
        return rc;
    /* the elements entering it must be the ones the cd_values describe */
    want_signed = c->is_signed;
    if (ch->vlen || ch->esize != c->size ||
        (c->is_float ? ch->kind != ZARR_FLOAT : ch->kind != (want_signed ? ZARR_INT : ZARR_UINT)))
        return zarr_error(
            ZARR_EMETA,
            "codec 'hdf5_scaleoffset': cd_values describe %s%s of %u bytes, the array's elements "
            "are not those",
            c->is_float   ? ""
            : want_signed ? "signed "
                          : "unsigned ",
            c->is_float ? "floats" : "integers", c->size);
    if (c->size > 1 && (zarr__chain_element_endian(p) == '>') != c->big)
        return zarr_error(ZARR_EMETA,
                          "codec 'hdf5_scaleoffset': cd_values[6] says %s-endian elements, the array stores "
                          "them %s-endian",
                          c->big ? "big" : "little", c->big ? "little" : "big");
    return ZARR_OK;
}

static int
so_to_json(const zarr_chain *ch, const zarr_codec *k, bool v2, struct json_object *o)
{
    const so_cfg       *c = ZARR__CODEC_CCFG(k, so_cfg);
    struct json_object *a = json_object_new_array();
    int                 rc;
    (void)ch, (void)v2;
    if ((rc = zarr__codec_json_add(o, "cd_values", a)) != ZARR_OK)
        return rc;
    for (size_t i = 0; i < SO_NCD; i++)
        if (json_object_array_add(a, json_object_new_int64((int64_t)c->cd[i])) != 0)
            return zarr_error(ZARR_ENOMEM, "out of memory writing codec 'hdf5_scaleoffset'");
    return ZARR_OK;
}

static int
so_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    (void)ctx;
    return so_compress(ZARR__CODEC_CCFG(k, so_cfg), src, n, out);
}

static int
so_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n)
{
    (void)ctx;
    return so_decompress(ZARR__CODEC_CCFG(k, so_cfg), src, n, dst, dst_n);
}

static int
so_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
              zarr_buf *out)
{
    const so_cfg *c    = ZARR__CODEC_CCFG(k, so_cfg);
    size_t        want = so_chunk_bytes(c);
    int           rc;
    (void)ctx;
    out->size = 0;
    if (want > limit)
        return zarr_error(ZARR_ECODEC, "hdf5_scaleoffset: a chunk of %zu bytes is more than the limit of %zu",
                          want, limit);
    if ((rc = zarr_buf_reserve(out, want)) != ZARR_OK)
        return rc;
    if ((rc = so_decompress(c, src, n, out->data, want)) != ZARR_OK)
        return rc;
    out->size = want;
    return ZARR_OK;
}

/* At most the header, the elements and the spare byte. */
static size_t
so_encoded_bound(const zarr_codec *k, size_t bound)
{
    (void)k;
    return bound == ZARR__SIZE_UNKNOWN || bound > SIZE_MAX - SO_HEADER - 2 ? ZARR__SIZE_UNKNOWN
                                                                           : bound + SO_HEADER + 1;
}

const zarr__codec_class zarr__codec_hdf5_scaleoffset = {
    .v3name        = "hdf5_scaleoffset",
    .v2id          = "hdf5_scaleoffset",
    .stage         = ZARR__STAGE_B2B,
    .flags         = ZARR__CODEC_NO_ALIAS,
    .parse         = so_parse,
    .to_json       = so_to_json,
    .encode        = so_encode,
    .decode        = so_decode,
    .decode_buf    = so_decode_buf,
    .encoded_bound = so_encoded_bound,
};
