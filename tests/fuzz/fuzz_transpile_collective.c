/* fuzz_collective.c - libFuzzer target: --mode=collective
 * transpile, grad_allreduce, local_sgd or single_process_multi_thread and
 * one or two rings by the input's hash.  Run with tests/fuzz/run.sh. */
#include "fuzz_pipeline.h"

static void fuzz_commands(const uint8_t *data, size_t size, uint32_t hash)
{
    (void)data;
    (void)size;
    static const char *const modes[] = {"--collective-mode=grad_allreduce",
                                        "--collective-mode=local_sgd",
                                        "--collective-mode=single_process_multi_thread"};
    fz_cmd c = fz_cmd_new(cmd_transpile, "transpile");
    fz_arg(&c, "--mode=collective");
    fz_arg(&c, modes[hash % 3]);
    fz_arg(&c, "--trainers=10.0.0.1:6170,10.0.0.2:6170");
    fz_arg(&c, "--endpoint=10.0.0.2:6170");
    fz_arg(&c, "--trainer-id=1");
    if (hash & 4)
        fz_arg(&c, "--nccl-comm-num=2");
    fz_run(&c, "transpile collective");
}
