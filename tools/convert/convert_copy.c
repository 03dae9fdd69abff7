/*
 * convert_copy.c: the structure pass of h5zarr-convert: every group, named type, dataset (created, not
 * yet written), link and attribute of the scan's list made again in the store, in the source's order,
 * with the source's creation properties (chunks, filters, fill value, creation-order tracking, character
 * sets). What can't be copied as it is gets translated: a dimension scale is made one again with
 * H5DSset_scale and attached with H5DSattach_scale (DIMENSION_LIST and REFERENCE_LIST hold native file
 * addresses), and object references, old-style or new, are rewritten as references to the same paths in
 * the store.
 */
#include "convert.h"

#include <hdf5_hl.h>
#include <stdlib.h>
#include <string.h>

/* A committed type of the store for the source's committed type `t` (by the named type's path), else a
 * transient copy. The caller closes it. */
static hid_t
dst_type(hid_t t, hid_t dst, const cv_list *l)
{
    H5O_info2_t   oi;
    const cv_obj *o;
    if (H5Tcommitted(t) > 0 && H5Oget_info3(t, &oi, H5O_INFO_BASIC) >= 0 &&
        (o = cv_find_token(l, t, &oi.token)) && o->kind == CV_TYPE)
        return H5Topen2(dst, o->path, H5P_DEFAULT);
    if (H5Tget_class(t) == H5T_REFERENCE)
        return H5Tcopy(H5T_STD_REF);
    return H5Tcopy(t);
}

int
cv_refs_rewrite(hid_t ftype, hid_t loc_src, const void *in, size_t n, hid_t dst_file, const cv_list *l,
                H5R_ref_t *out)
{
    const H5R_ref_t *r = in;
    (void)ftype;
    (void)loc_src;
    memset(out, 0, n * sizeof *out);
    for (size_t i = 0; i < n; i++) {
        H5O_info2_t   oi;
        hid_t         obj;
        const cv_obj *o;
        if (cv_ref_null(&r[i]) || H5Rget_type(&r[i]) == H5R_BADTYPE)
            continue;
        if ((obj = H5Ropen_object((H5R_ref_t *)&r[i], H5P_DEFAULT, H5P_DEFAULT)) < 0)
            return -1;
        o = H5Oget_info3(obj, &oi, H5O_INFO_BASIC) < 0 ? NULL : cv_find_token(l, obj, &oi.token);
        H5Oclose(obj);
        if (!o || H5Rcreate_object(dst_file, o->path, H5P_DEFAULT, &out[i]) < 0) {
            fprintf(stderr, "h5zarr-convert: reference %zu: can't make it in the store (%s)\n", i,
                    o ? o->path : "object not found");
            return -1;
        }
    }
    return 0;
}

/* The acpls attributes are made with, one per character set of their names (what an acpl holds), made
 * once (H5Aget_create_plist per attribute copied a property list each time). An acpl is always passed,
 * not H5P_DEFAULT: the connector records that one was (its "acpl" member). Closed by acpls_close. */
static hid_t acpls[2] = {-1, -1};

static hid_t
attr_acpl(H5T_cset_t cset)
{
    int k = cset == H5T_CSET_UTF8;
    if (acpls[k] < 0 && (acpls[k] = H5Pcreate(H5P_ATTRIBUTE_CREATE)) >= 0 &&
        H5Pset_char_encoding(acpls[k], k ? H5T_CSET_UTF8 : H5T_CSET_ASCII) < 0) {
        H5Pclose(acpls[k]);
        acpls[k] = -1;
    }
    return acpls[k];
}

static void
acpls_close(void)
{
    for (int k = 0; k < 2; k++)
        if (acpls[k] >= 0)
            H5Pclose(acpls[k]);
    acpls[0] = acpls[1] = -1;
}

int
cv_copy_attr(hid_t s, hid_t d, const cv_attr *at, hid_t dst_file, const cv_list *l)
{
    const char *name = at->name;
    hid_t       a = H5Aopen(s, name, H5P_DEFAULT), ft = -1, sp = -1, ct = -1, acpl, na = -1;
    void       *buf = NULL;
    H5R_ref_t  *out = NULL;
    int         rc  = -1;
    hssize_t    n;

    if (a < 0 || (ft = H5Aget_type(a)) < 0 || (sp = H5Aget_space(a)) < 0 ||
        (acpl = attr_acpl(at->cset)) < 0 || (ct = dst_type(ft, dst_file, l)) < 0)
        goto done;
    if ((na = H5Acreate2(d, name, ct, sp, acpl, H5P_DEFAULT)) < 0)
        goto done;
    if ((n = H5Sget_select_npoints(sp)) <= 0 || H5Sget_simple_extent_type(sp) == H5S_NULL) {
        rc = 0;
        goto done;
    }
    bool   refs = H5Tget_class(ft) == H5T_REFERENCE;
    size_t esz  = refs ? sizeof(H5R_ref_t) : H5Tget_size(ft);
    if (!(buf = calloc((size_t)n, esz)))
        goto done;
    if (refs) {
        if (!(out = calloc((size_t)n, sizeof *out)) || H5Aread(a, H5T_STD_REF, buf) < 0 ||
            cv_refs_rewrite(ft, s, buf, (size_t)n, dst_file, l, out) < 0 ||
            H5Awrite(na, H5T_STD_REF, out) < 0)
            goto done;
        for (hssize_t i = 0; i < n; i++) {
            H5Rdestroy(&((H5R_ref_t *)buf)[i]);
            H5Rdestroy(&out[i]);
        }
    }
    else {
        if (H5Aread(a, ft, buf) < 0)
            goto done;
        herr_t w = H5Awrite(na, ft, buf);
        if (cv_type_varlen(ft))
            H5Treclaim(ft, sp, H5P_DEFAULT, buf);
        if (w < 0)
            goto done;
    }
    rc = 0;
done:
    if (rc < 0)
        fprintf(stderr, "h5zarr-convert: attribute '%s' could not be copied\n", name);
    free(buf);
    free(out);
    if (na >= 0)
        H5Aclose(na);
    if (ct >= 0)
        H5Tclose(ct);
    if (sp >= 0)
        H5Sclose(sp);
    if (ft >= 0)
        H5Tclose(ft);
    if (a >= 0)
        H5Aclose(a);
    return rc;
}

/* Copies the attributes of `s` onto `d`: those the scan listed for `o`, in its order (creation order where
 * `s` tracks it, else by name), less a scale's CLASS and NAME (made by H5DSset_scale). */
static int
copy_attrs(hid_t s, hid_t d, hid_t dst_file, const cv_list *l, const cv_obj *o)
{
    for (size_t j = 0; j < o->nattrs; j++) {
        const cv_attr *at = &o->attrs[j];
        if (o->is_scale && (!strcmp(at->name, "CLASS") || !strcmp(at->name, "NAME")))
            continue;
        if (cv_copy_attr(s, d, at, dst_file, l) < 0) {
            fprintf(stderr, "h5zarr-convert: %s: attribute '%s' could not be copied\n", o->path, at->name);
            return -1;
        }
    }
    return 0;
}

/* A dcpl for the store's dataset: the source's (the scan's o->dcpl, not a copy: *own false), less its
 * filters under --codec; references get a fresh one with the chunking only (the fill value of an
 * old-style reference type means nothing in zarr). *own: the caller closes the result. */
static hid_t
dst_dcpl(const cv_opts *op, const cv_obj *o, bool *own)
{
    hid_t s = o->dcpl, d;
    *own    = true;
    if (s < 0)
        return -1;
    if (o->mode == CV_DATA_REFS || H5Pget_layout(s) == H5D_VIRTUAL) {
        hsize_t  ch[H5S_MAX_RANK];
        unsigned fl = 0;
        d           = H5Pcreate(H5P_DATASET_CREATE);
        if (H5Pget_layout(s) == H5D_CHUNKED) {
            int r = H5Pget_chunk(s, H5S_MAX_RANK, ch);
            if (r > 0)
                H5Pset_chunk(d, r, ch);
        }
        if (H5Pget_attr_creation_order(s, &fl) >= 0 && fl)
            H5Pset_attr_creation_order(d, fl);
        return d;
    }
    if (!op->codec) {
        *own = false;
        return s;
    }
    if ((d = H5Pcopy(s)) >= 0)
        H5Premove_filter(d, H5Z_FILTER_ALL);
    return d;
}

static bool scales_with_datasets;
static int  dimension_list(hid_t d, hid_t dst, const cv_list *l, const cv_obj *o, bool fresh);
static int  scales_start(const cv_list *l, bool with_datasets);
static void scales_end(void);

/* Dataset object `i` made in the store, with its attributes when none holds references, its data when it
 * is small (cv_data_early: done[i] set to 1) and its DIMENSION_LIST when every dataset's can be
 * (scales_with_datasets), all while its source dataset is held. */
static int
make_dataset(hid_t dst, const cv_opts *op, const cv_list *l, size_t i, size_t *done)
{
    const cv_obj *o  = &l->v[i];
    hid_t         sd = o->sd, ft = -1, ct = -1, sp = -1, dcpl = -1, dd = -1;
    bool          own = false;
    int           rc  = -1;
    if (sd < 0 || (ft = H5Dget_type(sd)) < 0 || (ct = dst_type(ft, dst, l)) < 0 ||
        (sp = H5Dget_space(sd)) < 0 || (dcpl = dst_dcpl(op, o, &own)) < 0)
        goto done;
    if ((dd = H5Dcreate2(dst, o->path, ct, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
        goto done;
    if (o->is_scale && H5DSset_scale(dd, o->scale_name) < 0)
        goto done;
    /* attributes without references need no other object: copied now, on the dataset just made and the
     * source dataset already held (pass 4 would open both again) */
    if (!o->attr_refs && copy_attrs(sd, dd, dst, l, o) < 0) {
        fprintf(stderr, "h5zarr-convert: %s: its attributes could not be copied\n", o->path);
        goto done;
    }
    if (done && cv_data_early(o)) {
        cv_say_mode(op, o);
        if (cv_data_write(dd, dst, l, i, ft, NULL, NULL) < 0)
            goto done;
        done[i] = 1;
    }
    if (scales_with_datasets && o->dim_scales && dimension_list(dd, dst, l, o, true) < 0) {
        fprintf(stderr, "h5zarr-convert: %s: can't write its DIMENSION_LIST\n", o->path);
        goto done;
    }
    rc = 0;
done:
    if (dd >= 0)
        H5Dclose(dd);
    if (dcpl >= 0 && own)
        H5Pclose(dcpl);
    if (sp >= 0)
        H5Sclose(sp);
    if (ct >= 0)
        H5Tclose(ct);
    if (ft >= 0)
        H5Tclose(ft);
    return rc; /* sd: the scan's, kept open */
}

static int
make_group_or_type(hid_t src, hid_t dst, const cv_obj *o)
{
    hid_t s = -1, d = -1, cpl = -1, tc = -1;
    int   rc = -1;
    if (o->kind == CV_GROUP) {
        if (!strcmp(o->path, "/"))
            return 0;
        if ((s = H5Gopen2(src, o->path, H5P_DEFAULT)) < 0 || (cpl = H5Gget_create_plist(s)) < 0 ||
            (d = H5Gcreate2(dst, o->path, H5P_DEFAULT, cpl, H5P_DEFAULT)) < 0)
            goto done;
    }
    else if ((s = H5Topen2(src, o->path, H5P_DEFAULT)) < 0 || (tc = H5Tcopy(s)) < 0 ||
             (cpl = H5Tget_create_plist(s)) < 0 ||
             H5Tcommit2(dst, o->path, tc, H5P_DEFAULT, cpl, H5P_DEFAULT) < 0)
        goto done;
    rc = 0;
done:
    if (tc >= 0)
        H5Tclose(tc);
    if (cpl >= 0)
        H5Pclose(cpl);
    if (d >= 0)
        H5Oclose(d);
    if (s >= 0)
        H5Oclose(s);
    return rc;
}

/* The attributes of an object of the list. */
static int
object_attrs(hid_t src, hid_t dst, const cv_list *l, const cv_obj *o)
{
    if (!o->nattrs)
        return 0; /* none to copy (the scan's list) */
    /* a dataset: the scan's source dataset, still open */
    hid_t s  = o->kind == CV_DATASET ? o->sd : H5Oopen(src, o->path, H5P_DEFAULT);
    hid_t d  = H5Oopen(dst, o->path, H5P_DEFAULT);
    int   rc = s < 0 || d < 0 ? -1 : copy_attrs(s, d, dst, l, o);
    if (d >= 0)
        H5Oclose(d);
    if (s >= 0 && o->kind != CV_DATASET)
        H5Oclose(s);
    return rc;
}

/* Objects before links, links before attributes: groups (parents before children), named types (which
 * datasets and attributes use), datasets (with their attributes when none holds references, their data
 * when small, their DIMENSION_LIST when lists_early allows), links (a hard link's target exists), then the
 * other attributes (an attribute may hold a reference to any object). Each group keeps its order of
 * groups and of datasets (what netCDF reads back as the order of groups and of variables). */
int
cv_copy_structure(hid_t src, hid_t dst, const cv_opts *op, const cv_list *l, size_t *done)
{
    if (scales_start(l, true) < 0)
        return -1;
    for (int pass = 0; pass < 5; pass++)
        for (size_t i = 0; i < l->n; i++) {
            const cv_obj *o    = &l->v[i];
            herr_t        r    = 0;
            bool          held = (pass == 2 || (pass == 4 && o->attr_refs)) && o->kind == CV_DATASET;
            if (held)
                (void)cv_obj_hold(src, o); /* a failure leaves o->sd at -1: the step below fails */
            if (pass == 0 && o->kind == CV_GROUP)
                r = make_group_or_type(src, dst, o);
            else if (pass == 1 && o->kind == CV_TYPE)
                r = make_group_or_type(src, dst, o);
            else if (pass == 2 && o->kind == CV_DATASET)
                r = make_dataset(dst, op, l, i, done);
            else if (pass == 3 && o->kind == CV_HARD)
                r = H5Lcreate_hard(dst, o->target, dst, o->path, H5P_DEFAULT, H5P_DEFAULT);
            else if (pass == 3 && o->kind == CV_SOFT)
                r = H5Lcreate_soft(o->target, dst, o->path, H5P_DEFAULT, H5P_DEFAULT);
            else if (pass == 3 && o->kind == CV_EXTERNAL)
                r = H5Lcreate_external(o->file, o->target, dst, o->path, H5P_DEFAULT, H5P_DEFAULT);
            else if (pass == 4 &&
                     (o->kind == CV_GROUP || o->kind == CV_TYPE || (o->kind == CV_DATASET && o->attr_refs)))
                r = object_attrs(src, dst, l, o);
            if (held)
                cv_obj_drop(o);
            if (r < 0) {
                fprintf(stderr, "h5zarr-convert: %s: could not be made in the store%s\n", o->path,
                        pass == 4 ? " (its attributes)" : "");
                acpls_close();
                scales_end();
                return -1;
            }
        }
    acpls_close();
    return 0;
}

/* A scale's REFERENCE_LIST as HDF5's H5DSattach_scale writes it for files that are not native
 * (hl/src/H5DS.c: a compound of a new-style reference and an unsigned dimension index). */
typedef struct reflist_entry {
    H5R_ref_t    ref;
    unsigned int dim_idx;
} reflist_entry;

/* Per object of the list: the REFERENCE_LIST gathered when it is a scale, and a reference to it that every
 * DIMENSION_LIST naming it uses (made once, at its first use: each dataset's list was two H5Rcreate_object
 * and two H5Rdestroy, ~3,700 instructions each; destroyed by scales_end). */
typedef struct reflist {
    reflist_entry *v;
    size_t         n, cap;
    H5R_ref_t      self;
    bool           have_self;
} reflist;

/* Replaces attribute `name` of `obj` with `n` elements of type `t` from `buf`; `fresh`: `obj` was just
 * made by this run and holds no such attribute (no H5Aexists). */
static int
put_attr(hid_t obj, const char *name, hid_t t, hsize_t n, const void *buf, bool fresh)
{
    hid_t sp = H5Screate_simple(1, &n, NULL), a = -1;
    int   rc = -1;
    if (sp < 0)
        return -1;
    if (!fresh && H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0)
        goto done;
    if ((a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT)) < 0 || H5Awrite(a, t, buf) < 0)
        goto done;
    rc = 0;
done:
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(sp);
    return rc;
}

#define SCALE_MEMO 8

/* The index in the list of the object at `p` (l->n: none). The scales found last are tried first (memo,
 * SCALE_MEMO entries, most recent first): the datasets of a file share a few scales, and a search of the
 * whole list for each axis of each dataset made attaching N^2. */
static size_t
scale_index(const cv_list *l, const char *p, size_t *memo)
{
    size_t si = 0;
    for (int j = 0; j < SCALE_MEMO; j++)
        if (memo[j] < l->n && !strcmp(l->v[memo[j]].path, p))
            return memo[j];
    while (si < l->n && strcmp(l->v[si].path, p))
        si++;
    if (si < l->n) {
        memmove(memo + 1, memo, (SCALE_MEMO - 1) * sizeof *memo);
        memo[0] = si;
    }
    return si;
}

/* The scales' lists as they are gathered, from the structure pass (cv_copy_structure) to cv_copy_scales:
 * per object of the list the entries of its REFERENCE_LIST, and the memo of scale_index. */
static reflist *refl;
static size_t   nrefl, memo[SCALE_MEMO];
/* DIMENSION_LIST's type, a vlen of H5T_STD_REF: made at the first list, closed by scales_end */
static hid_t dl_type = H5I_INVALID_HID;

/* Whether every DIMENSION_LIST can be written with its dataset in the structure pass: each names only
 * scales made before it (earlier in the list) and none waits for attributes with references (pass 4),
 * so each scale's REFERENCE_LIST gathers its datasets in the same order as cv_copy_scales would. */
static bool
lists_early(const cv_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const cv_obj *o = &l->v[i];
        if (o->kind != CV_DATASET || !o->dim_scales)
            continue;
        if (o->attr_refs)
            return false;
        for (int k = 0; k < o->rank; k++) {
            char *list = o->dim_scales[k] ? strdup(o->dim_scales[k]) : NULL, *save = NULL;
            bool  ok = !o->dim_scales[k] || list;
            for (char *p = list ? strtok_r(list, "\n", &save) : NULL; p && ok;
                 p       = strtok_r(NULL, "\n", &save))
                ok = scale_index(l, p, memo) < i;
            free(list);
            if (!ok)
                return false;
        }
    }
    return true;
}

/* Starts gathering the scales' lists (once: cv_copy_scales after cv_copy_structure goes on with them);
 * `with_datasets` (the structure pass): each DIMENSION_LIST written with its dataset where lists_early
 * allows. cv_copy_scales alone (a resumed run whose structure was made before) writes them all. 0 or -1. */
static int
scales_start(const cv_list *l, bool with_datasets)
{
    if (refl)
        return 0;
    for (int j = 0; j < SCALE_MEMO; j++)
        memo[j] = SIZE_MAX;
    if (!(refl = calloc(l->n + 1, sizeof *refl)))
        return -1;
    nrefl                = l->n + 1;
    scales_with_datasets = with_datasets && lists_early(l);
    return 0;
}

static void
scales_end(void)
{
    for (size_t i = 0; refl && i < nrefl; i++) {
        for (size_t j = 0; j < refl[i].n; j++)
            H5Rdestroy(&refl[i].v[j].ref);
        if (refl[i].have_self)
            H5Rdestroy(&refl[i].self);
        free(refl[i].v);
    }
    free(refl);
    if (dl_type >= 0)
        H5Tclose(dl_type);
    dl_type              = H5I_INVALID_HID;
    refl                 = NULL;
    nrefl                = 0;
    scales_with_datasets = false;
}

/* One dataset's DIMENSION_LIST (a vlen of references per axis) on `d`, its dataset in the store `dst`,
 * and its entries in its scales' lists; `fresh`: `d` was just made (put_attr). */
static int
dimension_list(hid_t d, hid_t dst, const cv_list *l, const cv_obj *o, bool fresh)
{
    hvl_t    *dl = calloc((size_t)o->rank, sizeof *dl);
    H5R_ref_t me;
    bool      have_me = false;
    int       rc      = -1;
    if (dl_type < 0)
        dl_type = H5Tvlen_create(H5T_STD_REF);
    if (!dl || dl_type < 0)
        goto done;
    for (int k = 0; k < o->rank; k++) {
        char *list = o->dim_scales[k] ? strdup(o->dim_scales[k]) : NULL, *save = NULL;
        for (char *p = list ? strtok_r(list, "\n", &save) : NULL; p; p = strtok_r(NULL, "\n", &save)) {
            H5R_ref_t *nr = realloc(dl[k].p, (dl[k].len + 1) * sizeof *nr);
            size_t     si;
            if (!nr) {
                free(list);
                goto done;
            }
            dl[k].p    = nr;
            si         = scale_index(l, p, memo);
            reflist *r = &refl[si];
            if (si == l->n || (!r->have_self && H5Rcreate_object(dst, p, H5P_DEFAULT, &r->self) < 0)) {
                free(list);
                goto done;
            }
            r->have_self = true;
            /* the scale's own reference, borrowed (H5Awrite only reads it): not destroyed below */
            memcpy(&nr[dl[k].len++], &r->self, sizeof r->self);
            if (r->n == r->cap) {
                size_t         cap = r->cap ? 2 * r->cap : 8;
                reflist_entry *nv  = realloc(r->v, cap * sizeof *nv);
                if (!nv) {
                    free(list);
                    goto done;
                }
                r->v   = nv;
                r->cap = cap;
            }
            /* the dataset's reference in each scale's list: made once, copied for the other axes */
            if ((have_me ? H5Rcopy(&me, &r->v[r->n].ref)
                         : H5Rcreate_object(dst, o->path, H5P_DEFAULT, &r->v[r->n].ref)) < 0) {
                free(list);
                goto done;
            }
            if (!have_me)
                memcpy(&me, &r->v[r->n].ref, sizeof me); /* a view of the list's (lives to scales_end) */
            have_me              = true;
            r->v[r->n++].dim_idx = (unsigned)k;
        }
        free(list);
    }
    rc = put_attr(d, "DIMENSION_LIST", dl_type, (hsize_t)o->rank, dl, fresh);
done:
    for (int k = 0; dl && k < o->rank; k++)
        free(dl[k].p);
    free(dl);
    return rc;
}

/* Attaches the dimension scales as H5DSattach_scale would, but writes each scale's REFERENCE_LIST once
 * with all its datasets: H5DSattach_scale on a file that is not native reopens every earlier reference of
 * the scale on each attach (hl/src/H5DS.c; bench/dsattach_floor.c), N^2/2 opens for N datasets on a
 * scale. The attributes are the same: DIMENSION_LIST a vlen of H5T_STD_REF per axis, REFERENCE_LIST a
 * compound {dataset: H5T_STD_REF, dimension: unsigned int}. */
int
cv_copy_scales(hid_t dst, const cv_list *l)
{
    hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(reflist_entry)), d = -1;
    int   rc = -1;
    if (scales_start(l, false) < 0 || ct < 0 ||
        H5Tinsert(ct, "dataset", HOFFSET(reflist_entry, ref), H5T_STD_REF) < 0 ||
        H5Tinsert(ct, "dimension", HOFFSET(reflist_entry, dim_idx), H5T_NATIVE_UINT) < 0)
        goto done;
    for (size_t i = 0; !scales_with_datasets && i < l->n; i++) {
        const cv_obj *o = &l->v[i];
        if (o->kind != CV_DATASET || !o->dim_scales)
            continue;
        if ((d = H5Dopen2(dst, o->path, H5P_DEFAULT)) < 0 || dimension_list(d, dst, l, o, false) < 0) {
            fprintf(stderr, "h5zarr-convert: %s: can't write its DIMENSION_LIST\n", o->path);
            goto done;
        }
        H5Dclose(d);
        d = -1;
    }
    for (size_t i = 0; i < l->n; i++) {
        if (!refl[i].n)
            continue;
        if ((d = H5Dopen2(dst, l->v[i].path, H5P_DEFAULT)) < 0 ||
            put_attr(d, "REFERENCE_LIST", ct, (hsize_t)refl[i].n, refl[i].v, false) < 0) {
            fprintf(stderr, "h5zarr-convert: %s: can't write its REFERENCE_LIST\n", l->v[i].path);
            goto done;
        }
        H5Dclose(d);
        d = -1;
    }
    rc = 0;
done:
    scales_end();
    if (d >= 0)
        H5Dclose(d);
    if (ct >= 0)
        H5Tclose(ct);
    return rc;
}
