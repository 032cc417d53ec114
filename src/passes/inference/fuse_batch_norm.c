/* fuse_batch_norm.c - the `fuse_batch_norm` pass: Paddle's
 * InferenceTranspiler._fuse_batch_norm (fluid 1.4-1.5, the note's §2, §3
 * and §11).  Block 0 only; adjacent ops, as Paddle matches them:
 *   A: conv2d, batch_norm            -> conv2d, elementwise_add (new)
 *   B: conv2d, elementwise_add, batch_norm -> conv2d, elementwise_add
 * The conv's Filter and the add's Y become new parameters `<old>_fuse_bn`
 * holding the folded values; readers of the batch_norm's Y read the add's
 * Out; then every block-0 var no op names is removed.  Unlike Paddle, a
 * site is folded only when the ops are connected by data flow and nothing
 * else reads the intermediate values (see README.md). */
#include <glib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/pmap.h"
#include "../pass.h"
#include "fold.h"

typedef struct {
    pdt_ctx *ctx;
    ir_block *b;
    pmap readers;           /* var name -> number of reading ops, all blocks */
    pmap input_map;         /* batch_norm Y -> bias add Out */
    size_t folded;
    int rc;                 /* PDT_EBADINPUT once a site cannot be folded as Paddle would */
} fuse_state;

static bool is(const ir_op *op, const char *type)
{
    return op->type == ir_intern(type);
}

static size_t n_readers(const fuse_state *s, const char *name)
{
    return (size_t)(uintptr_t)pmap_get(&s->readers, name);
}

static void count_readers(fuse_state *s, const ir_program *p)
{
    pmap seen = PMAP_INIT;      /* an op's input names, each counted once */
    for (size_t bi = 0; bi < p->n_blocks; bi++)
        for (size_t i = 0; i < p->blocks[bi]->n_ops; i++) {
            const ir_op *op = p->blocks[bi]->ops[i];
            pmap_clear(&seen);
            for (size_t k = 0; k < op->n_inputs; k++)
                for (size_t a = 0; a < ir_op_ins(op)[k].n_args; a++) {
                    const char *name = ir_op_ins(op)[k].args[a];
                    if (pmap_add(&seen, name))
                        pmap_put(&s->readers, name, (void *)(uintptr_t)(n_readers(s, name) + 1));
                }
        }
    pmap_free(&seen);
}

/* Paddle folds by position alone; pdtrans also wants the data flow:
 * `from` writes `var`, `to` reads it as its first `slot` argument, and no
 * other op reads it (its value changes with the fold). */
static bool feeds(const fuse_state *s, const ir_op *from, const char *out_slot,
                  const ir_op *to, const char *in_slot, size_t from_pos)
{
    const char *var = ir_op_output1(from, out_slot);
    const char *got = ir_op_input1(to, in_slot);
    if (var && got == var && n_readers(s, var) == 1)
        return true;
    if (var && got == var)
        pdt_warning("%s: block 0, op %zu '%s': left unfolded: its output '%s' has readers "
                    "besides the next op", s->ctx->main_path, from_pos, from->type, var);
    else
        pdt_warning("%s: block 0, op %zu '%s': left unfolded: op %zu '%s' reads '%s', not "
                    "its output '%s' (Paddle folds adjacent ops regardless)",
                    s->ctx->main_path, from_pos, from->type, from_pos + 1, to->type,
                    got ? got : "", var ? var : "");
    return false;
}

static const ir_tensor *value(const fuse_state *s, const ir_op *op, const char *slot)
{
    const char *name = ir_op_input1(op, slot);
    return name ? ir_tensors_find(s->ctx->param_values, name) : NULL;
}

/* Paddle's Block.create_parameter: a persistable VarDesc with the old var's
 * type, dtype and shape, and nothing else set. */
static void create_parameter(ir_block *b, const ir_var *old, const char *name)
{
    ir_var *v = ir_block_var(b, name);
    v->type = old->type;
    v->tensor_slot = old->tensor_slot;
    v->dtype = old->dtype;
    ir_var_set_dims(b->program, v, old->dims, old->n_dims);
    v->has_persistable = true;
    v->persistable = true;
}

/* _update_param: the value goes to a new parameter `<old>_fuse_bn`, and
 * only `op` is renamed to read it. */
static void update_param(fuse_state *s, ir_op *op, const char *slot, ir_tensor *val)
{
    const char *old = ir_op_input1(op, slot);
    const char *fresh = ir_internf("%s_fuse_bn", old);
    create_parameter(s->b, ir_block_find_var(s->b, old), fresh);
    ir_op_rename_input(op, old, fresh);
    ir_tensor *dst = ir_tensors_put(s->ctx->param_values, fresh);
    const char *name = dst->name;
    *dst = *val;
    dst->name = name;
}

/* _insert_bias_op: elementwise_add(X = conv Output, Y = bn Bias) -> bn Y,
 * axis 1, with the attrs fluid 1.5's Operator gives a new op (defaults of
 * ElementwiseOpMaker, op_role 0, op_namescope "/"; op_callstack, a Python
 * traceback there, is empty as in every op pdtrans creates).  Shape
 * inference sets Out's dims from X. */
static ir_op *bias_op(fuse_state *s, const ir_op *conv, const ir_op *bn)
{
    ir_op *add = ir_op_new(s->b->program, "elementwise_add");
    const char *x = ir_op_output1(conv, "Output"), *y = ir_op_output1(bn, "Y");
    ir_op_set_input1(add, "X", x);
    ir_op_set_input1(add, "Y", ir_op_input1(bn, "Bias"));
    ir_op_set_output1(add, "Out", y);
    ir_op_set_int(add, "axis", 1);
    ir_op_set_bool(add, "use_mkldnn", false);
    ir_op_set_string(add, "x_data_format", "");
    ir_op_set_string(add, "y_data_format", "");
    ir_op_set_int(add, "op_role", 0);
    ir_op_set_strings(add, "op_role_var", NULL, 0);
    ir_op_set_string(add, "op_namescope", "/");
    ir_op_set_strings(add, "op_callstack", NULL, 0);
    ir_var *xv = ir_block_find_var_recursive(s->b, x), *yv = ir_block_find_var(s->b, y);
    if (xv && yv)
        ir_var_set_dims(s->b->program, yv, xv->dims, xv->n_dims);
    return add;
}

/* _update_param makes `<old>_fuse_bn` with create_parameter(shape=old's
 * shape), and Paddle's Parameter refuses any dim below 0 ("Parameter shape
 * should not be related with batch-size"): the fold stops there, as
 * Paddle's does.  (The values come from the records, whose dims are
 * concrete; only the new VarDesc needs the old one's extent.) */
static bool new_params_have_known_dims(fuse_state *s, const ir_op *conv, size_t pos,
                                       const char *old)
{
    const ir_var *v = ir_block_find_var(s->b, old);
    if (ir_var_numel(v) != -1)
        return true;
    char dims[128];
    pdt_error("%s: block 0, op %zu '%s': var '%s' has dims %s, not all known; the fold "
              "makes parameter '%s_fuse_bn' of that shape, and Paddle's create_parameter "
              "refuses a parameter shape with an unknown dim", s->ctx->main_path, pos,
              conv->type, old, ir_dims_text(v->dims, v->n_dims, dims, sizeof dims), old);
    s->rc = PDT_EBADINPUT;
    return false;
}

/* Checks that the site's values exist and fit, and that the new names are
 * free; warns and returns false otherwise (and stops the pass, s->rc, when
 * Paddle's fold would fail). */
static bool can_fold(fuse_state *s, const ir_op *conv, const ir_op *add, const ir_op *bn,
                     size_t pos, fold_inputs *in)
{
    in->filter = value(s, conv, "Filter");
    in->scale = value(s, bn, "Scale");
    in->bn_bias = value(s, bn, "Bias");
    in->mean = value(s, bn, "Mean");
    in->variance = value(s, bn, "Variance");
    in->add_bias = add ? value(s, add, "Y") : NULL;
    const char *why = NULL;
    const char *bias_name = add ? ir_op_input1(add, "Y") : ir_op_input1(bn, "Bias");
    if (!ir_block_find_var(s->b, ir_op_input1(conv, "Filter")) ||
        !ir_block_find_var(s->b, bias_name))
        why = "the filter or bias var is not declared in block 0";
    else if (!in->filter || !in->scale || !in->bn_bias || !in->mean || !in->variance ||
        (add && !in->add_bias))
        why = "a parameter value is missing (the bias, filter and batch_norm inputs "
              "must be persistable)";
    else if ((why = fold_check(in)) != NULL)
        ;
    else if (ir_block_find_var(s->b, ir_internf("%s_fuse_bn", ir_op_input1(conv, "Filter"))) ||
             ir_block_find_var(s->b, ir_internf("%s_fuse_bn", bias_name)))
        why = "a '_fuse_bn' var of that name exists already (a shared filter or bias)";
    if (!why)
        return new_params_have_known_dims(s, conv, pos, ir_op_input1(conv, "Filter")) &&
               new_params_have_known_dims(s, conv, pos, bias_name);
    pdt_warning("%s: block 0, op %zu '%s': left unfolded: %s", s->ctx->main_path, pos,
                conv->type, why);
    return false;
}

static void fuse_param(fuse_state *s, ir_op *conv, ir_op *add, const ir_op *bn,
                       const fold_inputs *in)
{
    ir_tensor filter = {0}, bias = {0};
    fold_compute(in, &filter, &bias);
    update_param(s, conv, "Filter", &filter);
    update_param(s, add, "Y", &bias);
    pmap_put(&s->input_map, ir_op_output1(bn, "Y"), (void *)ir_op_output1(add, "Out"));
    s->folded++;
}

/* The scan of _fuse_batch_norm, streaming into `out` instead of inserting
 * and removing in place (linear).  j walks the input ops; Paddle's index i
 * is out->len, and its bound i < len(ops) - 2 is j + 2 < n. */
static void scan(fuse_state *s, GPtrArray *out)
{
    ir_op **ops = s->b->ops;
    size_t n = s->b->n_ops, j = 0;
    fold_inputs in;
    while (j + 2 < n && !s->rc) {
        ir_op *conv = ops[j], *next = ops[j + 1], *after = ops[j + 2];
        if (is(conv, "conv2d") && is(next, "batch_norm")) {
            if (feeds(s, conv, "Output", next, "X", j) &&
                can_fold(s, conv, NULL, next, j, &in)) {
                ir_op *add = bias_op(s, conv, next);
                fuse_param(s, conv, add, next, &in);
                g_ptr_array_add(out, conv);
                g_ptr_array_add(out, add);
                j += 2;
                continue;
            }
        } else if (is(conv, "conv2d") && is(next, "elementwise_add") &&
                   is(after, "batch_norm")) {
            if (feeds(s, conv, "Output", next, "X", j) &&
                feeds(s, next, "Out", after, "X", j + 1) &&
                can_fold(s, conv, next, after, j, &in)) {
                fuse_param(s, conv, next, after, &in);
                g_ptr_array_add(out, conv);
                g_ptr_array_add(out, next);
                j += 3;
                continue;
            }
        }
        g_ptr_array_add(out, ops[j++]);
    }
    while (j < n)
        g_ptr_array_add(out, ops[j++]);
}

/* _adjust_input: block-0 readers of a folded batch_norm's Y read the add's
 * Out instead (an identity for pattern A). */
static void adjust_input(fuse_state *s)
{
    for (size_t i = 0; i < s->b->n_ops; i++) {
        ir_op *op = s->b->ops[i];
        for (size_t k = 0; k < op->n_inputs; k++)
            for (size_t a = 0; a < ir_op_ins(op)[k].n_args; a++) {
                const char *to = pmap_get(&s->input_map, ir_op_ins(op)[k].args[a]);
                if (to && to != ir_op_ins(op)[k].args[a])
                    ir_op_rename_input(op, ir_op_ins(op)[k].args[a], to);
            }
    }
}

static void mark_args(pmap *used, const ir_slot *slots, size_t n)
{
    for (size_t k = 0; k < n; k++)
        for (size_t a = 0; a < slots[k].n_args; a++)
            pmap_add(used, slots[k].args[a]);
}

/* _remove_unused_var: block-0 vars no op names.  Paddle looks at block-0
 * ops only and so also drops vars only sub-blocks use, which leaves a
 * broken program; pdtrans keeps those. */
static void remove_unused_vars(ir_program *p)
{
    pmap used = PMAP_INIT;
    for (size_t bi = 0; bi < p->n_blocks; bi++)
        for (size_t i = 0; i < p->blocks[bi]->n_ops; i++) {
            const ir_op *op = p->blocks[bi]->ops[i];
            mark_args(&used, ir_op_ins(op), op->n_inputs);
            mark_args(&used, ir_op_outs(op), op->n_outputs);
        }
    ir_block *b = p->blocks[0];
    GPtrArray *dead = g_ptr_array_new();
    for (size_t i = 0; i < b->n_vars; i++)
        if (!b->vars[i]->removed && !pmap_has(&used, b->vars[i]->name))
            g_ptr_array_add(dead, (gpointer)b->vars[i]->name);
    for (size_t i = 0; i < dead->len; i++)
        ir_block_remove_var(b, dead->pdata[i]);
    g_ptr_array_free(dead, TRUE);
    pmap_free(&used);
}

int pass_fuse_batch_norm(pdt_ctx *ctx)
{
    ir_program *p = ctx->main;
    if (!p || p->n_blocks == 0)
        return PDT_OK;
    if (!ctx->param_values) {
        pdt_error("%s: pass 'fuse_batch_norm' needs the parameter values (run it with "
                  "'pdtrans inference --params=...')", ctx->main_path);
        return PDT_EBADINPUT;
    }
    fuse_state s = {ctx, p->blocks[0], PMAP_INIT, PMAP_INIT, 0, PDT_OK};
    count_readers(&s, p);
    GPtrArray *out = g_ptr_array_new();
    scan(&s, out);
    ir_block_set_ops(s.b, (ir_op *const *)out->pdata, out->len);
    g_ptr_array_free(out, TRUE);
    adjust_input(&s);
    remove_unused_vars(p);
    if (!s.rc)
        pdt_note("fuse_batch_norm: %zu conv2d + batch_norm sites folded", s.folded);
    pmap_free(&s.readers);
    pmap_free(&s.input_map);
    return s.rc;
}
