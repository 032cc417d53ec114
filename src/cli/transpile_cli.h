/* transpile_cli.h - the transpile command's own options, shared by its
 * files: transpile.c (parsing, output) and transpile_env.c
 * (--from-env).  The family's options are in ctx->transpile. */
#ifndef PDT_TRANSPILE_CLI_H
#define PDT_TRANSPILE_CLI_H

#include <stdbool.h>

#include <glib.h>

#include "../io/pdio.h"
#include "../job/job.h"
#include "../passes/pass.h"
#include "cli.h"
#include "optparse.h"

#define TCLI_CMD "transpile"

typedef struct {
    pdt_job *job;           /* the job this command adapts (src/job/job.h) */
    pdt_ctx *ctx;           /* the job's context */
    cli_run run;
    cli_common common;      /* -s, -o, --text as parsed */
    const char *startup_path, *out_dir, *passes;
    bool text, from_env;
    bool clean, print_files;    /* --clean, --print-files (transpile_job.c) */
} tcli_opts;

/* transpile_env.c: fills what flags left unset from the variables Paddle's
 * launchers export, noting in ctx->transpile.src where each came from.
 * Usage errors (exit 2) name the variables.  The family's validate()
 * (src/passes/transpile/validate.c) then checks the result. */
int tcli_from_env(tcli_opts *o);

/* transpile_job.c: the output folder holds one job (README.md, "Output
 * folders").  The options --clean and --print-files; */
extern const pdt_option tcli_job_options[];
extern const size_t tcli_n_job_options;
/* the manifest's name for this call's role (NULL: no manifest); */
const char *tcli_manifest_name(const pdt_ctx *ctx);
/* puts back a set a killed run left half in place, then refuses a folder
 * holding outputs of another job (PDT_EBADINPUT, naming them) unless
 * --clean, when *stale keeps their names for tcli_remove_stale; */
int tcli_check_folder(const tcli_opts *o, const char *job, GPtrArray **stale);
/* adds the removal of every stale file this call does not write; */
void tcli_remove_stale(const tcli_opts *o, pdio_batch *b, GPtrArray *stale);
/* the manifest text with the "job" and "sha256" keys added at its end
 * (g_free); */
char *tcli_manifest_final(const char *manifest, const char *job, const pdio_batch *b);
/* --print-files: every path written, one per line. */
int tcli_print_files(const pdio_batch *b);

/* transpile_size.c: --max-output-size; refuses (PDT_EBADINPUT, naming
 * --trainers) a job whose output's lower bound passes the cap, after MAIN
 * is read and before anything is built. */
int tcli_check_output_size(const tcli_opts *o);

#endif
