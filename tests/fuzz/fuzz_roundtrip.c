/* fuzz_roundtrip.c - libFuzzer target for the text round trip, with the
 * structure-aware mutator (fuzz_mutator.h): parse the input (either form),
 * print it as text, parse that again: the same IR (blocks, vars, ops,
 * slots, arguments and attr names and types compared one by one); print
 * again: the same bytes.  Plus fuzz_common.h's fixed points of both forms.
 * Run with tests/fuzz/run.sh. */
#include "fuzz_common.h"
#include "fuzz_mutator.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_init();
    return 0;
}

static void rt_fail(const char *what, size_t block, size_t i)
{
    fprintf(stderr, "fuzz: text round trip changes the IR: %s (block %zu, item %zu)\n",
            what, block, i);
    abort();
}

static void rt_same_slots(const ir_slot *a, const ir_slot *b, size_t n, size_t blk, size_t i)
{
    for (size_t k = 0; k < n; k++) {
        if (a[k].name != b[k].name || a[k].n_args != b[k].n_args)
            rt_fail("op slot", blk, i);
        for (size_t j = 0; j < a[k].n_args; j++)
            if (a[k].args[j] != b[k].args[j])   /* interned: same name, same pointer */
                rt_fail("op argument", blk, i);
    }
}

static bool rt_same_bytes(ir_bytes x, ir_bytes y)
{
    return x.len == y.len && (!x.len || memcmp(x.data, y.data, x.len) == 0);
}

/* Only the union member of the attr's own type holds a value: the rest of
 * the union (a 32-bit value's upper half, say) is whatever was there, so
 * values are compared by type, never as raw words. */
static bool rt_same_value(const ir_attr *x, const ir_attr *y)
{
#define SAME_LIST(n, p) (x->n == y->n && (!x->n || memcmp(x->p, y->p, x->n * sizeof *x->p) == 0))
    switch (x->type) {
    case IR_ATTR_INT: return x->i == y->i;
    case IR_ATTR_FLOAT: return memcmp(&x->f, &y->f, sizeof x->f) == 0;
    case IR_ATTR_STRING: return rt_same_bytes(x->s, y->s);
    case IR_ATTR_BOOLEAN: return x->b == y->b;
    case IR_ATTR_BLOCK: return x->block_idx == y->block_idx;
    case IR_ATTR_LONG: return x->l == y->l;
    case IR_ATTR_FLOAT64: return memcmp(&x->float64, &y->float64, sizeof x->float64) == 0;
    case IR_ATTR_VAR: return x->var_name == y->var_name;
    case IR_ATTR_INTS: return SAME_LIST(n_ints, ints);
    case IR_ATTR_FLOATS: return SAME_LIST(n_floats, floats);
    case IR_ATTR_BOOLEANS: return SAME_LIST(n_bools, bools);
    case IR_ATTR_BLOCKS: return SAME_LIST(n_blocks_idx, blocks_idx);
    case IR_ATTR_LONGS: return SAME_LIST(n_longs, longs);
    case IR_ATTR_FLOAT64S: return SAME_LIST(n_float64s, float64s);
    case IR_ATTR_VARS: return SAME_LIST(n_vars_name, vars_name);
    case IR_ATTR_STRINGS:
        if (x->n_strings != y->n_strings)
            return false;
        for (size_t k = 0; k < x->n_strings; k++)
            if (!rt_same_bytes(x->strings[k], y->strings[k]))
                return false;
        return true;
    case IR_ATTR_SCALAR: return (x->scalar == NULL) == (y->scalar == NULL);
    case IR_ATTR_SCALARS: return x->n_scalars == y->n_scalars;
    }
    return true;
#undef SAME_LIST
}

static void rt_same_op(const ir_op *a, const ir_op *b, size_t blk, size_t i)
{
    if (a->type != b->type || a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs ||
        a->n_attrs != b->n_attrs)
        rt_fail("op type or slot/attr count", blk, i);
    rt_same_slots(ir_op_ins(a), ir_op_ins(b), a->n_inputs, blk, i);
    rt_same_slots(ir_op_outs(a), ir_op_outs(b), a->n_outputs, blk, i);
    const ir_attr *xs = ir_op_attrs(a), *ys = ir_op_attrs(b);
    for (size_t k = 0; k < a->n_attrs; k++) {
        const ir_attr *x = &xs[k], *y = &ys[k];
        if (x->name != y->name || x->type != y->type || !rt_same_value(x, y))
            rt_fail("op attr", blk, i);
    }
}

static void rt_same_ir(const ir_program *p, const ir_program *q)
{
    if (p->n_blocks != q->n_blocks)
        rt_fail("block count", 0, 0);
    for (size_t b = 0; b < p->n_blocks; b++) {
        const ir_block *x = p->blocks[b], *y = q->blocks[b];
        if (x->idx != y->idx || x->parent_idx != y->parent_idx || x->n_ops != y->n_ops ||
            x->n_vars != y->n_vars)
            rt_fail("block header, op or var count", b, 0);
        for (size_t i = 0; i < x->n_vars; i++) {
            const ir_var *v = x->vars[i], *w = y->vars[i];
            if (v->name != w->name || v->type != w->type || v->dtype != w->dtype ||
                v->n_dims != w->n_dims || v->persistable != w->persistable ||
                (v->n_dims && memcmp(v->dims, w->dims, v->n_dims * sizeof *v->dims)))
                rt_fail("var", b, i);
        }
        for (size_t i = 0; i < x->n_ops; i++)
            rt_same_op(x->ops[i], y->ops[i], b, i);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pdt_quiet = true;
    ir_program *p = pdio_parse("fuzz", data, size);
    if (p) {
        size_t n1 = 0, n2 = 0;
        uint8_t *t1 = fuzz_serialize(p, true, &n1, "text round trip");
        pdt_quiet = false;
        ir_program *q = pdio_parse("fuzz-text", t1, n1);
        pdt_quiet = true;
        if (!q) {
            fprintf(stderr, "fuzz: pdio_parse rejects pdtrans's own text\n");
            abort();
        }
        rt_same_ir(p, q);
        uint8_t *t2 = fuzz_serialize(q, true, &n2, "text round trip");
        fuzz_compare("text printed twice", t1, n1, t2, n2);
        free(t1);
        free(t2);
        ir_program_free(q);
        ir_program_free(p);
    }
    fuzz_one(data, size);   /* verify, binary and text fixed points */
    return 0;
}
