/* passes.c - the one list of registered passes, in pipeline order.
 * Adding a pass: write src/passes/NAME.c exporting `int pass_NAME(pdt_ctx *)`
 * and add one line to passes.def. */
#include "pass.h"

const pdt_pass pdt_passes[] = {
#define PASS(name, summary) {#name, summary, pass_##name, NULL, 0, false, 0, 0},
#define PRESERVING_PASS(name, summary, analysis) \
    {#name, summary, pass_##name, NULL, PDT_AN_BIT(analysis), false, 0, PDT_AN_BIT(analysis)},
#define MAKING_PASS(name, summary, analysis) \
    {#name, summary, pass_##name, NULL, PDT_AN_BIT(analysis), false, 0, 0},
#define SHARDED_PASS(name, summary, analysis)                                              \
    {#name, summary, pass_##name, NULL, PDT_AN_BIT(analysis), true, PDT_AN_##analysis, \
     PDT_AN_BIT(analysis)},
#define PASS_GROUP(name, summary) {#name, summary, pass_##name, members_##name, 0, false, 0, 0},
#include "passes.def"
#undef PASS_GROUP
#undef SHARDED_PASS
#undef MAKING_PASS
#undef PRESERVING_PASS
#undef PASS
};

const size_t pdt_n_passes = sizeof pdt_passes / sizeof pdt_passes[0];
