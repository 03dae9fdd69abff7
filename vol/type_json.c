/*
 * type_json.c: HDF5 datatypes and values of them as JSON, the form the reserved attribute `_h5zarr`
 * keeps them in (docs/FORMAT.md, "The reserved attribute `_h5zarr`"), and the field readers that
 * vol/plist_json.c shares. A document from a store is untrusted: every field is type- and range-checked
 * before any HDF5 call, the type is built with H5Tcreate/H5Tcopy + H5Tset_* and H5Tinsert (never
 * H5Tdecode), and anything out of range is an error naming the document and the field.
 *
 * Short names for predefined types: i1< i1> ... i8>, u1< ... u8> (H5T_STD_I/U), f2< f4< f8< (and >,
 * H5T_IEEE_F*), b1< ... b8> (H5T_STD_B*), t4< t8< (and >, H5T_UNIX_D*), ref (H5T_STD_REF), ref_obj
 * (H5T_STD_REF_OBJ), ref_dsetreg (H5T_STD_REF_DSETREG), str / str_utf8 (variable-length strings,
 * null-terminated, ASCII / UTF-8). Everything else is an object {"class": ..., ...}.
 */
#include "reserved.h"

#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds of a float's fields beyond the element's bits: the exponent bias HDF5's file format keeps (32 bits;
 * H5Tset_ebias itself takes any size_t, whatever the exponent size), and the exponent bits its conversions
 * handle (they compute 2^esize - 1 in 64 bits). */
#define H5ZV_FLOAT_EBIAS_MAX UINT32_MAX
#define H5ZV_FLOAT_ESIZE_MAX 63

/* ---- field readers -------------------------------------------------------------------------------- */
const char *
h5zv_jpath_key(h5zv_jpath *p, const char *at, const char *key)
{
    snprintf(p->s, sizeof p->s, "%s.%s", at, key);
    return p->s;
}

const char *
h5zv_jpath_idx(h5zv_jpath *p, const char *at, size_t i)
{
    snprintf(p->s, sizeof p->s, "%s[%zu]", at, i);
    return p->s;
}

void
h5zv_json_fail_at(const char *func, int line, const char *at, const char *fmt, ...)
{
    char    msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    h5zv_err_push_at(__FILE__, func, line, "%s: %s", at, msg);
}

static const char *
jtype_name(struct json_object *v)
{
    switch (json_object_get_type(v)) {
        case json_type_null:
            return "null";
        case json_type_boolean:
            return "a boolean";
        case json_type_double:
            return "a non-integer number";
        case json_type_int:
            return "an integer";
        case json_type_object:
            return "an object";
        case json_type_array:
            return "a list";
        case json_type_string:
            return "a string";
    }
    return "?";
}

/* The field, or NULL; *rc: 0 absent and optional, -1 absent and required (pushed). */
static struct json_object *
field(struct json_object *o, const char *at, const char *key, bool required, int *rc)
{
    struct json_object *v = NULL;
    h5zv_jpath          p;
    *rc = 0;
    if (!json_object_is_type(o, json_type_object)) {
        h5zv_json_fail_at(__func__, __LINE__, at, "must be a JSON object, not %s", jtype_name(o));
        *rc = -1;
        return NULL;
    }
    if (json_object_object_get_ex(o, key, &v))
        return v; /* NULL when present as null: the caller's type check reports it */
    if (required) {
        h5zv_json_fail_at(__func__, __LINE__, h5zv_jpath_key(&p, at, key), "missing (required)");
        *rc = -1;
    }
    return NULL;
}

/* A key present with the JSON value null: field() returns NULL for both, so look again. */
static bool
present(struct json_object *o, const char *key)
{
    return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, NULL);
}

bool
h5zv_utf8_ok(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80             ? 0
                : (*p & 0xE0) == 0xC0 ? 1
                : (*p & 0xF0) == 0xE0 ? 2
                : (*p & 0xF8) == 0xF0 ? 3
                                      : -1;
        if (n < 0)
            return false;
        p++;
        for (int i = 0; i < n; i++, p++)
            if ((*p & 0xC0) != 0x80)
                return false;
    }
    return true;
}

int
h5zv_json_uint_val(struct json_object *v, const char *at, uint64_t lo, uint64_t hi, uint64_t *out)
{
    int64_t  s;
    uint64_t u;
    int      ret = -1;
    if (!json_object_is_type(v, json_type_int))
        H5ZV_JSON_FAIL(at, "must be an integer, not %s", jtype_name(v));
    s = json_object_get_int64(v);
    if (s < 0)
        H5ZV_JSON_FAIL(at, "%lld is out of range (%llu..%llu)", (long long)s, (unsigned long long)lo,
                       (unsigned long long)hi);
    u = json_object_get_uint64(v);
    if (u < lo || u > hi)
        H5ZV_JSON_FAIL(at, "%llu is out of range (%llu..%llu)", (unsigned long long)u, (unsigned long long)lo,
                       (unsigned long long)hi);
    *out = u;
    ret  = 0;
done:
    return ret;
}

int
h5zv_json_uint(struct json_object *o, const char *at, const char *key, bool required, uint64_t lo,
               uint64_t hi, uint64_t *v)
{
    int                 rc;
    h5zv_jpath          p;
    struct json_object *f = field(o, at, key, required, &rc);
    if (!f && !present(o, key))
        return rc;
    return h5zv_json_uint_val(f, h5zv_jpath_key(&p, at, key), lo, hi, v) < 0 ? -1 : 1;
}

int
h5zv_json_bool(struct json_object *o, const char *at, const char *key, bool required, bool *v)
{
    int                 rc, ret = -1;
    h5zv_jpath          p;
    struct json_object *f = field(o, at, key, required, &rc);
    if (!f && !present(o, key))
        return rc;
    if (!json_object_is_type(f, json_type_boolean))
        H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, key), "must be true or false, not %s", jtype_name(f));
    *v  = json_object_get_boolean(f);
    ret = 1;
done:
    return ret;
}

int
h5zv_json_str(struct json_object *o, const char *at, const char *key, bool required, size_t max,
              const char **v)
{
    int                 rc, ret = -1;
    h5zv_jpath          p;
    struct json_object *f = field(o, at, key, required, &rc);
    size_t              n;
    if (!f && !present(o, key))
        return rc;
    if (!json_object_is_type(f, json_type_string))
        H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, key), "must be a string, not %s", jtype_name(f));
    n = (size_t)json_object_get_string_len(f);
    if (n > max || strlen(json_object_get_string(f)) != n)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, key), "must be a string of at most %zu bytes without NUL", max);
    *v  = json_object_get_string(f);
    ret = 1;
done:
    return ret;
}

int
h5zv_json_choice(struct json_object *o, const char *at, const char *key, bool required,
                 const char *const *names, int n, int *v)
{
    const char *s         = NULL;
    char        list[256] = "";
    h5zv_jpath  p;
    int         rc = h5zv_json_str(o, at, key, required, 64, &s), ret = -1;
    if (rc <= 0)
        return rc;
    for (int i = 0; i < n; i++)
        if (names[i] && !strcmp(s, names[i])) {
            *v = i;
            return 1;
        }
    for (int i = 0; i < n; i++)
        if (names[i])
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", *list ? ", " : "",
                     names[i]);
    H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, key), "\"%s\" is not one of %s", s, list);
done:
    return ret;
}

int
h5zv_json_list(struct json_object *o, const char *at, const char *key, bool required, size_t lo, size_t hi,
               struct json_object **v)
{
    int                 rc, ret = -1;
    h5zv_jpath          p;
    struct json_object *f = field(o, at, key, required, &rc);
    size_t              n;
    if (!f && !present(o, key))
        return rc;
    if (!json_object_is_type(f, json_type_array))
        H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, key), "must be a list, not %s", jtype_name(f));
    n = json_object_array_length(f);
    if (n < lo || n > hi)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, key), "must have %zu to %zu entries, not %zu", lo, hi, n);
    *v  = f;
    ret = 1;
done:
    return ret;
}

int
h5zv_json_keys(struct json_object *o, const char *at, const char *const *allowed)
{
    int        ret = -1;
    h5zv_jpath p;
    if (!json_object_is_type(o, json_type_object))
        H5ZV_JSON_FAIL(at, "must be a JSON object, not %s", jtype_name(o));
    json_object_object_foreach(o, k, v)
    {
        size_t i;
        (void)v;
        for (i = 0; allowed[i] && strcmp(allowed[i], k); i++)
            ;
        if (!allowed[i])
            H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, k), "unknown key (written by a newer h5zarr?)");
    }
    ret = 0;
done:
    return ret;
}

/* ---- predefined types by short name --------------------------------------------------------------- */
typedef struct {
    const char *name;
    hid_t (*id)(void);
} named_type;

#define NT(n, t)                                                                                             \
    static hid_t nt_##n(void) { return t; }
NT(i1l, H5T_STD_I8LE)
NT(i1b, H5T_STD_I8BE)
NT(i2l, H5T_STD_I16LE)
NT(i2b, H5T_STD_I16BE)
NT(i4l, H5T_STD_I32LE)
NT(i4b, H5T_STD_I32BE)
NT(i8l, H5T_STD_I64LE)
NT(i8b, H5T_STD_I64BE)
NT(u1l, H5T_STD_U8LE)
NT(u1b, H5T_STD_U8BE)
NT(u2l, H5T_STD_U16LE)
NT(u2b, H5T_STD_U16BE)
NT(u4l, H5T_STD_U32LE)
NT(u4b, H5T_STD_U32BE)
NT(u8l, H5T_STD_U64LE)
NT(u8b, H5T_STD_U64BE)
NT(f2l, H5T_IEEE_F16LE)
NT(f2b, H5T_IEEE_F16BE)
NT(f4l, H5T_IEEE_F32LE)
NT(f4b, H5T_IEEE_F32BE)
NT(f8l, H5T_IEEE_F64LE)
NT(f8b, H5T_IEEE_F64BE)
NT(b1l, H5T_STD_B8LE)
NT(b1b, H5T_STD_B8BE)
NT(b2l, H5T_STD_B16LE)
NT(b2b, H5T_STD_B16BE)
NT(b4l, H5T_STD_B32LE)
NT(b4b, H5T_STD_B32BE)
NT(b8l, H5T_STD_B64LE)
NT(b8b, H5T_STD_B64BE)
NT(t4l, H5T_UNIX_D32LE)
NT(t4b, H5T_UNIX_D32BE)
NT(t8l, H5T_UNIX_D64LE)
NT(t8b, H5T_UNIX_D64BE)
NT(ref, H5T_STD_REF)
NT(refo, H5T_STD_REF_OBJ)
NT(refr, H5T_STD_REF_DSETREG)
#undef NT

static const named_type named_types[] = {
    {"i1<", nt_i1l},      {"i1>", nt_i1b},          {"i2<", nt_i2l}, {"i2>", nt_i2b}, {"i4<", nt_i4l},
    {"i4>", nt_i4b},      {"i8<", nt_i8l},          {"i8>", nt_i8b}, {"u1<", nt_u1l}, {"u1>", nt_u1b},
    {"u2<", nt_u2l},      {"u2>", nt_u2b},          {"u4<", nt_u4l}, {"u4>", nt_u4b}, {"u8<", nt_u8l},
    {"u8>", nt_u8b},      {"f2<", nt_f2l},          {"f2>", nt_f2b}, {"f4<", nt_f4l}, {"f4>", nt_f4b},
    {"f8<", nt_f8l},      {"f8>", nt_f8b},          {"b1<", nt_b1l}, {"b1>", nt_b1b}, {"b2<", nt_b2l},
    {"b2>", nt_b2b},      {"b4<", nt_b4l},          {"b4>", nt_b4b}, {"b8<", nt_b8l}, {"b8>", nt_b8b},
    {"t4<", nt_t4l},      {"t4>", nt_t4b},          {"t8<", nt_t8l}, {"t8>", nt_t8b}, {"ref", nt_ref},
    {"ref_obj", nt_refo}, {"ref_dsetreg", nt_refr},
};
#define N_NAMED (sizeof named_types / sizeof named_types[0])

/* A variable-length string type of character set `cset`, null-terminated (new id). */
static hid_t
vlen_str(H5T_cset_t cset)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, cset) < 0)) {
        h5zv_close(t);
        t = H5I_INVALID_HID;
    }
    return t;
}

/* The short name of `t` when it equals a predefined type, else NULL. */
static const char *
short_name(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    size_t      size;
    if (c == H5T_STRING) {
        /* H5Tequal does not compare the character set or padding of variable-length strings */
        H5T_cset_t cs = H5Tget_cset(t);
        if (H5Tis_variable_str(t) <= 0 || H5Tget_strpad(t) != H5T_STR_NULLTERM ||
            (cs != H5T_CSET_ASCII && cs != H5T_CSET_UTF8))
            return NULL;
        return cs == H5T_CSET_UTF8 ? "str_utf8" : "str";
    }
    if (c != H5T_INTEGER && c != H5T_FLOAT && c != H5T_BITFIELD && c != H5T_TIME && c != H5T_REFERENCE)
        return NULL;
    size = H5Tget_size(t);
    /* the class and size of each predefined type, asked once (two HDF5 calls per candidate and call
     * were a third of a scalar attribute's create, W4); a predefined type keeps both for good, even
     * when a restarted library gives it another id */
    static H5T_class_t nt_class[N_NAMED];
    static size_t      nt_size[N_NAMED];
    static bool        nt_known;
    if (!nt_known) {
        for (size_t i = 0; i < N_NAMED; i++) {
            hid_t p     = named_types[i].id();
            nt_class[i] = H5Tget_class(p);
            nt_size[i]  = H5Tget_size(p);
        }
        nt_known = true;
    }
    for (size_t i = 0; i < N_NAMED; i++)
        if (nt_class[i] == c && (c == H5T_REFERENCE || nt_size[i] == size) &&
            H5Tequal(t, named_types[i].id()) > 0)
            return named_types[i].name;
    return NULL;
}

/* ---- to JSON -------------------------------------------------------------------------------------- */
static const char *const pad_names[]   = {"zero", "one", "background"};
static const char *const norm_names[]  = {"implied", "msbset", "none"};
static const char *const spad_names[]  = {"nullterm", "nullpad", "spacepad"};
static const char *const cset_names[]  = {"ascii", "utf8"};
static const char *const order_names[] = {"<", ">", "vax"};

static void
jadd(struct json_object *o, const char *k, struct json_object *v)
{
    json_object_object_add(o, k, v);
}

static struct json_object *
jpair(uint64_t a, uint64_t b)
{
    struct json_object *l = json_object_new_array();
    json_object_array_add(l, json_object_new_uint64(a));
    json_object_array_add(l, json_object_new_uint64(b));
    return l;
}

/* size, order, precision, offset, pad of an atomic type (defaults left out except size and order). */
static int
atomic_to_json(hid_t t, struct json_object *o, const char *what)
{
    size_t      size = H5Tget_size(t), prec = H5Tget_precision(t);
    int         off = H5Tget_offset(t);
    H5T_order_t ord = H5Tget_order(t);
    H5T_pad_t   lsb = H5T_PAD_ERROR, msb = H5T_PAD_ERROR;
    int         ret = -1;
    if (size == 0 || size > H5ZV_ATOMIC_SIZE_MAX || prec == 0 || off < 0 || H5Tget_pad(t, &lsb, &msb) < 0 ||
        lsb < 0 || lsb > 2 || msb < 0 || msb > 2)
        H5ZV_GOTO_ERROR("can't describe a %s datatype of %zu bytes", what, size);
    jadd(o, "size", json_object_new_uint64(size));
    if (ord == H5T_ORDER_LE || ord == H5T_ORDER_BE || ord == H5T_ORDER_VAX)
        jadd(o, "order",
             json_object_new_string(order_names[ord == H5T_ORDER_LE   ? 0
                                                : ord == H5T_ORDER_BE ? 1
                                                                      : 2]));
    else
        H5ZV_GOTO_ERROR("can't describe a %s datatype of byte order %d", what, (int)ord);
    if (prec != 8 * size)
        jadd(o, "precision", json_object_new_uint64(prec));
    if (off != 0)
        jadd(o, "offset", json_object_new_uint64((uint64_t)off));
    if (lsb != H5T_PAD_ZERO || msb != H5T_PAD_ZERO) {
        struct json_object *l = json_object_new_array();
        json_object_array_add(l, json_object_new_string(pad_names[lsb]));
        json_object_array_add(l, json_object_new_string(pad_names[msb]));
        jadd(o, "pad", l);
    }
    ret = 0;
done:
    return ret;
}

static int type_to_json(hid_t t, int depth, struct json_object **out);

/* The class, sign (integers) and atomic fields of an integer or bitfield datatype, into `o`. */
static int
integer_type_json(hid_t t, bool bitfield, struct json_object *o)
{
    const char *what = bitfield ? "bitfield" : "integer";
    jadd(o, "class", json_object_new_string(what));
    if (!bitfield)
        jadd(o, "signed", json_object_new_boolean(H5Tget_sign(t) == H5T_SGN_2));
    return atomic_to_json(t, o, what);
}

/* The class, atomic fields and bit layout (sign, exponent, mantissa, bias, norm, inpad) of a float
 * datatype of `size` bytes, into `o`. */
static int
float_type_json(hid_t t, size_t size, struct json_object *o)
{
    size_t     spos, epos, esize, mpos, msize;
    H5T_norm_t norm  = H5Tget_norm(t);
    H5T_pad_t  inpad = H5Tget_inpad(t);
    int        ret   = -1;
    jadd(o, "class", json_object_new_string("float"));
    if (atomic_to_json(t, o, "float") < 0 || H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0 ||
        norm < 0 || norm > 2 || inpad < 0 || inpad > 2)
        H5ZV_GOTO_ERROR("can't describe a float datatype of %zu bytes", size);
    /* what float_from_json reads back (docs/FORMAT.md "Datatypes"): refused here rather than stored
     * unreadable */
    if (esize > H5ZV_FLOAT_ESIZE_MAX || H5Tget_ebias(t) > H5ZV_FLOAT_EBIAS_MAX)
        H5ZV_GOTO_ERROR("can't store a float datatype with a %zu-bit exponent and exponent bias %zu "
                        "(at most %d bits and a bias of %llu, what HDF5's conversions and its file "
                        "format keep)",
                        esize, H5Tget_ebias(t), H5ZV_FLOAT_ESIZE_MAX,
                        (unsigned long long)H5ZV_FLOAT_EBIAS_MAX);
    jadd(o, "sign", json_object_new_uint64(spos));
    jadd(o, "exponent", jpair(epos, esize));
    jadd(o, "mantissa", jpair(mpos, msize));
    jadd(o, "ebias", json_object_new_uint64(H5Tget_ebias(t)));
    if (norm != H5T_NORM_IMPLIED)
        jadd(o, "norm", json_object_new_string(norm_names[norm]));
    if (inpad != H5T_PAD_ZERO)
        jadd(o, "inpad", json_object_new_string(pad_names[inpad]));
    ret = 0;
done:
    return ret;
}

/* The class, size ("variable" or bytes), padding and character set of a string datatype, into `o`. */
static int
string_type_json(hid_t t, size_t size, struct json_object *o)
{
    H5T_str_t  pad  = H5Tget_strpad(t);
    H5T_cset_t cset = H5Tget_cset(t);
    int        ret  = -1;
    if (pad < 0 || pad > 2 || cset < 0 || cset > 1)
        H5ZV_GOTO_ERROR("can't describe a string datatype of padding %d, character set %d", (int)pad,
                        (int)cset);
    jadd(o, "class", json_object_new_string("string"));
    if (H5Tis_variable_str(t) > 0)
        jadd(o, "size", json_object_new_string("variable"));
    else
        jadd(o, "size", json_object_new_uint64(size));
    if (pad != H5T_STR_NULLTERM)
        jadd(o, "pad", json_object_new_string(spad_names[pad]));
    if (cset != H5T_CSET_ASCII)
        jadd(o, "cset", json_object_new_string(cset_names[cset]));
    ret = 0;
done:
    return ret;
}

/* The class, size and tag (when not empty) of an opaque datatype, into `o`. */
static int
opaque_type_json(hid_t t, size_t size, struct json_object *o)
{
    char *tag;
    jadd(o, "class", json_object_new_string("opaque"));
    jadd(o, "size", json_object_new_uint64(size));
    if ((tag = H5Tget_tag(t)) && *tag)
        jadd(o, "tag", json_object_new_string(tag));
    if (tag)
        H5free_memory(tag);
    return 0;
}

/* The class, size and members (name, offset, type) of a compound datatype, into `o`. */
static int
compound_type_json(hid_t t, size_t size, int depth, struct json_object *o)
{
    int                 n   = H5Tget_nmembers(t);
    struct json_object *l   = NULL;
    hid_t               m   = H5I_INVALID_HID;
    char               *nm  = NULL;
    int                 ret = -1;
    if (n < 0 || n > H5ZV_TYPE_MEMBERS_MAX)
        H5ZV_GOTO_ERROR("can't describe a compound datatype of %d members", n);
    jadd(o, "class", json_object_new_string("compound"));
    jadd(o, "size", json_object_new_uint64(size));
    l = json_object_new_array();
    jadd(o, "members", l);
    for (int i = 0; i < n; i++) {
        struct json_object *e = json_object_new_object(), *mt = NULL;
        json_object_array_add(l, e);
        if ((m = H5Tget_member_type(t, (unsigned)i)) < 0 || !(nm = H5Tget_member_name(t, (unsigned)i)))
            H5ZV_GOTO_ERROR("can't read member %d of a compound datatype", i);
        jadd(e, "name", json_object_new_string(nm));
        jadd(e, "offset", json_object_new_uint64(H5Tget_member_offset(t, (unsigned)i)));
        if (type_to_json(m, depth + 1, &mt) < 0)
            goto done;
        jadd(e, "type", mt);
        H5free_memory(nm);
        nm = NULL;
        h5zv_close(m);
        m = H5I_INVALID_HID;
    }
    ret = 0;
done:
    if (nm)
        H5free_memory(nm);
    h5zv_close(m);
    return ret;
}

/* The class, base type and members ([name, value] with the value as a JSON integer) of an enum datatype,
 * into `o`. */
static int
enum_type_json(hid_t t, int depth, struct json_object *o)
{
    int                 n  = H5Tget_nmembers(t);
    struct json_object *bt = NULL, *l;
    hid_t               b  = H5I_INVALID_HID;
    char               *nm = NULL;
    uint8_t             v[H5ZV_ATOMIC_SIZE_MAX + 8];
    bool                sgn;
    int                 ret = -1;
    if ((b = H5Tget_super(t)) < 0 || n < 0 || n > H5ZV_TYPE_MEMBERS_MAX || H5Tget_size(b) > sizeof v - 8 ||
        H5Tget_precision(b) > 64)
        H5ZV_GOTO_ERROR("can't describe an enum datatype of %d members", n);
    sgn = H5Tget_sign(b) == H5T_SGN_2;
    jadd(o, "class", json_object_new_string("enum"));
    if (type_to_json(b, depth + 1, &bt) < 0)
        goto done;
    jadd(o, "base", bt);
    l = json_object_new_array();
    jadd(o, "members", l);
    for (int i = 0; i < n; i++) {
        struct json_object *e = json_object_new_array();
        json_object_array_add(l, e);
        memset(v, 0, sizeof v);
        if (!(nm = H5Tget_member_name(t, (unsigned)i)) || H5Tget_member_value(t, (unsigned)i, v) < 0 ||
            H5Tconvert(b, sgn ? H5T_NATIVE_LLONG : H5T_NATIVE_ULLONG, 1, v, NULL, H5P_DEFAULT) < 0)
            H5ZV_GOTO_ERROR("can't read member %d of an enum datatype", i);
        json_object_array_add(e, json_object_new_string(nm));
        if (sgn) {
            long long x;
            memcpy(&x, v, sizeof x);
            json_object_array_add(e, json_object_new_int64(x));
        }
        else {
            unsigned long long x;
            memcpy(&x, v, sizeof x);
            json_object_array_add(e, json_object_new_uint64(x));
        }
        H5free_memory(nm);
        nm = NULL;
    }
    ret = 0;
done:
    if (nm)
        H5free_memory(nm);
    h5zv_close(b);
    return ret;
}

/* The class, dimensions and base type of an array datatype, into `o`. */
static int
array_type_json(hid_t t, int depth, struct json_object *o)
{
    hsize_t             dims[H5S_MAX_RANK];
    int                 nd  = H5Tget_array_ndims(t);
    struct json_object *bt  = NULL, *l;
    hid_t               b   = H5I_INVALID_HID;
    int                 ret = -1;
    if (nd < 1 || nd > H5S_MAX_RANK || H5Tget_array_dims2(t, dims) < 0 || (b = H5Tget_super(t)) < 0)
        H5ZV_GOTO_ERROR("can't describe an array datatype of rank %d", nd);
    jadd(o, "class", json_object_new_string("array"));
    l = json_object_new_array();
    for (int i = 0; i < nd; i++)
        json_object_array_add(l, json_object_new_uint64(dims[i]));
    jadd(o, "dims", l);
    if (type_to_json(b, depth + 1, &bt) < 0)
        goto done;
    jadd(o, "base", bt);
    ret = 0;
done:
    h5zv_close(b);
    return ret;
}

/* The class and base type of a variable-length sequence datatype, into `o`. */
static int
vlen_type_json(hid_t t, int depth, struct json_object *o)
{
    struct json_object *bt  = NULL;
    hid_t               b   = H5I_INVALID_HID;
    int                 ret = -1;
    if ((b = H5Tget_super(t)) < 0)
        H5ZV_GOTO_ERROR("can't read the base of a variable-length datatype");
    jadd(o, "class", json_object_new_string("vlen"));
    if (type_to_json(b, depth + 1, &bt) < 0)
        goto done;
    jadd(o, "base", bt);
    ret = 0;
done:
    h5zv_close(b);
    return ret;
}

/* `t` as JSON (*out new): its short name when it equals a predefined type, else an object made by its
 * class's helper above. */
static int
type_to_json(hid_t t, int depth, struct json_object **out)
{
    struct json_object *o = NULL;
    char                stdn[4];
    const char         *sn;
    H5T_class_t         c;
    size_t              size;
    bool                sg, be;
    int                 rc  = -1;
    int                 ret = -1;

    if (h5zv_type_std_info(t, &c, &size, &sg, &be)) { /* a predefined integer or IEEE float: its short name */
        stdn[0] = c == H5T_FLOAT ? 'f' : sg ? 'i' : 'u';
        stdn[1] = (char)('0' + size); /* 1, 2, 4 or 8 */
        stdn[2] = be ? '>' : '<';
        stdn[3] = '\0';
        *out    = json_object_new_string(stdn);
        return *out ? 0 : -1;
    }
    c    = H5Tget_class(t);
    size = H5Tget_size(t);

    if (depth > H5ZV_TYPE_DEPTH_MAX)
        H5ZV_GOTO_ERROR("can't describe a datatype nested deeper than %d levels", H5ZV_TYPE_DEPTH_MAX);
    if (size == 0 || size > H5ZV_TYPE_SIZE_MAX)
        H5ZV_GOTO_ERROR("can't describe a datatype of %zu bytes (at most %u)", size, H5ZV_TYPE_SIZE_MAX);
    if ((sn = short_name(t))) {
        *out = json_object_new_string(sn);
        return 0;
    }
    if (c == H5T_REFERENCE) {
        /* any reference type not equal to a predefined one (a file-located copy): new-style */
        *out = json_object_new_string("ref");
        return 0;
    }
    o = json_object_new_object();
    switch (c) {
        case H5T_INTEGER:
        case H5T_BITFIELD:
            rc = integer_type_json(t, c == H5T_BITFIELD, o);
            break;
        case H5T_FLOAT:
            rc = float_type_json(t, size, o);
            break;
        case H5T_STRING:
            rc = string_type_json(t, size, o);
            break;
        case H5T_OPAQUE:
            rc = opaque_type_json(t, size, o);
            break;
        case H5T_COMPOUND:
            rc = compound_type_json(t, size, depth, o);
            break;
        case H5T_ENUM:
            rc = enum_type_json(t, depth, o);
            break;
        case H5T_ARRAY:
            rc = array_type_json(t, depth, o);
            break;
        case H5T_VLEN:
            rc = vlen_type_json(t, depth, o);
            break;
        default:
            H5ZV_GOTO_ERROR("can't describe a datatype of class %d", (int)c);
    }
    if (rc < 0)
        goto done;
    *out = o;
    o    = NULL;
    ret  = 0;
done:
    json_object_put(o);
    return ret;
}

int
h5zv_type_to_json(hid_t type, struct json_object **out)
{
    *out = NULL;
    return type_to_json(type, 0, out);
}

/* ---- from JSON ------------------------------------------------------------------------------------ */
static int type_from_json(struct json_object *j, const char *at, int depth, hid_t *out);

/* Reads pad ["lsb", "msb"] (absent: zero, zero). */
static int
read_pad(struct json_object *j, const char *at, H5T_pad_t *lsb, H5T_pad_t *msb)
{
    struct json_object *l = NULL;
    h5zv_jpath          p, q;
    int                 rc = h5zv_json_list(j, at, "pad", false, 2, 2, &l), ret = -1;
    *lsb = *msb = H5T_PAD_ZERO;
    if (rc <= 0)
        return rc;
    h5zv_jpath_key(&p, at, "pad");
    for (size_t i = 0; i < 2; i++) {
        struct json_object *v = json_object_array_get_idx(l, i);
        int                 k;
        for (k = 0; k < 3; k++)
            if (json_object_is_type(v, json_type_string) && !strcmp(json_object_get_string(v), pad_names[k]))
                break;
        if (k == 3)
            H5ZV_JSON_FAIL(h5zv_jpath_idx(&q, p.s, i), "must be \"zero\", \"one\" or \"background\"");
        *(i ? msb : lsb) = (H5T_pad_t)k;
    }
    ret = 1;
done:
    return ret;
}

/* Common fields of integers, bitfields and floats; *size etc. set. */
typedef struct {
    uint64_t  size, prec, off;
    int       order;
    H5T_pad_t lsb, msb;
} atomic_f;

static int
read_atomic(struct json_object *j, const char *at, bool vax_ok, atomic_f *a)
{
    h5zv_jpath p;
    int        ret = -1;
    if (h5zv_json_uint(j, at, "size", true, 1, H5ZV_ATOMIC_SIZE_MAX, &a->size) < 0 ||
        h5zv_json_choice(j, at, "order", true, order_names, vax_ok ? 3 : 2, &a->order) < 0)
        goto done;
    a->prec = 8 * a->size;
    a->off  = 0;
    if (h5zv_json_uint(j, at, "precision", false, 1, 8 * a->size, &a->prec) < 0 ||
        h5zv_json_uint(j, at, "offset", false, 0, 8 * a->size - 1, &a->off) < 0 ||
        read_pad(j, at, &a->lsb, &a->msb) < 0)
        goto done;
    if (a->prec + a->off > 8 * a->size)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, "offset"),
                       "%llu + precision %llu exceeds the %llu bits of the type", (unsigned long long)a->off,
                       (unsigned long long)a->prec, (unsigned long long)(8 * a->size));
    ret = 0;
done:
    return ret;
}

static int
apply_atomic(hid_t t, const atomic_f *a, const char *at)
{
    int ret = -1;
    if (H5Tset_order(t, a->order == 0   ? H5T_ORDER_LE
                        : a->order == 1 ? H5T_ORDER_BE
                                        : H5T_ORDER_VAX) < 0 ||
        H5Tset_pad(t, a->lsb, a->msb) < 0)
        H5ZV_JSON_FAIL(at, "HDF5 refused the byte order or padding");
    ret = 0;
done:
    return ret;
}

static hid_t
int_from_json(struct json_object *j, const char *at, bool bitfield)
{
    static const char *const keys[]  = {"class",     "size",   "order", "signed",
                                        "precision", "offset", "pad",   NULL};
    static const char *const bkeys[] = {"class", "size", "order", "precision", "offset", "pad", NULL};
    atomic_f                 a;
    bool                     sgn = false;
    hid_t                    t = H5I_INVALID_HID, ret = H5I_INVALID_HID;
    if (h5zv_json_keys(j, at, bitfield ? bkeys : keys) < 0 || read_atomic(j, at, false, &a) < 0 ||
        (!bitfield && h5zv_json_bool(j, at, "signed", true, &sgn) < 0))
        goto done;
    if ((t = H5Tcopy(bitfield ? H5T_STD_B8LE
                     : sgn    ? H5T_STD_I8LE
                              : H5T_STD_U8LE)) < 0 ||
        H5Tset_size(t, a.size) < 0 || H5Tset_offset(t, 0) < 0 || H5Tset_precision(t, a.prec) < 0 ||
        H5Tset_offset(t, a.off) < 0)
        H5ZV_JSON_FAIL(at, "HDF5 refused the size, precision or offset");
    if (apply_atomic(t, &a, at) < 0)
        goto done;
    ret = t;
    t   = H5I_INVALID_HID;
done:
    h5zv_close(t);
    return ret;
}

/* [pos, size] of a float's field: within the `bits` of the element (what HDF5's own file format accepts:
 * H5Tset_offset does not move the fields, so they need not lie inside the precision). */
static int
read_field(struct json_object *j, const char *at, const char *key, uint64_t bits, uint64_t *pos,
           uint64_t *size)
{
    struct json_object *l = NULL;
    h5zv_jpath          p, q;
    int                 ret = -1;
    if (h5zv_json_list(j, at, key, true, 2, 2, &l) < 0)
        goto done;
    h5zv_jpath_key(&p, at, key);
    if (h5zv_json_uint_val(json_object_array_get_idx(l, 0), h5zv_jpath_idx(&q, p.s, 0), 0, bits - 1, pos) <
            0 ||
        h5zv_json_uint_val(json_object_array_get_idx(l, 1), h5zv_jpath_idx(&q, p.s, 1), 1, bits, size) < 0)
        goto done;
    if (*pos + *size > bits)
        H5ZV_JSON_FAIL(p.s, "bits %llu + %llu exceed the %llu bits of the type", (unsigned long long)*pos,
                       (unsigned long long)*size, (unsigned long long)bits);
    ret = 0;
done:
    return ret;
}

static bool
overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
    return a < b + bn && b < a + an;
}

static hid_t
float_from_json(struct json_object *j, const char *at)
{
    static const char *const keys[] = {"class",    "size",     "order", "precision", "offset", "pad", "sign",
                                       "exponent", "mantissa", "ebias", "norm",      "inpad",  NULL};
    atomic_f                 a;
    uint64_t                 spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0, ebias = 0, bits, big;
    int                      norm = 0, inpad = 0;
    h5zv_jpath               p;
    hid_t                    t = H5I_INVALID_HID, ret = H5I_INVALID_HID;

    if (h5zv_json_keys(j, at, keys) < 0 || read_atomic(j, at, true, &a) < 0)
        goto done;
    bits = 8 * a.size;
    if (h5zv_json_uint(j, at, "sign", true, 0, bits - 1, &spos) < 0 ||
        read_field(j, at, "exponent", bits, &epos, &esize) < 0 ||
        read_field(j, at, "mantissa", bits, &mpos, &msize) < 0 ||
        h5zv_json_choice(j, at, "norm", false, norm_names, 3, &norm) < 0 ||
        h5zv_json_choice(j, at, "inpad", false, pad_names, 3, &inpad) < 0)
        goto done;
    /* HDF5's conversions take 2^esize - 1 in 64 bits */
    if (esize > H5ZV_FLOAT_ESIZE_MAX)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, "exponent"), "an exponent of %llu bits (at most %d)",
                       (unsigned long long)esize, H5ZV_FLOAT_ESIZE_MAX);
    /* any bias HDF5 keeps (H5Tset_ebias takes any; its file format holds 32 bits), whatever the exponent
     * size: h5py's custom floats have 53 and 258 in 5 bits */
    if (h5zv_json_uint(j, at, "ebias", true, 0, H5ZV_FLOAT_EBIAS_MAX, &ebias) < 0)
        goto done;
    if (overlap(spos, 1, epos, esize) || overlap(spos, 1, mpos, msize))
        H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, "sign"), "bit %llu overlaps the exponent or mantissa",
                       (unsigned long long)spos);
    if (overlap(epos, esize, mpos, msize))
        H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, "mantissa"), "overlaps the exponent");
    /* From a 64-bit float grown to at least the size, with its precision the whole element: the fields go
     * anywhere in it. HDF5 checks the fields against precision + offset when either shrinks, but not when
     * the offset is set: so the precision is set with the offset at its highest (every field below
     * precision + offset), then the size, then the offset itself. */
    big = a.size > 8 ? a.size : 8;
    if ((t = H5Tcopy(H5T_IEEE_F64LE)) < 0 ||
        (big > 8 && (H5Tset_size(t, big) < 0 || H5Tset_precision(t, 8 * big) < 0)) ||
        H5Tset_fields(t, spos, epos, esize, mpos, msize) < 0 || H5Tset_offset(t, bits - a.prec) < 0 ||
        H5Tset_precision(t, a.prec) < 0 || H5Tset_size(t, a.size) < 0 || H5Tset_offset(t, a.off) < 0 ||
        H5Tset_ebias(t, ebias) < 0 || H5Tset_norm(t, (H5T_norm_t)norm) < 0 ||
        H5Tset_inpad(t, (H5T_pad_t)inpad) < 0)
        H5ZV_JSON_FAIL(at, "HDF5 refused the float's layout");
    if (apply_atomic(t, &a, at) < 0)
        goto done;
    ret = t;
    t   = H5I_INVALID_HID;
done:
    h5zv_close(t);
    return ret;
}

static hid_t
string_from_json(struct json_object *j, const char *at)
{
    static const char *const keys[] = {"class", "size", "pad", "cset", NULL};
    struct json_object      *s      = NULL;
    uint64_t                 size   = 0;
    int                      pad = 0, cset = 0;
    h5zv_jpath               p;
    hid_t                    t = H5I_INVALID_HID, ret = H5I_INVALID_HID;
    if (h5zv_json_keys(j, at, keys) < 0 || h5zv_json_choice(j, at, "pad", false, spad_names, 3, &pad) < 0 ||
        h5zv_json_choice(j, at, "cset", false, cset_names, 2, &cset) < 0)
        goto done;
    json_object_object_get_ex(j, "size", &s);
    if (json_object_is_type(s, json_type_string)) {
        if (strcmp(json_object_get_string(s), "variable"))
            H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, "size"), "must be a byte count or \"variable\"");
    }
    else if (h5zv_json_uint(j, at, "size", true, 1, H5ZV_TYPE_SIZE_MAX, &size) < 0)
        goto done;
    if ((t = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_size(t, size ? (size_t)size : H5T_VARIABLE) < 0 ||
        H5Tset_strpad(t, (H5T_str_t)pad) < 0 || H5Tset_cset(t, (H5T_cset_t)cset) < 0)
        H5ZV_JSON_FAIL(at, "HDF5 refused the string's size, padding or character set");
    ret = t;
    t   = H5I_INVALID_HID;
done:
    h5zv_close(t);
    return ret;
}

static hid_t
opaque_from_json(struct json_object *j, const char *at)
{
    static const char *const keys[] = {"class", "size", "tag", NULL};
    uint64_t                 size   = 0;
    const char              *tag    = NULL;
    hid_t                    t = H5I_INVALID_HID, ret = H5I_INVALID_HID;
    if (h5zv_json_keys(j, at, keys) < 0 ||
        h5zv_json_uint(j, at, "size", true, 1, H5ZV_TYPE_SIZE_MAX, &size) < 0 ||
        h5zv_json_str(j, at, "tag", false, H5T_OPAQUE_TAG_MAX - 1, &tag) < 0)
        goto done;
    if ((t = H5Tcreate(H5T_OPAQUE, (size_t)size)) < 0 || (tag && *tag && H5Tset_tag(t, tag) < 0))
        H5ZV_JSON_FAIL(at, "HDF5 refused the opaque type");
    ret = t;
    t   = H5I_INVALID_HID;
done:
    h5zv_close(t);
    return ret;
}

typedef struct {
    const char *name;
    uint64_t    off, size;
    size_t      idx;
    hid_t       type; /* compounds: the member's type (owned) */
} member_ref;

static int
cmp_name(const void *a, const void *b)
{
    return strcmp(((const member_ref *)a)->name, ((const member_ref *)b)->name);
}

static int
cmp_off(const void *a, const void *b)
{
    const member_ref *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Names unique (sorted copy); `what` names the list ("members"). */
static int
check_unique_names(member_ref *r, size_t n, const char *at)
{
    h5zv_jpath p;
    int        ret = -1;
    qsort(r, n, sizeof *r, cmp_name);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(r[i - 1].name, r[i].name))
            H5ZV_JSON_FAIL(h5zv_jpath_idx(&p, at, r[i].idx > r[i - 1].idx ? r[i].idx : r[i - 1].idx),
                           "the name \"%s\" is used twice", r[i].name);
    ret = 0;
done:
    return ret;
}

static hid_t
compound_from_json(struct json_object *j, const char *at, int depth)
{
    static const char *const keys[]  = {"class", "size", "members", NULL};
    static const char *const mkeys[] = {"name", "offset", "type", NULL};
    struct json_object      *l       = NULL;
    uint64_t                 size    = 0;
    size_t                   n       = 0;
    member_ref              *r       = NULL;
    hid_t                    t = H5I_INVALID_HID, ret = H5I_INVALID_HID;
    h5zv_jpath               lp, ep, fp;

    if (h5zv_json_keys(j, at, keys) < 0 ||
        h5zv_json_uint(j, at, "size", true, 1, H5ZV_TYPE_SIZE_MAX, &size) < 0 ||
        h5zv_json_list(j, at, "members", true, 0, H5ZV_TYPE_MEMBERS_MAX, &l) < 0)
        goto done;
    h5zv_jpath_key(&lp, at, "members");
    n = json_object_array_length(l);
    if (!(r = calloc(n ? n : 1, sizeof *r)))
        H5ZV_JSON_FAIL(at, "out of memory");
    for (size_t i = 0; i < n; i++)
        r[i].type = H5I_INVALID_HID;
    /* every member read and checked first (names, bounds, overlaps), then the type is made */
    for (size_t i = 0; i < n; i++) {
        struct json_object *e = json_object_array_get_idx(l, i), *mt = NULL;
        const char         *name = NULL;
        uint64_t            off  = 0;
        size_t              ms;
        h5zv_jpath_idx(&ep, lp.s, i);
        if (h5zv_json_keys(e, ep.s, mkeys) < 0 ||
            h5zv_json_str(e, ep.s, "name", true, H5ZV_NAME_MAX, &name) < 0 ||
            h5zv_json_uint(e, ep.s, "offset", true, 0, size - 1, &off) < 0)
            goto done;
        if (!*name)
            H5ZV_JSON_FAIL(h5zv_jpath_key(&fp, ep.s, "name"), "must not be empty");
        json_object_object_get_ex(e, "type", &mt);
        if (!mt)
            H5ZV_JSON_FAIL(h5zv_jpath_key(&fp, ep.s, "type"), "missing (required)");
        if (type_from_json(mt, h5zv_jpath_key(&fp, ep.s, "type"), depth + 1, &r[i].type) < 0)
            goto done;
        ms = H5Tget_size(r[i].type);
        if (off + ms > size)
            H5ZV_JSON_FAIL(h5zv_jpath_key(&fp, ep.s, "offset"), "%llu + %zu exceeds the compound size %llu",
                           (unsigned long long)off, ms, (unsigned long long)size);
        r[i].name = name;
        r[i].off  = off;
        r[i].size = ms;
        r[i].idx  = i;
    }
    qsort(r, n, sizeof *r, cmp_off);
    for (size_t i = 1; i < n; i++)
        if (r[i - 1].off + r[i - 1].size > r[i].off)
            H5ZV_JSON_FAIL(h5zv_jpath_key(&fp, h5zv_jpath_idx(&ep, lp.s, r[i].idx), "offset"),
                           "member \"%s\" at %llu overlaps member \"%s\" (%llu + %llu)", r[i].name,
                           (unsigned long long)r[i].off, r[i - 1].name, (unsigned long long)r[i - 1].off,
                           (unsigned long long)r[i - 1].size);
    if (check_unique_names(r, n, lp.s) < 0)
        goto done;
    /* in document order: HDF5 keeps members in insertion order */
    for (size_t i = 0; i < n; i++)
        while (r[i].idx != i) {
            member_ref x = r[r[i].idx];
            r[r[i].idx]  = r[i];
            r[i]         = x;
        }
    if ((t = H5Tcreate(H5T_COMPOUND, (size_t)size)) < 0)
        H5ZV_JSON_FAIL(at, "can't make a compound type of %llu bytes", (unsigned long long)size);
    for (size_t i = 0; i < n; i++)
        if (H5Tinsert(t, r[i].name, (size_t)r[i].off, r[i].type) < 0)
            H5ZV_JSON_FAIL(h5zv_jpath_idx(&ep, lp.s, i), "HDF5 refused the member");
    ret = t;
    t   = H5I_INVALID_HID;
done:
    for (size_t i = 0; r && i < n; i++)
        h5zv_close(r[i].type);
    free(r);
    h5zv_close(t);
    return ret;
}

static hid_t
enum_from_json(struct json_object *j, const char *at, int depth)
{
    static const char *const keys[] = {"class", "base", "members", NULL};
    struct json_object      *l = NULL, *bj = NULL;
    hid_t                    b = H5I_INVALID_HID, t = H5I_INVALID_HID, ret = H5I_INVALID_HID;
    member_ref              *r = NULL, *s = NULL; /* off: the value's bits */
    size_t                   n, prec;
    bool                     sgn;
    h5zv_jpath               bp, lp, ep, fp;

    if (h5zv_json_keys(j, at, keys) < 0 ||
        h5zv_json_list(j, at, "members", true, 0, H5ZV_TYPE_MEMBERS_MAX, &l) < 0)
        goto done;
    h5zv_jpath_key(&bp, at, "base");
    h5zv_jpath_key(&lp, at, "members");
    json_object_object_get_ex(j, "base", &bj);
    if (!bj)
        H5ZV_JSON_FAIL(bp.s, "missing (required)");
    if (type_from_json(bj, bp.s, depth + 1, &b) < 0)
        goto done;
    if (H5Tget_class(b) != H5T_INTEGER || (prec = H5Tget_precision(b)) > 64)
        H5ZV_JSON_FAIL(bp.s, "must be an integer type of at most 64 bits");
    sgn = H5Tget_sign(b) == H5T_SGN_2;
    n   = json_object_array_length(l);
    if (n == 0) /* HDF5 stores no enum without members (H5T_is_sensible); H5Tget_native_type leaks on one */
        H5ZV_JSON_FAIL(lp.s, "an enum type needs at least one member");
    if (!(r = calloc(n ? n : 1, sizeof *r)) || !(s = calloc(n ? n : 1, sizeof *s)))
        H5ZV_JSON_FAIL(at, "out of memory");
    for (size_t i = 0; i < n; i++) {
        struct json_object *e = json_object_array_get_idx(l, i), *nv, *vv;
        int64_t             sv;
        uint64_t            u;
        h5zv_jpath_idx(&ep, lp.s, i);
        if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 2)
            H5ZV_JSON_FAIL(ep.s, "must be a list [name, value]");
        nv = json_object_array_get_idx(e, 0);
        vv = json_object_array_get_idx(e, 1);
        if (!json_object_is_type(nv, json_type_string) || !json_object_get_string_len(nv) ||
            json_object_get_string_len(nv) > H5ZV_NAME_MAX ||
            strlen(json_object_get_string(nv)) != (size_t)json_object_get_string_len(nv))
            H5ZV_JSON_FAIL(h5zv_jpath_idx(&fp, ep.s, 0), "the name must be a non-empty string");
        if (!json_object_is_type(vv, json_type_int))
            H5ZV_JSON_FAIL(h5zv_jpath_idx(&fp, ep.s, 1), "the value must be an integer, not %s",
                           jtype_name(vv));
        sv = json_object_get_int64(vv);
        u  = json_object_get_uint64(vv);
        if (sgn) {
            int64_t hi = prec == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (prec - 1)) - 1), lo = -hi - 1;
            if (sv < 0 ? sv < lo : (u > (uint64_t)INT64_MAX || sv > hi))
                H5ZV_JSON_FAIL(h5zv_jpath_idx(&fp, ep.s, 1), "%s does not fit the %zu-bit signed base type",
                               json_object_to_json_string(vv), prec);
            u = (uint64_t)sv;
        }
        else if (sv < 0 || (prec < 64 && u >> prec))
            H5ZV_JSON_FAIL(h5zv_jpath_idx(&fp, ep.s, 1), "%s does not fit the %zu-bit unsigned base type",
                           json_object_to_json_string(vv), prec);
        r[i] = (member_ref){json_object_get_string(nv), u, 0, i, H5I_INVALID_HID};
    }
    /* unique values and names, checked on sorted copies (n log n: a document may list 65535) */
    memcpy(s, r, n * sizeof *r);
    qsort(s, n, sizeof *s, cmp_off);
    for (size_t i = 1; i < n; i++)
        if (s[i - 1].off == s[i].off) {
            size_t lo = s[i - 1].idx < s[i].idx ? s[i - 1].idx : s[i].idx;
            size_t hi = s[i - 1].idx < s[i].idx ? s[i].idx : s[i - 1].idx;
            H5ZV_JSON_FAIL(h5zv_jpath_idx(&fp, h5zv_jpath_idx(&ep, lp.s, hi), 1),
                           "the value is also member %zu's", lo);
        }
    if (check_unique_names(s, n, lp.s) < 0)
        goto done;
    if ((t = H5Tenum_create(b)) < 0)
        H5ZV_JSON_FAIL(at, "can't make an enum type");
    for (size_t i = 0; i < n; i++) {
        uint8_t buf[H5ZV_ATOMIC_SIZE_MAX + 8];
        memset(buf, 0, sizeof buf);
        memcpy(buf, &r[i].off, sizeof r[i].off);
        if (H5Tconvert(sgn ? H5T_NATIVE_LLONG : H5T_NATIVE_ULLONG, b, 1, buf, NULL, H5P_DEFAULT) < 0 ||
            H5Tenum_insert(t, r[i].name, buf) < 0)
            H5ZV_JSON_FAIL(h5zv_jpath_idx(&ep, lp.s, i), "HDF5 refused the member");
    }
    ret = t;
    t   = H5I_INVALID_HID;
done:
    free(r);
    free(s);
    h5zv_close(b);
    h5zv_close(t);
    return ret;
}

static hid_t
array_from_json(struct json_object *j, const char *at, int depth)
{
    static const char *const keys[] = {"class", "dims", "base", NULL};
    struct json_object      *l = NULL, *bj = NULL;
    hsize_t                  dims[H5S_MAX_RANK];
    uint64_t                 total;
    size_t                   nd;
    hid_t                    b = H5I_INVALID_HID, ret = H5I_INVALID_HID;
    h5zv_jpath               lp, ep;

    if (h5zv_json_keys(j, at, keys) < 0 || h5zv_json_list(j, at, "dims", true, 1, H5S_MAX_RANK, &l) < 0)
        goto done;
    h5zv_jpath_key(&lp, at, "dims");
    json_object_object_get_ex(j, "base", &bj);
    if (!bj)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&ep, at, "base"), "missing (required)");
    if (type_from_json(bj, h5zv_jpath_key(&ep, at, "base"), depth + 1, &b) < 0)
        goto done;
    nd    = json_object_array_length(l);
    total = H5Tget_size(b);
    for (size_t i = 0; i < nd; i++) {
        uint64_t d;
        if (h5zv_json_uint_val(json_object_array_get_idx(l, i), h5zv_jpath_idx(&ep, lp.s, i), 1,
                               H5ZV_TYPE_SIZE_MAX, &d) < 0)
            goto done;
        dims[i] = d;
        total *= d; /* both <= 2^30 at each step: no overflow before the check */
        if (total > H5ZV_TYPE_SIZE_MAX)
            H5ZV_JSON_FAIL(lp.s, "an array type of more than %u bytes", H5ZV_TYPE_SIZE_MAX);
    }
    if ((ret = H5Tarray_create2(b, (unsigned)nd, dims)) < 0)
        H5ZV_JSON_FAIL(at, "HDF5 refused the array type");
done:
    h5zv_close(b);
    return ret;
}

static hid_t
vlen_from_json(struct json_object *j, const char *at, int depth)
{
    static const char *const keys[] = {"class", "base", NULL};
    struct json_object      *bj     = NULL;
    hid_t                    b = H5I_INVALID_HID, ret = H5I_INVALID_HID;
    h5zv_jpath               bp;
    if (h5zv_json_keys(j, at, keys) < 0)
        goto done;
    h5zv_jpath_key(&bp, at, "base");
    json_object_object_get_ex(j, "base", &bj);
    if (!bj)
        H5ZV_JSON_FAIL(bp.s, "missing (required)");
    if (type_from_json(bj, bp.s, depth + 1, &b) < 0)
        goto done;
    if ((ret = H5Tvlen_create(b)) < 0)
        H5ZV_JSON_FAIL(at, "HDF5 refused the variable-length type");
done:
    h5zv_close(b);
    return ret;
}

static int
type_from_json(struct json_object *j, const char *at, int depth, hid_t *out)
{
    static const char *const classes[] = {"integer",  "float", "string", "bitfield", "opaque",
                                          "compound", "enum",  "array",  "vlen"};
    int                      c         = -1;
    hid_t                    t         = H5I_INVALID_HID;
    int                      ret       = -1;

    *out = H5I_INVALID_HID;
    if (depth > H5ZV_TYPE_DEPTH_MAX)
        H5ZV_JSON_FAIL(at, "datatypes nested deeper than %d levels", H5ZV_TYPE_DEPTH_MAX);
    if (json_object_is_type(j, json_type_string)) {
        const char *s = json_object_get_string(j);
        if (!strcmp(s, "str") || !strcmp(s, "str_utf8"))
            t = vlen_str(s[3] ? H5T_CSET_UTF8 : H5T_CSET_ASCII);
        else
            for (size_t i = 0; i < N_NAMED; i++)
                if (!strcmp(s, named_types[i].name)) {
                    t = H5Tcopy(named_types[i].id());
                    break;
                }
        if (t < 0)
            H5ZV_JSON_FAIL(at, "\"%.64s\" is not a datatype name", s);
    }
    else {
        if (h5zv_json_choice(j, at, "class", true, classes, (int)(sizeof classes / sizeof classes[0]), &c) <
            0)
            goto done;
        switch (c) {
            case 0:
                t = int_from_json(j, at, false);
                break;
            case 1:
                t = float_from_json(j, at);
                break;
            case 2:
                t = string_from_json(j, at);
                break;
            case 3:
                t = int_from_json(j, at, true);
                break;
            case 4:
                t = opaque_from_json(j, at);
                break;
            case 5:
                t = compound_from_json(j, at, depth);
                break;
            case 6:
                t = enum_from_json(j, at, depth);
                break;
            case 7:
                t = array_from_json(j, at, depth);
                break;
            default:
                t = vlen_from_json(j, at, depth);
                break;
        }
        if (t < 0)
            goto done;
    }
    if (H5Tget_size(t) > H5ZV_TYPE_SIZE_MAX)
        H5ZV_JSON_FAIL(at, "a datatype of %zu bytes (at most %u)", H5Tget_size(t), H5ZV_TYPE_SIZE_MAX);
    *out = t;
    t    = H5I_INVALID_HID;
    ret  = 0;
done:
    h5zv_close(t);
    return ret;
}

int
h5zv_type_from_json(struct json_object *j, const char *where, hid_t *out)
{
    return type_from_json(j, where, 0, out);
}

/* HDF5's predefined STD integer and IEEE float ids, as the library's globals (read as they are: the
 * connector runs inside an open library, so the H5open() call of each H5T_* macro is not needed): the
 * integers little-endian then big-endian, each by size (1, 2, 4, 8 bytes) signed then unsigned; then
 * f32 and f64 little-endian, then big-endian. */
static const hid_t *const std_ids[20] = {
    &H5T_STD_I8LE_g,  &H5T_STD_U8LE_g,   &H5T_STD_I16LE_g,  &H5T_STD_U16LE_g,  &H5T_STD_I32LE_g,
    &H5T_STD_U32LE_g, &H5T_STD_I64LE_g,  &H5T_STD_U64LE_g,  &H5T_STD_I8BE_g,   &H5T_STD_U8BE_g,
    &H5T_STD_I16BE_g, &H5T_STD_U16BE_g,  &H5T_STD_I32BE_g,  &H5T_STD_U32BE_g,  &H5T_STD_I64BE_g,
    &H5T_STD_U64BE_g, &H5T_IEEE_F32LE_g, &H5T_IEEE_F64LE_g, &H5T_IEEE_F32BE_g, &H5T_IEEE_F64BE_g};
#define N_STD 20

/* The index of `t` in std_ids, or -1. The last one found is tried first (a hint: checked against the
 * global, so a stale or torn one costs a scan, never a wrong answer). */
static int
std_index(hid_t t)
{
    static int hint;
    int        h = __atomic_load_n(&hint, __ATOMIC_RELAXED);
    if (t < 0)
        return -1;
    if (h >= 0 && h < N_STD && *std_ids[h] == t)
        return h;
    for (int i = 0; i < N_STD; i++)
        if (*std_ids[i] == t) {
            __atomic_store_n(&hint, i, __ATOMIC_RELAXED);
            return i;
        }
    return -1;
}

bool
h5zv_type_std_info(hid_t t, H5T_class_t *cls, size_t *size, bool *sign, bool *be)
{
    int i = std_index(t);
    if (i < 0)
        return false;
    if (cls)
        *cls = i < 16 ? H5T_INTEGER : H5T_FLOAT;
    if (size)
        *size = i < 16 ? (size_t)1 << (i % 8 / 2) : i % 2 ? 8 : 4;
    if (sign)
        *sign = i < 16 ? i % 2 == 0 : true;
    if (be)
        *be = i < 16 ? i >= 8 : i >= 18;
    return true;
}

hid_t
h5zv_type_std_of(hid_t t)
{
    /* The native integer and float types and the predefined type each equals on this platform, asked
     * once (the layouts are the platform's; the ids are read at every call, as in h5zv_type_std_info). */
    static const hid_t *const natives[] = {
        &H5T_NATIVE_SCHAR_g, &H5T_NATIVE_UCHAR_g,  &H5T_NATIVE_SHORT_g, &H5T_NATIVE_USHORT_g,
        &H5T_NATIVE_INT_g,   &H5T_NATIVE_UINT_g,   &H5T_NATIVE_LONG_g,  &H5T_NATIVE_ULONG_g,
        &H5T_NATIVE_LLONG_g, &H5T_NATIVE_ULLONG_g, &H5T_NATIVE_FLOAT_g, &H5T_NATIVE_DOUBLE_g,
        &H5T_NATIVE_INT8_g,  &H5T_NATIVE_UINT8_g,  &H5T_NATIVE_INT16_g, &H5T_NATIVE_UINT16_g,
        &H5T_NATIVE_INT32_g, &H5T_NATIVE_UINT32_g, &H5T_NATIVE_INT64_g, &H5T_NATIVE_UINT64_g};
    enum { NNAT = sizeof natives / sizeof natives[0] };
    static signed char std_of[NNAT]; /* index into std_ids, or -1 */
    static bool        known;

    if (h5zv_type_std_info(t, NULL, NULL, NULL, NULL))
        return t;
    for (size_t i = 0; i < NNAT; i++) {
        if (t != *natives[i])
            continue;
        if (!known) {
            for (size_t k = 0; k < NNAT; k++) {
                std_of[k] = -1;
                for (size_t s = 0; s < N_STD && std_of[k] < 0; s++)
                    if (H5Tequal(*natives[k], *std_ids[s]) > 0)
                        std_of[k] = (signed char)s;
            }
            known = true;
        }
        return std_of[i] >= 0 ? *std_ids[std_of[i]] : H5I_INVALID_HID;
    }
    return H5I_INVALID_HID;
}

hid_t
h5zv_type_named_std(struct json_object *j)
{
    const char *s = json_object_is_type(j, json_type_string) ? json_object_get_string(j) : NULL;
    for (size_t i = 0; s && i < N_NAMED; i++)
        if (!strcmp(s, named_types[i].name)) {
            hid_t t = named_types[i].id();
            return h5zv_type_std_info(t, NULL, NULL, NULL, NULL) ? t : H5I_INVALID_HID;
        }
    return H5I_INVALID_HID;
}

/* ---- values --------------------------------------------------------------------------------------- */
static bool
has_ptrs(hid_t t)
{
    H5T_class_t c = H5Tget_class(t);
    bool        r = false;
    if (c == H5T_VLEN || c == H5T_REFERENCE || (c == H5T_STRING && H5Tis_variable_str(t) > 0))
        return true;
    if (c == H5T_ARRAY || c == H5T_ENUM) {
        hid_t b = H5Tget_super(t);
        r       = b >= 0 && has_ptrs(b);
        h5zv_close(b);
    }
    else if (c == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t);
        for (int i = 0; i < n && !r; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            r       = m >= 0 && has_ptrs(m);
            h5zv_close(m);
        }
    }
    return r;
}

static bool
utf8_ok(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i], k;
        if (c == 0)
            return false;
        k = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 9;
        if (k == 9 || (k && (c == 0xc0 || c == 0xc1)) || i + k >= n + (k ? 0 : 1))
            return false;
        for (unsigned q = 1; q <= k; q++)
            if ((s[i + q] & 0xc0) != 0x80)
                return false;
        i += k + 1;
    }
    return true;
}

static struct json_object *
hex_of(const void *p, size_t n)
{
    static const char   dig[] = "0123456789abcdef";
    const uint8_t      *b     = p;
    char               *s     = malloc(2 * n + 1);
    struct json_object *o, *h;
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        s[2 * i]     = dig[b[i] >> 4];
        s[2 * i + 1] = dig[b[i] & 15];
    }
    s[2 * n] = '\0';
    h        = json_object_new_string_len(s, (int)(2 * n));
    free(s);
    o = json_object_new_object();
    json_object_object_add(o, "hex", h);
    return o;
}

/* Bytes of {"hex": "..."} (malloc'ed, *n) or NULL + error. */
static uint8_t *
hex_read(struct json_object *j, const char *at, size_t max, size_t *n)
{
    static const char *const keys[] = {"hex", NULL};
    const char              *s      = NULL;
    uint8_t                 *b = NULL, *ret = NULL;
    size_t                   len;
    h5zv_jpath               p;
    if (h5zv_json_keys(j, at, keys) < 0 || h5zv_json_str(j, at, "hex", true, 2 * max, &s) < 0)
        goto done;
    len = strlen(s);
    if (len % 2)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, "hex"), "an odd number of hex digits");
    if (!(b = malloc(len / 2 + 1)))
        H5ZV_JSON_FAIL(at, "out of memory");
    for (size_t i = 0; i < len; i++) {
        int c = s[i], v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, "hex"), "'%c' is not a lowercase hex digit", c);
        if (i % 2)
            b[i / 2] = (uint8_t)(b[i / 2] | v);
        else
            b[i / 2] = (uint8_t)(v << 4);
    }
    *n  = len / 2;
    ret = b;
    b   = NULL;
done:
    free(b);
    return ret;
}

/* Whether two values of atomic type `t` agree on the bits that carry the value (offset .. offset +
 * precision - 1); padding bits outside them are undefined in HDF5's conversions. */
static bool
same_bits(hid_t t, const uint8_t *a, const uint8_t *b)
{
    size_t      size = H5Tget_size(t), prec = H5Tget_precision(t);
    int         off = H5Tget_offset(t);
    H5T_order_t ord = H5Tget_order(t);
    if ((ord != H5T_ORDER_LE && ord != H5T_ORDER_BE) || off < 0 || (size_t)off + prec > 8 * size)
        return !memcmp(a, b, size);
    for (size_t k = (size_t)off; k < (size_t)off + prec; k++) {
        size_t byte = ord == H5T_ORDER_LE ? k / 8 : size - 1 - k / 8;
        if (((a[byte] ^ b[byte]) >> (k % 8)) & 1)
            return false;
    }
    return true;
}

/* 1: no exact natural form (the caller falls back to hex). */
static int value_to_json(hid_t t, const uint8_t *p, int depth, struct json_object **out);

/* A value in its natural form, or hex when it has none and no pointers. */
static int
node_to_json(hid_t t, const uint8_t *p, int depth, struct json_object **out)
{
    int rc = value_to_json(t, p, depth, out);
    if (rc == 1) {
        if (has_ptrs(t))
            H5ZV_GOTO_ERROR("can't store a value of this datatype as JSON");
        if (!(*out = hex_of(p, H5Tget_size(t))))
            H5ZV_GOTO_ERROR("out of memory");
        rc = 0;
    }
done:
    return rc;
}

/* An integer or enum value of `size` bytes as a JSON number (*out); 1 when it has none that says its bits
 * exactly (a base over 64 bits, padding or bits outside the precision set). */
static int
int_value_to_json(hid_t t, H5T_class_t c, size_t size, const uint8_t *p, struct json_object **out)
{
    uint8_t buf[H5ZV_ATOMIC_SIZE_MAX + 8], back[H5ZV_ATOMIC_SIZE_MAX + 8];
    hid_t   b  = H5I_INVALID_HID;
    hid_t   it = c == H5T_ENUM ? (b = H5Tget_super(t)) : t;
    bool    sgn;
    int     ret = -1;
    if (it < 0 || H5Tget_precision(it) > 64 || size > H5ZV_ATOMIC_SIZE_MAX) {
        ret = 1; /* through done: an enum's base id is closed */
        goto done;
    }
    sgn = H5Tget_sign(it) == H5T_SGN_2;
    memset(buf, 0, sizeof buf);
    memcpy(buf, p, size);
    if (H5Tconvert(it, sgn ? H5T_NATIVE_LLONG : H5T_NATIVE_ULLONG, 1, buf, NULL, H5P_DEFAULT) < 0)
        H5ZV_GOTO_ERROR("can't convert an integer value");
    if (sgn) {
        long long x;
        memcpy(&x, buf, sizeof x);
        *out = json_object_new_int64(x);
    }
    else {
        unsigned long long x;
        memcpy(&x, buf, sizeof x);
        *out = json_object_new_uint64(x);
    }
    /* padding bits or bits outside the precision set: not what the number says */
    memset(back, 0, sizeof back);
    memcpy(back, buf, 8);
    if (H5Tconvert(sgn ? H5T_NATIVE_LLONG : H5T_NATIVE_ULLONG, it, 1, back, NULL, H5P_DEFAULT) < 0 ||
        !same_bits(it, back, p)) {
        json_object_put(*out);
        *out = NULL;
        ret  = 1;
        goto done;
    }
    ret = 0;
done:
    h5zv_close(b);
    return ret;
}

/* True with the value in *d when `t` is the IEEE single or double float in little-endian order (on a
 * little-endian host) and the value at `p` is not a NaN: then it is exactly the double a C cast gives,
 * which is what H5Tconvert to H5T_NATIVE_DOUBLE and back gives, bit for bit (~5,000 instructions for
 * the two conversions and the bit comparison; an H5Tequal ~500). NaNs take the conversions (payloads). */
static bool
ieee_le_double(hid_t t, size_t size, const uint8_t *p, double *d)
{
    if (!H5ZV_HOST_LE || (size != 4 && size != 8))
        return false;
    if (size == 4) {
        float f;
        if (H5Tequal(t, H5T_IEEE_F32LE) <= 0)
            return false;
        memcpy(&f, p, sizeof f);
        *d = (double)f;
    }
    else {
        if (H5Tequal(t, H5T_IEEE_F64LE) <= 0)
            return false;
        memcpy(d, p, sizeof *d);
    }
    return !isnan(*d);
}

/* A float value of `size` bytes as a JSON number or "NaN" / "Infinity" / "-Infinity" (*out); 1 when no
 * double says its bits exactly (NaN payloads, wider floats). */
static int
float_value_to_json(hid_t t, size_t size, const uint8_t *p, struct json_object **out)
{
    uint8_t buf[H5ZV_ATOMIC_SIZE_MAX + 8], back[H5ZV_ATOMIC_SIZE_MAX + 8];
    double  d;
    if (size > H5ZV_ATOMIC_SIZE_MAX)
        return 1;
    if (!ieee_le_double(t, size, p, &d)) { /* else the usual float or double: no conversions */
        memset(buf, 0, sizeof buf);
        memcpy(buf, p, size);
        if (H5Tconvert(t, H5T_NATIVE_DOUBLE, 1, buf, NULL, H5P_DEFAULT) < 0)
            return 1;
        memcpy(&d, buf, sizeof d);
        memset(back, 0, sizeof back);
        memcpy(back, &d, sizeof d);
        if (H5Tconvert(H5T_NATIVE_DOUBLE, t, 1, back, NULL, H5P_DEFAULT) < 0 || !same_bits(t, back, p))
            return 1; /* not exact as a double (NaN payloads, wider floats) */
    }
    if (d != d) {
        /* "NaN" is the quiet NaN of positive sign; other NaNs (payloads, sign) keep their bytes */
        double q = NAN;
        memset(back, 0, sizeof back);
        memcpy(back, &q, sizeof q);
        if (H5Tconvert(H5T_NATIVE_DOUBLE, t, 1, back, NULL, H5P_DEFAULT) < 0 || !same_bits(t, back, p))
            return 1;
        *out = json_object_new_string("NaN");
    }
    else if (d > 1.7976931348623157e308)
        *out = json_object_new_string("Infinity");
    else if (d < -1.7976931348623157e308)
        *out = json_object_new_string("-Infinity");
    else
        *out = json_object_new_double(d);
    return 0;
}

/* A string value as a JSON string (*out), {"hex": ...} for a variable-length one that is not UTF-8, or
 * JSON null (*null) for a null pointer; 1 when a fixed-length one is not UTF-8. */
static int
string_value_to_json(hid_t t, size_t size, const uint8_t *p, struct json_object **out, bool *null)
{
    if (H5Tis_variable_str(t) > 0) {
        const char *s;
        memcpy(&s, p, sizeof s);
        if (!s)
            *null = true;
        else if (utf8_ok((const unsigned char *)s, strlen(s)))
            *out = json_object_new_string(s);
        else
            *out = hex_of(s, strlen(s));
    }
    else {
        size_t n = size;
        while (n > 0 && p[n - 1] == 0)
            n--;
        if (!utf8_ok(p, n))
            return 1;
        *out = json_object_new_string_len((const char *)p, (int)n);
    }
    return 0;
}

/* A compound value as the list of its members' values (*out, left for the caller to free on error). */
static int
compound_value_to_json(hid_t t, const uint8_t *p, int depth, struct json_object **out)
{
    int n   = H5Tget_nmembers(t);
    int ret = -1;
    *out    = json_object_new_array();
    for (int i = 0; i < n; i++) {
        hid_t               m = H5Tget_member_type(t, (unsigned)i);
        struct json_object *v = NULL;
        int                 rc;
        if (m < 0)
            H5ZV_GOTO_ERROR("can't read a compound member's type");
        rc = node_to_json(m, p + H5Tget_member_offset(t, (unsigned)i), depth + 1, &v);
        h5zv_close(m);
        if (rc < 0)
            goto done;
        json_object_array_add(*out, v);
    }
    ret = 0;
done:
    return ret;
}

/* An array value of `size` bytes as the list of its elements' values (*out, left for the caller to free
 * on error). */
static int
array_value_to_json(hid_t t, size_t size, const uint8_t *p, int depth, struct json_object **out)
{
    hid_t  b   = H5I_INVALID_HID;
    size_t bs  = 0, n;
    int    ret = -1;
    if ((b = H5Tget_super(t)) < 0 || !(bs = H5Tget_size(b)))
        H5ZV_GOTO_ERROR("can't read an array type's base");
    n    = size / bs;
    *out = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        struct json_object *v = NULL;
        if (node_to_json(b, p + i * bs, depth + 1, &v) < 0)
            goto done;
        json_object_array_add(*out, v);
    }
    ret = 0;
done:
    h5zv_close(b);
    return ret;
}

/* A variable-length sequence as the list of its elements' values (*out, left for the caller to free on
 * error). */
static int
vlen_value_to_json(hid_t t, const uint8_t *p, int depth, struct json_object **out)
{
    hvl_t  vl;
    hid_t  b   = H5I_INVALID_HID;
    size_t bs  = 0;
    int    ret = -1;
    memcpy(&vl, p, sizeof vl);
    if ((b = H5Tget_super(t)) < 0 || !(bs = H5Tget_size(b)))
        H5ZV_GOTO_ERROR("can't read a variable-length type's base");
    if (vl.len > H5ZV_VLEN_FILL_MAX || (vl.len && !vl.p))
        H5ZV_GOTO_ERROR("can't store a variable-length value of %zu elements", vl.len);
    *out = json_object_new_array();
    for (size_t i = 0; i < vl.len; i++) {
        struct json_object *v = NULL;
        if (node_to_json(b, (const uint8_t *)vl.p + i * bs, depth + 1, &v) < 0)
            goto done;
        json_object_array_add(*out, v);
    }
    ret = 0;
done:
    h5zv_close(b);
    return ret;
}

/* A value of type `t` at `p` in its natural JSON form (*out; NULL for JSON null), by its class's helper
 * above; 1 when it has none (the caller falls back to hex), -1 with an error pushed. */
static int
value_to_json(hid_t t, const uint8_t *p, int depth, struct json_object **out)
{
    H5T_class_t c    = H5Tget_class(t);
    size_t      size = H5Tget_size(t);
    bool        null = false; /* JSON null is a NULL json_object */
    int         rc   = 0;
    int         ret  = -1;

    *out = NULL;
    if (depth > H5ZV_TYPE_DEPTH_MAX)
        H5ZV_GOTO_ERROR("can't store a value nested deeper than %d levels", H5ZV_TYPE_DEPTH_MAX);
    switch (c) {
        case H5T_INTEGER:
        case H5T_ENUM:
            rc = int_value_to_json(t, c, size, p, out);
            break;
        case H5T_FLOAT:
            rc = float_value_to_json(t, size, p, out);
            break;
        case H5T_STRING:
            rc = string_value_to_json(t, size, p, out, &null);
            break;
        case H5T_COMPOUND:
            rc = compound_value_to_json(t, p, depth, out);
            break;
        case H5T_ARRAY:
            rc = array_value_to_json(t, size, p, depth, out);
            break;
        case H5T_VLEN:
            rc = vlen_value_to_json(t, p, depth, out);
            break;
        case H5T_REFERENCE: {
            size_t i;
            for (i = 0; i < size && !p[i]; i++)
                ;
            if (i < size)
                H5ZV_GOTO_ERROR("can't store a reference other than a null one as JSON");
            null = true;
            break;
        }
        default:
            rc = 1; /* bitfields, opaque, time: their bytes */
    }
    if (rc != 0) {
        ret = rc;
        goto done;
    }
    if (!*out && !null)
        H5ZV_GOTO_ERROR("out of memory");
    ret = 0;
done:
    if (ret < 0) {
        json_object_put(*out);
        *out = NULL;
    }
    return ret;
}

int
h5zv_value_to_json(hid_t type, const void *elem, struct json_object **out)
{
    return node_to_json(type, elem, 0, out);
}

static int value_from_json(struct json_object *j, hid_t t, const char *at, int depth, uint8_t *p);

/* A value given as {"hex": ...} into `p`: the bytes of a value of `size` bytes, or a variable-length
 * string's (new, NUL-free); refused for other types holding pointers. */
static int
hex_value_from_json(struct json_object *j, hid_t t, H5T_class_t c, size_t size, const char *at, uint8_t *p)
{
    bool     vstr = c == H5T_STRING && H5Tis_variable_str(t) > 0;
    uint8_t *raw  = NULL;
    size_t   nraw = 0;
    int      ret  = -1;
    if (!vstr && has_ptrs(t))
        H5ZV_JSON_FAIL(at, "a value of this datatype can't be given as {\"hex\": ...}");
    if (!(raw = hex_read(j, at, vstr ? H5ZV_TYPE_SIZE_MAX : size, &nraw)))
        goto done;
    if (vstr) {
        char *s;
        if (memchr(raw, 0, nraw))
            H5ZV_JSON_FAIL(at, "a string holding a NUL byte");
        if (!(s = malloc(nraw + 1)))
            H5ZV_JSON_FAIL(at, "out of memory");
        memcpy(s, raw, nraw);
        s[nraw] = '\0';
        memcpy(p, &s, sizeof s);
    }
    else {
        if (nraw != size)
            H5ZV_JSON_FAIL(at, "%zu bytes for a value of %zu", nraw, size);
        memcpy(p, raw, size);
    }
    ret = 0;
done:
    free(raw);
    return ret;
}

/* A JSON integer into an integer or enum value of `size` bytes at `p`, range-checked against the
 * (base) type's precision and sign. */
static int
int_value_from_json(struct json_object *j, hid_t t, H5T_class_t c, size_t size, const char *at, uint8_t *p)
{
    uint8_t  buf[H5ZV_ATOMIC_SIZE_MAX + 8];
    hid_t    b  = H5I_INVALID_HID;
    hid_t    it = c == H5T_ENUM ? (b = H5Tget_super(t)) : t;
    size_t   prec;
    bool     sgn;
    int64_t  s;
    uint64_t u;
    int      ret = -1;
    if (it < 0 || (prec = H5Tget_precision(it)) > 64 || size > H5ZV_ATOMIC_SIZE_MAX)
        H5ZV_JSON_FAIL(at, "a value of this integer type must be given as {\"hex\": ...}");
    if (!json_object_is_type(j, json_type_int))
        H5ZV_JSON_FAIL(at, "must be an integer, not %s", jtype_name(j));
    sgn = H5Tget_sign(it) == H5T_SGN_2;
    s   = json_object_get_int64(j);
    u   = json_object_get_uint64(j);
    if (sgn) {
        int64_t hi = prec == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (prec - 1)) - 1), lo = -hi - 1;
        if (s < 0 ? s < lo : (u > (uint64_t)INT64_MAX || s > hi))
            H5ZV_JSON_FAIL(at, "%s is out of range for a signed integer of %zu bits",
                           json_object_to_json_string(j), prec);
        u = (uint64_t)s;
    }
    else if (s < 0 || (prec < 64 && u >> prec))
        H5ZV_JSON_FAIL(at, "%s is out of range for an unsigned integer of %zu bits",
                       json_object_to_json_string(j), prec);
    memset(buf, 0, sizeof buf);
    memcpy(buf, &u, sizeof u);
    if (H5Tconvert(sgn ? H5T_NATIVE_LLONG : H5T_NATIVE_ULLONG, it, 1, buf, NULL, H5P_DEFAULT) < 0)
        H5ZV_JSON_FAIL(at, "can't convert the value");
    memcpy(p, buf, size);
    ret = 0;
done:
    h5zv_close(b);
    return ret;
}

/* A JSON number or "NaN" / "Infinity" / "-Infinity" into a float value of `size` bytes at `p`; refused
 * unless the float holds it exactly. */
static int
float_value_from_json(struct json_object *j, hid_t t, size_t size, const char *at, uint8_t *p)
{
    uint8_t buf[H5ZV_ATOMIC_SIZE_MAX + 8];
    double  d, back;
    int     ret = -1;
    if (size > H5ZV_ATOMIC_SIZE_MAX)
        H5ZV_JSON_FAIL(at, "a value of this float type must be given as {\"hex\": ...}");
    if (json_object_is_type(j, json_type_string)) {
        const char *s = json_object_get_string(j);
        if (!strcmp(s, "NaN"))
            d = NAN;
        else if (!strcmp(s, "Infinity"))
            d = INFINITY;
        else if (!strcmp(s, "-Infinity"))
            d = -INFINITY;
        else
            H5ZV_JSON_FAIL(at, "\"%.32s\" is not a number (only \"NaN\", \"Infinity\", \"-Infinity\")", s);
    }
    else if (json_object_is_type(j, json_type_double) || json_object_is_type(j, json_type_int))
        d = json_object_get_double(j);
    else
        H5ZV_JSON_FAIL(at, "must be a number, not %s", jtype_name(j));
    memset(buf, 0, sizeof buf);
    memcpy(buf, &d, sizeof d);
    if (H5Tconvert(H5T_NATIVE_DOUBLE, t, 1, buf, NULL, H5P_DEFAULT) < 0)
        H5ZV_JSON_FAIL(at, "can't convert the value");
    memcpy(p, buf, size);
    if (H5Tconvert(t, H5T_NATIVE_DOUBLE, 1, buf, NULL, H5P_DEFAULT) < 0)
        H5ZV_JSON_FAIL(at, "can't convert the value");
    memcpy(&back, buf, sizeof back);
    if (back != d && !(back != back && d != d))
        H5ZV_JSON_FAIL(at, "%s is not exactly a value of the %zu-byte float type",
                       json_object_to_json_string(j), size);
    ret = 0;
done:
    return ret;
}

/* A JSON string (or null, for a variable-length string: a null pointer) into a string value at `p`: a
 * new copy for a variable-length string, NUL-padded bytes for a fixed-length one of `size` bytes. */
static int
string_value_from_json(struct json_object *j, hid_t t, size_t size, const char *at, uint8_t *p)
{
    int ret = -1;
    if (H5Tis_variable_str(t) > 0) {
        char *s = NULL;
        if (json_object_is_type(j, json_type_string)) {
            size_t n = (size_t)json_object_get_string_len(j);
            if (strlen(json_object_get_string(j)) != n)
                H5ZV_JSON_FAIL(at, "a string holding a NUL byte");
            if (!(s = strdup(json_object_get_string(j))))
                H5ZV_JSON_FAIL(at, "out of memory");
        }
        else if (!json_object_is_type(j, json_type_null))
            H5ZV_JSON_FAIL(at, "must be a string or null, not %s", jtype_name(j));
        memcpy(p, &s, sizeof s);
    }
    else {
        size_t n;
        if (!json_object_is_type(j, json_type_string))
            H5ZV_JSON_FAIL(at, "must be a string, not %s", jtype_name(j));
        n = (size_t)json_object_get_string_len(j);
        if (n > size)
            H5ZV_JSON_FAIL(at, "a string of %zu bytes for a string type of %zu", n, size);
        memcpy(p, json_object_get_string(j), n);
        memset(p + n, 0, size - n);
    }
    ret = 0;
done:
    return ret;
}

/* A list of member values into a compound value at `p`, member by member. */
static int
compound_value_from_json(struct json_object *j, hid_t t, const char *at, int depth, uint8_t *p)
{
    int        n = H5Tget_nmembers(t);
    h5zv_jpath ep;
    int        ret = -1;
    if (!json_object_is_type(j, json_type_array) || json_object_array_length(j) != (size_t)n)
        H5ZV_JSON_FAIL(at, "must be a list of the %d member values", n);
    for (int i = 0; i < n; i++) {
        hid_t m = H5Tget_member_type(t, (unsigned)i);
        int   rc;
        if (m < 0)
            H5ZV_JSON_FAIL(at, "can't read a compound member's type");
        rc = value_from_json(json_object_array_get_idx(j, (size_t)i), m, h5zv_jpath_idx(&ep, at, (size_t)i),
                             depth + 1, p + H5Tget_member_offset(t, (unsigned)i));
        h5zv_close(m);
        if (rc < 0)
            goto done;
    }
    ret = 0;
done:
    return ret;
}

/* A list of the elements into an array value of `size` bytes at `p`. */
static int
array_value_from_json(struct json_object *j, hid_t t, size_t size, const char *at, int depth, uint8_t *p)
{
    hid_t      b  = H5I_INVALID_HID;
    size_t     bs = 0, n;
    h5zv_jpath ep;
    int        ret = -1;
    if ((b = H5Tget_super(t)) < 0 || !(bs = H5Tget_size(b)))
        H5ZV_JSON_FAIL(at, "can't read the array type's base");
    n = size / bs;
    if (!json_object_is_type(j, json_type_array) || json_object_array_length(j) != n)
        H5ZV_JSON_FAIL(at, "must be a list of the array's %zu elements", n);
    for (size_t i = 0; i < n; i++)
        if (value_from_json(json_object_array_get_idx(j, i), b, h5zv_jpath_idx(&ep, at, i), depth + 1,
                            p + i * bs) < 0)
            goto done;
    ret = 0;
done:
    h5zv_close(b);
    return ret;
}

/* A list into a variable-length sequence at `p` (its elements new; stored at `p` before they are read, so
 * what they allocate is reclaimed with the value if one fails). */
static int
vlen_value_from_json(struct json_object *j, hid_t t, const char *at, int depth, uint8_t *p)
{
    hvl_t      vl = {0, NULL};
    hid_t      b  = H5I_INVALID_HID;
    size_t     bs = 0, n;
    h5zv_jpath ep;
    int        ret = -1;
    if ((b = H5Tget_super(t)) < 0 || !(bs = H5Tget_size(b)))
        H5ZV_JSON_FAIL(at, "can't read the variable-length type's base");
    if (!json_object_is_type(j, json_type_array))
        H5ZV_JSON_FAIL(at, "must be a list, not %s", jtype_name(j));
    n = json_object_array_length(j);
    if (n > H5ZV_VLEN_FILL_MAX || n * bs > H5ZV_TYPE_SIZE_MAX)
        H5ZV_JSON_FAIL(at, "a sequence of %zu elements is too long", n);
    if (n) {
        if (!(vl.p = calloc(n, bs)))
            H5ZV_JSON_FAIL(at, "out of memory");
        vl.len = n;
    }
    /* stored first: what the elements allocate is reclaimed with the value if one fails */
    memcpy(p, &vl, sizeof vl);
    for (size_t i = 0; i < n; i++)
        if (value_from_json(json_object_array_get_idx(j, i), b, h5zv_jpath_idx(&ep, at, i), depth + 1,
                            (uint8_t *)vl.p + i * bs) < 0)
            goto done;
    ret = 0;
done:
    h5zv_close(b);
    return ret;
}

/* The JSON value `j` into the value of type `t` at `p` (`at` names it in errors): {"hex": ...} for any
 * type without pointers, else by its class's helper above. */
static int
value_from_json(struct json_object *j, hid_t t, const char *at, int depth, uint8_t *p)
{
    H5T_class_t c    = H5Tget_class(t);
    size_t      size = H5Tget_size(t);
    int         ret  = -1;

    if (depth > H5ZV_TYPE_DEPTH_MAX)
        H5ZV_JSON_FAIL(at, "values nested deeper than %d levels", H5ZV_TYPE_DEPTH_MAX);
    if (json_object_is_type(j, json_type_object)) {
        ret = hex_value_from_json(j, t, c, size, at, p);
        goto done;
    }
    switch (c) {
        case H5T_INTEGER:
        case H5T_ENUM:
            ret = int_value_from_json(j, t, c, size, at, p);
            break;
        case H5T_FLOAT:
            ret = float_value_from_json(j, t, size, at, p);
            break;
        case H5T_STRING:
            ret = string_value_from_json(j, t, size, at, p);
            break;
        case H5T_COMPOUND:
            ret = compound_value_from_json(j, t, at, depth, p);
            break;
        case H5T_ARRAY:
            ret = array_value_from_json(j, t, size, at, depth, p);
            break;
        case H5T_VLEN:
            ret = vlen_value_from_json(j, t, at, depth, p);
            break;
        case H5T_REFERENCE:
            if (!json_object_is_type(j, json_type_null))
                H5ZV_JSON_FAIL(at, "a reference value must be null (a null reference)");
            memset(p, 0, size);
            ret = 0;
            break;
        default:
            H5ZV_JSON_FAIL(at, "a value of this datatype must be given as {\"hex\": ...}");
    }
done:
    return ret;
}

int
h5zv_value_from_json(struct json_object *j, hid_t type, const char *where, void *elem)
{
    return value_from_json(j, type, where, 0, elem);
}
