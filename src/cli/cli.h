/* cli.h - commands.  Each command lives in src/cli/NAME.c and exports
 * `int cmd_NAME(int argc, char **argv)`, where argv[0] is the command name.
 * It parses its own options with getopt_long, prints --help to stdout, and
 * returns PDT_OK, PDT_EBADINPUT or PDT_EUSAGE (diag.h). */
#ifndef PDT_CLI_H
#define PDT_CLI_H

#include <stdbool.h>

#define CMD(name, summary) int cmd_##name(int argc, char **argv);
#include "commands.def"
#undef CMD

typedef struct {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} pdt_command;

extern const pdt_command pdt_commands[];
extern const unsigned pdt_n_commands;

#define PDT_VERSION "0.1.0"

/* Shared option helpers. */
/* Parses a non-negative decimal integer flag value; prints a usage error
 * naming `flag` and returns false when malformed. */
bool cli_parse_long(const char *cmd, const char *flag, const char *s, long min,
                    long max, long *out);
/* Reports the option getopt_long just rejected, naming it, as a usage
 * error; returns PDT_EUSAGE.  Callers set `opterr = 0` and start their
 * optstring with ':' so that a missing argument is told apart. */
int cli_bad_option(const char *cmd, int c, char **argv);
/* Initialises ctx and loads PATH as its main program, with an empty
 * startup program.  Returns false (message printed) if PATH is unreadable;
 * ctx is then initialised and empty, safe to pdt_ctx_free. */
struct pdt_ctx;
bool cli_load_main(struct pdt_ctx *ctx, const char *path);
/* Prints "pdtrans VERSION" to stdout. */
void cli_print_version(void);

#endif
