/* release_memory.c - `pdtrans release-memory`: runs the release_memory pass
 * (Paddle's fluid.release_memory) and writes the program. */
#include <stdio.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../passes/pass.h"
#include "cli.h"
#include "optparse.h"

static const char USAGE[] =
    "usage: pdtrans release-memory [--skip=VAR,...] [--text] [-f] IN -o OUT\n\n"
    "Inserts a delete_var op after each op for the temporaries it reads last,\n"
    "as Paddle's fluid.release_memory(program, skip_opt_set) does (fluid\n"
    "1.4-1.5), and writes OUT.\n\n";

int cmd_release_memory(int argc, char **argv)
{
    return cli_run_memory_pass(argc, argv, "release-memory", USAGE, "release_memory");
}
