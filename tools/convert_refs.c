/*
 * convert_refs.c: the reference writer of `h5zarr-convert --refs` (convert_refs.h). Walks an HDF5 or netCDF-4
 * file with HDF5's native library and writes, as it goes, kerchunk-style reference JSON (version 1): for
 * every group a `.zgroup` and `.zattrs`, for every dataset a zarr v2 `.zarray` (dtype, shape, chunks, the
 * filter pipeline as numcodecs codecs, the fill value) and `.zattrs` (its attributes and its dimension
 * names as `_ARRAY_DIMENSIONS`), and for every stored chunk `[url, offset, length]`, from H5Dchunk_iter's
 * addresses (contiguous data is one chunk; compact data and chunks up to --inline bytes are inlined as
 * "base64:..."). No chunk is decoded: the bytes stay where they are. Output is streamed, so memory does
 * not grow with the number of chunks. What references can't express (variable-length data in chunks,
 * filters without a zarr codec, chunks that skipped a filter, types zarr v2 has no dtype for) is listed
 * on stderr, object by object, and left out. Format: docs/FORMAT.md ("Reference stores").
 */
#include "convert_refs.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_RANK 32

/* ---- a growable string ------------------------------------------------------------------------------ */
typedef struct sbuf {
    char  *p;
    size_t n, cap;
    bool   oom;
} sbuf;

static void
sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char  *p;
        while (cap < b->n + n + 1)
            cap *= 2;
        if (!(p = realloc(b->p, cap))) {
            b->oom = true;
            return;
        }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void
sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void
sb_fmt(sbuf *b, const char *fmt, ...)
{
    char    tmp[512];
    va_list ap;
    int     k;
    va_start(ap, fmt);
    k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof tmp)
        b->oom = true;
    else
        sb_add(b, tmp, (size_t)k);
}

/* The length of the valid UTF-8 sequence at `s` (at most `n` bytes), 0 if it is not one. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
    size_t k = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
    if (k == 0 || k > n)
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return k;
}

/* `s` (n bytes) as a JSON string literal, quotes included. Valid UTF-8 passes through; a byte that is
 * not part of a valid sequence becomes U+FFFD (the replacement character), so the document stays valid
 * UTF-8. */
static void
sb_json_str(sbuf *b, const char *s, size_t n)
{
    sb_add(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        size_t        k;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            sb_add(b, e, 2);
        }
        else if (c < 0x20)
            sb_fmt(b, "\\u%04x", c);
        else if (c < 0x80)
            sb_add(b, (const char *)&s[i], 1);
        else if ((k = utf8_len((const unsigned char *)s + i, n - i)) > 0) {
            sb_add(b, s + i, k);
            i += k - 1;
        }
        else
            sb_str(b, "\\ufffd"); /* as netCDF4-python decodes such bytes */
    }
    sb_add(b, "\"", 1);
}

static void
sb_base64(sbuf *b, const unsigned char *d, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char              q[4];
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0) |
                     (i + 2 < n ? (unsigned)d[i + 2] : 0);
        q[0] = tab[v >> 18 & 63], q[1] = tab[v >> 12 & 63];
        q[2] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        q[3] = i + 2 < n ? tab[v & 63] : '=';
        sb_add(b, q, 4);
    }
}

static void
sb_double(sbuf *b, double v)
{
    if (isnan(v))
        sb_str(b, "NaN");
    else if (isinf(v))
        sb_str(b, v > 0 ? "Infinity" : "-Infinity");
    else
        sb_fmt(b, "%.17g", v);
}

/* ---- the writer's state ----------------------------------------------------------------------------- */
typedef struct rw {
    const char *prog;
    FILE       *out;
    int         fd;    /* the source, for inlined bytes */
    uint64_t    fsize; /* its size: every range is checked against it */
    uint64_t    base;  /* added to H5Dchunk_iter's addresses: the user block before HDF5 1.14.4, else 0 */
    size_t      inline_max;
    sbuf        url;   /* the source's URL as a JSON literal */
    sbuf        line;  /* scratch for one entry */
    bool        first; /* no entry written yet */
    bool        quiet;
    bool        failed;   /* an error (not an omission): the output is dropped */
    unsigned    left_out; /* objects or attributes listed as not referenced */
    uint64_t    nchunks, ninline, nfill;
    hid_t       file;
} rw;

static void
left_out(rw *w, const char *obj, const char *fmt, ...)
{
    va_list ap;
    w->left_out++;
    fprintf(stderr, "%s: not referenced: /%s: ", w->prog, obj);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void
fail(rw *w, const char *fmt, ...)
{
    va_list ap;
    w->failed = true;
    fprintf(stderr, "%s: ", w->prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Writes the entry `key`: `value_json` (a JSON value, already formatted). */
static void
emit(rw *w, const char *key, const char *value_json, size_t n)
{
    w->line.n = 0;
    sb_str(&w->line, w->first ? "\n" : ",\n");
    sb_json_str(&w->line, key, strlen(key));
    sb_add(&w->line, ":", 1);
    if (w->line.oom || fwrite(w->line.p, 1, w->line.n, w->out) != w->line.n ||
        fwrite(value_json, 1, n, w->out) != n)
        fail(w, "can't write the reference file: %s", w->line.oom ? "out of memory" : strerror(errno));
    w->first = false;
}

/* A metadata document `doc` (JSON text) as the inline value of `key`. */
static void
emit_doc(rw *w, const char *key, const sbuf *doc)
{
    sbuf v = {0};
    if (doc->oom)
        fail(w, "out of memory");
    sb_json_str(&v, doc->p, doc->n);
    if (v.oom)
        fail(w, "out of memory");
    else
        emit(w, key, v.p, v.n);
    free(v.p);
}

/* `n` bytes at `off` of the source: a range [url, off, n], or inlined (base64) when small. */
static void
emit_range(rw *w, const char *obj, const char *key, uint64_t off, uint64_t n)
{
    sbuf v = {0};
    if (off > w->fsize || n > w->fsize - off) {
        fail(w, "/%s: chunk '%s' at %llu+%llu lies past the end of the file (%llu bytes)", obj, key,
             (unsigned long long)off, (unsigned long long)n, (unsigned long long)w->fsize);
        return;
    }
    if (n <= w->inline_max) {
        unsigned char buf[4096];
        if (n > sizeof buf || pread(w->fd, buf, (size_t)n, (off_t)off) != (ssize_t)n) {
            fail(w, "/%s: can't read chunk '%s': %s", obj, key, strerror(errno));
            return;
        }
        sb_str(&v, "\"base64:");
        sb_base64(&v, buf, (size_t)n);
        sb_str(&v, "\"");
        w->ninline++;
    }
    else {
        sb_add(&v, "[", 1);
        sb_add(&v, w->url.p, w->url.n);
        sb_fmt(&v, ",%llu,%llu]", (unsigned long long)off, (unsigned long long)n);
    }
    w->nchunks++;
    if (v.oom)
        fail(w, "out of memory");
    else
        emit(w, key, v.p, v.n);
    free(v.p);
}

/* ---- types ------------------------------------------------------------------------------------------ */
/* The zarr v2 dtype of the HDF5 file type `t` (a simple one: numbers, fixed strings, opaque), appended to
 * `b` as a JSON string; false (with `why` set) when there is none. */
static bool
simple_dtype(hid_t t, sbuf *b, const char **why)
{
    H5T_class_t c  = H5Tget_class(t);
    size_t      sz = H5Tget_size(t);
    char        bo = H5Tget_order(t) == H5T_ORDER_BE ? '>' : '<';
    if (c == H5T_ENUM) {
        hid_t base = H5Tget_super(t);
        bool  ok   = base >= 0 && simple_dtype(base, b, why);
        H5Tclose(base);
        return ok;
    }
    if (sz == 1)
        bo = '|';
    if (c == H5T_INTEGER && (sz == 1 || sz == 2 || sz == 4 || sz == 8)) {
        sb_fmt(b, "\"%c%c%zu\"", bo, H5Tget_sign(t) == H5T_SGN_NONE ? 'u' : 'i', sz);
        return true;
    }
    if (c == H5T_FLOAT && (sz == 2 || sz == 4 || sz == 8)) {
        sb_fmt(b, "\"%cf%zu\"", bo, sz);
        return true;
    }
    if (c == H5T_STRING && !H5Tis_variable_str(t)) {
        sb_fmt(b, "\"|S%zu\"", sz);
        return true;
    }
    if (c == H5T_OPAQUE) {
        sb_fmt(b, "\"|V%zu\"", sz);
        return true;
    }
    *why = c == H5T_STRING || c == H5T_VLEN
               ? "variable-length data in chunks (references hold only byte ranges)"
           : c == H5T_REFERENCE ? "object or region references (no zarr dtype)"
                                : "a datatype zarr v2 has no dtype for";
    return false;
}

/* The dtype of `t`: a simple one, or a packed compound of simple members as a structured dtype. */
static bool
zarr_dtype(hid_t t, sbuf *b, const char **why)
{
    int    n;
    size_t at = 0;
    if (H5Tget_class(t) != H5T_COMPOUND)
        return simple_dtype(t, b, why);
    n = H5Tget_nmembers(t);
    sb_add(b, "[", 1);
    for (int i = 0; i < n; i++) {
        hid_t mt   = H5Tget_member_type(t, (unsigned)i);
        char *name = H5Tget_member_name(t, (unsigned)i);
        bool  ok   = mt >= 0 && name && H5Tget_member_offset(t, (unsigned)i) == at;
        if (ok) {
            sb_str(b, i ? ",[" : "[");
            sb_json_str(b, name, strlen(name));
            sb_add(b, ",", 1);
            ok = simple_dtype(mt, b, why);
            sb_add(b, "]", 1);
            at += H5Tget_size(mt);
        }
        else
            *why = "a compound type with padding between its members (zarr v2 dtypes are packed)";
        H5free_memory(name);
        if (mt >= 0)
            H5Tclose(mt);
        if (!ok)
            return false;
    }
    sb_add(b, "]", 1);
    if (at != H5Tget_size(t)) {
        *why = "a compound type with padding at its end (zarr v2 dtypes are packed)";
        return false;
    }
    return true;
}

/* One value of the simple numeric type `t` at `p` as a JSON number (NaN and infinities as zarr-python
 * writes them); false when `t` is not a number. */
static bool
json_number(hid_t t, const unsigned char *p, sbuf *b)
{
    H5T_class_t   c  = H5Tget_class(t);
    size_t        sz = H5Tget_size(t);
    unsigned char v[8];
    bool          be = H5Tget_order(t) == H5T_ORDER_BE;
    if (c == H5T_ENUM) {
        hid_t base = H5Tget_super(t);
        bool  ok   = base >= 0 && json_number(base, p, b);
        H5Tclose(base);
        return ok;
    }
    if ((c != H5T_INTEGER && c != H5T_FLOAT) || sz > 8 || sz == 0)
        return false;
    for (size_t i = 0; i < sz; i++) /* to the machine's order (little-endian hosts) */
        v[i] = be ? p[sz - 1 - i] : p[i];
    if (c == H5T_INTEGER) {
        uint64_t u = 0;
        for (size_t i = 0; i < sz; i++)
            u |= (uint64_t)v[i] << (8 * i);
        if (H5Tget_sign(t) != H5T_SGN_NONE && sz < 8 && (u >> (8 * sz - 1)) & 1)
            u |= ~(uint64_t)0 << (8 * sz);
        if (H5Tget_sign(t) != H5T_SGN_NONE)
            sb_fmt(b, "%lld", (long long)u);
        else
            sb_fmt(b, "%llu", (unsigned long long)u);
        return true;
    }
    if (sz == 4) {
        float f;
        memcpy(&f, v, 4);
        sb_double(b, f);
        return true;
    }
    if (sz == 8) {
        double d;
        memcpy(&d, v, 8);
        sb_double(b, d);
        return true;
    }
    return false; /* half floats: the caller writes base64 */
}

/* ---- attributes ------------------------------------------------------------------------------------- */
/* The netCDF-4 and dimension-scale bookkeeping that zarr expresses otherwise (dimension names,
 * fill_value) or not at all. */
static bool
skipped_attr(const char *name, bool is_scale)
{
    static const char *const always[] = {"DIMENSION_LIST",      "REFERENCE_LIST", "_Netcdf4Dimid",
                                         "_Netcdf4Coordinates", "_NCProperties",  "_nc3_strict",
                                         "_SuperblockVersion",  "_IsNetcdf4",     "_FillValue"};
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
        if (strcmp(name, always[i]) == 0)
            return true;
    return is_scale && (strcmp(name, "CLASS") == 0 || strcmp(name, "NAME") == 0);
}

/* A string of `n` bytes without its trailing NULs (and spaces for space-padded strings). */
static size_t
str_len(const char *s, size_t n, bool spaces)
{
    while (n > 0 && (s[n - 1] == '\0' || (spaces && s[n - 1] == ' ')))
        n--;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\0')
            return i;
    return n;
}

/* The value of attribute `a` (n elements of file type `t`) as JSON in `b`: one element as a scalar,
 * more as a list. false (why set) for types JSON attributes can't hold here. */
static bool
attr_value(hid_t a, hid_t t, hsize_t n, sbuf *b, const char **why)
{
    H5T_class_t    c  = H5Tget_class(t);
    size_t         sz = H5Tget_size(t);
    bool           ok = true, vstr = c == H5T_STRING && H5Tis_variable_str(t) > 0;
    hid_t          mt  = -1;
    unsigned char *buf = NULL;

    if (c != H5T_INTEGER && c != H5T_FLOAT && c != H5T_ENUM && c != H5T_STRING) {
        *why = "an attribute type other than numbers and strings";
        return false;
    }
    if (n > (1u << 24) || !(buf = calloc(n ? n : 1, vstr ? sizeof(char *) : sz))) {
        *why = "too large";
        return false;
    }
    mt = vstr ? H5Tcopy(t) : H5Tcopy(t); /* the stored form: numbers are decoded by json_number */
    if (mt < 0 || H5Aread(a, mt, buf) < 0) {
        *why = "can't be read";
        ok   = false;
        goto done;
    }
    if (n != 1)
        sb_add(b, "[", 1);
    for (hsize_t i = 0; i < n && ok; i++) {
        if (i)
            sb_add(b, ",", 1);
        if (vstr) {
            const char *s = ((char **)buf)[i];
            sb_json_str(b, s ? s : "", s ? strlen(s) : 0);
        }
        else if (c == H5T_STRING) {
            const char *s = (const char *)buf + i * sz;
            sb_json_str(b, s, str_len(s, sz, H5Tget_strpad(t) == H5T_STR_SPACEPAD));
        }
        else if (!json_number(t, buf + i * sz, b)) {
            *why = "a number type JSON can't hold exactly (half floats, wide integers)";
            ok   = false;
        }
    }
    if (n != 1)
        sb_add(b, "]", 1);
    if (vstr) {
        hid_t sp = H5Aget_space(a);
        H5Treclaim(mt, sp, H5P_DEFAULT, buf);
        H5Sclose(sp);
    }
done:
    if (mt >= 0)
        H5Tclose(mt);
    free(buf);
    return ok;
}

typedef struct attr_ud {
    rw         *w;
    const char *obj;
    sbuf       *doc;
    bool        is_scale;
    int         count;
} attr_ud;

static herr_t
attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *op)
{
    attr_ud    *u = op;
    hid_t       a = -1, t = -1, sp = -1;
    const char *why = NULL;
    sbuf        v   = {0};
    hssize_t    n;
    (void)info;
    if (skipped_attr(name, u->is_scale))
        return 0;
    if ((a = H5Aopen(loc, name, H5P_DEFAULT)) < 0 || (t = H5Aget_type(a)) < 0 || (sp = H5Aget_space(a)) < 0)
        why = "can't be opened";
    else if (H5Sget_simple_extent_type(sp) == H5S_NULL && H5Tget_class(t) == H5T_STRING)
        sb_str(&v, "\"\""); /* netCDF's empty text attribute */
    else if (H5Sget_simple_extent_type(sp) == H5S_NULL)
        why = "an empty (null) dataspace";
    else if ((n = H5Sget_simple_extent_npoints(sp)) >= 0)
        (void)attr_value(a, t, (hsize_t)n, &v, &why);
    if (!why) {
        sb_str(u->doc, u->count++ ? "," : "");
        sb_json_str(u->doc, name, strlen(name));
        sb_add(u->doc, ":", 1);
        sb_add(u->doc, v.p ? v.p : "null", v.p ? v.n : 4);
    }
    else
        left_out(u->w, u->obj, "attribute '%s': %s", name, why);
    free(v.p);
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    return 0;
}

/* The attributes of `obj` into `doc` as JSON members (no braces); `extra` (NULL or JSON members)
 * follows them. */
static void
attrs_doc(rw *w, hid_t obj, const char *name, bool is_scale, const char *extra, sbuf *doc)
{
    attr_ud u = {w, name, doc, is_scale, 0};
    sb_add(doc, "{", 1);
    if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, NULL, attr_cb, &u) < 0)
        left_out(w, name, "its attributes can't be listed");
    if (extra) {
        sb_str(doc, u.count ? "," : "");
        sb_str(doc, extra);
    }
    sb_add(doc, "}", 1);
}

/* `prefix` + "/" + `leaf` ("" prefix: the root), malloc'ed */
static char *
key_of(const char *prefix, const char *leaf)
{
    size_t n = strlen(prefix) + strlen(leaf) + 2;
    char  *k = malloc(n);
    if (k)
        snprintf(k, n, "%s%s%s", prefix, *prefix ? "/" : "", leaf);
    return k;
}

static void
emit_meta(rw *w, const char *prefix, const char *leaf, const sbuf *doc)
{
    char *k = key_of(prefix, leaf);
    if (!k)
        fail(w, "out of memory");
    else
        emit_doc(w, k, doc);
    free(k);
}

static void
do_group(rw *w, hid_t g, const char *name)
{
    sbuf doc = {0};
    sb_str(&doc, "{\"zarr_format\":2}");
    emit_meta(w, name, ".zgroup", &doc);
    doc.n = 0;
    attrs_doc(w, g, name, false, NULL, &doc);
    emit_meta(w, name, ".zattrs", &doc);
    free(doc.p);
}

/* ---- datasets --------------------------------------------------------------------------------------- */
typedef struct dset {
    rw            *w;
    const char    *name;
    int            rank;
    hsize_t        shape[MAX_RANK], chunk[MAX_RANK];
    uint64_t       trim;     /* bytes cut off each chunk's end (fletcher32's checksum) */
    uint64_t       nstored;  /* chunks referenced */
    uint64_t       nskipped; /* chunks that skipped a filter */
    sbuf           key;
    uint64_t       ngrid;   /* chunks of the grid (0: too many to track) */
    unsigned char *stored;  /* a bit per chunk of the grid: referenced */
    uint64_t       nfilled; /* chunks written as fill chunks */
} dset;

/* The numcodecs codec of filter `id` (with its cd_values) into `c`; false when there is none. `comp`:
 * whether it compresses (may be zarr v2's compressor). */
static bool
codec_of(H5Z_filter_t id, const unsigned *cd, size_t ncd, size_t elsize, sbuf *c, bool *comp)
{
    static const char *const cn[] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};
    *comp                         = true;
    if (id == H5Z_FILTER_DEFLATE)
        sb_fmt(c, "{\"id\":\"zlib\",\"level\":%u}", ncd ? cd[0] : 6);
    else if (id == H5Z_FILTER_SHUFFLE)
        sb_fmt(c, "{\"elementsize\":%zu,\"id\":\"shuffle\"}", elsize), *comp = false;
    else if (id == H5Z_FILTER_FLETCHER32)
        sb_str(c, "{\"id\":\"fletcher32\"}"), *comp = false;
    else if (id == 32015) /* zstd */
        sb_fmt(c, "{\"id\":\"zstd\",\"level\":%d}", ncd ? (int)cd[0] : 3);
    else if (id == 307) /* bzip2 */
        sb_fmt(c, "{\"id\":\"bz2\",\"level\":%u}", ncd && cd[0] >= 1 && cd[0] <= 9 ? cd[0] : 9);
    else if (id == 32001 && ncd >= 7 && cd[6] <= 5 && cd[6] != 3 && cd[5] <= 2) /* blosc */
        sb_fmt(c, "{\"blocksize\":0,\"clevel\":%u,\"cname\":\"%s\",\"id\":\"blosc\",\"shuffle\":%u}", cd[4],
               cn[cd[6]], cd[5]);
    else if (id == 32004) /* lz4: HDF5's framing, the connector's hdf5_lz4 codec */
        sb_fmt(c, "{\"blocksize\":%u,\"id\":\"hdf5_lz4\"}", ncd ? cd[0] : 0);
    else if (id == 32000) /* lzf: h5py's filter, the connector's lzf codec */
        sb_str(c, "{\"id\":\"lzf\"}");
    else
        return false;
    return true;
}

/* The zarr filters and compressor of the dcpl's pipeline into `filters` and `compressor` (JSON): the
 * last filter is the compressor when it compresses, the others are filters in pipeline order. A
 * fletcher32 that is the last filter (or the only one) becomes `trim` instead: its 4 checksum bytes are
 * left out of each range, so readers without the codec read the data (unverified). `note` is set when
 * a codec is one numcodecs 0.11 lacks. false (why set) for a filter without a zarr codec. */
static bool
map_filters(hid_t dcpl, size_t elsize, sbuf *filters, sbuf *compressor, uint64_t *trim, const char **why,
            const char **note)
{
    int  n = H5Pget_nfilters(dcpl), nf = 0;
    sbuf last = {0};
    bool ok = true, last_is_comp = false;
    *trim = 0;
    sb_add(filters, "[", 1);
    for (int i = 0; i < n && ok; i++) {
        unsigned     flags, cd[32];
        size_t       ncd       = 32;
        char         fname[64] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof fname, fname, NULL);
        sbuf         c  = {0};
        bool         comp;
        if (id == H5Z_FILTER_FLETCHER32 && (i == n - 1 || n == 1)) {
            *trim = 4;
            continue;
        }
        if (!codec_of(id, cd, ncd, elsize, &c, &comp)) {
            static char msg[160];
            snprintf(msg, sizeof msg, "filter %d ('%s'): no zarr codec holds its bytes", (int)id, fname);
            *why = msg;
            ok   = false;
            break;
        }
        if (id == H5Z_FILTER_FLETCHER32 || id == 32004 || id == 32000)
            *note = id == H5Z_FILTER_FLETCHER32
                        ? "fletcher32 inside the pipeline: numcodecs 0.11 has no such codec"
                        : "lz4 or lzf: h5zarr's codecs (hdf5_lz4, lzf), not numcodecs'";
        if (last.p) { /* the previous one was not last: a filter */
            sb_str(filters, nf++ ? "," : "");
            sb_add(filters, last.p, last.n);
        }
        free(last.p);
        last         = c;
        last_is_comp = comp;
    }
    if (ok && last.p && !last_is_comp) {
        sb_str(filters, nf++ ? "," : "");
        sb_add(filters, last.p, last.n);
    }
    sb_str(compressor, ok && last.p && last_is_comp ? "" : "null");
    if (ok && last.p && last_is_comp)
        sb_add(compressor, last.p, last.n);
    free(last.p);
    sb_add(filters, "]", 1);
    if (nf == 0) {
        filters->n = 0;
        sb_str(filters, "null");
    }
    return ok;
}

static void
chunk_key(dset *d, const hsize_t *offset)
{
    d->key.n = 0;
    sb_str(&d->key, d->name);
    sb_str(&d->key, *d->name ? "/" : "");
    if (d->rank == 0)
        sb_add(&d->key, "0", 1);
    for (int i = 0; i < d->rank; i++)
        sb_fmt(&d->key, i ? ".%llu" : "%llu", (unsigned long long)(offset[i] / d->chunk[i]));
}

static int
chunk_cb(const hsize_t *offset, unsigned filter_mask, haddr_t addr, hsize_t size, void *op)
{
    dset *d = op;
    if (filter_mask != 0) {
        d->nskipped++;
        return 0;
    }
    chunk_key(d, offset);
    if (d->stored) {
        uint64_t lin = 0;
        for (int i = 0; i < d->rank; i++)
            lin = lin * ((d->shape[i] + d->chunk[i] - 1) / d->chunk[i]) + offset[i] / d->chunk[i];
        if (lin < d->ngrid)
            d->stored[lin / 8] |= (unsigned char)(1u << (lin % 8));
    }
    if (size < d->trim || addr == HADDR_UNDEF)
        fail(d->w, "/%s: chunk '%s' has a bad address or size", d->name, d->key.p);
    else
        emit_range(d->w, d->name, d->key.p, d->w->base + addr, size - d->trim);
    d->nstored++;
    return d->w->failed ? -1 : 0;
}

/* ---- chunks that are not stored ---------------------------------------------------------------------- */
/* A chunk HDF5 never wrote reads as the fill value. Readers of references may not find such a key
 * (fsspec 2022.11 raises on a missing one), so every chunk that is not stored is written as an inline
 * chunk of fill values, encoded by the dataset's own codecs: none, shuffle and zlib (the netCDF-4
 * pipelines). The encoded chunk is made once per dataset. Other pipelines keep missing keys (noted). */
#define FILL_CHUNK_MAX (16u << 20)

/* The fill chunk of `d` encoded for its pipeline, as a JSON value ("base64:..."), into `v`; false
 * (why set) when it can't be made. */
static bool
fill_chunk(dset *d, hid_t dcpl, hid_t ftype, sbuf *v, const char **why)
{
    size_t         el = H5Tget_size(ftype), n = el, zn;
    unsigned char *raw = NULL, *tmp = NULL, *z = NULL;
    int            nf = H5Pget_nfilters(dcpl), level = -1;
    size_t         shuffle = 0;
    bool           ok      = false;
    for (int i = 0; i < d->rank; i++)
        n = d->chunk[i] && n > SIZE_MAX / d->chunk[i] ? SIZE_MAX : n * d->chunk[i];
    *why = "chunks larger than 16 MiB";
    if (n > FILL_CHUNK_MAX || !(raw = malloc(n ? n : 1)) || !(tmp = malloc(n ? n : 1)))
        goto done;
    memset(tmp, 0, el);
    if (H5Pget_fill_value(dcpl, ftype, tmp) < 0)
        memset(tmp, 0, el);
    for (size_t i = 0; i + el <= n; i += el)
        memcpy(raw + i, tmp, el);
    for (int i = 0; i < nf; i++) {
        unsigned     flags, cd[8];
        size_t       ncd = 8;
        H5Z_filter_t id  = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, 0, NULL, NULL);
        if (id == H5Z_FILTER_SHUFFLE && level < 0 && !shuffle)
            shuffle = el;
        else if (id == H5Z_FILTER_DEFLATE && level < 0)
            level = ncd ? (int)cd[0] : 6;
        else if (!(id == H5Z_FILTER_FLETCHER32 && d->trim)) {
            *why = "a pipeline other than shuffle and deflate";
            goto done;
        }
    }
    if (shuffle > 1) { /* HDF5's byte shuffle: byte j of every element, for each j */
        size_t ne = n / el;
        for (size_t e = 0; e < ne; e++)
            for (size_t j = 0; j < el; j++)
                tmp[j * ne + e] = raw[e * el + j];
        memcpy(raw, tmp, ne * el);
    }
    if (level >= 0) {
        uLongf zl = compressBound((uLong)n);
        if (!(z = malloc(zl)) || compress2(z, &zl, raw, (uLong)n, level > 9 ? 9 : level) != Z_OK) {
            *why = "zlib failed";
            goto done;
        }
        zn = zl;
    }
    sb_str(v, "\"base64:");
    sb_base64(v, z ? z : raw, z ? zn : n);
    sb_str(v, "\"");
    ok = !v->oom;
done:
    free(raw), free(tmp), free(z);
    return ok;
}

/* Writes the fill chunk under every key of the grid that no stored chunk took. */
static void
fill_missing(dset *d, hid_t dcpl, hid_t ftype)
{
    sbuf        v   = {0};
    const char *why = NULL;
    hsize_t     off[MAX_RANK];
    uint64_t    nmiss = 0;
    if (!d->stored || d->nstored == d->ngrid)
        return;
    if (!fill_chunk(d, dcpl, ftype, &v, &why)) {
        fprintf(stderr,
                "%s: note: /%s: %llu chunks are not stored and not written as fill chunks (%s): "
                "readers must treat missing keys as fill (fsspec 2022.11 fails)\n",
                d->w->prog, d->name, (unsigned long long)(d->ngrid - d->nstored), why);
        free(v.p);
        return;
    }
    for (uint64_t lin = 0; lin < d->ngrid && !d->w->failed; lin++) {
        uint64_t r = lin;
        if (d->stored[lin / 8] & (1u << (lin % 8)))
            continue;
        for (int i = d->rank - 1; i >= 0; i--) {
            uint64_t k = (d->shape[i] + d->chunk[i] - 1) / d->chunk[i];
            off[i]     = (r % k) * d->chunk[i];
            r /= k;
        }
        chunk_key(d, off);
        emit(d->w, d->key.p, v.p, v.n);
        nmiss++;
    }
    d->w->nfill += nmiss;
    d->nfilled = nmiss;
    free(v.p);
}

/* The dataset's chunks: chunked (H5Dchunk_iter), contiguous (one range) or compact (inlined). */
static void
dset_chunks(dset *d, hid_t ds, H5D_layout_t layout, hid_t ftype)
{
    hsize_t zero[MAX_RANK] = {0};
    if (layout == H5D_CHUNKED) {
        if (H5Dchunk_iter(ds, H5P_DEFAULT, chunk_cb, d) < 0 && !d->w->failed)
            fail(d->w, "/%s: can't list its chunks", d->name);
        if (d->nskipped)
            left_out(d->w, d->name,
                     "%llu chunks skipped a filter of the pipeline (H5Dwrite_chunk's filter "
                     "mask); their bytes are not in the pipeline's form",
                     (unsigned long long)d->nskipped);
    }
    else if (layout == H5D_CONTIGUOUS) {
        haddr_t a = H5Dget_offset(ds);
        if (a != HADDR_UNDEF) { /* else never written: all fill */
            chunk_key(d, zero);
            emit_range(d->w, d->name, d->key.p, a, H5Dget_storage_size(ds)); /* counts the user block */
            d->nstored++;
            if (d->stored)
                d->stored[0] |= 1;
        }
    }
    else if (layout == H5D_COMPACT) {
        hsize_t        n = H5Dget_storage_size(ds);
        unsigned char *b = malloc(n ? n : 1);
        sbuf           v = {0};
        if (!b || H5Dread(ds, ftype, H5S_ALL, H5S_ALL, H5P_DEFAULT, b) < 0)
            fail(d->w, "/%s: can't read its compact data", d->name);
        else {
            chunk_key(d, zero);
            sb_str(&v, "\"base64:");
            sb_base64(&v, b, n);
            sb_str(&v, "\"");
            emit(d->w, d->key.p, v.p, v.n);
            d->w->ninline++, d->w->nchunks++, d->nstored++;
            if (d->stored)
                d->stored[0] |= 1;
        }
        free(v.p);
        free(b);
    }
}

typedef struct scale_ud {
    char name[256];
} scale_ud;

static herr_t
scale_cb(hid_t did, unsigned dim, hid_t sid, void *op)
{
    scale_ud *u = op;
    char      path[1024];
    ssize_t   n = H5Iget_name(sid, path, sizeof path);
    (void)did, (void)dim;
    if (n > 0 && (size_t)n < sizeof path) {
        const char *s = strrchr(path, '/');
        snprintf(u->name, sizeof u->name, "%s", s ? s + 1 : path);
    }
    return 1; /* the first scale names the dimension */
}

/* "_ARRAY_DIMENSIONS":[...] for the dataset: a dimension scale is its own dimension; else the first
 * scale attached to each dimension (netCDF-4: the dimension's name), or phony_dim_<i>. */
static void
dim_names(dset *d, hid_t ds, bool is_scale, sbuf *out)
{
    const char *leaf = strrchr(d->name, '/');
    leaf             = leaf ? leaf + 1 : d->name;
    sb_str(out, "\"_ARRAY_DIMENSIONS\":[");
    for (int i = 0; i < d->rank; i++) {
        scale_ud u = {{0}};
        if (is_scale && i == 0)
            snprintf(u.name, sizeof u.name, "%s", leaf);
        else if (!is_scale) {
            H5E_BEGIN_TRY { (void)H5DSiterate_scales(ds, (unsigned)i, NULL, scale_cb, &u); }
            H5E_END_TRY
        }
        if (!u.name[0])
            snprintf(u.name, sizeof u.name, "phony_dim_%d", i);
        sb_str(out, i ? "," : "");
        sb_json_str(out, u.name, strlen(u.name));
    }
    sb_add(out, "]", 1);
}

/* The fill_value of .zarray: the netCDF _FillValue attribute when there is one (what xarray reads from
 * a netCDF file), else null when every chunk is stored (netCDF-4 files without _FillValue: no value is
 * masked, as xarray reads the original), else HDF5's fill value. */
static void
fill_json(dset *d, hid_t ds, hid_t dcpl, hid_t ftype, bool all_stored, sbuf *out)
{
    size_t           sz   = H5Tget_size(ftype);
    unsigned char   *buf  = calloc(1, sz ? sz : 1);
    H5D_fill_value_t st   = H5D_FILL_VALUE_UNDEFINED;
    bool             have = false;
    if (!buf) {
        sb_str(out, "null");
        return;
    }
    if (H5Aexists(ds, "_FillValue") > 0) {
        hid_t a = H5Aopen(ds, "_FillValue", H5P_DEFAULT), at = a >= 0 ? H5Aget_type(a) : -1;
        have = at >= 0 && H5Tequal(at, ftype) > 0 && H5Aread(a, ftype, buf) >= 0;
        if (at >= 0)
            H5Tclose(at);
        if (a >= 0)
            H5Aclose(a);
    }
    if (!have && !all_stored && H5Pfill_value_defined(dcpl, &st) >= 0 && st != H5D_FILL_VALUE_UNDEFINED)
        have = H5Pget_fill_value(dcpl, ftype, buf) >= 0;
    (void)d;
    if (!have)
        sb_str(out, "null");
    else if (!json_number(ftype, buf, out)) {
        sb_str(out, "\"");
        sb_base64(out, buf, sz);
        sb_str(out, "\"");
    }
    free(buf);
}

/* Chunk count of the grid (saturating). */
static uint64_t
grid_size(const dset *d)
{
    uint64_t n = 1;
    for (int i = 0; i < d->rank; i++) {
        uint64_t k = d->shape[i] ? (d->shape[i] + d->chunk[i] - 1) / d->chunk[i] : 0;
        n          = k && n > UINT64_MAX / k ? UINT64_MAX : n * k;
    }
    return n;
}

/* The .zarray of a dataset whose chunks were written. */
static void
dset_meta(dset *d, hid_t ds, hid_t dcpl, hid_t ftype, const sbuf *dtype, const sbuf *filters,
          const sbuf *comp, bool is_scale)
{
    sbuf doc = {0}, dims = {0};
    sb_str(&doc, "{\"chunks\":[");
    for (int i = 0; i < d->rank; i++)
        sb_fmt(&doc, i ? ",%llu" : "%llu", (unsigned long long)d->chunk[i]);
    sb_str(&doc, "],\"compressor\":");
    sb_add(&doc, comp->p, comp->n);
    sb_str(&doc, ",\"dtype\":");
    sb_add(&doc, dtype->p, dtype->n);
    sb_str(&doc, ",\"fill_value\":");
    fill_json(d, ds, dcpl, ftype, d->nstored + d->nfilled == grid_size(d), &doc);
    sb_str(&doc, ",\"filters\":");
    sb_add(&doc, filters->p, filters->n);
    sb_str(&doc, ",\"order\":\"C\",\"shape\":[");
    for (int i = 0; i < d->rank; i++)
        sb_fmt(&doc, i ? ",%llu" : "%llu", (unsigned long long)d->shape[i]);
    sb_str(&doc, "],\"zarr_format\":2}");
    emit_meta(d->w, d->name, ".zarray", &doc);
    doc.n = 0;
    dim_names(d, ds, is_scale, &dims);
    attrs_doc(d->w, ds, d->name, is_scale, dims.p, &doc);
    emit_meta(d->w, d->name, ".zattrs", &doc);
    free(doc.p);
    free(dims.p);
}

/* Whether `ds` is a netCDF dimension without a variable (netCDF-4's placeholder scale: no data). */
static bool
nc_phony_dimension(hid_t ds)
{
    char name[128] = "";
    bool yes       = false;
    H5E_BEGIN_TRY
    {
        yes = H5DSis_scale(ds) > 0 && H5DSget_scale_name(ds, name, sizeof name) > 0 &&
              strncmp(name, "This is a netCDF dimension but not a netCDF variable", 52) == 0;
    }
    H5E_END_TRY
    return yes;
}

/* Checks what references can hold of dataset `ds` (its shape, chunk shape, layout, type and filters
 * into `d`, `dtype`, `filters`, `comp`); NULL, or the reason it is left out. */
static const char *
dset_plan(dset *d, hid_t ds, hid_t sp, hid_t dcpl, hid_t ftype, H5D_layout_t *layout, sbuf *dtype,
          sbuf *filters, sbuf *comp)
{
    const char *why = NULL;
    if (H5Sget_simple_extent_type(sp) == H5S_NULL)
        return "an empty (null) dataspace";
    if ((d->rank = H5Sget_simple_extent_ndims(sp)) < 0 || d->rank > MAX_RANK)
        return "a dataspace of unsupported rank";
    H5Sget_simple_extent_dims(sp, d->shape, NULL);
    *layout = H5Pget_layout(dcpl);
    if (*layout == H5D_VIRTUAL)
        return "a virtual dataset (its data lives in other datasets)";
    if (H5Pget_external_count(dcpl) > 0)
        return "external storage (its data lives in other files)";
    if (!zarr_dtype(ftype, dtype, &why))
        return why;
    if (*layout == H5D_CHUNKED) {
        if (H5Pget_chunk(dcpl, d->rank, d->chunk) != d->rank)
            return "its chunk shape can't be read";
        const char *note = NULL;
        if (!map_filters(dcpl, H5Tget_size(ftype), filters, comp, &d->trim, &why, &note))
            return why;
        if (note)
            fprintf(stderr, "%s: note: /%s: %s (readable through the connector)\n", d->w->prog, d->name,
                    note);
    }
    else {
        for (int i = 0; i < d->rank; i++)
            d->chunk[i] = d->shape[i] ? d->shape[i] : 1;
        sb_str(filters, "null");
        sb_str(comp, "null");
    }
    return NULL;
}

static void
do_dataset(rw *w, hid_t ds, const char *name)
{
    dset         d  = {.w = w, .name = name};
    hid_t        sp = H5Dget_space(ds), dcpl = H5Dget_create_plist(ds), ftype = H5Dget_type(ds);
    H5D_layout_t layout = H5D_LAYOUT_ERROR;
    sbuf         dtype = {0}, filters = {0}, comp = {0};
    const char  *why;
    bool         is_scale;
    if (sp < 0 || dcpl < 0 || ftype < 0)
        why = "can't be opened";
    else if (nc_phony_dimension(ds))
        goto done; /* a netCDF dimension without data: the variables' dimension names carry it */
    else
        why = dset_plan(&d, ds, sp, dcpl, ftype, &layout, &dtype, &filters, &comp);
    if (why) {
        left_out(w, name, "%s", why);
        goto done;
    }
    H5E_BEGIN_TRY { is_scale = H5DSis_scale(ds) > 0; }
    H5E_END_TRY
    d.ngrid = grid_size(&d);
    if (d.ngrid > 0 && d.ngrid <= ((uint64_t)1 << 32) && !(d.stored = calloc(d.ngrid / 8 + 1, 1))) {
        fail(w, "out of memory");
        goto done;
    }
    dset_chunks(&d, ds, layout, ftype);
    if (!w->failed)
        fill_missing(&d, dcpl, ftype);
    if (!w->failed)
        dset_meta(&d, ds, dcpl, ftype, &dtype, &filters, &comp, is_scale);
done:
    free(dtype.p), free(filters.p), free(comp.p), free(d.key.p), free(d.stored);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (sp >= 0)
        H5Sclose(sp);
}

static herr_t
visit_cb(hid_t root, const char *name, const H5O_info2_t *info, void *op)
{
    rw         *w    = op;
    const char *path = strcmp(name, ".") == 0 ? "" : name;
    hid_t       o;
    if (info->type == H5O_TYPE_NAMED_DATATYPE)
        return 0; /* a type, not data: the datasets that use it carry it */
    if ((o = H5Oopen(root, name, H5P_DEFAULT)) < 0) {
        left_out(w, path, "can't be opened");
        return 0;
    }
    if (info->type == H5O_TYPE_GROUP)
        do_group(w, o, path);
    else if (info->type == H5O_TYPE_DATASET)
        do_dataset(w, o, path);
    H5Oclose(o);
    return w->failed ? -1 : 0;
}

/* ---- the command ------------------------------------------------------------------------------------ */
typedef struct opts {
    const char *in, *out, *url;
    long long   inline_max;
    bool        strict, quiet;
} opts;

static int
usage(const char *prog)
{
    fprintf(
        stderr,
        "usage: %s [--inline BYTES] [--url URL] [--strict] [--quiet] IN.h5|IN.nc OUT.json\n"
        "  writes kerchunk-style reference JSON (version 1) for IN: zarr v2 metadata and a byte range of\n"
        "  IN for every chunk (chunks up to --inline bytes, default 100, are inlined).\n"
        "  --url URL  the name the references give IN (default: its absolute path)\n"
        "  --strict   write nothing when something can't be referenced (default: list it, exit 3)\n",
        prog);
    return 2;
}

static int
parse_opts(int argc, char **argv, opts *o)
{
    int npos      = 0;
    o->inline_max = 100;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "--inline") == 0 && i + 1 < argc) {
            o->inline_max = strtoll(argv[++i], &end, 10);
            if (!*argv[i] || *end || o->inline_max < 0 || o->inline_max > 4096)
                return -1;
        }
        else if (strcmp(argv[i], "--url") == 0 && i + 1 < argc)
            o->url = argv[++i];
        else if (strcmp(argv[i], "--strict") == 0)
            o->strict = true;
        else if (strcmp(argv[i], "--refs") == 0)
            continue; /* h5zarr-convert hands its whole command line over */
        else if (strcmp(argv[i], "--quiet") == 0)
            o->quiet = true;
        else if (argv[i][0] == '-' && argv[i][1])
            return -1;
        else if (npos == 0)
            o->in = argv[i], npos++;
        else if (npos == 1)
            o->out = argv[i], npos++;
        else
            return -1;
    }
    return npos == 2 ? 0 : -1;
}

/* Opens the source for the walk: HDF5's native connector (not the zarr one an environment may set),
 * and the same file for the bytes that are inlined. */
static int
open_source(rw *w, const opts *o)
{
    struct stat st;
    hid_t       fapl = H5Pcreate(H5P_FILE_ACCESS), fcpl;
    hsize_t     ub   = 0;
    if (fapl < 0 || H5Pset_vol(fapl, H5VL_NATIVE, NULL) < 0 ||
        (w->file = H5Fopen(o->in, H5F_ACC_RDONLY, fapl)) < 0) {
        fail(w, "can't open '%s' as an HDF5 file", o->in);
        H5Pclose(fapl);
        return -1;
    }
    H5Pclose(fapl);
    if ((fcpl = H5Fget_create_plist(w->file)) >= 0) {
        H5Pget_userblock(fcpl, &ub);
        H5Pclose(fcpl);
    }
    w->base = cv_chunk_addr_base(ub);
    if ((w->fd = open(o->in, O_RDONLY | O_CLOEXEC)) < 0 || fstat(w->fd, &st) != 0) {
        fail(w, "can't open '%s': %s", o->in, strerror(errno));
        return -1;
    }
    w->fsize = (uint64_t)st.st_size;
    return 0;
}

static int
source_url(rw *w, const opts *o)
{
    char *abs = o->url ? NULL : realpath(o->in, NULL);
    if (!o->url && !abs) {
        fail(w, "can't resolve '%s': %s", o->in, strerror(errno));
        return -1;
    }
    sb_json_str(&w->url, o->url ? o->url : abs, strlen(o->url ? o->url : abs));
    free(abs);
    return w->url.oom ? -1 : 0;
}

int
h5zarr_refs_main(int argc, char **argv)
{
    opts  o   = {0};
    rw    w   = {0};
    char *tmp = NULL;
    int   rc  = 1;
    w.prog    = argc > 0 && argv[0] ? argv[0] : "h5zarr-convert --refs";
    w.fd      = -1;
    w.file    = -1;
    w.first   = true;
    if (parse_opts(argc, argv, &o) < 0)
        return usage(w.prog);
    w.inline_max = (size_t)o.inline_max;
    w.quiet      = o.quiet;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (open_source(&w, &o) < 0 || source_url(&w, &o) < 0)
        goto done;
    if (!(tmp = malloc(strlen(o.out) + 32)))
        goto done;
    snprintf(tmp, strlen(o.out) + 32, "%s.tmp%ld", o.out, (long)getpid());
    if (!(w.out = fopen(tmp, "w"))) {
        fail(&w, "can't write '%s': %s", tmp, strerror(errno));
        goto done;
    }
    setvbuf(w.out, NULL, _IOFBF, 1 << 20);
    fputs("{\"version\":1,\"refs\":{", w.out);
    if (H5Ovisit3(w.file, H5_INDEX_NAME, H5_ITER_INC, visit_cb, &w, H5O_INFO_BASIC) < 0 && !w.failed)
        fail(&w, "can't walk the objects of '%s'", o.in);
    fputs("\n}}\n", w.out);
    if (fclose(w.out) != 0 && !w.failed)
        fail(&w, "can't write '%s': %s", tmp, strerror(errno));
    w.out = NULL;
    if (!w.failed && o.strict && w.left_out)
        fail(&w, "%u objects or attributes can't be referenced (--strict): nothing written", w.left_out);
    if (!w.failed && rename(tmp, o.out) != 0)
        fail(&w, "can't rename '%s' to '%s': %s", tmp, o.out, strerror(errno));
    if (!w.failed) {
        rc = w.left_out ? 3 : 0;
        if (!w.quiet)
            fprintf(stderr, "%s: %s: %llu chunks (%llu inlined), %llu fill chunks%s\n", w.prog, o.out,
                    (unsigned long long)w.nchunks, (unsigned long long)w.ninline, (unsigned long long)w.nfill,
                    w.left_out ? ", with the objects listed above left out" : "");
    }
done:
    if (w.out)
        fclose(w.out);
    if (tmp && rc == 1)
        unlink(tmp);
    free(tmp);
    free(w.url.p);
    free(w.line.p);
    if (w.fd >= 0)
        close(w.fd);
    if (w.file >= 0)
        H5Fclose(w.file);
    return rc;
}
