/*
 * handle.c: the connector's objects (h5zv_obj), one per id HDF5 holds: made and freed here, each on its
 * file's list of open objects (h5zv_file.objs) and holding a reference on the file, so the file outlives
 * its objects as HDF5 expects. The list answers whether a path is in use and is retargeted after a move.
 *
 * The objects are also indexed by the first component of their path (h5zv_file.obj_tab, chained hash
 * table): a path is at or under a move's source only if it shares its first component, so a move or an
 * unlink visits those objects alone. HDF5 1.14.5's H5DSattach_scale leaks an id for each reference it
 * rewrites (h5zv_obj.ref_idle), so a netCDF file holds thousands of open objects and netCDF renames a
 * variable through thousands of H5Lmove calls (every later variable moves twice).
 */
#include "h5zv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

/* ---- the index by first component ------------------------------------------------------------------ */
static uint64_t
comp_hash(const char *path)
{
    return XXH3_64bits(path, strcspn(path, "/"));
}

static void
tab_link(h5zv_file *f, h5zv_obj *o)
{
    h5zv_obj **b = &f->obj_tab[o->comp_hash & (f->obj_tabsize - 1)];
    o->prev_comp = NULL;
    if ((o->next_comp = *b))
        (*b)->prev_comp = o;
    *b = o;
}

static void
tab_unlink(h5zv_file *f, h5zv_obj *o)
{
    if (o->prev_comp)
        o->prev_comp->next_comp = o->next_comp;
    else
        f->obj_tab[o->comp_hash & (f->obj_tabsize - 1)] = o->next_comp;
    if (o->next_comp)
        o->next_comp->prev_comp = o->prev_comp;
    o->next_comp = o->prev_comp = NULL;
}

/* Room for one more object: the table doubles past one object per chain. -1 when out of memory. */
static int
tab_reserve(h5zv_file *f)
{
    size_t     nsize;
    h5zv_obj **nt;
    if (f->obj_tab && f->nobjs < f->obj_tabsize)
        return 0;
    nsize = f->obj_tabsize ? f->obj_tabsize * 2 : 64;
    if (!(nt = calloc(nsize, sizeof *nt)))
        return f->obj_tab ? 0 : -1; /* a full table still works: longer chains */
    free(f->obj_tab);
    f->obj_tab     = nt;
    f->obj_tabsize = nsize;
    for (h5zv_obj *o = f->objs; o; o = o->next_obj)
        tab_link(f, o);
    return 0;
}

/* ---- handles --------------------------------------------------------------------------------------- */
h5zv_obj *
h5zv_obj_new(h5zv_file *f, H5I_type_t type, const char *path)
{
    h5zv_obj *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    if (!(o->path = strdup(path ? path : "")) || tab_reserve(f) < 0) {
        free(o->path);
        free(o);
        return NULL;
    }
    o->type     = type;
    o->file     = f;
    o->type_id  = H5I_INVALID_HID;
    o->space_id = H5I_INVALID_HID;
    o->dcpl_id  = H5I_INVALID_HID;
    o->dapl_id  = H5I_INVALID_HID;
    o->mf_id = o->mf_of = H5I_INVALID_HID;
    o->attr_type = o->attr_space = o->dtype_id = H5I_INVALID_HID;
    if (type == H5I_FILE) { /* a file handle: objects reached through it carry its number (route.c) */
        static unsigned long handles;
        o->via = ++handles;
        f->nhandles++;
        f->program_closed = false;
    }
    h5zv_file_incref(f);
    if ((o->next_obj = f->objs))
        f->objs->prev_obj = o;
    f->objs      = o;
    o->comp_hash = comp_hash(o->path);
    tab_link(f, o);
    f->nobjs++;
    return o;
}

void
h5zv_obj_set_path(h5zv_obj *o, char *path)
{
    tab_unlink(o->file, o);
    free(o->path);
    o->path      = path;
    o->node      = NULL;
    o->comp_hash = comp_hash(path);
    tab_link(o->file, o);
}

bool
h5zv_path_in_use(h5zv_file *f, const char *path)
{
    size_t   n = strlen(path);
    uint64_t h = comp_hash(path);
    if (!*path) { /* the root: every object */
        for (h5zv_obj *o = f->objs; o; o = o->next_obj)
            if (o->type != H5I_FILE)
                return true;
        return false;
    }
    for (h5zv_obj *o = f->obj_tab ? f->obj_tab[h & (f->obj_tabsize - 1)] : NULL; o; o = o->next_comp)
        if (o->comp_hash == h && o->type != H5I_FILE && h5zv_path_under(o->path, path, n))
            return true;
    return false;
}

int
h5zv_objs_retarget(h5zv_file *f, const char *from, const char *to)
{
    size_t    n     = strlen(from);
    uint64_t  h     = comp_hash(from);
    h5zv_obj *moved = NULL, *next;
    int       ret   = 0;
    if (!*from || !f->obj_tab) /* the root never moves; no table: no object */
        return 0;
    /* taken out of the chain first: their new first component may chain them anywhere */
    for (h5zv_obj *o = f->obj_tab[h & (f->obj_tabsize - 1)]; o; o = next) {
        next = o->next_comp;
        if (o->comp_hash != h || o->type == H5I_FILE || !h5zv_path_under(o->path, from, n))
            continue;
        tab_unlink(f, o);
        o->next_comp = moved;
        moved        = o;
    }
    for (h5zv_obj *o = moved; o; o = next) {
        char *p = ret == 0 ? h5zv_path_moved(o->path, n, to) : NULL;
        next    = o->next_comp;
        if (p) {
            free(o->path);
            o->path      = p;
            o->node      = NULL;
            o->comp_hash = comp_hash(p);
        }
        else /* out of memory: it stays where it was, and the move reports */
            ret = -1;
        tab_link(f, o);
    }
    return ret;
}

void
h5zv_obj_free(h5zv_obj *o)
{
    h5zv_errs *es;
    if (!o)
        return;
    es = h5zv_err_save();
    if (o->file && o->getfile) { /* its id is gone: the next H5VL_OBJECT_GET_FILE makes another */
        h5zv_obj **pp = &o->file->getfile_objs;
        while (*pp && *pp != o)
            pp = &(*pp)->next_getfile;
        if (*pp)
            *pp = o->next_getfile;
        o->file->ngetfile--;
    }
    if (o->file && o->type == H5I_FILE)
        o->file->nhandles--;
    if (o->prev_obj)
        o->prev_obj->next_obj = o->next_obj;
    else if (o->file && o->file->objs == o)
        o->file->objs = o->next_obj;
    if (o->next_obj)
        o->next_obj->prev_obj = o->prev_obj;
    if (o->file) {
        tab_unlink(o->file, o);
        o->file->nobjs--;
    }
    hid_t ids[] = {o->space_id, o->dcpl_id, o->dapl_id, o->attr_space, o->mf_id};
    h5zv_type_release(o->type_id);
    h5zv_type_release(o->attr_type);
    h5zv_type_release(o->dtype_id);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ids[i] >= 0 && H5Iis_valid(ids[i]))
            H5Idec_ref(ids[i]);
    free(o->path);
    free(o->attr_name);
    h5zv_file_decref(o->file);
    free(o);
    h5zv_err_restore(es);
}
