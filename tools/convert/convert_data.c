/*
 * convert_data.c: the data pass of h5zarr-convert, one dataset at a time.
 *   - raw: the stored chunks of the source (H5Dchunk_iter) go over as they are, H5Dread_chunk into
 *     H5Dwrite_chunk: the connector maps every filter the scan lets through byte for byte (a deflate
 *     chunk is a zlib stream, numcodecs.zlib's format), so nothing is decoded or encoded here; a chunk the
 *     connector won't take raw (a filter mask skipping some filters only) goes over as values instead;
 *   - values: chunk-aligned slabs read with HDF5 (decoding) and written through the connector, whose
 *     engine encodes the slab's chunks on all its threads;
 *   - references: read as H5R_ref_t and written as references to the same paths in the store.
 * Progress is recorded in the resume record every RESUME_BYTES or RESUME_UNITS units (chunks or slabs),
 * after a flush of the store, so an interrupted run starts again after the last recorded unit.
 */
#include "convert.h"

#include "h5zarr/h5zarr.h"

#include <stdlib.h>
#include <string.h>

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
    (void)addr;
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
    return 0;
}

int
cv_chunked_open(hid_t d, hid_t dcpl, int rank, cv_chunked *cw)
{
    chunk_list c  = {NULL, 0, 0, rank};
    hid_t      sp = H5Dget_space(d);
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

static int
copy_raw(hid_t sd, hid_t dd, hid_t ft, const cv_obj *o, size_t i, cv_resume *r, cv_meter *m)
{
    cv_chunked cw;
    size_t     start = r && r->done[i] >= 2 ? r->done[i] - 2 : 0, bufsz = 0, esz = H5Tget_size(ft), nelem = 1;
    hsize_t    since = 0, count[H5S_MAX_RANK];
    hid_t      dxpl  = H5Pcreate(H5P_DATASET_XFER);
    void      *buf = NULL, *scratch = NULL;
    int        rc = -1;

    /* the bytes come from HDF5's filters, which the connector's codecs match: stored with no decode check
     * (H5Pset_zarr_raw_trusted; --verify compares them after) */
    if (cv_chunked_open(sd, o->dcpl, o->rank, &cw) < 0 || dxpl < 0 || H5Pset_zarr_raw_trusted(dxpl, 1) < 0)
        goto done;
    for (int k = 0; k < o->rank; k++)
        nelem *= cw.chunk[k];
    for (size_t c = start; c < cw.n; c++) {
        const cv_chunk *ch   = &cw.v[c];
        unsigned        mask = 0;
        herr_t          w;
        if (ch->size > bufsz) {
            void *nb = realloc(buf, ch->size);
            if (!nb)
                goto done;
            buf   = nb;
            bufsz = ch->size;
        }
        if (H5Dread_chunk(sd, H5P_DEFAULT, ch->off, &mask, buf) < 0)
            goto done;
        H5E_BEGIN_TRY { w = H5Dwrite_chunk(dd, dxpl, mask, ch->off, (size_t)ch->size, buf); }
        H5E_END_TRY
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
    rc = 0;
done:
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
cv_slab_rows(hid_t dcpl, int rank, const hsize_t *dims, size_t esz)
{
    hsize_t row = esz, ch[H5S_MAX_RANK], c0 = 1, rows;
    for (int k = 1; k < rank; k++)
        row *= dims[k];
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, rank, ch) == rank)
        c0 = ch[0];
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

/* Copies all of `sd` (file space `sp`) to `dd` as values of type `ft` through `buf` (big enough), with
 * no selection made (H5S_ALL): what a dataset of one slab takes. */
static int
copy_whole(hid_t sd, hid_t dd, hid_t ft, hid_t sp, void *buf)
{
    herr_t rd = H5Dread(sd, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    herr_t w  = rd < 0 ? -1 : H5Dwrite(dd, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    if (rd >= 0 && cv_type_varlen(ft))
        H5Treclaim(ft, sp, H5P_DEFAULT, buf);
    return w < 0 ? -1 : 0;
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
    rows              = cv_slab_rows(o->dcpl, o->rank, dims, esz);
    nslabs            = (dims[0] + rows - 1) / rows;
    s0                = r && r->done[i] >= 2 ? r->done[i] - 2 : 0;
    size_t slab_elems = (size_t)rows;
    for (int k = 1; k < o->rank; k++)
        slab_elems *= (size_t)dims[k];
    if (!(buf = calloc(slab_elems, esz)))
        goto done;
    if (nslabs == 1) { /* the whole dataset in one slab: no selections to make */
        if (copy_whole(sd, dd, ft, sp, buf) < 0)
            goto done;
        cv_meter_add(m, 0, o->bytes);
        cv_kill_point();
        rc = 0;
        goto done;
    }
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

void
cv_say_mode(const cv_opts *op, const cv_obj *o)
{
    if (op->verbose)
        fprintf(stderr, "h5zarr-convert: %s: %s\n", o->path,
                o->mode == CV_DATA_RAW    ? "raw chunks"
                : o->mode == CV_DATA_NONE ? "never written: left unwritten"
                : o->mode == CV_DATA_REFS ? "references, rewritten"
                                          : "values");
}

bool
cv_data_early(const cv_obj *o)
{
    return o->kind == CV_DATASET && (o->mode == CV_DATA_RAW || o->mode == CV_DATA_VALUES) &&
           o->size <= CV_EARLY_BYTES;
}

int
cv_data_write(hid_t dd, hid_t dst, const cv_list *l, size_t i, hid_t st, cv_resume *r, cv_meter *m)
{
    const cv_obj *o  = &l->v[i];
    hid_t         ft = st >= 0 ? st : o->sd < 0 ? -1 : H5Dget_type(o->sd);
    int           rc = -1;
    if (ft < 0)
        return -1;
    switch (o->mode) {
        case CV_DATA_NONE:
            rc = 0;
            break;
        case CV_DATA_RAW:
            rc = copy_raw(o->sd, dd, ft, o, i, r, m);
            break;
        case CV_DATA_REFS:
            rc = copy_refs(o->sd, dd, ft, dst, l);
            break;
        default:
            rc = copy_values(o->sd, dd, ft, o, i, r, m);
            break;
    }
    if (ft != st)
        H5Tclose(ft);
    return rc;
}

int
cv_copy_data(hid_t src, hid_t dst, const cv_opts *op, const cv_list *l, size_t i, cv_resume *r, cv_meter *m)
{
    const cv_obj *o  = &l->v[i];
    hid_t         dd = -1;
    int           rc = -1;
    (void)op;
    if (o->mode == CV_DATA_NONE)
        return 0;
    (void)cv_obj_hold(src, o); /* a failure leaves o->sd at -1: refused below */
    if (o->sd >= 0 && (dd = H5Dopen2(dst, o->path, H5P_DEFAULT)) >= 0)
        rc = cv_data_write(dd, dst, l, i, -1, r, m);
    if (dd >= 0)
        H5Dclose(dd);
    cv_obj_drop(o);
    return rc; /* sd: the scan's, kept open (or closed again by cv_obj_drop) */
}
