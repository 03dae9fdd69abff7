/*
 * store_http.c: the read-only HTTP(S) store: "http://host/path.zarr" and "https://..." served by any
 * static file server. A key is the URL "<base>/<key>" (URL-encoded, '/' kept): get is a GET, ranges
 * and suffixes are Range GETs (a server that ignores Range sends the whole value, which is cut down),
 * size and exists are HEADs, get_many runs one batch of requests on the shared transport
 * (http_transport.c: many in flight, retries). 404 and 410 are absent keys; so is a redirect to a
 * folder (a server's listing page is not a value). HTTP has no listing: list and list_keys are
 * ZARR_EUNSUPPORTED, and hierarchies are read through consolidated metadata (v3 root zarr.json, v2
 * .zmetadata) and known keys. Every write op is ZARR_EREADONLY.
 */
#include "store_impl.h"
#include "http_transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct http_store {
    zarr_store  base;
    zarr__http *h;
    char       *root; /* the URL without a trailing '/' (owned) */
} http_store;

/* The URL of `key` (malloc'ed, NULL when out of memory). */
static char *
key_url(http_store *hs, const char *key)
{
    zarr_buf b = ZARR_BUF_INIT;
    if (zarr_buf_append(&b, hs->root, strlen(hs->root)) != ZARR_OK ||
        zarr_buf_append(&b, "/", 1) != ZARR_OK || zarr__http_encode(&b, key, strlen(key), true) != ZARR_OK ||
        zarr_buf_append(&b, "", 1) != ZARR_OK) {
        zarr_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}

/* The outcome of a finished request for `key`, as a store op returns it: ZARR_OK for 2xx, a bare
 * ZARR_ENOTFOUND for an absent key, else ZARR_EIO naming the key and the status. */
static int
judge(http_store *hs, zarr__http_req *r, const char *key, const char *verb)
{
    const char *t;
    if (r->result != ZARR_OK)
        return zarr_error(r->result, "can't %s key '%s' of '%s': %s (%d attempt%s)", verb, key, hs->base.url,
                          r->curl_err[0] ? r->curl_err : "out of memory", r->attempts,
                          r->attempts == 1 ? "" : "s");
    if (r->status == 404 || r->status == 410 ||
        ((r->status == 200 || r->status == 206) && r->effective_url_slash))
        return ZARR_ENOTFOUND;
    if (r->status >= 200 && r->status < 300)
        return ZARR_OK;
    t = zarr__http_status_text(r->status);
    return zarr_error(ZARR_EIO, "can't %s key '%s' of '%s': HTTP %ld%s%s%s", verb, key, hs->base.url,
                      r->status, *t ? " (" : "", t, *t ? ")" : "");
}

static char *
url_of(void *ctx, const char *key)
{
    return key_url(ctx, key);
}

static int
judge_read(void *ctx, const zarr__http_req *r, const char *key)
{
    http_store *hs = ctx;
    if (r->result == ZARR_OK && r->status == 416)
        return ZARR_OK; /* a range past the end: zarr__http_range_take says so */
    return judge(hs, (zarr__http_req *)r, key, "read");
}

/* One batch: GETs (ranges, suffixes) of the items, as zarr_store_get_many fills them. */
static int
http_get_many(zarr_store *s, size_t n, zarr_store_req *reqs)
{
    http_store       *hs = (http_store *)s;
    zarr__http_getter g  = {hs->h, s->url, NULL, true, url_of, judge_read, hs};
    return zarr__http_get_many(&g, n, reqs);
}

static int
http_get(zarr_store *s, const char *key, zarr_buf *out)
{
    zarr_store_req q = {key, 0, UINT64_MAX, false, out, UINT64_MAX, 0};
    return http_get_many(s, 1, &q);
}

static int
http_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    zarr_store_req q = {key, off, len, false, out, UINT64_MAX, 0};
    return http_get_many(s, 1, &q);
}

/* A HEAD of `key`: its size. */
static int
http_head(zarr_store *s, const char *key, uint64_t *size, int64_t *mtime)
{
    http_store    *hs = (http_store *)s;
    zarr__http_req r  = {0};
    char           what[1024];
    int            rc;

    snprintf(what, sizeof what, "key '%.400s' of '%.400s'", key, s->url);
    if (!(r.url = key_url(hs, key)))
        return zarr_error(ZARR_ENOMEM, "out of memory reading key '%s' of '%s'", key, s->url);
    r.method = ZARR__HTTP_HEAD;
    r.what   = what;
    r.follow = true;
    rc       = zarr__http_run(hs->h, 1, &r);
    free((char *)r.url);
    if (rc == ZARR_OK && (rc = judge(hs, &r, key, "look up")) == ZARR_OK)
        rc = zarr__http_head_take(&r, key, s->url, size, mtime);
    return rc;
}

static int
http_size(zarr_store *s, const char *key, uint64_t *size)
{
    return http_head(s, key, size, NULL);
}

static int
http_exists(zarr_store *s, const char *key)
{
    return http_head(s, key, NULL, NULL);
}

static int
http_mtime(zarr_store *s, const char *key, int64_t *sec)
{
    return http_head(s, key, NULL, sec);
}

static int
http_readonly(zarr_store *s, const char *what)
{
    return zarr_error(ZARR_EREADONLY, "can't %s in '%s': HTTP stores are read-only (use s3:// to write)",
                      what, s->url);
}

static int
http_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    return http_readonly(s, "write");
}

static int
http_del(zarr_store *s, const char *key)
{
    return http_readonly(s, "delete");
}

static int
http_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud)
{
    return zarr_error(ZARR_EUNSUPPORTED,
                      "can't list '%s' of '%s': HTTP servers can't list keys (open the store read-only with "
                      "consolidated metadata, or name the keys)",
                      prefix, s->url);
}

static int
http_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud)
{
    return http_list(s, prefix, NULL, NULL);
}

static void
http_destroy(zarr_store *s)
{
    http_store *hs = (http_store *)s;
    zarr__http_free(hs->h);
    free(hs->root);
    free(s->url);
    free(hs);
}

static const zarr_store_ops http_ops = {
    .name       = "http",
    .get        = http_get,
    .get_range  = http_get_range,
    .set        = http_set,
    .del        = http_del,
    .del_prefix = http_del,
    .list       = http_list,
    .exists     = http_exists,
    .get_many   = http_get_many,
    .destroy    = http_destroy,
    .mtime      = http_mtime,
    .size       = http_size,
    .list_keys  = http_list_keys,
};

int
zarr__store_open_http(const char *url, int flags, zarr_store **out)
{
    http_store *hs = NULL;
    const char *host, *p;
    size_t      n;
    int         rc = ZARR_OK;

    *out = NULL;
    if (flags & (ZARR_STORE_RDWR | ZARR_STORE_CREATE))
        return zarr_error(ZARR_EREADONLY,
                          "can't open '%s' for writing: HTTP stores are read-only (use s3:// to write)", url);
    host = strstr(url, "://") + 3;
    n    = strcspn(host, "/?#");
    if (n == 0)
        return zarr_error(ZARR_EINVAL, "can't open '%s': no host in the URL", url);
    if (memchr(host, '@', n))
        return zarr_error(
            ZARR_EINVAL,
            "can't open an HTTP URL with a user name or password in it (credentials are never taken "
            "from URLs)");
    for (p = url; *p; p++)
        if (*p == '?' || *p == '#' || (unsigned char)*p <= ' ' || *p == 0x7f)
            return zarr_error(ZARR_EINVAL,
                              "can't open '%s': HTTP store URLs may not hold a query, a fragment, "
                              "spaces or control characters",
                              url);
    if (!(hs = calloc(1, sizeof *hs)) || !(hs->root = strdup(url)) || !(hs->base.url = strdup(url)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory opening '%s'", url);
    for (n = strlen(hs->root); n > (size_t)(host - url) && hs->root[n - 1] == '/'; n--)
        hs->root[n - 1] = '\0';
    ZARR_TRY(zarr__http_new(NULL, NULL, &hs->h));
    hs->base.ops             = &http_ops;
    hs->base.refcount        = 1;
    hs->base.readonly        = true;
    hs->base.atomic_writes   = true;
    hs->base.prefers_batches = true;
    *out                     = &hs->base;
    hs                       = NULL;
done:
    if (hs) {
        zarr__http_free(hs->h);
        free(hs->root);
        free(hs->base.url);
        free(hs);
    }
    return rc;
}
