/* memory_optimize.c - `pdtrans memory-optimize`: runs the memory_optimize
 * pass (Paddle's fluid.memory_optimize) and writes the program. */
#include <getopt.h>
#include <stdio.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../passes/pass.h"
#include "cli.h"

static void help(void)
{
    printf("usage: pdtrans memory-optimize [--level=0|1] [--skip=VAR,...] [--skip-grads]\n"
           "                               [--print-log] [--text] [-f] IN -o OUT\n\n"
           "Renames temporaries so that a later one reuses the buffer of an earlier\n"
           "one that is dead, as Paddle's fluid.memory_optimize(program, skip_opt_set,\n"
           "print_log, level, skip_grads) does (fluid 1.4-1.5), and writes OUT.\n"
           "Vars a caller fetches must be named in --skip: like Paddle, pdtrans does\n"
           "not protect fetch targets.\n\n"
           "  --level=0|1        0: reuse only a var of exactly the same shape (default);\n"
           "                     1: the smallest dead var at least as large\n"
           "  --skip=VAR,...     skip_opt_set: vars never renamed nor reused\n"
           "  --skip-grads       also skip the gradients the optimizer ops read\n"
           "  --print-log        print Paddle's print_log lines: to standard output,\n"
           "                     or to standard error when OUT is '-'\n"
           "  -o, --output=OUT   output file ('-' is stdout)\n"
           "  --text             write text form whatever OUT's extension\n"
           "  -f, --force        write binary output even to a terminal\n"
           "  --no-verify-each   skip the structural check after the pass\n"
           "  -q, --quiet        print no warnings\n"
           "  -h, --help         show this help\n");
}

int cmd_memory_optimize(int argc, char **argv)
{
    static const char *cmd = "memory-optimize";
    static const struct option opts[] = {
        {"level", required_argument, NULL, 'L'},
        {"skip", required_argument, NULL, 's'},
        {"skip-grads", no_argument, NULL, 'g'},
        {"print-log", no_argument, NULL, 'P'},
        {"output", required_argument, NULL, 'o'},
        {"text", no_argument, NULL, 't'},
        {"force", no_argument, NULL, 'f'},
        {"no-verify-each", no_argument, NULL, 'V'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *skip = NULL, *out = NULL;
    long level = 0;
    bool skip_grads = false, print_log = false, text = false, force = false, no_verify = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:fqh", opts, NULL)) != -1) {
        if (optarg && !*optarg && c != ':' && c != '?')
            return cli_empty_value(cmd, argv);
        switch (c) {
        case 'L':
            if (!cli_parse_long(cmd, "--level", optarg, 0, 1, &level))
                return PDT_EUSAGE;
            break;
        case 's': skip = optarg; break;
        case 'g': skip_grads = true; break;
        case 'P': print_log = true; break;
        case 'o': out = optarg; break;
        case 't': text = true; break;
        case 'f': force = true; break;
        case 'V': no_verify = true; break;
        case 'q': pdt_quiet_warnings = true; break;
        case 'h': help(); return PDT_OK;
        default: return cli_bad_option(cmd, c, argv);
        }
    }
    if (!out) {
        pdt_usage_error(cmd, "missing -o OUT");
        return PDT_EUSAGE;
    }
    if (cli_check_out_path(cmd, "-o/--output", out, false))
        return PDT_EUSAGE;
    if (argc - optind != 1) {
        pdt_usage_error(cmd, "expected one input program");
        return PDT_EUSAGE;
    }
    pdt_ctx ctx;
    if (!cli_load_main(&ctx, argv[optind]))
        return PDT_EBADINPUT;
    ctx.memory.skip = pdt_list_split(skip);
    ctx.memory.level = (int)level;
    ctx.memory.skip_grads = skip_grads;
    ctx.memory.print_log = print_log;
    ctx.no_verify_each = no_verify;
    const char *pass = "memory_optimize";
    int rc = pdt_run_pipeline(&ctx, &pass, 1);
    if (rc == PDT_OK)
        rc = pdio_write(ctx.main, out, text || pdio_path_is_text(out), force);
    if (rc == PDT_OK && ctx.memory.log)
        fputs(ctx.memory.log, cli_report_stream(out));
    pdt_ctx_free(&ctx);
    return rc;
}
