/* pass.h - the pass interface and the shared pipeline context.
 *
 * A pass edits ctx->main / ctx->startup in memory, or takes them over
 * (leaving empty programs there), and stages the programs it builds for output
 * (pdt_ctx_stage_output).  It never reads or writes files and never sees
 * protobuf-c structs.  It returns PDT_OK, or PDT_EBADINPUT after printing
 * one error naming the block, op or var at fault.  The pipeline runs the
 * verifier after every pass unless ctx->no_verify_each is set. */
#ifndef PDT_PASS_H
#define PDT_PASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../ir/ir.h"
#include "list.h"
#include "options.h"






/* One program a pass wants written.  `stem` is the file name without
 * extension ("trainer_0", "pserver_1.startup"). */
typedef struct {
    const char *stem;
    ir_program *program;    /* owned by the context */
    bool final;             /* no later pass edits or reads it (pdt_ctx_outputs_final) */
} pdt_output;

/* Where the pipeline sends a final output as soon as no later pass will
 * print it (the command writes it to its temporary); the pipeline then
 * frees it.  Returns PDT_OK, or an error after printing its message. */
typedef int (*pdt_output_sink)(void *arg, const char *stem, const ir_program *p);



/* What manifest.json says about the run; filled and owned by the command.
 * Lists are parallel: input_roles[i] ("main", "startup") was read from
 * input_paths[i] and has SHA-256 input_sha256[i] (hex); env_names[i] had
 * env_values[i]; options_names[i] (a flag) was options_values[i]. */
typedef struct {
    const char *version;
    pdt_list input_roles, input_paths, input_sha256;
    pdt_list passes;
    pdt_list option_names, option_values;
    pdt_list env_names, env_values;
} pdt_run_info;

/* How a pipeline runs, besides the passes' options: set from the run
 * family's options (options.c) and read by pipeline.c. */
typedef struct {
    const char *print_after;    /* --print-after=PASS[,PASS] (NULL: none) */
    bool print_after_all;       /* --print-after-all */
    bool print_ops;             /* --print-ops: one line per op, not text form */
    const char *stop_after;     /* --stop-after=PASS (NULL: run every pass) */
    bool text_output;           /* outputs are written as text: NAME.pbtxt, not NAME.pb */
    /* Prints a program for --print-after (text form, or one line per op):
     * the command supplies it because only src/io knows the text form. */
    void (*print_program)(FILE *out, const ir_program *p, bool ops);
    /* Streaming outputs (issue 14 point 4): NULL keeps every output until
     * the pipeline ends. */
    pdt_output_sink write_output;
    void *write_output_arg;
    /* --paddle-version (NULL: auto): the version the ops pdtrans makes are
     * written for (src/passes/era); the pipeline resolves it before the
     * first pass, into era. */
    const char *paddle_version;
    int era;
    /* The main program is written as save_inference_model writes a
     * program load_inference_model read (pdtrans inference): up to 2.3
     * every op in the attr order of that history (era/hash_export.c). */
    bool saved_inference;
    /* Gives back the resident pages of a program's mapped input (a pass
     * that sweeps the ops' kept bytes calls it every few thousand ops, so
     * that the file does not stay in its RSS whole: issue 33); supplied by
     * the command, as only src/io knows the mapping.  NULL: never. */
    void (*drop_input_pages)(const ir_program *p);
} pdt_run_settings;

/* The analyses (passes.def ANALYSIS): results that passes compute once and
 * later passes read, cached in the context by the pass manager (pipeline.c)
 * and dropped after any pass that does not preserve them. */
typedef enum {
#define ANALYSIS(name, ops) PDT_AN_##name,
#include "passes.def"
#undef ANALYSIS
    PDT_N_ANALYSES
} pdt_analysis_id;
#define PDT_AN_BIT(name) (1u << PDT_AN_##name)

struct pdt_ctx;
/* Each family's header: its options and results types, and its init and
 * release of them (families.def lists them). */
#include "families.h"

typedef struct pdt_ctx {
    ir_program *main;
    ir_program *startup;    /* never NULL inside a pipeline (may be empty) */
    const char *main_path;  /* for messages */
    const char *startup_path;

    /* Each pass family's options (pdt_ctx.FIELD) and results, declared in
     * its own header (families.def). */
#define FAMILY(field, type, results, init, release) type field; results
#define FAMILY_RESULTS(name, results, release) results
#include "families.def"
#undef FAMILY_RESULTS
#undef FAMILY
    bool no_verify_each;
    const pdt_run_info *run;    /* NULL: the manifest describes no run */

    pdt_run_settings settings;
    /* The analysis cache (pdt_analysis_get): analyses[id] while valid,
     * built on demand by its create hook; the manager drops it after any
     * pass that does not preserve it. */
    void *analyses[PDT_N_ANALYSES];
    /* Programs passes built for output, not yet handed over: the pipeline
     * hands them to `outputs` only when every pass succeeded, and frees
     * them otherwise (a failing run hands over nothing). */
    size_t n_staged, cap_staged;
    pdt_output *staged;
    bool stopped;               /* --stop-after ended the pipeline */

    size_t n_outputs, cap_outputs;
    pdt_output *outputs;
} pdt_ctx;

typedef struct {
    const char *name;
    const char *summary;        /* one line for `pdtrans passes` */
    int (*run)(pdt_ctx *ctx);
    /* A group (PASS_GROUP in passes.def) stands for the passes this
     * returns, which the pipeline runs one by one; with ctx NULL, every
     * pass it may stand for (whose options it takes).  NULL for a pass. */
    const char *const *(*members)(const pdt_ctx *ctx, size_t *n);
    /* The analyses that stay valid after it (PDT_AN_BIT of each): those
     * it reads, extends or makes; the manager drops every other one after
     * it runs. */
    unsigned preserves;
    /* A sharded pass (SHARDED_PASS) builds outputs only: it changes
     * neither ctx->main nor ctx->startup, and with the analysis `shard_on`
     * narrowed to one shard it builds that shard's part alone (see the
     * pipeline's run_sharded). */
    bool sharded;
    pdt_analysis_id shard_on;
    /* The analyses it reads (PDT_AN_BIT of each): the manager builds each
     * one not cached (its create hook) before the pass runs. */
    unsigned requires;
} pdt_pass;

/* How the manager handles one analysis (passes.def: ANALYSIS(name, ops)).
 * Every hook but `free` may be NULL. */
typedef struct pdt_analysis {
    const char *name;
    /* Builds the analysis from the context into *out: PDT_OK, or the
     * status after an error message (*out NULL).  The manager runs it
     * when a pass requires the analysis and none is cached, and for the
     * pass that makes it afresh (pdt_analysis_fresh). */
    int (*create)(pdt_ctx *ctx, void **out);
    void (*free)(void *a);
    /* Before the manager drops it after a successful pass, at the end of a
     * successful run, or before a fresh one replaces it: whatever it owes
     * the context (a report it makes, say). */
    void (*finish)(void *a);
    /* Before any pass runs: PDT_OK, or PDT_EUSAGE after naming a pass of
     * PASSES (groups replaced by their members) that runs out of order. */
    int (*check_order)(const pdt_ctx *ctx, const pdt_pass *const *passes, size_t n);
    /* Sharding of the passes sharded on it: the number of shards, and the
     * narrowing to shard e (false: not wanted), (size_t)-1 widening it
     * again. */
    size_t (*n_shards)(const void *a);
    bool (*narrow)(void *a, size_t e);
    /* The pipeline is about to free output p (written).  An analysis with
     * this hook tracks outputs: the pipeline writes the remaining ones
     * before it finishes the analysis at the end of the run. */
    void (*output_freed)(void *a, const ir_program *p);
    /* --print-after: its state after pass PASS. */
    void (*print)(const void *a, FILE *out, const char *pass);
    /* What a shard is, for -vv's note ("pserver"). */
    const char *shard_name;
} pdt_analysis;

/* Each registered pass (passes.def) is `int pass_NAME(pdt_ctx *)`; a group
 * has `members_NAME` too. */
#define PASS(name, summary) int pass_##name(pdt_ctx *ctx);
#define PRESERVING_PASS(name, summary, analysis) int pass_##name(pdt_ctx *ctx);
#define MAKING_PASS(name, summary, analysis) int pass_##name(pdt_ctx *ctx);
#define PASS_GROUP(name, summary) int pass_##name(pdt_ctx *ctx); \
    const char *const *members_##name(const pdt_ctx *ctx, size_t *n);
#define ANALYSIS(name, ops) extern const pdt_analysis ops;
#include "passes.def"
#undef ANALYSIS
#undef PASS_GROUP
#undef MAKING_PASS
#undef PRESERVING_PASS
#undef PASS

/* Registry (passes.c): the one list of passes, in pipeline order. */
extern const pdt_pass pdt_passes[];
extern const size_t pdt_n_passes;
const pdt_pass *pdt_pass_find(const char *name);
/* The analyses, indexed by pdt_analysis_id (analyses.c). */
extern const pdt_analysis *const pdt_analyses[];
extern const size_t pdt_n_analyses;
/* Analysis ID of ctx: the cached one, or one built now by its create hook
 * (and cached); NULL after the build's error message. */
void *pdt_analysis_get(pdt_ctx *ctx, pdt_analysis_id id);
/* The cached analysis ID of ctx, or NULL when none is valid (no build). */
void *pdt_analysis_cached(const pdt_ctx *ctx, pdt_analysis_id id);
/* Drops the cached analysis ID (finished first when FINISH). */
void pdt_analysis_drop(pdt_ctx *ctx, pdt_analysis_id id, bool finish);
/* Replaces analysis ID with one built now by its create hook (the old one
 * finished and dropped first): for the pass that makes it (MAKING_PASS).
 * PDT_OK, or the build's status (nothing cached then). */
int pdt_analysis_fresh(pdt_ctx *ctx, pdt_analysis_id id);
/* "; did you mean 'P'?" naming the passes nearest to NAME, or "" (g_free it). */
char *pdt_pass_hint(const char *name);
/* hints.c: "; did you mean 'V'?" naming the vars of B nearest to NAME (or
 * one that holds NAME), or "" (g_free it).  pdt_loss_hint points at the
 * output of the op with op_role Loss first. */
char *pdt_var_hint(const ir_block *b, const char *name);
char *pdt_loss_hint(const ir_block *b, const char *name);

/* Checks main and startup with the gate (pdt_verify_max, first problem
 * only: PDT_EBADINPUT), then runs the named passes in order (a group as
 * its members), verifying after each one unless ctx->no_verify_each (a
 * problem then is a bug: PDT_EINTERNAL), printing after those
 * ctx->settings names and stopping after --stop-after's pass (OK, with
 * ctx->stopped set).  On success the staged outputs are handed over; on
 * failure they are freed.  Returns the first non-zero status; PDT_EUSAGE
 * for an unknown pass, a --print-after or --stop-after pass this pipeline
 * does not run, or a pass run before the one whose analysis it needs (each
 * analysis's check_order). */
int pdt_run_pipeline(pdt_ctx *ctx, const char *const *names, size_t n);
/* Runs a group's members in order without the gate, verification or
 * printing (for a direct call of pass_NAME of a group), then hands over
 * or frees the staged outputs as pdt_run_pipeline does. */
int pdt_run_members(pdt_ctx *ctx, const char *const *names, size_t n);

/* Context lifetime: init zeroes and sets the option tables' defaults; free releases programs
 * and outputs the context owns (main, startup, outputs). */
void pdt_ctx_init(pdt_ctx *ctx);
void pdt_ctx_free(pdt_ctx *ctx);
void pdt_ctx_add_output(pdt_ctx *ctx, const char *stem, ir_program *p);
/* A program for output, built by a pass: owned by the context from now on,
 * handed over with pdt_ctx_add_output when the pipeline succeeds. */
void pdt_ctx_stage_output(pdt_ctx *ctx, const char *stem, ir_program *p);
/* Marks the staged outputs holding progs[0..n) (NULLs skipped) final: no
 * later pass changes or reads them, so that the pipeline may write and
 * free them after the current pass (see pdt_run_settings.write_output). */
void pdt_ctx_outputs_final(pdt_ctx *ctx, ir_program *const *progs, size_t n);
/* Splits "a,b,c" into an interned list (empty items dropped). */
pdt_list pdt_list_split(const char *csv);
void pdt_list_free(pdt_list *l);
/* Appends one item (interned) to l. */
void pdt_list_append(pdt_list *l, const char *item);

#endif
