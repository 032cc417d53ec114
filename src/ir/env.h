/* env.h - pdt_env: the state a run keeps beyond one call (issue 28 point 4).
 *
 * Like Lua's global_State, one object owns what used to be file-scope
 * globals: the intern table, the caches keyed by interned names, the
 * allocator's hooks, the input limits and fault injection, the diag
 * settings, the progress line and the executor's budgets.
 *
 * Two lifetimes.  The names and the caches (the slots below: op shapes,
 * shared attrs, grad's caches, the kernel index, ...) end when the env
 * ends (ir_intern_shutdown, which also frees the names every cache holds):
 * that is what lets a command, a unit test or a fuzz input start over, and
 * no cache has to notice that the names it holds went away.  Settings and
 * a run's progress (the parts below, the diag settings, the allocator's
 * count and hooks) are kept when the env ends: main prints the summary of
 * hidden warnings and its last errors after ir_intern_shutdown, and
 * options set once for a process stay set, as the globals they replaced
 * did.
 *
 * It lives in src/ir because ir is the bottom layer: grad, exec and io
 * reach it, ir reaches nothing above it, and slots and parts are enums so
 * the env names no type of the layers above (src/ir's own state is laid
 * out in env_internal.h).  There is one current env per process
 * (src/README.md says why it is not passed explicitly). */
#ifndef PDT_IR_ENV_H
#define PDT_IR_ENV_H

#include <stddef.h>

typedef struct pdt_env pdt_env;

typedef enum {
    PDT_ENV_OP_SHAPES,      /* src/ir/op_shape.c */
    PDT_ENV_SHARED_ATTRS,   /* src/ir/attr_value.c */
    PDT_ENV_GRAD_NAMES,     /* src/grad/grad.c: grad_name's caches */
    PDT_ENV_GRAD_SPECS,     /* src/grad/grad.c: parsed spec rows */
    PDT_ENV_GRAD_INDEX,     /* src/grad/table.c: type -> grad_maker */
    PDT_ENV_KERNELS,        /* src/exec/kernel.c: type -> kernel */
    PDT_ENV_VERIFY_NOTED,   /* src/passes/verify.c: programs noted */
    PDT_ENV_INFER_INDEX,    /* src/ir/infershape.c: type -> InferShape row */
    PDT_ENV_ERA_UNREGISTERED, /* src/passes/era/era.c: type -> ERA_UNREGISTERED rows */
    PDT_ENV_ERA_RUNTIME,    /* src/passes/era/era_order.c: type -> every version's runtime rows */
    PDT_ENV_ERA_DEFAULTS,   /* src/passes/era/era_order.c: type -> every version's era.def rows */
    PDT_ENV_N_SLOTS
} pdt_env_slot;

/* The slot's state in the current env, NULL until its owner put it. */
void *pdt_env_get(pdt_env_slot k);
/* Puts p in the slot with the function that frees it when the env ends
 * (NULL: free()).  Returns p. */
void *pdt_env_put(pdt_env_slot k, void *p, void (*free_fn)(void *));
/* Ends the current env's names and caches (every slot freed; the parts,
 * settings and hooks stay).  Called by ir_intern_shutdown. */
void pdt_env_end(void);
/* free_fn for a slot holding an xcalloc'd pmap (pmap.h). */
void pdt_env_free_pmap(void *map);

/* Parts: a layer's settings and run state, kept when the env ends. */
typedef enum {
    PDT_ENV_WARNINGS,       /* src/diag.c: warnings counted, not shown */
    PDT_ENV_PROGRESS,       /* src/progress.c: phase times, progress line */
    PDT_ENV_EXEC,           /* src/exec/tensor.c: budgets, error context */
    PDT_ENV_IO_LIMITS,      /* src/io/pdio.c: --max-input/--max-output */
    PDT_ENV_IO_FAULT,       /* src/io/pdio_fs.c: PDTRANS_FAULT_* */
    PDT_ENV_IO_MAPS,        /* src/io/pdio_map.c: inputs read in place */
    PDT_ENV_N_PARTS
} pdt_env_part_kind;

/* The part's state in the current env: SIZE bytes, zeroed and then given
 * to INIT (if not NULL) on first use.  Its memory is not counted by the
 * allocator (alloc.h: failure injection counts what it did before); with
 * none left the run ends as out of memory does. */
void *pdt_env_part(pdt_env_part_kind k, size_t size, void (*init)(void *));
/* The part's state, or NULL when nothing made it yet (for code that runs
 * while the run ends for want of memory, and must not make it). */
void *pdt_env_part_if_made(pdt_env_part_kind k);

#endif
