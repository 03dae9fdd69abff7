/*
 * pool.c: the persistent thread pool that runs the chunk engine's jobs.
 *
 * A pool of size N has N-1 pthreads; the thread calling zarr_pool_run is worker 0 and takes tasks
 * like the others, so a pool of size 1 (or any job run inline) never switches threads. One job =
 * `n` tasks handed out through an atomic counter: waking the workers happens once per job, never per
 * task. The first failing task's status wins; its thread saves the message and the caller gets it
 * back (zarr_error_restore), and no new task starts after a failure.
 *
 * Each worker has scratch (zarr__worker: codec context + chunk buffers) reused across tasks and jobs.
 * Workers 1..N-1 keep theirs in the pool (freed with it); worker 0's scratch belongs to the calling
 * thread (thread-local, freed when the thread exits), so two threads can run jobs on one pool or
 * inline jobs at the same time without sharing scratch. Jobs of one pool from different threads are
 * serialized; a task that itself calls zarr_pool_run on the pool it runs in gets an inline run on the
 * same worker (and that worker's scratch).
 *
 * Every pool is listed in a process-wide registry so that zarr_pool_stop_all can stop and join the
 * threads of all of them (the connector does at library termination: no thread of ours outlives
 * H5close). A stopped pool stays valid: its next job that wants threads starts them again.
 */
#include "engine.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POOL_MSG_MAX 1024

struct zarr_pool {
    int           nthreads; /* workers including the caller */
    pthread_t    *threads;  /* nthreads - 1 */
    int           started;  /* threads actually started */
    pid_t         pid;      /* the process whose threads these are: a forked child has none of them */
    zarr_pool    *reg_next; /* the registry's list (reg_lock) */
    zarr__worker *workers;  /* [nthreads]; index 0 unused (caller's scratch is thread-local) */

    pthread_mutex_t run_lock; /* one job at a time */
    pthread_mutex_t mu;
    pthread_cond_t  wake, done;
    unsigned long   gen;    /* job generation */
    bool            open;   /* the current job accepts workers */
    bool            stop;   /* shut down */
    int             active; /* workers inside the current job */

    /* The current job. */
    zarr_task_fn fn;
    void        *job;
    size_t       n;
    size_t       next; /* atomic: next task index */
    int          rc;   /* atomic: first error */
    char         msg[POOL_MSG_MAX];
};

/* What this thread is doing: the pool whose tasks it runs (for nested calls) and its worker id. */
static _Thread_local zarr_pool    *tls_pool;
static _Thread_local int           tls_worker;
static _Thread_local zarr__worker *tls_w0;

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t  w0_key;

static void
worker_clear(zarr__worker *w)
{
    zarr_codec_ctx_free(w->ctx);
    w->ctx = NULL;
    zarr_buf_free(&w->chunk);
    zarr_buf_free(&w->enc);
}

static void
w0_destroy(void *p)
{
    zarr__worker *w = p;
    if (w) {
        worker_clear(w);
        free(w);
    }
    tls_w0 = NULL;
}

static void
make_key(void)
{
    (void)pthread_key_create(&w0_key, w0_destroy);
}

zarr__worker *
zarr__pool_worker(zarr_pool *p, int worker)
{
    if (worker > 0 && p && worker < p->nthreads)
        return &p->workers[worker];
    if (!tls_w0) {
        pthread_once(&key_once, make_key);
        if (!(tls_w0 = calloc(1, sizeof *tls_w0)))
            return NULL;
        (void)pthread_setspecific(w0_key, tls_w0);
    }
    return tls_w0;
}

zarr_codec_ctx *
zarr__worker_ctx(zarr__worker *w)
{
    if (!w) {
        zarr_error(ZARR_ENOMEM, "out of memory allocating worker scratch");
        return NULL;
    }
    if (!w->ctx && !(w->ctx = zarr_codec_ctx_new()))
        zarr_error(ZARR_ENOMEM, "out of memory creating a codec context");
    return w->ctx;
}

/* Takes tasks of the current job until none is left or one failed. */
static void
run_tasks(zarr_pool *p, int worker)
{
    zarr_pool *prev_pool   = tls_pool;
    int        prev_worker = tls_worker;

    tls_pool   = p;
    tls_worker = worker;
    for (;;) {
        size_t i;
        int    rc, zero = 0;
        if (__atomic_load_n(&p->rc, __ATOMIC_RELAXED) != 0)
            break;
        i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->n)
            break;
        rc = p->fn(p->job, i, worker);
        if (rc != 0 &&
            __atomic_compare_exchange_n(&p->rc, &zero, rc, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            zarr_error_save(p->msg, sizeof p->msg);
    }
    tls_pool   = prev_pool;
    tls_worker = prev_worker;
}

typedef struct worker_arg {
    zarr_pool *p;
    int        id;
} worker_arg;

static void *
worker_main(void *arg)
{
    zarr_pool    *p  = ((worker_arg *)arg)->p;
    int           id = ((worker_arg *)arg)->id;
    unsigned long seen;

    free(arg);
    pthread_mutex_lock(&p->mu);
    seen = 0; /* jobs start at generation 1: a thread that starts late still joins the open job */
    for (;;) {
        while (!p->stop && !(p->open && p->gen != seen))
            pthread_cond_wait(&p->wake, &p->mu);
        if (p->stop)
            break;
        seen = p->gen;
        p->active++;
        pthread_mutex_unlock(&p->mu);
        run_tasks(p, id);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* ---- the registry of live pools (zarr_pool_stop_all) ---------------------------------------------- */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static zarr_pool      *reg_list;
static pthread_once_t  reg_once = PTHREAD_ONCE_INIT;

/* A child forked while another thread held reg_lock would inherit it locked: fork waits for it. */
static void
reg_prepare(void)
{
    pthread_mutex_lock(&reg_lock);
}

static void
reg_after(void)
{
    pthread_mutex_unlock(&reg_lock);
}

static void
reg_init(void)
{
    (void)pthread_atfork(reg_prepare, reg_after, reg_after);
}

static void
reg_add(zarr_pool *p)
{
    pthread_once(&reg_once, reg_init);
    pthread_mutex_lock(&reg_lock);
    p->reg_next = reg_list;
    reg_list    = p;
    pthread_mutex_unlock(&reg_lock);
}

static void
reg_remove(zarr_pool *p)
{
    pthread_mutex_lock(&reg_lock);
    for (zarr_pool **pp = &reg_list; *pp; pp = &(*pp)->reg_next)
        if (*pp == p) {
            *pp = p->reg_next;
            break;
        }
    pthread_mutex_unlock(&reg_lock);
}

/* Starts the pool's missing threads (p->started of nthreads - 1 run). Called with no job running
 * (zarr_pool_new, or zarr_pool_run holding run_lock). A thread that can't start leaves the pool with
 * fewer threads (jobs still complete: the caller takes every task left). */
static int
pool_start(zarr_pool *p)
{
    while (p->started < p->nthreads - 1) {
        int         i = p->started + 1;
        worker_arg *a = malloc(sizeof *a);
        if (!a)
            return zarr_error(ZARR_ENOMEM, "out of memory starting pool threads");
        a->p  = p;
        a->id = i;
        if (pthread_create(&p->threads[i - 1], NULL, worker_main, a) != 0) {
            free(a);
            return zarr_error(ZARR_EIO, "can't start pool thread %d of %d", i, p->nthreads - 1);
        }
        p->started++;
    }
    return ZARR_OK;
}

/* Stops and joins the pool's threads and frees their scratch; the pool stays usable (pool_start). The
 * caller holds run_lock (no job is running) and is in the pool's own process. */
static void
pool_stop(zarr_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->threads[i], NULL);
    p->started = 0;
    p->stop    = false;
    if (p->workers)
        for (int i = 1; i < p->nthreads; i++)
            worker_clear(&p->workers[i]);
}

void
zarr_pool_stop_all(void)
{
    pthread_once(&reg_once, reg_init);
    pthread_mutex_lock(&reg_lock);
    for (zarr_pool *p = reg_list; p; p = p->reg_next) {
        if (p->pid != getpid())
            continue; /* inherited through fork: its threads stayed in the parent */
        pthread_mutex_lock(&p->run_lock);
        pool_stop(p);
        pthread_mutex_unlock(&p->run_lock);
    }
    pthread_mutex_unlock(&reg_lock);
    /* the calling thread's worker-0 scratch, which would otherwise live until it exits */
    if (tls_w0) {
        zarr__worker *w = tls_w0;
        (void)pthread_setspecific(w0_key, NULL);
        w0_destroy(w);
    }
}

int
zarr_pool_new(int nthreads, zarr_pool **out)
{
    zarr_pool *p;
    int        rc = ZARR_OK;

    if (!out)
        return zarr_error(ZARR_EINVAL, "zarr_pool_new: out is NULL");
    *out = NULL;
    if (nthreads < 0)
        return zarr_error(ZARR_EINVAL, "zarr_pool_new: negative thread count %d", nthreads);
    if (nthreads == 0) {
        long n   = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
    }
    if (!(p = calloc(1, sizeof *p)))
        return zarr_error(ZARR_ENOMEM, "out of memory creating a thread pool");
    p->nthreads = nthreads;
    p->pid      = getpid();
    pthread_mutex_init(&p->run_lock, NULL);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    if (!(p->workers = calloc((size_t)nthreads, sizeof *p->workers)) ||
        (nthreads > 1 && !(p->threads = calloc((size_t)nthreads - 1, sizeof *p->threads)))) {
        rc = zarr_error(ZARR_ENOMEM, "out of memory creating a thread pool of %d", nthreads);
        goto done;
    }
    if ((rc = pool_start(p)) != ZARR_OK)
        goto done;
done:
    if (rc != ZARR_OK) {
        zarr_pool_free(p);
        return rc;
    }
    reg_add(p);
    *out = p;
    return ZARR_OK;
}

void
zarr_pool_free(zarr_pool *p)
{
    if (!p)
        return;
    reg_remove(p);
    if (p->pid != getpid()) {
        /* a pool inherited through fork: its threads (and maybe the state of its locks) stayed in the
         * parent; nothing to stop or join here */
        if (p->workers)
            for (int i = 0; i < p->nthreads; i++)
                worker_clear(&p->workers[i]);
        free(p->workers);
        free(p->threads);
        free(p);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++)
        pthread_join(p->threads[i], NULL);
    if (p->workers)
        for (int i = 0; i < p->nthreads; i++)
            worker_clear(&p->workers[i]);
    free(p->workers);
    free(p->threads);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->run_lock);
    free(p);
}

int
zarr_pool_nthreads(const zarr_pool *p)
{
    return p ? p->nthreads : 1;
}

/* Runs tasks 0..n-1 on the caller: as worker 0, or as the current worker for a nested call. */
static int
run_inline(zarr_pool *p, zarr_task_fn fn, void *job, size_t n)
{
    int worker = (p && tls_pool == p) ? tls_worker : 0, rc;
    for (size_t i = 0; i < n; i++)
        if ((rc = fn(job, i, worker)) != ZARR_OK)
            return rc;
    return ZARR_OK;
}

/* Whether a job of n tasks on `p` runs inline: no pool, asked to, one thread or one task, a nested call,
 * or a child forked after the pool started (its threads are the parent's). */
static bool
runs_inline(zarr_pool *p, size_t n, bool inline_only)
{
    return !p || inline_only || p->nthreads < 2 || n == 1 || tls_pool == p || p->pid != getpid();
}

static int pool_run_locked(zarr_pool *p, zarr_task_fn fn, void *job, size_t n);

int
zarr_pool_run(zarr_pool *p, zarr_task_fn fn, void *job, size_t n, bool inline_only)
{
    if (!fn)
        return zarr_error(ZARR_EINVAL, "zarr_pool_run: task function is NULL");
    if (n == 0)
        return ZARR_OK;
    if (runs_inline(p, n, inline_only))
        return run_inline(p, fn, job, n);
    pthread_mutex_lock(&p->run_lock);
    return pool_run_locked(p, fn, job, n);
}

int
zarr__pool_try_run(zarr_pool *p, zarr_task_fn fn, void *job, size_t n)
{
    if (!fn)
        return zarr_error(ZARR_EINVAL, "zarr__pool_try_run: task function is NULL");
    if (n == 0)
        return ZARR_OK;
    if (runs_inline(p, n, false) || pthread_mutex_trylock(&p->run_lock) != 0)
        return run_inline(p, fn, job, n);
    return pool_run_locked(p, fn, job, n);
}

/* The job on the pool's threads and the caller; the caller holds run_lock, released here. */
static int
pool_run_locked(zarr_pool *p, zarr_task_fn fn, void *job, size_t n)
{
    int rc;

    if (p->started < p->nthreads - 1) /* stopped by zarr_pool_stop_all, or short of threads */
        (void)pool_start(p);          /* with fewer (even none) the caller runs what is left */
    p->fn  = fn;
    p->job = job;
    p->n   = n;
    __atomic_store_n(&p->next, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&p->rc, 0, __ATOMIC_RELAXED);
    p->msg[0] = '\0';
    pthread_mutex_lock(&p->mu);
    p->gen++;
    p->open = true;
    if (n - 1 < (size_t)p->started) /* fewer tasks than threads: wake only as many as can help */
        for (size_t i = 0; i < n - 1; i++)
            pthread_cond_signal(&p->wake);
    else
        pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);

    run_tasks(p, 0);

    pthread_mutex_lock(&p->mu);
    p->open = false;
    while (p->active > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    rc = __atomic_load_n(&p->rc, __ATOMIC_ACQUIRE);
    if (rc != ZARR_OK)
        zarr_error_restore(rc, p->msg);
    pthread_mutex_unlock(&p->run_lock);
    return rc;
}

static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static zarr_pool     *default_pool;

static void
make_default(void)
{
    const char *env = getenv("H5ZARR_THREADS");
    int         n   = 0;
    if (env && *env) {
        char *end;
        long  v = strtol(env, &end, 10);
        if (*end == '\0' && v >= 1 && v <= 1024)
            n = (int)v;
    }
    if (zarr_pool_new(n, &default_pool) != ZARR_OK)
        default_pool = NULL; /* jobs then run inline */
}

zarr_pool *
zarr_pool_default(void)
{
    pthread_once(&default_once, make_default);
    return default_pool;
}
