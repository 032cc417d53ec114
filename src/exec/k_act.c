/* k_act.c - activations and other unary ops, softmax, clip; with grads. */
#include <math.h>

#include "exec.h"

typedef double (*unary_fn)(double v, const ir_op *op);

static bool unary(ex_ctx *x, const ir_op *op, unary_fn f)
{
    const ex_tensor *X = ex_in(x, op, "X");
    if (!X)
        return false;
    ex_tensor *out = ex_tensor_copy(X);
    for (size_t i = 0; i < out->numel; i++)
        out->data[i] = f(X->data[i], op);
    ex_put(x, op, "Out", 0, out);
    return true;
}

/* dX = dOut * g(v), v read from `from` (X or Out). */
static bool unary_grad(ex_ctx *x, const ir_op *op, const char *from, unary_fn g)
{
    const ex_tensor *V = ex_in(x, op, from), *d = V ? ex_in(x, op, "Out@GRAD") : NULL;
    if (!d)
        return false;
    if (d->numel != V->numel)
        return ex_fail(x, "Out@GRAD and %s differ in size", from);
    ex_tensor *dx = ex_tensor_like(V);
    dx->kind = EX_DENSE;
    for (size_t i = 0; i < dx->numel; i++)
        dx->data[i] = d->data[i] * g(V->data[i], op);
    ex_put(x, op, "X@GRAD", 0, dx);
    return true;
}

static double fd_relu(double v, const ir_op *op) { (void)op; return v > 0 ? v : 0; }
static double gd_relu(double o, const ir_op *op) { (void)op; return o > 0 ? 1 : 0; }
static double fd_sigmoid(double v, const ir_op *op) { (void)op; return 1 / (1 + exp(-v)); }
static double gd_sigmoid(double o, const ir_op *op) { (void)op; return o * (1 - o); }
static double fd_tanh(double v, const ir_op *op) { (void)op; return tanh(v); }
static double gd_tanh(double o, const ir_op *op) { (void)op; return 1 - o * o; }
static double fd_square(double v, const ir_op *op) { (void)op; return v * v; }
static double gd_square(double v, const ir_op *op) { (void)op; return 2 * v; }
static double fd_sqrt(double v, const ir_op *op) { (void)op; return sqrt(v); }
static double gd_sqrt(double o, const ir_op *op) { (void)op; return 0.5 / o; }
static double fd_exp(double v, const ir_op *op) { (void)op; return exp(v); }
static double gd_exp(double o, const ir_op *op) { (void)op; return o; }
static double fd_log(double v, const ir_op *op) { (void)op; return log(v); }
static double gd_log(double v, const ir_op *op) { (void)op; return 1 / v; }
static double fd_abs(double v, const ir_op *op) { (void)op; return fabs(v); }
static double gd_abs(double v, const ir_op *op) { (void)op; return v > 0 ? 1 : v < 0 ? -1 : 0; }
static double fd_floor(double v, const ir_op *op) { (void)op; return floor(v); }
static double fd_ceil(double v, const ir_op *op) { (void)op; return ceil(v); }
static double fd_sign(double v, const ir_op *op) { (void)op; return v > 0 ? 1 : v < 0 ? -1 : 0; }
static double fd_leaky(double v, const ir_op *op)
{
    return v > 0 ? v : ir_op_get_float(op, "alpha", 0.02) * v;
}
static double gd_leaky(double v, const ir_op *op)
{
    return v > 0 ? 1 : ir_op_get_float(op, "alpha", 0.02);
}
static double fd_clip(double v, const ir_op *op)
{
    double lo = ir_op_get_float(op, "min", 0), hi = ir_op_get_float(op, "max", 0);
    return v < lo ? lo : v > hi ? hi : v;
}
static double gd_clip(double v, const ir_op *op)
{
    return v > ir_op_get_float(op, "min", 0) && v < ir_op_get_float(op, "max", 0) ? 1 : 0;
}

#define ACT(name, dep)                                                                     \
    static bool k_##name(ex_ctx *x, const ir_op *op) { return unary(x, op, fd_##name); }   \
    static bool k_##name##_grad(ex_ctx *x, const ir_op *op) { return unary_grad(x, op, dep, gd_##name); }
ACT(relu, "Out")
ACT(sigmoid, "Out")
ACT(tanh, "Out")
ACT(square, "X")
ACT(sqrt, "Out")
ACT(exp, "Out")
ACT(log, "X")
ACT(abs, "X")
ACT(leaky, "X")
ACT(clip, "X")
static bool k_floor(ex_ctx *x, const ir_op *op) { return unary(x, op, fd_floor); }
static bool k_ceil(ex_ctx *x, const ir_op *op) { return unary(x, op, fd_ceil); }
static bool k_sign(ex_ctx *x, const ir_op *op) { return unary(x, op, fd_sign); }

/* outer x n x inner view around `axis`.  An empty tensor gets outer 0:
 * with n 0 the loops over outer x inner would run up to 2^63 times over
 * nothing, work the --max-work count (elements built) never sees
 * (tests/fuzz/crashes/README G). */
static void axis_split(const ex_tensor *t, int axis, size_t *outer, size_t *n, size_t *inner)
{
    *outer = *inner = 1;
    for (int i = 0; i < axis; i++)
        *outer *= (size_t)t->dims[i];
    *n = (size_t)t->dims[axis];
    for (int i = axis + 1; i < t->nd; i++)
        *inner *= (size_t)t->dims[i];
    if (!t->numel)
        *outer = 0;
}

static bool k_softmax(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X");
    if (!X)
        return false;
    int axis;
    if (!ex_attr_axis(x, op, "axis", -1, X->nd, false, &axis))
        return false;
    size_t outer, n, inner;
    axis_split(X, axis, &outer, &n, &inner);
    ex_tensor *out = ex_tensor_copy(X);
    for (size_t o = 0; o < outer; o++)
        for (size_t in = 0; in < inner; in++) {
            double *p = out->data + o * n * inner + in, mx = -INFINITY, s = 0;
            for (size_t j = 0; j < n; j++)
                mx = fmax(mx, p[j * inner]);
            for (size_t j = 0; j < n; j++)
                s += (p[j * inner] = exp(p[j * inner] - mx));
            for (size_t j = 0; j < n; j++)
                p[j * inner] /= s;
        }
    ex_put(x, op, "Out", 0, out);
    return true;
}

static bool k_softmax_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *O = ex_in(x, op, "Out"), *d = O ? ex_in(x, op, "Out@GRAD") : NULL;
    if (!d)
        return false;
    int axis;
    if (!ex_attr_axis(x, op, "axis", -1, O->nd, false, &axis))
        return false;
    size_t outer, n, inner;
    axis_split(O, axis, &outer, &n, &inner);
    ex_tensor *dx = ex_tensor_like(O);
    for (size_t o = 0; o < outer; o++)
        for (size_t in = 0; in < inner; in++) {
            size_t base = o * n * inner + in;
            double dot = 0;
            for (size_t j = 0; j < n; j++)
                dot += O->data[base + j * inner] * d->data[base + j * inner];
            for (size_t j = 0; j < n; j++)
                dx->data[base + j * inner] =
                    O->data[base + j * inner] * (d->data[base + j * inner] - dot);
        }
    ex_put(x, op, "X@GRAD", 0, dx);
    return true;
}

const ex_kernel ex_kernels_act[] = {
    {"relu", k_relu}, {"relu_grad", k_relu_grad},
    {"sigmoid", k_sigmoid}, {"sigmoid_grad", k_sigmoid_grad},
    {"tanh", k_tanh}, {"tanh_grad", k_tanh_grad},
    {"square", k_square}, {"square_grad", k_square_grad},
    {"sqrt", k_sqrt}, {"sqrt_grad", k_sqrt_grad},
    {"exp", k_exp}, {"exp_grad", k_exp_grad},
    {"log", k_log}, {"log_grad", k_log_grad},
    {"abs", k_abs}, {"abs_grad", k_abs_grad},
    {"leaky_relu", k_leaky}, {"leaky_relu_grad", k_leaky_grad},
    {"clip", k_clip}, {"clip_grad", k_clip_grad},
    {"floor", k_floor}, {"ceil", k_ceil}, {"sign", k_sign},
    {"softmax", k_softmax}, {"softmax_grad", k_softmax_grad},
    {NULL, NULL},
};
