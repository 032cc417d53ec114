/* k_loss.c - losses and reductions: cross_entropy(2),
 * softmax_with_cross_entropy, log_loss, mean, reduce_sum, reduce_mean; with grads. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "exec.h"

/* Rows of a [..., D] tensor: n rows of width D (the last dim). */
static size_t rows_of(const ex_tensor *t, size_t *width)
{
    *width = t->nd ? (size_t)t->dims[t->nd - 1] : 1;
    return *width ? t->numel / *width : 0;
}

static bool label_at(ex_ctx *x, const ex_tensor *L, size_t i, size_t width, int64_t *out)
{
    double v = L->data[i];
    if (v < 0 || v >= (double)width)
        return ex_fail(x, "label %g is outside [0, %zu)", v, width);
    *out = (int64_t)v;
    return true;
}

/* Y dims: X's with the last one 1. */
static ex_tensor *per_row(const ex_tensor *X)
{
    int64_t d[EX_MAX_DIMS];
    memcpy(d, X->dims, sizeof d);
    d[X->nd - 1] = 1;
    ex_tensor *t = ex_tensor_new(X->dtype, X->nd, d);
    ex_tensor_set_lod(t, X->lod, X->n_lod);
    return t;
}

static bool k_cross_entropy(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X"), *L = X ? ex_in(x, op, "Label") : NULL;
    if (!L)
        return false;
    bool soft = ir_op_get_bool(op, "soft_label", false);
    int64_t ignore = ir_op_get_int(op, "ignore_index", -100);
    size_t w, n = rows_of(X, &w);
    if (L->numel != (soft ? X->numel : n))
        return ex_fail(x, "Label's size does not match X's");
    ex_tensor *Y = per_row(X), *match = per_row(X);
    for (size_t i = 0; i < n; i++) {
        const double *p = X->data + i * w;
        if (soft) {
            for (size_t j = 0; j < w; j++)
                Y->data[i] -= L->data[i * w + j] * log(p[j]);
            continue;
        }
        if ((int64_t)L->data[i] == ignore)
            continue;
        int64_t c = 0;
        if (!label_at(x, L, i, w, &c)) {
            ex_tensor_free(Y);
            ex_tensor_free(match);
            return false;
        }
        Y->data[i] = -log(p[c]);
        match->data[i] = p[c];
    }
    ex_put(x, op, "Y", 0, Y);
    if (ex_out_name(op, "MatchX", 0)) {
        int64_t d[EX_MAX_DIMS + 1] = {0};
        for (int i = 0; i < X->nd && i + 1 < EX_MAX_DIMS; i++)
            d[i + 1] = X->dims[i];
        ex_put(x, op, "XShape", 0, ex_tensor_new(X->dtype, X->nd + 1, d));
        ex_put(x, op, "MatchX", 0, match);
    } else {
        ex_tensor_free(match);
    }
    return true;
}

static bool k_cross_entropy_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X"), *L = X ? ex_in(x, op, "Label") : NULL;
    const ex_tensor *dY = L ? ex_in(x, op, "Y@GRAD") : NULL;
    if (!dY)
        return false;
    bool soft = ir_op_get_bool(op, "soft_label", false);
    int64_t ignore = ir_op_get_int(op, "ignore_index", -100);
    size_t w, n = rows_of(X, &w);
    ex_tensor *dx = ex_tensor_like(X);
    for (size_t i = 0; i < n; i++) {
        if (soft) {
            for (size_t j = 0; j < w; j++)
                dx->data[i * w + j] = -dY->data[i] * L->data[i * w + j] / X->data[i * w + j];
            continue;
        }
        int64_t c = 0;
        if ((int64_t)L->data[i] == ignore)
            continue;
        if (!label_at(x, L, i, w, &c)) {
            ex_tensor_free(dx);
            return false;
        }
        dx->data[i * w + (size_t)c] = -dY->data[i] / X->data[i * w + (size_t)c];
    }
    ex_put(x, op, "X@GRAD", 0, dx);
    return true;
}

/* cross_entropy_grad2: X's shape from XShape, dX[label] = -dY / MatchX. */
static bool k_cross_entropy_grad2(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *XS = ex_in(x, op, "XShape"), *L = XS ? ex_in(x, op, "Label") : NULL;
    const ex_tensor *M = L ? ex_in(x, op, "MatchX") : NULL;
    const ex_tensor *dY = M ? ex_in(x, op, "Y@GRAD") : NULL;
    if (!dY)
        return false;
    ex_tensor *dx = ex_tensor_new(M->dtype, XS->nd - 1, XS->dims + 1);
    int64_t ignore = ir_op_get_int(op, "ignore_index", -100);
    size_t w, n = rows_of(dx, &w);
    for (size_t i = 0; i < n; i++) {
        int64_t c = 0;
        if ((int64_t)L->data[i] == ignore)
            continue;
        if (!label_at(x, L, i, w, &c)) {
            ex_tensor_free(dx);
            return false;
        }
        dx->data[i * w + (size_t)c] = -dY->data[i] / M->data[i];
    }
    ex_put(x, op, "X@GRAD", 0, dx);
    return true;
}

static bool k_softmax_xent(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "Logits"), *L = X ? ex_in(x, op, "Label") : NULL;
    if (!L)
        return false;
    int64_t axis = ir_op_get_int(op, "axis", -1);
    if (X->nd < 1 || (axis != -1 && axis != X->nd - 1))
        return ex_fail(x, "only the last axis is supported");
    bool soft = ir_op_get_bool(op, "soft_label", false);
    int64_t ignore = ir_op_get_int(op, "ignore_index", -100);
    size_t w, n = rows_of(X, &w);
    if (L->numel != (soft ? X->numel : n))
        return ex_fail(x, "Label's size does not match Logits'");
    ex_tensor *S = ex_tensor_copy(X), *loss = per_row(X);
    for (size_t i = 0; i < n; i++) {
        double *p = S->data + i * w, mx = -INFINITY, s = 0;
        for (size_t j = 0; j < w; j++)
            mx = fmax(mx, p[j]);
        for (size_t j = 0; j < w; j++)
            s += exp(p[j] - mx);
        double lse = mx + log(s);
        if (soft)
            for (size_t j = 0; j < w; j++)
                loss->data[i] -= L->data[i * w + j] * (X->data[i * w + j] - lse);
        for (size_t j = 0; j < w; j++)
            p[j] = exp(p[j] - lse);
        if (soft || (int64_t)L->data[i] == ignore)
            continue;
        int64_t c = 0;
        if (!label_at(x, L, i, w, &c)) {
            ex_tensor_free(S);
            ex_tensor_free(loss);
            return false;
        }
        loss->data[i] = lse - X->data[i * w + (size_t)c];
    }
    ex_put(x, op, "Softmax", 0, S);
    ex_put(x, op, "Loss", 0, loss);
    return true;
}

static bool k_softmax_xent_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *S = ex_in(x, op, "Softmax"), *L = S ? ex_in(x, op, "Label") : NULL;
    const ex_tensor *d = L ? ex_in(x, op, "Loss@GRAD") : NULL;
    if (!d)
        return false;
    bool soft = ir_op_get_bool(op, "soft_label", false);
    int64_t ignore = ir_op_get_int(op, "ignore_index", -100);
    size_t w, n = rows_of(S, &w);
    ex_tensor *dx = ex_tensor_copy(S);
    for (size_t i = 0; i < n; i++) {
        double *g = dx->data + i * w;
        if (soft) {
            for (size_t j = 0; j < w; j++)
                g[j] = (g[j] - L->data[i * w + j]) * d->data[i];
            continue;
        }
        if ((int64_t)L->data[i] == ignore) {
            memset(g, 0, w * sizeof *g);
            continue;
        }
        int64_t c = 0;
        if (!label_at(x, L, i, w, &c)) {
            ex_tensor_free(dx);
            return false;
        }
        g[c] -= 1;
        for (size_t j = 0; j < w; j++)
            g[j] *= d->data[i];
    }
    ex_put(x, op, "Logits@GRAD", 0, dx);
    return true;
}

static bool k_mean(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X");
    if (!X)
        return false;
    int64_t one = 1;
    ex_tensor *out = ex_tensor_new(X->dtype, 1, &one);
    for (size_t i = 0; i < X->numel; i++)
        out->data[0] += X->data[i];
    out->data[0] /= X->numel ? (double)X->numel : 1;
    ex_put(x, op, "Out", 0, out);
    return true;
}

static bool k_mean_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X"), *d = X ? ex_in(x, op, "Out@GRAD") : NULL;
    if (!d)
        return false;
    ex_tensor *dx = ex_tensor_like(X);
    for (size_t i = 0; i < dx->numel; i++)
        dx->data[i] = d->data[0] / (double)dx->numel;
    ex_put(x, op, "X@GRAD", 0, dx);
    return true;
}

/* For each element of X, its offset in the reduced output. */
static size_t *reduce_plan(ex_ctx *x, const ir_op *op, const ex_tensor *X, int64_t *odims,
                           int *ond, size_t *count)
{
    bool red[EX_MAX_DIMS] = {0};
    int64_t dims[EX_MAX_DIMS];
    size_t nd = ex_attr_ints(op, "dim", dims, EX_MAX_DIMS);
    bool all = ir_op_get_bool(op, "reduce_all", false) || nd == 0;
    for (size_t i = 0; i < nd; i++) {
        int64_t d = dims[i] < 0 ? dims[i] + X->nd : dims[i];
        if (d < 0 || d >= X->nd) {
            ex_fail(x, "dim %lld out of range", (long long)dims[i]);
            return NULL;
        }
        red[d] = true;
    }
    bool keep = ir_op_get_bool(op, "keep_dim", false);
    size_t stride[EX_MAX_DIMS] = {0}, s = 1;
    *count = 1;
    for (int d = X->nd - 1; d >= 0; d--) {
        if (all || red[d]) {
            *count *= (size_t)X->dims[d];
        } else {
            stride[d] = s;
            s *= (size_t)X->dims[d];
        }
    }
    *ond = 0;
    for (int d = 0; d < X->nd; d++)
        if (!(all || red[d]))
            odims[(*ond)++] = X->dims[d];
        else if (keep)
            odims[(*ond)++] = 1;
    if (*ond == 0)
        odims[(*ond)++] = 1;
    size_t *map = xmalloc_n(X->numel + 1, sizeof(size_t));
    int64_t idx[EX_MAX_DIMS] = {0};
    size_t off = 0;
    for (size_t i = 0; i < X->numel; i++) {
        map[i] = off;
        for (int d = X->nd - 1; d >= 0; d--) {
            if (++idx[d] < X->dims[d]) {
                off += stride[d];
                break;
            }
            off -= stride[d] * (size_t)(X->dims[d] - 1);
            idx[d] = 0;
        }
    }
    return map;
}

static bool reduce(ex_ctx *x, const ir_op *op, bool mean)
{
    const ex_tensor *X = ex_in(x, op, "X");
    if (!X)
        return false;
    int64_t od[EX_MAX_DIMS];
    int ond;
    size_t count;
    size_t *map = reduce_plan(x, op, X, od, &ond, &count);
    if (!map)
        return false;
    ex_tensor *out = ex_tensor_new(X->dtype, ond, od);
    for (size_t i = 0; i < X->numel; i++)
        out->data[map[i]] += X->data[i];
    if (mean)
        for (size_t i = 0; i < out->numel; i++)
            out->data[i] /= (double)(count ? count : 1);
    free(map);
    ex_put(x, op, "Out", 0, out);
    return true;
}

static bool reduce_grad(ex_ctx *x, const ir_op *op, bool mean)
{
    const ex_tensor *X = ex_in(x, op, "X"), *d = X ? ex_in(x, op, "Out@GRAD") : NULL;
    if (!d)
        return false;
    int64_t od[EX_MAX_DIMS];
    int ond;
    size_t count;
    size_t *map = reduce_plan(x, op, X, od, &ond, &count);
    if (!map)
        return false;
    ex_tensor *dx = ex_tensor_like(X);
    for (size_t i = 0; i < X->numel; i++)
        dx->data[i] = d->data[map[i]] / (mean ? (double)count : 1.0);
    free(map);
    ex_put(x, op, "X@GRAD", 0, dx);
    return true;
}

static bool k_reduce_sum(ex_ctx *x, const ir_op *op) { return reduce(x, op, false); }
static bool k_reduce_mean(ex_ctx *x, const ir_op *op) { return reduce(x, op, true); }
static bool k_reduce_sum_grad(ex_ctx *x, const ir_op *op) { return reduce_grad(x, op, false); }
static bool k_reduce_mean_grad(ex_ctx *x, const ir_op *op) { return reduce_grad(x, op, true); }

/* top_k: the k largest of each row, descending; ties keep the lower
 * index first. */
static bool k_top_k(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X");
    bool ok;
    const ex_tensor *K = X ? ex_in_opt(x, op, "K", &ok) : NULL;
    if (!X || !ok)
        return false;
    size_t w, n = rows_of(X, &w);
    int64_t k = K ? (int64_t)K->data[0] : ir_op_get_int(op, "k", 1);
    if (k < 1 || (size_t)k > w)
        return ex_fail(x, "k %lld is outside [1, %zu]", (long long)k, w);
    int64_t od[EX_MAX_DIMS];
    memcpy(od, X->dims, sizeof od);
    od[X->nd - 1] = k;
    ex_tensor *out = ex_tensor_new(X->dtype, X->nd, od), *idx;
    ex_tensor_set_lod(out, X->lod, X->n_lod);
    idx = ex_tensor_copy(out);
    idx->dtype = IR_INT64;
    /* k scans of each row, a flag per column taken: n x k x w, which the
     * tensors built (n x w, n x k) do not cover when k is large (the
     * scan over the k picked so far made it n x k x k x w) */
    ex_work3(n, (uint64_t)k, w);
    bool *taken = xmalloc_n(w + 1, sizeof(bool));
    for (size_t i = 0; i < n; i++) {
        const double *row = X->data + i * w;
        memset(taken, 0, w * sizeof *taken);
        for (int64_t j = 0; j < k; j++) {
            size_t best = w;
            for (size_t c = 0; c < w; c++)
                if (!taken[c] && (best == w || row[c] > row[best]))
                    best = c;
            taken[best] = true;
            out->data[i * (size_t)k + (size_t)j] = row[best];
            idx->data[i * (size_t)k + (size_t)j] = (double)best;
        }
    }
    free(taken);
    ex_put(x, op, "Out", 0, out);
    ex_put(x, op, "Indices", 0, idx);
    return true;
}

static bool k_top_k_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X"), *I = X ? ex_in(x, op, "Indices") : NULL;
    const ex_tensor *d = I ? ex_in(x, op, "Out@GRAD") : NULL;
    if (!d)
        return false;
    size_t w, n = rows_of(X, &w), k = n ? I->numel / n : 0;
    ex_tensor *dx = ex_tensor_like(X);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < k; j++) {
            size_t c = (size_t)I->data[i * k + j];
            if (c < w)
                dx->data[i * w + c] += d->data[i * k + j];
        }
    ex_put(x, op, "X@GRAD", 0, dx);
    return true;
}

/* accuracy: the share of rows whose label is among their top-k Indices. */
static bool k_accuracy(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *I = ex_in(x, op, "Indices"), *L = I ? ex_in(x, op, "Label") : NULL;
    if (!L)
        return false;
    size_t n = L->numel, k = n ? I->numel / n : 0, correct = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < k; j++)
            if (I->data[i * k + j] == L->data[i]) {
                correct++;
                break;
            }
    int64_t one = 1;
    ex_tensor *acc = ex_tensor_new(IR_FP32, 1, &one), *c = ex_tensor_new(IR_INT32, 1, &one),
              *t = ex_tensor_new(IR_INT32, 1, &one);
    acc->data[0] = n ? (double)correct / (double)n : 0;
    c->data[0] = (double)correct;
    t->data[0] = (double)n;
    ex_put(x, op, "Accuracy", 0, acc);
    ex_put(x, op, "Correct", 0, c);
    ex_put(x, op, "Total", 0, t);
    return true;
}

/* log_loss (paddle/fluid/operators/log_loss_op.h), element by element:
 * -l * log(p + eps) - (1 - l) * log(1 - p + eps). */
static bool k_log_loss(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *P = ex_in(x, op, "Predicted"), *L = P ? ex_in(x, op, "Labels") : NULL;
    if (!L)
        return false;
    if (L->numel != P->numel)
        return ex_fail(x, "Labels has %zu values, Predicted %zu", L->numel, P->numel);
    double eps = ir_op_get_float(op, "epsilon", 1e-4);
    ex_tensor *out = ex_tensor_like(P);
    for (size_t i = 0; i < P->numel; i++) {
        double p = P->data[i], l = L->data[i];
        out->data[i] = -l * log(p + eps) - (1 - l) * log(1 - p + eps);
    }
    ex_put(x, op, "Loss", 0, out);
    return true;
}

static bool k_log_loss_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *P = ex_in(x, op, "Predicted"), *L = P ? ex_in(x, op, "Labels") : NULL;
    const ex_tensor *d = L ? ex_in(x, op, "Loss@GRAD") : NULL;
    if (!d)
        return false;
    if (L->numel != P->numel || d->numel != P->numel)
        return ex_fail(x, "Labels, Loss@GRAD and Predicted differ in size");
    double eps = ir_op_get_float(op, "epsilon", 1e-4);
    ex_tensor *dp = ex_tensor_like(P);
    for (size_t i = 0; i < P->numel; i++) {
        double p = P->data[i], l = L->data[i];
        dp->data[i] = d->data[i] * (-l / (p + eps) + (1 - l) / (1 - p + eps));
    }
    ex_put(x, op, "Predicted@GRAD", 0, dp);
    return true;
}

const ex_kernel ex_kernels_loss[] = {
    {"top_k", k_top_k}, {"top_k_grad", k_top_k_grad}, {"accuracy", k_accuracy},
    {"cross_entropy", k_cross_entropy}, {"cross_entropy_grad", k_cross_entropy_grad},
    {"cross_entropy2", k_cross_entropy}, {"cross_entropy_grad2", k_cross_entropy_grad2},
    {"softmax_with_cross_entropy", k_softmax_xent},
    {"softmax_with_cross_entropy_grad", k_softmax_xent_grad},
    {"log_loss", k_log_loss}, {"log_loss_grad", k_log_loss_grad},
    {"mean", k_mean}, {"mean_grad", k_mean_grad},
    {"reduce_sum", k_reduce_sum}, {"reduce_sum_grad", k_reduce_sum_grad},
    {"reduce_mean", k_reduce_mean}, {"reduce_mean_grad", k_reduce_mean_grad},
    {NULL, NULL},
};
