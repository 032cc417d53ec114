/* options.c - the one setter behind every option, the family registry, and
 * the run settings (options of the pipeline, not of one pass). */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../progress.h"
#include "../suggest.h"
#include "pass.h"
#include "era/era.h"

static bool set_time_passes(void *base, const pdt_option *opt, const char *v, const char *cmd)
{
    (void)base, (void)opt, (void)v, (void)cmd;
    pdt_time_passes = true;
    return true;
}

/* --paddle-version: "auto" or a version pdtrans knows (era/version.c);
 * anything else is refused with the list. */
static bool set_paddle_version(void *base, const pdt_option *opt, const char *v, const char *cmd)
{
    (void)opt;
    if (strcmp(v, "auto") && pdt_era_parse(v) < 0) {
        pdt_usage_error(cmd, "--paddle-version: unknown version '%s' (known: auto, %s)", v,
                        pdt_era_known_list());
        return false;
    }
    ((pdt_ctx *)base)->settings.paddle_version = ir_intern(v);
    return true;
}

static const pdt_option run_options[] = {
    {.name = "no-verify-each", .type = PDT_OPT_FLAG,
     .help = "skip the structural check after each pass",
     .offset = offsetof(pdt_ctx, no_verify_each)},
    {.name = "print-after", .type = PDT_OPT_STRING, .meta = "PASS[,PASS]",
     .help = "print the programs (and, from split_vars on, the transpile plan) to stderr "
             "after these passes",
     .offset = offsetof(pdt_ctx, settings.print_after)},
    {.name = "print-after-all", .type = PDT_OPT_FLAG,
     .help = "print the programs to stderr after every pass",
     .offset = offsetof(pdt_ctx, settings.print_after_all)},
    {.name = "print-ops", .type = PDT_OPT_FLAG,
     .help = "print one line per op instead of the text form",
     .offset = offsetof(pdt_ctx, settings.print_ops)},
    {.name = "stop-after", .type = PDT_OPT_STRING, .meta = "PASS",
     .help = "end the pipeline after PASS and write what exists",
     .offset = offsetof(pdt_ctx, settings.stop_after)},
    {.name = "paddle-version", .type = PDT_OPT_CUSTOM, .set = set_paddle_version,
     .meta = "auto|X.Y", .def = NULL,
     .help = "write the ops pdtrans creates as this Paddle version writes them (auto, the "
             "default: the version that wrote the input, which 'pdtrans check' prints in "
             "its verbose mode)"},
    {.name = "time-passes", .type = PDT_OPT_CUSTOM, .set = set_time_passes,
     .help = "print each pass's time, and the read, check, verify and write times, to "
             "stderr at the end (a run over two seconds shows its progress when stderr is a "
             "terminal; -q silences both)"},
};

const pdt_option_family pdt_family_run = {
    "run", run_options, sizeof run_options / sizeof *run_options, 0, NULL};

const pdt_option_family *const pdt_option_families[] = {
    &pdt_family_run, &pdt_family_backward, &pdt_family_optimizer, &pdt_family_transpile,
    &pdt_family_memory,
};
const size_t pdt_n_option_families =
    sizeof pdt_option_families / sizeof *pdt_option_families;

void *pdt_family_base(const pdt_option_family *f, pdt_ctx *ctx)
{
    return (char *)ctx + f->ctx_offset;
}

const pdt_option *pdt_option_find(const pdt_option_family *f, const char *name)
{
    for (size_t i = 0; i < f->n_opts; i++)
        if (!strcmp(f->opts[i].name, name))
            return &f->opts[i];
    return NULL;
}

static bool lists_pass(const pdt_option *opt, const char *pass)
{
    size_t len = strlen(pass);
    for (const char *p = opt->passes; p && *p; p += strcspn(p, " ")) {
        p += strspn(p, " ");
        if (!strncmp(p, pass, len) && (p[len] == ' ' || p[len] == '\0'))
            return true;
    }
    return false;
}

bool pdt_option_for_pass(const pdt_option *opt, const char *pass)
{
    if (lists_pass(opt, pass))
        return true;
    /* A group reads what any pass it may stand for reads. */
    const pdt_pass *group = pdt_pass_find(pass);
    size_t n = 0;
    const char *const *members = group && group->members ? group->members(NULL, &n) : NULL;
    for (size_t i = 0; i < n; i++)
        if (lists_pass(opt, members[i]))
            return true;
    return false;
}

bool pdt_option_takes_value(const pdt_option *opt)
{
    switch (opt->type) {
    case PDT_OPT_FLAG:
    case PDT_OPT_UNSET:
    case PDT_OPT_ENUM_FLAG:
        return false;
    case PDT_OPT_CUSTOM:
        return opt->meta != NULL;
    default:
        return true;
    }
}

bool pdt_parse_long(const char *cmd, const char *name, const char *s, long min, long max,
                    long *out)
{
    char *end = NULL;
    errno = 0;
    long v = s && *s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || isspace((unsigned char)*s) || *end || errno || v < min || v > max) {
        pdt_usage_error(cmd, "option '%s' needs an integer from %ld to %ld, not '%.200s'", name,
                        min, max, s ? s : "");
        return false;
    }
    *out = v;
    return true;
}

static bool parse_number(const pdt_option *opt, const char *s, const char *cmd, long *out)
{
    char flag[64];
    snprintf(flag, sizeof flag, "--%s", opt->name);
    return pdt_parse_long(cmd, flag, s, opt->min, opt->max, out);
}

static bool parse_choice(const pdt_option *opt, const char *s, const char *cmd, int *out)
{
    for (int i = 0; opt->choices[i]; i++)
        if (!strcmp(s, opt->choices[i])) {
            *out = i + opt->value;
            return true;
        }
    /* Name the values it does accept, and the nearest one. */
    GString *accepted = g_string_new("");
    pdt_near near;
    pdt_near_init(&near, s);
    for (int i = 0; opt->choices[i]; i++) {
        g_string_append_printf(accepted, "%s%s", i == 0 ? "" : opt->choices[i + 1] ? ", "
                                                                                : " or ",
                               opt->choices[i]);
        pdt_near_offer(&near, opt->choices[i]);
    }
    char *hint = pdt_near_hint(&near, "");
    pdt_usage_error(cmd, "option '--%s' does not accept '%s': give %s%s", opt->name, s,
                    accepted->str, hint);
    g_free(hint);
    g_string_free(accepted, TRUE);
    return false;
}

bool pdt_option_set(void *base, const pdt_option *opt, const char *value, const char *cmd)
{
    void *field = (char *)base + opt->offset;
    long n = 0;
    int choice = 0;
    switch (opt->type) {
    case PDT_OPT_FLAG: *(bool *)field = true; return true;
    case PDT_OPT_UNSET: *(bool *)field = false; return true;
    case PDT_OPT_ENUM_FLAG: *(int *)field = opt->value; return true;
    case PDT_OPT_INT:
        if (!parse_number(opt, value, cmd, &n))
            return false;
        *(int *)field = (int)n;
        return true;
    case PDT_OPT_LONG:
        if (!parse_number(opt, value, cmd, &n))
            return false;
        *(long *)field = n;
        return true;
    case PDT_OPT_ULONG:
        if (!parse_number(opt, value, cmd, &n))
            return false;
        *(unsigned long *)field = (unsigned long)n;
        return true;
    case PDT_OPT_STRING: *(const char **)field = ir_intern(value); return true;
    case PDT_OPT_LIST:
        pdt_list_free(field);
        *(pdt_list *)field = pdt_list_split(value);
        return true;
    case PDT_OPT_CHOICE:
        if (!parse_choice(opt, value, cmd, &choice))
            return false;
        *(int *)field = choice;
        return true;
    case PDT_OPT_CUSTOM: return opt->set(base, opt, value, cmd);
    }
    return false;
}

void pdt_options_set_defaults(pdt_ctx *ctx)
{
    for (size_t f = 0; f < pdt_n_option_families; f++) {
        const pdt_option_family *fam = pdt_option_families[f];
        void *base = pdt_family_base(fam, ctx);
        for (size_t i = 0; i < fam->n_opts; i++) {
            const pdt_option *opt = &fam->opts[i];
            if (!opt->def)
                continue;
            if (opt->type == PDT_OPT_UNSET)     /* the field is on until the flag */
                *(bool *)((char *)base + opt->offset) = true;
            else
                pdt_option_set(base, opt, opt->def, NULL);
        }
    }
}
