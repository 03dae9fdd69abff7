/*
 * codec_class.h: what a codec is to the chain. Each codec is one file in zarr/codecs/ defining one
 * `zarr__codec_class` (its names, its stage, how it parses and writes its configuration, how it
 * encodes and decodes, what it knows about sizes, the per-thread state it keeps) next to its byte
 * kernel (kernels.h); codec_registry.c lists the classes; chain.c runs them. Not part of the public
 * interface.
 *
 * A codec instance (`struct zarr_codec`) is its class and its parsed configuration, kept inline
 * (ZARR__CODEC_CFG_MAX bytes; a codec that needs more keeps a pointer there and says so with the
 * clear/copy hooks), so building, copying and running a chain costs no allocation per codec.
 */
#ifndef H5ZARR_ZARR_CODEC_CLASS_H
#define H5ZARR_ZARR_CODEC_CLASS_H

#include "internal.h"
#include "kernels.h"

#include <json-c/json.h>
#include <stdalign.h>
#include <stddef.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ZARR__HOST_ENDIAN '>'
#else
#define ZARR__HOST_ENDIAN '<'
#endif

#define ZARR__SIZE_UNKNOWN  SIZE_MAX
#define ZARR__MAX_A2A       8   /* array->array codecs per chain */
#define ZARR__CODEC_CFG_MAX 144 /* bytes of configuration a codec keeps inline */

typedef enum { ZARR__STAGE_A2A, ZARR__STAGE_A2B, ZARR__STAGE_B2B } zarr__codec_stage;

/* Class flags: facts the chain's fast paths and the metadata writers act on. */
enum {
    ZARR__CODEC_COMPRESSOR   = 1u << 0,   /* written as the v2 `compressor` when it is the last codec */
    ZARR__CODEC_NO_ALIAS     = 1u << 1,   /* not a numcodecs codec: "numcodecs.<v2id>" is not read */
    ZARR__CODEC_V3_NO_CONFIG = 1u << 2,   /* its v3 entry is written without "configuration" */
    ZARR__CODEC_CHECKSUM     = 1u << 3,   /* adds a 4-byte little-endian `checksum` of the data: the
                                             chain appends and verifies it in place (no copy) */
    ZARR__CODEC_CHECKSUM_FIRST = 1u << 4, /* with CHECKSUM: the checksum precedes the data */
    ZARR__CODEC_PLAIN          = 1u << 5, /* array->bytes as the elements' bytes (a copy, or a byte
                                             swap when c->swap): decodes may go straight into the
                                             caller's memory, encodes hand the caller's memory on */
    ZARR__CODEC_SHARDING = 1u << 6,       /* sharding_indexed (shard_format.c: zarr__chain_shard_layout) */
    ZARR__CODEC_SHAPED   = 1u << 7,       /* its encoder needs the chunk's shape (ctx->chunk_shape) */
};

typedef struct zarr__codec_class zarr__codec_class;

/* One codec of a chain: its class and its configuration (the class's own struct, inline). */
struct zarr_codec {
    const zarr__codec_class *cls;
    union {
        max_align_t   align_;
        unsigned char bytes[ZARR__CODEC_CFG_MAX];
    } cfg;
};
/* The configuration of `k` as the class's struct type `T` (checked to fit at compile time where the
 * class is defined, with ZARR__CODEC_CFG_FITS). */
#define ZARR__CODEC_CFG(k, T)   ((T *)(void *)(k)->cfg.bytes)
#define ZARR__CODEC_CCFG(k, T)  ((const T *)(const void *)(k)->cfg.bytes)
#define ZARR__CODEC_CFG_FITS(T) _Static_assert(sizeof(T) <= ZARR__CODEC_CFG_MAX, #T " does not fit")

/* One run of byte-ordered units inside an element: `count` units of `unit` bytes at `off`. */
typedef struct zarr__swapseg {
    size_t off, unit, count;
} zarr__swapseg;

struct zarr_chain {
    zarr_kind      kind;  /* of the dtype */
    size_t         esize; /* bytes per element in memory form */
    size_t         typesize_default;
    bool           vlen;
    int            ndim;
    size_t         n;      /* codecs */
    zarr_codec    *codecs; /* [0, ia2b) array->array, ia2b array->bytes, then bytes->bytes */
    size_t         ia2b;
    size_t         nseg; /* byte-ordered units of one element (empty: no byte order) */
    zarr__swapseg *segs;
    bool           swap;           /* some unit is stored in the other byte order than the host's */
    bool           multibyte;      /* the dtype has units with a byte order */
    bool           v2_order;       /* byte order per dtype (field), as v2 dtypes say, not the codec's */
    bool           any_transpose;  /* an array->array codec that moves data */
    uint8_t       *fill;           /* one element, memory form (NULL = zeros); sharding reads missing inner
                                      chunks as it and does not store inner chunks equal to it */
    const zarr_dtype *build_dtype; /* borrowed, only while the chain is being parsed */
};

/* What a class's parse hook is given. */
typedef struct zarr__codec_parse {
    const zarr_chain *chain; /* being built: dtype facts (esize, vlen, typesize_default, ndim) */
    const char       *name;  /* as written ("numcodecs.zlib", "zlib", "gzip") */
    const char       *id;    /* without a "numcodecs." prefix: the codec's name in messages */
    bool v2style; /* numcodecs configuration keys and defaults (v2 and numcodecs.* names) rather than the
                     v3 spec's */
} zarr__codec_parse;

/* Per-thread state a codec keeps in the zarr_codec_ctx (compressor contexts): created on first use
 * by zarr__codec_ctx_state, destroyed with the context. Codecs sharing one kernel share one `ops`. */
typedef struct zarr__codec_state_ops {
    const char *name;
    void *(*create)(void);     /* NULL on out of memory */
    void (*destroy)(void *st); /* accepts NULL */
} zarr__codec_state_ops;

/* The state of `ops` in `ctx` (created on first use; the context owns it); NULL when memory ran out
 * (a message is set). */
void *zarr__codec_ctx_state(zarr_codec_ctx *ctx, const zarr__codec_state_ops *ops);

struct zarr__codec_class {
    const char *v3name;                   /* written in v3 metadata */
    const char *v2id;                     /* numcodecs id (NULL: none); also read as "numcodecs.<v2id>" unless
                                             ZARR__CODEC_NO_ALIAS; v3 documents may name the codec by it too */
    const char                  *v3alias; /* another v3 name that is read (NULL: none) */
    zarr__codec_stage            stage;
    unsigned                     flags;
    const zarr__codec_state_ops *state; /* the per-thread state its kernel keeps (NULL: none) */

    /* Parses `cfg` (an object, or NULL when the entry has none) into k->cfg (zeroed; k->cls set).
     * Messages name the codec (p->id) and the key. NULL: the codec takes no configuration. */
    int (*parse)(const zarr__codec_parse *p, struct json_object *cfg, zarr_codec *k);
    /* Adds the configuration keys to `o` (v3 when !v2, numcodecs' when v2). NULL: none. */
    int (*to_json)(const zarr_chain *c, const zarr_codec *k, bool v2, struct json_object *o);
    /* Frees what k->cfg owns (NULL: nothing); must leave k safe to clear again. */
    void (*clear)(zarr_codec *k);
    /* After `dst` became a byte copy of `src`: makes what dst owns its own (NULL: nothing owned). On
     * failure dst owns nothing (cleared). */
    int (*copy)(zarr_codec *dst, const zarr_codec *src);
    /* True when the codec leaves the data as it is (skipped by the chain). NULL: never. */
    bool (*is_noop)(const zarr_codec *k);

    /* ---- bytes->bytes ---- */
    int (*encode)(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out);
    /* Decodes to exactly `dst_n` bytes at `dst` (the size is known). */
    int (*decode)(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
                  size_t dst_n);
    /* Decodes into `out` (reset; at most `limit` bytes) when the size is not known. */
    int (*decode_buf)(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, size_t limit,
                      zarr_buf *out);
    /* Encoded size of `n` decoded bytes when the codec fixes it (n may be ZARR__SIZE_UNKNOWN); NULL:
     * unknown. */
    size_t (*encoded_size)(const zarr_codec *k, size_t n);
    /* Most bytes `bound` decoded bytes encode to (ZARR__SIZE_UNKNOWN: no bound); NULL: the default
     * zarr__codec_grow_bound. */
    size_t (*encoded_bound)(const zarr_codec *k, size_t bound);
    /* ZARR__CODEC_CHECKSUM: the checksum of `n` bytes. */
    uint32_t (*checksum)(const void *p, size_t n);

    /* ---- a bytes->bytes codec that v3 lists before the array->bytes codec (zarr-python 3's
     * array->array numcodecs.delta): it is run right after `bytes`, in the byte order `bytes` gives the
     * elements, and written back before it. NULL: not allowed there. ---- */
    int (*v3_as_a2a)(const zarr_dtype *t, zarr_codec *k);
    void (*v3_a2a_endian)(zarr_codec *k, char endian); /* the byte order `bytes` writes */
    bool (*v3_before_a2b)(const zarr_codec *k);        /* written before the array->bytes codec */

    /* ---- array->array (the chunk's elements, `es` bytes each, `shape` the decoded shape) ---- */
    void (*a2a_shape)(const zarr_codec *k, int ndim, const uint64_t *shape, uint64_t *encoded_shape);
    void (*a2a_encode)(const zarr_codec *k, size_t es, const uint64_t *shape, const uint8_t *src,
                       uint8_t *dst);
    void (*a2a_decode)(const zarr_codec *k, size_t es, const uint64_t *shape, const uint8_t *src,
                       uint8_t *dst);

    /* ---- array->bytes ---- */
    /* Checks the codec against the chain's dtype when the chain is complete (may set c->segs, swap). */
    int (*a2b_finish)(zarr_chain *c, zarr_codec *k, const zarr_dtype *t);
    /* `nelem` elements of memory form at `mem` (shape `shape`, after the array->array codecs) into
     * `out` (reset). */
    int (*a2b_encode)(const zarr_chain *c, const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *mem,
                      size_t nelem, const uint64_t *shape, zarr_buf *out);
    /* Into `nelem` elements at `mem`; on failure nothing stays allocated there (vlen payloads). */
    int (*a2b_decode)(const zarr_chain *c, const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *enc,
                      size_t n, uint8_t *mem, size_t nelem, const uint64_t *shape);
    /* The array->bytes class to use instead when this codec is the first v2 filter (the object codec)
     * of an object ("|O") array, or comes first in a v3 list of a string array (categorize). */
    const zarr__codec_class *object_form;
    /* Passes the array's fill value on (sharding's inner chain). NULL: nothing to do. */
    int (*set_fill)(zarr_codec *k, const void *fill);
};

/* ---- the registry (codec_registry.c) ---- */
/* The class read under `name` (a v3 name, "numcodecs.<id>" or, when v2style, a numcodecs id); NULL
 * when there is none. `*v2style` is set when the name asks for numcodecs' configuration style. */
const zarr__codec_class *zarr__codec_lookup(const char *name, bool *v2style);
/* Why a codec known to numcodecs can't be read by any build (NULL when that is not the case). */
const char *zarr__codec_refusal(const char *name);
/* The classes, for tests and documentation: entry i, NULL past the end. */
const zarr__codec_class *zarr__codec_class_at(size_t i);

/* Classes the chain builds itself (v2 order F, the v2 array->bytes step, plain chains). */
extern const zarr__codec_class zarr__codec_transpose, zarr__codec_bytes, zarr__codec_vlen_utf8,
    zarr__codec_vlen_bytes;
/* A transpose of `ndim` dims with encoded dim k = decoded dim perm[k]. */
void zarr__transpose_init(zarr_codec *k, int ndim, const int *perm);
/* True when `k` is a transpose that reverses all `ndim` dims (v2 order "F"). */
bool zarr__transpose_is_reversal(const zarr_codec *k, int ndim);
/* A bytes codec storing `endian` ('<', '>', '|' = not given). */
void zarr__bytes_init(zarr_codec *k, char endian);
/* The byte order a bytes codec was configured with ('<', '>', '|'). */
char zarr__bytes_endian(const zarr_codec *k);
/* Copies `nelem` elements from src to dst (may be the same) reversing every byte-ordered unit of the
 * chain's plan. */
void zarr__chain_swap_copy(const zarr_chain *c, const uint8_t *src, uint8_t *dst, size_t nelem);
/* Frees the payloads of `nelem` vlen elements at `mem` and zeroes them (used when a later step
 * fails). */
void zarr__vlen_clear(const zarr_chain *c, uint8_t *mem, size_t nelem);
/* Copies the elements of an `nd`-dim box of extents `ext`, element strides `ss` in src and `ds` in
 * dst, visiting the box in row-major order (transpose.c). */
void zarr__strided_copy(const uint8_t *src, uint8_t *dst, size_t es, int nd, const uint64_t *ext,
                        const uint64_t *ss, const uint64_t *ds);

/* ---- numpy number types of typed bytes->bytes codecs (codec_numeric.c) ---- */
typedef struct zarr__numtype {
    char str[12]; /* as configured ("<f8", "|u1", "int32") */
    char kind;    /* 'i', 'u', 'f', 'b' (bool), 'U' (fixed UTF-32 text) */
    int  size;    /* bytes per element */
    char endian;  /* '<', '>' ('|' for one byte) */
} zarr__numtype;
/* Parses a numpy type string ([<>|=]?[iufb]N or [<>=]?UN, or a name "int32", "float64", "bool") for
 * codec `codec`'s key `key`. `kinds` lists the kinds allowed ("iuf"). Messages name the codec and key. */
int zarr__numtype_parse(const char *codec, const char *key, const char *s, const char *kinds,
                        zarr__numtype *t);
/* The element at `p` as raw bits (size bytes, in t's byte order; sign-extended for 'i'). */
uint64_t zarr__num_load(const zarr__numtype *t, const uint8_t *p);
void     zarr__num_store(const zarr__numtype *t, uint8_t *p, uint64_t bits);
/* Bits of t's value as a double (integers converted, floats widened; bool 0/1). */
double zarr__num_to_double(const zarr__numtype *t, uint64_t bits);
/* A double as t's bits the way numpy's astype on x86-64 casts it (floats rounded to nearest, integers
 * truncated toward zero; out-of-range and NaN values as the x86 conversion gives them). */
uint64_t zarr__num_from_double(const zarr__numtype *t, double v);
/* An integer (bits of a 'i'/'u' type, sign-extended for 'i') cast to t (integers wrap, floats
 * rounded). */
uint64_t zarr__num_from_int(const zarr__numtype *t, uint64_t v, bool is_signed);
/* `from`'s bits as `to`'s (zarr__num_from_int / zarr__num_from_double). */
uint64_t zarr__num_cast(const zarr__numtype *from, const zarr__numtype *to, uint64_t bits);

/* Typed bytes->bytes codecs (fixedscaleoffset, quantize, bitround, astype): their configuration starts
 * with a zarr__typed; `fn` maps one element (bits of dtype to bits of astype when encoding, back when
 * decoding). The zarr__typed_* hooks run it over the data and give the sizes; the v3 array->array form
 * (before `bytes`) is accepted for the array's own type, as for delta. */
typedef struct zarr__typed zarr__typed;
typedef uint64_t (*zarr__typed_fn)(const zarr_codec *k, uint64_t bits, bool encode);
struct zarr__typed {
    zarr__numtype  dtype, astype;
    zarr__typed_fn fn;
    bool           a2a; /* v3: configured before `bytes` */
};
int zarr__typed_encode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, zarr_buf *out);
int zarr__typed_decode(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n, uint8_t *dst,
                       size_t dst_n);
int zarr__typed_decode_buf(const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *src, size_t n,
                           size_t limit, zarr_buf *out);
size_t zarr__typed_encoded_size(const zarr_codec *k, size_t n);
size_t zarr__typed_encoded_bound(const zarr_codec *k, size_t bound);
int    zarr__typed_as_a2a(const zarr_dtype *t, zarr_codec *k);
void   zarr__typed_a2a_endian(zarr_codec *k, char endian);
bool   zarr__typed_before_a2b(const zarr_codec *k);
/* Parses `cfg`'s "dtype" (required) and "astype" (absent or null: the dtype) into t's types, each of
 * one of `kinds`; messages name `codec`. */
int zarr__typed_parse_types(const char *codec, struct json_object *cfg, const char *kinds, zarr__typed *t);
/* t's dtype and astype as configuration strings (the caller's 12-byte buffers): as configured, or as a
 * v2 filter over the bytes `bytes` wrote when t came before `bytes` in v3. */
void zarr__typed_json_types(const zarr__typed *t, bool v2, char dt[12], char at[12]);
/* The byte order the elements entering a bytes->bytes codec being parsed have: v2, the dtype's; v3,
 * the `bytes` codec's (host order when it has none). */
char zarr__chain_element_endian(const zarr__codec_parse *p);

/* ---- configuration helpers (codec_config.c): messages name the codec and the key ---- */
struct json_object *zarr__codec_cfg_get(struct json_object *cfg, const char *key);
/* Integer value; `*out` = def when absent. Strings holding an integer are accepted when
 * `allow_string` (NCZarr writes some levels that way). */
int zarr__codec_cfg_int(const char *codec, struct json_object *cfg, const char *key, bool allow_string,
                        long long def, long long *out);
/* Integer value in lo..hi. */
int zarr__codec_cfg_int_range(const char *codec, struct json_object *cfg, const char *key, bool allow_string,
                              long long def, long long lo, long long hi, long long *out);
/* Number value (an integer or a double); `*out` = def when absent. */
int zarr__codec_cfg_num(const char *codec, struct json_object *cfg, const char *key, double def, double *out);
int zarr__codec_cfg_bool(const char *codec, struct json_object *cfg, const char *key, bool def, bool *out);
int zarr__codec_cfg_str(const char *codec, struct json_object *cfg, const char *key, const char *def,
                        const char **out);
int zarr__codec_range_check(const char *codec, const char *key, long long v, long long lo, long long hi);
/* Adds `v` (taken, also on failure) under `key`. */
int zarr__codec_json_add(struct json_object *o, const char *key, struct json_object *v);
/* The default size bound of a compressor's output: x + x/16 + 4096 (ZARR__SIZE_UNKNOWN on overflow). */
size_t zarr__codec_grow_bound(size_t x);

#endif
