/* fuzz_common.h - the check shared by the libFuzzer targets (fuzz_read.c,
 * fuzz_text.c).  Not part of `make check`; see run.sh and `make fuzz`.
 *
 * For one input: pdio_parse it; if a program comes back, verify it, then
 * for each form (binary, text) serialize it, parse the serialized bytes
 * again and serialize that: the two serializations must be byte-identical
 * (the canonical form is a fixed point).  Anything else aborts, which
 * libFuzzer reports as a crash and saves as a reproducer.
 *
 * The direct codec (src/io/pbenc.c, pbdec.c) is held to protobuf-c, its
 * reference, on every input: pbconv_encode gives the bytes protobuf-c packs
 * for pbconv_from_ir's message, and whatever pbconv_decode accepts,
 * protobuf-c accepts too (with pdio_parse's own rules), giving a program
 * of the same binary and text form.
 *
 * With PDT_FUZZ_STRICT=1 in the environment it also checks two promises
 * that README.md and pbtext.h make with documented exceptions (so a
 * mismatch there needs judging against those exceptions; off by default):
 * - cross: the text form, parsed back, written in binary and read again,
 *   prints the same text (compared as text, because unknown fields are
 *   re-encoded from the text: pbtext.h);
 * - fidelity: the program's binary form equals what protobuf-c itself packs
 *   for the input (protobuf_c_message_unpack, or pbtext_parse for text):
 *   "reading a file and writing it back unchanged gives exactly the bytes
 *   protobuf itself writes for it". */
#ifndef PDT_FUZZ_COMMON_H
#define PDT_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "framework.pb-c.h"
#include "io/pbconv.h"
#include "io/pbtext.h"
#include "io/pdio.h"
#include "ir/ir.h"
#include "passes/verify.h"

static bool fuzz_strict;

static void fuzz_init(void)
{
    pdt_quiet = true;
    const char *e = getenv("PDT_FUZZ_STRICT");
    fuzz_strict = e && *e && strcmp(e, "0") != 0;
}

static void fuzz_dump(const char *label, const uint8_t *s, size_t n, size_t at)
{
    size_t from = at > 32 ? at - 32 : 0, to = at + 32 < n ? at + 32 : n;
    fprintf(stderr, "  %s [%zu..%zu):", label, from, to);
    for (size_t i = from; i < to; i++)
        fprintf(stderr, i == at ? " [%02x]" : " %02x", s[i]);
    fprintf(stderr, "\n");
}

static void fuzz_compare(const char *what, const uint8_t *a, size_t na,
                         const uint8_t *b, size_t nb)
{
    if (na == nb && memcmp(a, b, na) == 0)
        return;
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i])
        i++;
    fprintf(stderr,
            "fuzz: %s: not byte-identical: %zu vs %zu bytes, first "
            "difference at byte %zu\n",
            what, na, nb, i);
    fuzz_dump("first ", a, na, i);
    fuzz_dump("second", b, nb, i);
    abort();
}

static uint8_t *fuzz_serialize(const ir_program *p, bool text, size_t *n,
                               const char *what)
{
    uint8_t *s = pdio_serialize(p, text, n);
    if (!s) {
        fprintf(stderr, "fuzz: %s: pdio_serialize(text=%d) returned NULL\n",
                what, text);
        abort();
    }
    return s;
}

/* Serializes p in one form, parses that back and serializes again. */
static void fuzz_fixed_point(const ir_program *p, bool text)
{
    const char *what = text ? "text round trip" : "binary round trip";
    size_t n1 = 0, n2 = 0;
    uint8_t *s1 = fuzz_serialize(p, text, &n1, what);
    bool was = pdt_quiet;
    pdt_quiet = false; /* if pdtrans cannot read its own output, say why */
    ir_program *q = pdio_parse(text ? "fuzz-text" : "fuzz-binary", s1, n1);
    pdt_quiet = was;
    if (!q) {
        fprintf(stderr, "fuzz: %s: pdio_parse rejects pdtrans's own %zu-byte "
                        "output\n", what, n1);
        abort();
    }
    uint8_t *s2 = fuzz_serialize(q, text, &n2, what);
    fuzz_compare(what, s1, n1, s2, n2);
    if (fuzz_strict && text) {
        size_t nb = 0, nt = 0;
        uint8_t *b = fuzz_serialize(q, false, &nb, what);
        ir_program *r = pdio_parse("fuzz-cross", b, nb);
        if (!r) {
            fprintf(stderr, "fuzz: cross: pdio_parse rejects the binary form of "
                            "the text round trip\n");
            abort();
        }
        uint8_t *t = fuzz_serialize(r, true, &nt, what);
        fuzz_compare("cross (text -> binary -> text)", s1, n1, t, nt);
        ir_program_free(r);
        free(b);
        free(t);
    }
    ir_program_free(q);
    free(s1);
    free(s2);
}

/* pdio.c's rule for telling the forms apart. */
static bool fuzz_is_text(const uint8_t *data, size_t len)
{
    for (size_t i = 0; i < len && i < 4096; i++)
        if ((data[i] < 0x20 && data[i] != '\n' && data[i] != '\t' && data[i] != '\r') ||
            data[i] >= 0x7f)
            return false;
    return true;
}

/* p's binary form against protobuf-c's own unpack (or pbtext_parse) + pack. */
static void fuzz_fidelity(const ir_program *p, const uint8_t *data, size_t size)
{
    const ProtobufCMessageDescriptor *d = &paddle__framework__proto__program_desc__descriptor;
    ProtobufCMessage *m = fuzz_is_text(data, size)
                              ? pbtext_parse(d, "fuzz", (const char *)data, size, NULL, 0)
                              : protobuf_c_message_unpack(d, NULL, size, data);
    if (!m) {
        fprintf(stderr, "fuzz: fidelity: pdio_parse accepts what protobuf-c rejects\n");
        abort();
    }
    size_t nr = protobuf_c_message_get_packed_size(m), np = 0;
    uint8_t *ref = malloc(nr ? nr : 1);
    protobuf_c_message_pack(m, ref);
    protobuf_c_message_free_unpacked(m, NULL);
    uint8_t *mine = fuzz_serialize(p, false, &np, "fidelity");
    fuzz_compare("fidelity (protobuf-c's bytes vs pdtrans's)", ref, nr, mine, np);
    free(ref);
    free(mine);
}

/* pbconv_encode against protobuf-c's pack of pbconv_from_ir. */
static void fuzz_encoder(const ir_program *p)
{
    pbconv_out out = {ir_arena_new(), 0, 0, NULL};
    PbProgram *msg = pbconv_from_ir(p, &out);
    size_t nr = protobuf_c_message_get_packed_size(&msg->base), ne = 0;
    uint8_t *ref = malloc(nr + 1);
    protobuf_c_message_pack(&msg->base, ref);
    pbconv_release(&out);
    ir_arena_free(out.scratch);
    uint8_t *enc = pbconv_encode(p, &ne);
    fuzz_compare("encoder (protobuf-c's pack vs pbconv_encode)", ref, nr, enc, ne);
    free(ref);
    free(enc);
}

/* pbconv_decode against protobuf-c's unpack and pbconv_to_ir. */
static void fuzz_decoder(const uint8_t *data, size_t size)
{
    ir_program *fast = pbconv_decode(data, size);
    if (!fast)
        return;
    ProtobufCMessage *m = protobuf_c_message_unpack(
        &paddle__framework__proto__program_desc__descriptor, NULL, size, data);
    ir_program *ref = NULL;
    if (m && pbconv_field_numbers_valid(m) && ((PbProgram *)m)->n_blocks)
        ref = pbconv_to_ir((PbProgram *)m);
    if (m)
        protobuf_c_message_free_unpacked(m, NULL);
    if (!ref) {
        fprintf(stderr, "fuzz: decoder: pbconv_decode accepts what protobuf-c refuses\n");
        abort();
    }
    for (int text = 0; text < 2; text++) {
        size_t na = 0, nb = 0;
        uint8_t *a = fuzz_serialize(fast, text, &na, "decoder");
        uint8_t *b = fuzz_serialize(ref, text, &nb, "decoder");
        fuzz_compare(text ? "decoder (text form of pbconv_decode vs protobuf-c)"
                          : "decoder (binary form of pbconv_decode vs protobuf-c)",
                     b, nb, a, na);
        free(a);
        free(b);
    }
    ir_program_free(fast);
    ir_program_free(ref);
}

static void fuzz_one(const uint8_t *data, size_t size)
{
    if (!fuzz_is_text(data, size))
        fuzz_decoder(data, size);
    ir_program *p = pdio_parse("fuzz", data, size);
    if (p) {
        fuzz_encoder(p);
        (void)pdt_verify(p, "fuzz", NULL);
        if (fuzz_strict)
            fuzz_fidelity(p, data, size);
        fuzz_fixed_point(p, false);
        fuzz_fixed_point(p, true);
        ir_program_free(p);
    }
    /* Names are interned process-wide; drop them so that memory does not
     * grow over a run and each input starts from the same state. */
    ir_intern_shutdown();
}

#endif
