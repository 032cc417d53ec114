/* test_options.c - the option tables (src/passes/options.h) and the parser
 * that drives from them (src/cli/optparse.c): every option is well formed,
 * declared once, documented in the man page and shown by `pdtrans passes
 * --help PASS`; the parser stores values, refuses bad ones, and reads pass
 * options from the pipeline text. */
#include <glib.h>
#include <stdlib.h>

#include "cli/optparse.h"
#include "passes/pass.h"
#include "unit.h"

static char *read_text(const char *path)
{
    char *text = NULL;
    ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "cannot read %s", path);
    return text;
}

/* Calls F on every option of every family. */
#define FOR_EACH_OPTION(fam, opt)                                                  \
    for (size_t f_ = 0; f_ < pdt_n_option_families; f_++)                          \
        for (const pdt_option_family *fam = pdt_option_families[f_]; fam; fam = NULL) \
            for (const pdt_option *opt = fam->opts; opt < fam->opts + fam->n_opts; opt++)

START_TEST(tables_are_well_formed)
{
    size_t n = 0;
    FOR_EACH_OPTION(fam, opt) {
        ck_assert_msg(opt->name && *opt->name && opt->help && *opt->help,
                      "%s: an option without name or help", fam->name);
        bool numeric = opt->type == PDT_OPT_INT || opt->type == PDT_OPT_LONG ||
                       opt->type == PDT_OPT_ULONG;
        ck_assert_msg(!numeric || opt->min <= opt->max, "--%s: empty range", opt->name);
        ck_assert_msg(opt->type != PDT_OPT_CHOICE || opt->choices, "--%s: no choices", opt->name);
        ck_assert_msg(opt->type != PDT_OPT_CUSTOM || opt->set, "--%s: no setter", opt->name);
        ck_assert_msg(pdt_option_takes_value(opt) == (opt->meta != NULL),
                      "--%s: a value option needs a META for --help, a flag none", opt->name);
        /* The passes it names exist. */
        gchar **passes = g_strsplit(opt->passes ? opt->passes : "", " ", -1);
        for (gchar **p = passes; *p; p++)
            ck_assert_msg(!**p || pdt_pass_find(*p), "--%s: unknown pass '%s'", opt->name, *p);
        g_strfreev(passes);
        n++;
    }
    ck_assert_uint_gt(n, 30);
}
END_TEST

/* One option, one place: no two families declare the same name. */
START_TEST(each_option_is_declared_once)
{
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    FOR_EACH_OPTION(fam, opt) {
        ck_assert_msg(!g_hash_table_contains(seen, opt->name), "--%s declared twice", opt->name);
        g_hash_table_add(seen, (gpointer)opt->name);
    }
    g_hash_table_destroy(seen);
}
END_TEST

/* Defaults come from the tables, and each one is a value the option takes. */
START_TEST(defaults_come_from_the_tables)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ck_assert_int_eq(ctx.transpile.min_block_size, 8192);
    ck_assert_int_eq(ctx.transpile.nccl_comm_num, 1);
    ck_assert(ctx.transpile.slice_var_up);
    ck_assert_int_eq(ctx.transpile.runtime.rpc_get_threads, 12);
    ck_assert_int_eq(ctx.transpile.runtime.selected_gpus, 8);
    ck_assert_int_eq(ctx.transpile.runtime.loss_scale, 1);
    FOR_EACH_OPTION(fam, opt)
        if (opt->def && opt->type != PDT_OPT_UNSET)
            ck_assert_msg(pdt_option_set(pdt_family_base(fam, &ctx), opt, opt->def, "t"),
                          "--%s: default '%s' refused", opt->name, opt->def);
    pdt_ctx_free(&ctx);
}
END_TEST

/* Whether TEXT has "Fl \-NAME" not followed by more of a name ("Fl \-skip"
 * must not be satisfied by "Fl \-skip-grads"). */
static bool documents(const char *text, const char *name)
{
    char *mark = g_strdup_printf("Fl \\-%s", name);
    size_t len = strlen(mark);
    bool found = false;
    for (size_t pos = 0; text[pos] && !found; pos++)
        found = !strncmp(text + pos, mark, len) && !g_ascii_isalnum(text[pos + len]) &&
                text[pos + len] != '-';
    g_free(mark);
    return found;
}

/* The man page documents every option of the tables. */
START_TEST(man_page_documents_every_option)
{
    char *man = read_text("man/pdtrans.1");
    FOR_EACH_OPTION(fam, opt)
        ck_assert_msg(documents(man, opt->name), "man/pdtrans.1 does not document --%s",
                      opt->name);
    g_free(man);
}
END_TEST

/* Whether a --help text has an option line for --NAME ("  -x, --NAME" or
 * "      --NAME": the dashes at column 6, then "=", " ", a newline or, for
 * an optional value, "[="; a mention in a help text is not). */
static bool lists(const char *help, const char *name)
{
    char *mark = g_strdup_printf(" --%s", name);
    size_t len = strlen(mark);
    bool found = false;
    for (size_t pos = 6; help[pos] && !found; pos++)
        found = !strncmp(help + pos, mark, len) && strchr("= \n[", help[pos + len]) &&
                help[pos - 6] == '\n';
    g_free(mark);
    return found;
}

/* `pdtrans passes --help PASS` lists what the tables say PASS reads. */
START_TEST(passes_help_lists_each_pass_option)
{
    const char *bin = getenv("PDT_BIN");
    if (!bin) {
        unit_skip("PDT_BIN unset (make unit sets it); passes --help not checked");
        return;
    }
    for (size_t i = 0; i < pdt_n_passes; i++) {
        const char *pass = pdt_passes[i].name;
        char *cmd = g_strdup_printf("%s passes --help %s", bin, pass);
        char *out = NULL;
        int status = -1;
        ck_assert(g_spawn_command_line_sync(cmd, &out, NULL, &status, NULL));
        ck_assert_int_eq(status, 0);
        FOR_EACH_OPTION(fam, opt) {
            ck_assert_msg(lists(out, opt->name) == pdt_option_for_pass(opt, pass),
                          "passes --help %s: --%s", pass, opt->name);
        }
        g_free(out);
        g_free(cmd);
    }
}
END_TEST

static int parse(cli_spec *s, pdt_ctx *ctx, const char *const *args)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *)"t";
    for (; *args; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    *s = (cli_spec){.cmd = "t", .usage = ""};
    cli_family(s, &pdt_family_transpile, ctx, NULL, NULL);
    cli_family(s, &pdt_family_backward, ctx, "append_backward", NULL);
    return cli_parse(s, argc, argv);
}

START_TEST(parser_stores_and_refuses)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    cli_spec s;
    static const char *const good[] = {"--min-block-size=16384", "--role", "pserver",
                                       "--no-grad=a,b", "--async", "--no-slice", "x", NULL};
    ck_assert_int_eq(parse(&s, &ctx, good), PDT_OK);
    ck_assert_int_eq(ctx.transpile.min_block_size, 16384);
    ck_assert_int_eq(ctx.transpile.role, PDT_ROLE_PSERVER);
    ck_assert_int_eq(ctx.transpile.sync_mode, PDT_ASYNC);
    ck_assert(!ctx.transpile.slice_var_up);
    ck_assert_uint_eq(ctx.backward.no_grad.n, 2);
    ck_assert(cli_given(&s, "role") && !cli_given(&s, "mode"));
    ck_assert_int_eq(optind, 7);    /* "x", the operand */
    static const char *const bad[][3] = {
        {"--min-block-size=8191", NULL}, {"--role=chief", NULL}, {"--sync", "--async", NULL},
        {"--trainers=", NULL}, {"--checkpoints", NULL}, {"--targets=a", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(parse(&s, &ctx, bad[i]) == PDT_EUSAGE, "%s accepted", bad[i][0]);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(pipeline_text_sets_pass_options)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    cli_spec s;
    static const char *const none[] = {NULL};
    ck_assert_int_eq(parse(&s, &ctx, none), PDT_OK);
    pdt_list names;
    ck_assert_int_eq(cli_parse_pipeline(&s, &ctx, "append_backward{loss=l;no-grad=a,b},,"
                                        "transpile{pservers=h:1,h:2;no-slice}", &names),
                     PDT_OK);
    ck_assert_uint_eq(names.n, 2);
    ck_assert_str_eq(names.items[1], "transpile");
    ck_assert_str_eq(ctx.backward.loss, "l");
    ck_assert_uint_eq(ctx.backward.no_grad.n, 2);
    ck_assert_uint_eq(ctx.transpile.pservers.n, 2);
    ck_assert(!ctx.transpile.slice_var_up);
    ck_assert(cli_given(&s, "pservers"));
    pdt_list_free(&names);
    /* A transpile pass takes the options it reads, and only those. */
    ck_assert_int_eq(cli_parse_pipeline(&s, &ctx, "find_optimize{async},split_vars{min-block-size="
                                        "16384;split-method=hash}", &names), PDT_OK);
    ck_assert_int_eq(ctx.transpile.min_block_size, 16384);
    ck_assert_int_eq(ctx.transpile.split_method, PDT_SPLIT_HASH);
    ck_assert_int_eq(ctx.transpile.sync_mode, PDT_ASYNC);
    pdt_list_free(&names);
    static const char *const bad[] = {"transpile{loss=l}", "transpile{pservers}",
                                      "transpile{no-slice=1}", "transpile{role=x}",
                                      "transpile{role=all", "x{a=1}",
                                      "split_vars{role=trainer}", "delete_optimizer{no-slice}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_msg(cli_parse_pipeline(&s, &ctx, bad[i], &names) == PDT_EUSAGE, "%s", bad[i]);
        pdt_list_free(&names);
    }
    pdt_ctx_free(&ctx);
}
END_TEST

/* An optional value (--geo[=PUSH_NUMS]): left out, given, or in the
 * pipeline text either way; the two spellings of one setting exclude
 * each other. */
START_TEST(optional_value_options)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    cli_spec s;
    static const char *const bare[] = {"--geo", "x", NULL};
    ck_assert_int_eq(parse(&s, &ctx, bare), PDT_OK);
    ck_assert_int_eq(ctx.transpile.geo_push_nums, 100);
    ck_assert_int_eq(optind, 2);    /* "x" is the operand, not --geo's value */
    pdt_ctx_free(&ctx);
    pdt_ctx_init(&ctx);
    static const char *const given[] = {"--geo=5", NULL};
    ck_assert_int_eq(parse(&s, &ctx, given), PDT_OK);
    ck_assert_int_eq(ctx.transpile.geo_push_nums, 5);
    pdt_ctx_free(&ctx);
    pdt_ctx_init(&ctx);
    static const char *const k[] = {"--a-sync-k-steps=7", NULL};
    ck_assert_int_eq(parse(&s, &ctx, k), PDT_OK);
    ck_assert_int_eq(ctx.transpile.geo_push_nums, 7);
    ck_assert_str_eq(ctx.transpile.given.geo_flag, "--a-sync-k-steps");
    pdt_ctx_free(&ctx);
    static const char *const bad[][3] = {{"--geo=0", NULL}, {"--a-sync-k-steps", NULL},
                                         {"--geo=2", "--a-sync-k-steps=2", NULL},
                                         {"--geo=", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pdt_ctx_init(&ctx);
        ck_assert_msg(parse(&s, &ctx, bad[i]) == PDT_EUSAGE, "%s accepted", bad[i][0]);
        pdt_ctx_free(&ctx);
    }
    pdt_ctx_init(&ctx);
    static const char *const none[] = {NULL};
    ck_assert_int_eq(parse(&s, &ctx, none), PDT_OK);
    pdt_list names;
    ck_assert_int_eq(cli_parse_pipeline(&s, &ctx, "find_optimize{geo}", &names), PDT_OK);
    ck_assert_int_eq(ctx.transpile.geo_push_nums, 100);
    pdt_list_free(&names);
    pdt_ctx_free(&ctx);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, tables_are_well_formed);
    tcase_add_test(tc, each_option_is_declared_once);
    tcase_add_test(tc, defaults_come_from_the_tables);
    tcase_add_test(tc, man_page_documents_every_option);
    tcase_add_test(tc, passes_help_lists_each_pass_option);
    tcase_add_test(tc, parser_stores_and_refuses);
    tcase_add_test(tc, pipeline_text_sets_pass_options);
    tcase_add_test(tc, optional_value_options);
    suite_add_tcase(s, tc);
    return s;
}
