/* dump.c - `pdtrans dump [--ops] FILE`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "../diag.h"
#include "../io/pdio.h"
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

/* Role names joined with '|', as Paddle's OpRole bits combine. */
static void print_role(FILE *out, int role)
{
    static const struct { int bit; const char *name; } bits[] = {
        {IR_ROLE_BACKWARD, "backward"}, {IR_ROLE_OPTIMIZE, "optimize"},
        {IR_ROLE_RPC, "rpc"}, {IR_ROLE_DIST, "dist"}, {IR_ROLE_LRSCHED, "lrsched"},
        {IR_ROLE_LOSS, "loss"}, {IR_ROLE_NOT_SPECIFIED, "not_specified"}};
    if (role < 0) {
        fputs("(-)", out);
        return;
    }
    fputc('(', out);
    bool any = false;
    for (size_t i = 0; i < sizeof bits / sizeof *bits; i++)
        if (role & bits[i].bit) {
            fprintf(out, "%s%s", any ? "|" : "", bits[i].name);
            any = true;
            role &= ~bits[i].bit;
        }
    if (role)
        fprintf(out, "%s%d", any ? "|" : "", role);
    else if (!any)
        fputs("forward", out);
    fputc(')', out);
}

static void print_slots(FILE *out, const ir_slot *slots, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(out, " %s=", slots[i].name);
        for (size_t k = 0; k < slots[i].n_args; k++)
            fprintf(out, "%s%s", k ? "," : "", slots[i].args[k]);
    }
}

static void dump_ops(FILE *out, const ir_program *p)
{
    for (size_t b = 0; b < p->n_blocks; b++) {
        const ir_block *blk = p->blocks[b];
        for (size_t i = 0; i < blk->n_ops; i++) {
            const ir_op *op = blk->ops[i];
            fprintf(out, "%zu:%zu %s", b, i, op->type);
            print_slots(out, op->inputs, op->n_inputs);
            fputs(" ->", out);
            print_slots(out, op->outputs, op->n_outputs);
            fputc(' ', out);
            print_role(out, ir_op_role(op));
            fputc('\n', out);
        }
    }
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
    int rc = PDT_OK;
    if (ops) {
        dump_ops(stdout, p);
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
