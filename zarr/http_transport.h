/*
 * http_transport.h: the HTTP transport shared by the network stores (store_http.c, store_s3.c), on
 * libcurl's multi interface. One zarr__http per store: a connection cache, DNS cache and TLS session
 * cache shared by every request of the store (any thread), a bound on the requests in flight, and
 * retries with exponential backoff and full jitter on 5xx, 429, timeouts and dropped connections.
 * The transport moves bytes and reports statuses; the stores decide what a status means. No message
 * it formats ever holds a credential: the stores never put credentials in URLs, and the transport
 * names requests by the caller's `what` (a key), never by their headers.
 */
#ifndef H5ZARR_ZARR_HTTP_TRANSPORT_H
#define H5ZARR_ZARR_HTTP_TRANSPORT_H

#include "internal.h"

#include "netlib.h" /* libcurl, loaded by zarr__http_new */

typedef struct zarr__http zarr__http;

/* Settings of a transport, from the environment at zarr__http_new (README "Network stores"):
 *  H5ZARR_HTTP_INFLIGHT  requests in flight for one batch (1..256, default 128)
 *  H5ZARR_HTTP_RETRIES   retries of one request after a retryable failure (0..20, default 6)
 *  H5ZARR_HTTP_TIMEOUT   seconds an attempt may stall (no byte moved either way, checked by the
 *                        transport itself) before it is ended and retried (default 30)
 *  H5ZARR_HTTP_BACKOFF_MS first backoff in milliseconds (doubles each retry, capped at 5 s; default 50)
 *  H5ZARR_HTTP_LOG       1: one line on stderr per retry (method, `what`, status or curl error) */
typedef struct zarr__http_settings {
    int  inflight, retries, timeout_s, backoff_ms;
    bool log;
} zarr__http_settings;

enum { ZARR__HTTP_GET, ZARR__HTTP_HEAD, ZARR__HTTP_PUT, ZARR__HTTP_DELETE };

/* One request. The caller fills method..out; the transport fills status..curl_err. */
typedef struct zarr__http_req {
    int                method;  /* ZARR__HTTP_* */
    const char        *url;     /* borrowed; never holds credentials */
    const char        *what;    /* borrowed: what the request is for, in messages ("key 'a/zarr.json'") */
    const char        *range;   /* borrowed, or NULL: a Range header's value after "bytes=" ("0-99", "-16") */
    struct curl_slist *headers; /* borrowed extra headers, or NULL */
    const void        *body;    /* PUT: borrowed body of body_len bytes */
    size_t             body_len;
    zarr_buf          *out;      /* borrowed: the response body (reset first); NULL: read and dropped */
    uint64_t           max_body; /* refuse bodies longer than this (0: no bound) */
    bool               follow;   /* follow redirects (http and https only, at most 5) */
    /* out */
    long     status;              /* the final HTTP status, 0 if none came */
    uint64_t content_length;      /* Content-Length of the final response, UINT64_MAX if none */
    uint64_t range_total;         /* the total of a Content-Range "bytes a-b/total", UINT64_MAX if none */
    uint64_t range_first;         /* the first byte of a Content-Range, UINT64_MAX if none */
    int64_t  filetime;            /* Last-Modified (seconds since the epoch), -1 if none */
    int      attempts;            /* requests sent */
    int      result;              /* ZARR_OK: a response came (any status); else ZARR_EIO (message set) */
    char     effective_url_slash; /* the response came from a URL ending in '/' (a redirect to a folder) */
    /* private */
    zarr_buf   scratch;
    char       curl_err[CURL_ERROR_SIZE];
    size_t     put_off;
    int64_t    moved_ms; /* when a byte last moved (either way), CLOCK_MONOTONIC ms */
    curl_off_t moved_up; /* bytes moved by then */
    curl_off_t moved_down;
    int64_t    stall_ms; /* the stall limit (H5ZARR_HTTP_TIMEOUT) */
    bool       stalled;  /* the attempt was ended for it */
} zarr__http_req;

/* A new transport (`*out`, free with zarr__http_free) reading its settings from the environment.
 * `cred_userpwd` (borrowed, may be NULL) and `sigv4` (e.g. "aws:amz:us-east-1:s3", may be NULL) are
 * copied: every request is then signed with libcurl's SigV4. ZARR_EIO/ENOMEM with a message. */
int                        zarr__http_new(const char *sigv4, const char *cred_userpwd, zarr__http **out);
void                       zarr__http_free(zarr__http *h); /* accepts NULL; wipes the copied credentials */
const zarr__http_settings *zarr__http_settings_of(const zarr__http *h);

/* Runs `n` requests (borrowed), at most the `inflight` setting at once, each retried on 5xx, 429,
 * timeouts and dropped connections with backoff and jitter until it gets another answer or the retries
 * run out (then its last status or error stays). Every request's result says whether a response came;
 * returns ZARR_OK when every request got one, else the first failed request's result (its message:
 * method, `what`, the curl error, the attempts). */
int zarr__http_run(zarr__http *h, size_t n, zarr__http_req *reqs);

/* Total retries made by every transport of the process (tests and benchmarks). */
uint64_t zarr__http_retries_total(void);

/* The URL-encoding of `s` (n bytes) appended to `b`: every byte but A-Z a-z 0-9 - _ . ~ as %XX, and
 * '/' too unless keep_slash (AWS's canonical form). ZARR_ENOMEM on failure. */
int zarr__http_encode(zarr_buf *b, const char *s, size_t n, bool keep_slash);

/* A byte range of a value for a GET (a zarr_store_req's off/len/suffix): fills the Range header text
 * of `r` (into `text`, 64 bytes) or leaves r->range NULL for a whole value. Returns false when no
 * request can express it (an empty range: the caller asks for the size instead). */
bool zarr__http_range_text(zarr__http_req *r, uint64_t off, uint64_t len, bool suffix, char *text);
/* After a GET of a range set up by zarr__http_range_text that got a 200, 206 or 416: leaves exactly the
 * wanted bytes in r->out (a server that ignored the Range header sent the whole value: it is cut down)
 * and sets `*total` (the value's size when known, else UINT64_MAX). ZARR_ECODEC for a range past the
 * end of the value (message names `key` of `where`), ZARR_EIO for an answer that contradicts the
 * request (a 206 for other bytes). Only for statuses 200, 206 and 416. */
int zarr__http_range_take(zarr__http_req *r, uint64_t off, uint64_t len, bool suffix, const char *where,
                          const char *key, uint64_t *total);
/* After a HEAD of `key` (of the store at `url`) that the store judged a success: the value's size from
 * Content-Length into `*size` (ZARR_EIO when the answer has none) and its Last-Modified time into
 * `*mtime` (ZARR_EUNSUPPORTED when it has none); either may be NULL. */
int zarr__http_head_take(const zarr__http_req *r, const char *key, const char *url, uint64_t *size,
                         int64_t *mtime);
/* A store's batched read (zarr_store_ops.get_many) over HTTP: one GET per item (a Range for ranges and
 * suffixes, a HEAD for an empty range), all in one zarr__http_run, each answer judged by the store and
 * cut to the wanted bytes (zarr__http_range_take). A server that answers a suffix range with other
 * bytes than the value's end (some S3 look-alikes) gets a second request for the explicit range. */
typedef struct zarr__http_getter {
    zarr__http        *h;
    const char        *store_url; /* for messages */
    struct curl_slist *headers;   /* borrowed, for every request */
    bool               follow;    /* follow redirects */
    /* The URL of `key` (malloc'ed; NULL: out of memory). */
    char *(*url_of)(void *ctx, const char *key);
    /* ZARR_OK for an answer to take (2xx, 416), a bare ZARR_ENOTFOUND for an absent key, else an error
     * with a message naming the key (a transport failure: r->result is not ZARR_OK). */
    int (*judge)(void *ctx, const zarr__http_req *r, const char *key);
    void *ctx;
} zarr__http_getter;
int zarr__http_get_many(const zarr__http_getter *g, size_t n, zarr_store_req *reqs);

/* A few words for an HTTP status in messages ("not found", "access denied", ...; "" if none). */
const char *zarr__http_status_text(long status);

#endif
