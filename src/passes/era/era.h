/* era.h - which Paddle version pdtrans writes the ops it creates for
 * (--paddle-version, issue 30): the versions it knows, reading the writing
 * version off an input program, and the era step that rewrites the ops
 * pdtrans created as that version writes them (era.def). */
#ifndef PDT_ERA_H
#define PDT_ERA_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../ir/ir.h"

struct pdt_ctx;

/* A version as MAJOR*100+MINOR (108 is 1.8); PDT_ERA_NATIVE: as pdtrans
 * writes today (no row of era.def applies). */
#define PDT_ERA_NATIVE 0

/* UNTIL of an era.def row that still holds for the newest version
 * pdtrans knows. */
#define ERA_LATEST 10000

/* "1.4, 1.5, ..., 3.0": every version --paddle-version takes besides auto. */
const char *pdt_era_known_list(void);
/* TEXT ("X.Y") as a version, or -1 when pdtrans does not know it. */
int pdt_era_parse(const char *text);
/* The version as "X.Y" into buf ("native" for PDT_ERA_NATIVE). */
void pdt_era_format(int era, char *buf, size_t cap);
/* The version that wrote P, read off its fields and its ops' attrs (the
 * ops pdtrans made are not looked at); PDT_ERA_NATIVE when nothing tells.
 * WHY (cap bytes) gets the reason in one lower-case sentence. */
int pdt_era_detect(const ir_program *p, char *why, size_t cap);
/* The target of a run: --paddle-version (NULL or "auto": detected on
 * ctx->main, then ctx->startup).  Called by the pipeline before any pass. */
int pdt_era_resolve(const struct pdt_ctx *ctx);
/* Rewrites the ops pdtrans made in P as version ERA writes them (an
 * output the pipeline writes before it ends); CTX gives the run's settings
 * some rows read (the transpile mode), NULL: none.  Applying it twice
 * changes nothing more, but for the attr order of 2.2's momentum op of a
 * lars_momentum without weight decay: the attrs the first run dropped tell
 * that caller's op (hash_order.c), a second run takes the plain row. */
void pdt_era_apply_program(const struct pdt_ctx *ctx, ir_program *p, int era);
/* Rewrites the ops pdtrans made in ctx->main, ctx->startup and the staged
 * outputs as version ERA writes them (the pipeline's last step). */
void pdt_era_apply(struct pdt_ctx *ctx, int era);
/* Paddle <= 2.3 writes an op's attrs in libstdc++ unordered_map order
 * (hash_order.c): the made ops whose insertion history is known get it
 * (ERA <= 2.3; others keep name order). */
void pdt_hash_order_program(ir_program *p, int era);
/* The same, told DROPPED (NULL: none): ir_op * -> GString " a b ", the
 * attrs era.def's ERA_DROP_ATTR rows removed from the op in this run,
 * which tell one Python caller's op from another's (the era step's call). */
void pdt_hash_order_dropped(ir_program *p, int era, GHashTable *dropped);
/* hash_order_startup.c: when P is a startup program of the run (CTX's
 * startup or a transpile's trainer_N.startup, which keeps its origin ops;
 * CTX NULL: P is one), the fill_constant ops minimize made in it (its
 * initializers: accumulators, learning rate, step counter) in the hash
 * order of ConstantInitializer's Operator.__init__ history (py_order.def's
 * PYOP_STARTUP rows; ERA 1.4-2.3, research 4x). */
void pdt_hash_order_startup(const struct pdt_ctx *ctx, ir_program *p, int era);
/* hash_export.c: when CTX's run writes its main program P as
 * save_inference_model does after load_inference_model (pdtrans
 * inference; settings.saved_inference) for ERA 1.4-2.3, the attr order of
 * that history (research 4z12).  _loaded, before pdt_hash_order_dropped:
 * every input op re-read twice, block 0's feed and fetch as
 * prepend_feed_ops / append_fetch_ops build them.  _made, after it: a made
 * op with a py_order.def row in its Operator.__init__ order re-read once. */
void pdt_hash_export_loaded(const struct pdt_ctx *ctx, ir_program *p, int era);
void pdt_hash_export_made(const struct pdt_ctx *ctx, ir_program *p, int era);
/* Whether P was written under Python 2: an op_callstack of one of the
 * ops pdt_era_detect looks at names a python2.X path (version.c). */
bool pdt_era_python2(const ir_program *p);
/* py2_dict.c: the N KEYS (insertion order) of a CPython 2.7 dict in its
 * iteration order, into OUT (N slots); returns how many (a repeated key
 * counts once). */
size_t pdt_py2_dict_order(const char *const *keys, size_t n, const char **out);
/* hash_order_geo.c: when the run is a GEO-SGD transpile (CTX NULL: P is
 * one of its programs), the ops GeoSgdTranspiler made in P (the trainer's
 * and its startup's send, a pserver's listen_and_serv and per-block sum,
 * its startup's all_attrs() copies of the origin startup's initializers)
 * in the hash order of their Operator.__init__ history (py_order.def's
 * PYOP_GEO rows; ERA 1.6-2.3, research 4z3).  Runs after
 * pdt_hash_order_program, whose pserver rules it overrides for GEO. */
void pdt_hash_order_geo(const struct pdt_ctx *ctx, ir_program *p, int era);
/* hash_order_pstart.c: when P is a pserver_N.startup of CTX's run
 * (DistributeTranspiler's or GeoSgdTranspiler's), its copies of the
 * origin startup's ops (all_attrs(), each looked up in CTX's startup) and
 * DC-ASGD's assigns in the hash order of their Operator.__init__ history
 * (ERA 1.4-2.3, research 4z2, 4z6).  Runs after era.def's rows. */
void pdt_hash_order_pstart(const struct pdt_ctx *ctx, ir_program *p, int era);
/* std::hash<std::string> of libstdc++ (_Hash_bytes, 64-bit). */
uint64_t pdt_hash_bytes(const void *ptr, size_t len);

/* era_order.c: a made op's attrs in the order the target's
 * OpDesc::Flush writes them (2.4: the runtime (extra) attrs of era.def's
 * ERA_RUNTIME_* rows as a sorted group after the sorted others; 2.5
 * on: before them), after giving a grad op the runtime attrs of its
 * forward type it lacks, at their defaults (research-2x-3x.md 4s).
 * Called by pdt_era_apply_program; nothing before 2.4. */
void pdt_era_order_program(ir_program *p, int era);
/* The rank of a runtime attr at ERA: +1 (2.4), -1 (2.5 on), 0 (before
 * 2.4 or native: no group). */
int pdt_era_runtime_rank(int era);
/* true when ATTR of an op of TYPE (or of the forward type of a grad TYPE
 * without rows of its own) is a runtime attr at ERA (era.def). */
bool pdt_era_is_runtime_attr(int era, const char *type, const char *attr);
/* true when A, an attr of an op of TYPE, holds the default some
 * version's era.def row gives it: a runtime (extra) attr of TYPE (or its
 * forward type) at its default, as OpDesc(proto) seeds it (2.4 on) or the
 * checker fills it (before), or an attr at the value a check_attrs row
 * (ERA_ADD_*) adds to a TYPE op that lacks it.  Either is what the op runs
 * with when it lacks A, so the verifiers' op identity leaves it out
 * (src/sym): a job written for one version verifies against an input
 * another wrote. */
bool pdt_era_extra_at_default(const char *type, const ir_attr *a);
/* False when Paddle ERA builds no op of TYPE (era.def's ERA_UNREGISTERED
 * rows: pscore's ops only from 2.0); true for PDT_ERA_NATIVE. */
bool pdt_era_registered(const char *type, int era);

#endif
