/*
 * test_chunk_api.c: HDF5's chunk API on zarr arrays (issue 26; docs/FORMAT.md "The chunk API"):
 * H5Dget_num_chunks, H5Dget_chunk_info, H5Dget_chunk_info_by_coord, H5Dchunk_iter,
 * H5Dget_chunk_storage_size, H5Dread_chunk and H5Dwrite_chunk, for zarr v3 and v2 arrays without a
 * filter and with deflate (a zlib stream, made here with zlib's compress2), and for a sharded v3 array
 * (the HDF5 chunk is the inner chunk; its bytes are its range in the shard, found from the shard's
 * index, which this test parses itself). Sizes are checked against the store's files, bytes read raw
 * are decoded here, chunks written raw read back through H5Dread (also after reopening), and bytes
 * that are not a chunk of the codecs are refused with a message.
 */
#include "runner.h"

#include <hdf5.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <zlib.h>

#include "h5test.h"

#define R  20
#define C  30
#define CH 10

static char dir[400];

/* Size of file `rel` below `store`, -1 when absent. */
static long long
file_size(const char *store, const char *rel)
{
    char        p[1200];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", store, rel);
    return stat(p, &st) == 0 ? (long long)st.st_size : -1;
}

/* The store key of chunk (i, j) of dataset `name` relative to the store. */
static const char *
chunk_rel(const char *name, int version, int i, int j, char *out, size_t cap)
{
    if (version == 3)
        snprintf(out, cap, "%s/c/%d/%d", name, i, j);
    else
        snprintf(out, cap, "%s/%d.%d", name, i, j);
    return out;
}

/* The error stack's messages (4096 bytes at `msg`). */
static void
collect(char *msg)
{
    msg[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
}

/* Chunk `ci, cj` (CH x CH, starting at ci*CH, cj*CH) of the R x C array `v` as int32 elements. */
static void
chunk_of(int v[R][C], int ci, int cj, int32_t *out)
{
    for (int i = 0; i < CH; i++)
        for (int j = 0; j < CH; j++)
            out[i * CH + j] = v[ci * CH + i][cj * CH + j];
}

/* Encodes CH x CH int32 elements as the dataset's chunk bytes: raw, or a zlib stream. */
static int
encode_chunk(const int32_t *el, int deflate, unsigned char *out, size_t *n)
{
    uLongf len = (uLongf)*n;
    if (!deflate) {
        memcpy(out, el, CH * CH * sizeof *el);
        *n = CH * CH * sizeof *el;
        return 0;
    }
    if (compress2(out, &len, (const Bytef *)el, CH * CH * sizeof *el, 6) != Z_OK)
        return -1;
    *n = len;
    return 0;
}

/* Decodes chunk bytes (raw, or a zlib stream) to CH x CH elements. */
static int
decode_chunk(const unsigned char *b, size_t n, int deflate, int32_t *el)
{
    uLongf len = CH * CH * sizeof *el;
    if (!deflate) {
        if (n != CH * CH * sizeof *el)
            return -1;
        memcpy(el, b, n);
        return 0;
    }
    return uncompress((Bytef *)el, &len, b, n) == Z_OK && len == CH * CH * sizeof *el ? 0 : -1;
}

/* Reads the whole R x C dataset and compares it with `v`. */
static int
expect_all(hid_t d, int v[R][C])
{
    static int got[R][C];
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            if (got[i][j] != v[i][j])
                FAILF("element [%d][%d] is %d, expected %d", i, j, got[i][j], v[i][j]);
    return 0;
}

typedef struct seen_chunks {
    int     n;
    hsize_t off[16][2];
    hsize_t size[16];
    haddr_t addr[16];
    int     stop_after; /* return 1 after this many (0: never) */
} seen_chunks;

static int
iter_cb(const hsize_t *offset, unsigned filter_mask, haddr_t addr, hsize_t size, void *ud)
{
    seen_chunks *s = ud;
    if (filter_mask != 0 || s->n >= 16)
        return -1;
    s->off[s->n][0] = offset[0];
    s->off[s->n][1] = offset[1];
    s->size[s->n]   = size;
    s->addr[s->n]   = addr;
    s->n++;
    return s->stop_after && s->n == s->stop_after ? 1 : 0;
}

/* Checks every chunk query of dataset `name` against the store: the stored chunks are `want`
 * (grid coordinates, row-major order), each of the size of its file. `sparse`: chunk (1, 0) is not
 * stored (asked about), chunk (1, 1) is (selections). */
static int
check_queries(hid_t f, const char *store, const char *name, int version, int nwant, const int want[][2],
              int sparse)
{
    hid_t       d, sp;
    hsize_t     n = 0, off[2], size = 0, start[2], count[2];
    unsigned    mask = 7;
    haddr_t     addr, addrs[16];
    seen_chunks s;
    char        rel[600];

    ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dget_num_chunks(d, H5S_ALL, &n) >= 0);
    ASSERT_EQ_INT(n, nwant);
    for (int k = 0; k < nwant; k++) {
        ASSERT(H5Dget_chunk_info(d, H5S_ALL, (hsize_t)k, off, &mask, &addr, &size) >= 0);
        ASSERT_EQ_INT(off[0], want[k][0] * CH);
        ASSERT_EQ_INT(off[1], want[k][1] * CH);
        ASSERT_EQ_INT(mask, 0);
        ASSERT(addr != HADDR_UNDEF);
        ASSERT_EQ_INT(size,
                      file_size(store, chunk_rel(name, version, want[k][0], want[k][1], rel, sizeof rel)));
        addrs[k] = addr;
        for (int q = 0; q < k; q++)
            ASSERT(addrs[q] != addr);
        /* by coordinates: the same answer */
        mask = 7;
        ASSERT(H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) >= 0);
        ASSERT_EQ_INT(mask, 0);
        ASSERT(addr == addrs[k]);
        ASSERT_EQ_INT(size, file_size(store, rel));
        ASSERT(H5Dget_chunk_storage_size(d, off, &size) >= 0);
        ASSERT_EQ_INT(size, file_size(store, rel));
    }
    /* out of range */
    H5E_BEGIN_TRY { ASSERT(H5Dget_chunk_info(d, H5S_ALL, (hsize_t)nwant, off, &mask, &addr, &size) < 0); }
    H5E_END_TRY
    /* a chunk not stored: HADDR_UNDEF and 0 by coordinates, an error for its storage size */
    off[0] = 1 * CH;
    off[1] = 0;
    if (sparse) {
        ASSERT(H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) >= 0);
        ASSERT(addr == HADDR_UNDEF && size == 0);
        H5E_BEGIN_TRY { ASSERT(H5Dget_chunk_storage_size(d, off, &size) < 0); }
        H5E_END_TRY
    }
    /* every chunk visited, in the same order, with the same facts */
    memset(&s, 0, sizeof s);
    ASSERT(H5Dchunk_iter(d, H5P_DEFAULT, iter_cb, &s) >= 0);
    ASSERT_EQ_INT(s.n, nwant);
    for (int k = 0; k < nwant; k++) {
        ASSERT_EQ_INT(s.off[k][0], want[k][0] * CH);
        ASSERT_EQ_INT(s.off[k][1], want[k][1] * CH);
        ASSERT(s.addr[k] == addrs[k]);
        ASSERT_EQ_INT(s.size[k],
                      file_size(store, chunk_rel(name, version, want[k][0], want[k][1], rel, sizeof rel)));
    }
    /* a callback's positive value stops the iteration (HDF5 returns 0 for it, whatever the connector) */
    memset(&s, 0, sizeof s);
    s.stop_after = 1;
    ASSERT(H5Dchunk_iter(d, H5P_DEFAULT, iter_cb, &s) >= 0);
    ASSERT_EQ_INT(s.n, 1);
    /* a selection: only the chunks it intersects count; the idx-th of those */
    ASSERT((sp = H5Dget_space(d)) >= 0);
    start[0] = 12, start[1] = 12, count[0] = 2, count[1] = 2; /* inside chunk (1, 1) */
    ASSERT(H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
    ASSERT(H5Dget_num_chunks(d, sp, &n) >= 0);
    ASSERT_EQ_INT(n, 1);
    ASSERT(H5Dget_chunk_info(d, sp, 0, off, &mask, &addr, &size) >= 0);
    ASSERT(off[0] == 10 && off[1] == 10);
    start[0] = 15, start[1] = 0, count[0] = 5, count[1] = 5; /* inside chunk (1, 0): not stored */
    ASSERT(H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
    ASSERT(H5Dget_num_chunks(d, sp, &n) >= 0);
    ASSERT_EQ_INT(n, sparse ? 0 : 1);
    H5Sclose(sp);
    H5Dclose(d);
    return 0;
}

/* One store of zarr `version`, one dataset with deflate (`deflate`) or without a filter. */
static int
run_plain(int version, int deflate)
{
    char          store[600], rel[600], msg[4096];
    const char   *name = deflate ? "z" : "raw";
    hid_t         fapl, f, d, s, dcpl, ms, fs;
    hsize_t       dims[2] = {R, C}, chunk[2] = {CH, CH}, off[2], size = 0, start[2], count[2];
    uint32_t      mask = 9;
    static int    v[R][C];
    int32_t       el[CH * CH], back[CH * CH];
    unsigned char enc[2 * CH * CH * 4 + 64], *got;
    size_t        n;
    const int     want4[][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}};
    const int     want6[][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}};

    snprintf(store, sizeof store, "%s/v%d_%s.zarr", dir, version, name);
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            v[i][j] = 0;
    /* chunks (0, *) and (1, 1) written through H5Dwrite, (1, 0) and (1, 2) never */
    for (int i = 0; i < CH; i++)
        for (int j = 0; j < C; j++)
            v[i][j] = 1 + i * C + j;
    for (int i = CH; i < 2 * CH; i++)
        for (int j = CH; j < 2 * CH; j++)
            v[i][j] = -(1 + i * C + j);
    ASSERT((fapl = h5t_zarr_fapl(version)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_chunk(dcpl, 2, chunk) >= 0);
    if (deflate)
        ASSERT(H5Pset_deflate(dcpl, 6) >= 0);
    ASSERT((s = H5Screate_simple(2, dims, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, name, H5T_STD_I32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    start[0] = 0, start[1] = 0, count[0] = CH, count[1] = C;
    ASSERT((fs = H5Scopy(s)) >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
    ASSERT((ms = H5Screate_simple(2, count, NULL)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, &v[0][0]) >= 0);
    H5Sclose(ms);
    {
        static int blk[CH][CH];
        for (int i = 0; i < CH; i++)
            for (int j = 0; j < CH; j++)
                blk[i][j] = v[CH + i][CH + j];
        /* in two halves: partial-chunk writes, which the connector's chunk cache holds */
        for (int h = 0; h < 2; h++) {
            start[0] = CH + h * CH / 2, start[1] = CH, count[0] = CH / 2, count[1] = CH;
            ASSERT(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
            ASSERT((ms = H5Screate_simple(2, count, NULL)) >= 0);
            ASSERT(H5Dwrite(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, blk[h * CH / 2]) >= 0);
            H5Sclose(ms);
        }
    }
    H5Sclose(fs);
    /* the queries write the connector's chunk cache first: chunk (1, 1) is listed and read raw */
    ASSERT(H5Dget_num_chunks(d, H5S_ALL, &size) >= 0);
    ASSERT_EQ_INT(size, 4);
    off[0] = CH, off[1] = CH;
    ASSERT(H5Dget_chunk_storage_size(d, off, &size) >= 0);
    ASSERT((got = malloc(size)) != NULL);
    ASSERT(H5Dread_chunk(d, H5P_DEFAULT, off, &mask, got) >= 0);
    ASSERT(decode_chunk(got, size, deflate, back) == 0);
    chunk_of(v, 1, 1, el);
    ASSERT(memcmp(back, el, sizeof el) == 0);
    free(got);
    H5Dclose(d);
    H5Sclose(s);
    H5Pclose(dcpl);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(h5t_is_zarr_store(store));

    ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0);
    if (check_queries(f, store, name, version, 4, want4, 1))
        return 1;
    ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
    /* H5Dread_chunk: the stored bytes, which decode to the chunk's values */
    for (int k = 0; k < 4; k++) {
        long long fsz = file_size(store, chunk_rel(name, version, want4[k][0], want4[k][1], rel, sizeof rel));
        size_t    fn  = 0;
        void     *fb  = NULL;
        char      p[1200];
        off[0] = (hsize_t)want4[k][0] * CH;
        off[1] = (hsize_t)want4[k][1] * CH;
        ASSERT(H5Dget_chunk_storage_size(d, off, &size) >= 0 && (long long)size == fsz);
        ASSERT((got = malloc(size)) != NULL);
        mask = 9;
        ASSERT(H5Dread_chunk(d, H5P_DEFAULT, off, &mask, got) >= 0);
        ASSERT_EQ_INT(mask, 0);
        snprintf(p, sizeof p, "%s/%s", store, rel);
        ASSERT((fb = test_slurp(p, &fn)) != NULL && fn == size && memcmp(fb, got, size) == 0);
        free(fb);
        ASSERT(decode_chunk(got, size, deflate, back) == 0);
        chunk_of(v, want4[k][0], want4[k][1], el);
        ASSERT(memcmp(back, el, sizeof el) == 0);
        free(got);
    }
    /* not stored, unaligned: errors naming the dataset */
    off[0] = CH, off[1] = 0;
    H5E_BEGIN_TRY { ASSERT(H5Dread_chunk(d, H5P_DEFAULT, off, &mask, enc) < 0); }
    H5E_END_TRY
    collect(msg);
    ASSERT(strstr(msg, "not stored") && strstr(msg, name));
    off[0] = 3, off[1] = 0;
    H5E_BEGIN_TRY { ASSERT(H5Dread_chunk(d, H5P_DEFAULT, off, &mask, enc) < 0); }
    H5E_END_TRY
    collect(msg);
    ASSERT(strstr(msg, "chunk boundary"));

    /* H5Dwrite_chunk of chunk (1, 0) with bytes made here; H5Dread sees them */
    for (int i = CH; i < 2 * CH; i++)
        for (int j = 0; j < CH; j++)
            v[i][j] = 7000 + i * C + j;
    chunk_of(v, 1, 0, el);
    n = sizeof enc;
    ASSERT(encode_chunk(el, deflate, enc, &n) == 0);
    off[0] = CH, off[1] = 0;
    ASSERT(H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, n, enc) >= 0);
    if (expect_all(d, v))
        return 1;
    ASSERT_EQ_INT(file_size(store, chunk_rel(name, version, 1, 0, rel, sizeof rel)), (long long)n);
    /* over a chunk the array's chunk cache holds (a partial read put it there): the cache is dropped,
     * the new bytes are read */
    {
        int   part[2][2];
        hid_t fs2, ms2;
        start[0] = 1, start[1] = 1, count[0] = 2, count[1] = 2;
        ASSERT((fs2 = H5Dget_space(d)) >= 0);
        ASSERT(H5Sselect_hyperslab(fs2, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
        ASSERT((ms2 = H5Screate_simple(2, count, NULL)) >= 0);
        ASSERT(H5Dread(d, H5T_NATIVE_INT, ms2, fs2, H5P_DEFAULT, part) >= 0);
        ASSERT_EQ_INT(part[1][1], v[2][2]);
        H5Sclose(ms2);
        H5Sclose(fs2);
    }
    for (int i = 0; i < CH; i++)
        for (int j = 0; j < CH; j++)
            v[i][j] = 100 - i - j;
    chunk_of(v, 0, 0, el);
    n = sizeof enc;
    ASSERT(encode_chunk(el, deflate, enc, &n) == 0);
    off[0] = 0, off[1] = 0;
    ASSERT(H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, n, enc) >= 0);
    if (expect_all(d, v))
        return 1;
    /* every filter skipped (the chunk's plain elements): encoded by the codecs, chunk (1, 2) */
    for (int i = CH; i < 2 * CH; i++)
        for (int j = 2 * CH; j < C; j++)
            v[i][j] = 5 * i - j;
    chunk_of(v, 1, 2, el);
    off[0] = CH, off[1] = 2 * CH;
    ASSERT(H5Dwrite_chunk(d, H5P_DEFAULT, deflate ? 1u : 0u, off, sizeof el, el) >= 0);
    if (expect_all(d, v))
        return 1;
    ASSERT(H5Dget_chunk_storage_size(d, off, &size) >= 0);
    ASSERT((got = malloc(size)) != NULL);
    ASSERT(H5Dread_chunk(d, H5P_DEFAULT, off, &mask, got) >= 0 && mask == 0);
    ASSERT(decode_chunk(got, size, deflate, back) == 0 && memcmp(back, el, sizeof el) == 0);
    free(got);
    /* bytes that are not a chunk of the codecs are refused; nothing changes */
    memset(enc, 0x5a, 37);
    off[0] = 0, off[1] = CH;
    H5E_BEGIN_TRY { ASSERT(H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, 37, enc) < 0); }
    H5E_END_TRY
    collect(msg);
    ASSERT(strstr(msg, "not a chunk of its codecs") && strstr(msg, name));
    /* outside the extent */
    off[0] = 2 * CH, off[1] = 0;
    H5E_BEGIN_TRY { ASSERT(H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, 37, enc) < 0); }
    H5E_END_TRY
    if (expect_all(d, v))
        return 1;
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);

    /* after reopening: the values, and all six chunks listed */
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, name, H5P_DEFAULT)) >= 0);
    if (expect_all(d, v))
        return 1;
    /* read-only: refused */
    off[0] = 0, off[1] = 0;
    H5E_BEGIN_TRY { ASSERT(H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, sizeof el, el) < 0); }
    H5E_END_TRY
    H5Dclose(d);
    if (check_queries(f, store, name, version, 6, want6, 0))
        return 1;
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_setup(void)
{
    snprintf(dir, sizeof dir, "%s", test_tmpdir("chunk_api"));
    ASSERT(dir[0]);
    return 0;
}

static int
test_v3_plain(void)
{
    return run_plain(3, 0);
}

static int
test_v3_deflate(void)
{
    return run_plain(3, 1);
}

static int
test_v2_plain(void)
{
    return run_plain(2, 0);
}

static int
test_v2_deflate(void)
{
    return run_plain(2, 1);
}

/* Offset and size of inner chunk (i, j) of a 2 x 2 shard file (index at the end: 4 x {u64 offset, u64
 * size} little-endian + crc32c), as its index says; -1 offset when the inner chunk is not stored. */
static int
shard_entry(const char *store, const char *rel, int i, int j, long long *off, long long *size)
{
    char           p[1200];
    size_t         n = 0;
    unsigned char *b;
    uint64_t       o = 0, s = 0;
    const size_t   ix = 4 * 16 + 4;
    snprintf(p, sizeof p, "%s/%s", store, rel);
    ASSERT((b = test_slurp(p, &n)) != NULL && n >= ix);
    for (int k = 7; k >= 0; k--) {
        o = o << 8 | b[n - ix + (size_t)(i * 2 + j) * 16 + (size_t)k];
        s = s << 8 | b[n - ix + (size_t)(i * 2 + j) * 16 + 8 + (size_t)k];
    }
    *off  = o == UINT64_MAX ? -1 : (long long)o;
    *size = o == UINT64_MAX ? 0 : (long long)s;
    free(b);
    return 0;
}

/* A sharded v3 array: 40 x 40 int32, inner chunks 10 x 10 (the HDF5 chunk), shards 20 x 20, deflate. */
static int
test_v3_sharded(void)
{
    char          store[600], rel[600];
    hid_t         fapl, f, d, s, dcpl, ms, fs;
    hsize_t       dims[2] = {40, 40}, chunk[2] = {CH, CH}, shard[2] = {20, 20}, off[2], size = 0, nn = 0;
    hsize_t       start[2], count[2];
    unsigned      mask = 3;
    haddr_t       addr;
    static int    v[40][40], got[40][40];
    int32_t       el[CH * CH], back[CH * CH];
    unsigned char enc[2 * CH * CH * 4 + 64], *raw;
    size_t        n;
    long long     eo, es;
    seen_chunks   sc;
    /* stored inner chunks in row-major order of the inner grid */
    const int want3[][2] = {{0, 0}, {1, 0}, {3, 3}};
    const int want5[][2] = {{0, 0}, {1, 0}, {1, 1}, {2, 1}, {3, 3}};

    snprintf(store, sizeof store, "%s/v3_sharded.zarr", dir);
    memset(v, 0, sizeof v);
    for (int i = 0; i < 20; i++)
        for (int j = 0; j < CH; j++)
            v[i][j] = 1 + i * 40 + j; /* inner chunks (0, 0), (1, 0) of shard (0, 0) */
    for (int i = 30; i < 40; i++)
        for (int j = 30; j < 40; j++)
            v[i][j] = -(i * 40 + j); /* inner chunk (3, 3), shard (1, 1) */
    ASSERT((fapl = h5t_zarr_fapl(3)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_chunk(dcpl, 2, chunk) >= 0);
    ASSERT(H5Pset_deflate(dcpl, 6) >= 0 && H5Pset_zarr_shard(dcpl, 2, shard) >= 0);
    ASSERT((s = H5Screate_simple(2, dims, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "sh", H5T_STD_I32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    H5Pclose(dcpl);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(h5t_is_zarr_store(store));
    /* one shard per stored group of inner chunks; the others are left out */
    ASSERT(file_size(store, "sh/c/0/0") > 0 && file_size(store, "sh/c/1/1") > 0);
    ASSERT(file_size(store, "sh/c/0/1") < 0 && file_size(store, "sh/c/1/0") < 0);

    ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "sh", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dget_num_chunks(d, H5S_ALL, &nn) >= 0);
    ASSERT_EQ_INT(nn, 3);
    for (int k = 0; k < 3; k++) {
        int si = want3[k][0] / 2, sj = want3[k][1] / 2;
        snprintf(rel, sizeof rel, "sh/c/%d/%d", si, sj);
        if (shard_entry(store, rel, want3[k][0] % 2, want3[k][1] % 2, &eo, &es))
            return 1;
        ASSERT(eo >= 0);
        ASSERT(H5Dget_chunk_info(d, H5S_ALL, (hsize_t)k, off, &mask, &addr, &size) >= 0);
        ASSERT(off[0] == (hsize_t)want3[k][0] * CH && off[1] == (hsize_t)want3[k][1] * CH);
        ASSERT(mask == 0 && addr != HADDR_UNDEF);
        ASSERT_EQ_INT(size, es);
        ASSERT(H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) >= 0);
        ASSERT_EQ_INT(size, es);
        /* its bytes: the shard's range, a zlib stream of the inner chunk's values */
        ASSERT((raw = malloc((size_t)es)) != NULL);
        ASSERT(H5Dread_chunk(d, H5P_DEFAULT, off, &mask, raw) >= 0 && mask == 0);
        {
            char           p[1200];
            size_t         fn = 0;
            unsigned char *fb;
            snprintf(p, sizeof p, "%s/%s", store, rel);
            ASSERT((fb = test_slurp(p, &fn)) != NULL && (size_t)(eo + es) <= fn);
            ASSERT(memcmp(fb + eo, raw, (size_t)es) == 0);
            free(fb);
        }
        ASSERT(decode_chunk(raw, (size_t)es, 1, back) == 0);
        for (int i = 0; i < CH; i++)
            for (int j = 0; j < CH; j++)
                el[i * CH + j] = v[want3[k][0] * CH + i][want3[k][1] * CH + j];
        ASSERT(memcmp(back, el, sizeof el) == 0);
        free(raw);
    }
    /* an inner chunk not stored in a stored shard, and one in a shard not stored */
    off[0] = 0, off[1] = CH;
    ASSERT(H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) >= 0 && addr == HADDR_UNDEF);
    off[0] = 20, off[1] = 0;
    ASSERT(H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) >= 0 && addr == HADDR_UNDEF);
    H5E_BEGIN_TRY { ASSERT(H5Dread_chunk(d, H5P_DEFAULT, off, &mask, enc) < 0); }
    H5E_END_TRY

    /* writes: inner chunk (1, 1) into stored shard (0, 0) (its other inner chunks kept as they are), and
     * inner chunk (2, 1) into shard (1, 0), which is not stored yet */
    for (int i = 10; i < 20; i++)
        for (int j = 10; j < 20; j++)
            v[i][j] = 30000 + i * 40 + j;
    for (int i = 20; i < 30; i++)
        for (int j = 10; j < 20; j++)
            v[i][j] = 40000 + i * 40 + j;
    for (int w = 0; w < 2; w++) {
        int ci = w ? 2 : 1, cj = 1;
        for (int i = 0; i < CH; i++)
            for (int j = 0; j < CH; j++)
                el[i * CH + j] = v[ci * CH + i][cj * CH + j];
        n = sizeof enc;
        ASSERT(encode_chunk(el, 1, enc, &n) == 0);
        off[0] = (hsize_t)ci * CH, off[1] = (hsize_t)cj * CH;
        ASSERT(H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, n, enc) >= 0);
        ASSERT(H5Dget_chunk_storage_size(d, off, &size) >= 0);
        ASSERT_EQ_INT(size, n);
    }
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    ASSERT(memcmp(got, v, sizeof v) == 0);
    /* a partial H5Dread of the rewritten shard sees the new inner chunk too */
    start[0] = 12, start[1] = 8, count[0] = 4, count[1] = 6;
    ASSERT((fs = H5Dget_space(d)) >= 0 &&
           H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
    ASSERT((ms = H5Screate_simple(2, count, NULL)) >= 0);
    {
        int part[4][6];
        ASSERT(H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, part) >= 0);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 6; j++)
                ASSERT_EQ_INT(part[i][j], v[12 + i][8 + j]);
    }
    H5Sclose(ms);
    H5Sclose(fs);
    /* the bytes of a sharded array's inner chunk are checked against its inner codecs */
    memset(enc, 0x11, 50);
    off[0] = 0, off[1] = 0;
    H5E_BEGIN_TRY { ASSERT(H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, 50, enc) < 0); }
    H5E_END_TRY
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT(file_size(store, "sh/c/1/0") > 0);

    /* reopened: the values, five chunks in order, their sizes those of the shard indexes */
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "sh", H5P_DEFAULT)) >= 0);
    ASSERT(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    ASSERT(memcmp(got, v, sizeof v) == 0);
    memset(&sc, 0, sizeof sc);
    ASSERT(H5Dchunk_iter(d, H5P_DEFAULT, iter_cb, &sc) >= 0);
    ASSERT_EQ_INT(sc.n, 5);
    for (int k = 0; k < 5; k++) {
        snprintf(rel, sizeof rel, "sh/c/%d/%d", want5[k][0] / 2, want5[k][1] / 2);
        if (shard_entry(store, rel, want5[k][0] % 2, want5[k][1] % 2, &eo, &es))
            return 1;
        ASSERT(sc.off[k][0] == (hsize_t)want5[k][0] * CH && sc.off[k][1] == (hsize_t)want5[k][1] * CH);
        ASSERT_EQ_INT(sc.size[k], es);
        for (int q = 0; q < k; q++)
            ASSERT(sc.addr[q] != sc.addr[k]);
    }
    ASSERT(H5Dget_num_chunks(d, H5S_ALL, &nn) >= 0);
    ASSERT_EQ_INT(nn, 5);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* Grids of more than 64 chunks (shards) are listed, not probed position by position: v3, v2 and a
 * sharded v3 array of 100 x 100 int32 in chunks of 10 x 10 (sharded: inner chunks of 5 x 5, shards of
 * 10 x 10), every other chunk written (a checkerboard). The listing finds exactly those, in row-major
 * order, with their stored sizes. */
static int
many_chunks(int version, int sharded)
{
    char        store[600], rel[600];
    hid_t       fapl, f, d, s, dcpl;
    hsize_t     dims[2] = {100, 100}, chunk[2], shard[2] = {10, 10}, off[2], size, nn = 0;
    hsize_t     ch = sharded ? 5 : 10, g = 100 / ch;
    unsigned    mask;
    haddr_t     addr;
    static int  v[100][100];
    seen_chunks sc;
    hsize_t     k = 0;

    snprintf(store, sizeof store, "%s/many_v%d%s.zarr", dir, version, sharded ? "_sh" : "");
    chunk[0] = chunk[1] = ch;
    for (int i = 0; i < 100; i++)
        for (int j = 0; j < 100; j++)
            v[i][j] = ((i / (int)ch + j / (int)ch) % 2) ? 0 : 1 + i + j; /* 0 is the fill value: left out */
    ASSERT((fapl = h5t_zarr_fapl(version)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_chunk(dcpl, 2, chunk) >= 0);
    ASSERT(H5Pset_deflate(dcpl, 1) >= 0);
    if (sharded)
        ASSERT(H5Pset_zarr_shard(dcpl, 2, shard) >= 0);
    if (version == 2) {
        int zero = 0; /* a fill value, so that zarr v2 leaves the all-zero chunks out too */
        ASSERT(H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &zero) >= 0);
    }
    ASSERT((s = H5Screate_simple(2, dims, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "m", H5T_STD_I32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    ASSERT(H5Dget_num_chunks(d, H5S_ALL, &nn) >= 0);
    ASSERT_EQ_INT(nn, g * g / 2);
    for (hsize_t i = 0; i < g; i++)
        for (hsize_t j = 0; j < g; j++) {
            if ((i + j) % 2)
                continue;
            ASSERT(H5Dget_chunk_info(d, H5S_ALL, k, off, &mask, &addr, &size) >= 0);
            ASSERT(off[0] == i * ch && off[1] == j * ch);
            ASSERT_EQ_INT(addr, i * g + j);
            if (!sharded) {
                ASSERT_EQ_INT(size,
                              file_size(store, chunk_rel("m", version, (int)i, (int)j, rel, sizeof rel)));
            }
            else {
                long long eo, es;
                snprintf(rel, sizeof rel, "m/c/%d/%d", (int)(i / 2), (int)(j / 2));
                if (shard_entry(store, rel, (int)(i % 2), (int)(j % 2), &eo, &es))
                    return 1;
                ASSERT(eo >= 0);
                ASSERT_EQ_INT(size, es);
            }
            k++;
        }
    memset(&sc, 0, sizeof sc);
    sc.stop_after = 16;
    ASSERT(H5Dchunk_iter(d, H5P_DEFAULT, iter_cb, &sc) >= 0);
    ASSERT_EQ_INT(sc.n, 16);
    H5Dclose(d);
    H5Sclose(s);
    H5Pclose(dcpl);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static int
test_many_chunks(void)
{
    return many_chunks(3, 0) || many_chunks(2, 0) || many_chunks(3, 1);
}

/* Datasets that are not chunked are refused, as HDF5 refuses them. */
static int
test_not_chunked(void)
{
    char    store[600], msg[4096];
    hid_t   fapl, f, d, s;
    hsize_t dims[1] = {8}, nn = 0;
    int     v[8] = {1, 2, 3, 4, 5, 6, 7, 8};

    snprintf(store, sizeof store, "%s/contig.zarr", dir);
    ASSERT((fapl = h5t_zarr_fapl(3)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((s = H5Screate_simple(1, dims, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "c", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5E_BEGIN_TRY { ASSERT(H5Dget_num_chunks(d, H5S_ALL, &nn) < 0); }
    H5E_END_TRY
    collect(msg);
    ASSERT(strstr(msg, "not a chunked dataset"));
    H5Dclose(d);
    H5Sclose(s);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* H5Pset_zarr_raw_trusted (h5zarr.h): a dxpl vouching for the bytes stores them with no decode check,
 * byte for byte (what h5zarr-convert does with chunks copied from HDF5's filters); the same bytes with
 * the default dxpl are refused, and a good chunk written trusted reads back as values. */
static int
test_trusted(void)
{
    char          store[600], rel[600], msg[4096];
    hid_t         fapl, f, d, s, dcpl, dxpl;
    hsize_t       dims[2] = {R, C}, chunk[2] = {CH, CH}, off[2] = {0, CH}, size = 0;
    uint32_t      mask = 9;
    int32_t       el[CH * CH];
    unsigned char junk[37], enc[2 * CH * CH * 4 + 64], got[sizeof enc];
    size_t        n = sizeof enc;
    static int    v[R][C];

    snprintf(store, sizeof store, "%s/trusted.zarr", dir);
    memset(junk, 0x5a, sizeof junk);
    for (int i = 0; i < CH * CH; i++)
        el[i] = 7 * i - 300;
    ASSERT(encode_chunk(el, 1, enc, &n) == 0);
    ASSERT((fapl = h5t_zarr_fapl(3)) >= 0);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_chunk(dcpl, 2, chunk) >= 0 &&
           H5Pset_deflate(dcpl, 6) >= 0);
    ASSERT((s = H5Screate_simple(2, dims, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "t", H5T_STD_I32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
    ASSERT((dxpl = H5Pcreate(H5P_DATASET_XFER)) >= 0 && H5Pset_zarr_raw_trusted(dxpl, 1) >= 0);
    /* default: checked and refused; trusted: stored as given */
    H5E_BEGIN_TRY { ASSERT(H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, sizeof junk, junk) < 0); }
    H5E_END_TRY
    collect(msg);
    ASSERT(strstr(msg, "not a chunk of its codecs"));
    ASSERT(file_size(store, chunk_rel("t", 3, 0, 1, rel, sizeof rel)) == -1);
    ASSERT(H5Dwrite_chunk(d, dxpl, 0, off, sizeof junk, junk) >= 0);
    ASSERT(file_size(store, rel) == (long long)sizeof junk);
    ASSERT(H5Dget_chunk_storage_size(d, off, &size) >= 0 && size == sizeof junk);
    ASSERT(H5Dread_chunk(d, H5P_DEFAULT, off, &mask, got) >= 0 && mask == 0 &&
           !memcmp(got, junk, sizeof junk));
    /* a real chunk through the trusted dxpl: the values read back */
    ASSERT(H5Dwrite_chunk(d, dxpl, 0, off, n, enc) >= 0);
    ASSERT(file_size(store, rel) == (long long)n);
    for (int i = 0; i < CH; i++)
        for (int j = 0; j < CH; j++)
            v[i][CH + j] = el[i * CH + j];
    if (expect_all(d, v))
        return 1;
    /* switched off again: checked */
    ASSERT(H5Pset_zarr_raw_trusted(dxpl, 0) >= 0);
    H5E_BEGIN_TRY { ASSERT(H5Dwrite_chunk(d, dxpl, 0, off, sizeof junk, junk) < 0); }
    H5E_END_TRY
    ASSERT(file_size(store, rel) == (long long)n);
    H5Pclose(dxpl);
    H5Pclose(dcpl);
    H5Dclose(d);
    H5Sclose(s);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

static const test_entry tests[] = {TEST_ENTRY(setup),       TEST_ENTRY(v3_plain),    TEST_ENTRY(v3_deflate),
                                   TEST_ENTRY(v2_plain),    TEST_ENTRY(v2_deflate),  TEST_ENTRY(v3_sharded),
                                   TEST_ENTRY(many_chunks), TEST_ENTRY(not_chunked), TEST_ENTRY(trusted)};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
