/*
 * config.c: the connector's configuration (config.h, docs/CONFIG.md): the key table, the connector
 * info (h5zarr_info_t: copy, compare, free, to/from string), the config file (top-level keys and
 * `[path GLOB]` rules), resolution by precedence (info over file over defaults), and the helpers that
 * apply settings to the engine, chunk shapes and codec chains.
 *
 * One key table serves the info string and the file: each key has a parser that writes its field of
 * an h5zv_settings, and the field's place (offset, size) so that overlaying one source on another is
 * generic. A source is an overlay: the settings it parsed plus a mask of the keys it set.
 */
#include "h5zv.h"
#include "config.h"
#include "h5zarr/zarr_filters.h"
#include "pointer_parse.h"

#include <json-c/json.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- keys ------------------------------------------------------------------------------------------ */
/* Where a key may be set. */
#define IN_INFO 1u /* connector info string / h5zarr_info_t.options */
#define IN_TOP  2u /* config file, top level ([defaults]) */
#define IN_RULE 4u /* config file, inside a [path GLOB] rule */
#define IN_ALL  (IN_INFO | IN_TOP | IN_RULE)

typedef int (*parse_fn)(const char *val, h5zv_settings *s, char *why, size_t nwhy);

typedef struct key_def {
    const char *name;
    unsigned    where;
    parse_fn    parse;
    size_t      off, size; /* the field of h5zv_settings the key sets (size 0: none, e.g. `config`) */
} key_def;

static int
parse_int(const char *val, long lo, long hi, long *out)
{
    char *end;
    long  v;
    errno = 0;
    v     = strtol(val, &end, 10);
    if (!*val || *end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int
p_version(const char *val, h5zv_settings *s, char *why, size_t n)
{
    long v;
    if (parse_int(val, 2, 3, &v) < 0) {
        snprintf(why, n, "want 2 or 3");
        return -1;
    }
    s->version = (int)v;
    return 0;
}

static int
p_threads(const char *val, h5zv_settings *s, char *why, size_t n)
{
    long v;
    if (parse_int(val, 0, 1024, &v) < 0) {
        snprintf(why, n, "want a number of threads 0..1024 (0: H5ZARR_THREADS, else the cores)");
        return -1;
    }
    s->threads = (int)v;
    return 0;
}

static int
p_create(const char *val, h5zv_settings *s, char *why, size_t n)
{
    if (!strcmp(val, "auto"))
        s->create = H5ZARR_CREATE_AUTO;
    else if (!strcmp(val, "zarr"))
        s->create = H5ZARR_CREATE_ZARR;
    else {
        snprintf(why, n, "want auto or zarr");
        return -1;
    }
    return 0;
}

static int
p_format(const char *val, h5zv_settings *s, char *why, size_t n)
{
    if (!strcmp(val, "zarr"))
        s->format = 1;
    else if (!strcmp(val, "native"))
        s->format = 0;
    else {
        snprintf(why, n, "want zarr or native");
        return -1;
    }
    return 0;
}

static int
p_bool(const char *val, bool *out, char *why, size_t n)
{
    if (!strcmp(val, "1"))
        *out = true;
    else if (!strcmp(val, "0"))
        *out = false;
    else {
        snprintf(why, n, "want 0 or 1");
        return -1;
    }
    return 0;
}

static int
p_write_empty(const char *val, h5zv_settings *s, char *why, size_t n)
{
    return p_bool(val, &s->write_empty_chunks, why, n);
}

static int
p_consolidated(const char *val, h5zv_settings *s, char *why, size_t n)
{
    return p_bool(val, &s->consolidated, why, n);
}

static int
p_durable(const char *val, h5zv_settings *s, char *why, size_t n)
{
    return p_bool(val, &s->durable, why, n);
}

static int
p_legacy_reserved(const char *val, h5zv_settings *s, char *why, size_t n)
{
    return p_bool(val, &s->legacy_reserved, why, n);
}

/* dir | paths | urls | all: what reference stores may read besides their own directory */
static int
p_refs_allow(const char *val, h5zv_settings *s, char *why, size_t n)
{
    static const char *const names[] = {"dir", "paths", "urls", "all"};
    for (int i = 0; i < 4; i++)
        if (strcmp(val, names[i]) == 0) {
            s->refs_allow = (i & 1 ? H5ZV_REFS_PATHS : 0) | (i & 2 ? H5ZV_REFS_URLS : 0);
            return 0;
        }
    snprintf(why, n, "bad value '%s' (want dir, paths, urls or all)", val);
    return -1;
}

/* none | zstd[:level] | zlib[:level] | gzip[:level] | blosc[:cname[:clevel[:shuffle]]] */
static int
p_codec(const char *val, h5zv_settings *s, char *why, size_t n)
{
    char        buf[128], *parts[5] = {0}, *p;
    int         np = 0;
    long        v;
    const char *want = "want none, zstd[:level], zlib[:level], gzip[:level] or "
                       "blosc[:cname[:clevel[:shuffle]]]";

    if (strlen(val) >= sizeof buf)
        goto bad;
    strcpy(buf, val);
    for (p = buf; np < 5;) {
        parts[np++] = p;
        if (!(p = strchr(p, ':')))
            break;
        *p++ = '\0';
    }
    if (p && np == 5)
        goto bad;
    memset(&s->codec, 0, sizeof s->codec);
    if (!strcmp(parts[0], "none") && np == 1)
        s->codec.kind = H5ZV_CODEC_NONE;
    else if (!strcmp(parts[0], "zstd") && np <= 2) {
        s->codec.kind  = H5ZV_CODEC_ZSTD;
        s->codec.level = 3;
        if (np == 2 && parse_int(parts[1], -131072, 22, &v) < 0) {
            snprintf(why, n, "zstd level '%s': want -131072..22", parts[1]);
            return -1;
        }
        if (np == 2)
            s->codec.level = (int)v;
    }
    else if ((!strcmp(parts[0], "zlib") || !strcmp(parts[0], "gzip")) && np <= 2) {
        s->codec.kind  = parts[0][0] == 'z' ? H5ZV_CODEC_ZLIB : H5ZV_CODEC_GZIP;
        s->codec.level = 6;
        if (np == 2 && parse_int(parts[1], 0, 9, &v) < 0) {
            snprintf(why, n, "%s level '%s': want 0..9", parts[0], parts[1]);
            return -1;
        }
        if (np == 2)
            s->codec.level = (int)v;
    }
    else if (!strcmp(parts[0], "blosc") && np <= 4) {
        s->codec.kind    = H5ZV_CODEC_BLOSC;
        s->codec.level   = 5;
        s->codec.shuffle = 1;
        strcpy(s->codec.cname, "zstd");
        if (np >= 2) {
            if (strlen(parts[1]) >= sizeof s->codec.cname ||
                zarr_blosc_check_compressor(parts[1]) != ZARR_OK) {
                snprintf(why, n, "blosc compressor '%s': %s", parts[1],
                         strlen(parts[1]) >= sizeof s->codec.cname ? "name too long" : zarr_errmsg());
                return -1;
            }
            strcpy(s->codec.cname, parts[1]);
        }
        if (np >= 3) {
            if (parse_int(parts[2], 0, 9, &v) < 0) {
                snprintf(why, n, "blosc clevel '%s': want 0..9", parts[2]);
                return -1;
            }
            s->codec.level = (int)v;
        }
        if (np >= 4) {
            int k = zarr_blosc_shuffle_code(parts[3]);
            if (k < 0 && parts[3][0] >= '0' && parts[3][0] < '0' + ZARR_BLOSC_NSHUFFLE && !parts[3][1])
                k = parts[3][0] - '0';
            if (k < 0) {
                snprintf(why, n, "blosc shuffle '%s': want noshuffle, shuffle or bitshuffle (0, 1, 2)",
                         parts[3]);
                return -1;
            }
            s->codec.shuffle = k;
        }
    }
    else
        goto bad;
    return 0;
bad:
    snprintf(why, n, "%s", want);
    return -1;
}

/* A byte count with an optional K, M or G suffix (powers of 1024). */
static int
parse_size(const char *val, uint64_t *out)
{
    char              *end;
    unsigned long long v;
    uint64_t           mul = 1;
    if (!isdigit((unsigned char)*val))
        return -1;
    errno = 0;
    v     = strtoull(val, &end, 10);
    if (errno)
        return -1;
    if (*end == 'K' || *end == 'k')
        mul = 1ull << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mul = 1ull << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mul = 1ull << 30, end++;
    if (*end || v == 0 || v > (UINT64_MAX >> 30))
        return -1;
    *out = (uint64_t)v * mul;
    return 0;
}

/* auto | auto:<bytes> | whole | N[xN...] */
static int
p_chunks(const char *val, h5zv_settings *s, char *why, size_t n)
{
    memset(&s->chunks, 0, sizeof s->chunks);
    s->chunks.target = 1u << 20;
    if (!strcmp(val, "auto")) {
        s->chunks.kind = H5ZV_CHUNKS_AUTO;
        return 0;
    }
    if (!strncmp(val, "auto:", 5)) {
        s->chunks.kind = H5ZV_CHUNKS_AUTO;
        if (parse_size(val + 5, &s->chunks.target) < 0) {
            snprintf(why, n, "auto target '%s': want a byte count > 0, optionally with K, M or G", val + 5);
            return -1;
        }
        return 0;
    }
    if (!strcmp(val, "whole")) {
        s->chunks.kind = H5ZV_CHUNKS_WHOLE;
        return 0;
    }
    s->chunks.kind = H5ZV_CHUNKS_EXPLICIT;
    for (const char *p = val;;) {
        char              *end;
        unsigned long long v;
        if (!isdigit((unsigned char)*p) || s->chunks.ndim == ZARR_MAX_DIMS)
            break;
        errno = 0;
        v     = strtoull(p, &end, 10);
        if (errno || v == 0)
            break;
        s->chunks.shape[s->chunks.ndim++] = v;
        if (!*end)
            return 0;
        if (*end != 'x')
            break;
        p = end + 1;
    }
    snprintf(why, n, "want auto, auto:<bytes>, whole or a chunk shape N[xN...] of 1..%d numbers > 0",
             ZARR_MAX_DIMS);
    return -1;
}

/* shard_bytes: a byte count, optionally with a binary suffix K/KiB, M/MiB, G/GiB (any case); 0 = no
 * sharding. At most 1 TiB: a shard is one store value, written whole. */
static int
p_shard_bytes(const char *val, h5zv_settings *s, char *why, size_t n)
{
    static const struct {
        const char *suffix;
        unsigned    shift;
    } units[] = {{"", 0}, {"k", 10}, {"kib", 10}, {"m", 20}, {"mib", 20}, {"g", 30}, {"gib", 30}};
    char              *end;
    unsigned long long v;
    errno = 0;
    if (isdigit((unsigned char)*val)) {
        v = strtoull(val, &end, 10);
        while (*end == ' ')
            end++; /* "64 MiB" in the file */
        for (size_t i = 0; !errno && i < sizeof units / sizeof units[0]; i++)
            if (!strcasecmp(end, units[i].suffix) && v <= (1ull << (40 - units[i].shift))) {
                s->shard_bytes = (uint64_t)v << units[i].shift;
                return 0;
            }
    }
    snprintf(why, n, "want a byte count 0..1 TiB, optionally with KiB, MiB or GiB (0: no sharding)");
    return -1;
}

/* store, allow_url: a URL prefix ("beside" / "none": no URL). Kept ending in '/'. */
static int
url_prefix(const char *val, const char *none, char *out, char *why, size_t n)
{
    size_t k = strlen(val);
    char   w[200];
    if (!strcmp(val, none)) {
        out[0] = '\0';
        return 0;
    }
    if (k + 2 > H5ZV_URL_PREFIX_MAX) {
        snprintf(why, n, "want a URL prefix of at most %d characters, or %s", H5ZV_URL_PREFIX_MAX - 2, none);
        return -1;
    }
    if (h5zv_pointer_url_check(val, k, 1, w, sizeof w) < 0) {
        snprintf(why, n, "want a URL prefix such as s3://bucket/run42/, or %s: %s", none, w);
        return -1;
    }
    snprintf(out, H5ZV_URL_PREFIX_MAX, "%s%s", val, val[k - 1] == '/' ? "" : "/");
    return 0;
}

static int
p_store(const char *val, h5zv_settings *s, char *why, size_t n)
{
    return url_prefix(val, "beside", s->store, why, n);
}

static int
p_allow_url(const char *val, h5zv_settings *s, char *why, size_t n)
{
    return url_prefix(val, "none", s->allow_url, why, n);
}

#define FIELD(f) offsetof(h5zv_settings, f), sizeof(((h5zv_settings *)0)->f)
/* The keys. Adding one: a field in h5zv_settings, its default in h5zv_config_defaults, a parser, a line
 * here (and docs/CONFIG.md). */
static const key_def keys[] = {
    {"version", IN_ALL, p_version, FIELD(version)},
    {"threads", IN_ALL, p_threads, FIELD(threads)},
    {"create", IN_INFO | IN_TOP, p_create, FIELD(create)},
    {"format", IN_RULE, p_format, FIELD(format)},
    {"codec", IN_ALL, p_codec, FIELD(codec)},
    {"chunks", IN_ALL, p_chunks, FIELD(chunks)},
    {"write_empty_chunks", IN_ALL, p_write_empty, FIELD(write_empty_chunks)},
    {"consolidated", IN_ALL, p_consolidated, FIELD(consolidated)},
    {"legacy_reserved", IN_ALL, p_legacy_reserved, FIELD(legacy_reserved)},
    {"shard_bytes", IN_ALL, p_shard_bytes, FIELD(shard_bytes)},
    {"durable", IN_ALL, p_durable, FIELD(durable)},
    {"store", IN_ALL, p_store, FIELD(store)},
    {"allow_url", IN_ALL, p_allow_url, FIELD(allow_url)},
    {"refs_allow", IN_ALL, p_refs_allow, FIELD(refs_allow)},
    {"config", IN_INFO, NULL, 0, 0},
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* A source's contribution: the settings it parsed and which keys it set. */
typedef struct overlay {
    h5zv_settings s;
    uint32_t      set; /* bit i: keys[i] */
} overlay;

static void
overlay_apply(h5zv_settings *dst, const overlay *o)
{
    for (size_t i = 0; i < NKEYS; i++)
        if ((o->set >> i & 1u) && keys[i].size)
            memcpy((char *)dst + keys[i].off, (const char *)&o->s + keys[i].off, keys[i].size);
}

static const char *
known_keys(unsigned where)
{
    static char buf[256];
    buf[0] = '\0';
    for (size_t i = 0; i < NKEYS; i++)
        if (keys[i].where & where)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", buf[0] ? ", " : "", keys[i].name);
    return buf;
}

static const char *
where_name(unsigned where)
{
    return where == IN_INFO ? "the connector info" : where == IN_TOP ? "the top level" : "a [path] rule";
}

/* Sets `key` = `val` in overlay `o` as source `where` allows. -1 with the reason in `err` (without the
 * source's name, which the caller prefixes). `config` values go to *config (when not NULL). */
static int
overlay_set(overlay *o, unsigned where, const char *key, const char *val, char *err, size_t nerr,
            char *config, size_t nconfig)
{
    char why[256] = "";
    for (size_t i = 0; i < NKEYS; i++) {
        if (strcmp(keys[i].name, key) != 0)
            continue;
        if (!(keys[i].where & where)) {
            snprintf(err, nerr, "key '%s' can't be set in %s%s", key, where_name(where),
                     !strcmp(key, "create")   ? " (a rule routes new paths with format = zarr|native)"
                     : !strcmp(key, "format") ? " (use create = auto|zarr, or a [path GLOB] rule)"
                                              : "");
            return -1;
        }
        if (!keys[i].parse) { /* config */
            if (!*val || strlen(val) >= nconfig) {
                snprintf(err, nerr, "key 'config': bad value '%s' (want a file path)", val);
                return -1;
            }
            if (config)
                strcpy(config, val);
        }
        else if (keys[i].parse(val, &o->s, why, sizeof why) < 0) {
            snprintf(err, nerr, "key '%s': bad value '%s' (%s)", key, val, why);
            return -1;
        }
        o->set |= 1u << i;
        return 0;
    }
    snprintf(err, nerr, "unknown key '%s' (known: %s)", key, known_keys(where));
    return -1;
}

/* ---- errors ---------------------------------------------------------------------------------------- */
/* Pushes the message and prints it once to stderr (a program that hides the error stack learns it). */
static void
config_error(const char *func, int line, const char *name, const char *msg)
{
    static char last[1024];
    char        full[1200];
    snprintf(full, sizeof full, "bad h5zarr configuration (for '%s'): %s", name ? name : "", msg);
    h5zv_err_push(func, line, "%s", full);
    if (strcmp(last, msg) != 0) {
        snprintf(last, sizeof last, "%s", msg);
        fprintf(stderr, "h5zarr: %s\n", full);
    }
}

/* ---- the connector info ------------------------------------------------------------------------------ */
/* Splits info-string text into key=value tokens (separated by blanks, ',' or ';'); calls `fn` for each.
 * Stops at the first failing call or malformed token (err set). */
typedef int (*token_fn)(void *ud, const char *key, const char *val, char *err, size_t nerr);

static int
info_tokens(const char *text, token_fn fn, void *ud, char *err, size_t nerr)
{
    const char *p = text ? text : "";
    while (*p) {
        char        key[64], val[1024];
        const char *t, *eq;
        size_t      k;
        while (isspace((unsigned char)*p) || *p == ',' || *p == ';')
            p++;
        if (!*p)
            break;
        t = p;
        while (*p && !isspace((unsigned char)*p) && *p != ',' && *p != ';')
            p++;
        if (!(eq = memchr(t, '=', (size_t)(p - t))) || eq == t) {
            snprintf(err, nerr, "expected key=value at '%.*s'", (int)(p - t), t);
            return -1;
        }
        if ((k = (size_t)(eq - t)) >= sizeof key || (size_t)(p - eq - 1) >= sizeof val) {
            snprintf(err, nerr, "token '%.*s' too long", (int)(p - t), t);
            return -1;
        }
        memcpy(key, t, k);
        key[k] = '\0';
        memcpy(val, eq + 1, (size_t)(p - eq - 1));
        val[p - eq - 1] = '\0';
        if (fn(ud, key, val, err, nerr) < 0)
            return -1;
    }
    return 0;
}

static int
create_token(void *ud, const char *key, const char *val, char *err, size_t nerr)
{
    (void)err;
    (void)nerr;
    if (!strcmp(key, "create"))
        *(int *)ud = !strcmp(val, "zarr") ? H5ZARR_CREATE_ZARR : H5ZARR_CREATE_AUTO;
    return 0;
}

bool
h5zv_config_info_creates_zarr(const h5zarr_info_t *i)
{
    int  c = H5ZARR_CREATE_UNSET;
    char e[256];
    if (!i)
        return false;
    if (i->create)
        return i->create == H5ZARR_CREATE_ZARR;
    if (info_tokens(i->options, create_token, &c, e, sizeof e) < 0)
        return false; /* a bad info fails the first create/open; here it says nothing */
    return c == H5ZARR_CREATE_ZARR;
}

/* Canonical text of an info: its options (tokens joined by one blank), then the typed fields that are
 * set (they override the same keys in the options: later tokens win). malloc'ed. */
static char *
info_canon(const h5zarr_info_t *i)
{
    const char *o   = i && i->options ? i->options : "";
    size_t      n   = strlen(o) + 96;
    char       *s   = malloc(n), *w;
    bool        gap = false;
    if (!s)
        return NULL;
    w = s;
    for (const char *p = o; *p; p++) {
        bool sep = isspace((unsigned char)*p) || *p == ',' || *p == ';';
        if (sep) {
            gap = w != s;
            continue;
        }
        if (gap)
            *w++ = ' ';
        gap  = false;
        *w++ = *p;
    }
    *w = '\0';
    if (i && i->zarr_format)
        snprintf(w, n - (size_t)(w - s), "%sversion=%d", w != s ? " " : "", i->zarr_format), w += strlen(w);
    if (i && i->nthreads)
        snprintf(w, n - (size_t)(w - s), "%sthreads=%d", w != s ? " " : "", i->nthreads), w += strlen(w);
    if (i && i->create)
        snprintf(w, n - (size_t)(w - s), "%screate=%s", w != s ? " " : "",
                 i->create == H5ZARR_CREATE_ZARR   ? "zarr"
                 : i->create == H5ZARR_CREATE_AUTO ? "auto"
                                                   : "invalid");
    return s;
}

void *
h5zv_info_copy(const void *info)
{
    const h5zarr_info_t *src = info;
    h5zarr_info_t       *c   = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (src) {
        *c = *src;
        if (src->options && !(c->options = strdup(src->options))) {
            free(c);
            return NULL;
        }
    }
    return c;
}

herr_t
h5zv_info_cmp(int *cmp, const void *a, const void *b)
{
    char *x, *y;
    if (!a || !b) {
        *cmp = (a != NULL) - (b != NULL);
        return 0;
    }
    x = info_canon(a);
    y = info_canon(b);
    if (!x || !y) {
        free(x);
        free(y);
        return -1;
    }
    *cmp = strcmp(x, y);
    free(x);
    free(y);
    return 0;
}

herr_t
h5zv_info_free(void *info)
{
    h5zarr_info_t *i = info;
    if (i)
        free((char *)i->options);
    free(i);
    return 0;
}

herr_t
h5zv_info_to_str(const void *info, char **str)
{
    char *c = info_canon(info);
    if (!c)
        return -1;
    *str = H5allocate_memory(strlen(c) + 1, false);
    if (*str)
        strcpy(*str, c);
    free(c);
    return *str ? 0 : -1;
}

/* Keeps the text as the info's options. It never fails on a bad key or value (HDF5 would fall back to
 * the native connector without a word): those are reported when a file is created or opened. */
herr_t
h5zv_info_from_str(const char *str, void **info)
{
    h5zarr_info_t *i = calloc(1, sizeof *i);
    if (!i)
        return -1;
    if (str && *str && !(i->options = strdup(str))) {
        free(i);
        return -1;
    }
    *info = i;
    return 0;
}

/* The info of `fapl_id` when its connector is ours (new copy: free with h5zv_info_free), else NULL. */
static h5zarr_info_t *
fapl_info(hid_t fapl_id)
{
    hid_t              vol  = H5I_INVALID_HID;
    H5VL_class_value_t v    = 0;
    void              *info = NULL;
    if (fapl_id < 0)
        return NULL;
    if (fapl_id == H5P_DEFAULT)
        fapl_id = H5P_FILE_ACCESS_DEFAULT;
    H5E_BEGIN_TRY
    {
        if (H5Pget_vol_id(fapl_id, &vol) >= 0 && H5VLget_value(vol, &v) >= 0 && v == H5ZV_VALUE &&
            H5Pget_vol_info(fapl_id, &info) < 0)
            info = NULL;
    }
    H5E_END_TRY
    if (vol >= 0)
        h5zv_close(vol);
    return info;
}

typedef struct info_ctx {
    overlay *o;
    char    *config;
    size_t   nconfig;
} info_ctx;

static int
info_token(void *ud, const char *key, const char *val, char *err, size_t nerr)
{
    info_ctx *c = ud;
    return overlay_set(c->o, IN_INFO, key, val, err, nerr, c->config, c->nconfig);
}

/* The info's overlay (options, then typed fields) and its `config` path ("" if none). */
static int
info_overlay(const h5zarr_info_t *i, overlay *o, char *config, size_t nconfig, char *err, size_t nerr)
{
    info_ctx c = {o, config, nconfig};
    char     e[900];
    memset(o, 0, sizeof *o);
    config[0] = '\0';
    if (!i)
        return 0;
    if (info_tokens(i->options, info_token, &c, e, sizeof e) < 0) {
        snprintf(err, nerr, "connector info '%s': %s", i->options, e);
        return -1;
    }
    if (i->zarr_format) {
        snprintf(e, sizeof e, "%d", i->zarr_format);
        if (overlay_set(o, IN_INFO, "version", e, err, nerr, NULL, 0) < 0) {
            snprintf(e, sizeof e, "%s", err);
            snprintf(err, nerr, "connector info (h5zarr_info_t.zarr_format): %s", e);
            return -1;
        }
    }
    if (i->nthreads) {
        snprintf(e, sizeof e, "%d", i->nthreads);
        if (overlay_set(o, IN_INFO, "threads", e, err, nerr, NULL, 0) < 0) {
            snprintf(e, sizeof e, "%s", err);
            snprintf(err, nerr, "connector info (h5zarr_info_t.nthreads): %s", e);
            return -1;
        }
    }
    if (i->create) {
        if (i->create != H5ZARR_CREATE_AUTO && i->create != H5ZARR_CREATE_ZARR) {
            snprintf(err, nerr, "connector info (h5zarr_info_t.create): bad value %d (want H5ZARR_CREATE_*)",
                     i->create);
            return -1;
        }
        overlay_set(o, IN_INFO, "create", i->create == H5ZARR_CREATE_ZARR ? "zarr" : "auto", err, nerr, NULL,
                    0);
    }
    return 0;
}

/* ---- the config file ------------------------------------------------------------------------------- */
typedef struct rule {
    char   *glob;
    int     line;
    overlay o;
} rule;

typedef struct cfile {
    overlay top;
    rule   *rules;
    size_t  nrules;
} cfile;

static void
cfile_clear(cfile *c)
{
    for (size_t i = 0; i < c->nrules; i++)
        free(c->rules[i].glob);
    free(c->rules);
    memset(c, 0, sizeof *c);
}

static char *
trim(char *s)
{
    char *e;
    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* Parses the file at `path` (`via`: how it was named, for messages). -1 with the message in `err`. */
static int
cfile_read(const char *path, const char *via, cfile *c, char *err, size_t nerr)
{
    FILE *fp = fopen(path, "r");
    char  line[4096], e[800];
    int   lineno = 0, ret = -1;
    rule *cur = NULL;

    memset(c, 0, sizeof *c);
    if (!fp) {
        snprintf(err, nerr, "can't read config file '%s' (%s): %s", path, via, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof line, fp)) {
        char *s, *eq, *hash;
        lineno++;
        if (!strchr(line, '\n') && !feof(fp)) {
            snprintf(err, nerr, "config file '%s' line %d: line longer than %zu bytes", path, lineno,
                     sizeof line - 2);
            goto done;
        }
        /* comments: '#' or ';' at the start of the line or after a blank */
        for (hash = line; *hash; hash++)
            if ((*hash == '#' || *hash == ';') && (hash == line || isspace((unsigned char)hash[-1]))) {
                *hash = '\0';
                break;
            }
        s = trim(line);
        if (!*s)
            continue;
        if (*s == '[') {
            char *end = strrchr(s, ']'), *body;
            if (!end || end[1]) {
                snprintf(err, nerr,
                         "config file '%s' line %d: bad section header '%s' (want [path GLOB] or "
                         "[defaults])",
                         path, lineno, s);
                goto done;
            }
            *end = '\0';
            body = trim(s + 1);
            if (!strcmp(body, "defaults")) {
                cur = NULL;
                continue;
            }
            if (strncmp(body, "path", 4) != 0 || !isspace((unsigned char)body[4]) || !*trim(body + 4)) {
                snprintf(err, nerr,
                         "config file '%s' line %d: bad section header '[%s]' (want [path GLOB] or "
                         "[defaults])",
                         path, lineno, body);
                goto done;
            }
            {
                rule *r = realloc(c->rules, (c->nrules + 1) * sizeof *r);
                if (!r) {
                    snprintf(err, nerr, "out of memory");
                    goto done;
                }
                c->rules = r;
                cur      = &c->rules[c->nrules];
                memset(cur, 0, sizeof *cur);
                if (!(cur->glob = strdup(trim(body + 4)))) {
                    snprintf(err, nerr, "out of memory");
                    goto done;
                }
                cur->line = lineno;
                h5zv_config_defaults(&cur->o.s);
                c->nrules++;
            }
            continue;
        }
        if (!(eq = strchr(s, '=')) || eq == s) {
            snprintf(err, nerr,
                     "config file '%s' line %d: expected 'key = value' or a [path GLOB] header, got "
                     "'%s'",
                     path, lineno, s);
            goto done;
        }
        *eq = '\0';
        {
            char *key = trim(s), *val = trim(eq + 1);
            if (overlay_set(cur ? &cur->o : &c->top, cur ? IN_RULE : IN_TOP, key, val, e, sizeof e, NULL, 0) <
                0) {
                snprintf(err, nerr, "config file '%s' line %d: %s", path, lineno, e);
                goto done;
            }
        }
    }
    if (ferror(fp)) {
        snprintf(err, nerr, "can't read config file '%s' (%s): %s", path, via, strerror(errno));
        goto done;
    }
    ret = 0;
done:
    fclose(fp);
    if (ret < 0)
        cfile_clear(c);
    return ret;
}

/* The config file last parsed, with what stat said of it then. Settings are resolved at every file
 * create, open and probe (netCDF's tst_quantize resolved them ~390 times, reading the file each time):
 * a file whose device, inode, size, modification and change times are those of the parse is not read
 * again (one stat instead of open, fstat, reads and close). A file changed within the clock tick of a
 * read could keep all five, so a parse is kept only when both times were at least RACY_NS older than
 * the clock just before the read (git's "racy" index entries); until then the file is read each time,
 * as before. The memo lives until the process ends (reachable, one parse). */
#define RACY_NS 1000000000LL
static struct {
    char        path[1024];
    struct stat st;
    cfile       c;
    bool        ok;
} cf_memo;
static pthread_mutex_t cf_lock = PTHREAD_MUTEX_INITIALIZER;

static long long
ts_ns(struct timespec t)
{
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static bool
same_file_state(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           ts_ns(a->st_mtim) == ts_ns(b->st_mtim) && ts_ns(a->st_ctim) == ts_ns(b->st_ctim);
}

/* `name` made absolute (the current directory prefixed; not resolved) into buf. */
static const char *
abs_name(const char *name, char *buf, size_t n)
{
    char cwd[4096];
    if (name[0] == '/' || !getcwd(cwd, sizeof cwd))
        snprintf(buf, n, "%s", name);
    else
        snprintf(buf, n, "%s/%s", cwd, name[0] == '.' && name[1] == '/' ? name + 2 : name);
    return buf;
}

size_t
h5zv_config_temp_base_len(const char *name)
{
    size_t      n = strlen(name);
    const char *prog, *pid;
    if (n < 4 || strcmp(name + n - 4, ".tmp") != 0)
        return 0;
    for (prog = name + n - 4; prog > name && prog[-1] != '.' && prog[-1] != '/'; prog--)
        ;
    if (prog == name + n - 4 || prog <= name + 1 || prog[-1] != '.')
        return 0;
    /* prog - 1 is the '.' before the program name; the pid part ends there */
    for (pid = prog - 1; pid > name && pid[-1] >= '0' && pid[-1] <= '9'; pid--)
        ;
    if (pid == prog - 1 || pid - name < 5 || strncmp(pid - 4, ".pid", 4) != 0)
        return 0;
    return (size_t)(pid - 4 - name);
}

/* A rule matches a name, and NCO's temporary name for it (docs/CONFIG.md). */
static bool
rule_matches(const rule *r, const char *name, const char *absname)
{
    size_t tn = h5zv_config_temp_base_len(name), ta = h5zv_config_temp_base_len(absname);
    char   b[8192];
    if (fnmatch(r->glob, absname, 0) == 0 || fnmatch(r->glob, name, 0) == 0)
        return true;
    if (ta && ta < sizeof b) {
        snprintf(b, sizeof b, "%.*s", (int)ta, absname);
        if (fnmatch(r->glob, b, 0) == 0)
            return true;
    }
    if (tn && tn < sizeof b) {
        snprintf(b, sizeof b, "%.*s", (int)tn, name);
        if (fnmatch(r->glob, b, 0) == 0)
            return true;
    }
    return false;
}

/* ---- resolution -------------------------------------------------------------------------------------- */
void
h5zv_config_defaults(h5zv_settings *s)
{
    memset(s, 0, sizeof *s);
    s->version            = 3;
    s->threads            = 0;
    s->create             = H5ZARR_CREATE_AUTO;
    s->format             = -1;
    s->write_empty_chunks = false;
    s->consolidated       = false;
    s->shard_bytes        = 0;     /* no sharding */
    s->durable            = false; /* nothing fsync'ed (docs/CONFIG.md) */
    s->codec.kind         = H5ZV_CODEC_NONE;
    s->chunks.kind        = H5ZV_CHUNKS_AUTO;
    s->chunks.target      = 1u << 20; /* what dataset.c used before there was a configuration */
}

/* Resolves the settings for `name` into *out. -1 with the message in err. */
static int
resolve(hid_t fapl_id, const char *name, h5zv_settings *out, char *err, size_t nerr)
{
    h5zarr_info_t *info = fapl_info(fapl_id);
    overlay        io;
    cfile          cf = {0};
    char           config[1024], absname[8192];
    const char    *via = "from the connector info key 'config'";
    int            ret = -1;
    char           trimmed[4096];

    h5zv_config_defaults(out);
    if (info_overlay(info, &io, config, sizeof config, err, nerr) < 0)
        goto done;
    if (!config[0] && getenv("H5ZARR_CONFIG") && *getenv("H5ZARR_CONFIG")) {
        snprintf(config, sizeof config, "%s", getenv("H5ZARR_CONFIG"));
        via = "named by H5ZARR_CONFIG";
    }
    if (config[0]) {
        const cfile    *c = &cf;
        struct stat     st;
        struct timespec now;
        bool            have = stat(config, &st) == 0;
        pthread_mutex_lock(&cf_lock);
        if (have && cf_memo.ok && !strcmp(cf_memo.path, config) && same_file_state(&st, &cf_memo.st))
            c = &cf_memo.c;
        else {
            clock_gettime(CLOCK_REALTIME, &now);
            if (cfile_read(config, via, &cf, err, nerr) < 0) {
                pthread_mutex_unlock(&cf_lock);
                goto done;
            }
            if (have && strlen(config) < sizeof cf_memo.path && ts_ns(now) - ts_ns(st.st_mtim) >= RACY_NS &&
                ts_ns(now) - ts_ns(st.st_ctim) >= RACY_NS) {
                cfile_clear(&cf_memo.c);
                cf_memo.c = cf;
                memset(&cf, 0, sizeof cf);
                cf_memo.st = st;
                snprintf(cf_memo.path, sizeof cf_memo.path, "%s", config);
                cf_memo.ok = true;
                c          = &cf_memo.c;
            }
        }
        overlay_apply(out, &c->top);
        if (c->nrules && name) {
            size_t k;
            snprintf(trimmed, sizeof trimmed, "%s", name);
            for (k = strlen(trimmed); k > 1 && trimmed[k - 1] == '/'; k--)
                trimmed[k - 1] = '\0';
            abs_name(trimmed, absname, sizeof absname);
            for (size_t i = 0; i < c->nrules; i++)
                if (rule_matches(&c->rules[i], trimmed, absname))
                    overlay_apply(out, &c->rules[i].o);
        }
        pthread_mutex_unlock(&cf_lock);
    }
    overlay_apply(out, &io);
    out->create_in_code = info && info->create == H5ZARR_CREATE_ZARR && out->create == H5ZARR_CREATE_ZARR;
    ret                 = 0;
done:
    cfile_clear(&cf);
    h5zv_info_free(info);
    return ret;
}

int
h5zv_config_get(hid_t fapl_id, const char *name, h5zv_settings *out)
{
    char err[1024];
    if (resolve(fapl_id, name, out, err, sizeof err) < 0) {
        config_error(__func__, __LINE__, name, err);
        return -1;
    }
    return 0;
}

static bool
ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int
h5zv_config_new_route(hid_t fapl_id, const char *name, h5zv_route *why)
{
    h5zv_settings s;
    char          t[4096];
    size_t        k;
    h5zv_route    w;
    bool          suffix;
    if (h5zv_config_get(fapl_id, name, &s) < 0)
        return -1;
    snprintf(t, sizeof t, "%s", name ? name : "");
    for (k = strlen(t); k > 1 && t[k - 1] == '/'; k--)
        t[k - 1] = '\0';
    suffix = ends_with(t, ".zarr") || ends_with(t, ".zr3");
    if (s.create == H5ZARR_CREATE_ZARR)
        w = s.create_in_code ? H5ZV_ROUTE_CODE : suffix ? H5ZV_ROUTE_SUFFIX : H5ZV_ROUTE_CONFIG;
    else if (s.format >= 0)
        w = !s.format ? H5ZV_ROUTE_NATIVE : suffix ? H5ZV_ROUTE_SUFFIX : H5ZV_ROUTE_RULE;
    else
        w = suffix ? H5ZV_ROUTE_SUFFIX : H5ZV_ROUTE_NATIVE;
    if (why)
        *why = w;
    return w != H5ZV_ROUTE_NATIVE;
}

int
h5zv_config_new_is_zarr(hid_t fapl_id, const char *name)
{
    return h5zv_config_new_route(fapl_id, name, NULL);
}

/* ---- applying -------------------------------------------------------------------------------------- */
/* Pools by thread count, made on first use and kept for the process (workers are cheap when idle). */
static zarr_pool *
pool_for(int threads)
{
    static struct {
        int        n;
        zarr_pool *p;
    } pools[8];
    static size_t npools;
    zarr_pool    *p = NULL;
    if (threads <= 0)
        return NULL; /* the core's default pool: H5ZARR_THREADS, else the cores */
    for (size_t i = 0; i < npools; i++)
        if (pools[i].n == threads)
            return pools[i].p;
    if (npools == sizeof pools / sizeof pools[0] || zarr_pool_new(threads, &p) != ZARR_OK)
        return NULL; /* more distinct sizes than that in one process: the default pool */
    pools[npools].n   = threads;
    pools[npools++].p = p;
    return p;
}

void
h5zv_config_engine_opts(const h5zv_settings *s, zarr_engine_opts *o)
{
    zarr_engine_defaults(o);
    o->pool               = pool_for(s->threads);
    o->write_empty_chunks = s->write_empty_chunks;
}

void
h5zv_config_chunks(const h5zv_settings *s, int ndim, const hsize_t *dims, const hsize_t *maxdims,
                   size_t elsize, uint64_t *chunks)
{
    uint64_t bytes = elsize ? elsize : 1;
    for (int d = 0; d < ndim; d++)
        chunks[d] = dims[d] ? dims[d] : 1;
    if (s->chunks.kind == H5ZV_CHUNKS_WHOLE)
        return;
    if (s->chunks.kind == H5ZV_CHUNKS_EXPLICIT && s->chunks.ndim == ndim) {
        for (int d = 0; d < ndim; d++) {
            chunks[d] = s->chunks.shape[d];
            if (dims[d] && maxdims && maxdims[d] == dims[d] && chunks[d] > dims[d])
                chunks[d] = dims[d]; /* no larger than a fixed dimension */
        }
        return;
    }
    /* auto (also an explicit shape of another rank): the whole shape, leading dimensions halved until a
     * chunk is at most the target */
    for (int d = 0; d < ndim; d++)
        bytes *= chunks[d];
    for (int d = 0; d < ndim && bytes > s->chunks.target; d++)
        while (chunks[d] > 1 && bytes > s->chunks.target) {
            uint64_t nc = (chunks[d] + 1) / 2;
            bytes       = bytes / chunks[d] * nc;
            chunks[d]   = nc;
        }
}

int
h5zv_config_add_codec(const h5zv_settings *s, hid_t type_id, zarr_array_meta *m, const char *path)
{
    char                js[256];
    struct json_object *j   = NULL;
    int                 ret = -1;
    switch (s->codec.kind) {
        case H5ZV_CODEC_NONE:
            return 0;
        case H5ZV_CODEC_ZSTD: /* as filter 32015 maps */
            snprintf(js, sizeof js, "{\"name\":\"zstd\",\"configuration\":{\"level\":%d,\"checksum\":false}}",
                     s->codec.level);
            break;
        case H5ZV_CODEC_ZLIB: /* as deflate maps */
            snprintf(js, sizeof js, "{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":%d}}",
                     s->codec.level);
            break;
        case H5ZV_CODEC_GZIP:
            snprintf(js, sizeof js, "{\"name\":\"gzip\",\"configuration\":{\"level\":%d}}", s->codec.level);
            break;
        case H5ZV_CODEC_BLOSC: /* as filter 32001 maps */
            snprintf(js, sizeof js,
                     "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"%s\",\"clevel\":%d,\"shuffle\":"
                     "\"%s\",\"typesize\":%u,\"blocksize\":0}}",
                     s->codec.cname, s->codec.level, zarr_blosc_shuffle_name(s->codec.shuffle),
                     h5zv_filter_blosc_typesize(type_id));
            break;
    }
    if (!(j = json_tokener_parse(js)))
        H5ZV_GOTO_ERROR("can't create dataset '/%s': out of memory", path);
    if (zarr_chain_append_json(m->chain, j) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't create dataset '/%s': configured codec", path);
    ret = 0;
done:
    json_object_put(j);
    return ret;
}
