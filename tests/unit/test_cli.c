/* test_cli.c - the command line's shared checks: endpoints (through the
 * transpile family's validate()), the record of environment values, and
 * --from-env's reading of both Paddle generations. */
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/transpile_cli.h"
#include "unit.h"

/* The transpile family's validate() takes HOST:PORT endpoints only. */
static int validate_pservers(const char *eps)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.transpile.pservers = pdt_list_split(eps);
    int rc = pdt_family_transpile.validate(&ctx, "t");
    pdt_ctx_free(&ctx);
    return rc;
}

START_TEST(endpoints_are_host_and_port)
{
    static const char *const good[] = {"127.0.0.1:1", "h:65535", "[::1]:6170", "a.b-c:80"};
    static const char *const bad[] = {"127.0.0.1", "h:0", "h:65536", ":80", "h:", "h:+80",
                                      "h: 80", "h:8x", "h:000080", "", "h:1,h:1"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        ck_assert_msg(validate_pservers(good[i]) == PDT_OK, "%s refused", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(validate_pservers(bad[i]) == PDT_EUSAGE, "%s accepted", bad[i]);
}
END_TEST

/* Each variable read is recorded once, in first-read order; unset and
 * empty ones are not. */
START_TEST(run_records_each_value_taken_once)
{
    cli_run r;
    cli_run_init(&r);
    setenv("PDT_TEST_A", "1", 1);
    setenv("PDT_TEST_EMPTY", "", 1);
    unsetenv("PDT_TEST_UNSET");
    ck_assert_str_eq(cli_run_getenv(&r, "PDT_TEST_A"), "1");
    ck_assert_ptr_null(cli_run_getenv(&r, "PDT_TEST_EMPTY"));
    ck_assert_ptr_null(cli_run_getenv(&r, "PDT_TEST_UNSET"));
    ck_assert_str_eq(cli_run_getenv(&r, "PDT_TEST_A"), "1");
    const pdt_run_info *info = cli_run_info(&r, NULL, 0);
    ck_assert_uint_eq(info->env_names.n, 1);
    ck_assert_str_eq(info->env_names.items[0], "PDT_TEST_A");
    ck_assert_str_eq(info->env_values.items[0], "1");
    ck_assert_str_eq(info->version, PDT_VERSION);
    cli_run_free(&r);
    unsetenv("PDT_TEST_A");
    unsetenv("PDT_TEST_EMPTY");
}
END_TEST

static const char *const LAUNCH_VARS[] = {
    "PADDLE_TRAINING_ROLE", "TRAINING_ROLE", "PADDLE_PSERVER_ENDPOINTS", "PADDLE_PSERVER_IPS",
    "PADDLE_PSERVER_PORT", "PADDLE_PSERVERS_IP_PORT_LIST", "PADDLE_TRAINERS",
    "PADDLE_TRAINERS_NUM", "PADDLE_TRAINER_ID", "PADDLE_CURRENT_ENDPOINT", "PADDLE_CURRENT_IP",
    "POD_IP", "PADDLE_PORT", "FLAGS_rpc_send_thread_num", "FLAGS_rpc_get_thread_num",
    "FLAGS_rpc_prefetch_thread_num"};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof LAUNCH_VARS / sizeof *LAUNCH_VARS; i++)
        unsetenv(LAUNCH_VARS[i]);
}

/* Runs --from-env resolution in pserver mode on the current environment. */
static int resolve(pdt_ctx *ctx, tcli_opts *o)
{
    pdt_ctx_init(ctx);
    *o = (tcli_opts){.ctx = ctx};
    cli_run_init(&o->run);
    int rc = tcli_from_env(o);
    return rc ? rc : pdt_family_transpile.validate(ctx, "t");
}

static void release(pdt_ctx *ctx, tcli_opts *o)
{
    cli_run_free(&o->run);
    pdt_ctx_free(ctx);
}

START_TEST(paddle2_pserver_from_pod_ip_and_port)
{
    clear_env();
    setenv("TRAINING_ROLE", "PSERVER", 1);
    setenv("PADDLE_PSERVERS_IP_PORT_LIST", "10.0.0.1:6170,10.0.0.2:6170", 1);
    setenv("PADDLE_TRAINERS_NUM", "3", 1);
    setenv("POD_IP", "10.0.0.2", 1);
    setenv("PADDLE_PORT", "6170", 1);
    setenv("FLAGS_rpc_get_thread_num", "5", 1);
    pdt_ctx ctx;
    tcli_opts o;
    ck_assert_int_eq(resolve(&ctx, &o), PDT_OK);
    ck_assert_int_eq(ctx.transpile.role, PDT_ROLE_PSERVER);
    ck_assert_uint_eq(ctx.transpile.pservers.n, 2);
    ck_assert_str_eq(ctx.transpile.endpoint, "10.0.0.2:6170");
    ck_assert_int_eq(ctx.transpile.trainers, 3);
    ck_assert_int_eq(ctx.transpile.runtime.rpc_get_threads, 5);
    ck_assert_int_eq(ctx.transpile.runtime.rpc_send_threads, 12);
    /* Five launcher variables and the one FLAGS value were taken. */
    ck_assert_uint_eq(o.run.env_names->len, 6);
    release(&ctx, &o);
    clear_env();
}
END_TEST

/* The same setting under both generations: equal values are one setting,
 * different ones bad input (exit 1: the launcher's environment is input). */
START_TEST(generations_must_agree)
{
    clear_env();
    setenv("PADDLE_TRAINING_ROLE", "TRAINER", 1);
    setenv("TRAINING_ROLE", "TRAINER", 1);
    setenv("PADDLE_PSERVER_IPS", "10.0.0.1,10.0.0.2", 1);
    setenv("PADDLE_PSERVER_PORT", "6174", 1);
    setenv("PADDLE_PSERVERS_IP_PORT_LIST", "10.0.0.1:6174,10.0.0.2:6174", 1);
    setenv("PADDLE_TRAINERS", "02", 1);
    setenv("PADDLE_TRAINERS_NUM", "2", 1);
    setenv("PADDLE_TRAINER_ID", "1", 1);
    pdt_ctx ctx;
    tcli_opts o;
    ck_assert_int_eq(resolve(&ctx, &o), PDT_OK);
    ck_assert_int_eq(ctx.transpile.trainer_id, 1);
    ck_assert_int_eq(ctx.transpile.trainers, 2);
    release(&ctx, &o);
    setenv("PADDLE_PSERVERS_IP_PORT_LIST", "10.0.0.1:6174", 1);
    ck_assert_int_eq(resolve(&ctx, &o), PDT_EBADINPUT);
    release(&ctx, &o);
    setenv("PADDLE_PSERVERS_IP_PORT_LIST", "10.0.0.1:6174,10.0.0.2:6174", 1);
    setenv("TRAINING_ROLE", "PSERVER", 1);
    ck_assert_int_eq(resolve(&ctx, &o), PDT_EBADINPUT);
    release(&ctx, &o);
    clear_env();
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, endpoints_are_host_and_port);
    tcase_add_test(tc, run_records_each_value_taken_once);
    tcase_add_test(tc, paddle2_pserver_from_pod_ip_and_port);
    tcase_add_test(tc, generations_must_agree);
    suite_add_tcase(s, tc);
    return s;
}
