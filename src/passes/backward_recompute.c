/* backward_recompute.c - recompute (checkpoints).  Not implemented yet: the
 * option is refused with a clear error rather than ignored. */
#include "../diag.h"
#include "backward_recompute.h"

bool bw_append_backward_ops_with_checkpoints(bw_run *r, ir_block *b, GPtrArray *path,
                                             ir_block *target, const pdt_list *checkpoints)
{
    (void)b;
    (void)path;
    (void)target;
    (void)checkpoints;
    pdt_error("%s: --checkpoints (recompute) is not supported yet", r->path);
    return false;
}
