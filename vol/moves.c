/*
 * moves.c: the move log of one open file and the token it gives each path. Every H5Lmove of a hard link
 * (and every unlink of an open object, which moves it to the anonymous area) is recorded here, oldest
 * first; h5zv_token_of reads the log backwards to find the path an object had when this open first met
 * it, so a moved object keeps its identity and a new object at an old name gets another one.
 *
 * The log is indexed by the first component of each move's two ends: a path is affected only by the
 * moves that share its first component, so resolving a path visits those moves alone (netCDF renames a
 * variable through a temporary name, and a program renaming thousands of variables would otherwise make
 * each token cost a walk over thousands of moves). Depends only on the file struct (h5zv.h).
 */
#include "h5zv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

struct move {
    char  *from, *to;
    size_t nfrom, nto;
};

/* The moves (ascending log indices) whose `from` or `to` starts with one first component. */
struct comp {
    char    *name; /* NULL: free slot */
    size_t   len;
    uint64_t hash;
    size_t  *idx, n, cap;
};

struct h5zv_moves {
    struct move *v;
    size_t       n, cap;
    struct comp *tab; /* open addressing, size a power of two, at most half full */
    size_t       tabsize, nused;
};

static size_t
first_len(const char *path)
{
    return strcspn(path, "/");
}

/* The slot of component `name[0..len)`: its entry, or the free slot where it would go. */
static struct comp *
comp_slot(const h5zv_moves *m, const char *name, size_t len, uint64_t h)
{
    size_t mask = m->tabsize - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        struct comp *c = &m->tab[i];
        if (!c->name || (c->hash == h && c->len == len && !memcmp(c->name, name, len)))
            return c;
    }
}

static const struct comp *
comp_find(const h5zv_moves *m, const char *name, size_t len)
{
    const struct comp *c;
    if (!m || !m->tabsize)
        return NULL;
    c = comp_slot(m, name, len, XXH3_64bits(name, len));
    return c->name ? c : NULL;
}

static int
tab_grow(h5zv_moves *m)
{
    size_t       nsize = m->tabsize ? m->tabsize * 2 : 64;
    struct comp *old = m->tab, *nt = calloc(nsize, sizeof *nt);
    size_t       osize = m->tabsize;
    if (!nt)
        return -1;
    m->tab     = nt;
    m->tabsize = nsize;
    for (size_t i = 0; i < osize; i++)
        if (old[i].name)
            *comp_slot(m, old[i].name, old[i].len, old[i].hash) = old[i];
    free(old);
    return 0;
}

/* Appends log index `k` to the list of component `name[0..len)` (once: both ends may share it). */
static int
comp_add(h5zv_moves *m, const char *name, size_t len, size_t k)
{
    uint64_t     h = XXH3_64bits(name, len);
    struct comp *c;
    if ((m->nused + 1) * 2 > m->tabsize && tab_grow(m) < 0)
        return -1;
    c = comp_slot(m, name, len, h);
    if (!c->name) {
        if (!(c->name = malloc(len + 1)))
            return -1;
        memcpy(c->name, name, len);
        c->name[len] = '\0';
        c->len       = len;
        c->hash      = h;
        m->nused++;
    }
    if (c->n && c->idx[c->n - 1] == k)
        return 0;
    if (c->n == c->cap) {
        size_t  ncap = c->cap ? c->cap * 2 : 4;
        size_t *ni   = realloc(c->idx, ncap * sizeof *ni);
        if (!ni)
            return -1;
        c->idx = ni;
        c->cap = ncap;
    }
    c->idx[c->n++] = k;
    return 0;
}

void
h5zv_moves_free(h5zv_moves *m)
{
    if (!m)
        return;
    for (size_t k = 0; k < m->n; k++) {
        free(m->v[k].from);
        free(m->v[k].to);
    }
    for (size_t i = 0; i < m->tabsize; i++) {
        free(m->tab[i].name);
        free(m->tab[i].idx);
    }
    free(m->v);
    free(m->tab);
    free(m);
}

int
h5zv_moves_add(h5zv_file *f, const char *from, const char *to)
{
    h5zv_moves  *m = f->moves;
    struct move *mv;
    if (!*from || !*to) {
        h5zv_err_push(__func__, __LINE__, "can't move the root group");
        return -1;
    }
    if (!m && !(m = f->moves = calloc(1, sizeof *m)))
        goto oom;
    if (m->n == m->cap) {
        size_t       ncap = m->cap ? m->cap * 2 : 16;
        struct move *nv   = realloc(m->v, ncap * sizeof *nv);
        if (!nv)
            goto oom;
        m->v   = nv;
        m->cap = ncap;
    }
    mv        = &m->v[m->n];
    mv->nfrom = strlen(from);
    mv->nto   = strlen(to);
    if (!(mv->from = strdup(from)) || !(mv->to = strdup(to))) {
        free(mv->from);
        goto oom;
    }
    m->n++;
    /* a failed index entry would hide the move from later lookups: the log stays whole or reports */
    if (comp_add(m, from, first_len(from), m->n - 1) < 0 || comp_add(m, to, first_len(to), m->n - 1) < 0)
        goto oom;
    return 0;
oom:
    h5zv_err_push(__func__, __LINE__, "out of memory recording the move of '/%s' to '/%s'", from, to);
    return -1;
}

/* How many of the list's log indices are below `bound` (the list ascends). */
static size_t
count_below(const struct comp *c, size_t bound)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->idx[mid] < bound)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void
h5zv_token_of(h5zv_file *f, const char *path, H5O_token_t *tok)
{
    const h5zv_moves *m     = f->moves;
    char             *cur   = NULL;
    uint64_t          salt  = 0, lo;
    size_t            bound = m ? m->n : 0; /* moves at or after `bound` are behind us */
    /* newest move first: under its destination, the object came from its source; under its source (and
     * not moved back there), the object was made after it */
    while (bound > 0) {
        const char        *here  = cur ? cur : path;
        const struct comp *c     = comp_find(m, here, first_len(here));
        size_t             pos   = c ? count_below(c, bound) : 0;
        bool               moved = false;
        while (pos-- > 0 && !moved && !salt) {
            const struct move *mv = &m->v[c->idx[pos]];
            if (h5zv_path_under(here, mv->to, mv->nto)) {
                size_t rest = strlen(here + mv->nto);
                char  *p    = malloc(mv->nfrom + rest + 1);
                if (!p) { /* out of memory: the path's own token */
                    bound = 0;
                    break;
                }
                memcpy(p, mv->from, mv->nfrom);
                memcpy(p + mv->nfrom, here + mv->nto, rest + 1);
                free(cur);
                cur   = p;
                bound = c->idx[pos];
                moved = true;
            }
            else if (h5zv_path_under(here, mv->from, mv->nfrom))
                salt = c->idx[pos] + 1;
        }
        if (!moved)
            break;
    }
    h5zv_token_from_path(cur ? cur : path, tok);
    if (salt) {
        memcpy(&lo, tok->__data, sizeof lo);
        lo ^= salt * UINT64_C(0x9E3779B97F4A7C15);
        memcpy(tok->__data, &lo, sizeof lo);
    }
    free(cur);
}
