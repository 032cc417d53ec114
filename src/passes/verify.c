/* verify.c - structural checks of a program (see `pdtrans check`). */
#include "verify.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "pass.h"

static const char *PREFIX = "pdtrans: ";

static void report(FILE *out, const char *name, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#include <stdarg.h>
static void report(FILE *out, const char *name, const char *kind, const char *fmt, ...)
{
    if (!out || pdt_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(out, "%s%s: %s: ", PREFIX, kind, name);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    va_end(ap);
}

/* Block i's ancestor chain reaches block 0 without repeating a block. */
static bool reaches_root(const ir_program *p, size_t i)
{
    size_t hops = 0;
    int32_t cur = (int32_t)i;
    while (cur != 0) {
        if (hops++ > p->n_blocks)
            return false;
        int32_t parent = p->blocks[cur]->parent_idx;
        if (parent < 0 || (size_t)parent >= p->n_blocks || parent == cur)
            return false;
        cur = parent;
    }
    return true;
}

/* Inputs Paddle resolves from its runtime scope, never from the program:
 * py_reader's queue is made by core.init_lod_tensor_blocking_queue in the
 * Python process, so a saved program names it without declaring it. */
static bool from_runtime_scope(const ir_op *op, const char *slot)
{
    return !strcmp(op->type, "create_py_reader") && !strcmp(slot, "blocking_queue");
}

static size_t check_args(const ir_program *p, const ir_block *b, size_t k,
                         const ir_op *op, const ir_slot *slots, size_t n,
                         const char *dir, const char *name, FILE *out)
{
    size_t errs = 0;
    /* Paddle's placeholder for "no var here" in grad ops. */
    const char *empty = IR_NAME("@EMPTY@");
    for (size_t s = 0; s < n; s++)
        for (size_t a = 0; a < slots[s].n_args; a++) {
            const char *arg = slots[s].args[a];
            if (arg == empty || from_runtime_scope(op, slots[s].name))
                continue;
            if (!ir_block_find_var_recursive(b, arg)) {
                report(out, name, "error",
                       "block %d, op %zu '%s': %s '%s' names unknown var '%s'",
                       b->idx, k, op->type, dir, slots[s].name, arg);
                errs++;
            }
        }
    (void)p;
    return errs;
}

static size_t check_block_attrs(const ir_program *p, const ir_block *b, size_t k,
                                const ir_op *op, const char *name, FILE *out)
{
    size_t errs = 0;
    for (size_t i = 0; i < op->n_attrs; i++) {
        const ir_attr *at = &op->attrs[i];
        if (at->type == IR_ATTR_BLOCK && !ir_program_block(p, at->block_idx)) {
            report(out, name, "error", "block %d, op %zu '%s': attr '%s' names missing block %d",
                   b->idx, k, op->type, at->name, at->block_idx);
            errs++;
        }
        if (at->type == IR_ATTR_BLOCKS)
            for (size_t j = 0; j < at->n_blocks_idx; j++)
                if (!ir_program_block(p, at->blocks_idx[j])) {
                    report(out, name, "error",
                           "block %d, op %zu '%s': attr '%s' names missing block %d",
                           b->idx, k, op->type, at->name, at->blocks_idx[j]);
                    errs++;
                }
    }
    return errs;
}

size_t pdt_verify(const ir_program *p, const char *name, FILE *out)
{
    size_t errs = 0;
    if (p->n_blocks == 0) {
        report(out, name, "error", "program has no blocks");
        return 1;
    }
    for (size_t i = 0; i < p->n_blocks; i++) {
        const ir_block *b = p->blocks[i];
        if (b->idx != (int32_t)i) {
            report(out, name, "error", "block %zu: idx is %d, expected %zu", i, b->idx, i);
            errs++;
        }
        if (i == 0) {
            if (b->parent_idx != -1)
                report(out, name, "warning",
                       "block 0: parent_idx is %d, expected -1 (treated as the root)",
                       b->parent_idx);
        } else if (!reaches_root(p, i)) {
            report(out, name, "error",
                   "block %zu: parent_idx %d does not lead to block 0 (missing block or cycle)",
                   i, b->parent_idx);
            errs++;
        }
    }
    /* Names in a block no op runs are not resolved by anything: Paddle's
     * get_trainer_program leaves the sub-blocks of the LR conditional_blocks
     * it deletes behind, naming vars it also deleted. */
    bool *reach = ir_program_reachable_blocks(p);
    for (size_t i = 0; i < p->n_blocks; i++) {
        const ir_block *b = p->blocks[i];
        /* Each live var owns its name in the var map unless a name is
         * declared twice; the counts tell which case this is, so the
         * per-var lookups run only when there is something to report. */
        size_t n_live = 0;
        for (size_t v = 0; v < b->n_vars; v++)
            n_live += !b->vars[v]->removed;
        bool dup = n_live != ir_block_n_var_names(b);
        for (size_t v = 0; v < b->n_vars; v++) {
            const ir_var *var = b->vars[v];
            if (var->removed)
                continue;
            if (dup && ir_block_find_var(b, var->name) != var) {
                report(out, name, "error", "block %zu: var '%s' is declared twice", i, var->name);
                errs++;
            }
            for (size_t d = 0; d < var->n_dims; d++)
                if (var->dims[d] < -1) {
                    report(out, name, "error", "block %zu: var '%s' has dim %lld < -1", i,
                           var->name, (long long)var->dims[d]);
                    errs++;
                    break;
                }
        }
        /* Only blocks that reach the root have a well-defined scope chain. */
        if (!reaches_root(p, i))
            continue;
        for (size_t k = 0; k < b->n_ops; k++) {
            const ir_op *op = b->ops[k];
            if (reach[i]) {
                errs += check_args(p, b, k, op, op->inputs, op->n_inputs, "input", name, out);
                errs += check_args(p, b, k, op, op->outputs, op->n_outputs, "output", name, out);
            }
            errs += check_block_attrs(p, b, k, op, name, out);
        }
    }
    g_free(reach);
    return errs;
}

int pass_verify(pdt_ctx *ctx)
{
    return pdt_verify(ctx->main, ctx->main_path, stderr) ? PDT_EBADINPUT : PDT_OK;
}

size_t pdt_verify_notes(const ir_program *p, const char *name, FILE *out)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_blocks; i++) {
        const ir_block *b = p->blocks[i];
        for (size_t k = 0; k < b->n_ops; k++) {
            const ir_op *op = b->ops[k];
            for (size_t s = 0; s < op->n_inputs; s++) {
                if (!from_runtime_scope(op, op->inputs[s].name))
                    continue;
                for (size_t a = 0; a < op->inputs[s].n_args; a++)
                    if (!ir_block_find_var_recursive(b, op->inputs[s].args[a])) {
                        report(out, name, "note",
                               "block %zu, op %zu '%s': input '%s' names '%s', which Paddle "
                               "takes from its runtime scope (not declared in the program)",
                               i, k, op->type, op->inputs[s].name, op->inputs[s].args[a]);
                        n++;
                    }
            }
        }
    }
    return n;
}
