/* fuzz_diff.c - libFuzzer target: pdtrans diff's comparison (src/diff) on
 * any program.  A program read twice has no difference from itself, in
 * every report form and with every ignore option; with its last op of
 * block 0 removed, or its last var, it has at least one.  Run with
 * tests/fuzz/run.sh. */
#include <stdio.h>
#include <stdlib.h>

#include "diff/diff.h"
#include "fuzz_common.h"
#include "fuzz_mutator.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_init();
    (void)fuzz_one;             /* fuzz_common.h's read checks are fuzz_read's */
    sink = fopen("/dev/null", "w");
    return 0;
}

static size_t count(const ir_program *a, const ir_program *b, pdiff_format f,
                    const pdiff_opts *o)
{
    pdiff_report *r = pdiff_report_new(sink, f, f == PDIFF_TEXT);
    size_t n = pdiff_programs(a, b, "a", "b", o, r);
    pdiff_report_finish(r);
    pdiff_report_free(r);
    return n;
}

static void expect(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz: diff: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pdt_quiet = true;
    ir_program *a = pdio_parse("fuzz", data, size);
    ir_program *b = a ? pdio_parse("fuzz", data, size) : NULL;
    if (!b) {
        if (a)
            ir_program_free(a);
        return 0;
    }
    const char *ignored[] = {ir_intern("op_role")};
    pdiff_opts plain = {0}, wide = {true, false, ignored, 1, 1u << 3};
    expect(count(a, b, PDIFF_TEXT, &plain) == 0, "a program differs from itself");
    expect(count(a, b, PDIFF_JSON, &wide) == 0, "a program differs from itself (JSON)");
    if (a->n_blocks && b->blocks[0]->n_ops) {
        ir_block_remove_op(b->blocks[0], b->blocks[0]->n_ops - 1);
        expect(count(a, b, PDIFF_STAT, &plain) > 0, "an op removed is no difference");
        pdiff_opts ops_only = {.ops_only = true};
        expect(count(a, b, PDIFF_TEXT, &ops_only) > 0, "an op removed is no difference (ops only)");
    } else if (a->n_blocks && b->blocks[0]->n_vars && !b->blocks[0]->vars[0]->removed) {
        ir_block_remove_var(b->blocks[0], b->blocks[0]->vars[0]->name);
        expect(count(a, b, PDIFF_TEXT, &plain) > 0, "a var removed is no difference");
    }
    ir_program_free(a);
    ir_program_free(b);
    return 0;
}
