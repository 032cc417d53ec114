/* transpile_util.c - var and program helpers that mirror what Paddle's
 * Python Block.create_var / _clone_variable write into a VarDesc. */
#include <string.h>

#include "builders.h"

static ir_tensor_slot slot_for(int type)
{
    switch (type) {
    case IR_LOD_TENSOR: return IR_TD_LOD_TENSOR;
    case IR_SELECTED_ROWS: return IR_TD_SELECTED_ROWS;
    case IR_LOD_TENSOR_ARRAY: return IR_TD_TENSOR_ARRAY;
    default: return IR_TD_NONE;
    }
}

ir_var *tp_create_var(ir_block *b, const char *name, int type, int dtype,
                      const int64_t *dims, size_t n_dims, int lod_level,
                      int persistable)
{
    ir_var *v = ir_block_find_var(b, name);
    if (v)
        return v;   /* Python's create_var on an existing name returns it */
    v = ir_block_var(b, name);
    /* Variable.__init__ (Paddle 2 and later, the seed's era) always sets
     * the desc's stop_gradient, False unless the caller passes it. */
    v->has_stop_gradient = true;
    v->stop_gradient = false;
    v->type = type;
    v->tensor_slot = slot_for(type);
    v->dtype = dtype;
    v->has_persistable = persistable >= 0;
    v->persistable = persistable > 0;
    if (v->tensor_slot != IR_TD_NONE && dims)
        ir_var_set_dims(b->program, v, dims, n_dims);
    if (lod_level >= 0 && (type == IR_LOD_TENSOR || type == IR_LOD_TENSOR_ARRAY)) {
        v->has_lod_level = true;
        v->lod_level = lod_level;
    }
    return v;
}

void tp_copied_op(ir_op *op)
{
    /* Only an op that has the attr gets it: like the ops pdtrans creates,
     * a hand-written op without framework attrs is not given one. */
    if (ir_op_has_attr(op, "op_namescope"))
        ir_op_set_string(op, "op_namescope", "/");
}

void tp_rename_role_var(const tp_placement *pl, ir_op *op)
{
    size_t n = 0;
    ir_arena *scratch = ir_arena_new();     /* not the plan's: read once */
    const char **rv = ir_op_get_names(op, "op_role_var", &n, scratch);
    bool hit = false;
    for (size_t i = 0; i < n; i++) {
        const tp_pair *p = tp_pair_of_grad(pl, rv[i]);
        if (!p)
            continue;
        const tp_dvar *g = &p->grad;
        if (g->n_slices == 1 && g->slices[0].name != g->name) {
            rv[i] = g->slices[0].name;
            hit = true;
        }
    }
    if (hit)
        ir_op_set_strings(op, "op_role_var", rv, n);
    ir_arena_free(scratch);
}

ir_var *tp_clone_variable(ir_block *b, const ir_var *src, const char *name)
{
    if (!name)
        name = src->name;
    ir_var *v = ir_block_find_var(b, name);
    if (v)
        return v;
    if (src->type == IR_STEP_SCOPES || src->type == IR_RAW) {
        v = tp_create_var(b, name, src->type, 0, NULL, 0, -1,
                          src->has_persistable ? src->persistable : -1);
        v->tensor_slot = IR_TD_NONE;
        return v;
    }
    bool has_tensor = src->tensor_slot != IR_TD_NONE;
    v = tp_create_var(b, name, src->type, src->dtype, has_tensor ? src->dims : NULL,
                      src->n_dims, src->type == IR_SELECTED_ROWS ? -1 : src->lod_level, 1);
    v->tensor_slot = has_tensor ? src->tensor_slot : IR_TD_NONE;
    if (src->has_need_check_feed && src->need_check_feed) {
        v->has_need_check_feed = true;
        v->need_check_feed = true;
    }
    return v;
}

const char *tp_control_var(ir_block *b, unsigned *counter)
{
    /* Paddle appends str(random.random()); pdtrans counts instead, so that
     * the output is reproducible. */
    const char *name = ir_internf("__control_var@%u", (*counter)++);
    ir_var *v = ir_block_var(b, name);
    v->has_stop_gradient = true;
    v->stop_gradient = false;
    v->type = IR_LOD_TENSOR;
    v->tensor_slot = IR_TD_NONE;
    v->has_persistable = false;
    return name;
}

int64_t tp_dtype_size(int dtype)
{
    switch (dtype) {
    case IR_BOOL: case IR_UINT8: case IR_INT8: return 1;
    case IR_INT16: case IR_FP16: case IR_BF16: return 2;
    case IR_INT32: case IR_FP32: return 4;
    case IR_INT64: case IR_FP64: case IR_COMPLEX64: case IR_SIZE_T: return 8;
    case IR_COMPLEX128: return 16;
    default: return 4;
    }
}

ir_program *tp_take_over(ir_program **slot)
{
    ir_program *p = *slot;
    *slot = tp_new_program(p);
    ir_program_set_new_op_attrs(*slot, NULL, 0);
    tp_expect_framework_attrs(p);
    return p;
}

ir_program *tp_new_program(const ir_program *like)
{
    ir_program *p = ir_program_new();
    if (like) {
        /* A fresh Python Program() carries the running Paddle's program
         * version; the input's is the best stand-in for it. */
        p->has_version = like->has_version;
        p->version = like->version;
        p->version_has_value = like->version_has_value;
    }
    ir_program_add_block(p, -1);
    tp_expect_framework_attrs(p);
    return p;
}

/* What tp_framework_attrs gives every op the transpiler appends, given
 * when the op is made instead (tp_framework_attrs then changes nothing but
 * op_namescope, in place), so that the op's arrays are sized once and
 * none is left behind in the arena (src/ir/op_shape.c). */
void tp_expect_framework_attrs(ir_program *p)
{
    ir_attr attrs[3] = {
        {.name = "op_namescope", .type = IR_ATTR_STRING, .has_s = true,
         .s = {(const uint8_t *)"/", 1}},
        {.name = "op_device", .type = IR_ATTR_STRING, .has_s = true,
         .s = {(const uint8_t *)"", 0}},
        {.name = "op_role_var", .type = IR_ATTR_STRINGS},
    };
    ir_program_set_new_op_attrs(p, attrs, 3);
}

static int cmp_op_ptr(const void *x, const void *y)
{
    uintptr_t a = (uintptr_t)*(const ir_op *const *)x, b = (uintptr_t)*(const ir_op *const *)y;
    return (a > b) - (a < b);
}

/* Sorted by address: only membership is ever asked, so no address order
 * reaches the output. */
tp_op_set *tp_input_ops(const pdt_ctx *ctx)
{
    tp_op_set *s = xcalloc(1, sizeof *s);
    const ir_program *ps[2] = {ctx->main, ctx->startup};
    size_t n = 0;
    for (int i = 0; i < 2; i++)
        for (size_t bi = 0; ps[i] && bi < ps[i]->n_blocks; bi++)
            n += ps[i]->blocks[bi]->n_ops;
    s->ops = n ? xmalloc_n(n, sizeof *s->ops) : NULL;
    for (int i = 0; i < 2; i++)
        for (size_t bi = 0; ps[i] && bi < ps[i]->n_blocks; bi++)
            for (size_t k = 0; k < ps[i]->blocks[bi]->n_ops; k++)
                s->ops[s->n++] = ps[i]->blocks[bi]->ops[k];
    if (s->n > 1)
        qsort(s->ops, s->n, sizeof *s->ops, cmp_op_ptr);
    return s;
}

bool tp_op_set_has(const tp_op_set *s, const ir_op *op)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)s->ops[mid] < (uintptr_t)op)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->ops[lo] == op;
}

void tp_op_set_free(tp_op_set *s)
{
    if (!s)
        return;
    free(s->ops);
    free(s);
}

void tp_framework_attrs(const tp_op_set *input_ops, ir_program *p)
{
    for (size_t bi = 0; bi < p->n_blocks; bi++)
        for (size_t k = 0; k < p->blocks[bi]->n_ops; k++) {
            ir_op *op = p->blocks[bi]->ops[k];
            if (tp_op_set_has(input_ops, op))
                continue;
            ir_op_set_string(op, "op_namescope", "/");
            if (!ir_op_has_attr(op, "op_device"))
                ir_op_set_string(op, "op_device", "");
            if (!ir_op_has_attr(op, "op_role_var"))
                ir_op_set_strings(op, "op_role_var", NULL, 0);
        }
}

bool tp_is_optimizer_op(const ir_op *op)
{
    return ir_op_input(op, "Param") && ir_op_input(op, "LearningRate");
}

const char *tp_sparse_table_of(const ir_op *op)
{
    const char *lt = ir_intern("lookup_table"), *nce = ir_intern("nce"),
               *dlt = ir_intern("distributed_lookup_table");
    bool sparse = ((op->type == lt || op->type == nce) &&
                   ir_op_get_bool(op, "is_sparse", false)) ||
                  op->type == dlt;
    /* The seed reads input "W" of nce ops too, which raises: their table
     * is "Weight" (transpile_prefetch.c). */
    return sparse ? ir_op_input1(op, op->type == nce ? "Weight" : "W") : NULL;
}
