/*
 * convert_scan.c: the scan pass of h5zarr-convert: every group, dataset, named type and link of the
 * source (in link creation order where the group tracks it, else by name, so the store keeps netCDF's
 * order), how each dataset's data will go over, the dimension scales each dataset's DIMENSION_LIST names,
 * and every reason something cannot be carried into zarr (filters without a codec, region references,
 * references that lead nowhere or out of the file, user-defined links, names a directory store can't
 * hold). The refusals are collected, not acted on: main.c prints them all and writes nothing.
 */
#include "convert.h"

#include <hdf5_hl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- the list ---------------------------------------------------------------------------------------- */

/* Token index: open addressing over the objects' tokens (byte hash). */
static size_t *tok_idx;
static size_t  tok_cap;

static size_t
tok_hash(const H5O_token_t *t)
{
    size_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < sizeof(t->__data); i++)
        h = (h ^ t->__data[i]) * 1099511628211ULL;
    return h;
}

static int
tok_insert(cv_list *l, size_t i)
{
    if (2 * (l->n + 1) > tok_cap) {
        size_t  cap = tok_cap ? 2 * tok_cap : 1024;
        size_t *nx  = calloc(cap, sizeof *nx);
        if (!nx)
            return -1;
        for (size_t k = 0; k < tok_cap; k++)
            if (tok_idx[k]) {
                size_t h = tok_hash(&l->v[tok_idx[k] - 1].token) & (cap - 1);
                while (nx[h])
                    h = (h + 1) & (cap - 1);
                nx[h] = tok_idx[k];
            }
        free(tok_idx);
        tok_idx = nx;
        tok_cap = cap;
    }
    size_t h = tok_hash(&l->v[i].token) & (tok_cap - 1);
    while (tok_idx[h])
        h = (h + 1) & (tok_cap - 1);
    tok_idx[h] = i + 1;
    return 0;
}

const cv_obj *
cv_find_token(const cv_list *l, hid_t file, const H5O_token_t *tok)
{
    (void)file;
    if (!tok_cap)
        return NULL;
    size_t h = tok_hash(tok) & (tok_cap - 1);
    while (tok_idx[h]) {
        const cv_obj *o = &l->v[tok_idx[h] - 1];
        if (!memcmp(&o->token, tok, sizeof *tok))
            return o;
        h = (h + 1) & (tok_cap - 1);
    }
    return NULL;
}

static cv_obj *
add(cv_list *l, const char *path, cv_kind kind)
{
    if (l->n == l->cap) {
        size_t  cap = l->cap ? 2 * l->cap : 64;
        cv_obj *nv  = realloc(l->v, cap * sizeof *nv);
        if (!nv)
            return NULL;
        l->v   = nv;
        l->cap = cap;
    }
    cv_obj *o = &l->v[l->n];
    memset(o, 0, sizeof *o);
    o->path = strdup(path);
    o->kind = kind;
    o->sd   = -1;
    o->dcpl = -1;
    if (!o->path)
        return NULL;
    l->n++;
    return o;
}

void
cv_refuse(cv_list *l, const char *fmt, ...)
{
    va_list ap;
    char   *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s)
        return;
    if (l->nwhy == l->capwhy) {
        size_t cap = l->capwhy ? 2 * l->capwhy : 16;
        char **nw  = realloc(l->why, cap * sizeof *nw);
        if (!nw) {
            free(s);
            return;
        }
        l->why    = nw;
        l->capwhy = cap;
    }
    l->why[l->nwhy++] = s;
}

size_t
cv_keep_open(void)
{
    const char *e = getenv("H5ZARR_CONVERT_KEEP_OPEN");
    char       *end;
    long long   n = e && *e ? strtoll(e, &end, 10) : -1;
    return n >= 0 && e && !*end ? (size_t)n : 4096;
}

/* Source dataset `o`, opened by its token (the scan's H5Oget_info_by_name3): H5Dopen2 by path looks each
 * name up again in its group (~8,000 instructions in a group of 10,000 links). A dataset id, or negative. */
static hid_t
scan_open(hid_t src, const cv_obj *o)
{
    hid_t d;
    H5E_BEGIN_TRY { d = H5Oopen_by_token(src, o->token); }
    H5E_END_TRY
    if (d >= 0 && H5Iget_type(d) == H5I_DATASET)
        return d;
    if (d >= 0)
        H5Oclose(d);
    return H5Dopen2(src, o->path, H5P_DEFAULT); /* anything else as before (it fails as it did) */
}

int
cv_obj_hold(hid_t src, const cv_obj *o)
{
    cv_obj *w = (cv_obj *)o; /* the list's own entry: its ids are a cache of the source */
    if (!o->reopen || o->sd >= 0)
        return 0;
    if ((w->sd = scan_open(src, o)) < 0)
        return -1;
    if ((w->dcpl = H5Dget_create_plist(o->sd)) < 0) {
        H5Dclose(o->sd);
        w->sd = -1;
        return -1;
    }
    return 0;
}

void
cv_obj_drop(const cv_obj *o)
{
    cv_obj *w = (cv_obj *)o;
    if (!o->reopen)
        return;
    if (o->dcpl >= 0)
        H5Pclose(o->dcpl);
    if (o->sd >= 0)
        H5Dclose(o->sd);
    w->dcpl = w->sd = -1;
}

static void attrs_free(cv_obj *ob);

void
cv_list_free(cv_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        cv_obj *o = &l->v[i];
        free(o->path);
        free(o->target);
        free(o->file);
        free(o->scale_name);
        attrs_free(o);
        if (o->dim_scales)
            for (int k = 0; k < o->rank; k++)
                free(o->dim_scales[k]);
        free(o->dim_scales);
        if (o->dcpl >= 0)
            H5Pclose(o->dcpl);
        if (o->sd >= 0)
            H5Dclose(o->sd);
    }
    for (size_t i = 0; i < l->nwhy; i++)
        free(l->why[i]);
    free(l->why);
    free(l->v);
    free(tok_idx);
    tok_idx = NULL;
    tok_cap = 0;
    memset(l, 0, sizeof *l);
}

/* ---- the walk ---------------------------------------------------------------------------------------- */

typedef struct walk {
    cv_list    *l;
    const char *dir; /* the group's path */
    int         rc;
} walk;

static int walk_group(hid_t g, const char *path, cv_list *l);

/* a, b and c end to end (malloc'ed; NULL when out of memory): what asprintf("%s%s%s") makes, without
 * the format machinery (~1,400 instructions a call; the scan makes one to three a dataset) */
static char *
cat3(const char *a, const char *b, const char *c)
{
    size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
    char  *p = malloc(na + nb + nc + 1);
    if (!p)
        return NULL;
    memcpy(p, a, na);
    memcpy(p + na, b, nb);
    memcpy(p + na + nb, c, nc + 1);
    return p;
}

static char *
join(const char *dir, const char *name)
{
    return cat3(dir, strcmp(dir, "/") ? "/" : "", name);
}

static herr_t
walk_link(hid_t g, const char *name, const H5L_info2_t *info, void *op)
{
    walk   *w    = op;
    char   *path = join(w->dir, name);
    cv_obj *o    = NULL;
    herr_t  ret  = -1;

    if (!path)
        goto done;
    if (strlen(name) > 255)
        cv_refuse(w->l,
                  "%s: a name of %zu bytes: a zarr directory store keeps each name as a file name, at most "
                  "255 bytes",
                  path, strlen(name));
    if (info->type == H5L_TYPE_HARD) {
        H5O_info2_t   oi;
        const cv_obj *seen;
        if (H5Oget_info_by_name3(g, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
            cv_refuse(w->l, "%s: the object cannot be read", path);
            ret = 0;
            goto done;
        }
        if ((seen = cv_find_token(w->l, g, &oi.token))) {
            char *t = strdup(seen->path);
            if (!t || !(o = add(w->l, path, CV_HARD)))
                goto done;
            o->target = t;
            ret       = 0;
            goto done;
        }
        cv_kind k = oi.type == H5O_TYPE_GROUP ? CV_GROUP : oi.type == H5O_TYPE_DATASET ? CV_DATASET : CV_TYPE;
        if (oi.type != H5O_TYPE_GROUP && oi.type != H5O_TYPE_DATASET && oi.type != H5O_TYPE_NAMED_DATATYPE) {
            cv_refuse(w->l, "%s: an object of unknown kind", path);
            ret = 0;
            goto done;
        }
        if (!(o = add(w->l, path, k)))
            goto done;
        o->token = oi.token;
        if (tok_insert(w->l, w->l->n - 1) < 0)
            goto done;
        if (k == CV_GROUP) {
            hid_t sub = H5Gopen2(g, name, H5P_DEFAULT);
            int   r   = sub < 0 ? -1 : walk_group(sub, path, w->l);
            if (sub >= 0)
                H5Gclose(sub);
            if (r < 0)
                goto done;
        }
    }
    else if (info->type == H5L_TYPE_SOFT || info->type == H5L_TYPE_EXTERNAL) {
        char       *val = malloc(info->u.val_size + 1);
        const char *f = NULL, *p = NULL;
        unsigned    flags;
        if (!val || H5Lget_val(g, name, val, info->u.val_size + 1, H5P_DEFAULT) < 0) {
            free(val);
            goto done;
        }
        if (info->type == H5L_TYPE_EXTERNAL &&
            H5Lunpack_elink_val(val, info->u.val_size, &flags, &f, &p) < 0) {
            free(val);
            goto done;
        }
        o = add(w->l, path, info->type == H5L_TYPE_SOFT ? CV_SOFT : CV_EXTERNAL);
        if (o) {
            o->target = strdup(info->type == H5L_TYPE_SOFT ? val : p);
            o->file   = f ? strdup(f) : NULL;
        }
        free(val);
        if (!o || !o->target)
            goto done;
    }
    else
        cv_refuse(w->l, "%s: a user-defined link (class %d): its meaning is the program's that made it", path,
                  (int)info->type);
    ret = 0;
done:
    free(path);
    if (ret < 0)
        w->rc = -1;
    return ret;
}

/* Iterates a group's links in creation order when the group tracks it, else by name. */
static herr_t
iterate_links(hid_t g, H5L_iterate2_t cb, void *op)
{
    hid_t    gcpl  = H5Gget_create_plist(g);
    unsigned flags = 0;
    if (gcpl >= 0) {
        if (H5Pget_link_creation_order(gcpl, &flags) < 0)
            flags = 0;
        H5Pclose(gcpl);
    }
    H5_index_t idx = (flags & H5P_CRT_ORDER_INDEXED) ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
    return H5Literate2(g, idx, H5_ITER_INC, NULL, cb, op);
}

static int
walk_group(hid_t g, const char *path, cv_list *l)
{
    walk w = {l, path, 0};
    if (iterate_links(g, walk_link, &w) < 0 || w.rc < 0)
        return -1;
    return 0;
}

/* ---- types, references, filters --------------------------------------------------------------------- */

bool
cv_type_has(hid_t t, H5T_class_t c)
{
    H5T_class_t tc = H5Tget_class(t);
    bool        r  = false;
    if (tc == c)
        return true;
    if (tc == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t);
        for (int i = 0; i < n && !r; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            r       = m >= 0 && cv_type_has(m, c);
            if (m >= 0)
                H5Tclose(m);
        }
    }
    else if (tc == H5T_ARRAY || tc == H5T_VLEN || tc == H5T_ENUM) {
        hid_t b = H5Tget_super(t);
        r       = b >= 0 && cv_type_has(b, c);
        if (b >= 0)
            H5Tclose(b);
    }
    return r;
}

bool
cv_type_varlen(hid_t t)
{
    H5T_class_t tc = H5Tget_class(t);
    bool        r  = false;
    if (tc == H5T_VLEN || (tc == H5T_STRING && H5Tis_variable_str(t) > 0))
        return true;
    if (tc == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t);
        for (int i = 0; i < n && !r; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            r       = m >= 0 && cv_type_varlen(m);
            if (m >= 0)
                H5Tclose(m);
        }
    }
    else if (tc == H5T_ARRAY) {
        hid_t b = H5Tget_super(t);
        r       = b >= 0 && cv_type_varlen(b);
        if (b >= 0)
            H5Tclose(b);
    }
    return r;
}

bool
cv_ref_null(const H5R_ref_t *r)
{
    static const H5R_ref_t zero;
    return !memcmp(r, &zero, sizeof zero);
}

bool
cv_is_dimattr(const char *name)
{
    return !strcmp(name, "DIMENSION_LIST") || !strcmp(name, "REFERENCE_LIST");
}

hid_t
cv_ref_mem_type(hid_t ftype)
{
    if (H5Tget_class(ftype) != H5T_REFERENCE)
        return -1;
    return H5T_STD_REF;
}

/* Checks `n` references read as H5R_ref_t: each names an object of the list (not a region, not another
 * file, not a deleted object). Refusal lines name `what`. */
static void
check_refs(cv_list *l, const char *what, H5R_ref_t *refs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        H5R_type_t  t = H5Rget_type(&refs[i]);
        H5O_info2_t oi;
        hid_t       obj;
        if (cv_ref_null(&refs[i]) || t == H5R_BADTYPE)
            continue; /* a null reference stays null */
        if (t != H5R_OBJECT1 && t != H5R_OBJECT2) {
            cv_refuse(l,
                      "%s: a region or attribute reference (element %zu): zarr stores object references only",
                      what, i);
            return;
        }
        obj = -1;
        H5E_BEGIN_TRY { obj = H5Ropen_object(&refs[i], H5P_DEFAULT, H5P_DEFAULT); }
        H5E_END_TRY
        if (obj < 0 || H5Oget_info3(obj, &oi, H5O_INFO_BASIC) < 0 || !cv_find_token(l, obj, &oi.token)) {
            cv_refuse(l, "%s: reference %zu leads to no object of this file (deleted, or in another file)",
                      what, i);
            if (obj >= 0)
                H5Oclose(obj);
            return;
        }
        H5Oclose(obj);
    }
}

/* Checks a reference-typed value (dataset or attribute): region types refused, values followed. */
static void
check_ref_values(cv_list *l, const char *what, hid_t ftype, hid_t space, hid_t obj, bool is_attr)
{
    hssize_t   n = H5Sget_simple_extent_npoints(space);
    H5R_ref_t *refs;
    if (H5Tequal(ftype, H5T_STD_REF_DSETREG) > 0) {
        cv_refuse(l, "%s: region references (H5T_STD_REF_DSETREG): zarr stores object references only", what);
        return;
    }
    if (n <= 0)
        return;
    if (!(refs = calloc((size_t)n, sizeof *refs))) {
        cv_refuse(l, "%s: out of memory reading its references", what);
        return;
    }
    herr_t r = is_attr ? H5Aread(obj, H5T_STD_REF, refs)
                       : H5Dread(obj, H5T_STD_REF, H5S_ALL, H5S_ALL, H5P_DEFAULT, refs);
    if (r < 0)
        cv_refuse(l, "%s: its references cannot be read", what);
    else {
        check_refs(l, what, refs, (size_t)n);
        for (hssize_t i = 0; i < n; i++)
            H5Rdestroy(&refs[i]);
    }
    free(refs);
}

/* What the scan of one object's attributes gathers (scan_attr). */
typedef struct attr_scan {
    cv_list    *l;
    const char *path;
    cv_obj     *ob;
    size_t      cap;
    int         rc;
} attr_scan;

/* Lists attribute `name` in ob->attrs (by name, with its name's character set), or notes it as a dimension
 * attribute or a CLASS. 0 or -1 (out of memory). */
static int
list_attr(cv_obj *ob, size_t *cap, const char *name, H5T_cset_t cset)
{
    if (!strcmp(name, "DIMENSION_LIST"))
        ob->has_dimlist = true;
    if (cv_is_dimattr(name))
        return 0;
    ob->has_class |= !strcmp(name, "CLASS");
    if (ob->nattrs == *cap) {
        size_t   n  = *cap ? 2 * *cap : 4;
        cv_attr *nv = realloc(ob->attrs, n * sizeof *nv);
        if (!nv)
            return -1;
        ob->attrs = nv;
        *cap      = n;
    }
    if (!(ob->attrs[ob->nattrs].name = strdup(name)))
        return -1;
    ob->attrs[ob->nattrs++].cset = cset;
    return 0;
}

/* Checks one attribute of an object and lists it. */
static herr_t
scan_attr(hid_t loc, const char *name, const H5A_info_t *ai, void *op)
{
    attr_scan *c = op;
    cv_list   *l = c->l;
    if (list_attr(c->ob, &c->cap, name, ai->cset) < 0) {
        c->rc = -1;
        return -1;
    }
    if (cv_is_dimattr(name))
        return 0; /* translated through H5DSattach_scale */
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) {
        cv_refuse(l, "%s: attribute '%s' cannot be opened", c->path, name);
        return 0;
    }
    hid_t t = H5Aget_type(a), s = H5Aget_space(a);
    char  what[1200];
    snprintf(what, sizeof what, "%s: attribute '%s'", c->path, name);
    if (t >= 0 && H5Tget_class(t) == H5T_REFERENCE) {
        check_ref_values(l, what, t, s, a, true);
        c->ob->attr_refs = true;
    }
    else if (t >= 0 && cv_type_has(t, H5T_REFERENCE))
        cv_refuse(l, "%s: references inside a compound, array or variable-length type: not carried", what);
    if (t >= 0)
        H5Tclose(t);
    if (s >= 0)
        H5Sclose(s);
    H5Aclose(a);
    return 0;
}

/* Frees an object's list of attributes. */
static void
attrs_free(cv_obj *ob)
{
    for (size_t j = 0; j < ob->nattrs; j++)
        free(ob->attrs[j].name);
    free(ob->attrs);
    ob->attrs  = NULL;
    ob->nattrs = 0;
}

/* Checks the attributes of an object and lists them in ob->attrs in the order the structure pass copies
 * them: creation order where the object tracks it, else by name; ob->attr_refs set when one holds
 * references. */
static int
scan_attrs(hid_t obj, cv_obj *ob, cv_list *l)
{
    attr_scan c = {l, ob->path, ob, 0, 0};
    herr_t    r;
    H5E_BEGIN_TRY { r = H5Aiterate2(obj, H5_INDEX_CRT_ORDER, H5_ITER_INC, NULL, scan_attr, &c); }
    H5E_END_TRY
    if (r < 0 && c.rc == 0) { /* not tracked: by name, from the start */
        size_t nwhy = l->nwhy;
        attrs_free(ob);
        while (l->nwhy > nwhy) /* none: a refusal ends no iteration */
            free(l->why[--l->nwhy]);
        ob->attr_refs = ob->has_dimlist = ob->has_class = false;
        c.cap                                           = 0;
        r = H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, NULL, scan_attr, &c);
    }
    return r < 0 || c.rc < 0 ? -1 : 0;
}

/* Filters the connector maps to zarr codecs (vol/filter.c; README "HDF5 filters and zarr codecs"). */
static bool
filter_carried(H5Z_filter_t id)
{
    switch (id) {
        case H5Z_FILTER_DEFLATE:
        case H5Z_FILTER_SHUFFLE:
        case H5Z_FILTER_FLETCHER32:
        case H5Z_FILTER_SZIP:
        case H5Z_FILTER_SCALEOFFSET:
        case 307:   /* bzip2 */
        case 32000: /* lzf */
        case 32001: /* blosc */
        case 32004: /* lz4 */
        case 32013: /* zfp */
        case 32015: /* zstd */
            return true;
        default:
            return false;
    }
}

/* The filters of a dataset: refused ones listed; *decodable false when HDF5 here can't decode them. */
static void
scan_filters(cv_list *l, const char *path, hid_t dcpl, const cv_opts *o, bool *decodable)
{
    int nf     = H5Pget_nfilters(dcpl);
    *decodable = true;
    for (int i = 0; i < nf; i++) {
        unsigned     flags     = 0, cd[32];
        size_t       ncd       = 32;
        char         name[256] = "";
        H5Z_filter_t id        = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, NULL);
        bool         avail     = H5Zfilter_avail(id) > 0;
        if (!avail && !(flags & H5Z_FLAG_OPTIONAL))
            *decodable = false;
        if (o->codec && !avail && !(flags & H5Z_FLAG_OPTIONAL))
            cv_refuse(l,
                      "%s: filter %d (%s): no plugin here to decode it, and --codec re-encodes every chunk",
                      path, (int)id, name);
        if (o->codec || filter_carried(id) || (!avail && (flags & H5Z_FLAG_OPTIONAL)))
            continue;
        if (id == H5Z_FILTER_NBIT)
            cv_refuse(l, "%s: n-bit filter: zarr has no n-bit packing codec", path);
        else
            cv_refuse(l, "%s: filter %d (%s): no zarr codec is known for it (user-defined filter)", path,
                      (int)id, name);
    }
}

/* Types whose chunk bytes the connector stores as HDF5 does (the element's bytes in the file type's byte
 * order): numbers, fixed strings, bitfields, opaques, enums. Compounds and arrays go over as values (the
 * connector lays out their members its own way), variable-length data always (heap addresses). */
static bool
raw_type(hid_t t)
{
    switch (H5Tget_class(t)) {
        case H5T_INTEGER:
        case H5T_FLOAT:
        case H5T_BITFIELD:
        case H5T_OPAQUE:
        case H5T_ENUM:
            return true;
        case H5T_STRING:
            return H5Tis_variable_str(t) <= 0;
        default:
            return false;
    }
}

/* How dataset `o`'s data goes over, and what of it is refused. The dataset and its dcpl stay open in
 * ob->sd and ob->dcpl for the later passes. */
static int
scan_dataset(hid_t src, cv_obj *ob, const cv_opts *o, cv_list *l)
{
    hid_t              d = scan_open(src, ob), t = -1, s = -1, dcpl = -1;
    int                rc = -1;
    bool               decodable;
    H5D_space_status_t st = H5D_SPACE_STATUS_ERROR;

    if (d < 0) {
        cv_refuse(l, "%s: the dataset cannot be opened", ob->path);
        return 0;
    }
    t    = H5Dget_type(d);
    s    = H5Dget_space(d);
    dcpl = H5Dget_create_plist(d);
    if (t < 0 || s < 0 || dcpl < 0)
        goto done;
    ob->rank  = H5Sget_simple_extent_ndims(s);
    ob->bytes = H5Dget_storage_size(d);
    ob->size  = (hsize_t)H5Sget_simple_extent_npoints(s) * H5Tget_size(t);
    l->total_bytes += ob->bytes;
    l->ndatasets++;
    scan_filters(l, ob->path, dcpl, o, &decodable);
    H5Dget_space_status(d, &st);
    H5D_layout_t lay = H5Pget_layout(dcpl);
    if (H5Tget_class(t) == H5T_REFERENCE) {
        ob->mode = CV_DATA_REFS;
        check_ref_values(l, ob->path, t, s, d, false);
    }
    else if (cv_type_has(t, H5T_REFERENCE))
        cv_refuse(l, "%s: references inside a compound, array or variable-length type: not carried",
                  ob->path);
    else if (st == H5D_SPACE_STATUS_NOT_ALLOCATED && lay != H5D_VIRTUAL && H5Pget_external_count(dcpl) <= 0)
        ob->mode = CV_DATA_NONE;
    else if (lay == H5D_CHUNKED && !o->codec && raw_type(t))
        ob->mode = CV_DATA_RAW;
    else
        ob->mode = CV_DATA_VALUES;
    if (ob->mode == CV_DATA_VALUES && !decodable)
        cv_refuse(l, "%s: its filters can't be decoded here (no plugin), and its data must be read as values",
                  ob->path);
    rc           = scan_attrs(d, ob, l);
    ob->is_scale = ob->has_class && H5DSis_scale(d) > 0; /* a scale has a CLASS attribute */
    if (ob->is_scale) {
        ssize_t len = H5DSget_scale_name(d, NULL, 0);
        if (len > 0 && (ob->scale_name = calloc((size_t)len + 2, 1)))
            H5DSget_scale_name(d, ob->scale_name, (size_t)len + 1);
    }
done:
    if (t >= 0)
        H5Tclose(t);
    if (s >= 0)
        H5Sclose(s);
    ob->sd   = d;
    ob->dcpl = dcpl;
    return rc;
}

/* DIMENSION_LIST: the scales of each axis, as paths of the list. */
typedef struct dimctx {
    cv_list    *l;
    const char *path;
    char       *acc;
    bool        bad;
} dimctx;

static herr_t
dim_cb(hid_t did, unsigned idx, hid_t sid, void *op)
{
    dimctx       *c = op;
    H5O_info2_t   oi;
    const cv_obj *so;
    char         *n = NULL;
    (void)did;
    if (H5Oget_info3(sid, &oi, H5O_INFO_BASIC) < 0 || !(so = cv_find_token(c->l, sid, &oi.token)) ||
        so->kind != CV_DATASET) {
        cv_refuse(c->l, "%s: DIMENSION_LIST of axis %u names no dataset of this file", c->path, idx);
        c->bad = true;
        return 1;
    }
    if (!(n = cat3(c->acc ? c->acc : "", c->acc ? "\n" : "", so->path)))
        return -1;
    free(c->acc);
    c->acc = n;
    return 0;
}

/* The scales of each axis by H5DSiterate_scales: for a DIMENSION_LIST that is not old-style references
 * (each call reads the attribute again and opens every scale of the axis). */
static int
scan_dims_iterate(hid_t d, cv_obj *ob, cv_list *l)
{
    for (int k = 0; k < ob->rank; k++) {
        dimctx c   = {l, ob->path, NULL, false};
        int    idx = 0; /* the first scale of the axis */
        herr_t r;
        H5E_BEGIN_TRY { r = H5DSiterate_scales(d, (unsigned)k, &idx, dim_cb, &c); }
        H5E_END_TRY
        if (r < 0 && !c.bad)
            cv_refuse(l, "%s: DIMENSION_LIST of axis %d cannot be followed", ob->path, k);
        ob->dim_scales[k] = c.acc;
    }
    return 0;
}

/* The scales of axis `k` from its old-style references (file addresses): each looked up in the list by
 * its token, no scale opened. */
static int
dims_axis(hid_t d, cv_obj *ob, cv_list *l, int k, const hvl_t *v)
{
    const hobj_ref_t *a   = v->p;
    char             *acc = NULL, *n;
    for (size_t j = 0; j < v->len; j++) {
        H5O_token_t   tok;
        const cv_obj *so;
        if (H5VLnative_addr_to_token(d, (haddr_t)a[j], &tok) < 0 || !(so = cv_find_token(l, d, &tok)) ||
            so->kind != CV_DATASET) {
            cv_refuse(l, "%s: DIMENSION_LIST of axis %d names no dataset of this file", ob->path, k);
            break;
        }
        if (!(n = cat3(acc ? acc : "", acc ? "\n" : "", so->path))) {
            free(acc);
            return -1;
        }
        free(acc);
        acc = n;
    }
    ob->dim_scales[k] = acc;
    return 0;
}

/* DIMENSION_LIST, read once: the scales of each axis as paths of the list. netCDF-4 and h5py files hold
 * old-style references (H5DSattach_scale on a native file); anything else goes through
 * H5DSiterate_scales. `*mt_kept`: the memory type of old-style lists, made at the first (the caller closes
 * it). */
static int
scan_dims(cv_obj *ob, cv_list *l, hid_t *mt_kept)
{
    hid_t    d = ob->sd, a = -1, at = -1, base = -1, as = -1, mt = *mt_kept;
    hvl_t   *v  = NULL;
    hssize_t np = -1;
    int      rc = 0;
    if (d < 0 || ob->rank <= 0 || !ob->has_dimlist)
        return 0;
    if (!(ob->dim_scales = calloc((size_t)ob->rank, sizeof *ob->dim_scales)))
        return -1;
    if ((a = H5Aopen(d, "DIMENSION_LIST", H5P_DEFAULT)) >= 0 && (at = H5Aget_type(a)) >= 0 &&
        H5Tget_class(at) == H5T_VLEN && (base = H5Tget_super(at)) >= 0 &&
        H5Tequal(base, H5T_STD_REF_OBJ) > 0 && (as = H5Aget_space(a)) >= 0)
        np = H5Sget_simple_extent_npoints(as);
    if (np != ob->rank) /* not old-style references, or not one list per axis */
        rc = scan_dims_iterate(d, ob, l);
    else if (!(v = calloc((size_t)np, sizeof *v)) ||
             (mt < 0 && (mt = *mt_kept = H5Tvlen_create(H5T_STD_REF_OBJ)) < 0))
        rc = -1;
    else if (H5Aread(a, mt, v) < 0)
        for (int k = 0; k < ob->rank; k++)
            cv_refuse(l, "%s: DIMENSION_LIST of axis %d cannot be followed", ob->path, k);
    else {
        for (int k = 0; k < ob->rank && rc == 0; k++)
            rc = dims_axis(d, ob, l, k, &v[k]);
        H5Treclaim(mt, as, H5P_DEFAULT, v);
    }
    free(v);
    if (as >= 0)
        H5Sclose(as);
    if (base >= 0)
        H5Tclose(base);
    if (at >= 0)
        H5Tclose(at);
    if (a >= 0)
        H5Aclose(a);
    return rc;
}

int
cv_scan(hid_t src, const cv_opts *o, cv_list *l)
{
    H5O_info2_t oi;
    cv_obj     *root;
    hid_t       g = -1, mt = -1; /* DIMENSION_LIST's memory type (scan_dims): made once */
    int         rc = -1;

    if (H5Oget_info_by_name3(src, "/", &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ||
        !(root = add(l, "/", CV_GROUP)))
        goto done;
    root->token = oi.token;
    if (tok_insert(l, 0) < 0 || (g = H5Gopen2(src, "/", H5P_DEFAULT)) < 0 || walk_group(g, "/", l) < 0)
        goto done;
    for (size_t i = 0, kept = 0, keep = cv_keep_open(); i < l->n; i++) {
        cv_obj *ob = &l->v[i];
        if (ob->kind == CV_DATASET) {
            if (scan_dataset(src, ob, o, l) < 0 || scan_dims(ob, l, &mt) < 0)
                goto done;
            if (ob->sd >= 0 && kept++ >= keep) { /* past the window: each pass opens it again */
                ob->reopen = true;
                cv_obj_drop(ob);
            }
        }
        else if (ob->kind == CV_GROUP || ob->kind == CV_TYPE) {
            hid_t x = H5Oopen(src, ob->path, H5P_DEFAULT);
            int   r = x < 0 ? -1 : scan_attrs(x, ob, l);
            if (x >= 0)
                H5Oclose(x);
            if (r < 0)
                cv_refuse(l, "%s: its attributes cannot be read", ob->path);
        }
    }
    rc = 0;
done:
    if (mt >= 0)
        H5Tclose(mt);
    if (g >= 0)
        H5Gclose(g);
    return rc;
}
