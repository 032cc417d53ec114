/* memory_pool.c - memory_optimize's pool of dead vars (memory-passes.md
 * §5.1-5.2, §10.3).
 *
 * Paddle keeps the pool as a list ordered by (shape[0] == -1 first, then
 * |numel| ascending, then insertion) and walks it from the front for every
 * output: the first visible entry of the same dtype whose shape fits wins,
 * unless an entry of the output's own name comes first.  Here the pool is a
 * balanced tree in that order, and a second tree ordered by what the shape
 * test asks (level 0: dtype, then the exact shape; level 1: dtype, group,
 * numel) finds the first fitting entry with one lower-bound search.  With
 * print_log the pool prefix is walked as Paddle walks it, to print the same
 * lines, and every skipped entry is checked to really not fit. */
#include "memory_pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ir/util.h"

__extension__ typedef unsigned __int128 mem_u128;

typedef struct pool_entry {
    const char *name;
    const int64_t *dims;        /* the var's own dims array (never edited) */
    size_t n_dims;
    bool batch;                 /* shape[0] == -1 */
    mem_u128 size;              /* |product of dims|, saturated */
    unsigned long long seq;     /* insertion number, from 1 */
    int dtype;                  /* of the var seen from the current ops */
    bool indexed;               /* in `search` (visible from the current ops) */
    struct pool_entry *next_same;   /* other entries of this name */
} pool_entry;

struct mem_pool {
    int level;
    GTree *order;               /* every entry, in Paddle's list order */
    GTree *search;              /* visible entries, by the shape test's key */
    pmap by_name;               /* name -> first pool_entry of that name */
    unsigned long long seq;
};

static mem_u128 abs_numel(const int64_t *dims, size_t n)
{
    const mem_u128 max = ~(mem_u128)0;
    mem_u128 p = 1;
    for (size_t k = 0; k < n; k++) {
        mem_u128 d = dims[k] < 0 ? (mem_u128)(-(dims[k] + 1)) + 1 : (mem_u128)dims[k];
        if (d && p > max / d)
            p = max;
        else
            p *= d;
    }
    return p;
}

static int cmp_u128(mem_u128 a, mem_u128 b) { return (a > b) - (a < b); }
static int cmp_ull(unsigned long long a, unsigned long long b) { return (a > b) - (a < b); }

static int cmp_order(const void *pa, const void *pb)
{
    const pool_entry *a = pa, *b = pb;
    if (a->batch != b->batch)
        return a->batch ? -1 : 1;
    int c = cmp_u128(a->size, b->size);
    return c ? c : cmp_ull(a->seq, b->seq);
}

static int cmp_shape(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
    if (na != nb)
        return na < nb ? -1 : 1;
    for (size_t k = 0; k < na; k++)
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    return 0;
}

static int cmp_exact(const void *pa, const void *pb)
{
    const pool_entry *a = pa, *b = pb;
    if (a->dtype != b->dtype)
        return a->dtype < b->dtype ? -1 : 1;
    int c = cmp_shape(a->dims, a->n_dims, b->dims, b->n_dims);
    return c ? c : cmp_ull(a->seq, b->seq);
}

static int cmp_fit(const void *pa, const void *pb)
{
    const pool_entry *a = pa, *b = pb;
    if (a->dtype != b->dtype)
        return a->dtype < b->dtype ? -1 : 1;
    if (a->batch != b->batch)
        return a->batch ? -1 : 1;
    int c = cmp_u128(a->size, b->size);
    return c ? c : cmp_ull(a->seq, b->seq);
}

mem_pool *mem_pool_new(int level)
{
    mem_pool *p = xcalloc(1, sizeof *p);
    p->level = level;
    p->order = g_tree_new(cmp_order);
    p->search = g_tree_new(level == 0 ? cmp_exact : cmp_fit);
    return p;
}

static gboolean free_entry(gpointer key, gpointer value, gpointer data)
{
    (void)value;
    (void)data;
    free(key);
    return FALSE;
}

void mem_pool_free(mem_pool *p)
{
    if (!p)
        return;
    g_tree_foreach(p->order, free_entry, NULL);
    g_tree_destroy(p->order);
    g_tree_destroy(p->search);
    pmap_free(&p->by_name);
    free(p);
}

size_t mem_pool_size(const mem_pool *p)
{
    return (size_t)g_tree_nnodes(p->order);
}

bool mem_pool_has(const mem_pool *p, const char *name, const int64_t *dims, size_t n)
{
    for (pool_entry *e = pmap_get(&p->by_name, name); e; e = e->next_same)
        if (!cmp_shape(e->dims, e->n_dims, dims, n))
            return true;
    return false;
}

void mem_pool_add(mem_pool *p, const char *name, const int64_t *dims, size_t n, int dtype)
{
    pool_entry *e = xcalloc(1, sizeof *e);
    e->name = name;
    e->dims = dims;
    e->n_dims = n;
    e->batch = dims[0] == -1;
    e->size = abs_numel(dims, n);
    e->seq = ++p->seq;
    e->dtype = dtype;
    e->indexed = true;
    e->next_same = pmap_get(&p->by_name, name);
    pmap_put(&p->by_name, name, e);
    g_tree_insert(p->order, e, e);
    g_tree_insert(p->search, e, e);
}

static void remove_entry(mem_pool *p, pool_entry *e)
{
    g_tree_remove(p->order, e);
    if (e->indexed)
        g_tree_remove(p->search, e);
    pool_entry *head = pmap_get(&p->by_name, e->name);
    if (head == e) {
        if (e->next_same)
            pmap_put(&p->by_name, e->name, e->next_same);
        else
            pmap_remove(&p->by_name, e->name);
    } else {
        while (head->next_same != e)
            head = head->next_same;
        head->next_same = e->next_same;
    }
    free(e);
}

typedef struct {
    mem_pool *pool;
    const mem_cfg *cfg;
    size_t i;
} reindex_ctx;

static gboolean reindex_one(gpointer key, gpointer value, gpointer data)
{
    (void)value;
    reindex_ctx *r = data;
    pool_entry *e = key;
    const ir_var *v = mem_lookup(r->cfg, r->i, e->name);
    e->indexed = v != NULL;
    if (v) {
        e->dtype = v->dtype;
        g_tree_insert(r->pool->search, e, e);
    }
    return FALSE;
}

void mem_pool_reindex(mem_pool *p, const mem_cfg *cfg, size_t i)
{
    g_tree_destroy(p->search);
    p->search = g_tree_new(p->level == 0 ? cmp_exact : cmp_fit);
    reindex_ctx r = {p, cfg, i};
    g_tree_foreach(p->order, reindex_one, &r);
}

/* The first indexed entry that passes the dtype and shape tests for x. */
static pool_entry *first_fit(const mem_pool *p, const ir_var *xv, const int64_t *dims,
                             size_t n)
{
    pool_entry probe = {.dims = dims, .n_dims = n, .batch = dims[0] == -1,
                        .size = abs_numel(dims, n), .seq = 0, .dtype = xv->dtype};
    GTreeNode *node = g_tree_lower_bound(p->search, &probe);
    if (!node)
        return NULL;
    pool_entry *e = g_tree_node_key(node);
    if (e->dtype != probe.dtype)
        return NULL;
    if (p->level == 0)
        return cmp_shape(e->dims, e->n_dims, dims, n) ? NULL : e;
    return e->batch == probe.batch ? e : NULL;
}

static bool shape_fits(int level, const pool_entry *c, const int64_t *dims, size_t n)
{
    if (level == 0)
        return !cmp_shape(c->dims, c->n_dims, dims, n);
    if ((dims[0] == -1) != c->batch)
        return false;
    return abs_numel(dims, n) <= c->size;
}

static void put_shape(GString *s, const char *name, const int64_t *dims, size_t n)
{
    g_string_append_printf(s, "%s[", name);
    for (size_t k = 0; k < n; k++)
        g_string_append_printf(s, "%s%lld", k ? ", " : "", (long long)dims[k]);
    g_string_append_c(s, ']');
}

typedef struct {
    mem_pool *pool;
    const mem_cfg *cfg;
    size_t i;
    const char *x;
    const ir_var *xv;
    const int64_t *dims;
    size_t n;
    const pool_entry *stop;
    size_t index;
    GString *log;
} walk_ctx;

/* One step of Paddle's walk over the pool, for print_log. */
static gboolean walk_one(gpointer key, gpointer value, gpointer data)
{
    (void)value;
    walk_ctx *w = data;
    const pool_entry *e = key;
    if (e == w->stop)
        return TRUE;
    w->index++;
    const ir_var *cv = mem_lookup(w->cfg, w->i, e->name);
    if (!cv) {
        g_string_append_printf(w->log, "cache %s not exists!\n", e->name);
    } else if (cv->dtype != w->xv->dtype) {
        g_string_append(w->log, "x_dtype and cache_dtype are different\n");
    } else if (e->name == w->x || shape_fits(w->pool->level, e, w->dims, w->n)) {
        fprintf(stderr, "pdtrans: internal error: memory pool search passed over '%s'\n",
                e->name);
        abort();
    }
    return FALSE;
}

const char *mem_pool_take(mem_pool *p, const mem_cfg *cfg, size_t i, const char *x,
                          const ir_var *xv, GString *log, unsigned *counter)
{
    const int64_t *dims;
    size_t n = mem_var_dims(xv, &dims);
    pool_entry *fit = first_fit(p, xv, dims, n);
    pool_entry *own = NULL;
    for (pool_entry *e = pmap_get(&p->by_name, x); e; e = e->next_same)
        if (!own || cmp_order(e, own) < 0)
            own = e;
    bool same = own && (!fit || cmp_order(own, fit) <= 0);
    if (log) {
        walk_ctx w = {p, cfg, i, x, xv, dims, n, same ? own : fit, 0, log};
        g_tree_foreach(p->order, walk_one, &w);
        if (same) {
            g_string_append_printf(log, "x :  %s  cache :  %s  is same var!\n", x, x);
        } else if (fit) {
            g_string_append_printf(log, "!!! %u,  ", (*counter)++);
            put_shape(log, x, dims, n);
            g_string_append(log, " => ");
            put_shape(log, fit->name, fit->dims, fit->n_dims);
            g_string_append_printf(log, ", cache idx %zu, pool size %zu\n", w.index,
                                   mem_pool_size(p));
        }
    }
    if (same || !fit)
        return NULL;
    const char *c = fit->name;
    remove_entry(p, fit);
    return c;
}
