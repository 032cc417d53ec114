/* env_internal.h - the layout of pdt_env, src/ir's own (env.c, intern.c,
 * alloc.c, arena.c; tests/private_headers.sh keeps it so).
 *
 * What src/ir keeps itself lives in the env object, not in a slot: the
 * intern table (a lookup costs one pointer load more than the file-scope
 * table it replaced, no call), the allocator's count and hooks, and the
 * arenas' spare chunks.  The layers above keep theirs in slots and parts
 * (env.h), so this header names no type of theirs. */
#ifndef PDT_IR_ENV_INTERNAL_H
#define PDT_IR_ENV_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "env.h"

/* The intern table (intern.c says how it works). */
typedef struct ichunk ichunk;
typedef struct {
    uint32_t hash;
    uint32_t at;            /* 0: empty (data[0] of the first chunk is a NUL) */
} islot;
enum { INTERN_MAX_CHUNKS = 40 };
typedef struct {
    islot *table;
    size_t table_cap, table_n;
    ichunk *chunks;         /* newest first */
    /* Oldest first, for name_at; chunks at least double, so there are few. */
    ichunk *by_age[INTERN_MAX_CHUNKS];
    size_t n_chunks;
    size_t dropped_n;       /* names to put back after ir_intern_drop_table */
} pdt_intern;

/* The allocator's count, failure injection and hooks (alloc.c). */
enum { ALLOC_MAX_CLEANUPS = 4, ALLOC_DOING_MAX = 768 };
typedef struct {
    unsigned long long count, fail_at;
    bool fail_read;
    /* A copy: the caller's strings may die first.  Until a file is read,
     * a command is reading its options (env.c's initialiser). */
    char doing[ALLOC_DOING_MAX];
    void (*fail_cleanup)(void *);
    void *fail_cleanup_arg;
    struct pdt_alloc_cleanup {
        void (*fn)(void *);
        void *arg;
    } cleanups[ALLOC_MAX_CLEANUPS];
    size_t n_cleanups;
} pdt_alloc_state;

struct pdt_env {
    pdt_intern intern;
    void *slot[PDT_ENV_N_SLOTS];
    void (*free_fn[PDT_ENV_N_SLOTS])(void *);
    /* Below: kept when the env ends (env.h). */
    void *part[PDT_ENV_N_PARTS];
    pdt_diag_settings diag;
    pdt_alloc_state alloc;
    struct arena_chunk *arena_spare;    /* arena.c: freed chunks, for the next arenas */
    size_t program_expect;  /* arena.c: ir_program_expect_next, for ir_program_new */
};

/* The current env: never NULL (env.c). */
extern pdt_env *pdt_env_current;

#endif
