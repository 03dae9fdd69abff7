/*
 * dynlib.c: loads a codec's or store's library on first use (dynlib.h says why): dlopen of the soname the
 * build linked its headers against, then every function of the table by name. A library that is missing,
 * or lacks a function, makes what needs it fail with one clear error naming the library; nothing else is
 * affected, and a process that never uses it never maps it.
 */
#include "dynlib.h"

#include "internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t dynlib_lock = PTHREAD_MUTEX_INITIALIZER;

/* dlopens l->soname and fills l->table; sets l->why on failure. Called once, under dynlib_lock. */
static int
dynlib_open(zarr__dynlib *l)
{
    void       *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL), *p;
    const char *e;

    if (!h) {
        e = dlerror();
        snprintf(l->why, sizeof l->why, "%s", e ? e : "dlopen failed");
        return -1;
    }
    for (size_t i = 0; i < l->n; i++) {
        if (!(p = dlsym(h, l->names[i]))) {
            snprintf(l->why, sizeof l->why, "it has no %s", l->names[i]);
            return -1; /* h stays open: harmless, and the answer stays the same */
        }
        memcpy((char *)l->table + i * sizeof p, &p, sizeof p); /* POSIX's form for function pointers */
    }
    return 1;
}

int
zarr__dynlib_load(zarr__dynlib *lib)
{
    int state = __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE);

    if (!state) {
        pthread_mutex_lock(&dynlib_lock);
        if (!(state = __atomic_load_n(&lib->state, __ATOMIC_RELAXED))) {
            state = dynlib_open(lib);
            __atomic_store_n(&lib->state, state, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&dynlib_lock);
    }
    if (state > 0)
        return ZARR_OK;
    return zarr_error(ZARR_EUNSUPPORTED, "can't load %s for %s: %s", lib->soname, lib->user, lib->why);
}
