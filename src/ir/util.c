#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* Every failure, real or injected (PDTRANS_FAIL_ALLOC), ends the run
 * through pdt_out_of_memory: one message, temporaries removed, exit 1. */
void *xmalloc(size_t n)
{
    void *p = pdt_alloc_should_fail() ? NULL : malloc(n ? n : 1);
    if (!p)
        pdt_out_of_memory();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = pdt_alloc_should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
    if (!p)
        pdt_out_of_memory();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = pdt_alloc_should_fail() ? NULL : realloc(p, n ? n : 1);
    if (!q)
        pdt_out_of_memory();
    return q;
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
