/* k_table.c - embedding lookups (SELECTED_ROWS grads), sequence_pool,
 * concat, split and the row/id routing ops of distributed tables:
 * split_byref, split_selected_rows, split_ids, merge_ids. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "../ckd.h"
#include "exec.h"

static bool lookup(ex_ctx *x, const ir_op *op, bool v2)
{
    const ex_tensor *W = ex_in(x, op, "W"), *I = W ? ex_in(x, op, "Ids") : NULL;
    if (!I)
        return false;
    if (W->nd != 2)
        return ex_fail(x, "W must have 2 dims");
    int64_t pad = ir_op_get_int(op, "padding_idx", -1), h = W->dims[0];
    if (pad < 0 && pad != -1)
        pad += h;
    size_t w = (size_t)W->dims[1];
    int64_t dims[EX_MAX_DIMS];
    int nd = 0;
    int keep = v2 || I->nd < 2 || I->dims[I->nd - 1] != 1 ? I->nd : I->nd - 1;
    for (int i = 0; i < keep && nd + 1 < EX_MAX_DIMS; i++)
        dims[nd++] = I->dims[i];
    dims[nd++] = (int64_t)w;
    ex_tensor *out = ex_tensor_new(W->dtype, nd, dims);
    ex_tensor_set_lod(out, I->lod, I->n_lod);
    for (size_t i = 0; i < I->numel; i++) {
        int64_t id = (int64_t)I->data[i];
        if (id == pad)
            continue;
        if (id < 0 || id >= h) {
            ex_tensor_free(out);
            return ex_fail(x, "id %lld is outside the table's %lld rows", (long long)id, (long long)h);
        }
        memcpy(out->data + i * w, W->data + (size_t)id * w, w * sizeof *out->data);
    }
    ex_put(x, op, "Out", 0, out);
    return true;
}

/* Sparse: rows = the ids, in order, duplicates kept (Paddle's layout);
 * the padding row's values are zero (its gradient is zero). */
static bool lookup_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *W = ex_in(x, op, "W"), *I = W ? ex_in(x, op, "Ids") : NULL;
    const ex_tensor *d = I ? ex_in(x, op, "Out@GRAD") : NULL;
    if (!d)
        return false;
    int64_t pad = ir_op_get_int(op, "padding_idx", -1), h = W->dims[0];
    if (pad < 0 && pad != -1)
        pad += h;
    size_t w = (size_t)W->dims[1], n = I->numel;
    if (d->numel != n * w)
        return ex_fail(x, "Out@GRAD has %zu elements, not %zu", d->numel, n * w);
    ex_tensor *g;
    if (ir_op_get_bool(op, "is_sparse", false)) {
        int64_t *rows = xmalloc_n(n + 1, sizeof(int64_t));
        for (size_t i = 0; i < n; i++)
            rows[i] = (int64_t)I->data[i];
        g = ex_rows_new(W->dtype, n, rows, 1, &W->dims[1], h);
        free(rows);
        for (size_t i = 0; i < n; i++)
            if (g->rows[i] != pad)
                memcpy(g->data + i * w, d->data + i * w, w * sizeof *g->data);
    } else {
        g = ex_tensor_like(W);
        for (size_t i = 0; i < n; i++) {
            int64_t id = (int64_t)I->data[i];
            if (id == pad || id < 0 || id >= h)
                continue;
            for (size_t j = 0; j < w; j++)
                g->data[(size_t)id * w + j] += d->data[i * w + j];
        }
    }
    ex_put(x, op, "W@GRAD", 0, g);
    return true;
}

static bool k_lookup(ex_ctx *x, const ir_op *op) { return lookup(x, op, false); }
static bool k_lookup_v2(ex_ctx *x, const ir_op *op) { return lookup(x, op, true); }

static bool seq_check(ex_ctx *x, const ex_tensor *X)
{
    if (!X->lod || X->n_lod < 1)
        return ex_fail(x, "X has no LoD");
    if (X->lod[X->n_lod - 1] != X->dims[0])
        return ex_fail(x, "X's LoD does not end at its %lld rows", (long long)X->dims[0]);
    return true;
}

static bool k_sequence_pool(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X");
    if (!X || !seq_check(x, X))
        return false;
    const char *type = ir_op_get_string(op, "pooltype");
    type = type ? type : "AVERAGE";
    double pad = ir_op_get_float(op, "pad_value", 0);
    size_t ns = X->n_lod - 1, w = X->dims[0] ? X->numel / (size_t)X->dims[0] : 0;
    int64_t dims[EX_MAX_DIMS];
    memcpy(dims, X->dims, sizeof dims);
    dims[0] = (int64_t)ns;
    ex_tensor *out = ex_tensor_new(X->dtype, X->nd, dims), *mi = ex_tensor_new(IR_INT32, X->nd, dims);
    for (size_t s = 0; s < ns; s++) {
        int64_t a = X->lod[s], b = X->lod[s + 1], len = b - a;
        for (size_t j = 0; j < w; j++) {
            double *o = &out->data[s * w + j];
            if (len <= 0) {
                *o = pad;
                continue;
            }
            if (!strcmp(type, "MAX")) {
                int64_t best = a;
                for (int64_t r = a + 1; r < b; r++)
                    if (X->data[(size_t)r * w + j] > X->data[(size_t)best * w + j])
                        best = r;
                *o = X->data[(size_t)best * w + j];
                mi->data[s * w + j] = (double)best;
            } else if (!strcmp(type, "LAST") || !strcmp(type, "FIRST")) {
                *o = X->data[(size_t)(type[0] == 'L' ? b - 1 : a) * w + j];
            } else {
                for (int64_t r = a; r < b; r++)
                    *o += X->data[(size_t)r * w + j];
                if (!strcmp(type, "AVERAGE"))
                    *o /= (double)len;
                else if (!strcmp(type, "SQRT"))
                    *o /= sqrt((double)len);
                else if (strcmp(type, "SUM")) {
                    ex_tensor_free(out);
                    ex_tensor_free(mi);
                    return ex_fail(x, "unknown pooltype '%s'", type);
                }
            }
        }
    }
    ex_put(x, op, "Out", 0, out);
    ex_put(x, op, "MaxIndex", 0, mi);
    return true;
}

static bool k_sequence_pool_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X"), *d = X ? ex_in(x, op, "Out@GRAD") : NULL;
    if (!d || !seq_check(x, X))
        return false;
    const char *type = ir_op_get_string(op, "pooltype");
    type = type ? type : "AVERAGE";
    bool max = !strcmp(type, "MAX");
    bool ok = true;
    const ex_tensor *mi = max ? ex_in(x, op, "MaxIndex") : NULL;
    if (max && !mi)
        return false;
    size_t ns = X->n_lod - 1, w = X->dims[0] ? X->numel / (size_t)X->dims[0] : 0;
    /* Out@GRAD and MaxIndex are whatever the program names: they index
     * by sequence and MaxIndex's values index dx */
    if (d->numel != ns * w || (max && mi->numel != ns * w))
        return ex_fail(x, "Out@GRAD or MaxIndex does not hold %zu sequences of %zu", ns, w);
    ex_tensor *dx = ex_tensor_like(X);
    for (size_t s = 0; s < ns && ok; s++) {
        int64_t a = X->lod[s], b = X->lod[s + 1], len = b - a;
        for (size_t j = 0; j < w && len > 0; j++) {
            double g = d->data[s * w + j];
            if (max) {
                double r = mi->data[s * w + j];
                if (!(r >= (double)a && r < (double)b)) {
                    ok = ex_fail(x, "MaxIndex %g is outside sequence %zu's rows", r, s);
                    break;
                }
                dx->data[(size_t)r * w + j] = g;
            } else if (!strcmp(type, "LAST") || !strcmp(type, "FIRST")) {
                dx->data[(size_t)(type[0] == 'L' ? b - 1 : a) * w + j] = g;
            } else {
                double k = !strcmp(type, "AVERAGE") ? 1.0 / (double)len
                         : !strcmp(type, "SQRT") ? 1.0 / sqrt((double)len) : 1.0;
                for (int64_t r = a; r < b; r++)
                    dx->data[(size_t)r * w + j] = g * k;
            }
        }
    }
    if (!ok) {
        ex_tensor_free(dx);
        return false;
    }
    ex_put(x, op, "X@GRAD", 0, dx);
    return true;
}

/* Copies `t` into/out of a concatenation along `axis` at offset `at`. */
static void axis_copy(double *big, const int64_t *bdims, int nd, int axis, int64_t at,
                      double *part, const int64_t *pdims, bool into_big)
{
    size_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++)
        outer *= (size_t)bdims[i];
    for (int i = axis + 1; i < nd; i++)
        inner *= (size_t)bdims[i];
    size_t bn = (size_t)bdims[axis], pn = (size_t)pdims[axis];
    if (!pn || !inner)
        return;     /* nothing to copy: no loop of empty copies (k_act.c axis_split) */
    for (size_t o = 0; o < outer; o++) {
        double *b = big + (o * bn + (size_t)at) * inner, *p = part + o * pn * inner;
        if (into_big)
            memcpy(b, p, pn * inner * sizeof *b);
        else
            memcpy(p, b, pn * inner * sizeof *b);
    }
}

/* concat's and split's `axis`: checked against nd, -1 when out of range
 * (x->err then names it). */
static int norm_axis(ex_ctx *x, const ir_op *op, int nd)
{
    int axis;
    return ex_attr_axis(x, op, "axis", 0, nd, false, &axis) ? axis : -1;
}

static bool k_concat(ex_ctx *x, const ir_op *op)
{
    size_t n = ex_n_in(op, "X");
    if (!n)
        return ex_fail(x, "no inputs");
    const ex_tensor *first = ex_in_at(x, op, "X", 0);
    if (!first)
        return false;
    int axis = norm_axis(x, op, first->nd);
    if (axis < 0)
        return false;
    int64_t dims[EX_MAX_DIMS];
    memcpy(dims, first->dims, sizeof dims);
    dims[axis] = 0;
    for (size_t i = 0; i < n; i++) {
        const ex_tensor *t = ex_in_at(x, op, "X", i);
        if (!t)
            return false;
        for (int d = 0; d < first->nd; d++)
            if (d != axis && (t->nd != first->nd || t->dims[d] != first->dims[d]))
                return ex_fail(x, "input %zu's dims do not match input 0's", i);
        if (ckd_add_i64(&dims[axis], dims[axis], t->dims[axis]))
            return ex_fail(x, "the inputs' dims along axis %d sum past int64", axis);
    }
    ex_tensor *out = ex_tensor_new(first->dtype, first->nd, dims);
    int64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const ex_tensor *t = ex_in_at(x, op, "X", i);
        axis_copy(out->data, dims, first->nd, axis, at, t->data, t->dims, true);
        at += t->dims[axis];
    }
    ex_put(x, op, "Out", 0, out);
    return true;
}

/* Splits `X` along `axis` into parts of the given sizes, into slot `out`. */
static bool split_into(ex_ctx *x, const ir_op *op, const ex_tensor *X, int axis,
                       const int64_t *sizes, size_t n, const char *out, const char *tag)
{
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (sizes[i] < 0 || ckd_add_i64(&total, total, sizes[i]))
            return ex_fail(x, "%s entry %zu (%lld) is negative or too large", tag, i,
                           (long long)sizes[i]);
    if (axis < 0 || axis >= X->nd || total != X->dims[axis])
        return ex_fail(x, "%s sum to %lld, but the split dim is %lld", tag, (long long)total,
                       axis >= 0 && axis < X->nd ? (long long)X->dims[axis] : -1LL);
    int64_t at = 0;
    ex_tensor **parts = xcalloc(n + 1, sizeof(ex_tensor *));
    for (size_t i = 0; i < n; i++) {
        int64_t dims[EX_MAX_DIMS];
        memcpy(dims, X->dims, sizeof dims);
        dims[axis] = sizes[i];
        parts[i] = ex_tensor_new(X->dtype, X->nd, dims);
        axis_copy(X->data, X->dims, X->nd, axis, at, parts[i]->data, dims, false);
        at += sizes[i];
    }
    for (size_t i = 0; i < n; i++)
        ex_put(x, op, out, i, parts[i]);
    free(parts);
    return true;
}

/* Sizes of split/split_byref: `sections` (one -1 allowed) or `num` equal
 * parts. */
static bool split_sizes(ex_ctx *x, const ir_op *op, const ex_tensor *X, int axis, size_t n_out,
                        int64_t **sizes)
{
    int64_t *s = xcalloc(n_out + 1, sizeof(int64_t));
    size_t ns = ex_attr_ints(op, "sections", s, n_out + 1);
    int64_t dim = axis >= 0 && axis < X->nd ? X->dims[axis] : 0;
    if (ns) {
        if (ns != n_out) {
            free(s);
            return ex_fail(x, "attr 'sections' has %zu entries for %zu outputs", ns, n_out);
        }
        int64_t known = 0, unknown = -1;
        for (size_t i = 0; i < ns; i++)
            if (s[i] < 0)
                unknown = (int64_t)i;
            else if (ckd_add_i64(&known, known, s[i]))
                known = INT64_MAX;  /* split_into refuses the sum */
        if (unknown >= 0)
            s[unknown] = known > dim ? -1 : dim - known;
    } else {
        int64_t num = ir_op_get_int(op, "num", (int64_t)n_out);
        if (num <= 0 || (size_t)num != n_out || dim % num) {
            free(s);
            return ex_fail(x, "cannot split dim %lld into %zu equal parts", (long long)dim, n_out);
        }
        for (size_t i = 0; i < n_out; i++)
            s[i] = dim / num;
    }
    *sizes = s;
    return true;
}

static bool k_split(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X");
    if (!X)
        return false;
    bool byref = !strcmp(op->type, "split_byref");
    int axis = byref ? 0 : norm_axis(x, op, X->nd);
    if (axis < 0 || axis >= X->nd)
        return axis < 0 ? false : ex_fail(x, "X has no dims to split");
    size_t n = ex_n_out(op, "Out");
    int64_t *sizes = NULL;
    if (!split_sizes(x, op, X, axis, n, &sizes))
        return false;
    bool ok = split_into(x, op, X, axis, sizes, n, "Out", "sections");
    free(sizes);
    return ok;
}

static bool k_concat_grad(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *d = ex_in(x, op, "Out@GRAD");
    if (!d)
        return false;
    size_t n = ex_n_in(op, "X");
    int axis = norm_axis(x, op, d->nd);
    if (axis < 0)
        return false;
    int64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const ex_tensor *t = ex_in_at(x, op, "X", i);
        if (!t)
            return false;
        bool fits = t->nd == d->nd && at + t->dims[axis] <= d->dims[axis];
        for (int k = 0; fits && k < d->nd; k++)
            fits = k == axis || t->dims[k] == d->dims[k];
        if (!fits)
            return ex_fail(x, "X does not fit Out@GRAD");
        ex_tensor *g = ex_tensor_new(d->dtype, t->nd, t->dims);
        axis_copy(d->data, d->dims, d->nd, axis, at, g->data, t->dims, false);
        at += t->dims[axis];
        ex_put(x, op, "X@GRAD", i, g);
    }
    return true;
}

/* Row r of X goes to the section holding it, renumbered from the
 * section's start (Paddle's split_selected_rows). */
static bool k_split_selected_rows(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *X = ex_in(x, op, "X");
    if (!X)
        return false;
    size_t n = ex_n_out(op, "Out");
    int64_t *h = xcalloc(n + 1, sizeof(int64_t));
    size_t nh = ex_attr_ints(op, "height_sections", h, n + 1);
    if (nh != n) {
        free(h);
        return ex_fail(x, "attr 'height_sections' has %zu entries for %zu outputs", nh, n);
    }
    ex_tensor *dense = X->kind == EX_ROWS ? NULL : ex_tensor_copy(X);
    size_t nr = X->kind == EX_ROWS ? (size_t)X->dims[0] : (size_t)X->dims[0];
    size_t w = nr ? X->numel / nr : 0;
    /* each section scans all nr rows: outputs x rows, which building X
     * (nr charged even when w is 0) does not cover (fuzz finding H) */
    ex_work3(n, nr, 1);
    int64_t off = 0;
    for (size_t k = 0; k < n; k++) {
        size_t m = 0;
        int64_t *rows = xmalloc_n(nr + 1, sizeof(int64_t));
        for (size_t i = 0; i < nr; i++) {
            int64_t r = X->kind == EX_ROWS ? X->rows[i] : (int64_t)i;
            if (r >= off && r < off + h[k])
                rows[m++] = (int64_t)i;
        }
        ex_tensor *t = ex_rows_new(X->dtype, m, NULL, X->nd - 1, X->dims + 1, h[k]);
        for (size_t i = 0; i < m; i++) {
            size_t src = (size_t)rows[i];
            t->rows[i] = (X->kind == EX_ROWS ? X->rows[src] : (int64_t)src) - off;
            memcpy(t->data + i * w, X->data + src * w, w * sizeof *t->data);
        }
        free(rows);
        ex_put(x, op, "Out", k, t);
        off += h[k];
    }
    ex_tensor_free(dense);
    free(h);
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* split_ids: the distinct ids of all inputs, sorted, go to shard
 * id % shards; SELECTED_ROWS input is split by row the same way. */
static bool k_split_ids(ex_ctx *x, const ir_op *op)
{
    size_t n_in = ex_n_in(op, "Ids"), n = ex_n_out(op, "Out"), total = 0;
    if (!n)
        return ex_fail(x, "no outputs");
    const ex_tensor *first = ex_in_at(x, op, "Ids", 0);
    if (!first)
        return false;
    if (first->kind == EX_ROWS) {
        size_t nr = (size_t)first->dims[0], w = nr ? first->numel / nr : 0;
        ex_work3(n, nr, 2);     /* two scans of the rows per shard */
        for (size_t k = 0; k < n; k++) {
            size_t m = 0;
            for (size_t i = 0; i < nr; i++)
                m += (size_t)first->rows[i] % n == k;
            ex_tensor *t = ex_rows_new(first->dtype, m, NULL, first->nd - 1, first->dims + 1,
                                       first->height);
            m = 0;
            for (size_t i = 0; i < nr; i++)
                if ((size_t)first->rows[i] % n == k) {
                    t->rows[m] = first->rows[i];
                    memcpy(t->data + m * w, first->data + i * w, w * sizeof *t->data);
                    m++;
                }
            ex_put(x, op, "Out", k, t);
        }
        return true;
    }
    for (size_t i = 0; i < n_in; i++) {
        const ex_tensor *t = ex_in_at(x, op, "Ids", i);
        if (!t)
            return false;
        total += t->numel;
    }
    double *all = xmalloc_n(total + 1, sizeof(double));
    size_t at = 0;
    for (size_t i = 0; i < n_in; i++) {
        const ex_tensor *t = ex_scope_get(x->scope, ir_op_input(op, "Ids")->args[i]);
        memcpy(all + at, t->data, t->numel * sizeof *all);
        at += t->numel;
    }
    qsort(all, total, sizeof *all, cmp_double);
    size_t u = 0;
    for (size_t i = 0; i < total; i++)
        if (!u || all[i] != all[u - 1])
            all[u++] = all[i];
    ex_work3(n, u, 2);          /* two scans of the ids per shard */
    for (size_t k = 0; k < n; k++) {
        int64_t dims[2] = {0, 1};
        for (size_t i = 0; i < u; i++)
            dims[0] += (size_t)all[i] % n == k;
        ex_tensor *t = ex_tensor_new(IR_INT64, 2, dims);
        size_t m = 0;
        for (size_t i = 0; i < u; i++)
            if ((size_t)all[i] % n == k)
                t->data[m++] = all[i];
        ex_put(x, op, "Out", k, t);
    }
    free(all);
    return true;
}

/* merge_ids: Out[i] row j = the X row whose Rows entry is Ids[i][j]. */
static bool k_merge_ids(ex_ctx *x, const ir_op *op)
{
    size_t nx = ex_n_in(op, "X"), n_ids = ex_n_in(op, "Ids");
    if (ex_n_in(op, "Rows") != nx)
        return ex_fail(x, "Rows and X differ in count");
    GHashTable *where = g_hash_table_new_full(g_int64_hash, g_int64_equal, free, NULL);
    int64_t width = -1;
    bool ok = true;
    for (size_t i = 0; i < nx && ok; i++) {
        const ex_tensor *r = ex_in_at(x, op, "Rows", i), *t = r ? ex_in_at(x, op, "X", i) : NULL;
        if (!t) {
            ok = false;
            break;
        }
        /* row j of X i is read as j * width of the common width: every X
         * holds its Rows' count of rows of one width (packed below as
         * i << 32 | j) */
        int64_t wi = t->nd > 1 ? t->dims[1] : 1;
        if ((width >= 0 && wi != width) || (t->nd ? (uint64_t)t->dims[0] : 1) < r->numel ||
            r->numel >= (UINT64_C(1) << 32) || t->numel != r->numel * (size_t)wi) {
            ok = ex_fail(x, "X %zu does not hold one row of width %lld per Rows entry", i,
                         (long long)(width >= 0 ? width : wi));
            break;
        }
        width = wi;
        for (size_t j = 0; j < r->numel; j++) {
            int64_t *key = xmalloc_n(1, sizeof(int64_t));
            *key = (int64_t)r->data[j];
            g_hash_table_insert(where, key, GSIZE_TO_POINTER(((i << 32) | j) + 1));
        }
    }
    for (size_t i = 0; i < n_ids && ok; i++) {
        const ex_tensor *ids = ex_in_at(x, op, "Ids", i);
        if (!ids) {
            ok = false;
            break;
        }
        int64_t dims[2] = {(int64_t)ids->numel, width < 0 ? 0 : width};
        ex_tensor *out = ex_tensor_new(IR_FP32, 2, dims);
        ex_tensor_set_lod(out, ids->lod, ids->n_lod);
        for (size_t j = 0; j < ids->numel && ok; j++) {
            int64_t id = (int64_t)ids->data[j];
            size_t v = GPOINTER_TO_SIZE(g_hash_table_lookup(where, &id));
            if (!v) {
                ok = ex_fail(x, "id %lld is in no Rows input", (long long)id);
                break;
            }
            v--;
            const ex_tensor *src = ex_in_at(x, op, "X", v >> 32);
            memcpy(out->data + j * (size_t)width, src->data + (v & 0xffffffffu) * (size_t)width,
                   (size_t)width * sizeof *out->data);
        }
        if (ok)
            ex_put(x, op, "Out", i, out);
        else
            ex_tensor_free(out);
    }
    g_hash_table_destroy(where);
    return ok;
}

/* lookup_sparse_table (a pserver's prefetch block): W is the pserver's
 * SELECTED_ROWS shard of a distributed table, looked up by id.  Paddle
 * grows the table on a miss (the next free slot of the startup's random
 * value); verify transpile gives every slot its id up front (dist.c), so a
 * miss means the id reached a pserver that does not hold it. */
static bool k_lookup_sparse_table(ex_ctx *x, const ir_op *op)
{
    const ex_tensor *W = ex_in(x, op, "W"), *I = W ? ex_in(x, op, "Ids") : NULL;
    if (!I)
        return false;
    if (W->kind != EX_ROWS || W->nd != 2)
        return ex_fail(x, "W '%s' is not a 2-dim SELECTED_ROWS table", ir_op_input1(op, "W"));
    int64_t pad = ir_op_get_int(op, "padding_idx", -1), dims[2] = {(int64_t)I->numel, W->dims[1]};
    size_t w = (size_t)W->dims[1];
    int64_t *ids = xmalloc_n(I->numel + 1, sizeof(int64_t));
    for (size_t i = 0; i < I->numel; i++)
        ids[i] = (int64_t)I->data[i];
    size_t *at = ex_rows_locate(W, ids, I->numel);
    ex_tensor *out = ex_tensor_new(W->dtype, 2, dims);
    bool ok = true;
    for (size_t i = 0; ok && i < I->numel; i++) {
        if (ids[i] == pad)
            continue;
        if (at[i] == SIZE_MAX)
            ok = ex_fail(x, "id %lld is not in this pserver's rows of '%s'", (long long)ids[i],
                         ir_op_input1(op, "W"));
        else
            memcpy(out->data + i * w, W->data + at[i] * w, w * sizeof *out->data);
    }
    free(ids);
    free(at);
    if (ok)
        ex_put(x, op, "Out", 0, out);
    else
        ex_tensor_free(out);
    return ok;
}

const ex_kernel ex_kernels_table[] = {
    {"lookup_sparse_table", k_lookup_sparse_table},
    {"lookup_table", k_lookup}, {"lookup_table_grad", lookup_grad},
    {"lookup_table_v2", k_lookup_v2}, {"lookup_table_v2_grad", lookup_grad},
    {"sequence_pool", k_sequence_pool}, {"sequence_pool_grad", k_sequence_pool_grad},
    {"concat", k_concat}, {"concat_grad", k_concat_grad},
    {"split", k_split}, {"split_byref", k_split},
    {"split_selected_rows", k_split_selected_rows},
    {"split_ids", k_split_ids}, {"merge_ids", k_merge_ids},
    {NULL, NULL},
};
