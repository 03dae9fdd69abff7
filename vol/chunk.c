/*
 * chunk.c: HDF5's chunk API on zarr arrays (docs/FORMAT.md "The chunk API"): the native connector's
 * dataset optional operations H5Dget_num_chunks, H5Dget_chunk_info, H5Dget_chunk_info_by_coord,
 * H5Dchunk_iter, H5Dget_chunk_storage_size, H5Dread_chunk and H5Dwrite_chunk, served from the core's
 * raw chunks (zarr.h "Raw chunks", zarr/chunk_raw.c), which go through the array's store.
 *
 * The HDF5 chunk is the zarr chunk, or for a sharded array the inner chunk (vol/shard.c); its bytes are
 * the stored bytes, which are the bytes the HDF5 filters write (vol/filter.c; deflate is a zlib stream,
 * as HDF5's). What HDF5 is told:
 *   - the chunks: those stored (zarr leaves out chunks equal to the fill value, and a shard's inner
 *     chunks equal to it), in row-major order of their offsets (the order of HDF5's B-tree index);
 *   - filter mask: the bits of the filters left out at create (optional filters nobody can apply, which
 *     HDF5 skips and marks in each chunk's mask; vol/filter.c), else 0: a zarr chunk went through every
 *     codec;
 *   - address: the chunk's row-major index in the chunk grid of the current extent, a stable, unique
 *     number while the extent stays (a store has no file addresses); never HADDR_UNDEF for a stored chunk;
 *   - size: the bytes stored for the chunk (its store value, or its byte range in its shard).
 * H5Dget_num_chunks and H5Dget_chunk_info count the stored chunks that intersect the selection of the
 * dataspace given (H5S_ALL: every one), as HDF5 documents them (HDF5 1.14.5's native connector counts
 * them all whatever the selection).
 *
 * H5Dwrite_chunk: with filter mask 0 (or the left-out filters' bits: the same bytes) the bytes must be
 * what the codecs write; they are checked to decode and stored as they are (not checked when the dxpl
 * vouches for them: H5Pset_zarr_raw_trusted, h5zarr.h, which h5zarr-convert sets); mask 0 on a dataset with a
 * left-out filter claims that filter was applied, which nothing here can undo: refused. A mask that
 * skips every filter of the dcpl gives the chunk's plain elements
 * (the file type's bytes): they are written as an ordinary write of the chunk's region, so the codecs
 * encode them (a later H5Dread_chunk then reports mask 0 and the encoded bytes: zarr keeps no mask per
 * chunk). A mask that skips some filters only is refused. Mask bits above the dcpl's filters are
 * ignored, as HDF5 ignores them.
 */
#include "h5zv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What every operation needs: the array, the extent and the chunk grid. */
typedef struct chunk_ctx {
    h5zv_obj   *d;
    zarr_array *a;
    const char *op; /* the API call, for messages */
    int         nd;
    hsize_t     dims[H5S_MAX_RANK];
    hsize_t     chunk[H5S_MAX_RANK]; /* the HDF5 chunk (the raw chunk of the core) */
    hsize_t     grid[H5S_MAX_RANK];  /* chunks along each dim that start inside the extent */
    uint32_t    left_out;            /* mask bits of the filters left out at create */
} chunk_ctx;

/* "[0, 10]" for messages. */
static const char *
dims_name(int nd, const hsize_t *v, char *out, size_t cap)
{
    size_t k = 0;
    out[0]   = '\0';
    for (int i = 0; i < nd && k + 1 < cap; i++) {
        int w = snprintf(out + k, cap - k, "%s%llu", i ? ", " : "[", (unsigned long long)v[i]);
        if (w < 0)
            break;
        k += (size_t)w;
    }
    if (k + 1 < cap)
        snprintf(out + k, cap - k, nd ? "]" : "[]");
    return out;
}

static int
ctx_init(chunk_ctx *cx, h5zv_obj *d, h5zv_node *n, const char *op)
{
    uint64_t     shape[ZARR_MAX_DIMS];
    hsize_t      hchunk[H5S_MAX_RANK];
    char         a1[H5S_MAX_RANK * 22], a2[H5S_MAX_RANK * 22];
    H5D_layout_t layout;
    int          ret = -1;

    memset(cx, 0, sizeof *cx);
    cx->d        = d;
    cx->a        = n->a;
    cx->op       = op;
    cx->left_out = h5zv_filters_left_out_mask(d->dcpl_id);
    if ((layout = H5Pget_layout(d->dcpl_id)) != H5D_CHUNKED)
        H5ZV_GOTO_ERROR("%s of '/%s': not a chunked dataset (its layout is %s)", op, d->path,
                        layout == H5D_COMPACT   ? "compact"
                        : layout == H5D_VIRTUAL ? "virtual"
                                                : "contiguous");
    if ((cx->nd = H5Sget_simple_extent_ndims(d->space_id)) < 1 || cx->nd != zarr_array_meta_get(n->a)->ndim ||
        H5Sget_simple_extent_dims(d->space_id, cx->dims, NULL) < 0 ||
        H5Pget_chunk(d->dcpl_id, cx->nd, hchunk) != cx->nd)
        H5ZV_GOTO_ERROR("%s of '/%s': can't get the dataset's extent and chunk dims", op, d->path);
    if (zarr_array_raw_chunk_shape(n->a, shape, NULL) != ZARR_OK)
        H5ZV_GOTO_ZERR("%s of '/%s'", op, d->path);
    for (int i = 0; i < cx->nd; i++) {
        cx->chunk[i] = (hsize_t)shape[i];
        cx->grid[i]  = cx->dims[i] / cx->chunk[i] + (cx->dims[i] % cx->chunk[i] != 0);
    }
    if (memcmp(hchunk, cx->chunk, (size_t)cx->nd * sizeof *hchunk) != 0)
        H5ZV_GOTO_ERROR("%s of '/%s': its HDF5 chunk %s is not a unit the store keeps (its stored chunks are "
                        "%s: nested sharding, or a sharded array of a variable-length type); the chunk API "
                        "can't serve it",
                        op, d->path, dims_name(cx->nd, hchunk, a1, sizeof a1),
                        dims_name(cx->nd, cx->chunk, a2, sizeof a2));
    ret = 0;
done:
    return ret;
}

/* Grid coordinates of the chunk at `offset`. `strict`: the offset must fall on a chunk boundary and not
 * exceed the extent (HDF5's checks for H5Dread_chunk and H5Dwrite_chunk); else the chunk holding it. */
static int
ctx_coords(const chunk_ctx *cx, const hsize_t *offset, bool strict, uint64_t *c)
{
    char a1[H5S_MAX_RANK * 22], a2[H5S_MAX_RANK * 22];
    for (int i = 0; i < cx->nd; i++) {
        if (strict && offset[i] > cx->dims[i]) {
            h5zv_err_push(__func__, __LINE__, "%s of '/%s': offset %s exceeds the dataset's dimensions %s",
                          cx->op, cx->d->path, dims_name(cx->nd, offset, a1, sizeof a1),
                          dims_name(cx->nd, cx->dims, a2, sizeof a2));
            return -1;
        }
        if (strict && offset[i] % cx->chunk[i]) {
            h5zv_err_push(__func__, __LINE__,
                          "%s of '/%s': offset %s doesn't fall on a chunk boundary (chunk dims %s)", cx->op,
                          cx->d->path, dims_name(cx->nd, offset, a1, sizeof a1),
                          dims_name(cx->nd, cx->chunk, a2, sizeof a2));
            return -1;
        }
        c[i] = offset[i] / cx->chunk[i];
    }
    return 0;
}

/* The address reported for the chunk at grid coordinates `c`: its row-major index in the grid. */
static haddr_t
ctx_addr(const chunk_ctx *cx, const uint64_t *c)
{
    haddr_t a = 0;
    for (int i = 0; i < cx->nd; i++)
        a = a * cx->grid[i] + c[i];
    return a == HADDR_UNDEF ? HADDR_UNDEF - 1 : a;
}

/* Which chunks a dataspace's selection picks: `*all` for H5S_ALL or an "all" selection. */
static int
ctx_sel(const chunk_ctx *cx, hid_t space, bool *all)
{
    H5S_sel_type t;
    *all = true;
    if (space == H5S_ALL)
        return 0;
    if (H5Iget_type(space) != H5I_DATASPACE) {
        h5zv_err_push(__func__, __LINE__, "%s of '/%s': not a valid dataspace ID", cx->op, cx->d->path);
        return -1;
    }
    if ((t = H5Sget_select_type(space)) < 0) {
        h5zv_err_push(__func__, __LINE__, "%s of '/%s': can't get the selection", cx->op, cx->d->path);
        return -1;
    }
    if (t != H5S_SEL_ALL) {
        if (H5Sget_simple_extent_ndims(space) != cx->nd) {
            h5zv_err_push(__func__, __LINE__, "%s of '/%s': the dataspace given has rank %d, the dataset %d",
                          cx->op, cx->d->path, H5Sget_simple_extent_ndims(space), cx->nd);
            return -1;
        }
        *all = false;
    }
    return 0;
}

/* 1 if the chunk at grid `c` intersects the selection of `space`, 0 if not, -1 (error pushed). */
static int
ctx_picks(const chunk_ctx *cx, hid_t space, bool all, const uint64_t *c)
{
    hsize_t start[H5S_MAX_RANK], end[H5S_MAX_RANK];
    htri_t  t;
    if (all)
        return 1;
    for (int i = 0; i < cx->nd; i++) {
        start[i] = c[i] * cx->chunk[i];
        end[i]   = start[i] + cx->chunk[i] < cx->dims[i] ? start[i] + cx->chunk[i] - 1 : cx->dims[i] - 1;
    }
    if ((t = H5Sselect_intersect_block(space, start, end)) < 0) {
        h5zv_err_push(__func__, __LINE__, "%s of '/%s': can't intersect the selection with a chunk", cx->op,
                      cx->d->path);
        return -1;
    }
    return t > 0;
}

/* The stored chunks (zarr_array_raw_list); -1 with an error pushed. */
static int
ctx_list(const chunk_ctx *cx, uint64_t **coords, uint64_t **sizes, size_t *n)
{
    if (zarr_array_raw_list(cx->a, coords, sizes, n) != ZARR_OK) {
        h5zv_err_push(__func__, __LINE__, "%s of '/%s': can't list its chunks: %s", cx->op, cx->d->path,
                      zarr_errmsg());
        return -1;
    }
    return 0;
}

/* H5Dget_num_chunks (`info` NULL) and H5Dget_chunk_info (the idx-th chunk picked). */
static herr_t
chunk_count(const chunk_ctx *cx, hid_t space, hsize_t *nchunks,
            H5VL_native_dataset_get_chunk_info_by_idx_t *info)
{
    uint64_t *coords = NULL, *sizes = NULL;
    size_t    n    = 0;
    hsize_t   seen = 0;
    bool      all;
    herr_t    ret = -1;

    if (info) {
        if (info->addr)
            *info->addr = HADDR_UNDEF;
        if (info->size)
            *info->size = 0;
    }
    if (ctx_sel(cx, space, &all) < 0 || ctx_list(cx, &coords, &sizes, &n) < 0)
        goto done;
    for (size_t k = 0; k < n; k++) {
        const uint64_t *c = coords + k * (size_t)cx->nd;
        int             p = ctx_picks(cx, space, all, c);
        if (p < 0)
            goto done;
        if (!p)
            continue;
        if (info && seen == info->chk_index) {
            if (info->offset)
                for (int i = 0; i < cx->nd; i++)
                    info->offset[i] = (hsize_t)c[i] * cx->chunk[i];
            if (info->filter_mask)
                *info->filter_mask = cx->left_out;
            if (info->addr)
                *info->addr = ctx_addr(cx, c);
            if (info->size)
                *info->size = (hsize_t)sizes[k];
            break;
        }
        seen++;
    }
    if (nchunks)
        *nchunks = seen;
    ret = 0;
done:
    free(coords);
    free(sizes);
    return ret;
}

static herr_t
chunk_iter(const chunk_ctx *cx, H5D_chunk_iter_op_t op, void *op_data)
{
    uint64_t *coords = NULL, *sizes = NULL;
    size_t    n   = 0;
    herr_t    ret = -1;

    if (!op)
        H5ZV_GOTO_ERROR("%s of '/%s': no callback", cx->op, cx->d->path);
    if (ctx_list(cx, &coords, &sizes, &n) < 0)
        goto done;
    ret = 0;
    for (size_t k = 0; k < n && ret == 0; k++) {
        const uint64_t *c = coords + k * (size_t)cx->nd;
        hsize_t         off[H5S_MAX_RANK];
        char            a1[H5S_MAX_RANK * 22];
        for (int i = 0; i < cx->nd; i++)
            off[i] = (hsize_t)c[i] * cx->chunk[i];
        ret = op(off, cx->left_out, ctx_addr(cx, c), (hsize_t)sizes[k], op_data);
        if (ret < 0)
            H5ZV_GOTO_ERROR("%s of '/%s': the callback failed at the chunk at offset %s", cx->op, cx->d->path,
                            dims_name(cx->nd, off, a1, sizeof a1));
    }
done:
    free(coords);
    free(sizes);
    return ret;
}

/* Whether the chunk at `offset` is stored, and its size. */
static int
chunk_stat(const chunk_ctx *cx, const hsize_t *offset, bool strict, uint64_t *c, bool *stored,
           uint64_t *nbytes)
{
    if (ctx_coords(cx, offset, strict, c) < 0)
        return -1;
    if (zarr_array_raw_stat(cx->a, c, stored, nbytes) != ZARR_OK) {
        char a1[H5S_MAX_RANK * 22];
        h5zv_err_push(__func__, __LINE__, "%s of '/%s': can't look up the chunk at offset %s: %s", cx->op,
                      cx->d->path, dims_name(cx->nd, offset, a1, sizeof a1), zarr_errmsg());
        return -1;
    }
    return 0;
}

static herr_t
chunk_read(const chunk_ctx *cx, H5VL_native_dataset_chunk_read_t *r)
{
    uint64_t c[ZARR_MAX_DIMS];
    zarr_buf b = ZARR_BUF_INIT;
    char     a1[H5S_MAX_RANK * 22];
    int      rc;
    herr_t   ret = -1;

    r->filters = cx->left_out;
    if (ctx_coords(cx, r->offset, true, c) < 0)
        goto done;
    dims_name(cx->nd, r->offset, a1, sizeof a1);
    if ((rc = zarr_array_raw_read(cx->a, c, &b)) == ZARR_ENOTFOUND)
        H5ZV_GOTO_ERROR("%s of '/%s': the chunk at offset %s is not stored (never written, or all fill "
                        "values, which zarr leaves out)",
                        cx->op, cx->d->path, a1);
    if (rc != ZARR_OK)
        H5ZV_GOTO_ZERR("%s of '/%s': can't read the chunk at offset %s", cx->op, cx->d->path, a1);
    if (b.size)
        memcpy(r->buf, b.data, b.size);
    ret = 0;
done:
    zarr_buf_free(&b);
    return ret;
}

/* H5Dwrite_chunk of a chunk given unfiltered: its plain elements written as a write of its region. */
static herr_t
write_plain(const chunk_ctx *cx, const uint64_t *c, const void *buf, size_t size, hid_t dxpl_id)
{
    hsize_t     mdims[H5S_MAX_RANK], start[H5S_MAX_RANK], count[H5S_MAX_RANK], zero[H5S_MAX_RANK];
    hid_t       ms = H5I_INVALID_HID, fs = H5I_INVALID_HID, mt;
    size_t      es = H5Tget_size(cx->d->type_id), want = es;
    void       *objs[1];
    hid_t       mts[1], mss[1], fss[1];
    const void *bufs[1];
    char        a1[H5S_MAX_RANK * 22];
    herr_t      ret = -1;

    for (int i = 0; i < cx->nd; i++) {
        mdims[i] = cx->chunk[i];
        zero[i]  = 0;
        start[i] = c[i] * cx->chunk[i];
        count[i] = cx->dims[i] - start[i] < cx->chunk[i] ? cx->dims[i] - start[i] : cx->chunk[i];
        want *= (size_t)cx->chunk[i];
    }
    dims_name(cx->nd, start, a1, sizeof a1);
    if (size != want)
        H5ZV_GOTO_ERROR("%s of '/%s': the chunk at offset %s is given with every filter skipped, so it must "
                        "hold the chunk's %zu bytes of elements; it has %zu",
                        cx->op, cx->d->path, a1, want, size);
    if ((ms = H5Screate_simple(cx->nd, mdims, NULL)) < 0 ||
        H5Sselect_hyperslab(ms, H5S_SELECT_SET, zero, NULL, count, NULL) < 0 ||
        (fs = H5Scopy(cx->d->space_id)) < 0 ||
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0)
        H5ZV_GOTO_ERROR("%s of '/%s': can't select the chunk at offset %s", cx->op, cx->d->path, a1);
    mt      = cx->d->type_id;
    objs[0] = cx->d;
    mts[0]  = mt;
    mss[0]  = ms;
    fss[0]  = fs;
    bufs[0] = buf;
    if (h5zv_dataset_write(1, objs, mts, mss, fss, dxpl_id, bufs, NULL) < 0)
        H5ZV_GOTO_ERROR("%s of '/%s': can't write the chunk at offset %s", cx->op, cx->d->path, a1);
    ret = 0;
done:
    h5zv_close(ms);
    h5zv_close(fs);
    return ret;
}

/* The dxpl vouches for the chunks' bytes (H5Pset_zarr_raw_trusted, h5zarr.h): stored with no decode check. */
static bool
raw_trusted(hid_t dxpl_id)
{
    hbool_t on = 0;
    htri_t  have;
    if (dxpl_id < 0 || dxpl_id == H5P_DEFAULT)
        return false;
    H5E_BEGIN_TRY { have = H5Pexist(dxpl_id, H5ZARR_RAW_TRUSTED_PROP); }
    H5E_END_TRY
    return have > 0 && H5Pget(dxpl_id, H5ZARR_RAW_TRUSTED_PROP, &on) >= 0 && on;
}

static herr_t
chunk_write(const chunk_ctx *cx, const H5VL_native_dataset_chunk_write_t *w, hid_t dxpl_id)
{
    uint64_t c[ZARR_MAX_DIMS];
    char     a1[H5S_MAX_RANK * 22];
    int      nf;
    uint32_t fmask, skipped;
    herr_t   ret = -1;

    dims_name(cx->nd, w->offset, a1, sizeof a1);
    if (cx->d->file->intent != H5F_ACC_RDWR)
        H5ZV_GOTO_ERROR("%s of '/%s': the file is read-only", cx->op, cx->d->path);
    if (ctx_coords(cx, w->offset, true, c) < 0)
        goto done;
    for (int i = 0; i < cx->nd; i++)
        if (w->offset[i] >= cx->dims[i])
            H5ZV_GOTO_ERROR("%s of '/%s': the chunk at offset %s lies outside the dataset's extent", cx->op,
                            cx->d->path, a1);
    if (h5zv_type_has_pointers(cx->d->type_id) || zarr_dtype_has_vlen(zarr_array_meta_get(cx->a)->dtype))
        H5ZV_GOTO_ERROR("%s of '/%s': raw chunks of variable-length or reference data can't be written (the "
                        "store's chunk bytes encode the values, not HDF5's heap references)",
                        cx->op, cx->d->path);
    if ((nf = H5Pget_nfilters(cx->d->dcpl_id)) < 0)
        H5ZV_GOTO_ERROR("%s of '/%s': can't get the dataset's filters", cx->op, cx->d->path);
    fmask   = nf >= 32 ? UINT32_MAX : ((uint32_t)1 << nf) - 1;
    skipped = w->filters & fmask;
    if (skipped == cx->left_out && cx->left_out != fmask)
        skipped = 0; /* the left-out filters skipped, as every chunk of the dataset skips them */
    else if (!skipped && cx->left_out)
        H5ZV_GOTO_ERROR("%s of '/%s': the chunk at offset %s is marked as having gone through every filter "
                        "(mask 0), but the dataset's optional filter(s) of mask 0x%x can't be applied here "
                        "(left out at create, as HDF5 leaves them out); write it with those bits set",
                        cx->op, cx->d->path, a1, (unsigned)cx->left_out);
    if (nf > 0 && skipped == fmask) {
        if (write_plain(cx, c, w->buf, w->size, dxpl_id) < 0)
            goto done;
    }
    else if (skipped)
        H5ZV_GOTO_ERROR("%s of '/%s': the chunk at offset %s skips some of the dataset's %d filters (mask "
                        "0x%x); a zarr chunk goes through every codec of the array, so give it with every "
                        "filter applied (mask 0) or none (every filter's bit set)",
                        cx->op, cx->d->path, a1, nf, (unsigned)w->filters);
    else if (zarr_array_raw_write_opt(cx->a, c, w->buf, w->size,
                                      raw_trusted(dxpl_id) ? ZARR_RAW_TRUSTED : 0) != ZARR_OK)
        H5ZV_GOTO_ZERR("%s of '/%s': can't write the chunk at offset %s", cx->op, cx->d->path, a1);
    ret = 0;
done:
    return ret;
}

herr_t
h5zv_chunk_optional(h5zv_obj *d, h5zv_node *n, H5VL_optional_args_t *args, hid_t dxpl_id)
{
    H5VL_native_dataset_optional_args_t *o = args->args;
    chunk_ctx                            cx;
    uint64_t                             c[ZARR_MAX_DIMS], nbytes = 0;
    bool                                 stored = false;
    herr_t                               ret    = -1;

    switch (args->op_type) {
        case H5VL_NATIVE_DATASET_GET_NUM_CHUNKS:
            if (ctx_init(&cx, d, n, "H5Dget_num_chunks") < 0)
                goto done;
            ret = chunk_count(&cx, o->get_num_chunks.space_id, o->get_num_chunks.nchunks, NULL);
            break;
        case H5VL_NATIVE_DATASET_GET_CHUNK_INFO_BY_IDX:
            if (ctx_init(&cx, d, n, "H5Dget_chunk_info") < 0)
                goto done;
            ret = chunk_count(&cx, o->get_chunk_info_by_idx.space_id, NULL, &o->get_chunk_info_by_idx);
            break;
        case H5VL_NATIVE_DATASET_GET_CHUNK_INFO_BY_COORD: {
            H5VL_native_dataset_get_chunk_info_by_coord_t *g = &o->get_chunk_info_by_coord;
            if (g->addr)
                *g->addr = HADDR_UNDEF;
            if (g->size)
                *g->size = 0;
            if (ctx_init(&cx, d, n, "H5Dget_chunk_info_by_coord") < 0 ||
                chunk_stat(&cx, g->offset, false, c, &stored, &nbytes) < 0)
                goto done;
            if (stored) {
                if (g->filter_mask)
                    *g->filter_mask = cx.left_out;
                if (g->addr)
                    *g->addr = ctx_addr(&cx, c);
                if (g->size)
                    *g->size = (hsize_t)nbytes;
            }
            ret = 0;
            break;
        }
        case H5VL_NATIVE_DATASET_CHUNK_ITER:
            if (ctx_init(&cx, d, n, "H5Dchunk_iter") < 0)
                goto done;
            ret = chunk_iter(&cx, o->chunk_iter.op, o->chunk_iter.op_data);
            break;
        case H5VL_NATIVE_DATASET_GET_CHUNK_STORAGE_SIZE: {
            char a1[H5S_MAX_RANK * 22];
            if (ctx_init(&cx, d, n, "H5Dget_chunk_storage_size") < 0 ||
                chunk_stat(&cx, o->get_chunk_storage_size.offset, false, c, &stored, &nbytes) < 0)
                goto done;
            if (!stored)
                H5ZV_GOTO_ERROR("H5Dget_chunk_storage_size of '/%s': the chunk at offset %s is not stored "
                                "(chunk storage is not allocated: never written, or all fill values, which "
                                "zarr leaves out)",
                                d->path, dims_name(cx.nd, o->get_chunk_storage_size.offset, a1, sizeof a1));
            *o->get_chunk_storage_size.size = (hsize_t)nbytes;
            ret                             = 0;
            break;
        }
        case H5VL_NATIVE_DATASET_CHUNK_READ:
            if (ctx_init(&cx, d, n, "H5Dread_chunk") < 0)
                goto done;
            ret = chunk_read(&cx, &o->chunk_read);
            break;
        case H5VL_NATIVE_DATASET_CHUNK_WRITE:
            if (ctx_init(&cx, d, n, "H5Dwrite_chunk") < 0)
                goto done;
            h5zv_refidx_touch(d->file, d->path); /* its data may hold references (vol/refidx.c) */
            ret = chunk_write(&cx, &o->chunk_write, dxpl_id);
            break;
        default:
            H5ZV_GOTO_ERROR("native-only dataset operation %d is not supported by zarr", args->op_type);
    }
done:
    return ret;
}
