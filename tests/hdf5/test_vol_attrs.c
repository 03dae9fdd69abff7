/*
 * test_vol_attrs.c: how the zarr connector records attributes. A scalar attribute with nothing but its
 * type to record is written in the compact record form (docs/FORMAT.md: the type string itself); reads,
 * info, rename, rewrite and delete work on it; an attribute with more to record (a dataspace, creation
 * properties) keeps the full form; and a record whose type is in the earlier binary form (H5Tencode, as
 * versions before the JSON form wrote it) is refused by default, read with legacy_reserved=1, and
 * converted by a read-write open with it. The predefined integer and float types round-trip by their
 * short names (the connector's fast paths for them ask HDF5 nothing). A fixed-size string with NUL bytes
 * inside keeps them. H5Aiterate2 gives each attribute its creation-order position in every index and
 * order.
 */
#include "runner.h"

#include <hdf5.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "h5test.h"

/* _h5zarr.attrs of the root group of v2 store `store` (new reference; NULL if absent): the reserved
 * object is a top-level key of the .zgroup (`in_attrs`: the attribute of that name in .zattrs, where
 * stores written before kept it). */
static struct json_object *
root_records_in(const char *store, bool in_attrs)
{
    char                path[600];
    struct json_object *doc, *m, *a, *ret = NULL;
    snprintf(path, sizeof path, "%s/%s", store, in_attrs ? ".zattrs" : ".zgroup");
    if (!(doc = json_object_from_file(path)))
        return NULL;
    if (json_object_object_get_ex(doc, "_h5zarr", &m) && json_object_object_get_ex(m, "attrs", &a))
        ret = json_object_get(a);
    json_object_put(doc);
    return ret;
}

static struct json_object *
root_records(const char *store)
{
    return root_records_in(store, false);
}

static int
test_compact_records(void)
{
    const char         *tmp = test_tmpdir("attrs_compact");
    char                store[512];
    hid_t               fapl  = h5t_zarr_fapl(2), f, sc, sp, a, acpl;
    hsize_t             three = 3;
    int                 v = -7, r = 0, w[3] = {1, 2, 3}, rw[3] = {0, 0, 0};
    struct json_object *recs, *rec;
    H5A_info_t          info;

    snprintf(store, sizeof store, "%s/a.zarr", tmp);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(store));
    ASSERT((sc = H5Screate(H5S_SCALAR)) >= 0 && (sp = H5Screate_simple(1, &three, NULL)) >= 0);
    ASSERT((a = H5Acreate2(f, "scalar", H5T_STD_I16BE, sc, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, H5T_NATIVE_INT, &v) >= 0 && H5Aclose(a) >= 0);
    ASSERT((a = H5Acreate2(f, "vector", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, H5T_NATIVE_INT, w) >= 0 && H5Aclose(a) >= 0);
    ASSERT((acpl = H5Pcreate(H5P_ATTRIBUTE_CREATE)) >= 0 && H5Pset_char_encoding(acpl, H5T_CSET_UTF8) >= 0);
    ASSERT((a = H5Acreate2(f, "with_acpl", H5T_STD_U8LE, sc, acpl, H5P_DEFAULT)) >= 0);
    ASSERT(H5Aclose(a) >= 0 && H5Pclose(acpl) >= 0);
    ASSERT(H5Fclose(f) >= 0);

    /* a zarr store came out, with one compact and two full records */
    ASSERT((recs = root_records(store)) != NULL);
    ASSERT(json_object_object_get_ex(recs, "scalar", &rec) && json_object_is_type(rec, json_type_string));
    ASSERT(json_object_object_get_ex(recs, "vector", &rec) && json_object_is_type(rec, json_type_object));
    ASSERT(json_object_object_get_ex(recs, "with_acpl", &rec) && json_object_is_type(rec, json_type_object));
    json_object_put(recs);

    ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT((a = H5Aopen(f, "scalar", H5P_DEFAULT)) >= 0);
    {
        hid_t t = H5Aget_type(a), s = H5Aget_space(a);
        ASSERT(H5Tequal(t, H5T_STD_I16BE) > 0);
        ASSERT_EQ_INT(H5Sget_simple_extent_type(s), H5S_SCALAR);
        H5Tclose(t);
        H5Sclose(s);
    }
    ASSERT(H5Aread(a, H5T_NATIVE_INT, &r) >= 0);
    ASSERT_EQ_INT(r, -7);
    ASSERT(H5Aget_info(a, &info) >= 0);
    ASSERT_EQ_INT((int)info.data_size, 2);
    ASSERT(H5Aclose(a) >= 0);
    ASSERT(H5Aread(a = H5Aopen(f, "vector", H5P_DEFAULT), H5T_NATIVE_INT, rw) >= 0 && H5Aclose(a) >= 0);
    ASSERT(rw[0] == 1 && rw[2] == 3);
    /* rename and rewrite a compact one: still compact, still right */
    ASSERT(H5Arename(f, "scalar", "renamed") >= 0);
    ASSERT((a = H5Aopen(f, "renamed", H5P_DEFAULT)) >= 0);
    v = 300;
    ASSERT(H5Awrite(a, H5T_NATIVE_INT, &v) >= 0 && H5Aclose(a) >= 0);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((recs = root_records(store)) != NULL);
    ASSERT(!json_object_object_get_ex(recs, "scalar", NULL));
    ASSERT(json_object_object_get_ex(recs, "renamed", &rec) && json_object_is_type(rec, json_type_string));
    json_object_put(recs);
    ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0);
    ASSERT(H5Aread(a = H5Aopen(f, "renamed", H5P_DEFAULT), H5T_NATIVE_INT, &r) >= 0 && H5Aclose(a) >= 0);
    ASSERT_EQ_INT(r, 300);
    ASSERT(H5Adelete(f, "renamed") >= 0);
    ASSERT_EQ_INT(H5Aexists(f, "renamed"), 0);
    ASSERT(H5Sclose(sc) >= 0 && H5Sclose(sp) >= 0 && H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* The predefined integer and IEEE float types (the connector answers their class, size, sign and order
 * without asking HDF5): each as a scalar attribute written through a native memory type (a conversion)
 * and one written in its own type, recorded by its short name with the natural value beside it, read
 * back equal with the same type, size, info and creation order; a value out of range is clamped on the
 * way in as HDF5 clamps it. */
static int
test_predefined_types(void)
{
    const char *tmp = test_tmpdir("attrs_predefined");
    char        store[512], name[32];
    hid_t       fapl = h5t_zarr_fapl(2), f, sc, a;
    struct {
        hid_t       t;
        const char *sname;
        size_t      size;
        bool        is_float, is_signed;
    } ty[] = {
        {H5T_STD_I8LE, "i1<", 1, false, true},  {H5T_STD_U8LE, "u1<", 1, false, false},
        {H5T_STD_I16LE, "i2<", 2, false, true}, {H5T_STD_U16LE, "u2<", 2, false, false},
        {H5T_STD_I32LE, "i4<", 4, false, true}, {H5T_STD_U32LE, "u4<", 4, false, false},
        {H5T_STD_I64LE, "i8<", 8, false, true}, {H5T_STD_U64LE, "u8<", 8, false, false},
        {H5T_STD_I8BE, "i1>", 1, false, true},  {H5T_STD_U8BE, "u1>", 1, false, false},
        {H5T_STD_I16BE, "i2>", 2, false, true}, {H5T_STD_U16BE, "u2>", 2, false, false},
        {H5T_STD_I32BE, "i4>", 4, false, true}, {H5T_STD_U32BE, "u4>", 4, false, false},
        {H5T_STD_I64BE, "i8>", 8, false, true}, {H5T_STD_U64BE, "u8>", 8, false, false},
        {H5T_IEEE_F32LE, "f4<", 4, true, true}, {H5T_IEEE_F64LE, "f8<", 8, true, true},
        {H5T_IEEE_F32BE, "f4>", 4, true, true}, {H5T_IEEE_F64BE, "f8>", 8, true, true},
    };
    const int           nt = (int)(sizeof ty / sizeof ty[0]);
    struct json_object *recs, *rec, *doc, *val;
    char                path[600];
    long long           sv;
    unsigned long long  uv;
    double              dv;

    snprintf(store, sizeof store, "%s/p.zarr", tmp);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT(h5t_is_zarr_store(store));
    ASSERT((sc = H5Screate(H5S_SCALAR)) >= 0);
    for (int i = 0; i < nt; i++) {
        /* through a native memory type */
        snprintf(name, sizeof name, "conv%02d", i);
        ASSERT((a = H5Acreate2(f, name, ty[i].t, sc, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        if (ty[i].is_float)
            ASSERT(H5Awrite(a, H5T_NATIVE_DOUBLE, (dv = 1.5 + i, &dv)) >= 0);
        else if (ty[i].is_signed)
            ASSERT(H5Awrite(a, H5T_NATIVE_LLONG, (sv = -5 - i, &sv)) >= 0);
        else
            ASSERT(H5Awrite(a, H5T_NATIVE_ULLONG, (uv = 200 + (unsigned)i, &uv)) >= 0);
        ASSERT(H5Aclose(a) >= 0);
        /* in its own type: the largest value for an integer (unsigned 64: above INT64_MAX) */
        snprintf(name, sizeof name, "own%02d", i);
        ASSERT((a = H5Acreate2(f, name, ty[i].t, sc, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        {
            unsigned char b[8];
            memset(b, 0xff, sizeof b);
            if (ty[i].is_float) /* 0.25 in the type's own byte order */
                ASSERT(H5Tconvert(H5T_NATIVE_DOUBLE, ty[i].t, 1, (dv = 0.25, memcpy(b, &dv, 8), b), NULL,
                                  H5P_DEFAULT) >= 0);
            else if (ty[i].is_signed) /* 0x7f ff ..: the maximum, in either byte order */
                b[H5Tget_order(ty[i].t) == H5T_ORDER_BE ? 0 : ty[i].size - 1] = 0x7f;
            ASSERT(H5Awrite(a, ty[i].t, b) >= 0);
        }
        ASSERT(H5Aclose(a) >= 0);
    }
    /* out of range through a conversion: clamped, as HDF5 clamps */
    ASSERT((a = H5Acreate2(f, "clamped", H5T_STD_U8LE, sc, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    ASSERT(H5Awrite(a, H5T_NATIVE_LLONG, (sv = 300, &sv)) >= 0 && H5Aclose(a) >= 0);
    ASSERT(H5Fclose(f) >= 0);

    /* recorded by short name, natural values beside */
    ASSERT((recs = root_records(store)) != NULL);
    snprintf(path, sizeof path, "%s/.zattrs", store);
    ASSERT((doc = json_object_from_file(path)) != NULL);
    for (int i = 0; i < nt; i++) {
        for (int own = 0; own < 2; own++) {
            snprintf(name, sizeof name, own ? "own%02d" : "conv%02d", i);
            ASSERT(json_object_object_get_ex(recs, name, &rec) && json_object_is_type(rec, json_type_string));
            ASSERT(strcmp(json_object_get_string(rec), ty[i].sname) == 0);
            ASSERT(json_object_object_get_ex(doc, name, &val));
            if (ty[i].is_float)
                ASSERT(json_object_get_double(val) == (own ? 0.25 : 1.5 + i));
            else if (!own)
                ASSERT(ty[i].is_signed ? json_object_get_int64(val) == -5 - i
                                       : json_object_get_uint64(val) == 200 + (unsigned)i);
            else if (ty[i].is_signed)
                ASSERT(json_object_get_int64(val) == (int64_t)((1ULL << (8 * ty[i].size - 1)) - 1));
            else
                ASSERT(json_object_get_uint64(val) ==
                       (ty[i].size == 8 ? UINT64_MAX : (1ULL << (8 * ty[i].size)) - 1));
        }
    }
    ASSERT(json_object_object_get_ex(doc, "clamped", &val) && json_object_get_int64(val) == 255);
    json_object_put(doc);
    json_object_put(recs);

    /* read back: the same type, size, info, creation order and value */
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    for (int i = 0; i < nt; i++) {
        H5A_info_t info;
        hid_t      t;
        snprintf(name, sizeof name, "conv%02d", i);
        ASSERT((a = H5Aopen(f, name, H5P_DEFAULT)) >= 0);
        ASSERT((t = H5Aget_type(a)) >= 0 && H5Tequal(t, ty[i].t) > 0 && H5Tget_size(t) == ty[i].size);
        ASSERT(H5Tclose(t) >= 0);
        ASSERT(H5Aget_info(a, &info) >= 0);
        ASSERT_EQ_INT((int)info.data_size, (int)ty[i].size);
        ASSERT_EQ_INT((int)info.cset, (int)H5T_CSET_ASCII);
        ASSERT(info.corder_valid && info.corder == (H5O_msg_crt_idx_t)(2 * i));
        if (ty[i].is_float) {
            ASSERT(H5Aread(a, H5T_NATIVE_DOUBLE, &dv) >= 0);
            ASSERT(dv == 1.5 + i);
        }
        else if (ty[i].is_signed) {
            ASSERT(H5Aread(a, H5T_NATIVE_LLONG, &sv) >= 0);
            ASSERT(sv == -5 - i);
        }
        else {
            ASSERT(H5Aread(a, H5T_NATIVE_ULLONG, &uv) >= 0);
            ASSERT(uv == 200 + (unsigned)i);
        }
        ASSERT(H5Aclose(a) >= 0);
        /* in its own type: the bytes written */
        snprintf(name, sizeof name, "own%02d", i);
        ASSERT((a = H5Aopen(f, name, H5P_DEFAULT)) >= 0);
        {
            unsigned char b[8] = {0}, want[8];
            memset(want, 0xff, sizeof want);
            if (ty[i].is_float)
                ASSERT(H5Tconvert(H5T_NATIVE_DOUBLE, ty[i].t, 1, (dv = 0.25, memcpy(want, &dv, 8), want),
                                  NULL, H5P_DEFAULT) >= 0);
            else if (ty[i].is_signed)
                want[H5Tget_order(ty[i].t) == H5T_ORDER_BE ? 0 : ty[i].size - 1] = 0x7f;
            ASSERT(H5Aread(a, ty[i].t, b) >= 0);
            ASSERT(memcmp(b, want, ty[i].size) == 0);
        }
        ASSERT(H5Aclose(a) >= 0);
    }
    ASSERT((a = H5Aopen(f, "clamped", H5P_DEFAULT)) >= 0);
    ASSERT(H5Aread(a, H5T_NATIVE_LLONG, &sv) >= 0 && H5Aclose(a) >= 0);
    ASSERT(sv == 255);
    ASSERT(H5Sclose(sc) >= 0 && H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* A v2 store whose record is in the full form with its type in the earlier binary form (base64 of
 * H5Tencode of H5T_STD_I32LE), as versions before the JSON form wrote it. */
static int
make_old_store(const char *store)
{
    char  path[600];
    FILE *fp;
    ASSERT(mkdir(store, 0777) == 0);
    snprintf(path, sizeof path, "%s/.zgroup", store);
    ASSERT((fp = fopen(path, "w")) != NULL);
    fputs("{\"zarr_format\": 2}\n", fp);
    fclose(fp);
    snprintf(path, sizeof path, "%s/.zattrs", store);
    ASSERT((fp = fopen(path, "w")) != NULL);
    fputs("{\"_h5zarr\": {\"attrs\": {\"x\": {\"type\": \"AwAQCAAABAAAAAAAIAA=\", \"shape\": []}}}, \"x\": "
          "-12}\n",
          fp);
    fclose(fp);
    return 0;
}

/* Attribute x of `store` reads as int32 -12 through `fapl`. */
static int
read_x(const char *store, hid_t fapl)
{
    hid_t f, a, t;
    int   r = 0;
    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((a = H5Aopen(f, "x", H5P_DEFAULT)) >= 0);
    ASSERT((t = H5Aget_type(a)) >= 0 && H5Tequal(t, H5T_STD_I32LE) > 0);
    ASSERT(H5Aread(a, H5T_NATIVE_INT, &r) >= 0);
    ASSERT_EQ_INT(r, -12);
    ASSERT(H5Tclose(t) >= 0 && H5Aclose(a) >= 0 && H5Fclose(f) >= 0);
    return 0;
}

/* The record in the earlier form is refused by default (nothing of the store is read by HDF5's decoders),
 * with a message naming the document and field and saying how to convert; the store is not changed. */
static int
test_full_records_refused(void)
{
    const char *tmp = test_tmpdir("attrs_full_refused");
    char        store[512], path[600], msg[4096] = "", before[512], after[512];
    hid_t       fapl = h5t_zarr_fapl(2), f, a = H5I_INVALID_HID;
    FILE       *fp;
    size_t      nb, na;

    snprintf(store, sizeof store, "%s/old.zarr", tmp);
    ASSERT(make_old_store(store) == 0);
    snprintf(path, sizeof path, "%s/.zattrs", store);
    ASSERT((fp = fopen(path, "rb")) && (nb = fread(before, 1, sizeof before, fp)) > 0 && !fclose(fp));
    ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, fapl)) >= 0);
    H5E_BEGIN_TRY { a = H5Aopen(f, "x", H5P_DEFAULT); }
    H5E_END_TRY
    ASSERT(a < 0);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, msg);
    if (!strstr(msg,
                "'/.zattrs' _h5zarr.attrs.x.type: in the earlier binary form of _h5zarr (base64 of HDF5's "
                "H5Tencode output), which is not read by default") ||
        !strstr(msg, "HDF5_VOL_CONNECTOR=\"zarr legacy_reserved=1\""))
        FAILF("unexpected message: %s", msg);
    ASSERT(H5Fclose(f) >= 0);
    ASSERT((fp = fopen(path, "rb")) && (na = fread(after, 1, sizeof after, fp)) > 0 && !fclose(fp));
    ASSERT(na == nb && !memcmp(before, after, na));
    H5Pclose(fapl);
    return 0;
}

/* With the opt-in legacy_reserved=1 (a trusted store) it reads as before; opened read-write with it, the
 * record is rewritten in the JSON form, which reads without the opt-in. */
static int
test_full_records_opt_in_and_converted(void)
{
    const char         *tmp = test_tmpdir("attrs_full_opt_in");
    char                store[512];
    hid_t               fapl = h5t_zarr_fapl(2), lfapl = H5Pcreate(H5P_FILE_ACCESS), f;
    struct json_object *recs, *rec, *t;

    ASSERT(lfapl >= 0 && H5Pset_fapl_zarr_opts(lfapl, 2, "legacy_reserved=1") >= 0);
    snprintf(store, sizeof store, "%s/old.zarr", tmp);
    ASSERT(make_old_store(store) == 0);
    ASSERT(read_x(store, lfapl) == 0);
    /* read-only with the opt-in: nothing written (the records stay in the .zattrs of the time) */
    ASSERT((recs = root_records_in(store, true)) && json_object_object_get_ex(recs, "x", &rec) &&
           json_object_object_get_ex(rec, "type", &t));
    ASSERT_STR(json_object_get_string(t), "AwAQCAAABAAAAAAAIAA=");
    json_object_put(recs);
    ASSERT(!root_records(store));
    /* read-write with it: converted, and moved out of the attributes into the .zgroup */
    ASSERT((f = H5Fopen(store, H5F_ACC_RDWR, lfapl)) >= 0 && H5Fclose(f) >= 0);
    ASSERT(!root_records_in(store, true));
    ASSERT((recs = root_records(store)) && json_object_object_get_ex(recs, "x", &rec) &&
           json_object_object_get_ex(rec, "type", &t));
    ASSERT_STR(json_object_get_string(t), "i4<");
    json_object_put(recs);
    ASSERT(read_x(store, fapl) == 0);
    H5Pclose(lfapl);
    H5Pclose(fapl);
    return 0;
}

/* A fixed-size string attribute with NUL bytes inside (netCDF's NC_CHAR attributes hold any bytes): every
 * byte up to the padding reads back, in v2 and v3, and zarr readers see the whole text ("x\u0000y"). */
static int
test_string_with_nuls(void)
{
    const char *tmp = test_tmpdir("attrs_nuls");
    for (int v = 2; v <= 3; v++) {
        char                store[512], path[600], got[6] = "zzzzz";
        const char          val[6] = {'x', 0, 'y', 0, 0, 0};
        hid_t               fapl = h5t_zarr_fapl(v), f, sc = H5Screate(H5S_SCALAR), t = H5Tcopy(H5T_C_S1), a;
        struct json_object *doc, *attrs, *x;
        snprintf(store, sizeof store, "%s/nuls%d.zarr", tmp, v);
        H5Tset_size(t, 5);
        H5Tset_strpad(t, H5T_STR_NULLPAD);
        ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
        ASSERT((a = H5Acreate2(f, "t", t, sc, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Awrite(a, t, val) >= 0);
        H5Aclose(a);
        ASSERT(H5Fclose(f) >= 0);
        ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
        ASSERT((a = H5Aopen(f, "t", H5P_DEFAULT)) >= 0);
        ASSERT(H5Aread(a, t, got) >= 0);
        ASSERT(memcmp(got, val, 5) == 0);
        H5Aclose(a), H5Fclose(f), H5Tclose(t), H5Sclose(sc), H5Pclose(fapl);
        snprintf(path, sizeof path, "%s/%s", store, v == 3 ? "zarr.json" : ".zattrs");
        ASSERT((doc = json_object_from_file(path)) != NULL);
        attrs = doc;
        if (v == 3)
            ASSERT(json_object_object_get_ex(doc, "attributes", &attrs));
        ASSERT(json_object_object_get_ex(attrs, "t", &x) && json_object_is_type(x, json_type_string));
        ASSERT_EQ_INT(json_object_get_string_len(x), 3);
        ASSERT(memcmp(json_object_get_string(x), "x\0y", 3) == 0);
        json_object_put(doc);
    }
    return 0;
}

/* What H5Aiterate2's callback sees (iterate_cb): names, creation-order positions, values, and the
 * dataset location's type and the attributes' spaces asked from inside. */
typedef struct {
    char names[8][8];
    long corder[8];
    int  value[8], dtype_ok, space_ok, n;
} iter_seen;

static herr_t
iterate_cb(hid_t loc, const char *name, const H5A_info_t *info, void *ud)
{
    iter_seen *s = ud;
    hid_t      a, t, sp;
    if (s->n >= 8 || !info->corder_valid)
        return -1;
    snprintf(s->names[s->n], sizeof s->names[s->n], "%s", name);
    s->corder[s->n] = (long)info->corder;
    if ((a = H5Aopen(loc, name, H5P_DEFAULT)) < 0 || H5Aread(a, H5T_NATIVE_INT, &s->value[s->n]) < 0)
        return -1;
    /* a scalar attribute opened from its compact record: its space is made when asked */
    sp = H5Aget_space(a);
    s->space_ok +=
        sp >= 0 && H5Sget_simple_extent_type(sp) == H5S_SCALAR && H5Sget_simple_extent_npoints(sp) == 1;
    H5Sclose(sp);
    H5Aclose(a);
    /* the location is the dataset (opened lazily by the iteration): it answers as one */
    t = H5Dget_type(loc);
    s->dtype_ok += t >= 0 && H5Tequal(t, H5T_STD_I16LE) > 0;
    H5Tclose(t);
    s->n++;
    return 0;
}

/* H5Aiterate2 on a dataset of a read-only open: by name (byte order) and by creation order, increasing
 * and decreasing, every attribute once with its creation-order position (taken from the iterated list,
 * not a walk per attribute) equal to what H5Aget_info_by_name says and to the order of creation; the
 * callback's location answers as the dataset and the attributes read right. */
static int
test_iterate_positions(void)
{
    const char *tmp       = test_tmpdir("attrs_iterate");
    const char *made[]    = {"zeta", "alpha", "mid", "beta", "omega"}; /* creation order */
    const char *by_name[] = {"alpha", "beta", "mid", "omega", "zeta"};
    char        store[512];
    hid_t       fapl = h5t_zarr_fapl(2), f, d, sc, sp, a;
    hsize_t     four = 4;

    snprintf(store, sizeof store, "%s/i.zarr", tmp);
    ASSERT((f = H5Fcreate(store, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) >= 0);
    ASSERT((sc = H5Screate(H5S_SCALAR)) >= 0 && (sp = H5Screate_simple(1, &four, NULL)) >= 0);
    ASSERT((d = H5Dcreate2(f, "d", H5T_STD_I16LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
    for (int i = 0; i < 5; i++) {
        int v = 100 + i;
        ASSERT((a = H5Acreate2(d, made[i], H5T_STD_I32LE, sc, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Awrite(a, H5T_NATIVE_INT, &v) >= 0 && H5Aclose(a) >= 0);
    }
    ASSERT(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);

    ASSERT((f = H5Fopen(store, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0);
    for (int pass = 0; pass < 3; pass++) {
        H5_index_t      idx = pass == 0 ? H5_INDEX_NAME : H5_INDEX_CRT_ORDER;
        H5_iter_order_t ord = pass == 2 ? H5_ITER_DEC : H5_ITER_INC;
        iter_seen       s;
        memset(&s, 0, sizeof s);
        ASSERT(H5Aiterate2(d, idx, ord, NULL, iterate_cb, &s) >= 0);
        ASSERT_EQ_INT(s.n, 5);
        ASSERT_EQ_INT(s.dtype_ok, 5);
        ASSERT_EQ_INT(s.space_ok, 5);
        for (int k = 0; k < 5; k++) {
            int         i    = pass == 2 ? 4 - k : k;
            const char *want = pass == 0 ? by_name[k] : made[i];
            int         at   = 0;
            H5A_info_t  info;
            while (at < 5 && strcmp(made[at], want) != 0)
                at++;
            ASSERT_STR(s.names[k], want);
            ASSERT_EQ_INT((int)s.corder[k], at);
            ASSERT_EQ_INT(s.value[k], 100 + at);
            ASSERT(H5Aget_info_by_name(f, "d", want, &info, H5P_DEFAULT) >= 0);
            ASSERT_EQ_INT((int)info.corder, at);
        }
    }
    ASSERT(H5Dclose(d) >= 0 && H5Fclose(f) >= 0);
    ASSERT(H5Sclose(sc) >= 0 && H5Sclose(sp) >= 0);
    H5Pclose(fapl);
    return 0;
}

int
main(int argc, char **argv)
{
    static const test_entry tests[] = {
        TEST_ENTRY(compact_records),      TEST_ENTRY(predefined_types),
        TEST_ENTRY(full_records_refused), TEST_ENTRY(full_records_opt_in_and_converted),
        TEST_ENTRY(string_with_nuls),     TEST_ENTRY(iterate_positions)};
    return RUN_TESTS(tests);
}
