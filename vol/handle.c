/*
 * handle.c: the connector's objects (h5zv_obj), one per id HDF5 holds: made and freed here, each on its
 * file's list of open objects (h5zv_file.objs) and holding a reference on the file, so the file outlives
 * its objects as HDF5 expects. The list answers whether a path is in use and is retargeted after a move.
 */
#include "h5zv.h"

#include <stdlib.h>
#include <string.h>

/* ---- handles --------------------------------------------------------------------------------------- */
h5zv_obj *
h5zv_obj_new(h5zv_file *f, H5I_type_t type, const char *path)
{
    h5zv_obj *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    if (!(o->path = strdup(path ? path : ""))) {
        free(o);
        return NULL;
    }
    o->type      = type;
    o->file      = f;
    o->type_id   = H5I_INVALID_HID;
    o->space_id  = H5I_INVALID_HID;
    o->dcpl_id   = H5I_INVALID_HID;
    o->dapl_id   = H5I_INVALID_HID;
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
    f->objs = o;
    return o;
}

bool
h5zv_path_in_use(h5zv_file *f, const char *path)
{
    size_t n = strlen(path);
    for (h5zv_obj *o = f->objs; o; o = o->next_obj)
        if (o->type != H5I_FILE && h5zv_path_under(o->path, path, n))
            return true;
    return false;
}

int
h5zv_objs_retarget(h5zv_file *f, const char *from, const char *to)
{
    size_t n = strlen(from);
    for (h5zv_obj *o = f->objs; o; o = o->next_obj) {
        char *p;
        if (o->type == H5I_FILE || !h5zv_path_under(o->path, from, n))
            continue;
        if (!(p = malloc(strlen(to) + strlen(o->path + n) + 1)))
            return -1;
        strcpy(p, to);
        strcat(p, o->path + n);
        free(o->path);
        o->path = p;
    }
    return 0;
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
    hid_t ids[] = {o->space_id, o->dcpl_id, o->dapl_id, o->attr_space};
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
