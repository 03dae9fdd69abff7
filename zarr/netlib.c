/*
 * netlib.c: loads libcurl and libxml2 on first use (netlib.h says why): dlopen of the soname the build
 * linked against (H5ZARR_CURL_SONAME, H5ZARR_XML2_SONAME from CMake), then every function of the
 * tables by name. A library that is missing, or lacks a function, makes the network stores fail with
 * one clear error; local stores never load either.
 */
#include "netlib.h"

#include "internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#ifndef H5ZARR_CURL_SONAME
#define H5ZARR_CURL_SONAME "libcurl.so.4"
#endif
#ifndef H5ZARR_XML2_SONAME
#define H5ZARR_XML2_SONAME "libxml2.so.2"
#endif

zarr__curl_api zarr__curl;
zarr__xml_api  zarr__xml;

typedef struct netlib {
    pthread_once_t once;
    const char    *soname;
    char           why[512]; /* "" once loaded */
} netlib;

static netlib curl_lib = {PTHREAD_ONCE_INIT, H5ZARR_CURL_SONAME, "not loaded"};
static netlib xml_lib  = {PTHREAD_ONCE_INIT, H5ZARR_XML2_SONAME, "not loaded"};

/* Symbols of a table: their names and the table slots they go into. */
#define X(n) "curl_" #n,
static const char *const curl_names[] = {ZARR__CURL_FUNCS(X)};
#undef X
#define X(n) (void *)&zarr__curl.n,
static void *const curl_slots[] = {ZARR__CURL_FUNCS(X)};
#undef X
#define X(n) "xml" #n,
static const char *const xml_names[] = {ZARR__XML_FUNCS(X) "xmlFree"};
#undef X
#define X(n) (void *)&zarr__xml.n,
static void *const xml_slots[] = {ZARR__XML_FUNCS(X)(void *) & zarr__xml.Free};
#undef X
_Static_assert(sizeof curl_names / sizeof *curl_names == sizeof curl_slots / sizeof *curl_slots,
               "curl table");
_Static_assert(sizeof xml_names / sizeof *xml_names == sizeof xml_slots / sizeof *xml_slots, "xml table");

/* dlopens `l` and fills the `n` slots with the symbols named (each slot holds one pointer: a function's,
 * or for xmlFree a variable's address); l->why says what failed, "" when all is loaded. */
static void
load(netlib *l, const char *const *names, void *const *slots, size_t n)
{
    void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL), *p;
    if (!h) {
        const char *e = dlerror();
        snprintf(l->why, sizeof l->why, "%s", e ? e : l->soname);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(p = dlsym(h, names[i]))) {
            snprintf(l->why, sizeof l->why, "%s has no %s", l->soname, names[i]);
            return;
        }
        memcpy(slots[i], &p, sizeof p); /* POSIX's form for function pointers */
    }
    l->why[0] = '\0';
}

static void
load_curl(void)
{
    load(&curl_lib, curl_names, curl_slots, sizeof curl_names / sizeof *curl_names);
}

static void
load_xml(void)
{
    load(&xml_lib, xml_names, xml_slots, sizeof xml_names / sizeof *xml_names);
    if (!xml_lib.why[0])
        zarr__xml.InitParser(); /* libxml2's one-time set-up, before any thread parses */
}

static int
loaded(const netlib *l, const char *what)
{
    if (!l->why[0])
        return ZARR_OK;
    return zarr_error(ZARR_EUNSUPPORTED, "can't load %s for the network stores: %s", what, l->why);
}

int
zarr__netlib_curl(void)
{
    pthread_once(&curl_lib.once, load_curl);
    return loaded(&curl_lib, "libcurl");
}

int
zarr__netlib_xml(void)
{
    pthread_once(&xml_lib.once, load_xml);
    return loaded(&xml_lib, "libxml2");
}
