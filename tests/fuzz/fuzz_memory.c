/* fuzz_memory.c - libFuzzer target: `pdtrans memory-optimize` (level 0 or 1,
 * by the input's hash) and `pdtrans release-memory` on each input, with the
 * structure-aware mutator of fuzz_mutator.h (fuzz_pipeline.h).  Run with
 * tests/fuzz/run.sh. */
#include "fuzz_pipeline.h"

static void fuzz_commands(const uint8_t *data, size_t size, uint32_t hash)
{
    (void)data;
    (void)size;
    fz_cmd c = fz_cmd_new(cmd_memory_optimize, "memory-optimize");
    if (hash & 1)
        fz_arg(&c, "--level=1");
    fz_run(&c, "memory-optimize");
    c = fz_cmd_new(cmd_release_memory, "release-memory");
    fz_run(&c, "release-memory");
}

