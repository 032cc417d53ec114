/* feed.h - seeded feeds and parameter values for the reference executor. */
#ifndef PDT_EXEC_FEED_H
#define PDT_EXEC_FEED_H

#include "exec.h"

typedef struct {
    int64_t batch;      /* rows per feed (sequences, for LoD feeds) */
    double scale;       /* float feeds are uniform in [-scale, scale) */
    bool data_only;     /* skip persistable vars */
} ex_feed_opts;

/* Puts a value in `s` for every var block 0 reads before writing it and
 * `s` does not hold yet (data vars, and persistable vars no startup
 * initialised).  False with err set when an op names an unknown var. */
bool ex_feed_random(const ir_program *p, ex_scope *s, const ex_feed_opts *o, ex_rng *r,
                    char *err, size_t errlen);

#endif
