/* test_hash_order_startup.c - the hash attr order up to 2.3 of the
 * startup fill_constant ops minimize makes (src/passes/era/
 * hash_order_startup.c, research-2x-3x.md 4x), against the real startup
 * programs' ConstantInitializer ops. */
#include "unit.h"

#include "io/pdio.h"
#include "passes/era/era.h"
#include "passes/era/hash_table.h"

#include <glib.h>
#include <string.h>

/* The attr names of OP in order, space-separated (g_free). */
static char *names_of(const ir_op *op)
{
    GString *s = g_string_new("");
    for (size_t i = 0; i < op->n_attrs; i++)
        g_string_append_printf(s, "%s%s", i ? " " : "", ir_op_attrs(op)[i].name);
    return g_string_free(s, FALSE);
}

static const ir_op *output_op(const ir_program *p, const char *out)
{
    const ir_block *b = p->blocks[0];
    for (size_t k = 0; k < b->n_ops; k++) {
        const ir_slot *o = ir_op_output(b->ops[k], "Out");
        if (o && o->n_args == 1 && !strcmp(o->args[0], out))
            return b->ops[k];
    }
    return NULL;
}

/* The op writing OUT of the real program, sorted by name as pdtrans
 * writes it and marked made, then ordered for ERA: its attr names. */
static char *ordered(ir_program *p, const char *out, int era)
{
    ir_op *op = (ir_op *)output_op(p, out);
    ck_assert_ptr_nonnull(op);
    ir_op_settle(op);
    op->made = true;
    pdt_hash_order_startup(NULL, p, era);
    return names_of(op);
}

/* rec_join_startup.pdmodel (<= 1.5, no str_value): the data_norm
 * statistics' ConstantInitializer fill_constants, the caller minimize's
 * accumulators and learning rate have. */
START_TEST(startup_fill_constant_takes_rec_join_order)
{
    if (!unit_shared_dir())
        return;
    ir_program *p = pdio_read("../shared/testdata-real/rec_join_startup.pdmodel");
    ck_assert_ptr_nonnull(p);
    const char *want = "op_role_var op_callstack op_namescope op_role force_cpu value shape dtype";
    char *file = names_of(output_op(p, "bn6048.batch_square_sum"));
    ck_assert_str_eq(file, want);
    for (int era = 104; era <= 106; era++) {
        char *got = ordered(p, "bn6048.batch_square_sum", era);
        ck_assert_str_eq(got, want);
        g_free(got);
    }
    g_free(file);
    ir_program_free(p);
}
END_TEST

/* fleetx_resnet50_momentum_startup.pdmodel (a 1.8 development build):
 * its 377 fill_constants (momentum's velocities, the warm-up's and the
 * piecewise decay's global vars, the @LR_DECAY_COUNTER@, batch_norm's
 * ConstantInitializers) all list one order, so one history made them;
 * it is not v1.8.5's (str_value among the given attrs, the maker's attrs
 * in another order; neither is its re-read), as its main program's
 * optimizer and LR ops fit no release tag's history (research 4p).
 * pdtrans writes the release's (research 4x). */
START_TEST(startup_fill_constant_fleetx_is_one_history)
{
    if (!unit_shared_dir())
        return;
    ir_program *p = pdio_read("../shared/testdata-real/train/fleetx_resnet50_momentum_startup.pdmodel");
    ck_assert_ptr_nonnull(p);
    const char *want = "op_device op_role_var op_callstack op_namescope op_role dtype str_value "
                       "value shape force_cpu";
    const char *outs[] = {"res5c_branch2c_weights_velocity_0", "learning_rate", "@LR_DECAY_COUNTER@"};
    for (size_t i = 0; i < 3; i++) {
        char *file = names_of(output_op(p, outs[i]));
        ck_assert_str_eq(file, want);
        g_free(file);
        char *got = ordered(p, outs[i], 108);
        ck_assert_str_eq(got, "op_device op_role_var op_callstack op_namescope op_role force_cpu "
                              "str_value value shape dtype");
        g_free(got);
    }
    ir_program_free(p);
}
END_TEST

/* adam's beta powers: optimizer.py (v1.8.5 on) adds them under
 * device_guard('cpu'), so op_device is given, set right after
 * op_callstack, before check_attrs's defaults. */
START_TEST(device_guarded_accumulator_gives_op_device)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_op *op = ir_block_append_op(b, "fill_constant");
    op->made = true;
    ir_op_set_output1(op, "Out", "w_beta1_pow_acc_0");
    const int64_t one = 1;
    ir_op_set_int(op, "dtype", 5);
    ir_op_set_bool(op, "force_cpu", false);
    ir_op_set_strings(op, "op_callstack", NULL, 0);
    ir_op_set_string(op, "op_device", "cpu");
    ir_op_set_string(op, "op_namescope", "/");
    ir_op_set_int(op, "op_role", 0);
    ir_op_set_strings(op, "op_role_var", NULL, 0);
    ir_op_set_longs(op, "shape", &one, 1);
    ir_op_set_string(op, "str_value", "");
    ir_op_set_float(op, "value", 0.9f);
    /* the history: dtype shape value force_cpu op_role op_namescope
     * op_callstack op_device, then str_value op_role_var */
    ht t = {.policy = ht_policy_of(108)};
    ht_init(&t);
    const char *hist[] = {"dtype",        "shape",        "value",     "force_cpu", "op_role",
                          "op_namescope", "op_callstack", "op_device", "str_value", "op_role_var"};
    for (size_t i = 0; i < 10; i++)
        ck_assert(ht_insert(&t, ir_intern(hist[i])));
    pdt_hash_order_startup(NULL, p, 108);
    for (size_t i = 0; i < 10; i++)
        ck_assert_str_eq(ir_op_attrs(op)[i].name, t.keys[i]);
    /* a made op with an input slot is not an initializer's: left alone */
    ir_op_settle(op);
    ir_op_set_input(op, "ValueTensor", NULL, 0);
    char *before = names_of(op);
    pdt_hash_order_startup(NULL, p, 108);
    char *after = names_of(op);
    ck_assert_str_eq(before, after);
    g_free(before);
    g_free(after);
    ir_program_free(p);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("hash_order_startup");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, startup_fill_constant_takes_rec_join_order);
    tcase_add_test(tc, startup_fill_constant_fleetx_is_one_history);
    tcase_add_test(tc, device_guarded_accumulator_gives_op_device);
    suite_add_tcase(s, tc);
    return s;
}
