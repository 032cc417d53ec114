/* k_nn.c - conv2d, depthwise_conv2d, pool2d, batch_norm (NCHW) and
 * data_norm, with grads.  Direct loops: the nets verified here are small. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "../ckd.h"
#include "exec.h"

typedef struct {
    int64_t n, c, h, w, oc, oh, ow, kh, kw;
    int64_t sh, sw, pt, pl, dh, dw, groups;
} conv_geo;

static bool pads_of(ex_ctx *x, const ir_op *op, int64_t *pt, int64_t *pl, int64_t h, int64_t w,
                    int64_t kh, int64_t kw, int64_t sh, int64_t sw)
{
    int64_t p[4] = {0, 0, 0, 0};
    size_t np = ex_attr_ints(op, "paddings", p, 4);
    const char *alg = ir_op_get_string(op, "padding_algorithm");
    if (alg && !strcmp(alg, "VALID")) {
        *pt = *pl = 0;
    } else if (alg && !strcmp(alg, "SAME")) {
        int64_t oh = (h + sh - 1) / sh, ow = (w + sw - 1) / sw;
        int64_t ph = (oh - 1) * sh + kh - h, pw = (ow - 1) * sw + kw - w;
        *pt = ph > 0 ? ph / 2 : 0;
        *pl = pw > 0 ? pw / 2 : 0;
    } else if (np == 4) {
        if (p[0] != p[1] || p[2] != p[3])
            return ex_fail(x, "asymmetric paddings are not supported");
        *pt = p[0];
        *pl = p[2];
    } else {
        *pt = p[0];
        *pl = np > 1 ? p[1] : p[0];
    }
    return true;
}

/* strides, dilations, ksize and paddings within int32, as Paddle's
 * attrs are ints: the window arithmetic below then cannot overflow int64
 * (every dim fits int64, ex_tensor_new). */
static bool window_attrs_fit(ex_ctx *x, const ir_op *op)
{
    static const char *const names[] = {"strides", "dilations", "ksize", "paddings"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        int64_t v[8];
        size_t n = ex_attr_ints(op, names[i], v, 8);
        for (size_t k = 0; k < n && k < 8; k++)
            if (v[k] < INT32_MIN || v[k] > INT32_MAX || (i < 3 && v[k] < 1) || v[k] < 0)
                return ex_fail(x, "attr '%s' entry %zu (%lld) is outside [%d, %d]", names[i], k,
                               (long long)v[k], i < 3 ? 1 : 0, INT32_MAX);
    }
    return true;
}

static bool conv_plan(ex_ctx *x, const ir_op *op, const ex_tensor *I, const ex_tensor *F, conv_geo *g)
{
    if (I->nd != 4 || F->nd != 4)
        return ex_fail(x, "Input and Filter must have 4 dims (NCHW)");
    if (!window_attrs_fit(x, op))
        return false;
    const char *fmt = ir_op_get_string(op, "data_format");
    if (fmt && strcmp(fmt, "NCHW") && strcmp(fmt, "AnyLayout"))
        return ex_fail(x, "data_format '%s' is not supported", fmt);
    int64_t s[2] = {1, 1}, d[2] = {1, 1};
    ex_attr_ints(op, "strides", s, 2);
    ex_attr_ints(op, "dilations", d, 2);
    *g = (conv_geo){.n = I->dims[0], .c = I->dims[1], .h = I->dims[2], .w = I->dims[3],
                    .oc = F->dims[0], .kh = F->dims[2], .kw = F->dims[3], .sh = s[0],
                    .sw = s[1], .dh = d[0], .dw = d[1]};
    g->groups = ir_op_get_int(op, "groups", 1);
    if (g->groups < 1 || g->c % g->groups || g->oc % g->groups || F->dims[1] * g->groups != g->c)
        return ex_fail(x, "groups %lld do not fit %lld input and %lld output channels",
                       (long long)g->groups, (long long)g->c, (long long)g->oc);
    if (g->sh < 1 || g->sw < 1)
        return ex_fail(x, "strides must be positive");
    if (!pads_of(x, op, &g->pt, &g->pl, g->h, g->w, g->kh, g->kw, g->sh, g->sw))
        return false;
    int64_t ext_h, ext_w;
    if (g->kh < 1 || g->kw < 1 || ckd_mul_i64(&ext_h, g->dh, g->kh - 1) ||
        ckd_mul_i64(&ext_w, g->dw, g->kw - 1) || ext_h > INT64_MAX / 2 || ext_w > INT64_MAX / 2)
        return ex_fail(x, "the dilated filter is empty or larger than int64 holds");
    g->oh = (g->h + 2 * g->pt - (ext_h + 1)) / g->sh + 1;
    g->ow = (g->w + 2 * g->pl - (ext_w + 1)) / g->sw + 1;
    if (g->oh < 1 || g->ow < 1)
        return ex_fail(x, "the filter is larger than the padded input");
    return true;
}

/* Calls back for every (output, input, filter) index triple that
 * contributes: out += in * filter. */
#define CONV_LOOP(g, BODY)                                                                     \
    ex_work3((uint64_t)((g).n * (g).oc * (g).oh * (g).ow), (uint64_t)((g).c / (g).groups),    \
             (uint64_t)((g).kh * (g).kw));                                                     \
    for (int64_t n_ = 0; n_ < (g).n; n_++)                                                     \
        for (int64_t o_ = 0; o_ < (g).oc; o_++) {                                              \
            int64_t cg_ = (g).c / (g).groups, grp_ = o_ / ((g).oc / (g).groups);               \
            for (int64_t y_ = 0; y_ < (g).oh; y_++)                                            \
                for (int64_t x_ = 0; x_ < (g).ow; x_++) {                                      \
                    size_t oi = (size_t)(((n_ * (g).oc + o_) * (g).oh + y_) * (g).ow + x_);    \
                    for (int64_t ci_ = 0; ci_ < cg_; ci_++)                                    \
                        for (int64_t ky_ = 0; ky_ < (g).kh; ky_++)                             \
                            for (int64_t kx_ = 0; kx_ < (g).kw; kx_++) {                       \
                                int64_t iy_ = y_ * (g).sh - (g).pt + ky_ * (g).dh;             \
                                int64_t ix_ = x_ * (g).sw - (g).pl + kx_ * (g).dw;             \
                                if (iy_ < 0 || iy_ >= (g).h || ix_ < 0 || ix_ >= (g).w)        \
                                    continue;                                                  \
                                int64_t c_ = grp_ * cg_ + ci_;                                 \
                                size_t ii = (size_t)(((n_ * (g).c + c_) * (g).h + iy_) * (g).w + ix_); \
                                size_t fi = (size_t)(((o_ * cg_ + ci_) * (g).kh + ky_) * (g).kw + kx_); \
                                BODY;                                                          \
                            }                                                                  \
                }                                                                              \
        }

static bool k_conv2d(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *I = ex_in(x, op, "Input"), *F = I ? ex_in(x, op, "Filter") : NULL;
    conv_geo g;
    if (!F || !conv_plan(x, op, I, F, &g))
        return false;
    int64_t od[4] = {g.n, g.oc, g.oh, g.ow};
    ex_tensor *out = ex_tensor_new(I->dtype, 4, od);
    CONV_LOOP(g, out->data[oi] += I->data[ii] * F->data[fi])
    ex_put(x, op, "Output", 0, out);
    return true;
}

static bool k_conv2d_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *I = ex_in(x, op, "Input"), *F = I ? ex_in(x, op, "Filter") : NULL;
    const ex_tensor *d = F ? ex_in(x, op, "Output@GRAD") : NULL;
    conv_geo g;
    if (!d || !conv_plan(x, op, I, F, &g))
        return false;
    if (d->numel != (size_t)(g.n * g.oc * g.oh * g.ow))
        return ex_fail(x, "Output@GRAD has the wrong size");
    ex_tensor *di = ex_tensor_like(I), *df = ex_tensor_like(F);
    CONV_LOOP(g, {
        di->data[ii] += d->data[oi] * F->data[fi];
        df->data[fi] += d->data[oi] * I->data[ii];
    })
    ex_put(x, op, "Input@GRAD", 0, di);
    ex_put(x, op, "Filter@GRAD", 0, df);
    return true;
}

typedef struct {
    int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, pt, pl;
    bool max, exclusive;
} pool_geo;

static bool pool_plan(ex_ctx *x, const ir_op *op, const ex_tensor *X, pool_geo *g)
{
    if (X->nd != 4)
        return ex_fail(x, "X must have 4 dims (NCHW)");
    if (!window_attrs_fit(x, op))
        return false;
    if (ir_op_get_bool(op, "adaptive", false))
        return ex_fail(x, "adaptive pooling is not supported");
    int64_t k[2] = {1, 1}, s[2] = {1, 1};
    ex_attr_ints(op, "ksize", k, 2);
    ex_attr_ints(op, "strides", s, 2);
    const char *type = ir_op_get_string(op, "pooling_type");
    *g = (pool_geo){.n = X->dims[0], .c = X->dims[1], .h = X->dims[2], .w = X->dims[3],
                    .kh = k[0], .kw = k[1], .sh = s[0], .sw = s[1],
                    .max = !type || !strcmp(type, "max"),
                    .exclusive = ir_op_get_bool(op, "exclusive", true)};
    if (ir_op_get_bool(op, "global_pooling", false)) {
        g->kh = g->h;
        g->kw = g->w;
        g->pt = g->pl = 0;
        g->sh = g->sw = 1;
    } else if (!pads_of(x, op, &g->pt, &g->pl, g->h, g->w, g->kh, g->kw, g->sh, g->sw)) {
        return false;
    }
    if (g->sh < 1 || g->sw < 1 || g->kh < 1 || g->kw < 1)
        return ex_fail(x, "ksize and strides must be positive");
    bool ceil_mode = ir_op_get_bool(op, "ceil_mode", false);
    int64_t eh = g->h + 2 * g->pt - g->kh + (ceil_mode ? g->sh - 1 : 0);
    int64_t ew = g->w + 2 * g->pl - g->kw + (ceil_mode ? g->sw - 1 : 0);
    g->oh = eh / g->sh + 1;
    g->ow = ew / g->sw + 1;
    if (g->oh < 1 || g->ow < 1)
        return ex_fail(x, "the window is larger than the padded input");
    return true;
}

/* One pooling window: its bounds, clipped to the input. */
static void window(const pool_geo *g, int64_t y, int64_t xx, int64_t *y0, int64_t *y1,
                   int64_t *x0, int64_t *x1, int64_t *area)
{
    *y0 = y * g->sh - g->pt;
    *x0 = xx * g->sw - g->pl;
    *y1 = *y0 + g->kh;
    *x1 = *x0 + g->kw;
    int64_t full = (*y1 < g->h + g->pt ? *y1 : g->h + g->pt) - *y0;
    int64_t fullw = (*x1 < g->w + g->pl ? *x1 : g->w + g->pl) - *x0;
    *y0 = *y0 < 0 ? 0 : *y0;
    *x0 = *x0 < 0 ? 0 : *x0;
    *y1 = *y1 > g->h ? g->h : *y1;
    *x1 = *x1 > g->w ? g->w : *x1;
    *area = g->exclusive ? (*y1 - *y0) * (*x1 - *x0) : full * fullw;
}

static bool pool(ex_ctx *x, const ir_op *op, bool grad)
{
    const ex_tensor *X = ex_in(x, op, "X");
    const ex_tensor *d = X && grad ? ex_in(x, op, "Out@GRAD") : NULL;
    pool_geo g;
    if (!X || (grad && !d) || !pool_plan(x, op, X, &g))
        return false;
    int64_t od[4] = {g.n, g.c, g.oh, g.ow};
    ex_tensor *out = grad ? ex_tensor_like(X) : ex_tensor_new(X->dtype, 4, od);
    ex_work3((uint64_t)(g.n * g.c), (uint64_t)(g.oh * g.ow), (uint64_t)(g.kh * g.kw));
    for (int64_t p = 0; p < g.n * g.c; p++) {
        const double *in = X->data + (size_t)(p * g.h * g.w);
        for (int64_t y = 0; y < g.oh; y++)
            for (int64_t xx = 0; xx < g.ow; xx++) {
                int64_t y0, y1, x0, x1, area, best = -1;
                window(&g, y, xx, &y0, &y1, &x0, &x1, &area);
                double acc = 0;
                size_t oi = (size_t)((p * g.oh + y) * g.ow + xx);
                for (int64_t iy = y0; iy < y1; iy++)
                    for (int64_t ix = x0; ix < x1; ix++) {
                        int64_t i = iy * g.w + ix;
                        if (g.max && (best < 0 || in[i] > in[best]))
                            best = i;
                        acc += in[i];
                        if (grad && !g.max && area > 0)
                            out->data[(size_t)(p * g.h * g.w + i)] += d->data[oi] / (double)area;
                    }
                if (grad && g.max && best >= 0)
                    out->data[(size_t)(p * g.h * g.w + best)] += d->data[oi];
                if (!grad)
                    out->data[oi] = g.max ? (best >= 0 ? in[best] : 0) : (area ? acc / (double)area : 0);
            }
    }
    ex_put(x, op, grad ? "X@GRAD" : "Out", 0, out);
    return true;
}

static bool k_pool2d(ex_ctx *x, const ir_op *op) { return pool(x, op, false); }
static bool k_pool2d_grad(ex_ctx *x, const ir_op *op) { return pool(x, op, true); }

/* batch_norm over N (and H, W) per channel C = dims[1]. */
static void bn_geo(const ex_tensor *X, size_t *c, size_t *inner, size_t *outer)
{
    *c = X->nd > 1 ? (size_t)X->dims[1] : 1;
    *outer = X->nd ? (size_t)X->dims[0] : 1;
    *inner = 1;
    for (int i = 2; i < X->nd; i++)
        *inner *= (size_t)X->dims[i];
    if (!X->numel)
        *outer = 0;     /* as k_act.c's axis_split: no loop over nothing */
}

#define BN_AT(X, n, ch, i, c, inner) ((X)->data[((n) * (c) + (ch)) * (inner) + (i)])

static bool k_batch_norm(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X"), *S = X ? ex_in(x, op, "Scale") : NULL;
    const ex_tensor *B = S ? ex_in(x, op, "Bias") : NULL, *M = B ? ex_in(x, op, "Mean") : NULL;
    const ex_tensor *V = M ? ex_in(x, op, "Variance") : NULL;
    if (!V)
        return false;
    const char *layout = ir_op_get_string(op, "data_layout");
    if (layout && strcmp(layout, "NCHW") && strcmp(layout, "AnyLayout"))
        return ex_fail(x, "data_layout '%s' is not supported", layout);
    size_t c, inner, outer;
    bn_geo(X, &c, &inner, &outer);
    if (S->numel != c || B->numel != c || M->numel != c || V->numel != c)
        return ex_fail(x, "Scale, Bias, Mean and Variance must have %zu elements", c);
    double eps = ir_op_get_float(op, "epsilon", 1e-5), mom = ir_op_get_float(op, "momentum", 0.9);
    bool global = ir_op_get_bool(op, "is_test", false) || ir_op_get_bool(op, "use_global_stats", false);
    int64_t cd = (int64_t)c;
    ex_tensor *Y = ex_tensor_like(X), *mo = ex_tensor_copy(M), *vo = ex_tensor_copy(V);
    ex_tensor *sm = ex_tensor_new(X->dtype, 1, &cd), *sv = ex_tensor_new(X->dtype, 1, &cd);
    double cnt = (double)(outer * inner);
    for (size_t ch = 0; ch < c; ch++) {
        double mean = M->data[ch], var = V->data[ch];
        if (!global) {
            mean = var = 0;
            for (size_t n = 0; n < outer; n++)
                for (size_t i = 0; i < inner; i++)
                    mean += BN_AT(X, n, ch, i, c, inner);
            mean /= cnt;
            for (size_t n = 0; n < outer; n++)
                for (size_t i = 0; i < inner; i++)
                    var += pow(BN_AT(X, n, ch, i, c, inner) - mean, 2);
            var /= cnt;
            mo->data[ch] = mom * M->data[ch] + (1 - mom) * mean;
            vo->data[ch] = mom * V->data[ch] + (1 - mom) * var;
        }
        double inv = 1 / sqrt(var + eps);
        sm->data[ch] = mean;
        sv->data[ch] = inv;
        for (size_t n = 0; n < outer; n++)
            for (size_t i = 0; i < inner; i++)
                BN_AT(Y, n, ch, i, c, inner) =
                    (BN_AT(X, n, ch, i, c, inner) - mean) * inv * S->data[ch] + B->data[ch];
    }
    ex_put(x, op, "Y", 0, Y);
    ex_put(x, op, "MeanOut", 0, mo);
    ex_put(x, op, "VarianceOut", 0, vo);
    ex_put(x, op, "SavedMean", 0, sm);
    ex_put(x, op, "SavedVariance", 0, sv);
    return true;
}

static bool k_batch_norm_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X"), *S = X ? ex_in(x, op, "Scale") : NULL;
    const ex_tensor *sm = S ? ex_in(x, op, "SavedMean") : NULL;
    const ex_tensor *sv = sm ? ex_in(x, op, "SavedVariance") : NULL;
    const ex_tensor *d = sv ? ex_in(x, op, "Y@GRAD") : NULL;
    if (!d)
        return false;
    bool global = ir_op_get_bool(op, "is_test", false) || ir_op_get_bool(op, "use_global_stats", false);
    size_t c, inner, outer;
    bn_geo(X, &c, &inner, &outer);
    ex_tensor *dx = ex_tensor_like(X), *ds = ex_tensor_like(S), *db = ex_tensor_like(S);
    double cnt = (double)(outer * inner);
    for (size_t ch = 0; ch < c; ch++) {
        double mean = sm->data[ch], inv = sv->data[ch], sdy = 0, sdyx = 0;
        for (size_t n = 0; n < outer; n++)
            for (size_t i = 0; i < inner; i++) {
                double g = BN_AT(d, n, ch, i, c, inner);
                sdy += g;
                sdyx += g * (BN_AT(X, n, ch, i, c, inner) - mean) * inv;
            }
        db->data[ch] = sdy;
        ds->data[ch] = sdyx;
        for (size_t n = 0; n < outer; n++)
            for (size_t i = 0; i < inner; i++) {
                double g = BN_AT(d, n, ch, i, c, inner);
                double xh = (BN_AT(X, n, ch, i, c, inner) - mean) * inv;
                BN_AT(dx, n, ch, i, c, inner) =
                    global ? S->data[ch] * inv * g
                           : S->data[ch] * inv * (g - sdy / cnt - xh * sdyx / cnt);
            }
    }
    ex_put(x, op, "X@GRAD", 0, dx);
    ex_put(x, op, "Scale@GRAD", 0, ds);
    ex_put(x, op, "Bias@GRAD", 0, db);
    return true;
}

/* data_norm (paddle/fluid/operators/data_norm_op.cc): X is [N, C]; the
 * running statistics give Means = BatchSum / BatchSize and Scales =
 * sqrt(BatchSize / BatchSquareSum), and Y = (X - Means) * Scales. */
static bool data_norm_check(ex_ctx *x, const ir_op *op, const ex_tensor *X, const ex_tensor **st)
{
    static const char *const slots[] = {"BatchSize", "BatchSum", "BatchSquareSum"};
    if (X->nd != 2)
        return ex_fail(x, "X must have 2 dims, not %d", X->nd);
    if (ir_op_get_int(op, "slot_dim", -1) > 0 || ir_op_get_bool(op, "enable_scale_and_shift", false))
        return ex_fail(x, "slot_dim and enable_scale_and_shift are not supported");
    for (int i = 0; i < 3; i++) {
        if (!(st[i] = ex_in(x, op, slots[i])))
            return false;
        if (st[i]->numel != (size_t)X->dims[1])
            return ex_fail(x, "%s has %zu values for %lld columns", slots[i], st[i]->numel,
                           (long long)X->dims[1]);
    }
    return true;
}

static bool k_data_norm(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X"), *st[3];
    if (!X || !data_norm_check(x, op, X, st))
        return false;
    int64_t c = X->dims[1];
    size_t n = (size_t)X->dims[0], w = (size_t)c;
    ex_tensor *Y = ex_tensor_like(X), *M = ex_tensor_new(X->dtype, 1, &c), *S = ex_tensor_new(X->dtype, 1, &c);
    ex_tensor_set_lod(Y, X->lod, X->n_lod);
    for (size_t j = 0; j < w; j++) {
        M->data[j] = st[1]->data[j] / st[0]->data[j];
        S->data[j] = sqrt(st[0]->data[j] / st[2]->data[j]);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < w; j++)
            Y->data[i * w + j] = (X->data[i * w + j] - M->data[j]) * S->data[j];
    ex_put(x, op, "Y", 0, Y);
    ex_put(x, op, "Means", 0, M);
    ex_put(x, op, "Scales", 0, S);
    return true;
}

/* X@GRAD = Y@GRAD * Scales (the statistics do not depend on X).  The
 * statistics' "grads" are this batch's summaries, which Paddle's optimizer
 * for them adds up: BatchSize@GRAD = N, BatchSum@GRAD = sum of X,
 * BatchSquareSum@GRAD = sum of (X - Means)^2 + N * epsilon. */
static bool k_data_norm_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X"), *st[3];
    const ex_tensor *dY = X ? ex_in(x, op, "Y@GRAD") : NULL, *M = dY ? ex_in(x, op, "Means") : NULL;
    const ex_tensor *S = M ? ex_in(x, op, "Scales") : NULL;
    if (!S || !data_norm_check(x, op, X, st))
        return false;
    int64_t c = X->dims[1];
    size_t n = (size_t)X->dims[0], w = (size_t)c;
    if (dY->numel != X->numel || M->numel != w || S->numel != w)
        return ex_fail(x, "Y@GRAD, Means or Scales does not match X");
    double eps = ir_op_get_float(op, "epsilon", 1e-4);
    ex_tensor *dX = ex_tensor_like(X), *dn = ex_tensor_new(X->dtype, 1, &c),
              *ds = ex_tensor_new(X->dtype, 1, &c), *dq = ex_tensor_new(X->dtype, 1, &c);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < w; j++) {
            double v = X->data[i * w + j];
            dX->data[i * w + j] = dY->data[i * w + j] * S->data[j];
            ds->data[j] += v;
            dq->data[j] += (v - M->data[j]) * (v - M->data[j]);
        }
    for (size_t j = 0; j < w; j++) {
        dn->data[j] = (double)n;
        dq->data[j] += (double)n * eps;
    }
    ex_put(x, op, "X@GRAD", 0, dX);
    ex_put(x, op, "BatchSize@GRAD", 0, dn);
    ex_put(x, op, "BatchSum@GRAD", 0, ds);
    ex_put(x, op, "BatchSquareSum@GRAD", 0, dq);
    return true;
}

const ex_kernel ex_kernels_nn[] = {
    {"conv2d", k_conv2d}, {"conv2d_grad", k_conv2d_grad},
    {"depthwise_conv2d", k_conv2d}, {"depthwise_conv2d_grad", k_conv2d_grad},
    {"pool2d", k_pool2d}, {"pool2d_grad", k_pool2d_grad},
    {"batch_norm", k_batch_norm}, {"batch_norm_grad", k_batch_norm_grad},
    {"data_norm", k_data_norm}, {"data_norm_grad", k_data_norm_grad},
    {NULL, NULL},
};
