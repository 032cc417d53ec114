/* k_misc.c - tensor creation and plumbing: fill_constant, fill_any_like,
 * uniform/gaussian_random, sum, scale, cast, assign, increment,
 * logical_not, shape, seed, dropout, conditional_block, select_input. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"

static double cast_to(int dtype, double v)
{
    if (dtype == IR_BOOL)
        return v != 0;
    return ex_dtype_is_int(dtype) ? trunc(v) : v;
}

static bool attr_shape(ex_ctx *x, const ir_op *op, int64_t *dims, int *nd)
{
    size_t n = ex_attr_ints(op, "shape", dims, EX_MAX_DIMS);
    if (ex_n_in(op, "ShapeTensor") || ex_n_in(op, "ShapeTensorList"))
        return ex_fail(x, "shapes from tensors are not supported");
    char text[128];
    const char *out = ex_out_name(op, "Out", 0);
    for (size_t i = 0; i < n; i++)
        if (dims[i] < 0)
            return ex_fail(x, "var '%s': attr 'shape' is %s, not all known; the executor needs "
                           "a concrete extent to allocate it", out ? out : "",
                           ir_dims_text(dims, n, text, sizeof text));
    *nd = (int)n;
    return true;
}

static bool k_fill_constant(ex_ctx *x, const ir_op *op)
{
    int64_t dims[EX_MAX_DIMS];
    int nd;
    if (!attr_shape(x, op, dims, &nd))
        return false;
    int dtype = (int)ir_op_get_int(op, "dtype", IR_FP32);
    double v = ir_op_get_float(op, "value", 0);
    const char *sv = ir_op_get_string(op, "str_value");
    if (sv && *sv) {
        char *end;
        double p = strtod(sv, &end);
        if (!*end)
            v = p;
    }
    bool ok;
    const ex_tensor *vt = ex_in_opt(x, op, "ValueTensor", &ok);
    if (!ok)
        return false;
    if (vt)
        v = vt->data[0];
    ex_tensor *t = ex_tensor_new(dtype, nd, dims);
    for (size_t i = 0; i < t->numel; i++)
        t->data[i] = cast_to(dtype, v);
    ex_put(x, op, "Out", 0, t);
    return true;
}

static bool k_fill_any_like(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X");
    if (!X)
        return false;
    int dtype = (int)ir_op_get_int(op, "dtype", -1);
    double v = !strcmp(op->type, "fill_zeros_like") ? 0 : ir_op_get_float(op, "value", 0);
    ex_tensor *t = ex_tensor_like(X);
    t->kind = EX_DENSE;
    if (dtype >= 0)
        t->dtype = dtype;
    for (size_t i = 0; i < t->numel; i++)
        t->data[i] = cast_to(t->dtype, v);
    ex_put(x, op, "Out", 0, t);
    return true;
}

/* A nonzero `seed` attr gives the op its own stream (as Paddle seeds its
 * engine from it); seed 0 draws from the executor's stream. */
static ex_rng *op_rng(ex_ctx *x, const ir_op *op, ex_rng *local)
{
    int64_t seed = ir_op_get_int(op, "seed", 0);
    if (!seed)
        return &x->rng;
    ex_rng_seed(local, (uint64_t)seed);
    return local;
}

static bool random_op(ex_ctx *x, const ir_op *op, bool gaussian)
{
    int64_t dims[EX_MAX_DIMS];
    int nd;
    if (!attr_shape(x, op, dims, &nd))
        return false;
    ex_rng local, *r = op_rng(x, op, &local);
    ex_tensor *t = ex_tensor_new((int)ir_op_get_int(op, "dtype", IR_FP32), nd, dims);
    double a = ir_op_get_float(op, gaussian ? "mean" : "min", gaussian ? 0 : -1);
    double b = ir_op_get_float(op, gaussian ? "std" : "max", 1);
    for (size_t i = 0; i < t->numel; i++)
        t->data[i] = gaussian ? a + b * ex_rng_normal(r) : a + (b - a) * ex_rng_uniform(r);
    ex_put(x, op, "Out", 0, t);
    return true;
}

static bool k_uniform_random(ex_ctx *x, const ir_op *op) { return random_op(x, op, false); }
static bool k_gaussian_random(ex_ctx *x, const ir_op *op) { return random_op(x, op, true); }

/* sum: SELECTED_ROWS inputs alone give SELECTED_ROWS (rows concatenated,
 * as Paddle's SumOp does); any dense input makes the result dense. */
static bool k_sum(ex_ctx *x, const ir_op *op)
{
    size_t n = ex_n_in(op, "X");
    const ex_tensor **in = xcalloc(n + 1, sizeof(const ex_tensor *));
    size_t k = 0, total_rows = 0;
    bool all_rows = true;
    for (size_t i = 0; i < n; i++) {
        const ir_slot *s = ir_op_input(op, "X");
        if (!strcmp(s->args[i], "@EMPTY@"))
            continue;
        if (!(in[k] = ex_in_at(x, op, "X", i))) {
            free(in);
            return false;
        }
        all_rows &= in[k]->kind == EX_ROWS;
        if (in[k]->kind == EX_ROWS)
            total_rows += (size_t)in[k]->dims[0];
        k++;
    }
    if (!k) {
        free(in);
        return ex_fail(x, "no inputs");
    }
    ex_tensor *out;
    if (all_rows) {
        const ex_tensor *f = in[0];
        out = ex_rows_new(f->dtype, total_rows, NULL, f->nd - 1, f->dims + 1, f->height);
        size_t w = 1, r = 0;
        for (int d = 1; d < f->nd; d++)
            w *= (size_t)f->dims[d];
        for (size_t i = 0; i < k; i++) {
            size_t m = (size_t)in[i]->dims[0];
            if (m && in[i]->numel / m != w) {
                ex_tensor_free(out);
                free(in);
                return ex_fail(x, "SELECTED_ROWS inputs differ in width");
            }
            memcpy(out->rows + r, in[i]->rows, m * sizeof *out->rows);
            memcpy(out->data + r * w, in[i]->data, m * w * sizeof *out->data);
            r += m;
        }
    } else {
        const ex_tensor *shape = NULL;
        for (size_t i = 0; i < k && !shape; i++)
            if (in[i]->kind == EX_DENSE)
                shape = in[i];
        out = ex_tensor_like(shape);
        for (size_t i = 0; i < k; i++) {
            ex_tensor *d = in[i]->kind == EX_ROWS ? ex_densify(in[i]) : NULL;
            const ex_tensor *v = d ? d : in[i];
            if (v->numel != out->numel) {
                ex_tensor_free(d);
                ex_tensor_free(out);
                free(in);
                return ex_fail(x, "input %zu has %zu elements, not %zu", i, v->numel, out->numel);
            }
            for (size_t j = 0; j < out->numel; j++)
                out->data[j] += v->data[j];
            ex_tensor_free(d);
        }
    }
    free(in);
    ex_put(x, op, "Out", 0, out);
    return true;
}

static bool k_scale(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X");
    bool ok;
    const ex_tensor *st = X ? ex_in_opt(x, op, "ScaleTensor", &ok) : NULL;
    if (!X || !ok)
        return false;
    double s = st ? st->data[0] : ir_op_get_float(op, "scale", 1.0);
    double b = ir_op_get_float(op, "bias", 0.0);
    bool after = ir_op_get_bool(op, "bias_after_scale", true);
    ex_tensor *out = ex_tensor_copy(X);
    for (size_t i = 0; i < out->numel; i++)
        out->data[i] = cast_to(out->dtype, after ? s * X->data[i] + b : s * (X->data[i] + b));
    ex_put(x, op, "Out", 0, out);
    return true;
}

static bool k_cast(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X");
    if (!X)
        return false;
    ex_tensor *out = ex_tensor_copy(X);
    out->dtype = (int)ir_op_get_int(op, "out_dtype", X->dtype);
    for (size_t i = 0; i < out->numel; i++)
        out->data[i] = cast_to(out->dtype, out->data[i]);
    ex_put(x, op, "Out", 0, out);
    return true;
}

static bool k_assign(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X");
    if (!X)
        return false;
    ex_put(x, op, "Out", 0, ex_tensor_copy(X));
    return true;
}

static bool k_assign_value(ex_ctx *x, const ir_op *op)
{
    int64_t dims[EX_MAX_DIMS];
    int nd;
    if (!attr_shape(x, op, dims, &nd))
        return false;
    ex_tensor *t = ex_tensor_new((int)ir_op_get_int(op, "dtype", IR_FP32), nd, dims);
    static const char *const keys[] = {"fp32_values", "int32_values", "int64_values", "bool_values"};
    size_t got = 0;
    for (size_t k = 0; k < 4 && !got; k++) {
        const ir_attr *a = ir_op_attr(op, keys[k]);
        if (!a)
            continue;
        int ty = a->type;
        size_t n = ty == IR_ATTR_FLOATS ? a->n_floats : ty == IR_ATTR_INTS ? a->n_ints
                 : ty == IR_ATTR_LONGS ? a->n_longs : ty == IR_ATTR_BOOLEANS ? a->n_bools : 0;
        if (!n)
            continue;
        if (n != t->numel) {
            ex_tensor_free(t);
            return ex_fail(x, "attr '%s' has %zu values for %zu elements", keys[k], n, t->numel);
        }
        for (size_t i = 0; i < n; i++)
            t->data[i] = ty == IR_ATTR_FLOATS ? a->floats[i] : ty == IR_ATTR_INTS ? a->ints[i]
                       : ty == IR_ATTR_LONGS ? (double)a->longs[i] : a->bools[i];
        got = n;
    }
    ex_put(x, op, "Out", 0, t);
    return true;
}

static bool k_increment(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X");
    if (!X)
        return false;
    ex_tensor *out = ex_tensor_copy(X);
    double step = ir_op_get_float(op, "step", 1.0);
    for (size_t i = 0; i < out->numel; i++)
        out->data[i] = cast_to(out->dtype, out->data[i] + step);
    ex_put(x, op, "Out", 0, out);
    return true;
}

static bool k_logical_not(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X");
    if (!X)
        return false;
    ex_tensor *out = ex_tensor_copy(X);
    out->dtype = IR_BOOL;
    for (size_t i = 0; i < out->numel; i++)
        out->data[i] = X->data[i] == 0;
    ex_put(x, op, "Out", 0, out);
    return true;
}

static bool k_shape(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "Input");
    if (!X)
        return false;
    int64_t n = X->nd;
    ex_tensor *out = ex_tensor_new(IR_INT32, 1, &n);
    for (int i = 0; i < X->nd; i++)
        out->data[i] = (double)X->dims[i];
    ex_put(x, op, "Out", 0, out);
    return true;
}

static bool k_seed(ex_ctx *x, const ir_op *op)
{
    int64_t one = 1;
    ex_tensor *out = ex_tensor_new(IR_INT32, 1, &one);
    int64_t s = ir_op_get_int(op, "seed", 0);
    out->data[0] = s ? (double)s : (double)(ex_rng_next(&x->rng) >> 40);
    ex_put(x, op, "Out", 0, out);
    return true;
}

/* dropout: the mask keeps an element when a uniform draw is >= p.  With a
 * Seed input or fix_seed the draws come from that seed, else from the
 * executor's stream (reset per run, so repeated runs agree). */
static bool k_dropout(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X");
    bool ok;
    const ex_tensor *seed_t = X ? ex_in_opt(x, op, "Seed", &ok) : NULL;
    if (!X || !ok)
        return false;
    double p = ir_op_get_float(op, "dropout_prob", 0.5);
    const char *impl = ir_op_get_string(op, "dropout_implementation");
    bool upscale = impl && !strcmp(impl, "upscale_in_train");
    ex_tensor *out = ex_tensor_copy(X), *mask = ex_tensor_like(X);
    mask->dtype = IR_UINT8;
    if (ir_op_get_bool(op, "is_test", false)) {
        for (size_t i = 0; i < out->numel; i++)
            out->data[i] = upscale ? X->data[i] : X->data[i] * (1 - p);
        ex_tensor_free(mask);
        ex_put(x, op, "Out", 0, out);
        return true;
    }
    ex_rng local, *r = &x->rng;
    if (seed_t || ir_op_get_bool(op, "fix_seed", false)) {
        ex_rng_seed(&local, (uint64_t)(seed_t ? seed_t->data[0] : (double)ir_op_get_int(op, "seed", 0)));
        r = &local;
    }
    for (size_t i = 0; i < out->numel; i++) {
        mask->data[i] = ex_rng_uniform(r) >= p;
        out->data[i] = X->data[i] * mask->data[i] * (upscale ? (p < 1 ? 1 / (1 - p) : 0) : 1);
    }
    ex_put(x, op, "Out", 0, out);
    ex_put(x, op, "Mask", 0, mask);
    return true;
}

static bool k_dropout_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *M = ex_in(x, op, "Mask"), *d = M ? ex_in(x, op, "Out@GRAD") : NULL;
    if (!d)
        return false;
    double p = ir_op_get_float(op, "dropout_prob", 0.5);
    const char *impl = ir_op_get_string(op, "dropout_implementation");
    double k = impl && !strcmp(impl, "upscale_in_train") ? (p < 1 ? 1 / (1 - p) : 0) : 1;
    ex_tensor *dx = ex_tensor_copy(d);
    for (size_t i = 0; i < dx->numel; i++)
        dx->data[i] = d->data[i] * M->data[i] * k;
    ex_put(x, op, "X@GRAD", 0, dx);
    return true;
}

/* conditional_block runs its sub-block in the same scope (Paddle makes a
 * child scope; vars written there that the parent reads are persistable
 * or declared in the parent, so one scope computes the same values). */
static bool k_conditional_block(ex_ctx *x, const ir_op *op)
{
    bool scalar = ir_op_get_bool(op, "is_scalar_condition", false), run = true;
    size_t n = ex_n_in(op, "Cond");
    for (size_t i = 0; i < n; i++) {
        const ex_tensor *c = ex_in_at(x, op, "Cond", i);
        if (!c)
            return false;
        if (scalar)
            run = c->numel > 0 && c->data[0] != 0;
        else
            run = run && c->numel > 0;
    }
    if (!run)
        return true;
    const ir_attr *a = ir_op_attr(op, "sub_block");
    if (!a || a->type != IR_ATTR_BLOCK)
        return ex_fail(x, "attr 'sub_block' is missing");
    return ex_run_block(x, a->block_idx, NULL);
}

/* Out = X[index], the index read from the one-element input SLOT; WHAT
 * names the index in the failure ("mask 3 has no X"). */
static bool out_is_x_at(ex_ctx *x, const ir_op *op, const char *slot, const char *what)
{
    const ex_tensor *idx = ex_in(x, op, slot);
    if (!idx)
        return false;
    int64_t i = idx->numel ? (int64_t)idx->data[0] : -1;
    if (i < 0 || (size_t)i >= ex_n_in(op, "X"))
        return ex_fail(x, "%s %lld has no X", what, (long long)i);
    const ex_tensor *t = ex_in_at(x, op, "X", (size_t)i);
    if (!t)
        return false;
    ex_put(x, op, "Out", 0, ex_tensor_copy(t));
    return true;
}

/* Out = X[Mask] (select_input_op.cc: paddle.static.nn.cond's merge of its
 * [false, true] branch values; only the selected one was written). */
static bool k_select_input(ex_ctx *x, const ir_op *op)
{
    return out_is_x_at(x, op, "Mask", "mask");
}

/* Out = X[TrainerId] (DC-ASGD's per-trainer parameter backups). */
static bool k_ref_by_trainer_id(ex_ctx *x, const ir_op *op)
{
    return out_is_x_at(x, op, "TrainerId", "trainer id");
}

/* conditional_block_grad: the grad sub-block runs when the forward one
 * did (same scope, so it reads the forward block's vars); every
 * Input@GRAD it did not produce, and all of them when the condition was
 * false, are zeros shaped like the input. */
static bool k_conditional_block_grad(ex_ctx *x, const ir_op *op)
{
    bool scalar = ir_op_get_bool(op, "is_scalar_condition", false), run = true;
    for (size_t i = 0; i < ex_n_in(op, "Cond"); i++) {
        const ex_tensor *c = ex_in_at(x, op, "Cond", i);
        if (!c)
            return false;
        run = scalar ? c->numel > 0 && c->data[0] != 0 : run && c->numel > 0;
    }
    size_t n = ex_n_out(op, "Input@GRAD");
    for (size_t i = 0; i < n; i++) {
        const char *g = ex_out_name(op, "Input@GRAD", i);
        if (g)      /* a value from an earlier run must not count as produced */
            ex_scope_remove(x->scope, g);
    }
    if (run) {
        int64_t blk = ir_op_get_int(op, "sub_block", -1);
        if (blk < 0)
            return ex_fail(x, "attr 'sub_block' is missing");
        if (!ex_run_block(x, (int32_t)blk, NULL))
            return false;
    }
    for (size_t i = 0; i < n; i++) {
        const char *g = ex_out_name(op, "Input@GRAD", i);
        if (!g || (run && ex_scope_get(x->scope, g)))
            continue;
        const ex_tensor *in = ex_in_at(x, op, "Input", i);
        if (!in)
            return false;
        ex_tensor *z = ex_tensor_like(in);
        z->kind = EX_DENSE;
        ex_scope_put(x->scope, g, z);
    }
    return true;
}

/* release_memory's op: Paddle's delete_var erases its X vars from the
 * scope (names with no value are fine). */
static bool k_delete_var(ex_ctx *x, const ir_op *op)
{
    const ir_slot *s = ir_op_input(op, "X");
    for (size_t i = 0; s && i < s->n_args; i++)
        ex_scope_remove(x->scope, s->args[i]);
    return true;
}

const ex_kernel ex_kernels_misc[] = {
    {"delete_var", k_delete_var},
    {"conditional_block_grad", k_conditional_block_grad},
    {"ref_by_trainer_id", k_ref_by_trainer_id},
    {"fill_constant", k_fill_constant},
    {"fill_any_like", k_fill_any_like}, {"fill_zeros_like", k_fill_any_like},
    {"uniform_random", k_uniform_random}, {"gaussian_random", k_gaussian_random},
    {"sum", k_sum}, {"scale", k_scale}, {"cast", k_cast},
    {"assign", k_assign}, {"assign_value", k_assign_value},
    {"increment", k_increment}, {"logical_not", k_logical_not}, {"select_input", k_select_input},
    {"shape", k_shape}, {"seed", k_seed},
    {"dropout", k_dropout}, {"dropout_grad", k_dropout_grad},
    {"conditional_block", k_conditional_block},
    {NULL, NULL},
};
