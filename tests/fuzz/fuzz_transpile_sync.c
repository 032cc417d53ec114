/* fuzz_transpile_sync.c - libFuzzer target: pserver-mode transpile, sync
 * (2 pservers, 2 trainers; round-robin, hash or balanced split, slicing on
 * or off by the input's hash).  A program without optimizer ops gets
 * --loss and --optimizer first (fuzz_pipeline.h).  Run with
 * tests/fuzz/run.sh. */
#include "fuzz_pipeline.h"

static void fuzz_commands(const uint8_t *data, size_t size, uint32_t hash)
{
    static const char *const splits[] = {"--split-method=round-robin", "--split-method=hash",
                                         "--split-method=balanced"};
    fz_cmd c = fz_cmd_new(cmd_transpile, "transpile");
    fz_arg(&c, "--pservers=127.0.0.1:6174,127.0.0.1:6175");
    fz_arg(&c, "--trainers=2");
    fz_arg(&c, splits[hash % 3]);
    if (hash & 8)
        fz_arg(&c, "--no-slice");
    if (hash & 16)
        fz_arg(&c, "--role=pserver"), fz_arg(&c, "--endpoint=127.0.0.1:6175");
    fz_maybe_minimize(&c, data, size);
    fz_run(&c, "transpile sync");
}
