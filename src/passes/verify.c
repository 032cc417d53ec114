/* verify.c - structural checks of a program: what `pdtrans check` reports
 * and what the pipeline's gate refuses before the first pass.  Every walk
 * is iterative and linear in blocks + vars + op arguments + attrs, so
 * nesting depth costs neither stack nor quadratic time (see README.md). */
#include "verify.h"

#include <glib.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../ckd.h"
#include "../diag.h"
#include "../ir/env.h"
#include "../ir/pmap.h"
#include "../ir/util.h"
#include "pass.h"

typedef struct {
    const char *name;       /* the file, for messages */
    FILE *out;
    size_t max;             /* stop after this many errors (0: never) */
    size_t errs;
} vrep;

static bool enough(const vrep *r)
{
    return r->max && r->errs >= r->max;
}

static void say(vrep *r, bool error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(vrep *r, bool error, const char *fmt, ...)
{
    if (error) {
        if (enough(r))
            return;
        r->errs++;
    } else if (r->max) {
        return;     /* the gate refuses; warnings are for `check` */
    }
    if (!r->out || pdt_quiet || (!error && pdt_quiet_warnings))
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(r->out, "pdtrans: %s: %s: ", error ? "error" : "warning", r->name);
    vfprintf(r->out, fmt, ap);
    fputc('\n', r->out);
    va_end(ap);
}

static void check_blocks(const ir_program *p, const ir_tree *t, vrep *r)
{
    for (size_t i = 0; i < p->n_blocks && !enough(r); i++) {
        const ir_block *b = p->blocks[i];
        if (b->idx != (int32_t)i)
            say(r, true, "block %zu: idx is %" PRId32 ", expected %zu", i, b->idx, i);
        if (i == 0 && b->parent_idx != -1)
            say(r, false, "block 0: parent_idx is %" PRId32 ", expected -1 (treated as the root)",
                b->parent_idx);
        else if (i > 0 && !t->rooted[i])
            say(r, true,
                "block %zu: parent_idx %" PRId32 " does not lead to block 0 (missing block or cycle)",
                i, b->parent_idx);
    }
}

static void check_var(const ir_block *b, size_t i, const ir_var *var, bool dup, vrep *r)
{
    if (dup && ir_block_find_var(b, var->name) != var)
        say(r, true, "block %zu: var '%s' is declared twice", i, var->name);
    /* Any negative dim is unknown (pdt_verify_note_dims): its product
     * counts it as 1. */
    int64_t numel;
    if (ckd_dims_product(&numel, var->dims, var->n_dims))
        say(r, true, "block %zu: var '%s': the product of its %" PRIu32
            " dims overflows int64", i, var->name, var->n_dims);
}

static void check_vars(const ir_program *p, vrep *r)
{
    for (size_t i = 0; i < p->n_blocks && !enough(r); i++) {
        const ir_block *b = p->blocks[i];
        /* Each live var owns its name in the var map unless a name is
         * declared twice; the counts tell which case this is, so the
         * per-var lookups run only when there is something to report. */
        size_t n_live = 0;
        for (size_t v = 0; v < b->n_vars; v++)
            n_live += !b->vars[v]->removed;
        bool dup = n_live != ir_block_n_var_names(b);
        for (size_t v = 0; v < b->n_vars && !enough(r); v++)
            if (!b->vars[v]->removed)
                check_var(b, i, b->vars[v], dup, r);
    }
}

/* Who names a block first (for the "named twice" message). */
typedef struct {
    int32_t block;
    size_t op;
    const ir_op *o;
    const char *attr;
} namer;

static void check_target(const ir_tree *t, namer *named, size_t i, size_t k, const ir_op *op,
                         const char *attr, int32_t x, vrep *r)
{
    if (x < 0 || (size_t)x >= t->n) {
        say(r, true, "block %zu, op %zu '%s': attr '%s' names missing block %" PRId32, i, k,
            op->type, attr, x);
        return;
    }
    if ((size_t)x == i) {
        say(r, true, "block %zu, op %zu '%s': attr '%s' names block %zu, the op's own block", i,
            k, op->type, attr, i);
        return;
    }
    if (!t->rooted[x])
        return;     /* its parent_idx is reported already */
    if (ir_tree_below(t, i, (size_t)x)) {
        say(r, true,
            "block %zu, op %zu '%s': attr '%s' names block %" PRId32
            ", which encloses block %zu (a cycle)",
            i, k, op->type, attr, x, i);
        return;
    }
    if (!ir_tree_below(t, (size_t)x, i)) {
        say(r, true,
            "block %zu, op %zu '%s': attr '%s' names block %" PRId32
            ", which is not nested in block %zu (parent_idx %" PRId32 ")",
            i, k, op->type, attr, x, i, t->parent[x]);
        return;
    }
    namer *first = &named[x];
    if (first->o) {
        say(r, true,
            "block %zu, op %zu '%s': attr '%s' names block %" PRId32
            ", which block %" PRId32 ", op %zu '%s' already names (attr '%s')",
            i, k, op->type, attr, x, first->block, first->op, first->o->type, first->attr);
        return;
    }
    *first = (namer){(int32_t)i, k, op, attr};
}

/* BLOCK / BLOCKS attrs: each names an existing block nested in the op's
 * own block, and no block is named twice, so that the sub-block walks of
 * the passes visit every block at most once and never loop. */
static void check_block_attrs(const ir_program *p, const ir_tree *t, vrep *r)
{
    namer *named = xcalloc(p->n_blocks + 1, sizeof(namer));
    for (size_t i = 0; i < p->n_blocks && !enough(r); i++) {
        if (!t->rooted[i])
            continue;
        const ir_block *b = p->blocks[i];
        for (size_t k = 0; k < b->n_ops && !enough(r); k++) {
            ir_block_prefetch_op(b, k);
            const ir_op *op = b->ops[k];
            ir_attr_iter it = ir_op_block_attr_iter(op);
            for (const ir_attr *at; (at = ir_attr_next(&it));) {
                if (at->type == IR_ATTR_BLOCK)
                    check_target(t, named, i, k, op, at->name, at->block_idx, r);
                else if (at->type == IR_ATTR_BLOCKS)
                    for (size_t j = 0; j < at->n_blocks_idx; j++)
                        check_target(t, named, i, k, op, at->name, at->blocks_idx[j], r);
            }
        }
    }
    free(named);
}

/* ---- names: every op argument names a var visible from its block ---- */

/* Inputs Paddle resolves from its runtime scope, never from the program:
 * py_reader's queue is made by core.init_lod_tensor_blocking_queue in the
 * Python process, so a saved program names it without declaring it. */
static bool from_runtime_scope(const ir_op *op, const char *slot)
{
    return !strcmp(op->type, "create_py_reader") && !strcmp(slot, "blocking_queue");
}

typedef struct {
    const char *name;
    void *prev;             /* the binding it hid, or NULL */
} undo;

/* What one op's names resolve against. */
typedef struct {
    const pmap *scope;      /* the chain below block 0, bound by the walk */
    const pmap *root;       /* block 0's own var map: its live vars */
    const pmap *anywhere;   /* every name declared in some block */
    const ir_block *fwd;    /* the forward block a grad block runs in */
} names;

/* A grad block runs in the scope of its forward block (the op's Scope
 * input), so it also sees that block's chain, as Paddle's executor does;
 * backward of nested control flow names forward vars that way. */
static bool resolves(const names *nm, const char *arg)
{
    if (pmap_get(nm->scope, arg) || pmap_get(nm->root, arg))
        return true;
    return nm->fwd && pmap_has(nm->anywhere, arg) && ir_block_find_var_recursive(nm->fwd, arg);
}

static void check_args(size_t i, size_t k, const ir_op *op, const ir_slot *slots, size_t n,
                       const char *dir, const names *nm, vrep *r)
{
    /* Paddle's placeholder for "no var here" in grad ops. */
    const char *empty = IR_WK(EMPTY);
    for (size_t s = 0; s < n; s++)
        for (size_t a = 0; a < slots[s].n_args && !enough(r); a++) {
            const char *arg = slots[s].args[a];
            if (arg != empty && !resolves(nm, arg) && !from_runtime_scope(op, slots[s].name))
                say(r, true, "block %zu, op %zu '%s': %s '%s' names unknown var '%s'", i, k,
                    op->type, dir, slots[s].name, arg);
        }
}

/* Ops ahead, in stages: a program's vars map at 1M ops is tens of MiB,
 * and checking an op's args one probe after another waited for each miss
 * in turn.  Op k + 16 is loaded (ir_block_prefetch_op); at k + 8 the
 * lines after it, where a decoded op's slots and arg arrays lie in the
 * arena; at k + 2 the slots of its args in block 0's var map, which
 * resolves them (ir_block_prefetch_args).  always_inline: see
 * pmap_prefetch. */
enum { PREFETCH_AHEAD = 2, PREFETCH_SLOTS = 8 };

static inline __attribute__((always_inline)) void prefetch_slots(const ir_block *b, size_t k)
{
    if (k + PREFETCH_SLOTS >= b->n_ops)
        return;
    const char *op = (const char *)b->ops[k + PREFETCH_SLOTS];
    __builtin_prefetch(op + 64);
    __builtin_prefetch(op + 128);
    __builtin_prefetch(op + 192);
}

static void all_names(const ir_program *p, pmap *out)
{
    for (size_t i = 0; i < p->n_blocks; i++)
        for (size_t v = 0; v < p->blocks[i]->n_vars; v++)
            if (!p->blocks[i]->vars[v]->removed)
                pmap_add(out, p->blocks[i]->vars[v]->name);
}

static bool has_grad_blocks(const ir_program *p)
{
    for (size_t i = 0; i < p->n_blocks; i++)
        if (p->blocks[i]->has_forward_block_idx)
            return true;
    return false;
}

/* A preorder walk over the tree with an explicit stack: entering a block
 * binds its vars over the enclosing ones (noting what they hid), leaving
 * it restores them, so each lookup is two hash probes at any depth.  Block
 * 0, the root, is not bound: its own var map answers for it (it holds
 * exactly its live vars), and copying it cost a fifth of transpile's time
 * (every pass is verified).  A name bound below hides block 0's, as the
 * scope is asked first. */
static void check_names(const ir_program *p, const ir_tree *t, const bool *reach, vrep *r)
{
    pmap scope = PMAP_INIT, anywhere = PMAP_INIT;
    if (has_grad_blocks(p))
        all_names(p, &anywhere);
    /* fwd[d]: the forward block of the nearest grad block on the stack. */
    const ir_block **fwd = xcalloc(t->n + 1, sizeof(const ir_block *));
    GArray *log = g_array_new(FALSE, FALSE, sizeof(undo));
    size_t *stack = xmalloc_n(t->n + 1, sizeof(size_t));
    size_t *cursor = xmalloc_n(t->n + 1, sizeof(size_t));
    size_t *mark = xmalloc_n(t->n + 1, sizeof(size_t));
    size_t depth = 0;
    if (t->n) {
        stack[0] = 0;
        cursor[0] = (size_t)-1;
        depth = 1;
    }
    while (depth && !enough(r)) {
        size_t top = depth - 1, bi = stack[top];
        const ir_block *b = p->blocks[bi];
        if (cursor[top] == (size_t)-1) {
            mark[top] = log->len;
            for (size_t v = 0; bi != 0 && v < b->n_vars; v++) {
                const ir_var *var = b->vars[v];
                if (var->removed)
                    continue;
                undo u = {var->name, pmap_get(&scope, var->name)};
                g_array_append_val(log, u);
                pmap_put(&scope, var->name, (void *)var);
            }
            /* Names in a block no op runs are not resolved by anything:
             * Paddle's get_trainer_program leaves the sub-blocks of the LR
             * conditional_blocks it deletes behind, naming deleted vars. */
            fwd[top] = b->has_forward_block_idx ? ir_program_block(p, b->forward_block_idx)
                       : top                    ? fwd[top - 1]
                                                : NULL;
            names nm = {&scope, p->blocks[0]->var_map, &anywhere, fwd[top]};
            for (size_t k = 0; reach[bi] && k < b->n_ops; k++) {
                const ir_op *op = b->ops[k];
                ir_block_prefetch_op(b, k);
                prefetch_slots(b, k);
                if (k + PREFETCH_AHEAD < b->n_ops)
                    ir_block_prefetch_args(p->blocks[0], b->ops[k + PREFETCH_AHEAD]);
                check_args(bi, k, op, ir_op_ins(op), op->n_inputs, "input", &nm, r);
                check_args(bi, k, op, ir_op_outs(op), op->n_outputs, "output", &nm, r);
            }
            cursor[top] = t->child_start[bi];
        }
        if (cursor[top] < t->child_start[bi + 1]) {
            stack[depth] = t->children[cursor[top]++];
            cursor[depth++] = (size_t)-1;
            continue;
        }
        for (size_t u = log->len; u-- > mark[top];) {
            const undo *e = &g_array_index(log, undo, u);
            if (e->prev)
                pmap_put(&scope, e->name, e->prev);
            else
                pmap_remove(&scope, e->name);
        }
        g_array_set_size(log, mark[top]);
        depth--;
    }
    free(stack);
    free(cursor);
    free(mark);
    free(fwd);
    g_array_free(log, TRUE);
    pmap_free(&scope);
    pmap_free(&anywhere);
}

static size_t verify(const ir_program *p, const char *name, FILE *out, size_t max)
{
    vrep r = {.name = name, .out = out, .max = max};
    if (p->n_blocks == 0) {
        say(&r, true, "program has no blocks");
        return r.errs;
    }
    ir_tree *t = ir_tree_build(p);
    check_blocks(p, t, &r);
    check_vars(p, &r);
    check_block_attrs(p, t, &r);
    if (!enough(&r)) {
        bool *reach = ir_program_reachable_blocks(p);
        check_names(p, t, reach, &r);
        free(reach);
    }
    ir_tree_free(t);
    return r.errs;
}

size_t pdt_verify_max(const ir_program *p, const char *name, FILE *out, size_t max)
{
    return verify(p, name, out, max);
}

size_t pdt_verify(const ir_program *p, const char *name, FILE *out)
{
    return verify(p, name, out, 0);
}

int pass_verify(pdt_ctx *ctx)
{
    return pdt_verify(ctx->main, ctx->main_path, stderr) ? PDT_EBADINPUT : PDT_OK;
}

/* The programs noted already, by name, in the env (src/ir/env.h):
 * `verify transpile` reads its MAIN once per trainer, and each read passes
 * the gate. */
typedef struct {
    char **names;
    size_t n;
} noted_names;

static void free_noted(void *p)
{
    noted_names *nn = p;
    for (size_t i = 0; i < nn->n; i++)
        free(nn->names[i]);
    free(nn->names);
    free(nn);
}

static bool first_note_for(const char *name)
{
    noted_names *nn = pdt_env_get(PDT_ENV_VERIFY_NOTED);
    if (!nn)
        nn = pdt_env_put(PDT_ENV_VERIFY_NOTED, xcalloc(1, sizeof *nn), free_noted);
    for (size_t i = 0; i < nn->n; i++)
        if (!strcmp(nn->names[i], name))
            return false;
    nn->names = xrealloc_n(nn->names, nn->n + 1, sizeof *nn->names);
    nn->names[nn->n++] = xstrdup(name);
    return true;
}

size_t pdt_verify_note_dims(const ir_program *p, const char *name, FILE *out)
{
    size_t n = 0, first_block = 0;
    const ir_var *first = NULL;
    for (size_t i = 0; i < p->n_blocks; i++)
        for (size_t v = 0; v < p->blocks[i]->n_vars; v++) {
            const ir_var *var = p->blocks[i]->vars[v];
            if (var->removed || !ir_var_has_dims_below_minus_one(var))
                continue;
            if (!n++) {
                first = var;
                first_block = i;
            }
        }
    if (!n || !out || pdt_quiet || pdt_quiet_warnings || !first_note_for(name))
        return n;
    char dims[128], more[64] = "";
    if (n > 1)
        snprintf(more, sizeof more, " (%zu more var%s dims below -1)", n - 1,
                 n > 2 ? "s have" : " has");
    fprintf(out,
            "pdtrans: note: %s: block %zu: var '%s' has dims %s%s; a dim below -1 is an "
            "unknown batch times a known extent, as Paddle's compile-time InferShape writes it: "
            "pdtrans takes it as unknown, as Paddle's runtime does, and keeps it as it is\n",
            name, first_block, first->name,
            ir_dims_text(first->dims, first->n_dims, dims, sizeof dims), more);
    return n;
}

size_t pdt_verify_notes(const ir_program *p, const char *name, FILE *out)
{
    size_t n = 0;
    pdt_verify_note_dims(p, name, out);
    for (size_t i = 0; i < p->n_blocks; i++) {
        const ir_block *b = p->blocks[i];
        for (size_t k = 0; k < b->n_ops; k++) {
            const ir_op *op = b->ops[k];
            for (size_t s = 0; s < op->n_inputs; s++) {
                if (!from_runtime_scope(op, ir_op_ins(op)[s].name))
                    continue;
                for (size_t a = 0; a < ir_op_ins(op)[s].n_args; a++) {
                    if (ir_block_find_var_recursive(b, ir_op_ins(op)[s].args[a]))
                        continue;
                    if (out && !pdt_quiet)
                        fprintf(out,
                                "pdtrans: note: %s: block %zu, op %zu '%s': input '%s' names "
                                "'%s', which Paddle takes from its runtime scope (not declared "
                                "in the program)\n",
                                name, i, k, op->type, ir_op_ins(op)[s].name, ir_op_ins(op)[s].args[a]);
                    n++;
                }
            }
        }
    }
    return n;
}
