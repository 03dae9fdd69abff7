/*
 * fuzz_shard.c: harness for the shard format (zarr/shard_format.c) and the sharded fast path of the
 * batched executor (zarr/batch.c, zarr/shard_cache.c): shard indexes and inner chunks read from a store
 * are untrusted. The first input byte picks the array (index at the end
 * or the start, inner chunks raw or zstd, one of two small shapes, or with bit 8 inner chunks of 64 KiB:
 * the streamed shard writes and the reads by decode task); the rest is the value of shard c/0/0 in a
 * memory store (shard c/0/1 holds a valid shard written by the engine). The harness reads the whole
 * array, one element and a box, then writes one element and reads it back, then a box across both
 * shards. Every call must either succeed or fail with an error; after a successful write what was
 * written must read back, and the valid shard must read as it was written (and boxed, unless the box
 * write failed: then either way, never a mix). The paths agree: the format's index decoder
 * (zarr__shard_index_read) refuses the fuzzed shard exactly when the codec on the whole shard
 * (zarr_chain_decode) and the whole-array read refuse it for its index; when the index passes, the codec
 * and the whole-array read succeed or fail together and give the same values.
 */
#include "fuzz_common.h"

#include "shard_format.h"

#include <stdlib.h>
#include <string.h>

static const char *const docs[] = {
    /* 2-D int16, shards 8x8 of 4x4 inner chunks */
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[8,16],\"data_type\":\"int16\","
    "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[8,8]}},"
    "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":-3,"
    "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[4,4],"
    "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}%s],"
    "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"crc32c\"}],"
    "\"index_location\":\"%s\"}}]}",
    /* 1-D uint32, shards of 12 in inner chunks of 3, no index checksum */
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[1,24],\"data_type\":\"uint32\","
    "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[1,12]}},"
    "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,"
    "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[1,3],"
    "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}%s],"
    "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
    "\"index_location\":\"%s\"}}]}",
    /* 1-D uint8, shards of 128 KiB in inner chunks of 64 KiB: large enough for the streamed writes and
     * the reads by decode task of shard.c (STREAM_MIN_CHUNK), small when zstd-compressed */
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[1,262144],\"data_type\":\"uint8\","
    "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[1,131072]}},"
    "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":9,"
    "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[1,65536],"
    "\"codecs\":[{\"name\":\"bytes\"}%s],"
    "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"crc32c\"}],"
    "\"index_location\":\"%s\"}}]}",
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    zarr_store      *s = NULL;
    zarr_array_meta *m = NULL;
    zarr_array      *a = NULL;
    zarr_region      r;
    char             doc[2048];
    uint8_t         *all = NULL, *good = NULL, *goodbox = NULL, box[5 * 7 * 4];
    size_t           nbytes;
    uint64_t         shape[2];
    size_t           es;
    int              sel;

    if (size < 1)
        return 0;
    sel = data[0];
    snprintf(doc, sizeof doc, docs[(sel & 8) ? 2 : sel & 1], (sel & 2) ? ",{\"name\":\"zstd\"}" : "",
             (sel & 4) ? "start" : "end");
    if (zarr_store_new_mem(&s) != ZARR_OK)
        return 0;
    FUZZ_CHECK(zarr_array_meta_parse_v3(doc, strlen(doc), "fuzz", &m) == ZARR_OK, "metadata");
    FUZZ_CHECK(zarr_array_create(s, "a", m, true, &a) == ZARR_OK, "create");
    shape[0] = zarr_array_meta_get(a)->shape[0];
    shape[1] = zarr_array_meta_get(a)->shape[1];
    es       = zarr_array_meta_get(a)->dtype->size;
    nbytes   = (size_t)(shape[0] * shape[1]) * es;
    all      = malloc(nbytes);
    good     = malloc(nbytes);
    goodbox  = malloc(nbytes);
    FUZZ_CHECK(all && good && goodbox, "out of memory");
    /* a valid shard c/0/1 from the engine, then the fuzzed c/0/0 */
    for (size_t i = 0; i < nbytes; i++)
        good[i] = (uint8_t)(i * 7 + 1);
    {
        uint64_t st[2] = {0, shape[1] / 2}, ct[2] = {shape[0], shape[1] / 2};
        zarr_region_box(2, st, ct, &r);
        FUZZ_CHECK(zarr_array_write(a, &r, good) == ZARR_OK, "writing the valid shard");
    }
    FUZZ_CHECK(zarr_store_set(s, "a/c/0/0", data + 1, size - 1) == ZARR_OK, "set");
    zarr_array_discard_cache(a);

    zarr_region_all(zarr_array_meta_get(a), &r);
    {
        /* one decoder for every path: the index's verdict, the codec's, the fast path's */
        const zarr_array_meta *m = zarr_array_meta_get(a);
        zarr__shard_layout     l;
        zarr_codec_ctx        *ctx  = zarr_codec_ctx_new();
        uint64_t              *ent  = NULL;
        size_t                 half = (size_t)(shape[1] / 2), rows = (size_t)shape[0];
        uint8_t               *sh = malloc(nbytes / 2);
        int                    ri, rc, rr;
        FUZZ_CHECK(ctx && sh, "out of memory");
        FUZZ_CHECK(zarr__chain_shard_layout(m->chain, m->chunks, &l) == ZARR_OK, "layout");
        ri = zarr__shard_index_read(&l, ctx, "a/c/0/0", data + 1, size - 1, &ent);
        rc = zarr_chain_decode(m->chain, NULL, data + 1, size - 1, sh, m->chunks);
        rr = zarr_array_read(a, &r, all);
        if (ri != ZARR_OK) {
            FUZZ_CHECK(ri == ZARR_ECODEC, "the index decoder fails with ZARR_ECODEC");
            FUZZ_CHECK(rc != ZARR_OK, "the codec reads a shard whose index the format refuses");
            FUZZ_CHECK(rr != ZARR_OK, "the fast path reads a shard whose index the format refuses");
        }
        else {
            FUZZ_CHECK((rc == ZARR_OK) == (rr == ZARR_OK), "the codec and the fast path disagree");
            for (size_t i = 0; rc == ZARR_OK && rr == ZARR_OK && i < rows; i++)
                FUZZ_CHECK(memcmp(sh + i * half * es, all + i * (size_t)shape[1] * es, half * es) == 0,
                           "the codec and the fast path read different values");
        }
        free(ent);
        free(sh);
        zarr_codec_ctx_free(ctx);
    }
    {
        uint64_t st[2] = {0, 1}, ct[2] = {1, 1};
        zarr_region_box(2, st, ct, &r);
        (void)zarr_array_read(a, &r, box);
        if (shape[0] >= 6) {
            uint64_t st2[2] = {1, 5}, ct2[2] = {5, 7};
            zarr_region_box(2, st2, ct2, &r);
            (void)zarr_array_read(a, &r, box);
        }
    }
    /* a write into the fuzzed shard: fails cleanly, or reads back */
    {
        uint64_t st[2] = {0, 2}, ct[2] = {1, 1};
        uint8_t  v[4] = {0x12, 0x34, 0x56, 0x78}, w[4] = {0};
        zarr_region_box(2, st, ct, &r);
        if (zarr_array_write(a, &r, v) == ZARR_OK) {
            zarr_array_discard_cache(a);
            FUZZ_CHECK(zarr_array_read(a, &r, w) == ZARR_OK, "reading back a written element");
            FUZZ_CHECK(memcmp(v, w, es) == 0, "the written element reads back different");
        }
    }
    /* a box across both shards, each partly covered: one wave of two shards, each encoded by its own
     * task (straight into its buffer, or streamed into its writer for the large chunks), the fuzzed one's
     * untouched inner chunks copied by its index; fails cleanly, or reads back. The valid shard then
     * holds the box's part (goodbox); after a failure it holds either that or what it held (good): a
     * streamed shard is committed when it is finished, whatever the other shard of its wave does, and
     * no shard is ever torn */
    bool box_ok = false;
    memcpy(goodbox, good, nbytes);
    {
        uint64_t r0 = shape[0] > 2 ? 1 : 0, nr = shape[0] > 2 ? shape[0] - 2 : shape[0], half = shape[1] / 2;
        uint64_t st[2] = {r0, half - 2}, ct[2] = {nr, 4};
        uint8_t  v[8 * 4 * 4], w[8 * 4 * 4];
        for (size_t i = 0; i < sizeof v; i++)
            v[i] = (uint8_t)(0xA0 + i);
        for (uint64_t i = 0; i < nr; i++) /* its two columns in the valid shard */
            memcpy(goodbox + ((r0 + i) * half) * es, v + (i * 4 + 2) * es, 2 * es);
        zarr_region_box(2, st, ct, &r);
        if ((box_ok = zarr_array_write(a, &r, v) == ZARR_OK)) {
            zarr_array_discard_cache(a);
            memset(w, 0, sizeof w);
            FUZZ_CHECK(zarr_array_read(a, &r, w) == ZARR_OK, "reading back a written box");
            FUZZ_CHECK(memcmp(v, w, (size_t)(nr * 4) * es) == 0, "the written box reads back different");
        }
    }
    /* the valid shard reads as written (with the box, or, after a failed box write, with or without) */
    {
        uint64_t st[2] = {0, shape[1] / 2}, ct[2] = {shape[0], shape[1] / 2};
        size_t   n = (size_t)(shape[0] * shape[1] / 2) * es;
        zarr_region_box(2, st, ct, &r);
        memset(all, 0, nbytes);
        FUZZ_CHECK(zarr_array_read(a, &r, all) == ZARR_OK, "reading the valid shard");
        FUZZ_CHECK(memcmp(all, goodbox, n) == 0 || (!box_ok && memcmp(all, good, n) == 0),
                   "the valid shard changed");
    }
    zarr_array_close(a);
    zarr_store_close(s);
    free(all);
    free(good);
    free(goodbox);
    return 0;
}
