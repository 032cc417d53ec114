/* diag.h - the one way pdtrans talks to the user on stderr.
 *
 * Messages follow git's style: "pdtrans: error: FILE: block 0, op 17 'sgd':
 * input 'LearningRate' names unknown var 'lr_0'".  Lower case, no trailing
 * period, names quoted with single quotes. */
#ifndef PDT_DIAG_H
#define PDT_DIAG_H

#include <stdbool.h>

/* Exit statuses (contract with job launchers). */
/* PDT_EINTERNAL: a pass broke a program that passed the input gate (a bug
 * in pdtrans, never the input's fault). */
enum { PDT_OK = 0, PDT_EBADINPUT = 1, PDT_EUSAGE = 2, PDT_EINTERNAL = 3 };

void pdt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The first warning of a kind (its format string) is printed; later ones
 * are counted and summed up in one line at exit, unless -v (diag.c). */
void pdt_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A warning printed as it comes, whatever came before. */
void pdt_warning_raw(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed only when pdt_verbosity > 0 (-v). */
void pdt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "pdtrans: error: MSG" and "try 'pdtrans CMD --help'" hint; the
 * caller returns PDT_EUSAGE. */
void pdt_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The diag settings live in the env (src/ir/env.h: kept when it ends);
 * the names below read and set them there, as the globals they were. */
typedef struct {
    int verbosity;
    /* -q/--quiet: warnings and notes are not printed; errors still are. */
    bool quiet_warnings;
    /* Unit tests silence diagnostics; they check return values instead. */
    bool quiet;
    bool time_passes;       /* --time-passes (progress.h) */
} pdt_diag_settings;
pdt_diag_settings *pdt_env_diag(void);
#define pdt_verbosity (pdt_env_diag()->verbosity)
#define pdt_quiet_warnings (pdt_env_diag()->quiet_warnings)
#define pdt_quiet (pdt_env_diag()->quiet)

#endif
