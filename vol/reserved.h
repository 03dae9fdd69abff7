/*
 * reserved.h: the JSON form of what the reserved object `_h5zarr` keeps of HDF5 objects that zarr
 * metadata cannot say: datatypes (vol/type_json.c) and creation property lists (vol/plist_json.c),
 * documented in docs/FORMAT.md ("The reserved object `_h5zarr`"). Nothing read from a store is ever
 * handed to H5Tdecode or H5Pdecode: every document is validated field by field (types, ranges, sizes,
 * nesting) and the object is built with H5Tcreate/H5Tset_* and H5Pcreate/H5Pset_*.
 *
 * Conventions of every function here: 0 on success, -1 with an error pushed on the HDF5 error stack
 * (H5ZV_GOTO_ERROR) otherwise. `where` names the document and the field being read, e.g.
 * "'/g/d/zarr.json' _h5zarr.type"; messages append the path of the offending field to it
 * ("...type.members[2].offset: 12 + 8 exceeds the compound size 16"). *_to_json hand the caller a new
 * json object (*out, the caller's reference); *_from_json borrow `j` and hand the caller a new id.
 */
#ifndef H5ZV_RESERVED_H
#define H5ZV_RESERVED_H

#include "h5zv.h"

struct json_object;

/* Bounds of what a document may ask for (larger values are refused, naming the field). */
#define H5ZV_TYPE_DEPTH_MAX 16 /* nesting of compound/array/vlen/enum types */
#define H5ZV_TYPE_SIZE_MAX                                                                                   \
    (1u << 30)                   /* bytes of one element of any type (1 GiB; HDF5 test files have 128 MiB) */
#define H5ZV_ATOMIC_SIZE_MAX  64 /* bytes of an integer, float or bitfield */
#define H5ZV_TYPE_MEMBERS_MAX 65535      /* compound and enum members */
#define H5ZV_NAME_MAX         4096       /* bytes of a member name */
#define H5ZV_VLEN_FILL_MAX    (1u << 20) /* elements of a variable-length sequence in a fill value */
#define H5ZV_EXT_FILES_MAX    65535      /* entries of an external file list (HDF5's message holds 16 bits) */
#define H5ZV_EXT_NAME_MAX     4096       /* bytes of an external file name */

/* ---- reading JSON fields (vol/type_json.c, shared with vol/plist_json.c) -------------------------
 * A field path: `at` followed by ".key" or "[i]" (truncated if ever longer than the buffer). */
typedef struct h5zv_jpath {
    char s[768];
} h5zv_jpath;
const char *h5zv_jpath_key(h5zv_jpath *p, const char *at, const char *key);
const char *h5zv_jpath_idx(h5zv_jpath *p, const char *at, size_t i);
/* Pushes "<at>: <message>". */
void h5zv_json_fail_at(const char *func, int line, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define H5ZV_JSON_FAIL(at, ...)                                                                              \
    do {                                                                                                     \
        h5zv_json_fail_at(__func__, __LINE__, (at), __VA_ARGS__);                                            \
        goto done;                                                                                           \
    } while (0)
/* Field `key` of object `o` (at `at`). Each returns 1 when the field is there and valid (*v set), 0 when
 * it is absent and not `required` (*v untouched), -1 with an error pushed (absent but required, wrong
 * JSON type, out of range). uint: an integer in [lo, hi]; str: a string of at most `max` bytes without
 * NUL; choice: a string among names[0..n-1], *v its index. */
int h5zv_json_uint(struct json_object *o, const char *at, const char *key, bool required, uint64_t lo,
                   uint64_t hi, uint64_t *v);
int h5zv_json_bool(struct json_object *o, const char *at, const char *key, bool required, bool *v);
int h5zv_json_str(struct json_object *o, const char *at, const char *key, bool required, size_t max,
                  const char **v);
int h5zv_json_choice(struct json_object *o, const char *at, const char *key, bool required,
                     const char *const *names, int n, int *v);
/* A list field: *v borrowed, its length in [lo, hi]. */
int h5zv_json_list(struct json_object *o, const char *at, const char *key, bool required, size_t lo,
                   size_t hi, struct json_object **v);
/* Fails unless `o` is a JSON object whose keys are all in `allowed` (NULL-terminated). */
int h5zv_json_keys(struct json_object *o, const char *at, const char *const *allowed);
/* An integer element (of a list) in [lo, hi]. */
int h5zv_json_uint_val(struct json_object *v, const char *at, uint64_t lo, uint64_t hi, uint64_t *out);

/* ---- datatypes (vol/type_json.c) ------------------------------------------------------------------ */
/* `type` as JSON: a short name for a predefined type ("i4<", "f8>", "u1<", "str_utf8", "ref", ...), or an
 * object with "class" and the class's fields (only those that differ from the defaults). Fails for
 * types that can't be described (deeper than H5ZV_TYPE_DEPTH_MAX, larger than H5ZV_TYPE_SIZE_MAX). */
int h5zv_type_to_json(hid_t type, struct json_object **out);
/* The type described by `j` (a new id, *out). */
int h5zv_type_from_json(struct json_object *j, const char *where, hid_t *out);

/* One value of `type` as JSON data (fill values): numbers, strings (null: a NULL variable-length
 * string), lists for compounds (members in order), arrays (elements in order) and variable-length
 * sequences, null for a null reference, {"hex": "..."} for the bytes of a value with no exact natural
 * form. `elem` is one element in the memory layout of `type` (pointers for vlen parts). from_json
 * fills `elem` (H5Tget_size(type) bytes, zeroed by the caller); what it allocates inside (strings,
 * sequences) is malloc'ed, the caller frees it with H5Treclaim also after a failure. */
int h5zv_value_to_json(hid_t type, const void *elem, struct json_object **out);
int h5zv_value_from_json(struct json_object *j, hid_t type, const char *where, void *elem);

/* ---- creation property lists (vol/plist_json.c) ---------------------------------------------------
 * An object holding only the properties that differ from those of a new list of the class; {} for a
 * default list. A dcpl's external file list (H5Pset_external) is its "external" key (vol/external.c does
 * the I/O); a virtual layout's mappings are left out (`"layout": "virtual"` only; vol/virtual.c keeps the
 * mappings). from_json builds a new list of the class (H5Pcreate + H5Pset_*). */
/* Datasets: `type` is the dataset's datatype; the fill value is stored as data of that type. */
int h5zv_dcpl_to_json(hid_t dcpl, hid_t type, struct json_object **out);
/* What H5Dcreate has read of a dcpl already (vol/dataset.c, once per dataset): h5zv_dcpl_to_json_known
 * takes these from it instead of asking HDF5 again (each H5Pget_* is ~1,000 instructions of HDF5's API;
 * a chunked dataset's create asked for the same six up to five times each). */
typedef struct h5zv_dcpl_known {
    H5D_layout_t     layout;
    int              nfilters, nexternal, nchunk; /* nchunk: H5Pget_chunk's rank (chunked layout only) */
    hsize_t          chunk[H5S_MAX_RANK];
    H5D_fill_value_t fill_status;
    H5D_fill_time_t  fill_time;
} h5zv_dcpl_known;
/* h5zv_dcpl_to_json of a list (not the default one) whose properties `k` says, read from it just before. */
int h5zv_dcpl_to_json_known(hid_t dcpl, hid_t type, const h5zv_dcpl_known *k, struct json_object **out);
int h5zv_dcpl_from_json(struct json_object *j, hid_t type, const char *where, hid_t *dcpl_out);
/* A new dcpl holding only the filter pipeline of the dcpl document `j` (validated as above): for readers
 * that need the recorded filters and not the dataset's type. */
int h5zv_dcpl_filters_from_json(struct json_object *j, const char *where, hid_t *dcpl_out);
/* The JSON of HDF5's default dcpl with only H5Pset_chunk(ndim, chunks) (what a reader infers for a chunked
 * array without a fill value of its own), or NULL with an error pushed. Borrowed: valid until the next
 * call or h5zv_plist_defaults_clear (the last shape's is kept, so datasets made in a loop build it once). */
struct json_object *h5zv_dcpl_chunked_json(int ndim, const hsize_t *chunks);
int                 h5zv_gcpl_to_json(hid_t gcpl, struct json_object **out);
int                 h5zv_gcpl_from_json(struct json_object *j, const char *where, hid_t *gcpl_out);
/* File creation properties, including the root group's (an fcpl is a gcpl). */
int h5zv_fcpl_to_json(hid_t fcpl, struct json_object **out);
int h5zv_fcpl_from_json(struct json_object *j, const char *where, hid_t *fcpl_out);
/* Attribute creation properties (the name's character set). */
int h5zv_acpl_to_json(hid_t acpl, struct json_object **out);
int h5zv_acpl_from_json(struct json_object *j, const char *where, hid_t *acpl_out);
/* Closes the default lists the to_json entry points keep to compare with (at connector termination). */
void h5zv_plist_defaults_clear(void);

/* ---- reading a reserved field (vol/reserved.c) -------------------------------------------------
 * Fields in the earlier form (a string holding base64 of HDF5's encoding; never a short type name:
 * those are shorter than 12 characters or not base64) are refused by every reader below, with the
 * message of h5zv_reserved_legacy_refuse; only vol/reserved_legacy.c decodes them, when the user opted
 * in (legacy_reserved=1). */
/* "'/<path>/zarr.json' _h5zarr.<key>" (zarr v2: .zattrs) in `p`, for messages about node `n`'s field. */
const char *h5zv_meta_where(h5zv_jpath *p, h5zv_node *n, const char *key);
/* True if `v` holds the earlier form. */
bool h5zv_reserved_legacy(struct json_object *v);
/* The list of class `cls` (H5P_DATASET_CREATE, H5P_GROUP_CREATE, H5P_FILE_CREATE, H5P_ATTRIBUTE_CREATE)
 * kept in `v` (`type`: a dataset's type, for its fill value): 0 with *out a new id, -1 with an error
 * pushed (an invalid document, or the earlier form). */
int h5zv_reserved_plist(struct json_object *v, hid_t cls, hid_t type, const char *where, hid_t *out);
/* The datatype kept in `v`: 0 with *out a new id, -1 with an error pushed. */
int h5zv_reserved_type(struct json_object *v, const char *where, hid_t *out);
/* Whether the object creation properties kept in `v` (any class) track object times; true when `v` says
 * nothing or can't be read (HDF5's default). */
bool h5zv_reserved_track_times(struct json_object *v);

/* ---- the earlier form (vol/reserved_legacy.c) ---------------------------------------------------- */
/* Pushes the refusal of field `where` in the earlier form (`enc`: "H5Tencode" or "H5Pencode"), saying
 * how to convert the store. */
void h5zv_reserved_legacy_refuse(const char *file, const char *func, int line, const char *where,
                                 const char *enc);
#define H5ZV_LEGACY_REFUSE(where, enc)                                                                       \
    h5zv_reserved_legacy_refuse(__FILE__, __func__, __LINE__, (where), (enc))
/* Converts every field of node `n` (just loaded into `f`'s cache) in the earlier form to the JSON form,
 * when `f`'s settings have legacy_reserved (else nothing); a read-write file gets the node marked dirty
 * (rewritten at flush). Fields that do not decode stay as they are (their readers refuse them). Pushes
 * nothing; the errors pending stay. */
void h5zv_reserved_upgrade(h5zv_file *f, h5zv_node *n);
/* For a read-write file with legacy_reserved: loads (so converts) every node of the store. */
void h5zv_reserved_upgrade_all(h5zv_file *f);

#endif
