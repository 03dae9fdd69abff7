/*
 * convert_data.c: the data pass of h5zarr-convert, one dataset at a time.
 *   - raw: the stored chunks of the source (H5Dchunk_iter) go over as they are into H5Dwrite_chunk: the
 *     connector maps every filter the scan lets through byte for byte (a deflate chunk is a zlib stream,
 *     numcodecs.zlib's format), so nothing is decoded or encoded here; a chunk the connector won't take
 *     raw (a filter mask skipping some filters only) goes over as values instead. From a local file a
 *     reader thread preads the next chunks at the addresses H5Dchunk_iter gives while this thread writes
 *     (no HDF5 call on it; the first chunk is checked against H5Dread_chunk); else H5Dread_chunk;
 *   - values: chunk-aligned slabs read with HDF5 (decoding) and written through the connector, whose
 *     engine encodes the slab's chunks on all its threads;
 *   - references: read as H5R_ref_t and written as references to the same paths in the store.
 * Progress is recorded in the resume record every RESUME_BYTES or RESUME_UNITS units (chunks or slabs),
 * after a flush of the store, so an interrupted run starts again after the last recorded unit.
 */
#include "convert.h"

#include "../convert_refs.h"
#include "h5zarr/h5zarr.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLAB_BYTES   ((hsize_t)64 << 20)
#define RESUME_BYTES ((hsize_t)64 << 20)
#define RESUME_UNITS 64

typedef struct chunk_list {
    cv_chunk *v;
    size_t    n, cap;
    int       rank;
} chunk_list;

static int
chunk_cb(const hsize_t *offset, unsigned mask, haddr_t addr, hsize_t size, void *op)
{
    chunk_list *c = op;
    if (c->n == c->cap) {
        size_t    cap = c->cap ? 2 * c->cap : 256;
        cv_chunk *nv  = realloc(c->v, cap * sizeof *nv);
        if (!nv)
            return -1;
        c->v   = nv;
        c->cap = cap;
    }
    cv_chunk *r = &c->v[c->n++];
    memcpy(r->off, offset, (size_t)c->rank * sizeof *offset);
    r->mask = mask;
    r->size = size;
    r->addr = addr;
    return 0;
}

int
cv_chunked_open(hid_t d, int rank, cv_chunked *cw)
{
    chunk_list c    = {NULL, 0, 0, rank};
    hid_t      dcpl = H5Dget_create_plist(d), sp = H5Dget_space(d);
    int        rc = -1;
    memset(cw, 0, sizeof *cw);
    cw->rank = rank;
    if (dcpl < 0 || sp < 0 || H5Pget_chunk(dcpl, rank, cw->chunk) < 0 ||
        H5Sget_simple_extent_dims(sp, cw->dims, NULL) < 0 || H5Dchunk_iter(d, H5P_DEFAULT, chunk_cb, &c) < 0)
        goto done;
    rc = 0;
done:
    cw->v = c.v;
    cw->n = c.n;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (sp >= 0)
        H5Sclose(sp);
    return rc;
}

void
cv_chunked_free(cv_chunked *cw)
{
    if (cw) {
        free(cw->v);
        cw->v = NULL;
        cw->n = 0;
    }
}

void
cv_chunked_region(const cv_chunked *cw, size_t c, hsize_t *count)
{
    const hsize_t *off = cw->v[c].off;
    for (int k = 0; k < cw->rank; k++)
        count[k] = off[k] + cw->chunk[k] > cw->dims[k] ? cw->dims[k] - off[k] : cw->chunk[k];
}

void
cv_spaces_close(hid_t a, hid_t b, hid_t c)
{
    hid_t v[3] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (v[i] >= 0)
            H5Sclose(v[i]);
}

int
cv_region_select(hid_t sd, hid_t dd, int rank, const hsize_t *start, const hsize_t *count, hid_t *fs,
                 hid_t *ts)
{
    *fs = H5Dget_space(sd);
    *ts = H5Dget_space(dd);
    if (*fs >= 0 && *ts >= 0 &&
        (rank <= 0 || (H5Sselect_hyperslab(*fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
                       H5Sselect_hyperslab(*ts, H5S_SELECT_SET, start, NULL, count, NULL) >= 0)))
        return 0;
    cv_spaces_close(*fs, *ts, -1);
    *fs = *ts = -1;
    return -1;
}

int
cv_copy_region(hid_t sd, hid_t dd, hid_t ft, const hsize_t *start, const hsize_t *count, int rank,
               void *scratch)
{
    hid_t fs = -1, ms = -1, ts = -1;
    int   rc = -1;
    if (cv_region_select(sd, dd, rank, start, count, &fs, &ts) < 0)
        goto done;
    ms = rank > 0 ? H5Screate_simple(rank, count, NULL) : H5Screate(H5S_SCALAR);
    if (ms < 0 || H5Dread(sd, ft, ms, fs, H5P_DEFAULT, scratch) < 0)
        goto done;
    herr_t w = H5Dwrite(dd, ft, ms, ts, H5P_DEFAULT, scratch);
    if (cv_type_varlen(ft))
        H5Treclaim(ft, ms, H5P_DEFAULT, scratch);
    rc = w < 0 ? -1 : 0;
done:
    cv_spaces_close(ms, fs, ts);
    return rc;
}

/* ---- the reader of raw chunks: a thread that preads the chunks ahead of the writes ------------------- */
#define READER_BYTES ((size_t)64 << 20) /* what its buffers may hold together (2 to 4 chunks) */
#define READER_SLOTS 4

enum { RD_FREE, RD_READY, RD_FAILED };
typedef struct rd_slot {
    void  *buf;
    size_t cap;
    int    state;
} rd_slot;
typedef struct raw_reader {
    pthread_t         th;
    pthread_mutex_t   mu;
    pthread_cond_t    cv;
    int               fd;
    uint64_t          base;
    const cv_chunked *cw;
    size_t            start, nslots;
    rd_slot           slot[READER_SLOTS];
    bool              stop;
} raw_reader;

static int
pread_full(int fd, void *buf, size_t n, uint64_t off)
{
    for (size_t got = 0; got < n;) {
        ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    return 0;
}

/* The thread: chunk c into slot c % nslots once the writer has given it back. No HDF5 call here. */
static void *
reader_main(void *arg)
{
    raw_reader *rd = arg;
    for (size_t c = rd->start; c < rd->cw->n; c++) {
        rd_slot        *s  = &rd->slot[c % rd->nslots];
        const cv_chunk *ch = &rd->cw->v[c];
        int             st = RD_FAILED;
        pthread_mutex_lock(&rd->mu);
        while (s->state != RD_FREE && !rd->stop)
            pthread_cond_wait(&rd->cv, &rd->mu);
        bool stop = rd->stop;
        pthread_mutex_unlock(&rd->mu);
        if (stop)
            break;
        if (ch->size > s->cap) {
            void *nb = realloc(s->buf, (size_t)ch->size);
            if (nb) {
                s->buf = nb;
                s->cap = (size_t)ch->size;
            }
        }
        if (ch->size <= s->cap && ch->addr != HADDR_UNDEF &&
            pread_full(rd->fd, s->buf, (size_t)ch->size, rd->base + ch->addr) == 0)
            st = RD_READY;
        pthread_mutex_lock(&rd->mu);
        s->state = st;
        pthread_cond_broadcast(&rd->cv);
        pthread_mutex_unlock(&rd->mu);
    }
    return NULL;
}

/* Starts the reader of chunks start.. of `cw` from the local file `path` (the source HDF5 has open as
 * `src`). false when there is none (a URL, fewer than 2 chunks, no thread): the caller reads with
 * H5Dread_chunk. */
static bool
reader_start(raw_reader *rd, const char *path, hid_t src, const cv_chunked *cw, size_t start)
{
    hid_t   fcpl = H5Fget_create_plist(src);
    hsize_t ub = 0, big = 1;
    memset(rd, 0, sizeof *rd);
    rd->fd = -1;
    if (fcpl < 0 || H5Pget_userblock(fcpl, &ub) < 0 || cw->n < start + 2 ||
        (rd->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        if (fcpl >= 0)
            H5Pclose(fcpl);
        return false;
    }
    H5Pclose(fcpl);
    for (size_t c = start; c < cw->n; c++)
        big = cw->v[c].size > big ? cw->v[c].size : big;
    rd->nslots = READER_BYTES / big > READER_SLOTS ? READER_SLOTS
                 : READER_BYTES / big < 2          ? 2
                                                   : READER_BYTES / big;
    rd->base   = cv_chunk_addr_base(ub);
    if (getenv("H5ZARR_CONVERT_READER_SKEW")) /* tests: addresses off by that many bytes, which the check
                                                 of the first chunk must catch */
        rd->base += (uint64_t)strtoull(getenv("H5ZARR_CONVERT_READER_SKEW"), NULL, 10);
    rd->cw    = cw;
    rd->start = start;
    pthread_mutex_init(&rd->mu, NULL);
    pthread_cond_init(&rd->cv, NULL);
    if (pthread_create(&rd->th, NULL, reader_main, rd) != 0) {
        pthread_cond_destroy(&rd->cv);
        pthread_mutex_destroy(&rd->mu);
        close(rd->fd);
        rd->fd = -1;
        return false;
    }
    return true;
}

/* Waits for chunk c; its slot, or NULL when the read failed (then the slot is given back). */
static rd_slot *
reader_take(raw_reader *rd, size_t c)
{
    rd_slot *s = &rd->slot[c % rd->nslots];
    pthread_mutex_lock(&rd->mu);
    while (s->state == RD_FREE)
        pthread_cond_wait(&rd->cv, &rd->mu);
    if (s->state == RD_FAILED) {
        s->state = RD_FREE;
        pthread_cond_broadcast(&rd->cv);
        s = NULL;
    }
    pthread_mutex_unlock(&rd->mu);
    return s;
}

static void
reader_give(raw_reader *rd, rd_slot *s)
{
    pthread_mutex_lock(&rd->mu);
    s->state = RD_FREE;
    pthread_cond_broadcast(&rd->cv);
    pthread_mutex_unlock(&rd->mu);
}

/* Stops and joins the thread, frees the buffers. Accepts a reader that never started (fd < 0). */
static void
reader_stop(raw_reader *rd)
{
    if (rd->fd < 0)
        return;
    pthread_mutex_lock(&rd->mu);
    rd->stop = true;
    pthread_cond_broadcast(&rd->cv);
    pthread_mutex_unlock(&rd->mu);
    pthread_join(rd->th, NULL);
    pthread_cond_destroy(&rd->cv);
    pthread_mutex_destroy(&rd->mu);
    for (size_t k = 0; k < READER_SLOTS; k++)
        free(rd->slot[k].buf);
    close(rd->fd);
    rd->fd = -1;
}

/* Chunk c of `cw` into *buf (grown to *bufsz) with H5Dread_chunk. 0 or -1. */
static int
read_chunk(hid_t sd, const cv_chunk *ch, void **buf, size_t *bufsz)
{
    unsigned mask = 0;
    if (ch->size > *bufsz) {
        void *nb = realloc(*buf, (size_t)ch->size);
        if (!nb)
            return -1;
        *buf   = nb;
        *bufsz = (size_t)ch->size;
    }
    return H5Dread_chunk(sd, H5P_DEFAULT, ch->off, &mask, *buf) < 0 ? -1 : 0;
}

static int
copy_raw(hid_t src, const cv_opts *op, hid_t sd, hid_t dd, hid_t ft, const cv_obj *o, size_t i, cv_resume *r,
         cv_meter *m)
{
    cv_chunked cw;
    raw_reader rd    = {.fd = -1};
    size_t     start = r && r->done[i] >= 2 ? r->done[i] - 2 : 0, bufsz = 0, esz = H5Tget_size(ft), nelem = 1;
    hsize_t    since = 0, count[H5S_MAX_RANK];
    hid_t      dxpl  = H5Pcreate(H5P_DATASET_XFER);
    void      *buf = NULL, *scratch = NULL;
    bool       ahead = false;
    int        rc    = -1;

    /* the bytes come from HDF5's filters, which the connector's codecs match: stored with no decode check
     * (H5Pset_zarr_raw_trusted; --verify compares them after) */
    if (cv_chunked_open(sd, o->rank, &cw) < 0 || dxpl < 0 || H5Pset_zarr_raw_trusted(dxpl, 1) < 0)
        goto done;
    for (int k = 0; k < o->rank; k++)
        nelem *= cw.chunk[k];
    ahead = getenv("H5ZARR_CONVERT_NO_READER") == NULL && reader_start(&rd, op->src, src, &cw, start);
    for (size_t c = start; c < cw.n; c++) {
        const cv_chunk *ch = &cw.v[c];
        rd_slot        *s  = ahead ? reader_take(&rd, c) : NULL;
        const void     *bytes;
        herr_t          w;
        if (ahead && c == start) { /* the reader's addresses are right: H5Dread_chunk agrees */
            if (read_chunk(sd, ch, &buf, &bufsz) < 0)
                goto done;
            if (!s || memcmp(buf, s->buf, (size_t)ch->size) != 0) {
                reader_stop(&rd); /* frees s */
                ahead = false;
                s     = NULL;
            }
        }
        else if (!s && read_chunk(sd, ch, &buf, &bufsz) < 0)
            goto done;
        bytes = s ? s->buf : buf;
        H5E_BEGIN_TRY { w = H5Dwrite_chunk(dd, dxpl, ch->mask, ch->off, (size_t)ch->size, bytes); }
        H5E_END_TRY
        if (s)
            reader_give(&rd, s);
        if (w < 0) { /* not raw (a mask skipping some filters): as values */
            if (!scratch && !(scratch = malloc(nelem * esz)))
                goto done;
            cv_chunked_region(&cw, c, count);
            if (cv_copy_region(sd, dd, ft, ch->off, count, o->rank, scratch) < 0)
                goto done;
        }
        cv_meter_add(m, 0, ch->size);
        since += ch->size;
        if (r && (since >= RESUME_BYTES || (c + 1 - start) % RESUME_UNITS == 0)) {
            if (cv_resume_note(r, dd, i, c + 1 + 2) < 0)
                goto done;
            since = 0;
        }
        cv_kill_point();
    }
    if (ahead && op->verbose)
        fprintf(stderr, "h5zarr-convert: %s: chunks read ahead from the file\n", o->path);
    rc = 0;
done:
    reader_stop(&rd);
    if (rc < 0)
        fprintf(stderr, "h5zarr-convert: %s: copying its chunks failed\n", o->path);
    free(buf);
    free(scratch);
    cv_chunked_free(&cw);
    if (dxpl >= 0)
        H5Pclose(dxpl);
    return rc;
}

hsize_t
cv_slab_rows(hid_t sd, int rank, const hsize_t *dims, size_t esz)
{
    hsize_t row = esz, ch[H5S_MAX_RANK], c0 = 1, rows;
    hid_t   dcpl = H5Dget_create_plist(sd);
    for (int k = 1; k < rank; k++)
        row *= dims[k];
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, rank, ch) == rank)
        c0 = ch[0];
    if (dcpl >= 0)
        H5Pclose(dcpl);
    rows = row ? SLAB_BYTES / row : dims[0];
    rows = rows / c0 * c0;
    if (rows < c0)
        rows = c0;
    if (rows > dims[0]) /* a small dataset: one slab of its size, not a 64 MiB buffer */
        rows = dims[0];
    return rows ? rows : 1;
}

static int
copy_refs(hid_t sd, hid_t dd, hid_t ft, hid_t dst_file, const cv_list *l)
{
    hid_t      sp = H5Dget_space(sd);
    hssize_t   n  = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
    H5R_ref_t *in = NULL, *out = NULL;
    int        rc = -1;
    if (n < 0)
        goto done;
    if (n == 0) {
        rc = 0;
        goto done;
    }
    if (!(in = calloc((size_t)n, sizeof *in)) || !(out = calloc((size_t)n, sizeof *out)))
        goto done;
    if (H5Dread(sd, H5T_STD_REF, H5S_ALL, H5S_ALL, H5P_DEFAULT, in) < 0 ||
        cv_refs_rewrite(ft, sd, in, (size_t)n, dst_file, l, out) < 0 ||
        H5Dwrite(dd, H5T_STD_REF, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
        goto done;
    rc = 0;
done:
    for (hssize_t k = 0; in && out && k < n; k++) {
        H5Rdestroy(&in[k]);
        H5Rdestroy(&out[k]);
    }
    free(in);
    free(out);
    if (sp >= 0)
        H5Sclose(sp);
    return rc;
}

static int
copy_values(hid_t sd, hid_t dd, hid_t ft, const cv_obj *o, size_t i, cv_resume *r, cv_meter *m)
{
    hid_t   sp = H5Dget_space(sd);
    hsize_t dims[H5S_MAX_RANK], start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK], rows, nslabs, s0;
    size_t  esz = H5Tget_size(ft);
    void   *buf = NULL;
    int     rc  = -1;

    if (sp < 0 || H5Sget_simple_extent_type(sp) == H5S_NULL) {
        rc = sp < 0 ? -1 : 0;
        goto done;
    }
    if (o->rank == 0) {
        if (!(buf = calloc(1, esz)) || cv_copy_region(sd, dd, ft, start, count, 0, buf) < 0)
            goto done;
        cv_meter_add(m, 0, o->bytes);
        rc = 0;
        goto done;
    }
    H5Sget_simple_extent_dims(sp, dims, NULL);
    for (int k = 0; k < o->rank; k++)
        if (dims[k] == 0) {
            rc = 0;
            goto done;
        }
    rows              = cv_slab_rows(sd, o->rank, dims, esz);
    nslabs            = (dims[0] + rows - 1) / rows;
    s0                = r && r->done[i] >= 2 ? r->done[i] - 2 : 0;
    size_t slab_elems = (size_t)rows;
    for (int k = 1; k < o->rank; k++)
        slab_elems *= (size_t)dims[k];
    if (!(buf = calloc(slab_elems, esz)))
        goto done;
    for (hsize_t s = s0; s < nslabs; s++) {
        memcpy(count, dims, sizeof(hsize_t) * (size_t)o->rank);
        start[0] = s * rows;
        count[0] = start[0] + rows > dims[0] ? dims[0] - start[0] : rows;
        if (cv_copy_region(sd, dd, ft, start, count, o->rank, buf) < 0)
            goto done;
        cv_meter_add(m, 0, o->bytes / nslabs);
        if (r && s + 1 < nslabs && cv_resume_note(r, dd, i, (size_t)(s + 1) + 2) < 0)
            goto done;
        cv_kill_point();
    }
    rc = 0;
done:
    if (rc < 0)
        fprintf(stderr, "h5zarr-convert: %s: copying its values failed\n", o->path);
    free(buf);
    if (sp >= 0)
        H5Sclose(sp);
    return rc;
}

int
cv_copy_data(hid_t src, hid_t dst, const cv_opts *op, const cv_list *l, size_t i, cv_resume *r, cv_meter *m)
{
    const cv_obj *o  = &l->v[i];
    hid_t         sd = -1, dd = -1, ft = -1;
    int           rc = -1;
    if (o->mode == CV_DATA_NONE)
        return 0;
    if ((sd = H5Dopen2(src, o->path, H5P_DEFAULT)) < 0 || (dd = H5Dopen2(dst, o->path, H5P_DEFAULT)) < 0 ||
        (ft = H5Dget_type(sd)) < 0)
        goto done;
    switch (o->mode) {
        case CV_DATA_RAW:
            rc = copy_raw(src, op, sd, dd, ft, o, i, r, m);
            break;
        case CV_DATA_REFS:
            rc = copy_refs(sd, dd, ft, dst, l);
            break;
        default:
            rc = copy_values(sd, dd, ft, o, i, r, m);
            break;
    }
done:
    if (ft >= 0)
        H5Tclose(ft);
    if (dd >= 0)
        H5Dclose(dd);
    if (sd >= 0)
        H5Dclose(sd);
    return rc;
}
