/*
 * h5zarr_bench.c: the C side of the benchmark suite (issue 6). One invocation runs one repetition of
 * one workload for every C implementation, interleaved, and prints one tab-separated line per
 * measurement; bench/run.py calls it once per repetition (alternating with the zarr-python peer),
 * takes medians and writes bench/results/.
 *
 *   h5zarr_bench w1|w2|w3|w4 <scratch dir> <rep>   (a fresh scratch dir per repetition)
 *   h5zarr_bench rss <scratch dir> core-zstd-1t|core-zstd-2t|vol-raw
 *   h5zarr_bench w2nc <scratch dir> hdf5|vol|nczarr   (W2's netCDF writer, a child of the w2 run)
 *   h5zarr_bench chunks1m <scratch dir> sharded|unsharded|all   (issue 13's 1,000,000-chunk rows:
 *                                   each write and read in a child process, its peak RSS from wait4)
 *   h5zarr_bench durable <scratch dir> <rep>   (issue 14: W1 and W2 writes with durable=1 next to the
 *                                   same writes with durable=0, interleaved; workload "durable")
 *
 * Output lines: "R <workload> <variant> <impl> <op> <seconds>", "N <workload> <variant> <impl> <note>"
 * (a row that could not run, and why), "M <key> <value>" (facts: thread counts, sizes, peak RSS).
 *
 * Implementations: "core" = the zarr core API (zarr_array_write/read), "vol" = HDF5 through the zarr
 * VOL connector (H5Pset_fapl_zarr), "hdf5" = native HDF5 (.h5 file; core driver for memory rows),
 * "nczarr" = netCDF-C's NCZarr (file://...#mode=zarr,file, zarr v2 stores; W1-W4), "floor" = a plain C loop
 * doing the minimum (one file per chunk, or malloc+memcpy per chunk for memory) plus the raw codec time
 * divided by the thread count. Every timed section runs from create/open to close, so data is in the store.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <h5zarr/h5zarr.h>
#include <h5zarr/zarr.h>
#include <hdf5.h>
#include <json-c/json.h>

#include "w4.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <ftw.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef H5ZARR_BENCH_NETCDF
#include <netcdf.h>
#include <netcdf_filter.h>
#endif

#define H5Z_ZSTD  32015
#define H5Z_BLOSC 32001

static const char *g_scratch;
static int         g_rep;
static int         g_store_flags; /* extra open flags of core_write's own store (ZARR_STORE_DURABLE) */

static void
die(const char *what)
{
    fprintf(stderr, "h5zarr_bench: %s (zarr: %s)\n", what, zarr_errmsg());
    H5Eprint2(H5E_DEFAULT, stderr);
    exit(1);
}
#define CHECK(cond, what)                                                                                    \
    do {                                                                                                     \
        if (!(cond))                                                                                         \
            die(what);                                                                                       \
    } while (0)
#define ZOK(expr) CHECK((expr) == ZARR_OK, #expr)

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void
emit(const char *w, const char *variant, const char *impl, const char *op, double sec)
{
    printf("R\t%s\t%s\t%s\t%s\t%.9f\n", w, variant, impl, op, sec);
    fflush(stdout);
}

static void
note(const char *w, const char *variant, const char *impl, const char *text)
{
    printf("N\t%s\t%s\t%s\t%s\n", w, variant, impl, text);
    fflush(stdout);
}

static char *spath(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *
spath(const char *fmt, ...)
{
    static char buf[8][4096];
    static int  k;
    char       *p = buf[k++ & 7];
    va_list     ap;
    int         n = snprintf(p, 4096, "%s/", g_scratch);
    va_start(ap, fmt);
    vsnprintf(p + n, (size_t)(4096 - n), fmt, ap);
    va_end(ap);
    return p;
}

/* ---- codec variants ------------------------------------------------------------------------------ */

typedef struct variant {
    const char *name;
    int         zarr_format;
    const char *v2_compressor; /* numcodecs JSON or NULL */
    const char *v3_codec;      /* v3 bytes->bytes codec JSON or NULL */
    int         h5_filter;     /* 0 none, 1 deflate, else a filter id */
    unsigned    cd[7];
    size_t      ncd;
    int         nc_kind; /* 0 none, 1 deflate, 2 zstd, 3 blosc-lz4 */
} variant;

static const variant W1_VARIANTS[] = {
    {"raw-v2", 2, NULL, NULL, 0, {0}, 0, 0},
    {"zstd-v2", 2, "{\"id\":\"zstd\",\"level\":1}", NULL, H5Z_ZSTD, {1}, 1, 2},
    {"zlib-v2", 2, "{\"id\":\"zlib\",\"level\":1}", NULL, 1, {1}, 1, 1},
    {"raw-v3", 3, NULL, NULL, 0, {0}, 0, 0},
};

static const variant W2_VARIANTS[] = {
    {"zstd1", 2, "{\"id\":\"zstd\",\"level\":1}", NULL, H5Z_ZSTD, {1}, 1, 2},
    {"blosc-lz4-shuf",
     2,
     "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}",
     NULL,
     H5Z_BLOSC,
     {0, 0, 0, 0, 5, 1, 1},
     7,
     3},
};

static zarr_array_meta *
make_meta(const variant *v, int ndim, const uint64_t *shape, const uint64_t *chunks, zarr_kind kind)
{
    zarr_array_meta *m;
    zarr_dtype      *t = zarr_dtype_new(kind, 4);
    CHECK(t, "dtype");
    ZOK(zarr_array_meta_new(v->zarr_format, ndim, shape, chunks, t, &m));
    if (v->v2_compressor) {
        struct json_object *j = json_tokener_parse(v->v2_compressor);
        zarr_chain         *c = NULL;
        CHECK(j, "compressor json");
        ZOK(zarr_chain_from_v2_json(NULL, j, 'C', m->dtype, ndim, &c));
        json_object_put(j);
        zarr_chain_free(m->chain);
        m->chain = c;
    }
    return m;
}

static hid_t
make_dcpl(const variant *v, int ndim, const hsize_t *chunks)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    CHECK(dcpl >= 0 && H5Pset_chunk(dcpl, ndim, chunks) >= 0, "dcpl");
    if (v->h5_filter == 1)
        CHECK(H5Pset_deflate(dcpl, v->cd[0]) >= 0, "deflate");
    else if (v->h5_filter)
        CHECK(H5Pset_filter(dcpl, (H5Z_filter_t)v->h5_filter, H5Z_FLAG_MANDATORY, v->ncd, v->cd) >= 0,
              "H5Pset_filter");
    return dcpl;
}

static hid_t
vol_fapl(int zarr_format)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    CHECK(fapl >= 0 && H5Pset_fapl_zarr(fapl, zarr_format) >= 0,
          "H5Pset_fapl_zarr (is HDF5_PLUGIN_PATH set to the plugin folder?)");
    return fapl;
}

/* The zarr VOL with info-string options (e.g. "shard_bytes=1MiB"). */
static hid_t
vol_fapl_opts(int zarr_format, const char *opts)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    CHECK(fapl >= 0 && H5Pset_fapl_zarr_opts(fapl, zarr_format, opts) >= 0,
          "H5Pset_fapl_zarr_opts (is HDF5_PLUGIN_PATH set to the plugin folder?)");
    return fapl;
}

/* True if array "a" of the store at `dir` is sharded (its zarr.json names sharding_indexed). */
static bool
store_is_sharded(const char *dir)
{
    char                p[4200];
    struct json_object *j, *c;
    bool                r = false;
    snprintf(p, sizeof p, "%s/a/zarr.json", dir);
    if ((j = json_object_from_file(p)) && json_object_object_get_ex(j, "codecs", &c))
        r = strstr(json_object_to_json_string(c), "sharding_indexed") != NULL;
    json_object_put(j);
    return r;
}

/* ---- generic HDF5 (native or VOL) whole-dataset write/read -------------------------------------- */

/* Creates `path` with dataset "a" and writes `buf` whole. Returns seconds, or -1 if the dataset could
 * not be created (filter not mapped): then `why` holds the HDF5 message. */
static double
h5_write(const char *path, hid_t fapl, const variant *v, hid_t mtype, hid_t ftype, int ndim,
         const hsize_t *dims, const hsize_t *chunks, const void *buf, hid_t *keep_file)
{
    hid_t  f, s, d, dcpl = make_dcpl(v, ndim, chunks);
    double t0 = now(), t;
    f         = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f >= 0, "H5Fcreate");
    s = H5Screate_simple(ndim, dims, NULL);
    H5E_BEGIN_TRY { d = H5Dcreate2(f, "a", ftype, s, H5P_DEFAULT, dcpl, H5P_DEFAULT); }
    H5E_END_TRY
    if (d < 0) {
        H5Sclose(s);
        H5Pclose(dcpl);
        H5Fclose(f);
        return -1;
    }
    CHECK(H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "H5Dwrite");
    H5Dclose(d);
    H5Sclose(s);
    if (keep_file) {
        H5Fflush(f, H5F_SCOPE_LOCAL);
        t          = now() - t0;
        *keep_file = f;
    }
    else {
        H5Fclose(f);
        t = now() - t0;
    }
    H5Pclose(dcpl);
    return t;
}

static double
h5_read(const char *path, hid_t fapl, hid_t mtype, void *buf, hid_t open_file)
{
    double t0 = now();
    hid_t  f  = open_file >= 0 ? open_file : H5Fopen(path, H5F_ACC_RDONLY, fapl);
    hid_t  d;
    CHECK(f >= 0, "H5Fopen");
    d = H5Dopen2(f, "a", H5P_DEFAULT);
    CHECK(d >= 0, "H5Dopen");
    CHECK(H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "H5Dread");
    H5Dclose(d);
    if (open_file < 0)
        H5Fclose(f);
    return now() - t0;
}

/* ---- core API whole-array write/read ------------------------------------------------------------- */

static double
core_write(zarr_store *s, const char *dir, const variant *v, int ndim, const uint64_t *shape,
           const uint64_t *chunks, zarr_kind kind, zarr_pool *pool, const void *buf)
{
    zarr_array_meta *m = make_meta(v, ndim, shape, chunks, kind);
    zarr_array      *a;
    zarr_region      r;
    zarr_engine_opts o;
    double           t0  = now();
    bool             own = !s;
    if (own)
        ZOK(zarr_store_open_dir(dir, ZARR_STORE_CREATE | ZARR_STORE_RDWR | g_store_flags, &s));
    ZOK(zarr_array_create(s, "a", m, true, &a));
    if (pool) {
        zarr_engine_defaults(&o);
        o.pool = pool;
        zarr_array_set_opts(a, &o);
    }
    zarr_region_all(zarr_array_meta_get(a), &r);
    ZOK(zarr_array_write(a, &r, buf));
    zarr_array_close(a);
    if (own)
        zarr_store_close(s);
    return now() - t0;
}

static double
core_read(zarr_store *s, const char *dir, zarr_pool *pool, void *buf)
{
    zarr_array      *a;
    zarr_region      r;
    zarr_engine_opts o;
    double           t0  = now();
    bool             own = !s;
    if (own)
        ZOK(zarr_store_open_dir(dir, ZARR_STORE_RDONLY, &s));
    ZOK(zarr_array_open(s, "a", &a));
    if (pool) {
        zarr_engine_defaults(&o);
        o.pool = pool;
        zarr_array_set_opts(a, &o);
    }
    zarr_region_all(zarr_array_meta_get(a), &r);
    ZOK(zarr_array_read(a, &r, buf));
    zarr_array_close(a);
    if (own)
        zarr_store_close(s);
    return now() - t0;
}

/* ---- the floor ----------------------------------------------------------------------------------- */

typedef struct chunkset {
    size_t    n;
    uint8_t **p;
    size_t   *len;
} chunkset;

/* Encodes every chunk of a 1-D or 2-D array (C order) with the variant's chain, single-threaded with
 * one reused codec context. Returns the codec seconds; `out` gets the encoded chunks. With `raw` the
 * chunks are just gathered (identity). */
static double
encode_chunks(const variant *v, int ndim, const uint64_t *shape, const uint64_t *chunks, zarr_kind kind,
              const uint8_t *data, chunkset *out, double *decode_sec)
{
    zarr_array_meta *m     = make_meta(v, ndim, shape, chunks, kind);
    zarr_codec_ctx  *ctx   = zarr_codec_ctx_new();
    uint64_t         ng[2] = {1, 1}, ce = 1;
    size_t           cb;
    uint8_t         *tmp, *dec;
    double           enc_t = 0, dec_t = 0, t0;
    zarr_buf         eb = ZARR_BUF_INIT;

    for (int d = 0; d < ndim; d++) {
        ng[d] = (shape[d] + chunks[d] - 1) / chunks[d];
        ce *= chunks[d];
    }
    cb       = (size_t)ce * 4;
    out->n   = (size_t)(ng[0] * ng[1]);
    out->p   = calloc(out->n, sizeof *out->p);
    out->len = calloc(out->n, sizeof *out->len);
    tmp      = malloc(cb);
    dec      = malloc(cb);
    CHECK(ctx && out->p && out->len && tmp && dec, "oom");
    for (size_t i = 0; i < out->n; i++) {
        /* gather chunk i (untimed) */
        if (ndim == 1)
            memcpy(tmp, data + i * cb, cb);
        else {
            uint64_t ci = i / ng[1], cj = i % ng[1];
            for (uint64_t r = 0; r < chunks[0]; r++)
                memcpy(tmp + r * chunks[1] * 4, data + ((ci * chunks[0] + r) * shape[1] + cj * chunks[1]) * 4,
                       (size_t)chunks[1] * 4);
        }
        t0 = now();
        ZOK(zarr_chain_encode(m->chain, ctx, tmp, m->chunks, &eb));
        enc_t += now() - t0;
        t0 = now();
        ZOK(zarr_chain_decode(m->chain, ctx, eb.data, eb.size, dec, m->chunks));
        dec_t += now() - t0;
        out->p[i] = malloc(eb.size ? eb.size : 1);
        CHECK(out->p[i], "oom");
        memcpy(out->p[i], eb.data, eb.size);
        out->len[i] = eb.size;
    }
    zarr_buf_free(&eb);
    free(tmp);
    free(dec);
    zarr_codec_ctx_free(ctx);
    zarr_array_meta_free(m);
    if (decode_sec)
        *decode_sec = dec_t;
    return enc_t;
}

static void
chunkset_free(chunkset *c)
{
    for (size_t i = 0; c->p && i < c->n; i++)
        free(c->p[i]);
    free(c->p);
    free(c->len);
    memset(c, 0, sizeof *c);
}

static void
write_file(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    CHECK(fd >= 0, "floor open");
    CHECK(write(fd, p, n) == (ssize_t)n, "floor write");
    close(fd);
}

/* Called before every timed section that writes files: writes back the dirty page cache of the
 * sections before, so no implementation is timed during another's writeback on the same two cores.
 * With `drop` (W2: hundreds of MB per section) it also drops the clean page cache (root only), so each
 * implementation finds the same free memory: with 2-12 GB of earlier stores cached, W2's writes of the
 * same data varied 2x. Not for the small workloads: there it evicts the libraries and plugins too,
 * and h5ls and first calls then pay page-ins. H5ZARR_BENCH_NO_SETTLE=1 turns it off. */
static void
settle(bool drop)
{
    static int off = -1;
    if (off < 0)
        off = getenv("H5ZARR_BENCH_NO_SETTLE") != NULL;
    if (off)
        return;
    sync();
    FILE *f = drop ? fopen("/proc/sys/vm/drop_caches", "w") : NULL;
    if (f) {
        fputs("1", f);
        fclose(f);
    }
}

/* How the floor loop makes each chunk file: in place (plain), write a named temporary then rename
 * it (atomic, the directory store's fallback), or write an unnamed O_TMPFILE then linkat it (atomic,
 * what the directory store does for new keys). */
enum { FLOOR_PLAIN, FLOOR_RENAME, FLOOR_LINK };

/* Makes one chunk file the `how` way; `i` names the temporary of FLOOR_RENAME. */
static void
floor_file(const char *dir, const char *path, const void *p, size_t n, size_t i, int how)
{
    char tmp[4096];
    if (how == FLOOR_RENAME) {
        snprintf(tmp, sizeof tmp, "%s/.tmp.%zu", dir, i);
        write_file(tmp, p, n);
        CHECK(rename(tmp, path) == 0, "floor rename");
    }
    else if (how == FLOOR_LINK) {
        int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        CHECK(fd >= 0, "floor O_TMPFILE");
        CHECK(write(fd, p, n) == (ssize_t)n, "floor write");
        snprintf(tmp, sizeof tmp, "/proc/self/fd/%d", fd);
        CHECK(linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH) == 0 ||
                  linkat(AT_FDCWD, tmp, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0,
              "floor linkat");
        close(fd);
    }
    else
        write_file(path, p, n);
}

/* Plain C loop: mkdir, one file per chunk (names "i" or "i.j"), made the `how` way. */
static double
floor_write(const char *dir, const chunkset *c, size_t ng1, int how)
{
    char   path[4096];
    double t0 = now();
    CHECK(mkdir(dir, 0777) == 0, "floor mkdir");
    for (size_t i = 0; i < c->n; i++) {
        if (ng1 > 1)
            snprintf(path, sizeof path, "%s/%zu.%zu", dir, i / ng1, i % ng1);
        else
            snprintf(path, sizeof path, "%s/%zu", dir, i);
        floor_file(dir, path, c->p[i], c->len[i], i, how);
    }
    return now() - t0;
}

/* ---- the floor on every core (1-D arrays) --------------------------------------------------------
 * The same plain C loop split over the engine's thread count with POSIX threads: thread t takes chunks
 * t, t + nt, t + 2 nt, ...; each encodes its chunks straight from the caller's array with its own
 * reused codec context (raw chunks are written from the array) and makes their files the `how` way.
 * This is the best a program storing these bytes in these files with this codec can do with every
 * core of this machine, measured (the other floors add the codec time divided by the thread count
 * to one thread's file loop). A target that even this floor misses is out of reach here. */
typedef struct par_floor {
    const char            *dir;
    const zarr_array_meta *m; /* NULL: raw */
    const uint8_t         *data;
    uint8_t               *dst; /* reads: chunk i decodes to dst + i * chunk_bytes; NULL: writes */
    size_t                 n, chunk_bytes;
    int                    how, t, nt;
} par_floor;

static void *
par_floor_main(void *arg)
{
    const par_floor *a   = arg;
    zarr_codec_ctx  *ctx = a->m ? zarr_codec_ctx_new() : NULL;
    zarr_buf         eb  = ZARR_BUF_INIT;
    char             path[4096];
    CHECK(!a->m || ctx, "oom");
    CHECK(zarr_buf_reserve(&eb, a->chunk_bytes + 4096) == ZARR_OK, "oom");
    for (size_t i = (size_t)a->t; i < a->n; i += (size_t)a->nt) {
        snprintf(path, sizeof path, "%s/%zu", a->dir, i);
        if (a->dst) { /* read: open + fstat + read (+ decode) */
            uint8_t    *to = a->dst + i * a->chunk_bytes;
            struct stat st;
            int         fd = open(path, O_RDONLY | O_CLOEXEC);
            CHECK(fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size <= eb.cap, "floor read open");
            CHECK(read(fd, a->m ? eb.data : to, (size_t)st.st_size) == st.st_size, "floor read");
            close(fd);
            if (a->m)
                ZOK(zarr_chain_decode(a->m->chain, ctx, eb.data, (size_t)st.st_size, to, a->m->chunks));
        }
        else if (a->m) {
            ZOK(zarr_chain_encode(a->m->chain, ctx, a->data + i * a->chunk_bytes, a->m->chunks, &eb));
            floor_file(a->dir, path, eb.data, eb.size, i, a->how);
        }
        else
            floor_file(a->dir, path, a->data + i * a->chunk_bytes, a->chunk_bytes, i, a->how);
    }
    zarr_buf_free(&eb);
    zarr_codec_ctx_free(ctx);
    return NULL;
}

/* Writes (dst NULL: chunks of `data` into new files under `dir`, made the `how` way) or reads (the
 * files under `dir`, decoded into dst) on `nt` threads; returns the seconds, mkdir to the last join. */
static double
floor_par(const char *dir, const zarr_array_meta *m, const uint8_t *data, uint8_t *dst, size_t n,
          size_t chunk_bytes, int how, int nt)
{
    pthread_t th[64];
    par_floor a[64];
    double    t0;
    if (nt > 64)
        nt = 64;
    t0 = now();
    if (!dst)
        CHECK(mkdir(dir, 0777) == 0, "floor mkdir");
    for (int t = 0; t < nt; t++) {
        a[t] = (par_floor){dir, m, data, dst, n, chunk_bytes, how, t, nt};
        if (t)
            CHECK(pthread_create(&th[t], NULL, par_floor_main, &a[t]) == 0, "pthread_create");
    }
    par_floor_main(&a[0]);
    for (int t = 1; t < nt; t++)
        pthread_join(th[t], NULL);
    return now() - t0;
}

/* Reads every chunk file: straight into `dst` (chunk i at i*chunk bytes) when `dst` is given (raw),
 * else into one scratch buffer (the decode is the codec part of the floor). */
static double
floor_read(const char *dir, size_t n, size_t ng1, size_t chunk_bytes, uint8_t *dst)
{
    char     path[4096];
    uint8_t *scratch = malloc(chunk_bytes + 4096);
    double   t0      = now();
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        int         fd;
        if (ng1 > 1)
            snprintf(path, sizeof path, "%s/%zu.%zu", dir, i / ng1, i % ng1);
        else
            snprintf(path, sizeof path, "%s/%zu", dir, i);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0 && fstat(fd, &st) == 0, "floor read open");
        CHECK(read(fd, dst ? dst + i * chunk_bytes : scratch, (size_t)st.st_size) == st.st_size,
              "floor read");
        close(fd);
    }
    t0 = now() - t0;
    free(scratch);
    return t0;
}

/* ---- NCZarr -------------------------------------------------------------------------------------- */

#ifdef H5ZARR_BENCH_NETCDF
#define NCOK(expr)                                                                                           \
    do {                                                                                                     \
        int e_ = (expr);                                                                                     \
        if (e_ != NC_NOERR) {                                                                                \
            fprintf(stderr, "h5zarr_bench: %s: %s\n", #expr, nc_strerror(e_));                               \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

/* The NCZarr URL of the store directory `dir`. */
static void
nc_url(const char *dir, char *url, size_t n)
{
    snprintf(url, n, "file://%s#mode=zarr,file", dir);
}

/* NCZarr whole-array read of variable "a" in its own type: nc_open to nc_close, one nc_get_var (W1's
 * int32, W2's float32), like h5_read. */
static double
nc_read_all(const char *dir, void *buf)
{
    char   url[4200];
    int    ncid, var;
    double t0;
    nc_url(dir, url, sizeof url);
    t0 = now();
    NCOK(nc_open(url, NC_NOWRITE, &ncid));
    NCOK(nc_inq_varid(ncid, "a", &var));
    NCOK(nc_get_var(ncid, var, buf));
    NCOK(nc_close(ncid));
    return now() - t0;
}

/* Sets the variant's compressor on `var`. Returns the netCDF status: NC_ENOFILTER (or another error)
 * when the filter is not available at run time, which the caller reports as a note. */
static int
nc_def_codec(int ncid, int var, const variant *v)
{
    if (v->nc_kind == 1)
        return nc_def_var_deflate(ncid, var, 0, 1, (int)v->cd[0]);
    if (v->nc_kind == 2)
        return nc_def_var_zstandard(ncid, var, (int)v->cd[0]);
    if (v->nc_kind == 3) /* blosc: lz4, clevel cd[4], blocksize cd[3] (0 = automatic), byte shuffle */
        return nc_def_var_blosc(ncid, var, BLOSC_LZ4, v->cd[4], v->cd[3], BLOSC_SHUFFLE);
    return NC_NOERR;
}

/* Creates the NCZarr store `dir` holding variable "a" of `type` over dimensions of `dims` (NC_UNLIMITED
 * allowed), chunked `chunks`, no fill, with the variant's compressor, and leaves it open in data mode.
 * Returns NC_NOERR, or the status of nc_def_var_* when the compressor can't be set: then the store is
 * abandoned (nc_abort) and `why` says so. Aborts on any other error. Not timed here: W2's rows time
 * it as part of their section, W3's untimed initial write does not. */
static int nc_create_path(const char *path, const variant *v, nc_type type, int ndim, const size_t *dims,
                          const size_t *chunks, int *ncid, int *var, char *why, size_t whylen);
static int
nc_create_a(const char *dir, const variant *v, nc_type type, int ndim, const size_t *dims,
            const size_t *chunks, int *ncid, int *var, char *why, size_t whylen)
{
    char url[4200];
    nc_url(dir, url, sizeof url);
    return nc_create_path(url, v, type, ndim, dims, chunks, ncid, var, why, whylen);
}

/* nc_create_a for any netCDF path: an NCZarr URL, a plain file name (netCDF-4 on HDF5, or through the
 * connector when HDF5_VOL_CONNECTOR names it). The same calls in the same order either way. */
static int
nc_create_path(const char *path, const variant *v, nc_type type, int ndim, const size_t *dims,
               const size_t *chunks, int *ncid, int *var, char *why, size_t whylen)
{
    static const char *names[3] = {"t", "y", "x"};
    int                dim[3], e;
    NCOK(nc_create(path, NC_CLOBBER | NC_NETCDF4, ncid));
    for (int d = 0; d < ndim; d++)
        NCOK(nc_def_dim(*ncid, names[3 - ndim + d], dims[d], &dim[d]));
    NCOK(nc_def_var(*ncid, "a", type, ndim, dim, var));
    NCOK(nc_def_var_chunking(*ncid, *var, NC_CHUNKED, chunks));
    NCOK(nc_def_var_fill(*ncid, *var, NC_NOFILL, NULL));
    if ((e = nc_def_codec(*ncid, *var, v)) != NC_NOERR) {
        snprintf(why, whylen,
                 "netCDF can't set this compressor here (nc_def_var_%s: %s; filter plugin not on "
                 "HDF5_PLUGIN_PATH?)",
                 v->nc_kind == 1   ? "deflate"
                 : v->nc_kind == 2 ? "zstandard"
                                   : "blosc",
                 nc_strerror(e));
        (void)nc_abort(*ncid);
        return e;
    }
    NCOK(nc_enddef(*ncid));
    return NC_NOERR;
}
/* NCZarr W1 write: nc_create to nc_close of the 1-D int variable "a" with the variant's compressor and
 * one nc_put_var_int. A compressor NCZarr can't set aborts (W1's rows have no note for it). */
static double
nc_write_1d(const char *dir, const variant *v, size_t n, size_t chunk, const int *buf)
{
    char   why[256];
    int    ncid, var;
    double t0 = now();
    if (nc_create_a(dir, v, NC_INT, 1, &n, &chunk, &ncid, &var, why, sizeof why) != NC_NOERR) {
        fprintf(stderr, "h5zarr_bench: %s\n", why);
        exit(1);
    }
    NCOK(nc_put_var_int(ncid, var, buf));
    NCOK(nc_close(ncid));
    return now() - t0;
}
#endif

/* ---- W1 ------------------------------------------------------------------------------------------ */

#define W1_N     1000000
#define W1_CHUNK 1000

static void
check_same(const void *a, const void *b, size_t n, const char *what)
{
    if (memcmp(a, b, n) != 0) {
        fprintf(stderr, "h5zarr_bench: %s read back wrong data\n", what);
        exit(1);
    }
}

/* W1 sharded (issue 13): zarr v3 through the VOL with shard_bytes=1MiB, which the policy turns into 4
 * shards of 250 chunks (1 MB each) for W1's 1000 chunks of 4000 B, next to the same dataset unsharded
 * (vol-unsharded, zarr v3) and native HDF5, uncompressed and zstd level 1; directory store, the order
 * rotated per repetition. Rows "<codec>-v3-shard-dir". */
#define W1_SHARD_BYTES "shard_bytes=1MiB"
static void
run_w1_sharded(const int *data, int *back)
{
    static const variant V[] = {
        {"raw-v3-shard", 3, NULL, NULL, 0, {0}, 0, 0},
        {"zstd-v3-shard", 3, NULL, NULL, H5Z_ZSTD, {1}, 1, 2},
    };
    hsize_t     hdims[1] = {W1_N}, hchunks[1] = {W1_CHUNK};
    const char *W = "W1";
    for (size_t vi = 0; vi < sizeof V / sizeof *V; vi++) {
        const variant *v = &V[vi];
        char           vd[64];
        snprintf(vd, sizeof vd, "%s-dir", v->name);
        for (int k = 0; k < 3; k++) {
            int         which = (k + g_rep) % 3;
            const char *impl  = which == 0 ? "vol" : which == 1 ? "vol-unsharded" : "hdf5";
            const char *p =
                which == 2 ? spath("w1-%s-hdf5.h5", v->name) : spath("w1-%s-%s.zarr", v->name, impl);
            hid_t  fapl = which == 0   ? vol_fapl_opts(3, W1_SHARD_BYTES)
                          : which == 1 ? vol_fapl(3)
                                       : H5Pcopy(H5P_FILE_ACCESS_DEFAULT);
            double t;
            settle(false);
            t = h5_write(p, fapl, v, H5T_NATIVE_INT32, H5T_STD_I32LE, 1, hdims, hchunks, data, NULL);
            if (t < 0)
                note(W, vd, impl, "the dataset could not be created (filter plugin missing?)");
            else if (which == 0 && !store_is_sharded(p))
                note(W, vd, impl, "the VOL wrote no sharded array (a connector without shard_bytes?)");
            else {
                memset(back, 0, sizeof(int) * W1_N);
                emit(W, vd, impl, "write", t);
                emit(W, vd, impl, "read", h5_read(p, fapl, H5T_NATIVE_INT32, back, -1));
                check_same(data, back, sizeof(int) * W1_N, impl);
            }
            H5Pclose(fapl);
        }
    }
    printf("M\tw1-shard\t%s: 4 shards of 250 chunks (1 MB) each\n", W1_SHARD_BYTES);
}

static void
run_w1(void)
{
    int        *data = malloc(W1_N * sizeof(int)), *back = malloc(W1_N * sizeof(int));
    uint64_t    shape[1] = {W1_N}, chunks[1] = {W1_CHUNK};
    hsize_t     hdims[1] = {W1_N}, hchunks[1] = {W1_CHUNK};
    int         nthreads = zarr_pool_nthreads(zarr_pool_default());
    const char *W        = "W1";

    CHECK(data && back, "oom");
    for (int i = 0; i < W1_N; i++)
        data[i] = i;
    printf("M\tthreads\t%d\n", nthreads);

    for (size_t vi = 0; vi < sizeof W1_VARIANTS / sizeof *W1_VARIANTS; vi++) {
        const variant *v   = &W1_VARIANTS[vi];
        bool           raw = !v->v2_compressor;
        chunkset       cs  = {0};
        double         dec_t, enc_t, t;
        char           vd[64], vm[64];
        snprintf(vd, sizeof vd, "%s-dir", v->name);
        snprintf(vm, sizeof vm, "%s-mem", v->name);

        enc_t = encode_chunks(v, 1, shape, chunks, ZARR_INT, (const uint8_t *)data, &cs, &dec_t);
        if (!raw) {
            emit(W, vd, "codec-1t", "write", enc_t);
            emit(W, vd, "codec-1t", "read", dec_t);
        }

        /* ---- directory store: interleave implementations, rotating the order per repetition ---- */
        for (int k = 0; k < 6; k++) {
            int which = (k + g_rep) % 6;
            settle(false);
            switch (which) {
                case 0: { /* floor: plain, write-then-rename, write-then-link */
                    double fw = floor_write(spath("w1-%s-floor", v->name), &cs, 1, FLOOR_PLAIN);
                    double fr = floor_read(spath("w1-%s-floor", v->name), cs.n, 1, W1_CHUNK * 4,
                                           raw ? (uint8_t *)back : NULL);
                    settle(false);
                    double fwr = floor_write(spath("w1-%s-floor-rn", v->name), &cs, 1, FLOOR_RENAME);
                    settle(false);
                    double           fwl = floor_write(spath("w1-%s-floor-ln", v->name), &cs, 1, FLOOR_LINK);
                    zarr_array_meta *pm  = raw ? NULL : make_meta(v, 1, shape, chunks, ZARR_INT);
                    const char      *pd  = spath("w1-%s-floor-par", v->name);
                    settle(false);
                    double fwp = floor_par(pd, pm, (const uint8_t *)data, NULL, cs.n, W1_CHUNK * 4,
                                           FLOOR_PLAIN, nthreads);
                    memset(back, 0, sizeof(int) * W1_N);
                    double frp = floor_par(pd, pm, NULL, (uint8_t *)back, cs.n, W1_CHUNK * 4, 0, nthreads);
                    check_same(data, back, sizeof(int) * W1_N, "floor-par");
                    settle(false);
                    double fwpl = floor_par(spath("w1-%s-floor-par-ln", v->name), pm, (const uint8_t *)data,
                                            NULL, cs.n, W1_CHUNK * 4, FLOOR_LINK, nthreads);
                    zarr_array_meta_free(pm);
                    emit(W, vd, "floor-par", "write", fwp);
                    emit(W, vd, "floor-par", "read", frp);
                    emit(W, vd, "floor-par-link", "write", fwpl);
                    if (raw)
                        check_same(data, back, sizeof(int) * W1_N, "floor");
                    emit(W, vd, "floor-files", "write", fw);
                    emit(W, vd, "floor-files-rename", "write", fwr);
                    emit(W, vd, "floor-files-link", "write", fwl);
                    emit(W, vd, "floor-files", "read", fr);
                    emit(W, vd, "floor", "write", fw + (raw ? 0 : enc_t / nthreads));
                    emit(W, vd, "floor-rename", "write", fwr + (raw ? 0 : enc_t / nthreads));
                    emit(W, vd, "floor-link", "write", fwl + (raw ? 0 : enc_t / nthreads));
                    emit(W, vd, "floor", "read", fr + (raw ? 0 : dec_t / nthreads));
                    break;
                }
                case 1: { /* core API */
                    const char *p = spath("w1-%s-core.zarr", v->name);
                    memset(back, 0, sizeof(int) * W1_N);
                    emit(W, vd, "core", "write",
                         core_write(NULL, p, v, 1, shape, chunks, ZARR_INT, NULL, data));
                    emit(W, vd, "core", "read", core_read(NULL, p, NULL, back));
                    check_same(data, back, sizeof(int) * W1_N, "core");
                    break;
                }
                case 2: { /* VOL */
                    const char *p    = spath("w1-%s-vol.zarr", v->name);
                    hid_t       fapl = vol_fapl(v->zarr_format);
                    t = h5_write(p, fapl, v, H5T_NATIVE_INT32, H5T_STD_I32LE, 1, hdims, hchunks, data, NULL);
                    if (t < 0)
                        note(W, vd, "vol",
                             "the VOL does not map this HDF5 filter yet (vol/filter.c): measured through "
                             "the core API only");
                    else {
                        memset(back, 0, sizeof(int) * W1_N);
                        emit(W, vd, "vol", "write", t);
                        emit(W, vd, "vol", "read", h5_read(p, fapl, H5T_NATIVE_INT32, back, -1));
                        check_same(data, back, sizeof(int) * W1_N, "vol");
                    }
                    H5Pclose(fapl);
                    break;
                }
                case 3: { /* native HDF5 */
                    const char *p = spath("w1-%s-hdf5.h5", v->name);
                    t = h5_write(p, H5P_DEFAULT, v, H5T_NATIVE_INT32, H5T_STD_I32LE, 1, hdims, hchunks, data,
                                 NULL);
                    if (t < 0) {
                        note(W, vd, "hdf5", "native HDF5 lacks this filter (HDF5_PLUGIN_PATH?)");
                        break;
                    }
                    memset(back, 0, sizeof(int) * W1_N);
                    emit(W, vd, "hdf5", "write", t);
                    emit(W, vd, "hdf5", "read", h5_read(p, H5P_DEFAULT, H5T_NATIVE_INT32, back, -1));
                    check_same(data, back, sizeof(int) * W1_N, "hdf5");
                    break;
                }
                case 4: { /* NCZarr */
#ifdef H5ZARR_BENCH_NETCDF
                    if (v->zarr_format != 2) {
                        note(W, vd, "nczarr", "NCZarr writes zarr v2 only");
                        break;
                    }
                    const char *p = spath("w1-%s-nczarr.zarr", v->name);
                    memset(back, 0, sizeof(int) * W1_N);
                    emit(W, vd, "nczarr", "write", nc_write_1d(p, v, W1_N, W1_CHUNK, data));
                    emit(W, vd, "nczarr", "read", nc_read_all(p, back));
                    check_same(data, back, sizeof(int) * W1_N, "nczarr");
#else
                    note(W, vd, "nczarr", "built without netCDF");
#endif
                    break;
                }
                default:
                    break;
            }
        }

        /* ---- memory store ---- */
        for (int k = 0; k < 3; k++) {
            int which = (k + g_rep) % 3;
            if (which == 0) { /* floor: malloc + memcpy per chunk (+ codec / threads), memcpy back */
                uint8_t **keep = malloc(cs.n * sizeof *keep);
                double    t0   = now(), tw, tr;
                for (size_t i = 0; i < cs.n; i++) {
                    keep[i] = malloc(cs.len[i]);
                    memcpy(keep[i], raw ? (const uint8_t *)data + i * W1_CHUNK * 4 : cs.p[i], cs.len[i]);
                }
                tw = now() - t0;
                t0 = now();
                if (raw)
                    for (size_t i = 0; i < cs.n; i++)
                        memcpy((uint8_t *)back + i * W1_CHUNK * 4, keep[i], cs.len[i]);
                tr = now() - t0;
                for (size_t i = 0; i < cs.n; i++)
                    free(keep[i]);
                free(keep);
                emit(W, vm, "floor", "write", tw + (raw ? 0 : enc_t / nthreads));
                emit(W, vm, "floor", "read", tr + (raw ? 0 : dec_t / nthreads));
            }
            else if (which == 1) { /* core API, memory store */
                zarr_store *s;
                double      tw;
                double      t0 = now();
                ZOK(zarr_store_new_mem(&s));
                core_write(s, NULL, v, 1, shape, chunks, ZARR_INT, NULL, data);
                tw = now() - t0; /* store creation included */
                memset(back, 0, sizeof(int) * W1_N);
                emit(W, vm, "core", "write", tw);
                emit(W, vm, "core", "read", core_read(s, NULL, NULL, back));
                check_same(data, back, sizeof(int) * W1_N, "core mem");
                zarr_store_close(s);
            }
            else { /* native HDF5, core driver without backing store */
                hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1;
                char  name[64];
                CHECK(H5Pset_fapl_core(fapl, 8 << 20, 0) >= 0, "fapl_core");
                snprintf(name, sizeof name, "w1-mem-%s-%d", v->name, g_rep);
                t = h5_write(name, fapl, v, H5T_NATIVE_INT32, H5T_STD_I32LE, 1, hdims, hchunks, data, &f);
                if (t >= 0) {
                    memset(back, 0, sizeof(int) * W1_N);
                    emit(W, vm, "hdf5", "write", t);
                    emit(W, vm, "hdf5", "read", h5_read(name, fapl, H5T_NATIVE_INT32, back, f));
                    check_same(data, back, sizeof(int) * W1_N, "hdf5 core");
                    H5Fclose(f);
                }
                H5Pclose(fapl);
            }
        }
        note(W, vm, "vol", "the VOL opens directory stores only");
        chunkset_free(&cs);
    }
    run_w1_sharded(data, back);
    free(data);
    free(back);
}

/* ---- W2 ------------------------------------------------------------------------------------------ */

#define W2_N  8192
#define W2_C  512
#define W2_TS 1024 /* time-step slab: W2_TS x W2_TS */
#define W2_NT 16   /* time steps */

static float *
smooth_field(uint64_t ny, uint64_t nx, float phase)
{
    float *f = malloc(ny * nx * sizeof(float)), *sx = malloc(nx * sizeof(float));
    CHECK(f && sx, "oom");
    for (uint64_t x = 0; x < nx; x++)
        sx[x] = sinf(0.0021f * (float)x + phase);
    for (uint64_t y = 0; y < ny; y++) {
        float cy = cosf(0.0017f * (float)y);
        for (uint64_t x = 0; x < nx; x++)
            f[y * nx + x] = sx[x] * cy;
    }
    free(sx);
    return f;
}

#ifdef H5ZARR_BENCH_NETCDF
/* NCZarr whole-array write: nc_create of the store to nc_close (dimensions, the float variable "a"
 * with W2's chunks and the variant's compressor, no fill, one nc_put_var_float), like h5_write.
 * Returns seconds, or -1 when NCZarr can't set the compressor (`why` says why). */
static double
nc_write_w2(const char *dir, const variant *v, const float *buf, char *why, size_t whylen)
{
    size_t dims[2] = {W2_N, W2_N}, chunks[2] = {W2_C, W2_C};
    int    ncid, var;
    double t0 = now();
    if (nc_create_a(dir, v, NC_FLOAT, 2, dims, chunks, &ncid, &var, why, whylen) != NC_NOERR)
        return -1;
    NCOK(nc_put_var_float(ncid, var, buf));
    NCOK(nc_close(ncid));
    return now() - t0;
}

/* NCZarr append: nc_create to nc_close of a (T, W2_TS, W2_TS) float variable with T unlimited, chunks
 * (1, 512, 512), and one nc_put_vara_float of the slab per time step (NCZarr grows the unlimited
 * dimension on write: no explicit resize). Returns seconds, or -1 as nc_write_w2. */
static double
nc_append_w2(const char *dir, const variant *v, const float *slab, char *why, size_t whylen)
{
    size_t dims[3] = {NC_UNLIMITED, W2_TS, W2_TS}, chunks[3] = {1, W2_C, W2_C};
    int    ncid, var;
    double t0 = now();
    if (nc_create_a(dir, v, NC_FLOAT, 3, dims, chunks, &ncid, &var, why, whylen) != NC_NOERR)
        return -1;
    for (size_t t = 0; t < W2_NT; t++) {
        size_t st[3] = {t, 0, 0}, cnt[3] = {1, W2_TS, W2_TS};
        NCOK(nc_put_vara_float(ncid, var, st, cnt, slab));
    }
    NCOK(nc_close(ncid));
    return now() - t0;
}

/* ---- W2 through the netCDF API (issue 12) ---------------------------------------------------------
 * One netCDF program, three destinations: netCDF-4 on native HDF5 ("hdf5", w2-nc-hdf5.nc), the same
 * program through our connector ("vol": HDF5_VOL_CONNECTOR=zarr in its environment and a path ending
 * in .zarr, so the connector makes a zarr v3 store), and NCZarr ("nczarr", file://...#mode=zarr,file,
 * zarr v2). Each runs as a child process of the bench (`h5zarr_bench w2nc <scratch> <impl>`), because
 * HDF5 reads HDF5_VOL_CONNECTOR once, when it initialises, and the bench process itself initialises
 * HDF5 without it (its native rows must stay native). The child is a plain netCDF program: it makes no
 * HDF5 call of its own. */
static long long g_du;
static int
du_add(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)p;
    (void)f;
    if (flag == FTW_F)
        g_du += (long long)st->st_size;
    return 0;
}

static long long
du_bytes(const char *path)
{
    g_du = 0;
    return nftw(path, du_add, 16, FTW_PHYS) == 0 ? g_du : -1;
}

/* The child: W2's array (8192 x 8192 float32, 512 x 512 chunks, zstd level 1 through
 * nc_def_var_zstandard, netCDF's own zstd entry point; no fill) written with one nc_put_vara_float of
 * the whole array, as the whole-array W2 rows do with one H5Dwrite / nc_put_var_float. An untimed
 * warm-up file of the same kind first (a 2 x 2 variable with the same filter), so library and plugin
 * loading are not timed, as they are not for the bench's in-process rows after their first use. Then
 * settle(true), as before every W2 section, and the timed section: nc_create to nc_close. Afterwards,
 * untimed: the store or file is checked (the connector's must be a zarr store with zarr.json) and read
 * back and compared. Prints an "R" line, and "M" facts with the bytes stored. */
static int
run_w2nc_child(const char *impl)
{
    const char    *W = "W2", *V = "netcdf-zstd1";
    const variant *v   = &W2_VARIANTS[0]; /* zstd1 */
    bool           vol = !strcmp(impl, "vol"), nczarr = !strcmp(impl, "nczarr");
    size_t         nbytes  = (size_t)W2_N * W2_N * 4;
    size_t         dims[2] = {W2_N, W2_N}, chunks[2] = {W2_C, W2_C}, wd[2] = {2, 2};
    size_t         st[2] = {0, 0}, cnt[2] = {W2_N, W2_N};
    float          warm[4] = {1, 2, 3, 4};
    float         *data, *back;
    char           path[4200], wpath[4200], why[256];
    const char    *ext = vol ? "zarr" : nczarr ? "zarr" : "nc";
    int            ncid, var;
    double         t0, t;

    CHECK(v->nc_kind == 2, "W2_VARIANTS[0] is zstd");
    if (!vol && !nczarr && strcmp(impl, "hdf5"))
        die("w2nc: impl is hdf5, vol or nczarr");
    if (vol && !getenv("HDF5_VOL_CONNECTOR"))
        die("w2nc vol: HDF5_VOL_CONNECTOR is not set");
    data = smooth_field(W2_N, W2_N, 0.0f);
    back = malloc(nbytes);
    CHECK(back, "oom");
    memset(back, 0, nbytes);
    snprintf(path, sizeof path, "%s", spath("w2-nc-zstd1-%s.%s", impl, ext));
    snprintf(wpath, sizeof wpath, "%s", spath("w2-nc-warm-%s.%s", impl, ext));
    if (nczarr) {
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s", path);
        nc_url(tmp, path, sizeof path);
        snprintf(tmp, sizeof tmp, "%s", wpath);
        nc_url(tmp, wpath, sizeof wpath);
    }

    if (nc_create_path(wpath, v, NC_FLOAT, 2, wd, wd, &ncid, &var, why, sizeof why) != NC_NOERR) {
        note(W, V, impl, why);
        return 0;
    }
    NCOK(nc_put_var_float(ncid, var, warm));
    NCOK(nc_close(ncid));

    settle(true);
    t0 = now();
    if (nc_create_path(path, v, NC_FLOAT, 2, dims, chunks, &ncid, &var, why, sizeof why) != NC_NOERR) {
        note(W, V, impl, why);
        return 0;
    }
    NCOK(nc_put_vara_float(ncid, var, st, cnt, data));
    NCOK(nc_close(ncid));
    t = now() - t0;
    emit(W, V, impl, "write", t);

    /* untimed checks */
    if (vol) { /* a zarr store, not an HDF5 file: zarr.json at the root and for "a", data by the core */
        const char *dir = spath("w2-nc-zstd1-vol.zarr");
        struct stat sb;
        zarr_store *s;
        zarr_array *a;
        zarr_region r;
        char        doc[4200];
        CHECK(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode), "w2nc vol: the connector made no store directory");
        snprintf(doc, sizeof doc, "%s/zarr.json", dir);
        CHECK(stat(doc, &sb) == 0 && S_ISREG(sb.st_mode), "w2nc vol: no zarr.json at the store's root");
        snprintf(doc, sizeof doc, "%s/a/zarr.json", dir);
        CHECK(stat(doc, &sb) == 0 && S_ISREG(sb.st_mode), "w2nc vol: no a/zarr.json");
        ZOK(zarr_store_open_dir(dir, ZARR_STORE_RDONLY, &s));
        ZOK(zarr_array_open(s, "a", &a));
        CHECK(zarr_array_meta_get(a)->zarr_format == 3, "w2nc vol: the store is not zarr v3");
        zarr_region_all(zarr_array_meta_get(a), &r);
        ZOK(zarr_array_read(a, &r, back));
        zarr_array_close(a);
        zarr_store_close(s);
        printf("M\tw2-netcdf-vol-bytes\t%lld (zarr v3 store)\n", du_bytes(dir));
    }
    else {
        NCOK(nc_open(path, NC_NOWRITE, &ncid));
        NCOK(nc_inq_varid(ncid, "a", &var));
        NCOK(nc_get_var_float(ncid, var, back));
        NCOK(nc_close(ncid));
        if (nczarr)
            printf("M\tw2-netcdf-nczarr-bytes\t%lld (zarr v2 store)\n",
                   du_bytes(spath("w2-nc-zstd1-nczarr.zarr")));
        else {
            char  magic[8] = {0};
            FILE *f        = fopen(path, "rb");
            CHECK(f && fread(magic, 1, 8, f) == 8, "w2nc hdf5: can't read the file");
            fclose(f);
            CHECK(!memcmp(magic, "\211HDF\r\n\032\n", 8), "w2nc hdf5: not an HDF5 file");
            printf("M\tw2-netcdf-hdf5-bytes\t%lld (netCDF-4/HDF5 file)\n", du_bytes(path));
        }
    }
    check_same(data, back, nbytes, impl);
    fflush(stdout);
    free(data);
    free(back);
    return 0;
}
#endif

static int g_failed;

/* The parent side: runs the three netCDF writers as children, in an order rotated per repetition
 * like the other W2 rows. Their "R"/"N"/"M" lines go straight to our stdout. The "vol" child gets
 * HDF5_VOL_CONNECTOR=zarr and HDF5_PLUGIN_PATH=$H5ZARR_PLUGIN_DIR (the connector and our zstd filter);
 * the others the bench's environment without HDF5_VOL_CONNECTOR (netCDF's plugin folder). */
static void
run_w2_netcdf(void)
{
#ifdef H5ZARR_BENCH_NETCDF
    extern char      **environ;
    static const char *impls[3] = {"hdf5", "vol", "nczarr"};
    const char        *plugdir  = getenv("H5ZARR_PLUGIN_DIR");
    size_t             ne       = 0;
    while (environ[ne])
        ne++;
    for (int k = 0; k < 3; k++) {
        const char *impl = impls[(k + g_rep) % 3];
        bool        vol  = !strcmp(impl, "vol");
        char      **envp = calloc(ne + 3, sizeof *envp);
        char        pp[4200];
        char       *argv[5] = {"h5zarr_bench", "w2nc", (char *)g_scratch, (char *)impl, NULL};
        size_t      n       = 0;
        pid_t       pid;
        int         status;
        CHECK(envp, "oom");
        if (vol && !plugdir) {
            note("W2", "netcdf-zstd1", impl, "H5ZARR_PLUGIN_DIR is not set (run through bench/run.py)");
            free(envp);
            continue;
        }
        for (size_t i = 0; i < ne; i++) {
            if (!strncmp(environ[i], "HDF5_VOL_CONNECTOR=", 19))
                continue;
            if (vol && !strncmp(environ[i], "HDF5_PLUGIN_PATH=", 17))
                continue;
            envp[n++] = environ[i];
        }
        if (vol) {
            snprintf(pp, sizeof pp, "HDF5_PLUGIN_PATH=%s", plugdir);
            envp[n++] = "HDF5_VOL_CONNECTOR=zarr";
            envp[n++] = pp;
        }
        fflush(stdout);
        fflush(stderr);
        CHECK(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, envp) == 0, "posix_spawn");
        CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
        free(envp);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "h5zarr_bench: the W2 netCDF writer (%s) failed (status %d)\n", impl, status);
            note("W2", "netcdf-zstd1", impl, "the netCDF writer failed (see run.log)");
            g_failed = 1;
        }
    }
#else
    note("W2", "netcdf-zstd1", "vol", "built without netCDF");
#endif
}

static void
append_loop(const variant *v, const char *vname, bool raw)
{
    /* (T, W2_TS, W2_TS) float32, T unlimited, chunks (1, 512, 512); one slab appended per step. */
    const char    *W    = "W2";
    float         *slab = smooth_field(W2_TS, W2_TS, 0.3f);
    variant        none = {"raw", 2, NULL, NULL, 0, {0}, 0, 0};
    const variant *vv   = raw ? &none : v;
    hsize_t dims[3] = {0, W2_TS, W2_TS}, maxd[3] = {H5S_UNLIMITED, W2_TS, W2_TS}, ch[3] = {1, W2_C, W2_C};
    char    vname2[64];
    snprintf(vname2, sizeof vname2, "append-%s", vname);

    for (int k = 0; k < 4; k++) {
        int which = (k + g_rep) % 4;
        settle(true);
        if (which == 3) { /* NCZarr: unlimited first dimension, one nc_put_vara_float per step */
#ifdef H5ZARR_BENCH_NETCDF
            char   why[256];
            double t = nc_append_w2(spath("w2-%s-nczarr.zarr", vname2), vv, slab, why, sizeof why);
            if (t < 0)
                note(W, vname2, "nczarr", why);
            else
                emit(W, vname2, "nczarr", "write", t);
#else
            note(W, vname2, "nczarr", "built without netCDF");
#endif
        }
        else if (which == 0) { /* core API: resize + write per step */
            uint64_t         shape[3] = {0, W2_TS, W2_TS}, chunks[3] = {1, W2_C, W2_C};
            const char      *p = spath("w2-%s-core.zarr", vname2);
            zarr_store      *s;
            zarr_array      *a;
            double           t0 = now();
            zarr_array_meta *m  = make_meta(vv, 3, shape, chunks, ZARR_FLOAT);
            ZOK(zarr_store_open_dir(p, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s));
            ZOK(zarr_array_create(s, "a", m, true, &a));
            for (uint64_t t = 0; t < W2_NT; t++) {
                uint64_t    ns[3] = {t + 1, W2_TS, W2_TS}, st[3] = {t, 0, 0}, cnt[3] = {1, W2_TS, W2_TS};
                zarr_region r;
                ZOK(zarr_array_resize(a, ns));
                zarr_region_box(3, st, cnt, &r);
                ZOK(zarr_array_write(a, &r, slab));
            }
            zarr_array_close(a);
            zarr_store_close(s);
            emit(W, vname2, "core", "write", now() - t0);
        }
        else {
            bool        vol  = which == 1;
            const char *p    = vol ? spath("w2-%s-vol.zarr", vname2) : spath("w2-%s-hdf5.h5", vname2);
            hid_t       fapl = vol ? vol_fapl(2) : H5Pcopy(H5P_FILE_ACCESS_DEFAULT);
            hid_t       dcpl = make_dcpl(vv, 3, ch), f, s, d = -1;
            double      t0 = now();
            f              = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
            CHECK(f >= 0, "H5Fcreate append");
            s = H5Screate_simple(3, dims, maxd);
            H5E_BEGIN_TRY { d = H5Dcreate2(f, "a", H5T_IEEE_F32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT); }
            H5E_END_TRY
            H5Sclose(s);
            if (d < 0) {
                H5Fclose(f);
                note(W, vname2, vol ? "vol" : "hdf5",
                     vol ? "the VOL does not map this HDF5 filter yet (vol/filter.c)" : "filter unavailable");
            }
            else {
                for (hsize_t t = 0; t < W2_NT; t++) {
                    hsize_t ns[3] = {t + 1, W2_TS, W2_TS}, st[3] = {t, 0, 0}, cnt[3] = {1, W2_TS, W2_TS};
                    hid_t   fs, ms;
                    CHECK(H5Dset_extent(d, ns) >= 0, "H5Dset_extent");
                    fs = H5Dget_space(d);
                    H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, cnt, NULL);
                    ms = H5Screate_simple(3, cnt, NULL);
                    CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, slab) >= 0, "H5Dwrite append");
                    H5Sclose(fs);
                    H5Sclose(ms);
                }
                H5Dclose(d);
                H5Fclose(f);
                emit(W, vname2, vol ? "vol" : "hdf5", "write", now() - t0);
            }
            H5Pclose(dcpl);
            H5Pclose(fapl);
        }
    }
    free(slab);
}

/* W2 sharded (issue 13): zstd-1 through the VOL in zarr v3 with shard_bytes=16MiB (16 chunks of 1 MiB
 * per shard: the policy's 8192 x 512 column stripes, 16 shards), next to the same write unsharded
 * (vol-unsharded, v3). Row "zstd1-shard"; the native HDF5 figure is row zstd1's. */
#define W2_SHARD_BYTES "shard_bytes=16MiB"
/* Passes of the four rows per repetition. The two layouts cost the same within a few percent (so do
 * their floors), while single writes here vary by +-15% from one to the next: with one pass per
 * repetition the verdict of a run of 7 was a coin toss (1.06x, 0.94x, 1.14x in three runs on one
 * machine); five give 35 interleaved pairs in a run of 7, and the report adds the paired ratios'
 * median and its interval. */
#define W2_SHARD_PASSES 5

/* The floor pair of the sharded W2 rows: the encoded chunks of `c` (a W2_N / W2_C square grid, C order)
 * written by a plain C loop on `nt` threads into O_TMPFILE files (256 KiB pwrites, then linkat), either
 * one file per chunk (thread t: chunks t, t + nt, ...) or one per shard, a shard being a column of the
 * grid's chunks written one after another (thread t: shards t, t + nt, ...). No index, no codec. */
typedef struct shard_floor {
    const char     *dir;
    const chunkset *c;
    bool            shards;
    int             t, nt;
} shard_floor;

static void
floor_pwrite(int fd, const uint8_t *p, size_t n, off_t off)
{
    for (size_t k = 0; k < n;) {
        size_t  m = n - k < ((size_t)256 << 10) ? n - k : ((size_t)256 << 10);
        ssize_t w = pwrite(fd, p + k, m, off + (off_t)k);
        CHECK(w > 0, "floor pwrite");
        k += (size_t)w;
    }
}

static void *
shard_floor_main(void *arg)
{
    const shard_floor *a  = arg;
    size_t             ng = W2_N / W2_C;
    char               path[4096];
    for (size_t f = (size_t)a->t; f < (a->shards ? ng : a->c->n); f += (size_t)a->nt) {
        int   fd  = open(a->dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        off_t off = 0;
        CHECK(fd >= 0, "floor O_TMPFILE");
        for (size_t k = 0; k < (a->shards ? ng : 1); k++) {
            size_t i = a->shards ? k * ng + f : f; /* shard f: column f of the grid */
            floor_pwrite(fd, a->c->p[i], a->c->len[i], off);
            off += (off_t)a->c->len[i];
        }
        snprintf(path, sizeof path, "%s/%zu", a->dir, f);
        CHECK(linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH) == 0, "floor linkat");
        close(fd);
    }
    return NULL;
}

static double
floor_shards(const char *dir, const chunkset *c, bool shards, int nt)
{
    pthread_t   th[8];
    shard_floor a[8];
    double      t0 = now();
    CHECK(mkdir(dir, 0777) == 0, "floor mkdir");
    for (int t = 0; t < nt && t < 8; t++) {
        a[t] = (shard_floor){dir, c, shards, t, nt};
        if (t)
            CHECK(pthread_create(&th[t], NULL, shard_floor_main, &a[t]) == 0, "pthread_create");
    }
    shard_floor_main(&a[0]);
    for (int t = 1; t < nt && t < 8; t++)
        pthread_join(th[t], NULL);
    return now() - t0;
}

static void
run_w2_sharded(const float *data, float *back)
{
    const variant *v     = &W2_VARIANTS[0]; /* zstd1 */
    hsize_t        hd[2] = {W2_N, W2_N}, hc[2] = {W2_C, W2_C};
    size_t         nbytes   = (size_t)W2_N * W2_N * 4;
    const char    *one      = getenv("H5ZARR_BENCH_W2_SHARD"); /* "vol" or "vol-unsharded": that row alone */
    uint64_t       shape[2] = {W2_N, W2_N}, chunks[2] = {W2_C, W2_C};
    chunkset       cs    = {0};
    double         dec_t = 0, enc_t = 0;
    if (!one)
        enc_t = encode_chunks(v, 2, shape, chunks, ZARR_FLOAT, (const uint8_t *)data, &cs, &dec_t);
    /* the floor pair (all cores: the files on 2 threads, the codec split perfectly over them), then the
     * two layouts through the VOL; W2_SHARD_PASSES times, the order rotated per pass and repetition */
    for (int k = 0; k < 4 * W2_SHARD_PASSES; k++) {
        int pass = k / 4, which = (k % 4 + g_rep + pass) % 4;
        if (which >= 2) {
            bool        shards = which == 2;
            const char *impl   = shards ? "floor-par-link" : "floor-par-link-unsharded";
            if (one)
                continue;
            settle(true);
            emit("W2", "zstd1-shard", impl, "write",
                 floor_shards(spath("w2-zstd1-shard-%s-%d", impl, pass), &cs, shards, 2) + enc_t / 2);
            continue;
        }
        bool        sh   = which == 0;
        const char *impl = sh ? "vol" : "vol-unsharded";
        const char *p    = spath("w2-zstd1-shard-%s-%d.zarr", impl, pass);
        if (one && strcmp(one, impl) != 0)
            continue;
        hid_t  fapl = sh ? vol_fapl_opts(3, W2_SHARD_BYTES) : vol_fapl(3);
        double t;
        settle(true);
        t = h5_write(p, fapl, v, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, 2, hd, hc, data, NULL);
        if (t < 0)
            note("W2", "zstd1-shard", impl, "the dataset could not be created (filter plugin missing?)");
        else if (sh && !store_is_sharded(p))
            note("W2", "zstd1-shard", impl,
                 "the VOL wrote no sharded array (a connector without shard_bytes?)");
        else {
            emit("W2", "zstd1-shard", impl, "write", t);
            emit("W2", "zstd1-shard", impl, "read", h5_read(p, fapl, H5T_NATIVE_FLOAT, back, -1));
            check_same(data, back, nbytes, impl);
            memset(back, 0, nbytes);
        }
        H5Pclose(fapl);
    }
    chunkset_free(&cs);
    printf("M\tw2-shard\t%s: 16 shards of 16 chunks (16 MiB) each\n", W2_SHARD_BYTES);
}

static void
run_w2(void)
{
    const char *W        = "W2";
    uint64_t    shape[2] = {W2_N, W2_N}, chunks[2] = {W2_C, W2_C};
    hsize_t     hd[2] = {W2_N, W2_N}, hc[2] = {W2_C, W2_C};
    size_t      nbytes = (size_t)W2_N * W2_N * 4;
    float      *data   = smooth_field(W2_N, W2_N, 0.0f);
    float      *back   = malloc(nbytes);
    zarr_pool  *p1, *p2;
    /* H5ZARR_BENCH_W2_ONLY = core-1t, core-2t, vol, hdf5 or nczarr: profile one implementation;
     * netcdf: the three netCDF-program rows only; shard: the sharded rows only */
    const char *only = getenv("H5ZARR_BENCH_W2_ONLY");

    if (only && !strcmp(only, "netcdf")) { /* the netCDF rows alone */
        run_w2_netcdf();
        free(data);
        free(back);
        return;
    }
    CHECK(back, "oom");
    memset(back, 0, nbytes); /* touch once: every reader then writes into resident pages */
    ZOK(zarr_pool_new(1, &p1));
    ZOK(zarr_pool_new(2, &p2));
    for (size_t vi = 0; vi < sizeof W2_VARIANTS / sizeof *W2_VARIANTS; vi++) {
        const variant *v  = &W2_VARIANTS[vi];
        chunkset       cs = {0};
        double         dec_t, enc_t;
        if (only && !strcmp(only, "shard")) /* the sharded rows alone (below) */
            continue;
        if (only) { /* profile one implementation: its write and read only */
            int which = !strcmp(only, "core-1t")   ? 1
                        : !strcmp(only, "core-2t") ? 2
                        : !strcmp(only, "vol")     ? 3
                        : !strcmp(only, "nczarr")  ? 5
                                                   : 4;
            settle(true);
            if (which == 5) {
#ifdef H5ZARR_BENCH_NETCDF
                const char *p = spath("w2-%s-nczarr.zarr", v->name);
                char        why[256];
                double      t = nc_write_w2(p, v, data, why, sizeof why);
                if (t < 0)
                    note(W, v->name, only, why);
                else {
                    emit(W, v->name, only, "write", t);
                    emit(W, v->name, only, "read", nc_read_all(p, back));
                }
#else
                note(W, v->name, only, "built without netCDF");
#endif
            }
            else if (which <= 2) {
                const char *p = spath("w2-%s-%s.zarr", v->name, only);
                emit(W, v->name, only, "write",
                     core_write(NULL, p, v, 2, shape, chunks, ZARR_FLOAT, which == 1 ? p1 : p2, data));
                emit(W, v->name, only, "read", core_read(NULL, p, which == 1 ? p1 : p2, back));
            }
            else {
                const char *p =
                    which == 3 ? spath("w2-%s-vol.zarr", v->name) : spath("w2-%s-hdf5.h5", v->name);
                hid_t fapl = which == 3 ? vol_fapl(2) : H5Pcopy(H5P_FILE_ACCESS_DEFAULT);
                emit(W, v->name, only, "write",
                     h5_write(p, fapl, v, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, 2, hd, hc, data, NULL));
                emit(W, v->name, only, "read", h5_read(p, fapl, H5T_NATIVE_FLOAT, back, -1));
                H5Pclose(fapl);
            }
            continue;
        }
        enc_t = encode_chunks(v, 2, shape, chunks, ZARR_FLOAT, (const uint8_t *)data, &cs, &dec_t);
        {
            uint64_t stored = 0;
            for (size_t i = 0; i < cs.n; i++)
                stored += cs.len[i];
            printf("M\tw2-%s-ratio\t%.3f\n", v->name, (double)nbytes / (double)stored);
        }
        emit(W, v->name, "codec-1t", "write", enc_t);
        emit(W, v->name, "codec-1t", "read", dec_t);
        for (int k = 0; k < 6; k++) {
            int which = (k + g_rep) % 6;
            settle(true);
            if (which == 5) { /* NCZarr: nc_create..nc_close with one nc_put_var_float, then the read */
#ifdef H5ZARR_BENCH_NETCDF
                const char *p = spath("w2-%s-nczarr.zarr", v->name);
                char        why[256];
                double      t = nc_write_w2(p, v, data, why, sizeof why);
                if (t < 0)
                    note(W, v->name, "nczarr", why);
                else {
                    emit(W, v->name, "nczarr", "write", t);
                    emit(W, v->name, "nczarr", "read", nc_read_all(p, back));
                    check_same(data, back, nbytes, "nczarr");
                    memset(back, 0, nbytes);
                }
#else
                note(W, v->name, "nczarr", "built without netCDF");
#endif
            }
            else if (which == 0) {
                double fw = floor_write(spath("w2-%s-floor", v->name), &cs, W2_N / W2_C, FLOOR_PLAIN);
                double fr =
                    floor_read(spath("w2-%s-floor", v->name), cs.n, W2_N / W2_C, W2_C * W2_C * 4, NULL);
                emit(W, v->name, "floor-1t", "write", fw + enc_t);
                emit(W, v->name, "floor-1t", "read", fr + dec_t);
                emit(W, v->name, "floor-2t", "write", fw + enc_t / 2);
                emit(W, v->name, "floor-2t", "read", fr + dec_t / 2);
            }
            else if (which == 1 || which == 2) {
                zarr_pool  *pool = which == 1 ? p1 : p2;
                const char *impl = which == 1 ? "core-1t" : "core-2t";
                const char *p    = spath("w2-%s-%s.zarr", v->name, impl);
                emit(W, v->name, impl, "write",
                     core_write(NULL, p, v, 2, shape, chunks, ZARR_FLOAT, pool, data));
                emit(W, v->name, impl, "read", core_read(NULL, p, pool, back));
                check_same(data, back, nbytes, impl);
                memset(back, 0, nbytes);
            }
            else {
                bool        vol  = which == 3;
                const char *impl = vol ? "vol" : "hdf5";
                const char *p    = vol ? spath("w2-%s-vol.zarr", v->name) : spath("w2-%s-hdf5.h5", v->name);
                hid_t       fapl = vol ? vol_fapl(2) : H5Pcopy(H5P_FILE_ACCESS_DEFAULT);
                double      t = h5_write(p, fapl, v, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, 2, hd, hc, data, NULL);
                if (t < 0)
                    note(W, v->name, impl,
                         vol ? "the VOL does not map this HDF5 filter yet (vol/filter.c): core API rows "
                               "stand in"
                             : "native HDF5 lacks this filter (HDF5_PLUGIN_PATH?)");
                else {
                    emit(W, v->name, impl, "write", t);
                    emit(W, v->name, impl, "read", h5_read(p, fapl, H5T_NATIVE_FLOAT, back, -1));
                    check_same(data, back, nbytes, impl);
                    memset(back, 0, nbytes);
                }
                H5Pclose(fapl);
            }
        }
        if (v->nc_kind == 2) /* zstd-1: the same write from a netCDF program, three ways (issue 12) */
            run_w2_netcdf();
        append_loop(v, v->name, false);
        chunkset_free(&cs);
    }
    if (!only)
        append_loop(NULL, "raw", true);
    if (!only || !strcmp(only, "shard"))
        run_w2_sharded(data, back);
    zarr_pool_free(p1);
    zarr_pool_free(p2);
    free(data);
    free(back);
}

/* ---- durability (issue 14) ------------------------------------------------------------------------ */

/* W1 (raw-v2 and zstd-v2: 1000 chunks of 4 KB in one directory) and W2 (zstd1: 256 chunks of 1 MiB)
 * written whole through the core API and the VOL, each with durable=1 (ZARR_STORE_DURABLE / connector
 * info "durable=1": every chunk file fdatasync'ed, each changed directory fsync'ed once per call) and
 * with durable=0, the four interleaved in an order rotated per repetition, on the directory store.
 * Rows: workload "durable", variants "W1-<v>-dir" / "W2-<v>", impls core, core-durable, vol,
 * vol-durable, op "write" (create to close, as everywhere). Every store is read back (untimed) and
 * compared. settle() before each write: a durable write's journal commits must not pay for the dirty
 * pages of the writes before it. */
static void
durable_rows(const char *w, const variant *v, int ndim, const uint64_t *shape, const uint64_t *chunks,
             zarr_kind kind, hid_t mtype, hid_t ftype, const void *data, void *back, size_t nbytes, bool drop)
{
    hsize_t hd[2], hc[2];
    char    vd[64];
    for (int d = 0; d < ndim; d++)
        hd[d] = shape[d], hc[d] = chunks[d];
    snprintf(vd, sizeof vd, "%s-%s%s", w, v->name, !strcmp(w, "W1") ? "-dir" : "");
    for (int k = 0; k < 4; k++) {
        int         which   = (k + g_rep) % 4;
        bool        durable = which & 1, vol = which >= 2;
        const char *impl = vol ? (durable ? "vol-durable" : "vol") : (durable ? "core-durable" : "core");
        const char *p    = spath("dur-%s-%s-%s.zarr", w, v->name, impl);
        double      t;
        settle(drop);
        if (vol) {
            hid_t fapl = durable ? vol_fapl_opts(v->zarr_format, "durable=1") : vol_fapl(v->zarr_format);
            t          = h5_write(p, fapl, v, mtype, ftype, ndim, hd, hc, data, NULL);
            H5Pclose(fapl);
            if (t < 0) {
                note("durable", vd, impl, "the VOL does not map this HDF5 filter");
                continue;
            }
        }
        else {
            g_store_flags = durable ? ZARR_STORE_DURABLE : 0;
            t             = core_write(NULL, p, v, ndim, shape, chunks, kind, NULL, data);
            g_store_flags = 0;
        }
        emit("durable", vd, impl, "write", t);
        memset(back, 0, nbytes);
        core_read(NULL, p, NULL, back); /* the VOL stores hold "a" too: the core reads both kinds */
        check_same(data, back, nbytes, impl);
    }
}

static void
run_durable(void)
{
    uint64_t s1[1] = {W1_N}, c1[1] = {W1_CHUNK};
    uint64_t s2[2] = {W2_N, W2_N}, c2[2] = {W2_C, W2_C};
    size_t   n1 = W1_N * sizeof(int), n2 = (size_t)W2_N * W2_N * 4;
    int     *d1 = malloc(n1), *b1 = malloc(n1);
    float   *d2, *b2              = malloc(n2);

    CHECK(d1 && b1 && b2, "oom");
    for (int i = 0; i < W1_N; i++)
        d1[i] = i;
    printf("M\tthreads\t%d\n", zarr_pool_nthreads(zarr_pool_default()));
    for (size_t vi = 0; vi < 2; vi++) /* raw-v2, zstd-v2 */
        durable_rows("W1", &W1_VARIANTS[vi], 1, s1, c1, ZARR_INT, H5T_NATIVE_INT32, H5T_STD_I32LE, d1, b1, n1,
                     false);
    free(d1);
    free(b1);
    d2 = smooth_field(W2_N, W2_N, 0.0f);
    durable_rows("W2", &W2_VARIANTS[0], 2, s2, c2, ZARR_FLOAT, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, d2, b2, n2,
                 true);
    free(d2);
    free(b2);
}

/* ---- W3: partial writes (read-modify-write) and strided reads ------------------------------------ */

#define W3_N    1024
#define W3_C    128
#define W3_B    20  /* box edge */
#define W3_NBOX 400 /* boxes per repetition */

static void
box_pos(int k, uint64_t *r, uint64_t *c)
{
    /* Every box straddles a chunk corner, so each write is a read-modify-write of 4 chunks. */
    *r = (uint64_t)(W3_C * (1 + k % 7) - 10 + (k * 13) % 5);
    *c = (uint64_t)(W3_C * (1 + (k / 7) % 7) - 10 + (k * 7) % 5);
}

/* ---- W3's floor (issue 31): what a whole-chunk cache with atomic chunk files must do ----------------
 * A plain C loop over the chunks the boxes touch (64), on the engine's thread count (thread t takes
 * touched chunks t, t + nt, ...): phase 1 loads each chunk file into its own new 64 KiB buffer (malloc,
 * open + pread + close: the fresh memory a cache of decoded chunks has to fill); the 400 boxes are then
 * copied into those buffers (one thread); phase 2 replaces each chunk file atomically the directory
 * store's way for an existing key (O_TMPFILE + write, linkat under a temporary name, rename over the
 * key). Timed from the first load to the last rename, like the "rmw" rows (writes + flush). */
typedef struct {
    const char *dir;
    int         t, nt, phase;
    uint8_t   **bufs; /* per chunk of the 8 x 8 grid: its buffer (NULL: not touched) */
} w3_floor_arg;

static void *
w3_floor_worker(void *p)
{
    w3_floor_arg *a  = p;
    size_t        cb = (size_t)W3_C * W3_C * 4, k = 0;
    char          path[4096], tmp[4096];
    for (int i = 0; i < (W3_N / W3_C) * (W3_N / W3_C); i++) {
        if (!a->bufs[i] || k++ % (size_t)a->nt != (size_t)a->t)
            continue;
        snprintf(path, sizeof path, "%s/%d.%d", a->dir, i / (W3_N / W3_C), i % (W3_N / W3_C));
        if (a->phase == 1) {
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            CHECK(fd >= 0 && pread(fd, a->bufs[i], cb, 0) == (ssize_t)cb, "w3 floor read");
            close(fd);
            continue;
        }
        int fd = open(a->dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        CHECK(fd >= 0 && write(fd, a->bufs[i], cb) == (ssize_t)cb, "w3 floor write");
        snprintf(tmp, sizeof tmp, "%s/.tmp.%d", a->dir, i);
        CHECK(linkat(fd, "", AT_FDCWD, tmp, AT_EMPTY_PATH) == 0 && rename(tmp, path) == 0, "w3 floor link");
        close(fd);
    }
    return NULL;
}

static double
w3_floor(const char *dir, const int32_t *all, const int32_t *box, int nt)
{
    enum { G = W3_N / W3_C };
    uint8_t     *bufs[G * G] = {0};
    size_t       cb          = (size_t)W3_C * W3_C * 4;
    int32_t     *c           = malloc(cb);
    pthread_t    th[16];
    w3_floor_arg args[16];
    char         path[4096];
    double       t0;
    bool         touched[G * G] = {0};
    CHECK(c && mkdir(dir, 0777) == 0, "w3 floor setup");
    nt = nt < 1 ? 1 : nt > 16 ? 16 : nt;
    for (int b = 0; b < W3_NBOX; b++) {
        uint64_t r0, c0;
        box_pos(b, &r0, &c0);
        for (uint64_t r = r0 / W3_C; r <= (r0 + W3_B - 1) / W3_C; r++)
            for (uint64_t q = c0 / W3_C; q <= (c0 + W3_B - 1) / W3_C; q++)
                touched[r * G + q] = true;
    }
    for (int i = 0; i < G * G; i++) { /* the stored array (untimed), every chunk as the other rows' */
        for (int r = 0; r < W3_C; r++)
            memcpy(c + r * W3_C, all + ((size_t)(i / G) * W3_C + r) * W3_N + (size_t)(i % G) * W3_C,
                   W3_C * 4);
        snprintf(path, sizeof path, "%s/%d.%d", dir, i / G, i % G);
        write_file(path, c, cb);
    }
    free(c);
    /* no settle here: the other rows' timed sections also follow their untimed initial write at once */
    t0 = now();
    for (int i = 0; i < G * G; i++)
        if (touched[i])
            CHECK((bufs[i] = malloc(cb)) != NULL, "oom");
    for (int phase = 1; phase <= 2; phase++) {
        for (int t = 0; t < nt; t++) {
            args[t] = (w3_floor_arg){dir, t, nt, phase, bufs};
            if (t > 0)
                CHECK(pthread_create(&th[t], NULL, w3_floor_worker, &args[t]) == 0, "pthread_create");
        }
        w3_floor_worker(&args[0]);
        for (int t = 1; t < nt; t++)
            pthread_join(th[t], NULL);
        for (int b = 0; phase == 1 && b < W3_NBOX; b++) { /* the boxes into the loaded chunks */
            uint64_t r0, c0;
            box_pos(b, &r0, &c0);
            for (uint64_t r = r0; r < r0 + W3_B; r++)
                for (uint64_t q = c0; q < c0 + W3_B; q++)
                    ((int32_t *)bufs[(r / W3_C) * G + q / W3_C])[(r % W3_C) * W3_C + q % W3_C] =
                        box[(r - r0) * W3_B + (q - c0)];
        }
    }
    t0 = now() - t0;
    if (getenv("H5ZARR_BENCH_W3_ONLY"))
        fprintf(stderr, "W3 floor: %.2f ms\n", t0 * 1e3);
    for (int i = 0; i < G * G; i++)
        free(bufs[i]);
    return t0;
}

#ifdef H5ZARR_BENCH_NETCDF
/* W3 through NCZarr, one store with one variable "a" as the HDF5 rows use one file with one dataset:
 * the whole initial write and the nc_open are untimed; "rmw" times the box writes (nc_put_vara_int)
 * and the nc_sync that writes NCZarr's dirty cached chunks to the store (the HDF5 rows' H5Dflush);
 * "boxread" the box reads (nc_get_vara_int); "strided" one nc_get_vars_int with the HDF5 row's
 * start, stride and count. The strided result is checked against the expected array (untimed). */
static void
nc_w3(const char *W, const char *V, const int32_t *all, const int32_t *box, int32_t *boxback, int32_t *back)
{
    const char *p       = spath("w3-nczarr.zarr");
    size_t      dims[2] = {W3_N, W3_N}, chunks[2] = {W3_C, W3_C}, cnt[2] = {W3_B, W3_B};
    size_t      sst[2] = {1, 1}, scnt[2] = {341, 341};
    ptrdiff_t   sstr[2] = {3, 3};
    variant     raw     = {"raw-v2", 2, NULL, NULL, 0, {0}, 0, 0};
    char        url[4200], why[256];
    int         ncid, var;
    int32_t    *want;
    double      t0;

    CHECK(nc_create_a(p, &raw, NC_INT, 2, dims, chunks, &ncid, &var, why, sizeof why) == NC_NOERR,
          "w3 nczarr init");
    NCOK(nc_put_var_int(ncid, var, all));
    NCOK(nc_close(ncid));
    nc_url(p, url, sizeof url);
    NCOK(nc_open(url, NC_WRITE, &ncid));
    NCOK(nc_inq_varid(ncid, "a", &var));
    t0 = now();
    for (int b = 0; b < W3_NBOX; b++) {
        uint64_t r0, c0;
        box_pos(b, &r0, &c0);
        size_t st[2] = {(size_t)r0, (size_t)c0};
        NCOK(nc_put_vara_int(ncid, var, st, cnt, box));
    }
    NCOK(nc_sync(ncid));
    emit(W, V, "nczarr", "rmw", now() - t0);
    t0 = now();
    for (int b = 0; b < W3_NBOX; b++) {
        uint64_t r0, c0;
        box_pos(b, &r0, &c0);
        size_t st[2] = {(size_t)r0, (size_t)c0};
        NCOK(nc_get_vara_int(ncid, var, st, cnt, boxback));
    }
    emit(W, V, "nczarr", "boxread", now() - t0);
    check_same(box, boxback, sizeof(int32_t) * W3_B * W3_B, "nczarr box");
    memset(back, 0, sizeof(int32_t) * scnt[0] * scnt[1]);
    t0 = now();
    NCOK(nc_get_vars_int(ncid, var, sst, scnt, sstr, back));
    emit(W, V, "nczarr", "strided", now() - t0);
    NCOK(nc_close(ncid));

    /* expected: the initial array with every box written over it in order, sampled at the stride */
    want = malloc(sizeof(int32_t) * W3_N * W3_N);
    CHECK(want, "oom");
    memcpy(want, all, sizeof(int32_t) * W3_N * W3_N);
    for (int b = 0; b < W3_NBOX; b++) {
        uint64_t r0, c0;
        box_pos(b, &r0, &c0);
        for (int i = 0; i < W3_B; i++)
            memcpy(want + (r0 + (uint64_t)i) * W3_N + c0, box + i * W3_B, sizeof(int32_t) * W3_B);
    }
    for (size_t i = 0; i < scnt[0]; i++)
        for (size_t j = 0; j < scnt[1]; j++)
            want[i * scnt[1] + j] = want[(sst[0] + i * 3) * W3_N + sst[1] + j * 3]; /* source >= dest */
    check_same(want, back, sizeof(int32_t) * scnt[0] * scnt[1], "nczarr strided");
    free(want);
}
#endif

/* Minor page faults of this process so far (H5ZARR_BENCH_W3_ONLY prints them per timed section). */
static long
minflt(void)
{
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) ? 0 : u.ru_minflt;
}

/* CPU time of this process so far, every thread, user + system, in ms (H5ZARR_BENCH_W3_ONLY prints it per
 * rmw section: less sensitive than wall time to other programs on a shared machine). */
static double
cpu_ms(void)
{
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u))
        return 0;
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

static void
run_w3(void)
{
    const char *W   = "W3";
    const char *V   = "int32-1024sq-c128";
    size_t      n   = (size_t)W3_N * W3_N;
    int32_t    *all = malloc(n * 4), *back = malloc(n * 4);
    int32_t     box[W3_B * W3_B], boxback[W3_B * W3_B];
    uint64_t    shape[2] = {W3_N, W3_N}, chunks[2] = {W3_C, W3_C};
    hsize_t     hd[2] = {W3_N, W3_N}, hc[2] = {W3_C, W3_C};
    variant     raw    = {"raw-v2", 2, NULL, NULL, 0, {0}, 0, 0};
    uint64_t    sst[2] = {1, 1}, sstr[2] = {3, 3}, scnt[2] = {341, 341};

    CHECK(all && back, "oom");
    for (size_t i = 0; i < n; i++)
        all[i] = (int32_t)i;
    for (int i = 0; i < W3_B * W3_B; i++)
        box[i] = -i;
    /* H5ZARR_BENCH_W3_ONLY=core|vol|hdf5|nczarr|floor: that implementation alone (to profile it; each
     * rmw section then also prints its minor page faults on stderr) */
    const char *only = getenv("H5ZARR_BENCH_W3_ONLY"), *names[5] = {"core", "vol", "hdf5", "nczarr", "floor"};
    for (int k = 0; k < 5; k++) {
        int which = (k + g_rep) % 5;
        if (only && strcmp(only, names[which]))
            continue;
        settle(false);
        if (which == 4) { /* the floor: see w3_floor (its setup is in the CPU time, not in the rmw time) */
            double c0 = cpu_ms();
            emit(W, V, "floor-par-link", "rmw",
                 w3_floor(spath("w3-floor"), all, box, zarr_pool_nthreads(zarr_pool_default())));
            if (only)
                fprintf(stderr, "W3 floor rmw: %.2f ms CPU with its setup\n", cpu_ms() - c0);
        }
        else if (which == 3) {
#ifdef H5ZARR_BENCH_NETCDF
            nc_w3(W, V, all, box, boxback, back);
#else
            note(W, V, "nczarr", "built without netCDF");
#endif
        }
        else if (which == 0) {
            const char *p = spath("w3-core.zarr");
            zarr_store *s;
            zarr_array *a;
            zarr_region r;
            double      t0;
            core_write(NULL, p, &raw, 2, shape, chunks, ZARR_INT, NULL, all);
            ZOK(zarr_store_open_dir(p, ZARR_STORE_RDWR, &s));
            ZOK(zarr_array_open(s, "a", &a));
            long   f0 = minflt();
            double c0 = cpu_ms();
            t0        = now();
            for (int b = 0; b < W3_NBOX; b++) {
                uint64_t st[2], cnt[2] = {W3_B, W3_B};
                box_pos(b, &st[0], &st[1]);
                zarr_region_box(2, st, cnt, &r);
                ZOK(zarr_array_write(a, &r, box));
            }
            /* The chunk cache is write-back: the timed section ends with the data in the store, like
             * the H5Dflush of the HDF5 rows. */
            double tw = now();
            long   fw = minflt();
            ZOK(zarr_array_flush(a));
            if (only)
                fprintf(stderr, "W3 core: writes %.2f ms (%ld faults), flush %.2f ms (%ld faults)\n",
                        (tw - t0) * 1e3, fw - f0, (now() - tw) * 1e3, minflt() - fw);
            emit(W, V, "core", "rmw", now() - t0);
            if (only)
                fprintf(stderr, "W3 core rmw: %ld minor page faults, %.2f ms CPU\n", minflt() - f0,
                        cpu_ms() - c0);
            t0 = now();
            for (int b = 0; b < W3_NBOX; b++) {
                uint64_t st[2], cnt[2] = {W3_B, W3_B};
                box_pos(b, &st[0], &st[1]);
                zarr_region_box(2, st, cnt, &r);
                ZOK(zarr_array_read(a, &r, boxback));
            }
            emit(W, V, "core", "boxread", now() - t0);
            check_same(box, boxback, sizeof box, "core box");
            memset(&r, 0, sizeof r);
            for (int d = 0; d < 2; d++) {
                r.start[d]  = sst[d];
                r.stride[d] = sstr[d];
                r.count[d]  = scnt[d];
                r.block[d]  = 1;
            }
            t0 = now();
            ZOK(zarr_array_read(a, &r, back));
            emit(W, V, "core", "strided", now() - t0);
            CHECK(back[0] == all[W3_N + 1] || back[0] <= 0, "core strided value");
            zarr_array_close(a);
            zarr_store_close(s);
        }
        else {
            bool        vol  = which == 1;
            const char *impl = vol ? "vol" : "hdf5";
            const char *p    = vol ? spath("w3-vol.zarr") : spath("w3-hdf5.h5");
            hid_t       fapl = vol ? vol_fapl(2) : H5Pcopy(H5P_FILE_ACCESS_DEFAULT), f, d, fs, ms;
            hsize_t cnt[2] = {W3_B, W3_B}, st[2], hsst[2] = {1, 1}, hsstr[2] = {3, 3}, hscnt[2] = {341, 341};
            double  t0;
            CHECK(h5_write(p, fapl, &raw, H5T_NATIVE_INT32, H5T_STD_I32LE, 2, hd, hc, all, NULL) >= 0,
                  "w3 init");
            f = H5Fopen(p, H5F_ACC_RDWR, fapl);
            d = H5Dopen2(f, "a", H5P_DEFAULT);
            CHECK(f >= 0 && d >= 0, "w3 open");
            ms          = H5Screate_simple(2, cnt, NULL);
            fs          = H5Dget_space(d);
            long   f0   = minflt();
            double cpu0 = cpu_ms();
            t0          = now();
            for (int b = 0; b < W3_NBOX; b++) {
                uint64_t r0, c0;
                box_pos(b, &r0, &c0);
                st[0] = r0;
                st[1] = c0;
                H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, cnt, NULL);
                CHECK(H5Dwrite(d, H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, box) >= 0, "w3 write");
            }
            double tw = now();
            H5Dflush(d);
            if (only)
                fprintf(stderr, "W3 %s: writes %.2f ms, flush %.2f ms\n", impl, (tw - t0) * 1e3,
                        (now() - tw) * 1e3);
            emit(W, V, impl, "rmw", now() - t0);
            if (only)
                fprintf(stderr, "W3 %s rmw: %ld minor page faults, %.2f ms CPU\n", impl, minflt() - f0,
                        cpu_ms() - cpu0);
            t0 = now();
            for (int b = 0; b < W3_NBOX; b++) {
                uint64_t r0, c0;
                box_pos(b, &r0, &c0);
                st[0] = r0;
                st[1] = c0;
                H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, cnt, NULL);
                CHECK(H5Dread(d, H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, boxback) >= 0, "w3 read");
            }
            emit(W, V, impl, "boxread", now() - t0);
            check_same(box, boxback, sizeof box, impl);
            H5Sclose(ms);
            ms = H5Screate_simple(2, hscnt, NULL);
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, hsst, hsstr, hscnt, NULL);
            t0 = now();
            CHECK(H5Dread(d, H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, back) >= 0, "w3 strided");
            emit(W, V, impl, "strided", now() - t0);
            H5Sclose(ms);
            H5Sclose(fs);
            H5Dclose(d);
            H5Fclose(f);
            H5Pclose(fapl);
        }
    }
    free(all);
    free(back);
}

/* ---- W4: metadata --------------------------------------------------------------------------------- */

#ifdef H5ZARR_BENCH_NETCDF
/* W4 through NCZarr. "create": nc_create to nc_close of the store with one dimension "n" (10) in the
 * root that every variable uses, groups g00..g99 (nc_def_grp), in each variables d0..d9 of NC_INT over
 * "n" (never written) with int attributes a0..a9 = g*100+ds*10+at (nc_put_att_int, one value).
 * "open-visit": nc_open read-only to nc_close, walking every group (nc_inq_grps), its attributes
 * (nc_inq_natts, nc_inq_attname, nc_get_att_int), every variable (nc_inq_varids) and its attributes
 * (nc_inq_varnatts, nc_inq_attname, nc_get_att_int), as H5Ovisit3 and H5Aiterate2 + H5Aread do. */
static void
nc_w4(const char *W, const char *V)
{
    const char *p = spath("w4-nczarr.zarr");
    char        url[4200], name[NC_MAX_NAME + 1];
    int         ncid, dim, ngrp, grps[128], nvar, vars[16], natts, val;
    long        groups = 0, variables = 0, attrs = 0, sum = 0;
    double      t0;

    nc_url(p, url, sizeof url);
    t0 = now();
    NCOK(nc_create(url, NC_CLOBBER | NC_NETCDF4, &ncid));
    NCOK(nc_def_dim(ncid, "n", 10, &dim));
    for (int g = 0; g < 100; g++) {
        int gid;
        snprintf(name, sizeof name, "g%02d", g);
        NCOK(nc_def_grp(ncid, name, &gid));
        for (int ds = 0; ds < 10; ds++) {
            int var;
            snprintf(name, sizeof name, "d%d", ds);
            NCOK(nc_def_var(gid, name, NC_INT, 1, &dim, &var));
            for (int at = 0; at < 10; at++) {
                val = g * 100 + ds * 10 + at;
                snprintf(name, sizeof name, "a%d", at);
                NCOK(nc_put_att_int(gid, var, name, NC_INT, 1, &val));
            }
        }
    }
    NCOK(nc_close(ncid));
    emit(W, V, "nczarr", "create", now() - t0);
    if (getenv("H5ZARR_BENCH_W4_CREATE_ONLY"))
        return;

    t0 = now();
    NCOK(nc_open(url, NC_NOWRITE, &ncid));
    NCOK(nc_inq_grps(ncid, &ngrp, NULL));
    CHECK(ngrp == 100, "w4 nczarr group count");
    NCOK(nc_inq_grps(ncid, NULL, grps));
    for (int g = 0; g < ngrp; g++) {
        groups++;
        NCOK(nc_inq_natts(grps[g], &natts));
        for (int at = 0; at < natts; at++) {
            NCOK(nc_inq_attname(grps[g], NC_GLOBAL, at, name));
            NCOK(nc_get_att_int(grps[g], NC_GLOBAL, name, &val));
            attrs++;
            sum += val;
        }
        NCOK(nc_inq_varids(grps[g], &nvar, NULL));
        CHECK(nvar <= 16, "w4 nczarr variable count");
        NCOK(nc_inq_varids(grps[g], NULL, vars));
        for (int ds = 0; ds < nvar; ds++) {
            variables++;
            NCOK(nc_inq_varnatts(grps[g], vars[ds], &natts));
            for (int at = 0; at < natts; at++) {
                NCOK(nc_inq_attname(grps[g], vars[ds], at, name));
                NCOK(nc_get_att_int(grps[g], vars[ds], name, &val));
                attrs++;
                sum += val;
            }
        }
    }
    NCOK(nc_close(ncid));
    emit(W, V, "nczarr", "open-visit", now() - t0);
    /* every value 0..9999 once; then a few by name (untimed) */
    CHECK(groups == 100 && variables == 1000 && attrs == 10000 && sum == 9999L * 10000 / 2,
          "w4 nczarr visit counts");
    NCOK(nc_open(url, NC_NOWRITE, &ncid));
    for (int k = 0; k < 3; k++) {
        static const int spot[3][3] = {{0, 0, 0}, {37, 4, 6}, {99, 9, 9}}; /* group, dataset, attribute */
        int              g = spot[k][0], ds = spot[k][1], at = spot[k][2], gid, var;
        snprintf(name, sizeof name, "g%02d", g);
        NCOK(nc_inq_grp_ncid(ncid, name, &gid));
        snprintf(name, sizeof name, "d%d", ds);
        NCOK(nc_inq_varid(gid, name, &var));
        snprintf(name, sizeof name, "a%d", at);
        NCOK(nc_get_att_int(gid, var, name, &val));
        CHECK(val == g * 100 + ds * 10 + at, "w4 nczarr attribute value");
    }
    NCOK(nc_close(ncid));
}
#endif

static void
run_w4(void)
{
    const char *W = "W4", *V = "100g-x-10d-x-10a";
    /* "vol" writes zarr v2 (NCZarr's format: the same stores), "vol-v3" zarr v3 (one zarr.json per node
     * instead of .zgroup/.zarray + .zattrs: half the files) */
    for (int k = 0; k < 4; k++) {
        int         which = (k + g_rep) % 4;
        bool        vol   = which == 0 || which == 3;
        const char *impl  = which == 0 ? "vol" : which == 1 ? "hdf5" : which == 2 ? "nczarr" : "vol-v3";
        const char *only  = getenv("H5ZARR_BENCH_W4_ONLY"); /* "vol", "vol-v3", "hdf5" or "nczarr" */
        if (only && strcmp(only, impl) != 0)
            continue;
        settle(false);
        if (which == 2) {
#ifdef H5ZARR_BENCH_NETCDF
            nc_w4(W, V);
#else
            note(W, V, "nczarr", "built without netCDF");
#endif
            continue;
        }
        const char *p = which == 3 ? spath("w4-vol3.zarr") : vol ? spath("w4-vol.zarr") : spath("w4-hdf5.h5");
        hid_t       fapl = vol ? vol_fapl(which == 3 ? 3 : 2) : H5Pcopy(H5P_FILE_ACCESS_DEFAULT);
        hid_t       f;
        const char *err;
        visit_acc   acc = {0, 0};
        double      t0  = now();
        f               = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
        CHECK(f >= 0, "w4 create");
        err = w4_populate(f);
        CHECK(!err, err ? err : "w4");
        H5Fclose(f);
        emit(W, V, impl, "create", now() - t0);
        if (getenv("H5ZARR_BENCH_W4_CREATE_ONLY")) { /* profile the create phase alone */
            H5Pclose(fapl);
            continue;
        }
        t0 = now();
        f  = H5Fopen(p, H5F_ACC_RDONLY, fapl);
        CHECK(f >= 0, "w4 open");
        CHECK(H5Ovisit3(f, H5_INDEX_NAME, H5_ITER_NATIVE, visit_cb, &acc, H5O_INFO_BASIC) >= 0, "w4 visit");
        H5Fclose(f);
        emit(W, V, impl, "open-visit", now() - t0);
        CHECK(acc.objects == 1 + 100 + 1000 && acc.attrs == 10000, "w4 visit counts");
        H5Pclose(fapl);
    }
}

/* ---- peak RSS of a whole-array write ------------------------------------------------------------- */

/* ---- chunks1m (issue 13's scale rows): a 2-D array of 1,000,000 chunks through H5Dwrite / H5Dread ---- */
#define SC_N           4000 /* 4000 x 4000 int32 = 64 MB */
#define SC_C           4    /* chunks of 4 x 4 int32 (64 B): 1000 x 1000 = 1,000,000 chunks */
#define SC_SHARD_BYTES "shard_bytes=1MiB"
/* With SC_SHARD_BYTES the policy allows 16384 chunks per shard: all 1000 along dim 0, then 16 along
 * dim 1 (spread over 63 shards of 16 chunks, the last 8): shards of 4000 x 64 elements (1 MB). */

static long long g_nfiles, g_nbytes;
static int
count_file(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)p;
    (void)f;
    if (flag == FTW_F) {
        g_nfiles++;
        g_nbytes += (long long)st->st_size;
    }
    return 0;
}

/* The child: one write ("<mode>-write": create .. H5Dwrite of the whole array .. H5Fclose) or read
 * ("<mode>-read": open .. H5Dread .. close, values checked) of the store of `mode` (sharded or
 * unsharded). Prints the R line; the parent measures its peak RSS. */
static long maxrss_kib(void);

/* The child's peak RSS so far, just before its one H5Dwrite/H5Dread (libraries, HDF5's and the
 * connector's state, the data buffer): the line "M chunks1m-<what>-before maxrss_kib=..". */
static void
chunks1m_before(const char *what)
{
    printf("M\tchunks1m-%s-before\tmaxrss_kib=%ld\n", what, maxrss_kib());
    fflush(stdout);
}

static int
run_chunks1m_child(const char *what)
{
    bool        sharded = !strncmp(what, "sharded-", 8);
    const char *op      = strchr(what, '-') ? strchr(what, '-') + 1 : "", *V;
    const char *p       = spath("chunks1m-%s.zarr", sharded ? "sharded" : "unsharded");
    size_t      n       = (size_t)SC_N * SC_N;
    int        *buf     = malloc(n * sizeof *buf);
    hsize_t     dims[2] = {SC_N, SC_N}, ch[2] = {SC_C, SC_C};
    hid_t       fapl = sharded ? vol_fapl_opts(3, SC_SHARD_BYTES) : vol_fapl(3), f, d, s, dcpl;
    double      t0;
    CHECK(buf, "oom");
    V = sharded ? "1m-chunks-sharded" : "1m-chunks-unsharded";
    if (!strcmp(op, "write")) {
        for (size_t i = 0; i < n; i++)
            buf[i] = (int)i;
        t0 = now();
        CHECK((f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0, "chunks1m H5Fcreate");
        CHECK((s = H5Screate_simple(2, dims, NULL)) >= 0 && (dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0 &&
                  H5Pset_chunk(dcpl, 2, ch) >= 0,
              "chunks1m dcpl");
        CHECK((d = H5Dcreate2(f, "a", H5T_STD_I32LE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0,
              "chunks1m H5Dcreate");
        chunks1m_before(what);
        CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "chunks1m H5Dwrite");
        H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(s);
        CHECK(H5Fclose(f) >= 0, "chunks1m H5Fclose");
        emit("1M-CHUNKS", V, "vol", "write", now() - t0);
        CHECK(store_is_sharded(p) == sharded, "chunks1m: the store is not what the mode says");
    }
    else if (!strcmp(op, "read")) {
        memset(buf, 0, n * sizeof *buf); /* touched: the read fills resident pages */
        t0 = now();
        CHECK((f = H5Fopen(p, H5F_ACC_RDONLY, fapl)) >= 0, "chunks1m H5Fopen");
        CHECK((d = H5Dopen2(f, "a", H5P_DEFAULT)) >= 0, "chunks1m H5Dopen");
        chunks1m_before(what);
        CHECK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "chunks1m H5Dread");
        H5Dclose(d);
        CHECK(H5Fclose(f) >= 0, "chunks1m H5Fclose");
        emit("1M-CHUNKS", V, "vol", "read", now() - t0);
        for (size_t i = 0; i < n; i++)
            CHECK(buf[i] == (int)i, "chunks1m: read back a wrong value");
    }
    else
        die("chunks1m-child: want sharded|unsharded-write|read");
    H5Pclose(fapl);
    free(buf);
    return 0;
}

/* The parent: for each mode, the write then the read, each in a child process (/proc/self/exe chunks1m-child)
 * whose peak RSS (wait4's ru_maxrss) is printed as "M chunks1m-<mode>-<op> maxrss_kib=.. data_bytes=..".
 * `which`: sharded, unsharded or all. The unsharded store is 1,000,000 files (about 4 GB of blocks and
 * a few minutes here): "all" runs it only with H5ZARR_BENCH_1M_UNSHARDED=1. */
static void
run_chunks1m(const char *which)
{
    static const char *modes[2] = {"sharded", "unsharded"};
    for (int m = 0; m < 2; m++) {
        const char *mode = modes[m];
        if (strcmp(which, mode) && strcmp(which, "all"))
            continue;
        if (m == 1 && !strcmp(which, "all") && !getenv("H5ZARR_BENCH_1M_UNSHARDED")) {
            note("1M-CHUNKS", "1m-chunks-unsharded", "vol",
                 "opt-in (H5ZARR_BENCH_1M_UNSHARDED=1): 1,000,000 chunk files take minutes to write here");
            continue;
        }
        for (int o = 0; o < 2; o++) {
            const char   *op = o ? "read" : "write";
            char          what[64];
            char         *argv[5] = {"h5zarr_bench", "chunks1m-child", (char *)g_scratch, what, NULL};
            extern char **environ;
            struct rusage ru;
            pid_t         pid;
            int           status;
            snprintf(what, sizeof what, "%s-%s", mode, op);
            settle(false);
            fflush(stdout);
            fflush(stderr);
            CHECK(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ) == 0, "posix_spawn");
            CHECK(wait4(pid, &status, 0, &ru) == pid, "wait4");
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "h5zarr_bench: the chunks1m child (%s) failed (status %d)\n", what, status);
                note("1M-CHUNKS", mode, "vol", "the chunks1m child failed (see run.log)");
                g_failed = 1;
                continue;
            }
            printf("M\tchunks1m-%s-%s\tmaxrss_kib=%ld data_bytes=%zu chunks=1000000 chunk_bytes=%d%s%s\n",
                   mode, op, ru.ru_maxrss, (size_t)SC_N * SC_N * 4, SC_C * SC_C * 4, m ? "" : " ",
                   m ? "" : SC_SHARD_BYTES);
        }
        g_nfiles = g_nbytes = 0;
        nftw(spath("chunks1m-%s.zarr", mode), count_file, 64, FTW_PHYS);
        printf("M\tchunks1m-%s-store\tfiles=%lld bytes=%lld\n", mode, g_nfiles, g_nbytes);
    }
    fflush(stdout);
}

static long
maxrss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void
run_rss(const char *mode)
{
    uint64_t shape[2] = {W2_N, W2_N}, chunks[2] = {W2_C, W2_C};
    hsize_t  hd[2] = {W2_N, W2_N}, hc[2] = {W2_C, W2_C};
    float   *data = smooth_field(W2_N, W2_N, 0.0f);
    long     before, after;
    int      threads = 1;

    /* Warm up the library state (pool threads, codec contexts of nothing) on a tiny array first. */
    before = maxrss_kib();
    if (strncmp(mode, "core-zstd-", 10) == 0) {
        zarr_pool *p;
        threads = atoi(mode + 10);
        ZOK(zarr_pool_new(threads, &p));
        core_write(NULL, spath("rss-%s.zarr", mode), &W2_VARIANTS[0], 2, shape, chunks, ZARR_FLOAT, p, data);
        zarr_pool_free(p);
    }
    else if (strcmp(mode, "vol-raw") == 0) {
        variant raw  = {"raw-v2", 2, NULL, NULL, 0, {0}, 0, 0};
        hid_t   fapl = vol_fapl(2);
        threads      = zarr_pool_nthreads(zarr_pool_default());
        CHECK(h5_write(spath("rss-%s.zarr", mode), fapl, &raw, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, 2, hd, hc,
                       data, NULL) >= 0,
              "rss vol write");
        H5Pclose(fapl);
    }
    else
        die("unknown rss mode");
    after = maxrss_kib();
    printf("M\trss-%s\tthreads=%d data_bytes=%zu before_kib=%ld after_kib=%ld chunk_bytes=%d\n", mode,
           threads, (size_t)W2_N * W2_N * 4, before, after, W2_C * W2_C * 4);
    free(data);
}

int
main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: h5zarr_bench w1|w2|w3|w4|durable <scratch> <rep> | rss <scratch> <mode>\n");
        return 2;
    }
    g_scratch = argv[2];
    g_rep     = atoi(argv[3]);
    if (strcmp(argv[1], "w2nc") == 0) { /* a child of run_w2_netcdf: a netCDF program, no HDF5 call */
#ifdef H5ZARR_BENCH_NETCDF
        return run_w2nc_child(argv[3]);
#else
        die("built without netCDF");
#endif
    }
    {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s", g_scratch);
        for (char *q = tmp + 1; *q; q++)
            if (*q == '/') {
                *q = '\0';
                (void)mkdir(tmp, 0777);
                *q = '/';
            }
        if (mkdir(g_scratch, 0777) != 0 && errno != EEXIST)
            die("can't create the scratch directory");
    }
    H5open();
    /* NCZarr loads every library on HDF5_PLUGIN_PATH as a filter and fails on the VOL plugin, so the
     * environment names the filter folders only and the VOL folder is added here. */
    /* netCDF 4.9.3 rewrites HDF5's plugin path list when it initialises: load the VOL now and keep it
     * registered (H5Pset_fapl_zarr then finds it by name). The folder is dropped again so that native
     * HDF5 and NCZarr use the filter plugins of HDF5_PLUGIN_PATH only, never h5zarr's own. */
    if (getenv("H5ZARR_PLUGIN_DIR"))
        H5PLprepend(getenv("H5ZARR_PLUGIN_DIR"));
    H5E_BEGIN_TRY { (void)H5VLregister_connector_by_name(H5ZARR_VOL_NAME, H5P_DEFAULT); }
    H5E_END_TRY
    if (getenv("H5ZARR_PLUGIN_DIR"))
        H5PLremove(0);
    if (strcmp(argv[1], "chunks1m") == 0)
        run_chunks1m(argv[3]);
    else if (strcmp(argv[1], "chunks1m-child") == 0)
        run_chunks1m_child(argv[3]);
    else if (strcmp(argv[1], "w1") == 0)
        run_w1();
    else if (strcmp(argv[1], "w2") == 0)
        run_w2();
    else if (strcmp(argv[1], "w3") == 0)
        run_w3();
    else if (strcmp(argv[1], "w4") == 0)
        run_w4();
    else if (strcmp(argv[1], "rss") == 0)
        run_rss(argv[3]);
    else if (strcmp(argv[1], "durable") == 0)
        run_durable();
    else
        die("unknown workload");
    H5close();
    return g_failed;
}
