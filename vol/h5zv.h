/*
 * h5zv.h: internal interface of the zarr VOL connector.
 *
 * The connector maps an HDF5 file onto a zarr hierarchy in a store: groups are zarr groups, datasets
 * zarr arrays, attributes live in the nodes' `attributes`. What zarr has no place for (HDF5 types of
 * attributes, link creation order, soft/external links, max dims) is kept under one reserved key of
 * each node's metadata document, H5ZV_META_KEY, documented in docs/FORMAT.md.
 *
 * Objects: every handle HDF5 holds is an h5zv_obj; all handles of one file share an h5zv_file
 * (reference counted: the file stays alive while any object is open, as HDF5 expects) and a cache of
 * h5zv_node records, one per zarr node touched, so that several handles of one node see the same
 * metadata. Dirty nodes are written at flush and close.
 *
 * Threads: every function here runs on the thread HDF5 called us on, under HDF5's global lock; only
 * the core's engine uses worker threads, and they never call HDF5.
 */
#ifndef H5ZV_H
#define H5ZV_H

#include <hdf5.h>
#include <H5VLconnector.h>

#include "h5zarr/zarr.h"
#include "h5zarr/h5zarr.h"
#include "util.h"
#include "config.h" /* h5zv_settings, kept in each h5zv_file */

struct json_object;
struct zarr_consolidated;
struct h5zv_probe;

/* The key of the reserved object holding HDF5-only facts: a top-level key of each node's own metadata
 * document (the core's `reserved`, ZARR_RESERVED_KEY), not an attribute (stores written before kept it
 * as one: node.c moves it). */
#define H5ZV_META_KEY ZARR_RESERVED_KEY
/* Where anonymous objects (H5Gcreate_anon, H5Dcreate_anon) live until H5Olink names them; hidden from
 * link listings, removed at file close. */
#define H5ZV_ANON_DIR ".h5zarr_anon"
/* Largest element (bytes) stored as a raw zarr type (r<bits>, |V<n>): zarr metadata holds one element
 * as the fill value, in v3 as a JSON list of its bytes. Larger ones use the packed form. */
#define H5ZV_RAW_MAX (64 << 10)
/* Connector identity (also in include/h5zarr/h5zarr.h). */
#define H5ZV_NAME  H5ZARR_VOL_NAME
#define H5ZV_VALUE H5ZARR_VOL_VALUE

/* ---- the floor: errors, ids, base64, property-list checks (vol/util.h) -------------------------- */
/* The connector's own object behind an HDF5 id (vol/native.c): H5VLobject, except that a store's named
 * datatype answers with its h5zv_obj, not with the datatype struct HDF5 is handed for it. */
void *h5zv_object_of(hid_t id);

/* ---- files, nodes, objects --------------------------------------------------------------------- */
typedef struct h5zv_node h5zv_node;

typedef struct h5zv_file {
    int         rc;    /* the file handle + every open object of this file */
    zarr_store *store; /* owned reference */
    /* the write-behind queue in front of an object store (zarr_store_behind.h), or NULL: `store` itself when
     * set (borrowed: owned through `store`); vol/file.c h5zv_file_behind, flushed in vol/flush.c */
    struct zarr_store_behind *behind;
    char             *name;  /* as the user gave it (the store's path when opened through a pointer file) */
    char             *shown; /* the pointer file's name it was opened or created by (H5Fget_name), or NULL */
    char             *real;  /* realpath of the store: one h5zv_file per store per process */
    struct h5zv_file *next_open;
    unsigned          intent;  /* H5F_ACC_RDWR or H5F_ACC_RDONLY */
    int               format;  /* zarr_format of new nodes */
    hid_t             fapl_id; /* copies */
    hid_t             fcpl_id;
    unsigned long     fileno;
    size_t            nbuckets; /* node cache */
    h5zv_node       **buckets;
    size_t            nnodes;
    bool              user_closed;
    unsigned          anon_seq; /* anonymous objects made so far */
    size_t            nprobes;  /* probe-only entries in the node cache (node.c: h5zv_node_probe) */
    struct h5zv_obj  *objs;     /* open objects of this file (h5zv_obj_new/free keep the list) */
    /* the same objects by the first component of their path (handle.c): a move or an unlink visits only
     * the objects that can be at or under its path, not every id H5DSattach_scale leaked (h5zv_obj) */
    struct h5zv_obj **obj_tab;
    size_t            obj_tabsize, nobjs;
    unsigned          nhandles;    /* of them, file handles (H5I_FILE), getfile_objs included */
    h5zv_node       **tok_buckets; /* every cached node by its token (nbuckets chains; node.c) */
    uint64_t          cache_gen;   /* bumped whenever a node joins or leaves the cache (node.c) */
    h5zv_node       **kix;         /* the cache's nodes by parent path, for a batch of listings, valid */
    size_t            kix_n;       /*   while cache_gen is kix_gen (h5zv_node_kids_index) */
    uint64_t          kix_gen;
    unsigned          buckets_pinned; /* walks of the chains that may load nodes: no resize (node.c) */
    /* the entry found last by path or by token (node.c: cache_entry): a reference's object is looked up
     * several times in a row (opened, named, rebuilt) and its chain is cold in a large cache */
    h5zv_node *last_found;
    h5zv_node *graveyard; /* deleted nodes, out of every lookup, freed at close (node.c: node_bury) */
    /* what H5VL_OBJECT_GET_FILE hands out while HDF5 holds their ids: one per file handle number (`via`)
     * asked about (object.c), chained by h5zv_obj.next_getfile; ngetfile of them */
    struct h5zv_obj *getfile_objs;
    unsigned         ngetfile;
    /* the program's last own file handle closed, after the flush (and consolidation) it made: the close
     * of a leaked getfile handle after it (at library exit, where a network store's TLS library may be
     * gone already) writes nothing. Cleared by every new file handle (handle.c). */
    bool                   program_closed;
    struct h5zv_ctype_use *anon_uses; /* users of anonymous committed types (type.c) */
    /* read-only opens of a store with consolidated metadata at its root: the hierarchy as that
     * document describes it, read once (node.c); state 0 not looked at yet, 1 in use, -1 none */
    struct zarr_consolidated *cview; /* owned */
    signed char               cview_state;
    signed char      cview_time_state; /* node.c, h5zv_node_view_time: 0 not asked, 1 known, -1 none */
    int64_t          cview_time;       /* the consolidated document's modification time */
    struct h5zv_mpi *mpi; /* H5Pset_fapl_mpio: the communicator and MPI state (vol/mpi_vol.h), or NULL */

    /* SWMR: H5F_ACC_SWMR_READ or H5F_ACC_SWMR_WRITE while in that mode (vol/swmr.c), else 0 */
    unsigned swmr;
    /* the moves of this open (moves.c: h5zv_token_of): a moved object keeps its token. Owned; NULL
     * until the first move. */
    struct h5zv_moves *moves;
    /* the reference index of this open (vol/refidx.c): which nodes a move must visit to rewrite the
     * references to the moved object. Owned; NULL until the first move, and when dropped. */
    struct h5zv_refidx *refidx;
    /* the settings resolved when the store was created or first opened (vol/config.h); they apply while
     * it stays open (handles share one state). Plain data; read through h5zv_file_settings. */
    h5zv_settings settings;
} h5zv_file;

typedef struct h5zv_moves  h5zv_moves;
typedef struct h5zv_refidx h5zv_refidx;

struct h5zv_node {
    char *path; /* "" = root */
    /* arrays: a number no other shape of any node had (h5zv_node_shape_changed), renewed whenever the
     * shape may have changed (loaded, H5Dset_extent, SWMR refresh): a handle's dataspace built from the
     * same stamp is still the node's (dataset.c: dset_refresh_space) */
    uint64_t          shape_stamp;
    uint64_t          hash; /* XXH3 of path: its bucket in h5zv_file.buckets, compared before the path */
    zarr_node_type    type;
    signed char       format; /* 2 or 3 when known (probe entries keep what the probe saw), else 0 */
    zarr_group_meta  *g;      /* groups (owned) */
    zarr_array       *a;      /* arrays (owned) */
    bool              dirty;
    bool              deleted;
    signed char       tracks_links; /* cached: group reports link creation order (-1 unknown) */
    bool              links_ok;     /* groups: `links` holds h5zv_links_list's answer */
    struct h5zv_link *links;        /* (node.c) dropped when the node is marked dirty, a child is */
    size_t            nlinks;       /* added, or any node is forgotten */
    bool              links_follow; /* `links` is checked to follow the group's recorded order (links.c) */
    bool              tok_ok;       /* `tok` holds the token of `path` (node.c: h5zv_token_to_path) */
    H5O_token_t       tok;
    h5zv_node        *tok_next;    /* chain of h5zv_file.tok_buckets (node.c: the token index) */
    bool              dims_dirty;  /* groups: the dimension names of child arrays need recomputing (dims.c) */
    bool              kids_known;  /* groups made through this cache: every child is in it (node.c) */
    bool              made_here;   /* made through this cache (h5zv_node_add): its documents are ours */
    bool              from_view;   /* loaded from the consolidated view of a read-only open (node.c) */
    unsigned char     kids_missed; /* groups: children looked up in the store one by one (node.c) */
    int64_t           doc_time;    /* its document's time when the read of it learnt it (node.c), else 0 */
    char            **pre_kids;    /* groups of read-only opens: the store's listing, made ahead (node.c) */
    size_t            npre_kids;
    bool              pre_listed; /* pre_kids holds a listing not taken yet */
    /* Deferred creates (node.c, h5zv_node_defer): the store holds none of this node's documents yet;
     * the next flush writes them (with the other dirty nodes, over the pool). */
    bool       unwritten;
    int64_t    born;      /* unwritten: when it was made (time(NULL)), for H5Oget_info's times */
    h5zv_node *pend_kids; /* groups: children made unwritten here (chain of pend_next; node.c) */
    h5zv_node *pend_next;
    h5zv_node *next;
    /* arrays: the zarr metadata changed (the fill value, dataset.c): the next write writes every document */
    bool doc_dirty;
    /* the reserved object was read from an attribute (stores written before, node.c): messages name the
     * v2 .zattrs; cleared when the node is written (it is in its .zarray/.zgroup then) */
    bool reserved_from_attrs;
};

typedef struct h5zv_obj {
    H5I_type_t type; /* H5I_FILE, H5I_GROUP, H5I_DATASET, H5I_ATTR, H5I_DATATYPE */
    h5zv_file *file;
    char      *path; /* node path ("" root); for attributes the parent's path */
    /* datasets */
    hid_t type_id;  /* file datatype as HDF5 sees it */
    hid_t space_id; /* current dataspace */
    hid_t dcpl_id;
    hid_t dapl_id;
    /* the node's shape_stamp space_id was built from; 0: rebuild it at the next use */
    uint64_t space_stamp;
    /* the node found at `path` last (dataset.c: dset_node), good while the file's cache_gen is node_gen:
     * no node joined, left or moved since; NULL after the path changes (handle.c) */
    struct h5zv_node *node;
    uint64_t          node_gen;
    bool              node_virtual; /* h5zv_virtual_is(node), asked once a node */
    /* the dapl's chunk cache size (H5Pset_chunk_cache, as netCDF sets it per variable), 0 if not given:
     * the array's chunk cache holds at least this much (dataset.c: dset_engine_opts) */
    size_t rdcc_nbytes;
    /* the memory form of type_id (dataset.c: dset_form), made at the first transfer and kept: its id
     * (owned), the type_id it was made from, its size, class, whether it holds vlen data or strings, and
     * a vlen's base size (0 otherwise) */
    hid_t       mf_id, mf_of;
    size_t      mf_size, mf_vfac;
    H5T_class_t mf_class;
    bool        mf_has_vl;
    /* the predefined memory type of the last transfer (0: none; dataset.c: xfer_mem_type), the memory form
     * it was compared with, its size and whether it converts */
    hid_t  mt_id, mt_mf;
    size_t mt_size;
    bool   mt_conv;
    /* attributes */
    char       *attr_name;
    hid_t       attr_type;
    hid_t       attr_space;
    H5S_class_t attr_sclass; /* attr_space's class and element count (0 when null), set with it: an */
    hssize_t    attr_npts;   /* attribute's dataspace never changes (attr.c: attr_obj_space) */
    /* named datatypes */
    hid_t            dtype_id;
    struct h5zv_obj *next_obj, *prev_obj;   /* h5zv_file.objs */
    struct h5zv_obj *next_comp, *prev_comp; /* chain of h5zv_file.obj_tab (handle.c) */
    uint64_t         comp_hash;             /* of the first component of `path` */
    /* the file handle this object was reached through (route.c: via): its number, given to each file
     * object when it is made (0: not known); H5Fget_obj_ids with H5F_OBJ_LOCAL counts by it */
    unsigned long via;
    /* opened through a reference (H5Ropen_object, H5Rdereference: loc by token) and handed to no callback
     * since but to name it or close it (route.c: in_use). HDF5 1.14.5's H5DSattach_scale leaks such ids on
     * non-native files (H5DS.c:588, one per scale already attached), so they alone don't keep a store
     * open against a new create of its name (file.c: held_only_by_leaks) */
    bool ref_idle;
    /* a file object H5VL_OBJECT_GET_FILE made (h5zv_file.getfile_objs): it stands for the file handle
     * numbered `via` (H5Iget_file_id's id for that handle) and is not a handle of the program's own */
    bool             getfile;
    struct h5zv_obj *next_getfile;
} h5zv_obj;

/* File lifetime. */
void h5zv_file_incref(h5zv_file *f);
void h5zv_file_decref(h5zv_file *f);     /* frees when the count reaches zero (flushes dirty nodes) */
void h5zv_file_unregister(h5zv_file *f); /* forgets f in the table of open stores */
int  h5zv_file_flush(h5zv_file *f);
/* h5zv_file_flush without the store's own flush (h5zv_file_store_flush): the chunks and documents are
 * handed to the store, a write-behind queue may still hold them (H5Fclose then adds the consolidated
 * metadata to the same batch). `root_too` false: the root group's document is left dirty, for a v3
 * consolidation that writes it next (h5zv_node_consolidate with `root_pending`). 0, or -1 with errors
 * pushed. */
int h5zv_file_flush_nodes(h5zv_file *f, bool root_too);
/* What the store must hold before the keys at and below `path` move or go (H5Lmove, an open object's
 * unlink): the cached chunks and dirty documents of the nodes there, and the unwritten groups above `to`
 * (NULL: none). The rest stays dirty for the next whole flush, so a run of renames does not rewrite the
 * parent group's document and settle its dimension names once per move. MPI files flush whole. 0, or
 * -1 with an error pushed. */
int h5zv_file_flush_under(h5zv_file *f, const char *path, const char *to);
/* The store's own flush (zarr_store_flush): behind a write-behind queue, waits for every queued write.
 * 0, or -1 with an error pushed naming the first failed key's dataset or group when known. */
int h5zv_file_store_flush(h5zv_file *f);

/* New object of `type` on file `f` for node `path` (copied); takes a file reference. */
h5zv_obj *h5zv_obj_new(h5zv_file *f, H5I_type_t type, const char *path);
void      h5zv_obj_free(h5zv_obj *o); /* drops the file reference; accepts NULL */
/* True if an open object of `f` lives at `path` or below it (attributes count for their object). */
bool h5zv_path_in_use(h5zv_file *f, const char *path);
/* Open objects at `from` or below now live at `to` (the same place below it): after a move. */
int h5zv_objs_retarget(h5zv_file *f, const char *from, const char *to);
/* Object `o` now lives at `path` (taken: malloc'ed); its old path is freed. */
void h5zv_obj_set_path(h5zv_obj *o, char *path);

/* Node cache: returns the node at `path`, loading it from the store (NULL + error pushed if there is
 * none). The node is owned by the file. */
h5zv_node *h5zv_node_get(h5zv_file *f, const char *path);
/* The root group's node from the document the file's opener read (takes `g`), so that opening a store
 * reads its root once; NULL + error pushed when out of memory. */
h5zv_node *h5zv_node_seed_root(h5zv_file *f, zarr_group_meta *g);
/* A read-only open's root from its large v3 zarr.json `doc` (`n` bytes) holding consolidated metadata:
 * the file's view is made from the text (zarr_consolidated_from_doc: each member made into its node as it
 * is parsed, no tree of the whole document kept) and the root group seeded from it. 1 done, 0 not taken
 * (the caller loads the root as before), -1 error pushed. */
int h5zv_node_seed_root_doc(h5zv_file *f, const void *doc, size_t n);
/* Registers a freshly created node (takes `g` or `a`). */
h5zv_node *h5zv_node_add(h5zv_file *f, const char *path, zarr_group_meta *g, zarr_array *a);
/* Forgets nodes and probe results at and below `path` after a change the cache did not make itself
 * (a delete, either end of a move, a copy into `path`); the parent's link list is dropped, and nothing
 * else of the cache (other groups' listings, probes and kids_known stay). `arrived`: a node may now be at
 * `path` (the destination of a move or copy): a parent that knew all of its children (kids_known) loads
 * it and keeps knowing them; another parent drops its listing taken ahead. */
void h5zv_node_forget(h5zv_file *f, const char *path, bool arrived);
/* After the store moved the keys at and below `from` to `to` (zarr_store_rename; flushed before with
 * h5zv_file_flush_under): the cached nodes there follow, at their new paths, with their metadata and open
 * arrays (zarr_array_set_path; their cached chunks are dropped), as h5zv_node_forget then a load at `to`
 * would leave them, without reading them again. What was seen at or below either end (probes) is
 * forgotten; the parents' link listings are left to h5zv_link_unrecord / h5zv_link_record, which the
 * move calls next. The move joins the file's move log (h5zv_moves_add): the moved nodes keep their
 * tokens, which the log gives their new paths. Out of memory, or while a walk holds the cache's chains,
 * it forgets both ends instead (h5zv_node_forget, h5zv_token_moved). 0, or -1 with an error pushed when
 * the move can't be recorded. */
int h5zv_node_moved(h5zv_file *f, const char *from, const char *to);
/* What is at `path` (ZARR_NODE_NONE: nothing), as zarr_node_probe says, remembered per file: loaded
 * nodes answer from the cache, other answers (present or absent) are kept until a node is made at
 * that path (h5zv_node_add) or a node at or above it is deleted or moved (h5zv_node_forget). A path under
 * a group this cache made (h5zv_node_add) with no entry is absent without a store read: every child of
 * such a group was made through the cache, until a node arrives in it (h5zv_node_forget). Callers that make
 * nodes behind the cache's back call h5zv_node_forget or h5zv_node_add. 0, or -1 (nothing pushed: the core's
 * message is in zarr_errmsg()) when the store can't be read. */
int h5zv_node_probe(h5zv_file *f, const char *path, zarr_node_type *type);
/* True if the cache knows nothing is at `path` without asking the store: its parent is a group this
 * cache made (every child of it is made through the cache) and no node is cached there. A create at
 * such a path can skip the store's probe and stale-key removal (ZARR_CREATE_NEW). */
bool h5zv_node_known_absent(h5zv_file *f, const char *path);
/* Deferred creates. A create at `path` may leave its documents to the next flush when the cache knows
 * nothing is there (h5zv_node_known_absent) and nobody else could need them before: not under MPI
 * (rank 0 writes the metadata between barriers, vol/mpi_vol.c), not on a durable store (its creates are
 * on disk when they return, docs/CONFIG.md), not on a store left out of the table of open stores
 * (a second H5Fopen in this process would not share this cache). Everything this process asks
 * (probes, opens, link listings, H5Oget_info) answers from the cache meanwhile; other processes see the
 * node after H5Fflush/H5Fclose, as with HDF5's own metadata cache. */
bool h5zv_node_can_defer(h5zv_file *f, const char *path);
/* True when a change of an existing node's zarr metadata (H5Dset_extent's shape) may wait for the next
 * flush (doc_dirty) for the same reasons, and not in SWMR mode (readers refresh from the store). */
bool h5zv_node_can_defer_doc(h5zv_file *f);
/* Marks new node `n` (just made with h5zv_node_add, nothing of it written) unwritten and dirty, and
 * lists it among its parent's unwritten children, which h5zv_links_list adds to what the store lists. */
void h5zv_node_defer(h5zv_file *f, h5zv_node *n);
/* The node's attributes object (never NULL for a live node). */
struct json_object *h5zv_node_attrs(h5zv_node *n);
/* The node's reserved object (its metadata's `reserved`, H5ZV_META_KEY in its document), created when
 * `create`. NULL if absent. */
struct json_object *h5zv_node_meta(h5zv_node *n, bool create);
void                h5zv_node_mark_dirty(h5zv_node *n);
/* Gives array node `n` a new shape_stamp: its shape changed (or may have), handles rebuild their space. */
void h5zv_node_shape_changed(h5zv_node *n);
int  h5zv_node_write(h5zv_file *f, h5zv_node *n);

/* Where the node's metadata keeps that object (the core's `reserved` member; may hold NULL). */
struct json_object **h5zv_node_reserved_slot(h5zv_node *n);
/* Writes node `n`'s documents with the HDF5-free core calls alone, so it may run on a pool worker
 * (vol/flush.c); `n` is borrowed and left as it is (the caller marks it clean). A zarr_status. */
int h5zv_node_docs_write(zarr_store *s, const h5zv_node *n);
/* h5zv_node_probe without the shortcut of a group's known children: for the directories a listing found
 * (vol/links.c), which are there. */
int h5zv_node_probe_listed(h5zv_file *f, const char *path, zarr_node_type *type);
/* v3: the zarr.json of the children `names[n]` of group `path` (those not cached) read and parsed as one
 * job of the file's engine pool (zarr_node_load_many: one get_many first on a store that prefers
 * batches, else each worker reads what it parses) and their nodes put in the cache as h5zv_node_probe
 * would put them, so their probes and loads ask nothing; a child whose document is missing or does not
 * load is left to its own probe, which reports it. Fewer than a few children: nothing (their probes
 * read them). 0, or -1 when out of memory (nothing pushed). */
int h5zv_node_prefetch_kids(h5zv_file *f, const char *path, const char *const *names, size_t n);
/* Read-only opens of a store that prefers batches (v3), without consolidated metadata: the child groups
 * among `names[n]` (children of `path`, read into the cache already) are listed in parallel, and the
 * documents of all their children read with one get_many, so a visit waits a round trip or two a level
 * rather than two a group. Each listing is kept in its group for h5zv_node_take_listing. Failures are
 * dropped (the visit lists as before). */
void h5zv_node_list_ahead(h5zv_file *f, const char *path, const char *const *names, size_t n);
/* The listing of group `path` made ahead (h5zv_node_list_ahead), given once to cb(name, true, ud)
 * and dropped: 0, the first non-zero cb result, or 1 when there is none. */
int h5zv_node_take_listing(h5zv_file *f, const char *path, zarr_list_cb cb, void *ud);
/* The consolidated view of a read-only open (node.c loads nodes from it), or NULL; owned by the file. */
struct zarr_consolidated *h5zv_file_view(h5zv_file *f);
/* A node of `type` was made at `path` in the store behind the cache (not through h5zv_node_add): what a
 * probe saw there is dropped and the type is remembered, so a parent's known children include it. */
void h5zv_node_made_behind(h5zv_file *f, const char *path, zarr_node_type type);
/* consolidated=1 at close, after the flush (file.c): writes the consolidated metadata of the whole
 * hierarchy from the documents of the nodes this cache made (serialized again, as written) and the
 * children of the groups whose children it knows, reading from the store only the rest (nodes loaded
 * from it, or made behind the cache). `*md` (may be NULL): new reference to the metadata written, the
 * caller puts it. `root_pending`: the root group's document was left out of the flush
 * (h5zv_file_flush_nodes with root_too false): the consolidation takes it from the cache as it is and
 * its one write is the consolidated one. Returns a ZARR_* code (message in zarr_errmsg). */
int h5zv_node_consolidate(h5zv_file *f, struct json_object **md, struct json_object **hidden,
                          bool root_pending);
/* The child nodes of the group at `path` when the cache knows all of them (a group made through it:
 * kids_known), deferred ones included: cb(name, true, ud) for each, in no particular order; 0, or the
 * callback's non-zero return; 1 when the cache does not know them all (list the store). `name` is
 * borrowed for the call. */
int h5zv_node_known_children(h5zv_file *f, const char *path, zarr_list_cb cb, void *ud);
/* An index of the cached nodes by parent path that h5zv_node_known_children uses while no node joins or
 * leaves the cache (a flush's listing of every dirty group: one pass, not one per group); _drop frees it
 * (accepts a file without one). Out of memory: no index (the listings scan). */
void h5zv_node_kids_index(h5zv_file *f);
void h5zv_node_kids_index_drop(h5zv_file *f);
/* The times of node `n` when it was loaded from the consolidated view (read-only opens): the modification
 * time of the consolidated document (v3 the root zarr.json, v2 .zmetadata), asked of the store once per
 * open and shared by every node loaded from it (the root of the view included). 1 with `*t` set (0 when the
 * store keeps no times: never a request per node); 0 when `n` is not from the view. */
int h5zv_node_view_time(h5zv_file *f, const h5zv_node *n, int64_t *t);
/* True if `lk` is a link record of _h5zarr.links a listing can take: an object with a string "soft" or
 * "hard", an "external" list of two strings, or a "ud" list of a link class and a string (a store is
 * untrusted input: node.c checks every record when a node is loaded). `lk` is borrowed. */
bool h5zv_link_record_ok(struct json_object *lk);
/* The hook node.c runs on each node it loads from the store (`n` owned by the file; it may edit the
 * node's metadata and mark it dirty). The node cache sits below the readers of reserved fields, so the
 * connector's init sets it (vol/connector.c: h5zv_reserved_upgrade); NULL: nothing runs. */
typedef void (*h5zv_node_load_fn)(h5zv_file *f, h5zv_node *n);
void h5zv_node_set_load_hook(h5zv_node_load_fn fn);

/* ---- property lists ---------------------------------------------------------------------------------- */
/* Base64 of H5Pencode2(plist) (malloc'ed) / the list back (new id, or negative). decode runs HDF5's
 * decoder on its input: only for stores the user trusts (vol/reserved_legacy.c, legacy_reserved=1); it
 * never hands HDF5 the bytes of a fill value whose type holds pointers (old stores kept a pointer
 * there): they are zeroed (a NULL string / empty sequence), or the list is refused when they can't be
 * found. */
char *h5zv_plist_encode(hid_t plist);
hid_t h5zv_plist_decode(const char *b64);
/* Closes the decoded lists plist.c remembers (the connector's last term, before HDF5 closes its ids). */
void h5zv_plist_memo_clear(void);

/* ---- paths ---------------------------------------------------------------------------------------- */
/* Joins a base node path and an HDF5 name ("/abs", "rel/x", ".") into a normalized node path
 * (malloc'ed), following soft links stored in groups along the way. NULL + error pushed on bad names. */
char *h5zv_path_resolve(h5zv_file *f, const char *base, const char *name);
/* Resolves `name` (NULL: the location itself) at `loc` relative to `o`, following soft links and
 * external links into other zarr stores. On success *file is the store the object lives in (a new
 * reference: release with h5zv_file_decref) and *path its node path (malloc'ed). */
int h5zv_resolve_ext(h5zv_obj *o, const H5VL_loc_params_t *loc, const char *name, h5zv_file **file,
                     char **path);
/* Opens (or shares) the zarr store `name` as a file (new reference). Used to follow external links. */
h5zv_file *h5zv_file_open_store(const char *name, unsigned intent, hid_t fapl_id);
/* Resolves loc_params relative to object `o` to a node path (malloc'ed). */
char *h5zv_loc_path(h5zv_obj *o, const H5VL_loc_params_t *loc);
/* A fresh path for an anonymous object (malloc'ed); makes the anonymous area when needed. */
char *h5zv_anon_path(h5zv_file *f);
/* True if `path` lies in the anonymous area. */
bool h5zv_is_anon(const char *path);
/* Parent path and last component of `path` (both malloc'ed). */
int h5zv_path_split(const char *path, char **parent, char **leaf);

/* ---- links (children of groups, in creation order) --------------------------------------------- */
/* HARD: the node itself is the child; ALIAS: a further hard link to a node elsewhere (the target's
 * node path in `target`; the node lists its aliases), reported to HDF5 as a hard link. */
/* UD: a user-defined link (H5Lcreate_ud) kept as its class number (`file`, decimal text) and value
 * (`target`, base64); stored and listed, never followed (the class's callbacks are code). */
typedef enum {
    H5ZV_LINK_HARD,
    H5ZV_LINK_SOFT,
    H5ZV_LINK_EXTERNAL,
    H5ZV_LINK_ALIAS,
    H5ZV_LINK_UD
} h5zv_link_kind;
typedef struct h5zv_link {
    char          *name;
    h5zv_link_kind kind;
    char          *target; /* soft: path; external: object path */
    char          *file;   /* external: file name */
    int64_t        corder; /* creation order */
} h5zv_link;
/* All links of the group at `path` in creation order (array malloc'ed; free with h5zv_links_free).
 * Answered from a per-node copy while the group is unchanged (see h5zv_node.links). */
int  h5zv_links_list(h5zv_file *f, const char *path, h5zv_link **out, size_t *n);
void h5zv_links_free(h5zv_link *l, size_t n); /* accepts NULL (node.c: groups keep their listing) */
/* Frees the strings of one link (name, target, file) and sets them NULL; the struct is the caller's. Accepts
 * NULL. */
void h5zv_link_clear(h5zv_link *l);
/* Link `name` of the group at `path`, looked up in the group's kept listing (no copy of the others):
 * 1 and a copy in *out when `out` is not NULL (its name, target and file strings are the caller's to
 * free), 0 when there is none, -1 with an error pushed. */
int h5zv_links_find(h5zv_file *f, const char *path, const char *name, h5zv_link *out);
/* Sorts links by name (stable). */
void h5zv_links_sort_by_name(h5zv_link *l, size_t n);
/* Records a new link in the parent's creation order (hard links: node already made). */
/* The same with an explicit creation order value (H5Lmove/H5Lcopy keep the original's). */
int h5zv_link_record_at(h5zv_file *f, const char *parent, const char *name, h5zv_link_kind kind,
                        const char *target, const char *file, int64_t corder);
int h5zv_link_record(h5zv_file *f, const char *parent, const char *name, h5zv_link_kind kind,
                     const char *target, const char *file);
int h5zv_link_unrecord(h5zv_file *f, const char *parent, const char *name);

/* ---- types ---------------------------------------------------------------------------------------- */
/* HDF5 file type for a zarr dtype (new id), honoring a recorded HDF5 type when present. */
hid_t h5zv_type_from_zarr(const zarr_dtype *t, struct json_object *meta);
/* The zarr dtype for an HDF5 type (new), or NULL + error for types zarr cannot store. `*record` is
 * set when the HDF5 type must be recorded in the node metadata to round-trip (enum, etc.). v3 cannot
 * describe struct fields with sub-array shapes: such compounds are stored as raw bytes there. */
zarr_dtype *h5zv_type_to_zarr(hid_t type_id, int zarr_format, bool *record);
/* True if `type_id` holds pointers in memory anywhere (vlen sequences or strings, references), also
 * inside arrays and compound members: such types can't be stored as raw bytes. */
bool h5zv_type_has_pointers(hid_t type_id);
/* True if datasets of file type `type_id` are stored in the packed form: vlen bytes, one packed
 * element each (types with vlen strings or sequences inside arrays, compounds or vlens). Fixed-size
 * types over H5ZV_RAW_MAX with no natural zarr form are packed too (see h5zv_type_to_zarr); whether a
 * stored dataset is packed is told by its zarr dtype (vlen bytes) and HDF5 type together. */
bool h5zv_type_is_encoded(hid_t type_id);
/* One element of memory-form type `mf` <-> its packed form (docs/FORMAT.md). pack: out->p malloc'ed.
 * unpack: `elem` zeroed by the caller; pointers inside are malloc'ed (free with H5Treclaim); fails on
 * input that does not match the type exactly. */
int h5zv_enc_pack(hid_t mf, const void *elem, zarr_vlen *out);
int h5zv_enc_unpack(hid_t mf, const zarr_vlen *in, void *elem);
/* The same for many elements of one type: what packing needs of `mf`, read from HDF5 once (a plan, owned
 * by the caller: NULL when the type can't be read or out of memory; free accepts NULL). */
typedef struct h5zv_enc_plan h5zv_enc_plan;
h5zv_enc_plan               *h5zv_enc_plan_new(hid_t mf);
void                         h5zv_enc_plan_free(h5zv_enc_plan *p);
int                          h5zv_enc_pack_plan(const h5zv_enc_plan *p, const void *elem, zarr_vlen *out);
int                          h5zv_enc_unpack_plan(const h5zv_enc_plan *p, const zarr_vlen *in, void *elem);
/* The packed element `in` of the type planned in `p` (h5zv_enc_plan_new: the type is read from HDF5
 * once for all the elements of an attribute or slab) with its references to `from` (a node path) or
 * below moved below `to` (H5Lmove: stored references follow the object, as HDF5's addresses do): 1 and
 * the new element in `out` (malloc'ed, the caller's) when one moved, 0 when none did, -1 when `in` does
 * not match the type or `p` is NULL. */
int h5zv_enc_move_refs(const h5zv_enc_plan *p, const zarr_vlen *in, const char *from, const char *to,
                       zarr_vlen *out);
/* The references stored in the attributes of node `n` to `from` or below now name `to` or below (the node
 * is marked dirty if one did); a stored element that doesn't match its type is left as it is (it names no
 * object; reading it reports it). -1 + error pushed when an attribute's type can't be read. */
int h5zv_attrs_move_refs(h5zv_node *n, const char *from, const char *to);
/* What vol/refidx.c files node `n` under: fn(s, len, ud) for every string (s[0..len), not NUL-terminated,
 * no leading '/') that a packed attribute element of `n` may hold as a reference (a superset: whenever
 * h5zv_attrs_move_refs(n, from, ...) can change anything, one of them is `from` or begins with `from`/);
 * fn(NULL, 0, ud) for an element that does not decode (a hit for every `from`). */
typedef void (*h5zv_ref_target_fn)(const char *s, size_t len, void *ud);
void h5zv_attrs_ref_targets(h5zv_node *n, h5zv_ref_target_fn fn, void *ud);
/* The same for the data of dataset node `n` (dataset_refs.c): the references its elements hold (packed
 * form) that name `from` or an object under it are rewritten to name the same object under `to`; elements
 * that don't match the type are left as they are. 0 (also for a node that holds none), -1 with an error
 * pushed (the store). */
int h5zv_dataset_move_refs(h5zv_node *n, const char *from, const char *to);
/* Whether h5zv_dataset_move_refs may change the data of node `n`: an array of ours in the packed form whose
 * HDF5 type holds references (a question about its type alone, fixed at its create). */
bool h5zv_dataset_holds_refs(h5zv_node *n);
/* The reference index (vol/refidx.c). move: after the hard link `from` moved to `to` (the store renamed),
 * the references at or below `from` in every node of the file now name `to` or below it: the first move
 * of an open walks every node and builds the index, later ones visit the nodes it names. 0, or -1 with an
 * error pushed. touch: node `path` may have gained, lost or changed references (its attributes or data
 * written): the next move visits it. drop: something may have changed nodes behind the index (or the file
 * goes): the next move walks again. All accept a file without an index. */
int  h5zv_refidx_move(h5zv_file *f, const char *from, const char *to);
void h5zv_refidx_touch(h5zv_file *f, const char *path);
void h5zv_refidx_drop(h5zv_file *f);
/* The type of the engine's memory form for file type `ftype` (host byte order; new id). */
hid_t h5zv_type_memform(hid_t ftype);
/* The same, as h5zv_type_keep gives it (release with h5zv_type_release): `ftype` itself when it is a
 * predefined type already in memory form. */
hid_t h5zv_type_memform_kept(hid_t ftype);
/* Frees what `n` elements of memory-form type `mf` in `buf` point to (vlen data, strings, references);
 * nothing for types without pointers. The elements themselves stay (caller's buffer). */
void h5zv_reclaim(hid_t mf, size_t n, void *buf);
/* Types held by open objects. keep: takes a new id `t` and returns what the object holds: the predefined
 * type equal to `t` (then `t` is closed; HDF5's predefined ids are not counted as open objects by
 * H5Fget_obj_count), or `t` itself. release: closes what keep returned (nothing for predefined ids;
 * negative: nothing), keeping the errors pushed so far as h5zv_close does. */
hid_t h5zv_type_keep(hid_t t);
void  h5zv_type_release(hid_t t);
/* keep of a copy of `t` (the caller's, untouched): `t` itself, without a copy, when it is one of
 * HDF5's predefined integer or IEEE float ids. */
hid_t h5zv_type_keep_copy(hid_t t);
/* Whether `t` is one of HDF5's predefined STD integer or IEEE float ids (the library's own ids, not
 * copies): then its class, size, signedness and byte order (each output may be NULL), found without an
 * HDF5 call. */
bool h5zv_type_std_info(hid_t t, H5T_class_t *cls, size_t *size, bool *sign, bool *be);
/* True if `t` is an IEEE binary16/32/64 float, in either byte order (its values are exact as doubles). */
bool h5zv_type_is_ieee_float(hid_t t);
/* The predefined id (as h5zv_type_std_info knows them) that `t` is or equals when `t` is one of those
 * or one of the library's native integer or float ids (H5T_NATIVE_INT, ...; which one each equals is
 * asked of HDF5 once); negative otherwise. Nothing pushed. */
hid_t h5zv_type_std_of(hid_t t);
/* The library's own id (no copy: what h5zv_type_keep gives) when `j` is a datatype short name
 * (type_json.c) of one of those predefined integer or float types; negative otherwise (nothing pushed). */
hid_t h5zv_type_named_std(struct json_object *j);
/* The bool enum {FALSE=0, TRUE=1} on int8 and the variable-length UTF-8 string type (new ids). */
hid_t h5zv_type_bool(void);
hid_t h5zv_type_vlen_utf8(void);
/* Base64 of H5Tencode(type) (malloc'ed) / the type back (new id). decode runs HDF5's decoder on its
 * input: only for stores the user trusts (vol/reserved_legacy.c, legacy_reserved=1). */
char *h5zv_type_encode(hid_t type_id);
hid_t h5zv_type_decode(const char *b64);

/* ---- filters <-> codecs (vol/filter.c) ------------------------------------------------------------ */
/* Appends to `m->chain` the zarr codecs equivalent to the filter pipeline of `dcpl_id` for a dataset
 * of HDF5 type `type_id` at `path` (for messages). An optional filter that neither zarr nor HDF5 can
 * apply (h5zv_filter_left_out) gets no codec, as HDF5 skips it; the dcpl record keeps it
 * (h5zv_filters_record_prune). Fails, naming the filter and a lossless alternative, for the other
 * filters zarr cannot express. `m` is borrowed; its chain is modified in place. */
int h5zv_filters_to_chain(hid_t dcpl_id, hid_t type_id, zarr_array_meta *m, const char *path);
/* True for filter `id` with `flags` that h5zv_filters_to_chain leaves out of the codecs and records: no
 * zarr codec, H5Z_FLAG_OPTIONAL, and not available to HDF5 (H5Zfilter_avail), which skips it too. */
bool h5zv_filter_left_out(H5Z_filter_t id, unsigned flags);
/* The `filters` of `dj` (the JSON form of `dcpl_id`, borrowed, changed in place) pruned to what a
 * reader uses: the filters with a codec (hdf5_lz4's flags and cd_values) and those left out
 * (h5zv_filter_left_out); the key goes when nothing of it is left. Filters dropped for
 * H5ZARR_UNSUPPORTED_FILTER's substitute are not recorded. -1 with an error pushed. */
int h5zv_filters_record_prune(hid_t dcpl_id, struct json_object *dj);
/* True if `dcpl_id` holds a filter h5zv_filter_left_out. */
bool h5zv_filters_any_left_out(hid_t dcpl_id);
/* The filter-mask bits (bit i: filter i of the pipeline) of the optional filters without a codec in the
 * dataset's dcpl `dcpl_id` (borrowed): left out at create, so every chunk skipped them, as HDF5 marks it. */
uint32_t h5zv_filters_left_out_mask(hid_t dcpl_id);
/* Puts the filters left out at create, recorded in the dcpl document `j` (borrowed; `where` names it
 * for messages), back into `dcpl_id` (holding what h5zv_filters_from_chain set) at their places in the
 * recorded pipeline, with their flags and cd_values. A recorded filter without a codec must be
 * optional: a mandatory one is refused naming the field (it can't have been left out). -1 with an
 * error pushed. */
int h5zv_filters_add_left_out(struct json_object *j, const char *where, hid_t dcpl_id);
/* Blosc's type size for HDF5 type `type_id` (what hdf5-blosc's set_local computes: an array's base type). */
unsigned h5zv_filter_blosc_typesize(hid_t type_id);
/* Sets on `dcpl_id` the HDF5 filters equivalent to the codecs of `m->chain` (what H5Pget_filter2 and
 * h5dump -p report on open). Codecs with no HDF5 filter are skipped. */
int h5zv_filters_from_chain(const zarr_array_meta *m, hid_t dcpl_id);

/* ---- tokens --------------------------------------------------------------------------------------- */
/* Path for a token: from the file's table, or by walking the hierarchy. malloc'ed; NULL if unknown. */
char *h5zv_token_to_path(h5zv_file *f, const H5O_token_t *tok);
/* The cached node (loaded, or a probe's entry: h5zv_node_get loads it) whose token is `tok`, found in the
 * token index without a copy of its path; NULL when no cached node has it (h5zv_token_to_path then walks
 * the hierarchy). Owned by the file. */
h5zv_node *h5zv_node_of_token(h5zv_file *f, const H5O_token_t *tok);
/* The token of cached node `n`: h5zv_token_of(f, n->path), from the node when it holds it. */
void h5zv_node_token(h5zv_file *f, h5zv_node *n, H5O_token_t *tok);
/* The token of the object now at `path`. A token is the hash of the path the object had when this open
 * first met it: an object moved by H5Lmove (or unlinked while open) keeps its token, and an object made
 * later at a path something was moved away from gets another one (salted by the move), as native HDF5's
 * addresses stay with their objects (netCDF's nc_rename_var, h5py's object identity). Tokens live in
 * this process only: references are stored as paths. */
void h5zv_token_of(h5zv_file *f, const char *path, H5O_token_t *tok);
/* Records that what was at `from` (and below) is now at `to` and re-indexes the cached nodes it moves
 * (node.c); -1 + error pushed when out of memory. */
int h5zv_token_moved(h5zv_file *f, const char *from, const char *to);
/* The move log alone (moves.c): appends one move (copies of both paths); -1 + error pushed on failure. */
int h5zv_moves_add(h5zv_file *f, const char *from, const char *to);
/* Frees a file's move log; NULL is fine. */
void h5zv_moves_free(h5zv_moves *m);

/* ---- callbacks (one file per object kind) -------------------------------------------------------- */
void *h5zv_file_create(const char *name, unsigned flags, hid_t fcpl_id, hid_t fapl_id, hid_t dxpl_id,
                       void **req);
/* The same for the store of a pointer file (route.c): the configuration's rules are matched against
 * `rule_name`, the name the program gave, not the store's name (`name`). */
void *h5zv_file_create_as(const char *name, const char *rule_name, unsigned flags, hid_t fcpl_id,
                          hid_t fapl_id, hid_t dxpl_id, void **req);
void *h5zv_file_open(const char *name, unsigned flags, hid_t fapl_id, hid_t dxpl_id, void **req);
/* h5zv_file_open after h5zv_file_probe said `name` is a store: what the probe opened (a read-only open
 * takes its store) and read (the root document) is used, not asked again. `p` is left to the caller to
 * release. */
void *h5zv_file_open_probed(const char *name, unsigned flags, hid_t fapl_id, hid_t dxpl_id, void **req,
                            struct h5zv_probe *p);
/* Records that the open file object `o` (from h5zv_file_create_as/h5zv_file_open) was reached through
 * the pointer file `pointer` (copied): H5Fget_name reports that name, the one the program gave. -1 (error
 * pushed) when out of memory. */
int h5zv_file_set_shown_name(void *o, const char *pointer);
/* Whether the file name `fname` (borrowed; as a reference or H5Fget_name gives it) names the open file
 * `f`: its store, or the pointer file it was reached through (same text, or the same real path). */
bool   h5zv_file_is_named(const h5zv_file *f, const char *fname);
herr_t h5zv_file_get(void *obj, H5VL_file_get_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_file_specific(void *obj, H5VL_file_specific_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_file_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_file_close(void *file, hid_t dxpl_id, void **req);

void *h5zv_group_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl_id,
                        hid_t gcpl_id, hid_t gapl_id, hid_t dxpl_id, void **req);
void *h5zv_group_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t gapl_id, hid_t dxpl_id,
                      void **req);
herr_t h5zv_group_get(void *obj, H5VL_group_get_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_group_specific(void *obj, H5VL_group_specific_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_group_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_group_close(void *grp, hid_t dxpl_id, void **req);
/* Creates the group node at `path` (parents must exist unless `make_parents`). */
int h5zv_group_make(h5zv_file *f, const char *path, bool make_parents);
/* Checks that a new object may be created at `path` (writable file, parent group present or made
 * when the lcpl asks for intermediate groups). */
int h5zv_check_new_path(h5zv_file *f, const char *path, hid_t lcpl_id);
/* A gcpl that tells what group node `n` was created with (new id). */
hid_t h5zv_group_gcpl(h5zv_node *n);
/* Whether group `n` reports link creation order values (its gcpl, or the fcpl for the root, asks for
 * tracking; groups made by other tools do). Order is always kept; this is what HDF5 callers see. */
bool h5zv_group_tracks_links(h5zv_node *n);

void  *h5zv_dataset_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl_id,
                           hid_t type_id, hid_t space_id, hid_t dcpl_id, hid_t dapl_id, hid_t dxpl_id,
                           void **req);
void  *h5zv_dataset_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t dapl_id,
                         hid_t dxpl_id, void **req);
herr_t h5zv_dataset_read(size_t count, void *dset[], hid_t mem_type_id[], hid_t mem_space_id[],
                         hid_t file_space_id[], hid_t dxpl_id, void *buf[], void **req);
herr_t h5zv_dataset_write(size_t count, void *dset[], hid_t mem_type_id[], hid_t mem_space_id[],
                          hid_t file_space_id[], hid_t dxpl_id, const void *buf[], void **req);
herr_t h5zv_dataset_get(void *obj, H5VL_dataset_get_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_dataset_specific(void *obj, H5VL_dataset_specific_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_dataset_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_dataset_close(void *dset, hid_t dxpl_id, void **req);
/* Opens the dataset object for node path `path` (used by object open). */
h5zv_obj *h5zv_dataset_open_path(h5zv_file *f, const char *path);
/* The same, loaded on first use: what HDF5 opens through a reference (object.c), often only to name it
 * again (H5DSattach_scale rewrites every reference of a scale so). Every dataset callback calls
 * h5zv_dataset_ready first, which loads its type and extent (-1 + error pushed if that fails). */
h5zv_obj *h5zv_dataset_open_lazy(h5zv_file *f, const char *path);
int       h5zv_dataset_ready(h5zv_obj *d);
/* H5Dscatter of the dense buffer `dense` (`n` bytes, elements of `mem_type` in selection order) into the
 * selection `msel` of `buf`; the caller keeps both buffers (elements with pointers are copied shallowly:
 * what they point to then belongs to `buf`). */
herr_t h5zv_scatter_dense(const void *dense, size_t n, hid_t mem_type, hid_t msel, void *buf);
/* Makes zarr's fill_value of dataset node `n` follow its attribute _FillValue (netCDF's missing-value
 * marker) when that holds one element of the dataset's type, else HDF5's fill rule; HDF5's own fill value
 * reads back unchanged (docs/FORMAT.md "Fill values"). Called when an attribute of that name is written,
 * deleted or renamed. 0 (also when nothing changes), -1 with an error pushed. */
int h5zv_dataset_fill_follow(h5zv_file *f, h5zv_node *n);
/* The chunk API (vol/chunk.c, docs/FORMAT.md "The chunk API"): the native dataset optional operations
 * H5Dget_num_chunks, H5Dget_chunk_info[_by_coord], H5Dchunk_iter, H5Dget_chunk_storage_size,
 * H5Dread_chunk and H5Dwrite_chunk on dataset `d`, whose node `n` (an array), dataspace and dcpl the
 * caller has brought up to date. 0; H5Dchunk_iter's callback's positive value when it stopped; -1 with
 * an error pushed (also for every other operation). */
herr_t h5zv_chunk_optional(h5zv_obj *d, h5zv_node *n, H5VL_optional_args_t *args, hid_t dxpl_id);

void  *h5zv_attr_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t type_id,
                        hid_t space_id, hid_t acpl_id, hid_t aapl_id, hid_t dxpl_id, void **req);
void  *h5zv_attr_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t aapl_id, hid_t dxpl_id,
                      void **req);
herr_t h5zv_attr_read(void *attr, hid_t mem_type_id, void *buf, hid_t dxpl_id, void **req);
herr_t h5zv_attr_write(void *attr, hid_t mem_type_id, const void *buf, hid_t dxpl_id, void **req);
herr_t h5zv_attr_get(void *obj, H5VL_attr_get_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_attr_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_attr_specific_args_t *args,
                          hid_t dxpl_id, void **req);
herr_t h5zv_attr_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_attr_close(void *attr, hid_t dxpl_id, void **req);
/* Number of HDF5 attributes on a node (the reserved key not counted). */
int h5zv_attr_count(h5zv_node *n);
/* The natural JSON value of HDF5 attribute `name` of `n`, wherever it is kept (plain zarr attributes or
 * the hidden bookkeeping set, docs/FORMAT.md), borrowed; NULL when there is none. */
struct json_object *h5zv_attr_value(h5zv_node *n, const char *name);
/* The `packed` list recorded for attribute `name` (one base64 string per element), borrowed, or NULL. */
struct json_object *h5zv_attr_packed(h5zv_node *n, const char *name);

/* ---- dimension names (vol/dims.c) ------------------------------------------------------------------
 * Every array the connector writes carries zarr dimension names (v3 `dimension_names`, v2
 * `_ARRAY_DIMENSIONS`), derived from HDF5 dimension scales, else phony names (docs/FORMAT.md). */
/* The dimension names of the arrays of the group holding node `path` need recomputing (a dataset was
 * made or resized there, or a dimension-scale attribute of it changed). Quiet; never fails. */
void h5zv_dims_touch(h5zv_file *f, const char *path);
/* Recomputes the names of the arrays in every group that needs it (touched, dirty, or holding an array
 * of ours without names); arrays whose names change are marked dirty. Runs at flush, before the dirty
 * nodes are written. 0, or -1 with an error pushed. */
int h5zv_dims_update(h5zv_file *f);

void  *h5zv_datatype_commit(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t type_id,
                            hid_t lcpl_id, hid_t tcpl_id, hid_t tapl_id, hid_t dxpl_id, void **req);
void  *h5zv_datatype_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t tapl_id,
                          hid_t dxpl_id, void **req);
herr_t h5zv_datatype_get(void *obj, H5VL_datatype_get_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_datatype_specific(void *obj, H5VL_datatype_specific_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_datatype_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl_id, void **req);
herr_t h5zv_datatype_close(void *dt, hid_t dxpl_id, void **req);
/* The committed type of node `n` (new id), or negative when `n` is not a named datatype. */
hid_t h5zv_datatype_of(h5zv_node *n);
/* Committed datatypes used by datasets and attributes (type.c). committed_obj: the connector's object
 * behind a committed type id of a zarr file (borrowed), NULL for other types. users_add: counts `delta`
 * users of the committed type at `tpath` (nothing if it is gone). committed_id: a new committed-type id
 * for the type at `tpath` (as H5Dget_type hands out), negative if there is none. */
h5zv_obj *h5zv_type_committed_obj(hid_t type_id);
int       h5zv_type_users_add(h5zv_file *f, const char *tpath, int delta);
hid_t     h5zv_type_committed_id(h5zv_file *f, const char *tpath);
/* A dataset (`attr` NULL) or attribute at node `user` records committed type `tpath`: counts the user
 * and, while the type is anonymous, remembers the use so that h5zv_type_anon_linked can point the user
 * at the type's name once H5Olink gives it one. */
int  h5zv_type_use(h5zv_file *f, const char *user, const char *attr, const char *tpath);
void h5zv_type_anon_linked(h5zv_file *f, const char *apath, const char *path);
/* At file close: users of types still anonymous forget them (before the final flush). */
void h5zv_type_uses_end(h5zv_file *f);

herr_t h5zv_link_create(H5VL_link_create_args_t *args, void *obj, const H5VL_loc_params_t *loc, hid_t lcpl_id,
                        hid_t lapl_id, hid_t dxpl_id, void **req);
herr_t h5zv_link_copy(void *src_obj, const H5VL_loc_params_t *loc1, void *dst_obj,
                      const H5VL_loc_params_t *loc2, hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id, void **req);
herr_t h5zv_link_move(void *src_obj, const H5VL_loc_params_t *loc1, void *dst_obj,
                      const H5VL_loc_params_t *loc2, hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id, void **req);
herr_t h5zv_link_get(void *obj, const H5VL_loc_params_t *loc, H5VL_link_get_args_t *args, hid_t dxpl_id,
                     void **req);
herr_t h5zv_link_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_link_specific_args_t *args,
                          hid_t dxpl_id, void **req);
herr_t h5zv_link_optional(void *obj, const H5VL_loc_params_t *loc, H5VL_optional_args_t *args, hid_t dxpl_id,
                          void **req);

void  *h5zv_object_open(void *obj, const H5VL_loc_params_t *loc, H5I_type_t *opened_type, hid_t dxpl_id,
                        void **req);
herr_t h5zv_object_copy(void *src_obj, const H5VL_loc_params_t *loc1, const char *src_name, void *dst_obj,
                        const H5VL_loc_params_t *loc2, const char *dst_name, hid_t ocpypl_id, hid_t lcpl_id,
                        hid_t dxpl_id, void **req);
herr_t h5zv_object_get(void *obj, const H5VL_loc_params_t *loc, H5VL_object_get_args_t *args, hid_t dxpl_id,
                       void **req);
herr_t h5zv_object_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_object_specific_args_t *args,
                            hid_t dxpl_id, void **req);
herr_t h5zv_object_optional(void *obj, const H5VL_loc_params_t *loc, H5VL_optional_args_t *args,
                            hid_t dxpl_id, void **req);
/* Fills an H5O_info2_t for the node at `path`. */
int h5zv_object_info(h5zv_file *f, const char *path, unsigned fields, H5O_info2_t *oinfo);

herr_t h5zv_token_cmp(void *obj, const H5O_token_t *t1, const H5O_token_t *t2, int *cmp_value);
herr_t h5zv_token_to_str(void *obj, H5I_type_t obj_type, const H5O_token_t *token, char **token_str);
herr_t h5zv_token_from_str(void *obj, H5I_type_t obj_type, const char *token_str, H5O_token_t *token);

extern const H5VL_class_t h5zv_class; /* route.c */

/* Connector initialization and termination (connector.c; the class table calls them). */
herr_t h5zv_init(hid_t vipl_id);
herr_t h5zv_term(void);
/* What zarr stores can do (capability flags of the zarr side; `info` is the connector info or NULL). */
#define H5ZV_CAP_FLAGS                                                                                       \
    (H5VL_CAP_FLAG_ATTR_BASIC | H5VL_CAP_FLAG_ATTR_MORE | H5VL_CAP_FLAG_DATASET_BASIC |                      \
     H5VL_CAP_FLAG_DATASET_MORE | H5VL_CAP_FLAG_FILE_BASIC | H5VL_CAP_FLAG_FILE_MORE |                       \
     H5VL_CAP_FLAG_GROUP_BASIC | H5VL_CAP_FLAG_GROUP_MORE | H5VL_CAP_FLAG_LINK_BASIC |                       \
     H5VL_CAP_FLAG_LINK_MORE | H5VL_CAP_FLAG_OBJECT_BASIC | H5VL_CAP_FLAG_OBJECT_MORE |                      \
     H5VL_CAP_FLAG_CREATION_ORDER | H5VL_CAP_FLAG_ITERATE | H5VL_CAP_FLAG_STORAGE_SIZE |                     \
     H5VL_CAP_FLAG_BY_IDX | H5VL_CAP_FLAG_GET_PLIST | H5VL_CAP_FLAG_FLUSH_REFRESH |                          \
     H5VL_CAP_FLAG_HARD_LINKS | H5VL_CAP_FLAG_SOFT_LINKS | H5VL_CAP_FLAG_FILL_VALUES |                       \
     H5VL_CAP_FLAG_STORED_DATATYPES | H5VL_CAP_FLAG_EXTERNAL_LINKS | H5VL_CAP_FLAG_UD_LINKS |                \
     H5VL_CAP_FLAG_TRACK_TIMES)
uint64_t h5zv_cap_flags(const void *info);
/* Whether `name` is a directory holding a zarr store at its root / whether anything is at `name` / whether
 * it is a directory, a URL or a reference file (*.json): a name for the zarr side. Quiet: nothing pushed.
 * (file.c) */
bool h5zv_file_is_store(const char *name);
/* h5zv_file_is_store keeping what it opened and read for the open that follows (route.c): on a store with
 * latency each question costs requests (an s3:// open lists the bucket, then the root document), asked
 * once instead of once by the question and again by the open. `p` is filled (zeroed first) and released
 * with h5zv_probe_release, whatever the answer. */
typedef struct h5zv_probe {
    struct zarr_store *s;   /* the store, opened read-only (owned), when it is one */
    zarr_buf           doc; /* the root zarr.json it read (v3), else empty (owned) */
    zarr_node_type     v2;  /* no zarr.json: the v2 root it found (.zgroup, else .zarray), else NONE */
} h5zv_probe;
bool h5zv_file_probe(const char *name, h5zv_probe *p);
void h5zv_probe_release(h5zv_probe *p);
bool h5zv_file_exists(const char *name);
bool h5zv_file_is_dir(const char *name);

/* ==== object references (vol/type.c) ==================================================================
 * References (H5T_STD_REF) are packed as the referenced object's path. A transfer that packs or unpacks
 * elements holding references brackets the work with h5zv_refs_begin(file)/h5zv_refs_end(): unpacking
 * registers one file id (released at end; the references made hold their own count on it). */
void h5zv_refs_begin(h5zv_file *f);
void h5zv_refs_end(void);
/* False (error pushed) if `t` holds references other than H5T_STD_REF (old-style, native-only). */
bool h5zv_type_refs_ok(hid_t t);
/* Zeroes (makes null) every reference inside n elements of memory type `t`, also inside vlen sequences.
 * HDF5's type conversion copies references bit for bit: before reclaiming the source buffer of such a
 * conversion, its references are zeroed so that the copies handed on stay valid. */
void h5zv_type_zero_refs(hid_t t, void *buf, size_t n);

/* ==== SWMR (vol/swmr.c; docs/FORMAT.md "SWMR") ============================================================
 * h5zv_swmr_open: the SWMR flags of an H5Fopen/H5Fcreate (`flags`) for `f`: recorded on a new file (after
 * h5zv_mpi_attach, before its root is loaded), or checked as HDF5 checks a second open when `shared` (the
 * store is open in this process already). h5zv_swmr_intent: the flags H5Fget_intent reports.
 * h5zv_swmr_start_write: H5Fstart_swmr_write (flushes the file). h5zv_swmr_refresh: H5Drefresh of array
 * node `n` (borrowed): a read-only open takes the store's current shape and drops the cached chunks.
 * 0, or -1 with an error pushed. */
int      h5zv_swmr_open(h5zv_file *f, unsigned flags, bool shared);
unsigned h5zv_swmr_intent(const h5zv_file *f);
int      h5zv_swmr_start_write(h5zv_file *f);
int      h5zv_swmr_refresh(h5zv_file *f, h5zv_node *n);

/* ==== virtual datasets (vol/virtual.c; docs/FORMAT.md "Virtual datasets") ============================
 * The mappings of an H5D_VIRTUAL dcpl are kept in `_h5zarr.virtual`; the array holds no chunks. */
/* True if array node `n` records a mapping (is a virtual dataset). */
bool h5zv_virtual_is(h5zv_node *n);
/* The record of the mappings of `dcpl` for a new dataset of dataspace `space` at `path`: *out a new JSON
 * list (the caller's); -1 with an error pushed for what a reader would refuse. */
int h5zv_virtual_to_json(hid_t dcpl, hid_t space, const char *path, struct json_object **out);
/* Adds to `p` (the dcpl rebuilt for dataset `d` of node `n`) the recorded mappings, checked field by
 * field; fails when the record and the dcpl's layout disagree. Nothing for other datasets. */
int h5zv_virtual_dcpl(h5zv_obj *d, h5zv_node *n, hid_t p);
/* Sets d->space_id to the extent the sources give unlimited mappings (d->dcpl_id made; no-op else). */
int h5zv_virtual_space(h5zv_obj *d);
/* H5Dread/H5Dwrite of virtual dataset `d` (d->dcpl_id made): each source through the HDF5 API. */
int h5zv_virtual_xfer(h5zv_obj *d, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl_id,
                      void *buf, bool write);

/* ==== external storage (vol/external.c; docs/FORMAT.md "External storage") ===========================
 * A dataset made with an external file list (H5Pset_external) keeps its raw data in those files, as
 * native HDF5 does; the list is `_h5zarr.dcpl.external` and the array holds no chunks. 0, or -1 with an
 * error pushed. */
/* True if array node `n` records an external file list. */
bool h5zv_external_is(h5zv_node *n);
/* What native HDF5 checks at H5Dcreate, and what the connector can't carry (a URL store, MPI-IO, types
 * holding pointers), for a dcpl with external files: type `type`, dataspace `space`, in `f` at `path`. */
int h5zv_external_create_check(h5zv_file *f, const char *path, hid_t dcpl, hid_t type, hid_t space);
/* The same checks on the dcpl `p` rebuilt for dataset `d` from its record (nothing for other datasets). */
int h5zv_external_open_check(h5zv_obj *d, hid_t p);
/* The prefix of relative external file names of dataset `d` as HDF5 builds it (HDF5_EXTFILE_PREFIX, else
 * the dapl's H5Pset_efile_prefix; "${ORIGIN}" is the directory of the file's name): *out malloc'ed, or
 * NULL for none (names relative to the working directory). */
int h5zv_external_prefix(h5zv_obj *d, char **out);
/* H5Dread/H5Dwrite of dataset `d` with external storage (d->dcpl_id made), on the calling thread. */
int h5zv_external_xfer(h5zv_obj *d, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl_id,
                       void *buf, bool write);

/* ---- shared by the transfers of vol/dataset.c, vol/external.c ---------------------------------------- */
/* A copy of the file selection `fs` of dataset `d` (H5S_ALL: the whole extent) with any offset applied;
 * the caller closes it. Negative with an error pushed. */
hid_t h5zv_dataset_file_space(h5zv_obj *d, hid_t fs);
/* The memory space to gather/scatter a user buffer with (H5S_ALL: `fsel` itself; H5S_BLOCK: `n` elements
 * in a row), a new id, or negative. */
hid_t h5zv_dataset_mem_space(hid_t ms, hid_t fsel, hssize_t n);
/* True if `s` is valid UTF-8 (zarr metadata is JSON text). */
bool h5zv_utf8_ok(const char *s);

#endif
