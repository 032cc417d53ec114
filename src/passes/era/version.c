/* version.c - the Paddle versions --paddle-version knows, and reading the
 * version that wrote a program off the program itself (issue 30 point 1).
 *
 * Evidence, strongest first (framework.proto and framework.py of each
 * version in PaddlePaddle/Paddle):
 *  - ProgramDesc.version (field 4) above 0: ProgramDesc's constructor
 *    stores kCurProgramVersion = PADDLE_VERSION_INTEGER, MAJOR*1000000 +
 *    MINOR*1000 + PATCH, in release builds (1007001 in the PaddleOCR
 *    recogniser, 1008002 in the detector); develop builds store 0.
 *  - op_version_map (field 5): written from 2.0 (framework.proto 2.0).
 *    Then with_quant_attr on ops says 2.2 or later (framework.py 2.2 adds
 *    it to every op), a SCALAR or SCALARS attr 2.5 or later (AttrType 16/17
 *    arrive in framework.proto 2.5).
 *  - op_compatible_map (field 3): 1.6 to 1.8 (framework.proto 1.6 moved
 *    Version from field 2 to 4 and added it; 2.0 retired it).  op_device
 *    on the ops then says 1.8 (framework.py 1.8), its absence 1.6 or 1.7.
 *  - the Version message in field 2: 1.5 or earlier.
 *  - ops with op_callstack (every op Python built since about 1.0) and a
 *    Version of 0 (a develop build; the 2.0 line stores op_version_map):
 *    1.x; op_device says 1.8, none on any op 1.7 or earlier.
 * Nothing else tells: pdtrans writes as it does natively.  Only ops read
 * from the input are looked at (never the ones pdtrans made), the first
 * FINGERPRINT_OPS of each block: Python gives every op these framework
 * attrs, so the first ops show them; a bounded look keeps the step
 * constant in program size. */
#include "era.h"

#include <glib.h>

#include <stdio.h>
#include <string.h>

#include "../pass.h"

#define FINGERPRINT_OPS 64

static const int known[] = {104, 105, 106, 107, 108, 200, 201, 202, 203, 204, 205, 206, 300};
#define N_KNOWN (sizeof known / sizeof *known)

const char *pdt_era_known_list(void)
{
    return "1.4, 1.5, 1.6, 1.7, 1.8, 2.0, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6, 3.0";
}

int pdt_era_parse(const char *text)
{
    unsigned major, minor;
    char tail;
    if (!text || sscanf(text, "%u.%u%c", &major, &minor, &tail) != 2 || major > 99 || minor > 99)
        return -1;
    for (size_t i = 0; i < N_KNOWN; i++)
        if (known[i] == (int)(major * 100 + minor))
            return known[i];
    return -1;
}

void pdt_era_format(int era, char *buf, size_t cap)
{
    if (era == PDT_ERA_NATIVE)
        snprintf(buf, cap, "native");
    else
        snprintf(buf, cap, "%d.%d", era / 100, era % 100);
}

/* Reads a varint at *pos of [b, b+n); false at the end or on bad bytes. */
static bool varint(const uint8_t *b, size_t n, size_t *pos, uint64_t *out)
{
    *out = 0;
    for (int shift = 0; shift < 64 && *pos < n; shift += 7) {
        uint8_t c = b[(*pos)++];
        *out |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return true;
    }
    return false;
}

/* Whether the ProgramDesc's unknown bytes hold field FIELD. */
static bool has_retired_field(const ir_program *p, unsigned field)
{
    const uint8_t *b = p->unknown.data;
    size_t n = p->unknown.len, pos = 0;
    uint64_t key, v;
    while (pos < n && varint(b, n, &pos, &key)) {
        if (key >> 3 == field)
            return true;
        switch (key & 7) {
        case 0: if (!varint(b, n, &pos, &v)) return false; break;
        case 1: pos += 8; break;
        case 2: if (!varint(b, n, &pos, &v) || v > n - pos) return false; pos += v; break;
        case 5: pos += 4; break;
        default: return false;
        }
    }
    return false;
}

typedef struct {
    bool callstack, device, quant, scalar, python2;
} prints;

/* A traceback line of Python 2's site-packages: File "/usr/lib/python2.7/..." */
static bool python2_callstack(const ir_attr *a)
{
    if (!a || a->type != IR_ATTR_STRINGS)
        return false;
    for (size_t i = 0; i < a->n_strings; i++)
        if (g_strstr_len((const char *)a->strings[i].data, (gssize)a->strings[i].len, "python2."))
            return true;
    return false;
}

static void scan_ops(const ir_program *p, prints *f)
{
    for (size_t bi = 0; bi < p->n_blocks; bi++) {
        const ir_block *b = p->blocks[bi];
        size_t seen = 0;
        for (size_t k = 0; k < b->n_ops && seen < FINGERPRINT_OPS; k++) {
            const ir_op *op = b->ops[k];
            if (op->made)
                continue;
            seen++;
            f->callstack |= ir_op_attr(op, "op_callstack") != NULL;
            f->python2 = f->python2 || python2_callstack(ir_op_attr(op, "op_callstack"));
            f->device |= ir_op_attr(op, "op_device") != NULL;
            f->quant |= ir_op_attr(op, "with_quant_attr") != NULL;
            const ir_attr *a = ir_op_attrs(op);
            for (size_t i = 0; i < op->n_attrs; i++)
                f->scalar |= a[i].type == IR_ATTR_SCALAR || a[i].type == IR_ATTR_SCALARS;
        }
    }
}

/* The newest known version at or below V (MAJOR*100+MINOR), or native. */
static int at_or_below(int v)
{
    int best = PDT_ERA_NATIVE;
    for (size_t i = 0; i < N_KNOWN; i++)
        if (known[i] <= v)
            best = known[i];
    return best;
}

int pdt_era_detect(const ir_program *p, char *why, size_t cap)
{
    prints f = {0};
    scan_ops(p, &f);
    if (p->has_version && p->version > 0) {
        int v = (int)(p->version / 1000000) * 100 + (int)(p->version / 1000 % 1000);
        snprintf(why, cap, "ProgramDesc.version is %lld (PADDLE_VERSION_INTEGER of %d.%d)",
                 (long long)p->version, v / 100, v % 100);
        return v > known[N_KNOWN - 1] ? known[N_KNOWN - 1] : at_or_below(v);
    }
    if (p->has_op_version_map) {
        snprintf(why, cap, "op_version_map is set (2.0 on)%s",
                 f.scalar ? " and ops have SCALAR attrs (2.5 on)"
                 : f.quant ? " and ops have with_quant_attr (2.2 on)" : "");
        return f.scalar ? 205 : f.quant ? 202 : 200;
    }
    if (has_retired_field(p, 3)) {
        snprintf(why, cap, "op_compatible_map is set (1.6 to 1.8) and ops %s op_device (1.8 on)",
                 f.device ? "have" : "lack");
        return f.device ? 108 : 107;
    }
    if (has_retired_field(p, 2)) {
        snprintf(why, cap, "the Version message is in field 2 (1.5 and earlier)");
        return 105;
    }
    if (p->has_version && f.callstack) {
        snprintf(why, cap, "ProgramDesc.version is 0 (1.x) and Python-built ops (op_callstack) "
                           "%s op_device (1.8 on)", f.device ? "have" : "lack");
        return f.device ? 108 : 107;
    }
    snprintf(why, cap, "nothing in the program tells the version (no version number, "
                       "op_version_map, op_compatible_map or op_callstack)");
    return PDT_ERA_NATIVE;
}

bool pdt_era_python2(const ir_program *p)
{
    prints f = {0};
    scan_ops(p, &f);
    return f.python2;
}

int pdt_era_resolve(const pdt_ctx *ctx)
{
    const char *v = ctx->settings.paddle_version;
    if (v && strcmp(v, "auto"))
        return pdt_era_parse(v);
    char why[256];
    int era = ctx->main ? pdt_era_detect(ctx->main, why, sizeof why) : PDT_ERA_NATIVE;
    if (era == PDT_ERA_NATIVE && ctx->startup)
        era = pdt_era_detect(ctx->startup, why, sizeof why);
    return era;
}
