/* progress.h - what a long run is doing: --time-passes (each pass's time,
 * and the read and write times, on stderr at the end) and, when stderr is
 * a terminal and the run passes two seconds, a progress line.  -q
 * silences both.  Nothing here reaches stdout or an output file. */
#ifndef PDT_PROGRESS_H
#define PDT_PROGRESS_H

#include <stdbool.h>

#include "diag.h"

/* Set by --time-passes (the run family, src/passes/options.c); a diag
 * setting in the env. */
#define pdt_time_passes (pdt_env_diag()->time_passes)

typedef enum {
    PDT_PHASE_NONE,
    PDT_PHASE_READ,         /* reading and parsing the inputs */
    PDT_PHASE_CHECK,        /* the input gate */
    PDT_PHASE_PASS,         /* one pass (name) */
    PDT_PHASE_VERIFY,       /* the structural check after a pass */
    PDT_PHASE_WRITE,        /* encoding and writing the outputs */
    PDT_PHASE_RUN,          /* a verify run (name: what it runs, printed as is) */
} pdt_phase_kind;

typedef struct {
    pdt_phase_kind kind;
    const char *name;       /* the pass (a static string), or NULL */
} pdt_phase;

/* Called once the command line is parsed: the clock starts, in the read
 * phase; the progress line is armed when stderr is a terminal and -q was
 * not given. */
void pdt_progress_begin(void);
/* Enters phase KIND (NAME: the pass); returns the phase left, to return
 * to it.  A no-op before pdt_progress_begin. */
pdt_phase pdt_progress_enter(pdt_phase_kind kind, const char *name);
/* Ends the run: clears the progress line and prints the times
 * (--time-passes). */
void pdt_progress_end(void);
/* Ends the progress line for good (the times are still kept): the
 * command is about to print its report (cli_report_stream). */
void pdt_progress_stop_line(void);
/* Clears the progress line before a message is printed (diag.c). */
void pdt_progress_clear_line(void);

#endif
