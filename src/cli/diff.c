/* diff.c - `pdtrans diff [OPTIONS] A B`: what differs between two programs
 * or two job folders (the comparison is src/diff/). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../diag.h"
#include "../suggest.h"
#include "../diff/diff.h"
#include "../io/pdio.h"
#include "cli.h"

static void help(void)
{
    printf("usage: pdtrans diff [OPTIONS] A B\n\n"
           "Prints what differs between programs A and B (binary or text form, in\n"
           "any mix; '-' is stdin), or between job folders A and B (their\n"
           "manifest*.json files, then each role's programs).  Blocks are compared\n"
           "by index, ops matched as a longest common subsequence on (type,\n"
           "outputs), vars by name.  Exit status: 0 equal, 1 different, 2 trouble.\n\n"
           "  --callstack   compare op_callstack attrs too (ignored by default)\n"
           "  --ignore-attr=NAME\n"
           "                leave attr NAME out (repeatable)\n"
           "  --ignore-var-field=NAME\n"
           "                leave this VarDesc field out (repeatable): type, tensor,\n"
           "                data_type, dims, lod_level, persistable, need_check_feed,\n"
           "                is_parameter, stop_gradient, attrs, reader, tuple, unknown\n"
           "  --ops-only    compare op types and slots only (no attrs, no vars)\n"
           "  --json        print the differences as one JSON array\n"
           "  --stat        print the number of differences of each kind\n"
           "  --color=WHEN  colour the text output: auto (on a terminal), always,\n"
           "                never (default auto)\n"
           "  -q, --quiet   print no warnings\n"
           "  -h, --help    show this help\n");
}

typedef struct {
    pdiff_opts o;
    GPtrArray *ignore_attrs;
    pdiff_format format;
    int color;                  /* -1 auto, 0 never, 1 always */
} diff_args;

/* The --ignore-var-field name nearest NAME (at most 3 edits, or fewer
 * than half its letters), for "did you mean". */
static const char *near_field(const char *name)
{
    const char *near = NULL;
    unsigned best = strlen(name) / 2 + 1 > 4 ? (unsigned)strlen(name) / 2 + 1 : 4;
    for (size_t i = 0; i < pdiff_n_var_fields; i++) {
        unsigned d = pdt_edit_distance(name, pdiff_var_fields[i], best);
        if (d < best)
            best = d, near = pdiff_var_fields[i];
    }
    return near;
}

static int take_option(diff_args *d, int c, char **argv)
{
    switch (c) {
    case 'c': d->o.callstack = true; return PDT_OK;
    case 'o': d->o.ops_only = true; return PDT_OK;
    case 'a': g_ptr_array_add(d->ignore_attrs, (gpointer)ir_intern(optarg)); return PDT_OK;
    case 'f': {
        unsigned bit = pdiff_var_field_bit(optarg);
        if (!bit) {
            const char *near = near_field(optarg);
            pdt_usage_error("diff", "--ignore-var-field: no VarDesc field '%s'%s%s%s", optarg,
                            near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
            return PDT_EUSAGE;
        }
        d->o.ignore_var_fields |= bit;
        return PDT_OK;
    }
    case 'j': case 's':
        if (d->format != PDIFF_TEXT && d->format != (c == 'j' ? PDIFF_JSON : PDIFF_STAT)) {
            pdt_usage_error("diff", "--json and --stat cannot be used together");
            return PDT_EUSAGE;
        }
        d->format = c == 'j' ? PDIFF_JSON : PDIFF_STAT;
        return PDT_OK;
    case 'C':
        d->color = !strcmp(optarg, "always") ? 1 : !strcmp(optarg, "never") ? 0 : -1;
        if (d->color == -1 && strcmp(optarg, "auto") != 0) {
            pdt_usage_error("diff", "--color: expected auto, always or never, not '%s'", optarg);
            return PDT_EUSAGE;
        }
        return PDT_OK;
    case 'q': pdt_quiet_warnings = true; return PDT_OK;
    default: return cli_bad_option("diff", c, argv);
    }
}

static int parse(diff_args *d, int argc, char **argv, bool *helped)
{
    static const struct option opts[] = {
        {"callstack", no_argument, NULL, 'c'},
        {"ignore-attr", required_argument, NULL, 'a'},
        {"ignore-var-field", required_argument, NULL, 'f'},
        {"ops-only", no_argument, NULL, 'o'},
        {"json", no_argument, NULL, 'j'},
        {"stat", no_argument, NULL, 's'},
        {"color", required_argument, NULL, 'C'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        if (c == 'h') {
            help();
            *helped = true;
            return PDT_OK;
        }
        if ((c == 'a' || c == 'f' || c == 'C') && !*optarg)
            return cli_empty_value("diff", argv);
        int rc = take_option(d, c, argv);
        if (rc != PDT_OK)
            return rc;
    }
    if (argc - optind != 2) {
        pdt_usage_error("diff", "expected two programs or two job folders, A and B");
        return PDT_EUSAGE;
    }
    return PDT_OK;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Compares A and B into r; PDT_OK, or PDT_EUSAGE (trouble, message
 * printed). */
static int compare(const diff_args *d, const char *a, const char *b, pdiff_report *r)
{
    bool da = is_dir(a), db = is_dir(b);
    if (da != db) {
        pdt_usage_error("diff", "'%s' is a folder and '%s' is not: give two programs or two "
                        "job folders", da ? a : b, da ? b : a);
        return PDT_EUSAGE;
    }
    if (da) {
        size_t n;
        return pdiff_jobs(a, b, &d->o, r, &n);
    }
    if (!strcmp(a, "-") && !strcmp(b, "-")) {
        pdt_usage_error("diff", "only one of A and B can be '-' (stdin)");
        return PDT_EUSAGE;
    }
    ir_program *x = pdio_read(a), *y = x ? pdio_read(b) : NULL;
    if (y)
        pdiff_programs(x, y, a, b, &d->o, r);
    int rc = x && y ? PDT_OK : PDT_EUSAGE;
    if (x)
        ir_program_free(x);
    if (y)
        ir_program_free(y);
    return rc;
}

/* Exit status as diff(1)'s: 0 equal, 1 different, 2 trouble (a usage
 * error, an unreadable input, a failed write). */
int cmd_diff(int argc, char **argv)
{
    diff_args d = {.ignore_attrs = g_ptr_array_new(), .format = PDIFF_TEXT, .color = -1};
    bool helped = false;
    int rc = parse(&d, argc, argv, &helped);
    if (rc != PDT_OK || helped) {
        g_ptr_array_free(d.ignore_attrs, TRUE);
        return rc == PDT_OK ? PDT_OK : PDT_EUSAGE;
    }
    d.o.ignore_attrs = (const char *const *)d.ignore_attrs->pdata;
    d.o.n_ignore_attrs = d.ignore_attrs->len;
    bool color = d.color == 1 || (d.color == -1 && isatty(fileno(stdout)));
    pdiff_report *r = pdiff_report_new(stdout, d.format, color);
    rc = compare(&d, argv[optind], argv[optind + 1], r);
    if (rc == PDT_OK)
        pdiff_report_finish(r);
    size_t n = pdiff_report_count(r);
    pdiff_report_free(r);
    g_ptr_array_free(d.ignore_attrs, TRUE);
    if (rc == PDT_OK && (fflush(stdout) != 0 || ferror(stdout))) {
        pdt_error("cannot write to standard output");
        rc = PDT_EUSAGE;
    }
    return rc != PDT_OK ? PDT_EUSAGE : n ? 1 : PDT_OK;
}
