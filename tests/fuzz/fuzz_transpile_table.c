/* fuzz_transpile_table.c - libFuzzer target: pserver-mode transpile of
 * programs with a distributed lookup table (is_distributed lookup_table,
 * remote prefetch): run.sh seeds it with those programs only; sync or
 * async by the input's hash.  Run with tests/fuzz/run.sh. */
#include "fuzz_pipeline.h"

static void fuzz_commands(const uint8_t *data, size_t size, uint32_t hash)
{
    fz_cmd c = fz_cmd_new(cmd_transpile, "transpile");
    fz_arg(&c, "--pservers=127.0.0.1:6174,127.0.0.1:6175");
    fz_arg(&c, "--trainers=2");
    fz_arg(&c, "--trainer-id=1");
    if (hash & 1)
        fz_arg(&c, "--async");
    fz_maybe_minimize(&c, data, size);
    fz_run(&c, "transpile table");
}
