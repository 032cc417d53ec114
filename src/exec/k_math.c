/* k_math.c - mul, matmul, matmul_v2 and the elementwise binary ops, with
 * their grads.  Broadcasting follows Paddle's elementwise rule: Y's dims
 * (trailing 1s trimmed) line up with X's from `axis` (-1: the last ones),
 * and a Y dim of 1 repeats. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "exec.h"

/* yidx[i] = offset in Y of X's element i.  NULL (x->err set) when Y does
 * not broadcast onto X. */
static size_t *bcast_map(ex_ctx *x, const ex_tensor *X, const ex_tensor *Y, int64_t attr_axis)
{
    int nx = X->nd, ny = Y->nd;
    if (ny > nx) {
        ex_fail(x, "Y has more dims (%d) than X (%d)", ny, nx);
        return NULL;
    }
    /* Paddle: axis -1 (or any negative one) lines Y up with X's last dims */
    if (attr_axis > nx - ny) {
        ex_fail(x, "attr 'axis' (%lld) does not fit Y's %d dims onto X's %d",
                (long long)attr_axis, ny, nx);
        return NULL;
    }
    int axis = attr_axis < 0 ? nx - ny : (int)attr_axis;
    while (ny > 0 && Y->dims[ny - 1] == 1)
        ny--;
    size_t ystride[EX_MAX_DIMS] = {0};
    size_t s = 1;
    for (int d = ny - 1; d >= 0; d--) {
        int64_t yd = Y->dims[d], xd = X->dims[axis + d];
        if (yd != xd && yd != 1) {
            ex_fail(x, "Y dim %d (%lld) does not match X dim %d (%lld)", d, (long long)yd,
                    axis + d, (long long)xd);
            return NULL;
        }
        ystride[axis + d] = yd == 1 ? 0 : s;
        s *= (size_t)yd;
    }
    size_t *map = xmalloc_n(X->numel + 1, sizeof(size_t));
    int64_t idx[EX_MAX_DIMS] = {0};
    size_t off = 0;
    for (size_t i = 0; i < X->numel; i++) {
        map[i] = off;
        for (int d = nx - 1; d >= 0; d--) {
            if (++idx[d] < X->dims[d]) {
                off += ystride[d];
                break;
            }
            off -= ystride[d] * (size_t)(X->dims[d] - 1);
            idx[d] = 0;
        }
    }
    return map;
}

typedef enum {
    EW_ADD, EW_SUB, EW_MUL, EW_DIV, EW_MAX, EW_MIN, EW_POW, EW_FLOORDIV, EW_MOD,
    /* boolean results */
    EW_LT, EW_LE, EW_GT, EW_GE, EW_EQ, EW_NE, EW_AND, EW_OR, EW_XOR
} ew_kind;

static double ew_apply(ew_kind k, double a, double b)
{
    switch (k) {
    case EW_ADD: return a + b;
    case EW_SUB: return a - b;
    case EW_MUL: return a * b;
    case EW_DIV: return a / b;
    case EW_MAX: return a > b ? a : b;
    case EW_MIN: return a < b ? a : b;
    case EW_POW: return pow(a, b);
    case EW_FLOORDIV: return floor(a / b);
    case EW_MOD: return a - b * floor(a / b);
    case EW_LT: return a < b;
    case EW_LE: return a <= b;
    case EW_GT: return a > b;
    case EW_GE: return a >= b;
    case EW_EQ: return a == b;
    case EW_NE: return a != b;
    case EW_AND: return (a != 0) && (b != 0);
    case EW_OR: return (a != 0) || (b != 0);
    case EW_XOR: return (a != 0) != (b != 0);
    }
    return 0;
}

static bool ew_forward(ex_ctx *x, const ir_op *op, ew_kind k)
{
    const ex_tensor *X = ex_in(x, op, "X"), *Y = X ? ex_in(x, op, "Y") : NULL;
    if (!Y)
        return false;
    if (X->kind != EX_DENSE || Y->kind != EX_DENSE)
        return ex_fail(x, "SELECTED_ROWS operands are not supported");
    size_t *map = bcast_map(x, X, Y, ir_op_get_int(op, "axis", -1));
    if (!map)
        return false;
    ex_tensor *out = ex_tensor_like(X);
    if (k >= EW_LT)
        out->dtype = IR_BOOL;
    for (size_t i = 0; i < X->numel; i++)
        out->data[i] = ew_apply(k, X->data[i], Y->data[map[i]]);
    if (ex_dtype_is_int(out->dtype))
        for (size_t i = 0; i < out->numel; i++)
            out->data[i] = trunc(out->data[i]);
    free(map);
    ex_put(x, op, "Out", 0, out);
    return true;
}

static bool ew_grad(ex_ctx *x, const ir_op *op, ew_kind k)
{
    const ex_tensor *dout = ex_in(x, op, "Out@GRAD");
    const ex_tensor *Y = dout ? ex_in(x, op, "Y") : NULL;
    if (!Y)
        return false;
    bool ok;
    const ex_tensor *X = ex_in_opt(x, op, "X", &ok);
    if (!ok)
        return false;
    if (!X && k != EW_ADD && k != EW_SUB)
        return ex_fail(x, "input 'X' is needed");
    const ex_tensor *shape_x = X ? X : dout;
    if (dout->numel != shape_x->numel)
        return ex_fail(x, "Out@GRAD has %zu elements, X %zu", dout->numel, shape_x->numel);
    size_t *map = bcast_map(x, shape_x, Y, ir_op_get_int(op, "axis", -1));
    if (!map)
        return false;
    ex_tensor *dx = ex_tensor_like(shape_x), *dy = ex_tensor_like(Y);
    for (size_t i = 0; i < shape_x->numel; i++) {
        double g = dout->data[i], a = X ? X->data[i] : 0, b = Y->data[map[i]];
        double gx = 0, gy = 0;
        switch (k) {
        case EW_ADD: gx = g; gy = g; break;
        case EW_SUB: gx = g; gy = -g; break;
        case EW_MUL: gx = g * b; gy = g * a; break;
        case EW_DIV: gx = g / b; gy = -g * a / (b * b); break;
        case EW_MAX: gx = a > b ? g : 0; gy = a > b ? 0 : g; break;
        case EW_MIN: gx = a < b ? g : 0; gy = a < b ? 0 : g; break;
        case EW_POW: gx = g * b * pow(a, b - 1); gy = g * pow(a, b) * log(a); break;
        default: break;
        }
        dx->data[i] = gx;
        dy->data[map[i]] += gy;
    }
    free(map);
    ex_put(x, op, "X@GRAD", 0, dx);
    ex_put(x, op, "Y@GRAD", 0, dy);
    return true;
}

#define EW(name, kind)                                                                   \
    static bool k_##name(ex_ctx *x, const ir_op *op) { return ew_forward(x, op, kind); } \
    static bool k_##name##_grad(ex_ctx *x, const ir_op *op) { return ew_grad(x, op, kind); }
EW(add, EW_ADD)
EW(sub, EW_SUB)
EW(mul_ew, EW_MUL)
EW(div, EW_DIV)
EW(max, EW_MAX)
EW(min, EW_MIN)
EW(pow, EW_POW)
static bool k_floordiv(ex_ctx *x, const ir_op *op) { return ew_forward(x, op, EW_FLOORDIV); }
static bool k_mod(ex_ctx *x, const ir_op *op) { return ew_forward(x, op, EW_MOD); }
#define CMP(name, kind) \
    static bool k_##name(ex_ctx *x, const ir_op *op) { return ew_forward(x, op, kind); }
CMP(less_than, EW_LT)
CMP(less_equal, EW_LE)
CMP(greater_than, EW_GT)
CMP(greater_equal, EW_GE)
CMP(equal, EW_EQ)
CMP(not_equal, EW_NE)
CMP(logical_and, EW_AND)
CMP(logical_or, EW_OR)
CMP(logical_xor, EW_XOR)

/* C[m,n] = sum_k A(m,k) B(k,n), A stored [m,k] or, transposed, [k,m]. */
static void gemm(const double *A, const double *B, double *C, size_t m, size_t n, size_t kk,
                 bool ta, bool tb)
{
    ex_work3(m, n, kk);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t l = 0; l < kk; l++)
                s += (ta ? A[l * m + i] : A[i * kk + l]) * (tb ? B[j * kk + l] : B[l * n + j]);
            C[i * n + j] = s;
        }
}

static size_t prod(const int64_t *d, int64_t from, int64_t to)
{
    size_t p = 1;
    for (int64_t i = from; i < to; i++)
        p *= (size_t)d[i];
    return p;
}

static bool k_mul(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X"), *Y = X ? ex_in(x, op, "Y") : NULL;
    if (!Y)
        return false;
    int64_t xc = ir_op_get_int(op, "x_num_col_dims", 1), yc = ir_op_get_int(op, "y_num_col_dims", 1);
    if (xc < 1 || xc > X->nd || yc < 1 || yc > Y->nd)
        return ex_fail(x, "num_col_dims out of range");
    size_t m = prod(X->dims, 0, xc), k = prod(X->dims, xc, X->nd);
    size_t k2 = prod(Y->dims, 0, yc), n = prod(Y->dims, yc, Y->nd);
    if (k != k2)
        return ex_fail(x, "X's width %zu differs from Y's height %zu", k, k2);
    int64_t dims[EX_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < xc; i++)
        dims[nd++] = X->dims[i];
    for (int i = yc; i < Y->nd && nd < EX_MAX_DIMS; i++)
        dims[nd++] = Y->dims[i];
    ex_tensor *out = ex_tensor_new(X->dtype, nd, dims);
    gemm(X->data, Y->data, out->data, m, n, k, false, false);
    ex_tensor_set_lod(out, X->lod, X->n_lod);
    ex_put(x, op, "Out", 0, out);
    return true;
}

static bool k_mul_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X"), *Y = X ? ex_in(x, op, "Y") : NULL;
    const ex_tensor *d = Y ? ex_in(x, op, "Out@GRAD") : NULL;
    if (!d)
        return false;
    int64_t xc = ir_op_get_int(op, "x_num_col_dims", 1), yc = ir_op_get_int(op, "y_num_col_dims", 1);
    if (xc < 1 || xc > X->nd || yc < 1 || yc > Y->nd)
        return ex_fail(x, "num_col_dims out of range");
    size_t m = prod(X->dims, 0, xc), k = prod(X->dims, xc, X->nd), n = prod(Y->dims, yc, Y->nd);
    if (k != prod(Y->dims, 0, yc))
        return ex_fail(x, "X's width %zu differs from Y's height %zu", k, prod(Y->dims, 0, yc));
    if (d->numel != m * n)
        return ex_fail(x, "Out@GRAD has %zu elements, not %zu", d->numel, m * n);
    ex_tensor *dx = ex_tensor_like(X), *dy = ex_tensor_like(Y);
    gemm(d->data, Y->data, dx->data, m, k, n, false, true);
    gemm(X->data, d->data, dy->data, k, n, m, true, false);
    ex_put(x, op, "X@GRAD", 0, dx);
    ex_put(x, op, "Y@GRAD", 0, dy);
    return true;
}

/* matmul / matmul_v2 shapes: op(X) is [M,K] per batch, op(Y) [K,N]; a
 * rank-1 operand is a row (X) or a column (Y); batches match or one side
 * has none. */
typedef struct {
    size_t batch, xb, yb, m, k, n;
    bool tx, ty;
    double alpha;
} mm_shape;

static bool mm_plan(ex_ctx *x, const ir_op *op, const ex_tensor *X, const ex_tensor *Y, bool v2,
                    mm_shape *s, int64_t *odims, int *ond)
{
    s->tx = ir_op_get_bool(op, v2 ? "trans_x" : "transpose_X", false);
    s->ty = ir_op_get_bool(op, v2 ? "trans_y" : "transpose_Y", false);
    s->alpha = v2 ? 1.0 : ir_op_get_float(op, "alpha", 1.0);
    if (X->nd < 1 || Y->nd < 1)
        return ex_fail(x, "X and Y need at least one dim");
    int64_t xr = X->nd >= 2 ? X->dims[X->nd - 2] : 1, xc = X->dims[X->nd - 1];
    int64_t yr = Y->nd >= 2 ? Y->dims[Y->nd - 2] : Y->dims[0], yc = Y->nd >= 2 ? Y->dims[Y->nd - 1] : 1;
    if (X->nd == 1)
        s->tx = false;
    if (Y->nd == 1)
        s->ty = false;
    s->m = (size_t)(s->tx ? xc : xr);
    s->k = (size_t)(s->tx ? xr : xc);
    size_t ky = (size_t)(s->ty ? yc : yr);
    s->n = (size_t)(s->ty ? yr : yc);
    if (s->k != ky)
        return ex_fail(x, "X's K (%zu) differs from Y's (%zu)", s->k, ky);
    s->xb = X->nd > 2 ? prod(X->dims, 0, X->nd - 2) : 1;
    s->yb = Y->nd > 2 ? prod(Y->dims, 0, Y->nd - 2) : 1;
    if (s->xb != s->yb && s->xb != 1 && s->yb != 1)
        return ex_fail(x, "batch dims of X and Y differ");
    s->batch = s->xb > s->yb ? s->xb : s->yb;
    const ex_tensor *B = X->nd >= Y->nd ? X : Y;
    *ond = 0;
    for (int i = 0; i + 2 < B->nd; i++)
        odims[(*ond)++] = B->dims[i];
    if (X->nd >= 2 || !v2)
        odims[(*ond)++] = (int64_t)s->m;
    if (Y->nd >= 2 || !v2)
        odims[(*ond)++] = (int64_t)s->n;
    if (*ond == 0)
        odims[(*ond)++] = 1;
    return true;
}

static bool matmul_fwd(ex_ctx *x, const ir_op *op, bool v2)
{
    const ex_tensor *X = ex_in(x, op, "X"), *Y = X ? ex_in(x, op, "Y") : NULL;
    if (!Y)
        return false;
    mm_shape s;
    int64_t od[EX_MAX_DIMS];
    int ond;
    if (!mm_plan(x, op, X, Y, v2, &s, od, &ond))
        return false;
    ex_tensor *out = ex_tensor_new(X->dtype, ond, od);
    for (size_t b = 0; b < s.batch; b++) {
        const double *A = X->data + (s.xb > 1 ? b : 0) * s.m * s.k;
        const double *B = Y->data + (s.yb > 1 ? b : 0) * s.k * s.n;
        gemm(A, B, out->data + b * s.m * s.n, s.m, s.n, s.k, s.tx, s.ty);
    }
    for (size_t i = 0; i < out->numel; i++)
        out->data[i] *= s.alpha;
    ex_put(x, op, "Out", 0, out);
    return true;
}

static bool matmul_grad(ex_ctx *x, const ir_op *op, bool v2)
{
    const ex_tensor *X = ex_in(x, op, "X"), *Y = X ? ex_in(x, op, "Y") : NULL;
    const ex_tensor *d = Y ? ex_in(x, op, "Out@GRAD") : NULL;
    if (!d)
        return false;
    mm_shape s;
    int64_t od[EX_MAX_DIMS];
    int ond;
    if (!mm_plan(x, op, X, Y, v2, &s, od, &ond))
        return false;
    if (d->numel != s.batch * s.m * s.n)
        return ex_fail(x, "Out@GRAD has %zu elements, not %zu", d->numel, s.batch * s.m * s.n);
    ex_tensor *dx = ex_tensor_like(X), *dy = ex_tensor_like(Y);
    double *tmp_x = xmalloc_n(s.m * s.k + 1, sizeof(double)), *tmp_y = xmalloc_n(s.k * s.n + 1, sizeof(double));
    for (size_t b = 0; b < s.batch; b++) {
        const double *A = X->data + (s.xb > 1 ? b : 0) * s.m * s.k;
        const double *B = Y->data + (s.yb > 1 ? b : 0) * s.k * s.n;
        const double *G = d->data + b * s.m * s.n;
        /* d op(X) = G op(Y)^T  [m,k];  d op(Y) = op(X)^T G  [k,n] */
        gemm(G, B, tmp_x, s.m, s.k, s.n, false, !s.ty);
        gemm(A, G, tmp_y, s.k, s.n, s.m, !s.tx, false);
        double *DX = dx->data + (s.xb > 1 ? b : 0) * s.m * s.k;
        double *DY = dy->data + (s.yb > 1 ? b : 0) * s.k * s.n;
        for (size_t i = 0; i < s.m; i++)
            for (size_t j = 0; j < s.k; j++)
                DX[s.tx ? j * s.m + i : i * s.k + j] += s.alpha * tmp_x[i * s.k + j];
        for (size_t i = 0; i < s.k; i++)
            for (size_t j = 0; j < s.n; j++)
                DY[s.ty ? j * s.k + i : i * s.n + j] += s.alpha * tmp_y[i * s.n + j];
    }
    free(tmp_x);
    free(tmp_y);
    ex_put(x, op, "X@GRAD", 0, dx);
    ex_put(x, op, "Y@GRAD", 0, dy);
    return true;
}

static bool k_matmul(ex_ctx *x, const ir_op *op) { return matmul_fwd(x, op, false); }
static bool k_matmul_v2(ex_ctx *x, const ir_op *op) { return matmul_fwd(x, op, true); }
static bool k_matmul_grad(ex_ctx *x, const ir_op *op) { return matmul_grad(x, op, false); }
static bool k_matmul_v2_grad(ex_ctx *x, const ir_op *op) { return matmul_grad(x, op, true); }

const ex_kernel ex_kernels_math[] = {
    {"mul", k_mul}, {"mul_grad", k_mul_grad},
    {"matmul", k_matmul}, {"matmul_grad", k_matmul_grad},
    {"matmul_v2", k_matmul_v2}, {"matmul_v2_grad", k_matmul_v2_grad},
    {"elementwise_add", k_add}, {"elementwise_add_grad", k_add_grad},
    {"elementwise_sub", k_sub}, {"elementwise_sub_grad", k_sub_grad},
    {"elementwise_mul", k_mul_ew}, {"elementwise_mul_grad", k_mul_ew_grad},
    {"elementwise_div", k_div}, {"elementwise_div_grad", k_div_grad},
    {"elementwise_max", k_max}, {"elementwise_max_grad", k_max_grad},
    {"elementwise_min", k_min}, {"elementwise_min_grad", k_min_grad},
    {"elementwise_pow", k_pow}, {"elementwise_pow_grad", k_pow_grad},
    {"elementwise_floordiv", k_floordiv}, {"elementwise_mod", k_mod},
    {"less_than", k_less_than}, {"less_equal", k_less_equal},
    {"greater_than", k_greater_than}, {"greater_equal", k_greater_equal},
    {"equal", k_equal}, {"not_equal", k_not_equal},
    {"logical_and", k_logical_and}, {"logical_or", k_logical_or},
    {"logical_xor", k_logical_xor},
    {NULL, NULL},
};
