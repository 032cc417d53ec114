/* fuzz_fromenv.c - libFuzzer target: `pdtrans transpile --from-env` with
 * hostile launcher variables.  An input is lines NAME=VALUE; each names one
 * of the variables --from-env reads (src/cli/transpile_env.c) and is set
 * for the run, every other one unset.  The program is testdata's
 * basic_main.pbtxt (run.sh runs from the repository root).  The custom
 * mutator keeps the structure: it picks a line and gives it a hostile
 * value (spaces, signs, huge numbers, empty, endpoint lists gone wrong) or
 * lets libFuzzer mutate the value's bytes, or adds a variable.  A crash,
 * a sanitizer report, a status other than 0, 1, 2 or output left by a
 * failing run is a finding. */
/* the program mutator of fuzz_mutator.h under another name: this target
 * mutates variables, not programs */
#define LLVMFuzzerCustomMutator fz_program_mutator
#include "fuzz_pipeline.h"
#undef LLVMFuzzerCustomMutator

static const char *const names[] = {
    "PADDLE_TRAINERS_NUM", "PADDLE_TRAINER_ID", "PADDLE_PSERVERS_IP_PORT_LIST",
    "PADDLE_PSERVER_ENDPOINTS", "PADDLE_PSERVER_IPS", "PADDLE_PSERVER_PORT", "PADDLE_PORT",
    "PADDLE_TRAINING_ROLE", "TRAINING_ROLE", "POD_IP", "PADDLE_CURRENT_IP",
    "PADDLE_CURRENT_ENDPOINT", "PADDLE_TRAINER_ENDPOINTS", "PADDLE_TRAINERS",
    "PADDLE_FUSE_ALLREDUCE", "PADDLE_LOSS_SCALE", NULL};

static const char *const hostile[] = {
    "", " 2", "2 ", "-1", "0", "2147483648", "99999999999999999999", "0x10", "1e3", "+2",
    "TRAINER", "PSERVER", "trainer", "HETER_TRAINER", "127.0.0.1:6174", "127.0.0.1:0",
    "127.0.0.1:65536", "127.0.0.1:6174,127.0.0.1:6174", "127.0.0.1:6174,,", ",", ":",
    "[::1]:6174", "host:-1", "127.0.0.1", "a b:1", "\xff\xfe", "1073741824"};

/* Sets the variables of the input (lines NAME=VALUE), unsets the rest. */
static void set_env(const uint8_t *data, size_t size)
{
    for (size_t i = 0; names[i]; i++)
        unsetenv(names[i]);
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        for (size_t i = 0; names[i]; i++)
            if (!strcmp(line, names[i]))
                setenv(names[i], eq + 1, 1);
    }
    free(text);
}

static void fuzz_commands(const uint8_t *data, size_t size, uint32_t hash)
{
    static uint8_t *program;
    static size_t program_len;
    if (!program) {
        FILE *f = fopen("testdata/basic_main.pbtxt", "rb");
        if (!f) {
            perror("fuzz: testdata/basic_main.pbtxt (run from the repository root)");
            abort();
        }
        program = malloc(1 << 20);
        program_len = fread(program, 1, 1 << 20, f);
        fclose(f);
    }
    /* the input file holds the program, the input bytes the variables */
    if (!fz_write_input(program, program_len))
        abort();
    set_env(data, size);
    /* a count just under the default 2 GiB is a legitimate job that takes
     * minutes under ASan: not a finding (crashes/README F) */
    pdio_set_max_output_size((uint64_t)64 << 20);
    fz_cmd c = fz_cmd_new(cmd_transpile, "transpile");
    fz_arg(&c, "--from-env");
    fz_arg(&c, "-q");
    if (hash & 1)
        fz_arg(&c, "--role=pserver");
    fz_run(&c, "transpile --from-env");
    for (size_t i = 0; names[i]; i++)
        unsetenv(names[i]);
}

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    srand(seed);
    size_t n_names = 0, n_hostile = sizeof hostile / sizeof *hostile;
    while (names[n_names])
        n_names++;
    int how = rand() % 4;
    if (how == 0)
        return LLVMFuzzerMutate(data, size, max_size);
    /* rebuild: keep every line but one (or none), then add NAME=VALUE */
    char *out = malloc(max_size + 1);
    size_t o = 0, lines = 0;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    size_t drop = how == 1 && lines ? (size_t)rand() % (lines + 1) : (size_t)-1, line = 0;
    for (size_t i = 0; i < size && o < max_size; i++) {
        if (line != drop)
            out[o++] = (char)data[i];
        if (data[i] == '\n')
            line++;
    }
    char add[256];
    int len;
    if (how == 3) {
        char value[64];
        snprintf(value, sizeof value, "%s", hostile[rand() % n_hostile]);
        size_t vl = LLVMFuzzerMutate((uint8_t *)value, strlen(value), sizeof value - 1);
        value[vl] = '\0';
        len = snprintf(add, sizeof add, "%s%s=%s\n", o && out[o - 1] != '\n' ? "\n" : "",
                       names[rand() % n_names], value);
    } else {
        len = snprintf(add, sizeof add, "%s%s=%s\n", o && out[o - 1] != '\n' ? "\n" : "",
                       names[rand() % n_names], hostile[rand() % n_hostile]);
    }
    if (len > 0 && o + (size_t)len <= max_size) {
        memcpy(out + o, add, (size_t)len);
        o += (size_t)len;
    }
    memcpy(data, out, o);
    free(out);
    return o;
}
