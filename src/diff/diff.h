/* diff.h - what differs between two programs, or two job folders
 * (pdtrans diff).  See README.md in this folder.
 *
 * The comparison walks both sides and hands each difference to a report
 * (report.c: text, JSON or counts); nothing here prints by itself except
 * error messages about unreadable inputs. */
#ifndef PDT_DIFF_H
#define PDT_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../ir/ir.h"

/* Kinds of difference, in the order --stat lists them. */
typedef enum {
    PDIFF_PROGRAM,          /* a ProgramDesc field (version, op_version_map) */
    PDIFF_BLOCK_ADDED, PDIFF_BLOCK_REMOVED,
    PDIFF_BLOCK,            /* a BlockDesc field (parent_idx, forward_block_idx) */
    PDIFF_OP_REMOVED, PDIFF_OP_INSERTED,
    PDIFF_OP,               /* an OpDesc field other than slots and attrs */
    PDIFF_INPUT, PDIFF_OUTPUT, PDIFF_ATTR,
    PDIFF_VAR_REMOVED, PDIFF_VAR_ADDED,
    PDIFF_VAR,              /* a VarDesc field */
    PDIFF_MANIFEST,         /* a manifest field */
    PDIFF_MANIFEST_ONLY,    /* a manifest file on one side only */
    PDIFF_ROLE_ONLY,        /* a role's programs on one side only */
    PDIFF_N_KINDS
} pdiff_kind;

/* "ops inserted", ... (--stat's words); "op-inserted", ... (JSON's). */
const char *pdiff_kind_stat_name(pdiff_kind k);
const char *pdiff_kind_json_name(pdiff_kind k);

/* One difference.  Absent parts are -1 / NULL.  `a` and `b` are the two
 * sides' values as text (NULL: absent on that side). */
typedef struct {
    pdiff_kind kind;
    const char *program;    /* A's path of the program (B's when only in B) */
    const char *program_b;  /* B's path */
    long block;
    long op_a, op_b;        /* the op's index in A's / B's block */
    const char *op_type;
    const char *op_out;     /* the op's first output var, for finding it */
    const char *what;       /* "attr epmap", "input X", "var w: dims", ... */
    const char *a, *b;
} pdiff_item;

typedef struct pdiff_report pdiff_report;
typedef enum { PDIFF_TEXT, PDIFF_JSON, PDIFF_STAT } pdiff_format;
pdiff_report *pdiff_report_new(FILE *out, pdiff_format format, bool color);
void pdiff_report_add(pdiff_report *r, const pdiff_item *it);
size_t pdiff_report_count(const pdiff_report *r);
/* Prints what is left to print (the JSON document, the counts). */
void pdiff_report_finish(pdiff_report *r);
void pdiff_report_free(pdiff_report *r);

/* What to leave out of the comparison. */
typedef struct {
    bool callstack;             /* compare op_callstack (ignored by default) */
    bool ops_only;              /* op types and slots only */
    const char *const *ignore_attrs;       /* interned names */
    size_t n_ignore_attrs;
    unsigned ignore_var_fields;            /* bits: pdiff_var_field_bit */
} pdiff_opts;

/* The VarDesc fields compared, by the names --ignore-var-field takes. */
extern const char *const pdiff_var_fields[];
extern const size_t pdiff_n_var_fields;
/* The bit of field NAME, or 0 when no field has that name. */
unsigned pdiff_var_field_bit(const char *name);

/* Reports every difference of programs A and B (read from PATH_A and
 * PATH_B, which label the items).  Returns the number of differences. */
size_t pdiff_programs(const ir_program *a, const ir_program *b, const char *path_a,
                      const char *path_b, const pdiff_opts *o, pdiff_report *r);

/* Ops of two blocks matched as a longest common subsequence on (type,
 * outputs) (align.c).  *pairs gets the matched (A index, B index) pairs,
 * both increasing (g_free it); returns how many. */
typedef struct { size_t a, b; } pdiff_pair;
size_t pdiff_align(ir_op *const *a, size_t na, ir_op *const *b, size_t nb, pdiff_pair **pairs);

/* Compares two job folders (job.c).  PDT_OK when both were read (then
 * *n_diffs counts the differences), else PDT_EUSAGE-like trouble with a
 * message printed (returns 2). */
int pdiff_jobs(const char *dir_a, const char *dir_b, const pdiff_opts *o, pdiff_report *r,
               size_t *n_diffs);

#endif
