/*
 * http_transport.c: the HTTP transport of the network stores (http_transport.h). A batch of requests
 * runs on one libcurl multi handle, at most `inflight` at a time; every easy handle of a transport
 * shares one connection, DNS and TLS-session cache (a CURLSH with a lock per data kind), so requests
 * from any thread and any batch reuse the connections. A request that fails in a way worth repeating
 * (a 5xx or 429 status, a timeout, a refused, reset or dropped connection, a short body) is sent again
 * after a backoff that doubles each time (capped at 5 s) with full jitter; every other answer is the
 * caller's to judge. Credentials are only ever given to libcurl (CURLOPT_USERPWD for SigV4), never
 * put in a message, a URL or a log line.
 */
#define _GNU_SOURCE
#include "http_transport.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct zarr__http {
    CURLSH             *share;
    pthread_mutex_t     locks[CURL_LOCK_DATA_LAST];
    zarr__http_settings set;
    char               *sigv4;   /* owned, or NULL */
    char               *userpwd; /* owned secret, or NULL: wiped at free */
    pthread_mutex_t     pool_lock;
    CURL              **pool; /* idle easy handles, reused */
    size_t              npool, cappool;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode       global_rc;
static uint64_t       retries_total; /* atomic */

static void
global_init(void)
{
    global_rc = zarr__curl.global_init(CURL_GLOBAL_DEFAULT);
}

uint64_t
zarr__http_retries_total(void)
{
    return __atomic_load_n(&retries_total, __ATOMIC_RELAXED);
}

static void
share_lock(CURL *e, curl_lock_data data, curl_lock_access access, void *ud)
{
    zarr__http *h = ud;
    (void)e;
    (void)access;
    if (data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_lock(&h->locks[data]);
}

static void
share_unlock(CURL *e, curl_lock_data data, void *ud)
{
    zarr__http *h = ud;
    (void)e;
    if (data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_unlock(&h->locks[data]);
}

/* An integer setting from the environment, clamped to lo..hi; `dflt` when unset or malformed. */
static int
env_int(const char *name, int lo, int hi, int dflt)
{
    const char *v = getenv(name);
    char       *end;
    long        x;
    if (!v || !*v)
        return dflt;
    errno = 0;
    x     = strtol(v, &end, 10);
    if (errno || *end)
        return dflt;
    return x < lo ? lo : x > hi ? hi : (int)x;
}

int
zarr__http_new(const char *sigv4, const char *cred_userpwd, zarr__http **out)
{
    zarr__http *h;
    int         rc = ZARR_OK;

    *out = NULL;
    if ((rc = zarr__netlib_curl()) != ZARR_OK)
        return rc;
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return zarr_error(ZARR_EIO, "can't initialise libcurl: %s", zarr__curl.easy_strerror(global_rc));
    if (!(h = calloc(1, sizeof *h)))
        return zarr_error(ZARR_ENOMEM, "out of memory making an HTTP transport");
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&h->locks[i], NULL);
    pthread_mutex_init(&h->pool_lock, NULL);
    h->set.inflight   = env_int("H5ZARR_HTTP_INFLIGHT", 1, 256, 128);
    h->set.retries    = env_int("H5ZARR_HTTP_RETRIES", 0, 20, 6);
    h->set.timeout_s  = env_int("H5ZARR_HTTP_TIMEOUT", 1, 3600, 30);
    h->set.backoff_ms = env_int("H5ZARR_HTTP_BACKOFF_MS", 1, 5000, 50);
    h->set.log        = env_int("H5ZARR_HTTP_LOG", 0, 1, 0) == 1;
    if ((sigv4 && !(h->sigv4 = strdup(sigv4))) || (cred_userpwd && !(h->userpwd = strdup(cred_userpwd))))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory making an HTTP transport");
    if (!(h->share = zarr__curl.share_init()))
        ZARR_FAIL(ZARR_EIO, "can't make libcurl's shared connection cache");
    zarr__curl.share_setopt(h->share, CURLSHOPT_LOCKFUNC, share_lock);
    zarr__curl.share_setopt(h->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    zarr__curl.share_setopt(h->share, CURLSHOPT_USERDATA, h);
    zarr__curl.share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    zarr__curl.share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    zarr__curl.share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
done:
    if (rc != ZARR_OK)
        zarr__http_free(h);
    else
        *out = h;
    return rc;
}

void
zarr__http_free(zarr__http *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->npool; i++)
        zarr__curl.easy_cleanup(h->pool[i]); /* before the share they use */
    free(h->pool);
    if (h->share)
        zarr__curl.share_cleanup(h->share);
    if (h->userpwd) {
        explicit_bzero(h->userpwd, strlen(h->userpwd));
        free(h->userpwd);
    }
    free(h->sigv4);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&h->locks[i]);
    pthread_mutex_destroy(&h->pool_lock);
    free(h);
}

const zarr__http_settings *
zarr__http_settings_of(const zarr__http *h)
{
    return &h->set;
}

int
zarr__http_encode(zarr_buf *b, const char *s, size_t n, bool keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    int               rc;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
            c == '_' || c == '.' || c == '~' || (c == '/' && keep_slash))
            rc = zarr_buf_append(b, &c, 1);
        else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            rc        = zarr_buf_append(b, e, 3);
        }
        if (rc != ZARR_OK)
            return rc;
    }
    return ZARR_OK;
}

/* ---- one request's callbacks ------------------------------------------------------------------------ */

static zarr_buf *
body_of(zarr__http_req *r)
{
    return r->out ? r->out : &r->scratch;
}

static size_t
on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    zarr__http_req *r = ud;
    zarr_buf       *b = body_of(r);
    size_t          n = size * nmemb;
    if (r->max_body && b->size + n > r->max_body)
        return 0; /* CURLE_WRITE_ERROR: too long */
    if (b->size + n > b->cap && zarr_buf_reserve(b, b->cap * 2 > b->size + n ? b->cap * 2 : b->size + n))
        return 0;
    return zarr_buf_append(b, p, n) == ZARR_OK ? n : 0;
}

/* A header line: a status line starts a new response (a redirect's headers are forgotten); a
 * Content-Range gives the first byte and total of a 206. */
static size_t
on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    zarr__http_req *r = ud;
    size_t          n = size * nmemb;
    if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) {
        r->range_total = r->range_first = UINT64_MAX;
        body_of(r)->size                = 0;
    }
    else if (n > 14 && strncasecmp(p, "Content-Range:", 14) == 0) {
        char               line[128];
        unsigned long long a, z, t;
        size_t             k = n < sizeof line - 1 ? n : sizeof line - 1;
        memcpy(line, p, k);
        line[k] = '\0';
        if (sscanf(line + 14, " bytes %llu-%llu/%llu", &a, &z, &t) == 3 && a <= z && z < t) {
            r->range_first = a;
            r->range_total = t;
        }
        else if (sscanf(line + 14, " bytes */%llu", &t) == 1)
            r->range_total = t;
    }
    return n;
}

static size_t
on_read(char *p, size_t size, size_t nmemb, void *ud)
{
    zarr__http_req *r    = ud;
    size_t          n    = size * nmemb;
    size_t          left = r->body_len - r->put_off;
    if (n > left)
        n = left;
    if (n)
        memcpy(p, (const char *)r->body + r->put_off, n);
    r->put_off += n;
    return n;
}

static int
on_seek(void *ud, curl_off_t off, int origin)
{
    zarr__http_req *r = ud;
    if (origin != SEEK_SET || off < 0 || (uint64_t)off > r->body_len)
        return CURL_SEEKFUNC_FAIL;
    r->put_off = (size_t)off;
    return CURL_SEEKFUNC_OK;
}

static const char *
method_name(int m)
{
    return m == ZARR__HTTP_HEAD     ? "HEAD"
           : m == ZARR__HTTP_PUT    ? "PUT"
           : m == ZARR__HTTP_DELETE ? "DELETE"
                                    : "GET";
}

/* ---- the batch loop ------------------------------------------------------------------------------- */

typedef struct slot {
    CURL              *easy; /* while in flight */
    struct curl_slist *hdrs;
    int64_t            not_before_ms; /* a retry waits until then */
    bool               active, done;
} slot;

static int64_t
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static CURL *
easy_take(zarr__http *h)
{
    CURL *e = NULL;
    pthread_mutex_lock(&h->pool_lock);
    if (h->npool)
        e = h->pool[--h->npool];
    pthread_mutex_unlock(&h->pool_lock);
    if (e)
        zarr__curl.easy_reset(e);
    else
        e = zarr__curl.easy_init();
    return e;
}

static void
easy_give(zarr__http *h, CURL *e)
{
    pthread_mutex_lock(&h->pool_lock);
    if (h->npool < 64) {
        if (h->npool == h->cappool) {
            size_t cap = h->cappool ? 2 * h->cappool : 8;
            CURL **v   = realloc(h->pool, cap * sizeof *v);
            if (v) {
                h->pool    = v;
                h->cappool = cap;
            }
        }
        if (h->npool < h->cappool) {
            h->pool[h->npool++] = e;
            e                   = NULL;
        }
    }
    pthread_mutex_unlock(&h->pool_lock);
    if (e)
        zarr__curl.easy_cleanup(e);
}

/* libcurl's progress callback: ends an attempt once no byte has moved, either way, for the stall limit.
 * (libcurl's own low-speed check averages over a window of several seconds, so after a quick upload it
 * fires seconds after the limit; this one counts from the last byte.) */
static int
on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    zarr__http_req *r = ud;
    int64_t         t = now_ms();
    (void)dltotal;
    (void)ultotal;
    if (dlnow != r->moved_down || ulnow != r->moved_up) {
        r->moved_down = dlnow;
        r->moved_up   = ulnow;
        r->moved_ms   = t;
        return 0;
    }
    if (t - r->moved_ms < r->stall_ms)
        return 0;
    r->stalled = true;
    return 1; /* CURLE_ABORTED_BY_CALLBACK */
}

/* Sets one attempt of `r` up on a fresh or reused easy handle. */
static int
attempt_setup(zarr__http *h, zarr__http_req *r, slot *sl)
{
    CURL *e = easy_take(h);
    char  range[96];

    if (!e)
        return zarr_error(ZARR_ENOMEM, "out of memory starting %s %s", method_name(r->method), r->what);
    sl->hdrs = NULL;
    for (struct curl_slist *x = r->headers; x; x = x->next)
        sl->hdrs = zarr__curl.slist_append(sl->hdrs, x->data);
    if (r->range) {
        snprintf(range, sizeof range, "Range: bytes=%s", r->range);
        sl->hdrs = zarr__curl.slist_append(sl->hdrs, range);
    }
    if (r->method == ZARR__HTTP_PUT)
        sl->hdrs = zarr__curl.slist_append(sl->hdrs, "Expect:");
    body_of(r)->size = 0;
    r->range_total = r->range_first = UINT64_MAX;
    r->content_length               = UINT64_MAX;
    r->filetime                     = -1;
    r->status                       = 0;
    r->put_off                      = 0;
    r->moved_ms                     = now_ms();
    r->moved_up = r->moved_down = 0;
    r->stall_ms                 = (int64_t)h->set.timeout_s * 1000;
    r->stalled                  = false;
    r->curl_err[0]              = '\0';
    r->effective_url_slash      = 0;
    zarr__curl.easy_setopt(e, CURLOPT_SHARE, h->share);
    zarr__curl.easy_setopt(e, CURLOPT_URL, r->url);
    zarr__curl.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    zarr__curl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    zarr__curl.easy_setopt(e, CURLOPT_ERRORBUFFER, r->curl_err);
    zarr__curl.easy_setopt(e, CURLOPT_PRIVATE, r);
    zarr__curl.easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    zarr__curl.easy_setopt(e, CURLOPT_WRITEDATA, r);
    zarr__curl.easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    zarr__curl.easy_setopt(e, CURLOPT_HEADERDATA, r);
    zarr__curl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT, (long)h->set.timeout_s);
    zarr__curl.easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    zarr__curl.easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (long)h->set.timeout_s);
    zarr__curl.easy_setopt(e, CURLOPT_FILETIME, 1L);
    zarr__curl.easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    zarr__curl.easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    zarr__curl.easy_setopt(e, CURLOPT_XFERINFODATA, r);
    zarr__curl.easy_setopt(e, CURLOPT_USERAGENT, "h5zarr/0.1 libcurl");
    if (r->follow) {
        zarr__curl.easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
        zarr__curl.easy_setopt(e, CURLOPT_MAXREDIRS, 5L);
        zarr__curl.easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    }
    if (h->sigv4) {
        zarr__curl.easy_setopt(e, CURLOPT_AWS_SIGV4, h->sigv4);
        zarr__curl.easy_setopt(e, CURLOPT_USERPWD, h->userpwd);
    }
    if (sl->hdrs)
        zarr__curl.easy_setopt(e, CURLOPT_HTTPHEADER, sl->hdrs);
    switch (r->method) {
        case ZARR__HTTP_HEAD:
            zarr__curl.easy_setopt(e, CURLOPT_NOBODY, 1L);
            break;
        case ZARR__HTTP_PUT:
            zarr__curl.easy_setopt(e, CURLOPT_UPLOAD, 1L);
            zarr__curl.easy_setopt(e, CURLOPT_READFUNCTION, on_read);
            zarr__curl.easy_setopt(e, CURLOPT_READDATA, r);
            zarr__curl.easy_setopt(e, CURLOPT_SEEKFUNCTION, on_seek);
            zarr__curl.easy_setopt(e, CURLOPT_SEEKDATA, r);
            zarr__curl.easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->body_len);
            break;
        case ZARR__HTTP_DELETE:
            zarr__curl.easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
            break;
        default:
            break;
    }
    sl->easy = e;
    return ZARR_OK;
}

/* Whether an attempt's outcome is worth repeating. */
static bool
retryable(CURLcode cc, long status)
{
    switch (cc) {
        case CURLE_OK:
            return status >= 500 || status == 429 || status == 408;
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_COULDNT_CONNECT:
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
        case CURLE_SSL_CONNECT_ERROR:
            return true;
        default:
            return false;
    }
}

/* A backoff for retry `k` (1, 2, ...): base * 2^(k-1), capped at 5 s, with full jitter (uniform in
 * [d/2, d]) so that many clients retrying at once spread out. */
static int64_t
backoff_ms(const zarr__http *h, int k)
{
    static __thread uint64_t x;
    int64_t                  d = h->set.backoff_ms;
    if (!x)
        x = (uint64_t)now_ms() ^ (uint64_t)(uintptr_t)&x ^ 0x9e3779b97f4a7c15ULL;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    for (int i = 1; i < k && d < 5000; i++)
        d *= 2;
    if (d > 5000)
        d = 5000;
    return d / 2 + (int64_t)(x % (uint64_t)(d / 2 + 1));
}

/* Finishes an attempt: the outcome into `r`; returns true when it is to be repeated. */
static bool
attempt_finish(zarr__http *h, zarr__http_req *r, slot *sl, CURLcode cc)
{
    long       status = 0;
    curl_off_t cl = -1, ft = -1;
    char      *eff = NULL;
    bool       again;

    zarr__curl.easy_getinfo(sl->easy, CURLINFO_RESPONSE_CODE, &status);
    zarr__curl.easy_getinfo(sl->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
    zarr__curl.easy_getinfo(sl->easy, CURLINFO_FILETIME_T, &ft);
    zarr__curl.easy_getinfo(sl->easy, CURLINFO_EFFECTIVE_URL, &eff);
    r->attempts++;
    r->status              = cc == CURLE_OK ? status : 0;
    r->content_length      = cl >= 0 ? (uint64_t)cl : UINT64_MAX;
    r->filetime            = ft;
    r->effective_url_slash = eff && *eff && eff[strlen(eff) - 1] == '/';
    if (cc == CURLE_WRITE_ERROR && r->max_body && body_of(r)->size + CURL_MAX_WRITE_SIZE > r->max_body)
        snprintf(r->curl_err, sizeof r->curl_err, "the response is longer than %llu bytes",
                 (unsigned long long)r->max_body);
    else if (cc == CURLE_ABORTED_BY_CALLBACK && r->stalled) {
        snprintf(r->curl_err, sizeof r->curl_err, "no byte moved for %d s (H5ZARR_HTTP_TIMEOUT)",
                 h->set.timeout_s);
        cc = CURLE_OPERATION_TIMEDOUT; /* retried as a timeout */
    }
    else if (cc != CURLE_OK && !r->curl_err[0])
        snprintf(r->curl_err, sizeof r->curl_err, "%s", zarr__curl.easy_strerror(cc));
    again = retryable(cc, r->status) && r->attempts <= h->set.retries;
    if (cc != CURLE_OK && !again)
        r->result = zarr_error(ZARR_EIO, "%s %s failed: %s (%d attempt%s)", method_name(r->method), r->what,
                               r->curl_err, r->attempts, r->attempts == 1 ? "" : "s");
    else
        r->result = ZARR_OK;
    if (again) {
        __atomic_add_fetch(&retries_total, 1, __ATOMIC_RELAXED);
        sl->not_before_ms = now_ms() + backoff_ms(h, r->attempts);
        if (h->set.log) {
            if (cc == CURLE_OK)
                fprintf(stderr, "h5zarr: retrying %s %s after HTTP %ld (attempt %d of %d)\n",
                        method_name(r->method), r->what, status, r->attempts + 1, h->set.retries + 1);
            else
                fprintf(stderr, "h5zarr: retrying %s %s after: %s (attempt %d of %d)\n",
                        method_name(r->method), r->what, r->curl_err, r->attempts + 1, h->set.retries + 1);
        }
    }
    zarr__curl.slist_free_all(sl->hdrs);
    sl->hdrs = NULL;
    easy_give(h, sl->easy);
    sl->easy   = NULL;
    sl->active = false;
    sl->done   = !again;
    return again;
}

/* An attempt of `r` ended with `cc` (its easy handle out of the multi already): unless it is to be
 * repeated, one request fewer is `*left`, and the first failure's code and message are kept in `*first`
 * and `saved`. */
static void
attempt_end(zarr__http *h, zarr__http_req *r, slot *sl, CURLcode cc, size_t *left, int *first, char *saved,
            size_t nsaved)
{
    if (attempt_finish(h, r, sl, cc))
        return;
    (*left)--;
    if (r->result != ZARR_OK && *first == ZARR_OK) {
        *first = r->result;
        zarr_error_save(saved, nsaved);
    }
}

int
zarr__http_run(zarr__http *h, size_t n, zarr__http_req *reqs)
{
    CURLM *m    = NULL;
    slot  *sl   = NULL;
    size_t left = n, lo = 0, active = 0;
    int    rc = ZARR_OK, first = ZARR_OK;
    char   saved[1024] = "";

    for (size_t i = 0; i < n; i++) {
        reqs[i].attempts = 0;
        reqs[i].result   = ZARR_OK;
        reqs[i].status   = 0;
    }
    if (n == 0)
        return ZARR_OK;
    if (!(m = zarr__curl.multi_init()) || !(sl = calloc(n, sizeof *sl)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory starting %zu HTTP requests", n);
    zarr__curl.multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)h->set.inflight);
    while (left) {
        int64_t t = now_ms(), wait = 100;
        int     running;
        /* start what may start, in order: new requests and retries whose backoff is over */
        while (lo < n && sl[lo].done)
            lo++;
        for (size_t k = lo; k < n && active < (size_t)h->set.inflight; k++) {
            if (sl[k].active || sl[k].done || sl[k].not_before_ms > t)
                continue;
            ZARR_TRY(attempt_setup(h, &reqs[k], &sl[k]));
            zarr__curl.multi_add_handle(m, sl[k].easy);
            sl[k].active = true;
            active++;
        }
        zarr__curl.multi_perform(m, &running);
        for (CURLMsg *msg; (msg = zarr__curl.multi_info_read(m, &running));) {
            zarr__http_req *r = NULL;
            size_t          k;
            if (msg->msg != CURLMSG_DONE)
                continue;
            zarr__curl.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
            k = (size_t)(r - reqs);
            zarr__curl.multi_remove_handle(m, msg->easy_handle);
            active--;
            attempt_end(h, r, &sl[k], msg->data.result, &left, &first, saved, sizeof saved);
        }
        /* an attempt libcurl keeps without calling on_progress (waiting for a connection, which no
         * timeout of its own covers) is ended by the same stall limit, on this clock: retried as a
         * timeout, never waited for without end */
        for (size_t i = lo; i < n; i++) {
            zarr__http_req *r = &reqs[i];
            if (!sl[i].active || now_ms() - r->moved_ms < r->stall_ms)
                continue;
            zarr__curl.multi_remove_handle(m, sl[i].easy);
            active--;
            r->stalled = true;
            attempt_end(h, r, &sl[i], CURLE_ABORTED_BY_CALLBACK, &left, &first, saved, sizeof saved);
        }
        if (!left)
            break;
        /* a free slot and a request that may start (new, or its backoff over): no waiting; else wait
         * for the transfers in flight or the first backoff to end */
        if (active < (size_t)h->set.inflight) {
            int64_t t2 = now_ms();
            for (size_t i = lo; i < n && wait > 0; i++)
                if (!sl[i].active && !sl[i].done) {
                    int64_t d = sl[i].not_before_ms - t2;
                    if (d < wait)
                        wait = d < 0 ? 0 : d;
                }
        }
        if (active)
            zarr__curl.multi_poll(m, NULL, 0, (int)wait, NULL);
        else if (wait > 0) {
            struct timespec ts = {(time_t)(wait / 1000), (long)(wait % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
done:
    if (sl) {
        for (size_t i = 0; i < n; i++)
            if (sl[i].easy) {
                zarr__curl.multi_remove_handle(m, sl[i].easy);
                zarr__curl.slist_free_all(sl[i].hdrs);
                zarr__curl.easy_cleanup(sl[i].easy);
            }
        free(sl);
    }
    for (size_t i = 0; i < n; i++)
        zarr_buf_free(&reqs[i].scratch);
    if (m)
        zarr__curl.multi_cleanup(m);
    if (rc == ZARR_OK && first != ZARR_OK) {
        zarr_error_restore(first, saved);
        rc = first;
    }
    return rc;
}

/* ---- byte ranges -------------------------------------------------------------------------------- */

bool
zarr__http_range_text(zarr__http_req *r, uint64_t off, uint64_t len, bool suffix, char *text)
{
    r->range = NULL;
    if (suffix) {
        if (len == 0)
            return false;
        snprintf(text, 64, "-%llu", (unsigned long long)len);
    }
    else if (len == UINT64_MAX) {
        if (off == 0)
            return true; /* the whole value */
        snprintf(text, 64, "%llu-", (unsigned long long)off);
    }
    else {
        if (len == 0 || off > UINT64_MAX - len)
            return false;
        snprintf(text, 64, "%llu-%llu", (unsigned long long)off, (unsigned long long)(off + len - 1));
    }
    r->range = text;
    return true;
}

int
zarr__http_head_take(const zarr__http_req *r, const char *key, const char *url, uint64_t *size,
                     int64_t *mtime)
{
    if (size && r->content_length == UINT64_MAX)
        return zarr_error(
            ZARR_EIO, "can't tell the size of key '%s' of '%s': the server gave no Content-Length", key, url);
    if (size)
        *size = r->content_length;
    if (mtime) {
        if (r->filetime < 0)
            return ZARR_EUNSUPPORTED;
        *mtime = r->filetime;
    }
    return ZARR_OK;
}

int
zarr__http_range_take(zarr__http_req *r, uint64_t off, uint64_t len, bool suffix, const char *where,
                      const char *key, uint64_t *total)
{
    zarr_buf *b = body_of(r);
    uint64_t  size, want_off, want_n;

    *total = UINT64_MAX;
    if (r->status == 416) {
        if (suffix && r->range_total == 0) { /* a suffix of an empty value: S3 answers 416 */
            b->size = 0;
            *total  = 0;
            return ZARR_OK;
        }
        b->size = 0;
        if (r->range_total != UINT64_MAX)
            return zarr_error(ZARR_ECODEC,
                              "can't read bytes from %llu of key '%s' of '%s': the value has only %llu bytes",
                              (unsigned long long)off, key, where, (unsigned long long)r->range_total);
        return zarr_error(ZARR_ECODEC,
                          "can't read bytes from %llu of key '%s' of '%s': past the end of the value",
                          (unsigned long long)off, key, where);
    }
    if (r->status == 206) {
        size = r->range_total;
        if (size == UINT64_MAX || r->range_first == UINT64_MAX) {
            b->size = 0;
            return zarr_error(
                ZARR_EIO, "reading key '%s' of '%s': a 206 answer without a valid Content-Range", key, where);
        }
    }
    else
        size = b->size; /* 200: the whole value */
    if (suffix) {
        want_n   = len < size ? len : size;
        want_off = size - want_n;
    }
    else {
        if (off > size || (len != UINT64_MAX && len > size - off)) {
            b->size = 0;
            return zarr_error(
                ZARR_ECODEC, "can't read bytes %llu+%llu of key '%s' of '%s': the value has only %llu bytes",
                (unsigned long long)off, (unsigned long long)len, key, where, (unsigned long long)size);
        }
        want_off = off;
        want_n   = len == UINT64_MAX ? size - off : len;
    }
    if (r->status == 206) {
        if (suffix && (r->range_first != want_off || b->size != want_n)) {
            b->size = 0;
            *total  = size;
            return 1; /* the server got the suffix wrong: ask for the explicit range */
        }
        if (r->range_first != want_off || b->size != want_n) {
            size_t got = b->size;
            b->size    = 0;
            return zarr_error(
                ZARR_EIO,
                "reading key '%s' of '%s': the server sent %zu bytes from %llu for a request of %llu "
                "bytes from %llu",
                key, where, got, (unsigned long long)r->range_first, (unsigned long long)want_n,
                (unsigned long long)want_off);
        }
    }
    else {
        if (want_off)
            memmove(b->data, b->data + want_off, (size_t)want_n);
        b->size = (size_t)want_n;
    }
    *total = size;
    return ZARR_OK;
}

const char *
zarr__http_status_text(long status)
{
    switch (status) {
        case 400:
            return "bad request";
        case 401:
            return "unauthorised";
        case 403:
            return "access denied";
        case 404:
            return "not found";
        case 405:
            return "method not allowed";
        case 409:
            return "conflict";
        case 412:
            return "precondition failed";
        case 416:
            return "range not satisfiable";
        case 429:
            return "too many requests";
        case 500:
            return "server error";
        case 501:
            return "not implemented";
        case 502:
            return "bad gateway";
        case 503:
            return "service unavailable";
        case 504:
            return "gateway timeout";
        default:
            return "";
    }
}

/* ---- a store's batched read ---------------------------------------------------------------------- */

/* Runs the items `idx[0..m)` of `reqs` (explicit ranges instead of suffixes when `explicit`); fills their
 * results; collects the items to ask again into `redo` (count in *nredo). */
static int
get_round(const zarr__http_getter *g, zarr_store_req *reqs, const size_t *idx, size_t m, bool explicit,
          const uint64_t *sizes, size_t *redo, size_t *nredo, char *saved, size_t nsaved)
{
    zarr__http_req *hr = calloc(m ? m : 1, sizeof *hr);
    char(*ranges)[64]  = calloc(m ? m : 1, sizeof *ranges);
    char **whats       = calloc(m ? m : 1, sizeof *whats);
    int    rc          = ZARR_OK;

    *nredo = 0;
    if (!hr || !ranges || !whats)
        ZARR_FAIL(ZARR_ENOMEM, "out of memory reading %zu keys of '%s'", m, g->store_url);
    for (size_t j = 0; j < m; j++) {
        zarr_store_req *q   = &reqs[idx[j]];
        size_t          k   = strlen(q->key) + strlen(g->store_url) + 16;
        uint64_t        off = q->off, len = q->len;
        bool            suf = q->suffix;
        q->out->size        = 0;
        if (explicit) { /* the value's end, now that its size is known */
            len = q->len < sizes[j] ? q->len : sizes[j];
            off = sizes[j] - len;
            suf = false;
        }
        if (!(hr[j].url = g->url_of(g->ctx, q->key)) || !(whats[j] = malloc(k)))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory reading %zu keys of '%s'", m, g->store_url);
        snprintf(whats[j], k, "key '%s' of '%s'", q->key, g->store_url);
        hr[j].what    = whats[j];
        hr[j].out     = q->out;
        hr[j].follow  = g->follow;
        hr[j].headers = g->headers;
        hr[j].method =
            zarr__http_range_text(&hr[j], off, len, suf, ranges[j]) ? ZARR__HTTP_GET : ZARR__HTTP_HEAD;
        if (explicit && len == 0)
            hr[j].method = ZARR__HTTP_HEAD;
    }
    if (zarr__http_run(g->h, m, hr) == ZARR_ENOMEM)
        ZARR_FAIL(ZARR_ENOMEM, "out of memory reading %zu keys of '%s'", m, g->store_url);
    for (size_t j = 0; j < m; j++) {
        zarr_store_req *q = &reqs[idx[j]];
        int             r = g->judge(g->ctx, &hr[j], q->key);
        if (r == ZARR_OK && hr[j].method == ZARR__HTTP_HEAD) {
            uint64_t size = hr[j].content_length;
            q->out->size  = 0;
            if (size == UINT64_MAX)
                r = zarr_error(ZARR_EIO, "can't read key '%s' of '%s': the server gave no size", q->key,
                               g->store_url);
            else if (!q->suffix && q->off > size)
                r = zarr_error(ZARR_ECODEC,
                               "can't read bytes %llu+0 of key '%s' of '%s': the value has only %llu bytes",
                               (unsigned long long)q->off, q->key, g->store_url, (unsigned long long)size);
            else
                q->total = size;
        }
        else if (r == ZARR_OK && !hr[j].range) {
            if (hr[j].status == 416)
                r = zarr_error(ZARR_EIO, "can't read key '%s' of '%s': HTTP 416 for a whole value", q->key,
                               g->store_url);
            else
                q->total = q->out->size;
        }
        else if (r == ZARR_OK && explicit) {
            uint64_t t;
            r        = zarr__http_range_take(&hr[j], sizes[j] - (q->len < sizes[j] ? q->len : sizes[j]),
                                      q->len < sizes[j] ? q->len : sizes[j], false, g->store_url, q->key, &t);
            q->total = r == ZARR_OK ? sizes[j] : UINT64_MAX;
        }
        else if (r == ZARR_OK) {
            r = zarr__http_range_take(&hr[j], q->off, q->len, q->suffix, g->store_url, q->key, &q->total);
            if (r == 1) {
                redo[(*nredo)++] = idx[j];
                q->result        = ZARR_OK;
                continue;
            }
        }
        if (r != ZARR_OK) {
            q->out->size = 0;
            q->total     = UINT64_MAX;
        }
        q->result = r;
        if (r == ZARR_OK && hr[j].filetime > 0)
            q->mtime = hr[j].filetime;
        if (r != ZARR_OK && r != ZARR_ENOTFOUND && !saved[0])
            zarr_error_save(saved, nsaved);
    }
done:
    if (hr)
        for (size_t j = 0; j < m; j++)
            free((char *)hr[j].url);
    if (whats)
        for (size_t j = 0; j < m; j++)
            free(whats[j]);
    free(hr);
    free(ranges);
    free(whats);
    return rc;
}

int
zarr__http_get_many(const zarr__http_getter *g, size_t n, zarr_store_req *reqs)
{
    size_t   *idx = NULL, *redo = NULL, nredo = 0;
    uint64_t *sizes       = NULL;
    char      saved[1024] = "";
    int       rc          = ZARR_OK;

    if (n == 0)
        return ZARR_OK;
    if (!(idx = malloc(n * sizeof *idx)) || !(redo = malloc(n * sizeof *redo)) ||
        !(sizes = malloc(n * sizeof *sizes)))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory reading %zu keys of '%s'", n, g->store_url);
    for (size_t i = 0; i < n; i++) {
        idx[i]         = i;
        reqs[i].total  = UINT64_MAX;
        reqs[i].result = ZARR_OK;
    }
    ZARR_TRY(get_round(g, reqs, idx, n, false, NULL, redo, &nredo, saved, sizeof saved));
    if (nredo) {
        size_t again;
        for (size_t j = 0; j < nredo; j++)
            sizes[j] = reqs[redo[j]].total;
        ZARR_TRY(get_round(g, reqs, redo, nredo, true, sizes, idx, &again, saved, sizeof saved));
    }
    for (size_t i = 0; i < n; i++)
        if (reqs[i].result != ZARR_OK) {
            rc = reqs[i].result;
            break;
        }
    if (saved[0] && rc != ZARR_OK)
        zarr_error_restore(rc, saved);
done:
    free(idx);
    free(redo);
    free(sizes);
    return rc;
}
