/* test_sym_rewrite.c - `verify rewrite --symbolic` (src/sym/rewrite*.c) on
 * programs built in memory: a rewrite that keeps every value is equal; a
 * reuse of a live buffer and a delete_var too early are reported at the op
 * that reads the wrong buffer; a sub-block's own vars may be renamed; Scope
 * vars are never compared. */
#include <string.h>

#include "sym/rewrite.h"
#include "unit.h"

static void tensor(ir_block *b, const char *name)
{
    ir_var *v = ir_block_var(b, name);
    int64_t dims[] = {-1, 8};
    ir_var_set_dims(b->program, v, dims, 2);
}

static ir_op *op(ir_block *b, const char *type, const char *x, const char *y, const char *out)
{
    ir_op *o = ir_block_append_op(b, type);
    ir_op_set_input1(o, "X", x);
    if (y)
        ir_op_set_input1(o, "Y", y);
    ir_op_set_output1(o, "Out", out);
    return o;
}

/* relu(x) -> A; relu(A) -> B; A + B -> out.  With `reuse`, relu(A) writes
 * into A's buffer, still read by the add; with `early`, A is deleted
 * right after it is written. */
static ir_program *chain(bool reuse, bool early)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    const char *v[] = {"x", "a", "b", "out"};
    for (int i = 0; i < 4; i++)
        tensor(b, v[i]);
    op(b, "relu", "x", NULL, "a");
    if (early)
        ir_op_set_input1(ir_block_append_op(b, "delete_var"), "X", "a");
    op(b, "relu", "a", NULL, reuse ? "a" : "b");
    op(b, "elementwise_add", "a", reuse ? "a" : "b", "out");
    return p;
}

static int check(ir_program *before, ir_program *after, char *err, size_t n)
{
    sym_rewrite_in in = {.labels = {"before.pb", "after.pb"}, .progs = {before, after},
                         .steps = 2};
    FILE *out = fopen("/dev/null", "w");
    int rc = sym_verify_rewrite(&in, out, err, n);
    fclose(out);
    ir_program_free(before);
    ir_program_free(after);
    return rc;
}

START_TEST(tensor_types)
{
    ck_assert(sym_is_tensor_type(IR_LOD_TENSOR));
    ck_assert(sym_is_tensor_type(IR_SELECTED_ROWS));
    ck_assert(sym_is_tensor_type(IR_LOD_TENSOR_ARRAY));
    ck_assert(!sym_is_tensor_type(IR_STEP_SCOPES));
    ck_assert(!sym_is_tensor_type(IR_READER));
    ck_assert(!sym_is_tensor_type(IR_FEED_MINIBATCH));
    ck_assert(!sym_is_tensor_type(IR_FETCH_LIST));
}
END_TEST

START_TEST(same_program_is_equal)
{
    char err[1024] = "";
    ck_assert_int_eq(check(chain(false, false), chain(false, false), err, sizeof err), 0);
}
END_TEST

START_TEST(live_reuse_is_named)
{
    char err[1024] = "";
    ck_assert_int_eq(check(chain(false, false), chain(true, false), err, sizeof err), 1);
    ck_assert_msg(strstr(err, "after.pb: block 0, op 2 'elementwise_add': input X[0] 'a'") &&
                  strstr(err, "a reuse of a buffer still live"), "%s", err);
}
END_TEST

START_TEST(early_delete_is_named)
{
    char err[1024] = "";
    ck_assert_int_eq(check(chain(false, false), chain(false, true), err, sizeof err), 1);
    ck_assert_msg(strstr(err, "after.pb: block 0, op 2 'relu': input X[0] 'a' holds nothing") &&
                  strstr(err, "a delete_var too early"), "%s", err);
}
END_TEST

START_TEST(other_ops_cannot_pair)
{
    char err[1024] = "";
    ir_program *after = chain(false, false);
    ir_program_block(after, 0)->ops[1]->type = ir_intern("sigmoid");
    ck_assert_int_eq(check(chain(false, false), after, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "after.pb: block 0, op 1 'sigmoid': pairs with BEFORE's op 1"),
                  "%s", err);
}
END_TEST

/* conditional_block(Cond=c) { relu(x) -> LOCAL; relu(LOCAL) -> y }; y read
 * after it; its Scope var written and read by none.  AFTER names the
 * block's own var otherwise: equal.  A relu(x) -> y inside the block of
 * AFTER is another value of y: a difference at the op reading y. */
static ir_program *guarded(const char *local, bool wrong)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_block *sb = ir_program_add_block(p, 0);
    tensor(b, "x");
    tensor(b, "c");
    tensor(b, "y");
    tensor(b, "z");
    ir_block_var(b, "scope")->type = IR_STEP_SCOPES;
    tensor(sb, local);
    op(sb, "relu", "x", NULL, local);
    op(sb, "relu", wrong ? "x" : local, NULL, "y");
    ir_op *cb = ir_block_append_op(b, "conditional_block");
    ir_op_set_input1(cb, "Cond", "c");
    ir_op_set_input1(cb, "Input", "x");
    ir_op_set_output1(cb, "Out", "y");
    ir_op_set_output1(cb, "Scope", "scope");
    ir_op_set_block(cb, "sub_block", 1);
    op(b, "relu", "y", NULL, "z");
    return p;
}

START_TEST(sub_block_own_vars_may_be_renamed)
{
    char err[1024] = "";
    ck_assert_int_eq(check(guarded("t", false), guarded("u", false), err, sizeof err), 0);
    ck_assert_int_eq(check(guarded("t", false), guarded("t", true), err, sizeof err), 1);
    ck_assert_msg(strstr(err, "after.pb: block 1, op 1 'relu': input X[0] 'x'"), "%s", err);
}
END_TEST

/* Blocks 1 and 2 run each other: refused, not a stack overflow. */
static ir_program *cyclic(void)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_block *b1 = ir_program_add_block(p, 0);
    ir_block *b2 = ir_program_add_block(p, 1);
    tensor(b, "c");
    ir_block *from[] = {b, b1, b2};
    int to[] = {1, 2, 1};
    for (int i = 0; i < 3; i++) {
        ir_op *cb = ir_block_append_op(from[i], "conditional_block");
        ir_op_set_input1(cb, "Cond", "c");
        ir_op_set_block(cb, "sub_block", to[i]);
    }
    return p;
}

START_TEST(cyclic_sub_blocks_are_refused)
{
    char err[1024] = "";
    ck_assert_int_eq(check(cyclic(), cyclic(), err, sizeof err), -1);
    ck_assert_msg(strstr(err, "sub-blocks nest more than 16 deep"), "%s", err);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("sym_rewrite");
    TCase *tc = tcase_create("rewrite");
    tcase_add_test(tc, tensor_types);
    tcase_add_test(tc, same_program_is_equal);
    tcase_add_test(tc, live_reuse_is_named);
    tcase_add_test(tc, early_delete_is_named);
    tcase_add_test(tc, other_ops_cannot_pair);
    tcase_add_test(tc, sub_block_own_vars_may_be_renamed);
    tcase_add_test(tc, cyclic_sub_blocks_are_refused);
    suite_add_tcase(s, tc);
    return s;
}
