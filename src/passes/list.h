/* list.h - pdt_list, the comma-separated flag value every family's
 * options use (pdt_list_split and the rest: pass.h). */
#ifndef PDT_LIST_H
#define PDT_LIST_H

#include <stddef.h>

/* A comma-separated flag value, split and interned. */
typedef struct {
    size_t n;
    const char **items;
} pdt_list;

#endif
