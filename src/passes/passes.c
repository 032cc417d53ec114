/* passes.c - the one list of registered passes, in pipeline order.
 * Adding a pass: write src/passes/NAME.c exporting `int pass_NAME(pdt_ctx *)`
 * and add one line here. */
#include "pass.h"

const pdt_pass pdt_passes[] = {
#define PASS(name, summary) {#name, summary, pass_##name, NULL, false, false},
#define PLAN_PASS(name, summary) {#name, summary, pass_##name, NULL, true, false},
#define PSERVER_PASS(name, summary) {#name, summary, pass_##name, NULL, true, true},
#define PASS_GROUP(name, summary) {#name, summary, pass_##name, members_##name, false, false},
#include "passes.def"
#undef PASS_GROUP
#undef PSERVER_PASS
#undef PLAN_PASS
#undef PASS
};

const size_t pdt_n_passes = sizeof pdt_passes / sizeof pdt_passes[0];
