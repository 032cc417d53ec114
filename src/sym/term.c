/* term.c - the term store: hash-consing and the axioms that normalise
 * (term.h).  The normal form:
 * - sum: flat (no sum among its operands), operands sorted by node id,
 *   never of one operand; a sum of slices of one range is the slice of
 *   the sum;
 * - scale: never by 1 without bias; a scale of a scale (no bias) is one
 *   scale by the product; a scale of a slice is the slice of the scale;
 * - slice: never the whole; a slice of a slice is one slice; a slice of a
 *   concat at its part boundaries is the parts; a slice of a fill is a
 *   fill of the slice's rows;
 * - concat: flat; adjacent slices of one term that meet are one slice (so
 *   the concat of a split is the whole); a concat of fills alike but for
 *   their rows is one fill; a concat of the same output of row-wise ops
 *   (optimizers) of one type and attrs is that op on the concats of its
 *   param-shaped inputs (the others must be the same term in every part);
 *   so is a concat of one elementwise_add, _sub or _mul alike whose
 *   operands all have the part's rows (DC-ASGD's correction);
 * - an optimizer's output not shaped like its Param (adam's Beta1PowOut)
 *   does not depend on its param-shaped inputs: those are replaced by a
 *   placeholder, so every slice's copy of it is one term.
 * An int64 [1] value known exactly is a leaf of its own (sym_int). */
#include <glib.h>
#include <string.h>

#include "../ir/util.h"
#include "term.h"

struct sym_store {
    ir_arena *arena;
    GHashTable *nodes;          /* sym_term* -> itself */
    const sym_site *site;
    uint32_t next_id;
};

static guint term_hash(gconstpointer p)
{
    const sym_term *t = p;
    uint64_t h = 1469598103934665603ull ^ (uint64_t)t->kind;
    uint64_t parts[6] = {(uintptr_t)t->name, (uintptr_t)t->key, (uint64_t)t->a, (uint64_t)t->b,
                         t->n, 0};
    memcpy(&parts[5], &t->scale, sizeof(double));
    for (int i = 0; i < 6; i++)
        h = (h ^ parts[i]) * 1099511628211ull;
    for (uint32_t i = 0; i < t->n; i++)
        h = (h ^ (uintptr_t)t->args[i]) * 1099511628211ull;
    return (guint)(h ^ (h >> 32));
}

static gboolean term_equal(gconstpointer x, gconstpointer y)
{
    const sym_term *a = x, *b = y;
    if (a->kind != b->kind || a->name != b->name || a->key != b->key || a->a != b->a ||
        a->b != b->b || a->n != b->n || memcmp(&a->scale, &b->scale, sizeof(double)) ||
        memcmp(&a->bias, &b->bias, sizeof(double)))
        return FALSE;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->args[i] != b->args[i])
            return FALSE;
    return TRUE;
}

sym_store *sym_store_new(void)
{
    sym_store *s = xcalloc(1, sizeof *s);
    s->arena = ir_arena_new();
    s->nodes = g_hash_table_new(term_hash, term_equal);
    return s;
}

void sym_store_free(sym_store *s)
{
    if (!s)
        return;
    g_hash_table_destroy(s->nodes);
    ir_arena_free(s->arena);
    free(s);
}

void sym_store_set_site(sym_store *s, const sym_site *site)
{
    s->site = site;
}

const sym_site *sym_site_make(sym_store *s, const char *prog, int block, int index,
                              const ir_op *op)
{
    sym_site *site = ir_arena_alloc(s->arena, sizeof *site);
    *site = (sym_site){prog, block, index, op};
    return site;
}

size_t sym_store_size(const sym_store *s)
{
    return g_hash_table_size(s->nodes);
}

/* The one node equal to *probe (whose args are not yet the store's). */
static sym_term *intern(sym_store *s, const sym_term *probe)
{
    sym_term *t = g_hash_table_lookup(s->nodes, probe);
    if (t) {
        if (t->rows < 0)
            t->rows = probe->rows;
        return t;
    }
    t = ir_arena_alloc(s->arena, sizeof *t);
    *t = *probe;
    t->id = s->next_id++;
    t->origin = s->site;
    /* a term keeps no pointer into the caller's arrays: with no args those
     * would dangle once the caller frees them (a fuzz finding, ASan) */
    t->args = probe->n ? ir_arena_memdup(s->arena, probe->args, probe->n * sizeof(sym_term *))
                       : NULL;
    t->arg_slots = probe->n && probe->arg_slots
                       ? ir_arena_memdup(s->arena, probe->arg_slots, probe->n * sizeof(char *))
                       : NULL;
    g_hash_table_add(s->nodes, t);
    return t;
}

void sym_note_args(sym_store *s, sym_term *t, const sym_site **sites, const char **vars)
{
    if (t->arg_sites || t->origin != s->site || !t->n)
        return;
    t->arg_sites = ir_arena_memdup(s->arena, sites, t->n * sizeof(sym_site *));
    t->arg_vars = ir_arena_memdup(s->arena, vars, t->n * sizeof(char *));
}

bool sym_rowwise_type(const char *type)
{
    static const char *const t[] = {"sgd", "momentum", "adam", "adamax", "adagrad",
                                    "decayed_adagrad", "rmsprop", "ftrl", "adadelta",
                                    "proximal_gd", "proximal_adagrad", "dpsgd", NULL};
    for (size_t i = 0; t[i]; i++)
        if (!strcmp(type, t[i]))
            return true;
    return false;
}

sym_term *sym_leaf(sym_store *s, const char *label, int64_t rows)
{
    sym_term p = {.kind = SYM_LEAF, .name = ir_intern(label), .rows = rows};
    return intern(s, &p);
}

sym_term *sym_int(sym_store *s, int64_t v)
{
    sym_term p = {.kind = SYM_LEAF, .name = ir_internf("%lld", (long long)v), .a = v, .b = 1,
                  .rows = 1};
    return intern(s, &p);
}

bool sym_int_value(const sym_term *t, int64_t *v)
{
    if (t->kind != SYM_LEAF || t->b != 1)
        return false;
    *v = t->a;
    return true;
}

sym_term *sym_app(sym_store *s, const char *type, const char *key, sym_term **args,
                  const char **slots, uint32_t n, int64_t fill_rows)
{
    sym_term p = {.kind = SYM_APP, .name = type, .key = key, .args = args, .arg_slots = slots,
                  .n = n, .a = fill_rows, .rows = fill_rows};
    return intern(s, &p);
}

bool sym_elementwise_type(const char *type)
{
    return !strcmp(type, "elementwise_add") || !strcmp(type, "elementwise_sub") ||
           !strcmp(type, "elementwise_mul");
}

static bool is_fill(const sym_term *t)
{
    return t->kind == SYM_APP && t->n == 0 && t->a >= 0;
}

static int64_t param_rows(const sym_term *app)
{
    for (uint32_t i = 0; i < app->n; i++)
        if (app->arg_slots && !strcmp(app->arg_slots[i], "Param"))
            return app->args[i]->rows;
    return -1;
}

sym_term *sym_proj(sym_store *s, sym_term *app, const char *slot, int64_t idx, int64_t rows)
{
    int64_t pr = app->kind == SYM_APP && sym_rowwise_type(app->name) ? param_rows(app) : -1;
    if (pr > 0 && rows > 0 && rows != pr) {
        /* not param-shaped: independent of the param-shaped inputs */
        sym_term **args = xmalloc_n(app->n, sizeof *args);
        sym_term *hole = sym_leaf(s, "*", pr);
        /* A leaf (a var's initial value) has the rows of the first var it
         * was made for: each pserver holds its rows of a split accumulator
         * under the whole var's name.  Per-param state that is not
         * param-shaped (LR, beta pows) has one row. */
        for (uint32_t i = 0; i < app->n; i++) {
            const sym_term *a = app->args[i];
            args[i] = a->rows == pr || (a->kind == SYM_LEAF && a->rows > 1) ? hole : app->args[i];
        }
        app = sym_app(s, app->name, app->key, args, app->arg_slots, app->n, -1);
        free(args);
    }
    sym_term *a[1] = {app};
    sym_term p = {.kind = SYM_PROJ, .name = ir_intern(slot), .a = idx, .args = a, .n = 1,
                  .rows = rows};
    return intern(s, &p);
}

static gint by_id(gconstpointer x, gconstpointer y)
{
    uint32_t a = (*(sym_term *const *)x)->id, b = (*(sym_term *const *)y)->id;
    return a < b ? -1 : a > b;
}

sym_term *sym_sum(sym_store *s, sym_term **args, uint32_t n)
{
    GPtrArray *flat = g_ptr_array_new();
    for (uint32_t i = 0; i < n; i++) {
        if (args[i]->kind == SYM_SUM)
            for (uint32_t k = 0; k < args[i]->n; k++)
                g_ptr_array_add(flat, args[i]->args[k]);
        else
            g_ptr_array_add(flat, args[i]);
    }
    sym_term *r;
    if (flat->len == 0) {
        r = sym_leaf(s, "zero", -1);
    } else if (flat->len == 1) {
        r = flat->pdata[0];
    } else {
        bool slices = true;
        sym_term *f = flat->pdata[0];
        for (guint i = 0; i < flat->len; i++) {
            sym_term *x = flat->pdata[i];
            /* bases of unknown rows too: a split's input has known rows,
             * so this only keeps a wrong one's report short */
            slices &= x->kind == SYM_SLICE && x->a == f->a && x->b == f->b &&
                      f->kind == SYM_SLICE && (x->args[0]->rows == f->args[0]->rows ||
                                               x->args[0]->rows < 0 || f->args[0]->rows < 0);
        }
        if (slices) {
            for (guint i = 0; i < flat->len; i++)
                flat->pdata[i] = ((sym_term *)flat->pdata[i])->args[0];
            r = sym_slice(s, sym_sum(s, (sym_term **)flat->pdata, flat->len), f->a, f->b);
        } else {
            g_ptr_array_sort(flat, by_id);
            sym_term p = {.kind = SYM_SUM, .args = (sym_term **)flat->pdata, .n = flat->len,
                          .rows = f->rows};
            r = intern(s, &p);
        }
    }
    g_ptr_array_free(flat, TRUE);
    return r;
}

sym_term *sym_scale(sym_store *s, sym_term *x, double scale, double bias, bool after)
{
    if (bias == 0 && scale == 1)
        return x;
    if (bias == 0 && x->kind == SYM_SCALE && x->bias == 0)
        return sym_scale(s, x->args[0], scale * x->scale, 0, true);
    if (bias == 0 && x->kind == SYM_SLICE)
        return sym_slice(s, sym_scale(s, x->args[0], scale, 0, true), x->a, x->b);
    sym_term *a[1] = {x};
    sym_term p = {.kind = SYM_SCALE, .scale = scale, .bias = bias, .a = bias != 0 && after,
                  .args = a, .n = 1, .rows = x->rows};
    return intern(s, &p);
}

/* A slice of a concat: the parts it covers when it starts and ends at
 * part boundaries (or lies inside one part), else NULL. */
static sym_term *slice_of_concat(sym_store *s, sym_term *x, int64_t off, int64_t rows)
{
    int64_t at = 0;
    uint32_t first = x->n;
    for (uint32_t i = 0; i < x->n; i++) {
        int64_t r = x->args[i]->rows;
        if (r < 0)
            return NULL;
        if (first == x->n && off >= at && off + rows <= at + r)
            return sym_slice(s, x->args[i], off - at, rows);
        if (at == off)
            first = i;
        at += r;
        if (first < x->n && at == off + rows)
            return sym_concat(s, x->args + first, i - first + 1);
        if (at > off + rows)
            return NULL;
    }
    return NULL;
}

sym_term *sym_slice(sym_store *s, sym_term *x, int64_t off, int64_t rows)
{
    if (off == 0 && rows == x->rows)
        return x;
    if (x->kind == SYM_SLICE)
        return sym_slice(s, x->args[0], x->a + off, rows);
    if (x->kind == SYM_CONCAT) {
        sym_term *r = slice_of_concat(s, x, off, rows);
        if (r)
            return r;
    }
    if (is_fill(x))
        return sym_app(s, x->name, x->key, NULL, NULL, 0, rows);
    sym_term *a[1] = {x};
    sym_term p = {.kind = SYM_SLICE, .a = off, .b = rows, .args = a, .n = 1, .rows = rows};
    return intern(s, &p);
}

/* Parts that are one output of row-wise ops alike: that op on the concats
 * of the param-shaped args, or NULL. */
static sym_term *pull_rowwise(sym_store *s, sym_term **parts, uint32_t n)
{
    sym_term *p0 = parts[0], *a0 = p0->kind == SYM_PROJ ? p0->args[0] : NULL;
    bool ew = a0 && a0->kind == SYM_APP && sym_elementwise_type(a0->name);
    if (!a0 || a0->kind != SYM_APP || (!sym_rowwise_type(a0->name) && !ew))
        return NULL;
    for (uint32_t k = 0; k < n; k++) {
        sym_term *p = parts[k];
        if (p->kind != SYM_PROJ || !p->n)     /* a part of another kind may have no args */
            return NULL;
        sym_term *a = p->args[0];
        if (p->name != p0->name || p->a != p0->a || p->rows <= 0 ||
            a->kind != SYM_APP || a->name != a0->name || a->key != a0->key || a->n != a0->n)
            return NULL;
    }
    sym_term **args = xmalloc_n(a0->n, sizeof *args), **col = xmalloc_n(n, sizeof *col);
    bool ok = true;
    int64_t rows = 0;
    for (uint32_t k = 0; k < n; k++)
        rows += parts[k]->rows;
    for (uint32_t j = 0; ok && j < a0->n; j++) {
        bool rowwise = true, same = true;
        for (uint32_t k = 0; k < n; k++) {
            col[k] = parts[k]->args[0]->args[j];
            rowwise &= col[k]->rows == parts[k]->rows;
            same &= col[k] == col[0];
        }
        if (rowwise && (!same || parts[0]->rows > 1))
            args[j] = sym_concat(s, col, n);
        else if (ew)    /* an operand that broadcasts: not row by row */
            ok = false;
        else if (same)
            args[j] = col[0];
        else
            ok = false;
    }
    sym_term *r = NULL;
    if (ok) {
        sym_term *app = sym_app(s, a0->name, a0->key, args, a0->arg_slots, a0->n, -1);
        r = sym_proj(s, app, p0->name, p0->a, rows);
    }
    free(args);
    free(col);
    return r;
}

/* What pairs a sum's operand with its counterpart in another part: the
 * base of a slice, else the head. */
static bool same_sig(const sym_term *x, const sym_term *y)
{
    if (x->kind == SYM_SLICE || y->kind == SYM_SLICE)
        return x->kind == y->kind && x->args[0] == y->args[0];
    return x->kind == y->kind && x->name == y->name && x->key == y->key && x->a == y->a &&
           x->scale == y->scale && x->bias == y->bias && x->n == y->n;
}

/* A concat of scales alike is the scale of the concat; a concat of sums
 * is the sum of the concats of their operands, paired by same_sig (any
 * pairing is sound, as every operand has its part's rows; the signature
 * makes the form canonical).  NULL when neither applies. */
static sym_term *pull_arith(sym_store *s, sym_term **p, uint32_t n)
{
    bool scales = true, sums = true;
    for (uint32_t k = 0; k < n; k++) {
        scales &= p[k]->kind == SYM_SCALE && p[k]->scale == p[0]->scale &&
                  p[k]->bias == p[0]->bias && p[k]->a == p[0]->a && p[k]->args[0]->rows == p[k]->rows;
        sums &= p[k]->kind == SYM_SUM && p[k]->n == p[0]->n;
    }
    sym_term **col = xmalloc_n(n, sizeof *col), *r = NULL;
    if (scales) {
        for (uint32_t k = 0; k < n; k++)
            col[k] = p[k]->args[0];
        r = sym_scale(s, sym_concat(s, col, n), p[0]->scale, p[0]->bias, p[0]->a);
    } else if (sums) {
        uint32_t m = p[0]->n;
        sym_term **terms = xmalloc_n(m, sizeof *terms);
        bool ok = true;
        for (uint32_t i = 0; ok && i < m; i++) {
            for (uint32_t k = 0; ok && k < n; k++) {
                uint32_t hits = 0;
                for (uint32_t q = 0; q < m; q++)
                    if (same_sig(p[k]->args[q], p[0]->args[i]) && ++hits)
                        col[k] = p[k]->args[q];
                ok = hits == 1 && col[k]->rows == p[k]->rows;
            }
            if (ok)
                terms[i] = sym_concat(s, col, n);
        }
        r = ok ? sym_sum(s, terms, m) : NULL;
        free(terms);
    }
    free(col);
    return r;
}

/* Flattens nested concats and joins adjacent slices that meet. */
static GPtrArray *flat_parts(sym_store *s, sym_term **parts, uint32_t n)
{
    GPtrArray *f = g_ptr_array_new();
    for (uint32_t i = 0; i < n; i++) {
        sym_term **src = parts[i]->kind == SYM_CONCAT ? parts[i]->args : &parts[i];
        uint32_t m = parts[i]->kind == SYM_CONCAT ? parts[i]->n : 1;
        for (uint32_t k = 0; k < m; k++) {
            sym_term *x = src[k], *last = f->len ? f->pdata[f->len - 1] : NULL;
            sym_term *lb = last && last->kind == SYM_SLICE ? last->args[0] : last;
            int64_t lo = last && last->kind == SYM_SLICE ? last->a : 0;
            sym_term *xb = x->kind == SYM_SLICE ? x->args[0] : x;
            int64_t xo = x->kind == SYM_SLICE ? x->a : 0;
            if (last && lb == xb && last->rows > 0 && x->rows > 0 && lo + last->rows == xo &&
                (last->kind == SYM_SLICE || x->kind == SYM_SLICE))
                f->pdata[f->len - 1] = sym_slice(s, xb, lo, last->rows + x->rows);
            else
                g_ptr_array_add(f, x);
        }
    }
    return f;
}

/* Parts that are all the initial value of one persistable var that no
 * startup op wrote (a leaf named by the var): each pserver holds its rows
 * of that var under the var's own name (an optimizer's accumulators, with
 * no startup program: the PaddleOCR models).  Like a fill of unknown value,
 * the rows of that value put together are the value.  Feeds and `unset:`
 * leaves (a var nothing sent) never join. */
static bool same_initial_leaf(sym_term *const *p, guint n)
{
    if (p[0]->kind != SYM_LEAF || !strncmp(p[0]->name, "unset:", 6) || strchr(p[0]->name, '*'))
        return false;
    for (guint i = 1; i < n; i++)
        if (p[i] != p[0])
            return false;
    return true;
}

sym_term *sym_concat(sym_store *s, sym_term **parts, uint32_t n)
{
    GPtrArray *f = flat_parts(s, parts, n);
    sym_term **p = (sym_term **)f->pdata, *r = NULL;
    int64_t rows = 0;
    bool fills = true;
    for (guint i = 0; i < f->len; i++) {
        rows = rows < 0 || p[i]->rows < 0 ? -1 : rows + p[i]->rows;
        fills &= is_fill(p[i]) && p[i]->key == p[0]->key && p[i]->name == p[0]->name;
    }
    if (f->len == 1 || same_initial_leaf(p, f->len))
        r = p[0];
    else if (fills && rows > 0)
        r = sym_app(s, p[0]->name, p[0]->key, NULL, NULL, 0, rows);
    else if (!(r = pull_rowwise(s, p, f->len)) && !(r = pull_arith(s, p, f->len))) {
        sym_term q = {.kind = SYM_CONCAT, .args = p, .n = f->len, .rows = rows};
        r = intern(s, &q);
    }
    g_ptr_array_free(f, TRUE);
    return r;
}

static sym_term *slice_in(sym_store *s, sym_term *x, int64_t off, int64_t rows, int depth)
{
    if (off == 0 && rows == x->rows)
        return x;
    if (depth > 64 || x->rows <= 0)
        return sym_slice(s, x, off, rows);
    if (x->kind == SYM_SCALE && x->bias == 0)
        return sym_scale(s, slice_in(s, x->args[0], off, rows, depth + 1), x->scale, 0, true);
    if (x->kind == SYM_SUM || (x->kind == SYM_PROJ && x->args[0]->kind == SYM_APP &&
                               (sym_rowwise_type(x->args[0]->name) ||
                                sym_elementwise_type(x->args[0]->name)))) {
        sym_term *app = x->kind == SYM_SUM ? x : x->args[0];
        sym_term **args = xmalloc_n(app->n, sizeof *args), *r;
        for (uint32_t i = 0; i < app->n; i++)
            args[i] = app->args[i]->rows == x->rows
                          ? slice_in(s, app->args[i], off, rows, depth + 1)
                          : app->args[i];
        if (x->kind == SYM_SUM)
            r = sym_sum(s, args, app->n);
        else
            r = sym_proj(s, sym_app(s, app->name, app->key, args, app->arg_slots, app->n, -1),
                         x->name, x->a, rows);
        free(args);
        return r;
    }
    return sym_slice(s, x, off, rows);
}

sym_term *sym_slice_in(sym_store *s, sym_term *x, int64_t off, int64_t rows)
{
    return slice_in(s, x, off, rows, 0);
}
