/* optparse.h - the one option parser: a command lists option groups (its
 * own table, the common options it takes, and the pass families it runs)
 * and everything else - the getopt_long array, --help, the usage errors -
 * comes from the tables (src/passes/options.h).  See src/cli/README.md. */
#ifndef PDT_CLI_OPTPARSE_H
#define PDT_CLI_OPTPARSE_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "../passes/options.h"
#include "../passes/pass.h"

/* Options of one table that a command takes: all of them, or the ones PASS
 * reads, or the ones named in NAMES (space-separated); EXCEPT names ones
 * left out.  Values go into the struct at BASE. */
typedef struct {
    const pdt_option *opts;
    size_t n;
    void *base;
    const char *pass, *names, *except;
} cli_group;

/* What most commands take, filled by the common options (common_options):
 * -o/--output or -o/--out-dir, -s/--startup, --text, -f/--force. */
typedef struct {
    const char *out, *startup;
    bool text, force;
} cli_common;

/* For commands that write one program to -o OUT from one input: -o given
 * and usable, and one operand (else the message WRONG_COUNT).  PDT_OK or
 * PDT_EUSAGE (message printed). */
int cli_check_operands(const char *cmd, int argc, const cli_common *c, const char *wrong_count);

#define CLI_MAX_GROUPS 16
#define CLI_MAX_OPTS 96

typedef struct {
    const pdt_option *opt;
    void *base;
} cli_entry;

typedef struct {
    const char *cmd;
    const char *usage;      /* --help up to the options, ending in a blank line */
    const char *epilog;     /* --help after the options; NULL: none */
    cli_group groups[CLI_MAX_GROUPS];
    size_t n_groups;
    /* Filled by cli_parse: the options taken, and the ones given. */
    cli_entry entries[CLI_MAX_OPTS];
    size_t n_entries;
    const pdt_option *given[CLI_MAX_OPTS];
    size_t n_given;
} cli_spec;

/* cli_parse's status after printing --help (the command then exits 0). */
enum { CLI_HELP = -1 };

/* Adds a group to S.  cli_family adds the options of F that PASS reads
 * (NULL: all), into F's struct in CTX; cli_common_group adds the common
 * options NAMES into C. */
void cli_add(cli_spec *s, cli_group g);
void cli_family(cli_spec *s, const pdt_option_family *f, pdt_ctx *ctx, const char *pass,
                const char *except);
void cli_common_group(cli_spec *s, cli_common *c, const char *names);

/* Parses argv (argv[0] is the command); optind is then the first operand.
 * PDT_OK, PDT_EUSAGE (message printed) or CLI_HELP. */
int cli_parse(cli_spec *s, int argc, char **argv);
/* Whether option NAME was given (on the command line or in --passes). */
bool cli_given(const cli_spec *s, const char *name);
/* The --help text: usage, one entry per option, epilog. */
void cli_print_help(const cli_spec *s, FILE *out);
/* Prints the options in ENTRIES as --help shows them. */
void cli_print_options(const cli_entry *entries, size_t n, FILE *out);

/* --passes text: "name,name{key=value;key=value},...".  Splits it into
 * NAMES (interned) and sets each pass option through its table, as its
 * flag would.  PDT_OK or PDT_EUSAGE (message printed). */
int cli_parse_pipeline(cli_spec *s, pdt_ctx *ctx, const char *text, pdt_list *names);

/* minimize.c: the options minimize takes (transpile takes them too). */
void cli_minimize_options(cli_spec *s, pdt_ctx *ctx);

#endif
