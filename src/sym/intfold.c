/* intfold.c - int64 [1] values folded exactly (run.h): a step counter's
 * `fill_constant`, `increment` and `sum`, and `ref_by_trainer_id`'s choice
 * of one input by a known trainer id.  An async job's counter is the
 * pservers' sum of per-trainer counters that Paddle's notify handler
 * raises, a different chain of ops from single-process training's
 * `increment` for the same count: only as numbers (sym_int) do the two
 * compare, and then the learning rate built on them is one term
 * (lr_decay.c).  Anything else stays an uninterpreted op. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

/* fill_constant of dtype int64 and shape [1] with no tensor inputs: its
 * value (str_value when set, as Paddle's kernel reads it). */
static bool fill_value(const ir_op *op, int64_t *v)
{
    static const char *const tensor_ins[] = {"ValueTensor", "ShapeTensor", "ShapeTensorList", NULL};
    for (size_t k = 0; tensor_ins[k]; k++) {
        const ir_slot *s = ir_op_input(op, tensor_ins[k]);
        if (s && s->n_args)
            return false;
    }
    ir_attr *shape = ir_op_attr(op, "shape");
    bool one = shape && ((shape->type == IR_ATTR_INTS && shape->n_ints == 1 && shape->ints[0] == 1) ||
                         (shape->type == IR_ATTR_LONGS && shape->n_longs == 1 &&
                          shape->longs[0] == 1));
    if (!one || ir_op_get_int(op, "dtype", -1) != IR_INT64)
        return false;
    const char *sv = ir_op_get_string(op, "str_value");
    if (sv && *sv) {
        char *end;
        errno = 0;
        long long x = strtoll(sv, &end, 10);
        if (errno == 0 && !*end) {
            *v = x;
            return true;
        }
        double d = strtod(sv, &end);
        if (*end || !(d > -9.2e18 && d < 9.2e18) || d != (double)(int64_t)d)
            return false;
        *v = (int64_t)d;
        return true;
    }
    double d = ir_op_get_float(op, "value", 0.0);
    if (!(d > -9.2e18 && d < 9.2e18) || d != (double)(int64_t)d)
        return false;
    *v = (int64_t)d;
    return true;
}

/* The sum of x's args when each is a known value, else false. */
static bool arg_values(sym_ctx *c, sym_proc *p, ir_block *b, const ir_slot *x, int64_t *sum)
{
    *sum = 0;
    for (uint32_t k = 0; x && k < x->n_args; k++) {
        int64_t v;
        if (!sym_int_value(sym_read(c, p, b, x->args[k]), &v) ||
            __builtin_add_overflow(*sum, v, sum))
            return false;
    }
    return x && x->n_args;
}

/* ref_by_trainer_id: Out is X[TrainerId] (Paddle's kernel copies it). */
static bool ref_by_trainer_id(sym_ctx *c, sym_proc *p, ir_block *b, ir_op *op,
                              const sym_site *site)
{
    const ir_slot *x = ir_op_input(op, "X");
    const char *id = ir_op_input1(op, "TrainerId"), *out = ir_op_output1(op, "Out");
    int64_t k;
    if (!x || !id || !out || !sym_int_value(sym_read(c, p, b, id), &k) || k < 0 ||
        k >= (int64_t)x->n_args)
        return false;
    sym_write(p, out, sym_read(c, p, b, x->args[k]), site);
    return true;
}

bool sym_fold_int(sym_ctx *c, sym_proc *p, ir_block *b, ir_op *op, const sym_site *site)
{
    const char *t = op->type, *out = ir_op_output1(op, "Out");
    int64_t v;
    if (!out || !*out)
        return false;
    if (!strcmp(t, "fill_constant")) {
        if (!fill_value(op, &v))
            return false;
    } else if (!strcmp(t, "increment")) {
        const ir_slot *x = ir_op_input(op, "X");
        double step = ir_op_get_float(op, "step", 1.0);
        if (!x || x->n_args != 1 || !arg_values(c, p, b, x, &v) ||
            step != (double)(int64_t)step || __builtin_add_overflow(v, (int64_t)step, &v))
            return false;
    } else if (!strcmp(t, "sum")) {
        if (!arg_values(c, p, b, ir_op_input(op, "X"), &v))
            return false;
    } else if (!strcmp(t, "ref_by_trainer_id")) {
        return ref_by_trainer_id(c, p, b, op, site);
    } else {
        return false;
    }
    sym_write(p, out, sym_int(c->st, v), site);
    return true;
}
