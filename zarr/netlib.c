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

/* dlsym of `name` into the function pointer at `slot` (POSIX's form for function pointers). */
static bool
sym(netlib *l, void *h, const char *name, void *slot)
{
    void *p = dlsym(h, name);
    if (!p) {
        snprintf(l->why, sizeof l->why, "%s has no %s", l->soname, name);
        return false;
    }
    memcpy(slot, &p, sizeof p);
    return true;
}

static void *
open_lib(netlib *l)
{
    void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(l->why, sizeof l->why, "%s", e ? e : l->soname);
    }
    return h;
}

static void
load_curl(void)
{
    void *h = open_lib(&curl_lib);
    if (!h)
        return;
#define X(n)                                                                                                 \
    if (!sym(&curl_lib, h, "curl_" #n, &zarr__curl.n))                                                       \
        return;
    ZARR__CURL_FUNCS(X)
#undef X
    curl_lib.why[0] = '\0';
}

static void
load_xml(void)
{
    void *h = open_lib(&xml_lib);
    if (!h)
        return;
#define X(n)                                                                                                 \
    if (!sym(&xml_lib, h, "xml" #n, &zarr__xml.n))                                                           \
        return;
    ZARR__XML_FUNCS(X)
#undef X
    if (!(zarr__xml.Free = dlsym(h, "xmlFree"))) { /* a variable, not a function */
        snprintf(xml_lib.why, sizeof xml_lib.why, "%s has no xmlFree", xml_lib.soname);
        return;
    }
    xml_lib.why[0] = '\0';
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
