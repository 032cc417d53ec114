/* test_verify.c - each structural check, and termination on cycles. */
#include "passes/verify.h"
#include "unit.h"

static ir_program *valid_program(void)
{
    ir_program *p = ir_program_new();
    ir_block *b0 = ir_program_add_block(p, -1);
    ir_program_add_block(p, 0);
    ir_block_var(b0, "x");
    ir_block_var(b0, "y");
    ir_op *op = ir_block_append_op(b0, "relu");
    ir_op_set_input1(op, "X", "x");
    ir_op_set_output1(op, "Out", "y");
    ir_op *inner = ir_block_append_op(p->blocks[1], "scale");
    ir_op_set_input1(inner, "X", "y");      /* visible from the parent */
    ir_op_set_output1(inner, "Out", "y");
    ir_op *cb = ir_block_append_op(b0, "conditional_block");
    ir_op_set_block(cb, "sub_block", 1);
    return p;
}

START_TEST(valid_program_passes)
{
    ir_program *p = valid_program();
    ck_assert_uint_eq(pdt_verify(p, "t", NULL), 0);
    ir_program_free(p);
}
END_TEST

START_TEST(unknown_var_is_reported)
{
    ir_program *p = valid_program();
    ir_op_set_input1(p->blocks[0]->ops[0], "X", "ghost");
    ck_assert_uint_eq(pdt_verify(p, "t", NULL), 1);
    /* a var local to block 1 is not visible from block 0 */
    ir_block_var(p->blocks[1], "local");
    ir_op_set_input1(p->blocks[0]->ops[0], "X", "local");
    ck_assert_uint_eq(pdt_verify(p, "t", NULL), 1);
    ir_program_free(p);
}
END_TEST

START_TEST(empty_placeholder_is_allowed)
{
    ir_program *p = valid_program();
    ir_op_set_input1(p->blocks[0]->ops[0], "X", "@EMPTY@");
    ck_assert_uint_eq(pdt_verify(p, "t", NULL), 0);
    ir_program_free(p);
}
END_TEST

START_TEST(missing_block_attr_is_reported)
{
    ir_program *p = valid_program();
    ir_op_set_block(p->blocks[0]->ops[1], "sub_block", 4);
    int32_t blocks[] = {1, -1};
    ir_op_set_blocks(p->blocks[0]->ops[1], "blocks", blocks, 2);
    ck_assert_uint_eq(pdt_verify(p, "t", NULL), 2);
    ir_program_free(p);
}
END_TEST

START_TEST(parent_cycle_is_reported_and_terminates)
{
    ir_program *p = valid_program();
    ir_program_add_block(p, 3);
    ir_program_add_block(p, 2);
    ck_assert_uint_eq(pdt_verify(p, "t", NULL), 2);
    p->blocks[2]->parent_idx = 2;   /* self loop */
    ck_assert_uint_ge(pdt_verify(p, "t", NULL), 1);
    ir_program_free(p);
}
END_TEST

START_TEST(block_zero_parent_is_only_a_warning)
{
    ir_program *p = valid_program();
    p->blocks[0]->parent_idx = 0;
    ck_assert_uint_eq(pdt_verify(p, "t", NULL), 0);
    p->blocks[0]->parent_idx = 1;   /* block 0 is the root regardless */
    ck_assert_uint_eq(pdt_verify(p, "t", NULL), 0);
    ir_program_free(p);
}
END_TEST

START_TEST(idx_and_dims_are_checked)
{
    ir_program *p = valid_program();
    p->blocks[1]->idx = 7;
    ck_assert_uint_eq(pdt_verify(p, "t", NULL), 1);
    p->blocks[1]->idx = 1;
    int64_t dims[] = {-1, INT64_MAX, 2};
    ir_var_set_dims(p, ir_block_find_var(p->blocks[0], "x"), dims, 3);
    ck_assert_uint_eq(pdt_verify(p, "t", NULL), 1);     /* the product overflows */
    ir_program_free(p);
}
END_TEST

/* Issue 34: Paddle's compile-time InferShape writes -1 * 1917 as -1917;
 * any negative dim is an unknown dim, counted as 1 in the product. */
START_TEST(dims_below_minus_one_are_unknown_dims)
{
    const int64_t below[] = {-2, -1917, INT64_MIN};
    for (size_t k = 0; k < 3; k++) {
        ir_program *p = valid_program();
        int64_t dims[] = {below[k], 1};
        ir_var_set_dims(p, ir_block_find_var(p->blocks[0], "x"), dims, 2);
        ir_var_set_dims(p, ir_block_var(p->blocks[1], "g@GRAD"), dims, 2);
        ck_assert_uint_eq(pdt_verify(p, "t", NULL), 0);
        ck_assert_uint_eq(pdt_verify_max(p, "t", NULL, 1), 0);
        ck_assert_uint_eq(pdt_verify_note_dims(p, "t", NULL), 2);
        /* INT64_MAX known extent next to an unknown dim still fits. */
        int64_t wide[] = {below[k], INT64_MAX};
        ir_var_set_dims(p, ir_block_find_var(p->blocks[0], "y"), wide, 2);
        ck_assert_uint_eq(pdt_verify(p, "t", NULL), 0);
        ck_assert_uint_eq(pdt_verify_note_dims(p, "t", NULL), 3);
        ir_program_free(p);
    }
}
END_TEST

static char *note_text(const ir_program *p, const char *name)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    pdt_quiet = false;
    pdt_verify_note_dims(p, name, f);
    pdt_quiet = true;
    long len = ftell(f);
    char *buf = calloc((size_t)len + 1, 1);
    rewind(f);
    ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    return buf;
}

static size_t lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

START_TEST(one_note_per_program_quiet_under_q)
{
    ir_program *p = valid_program();
    int64_t a[] = {-1917, 1}, b[] = {-2};
    ir_var_set_dims(p, ir_block_find_var(p->blocks[0], "x"), a, 2);
    ir_var_set_dims(p, ir_block_find_var(p->blocks[0], "y"), b, 1);
    char *first = note_text(p, "one.pb");
    ck_assert_ptr_nonnull(strstr(first, "pdtrans: note: one.pb: block 0: var 'x' has dims "
                                        "[-1917, 1] (1 more var has dims below -1)"));
    ck_assert_uint_eq(lines(first), 1);
    char *again = note_text(p, "one.pb");       /* the same program read again */
    ck_assert_str_eq(again, "");
    pdt_quiet_warnings = true;                   /* -q */
    char *quiet = note_text(p, "two.pb");
    pdt_quiet_warnings = false;
    ck_assert_str_eq(quiet, "");
    char *other = note_text(p, "three.pb");
    ck_assert_ptr_nonnull(strstr(other, "three.pb: block 0: var 'x'"));
    free(first);
    free(again);
    free(quiet);
    free(other);
    ir_program_free(p);
}
END_TEST

START_TEST(no_blocks_is_an_error)
{
    ir_program *p = ir_program_new();
    ck_assert_uint_eq(pdt_verify(p, "t", NULL), 1);
    ir_program_free(p);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("checks");
    tcase_add_test(tc, valid_program_passes);
    tcase_add_test(tc, unknown_var_is_reported);
    tcase_add_test(tc, empty_placeholder_is_allowed);
    tcase_add_test(tc, missing_block_attr_is_reported);
    tcase_add_test(tc, parent_cycle_is_reported_and_terminates);
    tcase_add_test(tc, block_zero_parent_is_only_a_warning);
    tcase_add_test(tc, idx_and_dims_are_checked);
    tcase_add_test(tc, dims_below_minus_one_are_unknown_dims);
    tcase_add_test(tc, one_note_per_program_quiet_under_q);
    tcase_add_test(tc, no_blocks_is_an_error);
    suite_add_tcase(s, tc);
    return s;
}
