/* util.h - allocation that never returns NULL, and small helpers. */
#ifndef PDT_UTIL_H
#define PDT_UTIL_H

#include <stddef.h>

/* These never return NULL: on out-of-memory (real, or injected with
 * PDTRANS_FAIL_ALLOC) the run ends through pdt_out_of_memory (alloc.h) with
 * one message and exit status 1; there is no sane recovery for a
 * command-line tool, and every caller would otherwise need a check. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* n items of `size` bytes (the product checked: an overflow is running
 * out of memory, as for calloc). */
void *xmalloc_n(size_t n, size_t size);
void *xrealloc_n(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
/* The first n bytes of s (fewer if it ends sooner), NUL-terminated. */
char *xstrndup(const char *s, size_t n);

/* pages.c.  The whole pages inside [lo, hi) of private memory the caller
 * owns and will never read again go back to the system now (read again,
 * they would be zeros). */
void pdt_pages_release(void *lo, void *hi);
/* Asks for 2 MB pages for the whole 2 MB pages inside p[0..len), where the
 * kernel offers them on request (transparent huge pages, "madvise"). */
enum { PDT_HUGE_PAGE = 2 << 20 };
void pdt_pages_huge(void *p, size_t len);
/* The same advice for every page that p[0..len) touches, rounded outward:
 * for a block that is a mapping of its own, the whole mapping (splitting
 * it would keep mremap from moving it). */
void pdt_pages_huge_whole(void *p, size_t len);
/* n bytes (not zeroed), 2 MB aligned, on huge pages where offered; never
 * NULL, as xmalloc. */
void *xmalloc_huge(size_t n);

#endif
