/* tree.c - the block tree (parent_idx links) as arrays, built without
 * recursion in time linear in the number of blocks.  Walks over nested
 * blocks use it instead of following parent links from every block, which
 * costs the nesting depth per block (quadratic on deep programs). */
#include <stdlib.h>
#include <glib.h>

#include "ir.h"
#include "util.h"

/* The parent position of block i, or -1 for block 0 and for a parent that
 * is out of range or i itself. */
static int32_t parent_of(const ir_program *p, size_t i)
{
    if (i == 0)
        return -1;
    int32_t par = p->blocks[i]->parent_idx;
    if (par < 0 || (size_t)par >= p->n_blocks || (size_t)par == i)
        return -1;
    return par;
}

/* rooted[i]: block i's parent chain reaches block 0.  Each chain is walked
 * once: a walk stops at the first block whose answer is known, then the
 * answer is written along the path it took. */
static void mark_rooted(const ir_program *p, ir_tree *t, size_t *path)
{
    enum { UNSEEN = 0, ON_PATH, YES, NO };
    unsigned char *state = xcalloc(p->n_blocks + 1, sizeof(unsigned char));
    if (p->n_blocks)
        state[0] = YES;
    for (size_t i = 0; i < p->n_blocks; i++) {
        size_t n = 0;
        int64_t cur = (int64_t)i;
        while (cur >= 0 && state[cur] == UNSEEN) {
            state[cur] = ON_PATH;
            path[n++] = (size_t)cur;
            cur = parent_of(p, (size_t)cur);
        }
        /* A walk that meets its own path has found a cycle. */
        unsigned char answer = cur >= 0 && state[cur] == YES ? YES : NO;
        while (n)
            state[path[--n]] = answer;
    }
    for (size_t i = 0; i < p->n_blocks; i++)
        t->rooted[i] = state[i] == YES;
    free(state);
}

/* Children of every rooted block, by position, in CSR form. */
static void link_children(const ir_program *p, ir_tree *t)
{
    size_t n = p->n_blocks;
    t->child_start = xcalloc(n + 2, sizeof(size_t));
    t->children = xmalloc_n(n + 1, sizeof(size_t));
    for (size_t i = 1; i < n; i++)
        if (t->rooted[i])
            t->child_start[t->parent[i] + 1]++;
    for (size_t i = 0; i < n; i++)
        t->child_start[i + 1] += t->child_start[i];
    size_t *fill = xmalloc_n(n + 1, sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        fill[i] = t->child_start[i];
    for (size_t i = 1; i < n; i++)
        if (t->rooted[i])
            t->children[fill[t->parent[i]]++] = i;
    free(fill);
}

/* Preorder numbering from block 0 with an explicit stack: block d lies
 * below block a iff enter[a] < enter[d] <= leave[a]. */
static void number_preorder(ir_tree *t, size_t *stack)
{
    size_t n_stack = 0, clock = 0;
    if (!t->n)
        return;
    stack[n_stack++] = 0;
    while (n_stack) {
        size_t b = stack[--n_stack];
        t->enter[b] = clock++;
        t->order[t->n_order++] = b;
        t->depth[b] = b == 0 ? 0 : t->depth[t->parent[b]] + 1;
        /* Pushed in reverse so that children are numbered in index order. */
        for (size_t c = t->child_start[b + 1]; c-- > t->child_start[b];)
            stack[n_stack++] = t->children[c];
    }
    /* leave[b] = the largest enter number in b's subtree: fill bottom-up
     * by walking the preorder backwards. */
    for (size_t k = 0; k < t->n_order; k++)
        t->leave[t->order[k]] = t->enter[t->order[k]];
    for (size_t k = t->n_order; k-- > 1;) {
        size_t b = t->order[k];
        size_t par = (size_t)t->parent[b];
        if (t->leave[b] > t->leave[par])
            t->leave[par] = t->leave[b];
    }
}

ir_tree *ir_tree_build(const ir_program *p)
{
    ir_tree *t = xcalloc(1, sizeof(ir_tree));
    size_t n = p->n_blocks;
    t->n = n;
    t->parent = xmalloc_n(n + 1, sizeof(int32_t));
    t->rooted = xcalloc(n + 1, sizeof(bool));
    t->enter = xcalloc(n + 1, sizeof(size_t));
    t->leave = xcalloc(n + 1, sizeof(size_t));
    t->depth = xcalloc(n + 1, sizeof(size_t));
    t->order = xmalloc_n(n + 1, sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        t->parent[i] = parent_of(p, i);
    size_t *scratch = xmalloc_n(n + 1, sizeof(size_t));
    mark_rooted(p, t, scratch);
    link_children(p, t);
    number_preorder(t, scratch);
    free(scratch);
    return t;
}

void ir_tree_free(ir_tree *t)
{
    if (!t)
        return;
    free(t->parent);
    free(t->rooted);
    free(t->enter);
    free(t->leave);
    free(t->depth);
    free(t->order);
    free(t->child_start);
    free(t->children);
    free(t);
}

bool ir_tree_below(const ir_tree *t, size_t d, size_t a)
{
    if (d >= t->n || a >= t->n || !t->rooted[d] || !t->rooted[a])
        return false;
    return t->enter[a] < t->enter[d] && t->enter[d] <= t->leave[a];
}
