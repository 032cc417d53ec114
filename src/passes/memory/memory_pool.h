/* memory_pool.h - memory_optimize's pool of dead vars (memory_pool.c). */
#ifndef PDT_MEMORY_POOL_H
#define PDT_MEMORY_POOL_H

#include <glib.h>

#include "memory.h"

typedef struct mem_pool mem_pool;

/* level 0: a cache must have exactly x's shape; level 1: the same
 * shape[0] == -1 group and at least x's |numel|. */
mem_pool *mem_pool_new(int level);
void mem_pool_free(mem_pool *p);
size_t mem_pool_size(const mem_pool *p);
/* `(name, shape) in self.pool`. */
bool mem_pool_has(const mem_pool *p, const char *name, const int64_t *dims, size_t n);
/* Inserts at Paddle's position.  `dims` must outlive the pool (a var's
 * own array); dtype is the var's as the current ops see it. */
void mem_pool_add(mem_pool *p, const char *name, const int64_t *dims, size_t n, int dtype);
/* The current ops now see vars through op i of `cfg` (the first grad op
 * of a sub-block pair): recompute which entries exist and their dtype. */
void mem_pool_reindex(mem_pool *p, const mem_cfg *cfg, size_t i);
/* Paddle's search for a var whose buffer x (a valid output of op i, VarDesc
 * xv) can take over.  Returns the cache's name, removed from the pool, or
 * NULL.  With `log`, appends the lines print_log prints (counter numbers
 * the "!!!" lines). */
const char *mem_pool_take(mem_pool *p, const mem_cfg *cfg, size_t i, const char *x,
                          const ir_var *xv, GString *log, unsigned *counter);

#endif
