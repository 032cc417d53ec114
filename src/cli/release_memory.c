/* release_memory.c - `pdtrans release-memory`: runs the release_memory pass
 * (Paddle's fluid.release_memory) and writes the program. */
#include <getopt.h>
#include <stdio.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../passes/pass.h"
#include "cli.h"

static void help(void)
{
    printf("usage: pdtrans release-memory [--skip=VAR,...] [--text] [-f] IN -o OUT\n\n"
           "Inserts a delete_var op after each op for the temporaries it reads last,\n"
           "as Paddle's fluid.release_memory(program, skip_opt_set) does (fluid\n"
           "1.4-1.5), and writes OUT.\n\n"
           "  --skip=VAR,...     skip_opt_set: vars never deleted\n"
           "  -o, --output=OUT   output file ('-' is stdout)\n"
           "  --text             write text form whatever OUT's extension\n"
           "  -f, --force        write binary output even to a terminal\n"
           "  --no-verify-each   skip the structural check after the pass\n"
           "  -q, --quiet        print no warnings\n"
           "  -h, --help         show this help\n");
}

int cmd_release_memory(int argc, char **argv)
{
    static const char *cmd = "release-memory";
    static const struct option opts[] = {
        {"skip", required_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'},
        {"text", no_argument, NULL, 't'},
        {"force", no_argument, NULL, 'f'},
        {"no-verify-each", no_argument, NULL, 'V'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *skip = NULL, *out = NULL;
    bool text = false, force = false, no_verify = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:fqh", opts, NULL)) != -1) {
        if (optarg && !*optarg && c != ':' && c != '?')
            return cli_empty_value(cmd, argv);
        switch (c) {
        case 's': skip = optarg; break;
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
    ctx.no_verify_each = no_verify;
    const char *pass = "release_memory";
    int rc = pdt_run_pipeline(&ctx, &pass, 1);
    if (rc == PDT_OK)
        rc = pdio_write(ctx.main, out, text || pdio_path_is_text(out), force);
    pdt_ctx_free(&ctx);
    return rc;
}
