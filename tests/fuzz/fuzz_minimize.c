/* fuzz_minimize.c - libFuzzer target: `pdtrans minimize --loss=L` with an
 * optimizer, regularization, clipping and LR schedule picked by the input's
 * hash (fuzz_pipeline.h).  Run with tests/fuzz/run.sh. */
#include "fuzz_pipeline.h"

static void fuzz_commands(const uint8_t *data, size_t size, uint32_t hash)
{
    static const char *const optimizers[] = {
        "--optimizer=sgd:lr=0.1", "--optimizer=adam:lr=0.001", "--optimizer=momentum:lr=0.1,momentum=0.9",
        "--optimizer=adagrad:lr=0.1", "--optimizer=rmsprop:lr=0.1", "--optimizer=ftrl:lr=0.1",
        "--optimizer=lars_momentum:lr=0.1,momentum=0.9", "--optimizer=adamax:lr=0.1"};
    static const char *const extras[] = {
        NULL, "--regularization=l2:0.01", "--clip=global_norm:1.0", "--clip=value:1.0",
        "--lr-schedule=exponential:decay_steps=10,decay_rate=0.5",
        "--lr-schedule=piecewise:boundaries=10,20,values=0.1,0.01,0.001"};
    fz_cmd c = fz_cmd_new(cmd_minimize, "minimize");
    fz_arg(&c, fz_loss_arg(data, size, "--loss"));
    fz_arg(&c, optimizers[hash % 8]);
    const char *extra = extras[(hash >> 3) % 6];
    if (extra)
        fz_arg(&c, extra);
    fz_run(&c, "minimize");
}
