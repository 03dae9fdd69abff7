/*
 * convert_verify.c: h5zarr-convert --verify. Every dataset of the store is compared with the source:
 * datasets copied raw chunk by chunk (the stored bytes of each chunk, source against store, which is a
 * checksum of the raw chunk and more; a chunk whose bytes differ is compared by value before it counts as
 * a difference, for chunks that went over as values), the others value by value (variable-length data
 * and strings element by element, references by the path they name); then every attribute by value.
 */
#include "convert.h"

#include <stdlib.h>
#include <string.h>

/* Equal values of memory type `t` at a and b. */
static bool
mem_equal(hid_t t, const unsigned char *a, const unsigned char *b)
{
    H5T_class_t c  = H5Tget_class(t);
    size_t      sz = H5Tget_size(t);
    bool        eq = true;
    if (c == H5T_STRING && H5Tis_variable_str(t) > 0) {
        const char *x = *(char *const *)a, *y = *(char *const *)b;
        return (!x && !y) || (x && y && !strcmp(x, y));
    }
    if (c == H5T_STRING &&
        H5Tget_strpad(t) != H5T_STR_SPACEPAD) /* the bytes after the terminator are no value */
        return !strncmp((const char *)a, (const char *)b, sz);
    if (c == H5T_VLEN) {
        const hvl_t *x = (const hvl_t *)a, *y = (const hvl_t *)b;
        hid_t        base = H5Tget_super(t);
        size_t       bs   = H5Tget_size(base);
        if (x->len != y->len)
            eq = false;
        for (size_t i = 0; eq && i < x->len; i++)
            eq = mem_equal(base, (const unsigned char *)x->p + i * bs, (const unsigned char *)y->p + i * bs);
        H5Tclose(base);
        return eq;
    }
    if (c == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t);
        for (int i = 0; eq && i < n; i++) {
            hid_t  m   = H5Tget_member_type(t, (unsigned)i);
            size_t off = H5Tget_member_offset(t, (unsigned)i);
            eq         = mem_equal(m, a + off, b + off);
            H5Tclose(m);
        }
        return eq;
    }
    if (c == H5T_ARRAY) {
        hid_t  base = H5Tget_super(t);
        size_t bs = H5Tget_size(base), n = bs ? sz / bs : 0;
        for (size_t i = 0; eq && i < n; i++)
            eq = mem_equal(base, a + i * bs, b + i * bs);
        H5Tclose(base);
        return eq;
    }
    return !memcmp(a, b, sz);
}

/* Equal references: both null, or naming the same path (in their own files). */
static bool
refs_equal(H5R_ref_t *a, H5R_ref_t *b)
{
    char       x[4096] = "", y[4096] = "";
    H5R_type_t ta = H5Rget_type(a), tb = H5Rget_type(b);
    bool       na, nb;
    H5E_BEGIN_TRY
    {
        na = cv_ref_null(a) || ta == H5R_BADTYPE || H5Rget_obj_name(a, H5P_DEFAULT, x, sizeof x) < 0;
        nb = cv_ref_null(b) || tb == H5R_BADTYPE || H5Rget_obj_name(b, H5P_DEFAULT, y, sizeof y) < 0;
    }
    H5E_END_TRY
    if (na || nb) /* null, or naming nothing */
        return na == nb;
    return !strcmp(x, y);
}

/* Compares n elements read into a and b with memory type t (refs: H5R_ref_t). Index of the first
 * difference, or -1. */
static long long
first_diff(hid_t t, bool refs, unsigned char *a, unsigned char *b, size_t n)
{
    size_t sz = refs ? sizeof(H5R_ref_t) : H5Tget_size(t);
    if (!refs && !cv_type_varlen(t) && !cv_type_has(t, H5T_STRING)) {
        if (!memcmp(a, b, n * sz))
            return -1;
        for (size_t i = 0; i < n; i++)
            if (memcmp(a + i * sz, b + i * sz, sz))
                return (long long)i;
    }
    for (size_t i = 0; i < n; i++)
        if (refs ? !refs_equal((H5R_ref_t *)a + i, (H5R_ref_t *)b + i)
                 : !mem_equal(t, a + i * sz, b + i * sz))
            return (long long)i;
    return -1;
}

/* Reads the region (or everything: rank < 0) of both datasets and compares. 1 differs, 0 equal, -1 error. */
static int
cmp_region(hid_t sd, hid_t dd, hid_t t, bool refs, int rank, const hsize_t *start, const hsize_t *count,
           const char *path)
{
    hid_t          fs = -1, ts = -1, ms = -1, mt = refs ? H5T_STD_REF : t;
    hssize_t       n;
    unsigned char *a = NULL, *b = NULL;
    int            rc = -1;
    size_t         sz = refs ? sizeof(H5R_ref_t) : H5Tget_size(t);
    if (cv_region_select(sd, dd, rank, start, count, &fs, &ts) < 0)
        goto done;
    if ((n = H5Sget_select_npoints(fs)) < 0)
        goto done;
    if (n == 0 || H5Sget_simple_extent_type(fs) == H5S_NULL) {
        rc = 0;
        goto done;
    }
    ms = rank > 0 ? H5Screate_simple(1, (hsize_t[]){(hsize_t)n}, NULL) : H5Scopy(fs);
    if (ms < 0 || !(a = calloc((size_t)n, sz)) || !(b = calloc((size_t)n, sz)))
        goto done;
    if (H5Dread(sd, mt, ms, fs, H5P_DEFAULT, a) < 0 || H5Dread(dd, mt, ms, ts, H5P_DEFAULT, b) < 0)
        goto done;
    long long i = first_diff(t, refs, a, b, (size_t)n);
    if (i >= 0)
        fprintf(stderr, "h5zarr-convert: verify: %s: element %lld of the region read differs\n", path, i);
    rc = i >= 0;
    if (refs)
        for (hssize_t k = 0; k < n; k++) {
            H5Rdestroy((H5R_ref_t *)a + k);
            H5Rdestroy((H5R_ref_t *)b + k);
        }
    else if (cv_type_varlen(t)) {
        H5Treclaim(t, ms, H5P_DEFAULT, a);
        H5Treclaim(t, ms, H5P_DEFAULT, b);
    }
done:
    free(a);
    free(b);
    cv_spaces_close(ms, fs, ts);
    return rc;
}

/* Reports the chunk at `off` differing (r > 0) or unreadable in the store (r < 0). */
static void
chunk_differs(const cv_obj *o, const hsize_t *off, int r)
{
    fprintf(stderr, "h5zarr-convert: verify: %s: the chunk at offset", o->path);
    for (int k = 0; k < o->rank; k++)
        fprintf(stderr, "%s%llu", k ? "," : " ", (unsigned long long)off[k]);
    fprintf(stderr, " differs from the source's%s\n", r < 0 ? " (the store's can't be read)" : "");
}

static int
verify_raw(hid_t sd, hid_t dd, hid_t t, const cv_obj *o)
{
    cv_chunked     cw;
    hsize_t        count[H5S_MAX_RANK];
    unsigned char *a = NULL, *b = NULL;
    size_t         cap = 0;
    int            rc = -1, bad = 0;
    if (cv_chunked_open(sd, o->dcpl, o->rank, &cw) < 0)
        goto done;
    for (size_t c = 0; c < cw.n && !bad; c++) {
        const cv_chunk *ch  = &cw.v[c];
        hsize_t         tsz = 0;
        unsigned        ma = 0, mb = 0;
        bool            same = false;
        if (H5Dget_chunk_storage_size(dd, ch->off, &tsz) >= 0 && tsz == ch->size) {
            if (tsz > cap) {
                free(a);
                free(b);
                cap = tsz;
                if (!(a = malloc(cap)) || !(b = malloc(cap)))
                    goto done;
            }
            if (H5Dread_chunk(sd, H5P_DEFAULT, ch->off, &ma, a) >= 0 &&
                H5Dread_chunk(dd, H5P_DEFAULT, ch->off, &mb, b) >= 0)
                same = !memcmp(a, b, tsz);
        }
        if (same)
            continue;
        cv_chunked_region(&cw, c, count);
        int r = cmp_region(sd, dd, t, false, o->rank, ch->off, count, o->path);
        if (r != 0) {
            chunk_differs(o, ch->off, r);
            bad = 1;
        }
    }
    rc = bad;
done:
    free(a);
    free(b);
    cv_chunked_free(&cw);
    return rc;
}

static int
verify_values(hid_t sd, hid_t dd, hid_t t, const cv_obj *o)
{
    hid_t   sp = H5Dget_space(sd);
    hsize_t dims[H5S_MAX_RANK], start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK], rows;
    bool    refs = o->mode == CV_DATA_REFS;
    int     rc   = 0;
    if (sp < 0)
        return -1;
    if (o->rank <= 0 || refs) {
        H5Sclose(sp);
        return cmp_region(sd, dd, t, refs, -1, NULL, NULL, o->path);
    }
    H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Sclose(sp);
    for (int k = 0; k < o->rank; k++)
        if (!dims[k])
            return 0;
    rows = cv_slab_rows(o->dcpl, o->rank, dims, H5Tget_size(t));
    for (hsize_t s = 0; s < dims[0] && rc == 0; s += rows) {
        memcpy(count, dims, sizeof(hsize_t) * (size_t)o->rank);
        start[0] = s;
        count[0] = s + rows > dims[0] ? dims[0] - s : rows;
        rc       = cmp_region(sd, dd, t, false, o->rank, start, count, o->path);
    }
    return rc;
}

/* Attributes: every one of the source's (but the dimension-scale bookkeeping) equal in the store. */
typedef struct vattr {
    hid_t       d;
    const char *path;
    int         bad;
} vattr;

static herr_t
vattr_cb(hid_t s, const char *name, const H5A_info_t *ai, void *op)
{
    vattr         *c = op;
    hid_t          a = -1, b = -1, t = -1, sp = -1;
    hssize_t       n;
    unsigned char *x = NULL, *y = NULL;
    (void)ai;
    if (cv_is_dimattr(name))
        return 0;
    if ((a = H5Aopen(s, name, H5P_DEFAULT)) < 0 || (t = H5Aget_type(a)) < 0 || (sp = H5Aget_space(a)) < 0)
        goto bad;
    H5E_BEGIN_TRY { b = H5Aopen(c->d, name, H5P_DEFAULT); }
    H5E_END_TRY
    if (b < 0) {
        fprintf(stderr, "h5zarr-convert: verify: %s: attribute '%s' is missing in the store\n", c->path,
                name);
        goto bad;
    }
    n           = H5Sget_simple_extent_type(sp) == H5S_NULL ? 0 : H5Sget_simple_extent_npoints(sp);
    bool   refs = H5Tget_class(t) == H5T_REFERENCE;
    size_t sz   = refs ? sizeof(H5R_ref_t) : H5Tget_size(t);
    if (n > 0) {
        hid_t mt = refs ? H5T_STD_REF : t;
        if (!(x = calloc((size_t)n, sz)) || !(y = calloc((size_t)n, sz)) || H5Aread(a, mt, x) < 0 ||
            H5Aread(b, mt, y) < 0)
            goto bad;
        if (first_diff(t, refs, x, y, (size_t)n) >= 0) {
            fprintf(stderr, "h5zarr-convert: verify: %s: attribute '%s' differs\n", c->path, name);
            c->bad = 1;
        }
        if (refs)
            for (hssize_t k = 0; k < n; k++) {
                H5Rdestroy((H5R_ref_t *)x + k);
                H5Rdestroy((H5R_ref_t *)y + k);
            }
        else if (cv_type_varlen(t)) {
            H5Treclaim(t, sp, H5P_DEFAULT, x);
            H5Treclaim(t, sp, H5P_DEFAULT, y);
        }
    }
    goto done;
bad:
    c->bad = 1;
done:
    free(x);
    free(y);
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    if (b >= 0)
        H5Aclose(b);
    if (a >= 0)
        H5Aclose(a);
    return 0;
}

long
cv_verify(hid_t src, hid_t dst, const cv_list *l)
{
    long bad = 0;
    for (size_t i = 0; i < l->n; i++) {
        const cv_obj *o = &l->v[i];
        hid_t         s = -1, d = -1, t = -1;
        int           r = 0;
        if (o->kind != CV_DATASET && o->kind != CV_GROUP && o->kind != CV_TYPE)
            continue;
        /* a dataset: the scan's source dataset, still open (closed by cv_list_free) or held again */
        if (o->kind == CV_DATASET)
            (void)cv_obj_hold(src, o);
        s = o->kind == CV_DATASET ? o->sd : H5Oopen(src, o->path, H5P_DEFAULT);
        if (s < 0 || (d = H5Oopen(dst, o->path, H5P_DEFAULT)) < 0) {
            fprintf(stderr, "h5zarr-convert: verify: %s: can't be opened in the store\n", o->path);
            r = 1;
        }
        else if (o->kind == CV_DATASET && o->mode != CV_DATA_NONE && (t = H5Dget_type(s)) >= 0)
            r = o->mode == CV_DATA_RAW ? verify_raw(s, d, t, o) : verify_values(s, d, t, o);
        if (s >= 0 && d >= 0) {
            vattr c = {d, o->path, 0};
            H5Aiterate2(s, H5_INDEX_NAME, H5_ITER_INC, NULL, vattr_cb, &c);
            r |= c.bad;
        }
        if (r)
            bad++;
        if (t >= 0)
            H5Tclose(t);
        if (d >= 0)
            H5Oclose(d);
        if (s >= 0 && o->kind != CV_DATASET)
            H5Oclose(s);
        if (o->kind == CV_DATASET)
            cv_obj_drop(o);
    }
    return bad;
}
