/* passes.c - `pdtrans passes`: the registry, one line per pass. */
#include <stdio.h>
#include <string.h>

#include "../diag.h"
#include "../passes/pass.h"
#include "cli.h"

int cmd_passes(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: pdtrans passes\n\nLists the registered passes in pipeline order,\n"
               "one per line: NAME, then a one-line summary.\n");
        return PDT_OK;
    }
    if (argc > 1) {
        pdt_usage_error("passes", "unexpected argument '%s'", argv[1]);
        return PDT_EUSAGE;
    }
    for (size_t i = 0; i < pdt_n_passes; i++)
        printf("%-18s %s\n", pdt_passes[i].name, pdt_passes[i].summary);
    return PDT_OK;
}
