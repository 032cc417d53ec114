/* analyses.c - the analyses of passes.def, by pdt_analysis_id.  Its own
 * file, not passes.c: a unit test that links its own pass list
 * (tests/unit/test_gate.c) defines these too. */
#include "pass.h"

const pdt_analysis *const pdt_analyses[] = {
#define ANALYSIS(name, ops) &ops,
#include "passes.def"
#undef ANALYSIS
};

const size_t pdt_n_analyses = sizeof pdt_analyses / sizeof pdt_analyses[0];
