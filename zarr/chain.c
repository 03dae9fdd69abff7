/*
 * chain.c: the codec chain. Parses v3 `codecs` lists and v2 filters/compressor/order into one chain
 * (array->array codecs, one array->bytes codec, bytes->bytes codecs; each a class of
 * codec_registry.c, defined in zarr/codecs/<name>.c), writes them back as v3 or v2 JSON, and
 * encodes/decodes chunks between the memory form (zarr.h "Data types") and stored bytes. What a codec
 * does is its class's; what is here is the order of the steps and the buffers between them.
 *
 * Speed: encode and decode ping-pong between the two scratch buffers of the calling thread's
 * zarr_codec_ctx; the encoded result is handed to the caller by swapping buffers (no final copy);
 * checksum codecs (ZARR__CODEC_CHECKSUM) are appended and verified in place (no copy); the last decode
 * step writes straight into the caller's memory when its size is known (the classes' size hooks say)
 * and the array->bytes step is a plain copy (ZARR__CODEC_PLAIN with nothing to swap).
 */
#include "codec_class.h"
#include "meta_int.h"
#include "zjson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------
 * Data type facts
 * ------------------------------------------------------------------------------------------------ */
static bool
dtype_has_vlen(const zarr_dtype *t)
{
    if (t->kind == ZARR_VLEN_UTF8 || t->kind == ZARR_VLEN_BYTES)
        return true;
    if (t->kind == ZARR_STRUCT)
        for (size_t i = 0; i < t->nfields; i++)
            if (t->fields[i].type && dtype_has_vlen(t->fields[i].type))
                return true;
    return false;
}

/* ------------------------------------------------------------------------------------------------
 * Parsing one codec
 * ------------------------------------------------------------------------------------------------ */
static void
codec_clear(zarr_codec *k)
{
    if (k->cls && k->cls->clear)
        k->cls->clear(k);
}

/* `name`: v3 name, "numcodecs.<id>" or (v2) numcodecs id. `v2style`: numcodecs configuration keys and
 * defaults (v2 and numcodecs.* names) rather than the v3 spec's. */
static int
parse_codec_as(const zarr_chain *c, const zarr__codec_class *as, const char *name, struct json_object *cfg,
               bool v2style, zarr_codec *k)
{
    zarr__codec_parse p = {c, name, name, v2style};
    const char       *why;
    int               rc;

    memset(k, 0, sizeof *k);
    if (as)
        k->cls = as;
    else if (!(k->cls = zarr__codec_lookup(name, &p.v2style))) {
        if ((why = zarr__codec_refusal(name)) != NULL)
            return zarr_error(ZARR_EUNSUPPORTED, "codec '%s' can't be read: %s", name, why);
        return zarr_error(ZARR_EUNSUPPORTED, "codec '%s' is not supported by this build", name);
    }
    if (strncmp(name, "numcodecs.", 10) == 0)
        p.id = name + 10;
    if (cfg && !json_object_is_type(cfg, json_type_object))
        return zarr_error(ZARR_EMETA, "codec '%s': 'configuration' must be an object", name);
    if (k->cls->parse && (rc = k->cls->parse(&p, cfg, k)) != ZARR_OK) {
        codec_clear(k);
        return rc;
    }
    return ZARR_OK;
}

static int
parse_codec(const zarr_chain *c, const char *name, struct json_object *cfg, bool v2style, zarr_codec *k)
{
    return parse_codec_as(c, NULL, name, cfg, v2style, k);
}

/* A v3 codec entry: "name" or {"name":..., "configuration":{...}}. */
static int
parse_v3_entry(const zarr_chain *c, struct json_object *j, zarr_codec *k)
{
    struct json_object *name = NULL, *cfg = NULL;
    if (json_object_is_type(j, json_type_string))
        return parse_codec(c, json_object_get_string(j), NULL, false, k);
    if (!json_object_is_type(j, json_type_object))
        return zarr_error(ZARR_EMETA, "'codecs' entries must be objects or names, got %s",
                          json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    if (!json_object_object_get_ex(j, "name", &name) || !json_object_is_type(name, json_type_string))
        return zarr_error(ZARR_EMETA, "codec entry without a string 'name': %s",
                          json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    json_object_object_get_ex(j, "configuration", &cfg);
    if (cfg && json_object_is_type(cfg, json_type_null))
        cfg = NULL;
    return parse_codec(c, json_object_get_string(name), cfg, false, k);
}

/* A numcodecs configuration {"id": ..., ...}. */
static int
parse_v2_entry(const zarr_chain *c, struct json_object *j, const char *what, zarr_codec *k)
{
    struct json_object *id = NULL;
    if (!json_object_is_type(j, json_type_object))
        return zarr_error(ZARR_EMETA, "'%s' must be an object with an 'id', got %s", what,
                          json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    if (!json_object_object_get_ex(j, "id", &id) || !json_object_is_type(id, json_type_string))
        return zarr_error(ZARR_EMETA, "'%s' has no string 'id': %s", what,
                          json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    return parse_codec(c, json_object_get_string(id), j, true, k);
}

/* ------------------------------------------------------------------------------------------------
 * Chain construction
 * ------------------------------------------------------------------------------------------------ */
static int
chain_init(const zarr_dtype *t, int ndim, zarr_chain **out)
{
    zarr_chain *c;
    *out = NULL;
    if (!t)
        return zarr_error(ZARR_EINVAL, "codec chain: no data type");
    if (ndim < 0 || ndim > ZARR_MAX_DIMS)
        return zarr_error(ZARR_EINVAL, "codec chain: %d dims (want 0..%d)", ndim, ZARR_MAX_DIMS);
    if (t->size == 0)
        return zarr_error(ZARR_EINVAL, "codec chain: data type of size 0");
    if (!(c = calloc(1, sizeof *c)))
        return zarr_error(ZARR_ENOMEM, "out of memory allocating a codec chain");
    c->kind             = t->kind;
    c->esize            = t->size;
    c->ndim             = ndim;
    c->vlen             = dtype_has_vlen(t);
    c->typesize_default = c->vlen || t->size > 255 ? 1 : t->size;
    if (t->kind == ZARR_VLEN_UTF8 && t->size != sizeof(char *)) {
        free(c);
        return zarr_error(ZARR_EINVAL, "codec chain: vlen string elements must be %zu bytes, got %zu",
                          sizeof(char *), t->size);
    }
    if (t->kind == ZARR_VLEN_BYTES && t->size != sizeof(zarr_vlen)) {
        free(c);
        return zarr_error(ZARR_EINVAL, "codec chain: vlen bytes elements must be %zu bytes, got %zu",
                          sizeof(zarr_vlen), t->size);
    }
    *out = c;
    return ZARR_OK;
}

/* Appends a copy of `k` (the chain then owns what k owned). */
static int
chain_push(zarr_chain *c, const zarr_codec *k)
{
    zarr_codec *p = realloc(c->codecs, (c->n + 1) * sizeof *p);
    if (!p)
        return zarr_error(ZARR_ENOMEM, "out of memory growing a codec chain");
    c->codecs       = p;
    c->codecs[c->n] = *k;
    c->n++;
    return ZARR_OK;
}

/* chain_push, and on failure frees what `k` owns. */
static int
push_or_clear(zarr_chain *c, zarr_codec *k)
{
    int rc = chain_push(c, k);
    if (rc != ZARR_OK)
        codec_clear(k);
    return rc;
}

/* Checks the order of stages and the array->bytes codec against the dtype (its class's a2b_finish
 * computes what it needs, the byte-order plan for `bytes`). */
static int
chain_finish(zarr_chain *c, const zarr_dtype *t)
{
    size_t            na2b = 0, na2a = 0;
    zarr__codec_stage last = ZARR__STAGE_A2A;

    c->any_transpose = false;
    for (size_t i = 0; i < c->n; i++) {
        const zarr__codec_class *cls = c->codecs[i].cls;
        if (cls->stage < last)
            return zarr_error(ZARR_EMETA, "codec '%s' can't come after a %s codec", cls->v3name,
                              last == ZARR__STAGE_B2B ? "bytes->bytes" : "array->bytes");
        if (cls->stage == ZARR__STAGE_A2B) {
            if (na2b++)
                return zarr_error(ZARR_EMETA, "more than one array->bytes codec ('%s')", cls->v3name);
            c->ia2b = i;
        }
        if (cls->stage == ZARR__STAGE_A2A) {
            if (++na2a > ZARR__MAX_A2A)
                return zarr_error(ZARR_EUNSUPPORTED, "more than %d array->array codecs", ZARR__MAX_A2A);
            if (!(cls->is_noop && cls->is_noop(&c->codecs[i])))
                c->any_transpose = true;
        }
        last = cls->stage;
    }
    if (!na2b)
        return zarr_error(ZARR_EMETA, "codecs have no array->bytes codec (bytes, vlen-utf8, vlen-bytes)");
    return c->codecs[c->ia2b].cls->a2b_finish(c, &c->codecs[c->ia2b], t);
}

int
zarr_chain_from_v3_json(struct json_object *codecs, const zarr_dtype *t, int ndim, zarr_chain **out)
{
    zarr_chain *c = NULL;
    zarr_codec  k, pend[ZARR__MAX_A2A]; /* array->array deltas waiting for their `bytes` (no owned memory) */
    size_t      npend    = 0;
    bool        a2b_seen = false;
    int         rc;

    if (!out)
        return zarr_error(ZARR_EINVAL, "zarr_chain_from_v3_json: no output");
    ZARR_TRY(chain_init(t, ndim, &c));
    if (!codecs || !json_object_is_type(codecs, json_type_array))
        ZARR_FAIL(ZARR_EMETA, "'codecs' must be a list");
    c->build_dtype = t;
    for (size_t i = 0; i < json_object_array_length(codecs); i++) {
        ZARR_TRY(parse_v3_entry(c, json_object_array_get_idx(codecs, i), &k));
        if (k.cls->v3_as_a2a && !a2b_seen) { /* zarr-python 3's array->array delta */
            ZARR_TRY(k.cls->v3_as_a2a(t, &k));
            if (npend == ZARR__MAX_A2A)
                ZARR_FAIL(ZARR_EUNSUPPORTED, "more than %d array->array codecs", ZARR__MAX_A2A);
            pend[npend++] = k;
            continue;
        }
        if (npend && k.cls->stage == ZARR__STAGE_A2A) {
            codec_clear(&k);
            ZARR_FAIL(ZARR_EUNSUPPORTED,
                      "codec '%s' after 'numcodecs.delta' is not supported (delta has to "
                      "come right before 'bytes')",
                      k.cls->v3name);
        }
        if (npend && k.cls->stage == ZARR__STAGE_A2B && k.cls != &zarr__codec_bytes) {
            codec_clear(&k);
            ZARR_FAIL(ZARR_EUNSUPPORTED,
                      "codec 'numcodecs.delta' before '%s' is not supported (only before "
                      "'bytes')",
                      k.cls->v3name);
        }
        if ((rc = chain_push(c, &k)) != ZARR_OK) {
            codec_clear(&k);
            goto done;
        }
        if (k.cls->stage == ZARR__STAGE_A2B) {
            /* the deltas run right after `bytes`, over the elements in the byte order it wrote */
            char e   = k.cls == &zarr__codec_bytes && zarr__bytes_endian(&k) != '|' ? zarr__bytes_endian(&k)
                                                                                    : ZARR__HOST_ENDIAN;
            a2b_seen = true;
            for (size_t j = 0; j < npend; j++) {
                pend[j].cls->v3_a2a_endian(&pend[j], e);
                ZARR_TRY(chain_push(c, &pend[j]));
            }
            npend = 0;
        }
    }
    if (npend)
        ZARR_FAIL(ZARR_EMETA, "codecs have no array->bytes codec (bytes, vlen-utf8, vlen-bytes)");
    c->build_dtype = NULL;
    ZARR_TRY(chain_finish(c, t));
done:
    if (rc != ZARR_OK) {
        zarr_chain_free(c);
        c = NULL;
    }
    if (out)
        *out = c;
    return rc;
}

static bool
json_is_null(struct json_object *j)
{
    return !j || json_object_is_type(j, json_type_null);
}

int
zarr_chain_from_v2_json(struct json_object *filters, struct json_object *compressor, char order,
                        const zarr_dtype *t, int ndim, zarr_chain **out)
{
    zarr_chain *c = NULL;
    zarr_codec  k;
    int         rc;
    size_t      nf = 0, i0 = 0;

    if (!out)
        return zarr_error(ZARR_EINVAL, "zarr_chain_from_v2_json: no output");
    ZARR_TRY(chain_init(t, ndim, &c));
    if (order != 'C' && order != 'F')
        ZARR_FAIL(ZARR_EMETA, "'order' must be \"C\" or \"F\"");
    if (!json_is_null(filters) && !json_object_is_type(filters, json_type_array))
        ZARR_FAIL(ZARR_EMETA, "'filters' must be a list or null");
    if (!json_is_null(filters))
        nf = json_object_array_length(filters);
    c->build_dtype = t; /* for the codecs whose elements are the array's (bitround) */
    if (order == 'F' && ndim >= 2) {
        int perm[ZARR_MAX_DIMS];
        for (int d = 0; d < ndim; d++)
            perm[d] = ndim - 1 - d;
        zarr__transpose_init(&k, ndim, perm);
        ZARR_TRY(chain_push(c, &k));
    }
    /* The array->bytes step: an object codec from the filters for vlen types, else the dtype order. */
    if (c->vlen) {
        if (nf == 0)
            ZARR_FAIL(ZARR_EMETA, "object data type without a vlen-utf8 / vlen-bytes filter");
        struct json_object      *j = json_object_array_get_idx(filters, 0), *id = NULL;
        const zarr__codec_class *cls = NULL;
        bool                     v2s = true;
        if (json_object_is_type(j, json_type_object) && json_object_object_get_ex(j, "id", &id) &&
            json_object_is_type(id, json_type_string))
            cls = zarr__codec_lookup(json_object_get_string(id), &v2s);
        if (cls && cls->object_form) /* the object codec is this codec's array->bytes form (categorize) */
            ZARR_TRY(parse_codec_as(c, cls->object_form, json_object_get_string(id), j, true, &k));
        else
            ZARR_TRY(parse_v2_entry(c, j, "filters", &k));
        if (k.cls->stage != ZARR__STAGE_A2B) {
            codec_clear(&k);
            ZARR_FAIL(ZARR_EMETA, "object data type: the first filter must be vlen-utf8 or vlen-bytes");
        }
        i0 = 1;
    }
    else {
        zarr__bytes_init(&k, t->endian == '>' ? '>' : '<');
        c->v2_order = true;
    }
    ZARR_TRY(chain_push(c, &k));
    for (size_t i = i0; i < nf; i++) {
        ZARR_TRY(parse_v2_entry(c, json_object_array_get_idx(filters, i), "filters", &k));
        if (k.cls->stage != ZARR__STAGE_B2B) {
            codec_clear(&k);
            ZARR_FAIL(ZARR_EMETA, "filter '%s' can't be used here", k.cls->v3name);
        }
        ZARR_TRY(push_or_clear(c, &k));
    }
    if (!json_is_null(compressor)) {
        ZARR_TRY(parse_v2_entry(c, compressor, "compressor", &k));
        if (k.cls->stage != ZARR__STAGE_B2B) {
            codec_clear(&k);
            ZARR_FAIL(ZARR_EMETA, "compressor '%s' is not a bytes->bytes codec", k.cls->v3name);
        }
        ZARR_TRY(push_or_clear(c, &k));
    }
    c->build_dtype = NULL;
    ZARR_TRY(chain_finish(c, t));
done:
    if (rc != ZARR_OK) {
        zarr_chain_free(c);
        c = NULL;
    }
    if (out)
        *out = c;
    return rc;
}

int
zarr_chain_new_plain(const zarr_dtype *t, int ndim, char endian, zarr_chain **out)
{
    zarr_chain *c = NULL;
    zarr_codec  k;
    int         rc;

    if (!out)
        return zarr_error(ZARR_EINVAL, "zarr_chain_new_plain: no output");
    ZARR_TRY(chain_init(t, ndim, &c));
    memset(&k, 0, sizeof k);
    if (t->kind == ZARR_VLEN_UTF8)
        k.cls = &zarr__codec_vlen_utf8;
    else if (t->kind == ZARR_VLEN_BYTES)
        k.cls = &zarr__codec_vlen_bytes;
    else
        zarr__bytes_init(&k, endian == '>' ? '>' : '<');
    ZARR_TRY(chain_push(c, &k));
    ZARR_TRY(chain_finish(c, t));
done:
    if (rc != ZARR_OK) {
        zarr_chain_free(c);
        c = NULL;
    }
    *out = c;
    return rc;
}

int
zarr_chain_append_json(zarr_chain *c, struct json_object *codec)
{
    zarr_codec k;
    int        rc;
    if (!c)
        return zarr_error(ZARR_EINVAL, "zarr_chain_append_json: no chain");
    if ((rc = parse_v3_entry(c, codec, &k)) != ZARR_OK)
        return rc;
    if (k.cls->stage != ZARR__STAGE_B2B) {
        rc = zarr_error(ZARR_EINVAL, "codec '%s' is not a bytes->bytes codec and can't be appended",
                        k.cls->v3name);
        codec_clear(&k);
        return rc;
    }
    return push_or_clear(c, &k);
}

void
zarr_chain_free(zarr_chain *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        codec_clear(&c->codecs[i]);
    free(c->fill);
    free(c->codecs);
    free(c->segs);
    free(c);
}

zarr_chain *
zarr_chain_copy(const zarr_chain *c)
{
    zarr_chain *d;
    if (!c)
        return NULL;
    if (!(d = malloc(sizeof *d)))
        goto nomem;
    *d        = *c;
    d->codecs = NULL;
    d->segs   = NULL;
    d->fill   = NULL;
    d->n      = 0;
    if (c->n && !(d->codecs = malloc(c->n * sizeof *d->codecs)))
        goto nomem;
    if (c->nseg && !(d->segs = malloc(c->nseg * sizeof *d->segs)))
        goto nomem;
    if (c->fill && !(d->fill = malloc(c->esize)))
        goto nomem;
    if (c->fill)
        memcpy(d->fill, c->fill, c->esize);
    for (size_t i = 0; i < c->n; i++) { /* d->n counts the codecs d owns, for zarr_chain_free */
        d->codecs[i] = c->codecs[i];
        if (c->codecs[i].cls->copy && c->codecs[i].cls->copy(&d->codecs[i], &c->codecs[i]) != ZARR_OK)
            goto nomem;
        d->n++;
    }
    if (c->nseg)
        memcpy(d->segs, c->segs, c->nseg * sizeof *d->segs);
    return d;
nomem:
    zarr_chain_free(d);
    zarr_error(ZARR_ENOMEM, "out of memory copying a codec chain");
    return NULL;
}

bool
zarr_chain_is_identity(const zarr_chain *c)
{
    return c && !c->vlen && !c->any_transpose && !c->swap && c->ia2b + 1 == c->n &&
           (c->codecs[c->ia2b].cls->flags & ZARR__CODEC_PLAIN);
}

size_t
zarr_chain_count(const zarr_chain *c)
{
    return c ? c->n : 0;
}

char
zarr__chain_v2_order(const zarr_chain *c)
{
    if (!c || c->ia2b != 1 || !zarr__transpose_is_reversal(&c->codecs[0], c->ndim))
        return 'C';
    return 'F';
}

int
zarr__chain_set_fill(zarr_chain *c, const void *fill)
{
    int rc;
    if (!c)
        return ZARR_OK;
    for (size_t i = 0; i < c->n; i++)
        if (c->codecs[i].cls->set_fill && (rc = c->codecs[i].cls->set_fill(&c->codecs[i], fill)) != ZARR_OK)
            return rc;
    if (!fill || c->vlen) {
        free(c->fill);
        c->fill = NULL;
        return ZARR_OK;
    }
    if (c->fill && memcmp(c->fill, fill, c->esize) == 0)
        return ZARR_OK; /* unchanged: no write, so readers of the chain never race with this */
    if (!c->fill && !(c->fill = malloc(c->esize)))
        return zarr_error(ZARR_ENOMEM, "out of memory");
    memcpy(c->fill, fill, c->esize);
    return ZARR_OK;
}

char
zarr__chain_endian(const zarr_chain *c)
{
    if (!c || c->codecs[c->ia2b].cls != &zarr__codec_bytes || !c->multibyte)
        return '|';
    return zarr__bytes_endian(&c->codecs[c->ia2b]) == '>' ? '>' : '<';
}

/* ------------------------------------------------------------------------------------------------
 * Writing JSON
 * ------------------------------------------------------------------------------------------------ */
static int
codec_v3_json(const zarr_chain *c, const zarr_codec *k, struct json_object **out)
{
    struct json_object *o = json_object_new_object(), *cfg = NULL;
    int                 rc;
    *out = NULL;
    if (!o)
        return zarr_error(ZARR_ENOMEM, "out of memory building codec JSON");
    ZARR_TRY(zarr__codec_json_add(o, "name", json_object_new_string(k->cls->v3name)));
    if (!(k->cls->flags & ZARR__CODEC_V3_NO_CONFIG)) {
        cfg = json_object_new_object();
        ZARR_TRY(zarr__codec_json_add(o, "configuration", cfg));
        if (k->cls->to_json)
            ZARR_TRY(k->cls->to_json(c, k, false, cfg));
    }
    *out = o;
    o    = NULL;
done:
    json_object_put(o);
    return rc;
}

static int
codec_v2_json(const zarr_chain *c, const zarr_codec *k, struct json_object **out)
{
    struct json_object *o = json_object_new_object();
    int                 rc;
    *out = NULL;
    if (!o)
        return zarr_error(ZARR_ENOMEM, "out of memory building codec JSON");
    if (!k->cls->v2id)
        ZARR_FAIL(ZARR_EUNSUPPORTED, "codec '%s' can't be written as zarr v2 metadata", k->cls->v3name);
    ZARR_TRY(zarr__codec_json_add(o, "id", json_object_new_string(k->cls->v2id)));
    if (k->cls->to_json)
        ZARR_TRY(k->cls->to_json(c, k, true, o));
    *out = o;
    o    = NULL;
done:
    json_object_put(o);
    return rc;
}

/* The stored index of the codec at position `pos` of the v3 `codecs` list: array->array deltas are
 * stored right after the array->bytes codec but written before it. */
static size_t
v3_position(const zarr_chain *c, size_t pos)
{
    size_t na = 0;
    while (c->ia2b + 1 + na < c->n && c->codecs[c->ia2b + 1 + na].cls->v3_before_a2b &&
           c->codecs[c->ia2b + 1 + na].cls->v3_before_a2b(&c->codecs[c->ia2b + 1 + na]))
        na++;
    if (pos < c->ia2b || pos > c->ia2b + na)
        return pos;
    return pos < c->ia2b + na ? pos + 1 : c->ia2b;
}

int
zarr_chain_codec_json(const zarr_chain *c, size_t i, struct json_object **out)
{
    if (!c || !out || i >= c->n)
        return zarr_error(ZARR_EINVAL, "zarr_chain_codec_json: no codec %zu", i);
    return codec_v3_json(c, &c->codecs[v3_position(c, i)], out);
}

const char *
zarr_chain_codec_name(const zarr_chain *c, size_t i)
{
    return c && i < c->n ? c->codecs[v3_position(c, i)].cls->v3name : NULL;
}

int
zarr_chain_to_v3_json(const zarr_chain *c, struct json_object **out)
{
    struct json_object *a  = NULL, *o;
    int                 rc = ZARR_OK;
    if (!c || !out)
        return zarr_error(ZARR_EINVAL, "zarr_chain_to_v3_json: no chain");
    *out = NULL;
    if (!(a = json_object_new_array()))
        return zarr_error(ZARR_ENOMEM, "out of memory building codec JSON");
    for (size_t pos = 0; pos < c->n; pos++) {
        size_t i = v3_position(c, pos);
        ZARR_TRY(codec_v3_json(c, &c->codecs[i], &o));
        if (json_object_array_add(a, o) != 0) {
            json_object_put(o);
            ZARR_FAIL(ZARR_ENOMEM, "out of memory building codec JSON");
        }
    }
    *out = a;
    a    = NULL;
done:
    json_object_put(a);
    return rc;
}

/* zarr_chain_to_v3_json's list printed straight into `b` as the dumper prints it at level `lv`: the
 * list and each codec's object written as text, only a codec's configuration made as an object (its
 * class's to_json) and printed (bench/README.md "2026-12-07 evening: creates"). */
int
zarr__chain_v3_text(const zarr_chain *c, int lv, zarr_buf *b)
{
    struct json_object *cfg = NULL;
    int                 rc  = ZARR_OK;
    if (!c)
        return zarr_error(ZARR_EINVAL, "zarr__chain_v3_text: no chain");
    if (c->n == 0)
        return zarr__json_w_raw(b, "[]");
    ZARR_TRY(zarr__json_w_raw(b, "["));
    for (size_t pos = 0; pos < c->n; pos++) {
        const zarr_codec *k = &c->codecs[v3_position(c, pos)];
        ZARR_TRY(zarr__json_w_item(b, lv, pos == 0));
        ZARR_TRY(zarr__json_w_raw(b, "{"));
        ZARR_TRY(zarr__json_w_key(b, lv + 1, true, "name"));
        ZARR_TRY(zarr__json_w_string(b, k->cls->v3name));
        if (!(k->cls->flags & ZARR__CODEC_V3_NO_CONFIG)) {
            if (!(cfg = json_object_new_object()))
                ZARR_FAIL(ZARR_ENOMEM, "out of memory building codec JSON");
            if (k->cls->to_json)
                ZARR_TRY(k->cls->to_json(c, k, false, cfg));
            ZARR_TRY(zarr__json_w_key(b, lv + 1, false, "configuration"));
            ZARR_TRY(zarr__json_w_value(b, cfg, lv + 2));
            json_object_put(cfg);
            cfg = NULL;
        }
        ZARR_TRY(zarr__json_w_close(b, lv + 1, '}'));
    }
    ZARR_TRY(zarr__json_w_close(b, lv, ']'));
done:
    json_object_put(cfg);
    return rc;
}

/* v2: the transpose of order F is left out (the metadata writes "order": "F"; see
 * zarr__chain_v2_order); the bytes codec is left out (its byte order is the dtype's, see
 * zarr__chain_endian); a vlen codec becomes the first filter; the last bytes->bytes codec becomes the
 * compressor when it is a compressor, the others are filters. Other transposes can't be written. */
int
zarr_chain_to_v2_json(const zarr_chain *c, struct json_object **filters, struct json_object **compressor)
{
    struct json_object *f = NULL, *comp = NULL, *o;
    int                 rc = ZARR_OK;
    size_t              end;

    if (!c || !filters || !compressor)
        return zarr_error(ZARR_EINVAL, "zarr_chain_to_v2_json: no chain");
    *filters = *compressor = NULL;
    if (c->codecs[c->ia2b].cls->flags & ZARR__CODEC_SHARDING)
        return zarr_error(ZARR_EUNSUPPORTED, "sharding can't be written as zarr v2 metadata");
    if (c->any_transpose && zarr__chain_v2_order(c) != 'F')
        return zarr_error(ZARR_EUNSUPPORTED,
                          "this transpose can't be written as zarr v2 metadata (only order "
                          "\"F\", a full reversal of the dims, can)");
    end = c->n;
    if (c->n > c->ia2b + 1 && (c->codecs[c->n - 1].cls->flags & ZARR__CODEC_COMPRESSOR)) {
        ZARR_TRY(codec_v2_json(c, &c->codecs[c->n - 1], &comp));
        end = c->n - 1;
    }
    for (size_t i = c->ia2b; i < end; i++) {
        if (c->codecs[i].cls == &zarr__codec_bytes)
            continue;
        if (!f && !(f = json_object_new_array()))
            ZARR_FAIL(ZARR_ENOMEM, "out of memory building codec JSON");
        ZARR_TRY(codec_v2_json(c, &c->codecs[i], &o));
        if (json_object_array_add(f, o) != 0) {
            json_object_put(o);
            ZARR_FAIL(ZARR_ENOMEM, "out of memory building codec JSON");
        }
    }
    *filters    = f; /* NULL is json-c's null */
    *compressor = comp;
    f = comp = NULL;
done:
    json_object_put(f);
    json_object_put(comp);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * Encode / decode
 * ------------------------------------------------------------------------------------------------ */
static int
chunk_size(const zarr_chain *c, const uint64_t *shape, size_t *nelem, size_t *nbytes)
{
    uint64_t ne = 1, nb;
    if (c->ndim > 0 && !shape)
        return zarr_error(ZARR_EINVAL, "codec chain: no chunk shape for %d dims", c->ndim);
    for (int d = 0; d < c->ndim; d++)
        if (!zarr__mul_ok(ne, shape[d], &ne))
            return zarr_error(ZARR_EOVERFLOW, "chunk element count overflows");
    if (!zarr__mul_ok(ne, c->esize, &nb) || nb > SIZE_MAX / 2)
        return zarr_error(ZARR_EOVERFLOW, "chunk byte size overflows");
    *nelem  = (size_t)ne;
    *nbytes = (size_t)nb;
    return ZARR_OK;
}

static inline bool
codec_noop(const zarr_codec *k)
{
    return k->cls->is_noop && k->cls->is_noop(k);
}

/* The checksum codecs' name in messages: their numcodecs id ("crc32c", "fletcher32"). */
static const char *
checksum_name(const zarr__codec_class *cls)
{
    return cls->v2id ? cls->v2id : cls->v3name;
}

int
zarr_chain_encode(const zarr_chain *c, zarr_codec_ctx *ctx, const void *mem, const uint64_t *shape,
                  zarr_buf *out)
{
    zarr_codec_ctx   *tmp = NULL;
    const uint8_t    *cur = mem;
    const zarr_codec *a2b;
    size_t            curn, nelem, nbytes;
    int               where = -1; /* -1: cur is the caller's memory; 0/1: ctx->scratch[where] */
    int               rc;
    uint64_t          shp[ZARR_MAX_DIMS];

    if (!c || !out || (!mem && c->esize))
        return zarr_error(ZARR_EINVAL, "zarr_chain_encode: missing argument");
    ZARR_TRY(chunk_size(c, shape, &nelem, &nbytes));
    if (!ctx && !(ctx = tmp = zarr_codec_ctx_new()))
        return ZARR_ENOMEM;
    curn = nbytes;
    for (int d = 0; d < c->ndim; d++)
        shp[d] = shape[d];
#define OTHER (where == 0 ? 1 : 0)
    for (size_t i = 0; i < c->ia2b; i++) {
        const zarr_codec *k = &c->codecs[i];
        zarr_buf         *b = &ctx->scratch[OTHER];
        uint64_t          nshp[ZARR_MAX_DIMS];
        if (codec_noop(k))
            continue;
        ZARR_TRY(zarr_buf_resize(b, nbytes));
        k->cls->a2a_encode(k, c->esize, shp, cur, b->data);
        k->cls->a2a_shape(k, c->ndim, shp, nshp);
        memcpy(shp, nshp, sizeof shp);
        cur   = b->data;
        where = OTHER;
    }
    a2b = &c->codecs[c->ia2b];
    if (!(a2b->cls->flags & ZARR__CODEC_PLAIN) || c->swap) { /* else the elements are the bytes */
        zarr_buf *b = &ctx->scratch[OTHER];
        ZARR_TRY(a2b->cls->a2b_encode(c, a2b, ctx, cur, nelem, shp, b));
        cur   = b->data;
        curn  = b->size;
        where = OTHER;
    }
    ctx->chunk_ndim  = c->ndim; /* for ZARR__CODEC_SHAPED codecs */
    ctx->chunk_shape = shp;
    for (size_t i = c->ia2b + 1; i < c->n; i++) {
        const zarr_codec *k = &c->codecs[i];
        if (codec_noop(k))
            continue;
        if (k->cls->flags & ZARR__CODEC_CHECKSUM) {
            uint32_t sum = k->cls->checksum(cur, curn);
            uint8_t  le[4];
            zarr__store_le32(le, sum);
            if (where >= 0 && !(k->cls->flags & ZARR__CODEC_CHECKSUM_FIRST)) { /* append in place */
                zarr_buf *b = &ctx->scratch[where];
                b->size     = curn;
                ZARR_TRY(zarr_buf_append(b, le, 4));
            }
            else {
                zarr_buf *b   = &ctx->scratch[OTHER];
                bool      fst = k->cls->flags & ZARR__CODEC_CHECKSUM_FIRST;
                if (curn > SIZE_MAX - 4)
                    ZARR_FAIL(ZARR_EOVERFLOW, "%s: size overflows", checksum_name(k->cls));
                ZARR_TRY(zarr_buf_resize(b, curn + 4));
                if (curn)
                    memcpy(b->data + (fst ? 4 : 0), cur, curn);
                memcpy(b->data + (fst ? 0 : curn), le, 4);
                where = OTHER;
            }
            cur  = ctx->scratch[where].data;
            curn = ctx->scratch[where].size;
            continue;
        }
        zarr_buf *b = &ctx->scratch[OTHER];
        ZARR_TRY(k->cls->encode(k, ctx, cur, curn, b));
        cur   = b->data;
        curn  = b->size;
        where = OTHER;
    }
#undef OTHER
    ctx->chunk_shape = NULL;
    if (where >= 0) {
        /* hand the result over by swapping buffers: out's old memory becomes scratch */
        zarr_buf t          = *out;
        *out                = ctx->scratch[where];
        out->size           = curn;
        t.size              = 0;
        ctx->scratch[where] = t;
    }
    else {
        out->size = 0;
        ZARR_TRY(zarr_buf_append(out, cur, curn));
    }
done:
    if (ctx)
        ctx->chunk_shape = NULL;
    zarr_codec_ctx_free(tmp);
    return rc;
}

/* exact[i] / bound[i], i = 0..nb2b: the size entering bytes->bytes codec i on encode, exactly
 * (ZARR__SIZE_UNKNOWN when no codec fixes it) and at most; `sized`: the array->bytes output is `nbytes`. */
static void
chain_b2b_sizes(const zarr_chain *c, bool sized, size_t nbytes, size_t nb2b, size_t *exact, size_t *bound)
{
    exact[0] = sized ? nbytes : ZARR__SIZE_UNKNOWN;
    bound[0] = sized ? nbytes : ZARR__DECODE_LIMIT;
    for (size_t i = 0; i < nb2b; i++) {
        const zarr_codec *k = &c->codecs[c->ia2b + 1 + i];
        exact[i + 1]        = k->cls->encoded_size ? k->cls->encoded_size(k, exact[i]) : ZARR__SIZE_UNKNOWN;
        bound[i + 1] =
            k->cls->encoded_bound ? k->cls->encoded_bound(k, bound[i]) : zarr__codec_grow_bound(bound[i]);
    }
}

/* Undoes the chain's `nb2b` bytes->bytes codecs, last first: checksums verified and dropped in place, the
 * others decoded into the ctx's scratch buffers in turn (to the exact size when known, else under the
 * bound), the first one straight into `dmem` when `direct`. *cur / *curn: the bytes, in and out; *wherep:
 * where they are (-1: the caller's input, -2: dmem, 0/1: ctx->scratch[i]). */
static int
chain_decode_b2b(const zarr_chain *c, zarr_codec_ctx *ctx, size_t nb2b, const size_t *exact,
                 const size_t *bound, bool direct, uint8_t *dmem, const uint8_t **curp, size_t *curnp,
                 int *wherep)
{
    const uint8_t *cur   = *curp;
    size_t         curn  = *curnp;
    int            where = *wherep;
    int            rc    = ZARR_OK;
#define OTHER (where == 0 ? 1 : 0)
    for (size_t ii = nb2b; ii-- > 0;) {
        const zarr_codec *k = &c->codecs[c->ia2b + 1 + ii];
        if (k->cls->flags & ZARR__CODEC_CHECKSUM) {
            const char *name = checksum_name(k->cls);
            uint32_t    stored, sum;
            if (curn < 4)
                ZARR_FAIL(ZARR_ECODEC, "%s: data is truncated (%zu bytes, the checksum alone is 4)", name,
                          curn);
            curn -= 4;
            if (k->cls->flags & ZARR__CODEC_CHECKSUM_FIRST) {
                stored = zarr__load_le32(cur);
                cur += 4;
            }
            else
                stored = zarr__load_le32(cur + curn);
            sum = k->cls->checksum(cur, curn);
            if (stored != sum)
                ZARR_FAIL(ZARR_ECODEC,
                          "%s: checksum mismatch (stored 0x%08x, computed 0x%08x): data is corrupt", name,
                          stored, sum);
            continue;
        }
        if (codec_noop(k))
            continue;
        if (exact[ii] != ZARR__SIZE_UNKNOWN) {
            uint8_t *dst;
            if (ii == 0 && direct) {
                dst   = dmem;
                where = -2;
            }
            else {
                zarr_buf *b = &ctx->scratch[OTHER];
                ZARR_TRY(zarr_buf_resize(b, exact[ii]));
                dst   = b->data;
                where = OTHER;
            }
            ZARR_TRY(k->cls->decode(k, ctx, cur, curn, dst, exact[ii]));
            cur  = dst;
            curn = exact[ii];
        }
        else {
            zarr_buf *b = &ctx->scratch[OTHER];
            ZARR_TRY(k->cls->decode_buf(k, ctx, cur, curn,
                                        bound[ii] == ZARR__SIZE_UNKNOWN ? ZARR__DECODE_LIMIT : bound[ii], b));
            cur   = b->data;
            curn  = b->size;
            where = OTHER;
        }
    }
#undef OTHER
    *curp   = cur;
    *curnp  = curn;
    *wherep = where;
done:
    return rc;
}

/* Undoes the array->bytes codec on the `curn` bytes at `cur` (in ctx->scratch[where] or the caller's
 * input), then the array->array codecs, last first, ending in `dmem`. While vlen payloads live in a
 * scratch buffer, *vlen_live is set and *vlen_where names it, for the caller to clear on error. */
static int
chain_decode_array(const zarr_chain *c, zarr_codec_ctx *ctx, const uint64_t *shape, const uint8_t *cur,
                   size_t curn, int where, uint8_t *dmem, size_t nelem, size_t nbytes, bool *vlen_live,
                   size_t *vlen_where)
{
    const zarr_codec *a2b = &c->codecs[c->ia2b];
    /* shapes[i]: the shape entering array->array codec i on encode (shapes[ia2b]: the array->bytes
     * codec's) */
    uint64_t shapes[ZARR__MAX_A2A + 1][ZARR_MAX_DIMS];
    uint8_t *dst         = dmem;
    size_t   last_active = 0;
    int      rc          = ZARR_OK;
#define OTHER (where == 0 ? 1 : 0)
    for (int d = 0; d < c->ndim; d++)
        shapes[0][d] = shape[d];
    for (size_t i = 0; i < c->ia2b; i++) {
        if (codec_noop(&c->codecs[i]))
            memcpy(shapes[i + 1], shapes[i], sizeof(uint64_t) * (size_t)c->ndim);
        else
            c->codecs[i].cls->a2a_shape(&c->codecs[i], c->ndim, shapes[i], shapes[i + 1]);
    }

    /* array->bytes step into mem, or into scratch when array->array codecs follow */
    if (c->any_transpose) {
        zarr_buf *b = &ctx->scratch[OTHER];
        ZARR_TRY(zarr_buf_resize(b, nbytes));
        dst = b->data;
    }
    ZARR_TRY(a2b->cls->a2b_decode(c, a2b, ctx, cur, curn, dst, nelem, shapes[c->ia2b]));
    *vlen_live = c->vlen && c->any_transpose;
    if (c->any_transpose) {
        where       = OTHER;
        *vlen_where = (size_t)where;
    }
    cur = dst;

    /* array->array codecs, last first */
    if (c->any_transpose) {
        for (size_t i = 0; i < c->ia2b; i++)
            if (!codec_noop(&c->codecs[i])) {
                last_active = i;
                break;
            }
        for (size_t i = c->ia2b; i-- > 0;) {
            const zarr_codec *k = &c->codecs[i];
            if (codec_noop(k))
                continue;
            if (i == last_active)
                dst = dmem;
            else {
                zarr_buf *b = &ctx->scratch[OTHER];
                ZARR_TRY(zarr_buf_resize(b, nbytes));
                dst         = b->data;
                where       = OTHER;
                *vlen_where = (size_t)where;
            }
            k->cls->a2a_decode(k, c->esize, shapes[i], cur, dst);
            cur = dst;
        }
        *vlen_live = false;
    }
#undef OTHER
done:
    return rc;
}

int
zarr_chain_decode(const zarr_chain *c, zarr_codec_ctx *ctx, const void *enc, size_t n, void *mem,
                  const uint64_t *shape)
{
    zarr_codec_ctx   *tmp  = NULL;
    const uint8_t    *cur  = enc;
    uint8_t          *dmem = mem;
    const zarr_codec *a2b;
    size_t            curn = n, nelem = 0, nbytes = 0, nb2b;
    int               where = -1; /* -1: cur is the caller's input; -2: mem; 0/1: ctx->scratch[where] */
    int               rc;
    bool              direct, sized;
    size_t            exact[64], bound[64];
    bool              vlen_live  = false; /* vlen payloads allocated in a scratch buffer */
    size_t            vlen_where = 0;

    if (!c || !mem || (!enc && n))
        return zarr_error(ZARR_EINVAL, "zarr_chain_decode: missing argument");
    ZARR_TRY(chunk_size(c, shape, &nelem, &nbytes));
    nb2b = c->n - c->ia2b - 1;
    if (nb2b >= 64)
        return zarr_error(ZARR_EUNSUPPORTED, "codec chain: more than 63 bytes->bytes codecs");
    if (!ctx && !(ctx = tmp = zarr_codec_ctx_new()))
        return ZARR_ENOMEM;
    a2b    = &c->codecs[c->ia2b];
    sized  = !c->vlen && !(a2b->cls->flags & ZARR__CODEC_SHARDING); /* the array->bytes output size */
    direct = !c->vlen && !c->swap && !c->any_transpose && (a2b->cls->flags & ZARR__CODEC_PLAIN);

    chain_b2b_sizes(c, sized, nbytes, nb2b, exact, bound);
    ZARR_TRY(chain_decode_b2b(c, ctx, nb2b, exact, bound, direct, dmem, &cur, &curn, &where));
    if (direct) {
        if (curn != nbytes)
            ZARR_FAIL(ZARR_ECODEC, "chunk decodes to %zu bytes, expected %zu", curn, nbytes);
        if (cur != dmem && nbytes)
            memmove(dmem, cur, nbytes);
        goto done;
    }
    ZARR_TRY(
        chain_decode_array(c, ctx, shape, cur, curn, where, dmem, nelem, nbytes, &vlen_live, &vlen_where));
done:
    if (rc != ZARR_OK && vlen_live)
        zarr__vlen_clear(c, ctx->scratch[vlen_where].data, nelem);
    if (rc != ZARR_OK && c->vlen && nbytes)
        memset(mem, 0, nbytes); /* nothing is owned there: clearing the elements stays safe */
    zarr_codec_ctx_free(tmp);
    return rc;
}
