/* gradcheck.c - analytic gradients (forward + backward ops once) against
 * central differences (forward ops only, twice per checked element), all
 * runs starting from one seeded scope so that dropout masks, batch
 * statistics and running means are the same in every run. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "feed.h"
#include "gradcheck.h"

double ex_grad_rel_error(double analytic, double numeric)
{
    double d = fabs(numeric) < 1e-3 ? 1.0 : fabs(numeric);
    return fabs(analytic - numeric) / d;
}

/* Pairs from op_role_var, in op order, first occurrence kept. */
static size_t param_pairs(const ir_block *b, ex_grad_result **out)
{
    GArray *a = g_array_new(FALSE, TRUE, sizeof(ex_grad_result));
    pmap seen = PMAP_INIT;
    for (size_t i = 0; i < b->n_ops; i++) {
        const ir_attr *rv = ir_op_attr(b->ops[i], "op_role_var");
        int role = ir_op_role(b->ops[i]);
        if (!rv || rv->type != IR_ATTR_STRINGS || role < 0 || !(role & IR_ROLE_BACKWARD))
            continue;
        for (size_t k = 0; k + 1 < rv->n_strings; k += 2) {
            const char *p = ir_intern_n((const char *)rv->strings[k].data, rv->strings[k].len);
            const char *g = ir_intern_n((const char *)rv->strings[k + 1].data, rv->strings[k + 1].len);
            if (!pmap_add(&seen, p))
                continue;
            ex_grad_result r = {.param = p, .grad = g};
            g_array_append_val(a, r);
        }
    }
    pmap_free(&seen);
    size_t n = a->len;
    *out = xmalloc_n(n + 1, sizeof **out);
    if (n)
        memcpy(*out, a->data, n * sizeof **out);
    g_array_free(a, TRUE);
    return n;
}

static int by_param(const void *a, const void *b)
{
    return strcmp(((const ex_grad_result *)a)->param, ((const ex_grad_result *)b)->param);
}

static bool run_from(const ir_program *prog, const ex_scope *base, uint64_t seed,
                     ex_op_filter filter, ex_scope **out, char *err, size_t errlen)
{
    ex_scope *s = ex_scope_clone(base);
    ex_ctx x;
    ex_ctx_init(&x, prog, s, seed);
    if (!ex_run_block(&x, 0, filter)) {
        g_strlcpy(err, x.err, errlen);
        ex_scope_free(s);
        return false;
    }
    *out = s;
    return true;
}

static bool loss_value(const ex_scope *s, const char *loss, double *v, char *err, size_t errlen)
{
    const ex_tensor *t = ex_scope_get(s, loss);
    if (!t) {
        g_snprintf(err, errlen, "the forward ops do not compute the loss '%s'", loss);
        return false;
    }
    *v = 0;
    for (size_t i = 0; i < t->numel; i++)
        *v += t->data[i];
    return true;
}

/* Loss with element i of `param` moved by d. */
static bool loss_at(const ir_program *prog, ex_scope *base, const char *param, size_t i,
                    double d, const ex_gradcheck_opts *o, const char *loss, double *v,
                    char *err, size_t errlen)
{
    ex_tensor *p = ex_scope_get(base, param);
    double keep = p->data[i];
    p->data[i] = keep + d;
    ex_scope *s = NULL;
    bool ok = run_from(prog, base, o->seed + 1, ex_is_forward_op, &s, err, errlen) &&
              loss_value(s, loss, v, err, errlen);
    p->data[i] = keep;
    ex_scope_free(s);
    return ok;
}

static bool check_param(const ir_program *prog, ex_scope *base, const ex_scope *analytic,
                        ex_grad_result *r, const ex_gradcheck_opts *o, const char *loss,
                        ex_rng *pick, char *err, size_t errlen)
{
    const ex_tensor *p = ex_scope_get(base, r->param), *g = ex_scope_get(analytic, r->grad);
    if (!p) {
        g_snprintf(err, errlen, "parameter '%s' holds no value", r->param);
        return false;
    }
    if (!g) {
        g_snprintf(err, errlen, "the backward ops do not compute '%s'", r->grad);
        return false;
    }
    ex_tensor *dense = ex_densify(g);
    if (dense->numel != p->numel) {
        g_snprintf(err, errlen, "gradient '%s' has %zu elements, parameter '%s' %zu", r->grad,
                   dense->numel, r->param, p->numel);
        ex_tensor_free(dense);
        return false;
    }
    size_t n = p->numel, k = o->max_samples && o->max_samples < n ? o->max_samples : n;
    bool ok = true;
    r->worst_rel = -1;
    for (size_t s = 0; s < k && ok; s++) {
        size_t i = k == n ? s : (size_t)(ex_rng_next(pick) % n);
        double lp, lm;
        ok = loss_at(prog, base, r->param, i, o->delta, o, loss, &lp, err, errlen) &&
             loss_at(prog, base, r->param, i, -o->delta, o, loss, &lm, err, errlen);
        if (!ok)
            break;
        double num = (lp - lm) / (2 * o->delta), rel = ex_grad_rel_error(dense->data[i], num);
        if (rel > r->worst_rel || isnan(rel)) {
            r->worst_rel = isnan(rel) ? INFINITY : rel;
            r->worst_index = i;
            r->analytic = dense->data[i];
            r->numeric = num;
        }
        r->n_checked++;
    }
    ex_tensor_free(dense);
    return ok;
}

bool ex_grad_check(const ir_program *prog, const ir_program *startup, const char *loss,
                   const ex_gradcheck_opts *o, ex_grad_result **out, size_t *n_out, char *err,
                   size_t errlen)
{
    *out = NULL;
    *n_out = 0;
    const ir_block *b0 = ir_program_block(prog, 0);
    if (!b0 || !ir_block_find_var(b0, ir_intern(loss))) {
        g_snprintf(err, errlen, "block 0 has no var '%.200s' (--loss)", loss);
        return false;
    }
    ex_grad_result *res;
    size_t n = param_pairs(b0, &res);
    if (!n) {
        free(res);
        g_snprintf(err, errlen, "no backward op names a parameter gradient (op_role_var); "
                                "run 'pdtrans backward' first");
        return false;
    }
    qsort(res, n, sizeof *res, by_param);
    ex_scope *base = ex_scope_new();
    ex_ctx x;
    ex_ctx_init(&x, startup ? startup : prog, base, o->seed);
    bool ok = !startup || ex_run_block(&x, 0, NULL);
    if (!ok)
        g_snprintf(err, errlen, "startup: %s", x.err);
    ex_feed_opts fo = {.batch = o->batch, .scale = 1.0};
    ok = ok && ex_feed_random(prog, base, &fo, &x.rng, err, errlen);
    ex_scope *analytic = NULL;
    ok = ok && run_from(prog, base, o->seed + 1, ex_is_not_optimize_op, &analytic, err, errlen);
    ex_rng pick;
    ex_rng_seed(&pick, o->seed + 2);
    for (size_t i = 0; ok && i < n; i++)
        ok = check_param(prog, base, analytic, &res[i], o, loss, &pick, err, errlen);
    ex_scope_free(analytic);
    ex_scope_free(base);
    if (!ok) {
        free(res);
        return false;
    }
    *out = res;
    *n_out = n;
    return true;
}
