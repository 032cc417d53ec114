/* era_check.c - what the target Paddle version (--paddle-version, issue 30)
 * means for a parameter-server transpile beyond era.def's rows: the modes
 * an older transpiler did not have are refused, and a 2.0+ target whose
 * registry lacks the trainer's ops is warned about (research-2x-3x.md 4n). */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../era/era.h"
#include "builders.h"

/* --half-async is DistributeTranspilerConfig.half_async with
 * runtime_split_send_recv (v1.7.0 on: DistributedMode.HALF_ASYNC and the
 * send_barrier's half_async attr); GeoSgdTranspiler came in v1.6.0. */
#define HALF_ASYNC_FROM 107
#define GEO_FROM 106
/* python/paddle/fluid/transpiler/collective.py and the c_* ops (operators/
 * collective) are in the v1.6.0 tag, not v1.5.2. */
#define COLLECTIVE_FROM 106
/* distribute_transpiler.py _get_lr_ops: with sync_mode False, v1.6.1-v1.7.x
 * replace the LR counter's `increment` by a sum of per-trainer counters that
 * each trainer sends; v1.4.1-v1.6.0 move the LR ops as they are (1.6: three
 * of its four patch releases have it). */
#define ASYNC_LR_COUNTERS_FROM 106
/* Remote prefetch (research-2x-3x.md 4z7): distribute_transpiler.py
 * v1.4.0-v1.5.1 keeps the remote_prefetch lookup_table / nce /
 * hierarchical_sigmoid ops and _set_attr's epmap, table_names,
 * height_sections and trainer_id on them (their kernels prefetch); v1.5.2
 * on replaces the lookups by one distributed_lookup_table and leaves an nce
 * as it is.  1.5 follows v1.5.0 and v1.5.1 (two of three). */
#define DIST_LOOKUP_FROM 106
/* LOOKUP_TABLE_TYPE and _get_all_remote_sparse_update_op's types take
 * lookup_table_v2 from v1.8.3 (v1.8.0-v1.8.2 do not: three of six, a tie,
 * so 1.8 is the older state). */
#define REMOTE_V2_FROM 109
/* _get_all_remote_sparse_update_op's types are lookup_table, nce and
 * hierarchical_sigmoid in v1.4.0-v1.6.3, lookup_table and nce from v1.7.0
 * (research-2x-3x.md 4z11). */
#define REMOTE_HSIGMOID_UNTIL 107

/* True when --paddle-version named the target; false for auto, where
 * the version only says who wrote the input, not which Paddle runs it. */
static bool target_given(const pdt_ctx *ctx)
{
    const char *given = ctx->settings.paddle_version;
    return given && strcmp(given, "auto");
}

/* A mode the target lacked: refused (exit 2) when --paddle-version asked
 * for that target, a warning when it was read off the input (such a
 * program is often trained on a newer Paddle); WHAT says what came when. */
static int lacking(const pdt_ctx *ctx, const char *flag, const char *what, const char *instead)
{
    char v[16];
    pdt_era_format(ctx->settings.era, v, sizeof v);
    if (target_given(ctx)) {
        pdt_error("%s: %s, so Paddle %s (--paddle-version=%s) cannot write this program; %s",
                  flag, what, v, ctx->settings.paddle_version, instead);
        return PDT_EUSAGE;
    }
    pdt_warning("%s: %s, and the input reads as Paddle %s: written anyway, with %s's op forms "
                "(--paddle-version names the target)", flag, what, v, v);
    return PDT_OK;
}

int tp_era_check_modes(const pdt_ctx *ctx)
{
    const pdt_transpile_opts *o = &ctx->transpile;
    int era = ctx->settings.era;
    if (o->mode == PDT_MODE_NCCL2 || era == PDT_ERA_NATIVE)
        return PDT_OK;
    if (o->mode == PDT_MODE_COLLECTIVE)
        return era >= COLLECTIVE_FROM
                   ? PDT_OK
                   : lacking(ctx, "--mode=collective",
                             "the collective transpiler and its c_* ops came in Paddle 1.6",
                             "use --mode=nccl2 or target 1.6 or later");
    if (o->geo_push_nums && era < GEO_FROM)
        return lacking(ctx, o->given.geo_flag ? o->given.geo_flag : "--geo",
                       "GeoSgdTranspiler came in Paddle 1.6", "target 1.6 or later");
    if (!o->geo_push_nums && o->sync_mode == PDT_HALF_ASYNC && era < HALF_ASYNC_FROM)
        return lacking(ctx, "--half-async",
                       "the half-async mode (DistributeTranspilerConfig.half_async, a "
                       "send_barrier with half_async true) came in Paddle 1.7",
                       "use --async or target 1.7 or later");
    return PDT_OK;
}

/* Adds to TYPES (a set) each type of a made op of P that the target
 * does not register; SEEN holds the types already asked (each type is
 * looked up in era.def once, not once per op). */
static void unregistered_types(const ir_program *p, int era, GHashTable *types, GHashTable *seen)
{
    for (size_t bi = 0; p && bi < p->n_blocks; bi++)
        for (size_t k = 0; k < p->blocks[bi]->n_ops; k++) {
            const ir_op *op = p->blocks[bi]->ops[k];
            if (op->made && g_hash_table_add(seen, (void *)op->type) &&
                !pdt_era_registered(op->type, era))
                g_hash_table_add(types, (void *)op->type);
        }
}

static gint by_name(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void tp_era_warn_unregistered(const pdt_ctx *ctx, const ir_program *main,
                              const ir_program *startup)
{
    int era = ctx->settings.era;
    if (era == PDT_ERA_NATIVE)
        return;
    GHashTable *types = g_hash_table_new(g_str_hash, g_str_equal);
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    unregistered_types(main, era, types, seen);
    unregistered_types(startup, era, types, seen);
    g_hash_table_destroy(seen);
    guint n = 0;
    const char **list = (const char **)g_hash_table_get_keys_as_array(types, &n);
    if (n) {
        qsort(list, n, sizeof *list, by_name);
        GString *names = g_string_new("");
        for (guint i = 0; i < n; i++)
            g_string_append_printf(names, "%s'%s'", i ? ", " : "", list[i]);
        char v[16];
        pdt_era_format(era, v, sizeof v);
        /* One line: Paddle's own DistributeTranspiler of that version appends
         * the same ops and raises in Operator.__init__ ("has not been
         * registered"); pdtrans writes the program its code describes. */
        pdt_warning("the trainer program has %s ops, which Paddle %s registers none of (from 2.0 "
                    "only operators/pscore is built; its own DistributeTranspiler appends them "
                    "and raises): the program cannot run there", names->str, v);
        g_string_free(names, TRUE);
    }
    g_free(list);
    g_hash_table_destroy(types);
}

bool tp_era_async_lr_counters(const pdt_ctx *ctx)
{
    int era = ctx->settings.era;
    return era == PDT_ERA_NATIVE || era >= ASYNC_LR_COUNTERS_FROM;
}

int tp_era_check_remote(const pdt_ctx *ctx, const char *table, const char *type)
{
    int era = ctx->settings.era;
    if (era == PDT_ERA_NATIVE || era >= DIST_LOOKUP_FROM)
        return PDT_OK;
    char v[16];
    pdt_era_format(era, v, sizeof v);
    /* The old form: the input's own ops with four more attrs, which
     * pdtrans's remote-table pipeline and verifiers do not model. */
    const char *what = "Paddle 1.4 and 1.5 (v1.4.0-v1.5.1) keep the remote ops and set epmap, "
                       "table_names, height_sections and trainer_id on them; "
                       "distributed_lookup_table came in v1.5.2";
    if (target_given(ctx)) {
        pdt_error("remote_prefetch table '%s' (read by %s): %s, and pdtrans does not write that "
                  "form for Paddle %s (--paddle-version=%s); target 1.6 or later, or set "
                  "remote_prefetch false",
                  table, type, what, v, ctx->settings.paddle_version);
        return PDT_EUSAGE;
    }
    pdt_warning("remote_prefetch table '%s' (read by %s): %s; the input reads as Paddle %s: "
                "written anyway, with 1.5.2's distributed_lookup_table (--paddle-version names "
                "the target)", table, type, what, v);
    return PDT_OK;
}

bool tp_era_remote_v2(const pdt_ctx *ctx)
{
    int era = ctx->settings.era;
    return era == PDT_ERA_NATIVE || era >= REMOTE_V2_FROM;
}

bool tp_era_remote_hsigmoid(const pdt_ctx *ctx)
{
    int era = ctx->settings.era;
    return era != PDT_ERA_NATIVE && era < REMOTE_HSIGMOID_UNTIL;
}
