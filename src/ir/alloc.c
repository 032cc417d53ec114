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
#include "env_internal.h"

/* The count, the injected failure and the hooks are the env's
 * (env_internal.h): the env is static, so they exist before the first
 * allocation and while the run ends for want of memory. */
#define A (pdt_env_current->alloc)

/* PDTRANS_FAIL_ALLOC is read once, on the first allocation. */
static void read_fail_at(void)
{
    A.fail_read = true;
    const char *s = getenv("PDTRANS_FAIL_ALLOC");
    if (!s || !*s)
        return;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(s, &end, 10);
    if (errno == 0 && *end == '\0' && s[0] != '-')
        A.fail_at = n;
}

bool pdt_alloc_should_fail(void)
{
    if (!A.fail_read)
        read_fail_at();
    return ++A.count == A.fail_at;
}

void pdt_alloc_point(void)
{
    if (pdt_alloc_should_fail())
        pdt_out_of_memory();
}

void pdt_alloc_doing(const char *fmt, const char *arg)
{
    if (fmt)
        snprintf(A.doing, sizeof A.doing, fmt, arg ? arg : "");
    else
        A.doing[0] = '\0';
}

void pdt_alloc_on_failure(void (*cleanup)(void *), void *arg)
{
    A.fail_cleanup = cleanup;
    A.fail_cleanup_arg = arg;
}

bool pdt_alloc_add_cleanup(void (*cleanup)(void *), void *arg)
{
    if (A.n_cleanups == ALLOC_MAX_CLEANUPS)
        return false;
    A.cleanups[A.n_cleanups++] = (struct pdt_alloc_cleanup){cleanup, arg};
    return true;
}

void pdt_alloc_remove_cleanup(void (*cleanup)(void *), void *arg)
{
    for (size_t i = A.n_cleanups; i-- > 0;)
        if (A.cleanups[i].fn == cleanup && A.cleanups[i].arg == arg) {
            memmove(&A.cleanups[i], &A.cleanups[i + 1], (A.n_cleanups - i - 1) * sizeof *A.cleanups);
            A.n_cleanups--;
            return;
        }
}

/* Written with write(2) into a stack buffer: stdio may itself need memory. */
_Noreturn void pdt_out_of_memory(void)
{
    char msg[1024];
    if (A.doing[0]) {
        snprintf(msg, sizeof msg, "pdtrans: error: out of memory while %s\n", A.doing);
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
    void (*cleanup)(void *) = A.fail_cleanup;
    A.fail_cleanup = NULL;
    if (cleanup)
        cleanup(A.fail_cleanup_arg);
    /* the batch's temporaries first: they may lie inside a scratch folder */
    while (A.n_cleanups > 0) {
        struct pdt_alloc_cleanup c = A.cleanups[--A.n_cleanups];
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
