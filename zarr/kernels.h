/*
 * kernels.h: plain byte kernels of the core's codecs (compressors, shuffles, checksums), with no
 * knowledge of arrays, data types or metadata. The codec chain (chain.c) is built on them, and the
 * HDF5 filter plugins (filters/) call them directly, so one implementation serves both. Each kernel is
 * defined next to its codec class, in zarr/codecs/<name>.c.
 *
 * Conventions for every kernel here
 *  - Return ZARR_OK or a negative zarr_status with a message (zarr_error). Corrupt, truncated or
 *    wrongly sized input is ZARR_ECODEC; the message names the codec and what was wrong.
 *  - Compressors reset `out` (size 0) and fill it; `out` is the caller's and keeps its memory.
 *  - Each decompressor comes in two forms:
 *      X_decompress(..., dst, dst_n): the output must be exactly `dst_n` bytes (the expected size is
 *        known); nothing is ever written past dst + dst_n; more or fewer bytes is ZARR_ECODEC.
 *      X_decompress_buf(..., limit, out): the size is not known; `out` is reset and grown to the
 *        decoded size, which may not exceed `limit` (ZARR_ECODEC otherwise). Sizes read from the
 *        data are checked against `limit` before any allocation.
 *  - `src`/`dst` are borrowed. `ctx` is the calling thread's zarr_codec_ctx (borrowed; kernels reuse
 *    the compressor states it holds); NULL is accepted and means a temporary state for this call.
 */
#ifndef H5ZARR_ZARR_KERNELS_H
#define H5ZARR_ZARR_KERNELS_H

#include "h5zarr/zarr.h"
#include "h5zarr/zarr_filters.h" /* the filter ids, Blosc names and codes, H5Z-ZFP cd_values */

/* Largest output a decoder accepts when nothing tighter is known (sizes read from data above this are
 * refused before allocating). */
#define ZARR__DECODE_LIMIT ((size_t)1 << 32)

/* Kinds of per-thread kernel state a context holds at most (zstd, deflate, ...: see codec_class.h). */
#define ZARR__CTX_MAX_STATES 8

/* One per thread (zarr_codec_ctx_new / zarr_codec_ctx_free, declared in zarr.h; codec_ctx.c). Owns
 * everything in it; nothing is shared between contexts, so a context must not be used by two threads
 * at once. Kernel states are created on first use by their kernel (zarr__codec_ctx_state). */
struct zarr__codec_state_ops;
struct zarr_codec_ctx {
    struct {
        const struct zarr__codec_state_ops *ops;
        void                               *p;
    } states[ZARR__CTX_MAX_STATES];
    size_t          nstates;
    zarr_buf        scratch[2];  /* ping-pong buffers of the codec chain */
    int             chunk_ndim;  /* while the chain encodes: the shape of the chunk its array->bytes */
    const uint64_t *chunk_shape; /* codec wrote (ZARR__CODEC_SHAPED codecs record it: zfpy) */
};

/* Kernels accept a NULL ctx: they borrow a temporary one for the call (ZARR__CTX_BEGIN opens a scope
 * variable, ZARR__CTX_END frees it; `rc`-style functions only). */
#define ZARR__CTX_BEGIN(ctx)                                                                                 \
    zarr_codec_ctx *tmp_ctx_ = NULL;                                                                         \
    if (!(ctx) && !((ctx) = tmp_ctx_ = zarr_codec_ctx_new()))                                                \
        return ZARR_ENOMEM;
#define ZARR__CTX_END() zarr_codec_ctx_free(tmp_ctx_)

/* ---- zlib (RFC 1950 stream) and gzip (RFC 1952 member). Compressed with libdeflate (one call on
 * the whole buffer); decoded with libdeflate when the size is known (zlib decides every failure and
 * its message, see codecs/deflate.c), with zlib streaming otherwise. ---- */
typedef enum { ZARR__ZFMT_ZLIB = 0, ZARR__ZFMT_GZIP = 1 } zarr__zfmt;

/* `level` -1 (default, zlib's 6) or 0..9 on zlib's scale (0 = stored blocks). */
int zarr__deflate(zarr_codec_ctx *ctx, zarr__zfmt fmt, int level, const void *src, size_t n, zarr_buf *out);
/* gzip input may hold several concatenated members (their outputs are concatenated). */
int zarr__inflate(zarr_codec_ctx *ctx, zarr__zfmt fmt, const void *src, size_t n, void *dst, size_t dst_n);
int zarr__inflate_buf(zarr_codec_ctx *ctx, zarr__zfmt fmt, const void *src, size_t n, size_t limit,
                      zarr_buf *out);

/* ---- zstd: one frame with the content size; `level` 0 = library default, clamped to zstd's range;
 * `checksum` adds the frame's content checksum (checked on decode whenever present). ---- */
int zarr__zstd_compress(zarr_codec_ctx *ctx, int level, bool checksum, const void *src, size_t n,
                        zarr_buf *out);
int zarr__zstd_decompress(zarr_codec_ctx *ctx, const void *src, size_t n, void *dst, size_t dst_n);
int zarr__zstd_decompress_buf(zarr_codec_ctx *ctx, const void *src, size_t n, size_t limit, zarr_buf *out);

/* ---- Blosc1 (c-blosc *_ctx functions, one internal thread; thread-safe, no global state) ----
 * `cname` one of blosclz, lz4, lz4hc, zlib, zstd, snappy; `shuffle` 0 none, 1 byte, 2 bit;
 * `typesize` > 255 is taken as 1 (as hdf5-blosc and numcodecs do); `blocksize` 0 = automatic.
 * Input larger than Blosc1's limit (2 GiB - 16) is ZARR_EUNSUPPORTED, as is a compressor missing from
 * this c-blosc build. Decoding validates the header (blosc_cbuffer_validate) first. */
/* Compressor and shuffle names and codes, and the check that this c-blosc has a compressor, are
 * public (zarr_blosc_* in h5zarr/zarr_filters.h): one copy for the codec, the H5Z filter and the
 * connector's filter mapping. */
int zarr__blosc_compress(const char *cname, int clevel, int shuffle, size_t typesize, size_t blocksize,
                         const void *src, size_t n, zarr_buf *out);
int zarr__blosc_decompress(const void *src, size_t n, void *dst, size_t dst_n);
int zarr__blosc_decompress_buf(const void *src, size_t n, size_t limit, zarr_buf *out);

/* An LZ4 block expands at most about 255 times (a length byte of 255 adds 255 bytes), so a size header
 * claiming more than ZARR__LZ4_MAX_RATIO times the stored bytes is refused before allocating (both LZ4
 * framings). */
#define ZARR__LZ4_MAX_RATIO 256u

/* ---- numcodecs LZ4: 4-byte little-endian decoded size, then one raw LZ4 block. `acceleration` < 1
 * means 1 (LZ4's default). Input above LZ4_MAX_INPUT_SIZE is ZARR_EUNSUPPORTED. ---- */
int zarr__lz4_compress(int acceleration, const void *src, size_t n, zarr_buf *out);
int zarr__lz4_decompress(const void *src, size_t n, void *dst, size_t dst_n);
int zarr__lz4_decompress_buf(const void *src, size_t n, size_t limit, zarr_buf *out);

/* ---- bzip2 (numcodecs BZ2, HDF5's bzip2 filter 307): one bzip2 stream, `level` = block size in
 * 100 kB (1..9). Compression makes a fresh libbz2 state per call (libbz2 has no reusable one). ---- */
int zarr__bz2_compress(int level, const void *src, size_t n, zarr_buf *out);
int zarr__bz2_decompress(const void *src, size_t n, void *dst, size_t dst_n);
int zarr__bz2_decompress_buf(const void *src, size_t n, size_t limit, zarr_buf *out);

/* ---- HDF5 LZ4 filter (32004) framing: 8-byte big-endian decoded size, 4-byte big-endian block size,
 * then per block a 4-byte big-endian stored size and the block (raw when LZ4 did not shrink it).
 * `blocksize` 0 = 1 GiB (the filter's default); it is capped to the input size. ---- */
int zarr__h5lz4_compress(size_t blocksize, const void *src, size_t n, zarr_buf *out);
int zarr__h5lz4_decompress(const void *src, size_t n, void *dst, size_t dst_n);
int zarr__h5lz4_decompress_buf(const void *src, size_t n, size_t limit, zarr_buf *out);
/* The most bytes zarr__h5lz4_compress (and HDF5's filter) writes for `n` input bytes: the header, and
 * per block its 4-byte size and at most the block itself (12 + n + 4 x blocks); SIZE_MAX on overflow. */
size_t zarr__h5lz4_max_size(size_t blocksize, size_t n);

/* ---- LZMA (numcodecs LZMA, liblzma): `format` 1 (.xz stream, `check` -1 = CRC64, 0 none, 1 CRC32, 4
 * CRC64, 10 SHA-256) or 2 (.lzma "alone", no check); `preset` 0..9, optionally | 0x80000000 (extreme).
 * Encodes as Python's lzma.compress does (one streaming encoder, so the bytes are the same).
 * Decoding reads format 0 (either), 1 or 2, concatenated .xz streams included, with a decoder memory
 * limit of ZARR__LZMA_MEMLIMIT (a dictionary the data claims beyond it is refused). ---- */
#define ZARR__LZMA_MEMLIMIT ((uint64_t)1 << 30)
int zarr__lzma_compress(int format, int check, uint32_t preset, const void *src, size_t n, zarr_buf *out);
int zarr__lzma_decompress(int format, const void *src, size_t n, void *dst, size_t dst_n);
int zarr__lzma_decompress_buf(int format, const void *src, size_t n, size_t limit, zarr_buf *out);

/* ---- zfp (numcodecs ZFPY, libzfp): one zfp stream with the full header for a C-order chunk of 1 to 4
 * dims (the last dim is zfp's x). `type` is a zfp_type (1 int32, 2 int64, 3 float, 4 double); `mode`
 * 2 fixed rate, 3 fixed precision, 4 fixed accuracy, 5 reversible; as zfpy, a parameter < 0 means
 * reversible. Decoding checks the header's type (when `type` is not 0) and element count before
 * allocating and never lets zfp read past a zero-padded copy of the chunk. ---- */
typedef struct zarr__zfp_params {
    int    mode;
    double tolerance, rate;
    int    precision;
    int    type;
} zarr__zfp_params;
int zarr__zfp_compress(const zarr__zfp_params *p, int ndim, const uint64_t *shape, const void *src, size_t n,
                       zarr_buf *out);
int zarr__zfp_decompress(int type, const void *src, size_t n, void *dst, size_t dst_n);
int zarr__zfp_decompress_buf(int type, const void *src, size_t n, size_t limit, zarr_buf *out);

/* ---- LZF (h5py's LZF filter 32000, liblzf): the raw LZF data, no header. The encoder gives LZF
 * room for its worst case (n + n/32 + 16), so it never fails on incompressible data; the unknown-size
 * decoder grows its buffer up to the limit or 90x the stored bytes (LZF's best ratio). Chunks of
 * 2 GiB or more are refused. ---- */
int zarr__lzf_compress(const void *src, size_t n, zarr_buf *out);
int zarr__lzf_decompress(const void *src, size_t n, void *dst, size_t dst_n);
int zarr__lzf_decompress_buf(const void *src, size_t n, size_t limit, zarr_buf *out);

/* ---- H5Z-ZFP (filter 32013): a zfp stream without header; the header (type, dims, mode) is in the
 * filter's cd_values as H5Z-ZFP keeps them in a file: [0] its version word, [1..] zfp's full header as
 * a bit stream of 32-bit words (2..16 values). Decoding checks the header's element count against the
 * chunk before anything else and decodes from a zero-padded copy (zfp reads without bounds). ---- */
int zarr__h5zfp_check(const unsigned *cd, size_t ncd, int type, size_t *elements);
int zarr__h5zfp_compress(const unsigned *cd, size_t ncd, const void *src, size_t n, zarr_buf *out);
int zarr__h5zfp_decompress(const unsigned *cd, size_t ncd, const void *src, size_t n, void *dst,
                           size_t dst_n);
int zarr__h5zfp_decompress_buf(const unsigned *cd, size_t ncd, const void *src, size_t n, size_t limit,
                               zarr_buf *out);
/* H5Z-ZFP's "generic" cd_values to this form: zarr_h5zfp_cd_from_generic (h5zarr/zarr_filters.h). */

/* ---- Byte shuffle (numcodecs Shuffle, HDF5 shuffle filter): byte k of every element, for k = 0 ..
 * esize-1, concatenated; the n % esize trailing bytes are copied unchanged at the end. esize <= 1 is a
 * copy. `src` and `dst` must not overlap. ---- */
void zarr__shuffle(const void *src, void *dst, size_t n, size_t esize);
void zarr__unshuffle(const void *src, void *dst, size_t n, size_t esize);

/* ---- Checksums ---- */
/* CRC-32C (Castagnoli, iSCSI), standard convention (init and final xor 0xFFFFFFFF): "123456789" gives
 * 0xE3069283. Uses ISA-L. */
uint32_t zarr__crc32c(const void *p, size_t n);
/* HDF5's Fletcher-32 (H5_checksum_fletcher32; numcodecs Fletcher32): big-endian 16-bit words, sums
 * start at 0, an odd last byte is the high byte of a word. Both HDF5 and numcodecs store it as 4
 * little-endian bytes after the data. */
uint32_t zarr__fletcher32(const void *p, size_t n);
/* zlib's CRC-32 ("123456789" gives 0xCBF43926) and Adler-32 (0x091E01DE), as numcodecs' crc32 and
 * adler32 codecs compute them (zlib.crc32, zlib.adler32). */
uint32_t zarr__crc32(const void *p, size_t n);
uint32_t zarr__adler32(const void *p, size_t n);
/* HDF5 also accepts the checksum some pre-1.6.3 writers stored (bytes swapped within each 16-bit
 * half). Returns that variant of `sum`. */
uint32_t zarr__fletcher32_reversed(uint32_t sum);

/* HDF5's registered ids of the filters whose chunks these kernels read and write: ZARR_H5Z_* in
 * h5zarr/zarr_filters.h. */

/* ---- Little helpers ---- */
static inline void
zarr__store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline uint32_t
zarr__load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ------------------------------------------------------------------------------------------------
 * Chain facts for the metadata layer (defined in chain.c)
 * ------------------------------------------------------------------------------------------------ */
/* 'F' when the chain's array->array part is exactly one transpose reversing the dimensions (what v2
 * order "F" maps to; zarr_chain_to_v2_json leaves it out because the metadata writes "order"), else
 * 'C'. */
char zarr__chain_v2_order(const zarr_chain *c);
/* Byte order the chain's array->bytes codec stores: '<' or '>' for the bytes codec with an endian,
 * '|' when no byte order applies (1-byte or byte-string elements, vlen codecs, bytes codec without
 * an endian). For a v2 dtype string. */
char zarr__chain_endian(const zarr_chain *c);

#endif
