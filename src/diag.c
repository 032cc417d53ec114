#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"

int pdt_verbosity;
bool pdt_quiet;
bool pdt_quiet_warnings;

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
        if (close - i <= QUOTE_MAX)
            continue;
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

void pdt_warning(const char *fmt, ...)
{
    if (pdt_quiet_warnings)
        return;
    va_list ap;
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
