/* env.h - pdt_env: the state a run keeps beyond one call (issue 28 point 4).
 *
 * Like Lua's global_State, one object owns what used to be file-scope
 * globals kept valid by generation counters: each owner (op shapes, shared
 * attrs, grad's caches, the kernel index) keeps its state in its slot,
 * made on first use and freed when the env ends.  Ending the env
 * (ir_intern_shutdown, which also drops the names every cache holds) is
 * what lets a command, a unit test or a fuzz input start over: no cache
 * has to notice that the names it holds went away.
 *
 * It lives in src/ir because ir is the bottom layer: grad and exec reach
 * it, ir reaches nothing above it, and the slots are an enum so the env
 * names no type of the layers above.  There is one current env per
 * process (src/README.md says why it is not passed explicitly). */
#ifndef PDT_IR_ENV_H
#define PDT_IR_ENV_H

typedef enum {
    PDT_ENV_OP_SHAPES,      /* src/ir/op_shape.c */
    PDT_ENV_SHARED_ATTRS,   /* src/ir/attr_value.c */
    PDT_ENV_GRAD_NAMES,     /* src/grad/grad.c: grad_name's caches */
    PDT_ENV_GRAD_SPECS,     /* src/grad/grad.c: parsed spec rows */
    PDT_ENV_GRAD_INDEX,     /* src/grad/table.c: type -> grad_maker */
    PDT_ENV_KERNELS,        /* src/exec/kernel.c: type -> kernel */
    PDT_ENV_VERIFY_NOTED,   /* src/passes/verify.c: programs noted */
    PDT_ENV_INFER_INDEX,    /* src/ir/infershape.c: type -> InferShape row */
    PDT_ENV_N_SLOTS
} pdt_env_slot;

/* The slot's state in the current env, NULL until its owner put it. */
void *pdt_env_get(pdt_env_slot k);
/* Puts p in the slot with the function that frees it when the env ends
 * (NULL: free()); starts the current env if there is none.  Returns p. */
void *pdt_env_put(pdt_env_slot k, void *p, void (*free_fn)(void *));
/* Ends the current env (every slot freed); the next use starts a new one.
 * Called by ir_intern_shutdown. */
void pdt_env_end(void);
/* free_fn for a slot holding an xcalloc'd pmap (pmap.h). */
void pdt_env_free_pmap(void *map);

#endif
