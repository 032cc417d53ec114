/* fuzz_transpile_async.c - libFuzzer target: pserver-mode transpile,
 * --async, --half-async or --async --dc-asgd by the input's hash.  A
 * program without optimizer ops gets --loss and --optimizer first
 * (fuzz_pipeline.h).  Run with tests/fuzz/run.sh. */
#include "fuzz_pipeline.h"

static void fuzz_commands(const uint8_t *data, size_t size, uint32_t hash)
{
    fz_cmd c = fz_cmd_new(cmd_transpile, "transpile");
    fz_arg(&c, "--pservers=127.0.0.1:6174,127.0.0.1:6175");
    fz_arg(&c, "--trainers=2");
    switch (hash % 3) {
    case 0: fz_arg(&c, "--async"); break;
    case 1: fz_arg(&c, "--half-async"); break;
    default: fz_arg(&c, "--async"), fz_arg(&c, "--dc-asgd"); break;
    }
    fz_maybe_minimize(&c, data, size);
    fz_run(&c, "transpile async");
}
