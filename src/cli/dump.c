/* dump.c - `pdtrans dump [--ops] FILE`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../ir/print_ops.h"
#include "../passes/verify.h"
#include "cli.h"

static void help(void)
{
    printf("usage: pdtrans dump [--ops] FILE\n\n"
           "Prints FILE (binary or text form; '-' is stdin) as protobuf text format,\n"
           "byte for byte what 'protoc --decode=paddle.framework.proto.ProgramDesc'\n"
           "prints.  With --ops, prints one line per op instead:\n"
           "  BLOCK:INDEX TYPE SLOT=ARG,... -> SLOT=ARG,... (ROLE)\n\n"
           "  --ops         one line per op\n"
           "  -q, --quiet   print no warnings\n"
           "  -h, --help    show this help\n");
}

int cmd_dump(int argc, char **argv)
{
    static const struct option opts[] = {
        {"ops", no_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    bool ops = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': ops = true; break;
        case 'q': pdt_quiet_warnings = true; break;
        case 'h': help(); return PDT_OK;
        default: return cli_bad_option("dump", c, argv);
        }
    }
    if (argc - optind != 1) {
        pdt_usage_error("dump", "expected one FILE");
        return PDT_EUSAGE;
    }
    ir_program *p = pdio_read(argv[optind]);
    if (!p)
        return PDT_EBADINPUT;
    pdt_verify_note_dims(p, argv[optind], stderr);
    int rc = PDT_OK;
    if (ops) {
        ir_print_ops(stdout, p);
    } else {
        size_t len = 0;
        uint8_t *text = pdio_serialize(p, true, &len);
        if (!text || pdio_write_stdout(text, len) != PDT_OK)
            rc = PDT_EBADINPUT;
        free(text);
    }
    ir_program_free(p);
    return rc;
}
