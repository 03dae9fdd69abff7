/*
 * store_s3.c: the S3 store, "s3://bucket/path.zarr", read and write, on any S3-compatible server.
 * Account settings (credentials, region, endpoint, addressing) come from http_aws.c; every request is
 * signed with libcurl's SigV4 (CURLOPT_AWS_SIGV4, payload UNSIGNED-PAYLOAD) and runs on the shared
 * transport (http_transport.c: connection reuse, many in flight, retries). A key is the object
 * "<path>/<key>": get and ranges are (Range) GETs, size, exists and mtime HEADs, set a PUT (atomic
 * per object in S3), del a DELETE, list and list_keys ListObjectsV2 (paginated, with and without the
 * '/' delimiter), del_prefix and rename a listing and a batch of requests. get_many and set_many are
 * one batch each, and the store says prefers_batches so that the engine gathers a job's chunks.
 * Opening checks the bucket and the credentials with one listing request. Errors name the key, the
 * store URL, the HTTP status and the server's error code; never a credential.
 */
#define _GNU_SOURCE
#include "store_impl.h"
#include "http_aws.h"
#include "http_transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct s3_store {
    zarr_store         base;
    zarr__http        *h;
    char              *bucket;
    char              *root; /* object key prefix of the store, no leading or trailing '/' ("" = bucket) */
    char              *obj_base;  /* URL that an encoded object key is appended to (ends in '/') */
    char              *list_base; /* URL of the bucket for ListObjectsV2 (a query is appended) */
    char              *endpoint;  /* for messages */
    char              *cred_source;
    struct curl_slist *hdrs; /* x-amz-content-sha256, x-amz-security-token */
    int                max_keys;
} s3_store;

/* "<root>/<key>" (or key when the root is the bucket), malloc'ed. */
static char *
full_key(const s3_store *ss, const char *key)
{
    size_t r = strlen(ss->root), k = strlen(key);
    char  *p = malloc(r + k + 2);
    if (!p)
        return NULL;
    if (r) {
        memcpy(p, ss->root, r);
        p[r++] = '/';
    }
    memcpy(p + r, key, k + 1);
    return p;
}

static char *
obj_url(const s3_store *ss, const char *key)
{
    zarr_buf b  = ZARR_BUF_INIT;
    char    *fk = full_key(ss, key);
    if (!fk || zarr_buf_append(&b, ss->obj_base, strlen(ss->obj_base)) != ZARR_OK ||
        zarr__http_encode(&b, fk, strlen(fk), true) != ZARR_OK || zarr_buf_append(&b, "", 1) != ZARR_OK) {
        free(fk);
        zarr_buf_free(&b);
        return NULL;
    }
    free(fk);
    return (char *)b.data;
}

/* The outcome of a finished request on `key` (NULL: the bucket), as a store op returns it: ZARR_OK
 * for 2xx, a bare ZARR_ENOTFOUND for an absent key (not for an absent bucket), else an error naming
 * the key, the store, the status and the server's code and message. */
static int
judge(const s3_store *ss, const zarr__http_req *r, const char *key, const char *verb)
{
    char        code[64], msg[256];
    const char *t;
    char        what[600];

    if (key)
        snprintf(what, sizeof what, "%s key '%.300s' of '%.250s'", verb, key, ss->base.url);
    else
        snprintf(what, sizeof what, "%s '%.500s'", verb, ss->base.url);
    if (r->result != ZARR_OK)
        return zarr_error(r->result, "can't %s: %s (endpoint %s, %d attempt%s)", what,
                          r->curl_err[0] ? r->curl_err : "out of memory", ss->endpoint, r->attempts,
                          r->attempts == 1 ? "" : "s");
    if (r->status >= 200 && r->status < 300)
        return ZARR_OK;
    zarr__s3_error_parse(r->out ? r->out->data : NULL, r->out ? r->out->size : 0, code, sizeof code, msg,
                         sizeof msg);
    if (r->status == 404 && strcmp(code, "NoSuchBucket") == 0)
        return zarr_error(ZARR_EIO,
                          "can't %s: bucket '%s' does not exist at endpoint %s (HTTP 404 NoSuchBucket)", what,
                          ss->bucket, ss->endpoint);
    if (r->status == 404 && key)
        return ZARR_ENOTFOUND;
    t = zarr__http_status_text(r->status);
    if (r->status == 403 || r->status == 401)
        return zarr_error(ZARR_EIO, "can't %s: access denied (HTTP %ld%s%s%s%s) with %s at endpoint %s", what,
                          r->status, *code ? " " : "", code, *msg ? ": " : "", msg, ss->cred_source,
                          ss->endpoint);
    return zarr_error(ZARR_EIO, "can't %s: HTTP %ld%s%s%s%s%s%s%s (endpoint %s)", what, r->status,
                      *t ? " (" : "", t, *t ? ")" : "", *code ? " " : "", code, *msg ? ": " : "", msg,
                      ss->endpoint);
}

/* Request `r` for the object `key` (URL malloc'ed into r->url: free it). */
static int
req_init(const s3_store *ss, zarr__http_req *r, int method, const char *key, char *what, size_t nwhat)
{
    memset(r, 0, sizeof *r);
    snprintf(what, nwhat, "key '%.300s' of '%.300s'", key, ss->base.url);
    r->method  = method;
    r->what    = what;
    r->headers = ss->hdrs;
    if (!(r->url = obj_url(ss, key)))
        return zarr_error(ZARR_ENOMEM, "out of memory reaching key '%s' of '%s'", key, ss->base.url);
    return ZARR_OK;
}

/* ---- reads ------------------------------------------------------------------------------------------ */

typedef char what_t[640];

static char *
url_of(void *ctx, const char *key)
{
    return obj_url(ctx, key);
}

static int
judge_read(void *ctx, const zarr__http_req *r, const char *key)
{
    if (r->result == ZARR_OK && r->status == 416)
        return ZARR_OK; /* a range past the end: zarr__http_range_take says so */
    return judge(ctx, r, key, "read");
}

/* One batch: (Range) GETs of the items, as zarr_store_get_many fills them. */
static int
s3_get_many(zarr_store *s, size_t n, zarr_store_req *reqs)
{
    s3_store         *ss = (s3_store *)s;
    zarr__http_getter g  = {ss->h, s->url, ss->hdrs, false, url_of, judge_read, ss};
    return zarr__http_get_many(&g, n, reqs);
}

static int
s3_get(zarr_store *s, const char *key, zarr_buf *out)
{
    zarr_store_req q = {key, 0, UINT64_MAX, false, out, UINT64_MAX, 0};
    return s3_get_many(s, 1, &q);
}

static int
s3_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    zarr_store_req q = {key, off, len, false, out, UINT64_MAX, 0};
    return s3_get_many(s, 1, &q);
}

static int
s3_head(zarr_store *s, const char *key, uint64_t *size, int64_t *mtime)
{
    s3_store      *ss = (s3_store *)s;
    zarr__http_req r;
    what_t         what;
    int            rc;

    if ((rc = req_init(ss, &r, ZARR__HTTP_HEAD, key, what, sizeof what)) != ZARR_OK)
        return rc;
    (void)zarr__http_run(ss->h, 1, &r);
    free((char *)r.url);
    if ((rc = judge(ss, &r, key, "look up")) != ZARR_OK)
        return rc;
    return zarr__http_head_take(&r, key, s->url, size, mtime);
}

static int
s3_size(zarr_store *s, const char *key, uint64_t *size)
{
    return s3_head(s, key, size, NULL);
}

static int
s3_exists(zarr_store *s, const char *key)
{
    return s3_head(s, key, NULL, NULL);
}

static int
s3_mtime(zarr_store *s, const char *key, int64_t *sec)
{
    return s3_head(s, key, NULL, sec);
}

/* ---- writes ----------------------------------------------------------------------------------------- */

/* PUTs (method ZARR__HTTP_PUT) or DELETEs of `n` keys in one batch; results[i] per key. */
static int
s3_send_many(s3_store *ss, int method, size_t n, const char *const *keys, const void *const *data,
             const size_t *sizes, int *results)
{
    zarr__http_req *hr     = NULL;
    what_t         *whats  = NULL;
    zarr_buf       *bodies = NULL; /* error documents */
    int             rc = ZARR_OK, first = ZARR_OK;
    char            saved[1024] = "";

    if (n == 0)
        return ZARR_OK;
    if (!(hr = calloc(n, sizeof *hr)) || !(whats = calloc(n, sizeof *whats)) ||
        !(bodies = calloc(n, sizeof *bodies)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory writing %zu keys of '%s'", n, ss->base.url);
    for (size_t i = 0; i < n; i++) {
        ZARR_TRY(req_init(ss, &hr[i], method, keys[i], whats[i], sizeof whats[i]));
        hr[i].out      = &bodies[i];
        hr[i].max_body = 1u << 20;
        if (method == ZARR__HTTP_PUT) {
            hr[i].body     = data[i];
            hr[i].body_len = sizes[i];
        }
    }
    if ((rc = zarr__http_run(ss->h, n, hr)) == ZARR_ENOMEM)
        goto done;
    rc = ZARR_OK;
    for (size_t i = 0; i < n; i++) {
        int r = judge(ss, &hr[i], keys[i], method == ZARR__HTTP_PUT ? "write" : "delete");
        if (r == ZARR_ENOTFOUND && method == ZARR__HTTP_DELETE)
            r = ZARR_OK; /* absent already */
        else if (r == ZARR_ENOTFOUND)
            r = zarr_error(ZARR_EIO, "can't write key '%s' of '%s': HTTP 404", keys[i], ss->base.url);
        if (results)
            results[i] = r;
        if (r != ZARR_OK && !saved[0])
            zarr_error_save(saved, sizeof saved);
        if (r != ZARR_OK && first == ZARR_OK)
            first = r;
    }
    rc = first;
    if (saved[0])
        zarr_error_restore(rc, saved);
done:
    if (hr)
        for (size_t i = 0; i < n; i++) {
            free((char *)hr[i].url);
            zarr_buf_free(&bodies[i]);
        }
    free(hr);
    free(whats);
    free(bodies);
    return rc;
}

static int
s3_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data, const size_t *sizes,
            int *results)
{
    return s3_send_many((s3_store *)s, ZARR__HTTP_PUT, n, keys, data, sizes, results);
}

static int
s3_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    int r;
    return s3_send_many((s3_store *)s, ZARR__HTTP_PUT, 1, &key, &data, &n, &r);
}

static int
s3_del_many(zarr_store *s, size_t n, const char *const *keys, int *results)
{
    return s3_send_many((s3_store *)s, ZARR__HTTP_DELETE, n, keys, NULL, NULL, results);
}

static int
s3_del(zarr_store *s, const char *key)
{
    int r;
    return s3_send_many((s3_store *)s, ZARR__HTTP_DELETE, 1, &key, NULL, NULL, &r);
}

/* ---- listings ----------------------------------------------------------------------------------------- */

/* Walks ListObjectsV2 pages of the objects below "<root>/<prefix>/" (prefix "" = the store), with the
 * '/' delimiter or without; `page` gets each page (keys as the server sent them). */
static int
list_pages(s3_store *ss, const char *prefix, bool delim, int (*page)(s3_store *, zarr__s3_list *, void *),
           void *ud)
{
    char    *fp = NULL, *token = NULL;
    zarr_buf q = ZARR_BUF_INIT, body = ZARR_BUF_INIT;
    int      rc = ZARR_OK;
    char     mk[32];

    if (*prefix) {
        size_t k = strlen(prefix);
        if (!(fp = malloc(strlen(ss->root) + k + 3)))
            return zarr_error(ZARR_ENOMEM, "out of memory listing '%s'", ss->base.url);
        sprintf(fp, "%s%s%s/", ss->root, *ss->root ? "/" : "", prefix);
    }
    else {
        if (!(fp = malloc(strlen(ss->root) + 2)))
            return zarr_error(ZARR_ENOMEM, "out of memory listing '%s'", ss->base.url);
        sprintf(fp, "%s%s", ss->root, *ss->root ? "/" : "");
    }
    snprintf(mk, sizeof mk, "&max-keys=%d", ss->max_keys);
    for (unsigned pages = 0;; pages++) {
        zarr__http_req r = {0};
        zarr__s3_list  l = {0};
        char           what[700];
        if (pages > 10000000)
            ZARR_FAIL(ZARR_EIO, "listing '%s': more than 10^7 pages", ss->base.url);
        q.size = 0;
        /* the query in canonical (sorted, encoded) form, as SigV4 signs it */
        ZARR_TRY(zarr_buf_append(&q, ss->list_base, strlen(ss->list_base)));
        ZARR_TRY(zarr_buf_append(&q, "?", 1));
        if (token) {
            ZARR_TRY(zarr_buf_append(&q, "continuation-token=", 19));
            ZARR_TRY(zarr__http_encode(&q, token, strlen(token), false));
            ZARR_TRY(zarr_buf_append(&q, "&", 1));
        }
        if (delim)
            ZARR_TRY(zarr_buf_append(&q, "delimiter=%2F&", 14));
        ZARR_TRY(zarr_buf_append(&q, "list-type=2", 11));
        if (ss->max_keys)
            ZARR_TRY(zarr_buf_append(&q, mk, strlen(mk)));
        ZARR_TRY(zarr_buf_append(&q, "&prefix=", 8));
        ZARR_TRY(zarr__http_encode(&q, fp, strlen(fp), false));
        ZARR_TRY(zarr_buf_append(&q, "", 1));
        snprintf(what, sizeof what, "the listing of '%.300s' in '%.300s'", prefix, ss->base.url);
        r.method   = ZARR__HTTP_GET;
        r.url      = (const char *)q.data;
        r.what     = what;
        r.headers  = ss->hdrs;
        r.out      = &body;
        r.max_body = 64u << 20;
        (void)zarr__http_run(ss->h, 1, &r);
        if (r.result == ZARR_OK && r.status == 404) {
            ZARR_TRY(judge(ss, &r, NULL, "list"));
            ZARR_FAIL(ZARR_EIO, "can't list '%s': HTTP 404", ss->base.url);
        }
        ZARR_TRY(judge(ss, &r, NULL, "list"));
        if ((rc = zarr__s3_list_parse(body.data, body.size, ss->base.url, &l)) == ZARR_OK)
            rc = page(ss, &l, ud);
        if (rc == ZARR_OK && l.truncated && token && strcmp(token, l.next) == 0)
            rc = zarr_error(ZARR_EIO, "listing '%s': the server repeated a continuation token", ss->base.url);
        free(token);
        token = NULL;
        if (rc == ZARR_OK && l.truncated) {
            token  = l.next;
            l.next = NULL;
        }
        zarr__s3_list_free(&l);
        if (rc != ZARR_OK || !token)
            break;
    }
done:
    free(fp);
    free(token);
    zarr_buf_free(&q);
    zarr_buf_free(&body);
    return rc;
}

/* The key relative to the store root of an object key from a listing, or NULL when it is not below it. */
static const char *
rel_key(const s3_store *ss, const char *k)
{
    size_t r = strlen(ss->root);
    if (!r)
        return k;
    if (strncmp(k, ss->root, r) != 0 || k[r] != '/')
        return NULL;
    return k + r + 1;
}

typedef struct list_ud {
    const char    *prefix;
    zarr__children kids;
    zarr_key_cb    kcb;
    void          *ud;
} list_ud;

static int
children_page(s3_store *ss, zarr__s3_list *l, void *ud)
{
    list_ud *u  = ud;
    size_t   pl = strlen(u->prefix);
    int      rc;
    for (size_t i = 0; i < l->nkeys; i++) {
        const char *k = rel_key(ss, l->keys[i]);
        if (k && (rc = zarr__children_add(&u->kids, u->prefix, pl, k)) != ZARR_OK)
            return rc;
    }
    for (size_t i = 0; i < l->nprefixes; i++) {
        const char *k = rel_key(ss, l->prefixes[i]);
        if (k && (rc = zarr__children_add(&u->kids, u->prefix, pl, k)) != ZARR_OK)
            return rc;
    }
    return ZARR_OK;
}

static int
s3_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud)
{
    list_ud u = {prefix, {0}, NULL, NULL};
    int     rc;
    if ((rc = list_pages((s3_store *)s, prefix, true, children_page, &u)) != ZARR_OK) {
        zarr__children_free(&u.kids);
        return rc;
    }
    return zarr__children_emit(&u.kids, cb, ud);
}

static int
keys_page(s3_store *ss, zarr__s3_list *l, void *ud)
{
    list_ud *u = ud;
    int      rc;
    for (size_t i = 0; i < l->nkeys; i++) {
        const char *k = rel_key(ss, l->keys[i]);
        if (!k || zarr__store_check_key(k, false) != ZARR_OK) { /* folder markers "a/", foreign names */
            zarr_error_clear();
            continue;
        }
        if ((rc = u->kcb(k, l->sizes[i], u->ud)) != 0)
            return rc;
    }
    return ZARR_OK;
}

static int
s3_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud)
{
    list_ud u = {prefix, {0}, cb, ud};
    return list_pages((s3_store *)s, prefix, false, keys_page, &u);
}

/* ---- del_prefix and rename: a listing, then batches ------------------------------------------------ */

typedef struct key_list {
    char **v;
    size_t n, cap;
} key_list;

static int
collect_key(const char *key, uint64_t size, void *ud)
{
    key_list *l = ud;
    (void)size;
    if (l->n == l->cap) {
        size_t c  = l->cap ? 2 * l->cap : 64;
        char **nv = realloc(l->v, c * sizeof *nv);
        if (!nv)
            return zarr_error(ZARR_ENOMEM, "out of memory listing keys");
        l->v   = nv;
        l->cap = c;
    }
    if (!(l->v[l->n] = strdup(key)))
        return zarr_error(ZARR_ENOMEM, "out of memory listing keys");
    l->n++;
    return 0;
}

static void
key_list_free(key_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

/* Every key below `prefix` and `prefix` itself when it is a value. */
static int
keys_of(zarr_store *s, const char *prefix, key_list *l)
{
    int rc = s3_list_keys(s, prefix, collect_key, l);
    if (rc == ZARR_OK && *prefix && (rc = s3_exists(s, prefix)) == ZARR_OK)
        rc = collect_key(prefix, 0, l);
    return rc == ZARR_ENOTFOUND ? ZARR_OK : rc;
}

static int
s3_del_prefix(zarr_store *s, const char *prefix)
{
    key_list l  = {0};
    int      rc = keys_of(s, prefix, &l);
    for (size_t i = 0; rc == ZARR_OK && i < l.n; i += 256) {
        size_t k = l.n - i < 256 ? l.n - i : 256;
        rc =
            s3_send_many((s3_store *)s, ZARR__HTTP_DELETE, k, (const char *const *)l.v + i, NULL, NULL, NULL);
    }
    key_list_free(&l);
    return rc;
}

/* Copies every key below `from` (and `from` itself) to the same place below `to`, then deletes the
 * originals: not atomic (S3 has no rename); a failure leaves the originals in place. */
static int
s3_rename(zarr_store *s, const char *from, const char *to)
{
    key_list l  = {0};
    zarr_buf b  = ZARR_BUF_INIT;
    size_t   fl = strlen(from), tl = strlen(to);
    int      rc = keys_of(s, from, &l);

    for (size_t i = 0; rc == ZARR_OK && i < l.n; i++) {
        char *nk = malloc(tl + strlen(l.v[i] + fl) + 1);
        if (!nk) {
            rc = zarr_error(ZARR_ENOMEM, "out of memory renaming '%s'", from);
            break;
        }
        sprintf(nk, "%s%s", to, l.v[i] + fl);
        if ((rc = s3_get(s, l.v[i], &b)) == ZARR_ENOTFOUND)
            rc = zarr_error(ZARR_ENOTFOUND, "can't rename key '%s' of '%s': it went away", l.v[i], s->url);
        if (rc == ZARR_OK)
            rc = s3_set(s, nk, b.data, b.size);
        free(nk);
    }
    for (size_t i = 0; rc == ZARR_OK && i < l.n; i += 256) {
        size_t k = l.n - i < 256 ? l.n - i : 256;
        rc =
            s3_send_many((s3_store *)s, ZARR__HTTP_DELETE, k, (const char *const *)l.v + i, NULL, NULL, NULL);
    }
    if (rc == ZARR_OK && l.n == 0)
        rc = zarr_error(ZARR_ENOTFOUND, "can't rename '%s' of '%s': no such key", from, s->url);
    zarr_buf_free(&b);
    key_list_free(&l);
    return rc;
}

/* ---- open and close --------------------------------------------------------------------------------- */

static void
s3_free(s3_store *ss)
{
    if (!ss)
        return;
    zarr__http_free(ss->h);
    for (struct curl_slist *x = ss->hdrs; x; x = x->next)
        explicit_bzero(x->data, strlen(x->data)); /* the session token */
    zarr__curl.slist_free_all(ss->hdrs);
    free(ss->bucket);
    free(ss->root);
    free(ss->obj_base);
    free(ss->list_base);
    free(ss->endpoint);
    free(ss->cred_source);
    free(ss->base.url);
    free(ss);
}

static void
s3_destroy(zarr_store *s)
{
    s3_free((s3_store *)s);
}

static const zarr_store_ops s3_ops = {
    .name       = "s3",
    .get        = s3_get,
    .get_range  = s3_get_range,
    .set        = s3_set,
    .del        = s3_del,
    .del_many   = s3_del_many,
    .del_prefix = s3_del_prefix,
    .list       = s3_list,
    .exists     = s3_exists,
    .get_many   = s3_get_many,
    .set_many   = s3_set_many,
    .rename     = s3_rename,
    .destroy    = s3_destroy,
    .mtime      = s3_mtime,
    .size       = s3_size,
    .list_keys  = s3_list_keys,
};

static bool
bucket_ok(const char *b, size_t n)
{
    if (n < 1 || n > 255)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
              c == '.' || c == '_'))
            return false;
    }
    return b[0] != '.' && b[0] != '-';
}

/* The endpoint's scheme ("http://", "https://") and the rest. */
static const char *
after_scheme(const char *ep)
{
    return strstr(ep, "://") + 3;
}

/* The bucket check of an open: one listing request of at most one key. */
static int
probe(s3_store *ss)
{
    zarr__http_req r = {0};
    zarr_buf       q = ZARR_BUF_INIT, body = ZARR_BUF_INIT;
    char           what[600];
    int            rc   = ZARR_OK;
    size_t         rlen = strlen(ss->root);

    ZARR_TRY(zarr_buf_append(&q, ss->list_base, strlen(ss->list_base)));
    ZARR_TRY(zarr_buf_append(&q, "?list-type=2&max-keys=1&prefix=", 31));
    ZARR_TRY(zarr__http_encode(&q, ss->root, rlen, false));
    if (rlen)
        ZARR_TRY(zarr_buf_append(&q, "%2F", 3));
    ZARR_TRY(zarr_buf_append(&q, "", 1));
    snprintf(what, sizeof what, "the bucket of '%.500s'", ss->base.url);
    r.method   = ZARR__HTTP_GET;
    r.url      = (const char *)q.data;
    r.what     = what;
    r.headers  = ss->hdrs;
    r.out      = &body;
    r.max_body = 1u << 20;
    (void)zarr__http_run(ss->h, 1, &r);
    if ((rc = judge(ss, &r, NULL, "open")) == ZARR_OK && r.status == 404) /* not reached: judge says */
        rc = ZARR_EIO;
done:
    if (rc == ZARR_ENOMEM)
        rc = zarr_error(ZARR_ENOMEM, "out of memory opening '%s'", ss->base.url);
    zarr_buf_free(&q);
    zarr_buf_free(&body);
    return rc;
}

int
zarr__store_open_s3(const char *url, int flags, zarr_store **out)
{
    s3_store   *ss      = NULL;
    zarr__aws   aws     = {0};
    const char *b       = url + 5, *slash;
    char       *userpwd = NULL, sigv4[96], *ep = NULL;
    size_t      bn, n;
    int         rc = ZARR_OK;

    *out = NULL;
    if (strncasecmp(url, "s3://", 5) != 0)
        return zarr_error(ZARR_EINVAL, "can't open '%s': not an s3:// URL", url);
    if ((rc = zarr__netlib_curl()) != ZARR_OK) /* before the first curl_slist */
        return zarr_error_wrap(rc, "can't open '%s': ", url);
    slash = strchr(b, '/');
    bn    = slash ? (size_t)(slash - b) : strlen(b);
    if (!bucket_ok(b, bn))
        return zarr_error(ZARR_EINVAL,
                          "can't open '%s': '%.*s' is not a bucket name (letters, digits, '-', '.', '_')",
                          url, (int)(bn > 255 ? 255 : bn), b);
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == '?' || *p == '#' || *p == '\\' || *p == 0x7f)
            return zarr_error(ZARR_EINVAL,
                              "can't open '%s': S3 store URLs may not hold a query, a fragment, "
                              "spaces, backslashes or control characters",
                              url);
    if (!(ss = calloc(1, sizeof *ss)) || !(ss->base.url = strdup(url)) || !(ss->bucket = strndup(b, bn)) ||
        !(ss->root = strdup(slash ? slash + 1 : "")))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory opening '%s'", url);
    for (n = strlen(ss->root); n && ss->root[n - 1] == '/'; n--)
        ss->root[n - 1] = '\0';
    if (*ss->root && zarr__store_check_key(ss->root, false) != ZARR_OK)
        ZARR_FAIL(ZARR_EINVAL, "can't open '%s': its path '%s' has empty, '.' or '..' components", url,
                  ss->root);
    if ((rc = zarr__aws_load(&aws)) != ZARR_OK) {
        rc = zarr_error_wrap(rc, "can't open '%s': ", url);
        goto done;
    }
    if (aws.endpoint) {
        ep           = aws.endpoint;
        aws.endpoint = NULL;
    }
    else if (asprintf(&ep, "https://s3.%s.amazonaws.com", aws.region) < 0)
        ZARR_FAIL(ZARR_ENOMEM, "out of memory opening '%s'", url);
    ss->endpoint = ep;
    if (aws.addressing == ZARR__AWS_ADDR_AUTO) {
        bool lower = true;
        for (size_t i = 0; i < bn; i++)
            lower = lower && !(b[i] >= 'A' && b[i] <= 'Z') && b[i] != '_' && b[i] != '.';
        aws.addressing = strstr(ep, ".amazonaws.com") && lower ? ZARR__AWS_ADDR_VIRTUAL : ZARR__AWS_ADDR_PATH;
    }
    {
        const char *host = after_scheme(ep);
        int         sl   = (int)(host - ep);
        int         k;
        if (aws.addressing == ZARR__AWS_ADDR_VIRTUAL)
            k = asprintf(&ss->obj_base, "%.*s%s.%s/", sl, ep, ss->bucket, host) < 0 ||
                asprintf(&ss->list_base, "%.*s%s.%s/", sl, ep, ss->bucket, host) < 0;
        else
            k = asprintf(&ss->obj_base, "%s/%s/", ep, ss->bucket) < 0 ||
                asprintf(&ss->list_base, "%s/%s", ep, ss->bucket) < 0;
        if (k)
            ZARR_FAIL(ZARR_ENOMEM, "out of memory opening '%s'", url);
    }
    if (!(ss->cred_source = strdup(aws.cred_source)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory opening '%s'", url);
    if (!(ss->hdrs = zarr__curl.slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD")))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory opening '%s'", url);
    if (aws.token) {
        char              *t = NULL;
        struct curl_slist *x;
        if (asprintf(&t, "x-amz-security-token: %s", aws.token) < 0 ||
            !(x = zarr__curl.slist_append(ss->hdrs, t))) {
            if (t) {
                explicit_bzero(t, strlen(t));
                free(t);
            }
            ZARR_FAIL(ZARR_ENOMEM, "out of memory opening '%s'", url);
        }
        explicit_bzero(t, strlen(t));
        free(t);
        ss->hdrs = x;
    }
    if (aws.key_id) {
        if (asprintf(&userpwd, "%s:%s", aws.key_id, aws.secret) < 0)
            ZARR_FAIL(ZARR_ENOMEM, "out of memory opening '%s'", url);
        snprintf(sigv4, sizeof sigv4, "aws:amz:%s:s3", aws.region);
    }
    {
        const char *mk = getenv("H5ZARR_S3_MAX_KEYS"); /* smaller listing pages (tests of pagination) */
        ss->max_keys   = mk && atoi(mk) > 0 && atoi(mk) <= 1000 ? atoi(mk) : 0;
    }
    ZARR_TRY(zarr__http_new(aws.key_id ? sigv4 : NULL, userpwd, &ss->h));
    ss->base.ops             = &s3_ops;
    ss->base.refcount        = 1;
    ss->base.readonly        = !(flags & (ZARR_STORE_RDWR | ZARR_STORE_CREATE));
    ss->base.atomic_writes   = true;
    ss->base.prefers_batches = true;
    ZARR_TRY(probe(ss));
    *out = &ss->base;
    ss   = NULL;
done:
    if (userpwd) {
        explicit_bzero(userpwd, strlen(userpwd));
        free(userpwd);
    }
    zarr__aws_fini(&aws);
    s3_free(ss);
    return rc;
}
