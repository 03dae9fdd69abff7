/*
 * store_behind.c: the write-behind store of zarr_store_behind.h, one job: a queue of values to store,
 * its memory budget, one sender thread that stores the queue on the inner store as batches, the waits
 * that keep every other operation from overtaking a queued write, and the record of the first failed
 * write. It sits at the store seam, under the engine and the connector, so the chunks of every array
 * (batch.c's set_many of a wave) and the connector's documents (vol/flush.c) pipeline alike, with no
 * change to either but the points that must wait (flush, close). The sender takes the whole queue as
 * one batch when it is idle: while a batch is on the wire (one round trip, up to the transport's
 * in-flight limit), what the caller queues gathers into the next one, so the number of round trips a
 * program waits follows its own pace, not its number of writes. Same-key writes stay in order: a value
 * queued again before it was taken replaces the queued one; one queued while the key is being stored
 * goes out in a later batch. Deletes queue alike (a delete is an item without a value, stored with the
 * inner store's del_many beside the batch's set_many): a key's delete and its writes replace each
 * other while pending and never share a batch, so the last call on a key is what the store keeps.
 */
#include "h5zarr/zarr_store_behind.h"
#include "store_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKET 1024

typedef struct item {
    char        *key;
    void        *data;
    size_t       n;
    bool         flight; /* taken by the sender */
    bool         del;    /* a delete: no value */
    struct item *next;   /* the pending list, or the batch being stored */
    struct item *hnext;  /* hash chain: every queued key */
} item;

struct zarr_store_behind {
    zarr_store_fwd  fwd;
    pthread_mutex_t mu;
    pthread_cond_t  wake;  /* to the sender: work, a caller waiting, stop */
    pthread_cond_t  moved; /* to callers: a batch ended (bytes freed, keys stored, maybe an error) */
    pthread_t       thread;
    item           *head, *tail; /* pending, in order */
    item           *buckets[NBUCKET];
    unsigned        holds;   /* zarr_store_behind_hold */
    unsigned        urgent;  /* callers waiting for keys, the queue or the budget: send even when held */
    bool            sending; /* a batch is with the inner store */
    bool            stop;
    int             err; /* the first failed write (kept) */
    char            err_key[512];
    char            err_msg[1024];
    zarr_store_behind_stats st;
};

#define B(s) ((zarr_store_behind *)(s))

static size_t
bucket_of(const char *key)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return (size_t)(h % NBUCKET);
}

/* The queued item of `key`: a pending one when `pending_only`, else any (pending or being stored). */
static item *
find(zarr_store_behind *b, const char *key, bool pending_only)
{
    for (item *it = b->buckets[bucket_of(key)]; it; it = it->hnext)
        if ((!pending_only || !it->flight) && strcmp(it->key, key) == 0)
            return it;
    return NULL;
}

static void
unhash(zarr_store_behind *b, item *it)
{
    for (item **pp = &b->buckets[bucket_of(it->key)]; *pp; pp = &(*pp)->hnext)
        if (*pp == it) {
            *pp = it->hnext;
            return;
        }
}

static void
item_free(item *it)
{
    if (it) {
        free(it->key);
        free(it->data);
        free(it);
    }
}

/* Drops every pending item (after a failure: they are never sent). Under the lock. */
static void
drop_pending(zarr_store_behind *b)
{
    while (b->head) {
        item *it = b->head;
        b->head  = it->next;
        unhash(b, it);
        b->st.queued -= it->n;
        item_free(it);
    }
    b->tail = NULL;
}

/* Stores one batch (the items, taken off the pending list) on the inner store: its values with one
 * set_many, its deletes with one del_many (a key is never in a batch twice: the order of the two does
 * not matter); records the first failure. Called without the lock. */
static void
send_batch(zarr_store_behind *b, item *batch)
{
    size_t       n = 0, np = 0, nd = 0, i = 0;
    const char **keys;
    const void **data;
    size_t      *sizes;
    int         *res, rc = ZARR_OK, rd = ZARR_OK;
    char         msg[1024] = "";

    for (item *it = batch; it; it = it->next)
        n++;
    keys  = malloc(n * sizeof *keys);
    data  = malloc(n * sizeof *data);
    sizes = malloc(n * sizeof *sizes);
    res   = malloc(n * sizeof *res);
    if (!keys || !data || !sizes || !res) {
        rc = zarr_error(ZARR_ENOMEM, "out of memory storing %zu queued values of '%s'", n, b->fwd.base.url);
        for (i = 0; i < n && res; i++)
            res[i] = rc;
    }
    else {
        /* the values from the front of the arrays, the deletes from the back */
        for (item *it = batch; it; it = it->next) {
            size_t k = it->del ? n - 1 - nd++ : np++;
            keys[k]  = it->key;
            data[k]  = it->data;
            sizes[k] = it->n;
        }
        if (np)
            rc = zarr__store_op_set_many(b->fwd.inner, np, keys, data, sizes, res);
        if (rc != ZARR_OK)
            zarr_error_save(msg, sizeof msg);
        if (nd)
            rd = zarr__store_op_del_many(b->fwd.inner, nd, keys + np, res + np);
        if (rd != ZARR_OK && rc == ZARR_OK) {
            rc = rd;
            zarr_error_save(msg, sizeof msg);
        }
    }
    if (rc != ZARR_OK && !msg[0])
        zarr_error_save(msg, sizeof msg);
    pthread_mutex_lock(&b->mu);
    np = nd = 0;
    for (item *it = batch, *next; it; it = next) {
        size_t k = it->del ? n - 1 - nd++ : np++;
        next     = it->next;
        if (rc != ZARR_OK && b->err == ZARR_OK && (!res || res[k] != ZARR_OK)) {
            b->err = res ? res[k] : rc;
            snprintf(b->err_key, sizeof b->err_key, "%s", it->key);
            snprintf(b->err_msg, sizeof b->err_msg, "%s", msg);
        }
        unhash(b, it);
        b->st.queued -= it->n;
        item_free(it);
    }
    if (b->err != ZARR_OK)
        drop_pending(b);
    b->st.batches++;
    b->st.items += n;
    b->sending = false;
    pthread_cond_broadcast(&b->moved);
    pthread_mutex_unlock(&b->mu);
    free(keys);
    free(data);
    free(sizes);
    free(res);
}

/* The sender: waits for work, takes the whole pending list as one batch, stores it. Ends at stop once
 * the queue is empty. */
static void *
sender(void *arg)
{
    zarr_store_behind *b = arg;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        item *batch;
        while (!(b->head && (b->holds == 0 || b->urgent || b->stop)) && !(b->stop && !b->head))
            pthread_cond_wait(&b->wake, &b->mu);
        if (!b->head)
            break; /* stop, nothing left */
        batch   = b->head;
        b->head = b->tail = NULL;
        for (item *it = batch; it; it = it->next)
            it->flight = true;
        b->sending = true;
        pthread_mutex_unlock(&b->mu);
        send_batch(b, batch);
        pthread_mutex_lock(&b->mu);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* The first failure as a return value with its message, or ZARR_OK. Under the lock. */
static int
failed_locked(zarr_store_behind *b)
{
    if (b->err == ZARR_OK)
        return ZARR_OK;
    return zarr_error(b->err, "%s", b->err_msg[0] ? b->err_msg : "a queued write failed");
}

/* Waits until nothing is queued (`key` NULL) or `key` is not. Under the lock. */
static void
wait_locked(zarr_store_behind *b, const char *key)
{
    if (key ? !find(b, key, false) : !(b->head || b->sending))
        return;
    b->urgent++;
    pthread_cond_signal(&b->wake);
    while (key ? find(b, key, false) != NULL : (b->head || b->sending))
        pthread_cond_wait(&b->moved, &b->mu);
    b->urgent--;
}

/* Waits for `key` (NULL: the whole queue) to be stored. */
static void
wait_for(zarr_store *s, const char *key)
{
    zarr_store_behind *b = B(s);
    pthread_mutex_lock(&b->mu);
    wait_locked(b, key);
    pthread_mutex_unlock(&b->mu);
}

/* Queues a copy of `data` at `key` (`del`: a delete of `key`, no data), waiting for the budget. */
static int
enqueue(zarr_store_behind *b, const char *key, const void *data, size_t n, bool del)
{
    item *it = calloc(1, sizeof *it), *old;
    int   rc = ZARR_OK;

    if (!it || !(it->key = strdup(key)) || (n && !(it->data = malloc(n)))) {
        item_free(it);
        return zarr_error(ZARR_ENOMEM, "out of memory queueing key '%s' of '%s' (%zu bytes)", key,
                          b->fwd.base.url, n);
    }
    if (n)
        memcpy(it->data, data, n);
    it->n   = n;
    it->del = del;
    pthread_mutex_lock(&b->mu);
    if (b->st.queued && b->st.queued + n > b->st.budget) {
        b->st.waits++;
        b->urgent++;
        pthread_cond_signal(&b->wake);
        while (b->err == ZARR_OK && b->st.queued && b->st.queued + n > b->st.budget)
            pthread_cond_wait(&b->moved, &b->mu);
        b->urgent--;
    }
    if (b->err != ZARR_OK) {
        rc = zarr_error(b->err, "can't queue key '%s' of '%s': an earlier write failed: %s", key,
                        b->fwd.base.url, b->err_msg);
        item_free(it);
        goto done;
    }
    if ((old = find(b, key, true))) { /* replaces the value not yet taken: the newer one wins */
        b->st.queued = b->st.queued - old->n + n;
        free(old->data);
        old->data = it->data;
        old->n    = n;
        old->del  = del;
        it->data  = NULL;
        item_free(it);
    }
    else {
        size_t k      = bucket_of(key);
        it->hnext     = b->buckets[k];
        b->buckets[k] = it;
        if (b->tail)
            b->tail->next = it;
        else
            b->head = it;
        b->tail = it;
        b->st.queued += n;
    }
    if (b->st.queued > b->st.max_queued)
        b->st.max_queued = b->st.queued;
    pthread_cond_signal(&b->wake);
done:
    pthread_mutex_unlock(&b->mu);
    return rc;
}

/* ---- the ops -------------------------------------------------------------------------------------- */

static int
bh_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    return enqueue(B(s), key, data, n, false);
}

static int
bh_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data, const size_t *sizes,
            int *results)
{
    int first = ZARR_OK;
    for (size_t i = 0; i < n; i++) {
        results[i] = first == ZARR_OK ? enqueue(B(s), keys[i], data[i], sizes[i], false) : first;
        if (results[i] != ZARR_OK && first == ZARR_OK)
            first = results[i];
    }
    return first;
}

static int
bh_get(zarr_store *s, const char *key, zarr_buf *out)
{
    wait_for(s, key);
    return zarr_store_fwd_get(s, key, out);
}

static int
bh_get_range(zarr_store *s, const char *key, uint64_t off, uint64_t len, zarr_buf *out)
{
    wait_for(s, key);
    return zarr_store_fwd_get_range(s, key, off, len, out);
}

static int
bh_get_into(zarr_store *s, const char *key, void *dst, size_t n)
{
    wait_for(s, key);
    return zarr_store_fwd_get_into(s, key, dst, n);
}

static int
bh_size(zarr_store *s, const char *key, uint64_t *size)
{
    wait_for(s, key);
    return zarr_store_fwd_size(s, key, size);
}

static int
bh_exists(zarr_store *s, const char *key)
{
    wait_for(s, key);
    return zarr_store_fwd_exists(s, key);
}

static int
bh_mtime(zarr_store *s, const char *key, int64_t *sec)
{
    wait_for(s, key);
    return zarr_store_fwd_mtime(s, key, sec);
}

static int
bh_get_many(zarr_store *s, size_t n, zarr_store_req *reqs)
{
    zarr_store_behind *b = B(s);
    pthread_mutex_lock(&b->mu);
    for (size_t i = 0; i < n; i++)
        if (find(b, reqs[i].key, false)) {
            wait_locked(b, NULL); /* one wait for them all */
            break;
        }
    pthread_mutex_unlock(&b->mu);
    return zarr_store_fwd_get_many(s, n, reqs);
}

/* A delete is queued like a write (stored in order with the writes of its key). */
static int
bh_del(zarr_store *s, const char *key)
{
    return enqueue(B(s), key, NULL, 0, true);
}

static int
bh_del_many(zarr_store *s, size_t n, const char *const *keys, int *results)
{
    int first = ZARR_OK;
    for (size_t i = 0; i < n; i++) {
        results[i] = first == ZARR_OK ? enqueue(B(s), keys[i], NULL, 0, true) : first;
        if (results[i] != ZARR_OK && first == ZARR_OK)
            first = results[i];
    }
    return first;
}

static int
bh_del_prefix(zarr_store *s, const char *prefix)
{
    wait_for(s, NULL);
    return zarr_store_fwd_del_prefix(s, prefix);
}

static int
bh_list(zarr_store *s, const char *prefix, zarr_list_cb cb, void *ud)
{
    wait_for(s, NULL);
    return zarr_store_fwd_list(s, prefix, cb, ud);
}

static int
bh_list_keys(zarr_store *s, const char *prefix, zarr_key_cb cb, void *ud)
{
    wait_for(s, NULL);
    return zarr_store_fwd_list_keys(s, prefix, cb, ud);
}

static int
bh_rename(zarr_store *s, const char *from, const char *to)
{
    wait_for(s, NULL);
    return zarr_store_fwd_rename(s, from, to);
}

static int
bh_remove_root(zarr_store *s)
{
    wait_for(s, NULL);
    return zarr_store_fwd_remove_root(s);
}

static int
bh_flush(zarr_store *s)
{
    int rc = zarr_store_behind_drain(B(s));
    return rc != ZARR_OK ? rc : zarr_store_fwd_flush(s);
}

static int
bh_sync(zarr_store *s)
{
    int rc = zarr_store_behind_drain(B(s));
    return rc != ZARR_OK ? rc : zarr_store_fwd_sync(s);
}

static void
bh_destroy(zarr_store *s)
{
    zarr_store_behind *b = B(s);
    pthread_mutex_lock(&b->mu);
    b->stop = true; /* the sender stores what is queued, then ends */
    pthread_cond_signal(&b->wake);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->thread, NULL);
    if (getenv("H5ZARR_HTTP_LOG") && !strcmp(getenv("H5ZARR_HTTP_LOG"), "1"))
        fprintf(stderr,
                "h5zarr: write-behind of '%s': %llu batches, %llu values, at most %llu of %llu bytes queued, "
                "%llu waits for the budget%s\n",
                b->fwd.base.url, (unsigned long long)b->st.batches, (unsigned long long)b->st.items,
                (unsigned long long)b->st.max_queued, (unsigned long long)b->st.budget,
                (unsigned long long)b->st.waits, b->err != ZARR_OK ? ", a write failed" : "");
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->wake);
    pthread_cond_destroy(&b->moved);
    zarr_store_fwd_fini(&b->fwd);
    free(b);
}

static const zarr_store_ops behind_ops = {
    .name        = "write-behind",
    .get         = bh_get,
    .get_range   = bh_get_range,
    .set         = bh_set,
    .del         = bh_del,
    .del_many    = bh_del_many,
    .del_prefix  = bh_del_prefix,
    .list        = bh_list,
    .exists      = bh_exists,
    .get_many    = bh_get_many,
    .set_many    = bh_set_many,
    .rename      = bh_rename,
    .flush       = bh_flush,
    .destroy     = bh_destroy,
    .mtime       = bh_mtime,
    .size        = bh_size,
    .get_into    = bh_get_into,
    .list_keys   = bh_list_keys,
    .remove_root = bh_remove_root,
    .sync        = bh_sync,
    /* no writer ops: the generic form gathers the pieces and queues the value with bh_set */
};

/* ---- public --------------------------------------------------------------------------------------- */

uint64_t
zarr_store_behind_budget_env(void)
{
    const char *v = getenv("H5ZARR_WRITE_BEHIND_MB");
    char       *end;
    long        x;
    if (!v || !*v)
        return (uint64_t)256 << 20;
    errno = 0;
    x     = strtol(v, &end, 10);
    if (errno || *end || x < 0)
        return (uint64_t)256 << 20;
    return (uint64_t)(x > 65536 ? 65536 : x) << 20;
}

int
zarr_store_behind_new(zarr_store *inner, uint64_t budget, zarr_store_behind **out)
{
    zarr_store_behind *b;
    int                rc;

    if (out)
        *out = NULL;
    if (!inner || !out)
        return zarr_error(ZARR_EINVAL, "zarr_store_behind_new: inner and out must not be NULL");
    if (inner->readonly)
        return zarr_error(ZARR_EINVAL, "store '%s' is read-only: nothing to write behind", inner->url);
    if (!(b = calloc(1, sizeof *b)))
        return zarr_error(ZARR_ENOMEM, "out of memory wrapping store '%s'", inner->url);
    zarr_store_ref(inner);
    if ((rc = zarr_store_fwd_init(&b->fwd, &behind_ops, inner)) != ZARR_OK) { /* closed our reference */
        free(b);
        return rc;
    }
    b->st.budget = budget ? budget : 1;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->wake, NULL);
    pthread_cond_init(&b->moved, NULL);
    if ((rc = pthread_create(&b->thread, NULL, sender, b)) != 0) {
        pthread_mutex_destroy(&b->mu);
        pthread_cond_destroy(&b->wake);
        pthread_cond_destroy(&b->moved);
        zarr_store_fwd_fini(&b->fwd);
        free(b);
        return zarr_error(ZARR_EIO, "can't start the write-behind thread of '%s': %s", inner->url,
                          strerror(rc));
    }
    *out = b;
    return ZARR_OK;
}

zarr_store *
zarr_store_behind_store(zarr_store_behind *b)
{
    return b ? &b->fwd.base : NULL;
}

void
zarr_store_behind_hold(zarr_store_behind *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    b->holds++;
    pthread_mutex_unlock(&b->mu);
}

void
zarr_store_behind_release(zarr_store_behind *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    if (b->holds)
        b->holds--;
    pthread_cond_signal(&b->wake);
    pthread_mutex_unlock(&b->mu);
}

int
zarr_store_behind_drain(zarr_store_behind *b)
{
    int rc;
    if (!b)
        return ZARR_OK;
    pthread_mutex_lock(&b->mu);
    wait_locked(b, NULL);
    rc = failed_locked(b);
    pthread_mutex_unlock(&b->mu);
    return rc;
}

int
zarr_store_behind_failed(zarr_store_behind *b, char *key, size_t nkey)
{
    int rc;
    if (!b)
        return ZARR_OK;
    pthread_mutex_lock(&b->mu);
    rc = b->err;
    if (key && nkey)
        snprintf(key, nkey, "%s", rc != ZARR_OK ? b->err_key : "");
    pthread_mutex_unlock(&b->mu);
    return rc;
}

void
zarr_store_behind_stats_get(zarr_store_behind *b, zarr_store_behind_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    *out = b->st;
    pthread_mutex_unlock(&b->mu);
}
