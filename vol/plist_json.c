/*
 * plist_json.c: the creation property lists the connector keeps in the reserved object `_h5zarr`
 * (dataset, group, file and attribute creation properties) as JSON objects of explicit keys, only those
 * that differ from a new list of the class (docs/FORMAT.md, "The reserved object `_h5zarr`"). A
 * document from a store is untrusted: every key is checked (unknown keys, JSON types, ranges, HDF5's
 * own rules) before the list is built with H5Pcreate + H5Pset_*; nothing reaches H5Pdecode. The fill
 * value of a dcpl is data of the dataset's type (vol/type_json.c, h5zv_value_to_json), never the bytes
 * of HDF5's in-memory value (which hold pointers for variable-length types).
 */
#include "reserved.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

static const char *const corder_names[] = {NULL, "tracked", NULL, "indexed"}; /* by H5P_CRT_ORDER_* flags */

static struct json_object *
pair_of(uint64_t a, uint64_t b)
{
    struct json_object *l = json_object_new_array();
    json_object_array_add(l, json_object_new_uint64(a));
    json_object_array_add(l, json_object_new_uint64(b));
    return l;
}

/* A [a, b] pair of integers in [lo, hi]: 1 read, 0 absent, -1 error. */
static int
read_pair(struct json_object *j, const char *at, const char *key, uint64_t lo, uint64_t hi, uint64_t *a,
          uint64_t *b)
{
    struct json_object *l = NULL;
    h5zv_jpath          p, q;
    int                 rc = h5zv_json_list(j, at, key, false, 2, 2, &l);
    if (rc <= 0)
        return rc;
    h5zv_jpath_key(&p, at, key);
    if (h5zv_json_uint_val(json_object_array_get_idx(l, 0), h5zv_jpath_idx(&q, p.s, 0), lo, hi, a) < 0 ||
        h5zv_json_uint_val(json_object_array_get_idx(l, 1), h5zv_jpath_idx(&q, p.s, 1), lo, hi, b) < 0)
        return -1;
    return 1;
}

/* ---- object creation properties (every class here derives from it) --------------------------------- */
#define OCPL_KEYS "attr_creation_order", "attr_phase_change", "track_times", "filters"

/* `n`: the number of filters when known, else negative (asked here). */
static int
filters_to_json(hid_t p, struct json_object *o, int n)
{
    int                 ret = -1;
    unsigned           *cd  = NULL;
    struct json_object *l   = NULL;
    if (n < 0 && (n = H5Pget_nfilters(p)) < 0)
        H5ZV_GOTO_ERROR("can't read the filter pipeline");
    if (n == 0)
        return 0;
    l = json_object_new_array();
    for (int i = 0; i < n; i++) {
        unsigned            flags = 0, conf = 0, small[16];
        size_t              nc        = 16;
        char                name[256] = "";
        H5Z_filter_t        id;
        struct json_object *f = json_object_new_object();
        json_object_array_add(l, f);
        if ((id = H5Pget_filter2(p, (unsigned)i, &flags, &nc, small, sizeof name, name, &conf)) < 0)
            H5ZV_GOTO_ERROR("can't read filter %d of the pipeline", i);
        if (nc > 16) {
            if (nc > 4096 || !(cd = malloc(nc * sizeof *cd)))
                H5ZV_GOTO_ERROR("filter %d has %zu parameters (at most 4096)", (int)id, nc);
            if (H5Pget_filter2(p, (unsigned)i, &flags, &nc, cd, sizeof name, name, &conf) < 0)
                H5ZV_GOTO_ERROR("can't read filter %d of the pipeline", i);
        }
        json_object_object_add(f, "id", json_object_new_int(id));
        if (flags)
            json_object_object_add(f, "flags", json_object_new_uint64(flags));
        if (*name)
            json_object_object_add(f, "name", json_object_new_string(name));
        if (nc) {
            struct json_object *v = json_object_new_array();
            for (size_t k = 0; k < nc; k++)
                json_object_array_add(v, json_object_new_uint64(cd ? cd[k] : small[k]));
            json_object_object_add(f, "cd_values", v);
        }
        free(cd);
        cd = NULL;
    }
    json_object_object_add(o, "filters", l);
    l   = NULL;
    ret = 0;
done:
    free(cd);
    json_object_put(l);
    return ret;
}

static int
filters_from_json(struct json_object *j, const char *at, hid_t p)
{
    static const char *const keys[] = {"id", "flags", "name", "cd_values", NULL};
    struct json_object      *l      = NULL;
    unsigned                *cd     = NULL;
    h5zv_jpath               lp, fp, cp, vp;
    int                      rc = h5zv_json_list(j, at, "filters", false, 1, H5Z_MAX_NFILTERS, &l), ret = -1;
    if (rc <= 0)
        return rc;
    h5zv_jpath_key(&lp, at, "filters");
    for (size_t i = 0; i < json_object_array_length(l); i++) {
        struct json_object *f = json_object_array_get_idx(l, i), *cv = NULL;
        uint64_t            id = 0, flags = 0;
        const char         *name = NULL;
        size_t              nc   = 0;
        h5zv_jpath_idx(&fp, lp.s, i);
        if (h5zv_json_keys(f, fp.s, keys) < 0 ||
            h5zv_json_uint(f, fp.s, "id", true, 1, H5Z_FILTER_MAX, &id) < 0 ||
            h5zv_json_uint(f, fp.s, "flags", false, 0, H5Z_FLAG_DEFMASK, &flags) < 0 ||
            h5zv_json_str(f, fp.s, "name", false, 255, &name) < 0 ||
            h5zv_json_list(f, fp.s, "cd_values", false, 0, 4096, &cv) < 0)
            goto done;
        if (cv && (nc = json_object_array_length(cv)) > 0) {
            if (!(cd = malloc(nc * sizeof *cd)))
                H5ZV_JSON_FAIL(fp.s, "out of memory");
            h5zv_jpath_key(&cp, fp.s, "cd_values");
            for (size_t k = 0; k < nc; k++) {
                uint64_t v;
                if (h5zv_json_uint_val(json_object_array_get_idx(cv, k), h5zv_jpath_idx(&vp, cp.s, k), 0,
                                       UINT32_MAX, &v) < 0)
                    goto done;
                cd[k] = (unsigned)v;
            }
        }
        /* `name` is informational: HDF5 names a filter after its registered class */
        if (H5Pset_filter(p, (H5Z_filter_t)id, (unsigned)flags, nc, cd) < 0)
            H5ZV_JSON_FAIL(fp.s, "HDF5 refused filter %llu", (unsigned long long)id);
        free(cd);
        cd = NULL;
    }
    ret = 1;
done:
    free(cd);
    return ret;
}

/* The object creation properties ocpl_to_json compares, and a gcpl's link properties gcpl_part_to_json
 * compares, as read from a list (props_ocpl_read / props_gcpl_read) or kept for a default list. */
typedef struct {
    unsigned crt, mc, md; /* attribute creation order and phase change */
} ocpl_props;
typedef struct {
    unsigned crt, mc, md, ne, nl; /* link creation order, phase change, estimated link info */
    size_t   hint;                /* local heap size hint */
} gcpl_props;

static int
props_ocpl_read(hid_t p, ocpl_props *v)
{
    return H5Pget_attr_creation_order(p, &v->crt) < 0 || H5Pget_attr_phase_change(p, &v->mc, &v->md) < 0 ? -1
                                                                                                         : 0;
}

static int
props_gcpl_read(hid_t p, gcpl_props *v)
{
    return H5Pget_link_creation_order(p, &v->crt) < 0 || H5Pget_link_phase_change(p, &v->mc, &v->md) < 0 ||
                   H5Pget_est_link_info(p, &v->ne, &v->nl) < 0 || H5Pget_local_heap_size_hint(p, &v->hint) < 0
               ? -1
               : 0;
}

static int def_ocpl(hid_t def, ocpl_props *v);
static int def_gcpl(hid_t def, gcpl_props *v);

/* `nfilters`: as filters_to_json's `n`. */
static int
ocpl_to_json(hid_t p, hid_t def, struct json_object *o, int nfilters)
{
    ocpl_props v = {0}, v0 = {0};
    hbool_t    tt  = true;
    int        ret = -1;
    if (props_ocpl_read(p, &v) < 0 || def_ocpl(def, &v0) < 0 || H5Pget_obj_track_times(p, &tt) < 0)
        H5ZV_GOTO_ERROR("can't read the object creation properties");
    if (v.crt != v0.crt) {
        if (v.crt > 3 || !corder_names[v.crt])
            H5ZV_GOTO_ERROR("can't describe attribute creation order flags %u", v.crt);
        json_object_object_add(o, "attr_creation_order", json_object_new_string(corder_names[v.crt]));
    }
    if (v.mc != v0.mc || v.md != v0.md)
        json_object_object_add(o, "attr_phase_change", pair_of(v.mc, v.md));
    if (!tt)
        json_object_object_add(o, "track_times", json_object_new_boolean(false));
    ret = filters_to_json(p, o, nfilters);
done:
    return ret;
}

/* Creation order flags "tracked" / "indexed" (tracked and indexed). */
static int
read_corder(struct json_object *j, const char *at, const char *key, unsigned *flags)
{
    int i = 0, rc = h5zv_json_choice(j, at, key, false, corder_names, 4, &i);
    if (rc > 0)
        *flags = (unsigned)i;
    return rc;
}

/* [max_compact, min_dense] as HDF5 accepts them. */
static int
read_phase(struct json_object *j, const char *at, const char *key, unsigned *mc, unsigned *md)
{
    uint64_t   a = 0, b = 0;
    h5zv_jpath p;
    int        rc = read_pair(j, at, key, 0, 65535, &a, &b), ret = -1;
    if (rc <= 0)
        return rc;
    if (a < b)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&p, at, key), "max_compact %llu is below min_dense %llu",
                       (unsigned long long)a, (unsigned long long)b);
    *mc = (unsigned)a;
    *md = (unsigned)b;
    ret = 1;
done:
    return ret;
}

static int
ocpl_from_json(struct json_object *j, const char *at, hid_t p)
{
    unsigned   crt = 0, mc = 0, md = 0;
    bool       tt = true;
    h5zv_jpath kp;
    int        rc, ret = -1;
    if ((rc = read_corder(j, at, "attr_creation_order", &crt)) < 0)
        goto done;
    if (rc && H5Pset_attr_creation_order(p, crt) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, at, "attr_creation_order"), "HDF5 refused it");
    if ((rc = read_phase(j, at, "attr_phase_change", &mc, &md)) < 0)
        goto done;
    if (rc && H5Pset_attr_phase_change(p, mc, md) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, at, "attr_phase_change"), "HDF5 refused it");
    if ((rc = h5zv_json_bool(j, at, "track_times", false, &tt)) < 0)
        goto done;
    if (rc && H5Pset_obj_track_times(p, tt) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, at, "track_times"), "HDF5 refused it");
    if (filters_from_json(j, at, p) < 0)
        goto done;
    ret = 0;
done:
    return ret;
}

/* ---- groups ---------------------------------------------------------------------------------------- */
#define GCPL_KEYS                                                                                            \
    OCPL_KEYS, "link_creation_order", "link_phase_change", "est_link_info", "local_heap_size_hint"

static int
gcpl_part_to_json(hid_t p, hid_t def, struct json_object *o, const void *aux)
{
    gcpl_props v = {0}, v0 = {0};
    int        ret = -1;
    (void)aux;
    if (props_gcpl_read(p, &v) < 0 || def_gcpl(def, &v0) < 0)
        H5ZV_GOTO_ERROR("can't read the group creation properties");
    if (v.crt != v0.crt) {
        if (v.crt > 3 || !corder_names[v.crt])
            H5ZV_GOTO_ERROR("can't describe link creation order flags %u", v.crt);
        json_object_object_add(o, "link_creation_order", json_object_new_string(corder_names[v.crt]));
    }
    if (v.mc != v0.mc || v.md != v0.md)
        json_object_object_add(o, "link_phase_change", pair_of(v.mc, v.md));
    if (v.ne != v0.ne || v.nl != v0.nl)
        json_object_object_add(o, "est_link_info", pair_of(v.ne, v.nl));
    if (v.hint != v0.hint)
        json_object_object_add(o, "local_heap_size_hint", json_object_new_uint64(v.hint));
    ret = ocpl_to_json(p, def, o, -1);
done:
    return ret;
}

static int
gcpl_part_from_json(struct json_object *j, const char *at, hid_t p)
{
    unsigned   crt = 0, mc = 0, md = 0;
    uint64_t   ne = 0, nl = 0, hint = 0;
    h5zv_jpath kp;
    int        rc, ret = -1;
    if ((rc = read_corder(j, at, "link_creation_order", &crt)) < 0)
        goto done;
    if (rc && H5Pset_link_creation_order(p, crt) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, at, "link_creation_order"), "HDF5 refused it");
    if ((rc = read_phase(j, at, "link_phase_change", &mc, &md)) < 0)
        goto done;
    if (rc && H5Pset_link_phase_change(p, mc, md) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, at, "link_phase_change"), "HDF5 refused it");
    if ((rc = read_pair(j, at, "est_link_info", 0, 65535, &ne, &nl)) < 0)
        goto done;
    if (rc && H5Pset_est_link_info(p, (unsigned)ne, (unsigned)nl) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, at, "est_link_info"), "HDF5 refused it");
    if ((rc = h5zv_json_uint(j, at, "local_heap_size_hint", false, 0, UINT32_MAX, &hint)) < 0)
        goto done;
    if (rc && H5Pset_local_heap_size_hint(p, (size_t)hint) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, at, "local_heap_size_hint"), "HDF5 refused it");
    ret = ocpl_from_json(j, at, p);
done:
    return ret;
}

/* New lists of each class the to_json entry points compare with, made once (an H5Pcreate + H5Pclose
 * per call was a third of a default dataset's create, W4): never handed out, never changed; closed when
 * the connector is terminated (h5zv_plist_defaults_clear, before HDF5 closes its ids). */
#define DEFAULT_LISTS 8
static struct default_slot {
    hid_t      cls, id;
    bool       ocpl_known; /* `ocpl` read from `id` (def_ocpl) */
    ocpl_props ocpl;
    bool       gcpl_known; /* `gcpl` read from `id` (def_gcpl) */
    gcpl_props gcpl;
} default_lists[DEFAULT_LISTS];
static int ndefault_lists;

/* The kept slot of default list `def`, or NULL (a list not kept: a full table). */
static struct default_slot *
default_slot(hid_t def)
{
    for (int i = 0; i < ndefault_lists; i++)
        if (default_lists[i].id == def)
            return &default_lists[i];
    return NULL;
}

/* ocpl_to_json's reads of the kept default list `def`: once per list, not per dataset or group (two
 * H5Pget_* calls of ~2,000 instructions each, bench/README.md "2026-12-07 evening: creates"). 0, or -1. */
static int
def_ocpl(hid_t def, ocpl_props *v)
{
    struct default_slot *d = default_slot(def);
    if (d && d->ocpl_known) {
        *v = d->ocpl;
        return 0;
    }
    if (props_ocpl_read(def, v) < 0)
        return -1;
    if (d) {
        d->ocpl       = *v;
        d->ocpl_known = true;
    }
    return 0;
}

/* gcpl_part_to_json's reads of the kept default list `def` (four H5Pget_* calls of ~1,000 instructions,
 * per group before), once per list as def_ocpl's. 0, or -1. */
static int
def_gcpl(hid_t def, gcpl_props *v)
{
    struct default_slot *d = default_slot(def);
    if (d && d->gcpl_known) {
        *v = d->gcpl;
        return 0;
    }
    if (props_gcpl_read(def, v) < 0)
        return -1;
    if (d) {
        d->gcpl       = *v;
        d->gcpl_known = true;
    }
    return 0;
}

/* The kept default list of class `cls` (borrowed), or negative with an error pushed. */
static hid_t
default_list(hid_t cls)
{
    hid_t id;
    for (int i = 0; i < ndefault_lists; i++)
        if (default_lists[i].cls == cls)
            return default_lists[i].id;
    if ((id = H5Pcreate(cls)) < 0) {
        h5zv_err_push(__func__, __LINE__, "can't make a default property list");
        return id;
    }
    if (ndefault_lists < DEFAULT_LISTS) {
        default_lists[ndefault_lists].cls        = cls;
        default_lists[ndefault_lists].ocpl_known = false;
        default_lists[ndefault_lists].gcpl_known = false;
        default_lists[ndefault_lists++].id       = id;
    }
    /* (a full table never happens: the entry points use five classes) */
    return id;
}

/* The JSON of HDF5's default dcpl (H5P_DATASET_CREATE_DEFAULT: what H5Dcreate passes for H5P_DEFAULT),
 * made once from the default list by h5zv_dcpl_to_json (no fill value is user-defined in it: the same
 * for every type), or NULL; cleared with the default lists. */
static struct json_object *default_dcpl_json;

/* The JSON of a default dcpl made chunked (h5zv_dcpl_chunked_json) and its chunk shape: the last shape
 * asked for (the datasets made in a loop share one); cleared with the default lists. */
static struct json_object *chunked_dcpl_json;
static int                 chunked_ndim;
static hsize_t             chunked_dims[H5S_MAX_RANK];

void
h5zv_plist_defaults_clear(void)
{
    hbool_t ending = false;
    json_object_put(default_dcpl_json);
    default_dcpl_json = NULL;
    json_object_put(chunked_dcpl_json);
    chunked_dcpl_json = NULL;
    /* While HDF5 shuts down (its atexit handler, H5close) it closes every id itself, and a list closed
     * here then may run property callbacks of what it already tore down (a crash at exit) */
    if (H5is_library_terminating(&ending) < 0 || !ending)
        for (int i = 0; i < ndefault_lists; i++)
            if (H5Iis_valid(default_lists[i].id))
                H5Pclose(default_lists[i].id);
    ndefault_lists = 0;
}

/* Shared by the to_json entry points: a default list of `cls`, the part writer (`aux`: NULL, or for dcpls
 * a dcpl_aux), the object. */
static int
plist_to_json(hid_t p, hid_t cls, int (*part)(hid_t, hid_t, struct json_object *, const void *),
              const void *aux, struct json_object **out)
{
    hid_t               def = default_list(cls);
    struct json_object *o   = NULL;
    int                 ret = -1;
    *out                    = NULL;
    if (def < 0)
        goto done;
    if (!(o = json_object_new_object()))
        H5ZV_GOTO_ERROR("out of memory");
    if (part(p == H5P_DEFAULT ? def : p, def, o, aux) < 0)
        goto done;
    *out = o;
    o    = NULL;
    ret  = 0;
done:
    json_object_put(o);
    return ret;
}

int
h5zv_gcpl_to_json(hid_t gcpl, struct json_object **out)
{
    return plist_to_json(gcpl, H5P_GROUP_CREATE, gcpl_part_to_json, NULL, out);
}

int
h5zv_gcpl_from_json(struct json_object *j, const char *where, hid_t *gcpl_out)
{
    static const char *const keys[] = {GCPL_KEYS, NULL};
    hid_t                    p      = H5I_INVALID_HID;
    int                      ret    = -1;
    *gcpl_out                       = H5I_INVALID_HID;
    if (h5zv_json_keys(j, where, keys) < 0)
        goto done;
    if ((p = H5Pcreate(H5P_GROUP_CREATE)) < 0)
        H5ZV_GOTO_ERROR("can't make a group creation property list");
    if (gcpl_part_from_json(j, where, p) < 0)
        goto done;
    *gcpl_out = p;
    p         = H5I_INVALID_HID;
    ret       = 0;
done:
    h5zv_close(p);
    return ret;
}

/* ---- files ------------------------------------------------------------------------------------------ */
static const struct {
    const char *name;
    unsigned    flag;
} shmesg_types[] = {
    {"dataspace", H5O_SHMESG_SDSPACE_FLAG}, {"datatype", H5O_SHMESG_DTYPE_FLAG},
    {"fill", H5O_SHMESG_FILL_FLAG},         {"pline", H5O_SHMESG_PLINE_FLAG},
    {"attr", H5O_SHMESG_ATTR_FLAG},
};
#define N_SHMESG (sizeof shmesg_types / sizeof shmesg_types[0])
static const char *const fsp_names[] = {"fsm_aggr", "page", "aggr", "none"};

static int
fcpl_part_to_json(hid_t p, hid_t def, struct json_object *o, const void *aux)
{
    hsize_t               ub = 0, thr = 0, thr0 = 0, ps = 0, ps0 = 0;
    size_t                sa = 0, ss = 0, sa0 = 0, ss0 = 0;
    unsigned              ik = 0, lk = 0, ik0 = 0, lk0 = 0, isk = 0, isk0 = 0, nidx = 0, ml, mb, ml0, mb0;
    H5F_fspace_strategy_t st = H5F_FSPACE_STRATEGY_FSM_AGGR, st0 = H5F_FSPACE_STRATEGY_FSM_AGGR;
    hbool_t               pe = false, pe0 = false;
    int                   ret = -1;

    if (H5Pget_userblock(p, &ub) < 0 || H5Pget_sizes(p, &sa, &ss) < 0 || H5Pget_sizes(def, &sa0, &ss0) < 0 ||
        H5Pget_sym_k(p, &ik, &lk) < 0 || H5Pget_sym_k(def, &ik0, &lk0) < 0 || H5Pget_istore_k(p, &isk) < 0 ||
        H5Pget_istore_k(def, &isk0) < 0 || H5Pget_shared_mesg_nindexes(p, &nidx) < 0 ||
        H5Pget_shared_mesg_phase_change(p, &ml, &mb) < 0 ||
        H5Pget_shared_mesg_phase_change(def, &ml0, &mb0) < 0 ||
        H5Pget_file_space_strategy(p, &st, &pe, &thr) < 0 ||
        H5Pget_file_space_strategy(def, &st0, &pe0, &thr0) < 0 || H5Pget_file_space_page_size(p, &ps) < 0 ||
        H5Pget_file_space_page_size(def, &ps0) < 0)
        H5ZV_GOTO_ERROR("can't read the file creation properties");
    if (ub)
        json_object_object_add(o, "userblock", json_object_new_uint64(ub));
    if (sa != sa0 || ss != ss0)
        json_object_object_add(o, "sizes", pair_of(sa, ss));
    if (ik != ik0 || lk != lk0)
        json_object_object_add(o, "sym_k", pair_of(ik, lk));
    if (isk != isk0)
        json_object_object_add(o, "istore_k", json_object_new_uint64(isk));
    if (nidx) {
        struct json_object *l = json_object_new_array();
        json_object_object_add(o, "shared_mesg", l);
        for (unsigned i = 0; i < nidx && i < H5O_SHMESG_MAX_NINDEXES; i++) {
            unsigned            fl = 0, ms = 0;
            struct json_object *e = json_object_new_object(), *tl = json_object_new_array();
            json_object_array_add(l, e);
            if (H5Pget_shared_mesg_index(p, i, &fl, &ms) < 0)
                H5ZV_GOTO_ERROR("can't read shared message index %u", i);
            for (size_t k = 0; k < N_SHMESG; k++)
                if (fl & shmesg_types[k].flag)
                    json_object_array_add(tl, json_object_new_string(shmesg_types[k].name));
            json_object_object_add(e, "types", tl);
            json_object_object_add(e, "min_size", json_object_new_uint64(ms));
        }
    }
    if (ml != ml0 || mb != mb0)
        json_object_object_add(o, "shared_mesg_phase_change", pair_of(ml, mb));
    if (st != st0) {
        if ((int)st < 0 || (int)st > 3)
            H5ZV_GOTO_ERROR("can't describe file space strategy %d", (int)st);
        json_object_object_add(o, "file_space_strategy", json_object_new_string(fsp_names[st]));
    }
    if (pe != pe0)
        json_object_object_add(o, "file_space_persist", json_object_new_boolean(pe));
    if (thr != thr0)
        json_object_object_add(o, "file_space_threshold", json_object_new_uint64(thr));
    if (ps != ps0)
        json_object_object_add(o, "file_space_page_size", json_object_new_uint64(ps));
    ret = gcpl_part_to_json(p, def, o, aux);
done:
    return ret;
}

int
h5zv_fcpl_to_json(hid_t fcpl, struct json_object **out)
{
    return plist_to_json(fcpl, H5P_FILE_CREATE, fcpl_part_to_json, NULL, out);
}

static int
pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

int
h5zv_fcpl_from_json(struct json_object *j, const char *where, hid_t *fcpl_out)
{
    static const char *const keys[]  = {GCPL_KEYS,
                                        "userblock",
                                        "sizes",
                                        "sym_k",
                                        "istore_k",
                                        "shared_mesg",
                                        "shared_mesg_phase_change",
                                        "file_space_strategy",
                                        "file_space_persist",
                                        "file_space_threshold",
                                        "file_space_page_size",
                                        NULL};
    static const char *const ikeys[] = {"types", "min_size", NULL};
    struct json_object      *l       = NULL;
    uint64_t                 a = 0, b = 0;
    hid_t                    p = H5I_INVALID_HID;
    h5zv_jpath               kp, ep, fp, tp;
    int                      rc, ret = -1;

    *fcpl_out = H5I_INVALID_HID;
    if (h5zv_json_keys(j, where, keys) < 0)
        goto done;
    if ((p = H5Pcreate(H5P_FILE_CREATE)) < 0)
        H5ZV_GOTO_ERROR("can't make a file creation property list");
    if ((rc = h5zv_json_uint(j, where, "userblock", false, 0, (uint64_t)1 << 40, &a)) < 0)
        goto done;
    if (rc && a && (a < 512 || !pow2(a)))
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "userblock"), "%llu is not 0 or a power of two >= 512",
                       (unsigned long long)a);
    if (rc && H5Pset_userblock(p, a) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "userblock"), "HDF5 refused it");
    if ((rc = read_pair(j, where, "sizes", 2, 16, &a, &b)) < 0)
        goto done;
    if (rc && (!pow2(a) || !pow2(b)))
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "sizes"), "sizes must be 2, 4, 8 or 16");
    if (rc && H5Pset_sizes(p, (size_t)a, (size_t)b) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "sizes"), "HDF5 refused them");
    if ((rc = read_pair(j, where, "sym_k", 1, 32767, &a, &b)) < 0)
        goto done;
    if (rc && H5Pset_sym_k(p, (unsigned)a, (unsigned)b) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "sym_k"), "HDF5 refused it");
    if ((rc = h5zv_json_uint(j, where, "istore_k", false, 1, 32767, &a)) < 0)
        goto done;
    if (rc && H5Pset_istore_k(p, (unsigned)a) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "istore_k"), "HDF5 refused it");
    if ((rc = h5zv_json_list(j, where, "shared_mesg", false, 1, H5O_SHMESG_MAX_NINDEXES, &l)) < 0)
        goto done;
    if (rc) {
        size_t n = json_object_array_length(l);
        h5zv_jpath_key(&kp, where, "shared_mesg");
        if (H5Pset_shared_mesg_nindexes(p, (unsigned)n) < 0)
            H5ZV_JSON_FAIL(kp.s, "HDF5 refused %zu indexes", n);
        for (size_t i = 0; i < n; i++) {
            struct json_object *e = json_object_array_get_idx(l, i), *tl = NULL;
            unsigned            fl = 0;
            uint64_t            ms = 0;
            h5zv_jpath_idx(&ep, kp.s, i);
            if (h5zv_json_keys(e, ep.s, ikeys) < 0 ||
                h5zv_json_list(e, ep.s, "types", true, 1, N_SHMESG, &tl) < 0 ||
                h5zv_json_uint(e, ep.s, "min_size", true, 0, UINT32_MAX, &ms) < 0)
                goto done;
            h5zv_jpath_key(&fp, ep.s, "types");
            for (size_t k = 0; k < json_object_array_length(tl); k++) {
                struct json_object *tv = json_object_array_get_idx(tl, k);
                size_t              q;
                for (q = 0; q < N_SHMESG; q++)
                    if (json_object_is_type(tv, json_type_string) &&
                        !strcmp(json_object_get_string(tv), shmesg_types[q].name))
                        break;
                if (q == N_SHMESG)
                    H5ZV_JSON_FAIL(h5zv_jpath_idx(&tp, fp.s, k),
                                   "must be \"dataspace\", \"datatype\", \"fill\", \"pline\" or \"attr\"");
                fl |= shmesg_types[q].flag;
            }
            if (H5Pset_shared_mesg_index(p, (unsigned)i, fl, (unsigned)ms) < 0)
                H5ZV_JSON_FAIL(ep.s, "HDF5 refused the index");
        }
    }
    if ((rc = read_pair(j, where, "shared_mesg_phase_change", 0, H5O_SHMESG_MAX_LIST_SIZE, &a, &b)) < 0)
        goto done;
    if (rc && b > a + 1)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "shared_mesg_phase_change"),
                       "min_btree %llu is above max_list %llu + 1", (unsigned long long)b,
                       (unsigned long long)a);
    if (rc && H5Pset_shared_mesg_phase_change(p, (unsigned)a, (unsigned)b) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "shared_mesg_phase_change"), "HDF5 refused it");
    {
        H5F_fspace_strategy_t st  = H5F_FSPACE_STRATEGY_FSM_AGGR;
        hbool_t               pe  = false;
        hsize_t               thr = 1;
        int                   s   = 0, r1, r2, r3;
        bool                  bpe = false;
        uint64_t              t   = 0;
        if (H5Pget_file_space_strategy(p, &st, &pe, &thr) < 0 ||
            (r1 = h5zv_json_choice(j, where, "file_space_strategy", false, fsp_names, 4, &s)) < 0 ||
            (r2 = h5zv_json_bool(j, where, "file_space_persist", false, &bpe)) < 0 ||
            (r3 = h5zv_json_uint(j, where, "file_space_threshold", false, 0, (uint64_t)1 << 62, &t)) < 0)
            goto done;
        if (r1 || r2 || r3) {
            if (r1)
                st = (H5F_fspace_strategy_t)s;
            if (r2)
                pe = bpe;
            if (r3)
                thr = t;
            if (H5Pset_file_space_strategy(p, st, pe, thr) < 0)
                H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "file_space_strategy"),
                               "HDF5 refused the strategy");
        }
    }
    if ((rc = h5zv_json_uint(j, where, "file_space_page_size", false, 512, (uint64_t)1 << 30, &a)) < 0)
        goto done;
    if (rc && H5Pset_file_space_page_size(p, a) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "file_space_page_size"), "HDF5 refused it");
    if (gcpl_part_from_json(j, where, p) < 0)
        goto done;
    *fcpl_out = p;
    p         = H5I_INVALID_HID;
    ret       = 0;
done:
    h5zv_close(p);
    return ret;
}

/* ---- attributes ------------------------------------------------------------------------------------- */
static const char *const acpl_cset_names[] = {"ascii", "utf8"};

static int
acpl_part_to_json(hid_t p, hid_t def, struct json_object *o, const void *aux)
{
    H5T_cset_t c   = H5T_CSET_ASCII;
    int        ret = -1;
    (void)def;
    (void)aux;
    if (H5Pget_char_encoding(p, &c) < 0 || (int)c < 0 || (int)c > 1)
        H5ZV_GOTO_ERROR("can't read the attribute creation properties");
    if (c != H5T_CSET_ASCII)
        json_object_object_add(o, "cset", json_object_new_string(acpl_cset_names[c]));
    ret = 0;
done:
    return ret;
}

int
h5zv_acpl_to_json(hid_t acpl, struct json_object **out)
{
    return plist_to_json(acpl, H5P_ATTRIBUTE_CREATE, acpl_part_to_json, NULL, out);
}

int
h5zv_acpl_from_json(struct json_object *j, const char *where, hid_t *acpl_out)
{
    static const char *const keys[] = {"cset", NULL};
    hid_t                    p      = H5I_INVALID_HID;
    int                      c = 0, rc, ret = -1;
    h5zv_jpath               kp;
    *acpl_out = H5I_INVALID_HID;
    if (h5zv_json_keys(j, where, keys) < 0 ||
        (rc = h5zv_json_choice(j, where, "cset", false, acpl_cset_names, 2, &c)) < 0)
        goto done;
    if ((p = H5Pcreate(H5P_ATTRIBUTE_CREATE)) < 0)
        H5ZV_GOTO_ERROR("can't make an attribute creation property list");
    if (rc && H5Pset_char_encoding(p, (H5T_cset_t)c) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "cset"), "HDF5 refused it");
    *acpl_out = p;
    p         = H5I_INVALID_HID;
    ret       = 0;
done:
    h5zv_close(p);
    return ret;
}

/* ---- datasets --------------------------------------------------------------------------------------- */
/* H5D_COMPACT..H5D_VIRTUAL; a virtual dataset's mappings are kept beside the dcpl (vol/virtual.c) */
static const char *const layout_names[] = {"compact", "contiguous", "chunked", "virtual"};
static const char *const alloc_names[]  = {NULL, "early", "late", "incr"}; /* H5D_ALLOC_TIME_* */
static const char *const ftime_names[]  = {"alloc", "never", "ifset"};     /* H5D_FILL_TIME_* */

/* HDF5's allocation time for a layout when none was set. */
static H5D_alloc_time_t
layout_alloc(H5D_layout_t l)
{
    return l == H5D_COMPACT      ? H5D_ALLOC_TIME_EARLY
           : l == H5D_CONTIGUOUS ? H5D_ALLOC_TIME_LATE
                                 : H5D_ALLOC_TIME_INCR;
}

static hid_t
scalar_space(void)
{
    return H5Screate(H5S_SCALAR);
}

/* Frees what a value of `type` at `elem` points to (nothing for types without pointers). */
static void
reclaim(hid_t type, void *elem)
{
    h5zv_errs *es = h5zv_err_save(); /* first: H5Screate clears the stack */
    hid_t      s  = scalar_space();
    if (s >= 0)
        H5Treclaim(type, s, H5P_DEFAULT, elem);
    h5zv_close(s);
    h5zv_err_restore(es);
}

/* True if `type` is an integer or float type (no pointers inside a value). */
static bool
plain_number(hid_t type)
{
    H5T_class_t c = H5Tget_class(type);
    return c == H5T_INTEGER || c == H5T_FLOAT;
}

/* The external file list (H5Pset_external) as "external": [{"name", "offset", "size"}, ...], size -1 for
 * H5F_UNLIMITED (vol/external.c does the I/O). Names are UTF-8 of at most H5ZV_EXT_NAME_MAX bytes (the
 * connector refuses others at H5Dcreate: the document is JSON text). Nothing for a list without entries. */
static int
external_to_json(hid_t p, struct json_object *o)
{
    int                 n    = H5Pget_external_count(p);
    char               *name = NULL;
    struct json_object *l    = NULL;
    int                 ret  = -1;

    if (n < 0)
        H5ZV_GOTO_ERROR("can't read the external file list");
    if (n == 0)
        return 0;
    if ((size_t)n > H5ZV_EXT_FILES_MAX)
        H5ZV_GOTO_ERROR("%d external files (at most %u)", n, (unsigned)H5ZV_EXT_FILES_MAX);
    if (!(name = malloc(H5ZV_EXT_NAME_MAX + 2)))
        H5ZV_GOTO_ERROR("out of memory");
    l = json_object_new_array();
    for (int i = 0; i < n; i++) {
        off_t               off = 0;
        hsize_t             sz  = 0;
        struct json_object *e;
        name[0] = '\0';
        if (H5Pget_external(p, (unsigned)i, H5ZV_EXT_NAME_MAX + 2, name, &off, &sz) < 0)
            H5ZV_GOTO_ERROR("can't read external file %d", i);
        if (strlen(name) > H5ZV_EXT_NAME_MAX)
            H5ZV_GOTO_ERROR("external file %d: its name is longer than %u bytes", i,
                            (unsigned)H5ZV_EXT_NAME_MAX);
        if (!h5zv_utf8_ok(name))
            H5ZV_GOTO_ERROR("external file %d: its name is not UTF-8", i);
        e = json_object_new_object();
        json_object_object_add(e, "name", json_object_new_string(name));
        json_object_object_add(e, "offset", json_object_new_int64((int64_t)off));
        json_object_object_add(e, "size",
                               sz == H5F_UNLIMITED ? json_object_new_int64(-1)
                                                   : json_object_new_uint64((uint64_t)sz));
        json_object_array_add(l, e);
    }
    json_object_object_add(o, "external", l);
    l   = NULL;
    ret = 0;
done:
    json_object_put(l);
    free(name);
    return ret;
}

/* Adds the external file list of the dcpl document `j` to `p` (H5Pset_external, which checks the list as
 * for any program: names non-empty, offsets not negative, only the last size unlimited, the total not
 * overflowing). 0 also when there is none. */
static int
external_from_json(struct json_object *j, const char *where, hid_t p)
{
    static const char *const keys[] = {"name", "offset", "size", NULL};
    struct json_object      *l      = NULL;
    h5zv_jpath               kp, ep, fp;
    int                      rc, ret = -1;

    if ((rc = h5zv_json_list(j, where, "external", false, 1, H5ZV_EXT_FILES_MAX, &l)) <= 0)
        return rc;
    h5zv_jpath_key(&kp, where, "external");
    for (size_t i = 0; i < json_object_array_length(l); i++) {
        struct json_object *e = json_object_array_get_idx(l, i), *sv = NULL;
        const char         *name = NULL;
        uint64_t            off = 0, sz = 0;
        h5zv_jpath_idx(&ep, kp.s, i);
        if (h5zv_json_keys(e, ep.s, keys) < 0 ||
            h5zv_json_str(e, ep.s, "name", true, H5ZV_EXT_NAME_MAX, &name) < 0 ||
            h5zv_json_uint(e, ep.s, "offset", true, 0, INT64_MAX, &off) < 0)
            goto done;
        if (!*name)
            H5ZV_JSON_FAIL(h5zv_jpath_key(&fp, ep.s, "name"), "must not be empty");
        if (!json_object_object_get_ex(e, "size", &sv))
            H5ZV_JSON_FAIL(h5zv_jpath_key(&fp, ep.s, "size"), "is missing");
        if (json_object_is_type(sv, json_type_int) && json_object_get_int64(sv) == -1)
            sz = H5F_UNLIMITED;
        else if (h5zv_json_uint_val(sv, h5zv_jpath_key(&fp, ep.s, "size"), 0, INT64_MAX, &sz) < 0)
            goto done;
        if (sz != H5F_UNLIMITED && off > (uint64_t)INT64_MAX - sz)
            H5ZV_JSON_FAIL(ep.s, "offset %llu + size %llu overflows a file offset", (unsigned long long)off,
                           (unsigned long long)sz);
        if (H5Pset_external(p, name, (off_t)off, (hsize_t)sz) < 0)
            H5ZV_JSON_FAIL(ep.s,
                           "HDF5 refused it (an unlimited size before the last file, or sizes overflowing)");
    }
    ret = 0;
done:
    return ret;
}

/* A dcpl's part writer's `aux`: the dataset's type (for a user-defined fill value) and what H5Dcreate has
 * read of the list already (NULL: everything is asked of HDF5). */
typedef struct dcpl_aux {
    hid_t                  type;
    const h5zv_dcpl_known *k;
} dcpl_aux;

static int
dcpl_part_to_json(hid_t p, hid_t def, struct json_object *o, const void *aux)
{
    hid_t                  type = ((const dcpl_aux *)aux)->type;
    const h5zv_dcpl_known *k    = ((const dcpl_aux *)aux)->k;
    H5D_layout_t           lay  = k ? k->layout : H5Pget_layout(p);
    H5D_alloc_time_t       at   = H5D_ALLOC_TIME_DEFAULT;
    H5D_fill_time_t        ft   = k ? k->fill_time : H5D_FILL_TIME_IFSET;
    H5D_fill_value_t       fs   = k ? k->fill_status : H5D_FILL_VALUE_DEFAULT;
    hbool_t                nah  = false;
    void                  *elem = NULL;
    bool                   got  = false;
    int                    ret  = -1;

    if (lay < 0 || H5Pget_alloc_time(p, &at) < 0 || (!k && H5Pget_fill_time(p, &ft) < 0) ||
        (!k && H5Pfill_value_defined(p, &fs) < 0) || H5Pget_dset_no_attrs_hint(p, &nah) < 0)
        H5ZV_GOTO_ERROR("can't read the dataset creation properties");
    if (lay < H5D_COMPACT || lay > H5D_VIRTUAL)
        H5ZV_GOTO_ERROR("can't describe layout %d", (int)lay);
    /* a virtual layout is "virtual" here; its mappings are `_h5zarr.virtual` (vol/virtual.c) */
    if (lay != H5D_CONTIGUOUS)
        json_object_object_add(o, "layout", json_object_new_string(layout_names[lay]));
    if (lay == H5D_CHUNKED) {
        hsize_t             dims[H5S_MAX_RANK];
        const hsize_t      *cd   = k ? k->chunk : dims;
        unsigned            opts = 0;
        int                 nd   = k ? k->nchunk : H5Pget_chunk(p, H5S_MAX_RANK, dims);
        struct json_object *l    = json_object_new_array();
        json_object_object_add(o, "chunk", l);
        if (nd < 1 || nd > H5S_MAX_RANK || H5Pget_chunk_opts(p, &opts) < 0)
            H5ZV_GOTO_ERROR("can't read the chunk dimensions");
        for (int i = 0; i < nd; i++)
            json_object_array_add(l, json_object_new_uint64(cd[i]));
        if (opts & H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS)
            json_object_object_add(o, "dont_filter_partial_chunks", json_object_new_boolean(true));
    }
    if (at != layout_alloc(lay) && at >= H5D_ALLOC_TIME_EARLY && at <= H5D_ALLOC_TIME_INCR)
        json_object_object_add(o, "alloc_time", json_object_new_string(alloc_names[at]));
    if (ft != H5D_FILL_TIME_IFSET) {
        if (ft < 0 || ft > 2)
            H5ZV_GOTO_ERROR("can't describe fill time %d", (int)ft);
        json_object_object_add(o, "fill_time", json_object_new_string(ftime_names[ft]));
    }
    if (fs == H5D_FILL_VALUE_UNDEFINED)
        json_object_object_add(o, "fill_undefined", json_object_new_boolean(true));
    else if (fs == H5D_FILL_VALUE_USER_DEFINED) {
        struct json_object *v = NULL;
        size_t              sz;
        if (type < 0 || !(sz = H5Tget_size(type)))
            H5ZV_GOTO_ERROR("a user-defined fill value needs the dataset's datatype");
        if (!(elem = calloc(1, sz)))
            H5ZV_GOTO_ERROR("out of memory");
        if (H5Pget_fill_value(p, type, elem) < 0)
            H5ZV_GOTO_ERROR("can't read the fill value as the dataset's datatype");
        got = true;
        if (h5zv_value_to_json(type, elem, &v) < 0)
            H5ZV_GOTO_ERROR("can't store the fill value");
        json_object_object_add(o, "fill_value", v);
    }
    if (nah)
        json_object_object_add(o, "no_attrs_hint", json_object_new_boolean(true));
    if ((!k || k->nexternal != 0) && external_to_json(p, o) < 0)
        goto done;
    ret = ocpl_to_json(p, def, o, k ? k->nfilters : -1);
done:
    if (got && !plain_number(type)) /* nothing to free in a number (an H5Treclaim: ~2,000) */
        reclaim(type, elem);
    free(elem);
    return ret;
}

/* The default dcpl's JSON is a copy of default_dcpl_json. */
int
h5zv_dcpl_to_json(hid_t dcpl, hid_t type, struct json_object **out)
{
    dcpl_aux aux = {type, NULL};
    if (dcpl != H5P_DATASET_CREATE_DEFAULT && dcpl != H5P_DEFAULT)
        return plist_to_json(dcpl, H5P_DATASET_CREATE, dcpl_part_to_json, &aux, out);
    *out = NULL;
    if (!default_dcpl_json &&
        plist_to_json(H5P_DEFAULT, H5P_DATASET_CREATE, dcpl_part_to_json, &aux, &default_dcpl_json) < 0)
        return -1;
    if (json_object_deep_copy(default_dcpl_json, out, NULL) != 0) {
        h5zv_err_push(__func__, __LINE__, "out of memory");
        return -1;
    }
    return 0;
}

int
h5zv_dcpl_to_json_known(hid_t dcpl, hid_t type, const h5zv_dcpl_known *k, struct json_object **out)
{
    dcpl_aux aux = {type, k};
    return plist_to_json(dcpl, H5P_DATASET_CREATE, dcpl_part_to_json, &aux, out);
}

struct json_object *
h5zv_dcpl_chunked_json(int ndim, const hsize_t *chunks)
{
    struct json_object *j = NULL;
    hid_t               p = H5I_INVALID_HID;

    if (ndim < 1 || ndim > H5S_MAX_RANK) {
        h5zv_err_push(__func__, __LINE__, "chunked dcpl of rank %d", ndim);
        return NULL;
    }
    if (chunked_dcpl_json && chunked_ndim == ndim &&
        !memcmp(chunked_dims, chunks, (size_t)ndim * sizeof *chunks))
        return chunked_dcpl_json;
    if ((p = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_chunk(p, ndim, chunks) < 0 ||
        h5zv_dcpl_to_json(p, H5I_INVALID_HID, &j) < 0) {
        h5zv_close(p);
        h5zv_err_push(__func__, __LINE__, "can't describe a chunked dataset creation property list");
        return NULL;
    }
    h5zv_close(p);
    json_object_put(chunked_dcpl_json);
    chunked_dcpl_json = j;
    chunked_ndim      = ndim;
    memcpy(chunked_dims, chunks, (size_t)ndim * sizeof *chunks);
    return j;
}

int
h5zv_dcpl_filters_from_json(struct json_object *j, const char *where, hid_t *dcpl_out)
{
    hid_t p   = H5I_INVALID_HID;
    int   ret = -1;
    *dcpl_out = H5I_INVALID_HID;
    if (!json_object_is_type(j, json_type_object))
        H5ZV_JSON_FAIL(where, "must be a JSON object");
    if ((p = H5Pcreate(H5P_DATASET_CREATE)) < 0)
        H5ZV_GOTO_ERROR("can't make a dataset creation property list");
    if (filters_from_json(j, where, p) < 0)
        goto done;
    *dcpl_out = p;
    p         = H5I_INVALID_HID;
    ret       = 0;
done:
    h5zv_close(p);
    return ret;
}

int
h5zv_dcpl_from_json(struct json_object *j, hid_t type, const char *where, hid_t *dcpl_out)
{
    static const char *const keys[] = {
        OCPL_KEYS,       "layout",    "chunk",      "dont_filter_partial_chunks",
        "alloc_time",    "fill_time", "fill_value", "fill_undefined",
        "no_attrs_hint", "external",  NULL};
    struct json_object *cl = NULL, *fv = NULL;
    hid_t               p   = H5I_INVALID_HID;
    int                 lay = H5D_CONTIGUOUS, at = 0, ft = 0, rc, rc2;
    bool                b = false, undef = false;
    void               *elem = NULL;
    h5zv_jpath          kp, ep;
    int                 ret = -1;

    *dcpl_out = H5I_INVALID_HID;
    if (h5zv_json_keys(j, where, keys) < 0)
        goto done;
    if ((p = H5Pcreate(H5P_DATASET_CREATE)) < 0)
        H5ZV_GOTO_ERROR("can't make a dataset creation property list");
    if (h5zv_json_choice(j, where, "layout", false, layout_names, 4, &lay) < 0 ||
        h5zv_json_list(j, where, "chunk", lay == H5D_CHUNKED, 1, H5S_MAX_RANK, &cl) < 0)
        goto done;
    if (cl && lay != H5D_CHUNKED)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "chunk"), "given for a %s layout", layout_names[lay]);
    if (lay == H5D_CHUNKED) {
        hsize_t  dims[H5S_MAX_RANK];
        uint64_t total = 1;
        size_t   nd    = json_object_array_length(cl);
        h5zv_jpath_key(&kp, where, "chunk");
        for (size_t i = 0; i < nd; i++) {
            uint64_t d;
            if (h5zv_json_uint_val(json_object_array_get_idx(cl, i), h5zv_jpath_idx(&ep, kp.s, i), 1,
                                   UINT32_MAX, &d) < 0)
                goto done;
            dims[i] = d;
            total *= d; /* below 2^32 before each step: no overflow */
            if (total > UINT32_MAX)
                H5ZV_JSON_FAIL(kp.s, "a chunk of more than 2^32 - 1 elements");
        }
        if (H5Pset_chunk(p, (int)nd, dims) < 0)
            H5ZV_JSON_FAIL(kp.s, "HDF5 refused the chunk dimensions");
        if ((rc = h5zv_json_bool(j, where, "dont_filter_partial_chunks", false, &b)) < 0)
            goto done;
        if (rc && b && H5Pset_chunk_opts(p, H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS) < 0)
            H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "dont_filter_partial_chunks"), "HDF5 refused it");
    }
    else {
        if (json_object_object_get_ex(j, "dont_filter_partial_chunks", NULL))
            H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "dont_filter_partial_chunks"), "given for a %s layout",
                           layout_names[lay]);
        if (H5Pset_layout(p, (H5D_layout_t)lay) < 0)
            H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "layout"), "HDF5 refused it");
    }
    if ((rc = h5zv_json_choice(j, where, "alloc_time", false, alloc_names, 4, &at)) < 0)
        goto done;
    if (rc && H5Pset_alloc_time(p, (H5D_alloc_time_t)at) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "alloc_time"), "HDF5 refused it for a %s layout",
                       layout_names[lay]);
    if ((rc = h5zv_json_choice(j, where, "fill_time", false, ftime_names, 3, &ft)) < 0)
        goto done;
    if (rc && H5Pset_fill_time(p, (H5D_fill_time_t)ft) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "fill_time"), "HDF5 refused it");
    if ((rc = h5zv_json_bool(j, where, "fill_undefined", false, &undef)) < 0)
        goto done;
    rc2 = json_object_object_get_ex(j, "fill_value", &fv);
    if (rc2 && rc && undef)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "fill_value"), "given with fill_undefined");
    if (rc && undef && H5Pset_fill_value(p, type >= 0 ? type : H5T_NATIVE_INT, NULL) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "fill_undefined"), "HDF5 refused it");
    if (rc2) {
        size_t sz;
        int    vr;
        h5zv_jpath_key(&kp, where, "fill_value");
        if (type < 0 || !(sz = H5Tget_size(type)))
            H5ZV_JSON_FAIL(kp.s, "no datatype to read it as");
        if (!(elem = calloc(1, sz)))
            H5ZV_JSON_FAIL(kp.s, "out of memory");
        vr = h5zv_value_from_json(fv, type, kp.s, elem);
        if (vr == 0 && H5Pset_fill_value(p, type, elem) < 0) {
            vr = -1;
            h5zv_err_push(__func__, __LINE__, "%s: HDF5 refused the value", kp.s);
        }
        reclaim(type, elem);
        if (vr < 0)
            goto done;
    }
    if ((rc = h5zv_json_bool(j, where, "no_attrs_hint", false, &b)) < 0)
        goto done;
    if (rc && H5Pset_dset_no_attrs_hint(p, b) < 0)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "no_attrs_hint"), "HDF5 refused it");
    if (json_object_object_get_ex(j, "external", NULL) && lay != H5D_CONTIGUOUS)
        H5ZV_JSON_FAIL(h5zv_jpath_key(&kp, where, "external"),
                       "given for a %s layout (external storage is "
                       "contiguous)",
                       layout_names[lay]);
    if (external_from_json(j, where, p) < 0)
        goto done;
    if (ocpl_from_json(j, where, p) < 0)
        goto done;
    *dcpl_out = p;
    p         = H5I_INVALID_HID;
    ret       = 0;
done:
    free(elem);
    h5zv_close(p);
    return ret;
}
