/* job.h - the job API: one pdtrans job as a library call.  Set options by
 * family and name (with where each came from), give the inputs, run the
 * passes, and get the output programs and the manifest (manifest.h) in
 * memory.  The `transpile` command and `verify transpile` are thin
 * adapters over it:
 * the command parses flags and the environment, then writes the outputs
 * and the manifest to its folder (JSON is written only there); verify runs
 * the job once per trainer in process and hands the outputs to the
 * reference executor (ex_cluster_from_outputs).  See src/README.md. */
#ifndef PDT_JOB_H
#define PDT_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include "../passes/pass.h"
#include "manifest.h"

typedef struct pdt_job pdt_job;

/* A new job; CMD names it in usage errors ("transpile"). */
pdt_job *pdt_job_new(const char *cmd);
void pdt_job_free(pdt_job *job);
/* The context the passes run on: adapters that store options through the
 * families' tables themselves (cli_parse) fill it here. */
pdt_ctx *pdt_job_ctx(pdt_job *job);

/* Sets option NAME (long name, no "--") of FAMILY ("transpile",
 * "optimizer", ...; NULL: the first family of pdt_option_families that
 * has it, or whose options start with NAME alone) to VALUE (NULL for an
 * option without a value), through the one setter every flag goes
 * through.  SOURCE NULL: a flag the user gave (pdt_job_given), which wins
 * over the environment; otherwise the variable(s) it came from.  PDT_OK,
 * or PDT_EUSAGE after a usage error naming the option. */
int pdt_job_set(pdt_job *job, const char *family, const char *name, const char *value,
                const char *source);
/* Records that option NAME was given as a flag, for an adapter that stored
 * it itself; the transpile family's `given` follows. */
void pdt_job_note_given(pdt_job *job, const char *name);
bool pdt_job_given(const pdt_job *job, const char *name);

/* The families' validate(): the transpile family's, then the optimizer
 * family's when its passes may run (--optimizer, or a custom pipeline). */
int pdt_job_validate(pdt_job *job);

/* Reads the inputs: MAIN, and STARTUP (NULL: an empty startup program).
 * READ reads one (ROLE "main" or "startup"; NULL: pdio_read), so that the
 * command can record what it read; a program without blocks is refused.
 * With --role=all's every trainer, an input that cannot be read again is
 * kept for the other trainers' runs. */
typedef ir_program *(*pdt_job_reader)(void *arg, const char *role, const char *path);
int pdt_job_read_inputs(pdt_job *job, const char *main_path, const char *startup_path,
                        pdt_job_reader read, void *arg);

/* The pipeline: PASSES as given (--passes; the list is the job's from
 * now on), or, without them, pdt_job_default_passes: the transpile passes,
 * after what `pdtrans minimize` runs for a MAIN with no optimizer ops yet
 * and --optimizer (usage errors for minimize options that would have no
 * effect).  Call after reading the inputs. */
void pdt_job_set_passes(pdt_job *job, pdt_list passes);
int pdt_job_default_passes(pdt_job *job);
const pdt_list *pdt_job_passes(const pdt_job *job);

/* Runs the pipeline.  SINK (NULL: none) gets each output as soon as it is
 * final (the outputs are then freed); without one they stay in the job.
 * --role=all with several trainers (pserver mode, the default pipeline, no
 * trainer id given, no --stop-after) runs again per trainer from fresh
 * inputs, as --role=trainer; the first run's manifest lists them all.
 * After --stop-after before any output exists, the outputs are main and
 * startup as the passes left them.  PDT_OK, or the first failure. */
/* Sets transpile.every_trainer (--role=all writes every trainer) from the
 * options and passes; pdt_job_run does it too, so a caller that sizes the
 * output first (transpile's --max-output-size) sees what the run will do. */
void pdt_job_pick_trainers(pdt_job *job);
int pdt_job_run(pdt_job *job, pdt_output_sink sink, void *arg);

/* The outputs not given to a sink, in order (owned by the job). */
const pdt_output *pdt_job_outputs(const pdt_job *job, size_t *n);
/* Takes output STEM over (the caller frees it), or NULL. */
ir_program *pdt_job_take_output(pdt_job *job, const char *stem);
/* The manifest the job's passes made (manifest.h: what was written and
 * where every slice lives; the command writes it as manifest.json with the
 * run, the job id and the file hashes), or NULL; take_ hands it over (the
 * caller frees it with pdt_manifest_free). */
const pdt_manifest *pdt_job_manifest(const pdt_job *job);
pdt_manifest *pdt_job_take_manifest(pdt_job *job);

/* The check of commands that train a program: some var of block 0 is a
 * parameter, or --params names them (PDT_EUSAGE naming CMD otherwise);
 * pdt_job_warn_no_params only warns. */
int pdt_job_check_params(const char *cmd, const pdt_ctx *ctx);
void pdt_job_warn_no_params(const pdt_ctx *ctx);

#endif
