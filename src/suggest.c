/* suggest.c - nearest names for "did you mean" (see suggest.h). */
#include "suggest.h"

#include <glib.h>
#include <string.h>

static bool same_letter(char a, char b)
{
    return a == b || (strchr("-_", a) && strchr("-_", b) && a && b);
}

unsigned pdt_edit_distance(const char *a, const char *b, unsigned cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if ((la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    unsigned *row = g_new(unsigned, lb + 1);
    for (size_t j = 0; j <= lb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j];
            unsigned sub = diag + !same_letter(a[i - 1], b[j - 1]);
            unsigned del = (up < row[j - 1] ? up : row[j - 1]) + 1;
            row[j] = sub < del ? sub : del;
            diag = up;
        }
    }
    unsigned d = row[lb];
    g_free(row);
    return d;
}

void pdt_near_init(pdt_near *n, const char *word)
{
    *n = (pdt_near){.word = word};
    size_t len = strlen(word);
    /* The most edits a typo is taken to have. */
    n->dist = len <= 3 ? 1 : len <= 8 ? 2 : 3;
}

void pdt_near_offer(pdt_near *n, const char *candidate)
{
    if (!candidate || !strcmp(candidate, n->word))
        return;
    for (size_t i = 0; i < n->n_best; i++)
        if (!strcmp(n->best[i], candidate))
            return;
    unsigned d = pdt_edit_distance(n->word, candidate, n->dist);
    if (d > n->dist)
        return;
    if (!n->n_best || d < n->dist)
        n->n_best = 0;
    n->dist = d;
    if (n->n_best < 3)
        n->best[n->n_best++] = candidate;
}

char *pdt_near_hint(const pdt_near *n, const char *prefix)
{
    if (!n->n_best)
        return g_strdup("");
    GString *g = g_string_new("; did you mean ");
    for (size_t i = 0; i < n->n_best; i++)
        g_string_append_printf(g, "%s'%s%s'", i == 0 ? "" : i + 1 == n->n_best ? " or " : ", ",
                               prefix, n->best[i]);
    g_string_append_c(g, '?');
    return g_string_free(g, FALSE);
}
