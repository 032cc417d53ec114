/* scope.c - name lookup through enclosing blocks in time independent of
 * the nesting depth.
 *
 * Following parent links from a block costs its depth per lookup, so a
 * pass doing a few lookups per block of a program nested D deep costs D^2.
 * Instead the program keeps, per name, the blocks that declare it (usually
 * one), and per block its depth and a jump pointer (Myers' skew-binary
 * scheme: O(1) space per block, ancestor queries in O(log depth), and a
 * block added under an existing one is indexed in O(1)).  A lookup tests
 * each declaring block for being an ancestor and takes the deepest.
 *
 * Block 0 is left out of the index: it is every block's ancestor, so a
 * name no other enclosing block declares is looked up in block 0's own
 * map.  Most programs have one block, and block 0 holds most names: the
 * index then costs nothing.
 *
 * The index covers a program whose blocks sit at their idx with parents
 * before them (what Paddle writes and what passes append); for any other
 * program, or a name declared in many blocks, lookups walk the chain as
 * before.  Contract (ir.h): parent_idx and idx are not changed after a
 * block is added, except by the reader and clone right after adding it. */
#include <stdlib.h>
#include <glib.h>
#include <string.h>

#include "ir_internal.h"
#include "pmap.h"
#include "util.h"

/* Names declared in more blocks than this are looked up by walking. */
enum { MAX_CANDIDATES = 16 };

typedef struct {
    uint32_t n, cap;
    int32_t *blocks;        /* positions: &one while cap is 1 (most names) */
    int32_t one;
    /* The least depth among them (SIZE_MAX: unknown or none): a block no
     * deeper than that has no declaring ancestor.  Grad vars the backward
     * pass declares in many nested grad blocks, then looks up from the
     * enclosing ones, are answered by this alone. */
    size_t min_depth;
} decls;

struct ir_scope {
    pmap names;             /* interned name -> decls* */
    ir_arena *decls;        /* the decls: one allocation per name was 3% of a backward run */
    size_t covered;         /* blocks [0, covered) are indexed */
    bool bad;               /* the program is not a well-formed tree */
    size_t cap;
    int32_t *parent, *jump;
    size_t *depth;
};

static ir_scope *scope_of(ir_program *p)
{
    if (!p->scope)
        p->scope = xcalloc(1, sizeof(ir_scope));
    return p->scope;
}

void ir_scope_free(ir_program *p)
{
    ir_scope *s = p->scope;
    if (!s)
        return;
    PMAP_FOR(&s->names, e) {
        decls *d = e->val;
        if (d->cap > 1)
            free(d->blocks);
    }
    pmap_free(&s->names);
    ir_arena_free(s->decls);
    free(s->parent);
    free(s->jump);
    free(s->depth);
    free(s);
    p->scope = NULL;
}

static bool index_blocks(const ir_program *p, ir_scope *s);

void ir_scope_declare(ir_block *b, const char *name)
{
    if (b->idx == 0)
        return;
    ir_scope *s = scope_of(b->program);
    decls *d = pmap_get(&s->names, name);
    if (!d) {
        if (!s->decls)
            s->decls = ir_arena_new();
        d = ir_arena_alloc(s->decls, sizeof(decls));
        d->min_depth = SIZE_MAX;
        d->blocks = &d->one;
        d->cap = 1;
        pmap_put(&s->names, name, d);
    }
    if (d->n == d->cap) {
        int32_t *blocks = d->cap > 1 ? d->blocks : NULL;
        blocks = xrealloc_n(blocks, (size_t)d->cap * 2, sizeof(int32_t));
        if (d->cap == 1)
            blocks[0] = d->one;
        d->blocks = blocks;
        d->cap *= 2;
    }
    d->blocks[d->n++] = b->idx;
    if (index_blocks(b->program, s) && s->depth[b->idx] < d->min_depth)
        d->min_depth = s->depth[b->idx];
}

void ir_scope_undeclare(ir_block *b, const char *name)
{
    if (b->idx == 0)
        return;
    ir_scope *s = scope_of(b->program);
    decls *d = pmap_get(&s->names, name);
    for (uint32_t i = 0; d && i < d->n; i++)
        if (d->blocks[i] == b->idx) {
            d->blocks[i] = d->blocks[--d->n];
            /* Rare (renames, removals): recount the least depth. */
            d->min_depth = SIZE_MAX;
            for (uint32_t k = 0; k < d->n && index_blocks(b->program, s); k++)
                if ((size_t)d->blocks[k] < s->covered && s->depth[d->blocks[k]] < d->min_depth)
                    d->min_depth = s->depth[d->blocks[k]];
            return;
        }
}

/* Indexes the blocks added since the last lookup; marks the program bad
 * when one is out of place. */
static bool index_blocks(const ir_program *p, ir_scope *s)
{
    if (s->bad)
        return false;
    if (s->covered == p->n_blocks)
        return true;
    if (p->n_blocks > s->cap) {
        s->cap = p->n_blocks * 2;
        s->parent = xrealloc_n(s->parent, s->cap, sizeof(int32_t));
        s->jump = xrealloc_n(s->jump, s->cap, sizeof(int32_t));
        s->depth = xrealloc_n(s->depth, s->cap, sizeof(size_t));
    }
    for (size_t i = s->covered; i < p->n_blocks; i++) {
        const ir_block *b = p->blocks[i];
        if (b->idx != (int32_t)i || (i > 0 && (b->parent_idx < 0 || (size_t)b->parent_idx >= i))) {
            s->bad = true;
            return false;
        }
        if (i == 0) {
            s->parent[0] = s->jump[0] = 0;
            s->depth[0] = 0;
            continue;
        }
        int32_t u = b->parent_idx, ju = s->jump[u];
        s->parent[i] = u;
        s->depth[i] = s->depth[u] + 1;
        s->jump[i] = s->depth[u] - s->depth[ju] == s->depth[ju] - s->depth[s->jump[ju]]
                         ? s->jump[ju]
                         : u;
    }
    s->covered = p->n_blocks;
    return true;
}

/* Is block a a strict ancestor of block d?  (Both indexed.) */
static bool is_ancestor(const ir_scope *s, int32_t a, int32_t d)
{
    size_t target = s->depth[a];
    if (target >= s->depth[d])
        return false;
    while (s->depth[d] > target)
        d = s->depth[s->jump[d]] >= target ? s->jump[d] : s->parent[d];
    return d == a;
}

/* Block 0's own var of that name, when b is not block 0 (whose own map
 * the caller searched). */
static ir_var *in_root(const ir_program *p, const ir_block *b, const char *name)
{
    return b->idx == 0 ? NULL : pmap_get(p->blocks[0]->var_map, name);
}

ir_var *ir_scope_lookup(const ir_block *b, const char *name, bool *answered)
{
    ir_program *p = b->program;
    ir_scope *s = scope_of(p);
    *answered = false;
    if (!index_blocks(p, s))
        return NULL;
    *answered = true;
    decls *d = pmap_get(&s->names, name);
    /* No enclosing block but the root declares it (b's own map was
     * searched by the caller). */
    if (!d || d->n == 0 || d->min_depth >= s->depth[b->idx])
        return in_root(p, b, name);
    if (d->n > MAX_CANDIDATES) {
        *answered = false;
        return NULL;
    }
    int32_t best = -1;
    for (uint32_t i = 0; i < d->n; i++) {
        int32_t c = d->blocks[i];
        if ((size_t)c >= p->n_blocks || (best >= 0 && s->depth[c] <= s->depth[best]))
            continue;
        if (c == b->idx || is_ancestor(s, c, b->idx))
            best = c;
    }
    return best < 0 ? in_root(p, b, name) : pmap_get(p->blocks[best]->var_map, name);
}

int ir_scope_below(const ir_block *d, const ir_block *a)
{
    ir_program *p = d->program;
    ir_scope *s = scope_of(p);
    if (!index_blocks(p, s))
        return -1;
    return d == a || is_ancestor(s, a->idx, d->idx);
}
