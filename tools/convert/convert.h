/*
 * convert.h: what the parts of h5zarr-convert share (tools/convert/): the options, the list of source
 * objects the scan makes, the resume record and the progress meter.
 *
 * The converter reads an HDF5 or netCDF-4 file with HDF5's native connector and writes a zarr store
 * through the zarr connector, in three passes over one list of objects (convert_scan.c): the scan
 * (every object, link and attribute, and whatever cannot be carried, refused before anything is
 * written), the structure (convert_copy.c: groups, named types, datasets, links, attributes, dimension
 * scales) and the data (convert_data.c: raw chunks where the filters map byte for byte, values
 * otherwise), then --verify (convert_verify.c). main.c holds the options, the resume record and the
 * progress meter. The design of the resume record is in docs/CONVERT.md.
 */
#ifndef H5ZARR_CONVERT_H
#define H5ZARR_CONVERT_H

#include <hdf5.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* ---- options ---------------------------------------------------------------------------------------- */
typedef struct cv_opts {
    const char *src, *dst;
    int         version;      /* 2 or 3 (0: the connector's default, 3) */
    long long   shard_bytes;  /* 0: none */
    const char *codec;        /* NULL: keep the source's filters */
    int         consolidated; /* consolidated metadata at close */
    int         threads;      /* 0: the connector's default */
    int         verify;
    int         force;   /* replace an existing target */
    int         quiet;   /* no progress, no summary */
    int         verbose; /* say what each dataset does */
} cv_opts;

/* ---- the objects of the source ---------------------------------------------------------------------- */
typedef enum cv_kind {
    CV_GROUP,
    CV_DATASET,
    CV_TYPE,     /* a named datatype */
    CV_HARD,     /* a second hard link to an object listed before (target: that object's path) */
    CV_SOFT,     /* target: the link value */
    CV_EXTERNAL, /* target: the object path, file: the file name */
} cv_kind;

/* How a dataset's data goes over. */
typedef enum cv_mode {
    CV_DATA_NONE,   /* nothing written in the source (no storage allocated): left unwritten */
    CV_DATA_RAW,    /* stored chunks copied as they are (H5Dread_chunk -> H5Dwrite_chunk) */
    CV_DATA_VALUES, /* values read and written (the connector encodes) */
    CV_DATA_REFS,   /* object references: each rewritten as a reference into the store */
} cv_mode;

/* An attribute to copy, as the scan found it (its name's character set: the acpl to make it with). */
typedef struct cv_attr {
    char      *name;
    H5T_cset_t cset;
} cv_attr;

typedef struct cv_obj {
    char       *path; /* absolute, "/" for the root */
    cv_kind     kind;
    H5O_token_t token;  /* groups, datasets, types */
    char       *target; /* CV_HARD / CV_SOFT / CV_EXTERNAL */
    char       *file;   /* CV_EXTERNAL */
    /* datasets */
    cv_mode mode;
    bool    is_scale;
    char   *scale_name; /* NAME of a dimension scale (NULL: none) */
    hsize_t bytes;      /* stored bytes in the source (what the meter counts) */
    hsize_t size;       /* the extent's elements times the type's size (what a read of it all takes) */
    char *
        *dim_scales; /* per axis, one '\n'-separated list of scale paths (NULL: none), from DIMENSION_LIST */
    int  rank;
    /* the source dataset and its dcpl, opened once by the scan and kept open for the structure, data and
     * verify passes (-1: not a dataset, or it could not be opened); closed by cv_list_free. Past the
     * first cv_keep_open() datasets the scan closes them again (reopen set: memory stays bounded, ~19 KB
     * of HDF5's a dataset) and each pass holds them only while it works on the dataset. */
    hid_t sd, dcpl;
    bool  reopen;
    /* an attribute (other than DIMENSION_LIST / REFERENCE_LIST) holds references: its attributes are
     * copied after every object and link is made (structure pass 4); else right after the dataset is
     * created (pass 2), while the source dataset is held anyway */
    bool attr_refs;
    /* the attributes to copy (all but DIMENSION_LIST and REFERENCE_LIST), in creation order where the
     * object tracks it, else by name: listed by the scan, so the structure pass copies them by name with
     * no iteration of its own; and whether the object has a DIMENSION_LIST and a CLASS attribute (what
     * makes a dimension scale) */
    cv_attr *attrs;
    size_t   nattrs;
    bool     has_dimlist, has_class;
} cv_obj;

typedef struct cv_list {
    cv_obj *v;
    size_t  n, cap;
    /* refusals: one line per object and reason */
    char  **why;
    size_t  nwhy, capwhy;
    hsize_t total_bytes;
    size_t  ndatasets;
} cv_list;

/* ---- the progress meter (main.c) -------------------------------------------------------------------- */
typedef struct cv_meter {
    bool    on;
    double  t0, last;
    size_t  objs, nobjs;
    hsize_t bytes, nbytes;
} cv_meter;
void cv_meter_add(cv_meter *m, size_t objs, hsize_t bytes);
void cv_meter_done(cv_meter *m);

/* ---- the resume record (convert_resume.c; docs/CONVERT.md) ----------------------------------------- */
typedef struct cv_resume {
    char              *path;  /* a local store's record file (NULL for a URL store) */
    const char        *url;   /* a URL store (borrowed: the target), whose record is a key of the store */
    FILE              *fp;    /* local: open for appending */
    struct zarr_store *store; /* URL: the store, opened through the core for the record */
    char              *text;  /* URL: the record's text, stored whole at each commit */
    size_t             len, cap;
    bool               structure; /* the structure pass had finished */
    bool               scales;    /* the scales were attached */
    size_t             nobj;
    size_t            *done; /* per object: 1 done; for datasets in progress the chunks/slabs done + 2 */
} cv_resume;
/* Reads an existing record (r->path or r->url set). 1: resumable (r->done etc. filled), 0: no record,
 * -1: a record of another source or other options, or unreadable. */
int cv_record_read(cv_resume *r, const char *ident, size_t nobj);
/* Starts writing: a new record (its head and `ident`, committed), or `append` to the one read. 0 or -1. */
int cv_record_start(cv_resume *r, const char *ident, bool append);
/* Adds a formatted line to the record (not yet committed); nothing when there is no record. 0 or -1. */
int cv_record_add(cv_resume *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Makes what was added durable (fdatasync of the file, or one store set of the whole text). 0 or -1. */
int cv_record_commit(cv_resume *r);
/* Records object `i` done (n == 1) or `n - 2` units of it done; flushes the target first. */
int cv_resume_note(cv_resume *r, hid_t dst_file, size_t i, size_t n);
/* A URL target: 1 when it has a root document (zarr.json, .zgroup, .zarray), 2 when it has none but
 * other objects are under its prefix (not the resume record), 0 when it is empty, -1 on error (an S3
 * prefix "exists" whenever its bucket does, so the connector's H5F_ACC_EXCL can't tell). */
int cv_store_occupied(cv_resume *r);
/* Deletes the record (the run ended) and closes it. 0 or -1. */
int cv_record_remove(cv_resume *r);
/* Closes the record's file or store, frees its text (not path/done). Accepts a closed one. */
void cv_record_close(cv_resume *r);
/* Kill point for the tests (H5ZARR_CONVERT_KILL_AFTER=<units>, armed with cv_kill_arm): dies with SIGKILL
 * after that many. */
void cv_kill_arm(long long units);
void cv_kill_point(void);

/* ---- passes ----------------------------------------------------------------------------------------- */
/* Lists every object of the open source file into `l` (owned by the caller, cv_list_free), and every
 * reason it cannot be carried into l->why. Returns 0, or -1 when the source could not be read. */
int cv_scan(hid_t src, const cv_opts *o, cv_list *l);
/* How many source datasets the scan keeps open for the later passes: 4096, or H5ZARR_CONVERT_KEEP_OPEN
 * (tests). */
size_t cv_keep_open(void);
/* Opens o's source dataset and dcpl again when the scan let them go (o->reopen); 0, or -1 when they can't
 * be (o->sd stays -1: the caller's use of it fails with its message). cv_obj_drop closes them again; both
 * do nothing for a dataset the scan kept open. The ids are the list's, so `o` is written through. */
int  cv_obj_hold(hid_t src, const cv_obj *o);
void cv_obj_drop(const cv_obj *o);
void cv_list_free(cv_list *l);
/* Looks up an object of the list by token; NULL if none. */
const cv_obj *cv_find_token(const cv_list *l, hid_t file, const H5O_token_t *tok);
/* Appends a refusal line (formatted). */
void cv_refuse(cv_list *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Makes every group, named type, dataset, link and attribute in `dst`. A small dataset's data
 * (cv_data_early) is written with it, while its source dataset is held, and done[i] set to 1 (its object
 * index): the data pass skips it. A large one is left empty for the data pass. 0 or -1. */
int cv_copy_structure(hid_t src, hid_t dst, const cv_opts *o, const cv_list *l, size_t *done);
/* Attaches the dimension scales (H5DSattach_scale on the target as DIMENSION_LIST says). 0 or -1. */
int cv_copy_scales(hid_t dst, const cv_list *l);
/* Copies one attribute of `s` to `d` (references rewritten into the target). 0 or -1. */
int cv_copy_attr(hid_t s, hid_t d, const cv_attr *at, hid_t dst_file, const cv_list *l);
/* Writes the data of dataset object `i`. 0 or -1. */
int cv_copy_data(hid_t src, hid_t dst, const cv_opts *o, const cv_list *l, size_t i, cv_resume *r,
                 cv_meter *m);
/* The data of dataset object `i`, whose source dataset is held (l->v[i].sd), into `dd`, its dataset in
 * the store `dst`; `st` the source dataset's type when the caller has it (borrowed), else negative (asked
 * here); progress into `r` and `m` when not NULL. 0 or -1. */
int cv_data_write(hid_t dd, hid_t dst, const cv_list *l, size_t i, hid_t st, cv_resume *r, cv_meter *m);
/* A dataset whose data is written with the structure (raw chunks or values, at most CV_EARLY_BYTES in
 * all): held once for both, not opened again for the data pass. A run killed before the structure is
 * recorded starts again, so this data is written again then: at most CV_EARLY_BYTES a dataset. */
#define CV_EARLY_BYTES ((hsize_t)1 << 20)
bool cv_data_early(const cv_obj *o);
/* Under --verbose, says how dataset `o`'s data goes over (raw chunks, values, ...). */
void cv_say_mode(const cv_opts *op, const cv_obj *o);
/* Compares every dataset (raw chunks byte for byte where they were copied raw, values otherwise) and every
 * attribute. Prints each difference; returns the number of objects that differ, -1 on a read error. */
long cv_verify(hid_t src, hid_t dst, const cv_list *l);

/* Stored chunks of a chunked dataset, in HDF5's order (convert_data.c). */
typedef struct cv_chunk {
    hsize_t  off[H5S_MAX_RANK];
    unsigned mask;
    hsize_t  size;
} cv_chunk;
/* A chunked dataset's stored chunks with its chunk shape and extent (cv_chunked_open / _free). */
typedef struct cv_chunked {
    cv_chunk *v;
    size_t    n;
    int       rank;
    hsize_t   chunk[H5S_MAX_RANK], dims[H5S_MAX_RANK];
} cv_chunked;
/* Lists the stored chunks of `d` (its dcpl: `dcpl`) into `cw` (freed with cv_chunked_free, also after a
 * failure). 0 or -1. */
int  cv_chunked_open(hid_t d, hid_t dcpl, int rank, cv_chunked *cw);
void cv_chunked_free(cv_chunked *cw);
/* The region of stored chunk `c`, clipped to the extent, into count[]. */
void cv_chunked_region(const cv_chunked *cw, size_t c, hsize_t *count);
/* The file spaces of `sd` and `dd` (new: the caller closes them with cv_spaces_close), with the region
 * start/count selected when rank > 0 (else all). 0, or -1 with both closed and set to -1. */
int  cv_region_select(hid_t sd, hid_t dd, int rank, const hsize_t *start, const hsize_t *count, hid_t *fs,
                      hid_t *ts);
void cv_spaces_close(hid_t a, hid_t b, hid_t c); /* closes the valid ones */
/* Copies a region (rank 0: the scalar) as values of memory type `ft` through `scratch` (big enough). */
int cv_copy_region(hid_t sd, hid_t dd, hid_t ft, const hsize_t *start, const hsize_t *count, int rank,
                   void *scratch);
/* Rows of axis 0 a slab holds: a multiple of the chunk's (dcpl: the source's), about 64 MiB, at most the
 * extent's. */
hsize_t cv_slab_rows(hid_t dcpl, int rank, const hsize_t *dims, size_t esz);

/* Shared helpers (convert_scan.c) */
bool  cv_type_has(hid_t t, H5T_class_t c); /* the type or any member/base is of class c */
bool  cv_type_varlen(hid_t t);             /* variable-length data anywhere in the type */
bool  cv_is_dimattr(const char *name);
bool  cv_ref_null(const H5R_ref_t *r); /* all zero: a null reference */ /* DIMENSION_LIST, REFERENCE_LIST */
hid_t cv_ref_mem_type(hid_t ftype); /* H5T_STD_REF for any reference type, else -1 */
/* Rewrites `n` references of source type `ftype` read from `loc_src` into new-style references to the
 * same paths in `dst_file` (out: n H5R_ref_t, the caller destroys them with H5Rdestroy). 0 or -1. */
int cv_refs_rewrite(hid_t ftype, hid_t loc_src, const void *in, size_t n, hid_t dst_file, const cv_list *l,
                    H5R_ref_t *out);

#endif
