#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/env.h"
#include "progress.h"

/* A quoted value ('...' opened after a non-alphanumeric byte, so that
 * "Paddle's" opens none) longer than this is cut, with "...": a 120 KB
 * --loss must not come back whole in the error line. */
enum { QUOTE_MAX = 200 };

static bool is_word_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Writes msg with every quoted value cut to QUOTE_MAX bytes. */
static void put_clipped(const char *msg, size_t len)
{
    size_t i = 0;
    while (i < len) {
        const char *q = memchr(msg + i, '\'', len - i);
        if (!q) {
            fwrite(msg + i, 1, len - i, stderr);
            return;
        }
        size_t open = (size_t)(q - msg);
        fwrite(msg + i, 1, open + 1 - i, stderr);
        i = open + 1;
        if (open > 0 && is_word_byte(msg[open - 1]))
            continue;   /* an apostrophe */
        size_t close = i;
        while (close < len && !(msg[close] == '\'' &&
                                (close + 1 == len || !is_word_byte(msg[close + 1]))))
            close++;
        if (close - i <= QUOTE_MAX) {
            /* the closing quote too: after a name ending in '@' it would
             * open another quote, running to the message's end */
            size_t end = close < len ? close + 1 : close;
            fwrite(msg + i, 1, end - i, stderr);
            i = end;
            continue;
        }
        size_t cut = i + QUOTE_MAX;
        while (cut > i && ((unsigned char)msg[cut] & 0xC0) == 0x80)
            cut--;      /* not inside a UTF-8 character */
        fwrite(msg + i, 1, cut - i, stderr);
        fputs("...", stderr);
        i = close;
    }
}

static void emit(const char *kind, const char *fmt, va_list ap)
{
    if (pdt_quiet)
        return;
    pdt_progress_clear_line();
    char small[1024];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    char *msg = small;
    if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1)) != NULL)
        vsnprintf(msg, (size_t)n + 1, fmt, again);
    va_end(again);
    if (!msg) {     /* no memory: the first 1023 bytes */
        msg = small;
        n = (int)sizeof small - 1;
    }
    fprintf(stderr, "pdtrans: %s", kind);
    if (n > 0)
        put_clipped(msg, (size_t)n);
    fputc('\n', stderr);
    if (msg != small)
        free(msg);
}

void pdt_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("error: ", fmt, ap);
    va_end(ap);
}

/* Repeated warnings (issue 33 point 5): a warning is of the kind of its
 * format string, and a run that warns once per pserver or per op (10000
 * pservers, 9998 of them without a slice) must not print one line each.
 * The first of a kind is printed as it comes; the rest are counted, and
 * at exit one line says how many were not shown and gives the last of
 * them.  -v prints every one.  Kinds past the table's room are printed as
 * they come. */
enum { KINDS_MAX = 64 };
typedef struct {           /* the env's part PDT_ENV_WARNINGS (src/ir/env.h) */
    struct {
        const char *fmt;
        unsigned long hidden;
        char *last;         /* the last one not shown, malloc'd */
    } kinds[KINDS_MAX];
    size_t n_kinds;
    bool registered;        /* hidden_summary is to run at exit */
} warnings;

static void hidden_summary(void)
{
    warnings *w = pdt_env_part_if_made(PDT_ENV_WARNINGS);
    for (size_t i = 0; w && i < w->n_kinds; i++) {
        if (w->kinds[i].hidden && !pdt_quiet)
            pdt_warning_raw("%lu more warnings of this kind were not shown (-v shows each); "
                            "the last: %s", w->kinds[i].hidden, w->kinds[i].last);
        free(w->kinds[i].last);
        w->kinds[i].last = NULL;
        w->kinds[i].hidden = 0;
    }
}

/* True when this warning of kind FMT is to be counted, not printed. */
static bool hide(const char *fmt, va_list ap)
{
    if (pdt_verbosity > 0)
        return false;
    warnings *w = pdt_env_part(PDT_ENV_WARNINGS, sizeof *w, NULL);
    size_t i = 0;
    while (i < w->n_kinds && w->kinds[i].fmt != fmt)
        i++;
    if (i == w->n_kinds) {
        if (w->n_kinds < KINDS_MAX)
            w->kinds[w->n_kinds++].fmt = fmt;
        return false;
    }
    char *msg = NULL;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n >= 0 && (msg = malloc((size_t)n + 1)) != NULL)
        vsnprintf(msg, (size_t)n + 1, fmt, again);
    va_end(again);
    if (!msg)
        return false;           /* no memory: printed as it comes */
    if (!w->registered)
        w->registered = atexit(hidden_summary) == 0;
    if (!w->registered) {
        free(msg);
        return false;
    }
    free(w->kinds[i].last);
    w->kinds[i].last = msg;
    w->kinds[i].hidden++;
    return true;
}

void pdt_warning_raw(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("warning: ", fmt, ap);
    va_end(ap);
}

void pdt_warning(const char *fmt, ...)
{
    if (pdt_quiet_warnings || pdt_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    bool hidden = hide(fmt, ap);
    va_end(ap);
    if (hidden)
        return;
    va_start(ap, fmt);
    emit("warning: ", fmt, ap);
    va_end(ap);
}

void pdt_note(const char *fmt, ...)
{
    if (pdt_verbosity <= 0 || pdt_quiet_warnings)
        return;
    va_list ap;
    va_start(ap, fmt);
    emit("", fmt, ap);
    va_end(ap);
}

void pdt_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("error: ", fmt, ap);
    va_end(ap);
    if (!pdt_quiet) {
        if (cmd)
            fprintf(stderr, "try 'pdtrans %s --help' for more information\n", cmd);
        else
            fprintf(stderr, "try 'pdtrans --help' for more information\n");
    }
}
