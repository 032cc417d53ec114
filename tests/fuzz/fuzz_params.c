/* fuzz_params.c - libFuzzer target: any bytes as Paddle parameter records
 * (src/io/params.c) for three vars in turn, an FP32 LoD tensor, an INT64 one
 * and an FP32 SelectedRows, as a combined file holds them.  Every record
 * that decodes is encoded again, and the encoding must be a fixed point:
 * decoding it gives a record that encodes to the same bytes.  A crash, a
 * sanitizer report, a leak or a broken fixed point is a finding. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "io/params.h"
#include "ir/tensors.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ir_program *prog;
static ir_var *vars[3];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    pdt_quiet = true;
    prog = ir_program_new();
    ir_block *b = ir_program_add_block(prog, -1);
    static const struct { const char *name; int type, dtype; } decl[] = {
        {"a", IR_LOD_TENSOR, IR_FP32}, {"b", IR_LOD_TENSOR, IR_INT64},
        {"c", IR_SELECTED_ROWS, IR_FP32}};
    for (int i = 0; i < 3; i++) {
        vars[i] = ir_block_var(b, decl[i].name);
        vars[i]->type = decl[i].type;
        vars[i]->dtype = decl[i].dtype;
        vars[i]->persistable = true;
    }
    return 0;
}

static void fixed_point(const ir_var *v, const ir_tensor *t)
{
    GByteArray *once = g_byte_array_new(), *twice = g_byte_array_new();
    params_encode_record(t, once);
    ir_tensors *set = ir_tensors_new();
    size_t off = 0;
    if (params_decode_record("again", v, once->data, once->len, &off,
                             ir_tensors_put(set, v->name)) != PDT_OK || off != once->len) {
        fprintf(stderr, "fuzz_params: the encoding of '%s' does not decode\n", v->name);
        abort();
    }
    params_encode_record(ir_tensors_find(set, v->name), twice);
    if (once->len != twice->len || memcmp(once->data, twice->data, once->len) != 0) {
        fprintf(stderr, "fuzz_params: the encoding of '%s' is not a fixed point\n", v->name);
        abort();
    }
    ir_tensors_free(set);
    g_byte_array_free(once, TRUE);
    g_byte_array_free(twice, TRUE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ir_tensors *set = ir_tensors_new();
    size_t off = 0;
    for (int i = 0; i < 3 && off < size; i++) {
        ir_tensor *t = ir_tensors_put(set, vars[i]->name);
        if (params_decode_record("fuzz", vars[i], data, size, &off, t) != PDT_OK)
            break;
        fixed_point(vars[i], t);
    }
    ir_tensors_free(set);
    return 0;
}
