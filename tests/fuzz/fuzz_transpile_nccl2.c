/* fuzz_nccl2.c - libFuzzer target: --mode=nccl2 transpile, with
 * hierarchical allreduce and two communicators by the input's hash.  Run
 * with tests/fuzz/run.sh. */
#include "fuzz_pipeline.h"

static void fuzz_commands(const uint8_t *data, size_t size, uint32_t hash)
{
    (void)data;
    (void)size;
    fz_cmd c = fz_cmd_new(cmd_transpile, "transpile");
    fz_arg(&c, "--mode=nccl2");
    fz_arg(&c, "--trainers=10.0.0.1:6170,10.0.0.2:6170,10.0.0.3:6170,10.0.0.4:6170");
    fz_arg(&c, "--endpoint=10.0.0.2:6170");
    fz_arg(&c, "--trainer-id=1");
    if (hash & 1)
        fz_arg(&c, "--hierarchical-allreduce"), fz_arg(&c, "--hierarchical-inter-nranks=2");
    if (hash & 2)
        fz_arg(&c, "--nccl-comm-num=2");
    fz_run(&c, "transpile nccl2");
}
