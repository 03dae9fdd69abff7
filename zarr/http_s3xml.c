/*
 * http_s3xml.c: parses the XML answers of S3 servers (http_aws.h) with libxml2: ListObjectsV2 pages
 * (keys with sizes, common prefixes, the continuation token) and error documents (Code, Message).
 * The XML is untrusted input: documents with a DOCTYPE are refused before parsing (no entities, no
 * external subsets), the parser runs without network access and without entity substitution, element
 * names are matched without their namespace, and every number is parsed strictly.
 */
#define _GNU_SOURCE
#include "http_aws.h"
#include "netlib.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define XML_MAX (64u << 20)

/* The document of `n` bytes, or NULL when it is not well-formed or may not be parsed (libxml2 loaded). */
static xmlDocPtr
xml_read(const void *xml, size_t n)
{
    if (n == 0 || n > XML_MAX || memmem(xml, n, "<!DOCTYPE", 9) || memmem(xml, n, "<!ENTITY", 8))
        return NULL;
    return zarr__xml.ReadMemory(xml, (int)n, "s3.xml", NULL,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                    XML_PARSE_NOCDATA);
}

static bool
named(xmlNodePtr x, const char *name)
{
    return x->type == XML_ELEMENT_NODE && x->name && strcmp((const char *)x->name, name) == 0;
}

/* The text of the first child element `name` of `x` (malloc'ed by libxml2: xmlFree), or NULL. */
static xmlChar *
child_text(xmlNodePtr x, const char *name)
{
    for (xmlNodePtr c = x->children; c; c = c->next)
        if (named(c, name))
            return zarr__xml.NodeGetContent(c);
    return NULL;
}

static bool
parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || !*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

/* Appends a copy of `s` to a growing string array. */
static int
push(char ***v, size_t *n, size_t *cap, const char *s)
{
    if (*n == *cap) {
        size_t c  = *cap ? 2 * *cap : 64;
        char **nv = realloc(*v, c * sizeof *nv);
        if (!nv)
            return ZARR_ENOMEM;
        *v   = nv;
        *cap = c;
    }
    if (!((*v)[*n] = strdup(s)))
        return ZARR_ENOMEM;
    (*n)++;
    return ZARR_OK;
}

int
zarr__s3_list_parse(const void *xml, size_t n, const char *where, zarr__s3_list *out)
{
    xmlDocPtr  doc;
    xmlNodePtr root;
    size_t     capk = 0, capp = 0, caps = 0;
    int        rc = ZARR_OK;
    xmlChar   *t  = NULL;

    if ((rc = zarr__netlib_xml()) != ZARR_OK)
        return zarr_error_wrap(rc, "listing '%s': ", where);
    if (!(doc = xml_read(xml, n)))
        return zarr_error(ZARR_EIO, "listing '%s': the server's answer is not an XML document we read",
                          where);
    root = zarr__xml.DocGetRootElement(doc);
    if (!root || !named(root, "ListBucketResult"))
        ZARR_FAIL(ZARR_EIO, "listing '%s': the server's answer is not a ListBucketResult", where);
    for (xmlNodePtr c = root->children; c; c = c->next) {
        if (named(c, "Contents")) {
            xmlChar *key = child_text(c, "Key"), *size = child_text(c, "Size");
            uint64_t sz = 0;
            bool     ok = key && *key && (!size || parse_u64((const char *)size, &sz));
            if (ok && out->nkeys == caps) {
                size_t    cs = caps ? 2 * caps : 64;
                uint64_t *ns = realloc(out->sizes, cs * sizeof *ns);
                if (!ns)
                    ok = false, rc = ZARR_ENOMEM;
                else
                    out->sizes = ns, caps = cs;
            }
            if (ok && rc == ZARR_OK) {
                out->sizes[out->nkeys] = sz;
                if (push(&out->keys, &out->nkeys, &capk, (const char *)key) != ZARR_OK)
                    rc = ZARR_ENOMEM;
            }
            (*zarr__xml.Free)(key);
            (*zarr__xml.Free)(size);
            if (rc == ZARR_ENOMEM)
                ZARR_FAIL(ZARR_ENOMEM, "out of memory listing '%s'", where);
            if (!ok)
                ZARR_FAIL(ZARR_EIO, "listing '%s': a Contents entry without a Key or with a malformed Size",
                          where);
        }
        else if (named(c, "CommonPrefixes")) {
            xmlChar *p = child_text(c, "Prefix");
            if (p && *p && push(&out->prefixes, &out->nprefixes, &capp, (const char *)p) != ZARR_OK) {
                (*zarr__xml.Free)(p);
                ZARR_FAIL(ZARR_ENOMEM, "out of memory listing '%s'", where);
            }
            (*zarr__xml.Free)(p);
        }
        else if (named(c, "IsTruncated")) {
            t              = zarr__xml.NodeGetContent(c);
            out->truncated = t && strcmp((const char *)t, "true") == 0;
            (*zarr__xml.Free)(t);
            t = NULL;
        }
        else if (named(c, "NextContinuationToken")) {
            t = zarr__xml.NodeGetContent(c);
            free(out->next);
            out->next = t && *t ? strdup((const char *)t) : NULL;
            (*zarr__xml.Free)(t);
            t = NULL;
        }
    }
    if (out->truncated && !out->next)
        ZARR_FAIL(ZARR_EIO, "listing '%s': a truncated page without a NextContinuationToken", where);
done:
    zarr__xml.FreeDoc(doc);
    return rc;
}

void
zarr__s3_list_free(zarr__s3_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->nkeys; i++)
        free(l->keys[i]);
    for (size_t i = 0; i < l->nprefixes; i++)
        free(l->prefixes[i]);
    free(l->keys);
    free(l->sizes);
    free(l->prefixes);
    free(l->next);
    memset(l, 0, sizeof *l);
}

/* Copies `s` into dst (n bytes), printable ASCII only. */
static void
copy_clean(char *dst, size_t n, const xmlChar *s)
{
    size_t k = 0;
    if (n == 0)
        return;
    for (; s && *s && k + 1 < n; s++)
        dst[k++] = (*s >= 0x20 && *s < 0x7f) ? (char)*s : '?';
    dst[k] = '\0';
}

void
zarr__s3_error_parse(const void *xml, size_t n, char *code, size_t ncode, char *msg, size_t nmsg)
{
    xmlDocPtr  doc;
    xmlNodePtr root;
    if (ncode)
        code[0] = '\0';
    if (nmsg)
        msg[0] = '\0';
    if (n > (64u << 10) || zarr__netlib_xml() != ZARR_OK || !(doc = xml_read(xml, n)))
        return;
    root = zarr__xml.DocGetRootElement(doc);
    if (root && named(root, "Error")) {
        xmlChar *c = child_text(root, "Code"), *m = child_text(root, "Message");
        copy_clean(code, ncode, c);
        copy_clean(msg, nmsg, m);
        (*zarr__xml.Free)(c);
        (*zarr__xml.Free)(m);
    }
    zarr__xml.FreeDoc(doc);
}
