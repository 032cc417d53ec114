#include "util.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* Blocks this big come from mmap (alloc.c's threshold) and are asked onto
 * 2 MB pages: each first touch of a 4 KB page is a fault, and on a VM whose
 * hypervisor handles guest faults (the issue-14 machine of session 12) a
 * 1M-op run spent a fifth of its time in them; one fault per 2 MB instead
 * took its time per op below the 10k run's (src/io/HISTORY.md, session 12).
 * Any block of 4 MB holds at least one whole 2 MB page.  The advice covers
 * the block's whole mapping, to its last usable byte, never a part: a
 * mapping split by madvise can no longer be moved by mremap, and glibc's
 * realloc then copies the block to new pages instead (found by strace:
 * mremap failing with EFAULT). */
enum { BIG = 2 * PDT_HUGE_PAGE };

static void *maybe_huge(void *p, size_t n)
{
    if (n >= BIG)
        pdt_pages_huge_whole(p, malloc_usable_size(p));
    return p;
}

/* Every failure, real or injected (PDTRANS_FAIL_ALLOC), ends the run
 * through pdt_out_of_memory: one message, temporaries removed, exit 1. */
void *xmalloc(size_t n)
{
    void *p = pdt_alloc_should_fail() ? NULL : malloc(n ? n : 1);
    if (!p)
        pdt_out_of_memory();
    return maybe_huge(p, n);
}

void *xmalloc_huge(size_t n)
{
    void *p = NULL;
    if (pdt_alloc_should_fail() || posix_memalign(&p, PDT_HUGE_PAGE, n ? n : 1) != 0)
        pdt_out_of_memory();
    pdt_pages_huge(p, n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = pdt_alloc_should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
    if (!p)
        pdt_out_of_memory();
    return maybe_huge(p, n * size);    /* calloc checked the product */
}

void *xrealloc(void *p, size_t n)
{
    void *q = pdt_alloc_should_fail() ? NULL : realloc(p, n ? n : 1);
    if (!q)
        pdt_out_of_memory();
    return maybe_huge(q, n);
}

void *xmalloc_n(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        pdt_out_of_memory();
    return xmalloc(n * size);
}

void *xrealloc_n(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        pdt_out_of_memory();
    return xrealloc(p, n * size);
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

char *xstrndup(const char *s, size_t n)
{
    const char *end = memchr(s, '\0', n);
    size_t len = end ? (size_t)(end - s) : n;
    char *d = xmalloc(len + 1);
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}
