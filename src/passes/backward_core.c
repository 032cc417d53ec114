/* backward_core.c - op paths, no-grad sets, grad op emission, renaming and
 * grad var creation; each function follows the seed function it is named
 * after (../shared/seeds/backward.py.txt). */
#include <stdio.h>
#include <string.h>

#include "../diag.h"
#include "../grad/grad.h"
#include "../ir/util.h"
#include "backward_internal.h"

static pmap *name_set(void)
{
    return pmap_new();
}

void bw_sync_blocks(bw_run *r)
{
    size_t n = r->prog->n_blocks;
    if (n > r->n_no_grad) {
        r->no_grad = xrealloc(r->no_grad, n * sizeof *r->no_grad);
        for (size_t i = r->n_no_grad; i < n; i++)
            r->no_grad[i] = name_set();
        r->n_no_grad = n;
    }
    if (n > r->n_op_path) {
        r->op_path = xrealloc(r->op_path, n * sizeof *r->op_path);
        for (size_t i = r->n_op_path; i < n; i++)
            r->op_path[i] = NULL;
        r->n_op_path = n;
    }
}

const char *bw_n_sub_block, *bw_n_op_device, *bw_n_sum, *bw_n_while,
    *bw_n_conditional_block, *bw_n_empty;

const ir_attr *bw_attr(const ir_op *op, const char *interned)
{
    for (size_t i = 0; i < op->n_attrs; i++)
        if (op->attrs[i].name == interned)
            return &op->attrs[i];
    return NULL;
}

bool bw_reads(const ir_op *op, const char *name)
{
    for (size_t s = 0; s < op->n_inputs; s++)
        for (size_t k = 0; k < op->inputs[s].n_args; k++)
            if (op->inputs[s].args[k] == name)
                return true;
    return false;
}

void bw_init(bw_run *r, ir_program *p, const char *path)
{
    bw_n_sub_block = ir_intern("sub_block");
    bw_n_op_device = ir_intern("op_device");
    bw_n_sum = ir_intern("sum");
    bw_n_while = ir_intern("while");
    bw_n_conditional_block = ir_intern("conditional_block");
    bw_n_empty = ir_intern("@EMPTY@");
    memset(r, 0, sizeof *r);
    r->prog = p;
    r->path = path ? path : "main program";
    r->grad_to_var = name_set();
    r->grad_info = name_set();
    r->unique = name_set();
    bw_sync_blocks(r);
}

void bw_free(bw_run *r)
{
    for (size_t i = 0; i < r->n_no_grad; i++)
        pmap_destroy(r->no_grad[i]);
    for (size_t i = 0; i < r->n_op_path; i++)
        if (r->op_path[i])
            g_ptr_array_free(r->op_path[i], TRUE);
    free(r->no_grad);
    free(r->op_path);
    pmap_destroy(r->grad_to_var);
    pmap_destroy(r->grad_info);
    pmap_destroy(r->unique);
    pmap_destroy(r->last_writer);
    memset(r, 0, sizeof *r);
}

void bw_stop_gradients(bw_run *r)
{
    for (size_t i = 0; i < r->prog->n_blocks; i++) {
        const ir_block *b = r->prog->blocks[i];
        for (size_t k = 0; k < b->n_vars; k++)
            if (!b->vars[k]->removed && b->vars[k]->stop_gradient)
                pmap_add(r->no_grad[i], grad_name(b->vars[k]->name));
    }
}

ir_op *bw_new_op(ir_program *p, const char *type)
{
    ir_op *op = ir_op_new(p, type);
    ir_op_set_role(op, IR_ROLE_BACKWARD);
    ir_op_set_string(op, IR_NAME("op_device"), "");
    return op;
}

void bw_sorted_slots(const ir_op *op, bool outputs, size_t *idx)
{
    const ir_slot *s = outputs ? op->outputs : op->inputs;
    size_t n = outputs ? op->n_outputs : op->n_inputs;
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && strcmp(s[idx[k - 1]].name, s[idx[k]].name) > 0; k--) {
            size_t t = idx[k];
            idx[k] = idx[k - 1];
            idx[k - 1] = t;
        }
}

size_t bw_arg_names(const ir_op *op, bool outputs, GPtrArray *buf)
{
    const ir_slot *s = outputs ? op->outputs : op->inputs;
    size_t n = outputs ? op->n_outputs : op->n_inputs;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += s[i].n_args;
    g_ptr_array_set_size(buf, (guint)total);
    if (!total)
        return 0;
    size_t *idx = g_newa(size_t, n + 1);
    bw_sorted_slots(op, outputs, idx);
    void **out = buf->pdata;
    for (size_t i = 0; i < n; i++) {
        const ir_slot *sl = &s[idx[i]];
        for (size_t k = 0; k < sl->n_args; k++)
            *out++ = (void *)sl->args[k];
    }
    return total;
}

int bw_op_index(const ir_block *b, const ir_op *op)
{
    for (size_t i = 0; i < b->n_ops; i++)
        if (b->ops[i] == op)
            return (int)i;
    return -1;
}

/* ---- _find_op_path_ --------------------------------------------------- */

static bool some_in(const ir_slot *slots, size_t n, pmap *set)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < slots[i].n_args; k++)
            if (pmap_has(set, slots[i].args[k]))
                return true;
    return false;
}

static void add_args(const ir_slot *slots, size_t n, pmap *set, pmap *except)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < slots[i].n_args; k++)
            if (!except || !pmap_has(except, slots[i].args[k]))
                pmap_add(set, slots[i].args[k]);
}

static const grad_maker *maker_or_error(bw_run *r, const ir_block *b, size_t i)
{
    const ir_op *op = b->ops[i];
    const grad_maker *m = grad_maker_find(op->type);
    if (!m)
        pdt_error("%s: block %d, op %zu '%s': no gradient maker is known for op type '%s', "
                  "and the op is on the gradient path",
                  r->path, b->idx, i, op->type, op->type);
    return m;
}

static int32_t sub_block_id(const ir_op *op)
{
    const ir_attr *a = bw_attr(op, bw_n_sub_block);
    return a && a->type == IR_ATTR_BLOCK ? a->block_idx : -1;
}

static bool sub_block_path(bw_run *r, ir_block *sub, const ir_op *op, pmap *targets);

GPtrArray *bw_find_op_path(bw_run *r, ir_block *b, pmap *targets,
                           const char *const *inputs, size_t n_inputs,
                           pmap *no_grad, bool is_while)
{
    pmap *input_names = name_set();
    for (size_t i = 0; i < n_inputs; i++)
        pmap_add(input_names, inputs[i]);
    pmap *output_names = name_set();
    pmap_reserve(output_names, b->n_ops);
    PMAP_FOR(targets, it_s)
        pmap_add(output_names, it_s->key);
    bool *relevant = xmalloc((b->n_ops + 1) * sizeof *relevant);
    for (size_t i = 0; i < b->n_ops; i++)
        relevant[i] = true;
    GPtrArray *path = NULL;

    if (n_inputs) {
        for (size_t i = 0; i < b->n_ops; i++) {
            const ir_op *op = b->ops[i];
            if (some_in(op->inputs, op->n_inputs, input_names)) {
                const grad_maker *m = maker_or_error(r, b, i);
                if (!m)
                    goto out;
                if (m->kind != GM_NONE) {
                    add_args(op->outputs, op->n_outputs, input_names, no_grad);
                    continue;
                }
            }
            relevant[i] = false;
        }
    }
    for (size_t i = b->n_ops; i-- > 0;) {
        const ir_op *op = b->ops[i];
        int32_t sid = sub_block_id(op);
        if (sid >= 0) {
            ir_block *sub = ir_program_block(r->prog, sid);
            if (sub) {
                pmap *st = name_set();
                for (size_t s = 0; s < op->n_outputs; s++)
                    for (size_t k = 0; k < op->outputs[s].n_args; k++)
                        if (pmap_has(output_names, op->outputs[s].args[k]))
                            pmap_add(st, op->outputs[s].args[k]);
                bool ok = sub_block_path(r, sub, op, st);
                pmap_destroy(st);
                if (!ok)
                    goto out;
            }
        }
        if (some_in(op->outputs, op->n_outputs, output_names)) {
            const grad_maker *m = maker_or_error(r, b, i);
            if (!m)
                goto out;
            if (m->kind != GM_NONE) {
                add_args(op->inputs, op->n_inputs, output_names, no_grad);
                continue;
            }
        }
        relevant[i] = false;
    }
    if (is_while) {
        /* A while body feeds its own inputs: ops writing a needed var join
         * the path even when they come later than its readers. */
        for (size_t i = b->n_ops; i-- > 0;) {
            const ir_op *op = b->ops[i];
            if (relevant[i] || !some_in(op->outputs, op->n_outputs, output_names))
                continue;
            relevant[i] = true;
            const grad_maker *m = maker_or_error(r, b, i);
            if (!m)
                goto out;
            if (m->kind != GM_NONE)
                add_args(op->inputs, op->n_inputs, output_names, no_grad);
        }
    }
    path = g_ptr_array_new();
    for (size_t i = 0; i < b->n_ops; i++)
        if (relevant[i])
            g_ptr_array_add(path, b->ops[i]);
    if (n_inputs) {
        for (size_t p = 0; p < path->len; p++) {
            const ir_op *op = path->pdata[p];
            for (size_t s = 0; s < op->n_inputs; s++)
                for (size_t k = 0; k < op->inputs[s].n_args; k++) {
                    const char *n = op->inputs[s].args[k];
                    if (pmap_has(input_names, n))
                        continue;
                    const ir_var *v = ir_block_find_var(b, n);
                    if (v && v->stop_gradient)
                        pmap_add(no_grad, n);
                }
        }
    }
out:
    free(relevant);
    pmap_destroy(input_names);
    pmap_destroy(output_names);
    return path;
}

/* _get_sub_block_path: for conditional_block / while, the path inside the
 * sub-block towards the op's needed outputs (with an empty no-grad set, as
 * in the seed); for any other op with a sub-block, all of its ops. */
static bool sub_block_path(bw_run *r, ir_block *sub, const ir_op *op, pmap *targets)
{
    GPtrArray *path;
    bw_sync_blocks(r);
    if (op->type == bw_n_conditional_block || op->type == bw_n_while) {
        pmap *outs = name_set();
        PMAP_FOR(targets, it_s)
            pmap_add(outs, it_s->key);
        for (size_t i = 0; i < sub->n_ops; i++) {
            const ir_op *o = sub->ops[i];
            if (some_in(o->outputs, o->n_outputs, targets))
                add_args(o->inputs, o->n_inputs, outs, NULL);
        }
        pmap *no_grad = name_set();
        path = bw_find_op_path(r, sub, outs, NULL, 0, no_grad, op->type == bw_n_while);
        pmap_destroy(no_grad);
        pmap_destroy(outs);
        if (!path)
            return false;
    } else {
        path = g_ptr_array_new();
        for (size_t i = 0; i < sub->n_ops; i++)
            g_ptr_array_add(path, sub->ops[i]);
    }
    if (r->op_path[sub->idx])
        g_ptr_array_free(r->op_path[sub->idx], TRUE);
    r->op_path[sub->idx] = path;
    return true;
}

/* ---- _find_no_grad_vars ----------------------------------------------- */

void bw_find_no_grad_vars(bw_run *r, ir_block *b, GPtrArray *path, pmap *targets,
                          pmap *no_grad, pmap *out)
{
    (void)r;
    pmap *output_names = name_set();
    pmap_reserve(output_names, path->len * 2);
    PMAP_FOR(targets, it_s)
        pmap_add(output_names, it_s->key);
    for (size_t p = path->len; p-- > 0;) {
        const ir_op *op = path->pdata[p];
        if (sub_block_id(op) < 0) {
            for (size_t s = 0; s < op->n_outputs; s++)
                for (size_t k = 0; k < op->outputs[s].n_args; k++) {
                    const char *n = op->outputs[s].args[k];
                    if (pmap_has(output_names, n) || bw_reads(op, n))
                        continue;
                    const ir_var *v = ir_block_find_var_recursive(b, n);
                    if (!v || !v->stop_gradient)
                        pmap_add(out, n);
                }
        }
        add_args(op->inputs, op->n_inputs, output_names, no_grad);
    }
    pmap_destroy(output_names);
}

/* ---- _append_backward_ops_ -------------------------------------------- */

static void merge_into(pmap *dst, pmap *src)
{
    PMAP_FOR(src, e)
        pmap_put(dst, e->key, e->val);
}

bool bw_append_backward_ops(bw_run *r, ir_block *b, GPtrArray *path, ir_block *target)
{
    /* About two grad names per op: room for them at once. */
    size_t n_path = path ? path->len : 0;
    pmap_reserve(r->grad_to_var, n_path * 2);
    GPtrArray *grad_ops = g_ptr_array_new();
    GPtrArray *out = g_ptr_array_new();
    /* The later steps' facts are gathered while each grad op is fresh in
     * cache: a sweep over tens of thousands of cold ops costs more than
     * the tests themselves. */
    bw_scan scan;
    bw_scan_init(&scan);
    pmap_reserve(&scan.once, n_path * 2);
    bool ok = true;
    for (size_t p = n_path; p-- > 0 && ok;) {
        const ir_op *op = path->pdata[p];
        const ir_block *subs[1];
        size_t n_subs = 0;
        int32_t sid = sub_block_id(op);
        if (sid >= 0 && ir_program_block(r->prog, sid)) {
            ir_block *sub = ir_program_block(r->prog, sid);
            ir_block *gsb = ir_program_add_block(r->prog, target->idx);
            gsb->has_forward_block_idx = true;
            gsb->forward_block_idx = sub->idx;
            bw_sync_blocks(r);
            if (!bw_append_backward_ops(r, sub, r->op_path[sid], gsb)) {
                ok = false;
                break;
            }
            subs[n_subs++] = gsb;
        }
        const grad_maker *m = grad_maker_find(op->type);
        if (!m) {
            pdt_error("%s: block %d, op %d '%s': no gradient maker is known for op type '%s', "
                      "and the op is on the gradient path",
                      r->path, b->idx, bw_op_index(b, op), op->type, op->type);
            ok = false;
            break;
        }
        grad_ctx c = {0};
        c.prog = r->prog;
        c.fwd = op;
        c.no_grad = r->no_grad[b->idx];
        /* Paddle merges each op's grad_to_var into the run's map in op
         * order; writing straight into it gives the same map. */
        c.grad_to_var = r->grad_to_var;
        c.sub_blocks = subs;
        c.n_sub_blocks = n_subs;
        c.out = out;
        g_ptr_array_set_size(out, 0);
        if (!grad_make(m, &c)) {
            pdt_error("%s: block %d, op %d '%s': %s", r->path, b->idx, bw_op_index(b, op),
                      op->type, c.err);
            ok = false;
        } else {
            const ir_attr *dev = bw_attr(op, bw_n_op_device);
            for (size_t i = 0; i < c.out->len; i++) {
                ir_op *g = c.out->pdata[i];
                if (dev)
                    ir_op_copy_attr(g, dev);
                /* Every grad op ends with op_role Backward (the seed sets
                 * it when appending); set now, while g is in cache. */
                ir_op_set_role(g, IR_ROLE_BACKWARD);
                bw_scan_grad(&scan, g, op, grad_ops->len, c.no_grad);
                g_ptr_array_add(grad_ops, g);
            }
        }
    }
    g_ptr_array_free(out, TRUE);
    if (!ok) {
        g_ptr_array_free(grad_ops, TRUE);
        bw_scan_free(&scan);
        return false;
    }
    /* Nothing written twice: the addup step leaves the list as it is; no
     * op meeting a removal or zero-fill test: so does the next step. */
    bool same = scan.multi.n == 0;
    GPtrArray *a = bw_addup_scanned(r, grad_ops, b->idx, &scan);
    g_ptr_array_free(grad_ops, TRUE);
    GPtrArray *c2;
    if (same && !scan.remove_may_act) {
        c2 = a;
    } else {
        c2 = bw_remove_no_grad_branch(r, a, r->no_grad[b->idx]);
        g_ptr_array_free(a, TRUE);
        same = false;
    }
    GPtrArray *fwd = path ? path : g_ptr_array_new();
    GPtrArray *d = bw_prune_scanned(r, c2, fwd, &scan, same);
    if (!path)
        g_ptr_array_free(fwd, TRUE);
    g_ptr_array_free(c2, TRUE);
    ir_block_splice(target, target->n_ops, 0, (ir_op *const *)d->pdata, d->len);
    g_ptr_array_free(d, TRUE);
    bw_scan_free(&scan);
    return true;
}

/* ---- _rename_grad_ ---------------------------------------------------- */

/* Does any output of op name an existing grad var (a rename to do)? */
static bool renames_output(const ir_op *op, const ir_block *b)
{
    for (size_t s = 0; s < op->n_outputs; s++)
        for (size_t k = 0; k < op->outputs[s].n_args; k++)
            if (grad_is_grad_name(op->outputs[s].args[k]) &&
                ir_block_find_var(b, op->outputs[s].args[k]))
                return true;
    return false;
}

void bw_rename_grad(bw_run *r, ir_block *b, size_t start, pmap *target_grad_map,
                    pmap *skip)
{
    pmap *var_map = name_set();
    if (target_grad_map)
        merge_into(var_map, target_grad_map);
    /* Renames happen only for grads that already have a var, i.e. from an
     * earlier backward pass; a block without any "@GRAD" var (the usual
     * case) has nothing to rename. */
    bool any_grad_var = false;
    for (size_t i = 0; i < b->n_vars && !any_grad_var; i++)
        any_grad_var = !b->vars[i]->removed && grad_is_grad_name(b->vars[i]->name);
    if (!any_grad_var && !var_map->n)
        start = b->n_ops;
    GPtrArray *buf = g_ptr_array_new();
    for (size_t i = start; i < b->n_ops; i++) {
        ir_op *op = b->ops[i];
        if (!var_map->n && !renames_output(op, b))
            continue;
        bw_arg_names(op, false, buf);
        for (size_t k = 0; k < buf->len; k++) {
            const char *to = pmap_get(var_map, buf->pdata[k]);
            if (to)
                ir_op_rename_input(op, buf->pdata[k], to);
        }
        bw_arg_names(op, true, buf);
        for (size_t k = 0; k < buf->len; k++) {
            const char *n = buf->pdata[k];
            if (!grad_is_grad_name(n) || !ir_block_find_var(b, n))
                continue;
            if (skip && pmap_has(skip, n))
                continue;
            /* unique_name.generate(name): name + "_" + per-key counter. */
            size_t cnt = GPOINTER_TO_SIZE(pmap_get(r->unique, n));
            pmap_put(r->unique, n, GSIZE_TO_POINTER(cnt + 1));
            const char *fresh = ir_internf("%s_%zu", n, cnt);
            ir_op_rename_output(op, n, fresh);
            pmap_put(var_map, n, (void *)fresh);
        }
    }
    g_ptr_array_free(buf, TRUE);
    PMAP_FOR(var_map, e) {
        void *fwd = pmap_get(r->grad_to_var, e->key);
        if (fwd) {
            pmap_put(r->grad_to_var, e->val, fwd);
            pmap_remove(r->grad_to_var, e->key);
        }
    }
    pmap_destroy(var_map);
}

/* ---- _append_backward_vars_ ------------------------------------------- */

static const ir_op *find_parent_op(const ir_program *p, int32_t idx)
{
    if (idx == 0)
        return NULL;
    for (size_t i = 0; i < p->n_blocks; i++)
        for (size_t k = 0; k < p->blocks[i]->n_ops; k++)
            if (sub_block_id(p->blocks[i]->ops[k]) == idx)
                return p->blocks[i]->ops[k];
    return NULL;
}

/* _infer_var_data_type_shape_: dtype and shape of the forward var. */
/* _strip_grad_suffix_(g).  A grad the makers named gives its forward name
 * back when that name holds neither "@GRAD" nor "grad/" (then the only
 * match is the trailing suffix), which spares the string work. */
static const char *strip_grad(const char *g, const char *fwd)
{
    if (fwd && !strstr(fwd, GRAD_SUFFIX) && !strstr(fwd, "grad/")) {
        size_t n = strlen(fwd);
        if (strncmp(g, fwd, n) == 0 && strcmp(g + n, GRAD_SUFFIX) == 0)
            return fwd;
    }
    return grad_strip_suffix(g);
}

/* to_var: grad_to_var[gv->name], or NULL. */
/* Returns the forward var (NULL when missing). */
static const ir_var *infer_dtype_shape(bw_run *r, ir_block *b, ir_var *gv, const char *to_var,
                                       const ir_op *op)
{
    const char *fwd = strip_grad(gv->name, to_var);
    const ir_var *fv = ir_block_find_var_recursive(b, fwd);
    if (!fv) {
        pdt_warning("%s: set grad var '%s' dtype to default FP32, since its forward var "
                    "'%s' is not found", r->path, gv->name, fwd);
        gv->dtype = IR_FP32;
        return NULL;
    }
    gv->dtype = fv->dtype;
    ir_var_set_dims(r->prog, gv, fv->dims, fv->n_dims);
    /* lod_level is what the grad op's compile-time InferShape leaves:
     * ShareLoD from the forward var, from sum's first input, or nothing. */
    const ir_var *lod_from = NULL;
    switch (grad_lod_rule(op->type)) {
    case GRAD_LOD_FORWARD: lod_from = fv; break;
    case GRAD_LOD_FIRST_INPUT:
        if (op->n_inputs && op->inputs[0].n_args)
            lod_from = ir_block_find_var_recursive(b, op->inputs[0].args[0]);
        break;
    default: break;
    }
    if (gv->type == IR_LOD_TENSOR && lod_from && lod_from->has_lod_level) {
        gv->has_lod_level = true;
        gv->lod_level = lod_from->lod_level;
    }
    return fv;
}

/* Is fwd (the forward name of a new grad var, whose var is fv when it
 * is the grad's stripped name) one of r->wanted?  When the wanted names
 * are the trainable parameters, a var that is no parameter answers
 * without a lookup. */
static bool wanted(const bw_run *r, const char *fwd, const ir_var *fv)
{
    if (!r->wanted)
        return true;
    if (r->wanted_are_params && fv && fv->name == fwd && !fv->is_parameter)
        return false;
    return pmap_has(r->wanted, fwd);
}

/* has_var_recursive: the block's own var map and its ancestors'. */
static bool visible(const ir_block *b, const char *name)
{
    return ir_block_find_var_recursive(b, name) != NULL;
}

void bw_append_backward_vars(bw_run *r, ir_block *b, size_t start)
{
    const ir_op *parent_op = find_parent_op(r->prog, b->idx);
    pmap *parent_vars = name_set();
    if (parent_op)
        for (size_t s = 0; s < parent_op->n_inputs; s++)
            for (size_t k = 0; k < parent_op->inputs[s].n_args; k++)
                if (ir_op_writes(parent_op, parent_op->inputs[s].args[k]))
                    pmap_add(parent_vars, parent_op->inputs[s].args[k]);
    const char *empty = ir_intern(EMPTY_VAR);
    bool track = r->last_writer && b == r->role_block;
    /* About two new grad vars per new op: room for them in one step. */
    ir_block_reserve_vars(b, (b->n_ops - start) * 2);
    if (r->wanted) {
        pmap_reserve(r->grad_info, r->wanted->n);
        if (track)
            pmap_reserve(r->last_writer, r->wanted->n);
    }
    bool *remove = xcalloc(b->n_ops + 1, sizeof *remove);
    GPtrArray *outs = g_ptr_array_new(), *fresh = g_ptr_array_new();
    for (size_t i = start; i < b->n_ops; i++) {
        ir_op *op = b->ops[i];
        int32_t sid = sub_block_id(op);
        if (sid >= 0 && ir_program_block(r->prog, sid))
            bw_append_backward_vars(r, ir_program_block(r->prog, sid), 0);
        bw_arg_names(op, true, outs);
        size_t n_out = 0, n_grad_in = 0, n_exist = 0;
        for (size_t k = 0; k < outs->len; k++)
            n_out += outs->pdata[k] != empty;
        if (!n_out) {
            remove[i] = true;
            continue;
        }
        /* Only "is there a grad input, and does one exist" matters. */
        for (size_t s = 0; s < op->n_inputs && !n_exist; s++)
            for (size_t k = 0; k < op->inputs[s].n_args && !n_exist; k++) {
                const char *n = op->inputs[s].args[k];
                if (!grad_is_grad_name(n))
                    continue;
                n_grad_in++;
                n_exist += visible(b, n) || pmap_has(parent_vars, n);
            }
        if (n_grad_in && !n_exist) {
            remove[i] = true;
            continue;
        }
        if (op->type == bw_n_sum) {
            const ir_slot *x = ir_op_input(op, "X");
            const char **keep = g_newa(const char *, (x ? x->n_args : 0) + 1);
            size_t nk = 0;
            for (size_t k = 0; x && k < x->n_args; k++)
                if (visible(b, x->args[k]))
                    keep[nk++] = x->args[k];
            if (nk && (!x || nk != x->n_args))
                ir_op_set_input(op, "X", keep, nk);
        }
        g_ptr_array_set_size(fresh, 0);
        for (size_t k = 0; k < outs->len; k++) {
            const char *n = outs->pdata[k];
            if (n == empty)
                continue;
            if (visible(b, n)) {
                if (track) {
                    const char *fwd = pmap_get(r->grad_to_var, n);
                    if (fwd && wanted(r, fwd, NULL))
                        pmap_put(r->last_writer, n, op);
                }
                continue;
            }
            ir_var *v = ir_block_var(b, n);
            v->has_persistable = false;
            g_ptr_array_add(fresh, v);
        }
        /* Then types and shapes (infer_var_type, _infer_var_data_type_shape_)
         * and grad_info, in the order the vars were made. */
        for (size_t k = 0; k < fresh->len; k++) {
            ir_var *v = fresh->pdata[k];
            const char *fwd = pmap_get(r->grad_to_var, v->name);
            int t = grad_var_type(b, op, v->name);
            if (t >= 0) {
                v->type = t;
                v->tensor_slot = t == IR_SELECTED_ROWS      ? IR_TD_SELECTED_ROWS
                                 : t == IR_LOD_TENSOR_ARRAY ? IR_TD_TENSOR_ARRAY
                                                            : IR_TD_LOD_TENSOR;
            }
            const ir_var *fv = infer_dtype_shape(r, b, v, fwd, op);
            /* Parameters live in block 0; elsewhere fv could shadow one. */
            if (fwd && wanted(r, fwd, b->idx == 0 ? fv : NULL)) {
                pmap_put(r->grad_info, fwd, (void *)v->name);
                if (track)
                    pmap_put(r->last_writer, v->name, op);
            }
        }
        /* Done with this op while it is in cache (see bw_settle_op). */
        bw_settle_op(op);
    }
    GPtrArray *kept = g_ptr_array_sized_new((guint)b->n_ops);
    for (size_t i = 0; i < b->n_ops; i++) {
        if (remove[i])
            b->ops[i]->block = NULL;
        else
            g_ptr_array_add(kept, b->ops[i]);
    }
    if (kept->len != b->n_ops)
        ir_block_set_ops(b, (ir_op *const *)kept->pdata, kept->len);
    g_ptr_array_free(kept, TRUE);
    free(remove);
    g_ptr_array_free(outs, TRUE);
    g_ptr_array_free(fresh, TRUE);
    pmap_destroy(parent_vars);
}

/* ---- canonical order ------------------------------------------------------ */

static void sort_slots(ir_slot *s, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        ir_slot t = s[i];
        size_t k = i;
        for (; k > 0 && strcmp(s[k - 1].name, t.name) > 0; k--)
            s[k] = s[k - 1];
        s[k] = t;
    }
}

void bw_settle_op(ir_op *op)
{
    if (!op->dirty)
        return;
    sort_slots(op->inputs, op->n_inputs);
    sort_slots(op->outputs, op->n_outputs);
    for (size_t a = 1; a < op->n_attrs; a++) {
        if (strcmp(op->attrs[a - 1].name, op->attrs[a].name) < 0)
            continue;
        ir_attr t = op->attrs[a];
        size_t k = a;
        for (; k > 0 && strcmp(op->attrs[k - 1].name, t.name) > 0; k--)
            op->attrs[k] = op->attrs[k - 1];
        op->attrs[k] = t;
    }
    op->dirty = false;
}

