/* pages.c - advice to the kernel about large buffers (Linux's madvise).
 *
 * madvise is not POSIX, and -include alloc.h brings in GLib's headers (and
 * with them <features.h>) before any file's first line, so a file cannot
 * ask for it with a #define of its own: the Makefile (and the fuzz build)
 * give every file _DEFAULT_SOURCE.  (pmap.c tried the #define; its
 * MADV_HUGEPAGE was never compiled in, and nothing said so: hence this
 * file, which refuses to build without it.) */
#include "util.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(MADV_DONTNEED) || !defined(_DEFAULT_SOURCE)
#error "pages.c needs madvise: build it with -D_DEFAULT_SOURCE (Makefile, tests/fuzz/run.sh)"
#endif

void pdt_pages_release(void *lo, void *hi)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        return;
    uintptr_t mask = (uintptr_t)page - 1;
    uintptr_t a = ((uintptr_t)lo + mask) & ~mask;
    uintptr_t b = (uintptr_t)hi & ~mask;
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

void pdt_pages_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
    uintptr_t huge = PDT_HUGE_PAGE;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t b = ((uintptr_t)p + len) & ~(huge - 1);
    if (b > a)
        madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)len;
#endif
}

void pdt_pages_huge_whole(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        return;
    uintptr_t mask = (uintptr_t)page - 1;
    uintptr_t a = (uintptr_t)p & ~mask;
    uintptr_t b = ((uintptr_t)p + len + mask) & ~mask;
    madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)len;
#endif
}
