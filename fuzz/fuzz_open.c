/*
 * fuzz_open.c: harness for the connector's open path: a fuzzed store opened, visited and read through
 * HDF5 with the zarr connector registered in-process (the vol/ sources are linked into this program,
 * so the connector and the harness share one core and one `memory://` registry).
 *
 * Input: a small store as a sequence of records, each "\n@@ KEY\n" followed by the value's bytes up to
 * the next record (bytes before the first record are ignored; at most FO_MAX_RECORDS records, keys of
 * at most FO_MAX_KEY bytes). Keys the store refuses (".." etc.) are skipped. The records go into the
 * memory store `memory://fuzz_open` (emptied first), which is then opened read-only with H5Fopen, and
 * every object H5Ovisit3 reaches is looked at: its info; its attributes (opened, type, space, read when
 * small, references opened and destroyed); for datasets type, space, dcpl (layout, chunk, filters,
 * fill value), dapl, storage size and a read of the whole dataset when small; for groups the links
 * (info, H5Lget_val of soft and external links, unpacked); for committed types the type and its tcpl.
 * With FUZZ_OPEN_KNOWN_ENCODINGS=1, every HDF5 binary encoding in `_h5zarr` (the base64 H5Pencode /
 * H5Tencode blobs: dcpl, gcpl, fcpl, acpl, type, compact attribute records; strings of 8 or more base64
 * characters there) that is not one the seeds hold is replaced by one that is (same key), before the
 * store is written (the JSON form that replaces them is fuzzed as it is): HDF5's decoders are not
 * written for hostile bytes (SECURITY.md; issue 14 replaces the encodings), and without this nearly
 * every finding is in H5Pdecode/H5Tdecode. That form is refused now unless the user opts in
 * (legacy_reserved=1, vol/reserved_legacy.c); FUZZ_OPEN_LEGACY=1 opens with the opt-in, so those
 * decoders are reached again (what the opt-in's warning is about). FUZZ_OPEN_DUMP=FILE writes the store as it
 * was opened (after that replacement) in the input format, which makes a finding of that mode replayable
 * without it. Each call may fail (that is what bad input is for) but must fail through HDF5's error stack; a
 * crash, a sanitizer report, a hang or an id left open after H5Fclose (checked with H5Fget_obj_count)
 * fails the run. Reads are bounded (FO_MAX_READ bytes per dataset or attribute, chunks as well), so a
 * valid store that asks for huge memory is skipped rather than read: SECURITY.md, "Resource use".
 *
 * fuzz_gen_seeds (replay --gen DIR) writes stores through the connector into memory stores and
 * serializes them in the input format: the committed seeds in fuzz/seeds/open/ were made that way.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "fuzz_common.h"
#include "h5zv.h"

#include <hdf5.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <string.h>

#include "h5zarr/h5zarr.h"

#define FO_URL         "memory://fuzz_open"
#define FO_SEP         "\n@@ "
#define FO_MAX_RECORDS 64
#define FO_MAX_KEY     256
#define FO_MAX_READ    ((size_t)1 << 20) /* bytes read per dataset or attribute */
#define FO_MAX_OBJECTS 256               /* objects looked at per input */

static void fo_known_setup(void);

/* The connector, registered once per process; HDF5 stays open for the process's life. */
static hid_t fo_vol = H5I_INVALID_HID;

/* What the last input got through (FUZZ_OPEN_VERBOSE=1 prints it): reads that succeeded. */
static struct {
    int attrs, dsets, refs, links;
} fo_seen;

static int
fo_setup(void)
{
    if (fo_vol >= 0)
        return 0;
    if (H5open() < 0)
        return -1;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* the class linked in here; HDF5 hands the same id to H5VLregister_connector_by_name("zarr") */
    fo_vol = H5VLregister_connector(&h5zv_class, H5P_DEFAULT);
    if (fo_vol < 0)
        return -1;
    if (getenv("FUZZ_OPEN_KNOWN_ENCODINGS") && !strcmp(getenv("FUZZ_OPEN_KNOWN_ENCODINGS"), "1"))
        fo_known_setup();
    return 0;
}

static hid_t
fo_fapl(int version)
{
    /* FUZZ_OPEN_LEGACY=1: the opt-in legacy_reserved=1, which hands `_h5zarr`'s earlier binary form to
     * HDF5's decoders (vol/reserved_legacy.c); by default that form is refused */
    const char   *lg   = getenv("FUZZ_OPEN_LEGACY");
    h5zarr_info_t info = {version, 1, H5ZARR_CREATE_ZARR,
                          lg && !strcmp(lg, "1") ? "legacy_reserved=1" : NULL};
    hid_t         fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_vol(fapl, fo_vol, &info) < 0) {
        H5Pclose(fapl);
        return H5I_INVALID_HID;
    }
    return fapl;
}

/* ---- known encodings (FUZZ_OPEN_KNOWN_ENCODINGS=1) --------------------------------------------------- */
#define FO_MAX_KNOWN 256
static struct {
    char *key, *val;
} fo_known[FO_MAX_KNOWN];
static int  fo_nknown;
static bool fo_known_mode;

static int fo_gen_store(const char *url, int version, int which);
static int fo_serialize_store(zarr_store *s, const char *path);

/* Keys of `_h5zarr` whose string values are HDF5 encodings; `in_attrs`: a compact attribute record. */
static bool
fo_enc_key(const char *key, bool in_attrs)
{
    static const char *const keys[] = {"dcpl", "gcpl", "fcpl", "acpl", "tcpl", "type"};
    if (in_attrs)
        return true;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strcmp(key, keys[i]))
            return true;
    return false;
}

/* True for a string that can be base64 of an HDF5 encoding (the JSON form's values, such as type short
 * names "f8<" or {"class": ...} objects, are fuzzed as they are). */
static bool
fo_is_b64(const char *v)
{
    size_t n = strlen(v);
    if (n < 8)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((v[i] >= 'A' && v[i] <= 'Z') || (v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') ||
              v[i] == '+' || v[i] == '/' || v[i] == '='))
            return false;
    return true;
}

/* Walks an `_h5zarr` value: collects (learn) or replaces unknown encodings. */
static void
fo_enc_walk(struct json_object *o, bool learn, int depth, bool in_attrs)
{
    if (depth > 16 || !json_object_is_type(o, json_type_object))
        return;
    json_object_object_foreach(o, key, v)
    {
        if (json_object_is_type(v, json_type_string) && fo_enc_key(key, in_attrs)) {
            const char *sv = json_object_get_string(v);
            const char *k = in_attrs ? "attr" : key, *rep = NULL;
            int         match = -1, same = 0;
            for (int i = 0; i < fo_nknown && match < 0; i++)
                if (!strcmp(fo_known[i].val, sv))
                    match = i;
            if (match >= 0 || !fo_is_b64(sv))
                continue;
            if (learn) {
                if (fo_nknown < FO_MAX_KNOWN) {
                    fo_known[fo_nknown].key   = strdup(k);
                    fo_known[fo_nknown++].val = strdup(sv);
                }
                continue;
            }
            /* a known encoding of this key, picked by the unknown one's length */
            for (int i = 0; i < fo_nknown; i++)
                same += !strcmp(fo_known[i].key, k);
            for (int i = 0, n = same ? (int)(strlen(sv) % (size_t)same) : 0; i < fo_nknown && same; i++)
                if (!strcmp(fo_known[i].key, k) && n-- == 0) {
                    rep = fo_known[i].val;
                    break;
                }
            json_object_object_add(o, key, json_object_new_string(rep ? rep : "default"));
        }
        else
            fo_enc_walk(v, learn, depth + 1, !strcmp(key, "attrs") || !strcmp(key, "hidden"));
    }
}

/* Finds `_h5zarr` objects anywhere in a document (attributes, consolidated metadata). */
static void
fo_enc_doc(struct json_object *o, bool learn, int depth)
{
    if (depth > 32)
        return;
    if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(o); i++)
            fo_enc_doc(json_object_array_get_idx(o, i), learn, depth + 1);
        return;
    }
    if (!json_object_is_type(o, json_type_object))
        return;
    json_object_object_foreach(o, key, v)
    {
        if (!strcmp(key, "_h5zarr"))
            fo_enc_walk(v, learn, 0, false);
        else
            fo_enc_doc(v, learn, depth + 1);
    }
}

static bool
fo_is_doc(const char *key)
{
    static const char *const docs[] = {"zarr.json", ".zattrs", ".zmetadata", ".zarray", ".zgroup"};
    size_t                   n      = strlen(key);
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        size_t k = strlen(docs[i]);
        if (n >= k && !strcmp(key + n - k, docs[i]))
            return true;
    }
    return false;
}

static int
fo_learn_key(const char *key, uint64_t size, void *ud)
{
    zarr_buf b = ZARR_BUF_INIT;
    (void)size;
    if (fo_is_doc(key) && zarr_store_get(ud, key, &b) == ZARR_OK && b.size < INT32_MAX) {
        struct json_tokener *tok = json_tokener_new();
        struct json_object  *j   = tok ? json_tokener_parse_ex(tok, (const char *)b.data, (int)b.size) : NULL;
        fo_enc_doc(j, true, 0);
        json_object_put(j);
        json_tokener_free(tok);
    }
    zarr_buf_free(&b);
    return 0;
}

/* Learns the encodings of the seed stores (written here through the connector). */
static void
fo_known_setup(void)
{
    for (int i = 0; i < 4; i++) {
        zarr_store *s = NULL;
        if (fo_gen_store("memory://fuzz_open_known", i % 2 ? 2 : 3, i / 2) == 0 &&
            zarr_store_open("memory://fuzz_open_known", ZARR_STORE_RDWR, &s) == ZARR_OK) {
            (void)zarr_store_list_keys(s, "", fo_learn_key, s);
            (void)zarr_store_del_prefix(s, "");
        }
        zarr_store_close(s);
    }
    fo_known_mode = fo_nknown > 0;
}

/* Stores `v` (`n` bytes) at `key`; in known-encodings mode documents have their encodings replaced. */
static void
fo_put(zarr_store *s, const char *key, const char *v, size_t n)
{
    struct json_tokener *tok;
    struct json_object  *j;
    if (!fo_known_mode || !fo_is_doc(key) || n > INT32_MAX || !(tok = json_tokener_new())) {
        (void)zarr_store_set(s, key, v, n);
        return;
    }
    j = json_tokener_parse_ex(tok, v, (int)n);
    if (j) { /* what follows the first value is dropped (the core may read it as whitespace) */
        const char *t;
        fo_enc_doc(j, false, 0);
        t = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        (void)zarr_store_set(s, key, t, strlen(t));
    }
    else
        (void)zarr_store_set(s, key, v, n); /* not JSON: as it is */
    json_object_put(j);
    json_tokener_free(tok);
}

/* Empties the fuzz store and fills it with the input's records. Returns the store (a reference the
 * caller closes) or NULL. */
static zarr_store *
fo_fill(const uint8_t *data, size_t size)
{
    zarr_store *s = NULL;
    const char *p, *end = (const char *)data + size;
    size_t      seplen = strlen(FO_SEP);
    int         nrec   = 0;

    if (zarr_store_open(FO_URL, ZARR_STORE_CREATE | ZARR_STORE_RDWR, &s) != ZARR_OK)
        return NULL;
    (void)zarr_store_del_prefix(s, "");
    p = memmem(data, size, FO_SEP, seplen);
    while (p && nrec < FO_MAX_RECORDS) {
        const char *k = p + seplen, *nl, *v, *next;
        char        key[FO_MAX_KEY + 1];
        size_t      klen;

        nl = memchr(k, '\n', (size_t)(end - k));
        if (!nl)
            break;
        v    = nl + 1;
        next = memmem(v, (size_t)(end - v), FO_SEP, seplen);
        klen = (size_t)(nl - k);
        if (klen > 0 && klen <= FO_MAX_KEY && !memchr(k, '\0', klen)) {
            memcpy(key, k, klen);
            key[klen] = '\0';
            fo_put(s, key, v, (size_t)((next ? next : end) - v));
        }
        nrec++;
        p = next;
    }
    return s;
}

/* ---- looking at what opened -------------------------------------------------------------------------- */

/* Bytes a read of `n` elements of memory type `t` needs, or 0 when over FO_MAX_READ. */
static size_t
fo_read_size(hid_t t, hssize_t n)
{
    size_t es = t >= 0 ? H5Tget_size(t) : 0;
    if (n < 0 || es == 0 || (uint64_t)n > FO_MAX_READ / es)
        return 0;
    return n ? (size_t)n * es : es;
}

/* Opens and destroys each of the `n` references in `refs` (H5R_ref_t). */
static void
fo_refs(H5R_ref_t *refs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        H5R_type_t rt = H5Rget_type(&refs[i]);
        if (rt == H5R_OBJECT2 || rt == H5R_DATASET_REGION2 || rt == H5R_ATTR) {
            hid_t o = H5Ropen_object(&refs[i], H5P_DEFAULT, H5P_DEFAULT);
            if (o >= 0) {
                fo_seen.refs++;
                H5Oclose(o);
            }
            if (rt == H5R_ATTR) {
                hid_t a = H5Ropen_attr(&refs[i], H5P_DEFAULT, H5P_DEFAULT);
                if (a >= 0)
                    H5Aclose(a);
            }
            if (rt == H5R_DATASET_REGION2) {
                hid_t sp = H5Ropen_region(&refs[i], H5P_DEFAULT, H5P_DEFAULT);
                if (sp >= 0)
                    H5Sclose(sp);
            }
        }
        H5Rdestroy(&refs[i]);
    }
}

/* Reads what `obj` (a dataset if `is_dset`, else an attribute) holds, when it is small: with its own
 * type, then references through H5T_STD_REF and dereferenced. Vlen data is reclaimed. */
static void
fo_read(hid_t obj, bool is_dset, hid_t ftype, hid_t space)
{
    hssize_t    n   = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    H5T_class_t cls = H5Tget_class(ftype);
    hid_t       mt  = H5I_INVALID_HID;
    size_t      nb;
    void       *buf = NULL;
    herr_t      r;

    if (n < 0)
        return;
    if (cls == H5T_REFERENCE) {
        mt = H5Tcopy(H5T_STD_REF);
    }
    else if ((mt = H5Tget_native_type(ftype, H5T_DIR_DEFAULT)) < 0) {
        mt = H5Tcopy(ftype);
    }
    if (mt < 0 || !(nb = fo_read_size(mt, n)) || !(buf = calloc(1, nb)))
        goto done;
    r = is_dset ? H5Dread(obj, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) : H5Aread(obj, mt, buf);
    if (r >= 0) {
        if (is_dset)
            fo_seen.dsets++;
        else
            fo_seen.attrs++;
        if (cls == H5T_REFERENCE)
            fo_refs(buf, (size_t)n);
        else if (H5Tdetect_class(mt, H5T_VLEN) > 0 || H5Tis_variable_str(mt) > 0 ||
                 H5Tdetect_class(mt, H5T_REFERENCE) > 0)
            H5Treclaim(mt, space, H5P_DEFAULT, buf);
    }
done:
    free(buf);
    if (mt >= 0)
        H5Tclose(mt);
}

/* Type queries that walk a type's members. */
static void
fo_type(hid_t t, int depth)
{
    H5T_class_t cls = H5Tget_class(t);
    int         nm;
    if (t < 0 || depth > 8)
        return;
    (void)H5Tget_size(t);
    (void)H5Tcommitted(t);
    switch (cls) {
        case H5T_INTEGER:
        case H5T_FLOAT:
        case H5T_BITFIELD:
            (void)H5Tget_order(t);
            (void)H5Tget_precision(t);
            (void)H5Tget_offset(t);
            break;
        case H5T_STRING:
            (void)H5Tget_cset(t);
            (void)H5Tget_strpad(t);
            (void)H5Tis_variable_str(t);
            break;
        case H5T_OPAQUE: {
            char *tag = H5Tget_tag(t);
            H5free_memory(tag);
            break;
        }
        case H5T_COMPOUND:
        case H5T_ENUM:
            nm = H5Tget_nmembers(t);
            for (int i = 0; i < nm && i < 64; i++) {
                char *name = H5Tget_member_name(t, (unsigned)i);
                H5free_memory(name);
                if (cls == H5T_COMPOUND) {
                    hid_t m = H5Tget_member_type(t, (unsigned)i);
                    (void)H5Tget_member_offset(t, (unsigned)i);
                    fo_type(m, depth + 1);
                    if (m >= 0)
                        H5Tclose(m);
                }
            }
            if (cls == H5T_ENUM) {
                hid_t b = H5Tget_super(t);
                fo_type(b, depth + 1);
                if (b >= 0)
                    H5Tclose(b);
            }
            break;
        case H5T_ARRAY: {
            hsize_t dims[H5S_MAX_RANK];
            (void)H5Tget_array_dims2(t, dims);
        } /* fall through */
        case H5T_VLEN: {
            hid_t b = H5Tget_super(t);
            fo_type(b, depth + 1);
            if (b >= 0)
                H5Tclose(b);
            break;
        }
        default:
            break;
    }
}

static herr_t
fo_attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *ud)
{
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT), t, sp, acpl;
    (void)info;
    (void)ud;
    if (a < 0)
        return 0;
    t  = H5Aget_type(a);
    sp = H5Aget_space(a);
    fo_type(t, 0);
    (void)H5Aget_storage_size(a);
    if ((acpl = H5Aget_create_plist(a)) >= 0)
        H5Pclose(acpl);
    if (t >= 0 && sp >= 0)
        fo_read(a, false, t, sp);
    if (t >= 0)
        H5Tclose(t);
    if (sp >= 0)
        H5Sclose(sp);
    H5Aclose(a);
    return 0;
}

static void
fo_dataset(hid_t d)
{
    hid_t   t = H5Dget_type(d), sp = H5Dget_space(d), dcpl = H5Dget_create_plist(d), dapl;
    hsize_t chunk[H5S_MAX_RANK];
    int     crank = -1;

    fo_type(t, 0);
    (void)H5Dget_storage_size(d);
    if (sp >= 0) {
        hsize_t dims[H5S_MAX_RANK], maxd[H5S_MAX_RANK];
        (void)H5Sget_simple_extent_dims(sp, dims, maxd);
    }
    if (dcpl >= 0) {
        H5D_layout_t     lay = H5Pget_layout(dcpl);
        H5D_fill_value_t fv;
        int              nf = H5Pget_nfilters(dcpl);
        H5D_alloc_time_t at;
        H5D_fill_time_t  ft;
        if (lay == H5D_CHUNKED)
            crank = H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk);
        for (int i = 0; i < nf && i < 32; i++) {
            unsigned flags, cd[16], fcfg;
            size_t   ncd = 16;
            char     name[64];
            (void)H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, &fcfg);
        }
        (void)H5Pget_alloc_time(dcpl, &at);
        (void)H5Pget_fill_time(dcpl, &ft);
        if (H5Pfill_value_defined(dcpl, &fv) >= 0 && fv != H5D_FILL_VALUE_UNDEFINED && t >= 0) {
            size_t n = H5Tget_size(t);
            void  *b = n && n <= FO_MAX_READ ? calloc(1, n) : NULL;
            if (b && H5Tget_class(t) != H5T_REFERENCE && H5Pget_fill_value(dcpl, t, b) >= 0 &&
                (H5Tdetect_class(t, H5T_VLEN) > 0 || H5Tis_variable_str(t) > 0)) {
                hid_t s1 = H5Screate(H5S_SCALAR);
                H5Treclaim(t, s1, H5P_DEFAULT, b);
                H5Sclose(s1);
            }
            free(b);
        }
        H5Pclose(dcpl);
    }
    if ((dapl = H5Dget_access_plist(d)) >= 0)
        H5Pclose(dapl);
    /* a whole read when both the data and one chunk are small */
    if (t >= 0 && sp >= 0) {
        size_t es = H5Tget_size(t);
        bool   ok = es > 0;
        if (crank > 0) {
            uint64_t ce = 1;
            for (int i = 0; i < crank && ok; i++)
                ok = chunk[i] > 0 && (ce *= chunk[i]) <= FO_MAX_READ / es;
        }
        if (ok)
            fo_read(d, true, t, sp);
    }
    if (t >= 0)
        H5Tclose(t);
    if (sp >= 0)
        H5Sclose(sp);
}

static herr_t
fo_link_cb(hid_t g, const char *name, const H5L_info2_t *info, void *ud)
{
    H5L_info2_t li;
    (void)ud;
    if (H5Lget_info2(g, name, &li, H5P_DEFAULT) < 0)
        return 0;
    (void)H5Lexists(g, name, H5P_DEFAULT);
    if ((li.type == H5L_TYPE_SOFT || li.type == H5L_TYPE_EXTERNAL) && li.u.val_size > 0 &&
        li.u.val_size <= 65536) {
        char *v = malloc(li.u.val_size);
        if (v && H5Lget_val(g, name, v, li.u.val_size, H5P_DEFAULT) >= 0 && ++fo_seen.links &&
            li.type == H5L_TYPE_EXTERNAL) {
            const char *file = NULL, *obj = NULL;
            unsigned    fl;
            (void)H5Lunpack_elink_val(v, li.u.val_size, &fl, &file, &obj);
        }
        free(v);
    }
    (void)info;
    return 0;
}

typedef struct fo_visit {
    int nobj;
} fo_visit;

static herr_t
fo_visit_cb(hid_t root, const char *name, const H5O_info2_t *info, void *ud)
{
    fo_visit *vs = ud;
    hid_t     o;
    char      cmt[64];

    if (++vs->nobj > FO_MAX_OBJECTS)
        return 1;
    if ((o = H5Oopen(root, name, H5P_DEFAULT)) < 0)
        return 0;
    (void)H5Oget_comment(o, cmt, sizeof cmt);
    (void)H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_INC, NULL, fo_attr_cb, NULL);
    (void)H5Aiterate2(o, H5_INDEX_CRT_ORDER, H5_ITER_DEC, NULL, fo_attr_cb, NULL);
    switch (info->type) {
        case H5O_TYPE_DATASET:
            fo_dataset(o);
            break;
        case H5O_TYPE_GROUP: {
            H5G_info_t gi;
            hid_t      gcpl;
            (void)H5Gget_info(o, &gi);
            (void)H5Literate2(o, H5_INDEX_NAME, H5_ITER_INC, NULL, fo_link_cb, NULL);
            (void)H5Literate2(o, H5_INDEX_CRT_ORDER, H5_ITER_INC, NULL, fo_link_cb, NULL);
            if ((gcpl = H5Gget_create_plist(o)) >= 0)
                H5Pclose(gcpl);
            break;
        }
        case H5O_TYPE_NAMED_DATATYPE: {
            hid_t tcpl = H5Tget_create_plist(o);
            fo_type(o, 0);
            if (tcpl >= 0)
                H5Pclose(tcpl);
            break;
        }
        default:
            break;
    }
    H5Oclose(o);
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    zarr_store *s;
    hid_t       fapl, f, fcpl;
    fo_visit    vs = {0};

    if (size > FUZZ_MAX_INPUT || fo_setup() < 0)
        return 0;
    memset(&fo_seen, 0, sizeof fo_seen);
    if (!(s = fo_fill(data, size)))
        return 0;
    if (getenv("FUZZ_OPEN_DUMP"))
        (void)fo_serialize_store(s, getenv("FUZZ_OPEN_DUMP"));
    fapl = fo_fapl(0);
    FUZZ_CHECK(fapl >= 0, "can't make the zarr fapl");
    f = H5Fopen(FO_URL, H5F_ACC_RDONLY, fapl);
    if (f >= 0) {
        H5O_info2_t oi;
        (void)H5Oget_info3(f, &oi, H5O_INFO_ALL);
        if ((fcpl = H5Fget_create_plist(f)) >= 0)
            H5Pclose(fcpl);
        (void)H5Ovisit3(f, H5_INDEX_NAME, H5_ITER_INC, fo_visit_cb, &vs, H5O_INFO_BASIC);
        FUZZ_CHECK(H5Fget_obj_count(f, H5F_OBJ_ALL | H5F_OBJ_LOCAL) == 1, "%ld ids of the file left open",
                   (long)H5Fget_obj_count(f, H5F_OBJ_ALL | H5F_OBJ_LOCAL));
        FUZZ_CHECK(H5Fclose(f) >= 0, "H5Fclose failed");
    }
    if (getenv("FUZZ_OPEN_VERBOSE"))
        fprintf(stderr,
                "fuzz_open: %s, %d objects visited; read %d attributes, %d datasets, %d link values; %d "
                "references opened\n",
                f >= 0 ? "opened" : "not opened", vs.nobj, fo_seen.attrs, fo_seen.dsets, fo_seen.links,
                fo_seen.refs);
    H5Pclose(fapl);
    H5Eclear2(H5E_DEFAULT);
    (void)zarr_store_del_prefix(s, "");
    zarr_store_close(s);
    FUZZ_CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0, "%ld HDF5 ids left open",
               (long)H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL));
    return 0;
}

/* ---- seeds: stores written through the connector, serialized ----------------------------------------- */

typedef struct fo_ser {
    zarr_store *s;
    FILE       *out;
    int         rc;
} fo_ser;

static int
fo_ser_key(const char *key, uint64_t size, void *ud)
{
    fo_ser  *w = ud;
    zarr_buf b = ZARR_BUF_INIT;
    (void)size;
    if (zarr_store_get(w->s, key, &b) != ZARR_OK ||
        (b.size >= 4 && memmem(b.data, b.size, FO_SEP, strlen(FO_SEP)))) {
        fprintf(stderr, "fuzz_open: can't serialize key '%s'\n", key);
        w->rc = -1;
    }
    else {
        fprintf(w->out, "%s%s\n", FO_SEP, key);
        fwrite(b.data, 1, b.size, w->out);
    }
    zarr_buf_free(&b);
    return 0;
}

/* Writes the keys of `s` to `path` in the input format. */
static int
fo_serialize_store(zarr_store *s, const char *path)
{
    fo_ser w = {s, NULL, 0};
    if (!(w.out = fopen(path, "wb")))
        return -1;
    fprintf(w.out, "h5zarr fuzz_open store: records of \"\\n@@ KEY\\n\" + value (fuzz/fuzz_open.c)");
    if (zarr_store_list_keys(s, "", fo_ser_key, &w) != ZARR_OK)
        w.rc = -1;
    fclose(w.out);
    return w.rc;
}

/* Writes store `url` (a memory:// URL) to DIR/FILE in the input format, then empties it. */
static int
fo_serialize(const char *url, const char *dir, const char *file)
{
    char        path[4096];
    zarr_store *s = NULL;
    int         rc;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (zarr_store_open(url, ZARR_STORE_RDWR, &s) != ZARR_OK)
        return -1;
    rc = fo_serialize_store(s, path);
    (void)zarr_store_del_prefix(s, "");
    zarr_store_close(s);
    return rc;
}

#define GEN_OK(expr)                                                                                         \
    do {                                                                                                     \
        if ((expr) < 0) {                                                                                    \
            fprintf(stderr, "fuzz_open seeds: %s failed (line %d)\n", #expr, __LINE__);                      \
            goto done;                                                                                       \
        }                                                                                                    \
    } while (0)

/* Store 1: groups, links, attributes of several classes, chunked/filtered/filled datasets (one filter left
 * out of the codecs: vol/filter.c h5zv_filters_add_left_out reads it back), a committed
 * compound type, references. Store 2: vlen data and an unlimited dimension. */
static int
fo_gen_store(const char *url, int version, int which)
{
    hid_t   fapl = fo_fapl(version), f = -1, g = -1, sp = -1, d = -1, dcpl = -1, t = -1, a = -1;
    int     rc       = -1;
    hsize_t dims2[2] = {4, 6}, ch2[2] = {2, 3}, one = 1, three = 3;

    GEN_OK(fapl);
    GEN_OK(f = H5Fcreate(url, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    if (which == 0) {
        int    vals[24];
        double dv[3] = {1.5, -2.25, 1e300};
        for (int i = 0; i < 24; i++)
            vals[i] = i * 7 - 30;
        GEN_OK(g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        GEN_OK(sp = H5Screate_simple(2, dims2, NULL));
        GEN_OK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
        GEN_OK(H5Pset_chunk(dcpl, 2, ch2));
        GEN_OK(H5Pset_deflate(dcpl, 1));
        {
            /* an optional filter no one can apply: left out of the codecs, kept in _h5zarr.dcpl */
            unsigned cd[2] = {5, 6};
            GEN_OK(H5Pset_filter(dcpl, 40123, H5Z_FLAG_OPTIONAL, 2, cd));
        }
        {
            int fill = -1;
            GEN_OK(H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill));
        }
        GEN_OK(d = H5Dcreate2(g, "ints", H5T_STD_I32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
        GEN_OK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, vals));
        GEN_OK(H5Dclose(d));
        d = -1;
        H5Sclose(sp);
        GEN_OK(sp = H5Screate_simple(1, &three, NULL));
        GEN_OK(d = H5Dcreate2(f, "doubles", H5T_IEEE_F64BE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        GEN_OK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, dv));
        GEN_OK(a = H5Acreate2(d, "scale", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT));
        GEN_OK(H5Awrite(a, H5T_NATIVE_DOUBLE, dv));
        H5Aclose(a);
        a = -1;
        GEN_OK(H5Dclose(d));
        d = -1;
        /* a committed compound type and a dataset of it */
        GEN_OK(t = H5Tcreate(H5T_COMPOUND, 12));
        GEN_OK(H5Tinsert(t, "i", 0, H5T_STD_I32LE));
        GEN_OK(H5Tinsert(t, "f", 4, H5T_IEEE_F64LE));
        GEN_OK(H5Tcommit2(f, "ctype", t, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        {
            unsigned char rec[3][12];
            memset(rec, 0, sizeof rec);
            for (int i = 0; i < 3; i++) {
                int    iv = i + 1;
                double fv = i * 0.5;
                memcpy(rec[i], &iv, 4);
                memcpy(rec[i] + 4, &fv, 8);
            }
            GEN_OK(d = H5Dcreate2(f, "recs", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
            GEN_OK(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rec));
            GEN_OK(H5Dclose(d));
            d = -1;
        }
        H5Tclose(t);
        t = -1;
        /* an enum attribute and a fixed string attribute on the root */
        {
            int   e0 = 0, e1 = 1, ev = 1;
            hid_t s1 = H5Screate(H5S_SCALAR);
            GEN_OK(t = H5Tenum_create(H5T_NATIVE_INT));
            GEN_OK(H5Tenum_insert(t, "OFF", &e0));
            GEN_OK(H5Tenum_insert(t, "ON", &e1));
            GEN_OK(a = H5Acreate2(f, "state", t, s1, H5P_DEFAULT, H5P_DEFAULT));
            GEN_OK(H5Awrite(a, t, &ev));
            H5Aclose(a);
            H5Tclose(t);
            GEN_OK(t = H5Tcopy(H5T_C_S1));
            GEN_OK(H5Tset_size(t, 8));
            GEN_OK(a = H5Acreate2(f, "title", t, s1, H5P_DEFAULT, H5P_DEFAULT));
            GEN_OK(H5Awrite(a, t, "fuzzing!"));
            H5Aclose(a);
            a = -1;
            H5Tclose(t);
            t = -1;
            H5Sclose(s1);
        }
        /* links: soft, external, a second hard link */
        GEN_OK(H5Lcreate_soft("/g/ints", f, "soft", H5P_DEFAULT, H5P_DEFAULT));
        GEN_OK(H5Lcreate_external("other.h5", "/x", f, "ext", H5P_DEFAULT, H5P_DEFAULT));
        GEN_OK(H5Lcreate_hard(f, "doubles", g, "alias", H5P_DEFAULT, H5P_DEFAULT));
        /* references: an attribute and a dataset of object references */
        {
            H5R_ref_t r[2];
            hid_t     s2 = H5Screate_simple(1, (hsize_t[]){2}, NULL);
            GEN_OK(H5Rcreate_object(f, "/g", H5P_DEFAULT, &r[0]));
            GEN_OK(H5Rcreate_object(f, "/g/ints", H5P_DEFAULT, &r[1]));
            GEN_OK(a = H5Acreate2(f, "refs", H5T_STD_REF, s2, H5P_DEFAULT, H5P_DEFAULT));
            GEN_OK(H5Awrite(a, H5T_STD_REF, r));
            GEN_OK(d = H5Dcreate2(g, "refds", H5T_STD_REF, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
            GEN_OK(H5Dwrite(d, H5T_STD_REF, H5S_ALL, H5S_ALL, H5P_DEFAULT, r));
            H5Rdestroy(&r[0]);
            H5Rdestroy(&r[1]);
            H5Sclose(s2);
        }
    }
    else {
        const char *strs[3] = {"alpha", "", "a longer string"};
        hsize_t     maxd = H5S_UNLIMITED, c = 2;
        short       sv[3] = {1, -2, 3};
        GEN_OK(t = H5Tcopy(H5T_C_S1));
        GEN_OK(H5Tset_size(t, H5T_VARIABLE));
        GEN_OK(H5Tset_cset(t, H5T_CSET_UTF8));
        GEN_OK(sp = H5Screate_simple(1, &three, NULL));
        GEN_OK(d = H5Dcreate2(f, "strings", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        GEN_OK(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, strs));
        GEN_OK(a = H5Acreate2(d, "names", t, sp, H5P_DEFAULT, H5P_DEFAULT));
        GEN_OK(H5Awrite(a, t, strs));
        H5Aclose(a);
        a = -1;
        H5Dclose(d);
        d = -1;
        H5Sclose(sp);
        GEN_OK(sp = H5Screate_simple(1, &three, &maxd));
        GEN_OK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
        GEN_OK(H5Pset_chunk(dcpl, 1, &c));
        GEN_OK(d = H5Dcreate2(f, "grow", H5T_STD_I16BE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
        GEN_OK(H5Dwrite(d, H5T_NATIVE_SHORT, H5S_ALL, H5S_ALL, H5P_DEFAULT, sv));
        H5Sclose(sp);
        GEN_OK(sp = H5Screate_simple(1, &one, NULL));
        {
            hid_t vt   = H5Tvlen_create(H5T_NATIVE_INT);
            int   x[2] = {4, 5};
            hvl_t v    = {2, x};
            GEN_OK(a = H5Acreate2(d, "ragged", vt, sp, H5P_DEFAULT, H5P_DEFAULT));
            GEN_OK(H5Awrite(a, vt, &v));
            H5Tclose(vt);
        }
    }
    rc = 0;
done:
    if (a >= 0)
        H5Aclose(a);
    if (d >= 0)
        H5Dclose(d);
    if (t >= 0)
        H5Tclose(t);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (sp >= 0)
        H5Sclose(sp);
    if (g >= 0)
        H5Gclose(g);
    if (f >= 0 && H5Fclose(f) < 0)
        rc = -1;
    if (fapl >= 0)
        H5Pclose(fapl);
    return rc;
}

int
fuzz_gen_seeds(const char *dir)
{
    static const struct {
        int         version, which;
        const char *file;
    } seeds[] = {{3, 0, "v3-groups-links-attrs-refs"},
                 {2, 0, "v2-groups-links-attrs-refs"},
                 {3, 1, "v3-vlen-unlimited"},
                 {2, 1, "v2-vlen-unlimited"}};
    char cmd[4200];

    if (fo_setup() < 0)
        return -1;
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (system(cmd) != 0)
        return -1;
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        char url[64];
        snprintf(url, sizeof url, "memory://fuzz_open_seed%zu", i);
        if (fo_gen_store(url, seeds[i].version, seeds[i].which) < 0 ||
            fo_serialize(url, dir, seeds[i].file) < 0)
            return -1;
    }
    return 0;
}
