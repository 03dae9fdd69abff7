/*
 * store_ref.c: the reference store, a read-only store whose keys are those of a kerchunk-style reference
 * file (JSON, version 1 or 0) and whose values are the file's inline strings ("base64:..." decoded) or
 * byte ranges [url, offset, length] ([url]: a whole file) of other files, read through the stores that
 * hold them: a directory store for local files, the HTTP and S3 stores for http(s):// and s3:// URLs.
 * Batched reads (get_many) are sent to each target store as one batch, so a remote target keeps many
 * ranges in flight.
 *
 * A reference file is untrusted input. The whole document is checked when the store opens (its shape,
 * its version, every key with the store's key checks, every offset and length: non-negative integers
 * whose sum fits in 62 bits; templates expanded once, by name, to a bounded length). Targets are contained
 * as pointer files' stores are: a relative path is a key of a directory store at the reference file's
 * directory (no "..", no leading "/"), an absolute path is allowed below that directory; any other
 * absolute path needs ZARR_STORE_REF_PATHS and a URL ZARR_STORE_REF_URLS (zarr.h; the connector's
 * `refs_allow` setting). A target that is not allowed does not fail the open: reading a key that refers
 * to it fails with a message naming the key and the reason, as does a range past the end of its file
 * (the target store checks each range against the file's size). Format: docs/FORMAT.md ("Reference
 * stores").
 */
#include "store_impl.h"
#include "zjson.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define REF_INLINE   UINT32_MAX          /* ref_ent.target of an inline value */
#define REF_MAX_OFF  ((uint64_t)1 << 62) /* offsets and lengths stay below this (no overflow when added) */
#define REF_URL_MAX  4096                /* a target URL after template expansion */
#define REF_MAX_FILE ((uint64_t)1 << 31) /* the reference file itself */

typedef struct ref_ent {
    char          *key;
    uint32_t       target; /* index into targets, or REF_INLINE */
    bool           whole;  /* [url]: the whole file */
    uint64_t       off, len;
    unsigned char *data; /* inline value (len bytes) */
} ref_ent;

typedef struct ref_target {
    char       *url;   /* as the references give it (templates expanded) */
    char       *key;   /* its key in `store` */
    char       *root;  /* what `store` is opened at (a directory or a URL prefix) */
    const char *deny;  /* why it may not be read (NULL: allowed) */
    zarr_store *store; /* opened at the first read (under the store's lock) */
    int         open_rc;
    char       *open_msg; /* why the open failed */
} ref_target;

typedef struct ref_store {
    zarr_store      base;
    ref_ent        *ents; /* sorted by key */
    size_t          n;
    ref_target     *tg;
    size_t          ntg, captg;
    char           *dir; /* the reference file's directory, absolute, with a trailing '/' */
    int             flags;
    pthread_mutex_t lock;
} ref_store;

/* ---- parsing ---------------------------------------------------------------------------------------- */
static int
b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' || c == '-' ? 62 : c == '/' || c == '_' ? 63 : -1;
}

/* Decodes base64 (standard or URL alphabet, padding optional) into a new buffer. */
static int
b64_decode(const char *s, size_t n, const char *key, unsigned char **out, uint64_t *outlen)
{
    unsigned char *d;
    size_t         k    = 0;
    uint32_t       acc  = 0;
    int            bits = 0;
    while (n > 0 && s[n - 1] == '=')
        n--;
    if (!(d = malloc(n * 3 / 4 + 1)))
        return zarr_error(ZARR_ENOMEM, "out of memory decoding reference '%s'", key);
    for (size_t i = 0; i < n; i++) {
        int v = b64val((unsigned char)s[i]);
        if (v < 0) {
            free(d);
            return zarr_error(ZARR_EMETA, "reference '%s': bad base64 character at %zu", key, i);
        }
        acc = acc << 6 | (uint32_t)v;
        if ((bits += 6) >= 8) {
            bits -= 8;
            d[k++] = (unsigned char)(acc >> bits);
        }
    }
    if (n % 4 == 1) {
        free(d);
        return zarr_error(ZARR_EMETA, "reference '%s': truncated base64", key);
    }
    *out    = d;
    *outlen = k;
    return ZARR_OK;
}

/* `url` with every "{{name}}" replaced by templates[name] (once: the result is not scanned again). */
static int
expand(const char *url, struct json_object *templates, const char *key, char **out)
{
    char        buf[REF_URL_MAX + 1];
    size_t      n = 0;
    const char *p = url;
    while (*p) {
        const char         *open = strstr(p, "{{"), *close, *val;
        char                name[128];
        size_t              k = open ? (size_t)(open - p) : strlen(p), nl, vl;
        struct json_object *v = NULL;
        if (n + k > REF_URL_MAX)
            goto toolong;
        memcpy(buf + n, p, k), n += k, p += k;
        if (!open)
            break;
        if (!(close = strstr(open + 2, "}}")) || (nl = (size_t)(close - open - 2)) >= sizeof name)
            return zarr_error(ZARR_EMETA, "reference '%s': unclosed or overlong template in its URL", key);
        memcpy(name, open + 2, nl);
        name[nl] = '\0';
        while (nl > 0 && name[nl - 1] == ' ')
            name[--nl] = '\0';
        val = name;
        while (*val == ' ')
            val++;
        if (!templates || !json_object_object_get_ex(templates, val, &v) ||
            !json_object_is_type(v, json_type_string))
            return zarr_error(
                ZARR_EMETA,
                "reference '%s': its URL uses template '%s', which 'templates' does not define as a string",
                key, val);
        vl = (size_t)json_object_get_string_len(v);
        if (n + vl > REF_URL_MAX)
            goto toolong;
        memcpy(buf + n, json_object_get_string(v), vl), n += vl;
        p = close + 2;
    }
    buf[n] = '\0';
    if (strlen(buf) != n)
        return zarr_error(ZARR_EMETA, "reference '%s': its URL holds a NUL byte", key);
    if (!(*out = strdup(buf)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    return ZARR_OK;
toolong:
    return zarr_error(ZARR_EMETA, "reference '%s': its URL is longer than %d bytes", key, REF_URL_MAX);
}

/* Where the target `url` is read from, or why it may not be (contained as pointer files' stores are). */
static int
target_place(ref_store *rs, ref_target *t)
{
    const char *u      = t->url, *slash;
    bool        is_url = zarr_store_is_url(u);
    if (strncmp(u, "file://", 7) == 0) {
        u      = u + 7;
        is_url = false;
        if (strncmp(u, "localhost/", 10) == 0)
            u += 9;
        if (*u != '/') {
            t->deny = "a file:// URL without an absolute path";
            return ZARR_OK;
        }
    }
    if (!is_url && *u != '/') { /* relative: below the reference file's directory */
        t->root = strdup(rs->dir);
        t->key  = strdup(u);
    }
    else if (!is_url && strncmp(u, rs->dir, strlen(rs->dir)) == 0) {
        t->root = strdup(rs->dir);
        t->key  = strdup(u + strlen(rs->dir));
    }
    else {
        if (!is_url && !(rs->flags & ZARR_STORE_REF_PATHS))
            t->deny = "an absolute path outside the reference file's directory, which the configuration "
                      "does not allow (refs_allow=paths)";
        else if (is_url && strncasecmp(u, "http://", 7) != 0 && strncasecmp(u, "https://", 8) != 0 &&
                 strncasecmp(u, "s3://", 5) != 0)
            t->deny = "a URL scheme other than http, https and s3";
        else if (is_url && !(rs->flags & ZARR_STORE_REF_URLS))
            t->deny = "a URL, which the configuration does not allow (refs_allow=urls)";
        if (t->deny)
            return ZARR_OK;
        slash   = strrchr(u, '/');
        t->root = strndup(u, (size_t)(slash - u) + (slash == u));
        t->key  = strdup(slash + 1);
    }
    if (!t->root || !t->key)
        return zarr_error(ZARR_ENOMEM, "out of memory");
    if (zarr__store_check_key(t->key, false) != ZARR_OK) {
        zarr_error_restore(ZARR_OK, "");
        t->deny = "a path that leaves the reference file's directory or is malformed ('..', '.', '//', "
                  "a trailing '/' or a backslash)";
    }
    return ZARR_OK;
}

/* The index of the target `url` (taken), added when new. Targets are few: a linear search from the
 * last one found (references to one file come together). */
static int
target_index(ref_store *rs, char *url, uint32_t *idx)
{
    static __thread size_t last;
    for (size_t i = 0; i < rs->ntg; i++) {
        size_t j = (last + i) % rs->ntg;
        if (strcmp(rs->tg[j].url, url) == 0) {
            free(url);
            *idx = (uint32_t)(last = j);
            return ZARR_OK;
        }
    }
    if (rs->ntg >= 65536) {
        free(url);
        return zarr_error(ZARR_EMETA, "reference file names more than 65536 files");
    }
    if (rs->ntg == rs->captg) {
        size_t      cap = rs->captg ? rs->captg * 2 : 4;
        ref_target *tg  = realloc(rs->tg, cap * sizeof *tg);
        if (!tg) {
            free(url);
            return zarr_error(ZARR_ENOMEM, "out of memory");
        }
        rs->tg = tg, rs->captg = cap;
    }
    memset(&rs->tg[rs->ntg], 0, sizeof rs->tg[0]);
    rs->tg[rs->ntg].url = url;
    *idx                = (uint32_t)(last = rs->ntg++);
    return target_place(rs, &rs->tg[*idx]);
}

/* One reference [url], [url, offset, length] or a string into `e`. */
static int
parse_ref(ref_store *rs, const char *key, struct json_object *v, struct json_object *templates, ref_ent *e)
{
    struct json_object *u, *o, *l;
    int64_t             off = 0, len = 0;
    size_t              n;
    char               *url = NULL;
    int                 rc;
    if (json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v);
        n             = (size_t)json_object_get_string_len(v);
        e->target     = REF_INLINE;
        if (n >= 7 && strncmp(s, "base64:", 7) == 0)
            return b64_decode(s + 7, n - 7, key, &e->data, &e->len);
        if (!(e->data = malloc(n ? n : 1)))
            return zarr_error(ZARR_ENOMEM, "out of memory");
        memcpy(e->data, s, n);
        e->len = n;
        return ZARR_OK;
    }
    if (!json_object_is_type(v, json_type_array) || ((n = json_object_array_length(v)) != 1 && n != 3))
        return zarr_error(ZARR_EMETA, "reference '%s': want a string, [url] or [url, offset, length]", key);
    u = json_object_array_get_idx(v, 0);
    if (!json_object_is_type(u, json_type_string))
        return zarr_error(ZARR_EMETA,
                          "reference '%s': its URL is not a string (a missing target URL is not supported)",
                          key);
    if (n == 3) {
        o = json_object_array_get_idx(v, 1), l = json_object_array_get_idx(v, 2);
        if (!zarr__json_get_i64(o, &off) || !zarr__json_get_i64(l, &len) || off < 0 || len < 0 ||
            (uint64_t)off >= REF_MAX_OFF || (uint64_t)len >= REF_MAX_OFF)
            return zarr_error(ZARR_EMETA,
                              "reference '%s': offset and length must be integers from 0 to 2^62 - 1", key);
    }
    if ((rc = expand(json_object_get_string(u), templates, key, &url)) != ZARR_OK)
        return rc;
    e->whole = n == 1;
    e->off   = (uint64_t)off;
    e->len   = n == 1 ? UINT64_MAX : (uint64_t)len;
    return target_index(rs, url, &e->target);
}

static int
ent_cmp(const void *a, const void *b)
{
    return strcmp(((const ref_ent *)a)->key, ((const ref_ent *)b)->key);
}

/* The document's references into rs->ents (sorted). */
static int
parse_doc(ref_store *rs, struct json_object *doc, const char *where)
{
    struct json_object *refs = doc, *ver = NULL, *templates = NULL, *gen = NULL;
    int64_t             version = 0;
    size_t              i       = 0;
    int                 rc      = ZARR_OK;
    if (!json_object_is_type(doc, json_type_object))
        return zarr_error(ZARR_EMETA, "reference file '%s': not a JSON object", where);
    if (json_object_object_get_ex(doc, "version", &ver)) {
        if (!zarr__json_get_i64(ver, &version) || version != 1)
            return zarr_error(
                ZARR_EMETA, "reference file '%s': unsupported version (want 1, or 0 without a 'version' key)",
                where);
        if (!json_object_object_get_ex(doc, "refs", &refs) || !json_object_is_type(refs, json_type_object))
            return zarr_error(ZARR_EMETA, "reference file '%s': version 1 without a 'refs' object", where);
        if (json_object_object_get_ex(doc, "templates", &templates) &&
            !json_object_is_type(templates, json_type_object))
            return zarr_error(ZARR_EMETA, "reference file '%s': 'templates' is not an object", where);
        if (json_object_object_get_ex(doc, "gen", &gen) &&
            !(json_object_is_type(gen, json_type_array) && json_object_array_length(gen) == 0))
            return zarr_error(ZARR_EUNSUPPORTED,
                              "reference file '%s': generated references ('gen') are not supported", where);
    }
    rs->n = (size_t)json_object_object_length(refs);
    if (!(rs->ents = calloc(rs->n ? rs->n : 1, sizeof *rs->ents)))
        return zarr_error(ZARR_ENOMEM, "out of memory reading '%s'", where);
    json_object_object_foreach(refs, k, v)
    {
        ref_ent *e = &rs->ents[i++];
        if ((rc = zarr__store_check_key(k, false)) != ZARR_OK)
            return zarr_error_wrap(rc, "reference file '%s': ", where);
        if (!(e->key = strdup(k)))
            return zarr_error(ZARR_ENOMEM, "out of memory reading '%s'", where);
        if ((rc = parse_ref(rs, k, v, templates, e)) != ZARR_OK)
            return zarr_error_wrap(rc, "reference file '%s': ", where);
    }
    qsort(rs->ents, rs->n, sizeof *rs->ents, ent_cmp);
    return ZARR_OK;
}

/* ---- reading ---------------------------------------------------------------------------------------- */
static const ref_ent *
find(const ref_store *rs, const char *key)
{
    ref_ent probe = {.key = (char *)key};
    return bsearch(&probe, rs->ents, rs->n, sizeof *rs->ents, ent_cmp);
}

/* The store of target `i`, opened at the first use. NULL with the message set when it may not be read
 * or does not open; `key` names the reference in it. */
static zarr_store *
target_store(ref_store *rs, uint32_t i, const char *key)
{
    ref_target *t = &rs->tg[i];
    zarr_store *s = NULL;
    if (t->deny) {
        zarr_error(ZARR_EINVAL, "can't read reference '%s' of '%s': its target '%s' is %s", key, rs->base.url,
                   t->url, t->deny);
        return NULL;
    }
    pthread_mutex_lock(&rs->lock);
    if (!t->store && !t->open_msg) {
        t->open_rc = zarr_store_open(t->root, ZARR_STORE_RDONLY, &t->store);
        if (t->open_rc != ZARR_OK) {
            char msg[512];
            zarr_error_save(msg, sizeof msg);
            t->open_msg = strdup(msg);
            t->store    = NULL;
        }
    }
    s = t->store;
    pthread_mutex_unlock(&rs->lock);
    if (!s)
        zarr_error(t->open_rc ? t->open_rc : ZARR_EIO,
                   "can't read reference '%s' of '%s': can't open '%s': %s", key, rs->base.url, t->root,
                   t->open_msg ? t->open_msg : "out of memory");
    return s;
}

/* The range of `e` that a read of `len` bytes at `off` of its value asks for, or ZARR_ECODEC. */
static int
sub_range(const ref_ent *e, uint64_t off, uint64_t len, uint64_t *o, uint64_t *l)
{
    if (e->whole) {
        *o = off, *l = len;
        return ZARR_OK;
    }
    if (off > e->len || (len != UINT64_MAX && len > e->len - off))
        return zarr_error(ZARR_ECODEC, "can't read bytes %llu+%llu of '%s': the value has only %llu bytes",
                          (unsigned long long)off, (unsigned long long)len, e->key,
                          (unsigned long long)e->len);
    *o = e->off + off;
    *l = len == UINT64_MAX ? e->len - off : len;
    return ZARR_OK;
}

static int
wrap_read(int rc, ref_store *rs, const ref_ent *e)
{
    if (rc == ZARR_OK)
        return rc;
    if (rc == ZARR_ENOTFOUND) /* the target file is missing: not the key */
        return zarr_error(ZARR_EIO, "can't read reference '%s' of '%s': its file '%s' does not exist", e->key,
                          rs->base.url, rs->tg[e->target].url);
    return zarr_error_wrap(rc, "can't read reference '%s' of '%s' (%s bytes %llu+%llu): ", e->key,
                           rs->base.url, rs->tg[e->target].url, (unsigned long long)e->off,
                           (unsigned long long)e->len);
}

static int
ref_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    ref_store     *rs = (ref_store *)s;
    const ref_ent *e  = find(rs, key);
    zarr_store    *t;
    uint64_t       o, l;
    int            rc;
    out->size = 0;
    if (!e)
        return ZARR_ENOTFOUND;
    if ((rc = sub_range(e, off, len, &o, &l)) != ZARR_OK)
        return rc;
    if (e->target == REF_INLINE)
        return zarr_buf_append(out, e->data + o, (size_t)l);
    if (!(t = target_store(rs, e->target, key)))
        return ZARR_EINVAL;
    return wrap_read(zarr_store_get_range(t, rs->tg[e->target].key, o, l, out), rs, e);
}

static int
ref_get(zarr_store *s, const char *key, zarr_buf *out)
{
    return ref_get_range(s, key, 0, UINT64_MAX, out);
}

static int
ref_exists(zarr_store *s, const char *key)
{
    return find((ref_store *)s, key) ? ZARR_OK : ZARR_ENOTFOUND;
}

static int
ref_size(zarr_store *s, const char *key, uint64_t *size)
{
    ref_store     *rs = (ref_store *)s;
    const ref_ent *e  = find(rs, key);
    zarr_store    *t;
    if (!e)
        return ZARR_ENOTFOUND;
    if (!e->whole) {
        *size = e->len;
        return ZARR_OK;
    }
    if (!(t = target_store(rs, e->target, key)))
        return ZARR_EINVAL;
    return wrap_read(zarr_store_size(t, rs->tg[e->target].key, size), rs, e);
}

/* Batched reads: inline values at once, the others as one batch per target store. */
static int
ref_get_many(zarr_store *s, size_t n, zarr_store_req *reqs)
{
    ref_store      *rs    = (ref_store *)s;
    zarr_store_req *inner = calloc(n ? n : 1, sizeof *inner);
    size_t         *who   = calloc(n ? n : 1, sizeof *who);
    int             first = ZARR_OK;
    if (!inner || !who) {
        free(inner), free(who);
        for (size_t i = 0; i < n; i++)
            reqs[i].result = ZARR_ENOMEM;
        return zarr_error(ZARR_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        reqs[i].total = UINT64_MAX, reqs[i].result = -1000;
    for (size_t i = 0; i < n; i++) {
        const ref_ent *e = find(rs, reqs[i].key);
        uint32_t       tg;
        size_t         m = 0;
        zarr_store    *t;
        if (reqs[i].result != -1000)
            continue;
        if (!e || e->target == REF_INLINE || reqs[i].suffix || e->whole) { /* one by one */
            bool sfx       = reqs[i].suffix;
            reqs[i].result = ref_get_range(s, reqs[i].key, sfx ? 0 : reqs[i].off,
                                           sfx ? UINT64_MAX : reqs[i].len, reqs[i].out);
            if (sfx && reqs[i].result == ZARR_OK) {
                size_t all = reqs[i].out->size, keep = reqs[i].len < all ? (size_t)reqs[i].len : all;
                memmove(reqs[i].out->data, reqs[i].out->data + all - keep, keep);
                reqs[i].out->size = keep;
                reqs[i].total     = all;
            }
            continue;
        }
        tg = e->target;
        if (!(t = target_store(rs, tg, e->key))) {
            reqs[i].result = ZARR_EINVAL;
            continue;
        }
        for (size_t j = i; j < n; j++) { /* every request for this target */
            const ref_ent *f = j == i ? e : find(rs, reqs[j].key);
            uint64_t       o, l;
            if (reqs[j].result != -1000 || !f || f->target != tg || reqs[j].suffix || f->whole)
                continue;
            if ((reqs[j].result = sub_range(f, reqs[j].off, reqs[j].len, &o, &l)) != ZARR_OK)
                continue;
            inner[m] = (zarr_store_req){.key = rs->tg[tg].key, .off = o, .len = l, .out = reqs[j].out};
            who[m++] = j;
        }
        zarr__store_op_get_many(t, m, inner);
        for (size_t k = 0; k < m; k++)
            reqs[who[k]].result = wrap_read(inner[k].result, rs, find(rs, reqs[who[k]].key));
    }
    for (size_t i = 0; i < n; i++)
        if (reqs[i].result != ZARR_OK && first == ZARR_OK)
            first = reqs[i].result;
    free(inner), free(who);
    return first;
}

/* The entries whose keys start with `prefix` + "/" ("" = all): [*lo, *hi). */
static void
prefix_range(const ref_store *rs, const char *prefix, size_t *lo, size_t *hi)
{
    size_t pl = strlen(prefix), a = 0, b = rs->n;
    if (pl == 0) {
        *lo = 0, *hi = rs->n;
        return;
    }
    while (a < b) { /* first key >= prefix + "/" */
        size_t m = (a + b) / 2;
        int    c = strncmp(rs->ents[m].key, prefix, pl);
        if (c < 0 || (c == 0 && rs->ents[m].key[pl] < '/'))
            a = m + 1;
        else
            b = m;
    }
    *lo = a;
    while (a < rs->n && strncmp(rs->ents[a].key, prefix, pl) == 0 && rs->ents[a].key[pl] == '/')
        a++;
    *hi = a;
}

static int
ref_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud)
{
    ref_store     *rs = (ref_store *)s;
    zarr__children c  = {0};
    size_t         lo, hi, pl = strlen(prefix);
    int            rc = ZARR_OK;
    prefix_range(rs, prefix, &lo, &hi);
    for (size_t i = lo; i < hi && rc == ZARR_OK; i++)
        rc = zarr__children_add(&c, prefix, pl, rs->ents[i].key);
    if (rc != ZARR_OK) {
        zarr__children_free(&c);
        return rc;
    }
    return zarr__children_emit(&c, cb, ud);
}

static int
ref_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud)
{
    ref_store *rs = (ref_store *)s;
    size_t     lo, hi;
    prefix_range(rs, prefix, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const ref_ent *e = &rs->ents[i];
        int            r = cb(e->key, e->whole ? 0 : e->len, ud);
        if (r)
            return r;
    }
    return ZARR_OK;
}

static int
ref_readonly(zarr_store *s, const char *key)
{
    return zarr_error(ZARR_EREADONLY, "can't change '%s': reference store '%s' is read-only", key, s->url);
}

static int
ref_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    (void)data, (void)n;
    return ref_readonly(s, key);
}

static int
ref_rename(zarr_store *s, const char *from, const char *to)
{
    (void)to;
    return ref_readonly(s, from);
}

static void
ref_destroy(zarr_store *s)
{
    ref_store *rs = (ref_store *)s;
    if (!rs)
        return;
    for (size_t i = 0; i < rs->n; i++)
        free(rs->ents[i].key), free(rs->ents[i].data);
    for (size_t i = 0; i < rs->ntg; i++) {
        zarr_store_close(rs->tg[i].store);
        free(rs->tg[i].url), free(rs->tg[i].key), free(rs->tg[i].root), free(rs->tg[i].open_msg);
    }
    pthread_mutex_destroy(&rs->lock);
    free(rs->ents), free(rs->tg), free(rs->dir), free(rs->base.url), free(rs);
}

static const zarr_store_ops ref_ops = {
    .name       = "reference",
    .get        = ref_get,
    .get_range  = ref_get_range,
    .set        = ref_set,
    .del        = ref_readonly,
    .del_prefix = ref_readonly,
    .list       = ref_list,
    .exists     = ref_exists,
    .get_many   = ref_get_many,
    .rename     = ref_rename,
    .destroy    = ref_destroy,
    .size       = ref_size,
    .list_keys  = ref_list_keys,
};

/* ---- opening ---------------------------------------------------------------------------------------- */
/* rs->dir (the absolute directory of `path`, with a trailing '/') and the file's name in it. */
static int
split_path(ref_store *rs, const char *path, const char **name)
{
    const char *slash = strrchr(path, '/');
    char       *d     = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup("./");
    char       *abs   = d ? realpath(d, NULL) : NULL;
    free(d);
    *name = slash ? slash + 1 : path;
    if (!abs)
        return zarr_error(ZARR_ENOTFOUND, "can't open reference file '%s': its directory does not exist",
                          path);
    if (!(rs->dir = malloc(strlen(abs) + 2))) {
        free(abs);
        return zarr_error(ZARR_ENOMEM, "out of memory");
    }
    sprintf(rs->dir, "%s%s", abs, strcmp(abs, "/") == 0 ? "" : "/");
    free(abs);
    return ZARR_OK;
}

/* ---- is a file reference JSON? ------------------------------------------------------------------- */

#define REF_SNIFF_BYTES 65536 /* the start of a file looked at */

/* `key` (quoted, as in the text) stands in `t` followed by ':' and a value starting with one of `first`. */
static bool
has_key_then(const char *t, const char *key, const char *first)
{
    size_t k = strlen(key);
    for (const char *p = strstr(t, key); p; p = strstr(p + 1, key)) {
        const char *q = p + k;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
            q++;
        if (*q++ != ':')
            continue;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
            q++;
        if (*q && strchr(first, *q))
            return true;
    }
    return false;
}

bool
zarr_store_is_ref_file(const char *path)
{
    char       *t = NULL;
    const char *p;
    FILE       *f = path ? fopen(path, "rb") : NULL;
    size_t      n;
    bool        yes = false;
    if (!f || !(t = malloc(REF_SNIFF_BYTES + 1)))
        goto done;
    n    = fread(t, 1, REF_SNIFF_BYTES, f);
    t[n] = '\0';
    if (strlen(t) != n) /* a NUL byte: binary (an HDF5 file), never JSON */
        goto done;
    p = t + (n >= 3 && !memcmp(t, "\xef\xbb\xbf", 3) ? 3 : 0);
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p != '{')
        goto done;
    /* version 1: "refs": {...} (or a "version" number: a reference file to refuse with its reason); version
     * 0: the metadata keys' values are JSON text ("...") or a reference ([...]), where a zarr document or
     * consolidated metadata holds an object ({...}) */
    yes = has_key_then(p, "\"refs\"", "{") || has_key_then(p, "\"version\"", "0123456789") ||
          has_key_then(p, ".zgroup\"", "\"[") || has_key_then(p, ".zarray\"", "\"[") ||
          has_key_then(p, "zarr.json\"", "\"[");
done:
    free(t);
    if (f)
        fclose(f);
    return yes;
}

int
zarr_store_open_ref(const char *path, int flags, zarr_store **out)
{
    ref_store          *rs   = NULL;
    zarr_store         *dir  = NULL;
    zarr_buf            text = {0};
    struct json_object *doc  = NULL;
    const char         *name;
    uint64_t            size = 0;
    int                 rc   = ZARR_OK;
    if (!path || !out)
        return zarr_error(ZARR_EINVAL, "zarr_store_open_ref: path and out must not be NULL");
    *out = NULL;
    if (flags & (ZARR_STORE_RDWR | ZARR_STORE_CREATE))
        return zarr_error(ZARR_EREADONLY,
                          "can't open reference file '%s' for writing: reference stores are read-only", path);
    if (!(rs = calloc(1, sizeof *rs)) || !(rs->base.url = strdup(path)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory opening '%s'", path);
    pthread_mutex_init(&rs->lock, NULL);
    rs->flags = flags;
    ZARR_TRY(split_path(rs, path, &name));
    /* the reference file itself is read through a directory store of its directory */
    ZARR_TRY(zarr_store_open_dir(rs->dir, ZARR_STORE_RDONLY, &dir));
    if ((rc = zarr_store_size(dir, name, &size)) == ZARR_OK && size > REF_MAX_FILE)
        ZARR_FAIL(ZARR_EMETA, "reference file '%s' is larger than 2 GiB", path);
    if (rc != ZARR_OK || (rc = zarr_store_get(dir, name, &text)) != ZARR_OK)
        ZARR_FAIL(rc, "can't read reference file '%s'", path);
    ZARR_TRY(zarr__json_parse((const char *)text.data, text.size, path, &doc));
    ZARR_TRY(parse_doc(rs, doc, path));
    rs->base.ops             = &ref_ops;
    rs->base.refcount        = 1;
    rs->base.readonly        = true;
    rs->base.atomic_writes   = true;
    rs->base.no_consolidated = false;
    for (size_t i = 0; i < rs->ntg; i++)
        if (!rs->tg[i].deny && zarr_store_is_url(rs->tg[i].root))
            rs->base.prefers_batches = true;
    *out = &rs->base;
    rs   = NULL;
done:
    json_object_put(doc);
    zarr_buf_free(&text);
    zarr_store_close(dir);
    if (rs) {
        rs->base.ops = &ref_ops;
        ref_destroy(&rs->base);
    }
    return rc;
}

/* "reference://PATH" (ZARR__STORE_SCHEMES): the reference file at the local PATH. */
int
zarr__store_open_reference_url(const char *url, int flags, zarr_store **out)
{
    const char *path = url + 12;
    if (!*path)
        return zarr_error(ZARR_EINVAL, "can't open '%s': no reference file named after 'reference://'", url);
    if (zarr_store_is_url(path))
        return zarr_error(ZARR_EUNSUPPORTED, "can't open '%s': the reference file must be a local path", url);
    return zarr_store_open_ref(path, flags, out);
}
