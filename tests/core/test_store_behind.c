/*
 * test_store_behind.c: the write-behind store (zarr/store_behind.c, zarr_store_behind.h) over a memory
 * store behind a gate: a forwarding store whose set_many counts its calls and items, can be held shut
 * (a slow server) and fails one chosen key (a PUT that fails for good).
 *  - order and visibility: a value queued twice is stored once with the later bytes; reads, sizes,
 *    exists, lists and deletes of queued keys see them; set_many values are queued alike;
 *  - hold: nothing is sent while held, then everything queued goes out as one set_many;
 *  - budget: with a 64 KiB budget and the gate shut, a writer of 40 values of 10 KiB waits (backpressure),
 *    the queued bytes never pass the budget, and once the gate opens every value is stored;
 *  - deletes are queued: a del returns without reaching the store, the queued deletes of one batch go
 *    out as one del_many beside its set_many, and the last call on a key wins (set, del, set stores the
 *    second value; set then del stores nothing; a delete of a key being stored follows its PUT);
 *  - a failure: the flush returns the first failed write with its key, the key is not stored, later sets
 *    are refused with it, and every flush after reports it again.
 */
#define _GNU_SOURCE
#include "runner.h"

#include "h5zarr/zarr.h"
#include "h5zarr/zarr_store_behind.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct gate {
    zarr_store_fwd  fwd;
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    bool            shut;
    const char     *fail_key; /* set_many fails this key (as a store whose PUT fails for good) */
    uint64_t        calls, items, sets;
    uint64_t        del_calls, del_items, dels; /* del_many calls and their keys, single dels */
} gate;

static int
gate_del_many(zarr_store *s, size_t n, const char *const *keys, int *results)
{
    gate *g = (gate *)s;
    pthread_mutex_lock(&g->mu);
    while (g->shut)
        pthread_cond_wait(&g->cv, &g->mu);
    g->del_calls++;
    g->del_items += n;
    pthread_mutex_unlock(&g->mu);
    return zarr_store_fwd_del_many(s, n, keys, results);
}

static int
gate_del(zarr_store *s, const char *key)
{
    gate *g = (gate *)s;
    __atomic_add_fetch(&g->dels, 1, __ATOMIC_RELAXED);
    return zarr_store_fwd_del(s, key);
}

static int
gate_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data, const size_t *sizes,
              int *results)
{
    gate *g     = (gate *)s;
    int   first = ZARR_OK;
    pthread_mutex_lock(&g->mu);
    while (g->shut)
        pthread_cond_wait(&g->cv, &g->mu);
    g->calls++;
    g->items += n;
    pthread_mutex_unlock(&g->mu);
    for (size_t i = 0; i < n; i++) {
        if (g->fail_key && strcmp(keys[i], g->fail_key) == 0)
            results[i] = zarr_error(ZARR_EIO, "can't write key '%s': HTTP 500 (test)", keys[i]);
        else
            results[i] = zarr_store_fwd_set(s, keys[i], data[i], sizes[i]);
        if (results[i] != ZARR_OK && first == ZARR_OK)
            first = results[i];
    }
    if (first != ZARR_OK) /* the first failing item's message, as the S3 store leaves it */
        for (size_t i = 0; i < n; i++)
            if (results[i] != ZARR_OK) {
                zarr_error(results[i], "can't write key '%s': HTTP 500 (test)", keys[i]);
                break;
            }
    return first;
}

static int
gate_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    gate *g = (gate *)s;
    __atomic_add_fetch(&g->sets, 1, __ATOMIC_RELAXED);
    return zarr_store_fwd_set(s, key, data, n);
}

static void
gate_destroy(zarr_store *s)
{
    gate *g = (gate *)s;
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    zarr_store_fwd_destroy(s);
}

static zarr_store_ops gate_ops;

/* A gate over a new memory store (the inner store is `*mem`, borrowed) and a write-behind store over
 * the gate with `budget` bytes. */
static int
make(uint64_t budget, gate **gout, zarr_store **mem, zarr_store_behind **bout)
{
    gate       *g         = calloc(1, sizeof *g);
    zarr_store *m         = NULL;
    gate_ops              = zarr_store_fwd_ops;
    gate_ops.name         = "gate";
    gate_ops.set_many     = gate_set_many;
    gate_ops.set          = gate_set;
    gate_ops.del_many     = gate_del_many;
    gate_ops.del          = gate_del;
    gate_ops.destroy      = gate_destroy;
    gate_ops.writer_open  = NULL;
    gate_ops.writer_write = NULL;
    gate_ops.writer_close = NULL;
    if (!g || zarr_store_new_mem(&m) != ZARR_OK)
        return -1;
    *mem = m;
    zarr_store_ref(m);
    if (zarr_store_fwd_init(&g->fwd, &gate_ops, m) != ZARR_OK)
        return -1;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->fwd.base.prefers_batches = true;
    *gout                       = g;
    if (zarr_store_behind_new(&g->fwd.base, budget, bout) != ZARR_OK)
        return -1;
    zarr_store_close(&g->fwd.base); /* the write-behind store holds it */
    return 0;
}

static void
gate_open(gate *g, bool shut)
{
    pthread_mutex_lock(&g->mu);
    g->shut = shut;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void
nap_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static int
count_child(const char *name, bool is_dir, void *ud)
{
    (void)name;
    (void)is_dir;
    ++*(int *)ud;
    return 0;
}

static int
test_order_and_reads(void)
{
    gate              *g;
    zarr_store        *mem, *s;
    zarr_store_behind *b;
    zarr_buf           out = {0};
    uint64_t           size;
    int                n   = 0, res[3];
    const char        *k[] = {"m/0", "m/1", "m/2"};
    const void        *d[] = {"x", "yy", "zzz"};
    size_t             z[] = {1, 2, 3};

    ASSERT(make(1 << 20, &g, &mem, &b) == 0);
    s = zarr_store_behind_store(b);
    gate_open(g, true); /* nothing reaches the store until the reads below make it */
    ASSERT_OK(zarr_store_set(s, "a/k", "old", 3));
    ASSERT_OK(zarr_store_set(s, "a/k", "newer", 5)); /* replaces the queued value */
    ASSERT_OK(zarr_store_set_many(s, 3, k, d, z, res));
    ASSERT(res[0] == ZARR_OK && res[1] == ZARR_OK && res[2] == ZARR_OK);
    ASSERT(zarr_store_exists(mem, "a/k") == ZARR_ENOTFOUND); /* still queued */
    gate_open(g, false);
    ASSERT_OK(zarr_store_get(s, "a/k", &out)); /* waits for the key */
    ASSERT(out.size == 5 && memcmp(out.data, "newer", 5) == 0);
    ASSERT_OK(zarr_store_size(s, "m/2", &size));
    ASSERT(size == 3);
    ASSERT_OK(zarr_store_list(s, "m", count_child, &n));
    ASSERT(n == 3);
    ASSERT_OK(zarr_store_set(s, "a/gone", "v", 1));
    ASSERT_OK(zarr_store_del(s, "a/gone")); /* the queued set first, then the delete */
    ASSERT(zarr_store_exists(s, "a/gone") == ZARR_ENOTFOUND);
    ASSERT(zarr_store_exists(mem, "a/gone") == ZARR_ENOTFOUND);
    ASSERT_OK(zarr_store_flush(s));
    ASSERT(g->sets == 0); /* every value through set_many */
    ASSERT_OK(zarr_store_get(mem, "a/k", &out));
    ASSERT(out.size == 5 && memcmp(out.data, "newer", 5) == 0);
    zarr_buf_free(&out);
    zarr_store_close(s);
    zarr_store_close(mem);
    return 0;
}

static int
test_hold_one_batch(void)
{
    gate                   *g;
    zarr_store             *mem, *s;
    zarr_store_behind      *b;
    zarr_store_behind_stats st;
    char                    key[32];

    ASSERT(make(1 << 20, &g, &mem, &b) == 0);
    s = zarr_store_behind_store(b);
    zarr_store_behind_hold(b);
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "doc%d/zarr.json", i);
        ASSERT_OK(zarr_store_set(s, key, "{}", 2));
    }
    nap_ms(50); /* time enough for a sender that ignored the hold */
    ASSERT(__atomic_load_n(&g->calls, __ATOMIC_RELAXED) == 0);
    zarr_store_behind_release(b);
    ASSERT_OK(zarr_store_behind_drain(b));
    ASSERT(g->calls == 1 && g->items == 200);
    zarr_store_behind_stats_get(b, &st);
    ASSERT(st.batches == 1 && st.items == 200 && st.queued == 0 && st.max_queued == 400);
    ASSERT(zarr_store_exists(mem, "doc199/zarr.json") == ZARR_OK);
    zarr_store_close(s);
    zarr_store_close(mem);
    return 0;
}

static int
test_deletes_queued(void)
{
    gate              *g;
    zarr_store        *mem, *s;
    zarr_store_behind *b;
    zarr_buf           out = {0};

    ASSERT(make(1 << 20, &g, &mem, &b) == 0);
    s = zarr_store_behind_store(b);
    ASSERT_OK(zarr_store_set(mem, "d/old", "o", 1)); /* stored before: its delete is queued */
    zarr_store_behind_hold(b);
    ASSERT_OK(zarr_store_set(s, "d/a", "a", 1));
    ASSERT_OK(zarr_store_del(s, "d/a")); /* replaces the queued write: nothing stored */
    ASSERT_OK(zarr_store_del(s, "d/old"));
    ASSERT_OK(zarr_store_set(s, "d/c", "1", 1));
    ASSERT_OK(zarr_store_del(s, "d/c"));
    ASSERT_OK(zarr_store_set(s, "d/c", "2", 1)); /* the last call wins */
    nap_ms(50);
    ASSERT(g->dels == 0 && g->del_calls == 0 && g->calls == 0); /* nothing reached the store */
    ASSERT(zarr_store_exists(mem, "d/old") == ZARR_OK);
    zarr_store_behind_release(b);
    ASSERT_OK(zarr_store_behind_drain(b));
    ASSERT(g->calls == 1 && g->items == 1);         /* d/c */
    ASSERT(g->del_calls == 1 && g->del_items == 2); /* d/a and d/old in one del_many */
    ASSERT(g->dels == 0);
    ASSERT(zarr_store_exists(mem, "d/a") == ZARR_ENOTFOUND);
    ASSERT(zarr_store_exists(mem, "d/old") == ZARR_ENOTFOUND);
    ASSERT_OK(zarr_store_get(mem, "d/c", &out));
    ASSERT(out.size == 1 && out.data[0] == '2');
    /* a delete queued while the key's write is on the wire goes in the next batch, after it */
    gate_open(g, true);
    ASSERT_OK(zarr_store_set(s, "e/x", "v", 1));
    nap_ms(50); /* the sender has taken it and waits at the gate */
    ASSERT_OK(zarr_store_del(s, "e/x"));
    gate_open(g, false);
    ASSERT_OK(zarr_store_flush(s));
    ASSERT(zarr_store_exists(mem, "e/x") == ZARR_ENOTFOUND);
    ASSERT(zarr_store_exists(s, "e/x") == ZARR_ENOTFOUND);
    ASSERT(g->del_calls == 2 && g->dels == 0);
    zarr_buf_free(&out);
    zarr_store_close(s);
    zarr_store_close(mem);
    return 0;
}

typedef struct writer_arg {
    zarr_store *s;
    int         rc;
} writer_arg;

#define NVAL   40
#define VALLEN 10240

static void
value_of(int i, unsigned char *v)
{
    for (int j = 0; j < VALLEN; j++)
        v[j] = (unsigned char)(i * 31 + j);
}

static void *
writer(void *p)
{
    writer_arg   *a = p;
    unsigned char v[VALLEN];
    char          key[32];
    a->rc = ZARR_OK;
    for (int i = 0; i < NVAL && a->rc == ZARR_OK; i++) {
        value_of(i, v);
        snprintf(key, sizeof key, "arr/c/%d", i);
        a->rc = zarr_store_set(a->s, key, v, VALLEN);
    }
    return NULL;
}

static int
test_budget(void)
{
    gate                   *g;
    zarr_store             *mem, *s;
    zarr_store_behind      *b;
    zarr_store_behind_stats st;
    writer_arg              a;
    pthread_t               th;
    zarr_buf                out = {0};
    unsigned char           v[VALLEN];
    const uint64_t          budget = 64 << 10;
    int                     k;

    ASSERT(make(budget, &g, &mem, &b) == 0);
    s = zarr_store_behind_store(b);
    gate_open(g, true);
    a.s = s;
    ASSERT(pthread_create(&th, NULL, writer, &a) == 0);
    for (k = 0; k < 1000; k++) { /* the writer fills the budget, then waits */
        zarr_store_behind_stats_get(b, &st);
        if (st.waits >= 1)
            break;
        nap_ms(10);
    }
    ASSERT(st.waits >= 1);
    ASSERT(st.queued <= budget && st.queued + VALLEN > budget);
    ASSERT(st.items < NVAL);
    gate_open(g, false);
    pthread_join(th, NULL);
    ASSERT_OK(a.rc);
    ASSERT_OK(zarr_store_flush(s));
    zarr_store_behind_stats_get(b, &st);
    ASSERT(st.max_queued <= budget && st.items == NVAL && st.queued == 0 && st.batches >= 2);
    for (int i = 0; i < NVAL; i++) {
        char key[32];
        snprintf(key, sizeof key, "arr/c/%d", i);
        value_of(i, v);
        ASSERT_OK(zarr_store_get(mem, key, &out));
        ASSERT(out.size == VALLEN && memcmp(out.data, v, VALLEN) == 0);
    }
    zarr_buf_free(&out);
    zarr_store_close(s);
    zarr_store_close(mem);
    return 0;
}

static int
test_failure(void)
{
    gate              *g;
    zarr_store        *mem, *s;
    zarr_store_behind *b;
    char               key[64];
    const char        *keys[10];
    const void        *data[10];
    size_t             sizes[10];
    int                res[10];
    char               names[10][16];

    ASSERT(make(1 << 20, &g, &mem, &b) == 0);
    s           = zarr_store_behind_store(b);
    g->fail_key = "a/3";
    for (int i = 0; i < 10; i++) {
        snprintf(names[i], sizeof names[i], "a/%d", i);
        keys[i]  = names[i];
        data[i]  = "0123456789";
        sizes[i] = 10;
    }
    zarr_store_behind_hold(b);                                     /* one batch */
    ASSERT_OK(zarr_store_set_many(s, 10, keys, data, sizes, res)); /* queued: nothing failed yet */
    zarr_store_behind_release(b);
    ASSERT(zarr_store_flush(s) == ZARR_EIO);
    ASSERT(strstr(zarr_errmsg(), "'a/3'") && strstr(zarr_errmsg(), "HTTP 500"));
    ASSERT(zarr_store_behind_failed(b, key, sizeof key) == ZARR_EIO && strcmp(key, "a/3") == 0);
    ASSERT(zarr_store_exists(mem, "a/3") == ZARR_ENOTFOUND);
    ASSERT(zarr_store_exists(mem, "a/9") == ZARR_OK); /* the rest of its batch was stored whole */
    ASSERT(zarr_store_set(s, "b/0", "x", 1) == ZARR_EIO);
    ASSERT(strstr(zarr_errmsg(), "earlier write failed") && strstr(zarr_errmsg(), "'a/3'"));
    ASSERT(zarr_store_exists(mem, "b/0") == ZARR_ENOTFOUND);
    ASSERT(zarr_store_flush(s) == ZARR_EIO && strstr(zarr_errmsg(), "'a/3'")); /* kept */
    zarr_store_close(s);
    zarr_store_close(mem);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(order_and_reads), TEST_ENTRY(hold_one_batch), TEST_ENTRY(deletes_queued),
    TEST_ENTRY(budget),          TEST_ENTRY(failure),
};

int
main(int argc, char **argv)
{
    return RUN_TESTS(tests);
}
