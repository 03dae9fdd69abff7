/*
 * config.h: the connector's settings (docs/CONFIG.md): one model, h5zv_settings, resolved per store
 * from three sources, highest precedence first:
 *   1. the connector info (h5zarr_info_t: HDF5_VOL_CONNECTOR="zarr version=2 codec=zstd:3", --vol-info,
 *      H5Pset_fapl_zarr): its typed fields over its `options` text;
 *   2. the config file named by the info key `config=<path>`, else by H5ZARR_CONFIG: its `[path GLOB]`
 *      rules that match the store (later rules over earlier ones) over its top-level keys;
 *   3. built-in defaults (what the connector did before there was a configuration).
 * The info string and the file use the same key names (the table in config.c; adding a key is one line
 * there plus a field here).
 *
 * Errors: a bad key or value is never an error of the info string itself (HDF5 falls back to the native
 * connector silently when from_str fails): the info keeps the text, and h5zv_config_new_is_zarr /
 * h5zv_config_get fail at the first file create/open, pushing an error that names the source (info
 * string, or config file and line) and the key, and printing it once to stderr.
 *
 * Threads: like the rest of the connector, these run under HDF5's global lock.
 */
#ifndef H5ZV_CONFIG_H
#define H5ZV_CONFIG_H

#include <hdf5.h>
#include <stdbool.h>
#include <stdint.h>

#include "h5zarr/zarr.h"
#include "h5zarr/h5zarr.h"

struct h5zv_file;

/* The longest URL prefix `store` and `allow_url` take (with the store's name after it, the URL must fit
 * a pointer's 512-byte record). */
#define H5ZV_URL_PREFIX_MAX 320

/* codec for datasets created without filters */
typedef enum {
    H5ZV_CODEC_NONE,
    H5ZV_CODEC_ZSTD,
    H5ZV_CODEC_ZLIB,
    H5ZV_CODEC_GZIP,
    H5ZV_CODEC_BLOSC
} h5zv_codec_kind;
/* chunk shape of datasets created without chunking (contiguous, compact, default layout) */
typedef enum { H5ZV_CHUNKS_AUTO, H5ZV_CHUNKS_WHOLE, H5ZV_CHUNKS_EXPLICIT } h5zv_chunks_kind;

enum { H5ZV_REFS_PATHS = 1, H5ZV_REFS_URLS = 2 };

/* The resolved settings of one store. Plain data (no pointers): copy by assignment. */
typedef struct h5zv_settings {
    int  version;            /* zarr format of new stores: 2 or 3 */
    int  threads;            /* engine threads; 0 = H5ZARR_THREADS, else the number of cores */
    int  create;             /* H5ZARR_CREATE_AUTO or H5ZARR_CREATE_ZARR */
    bool create_in_code;     /* create=zarr came from h5zarr_info_t.create (H5Pset_fapl_zarr), not text */
    int  format;             /* routing of a matching rule: 1 zarr, 0 native, -1 no rule says */
    bool write_empty_chunks; /* store chunks equal to the fill value (false: the engine deletes them) */
    bool consolidated;       /* write consolidated metadata at H5Fclose */
    bool durable;            /* open stores ZARR_STORE_DURABLE: writes synced before calls return */
    int  refs_allow;         /* reference stores may also read: H5ZV_REFS_PATHS (absolute paths outside
                                the reference file's directory), H5ZV_REFS_URLS (http(s)://, s3://) */
    bool legacy_reserved;    /* read `_h5zarr` fields in the earlier binary form (HDF5's decoders: for
                                trusted stores only) and convert them (vol/reserved_legacy.c) */
    uint64_t shard_bytes;    /* target uncompressed shard size of new v3 arrays, bytes; 0 = no sharding
                                (vol/shard.c turns it into a shard shape) */
    char store[H5ZV_URL_PREFIX_MAX];     /* URL prefix (ends in '/') where the stores of new pointer files go;
                                            "" = beside the pointer (vol/pointer.c) */
    char allow_url[H5ZV_URL_PREFIX_MAX]; /* another URL prefix a pointer may lead to ("" = none) */
    struct {
        h5zv_codec_kind kind;
        int             level;     /* zstd, zlib, gzip level; blosc clevel */
        char            cname[16]; /* blosc compressor */
        int             shuffle;   /* blosc: 0 noshuffle, 1 shuffle, 2 bitshuffle */
    } codec;
    struct {
        h5zv_chunks_kind kind;
        uint64_t         target;               /* auto: chunk size aimed at, bytes */
        int              ndim;                 /* explicit */
        uint64_t         shape[ZARR_MAX_DIMS]; /* explicit */
    } chunks;
} h5zv_settings;

/* ---- the interface of the router (vol/route.c) ----------------------------------------------------- */
/* Whether a NEW file at `name` (H5Fcreate) is a zarr store: 1 zarr, 0 native, -1 on a bad configuration
 * (error pushed on the HDF5 stack naming the file, line and key). `fapl_id` is the fapl the application
 * passed (its VOL info is ours, h5zarr_info_t, or none). Order: `create=zarr` -> 1; else the last
 * matching rule's `format`; else 1 when `name` ends in .zarr or .zr3; else 0. Borrows both arguments. */
int h5zv_config_new_is_zarr(hid_t fapl_id, const char *name);
/* The length of `name` without NCO's temporary suffix ".pid<digits>.<program>.tmp" (NCO writes
 * out.nc.pid12345.ncks.tmp, then renames it to out.nc: rules match it as the final name), or 0 when it
 * has none. */
size_t h5zv_config_temp_base_len(const char *name);
/* Why a new path is what it is (same answer as h5zv_config_new_is_zarr, with the reason in *why). */
typedef enum {
    H5ZV_ROUTE_NATIVE, /* native HDF5 (no rule, no zarr suffix; or a rule with format = native) */
    H5ZV_ROUTE_CODE,   /* zarr: the program chose it in code (H5Pset_fapl_zarr: h5zarr_info_t.create) */
    H5ZV_ROUTE_CONFIG, /* zarr: create=zarr from configuration (HDF5_VOL_CONNECTOR text, config file) */
    H5ZV_ROUTE_RULE,   /* zarr: a rule with format = zarr */
    H5ZV_ROUTE_SUFFIX  /* zarr: the name ends in .zarr or .zr3 (whatever sent it to zarr) */
} h5zv_route;
/* A store is made at the name itself for H5ZV_ROUTE_CODE and H5ZV_ROUTE_SUFFIX; for H5ZV_ROUTE_CONFIG
 * and H5ZV_ROUTE_RULE (a program that does not know it writes zarr) the name becomes a pointer file
 * beside the store (vol/pointer.h), so that it stays a file for the program and its tools. */
int h5zv_config_new_route(hid_t fapl_id, const char *name, h5zv_route *why);
/* Whether connector info `i` (borrowed; NULL: no) itself makes every new path a zarr store: its `create`
 * field, else the last `create=` of its options text (the config file is not consulted). What the
 * class's capability flags follow. */
bool h5zv_config_info_creates_zarr(const h5zarr_info_t *i);
/* The resolved settings for the store `name` (created or opened) into *out (caller's memory); -1 with
 * error pushed on a bad configuration. Borrows `fapl_id` and `name`. */
int h5zv_config_get(hid_t fapl_id, const char *name, h5zv_settings *out);

/* ---- applying the settings (file.c, dataset.c) ---------------------------------------------------- */
/* The built-in defaults. */
void h5zv_config_defaults(h5zv_settings *out);
/* The settings of open file `f` (h5zv_file.settings, resolved at create/open; borrowed, valid while `f`
 * is). Never NULL. */
const h5zv_settings *h5zv_file_settings(const struct h5zv_file *f);
/* Engine options for arrays of a store with settings `s` (pool for `threads`, write_empty_chunks). The
 * pools are the process's, kept until exit. */
void h5zv_config_engine_opts(const h5zv_settings *s, zarr_engine_opts *o);
/* Chunk shape for a dataset created without chunking, of `ndim` dims `dims` (max dims `maxdims`),
 * elements of `elsize` bytes, by policy `s->chunks` (docs/CONFIG.md). */
void h5zv_config_chunks(const h5zv_settings *s, int ndim, const hsize_t *dims, const hsize_t *maxdims,
                        size_t elsize, uint64_t *chunks);
/* Appends the configured codec to the chain of `m` (a dataset created without filters, HDF5 type
 * `type_id`, at `path` for messages); nothing for codec=none. -1 with error pushed. */
int h5zv_config_add_codec(const h5zv_settings *s, hid_t type_id, zarr_array_meta *m, const char *path);

/* ---- the connector info (h5zarr_info_t), for the class table (vol/route.c) -------------------------- */
void  *h5zv_info_copy(const void *info);
herr_t h5zv_info_cmp(int *cmp, const void *a, const void *b);
herr_t h5zv_info_free(void *info);
herr_t h5zv_info_to_str(const void *info, char **str);
herr_t h5zv_info_from_str(const char *str, void **info);

#endif
