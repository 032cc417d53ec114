/* test_analysis.c - the pass manager's analyses (issue 28 point 2): a pass
 * that requires an analysis none has made gets it from the analysis's
 * create hook, built by the manager; pdt_analysis_get builds and caches,
 * pdt_analysis_cached never builds; a failing build caches nothing. */
#include <glib.h>

#include "cli/cli.h"
#include "io/pdio.h"
#include "passes/pass.h"
#include "unit.h"
#include "transpile_fixture.h"

static const char *BASIC = "tests/golden/transpile_basic/in/main.pbtxt";
static const char *BASIC_STARTUP = "tests/golden/transpile_basic/in/startup.pbtxt";

/* The transpile passes after find_optimize: split_vars requires the plan. */
static const char *const WITHOUT_FIND[] = {"split_vars", "build_pserver",
                                           "build_pserver_startup", "insert_send_recv",
                                           "delete_optimizer"};

START_TEST(required_plan_is_built_by_the_manager)
{
    pdt_ctx plain, ctx;
    tpf_load(&plain, BASIC, BASIC_STARTUP);
    ck_assert_int_eq(pass_transpile(&plain), PDT_OK);
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    ck_assert_ptr_null(pdt_analysis_cached(&ctx, PDT_AN_transpile_plan));
    ck_assert_int_eq(pdt_run_members(&ctx, WITHOUT_FIND, G_N_ELEMENTS(WITHOUT_FIND)), PDT_OK);
    /* what find_optimize would have made: the same programs and manifest */
    ck_assert_uint_eq(ctx.n_outputs, plain.n_outputs);
    ck_assert_uint_eq(ctx.n_outputs, 6);
    for (size_t i = 0; i < ctx.n_outputs; i++) {
        ck_assert_str_eq(ctx.outputs[i].stem, plain.outputs[i].stem);
        size_t n1 = 0, n2 = 0;
        char *a = (char *)pdio_serialize(ctx.outputs[i].program, true, &n1);
        char *b = (char *)pdio_serialize(plain.outputs[i].program, true, &n2);
        ck_assert_str_eq(a, b);
        free(a);
        free(b);
    }
    ck_assert_ptr_nonnull(ctx.manifest);
    char *m1 = cli_manifest_json(ctx.manifest, NULL), *m2 = cli_manifest_json(plain.manifest, NULL);
    ck_assert_str_eq(m1, m2);
    g_free(m1);
    g_free(m2);
    pdt_ctx_free(&ctx);
    pdt_ctx_free(&plain);
}
END_TEST

START_TEST(get_builds_once_and_caches)
{
    pdt_ctx ctx;
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    void *a = pdt_analysis_get(&ctx, PDT_AN_transpile_plan);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_eq(pdt_analysis_cached(&ctx, PDT_AN_transpile_plan), a);
    ck_assert_ptr_eq(pdt_analysis_get(&ctx, PDT_AN_transpile_plan), a);
    pdt_analysis_drop(&ctx, PDT_AN_transpile_plan, false);
    ck_assert_ptr_null(pdt_analysis_cached(&ctx, PDT_AN_transpile_plan));
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(failed_build_caches_nothing)
{
    pdt_ctx ctx;
    tpf_load(&ctx, BASIC, BASIC_STARTUP);
    ir_program_free(ctx.main);
    ctx.main = ir_program_new();    /* no blocks: the plan's build refuses it */
    ck_assert_ptr_null(pdt_analysis_get(&ctx, PDT_AN_transpile_plan));
    ck_assert_ptr_null(pdt_analysis_cached(&ctx, PDT_AN_transpile_plan));
    ck_assert_int_eq(pdt_analysis_fresh(&ctx, PDT_AN_transpile_plan), PDT_EBADINPUT);
    ck_assert_int_eq(pdt_run_members(&ctx, WITHOUT_FIND, 1), PDT_EBADINPUT);
    ck_assert_uint_eq(ctx.n_outputs, 0);
    pdt_ctx_free(&ctx);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("analysis");
    TCase *t = tcase_create("core");
    tcase_add_test(t, required_plan_is_built_by_the_manager);
    tcase_add_test(t, get_builds_once_and_caches);
    tcase_add_test(t, failed_build_caches_nothing);
    suite_add_tcase(s, t);
    return s;
}
