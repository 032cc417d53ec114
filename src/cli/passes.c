/* passes.c - `pdtrans passes`: the registry, one line per pass, and with
 * --help NAME the options a pass reads (from the family tables). */
#include <stdio.h>
#include <string.h>

#include "../diag.h"
#include "../passes/pass.h"
#include "cli.h"
#include "optparse.h"

static void help(void)
{
    printf("usage: pdtrans passes [-q] [--help NAME]\n\nLists the registered passes in pipeline "
           "order,\none per line: NAME, then a one-line summary.  With --help NAME,\n"
           "describes pass NAME and its options (flags of the commands that run it,\n"
           "or NAME{KEY=VALUE;...} in transpile's --passes).\n\n"
           "  -q, --quiet   print no warnings (accepted as in every command)\n"
           "  -h, --help    show this help\n");
}

/* The options of every family that pass P reads. */
static int pass_help(const char *name)
{
    const pdt_pass *p = pdt_pass_find(name);
    if (!p) {
        char *hint = pdt_pass_hint(name);
        pdt_usage_error("passes", "unknown pass '%s' (see 'pdtrans passes')%s", name, hint);
        g_free(hint);
        return PDT_EUSAGE;
    }
    cli_entry entries[CLI_MAX_OPTS];
    size_t n = 0;
    for (size_t f = 0; f < pdt_n_option_families; f++) {
        const pdt_option_family *fam = pdt_option_families[f];
        for (size_t i = 0; i < fam->n_opts && n < CLI_MAX_OPTS; i++)
            if (pdt_option_for_pass(&fam->opts[i], name))
                entries[n++] = (cli_entry){&fam->opts[i], NULL};
    }
    printf("%s: %s\n\n", p->name, p->summary);
    if (n == 0) {
        printf("It takes no options.\n");
        return PDT_OK;
    }
    printf("options:\n");
    cli_print_options(entries, n, stdout);
    return PDT_OK;
}

int cmd_passes(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            if (i + 1 < argc && argv[i + 1][0] != '-')
                return pass_help(argv[i + 1]);
            help();
            return PDT_OK;
        }
        if (!strncmp(argv[i], "--help=", 7))
            return pass_help(argv[i] + 7);
        if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
            pdt_quiet_warnings = true;
            continue;
        }
        pdt_usage_error("passes", "unexpected argument '%s'", argv[i]);
        return PDT_EUSAGE;
    }
    for (size_t i = 0; i < pdt_n_passes; i++)
        printf("%-22s %s\n", pdt_passes[i].name, pdt_passes[i].summary);
    return PDT_OK;
}
