/*
 * netlib.h: libcurl and libxml2, loaded when a network store first needs them (netlib.c). Linking
 * them would make every process that loads the connector map dozens more libraries (libcurl's TLS,
 * Kerberos, LDAP, SSH, IDN; libxml2's ICU) at start-up, a large part of each `h5ls` (see
 * bench/README.md, "Figures behind comments in the sources"), for stores that are mostly local. The
 * network code calls them through the tables below (zarr__curl.easy_init(), zarr__xml.ReadMemory(),
 * ...), whose entries have the libraries' own prototypes; the libraries loaded are the ones the build
 * found (their sonames are recorded at configure time), so headers and code agree.
 */
#ifndef H5ZARR_ZARR_NETLIB_H
#define H5ZARR_ZARR_NETLIB_H

#include <curl/curl.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

/* clang-format off */
/* The libcurl functions the network stores call, without their "curl_" prefix. */
#define ZARR__CURL_FUNCS(X)                                                                 \
    X(global_init)                                                                          \
    X(easy_init) X(easy_setopt) X(easy_getinfo) X(easy_cleanup) X(easy_reset)               \
    X(easy_strerror)                                                                        \
    X(share_init) X(share_setopt) X(share_cleanup)                                          \
    X(multi_init) X(multi_setopt) X(multi_add_handle) X(multi_remove_handle)                \
    X(multi_perform) X(multi_poll) X(multi_info_read) X(multi_cleanup)                      \
    X(slist_append) X(slist_free_all)

/* The libxml2 functions S3's XML answers are parsed with, without their "xml" prefix. */
#define ZARR__XML_FUNCS(X) X(InitParser) X(ReadMemory) X(DocGetRootElement) X(NodeGetContent) X(FreeDoc)
/* clang-format on */

#define ZARR__NETLIB_CURL_MEMBER(n) __typeof__(curl_##n) *n;
#define ZARR__NETLIB_XML_MEMBER(n)  __typeof__(xml##n) *n;
typedef struct zarr__curl_api {
    ZARR__CURL_FUNCS(ZARR__NETLIB_CURL_MEMBER)
} zarr__curl_api;
typedef struct zarr__xml_api {
    ZARR__XML_FUNCS(ZARR__NETLIB_XML_MEMBER)
    xmlFreeFunc *Free; /* libxml2's xmlFree, a variable holding its deallocator: (*zarr__xml.Free)(p) */
} zarr__xml_api;
#undef ZARR__NETLIB_CURL_MEMBER
#undef ZARR__NETLIB_XML_MEMBER

/* Filled by zarr__netlib_curl / zarr__netlib_xml; read only after one of them returned ZARR_OK. */
extern zarr__curl_api zarr__curl;
extern zarr__xml_api  zarr__xml;

/* Load libcurl / libxml2 once per process (thread-safe) and fill the table (libxml2's parser initialised).
 * ZARR_OK, or ZARR_EUNSUPPORTED with a message naming the library and why it could not be loaded (the same
 * each later call). */
int zarr__netlib_curl(void);
int zarr__netlib_xml(void);

#endif
