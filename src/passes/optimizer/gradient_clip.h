/* gradient_clip.h - the two halves of the `gradient_clip` pass:
 * gradient_clip.c (the pass, value / norm, and global_norm as Paddle 1.8
 * and 1.4-1.7 write it) and gradient_clip_2x.c (global_norm for a 2.2+ target). */
#ifndef PDT_GRADIENT_CLIP_H
#define PDT_GRADIENT_CLIP_H

#include "optimizer_util.h"

/* The global-norm clip as ClipGradByGlobalNorm._static_clip of the target
 * version (ctx->settings.era >= 202) writes it, into OPS; NEW_GRADS[i] is
 * the clipped gradient (the gradient itself: scaled in place).  A
 * gradient that version cannot clip (or pdtrans does not write yet) is
 * refused with its name: PDT_EBADINPUT, nothing pushed. */
int clip_global_norm_2x(pdt_ctx *ctx, opt_namer *names, opt_ops *ops, const char *scope,
                        double clip_norm, const char **new_grads);

#endif
