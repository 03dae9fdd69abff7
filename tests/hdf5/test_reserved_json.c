/*
 * test_reserved_json.c: the JSON form of the reserved object `_h5zarr` (vol/reserved.h,
 * vol/type_json.c, vol/plist_json.c; docs/FORMAT.md "The reserved object `_h5zarr`"). Every
 * datatype class and every persisted creation property goes to JSON, through its text, and back, and
 * must come back equal (H5Tequal; property by property for lists, fill values by their bytes). Then
 * corrupted documents, field by field (wrong JSON type, out-of-range value, missing required key,
 * unknown key, oversized nesting), must fail cleanly with a message naming the document and the field.
 *
 * The two connector files are compiled into this program with the connector's error functions
 * (vol/err.c: they need only HDF5 and json-c), so the tests call them directly instead of through a
 * store.
 */
#include "runner.h"

#include <hdf5.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h5test.h"

#include "../../vol/err.c"
#include "../../vol/plist_json.c"
#include "../../vol/type_json.c"

/* ---- helpers ------------------------------------------------------------------------------------------ */
#define WHERE  "'/g/d/zarr.json' _h5zarr.type"
#define DWHERE "'/g/d/zarr.json' _h5zarr.dcpl"

static char errbuf[4096];

/* The messages on the error stack (errbuf), then the stack cleared. */
static const char *
errors(void)
{
    errbuf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, h5t_collect_msg, errbuf);
    H5Eclear2(H5E_DEFAULT);
    return errbuf;
}

/* `t` to JSON, to text, parsed again, back: equal to `t`. *text (optional) gets the JSON text. */
static int
type_rt(hid_t t, char *text, size_t ntext)
{
    struct json_object *j    = NULL, *k;
    hid_t               back = H5I_INVALID_HID;
    ASSERT(h5zv_type_to_json(t, &j) == 0 && j);
    k = json_tokener_parse(json_object_to_json_string(j));
    if (text)
        snprintf(text, ntext, "%s", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    json_object_put(j);
    ASSERT(k);
    if (h5zv_type_from_json(k, WHERE, &back) != 0)
        FAILF("from_json failed: %s", errors());
    json_object_put(k);
    if (H5Tequal(t, back) <= 0)
        FAILF("type came back different (%s)", text ? text : "");
    /* H5Tequal overlooks some fields (character sets and padding of variable-length strings): the type
     * read back must also describe itself exactly as the original did */
    ASSERT(h5zv_type_to_json(back, &j) == 0);
    k = json_tokener_parse(json_object_to_json_string(j));
    {
        struct json_object *j0 = NULL;
        ASSERT(h5zv_type_to_json(t, &j0) == 0);
        ASSERT_STR(json_object_to_json_string(j), json_object_to_json_string(j0));
        json_object_put(j0);
    }
    json_object_put(j);
    json_object_put(k);
    H5Tclose(back);
    return 0;
}

/* A document (JSON text) that must fail as a type, with `needle` in the messages. */
static int
type_bad(const char *doc, const char *needle)
{
    struct json_object *j = json_tokener_parse(doc);
    hid_t               t = H5I_INVALID_HID;
    int                 rc;
    if (!j && strcmp(doc, "null"))
        FAILF("test document does not parse: %s", doc);
    H5E_BEGIN_TRY { rc = h5zv_type_from_json(j, WHERE, &t); }
    H5E_END_TRY
    json_object_put(j);
    if (rc == 0 || t >= 0)
        FAILF("accepted: %s", doc);
    if (!strstr(errors(), needle))
        FAILF("for %s: expected \"%s\" in \"%s\"", doc, needle, errbuf);
    return 0;
}

static hid_t
f16_like_type_c(hid_t base)
{
    /* as vol/type.c makes IEEE binary16 */
    hid_t t = H5Tcopy(base);
    H5Tset_fields(t, 15, 10, 5, 0, 10);
    H5Tset_precision(t, 16);
    H5Tset_size(t, 2);
    H5Tset_ebias(t, 15);
    return t;
}

static hid_t
str_type(size_t size, H5T_str_t pad, H5T_cset_t cset)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, size);
    H5Tset_strpad(t, pad);
    H5Tset_cset(t, cset);
    return t;
}

/* ---- datatypes ---------------------------------------------------------------------------------------- */
static int
test_type_short_names(void)
{
    char text[256];
    /* every predefined type of the table goes by its name and comes back as itself */
    for (size_t i = 0; i < N_NAMED; i++) {
        hid_t t = H5Tcopy(named_types[i].id());
        char  want[32];
        ASSERT(type_rt(t, text, sizeof text) == 0);
        snprintf(want, sizeof want, "\"%s\"", named_types[i].name);
        ASSERT_STR(text, want);
        H5Tclose(t);
    }
    {
        hid_t t = str_type(H5T_VARIABLE, H5T_STR_NULLTERM, H5T_CSET_UTF8);
        ASSERT(type_rt(t, text, sizeof text) == 0);
        ASSERT_STR(text, "\"str_utf8\"");
        H5Tclose(t);
        t = str_type(H5T_VARIABLE, H5T_STR_NULLTERM, H5T_CSET_ASCII);
        ASSERT(type_rt(t, text, sizeof text) == 0);
        ASSERT_STR(text, "\"str\"");
        H5Tclose(t);
    }
    /* the connector's own float16 is HDF5's IEEE binary16 */
    {
        hid_t t = f16_like_type_c(H5T_IEEE_F32LE);
        ASSERT(type_rt(t, text, sizeof text) == 0);
        ASSERT_STR(text, "\"f2<\"");
        H5Tclose(t);
    }
    /* native types are the standard ones of this host */
    {
        hid_t t = H5Tcopy(H5T_NATIVE_INT);
        ASSERT(type_rt(t, text, sizeof text) == 0);
        ASSERT_STR(text, "\"i4<\"");
        H5Tclose(t);
    }
    return 0;
}

static int
test_type_atomic_objects(void)
{
    char  text[1024];
    hid_t t;

    /* a 3-byte big-endian unsigned integer of 20 bits at offset 2, padding ones */
    t = H5Tcopy(H5T_STD_U32BE);
    H5Tset_size(t, 3);
    H5Tset_precision(t, 20);
    H5Tset_offset(t, 2);
    H5Tset_pad(t, H5T_PAD_ONE, H5T_PAD_BACKGROUND);
    ASSERT(type_rt(t, text, sizeof text) == 0);
    ASSERT(strstr(text, "\"class\":\"integer\"") && strstr(text, "\"precision\":20") &&
           strstr(text, "\"offset\":2") && strstr(text, "\"signed\":false"));
    H5Tclose(t);
    /* a 16-byte signed integer */
    t = H5Tcopy(H5T_STD_I64LE);
    H5Tset_size(t, 16);
    H5Tset_precision(t, 128);
    ASSERT(type_rt(t, text, sizeof text) == 0);
    H5Tclose(t);
    /* a 24-bit bitfield */
    t = H5Tcopy(H5T_STD_B32LE);
    H5Tset_precision(t, 24);
    ASSERT(type_rt(t, text, sizeof text) == 0);
    ASSERT(strstr(text, "\"class\":\"bitfield\""));
    H5Tclose(t);
    /* floats: a big-endian float16, a 24-bit float with an offset and msbset normalization, long double */
    t = f16_like_type_c(H5T_IEEE_F32BE);
    ASSERT(type_rt(t, text, sizeof text) == 0);
    ASSERT_STR(text, "\"f2>\"");
    H5Tclose(t);
    t = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(t, 23, 16, 7, 0, 16);
    H5Tset_precision(t, 24);
    H5Tset_offset(t, 8);
    H5Tset_ebias(t, 63);
    H5Tset_norm(t, H5T_NORM_MSBSET);
    H5Tset_inpad(t, H5T_PAD_ONE);
    ASSERT(type_rt(t, text, sizeof text) == 0);
    ASSERT(strstr(text, "\"exponent\":[16,7]") && strstr(text, "\"norm\":\"msbset\"") &&
           strstr(text, "\"ebias\":63"));
    H5Tclose(t);
    t = H5Tcopy(H5T_NATIVE_LDOUBLE);
    ASSERT(type_rt(t, text, sizeof text) == 0);
    H5Tclose(t);
    t = H5Tcopy(H5T_VAX_F64);
    ASSERT(type_rt(t, text, sizeof text) == 0);
    ASSERT(strstr(text, "\"order\":\"vax\""));
    H5Tclose(t);
    /* strings */
    t = str_type(10, H5T_STR_NULLPAD, H5T_CSET_UTF8);
    ASSERT(type_rt(t, text, sizeof text) == 0);
    ASSERT_STR(text, "{\"class\":\"string\",\"size\":10,\"pad\":\"nullpad\",\"cset\":\"utf8\"}");
    H5Tclose(t);
    t = str_type(3, H5T_STR_SPACEPAD, H5T_CSET_ASCII);
    ASSERT(type_rt(t, text, sizeof text) == 0);
    H5Tclose(t);
    t = str_type(H5T_VARIABLE, H5T_STR_SPACEPAD, H5T_CSET_UTF8);
    ASSERT(type_rt(t, text, sizeof text) == 0);
    ASSERT(strstr(text, "\"size\":\"variable\""));
    H5Tclose(t);
    t = str_type(1, H5T_STR_NULLTERM, H5T_CSET_ASCII);
    ASSERT(type_rt(t, text, sizeof text) == 0);
    H5Tclose(t);
    /* opaque, with and without a tag */
    t = H5Tcreate(H5T_OPAQUE, 7);
    ASSERT(type_rt(t, text, sizeof text) == 0);
    ASSERT_STR(text, "{\"class\":\"opaque\",\"size\":7}");
    H5Tset_tag(t, "pixels/rgb");
    ASSERT(type_rt(t, text, sizeof text) == 0);
    ASSERT(strstr(text, "\"tag\":\"pixels\\/rgb\"") || strstr(text, "\"tag\":\"pixels/rgb\""));
    H5Tclose(t);
    return 0;
}

static int
test_type_composites(void)
{
    char    text[4096];
    hid_t   e8, e64, eu, cmp, inner, arr, vl, vlvl, a2;
    hsize_t d2[2] = {2, 3}, d1[1] = {4};

    /* enums: values exact as integers, the extremes of 64-bit bases included */
    e8 = H5Tenum_create(H5T_NATIVE_SCHAR);
    for (int i = -2; i <= 2; i++) {
        signed char v    = (signed char)i;
        char        n[8] = "M0";
        n[1]             = (char)('2' + i);
        H5Tenum_insert(e8, n, &v);
    }
    ASSERT(type_rt(e8, text, sizeof text) == 0);
    ASSERT(strstr(text, "[\"M0\",-2]"));
    e64 = H5Tenum_create(H5T_NATIVE_LLONG);
    {
        long long a = INT64_MIN, b = INT64_MAX, c = 0;
        H5Tenum_insert(e64, "MIN", &a);
        H5Tenum_insert(e64, "MAX", &b);
        H5Tenum_insert(e64, "ZERO", &c);
    }
    ASSERT(type_rt(e64, text, sizeof text) == 0);
    ASSERT(strstr(text, "[\"MIN\",-9223372036854775808]") && strstr(text, "[\"MAX\",9223372036854775807]"));
    eu = H5Tenum_create(H5T_STD_U64BE);
    {
        /* H5Tenum_insert takes the value in the base type's byte order */
        unsigned long long m = UINT64_MAX, one = 1;
        uint8_t            be[8];
        H5Tenum_insert(eu, "ALL", &m);
        for (int i = 0; i < 8; i++)
            be[i] = (uint8_t)(one >> (8 * (7 - i)));
        H5Tenum_insert(eu, "ONE", be);
    }
    ASSERT(type_rt(eu, text, sizeof text) == 0);
    ASSERT(strstr(text, "[\"ALL\",18446744073709551615]") && strstr(text, "[\"ONE\",1]"));

    /* compounds with nested compounds, arrays, enums, strings and vlens; padding kept */
    inner = H5Tcreate(H5T_COMPOUND, 16);
    H5Tinsert(inner, "x", 0, H5T_STD_I32BE);
    H5Tinsert(inner, "y", 8, H5T_IEEE_F64LE);
    arr  = H5Tarray_create2(inner, 2, d2);
    a2   = H5Tarray_create2(H5T_NATIVE_FLOAT, 1, d1);
    vl   = H5Tvlen_create(H5T_STD_I16LE);
    vlvl = H5Tvlen_create(vl);
    cmp  = H5Tcreate(H5T_COMPOUND, 200);
    H5Tinsert(cmp, "e", 0, e8);
    H5Tinsert(cmp, "in", 8, inner);
    H5Tinsert(cmp, "grid", 24, arr);
    H5Tinsert(cmp, "f", 120, a2);
    {
        hid_t s = str_type(H5T_VARIABLE, H5T_STR_NULLTERM, H5T_CSET_UTF8);
        H5Tinsert(cmp, "name", 136, s);
        H5Tclose(s);
    }
    H5Tinsert(cmp, "seq", 144, vlvl);
    H5Tinsert(cmp, "r", 160, H5T_STD_REF_OBJ);
    ASSERT(type_rt(cmp, text, sizeof text) == 0);
    ASSERT(strstr(text, "{\"name\":\"grid\",\"offset\":24,\"type\":{\"class\":\"array\",\"dims\":[2,3],"));
    ASSERT(type_rt(arr, NULL, 0) == 0);
    ASSERT(type_rt(vlvl, text, sizeof text) == 0);
    ASSERT_STR(text, "{\"class\":\"vlen\",\"base\":{\"class\":\"vlen\",\"base\":\"i2<\"}}");
    /* an empty compound */
    {
        hid_t z = H5Tcreate(H5T_COMPOUND, 4);
        ASSERT(type_rt(z, text, sizeof text) == 0);
        ASSERT_STR(text, "{\"class\":\"compound\",\"size\":4,\"members\":[]}");
        H5Tclose(z);
    }
    H5Tclose(cmp);
    H5Tclose(vlvl);
    H5Tclose(vl);
    H5Tclose(a2);
    H5Tclose(arr);
    H5Tclose(inner);
    H5Tclose(eu);
    H5Tclose(e64);
    H5Tclose(e8);
    return 0;
}

static int
test_type_to_json_refuses(void)
{
    /* deeper than the bound: refused when written, never a document that can't be read back */
    hid_t               t = H5Tcopy(H5T_STD_I8LE), v;
    struct json_object *j = NULL;
    int                 rc;
    for (int i = 0; i < H5ZV_TYPE_DEPTH_MAX + 2; i++) {
        v = H5Tvlen_create(t);
        H5Tclose(t);
        t = v;
    }
    H5E_BEGIN_TRY { rc = h5zv_type_to_json(t, &j); }
    H5E_END_TRY
    ASSERT(rc < 0 && !j);
    ASSERT(strstr(errors(), "nested deeper than 16 levels"));
    H5Tclose(t);
    return 0;
}

static int
test_type_corrupt(void)
{
    char deep[4096] = "", big[600];
    /* names and JSON types */
    ASSERT(type_bad("\"i3<\"", WHERE ": \"i3<\" is not a datatype name") == 0);
    ASSERT(type_bad("42", WHERE ": must be a JSON object, not an integer") == 0);
    ASSERT(type_bad("null", WHERE ": must be a JSON object, not null") == 0);
    ASSERT(type_bad("{\"size\":4}", WHERE ".class: missing (required)") == 0);
    ASSERT(type_bad("{\"class\":\"integr\"}", WHERE ".class: \"integr\" is not one of") == 0);
    ASSERT(type_bad("{\"class\":7}", WHERE ".class: must be a string, not an integer") == 0);
    /* integers */
    ASSERT(type_bad("{\"class\":\"integer\",\"size\":\"4\",\"order\":\"<\",\"signed\":true}",
                    WHERE ".size: must be an integer, not a string") == 0);
    ASSERT(type_bad("{\"class\":\"integer\",\"size\":4.0,\"order\":\"<\",\"signed\":true}",
                    WHERE ".size: must be an integer, not a non-integer number") == 0);
    ASSERT(type_bad("{\"class\":\"integer\",\"size\":0,\"order\":\"<\",\"signed\":true}",
                    WHERE ".size: 0 is out of range (1..64)") == 0);
    ASSERT(type_bad("{\"class\":\"integer\",\"size\":-4,\"order\":\"<\",\"signed\":true}",
                    WHERE ".size: -4 is out of range (1..64)") == 0);
    ASSERT(type_bad("{\"class\":\"integer\",\"size\":99999999999999999999,\"order\":\"<\",\"signed\":true}",
                    WHERE ".size:") == 0);
    ASSERT(type_bad("{\"class\":\"integer\",\"size\":4,\"signed\":true}",
                    WHERE ".order: missing (required)") == 0);
    ASSERT(type_bad("{\"class\":\"integer\",\"size\":4,\"order\":\"vax\",\"signed\":true}",
                    WHERE ".order: \"vax\" is not one of \"<\", \">\"") == 0);
    ASSERT(type_bad("{\"class\":\"integer\",\"size\":4,\"order\":\"<\"}",
                    WHERE ".signed: missing (required)") == 0);
    ASSERT(type_bad("{\"class\":\"integer\",\"size\":4,\"order\":\"<\",\"signed\":1}",
                    WHERE ".signed: must be true or false, not an integer") == 0);
    ASSERT(type_bad("{\"class\":\"integer\",\"size\":4,\"order\":\"<\",\"signed\":true,\"precision\":40}",
                    WHERE ".precision: 40 is out of range (1..32)") == 0);
    ASSERT(type_bad("{\"class\":\"integer\",\"size\":4,\"order\":\"<\",\"signed\":true,\"precision\":30,"
                    "\"offset\":4}",
                    WHERE ".offset: 4 + precision 30 exceeds the 32 bits of the type") == 0);
    ASSERT(type_bad("{\"class\":\"integer\",\"size\":4,\"order\":\"<\",\"signed\":true,\"pad\":[\"zero\"]}",
                    WHERE ".pad: must have 2 to 2 entries, not 1") == 0);
    ASSERT(
        type_bad(
            "{\"class\":\"integer\",\"size\":4,\"order\":\"<\",\"signed\":true,\"pad\":[\"zero\",\"two\"]}",
            WHERE ".pad[1]: must be \"zero\", \"one\" or \"background\"") == 0);
    ASSERT(type_bad("{\"class\":\"integer\",\"size\":4,\"order\":\"<\",\"signed\":true,\"colour\":1}",
                    WHERE ".colour: unknown key") == 0);
    /* floats */
    {
        static const char *f = "{\"class\":\"float\",\"size\":4,\"order\":\"<\",\"sign\":%s,\"exponent\":%s,"
                               "\"mantissa\":%s,\"ebias\":%s}";
        char               d[512];
        snprintf(d, sizeof d, f, "31", "[23,8]", "[0,23]", "127");
        {
            struct json_object *j = json_tokener_parse(d);
            hid_t               t = H5I_INVALID_HID;
            ASSERT(h5zv_type_from_json(j, WHERE, &t) == 0 && H5Tequal(t, H5T_IEEE_F32LE) > 0);
            H5Tclose(t);
            json_object_put(j);
        }
        snprintf(d, sizeof d, f, "31", "[20,8]", "[0,23]", "127");
        ASSERT(type_bad(d, WHERE ".mantissa: overlaps the exponent") == 0);
        snprintf(d, sizeof d, f, "32", "[23,8]", "[0,23]", "127");
        ASSERT(type_bad(d, WHERE ".sign: 32 is out of range (0..31)") == 0);
        snprintf(d, sizeof d, f, "30", "[23,8]", "[0,23]", "127");
        ASSERT(type_bad(d, WHERE ".sign: bit 30 overlaps the exponent or mantissa") == 0);
        snprintf(d, sizeof d, f, "31", "[24,9]", "[0,23]", "127");
        ASSERT(type_bad(d, WHERE ".exponent: bits 24 + 9 exceed the 32 bits of the type") == 0);
        /* the bias is not bounded by the exponent size (H5Tset_ebias takes any; h5py's custom floats have
         * 53 and 258 in 5 bits): up to the 32 bits HDF5's file format keeps */
        snprintf(d, sizeof d, f, "31", "[23,8]", "[0,23]", "4294967296");
        ASSERT(type_bad(d, WHERE ".ebias: 4294967296 is out of range (0..4294967295)") == 0);
        snprintf(d, sizeof d, f, "31", "[23,8]", "[0,23]", "4294967295");
        {
            struct json_object *j = json_tokener_parse(d);
            hid_t               t = H5I_INVALID_HID;
            ASSERT(h5zv_type_from_json(j, WHERE, &t) == 0 && H5Tget_ebias(t) == 4294967295u);
            H5Tclose(t);
            json_object_put(j);
        }
        snprintf(d, sizeof d, f, "31", "[23,8]", "[0,0]", "127");
        ASSERT(type_bad(d, WHERE ".mantissa[1]: 0 is out of range") == 0);
        snprintf(d, sizeof d, f, "31", "{}", "[0,23]", "127");
        ASSERT(type_bad(d, WHERE ".exponent: must be a list, not an object") == 0);
        snprintf(d, sizeof d, f, "31", "[23,8]", "[0,23]", "-1");
        ASSERT(type_bad(d, WHERE ".ebias: -1 is out of range") == 0);
        snprintf(d, sizeof d, f, "31", "[23,8]", "[0,23]", "127,\"norm\":\"denormal\"");
        ASSERT(type_bad(d, WHERE ".norm: \"denormal\" is not one of \"implied\", \"msbset\", \"none\"") == 0);
        snprintf(d, sizeof d, f, "31", "[23,8]", "[0,23]", "127,\"norm\":0");
        ASSERT(type_bad(d, WHERE ".norm: must be a string, not an integer") == 0);
        snprintf(d, sizeof d, f, "31", "[23,8]", "[0,23]", "127,\"inpad\":\"two\"");
        ASSERT(type_bad(d, WHERE ".inpad: \"two\" is not one of") == 0);
        snprintf(d, sizeof d, f, "31", "[23,8]", "[0,23]", "127,\"inpad\":[]");
        ASSERT(type_bad(d, WHERE ".inpad: must be a string, not a list") == 0);
        snprintf(d, sizeof d, f, "31", "[23,8]", "[0,23]", "127,\"precision\":33");
        ASSERT(type_bad(d, WHERE ".precision: 33 is out of range (1..32)") == 0);
        snprintf(d, sizeof d, f, "31", "[23,8]", "[0,23]", "127,\"offset\":\"0\"");
        ASSERT(type_bad(d, WHERE ".offset: must be an integer, not a string") == 0);
    }
    /* bitfields: no sign */
    ASSERT(type_bad("{\"class\":\"bitfield\",\"size\":2,\"order\":\"<\",\"signed\":false}",
                    WHERE ".signed: unknown key") == 0);
    ASSERT(type_bad("{\"class\":\"bitfield\",\"size\":65,\"order\":\"<\"}",
                    WHERE ".size: 65 is out of range (1..64)") == 0);
    /* strings, opaque */
    ASSERT(type_bad("{\"class\":\"string\",\"size\":-1}", WHERE ".size: -1 is out of range") == 0);
    ASSERT(type_bad("{\"class\":\"string\",\"size\":\"varying\"}", WHERE ".size: must be a byte count or") ==
           0);
    ASSERT(type_bad("{\"class\":\"string\",\"size\":4,\"pad\":\"foo\"}",
                    WHERE ".pad: \"foo\" is not one of") == 0);
    ASSERT(type_bad("{\"class\":\"string\",\"size\":4,\"cset\":\"latin1\"}",
                    WHERE ".cset: \"latin1\" is not one of") == 0);
    ASSERT(type_bad("{\"class\":\"string\",\"size\":1073741825}",
                    WHERE ".size: 1073741825 is out of range") == 0);
    memset(big, 'a', 300);
    big[300] = '\0';
    {
        char d[700];
        snprintf(d, sizeof d, "{\"class\":\"opaque\",\"size\":4,\"tag\":\"%s\"}", big);
        ASSERT(type_bad(d, WHERE ".tag: must be a string of at most 255 bytes") == 0);
    }
    ASSERT(type_bad("{\"class\":\"opaque\",\"size\":4,\"tag\":\"a\\u0000b\"}",
                    WHERE ".tag: must be a string") == 0);
    ASSERT(type_bad("{\"class\":\"opaque\"}", WHERE ".size: missing (required)") == 0);
    /* compounds */
    ASSERT(
        type_bad(
            "{\"class\":\"compound\",\"size\":16,\"members\":[{\"name\":\"a\",\"offset\":0,\"type\":\"i4<\"},"
            "{\"name\":\"b\",\"offset\":4,\"type\":\"i4<\"},{\"name\":\"c\",\"offset\":12,\"type\":\"f8<\"}]"
            "}",
            WHERE ".members[2].offset: 12 + 8 exceeds the compound size 16") == 0);
    ASSERT(
        type_bad(
            "{\"class\":\"compound\",\"size\":16,\"members\":[{\"name\":\"a\",\"offset\":0,\"type\":\"i4<\"},"
            "{\"name\":\"a\",\"offset\":4,\"type\":\"i4<\"}]}",
            WHERE ".members[1]: the name \"a\" is used twice") == 0);
    ASSERT(type_bad("{\"class\":\"compound\",\"size\":16,\"members\":[{\"name\":\"\",\"offset\":0,\"type\":"
                    "\"i4<\"}]}",
                    WHERE ".members[0].name: must not be empty") == 0);
    ASSERT(
        type_bad(
            "{\"class\":\"compound\",\"size\":16,\"members\":[{\"name\":\"a\",\"offset\":0,\"type\":\"i8<\"},"
            "{\"name\":\"b\",\"offset\":4,\"type\":\"i4<\"}]}",
            "overlap") == 0);
    ASSERT(type_bad("{\"class\":\"compound\",\"size\":16,\"members\":[{\"name\":\"a\",\"offset\":16,\"type\":"
                    "\"i1<\"}]}",
                    WHERE ".members[0].offset: 16 is out of range (0..15)") == 0);
    ASSERT(type_bad("{\"class\":\"compound\",\"size\":16,\"members\":[{\"name\":\"a\",\"offset\":0}]}",
                    WHERE ".members[0].type: missing (required)") == 0);
    ASSERT(
        type_bad(
            "{\"class\":\"compound\",\"size\":16,\"members\":[{\"name\":\"a\",\"offset\":0,\"type\":\"x\"}]}",
            WHERE ".members[0].type: \"x\" is not a datatype name") == 0);
    ASSERT(type_bad("{\"class\":\"compound\",\"size\":16,\"members\":{}}",
                    WHERE ".members: must be a list, not an object") == 0);
    ASSERT(type_bad("{\"class\":\"compound\",\"size\":16,\"members\":[7]}",
                    WHERE ".members[0]: must be a JSON object") == 0);
    ASSERT(type_bad("{\"class\":\"compound\",\"size\":2147483648,\"members\":[]}",
                    WHERE ".size: 2147483648 is out of range") == 0);
    /* enums */
    ASSERT(type_bad("{\"class\":\"enum\",\"base\":\"i1<\",\"members\":[[\"A\",128]]}",
                    WHERE ".members[0][1]: 128 does not fit the 8-bit signed base type") == 0);
    ASSERT(type_bad("{\"class\":\"enum\",\"base\":\"u8<\",\"members\":[[\"A\",-1]]}",
                    WHERE ".members[0][1]: -1 does not fit the 64-bit unsigned base type") == 0);
    ASSERT(type_bad("{\"class\":\"enum\",\"base\":\"u1<\",\"members\":[[\"A\",1],[\"B\",1]]}",
                    WHERE ".members[1][1]: the value is also member 0's") == 0);
    ASSERT(type_bad("{\"class\":\"enum\",\"base\":\"u1<\",\"members\":[[\"A\",1],[\"A\",2]]}",
                    WHERE ".members[1]: the name \"A\" is used twice") == 0);
    ASSERT(type_bad("{\"class\":\"enum\",\"base\":\"f4<\",\"members\":[]}",
                    WHERE ".base: must be an integer type") == 0);
    ASSERT(type_bad("{\"class\":\"enum\",\"base\":\"u1<\",\"members\":[[\"A\",\"1\"]]}",
                    WHERE ".members[0][1]: the value must be an integer, not a string") == 0);
    ASSERT(type_bad("{\"class\":\"enum\",\"base\":\"u1<\",\"members\":[[\"\",1]]}",
                    WHERE ".members[0][0]: the name must be a non-empty string") == 0);
    ASSERT(type_bad("{\"class\":\"enum\",\"base\":\"u1<\",\"members\":[{\"A\":1}]}",
                    WHERE ".members[0]: must be a list [name, value]") == 0);
    ASSERT(type_bad("{\"class\":\"enum\",\"members\":[]}", WHERE ".base: missing (required)") == 0);
    ASSERT(type_bad("{\"class\":\"enum\",\"base\":\"i4<\",\"members\":[]}",
                    WHERE ".members: an enum type needs at least one member") == 0);
    /* arrays, vlens */
    ASSERT(type_bad("{\"class\":\"array\",\"dims\":[],\"base\":\"i4<\"}",
                    WHERE ".dims: must have 1 to 32 entries, not 0") == 0);
    ASSERT(type_bad("{\"class\":\"array\",\"dims\":[0],\"base\":\"i4<\"}",
                    WHERE ".dims[0]: 0 is out of range") == 0);
    ASSERT(type_bad("{\"class\":\"array\",\"dims\":[65536,65536],\"base\":\"i8<\"}",
                    WHERE ".dims: an array type of more than 1073741824 bytes") == 0);
    ASSERT(type_bad("{\"class\":\"array\",\"dims\":[2],\"base\":{\"class\":\"array\",\"dims\":[32768,32768],"
                    "\"base\":\"i1<\"}}",
                    WHERE ".dims: an array type of more than") == 0);
    ASSERT(type_bad("{\"class\":\"array\",\"dims\":[2]}", WHERE ".base: missing (required)") == 0);
    ASSERT(type_bad("{\"class\":\"vlen\"}", WHERE ".base: missing (required)") == 0);
    ASSERT(type_bad("{\"class\":\"vlen\",\"base\":{\"class\":\"vlen\",\"base\":\"q\"}}",
                    WHERE ".base.base: \"q\" is not a datatype name") == 0);
    /* nesting beyond the bound */
    for (int i = 0; i < 20; i++)
        strcat(deep, "{\"class\":\"vlen\",\"base\":");
    strcat(deep, "\"i1<\"");
    for (int i = 0; i < 20; i++)
        strcat(deep, "}");
    ASSERT(type_bad(deep, "datatypes nested deeper than 16 levels") == 0);
    return 0;
}

/* ---- fill values and dcpls ------------------------------------------------------------------------ */
/* dcpl -> JSON -> text -> dcpl; *text gets the JSON text; *back the new list. */
static int
dcpl_rt(hid_t dcpl, hid_t type, char *text, size_t ntext, hid_t *back)
{
    struct json_object *j = NULL, *k;
    if (h5zv_dcpl_to_json(dcpl, type, &j) != 0)
        FAILF("dcpl to_json failed: %s", errors());
    snprintf(text, ntext, "%s", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    k = json_tokener_parse(text);
    json_object_put(j);
    ASSERT(k);
    if (h5zv_dcpl_from_json(k, type, DWHERE, back) != 0)
        FAILF("dcpl from_json failed for %s: %s", text, errors());
    json_object_put(k);
    return 0;
}

/* The two lists agree on every property the connector keeps. */
static int
dcpl_same(hid_t a, hid_t b, hid_t type)
{
    H5D_alloc_time_t at1, at2;
    H5D_fill_time_t  ft1, ft2;
    H5D_fill_value_t fs1, fs2;
    unsigned         c1, c2, m1, m2, d1, d2, o1 = 0, o2 = 0;
    hbool_t          t1, t2, n1, n2;
    ASSERT_EQ_INT(H5Pget_layout(a), H5Pget_layout(b));
    if (H5Pget_layout(a) == H5D_CHUNKED) {
        hsize_t x[32], y[32];
        int     r = H5Pget_chunk(a, 32, x);
        ASSERT_EQ_INT(r, H5Pget_chunk(b, 32, y));
        ASSERT(!memcmp(x, y, (size_t)r * sizeof x[0]));
        H5Pget_chunk_opts(a, &o1);
        H5Pget_chunk_opts(b, &o2);
        ASSERT_EQ_INT(o1, o2);
    }
    ASSERT_EQ_INT(H5Pget_nfilters(a), H5Pget_nfilters(b));
    for (int i = 0; i < H5Pget_nfilters(a); i++) {
        unsigned f1, f2, v1[64], v2[64], cf;
        size_t   n1c = 64, n2c = 64;
        ASSERT_EQ_INT(H5Pget_filter2(a, (unsigned)i, &f1, &n1c, v1, 0, NULL, &cf),
                      H5Pget_filter2(b, (unsigned)i, &f2, &n2c, v2, 0, NULL, &cf));
        ASSERT_EQ_INT(f1, f2);
        ASSERT_EQ_INT(n1c, n2c);
        ASSERT(!memcmp(v1, v2, n1c * sizeof v1[0]));
    }
    H5Pget_alloc_time(a, &at1);
    H5Pget_alloc_time(b, &at2);
    ASSERT_EQ_INT(at1, at2);
    H5Pget_fill_time(a, &ft1);
    H5Pget_fill_time(b, &ft2);
    ASSERT_EQ_INT(ft1, ft2);
    H5Pfill_value_defined(a, &fs1);
    H5Pfill_value_defined(b, &fs2);
    ASSERT_EQ_INT(fs1, fs2);
    if (fs1 == H5D_FILL_VALUE_USER_DEFINED) {
        size_t   sz = H5Tget_size(type);
        uint8_t *x = calloc(1, sz), *y = calloc(1, sz);
        hid_t    s = H5Screate(H5S_SCALAR);
        ASSERT(H5Pget_fill_value(a, type, x) >= 0 && H5Pget_fill_value(b, type, y) >= 0);
        if (H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0) {
            char *p, *q;
            memcpy(&p, x, sizeof p);
            memcpy(&q, y, sizeof q);
            ASSERT((!p && !q) || (p && q && !strcmp(p, q)));
        }
        else if (H5Tget_class(type) == H5T_VLEN) {
            hvl_t p, q;
            memcpy(&p, x, sizeof p);
            memcpy(&q, y, sizeof q);
            ASSERT_EQ_INT(p.len, q.len);
            {
                hid_t  bt = H5Tget_super(type);
                size_t bs = H5Tget_size(bt);
                ASSERT(!p.len || !memcmp(p.p, q.p, p.len * bs));
                H5Tclose(bt);
            }
        }
        else if (H5Tget_class(type) == H5T_FLOAT || H5Tget_class(type) == H5T_INTEGER)
            ASSERT(same_bits(type, x, y)); /* (padding bits are undefined) */
        else if (H5Tget_class(type) != H5T_COMPOUND)
            ASSERT(!memcmp(x, y, sz));
        H5Treclaim(type, s, H5P_DEFAULT, x);
        H5Treclaim(type, s, H5P_DEFAULT, y);
        H5Sclose(s);
        free(x);
        free(y);
    }
    H5Pget_obj_track_times(a, &t1);
    H5Pget_obj_track_times(b, &t2);
    ASSERT_EQ_INT(t1, t2);
    H5Pget_attr_creation_order(a, &c1);
    H5Pget_attr_creation_order(b, &c2);
    ASSERT_EQ_INT(c1, c2);
    H5Pget_attr_phase_change(a, &m1, &d1);
    H5Pget_attr_phase_change(b, &m2, &d2);
    ASSERT_EQ_INT(m1, m2);
    ASSERT_EQ_INT(d1, d2);
    H5Pget_dset_no_attrs_hint(a, &n1);
    H5Pget_dset_no_attrs_hint(b, &n2);
    ASSERT_EQ_INT(n1, n2);
    return 0;
}

static int
test_dcpl_roundtrip(void)
{
    char     text[2048];
    hid_t    p     = H5Pcreate(H5P_DATASET_CREATE), b;
    hsize_t  ch[2] = {4, 5};
    unsigned cd[3] = {0, 7, 4000000000u};
    int      fill  = -7;

    /* the default list is {} */
    ASSERT(dcpl_rt(p, H5T_NATIVE_INT, text, sizeof text, &b) == 0);
    ASSERT_STR(text, "{}");
    ASSERT(dcpl_same(p, b, H5T_NATIVE_INT) == 0);
    H5Pclose(b);

    /* everything at once */
    H5Pset_chunk(p, 2, ch);
    H5Pset_chunk_opts(p, H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS);
    H5Pset_shuffle(p);
    H5Pset_deflate(p, 6);
    H5Pset_filter(p, 32004, H5Z_FLAG_OPTIONAL, 3, cd);
    H5Pset_fletcher32(p);
    H5Pset_fill_value(p, H5T_NATIVE_INT, &fill);
    H5Pset_alloc_time(p, H5D_ALLOC_TIME_EARLY);
    H5Pset_fill_time(p, H5D_FILL_TIME_NEVER);
    H5Pset_obj_track_times(p, false);
    H5Pset_attr_creation_order(p, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    H5Pset_attr_phase_change(p, 4, 2);
    H5Pset_dset_no_attrs_hint(p, true);
    ASSERT(dcpl_rt(p, H5T_STD_I32BE, text, sizeof text, &b) == 0);
    ASSERT(strstr(text, "\"layout\":\"chunked\",\"chunk\":[4,5],\"dont_filter_partial_chunks\":true"));
    ASSERT(strstr(text, "\"alloc_time\":\"early\",\"fill_time\":\"never\",\"fill_value\":-7"));
    /* (a "name" between them when the lz4 plugin is on HDF5_PLUGIN_PATH) */
    ASSERT(strstr(text, "{\"id\":32004,\"flags\":1,") && strstr(text, "\"cd_values\":[0,7,4000000000]}"));
    ASSERT(strstr(text, "{\"id\":1,\"flags\":1,\"name\":\"deflate\",\"cd_values\":[6]}"));
    ASSERT(strstr(text,
                  "\"attr_creation_order\":\"indexed\",\"attr_phase_change\":[4,2],\"track_times\":false"));
    ASSERT(dcpl_same(p, b, H5T_STD_I32BE) == 0);
    H5Pclose(b);
    {
        /* the filters alone, without the dataset's type */
        struct json_object *j = json_tokener_parse(text);
        unsigned            fl, v[8];
        size_t              nv = 8;
        ASSERT(j && h5zv_dcpl_filters_from_json(j, DWHERE, &b) == 0);
        ASSERT_EQ_INT(H5Pget_nfilters(b), 4);
        ASSERT_EQ_INT(H5Pget_filter2(b, 2, &fl, &nv, v, 0, NULL, NULL), 32004);
        ASSERT(fl == H5Z_FLAG_OPTIONAL && nv == 3 && v[2] == 4000000000u);
        H5Pclose(b);
        json_object_object_add(j, "filters", json_object_new_int(3));
        H5E_BEGIN_TRY { ASSERT(h5zv_dcpl_filters_from_json(j, DWHERE, &b) < 0 && b < 0); }
        H5E_END_TRY
        ASSERT(strstr(errors(), DWHERE ".filters: must be a list, not an integer"));
        json_object_put(j);
    }
    H5Pclose(p);

    /* layouts and their allocation times; undefined fill */
    p = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_layout(p, H5D_COMPACT);
    ASSERT(dcpl_rt(p, H5T_NATIVE_INT, text, sizeof text, &b) == 0);
    ASSERT_STR(text, "{\"layout\":\"compact\"}");
    ASSERT(dcpl_same(p, b, H5T_NATIVE_INT) == 0);
    H5Pclose(b);
    H5Pclose(p);
    p = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_alloc_time(p, H5D_ALLOC_TIME_INCR);
    H5Pset_fill_value(p, H5T_NATIVE_INT, NULL);
    ASSERT(dcpl_rt(p, H5T_NATIVE_INT, text, sizeof text, &b) == 0);
    ASSERT_STR(text, "{\"alloc_time\":\"incr\",\"fill_undefined\":true}");
    ASSERT(dcpl_same(p, b, H5T_NATIVE_INT) == 0);
    H5Pclose(b);
    H5Pclose(p);
    return 0;
}

/* A dcpl whose fill value is `val` of `type`: round trip, the value's JSON text must contain `want`. */
static int
fill_rt(hid_t type, const void *val, const char *want)
{
    char  text[4096];
    hid_t p = H5Pcreate(H5P_DATASET_CREATE), b;
    ASSERT(H5Pset_fill_value(p, type, val) >= 0);
    ASSERT(dcpl_rt(p, type, text, sizeof text, &b) == 0);
    if (!strstr(text, want))
        FAILF("expected %s in %s", want, text);
    ASSERT(dcpl_same(p, b, type) == 0);
    H5Pclose(b);
    H5Pclose(p);
    return 0;
}

static int
test_fill_values(void)
{
    {
        ASSERT(fill_rt(H5T_STD_I64BE, (long long[]){0}, "\"fill_value\":0") == 0);
        {
            uint8_t be[8] = {0x80, 0, 0, 0, 0, 0, 0, 0}; /* INT64_MIN, big-endian */
            ASSERT(fill_rt(H5T_STD_I64BE, be, "\"fill_value\":-9223372036854775808") == 0);
        }
        ASSERT(fill_rt(H5T_NATIVE_ULLONG, (unsigned long long[]){UINT64_MAX},
                       "\"fill_value\":18446744073709551615") == 0);
    }
    ASSERT(fill_rt(H5T_NATIVE_DOUBLE, (double[]){-0.0}, "\"fill_value\":-0.0") == 0);
    ASSERT(fill_rt(H5T_NATIVE_DOUBLE, (double[]){NAN}, "\"fill_value\":\"NaN\"") == 0);
    ASSERT(fill_rt(H5T_NATIVE_FLOAT, (float[]){-INFINITY}, "\"fill_value\":\"-Infinity\"") == 0);
    ASSERT(fill_rt(H5T_NATIVE_FLOAT, (float[]){0.1f}, "\"fill_value\":0.10000000149011612") == 0);
    {
        /* a NaN with a payload has no exact JSON number: its bytes */
        uint64_t bits = 0x7ff0000000000123ull;
        ASSERT(fill_rt(H5T_IEEE_F64LE, &bits, "\"fill_value\":{\"hex\":\"230100000000f07f\"}") == 0);
    }
    {
        hid_t    h = f16_like_type_c(H5T_IEEE_F32LE);
        uint16_t x = 0x3e00; /* 1.5 */
        ASSERT(fill_rt(h, &x, "\"fill_value\":1.5") == 0);
        H5Tclose(h);
    }
    {
        /* long double: 1/3 is not a double (its bytes), 2.5 is; the padding bytes are zeroed, as values
         * whose bits outside the precision are set have no number either */
        long double x;
        memset(&x, 0, sizeof x);
        x = 1.0L / 3.0L;
        ASSERT(fill_rt(H5T_NATIVE_LDOUBLE, &x, "\"fill_value\":{\"hex\":") == 0);
        memset(&x, 0, sizeof x);
        x = 2.5L;
        ASSERT(fill_rt(H5T_NATIVE_LDOUBLE, &x, "\"fill_value\":2.5") == 0);
    }
    {
        /* strings: variable (the string itself, null for NULL, hex for bytes that are not UTF-8), fixed */
        hid_t       vs = str_type(H5T_VARIABLE, H5T_STR_NULLTERM, H5T_CSET_UTF8), fs;
        const char *s = "abc \"q\" \xc3\xa9", *nul = NULL, *bin = "\xff\xfe";
        ASSERT(fill_rt(vs, &s, "\"fill_value\":\"abc \\\"q\\\" \xc3\xa9\"") == 0);
        ASSERT(fill_rt(vs, &nul, "\"fill_value\":null") == 0);
        ASSERT(fill_rt(vs, &bin, "\"fill_value\":{\"hex\":\"fffe\"}") == 0);
        fs = str_type(6, H5T_STR_NULLPAD, H5T_CSET_ASCII);
        ASSERT(fill_rt(fs, "ab\0\0\0\0", "\"fill_value\":\"ab\"") == 0);
        ASSERT(fill_rt(fs, "a\0b\0\0\0", "\"fill_value\":{\"hex\":\"610062000000\"}") == 0);
        H5Tclose(fs);
        H5Tclose(vs);
    }
    {
        /* compound, array, enum, opaque, vlen */
        struct {
            int    i;
            double d;
            char   tag[4];
        } c      = {5, 2.25, "xy"};
        hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof c), st = str_type(4, H5T_STR_NULLTERM, H5T_CSET_ASCII), at,
              et, ot, vt;
        hsize_t d3   = 3;
        int     a[3] = {1, -2, 3};
        H5Tinsert(ct, "i", 0, H5T_NATIVE_INT);
        H5Tinsert(ct, "d", 8, H5T_NATIVE_DOUBLE);
        H5Tinsert(ct, "tag", 16, st);
        ASSERT(fill_rt(ct, &c, "\"fill_value\":[5,2.25,\"xy\"]") == 0);
        at = H5Tarray_create2(H5T_NATIVE_INT, 1, &d3);
        ASSERT(fill_rt(at, a, "\"fill_value\":[1,-2,3]") == 0);
        et = H5Tenum_create(H5T_NATIVE_SHORT);
        {
            short r = 1, g = 2;
            H5Tenum_insert(et, "R", &r);
            H5Tenum_insert(et, "G", &g);
            ASSERT(fill_rt(et, &g, "\"fill_value\":2") == 0);
        }
        ot = H5Tcreate(H5T_OPAQUE, 3);
        ASSERT(fill_rt(ot, "\x01\x02\xff", "\"fill_value\":{\"hex\":\"0102ff\"}") == 0);
        vt = H5Tvlen_create(H5T_NATIVE_INT);
        {
            hvl_t v = {3, a}, e = {0, NULL};
            ASSERT(fill_rt(vt, &v, "\"fill_value\":[1,-2,3]") == 0);
            ASSERT(fill_rt(vt, &e, "\"fill_value\":[]") == 0);
        }
        H5Tclose(vt);
        H5Tclose(ot);
        H5Tclose(et);
        H5Tclose(at);
        H5Tclose(st);
        H5Tclose(ct);
    }
    return 0;
}

/* Counts the ids it visits (H5Iiterate). */
static herr_t
count_id(hid_t id, void *n)
{
    (*(long *)n)++;
    return 0;
}

/* The datatype ids open in the library (H5Inmembers refuses library id types). */
static long
open_types(void)
{
    long n = 0;
    H5Iiterate(H5I_DATATYPE, count_id, &n);
    return n;
}

static int
test_value_ids_closed(void)
{
    /* every path through the value converters closes the ids it opens: an enum whose base is wider than
     * 64 bits has no JSON number (hex), and its base id was once left open there; the other classes
     * that open a base or member type, each way */
    hid_t               wide  = H5Tcopy(H5T_STD_I64LE), we, ct, at, vt, et;
    uint8_t             v[16] = {5}, back[16];
    hsize_t             d2    = 2;
    int                 a[2]  = {3, -4};
    hvl_t               vl    = {2, a}, vb;
    short               g     = 2;
    struct json_object *j     = NULL;
    long                before;
    int                 rc;
    ASSERT(H5Tset_size(wide, 16) >= 0 && H5Tset_precision(wide, 128) >= 0);
    ASSERT((we = H5Tenum_create(wide)) >= 0 && H5Tenum_insert(we, "five", v) >= 0);
    ASSERT((ct = H5Tcreate(H5T_COMPOUND, 16)) >= 0 && H5Tinsert(ct, "e", 0, we) >= 0);
    ASSERT((at = H5Tarray_create2(H5T_NATIVE_INT, 1, &d2)) >= 0);
    ASSERT((vt = H5Tvlen_create(H5T_NATIVE_INT)) >= 0);
    ASSERT((et = H5Tenum_create(H5T_NATIVE_SHORT)) >= 0 && H5Tenum_insert(et, "G", &g) >= 0);
    before = open_types();
    ASSERT(before > 0);
    ASSERT(h5zv_value_to_json(we, v, &j) == 0);
    ASSERT_STR(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
               "{\"hex\":\"05000000000000000000000000000000\"}");
    memset(back, 0, sizeof back);
    ASSERT(h5zv_value_from_json(j, we, WHERE, back) == 0 && !memcmp(back, v, 16));
    json_object_put(j);
    ASSERT(open_types() == before);
    ASSERT(h5zv_value_to_json(ct, v, &j) == 0);
    ASSERT_STR(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
               "[{\"hex\":\"05000000000000000000000000000000\"}]");
    json_object_put(j);
    ASSERT(h5zv_value_to_json(at, a, &j) == 0 && h5zv_value_from_json(j, at, WHERE, back) == 0);
    json_object_put(j);
    ASSERT(h5zv_value_to_json(vt, &vl, &j) == 0 && h5zv_value_from_json(j, vt, WHERE, &vb) == 0);
    ASSERT(vb.len == 2 && ((int *)vb.p)[1] == -4);
    free(vb.p);
    json_object_put(j);
    ASSERT(h5zv_value_to_json(et, &g, &j) == 0 && h5zv_value_from_json(j, et, WHERE, back) == 0);
    json_object_put(j);
    /* and the types themselves: the wide enum is refused, a member deep */
    H5E_BEGIN_TRY { rc = h5zv_type_to_json(ct, &j); }
    H5E_END_TRY
    ASSERT(rc < 0 && !j);
    ASSERT(strstr(errors(), "can't describe an enum datatype of 1 members"));
    ASSERT(h5zv_type_to_json(et, &j) == 0);
    json_object_put(j);
    ASSERT(open_types() == before);
    H5Tclose(et);
    H5Tclose(vt);
    H5Tclose(at);
    H5Tclose(ct);
    H5Tclose(we);
    H5Tclose(wide);
    return 0;
}

/* A dcpl document that must fail (read as `type`), `needle` in the messages. */
static int
dcpl_bad(const char *doc, hid_t type, const char *needle)
{
    struct json_object *j = json_tokener_parse(doc);
    hid_t               p = H5I_INVALID_HID;
    int                 rc;
    if (!j)
        FAILF("test document does not parse: %s", doc);
    H5E_BEGIN_TRY { rc = h5zv_dcpl_from_json(j, type, DWHERE, &p); }
    H5E_END_TRY
    json_object_put(j);
    if (rc == 0 || p >= 0)
        FAILF("accepted: %s", doc);
    if (!strstr(errors(), needle))
        FAILF("for %s: expected \"%s\" in \"%s\"", doc, needle, errbuf);
    return 0;
}

static int
test_dcpl_corrupt(void)
{
    hid_t vs = str_type(H5T_VARIABLE, H5T_STR_NULLTERM, H5T_CSET_UTF8);
    hid_t ct = H5Tcreate(H5T_COMPOUND, 8);
    H5Tinsert(ct, "a", 0, H5T_NATIVE_INT);
    H5Tinsert(ct, "b", 4, H5T_NATIVE_FLOAT);

    ASSERT(dcpl_bad("[]", H5T_NATIVE_INT, DWHERE ": must be a JSON object, not a list") == 0);
    ASSERT(dcpl_bad("{\"external\":[]}", H5T_NATIVE_INT,
                    DWHERE ".external: must have 1 to 65535 entries, not 0") == 0);
    ASSERT(dcpl_bad("{\"external\":[{\"name\":\"a\",\"offset\":0}]}", H5T_NATIVE_INT,
                    DWHERE ".external[0].size: is missing") == 0);
    ASSERT(dcpl_bad("{\"external\":[{\"name\":\"a\",\"offset\":0,\"size\":-2}]}", H5T_NATIVE_INT,
                    DWHERE ".external[0].size: -2 is out of range") == 0);
    ASSERT(dcpl_bad("{\"external\":[{\"name\":7,\"offset\":0,\"size\":1}]}", H5T_NATIVE_INT,
                    DWHERE ".external[0].name: must be a string, not an integer") == 0);
    ASSERT(dcpl_bad("{\"layout\":\"external\"}", H5T_NATIVE_INT,
                    DWHERE ".layout: \"external\" is not one of") == 0);
    ASSERT(dcpl_bad("{\"layout\":2}", H5T_NATIVE_INT, DWHERE ".layout: must be a string, not an integer") ==
           0);
    ASSERT(dcpl_bad("{\"layout\":\"chunked\"}", H5T_NATIVE_INT, DWHERE ".chunk: missing (required)") == 0);
    ASSERT(dcpl_bad("{\"layout\":\"chunked\",\"chunk\":[0]}", H5T_NATIVE_INT,
                    DWHERE ".chunk[0]: 0 is out of range") == 0);
    ASSERT(dcpl_bad("{\"layout\":\"chunked\",\"chunk\":[4294967296]}", H5T_NATIVE_INT,
                    DWHERE ".chunk[0]: 4294967296 is out of range") == 0);
    ASSERT(dcpl_bad("{\"layout\":\"chunked\",\"chunk\":[65536,65536]}", H5T_NATIVE_INT,
                    DWHERE ".chunk: a chunk of more than 2^32 - 1 elements") == 0);
    ASSERT(dcpl_bad("{\"chunk\":[4]}", H5T_NATIVE_INT, DWHERE ".chunk: given for a contiguous layout") == 0);
    ASSERT(dcpl_bad("{\"layout\":\"chunked\",\"chunk\":[4],\"dont_filter_partial_chunks\":\"yes\"}",
                    H5T_NATIVE_INT,
                    DWHERE ".dont_filter_partial_chunks: must be true or false, not a string") == 0);
    ASSERT(dcpl_bad("{\"filters\":[{\"id\":0}]}", H5T_NATIVE_INT,
                    DWHERE ".filters[0].id: 0 is out of range") == 0);
    ASSERT(dcpl_bad("{\"filters\":[{\"id\":65536}]}", H5T_NATIVE_INT,
                    DWHERE ".filters[0].id: 65536 is out of range") == 0);
    ASSERT(dcpl_bad("{\"filters\":[{\"flags\":1}]}", H5T_NATIVE_INT,
                    DWHERE ".filters[0].id: missing (required)") == 0);
    ASSERT(dcpl_bad("{\"filters\":[{\"id\":1,\"flags\":256}]}", H5T_NATIVE_INT,
                    DWHERE ".filters[0].flags: 256 is out of range (0..255)") == 0);
    ASSERT(dcpl_bad("{\"filters\":[{\"id\":1,\"cd_values\":[\"6\"]}]}", H5T_NATIVE_INT,
                    DWHERE ".filters[0].cd_values[0]: must be an integer, not a string") == 0);
    ASSERT(dcpl_bad("{\"filters\":[{\"id\":1,\"cd_values\":[4294967296]}]}", H5T_NATIVE_INT,
                    DWHERE ".filters[0].cd_values[0]: 4294967296 is out of range") == 0);
    ASSERT(dcpl_bad("{\"filters\":[{\"id\":1,\"name\":7}]}", H5T_NATIVE_INT,
                    DWHERE ".filters[0].name: must be a string, not an integer") == 0);
    ASSERT(dcpl_bad("{\"filters\":[]}", H5T_NATIVE_INT,
                    DWHERE ".filters: must have 1 to 32 entries, not 0") == 0);
    ASSERT(dcpl_bad("{\"filters\":{}}", H5T_NATIVE_INT, DWHERE ".filters: must be a list, not an object") ==
           0);
    ASSERT(dcpl_bad("{\"alloc_time\":\"soon\"}", H5T_NATIVE_INT,
                    DWHERE ".alloc_time: \"soon\" is not one of") == 0);
    ASSERT(dcpl_bad("{\"fill_time\":3}", H5T_NATIVE_INT,
                    DWHERE ".fill_time: must be a string, not an integer") == 0);
    ASSERT(dcpl_bad("{\"attr_phase_change\":[2,4]}", H5T_NATIVE_INT,
                    DWHERE ".attr_phase_change: max_compact 2 is below min_dense 4") == 0);
    ASSERT(dcpl_bad("{\"attr_phase_change\":[70000,1]}", H5T_NATIVE_INT,
                    DWHERE ".attr_phase_change[0]: 70000 is out of range (0..65535)") == 0);
    ASSERT(dcpl_bad("{\"attr_phase_change\":8}", H5T_NATIVE_INT,
                    DWHERE ".attr_phase_change: must be a list") == 0);
    ASSERT(dcpl_bad("{\"attr_creation_order\":\"sorted\"}", H5T_NATIVE_INT,
                    DWHERE ".attr_creation_order: \"sorted\" is not one of \"tracked\", \"indexed\"") == 0);
    ASSERT(dcpl_bad("{\"track_times\":\"no\"}", H5T_NATIVE_INT,
                    DWHERE ".track_times: must be true or false") == 0);
    ASSERT(dcpl_bad("{\"no_attrs_hint\":null}", H5T_NATIVE_INT,
                    DWHERE ".no_attrs_hint: must be true or false, not null") == 0);
    /* fill values */
    ASSERT(dcpl_bad("{\"fill_value\":\"abc\"}", H5T_NATIVE_INT,
                    DWHERE ".fill_value: must be an integer, not a string") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":300}", H5T_NATIVE_UCHAR,
                    DWHERE ".fill_value: 300 is out of range for an unsigned integer of 8 bits") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":-1}", H5T_NATIVE_UINT,
                    DWHERE ".fill_value: -1 is out of range for an unsigned integer of 32 bits") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":1e300}", H5T_NATIVE_FLOAT,
                    DWHERE ".fill_value: 1e300 is not exactly a value") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":\"nan\"}", H5T_NATIVE_FLOAT,
                    DWHERE ".fill_value: \"nan\" is not a number") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":true}", H5T_NATIVE_FLOAT,
                    DWHERE ".fill_value: must be a number, not a boolean") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":{\"hex\":\"123\"}}", H5T_NATIVE_INT,
                    DWHERE ".fill_value.hex: an odd number") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":{\"hex\":\"0102\"}}", H5T_NATIVE_INT,
                    DWHERE ".fill_value: 2 bytes for a value of 4") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":{\"hex\":\"0102030G\"}}", H5T_NATIVE_INT,
                    DWHERE ".fill_value.hex: 'G' is not a lowercase hex digit") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":{\"bytes\":\"01\"}}", H5T_NATIVE_INT,
                    DWHERE ".fill_value.bytes: unknown key") == 0);
    ASSERT(dcpl_bad("{\"fill_undefined\":\"yes\"}", H5T_NATIVE_INT,
                    DWHERE ".fill_undefined: must be true or false, not a string") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":1,\"fill_undefined\":true}", H5T_NATIVE_INT,
                    DWHERE ".fill_value: given with fill_undefined") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":5}", vs,
                    DWHERE ".fill_value: must be a string or null, not an integer") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":[1]}", ct,
                    DWHERE ".fill_value: must be a list of the 2 member values") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":[1,\"x\"]}", ct, DWHERE ".fill_value[1]: \"x\" is not a number") == 0);
    ASSERT(dcpl_bad("{\"fill_value\":1}", H5I_INVALID_HID, DWHERE ".fill_value: no datatype to read it as") ==
           0);
    H5Tclose(ct);
    {
        /* a vlen whose third element is bad: what the first two allocated is freed (ASan would say) */
        hid_t vt = H5Tvlen_create(vs);
        ASSERT(dcpl_bad("{\"fill_value\":[\"a\",\"b\",3]}", vt,
                        DWHERE ".fill_value[2]: must be a string or null") == 0);
        H5Tclose(vt);
    }
    H5Tclose(vs);
    return 0;
}

static int
test_dcpl_to_json_refuses(void)
{
    hid_t               p = H5Pcreate(H5P_DATASET_CREATE), vs, ss;
    hsize_t             d = 10;
    struct json_object *j = NULL;
    int                 rc;
    /* an external file list is recorded (vol/external.c keeps the data in the files) and comes back */
    H5Pset_external(p, "raw.bin", 0, 100);
    H5Pset_external(p, "more.bin", 8, H5F_UNLIMITED);
    ASSERT(h5zv_dcpl_to_json(p, H5T_NATIVE_INT, &j) == 0 && j);
    ASSERT_STR(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
               "{\"external\":[{\"name\":\"raw.bin\",\"offset\":0,\"size\":100},"
               "{\"name\":\"more.bin\",\"offset\":8,\"size\":-1}]}");
    H5Pclose(p);
    {
        char    nm[16];
        off_t   off = 0;
        hsize_t sz  = 0;
        ASSERT(h5zv_dcpl_from_json(j, H5T_NATIVE_INT, DWHERE, &p) == 0);
        ASSERT_EQ_INT(H5Pget_external_count(p), 2);
        ASSERT(H5Pget_external(p, 1, sizeof nm, nm, &off, &sz) >= 0 && off == 8 && sz == H5F_UNLIMITED);
        ASSERT_STR(nm, "more.bin");
        H5Pclose(p);
    }
    json_object_put(j);
    j = NULL;
    /* a virtual layout is "virtual"; its mappings are kept beside the dcpl (vol/virtual.c, test_virtual) */
    p  = H5Pcreate(H5P_DATASET_CREATE);
    vs = H5Screate_simple(1, &d, NULL);
    ss = H5Screate_simple(1, &d, NULL);
    ASSERT(H5Pset_virtual(p, vs, "src.h5", "/d", ss) >= 0);
    H5E_BEGIN_TRY { rc = h5zv_dcpl_to_json(p, H5T_NATIVE_INT, &j); }
    H5E_END_TRY
    ASSERT(rc == 0 && j);
    {
        struct json_object *l = NULL;
        hid_t               q = H5I_INVALID_HID;
        size_t              n = 1;
        ASSERT(json_object_object_get_ex(j, "layout", &l) && !strcmp(json_object_get_string(l), "virtual"));
        ASSERT(!json_object_object_get_ex(j, "virtual", NULL));
        ASSERT(h5zv_dcpl_from_json(j, H5T_NATIVE_INT, DWHERE, &q) == 0);
        ASSERT(H5Pget_layout(q) == H5D_VIRTUAL && H5Pget_virtual_count(q, &n) >= 0 && n == 0);
        H5Pclose(q);
    }
    json_object_put(j);
    H5Sclose(vs);
    H5Sclose(ss);
    H5Pclose(p);
    return 0;
}

/* ---- gcpl, fcpl, acpl ------------------------------------------------------------------------------ */
static int
gcpl_same(hid_t a, hid_t b)
{
    unsigned x1, x2, y1, y2, c1, c2;
    size_t   h1, h2;
    hbool_t  t1, t2;
    H5Pget_link_creation_order(a, &c1);
    H5Pget_link_creation_order(b, &c2);
    ASSERT_EQ_INT(c1, c2);
    H5Pget_link_phase_change(a, &x1, &y1);
    H5Pget_link_phase_change(b, &x2, &y2);
    ASSERT(x1 == x2 && y1 == y2);
    H5Pget_est_link_info(a, &x1, &y1);
    H5Pget_est_link_info(b, &x2, &y2);
    ASSERT(x1 == x2 && y1 == y2);
    H5Pget_local_heap_size_hint(a, &h1);
    H5Pget_local_heap_size_hint(b, &h2);
    ASSERT_EQ_INT(h1, h2);
    H5Pget_attr_creation_order(a, &c1);
    H5Pget_attr_creation_order(b, &c2);
    ASSERT_EQ_INT(c1, c2);
    H5Pget_attr_phase_change(a, &x1, &y1);
    H5Pget_attr_phase_change(b, &x2, &y2);
    ASSERT(x1 == x2 && y1 == y2);
    H5Pget_obj_track_times(a, &t1);
    H5Pget_obj_track_times(b, &t2);
    ASSERT_EQ_INT(t1, t2);
    ASSERT_EQ_INT(H5Pget_nfilters(a), H5Pget_nfilters(b));
    return 0;
}

typedef int (*to_json_fn)(hid_t, struct json_object **);
typedef int (*from_json_fn)(struct json_object *, const char *, hid_t *);

static int
plist_rt(hid_t p, to_json_fn to, from_json_fn from, char *text, size_t ntext, hid_t *back)
{
    struct json_object *j = NULL, *k;
    if (to(p, &j) != 0)
        FAILF("to_json failed: %s", errors());
    snprintf(text, ntext, "%s", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    json_object_put(j);
    ASSERT((k = json_tokener_parse(text)));
    if (from(k, "'/zarr.json' _h5zarr.x", back) != 0)
        FAILF("from_json failed for %s: %s", text, errors());
    json_object_put(k);
    return 0;
}

static int
plist_bad(from_json_fn from, const char *doc, const char *needle)
{
    struct json_object *j = json_tokener_parse(doc);
    hid_t               p = H5I_INVALID_HID;
    int                 rc;
    if (!j)
        FAILF("test document does not parse: %s", doc);
    H5E_BEGIN_TRY { rc = from(j, "'/zarr.json' _h5zarr.x", &p); }
    H5E_END_TRY
    json_object_put(j);
    if (rc == 0 || p >= 0)
        FAILF("accepted: %s", doc);
    if (!strstr(errors(), needle))
        FAILF("for %s: expected \"%s\" in \"%s\"", doc, needle, errbuf);
    return 0;
}

static int
test_gcpl(void)
{
    char  text[1024];
    hid_t p = H5Pcreate(H5P_GROUP_CREATE), b;
    ASSERT(plist_rt(p, h5zv_gcpl_to_json, h5zv_gcpl_from_json, text, sizeof text, &b) == 0);
    ASSERT_STR(text, "{}");
    H5Pclose(b);
    H5Pset_link_creation_order(p, H5P_CRT_ORDER_TRACKED);
    H5Pset_link_phase_change(p, 10, 3);
    H5Pset_est_link_info(p, 20, 16);
    H5Pset_local_heap_size_hint(p, 1024);
    H5Pset_attr_creation_order(p, H5P_CRT_ORDER_TRACKED);
    H5Pset_obj_track_times(p, false);
    H5Pset_deflate(p, 3);
    ASSERT(plist_rt(p, h5zv_gcpl_to_json, h5zv_gcpl_from_json, text, sizeof text, &b) == 0);
    ASSERT_STR(text,
               "{\"link_creation_order\":\"tracked\",\"link_phase_change\":[10,3],\"est_link_info\":[20,16],"
               "\"local_heap_size_hint\":1024,\"attr_creation_order\":\"tracked\",\"track_times\":false,"
               "\"filters\":[{\"id\":1,\"flags\":1,\"name\":\"deflate\",\"cd_values\":[3]}]}");
    ASSERT(gcpl_same(p, b) == 0);
    H5Pclose(b);
    H5Pclose(p);

    ASSERT(plist_bad(h5zv_gcpl_from_json, "{\"link_phase_change\":[3,10]}",
                     "_h5zarr.x.link_phase_change: max_compact 3 is below min_dense 10") == 0);
    ASSERT(plist_bad(h5zv_gcpl_from_json, "{\"est_link_info\":[70000,1]}",
                     "_h5zarr.x.est_link_info[0]: 70000 is out of range") == 0);
    ASSERT(plist_bad(h5zv_gcpl_from_json, "{\"link_creation_order\":1}",
                     "_h5zarr.x.link_creation_order: must be a string") == 0);
    ASSERT(plist_bad(h5zv_gcpl_from_json, "{\"local_heap_size_hint\":-1}",
                     "_h5zarr.x.local_heap_size_hint: -1 is out of range") == 0);
    ASSERT(plist_bad(h5zv_gcpl_from_json, "{\"userblock\":512}", "_h5zarr.x.userblock: unknown key") == 0);
    return 0;
}

static int
test_fcpl(void)
{
    char                  text[2048];
    hid_t                 p = H5Pcreate(H5P_FILE_CREATE), b;
    hsize_t               ub, ps, thr;
    size_t                sa, ss;
    unsigned              ik, lk, n, fl, ms, ml, mb;
    H5F_fspace_strategy_t st;
    hbool_t               pe;

    ASSERT(plist_rt(p, h5zv_fcpl_to_json, h5zv_fcpl_from_json, text, sizeof text, &b) == 0);
    ASSERT_STR(text, "{}");
    H5Pclose(b);
    H5Pset_userblock(p, 1024);
    H5Pset_sizes(p, 4, 4);
    H5Pset_sym_k(p, 32, 8);
    H5Pset_istore_k(p, 64);
    H5Pset_shared_mesg_nindexes(p, 2);
    H5Pset_shared_mesg_index(p, 0, H5O_SHMESG_DTYPE_FLAG | H5O_SHMESG_ATTR_FLAG, 40);
    H5Pset_shared_mesg_index(p, 1, H5O_SHMESG_SDSPACE_FLAG, 0);
    H5Pset_shared_mesg_phase_change(p, 60, 50);
    H5Pset_file_space_strategy(p, H5F_FSPACE_STRATEGY_PAGE, true, 2);
    H5Pset_file_space_page_size(p, 8192);
    H5Pset_link_creation_order(p, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    ASSERT(plist_rt(p, h5zv_fcpl_to_json, h5zv_fcpl_from_json, text, sizeof text, &b) == 0);
    ASSERT(strstr(text,
                  "\"userblock\":1024,\"sizes\":[4,4],\"sym_k\":[32,8],\"istore_k\":64,"
                  "\"shared_mesg\":[{\"types\":[\"datatype\",\"attr\"],\"min_size\":40},"
                  "{\"types\":[\"dataspace\"],\"min_size\":0}],\"shared_mesg_phase_change\":[60,50],"
                  "\"file_space_strategy\":\"page\",\"file_space_persist\":true,\"file_space_threshold\":2,"
                  "\"file_space_page_size\":8192,\"link_creation_order\":\"indexed\""));
    H5Pget_userblock(b, &ub);
    ASSERT_EQ_INT(ub, 1024);
    H5Pget_sizes(b, &sa, &ss);
    ASSERT(sa == 4 && ss == 4);
    H5Pget_sym_k(b, &ik, &lk);
    ASSERT(ik == 32 && lk == 8);
    H5Pget_istore_k(b, &ik);
    ASSERT_EQ_INT(ik, 64);
    H5Pget_shared_mesg_nindexes(b, &n);
    ASSERT_EQ_INT(n, 2);
    H5Pget_shared_mesg_index(b, 0, &fl, &ms);
    ASSERT(fl == (H5O_SHMESG_DTYPE_FLAG | H5O_SHMESG_ATTR_FLAG) && ms == 40);
    H5Pget_shared_mesg_index(b, 1, &fl, &ms);
    ASSERT(fl == H5O_SHMESG_SDSPACE_FLAG && ms == 0);
    H5Pget_shared_mesg_phase_change(b, &ml, &mb);
    ASSERT(ml == 60 && mb == 50);
    H5Pget_file_space_strategy(b, &st, &pe, &thr);
    ASSERT(st == H5F_FSPACE_STRATEGY_PAGE && pe && thr == 2);
    H5Pget_file_space_page_size(b, &ps);
    ASSERT_EQ_INT(ps, 8192);
    ASSERT(gcpl_same(p, b) == 0);
    H5Pclose(b);
    H5Pclose(p);

    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"userblock\":1000}",
                     "_h5zarr.x.userblock: 1000 is not 0 or a power of two >= 512") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"userblock\":\"1k\"}",
                     "_h5zarr.x.userblock: must be an integer") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"sizes\":[3,8]}",
                     "_h5zarr.x.sizes: sizes must be 2, 4, 8 or 16") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"sizes\":[32,8]}",
                     "_h5zarr.x.sizes[0]: 32 is out of range (2..16)") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"sym_k\":[0,4]}", "_h5zarr.x.sym_k[0]: 0 is out of range") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"istore_k\":40000}",
                     "_h5zarr.x.istore_k: 40000 is out of range") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"shared_mesg\":[{\"types\":[\"foo\"],\"min_size\":1}]}",
                     "_h5zarr.x.shared_mesg[0].types[0]: must be \"dataspace\"") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"shared_mesg\":[{\"types\":[\"fill\"]}]}",
                     "_h5zarr.x.shared_mesg[0].min_size: missing (required)") == 0);
    ASSERT(
        plist_bad(
            h5zv_fcpl_from_json,
            "{\"shared_mesg\":[{\"types\":[\"fill\"],\"min_size\":1},{\"types\":[\"fill\"],\"min_size\":1},"
            "{\"types\":[\"fill\"],\"min_size\":1},{\"types\":[\"fill\"],\"min_size\":1},{\"types\":["
            "\"fill\"],"
            "\"min_size\":1},{\"types\":[\"fill\"],\"min_size\":1},{\"types\":[\"fill\"],\"min_size\":1},"
            "{\"types\":[\"fill\"],\"min_size\":1},{\"types\":[\"fill\"],\"min_size\":1}]}",
            "_h5zarr.x.shared_mesg: must have 1 to 8 entries, not 9") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"shared_mesg_phase_change\":[10,40]}",
                     "_h5zarr.x.shared_mesg_phase_change: min_btree 40 is above max_list 10 + 1") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"file_space_strategy\":\"best\"}",
                     "_h5zarr.x.file_space_strategy: \"best\" is not one of") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"file_space_page_size\":100}",
                     "_h5zarr.x.file_space_page_size: 100 is out of range (512..1073741824)") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"link_phase_change\":[1]}",
                     "_h5zarr.x.link_phase_change: must have 2 to 2 entries, not 1") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"file_space_persist\":1}",
                     "_h5zarr.x.file_space_persist: must be true or false, not an integer") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"file_space_threshold\":-1}",
                     "_h5zarr.x.file_space_threshold: -1 is out of range") == 0);
    ASSERT(plist_bad(h5zv_fcpl_from_json, "{\"file_space_threshold\":\"2\"}",
                     "_h5zarr.x.file_space_threshold: must be an integer, not a string") == 0);
    return 0;
}

static int
test_acpl(void)
{
    char       text[256];
    hid_t      p = H5Pcreate(H5P_ATTRIBUTE_CREATE), b;
    H5T_cset_t c;
    ASSERT(plist_rt(p, h5zv_acpl_to_json, h5zv_acpl_from_json, text, sizeof text, &b) == 0);
    ASSERT_STR(text, "{}");
    H5Pclose(b);
    H5Pset_char_encoding(p, H5T_CSET_UTF8);
    ASSERT(plist_rt(p, h5zv_acpl_to_json, h5zv_acpl_from_json, text, sizeof text, &b) == 0);
    ASSERT_STR(text, "{\"cset\":\"utf8\"}");
    H5Pget_char_encoding(b, &c);
    ASSERT_EQ_INT(c, H5T_CSET_UTF8);
    H5Pclose(b);
    H5Pclose(p);
    ASSERT(plist_bad(h5zv_acpl_from_json, "{\"cset\":\"latin1\"}",
                     "_h5zarr.x.cset: \"latin1\" is not one of") == 0);
    ASSERT(plist_bad(h5zv_acpl_from_json, "\"utf8\"", "_h5zarr.x: must be a JSON object, not a string") == 0);
    return 0;
}

/* ---- through the connector: stores whose reserved fields are JSON, corrupted field by field ------- */
static char *
slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *b = NULL;
    long  len;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (b = malloc((size_t)len + 1)) && fread(b, 1, (size_t)len, f) == (size_t)len) {
        b[len] = '\0';
        *n     = (size_t)len;
    }
    else {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

/* Sets _h5zarr.<key> (or, with `field`, the dotted path <key>.<field>: objects all the way) of the
 * zarr.json at `doc` (its top-level reserved object) to the JSON text `val`. */
static int
corrupt(const char *doc, const char *key, const char *field, const char *val)
{
    struct json_object *j = json_object_from_file(doc), *m, *k;
    char                path[256], *last, *dot;
    ASSERT(j);
    ASSERT(json_object_object_get_ex(j, H5ZV_META_KEY, &m));
    snprintf(path, sizeof path, "%s%s%s", key, field ? "." : "", field ? field : "");
    last = path;
    k    = m;
    while ((dot = strchr(last, '.'))) {
        *dot = '\0';
        ASSERT(json_object_object_get_ex(k, last, &k) && json_object_is_type(k, json_type_object));
        last = dot + 1;
    }
    json_object_object_add(k, last, json_tokener_parse(val));
    ASSERT(json_object_to_file_ext(doc, j, JSON_C_TO_STRING_PRETTY) == 0);
    json_object_put(j);
    return 0;
}

static int
make_store(const char *dir)
{
    hid_t fapl = h5t_zarr_fapl(3), fcpl = H5Pcreate(H5P_FILE_CREATE), gcpl = H5Pcreate(H5P_GROUP_CREATE), f,
          g, e;
    short v;
    ASSERT(fapl >= 0);
    H5Pset_sym_k(fcpl, 32, 8);
    H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED);
    H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    H5Pset_link_phase_change(gcpl, 10, 3);
    ASSERT((f = H5Fcreate(dir, H5F_ACC_TRUNC, fcpl, fapl)) >= 0);
    ASSERT((g = H5Gcreate2(f, "g", H5P_DEFAULT, gcpl, H5P_DEFAULT)) >= 0);
    e = H5Tenum_create(H5T_NATIVE_SHORT);
    v = -5;
    H5Tenum_insert(e, "LOW", &v);
    v = 5;
    H5Tenum_insert(e, "HIGH", &v);
    ASSERT(H5Tcommit2(f, "t", e, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    {
        /* a dataset of a transient copy of the enum (its type recorded), chunked, deflated, fill LOW */
        hid_t   dcpl = H5Pcreate(H5P_DATASET_CREATE), sp, d, te = H5Tcopy(e);
        hsize_t n = 8, c = 4;
        short   fv = -5;
        H5Pset_chunk(dcpl, 1, &c);
        H5Pset_deflate(dcpl, 4);
        H5Pset_fill_value(dcpl, te, &fv);
        H5Pset_obj_track_times(dcpl, false);
        sp = H5Screate_simple(1, &n, NULL);
        ASSERT((d = H5Dcreate2(f, "d", te, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
        H5Dclose(d);
        H5Sclose(sp);
        H5Tclose(te);
        H5Pclose(dcpl);
    }
    H5Tclose(e);
    {
        /* an extendable dataset of vlen int32 with a user fill {1, 2}: kept as data, _h5zarr.fill_packed
         * (base64) */
        hid_t   vt = H5Tvlen_create(H5T_NATIVE_INT), dcpl = H5Pcreate(H5P_DATASET_CREATE), sp, d;
        hsize_t n = 4, c = 4, mx = H5S_UNLIMITED;
        int     two[2] = {1, 2};
        hvl_t   fv     = {2, two};
        H5Pset_chunk(dcpl, 1, &c);
        H5Pset_fill_value(dcpl, vt, &fv);
        sp = H5Screate_simple(1, &n, &mx); /* unlimited: _h5zarr.maxdims */
        ASSERT((d = H5Dcreate2(f, "vl", vt, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
        H5Dclose(d);
        H5Sclose(sp);
        H5Pclose(dcpl);
        H5Tclose(vt);
    }
    {
        /* attributes of /g whose values are base64: a compound ("raw") and a vlen int ("packed") */
        hid_t ct = H5Tcreate(H5T_COMPOUND, 12), vt = H5Tvlen_create(H5T_NATIVE_INT),
              sp = H5Screate(H5S_SCALAR), at;
        struct {
            int    a;
            double b;
        } __attribute__((packed)) cv = {3, 0.5};
        int   three[3]               = {7, 8, 9};
        hvl_t vv                     = {3, three};
        H5Tinsert(ct, "a", 0, H5T_NATIVE_INT);
        H5Tinsert(ct, "b", 4, H5T_NATIVE_DOUBLE);
        ASSERT((at = H5Acreate2(g, "cpx", ct, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Awrite(at, ct, &cv) >= 0);
        H5Aclose(at);
        ASSERT((at = H5Acreate2(g, "vla", vt, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Awrite(at, vt, &vv) >= 0);
        H5Aclose(at);
        H5Sclose(sp);
        H5Tclose(vt);
        H5Tclose(ct);
    }
    {
        /* attributes: a scalar int (the compact record "i4<"), a fixed UTF-8 string with an acpl */
        hid_t sp = H5Screate(H5S_SCALAR), st = str_type(5, H5T_STR_NULLPAD, H5T_CSET_UTF8),
              acpl = H5Pcreate(H5P_ATTRIBUTE_CREATE), at;
        int x      = 42;
        H5Pset_char_encoding(acpl, H5T_CSET_UTF8);
        ASSERT((at = H5Acreate2(f, "a", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
        ASSERT(H5Awrite(at, H5T_NATIVE_INT, &x) >= 0);
        H5Aclose(at);
        ASSERT((at = H5Acreate2(g, "s", st, sp, acpl, H5P_DEFAULT)) >= 0);
        ASSERT(H5Awrite(at, st, "hello") >= 0);
        H5Aclose(at);
        H5Pclose(acpl);
        H5Tclose(st);
        H5Sclose(sp);
    }
    H5Gclose(g);
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(gcpl);
    H5Pclose(fcpl);
    H5Pclose(fapl);
    return 0;
}

static int
test_store_json_fields(void)
{
    const char *tmp = test_tmpdir("reserved_json");
    char        dir[4096], doc[4200], *text;
    size_t      n;
    hid_t       fapl = h5t_zarr_fapl(3), f, g, p, t;
    unsigned    ik, lk, crt, mc, md;
    ASSERT(tmp && fapl >= 0);
    snprintf(dir, sizeof dir, "%s/ok.zarr", tmp);
    ASSERT(make_store(dir) == 0);
    /* the documents hold JSON, not HDF5's encodings */
    snprintf(doc, sizeof doc, "%s/g/zarr.json", dir);
    ASSERT((text = slurp(doc, &n)));
    ASSERT(strstr(text, "\"gcpl\":{") || strstr(text, "\"gcpl\": {"));
    ASSERT(strstr(text, "\"link_creation_order\":") && strstr(text, "\"indexed\""));
    free(text);
    snprintf(doc, sizeof doc, "%s/t/zarr.json", dir);
    ASSERT((text = slurp(doc, &n)));
    ASSERT(strstr(text, "\"class\":") && strstr(text, "\"enum\"") && strstr(text, "\"LOW\""));
    free(text);
    snprintf(doc, sizeof doc, "%s/zarr.json", dir);
    ASSERT((text = slurp(doc, &n)));
    ASSERT(strstr(text, "\"a\":\"i4<\"") || strstr(text, "\"a\": \"i4<\""));
    free(text);
    snprintf(doc, sizeof doc, "%s/d/zarr.json", dir);
    ASSERT((text = slurp(doc, &n)));
    ASSERT(strstr(text, "\"fill_value\":-5") || strstr(text, "\"fill_value\": -5"));
    ASSERT(strstr(text, "\"track_times\":false") || strstr(text, "\"track_times\": false"));
    free(text);
    /* and read back as written */
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((p = H5Fget_create_plist(f)) >= 0);
    H5Pget_sym_k(p, &ik, &lk);
    ASSERT(ik == 32 && lk == 8);
    H5Pclose(p);
    ASSERT((g = H5Gopen2(f, "g", H5P_DEFAULT)) >= 0 && (p = H5Gget_create_plist(g)) >= 0);
    H5Pget_link_creation_order(p, &crt);
    H5Pget_link_phase_change(p, &mc, &md);
    ASSERT(crt == (H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) && mc == 10 && md == 3);
    H5Pclose(p);
    H5Gclose(g);
    ASSERT((t = H5Topen2(f, "t", H5P_DEFAULT)) >= 0);
    {
        hid_t e = H5Tenum_create(H5T_NATIVE_SHORT);
        short v = -5;
        H5Tenum_insert(e, "LOW", &v);
        v = 5;
        H5Tenum_insert(e, "HIGH", &v);
        ASSERT(H5Tequal(t, e) > 0);
        H5Tclose(e);
    }
    H5Tclose(t);
    {
        hid_t      at, ty, ap;
        int        x      = 0;
        char       buf[6] = "";
        H5T_cset_t cs;
        ASSERT((at = H5Aopen(f, "a", H5P_DEFAULT)) >= 0 && (ty = H5Aget_type(at)) >= 0);
        ASSERT(H5Tequal(ty, H5T_STD_I32LE) > 0 && H5Aread(at, H5T_NATIVE_INT, &x) >= 0 && x == 42);
        H5Tclose(ty);
        H5Aclose(at);
        ASSERT((at = H5Aopen_by_name(f, "g", "s", H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
               (ty = H5Aget_type(at)) >= 0);
        ASSERT(H5Tget_size(ty) == 5 && H5Tget_cset(ty) == H5T_CSET_UTF8 &&
               H5Tget_strpad(ty) == H5T_STR_NULLPAD);
        ASSERT(H5Aread(at, ty, buf) >= 0 && !memcmp(buf, "hello", 5));
        ASSERT((ap = H5Aget_create_plist(at)) >= 0 && H5Pget_char_encoding(ap, &cs) >= 0 &&
               cs == H5T_CSET_UTF8);
        H5Pclose(ap);
        H5Tclose(ty);
        H5Aclose(at);
    }
    {
        hid_t            d, dp, dt;
        short            fv = 0;
        H5D_fill_value_t fs;
        unsigned         fl, cd[4];
        size_t           nc = 4;
        hsize_t          c  = 0;
        hbool_t          tt = true;
        ASSERT((d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0 && (dp = H5Dget_create_plist(d)) >= 0);
        ASSERT((dt = H5Dget_type(d)) >= 0 && H5Tget_class(dt) == H5T_ENUM && H5Tget_nmembers(dt) == 2);
        ASSERT(H5Pget_chunk(dp, 1, &c) == 1 && c == 4);
        ASSERT(H5Pget_filter2(dp, 0, &fl, &nc, cd, 0, NULL, NULL) == H5Z_FILTER_DEFLATE && cd[0] == 4);
        ASSERT(H5Pfill_value_defined(dp, &fs) >= 0 && fs == H5D_FILL_VALUE_USER_DEFINED);
        ASSERT(H5Pget_fill_value(dp, dt, &fv) >= 0 && fv == -5);
        ASSERT(H5Pget_obj_track_times(dp, &tt) >= 0 && !tt);
        H5Tclose(dt);
        H5Pclose(dp);
        H5Dclose(d);
    }
    ASSERT(H5Fclose(f) >= 0);
    H5Pclose(fapl);
    return 0;
}

/* One corrupted field: `doc` (relative to a fresh store) gets `key`[.`field`] = `val` (NULL: the string
 * there cut to half its length, a multiple of 4: truncated base64); then `op` (0: open the file, 1: the
 * gcpl of /g, 2: open the committed type /t, 3: open attribute /a, 4: open attribute /g/s, 5: the acpl
 * of /g/s, 6: the dcpl of /d, 7: open /d, 8: the dcpl of /vl, 9: read attribute /g/cpx, 10: read
 * attribute /g/vla, 11: open /vl, 12: open group /g) must fail with `needle` in the messages, and no file of
 * the store changes (opened read-write). */
static int
store_bad(const char *name, const char *rel, const char *key, const char *field, const char *val, int op,
          const char *needle)
{
    const char *tmp = test_tmpdir("reserved_json_bad");
    char        dir[4096], doc[4300], *before, *after;
    size_t      nb = 0, na = 0;
    hid_t       fapl = h5t_zarr_fapl(3), f = H5I_INVALID_HID, g, x = H5I_INVALID_HID;
    ASSERT(tmp && fapl >= 0);
    snprintf(dir, sizeof dir, "%s/%s.zarr", tmp, name);
    ASSERT(make_store(dir) == 0);
    snprintf(doc, sizeof doc, "%s/%s", dir, rel);
    if (!val) {
        /* truncated: the stored string, cut */
        struct json_object *j = json_object_from_file(doc), *a, *m, *k;
        char                path[256], *last, *dot, cut[4096];
        const char         *str;
        (void)a;
        ASSERT(j && json_object_object_get_ex(j, H5ZV_META_KEY, &m));
        snprintf(path, sizeof path, "%s%s%s", key, field ? "." : "", field ? field : "");
        for (last = path, k = m; (dot = strchr(last, '.')); last = dot + 1) {
            *dot = '\0';
            ASSERT(json_object_object_get_ex(k, last, &k));
        }
        ASSERT(json_object_object_get_ex(k, last, &k));
        bool list = json_object_is_type(k, json_type_array); /* packed values: cut the first */
        if (list)
            k = json_object_array_get_idx(k, 0);
        ASSERT(json_object_is_type(k, json_type_string) && (str = json_object_get_string(k)) &&
               strlen(str) >= 8);
        snprintf(cut, sizeof cut, "%s\"%.*s\"%s", list ? "[" : "", (int)(strlen(str) / 8 * 4), str,
                 list ? "]" : "");
        json_object_put(j);
        ASSERT(corrupt(doc, key, field, cut) == 0);
    }
    else
        ASSERT(corrupt(doc, key, field, val) == 0);
    ASSERT((before = slurp(doc, &nb)));
    errbuf[0] = '\0';
    H5E_BEGIN_TRY
    {
        f = H5Fopen(dir, H5F_ACC_RDWR, fapl);
        if (f >= 0 && op == 1 && (g = H5Gopen2(f, "g", H5P_DEFAULT)) >= 0) {
            x = H5Gget_create_plist(g);
            if (x < 0)
                errors();
            H5Gclose(g);
        }
        else if (f >= 0 && op == 2)
            x = H5Topen2(f, "t", H5P_DEFAULT);
        else if (f >= 0 && op == 12)
            x = H5Gopen2(f, "g", H5P_DEFAULT);
        else if (f >= 0 && (op == 6 || op == 7 || op == 11)) {
            x = H5Dopen2(f, op == 11 ? "vl" : "d", H5P_DEFAULT);
            if (x >= 0 && op == 6) {
                hid_t dp = H5Dget_create_plist(x);
                if (dp < 0)
                    errors(); /* before H5Dclose clears the stack */
                H5Dclose(x);
                x = dp;
            }
        }
        else if (f >= 0 && (op == 3 || op == 4))
            x = H5Aopen_by_name(f, op == 3 ? "." : "g", op == 3 ? "a" : "s", H5P_DEFAULT, H5P_DEFAULT);
        else if (f >= 0 && op == 5 && (g = H5Aopen_by_name(f, "g", "s", H5P_DEFAULT, H5P_DEFAULT)) >= 0) {
            x = H5Aget_create_plist(g);
            if (x < 0)
                errors();
            H5Aclose(g);
        }
        else if (f >= 0 && op == 8 && (g = H5Dopen2(f, "vl", H5P_DEFAULT)) >= 0) {
            x = H5Dget_create_plist(g);
            if (x < 0)
                errors();
            H5Dclose(g);
        }
        else if (f >= 0 && (op == 9 || op == 10) &&
                 (g = H5Aopen_by_name(f, "g", op == 9 ? "cpx" : "vla", H5P_DEFAULT, H5P_DEFAULT)) >= 0) {
            hid_t         t = H5Aget_type(g);
            unsigned char buf[64];
            x = H5Aread(g, t, buf) < 0 ? H5I_INVALID_HID : 0;
            if (x < 0)
                errors();
            H5Tclose(t);
            H5Aclose(g);
        }
    }
    H5E_END_TRY
    if (op == 0)
        ASSERT(f < 0);
    else
        ASSERT(f >= 0 && x < 0);
    if (op != 1 && op != 5 && (op < 8 || op == 11 || op == 12) && !(op == 6 && f >= 0 && *errbuf))
        errors();
    if (!strstr(errbuf, needle))
        FAILF("%s: expected \"%s\" in \"%s\"", name, needle, errbuf);
    if (f >= 0)
        ASSERT(H5Fclose(f) >= 0);
    ASSERT((after = slurp(doc, &na)));
    ASSERT(na == nb && !memcmp(before, after, nb));
    free(before);
    free(after);
    H5Pclose(fapl);
    return 0;
}

static int
test_store_corrupt_fields(void)
{
    ASSERT(store_bad("fcpl_range", "zarr.json", "fcpl", "sym_k", "[0,4]", 0,
                     "'/zarr.json' _h5zarr.fcpl.sym_k[0]: 0 is out of range (1..32767)") == 0);
    ASSERT(store_bad("fcpl_type", "zarr.json", "fcpl", NULL, "\"sym_k\"", 0,
                     "'/zarr.json' _h5zarr.fcpl: must be a JSON object, not a string") == 0);
    ASSERT(store_bad("fcpl_key", "zarr.json", "fcpl", "superblock", "2", 0,
                     "'/zarr.json' _h5zarr.fcpl.superblock: unknown key") == 0);
    ASSERT(store_bad("gcpl_range", "g/zarr.json", "gcpl", "link_phase_change", "[1,5]", 1,
                     "'/g/zarr.json' _h5zarr.gcpl.link_phase_change: max_compact 1 is below min_dense 5") ==
           0);
    ASSERT(store_bad("gcpl_type", "g/zarr.json", "gcpl", "link_creation_order", "true", 1,
                     "'/g/zarr.json' _h5zarr.gcpl.link_creation_order: must be a string, not a boolean") ==
           0);
    ASSERT(store_bad("gcpl_json", "g/zarr.json", "gcpl", NULL, "[1]", 1,
                     "'/g/zarr.json' _h5zarr.gcpl: must be a JSON object, not a list") == 0);
    ASSERT(store_bad("type_base", "t/zarr.json", "datatype", "base", "\"f4<\"", 2,
                     "'/t/zarr.json' _h5zarr.datatype.base: must be an integer type") == 0);
    ASSERT(store_bad(
               "type_value", "t/zarr.json", "datatype", "members", "[[\"LOW\",70000]]", 2,
               "'/t/zarr.json' _h5zarr.datatype.members[0][1]: 70000 does not fit the 16-bit signed base") ==
           0);
    ASSERT(store_bad("type_missing", "t/zarr.json", "datatype", NULL, "{\"class\":\"enum\"}", 2,
                     "'/t/zarr.json' _h5zarr.datatype.members: missing (required)") == 0);
    ASSERT(store_bad("dcpl_chunk", "d/zarr.json", "dcpl", "chunk", "[0]", 6,
                     "'/d/zarr.json' _h5zarr.dcpl.chunk[0]: 0 is out of range") == 0);
    ASSERT(store_bad("dcpl_fill", "d/zarr.json", "dcpl", "fill_value", "\"x\"", 6,
                     "'/d/zarr.json' _h5zarr.dcpl.fill_value: must be an integer, not a string") == 0);
    ASSERT(store_bad("dcpl_filters", "d/zarr.json", "dcpl", "filters", "[{\"id\":1,\"cd_values\":[-4]}]", 6,
                     "'/d/zarr.json' _h5zarr.dcpl.filters[0].cd_values[0]: -4 is out of range") == 0);
    ASSERT(store_bad("dset_type", "d/zarr.json", "type", "base", "\"f4<\"", 7,
                     "_h5zarr.type.base: must be an integer type") == 0);
    ASSERT(store_bad("attr_compact", "zarr.json", "attrs", "a", "\"i3<\"", 3,
                     "'/zarr.json' _h5zarr.attrs.a: \"i3<\" is not a datatype name") == 0);
    ASSERT(store_bad("attr_record_type", "zarr.json", "attrs", "a", "7", 3,
                     "'/zarr.json' _h5zarr.attrs.a: must be a datatype name or a record object") == 0);
    ASSERT(store_bad("attr_type", "g/zarr.json", "attrs", "s.type.size", "0", 4,
                     "'/g/zarr.json' _h5zarr.attrs.s.type.size: 0 is out of range") == 0);
    ASSERT(store_bad("attr_type_key", "g/zarr.json", "attrs", "s.type.colour", "1", 4,
                     "'/g/zarr.json' _h5zarr.attrs.s.type.colour: unknown key") == 0);
    ASSERT(store_bad("attr_shape_type", "g/zarr.json", "attrs", "s.shape", "\"3\"", 4,
                     "'/g/zarr.json' _h5zarr.attrs.s.shape: must be null or a list of at most 32 sizes") ==
           0);
    ASSERT(store_bad("attr_shape_size", "g/zarr.json", "attrs", "s.shape", "[2, -1]", 4,
                     "'/g/zarr.json' _h5zarr.attrs.s.shape: must be null or a list of at most 32 sizes") ==
           0);
    ASSERT(store_bad("attr_acpl", "g/zarr.json", "attrs", "s.acpl.cset", "\"latin1\"", 5,
                     "'/g/zarr.json' _h5zarr.attrs.s.acpl.cset: \"latin1\" is not one of") == 0);
    ASSERT(store_bad("attr_acpl_type", "g/zarr.json", "attrs", "s.acpl", "\"utf8\"", 5,
                     "'/g/zarr.json' _h5zarr.attrs.s.acpl: must be a JSON object, not a string") == 0);
    ASSERT(store_bad("dcpl_json", "d/zarr.json", "dcpl", NULL, "[]", 6,
                     "'/d/zarr.json' _h5zarr.dcpl: must be a JSON object, not a list") == 0);
    ASSERT(store_bad("dcpl_key", "d/zarr.json", "dcpl", "external_files", "[]", 6,
                     "'/d/zarr.json' _h5zarr.dcpl.external_files: unknown key") == 0);
    ASSERT(store_bad("type_json", "t/zarr.json", "datatype", NULL, "7", 2,
                     "'/t/zarr.json' _h5zarr.datatype: must be a JSON object, not an integer") == 0);
    /* the dataspace's fields */
    ASSERT(store_bad("maxdims_type", "vl/zarr.json", "maxdims", NULL, "[\"x\"]", 11,
                     "'/vl/zarr.json' _h5zarr.maxdims[0]: must be an integer, not a string") == 0);
    ASSERT(store_bad("maxdims_range", "vl/zarr.json", "maxdims", NULL, "[2]", 11,
                     "'/vl/zarr.json' _h5zarr.maxdims[0]: 2 is out of range") == 0);
    ASSERT(store_bad("maxdims_rank", "vl/zarr.json", "maxdims", NULL, "[-1,-1]", 11,
                     "'/vl/zarr.json' _h5zarr.maxdims: must have 1 to 1 entries, not 2") == 0);
    ASSERT(store_bad("maxdims_json", "vl/zarr.json", "maxdims", NULL, "-1", 11,
                     "'/vl/zarr.json' _h5zarr.maxdims: must be a list") == 0);
    ASSERT(store_bad("null_space_type", "d/zarr.json", "null_space", NULL, "\"yes\"", 7,
                     "'/d/zarr.json' _h5zarr.null_space: must be true or false, not a string") == 0);
    /* a group's link records (json-c aborts on a list or object operation on the wrong type: a store
     * whose root "order" was not a list crashed every program that listed it, found by fuzz_open) */
    ASSERT(store_bad("group_order_type", "zarr.json", "order", NULL, "7", 0,
                     "group '/': _h5zarr.order is not a list of link names") == 0);
    ASSERT(store_bad("group_order_name", "zarr.json", "order", NULL, "[\"g\", 5]", 0,
                     "group '/': _h5zarr.order[1] is not a link name") == 0);
    ASSERT(store_bad("group_corder", "zarr.json", "corder", NULL, "{\"g\": \"zero\"}", 0,
                     "group '/': _h5zarr.corder.g is not an integer") == 0);
    ASSERT(store_bad("group_next_corder", "zarr.json", "next_corder", NULL, "\"4\"", 0,
                     "group '/': _h5zarr.next_corder is not an integer") == 0);
    ASSERT(store_bad("array_aliases", "d/zarr.json", "aliases", NULL, "\"x\"", 7,
                     "array '/d': _h5zarr.aliases is not a list of link paths") == 0);
    ASSERT(store_bad("group_aliases", "g/zarr.json", "aliases", NULL, "[\"/a\", null]", 12,
                     "group '/g': _h5zarr.aliases[1] is not a link path") == 0);
    ASSERT(store_bad("group_links_type", "g/zarr.json", "links", NULL, "[]", 12,
                     "group '/g': _h5zarr.links is not an object of link records") == 0);
    ASSERT(store_bad("group_link_record", "g/zarr.json", "links", NULL, "{\"x\": {\"external\": \"f.h5\"}}",
                     12, "group '/g': _h5zarr.links.x is malformed") == 0);
    /* what is still base64 (values with no JSON form): wrong JSON type, not base64, truncated */
    ASSERT(store_bad("fill_packed_type", "vl/zarr.json", "fill_packed", NULL, "[1,2]", 8,
                     "dataset '/vl': _h5zarr.fill_packed is not base64 text") == 0);
    ASSERT(store_bad("fill_packed_text", "vl/zarr.json", "fill_packed", NULL, "\"**not base64**\"", 8,
                     "dataset '/vl': _h5zarr.fill_packed is not base64 text") == 0);
    ASSERT(store_bad("fill_packed_cut", "vl/zarr.json", "fill_packed", NULL, NULL, 8,
                     "dataset '/vl': _h5zarr.fill_packed does not match the dataset's datatype") == 0);
    ASSERT(store_bad("attr_raw_cut", "g/zarr.json", "attrs", "cpx.raw", NULL, 9,
                     "attribute 'cpx' of '/g': stored raw value has") == 0);
    ASSERT(store_bad("attr_raw_type", "g/zarr.json", "attrs", "cpx.raw", "{}", 9,
                     "attribute 'cpx' of '/g': stored raw value has") == 0);
    ASSERT(store_bad("attr_packed_cut", "g/zarr.json", "attrs", "vla.packed", NULL, 10,
                     "attribute 'vla' of '/g': stored element 0 doesn't match its type") == 0);
    ASSERT(store_bad("attr_packed_type", "g/zarr.json", "attrs", "vla.packed", "\"AAAA\"", 10,
                     "attribute 'vla' of '/g': stored packed value doesn't have 1 elements") == 0);
    return 0;
}

/* Base64 (RFC 4648) of n bytes, as the earlier form stored HDF5's encodings (malloc'ed). */
static char *
b64(const unsigned char *p, size_t n)
{
    static const char c[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char             *o = malloc(4 * ((n + 2) / 3) + 1), *q = o;
    for (size_t i = 0; o && i < n; i += 3) {
        unsigned v =
            (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        *q++ = c[v >> 18 & 63];
        *q++ = c[v >> 12 & 63];
        *q++ = i + 1 < n ? c[v >> 6 & 63] : '=';
        *q++ = i + 2 < n ? c[v & 63] : '=';
    }
    if (q)
        *q = '\0';
    return o;
}

/* Sets field `key`[.`field`] of the store document `rel` (in `dir`) to the base64 of `n` bytes `buf` (the
 * earlier form of a reserved field). */
static int
put_b64(const char *dir, const char *rel, const char *key, const char *field, const unsigned char *buf,
        size_t n)
{
    char doc[4300], val[8192], *enc;
    ASSERT((enc = b64(buf, n)));
    snprintf(val, sizeof val, "\"%s\"", enc);
    free(enc);
    snprintf(doc, sizeof doc, "%s/%s", dir, rel);
    return corrupt(doc, key, field, val);
}

static const char *const legacy_docs[] = {"zarr.json", "g/zarr.json", "t/zarr.json", "d/zarr.json"};

/* The store of test_store_legacy_fields reads as make_store wrote it (through `fapl`). */
static int
legacy_values(const char *dir, hid_t fapl, hid_t e)
{
    hid_t            f, g, p, t, at, ty, d, dp;
    unsigned         crt, mc, md, fl, cd[4];
    size_t           nc = 4;
    short            fv = 0;
    hsize_t          c  = 0;
    hbool_t          tt = true;
    H5D_fill_value_t fs;
    H5T_cset_t       cs;
    char             buf[6] = "";
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDONLY, fapl)) >= 0);
    ASSERT((g = H5Gopen2(f, "g", H5P_DEFAULT)) >= 0 && (p = H5Gget_create_plist(g)) >= 0);
    H5Pget_link_creation_order(p, &crt);
    H5Pget_link_phase_change(p, &mc, &md);
    ASSERT(crt == H5P_CRT_ORDER_TRACKED && mc == 12 && md == 4);
    H5Pclose(p);
    H5Gclose(g);
    ASSERT((t = H5Topen2(f, "t", H5P_DEFAULT)) >= 0 && H5Tequal(t, e) > 0);
    H5Tclose(t);
    ASSERT((at = H5Aopen(f, "a", H5P_DEFAULT)) >= 0 && (ty = H5Aget_type(at)) >= 0);
    ASSERT(H5Tequal(ty, H5T_STD_I16BE) > 0);
    H5Tclose(ty);
    H5Aclose(at);
    ASSERT((at = H5Aopen_by_name(f, "g", "s", H5P_DEFAULT, H5P_DEFAULT)) >= 0 && (ty = H5Aget_type(at)) >= 0);
    ASSERT(H5Tget_size(ty) == 5 && H5Tget_cset(ty) == H5T_CSET_UTF8 && H5Tget_strpad(ty) == H5T_STR_NULLPAD);
    ASSERT(H5Aread(at, ty, buf) >= 0 && !memcmp(buf, "hello", 5));
    ASSERT((p = H5Aget_create_plist(at)) >= 0 && H5Pget_char_encoding(p, &cs) >= 0 && cs == H5T_CSET_UTF8);
    H5Pclose(p);
    H5Tclose(ty);
    H5Aclose(at);
    ASSERT((d = H5Dopen2(f, "d", H5P_DEFAULT)) >= 0 && (dp = H5Dget_create_plist(d)) >= 0);
    ASSERT((ty = H5Dget_type(d)) >= 0 && H5Tget_class(ty) == H5T_ENUM && H5Tget_nmembers(ty) == 2);
    ASSERT(H5Pget_chunk(dp, 1, &c) == 1 && c == 4);
    ASSERT(H5Pget_filter2(dp, 0, &fl, &nc, cd, 0, NULL, NULL) == H5Z_FILTER_DEFLATE && cd[0] == 4);
    ASSERT(H5Pfill_value_defined(dp, &fs) >= 0 && fs == H5D_FILL_VALUE_USER_DEFINED);
    ASSERT(H5Pget_fill_value(dp, ty, &fv) >= 0 && fv == -5);
    ASSERT(H5Pget_obj_track_times(dp, &tt) >= 0 && !tt);
    H5Tclose(ty);
    H5Pclose(dp);
    H5Dclose(d);
    ASSERT(H5Fclose(f) >= 0);
    return 0;
}

/* Stores written in the earlier form (base64 of H5Pencode/H5Tencode in every reserved field: gcpl,
 * committed datatype, a dataset's type and dcpl, attribute records compact and full, acpl): by default
 * every such field is refused when its object is opened, with a message naming the document and the
 * field and saying how to convert, and nothing is written; with legacy_reserved=1 they read as before;
 * opened read-write with it, the store is rewritten in the JSON form, which then reads the same without
 * the opt-in. */
static int
test_store_legacy_fields(void)
{
    const char   *tmp = test_tmpdir("reserved_json_legacy");
    char          dir[4096], doc[4300], *before[4], *after;
    unsigned char buf[2048];
    size_t        n = sizeof buf, nb[4], na;
    hid_t fapl = h5t_zarr_fapl(3), lfapl = H5Pcreate(H5P_FILE_ACCESS), gcpl = H5Pcreate(H5P_GROUP_CREATE), e,
          te, f, x;
    ASSERT(tmp && fapl >= 0 && lfapl >= 0 && H5Pset_fapl_zarr_opts(lfapl, 3, "legacy_reserved=1") >= 0);
    snprintf(dir, sizeof dir, "%s/legacy.zarr", tmp);
    ASSERT(make_store(dir) == 0);
    /* the group's gcpl */
    H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED);
    H5Pset_link_phase_change(gcpl, 12, 4);
    ASSERT(H5Pencode2(gcpl, buf, &n, H5P_DEFAULT) >= 0 && n <= sizeof buf);
    ASSERT(put_b64(dir, "g/zarr.json", "gcpl", NULL, buf, n) == 0);
    /* the committed type, and the dataset's (a copy of the enum make_store commits) */
    {
        short v = -5;
        e       = H5Tenum_create(H5T_NATIVE_SHORT);
        H5Tenum_insert(e, "LOW", &v);
        v = 5;
        H5Tenum_insert(e, "HIGH", &v);
    }
    n = sizeof buf;
    ASSERT(H5Tencode(e, buf, &n) >= 0 && n <= sizeof buf);
    ASSERT(put_b64(dir, "t/zarr.json", "datatype", NULL, buf, n) == 0);
    ASSERT(put_b64(dir, "d/zarr.json", "type", NULL, buf, n) == 0);
    /* the dataset's dcpl: chunks of 4, deflate 4, fill LOW, no time tracking */
    {
        hid_t   dcpl = H5Pcreate(H5P_DATASET_CREATE);
        hsize_t c    = 4;
        short   fv   = -5;
        te           = H5Tcopy(e);
        H5Pset_chunk(dcpl, 1, &c);
        H5Pset_deflate(dcpl, 4);
        H5Pset_fill_value(dcpl, te, &fv);
        H5Pset_obj_track_times(dcpl, false);
        n = sizeof buf;
        ASSERT(H5Pencode2(dcpl, buf, &n, H5P_DEFAULT) >= 0 && n <= sizeof buf);
        ASSERT(put_b64(dir, "d/zarr.json", "dcpl", NULL, buf, n) == 0);
        H5Pclose(dcpl);
    }
    /* attribute records: /a a compact one of another type than make_store's; /g/s a full one */
    n = sizeof buf;
    ASSERT(H5Tencode(H5T_STD_I16BE, buf, &n) >= 0 && n <= sizeof buf);
    ASSERT(put_b64(dir, "zarr.json", "attrs", "a", buf, n) == 0);
    {
        hid_t st = str_type(5, H5T_STR_NULLPAD, H5T_CSET_UTF8), acpl = H5Pcreate(H5P_ATTRIBUTE_CREATE);
        n = sizeof buf;
        ASSERT(H5Tencode(st, buf, &n) >= 0 && n <= sizeof buf);
        ASSERT(put_b64(dir, "g/zarr.json", "attrs", "s.type", buf, n) == 0);
        H5Pset_char_encoding(acpl, H5T_CSET_UTF8);
        n = sizeof buf;
        ASSERT(H5Pencode2(acpl, buf, &n, H5P_DEFAULT) >= 0 && n <= sizeof buf);
        ASSERT(put_b64(dir, "g/zarr.json", "attrs", "s.acpl", buf, n) == 0);
        H5Pclose(acpl);
        H5Tclose(st);
    }
    for (int i = 0; i < 4; i++) {
        snprintf(doc, sizeof doc, "%s/%s", dir, legacy_docs[i]);
        ASSERT((before[i] = slurp(doc, &nb[i])));
    }

    /* 1. by default: each field refused, naming it, saying how to convert; opened read-write, nothing
     * changes */
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDWR, fapl)) >= 0);
    {
        static const char *const want[] = {
            "'/g/zarr.json' _h5zarr.gcpl: in the earlier binary form of _h5zarr (base64 of HDF5's H5Pencode",
            "'/t/zarr.json' _h5zarr.datatype: in the earlier binary form of _h5zarr (base64 of HDF5's "
            "H5Tencode",
            "'/zarr.json' _h5zarr.attrs.a: in the earlier binary form",
            "_h5zarr.type: in the earlier binary form",
            "'/g/zarr.json' _h5zarr.attrs.s.type: in the earlier binary form",
        };
        for (int i = 0; i < 5; i++) {
            hid_t g = H5I_INVALID_HID;
            x       = H5I_INVALID_HID;
            H5E_BEGIN_TRY
            {
                if (i == 0 && (g = H5Gopen2(f, "g", H5P_DEFAULT)) >= 0)
                    x = H5Gget_create_plist(g);
                else if (i == 1)
                    x = H5Topen2(f, "t", H5P_DEFAULT);
                else if (i == 2)
                    x = H5Aopen(f, "a", H5P_DEFAULT);
                else if (i == 3)
                    x = H5Dopen2(f, "d", H5P_DEFAULT);
                else if (i == 4)
                    x = H5Aopen_by_name(f, "g", "s", H5P_DEFAULT, H5P_DEFAULT);
            }
            H5E_END_TRY
            ASSERT(x < 0);
            errors();
            if (!strstr(errbuf, want[i]) || !strstr(errbuf, "legacy_reserved=1") ||
                !strstr(errbuf, "open it read-write once"))
                FAILF("refusal %d: expected \"%s\" and how to convert in \"%s\"", i, want[i], errbuf);
            if (g >= 0)
                H5Gclose(g);
        }
    }
    ASSERT(H5Fclose(f) >= 0);
    for (int i = 0; i < 4; i++) {
        snprintf(doc, sizeof doc, "%s/%s", dir, legacy_docs[i]);
        ASSERT((after = slurp(doc, &na)) && na == nb[i] && !memcmp(after, before[i], na));
        free(after);
    }
    /* 2. with the opt-in, read-only: as before, nothing written */
    ASSERT(legacy_values(dir, lfapl, e) == 0);
    for (int i = 0; i < 4; i++) {
        snprintf(doc, sizeof doc, "%s/%s", dir, legacy_docs[i]);
        ASSERT((after = slurp(doc, &na)) && na == nb[i] && !memcmp(after, before[i], na));
        free(after);
        free(before[i]);
    }
    /* 3. with the opt-in, read-write: converted (no field of the earlier form is left), then read without
     * the opt-in */
    ASSERT((f = H5Fopen(dir, H5F_ACC_RDWR, lfapl)) >= 0 && H5Fclose(f) >= 0);
    for (int i = 0; i < 4; i++) {
        struct json_object *j, *a, *m, *v;
        snprintf(doc, sizeof doc, "%s/%s", dir, legacy_docs[i]);
        ASSERT((j = json_object_from_file(doc)) && json_object_object_get_ex(j, H5ZV_META_KEY, &m));
        if (i == 0) {
            ASSERT(json_object_object_get_ex(m, "attrs", &a) && json_object_object_get_ex(a, "a", &v));
            ASSERT_STR(json_object_get_string(v), "i2>");
        }
        if (i == 1) {
            ASSERT(json_object_object_get_ex(m, "gcpl", &v) && json_object_is_type(v, json_type_object));
            ASSERT(json_object_object_get_ex(m, "attrs", &a) && json_object_object_get_ex(a, "s", &a));
            ASSERT(json_object_object_get_ex(a, "type", &v) && json_object_is_type(v, json_type_object));
            ASSERT(json_object_object_get_ex(a, "acpl", &v) && json_object_is_type(v, json_type_object));
        }
        if (i == 2)
            ASSERT(json_object_object_get_ex(m, "datatype", &v) && json_object_is_type(v, json_type_object));
        if (i == 3) {
            ASSERT(json_object_object_get_ex(m, "type", &v) && json_object_is_type(v, json_type_object));
            ASSERT(json_object_object_get_ex(m, "dcpl", &v) && json_object_is_type(v, json_type_object));
        }
        json_object_put(j);
    }
    ASSERT(legacy_values(dir, fapl, e) == 0);
    H5Tclose(te);
    H5Tclose(e);
    H5Pclose(gcpl);
    H5Pclose(lfapl);
    H5Pclose(fapl);
    return 0;
}

static const test_entry tests[] = {
    TEST_ENTRY(type_short_names),
    TEST_ENTRY(type_atomic_objects),
    TEST_ENTRY(type_composites),
    TEST_ENTRY(type_to_json_refuses),
    TEST_ENTRY(type_corrupt),
    TEST_ENTRY(dcpl_roundtrip),
    TEST_ENTRY(fill_values),
    TEST_ENTRY(value_ids_closed),
    TEST_ENTRY(dcpl_corrupt),
    TEST_ENTRY(dcpl_to_json_refuses),
    TEST_ENTRY(gcpl),
    TEST_ENTRY(fcpl),
    TEST_ENTRY(acpl),
    TEST_ENTRY(store_json_fields),
    TEST_ENTRY(store_corrupt_fields),
    TEST_ENTRY(store_legacy_fields),
};

int
main(int argc, char **argv)
{
    h5zv_err_init();
    return RUN_TESTS(tests);
}
