/* optimizer_table.h - the one table of what each optimizer is: its update
 * op, its keys (Python arguments) and its accumulators.  The optimizer pass
 * builds programs from it; the transpiler reads it to know which of an
 * update op's inputs are per-element accumulators (sliced with the
 * parameter on a pserver) and which are scalars kept whole. */
#ifndef PDT_OPTIMIZER_TABLE_H
#define PDT_OPTIMIZER_TABLE_H

#include <stdbool.h>
#include <stddef.h>

enum { OPT_MAX_KEYS = 6, OPT_MAX_ACCS = 4 };

typedef enum { OPT_KEY_FLOAT, OPT_KEY_BOOL } opt_key_kind;

typedef struct {
    const char *key;        /* Python argument name */
    opt_key_kind kind;
    double dflt;
    const char *attr;       /* op attr it sets, NULL: none */
} opt_key_def;

typedef struct {
    const char *name;       /* _add_accumulator name: <param>_<name>_N */
    const char *in, *out;   /* update-op slots; out NULL: read only */
    bool scalar;            /* shape [1] (beta powers), else the param's */
    int fill_key;           /* index of the key holding the init value, -1: 0.0 */
    const char *device;     /* device_guard of the initialiser */
} opt_acc_def;

typedef struct {
    const char *kind;       /* --optimizer KIND */
    const char *op;         /* update op type */
    opt_key_def keys[OPT_MAX_KEYS]; /* keys[0] is always learning_rate */
    opt_acc_def accs[OPT_MAX_ACCS];
    const char *empty_in[2];/* dispensable inputs Python leaves empty */
    bool adam_extras;       /* min_row_size_to_use_multithread */
    bool adamax_finish;     /* beta1_pow_acc *= beta1 after all updates */
} opt_def;

/* The row of --optimizer KIND, or NULL. */
const opt_def *opt_def_by_kind(const char *kind);
/* The row whose update op is `op_type`, or NULL. */
const opt_def *opt_def_by_op(const char *op_type);
/* How many accumulators the row has. */
size_t opt_def_n_accs(const opt_def *d);
/* The whole table, in the order of the man page (*n rows). */
const opt_def *opt_defs(size_t *n);

/* The transpiler's _get_optimizer_input_shape: for update op `op_type`, 1
 * if input slot `slot` is a per-element accumulator (sliced like the param;
 * this includes centered RMSProp's MeanGrad, seed defect 6), 0 if not (a
 * scalar beta power, Param, Grad, LearningRate, any other slot), -1 if the
 * op is no optimizer of the table (unsupported for distributed training). */
int opt_accumulator_sliced(const char *op_type, const char *slot);

#endif
