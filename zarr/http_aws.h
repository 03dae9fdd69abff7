/*
 * http_aws.h: what the S3 store needs to know about its account, and the S3 answers it parses:
 * credentials, region, endpoint and addressing style from the standard AWS environment variables and
 * shared files (http_aws.c), and the XML of ListObjectsV2 results and error documents (http_s3xml.c).
 */
#ifndef H5ZARR_ZARR_HTTP_AWS_H
#define H5ZARR_ZARR_HTTP_AWS_H

#include "internal.h"

enum { ZARR__AWS_ADDR_AUTO, ZARR__AWS_ADDR_PATH, ZARR__AWS_ADDR_VIRTUAL };

typedef struct zarr__aws {
    char *key_id, *secret, *token; /* owned; NULL: unsigned (anonymous) requests */
    char *region;                  /* owned, never NULL after a successful load */
    char *endpoint;                /* owned "http[s]://host[:port]" without a trailing '/', or NULL: AWS's */
    int   addressing;              /* ZARR__AWS_ADDR_* */
    char  cred_source[160];        /* where the credentials came from, for messages (never a secret) */
} zarr__aws;

/* Fills `a` (zeroed by the caller) from, in order of precedence:
 *  - credentials: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN); else the profile
 *    (AWS_PROFILE, else "default") of the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else
 *    ~/.aws/credentials), else of the config file (AWS_CONFIG_FILE, else ~/.aws/config; section
 *    "[profile NAME]" or "[default]"); else none (anonymous requests);
 *  - region: AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`, else "us-east-1";
 *  - endpoint: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's `endpoint_url` (also inside an
 *    `s3 =` block), else AWS's own;
 *  - addressing: H5ZARR_S3_ADDRESSING ("path", "virtual", "auto"), the profile's `addressing_style`
 *    (also inside `s3 =`), else auto (virtual-hosted on AWS's endpoint, path-style on any other).
 * A named profile that is in neither file is an error, as a malformed endpoint is. Errors never quote
 * a secret. Free with zarr__aws_fini (wipes the secrets; accepts NULL). */
int  zarr__aws_load(zarr__aws *a);
void zarr__aws_fini(zarr__aws *a);

/* A parsed page of a ListObjectsV2 result. Keys are as the server sent them (full object keys). */
typedef struct zarr__s3_list {
    char    **keys;  /* Contents/Key */
    uint64_t *sizes; /* Contents/Size */
    size_t    nkeys;
    char    **prefixes; /* CommonPrefixes/Prefix */
    size_t    nprefixes;
    bool      truncated; /* IsTruncated */
    char     *next;      /* NextContinuationToken (required when truncated) */
} zarr__s3_list;

/* Parses a ListObjectsV2 result (`n` bytes of untrusted XML) into `*out` (zeroed by the caller; free
 * with zarr__s3_list_free even on failure). Refuses documents with a DOCTYPE, over 64 MiB, without a
 * ListBucketResult root, with a Contents entry missing its Key or with a Size that is not a decimal
 * number, and a truncated page without a continuation token: ZARR_EIO naming `where`. */
int  zarr__s3_list_parse(const void *xml, size_t n, const char *where, zarr__s3_list *out);
void zarr__s3_list_free(zarr__s3_list *l);

/* The Code and Message of an S3 error document (`n` bytes of untrusted XML) into `code` and `msg`
 * (NUL-terminated, truncated to their sizes, non-printable bytes replaced by '?'); both "" when the body
 * is not one. */
void zarr__s3_error_parse(const void *xml, size_t n, char *code, size_t ncode, char *msg, size_t nmsg);

#endif
