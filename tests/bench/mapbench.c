/* mapbench.c - pmap against GHashTable on the names of a real or generated
 * program (src/ir/README.md, "One hash map").  `mapbench FILE` reads FILE,
 * takes every var name of every block (the keys) and every argument of
 * every op in program order (the lookups, the stream a pass walks), and
 * times, for each map, best of five:
 *   build   one map per block, every var name put (name -> var)
 *   lookup  every op argument looked up in its block's map
 *   set     every op argument added to one set (a "seen" set)
 * Prints nanoseconds per operation.  Informative only: never fails on a
 * time.  Times are CPU time (the machine is shared). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <glib.h>

#include "io/pdio.h"
#include "ir/ir.h"
#include "ir/pmap.h"
#include "ir/util.h"

typedef struct {
    size_t n_keys, n_args;
    const char **keys;   /* block-major */
    void **vals;
    size_t *key_block;
    const char **args;
    size_t *arg_block;
    size_t n_blocks;
} workload;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void count_args(const ir_slot *slots, size_t n, size_t *total)
{
    for (size_t i = 0; i < n; i++)
        *total += slots[i].n_args;
}

static void add_args(workload *w, const ir_slot *slots, size_t n, size_t block)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < slots[i].n_args; j++) {
            w->args[w->n_args] = slots[i].args[j];
            w->arg_block[w->n_args++] = block;
        }
}

static void load(workload *w, const ir_program *p)
{
    size_t keys = 0, args = 0;
    for (size_t b = 0; b < p->n_blocks; b++) {
        keys += p->blocks[b]->n_vars;
        for (size_t o = 0; o < p->blocks[b]->n_ops; o++) {
            const ir_op *op = p->blocks[b]->ops[o];
            count_args(ir_op_ins(op), op->n_inputs, &args);
            count_args(ir_op_outs(op), op->n_outputs, &args);
        }
    }
    w->keys = xcalloc(keys + 1, sizeof *w->keys);
    w->vals = xcalloc(keys + 1, sizeof *w->vals);
    w->key_block = xcalloc(keys + 1, sizeof *w->key_block);
    w->args = xcalloc(args + 1, sizeof *w->args);
    w->arg_block = xcalloc(args + 1, sizeof *w->arg_block);
    w->n_blocks = p->n_blocks;
    for (size_t b = 0; b < p->n_blocks; b++) {
        const ir_block *blk = p->blocks[b];
        for (size_t v = 0; v < blk->n_vars; v++) {
            w->keys[w->n_keys] = blk->vars[v]->name;
            w->vals[w->n_keys] = blk->vars[v];
            w->key_block[w->n_keys++] = b;
        }
        for (size_t o = 0; o < blk->n_ops; o++) {
            add_args(w, ir_op_ins(blk->ops[o]), blk->ops[o]->n_inputs, b);
            add_args(w, ir_op_outs(blk->ops[o]), blk->ops[o]->n_outputs, b);
        }
    }
}

/* Each bench returns a checksum so the compiler keeps the work. */
static size_t bench_pmap(const workload *w, double t[3])
{
    size_t sum = 0;
    pmap *maps = xcalloc(w->n_blocks, sizeof *maps);
    double s = now();
    for (size_t i = 0; i < w->n_keys; i++)
        pmap_put(&maps[w->key_block[i]], w->keys[i], w->vals[i]);
    t[0] = now() - s;
    s = now();
    for (size_t i = 0; i < w->n_args; i++)
        sum += pmap_get(&maps[w->arg_block[i]], w->args[i]) != NULL;
    t[1] = now() - s;
    pmap seen = PMAP_INIT;
    s = now();
    for (size_t i = 0; i < w->n_args; i++)
        sum += pmap_add(&seen, w->args[i]);
    t[2] = now() - s;
    pmap_free(&seen);
    for (size_t b = 0; b < w->n_blocks; b++)
        pmap_free(&maps[b]);
    free(maps);
    return sum;
}

static size_t bench_ghash(const workload *w, double t[3])
{
    size_t sum = 0;
    GHashTable **maps = xcalloc(w->n_blocks, sizeof *maps);
    for (size_t b = 0; b < w->n_blocks; b++)
        maps[b] = g_hash_table_new(g_direct_hash, g_direct_equal);
    double s = now();
    for (size_t i = 0; i < w->n_keys; i++)
        g_hash_table_insert(maps[w->key_block[i]], (gpointer)w->keys[i], w->vals[i]);
    t[0] = now() - s;
    s = now();
    for (size_t i = 0; i < w->n_args; i++)
        sum += g_hash_table_lookup(maps[w->arg_block[i]], w->args[i]) != NULL;
    t[1] = now() - s;
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    s = now();
    for (size_t i = 0; i < w->n_args; i++)
        sum += g_hash_table_add(seen, (gpointer)w->args[i]);
    t[2] = now() - s;
    g_hash_table_destroy(seen);
    for (size_t b = 0; b < w->n_blocks; b++)
        g_hash_table_destroy(maps[b]);
    free(maps);
    return sum;
}

static void best_of_five(size_t (*bench)(const workload *, double[3]), const workload *w,
                         double best[3], size_t *check)
{
    for (int r = 0; r < 5; r++) {
        double t[3];
        *check = bench(w, t);
        for (int k = 0; k < 3; k++)
            if (r == 0 || t[k] < best[k])
                best[k] = t[k];
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mapbench FILE\n");
        return 2;
    }
    ir_program *p = pdio_read(argv[1]);
    if (!p)
        return 1;
    workload w = {0};
    load(&w, p);
    double tp[3], tg[3];
    size_t cp, cg;
    best_of_five(bench_pmap, &w, tp, &cp);
    best_of_five(bench_ghash, &w, tg, &cg);
    if (cp != cg) {
        fprintf(stderr, "mapbench: pmap and GHashTable disagree (%zu, %zu)\n", cp, cg);
        return 1;
    }
    const char *what[3] = {"build", "lookup", "set"};
    size_t n[3] = {w.n_keys, w.n_args, w.n_args};
    printf("mapbench: %zu keys in %zu blocks, %zu lookups\n", w.n_keys, w.n_blocks, w.n_args);
    for (int k = 0; k < 3; k++)
        printf("mapbench: %-6s pmap %6.1f ns/op  GHashTable %6.1f ns/op  (%.2fx)\n", what[k],
               tp[k] * 1e9 / (double)(n[k] ? n[k] : 1), tg[k] * 1e9 / (double)(n[k] ? n[k] : 1),
               tp[k] > 0 ? tg[k] / tp[k] : 0.0);
    free(w.keys);
    free(w.vals);
    free(w.key_block);
    free(w.args);
    free(w.arg_block);
    ir_program_free(p);
    return 0;
}
