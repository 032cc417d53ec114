/* optimizer_util.c - names, the (param, grad) list, op/var builders and
 * startup initialisers shared by the optimizer-family passes. */
#include "optimizer_util.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/pmap.h"
#include "../../ir/infershape.h"
#include "../../ir/unique.h"
#include "../../ir/util.h"
#include "../era/era.h"

/* ---- unique names ------------------------------------------------------ */

struct opt_namer {
    GHashTable *next;       /* key (owned) -> next counter (GSIZE_TO_POINTER) */
    GHashTable *scopes;     /* scope (owned) -> times used */
};

static void bump(GHashTable *t, const char *key, size_t klen, gsize next)
{
    char *k = xstrndup(key, klen);
    gpointer old;
    if (g_hash_table_lookup_extended(t, k, NULL, &old)) {
        if (GPOINTER_TO_SIZE(old) >= next) {
            free(k);
            return;
        }
    }
    g_hash_table_replace(t, k, GSIZE_TO_POINTER(next));
}

/* ir_unique_fn over a counters table (unique.h says which counters a
 * name or a scope shows). */
static void bump_fn(void *t, const char *key, size_t klen, size_t next)
{
    bump(t, key, klen, (gsize)next);
}

static void record(GHashTable *t, const char *name)
{
    ir_unique_name(name, bump_fn, t);
}

opt_namer *opt_namer_new(const ir_program *main, const ir_program *startup)
{
    opt_namer *n = xcalloc(1, sizeof *n);
    n->next = g_hash_table_new_full(g_str_hash, g_str_equal, free, NULL);
    n->scopes = g_hash_table_new_full(g_str_hash, g_str_equal, free, NULL);
    ir_unique_vars(main, bump_fn, n->next);
    ir_unique_vars(startup, bump_fn, n->next);
    /* name scopes continue past those the input's ops entered, as
     * framework.name_scope would after building the input */
    ir_unique_scopes(main, bump_fn, n->scopes);
    ir_unique_scopes(startup, bump_fn, n->scopes);
    return n;
}

void opt_namer_free(opt_namer *n)
{
    if (!n)
        return;
    g_hash_table_destroy(n->next);
    g_hash_table_destroy(n->scopes);
    free(n);
}

const char *opt_namer_gen(opt_namer *n, const char *key)
{
    gsize c = GPOINTER_TO_SIZE(g_hash_table_lookup(n->next, key));
    const char *name = ir_internf("%s_%zu", key, (size_t)c);
    record(n->next, name);
    return name;
}

const char *opt_namer_layer_tmp(opt_namer *n, const char *type)
{
    const char *helper = opt_namer_gen(n, type);
    char key[512];
    snprintf(key, sizeof key, "%s.tmp", helper);
    return opt_namer_gen(n, key);
}

const char *opt_namer_scope(opt_namer *n, const char *scope)
{
    gsize used = GPOINTER_TO_SIZE(g_hash_table_lookup(n->scopes, scope));
    g_hash_table_replace(n->scopes, xstrdup(scope), GSIZE_TO_POINTER(used + 1));
    if (used == 0)
        return ir_internf("/%s/", scope);
    return ir_internf("/%s_%zu/", scope, (size_t)used);
}

/* ---- the (param, grad) list -------------------------------------------- */

static int cmp_pair(const void *a, const void *b)
{
    const char *const *x = a, *const *y = b;
    return strcmp(x[0], y[0]);
}

/* Backward ops carry op_role_var = [param, grad, ...] on the last op that
 * writes each parameter gradient (append_backward). */
static void pairs_from_role_vars(pdt_ctx *ctx)
{
    const ir_block *b = ir_program_block(ctx->main, 0);
    pmap seen = PMAP_INIT;      /* param -> its index + 1 */
    /* --params limits the parameters, as parameter_list does. */
    pmap wanted = PMAP_INIT;
    for (size_t i = 0; i < ctx->backward.params.n; i++)
        pmap_add(&wanted, ctx->backward.params.items[i]);
    size_t cap = 8, n = 0;
    const char **params = xcalloc(cap, sizeof *params), **grads = xcalloc(cap, sizeof *grads);
    for (size_t k = 0; k < b->n_ops; k++) {
        const ir_op *op = b->ops[k];
        if (ir_op_role(op) != IR_ROLE_BACKWARD)
            continue;
        const ir_attr *rv = ir_op_attr(op, "op_role_var");
        if (!rv || rv->type != IR_ATTR_STRINGS)
            continue;
        for (size_t i = 0; i + 1 < rv->n_strings; i += 2) {
            const char *p = ir_intern_n((const char *)rv->strings[i].data, rv->strings[i].len);
            const char *g =
                ir_intern_n((const char *)rv->strings[i + 1].data, rv->strings[i + 1].len);
            size_t at = (size_t)(uintptr_t)pmap_get(&seen, p);
            if (at) {
                grads[at - 1] = g;
                continue;
            }
            if (ctx->backward.params.n && !pmap_has(&wanted, p))
                continue;
            if (n == cap) {
                cap *= 2;
                params = xrealloc(params, cap * sizeof *params);
                grads = xrealloc(grads, cap * sizeof *grads);
            }
            pmap_put(&seen, p, (void *)(uintptr_t)(n + 1));
            params[n] = p;
            grads[n++] = g;
        }
    }
    pmap_free(&seen);
    pmap_free(&wanted);
    pdt_list_free(&ctx->bw_params);
    pdt_list_free(&ctx->bw_grads);
    ctx->bw_params = (pdt_list){n, params};
    ctx->bw_grads = (pdt_list){n, grads};
}

int opt_prepare_pairs(pdt_ctx *ctx)
{
    const ir_block *b = ir_program_block(ctx->main, 0);
    if (!b) {
        pdt_error("%s: program has no blocks", ctx->main_path);
        return PDT_EBADINPUT;
    }
    if (ctx->bw_params.n == 0)
        pairs_from_role_vars(ctx);
    size_t n = ctx->bw_params.n;
    if (n == 0) {
        pdt_error("%s: block 0 has no parameter gradients (no backward op carries "
                  "'op_role_var'); run append_backward first", ctx->main_path);
        return PDT_EBADINPUT;
    }
    if (ctx->bw_grads.n != n) {
        pdt_error("%s: %zu parameters but %zu gradients", ctx->main_path, n, ctx->bw_grads.n);
        return PDT_EBADINPUT;
    }
    const char **pairs = xcalloc(2 * n, sizeof *pairs);
    for (size_t i = 0; i < n; i++) {
        pairs[2 * i] = ctx->bw_params.items[i];
        pairs[2 * i + 1] = ctx->bw_grads.items[i];
        for (int k = 0; k < 2; k++)
            if (!ir_block_find_var(b, pairs[2 * i + k])) {
                pdt_error("%s: block 0: %s '%s' of parameter '%s' is not a var", ctx->main_path,
                          k ? "gradient" : "parameter", pairs[2 * i + k], pairs[2 * i]);
                free(pairs);
                return PDT_EBADINPUT;
            }
    }
    qsort(pairs, n, 2 * sizeof *pairs, cmp_pair);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && pairs[2 * i] == pairs[2 * i - 2]) {
            pdt_error("%s: parameter '%s' has two gradients", ctx->main_path, pairs[2 * i]);
            free(pairs);
            return PDT_EBADINPUT;
        }
        ctx->bw_params.items[i] = pairs[2 * i];
        ctx->bw_grads.items[i] = pairs[2 * i + 1];
    }
    free(pairs);
    return PDT_OK;
}

bool opt_find_update_op(const ir_block *b, size_t *pos)
{
    for (size_t k = 0; k < b->n_ops; k++) {
        const ir_op *op = b->ops[k];
        int role = ir_op_role(op);
        if (role >= 0 && (role & IR_ROLE_OPTIMIZE) && ir_op_input(op, "Param") &&
            ir_op_input(op, "LearningRate")) {
            *pos = k;
            return true;
        }
    }
    return false;
}

int opt_spec_reparsed(int rc, const char *pass, const char *option)
{
    if (rc == PDT_OK)
        return PDT_OK;
    pdt_error("BUG: pass '%s': option '%s' passed validate() but no longer parses", pass,
              option);
    return PDT_EINTERNAL;
}

int opt_refuse_optimized(const pdt_ctx *ctx, const char *pass)
{
    const ir_block *b = ir_program_block(ctx->main, 0);
    size_t pos;
    if (b && opt_find_update_op(b, &pos)) {
        pdt_error("%s: block 0, op %zu '%s': the program already has optimizer ops; "
                  "pass '%s' adds them only once",
                  ctx->main_path, pos, b->ops[pos]->type, pass);
        return PDT_EBADINPUT;
    }
    return PDT_OK;
}

/* ---- builders ------------------------------------------------------------ */

ir_op *opt_op_new(ir_program *p, const char *type, int role, const char *scope,
                  const char *param, const char *grad, const char *device)
{
    ir_op *op = ir_op_new(p, type);
    ir_op_set_role(op, role);
    const char *rv[2] = {param, grad};
    ir_op_set_strings(op, "op_role_var", rv, param ? 2 : 0);
    ir_op_set_string(op, "op_namescope", scope ? scope : "/");
    ir_op_set_strings(op, "op_callstack", NULL, 0);
    ir_op_set_string(op, "op_device", device ? device : "");
    return op;
}

static ir_var *fresh_var(ir_block *b, const char *name)
{
    ir_var *v = ir_block_var(b, name);
    v->type = IR_LOD_TENSOR;
    v->tensor_slot = IR_TD_LOD_TENSOR;
    v->has_lod_level = false;
    return v;
}

ir_var *opt_var_like(ir_block *b, const char *name, const ir_var *like, bool set_persistable,
                     bool persistable)
{
    ir_var *v = fresh_var(b, name);
    if (like) {
        v->dtype = like->dtype;
        ir_var_set_dims(b->program, v, like->dims, like->n_dims);
    } else {
        const int64_t one = 1;
        v->dtype = IR_FP32;
        ir_var_set_dims(b->program, v, &one, 1);
    }
    v->has_persistable = set_persistable;
    v->persistable = persistable;
    return v;
}

ir_var *opt_var_1(ir_block *b, const char *name, int dtype, bool set_persistable)
{
    ir_var *v = opt_var_like(b, name, NULL, set_persistable, false);
    v->dtype = dtype;
    return v;
}

void opt_ops_push(opt_ops *l, ir_op *op)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->ops = xrealloc(l->ops, l->cap * sizeof *l->ops);
    }
    l->ops[l->n++] = op;
}

void opt_ops_splice(opt_ops *l, ir_block *b, size_t pos, bool reverse)
{
    /* Each op's compile-time InferShape field effects, in the order the
     * ops were built (block.append_op runs it as Python appends the op);
     * an effect already played where the op was built plays the same
     * again (ir/infershape.c) */
    for (size_t i = 0; i < l->n; i++)
        ir_infer_apply(b, l->ops[i]);
    if (reverse)
        for (size_t i = 0; i < l->n / 2; i++) {
            ir_op *t = l->ops[i];
            l->ops[i] = l->ops[l->n - 1 - i];
            l->ops[l->n - 1 - i] = t;
        }
    if (l->n)
        ir_block_splice(b, pos, 0, l->ops, l->n);
    l->n = 0;
}

void opt_ops_free(opt_ops *l)
{
    free(l->ops);
    memset(l, 0, sizeof *l);
}

/* initializer.py v2.1.0-v2.3.2 (and paddle.nn.initializer to 3.0):
 * block.append_op where v2.0.2 and before _prepend_op. */
enum { INITS_APPEND_FROM = 201 };

void opt_inits_begin(opt_inits *q, ir_program *startup, int era)
{
    memset(q, 0, sizeof *q);
    q->startup = startup;
    q->append = era != PDT_ERA_NATIVE && era >= INITS_APPEND_FROM;
    if (startup->n_blocks == 0)
        ir_program_add_block(startup, -1);
}

ir_var *opt_global_var(pdt_ctx *ctx, opt_inits *q, const char *name, int dtype,
                       const int64_t *dims, size_t n_dims, double value, bool force_cpu,
                       const char *device)
{
    ir_block *blocks[2] = {ir_program_block(ctx->main, 0), ir_program_block(q->startup, 0)};
    ir_var *v = NULL;
    for (int i = 0; i < 2; i++) {
        ir_var *x = fresh_var(blocks[i], name);
        x->dtype = dtype;
        ir_var_set_dims(blocks[i]->program, x, dims, n_dims);
        x->has_persistable = true;
        x->persistable = true;
        if (i == 0)
            v = x;
    }
    ir_op *op = opt_fill_constant_op(q->startup, name, dtype, value, force_cpu, false,
                                     IR_ROLE_FORWARD, "/", NULL, NULL);
    ir_op_set_longs(op, "shape", dims, n_dims);
    if (device)
        ir_op_set_string(op, "op_device", device);
    opt_ops_push(&q->ops, op);
    return v;
}

void opt_inits_flush(opt_inits *q)
{
    ir_block *b = ir_program_block(q->startup, 0);
    opt_ops_splice(&q->ops, b, q->append ? b->n_ops : 0, !q->append);
    opt_ops_free(&q->ops);
}

ir_op *opt_fill_constant_op(ir_program *p, const char *out, int dtype, double value,
                            bool force_cpu, bool layer, int role, const char *scope,
                            const char *param, const char *grad)
{
    ir_op *op = opt_op_new(p, "fill_constant", role, scope, param, grad, NULL);
    const int64_t one = 1;
    ir_op_set_output1(op, "Out", out);
    ir_op_set_longs(op, "shape", &one, 1);
    ir_op_set_int(op, "dtype", dtype);
    ir_op_set_float(op, "value", (float)value);
    ir_op_set_bool(op, "force_cpu", force_cpu);
    if (layer) {
        char text[64];
        if (dtype == IR_INT32 || dtype == IR_INT64)
            snprintf(text, sizeof text, "%lld", (long long)value);
        else
            opt_py_float_str(value, text, sizeof text);
        ir_op_set_string(op, "str_value", text);
        /* Operator.__init__ writes every input its proto declares, empty
         * when not given: fill_constant's proto has ValueTensor since 1.8. */
        ir_op_set_input(op, "ShapeTensor", NULL, 0);
        ir_op_set_input(op, "ShapeTensorList", NULL, 0);
        ir_op_set_input(op, "ValueTensor", NULL, 0);
    } else {
        /* Initializers do not pass it, but Operator.__init__ runs
         * check_attrs, which adds the proto default. */
        ir_op_set_string(op, "str_value", "");
    }
    return op;
}

ir_op *opt_scale_op(ir_program *p, const char *x, const char *out, double scale, int role,
                    const char *scope, const char *param, const char *grad)
{
    ir_op *op = opt_op_new(p, "scale", role, scope, param, grad, NULL);
    ir_op_set_input1(op, "X", x);
    ir_op_set_input(op, "ScaleTensor", NULL, 0);
    ir_op_set_output1(op, "Out", out);
    ir_op_set_float(op, "scale", (float)scale);
    ir_op_set_float(op, "bias", 0.0f);
    ir_op_set_bool(op, "bias_after_scale", true);
    return op;
}

int opt_loss_dtype(const pdt_ctx *ctx)
{
    const ir_block *b = ir_program_block(ctx->main, 0);
    const ir_var *v = ctx->backward.loss && b ? ir_block_find_var(b, ctx->backward.loss) : NULL;
    return v ? v->dtype : IR_FP32;
}

const char *opt_scheduled_lr(const ir_block *b)
{
    for (size_t k = b->n_ops; k-- > 0;) {
        const ir_op *op = b->ops[k];
        if (ir_op_role(op) != IR_ROLE_LRSCHED)
            continue;
        const char *out = ir_op_output1(op, "Out");
        if (out)
            return out;
    }
    return NULL;
}
