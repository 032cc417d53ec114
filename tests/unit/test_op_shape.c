/* test_op_shape.c - ops that passes create get exact-size slot and attr
 * arrays (issue 14 point 2, src/ir/op_shape.c): once an op of a type has
 * been built, the next ones of that type are given arrays of its size at
 * creation, so filling them in (framework attrs last, after other
 * allocations) leaves no copy behind in the arena. */
#include "ir/ir_internal.h"
#include "ir/pmap.h"
#include "passes/pass.h"
#include "unit.h"
#include "transpile_fixture.h"

static const char *BASIC = "tests/golden/transpile_basic/in/main.pbtxt";
static const char *BASIC_STARTUP = "tests/golden/transpile_basic/in/startup.pbtxt";

/* A send op as insert_send_recv builds it, with a var declared in between
 * and the framework attrs added afterwards, as tp_framework_attrs does. */
static ir_op *build_send(ir_block *b, int k)
{
    ir_op *op = ir_block_append_op(b, "test_send");
    ir_op_set_input1(op, "X", ir_internf("x%d", k));
    ir_op_set_output1(op, "Out", ir_internf("dummy%d", k));
    const char *eps[] = {"127.0.0.1:6174"};
    ir_op_set_strings(op, "epmap", eps, 1);
    ir_op_set_strings(op, "send_varnames", NULL, 0);
    ir_op_set_int(op, "sync_mode", 1);
    ir_op_set_int(op, "trainer_id", 0);
    ir_op_set_int(op, "op_role", 4);
    ir_block_var(b, ir_internf("x%d", k));
    ir_op_set_string(op, "op_namescope", "/");
    ir_op_set_string(op, "op_device", "");
    ir_op_set_strings(op, "op_role_var", NULL, 0);
    return op;
}

START_TEST(second_op_of_a_type_is_built_in_place)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    size_t before = ir_op_array_copies();
    build_send(b, 0);
    /* The first op of a type still grows (4 attrs, then 8). */
    ck_assert_uint_gt(ir_op_array_copies(), before);
    for (int k = 1; k < 4; k++) {
        before = ir_op_array_copies();
        ir_op *op = build_send(b, k);
        ck_assert_uint_eq(ir_op_array_copies(), before);
        ck_assert_uint_eq(op->cap_attrs, op->n_attrs);
        ck_assert_uint_eq(op->cap_inputs, 1);
        ck_assert_uint_eq(op->cap_outputs, 1);
    }
    /* A copy of such an op has room for what the type reaches. */
    ir_op *src = ir_op_new(p, "test_send");
    ir_op_set_int(src, "op_role", 4);
    ir_op *copy = ir_op_clone(p, src);
    ck_assert_uint_eq(copy->n_attrs, 1);
    ck_assert_uint_eq(copy->cap_attrs, b->ops[0]->n_attrs);
    ir_program_free(p);
}
END_TEST

static size_t run_transpile(pdt_ctx *ctx)
{
    tpf_load(ctx, BASIC, BASIC_STARTUP);
    const char *pass = ir_intern("transpile");
    size_t before = ir_op_array_copies();
    ck_assert_int_eq(pdt_run_pipeline(ctx, &pass, 1), PDT_OK);
    return ir_op_array_copies() - before;
}

/* Calls visit(op, arg) for every op of `type` (NULL: any) in ctx's outputs. */
static void each_op(const pdt_ctx *ctx, const char *type, void (*visit)(const ir_op *, void *),
                    void *arg)
{
    for (size_t i = 0; i < ctx->n_outputs; i++) {
        const ir_program *p = ctx->outputs[i].program;
        for (size_t bi = 0; bi < p->n_blocks; bi++)
            for (size_t k = 0; k < p->blocks[bi]->n_ops; k++)
                if (!type || p->blocks[bi]->ops[k]->type == type)
                    visit(p->blocks[bi]->ops[k], arg);
    }
}

static void add_type(const ir_op *op, void *arg)
{
    pmap_add(arg, op->type);
}

static size_t distinct_types(const pdt_ctx *ctx)
{
    pmap types = PMAP_INIT;
    each_op(ctx, NULL, add_type, &types);
    size_t n = types.n;
    pmap_free(&types);
    return n;
}

typedef struct {
    size_t ops, inputs, outputs, attrs;
} most;

static void take_most(const ir_op *op, void *arg)
{
    most *m = arg;
    m->ops++;
    m->inputs = op->n_inputs > m->inputs ? op->n_inputs : m->inputs;
    m->outputs = op->n_outputs > m->outputs ? op->n_outputs : m->outputs;
    m->attrs = op->n_attrs > m->attrs ? op->n_attrs : m->attrs;
}

/* Room for exactly what the op holds or what its type reaches. */
static void check_room(const ir_op *op, void *arg)
{
    const most *m = arg;
    ck_assert(op->cap_attrs == op->n_attrs || op->cap_attrs == m->attrs);
    ck_assert(op->cap_inputs == op->n_inputs || op->cap_inputs == m->inputs);
    ck_assert(op->cap_outputs == op->n_outputs || op->cap_outputs == m->outputs);
}

/* The transpile passes' ops (send, recv, split_byref, concat, the
 * barriers, listen_and_serv, the pservers' optimizer ops and startup
 * copies): after one run has shown their shapes, a second run builds
 * every one in place, each with room for exactly what its type reaches
 * (not a power of two). */
START_TEST(transpile_ops_leave_no_copies)
{
    pdt_ctx first, second;
    /* In one run, only the first op of a type may grow. */
    size_t copies = run_transpile(&first);
    ck_assert_uint_gt(copies, 0);
    ck_assert_uint_le(copies, distinct_types(&first));
    ck_assert_uint_eq(run_transpile(&second), 0);
    const char *types[] = {"send", "recv", "split_byref", "concat", "listen_and_serv",
                           "send_barrier", "fetch_barrier", "sgd", "sum", "scale",
                           "uniform_random", "fill_constant"};
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
        most m = {0, 0, 0, 0};
        each_op(&second, ir_intern(types[t]), take_most, &m);
        ck_assert_msg(m.ops > 0, "no %s op in the outputs", types[t]);
        each_op(&second, ir_intern(types[t]), check_room, &m);
    }
    pdt_ctx_free(&first);
    pdt_ctx_free(&second);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("op_shape");
    TCase *t = tcase_create("op_shape");
    tcase_add_test(t, second_op_of_a_type_is_built_in_place);
    tcase_add_test(t, transpile_ops_leave_no_copies);
    suite_add_tcase(s, t);
    return s;
}
