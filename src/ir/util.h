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

#endif
