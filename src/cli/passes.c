/* passes.c - `pdtrans passes`: the registry, one line per pass. */
#include <stdio.h>
#include <string.h>

#include "../diag.h"
#include "../passes/pass.h"
#include "cli.h"

int cmd_passes(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: pdtrans passes [-q]\n\nLists the registered passes in pipeline "
                   "order,\none per line: NAME, then a one-line summary.\n\n"
                   "  -q, --quiet   print no warnings (accepted as in every command)\n"
                   "  -h, --help    show this help\n");
            return PDT_OK;
        }
        if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
            pdt_quiet_warnings = true;
            continue;
        }
        pdt_usage_error("passes", "unexpected argument '%s'", argv[i]);
        return PDT_EUSAGE;
    }
    for (size_t i = 0; i < pdt_n_passes; i++)
        printf("%-18s %s\n", pdt_passes[i].name, pdt_passes[i].summary);
    return PDT_OK;
}
