/*
 * json.c: parsing, printing and checked access of JSON documents for the core (see json.h).
 *
 * json-c does the tokenizing; this file adds what zarr metadata needs on top: whole-document checks,
 * exact 64-bit integers (json-c silently clamps out-of-range integers, so they are refused here before
 * parsing), Python-compatible pretty printing with shortest round-trip doubles, semantic comparison
 * and key getters whose messages name the document and the key.
 *
 * Cost matters here: every node the VOL opens parses one or two documents, every metadata change
 * prints one. Parsing reuses one json-c tokener and one scratch buffer per thread, and the integer
 * check looks at every 19th byte unless a long run of digits needs the full scan; printing appends
 * straight into a buffer grown by doubling, plain string runs with one memcpy, integers without stdio.
 * The same printer is offered piece by piece (zarr__json_w_*), so that a document whose shape the caller
 * knows (an array's zarr.json, zarr/meta.c) is written as text without building its tree first.
 * Figures: bench/README.md, "The W4 metadata path".
 */
#define _POSIX_C_SOURCE 200809L /* strdup, clock_gettime */

#include "zjson.h"
#include "internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nesting allowed in documents (attributes can be deep; json-c's default is 32). */
#define ZARR_JSON_DEPTH 256

/* Per-thread parsing state, kept across documents: a json-c tokener (json_tokener_new_ex callocs a
 * ZARR_JSON_DEPTH-level stack, too costly to make per document: see bench/README.md, "The core side of
 * W4") and the scratch copy of the text json-c reads (it needs a terminating NUL). Freed when the
 * thread exits. */
typedef struct json_tls {
    struct json_tokener *tok;
    char                *buf;
    size_t               cap;
    bool                 busy; /* in use by a parse on this thread */
} json_tls;

/* Scratch copies above this size are freed after the parse instead of kept for the next one. */
#define JSON_TLS_KEEP (1u << 20)

static pthread_once_t json_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t  json_key;
static bool           json_key_ok;

static void
json_tls_free(void *p)
{
    json_tls *t = p;
    if (!t)
        return;
    if (t->tok)
        json_tokener_free(t->tok); /* json-c 0.16 does not accept NULL */
    free(t->buf);
    free(t);
}

static void
json_make_key(void)
{
    json_key_ok = pthread_key_create(&json_key, json_tls_free) == 0;
}

/* When the library is unloaded (the VOL plugin is dlclose'd at HDF5's termination) or the process
 * exits: frees this thread's state and deletes the key, so that threads exiting later do not call a
 * destructor whose code is gone (their state is left behind; parses from then on use a tokener of
 * their own). */
__attribute__((destructor)) static void
json_tls_unload(void)
{
    if (!json_key_ok)
        return;
    json_key_ok = false;
    json_tls_free(pthread_getspecific(json_key));
    (void)pthread_setspecific(json_key, NULL);
    (void)pthread_key_delete(json_key);
}

/* This thread's state, created on first use; NULL when out of memory (then the caller parses with a
 * tokener of its own). */
static json_tls *
json_tls_get(void)
{
    json_tls *t;

    pthread_once(&json_key_once, json_make_key);
    if (!json_key_ok)
        return NULL;
    if ((t = pthread_getspecific(json_key)))
        return t;
    if (!(t = calloc(1, sizeof *t)))
        return NULL;
    if (!(t->tok = json_tokener_new_ex(ZARR_JSON_DEPTH)) || pthread_setspecific(json_key, t) != 0) {
        json_tls_free(t);
        return NULL;
    }
    json_tokener_set_flags(t->tok, 0); /* non-strict: NaN, Infinity, -Infinity */
    return t;
}

static inline bool
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static inline bool
is_word(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* What may follow a document: isspace() of the C locale. */
static inline bool
is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* An integer literal that does not fit 64 bits has at least 19 digits in a row, and any such run
 * holds a digit at an index that is 18 modulo 19: looking at every 19th byte tells most documents
 * (none has such a run) apart in ~n/19 steps. */
static bool
has_long_digit_run(const char *s, size_t n)
{
    for (size_t i = 18; i < n; i += 19) {
        size_t a = i, b = i + 1;
        if (!is_digit(s[i]))
            continue;
        while (a > 0 && is_digit(s[a - 1]))
            a--;
        while (b < n && is_digit(s[b]))
            b++;
        if (b - a >= 19)
            return true;
    }
    return false;
}

/* Checks that every integer literal outside strings fits int64 (negative) or uint64 (positive):
 * json-c would clamp it. Returns the byte offset of the first bad literal, or SIZE_MAX. */
static size_t
find_bad_integer(const char *s, size_t n)
{
    static const char maxneg[] = "9223372036854775808";
    static const char maxpos[] = "18446744073709551615";
    size_t            i        = 0;

    if (!has_long_digit_run(s, n))
        return SIZE_MAX;
    while (i < n) {
        char c = s[i];
        if (c == '"' || c == '\'') {
            char q = c;
            for (i++; i < n && s[i] != q; i++)
                if (s[i] == '\\')
                    i++;
            i++;
            continue;
        }
        if ((c == '-' || is_digit(c)) && (i == 0 || !(is_word(s[i - 1]) || s[i - 1] == '.'))) {
            size_t start = i, j = i, d0, nd;
            bool   neg = (c == '-'), integral = true;
            if (neg)
                j++;
            d0 = j;
            while (j < n && (is_word(s[j]) || s[j] == '.' || s[j] == '+' || s[j] == '-')) {
                if (!is_digit(s[j]))
                    integral = false;
                j++;
            }
            if (integral && j > d0) {
                const char *lim = neg ? maxneg : maxpos;
                size_t      nl  = strlen(lim);
                while (d0 < j - 1 && s[d0] == '0')
                    d0++;
                nd = j - d0;
                if (nd > nl || (nd == nl && memcmp(s + d0, lim, nl) > 0))
                    return start;
            }
            i = j;
            continue;
        }
        i++;
    }
    return SIZE_MAX;
}

/* Parses `n` bytes of `text` with the tokener `tok` into `*out`; `scratch` has room for n + 1 bytes
 * (json-c reads a NUL-terminated copy). Messages name `where` and byte offsets in `text`. */
static int
json_parse_with(struct json_tokener *tok, char *scratch, const char *text, size_t n, const char *where,
                struct json_object **out)
{
    struct json_object     *j  = NULL;
    int                     rc = ZARR_OK;
    size_t                  bad, end;
    enum json_tokener_error err;

    if (n)
        memcpy(scratch, text, n);
    scratch[n] = '\0';
    if ((bad = find_bad_integer(scratch, n)) != SIZE_MAX)
        ZARR_FAIL(ZARR_EMETA, "'%s': integer at byte %zu does not fit in 64 bits", where, bad);
    json_tokener_reset(tok);
    j   = json_tokener_parse_ex(tok, scratch, (int)n + 1);
    err = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    if (err != json_tokener_success)
        ZARR_FAIL(ZARR_EMETA, "'%s': invalid JSON at byte %zu: %s", where, end > n ? n : end,
                  json_tokener_error_desc(err));
    for (size_t i = end; i < n; i++)
        if (!is_space(scratch[i]))
            ZARR_FAIL(ZARR_EMETA, "'%s': invalid JSON: unexpected characters after the document at byte %zu",
                      where, i);
    *out = j;
    j    = NULL;
done:
    json_object_put(j);
    json_tokener_reset(tok); /* drops what a failed parse left on its stack */
    return rc;
}

int
zarr__json_parse(const char *text, size_t n, const char *where, struct json_object **out)
{
    json_tls            *t    = NULL;
    struct json_tokener *tok  = NULL;
    char                *copy = NULL;
    int                  rc   = ZARR_OK;

    *out = NULL;
    if (!where)
        where = "(json)";
    if (n >= (size_t)INT32_MAX)
        ZARR_FAIL(ZARR_EMETA, "'%s': document of %zu bytes is too large", where, n);
    if ((t = json_tls_get()) && !t->busy) {
        if (t->cap < n + 1) {
            size_t cap = n + 1 < 4096 ? 4096 : n + 1;
            free(t->buf);
            t->cap = 0;
            if (!(t->buf = malloc(cap)))
                ZARR_FAIL(ZARR_ENOMEM, "'%s': out of memory", where);
            t->cap = cap;
        }
        t->busy = true;
        rc      = json_parse_with(t->tok, t->buf, text, n, where, out);
        t->busy = false;
        if (t->cap > JSON_TLS_KEEP) {
            free(t->buf);
            t->buf = NULL;
            t->cap = 0;
        }
        goto done;
    }
    /* no per-thread state (out of memory, or a parse already running on this thread) */
    if (!(copy = malloc(n + 1)) || !(tok = json_tokener_new_ex(ZARR_JSON_DEPTH)))
        ZARR_FAIL(ZARR_ENOMEM, "'%s': out of memory", where);
    json_tokener_set_flags(tok, 0); /* non-strict: NaN, Infinity, -Infinity */
    rc = json_parse_with(tok, copy, text, n, where, out);
done:
    if (tok)
        json_tokener_free(tok); /* json-c 0.16 does not accept NULL */
    free(copy);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * A wide document parsed as one job (zarr__json_parse_wide)
 *
 * One pass of a scanner over the text finds the object at the key path (a root zarr.json's
 * consolidated_metadata.metadata: one member per node of the hierarchy, nearly all of the bytes) and
 * the span of each of its members' values; the caller's runner parses those values (one task each, one
 * job: zarr/node.c runs it on the default pool; this layer knows no pool), the caller parses the rest
 * of the document with that object left empty and, after the join, adds the values to it in the
 * text's order: the tree json-c makes of the whole text. The scanner
 * knows a subset of what json-c's non-strict mode reads (double-quoted strings, no comments, no
 * single quotes, no trailing commas, keys of the path and of the members without escapes, no NUL
 * byte, nesting below WIDE_DEPTH); for anything else, a key of the path found twice, a value that does
 * not parse alone, or two members of one name, the whole text is parsed as one, so every answer and
 * every message is zarr__json_parse's.
 * ------------------------------------------------------------------------------------------------ */
#define WIDE_DEPTH (ZARR_JSON_DEPTH - 16)
#define WIDE_NONE  SIZE_MAX

typedef zarr__json_span wide_member; /* a member's key (between its quotes) and value spans in the text */

typedef struct {
    const char          *s;
    size_t               n;
    const char *const   *keys;
    int                  nkeys;
    int                  found[4]; /* matches of keys[lv] at level lv */
    size_t               os, oe;   /* the object at the path: '{' .. after '}' */
    wide_member         *m;        /* its members */
    size_t               nm, cap;
    struct json_object **vals; /* [nm]: the parsed values */
    const char          *where;
    zarr__json_runner    run;
} wide_scan;

static inline size_t
wide_ws(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
        i++;
    return i;
}

/* The index after the string at s[i] ('"'), or WIDE_NONE (unterminated). A quote is the string's end
 * unless an odd run of backslashes is before it. `*plain` (may be NULL: not asked): no escape or
 * control byte in it. (No NUL byte is in the text: zarr__json_parse_wide checks that first.) */
static size_t
wide_string(const char *s, size_t n, size_t i, bool *plain)
{
    size_t start = i + 1;
    for (i = start; i < n;) {
        const char *q = memchr(s + i, '"', n - i);
        size_t      e, k;
        if (!q)
            return WIDE_NONE;
        e = (size_t)(q - s);
        for (k = e; k > start && s[k - 1] == '\\'; k--)
            ;
        if ((e - k) % 2 == 0) {
            if (plain) {
                *plain = true;
                for (k = start; k < e; k++)
                    if (s[k] == '\\' || (unsigned char)s[k] < 0x20)
                        *plain = false;
            }
            return e + 1;
        }
        i = e + 1;
    }
    return WIDE_NONE;
}

/* Byte classes of the value scanner: 0 not known (json-c decides), 1 skipped (white space, atoms, ','
 * and ':'), 2 '"', 3 '{' '[', 4 '}' ']'. */
static unsigned char  wide_cls[256];
static pthread_once_t wide_cls_once = PTHREAD_ONCE_INIT;

static void
wide_cls_init(void)
{
    for (int c = 0; c < 256; c++)
        wide_cls[c] = is_word((char)c) || c == '-' || c == '+' || c == '.' || c == ',' || c == ':' ||
                              c == ' ' || c == '\n' || c == '\r' || c == '\t'
                          ? 1
                          : 0;
    wide_cls['"'] = 2;
    wide_cls['{'] = wide_cls['['] = 3;
    wide_cls['}'] = wide_cls[']'] = 4;
}

static inline bool
wide_atom(char c)
{
    return is_word(c) || c == '-' || c == '+' || c == '.';
}

/* The index after the value at s[i] (at nesting `depth`), or WIDE_NONE: not what the scanner knows. */
static size_t
wide_value(const char *s, size_t n, size_t i, int depth)
{
    int d = 0;

    if (i >= n)
        return WIDE_NONE;
    if (s[i] == '"')
        return wide_string(s, n, i, NULL);
    if (wide_atom(s[i])) {
        while (i < n && wide_atom(s[i]))
            i++;
        return i;
    }
    if (s[i] != '{' && s[i] != '[')
        return WIDE_NONE;
    while (i < n) {
        switch (wide_cls[(unsigned char)s[i]]) {
            case 1:
                i++;
                while (i < n && wide_cls[(unsigned char)s[i]] == 1)
                    i++;
                break;
            case 2:
                if ((i = wide_string(s, n, i, NULL)) == WIDE_NONE)
                    return WIDE_NONE;
                break;
            case 3:
                if (++d + depth > WIDE_DEPTH)
                    return WIDE_NONE;
                i++;
                break;
            case 4:
                if (--d == 0)
                    return i + 1;
                i++;
                break;
            default:
                return WIDE_NONE; /* comments, single quotes, ...: json-c's own parse decides */
        }
    }
    return WIDE_NONE;
}

/* Scans the object at s[i] ('{') at level `lv` of the key path; returns the index after its '}', or
 * WIDE_NONE. At the last level every member is recorded; above it the path's key is descended into. */
static size_t
wide_object(wide_scan *w, size_t i, int lv)
{
    const char *s = w->s;
    size_t      n = w->n;
    bool        plain;

    i = wide_ws(s, n, i + 1);
    if (i < n && s[i] == '}')
        return i + 1;
    for (;;) {
        size_t ks, ke, vs, ve;
        if (i >= n || s[i] != '"' || (ke = wide_string(s, n, i, &plain)) == WIDE_NONE || !plain)
            return WIDE_NONE;
        ks = i + 1;
        i  = wide_ws(s, n, ke);
        if (i >= n || s[i] != ':')
            return WIDE_NONE;
        vs = wide_ws(s, n, i + 1);
        if (lv < w->nkeys) {
            const char *k = w->keys[lv];
            if (strlen(k) == ke - 1 - ks && !memcmp(s + ks, k, ke - 1 - ks)) {
                if (++w->found[lv] > 1 || vs >= n || s[vs] != '{')
                    return WIDE_NONE;
                if (lv + 1 == w->nkeys)
                    w->os = vs;
                ve = wide_object(w, vs, lv + 1);
                if (lv + 1 == w->nkeys)
                    w->oe = ve;
            }
            else
                ve = wide_value(s, n, vs, lv + 1);
        }
        else {
            ve = wide_value(s, n, vs, lv + 1);
            if (ve != WIDE_NONE) {
                if (w->nm == w->cap) {
                    size_t       cap = w->cap ? 2 * w->cap : 1024;
                    wide_member *m   = realloc(w->m, cap * sizeof *m);
                    if (!m)
                        return WIDE_NONE;
                    w->m   = m;
                    w->cap = cap;
                }
                w->m[w->nm++] = (wide_member){ks, ke - 1 - ks, vs, ve - vs};
            }
        }
        if (ve == WIDE_NONE)
            return WIDE_NONE;
        i = wide_ws(s, n, ve);
        if (i < n && s[i] == '}')
            return i + 1;
        if (i >= n || s[i] != ',')
            return WIDE_NONE;
        i = wide_ws(s, n, i + 1);
    }
}

static int
wide_task(void *job, size_t i, int worker)
{
    wide_scan *w = job;
    (void)worker;
    if (zarr__json_parse(w->s + w->m[i].vs, w->m[i].vn, w->where, &w->vals[i]) != ZARR_OK)
        w->vals[i] = NULL; /* the whole text is parsed again for the message */
    zarr_error_clear();
    return ZARR_OK;
}

/* The rest of the document parsed, the object at the path left empty: ZARR_OK with the tree (`*root`,
 * caller puts) and that empty object in it (`*obj`, borrowed), or ZARR_EMETA (no message kept). */
static int
wide_rest(const wide_scan *w, struct json_object **root, struct json_object **obj)
{
    struct json_object *o;
    size_t              nr = w->os + 2 + (w->n - w->oe);
    char               *rest;
    int                 rc = ZARR_EMETA;

    *root = NULL;
    if (!(rest = malloc(nr)))
        return ZARR_ENOMEM;
    memcpy(rest, w->s, w->os);
    memcpy(rest + w->os, "{}", 2);
    memcpy(rest + w->os + 2, w->s + w->oe, w->n - w->oe);
    if (zarr__json_parse(rest, nr, w->where, root) != ZARR_OK)
        goto done;
    o = *root;
    for (int lv = 0; lv < w->nkeys; lv++)
        if (!json_object_object_get_ex(o, w->keys[lv], &o) || !json_object_is_type(o, json_type_object))
            goto done;
    if (json_object_object_length(o) != 0)
        goto done;
    *obj = o;
    rc   = ZARR_OK;
done:
    if (rc != ZARR_OK) {
        json_object_put(*root);
        *root = NULL;
    }
    zarr_error_clear();
    free(rest);
    return rc;
}

/* The split parse; ZARR_OK with *out, or anything else (no message kept): parse the whole text. */
static int
wide_parse(wide_scan *w, struct json_object **out)
{
    struct json_object *root = NULL, *o = NULL;
    char                key[256], *kp;
    int                 rc = ZARR_EMETA;

    if (!(w->vals = calloc(w->nm, sizeof *w->vals)))
        return ZARR_ENOMEM;
    if (w->run)
        w->run(wide_task, w, w->nm); /* one job; its tasks never fail */
    else
        for (size_t i = 0; i < w->nm; i++)
            (void)wide_task(w, i, 0);
    for (size_t i = 0; i < w->nm; i++)
        if (!w->vals[i])
            goto done;
    if (wide_rest(w, &root, &o) != ZARR_OK)
        goto done;
    for (size_t i = 0; i < w->nm; i++) {
        size_t kn = w->m[i].kn;
        if (!(kp = kn < sizeof key ? key : malloc(kn + 1)))
            goto done;
        memcpy(kp, w->s + w->m[i].ks, kn);
        kp[kn] = '\0';
        rc     = json_object_object_add(o, kp, w->vals[i]) == 0 ? ZARR_OK : ZARR_ENOMEM;
        if (kp != key)
            free(kp);
        if (rc != ZARR_OK)
            goto done;
        w->vals[i] = NULL; /* the tree's now */
    }
    if ((size_t)json_object_object_length(o) != w->nm) { /* two members of one name: json-c's answer */
        rc = ZARR_EMETA;
        goto done;
    }
    *out = root;
    root = NULL;
    rc   = ZARR_OK;
done:
    zarr_error_clear();
    json_object_put(root);
    return rc;
}

/* Scans the whole text (one object, its member object found at most 4 keys down) into `w`: true when it
 * has the shape the wide parses take, with at least `min_members` (0: 1) members. */
static bool
wide_scan_run(wide_scan *w, size_t min_members)
{
    size_t i;
    if (w->nkeys < 1 || w->nkeys > 4 || !w->s || w->n >= (size_t)INT32_MAX || memchr(w->s, '\0', w->n))
        return false;
    pthread_once(&wide_cls_once, wide_cls_init);
    i = wide_ws(w->s, w->n, 0);
    return i < w->n && w->s[i] == '{' && (i = wide_object(w, i, 0)) != WIDE_NONE &&
           wide_ws(w->s, w->n, i) == w->n && w->oe != WIDE_NONE && w->nm >= (min_members ? min_members : 1);
}

int
zarr__json_parse_wide(const char *text, size_t n, const char *where, const char *const *keys, int nkeys,
                      size_t min_members, zarr__json_runner run, struct json_object **out)
{
    wide_scan w  = {text, n, keys, nkeys, {0}, WIDE_NONE, WIDE_NONE, NULL, 0, 0, NULL, where, run};
    int       rc = ZARR_EMETA;

    *out = NULL;
    if (wide_scan_run(&w, min_members))
        rc = wide_parse(&w, out);
    for (size_t k = 0; w.vals && k < w.nm; k++)
        json_object_put(w.vals[k]);
    free(w.vals);
    free(w.m);
    if (rc == ZARR_OK)
        return ZARR_OK;
    return zarr__json_parse(text, n, where, out); /* the one answer and message */
}

int
zarr__json_split_wide(const char *text, size_t n, const char *where, const char *const *keys, int nkeys,
                      size_t min_members, zarr__json_span **members, size_t *nm, struct json_object **rest)
{
    wide_scan           w  = {text, n, keys, nkeys, {0}, WIDE_NONE, WIDE_NONE, NULL, 0, 0, NULL, where, NULL};
    struct json_object *o  = NULL;
    int                 rc = ZARR_EMETA;

    *members = NULL;
    *nm      = 0;
    *rest    = NULL;
    if (wide_scan_run(&w, min_members))
        rc = wide_rest(&w, rest, &o);
    if (rc != ZARR_OK) {
        free(w.m);
        return rc;
    }
    *members = w.m;
    *nm      = w.nm;
    return ZARR_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Printing
 * ------------------------------------------------------------------------------------------------ */
/* The writer appends straight into a zarr_buf: `room` makes sure `extra` more bytes fit (the buffer
 * grows by doubling), then bytes are stored without further checks. Runs of plain string bytes go in
 * with one memcpy; integers are formatted without stdio. */
static inline int
room(zarr_buf *b, size_t extra)
{
    if (b->cap - b->size >= extra)
        return ZARR_OK;
    if (extra > SIZE_MAX - b->size)
        return zarr_error(ZARR_EOVERFLOW, "buffer size overflows");
    return zarr_buf_reserve(b, b->size + extra);
}

static int
put(zarr_buf *b, const char *s, size_t n)
{
    int rc = room(b, n);
    if (rc == ZARR_OK) {
        memcpy(b->data + b->size, s, n);
        b->size += n;
    }
    return rc;
}

#define PUT_LIT(b, lit) put((b), (lit), sizeof(lit) - 1)

/* A line break and `level` two-space indents. */
static int
put_indent(zarr_buf *b, int level)
{
    size_t w  = 2 * (size_t)level;
    int    rc = room(b, 1 + w);
    if (rc == ZARR_OK) {
        b->data[b->size] = '\n';
        memset(b->data + b->size + 1, ' ', w);
        b->size += 1 + w;
    }
    return rc;
}

/* How put_string writes each byte: 0 as it is, 'u' as \u00XX, else a backslash and that letter.
 * Bytes >= 0x80 (UTF-8) pass through. */
static const char json_esc[256] = {
    [0x00] = 'u', [0x01] = 'u', [0x02] = 'u', [0x03] = 'u', [0x04] = 'u', [0x05] = 'u',  [0x06] = 'u',
    [0x07] = 'u', [0x08] = 'b', [0x09] = 't', [0x0a] = 'n', [0x0b] = 'u', [0x0c] = 'f',  [0x0d] = 'r',
    [0x0e] = 'u', [0x0f] = 'u', [0x10] = 'u', [0x11] = 'u', [0x12] = 'u', [0x13] = 'u',  [0x14] = 'u',
    [0x15] = 'u', [0x16] = 'u', [0x17] = 'u', [0x18] = 'u', [0x19] = 'u', [0x1a] = 'u',  [0x1b] = 'u',
    [0x1c] = 'u', [0x1d] = 'u', [0x1e] = 'u', [0x1f] = 'u', ['"'] = '"',  ['\\'] = '\\', [0x7f] = 'u',
};

static int
put_string(zarr_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    int               rc;

    if ((rc = room(b, n + 2)) != ZARR_OK) /* enough unless something needs escaping */
        return rc;
    b->data[b->size++] = '"';
    for (size_t i = 0; i < n;) {
        size_t j = i;
        char   e;
        while (j < n && !json_esc[(unsigned char)s[j]])
            j++;
        if (j > i && (rc = put(b, s + i, j - i)) != ZARR_OK)
            return rc;
        if (j == n)
            break;
        e = json_esc[(unsigned char)s[j]];
        if ((rc = room(b, 6)) != ZARR_OK)
            return rc;
        b->data[b->size++] = '\\';
        if (e == 'u') {
            unsigned char c = (unsigned char)s[j];
            memcpy(b->data + b->size, "u00", 3);
            b->data[b->size + 3] = hex[c >> 4];
            b->data[b->size + 4] = hex[c & 15];
            b->size += 5;
        }
        else
            b->data[b->size++] = e;
        i = j + 1;
    }
    if ((rc = room(b, 1)) != ZARR_OK)
        return rc;
    b->data[b->size++] = '"';
    return ZARR_OK;
}

/* The decimal digits of `u`, after a '-' when `neg`, without stdio. */
static int
put_digits(zarr_buf *b, uint64_t u, bool neg)
{
    char tmp[24], *p = tmp + sizeof tmp;

    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (neg)
        *--p = '-';
    return put(b, p, (size_t)(tmp + sizeof tmp - p));
}

/* A JSON integer exactly: int64 when negative, else uint64 (json-c keeps large values as uint64). */
static int
put_int(zarr_buf *b, struct json_object *j)
{
    bool neg = zarr__json_is_negative_int(j);
    return put_digits(b, neg ? (uint64_t)0 - (uint64_t)json_object_get_int64(j) : json_object_get_uint64(j),
                      neg);
}

/* format_double's last texts on this thread, by the double's bit pattern (the text is a function of the
 * bits alone, so an entry can't go stale): metadata repeats a few values (a fill value such as netCDF's
 * 9.969209968386869e+36 in every array's zarr.json, twice), and each costs two or three snprintf + strtod
 * (~6,000 instructions) to print. */
#define DOUBLE_MEMO 4
typedef struct double_memo {
    uint64_t bits;
    uint8_t  len; /* 0: empty */
    char     text[31];
} double_memo;
static _Thread_local double_memo double_memos[DOUBLE_MEMO];
static _Thread_local unsigned    double_memo_next;

static void format_double_slow(double d, char *s, size_t n);

/* Shortest of %.15g/%.16g/%.17g that reads back to exactly `d`; integral values keep a ".0". `n` is at
 * least 32 (every caller passes a 64-byte buffer). */
static void
format_double(double d, char *s, size_t n)
{
    uint64_t     bits;
    size_t       len;
    double_memo *e;
    memcpy(&bits, &d, sizeof bits);
    for (int i = 0; i < DOUBLE_MEMO; i++)
        if (double_memos[i].len && double_memos[i].bits == bits) {
            memcpy(s, double_memos[i].text, (size_t)double_memos[i].len + 1);
            return;
        }
    format_double_slow(d, s, n);
    if ((len = strlen(s)) < sizeof e->text) {
        e       = &double_memos[double_memo_next++ % DOUBLE_MEMO];
        e->bits = bits;
        e->len  = (uint8_t)len;
        memcpy(e->text, s, len + 1);
    }
}

static void
format_double_slow(double d, char *s, size_t n)
{
    if (isnan(d)) {
        snprintf(s, n, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(s, n, d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(s, n, "%.*g", prec, d);
        if (strtod(s, NULL) == d)
            break;
    }
    if (!strpbrk(s, ".eEn")) {
        size_t l = strlen(s);
        if (l + 2 < n)
            memcpy(s + l, ".0", 3);
    }
}

static int
dump_rec(zarr_buf *b, struct json_object *j, int level)
{
    char tmp[64];
    int  rc = ZARR_OK;

    switch (j ? json_object_get_type(j) : json_type_null) {
        case json_type_null:
            return PUT_LIT(b, "null");
        case json_type_boolean:
            return json_object_get_boolean(j) ? PUT_LIT(b, "true") : PUT_LIT(b, "false");
        case json_type_int:
            return put_int(b, j);
        case json_type_double:
            format_double(json_object_get_double(j), tmp, sizeof tmp);
            return put(b, tmp, strlen(tmp));
        case json_type_string:
            return put_string(b, json_object_get_string(j), (size_t)json_object_get_string_len(j));
        case json_type_array: {
            size_t len = json_object_array_length(j);
            if (len == 0)
                return PUT_LIT(b, "[]");
            if ((rc = PUT_LIT(b, "[")) != ZARR_OK)
                return rc;
            for (size_t i = 0; i < len; i++) {
                if (i && (rc = PUT_LIT(b, ",")) != ZARR_OK)
                    return rc;
                if ((rc = put_indent(b, level + 1)) != ZARR_OK ||
                    (rc = dump_rec(b, json_object_array_get_idx(j, i), level + 1)) != ZARR_OK)
                    return rc;
            }
            if ((rc = put_indent(b, level)) != ZARR_OK)
                return rc;
            return PUT_LIT(b, "]");
        }
        case json_type_object: {
            bool first = true;
            if (json_object_object_length(j) == 0)
                return PUT_LIT(b, "{}");
            if ((rc = PUT_LIT(b, "{")) != ZARR_OK)
                return rc;
            json_object_object_foreach(j, key, val)
            {
                if ((rc = zarr__json_w_key(b, level, first, key)) != ZARR_OK ||
                    (rc = dump_rec(b, val, level + 1)) != ZARR_OK)
                    return rc;
                first = false;
            }
            if ((rc = put_indent(b, level)) != ZARR_OK)
                return rc;
            return PUT_LIT(b, "}");
        }
    }
    return rc;
}

/* ---- writing a document piece by piece (zjson.h, "Writing a document") ---- */
int
zarr__json_w_value(zarr_buf *b, struct json_object *j, int level)
{
    return dump_rec(b, j, level);
}

int
zarr__json_w_item(zarr_buf *b, int level, bool first)
{
    int rc;
    if (!first && (rc = PUT_LIT(b, ",")) != ZARR_OK)
        return rc;
    return put_indent(b, level + 1);
}

int
zarr__json_w_key(zarr_buf *b, int level, bool first, const char *key)
{
    size_t n = strlen(key), i = 0;
    int    rc;

    while (i < n && !json_esc[(unsigned char)key[i]])
        i++;
    if (i < n) { /* a key that needs escaping */
        if ((rc = zarr__json_w_item(b, level, first)) != ZARR_OK || (rc = put_string(b, key, n)) != ZARR_OK)
            return rc;
        return PUT_LIT(b, ": ");
    }
    return zarr__json_w_key_n(b, level, first, key, n);
}

int
zarr__json_w_key_n(zarr_buf *b, int level, bool first, const char *key, size_t n)
{
    size_t w = 2 * (size_t)level + 2;
    char  *p;
    int    rc;
    /* one room check, then the bytes (",", line break, indent, quoted key, ": ") */
    if ((rc = room(b, n + w + 6)) != ZARR_OK)
        return rc;
    p = (char *)b->data + b->size;
    if (!first)
        *p++ = ',';
    *p++ = '\n';
    memset(p, ' ', w);
    p += w;
    *p++ = '"';
    memcpy(p, key, n);
    p += n;
    memcpy(p, "\": ", 3);
    b->size = (size_t)(p + 3 - (char *)b->data);
    return ZARR_OK;
}

int
zarr__json_w_close(zarr_buf *b, int level, char close)
{
    int rc = put_indent(b, level);
    return rc == ZARR_OK ? put(b, &close, 1) : rc;
}

int
zarr__json_w_raw(zarr_buf *b, const char *s)
{
    return put(b, s, strlen(s));
}

int
zarr__json_w_string(zarr_buf *b, const char *s)
{
    return s ? put_string(b, s, strlen(s)) : PUT_LIT(b, "null");
}

int
zarr__json_w_u64(zarr_buf *b, uint64_t u)
{
    return put_digits(b, u, false);
}

int
zarr__json_w_u64_list(zarr_buf *b, const uint64_t *vals, int n, int level)
{
    int rc;
    if (n <= 0)
        return PUT_LIT(b, "[]");
    if ((rc = PUT_LIT(b, "[")) != ZARR_OK)
        return rc;
    for (int i = 0; i < n; i++)
        if ((rc = zarr__json_w_item(b, level, i == 0)) != ZARR_OK ||
            (rc = zarr__json_w_u64(b, vals[i])) != ZARR_OK)
            return rc;
    return zarr__json_w_close(b, level, ']');
}

char *
zarr__json_dump(struct json_object *j)
{
    zarr_buf b = ZARR_BUF_INIT;
    /* one allocation for most metadata documents */
    if (zarr_buf_reserve(&b, 1024) != ZARR_OK || dump_rec(&b, j, 0) != ZARR_OK ||
        zarr_buf_append(&b, "", 1) != ZARR_OK) {
        zarr_buf_free(&b);
        return NULL;
    }
    return (char *)b.data;
}

/* ------------------------------------------------------------------------------------------------
 * Numbers and comparison
 * ------------------------------------------------------------------------------------------------ */
bool
zarr__json_is_negative_int(struct json_object *j)
{
    return json_object_is_type(j, json_type_int) && json_object_get_int64(j) < 0;
}

bool
zarr__json_is_number(struct json_object *j)
{
    return json_object_is_type(j, json_type_int) || json_object_is_type(j, json_type_double);
}

bool
zarr__json_get_i64(struct json_object *j, int64_t *out)
{
    if (!json_object_is_type(j, json_type_int))
        return false;
    if (zarr__json_is_negative_int(j)) {
        *out = json_object_get_int64(j);
        return true;
    }
    uint64_t u = json_object_get_uint64(j);
    if (u > INT64_MAX)
        return false;
    *out = (int64_t)u;
    return true;
}

bool
zarr__json_get_u64(struct json_object *j, uint64_t *out)
{
    if (!json_object_is_type(j, json_type_int) || zarr__json_is_negative_int(j))
        return false;
    *out = json_object_get_uint64(j);
    return true;
}

bool
zarr__json_equal(struct json_object *a, struct json_object *b)
{
    json_type ta = a ? json_object_get_type(a) : json_type_null;
    json_type tb = b ? json_object_get_type(b) : json_type_null;

    if (zarr__json_is_number(a) && zarr__json_is_number(b)) {
        if (ta == json_type_int && tb == json_type_int) {
            if (zarr__json_is_negative_int(a) != zarr__json_is_negative_int(b))
                return false;
            if (zarr__json_is_negative_int(a))
                return json_object_get_int64(a) == json_object_get_int64(b);
            return json_object_get_uint64(a) == json_object_get_uint64(b);
        }
        double da = json_object_get_double(a), db = json_object_get_double(b);
        if (ta == json_type_int)
            da = zarr__json_is_negative_int(a) ? (double)json_object_get_int64(a)
                                               : (double)json_object_get_uint64(a);
        if (tb == json_type_int)
            db = zarr__json_is_negative_int(b) ? (double)json_object_get_int64(b)
                                               : (double)json_object_get_uint64(b);
        return da == db || (isnan(da) && isnan(db));
    }
    if (ta != tb)
        return false;
    switch (ta) {
        case json_type_null:
            return true;
        case json_type_boolean:
            return json_object_get_boolean(a) == json_object_get_boolean(b);
        case json_type_string:
            return json_object_get_string_len(a) == json_object_get_string_len(b) &&
                   memcmp(json_object_get_string(a), json_object_get_string(b),
                          (size_t)json_object_get_string_len(a)) == 0;
        case json_type_array: {
            size_t n = json_object_array_length(a);
            if (n != json_object_array_length(b))
                return false;
            for (size_t i = 0; i < n; i++)
                if (!zarr__json_equal(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i)))
                    return false;
            return true;
        }
        case json_type_object: {
            if (json_object_object_length(a) != json_object_object_length(b))
                return false;
            json_object_object_foreach(a, key, va)
            {
                struct json_object *vb;
                if (!json_object_object_get_ex(b, key, &vb) || !zarr__json_equal(va, vb))
                    return false;
            }
            return true;
        }
        default:
            return false;
    }
}

/* ------------------------------------------------------------------------------------------------
 * Getters
 * ------------------------------------------------------------------------------------------------ */
bool
zarr__json_has(struct json_object *obj, const char *key)
{
    return json_object_is_type(obj, json_type_object) && json_object_object_get_ex(obj, key, NULL);
}

int
zarr__json_get_key(struct json_object *obj, const char *key, json_type type, bool required, const char *where,
                   const char *what, struct json_object **out)
{
    struct json_object *v = NULL;

    *out = NULL;
    if (!json_object_is_type(obj, json_type_object))
        return zarr_error(ZARR_EMETA, "'%s': expected a JSON object", where);
    if (!json_object_object_get_ex(obj, key, &v)) {
        if (required)
            return zarr_error(ZARR_EMETA, "'%s': missing required key '%s'", where, key);
        return ZARR_OK;
    }
    if (type != json_type_null && !json_object_is_type(v, type))
        return zarr_error(ZARR_EMETA, "'%s': '%s' must be %s", where, key, what);
    *out = v;
    return ZARR_OK;
}

int
zarr__json_get_str(struct json_object *obj, const char *key, bool required, const char *where,
                   const char **out)
{
    struct json_object *v;
    int                 rc = zarr__json_get_key(obj, key, json_type_string, required, where, "a string", &v);
    *out                   = (rc == ZARR_OK && v) ? json_object_get_string(v) : NULL;
    return rc;
}

int
zarr__json_uint_list(struct json_object *list, const char *name, uint64_t min, const char *where,
                     uint64_t *vals, int max, int *n)
{
    const char *what = min ? "positive integers" : "non-negative integers";
    size_t      len;

    *n = 0;
    if (!json_object_is_type(list, json_type_array))
        return zarr_error(ZARR_EMETA, "'%s': '%s' must be a list of %s", where, name, what);
    len = json_object_array_length(list);
    if (len > (size_t)max)
        return zarr_error(ZARR_EMETA, "'%s': '%s' has %zu entries, more than the %d supported", where, name,
                          len, max);
    for (size_t i = 0; i < len; i++) {
        uint64_t v;
        if (!zarr__json_get_u64(json_object_array_get_idx(list, i), &v) || v < min)
            return zarr_error(ZARR_EMETA, "'%s': '%s' must be a list of %s", where, name, what);
        vals[i] = v;
    }
    *n = (int)len;
    return ZARR_OK;
}

int
zarr__json_get_uint_list(struct json_object *obj, const char *key, uint64_t min, const char *where,
                         uint64_t *vals, int max, int *n)
{
    struct json_object *v;
    int                 rc;

    *n = 0;
    if ((rc = zarr__json_get_key(obj, key, json_type_null, true, where, NULL, &v)) != ZARR_OK)
        return rc;
    return zarr__json_uint_list(v, key, min, where, vals, max, n);
}

struct json_object *
zarr__json_new_uint_list(const uint64_t *vals, int n)
{
    struct json_object *a = json_object_new_array_ext(n);
    if (!a)
        return NULL;
    for (int i = 0; i < n; i++) {
        struct json_object *v = json_object_new_uint64(vals[i]);
        if (!v || json_object_array_add(a, v) != 0) {
            json_object_put(v);
            json_object_put(a);
            return NULL;
        }
    }
    return a;
}

int
zarr__json_add(struct json_object *obj, const char *key, struct json_object *val)
{
    if (json_object_object_add(obj, key, val) != 0) {
        json_object_put(val);
        return zarr_error(ZARR_ENOMEM, "out of memory adding '%s' to a JSON object", key);
    }
    return ZARR_OK;
}
