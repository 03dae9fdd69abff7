/*
 * xcopy.c: operations between a native HDF5 file and a zarr store in one process (see xcopy.h).
 *
 * HDF5 refuses H5Ocopy, H5Lcopy and hard links between files of different connectors. With the
 * connector serving both kinds of file, these calls reach us with one native and one zarr side. Link
 * copies are rebuilt from the link's value through the class callbacks; object copies reopen both files
 * through the HDF5 API (the native file with the native connector, the store with ours: both share the
 * state of the handles the program holds) and copy object by object, the way h5repack does.
 */
#include "xcopy.h"
#include "native.h"

#include <stdlib.h>
#include <string.h>

/* ---- link copy / move -------------------------------------------------------------------------------- */
herr_t
h5zv_xcopy_link(void *src, const H5VL_loc_params_t *loc1, void *dst, const H5VL_loc_params_t *loc2,
                hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id, bool move)
{
    H5L_info2_t             info;
    H5VL_link_get_args_t    g;
    H5VL_link_create_args_t c;
    void                   *val = NULL;
    herr_t                  ret = -1;
    const char             *name =
        loc1 && loc1->type == H5VL_OBJECT_BY_NAME ? loc1->loc_data.loc_by_name.name : "(this object)";

    memset(&g, 0, sizeof g);
    g.op_type             = H5VL_LINK_GET_INFO;
    g.args.get_info.linfo = &info;
    if (h5zv_class.link_cls.get(src, loc1, &g, dxpl_id, NULL) < 0)
        H5ZV_GOTO_ERROR("can't copy link '%s' across formats: can't read it", name);
    if (info.type == H5L_TYPE_HARD)
        H5ZV_GOTO_ERROR(
            "can't %s hard link '%s' between a native HDF5 file and a zarr store: hard links stay "
            "inside one file (H5Ocopy copies the object)",
            move ? "move" : "copy", name);
    if (!(val = malloc(info.u.val_size ? info.u.val_size : 1)))
        H5ZV_GOTO_ERROR("out of memory");
    memset(&g, 0, sizeof g);
    g.op_type               = H5VL_LINK_GET_VAL;
    g.args.get_val.buf      = val;
    g.args.get_val.buf_size = info.u.val_size;
    if (h5zv_class.link_cls.get(src, loc1, &g, dxpl_id, NULL) < 0)
        H5ZV_GOTO_ERROR("can't read the value of link '%s'", name);
    memset(&c, 0, sizeof c);
    if (info.type == H5L_TYPE_SOFT) {
        c.op_type          = H5VL_LINK_CREATE_SOFT;
        c.args.soft.target = val;
    }
    else {
        c.op_type          = H5VL_LINK_CREATE_UD;
        c.args.ud.type     = info.type;
        c.args.ud.buf      = val;
        c.args.ud.buf_size = info.u.val_size;
    }
    if (h5zv_class.link_cls.create(&c, dst, loc2, lcpl_id, lapl_id, dxpl_id, NULL) < 0)
        H5ZV_GOTO_ERROR("can't make link '%s' again in the destination", name);
    if (move) {
        H5VL_link_specific_args_t d;
        memset(&d, 0, sizeof d);
        d.op_type = H5VL_LINK_DELETE;
        if (h5zv_class.link_cls.specific(src, loc1, &d, dxpl_id, NULL) < 0)
            H5ZV_GOTO_ERROR(
                "moved link '%s' was made in the destination but can't be removed from its source", name);
    }
    ret = 0;
done:
    free(val);
    return ret;
}

/* ---- object copy ------------------------------------------------------------------------------------- */
/* The file name and absolute path of location object `obj` (+ `name` below it when not NULL): both
 * malloc'ed. */
static int
where(void *obj, H5I_type_t type, const char *name, char **file, char **path)
{
    H5VL_loc_params_t      self = {0};
    H5VL_object_get_args_t og;
    H5VL_file_get_args_t   fg;
    size_t                 flen = 0, plen = 0;
    char                  *base = NULL;

    *file = *path = NULL;
    self.type     = H5VL_OBJECT_BY_SELF;
    self.obj_type = type;
    memset(&fg, 0, sizeof fg);
    fg.op_type                     = H5VL_FILE_GET_NAME;
    fg.args.get_name.type          = type;
    fg.args.get_name.file_name_len = &flen;
    if (h5zv_class.file_cls.get(obj, &fg, H5P_DATASET_XFER_DEFAULT, NULL) < 0 || !(*file = malloc(flen + 1)))
        return -1;
    fg.args.get_name.buf      = *file;
    fg.args.get_name.buf_size = flen + 1;
    if (h5zv_class.file_cls.get(obj, &fg, H5P_DATASET_XFER_DEFAULT, NULL) < 0)
        return -1;
    if (type == H5I_FILE)
        base = strdup("/");
    else {
        memset(&og, 0, sizeof og);
        og.op_type                = H5VL_OBJECT_GET_NAME;
        og.args.get_name.name_len = &plen;
        if (h5zv_class.object_cls.get(obj, &self, &og, H5P_DATASET_XFER_DEFAULT, NULL) < 0 ||
            !(base = malloc(plen + 1)))
            return -1;
        og.args.get_name.buf      = base;
        og.args.get_name.buf_size = plen + 1;
        if (h5zv_class.object_cls.get(obj, &self, &og, H5P_DATASET_XFER_DEFAULT, NULL) < 0) {
            free(base);
            return -1;
        }
    }
    if (!base)
        return -1;
    if (!name || !strcmp(name, "."))
        *path = base;
    else if (name[0] == '/') {
        *path = strdup(name);
        free(base);
    }
    else {
        size_t n = strlen(base) + strlen(name) + 2;
        if ((*path = malloc(n)))
            snprintf(*path, n, "%s%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/", name);
        free(base);
    }
    return *path ? 0 : -1;
}

/* Opens `name` again through the HDF5 API with this connector, which sends it to zarr or native by what
 * it is and serves a native file through the pass-through as it serves the program's handle of it
 * (opening it with the native connector instead would give the shared file a second, unwrapped VOL
 * object, which blobs and references then reach us through). New id or negative. */
static hid_t
open_with_us(const char *name, unsigned flags)
{
    h5zarr_info_t info = {0, 0, H5ZARR_CREATE_AUTO, NULL};
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), vol = H5VLregister_connector_by_name(H5ZV_NAME, H5P_DEFAULT);
    hid_t fid = H5I_INVALID_HID;
    if (fapl >= 0 && vol >= 0 && H5Pset_vol(fapl, vol, &info) >= 0)
        fid = H5Fopen(name, flags, fapl);
    h5zv_close(vol);
    h5zv_close(fapl);
    return fid;
}

typedef struct seen {
    H5O_token_t tok;
    char       *dst; /* where the copy is, absolute */
} seen;

typedef struct xcopy {
    hid_t    sfid, dfid;
    unsigned flags; /* H5O_COPY_* */
    seen    *seen;
    size_t   nseen, capseen;
} xcopy;

static int copy_obj(xcopy *x, const char *spath, const char *dpath, hid_t lcpl, bool top);

static herr_t
copy_attr_cb(hid_t loc, const char *name, const H5A_info_t *ainfo, void *ud)
{
    hid_t  dobj = *(hid_t *)ud, a = -1, t = -1, s = -1, d = -1;
    void  *buf = NULL;
    herr_t ret = -1;
    (void)ainfo;
    if ((a = H5Aopen(loc, name, H5P_DEFAULT)) < 0 || (t = H5Aget_type(a)) < 0 || (s = H5Aget_space(a)) < 0)
        goto done;
    if (h5zv_type_has_pointers(t) && H5Tdetect_class(t, H5T_REFERENCE) > 0) {
        h5zv_err_push(__func__, __LINE__, "can't copy attribute '%s' across formats: it holds references",
                      name);
        goto done;
    }
    {
        hssize_t n  = H5Sget_simple_extent_npoints(s);
        size_t   sz = H5Tget_size(t);
        if (n < 0 || !(buf = calloc((size_t)(n ? n : 1), sz)))
            goto done;
        if (H5Aread(a, t, buf) < 0)
            goto done;
        if ((d = H5Acreate2(dobj, name, t, s, H5P_DEFAULT, H5P_DEFAULT)) < 0 || H5Awrite(d, t, buf) < 0)
            goto done;
        H5Treclaim(t, s, H5P_DEFAULT, buf);
    }
    ret = 0;
done:
    free(buf);
    if (d >= 0)
        H5Aclose(d);
    if (s >= 0)
        H5Sclose(s);
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    return ret;
}

/* `ocpl`: the source's creation property list (dcpl, gcpl), which says whether attribute creation order
 * is indexed: attributes are copied in that order where it is, else by name. */
static int
copy_attrs(xcopy *x, hid_t sobj, hid_t dobj, hid_t ocpl)
{
    unsigned crt = 0;
    if (x->flags & H5O_COPY_WITHOUT_ATTR_FLAG)
        return 0;
    if (H5Pget_attr_creation_order(ocpl, &crt) < 0)
        crt = 0;
    return H5Aiterate2(sobj, (crt & H5P_CRT_ORDER_INDEXED) ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME, H5_ITER_INC,
                       NULL, copy_attr_cb, &dobj) < 0
               ? -1
               : 0;
}

/* Dataset data, in slabs of at most ~64 MiB: whole trailing dimensions where they fit, the outer ones
 * stepped one index at a time. A dataset never written is left to its fill value. */
#define XCOPY_SLAB (64u << 20)
static int
copy_data(hid_t sd, hid_t dd, hid_t t, hid_t space)
{
    int                nd = H5Sget_simple_extent_ndims(space), k;
    hsize_t            dims[H5S_MAX_RANK], start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK];
    size_t             sz = H5Tget_size(t), inner = sz;
    hsize_t            step, nelem                = 1;
    H5D_space_status_t st;
    void              *buf = NULL;
    int                ret = -1;

    if (nd < 0 || H5Sget_simple_extent_dims(space, dims, NULL) < 0 || sz == 0)
        return -1;
    if (H5Sget_simple_extent_type(space) == H5S_NULL)
        return 0;
    if (H5Dget_space_status(sd, &st) >= 0 && st == H5D_SPACE_STATUS_NOT_ALLOCATED)
        return 0;
    if (nd == 0) { /* scalar */
        if (!(buf = calloc(1, sz)) || H5Dread(sd, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 ||
            H5Dwrite(dd, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
            goto done;
        H5Treclaim(t, space, H5P_DEFAULT, buf);
        ret = 0;
        goto done;
    }
    for (int i = 0; i < nd; i++)
        nelem *= dims[i];
    if (nelem == 0)
        return 0;
    /* k: the dimension that is stepped; those after it are whole in every slab */
    for (k = nd - 1; k > 0 && inner * dims[k] <= XCOPY_SLAB; k--)
        inner *= dims[k];
    step = XCOPY_SLAB / inner;
    if (step < 1)
        step = 1;
    if (step > dims[k])
        step = dims[k];
    if (!(buf = calloc(step, inner)))
        goto done;
    for (int i = 0; i < nd; i++)
        count[i] = i < k ? 1 : dims[i];
    for (;;) {
        hid_t fs = -1, ms = -1;
        int   ok;
        count[k] = start[k] + step > dims[k] ? dims[k] - start[k] : step;
        ok       = (fs = H5Scopy(space)) >= 0 &&
             H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
             (ms = H5Screate_simple(nd, count, NULL)) >= 0 && H5Dread(sd, t, ms, fs, H5P_DEFAULT, buf) >= 0 &&
             H5Dwrite(dd, t, ms, fs, H5P_DEFAULT, buf) >= 0;
        if (ok)
            H5Treclaim(t, ms, H5P_DEFAULT, buf);
        if (ms >= 0)
            H5Sclose(ms);
        if (fs >= 0)
            H5Sclose(fs);
        if (!ok)
            goto done;
        /* next slab: dimension k, then the outer ones like an odometer */
        start[k] += count[k];
        if (start[k] < dims[k])
            continue;
        start[k] = 0;
        {
            int i = k - 1;
            while (i >= 0 && ++start[i] == dims[i])
                start[i--] = 0;
            if (i < 0)
                break;
        }
    }
    ret = 0;
done:
    free(buf);
    return ret;
}

static int
copy_dataset(xcopy *x, const char *spath, const char *dpath, hid_t lcpl)
{
    hid_t sd = -1, dd = -1, t = -1, s = -1, dcpl = -1;
    int   ret = -1;
    if ((sd = H5Dopen2(x->sfid, spath, H5P_DEFAULT)) < 0 || (t = H5Dget_type(sd)) < 0 ||
        (s = H5Dget_space(sd)) < 0 || (dcpl = H5Dget_create_plist(sd)) < 0)
        goto done;
    if (H5Tdetect_class(t, H5T_REFERENCE) > 0)
        H5ZV_GOTO_ERROR("can't copy dataset '%s' across formats: it holds references (they would name "
                        "objects of the other file; h5repack rewrites them)",
                        spath);
    if ((dd = H5Dcreate2(x->dfid, dpath, t, s, lcpl, dcpl, H5P_DEFAULT)) < 0)
        H5ZV_GOTO_ERROR("can't create dataset '%s' in the destination", dpath);
    /* a virtual dataset is copied as its mapping, as H5Ocopy does (its data would go to its sources) */
    if (H5Pget_layout(dcpl) != H5D_VIRTUAL && copy_data(sd, dd, t, s) < 0)
        H5ZV_GOTO_ERROR("can't copy the data of dataset '%s'", spath);
    if (copy_attrs(x, sd, dd, dcpl) < 0)
        H5ZV_GOTO_ERROR("can't copy the attributes of dataset '%s'", spath);
    ret = 0;
done:
    h5zv_close(dcpl);
    h5zv_close(s);
    h5zv_close(t);
    h5zv_close(dd);
    h5zv_close(sd);
    return ret;
}

typedef struct link_ud {
    xcopy      *x;
    const char *spath, *dpath;
    int         rc;
} link_ud;

static herr_t
copy_link_cb(hid_t g, const char *name, const H5L_info2_t *info, void *ud)
{
    link_ud *u = ud;
    size_t   n = strlen(u->dpath) + strlen(name) + 2, m = strlen(u->spath) + strlen(name) + 2;
    char    *dp = malloc(n), *sp = malloc(m), *val = NULL;
    herr_t   ret = -1;
    (void)g;
    if (!dp || !sp)
        goto done;
    snprintf(dp, n, "%s%s%s", u->dpath, strcmp(u->dpath, "/") ? "/" : "", name);
    snprintf(sp, m, "%s%s%s", u->spath, strcmp(u->spath, "/") ? "/" : "", name);
    if (info->type == H5L_TYPE_HARD) {
        if (!(u->x->flags & H5O_COPY_SHALLOW_HIERARCHY_FLAG) &&
            copy_obj(u->x, sp, dp, H5P_DEFAULT, false) < 0)
            goto done;
    }
    else {
        if (!(val = malloc(info->u.val_size + 1)) ||
            H5Lget_val(u->x->sfid, sp, val, info->u.val_size, H5P_DEFAULT) < 0)
            goto done;
        if (info->type == H5L_TYPE_SOFT) {
            if (H5Lcreate_soft(val, u->x->dfid, dp, H5P_DEFAULT, H5P_DEFAULT) < 0)
                goto done;
        }
        else if (H5Lcreate_ud(u->x->dfid, dp, info->type, val, info->u.val_size, H5P_DEFAULT, H5P_DEFAULT) <
                 0)
            goto done;
    }
    ret = 0;
done:
    if (ret < 0)
        u->rc = -1;
    free(val);
    free(dp);
    free(sp);
    return ret;
}

static int
copy_group(xcopy *x, const char *spath, const char *dpath, hid_t lcpl, bool top)
{
    hid_t   sg = -1, dg = -1, gcpl = -1;
    link_ud u   = {x, spath, dpath, 0};
    int     ret = -1;
    if ((sg = H5Gopen2(x->sfid, spath, H5P_DEFAULT)) < 0 || (gcpl = H5Gget_create_plist(sg)) < 0)
        goto done;
    if (!strcmp(dpath, "/")) {
        if ((dg = H5Gopen2(x->dfid, "/", H5P_DEFAULT)) < 0)
            goto done;
    }
    else if ((dg = H5Gcreate2(x->dfid, dpath, lcpl, gcpl, H5P_DEFAULT)) < 0)
        H5ZV_GOTO_ERROR("can't create group '%s' in the destination", dpath);
    if (copy_attrs(x, sg, dg, gcpl) < 0)
        goto done;
    if (!(top || !(x->flags & H5O_COPY_SHALLOW_HIERARCHY_FLAG)))
        goto ok;
    {
        unsigned crt = 0;
        H5Pget_link_creation_order(gcpl, &crt);
        if (H5Literate2(sg, (crt & H5P_CRT_ORDER_INDEXED) ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME, H5_ITER_INC,
                        NULL, copy_link_cb, &u) < 0 ||
            u.rc < 0)
            goto done;
    }
ok:
    ret = 0;
done:
    h5zv_close(gcpl);
    h5zv_close(dg);
    h5zv_close(sg);
    return ret;
}

static int
copy_obj(xcopy *x, const char *spath, const char *dpath, hid_t lcpl, bool top)
{
    H5O_info2_t oi;
    if (H5Oget_info_by_name3(x->sfid, spath, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
        H5ZV_GOTO_ERROR("can't read object '%s' of the source", spath);
    if (oi.rc > 1) {
        /* linked more than once: the second time, link to the first copy */
        for (size_t i = 0; i < x->nseen; i++) {
            int cmp = 1;
            if (H5Otoken_cmp(x->sfid, &x->seen[i].tok, &oi.token, &cmp) >= 0 && cmp == 0)
                return H5Lcreate_hard(x->dfid, x->seen[i].dst, x->dfid, dpath, H5P_DEFAULT, H5P_DEFAULT) < 0
                           ? -1
                           : 0;
        }
        if (x->nseen == x->capseen) {
            size_t c = x->capseen ? 2 * x->capseen : 16;
            seen  *s = realloc(x->seen, c * sizeof *s);
            if (!s)
                H5ZV_GOTO_ERROR("out of memory");
            x->seen    = s;
            x->capseen = c;
        }
        x->seen[x->nseen].tok = oi.token;
        if (!(x->seen[x->nseen].dst = strdup(dpath)))
            H5ZV_GOTO_ERROR("out of memory");
        x->nseen++;
    }
    switch (oi.type) {
        case H5O_TYPE_GROUP:
            return copy_group(x, spath, dpath, lcpl, top);
        case H5O_TYPE_DATASET:
            return copy_dataset(x, spath, dpath, lcpl);
        case H5O_TYPE_NAMED_DATATYPE: {
            hid_t t = H5Topen2(x->sfid, spath, H5P_DEFAULT), c = t >= 0 ? H5Tcopy(t) : -1;
            int   r = c >= 0 && H5Tcommit2(x->dfid, dpath, c, lcpl, H5P_DEFAULT, H5P_DEFAULT) >= 0 ? 0 : -1;
            h5zv_close(c);
            h5zv_close(t);
            if (r < 0)
                H5ZV_GOTO_ERROR("can't copy named datatype '%s'", spath);
            return 0;
        }
        default:
            H5ZV_GOTO_ERROR("can't copy object '%s': unknown object type %d", spath, (int)oi.type);
    }
done:
    return -1;
}

herr_t
h5zv_xcopy_object(void *src, const H5VL_loc_params_t *loc1, const char *src_name, void *dst,
                  const H5VL_loc_params_t *loc2, const char *dst_name, hid_t ocpypl_id, hid_t lcpl_id,
                  hid_t dxpl_id)
{
    char  *sfile = NULL, *spath = NULL, *dfile = NULL, *dpath = NULL;
    xcopy  x   = {-1, -1, 0, NULL, 0, 0};
    herr_t ret = -1;
    (void)dxpl_id;

    if (where(src, loc1->obj_type, src_name, &sfile, &spath) < 0 ||
        where(dst, loc2->obj_type, dst_name, &dfile, &dpath) < 0)
        H5ZV_GOTO_ERROR("can't copy '%s' across formats: can't tell where source and destination are",
                        src_name ? src_name : "");
    if (ocpypl_id != H5P_DEFAULT && ocpypl_id >= 0 && H5Pget_copy_object(ocpypl_id, &x.flags) < 0)
        goto done;
    if ((x.sfid = open_with_us(sfile, H5F_ACC_RDONLY)) < 0)
        H5ZV_GOTO_ERROR("can't open '%s' again to copy from it", sfile);
    if ((x.dfid = open_with_us(dfile, H5F_ACC_RDWR)) < 0)
        H5ZV_GOTO_ERROR("can't open '%s' again to copy into it", dfile);
    if (!h5zv_is_native(dst)) /* nodes made through the API, touched there; dropped all the same */
        h5zv_refidx_drop(((h5zv_obj *)dst)->file);
    if (copy_obj(&x, spath, dpath, lcpl_id, true) < 0)
        H5ZV_GOTO_ERROR("can't copy '%s' of %s to '%s' of %s", spath, sfile, dpath, dfile);
    if (H5Fflush(x.dfid, H5F_SCOPE_LOCAL) < 0)
        H5ZV_GOTO_ERROR("can't flush '%s' after copying into it", dfile);
    ret = 0;
done:
    for (size_t i = 0; i < x.nseen; i++)
        free(x.seen[i].dst);
    free(x.seen);
    h5zv_close(x.dfid);
    h5zv_close(x.sfid);
    free(sfile);
    free(spath);
    free(dfile);
    free(dpath);
    return ret;
}

/* ---- external links across formats ------------------------------------------------------------------- */
void *
h5zv_xcopy_follow_elink(void *obj, const H5VL_loc_params_t *loc, const char *name, H5I_type_t *opened_type,
                        hid_t dxpl_id)
{
    H5L_info2_t          info;
    H5VL_link_get_args_t g;
    void                *val = NULL, *file = NULL, *ret = NULL;
    hid_t                fid   = H5I_INVALID_HID;
    const char          *fname = NULL, *opath = NULL;
    unsigned             lflags = 0;
    H5VL_loc_params_t    by_name;
    h5zv_errs           *es;

    H5VL_loc_params_t link_loc;

    if (!loc)
        return NULL;
    if (name) { /* dataset/group/datatype open: `name` below the object itself */
        if (loc->type != H5VL_OBJECT_BY_SELF)
            return NULL;
        memset(&link_loc, 0, sizeof link_loc);
        link_loc.type                         = H5VL_OBJECT_BY_NAME;
        link_loc.obj_type                     = loc->obj_type;
        link_loc.loc_data.loc_by_name.name    = name;
        link_loc.loc_data.loc_by_name.lapl_id = H5P_LINK_ACCESS_DEFAULT;
        loc                                   = &link_loc;
    }
    else if (loc->type != H5VL_OBJECT_BY_NAME)
        return NULL;
    es = h5zv_err_save();
    {
        memset(&g, 0, sizeof g);
        g.op_type             = H5VL_LINK_GET_INFO;
        g.args.get_info.linfo = &info;
        if (h5zv_class.link_cls.get(obj, loc, &g, dxpl_id, NULL) < 0 || info.type != H5L_TYPE_EXTERNAL ||
            !(val = malloc(info.u.val_size)))
            goto done;
        memset(&g, 0, sizeof g);
        g.op_type               = H5VL_LINK_GET_VAL;
        g.args.get_val.buf      = val;
        g.args.get_val.buf_size = info.u.val_size;
        if (h5zv_class.link_cls.get(obj, loc, &g, dxpl_id, NULL) < 0 ||
            H5Lunpack_elink_val(val, info.u.val_size, &lflags, &fname, &opath) < 0)
            goto done;
        /* only into the other kind: same-kind links were followed (or failed) already */
        if (h5zv_is_native(obj) ? !h5zv_file_is_store(fname) : h5zv_file_is_store(fname))
            goto done;
        /* through the API, with this connector: HDF5 sets up what a native file open needs */
        if ((fid = open_with_us(fname, (lflags & H5F_ACC_RDWR) ? H5F_ACC_RDWR : H5F_ACC_RDONLY)) < 0 ||
            !(file = h5zv_object_of(fid)))
            goto done;
        if (h5zv_file_is_store(fname)) {
            memset(&by_name, 0, sizeof by_name);
            by_name.type                         = H5VL_OBJECT_BY_NAME;
            by_name.obj_type                     = H5I_FILE;
            by_name.loc_data.loc_by_name.name    = opath;
            by_name.loc_data.loc_by_name.lapl_id = H5P_LINK_ACCESS_DEFAULT;
            ret = h5zv_class.object_cls.open(file, &by_name, opened_type, dxpl_id, NULL);
        }
        else {
            /* a native object, opened through the API: HDF5 then wraps what the native connector
             * registers on its own below it (the targets of its external links) with the native file's
             * context, not with the store's we were called in. The id holds it; our wrapper hands the
             * object out and releases the id at close. */
            hid_t        oid = H5Oopen(fid, opath, H5P_DEFAULT);
            void        *raw = oid >= 0 ? h5zv_object_of(oid) : NULL;
            h5zv_native *n   = raw ? h5zv_native_new(raw, h5zv_native_vol_id()) : NULL;
            if (!n) {
                h5zv_close(oid);
                goto done;
            }
            n->owner     = oid;
            *opened_type = H5Iget_type(oid);
            ret          = n;
        }
    }
done:
    /* the object keeps its file alive */
    h5zv_close(fid);
    free(val);
    /* what the attempt pushed is dropped: on success every error, else only the attempt's */
    if (ret || !es) {
        H5Eclear2(H5E_DEFAULT);
        h5zv_err_drop(es);
    }
    else
        h5zv_err_restore(es);
    return ret;
}
