/*
 * convert_resume.c: the resume record of h5zarr-convert (docs/CONVERT.md "Resuming an interrupted run"):
 * what the run has written and flushed, line by line, so a run killed or failed part way goes on where it
 * stopped when run again. The record is the store's key ".h5zarr_convert" (a name the connector and zarr
 * readers ignore):
 *   - a local store: the file <store>/.h5zarr_convert, appended to with plain POSIX calls and fdatasync'ed
 *     at each commit;
 *   - a URL store (s3://...): the same text, kept in memory and stored whole under that key through the
 *     core's store interface (zarr_store_open of the same URL, zarr_store_set) at each commit: an object
 *     store has no append, and the record stays small (a line a dataset or 64 chunks).
 * Every commit comes after H5Fflush of the store (which waits for the connector's write-behind queue), so
 * each unit a committed line names is in the store.
 */
#include "convert.h"

#include "h5zarr/zarr.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RECORD_KEY  ".h5zarr_convert"
#define RECORD_HEAD "h5zarr-convert resume 1"

static long long kill_after = -1;

void
cv_kill_arm(long long units)
{
    kill_after = units;
}

void
cv_kill_point(void)
{
    if (kill_after > 0 && --kill_after == 0)
        kill(getpid(), SIGKILL);
}

/* Appends formatted text to the in-memory record (URL stores). 0 or -1. */
static int
text_add(cv_resume *r, const char *fmt, va_list ap)
{
    va_list ap2;
    int     n;
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return -1;
    if (r->len + (size_t)n + 1 > r->cap) {
        size_t cap = (r->len + (size_t)n + 1) * 2;
        char  *t   = realloc(r->text, cap);
        if (!t)
            return -1;
        r->text = t;
        r->cap  = cap;
    }
    vsnprintf(r->text + r->len, r->cap - r->len, fmt, ap);
    r->len += (size_t)n;
    return 0;
}

int
cv_record_add(cv_resume *r, const char *fmt, ...)
{
    va_list ap;
    int     rc = 0;
    if (!r->fp && !r->store)
        return 0;
    va_start(ap, fmt);
    rc = r->fp ? (vfprintf(r->fp, fmt, ap) < 0 ? -1 : 0) : text_add(r, fmt, ap);
    va_end(ap);
    return rc;
}

int
cv_record_commit(cv_resume *r)
{
    if (r->fp)
        return fflush(r->fp) || fdatasync(fileno(r->fp)) ? -1 : 0;
    if (r->store && zarr_store_set(r->store, RECORD_KEY, r->text, r->len) != ZARR_OK) {
        fprintf(stderr, "h5zarr-convert: %s: can't store the resume record: %s\n", r->url, zarr_errmsg());
        return -1;
    }
    return 0;
}

int
cv_resume_note(cv_resume *r, hid_t dst, size_t i, size_t n)
{
    if (!r || (!r->fp && !r->store))
        return 0;
    if (H5Fflush(dst, H5F_SCOPE_GLOBAL) < 0)
        return -1;
    if (cv_record_add(r, "obj %zu %zu\n", i, n) < 0 || cv_record_commit(r) < 0)
        return -1;
    r->done[i] = n;
    return 0;
}

/* The record's text: the local file, or the URL store's key (opened here, kept in r->store). 1 read,
 * 0 none, -1 error. *text malloc'ed. */
static int
record_text(cv_resume *r, char **text, size_t *len)
{
    zarr_buf b = ZARR_BUF_INIT;
    int      rc;
    *text = NULL;
    *len  = 0;
    if (r->path) {
        FILE *f = fopen(r->path, "r");
        if (!f)
            return errno == ENOENT ? 0 : -1;
        rc   = getdelim(text, &(size_t){0}, '\0', f) >= 0 ? 1 : -1;
        *len = *text ? strlen(*text) : 0;
        fclose(f);
        return rc;
    }
    if (!r->store && zarr_store_open(r->url, ZARR_STORE_RDWR | ZARR_STORE_CREATE, &r->store) != ZARR_OK) {
        fprintf(stderr, "h5zarr-convert: %s: can't open the store for its resume record: %s\n", r->url,
                zarr_errmsg());
        return -1;
    }
    if ((rc = zarr_store_get(r->store, RECORD_KEY, &b)) == ZARR_ENOTFOUND)
        return 0;
    if (rc != ZARR_OK || !(*text = malloc(b.size + 1))) {
        zarr_buf_free(&b);
        return -1;
    }
    memcpy(*text, b.data, b.size);
    (*text)[b.size] = '\0';
    *len            = b.size;
    zarr_buf_free(&b);
    return 1;
}

int
cv_record_read(cv_resume *r, const char *ident, size_t nobj)
{
    char  *text = NULL, *line, *save = NULL;
    size_t len;
    int    rc, ln = 0;
    if ((rc = record_text(r, &text, &len)) <= 0) {
        free(text);
        return rc;
    }
    rc = -1;
    if (!r->path) { /* a URL store's record: kept to be stored again with the lines this run adds */
        if (!(r->text = malloc(len + 1)))
            goto done;
        memcpy(r->text, text, len + 1);
        r->len = len;
        r->cap = len + 1;
    }
    if (!(r->done = calloc(nobj ? nobj : 1, sizeof *r->done)))
        goto done;
    r->nobj = nobj;
    /* a torn last line (a kill in the middle of a write) is left out: only whole lines count */
    for (char *end = strrchr(text, '\n'); end && end[1]; end = NULL)
        end[1] = '\0';
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        size_t i, n;
        if ((ln == 0 && strcmp(line, RECORD_HEAD)) || (ln == 1 && strcmp(line, ident)))
            goto done;
        if (ln++ < 2)
            continue;
        if (!strcmp(line, "structure"))
            r->structure = true;
        else if (!strcmp(line, "scales"))
            r->scales = true;
        else if (sscanf(line, "obj %zu %zu", &i, &n) == 2 && i < nobj)
            r->done[i] = n;
    }
    rc = ln >= 2 ? 1 : -1;
done:
    free(text);
    return rc;
}

int
cv_record_start(cv_resume *r, const char *ident, bool append)
{
    if (r->path) {
        if (!(r->fp = fopen(r->path, append ? "a" : "w")))
            return -1;
        return append ? 0 : cv_record_add(r, "%s\n%s\n", RECORD_HEAD, ident) < 0 || fflush(r->fp) ? -1 : 0;
    }
    if (!r->store && zarr_store_open(r->url, ZARR_STORE_RDWR | ZARR_STORE_CREATE, &r->store) != ZARR_OK)
        return -1;
    if (append) /* the text read by cv_record_read is in memory */
        return 0;
    r->len = 0;
    return cv_record_add(r, "%s\n%s\n", RECORD_HEAD, ident) < 0 ? -1 : cv_record_commit(r);
}

/* zarr_store_list_keys callback: stops at the first key that is not the resume record. */
static int
first_key(const char *key, uint64_t size, void *ud)
{
    (void)size;
    if (strcmp(key, RECORD_KEY) == 0)
        return 0;
    *(bool *)ud = true;
    return 1;
}

int
cv_store_occupied(cv_resume *r)
{
    static const char *const docs[] = {"zarr.json", ".zgroup", ".zarray"};
    bool                     any    = false;
    int                      rc;
    if (!r->store && zarr_store_open(r->url, ZARR_STORE_RDWR | ZARR_STORE_CREATE, &r->store) != ZARR_OK)
        return -1;
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        rc = zarr_store_exists(r->store, docs[i]);
        if (rc != ZARR_ENOTFOUND)
            return rc == ZARR_OK ? 1 : -1;
    }
    /* no store there, but other objects under the prefix are not ours to replace */
    rc = zarr_store_list_keys(r->store, "", first_key, &any);
    if (any)
        return 2;
    return rc == ZARR_OK || rc == ZARR_ENOTFOUND ? 0 : -1;
}

int
cv_record_remove(cv_resume *r)
{
    if (r->fp) {
        fclose(r->fp);
        r->fp = NULL;
    }
    if (r->path)
        return unlink(r->path) < 0 && errno != ENOENT ? -1 : 0;
    if (r->store) {
        int rc = zarr_store_del(r->store, RECORD_KEY);
        if (rc != ZARR_OK && rc != ZARR_ENOTFOUND)
            return -1;
    }
    return 0;
}

void
cv_record_close(cv_resume *r)
{
    if (r->fp)
        fclose(r->fp);
    r->fp = NULL;
    zarr_store_close(r->store);
    r->store = NULL;
    free(r->text);
    r->text = NULL;
    r->len = r->cap = 0;
}
