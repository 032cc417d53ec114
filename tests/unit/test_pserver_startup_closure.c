/* test_pserver_startup_closure.c - a pserver's startup copies the startup
 * ops a held initializer op reads from (build_pserver_startup.c copy_set,
 * research-2x-3x.md 4z11): get_startup_program raises KeyError on such an
 * input (distribute_transpiler.py _get_input_map_from_op, v1.4.1-v2.3.2).
 * The input: golden paddle_version_pstart_initializers' (fc_w by 2.3's
 * Orthogonal, fc_b by Dirac). */
#include <string.h>

#include "unit.h"
#include "transpile_fixture.h"

static const char *MAIN = "testdata/momentum_main.pbtxt";
static const char *STARTUP = "tests/golden/paddle_version_pstart_initializers/in/startup.pbtxt";

START_TEST(whole_params_bring_their_temporaries)
{
    pdt_ctx ctx;
    tpf_load(&ctx, MAIN, STARTUP);
    ctx.transpile.slice_var_up = false;
    ck_assert_int_eq(pass_transpile(&ctx), PDT_OK);
    /* --no-slice, round robin: fc_w on pserver 0, fc_b on pserver 1 */
    const ir_block *s0 = tpf_output(&ctx, "pserver_0.startup")->blocks[0];
    const ir_block *s1 = tpf_output(&ctx, "pserver_1.startup")->blocks[0];
    static const char *const orth[] = {"gaussian_random", "qr", "diag_v2", "sign",
                                       "elementwise_mul", "reshape2", "scale"};
    for (size_t i = 0; i < sizeof orth / sizeof *orth; i++)
        ck_assert_uint_eq(tpf_count_ops(s0, orth[i]), 1);
    ck_assert_uint_eq(tpf_count_ops(s1, "assign_value"), 2);
    ck_assert_uint_eq(tpf_count_ops(s1, "scatter"), 1);
    ck_assert_uint_eq(tpf_count_ops(s1, "reshape"), 2);
    ck_assert_uint_eq(tpf_count_ops(s0, "scatter") + tpf_count_ops(s1, "qr"), 0);
    /* the temporaries are declared where they are written */
    ck_assert_ptr_nonnull(ir_block_find_var(s0, "qr.r.tmp_0"));
    ck_assert_ptr_nonnull(ir_block_find_var(s0, "transpose.shape.tmp_0"));
    ck_assert_ptr_nonnull(ir_block_find_var(s1, "scatter_index_0"));
    ck_assert_ptr_null(ir_block_find_var(s1, "qr.q.tmp_0"));
    /* gaussian_random is not held: its shape is the source's, not reset */
    const ir_attr *shape = ir_op_attr(tpf_find_op(s0, "gaussian_random", 0), "shape");
    ck_assert(shape && shape->type == IR_ATTR_LONGS && shape->n_longs == 2);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(a_slice_computed_from_temporaries_is_refused)
{
    pdt_ctx ctx;
    tpf_load(&ctx, MAIN, STARTUP);
    ctx.transpile.slice_var_up = true;
    ck_assert_int_eq(pass_transpile(&ctx), PDT_EBADINPUT);
    ck_assert_ptr_null(tpf_output(&ctx, "pserver_0.startup"));
    pdt_ctx_free(&ctx);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("pserver_startup_closure");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, whole_params_bring_their_temporaries);
    tcase_add_test(tc, a_slice_computed_from_temporaries_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
