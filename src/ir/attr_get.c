/* attr_get.c - the typed attr getters (ir_op_get_*): each reads one attr
 * through ir_op_read_one_attr (attr.c), which decodes only that attr of
 * an op whose attrs are still bytes, and converts between the numeric
 * kinds as Paddle's own readers tolerate (a BOOLEAN read as an int, an
 * INT as a bool or a float).  Split from attr.c to keep it readable. */
#include "ir.h"

#include "ir_internal.h"

int64_t ir_op_get_int(const ir_op *op, const char *name, int64_t dflt)
{
    ir_attr tmp;
    ir_arena *scratch;
    const ir_attr *at = ir_op_read_one_attr(op, name, &tmp, &scratch);
    int64_t v = dflt;
    switch (at ? at->type : IR_ATTR_STRING) {
    case IR_ATTR_INT: v = at->i; break;
    case IR_ATTR_LONG: v = at->l; break;
    case IR_ATTR_BOOLEAN: v = at->b; break;
    case IR_ATTR_BLOCK: v = at->block_idx; break;
    default: break;
    }
    ir_arena_free(scratch);
    return v;
}

double ir_op_get_float(const ir_op *op, const char *name, double dflt)
{
    ir_attr tmp;
    ir_arena *scratch;
    const ir_attr *at = ir_op_read_one_attr(op, name, &tmp, &scratch);
    double v = dflt;
    switch (at ? at->type : IR_ATTR_STRING) {
    case IR_ATTR_FLOAT: v = at->f; break;
    case IR_ATTR_FLOAT64: v = at->float64; break;
    case IR_ATTR_INT: v = at->i; break;
    case IR_ATTR_LONG: v = (double)at->l; break;
    default: break;
    }
    ir_arena_free(scratch);
    return v;
}

bool ir_op_get_bool(const ir_op *op, const char *name, bool dflt)
{
    ir_attr tmp;
    ir_arena *scratch;
    const ir_attr *at = ir_op_read_one_attr(op, name, &tmp, &scratch);
    bool v = dflt;
    if (at && at->type == IR_ATTR_BOOLEAN)
        v = at->b;
    else if (at && at->type == IR_ATTR_INT)
        v = at->i != 0;
    ir_arena_free(scratch);
    return v;
}

const char *ir_op_get_string(const ir_op *op, const char *name)
{
    ir_attr tmp;
    ir_arena *scratch;
    const ir_attr *at = ir_op_read_one_attr(op, name, &tmp, &scratch);
    const char *v = NULL;
    if (at && at->type == IR_ATTR_STRING)
        v = ir_intern_bytes((const char *)at->s.data, at->s.len);
    ir_arena_free(scratch);
    return v;
}

const char **ir_op_get_names(const ir_op *op, const char *name, size_t *n, ir_arena *a)
{
    ir_attr tmp;
    ir_arena *scratch;
    const ir_attr *at = ir_op_read_one_attr(op, name, &tmp, &scratch);
    const char **out = NULL;
    *n = 0;
    if (at && at->type == IR_ATTR_STRINGS && at->n_strings) {
        out = ir_arena_alloc(a, at->n_strings * sizeof *out);
        for (size_t i = 0; i < at->n_strings; i++)
            out[i] = ir_intern_bytes((const char *)at->strings[i].data, at->strings[i].len);
        *n = at->n_strings;
    }
    ir_arena_free(scratch);
    return out;
}
