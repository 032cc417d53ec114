/* reach.c - which blocks an op can run.  A block that no op names (the
 * sub-blocks of conditional_blocks a pass removed) stays in the program,
 * as Paddle leaves it, but nothing executes it. */
#include <stdlib.h>
#include <glib.h>

#include "ir.h"
#include "util.h"

bool *ir_program_reachable_blocks(const ir_program *p)
{
    bool *seen = xcalloc(p->n_blocks + 1, sizeof(bool));
    size_t *pending = xmalloc_n(p->n_blocks + 1, sizeof(size_t));
    size_t n_pending = 0, n_seen = 0;
    if (p->n_blocks) {
        seen[0] = true;
        pending[n_pending++] = 0;
        n_seen = 1;
    }
    /* Each block enters the work list at most once, so the list never
     * holds more than n_blocks entries.  Once every block is seen no op
     * can add one: a program of one block (a trainer, most inputs) costs
     * no scan of its ops, which the verifier asked for after every pass. */
    while (n_pending && n_seen < p->n_blocks) {
        const ir_block *b = p->blocks[pending[--n_pending]];
        for (size_t k = 0; k < b->n_ops && n_seen < p->n_blocks; k++) {
            ir_block_prefetch_op(b, k);
            const ir_op *op = b->ops[k];
            ir_attr_iter it = ir_op_block_attr_iter(op);
            for (const ir_attr *at; (at = ir_attr_next(&it));) {
                const int32_t *ix = NULL;
                size_t n = 0;
                if (at->type == IR_ATTR_BLOCK) {
                    ix = &at->block_idx;
                    n = 1;
                } else if (at->type == IR_ATTR_BLOCKS) {
                    ix = at->blocks_idx;
                    n = at->n_blocks_idx;
                }
                for (size_t i = 0; i < n; i++)
                    if (ix[i] >= 0 && (size_t)ix[i] < p->n_blocks && !seen[ix[i]]) {
                        seen[ix[i]] = true;
                        n_seen++;
                        pending[n_pending++] = (size_t)ix[i];
                    }
            }
        }
    }
    free(pending);
    return seen;
}
