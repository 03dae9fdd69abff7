/*
 * codec.c: the codec chain. Parses v3 `codecs` lists and v2 filters/compressor/order into one chain
 * (array->array transposes, one array->bytes codec, bytes->bytes codecs), writes them back as v3 or v2
 * JSON, and encodes/decodes chunks between the memory form (zarr.h "Data types") and stored bytes.
 *
 * Speed: encode and decode ping-pong between the two scratch buffers of the calling thread's
 * zarr_codec_ctx; the encoded result is handed to the caller by swapping buffers (no final copy);
 * checksum codecs are verified in place (no copy); the last decode step writes straight into the
 * caller's memory when the array->bytes step is a plain copy. The byte kernels are in kernels.c.
 *
 * Two codecs are more than a kernel: sharding_indexed (an array->bytes codec that cuts the chunk the
 * engine hands it, a whole shard, into inner chunks with an inner chain and an index with an index
 * chain; the chain keeps the array's fill value for empty inner chunks, see meta_int.h) and numcodecs
 * delta (a bytes->bytes step over elements of its configured numpy type, as v2 filters apply it). In
 * v3, zarr-python 3 (numcodecs.zarr3) has delta as an array->array codec before `bytes`; such a delta
 * is run as the equivalent bytes->bytes step right after `bytes`, in the byte order `bytes` gives the
 * elements, and written back before `bytes` as configured (see v3_delta_a2a).
 *
 * One codec is h5zarr's own: hdf5_lz4 (v3 name and v2 id; configuration {"blocksize": N}) stores
 * chunks in the framing of HDF5's lz4 filter (32004), with the same kernel as that filter's plugin, so
 * chunks move between .h5 files and stores unchanged (docs/FORMAT.md). Other zarr readers do not know
 * it; "numcodecs.hdf5_lz4" is not accepted since numcodecs has no such codec.
 */
#include "internal.h"
#include "kernels.h"
#include "meta_int.h"
#include "zjson.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_ENDIAN '>'
#else
#define HOST_ENDIAN '<'
#endif

#define SIZE_UNKNOWN SIZE_MAX
#define MAX_A2A      8 /* array->array codecs per chain */

typedef enum {
    CODEC_TRANSPOSE,
    CODEC_BYTES,
    CODEC_VLEN_UTF8,
    CODEC_VLEN_BYTES,
    CODEC_GZIP,
    CODEC_ZLIB,
    CODEC_ZSTD,
    CODEC_BLOSC,
    CODEC_SHUFFLE,
    CODEC_CRC32C,
    CODEC_LZ4,
    CODEC_BZ2,
    CODEC_FLETCHER32,
    CODEC_H5LZ4,   /* HDF5's lz4 filter (32004) framing: an h5zarr extension, not a numcodecs codec */
    CODEC_DELTA,   /* numcodecs Delta: a bytes->bytes step over dtype-ordered elements */
    CODEC_SHARDING /* sharding_indexed: the array->bytes codec of a whole shard */
} codec_id;

typedef enum { STAGE_A2A, STAGE_A2B, STAGE_B2B } codec_stage;

static const struct codec_info {
    codec_id    id;
    const char *v3name; /* name written in v3 metadata */
    const char *v2id;   /* numcodecs id (NULL: not a numcodecs codec) */
    codec_stage stage;
    bool        compressor; /* written as the v2 `compressor` when last */
} codec_infos[] = {
    {CODEC_TRANSPOSE, "transpose", NULL, STAGE_A2A, false},
    {CODEC_BYTES, "bytes", NULL, STAGE_A2B, false},
    {CODEC_VLEN_UTF8, "vlen-utf8", "vlen-utf8", STAGE_A2B, false},
    {CODEC_VLEN_BYTES, "vlen-bytes", "vlen-bytes", STAGE_A2B, false},
    {CODEC_GZIP, "gzip", "gzip", STAGE_B2B, true},
    {CODEC_ZLIB, "numcodecs.zlib", "zlib", STAGE_B2B, true},
    {CODEC_ZSTD, "zstd", "zstd", STAGE_B2B, true},
    {CODEC_BLOSC, "blosc", "blosc", STAGE_B2B, true},
    {CODEC_SHUFFLE, "numcodecs.shuffle", "shuffle", STAGE_B2B, false},
    {CODEC_CRC32C, "crc32c", "crc32c", STAGE_B2B, false},
    {CODEC_LZ4, "numcodecs.lz4", "lz4", STAGE_B2B, true},
    {CODEC_BZ2, "numcodecs.bz2", "bz2", STAGE_B2B, true},
    {CODEC_FLETCHER32, "numcodecs.fletcher32", "fletcher32", STAGE_B2B, false},
    {CODEC_H5LZ4, "hdf5_lz4", "hdf5_lz4", STAGE_B2B, true},
    {CODEC_DELTA, "numcodecs.delta", "delta", STAGE_B2B, false},
    {CODEC_SHARDING, "sharding_indexed", NULL, STAGE_A2B, false},
};
#define NCODEC_INFOS (sizeof codec_infos / sizeof codec_infos[0])

static const char *const blosc_cnames[]   = {"blosclz", "lz4", "lz4hc", "zlib", "zstd", "snappy"};
static const char *const blosc_shuffles[] = {"noshuffle", "shuffle", "bitshuffle"};

struct zarr_codec {
    codec_id id;
    union {
        struct {
            int  ndim;
            int  perm[ZARR_MAX_DIMS]; /* encoded dim k = decoded dim perm[k] */
            bool noop;                /* identity permutation */
        } tr;
        char endian; /* bytes: '<', '>', or '|' (not given) */
        int  level;  /* gzip, zlib, bz2 */
        struct {
            int  level;
            bool checksum;
        } zstd;
        struct {
            char   cname[8];
            int    clevel;
            int    shuffle; /* 0, 1, 2 (resolved) */
            bool   shuffle_auto;
            size_t typesize;
            size_t blocksize;
        } blosc;
        size_t elementsize; /* shuffle */
        int    acceleration;
        size_t h5lz4_blocksize; /* hdf5_lz4: HDF5's cd_values[0]; 0 = the filter's default (1 GiB) */
        struct {
            char dtype[8], astype[8]; /* numpy type strings as configured ("<f8") */
            char dkind, akind;        /* 'i', 'u', 'f' */
            int  dsize, asize;
            char dendian, aendian; /* '<', '>' ('|' for one byte) */
            bool a2a; /* v3: configured before the array->bytes codec (zarr-python 3's array->array
                         form); stored after it, with the bytes codec's byte order */
        } delta;
        struct shard_cfg *shard; /* owned */
    } u;
};

/* sharding_indexed: inner chunk shape, inner and index chains. */
typedef struct shard_cfg {
    int         ndim;
    uint64_t    chunk[ZARR_MAX_DIMS];
    zarr_chain *inner; /* for the array's dtype and rank */
    zarr_chain *index; /* uint64, rank ndim + 1 */
    bool        index_end;
    size_t      index_extra; /* bytes the index codecs add to 16 per inner chunk (checksums) */
} shard_cfg;

/* One run of byte-ordered units inside an element: `count` units of `unit` bytes at `off`. */
typedef struct swapseg {
    size_t off, unit, count;
} swapseg;

struct zarr_chain {
    zarr_kind   kind;  /* of the dtype */
    size_t      esize; /* bytes per element in memory form */
    size_t      typesize_default;
    bool        vlen;
    int         ndim;
    size_t      n;      /* codecs */
    zarr_codec *codecs; /* [0, ia2b) array->array, ia2b array->bytes, then bytes->bytes */
    size_t      ia2b;
    size_t      nseg; /* byte-ordered units of one element (empty: no byte order) */
    swapseg    *segs;
    bool        swap;              /* some unit is stored in the other byte order than the host's */
    bool        multibyte;         /* the dtype has units with a byte order */
    bool        v2_order;          /* byte order per dtype (field), as v2 dtypes say, not the codec's */
    bool        any_transpose;     /* a transpose that moves data */
    uint8_t    *fill;              /* one element, memory form (NULL = zeros); sharding reads missing inner
                                      chunks as it and does not store inner chunks equal to it */
    const zarr_dtype *build_dtype; /* borrowed, only while the chain is being parsed */
};

static const struct codec_info *
info_of(codec_id id)
{
    for (size_t i = 0; i < NCODEC_INFOS; i++)
        if (codec_infos[i].id == id)
            return &codec_infos[i];
    return NULL;
}

/* ------------------------------------------------------------------------------------------------
 * Data type facts
 * ------------------------------------------------------------------------------------------------ */
static bool
dtype_has_vlen(const zarr_dtype *t)
{
    if (t->kind == ZARR_VLEN_UTF8 || t->kind == ZARR_VLEN_BYTES)
        return true;
    if (t->kind == ZARR_STRUCT)
        for (size_t i = 0; i < t->nfields; i++)
            if (t->fields[i].type && dtype_has_vlen(t->fields[i].type))
                return true;
    return false;
}

static int
seg_add(zarr_chain *c, size_t *cap, size_t off, size_t unit, size_t count)
{
    if (unit <= 1 || count == 0)
        return ZARR_OK;
    if (c->nseg) {
        swapseg *l = &c->segs[c->nseg - 1];
        if (l->unit == unit && l->off + l->unit * l->count == off) {
            l->count += count;
            return ZARR_OK;
        }
    }
    if (c->nseg == *cap) {
        size_t   ncap = *cap ? *cap * 2 : 4;
        swapseg *p    = realloc(c->segs, ncap * sizeof *p);
        if (!p)
            return zarr_error(ZARR_ENOMEM, "out of memory building a byte-order plan");
        c->segs = p;
        *cap    = ncap;
    }
    c->segs[c->nseg++] = (swapseg){off, unit, count};
    return ZARR_OK;
}

/* Appends the byte-ordered units of `count` consecutive elements of type t at `base`. */
/* `own_order`: keep only the units whose own dtype's byte order (t->endian, per struct field) differs
 * from the host's (v2: the dtype carries the byte order); otherwise keep all (v3: the bytes codec's
 * endian applies to every unit). Sets c->multibyte when any unit has a byte order at all. */
static int
seg_plan(zarr_chain *c, size_t *cap, const zarr_dtype *t, size_t base, size_t count, int depth,
         bool own_order)
{
    int rc = ZARR_OK;
    if (depth > 16)
        return zarr_error(ZARR_EUNSUPPORTED, "struct data type nested too deeply");
    if (t->kind != ZARR_STRUCT && t->kind != ZARR_BOOL && t->kind != ZARR_FIXED_BYTES &&
        t->kind != ZARR_RAW && t->kind != ZARR_VLEN_UTF8 && t->kind != ZARR_VLEN_BYTES) {
        if (t->kind == ZARR_FIXED_UTF32 || t->size > (t->kind == ZARR_COMPLEX ? 2u : 1u))
            c->multibyte = true;
        if (own_order && t->endian != (HOST_ENDIAN == '<' ? '>' : '<'))
            return ZARR_OK;
    }
    switch (t->kind) {
        case ZARR_BOOL:
        case ZARR_FIXED_BYTES:
        case ZARR_RAW:
            return ZARR_OK;
        case ZARR_INT:
        case ZARR_UINT:
        case ZARR_FLOAT:
        case ZARR_DATETIME:
        case ZARR_TIMEDELTA:
            return seg_add(c, cap, base, t->size, count);
        case ZARR_COMPLEX:
            return seg_add(c, cap, base, t->size / 2, count * 2);
        case ZARR_FIXED_UTF32:
            return seg_add(c, cap, base, 4, count * (t->size / 4));
        case ZARR_STRUCT:
            for (size_t j = 0; j < count; j++)
                for (size_t i = 0; i < t->nfields; i++) {
                    const zarr_field *f   = &t->fields[i];
                    uint64_t          sub = 1;
                    for (int d = 0; d < f->ndim && d < 8; d++)
                        if (!zarr__mul_ok(sub, f->shape[d], &sub))
                            return zarr_error(ZARR_EOVERFLOW, "struct field '%s' is too large", f->name);
                    if (!f->type)
                        return zarr_error(ZARR_EINVAL, "struct field '%s' has no type", f->name);
                    if ((rc = seg_plan(c, cap, f->type, base + j * t->size + f->offset, (size_t)sub,
                                       depth + 1, own_order)) != ZARR_OK)
                        return rc;
                }
            return ZARR_OK;
        default:
            return zarr_error(ZARR_EUNSUPPORTED, "the bytes codec can't encode variable-length elements");
    }
}

/* ------------------------------------------------------------------------------------------------
 * JSON helpers
 * ------------------------------------------------------------------------------------------------ */
static struct json_object *
cfg_get(struct json_object *cfg, const char *key)
{
    struct json_object *v = NULL;
    if (cfg && json_object_object_get_ex(cfg, key, &v))
        return v;
    return NULL;
}

/* Integer config value; *present false (and *out = def) when absent. Strings holding an integer are
 * accepted when `allow_string`: NCZarr (netCDF-C 4.9) writes zstd and zlib levels and the shuffle
 * element size that way ({"id": "zlib", "level": "2"}, {"id": "shuffle", "elementsize": "0"}). */
static int
cfg_int(const char *codec, struct json_object *cfg, const char *key, bool allow_string, long long def,
        long long *out)
{
    struct json_object *v = cfg_get(cfg, key);
    *out                  = def;
    if (!v)
        return ZARR_OK;
    switch (json_object_get_type(v)) {
        case json_type_int:
            errno = 0;
            *out  = json_object_get_int64(v);
            if (errno == 0)
                return ZARR_OK;
            break;
        case json_type_double: {
            double d = json_object_get_double(v);
            if (d > -1e15 && d < 1e15 && d == (double)(long long)d) { /* range first: no UB cast */
                *out = (long long)d;
                return ZARR_OK;
            }
            break;
        }
        case json_type_string:
            if (allow_string) {
                const char *s = json_object_get_string(v);
                char       *end;
                errno       = 0;
                long long x = strtoll(s, &end, 10);
                if (*s && !*end && errno == 0) {
                    *out = x;
                    return ZARR_OK;
                }
            }
            break;
        default:
            break;
    }
    return zarr_error(ZARR_EMETA, "codec '%s': '%s' must be an integer, got %s", codec, key,
                      json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

static int
cfg_bool(const char *codec, struct json_object *cfg, const char *key, bool def, bool *out)
{
    struct json_object *v = cfg_get(cfg, key);
    *out                  = def;
    if (!v)
        return ZARR_OK;
    if (json_object_is_type(v, json_type_boolean)) {
        *out = json_object_get_boolean(v);
        return ZARR_OK;
    }
    return zarr_error(ZARR_EMETA, "codec '%s': '%s' must be true or false, got %s", codec, key,
                      json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

static int
cfg_str(const char *codec, struct json_object *cfg, const char *key, const char *def, const char **out)
{
    struct json_object *v = cfg_get(cfg, key);
    *out                  = def;
    if (!v)
        return ZARR_OK;
    if (json_object_is_type(v, json_type_string)) {
        *out = json_object_get_string(v);
        return ZARR_OK;
    }
    return zarr_error(ZARR_EMETA, "codec '%s': '%s' must be a string, got %s", codec, key,
                      json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

static int
range_check(const char *codec, const char *key, long long v, long long lo, long long hi)
{
    if (v < lo || v > hi)
        return zarr_error(ZARR_EMETA, "codec '%s': '%s' is %lld, want %lld..%lld", codec, key, v, lo, hi);
    return ZARR_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Parsing one codec
 * ------------------------------------------------------------------------------------------------ */
static void codec_clear(zarr_codec *k);

/* A numpy number type string for delta: [<>|=]?[iuf]<size>, or a numpy name in the host's order
 * ("int32", "uint8", "float64": what zarr-python 3 documents written with `Delta(dtype="uint32")` say). */
static int
delta_type(const char *key, const char *s, char *kind, int *size, char *endian)
{
    static const struct {
        const char *name;
        char        kind;
        int         size;
    } names[]     = {{"int8", 'i', 1},    {"int16", 'i', 2},  {"int32", 'i', 4},  {"int64", 'i', 8},
                     {"uint8", 'u', 1},   {"uint16", 'u', 2}, {"uint32", 'u', 4}, {"uint64", 'u', 8},
                     {"float32", 'f', 4}, {"float64", 'f', 8}};
    const char *p = s;
    char       *end;
    long        n;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(s, names[i].name) == 0) {
            *kind   = names[i].kind;
            *size   = names[i].size;
            *endian = names[i].size == 1 ? '|' : HOST_ENDIAN;
            return ZARR_OK;
        }
    *endian = HOST_ENDIAN;
    if (*p == '<' || *p == '>' || *p == '|' || *p == '=')
        *endian = *p == '=' ? HOST_ENDIAN : *p, p++;
    *kind = *p;
    if (*p != 'i' && *p != 'u' && *p != 'f')
        goto bad;
    n = strtol(p + 1, &end, 10);
    if (!p[1] || *end || !(n == 1 || n == 2 || n == 4 || n == 8) || (*kind == 'f' && n < 4) || strlen(s) > 7)
        goto bad;
    *size = (int)n;
    if (n == 1)
        *endian = '|';
    else if (*endian == '|')
        goto bad;
    return ZARR_OK;
bad:
    return zarr_error(ZARR_EUNSUPPORTED,
                      "codec 'delta': '%s' is \"%s\"; supported are integer and float types like \"<i4\", "
                      "\"<f8\", \"int32\"",
                      key, s);
}

/* Bytes the index codecs add to the 16 bytes per inner chunk; fails unless that is fixed. */
static int
shard_index_extra(const zarr_chain *ix, size_t *extra)
{
    *extra = 0;
    if (ix->codecs[ix->ia2b].id != CODEC_BYTES)
        return zarr_error(ZARR_EUNSUPPORTED, "codec 'sharding_indexed': 'index_codecs' must use 'bytes'");
    for (size_t i = ix->ia2b + 1; i < ix->n; i++) {
        if (ix->codecs[i].id == CODEC_CRC32C || ix->codecs[i].id == CODEC_FLETCHER32)
            *extra += 4;
        else if (ix->codecs[i].id != CODEC_SHUFFLE)
            return zarr_error(ZARR_EUNSUPPORTED,
                              "codec 'sharding_indexed': index codec '%s' has no fixed encoded size",
                              info_of(ix->codecs[i].id)->v3name);
    }
    return ZARR_OK;
}

static int
parse_sharding(const zarr_chain *c, struct json_object *cfg, zarr_codec *k)
{
    struct json_object *v, *ixj = NULL;
    shard_cfg          *sh;
    zarr_dtype         *u64 = NULL;
    const char         *loc;
    int                 n = 0, rc = ZARR_OK;

    if (!c->build_dtype)
        return zarr_error(ZARR_EUNSUPPORTED, "codec 'sharding_indexed' can't be used here");
    if (!cfg)
        return zarr_error(ZARR_EMETA, "codec 'sharding_indexed': missing 'configuration'");
    if (c->ndim >= ZARR_MAX_DIMS)
        return zarr_error(ZARR_EUNSUPPORTED, "codec 'sharding_indexed': too many dims (%d)", c->ndim);
    if (!(sh = calloc(1, sizeof *sh)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    k->u.shard = sh;
    sh->ndim   = c->ndim;
    ZARR_TRY(
        zarr__json_get_uint_list(cfg, "chunk_shape", 1, "sharding_indexed", sh->chunk, ZARR_MAX_DIMS, &n));
    if (n != c->ndim)
        ZARR_FAIL(ZARR_EMETA, "codec 'sharding_indexed': 'chunk_shape' has %d entries, the array has %d dims",
                  n, c->ndim);
    if (!json_object_object_get_ex(cfg, "codecs", &v) || !json_object_is_type(v, json_type_array))
        ZARR_FAIL(ZARR_EMETA, "codec 'sharding_indexed': 'codecs' must be a list");
    if ((rc = zarr_chain_from_v3_json(v, c->build_dtype, c->ndim, &sh->inner)) != ZARR_OK) {
        zarr_error_wrap(rc, "codec 'sharding_indexed': 'codecs': ");
        goto done;
    }
    if (json_object_object_get_ex(cfg, "index_codecs", &v)) {
        if (!json_object_is_type(v, json_type_array))
            ZARR_FAIL(ZARR_EMETA, "codec 'sharding_indexed': 'index_codecs' must be a list");
        ixj = json_object_get(v);
    }
    else if (!(ixj = json_tokener_parse(
                   "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"crc32c\"}]")))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    if (!(u64 = zarr_dtype_new(ZARR_UINT, 8)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    if ((rc = zarr_chain_from_v3_json(ixj, u64, c->ndim + 1, &sh->index)) != ZARR_OK) {
        zarr_error_wrap(rc, "codec 'sharding_indexed': 'index_codecs': ");
        goto done;
    }
    ZARR_TRY(shard_index_extra(sh->index, &sh->index_extra));
    ZARR_TRY(cfg_str("sharding_indexed", cfg, "index_location", "end", &loc));
    if (strcmp(loc, "end") != 0 && strcmp(loc, "start") != 0)
        ZARR_FAIL(ZARR_EMETA,
                  "codec 'sharding_indexed': 'index_location' must be \"start\" or \"end\", got \"%s\"", loc);
    sh->index_end = loc[0] == 'e';
done:
    json_object_put(ixj);
    zarr_dtype_free(u64);
    if (rc != ZARR_OK)
        codec_clear(k);
    return rc;
}
/* `name`: v3 name, "numcodecs.<id>" or (v2) numcodecs id. `v2style`: numcodecs configuration keys and
 * defaults (v2 and numcodecs.* names) rather than the v3 spec's. */
static int
parse_codec(const zarr_chain *c, const char *name, struct json_object *cfg, bool v2style, zarr_codec *k)
{
    const char *id = name;
    long long   x;
    int         rc    = ZARR_OK;
    bool        found = false;

    memset(k, 0, sizeof *k);
    if (strncmp(name, "numcodecs.", 10) == 0) {
        id      = name + 10;
        v2style = true;
    }
    for (size_t i = 0; i < NCODEC_INFOS && !found; i++) {
        const struct codec_info *in = &codec_infos[i];
        if ((in->v2id && strcmp(id, in->v2id) == 0) || (!v2style && strcmp(name, in->v3name) == 0)) {
            k->id = in->id;
            found = true;
        }
    }
    if (!found && !v2style && strcmp(name, "endian") == 0) { /* pre-1.0 name of "bytes" */
        k->id = CODEC_BYTES;
        found = true;
    }
    if (found && k->id == CODEC_H5LZ4 && id != name) /* no numcodecs.hdf5_lz4: it is not numcodecs' */
        found = false;
    if (!found)
        return zarr_error(ZARR_EUNSUPPORTED, "codec '%s' is not supported by this build", name);
    if (cfg && !json_object_is_type(cfg, json_type_object))
        return zarr_error(ZARR_EMETA, "codec '%s': 'configuration' must be an object", name);

    switch (k->id) {
        case CODEC_TRANSPOSE: {
            struct json_object *o = cfg_get(cfg, "order");
            k->u.tr.ndim          = c->ndim;
            k->u.tr.noop          = true;
            if (o && json_object_is_type(o, json_type_string)) {
                const char *s = json_object_get_string(o);
                if (strcmp(s, "C") != 0 && strcmp(s, "F") != 0)
                    return zarr_error(ZARR_EMETA, "codec 'transpose': 'order' must be a list or \"C\"/\"F\"");
                for (int d = 0; d < c->ndim; d++)
                    k->u.tr.perm[d] = s[0] == 'F' ? c->ndim - 1 - d : d;
            }
            else if (o && json_object_is_type(o, json_type_array)) {
                bool seen[ZARR_MAX_DIMS] = {false};
                if ((int)json_object_array_length(o) != c->ndim)
                    return zarr_error(ZARR_EMETA,
                                      "codec 'transpose': 'order' has %zu entries, the array has %d dims",
                                      json_object_array_length(o), c->ndim);
                for (int d = 0; d < c->ndim; d++) {
                    struct json_object *e = json_object_array_get_idx(o, (size_t)d);
                    long long           p;
                    if (!json_object_is_type(e, json_type_int) || (p = json_object_get_int64(e)) < 0 ||
                        p >= c->ndim || seen[p])
                        return zarr_error(ZARR_EMETA,
                                          "codec 'transpose': 'order' must be a permutation of 0..%d",
                                          c->ndim - 1);
                    seen[p]         = true;
                    k->u.tr.perm[d] = (int)p;
                }
            }
            else
                return zarr_error(ZARR_EMETA, "codec 'transpose': 'order' must be a list of integers");
            for (int d = 0; d < c->ndim; d++)
                if (k->u.tr.perm[d] != d)
                    k->u.tr.noop = false;
            break;
        }
        case CODEC_BYTES: {
            const char *e;
            if ((rc = cfg_str("bytes", cfg, "endian", NULL, &e)) != ZARR_OK)
                return rc;
            if (!e)
                k->u.endian = '|';
            else if (strcmp(e, "little") == 0)
                k->u.endian = '<';
            else if (strcmp(e, "big") == 0)
                k->u.endian = '>';
            else
                return zarr_error(ZARR_EMETA,
                                  "codec 'bytes': 'endian' must be \"little\" or \"big\", got \"%s\"", e);
            break;
        }
        case CODEC_VLEN_UTF8:
        case CODEC_VLEN_BYTES:
        case CODEC_CRC32C:
        case CODEC_FLETCHER32:
            break;
        case CODEC_GZIP:
        case CODEC_ZLIB:
            if ((rc = cfg_int(id, cfg, "level", true, v2style ? 1 : 5, &x)) != ZARR_OK ||
                (rc = range_check(id, "level", x, -1, 9)) != ZARR_OK)
                return rc;
            k->u.level = (int)x;
            break;
        case CODEC_ZSTD:
            if ((rc = cfg_int("zstd", cfg, "level", true, v2style ? 1 : 0, &x)) != ZARR_OK ||
                (rc = range_check("zstd", "level", x, -(1 << 20), 1 << 20)) != ZARR_OK ||
                (rc = cfg_bool("zstd", cfg, "checksum", false, &k->u.zstd.checksum)) != ZARR_OK)
                return rc;
            k->u.zstd.level = (int)x;
            break;
        case CODEC_BLOSC: {
            const char         *cname;
            struct json_object *sh = cfg_get(cfg, "shuffle");
            bool                ok = false;
            if ((rc = cfg_str("blosc", cfg, "cname", v2style ? "lz4" : "zstd", &cname)) != ZARR_OK)
                return rc;
            for (size_t i = 0; i < sizeof blosc_cnames / sizeof blosc_cnames[0]; i++)
                ok |= strcmp(cname, blosc_cnames[i]) == 0;
            if (!ok)
                return zarr_error(ZARR_EMETA, "codec 'blosc': unknown 'cname' \"%s\"", cname);
            snprintf(k->u.blosc.cname, sizeof k->u.blosc.cname, "%s", cname);
            if ((rc = cfg_int("blosc", cfg, "clevel", false, 5, &x)) != ZARR_OK ||
                (rc = range_check("blosc", "clevel", x, 0, 9)) != ZARR_OK)
                return rc;
            k->u.blosc.clevel = (int)x;
            if (sh && json_object_is_type(sh, json_type_string)) {
                const char *s      = json_object_get_string(sh);
                k->u.blosc.shuffle = -2;
                for (int i = 0; i < 3; i++)
                    if (strcmp(s, blosc_shuffles[i]) == 0)
                        k->u.blosc.shuffle = i;
                if (k->u.blosc.shuffle == -2)
                    return zarr_error(
                        ZARR_EMETA,
                        "codec 'blosc': 'shuffle' must be \"noshuffle\", \"shuffle\" or \"bitshuffle\", "
                        "got \"%s\"",
                        s);
            }
            else {
                if ((rc = cfg_int("blosc", cfg, "shuffle", false, v2style ? 1 : 0, &x)) != ZARR_OK ||
                    (rc = range_check("blosc", "shuffle", x, -1, 2)) != ZARR_OK)
                    return rc;
                k->u.blosc.shuffle_auto = x == -1;
                k->u.blosc.shuffle      = x == -1 ? (c->typesize_default == 1 ? 2 : 1) : (int)x;
            }
            if ((rc = cfg_int("blosc", cfg, "typesize", false, (long long)c->typesize_default, &x)) !=
                    ZARR_OK ||
                (rc = range_check("blosc", "typesize", x, 1, 1LL << 40)) != ZARR_OK)
                return rc;
            k->u.blosc.typesize = (size_t)x;
            if ((rc = cfg_int("blosc", cfg, "blocksize", false, 0, &x)) != ZARR_OK ||
                (rc = range_check("blosc", "blocksize", x, 0, 1LL << 40)) != ZARR_OK)
                return rc;
            k->u.blosc.blocksize = (size_t)x;
            break;
        }
        case CODEC_SHUFFLE:
            if ((rc = cfg_int("shuffle", cfg, "elementsize", true, 4, &x)) != ZARR_OK ||
                (rc = range_check("shuffle", "elementsize", x, 0, 1LL << 40)) != ZARR_OK)
                return rc;
            /* numcodecs' 0 (a number) is no shuffle at all (a copy); NCZarr's "0" (a string: only
             * NCZarr writes strings here) is written before it knows the type size, and NCZarr reads
             * every shuffle with the variable's type size, so that is what it means */
            if (x == 0 && json_object_is_type(cfg_get(cfg, "elementsize"), json_type_string))
                x = c->vlen ? 1 : (long long)c->esize;
            k->u.elementsize = (size_t)x;
            break;
        case CODEC_BZ2: /* numcodecs' default level is 1; NCZarr writes the level as a string */
            if ((rc = cfg_int("bz2", cfg, "level", true, 1, &x)) != ZARR_OK ||
                (rc = range_check("bz2", "level", x, 1, 9)) != ZARR_OK)
                return rc;
            k->u.level = (int)x;
            break;
        case CODEC_LZ4:
            if ((rc = cfg_int("lz4", cfg, "acceleration", false, 1, &x)) != ZARR_OK ||
                (rc = range_check("lz4", "acceleration", x, -(1LL << 30), 1LL << 30)) != ZARR_OK)
                return rc;
            k->u.acceleration = (int)x;
            break;
        case CODEC_H5LZ4: /* the block size is an HDF5 cd_value: an unsigned 32-bit integer */
            if ((rc = cfg_int("hdf5_lz4", cfg, "blocksize", false, 0, &x)) != ZARR_OK ||
                (rc = range_check("hdf5_lz4", "blocksize", x, 0, UINT32_MAX)) != ZARR_OK)
                return rc;
            k->u.h5lz4_blocksize = (size_t)x;
            break;
        case CODEC_DELTA: {
            const char *dt, *at;
            if ((rc = cfg_str("delta", cfg, "dtype", NULL, &dt)) != ZARR_OK)
                return rc;
            if (!dt)
                return zarr_error(ZARR_EMETA, "codec 'delta': missing 'dtype'");
            if (json_object_is_type(cfg_get(cfg, "astype"), json_type_null))
                at = dt;
            else if ((rc = cfg_str("delta", cfg, "astype", dt, &at)) != ZARR_OK)
                return rc;
            if ((rc = delta_type("dtype", dt, &k->u.delta.dkind, &k->u.delta.dsize, &k->u.delta.dendian)) !=
                    ZARR_OK ||
                (rc = delta_type("astype", at, &k->u.delta.akind, &k->u.delta.asize, &k->u.delta.aendian)) !=
                    ZARR_OK)
                return rc;
            if ((k->u.delta.dkind == 'f') != (k->u.delta.akind == 'f'))
                return zarr_error(ZARR_EUNSUPPORTED,
                                  "codec 'delta': casting between integer and float ('%s' -> '%s') is not "
                                  "supported",
                                  dt, at);
            snprintf(k->u.delta.dtype, sizeof k->u.delta.dtype, "%s", dt);
            snprintf(k->u.delta.astype, sizeof k->u.delta.astype, "%s", at);
            break;
        }
        case CODEC_SHARDING:
            return parse_sharding(c, cfg, k);
    }
    return ZARR_OK;
}

/* A v3 codec entry: "name" or {"name":..., "configuration":{...}}. */
static int
parse_v3_entry(const zarr_chain *c, struct json_object *j, zarr_codec *k)
{
    struct json_object *name = NULL, *cfg = NULL;
    if (json_object_is_type(j, json_type_string))
        return parse_codec(c, json_object_get_string(j), NULL, false, k);
    if (!json_object_is_type(j, json_type_object))
        return zarr_error(ZARR_EMETA, "'codecs' entries must be objects or names, got %s",
                          json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    if (!json_object_object_get_ex(j, "name", &name) || !json_object_is_type(name, json_type_string))
        return zarr_error(ZARR_EMETA, "codec entry without a string 'name': %s",
                          json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    json_object_object_get_ex(j, "configuration", &cfg);
    if (cfg && json_object_is_type(cfg, json_type_null))
        cfg = NULL;
    return parse_codec(c, json_object_get_string(name), cfg, false, k);
}

/* A numcodecs configuration {"id": ..., ...}. */
static int
parse_v2_entry(const zarr_chain *c, struct json_object *j, const char *what, zarr_codec *k)
{
    struct json_object *id = NULL;
    if (!json_object_is_type(j, json_type_object))
        return zarr_error(ZARR_EMETA, "'%s' must be an object with an 'id', got %s", what,
                          json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    if (!json_object_object_get_ex(j, "id", &id) || !json_object_is_type(id, json_type_string))
        return zarr_error(ZARR_EMETA, "'%s' has no string 'id': %s", what,
                          json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    return parse_codec(c, json_object_get_string(id), j, true, k);
}

/* ------------------------------------------------------------------------------------------------
 * Chain construction
 * ------------------------------------------------------------------------------------------------ */
static int
chain_init(const zarr_dtype *t, int ndim, zarr_chain **out)
{
    zarr_chain *c;
    *out = NULL;
    if (!t)
        return zarr_error(ZARR_EINVAL, "codec chain: no data type");
    if (ndim < 0 || ndim > ZARR_MAX_DIMS)
        return zarr_error(ZARR_EINVAL, "codec chain: %d dims (want 0..%d)", ndim, ZARR_MAX_DIMS);
    if (t->size == 0)
        return zarr_error(ZARR_EINVAL, "codec chain: data type of size 0");
    if (!(c = calloc(1, sizeof *c)))
        return zarr_error(ZARR_ENOMEM, "out of memory allocating a codec chain");
    c->kind             = t->kind;
    c->esize            = t->size;
    c->ndim             = ndim;
    c->vlen             = dtype_has_vlen(t);
    c->typesize_default = c->vlen || t->size > 255 ? 1 : t->size;
    if (t->kind == ZARR_VLEN_UTF8 && t->size != sizeof(char *)) {
        free(c);
        return zarr_error(ZARR_EINVAL, "codec chain: vlen string elements must be %zu bytes, got %zu",
                          sizeof(char *), t->size);
    }
    if (t->kind == ZARR_VLEN_BYTES && t->size != sizeof(zarr_vlen)) {
        free(c);
        return zarr_error(ZARR_EINVAL, "codec chain: vlen bytes elements must be %zu bytes, got %zu",
                          sizeof(zarr_vlen), t->size);
    }
    *out = c;
    return ZARR_OK;
}

static int
chain_push(zarr_chain *c, const zarr_codec *k)
{
    zarr_codec *p = realloc(c->codecs, (c->n + 1) * sizeof *p);
    if (!p)
        return zarr_error(ZARR_ENOMEM, "out of memory growing a codec chain");
    c->codecs       = p;
    c->codecs[c->n] = *k;
    c->n++;
    return ZARR_OK;
}

/* Checks the order of stages and the array->bytes codec against the dtype; computes the plan. */
static int
chain_finish(zarr_chain *c, const zarr_dtype *t)
{
    size_t      na2b = 0, na2a = 0, segcap = 0;
    int         rc;
    codec_stage last = STAGE_A2A;

    for (size_t i = 0; i < c->n; i++) {
        const struct codec_info *in = info_of(c->codecs[i].id);
        if (in->stage < last)
            return zarr_error(ZARR_EMETA, "codec '%s' can't come after a %s codec", in->v3name,
                              last == STAGE_B2B ? "bytes->bytes" : "array->bytes");
        if (in->stage == STAGE_A2B) {
            if (na2b++)
                return zarr_error(ZARR_EMETA, "more than one array->bytes codec ('%s')", in->v3name);
            c->ia2b = i;
        }
        if (in->stage == STAGE_A2A) {
            if (++na2a > MAX_A2A)
                return zarr_error(ZARR_EUNSUPPORTED, "more than %d array->array codecs", MAX_A2A);
            if (!c->codecs[i].u.tr.noop)
                c->any_transpose = true;
        }
        last = in->stage;
    }
    if (!na2b)
        return zarr_error(ZARR_EMETA, "codecs have no array->bytes codec (bytes, vlen-utf8, vlen-bytes)");
    switch (c->codecs[c->ia2b].id) {
        case CODEC_SHARDING: /* the inner chain was checked against the dtype */
            break;
        case CODEC_VLEN_UTF8:
            if (c->kind != ZARR_VLEN_UTF8)
                return zarr_error(ZARR_EMETA, "codec 'vlen-utf8' needs the string data type");
            break;
        case CODEC_VLEN_BYTES:
            if (c->kind != ZARR_VLEN_BYTES)
                return zarr_error(ZARR_EMETA, "codec 'vlen-bytes' needs the variable-length bytes data type");
            break;
        default:
            if (c->kind == ZARR_VLEN_UTF8 || c->kind == ZARR_VLEN_BYTES)
                return zarr_error(ZARR_EMETA, "variable-length data needs codec '%s', not 'bytes'",
                                  c->kind == ZARR_VLEN_UTF8 ? "vlen-utf8" : "vlen-bytes");
            if (c->vlen)
                return zarr_error(ZARR_EUNSUPPORTED, "struct data types with variable-length fields can't be "
                                                     "encoded");
            free(c->segs);
            c->segs      = NULL;
            c->nseg      = 0;
            c->multibyte = false;
            if ((rc = seg_plan(c, &segcap, t, 0, 1, 0, c->v2_order)) != ZARR_OK)
                return rc;
            if (c->v2_order)
                c->swap = c->nseg > 0;
            else {
                char e  = c->codecs[c->ia2b].u.endian;
                c->swap = c->nseg > 0 && (e == '|' ? '<' : e) != HOST_ENDIAN;
            }
            break;
    }
    return ZARR_OK;
}

/* A v3 numcodecs.delta before the array->bytes codec is zarr-python 3's array->array form: numcodecs
 * views the chunk's elements as `dtype` and writes `astype` elements, which `bytes` then stores in its
 * byte order. That is the bytes->bytes delta right after `bytes`, reading and writing the elements in
 * the byte order `bytes` gave them, as long as `dtype` is the array's own number type in memory order
 * and `astype` has its size (zarr-python 3 itself reads no other astype there: it keeps the array's
 * type for `bytes`). The caller sets the byte orders once it has the `bytes` codec. */
static int
v3_delta_a2a(const zarr_dtype *t, zarr_codec *k)
{
    bool num = t->kind == ZARR_INT || t->kind == ZARR_UINT || t->kind == ZARR_FLOAT;
    if (!num || (size_t)k->u.delta.dsize != t->size || (k->u.delta.dkind == 'f') != (t->kind == ZARR_FLOAT))
        return zarr_error(
            ZARR_EUNSUPPORTED,
            "codec 'numcodecs.delta' before 'bytes': 'dtype' \"%s\" is not the array's data type",
            k->u.delta.dtype);
    if (k->u.delta.dendian != '|' && k->u.delta.dendian != HOST_ENDIAN)
        return zarr_error(ZARR_EUNSUPPORTED,
                          "codec 'numcodecs.delta' before 'bytes': 'dtype' \"%s\" is not in the memory byte "
                          "order",
                          k->u.delta.dtype);
    if (k->u.delta.asize != k->u.delta.dsize)
        return zarr_error(ZARR_EUNSUPPORTED,
                          "codec 'numcodecs.delta' before 'bytes': 'astype' \"%s\" has another size than "
                          "'dtype' \"%s\" (not readable there)",
                          k->u.delta.astype, k->u.delta.dtype);
    k->u.delta.a2a = true;
    return ZARR_OK;
}

int
zarr_chain_from_v3_json(struct json_object *codecs, const zarr_dtype *t, int ndim, zarr_chain **out)
{
    zarr_chain *c = NULL;
    zarr_codec  k, pend[MAX_A2A]; /* array->array deltas waiting for their `bytes` (no owned memory) */
    size_t      npend    = 0;
    bool        a2b_seen = false;
    int         rc;

    if (!out)
        return zarr_error(ZARR_EINVAL, "zarr_chain_from_v3_json: no output");
    ZARR_TRY(chain_init(t, ndim, &c));
    if (!codecs || !json_object_is_type(codecs, json_type_array))
        ZARR_FAIL(ZARR_EMETA, "'codecs' must be a list");
    c->build_dtype = t;
    for (size_t i = 0; i < json_object_array_length(codecs); i++) {
        ZARR_TRY(parse_v3_entry(c, json_object_array_get_idx(codecs, i), &k));
        if (k.id == CODEC_DELTA && !a2b_seen) { /* zarr-python 3's array->array delta */
            ZARR_TRY(v3_delta_a2a(t, &k));
            if (npend == MAX_A2A)
                ZARR_FAIL(ZARR_EUNSUPPORTED, "more than %d array->array codecs", MAX_A2A);
            pend[npend++] = k;
            continue;
        }
        if (npend && info_of(k.id)->stage == STAGE_A2A) {
            codec_clear(&k);
            ZARR_FAIL(ZARR_EUNSUPPORTED,
                      "codec '%s' after 'numcodecs.delta' is not supported (delta has to "
                      "come right before 'bytes')",
                      info_of(k.id)->v3name);
        }
        if (npend && info_of(k.id)->stage == STAGE_A2B && k.id != CODEC_BYTES) {
            codec_clear(&k);
            ZARR_FAIL(ZARR_EUNSUPPORTED,
                      "codec 'numcodecs.delta' before '%s' is not supported (only before "
                      "'bytes')",
                      info_of(k.id)->v3name);
        }
        if ((rc = chain_push(c, &k)) != ZARR_OK) {
            codec_clear(&k);
            goto done;
        }
        if (info_of(k.id)->stage == STAGE_A2B) {
            /* the deltas run right after `bytes`, over the elements in the byte order it wrote */
            char e   = k.id == CODEC_BYTES && k.u.endian != '|' ? k.u.endian : HOST_ENDIAN;
            a2b_seen = true;
            for (size_t j = 0; j < npend; j++) {
                zarr_codec *d      = &pend[j];
                d->u.delta.dendian = d->u.delta.dsize == 1 ? '|' : e;
                d->u.delta.aendian = d->u.delta.asize == 1 ? '|' : e;
                ZARR_TRY(chain_push(c, d));
            }
            npend = 0;
        }
    }
    if (npend)
        ZARR_FAIL(ZARR_EMETA, "codecs have no array->bytes codec (bytes, vlen-utf8, vlen-bytes)");
    c->build_dtype = NULL;
    ZARR_TRY(chain_finish(c, t));
done:
    if (rc != ZARR_OK) {
        zarr_chain_free(c);
        c = NULL;
    }
    if (out)
        *out = c;
    return rc;
}

static bool
json_is_null(struct json_object *j)
{
    return !j || json_object_is_type(j, json_type_null);
}

int
zarr_chain_from_v2_json(struct json_object *filters, struct json_object *compressor, char order,
                        const zarr_dtype *t, int ndim, zarr_chain **out)
{
    zarr_chain *c = NULL;
    zarr_codec  k;
    int         rc;
    size_t      nf = 0, i0 = 0;

    if (!out)
        return zarr_error(ZARR_EINVAL, "zarr_chain_from_v2_json: no output");
    ZARR_TRY(chain_init(t, ndim, &c));
    if (order != 'C' && order != 'F')
        ZARR_FAIL(ZARR_EMETA, "'order' must be \"C\" or \"F\"");
    if (!json_is_null(filters) && !json_object_is_type(filters, json_type_array))
        ZARR_FAIL(ZARR_EMETA, "'filters' must be a list or null");
    if (!json_is_null(filters))
        nf = json_object_array_length(filters);
    if (order == 'F' && ndim >= 2) {
        memset(&k, 0, sizeof k);
        k.id        = CODEC_TRANSPOSE;
        k.u.tr.ndim = ndim;
        for (int d = 0; d < ndim; d++)
            k.u.tr.perm[d] = ndim - 1 - d;
        ZARR_TRY(chain_push(c, &k));
    }
    /* The array->bytes step: an object codec from the filters for vlen types, else the dtype order. */
    if (c->vlen) {
        if (nf == 0)
            ZARR_FAIL(ZARR_EMETA, "object data type without a vlen-utf8 / vlen-bytes filter");
        ZARR_TRY(parse_v2_entry(c, json_object_array_get_idx(filters, 0), "filters", &k));
        if (info_of(k.id)->stage != STAGE_A2B)
            ZARR_FAIL(ZARR_EMETA, "object data type: the first filter must be vlen-utf8 or vlen-bytes");
        i0 = 1;
    }
    else {
        memset(&k, 0, sizeof k);
        k.id        = CODEC_BYTES;
        k.u.endian  = t->endian == '>' ? '>' : '<';
        c->v2_order = true;
    }
    ZARR_TRY(chain_push(c, &k));
    for (size_t i = i0; i < nf; i++) {
        ZARR_TRY(parse_v2_entry(c, json_object_array_get_idx(filters, i), "filters", &k));
        if (info_of(k.id)->stage != STAGE_B2B)
            ZARR_FAIL(ZARR_EMETA, "filter '%s' can't be used here", info_of(k.id)->v3name);
        ZARR_TRY(chain_push(c, &k));
    }
    if (!json_is_null(compressor)) {
        ZARR_TRY(parse_v2_entry(c, compressor, "compressor", &k));
        if (info_of(k.id)->stage != STAGE_B2B)
            ZARR_FAIL(ZARR_EMETA, "compressor '%s' is not a bytes->bytes codec", info_of(k.id)->v3name);
        ZARR_TRY(chain_push(c, &k));
    }
    ZARR_TRY(chain_finish(c, t));
done:
    if (rc != ZARR_OK) {
        zarr_chain_free(c);
        c = NULL;
    }
    if (out)
        *out = c;
    return rc;
}

int
zarr_chain_new_plain(const zarr_dtype *t, int ndim, char endian, zarr_chain **out)
{
    zarr_chain *c = NULL;
    zarr_codec  k;
    int         rc;

    if (!out)
        return zarr_error(ZARR_EINVAL, "zarr_chain_new_plain: no output");
    ZARR_TRY(chain_init(t, ndim, &c));
    memset(&k, 0, sizeof k);
    if (t->kind == ZARR_VLEN_UTF8)
        k.id = CODEC_VLEN_UTF8;
    else if (t->kind == ZARR_VLEN_BYTES)
        k.id = CODEC_VLEN_BYTES;
    else {
        k.id       = CODEC_BYTES;
        k.u.endian = endian == '>' ? '>' : '<';
    }
    ZARR_TRY(chain_push(c, &k));
    ZARR_TRY(chain_finish(c, t));
done:
    if (rc != ZARR_OK) {
        zarr_chain_free(c);
        c = NULL;
    }
    *out = c;
    return rc;
}

int
zarr_chain_append_json(zarr_chain *c, struct json_object *codec)
{
    zarr_codec k;
    int        rc;
    if (!c)
        return zarr_error(ZARR_EINVAL, "zarr_chain_append_json: no chain");
    if ((rc = parse_v3_entry(c, codec, &k)) != ZARR_OK)
        return rc;
    if (info_of(k.id)->stage != STAGE_B2B)
        return zarr_error(ZARR_EINVAL, "codec '%s' is not a bytes->bytes codec and can't be appended",
                          info_of(k.id)->v3name);
    return chain_push(c, &k);
}

static void
codec_clear(zarr_codec *k)
{
    if (k->id == CODEC_SHARDING && k->u.shard) {
        zarr_chain_free(k->u.shard->inner);
        zarr_chain_free(k->u.shard->index);
        free(k->u.shard);
        k->u.shard = NULL;
    }
}

void
zarr_chain_free(zarr_chain *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        codec_clear(&c->codecs[i]);
    free(c->fill);
    free(c->codecs);
    free(c->segs);
    free(c);
}

zarr_chain *
zarr_chain_copy(const zarr_chain *c)
{
    zarr_chain *d;
    if (!c)
        return NULL;
    if (!(d = malloc(sizeof *d)))
        goto nomem;
    *d        = *c;
    d->codecs = NULL;
    d->segs   = NULL;
    d->fill   = NULL;
    d->n      = 0;
    if (c->n && !(d->codecs = malloc(c->n * sizeof *d->codecs)))
        goto nomem;
    if (c->nseg && !(d->segs = malloc(c->nseg * sizeof *d->segs)))
        goto nomem;
    if (c->fill && !(d->fill = malloc(c->esize)))
        goto nomem;
    if (c->fill)
        memcpy(d->fill, c->fill, c->esize);
    if (c->n)
        memcpy(d->codecs, c->codecs, c->n * sizeof *d->codecs);
    for (size_t i = 0; i < c->n; i++)
        if (c->codecs[i].id == CODEC_SHARDING)
            d->codecs[i].u.shard = NULL;
    d->n = c->n;
    for (size_t i = 0; i < c->n; i++)
        if (c->codecs[i].id == CODEC_SHARDING) {
            shard_cfg *sh = malloc(sizeof *sh);
            if (!sh)
                goto nomem;
            *sh                  = *c->codecs[i].u.shard;
            sh->inner            = NULL;
            sh->index            = NULL;
            d->codecs[i].u.shard = sh;
            if (!(sh->inner = zarr_chain_copy(c->codecs[i].u.shard->inner)) ||
                !(sh->index = zarr_chain_copy(c->codecs[i].u.shard->index)))
                goto nomem;
        }
    if (c->nseg)
        memcpy(d->segs, c->segs, c->nseg * sizeof *d->segs);
    return d;
nomem:
    zarr_chain_free(d);
    zarr_error(ZARR_ENOMEM, "out of memory copying a codec chain");
    return NULL;
}

bool
zarr_chain_is_identity(const zarr_chain *c)
{
    return c && !c->vlen && !c->any_transpose && !c->swap && c->ia2b + 1 == c->n &&
           c->codecs[c->ia2b].id == CODEC_BYTES;
}

size_t
zarr_chain_count(const zarr_chain *c)
{
    return c ? c->n : 0;
}

char
zarr__chain_v2_order(const zarr_chain *c)
{
    if (!c || c->ia2b != 1 || c->codecs[0].id != CODEC_TRANSPOSE || c->ndim < 2)
        return 'C';
    for (int d = 0; d < c->ndim; d++)
        if (c->codecs[0].u.tr.perm[d] != c->ndim - 1 - d)
            return 'C';
    return 'F';
}

int
zarr__chain_set_fill(zarr_chain *c, const void *fill)
{
    int rc;
    if (!c)
        return ZARR_OK;
    for (size_t i = 0; i < c->n; i++)
        if (c->codecs[i].id == CODEC_SHARDING &&
            (rc = zarr__chain_set_fill(c->codecs[i].u.shard->inner, fill)) != ZARR_OK)
            return rc;
    if (!fill || c->vlen) {
        free(c->fill);
        c->fill = NULL;
        return ZARR_OK;
    }
    if (c->fill && memcmp(c->fill, fill, c->esize) == 0)
        return ZARR_OK; /* unchanged: no write, so readers of the chain never race with this */
    if (!c->fill && !(c->fill = malloc(c->esize)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    memcpy(c->fill, fill, c->esize);
    return ZARR_OK;
}

bool
zarr__chain_has_sharding(const zarr_chain *c)
{
    return c && c->codecs[c->ia2b].id == CODEC_SHARDING;
}

int
zarr__chain_shard_layout(const zarr_chain *c, const uint64_t *shard_shape, zarr__shard_layout *l)
{
    const shard_cfg *sh;
    uint64_t         ni = 1, x;

    if (!c || c->n != 1 || c->ia2b != 0 || c->codecs[0].id != CODEC_SHARDING || c->vlen)
        return ZARR_EUNSUPPORTED; /* no message: the caller takes the whole-shard path */
    sh = c->codecs[0].u.shard;
    memset(l, 0, sizeof *l);
    l->ndim = sh->ndim;
    for (int d = 0; d < sh->ndim; d++) {
        if (sh->chunk[d] == 0 || shard_shape[d] % sh->chunk[d] != 0)
            return zarr_error(ZARR_EMETA,
                              "sharding_indexed: the shard's extent %llu in dim %d is not a multiple of the "
                              "inner chunk's %llu",
                              (unsigned long long)shard_shape[d], d, (unsigned long long)sh->chunk[d]);
        l->inner[d] = sh->chunk[d];
        l->grid[d]  = shard_shape[d] / sh->chunk[d];
        if (!zarr__mul_ok(ni, l->grid[d], &ni))
            return zarr_error(ZARR_EOVERFLOW, "sharding_indexed: too many inner chunks per shard");
    }
    l->grid[sh->ndim] = 2;
    if (!zarr__mul_ok(ni, 16, &x) || !zarr__add_ok(x, sh->index_extra, &x) || x > SIZE_MAX / 2)
        return zarr_error(ZARR_EOVERFLOW, "sharding_indexed: the shard index size overflows");
    l->ninner      = (size_t)ni;
    l->index_bytes = (size_t)x;
    l->index_end   = sh->index_end;
    l->inner_chain = sh->inner;
    l->index_chain = sh->index;
    return ZARR_OK;
}

char
zarr__chain_endian(const zarr_chain *c)
{
    if (!c || c->codecs[c->ia2b].id != CODEC_BYTES || !c->multibyte)
        return '|';
    return c->codecs[c->ia2b].u.endian == '>' ? '>' : '<';
}

/* ------------------------------------------------------------------------------------------------
 * Writing JSON
 * ------------------------------------------------------------------------------------------------ */
static int
add(struct json_object *o, const char *key, struct json_object *v)
{
    if (!v || json_object_object_add(o, key, v) != 0) {
        json_object_put(v);
        return zarr_error(ZARR_ENOMEM, "out of memory building codec JSON");
    }
    return ZARR_OK;
}

/* The codec's configuration keys into `o` (v3 or numcodecs style). */
static int
codec_config(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o)
{
    int rc = ZARR_OK;
    switch (k->id) {
        case CODEC_TRANSPOSE: {
            struct json_object *a = json_object_new_array();
            if ((rc = add(o, "order", a)) != ZARR_OK)
                return rc;
            for (int d = 0; d < k->u.tr.ndim; d++)
                if (json_object_array_add(a, json_object_new_int(k->u.tr.perm[d])) != 0)
                    return zarr_error(ZARR_ENOMEM, "out of memory building codec JSON");
            break;
        }
        case CODEC_BYTES:
            if (c->esize > 1)
                rc = add(o, "endian", json_object_new_string(k->u.endian == '>' ? "big" : "little"));
            break;
        case CODEC_GZIP:
            /* v3 (zarr-python) wants 0..9; -1 is zlib's default, level 6 */
            rc = add(o, "level", json_object_new_int(!v2 && k->u.level < 0 ? 6 : k->u.level));
            break;
        case CODEC_ZLIB:
        case CODEC_BZ2:
            rc = add(o, "level", json_object_new_int(k->u.level));
            break;
        case CODEC_ZSTD:
            if ((rc = add(o, "level", json_object_new_int(k->u.zstd.level))) == ZARR_OK &&
                (!v2 || k->u.zstd.checksum))
                rc = add(o, "checksum", json_object_new_boolean(k->u.zstd.checksum));
            break;
        case CODEC_BLOSC:
            if (!v2 &&
                (rc = add(o, "typesize", json_object_new_int64((int64_t)k->u.blosc.typesize))) != ZARR_OK)
                return rc;
            if ((rc = add(o, "cname", json_object_new_string(k->u.blosc.cname))) != ZARR_OK ||
                (rc = add(o, "clevel", json_object_new_int(k->u.blosc.clevel))) != ZARR_OK)
                return rc;
            if (v2)
                rc =
                    add(o, "shuffle", json_object_new_int(k->u.blosc.shuffle_auto ? -1 : k->u.blosc.shuffle));
            else
                rc = add(o, "shuffle", json_object_new_string(blosc_shuffles[k->u.blosc.shuffle]));
            if (rc == ZARR_OK)
                rc = add(o, "blocksize", json_object_new_int64((int64_t)k->u.blosc.blocksize));
            break;
        case CODEC_SHUFFLE:
            rc = add(o, "elementsize", json_object_new_int64((int64_t)k->u.elementsize));
            break;
        case CODEC_LZ4:
            rc = add(o, "acceleration", json_object_new_int(k->u.acceleration));
            break;
        case CODEC_H5LZ4:
            rc = add(o, "blocksize", json_object_new_int64((int64_t)k->u.h5lz4_blocksize));
            break;
        case CODEC_DELTA:
            if (v2 && k->u.delta.a2a) { /* as a v2 filter: over the bytes in the order `bytes` wrote */
                char dt[8], at[8];
                snprintf(dt, sizeof dt, "%c%c%d", k->u.delta.dendian, k->u.delta.dkind, k->u.delta.dsize);
                snprintf(at, sizeof at, "%c%c%d", k->u.delta.aendian, k->u.delta.akind, k->u.delta.asize);
                if ((rc = add(o, "dtype", json_object_new_string(dt))) == ZARR_OK && strcmp(at, dt) != 0)
                    rc = add(o, "astype", json_object_new_string(at));
                break;
            }
            if ((rc = add(o, "dtype", json_object_new_string(k->u.delta.dtype))) == ZARR_OK &&
                strcmp(k->u.delta.astype, k->u.delta.dtype) != 0)
                rc = add(o, "astype", json_object_new_string(k->u.delta.astype));
            break;
        case CODEC_SHARDING: {
            const shard_cfg    *sh = k->u.shard;
            struct json_object *l  = NULL;
            if ((rc = add(o, "chunk_shape", zarr__json_new_uint_list(sh->chunk, sh->ndim))) != ZARR_OK ||
                (rc = zarr_chain_to_v3_json(sh->inner, &l)) != ZARR_OK ||
                (rc = add(o, "codecs", l)) != ZARR_OK ||
                (rc = zarr_chain_to_v3_json(sh->index, &l)) != ZARR_OK ||
                (rc = add(o, "index_codecs", l)) != ZARR_OK)
                return rc;
            rc = add(o, "index_location", json_object_new_string(sh->index_end ? "end" : "start"));
            break;
        }
        case CODEC_VLEN_UTF8:
        case CODEC_VLEN_BYTES:
        case CODEC_CRC32C:
        case CODEC_FLETCHER32:
            break;
    }
    return rc;
}

static int
codec_v3_json(const zarr_chain *c, const zarr_codec *k, struct json_object **out)
{
    struct json_object *o = json_object_new_object(), *cfg = NULL;
    int                 rc;
    *out = NULL;
    if (!o)
        return zarr_error(ZARR_ENOMEM, "out of memory building codec JSON");
    ZARR_TRY(add(o, "name", json_object_new_string(info_of(k->id)->v3name)));
    if (k->id != CODEC_CRC32C) {
        cfg = json_object_new_object();
        ZARR_TRY(add(o, "configuration", cfg));
        ZARR_TRY(codec_config(c, k, false, cfg));
    }
    *out = o;
    o    = NULL;
done:
    json_object_put(o);
    return rc;
}

static int
codec_v2_json(const zarr_chain *c, const zarr_codec *k, struct json_object **out)
{
    struct json_object *o = json_object_new_object();
    int                 rc;
    *out = NULL;
    if (!o)
        return zarr_error(ZARR_ENOMEM, "out of memory building codec JSON");
    ZARR_TRY(add(o, "id", json_object_new_string(info_of(k->id)->v2id)));
    ZARR_TRY(codec_config(c, k, true, o));
    *out = o;
    o    = NULL;
done:
    json_object_put(o);
    return rc;
}

/* The stored index of the codec at position `pos` of the v3 `codecs` list: array->array deltas are
 * stored right after the array->bytes codec but written before it. */
static size_t
v3_position(const zarr_chain *c, size_t pos)
{
    size_t na = 0;
    while (c->ia2b + 1 + na < c->n && c->codecs[c->ia2b + 1 + na].id == CODEC_DELTA &&
           c->codecs[c->ia2b + 1 + na].u.delta.a2a)
        na++;
    if (pos < c->ia2b || pos > c->ia2b + na)
        return pos;
    return pos < c->ia2b + na ? pos + 1 : c->ia2b;
}

int
zarr_chain_codec_json(const zarr_chain *c, size_t i, struct json_object **out)
{
    if (!c || !out || i >= c->n)
        return zarr_error(ZARR_EINVAL, "zarr_chain_codec_json: no codec %zu", i);
    return codec_v3_json(c, &c->codecs[v3_position(c, i)], out);
}

int
zarr_chain_to_v3_json(const zarr_chain *c, struct json_object **out)
{
    struct json_object *a  = NULL, *o;
    int                 rc = ZARR_OK;
    if (!c || !out)
        return zarr_error(ZARR_EINVAL, "zarr_chain_to_v3_json: no chain");
    *out = NULL;
    if (!(a = json_object_new_array()))
        return zarr_error(ZARR_ENOMEM, "out of memory building codec JSON");
    for (size_t pos = 0; pos < c->n; pos++) {
        size_t i = v3_position(c, pos);
        ZARR_TRY(codec_v3_json(c, &c->codecs[i], &o));
        if (json_object_array_add(a, o) != 0) {
            json_object_put(o);
            ZARR_FAIL(ZARR_ENOMEM, "out of memory building codec JSON");
        }
    }
    *out = a;
    a    = NULL;
done:
    json_object_put(a);
    return rc;
}

/* v2: the transpose of order F is left out (the metadata writes "order": "F"; see
 * zarr__chain_v2_order); the bytes codec is left out (its byte order is the dtype's, see
 * zarr__chain_endian); a vlen codec becomes the first filter; the last bytes->bytes codec becomes the
 * compressor when it is a compressor, the others are filters. Other transposes can't be written. */
int
zarr_chain_to_v2_json(const zarr_chain *c, struct json_object **filters, struct json_object **compressor)
{
    struct json_object *f = NULL, *comp = NULL, *o;
    int                 rc = ZARR_OK;
    size_t              end;

    if (!c || !filters || !compressor)
        return zarr_error(ZARR_EINVAL, "zarr_chain_to_v2_json: no chain");
    *filters = *compressor = NULL;
    if (c->codecs[c->ia2b].id == CODEC_SHARDING)
        return zarr_error(ZARR_EUNSUPPORTED, "sharding can't be written as zarr v2 metadata");
    if (c->any_transpose && zarr__chain_v2_order(c) != 'F')
        return zarr_error(ZARR_EUNSUPPORTED,
                          "this transpose can't be written as zarr v2 metadata (only order "
                          "\"F\", a full reversal of the dims, can)");
    end = c->n;
    if (c->n > c->ia2b + 1 && info_of(c->codecs[c->n - 1].id)->compressor) {
        ZARR_TRY(codec_v2_json(c, &c->codecs[c->n - 1], &comp));
        end = c->n - 1;
    }
    for (size_t i = c->ia2b; i < end; i++) {
        if (c->codecs[i].id == CODEC_BYTES)
            continue;
        if (!f && !(f = json_object_new_array()))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory building codec JSON");
        ZARR_TRY(codec_v2_json(c, &c->codecs[i], &o));
        if (json_object_array_add(f, o) != 0) {
            json_object_put(o);
            ZARR_FAIL(ZARR_ENOMEM, "out of memory building codec JSON");
        }
    }
    *filters    = f; /* NULL is json-c's null */
    *compressor = comp;
    f = comp = NULL;
done:
    json_object_put(f);
    json_object_put(comp);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * Array steps: transpose, byte order, vlen
 * ------------------------------------------------------------------------------------------------ */
/* Copies the elements of an `nd`-dim box of extents `ext`, element strides `ss` in src and `ds` in
 * dst, visiting the box in row-major order. */
static void
strided_copy(const uint8_t *src, uint8_t *dst, size_t es, int nd, const uint64_t *ext, const uint64_t *ss,
             const uint64_t *ds)
{
    uint64_t idx[ZARR_MAX_DIMS] = {0};
    size_t   so = 0, dof = 0;
    uint64_t inner, sin, din;

    for (int d = 0; d < nd; d++)
        if (ext[d] == 0)
            return;
    if (nd == 0) {
        memcpy(dst, src, es);
        return;
    }
    inner = ext[nd - 1];
    sin   = ss[nd - 1] * es;
    din   = ds[nd - 1] * es;
    for (;;) {
        const uint8_t *s = src + so * es;
        uint8_t       *d = dst + dof * es;
        switch (es) {
            case 1:
                for (uint64_t i = 0; i < inner; i++)
                    d[i * din] = s[i * sin];
                break;
            case 2:
                for (uint64_t i = 0; i < inner; i++)
                    memcpy(d + i * din, s + i * sin, 2);
                break;
            case 4:
                for (uint64_t i = 0; i < inner; i++)
                    memcpy(d + i * din, s + i * sin, 4);
                break;
            case 8:
                for (uint64_t i = 0; i < inner; i++)
                    memcpy(d + i * din, s + i * sin, 8);
                break;
            case 16:
                for (uint64_t i = 0; i < inner; i++)
                    memcpy(d + i * din, s + i * sin, 16);
                break;
            default:
                for (uint64_t i = 0; i < inner; i++)
                    memcpy(d + i * din, s + i * sin, es);
                break;
        }
        int k = nd - 2;
        for (; k >= 0; k--) {
            so += ss[k];
            dof += ds[k];
            if (++idx[k] < ext[k])
                break;
            so -= ss[k] * ext[k];
            dof -= ds[k] * ext[k];
            idx[k] = 0;
        }
        if (k < 0)
            return;
    }
}

/* Transpose between decoded shape `shp` (C order) and the encoded layout of perm. */
static void
transpose(const zarr_codec *k, size_t es, const uint64_t *shp, const uint8_t *src, uint8_t *dst, bool encode)
{
    int      nd = k->u.tr.ndim;
    uint64_t mstride[ZARR_MAX_DIMS], ext[ZARR_MAX_DIMS], pstride[ZARR_MAX_DIMS], cstride[ZARR_MAX_DIMS];
    uint64_t s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        mstride[d] = s;
        s *= shp[d];
    }
    for (int d = 0; d < nd; d++) {
        ext[d]     = shp[k->u.tr.perm[d]];
        pstride[d] = mstride[k->u.tr.perm[d]];
    }
    s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        cstride[d] = s;
        s *= ext[d];
    }
    if (encode)
        strided_copy(src, dst, es, nd, ext, pstride, cstride);
    else
        strided_copy(src, dst, es, nd, ext, cstride, pstride);
}

static inline void
swap_units(const uint8_t *s, uint8_t *d, size_t nunits, size_t unit)
{
    switch (unit) {
        case 2:
            for (size_t i = 0; i < nunits; i++) {
                uint16_t v;
                memcpy(&v, s + 2 * i, 2);
                v = __builtin_bswap16(v);
                memcpy(d + 2 * i, &v, 2);
            }
            break;
        case 4:
            for (size_t i = 0; i < nunits; i++) {
                uint32_t v;
                memcpy(&v, s + 4 * i, 4);
                v = __builtin_bswap32(v);
                memcpy(d + 4 * i, &v, 4);
            }
            break;
        case 8:
            for (size_t i = 0; i < nunits; i++) {
                uint64_t v;
                memcpy(&v, s + 8 * i, 8);
                v = __builtin_bswap64(v);
                memcpy(d + 8 * i, &v, 8);
            }
            break;
        default:
            for (size_t i = 0; i < nunits; i++) {
                const uint8_t *a = s + unit * i;
                uint8_t       *b = d + unit * i;
                for (size_t lo = 0, hi = unit - 1; lo < hi; lo++, hi--) {
                    uint8_t t = a[lo];
                    b[lo]     = a[hi];
                    b[hi]     = t;
                }
                if (unit & 1)
                    b[unit / 2] = a[unit / 2];
            }
            break;
    }
}

/* Copies `nelem` elements from src to dst (may be the same) reversing every byte-ordered unit. */
static void
swap_copy(const zarr_chain *c, const uint8_t *src, uint8_t *dst, size_t nelem)
{
    if (c->nseg == 1 && c->segs[0].off == 0 && c->segs[0].unit * c->segs[0].count == c->esize) {
        swap_units(src, dst, nelem * c->segs[0].count, c->segs[0].unit);
        return;
    }
    if (src != dst && nelem) /* an empty chunk may come with no buffers */
        memcpy(dst, src, nelem * c->esize);
    for (size_t i = 0; i < nelem; i++)
        for (size_t s = 0; s < c->nseg; s++) {
            uint8_t *p = dst + i * c->esize + c->segs[s].off;
            swap_units(p, p, c->segs[s].count, c->segs[s].unit);
        }
}

static int
vlen_encode(const zarr_chain *c, const uint8_t *mem, size_t nelem, zarr_buf *out)
{
    bool     utf8  = c->kind == ZARR_VLEN_UTF8;
    uint64_t total = 4;
    int      rc;
    uint8_t *p;

    out->size = 0;
    if (nelem > UINT32_MAX)
        return zarr_error(ZARR_EUNSUPPORTED, "%s: %zu items do not fit the 32-bit item count",
                          utf8 ? "vlen-utf8" : "vlen-bytes", nelem);
    for (size_t i = 0; i < nelem; i++) {
        size_t len;
        if (utf8) {
            const char *s;
            memcpy(&s, mem + i * sizeof s, sizeof s);
            len = s ? strlen(s) : 0;
        }
        else {
            zarr_vlen v;
            memcpy(&v, mem + i * sizeof v, sizeof v);
            if (v.len && !v.p)
                return zarr_error(ZARR_EINVAL, "vlen-bytes: item %zu has length %zu and no data", i, v.len);
            len = v.len;
        }
        if (len > UINT32_MAX)
            return zarr_error(ZARR_EUNSUPPORTED,
                              "%s: item %zu of %zu bytes is too long for the 32-bit length",
                              utf8 ? "vlen-utf8" : "vlen-bytes", i, len);
        total += 4 + (uint64_t)len;
    }
    if (total > SIZE_MAX)
        return zarr_error(ZARR_EOVERFLOW, "vlen: encoded size overflows");
    if ((rc = zarr_buf_reserve(out, (size_t)total)) != ZARR_OK)
        return rc;
    p = out->data;
    zarr__store_le32(p, (uint32_t)nelem);
    p += 4;
    for (size_t i = 0; i < nelem; i++) {
        const void *data;
        size_t      len;
        if (utf8) {
            const char *s;
            memcpy(&s, mem + i * sizeof s, sizeof s);
            data = s;
            len  = s ? strlen(s) : 0;
        }
        else {
            zarr_vlen v;
            memcpy(&v, mem + i * sizeof v, sizeof v);
            data = v.p;
            len  = v.len;
        }
        zarr__store_le32(p, (uint32_t)len);
        if (len)
            memcpy(p + 4, data, len);
        p += 4 + len;
    }
    out->size = (size_t)total;
    return ZARR_OK;
}

/* Decodes into `nelem` elements at `mem` (zeroed first); on failure nothing stays allocated. */
static int
vlen_decode(const zarr_chain *c, const uint8_t *enc, size_t n, uint8_t *mem, size_t nelem)
{
    bool        utf8 = c->kind == ZARR_VLEN_UTF8;
    const char *name = utf8 ? "vlen-utf8" : "vlen-bytes";
    size_t      pos = 4, i = 0;
    uint32_t    count;
    int         rc = ZARR_OK;

    if (nelem) /* `mem` may be an empty scratch buffer without memory */
        memset(mem, 0, nelem * c->esize);
    if (n < 4)
        return zarr_error(ZARR_ECODEC, "%s: data is truncated (%zu bytes, the item count alone is 4)", name,
                          n);
    count = zarr__load_le32(enc);
    if (count != nelem)
        return zarr_error(ZARR_ECODEC, "%s: data holds %u items, expected %zu", name, count, nelem);
    for (i = 0; i < nelem; i++) {
        uint32_t len;
        if (n - pos < 4)
            ZARR_FAIL(ZARR_ECODEC, "%s: data is truncated at item %zu of %zu", name, i, nelem);
        len = zarr__load_le32(enc + pos);
        pos += 4;
        if (len > n - pos)
            ZARR_FAIL(ZARR_ECODEC, "%s: item %zu claims %u bytes, only %zu remain", name, i, len, n - pos);
        if (utf8) {
            char *s = malloc((size_t)len + 1);
            if (!s)
                ZARR_FAIL(ZARR_ENOMEM, "%s: out of memory for item %zu (%u bytes)", name, i, len);
            memcpy(s, enc + pos, len);
            s[len] = '\0';
            memcpy(mem + i * sizeof s, &s, sizeof s);
        }
        else {
            zarr_vlen v = {len, NULL};
            if (len && !(v.p = malloc(len)))
                ZARR_FAIL(ZARR_ENOMEM, "%s: out of memory for item %zu (%u bytes)", name, i, len);
            if (len)
                memcpy(v.p, enc + pos, len);
            memcpy(mem + i * sizeof v, &v, sizeof v);
        }
        pos += len;
    }
done:
    if (rc != ZARR_OK) {
        for (size_t j = 0; j < i; j++) {
            void *p;
            if (utf8)
                memcpy(&p, mem + j * sizeof(char *), sizeof p);
            else {
                zarr_vlen v;
                memcpy(&v, mem + j * sizeof v, sizeof v);
                p = v.p;
            }
            free(p);
        }
        if (nelem)
            memset(mem, 0, nelem * c->esize);
    }
    return rc;
}

/* Frees the payloads of `nelem` vlen elements (used when a later step fails). */
static void
vlen_clear(const zarr_chain *c, uint8_t *mem, size_t nelem)
{
    for (size_t j = 0; j < nelem; j++) {
        void *p;
        if (c->kind == ZARR_VLEN_UTF8)
            memcpy(&p, mem + j * sizeof(char *), sizeof p);
        else {
            zarr_vlen v;
            memcpy(&v, mem + j * sizeof v, sizeof v);
            p = v.p;
        }
        free(p);
    }
    if (nelem)
        memset(mem, 0, nelem * c->esize);
}

/* ------------------------------------------------------------------------------------------------
 * Delta (numcodecs): enc[0] = x[0], enc[i] = x[i] - x[i-1] in the arithmetic of `dtype`, stored as
 * `astype`; decode is the running sum accumulated in `dtype` (numpy's cumsum with out=). Integers
 * wrap; byte orders are the configured type strings'.
 * ------------------------------------------------------------------------------------------------ */
static uint64_t
delta_load(const uint8_t *p, int size, char endian)
{
    uint64_t v = 0;
    for (int b = 0; b < size; b++)
        v |= (uint64_t)p[endian == '>' ? size - 1 - b : b] << (8 * b);
    return v;
}

static void
delta_store(uint8_t *p, int size, char endian, uint64_t v)
{
    for (int b = 0; b < size; b++)
        p[endian == '>' ? size - 1 - b : b] = (uint8_t)(v >> (8 * b));
}

/* Integer bits of `size` bytes, sign-extended when signed. */
static uint64_t
delta_ext(uint64_t v, int size, char kind)
{
    if (size < 8 && kind == 'i' && (v >> (8 * size - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * size);
    return v;
}

static double
delta_f(uint64_t bits, int size)
{
    if (size == 4) {
        uint32_t u = (uint32_t)bits;
        float    f;
        memcpy(&f, &u, 4);
        return f;
    }
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

static uint64_t
delta_fbits(double v, int size)
{
    if (size == 4) {
        float    f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}

static int
delta_run(const zarr_codec *k, bool encode, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_n)
{
    int  is = encode ? k->u.delta.dsize : k->u.delta.asize, os = encode ? k->u.delta.asize : k->u.delta.dsize;
    char ie        = encode ? k->u.delta.dendian : k->u.delta.aendian,
         oe        = encode ? k->u.delta.aendian : k->u.delta.dendian;
    char     ik    = encode ? k->u.delta.dkind : k->u.delta.akind;
    int      ds    = k->u.delta.dsize;
    size_t   nelem = n / (size_t)is;
    uint64_t prev = 0, acc = 0;
    double   fprev = 0, facc = 0;

    if (n % (size_t)is != 0 || dst_n != nelem * (size_t)os)
        return zarr_error(ZARR_ECODEC, "delta: %zu bytes are not a whole number of '%s' elements%s", n,
                          encode ? k->u.delta.dtype : k->u.delta.astype,
                          dst_n != nelem * (size_t)os ? " or do not decode to the expected size" : "");
    for (size_t i = 0; i < nelem; i++) {
        uint64_t raw = delta_load(src + i * (size_t)is, is, ie), out;
        if (k->u.delta.dkind != 'f') {
            uint64_t x = delta_ext(raw, is, ik);
            if (encode) {
                out  = i == 0 ? x : x - prev; /* wraps like the dtype's arithmetic */
                prev = x;
            }
            else
                out = acc = i == 0 ? x : acc + x;
            if (!encode && ds < 8)
                out &= ~(~(uint64_t)0 << (8 * ds));
        }
        else {
            double x = delta_f(raw, is), r;
            if (encode) {
                r     = i == 0 ? x : (ds == 4 ? (double)((float)x - (float)fprev) : x - fprev);
                fprev = x;
            }
            else
                r = facc = i == 0 ? x : (ds == 4 ? (double)((float)facc + (float)x) : facc + x);
            out = delta_fbits(r, os);
        }
        delta_store(dst + i * (size_t)os, os, oe, out);
    }
    return ZARR_OK;
}

/* Encoded size for `n` decoded delta bytes (SIZE_UNKNOWN when they are not whole elements). */
static size_t
delta_encoded_size(const zarr_codec *k, size_t n)
{
    if (n == SIZE_UNKNOWN || n % (size_t)k->u.delta.dsize)
        return SIZE_UNKNOWN;
    return n / (size_t)k->u.delta.dsize * (size_t)k->u.delta.asize;
}

/* ------------------------------------------------------------------------------------------------
 * Bytes->bytes steps
 * ------------------------------------------------------------------------------------------------ */
static int
b2b_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out)
{
    int rc;
    switch (k->id) {
        case CODEC_GZIP:
            return zarr__deflate(ctx, ZARR__ZFMT_GZIP, k->u.level, src, n, out);
        case CODEC_ZLIB:
            return zarr__deflate(ctx, ZARR__ZFMT_ZLIB, k->u.level, src, n, out);
        case CODEC_ZSTD:
            return zarr__zstd_compress(ctx, k->u.zstd.level, k->u.zstd.checksum, src, n, out);
        case CODEC_BLOSC:
            return zarr__blosc_compress(k->u.blosc.cname, k->u.blosc.clevel, k->u.blosc.shuffle,
                                        k->u.blosc.typesize, k->u.blosc.blocksize, src, n, out);
        case CODEC_LZ4:
            return zarr__lz4_compress(k->u.acceleration, src, n, out);
        case CODEC_BZ2:
            return zarr__bz2_compress(k->u.level, src, n, out);
        case CODEC_H5LZ4:
            return zarr__h5lz4_compress(k->u.h5lz4_blocksize, src, n, out);
        case CODEC_DELTA: {
            size_t on = delta_encoded_size(k, n);
            if (on == SIZE_UNKNOWN)
                return zarr_error(ZARR_ECODEC, "delta: %zu bytes are not a whole number of '%s' elements", n,
                                  k->u.delta.dtype);
            if ((rc = zarr_buf_resize(out, on)) != ZARR_OK)
                return rc;
            return delta_run(k, true, src, n, out->data, on);
        }
        case CODEC_SHUFFLE:
            if ((rc = zarr_buf_resize(out, n)) != ZARR_OK)
                return rc;
            zarr__shuffle(src, out->data, n, k->u.elementsize);
            return ZARR_OK;
        case CODEC_CRC32C:
        case CODEC_FLETCHER32: {
            uint32_t sum = k->id == CODEC_CRC32C ? zarr__crc32c(src, n) : zarr__fletcher32(src, n);
            if (n > SIZE_MAX - 4)
                return zarr_error(ZARR_EOVERFLOW, "checksum: size overflows");
            if ((rc = zarr_buf_resize(out, n + 4)) != ZARR_OK)
                return rc;
            if (n)
                memcpy(out->data, src, n);
            zarr__store_le32(out->data + n, sum);
            return ZARR_OK;
        }
        default:
            return zarr_error(ZARR_EINVAL, "codec '%s' is not a bytes->bytes codec", info_of(k->id)->v3name);
    }
}

/* Decodes into `dst` (exactly `exact` bytes) when `exact` is known, else into `grow` (at most
 * `limit` bytes). Checksum codecs are handled by the caller (they only shrink the view). */
static int
b2b_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst, size_t exact,
           zarr_buf *grow, size_t limit)
{
    int rc;
    if (exact != SIZE_UNKNOWN) {
        switch (k->id) {
            case CODEC_GZIP:
                return zarr__inflate(ctx, ZARR__ZFMT_GZIP, src, n, dst, exact);
            case CODEC_ZLIB:
                return zarr__inflate(ctx, ZARR__ZFMT_ZLIB, src, n, dst, exact);
            case CODEC_ZSTD:
                return zarr__zstd_decompress(ctx, src, n, dst, exact);
            case CODEC_BLOSC:
                return zarr__blosc_decompress(src, n, dst, exact);
            case CODEC_LZ4:
                return zarr__lz4_decompress(src, n, dst, exact);
            case CODEC_BZ2:
                return zarr__bz2_decompress(src, n, dst, exact);
            case CODEC_H5LZ4:
                return zarr__h5lz4_decompress(src, n, dst, exact);
            case CODEC_DELTA:
                return delta_run(k, false, src, n, dst, exact);
            case CODEC_SHUFFLE:
                if (n != exact)
                    return zarr_error(ZARR_ECODEC, "shuffle: data has %zu bytes, expected %zu", n, exact);
                zarr__unshuffle(src, dst, n, k->u.elementsize);
                return ZARR_OK;
            default:
                break;
        }
    }
    else {
        switch (k->id) {
            case CODEC_GZIP:
                return zarr__inflate_buf(ctx, ZARR__ZFMT_GZIP, src, n, limit, grow);
            case CODEC_ZLIB:
                return zarr__inflate_buf(ctx, ZARR__ZFMT_ZLIB, src, n, limit, grow);
            case CODEC_ZSTD:
                return zarr__zstd_decompress_buf(ctx, src, n, limit, grow);
            case CODEC_BLOSC:
                return zarr__blosc_decompress_buf(src, n, limit, grow);
            case CODEC_LZ4:
                return zarr__lz4_decompress_buf(src, n, limit, grow);
            case CODEC_BZ2:
                return zarr__bz2_decompress_buf(src, n, limit, grow);
            case CODEC_H5LZ4:
                return zarr__h5lz4_decompress_buf(src, n, limit, grow);
            case CODEC_DELTA: {
                size_t on;
                if (n % (size_t)k->u.delta.asize)
                    return zarr_error(ZARR_ECODEC, "delta: %zu bytes are not a whole number of '%s' elements",
                                      n, k->u.delta.astype);
                on = n / (size_t)k->u.delta.asize * (size_t)k->u.delta.dsize;
                if (on > limit)
                    return zarr_error(ZARR_ECODEC, "delta: decodes to %zu bytes, more than the limit of %zu",
                                      on, limit);
                if ((rc = zarr_buf_resize(grow, on)) != ZARR_OK)
                    return rc;
                return delta_run(k, false, src, n, grow->data, on);
            }
            case CODEC_SHUFFLE:
                if (n > limit)
                    return zarr_error(ZARR_ECODEC, "shuffle: data has %zu bytes, more than the limit of %zu",
                                      n, limit);
                if ((rc = zarr_buf_resize(grow, n)) != ZARR_OK)
                    return rc;
                zarr__unshuffle(src, grow->data, n, k->u.elementsize);
                return ZARR_OK;
            default:
                break;
        }
    }
    return zarr_error(ZARR_EINVAL, "codec '%s' is not a bytes->bytes codec", info_of(k->id)->v3name);
}

/* Size facts of the data entering bytes->bytes codec i on encode (= leaving it on decode). */
static size_t
grow_bound(size_t x)
{
    uint64_t r;
    if (x == SIZE_UNKNOWN || !zarr__add_ok(x, x / 16 + 4096, &r) || r >= SIZE_UNKNOWN)
        return SIZE_UNKNOWN;
    return (size_t)r;
}

/* ------------------------------------------------------------------------------------------------
 * sharding_indexed: a shard (the outer chunk, memory form, C order) is cut into inner chunks of
 * `chunk` shape, each encoded with the inner chain; the index (uint64 [offset, nbytes] per inner
 * chunk, row-major over the inner grid, encoded with the index chain) goes at the start or the end.
 * An inner chunk equal to the fill value is not stored (offset = nbytes = 2^64-1) and reads as fill.
 * Inner chains run on a codec context of their own: the outer chain's scratch buffers are in use.
 * ------------------------------------------------------------------------------------------------ */
typedef struct shard_geom {
    uint64_t grid[ZARR_MAX_DIMS + 1]; /* inner chunks per dim (+ the 2 of the index) */
    uint64_t sstride[ZARR_MAX_DIMS];  /* element strides of the shard */
    uint64_t istride[ZARR_MAX_DIMS];  /* element strides of an inner chunk */
    size_t   ninner, inner_nelem, inner_bytes, index_bytes, nelem;
} shard_geom;

static int
shard_geometry(const zarr_chain *c, const shard_cfg *sh, const uint64_t *shape, shard_geom *g)
{
    uint64_t ni = 1, ne = 1, tot = 1, x;
    for (int d = 0; d < sh->ndim; d++) {
        if (shape[d] % sh->chunk[d] != 0)
            return zarr_error(ZARR_EMETA,
                              "sharding_indexed: the shard's extent %llu in dim %d is not a multiple of the "
                              "inner chunk's %llu",
                              (unsigned long long)shape[d], d, (unsigned long long)sh->chunk[d]);
        g->grid[d] = shape[d] / sh->chunk[d];
        if (!zarr__mul_ok(ni, g->grid[d], &ni) || !zarr__mul_ok(ne, sh->chunk[d], &ne) ||
            !zarr__mul_ok(tot, shape[d], &tot))
            return zarr_error(ZARR_EOVERFLOW, "sharding_indexed: shard size overflows");
    }
    g->grid[sh->ndim] = 2;
    {
        uint64_t a = 1, b = 1;
        for (int d = sh->ndim - 1; d >= 0; d--) {
            g->sstride[d] = a;
            g->istride[d] = b;
            a *= shape[d];
            b *= sh->chunk[d];
        }
    }
    if (!zarr__mul_ok(ni, 16, &x) || !zarr__add_ok(x, sh->index_extra, &x) || x > SIZE_MAX / 2 ||
        !zarr__mul_ok(ne, c->esize, &tot) || tot > SIZE_MAX / 2)
        return zarr_error(ZARR_EOVERFLOW, "sharding_indexed: index or inner chunk size overflows");
    g->ninner      = (size_t)ni;
    g->inner_nelem = (size_t)ne;
    g->inner_bytes = (size_t)tot;
    g->index_bytes = (size_t)x;
    g->nelem       = (size_t)(ni * ne);
    return ZARR_OK;
}

/* Element offset in the shard of inner chunk number `i` (row-major over the grid). */
static uint64_t
shard_origin(const shard_cfg *sh, const shard_geom *g, size_t i)
{
    uint64_t off = 0;
    for (int d = sh->ndim - 1; d >= 0; d--) {
        off += (i % g->grid[d]) * sh->chunk[d] * g->sstride[d];
        i /= g->grid[d];
    }
    return off;
}

static bool
shard_is_fill(const zarr_chain *c, const uint8_t *p, size_t nelem)
{
    if (!c->fill) {
        for (size_t i = 0; i < nelem * c->esize; i++)
            if (p[i])
                return false;
        return true;
    }
    for (size_t i = 0; i < nelem; i++)
        if (memcmp(p + i * c->esize, c->fill, c->esize) != 0)
            return false;
    return true;
}

static int
shard_encode(const zarr_chain *c, const zarr_codec *k, const uint8_t *mem, const uint64_t *shape,
             zarr_buf *out)
{
    const shard_cfg *sh  = k->u.shard;
    zarr_codec_ctx  *ctx = NULL;
    zarr_buf         ib = ZARR_BUF_INIT, enc = ZARR_BUF_INIT;
    uint64_t        *idx = NULL;
    shard_geom       g;
    int              rc;

    out->size = 0;
    ZARR_TRY(shard_geometry(c, sh, shape, &g));
    if (!(ctx = zarr_codec_ctx_new()))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    if (!(idx = malloc(g.ninner * 2 * sizeof *idx)))
        ZARR_FAIL(ZARR_ENOMEM, "sharding_indexed: out of memory for the index");
    ZARR_TRY(zarr_buf_resize(&ib, g.inner_bytes));
    if (!sh->index_end)
        ZARR_TRY(zarr_buf_resize(out, g.index_bytes));
    for (size_t i = 0; i < g.ninner; i++) {
        strided_copy(mem + shard_origin(sh, &g, i) * c->esize, ib.data, c->esize, sh->ndim, sh->chunk,
                     g.sstride, g.istride);
        if (!c->vlen && shard_is_fill(c, ib.data, g.inner_nelem)) {
            idx[2 * i] = idx[2 * i + 1] = UINT64_MAX;
            continue;
        }
        ZARR_TRY(zarr_chain_encode(sh->inner, ctx, ib.data, sh->chunk, &enc));
        idx[2 * i]     = out->size;
        idx[2 * i + 1] = enc.size;
        ZARR_TRY(zarr_buf_append(out, enc.data, enc.size));
    }
    ZARR_TRY(zarr_chain_encode(sh->index, ctx, idx, g.grid, &enc));
    if (enc.size != g.index_bytes)
        ZARR_FAIL(ZARR_ECODEC, "sharding_indexed: the index encoded to %zu bytes, expected %zu", enc.size,
                  g.index_bytes);
    if (sh->index_end)
        ZARR_TRY(zarr_buf_append(out, enc.data, enc.size));
    else if (enc.size) /* an empty shard (a zero extent) has an empty index and no buffer */
        memcpy(out->data, enc.data, enc.size);
done:
    if (rc != ZARR_OK)
        zarr_error_wrap(rc, "sharding_indexed: ");
    zarr_buf_free(&ib);
    zarr_buf_free(&enc);
    free(idx);
    zarr_codec_ctx_free(ctx);
    return rc;
}

/* Decodes a shard into `mem` (the shard's elements); on failure nothing stays allocated there. */
static int
shard_decode(const zarr_chain *c, const zarr_codec *k, const uint8_t *enc, size_t n, uint8_t *mem,
             const uint64_t *shape)
{
    const shard_cfg *sh  = k->u.shard;
    zarr_codec_ctx  *ctx = NULL;
    zarr_buf         ib  = ZARR_BUF_INIT;
    uint64_t        *idx = NULL;
    shard_geom       g   = {{0}};
    int              rc;

    ZARR_TRY(shard_geometry(c, sh, shape, &g));
    if ((c->vlen || !c->fill) && g.nelem) /* an empty shard's `mem` may have no memory */
        memset(mem, 0, g.nelem * c->esize);
    else
        for (size_t i = 0; i < g.nelem; i++)
            memcpy(mem + i * c->esize, c->fill, c->esize);
    if (n < g.index_bytes)
        ZARR_FAIL(ZARR_ECODEC, "the shard has %zu bytes, less than its index of %zu", n, g.index_bytes);
    if (!(ctx = zarr_codec_ctx_new()))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory");
    if (!(idx = malloc(g.ninner * 2 * sizeof *idx)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory for the index");
    if ((rc = zarr_chain_decode(sh->index, ctx, sh->index_end ? enc + n - g.index_bytes : enc, g.index_bytes,
                                idx, g.grid)) != ZARR_OK) {
        zarr_error_wrap(rc, "the shard index: ");
        goto done;
    }
    ZARR_TRY(zarr_buf_resize(&ib, g.inner_bytes));
    for (size_t i = 0; i < g.ninner; i++) {
        uint64_t off = idx[2 * i], nb = idx[2 * i + 1];
        if (off == UINT64_MAX && nb == UINT64_MAX)
            continue;
        if (off > n || nb > n - off)
            ZARR_FAIL(ZARR_ECODEC, "inner chunk %zu claims bytes %llu..+%llu of a %zu-byte shard", i,
                      (unsigned long long)off, (unsigned long long)nb, n);
        if ((rc = zarr_chain_decode(sh->inner, ctx, enc + off, (size_t)nb, ib.data, sh->chunk)) != ZARR_OK) {
            zarr_error_wrap(rc, "inner chunk %zu: ", i);
            goto done;
        }
        strided_copy(ib.data, mem + shard_origin(sh, &g, i) * c->esize, c->esize, sh->ndim, sh->chunk,
                     g.istride, g.sstride);
    }
done:
    if (rc != ZARR_OK) {
        zarr_error_wrap(rc, "sharding_indexed: ");
        if (c->vlen)
            vlen_clear(c, mem, g.nelem);
    }
    zarr_buf_free(&ib);
    free(idx);
    zarr_codec_ctx_free(ctx);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * Encode / decode
 * ------------------------------------------------------------------------------------------------ */
static int
chunk_size(const zarr_chain *c, const uint64_t *shape, size_t *nelem, size_t *nbytes)
{
    uint64_t ne = 1, nb;
    if (c->ndim > 0 && !shape)
        return zarr_error(ZARR_EINVAL, "codec chain: no chunk shape for %d dims", c->ndim);
    for (int d = 0; d < c->ndim; d++)
        if (!zarr__mul_ok(ne, shape[d], &ne))
            return zarr_error(ZARR_EOVERFLOW, "chunk element count overflows");
    if (!zarr__mul_ok(ne, c->esize, &nb) || nb > SIZE_MAX / 2)
        return zarr_error(ZARR_EOVERFLOW, "chunk byte size overflows");
    *nelem  = (size_t)ne;
    *nbytes = (size_t)nb;
    return ZARR_OK;
}

int
zarr_chain_encode(const zarr_chain *c, zarr_codec_ctx *ctx, const void *mem, const uint64_t *shape,
                  zarr_buf *out)
{
    zarr_codec_ctx *tmp = NULL;
    const uint8_t  *cur = mem;
    size_t          curn, nelem, nbytes;
    int             where = -1; /* -1: cur is the caller's memory; 0/1: ctx->scratch[where] */
    int             rc;
    uint64_t        shp[ZARR_MAX_DIMS];

    if (!c || !out || (!mem && c->esize))
        return zarr_error(ZARR_EINVAL, "zarr_chain_encode: missing argument");
    ZARR_TRY(chunk_size(c, shape, &nelem, &nbytes));
    if (!ctx && !(ctx = tmp = zarr_codec_ctx_new()))
        return ZARR_ENOMEM;
    curn = nbytes;
    for (int d = 0; d < c->ndim; d++)
        shp[d] = shape[d];
#define OTHER (where == 0 ? 1 : 0)
    for (size_t i = 0; i < c->ia2b; i++) {
        const zarr_codec *k = &c->codecs[i];
        zarr_buf         *b = &ctx->scratch[OTHER];
        uint64_t          nshp[ZARR_MAX_DIMS];
        if (k->u.tr.noop)
            continue;
        ZARR_TRY(zarr_buf_resize(b, nbytes));
        transpose(k, c->esize, shp, cur, b->data, true);
        for (int d = 0; d < c->ndim; d++)
            nshp[d] = shp[k->u.tr.perm[d]];
        memcpy(shp, nshp, sizeof shp);
        cur   = b->data;
        where = OTHER;
    }
    switch (c->codecs[c->ia2b].id) {
        case CODEC_SHARDING: {
            zarr_buf *b = &ctx->scratch[OTHER];
            ZARR_TRY(shard_encode(c, &c->codecs[c->ia2b], cur, shp, b));
            cur   = b->data;
            curn  = b->size;
            where = OTHER;
            break;
        }
        case CODEC_BYTES:
            if (c->swap) {
                zarr_buf *b = &ctx->scratch[OTHER];
                ZARR_TRY(zarr_buf_resize(b, nbytes));
                swap_copy(c, cur, b->data, nelem);
                cur   = b->data;
                where = OTHER;
            }
            break;
        default: {
            zarr_buf *b = &ctx->scratch[OTHER];
            ZARR_TRY(vlen_encode(c, cur, nelem, b));
            cur   = b->data;
            curn  = b->size;
            where = OTHER;
            break;
        }
    }
    for (size_t i = c->ia2b + 1; i < c->n; i++) {
        const zarr_codec *k = &c->codecs[i];
        if (k->id == CODEC_SHUFFLE && k->u.elementsize <= 1)
            continue;
        if ((k->id == CODEC_CRC32C || k->id == CODEC_FLETCHER32) && where >= 0) {
            /* append in place */
            zarr_buf *b   = &ctx->scratch[where];
            uint32_t  sum = k->id == CODEC_CRC32C ? zarr__crc32c(cur, curn) : zarr__fletcher32(cur, curn);
            uint8_t   le[4];
            zarr__store_le32(le, sum);
            b->size = curn;
            ZARR_TRY(zarr_buf_append(b, le, 4));
            cur  = b->data;
            curn = b->size;
            continue;
        }
        zarr_buf *b = &ctx->scratch[OTHER];
        ZARR_TRY(b2b_encode(k, ctx, cur, curn, b));
        cur   = b->data;
        curn  = b->size;
        where = OTHER;
    }
#undef OTHER
    if (where >= 0) {
        /* hand the result over by swapping buffers: out's old memory becomes scratch */
        zarr_buf t          = *out;
        *out                = ctx->scratch[where];
        out->size           = curn;
        t.size              = 0;
        ctx->scratch[where] = t;
    }
    else {
        out->size = 0;
        ZARR_TRY(zarr_buf_append(out, cur, curn));
    }
done:
    zarr_codec_ctx_free(tmp);
    return rc;
}

int
zarr_chain_decode(const zarr_chain *c, zarr_codec_ctx *ctx, const void *enc, size_t n, void *mem,
                  const uint64_t *shape)
{
    zarr_codec_ctx *tmp  = NULL;
    const uint8_t  *cur  = enc;
    uint8_t        *dmem = mem;
    size_t          curn = n, nelem = 0, nbytes = 0, nb2b;
    int             where = -1; /* -1: cur is the caller's input; -2: mem; 0/1: ctx->scratch[where] */
    int             rc;
    bool            direct;
    size_t          exact[64], bound[64];
    bool            vlen_live = false; /* vlen payloads allocated in a scratch buffer */
    bool            sharded;
    size_t          vlen_where = 0;

    if (!c || !mem || (!enc && n))
        return zarr_error(ZARR_EINVAL, "zarr_chain_decode: missing argument");
    ZARR_TRY(chunk_size(c, shape, &nelem, &nbytes));
    nb2b = c->n - c->ia2b - 1;
    if (nb2b >= 64)
        return zarr_error(ZARR_EUNSUPPORTED, "codec chain: more than 63 bytes->bytes codecs");
    if (!ctx && !(ctx = tmp = zarr_codec_ctx_new()))
        return ZARR_ENOMEM;
    sharded = c->codecs[c->ia2b].id == CODEC_SHARDING;
    direct  = !c->vlen && !c->swap && !c->any_transpose && !sharded;

    /* exact[i] / bound[i]: size entering bytes->bytes codec i on encode */
    exact[0] = c->vlen || sharded ? SIZE_UNKNOWN : nbytes;
    bound[0] = c->vlen || sharded ? ZARR__DECODE_LIMIT : nbytes;
    for (size_t i = 0; i < nb2b; i++) {
        const zarr_codec *k = &c->codecs[c->ia2b + 1 + i];
        switch (k->id) {
            case CODEC_CRC32C:
            case CODEC_FLETCHER32:
                exact[i + 1] = exact[i] == SIZE_UNKNOWN ? SIZE_UNKNOWN : exact[i] + 4;
                bound[i + 1] = bound[i] == SIZE_UNKNOWN ? SIZE_UNKNOWN : bound[i] + 4;
                break;
            case CODEC_SHUFFLE:
                exact[i + 1] = exact[i];
                bound[i + 1] = bound[i];
                break;
            case CODEC_DELTA:
                exact[i + 1] = delta_encoded_size(k, exact[i]);
                bound[i + 1] =
                    bound[i] == SIZE_UNKNOWN || k->u.delta.asize <= k->u.delta.dsize
                        ? bound[i]
                        : grow_bound(bound[i] / (size_t)k->u.delta.dsize * (size_t)k->u.delta.asize);
                break;
            case CODEC_H5LZ4: { /* raw blocks plus 4 bytes each: small block sizes grow the data */
                size_t g     = grow_bound(bound[i]), h;
                h            = bound[i] == SIZE_UNKNOWN ? SIZE_UNKNOWN
                                                        : zarr__h5lz4_max_size(k->u.h5lz4_blocksize, bound[i]);
                exact[i + 1] = SIZE_UNKNOWN;
                bound[i + 1] = g > h ? g : h;
                break;
            }
            default:
                exact[i + 1] = SIZE_UNKNOWN;
                bound[i + 1] = grow_bound(bound[i]);
                break;
        }
    }

#define OTHER (where == 0 ? 1 : 0)
    for (size_t ii = nb2b; ii-- > 0;) {
        const zarr_codec *k = &c->codecs[c->ia2b + 1 + ii];
        if (k->id == CODEC_CRC32C || k->id == CODEC_FLETCHER32) {
            const char *name = k->id == CODEC_CRC32C ? "crc32c" : "fletcher32";
            uint32_t    stored, sum;
            if (curn < 4)
                ZARR_FAIL(ZARR_ECODEC, "%s: data is truncated (%zu bytes, the checksum alone is 4)", name,
                          curn);
            curn -= 4;
            stored = zarr__load_le32(cur + curn);
            sum    = k->id == CODEC_CRC32C ? zarr__crc32c(cur, curn) : zarr__fletcher32(cur, curn);
            if (stored != sum)
                ZARR_FAIL(ZARR_ECODEC,
                          "%s: checksum mismatch (stored 0x%08x, computed 0x%08x): data is corrupt", name,
                          stored, sum);
            continue;
        }
        if (k->id == CODEC_SHUFFLE && k->u.elementsize <= 1)
            continue;
        if (exact[ii] != SIZE_UNKNOWN) {
            uint8_t *dst;
            if (ii == 0 && direct) {
                dst   = dmem;
                where = -2;
            }
            else {
                zarr_buf *b = &ctx->scratch[OTHER];
                ZARR_TRY(zarr_buf_resize(b, exact[ii]));
                dst   = b->data;
                where = OTHER;
            }
            ZARR_TRY(b2b_decode(k, ctx, cur, curn, dst, exact[ii], NULL, 0));
            cur  = dst;
            curn = exact[ii];
        }
        else {
            zarr_buf *b = &ctx->scratch[OTHER];
            ZARR_TRY(b2b_decode(k, ctx, cur, curn, NULL, SIZE_UNKNOWN, b,
                                bound[ii] == SIZE_UNKNOWN ? ZARR__DECODE_LIMIT : bound[ii]));
            cur   = b->data;
            curn  = b->size;
            where = OTHER;
        }
    }

    if (direct) {
        if (curn != nbytes)
            ZARR_FAIL(ZARR_ECODEC, "chunk decodes to %zu bytes, expected %zu", curn, nbytes);
        if (cur != dmem && nbytes)
            memmove(dmem, cur, nbytes);
        goto done;
    }

    /* array->bytes step into mem, or into scratch when transposes follow */
    {
        uint8_t *dst = dmem;
        if (c->any_transpose) {
            zarr_buf *b = &ctx->scratch[OTHER];
            ZARR_TRY(zarr_buf_resize(b, nbytes));
            dst = b->data;
        }
        if (c->codecs[c->ia2b].id == CODEC_BYTES) {
            if (curn != nbytes)
                ZARR_FAIL(ZARR_ECODEC, "chunk decodes to %zu bytes, expected %zu", curn, nbytes);
            if (c->swap)
                swap_copy(c, cur, dst, nelem);
            else if (nbytes)
                memcpy(dst, cur, nbytes);
        }
        else if (sharded) {
            uint64_t eshp[ZARR_MAX_DIMS], tshp[ZARR_MAX_DIMS];
            for (int d = 0; d < c->ndim; d++)
                eshp[d] = shape[d];
            for (size_t i = 0; i < c->ia2b; i++) /* the shape the transposes hand to the shard */
                if (!c->codecs[i].u.tr.noop) {
                    for (int d = 0; d < c->ndim; d++)
                        tshp[d] = eshp[c->codecs[i].u.tr.perm[d]];
                    memcpy(eshp, tshp, sizeof(uint64_t) * (size_t)c->ndim);
                }
            ZARR_TRY(shard_decode(c, &c->codecs[c->ia2b], cur, curn, dst, eshp));
            vlen_live = c->vlen && c->any_transpose;
        }
        else {
            ZARR_TRY(vlen_decode(c, cur, curn, dst, nelem));
            vlen_live = c->any_transpose;
        }
        if (c->any_transpose) {
            where      = OTHER;
            vlen_where = (size_t)where;
        }
        cur = dst;
    }

    /* transposes, last first */
    if (c->any_transpose) {
        uint64_t shapes[MAX_A2A + 1][ZARR_MAX_DIMS];
        size_t   last_active = 0;
        for (int d = 0; d < c->ndim; d++)
            shapes[0][d] = shape[d];
        for (size_t i = 0; i < c->ia2b; i++) {
            for (int d = 0; d < c->ndim; d++)
                shapes[i + 1][d] =
                    c->codecs[i].u.tr.noop ? shapes[i][d] : shapes[i][c->codecs[i].u.tr.perm[d]];
        }
        for (size_t i = 0; i < c->ia2b; i++)
            if (!c->codecs[i].u.tr.noop) {
                last_active = i;
                break;
            }
        for (size_t i = c->ia2b; i-- > 0;) {
            const zarr_codec *k = &c->codecs[i];
            uint8_t          *dst;
            if (k->u.tr.noop)
                continue;
            if (i == last_active)
                dst = dmem;
            else {
                zarr_buf *b = &ctx->scratch[OTHER];
                ZARR_TRY(zarr_buf_resize(b, nbytes));
                dst        = b->data;
                where      = OTHER;
                vlen_where = (size_t)where;
            }
            transpose(k, c->esize, shapes[i], cur, dst, false);
            cur = dst;
        }
        vlen_live = false;
    }
#undef OTHER
done:
    if (rc != ZARR_OK && vlen_live)
        vlen_clear(c, ctx->scratch[vlen_where].data, nelem);
    if (rc != ZARR_OK && c->vlen && nbytes)
        memset(mem, 0, nbytes); /* nothing is owned there: clearing the elements stays safe */
    zarr_codec_ctx_free(tmp);
    return rc;
}
