/* fuzz_inference.c - libFuzzer target: `pdtrans inference --params=...` end
 * to end, on a mutated inference program AND mutated parameter files.
 *
 * One input is a small container (packed by run.sh's pack_inference):
 *   byte 0      flags: 1 the combined layout (--params=FILE, the records
 *               concatenated in chunk order), else a folder with one file
 *               per chunk; 2 write a combined file (--params-filename);
 *               4 --text; 8 --max-input-size of the program's own size
 *               (the cap must refuse larger parameter files, issue 27
 *               point 2)
 *   u32 LE P, then P bytes: the program (binary or text)
 *   chunks to the end: u8 name length, the name (the file's name in the
 *               folder), u32 LE length, the record's bytes (a last chunk
 *               shorter than its length keeps what there is)
 *
 * The custom mutator keeps that structure: the program goes through the
 * program mutator of fuzz_mutator.h; a record gets its header fields
 * (versions, LoD level count and sizes, SelectedRows row count and height,
 * desc length) set to extremes, its TensorDesc a bad data type or an
 * extreme, extra or missing dim, its data truncated or grown; chunks are
 * dropped, duplicated, swapped and renamed (wrong counts, missing files);
 * the flags flip.  A crash, a sanitizer report, a leak, a status other than
 * 0, 1, 2 or output left by a failing run is a finding.  Run with
 * tests/fuzz/run.sh. */
#define LLVMFuzzerCustomMutator fz_program_mutator
#include "fuzz_pipeline.h"
#undef LLVMFuzzerCustomMutator

#include <errno.h>

#include "io/params.h"

enum { F_COMBINED = 1, F_OUT_COMBINED = 2, F_TEXT = 4, F_SMALL_CAP = 8, MAX_CHUNKS = 4096 };

typedef struct {
    uint8_t *name, *data;   /* malloc'd copies */
    size_t name_len, len;
} chunk;

typedef struct {
    uint8_t flags;
    uint8_t *prog;
    size_t prog_len, n;
    chunk c[MAX_CHUNKS];
} container;

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint8_t *dup_bytes(const uint8_t *p, size_t n)
{
    uint8_t *q = malloc(n ? n : 1);
    if (!q)
        abort();
    if (n)
        memcpy(q, p, n);
    return q;
}

/* Splits an input; false when it is too short to hold the header. */
static bool unpack(const uint8_t *d, size_t size, container *k)
{
    k->n = 0;
    if (size < 5)
        return false;
    k->flags = d[0];
    size_t p = get32(d + 1), o = 5;
    k->prog_len = p < size - o ? p : size - o;
    k->prog = dup_bytes(d + o, k->prog_len);
    o += k->prog_len;
    while (o < size && k->n < MAX_CHUNKS) {
        chunk *c = &k->c[k->n++];
        c->name_len = d[o] < size - o - 1 ? d[o] : size - o - 1;
        c->name = dup_bytes(d + o + 1, c->name_len);
        o += 1 + c->name_len;
        size_t len = size - o >= 4 ? get32(d + o) : 0;
        o += size - o >= 4 ? 4 : size - o;
        c->len = len < size - o ? len : size - o;
        c->data = dup_bytes(d + o, c->len);
        o += c->len;
    }
    return true;
}

static void container_free(container *k)
{
    free(k->prog);
    for (size_t i = 0; i < k->n; i++) {
        free(k->c[i].name);
        free(k->c[i].data);
    }
    k->n = 0;
}

/* The packed size, or 0 when a field does not fit its width. */
static size_t packed_size(const container *k)
{
    size_t n = 5 + k->prog_len;
    for (size_t i = 0; i < k->n; i++) {
        if (k->c[i].name_len > 255 || k->c[i].len > UINT32_MAX)
            return 0;
        n += 5 + k->c[i].name_len + k->c[i].len;
    }
    return n;
}

static size_t pack(const container *k, uint8_t *out)
{
    size_t o = 0;
    out[o++] = k->flags;
    put32(out + o, (uint32_t)k->prog_len);
    o += 4;
    memcpy(out + o, k->prog, k->prog_len);
    o += k->prog_len;
    for (size_t i = 0; i < k->n; i++) {
        out[o++] = (uint8_t)k->c[i].name_len;
        memcpy(out + o, k->c[i].name, k->c[i].name_len);
        o += k->c[i].name_len;
        put32(out + o, (uint32_t)k->c[i].len);
        o += 4;
        memcpy(out + o, k->c[i].data, k->c[i].len);
        o += k->c[i].len;
    }
    return o;
}

/* ---- the run ------------------------------------------------------------ */

static char fz_params[128];

static void rm_params(void)
{
    fz_rm_flat(fz_params);
}

static bool write_file(const char *path, const uint8_t *p, size_t n, const char *mode)
{
    FILE *f = fopen(path, mode);
    if (!f)
        return false;
    bool ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* The folder layout: one file per chunk whose name is a plain file name
 * (others are left out: the command then finds the file missing). */
static void write_folder(const container *k)
{
    if (mkdir(fz_params, 0700) != 0) {
        perror("fuzz: mkdir params");
        abort();
    }
    char path[512];
    for (size_t i = 0; i < k->n; i++) {
        const chunk *c = &k->c[i];
        if (!c->name_len || memchr(c->name, '/', c->name_len) || memchr(c->name, 0, c->name_len) ||
            (c->name_len == 1 && c->name[0] == '.') ||
            (c->name_len == 2 && c->name[0] == '.' && c->name[1] == '.'))
            continue;
        snprintf(path, sizeof path, "%s/%.*s", fz_params, (int)c->name_len, (const char *)c->name);
        /* a duplicated name appends: the file then holds two records */
        if (!write_file(path, c->data, c->len, "ab") && errno != ENAMETOOLONG) {
            perror("fuzz: writing a parameter file");
            abort();
        }
    }
}

static void write_combined(const container *k)
{
    FILE *f = fopen(fz_params, "wb");
    if (!f)
        abort();
    for (size_t i = 0; i < k->n; i++)
        if (fwrite(k->c[i].data, 1, k->c[i].len, f) != k->c[i].len)
            abort();
    if (fclose(f) != 0)
        abort();
}

static void fuzz_commands(const uint8_t *data, size_t size, uint32_t hash)
{
    (void)hash;
    static container k;
    if (!unpack(data, size, &k))
        return;
    if (!fz_write_input(k.prog, k.prog_len))
        abort();
    snprintf(fz_params, sizeof fz_params, "%s/params", fz_root);
    rm_params();
    if (k.flags & F_COMBINED)
        write_combined(&k);
    else
        write_folder(&k);
    static char params_flag[160];
    snprintf(params_flag, sizeof params_flag, "--params=%s", fz_params);
    uint64_t cap = pdio_max_input_size();
    if (k.flags & F_SMALL_CAP)
        pdio_set_max_input_size(k.prog_len);
    fz_cmd c = fz_cmd_new(cmd_inference, "inference");
    fz_arg(&c, params_flag);
    if (k.flags & F_OUT_COMBINED)
        fz_arg(&c, "--params-filename=params");
    if (k.flags & F_TEXT)
        fz_arg(&c, "--text");
    fz_run(&c, "inference");
    pdio_set_max_input_size(cap);
    rm_params();
    container_free(&k);
}

/* ---- the mutator -------------------------------------------------------- */

typedef Paddle__Framework__Proto__VarType__TensorDesc fm_tdesc;

/* Where a record's fields are, read as a LoD tensor or a SelectedRows
 * record; ok false when the bytes are neither. */
typedef struct {
    bool ok;
    size_t fields[24];      /* offsets of u32 (width 4) or u64 (width 8) fields */
    int width[24];
    size_t n_fields, desc_len_at, desc_at, desc_len, data_at;
} layout;

static void add_field(layout *l, size_t at, int width)
{
    if (l->n_fields < 24) {
        l->fields[l->n_fields] = at;
        l->width[l->n_fields++] = width;
    }
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static layout walk(const chunk *c, bool rows)
{
    layout l = {0};
    size_t o = 0, n = c->len;
    if (n < 12)
        return l;
    add_field(&l, 0, 4);
    add_field(&l, 4, 8);
    uint64_t count = get64(c->data + 4);
    o = 12;
    if (rows) {
        if (count > (n - o) / 8)
            return l;
        o += (size_t)count * 8;
        if (n - o < 8)
            return l;
        add_field(&l, o, 8);    /* height */
        o += 8;
    } else {
        if (count > 16)
            return l;
        for (uint64_t i = 0; i < count; i++) {
            if (n - o < 8)
                return l;
            add_field(&l, o, 8);
            uint64_t sz = get64(c->data + o);
            o += 8;
            if (sz > n - o)
                return l;
            o += (size_t)sz;
        }
    }
    if (n - o < 8)
        return l;
    add_field(&l, o, 4);
    add_field(&l, o + 4, 4);
    l.desc_len_at = o + 4;
    l.desc_len = get32(c->data + o + 4);
    l.desc_at = o + 8;
    if (l.desc_len > n - l.desc_at)
        return l;
    fm_tdesc *d = (fm_tdesc *)protobuf_c_message_unpack(
        &paddle__framework__proto__var_type__tensor_desc__descriptor, NULL, l.desc_len,
        c->data + l.desc_at);
    if (!d)
        return l;
    protobuf_c_message_free_unpacked(&d->base, NULL);
    l.data_at = l.desc_at + l.desc_len;
    l.ok = true;
    return l;
}

/* Replaces c->data[at, at + old) by the n bytes of p. */
static void splice(chunk *c, size_t at, size_t old, const uint8_t *p, size_t n)
{
    uint8_t *q = malloc(c->len - old + n + 1);
    if (!q)
        abort();
    memcpy(q, c->data, at);
    if (n)
        memcpy(q + at, p, n);
    memcpy(q + at + n, c->data + at + old, c->len - at - old);
    free(c->data);
    c->data = q;
    c->len = c->len - old + n;
}

static void set_field(chunk *c, size_t at, int width, uint64_t v)
{
    for (int i = 0; i < width && at + (size_t)i < c->len; i++)
        c->data[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static const uint64_t extremes64[] = {0, 1, 7, 9, 0x7fffffffULL, 0x80000000ULL, 0xffffffffULL,
                                      1ULL << 32, 1ULL << 61, 1ULL << 63, UINT64_MAX,
                                      UINT64_MAX - 7};
static const int64_t dims[] = {-1, -2, 0, 1, 3, 1LL << 31, 1LL << 40, INT64_MAX, INT64_MIN};
static const int32_t dtypes[] = {-1, 0, 1, 2, 3, 4, 5, 6, 7, 19, 20, 21, 22, 23, 100, INT32_MIN};

/* A new TensorDesc: data type or a dim changed, a dim added or dropped. */
static void mutate_desc(fm_rng *r, chunk *c, const layout *l)
{
    fm_tdesc *d = (fm_tdesc *)protobuf_c_message_unpack(
        &paddle__framework__proto__var_type__tensor_desc__descriptor, NULL, l->desc_len,
        c->data + l->desc_at);
    if (!d)
        return;
    fm_tdesc n = *d;
    int64_t dim_buf[40];
    size_t nd = d->n_dims < 32 ? d->n_dims : 32;
    if (nd)     /* a desc without dims has dims NULL */
        memcpy(dim_buf, d->dims, nd * sizeof *dim_buf);
    switch (fm_below(r, 4)) {
    case 0: n.data_type = dtypes[fm_below(r, sizeof dtypes / sizeof *dtypes)]; break;
    case 1:
        if (nd)
            dim_buf[fm_below(r, nd)] = dims[fm_below(r, sizeof dims / sizeof *dims)];
        break;
    case 2: dim_buf[nd++] = dims[fm_below(r, sizeof dims / sizeof *dims)]; break;
    default: nd = nd ? nd - 1 : 0; break;
    }
    n.dims = dim_buf;
    n.n_dims = nd;
    uint8_t buf[512];
    size_t len = protobuf_c_message_get_packed_size(&n.base);
    if (len <= sizeof buf) {
        protobuf_c_message_pack(&n.base, buf);
        splice(c, l->desc_at, l->desc_len, buf, len);
        /* mostly a consistent desc length; sometimes the old one */
        if (fm_below(r, 4))
            set_field(c, l->desc_len_at, 4, len);
    }
    protobuf_c_message_free_unpacked(&d->base, NULL);
}

static void mutate_record(fm_rng *r, chunk *c)
{
    layout l = walk(c, fm_below(r, 2));
    if (!l.ok)
        l = walk(c, true);
    if (!l.ok)
        l = walk(c, false);
    if (!l.ok) {
        /* not a record: an extreme value somewhere in its first 64 bytes */
        if (c->len >= 8) {
            size_t span = c->len - 8 < 64 ? c->len - 8 : 64;
            set_field(c, fm_below(r, span + 1), fm_below(r, 2) ? 4 : 8,
                      extremes64[fm_below(r, sizeof extremes64 / sizeof *extremes64)]);
        }
        return;
    }
    size_t data_len = c->len - l.data_at;
    switch (fm_below(r, 6)) {
    case 0:
    case 1: {   /* a header field */
        size_t f = fm_below(r, l.n_fields);
        set_field(c, l.fields[f], l.width[f],
                  extremes64[fm_below(r, sizeof extremes64 / sizeof *extremes64)]);
        break;
    }
    case 2:
    case 3: mutate_desc(r, c, &l); break;
    case 4:     /* truncated: cut anywhere, mostly inside the data */
        c->len = fm_below(r, 4) && data_len ? l.data_at + fm_below(r, data_len)
                                            : fm_below(r, c->len);
        break;
    default: {  /* grown: one element more, or a second record's worth */
        static const uint8_t zeros[64];
        size_t add = fm_below(r, 2) ? 1 + fm_below(r, 8) : (data_len < 64 ? data_len : 64);
        splice(c, c->len, 0, zeros, add);
        break;
    }
    }
}

static void mutate_chunks(fm_rng *r, container *k, size_t max_size)
{
    size_t i = fm_below(r, k->n), j = fm_below(r, k->n);
    chunk *c = k->n ? &k->c[i] : NULL;
    switch (fm_below(r, 8)) {
    case 0:     /* drop */
        if (c) {
            free(c->name);
            free(c->data);
            memmove(c, c + 1, (k->n - i - 1) * sizeof *c);
            k->n--;
        }
        break;
    case 1:     /* duplicate */
        if (c && k->n < MAX_CHUNKS) {
            k->c[k->n].name = dup_bytes(c->name, c->name_len);
            k->c[k->n].name_len = c->name_len;
            k->c[k->n].data = dup_bytes(c->data, c->len);
            k->c[k->n].len = c->len;
            k->n++;
        }
        break;
    case 2:     /* swap: the combined file's order */
        if (c) {
            chunk t = k->c[i];
            k->c[i] = k->c[j];
            k->c[j] = t;
        }
        break;
    case 3: {   /* rename: to another chunk's name, or a name no var has */
        static const char *const odd[] = {"", ".", "..", "a/b", "x", "__model__", "params"};
        if (!c)
            break;
        const uint8_t *name = k->c[j].name;
        size_t len = k->c[j].name_len;
        if (fm_below(r, 2)) {
            name = (const uint8_t *)odd[fm_below(r, sizeof odd / sizeof *odd)];
            len = strlen((const char *)name);
        }
        uint8_t *copy = dup_bytes(name, len);
        free(c->name);
        c->name = copy;
        c->name_len = len;
        break;
    }
    case 4: {   /* libFuzzer's bytes, within the record */
        if (!c)
            break;
        size_t cap = c->len + 64 < max_size ? c->len + 64 : c->len;
        uint8_t *q = malloc(cap + 1);
        if (!q)
            abort();
        memcpy(q, c->data, c->len);
        c->len = LLVMFuzzerMutate(q, c->len, cap);
        free(c->data);
        c->data = q;
        break;
    }
    default:
        if (c)
            mutate_record(r, c);
        break;
    }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    fm_rng r = {seed * 2654435761ULL + 7};
    static container k;
    if (fm_below(&r, 8) == 0 || !unpack(data, size, &k))
        return LLVMFuzzerMutate(data, size, max_size);
    size_t how = fm_below(&r, 8);
    if (how == 0) {
        k.flags ^= (uint8_t)(1u << fm_below(&r, 4));
    } else if (how <= 2) {
        /* the program, with room for what follows it */
        size_t rest = size - k.prog_len, room = max_size - rest;
        uint8_t *q = malloc(room + 1);
        if (!q)
            abort();
        memcpy(q, k.prog, k.prog_len);
        k.prog_len = fz_program_mutator(q, k.prog_len, room, seed);
        free(k.prog);
        k.prog = q;
    } else {
        size_t rounds = 1 + fm_below(&r, 3);
        for (size_t i = 0; i < rounds; i++)
            mutate_chunks(&r, &k, max_size);
    }
    size_t n = packed_size(&k), out = 0;
    if (n && n <= max_size)
        out = pack(&k, data);
    container_free(&k);
    return out ? out : LLVMFuzzerMutate(data, size, max_size);
}
