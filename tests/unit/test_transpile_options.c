/* test_transpile_options.c - every transpile option lists the passes that
 * read it (src/passes/transpile/options.c), so that `pdtrans passes --help
 * PASS` and PASS{KEY=VALUE} offer what PASS uses.  For each scenario, pass P
 * and transpile option O whose `passes` does not name P, the scenario runs
 * again with O changed while P alone runs: the programs built must stay the
 * same.  A pass that reads an option it does not list changes them (or
 * fails), and the test names both.  Witness pairs, options that are listed
 * and do change the programs, show that the comparison can tell. */
#include <glib.h>
#include <string.h>

#include "io/pdio.h"
#include "passes/pass.h"
#include "passes/transpile/builders.h"
#include "unit.h"

typedef struct {
    const char *name;
    const char *main, *startup;
    const char *settings[12];   /* "option=value" or "flag", through the table */
} scenario;

#define BASIC "tests/golden/transpile_basic/in/"
#define COLL "tests/golden/transpile_collective/in/"
#define TABLE "tests/golden/transpile_dist_table/in/"
#define GEO_SPARSE "tests/golden/transpile_geo_sparse/in/"
#define PS "pservers=127.0.0.1:6174,127.0.0.1:6175"

static const scenario scenarios[] = {
    {"sync", BASIC "main.pbtxt", BASIC "startup.pbtxt", {PS, "trainers=2"}},
    {"async pserver", BASIC "main.pbtxt", BASIC "startup.pbtxt",
     {PS, "trainers=2", "async", "dc-asgd", "no-slice", "random-seed=7", "role=pserver",
      "endpoint=127.0.0.1:6175"}},
    {"half-async trainer", BASIC "main.pbtxt", BASIC "startup.pbtxt",
     {PS, "trainers=3", "trainer-id=2", "half-async", "role=trainer", "split-method=balanced"}},
    {"table", TABLE "main.pbtxt", TABLE "startup.pbtxt", {PS, "trainers=2", "trainer-id=1"}},
    {"geo", BASIC "main.pbtxt", BASIC "startup.pbtxt", {PS, "trainers=2", "geo=3"}},
    {"geo sparse trainer", GEO_SPARSE "two.pbtxt", GEO_SPARSE "two.startup.pbtxt",
     {PS, "trainers=3", "trainer-id=1", "a-sync-k-steps=2", "role=trainer",
      "split-method=hash"}},
    {"geo pserver", GEO_SPARSE "two.pbtxt", GEO_SPARSE "two.startup.pbtxt",
     {PS, "trainers=2", "geo", "async", "role=pserver", "endpoint=127.0.0.1:6175",
      "min-block-size=65536"}},
    {"nccl2", BASIC "main.pbtxt", BASIC "startup.pbtxt",
     {"mode=nccl2", "trainers=h:1,h:2,h:3,h:4", "endpoint=h:2", "trainer-id=1",
      "nccl-comm-num=2", "hierarchical-allreduce", "hierarchical-inter-nranks=2"}},
    {"grad_allreduce", COLL "main.pbtxt", COLL "startup.pbtxt",
     {"mode=collective", "collective-mode=grad_allreduce", "trainers=h:1,h:2", "endpoint=h:2",
      "trainer-id=1", "nccl-comm-num=2"}},
    {"spmt", COLL "main.pbtxt", COLL "startup.pbtxt",
     {"mode=collective", "collective-mode=single_process_multi_thread", "trainers=h:1",
      "endpoint=h:1", "selected-gpus=0,1", "loss-scale=0"}},
};

static void apply(pdt_ctx *ctx, const scenario *sc)
{
    for (const char *const *s = sc->settings; *s; s++) {
        const char *eq = strchr(*s, '=');
        char *name = eq ? g_strndup(*s, (size_t)(eq - *s)) : g_strdup(*s);
        const pdt_option *opt = pdt_option_find(&pdt_family_transpile, name);
        ck_assert_msg(opt, "%s: no option '%s'", sc->name, name);
        ck_assert(pdt_option_set(&ctx->transpile, opt, eq ? eq + 1 : NULL, "t"));
        g_free(name);
    }
    ck_assert_int_eq(pdt_family_transpile.validate(ctx, "t"), PDT_OK);
}

/* Another value of OPT's field, valid for its type; lists it allocates go
 * to `owned` (freed after the run: a pass may keep pointers into them). */
static void perturb(pdt_transpile_opts *o, const pdt_option *opt, GPtrArray *owned)
{
    void *field = (char *)o + opt->offset;
    int *i = field;
    int n_choices = 0;
    switch (opt->type) {
    case PDT_OPT_FLAG:
    case PDT_OPT_UNSET: *(bool *)field = !*(bool *)field; return;
    case PDT_OPT_ENUM_FLAG: *i = *i == opt->value ? (opt->value + 1) % 3 : opt->value; return;
    case PDT_OPT_INT: *i = *i == opt->min ? (int)opt->min + 1 : (int)opt->min; return;
    case PDT_OPT_LONG: *(long *)field = *(long *)field == opt->min ? opt->max : opt->min;
        return;
    case PDT_OPT_ULONG: *(unsigned long *)field += 1; return;
    case PDT_OPT_CHOICE:
        while (opt->choices[n_choices])
            n_choices++;
        *i = (*i - opt->value + 1) % n_choices + opt->value;
        return;
    case PDT_OPT_CUSTOM:
        if (strcmp(opt->name, "pservers") != 0) {       /* --selected-gpus: a count */
            *i = *i == 2 ? 8 : 2;
            return;
        }
        /* --pservers sets its list (and its text) */
        __attribute__((fallthrough));
    case PDT_OPT_LIST: {                                /* --pservers: reversed */
        pdt_list *l = field, r = {l->n, g_new(const char *, l->n + 1)};
        for (size_t k = 0; k < l->n; k++)
            r.items[k] = l->items[l->n - 1 - k];
        g_ptr_array_add(owned, r.items);
        *l = r;
        return;
    }
    case PDT_OPT_STRING: break;
    }
    if (!strcmp(opt->name, "trainers")) {   /* one trainer more, resolved as validate does */
        pdt_list *l = &o->trainer_endpoints, r = {l->n + 1, g_new(const char *, l->n + 2)};
        if (l->n)
            memcpy(r.items, l->items, l->n * sizeof *r.items);
        r.items[l->n] = ir_intern("h:9");
        g_ptr_array_add(owned, r.items);
        *l = r;
        o->trainers++;
        return;
    }
    /* --endpoint: another endpoint of the job. */
    const pdt_list *eps = o->pservers.n ? &o->pservers : &o->trainer_endpoints;
    for (size_t k = 0; k < eps->n; k++)
        if (eps->items[k] != o->endpoint) {
            *(const char **)field = eps->items[k];
            break;  /* the field is o->endpoint: later items would compare with the new value */
        }
}

/* The scenario's programs as text (or its failure), with OPT changed
 * while pass AT runs (OPT NULL: unchanged). */
static char *run(const scenario *sc, const char *at, const pdt_option *opt)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.main = pdio_read(sc->main);
    ctx.startup = pdio_read(sc->startup);
    ck_assert(ctx.main && ctx.startup);
    apply(&ctx, sc);
    GPtrArray *owned = g_ptr_array_new_with_free_func(g_free);
    size_t n = 0;
    const char *const *names = members_transpile(&ctx, &n);
    int rc = PDT_OK;
    for (size_t k = 0; k < n && rc == PDT_OK; k++) {
        pdt_transpile_opts saved = ctx.transpile;
        bool changed = opt && !strcmp(names[k], at);
        if (changed)
            perturb(&ctx.transpile, opt, owned);
        rc = pdt_pass_find(names[k])->run(&ctx);
        if (changed)
            ctx.transpile = saved;
    }
    GString *out = g_string_new(NULL);
    g_string_append_printf(out, "status %d\n", rc);
    for (size_t k = 0; k < ctx.n_staged && rc == PDT_OK; k++) {
        size_t len = 0;
        uint8_t *text = pdio_serialize(ctx.staged[k].program, true, &len);
        g_string_append_printf(out, "%s:\n", ctx.staged[k].stem);
        g_string_append_len(out, (const char *)text, (gssize)len);
        free(text);
    }
    pdt_ctx_free(&ctx);
    g_ptr_array_free(owned, TRUE);
    return g_string_free(out, FALSE);
}

static const struct {
    const char *scenario, *pass, *option;
} witnesses[] = {
    {"sync", "split_vars", "min-block-size"},
    {"sync", "split_vars", "split-method"},
    {"sync", "build_pserver", "rpc-get-threads"},
    {"async pserver", "build_pserver", "dc-asgd"},
    {"half-async trainer", "insert_send_recv", "trainer-id"},
    {"geo", "geo_pserver", "rpc-get-threads"},
    {"geo", "split_vars", "split-method"},
    {"geo sparse trainer", "geo_trainer", "trainer-id"},
    {"geo pserver", "geo_pserver", "endpoint"},
    {"nccl2", "nccl2", "nccl-comm-num"},
    {"spmt", "collective", "loss-scale"},
};

static bool is_witness(const scenario *sc, const char *pass, const pdt_option *opt)
{
    for (size_t i = 0; i < sizeof witnesses / sizeof *witnesses; i++)
        if (!strcmp(witnesses[i].scenario, sc->name) && !strcmp(witnesses[i].pass, pass) &&
            !strcmp(witnesses[i].option, opt->name))
            return true;
    return false;
}

START_TEST(each_pass_lists_the_options_it_reads)
{
    size_t checked = 0, witnessed = 0;
    for (size_t s = 0; s < sizeof scenarios / sizeof *scenarios; s++) {
        const scenario *sc = &scenarios[s];
        char *base = run(sc, NULL, NULL);
        ck_assert_msg(g_str_has_prefix(base, "status 0\n"), "%s: %s", sc->name, base);
        pdt_ctx mode;
        pdt_ctx_init(&mode);
        apply(&mode, sc);
        size_t n = 0;
        const char *const *names = members_transpile(&mode, &n);
        for (size_t k = 0; k < n; k++) {
            for (size_t i = 0; i < pdt_family_transpile.n_opts; i++) {
                const pdt_option *opt = &pdt_family_transpile.opts[i];
                bool listed = pdt_option_for_pass(opt, names[k]);
                if (listed && !is_witness(sc, names[k], opt))
                    continue;
                char *got = run(sc, names[k], opt);
                bool same = !strcmp(got, base);
                ck_assert_msg(listed || same, "%s: pass '%s' reads --%s, which does not list it",
                              sc->name, names[k], opt->name);
                ck_assert_msg(!listed || !same, "%s: witness --%s of pass '%s' changed nothing",
                              sc->name, opt->name, names[k]);
                checked += !listed;
                witnessed += listed;
                g_free(got);
            }
        }
        pdt_ctx_free(&mode);
        g_free(base);
    }
    ck_assert_uint_eq(witnessed, sizeof witnesses / sizeof *witnesses);
    ck_assert_uint_gt(checked, 100);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("transpile_options");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, each_pass_lists_the_options_it_reads);
    suite_add_tcase(s, tc);
    return s;
}
