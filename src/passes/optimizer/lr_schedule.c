/* lr_schedule.c - the `lr_schedule` pass: Paddle 1.8's fluid.layers
 * learning-rate schedulers (exponential, natural_exp, inverse_time,
 * polynomial, piecewise, noam, cosine: --lr-schedule) and linear_lr_warmup
 * around any of them or around the optimizer's constant rate
 * (--lr-warmup), whose result the optimizer then takes as its learning
 * rate.  This file reads the SPECs (keys are the Python argument names)
 * and places the ops; lr_decay.c builds them.  The user calls these
 * layers after building the net and before minimize, so the ops go at the
 * end of the forward part (before the first backward op), except the step
 * counter's increment, which autoincreased_step_counter prepends to
 * block 0. */
#include <glib.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/util.h"
#include "../../suggest.h"
#include "lr_schedule.h"

/* How a key is read and checked. */
enum {
    K_BASE = 1,     /* defaults to the optimizer's learning_rate ("lr" works too) */
    K_REQ = 2,      /* the Python function has no default */
    K_POS = 4,      /* must be more than 0 */
    K_NONNEG = 8,   /* must be at least 0 */
    K_BOOL = 16,
    K_LIST = 32,    /* piecewise's number lists */
};

typedef struct {
    const char *key;    /* the Python argument name */
    size_t off;         /* its field in lr_cfg */
    double dflt;        /* Python's default */
    int flags;
} lr_key;

#define F(f) offsetof(lr_cfg, f)

/* exponential_decay, natural_exp_decay, inverse_time_decay(learning_rate,
 * decay_steps, decay_rate, staircase=False) */
static const lr_key decay_keys[] = {
    {"learning_rate", F(learning_rate), 0, K_BASE},
    {"decay_steps", F(decay_steps), 0, K_REQ | K_POS},
    {"decay_rate", F(decay_rate), 0, K_REQ | K_NONNEG},
    {"staircase", F(staircase), 0, K_BOOL},
    {NULL, 0, 0, 0}};
/* polynomial_decay(learning_rate, decay_steps, end_learning_rate=0.0001,
 * power=1.0, cycle=False) */
static const lr_key polynomial_keys[] = {
    {"learning_rate", F(learning_rate), 0, K_BASE},
    {"decay_steps", F(decay_steps), 0, K_REQ | K_POS},
    {"end_learning_rate", F(end_learning_rate), 0.0001, 0},
    {"power", F(power), 1.0, 0},
    {"cycle", F(cycle), 0, K_BOOL},
    {NULL, 0, 0, 0}};
/* piecewise_decay(boundaries, values) */
static const lr_key piecewise_keys[] = {
    {"boundaries", 0, 0, K_LIST},
    {"values", 0, 0, K_LIST},
    {NULL, 0, 0, 0}};
/* noam_decay(d_model, warmup_steps, learning_rate=1.0) */
static const lr_key noam_keys[] = {
    {"d_model", F(d_model), 0, K_REQ | K_POS},
    {"warmup_steps", F(warmup_steps), 0, K_REQ | K_POS},
    {"learning_rate", F(learning_rate), 1.0, 0},
    {NULL, 0, 0, 0}};
/* cosine_decay(learning_rate, step_each_epoch, epochs) */
static const lr_key cosine_keys[] = {
    {"learning_rate", F(learning_rate), 0, K_BASE},
    {"step_each_epoch", F(step_each_epoch), 0, K_REQ | K_POS},
    {"epochs", F(epochs), 0, K_REQ | K_POS},
    {NULL, 0, 0, 0}};
/* linear_lr_warmup(learning_rate, warmup_steps, start_lr, end_lr); the
 * learning_rate key only without --lr-schedule (else the schedule). */
static const lr_key warmup_keys[] = {
    {"warmup_steps", F(wu_steps), 0, K_REQ | K_POS},
    {"start_lr", F(wu_start), 0, K_REQ},
    {"end_lr", F(wu_end), 0, K_REQ},
    {"learning_rate", F(wu_rate), 0, K_BASE},
    {NULL, 0, 0, 0}};

static const struct {
    const char *name;
    lr_kind kind;
    const lr_key *keys;
} kinds[] = {
    {"exponential", LR_EXPONENTIAL, decay_keys},   {"natural_exp", LR_NATURAL_EXP, decay_keys},
    {"inverse_time", LR_INVERSE_TIME, decay_keys}, {"polynomial", LR_POLYNOMIAL, polynomial_keys},
    {"piecewise", LR_PIECEWISE, piecewise_keys},   {"noam", LR_NOAM, noam_keys},
    {"cosine", LR_COSINE, cosine_keys},
};
#define N_KINDS (sizeof kinds / sizeof *kinds)

void lr_cfg_free(lr_cfg *c)
{
    free(c->boundaries);
    free(c->values);
    c->boundaries = c->values = NULL;
}

/* A key the schedule does not take: the nearest ones and the whole list. */
static int unknown_keys(opt_spec *s, const lr_key *keys)
{
    for (size_t i = 0; i < s->n; i++) {
        bool known = false;
        for (const lr_key *k = keys; k->key && !known; k++)
            known = !strcmp(s->keys[i], k->key) ||
                    ((k->flags & K_BASE) && !strcmp(s->keys[i], "lr"));
        if (known)
            continue;
        pdt_near near;
        pdt_near_init(&near, s->keys[i]);
        GString *all = g_string_new(NULL);
        for (const lr_key *k = keys; k->key; k++) {
            pdt_near_offer(&near, k->key);
            g_string_append_printf(all, "%s%s", all->len ? ", " : "", k->key);
        }
        char *hint = pdt_near_hint(&near, "");
        pdt_usage_error(s->cmd, "option '%s': unknown key '%s' for '%s'%s (its keys: %s)",
                        s->flag, s->keys[i], s->kind, hint, all->str);
        g_free(hint);
        g_string_free(all, TRUE);
        return PDT_EUSAGE;
    }
    return PDT_OK;
}

/* Reads every key of the table into c, then checks the values. */
static int read_keys(opt_spec *s, const lr_key *keys, double base, lr_cfg *c)
{
    int rc = unknown_keys(s, keys);
    for (const lr_key *k = keys; k->key && rc == PDT_OK; k++) {
        void *field = (char *)c + k->off;
        if (k->flags & K_BOOL)
            rc = opt_spec_bool(s, k->key, false, field);
        else if (!(k->flags & K_LIST))
            rc = opt_spec_double(s, k->key, (k->flags & K_BASE) ? "lr" : NULL,
                                 (k->flags & K_REQ)    ? NAN
                                 : (k->flags & K_BASE) ? base
                                                       : k->dflt,
                                 field);
    }
    for (const lr_key *k = keys; k->key && rc == PDT_OK; k++) {
        if (k->flags & (K_BOOL | K_LIST))
            continue;
        double v = *(const double *)(const void *)((const char *)c + k->off);
        if (isnan(v)) {
            pdt_usage_error(s->cmd, "option '%s': key '%s' is required for '%s'", s->flag, k->key,
                            s->kind);
            rc = PDT_EUSAGE;
        } else if ((k->flags & K_POS) && !(v > 0)) {
            pdt_usage_error(s->cmd, "option '%s': key '%s' must be more than 0, not %g", s->flag,
                            k->key, v);
            rc = PDT_EUSAGE;
        } else if ((k->flags & K_NONNEG) && v < 0) {
            pdt_usage_error(s->cmd, "option '%s': key '%s' must be at least 0, not %g", s->flag,
                            k->key, v);
            rc = PDT_EUSAGE;
        }
    }
    return rc;
}

static int read_piecewise(opt_spec *s, lr_cfg *c)
{
    int rc = opt_spec_doubles(s, "boundaries", &c->boundaries, &c->n_boundaries);
    if (rc == PDT_OK)
        rc = opt_spec_doubles(s, "values", &c->values, &c->n_values);
    if (rc == PDT_OK && c->n_values != c->n_boundaries + 1) {
        pdt_usage_error(s->cmd, "option '%s': key 'values' needs one more item than "
                        "'boundaries' (%zu, not %zu)", s->flag, c->n_boundaries + 1, c->n_values);
        rc = PDT_EUSAGE;
    }
    for (size_t i = 1; rc == PDT_OK && i < c->n_boundaries; i++)
        if (c->boundaries[i] < c->boundaries[i - 1]) {
            pdt_usage_error(s->cmd, "option '%s': key 'boundaries' must not decrease (%g after "
                            "%g)", s->flag, c->boundaries[i], c->boundaries[i - 1]);
            rc = PDT_EUSAGE;
        }
    return rc;
}

static int parse_schedule(const char *cmd, const char *text, double base, lr_cfg *c)
{
    opt_spec s;
    int rc = opt_spec_parse(cmd, "--lr-schedule", text, &s);
    if (rc != PDT_OK)
        return rc;
    size_t i = 0;
    while (i < N_KINDS && strcmp(kinds[i].name, s.kind))
        i++;
    if (i == N_KINDS) {
        pdt_near near;
        pdt_near_init(&near, s.kind);
        GString *all = g_string_new(NULL);
        /* A Python name (exponential_decay) means that schedule. */
        size_t len = strlen(s.kind);
        bool python = len > 6 && !strcmp(s.kind + len - 6, "_decay");
        for (size_t k = 0; k < N_KINDS; k++) {
            if (python && strlen(kinds[k].name) == len - 6 &&
                !strncmp(s.kind, kinds[k].name, len - 6)) {
                near.best[0] = kinds[k].name;
                near.n_best = 1;
                near.dist = 0;
            }
            pdt_near_offer(&near, kinds[k].name);
            g_string_append_printf(all, "%s%s", k ? ", " : "", kinds[k].name);
        }
        char *hint = pdt_near_hint(&near, "");
        pdt_usage_error(cmd, "option '--lr-schedule': unknown schedule '%s'%s (%s)", s.kind, hint,
                        all->str);
        g_free(hint);
        g_string_free(all, TRUE);
        rc = PDT_EUSAGE;
    } else {
        c->kind = kinds[i].kind;
        rc = read_keys(&s, kinds[i].keys, base, c);
        if (rc == PDT_OK && c->kind == LR_PIECEWISE)
            rc = read_piecewise(&s, c);
    }
    if (rc == PDT_OK)
        rc = opt_spec_finish(&s);
    opt_spec_free(&s);
    return rc;
}

/* --lr-warmup=KEY=VALUE,...: a SPEC without a kind, read as
 * linear_lr_warmup's. */
static int parse_warmup(const char *cmd, const char *text, bool scheduled, double base,
                        lr_cfg *c)
{
    char *spec = g_strdup_printf("linear_lr_warmup:%s", text ? text : "");
    opt_spec s;
    int rc = text && *text ? opt_spec_parse(cmd, "--lr-warmup", spec, &s)
                           : opt_spec_parse(cmd, "--lr-warmup", text, &s);
    g_free(spec);
    if (rc != PDT_OK)
        return rc;
    c->warmup = true;
    rc = read_keys(&s, warmup_keys, base, c);
    for (size_t i = 0; rc == PDT_OK && scheduled && i < s.n; i++)
        if (!strcmp(s.keys[i], "learning_rate") || !strcmp(s.keys[i], "lr")) {
            pdt_usage_error(cmd, "option '--lr-warmup': key '%s' conflicts with "
                            "'--lr-schedule', whose rate is the one warmed up", s.keys[i]);
            rc = PDT_EUSAGE;
        }
    if (rc == PDT_OK)
        rc = opt_spec_finish(&s);
    opt_spec_free(&s);
    return rc;
}

int lr_cfg_parse(const char *cmd, const char *spec, const char *warmup, const char *optimizer,
                 lr_cfg *c)
{
    memset(c, 0, sizeof *c);
    double base = 0.001;
    if (optimizer && opt_optimizer_check(cmd, optimizer, &base) != PDT_OK)
        return PDT_EUSAGE;
    int rc = spec ? parse_schedule(cmd, spec, base, c) : PDT_OK;
    if (rc == PDT_OK && warmup)
        rc = parse_warmup(cmd, warmup, spec != NULL, base, c);
    if (rc != PDT_OK)
        lr_cfg_free(c);
    return rc;
}

int opt_lr_schedule_check(const char *cmd, const char *spec, const char *optimizer)
{
    lr_cfg c;
    int rc = lr_cfg_parse(cmd, spec, NULL, optimizer, &c);
    if (rc == PDT_OK)
        lr_cfg_free(&c);
    return rc;
}

int opt_lr_warmup_check(const char *cmd, const char *spec, const char *warmup,
                        const char *optimizer)
{
    lr_cfg c;
    int rc = lr_cfg_parse(cmd, spec, warmup, optimizer, &c);
    if (rc == PDT_OK)
        lr_cfg_free(&c);
    return rc;
}

/* Where the user's LR layers would sit: after the forward ops. */
static size_t forward_end(const ir_block *b)
{
    for (size_t k = 0; k < b->n_ops; k++) {
        int role = ir_op_role(b->ops[k]);
        if (role > 0 && (role & (IR_ROLE_BACKWARD | IR_ROLE_OPTIMIZE)))
            return k;
    }
    return b->n_ops;
}

/* The persistable vars a schedule creates under fixed names
 * (create_global_var): Paddle would fail on a second one. */
static int check_fixed_names(const pdt_ctx *ctx, const ir_block *b, const lr_cfg *c)
{
    const char *fixed[2] = {c->kind == LR_PIECEWISE ? "learning_rate" : NULL,
                            c->warmup ? "learning_rate_warmup" : NULL};
    const char *who[2] = {"piecewise decay", "--lr-warmup (linear_lr_warmup)"};
    for (int i = 0; i < 2; i++)
        if (fixed[i] && ir_block_find_var(b, ir_intern(fixed[i]))) {
            pdt_error("%s: block 0 already has a var '%s', which %s creates", ctx->main_path,
                      fixed[i], who[i]);
            return PDT_EBADINPUT;
        }
    return PDT_OK;
}

int pass_lr_schedule(pdt_ctx *ctx)
{
    if (!ctx->optim.lr_schedule && !ctx->optim.lr_warmup)
        return PDT_OK;
    lr_cfg c;
    int rc = lr_cfg_parse(NULL, ctx->optim.lr_schedule, ctx->optim.lr_warmup,
                          ctx->optim.optimizer, &c);
    if (rc != PDT_OK)
        return opt_spec_reparsed(rc, "lr_schedule",
                                 ctx->optim.lr_schedule ? "--lr-schedule" : "--lr-warmup");
    ir_block *b = ir_program_block(ctx->main, 0);
    if (!b) {
        pdt_error("%s: program has no blocks", ctx->main_path);
        rc = PDT_EBADINPUT;
    }
    lr_writer writer = lr_writer_for(ctx);
    if (rc == PDT_OK && writer != LR_WRITE_HOST)
        rc = check_fixed_names(ctx, b, &c);
    if (rc == PDT_OK)
        rc = lr_era_check(ctx, &c);
    if (rc == PDT_OK)
        rc = opt_refuse_optimized(ctx, "lr_schedule");
    if (rc != PDT_OK || writer == LR_WRITE_HOST) {
        if (rc == PDT_OK)
            lr_build_host(ctx, &c);
        lr_cfg_free(&c);
        return rc;
    }
    lr_build s = {.ctx = ctx, .b = b, .names = opt_namer_new(ctx->main, ctx->startup),
                  .fill_in_case = writer == LR_WRITE_2X || writer == LR_WRITE_25,
                  .cond_forms = writer == LR_WRITE_25, .scalar_fill = lr_scalar_fill(ctx),
                  .var_block = lr_var_block(ctx)};
    opt_inits_begin(&s.inits, ctx->startup, ctx->settings.era);
    lr_build_all(&s, &c);
    opt_ops_splice(&s.ops, b, forward_end(b), false);
    if (s.increment)
        ir_block_splice(b, 0, 0, &s.increment, 1);
    opt_inits_flush(&s.inits);
    opt_ops_free(&s.ops);
    opt_namer_free(s.names);
    lr_cfg_free(&c);
    return PDT_OK;
}
