/*
 * vlen.c: the `vlen-utf8` and `vlen-bytes` codecs (v3 array->bytes; v2 object filters), numcodecs'
 * VLenUTF8 / VLenBytes layout: a 32-bit little-endian item count, then per item a 32-bit length and
 * the bytes. Decoding allocates each item (char * strings, zarr_vlen byte strings: zarr.h "Data
 * types"); on failure nothing stays allocated.
 *
 * NULL strings (docs/FORMAT.md "NULL strings"): the layout has no null item (numcodecs writes None as
 * ""), so a vlen-utf8 chunk holding NULL pointers is the items (each NULL one as an empty string) followed
 * by a trailer: the 4 bytes "H5ZN" and a bitmap of ceil(count / 8) bytes, bit i (least significant bit
 * first) set when item i is NULL. numcodecs and readers before this one stop after the items and read
 * them as "". A chunk without NULL strings has no trailer, so its bytes are numcodecs' own. Any other
 * bytes after the items are refused.
 */
#include "codec_class.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t null_magic[4] = {'H', '5', 'Z', 'N'};

static int
vlen_encode(const zarr_chain *c, const uint8_t *mem, size_t nelem, zarr_buf *out)
{
    bool     utf8  = c->kind == ZARR_VLEN_UTF8;
    uint64_t total = 4;
    int      rc;
    uint8_t *p;
    bool     nulls = false;

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
            nulls |= !s;
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
    if (nulls)
        total += sizeof null_magic + ((uint64_t)nelem + 7) / 8;
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
    if (nulls) {
        memcpy(p, null_magic, sizeof null_magic);
        p += sizeof null_magic;
        memset(p, 0, (nelem + 7) / 8);
        for (size_t i = 0; i < nelem; i++) {
            const char *s;
            memcpy(&s, mem + i * sizeof s, sizeof s);
            if (!s)
                p[i / 8] |= (uint8_t)(1u << (i % 8));
        }
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
    if (pos < n) {
        /* the NULL-string trailer, and nothing else */
        size_t         nb = (nelem + 7) / 8;
        const uint8_t *bm;
        size_t         at = 4; /* walks the items again for their lengths (checked above) */
        if (!utf8 || n - pos != sizeof null_magic + nb || memcmp(enc + pos, null_magic, sizeof null_magic))
            ZARR_FAIL(ZARR_ECODEC, "%s: %zu unexpected bytes after the %zu items", name, n - pos, nelem);
        bm = enc + pos + sizeof null_magic;
        for (size_t k = 0; k < nelem; k++) {
            char    *s;
            uint32_t len = zarr__load_le32(enc + at);
            at += 4 + (size_t)len;
            if (!(bm[k / 8] >> (k % 8) & 1))
                continue;
            if (len)
                ZARR_FAIL(ZARR_ECODEC, "%s: item %zu is marked NULL but holds %u bytes", name, k, len);
            memcpy(&s, mem + k * sizeof s, sizeof s);
            free(s);
            s = NULL;
            memcpy(mem + k * sizeof s, &s, sizeof s);
        }
        for (size_t k = nelem; k < nb * 8; k++)
            if (bm[k / 8] >> (k % 8) & 1)
                ZARR_FAIL(ZARR_ECODEC, "%s: the NULL bitmap marks item %zu of %zu", name, k, nelem);
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

void
zarr__vlen_clear(const zarr_chain *c, uint8_t *mem, size_t nelem)
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

static int
vlen_finish(zarr_chain *c, zarr_codec *k, const zarr_dtype *t)
{
    (void)t;
    if (k->cls == &zarr__codec_vlen_utf8 && c->kind != ZARR_VLEN_UTF8)
        return zarr_error(ZARR_EMETA, "codec 'vlen-utf8' needs the string data type");
    if (k->cls == &zarr__codec_vlen_bytes && c->kind != ZARR_VLEN_BYTES)
        return zarr_error(ZARR_EMETA, "codec 'vlen-bytes' needs the variable-length bytes data type");
    return ZARR_OK;
}

static int
vlen_a2b_encode(const zarr_chain *c, const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *mem,
                size_t nelem, const uint64_t *shape, zarr_buf *out)
{
    (void)k, (void)ctx, (void)shape;
    return vlen_encode(c, mem, nelem, out);
}

static int
vlen_a2b_decode(const zarr_chain *c, const zarr_codec *k, zarr_codec_ctx *ctx, const uint8_t *enc, size_t n,
                uint8_t *mem, size_t nelem, const uint64_t *shape)
{
    (void)k, (void)ctx, (void)shape;
    return vlen_decode(c, enc, n, mem, nelem);
}

const zarr__codec_class zarr__codec_vlen_utf8 = {
    .v3name     = "vlen-utf8",
    .v2id       = "vlen-utf8",
    .stage      = ZARR__STAGE_A2B,
    .a2b_finish = vlen_finish,
    .a2b_encode = vlen_a2b_encode,
    .a2b_decode = vlen_a2b_decode,
};

const zarr__codec_class zarr__codec_vlen_bytes = {
    .v3name     = "vlen-bytes",
    .v2id       = "vlen-bytes",
    .stage      = ZARR__STAGE_A2B,
    .a2b_finish = vlen_finish,
    .a2b_encode = vlen_a2b_encode,
    .a2b_decode = vlen_a2b_decode,
};
