/* fuzz_check.c - libFuzzer target: `pdtrans check` on each input.  Run
 * with tests/fuzz/run.sh. */
#include "fuzz_pipeline.h"

static void fuzz_commands(const uint8_t *data, size_t size, uint32_t hash)
{
    (void)data;
    (void)size;
    (void)hash;
    fz_cmd c = fz_cmd_new(cmd_check, "check");
    fz_run(&c, "check");
}
