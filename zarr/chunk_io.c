/*
 * chunk_io.c: how the engine names, loads and stores one chunk, and the array's fill chunk those compare
 * against and read missing chunks from (zarr__array_fill_chunk, made as large as the largest chunk a
 * job has asked for; zarr__is_fill). Chunk keys are built from a prefix
 * made once per job (zarr__job_key_setup); a chunk is loaded by one path (zarr__chunk_load: fetch,
 * then zarr__chunk_decode) and stored by one path (zarr__chunk_store: zarr__chunk_encode, which also
 * decides whether a chunk equal to the fill value is left out, then set or delete). The sharded path
 * (batch.c) uses the same decode and encode on inner chunks, with its own fetch and assembly. Every
 * byte goes through the store interface; a job whose keys were checked once calls the store's ops
 * directly (zarr__cio.store), and reads an uncompressed chunk straight into the caller's memory when
 * the store has the optional get_into op.
 */
#include "job.h"

#include <stdlib.h>
#include <string.h>

typedef zarr__job job;

/* ---- the fill chunk ---- */

/* A fill chunk a larger one replaced (zarr__array_fill_chunk), kept until the array closes. */
struct fill_retired {
    struct fill_retired *next;
    uint8_t             *p;
};
typedef struct fill_retired fill_retired;

int
zarr__array_fill_chunk(zarr_array *a, size_t bytes)
{
    size_t        es = a->meta->dtype->size, n = es;
    int           rc  = ZARR_OK;
    uint8_t      *p   = NULL;
    fill_retired *old = NULL;

    pthread_mutex_lock(&a->lock);
    if (a->fill_chunk && a->fill_chunk_bytes >= bytes)
        goto done;
    if ((a->fill_chunk && !(old = malloc(sizeof *old))) || !(p = malloc(bytes))) {
        free(old);
        rc = zarr_error(ZARR_ENOMEM, "out of memory allocating a fill chunk of %zu bytes for '/%s'", bytes,
                        a->path);
        goto done;
    }
    if (a->meta->fill)
        memcpy(p, a->meta->fill, es);
    else
        memset(p, 0, es);
    a->fill_is_zero = true;
    for (size_t k = 0; k < es; k++)
        if (p[k])
            a->fill_is_zero = false;
    if (a->fill_is_zero)
        memset(p, 0, bytes);
    else
        for (; n < bytes; n *= 2) /* doubling copies */
            memcpy(p + n, p, n <= bytes - n ? n : bytes - n);
    if (old) { /* a job beside this one may still be reading the smaller one */
        old->p          = a->fill_chunk;
        old->next       = a->fill_retired;
        a->fill_retired = old;
    }
    a->fill_chunk       = p;
    a->fill_chunk_bytes = bytes;
done:
    pthread_mutex_unlock(&a->lock);
    return rc;
}

int
zarr__array_fill_retire(zarr_array *a)
{
    fill_retired *old;
    if (!a->fill_chunk)
        return ZARR_OK;
    if (!(old = malloc(sizeof *old)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    old->p              = a->fill_chunk; /* a job beside the caller may still read it */
    old->next           = a->fill_retired;
    a->fill_retired     = old;
    a->fill_chunk       = NULL;
    a->fill_chunk_bytes = 0;
    return ZARR_OK;
}

void
zarr__array_fill_free(zarr_array *a)
{
    free(a->fill_chunk);
    a->fill_chunk = NULL;
    for (fill_retired *r = a->fill_retired, *next; r; r = next) {
        next = r->next;
        free(r->p);
        free(r);
    }
    a->fill_retired = NULL;
}

bool
zarr__is_fill(const zarr_array *a, const uint8_t *p, size_t n)
{
    if (a->fill_is_zero) {
        /* Word-wise zero test, early exit. */
        size_t k = 0;
        for (; k + 8 <= n; k += 8) {
            uint64_t w;
            memcpy(&w, p + k, 8);
            if (w)
                return false;
        }
        for (; k < n; k++)
            if (p[k])
                return false;
        return true;
    }
    return memcmp(p, a->fill_chunk, n) == 0;
}

/* A v2 array without a fill value (zarr-python 2.13 leaves missing chunks uninitialised then) never
 * has chunks elided: every chunk written is stored, even when it holds only the zeros this library
 * reads missing chunks as. */
bool
zarr__has_fill(const zarr_array_meta *m)
{
    return m->zarr_format != 2 || m->fill_defined;
}

/* ---- keys ---- */

/* Appends the decimal form of v at p; returns the new end. */
static char *
put_u64(char *p, uint64_t v)
{
    char  tmp[20];
    char *t = tmp + sizeof tmp;
    do {
        *--t = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    memcpy(p, t, (size_t)(tmp + sizeof tmp - t));
    return p + (tmp + sizeof tmp - t);
}

/* The same key as zarr_chunk_key (meta.c), without snprintf. */
int
zarr__job_key(const job *j, const uint64_t *coords, char *key)
{
    char *p;
    if (!j->fast_key)
        return zarr_chunk_key(j->m, j->a->path, coords, key, ZARR__KEY_MAX);
    memcpy(key, j->key_prefix, j->key_plen);
    p = key + j->key_plen;
    if (j->v3_keys)
        for (int d = 0; d < j->nd; d++) {
            *p++ = j->key_sep;
            p    = put_u64(p, coords[d]);
        }
    else if (j->nd == 0)
        *p++ = '0';
    else
        for (int d = 0; d < j->nd; d++) {
            if (d)
                *p++ = j->key_sep;
            p = put_u64(p, coords[d]);
        }
    *p = '\0';
    return ZARR_OK;
}

/* Whether the array's key memo holds j's key form (prefix, separator, v3 or not, dimensions) checked on
 * coordinates at least `last` in every dimension (a key of smaller numbers is no longer); *store_ok then
 * tells whether its keys passed the store's rules. One check per array instead of one per job: W3's 400
 * box writes each formatted a key with snprintf for it (1.0M of its 6.4M instructions). */
static bool
key_memo_covers(const job *j, const uint64_t *last, bool *store_ok)
{
    zarr_array *a  = j->a;
    bool        ok = false;
    pthread_mutex_lock(&a->lock);
    if (a->key_memo.prefix && a->key_memo.plen == j->key_plen && a->key_memo.v3 == j->v3_keys &&
        a->key_memo.sep == j->key_sep && a->key_memo.nd == j->nd &&
        memcmp(a->key_memo.prefix, j->key_prefix, j->key_plen) == 0) {
        ok = true;
        for (int d = 0; d < j->nd && ok; d++)
            ok = last[d] <= a->key_memo.max[d];
        *store_ok = a->key_memo.store_ok;
    }
    pthread_mutex_unlock(&a->lock);
    return ok;
}

/* Records j's key form as checked on coordinates `last`: the memo's largest coordinates grow to them when
 * it holds the same form (the store's key rules do not look at the length of a key nor at its digits, so
 * a key of this form checked at two points passes between them), else the memo is replaced. */
static void
key_memo_note(const job *j, const uint64_t *last, bool store_ok)
{
    zarr_array *a = j->a;
    char       *p;
    pthread_mutex_lock(&a->lock);
    if (a->key_memo.prefix && a->key_memo.plen == j->key_plen && a->key_memo.v3 == j->v3_keys &&
        a->key_memo.sep == j->key_sep && a->key_memo.nd == j->nd && a->key_memo.store_ok == store_ok &&
        memcmp(a->key_memo.prefix, j->key_prefix, j->key_plen) == 0) {
        for (int d = 0; d < j->nd; d++)
            if (last[d] > a->key_memo.max[d])
                a->key_memo.max[d] = last[d];
        pthread_mutex_unlock(&a->lock);
        return;
    }
    pthread_mutex_unlock(&a->lock);
    if (!(p = malloc(j->key_plen ? j->key_plen : 1)))
        return; /* no memo: the next job checks again */
    memcpy(p, j->key_prefix, j->key_plen);
    pthread_mutex_lock(&a->lock);
    free(a->key_memo.prefix);
    a->key_memo.prefix   = p;
    a->key_memo.plen     = j->key_plen;
    a->key_memo.v3       = j->v3_keys;
    a->key_memo.sep      = j->key_sep;
    a->key_memo.nd       = j->nd;
    a->key_memo.store_ok = store_ok;
    for (int d = 0; d < j->nd; d++)
        a->key_memo.max[d] = last[d];
    pthread_mutex_unlock(&a->lock);
}

/* Sets up the job's key prefix and checks the fast form against zarr_chunk_key and the store's key
 * rules once (on the largest coordinates of the job, or not at all when the array's memo covers them);
 * any doubt falls back to the checked path. */
void
zarr__job_key_setup(job *j)
{
    const char *path = j->a->path;
    size_t      pl   = strlen(path);
    uint64_t    last[ZARR_MAX_DIMS];
    char        k1[ZARR__KEY_MAX], k2[ZARR__KEY_MAX];
    bool        store_ok;

    j->fast_key = false;
    j->io.store = NULL;
    j->v3_keys  = j->m->key_encoding == ZARR_KEYS_DEFAULT;
    j->key_sep  = j->m->separator == '.' ? '.' : '/';
    /* prefix + "c" + per dim a separator and at most 20 digits + NUL must fit */
    if (pl + 2 + 21 * (size_t)(j->nd + 1) + 1 > ZARR__KEY_MAX)
        return;
    j->key_plen = 0;
    if (pl) {
        memcpy(j->key_prefix, path, pl);
        j->key_prefix[pl] = '/';
        j->key_plen       = pl + 1;
    }
    if (j->v3_keys)
        j->key_prefix[j->key_plen++] = 'c';
    for (int d = 0; d < j->nd; d++)
        last[d] = j->d[d].nchunks ? j->d[d].chunks[j->d[d].nchunks - 1].coord : 0;
    j->fast_key = true;
    if (key_memo_covers(j, last, &store_ok))
        j->io.store = store_ok ? j->a->store : NULL;
    else {
        if (zarr__job_key(j, last, k1) != ZARR_OK ||
            zarr_chunk_key(j->m, path, last, k2, sizeof k2) != ZARR_OK || strcmp(k1, k2) != 0) {
            j->fast_key = false;
            zarr_error_clear();
            return;
        }
        if (zarr__store_check_key(k1, false) == ZARR_OK)
            j->io.store = j->a->store;
        else
            zarr_error_clear();
        key_memo_note(j, last, j->io.store != NULL);
    }
    j->io.zero_copy = j->io.store && j->io.identity && !j->io.vlen && j->io.store->ops->get_into;
}
void
zarr__cio_of_array(zarr__cio *io, zarr_array *a)
{
    const zarr_array_meta *m     = a->meta;
    uint64_t               nelem = 1;
    memset(io, 0, sizeof *io);
    for (int d = 0; d < m->ndim; d++)
        nelem *= m->chunks[d]; /* checked by every job that cached a chunk */
    io->a           = a;
    io->chain       = m->chain;
    io->shape       = m->chunks;
    io->chunk_nelem = (size_t)nelem;
    io->chunk_bytes = (size_t)nelem * m->dtype->size;
    io->identity    = zarr_chain_is_identity(m->chain);
    io->vlen        = zarr_dtype_has_vlen(m->dtype);
    io->elide       = !io->vlen && !a->opts.write_empty_chunks && zarr__has_fill(m);
    io->fill_chunk  = a->fill_chunk;
}

/* Store calls: straight to the store's ops when the job's keys were checked, else through the checking
 * zarr_store_* wrappers. Writability was checked when the job started. */
static int
st_get(const zarr__cio *io, const char *key, zarr_buf *out)
{
    return io->store ? io->store->ops->get(io->store, key, out) : zarr_store_get(io->a->store, key, out);
}

static int
st_set(const zarr__cio *io, const char *key, const void *data, size_t n)
{
    return io->store ? io->store->ops->set(io->store, key, data, n)
                     : zarr_store_set(io->a->store, key, data, n);
}

static int
st_del(const zarr__cio *io, const char *key)
{
    return io->store ? io->store->ops->del(io->store, key) : zarr_store_del(io->a->store, key);
}

int
zarr__chunk_decode(const zarr__cio *io, zarr__worker *w, const uint8_t *enc, size_t n, uint8_t *dst,
                   const uint8_t **mem)
{
    zarr_codec_ctx *ctx;
    int             rc;

    *mem = NULL;
    if (io->identity) {
        if (n != io->chunk_bytes)
            return zarr_error(ZARR_ECODEC, "chunk holds %zu bytes, expected %zu", n, io->chunk_bytes);
        if (dst)
            memcpy(dst, enc, n);
        *mem = dst ? dst : enc;
        return ZARR_OK;
    }
    if (!dst)
        return zarr_error(ZARR_EINVAL, "zarr__chunk_decode: no destination for a non-identity chain");
    if (!(ctx = zarr__worker_ctx(w)))
        return ZARR_ENOMEM;
    /* On failure decode frees what it allocated: dst holds no payloads then. */
    if ((rc = zarr_chain_decode(io->chain, ctx, enc, n, dst, io->shape)) != ZARR_OK)
        return rc;
    *mem = dst;
    return ZARR_OK;
}

int
zarr__chunk_load(const zarr__cio *io, zarr__worker *w, const char *key, uint8_t *dst, const uint8_t **mem)
{
    int rc;

    *mem = NULL;
    if (io->zero_copy && dst) {
        rc = io->store->ops->get_into(io->store, key, dst, io->chunk_bytes);
        if (rc == ZARR_ENOTFOUND) {
            zarr_error_clear();
            return ZARR_OK;
        }
        if (rc == ZARR_OK)
            *mem = dst;
        return rc;
    }
    rc = st_get(io, key, &w->enc);
    if (rc == ZARR_ENOTFOUND) {
        zarr_error_clear();
        return ZARR_OK;
    }
    if (rc != ZARR_OK)
        return rc;
    return zarr__chunk_decode(io, w, w->enc.data, w->enc.size, dst, mem);
}

int
zarr__chunk_encode(const zarr__cio *io, zarr__worker *w, const uint8_t *mem, bool *elide, const uint8_t **enc,
                   size_t *n)
{
    zarr_codec_ctx *ctx;
    int             rc;

    *elide = io->elide && zarr__is_fill(io->a, mem, io->chunk_bytes);
    if (*elide)
        return ZARR_OK;
    if (io->identity) {
        *enc = mem;
        *n   = io->chunk_bytes;
        return ZARR_OK;
    }
    if (!(ctx = zarr__worker_ctx(w)))
        return ZARR_ENOMEM;
    if ((rc = zarr_chain_encode(io->chain, ctx, mem, io->shape, &w->enc)) != ZARR_OK)
        return rc;
    *enc = w->enc.data;
    *n   = w->enc.size;
    return ZARR_OK;
}

int
zarr__chunk_store(const zarr__cio *io, zarr__worker *w, const char *key, const uint8_t *mem)
{
    const uint8_t *enc = NULL;
    size_t         n   = 0;
    bool           elide;
    int            rc;

    if ((rc = zarr__chunk_encode(io, w, mem, &elide, &enc, &n)) != ZARR_OK)
        return rc;
    return elide ? st_del(io, key) : st_set(io, key, enc, n);
}
