/* suggest.h - "did you mean": the names nearest to a word the user typed
 * (an option, a pass, an optimizer key, a var), by edit distance. */
#ifndef PDT_SUGGEST_H
#define PDT_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>

/* Edit distance of A and B ('-' and '_' count as the same letter), or
 * more than CAP when it is more than CAP. */
unsigned pdt_edit_distance(const char *a, const char *b, unsigned cap);

/* Collects the candidates nearest to a word: a typo is one or two edits
 * away (three for words of nine letters or more).  Ties are kept, up to
 * three, in the order offered; candidates must outlive the collector. */
typedef struct {
    const char *word;
    const char *best[3];
    size_t n_best;
    unsigned dist;
} pdt_near;

void pdt_near_init(pdt_near *n, const char *word);
void pdt_near_offer(pdt_near *n, const char *candidate);
/* "; did you mean 'a'?" or "; did you mean 'a' or 'b'?", PREFIX before
 * each name ("--" for options); "" when nothing is near.  g_free it. */
char *pdt_near_hint(const pdt_near *n, const char *prefix);

#endif
