/* k_nce.c - nce (noise-contrastive estimation) and nce_grad, after
 * Paddle's paddle/fluid/operators/nce_op.h and math/sampler.cc.
 *
 * Each sample row holds the true labels, then num_neg_samples negatives:
 * the attr custom_neg_classes when given (what Paddle's own tests use),
 * else draws from the sampler.  Paddle builds a new sampler seeded with
 * the `seed` attr on every run, so every run draws the same negatives;
 * here too (from ex_rng, not Paddle's mt19937_64, so the draws differ from
 * Paddle's).  With o = sigmoid(x.w[c] + b[c]) and q = P(c) * num_neg:
 * a true label costs -log(o / (o + q)), a negative -log(q / (o + q)). */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "exec.h"

typedef struct {
    int kind;               /* 0 uniform, 1 log-uniform */
    int64_t range;          /* num_total_classes - 1 */
    ex_rng rng;
} nce_sampler;

static bool sampler_init(ex_ctx *x, const ir_op *op, nce_sampler *s)
{
    s->kind = (int)ir_op_get_int(op, "sampler", 0);
    s->range = ir_op_get_int(op, "num_total_classes", 0) - 1;
    ex_rng_seed(&s->rng, (uint64_t)ir_op_get_int(op, "seed", 0));
    if (s->range < 1)
        return ex_fail(x, "attr 'num_total_classes' must be at least 2");
    if (s->kind != 0 && s->kind != 1)
        return ex_fail(x, "sampler %d is not simulated (uniform 0 and log-uniform 1 are)", s->kind);
    return true;
}

static int64_t sampler_draw(nce_sampler *s)
{
    double u = ex_rng_uniform(&s->rng);
    if (s->kind == 0)
        return (int64_t)(u * (double)(s->range + 1));
    return ((int64_t)exp(u * log((double)s->range + 1)) - 1) % s->range;
}

static double sampler_prob(const nce_sampler *s, int64_t v)
{
    if (s->kind == 0)
        return 1.0 / (double)(s->range + 1);
    return log((v + 2.0) / (v + 1.0)) / log((double)s->range + 1);
}

typedef struct {
    const ex_tensor *in, *label, *w, *bias, *sw;
    size_t batch, dim, n_true, n_neg, width;  /* width = n_true + n_neg */
} nce_args;

static bool nce_inputs(ex_ctx *x, const ir_op *op, nce_args *a)
{
    bool ok = true;
    memset(a, 0, sizeof *a);
    a->in = ex_in(x, op, "Input");
    a->label = a->in ? ex_in(x, op, "Label") : NULL;
    a->w = a->label ? ex_in(x, op, "Weight") : NULL;
    a->bias = a->w ? ex_in_opt(x, op, "Bias", &ok) : NULL;
    a->sw = a->w && ok ? ex_in_opt(x, op, "SampleWeight", &ok) : NULL;
    if (!a->w || !ok)
        return false;
    if (a->in->nd != 2 || a->w->nd != 2 || a->in->dims[1] != a->w->dims[1])
        return ex_fail(x, "Input and Weight must be 2-dim with the same width");
    a->batch = (size_t)a->in->dims[0];
    a->dim = (size_t)a->in->dims[1];
    a->n_true = a->label->nd == 2 ? (size_t)a->label->dims[1] : 1;
    if (a->label->numel != a->batch * a->n_true)
        return ex_fail(x, "Label has %zu values for %zu rows", a->label->numel, a->batch);
    a->n_neg = (size_t)ir_op_get_int(op, "num_neg_samples", 10);
    a->width = a->n_true + a->n_neg;
    return true;
}

static bool class_ok(ex_ctx *x, const nce_args *a, int64_t c)
{
    return (c >= 0 && c < a->w->dims[0]) ||
           ex_fail(x, "class %lld is outside Weight's %lld rows", (long long)c, (long long)a->w->dims[0]);
}

static bool k_nce(ex_ctx *x, const ir_op *op)
{
    nce_args a;
    nce_sampler s;
    if (!nce_inputs(x, op, &a) || !sampler_init(x, op, &s))
        return false;
    int64_t custom[1024];
    size_t n_custom = ex_attr_ints(op, "custom_neg_classes", custom, 1024);
    if (n_custom && n_custom != a.n_neg)
        return ex_fail(x, "%zu custom_neg_classes for num_neg_samples %zu", n_custom, a.n_neg);
    int64_t dims[2] = {(int64_t)a.batch, (int64_t)a.width}, one[2] = {(int64_t)a.batch, 1};
    ex_tensor *labels = ex_tensor_new(IR_INT64, 2, dims), *logits = ex_tensor_new(a.in->dtype, 2, dims);
    ex_tensor *cost = ex_tensor_new(a.in->dtype, 2, one);
    bool ok = true;
    /* a dot product of dim per sample: batch x width x dim, a matrix
     * product's count (num_neg_samples and dim are not tied by a tensor) */
    ex_work3(a.batch, a.width, a.dim);
    for (size_t i = 0; ok && i < a.batch; i++)
        for (size_t j = 0; ok && j < a.width; j++) {
            int64_t c = j < a.n_true ? (int64_t)a.label->data[i * a.n_true + j]
                      : n_custom ? custom[j - a.n_true] : sampler_draw(&s);
            labels->data[i * a.width + j] = (double)c;
            ok = class_ok(x, &a, c);
            if (!ok)
                break;
            double z = a.bias ? a.bias->data[c] : 0;
            for (size_t k = 0; k < a.dim; k++)
                z += a.in->data[i * a.dim + k] * a.w->data[(size_t)c * a.dim + k];
            double o = 1 / (1 + exp(-z)), q = sampler_prob(&s, c) * (double)a.n_neg;
            logits->data[i * a.width + j] = o;
            cost->data[i] += (a.sw ? a.sw->data[i] : 1) * (j < a.n_true ? -log(o / (o + q)) : -log(q / (o + q)));
        }
    if (!ok) {
        ex_tensor_free(labels);
        ex_tensor_free(logits);
        ex_tensor_free(cost);
        return false;
    }
    ex_put(x, op, "Cost", 0, cost);
    ex_put(x, op, "SampleLogits", 0, logits);
    ex_put(x, op, "SampleLabels", 0, labels);
    return true;
}

/* d cost / d logit of each sample, times Cost@GRAD of its row. */
static double *sample_grads(ex_ctx *x, const ir_op *op, const nce_args *a, const nce_sampler *s,
                            const ex_tensor *labels)
{
    const ex_tensor *o = ex_in(x, op, "SampleLogits"), *d = o ? ex_in(x, op, "Cost@GRAD") : NULL;
    if (!d)
        return NULL;
    if (o->numel != labels->numel || d->numel != a->batch || labels->numel != a->batch * a->width) {
        ex_fail(x, "SampleLogits, SampleLabels and Cost@GRAD do not match the batch");
        return NULL;
    }
    double *g = xmalloc_n(labels->numel + 1, sizeof(double));
    for (size_t i = 0; i < labels->numel; i++) {
        size_t row = i / a->width;
        double q = sampler_prob(s, (int64_t)labels->data[i]) * (double)a->n_neg, oi = o->data[i];
        double w = a->sw ? a->sw->data[row] : 1;
        g[i] = (i % a->width < a->n_true ? w * (q / (oi + q)) * (oi - 1) : w * (oi * (1 - oi) / (oi + q)));
        g[i] *= d->data[row];
    }
    return g;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Weight@GRAD: dense, or (is_sparse) one row per distinct class, sorted
 * (Paddle's std::set). */
static ex_tensor *weight_grad(const ir_op *op, const nce_args *a, const ex_tensor *labels, const double *g)
{
    size_t n = labels->numel, u = 0;
    int64_t *ids = xmalloc_n(n + 1, sizeof(int64_t)), *rows = xmalloc_n(n + 1, sizeof(int64_t));
    for (size_t i = 0; i < n; i++)
        ids[i] = rows[i] = (int64_t)labels->data[i];
    ex_tensor *dw;
    size_t *slot;
    if (ir_op_get_bool(op, "is_sparse", false)) {
        qsort(rows, n, sizeof *rows, cmp_i64);
        for (size_t i = 0; i < n; i++)
            if (!u || rows[i] != rows[u - 1])
                rows[u++] = rows[i];
        dw = ex_rows_new(a->w->dtype, u, rows, 1, &a->w->dims[1], a->w->dims[0]);
        slot = ex_rows_locate(dw, ids, n);
    } else {
        dw = ex_tensor_like(a->w);
        slot = xmalloc_n(n + 1, sizeof(size_t));
        for (size_t i = 0; i < n; i++)
            slot[i] = (size_t)ids[i];
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < a->dim; k++)
            dw->data[slot[i] * a->dim + k] += a->in->data[(i / a->width) * a->dim + k] * g[i];
    free(slot);
    free(ids);
    free(rows);
    return dw;
}

static bool k_nce_grad(ex_ctx *x, const ir_op *op)
{
    nce_args a;
    nce_sampler s;
    if (!nce_inputs(x, op, &a) || !sampler_init(x, op, &s))
        return false;
    const ex_tensor *labels = ex_in(x, op, "SampleLabels");
    double *g = labels ? sample_grads(x, op, &a, &s, labels) : NULL;
    if (!g)
        return false;
    for (size_t i = 0; i < labels->numel; i++)
        if (!class_ok(x, &a, (int64_t)labels->data[i])) {
            free(g);
            return false;
        }
    ex_work3(labels->numel, a.dim, 2);  /* Weight@GRAD's and Input@GRAD's loops */
    if (ex_out_name(op, "Bias@GRAD", 0) && a.bias) {
        ex_tensor *db = ex_tensor_like(a.bias);
        for (size_t i = 0; i < labels->numel; i++)
            db->data[(size_t)labels->data[i]] += g[i];
        ex_put(x, op, "Bias@GRAD", 0, db);
    }
    if (ex_out_name(op, "Weight@GRAD", 0))
        ex_put(x, op, "Weight@GRAD", 0, weight_grad(op, &a, labels, g));
    if (ex_out_name(op, "Input@GRAD", 0)) {
        ex_tensor *dx = ex_tensor_like(a.in);
        for (size_t i = 0; i < labels->numel; i++)
            for (size_t k = 0; k < a.dim; k++)
                dx->data[(i / a.width) * a.dim + k] +=
                    a.w->data[(size_t)labels->data[i] * a.dim + k] * g[i];
        ex_put(x, op, "Input@GRAD", 0, dx);
    }
    free(g);
    return true;
}

const ex_kernel ex_kernels_nce[] = {
    {"nce", k_nce}, {"nce_grad", k_nce_grad},
    {NULL, NULL},
};
