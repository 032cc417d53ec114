/* transpile_size.c - --max-output-size for transpile: a lower bound of the
 * bytes a job writes, from the counts the user gave and MAIN as read, so
 * that a count the output cannot hold is refused before anything is built
 * (issue 27 point 3).  Lower bound: every term counts bytes the encoder is
 * sure to write, so a refusal is never wrong; README.md, "Output size".
 *
 * What grows with --trainers:
 * - sync pserver mode (more than one trainer): each pserver program
 *   declares GRAD.trainer_T for every grad slice it merges and every
 *   trainer, reads it in the merging `sum`, and its startup declares it
 *   again (build_pserver.c, build_pserver_startup.c).  Each grad has at
 *   least one slice, on some pserver, so when every pserver is written
 *   each trainer costs, per grad of MAIN's optimize ops, two VarDescs and
 *   one argument.  Async, half-async and GEO pservers hold nothing per
 *   trainer (measured on testdata's *_main programs: 100 and 101 trainers write the
 *   same bytes).
 * - --role=all writes trainer_0 .. trainer_{N-1}: each trainer program
 *   keeps MAIN's forward and backward ops, and the manifest gives each of
 *   its two files a SHA-256.
 * The old estimate (192 bytes per trainer and pserver plus MAIN's file
 * size) was no lower bound (async pservers and pservers holding no grad
 * write nothing per trainer; a pserver program is smaller than MAIN) and
 * missed the startup's copies: 10M sync trainers on basic_main were
 * estimated at 1.9 GB and wrote 3.0 GB (fuzz finding F). */
#include <stdio.h>
#include <string.h>

#include <stdint.h>
#include "../diag.h"
#include "../ir/ir.h"
#include "transpile_cli.h"

/* Sum of the decimal digits of 0 .. n-1: the ".trainer_T" suffixes. */
static uint64_t digits_below(uint64_t n)
{
    uint64_t sum = 0, lo = 0, hi = 10;
    for (uint64_t d = 1; lo < n; d++, lo = hi, hi *= 10)
        sum += d * ((n < hi ? n : hi) - lo);
    return sum;
}

/* The fewest bytes one op takes in its OpDesc: the type and each
 * argument with its tag and length byte (slots and attrs not counted). */
static uint64_t op_floor(const ir_op *op)
{
    uint64_t n = 2 + strlen(op->type);
    const ir_slot *lists[2] = {ir_op_ins(op), ir_op_outs(op)};
    uint32_t counts[2] = {op->n_inputs, op->n_outputs};
    for (int l = 0; l < 2; l++)
        for (uint32_t s = 0; s < counts[l]; s++)
            for (uint32_t a = 0; a < lists[l][s].n_args; a++)
                n += 2 + strlen(lists[l][s].args[a]);
    return n;
}

typedef struct {
    uint64_t grads;         /* distinct grads of the optimize ops */
    uint64_t grad_fixed;    /* per trainer: the grads' bytes but the suffix digits */
    uint64_t trainer;       /* one trainer's programs and manifest lines */
} size_floor;

enum {
    SUFFIX = 9,             /* ".trainer_" */
    VARDESC_FIXED = 16,     /* a VarDesc's tags, lengths, type and data_type */
    SHA_LINE = 64,          /* a manifest's hex SHA-256 of one file */
};

static void scan_main(const ir_program *main, size_floor *f)
{
    const ir_block *b = main->blocks[0];
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    ir_arena *arena = ir_arena_new();
    f->trainer = 2 * SHA_LINE;
    for (size_t i = 0; i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        int role = ir_op_role(op);
        if (role >= 0 && !(role & (IR_ROLE_OPTIMIZE | IR_ROLE_LRSCHED | IR_ROLE_RPC | IR_ROLE_DIST)))
            f->trainer += op_floor(op);
        if (role < 0 || !(role & IR_ROLE_OPTIMIZE))
            continue;
        size_t n;
        const char **pv = ir_op_get_names(op, "op_role_var", &n, arena);
        for (size_t k = 1; k < n; k += 2) {
            if (g_hash_table_contains(seen, pv[k]))
                continue;
            g_hash_table_add(seen, (gpointer)pv[k]);
            const ir_var *v = ir_block_find_var(b, pv[k]);
            uint64_t name = strlen(pv[k]) + SUFFIX, dims = v ? v->n_dims : 1;
            /* pserver VarDesc + `sum` argument + startup VarDesc */
            f->grad_fixed += 2 * (name + VARDESC_FIXED + 2 * dims) + name + 2;
            f->grads++;
        }
    }
    /* with --optimizer the grads do not exist yet: at least one */
    if (!f->grads) {
        f->grads = 1;
        f->grad_fixed = 2 * (6 + SUFFIX + VARDESC_FIXED + 2) + 6 + SUFFIX + 2;
    }
    ir_arena_free(arena);
    g_hash_table_destroy(seen);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

int tcli_check_output_size(const tcli_opts *o)
{
    const pdt_ctx *ctx = o->ctx;
    const pdt_transpile_opts *t = &ctx->transpile;
    if (t->mode != PDT_MODE_PSERVER || t->role == PDT_ROLE_TRAINER || !ctx->main)
        return PDT_OK;
    uint64_t trainers = t->trainers > 0 ? (uint64_t)t->trainers : 1;
    /* every pserver written: --role=all, --role=pserver without
     * --endpoint, or only one; one of several may hold no grad at all */
    bool all_pservers = t->role == PDT_ROLE_ALL || !t->endpoint || t->pservers.n <= 1;
    bool per_trainer = t->sync_mode == PDT_SYNC && !t->geo_push_nums && trainers > 1 && all_pservers;
    size_floor f = {0, 0, 0};
    scan_main(ctx->main, &f);
    uint64_t ps = 0, tr = 0;
    if (per_trainer)
        ps = sat_add(sat_mul(f.grad_fixed, trainers), sat_mul(3 * f.grads, digits_below(trainers)));
    if (t->role == PDT_ROLE_ALL)
        tr = sat_mul(f.trainer, t->every_trainer ? trainers : 1);
    uint64_t est = sat_add(ps, tr);
    if (est <= pdio_max_output_size())
        return PDT_OK;
    const char *flag = t->src.trainers ? t->src.trainers : "--trainers";
    char parts[200];
    snprintf(parts, sizeof parts, "%s%.1f MiB of per-trainer grad vars in the pserver programs",
             "", (double)ps / 1048576);
    if (!ps || tr)
        snprintf(parts + (ps ? strlen(parts) : 0), sizeof parts - (ps ? strlen(parts) : 0),
                 "%s%.1f MiB of trainer programs for %llu trainer(s)", ps ? ", " : "",
                 (double)tr / 1048576, (unsigned long long)(t->every_trainer ? trainers : 1));
    pdt_error("the output would take at least %.1f MiB (%s=%llu: %s), more than the "
              "--max-output-size cap of %.1f MiB; fewer trainers, or a larger --max-output-size",
              (double)est / 1048576, flag, (unsigned long long)trainers, parts,
              (double)pdio_max_output_size() / 1048576);
    return PDT_EBADINPUT;
}
