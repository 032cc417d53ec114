/* util.h - allocation that never returns NULL, and small helpers. */
#ifndef PDT_UTIL_H
#define PDT_UTIL_H

#include <stddef.h>

/* These abort with a message on out-of-memory: there is no sane recovery
 * for a command-line tool, and every caller would otherwise need a check. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

#endif
