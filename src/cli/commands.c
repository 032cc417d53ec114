#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../exec/exec.h"
#include "../progress.h"
#include "../io/pdio.h"
#include "../job/job.h"
#include "../ir/print_ops.h"
#include "../passes/pass.h"
#include "optparse.h"

const pdt_command pdt_commands[] = {
#define CMD(name, summary) {#name, summary, cmd_##name},
#define CMD_NAMED(ident, name, summary) {name, summary, cmd_##ident},
#include "commands.def"
#undef CMD_NAMED
#undef CMD
};

const unsigned pdt_n_commands = sizeof pdt_commands / sizeof pdt_commands[0];

int cli_empty_value(const char *cmd, char **argv)
{
    /* optarg is inside argv[optind - 1] ("--loss=", "-o" with nothing
     * attached) or is all of it, after the flag in argv[optind - 2]. */
    const char *arg = argv[optind - 1];
    size_t len = strlen(arg);
    if (optarg > arg && optarg <= arg + len) {
        size_t n = (size_t)(optarg - arg);
        if (n && arg[n - 1] == '=')
            n--;
        pdt_usage_error(cmd, "option '%.*s' needs a value, not an empty string", (int)n, arg);
    } else {
        pdt_usage_error(cmd, "option '%s' needs a value, not an empty string", argv[optind - 2]);
    }
    return PDT_EUSAGE;
}

int cli_check_out_path(const char *cmd, const char *flag, const char *path, bool folder)
{
    if (!*path) {
        if (flag[0] == '-')
            pdt_usage_error(cmd, "option '%s' needs a value, not an empty string", flag);
        else
            pdt_usage_error(cmd, "%s is an empty string, not a file name", flag);
        return PDT_EUSAGE;
    }
    if (folder && !strcmp(path, "-")) {
        pdt_usage_error(cmd, "option '%s' names a folder and '%s' writes several files into "
                        "it; '-' (standard output) cannot hold them", flag, cmd);
        return PDT_EUSAGE;
    }
    return PDT_OK;
}

FILE *cli_report_stream(const char *out)
{
    pdt_progress_stop_line();   /* the report starts on a line of its own */
    return strcmp(out, "-") == 0 ? stderr : stdout;
}

int cli_check_quiet_verbose(const char *cmd)
{
    if (pdt_quiet_warnings && pdt_verbosity > 0) {
        pdt_usage_error(cmd, "-q/--quiet and -v/--verbose contradict each other; give one");
        return PDT_EUSAGE;
    }
    return PDT_OK;
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

/* The job API's check (src/job/job.c), for the commands that train. */
int cli_check_has_params(const char *cmd, const pdt_ctx *ctx)
{
    return pdt_job_check_params(cmd, ctx);
}

void cli_warn_no_params(const pdt_ctx *ctx)
{
    pdt_job_warn_no_params(ctx);
}

bool cli_load_main(pdt_ctx *ctx, const char *path)
{
    pdt_ctx_init(ctx);
    return cli_read_main(ctx, path);
}

bool cli_read_main(pdt_ctx *ctx, const char *path)
{
    ir_program *p = pdio_read(path);
    if (!p)
        return false;
    ctx->main = p;
    ctx->main_path = path;
    ctx->startup = ir_program_new();
    ir_program_add_block(ctx->startup, -1);
    return true;
}

int cli_check_operands(const char *cmd, int argc, const cli_common *c, const char *wrong_count)
{
    if (!c->out) {
        pdt_usage_error(cmd, "missing -o OUT");
        return PDT_EUSAGE;
    }
    if (cli_check_out_path(cmd, "-o/--output", c->out, false))
        return PDT_EUSAGE;
    if (argc - optind != 1) {
        pdt_usage_error(cmd, "%s", wrong_count);
        return PDT_EUSAGE;
    }
    return PDT_OK;
}

/* The size caps any command takes, wherever they stand before "--". */
static const struct size_flag {
    const char *name;
    void (*set)(uint64_t bytes);
} size_flags[] = {
    {"--max-input-size", pdio_set_max_input_size},
    {"--max-memory", ex_set_max_memory},
    {"--max-output-size", pdio_set_max_output_size},
    {"--max-work", ex_set_max_work},    /* a count, not bytes: the same suffixes */
};

static const struct size_flag *size_flag_of(const char *a)
{
    for (size_t k = 0; k < sizeof size_flags / sizeof *size_flags; k++) {
        size_t len = strlen(size_flags[k].name);
        if (!strncmp(a, size_flags[k].name, len) && (a[len] == '=' || a[len] == '\0'))
            return &size_flags[k];
    }
    return NULL;
}

int cli_take_input_options(int *argc, char **argv)
{
    int kept = 1;
    bool options_end = false;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            options_end = true;
        const struct size_flag *f = options_end ? NULL : size_flag_of(a);
        if (!f) {
            argv[kept++] = argv[i];
            continue;
        }
        size_t flag_len = strlen(f->name);
        const char *value = a[flag_len] == '=' ? a + flag_len + 1 : NULL;
        if (!value && i + 1 < *argc)
            value = argv[++i];
        uint64_t bytes = 0;
        if (!value) {
            pdt_usage_error(NULL, "option '%s' needs a value", f->name);
            return PDT_EUSAGE;
        }
        if (!pdio_parse_size(value, &bytes)) {
            pdt_usage_error(NULL, "option '%s' needs a %s, with an optional "
                            "K, M or G suffix, not '%.200s'", f->name,
                            f->set == ex_set_max_work ? "count" : "size in bytes", value);
            return PDT_EUSAGE;
        }
        f->set(bytes);
    }
    argv[kept] = NULL;
    *argc = kept;
    return PDT_OK;
}

void cli_print_program(FILE *out, const ir_program *p, bool ops)
{
    if (ops) {
        ir_print_ops(out, p);
        return;
    }
    size_t len = 0;
    uint8_t *text = pdio_serialize(p, true, &len);
    if (text)
        fwrite(text, 1, len, out);
    free(text);
}
