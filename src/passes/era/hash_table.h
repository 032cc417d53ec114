/* hash_table.h - the libstdc++ std::unordered_map<std::string, ...> that
 * Paddle <= 2.3 keeps an op's attrs in, emulated for the order its
 * iteration (OpDesc::Flush) gives (research-2x-3x.md 4o, 4r).  Internal to
 * src/passes/era: hash_table.c is the table, hash_order.c the insertion
 * histories of the ops pdtrans makes. */
#ifndef PDT_HASH_TABLE_H
#define PDT_HASH_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../ir/ir.h"

/* Keys an emulated map holds at most (an op with more keeps name order). */
#define HT_MAX 120

/* The bucket policy of the libstdc++ the writing Paddle ran with: the
 * hash and the list rules are the same in every gcc, the bucket counts
 * are not (research 4r).
 *   HT_GCC48: gcc 4.8 (to 6 by their sources' default ctor): a map is
 *     built with 11 buckets, rehashes when n_elt + 1 >= _M_next_resize
 *     (11 -> 23 -> 47 -> 97 -> 199);
 *   HT_GCC7: gcc 7 and later: 1 bucket, 13 at the first insert, rehashes
 *     when n_elt + 1 > _M_next_resize (13 -> 29 -> 59 -> 127);
 *   HT_GCC8_LIB5: gcc 7+ headers (the default ctor: 1 bucket, _M_next_resize
 *     0) run with an older libstdc++.so, whose out-of-line _M_need_rehash
 *     and _M_next_bkt are gcc 5/6's: ">=", and a fast table giving 3 for 2,
 *     so 3 buckets at the first insert, 3 -> 7 -> 17 -> 37 -> 79 (research
 *     4z8: the 2.3.0 files). */
typedef enum { HT_GCC48, HT_GCC7, HT_GCC8_LIB5 } ht_policy;

/* The map: its nodes in list (iteration) order, the bucket count and
 * _M_next_resize of the policy's _Prime_rehash_policy. */
typedef struct {
    const char *keys[HT_MAX];
    uint64_t hash[HT_MAX];
    size_t n, nb, next_resize;
    ht_policy policy;
} ht;

/* The policy of Paddle release VERSION's Linux wheels (<= 2.3). */
ht_policy ht_policy_of(int version);
/* A default-constructed map of T->policy (set by the caller once; every
 * ht_init and ht_copy_of of T keeps it). */
void ht_init(ht *t);
/* operator[] of KEY (interned: keys compare by pointer); a key present
 * keeps its place.  false when the map would exceed HT_MAX. */
bool ht_insert(ht *t, const char *key);
/* A copy of a map that held the N names of ATTRS in this list order after
 * n inserts (no erase): the copy keeps the list and the bucket count. */
bool ht_copy_of(ht *t, const ir_attr *attrs, size_t n);

/* true when NAME is a word of LIST (space-separated): py_order.def's
 * proto and given lists, read by hash_order.c and hash_order_dist.c. */
bool py_listed(const char *list, const char *name);
/* ir_op_settle_ranked's rank (ctx: the ht): an attr's position in the
 * table's list, t->n for a name the table lacks. */
int ht_rank(const ir_attr *attr, void *ctx);
/* hash_reread.c: T as the map of an op read from the input (Paddle's
 * OpDesc(proto) and ProgramDesc::InitFromProto) and changed by a pass
 * since: its attrs inserted as they stand, the BLOCK and BLOCKS ones
 * last.  false when the op has more than the table holds. */
bool pdt_hash_reread(ht *t, const ir_op *op);
/* hash_order.c: T as the map Operator.__init__ fills for OP, when a
 * py_order.def PYOP row of ERA matches OP (type, TYPE@ROLE, ...) and
 * names every attr OP has; false otherwise. */
bool pdt_hash_python_built(ht *t, const ir_op *op, int era);
/* hash_order_dist.c: the made ops of P that the pserver transpiler
 * builds, for which py_order.def has PYOP_DIST rows (or, for a pserver's
 * copies of optimize and LR ops, PYOP rows), in the hash order of their
 * Operator.__init__ history (ERA 1.4-2.3). */
void pdt_hash_order_dist(ir_program *p, int era);
/* hash_order_pstart.c: the ops of P, a pserver's startup (either
 * transpiler's), that get_startup_program copied from ORIGIN (the origin
 * startup) by all_attrs(), and DC-ASGD's assigns, in the hash order of
 * that history (PYOP_DIST TYPE@pstart rows; ERA 1.4-2.3); a
 * fill_constant copy gets its source's str_value. */
void pdt_hash_order_copies(ir_program *p, const ir_program *origin, int era);
/* Whether Operator.__init__'s dict holds NAME for OP, a copy made by
 * append_op(..., attrs=source.all_attrs()) (both transpilers' pserver
 * copies), HAD telling whether the source had NAME: op_role, op_namescope
 * and op_callstack always (pdtrans writes no op_callstack: a traceback),
 * op_role_var only when not empty (__init__ deletes an empty one: it comes
 * back as check_attrs's default), any other when HAD (hash_order_pstart.c;
 * read by hash_order_dist.c too). */
bool ht_copy_given(const ir_op *op, const char *name, bool had);
/* The framework attrs OpProtoAndCheckerMaker appends to every proto at
 * ERA, in its order (hash_order_dist.c; read by hash_order_pstart.c). */
const char *ht_framework_attrs(int era);

#endif
