/*
 * shard_format.h: the sharding_indexed shard format, owned by shard_format.c: the layout of a shard
 * (inner grid, index size and place), the one validating index decoder, the one index encoder and the
 * assembly of a shard (inner chunks placed one after another, empty entries, the index at the end or the
 * start). The codec (codecs/sharding.c), the batched executor (batch.c), raw chunk access (chunk_raw.c)
 * and the fuzzers all use it. Not part of the public interface.
 *
 * The format (zarr v3 sharding_indexed 1.0, docs/FORMAT.md "Sharding"): a shard is its inner chunks'
 * encoded bytes and an index of uint64 [offset, nbytes] per inner chunk, row-major over the inner grid,
 * encoded with the index codecs (fixed size), at the end or the start of the shard. An empty inner chunk
 * has both words 2^64-1 and reads as the fill value. A decoded index is valid when every other entry
 * lies inside the shard's data region (the shard less its index) and no two entries share a byte.
 */
#ifndef H5ZARR_ZARR_SHARD_FORMAT_H
#define H5ZARR_ZARR_SHARD_FORMAT_H

#include "h5zarr/zarr.h"

/* Both words of an empty index entry. */
#define ZARR__SHARD_EMPTY UINT64_MAX

/* A sharding_indexed codec's configuration, parsed and owned by codecs/sharding.c. */
typedef struct zarr__shard_spec {
    int         ndim;
    uint64_t    chunk[ZARR_MAX_DIMS]; /* inner chunk shape */
    zarr_chain *inner;                /* for the array's dtype and rank */
    zarr_chain *index;                /* uint64, rank ndim + 1 */
    bool        index_end;
    size_t      index_extra; /* bytes the index codecs add to 16 per inner chunk (checksums) */
} zarr__shard_spec;

/* A sharding_indexed codec's inline configuration (codec_class.h's ZARR__CODEC_CFG): the spec it owns.
 * Defined here so that the layout is read from a chain without a call into the codec's file. */
typedef struct zarr__sharding_cfg {
    zarr__shard_spec *sh;
} zarr__sharding_cfg;

/* The layout of the shards of one shard shape. */
typedef struct zarr__shard_layout {
    int               ndim;
    uint64_t          inner[ZARR_MAX_DIMS];    /* inner chunk shape */
    uint64_t          grid[ZARR_MAX_DIMS + 1]; /* inner chunks per shard along each dim (+ the index's 2) */
    size_t            ninner;                  /* inner chunks per shard */
    size_t            index_bytes;             /* encoded index size (16 per inner chunk + checksums) */
    bool              index_end;               /* the index follows the inner chunks (else precedes) */
    const zarr_chain *inner_chain;             /* borrowed from the codec */
    const zarr_chain *index_chain;             /* borrowed: uint64, rank ndim + 1 */
} zarr__shard_layout;

/* Bytes [off, end) of a shard holding inner chunk or task `i`; zarr__span_cmp orders them by offset,
 * end, then `i` (qsort), for the index's overlap check and for coalescing the ranges a read fetches. */
typedef struct zarr__span {
    uint64_t off, end;
    size_t   i;
} zarr__span;
int zarr__span_cmp(const void *a, const void *b);

/* ---- layout ---- */

/* Checks that the index chain `ix` (uint64) has a fixed encoded size and sets `*extra` to the bytes it
 * adds to the 16 per inner chunk; fails naming the codec otherwise (at parse time). */
int zarr__shard_index_extra(const zarr_chain *ix, size_t *extra);
/* The layout of shards of `shard_shape` under `sp`; an error with a message when the shard shape is
 * not a multiple of the inner chunk or the sizes overflow. `l` borrows from `sp`. */
int zarr__shard_layout_of(const zarr__shard_spec *sp, const uint64_t *shard_shape, zarr__shard_layout *l);
/* Fills `l` when the chain is exactly one sharding_indexed codec (nothing before or after it) of a
 * fixed-size dtype, for shards of `shard_shape` (the array's chunk shape): the engine's inner-chunk
 * I/O. ZARR_EUNSUPPORTED without a message for any other chain (callers then run the chain on whole
 * shards); as zarr__shard_layout_of otherwise. `l` borrows from `c`. */
int zarr__chain_shard_layout(const zarr_chain *c, const uint64_t *shard_shape, zarr__shard_layout *l);
/* The first byte of a shard's data region (after an index at the start). */
static inline uint64_t
zarr__shard_data_start(const zarr__shard_layout *l)
{
    return l->index_end ? 0 : l->index_bytes;
}
/* "i/j/k": inner chunk `i` (row-major) as its position in the shard, for messages; written into `out`
 * (cap bytes), which is returned. */
const char *zarr__shard_inner_name(const zarr__shard_layout *l, size_t i, char *out, size_t cap);

/* ---- the index ---- */

/* Decodes and validates the encoded index `ix` (n bytes) of a shard whose size is `total` (UINT64_MAX:
 * not known; entries are then checked against the index's own place only): n must be the index's size,
 * the checksum (index codecs) must hold, and each entry is empty (both words 2^64-1) or lies inside the
 * data region, and no two non-empty entries share a byte (an entry of 0 bytes shares none). `*out`
 * (malloc'ed, 2 * ninner words) is the caller's. Errors say ZARR_ECODEC and name the shard (`key`; NULL:
 * not known) and the inner chunks at fault. `ctx` runs the index chain. */
int zarr__shard_index_decode(const zarr__shard_layout *l, zarr_codec_ctx *ctx, const char *key,
                             const uint8_t *ix, size_t n, uint64_t total, uint64_t **out);
/* The index of the whole shard `shard` (n bytes): where the layout puts it, then as
 * zarr__shard_index_decode with total = n (a shard shorter than its index is refused). */
int zarr__shard_index_read(const zarr__shard_layout *l, zarr_codec_ctx *ctx, const char *key,
                           const uint8_t *shard, size_t n, uint64_t **out);
/* Encodes the index `ent` (2 * ninner words) into `out` (reset), exactly index_bytes long. */
int zarr__shard_index_encode(const zarr__shard_layout *l, zarr_codec_ctx *ctx, const uint64_t *ent,
                             zarr_buf *out);

/* ---- assembly ---- */

/* A new shard's index while its inner chunks are placed. Chunks appended go one after another from the
 * start of the data region (row-major when appended in order, as every writer here does unless it
 * streams); a writer that chose a place itself records it with zarr__shard_builder_put and moves `end`.
 * The index then goes at `end` (index at the end) or at 0. */
typedef struct zarr__shard_builder {
    const zarr__shard_layout *l;
    uint64_t                 *ent;     /* the new index (owned; taken by setting it NULL) */
    uint64_t                  end;     /* the end of the data placed so far */
    size_t                    nstored; /* non-empty entries */
} zarr__shard_builder;

/* Starts a shard with every entry empty and `end` at the start of the data region. */
int zarr__shard_builder_init(zarr__shard_builder *b, const zarr__shard_layout *l);
/* Places inner chunk `k` (n bytes) at `end` and returns its offset in `*off`; fails when the shard
 * would be larger than memory can hold. */
int zarr__shard_builder_append(zarr__shard_builder *b, size_t k, uint64_t n, uint64_t *off);
/* Records inner chunk `k` at `off` (n bytes), placed by the caller inside [data start, end). */
void zarr__shard_builder_put(zarr__shard_builder *b, size_t k, uint64_t off, uint64_t n);
/* The shard's size with its index, and where the index goes. */
uint64_t zarr__shard_builder_size(const zarr__shard_builder *b, uint64_t *index_off);
/* Encodes the index into `ix` (reset; zarr__shard_index_encode); `*index_off` and `*total` as
 * zarr__shard_builder_size. */
int zarr__shard_builder_finish(zarr__shard_builder *b, zarr_codec_ctx *ctx, zarr_buf *ix, uint64_t *index_off,
                               uint64_t *total);
/* Frees the index unless taken; accepts a builder that was never started (zeroed). */
void zarr__shard_builder_free(zarr__shard_builder *b);

#endif
