#include "diag.h"

#include <stdarg.h>
#include <stdio.h>

#include "progress.h"

int pdt_verbosity;
bool pdt_quiet;
bool pdt_quiet_warnings;

static void emit(const char *kind, const char *fmt, va_list ap)
{
    if (pdt_quiet)
        return;
    pdt_progress_clear_line();
    fprintf(stderr, "pdtrans: %s", kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
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
