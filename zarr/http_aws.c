/*
 * http_aws.c: the S3 store's account settings (http_aws.h): credentials, region, endpoint and
 * addressing style from the standard AWS environment variables and the shared credentials and config
 * files (INI: "[section]", "key = value", nested "s3 =" blocks of indented lines, '#' and ';'
 * comments). Files are read with a size bound; a secret is never copied into a message and is wiped
 * when the settings are freed.
 */
#define _GNU_SOURCE
#include "http_aws.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The values one profile of one file gives (owned strings, NULL when absent). */
typedef struct ini_vals {
    char *key_id, *secret, *token, *region, *endpoint, *addressing;
    bool  found; /* the section was there */
} ini_vals;

static void
wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

static void
ini_vals_free(ini_vals *v)
{
    wipe_free(v->key_id);
    wipe_free(v->secret);
    wipe_free(v->token);
    free(v->region);
    free(v->endpoint);
    free(v->addressing);
    memset(v, 0, sizeof *v);
}

static char *
trim(char *s)
{
    char *e;
    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
        *--e = '\0';
    return s;
}

static int
set_val(char **dst, const char *v)
{
    char *c = strdup(v);
    if (!c)
        return ZARR_ENOMEM;
    wipe_free(*dst);
    *dst = c;
    return ZARR_OK;
}

/* Reads section `section` of the INI file `path` into `v`. A missing file is no error. */
static int
ini_read(const char *path, const char *section, ini_vals *v)
{
    FILE  *fp   = fopen(path, "re");
    char  *line = NULL, *p;
    size_t cap = 0, total = 0;
    bool   in = false, in_s3 = false;
    int    rc = ZARR_OK;

    if (!fp)
        return ZARR_OK;
    while (getline(&line, &cap, fp) > 0) {
        bool indented = line[0] == ' ' || line[0] == '\t';
        total += strlen(line);
        if (total > (1u << 20)) {
            rc = zarr_error(ZARR_EINVAL, "AWS file '%s' is larger than 1 MiB", path);
            break;
        }
        p = trim(line);
        if (!*p || *p == '#' || *p == ';')
            continue;
        if (*p == '[') {
            char *e = strchr(p, ']');
            if (!e)
                continue;
            *e       = '\0';
            in       = strcmp(trim(p + 1), section) == 0;
            in_s3    = false;
            v->found = v->found || in;
            continue;
        }
        if (!in || !(p = strchr(line, '=')))
            continue;
        *p      = '\0';
        char *k = trim(line), *val = trim(p + 1);
        if (!indented)
            in_s3 = false;
        if (!indented && strcmp(k, "s3") == 0 && !*val) {
            in_s3 = true;
            continue;
        }
        if (indented && !in_s3)
            continue;
        if (in_s3 && strcmp(k, "endpoint_url") != 0 && strcmp(k, "addressing_style") != 0)
            continue;
        if (strcmp(k, "aws_access_key_id") == 0)
            rc = set_val(&v->key_id, val);
        else if (strcmp(k, "aws_secret_access_key") == 0)
            rc = set_val(&v->secret, val);
        else if (strcmp(k, "aws_session_token") == 0)
            rc = set_val(&v->token, val);
        else if (strcmp(k, "region") == 0)
            rc = set_val(&v->region, val);
        else if (strcmp(k, "endpoint_url") == 0)
            rc = set_val(&v->endpoint, val);
        else if (strcmp(k, "addressing_style") == 0)
            rc = set_val(&v->addressing, val);
        if (rc != ZARR_OK) {
            rc = zarr_error(ZARR_ENOMEM, "out of memory reading '%s'", path);
            break;
        }
    }
    if (line) {
        explicit_bzero(line, cap);
        free(line);
    }
    fclose(fp);
    return rc;
}

static const char *
env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* "<HOME>/.aws/<file>" or the variable's value (malloc'ed; NULL when neither is known). */
static char *
aws_file(const char *var, const char *file)
{
    const char *v = env(var), *home = env("HOME");
    char       *p;
    if (v)
        return strdup(v);
    if (!home || asprintf(&p, "%s/.aws/%s", home, file) < 0)
        return NULL;
    return p;
}

static int
check_endpoint(const char *ep, const char *from, char **out)
{
    size_t n;
    char  *c;
    if (strncasecmp(ep, "http://", 7) != 0 && strncasecmp(ep, "https://", 8) != 0)
        return zarr_error(ZARR_EINVAL, "the S3 endpoint '%s' (%s) is not an http:// or https:// URL", ep,
                          from);
    for (const char *p = ep; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == '?' || *p == '#' || *p == '@' || *p == 0x7f)
            return zarr_error(ZARR_EINVAL,
                              "the S3 endpoint (%s) may not hold spaces, a query, a fragment or a user name",
                              from);
    if (!(c = strdup(ep)))
        return ZARR_ENOMEM;
    for (n = strlen(c); n > 8 && c[n - 1] == '/'; n--)
        c[n - 1] = '\0';
    *out = c;
    return ZARR_OK;
}

int
zarr__aws_load(zarr__aws *a)
{
    const char *profile   = env("AWS_PROFILE"), *ep;
    char       *cred_path = aws_file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
    char       *conf_path = aws_file("AWS_CONFIG_FILE", "config");
    char        conf_section[300];
    ini_vals    cred = {0}, conf = {0};
    const char *addr;
    int         rc = ZARR_OK;

    if (!profile)
        profile = env("AWS_DEFAULT_PROFILE");
    if (strlen(profile ? profile : "") > 256)
        ZARR_FAIL(ZARR_EINVAL, "AWS_PROFILE is longer than 256 characters");
    if (profile && strcmp(profile, "default"))
        snprintf(conf_section, sizeof conf_section, "profile %s", profile);
    else
        snprintf(conf_section, sizeof conf_section, "default");
    if (cred_path)
        ZARR_TRY(ini_read(cred_path, profile ? profile : "default", &cred));
    if (conf_path)
        ZARR_TRY(ini_read(conf_path, conf_section, &conf));
    if (profile && !cred.found && !conf.found)
        ZARR_FAIL(ZARR_EINVAL, "AWS profile '%s' (AWS_PROFILE) is in neither '%s' nor '%s'", profile,
                  cred_path ? cred_path : "(no credentials file)",
                  conf_path ? conf_path : "(no config file)");

    /* credentials: the environment, the credentials file, the config file */
    if (env("AWS_ACCESS_KEY_ID") && env("AWS_SECRET_ACCESS_KEY")) {
        if (!(a->key_id = strdup(env("AWS_ACCESS_KEY_ID"))) ||
            !(a->secret = strdup(env("AWS_SECRET_ACCESS_KEY"))) ||
            (env("AWS_SESSION_TOKEN") && !(a->token = strdup(env("AWS_SESSION_TOKEN")))))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory reading AWS credentials");
        snprintf(a->cred_source, sizeof a->cred_source, "AWS_ACCESS_KEY_ID from the environment");
    }
    else {
        ini_vals *src = cred.key_id && cred.secret ? &cred : conf.key_id && conf.secret ? &conf : NULL;
        if (src) {
            a->key_id   = src->key_id;
            a->secret   = src->secret;
            a->token    = src->token;
            src->key_id = src->secret = src->token = NULL;
            snprintf(a->cred_source, sizeof a->cred_source, "profile '%.40s' of '%.100s'",
                     profile ? profile : "default", src == &cred ? cred_path : conf_path);
        }
        else
            snprintf(a->cred_source, sizeof a->cred_source, "no credentials (anonymous requests)");
    }
    if (a->key_id && (!*a->key_id || strchr(a->key_id, ':')))
        ZARR_FAIL(ZARR_EINVAL, "the AWS access key id (%s) is empty or holds a ':'", a->cred_source);

    /* region */
    if (!(a->region = strdup(env("AWS_REGION")           ? env("AWS_REGION")
                             : env("AWS_DEFAULT_REGION") ? env("AWS_DEFAULT_REGION")
                             : conf.region               ? conf.region
                                                         : "us-east-1")))
        ZARR_FAIL(ZARR_ENOMEM, "out of memory reading AWS settings");
    for (const char *p = a->region; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-')
            ZARR_FAIL(ZARR_EINVAL, "the AWS region '%s' holds a character other than letters, digits and '-'",
                      a->region);

    /* endpoint */
    if ((ep = env("AWS_ENDPOINT_URL_S3")))
        ZARR_TRY(check_endpoint(ep, "AWS_ENDPOINT_URL_S3", &a->endpoint));
    else if ((ep = env("AWS_ENDPOINT_URL")))
        ZARR_TRY(check_endpoint(ep, "AWS_ENDPOINT_URL", &a->endpoint));
    else if (conf.endpoint)
        ZARR_TRY(check_endpoint(conf.endpoint, "endpoint_url of the AWS config file", &a->endpoint));

    /* addressing */
    addr = env("H5ZARR_S3_ADDRESSING") ? env("H5ZARR_S3_ADDRESSING") : conf.addressing;
    if (!addr || !strcasecmp(addr, "auto"))
        a->addressing = ZARR__AWS_ADDR_AUTO;
    else if (!strcasecmp(addr, "path"))
        a->addressing = ZARR__AWS_ADDR_PATH;
    else if (!strcasecmp(addr, "virtual"))
        a->addressing = ZARR__AWS_ADDR_VIRTUAL;
    else
        ZARR_FAIL(ZARR_EINVAL, "S3 addressing style '%s': expected path, virtual or auto", addr);
done:
    ini_vals_free(&cred);
    ini_vals_free(&conf);
    free(cred_path);
    free(conf_path);
    if (rc != ZARR_OK)
        zarr__aws_fini(a);
    return rc;
}

void
zarr__aws_fini(zarr__aws *a)
{
    if (!a)
        return;
    wipe_free(a->key_id);
    wipe_free(a->secret);
    wipe_free(a->token);
    free(a->region);
    free(a->endpoint);
    memset(a, 0, sizeof *a);
}
