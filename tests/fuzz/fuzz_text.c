/* fuzz_text.c - libFuzzer target for the text-format path only: every byte
 * that pdio.c's looks_like_text would reject (a control byte other than
 * \n \t \r, or a byte >= 0x7f) is mapped into the printable range, so
 * printable inputs (the .pbtxt seeds and their mutations) pass unchanged
 * and every input reaches pbtext_parse.  Then verify and the round-trip
 * fixed point of fuzz_common.h.  Build and run with tests/fuzz/run.sh. */
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
    /* A copy of exactly `size` bytes, so ASan still sees reads past the end. */
    uint8_t *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    for (size_t i = 0; i < size; i++) {
        uint8_t c = data[i];
        if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c >= 0x7f)
            c = (uint8_t)(0x20 + c % 0x5f);
        text[i] = c;
    }
    fuzz_one(text, size);
    free(text);
    return 0;
}
