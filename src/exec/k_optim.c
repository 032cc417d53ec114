/* k_optim.c - optimizer updates, after Paddle's
 * paddle/fluid/operators/optimizers/ *_op.h.  A SELECTED_ROWS grad is
 * applied row by row by sgd and by lazy adam; the others see its dense
 * form (rows absent from it have gradient 0, as Paddle's sparse functors
 * treat them). */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "exec.h"

typedef struct {
    const ex_tensor *p, *g, *lr;
    ex_tensor *dense_g;     /* owned: g densified */
    double rate;
} opt_in;

static bool opt_begin(ex_ctx *x, const ir_op *op, opt_in *o)
{
    memset(o, 0, sizeof *o);
    o->p = ex_in(x, op, "Param");
    o->g = o->p ? ex_in(x, op, "Grad") : NULL;
    o->lr = o->g ? ex_in(x, op, "LearningRate") : NULL;
    if (!o->lr)
        return false;
    if (o->lr->numel < 1)
        return ex_fail(x, "LearningRate is empty");
    o->rate = o->lr->data[0];
    if (o->g->kind == EX_ROWS) {
        if (o->g->height != (o->p->nd ? o->p->dims[0] : 0))
            return ex_fail(x, "Grad's height %lld differs from Param's %lld rows",
                           (long long)o->g->height, o->p->nd ? (long long)o->p->dims[0] : 0LL);
        for (int64_t i = 0; i < o->g->dims[0]; i++)
            if (o->g->rows[i] < 0 || o->g->rows[i] >= o->g->height)
                return ex_fail(x, "Grad row %lld is outside Param", (long long)o->g->rows[i]);
        o->dense_g = ex_densify(o->g);
    }
    const ex_tensor *g = o->dense_g ? o->dense_g : o->g;
    if (g->numel != o->p->numel) {
        ex_tensor_free(o->dense_g);
        return ex_fail(x, "Grad has %zu elements, Param %zu", g->numel, o->p->numel);
    }
    return true;
}

static const double *opt_grad(const opt_in *o)
{
    return (o->dense_g ? o->dense_g : o->g)->data;
}

/* An accumulator input, checked against Param's size; copied for output. */
static ex_tensor *acc(ex_ctx *x, const ir_op *op, const char *slot, const opt_in *o, bool *ok)
{
    if (!*ok)
        return NULL;
    const ex_tensor *t = ex_in(x, op, slot);
    if (!t || t->numel != o->p->numel) {
        if (t)
            ex_fail(x, "%s has %zu elements, Param %zu", slot, t->numel, o->p->numel);
        *ok = false;
        return NULL;
    }
    return ex_tensor_copy(t);
}

static double scalar_in(ex_ctx *x, const ir_op *op, const char *slot, bool *ok)
{
    if (!*ok)
        return 0;
    const ex_tensor *t = ex_in(x, op, slot);
    if (!t || !t->numel) {
        *ok = t ? ex_fail(x, "%s is empty", slot) : false;
        return 0;
    }
    return t->data[0];
}

/* A pserver's distributed-table shard (SELECTED_ROWS Param): each grad
 * row updates the slot holding its id, as Paddle's sgd does with
 * AutoGrownIndex(row, false). */
static bool sgd_table(ex_ctx *x, const ir_op *op, const ex_tensor *P)
{
    const ex_tensor *g = ex_in(x, op, "Grad"), *lr = g ? ex_in(x, op, "LearningRate") : NULL;
    if (!lr)
        return false;
    if (g->kind != EX_ROWS || !lr->numel)
        return ex_fail(x, "a SELECTED_ROWS Param needs a SELECTED_ROWS Grad and a LearningRate");
    size_t n = (size_t)g->dims[0], w = n ? g->numel / n : 0, pw = P->dims[0] ? P->numel / (size_t)P->dims[0] : 0;
    if (n && w != pw)
        return ex_fail(x, "Grad rows have %zu values, Param rows %zu", w, pw);
    size_t *at = ex_rows_locate(P, g->rows, n);
    ex_tensor *p = ex_tensor_copy(P);
    for (size_t i = 0; i < n; i++) {
        if (at[i] == SIZE_MAX) {
            free(at);
            ex_tensor_free(p);
            return ex_fail(x, "Grad row %lld is not in Param's rows", (long long)g->rows[i]);
        }
        for (size_t j = 0; j < w; j++)
            p->data[at[i] * w + j] -= lr->data[0] * g->data[i * w + j];
    }
    free(at);
    ex_put(x, op, "ParamOut", 0, p);
    return true;
}

static bool k_sgd(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *P = ex_in(x, op, "Param");
    if (P && P->kind == EX_ROWS)
        return sgd_table(x, op, P);
    opt_in o;
    if (!opt_begin(x, op, &o))
        return false;
    ex_tensor *p = ex_tensor_copy(o.p);
    const double *g = opt_grad(&o);
    for (size_t i = 0; i < p->numel; i++)
        p->data[i] -= o.rate * g[i];
    ex_tensor_free(o.dense_g);
    ex_put(x, op, "ParamOut", 0, p);
    return true;
}

static bool k_momentum(ex_ctx *x, const ir_op *op)
{
    opt_in o;
    if (!opt_begin(x, op, &o))
        return false;
    bool ok = true;
    ex_tensor *v = acc(x, op, "Velocity", &o, &ok);
    if (!ok) {
        ex_tensor_free(o.dense_g);
        return false;
    }
    double mu = ir_op_get_float(op, "mu", 0.9);
    bool nesterov = ir_op_get_bool(op, "use_nesterov", false);
    ex_tensor *p = ex_tensor_copy(o.p);
    const double *g = opt_grad(&o);
    for (size_t i = 0; i < p->numel; i++) {
        v->data[i] = mu * v->data[i] + g[i];
        p->data[i] -= nesterov ? (g[i] + mu * v->data[i]) * o.rate : o.rate * v->data[i];
    }
    ex_tensor_free(o.dense_g);
    ex_put(x, op, "ParamOut", 0, p);
    ex_put(x, op, "VelocityOut", 0, v);
    return true;
}

static bool k_lars_momentum(ex_ctx *x, const ir_op *op)
{
    opt_in o;
    if (!opt_begin(x, op, &o))
        return false;
    bool ok = true;
    ex_tensor *v = acc(x, op, "Velocity", &o, &ok);
    if (!ok) {
        ex_tensor_free(o.dense_g);
        return false;
    }
    double mu = ir_op_get_float(op, "mu", 0.9), coeff = ir_op_get_float(op, "lars_coeff", 0.001);
    double wd = 0, eps = ir_op_get_float(op, "epsilon", 0);
    if (!ex_attr_floats(op, "lars_weight_decay", &wd, 1))
        wd = 0.0005;
    const double *g = opt_grad(&o);
    double pn = 0, gn = 0;
    for (size_t i = 0; i < o.p->numel; i++) {
        pn += o.p->data[i] * o.p->data[i];
        gn += g[i] * g[i];
    }
    pn = sqrt(pn);
    gn = sqrt(gn);
    double local = pn > 0 && gn > 0 ? o.rate * coeff * pn / (gn + wd * pn + eps) : o.rate;
    ex_tensor *p = ex_tensor_copy(o.p);
    for (size_t i = 0; i < p->numel; i++) {
        v->data[i] = mu * v->data[i] + local * (g[i] + wd * o.p->data[i]);
        p->data[i] -= v->data[i];
    }
    ex_tensor_free(o.dense_g);
    ex_put(x, op, "ParamOut", 0, p);
    ex_put(x, op, "VelocityOut", 0, v);
    return true;
}

/* Writes beta_pow * beta to a *PowOut slot when the op has one. */
static void put_pow(ex_ctx *x, const ir_op *op, const char *in, const char *out, double beta)
{
    const ex_tensor *t = ex_out_name(op, out, 0) ? ex_scope_get(x->scope, ir_op_input1(op, in)) : NULL;
    if (!t)
        return;
    ex_tensor *r = ex_tensor_copy(t);
    for (size_t i = 0; i < r->numel; i++)
        r->data[i] *= beta;
    ex_put(x, op, out, 0, r);
}

static bool k_adam(ex_ctx *x, const ir_op *op)
{
    opt_in o;
    if (!opt_begin(x, op, &o))
        return false;
    bool ok = true;
    ex_tensor *m1 = acc(x, op, "Moment1", &o, &ok), *m2 = acc(x, op, "Moment2", &o, &ok);
    double b1p = scalar_in(x, op, "Beta1Pow", &ok), b2p = scalar_in(x, op, "Beta2Pow", &ok);
    if (!ok) {
        ex_tensor_free(m1);
        ex_tensor_free(m2);
        ex_tensor_free(o.dense_g);
        return false;
    }
    double b1 = ir_op_get_float(op, "beta1", 0.9), b2 = ir_op_get_float(op, "beta2", 0.999);
    double eps = ir_op_get_float(op, "epsilon", 1e-8);
    double lr = o.rate * sqrt(1 - b2p) / (1 - b1p);
    bool lazy = ir_op_get_bool(op, "lazy_mode", false) && o.g->kind == EX_ROWS;
    bool *touched = NULL;
    size_t w = o.p->nd && o.p->dims[0] ? o.p->numel / (size_t)o.p->dims[0] : 0;
    if (lazy) {
        touched = xcalloc(o.p->numel + 1, sizeof(bool));
        for (int64_t r = 0; r < o.g->dims[0]; r++)
            for (size_t j = 0; j < w; j++)
                touched[(size_t)o.g->rows[r] * w + j] = true;
    }
    ex_tensor *p = ex_tensor_copy(o.p);
    const double *g = opt_grad(&o);
    for (size_t i = 0; i < p->numel; i++) {
        if (touched && !touched[i])
            continue;
        m1->data[i] = b1 * m1->data[i] + (1 - b1) * g[i];
        m2->data[i] = b2 * m2->data[i] + (1 - b2) * g[i] * g[i];
        p->data[i] -= lr * (m1->data[i] / (sqrt(m2->data[i]) + eps * sqrt(1 - b2p)));
    }
    free(touched);
    put_pow(x, op, "Beta1Pow", "Beta1PowOut", b1);
    put_pow(x, op, "Beta2Pow", "Beta2PowOut", b2);
    ex_tensor_free(o.dense_g);
    ex_put(x, op, "ParamOut", 0, p);
    ex_put(x, op, "Moment1Out", 0, m1);
    ex_put(x, op, "Moment2Out", 0, m2);
    return true;
}

static bool k_adamax(ex_ctx *x, const ir_op *op)
{
    opt_in o;
    if (!opt_begin(x, op, &o))
        return false;
    bool ok = true;
    ex_tensor *m = acc(x, op, "Moment", &o, &ok), *inf = acc(x, op, "InfNorm", &o, &ok);
    double b1p = scalar_in(x, op, "Beta1Pow", &ok);
    if (!ok) {
        ex_tensor_free(m);
        ex_tensor_free(inf);
        ex_tensor_free(o.dense_g);
        return false;
    }
    double b1 = ir_op_get_float(op, "beta1", 0.9), b2 = ir_op_get_float(op, "beta2", 0.999);
    double eps = ir_op_get_float(op, "epsilon", 1e-8), lr = o.rate / (1 - b1p);
    ex_tensor *p = ex_tensor_copy(o.p);
    const double *g = opt_grad(&o);
    for (size_t i = 0; i < p->numel; i++) {
        m->data[i] = b1 * m->data[i] + (1 - b1) * g[i];
        inf->data[i] = fmax(b2 * inf->data[i] + eps, fabs(g[i]));
        p->data[i] -= lr * m->data[i] / inf->data[i];
    }
    ex_tensor_free(o.dense_g);
    ex_put(x, op, "ParamOut", 0, p);
    ex_put(x, op, "MomentOut", 0, m);
    ex_put(x, op, "InfNormOut", 0, inf);
    return true;
}

static bool adagrad_like(ex_ctx *x, const ir_op *op, bool decayed)
{
    opt_in o;
    if (!opt_begin(x, op, &o))
        return false;
    bool ok = true;
    ex_tensor *m = acc(x, op, "Moment", &o, &ok);
    if (!ok) {
        ex_tensor_free(o.dense_g);
        return false;
    }
    double eps = ir_op_get_float(op, "epsilon", 1e-6), decay = ir_op_get_float(op, "decay", 0.95);
    ex_tensor *p = ex_tensor_copy(o.p);
    const double *g = opt_grad(&o);
    for (size_t i = 0; i < p->numel; i++) {
        m->data[i] = decayed ? decay * m->data[i] + (1 - decay) * g[i] * g[i]
                             : m->data[i] + g[i] * g[i];
        p->data[i] -= o.rate * g[i] / (sqrt(m->data[i]) + eps);
    }
    ex_tensor_free(o.dense_g);
    ex_put(x, op, "ParamOut", 0, p);
    ex_put(x, op, "MomentOut", 0, m);
    return true;
}

static bool k_adagrad(ex_ctx *x, const ir_op *op) { return adagrad_like(x, op, false); }
static bool k_decayed_adagrad(ex_ctx *x, const ir_op *op) { return adagrad_like(x, op, true); }

static bool k_rmsprop(ex_ctx *x, const ir_op *op)
{
    opt_in o;
    if (!opt_begin(x, op, &o))
        return false;
    bool ok = true, centered = ir_op_get_bool(op, "centered", false);
    ex_tensor *mom = acc(x, op, "Moment", &o, &ok), *ms = acc(x, op, "MeanSquare", &o, &ok);
    ex_tensor *mg = centered ? acc(x, op, "MeanGrad", &o, &ok) : NULL;
    if (!ok) {
        ex_tensor_free(mom);
        ex_tensor_free(ms);
        ex_tensor_free(mg);
        ex_tensor_free(o.dense_g);
        return false;
    }
    double eps = ir_op_get_float(op, "epsilon", 1e-10), rho = ir_op_get_float(op, "decay", 0.9);
    double mu = ir_op_get_float(op, "momentum", 0);
    ex_tensor *p = ex_tensor_copy(o.p);
    const double *g = opt_grad(&o);
    for (size_t i = 0; i < p->numel; i++) {
        ms->data[i] = rho * ms->data[i] + (1 - rho) * g[i] * g[i];
        double denom = ms->data[i] + eps;
        if (mg) {
            mg->data[i] = rho * mg->data[i] + (1 - rho) * g[i];
            denom -= mg->data[i] * mg->data[i];
        }
        mom->data[i] = mu * mom->data[i] + o.rate * g[i] / sqrt(denom);
        p->data[i] -= mom->data[i];
    }
    ex_tensor_free(o.dense_g);
    ex_put(x, op, "ParamOut", 0, p);
    ex_put(x, op, "MomentOut", 0, mom);
    ex_put(x, op, "MeanSquareOut", 0, ms);
    if (mg)
        ex_put(x, op, "MeanGradOut", 0, mg);
    return true;
}

static bool k_ftrl(ex_ctx *x, const ir_op *op)
{
    opt_in o;
    if (!opt_begin(x, op, &o))
        return false;
    bool ok = true;
    ex_tensor *sq = acc(x, op, "SquaredAccumulator", &o, &ok);
    ex_tensor *lin = acc(x, op, "LinearAccumulator", &o, &ok);
    if (!ok) {
        ex_tensor_free(sq);
        ex_tensor_free(lin);
        ex_tensor_free(o.dense_g);
        return false;
    }
    double l1 = ir_op_get_float(op, "l1", 0), l2 = ir_op_get_float(op, "l2", 0);
    double pw = ir_op_get_float(op, "lr_power", -0.5);
    ex_tensor *p = ex_tensor_copy(o.p);
    const double *g = opt_grad(&o);
    for (size_t i = 0; i < p->numel; i++) {
        double acc_new = sq->data[i] + g[i] * g[i], pv = o.p->data[i];
        double gain = pw == -0.5 ? (sqrt(acc_new) - sqrt(sq->data[i])) / o.rate
                                 : (pow(acc_new, -pw) - pow(sq->data[i], -pw)) / o.rate;
        lin->data[i] += g[i] - gain * pv;
        double xv = (lin->data[i] > 0 ? l1 : lin->data[i] < 0 ? -l1 : 0) - lin->data[i];
        double y = (pw == -0.5 ? sqrt(acc_new) : pow(acc_new, -pw)) / o.rate + 2 * l2;
        p->data[i] = fabs(lin->data[i]) > l1 ? xv / y : 0;
        sq->data[i] = acc_new;
    }
    ex_tensor_free(o.dense_g);
    ex_put(x, op, "ParamOut", 0, p);
    ex_put(x, op, "SquaredAccumOut", 0, sq);
    ex_put(x, op, "LinearAccumOut", 0, lin);
    return true;
}

const ex_kernel ex_kernels_optim[] = {
    {"sgd", k_sgd}, {"momentum", k_momentum}, {"lars_momentum", k_lars_momentum},
    {"adam", k_adam}, {"adamax", k_adamax}, {"adagrad", k_adagrad},
    {"decayed_adagrad", k_decayed_adagrad}, {"rmsprop", k_rmsprop}, {"ftrl", k_ftrl},
    {NULL, NULL},
};
