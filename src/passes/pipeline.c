/* pipeline.c - the pass manager: runs passes in order, verifying after
 * each, and keeps the analyses of passes.def: built by their create hook
 * when a pass requires one that is not cached (or afresh for the pass that
 * makes it), cached in the context, finished and dropped after a pass that
 * does not preserve them; sharded passes run shard by shard.  It names no
 * pass family: what an analysis is comes from its pdt_analysis hooks. */
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../progress.h"
#include "../suggest.h"
#include "../ir/alloc.h"
#include "../ir/pmap.h"
#include "../ir/print_ops.h"
#include "../ir/util.h"
#include "pass.h"
#include "era/era.h"
#include "verify.h"

const pdt_pass *pdt_pass_find(const char *name)
{
    for (size_t i = 0; i < pdt_n_passes; i++)
        if (strcmp(pdt_passes[i].name, name) == 0)
            return &pdt_passes[i];
    return NULL;
}

/* Here, not in passes.c: unit tests link their own pass list. */
char *pdt_pass_hint(const char *name)
{
    pdt_near near;
    pdt_near_init(&near, name);
    for (size_t i = 0; i < pdt_n_passes; i++)
        pdt_near_offer(&near, pdt_passes[i].name);
    return pdt_near_hint(&near, "");
}

void *pdt_analysis_cached(const pdt_ctx *ctx, pdt_analysis_id id)
{
    return ctx->analyses[id];
}

/* Analysis ID built by its create hook into the cache, unless cached. */
static int build(pdt_ctx *ctx, pdt_analysis_id id)
{
    if (ctx->analyses[id])
        return PDT_OK;
    void *a = NULL;
    int rc = pdt_analyses[id]->create(ctx, &a);
    if (rc != PDT_OK) {
        if (a)
            pdt_analyses[id]->free(a);
        return rc;
    }
    ctx->analyses[id] = a;
    return PDT_OK;
}

void *pdt_analysis_get(pdt_ctx *ctx, pdt_analysis_id id)
{
    return build(ctx, id) == PDT_OK ? ctx->analyses[id] : NULL;
}

void pdt_analysis_drop(pdt_ctx *ctx, pdt_analysis_id id, bool finish)
{
    void *a = ctx->analyses[id];
    if (!a)
        return;
    if (finish && pdt_analyses[id]->finish)
        pdt_analyses[id]->finish(a);
    pdt_analyses[id]->free(a);
    ctx->analyses[id] = NULL;
}

int pdt_analysis_fresh(pdt_ctx *ctx, pdt_analysis_id id)
{
    pdt_analysis_drop(ctx, id, true);
    return build(ctx, id);
}

/* Before a pass: each analysis it requires, built unless cached. */
static int require(pdt_ctx *ctx, unsigned requires)
{
    int rc = PDT_OK;
    for (size_t id = 0; id < pdt_n_analyses && rc == PDT_OK; id++)
        if (requires & (1u << id))
            rc = build(ctx, (pdt_analysis_id)id);
    return rc;
}

/* After a pass: every analysis it does not preserve is dropped, finished
 * first when the pass succeeded. */
static void invalidate(pdt_ctx *ctx, unsigned preserves, bool ok)
{
    for (size_t id = 0; id < pdt_n_analyses; id++)
        if (!(preserves & (1u << id)))
            pdt_analysis_drop(ctx, (pdt_analysis_id)id, ok);
}

/* Whether a valid analysis tracks the outputs (an output_freed hook). */
static bool outputs_tracked(const pdt_ctx *ctx)
{
    for (size_t id = 0; id < pdt_n_analyses; id++)
        if (ctx->analyses[id] && pdt_analyses[id]->output_freed)
            return true;
    return false;
}

/* The gate: the structure every pass relies on (block idx, parent links,
 * BLOCK/BLOCKS attrs naming nested blocks once each, dims whose product
 * fits in int64, names that resolve) is checked once on the input, so a
 * pass never sees a malformed program and an input problem is reported as
 * one message naming the file, block, op and attr or var. */
static int gate(const pdt_ctx *ctx)
{
    if (pdt_verify_max(ctx->main, ctx->main_path, stderr, 1))
        return PDT_EBADINPUT;
    if (ctx->startup && pdt_verify_max(ctx->startup, ctx->startup_path, stderr, 1))
        return PDT_EBADINPUT;
    /* Dims below -1 pass as unknown dims, with one note per program. */
    pdt_verify_note_dims(ctx->main, ctx->main_path, stderr);
    if (ctx->startup)
        pdt_verify_note_dims(ctx->startup, ctx->startup_path, stderr);
    return PDT_OK;
}

/* After a pass, a problem in a program that passed the gate is pdtrans's
 * fault, not the input's: it gets its own exit status. */
static int verify_after(const pdt_ctx *ctx, const pdt_pass *pass)
{
    size_t errs = 0;
    /* A sharded pass changes neither input (SHARDED_PASS): they stand as
     * the last pass left them, verified then. */
    if (!pass->sharded) {
        errs += pdt_verify(ctx->main, ctx->main_path, stderr);
        if (ctx->startup)
            errs += pdt_verify(ctx->startup, ctx->startup_path, stderr);
    }
    for (size_t k = 0; k < ctx->n_outputs; k++)
        errs += pdt_verify(ctx->outputs[k].program, ctx->outputs[k].stem, stderr);
    for (size_t k = 0; k < ctx->n_staged; k++)
        errs += pdt_verify(ctx->staged[k].program, ctx->staged[k].stem, stderr);
    if (!errs)
        return PDT_OK;
    pdt_error("BUG: pass '%s' made an invalid program from valid input (%zu problem%s above); "
              "please report it with the input and the command line",
              pass->name, errs, errs == 1 ? "" : "s");
    return PDT_EINTERNAL;
}

/* A pipeline's passes with the groups replaced by their members; group[i]
 * is the group pass i came from, or NULL. */
typedef struct {
    size_t n;
    const pdt_pass **pass;
    const pdt_pass **group;
} flat_list;

static void flat_free(flat_list *f)
{
    free(f->pass);
    free(f->group);
}

static int flatten(const pdt_ctx *ctx, const char *const *names, size_t n, flat_list *f)
{
    size_t cap = n + 1;
    f->n = 0;
    f->pass = xcalloc(cap, sizeof *f->pass);
    f->group = xcalloc(cap, sizeof *f->group);
    for (size_t i = 0; i < n; i++) {
        const pdt_pass *p = pdt_pass_find(names[i]);
        if (!p) {
            char *hint = pdt_pass_hint(names[i]);
            pdt_error("unknown pass '%s' (see 'pdtrans passes')%s", names[i], hint);
            g_free(hint);
            return PDT_EUSAGE;
        }
        size_t nm = 1;
        const char *const *members = p->members ? p->members(ctx, &nm) : NULL;
        f->pass = xrealloc(f->pass, (cap += nm) * sizeof *f->pass);
        f->group = xrealloc(f->group, cap * sizeof *f->group);
        for (size_t k = 0; k < nm; k++) {
            f->pass[f->n] = members ? pdt_pass_find(members[k]) : p;
            f->group[f->n++] = members ? p : NULL;
        }
    }
    return PDT_OK;
}

/* Whether NAME (a pass or a group) is in the flattened list; *last gets
 * the index of its (last member's) entry. */
static bool flat_has(const flat_list *f, const char *name, size_t *last)
{
    bool found = false;
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->pass[i]->name, name) || (f->group[i] && !strcmp(f->group[i]->name, name))) {
            *last = i;
            found = true;
        }
    return found;
}

/* --print-after and --stop-after must name passes this pipeline runs:
 * marks print[i] / returns the stop index (f->n: none). */
static int mark_settings(const pdt_run_settings *rs, const flat_list *f, bool *print,
                         size_t *stop)
{
    pdt_list names = pdt_list_split(rs->print_after);
    int rc = PDT_OK;
    size_t at = 0;
    for (size_t i = 0; i < names.n && rc == PDT_OK; i++) {
        if (!pdt_pass_find(names.items[i])) {
            char *hint = pdt_pass_hint(names.items[i]);
            pdt_error("--print-after: unknown pass '%s' (see 'pdtrans passes')%s",
                      names.items[i], hint);
            g_free(hint);
            rc = PDT_EUSAGE;
        } else if (!flat_has(f, names.items[i], &at)) {
            pdt_error("--print-after: this pipeline does not run pass '%s'", names.items[i]);
            rc = PDT_EUSAGE;
        } else {
            print[at] = true;
        }
    }
    pdt_list_free(&names);
    for (size_t i = 0; i < f->n; i++)
        print[i] |= rs->print_after_all;
    *stop = f->n;
    if (rc == PDT_OK && rs->stop_after) {
        if (!pdt_pass_find(rs->stop_after)) {
            char *hint = pdt_pass_hint(rs->stop_after);
            pdt_error("--stop-after: unknown pass '%s' (see 'pdtrans passes')%s",
                      rs->stop_after, hint);
            g_free(hint);
            rc = PDT_EUSAGE;
        } else if (!flat_has(f, rs->stop_after, stop)) {
            pdt_error("--stop-after: this pipeline does not run pass '%s'", rs->stop_after);
            rc = PDT_EUSAGE;
        }
    }
    return rc;
}

static void print_one(const pdt_ctx *ctx, const char *pass, const char *what,
                      const char *name, const ir_program *p)
{
    fprintf(stderr, "*** after pass '%s': %s '%s' ***\n", pass, what, name);
    if (ctx->settings.print_program && !ctx->settings.print_ops)
        ctx->settings.print_program(stderr, p, false);
    else
        ir_print_ops(stderr, p);
}

/* --print-after: the programs as they are now (main, startup, the outputs
 * built so far) and the valid analyses that print themselves. */
static void print_after(const pdt_ctx *ctx, const pdt_pass *pass)
{
    pdt_progress_clear_line();
    print_one(ctx, pass->name, "main program", ctx->main_path, ctx->main);
    if (ctx->startup)
        print_one(ctx, pass->name, "startup program", ctx->startup_path, ctx->startup);
    for (size_t k = 0; k < ctx->n_staged; k++)
        print_one(ctx, pass->name, "output", ctx->staged[k].stem, ctx->staged[k].program);
    for (size_t id = 0; id < pdt_n_analyses; id++)
        if (ctx->analyses[id] && pdt_analyses[id]->print)
            pdt_analyses[id]->print(ctx->analyses[id], stderr, pass->name);
}

/* Streaming: the final outputs go to the sink and are freed, unless a
 * later pass prints them (--print-after shows every output built so far).
 * They were verified after the pass that completed them. */
static int write_final(pdt_ctx *ctx, bool printed_later)
{
    pdt_output_sink sink = ctx->settings.write_output;
    if (!sink || printed_later)
        return PDT_OK;
    int rc = PDT_OK;
    size_t kept = 0;
    for (size_t k = 0; k < ctx->n_staged; k++) {
        pdt_output o = ctx->staged[k];
        if (rc != PDT_OK || !o.final) {
            ctx->staged[kept++] = o;
            continue;
        }
        /* Written now, so its made ops take the target version first. */
        pdt_era_apply_program(ctx, o.program, ctx->settings.era);
        pdt_phase left = pdt_progress_enter(PDT_PHASE_WRITE, NULL);
        rc = sink(ctx->settings.write_output_arg, o.stem, o.program);
        pdt_progress_enter(left.kind, left.name);
        for (size_t id = 0; id < pdt_n_analyses; id++)
            if (ctx->analyses[id] && pdt_analyses[id]->output_freed)
                pdt_analyses[id]->output_freed(ctx->analyses[id], o.program);
        ir_program_free(o.program);
    }
    ctx->n_staged = kept;
    return rc;
}

/* At the end of a run with an analysis that tracks outputs (the transpile
 * plan), the outputs not yet written (the trainer's, built last) are
 * written and freed before the analysis is finished (manifest.json is
 * made): its text (47 MB at 1M ops) and the trainer are then never alive
 * together (issue 14).  The plan keeps what the manifest reads of the
 * trainer (its output_freed hook).  The files land in the same order as
 * when the command wrote them after the run. */
static int write_rest(pdt_ctx *ctx)
{
    if (!outputs_tracked(ctx) || !ctx->settings.write_output)
        return PDT_OK;
    for (size_t k = 0; k < ctx->n_staged; k++)
        ctx->staged[k].final = true;
    return write_final(ctx, false);
}

/* The end of a successful run: each valid analysis gives the context what
 * it owes it (the transpile plan: the manifest); they stay valid. */
static void finish_all(pdt_ctx *ctx)
{
    for (size_t id = 0; id < pdt_n_analyses; id++)
        if (ctx->analyses[id] && pdt_analyses[id]->finish)
            pdt_analyses[id]->finish(ctx->analyses[id]);
}

static void hand_over(pdt_ctx *ctx, bool keep)
{
    for (size_t k = 0; k < ctx->n_staged; k++) {
        if (keep)
            pdt_ctx_add_output(ctx, ctx->staged[k].stem, ctx->staged[k].program);
        else
            ir_program_free(ctx->staged[k].program);
    }
    ctx->n_staged = 0;
}

static int run_one(pdt_ctx *ctx, const pdt_pass *pass, const pdt_pass *group, bool first,
                   bool quiet)
{
    if (quiet)
        ;
    else if (!group || pdt_verbosity > 1)
        pdt_note("running pass '%s'", pass->name);
    else if (first)
        pdt_note("running pass '%s'", group->name);
    pdt_alloc_doing("running pass '%s'", pass->name);
    pdt_progress_enter(PDT_PHASE_PASS, pass->name);
    int rc = require(ctx, pass->requires);
    if (rc == PDT_OK)
        rc = pass->run(ctx);
    invalidate(ctx, pass->preserves, rc == PDT_OK);
    pdt_progress_enter(PDT_PHASE_VERIFY, NULL);
    if (rc == PDT_OK && !ctx->no_verify_each)
        rc = verify_after(ctx, pass);
    return rc;
}

/* The number of shards of analysis ID (0 when it is not valid). */
static size_t n_shards(const pdt_ctx *ctx, pdt_analysis_id id)
{
    const pdt_analysis *an = pdt_analyses[id];
    return ctx->analyses[id] && an->n_shards ? an->n_shards(ctx->analyses[id]) : 0;
}

/* End of the run of sharded passes starting at i, all on one analysis,
 * that may be run shard by shard: i itself when there is none of two or
 * more, or when something must see all shards' outputs at once
 * (--print-after of one of them or of a later pass; --stop-after inside
 * the run). */
static size_t sharded_end(const pdt_ctx *ctx, const flat_list *f, const bool *print,
                          const bool *printed_later, size_t stop, size_t i)
{
    size_t j = i;
    while (j < f->n && f->pass[j]->sharded && f->pass[j]->shard_on == f->pass[i]->shard_on &&
           !print[j] && (j == i || j - 1 != stop))
        j++;
    if (j - i < 2 || printed_later[j - 1] || !ctx->settings.write_output ||
        n_shards(ctx, f->pass[i]->shard_on) < 2)
        return i;
    return j;
}

/* Runs passes [i, j) once per shard, writing and freeing each shard's
 * outputs before the next is built: with four pservers (the transpile
 * plan's shards), --role=all then holds one pserver's programs at a time
 * instead of all of them (issue 14).  The outputs, messages and files are
 * those of running each pass once over all shards. */
static int run_sharded(pdt_ctx *ctx, const flat_list *f, size_t i, size_t j)
{
    int rc = PDT_OK;
    pdt_analysis_id id = f->pass[i]->shard_on;
    const pdt_analysis *an = pdt_analyses[id];
    size_t n = n_shards(ctx, id);
    bool noted = false;
    for (size_t e = 0; e < n && rc == PDT_OK; e++) {
        /* a pass may have dropped it (a failure stops the loop first) */
        if (!ctx->analyses[id] || !an->narrow(ctx->analyses[id], e))
            continue;
        if (pdt_verbosity > 1)
            pdt_note("passes '%s' to '%s' for %s %zu alone", f->pass[i]->name,
                     f->pass[j - 1]->name, an->shard_name ? an->shard_name : "shard", e);
        for (size_t k = i; k < j && rc == PDT_OK; k++)
            rc = run_one(ctx, f->pass[k], f->group[k], k == 0 || f->group[k - 1] != f->group[k],
                         noted);
        noted = true;
        if (rc == PDT_OK)
            rc = write_final(ctx, false);
    }
    if (ctx->analyses[id])
        an->narrow(ctx->analyses[id], (size_t)-1);
    return rc;
}

int pdt_run_pipeline(pdt_ctx *ctx, const char *const *names, size_t n)
{
    flat_list f;
    int rc = flatten(ctx, names, n, &f);
    bool *print = xcalloc(f.n + 1, sizeof *print);
    bool *printed_later = xcalloc(f.n + 1, sizeof *printed_later);
    size_t stop = f.n;
    if (rc == PDT_OK)
        rc = mark_settings(&ctx->settings, &f, print, &stop);
    for (size_t id = 0; id < pdt_n_analyses && rc == PDT_OK; id++)
        if (pdt_analyses[id]->check_order)
            rc = pdt_analyses[id]->check_order(ctx, f.pass, f.n);
    for (size_t i = f.n; i-- > 0;)
        printed_later[i] = print[i + 1] || printed_later[i + 1];
    if (rc == PDT_OK) {
        pdt_alloc_doing("checking '%s'", ctx->main_path);
        pdt_progress_enter(PDT_PHASE_CHECK, NULL);
        rc = gate(ctx);
    }
    /* The version the made ops are written for, read off the input before
     * any pass changes or takes it (issue 30). */
    ctx->settings.era = pdt_era_resolve(ctx);
    for (size_t i = 0; i < f.n && rc == PDT_OK; i++) {
        size_t j = sharded_end(ctx, &f, print, printed_later, stop, i);
        if (j > i) {
            rc = run_sharded(ctx, &f, i, j);
            i = j - 1;
        } else {
            rc = run_one(ctx, f.pass[i], f.group[i], i == 0 || f.group[i - 1] != f.group[i],
                         false);
        }
        if (rc == PDT_OK && print[i])
            print_after(ctx, f.pass[i]);
        if (rc == PDT_OK)
            rc = write_final(ctx, printed_later[i] && i != stop);
        if (rc == PDT_OK && i == stop) {
            ctx->stopped = true;
            break;
        }
    }
    /* Last: the ops the passes made, as the target version writes them. */
    if (rc == PDT_OK)
        pdt_era_apply(ctx, ctx->settings.era);
    if (rc == PDT_OK && !ctx->stopped)
        rc = write_rest(ctx);
    if (rc == PDT_OK)
        finish_all(ctx);
    hand_over(ctx, rc == PDT_OK);
    /* What the command does next is encoding and writing the outputs. */
    pdt_progress_enter(PDT_PHASE_WRITE, NULL);
    /* The analysis cache: nothing reads it once the passes are done (they
     * were finished above), and the outputs written next need the memory. */
    invalidate(ctx, 0, false);
    /* Likewise the intern table (the names stay): 40 MiB at backward's
     * 1M ops, when its output is written. */
    ir_intern_drop_table();
    free(print);
    free(printed_later);
    flat_free(&f);
    return rc;
}

int pdt_run_members(pdt_ctx *ctx, const char *const *names, size_t n)
{
    int rc = PDT_OK;
    for (size_t i = 0; i < n && rc == PDT_OK; i++) {
        const pdt_pass *pass = pdt_pass_find(names[i]);
        rc = pass ? require(ctx, pass->requires) : PDT_EUSAGE;
        if (rc == PDT_OK)
            rc = pass->run(ctx);
    }
    if (rc == PDT_OK)
        finish_all(ctx);
    hand_over(ctx, rc == PDT_OK);
    return rc;
}

void pdt_ctx_init(pdt_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    pdt_options_set_defaults(ctx);
#define FAMILY(field, type, results, init, release) init(ctx);
#define FAMILY_RESULTS(name, results, release)
#include "families.def"
#undef FAMILY_RESULTS
#undef FAMILY
    ctx->main_path = "main program";
    ctx->startup_path = "startup program";
}

void pdt_ctx_free(pdt_ctx *ctx)
{
    ir_program_free(ctx->main);
    ir_program_free(ctx->startup);
    for (size_t i = 0; i < ctx->n_outputs; i++)
        ir_program_free(ctx->outputs[i].program);
    free(ctx->outputs);
    hand_over(ctx, false);
    free(ctx->staged);
    invalidate(ctx, 0, false);
#define FAMILY(field, type, results, init, release) release(ctx);
#define FAMILY_RESULTS(name, results, release) release(ctx);
#include "families.def"
#undef FAMILY_RESULTS
#undef FAMILY
    memset(ctx, 0, sizeof *ctx);
}

void pdt_ctx_stage_output(pdt_ctx *ctx, const char *stem, ir_program *p)
{
    if (ctx->n_staged == ctx->cap_staged) {
        ctx->cap_staged = ctx->cap_staged ? ctx->cap_staged * 2 : 8;
        ctx->staged = xrealloc(ctx->staged, ctx->cap_staged * sizeof *ctx->staged);
    }
    ctx->staged[ctx->n_staged].stem = ir_intern(stem);
    ctx->staged[ctx->n_staged].program = p;
    ctx->staged[ctx->n_staged].final = false;
    ctx->n_staged++;
}

void pdt_ctx_outputs_final(pdt_ctx *ctx, ir_program *const *progs, size_t n)
{
    pmap done = PMAP_INIT;
    for (size_t i = 0; i < n; i++)
        if (progs[i])
            pmap_add(&done, progs[i]);
    for (size_t k = 0; k < ctx->n_staged; k++)
        if (pmap_has(&done, ctx->staged[k].program))
            ctx->staged[k].final = true;
    pmap_free(&done);
}

void pdt_ctx_add_output(pdt_ctx *ctx, const char *stem, ir_program *p)
{
    if (ctx->n_outputs == ctx->cap_outputs) {
        ctx->cap_outputs = ctx->cap_outputs ? ctx->cap_outputs * 2 : 8;
        ctx->outputs = xrealloc(ctx->outputs, ctx->cap_outputs * sizeof *ctx->outputs);
    }
    ctx->outputs[ctx->n_outputs].stem = ir_intern(stem);
    ctx->outputs[ctx->n_outputs].program = p;
    ctx->n_outputs++;
}

pdt_list pdt_list_split(const char *csv)
{
    pdt_list l = {0, NULL};
    if (!csv)
        return l;
    size_t cap = 1;
    for (const char *c = csv; *c; c++)
        cap += *c == ',';
    l.items = xcalloc(cap, sizeof *l.items);
    const char *start = csv;
    for (const char *c = csv;; c++) {
        if (*c == ',' || *c == '\0') {
            if (c > start)
                l.items[l.n++] = ir_intern_n(start, (size_t)(c - start));
            if (*c == '\0')
                break;
            start = c + 1;
        }
    }
    return l;
}

void pdt_list_append(pdt_list *l, const char *item)
{
    l->items = xrealloc(l->items, (l->n + 1) * sizeof *l->items);
    l->items[l->n++] = ir_intern(item);
}

void pdt_list_free(pdt_list *l)
{
    free(l->items);
    l->items = NULL;
    l->n = 0;
}
