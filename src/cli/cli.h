/* cli.h - commands.  Each command lives in src/cli/NAME.c and exports
 * `int cmd_NAME(int argc, char **argv)`, where argv[0] is the command name.
 * It parses its own options with getopt_long, prints --help to stdout, and
 * returns PDT_OK, PDT_EBADINPUT or PDT_EUSAGE (diag.h). */
#ifndef PDT_CLI_H
#define PDT_CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

#include "../passes/pass.h"
#include "../job/manifest.h"

#define CMD(name, summary) int cmd_##name(int argc, char **argv);
#include "commands.def"
#undef CMD

/* memory_optimize.c: memory-optimize and release-memory parse the same
 * options and run one pass each (PASS) on one program. */
int cli_run_memory_pass(int argc, char **argv, const char *cmd, const char *usage,
                        const char *pass);

/* `verify transpile` of a --geo job (verify_geo.c): vars_info (the params'
 * slices) and the push interval of the job's manifest M into cluster C (an
 * ex_cluster *); false after an error message. */
struct json_t;
struct ex_cluster;
bool cli_verify_geo_info(const pdt_manifest *m, struct ex_cluster *c);
/* `verify rewrite` (verify_rewrite.c) and `verify transpile`
 * (verify_transpile.c), dispatched by cmd_verify. */
int cmd_verify_rewrite(int argc, char **argv);
int cli_verify_transpile(int argc, char **argv);
/* verify's numbers (verify.c): S as a double of at least MIN into *OUT,
 * or a usage error naming FLAG. */
bool cli_verify_parse_double(const char *flag, const char *s, double min, double *out);
/* `verify job` (verify_job.c, src/sym), dispatched by cmd_verify. */
int cmd_verify_job(int argc, char **argv);
/* The symbolic check of a transpile's outputs, shared by `verify job` and
 * `verify transpile --symbolic` (verify_job.c): manifests are added one by
 * one (M is taken: a job's, or manifest.json read back), each with the loader of the files it
 * names (LOADER(CTX, FILE), a new program or NULL after an error message);
 * cli_sym_check runs src/sym's check against MAIN and prints its report.
 * WHERE names the job in messages.  Both return false / PDT_EBADINPUT
 * after an error message. */
struct ir_program;
typedef struct cli_sym_job cli_sym_job;
typedef struct ir_program *(*cli_sym_loader)(void *ctx, const char *file);
cli_sym_job *cli_sym_job_new(void);
bool cli_sym_add_manifest(cli_sym_job *f, pdt_manifest *m, const char *where,
                          cli_sym_loader loader, void *ctx);
int cli_sym_check(cli_sym_job *f, const char *where, const char *main_label,
                  struct ir_program *main, struct ir_program *startup, int steps);
void cli_sym_job_free(cli_sym_job *f);
/* A GEO job's vars_info and push interval for the check (verify_job_geo.c):
 * from manifest.json's "vars_info" (J), or from a manifest's params table
 * and flags (M); false after an error message naming WHERE. */
typedef struct cli_sym_geo cli_sym_geo;
struct sym_geo_var;
bool cli_sym_geo_json(cli_sym_geo **g, const char *where, struct json_t *j);
bool cli_sym_geo_manifest(cli_sym_geo **g, const char *where, const pdt_manifest *m);
void cli_sym_geo_fill(const cli_sym_geo *g, const struct sym_geo_var **vars, size_t *n,
                      long *push);
void cli_sym_geo_free(cli_sym_geo *g);
/* The manifest fields verify job reads have their types and ranges
 * (verify_job_manifest.c); false after an error message naming PATH. */
bool cli_sym_manifest_shape(const char *path, struct json_t *j);
/* verify job's check that DIR holds one job's files as transpile wrote
 * them (verify_job_sha256.c): each manifest's "job" and "sha256" map
 * added (NAME in DIR, its JSON J), then cli_vj_load as the loader hashes
 * each program before parsing it, and cli_vj_rest hashes the listed files
 * not read.  False / NULL after an error message naming the file. */
typedef struct cli_vj_sums cli_vj_sums;
cli_vj_sums *cli_vj_sums_new(const char *dir);
bool cli_vj_sums_add(cli_vj_sums *s, const char *name, struct json_t *j);
void cli_vj_sums_done(cli_vj_sums *s);
struct ir_program *cli_vj_load(void *ctx, const char *name);
bool cli_vj_rest(cli_vj_sums *s);
void cli_vj_sums_free(cli_vj_sums *s);

typedef struct {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} pdt_command;

extern const pdt_command pdt_commands[];
extern const unsigned pdt_n_commands;

#define PDT_VERSION "0.1.0"

/* Shared option helpers. */
/* (Integer flag values: pdt_parse_long, src/passes/options.h.) */
/* Reports the option getopt_long just rejected, naming it, as a usage
 * error; returns PDT_EUSAGE.  Callers set `opterr = 0` and start their
 * optstring with ':' so that a missing argument is told apart. */
int cli_bad_option(const char *cmd, int c, char **argv);
/* Initialises ctx and loads PATH as its main program, with an empty
 * startup program.  Returns false (message printed) if PATH is unreadable;
 * ctx is then initialised and empty, safe to pdt_ctx_free. */
struct pdt_ctx;
bool cli_load_main(struct pdt_ctx *ctx, const char *path);
/* Call when getopt_long returned an option whose value (optarg) is empty:
 * prints a usage error naming the option; returns PDT_EUSAGE. */
int cli_empty_value(const char *cmd, char **argv);
/* The value of an output option (FLAG names it): never empty; never "-"
 * when it names a folder.  Returns PDT_OK or PDT_EUSAGE (message printed). */
int cli_check_out_path(const char *cmd, const char *flag, const char *path, bool folder);
/* Where a command's report goes: stderr when the program it writes goes to
 * stdout (OUT is "-"), so that stdout holds the program alone. */
FILE *cli_report_stream(const char *out);
/* -q and -v together are a usage error (PDT_EUSAGE, message printed). */
int cli_check_quiet_verbose(const char *cmd);
/* append_backward without --params trains the vars marked is_parameter; a
 * program with none (a saved inference model) is a usage error that
 * suggests --params.  Returns PDT_OK or PDT_EUSAGE (message printed). */
int cli_check_has_params(const char *cmd, const struct pdt_ctx *ctx);
/* The same as a warning (backward: Paddle then appends no gradient). */
void cli_warn_no_params(const struct pdt_ctx *ctx);
/* Loads PATH as the main program of CTX (initialised, options set), with
 * an empty startup program; false (message printed) if unreadable. */
bool cli_read_main(struct pdt_ctx *ctx, const char *path);
/* Takes --max-input-size=BYTES (or "--max-input-size BYTES") out of argv,
 * wherever it stands before "--", and sets the input cap: it applies to
 * every command that reads a program, including commands added later.
 * PDT_OK, or PDT_EUSAGE with a message naming the flag. */
int cli_take_input_options(int *argc, char **argv);
/* A program on `out`: protobuf text form, or one line per op: the printer
 * --print-after uses (ctx->settings.print_program; only src/io knows the
 * text form), set by cli_family for the run family. */
void cli_print_program(FILE *out, const ir_program *p, bool ops);
/* Prints "pdtrans VERSION" to stdout. */
void cli_print_version(void);

/* manifest_json.c: manifest.json, the job's manifest M as JSON with the
 * run RUN (NULL: none) described (g_free it; it ends in "\n}\n", which
 * tcli_manifest_final replaces); the job id every manifest of a job
 * records, SHA-256 (hex, malloc'd) of the inputs' hashes and the options
 * that shape the programs, without what tells the roles apart (README.md,
 * "Output folders"); S as a JSON string, escaped as jansson would; and
 * manifest.json read back (mode, role, distributed_mode, flags, files:
 * what verify job reads). */
char *cli_manifest_json(const pdt_manifest *m, const pdt_run_info *run);
char *cli_job_id(const pdt_ctx *ctx);
void cli_json_string(GString *g, const char *s);
pdt_manifest *cli_manifest_parse(struct json_t *j);

/* run.c: the description of a run that manifest.json carries. */
typedef struct {
    pdt_run_info info;
    GPtrArray *roles, *paths, *sums, *opt_names, *opt_values, *env_names, *env_values;
} cli_run;
void cli_run_init(cli_run *r);
/* pdio_read, recording PATH and the SHA-256 of its bytes under ROLE. */
ir_program *cli_run_read(cli_run *r, const char *role, const char *path);
/* Records option NAME=VALUE (nothing when VALUE is NULL). */
void cli_run_option(cli_run *r, const char *name, const char *value);
/* The value of environment variable NAME, recorded; NULL when unset or
 * empty.  The only place commands read the environment. */
const char *cli_run_getenv(cli_run *r, const char *name);
/* The finished description (valid until cli_run_free). */
const pdt_run_info *cli_run_info(cli_run *r, const char *const *passes, size_t n_passes);
void cli_run_free(cli_run *r);

#endif
