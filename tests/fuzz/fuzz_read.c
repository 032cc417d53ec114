/* fuzz_read.c - libFuzzer target: any bytes through pdio_parse (binary or
 * text, told apart by content), then verify and the round-trip fixed point
 * of fuzz_common.h.  Build and run with tests/fuzz/run.sh (`make fuzz`). */
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pdt_quiet = true;
    fuzz_one(data, size);
    return 0;
}
