/* options.h - typed option descriptors: each pass family declares its
 * options in one table beside its passes (as LLVM's PASS_WITH_PARAMS and
 * MLIR's Option<> do), and everything else is derived from the tables: the
 * commands' getopt_long arrays and --help texts (src/cli/optparse.c),
 * `pdtrans passes --help NAME`, the `name{key=value}` pass options of
 * --passes, and the defaults pdt_ctx_init sets.  See src/cli/README.md. */
#ifndef PDT_OPTIONS_H
#define PDT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

struct pdt_ctx;

typedef enum {
    PDT_OPT_FLAG,       /* bool := true; takes no value */
    PDT_OPT_UNSET,      /* bool := false; takes no value (--no-slice) */
    PDT_OPT_ENUM_FLAG,  /* int := `value`; takes no value; options sharing
                         * the field are exclusive (--sync | --async) */
    PDT_OPT_INT,        /* int from min to max */
    PDT_OPT_LONG,       /* long from min to max */
    PDT_OPT_ULONG,      /* unsigned long from min to max */
    PDT_OPT_STRING,     /* const char *, interned */
    PDT_OPT_LIST,       /* pdt_list, comma-separated; a repeat replaces */
    PDT_OPT_CHOICE,     /* int := index in `choices` + `value` */
    PDT_OPT_CUSTOM,     /* `set` decides; takes a value when `meta` is set */
} pdt_opt_type;

typedef struct pdt_option pdt_option;

/* Stores VALUE (NULL for an option without one) into the family struct at
 * BASE; on a bad value prints a usage error for CMD naming the option and
 * returns false. */
typedef bool (*pdt_opt_setter)(void *base, const pdt_option *opt, const char *value,
                               const char *cmd);

struct pdt_option {
    const char *name;           /* long name, without "--" */
    char short_name;            /* 0: none */
    pdt_opt_type type;
    const char *meta;           /* the value in --help ("N", "EP[,EP...]"); NULL: none */
    const char *help;           /* one paragraph; --help wraps it */
    const char *def;            /* default, as the value a user would give; NULL: none */
    long min, max;              /* INT, LONG, ULONG */
    const char *const *choices; /* CHOICE: NULL-terminated */
    int value;                  /* ENUM_FLAG: stored; CHOICE: added to the index */
    size_t offset;              /* the field in the family struct */
    const char *passes;         /* the passes that read it, space-separated */
    pdt_opt_setter set;         /* CUSTOM */
    /* CUSTOM with meta: the value may be left out (--geo[=PUSH_NUMS]);
     * `set` then gets NULL. */
    bool optional_value;
};

/* A pass family's options: where its struct sits in pdt_ctx, and the
 * cross-option rules (validate: PDT_OK, or PDT_EUSAGE after a usage error
 * for CMD), which commands call before any file is read.  validate also
 * derives what combines several options (transpile: --trainers as a count
 * or a list, per --mode); a pass relies on it and reports no usage error. */
typedef struct {
    const char *name;
    const pdt_option *opts;
    size_t n_opts;
    size_t ctx_offset;
    int (*validate)(struct pdt_ctx *ctx, const char *cmd);
} pdt_option_family;

/* The families, in `pdtrans passes --help` order (options.c here). */
extern const pdt_option_family pdt_family_run, pdt_family_backward, pdt_family_optimizer,
    pdt_family_transpile, pdt_family_memory;
extern const pdt_option_family *const pdt_option_families[];
extern const size_t pdt_n_option_families;

/* The family struct inside CTX. */
void *pdt_family_base(const pdt_option_family *f, struct pdt_ctx *ctx);
/* F's option NAME (long name), or NULL. */
const pdt_option *pdt_option_find(const pdt_option_family *f, const char *name);
/* Whether OPT is read by PASS (a name of passes.def): PASS is in its
 * `passes`, or PASS is a group and one of the passes it may stand for is. */
bool pdt_option_for_pass(const pdt_option *opt, const char *pass);
/* True when OPT takes a value on the command line. */
bool pdt_option_takes_value(const pdt_option *opt);
/* S as a long from MIN to MAX into *OUT; otherwise a usage error for CMD
 * naming NAME (a flag, or the variable the value came from). */
bool pdt_parse_long(const char *cmd, const char *name, const char *s, long min, long max,
                    long *out);
/* Stores VALUE as OPT says (the one setter every path goes through). */
bool pdt_option_set(void *base, const pdt_option *opt, const char *value, const char *cmd);
/* Sets every family option that has a default (pdt_ctx_init calls it). */
void pdt_options_set_defaults(struct pdt_ctx *ctx);

#endif
