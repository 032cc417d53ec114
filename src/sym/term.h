/* term.h - hash-consed symbolic terms for `pdtrans verify job` (README.md
 * in this folder).  A value is a term: a leaf (a feed, a var nothing
 * wrote), an op applied to terms (an uninterpreted function of its type,
 * semantic attrs and input terms), or one of the few interpreted forms
 * the axioms act on: sum, scale, a row slice, a row concat.  Every
 * constructor returns the normal form, and equal normal forms are one
 * node, so equality is a pointer compare.  Constructors never recurse on
 * a term's depth except through the row-wise pull of a concat (bounded
 * by the accumulators an optimizer chains, not by the program). */
#ifndef PDT_SYM_TERM_H
#define PDT_SYM_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../ir/ir.h"

typedef enum {
    SYM_LEAF, SYM_APP, SYM_PROJ, SYM_SUM, SYM_SCALE, SYM_SLICE, SYM_CONCAT
} sym_kind;

/* Where a node was first made: a program's label ("pserver_0.pb"), a
 * block and an op.  op is NULL for nodes a run made outside any op. */
typedef struct sym_site {
    const char *prog;
    int block, index;
    const ir_op *op;
} sym_site;

typedef struct sym_term sym_term;
struct sym_term {
    sym_kind kind;
    /* LEAF: its label; APP: the op type; PROJ: the output slot. */
    const char *name;
    /* APP: interned "slot signature|semantic attrs" (the op's identity). */
    const char *key;
    double scale, bias;         /* SCALE */
    int64_t a, b;               /* PROJ: index; SLICE: offset, rows; SCALE: bias_after_scale;
                                 * APP of fill_constant: its rows (shape[0], kept out of key) */
    int64_t rows;               /* dim 0 when known, else -1 (not part of identity) */
    uint32_t n, id;
    sym_term **args;
    const char **arg_slots;     /* APP: the input slot of each arg */
    const sym_site *origin;     /* first maker */
    const sym_site **arg_sites; /* APP, SUM, SCALE made by an op: where each arg's var was written */
    const char **arg_vars;      /* ... and that var */
};

typedef struct sym_store sym_store;

sym_store *sym_store_new(void);
void sym_store_free(sym_store *s);
/* Terms made from now on carry this site (NULL: none). */
void sym_store_set_site(sym_store *s, const sym_site *site);
/* A site that lives as long as the store. */
const sym_site *sym_site_make(sym_store *s, const char *prog, int block, int index,
                              const ir_op *op);
size_t sym_store_size(const sym_store *s);

sym_term *sym_leaf(sym_store *s, const char *label, int64_t rows);
/* An int64 [1] value known exactly (a step counter, a trainer id; intfold.c
 * folds the ops on them): a leaf named by its value, apart from any var's
 * leaf of that name. */
sym_term *sym_int(sym_store *s, int64_t v);
/* Whether t is such a value; it in *v. */
bool sym_int_value(const sym_term *t, int64_t *v);
/* An op application; fill_rows >= 0 only for fill_constant (its shape[0]). */
sym_term *sym_app(sym_store *s, const char *type, const char *key, sym_term **args,
                  const char **slots, uint32_t n, int64_t fill_rows);
/* Output `slot`[idx] of an APP, `rows` its dim 0 (-1 unknown). */
sym_term *sym_proj(sym_store *s, sym_term *app, const char *slot, int64_t idx, int64_t rows);
sym_term *sym_sum(sym_store *s, sym_term **args, uint32_t n);
sym_term *sym_scale(sym_store *s, sym_term *x, double scale, double bias, bool after);
sym_term *sym_slice(sym_store *s, sym_term *x, int64_t off, int64_t rows);
sym_term *sym_concat(sym_store *s, sym_term **parts, uint32_t n);
/* The rows [off, off + rows) of x pushed into x's row-wise structure: the
 * form a pserver's slice of an updated param takes (for reports). */
sym_term *sym_slice_in(sym_store *s, sym_term *x, int64_t off, int64_t rows);

/* Sets arg_sites/arg_vars of a node made by the current op (first maker only). */
void sym_note_args(sym_store *s, sym_term *t, const sym_site **sites, const char **vars);

/* Whether ops of this type act row by row on their param-shaped inputs
 * (optimizers; not lars_momentum or lamb, which take whole-param norms). */
bool sym_rowwise_type(const char *type);
/* elementwise_add, _sub and _mul: row by row when every operand has the
 * rows of the output (no broadcast), as DC-ASGD's correction on a slice. */
bool sym_elementwise_type(const char *type);

#endif
