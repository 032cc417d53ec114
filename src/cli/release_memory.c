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
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    cli_common common = {0};
    cli_spec spec = {.cmd = "release-memory", .usage = USAGE};
    cli_family(&spec, &pdt_family_memory, &ctx, "release_memory", NULL);
    cli_common_group(&spec, &common, "output text force");
    cli_family(&spec, &pdt_family_run, &ctx, NULL, NULL);
    cli_common_group(&spec, &common, "quiet help");
    int rc = cli_parse(&spec, argc, argv);
    if (rc == PDT_OK)
        rc = cli_check_operands(spec.cmd, argc, &common, "expected one input program");
    if (rc == PDT_OK && !cli_read_main(&ctx, argv[optind]))
        rc = PDT_EBADINPUT;
    const char *pass = "release_memory";
    if (rc == PDT_OK)
        rc = pdt_run_pipeline(&ctx, &pass, 1);
    if (rc == PDT_OK)
        rc = pdio_write(ctx.main, common.out, common.text || pdio_path_is_text(common.out),
                        common.force);
    pdt_ctx_free(&ctx);
    return rc == CLI_HELP ? PDT_OK : rc;
}
