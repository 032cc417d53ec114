/* test_gate.c - the pipeline's input gate and the after-pass check: input
 * problems stop the pipeline before any pass with exit status 1; a pass
 * that breaks a gated program is a bug (status 3).  This suite registers
 * its own passes (it defines the registry, so the real one is not linked). */
#include "ckd.h"
#include "passes/pass.h"
#include "passes/verify.h"
#include "unit.h"

static int runs;

static int pass_count(pdt_ctx *ctx)
{
    (void)ctx;
    runs++;
    return PDT_OK;
}

/* A pass with a bug: names a var nobody declares. */
static int pass_break(pdt_ctx *ctx)
{
    ir_op *op = ir_block_append_op(ctx->main->blocks[0], "relu");
    ir_op_set_input1(op, "X", "nowhere");
    return PDT_OK;
}

const pdt_pass pdt_passes[] = {
    {.name = "count", .summary = "counts its runs", .run = pass_count},
    {.name = "break", .summary = "breaks the program", .run = pass_break},
};
const size_t pdt_n_passes = 2;

/* block 0 runs block 1 (conditional_block), which declares t. */
static ir_program *nested(void)
{
    ir_program *p = ir_program_new();
    ir_block *b0 = ir_program_add_block(p, -1);
    ir_block *b1 = ir_program_add_block(p, 0);
    ir_block_var(b0, "x");
    ir_block_var(b1, "t");
    ir_op *cb = ir_block_append_op(b0, "conditional_block");
    ir_op_set_input1(cb, "Input", "x");
    ir_op_set_block(cb, "sub_block", 1);
    ir_op *sc = ir_block_append_op(b1, "scale");
    ir_op_set_input1(sc, "X", "x");
    ir_op_set_output1(sc, "Out", "t");
    return p;
}

static int run(ir_program *p, const char *pass)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.main = p;
    ctx.startup = ir_program_new();
    ir_program_add_block(ctx.startup, -1);
    int rc = pdt_run_pipeline(&ctx, &pass, 1);
    pdt_ctx_free(&ctx);
    return rc;
}

START_TEST(valid_input_runs_the_pass)
{
    runs = 0;
    ck_assert_int_eq(run(nested(), "count"), PDT_OK);
    ck_assert_int_eq(runs, 1);
}
END_TEST

START_TEST(each_crash_class_stops_before_the_pass)
{
    for (int k = 0; k < 7; k++) {
        ir_program *p = nested();
        ir_op *cb = p->blocks[0]->ops[0];
        switch (k) {
        case 0: p->blocks[1]->idx = 5; break;                  /* idx != position */
        case 1: ir_op_set_block(p->blocks[1]->ops[0], "sub_block", 1); break; /* itself */
        case 2: ir_op_set_block(p->blocks[1]->ops[0], "sub_block", 0); break; /* ancestor */
        case 3: ir_op_set_block(cb, "sub_block", 9); break;    /* missing */
        case 4: {                                              /* named twice */
            int32_t twice[] = {1, 1};
            ir_op_set_blocks(cb, "blocks", twice, 2);
            break;
        }
        case 5: p->blocks[1]->parent_idx = 1; break;           /* parent self-loop */
        case 6: {                                              /* 2^40 x 2^40 */
            int64_t dims[] = {INT64_C(1) << 40, INT64_C(1) << 40};
            ir_var_set_dims(p, ir_block_find_var(p->blocks[0], "x"), dims, 2);
            break;
        }
        }
        runs = 0;
        ck_assert_msg(run(p, "count") == PDT_EBADINPUT, "case %d passed the gate", k);
        ck_assert_int_eq(runs, 0);
    }
}
END_TEST

START_TEST(a_pass_breaking_valid_input_is_a_bug)
{
    ck_assert_int_eq(run(nested(), "break"), PDT_EINTERNAL);
}
END_TEST

START_TEST(sibling_sub_block_is_refused)
{
    ir_program *p = nested();
    ir_program_add_block(p, 0);     /* block 2, a child of block 0 */
    ir_op_set_block(p->blocks[1]->ops[0], "sub_block", 2);
    ck_assert_uint_eq(pdt_verify(p, "t", NULL), 1);
    ir_program_free(p);
}
END_TEST

/* A chain of `depth` blocks, each running the next; the innermost op
 * reads a var of block 0. */
static ir_program *chain(size_t depth)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_block_var(b, "x");
    for (size_t i = 1; i <= depth; i++) {
        ir_op *cb = ir_block_append_op(b, "conditional_block");
        ir_op_set_block(cb, "sub_block", (int32_t)i);
        b = ir_program_add_block(p, (int32_t)i - 1);
        ir_block_var(b, ir_internf("v%zu", i));
    }
    ir_op *op = ir_block_append_op(b, "scale");
    ir_op_set_input1(op, "X", "x");
    ir_op_set_output1(op, "Out", ir_internf("v%zu", depth));
    return p;
}

START_TEST(deep_nesting_costs_no_stack)
{
    /* 100 000 levels: a recursive walk would overflow an 8 MiB stack. */
    ir_program *p = chain(100000);
    ck_assert_uint_eq(pdt_verify(p, "t", NULL), 0);
    const ir_block *inner = p->blocks[p->n_blocks - 1];
    ck_assert_ptr_eq(ir_block_find_var_recursive(inner, "x"), ir_block_find_var(p->blocks[0], "x"));
    ck_assert_ptr_null(ir_block_find_var_recursive(p->blocks[0], "v7"));
    ck_assert_ptr_nonnull(ir_block_find_var_recursive(inner, "v7"));
    ck_assert_ptr_null(ir_block_find_var_recursive(p->blocks[6], "v7"));
    ir_program *c = ir_program_clone(p);
    ck_assert_uint_eq(pdt_verify(c, "t", NULL), 0);
    ir_program_free(c);
    /* A parent cycle through every block: reported, and terminates. */
    p->blocks[1]->parent_idx = (int32_t)p->n_blocks - 1;
    ck_assert_uint_ge(pdt_verify_max(p, "t", NULL, 1), 1);
    ir_program_free(p);
}
END_TEST

START_TEST(lookup_sees_redeclared_and_removed_names)
{
    ir_program *p = chain(40);
    /* "x" declared again in block 20 shadows block 0's for blocks below. */
    ir_var *x20 = ir_block_var(p->blocks[20], "x");
    ck_assert_ptr_eq(ir_block_find_var_recursive(p->blocks[40], "x"), x20);
    ck_assert_ptr_ne(ir_block_find_var_recursive(p->blocks[19], "x"), x20);
    ir_block_remove_var(p->blocks[20], "x");
    ck_assert_ptr_eq(ir_block_find_var_recursive(p->blocks[40], "x"),
                     ir_block_find_var(p->blocks[0], "x"));
    /* Declared in many blocks (past the candidate limit): still right. */
    for (size_t i = 2; i <= 40; i += 2)
        ir_block_var(p->blocks[i], "many");
    ck_assert_ptr_eq(ir_block_find_var_recursive(p->blocks[37], "many"),
                     ir_block_find_var(p->blocks[36], "many"));
    ck_assert_ptr_null(ir_block_find_var_recursive(p->blocks[1], "many"));
    ir_program_free(p);
}
END_TEST

START_TEST(checked_arithmetic)
{
    int64_t r;
    int64_t big[] = {INT64_C(1) << 40, INT64_C(1) << 40};
    ck_assert(ckd_dims_product(&r, big, 2));
    int64_t unknown[] = {-1, INT64_C(1) << 40, 4};
    ck_assert(!ckd_dims_product(&r, unknown, 3));
    ck_assert_int_eq(r, INT64_C(1) << 42);
    size_t s;
    ck_assert(ckd_mul_size(&s, SIZE_MAX / 2, 3));
    ck_assert(!ckd_add_size(&s, 1, 2) && s == 3);
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_var *v = ir_block_var(b, "v");
    ir_var_set_dims(p, v, big, 2);
    ck_assert_int_eq(ir_var_numel(v), -2);
    int64_t zero[] = {INT64_C(1) << 40, INT64_C(1) << 40, 0};
    ir_var_set_dims(p, v, zero, 3);
    ck_assert_int_eq(ir_var_numel(v), 0);
    ir_var_set_dims(p, v, unknown, 3);
    ck_assert_int_eq(ir_var_numel(v), -1);
    ir_program_free(p);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("gate");
    TCase *tc = tcase_create("gate");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, valid_input_runs_the_pass);
    tcase_add_test(tc, each_crash_class_stops_before_the_pass);
    tcase_add_test(tc, a_pass_breaking_valid_input_is_a_bug);
    tcase_add_test(tc, sibling_sub_block_is_refused);
    tcase_add_test(tc, deep_nesting_costs_no_stack);
    tcase_add_test(tc, lookup_sees_redeclared_and_removed_names);
    tcase_add_test(tc, checked_arithmetic);
    suite_add_tcase(s, tc);
    return s;
}
