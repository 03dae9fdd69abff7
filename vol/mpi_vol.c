/*
 * mpi_vol.c: zarr stores opened with H5Pset_fapl_mpio: the communicator of a file, collective metadata
 * steps (written by rank 0 alone), the wrapper store that keeps the other ranks from writing metadata,
 * and the two-phase exchange of pieces of chunks shared between ranks. The scheme is in mpi_vol.h and
 * docs/HACKING.md ("MPI"). Compiled only against a parallel HDF5 (H5_HAVE_PARALLEL).
 *
 * Every MPI call here runs on the thread HDF5 called the connector on (never from the engine's
 * workers); the wrapper store's ops, which workers do call, only read flags set before the job started.
 */
#include "mpi_vol.h"

#ifdef H5_HAVE_PARALLEL

#include <H5VLconnector.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One queued piece: the part of chunk `coords` of dataset `path` that this rank's selection covers
 * (box `start`/`count` in array coordinates), its bytes in memory form, C order. */
typedef struct piece {
    char    *path;
    int      ndim;
    uint64_t coords[ZARR_MAX_DIMS];
    uint64_t start[ZARR_MAX_DIMS], count[ZARR_MAX_DIMS];
    size_t   esize, nbytes;
    void    *data;
} piece;

struct h5zv_mpi {
    int      rc; /* the file + open steps (h5zv_mpi_begin..end) */
    MPI_Comm comm;
    int      rank, size;
    int      depth; /* nested steps: only the outermost synchronizes */
    piece   *pieces;
    size_t   npieces, cap;
    /* the wrapper store of ranks other than 0 (NULL on rank 0) */
    struct mpi_store *store;
};

/* ---- the wrapper store (ranks other than 0) ------------------------------------------------------------
 * Forwards every read. Writes: metadata documents never (rank 0 writes them), chunk values only outside
 * a step (inside one, rank 0 does every write of the step: a resize's edge chunks, an overwrite's stale
 * keys). del_prefix and rename only come from metadata operations: rank 0's. */
typedef struct mpi_store {
    zarr_store_fwd fwd;
    volatile int   in_step;
} mpi_store;

static bool
is_meta_key(const char *key)
{
    static const char *docs[] = {"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata", ZARR_HIDDEN_DOC};
    const char        *leaf   = strrchr(key, '/');
    leaf                      = leaf ? leaf + 1 : key;
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
        if (!strcmp(leaf, docs[i]))
            return true;
    return false;
}

static bool
dropped(zarr_store *s, const char *key)
{
    return ((mpi_store *)s)->in_step || is_meta_key(key);
}

static int
ms_set(zarr_store *s, const char *key, const void *data, size_t n)
{
    return dropped(s, key) ? ZARR_OK : zarr_store_fwd_set(s, key, data, n);
}

static int
ms_del(zarr_store *s, const char *key)
{
    return dropped(s, key) ? ZARR_OK : zarr_store_fwd_del(s, key);
}

static int
ms_del_prefix(zarr_store *s, const char *prefix)
{
    (void)s, (void)prefix;
    return ZARR_OK;
}

static int
ms_rename(zarr_store *s, const char *from, const char *to)
{
    (void)s, (void)from, (void)to;
    return ZARR_OK;
}

static int
ms_set_many(zarr_store *s, size_t n, const char *const *keys, const void *const *data, const size_t *sizes,
            int *results)
{
    const char **ks = malloc((n ? n : 1) * sizeof *ks);
    const void **ds = malloc((n ? n : 1) * sizeof *ds);
    size_t      *ns = malloc((n ? n : 1) * sizeof *ns), *at = malloc((n ? n : 1) * sizeof *at), m = 0;
    int         *rs = malloc((n ? n : 1) * sizeof *rs), rc = ZARR_OK;
    if (!ks || !ds || !ns || !at || !rs) {
        rc = zarr_error(ZARR_ENOMEM, "out of memory writing %zu keys", n);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        results[i] = ZARR_OK;
        if (dropped(s, keys[i]))
            continue;
        ks[m] = keys[i], ds[m] = data[i], ns[m] = sizes[i], at[m++] = i;
    }
    if (m) {
        rc = zarr_store_fwd_set_many(s, m, ks, ds, ns, rs);
        for (size_t j = 0; j < m; j++)
            results[at[j]] = rs[j];
    }
done:
    free(ks), free(ds), free(ns), free(at), free(rs);
    return rc;
}

static const zarr_store_ops mpi_store_ops = {
    .name       = "MPI rank view",
    .get        = zarr_store_fwd_get,
    .get_range  = zarr_store_fwd_get_range,
    .set        = ms_set,
    .del        = ms_del,
    .del_prefix = ms_del_prefix,
    .list       = zarr_store_fwd_list,
    .exists     = zarr_store_fwd_exists,
    .get_many   = zarr_store_fwd_get_many,
    .set_many   = ms_set_many,
    .rename     = ms_rename,
    .flush      = zarr_store_fwd_flush,
    .destroy    = zarr_store_fwd_destroy,
    .mtime      = zarr_store_fwd_mtime,
    .size       = zarr_store_fwd_size,
    .get_into   = zarr_store_fwd_get_into,
    .list_keys  = zarr_store_fwd_list_keys,
    .sync       = zarr_store_fwd_sync, /* durable=1: each rank's write job ends with its sync pass */
    /* no writer ops: a shard written in pieces is gathered and goes through ms_set (dropped in steps) */
};

/* ---- communicators and steps ------------------------------------------------------------------------ */
static void
mpi_decref(h5zv_mpi *m)
{
    if (!m || --m->rc > 0)
        return;
    for (size_t i = 0; i < m->npieces; i++)
        free(m->pieces[i].path), free(m->pieces[i].data);
    free(m->pieces);
    MPI_Comm_free(&m->comm);
    free(m);
}

void
h5zv_mpi_free(h5zv_mpi *m)
{
    mpi_decref(m);
}

/* The open under way (h5zv_mpi_open_begin..end; under HDF5's global lock, one at a time) and how deep
 * opens nest (an external link's store opened during an open is not a collective step). */
static h5zv_mpi *opening;
static bool      opening_attached;
static int       open_depth;
/* The fapl the open uses: the caller's connector and info on the default driver. HDF5 duplicates the
 * communicator of an MPI-IO fapl on every H5Pcopy (MPI_Comm_dup: collective), and the connector copies
 * the fapl on one rank at a time (file_new, H5Fget_access_plist): those copies must not hold it. */
static hid_t opening_fapl = H5I_INVALID_HID;

int
h5zv_mpi_open_begin(hid_t fapl_id)
{
    MPI_Comm  comm = MPI_COMM_NULL;
    MPI_Info  info = MPI_INFO_NULL;
    h5zv_mpi *m;
    int       inited = 0;

    if (open_depth++ > 0 || fapl_id < 0 || fapl_id == H5P_DEFAULT || H5Pget_driver(fapl_id) != H5FD_MPIO)
        return 0;
    if (MPI_Initialized(&inited) != MPI_SUCCESS || !inited) {
        open_depth--;
        h5zv_err_push(__func__, __LINE__, "the file access list selects MPI-IO but MPI is not initialized");
        return -1;
    }
    if (H5Pget_fapl_mpio(fapl_id, &comm, &info) < 0) {
        open_depth--;
        h5zv_err_push(__func__, __LINE__, "can't get the communicator of the MPI-IO file access list");
        return -1;
    }
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (!(m = calloc(1, sizeof *m))) {
        MPI_Comm_free(&comm);
        open_depth--;
        h5zv_err_push(__func__, __LINE__, "out of memory");
        return -1;
    }
    m->rc   = 1;
    m->comm = comm; /* a duplicate: ours */
    MPI_Comm_rank(comm, &m->rank);
    MPI_Comm_size(comm, &m->size);
    /* a new list with the caller's connector and its info (the connector's settings), nothing of MPI */
    {
        hid_t vol  = H5I_INVALID_HID;
        void *vinf = NULL;
        bool  ok   = (opening_fapl = H5Pcreate(H5P_FILE_ACCESS)) >= 0 && H5Pget_vol_id(fapl_id, &vol) >= 0 &&
                  H5Pget_vol_info(fapl_id, &vinf) >= 0 && H5Pset_vol(opening_fapl, vol, vinf) >= 0;
        if (vinf && vol >= 0)
            H5VLfree_connector_info(vol, vinf);
        h5zv_close(vol);
        if (!ok) {
            h5zv_close(opening_fapl);
            opening_fapl = H5I_INVALID_HID;
        }
    }
    if (opening_fapl < 0) {
        opening_fapl = H5I_INVALID_HID;
        MPI_Comm_free(&m->comm);
        free(m);
        open_depth--;
        h5zv_err_push(__func__, __LINE__, "can't copy the MPI-IO file access list");
        return -1;
    }
    opening          = m;
    opening_attached = false;
    return 1;
}

hid_t
h5zv_mpi_opening_fapl(hid_t fapl_id)
{
    return opening && opening_fapl >= 0 ? opening_fapl : fapl_id;
}

int
h5zv_mpi_opening_rank(void)
{
    return opening ? opening->rank : 0;
}

bool
h5zv_mpi_opening_share(bool ok)
{
    int v = ok;
    if (!opening)
        return ok;
    if (MPI_Bcast(&v, 1, MPI_INT, 0, opening->comm) != MPI_SUCCESS)
        return false;
    return v != 0;
}

int
h5zv_mpi_attach(h5zv_file *f)
{
    mpi_store *w;
    if (!opening || opening_attached || open_depth != 1)
        return 0;
    f->mpi = opening;
    opening->rc++;
    opening_attached = true;
    if (opening->rank == 0)
        return 0;
    if (!(w = calloc(1, sizeof *w)) || zarr_store_fwd_init(&w->fwd, &mpi_store_ops, f->store) != ZARR_OK) {
        free(w);
        h5zv_err_push(__func__, __LINE__, "out of memory");
        return -1;
    }
    f->store       = &w->fwd.base;
    opening->store = w;
    return 0;
}

/* The agreed outcome of a step or exchange: the lowest rank that failed (size when none). */
static int
agree(h5zv_mpi *m, bool ok)
{
    int mine = ok ? m->size : m->rank, low = 0;
    if (MPI_Allreduce(&mine, &low, 1, MPI_INT, MPI_MIN, m->comm) != MPI_SUCCESS)
        return 0;
    return low;
}

void *
h5zv_mpi_open_end(void *o)
{
    h5zv_mpi *m = opening;
    int       low;
    if (--open_depth > 0 || !m)
        return o;
    opening = NULL;
    h5zv_close(opening_fapl);
    opening_fapl = H5I_INVALID_HID;
    low          = agree(m, o != NULL);
    if (low < m->size && o) {
        h5zv_errs *es = h5zv_err_save();
        h5zv_obj_free(o);
        h5zv_err_restore(es);
        o = NULL;
        h5zv_err_push(__func__, __LINE__, "the collective file create/open failed on rank %d of %d", low,
                      m->size);
    }
    else if (low < m->size)
        h5zv_err_push(__func__, __LINE__, "(the collective file create/open failed on rank %d of %d)", low,
                      m->size);
    mpi_decref(m); /* the file holds its own reference (attach) */
    return o;
}

void
h5zv_mpi_begin(h5zv_file *f)
{
    h5zv_mpi *m = f ? f->mpi : NULL;
    if (!m)
        return;
    m->rc++;
    if (m->depth++ > 0)
        return;
    if (m->store)
        m->store->in_step = 1;
    if (m->rank == 0)
        MPI_Barrier(m->comm); /* the others have run the step (reading only) */
}

bool
h5zv_mpi_end(h5zv_file *f, bool ok, const char *what)
{
    h5zv_mpi *m = f ? f->mpi : NULL;
    int       low;
    if (!m)
        return ok;
    if (--m->depth > 0) {
        mpi_decref(m);
        return ok;
    }
    if (m->rank != 0)
        MPI_Barrier(m->comm); /* rank 0 now runs it and writes */
    if (m->store)
        m->store->in_step = 0;
    low = agree(m, ok);
    if (low < m->size)
        h5zv_err_push(__func__, __LINE__, "%s%s of '%s' failed on rank %d of %d%s", ok ? "" : "(", what,
                      f->name, low, m->size, ok ? "" : ")");
    ok = low == m->size;
    mpi_decref(m);
    return ok;
}

bool
h5zv_mpi_collective(h5zv_file *f, hid_t dxpl_id)
{
    H5FD_mpio_xfer_t mode = H5FD_MPIO_INDEPENDENT;
    if (!f->mpi || dxpl_id < 0 || dxpl_id == H5P_DEFAULT)
        return false;
    if (H5Pget_dxpl_mpio(dxpl_id, &mode) < 0) {
        H5Eclear2(H5E_DEFAULT);
        return false;
    }
    return mode == H5FD_MPIO_COLLECTIVE;
}

/* ---- raw data ------------------------------------------------------------------------------------------ */
/* Copies box `sub` (start/count, array coordinates) between a C-order buffer of box `big` and a dense
 * C-order buffer of `sub` (to_sub: big -> sub). */
static void
box_copy(int ndim, const uint64_t *bstart, const uint64_t *bcount, void *big, const uint64_t *sstart,
         const uint64_t *scount, void *sub, size_t esize, bool to_sub)
{
    uint64_t idx[ZARR_MAX_DIMS] = {0}, rows = 1;
    size_t   run = (size_t)scount[ndim - 1] * esize;
    for (int d = 0; d < ndim - 1; d++)
        rows *= scount[d];
    for (uint64_t r = 0; r < rows; r++) {
        uint64_t off = 0;
        for (int d = 0; d < ndim; d++)
            off = off * bcount[d] + (sstart[d] + (d < ndim - 1 ? idx[d] : 0) - bstart[d]);
        uint8_t *bp = (uint8_t *)big + off * esize, *sp = (uint8_t *)sub + r * run;
        if (to_sub)
            memcpy(sp, bp, run);
        else
            memcpy(bp, sp, run);
        for (int d = ndim - 2; d >= 0; d--) {
            if (++idx[d] < scount[d])
                break;
            idx[d] = 0;
        }
    }
}

static int
queue_piece(h5zv_mpi *m, const char *path, int ndim, const uint64_t *coords, const uint64_t *start,
            const uint64_t *count, size_t esize, const uint64_t *bstart, const uint64_t *bcount,
            const void *buf)
{
    piece *p;
    size_t n = esize;
    for (int d = 0; d < ndim; d++)
        n *= count[d];
    if (m->npieces == m->cap) {
        size_t c = m->cap ? 2 * m->cap : 16;
        piece *g = realloc(m->pieces, c * sizeof *g);
        if (!g)
            return zarr_error(ZARR_ENOMEM, "out of memory queueing a piece of a chunk of '/%s'", path);
        m->pieces = g, m->cap = c;
    }
    p = &m->pieces[m->npieces];
    memset(p, 0, sizeof *p);
    if (!(p->path = strdup(path)) || !(p->data = malloc(n ? n : 1))) {
        free(p->path);
        return zarr_error(ZARR_ENOMEM, "out of memory queueing a piece of a chunk of '/%s'", path);
    }
    p->ndim = ndim, p->esize = esize, p->nbytes = n;
    for (int d = 0; d < ndim; d++)
        p->coords[d] = coords[d], p->start[d] = start[d], p->count[d] = count[d];
    box_copy(ndim, bstart, bcount, (void *)buf, start, count, p->data, esize, true);
    m->npieces++;
    return ZARR_OK;
}

int
h5zv_mpi_write(h5zv_file *f, const char *path, zarr_array *a, const zarr_region *r, const void *buf,
               size_t esize)
{
    h5zv_mpi              *m  = f->mpi;
    const zarr_array_meta *am = zarr_array_meta_get(a);
    int                    nd = am->ndim, rc = ZARR_OK;
    uint64_t               s[ZARR_MAX_DIMS], c[ZARR_MAX_DIMS], ilo[ZARR_MAX_DIMS], ihi[ZARR_MAX_DIMS];
    uint64_t               clo[ZARR_MAX_DIMS], chi[ZARR_MAX_DIMS], k[ZARR_MAX_DIMS];
    bool                   inner = true, whole = true;
    void                  *tmp = NULL;

    if (!m || nd == 0)
        return zarr_array_write(a, r, buf);
    /* the region as a box; the chunk range it touches (clo..chi) and the chunks it covers whole (ilo..ihi) */
    for (int d = 0; d < nd; d++) {
        uint64_t cs = am->chunks[d], blk = r->block[d] ? r->block[d] : 1,
                 st = r->stride[d] ? r->stride[d] : 1;
        if (r->count[d] > 1 && st != blk)
            return zarr_error(ZARR_EUNSUPPORTED,
                              "can't write '/%s' through MPI-IO: dimension %d of the selection is strided "
                              "(stride %llu, block %llu); select one block per rank",
                              path, d, (unsigned long long)st, (unsigned long long)blk);
        s[d]   = r->start[d];
        c[d]   = r->count[d] * blk;
        clo[d] = s[d] / cs;
        chi[d] = (s[d] + c[d] - 1) / cs;
        ilo[d] = (s[d] + cs - 1) / cs;
        ihi[d] = s[d] + c[d] == am->shape[d] ? chi[d] + 1 : (s[d] + c[d]) / cs; /* exclusive */
        if (ilo[d] >= ihi[d])
            inner = false;
        if (ilo[d] != clo[d] || ihi[d] != chi[d] + 1)
            whole = false;
    }
    if (whole) /* chunk-aligned: every chunk touched is ours alone */
        return zarr_array_write(a, r, buf);
    if (inner) {
        /* the chunks covered whole, in one engine call */
        uint64_t    is[ZARR_MAX_DIMS], ic[ZARR_MAX_DIMS], n = esize;
        zarr_region ir;
        for (int d = 0; d < nd; d++) {
            uint64_t e = ihi[d] * am->chunks[d];
            is[d]      = ilo[d] * am->chunks[d];
            ic[d]      = (e < am->shape[d] ? e : am->shape[d]) - is[d];
            n *= ic[d];
        }
        if (!(tmp = malloc(n ? n : 1)))
            return zarr_error(ZARR_ENOMEM, "out of memory writing '/%s'", path);
        box_copy(nd, s, c, (void *)buf, is, ic, tmp, esize, true);
        zarr_region_box(nd, is, ic, &ir);
        rc = zarr_array_write(a, &ir, tmp);
        free(tmp);
        if (rc != ZARR_OK)
            return rc;
    }
    /* every other chunk touched: a piece for its owner */
    for (int d = 0; d < nd; d++)
        k[d] = clo[d];
    for (;;) {
        bool full = true;
        for (int d = 0; d < nd; d++)
            if (k[d] < ilo[d] || k[d] >= ihi[d])
                full = false;
        if (!full) {
            uint64_t ps[ZARR_MAX_DIMS], pc[ZARR_MAX_DIMS];
            for (int d = 0; d < nd; d++) {
                uint64_t lo = k[d] * am->chunks[d], hi = lo + am->chunks[d];
                ps[d] = s[d] > lo ? s[d] : lo;
                pc[d] = (s[d] + c[d] < hi ? s[d] + c[d] : hi) - ps[d];
            }
            if ((rc = queue_piece(m, path, nd, k, ps, pc, esize, s, c, buf)) != ZARR_OK)
                return rc;
        }
        int d = nd - 1;
        for (; d >= 0; d--) {
            if (++k[d] <= chi[d])
                break;
            k[d] = clo[d];
        }
        if (d < 0)
            break;
    }
    return ZARR_OK;
}

/* The owner of a chunk: its coordinates hashed over the ranks. */
static int
owner_of(const h5zv_mpi *m, int ndim, const uint64_t *coords)
{
    uint64_t h = 1469598103934665603ULL;
    for (int d = 0; d < ndim; d++)
        h = (h ^ coords[d]) * 1099511628211ULL;
    return (int)(h % (uint64_t)m->size);
}

/* Wire form of a piece: u32 path length, path bytes, u32 ndim, u64 esize, ndim x (coords, start,
 * count) u64, u64 nbytes, the bytes. Native byte order (the ranks run one build on one kind of node). */
typedef struct wire {
    uint8_t *p;
    size_t   n, cap;
} wire;

static int
wire_put(wire *w, const void *src, size_t n)
{
    if (w->n + n > w->cap) {
        size_t   c = w->cap ? w->cap : 4096;
        uint8_t *g;
        while (c < w->n + n)
            c *= 2;
        if (!(g = realloc(w->p, c)))
            return -1;
        w->p = g, w->cap = c;
    }
    memcpy(w->p + w->n, src, n);
    w->n += n;
    return 0;
}

static int
wire_piece(wire *w, const piece *p)
{
    uint32_t pl = (uint32_t)strlen(p->path), nd = (uint32_t)p->ndim;
    uint64_t es = p->esize, nb = p->nbytes;
    if (wire_put(w, &pl, 4) || wire_put(w, p->path, pl) || wire_put(w, &nd, 4) || wire_put(w, &es, 8))
        return -1;
    for (int d = 0; d < p->ndim; d++)
        if (wire_put(w, &p->coords[d], 8) || wire_put(w, &p->start[d], 8) || wire_put(w, &p->count[d], 8))
            return -1;
    return wire_put(w, &nb, 8) || wire_put(w, p->data, p->nbytes);
}

/* Reads one piece from `buf` at *at (the data is borrowed from buf); false when malformed. */
static bool
unwire_piece(const uint8_t *buf, size_t n, size_t *at, piece *p, char *path, size_t pathcap)
{
    uint32_t pl, nd;
    uint64_t es, nb;
#define TAKE(dst, k)                                                                                         \
    do {                                                                                                     \
        if (n - *at < (k))                                                                                   \
            return false;                                                                                    \
        memcpy((dst), buf + *at, (k));                                                                       \
        *at += (k);                                                                                          \
    } while (0)
    TAKE(&pl, 4);
    if (pl >= pathcap)
        return false;
    TAKE(path, pl);
    path[pl] = '\0';
    TAKE(&nd, 4);
    if (nd < 1 || nd > ZARR_MAX_DIMS)
        return false;
    TAKE(&es, 8);
    memset(p, 0, sizeof *p);
    p->path = path, p->ndim = (int)nd, p->esize = es;
    for (uint32_t d = 0; d < nd; d++) {
        TAKE(&p->coords[d], 8);
        TAKE(&p->start[d], 8);
        TAKE(&p->count[d], 8);
    }
    TAKE(&nb, 8);
    if (n - *at < nb)
        return false;
    p->nbytes = nb;
    p->data   = (void *)(buf + *at);
    *at += nb;
#undef TAKE
    return true;
}

/* Applies the pieces of one chunk (all of dataset `path`, chunk coords of ps[0]) in order: one read of
 * the chunk, the pieces placed, one write. */
static int
apply_chunk(h5zv_file *f, const char *path, piece *ps, size_t n)
{
    h5zv_node             *node = h5zv_node_get(f, path);
    const zarr_array_meta *am;
    uint64_t               cs[ZARR_MAX_DIMS], cc[ZARR_MAX_DIMS], total;
    zarr_region            cr;
    void                  *buf = NULL;
    int                    ret = -1;

    if (!node || node->type != ZARR_NODE_ARRAY || !node->a)
        H5ZV_GOTO_ERROR("can't apply pieces of a shared chunk: '/%s' is not a dataset here", path);
    am = zarr_array_meta_get(node->a);
    if (am->ndim != ps[0].ndim)
        H5ZV_GOTO_ERROR("can't apply pieces of a shared chunk of '/%s': rank %d, pieces of rank %d", path,
                        am->ndim, ps[0].ndim);
    total = ps[0].esize;
    for (int d = 0; d < am->ndim; d++) {
        cs[d] = ps[0].coords[d] * am->chunks[d];
        if (cs[d] >= am->shape[d])
            H5ZV_GOTO_ERROR("piece of chunk %llu (dimension %d) outside '/%s'",
                            (unsigned long long)ps[0].coords[d], d, path);
        cc[d] = am->shape[d] - cs[d] < am->chunks[d] ? am->shape[d] - cs[d] : am->chunks[d];
        total *= cc[d];
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t want = ps[i].esize;
        for (int d = 0; d < am->ndim; d++) {
            if (ps[i].start[d] < cs[d] || ps[i].count[d] > cc[d] ||
                ps[i].start[d] - cs[d] > cc[d] - ps[i].count[d])
                H5ZV_GOTO_ERROR("a piece for '/%s' lies outside its chunk (dimension %d)", path, d);
            want *= ps[i].count[d];
        }
        if (ps[i].esize != ps[0].esize || want != ps[i].nbytes)
            H5ZV_GOTO_ERROR("a piece for '/%s' has %zu bytes, its box needs %llu", path, ps[i].nbytes,
                            (unsigned long long)want);
    }
    if (!(buf = malloc(total ? total : 1)))
        H5ZV_GOTO_ERROR("out of memory for a chunk of '/%s'", path);
    zarr_region_box(am->ndim, cs, cc, &cr);
    if (zarr_array_flush(node->a) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't write cached chunks of '/%s'", path);
    zarr_array_discard_cache(node->a); /* the chunk as stored now, not as this rank last saw it */
    if (zarr_array_read(node->a, &cr, buf) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't read a shared chunk of '/%s'", path);
    for (size_t i = 0; i < n; i++)
        box_copy(am->ndim, cs, cc, buf, ps[i].start, ps[i].count, ps[i].data, ps[i].esize, false);
    if (zarr_array_write(node->a, &cr, buf) != ZARR_OK)
        H5ZV_GOTO_ZERR("can't write a shared chunk of '/%s'", path);
    ret = 0;
done:
    free(buf);
    return ret;
}

static int
piece_cmp(const void *a, const void *b)
{
    const piece *x = a, *y = b;
    int          c = strcmp(x->path, y->path);
    if (c)
        return c;
    for (int d = 0; d < x->ndim && d < y->ndim; d++)
        if (x->coords[d] != y->coords[d])
            return x->coords[d] < y->coords[d] ? -1 : 1;
    /* arrival order (rank, then queue order) breaks ties: the sort keeps it through `nbytes`' slot */
    return (x->data > y->data) - (x->data < y->data);
}

/* Drops every cached chunk of the file's arrays (after other ranks wrote). */
static void
drop_caches(h5zv_file *f)
{
    for (size_t b = 0; f->buckets && b < f->nbuckets; b++)
        for (h5zv_node *n = f->buckets[b]; n; n = n->next)
            if (n->type == ZARR_NODE_ARRAY && n->a && !n->deleted) {
                (void)zarr_array_flush(n->a);
                zarr_array_discard_cache(n->a);
            }
}

int
h5zv_mpi_sync(h5zv_file *f, const char *path, bool ok)
{
    h5zv_mpi *m      = f->mpi;
    wire     *out    = NULL;
    int      *scount = NULL, *rcount = NULL, *sdisp = NULL, *rdisp = NULL, low, ret = -1;
    uint8_t  *sbuf = NULL, *rbuf = NULL;
    piece    *got      = NULL;
    char(*paths)[1024] = NULL;
    size_t ngot = 0, keep = 0, stot = 0, rtot = 0;

    if (!m)
        return ok ? 0 : -1;
    /* this rank's pieces (of `path`, or all) by owner */
    if (!(out = calloc((size_t)m->size, sizeof *out)) ||
        !(scount = calloc((size_t)m->size, sizeof *scount)) ||
        !(rcount = calloc((size_t)m->size, sizeof *rcount)) ||
        !(sdisp = calloc((size_t)m->size, sizeof *sdisp)) ||
        !(rdisp = calloc((size_t)m->size, sizeof *rdisp))) {
        /* can't take part in the exchange: the other ranks would wait forever */
        fprintf(stderr, "h5zarr: out of memory in the MPI exchange of '%s' (rank %d): aborting\n", f->name,
                m->rank);
        MPI_Abort(m->comm, 1);
    }
    for (size_t i = 0; ok && i < m->npieces; i++) {
        piece *p = &m->pieces[i];
        if (path && strcmp(p->path, path))
            continue;
        if (wire_piece(&out[owner_of(m, p->ndim, p->coords)], p) < 0) {
            ok = false;
            h5zv_err_push(__func__, __LINE__, "out of memory sending pieces of '/%s'", p->path);
        }
    }
    for (int r = 0; ok && r < m->size; r++) {
        if (out[r].n > (size_t)INT32_MAX - stot) {
            ok = false;
            h5zv_err_push(__func__, __LINE__, "more than 2 GiB of shared-chunk pieces in one exchange");
            break;
        }
        scount[r] = (int)out[r].n;
        sdisp[r]  = (int)stot;
        stot += out[r].n;
    }
    /* the exchange runs even after a failure here (with nothing sent), so that no rank waits forever */
    if (!ok)
        for (int r = 0; r < m->size; r++)
            scount[r] = 0, stot = 0;
    MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, m->comm);
    if (ok) {
        for (int r = 0; r < m->size; r++) {
            rdisp[r] = (int)rtot;
            rtot += (size_t)rcount[r];
        }
        if (!(sbuf = malloc(stot ? stot : 1)) || !(rbuf = malloc(rtot ? rtot : 1))) {
            ok = false;
            h5zv_err_push(__func__, __LINE__, "out of memory");
        }
        for (int r = 0; sbuf && r < m->size; r++)
            if (out[r].n)
                memcpy(sbuf + sdisp[r], out[r].p, out[r].n);
    }
    {
        /* a rank that failed sends nothing but still receives what the others send it (their counts
         * toward it stand), into a buffer of that size, or aborts */
        static uint8_t none;
        if (!ok && !rbuf) {
            rtot = 0;
            for (int r = 0; r < m->size; r++) {
                rdisp[r] = (int)rtot;
                rtot += (size_t)rcount[r];
            }
            if (!(rbuf = malloc(rtot ? rtot : 1))) {
                fprintf(stderr, "h5zarr: out of memory in the MPI exchange of '%s' (rank %d): aborting\n",
                        f->name, m->rank);
                MPI_Abort(m->comm, 1);
            }
        }
        for (int r = 0; !ok && r < m->size; r++)
            scount[r] = sdisp[r] = 0;
        MPI_Alltoallv(ok ? sbuf : &none, scount, sdisp, MPI_BYTE, rbuf, rcount, rdisp, MPI_BYTE, m->comm);
    }
    /* the owner's part: group the pieces by chunk, apply each chunk once */
    if (ok && rtot) {
        size_t at = 0, cap = 64;
        got   = malloc(cap * sizeof *got);
        paths = malloc(cap * sizeof *paths);
        while (ok && at < rtot) {
            if (ngot == cap) {
                cap *= 2;
                piece *g        = realloc(got, cap * sizeof *got);
                char(*pp)[1024] = g ? realloc(paths, cap * sizeof *paths) : NULL;
                if (g)
                    got = g;
                if (pp)
                    paths = pp;
                if (!g || !pp) {
                    ok = false;
                    break;
                }
            }
            if (!got || !paths || !unwire_piece(rbuf, rtot, &at, &got[ngot], paths[ngot], sizeof paths[0])) {
                ok = false;
                h5zv_err_push(__func__, __LINE__,
                              "a malformed or oversized piece in the shared-chunk exchange");
                break;
            }
            ngot++;
        }
        for (size_t i = 0; i < ngot; i++)
            got[i].path = paths[i]; /* realloc may have moved them */
        if (ok) {
            /* stable by arrival: data pointers grow with the arrival order within rbuf */
            qsort(got, ngot, sizeof *got, piece_cmp);
            for (size_t i = 0; ok && i < ngot;) {
                size_t j = i + 1;
                while (j < ngot && !strcmp(got[j].path, got[i].path) &&
                       !memcmp(got[j].coords, got[i].coords, sizeof got[i].coords))
                    j++;
                if (apply_chunk(f, got[i].path, &got[i], j - i) < 0)
                    ok = false;
                i = j;
            }
        }
    }
    low = agree(m, ok); /* also the barrier after which every owner's write is in the store */
    drop_caches(f);
    if (low < m->size)
        h5zv_err_push(__func__, __LINE__,
                      "%sthe collective call on '%s' (H5Dwrite/H5Dread/H5Dclose/H5Fclose with the "
                      "shared-chunk exchange) failed on rank %d of %d%s",
                      ok ? "" : "(", path ? path : f->name, low, m->size, ok ? "" : ")");
    else
        ret = 0;
    /* the pieces sent are done with (also after a failure: the error says the write did not happen) */
    for (size_t i = 0; i < m->npieces; i++) {
        if (path && strcmp(m->pieces[i].path, path)) {
            m->pieces[keep++] = m->pieces[i];
            continue;
        }
        free(m->pieces[i].path), free(m->pieces[i].data);
    }
    m->npieces = keep;
    for (int r = 0; out && r < m->size; r++)
        free(out[r].p);
    free(out), free(scount), free(rcount), free(sdisp), free(rdisp), free(sbuf), free(rbuf), free(got),
        free(paths);
    return ret;
}

#endif /* H5_HAVE_PARALLEL */
