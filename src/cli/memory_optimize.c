/* memory_optimize.c - `pdtrans memory-optimize`: runs the memory_optimize
 * pass (Paddle's fluid.memory_optimize) and writes the program. */
#include <stdio.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../passes/pass.h"
#include "cli.h"
#include "optparse.h"

static const char USAGE[] =
    "usage: pdtrans memory-optimize [--level=0|1] [--skip=VAR,...] [--skip-grads]\n"
    "                               [--print-log] [--text] [-f] IN -o OUT\n\n"
    "Renames temporaries so that a later one reuses the buffer of an earlier\n"
    "one that is dead, as Paddle's fluid.memory_optimize(program, skip_opt_set,\n"
    "print_log, level, skip_grads) does (fluid 1.4-1.5), and writes OUT.\n"
    "Vars a caller fetches must be named in --skip: like Paddle, pdtrans does\n"
    "not protect fetch targets.\n\n";

/* memory-optimize and release-memory: one memory pass on one program.
 * release_memory leaves ctx.memory.log empty, so only memory_optimize
 * prints a log. */
int cli_run_memory_pass(int argc, char **argv, const char *cmd, const char *usage,
                        const char *pass)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    cli_common common = {0};
    cli_spec spec = {.cmd = cmd, .usage = usage};
    cli_family(&spec, &pdt_family_memory, &ctx, pass, NULL);
    cli_common_group(&spec, &common, "output text force");
    cli_family(&spec, &pdt_family_run, &ctx, NULL, NULL);
    cli_common_group(&spec, &common, "quiet help");
    int rc = cli_parse(&spec, argc, argv);
    if (rc == PDT_OK)
        rc = cli_check_operands(spec.cmd, argc, &common, "expected one input program");
    if (rc == PDT_OK && !cli_read_main(&ctx, argv[optind]))
        rc = PDT_EBADINPUT;
    if (rc == PDT_OK)
        rc = pdt_run_pipeline(&ctx, &pass, 1);
    if (rc == PDT_OK)
        rc = pdio_write(ctx.main, common.out, common.text || pdio_path_is_text(common.out),
                        common.force);
    if (rc == PDT_OK && ctx.memory.log)
        fputs(ctx.memory.log, cli_report_stream(common.out));
    pdt_ctx_free(&ctx);
    return rc == CLI_HELP ? PDT_OK : rc;
}

int cmd_memory_optimize(int argc, char **argv)
{
    return cli_run_memory_pass(argc, argv, "memory-optimize", USAGE, "memory_optimize");
}
