/* dump.c - `pdtrans dump [--ops [--attrs]] [--no-callstack] FILE`. */
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
    printf("usage: pdtrans dump [--ops [--attrs]] [--no-callstack] FILE\n\n"
           "Prints FILE (binary or text form; '-' is stdin) as protobuf text format,\n"
           "byte for byte what 'protoc --decode=paddle.framework.proto.ProgramDesc'\n"
           "prints.  With --ops, prints one line per op instead:\n"
           "  BLOCK:INDEX TYPE SLOT=ARG,... -> SLOT=ARG,... (ROLE)\n\n"
           "  --ops         one line per op\n"
           "  --attrs       with --ops: each op's attrs on its line, NAME=VALUE,\n"
           "                framework attrs (op_role, op_callstack, ...) last,\n"
           "                op_callstack as its depth only\n"
           "  --no-callstack\n"
           "                leave out every op's op_callstack attr (a Python\n"
           "                traceback)\n"
           "  -q, --quiet   print no warnings\n"
           "  -h, --help    show this help\n");
}

int cmd_dump(int argc, char **argv)
{
    static const struct option opts[] = {
        {"ops", no_argument, NULL, 'o'},
        {"attrs", no_argument, NULL, 'a'},
        {"no-callstack", no_argument, NULL, 'c'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    bool ops = false;
    ir_print_ops_opts po = {0};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': ops = true; break;
        case 'a': po.attrs = true; break;
        case 'c': po.no_callstack = true; break;
        case 'q': pdt_quiet_warnings = true; break;
        case 'h': help(); return PDT_OK;
        default: return cli_bad_option("dump", c, argv);
        }
    }
    if (po.attrs && !ops) {
        pdt_usage_error("dump", "--attrs needs --ops (the text form shows every attr)");
        return PDT_EUSAGE;
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
        ir_print_ops_with(stdout, p, &po);
    } else {
        size_t len = 0;
        uint8_t *text = pdio_serialize_text_without(
            p, po.no_callstack ? "op_callstack" : NULL, &len);
        if (!text || pdio_write_stdout(text, len) != PDT_OK)
            rc = PDT_EBADINPUT;
        free(text);
    }
    ir_program_free(p);
    return rc;
}
