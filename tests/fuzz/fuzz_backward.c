/* fuzz_backward.c - libFuzzer target: `pdtrans backward --loss=L` and
 * `pdtrans gradients --targets=L --all-params` on each input (L from the
 * program: fuzz_pipeline.h).  Run with tests/fuzz/run.sh. */
#include "fuzz_pipeline.h"

static void fuzz_commands(const uint8_t *data, size_t size, uint32_t hash)
{
    fz_cmd c = fz_cmd_new(cmd_backward, "backward");
    fz_arg(&c, fz_loss_arg(data, size, "--loss"));
    if (hash & 1)
        fz_arg(&c, "--checkpoints=fc_0.tmp_0,fc_0.tmp_1,relu_0.tmp_0");
    fz_run(&c, "backward");
    c = fz_cmd_new(cmd_gradients, "gradients");
    fz_arg(&c, fz_loss_arg(data, size, "--targets"));
    fz_arg(&c, "--all-params");
    fz_run(&c, "gradients");
}
