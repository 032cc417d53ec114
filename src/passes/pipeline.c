/* pipeline.c - running passes in order, with verification after each. */
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../ir/alloc.h"
#include "../ir/tensors.h"
#include "../ir/util.h"
#include "pass.h"
#include "verify.h"

const pdt_pass *pdt_pass_find(const char *name)
{
    for (size_t i = 0; i < pdt_n_passes; i++)
        if (strcmp(pdt_passes[i].name, name) == 0)
            return &pdt_passes[i];
    return NULL;
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
    return PDT_OK;
}

/* After a pass, a problem in a program that passed the gate is pdtrans's
 * fault, not the input's: it gets its own exit status. */
static int verify_after(const pdt_ctx *ctx, const pdt_pass *pass)
{
    size_t errs = pdt_verify_output(ctx->main, ctx->main_path, stderr);
    if (ctx->startup)
        errs += pdt_verify_output(ctx->startup, ctx->startup_path, stderr);
    for (size_t k = 0; k < ctx->n_outputs; k++)
        errs += pdt_verify_output(ctx->outputs[k].program, ctx->outputs[k].stem, stderr);
    if (!errs)
        return PDT_OK;
    pdt_error("BUG: pass '%s' made an invalid program from valid input (%zu problem%s above); "
              "please report it with the input and the command line",
              pass->name, errs, errs == 1 ? "" : "s");
    return PDT_EINTERNAL;
}

int pdt_run_pipeline(pdt_ctx *ctx, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!pdt_pass_find(names[i])) {
            pdt_error("unknown pass '%s' (see 'pdtrans passes')", names[i]);
            return PDT_EUSAGE;
        }
    pdt_alloc_doing("checking '%s'", ctx->main_path);
    int rc = gate(ctx);
    for (size_t i = 0; i < n && rc == PDT_OK; i++) {
        const pdt_pass *pass = pdt_pass_find(names[i]);
        pdt_note("running pass '%s'", pass->name);
        pdt_alloc_doing("running pass '%s'", pass->name);
        rc = pass->run(ctx);
        if (rc == PDT_OK && !ctx->no_verify_each)
            rc = verify_after(ctx, pass);
    }
    return rc;
}

void pdt_ctx_init(pdt_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    pdt_options_set_defaults(ctx);
    ctx->trainers = 1;      /* what --trainers resolves to when not given */
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
    free(ctx->manifest_json);
    ir_tensors_free(ctx->param_values);
    free(ctx->memory.log);
    pdt_list_free(&ctx->memory.skip);
    pdt_backward_opts *bw = &ctx->backward;
    pdt_list *lists[] = {&bw->params,
                         &bw->no_grad,
                         &bw->checkpoints,
                         &bw->targets,
                         &bw->inputs,
                         &bw->target_grads,
                         &ctx->bw_params,
                         &ctx->bw_grads,
                         &ctx->pservers,
                         &ctx->trainer_endpoints,
                         &ctx->optim.param_regularizations};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        pdt_list_free(lists[i]);
    memset(ctx, 0, sizeof *ctx);
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
