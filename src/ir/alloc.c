/* alloc.c - the allocation counter, the injected failure and the one way a
 * run ends when memory runs out (alloc.h). */
#include "alloc.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../diag.h"

static unsigned long long alloc_count, fail_at;
static bool fail_read;
/* A copy: the caller's strings may die first.  Until a file is read,
 * a command is reading its options. */
static char doing[768] = "reading the command line";
static void (*fail_cleanup)(void *);
static void *fail_cleanup_arg;
#define MAX_CLEANUPS 4
static struct cleanup {
    void (*fn)(void *);
    void *arg;
} cleanups[MAX_CLEANUPS];
static size_t n_cleanups;

/* PDTRANS_FAIL_ALLOC is read once, on the first allocation. */
static void read_fail_at(void)
{
    fail_read = true;
    const char *s = getenv("PDTRANS_FAIL_ALLOC");
    if (!s || !*s)
        return;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(s, &end, 10);
    if (errno == 0 && *end == '\0' && s[0] != '-')
        fail_at = n;
}

bool pdt_alloc_should_fail(void)
{
    if (!fail_read)
        read_fail_at();
    return ++alloc_count == fail_at;
}

void pdt_alloc_point(void)
{
    if (pdt_alloc_should_fail())
        pdt_out_of_memory();
}

void pdt_alloc_doing(const char *fmt, const char *arg)
{
    if (fmt)
        snprintf(doing, sizeof doing, fmt, arg ? arg : "");
    else
        doing[0] = '\0';
}

void pdt_alloc_on_failure(void (*cleanup)(void *), void *arg)
{
    fail_cleanup = cleanup;
    fail_cleanup_arg = arg;
}

bool pdt_alloc_add_cleanup(void (*cleanup)(void *), void *arg)
{
    if (n_cleanups == MAX_CLEANUPS)
        return false;
    cleanups[n_cleanups++] = (struct cleanup){cleanup, arg};
    return true;
}

void pdt_alloc_remove_cleanup(void (*cleanup)(void *), void *arg)
{
    for (size_t i = n_cleanups; i-- > 0;)
        if (cleanups[i].fn == cleanup && cleanups[i].arg == arg) {
            memmove(&cleanups[i], &cleanups[i + 1], (n_cleanups - i - 1) * sizeof *cleanups);
            n_cleanups--;
            return;
        }
}

/* Written with write(2) into a stack buffer: stdio may itself need memory. */
_Noreturn void pdt_out_of_memory(void)
{
    char msg[1024];
    if (doing[0]) {
        snprintf(msg, sizeof msg, "pdtrans: error: out of memory while %s\n", doing);
    } else {
        snprintf(msg, sizeof msg, "pdtrans: error: out of memory\n");
    }
    pdt_fail_now(msg);
}

_Noreturn void pdt_fail_now(const char *msg)
{
    if (write(STDERR_FILENO, msg, strlen(msg)) < 0) {
        /* nothing left to tell the user with */
    }
    void (*cleanup)(void *) = fail_cleanup;
    fail_cleanup = NULL;
    if (cleanup)
        cleanup(fail_cleanup_arg);
    /* the batch's temporaries first: they may lie inside a scratch folder */
    while (n_cleanups > 0) {
        struct cleanup c = cleanups[--n_cleanups];
        c.fn(c.arg);
    }
    exit(PDT_EBADINPUT);
}

/* jansson's allocations (the manifest) take the same way out. */
static void *json_alloc(size_t n)
{
    if (pdt_alloc_should_fail())
        pdt_out_of_memory();
    void *p = malloc(n ? n : 1);
    if (!p)
        pdt_out_of_memory();
    return p;
}

__attribute__((constructor)) static void set_json_allocator(void)
{
    json_set_alloc_funcs(json_alloc, free);
    /* Blocks of 256 KiB and more are mapped, and unmapped when freed, for
     * the whole run.  glibc's own threshold rises to the size of each big
     * block freed (up to 32 MiB), after which the passes' large scratch
     * arrays came from the heap and their pages stayed resident after
     * free: 47 MiB of backward's peak at 1M ops. */
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
}
