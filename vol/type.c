/*
 * type.c: HDF5 datatypes <-> zarr data types, the engine's memory form, and named datatypes.
 *
 * The natural mapping (docs/FORMAT.md): zarr bool <-> enum {FALSE=0, TRUE=1} on int8 (h5py's);
 * intN/uintN/floatN <-> the IEEE/STD types of the same size, sign and byte order; complex <->
 * compound {r, i}; fixed bytes <-> fixed-size NULLPAD string; string <-> variable-length UTF-8 string;
 * vlen bytes <-> vlen of uint8; struct <-> compound; datetime64/timedelta64 <-> int64; raw <-> opaque.
 * When an HDF5 type does not come back equal from that mapping (an ASCII string, an enum, a
 * bitfield...), its JSON form (vol/type_json.c) is recorded in the node's reserved attribute object
 * ("type") so that HDF5 readers see exactly the type that was written, while zarr readers see the natural
 * type. Compounds keep HDF5's layout (members at their offsets, padding as void fields); floats that are
 * not IEEE's (custom biases, fields, precisions) are raw bytes, never a zarr float of other bits.
 */
#include "h5zv.h"
#include "reserved.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* HDF5's predefined integer type (the library's id, not a copy) of `size` bytes; 1-byte types are the
 * little-endian ones. Negative for other sizes. */
static hid_t
std_int(size_t size, bool sign, bool be)
{
    switch (size) {
        case 1:
            return sign ? H5T_STD_I8LE : H5T_STD_U8LE;
        case 2:
            return sign ? (be ? H5T_STD_I16BE : H5T_STD_I16LE) : (be ? H5T_STD_U16BE : H5T_STD_U16LE);
        case 4:
            return sign ? (be ? H5T_STD_I32BE : H5T_STD_I32LE) : (be ? H5T_STD_U32BE : H5T_STD_U32LE);
        case 8:
            return sign ? (be ? H5T_STD_I64BE : H5T_STD_I64LE) : (be ? H5T_STD_U64BE : H5T_STD_U64LE);
        default:
            return H5I_INVALID_HID;
    }
}

/* The library's own IEEE float id (no copy: never closed) of `size` 4 or 8 bytes; negative otherwise. */
static hid_t
std_float(size_t size, bool be)
{
    if (size == 4)
        return be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE;
    if (size == 8)
        return be ? H5T_IEEE_F64BE : H5T_IEEE_F64LE;
    return H5I_INVALID_HID;
}

static hid_t
int_type(size_t size, bool sign, char endian)
{
    hid_t base = std_int(size, sign, endian == '>');
    return base < 0 ? H5I_INVALID_HID : H5Tcopy(base);
}

static hid_t
float_type(size_t size, char endian)
{
    bool be = endian == '>';
    if (size == 4 || size == 8)
        return H5Tcopy(std_float(size, be));
    if (size == 2) {
        /* IEEE binary16: sign bit 15, exponent bits 10-14 (bias 15), mantissa bits 0-9. */
        hid_t t = H5Tcopy(be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE);
        H5Tset_fields(t, 15, 10, 5, 0, 10);
        H5Tset_precision(t, 16);
        H5Tset_size(t, 2);
        H5Tset_ebias(t, 15);
        return t;
    }
    return H5I_INVALID_HID;
}

void
h5zv_reclaim(hid_t mf, size_t n, void *buf)
{
    if (n && (H5Tdetect_class(mf, H5T_VLEN) > 0 || H5Tdetect_class(mf, H5T_STRING) > 0 ||
              H5Tdetect_class(mf, H5T_REFERENCE) > 0)) {
        hsize_t d   = n;
        hid_t   spc = H5Screate_simple(1, &d, NULL);
        H5Treclaim(mf, spc, H5P_DEFAULT, buf);
        H5Sclose(spc);
    }
}

hid_t
h5zv_type_vlen_utf8(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

/* ---- types held by open objects --------------------------------------------------------------------
 * HDF5 registers its predefined types without an application reference, so H5Fget_obj_count and
 * H5Fget_obj_ids don't count them; a copy made with H5Tcopy does count, as if the application had opened
 * a datatype. Objects therefore hold the predefined type itself when the file type is one. */
static hid_t
predefined_like(hid_t t)
{
    H5T_class_t c;
    size_t      sz;
    H5T_order_t ord;
    hid_t       cand = H5I_INVALID_HID;
    if (h5zv_type_std_info(t, NULL, NULL, NULL, NULL))
        return t; /* one of them already */
    c = H5Tget_class(t);
    if (c != H5T_INTEGER && c != H5T_FLOAT)
        return H5I_INVALID_HID;
    sz  = H5Tget_size(t);
    ord = H5Tget_order(t);
    if (ord != H5T_ORDER_LE && ord != H5T_ORDER_BE)
        return H5I_INVALID_HID;
    if (c == H5T_INTEGER) {
        if ((cand = std_int(sz, H5Tget_sign(t) == H5T_SGN_2, ord == H5T_ORDER_BE)) < 0)
            return H5I_INVALID_HID;
    }
    else if (sz == 4)
        cand = ord == H5T_ORDER_LE ? H5T_IEEE_F32LE : H5T_IEEE_F32BE;
    else if (sz == 8)
        cand = ord == H5T_ORDER_LE ? H5T_IEEE_F64LE : H5T_IEEE_F64BE;
    else
        return H5I_INVALID_HID;
    return H5Tequal(t, cand) > 0 ? cand : H5I_INVALID_HID;
}

hid_t
h5zv_type_keep(hid_t t)
{
    hid_t p;
    if (t < 0)
        return t;
    if ((p = predefined_like(t)) == t)
        return t; /* already a predefined type */
    if (p >= 0 && H5Tcommitted(t) <= 0) {
        H5Tclose(t);
        return p;
    }
    return t;
}

hid_t
h5zv_type_keep_copy(hid_t t)
{
    hid_t p;
    if (h5zv_type_std_info(t, NULL, NULL, NULL, NULL))
        return t;
    /* what h5zv_type_keep makes of a copy (never committed), without the copy it would close again: the
     * predefined type `t` equals, else the copy */
    if ((p = predefined_like(t)) >= 0)
        return p;
    return H5Tcopy(t);
}

void
h5zv_type_release(hid_t t)
{
    h5zv_errs *es;
    hbool_t    term = false;
    if (t < 0 || h5zv_type_std_info(t, NULL, NULL, NULL, NULL))
        return; /* a predefined type is never ours to close (h5zv_type_keep holds it as it is) */
    /* At HDF5's shutdown (H5T_top_term_package) HDF5 closes every datatype id itself in one mark-and-sweep
     * pass: a committed type left open closes here while the type id it holds may be freed already in
     * the same pass (freed, still listed as valid until the sweep ends). Nothing to do: that pass frees
     * every id left, this one too. */
    if (H5is_library_terminating(&term) >= 0 && term)
        return;
    es = h5zv_err_save(); /* cleanup after an error: keep what was pushed (see h5zv_close) */
    if (H5Iis_valid(t) && predefined_like(t) != t)
        H5Tclose(t);
    h5zv_err_restore(es);
}

hid_t
h5zv_type_bool(void)
{
    hid_t  t = H5Tenum_create(H5T_NATIVE_INT8);
    int8_t v = 0;
    H5Tenum_insert(t, "FALSE", &v);
    v = 1;
    H5Tenum_insert(t, "TRUE", &v);
    return t;
}

/* The library's predefined id that natural_type would return a copy of, for a zarr integer or IEEE
 * single/double float dtype (not a copy: never closed); negative for other dtypes. */
static hid_t
natural_std(const zarr_dtype *t)
{
    switch (t->kind) {
        case ZARR_INT:
        case ZARR_DATETIME:
        case ZARR_TIMEDELTA:
            return std_int(t->size, true, t->endian == '>');
        case ZARR_UINT:
            return std_int(t->size, false, t->endian == '>');
        case ZARR_FLOAT:
            return std_float(t->size, t->endian == '>');
        default:
            return H5I_INVALID_HID;
    }
}

static hid_t
natural_type(const zarr_dtype *t)
{
    hid_t h = H5I_INVALID_HID, sub;
    switch (t->kind) {
        case ZARR_BOOL:
            return h5zv_type_bool();
        case ZARR_INT:
        case ZARR_DATETIME:
        case ZARR_TIMEDELTA:
            return int_type(t->size, true, t->endian);
        case ZARR_UINT:
            return int_type(t->size, false, t->endian);
        case ZARR_FLOAT:
            return float_type(t->size, t->endian);
        case ZARR_COMPLEX:
            if ((sub = float_type(t->size / 2, t->endian)) < 0)
                return H5I_INVALID_HID;
            h = H5Tcreate(H5T_COMPOUND, t->size);
            H5Tinsert(h, "r", 0, sub);
            H5Tinsert(h, "i", t->size / 2, sub);
            H5Tclose(sub);
            return h;
        case ZARR_FIXED_BYTES:
            h = H5Tcopy(H5T_C_S1);
            H5Tset_size(h, t->size ? t->size : 1);
            H5Tset_strpad(h, H5T_STR_NULLPAD);
            return h;
        case ZARR_FIXED_UTF32: {
            hsize_t n = t->size / 4 ? t->size / 4 : 1;
            hid_t   u = int_type(4, false, t->endian);
            h         = H5Tarray_create2(u, 1, &n);
            H5Tclose(u);
            return h;
        }
        case ZARR_VLEN_UTF8:
            return h5zv_type_vlen_utf8();
        case ZARR_VLEN_BYTES:
            return H5Tvlen_create(H5T_STD_U8LE);
        case ZARR_RAW:
            h = H5Tcreate(H5T_OPAQUE, t->size ? t->size : 1);
            H5Tset_tag(h, "zarr raw bytes");
            return h;
        case ZARR_STRUCT:
            h = H5Tcreate(H5T_COMPOUND, t->size ? t->size : 1);
            for (size_t i = 0; i < t->nfields; i++) {
                const zarr_field *fd = &t->fields[i];
                hid_t             ft = natural_type(fd->type);
                if (ft < 0) {
                    H5Tclose(h);
                    return H5I_INVALID_HID;
                }
                if (fd->ndim > 0) {
                    hsize_t dims[8];
                    for (int d = 0; d < fd->ndim; d++)
                        dims[d] = fd->shape[d];
                    hid_t at = H5Tarray_create2(ft, (unsigned)fd->ndim, dims);
                    H5Tclose(ft);
                    ft = at;
                }
                H5Tinsert(h, fd->name, fd->offset, ft);
                H5Tclose(ft);
            }
            return h;
    }
    return H5I_INVALID_HID;
}

/* True if the recorded HDF5 type `h` is one the connector stores as the zarr data type `t`: the same
 * element size, and pointers (vlen, packed) on both sides or neither. A store is untrusted: a recorded
 * type of another size would have reads write past the caller's buffer, and one with pointers over
 * plain numbers would hand chunk bytes out as pointers (fuzz_open findings 8-10). */
static bool
recorded_type_fits(hid_t h, const zarr_dtype *t)
{
    bool        rec = false, ok;
    zarr_dtype *w;
    H5E_BEGIN_TRY { w = h5zv_type_to_zarr(h, 3, &rec); }
    H5E_END_TRY
    ok = w && t && w->size == t->size && zarr_dtype_has_vlen(w) == zarr_dtype_has_vlen(t);
    if (!ok)
        h5zv_err_push(__func__, __LINE__,
                      "the HDF5 type in %s.type (%zu-byte elements%s) does not fit the array's zarr data "
                      "type (%zu-byte elements%s)",
                      H5ZV_META_KEY, w ? w->size : (size_t)0,
                      w && zarr_dtype_has_vlen(w) ? ", with pointers" : "", t ? t->size : (size_t)0,
                      t && zarr_dtype_has_vlen(t) ? ", with pointers" : "");
    zarr_dtype_free(w);
    return ok;
}

hid_t
h5zv_type_from_zarr(const zarr_dtype *t, struct json_object *meta)
{
    struct json_object *v;
    if (meta && json_object_object_get_ex(meta, "type", &v)) {
        hid_t h = H5I_INVALID_HID;
        if (h5zv_reserved_legacy(v)) {
            /* the earlier form (H5Tencode): not decoded (vol/reserved_legacy.c converts it when allowed) */
            H5ZV_LEGACY_REFUSE(H5ZV_META_KEY ".type", "H5Tencode");
            return H5I_INVALID_HID;
        }
        if (h5zv_type_from_json(v, H5ZV_META_KEY ".type", &h) < 0)
            return H5I_INVALID_HID;
        if (h >= 0 && !recorded_type_fits(h, t)) {
            H5Tclose(h);
            return H5I_INVALID_HID;
        }
        if (h >= 0)
            return h;
    }
    return natural_type(t);
}

/* True if `h` is an IEEE binary16/32/64 float in little- or big-endian order (zarr's float16/32/64). */
bool
h5zv_type_is_ieee_float(hid_t h)
{
    H5T_order_t ord;
    size_t      size;
    hid_t       ieee;
    bool        r;
    if (h5zv_type_std_info(h, NULL, NULL, NULL, NULL))
        return true; /* H5T_IEEE_F32/F64 LE/BE themselves */
    size = H5Tget_size(h);
    ord  = H5Tget_order(h);
    if (H5Tget_class(h) != H5T_FLOAT || (size != 2 && size != 4 && size != 8) ||
        (ord != H5T_ORDER_LE && ord != H5T_ORDER_BE))
        return false;
    if (size != 2) /* the library's own ids, no copy */
        return H5Tequal(std_float(size, ord == H5T_ORDER_BE), h) > 0;
    if ((ieee = float_type(size, ord == H5T_ORDER_BE ? '>' : '<')) < 0)
        return false;
    r = H5Tequal(ieee, h) > 0;
    H5Tclose(ieee);
    return r;
}

static zarr_dtype *to_zarr(hid_t h, int fmt);

/* ---- compounds: the stored element is the HDF5 layout ---------------------------------------------------
 * A compound's element is stored as HDF5 lays it out (what native HDF5 stores): its size, each member at its
 * offset, padding included. zarr structs (v2 structured dtypes, v3 struct fields) have no offsets: a field
 * starts where the one before it ends. So the fields are the members in offset order, with a void field
 * (v2 "|V<n>", v3 "r<bits>") named `_h5zarr_pad<offset>` for every gap and for trailing padding; other zarr
 * readers see the members by name at their offsets (numpy's view of such a dtype), and the HDF5 type, whose
 * member order and padding that form does not say, is recorded (docs/FORMAT.md "Data types"). */

/* Padding field name for the gap at byte `off` of compound `h`: `_h5zarr_pad<off>`, with underscores
 * appended while a member has that name (pads at other offsets differ in the digits). New string. */
static char *
pad_name(hid_t h, size_t off)
{
    char buf[96];
    int  idx;
    snprintf(buf, sizeof buf, "_h5zarr_pad%zu", off);
    for (;;) {
        H5E_BEGIN_TRY { idx = H5Tget_member_index(h, buf); }
        H5E_END_TRY
        if (idx < 0)
            return strdup(buf);
        if (strlen(buf) + 2 > sizeof buf)
            return NULL;
        strcat(buf, "_");
    }
}

typedef struct memb_at {
    size_t   off, size;
    unsigned idx;
} memb_at;

static int
memb_at_cmp(const void *a, const void *b)
{
    const memb_at *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Appends a void field of `len` bytes at `off` to struct `t` (fields has room). */
static int
struct_pad(zarr_dtype *t, hid_t h, size_t off, size_t len)
{
    zarr_field *fd = &t->fields[t->nfields];
    if (!(fd->type = zarr_dtype_new(ZARR_RAW, len)) || !(fd->name = pad_name(h, off))) {
        zarr_dtype_free(fd->type);
        fd->type = NULL;
        return -1;
    }
    fd->offset = off;
    t->nfields++;
    return 0;
}

/* The zarr struct of compound `h` (`n` > 0 members, `size` bytes); NULL if a member has no zarr form. */
static zarr_dtype *
struct_to_zarr(hid_t h, int n, size_t size, int fmt)
{
    zarr_dtype *t   = NULL;
    memb_at    *ms  = NULL;
    size_t      end = 0;
    hid_t       mt  = H5I_INVALID_HID;
    bool        ok  = false;

    if (!(ms = calloc((size_t)n, sizeof *ms)))
        return NULL;
    for (int i = 0; i < n; i++) {
        hid_t m    = H5Tget_member_type(h, (unsigned)i);
        ms[i].off  = H5Tget_member_offset(h, (unsigned)i);
        ms[i].size = m < 0 ? 0 : H5Tget_size(m);
        ms[i].idx  = (unsigned)i;
        h5zv_close(m);
        if (!ms[i].size)
            goto done;
    }
    qsort(ms, (size_t)n, sizeof *ms, memb_at_cmp);
    /* at most one gap before each member and one at the end */
    if (!(t = zarr_dtype_new(ZARR_STRUCT, size)) ||
        !(t->fields = calloc(2 * (size_t)n + 1, sizeof *t->fields)))
        goto done;
    t->size    = size;
    t->endian  = '|';
    t->nfields = 0;
    for (int k = 0; k < n; k++) {
        unsigned    i = ms[k].idx;
        zarr_field *fd;
        char       *nm;
        if (ms[k].off < end || ms[k].off + ms[k].size > size)
            goto done; /* overlapping members or past the end: HDF5 refuses both, never stored */
        if (ms[k].off > end && struct_pad(t, h, end, ms[k].off - end) < 0)
            goto done;
        fd         = &t->fields[t->nfields++];
        nm         = H5Tget_member_name(h, i);
        fd->name   = strdup(nm ? nm : "");
        fd->offset = ms[k].off;
        H5free_memory(nm);
        if (!fd->name || (mt = H5Tget_member_type(h, i)) < 0)
            goto done;
        if (H5Tget_class(mt) == H5T_ARRAY && fmt == 3)
            goto done;
        if (H5Tget_class(mt) == H5T_ARRAY) {
            hsize_t dims[8];
            int     nd = H5Tget_array_ndims(mt);
            hid_t   bt;
            if (nd < 1 || nd > 8 || (bt = H5Tget_super(mt)) < 0)
                goto done;
            H5Tget_array_dims2(mt, dims);
            fd->ndim = nd;
            for (int d = 0; d < nd; d++)
                fd->shape[d] = dims[d];
            fd->type = to_zarr(bt, fmt);
            H5Tclose(bt);
        }
        else {
            fd->type = to_zarr(mt, fmt);
            /* a member with no zarr type of its own but plain bytes (a custom float, long double): a void
             * field of its size, so the other members keep their names */
            if (!fd->type && !h5zv_type_has_pointers(mt))
                fd->type = zarr_dtype_new(ZARR_RAW, ms[k].size);
        }
        h5zv_close(mt);
        mt = H5I_INVALID_HID;
        if (!fd->type || zarr_dtype_has_vlen(fd->type))
            goto done;
        end = ms[k].off + ms[k].size;
    }
    if (end < size && struct_pad(t, h, end, size - end) < 0)
        goto done;
    ok = true;
done:
    h5zv_close(mt);
    free(ms);
    if (!ok) {
        zarr_dtype_free(t);
        t = NULL;
    }
    return t;
}

static zarr_dtype *
to_zarr(hid_t h, int fmt)
{
    H5T_class_t cls  = H5Tget_class(h);
    size_t      size = H5Tget_size(h);
    zarr_dtype *t    = NULL;

    switch (cls) {
        case H5T_INTEGER:
            t = zarr_dtype_new(H5Tget_sign(h) == H5T_SGN_NONE ? ZARR_UINT : ZARR_INT, size);
            if (t)
                t->endian = size == 1 ? '|' : (H5Tget_order(h) == H5T_ORDER_BE ? '>' : '<');
            return t;
        case H5T_BITFIELD:
            t = zarr_dtype_new(ZARR_UINT, size);
            if (t)
                t->endian = size == 1 ? '|' : (H5Tget_order(h) == H5T_ORDER_BE ? '>' : '<');
            return t;
        case H5T_FLOAT:
            /* zarr's floats are IEEE's: any other layout (h5py's custom biases and exponent sizes, offsets,
             * VAX order, long double) has no zarr float and is stored as raw bytes, its type recorded */
            if (!h5zv_type_is_ieee_float(h))
                break;
            t = zarr_dtype_new(ZARR_FLOAT, size);
            if (t)
                t->endian = H5Tget_order(h) == H5T_ORDER_BE ? '>' : '<';
            return t;
        case H5T_ENUM: {
            hid_t super = H5Tget_super(h);
            int   n     = H5Tget_nmembers(h);
            if (n == 2 && size == 1) {
                char  *a = H5Tget_member_name(h, 0), *b = H5Tget_member_name(h, 1);
                int8_t va = -1, vb = -1;
                H5Tget_member_value(h, 0, &va);
                H5Tget_member_value(h, 1, &vb);
                bool is_bool = a && b && !strcmp(a, "FALSE") && !strcmp(b, "TRUE") && va == 0 && vb == 1;
                H5free_memory(a);
                H5free_memory(b);
                if (is_bool) {
                    H5Tclose(super);
                    return zarr_dtype_new(ZARR_BOOL, 1);
                }
            }
            t = to_zarr(super, fmt);
            H5Tclose(super);
            return t;
        }
        case H5T_STRING:
            if (H5Tis_variable_str(h) > 0)
                return zarr_dtype_new(ZARR_VLEN_UTF8, sizeof(char *));
            t = zarr_dtype_new(ZARR_FIXED_BYTES, size);
            if (t) {
                t->nchars = size;
                t->endian = '|';
            }
            return t;
        case H5T_OPAQUE:
            t = zarr_dtype_new(ZARR_RAW, size);
            if (t) {
                t->nchars = size;
                t->endian = '|';
            }
            return t;
        case H5T_VLEN: {
            /* vlen sequences of fixed-size elements: vlen bytes holding the elements' memory form
             * (the HDF5 type is recorded when it is not vlen of uint8) */
            hid_t super = H5Tget_super(h);
            bool flat = H5Tdetect_class(super, H5T_VLEN) <= 0 && H5Tdetect_class(super, H5T_REFERENCE) <= 0 &&
                        !(H5Tget_class(super) == H5T_STRING && H5Tis_variable_str(super) > 0);
            H5Tclose(super);
            if (flat)
                return zarr_dtype_new(ZARR_VLEN_BYTES, sizeof(zarr_vlen));
            break;
        }
        case H5T_COMPOUND: {
            int n = H5Tget_nmembers(h);
            if (n == 2) {
                char *a = H5Tget_member_name(h, 0), *b = H5Tget_member_name(h, 1);
                hid_t ta = H5Tget_member_type(h, 0), tb = H5Tget_member_type(h, 1);
                bool  cplx = a && b && !strcmp(a, "r") && !strcmp(b, "i") && H5Tget_class(ta) == H5T_FLOAT &&
                            h5zv_type_is_ieee_float(ta) && H5Tequal(ta, tb) > 0 &&
                            H5Tget_member_offset(h, 0) == 0 &&
                            H5Tget_member_offset(h, 1) == H5Tget_size(ta) && size == 2 * H5Tget_size(ta) &&
                            (H5Tget_size(ta) == 4 || H5Tget_size(ta) == 8);
                char endian = H5Tget_order(ta) == H5T_ORDER_BE ? '>' : '<';
                H5free_memory(a);
                H5free_memory(b);
                H5Tclose(ta);
                H5Tclose(tb);
                if (cplx) {
                    t = zarr_dtype_new(ZARR_COMPLEX, size);
                    if (t)
                        t->endian = endian;
                    return t;
                }
            }
            if (n <= 0)
                break;
            return struct_to_zarr(h, n, size, fmt);
        }
        default:
            break;
    }
    return NULL;
}

/* True if `t` has a big-endian part: the byte order lives in the codec chain, not the zarr dtype a
 * store is read back with, so such types are recorded. */
static bool
has_big_endian(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    bool        r = false;
    if (c == H5T_INTEGER || c == H5T_FLOAT || c == H5T_BITFIELD)
        return H5Tget_size(t) > 1 && H5Tget_order(t) == H5T_ORDER_BE;
    if (c == H5T_ENUM || c == H5T_ARRAY || c == H5T_VLEN) {
        hid_t b = H5Tget_super(t);
        r       = b >= 0 && has_big_endian(b);
        H5Tclose(b);
    }
    else if (c == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t);
        for (int i = 0; i < n && !r; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            r       = m >= 0 && has_big_endian(m);
            H5Tclose(m);
        }
    }
    return r;
}

bool
h5zv_type_has_pointers(hid_t t)
{
    H5T_class_t c;
    bool        r = false;
    if (h5zv_type_std_info(t, NULL, NULL, NULL, NULL))
        return false; /* a predefined integer or float: no HDF5 call */
    c = H5Tget_class(t);
    if (c == H5T_VLEN || c == H5T_REFERENCE || (c == H5T_STRING && H5Tis_variable_str(t) > 0))
        return true;
    if (c == H5T_ARRAY) {
        hid_t b = H5Tget_super(t);
        r       = b < 0 || h5zv_type_has_pointers(b);
        H5Tclose(b);
    }
    else if (c == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t);
        for (int i = 0; i < n && !r; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            r       = m < 0 || h5zv_type_has_pointers(m);
            H5Tclose(m);
        }
    }
    return r;
}

bool
h5zv_type_is_encoded(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    bool        r = false;
    if (!h5zv_type_has_pointers(t))
        return false;
    if (c == H5T_STRING)
        return false; /* a variable-length string: zarr's string type */
    if (c == H5T_VLEN) {
        hid_t b = H5Tget_super(t);
        r       = b < 0 || h5zv_type_has_pointers(b);
        H5Tclose(b);
        return r; /* a vlen of fixed-size elements: vlen bytes of the elements' memory form */
    }
    return true;
}

/* ---- the packed form of elements with pointers (docs/FORMAT.md) ------------------------------------
 * Walks the HDF5 type: fixed-size parts are their memory-form bytes; a variable-length string is a
 * little-endian u64 byte count (UINT64_MAX for a NULL pointer) and the bytes; a vlen sequence is a u64
 * element count and the elements; arrays and compound members follow one another (no padding). */
/* The number of elements of array type `t`. */
static uint64_t
array_count(hid_t t)
{
    hsize_t  dims[32];
    int      nd = H5Tget_array_ndims(t);
    uint64_t n  = 1;
    if (nd < 0 || nd > 32)
        return 0;
    H5Tget_array_dims2(t, dims);
    for (int i = 0; i < nd; i++)
        n *= dims[i];
    return n;
}

typedef struct pk_buf {
    uint8_t *p;
    size_t   n, cap;
} pk_buf;

static int
pk_put(pk_buf *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        size_t   cap = b->cap ? b->cap : 64;
        uint8_t *q;
        while (cap < b->n + n)
            cap *= 2;
        if (!(q = realloc(b->p, cap)))
            return -1;
        b->p   = q;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->n, src, n);
    b->n += n;
    return 0;
}

static int
pk_u64(pk_buf *b, uint64_t v)
{
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(v >> (8 * i));
    return pk_put(b, le, 8);
}

/* ---- object references (H5T_STD_REF) ----------------------------------------------------------------
 * A reference is stored as the referenced object's path in its file ("" for a null reference): the
 * in-memory H5R_ref_t holds pointers and ids. Packing asks HDF5 for the path (H5Rget_obj_name, which
 * comes back to the connector by token); unpacking rebuilds the reference with H5Rcreate_object on an id
 * for the file being read, registered once per transfer with H5VLwrap_register. */
static h5zv_file *ref_file;                  /* the file of the current transfer (borrowed) */
static hid_t      ref_fid = H5I_INVALID_HID; /* an id for it, made on first need */

void
h5zv_refs_begin(h5zv_file *f)
{
    ref_file = f;
    ref_fid  = H5I_INVALID_HID;
}

void
h5zv_refs_end(void)
{
    /* references made hold their own count on the id: the file lives while they do */
    if (ref_fid >= 0)
        H5Idec_ref(ref_fid);
    ref_fid  = H5I_INVALID_HID;
    ref_file = NULL;
}

static bool
ref_is_null(const uint8_t *e)
{
    for (size_t i = 0; i < sizeof(H5R_ref_t); i++)
        if (e[i])
            return false;
    return true;
}

static int pk_put(pk_buf *b, const void *src, size_t n);
static int pk_u64(pk_buf *b, uint64_t v);

/* H5Rget_file_name / H5Rget_obj_name into `stack` (cap bytes) when the name fits, else into a malloc'ed
 * buffer (*heap, the caller frees): one call for the usual short name instead of a size query and a
 * fetch (each call comes back to the connector and looks the token up). NULL on failure. */
static const char *
ref_name(const H5R_ref_t *r, bool file, char *stack, size_t cap, char **heap)
{
    ssize_t n =
        file ? H5Rget_file_name(r, stack, cap) : H5Rget_obj_name((H5R_ref_t *)r, H5P_DEFAULT, stack, cap);
    *heap = NULL;
    if (n < 0)
        return NULL;
    if ((size_t)n < cap)
        return stack;
    if (!(*heap = calloc((size_t)n + 1, 1)) ||
        (file ? H5Rget_file_name(r, *heap, (size_t)n + 1)
              : H5Rget_obj_name((H5R_ref_t *)r, H5P_DEFAULT, *heap, (size_t)n + 1)) < 0) {
        free(*heap);
        *heap = NULL;
        return NULL;
    }
    return *heap;
}

static int
pack_ref(const uint8_t *e, pk_buf *b)
{
    const H5R_ref_t *r = (const H5R_ref_t *)e;
    const char      *name, *fname;
    char             nbuf[512], fbuf[512], *nheap = NULL, *fheap = NULL;
    int              rc = -1;
    if (ref_is_null(e))
        return pk_u64(b, 0);
    if (H5Rget_type(r) != H5R_OBJECT2) {
        h5zv_err_push(__func__, __LINE__,
                      "only object references (H5R_OBJECT2) can be stored; region and attribute references "
                      "have no zarr form");
        return -1;
    }
    if (ref_file && (fname = ref_name(r, true, fbuf, sizeof fbuf, &fheap)) && *fname) {
        /* the same name as the file's is the file; else compare real paths (a URL as given) */
        if (!h5zv_file_is_named(ref_file, fname)) {
            h5zv_err_push(__func__, __LINE__,
                          "reference to an object in another file ('%s') can't be stored in '%s'", fname,
                          ref_file->name);
            goto done;
        }
    }
    if (!(name = ref_name(r, false, nbuf, sizeof nbuf, &nheap)) || !*name) {
        h5zv_err_push(__func__, __LINE__, "can't get the path of a referenced object (is it unlinked?)");
        goto done;
    }
    rc = pk_u64(b, strlen(name)) < 0 || pk_put(b, name, strlen(name)) < 0 ? -1 : 0;
done:
    free(nheap);
    free(fheap);
    return rc;
}

static int
unpack_ref(const char *path, uint8_t *e)
{
    if (!ref_file) {
        h5zv_err_push(__func__, __LINE__, "internal: no file to resolve reference '%s' in", path);
        return -1;
    }
    if (ref_fid < 0) {
        h5zv_obj *fo = h5zv_obj_new(ref_file, H5I_FILE, "");
        if (fo) /* no handle of the program's: the references it makes hold the store's one unnumbered
                 * H5VL_OBJECT_GET_FILE object, not one per transfer (object.c) */
            fo->via = 0;
        if (!fo || (ref_fid = H5VLwrap_register(fo, H5I_FILE)) < 0) {
            h5zv_obj_free(fo);
            ref_fid = H5I_INVALID_HID;
            h5zv_err_push(__func__, __LINE__, "can't register a file id to rebuild references in '%s'",
                          ref_file->name);
            return -1;
        }
    }
    if (H5Rcreate_object(ref_fid, path, H5P_DEFAULT, (H5R_ref_t *)e) < 0) {
        memset(e, 0, sizeof(H5R_ref_t));
        h5zv_err_push(__func__, __LINE__, "stored reference to '%s': no such object in '%s'", path,
                      ref_file->name);
        return -1;
    }
    return 0;
}

void
h5zv_type_zero_refs(hid_t t, void *buf, size_t n)
{
    H5T_class_t c  = H5Tget_class(t);
    size_t      sz = H5Tget_size(t);
    uint8_t    *p  = buf;
    if (!buf || H5Tdetect_class(t, H5T_REFERENCE) <= 0)
        return;
    if (c == H5T_REFERENCE) {
        memset(p, 0, n * sz);
        return;
    }
    for (size_t i = 0; i < n; i++, p += sz) {
        if (c == H5T_VLEN) {
            hid_t  b = H5Tget_super(t);
            hvl_t *v = (hvl_t *)p;
            if (v->p)
                h5zv_type_zero_refs(b, v->p, v->len);
            H5Tclose(b);
        }
        else if (c == H5T_ARRAY) {
            hid_t   b = H5Tget_super(t);
            hsize_t dims[32], k = 1;
            int     nd = H5Tget_array_ndims(t);
            if (nd > 0 && nd <= 32) {
                H5Tget_array_dims2(t, dims);
                for (int d = 0; d < nd; d++)
                    k *= dims[d];
                h5zv_type_zero_refs(b, p, (size_t)k);
            }
            H5Tclose(b);
        }
        else if (c == H5T_COMPOUND) {
            int nm = H5Tget_nmembers(t);
            for (int m = 0; m < nm; m++) {
                hid_t mt = H5Tget_member_type(t, (unsigned)m);
                h5zv_type_zero_refs(mt, p + H5Tget_member_offset(t, (unsigned)m), 1);
                H5Tclose(mt);
            }
        }
    }
}

/* ---- element plans -----------------------------------------------------------------------------------
 * What pack_elem and unpack_elem need of a type, taken from HDF5 once per transfer instead of once per
 * element: each H5Tget_member_type / H5Tget_super copies a type and registers an id, and
 * H5DSattach_scale reads and rewrites its REFERENCE_LIST (a compound of a reference and an int) once per
 * variable on a dimension, for every scale already attached. */
struct h5zv_enc_plan {
    H5T_class_t            c;
    size_t                 size;  /* H5Tget_size */
    bool                   vstr;  /* a variable-length string */
    uint64_t               count; /* arrays: the element count */
    struct h5zv_enc_plan  *sup;   /* vlens and arrays: the base type */
    unsigned               nm;    /* compounds: the members, at their offsets */
    size_t                *off;
    struct h5zv_enc_plan **mem;
};

void
h5zv_enc_plan_free(h5zv_enc_plan *p)
{
    if (!p)
        return;
    h5zv_enc_plan_free(p->sup);
    for (unsigned i = 0; p->mem && i < p->nm; i++)
        h5zv_enc_plan_free(p->mem[i]);
    free(p->mem);
    free(p->off);
    free(p);
}

h5zv_enc_plan *
h5zv_enc_plan_new(hid_t t)
{
    h5zv_enc_plan *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->c    = H5Tget_class(t);
    p->size = H5Tget_size(t);
    if (p->c == H5T_NO_CLASS || p->size == 0)
        goto fail;
    if (p->c == H5T_STRING)
        p->vstr = H5Tis_variable_str(t) > 0;
    else if (p->c == H5T_VLEN || p->c == H5T_ARRAY) {
        hid_t sup = H5Tget_super(t);
        p->sup    = sup >= 0 ? h5zv_enc_plan_new(sup) : NULL;
        if (sup >= 0)
            H5Tclose(sup);
        if (!p->sup)
            goto fail;
        if (p->c == H5T_ARRAY)
            p->count = array_count(t);
    }
    else if (p->c == H5T_COMPOUND) {
        int nm = H5Tget_nmembers(t);
        if (nm < 0)
            goto fail;
        p->nm = (unsigned)nm;
        if (nm && (!(p->off = calloc((size_t)nm, sizeof *p->off)) ||
                   !(p->mem = calloc((size_t)nm, sizeof *p->mem))))
            goto fail;
        for (unsigned i = 0; i < p->nm; i++) {
            hid_t mt = H5Tget_member_type(t, i);
            if (mt < 0)
                goto fail;
            p->mem[i] = h5zv_enc_plan_new(mt);
            p->off[i] = H5Tget_member_offset(t, i);
            H5Tclose(mt);
            if (!p->mem[i])
                goto fail;
        }
    }
    return p;
fail:
    h5zv_enc_plan_free(p);
    return NULL;
}

static int
pack_elem(const h5zv_enc_plan *t, const uint8_t *e, pk_buf *b)
{
    int rc = 0;
    if (t->c == H5T_REFERENCE)
        return pack_ref(e, b);
    if (t->vstr) {
        const char *s = *(char *const *)e;
        size_t      n = s ? strlen(s) : 0;
        return pk_u64(b, s ? (uint64_t)n : UINT64_MAX) < 0 || pk_put(b, s, n) < 0 ? -1 : 0;
    }
    if (t->c == H5T_VLEN || t->c == H5T_ARRAY) {
        size_t   es = t->sup->size, n;
        uint8_t *p;
        if (t->c == H5T_VLEN) {
            const hvl_t *v = (const hvl_t *)e;
            n              = v->p ? v->len : 0;
            p              = v->p;
            rc             = pk_u64(b, n);
        }
        else {
            n = (size_t)t->count;
            p = (uint8_t *)e;
        }
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = pack_elem(t->sup, p + i * es, b);
        return rc;
    }
    if (t->c == H5T_COMPOUND) {
        for (unsigned i = 0; i < t->nm && rc == 0; i++)
            rc = pack_elem(t->mem[i], e + t->off[i], b);
        return rc;
    }
    return pk_put(b, e, t->size);
}

int
h5zv_enc_pack_plan(const h5zv_enc_plan *p, const void *elem, zarr_vlen *out)
{
    pk_buf b = {0};
    if (pack_elem(p, elem, &b) < 0) {
        free(b.p);
        return -1;
    }
    out->len = b.n;
    out->p   = b.p;
    return 0;
}

int
h5zv_enc_pack(hid_t mf, const void *elem, zarr_vlen *out)
{
    h5zv_enc_plan *p = h5zv_enc_plan_new(mf);
    int            rc;
    if (!p) {
        h5zv_err_push(__func__, __LINE__, "can't read the datatype to pack an element");
        return -1;
    }
    rc = h5zv_enc_pack_plan(p, elem, out);
    h5zv_enc_plan_free(p);
    return rc;
}

typedef struct pk_in {
    const uint8_t *p;
    size_t         n;
} pk_in;

static int
pk_get(pk_in *in, void *dst, size_t n)
{
    if (n > in->n)
        return -1;
    if (n)
        memcpy(dst, in->p, n);
    in->p += n;
    in->n -= n;
    return 0;
}

static int
pk_get_u64(pk_in *in, uint64_t *v)
{
    uint8_t le[8];
    if (pk_get(in, le, 8) < 0)
        return -1;
    *v = 0;
    for (int i = 0; i < 8; i++)
        *v |= (uint64_t)le[i] << (8 * i);
    return 0;
}

/* Fills `e` (zeroed by the caller) from `in`; pointers are malloc'ed. */
static int
unpack_elem(const h5zv_enc_plan *t, pk_in *in, uint8_t *e)
{
    int rc = 0;
    if (t->c == H5T_REFERENCE) {
        uint64_t n;
        char    *s;
        if (pk_get_u64(in, &n) < 0 || n > in->n || n > 65536)
            return -1;
        if (n == 0)
            return 0; /* null reference: all zeros, as HDF5 reads one */
        if (!(s = malloc((size_t)n + 1)))
            return -1;
        pk_get(in, s, (size_t)n);
        s[n] = 0;
        rc   = strlen(s) == n ? unpack_ref(s, e) : -1;
        free(s);
        return rc;
    }
    if (t->vstr) {
        uint64_t n;
        char    *s;
        if (pk_get_u64(in, &n) < 0)
            return -1;
        if (n == UINT64_MAX)
            return 0; /* NULL */
        if (n > in->n || !(s = malloc((size_t)n + 1)))
            return -1;
        pk_get(in, s, (size_t)n);
        s[n]        = 0;
        *(char **)e = s;
        return 0;
    }
    if (t->c == H5T_VLEN || t->c == H5T_ARRAY) {
        size_t   es = t->sup->size;
        uint64_t n  = 1;
        uint8_t *p  = e;
        if (t->c == H5T_VLEN) {
            hvl_t *v = (hvl_t *)e;
            /* every element takes at least one byte of input: bounds the allocation */
            if (pk_get_u64(in, &n) < 0 || n > in->n || !es)
                return -1;
            if (n && !(p = calloc((size_t)n, es)))
                return -1;
            v->len = (size_t)n;
            v->p   = n ? p : NULL;
        }
        else
            n = t->count;
        for (uint64_t i = 0; i < n && rc == 0; i++)
            rc = unpack_elem(t->sup, in, p + i * es);
        return rc;
    }
    if (t->c == H5T_COMPOUND) {
        for (unsigned i = 0; i < t->nm && rc == 0; i++)
            rc = unpack_elem(t->mem[i], in, e + t->off[i]);
        return rc;
    }
    return pk_get(in, e, t->size);
}

/* Copies one packed element of plan `t` from `in` to `b`, with the paths of references at or below
 * `from` (a node path, `fl` bytes) moved below `to`; counts those in *moved. */
static int
moved_elem(const h5zv_enc_plan *t, pk_in *in, pk_buf *b, const char *from, size_t fl, const char *to,
           size_t *moved)
{
    int      rc = 0;
    uint64_t n  = 1;
    if (t->c == H5T_REFERENCE || t->vstr) {
        const char *s, *rel;
        if (pk_get_u64(in, &n) < 0 || pk_u64(b, n) < 0)
            return -1;
        if (n == UINT64_MAX || n == 0)
            return 0; /* a NULL string, a null reference */
        if (n > in->n)
            return -1;
        s   = (const char *)in->p;
        rel = s + (n && s[0] == '/');
        if (t->c == H5T_REFERENCE && (size_t)(s + n - rel) >= fl && !strncmp(rel, from, fl) &&
            ((size_t)(s + n - rel) == fl || rel[fl] == '/')) {
            size_t tail = (size_t)(s + n - rel) - fl;
            b->n -= 8; /* the count again, for the new path */
            if (pk_u64(b, 1 + strlen(to) + tail) < 0 || pk_put(b, "/", 1) < 0 ||
                pk_put(b, to, strlen(to)) < 0 || pk_put(b, rel + fl, tail) < 0)
                return -1;
            (*moved)++;
        }
        else if (pk_put(b, s, (size_t)n) < 0)
            return -1;
        in->p += n;
        in->n -= (size_t)n;
        return 0;
    }
    if (t->c == H5T_VLEN || t->c == H5T_ARRAY) {
        if (t->c == H5T_VLEN) {
            if (pk_get_u64(in, &n) < 0 || pk_u64(b, n) < 0 || n > in->n)
                return -1;
        }
        else
            n = t->count;
        for (uint64_t i = 0; i < n && rc == 0; i++)
            rc = moved_elem(t->sup, in, b, from, fl, to, moved);
        return rc;
    }
    if (t->c == H5T_COMPOUND) {
        for (unsigned i = 0; i < t->nm && rc == 0; i++)
            rc = moved_elem(t->mem[i], in, b, from, fl, to, moved);
        return rc;
    }
    n = t->size;
    return n > in->n || pk_put(b, in->p, (size_t)n) < 0 ? -1 : (in->p += n, in->n -= (size_t)n, 0);
}

int
h5zv_enc_move_refs(const h5zv_enc_plan *p, const zarr_vlen *in, const char *from, const char *to,
                   zarr_vlen *out)
{
    pk_in  r     = {in->p, in->p ? in->len : 0};
    pk_buf b     = {0};
    size_t moved = 0;
    out->p       = NULL;
    out->len     = 0;
    if (r.n == 0)
        return 0;
    if (!p || moved_elem(p, &r, &b, from, strlen(from), to, &moved) < 0 || r.n != 0) {
        free(b.p);
        return -1;
    }
    if (!moved) {
        free(b.p);
        return 0;
    }
    out->p   = b.p;
    out->len = b.n;
    return 1;
}

int
h5zv_enc_unpack_plan(const h5zv_enc_plan *p, const zarr_vlen *in, void *elem)
{
    pk_in r = {in->p, in->p ? in->len : 0};
    /* every packed element has at least one byte: an empty one was never written (a missing chunk of a
     * vlen-bytes array) and reads as HDF5's default fill, zeros (a null reference, empty strings) */
    if (r.n == 0)
        return 0;
    if (unpack_elem(p, &r, elem) < 0 || r.n != 0)
        return -1;
    return 0;
}

int
h5zv_enc_unpack(hid_t mf, const zarr_vlen *in, void *elem)
{
    h5zv_enc_plan *p = h5zv_enc_plan_new(mf);
    int            rc;
    if (!p) {
        h5zv_err_push(__func__, __LINE__, "can't read the datatype to unpack an element");
        return -1;
    }
    rc = h5zv_enc_unpack_plan(p, in, elem);
    h5zv_enc_plan_free(p);
    return rc;
}

zarr_dtype *
h5zv_type_to_zarr(hid_t type_id, int zarr_format, bool *record)
{
    zarr_dtype *t;
    *record = false;
    if (!h5zv_type_refs_ok(type_id))
        return NULL;
    t = to_zarr(type_id, zarr_format);
    /* Fixed-size types with no natural zarr form (arrays, compounds of arrays/enums...) are stored as raw
     * bytes of their memory form, and the HDF5 type is recorded: exact for HDF5, opaque for zarr readers. */
    /* Types with pointers inside (compounds or arrays of vlen strings, vlens of vlens...) are stored
     * as vlen bytes holding each element's packed form, with the HDF5 type recorded. */
    if (!t && h5zv_type_is_encoded(type_id)) {
        t = zarr_dtype_new(ZARR_VLEN_BYTES, sizeof(zarr_vlen));
        if (t) {
            *record = true;
            return t;
        }
    }
    /* Large fixed-size elements with no natural zarr form go the same way: a raw zarr type would carry a
     * whole element as its fill value in the metadata (in v3 a JSON list of its bytes). */
    if (!t && !h5zv_type_has_pointers(type_id) && H5Tget_size(type_id) > H5ZV_RAW_MAX) {
        t = zarr_dtype_new(ZARR_VLEN_BYTES, sizeof(zarr_vlen));
        if (t) {
            *record = true;
            return t;
        }
    }
    if (!t && !h5zv_type_has_pointers(type_id) && H5Tget_size(type_id) > 0) {
        t = zarr_dtype_new(ZARR_RAW, H5Tget_size(type_id));
        if (t) {
            *record = true;
            return t;
        }
    }
    if (!t) {
        static const char *names[] = {"integer",  "float",     "time", "string", "bitfield", "opaque",
                                      "compound", "reference", "enum", "vlen",   "array"};
        H5T_class_t        c       = H5Tget_class(type_id);
        if ((c == H5T_ARRAY || c == H5T_COMPOUND || c == H5T_VLEN) && h5zv_type_has_pointers(type_id)) {
            h5zv_err_push(__func__, __LINE__,
                          "HDF5 %s datatype with references inside has no zarr equivalent (references "
                          "are stored only as whole elements)",
                          names[c]);
            return NULL;
        }
        h5zv_err_push(__func__, __LINE__,
                      "HDF5 %s datatype has no zarr equivalent (supported: integers, floats, bool enum, "
                      "strings, compounds of fixed-size members, vlen of bytes, opaque)",
                      c >= 0 && c <= 10 ? names[c] : "unknown");
        return NULL;
    }
    hid_t std = natural_std(t), back = std >= 0 ? std : natural_type(t);
    *record = back < 0 || H5Tequal(back, type_id) <= 0 || has_big_endian(type_id) ||
              (H5Tget_class(type_id) == H5T_STRING && H5Tget_cset(back) != H5Tget_cset(type_id));
    if (back >= 0 && back != std)
        H5Tclose(back);
    return t;
}

bool
h5zv_type_refs_ok(hid_t t)
{
    H5T_class_t c;
    bool        r = true;
    if (h5zv_type_std_info(t, NULL, NULL, NULL, NULL))
        return true; /* a predefined integer or float: no HDF5 call */
    c = H5Tget_class(t);
    if (c == H5T_REFERENCE) {
        if (H5Tequal(t, H5T_STD_REF) > 0)
            return true;
        h5zv_err_push(__func__, __LINE__,
                      "old-style references (H5T_STD_REF_OBJ, H5T_STD_REF_DSETREG) assume the native file "
                      "format; use H5T_STD_REF object references with the zarr connector");
        return false;
    }
    if (c == H5T_ARRAY || c == H5T_VLEN) {
        hid_t b = H5Tget_super(t);
        r       = b >= 0 && h5zv_type_refs_ok(b);
        h5zv_close(b);
    }
    else if (c == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t);
        for (int i = 0; i < n && r; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            r       = m >= 0 && h5zv_type_refs_ok(m);
            h5zv_close(m);
        }
    }
    return r;
}

/* `t` with every reference type inside replaced by the memory H5T_STD_REF (H5Tdecode gives vlens and
 * compounds of references whose reference parts are not the memory type). New id. */
static hid_t
ref_normalize(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    hid_t       r = H5I_INVALID_HID;
    if (H5Tdetect_class(t, H5T_REFERENCE) <= 0)
        return H5Tcopy(t);
    if (c == H5T_REFERENCE)
        return H5Tcopy(H5T_STD_REF);
    if (c == H5T_VLEN || c == H5T_ARRAY) {
        hid_t b = H5Tget_super(t), nb = ref_normalize(b);
        if (c == H5T_VLEN)
            r = H5Tvlen_create(nb);
        else {
            hsize_t dims[32];
            int     nd = H5Tget_array_ndims(t);
            if (nd > 0 && nd <= 32) {
                H5Tget_array_dims2(t, dims);
                r = H5Tarray_create2(nb, (unsigned)nd, dims);
            }
        }
        H5Tclose(nb);
        H5Tclose(b);
        return r;
    }
    if (c == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t);
        r     = H5Tcreate(H5T_COMPOUND, H5Tget_size(t));
        for (int i = 0; i < n && r >= 0; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i), nm = ref_normalize(m);
            char *name = H5Tget_member_name(t, (unsigned)i);
            if (H5Tinsert(r, name, H5Tget_member_offset(t, (unsigned)i), nm) < 0) {
                H5Tclose(r);
                r = H5I_INVALID_HID;
            }
            H5free_memory(name);
            H5Tclose(nm);
            H5Tclose(m);
        }
        return r;
    }
    return H5Tcopy(t);
}

/* ref_normalize of a vlen `t` holding references. A vlen of memory references (each DIMENSION_LIST) is
 * the one ref_normalize builds: one is made and compared (H5Tequal compares the sequence's and the
 * reference's location and file too), ~1,700 instructions instead of ref_normalize's ~5,500. New id. */
static hid_t
vlen_ref_memform(hid_t t)
{
    hid_t v = H5Tvlen_create(H5T_STD_REF);
    if (v >= 0 && H5Tequal(v, t) > 0)
        return v;
    h5zv_close(v);
    return ref_normalize(t);
}

hid_t
h5zv_type_memform_kept(hid_t ftype)
{
    bool  be;
    hid_t p;
    if (h5zv_type_std_info(ftype, NULL, NULL, NULL, &be) && !be)
        return ftype; /* a little-endian predefined type is its own memory form (little-endian hosts) */
    /* a copy of one (a dataset's type as most programs pass it): that predefined id, no copy made */
    if ((p = predefined_like(ftype)) >= 0 && h5zv_type_std_info(p, NULL, NULL, NULL, &be) && !be)
        return p;
    return h5zv_type_memform(ftype);
}

hid_t
h5zv_type_memform(hid_t ftype)
{
    H5T_class_t cls = H5Tget_class(ftype);
    hid_t       t   = H5I_INVALID_HID;

    switch (cls) {
        case H5T_ENUM:
            if (H5Tget_size(ftype) > 1 && H5Tget_order(ftype) == H5T_ORDER_BE) {
                /* members are fixed once defined: rebuild on the little-endian base, values swapped */
                hid_t   b = H5Tget_super(ftype), lb = h5zv_type_memform(b);
                int     n  = H5Tget_nmembers(ftype);
                size_t  sz = H5Tget_size(ftype);
                uint8_t v[16];
                t = H5Tenum_create(lb);
                for (int i = 0; i < n && t >= 0 && sz <= sizeof v; i++) {
                    char *nm = H5Tget_member_name(ftype, (unsigned)i);
                    H5Tget_member_value(ftype, (unsigned)i, v);
                    H5Tconvert(b, lb, 1, v, NULL, H5P_DEFAULT);
                    H5Tenum_insert(t, nm, v);
                    H5free_memory(nm);
                }
                H5Tclose(lb);
                H5Tclose(b);
                return t;
            }
            return H5Tcopy(ftype);
        case H5T_INTEGER:
        case H5T_FLOAT:
        case H5T_BITFIELD:
            t = H5Tcopy(ftype);
            if (H5Tget_size(t) > 1)
                H5Tset_order(t, H5T_ORDER_LE);
            return t;
        case H5T_COMPOUND: {
            int n = H5Tget_nmembers(ftype);
            t     = H5Tcreate(H5T_COMPOUND, H5Tget_size(ftype));
            for (int i = 0; i < n; i++) {
                hid_t mt = H5Tget_member_type(ftype, (unsigned)i), mm = h5zv_type_memform(mt);
                char *nm = H5Tget_member_name(ftype, (unsigned)i);
                H5Tinsert(t, nm, H5Tget_member_offset(ftype, (unsigned)i), mm);
                H5free_memory(nm);
                H5Tclose(mm);
                H5Tclose(mt);
            }
            return t;
        }
        case H5T_ARRAY: {
            hsize_t dims[32];
            int     nd = H5Tget_array_ndims(ftype);
            hid_t   bt = H5Tget_super(ftype), bm = h5zv_type_memform(bt);
            H5Tget_array_dims2(ftype, dims);
            t = H5Tarray_create2(bm, (unsigned)nd, dims);
            H5Tclose(bm);
            H5Tclose(bt);
            return t;
        }
        case H5T_REFERENCE:
            return H5Tcopy(H5T_STD_REF);
        case H5T_VLEN:
            return H5Tdetect_class(ftype, H5T_REFERENCE) > 0 ? vlen_ref_memform(ftype) : H5Tcopy(ftype);
        default:
            return H5Tcopy(ftype);
    }
}

char *
h5zv_type_encode(hid_t type_id)
{
    return h5zv_encode_b64(type_id, H5Tencode);
}

hid_t
h5zv_type_decode(const char *b64)
{
    hid_t t = h5zv_decode_b64(b64, H5Tdecode), n;
    if (t < 0 || H5Tdetect_class(t, H5T_REFERENCE) <= 0)
        return t;
    n = ref_normalize(t);
    H5Tclose(t);
    return n;
}

/* ---- named datatypes: stored as a zarr group whose reserved object holds {"datatype": b64} ------- */
void *
h5zv_datatype_commit(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t type_id, hid_t lcpl_id,
                     hid_t tcpl_id, hid_t tapl_id, hid_t dxpl_id, void **req)
{
    h5zv_obj  *o = obj, *t = NULL;
    h5zv_node *n;
    char      *base = NULL, *path = NULL, *enc = NULL;
    (void)tcpl_id;
    (void)dxpl_id;
    (void)req;
    if (h5zv_check_plist(tapl_id, H5P_DATATYPE_ACCESS, "datatype access property list") < 0 ||
        h5zv_check_plist(tcpl_id, H5P_DATATYPE_CREATE, "datatype creation property list") < 0 ||
        h5zv_check_plist(lcpl_id, H5P_LINK_CREATE, "link creation property list") < 0)
        return NULL;

    if (!name) {
        /* H5Tcommit_anon: made in the hidden area; H5Olink moves it into the hierarchy. */
        if (o->file->intent != H5F_ACC_RDWR) {
            h5zv_err_push(__func__, __LINE__, "can't commit a datatype: file '%s' is read-only",
                          o->file->name);
            return NULL;
        }
        if (!(path = h5zv_anon_path(o->file)) || h5zv_group_make(o->file, path, false) < 0)
            goto done;
    }
    else {
        if (!(base = h5zv_loc_path(o, loc)) || !(path = h5zv_path_resolve(o->file, base, name)))
            goto done;
        if (h5zv_check_new_path(o->file, path, lcpl_id) < 0 || h5zv_group_make(o->file, path, false) < 0)
            goto done;
    }
    {
        struct json_object *tj = NULL;
        if (!(n = h5zv_node_get(o->file, path)) || h5zv_type_to_json(type_id, &tj) < 0)
            goto done;
        json_object_object_add(h5zv_node_meta(n, true), "datatype", tj);
    }
    h5zv_node_mark_dirty(n);
    if ((t = h5zv_obj_new(o->file, H5I_DATATYPE, path)))
        t->dtype_id = h5zv_type_keep(H5Tcopy(type_id));
done:
    free(base);
    free(path);
    free(enc);
    return t;
}

/* The committed type at `path` (new id), or negative if the node is not a named datatype. */
hid_t
h5zv_datatype_of(h5zv_node *n)
{
    struct json_object *m, *v;
    h5zv_jpath          where;
    hid_t               t = H5I_INVALID_HID;
    if (!n || n->type != ZARR_NODE_GROUP || !(m = h5zv_node_meta(n, false)) ||
        !json_object_object_get_ex(m, "datatype", &v))
        return H5I_INVALID_HID;
    if (h5zv_reserved_type(v, h5zv_meta_where(&where, n, "datatype"), &t) < 0)
        return H5I_INVALID_HID;
    return t;
}

/* ---- committed datatypes and their users ----------------------------------------------------------
 * A dataset or attribute made with a committed type records the type's path ("ctype" in its _h5zarr
 * record) and the type counts its users ("users"), so H5Oget_info reports the reference count HDF5 would
 * and H5Dget_type/H5Aget_type hand out the committed type (h5dump prints its name). */
h5zv_obj *
h5zv_type_committed_obj(hid_t type_id)
{
    char      name[16] = "";
    ssize_t   k;
    h5zv_obj *o = NULL;
    if (H5Tcommitted(type_id) <= 0)
        return NULL;
    H5E_BEGIN_TRY
    {
        if ((k = H5VLget_connector_name(type_id, name, sizeof name)) > 0 && strcmp(name, H5ZV_NAME) == 0)
            o = h5zv_object_of(type_id);
    }
    H5E_END_TRY
    return o && o->type == H5I_DATATYPE ? o : NULL;
}

int
h5zv_type_users_add(h5zv_file *f, const char *tpath, int delta)
{
    zarr_node_type      t;
    h5zv_node          *n;
    struct json_object *m, *v;
    int64_t             users = 0;
    if (h5zv_node_probe(f, tpath, &t) < 0 || t != ZARR_NODE_GROUP || !(n = h5zv_node_get(f, tpath)) ||
        !(m = h5zv_node_meta(n, false)) || !json_object_object_get_ex(m, "datatype", NULL))
        return 0; /* the type is gone or moved: nothing to count */
    if (json_object_object_get_ex(m, "users", &v))
        users = json_object_get_int64(v);
    users += delta;
    if (users > 0)
        json_object_object_add(m, "users", json_object_new_int64(users));
    else
        json_object_object_del(m, "users");
    h5zv_node_mark_dirty(n);
    return 0;
}

typedef struct h5zv_ctype_use {
    char                  *user, *attr, *tpath;
    struct h5zv_ctype_use *next;
} h5zv_ctype_use;

int
h5zv_type_use(h5zv_file *f, const char *user, const char *attr, const char *tpath)
{
    h5zv_ctype_use *u;
    h5zv_type_users_add(f, tpath, 1);
    if (!h5zv_is_anon(tpath))
        return 0;
    if (!(u = calloc(1, sizeof *u)) || !(u->user = strdup(user)) || (attr && !(u->attr = strdup(attr))) ||
        !(u->tpath = strdup(tpath))) {
        if (u) {
            free(u->user);
            free(u->attr);
        }
        free(u);
        return -1;
    }
    u->next      = f->anon_uses;
    f->anon_uses = u;
    return 0;
}

static void
use_free(h5zv_ctype_use *u)
{
    free(u->user);
    free(u->attr);
    free(u->tpath);
    free(u);
}

/* The record of use `u` that holds its "ctype" (the dataset's _h5zarr, or the attribute's record when it
 * is an object; compact attribute records never name a committed type), with its node; NULL if gone. */
static struct json_object *
use_record(h5zv_file *f, const h5zv_ctype_use *u, h5zv_node **node)
{
    struct json_object *rec = NULL, *m, *recs;
    h5zv_node          *n;
    H5E_BEGIN_TRY { n = h5zv_node_get(f, u->user); }
    H5E_END_TRY
    if (n && (m = h5zv_node_meta(n, false))) {
        if (!u->attr)
            rec = m;
        else if (json_object_object_get_ex(m, "attrs", &recs))
            json_object_object_get_ex(recs, u->attr, &rec);
    }
    *node = n;
    return rec && json_object_is_type(rec, json_type_object) ? rec : NULL;
}

void
h5zv_type_anon_linked(h5zv_file *f, const char *apath, const char *path)
{
    h5zv_ctype_use **pp = &f->anon_uses;
    while (*pp) {
        h5zv_ctype_use     *u = *pp;
        h5zv_node          *n;
        struct json_object *rec;
        if (strcmp(u->tpath, apath) != 0) {
            pp = &u->next;
            continue;
        }
        *pp = u->next;
        if ((rec = use_record(f, u, &n)) && json_object_object_get_ex(rec, "ctype", NULL)) {
            json_object_object_add(rec, "ctype", json_object_new_string(path));
            h5zv_node_mark_dirty(n);
        }
        use_free(u);
    }
}

void
h5zv_type_uses_end(h5zv_file *f)
{
    while (f && f->anon_uses) {
        h5zv_ctype_use     *u = f->anon_uses;
        h5zv_node          *n;
        struct json_object *rec, *v;
        f->anon_uses = u->next;
        /* The type was never linked: it goes with the anonymous area, so its users forget it (the next
         * session's anonymous objects may reuse the path). */
        if (f->intent == H5F_ACC_RDWR && (rec = use_record(f, u, &n)) &&
            json_object_object_get_ex(rec, "ctype", &v) && !strcmp(json_object_get_string(v), u->tpath)) {
            json_object_object_del(rec, "ctype");
            h5zv_node_mark_dirty(n);
        }
        use_free(u);
    }
}

hid_t
h5zv_type_committed_id(h5zv_file *f, const char *tpath)
{
    zarr_node_type t;
    h5zv_node     *n;
    h5zv_obj      *o;
    hid_t          tid, id;
    if (h5zv_node_probe(f, tpath, &t) < 0 || t != ZARR_NODE_GROUP || !(n = h5zv_node_get(f, tpath)) ||
        (tid = h5zv_datatype_of(n)) < 0)
        return H5I_INVALID_HID;
    if (!(o = h5zv_obj_new(f, H5I_DATATYPE, tpath))) {
        H5Tclose(tid);
        return H5I_INVALID_HID;
    }
    o->dtype_id = h5zv_type_keep(tid);
    H5E_BEGIN_TRY { id = H5VLwrap_register(o, H5I_DATATYPE); }
    H5E_END_TRY
    if (id < 0)
        h5zv_obj_free(o);
    return id;
}

void *
h5zv_datatype_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t tapl_id, hid_t dxpl_id,
                   void **req)
{
    h5zv_obj  *o = obj, *t = NULL;
    h5zv_node *n;
    char      *base = NULL, *path = NULL;
    hid_t      tid;
    (void)dxpl_id;
    (void)req;
    if (h5zv_check_plist(tapl_id, H5P_DATATYPE_ACCESS, "datatype access property list") < 0)
        return NULL;

    if (!(base = h5zv_loc_path(o, loc)) || !(path = h5zv_path_resolve(o->file, base, name)))
        goto done;
    if (!(n = h5zv_node_get(o->file, path)))
        goto done;
    if ((tid = h5zv_datatype_of(n)) < 0) {
        h5zv_err_push(__func__, __LINE__, "'/%s' is not a committed datatype", path);
        goto done;
    }
    if ((t = h5zv_obj_new(o->file, H5I_DATATYPE, path)))
        t->dtype_id = h5zv_type_keep(tid);
done:
    free(base);
    free(path);
    return t;
}

herr_t
h5zv_datatype_get(void *obj, H5VL_datatype_get_args_t *args, hid_t dxpl_id, void **req)
{
    h5zv_obj *o = obj;
    (void)dxpl_id;
    (void)req;
    switch (args->op_type) {
        case H5VL_DATATYPE_GET_BINARY_SIZE:
            return H5Tencode(o->dtype_id, NULL, args->args.get_binary_size.size);
        case H5VL_DATATYPE_GET_BINARY: {
            size_t n = args->args.get_binary.buf_size;
            return H5Tencode(o->dtype_id, args->args.get_binary.buf, &n);
        }
        case H5VL_DATATYPE_GET_TCPL:
            args->args.get_tcpl.tcpl_id = H5Pcreate(H5P_DATATYPE_CREATE);
            return 0;
    }
    return -1;
}

herr_t
h5zv_datatype_specific(void *obj, H5VL_datatype_specific_args_t *args, hid_t dxpl_id, void **req)
{
    h5zv_obj *o = obj;
    (void)dxpl_id;
    (void)req;
    if (args->op_type == H5VL_DATATYPE_FLUSH)
        return h5zv_file_flush(o->file);
    return 0;
}

herr_t
h5zv_datatype_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req)
{
    (void)obj;
    (void)dxpl_id;
    (void)req;
    h5zv_err_push(__func__, __LINE__, "native-only datatype operation %d is not supported", args->op_type);
    return -1;
}

herr_t
h5zv_datatype_close(void *dt, hid_t dxpl_id, void **req)
{
    (void)dxpl_id;
    (void)req;
    h5zv_obj_free(dt);
    return 0;
}
