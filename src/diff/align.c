/* align.c - matching the ops of two blocks (pdiff_align, diff.h).
 *
 * A longest common subsequence on each op's key, its type and outputs, so
 * that an inserted op shows as one and not as every later op shifted.
 * Never an (n x m) table: programs have 24 000 ops and more.  Each range
 * of the two blocks is handled so:
 *   1. the common prefix and suffix are matched (linear);
 *   2. Myers' O((n + m) D) greedy algorithm finds the exact LCS when the
 *      rest differs by at most MAX_D edits (mostly-equal programs);
 *   3. failing that, the keys that occur exactly once on each side are
 *      anchors, and their longest increasing run (patience sorting,
 *      O(k log k)) splits the range into gaps, each handled from step 1;
 *      a range with no such anchor stays unmatched.
 * Ranges wait on an explicit stack: no recursion on the input. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "diff.h"

enum { MAX_D = 512 };

/* Names are interned in one table for every program of the run, so equal
 * names are equal pointers across A and B. */
static bool key_equal(const ir_op *x, const ir_op *y)
{
    if (x->type != y->type || x->n_outputs != y->n_outputs)
        return false;
    for (uint32_t i = 0; i < x->n_outputs; i++) {
        const ir_slot *s = &ir_op_outs(x)[i], *t = &ir_op_outs(y)[i];
        if (s->name != t->name || s->n_args != t->n_args ||
            (s->n_args && memcmp(s->args, t->args, s->n_args * sizeof *s->args) != 0))
            return false;
    }
    return true;
}

static guint key_hash(gconstpointer p)
{
    const ir_op *op = p;
    uint64_t h = (uintptr_t)op->type * 0x9e3779b97f4a7c15u;
    for (uint32_t i = 0; i < op->n_outputs; i++) {
        h = (h ^ (uintptr_t)ir_op_outs(op)[i].name) * 0x100000001b3u;
        for (uint32_t k = 0; k < ir_op_outs(op)[i].n_args; k++)
            h = (h ^ (uintptr_t)ir_op_outs(op)[i].args[k]) * 0x100000001b3u;
    }
    return (guint)(h ^ (h >> 32));
}

static gboolean key_equal_g(gconstpointer x, gconstpointer y)
{
    return key_equal(x, y);
}

typedef struct { size_t a0, a1, b0, b1; } range;

typedef struct {
    ir_op *const *a, *const *b;
    GArray *pairs;              /* pdiff_pair */
    GArray *pending;            /* range */
} aligner;

static void add_pair(aligner *al, size_t a, size_t b)
{
    pdiff_pair p = {a, b};
    g_array_append_val(al->pairs, p);
}

static void trim(aligner *al, range *r)
{
    while (r->a0 < r->a1 && r->b0 < r->b1 && key_equal(al->a[r->a0], al->b[r->b0]))
        add_pair(al, r->a0++, r->b0++);
    while (r->a0 < r->a1 && r->b0 < r->b1 && key_equal(al->a[r->a1 - 1], al->b[r->b1 - 1]))
        add_pair(al, --r->a1, --r->b1);
}

/* Walks back through Myers' saved frontiers from (n, m) at edit count d,
 * adding the diagonal moves as pairs.  trace[e] holds V[-e..e]. */
static void myers_back(aligner *al, const range *r, long *const *trace, long d)
{
    long x = (long)(r->a1 - r->a0), y = (long)(r->b1 - r->b0);
    for (; d > 0; d--) {
        const long *v = trace[d - 1] + (d - 1);  /* v[k] for k in -(d-1)..d-1 */
        long k = x - y;
        long pk = (k == -d || (k != d && v[k - 1] < v[k + 1])) ? k + 1 : k - 1;
        long px = v[pk], py = px - pk;
        long sx = pk == k + 1 ? px : px + 1;     /* where the snake began */
        while (x > sx && y > sx - k) {
            x--, y--;
            add_pair(al, r->a0 + (size_t)x, r->b0 + (size_t)y);
        }
        x = px, y = py;
    }
    while (x > 0 && y > 0) {
        x--, y--;
        add_pair(al, r->a0 + (size_t)x, r->b0 + (size_t)y);
    }
}

/* Myers' greedy LCS on range r, giving up past MAX_D edits. */
static bool myers(aligner *al, const range *r)
{
    long n = (long)(r->a1 - r->a0), m = (long)(r->b1 - r->b0);
    long max_d = n + m < MAX_D ? n + m : MAX_D;
    long *v = xcalloc((size_t)(2 * max_d + 3), sizeof *v);
    long *vk = v + max_d + 1;                   /* vk[k], k in -(max_d+1)..max_d+1 */
    long **trace = xcalloc((size_t)max_d + 1, sizeof *trace);
    bool found = false;
    long d;
    for (d = 0; d <= max_d && !found; d++) {
        for (long k = -d; k <= d; k += 2) {
            long x = (k == -d || (k != d && vk[k - 1] < vk[k + 1])) ? vk[k + 1] : vk[k - 1] + 1;
            long y = x - k;
            while (x < n && y < m && key_equal(al->a[r->a0 + (size_t)x], al->b[r->b0 + (size_t)y]))
                x++, y++;
            vk[k] = x;
            if (x >= n && y >= m)
                found = true;
        }
        trace[d] = xmalloc((size_t)(2 * d + 1) * sizeof **trace);
        memcpy(trace[d], vk - d, (size_t)(2 * d + 1) * sizeof **trace);
    }
    if (found)
        myers_back(al, r, trace, d - 1);
    for (long e = 0; e < d; e++)
        free(trace[e]);
    free(trace);
    free(v);
    return found;
}

typedef struct { size_t n_a, n_b, at_a, at_b; } key_count;

/* The pairs of ops whose key occurs once on each side of r, in A's
 * order; *n gets how many. */
static pdiff_pair *unique_pairs(aligner *al, const range *r, size_t *n)
{
    GHashTable *seen = g_hash_table_new(key_hash, key_equal_g);
    key_count *counts = xcalloc(r->a1 - r->a0, sizeof *counts);
    for (size_t i = r->a0; i < r->a1; i++) {
        key_count *c = g_hash_table_lookup(seen, al->a[i]);
        if (!c) {
            c = &counts[i - r->a0];
            c->at_a = i;
            g_hash_table_insert(seen, (gpointer)al->a[i], c);
        }
        c->n_a++;
    }
    for (size_t j = r->b0; j < r->b1; j++) {
        key_count *c = g_hash_table_lookup(seen, al->b[j]);
        if (c && c->n_b++ == 0)
            c->at_b = j;
    }
    pdiff_pair *out = xmalloc((r->a1 - r->a0) * sizeof *out);
    *n = 0;
    for (size_t i = r->a0; i < r->a1; i++) {
        const key_count *c = &counts[i - r->a0];
        if (c->n_a == 1 && c->n_b == 1)
            out[(*n)++] = (pdiff_pair){c->at_a, c->at_b};
    }
    g_hash_table_destroy(seen);
    free(counts);
    return out;
}

/* The longest run of p (A-ordered) increasing in b, in place; returns its
 * length.  Patience sorting with back links. */
static size_t longest_increasing(pdiff_pair *p, size_t n)
{
    size_t *tops = xmalloc((n + 1) * sizeof *tops), *prev = xmalloc((n + 1) * sizeof *prev);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t lo = 0, hi = len;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (p[tops[mid]].b < p[i].b)
                lo = mid + 1;
            else
                hi = mid;
        }
        prev[i] = lo ? tops[lo - 1] : (size_t)-1;
        tops[lo] = i;
        if (lo == len)
            len++;
    }
    pdiff_pair *keep = xmalloc((len + 1) * sizeof *keep);
    size_t at = len ? tops[len - 1] : 0;
    for (size_t k = len; k > 0; k--, at = prev[at])
        keep[k - 1] = p[at];
    memcpy(p, keep, len * sizeof *p);
    free(keep);
    free(tops);
    free(prev);
    return len;
}

/* Step 3: anchors split r into gaps, which go on the stack. */
static void split_on_anchors(aligner *al, const range *r)
{
    size_t n;
    pdiff_pair *p = unique_pairs(al, r, &n);
    n = longest_increasing(p, n);
    if (n == 0) {               /* nothing to hold on to: r stays unmatched */
        free(p);
        return;
    }
    size_t a = r->a0, b = r->b0;
    for (size_t k = 0; k <= n; k++) {
        range gap = {a, k < n ? p[k].a : r->a1, b, k < n ? p[k].b : r->b1};
        if (gap.a0 < gap.a1 && gap.b0 < gap.b1)
            g_array_append_val(al->pending, gap);
        if (k < n) {
            add_pair(al, p[k].a, p[k].b);
            a = p[k].a + 1, b = p[k].b + 1;
        }
    }
    free(p);
}

static int cmp_pair(const void *x, const void *y)
{
    const pdiff_pair *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a;
}

size_t pdiff_align(ir_op *const *a, size_t na, ir_op *const *b, size_t nb, pdiff_pair **pairs)
{
    aligner al = {a, b, g_array_new(FALSE, FALSE, sizeof(pdiff_pair)),
                  g_array_new(FALSE, FALSE, sizeof(range))};
    range all = {0, na, 0, nb};
    g_array_append_val(al.pending, all);
    while (al.pending->len) {
        range r = g_array_index(al.pending, range, al.pending->len - 1);
        g_array_set_size(al.pending, al.pending->len - 1);
        trim(&al, &r);
        if (r.a0 == r.a1 || r.b0 == r.b1)
            continue;
        if (!myers(&al, &r))
            split_on_anchors(&al, &r);
    }
    g_array_free(al.pending, TRUE);
    size_t n = al.pairs->len;
    if (n > 1)
        qsort(al.pairs->data, n, sizeof(pdiff_pair), cmp_pair);
    *pairs = (pdiff_pair *)(void *)g_array_free(al.pairs, FALSE);
    return n;
}
