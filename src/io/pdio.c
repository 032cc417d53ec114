/* pdio.c - reading programs: bytes from a file or stdin, binary or text,
 * into the IR, with one clear message per failure. */
#include "pdio.h"
#include "pdio_map.h"

#include <errno.h>
#include <inttypes.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../diag.h"
#include "../ir/alloc.h"
#include "../ir/env.h"
#include "../ir/util.h"
#include "pbconv.h"
#include "pbtext.h"

static const ProtobufCMessageDescriptor *PROGRAM_DESC =
    &paddle__framework__proto__program_desc__descriptor;

/* --max-input and --max-output: the env's part PDT_ENV_IO_LIMITS
 * (src/ir/env.h). */
typedef struct {
    uint64_t max_input, max_output;
} io_limits;

static void io_limits_init(void *p)
{
    io_limits *l = p;
    l->max_input = PDIO_DEFAULT_MAX_INPUT;
    l->max_output = PDIO_DEFAULT_MAX_OUTPUT;
}

static io_limits *io_limits_now(void)
{
    return pdt_env_part(PDT_ENV_IO_LIMITS, sizeof(io_limits), io_limits_init);
}

void pdio_set_max_input_size(uint64_t bytes)
{
    io_limits_now()->max_input = bytes;
}

uint64_t pdio_max_input_size(void)
{
    return io_limits_now()->max_input;
}

void pdio_set_max_output_size(uint64_t bytes)
{
    io_limits_now()->max_output = bytes;
}

uint64_t pdio_max_output_size(void)
{
    return io_limits_now()->max_output;
}
/* What the readers below compare with. */
#define max_input (io_limits_now()->max_input)

bool pdio_parse_size(const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    /* Beyond 2^62 no machine holds the file; the bound keeps sums of
     * sizes from overflowing. */
    if (errno || *end || v == 0 || v > (UINT64_C(1) << 62) >> shift)
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

/* "2 GiB" for a round cap, "1000 bytes" otherwise. */
static void describe_size(uint64_t v, char *buf, size_t cap)
{
    static const char *const units[] = {"GiB", "MiB", "KiB"};
    static const unsigned shifts[] = {30, 20, 10};
    for (int i = 0; i < 3; i++)
        if (v >> shifts[i] && v % (UINT64_C(1) << shifts[i]) == 0) {
            snprintf(buf, cap, "%" PRIu64 " %s", v >> shifts[i], units[i]);
            return;
        }
    snprintf(buf, cap, "%" PRIu64 " bytes", v);
}

static void report_too_large(const char *name)
{
    char size[64];
    describe_size(max_input, size, sizeof size);
    pdt_error("%s: larger than the input size cap of %s; --max-input-size raises it",
              name, size);
}

/* Reads the whole stream, at most max_input bytes: a regular file's size
 * is known up front, a pipe or device is read until one byte past the cap.
 * NULL when the cap is exceeded (*too_large set) or on a read error (errno
 * set). */
static uint8_t *slurp(FILE *f, size_t *len, bool *too_large)
{
    struct stat st;
    size_t cap = 1 << 16;
    *too_large = false;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
        if ((uint64_t)st.st_size > max_input) {
            *too_large = true;
            return NULL;
        }
        cap = (size_t)st.st_size + 1;
    }
    size_t n = 0;
    uint8_t *buf = xmalloc(cap);
    for (;;) {
        if (n == cap) {
            if ((uint64_t)n > max_input) {
                free(buf);
                *too_large = true;
                return NULL;
            }
            /* Grow to at most one byte past the cap: enough to tell. */
            uint64_t next = (uint64_t)cap * 2;
            cap = (size_t)(next > max_input + 1 ? max_input + 1 : next);
            buf = xrealloc(buf, cap);
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                free(buf);
                return NULL;
            }
            break;
        }
    }
    if ((uint64_t)n > max_input) {
        free(buf);
        *too_large = true;
        return NULL;
    }
    *len = n;
    return buf;
}

/* protoc's text output, and hand-written programs, are printable ASCII;
 * a binary ProgramDesc has a control byte (a field tag such as 0x08)
 * within its first few bytes. */
static bool looks_like_text(const uint8_t *data, size_t len)
{
    size_t n = len < 4096 ? len : 4096;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = data[i];
        if (c == '\n' || c == '\t' || c == '\r')
            continue;
        if (c < 0x20 || c >= 0x7f)
            return false;
    }
    return true;
}

/* protobuf-c allocates every sub-message and string separately; drawing
 * them from one arena and dropping it whole makes reading a large program
 * cost about half as much as malloc/free would. */
static void *arena_alloc(void *a, size_t size)
{
    return ir_arena_alloc_raw(a, size);
}

static void arena_free(void *a, void *p)
{
    (void)a;
    (void)p;
}

/* owned: NULL, or data's own malloc'd buffer, which the fast reader may
 * hand to the program (its clean ops then point into it instead of copying
 * their bytes); the caller frees it unless p->input_bytes is it. */
static ir_program *parse(const char *name, const uint8_t *data, size_t len, uint8_t *owned)
{
    if (len == 0) {
        pdt_error("%s: empty file, not a ProgramDesc", name);
        return NULL;
    }
    ProtobufCMessage *msg;
    ir_arena *scratch = NULL;
    char why[512];
    if (looks_like_text(data, len)) {
        msg = pbtext_parse(PROGRAM_DESC, name, (const char *)data, len, why, sizeof why);
        if (!msg) {
            pdt_error("%s", why);
            return NULL;
        }
    } else {
        /* A decoded program's arena holds about as many bytes as its
         * file (0.9x to 2x on the bench nets): huge pages up to 7/8 of it
         * (ir_program_expect_next). */
        ir_program_expect_next(len / 8 * 7);
        ir_program *fast = owned ? pbconv_decode_owned(owned, len) : pbconv_decode(data, len);
        ir_program_expect_next(0);
        if (fast)
            return fast;
        scratch = ir_arena_new();
        ProtobufCAllocator alloc = {arena_alloc, arena_free, scratch};
        msg = protobuf_c_message_unpack(PROGRAM_DESC, &alloc, len, data);
        if (!msg) {
            ir_arena_free(scratch);
            if (pbwire_diagnose(PROGRAM_DESC, data, len, why, sizeof why) == 0)
                snprintf(why, sizeof why, "malformed protobuf data");
            pdt_error("%s: not a valid ProgramDesc: %s", name, why);
            return NULL;
        }
    }
    const PbProgram *prog = (const PbProgram *)msg;
    ir_program *p = NULL;
    if (!pbconv_field_numbers_valid(msg))
        pdt_error("%s: not a valid ProgramDesc: a field number is 0 or above 536870911", name);
    else if (prog->n_blocks == 0)
        pdt_error("%s: not a valid ProgramDesc: it has no blocks", name);
    else
        p = pbconv_to_ir(prog);
    if (scratch)
        ir_arena_free(scratch);
    else
        protobuf_c_message_free_unpacked(msg, NULL);
    return p;
}

ir_program *pdio_parse(const char *name, const uint8_t *data, size_t len)
{
    return parse(name, data, len, NULL);
}

ir_program *pdio_read(const char *path)
{
    return pdio_read_sha256(path, NULL);
}

/* Nettle's SHA-256 uses the CPU's SHA instructions where there are some:
 * 5.6 ms for the 8.3 MB bench input against GLib's 26 ms (7% of a
 * transpile), with no allocation and no configuration read. */
void pdio_sha256_hex(const uint8_t *data, size_t len, char hex[65])
{
    struct sha256_ctx c;
    uint8_t md[SHA256_DIGEST_SIZE];
    sha256_init(&c);
    sha256_update(&c, len, data);
    sha256_digest(&c, sizeof md, md);
    for (size_t i = 0; i < sizeof md; i++) {
        hex[2 * i] = "0123456789abcdef"[md[i] >> 4];
        hex[2 * i + 1] = "0123456789abcdef"[md[i] & 15];
    }
    hex[64] = '\0';
}

ir_program *pdio_read_sha256(const char *path, char sha256[65])
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    pdt_alloc_doing("reading '%s'", name);
    if (!f) {
        pdt_error("%s: cannot open: %s", name, strerror(errno));
        return NULL;
    }
    size_t len = 0;
    bool too_large = false;
    /* A file over the cap is not mapped: slurp refuses it, as it refuses
     * a pipe or device that runs past the cap. */
    struct stat st;
    uint8_t *data = NULL;
    if (f != stdin && fstat(fileno(f), &st) == 0 && (uint64_t)st.st_size <= max_input)
        data = pdio_map_input(fileno(f), &st, name);
    if (data)
        len = (size_t)st.st_size;
    bool mapped = data != NULL;
    if (!mapped)
        data = slurp(f, &len, &too_large);
    int saved = errno;
    if (f != stdin)
        fclose(f);
    if (too_large) {
        report_too_large(name);
        return NULL;
    }
    if (!data) {
        pdt_error("%s: cannot read: %s", name, strerror(saved));
        return NULL;
    }
    if (sha256)
        pdio_sha256_hex(data, len, sha256);
    ir_program *p = parse(name, data, len, data);
    if (p && p->input_bytes == data)
        p->input_free = mapped ? pdio_unmap_input : NULL;
    else if (mapped)
        pdio_unmap_input(data);
    else
        free(data);
    return p;
}

uint8_t *pdio_read_input(const char *path, const char *what, size_t *len)
{
    pdt_alloc_doing("reading '%s'", path);
    FILE *f = fopen(path, "rb");
    if (!f) {
        pdt_error("%s: %scannot open: %s", path, what, strerror(errno));
        return NULL;
    }
    struct stat st;
    uint8_t *data = NULL;
    bool too_large = false;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size <= max_input)
        data = pdio_map_input(fileno(f), &st, path);
    if (data)
        *len = (size_t)st.st_size;
    else
        data = slurp(f, len, &too_large);
    int saved = errno;
    fclose(f);
    if (too_large) {
        report_too_large(path);
        return NULL;
    }
    if (!data)
        pdt_error("%s: %scannot read: %s", path, what, strerror(saved));
    return data;
}

void pdio_release_input(uint8_t *data)
{
    if (data && pdio_is_mapped(data))
        pdio_unmap_input(data);
    else
        free(data);
}

/* Takes every attr named DROP out of the ops of MSG (pbconv_from_ir's
 * arrays, ours to edit); the IR is left as it was. */
static void drop_attr(PbProgram *msg, const char *drop)
{
    for (size_t b = 0; b < msg->n_blocks; b++)
        for (size_t o = 0; o < msg->blocks[b]->n_ops; o++) {
            PbOp *op = msg->blocks[b]->ops[o];
            size_t kept = 0;
            for (size_t i = 0; i < op->n_attrs; i++)
                if (strcmp(op->attrs[i]->name, drop) != 0)
                    op->attrs[kept++] = op->attrs[i];
            op->n_attrs = kept;
        }
}

uint8_t *pdio_serialize_text_without(const ir_program *p, const char *drop, size_t *len)
{
    pbconv_out out = {ir_arena_new(), 0, 0, NULL};
    PbProgram *msg = pbconv_from_ir(p, &out);
    if (drop)
        drop_attr(msg, drop);
    uint8_t *buf = (uint8_t *)pbtext_print_to_string(&msg->base, len);
    pbconv_release(&out);
    ir_arena_free(out.scratch);
    return buf;
}

uint8_t *pdio_serialize(const ir_program *p, bool text, size_t *len)
{
    if (!text)
        return pbconv_encode(p, len);
    return pdio_serialize_text_without(p, NULL, len);
}

bool pdio_path_is_text(const char *path)
{
    size_t n = strlen(path);
    return (n >= 6 && strcmp(path + n - 6, ".pbtxt") == 0) ||
           (n >= 4 && strcmp(path + n - 4, ".txt") == 0);
}
