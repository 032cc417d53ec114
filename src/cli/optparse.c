/* optparse.c - drives getopt_long, --help and --passes from the option
 * tables; the common options (output, startup, text, force, verbosity,
 * help) are declared here. */
#include "optparse.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../progress.h"
#include "../suggest.h"
#include "../ir/util.h"
#include "cli.h"

#define FIELD(f) offsetof(cli_common, f)

static bool set_verbose(void *base, const pdt_option *opt, const char *v, const char *cmd)
{
    (void)base, (void)opt, (void)v, (void)cmd;
    pdt_verbosity++;
    return true;
}

static bool set_quiet(void *base, const pdt_option *opt, const char *v, const char *cmd)
{
    (void)base, (void)opt, (void)v, (void)cmd;
    pdt_quiet_warnings = true;
    return true;
}

/* Never called: cli_parse prints the help when it meets "help". */
static bool set_help(void *base, const pdt_option *opt, const char *v, const char *cmd)
{
    (void)base, (void)opt, (void)v, (void)cmd;
    return true;
}

static const pdt_option common_options[] = {
    {.name = "startup", .short_name = 's', .type = PDT_OPT_STRING, .meta = "FILE",
     .help = "startup program (default: an empty one)", .offset = FIELD(startup)},
    {.name = "output", .short_name = 'o', .type = PDT_OPT_STRING, .meta = "OUT",
     .help = "output file ('-' is stdout)", .offset = FIELD(out)},
    {.name = "out-dir", .short_name = 'o', .type = PDT_OPT_STRING, .meta = "DIR", .def = ".",
     .help = "output FOLDER (not a file; '-' is refused), created if missing",
     .offset = FIELD(out)},
    {.name = "text", .type = PDT_OPT_FLAG, .help = "write protobuf text form (.pbtxt)",
     .offset = FIELD(text)},
    {.name = "force", .short_name = 'f', .type = PDT_OPT_FLAG,
     .help = "write binary output even to a terminal", .offset = FIELD(force)},
    {.name = "verbose", .short_name = 'v', .type = PDT_OPT_CUSTOM, .set = set_verbose,
     .help = "print more: the passes run and what they did"},
    {.name = "quiet", .short_name = 'q', .type = PDT_OPT_CUSTOM, .set = set_quiet,
     .help = "print no warnings or notes (errors still)"},
    {.name = "help", .short_name = 'h', .type = PDT_OPT_CUSTOM, .set = set_help,
     .help = "show this help"},
};

void cli_add(cli_spec *s, cli_group g)
{
    if (s->n_groups == CLI_MAX_GROUPS) {     /* a command's spec is fixed: a bug */
        fprintf(stderr, "BUG: %s: more than %d option groups\n", s->cmd, CLI_MAX_GROUPS);
        abort();
    }
    s->groups[s->n_groups++] = g;
}

void cli_family(cli_spec *s, const pdt_option_family *f, pdt_ctx *ctx, const char *pass,
                const char *except)
{
    cli_add(s, (cli_group){f->opts, f->n_opts, pdt_family_base(f, ctx), pass, NULL, except});
    /* Every command that runs passes takes the run family: its
     * --print-after prints programs with the text form only src/io has. */
    if (f == &pdt_family_run)
        ctx->settings.print_program = cli_print_program;
}

static bool word_in(const char *list, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = list; p && *p; p += strcspn(p, " ")) {
        p += strspn(p, " ");
        if (!strncmp(p, word, len) && (p[len] == ' ' || p[len] == '\0'))
            return true;
    }
    return false;
}

static bool group_takes(const cli_group *g, const pdt_option *opt)
{
    return (!g->pass || pdt_option_for_pass(opt, g->pass)) &&
           (!g->names || word_in(g->names, opt->name)) && !word_in(g->except, opt->name);
}

void cli_common_group(cli_spec *s, cli_common *c, const char *names)
{
    const size_t n = sizeof common_options / sizeof *common_options;
    cli_group g = {common_options, n, c, NULL, names, NULL};
    for (size_t i = 0; i < n; i++)
        if (common_options[i].def && group_takes(&g, &common_options[i]))
            pdt_option_set(c, &common_options[i], common_options[i].def, NULL);
    cli_add(s, g);
}

/* The order of --help: the groups in the order the command added them. */
static void collect(cli_spec *s)
{
    s->n_entries = 0;
    for (size_t g = 0; g < s->n_groups; g++)
        for (size_t i = 0; i < s->groups[g].n && s->n_entries < CLI_MAX_OPTS; i++)
            if (group_takes(&s->groups[g], &s->groups[g].opts[i]))
                s->entries[s->n_entries++] = (cli_entry){&s->groups[g].opts[i],
                                                         s->groups[g].base};
}

static void mark_given(cli_spec *s, const pdt_option *opt)
{
    for (size_t i = 0; i < s->n_given; i++)
        if (s->given[i] == opt)
            return;
    if (s->n_given < CLI_MAX_OPTS)
        s->given[s->n_given++] = opt;
}

bool cli_given(const cli_spec *s, const char *name)
{
    for (size_t i = 0; i < s->n_given; i++)
        if (!strcmp(s->given[i]->name, name))
            return true;
    return false;
}

/* Options that store into one field (--sync, --async, --half-async)
 * choose one value: two different ones contradict each other. */
static bool check_exclusive(const cli_spec *s, const cli_entry *e)
{
    if (e->opt->type != PDT_OPT_ENUM_FLAG)
        return true;
    for (size_t i = 0; i < s->n_given; i++) {
        const pdt_option *g = s->given[i];
        if (g->type == PDT_OPT_ENUM_FLAG && g->offset == e->opt->offset && g != e->opt) {
            pdt_usage_error(s->cmd, "--%s and --%s contradict each other; give one", g->name,
                            e->opt->name);
            return false;
        }
    }
    return true;
}

/* One option met on the command line (or in --passes). */
static int take(cli_spec *s, const cli_entry *e, const char *value)
{
    if (!strcmp(e->opt->name, "help") && e->opt->set == set_help) {
        cli_print_help(s, stdout);
        return CLI_HELP;
    }
    if (!check_exclusive(s, e) || !pdt_option_set(e->base, e->opt, value, s->cmd))
        return PDT_EUSAGE;
    mark_given(s, e->opt);
    return PDT_OK;
}

/* getopt_long's tables for the entries: long options return 256 + the
 * entry's index; short ones their letter. */
static void build_getopt(const cli_spec *s, struct option *lopts, char *shorts)
{
    size_t k = 0;
    shorts[k++] = ':';
    for (size_t i = 0; i < s->n_entries; i++) {
        const pdt_option *o = s->entries[i].opt;
        bool arg = pdt_option_takes_value(o);
        int has_arg = !arg ? no_argument : o->optional_value ? optional_argument
                                                             : required_argument;
        lopts[i] = (struct option){o->name, has_arg, NULL, 256 + (int)i};
        if (o->short_name) {
            shorts[k++] = o->short_name;
            if (arg)
                shorts[k++] = ':';
        }
    }
    lopts[s->n_entries] = (struct option){NULL, 0, NULL, 0};
    shorts[k] = '\0';
}

static const cli_entry *entry_of(const cli_spec *s, int c)
{
    if (c >= 256 && (size_t)(c - 256) < s->n_entries)
        return &s->entries[c - 256];
    for (size_t i = 0; i < s->n_entries; i++)
        if (c != 0 && s->entries[i].opt->short_name == c)
            return &s->entries[i];
    return NULL;
}

/* A long option getopt_long refused: ambiguous (a prefix of several; name
 * them all) or unknown (name the nearest).  Else cli_bad_option says it. */
static int bad_option(const cli_spec *s, int c, char **argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    if (c != '?' || strncmp(arg, "--", 2) != 0 || !arg[2])
        return cli_bad_option(s->cmd, c, argv);
    size_t len = strcspn(arg + 2, "=");
    char *name = g_strndup(arg + 2, len);
    const char *prefixed[CLI_MAX_OPTS];
    size_t n_prefixed = 0;
    pdt_near near;
    pdt_near_init(&near, name);
    const char *exact = NULL;     /* the option named in full, if any */
    for (size_t i = 0; i < s->n_entries; i++) {
        const char *o = s->entries[i].opt->name;
        if (!strcmp(o, name))
            exact = o;
        if (!strncmp(o, name, len)) {
            prefixed[n_prefixed++] = o;
        }
        pdt_near_offer(&near, o);
    }
    if (exact || n_prefixed == 1) {
        /* The option exists: getopt_long refused the "=VALUE" it takes none of. */
        pdt_usage_error(s->cmd, "option '--%s' takes no value", exact ? exact : prefixed[0]);
    } else if (n_prefixed > 1) {
        GString *may = g_string_new("");
        for (size_t i = 0; i < n_prefixed; i++)
            g_string_append_printf(may, "%s--%s", i == 0 ? "" : i + 1 == n_prefixed ? " or "
                                                                                  : ", ",
                                   prefixed[i]);
        pdt_usage_error(s->cmd, "option '--%s' is ambiguous: it may be %s; give more of the "
                        "name", name, may->str);
        g_string_free(may, TRUE);
    } else {
        char *hint = pdt_near_hint(&near, "--");
        pdt_usage_error(s->cmd, "unknown option '--%s'%s", name, hint);
        g_free(hint);
    }
    g_free(name);
    return PDT_EUSAGE;
}

int cli_parse(cli_spec *s, int argc, char **argv)
{
    struct option lopts[CLI_MAX_OPTS + 1];
    char shorts[2 * CLI_MAX_OPTS + 2];
    collect(s);
    build_getopt(s, lopts, shorts);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
        if (optarg && !*optarg && c != ':' && c != '?')
            return cli_empty_value(s->cmd, argv);
        const cli_entry *e = c == ':' || c == '?' ? NULL : entry_of(s, c);
        if (!e)
            return bad_option(s, c, argv);
        int rc = take(s, e, optarg);
        if (rc != PDT_OK)
            return rc;
    }
    /* Commands that run passes: the clock (--time-passes) and the
     * progress line start with the reading of the inputs. */
    for (size_t g = 0; g < s->n_groups; g++)
        if (s->groups[g].opts == pdt_family_run.opts)
            pdt_progress_begin();
    return PDT_OK;
}

/* One entry: "  -x, --name=META" and the help, wrapped at 79 columns. */
static void print_entry(const pdt_option *o, FILE *out)
{
    enum { COL = 28, WIDTH = 79 };
    char head[128];
    int len = snprintf(head, sizeof head, "  %c%c%s--%s%s%s%s", o->short_name ? '-' : ' ',
                       o->short_name ? o->short_name : ' ', o->short_name ? ", " : "  ",
                       o->name, !o->meta ? "" : o->optional_value ? "[=" : "=",
                       o->meta ? o->meta : "", o->meta && o->optional_value ? "]" : "");
    fputs(head, out);
    char *text = o->def && *o->def && o->type != PDT_OPT_UNSET
                     ? g_strdup_printf("%s (default %s)", o->help, o->def)
                     : g_strdup(o->help);
    int col = len;
    if (len > COL - 2) {
        fputc('\n', out);
        col = 0;
    }
    for (const char *w = text; *w;) {
        size_t n = strcspn(w, " ");
        if (col > COL && col + 1 + (int)n > WIDTH) {
            fputc('\n', out);
            col = 0;
        }
        if (col < COL) {
            fprintf(out, "%*s", COL - col, "");
            col = COL;
        } else {
            fputc(' ', out);
            col++;
        }
        fwrite(w, 1, n, out);
        col += (int)n;
        w += n;
        w += strspn(w, " ");
    }
    fputc('\n', out);
    g_free(text);
}

void cli_print_options(const cli_entry *entries, size_t n, FILE *out)
{
    for (size_t i = 0; i < n; i++)
        print_entry(entries[i].opt, out);
}

void cli_print_help(const cli_spec *s, FILE *out)
{
    fputs(s->usage, out);
    cli_print_options(s->entries, s->n_entries, out);
    if (s->epilog)
        fputs(s->epilog, out);
}

/* The option KEY of pass PASS among S's entries. */
static const cli_entry *pass_option(const cli_spec *s, const char *pass, const char *key,
                                    size_t key_len)
{
    for (size_t i = 0; i < s->n_entries; i++) {
        const pdt_option *o = s->entries[i].opt;
        if (strlen(o->name) == key_len && !strncmp(o->name, key, key_len) &&
            pdt_option_for_pass(o, pass))
            return &s->entries[i];
    }
    return NULL;
}

/* "key=value;key=value" of pass PASS. */
static int take_pass_options(cli_spec *s, const char *pass, const char *text, size_t len)
{
    const char *end = text + len;
    for (const char *p = text; p < end;) {
        const char *semi = memchr(p, ';', (size_t)(end - p));
        size_t n = (size_t)((semi ? semi : end) - p);
        const char *eq = memchr(p, '=', n);
        size_t key_len = eq ? (size_t)(eq - p) : n;
        const cli_entry *e = key_len ? pass_option(s, pass, p, key_len) : NULL;
        if (!e) {
            pdt_usage_error(s->cmd, "--passes: pass '%s' has no option '%.*s' (see 'pdtrans "
                            "passes --help %s')", pass, (int)key_len, p, pass);
            return PDT_EUSAGE;
        }
        if (pdt_option_takes_value(e->opt) != (eq != NULL) &&
            !(e->opt->optional_value && !eq)) {
            pdt_usage_error(s->cmd, eq ? "--passes: option '%s' of pass '%s' takes no value"
                                       : "--passes: option '%s' of pass '%s' needs =VALUE",
                            e->opt->name, pass);
            return PDT_EUSAGE;
        }
        char *value = eq ? xstrndup(eq + 1, n - key_len - 1) : NULL;
        int rc = value && !*value ? (pdt_usage_error(s->cmd, "--passes: option '%s' of pass "
                                                     "'%s' needs a value, not an empty string",
                                                     e->opt->name, pass), PDT_EUSAGE)
                                  : take(s, e, value);
        free(value);
        if (rc != PDT_OK)
            return rc == CLI_HELP ? PDT_EUSAGE : rc;
        p += n + (p + n < end);
    }
    return PDT_OK;
}

int cli_parse_pipeline(cli_spec *s, pdt_ctx *ctx, const char *text, pdt_list *names)
{
    (void)ctx;
    *names = (pdt_list){0, NULL};
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, ",{");
        const char *name = ir_intern_n(p, n);
        const char *q = p + n;
        if (*q == '{') {
            const char *close = strchr(q, '}');
            if (!close) {
                pdt_usage_error(s->cmd, "--passes: pass '%s': '{' without '}'", name);
                return PDT_EUSAGE;
            }
            if (!pdt_pass_find(name)) {
                char *hint = pdt_pass_hint(name);
                pdt_usage_error(s->cmd, "--passes: unknown pass '%s' (see 'pdtrans passes')%s",
                                name, hint);
                g_free(hint);
                return PDT_EUSAGE;
            }
            int rc = take_pass_options(s, name, q + 1, (size_t)(close - q - 1));
            if (rc != PDT_OK)
                return rc;
            q = close + 1;
            if (*q && *q != ',') {
                pdt_usage_error(s->cmd, "--passes: pass '%s': ',' expected after '}'", name);
                return PDT_EUSAGE;
            }
        }
        if (n)
            pdt_list_append(names, name);
        p = *q ? q + 1 : q;
    }
    return PDT_OK;
}
