#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../passes/pass.h"

const pdt_command pdt_commands[] = {
#define CMD(name, summary) {#name, summary, cmd_##name},
#include "commands.def"
#undef CMD
};

const unsigned pdt_n_commands = sizeof pdt_commands / sizeof pdt_commands[0];

bool cli_parse_long(const char *cmd, const char *flag, const char *s, long min,
                    long max, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = s && *s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || v < min || v > max) {
        pdt_usage_error(cmd, "option '%s' needs an integer from %ld to %ld, not '%s'",
                        flag, min, max, s ? s : "");
        return false;
    }
    *out = v;
    return true;
}

void cli_print_version(void)
{
    printf("pdtrans %s\n", PDT_VERSION);
}

int cli_bad_option(const char *cmd, int c, char **argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    if (c == ':')
        pdt_usage_error(cmd, "option '%s' needs a value", arg);
    else if (optopt && arg[0] == '-' && arg[1] != '-')
        pdt_usage_error(cmd, "unknown option '-%c'", optopt);
    else
        pdt_usage_error(cmd, "unknown option '%s'", arg);
    return PDT_EUSAGE;
}

bool cli_load_main(pdt_ctx *ctx, const char *path)
{
    pdt_ctx_init(ctx);
    ir_program *p = pdio_read(path);
    if (!p)
        return false;
    ctx->main = p;
    ctx->main_path = path;
    ctx->startup = ir_program_new();
    ir_program_add_block(ctx->startup, -1);
    return true;
}
