/* fuzz_verify.c - libFuzzer target: `pdtrans verify rewrite IN IN`, `verify
 * grad --loss=L` and (by the input's hash) `verify transpile` with 2 trainers
 * on each input, with the structure-aware mutator of fuzz_mutator.h
 * (fuzz_pipeline.h).  The executor runs under a 64 MiB --max-memory.
 *
 * A tensor past the budget (or an element count past int64) ends a real
 * run through pdt_fail_now: one message, the cleanups, exit 1.  Here the
 * last cleanup jumps back into the target instead of letting it exit
 * (libFuzzer counts an exit as a finding); the abandoned run's tensors then
 * leak, so run.sh gives this target -detect_leaks=0.  Run with
 * tests/fuzz/run.sh. */
#include <setjmp.h>

#include "exec/exec.h"
#include "fuzz_pipeline.h"

static jmp_buf fz_refused;

static void jump_back(void *arg)
{
    (void)arg;
    longjmp(fz_refused, 1);
}

/* verify takes no -o: run it as the command line would, the input last. */
static void run_verify(fz_cmd *c, const char *what, bool twice)
{
    fz_arg(c, fz_in);
    if (twice)
        fz_arg(c, fz_in);
    int rc = c->run(c->argc, c->argv);
    if (rc != PDT_OK && rc != PDT_EBADINPUT && rc != PDT_EUSAGE) {
        fprintf(stderr, "fuzz: %s: exit status %d\n", what, rc);
        abort();
    }
}

static void fuzz_commands(const uint8_t *data, size_t size, uint32_t hash)
{
    ex_set_max_memory((uint64_t)64 << 20);
    /* a few seconds of work under ASan, well inside libFuzzer's 25 s
     * (crashes/README E: the executor had no bound on work) */
    ex_set_max_work((uint64_t)1 << 28);
    ex_memory_reset();
    if (setjmp(fz_refused)) {
        ex_memory_reset();
        return;     /* refused with its one message: not a finding */
    }
    pdt_alloc_remove_cleanup(jump_back, NULL);
    if (!pdt_alloc_add_cleanup(jump_back, NULL))
        abort();
    fz_cmd c = fz_cmd_new(cmd_verify, "verify");
    fz_arg(&c, "rewrite");
    run_verify(&c, "verify rewrite", true);
    c = fz_cmd_new(cmd_verify, "verify");
    fz_arg(&c, "grad");
    fz_arg(&c, fz_loss_arg(data, size, "--loss"));
    fz_arg(&c, "--samples=2");
    run_verify(&c, "verify grad", false);
    if (hash % 4 == 0) {
        c = fz_cmd_new(cmd_verify, "verify");
        fz_arg(&c, "transpile");
        fz_arg(&c, "--trainers=2");
        fz_arg(&c, "--pservers=127.0.0.1:6174");
        fz_arg(&c, "--steps=1");
        run_verify(&c, "verify transpile", false);
    }
    pdt_alloc_remove_cleanup(jump_back, NULL);
    (void)fz_run;   /* the harness's runner adds -o, which verify lacks */
}
