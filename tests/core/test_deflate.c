/*
 * test_deflate.c: the zlib and gzip kernels (zarr/kernels.c: zarr__deflate, zarr__inflate,
 * zarr__inflate_buf), which compress with libdeflate and decode known sizes with libdeflate. Every
 * stream they write must be one plain zlib reads back (zlib is the independent decoder here, as it is
 * inside zarr-python and numcodecs); level 1 must not lose zlib-1's ratio on integer ramps (the level
 * mapping); and bad input must get the answers zlib alone gave: ZARR_ECODEC with a message for
 * corrupt, truncated or wrongly sized data, bytes after a zlib stream ignored, bytes after a gzip member
 * that are not another member refused, several gzip members concatenated.
 */
#include "h5zarr/zarr.h"
#include "kernels.h"
#include "runner.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ------------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------------ */
static const char *const fmt_names[] = {"zlib", "gzip"};

/* int32 0,1,2,... starting at `first` (host order, as the bytes codec leaves little-endian data). */
static void
fill_ramp(uint8_t *p, size_t n, int32_t first)
{
    for (size_t i = 0; i + 4 <= n; i += 4) {
        int32_t v = first + (int32_t)(i / 4);
        memcpy(p + i, &v, 4);
    }
}

/* float32 smooth field with a little noise: the usual climate-like chunk. */
static void
fill_field(uint8_t *p, size_t n)
{
    uint32_t r = 7;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        r       = r * 1664525u + 1013904223u;
        float v = 280.0f + 15.0f * sinf((float)i * 0.0007f) + (float)(r >> 24) / 2560.0f;
        memcpy(p + i, &v, 4);
    }
}

/* Incompressible bytes. */
static void
fill_random(uint8_t *p, size_t n)
{
    uint32_t r = 12345;
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)((r = r * 1664525u + 1013904223u) >> 24);
}

/* Plain zlib's verdict on `src` when `want` bytes are expected: 0 when it inflates to exactly `want`
 * bytes (written to `out`, which has room for want + 1), -1 otherwise. gzip: members one after another
 * (what gzip(1) and Python's gzip module accept); zlib: bytes after the stream are not looked at. */
static int
zlib_decode(int fmt, const uint8_t *src, size_t n, uint8_t *out, size_t want)
{
    z_stream zs;
    int      zrc, ok = -1;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, fmt ? 16 + MAX_WBITS : MAX_WBITS) != Z_OK)
        return -1;
    zs.next_in   = (Bytef *)(uintptr_t)src;
    zs.avail_in  = (uInt)n;
    zs.next_out  = out;
    zs.avail_out = (uInt)(want + 1); /* one more: decoding too much shows */
    while ((zrc = inflate(&zs, Z_NO_FLUSH)) == Z_OK || zrc == Z_STREAM_END) {
        if (zrc == Z_STREAM_END) {
            if (fmt && zs.avail_in && inflateReset(&zs) == Z_OK)
                continue;
            ok = !zs.avail_in || !fmt ? 0 : -1;
            break;
        }
    }
    if (ok == 0 && (size_t)(zs.next_out - out) != want)
        ok = -1;
    inflateEnd(&zs);
    return ok;
}

/* zlib's own gzip member of `src` at `level` (the "gzip" comparison stream). */
static int
zlib_gzip(int level, const uint8_t *src, size_t n, uint8_t *out, size_t cap, size_t *outn, gz_header *head)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    if (head && deflateSetHeader(&zs, head) != Z_OK)
        return -1;
    zs.next_in   = (Bytef *)(uintptr_t)src;
    zs.avail_in  = (uInt)n;
    zs.next_out  = out;
    zs.avail_out = (uInt)cap;
    int zrc      = deflate(&zs, Z_FINISH);
    *outn        = zs.total_out;
    deflateEnd(&zs);
    return zrc == Z_STREAM_END ? 0 : -1;
}

/* ------------------------------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------------------------------ */
/* Levels 0,1,2,6,9 and the default, both formats, three kinds of data: zarr__inflate and zlib both
 * give the input back; one context serves every level in turn (its compressor is remade on a level
 * change) and a NULL context works too. */
static int
test_deflate_round_trips(void)
{
    static const int    levels[] = {0, 1, 2, 6, 9, -1, 1, 0};
    static const size_t sizes[]  = {4000, 262144, 65536, 10000};
    zarr_codec_ctx     *ctx      = zarr_codec_ctx_new();
    zarr_buf            enc = ZARR_BUF_INIT, dec = ZARR_BUF_INIT;
    ASSERT(ctx);
    for (size_t d = 0; d < sizeof sizes / sizeof sizes[0]; d++) {
        size_t   n    = sizes[d];
        uint8_t *src  = malloc(n);
        uint8_t *back = malloc(n + 1);
        ASSERT(src && back);
        if (d < 2)
            fill_ramp(src, n, 1000);
        else if (d == 2)
            fill_field(src, n);
        else
            fill_random(src, n);
        for (int fmt = 0; fmt < 2; fmt++)
            for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
                int level = levels[l];
                ASSERT_OK(zarr__deflate(l % 2 ? NULL : ctx, (zarr__zfmt)fmt, level, src, n, &enc));
                if (level == 0) /* stored blocks: the data itself plus framing */
                    ASSERT(enc.size > n && enc.size < n + n / 1000 + 64);
                if (d == 3) /* incompressible: at most stored-block overhead */
                    ASSERT(enc.size < n + n / 1000 + 64);
                memset(back, 0xA5, n + 1);
                ASSERT_OK(zarr__inflate(ctx, (zarr__zfmt)fmt, enc.data, enc.size, back, n));
                if (memcmp(back, src, n) != 0 || back[n] != 0xA5)
                    FAILF("%s level %d, %zu bytes (data %zu): zarr__inflate gave other bytes", fmt_names[fmt],
                          level, n, d);
                ASSERT_OK(zarr__inflate(NULL, (zarr__zfmt)fmt, enc.data, enc.size, back, n));
                ASSERT(memcmp(back, src, n) == 0);
                ASSERT_OK(zarr__inflate_buf(ctx, (zarr__zfmt)fmt, enc.data, enc.size, n, &dec));
                ASSERT(dec.size == n && memcmp(dec.data, src, n) == 0);
                /* the independent decoder */
                memset(back, 0x5A, n + 1);
                if (fmt == 0) {
                    uLongf got = (uLongf)n;
                    if (uncompress(back, &got, enc.data, (uLong)enc.size) != Z_OK || got != n ||
                        memcmp(back, src, n) != 0)
                        FAILF(
                            "zlib level %d, %zu bytes (data %zu): zlib's uncompress does not give the input "
                            "back",
                            level, n, d);
                }
                else if (zlib_decode(1, enc.data, enc.size, back, n) != 0 || memcmp(back, src, n) != 0)
                    FAILF("gzip level %d, %zu bytes (data %zu): zlib's inflate does not give the input back",
                          level, n, d);
            }
        free(src);
        free(back);
    }
    /* empty input is a valid stream of nothing, decoded into no memory at all */
    for (int fmt = 0; fmt < 2; fmt++) {
        ASSERT_OK(zarr__deflate(ctx, (zarr__zfmt)fmt, 1, NULL, 0, &enc));
        ASSERT(enc.size > 0);
        ASSERT_OK(zarr__inflate(ctx, (zarr__zfmt)fmt, enc.data, enc.size, NULL, 0));
        uint8_t one[1];
        ASSERT_EQ_INT(zlib_decode(fmt, enc.data, enc.size, one, 0), 0);
    }
    /* streams zlib wrote (every level) decode too */
    {
        uint8_t src[4000], zenc[4200], back[4000];
        fill_ramp(src, sizeof src, 77);
        for (int level = 0; level <= 9; level++) {
            uLongf zn = sizeof zenc;
            size_t gn;
            ASSERT(compress2(zenc, &zn, src, sizeof src, level) == Z_OK);
            ASSERT_OK(zarr__inflate(ctx, ZARR__ZFMT_ZLIB, zenc, zn, back, sizeof back));
            ASSERT(memcmp(back, src, sizeof src) == 0);
            ASSERT(zlib_gzip(level, src, sizeof src, zenc, sizeof zenc, &gn, NULL) == 0);
            ASSERT_OK(zarr__inflate(ctx, ZARR__ZFMT_GZIP, zenc, gn, back, sizeof back));
            ASSERT(memcmp(back, src, sizeof src) == 0);
        }
    }
    ASSERT_ERR(zarr__deflate(ctx, ZARR__ZFMT_ZLIB, 10, "x", 1, &enc), ZARR_EINVAL);
    ASSERT_ERR(zarr__deflate(ctx, ZARR__ZFMT_GZIP, -2, "x", 1, &enc), ZARR_EINVAL);
    zarr_buf_free(&enc);
    zarr_buf_free(&dec);
    zarr_codec_ctx_free(ctx);
    return 0;
}

/* Guards the level mapping: numcodecs' default level 1 on int32 ramps (1000 chunks of 4000 bytes) must
 * stay within 2% of zlib-1's total size (libdeflate's own level 1 is 60% larger there). */
static int
test_deflate_level1_ramp_size(void)
{
    enum { NCHUNK = 1000, CHUNK = 4000 };
    uint8_t         src[CHUNK], zenc[CHUNK + 64];
    size_t          ours[2] = {0, 0}, zlibs[2] = {0, 0};
    zarr_buf        enc = ZARR_BUF_INIT;
    zarr_codec_ctx *ctx = zarr_codec_ctx_new();
    ASSERT(ctx);
    for (int c = 0; c < NCHUNK; c++) {
        uLongf zn = sizeof zenc;
        size_t gn;
        fill_ramp(src, CHUNK, c * (CHUNK / 4));
        ASSERT_OK(zarr__deflate(ctx, ZARR__ZFMT_ZLIB, 1, src, CHUNK, &enc));
        ours[0] += enc.size;
        ASSERT_OK(zarr__deflate(ctx, ZARR__ZFMT_GZIP, 1, src, CHUNK, &enc));
        ours[1] += enc.size;
        ASSERT(compress2(zenc, &zn, src, CHUNK, 1) == Z_OK);
        zlibs[0] += zn;
        ASSERT(zlib_gzip(1, src, CHUNK, zenc, sizeof zenc, &gn, NULL) == 0);
        zlibs[1] += gn;
    }
    for (int fmt = 0; fmt < 2; fmt++) {
        printf("  %s level 1, %d int32-ramp chunks of %d bytes: %zu bytes, zlib-1 %zu (%.3fx)\n",
               fmt_names[fmt], NCHUNK, CHUNK, ours[fmt], zlibs[fmt], (double)ours[fmt] / (double)zlibs[fmt]);
        ASSERT(ours[fmt] * 100 <= zlibs[fmt] * 102);
    }
    zarr_buf_free(&enc);
    zarr_codec_ctx_free(ctx);
    return 0;
}

/* Bad input through one context (reused after every failure): each truncation and many byte flips get
 * exactly plain zlib's verdict, failures are ZARR_ECODEC with a message, and nothing is written past the
 * expected size. Wrong expected sizes are ZARR_ECODEC naming both sizes. */
static int
test_deflate_bad_input(void)
{
    enum { N = 4000 };
    uint8_t         src[N], back[N + 16], ref[N + 1];
    zarr_buf        enc = ZARR_BUF_INIT;
    zarr_codec_ctx *ctx = zarr_codec_ctx_new();
    uint32_t        r   = 99;
    ASSERT(ctx);
    fill_ramp(src, N, 5);
    for (int fmt = 0; fmt < 2; fmt++) {
        ASSERT_OK(zarr__deflate(ctx, (zarr__zfmt)fmt, 6, src, N, &enc));
        uint8_t *bad = malloc(enc.size);
        ASSERT(bad);
        /* every truncation */
        for (size_t cut = 0; cut < enc.size; cut++) {
            zarr_error_clear();
            memset(back, 0xEE, sizeof back);
            ASSERT_ERR(zarr__inflate(ctx, (zarr__zfmt)fmt, enc.data, cut, back, N), ZARR_ECODEC);
            ASSERT(zarr_errmsg()[0] != '\0');
            ASSERT(back[N] == 0xEE);
        }
        /* every byte inverted, then random flips of 1..3 bytes */
        for (size_t k = 0; k < enc.size + 3000; k++) {
            memcpy(bad, enc.data, enc.size);
            if (k < enc.size)
                bad[k] ^= 0xFF;
            else
                for (int f = 0; f <= (int)(k % 3); f++) {
                    r = r * 1664525u + 1013904223u;
                    bad[(r >> 8) % enc.size] ^= (uint8_t)(1u << (r >> 29));
                }
            zarr_error_clear();
            memset(back, 0xEE, sizeof back);
            int rc   = zarr__inflate(ctx, (zarr__zfmt)fmt, bad, enc.size, back, N);
            int want = zlib_decode(fmt, bad, enc.size, ref, N);
            if (rc == ZARR_OK) {
                if (want != 0 || memcmp(back, ref, N) != 0)
                    FAILF("%s: case %zu accepted, plain zlib refuses it or decodes other bytes",
                          fmt_names[fmt], k);
            }
            else if (rc != ZARR_ECODEC || want == 0 || zarr_errmsg()[0] == '\0')
                FAILF("%s: case %zu: rc %d (%s), plain zlib %s", fmt_names[fmt], k, rc, zarr_errmsg(),
                      want == 0 ? "accepts it" : "refuses it too");
            ASSERT(back[N] == 0xEE);
        }
        free(bad);
        /* wrong expected sizes */
        zarr_error_clear();
        memset(back, 0xEE, sizeof back);
        ASSERT_ERR(zarr__inflate(ctx, (zarr__zfmt)fmt, enc.data, enc.size, back, N - 1), ZARR_ECODEC);
        ASSERT(strstr(zarr_errmsg(), "more than the expected 3999 bytes"));
        ASSERT(back[N - 1] == 0xEE);
        ASSERT_ERR(zarr__inflate(ctx, (zarr__zfmt)fmt, enc.data, enc.size, back, N + 1), ZARR_ECODEC);
        ASSERT(strstr(zarr_errmsg(), "decodes to 4000 bytes, expected 4001"));
        memset(back, 0xEE, sizeof back);
        ASSERT_ERR(zarr__inflate(ctx, (zarr__zfmt)fmt, enc.data, enc.size, back, 0), ZARR_ECODEC);
        ASSERT(back[0] == 0xEE);
        ASSERT_ERR(zarr__inflate(ctx, (zarr__zfmt)fmt, enc.data, enc.size, NULL, 0), ZARR_ECODEC);
        /* the context still decodes good data after all that */
        ASSERT_OK(zarr__inflate(ctx, (zarr__zfmt)fmt, enc.data, enc.size, back, N));
        ASSERT(memcmp(back, src, N) == 0);
    }
    /* zlib format with a preset dictionary (FDICT): refused, saying why */
    {
        static const uint8_t fdict[] = {0x78, 0xBB, 0x00, 0x00, 0x00, 0x01, 0x03, 0x00};
        uint8_t              one[4];
        ASSERT_ERR(zarr__inflate(ctx, ZARR__ZFMT_ZLIB, fdict, sizeof fdict, one, sizeof one), ZARR_ECODEC);
        ASSERT(strstr(zarr_errmsg(), "dictionary"));
    }
    zarr_buf_free(&enc);
    zarr_codec_ctx_free(ctx);
    return 0;
}

/* Several gzip members are one gzip file: the outputs concatenate, empty members included, whichever
 * level or writer made each; the expected size covers them all. */
static int
test_deflate_gzip_members(void)
{
    uint8_t         a[3000], b[5000], all[8000], back[8001];
    uint8_t         zmember[6000];
    size_t          zn;
    zarr_buf        enc = ZARR_BUF_INIT, two = ZARR_BUF_INIT;
    zarr_codec_ctx *ctx = zarr_codec_ctx_new();
    ASSERT(ctx);
    fill_ramp(a, sizeof a, 0);
    fill_field(b, sizeof b);
    memcpy(all, a, sizeof a);
    memcpy(all + sizeof a, b, sizeof b);

    ASSERT_OK(zarr__deflate(ctx, ZARR__ZFMT_GZIP, 1, a, sizeof a, &enc));
    ASSERT_OK(zarr_buf_append(&two, enc.data, enc.size));
    ASSERT_OK(zarr__deflate(ctx, ZARR__ZFMT_GZIP, 9, b, sizeof b, &enc));
    ASSERT_OK(zarr_buf_append(&two, enc.data, enc.size));
    ASSERT_OK(zarr__inflate(ctx, ZARR__ZFMT_GZIP, two.data, two.size, back, sizeof all));
    ASSERT(memcmp(back, all, sizeof all) == 0);
    ASSERT_EQ_INT(zlib_decode(1, two.data, two.size, back, sizeof all), 0);
    /* the first member alone is too short, both are too long for the first one's size */
    ASSERT_ERR(zarr__inflate(ctx, ZARR__ZFMT_GZIP, two.data, two.size, back, sizeof a), ZARR_ECODEC);
    ASSERT_ERR(zarr__inflate(ctx, ZARR__ZFMT_GZIP, two.data, two.size, back, sizeof all + 1), ZARR_ECODEC);
    ASSERT(strstr(zarr_errmsg(), "expected 8001"));
    /* an empty member in between, and a third one written by zlib */
    zarr_buf_free(&two);
    ASSERT_OK(zarr__deflate(ctx, ZARR__ZFMT_GZIP, 2, a, sizeof a, &enc));
    ASSERT_OK(zarr_buf_append(&two, enc.data, enc.size));
    ASSERT_OK(zarr__deflate(ctx, ZARR__ZFMT_GZIP, 6, "", 0, &enc));
    ASSERT_OK(zarr_buf_append(&two, enc.data, enc.size));
    ASSERT(zlib_gzip(6, b, sizeof b, zmember, sizeof zmember, &zn, NULL) == 0);
    ASSERT_OK(zarr_buf_append(&two, zmember, zn));
    ASSERT_OK(zarr__inflate(ctx, ZARR__ZFMT_GZIP, two.data, two.size, back, sizeof all));
    ASSERT(memcmp(back, all, sizeof all) == 0);
    ASSERT_OK(zarr__inflate_buf(ctx, ZARR__ZFMT_GZIP, two.data, two.size, sizeof all, &enc));
    ASSERT(enc.size == sizeof all && memcmp(enc.data, all, sizeof all) == 0);
    /* a member whose header carries a CRC (FHCRC): checked, as zlib checks it */
    {
        gz_header head;
        memset(&head, 0, sizeof head);
        head.hcrc = 1;
        head.os   = 3;
        ASSERT(zlib_gzip(6, a, sizeof a, zmember, sizeof zmember, &zn, &head) == 0);
        ASSERT(zmember[3] & 0x02);
        ASSERT_OK(zarr__inflate(ctx, ZARR__ZFMT_GZIP, zmember, zn, back, sizeof a));
        ASSERT(memcmp(back, a, sizeof a) == 0);
        zmember[10] ^= 0x01; /* the header CRC's first byte */
        ASSERT_ERR(zarr__inflate(ctx, ZARR__ZFMT_GZIP, zmember, zn, back, sizeof a), ZARR_ECODEC);
        ASSERT(strstr(zarr_errmsg(), "header crc"));
        /* the same header CRC problem in a second member */
        zmember[10] ^= 0x01;
        zarr_buf_free(&two);
        ASSERT_OK(zarr__deflate(ctx, ZARR__ZFMT_GZIP, 1, b, sizeof b, &enc));
        ASSERT_OK(zarr_buf_append(&two, enc.data, enc.size));
        ASSERT_OK(zarr_buf_append(&two, zmember, zn));
        ASSERT_OK(zarr__inflate(ctx, ZARR__ZFMT_GZIP, two.data, two.size, back, sizeof all));
        ASSERT(memcmp(back, b, sizeof b) == 0 && memcmp(back + sizeof b, a, sizeof a) == 0);
        two.data[enc.size + 10] ^= 0x01;
        ASSERT_ERR(zarr__inflate(ctx, ZARR__ZFMT_GZIP, two.data, two.size, back, sizeof all), ZARR_ECODEC);
    }
    zarr_buf_free(&enc);
    zarr_buf_free(&two);
    zarr_codec_ctx_free(ctx);
    return 0;
}

/* What follows the data: after a zlib stream, anything is ignored (zlib's inflate stops at the
 * stream's end); after a gzip member only another member may follow, so garbage and even zero padding
 * (which gzip(1) and Python's gzip module skip) are ZARR_ECODEC. Both decode paths agree. */
static int
test_deflate_trailing_bytes(void)
{
    static const uint8_t tails[][8] = {
        {'g', 'a', 'r', 'b', 'a', 'g', 'e', '!'}, {0, 0, 0, 0, 0, 0, 0, 0}, {0x1f, 0x8b, 8, 0, 0, 0, 0, 0}};
    uint8_t         src[4000], back[4001];
    zarr_buf        enc = ZARR_BUF_INIT, dec = ZARR_BUF_INIT;
    zarr_codec_ctx *ctx = zarr_codec_ctx_new();
    ASSERT(ctx);
    fill_ramp(src, sizeof src, 3);
    for (int fmt = 0; fmt < 2; fmt++)
        for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++)
            for (size_t len = 1; len <= 8; len += 7) {
                ASSERT_OK(zarr__deflate(ctx, (zarr__zfmt)fmt, 1, src, sizeof src, &enc));
                ASSERT_OK(zarr_buf_append(&enc, tails[t], len));
                int rc  = zarr__inflate(ctx, (zarr__zfmt)fmt, enc.data, enc.size, back, sizeof src);
                int rcb = zarr__inflate_buf(ctx, (zarr__zfmt)fmt, enc.data, enc.size, sizeof src, &dec);
                if (fmt == 0) {
                    if (rc != ZARR_OK || rcb != ZARR_OK)
                        FAILF("zlib + %zu bytes of tail %zu: refused (%d, %d: %s)", len, t, rc, rcb,
                              zarr_errmsg());
                    ASSERT(memcmp(back, src, sizeof src) == 0);
                    ASSERT(dec.size == sizeof src && memcmp(dec.data, src, sizeof src) == 0);
                }
                else if (rc != ZARR_ECODEC || rcb != ZARR_ECODEC)
                    FAILF("gzip + %zu bytes of tail %zu: rc %d and %d, expected ZARR_ECODEC", len, t, rc,
                          rcb);
                ASSERT_EQ_INT(zlib_decode(fmt, enc.data, enc.size, back, sizeof src), fmt == 0 ? 0 : -1);
            }
    zarr_buf_free(&enc);
    zarr_buf_free(&dec);
    zarr_codec_ctx_free(ctx);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(deflate_round_trips),  TEST_ENTRY(deflate_level1_ramp_size), TEST_ENTRY(deflate_bad_input),
    TEST_ENTRY(deflate_gzip_members), TEST_ENTRY(deflate_trailing_bytes),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
