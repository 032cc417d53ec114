/* print_ops.c - see print_ops.h. */
#include "print_ops.h"

#include <glib.h>
#include <string.h>

#include "attr_format.h"

/* Role names joined with '|', as Paddle's OpRole bits combine. */
static void print_role(FILE *out, int role)
{
    static const struct { int bit; const char *name; } bits[] = {
        {IR_ROLE_BACKWARD, "backward"}, {IR_ROLE_OPTIMIZE, "optimize"},
        {IR_ROLE_RPC, "rpc"}, {IR_ROLE_DIST, "dist"}, {IR_ROLE_LRSCHED, "lrsched"},
        {IR_ROLE_LOSS, "loss"}, {IR_ROLE_NOT_SPECIFIED, "not_specified"}};
    if (role < 0) {
        fputs("(-)", out);
        return;
    }
    fputc('(', out);
    bool any = false;
    for (size_t i = 0; i < sizeof bits / sizeof *bits; i++)
        if (role & bits[i].bit) {
            fprintf(out, "%s%s", any ? "|" : "", bits[i].name);
            any = true;
            role &= ~bits[i].bit;
        }
    if (role)
        fprintf(out, "%s%d", any ? "|" : "", role);
    else if (!any)
        fputs("forward", out);
    fputc(')', out);
}

static void print_slots(FILE *out, const ir_slot *slots, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(out, " %s=", slots[i].name);
        for (size_t k = 0; k < slots[i].n_args; k++)
            fprintf(out, "%s%s", k ? "," : "", slots[i].args[k]);
    }
}

/* " NAME=VALUE" for each attr of one group: the op's own attrs
 * (framework false) or the framework ones, in the op's order. */
static void print_attr_group(GString *g, const ir_op *op, bool framework, bool no_callstack)
{
    const ir_attr *attrs = ir_op_attrs(op);
    for (size_t i = 0; i < op->n_attrs; i++) {
        const ir_attr *a = &attrs[i];
        if (ir_attr_is_framework(a->name) != framework)
            continue;
        bool stack = !strcmp(a->name, "op_callstack");
        if (stack && no_callstack)
            continue;
        g_string_append_printf(g, " %s=", a->name);
        if (stack && a->type == IR_ATTR_STRINGS)
            g_string_append_printf(g, "<%zu frames>", a->n_strings);
        else
            ir_attr_format(g, a);
    }
}

static void print_attrs(FILE *out, const ir_op *op, bool no_callstack)
{
    GString *g = g_string_new(NULL);
    print_attr_group(g, op, false, no_callstack);
    print_attr_group(g, op, true, no_callstack);
    fputs(g->str, out);
    g_string_free(g, TRUE);
}

void ir_print_ops(FILE *out, const ir_program *p)
{
    ir_print_ops_with(out, p, &(ir_print_ops_opts){0});
}

void ir_print_ops_with(FILE *out, const ir_program *p, const ir_print_ops_opts *o)
{
    for (size_t b = 0; b < p->n_blocks; b++) {
        const ir_block *blk = p->blocks[b];
        for (size_t i = 0; i < blk->n_ops; i++) {
            const ir_op *op = blk->ops[i];
            fprintf(out, "%zu:%zu %s", b, i, op->type);
            print_slots(out, ir_op_ins(op), op->n_inputs);
            fputs(" ->", out);
            print_slots(out, ir_op_outs(op), op->n_outputs);
            fputc(' ', out);
            print_role(out, ir_op_role(op));
            if (o->attrs)
                print_attrs(out, op, o->no_callstack);
            fputc('\n', out);
        }
    }
}
