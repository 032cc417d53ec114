/* fuzz_pipeline.h - the harness the pipeline targets share: each input is
 * a program, written to a scratch file and run through a real command
 * (cmd_backward, cmd_transpile, ...) exactly as the command line would,
 * output folder included.  The finding is whatever ASan, UBSan or the leak
 * checker report, a status other than 0, 1 or 2, or an output folder left
 * behind by a failing command (outputs are all-or-nothing).
 *
 * A target defines fuzz_argv(): the command and its flags for one input.
 * The flags that need a var name take one from the program itself
 * (fz_loss: the output of the last mean / reduce op of block 0, else of its
 * last op), so mutated programs keep reaching the passes.  Flags that pick
 * a variant (optimizer, collective mode, sync mode) come from a hash of the
 * input, so one input always runs the same way. */
#ifndef PDT_FUZZ_PIPELINE_H
#define PDT_FUZZ_PIPELINE_H

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "diag.h"
#include "io/pdio.h"
#include "ir/ir.h"
#include "fuzz_mutator.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FZ_MAX_ARGS = 16 };

typedef struct {
    int argc;
    char *argv[FZ_MAX_ARGS + 1];
    int (*run)(int argc, char **argv);
} fz_cmd;

static char fz_root[64], fz_in[96], fz_out[96];
static char fz_loss_buf[512], fz_loss_flag[600], fz_targets_flag[600];

static void fz_rm_out(void);

static void fz_cleanup(void)
{
    fz_rm_out();
    unlink(fz_in);
    rmdir(fz_root);
}

static void fz_init(void)
{
    pdt_quiet = !getenv("FUZZ_VERBOSE");
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(fz_root, sizeof fz_root, "%s/pdtrans-fuzz-XXXXXX", base);
    if (!mkdtemp(fz_root)) {
        perror("fuzz: mkdtemp");
        abort();
    }
    snprintf(fz_in, sizeof fz_in, "%s/in.pb", fz_root);
    snprintf(fz_out, sizeof fz_out, "%s/out", fz_root);
    atexit(fz_cleanup);
    /* backward and gradients print pairs; libFuzzer reports on stderr. */
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        close(fd);
    }
}

static uint32_t fz_hash(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 16777619u;
    return h;
}

static bool fz_is_loss_op(const char *type)
{
    static const char *const kinds[] = {"mean", "reduce_mean", "reduce_sum", "sum",
                                        "cross_entropy", "softmax_with_cross_entropy"};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (strcmp(type, kinds[i]) == 0)
            return true;
    return false;
}

/* The loss var fz_argv flags name, or "loss" when the input has none. */
__attribute__((unused)) static const char *fz_loss(const uint8_t *data, size_t size)
{
    snprintf(fz_loss_buf, sizeof fz_loss_buf, "loss");
    ir_program *p = pdio_parse("fuzz", data, size);
    if (!p)
        return fz_loss_buf;
    const ir_block *b = p->n_blocks ? p->blocks[0] : NULL;
    const ir_op *pick = NULL;
    for (size_t i = b ? b->n_ops : 0; i-- > 0 && !pick;)
        if (fz_is_loss_op(b->ops[i]->type) && b->ops[i]->n_outputs &&
            ir_op_outs(b->ops[i])[0].n_args)
            pick = b->ops[i];
    for (size_t i = b ? b->n_ops : 0; i-- > 0 && !pick;)
        if (b->ops[i]->n_outputs && ir_op_outs(b->ops[i])[0].n_args)
            pick = b->ops[i];
    if (pick)
        snprintf(fz_loss_buf, sizeof fz_loss_buf, "%s", ir_op_outs(pick)[0].args[0]);
    ir_program_free(p);
    return fz_loss_buf;
}

/* True if block 0 already holds optimizer ops (op_role & Optimize). */
__attribute__((unused)) static bool fz_has_optimizer(const uint8_t *data, size_t size)
{
    ir_program *p = pdio_parse("fuzz", data, size);
    bool found = false;
    const ir_block *b = p && p->n_blocks ? p->blocks[0] : NULL;
    for (size_t i = 0; b && i < b->n_ops && !found; i++) {
        const ir_attr *a = ir_op_attr(b->ops[i], "op_role");
        found = a && a->has_i && (a->i & IR_ROLE_OPTIMIZE);
    }
    ir_program_free(p);
    return found;
}

static void fz_arg(fz_cmd *c, const char *a)
{
    if (c->argc < FZ_MAX_ARGS) {
        c->argv[c->argc++] = (char *)a;
        c->argv[c->argc] = NULL;
    }
}

/* transpile --loss/--optimizer when the program has no optimizer yet. */
__attribute__((unused)) static void fz_maybe_minimize(fz_cmd *c, const uint8_t *data, size_t size)
{
    if (fz_has_optimizer(data, size))
        return;
    snprintf(fz_loss_flag, sizeof fz_loss_flag, "--loss=%s", fz_loss(data, size));
    fz_arg(c, fz_loss_flag);
    fz_arg(c, "--optimizer=sgd:lr=0.1");
}

__attribute__((unused)) static const char *fz_loss_arg(const uint8_t *data, size_t size, const char *flag)
{
    char *buf = strcmp(flag, "--targets") == 0 ? fz_targets_flag : fz_loss_flag;
    snprintf(buf, 600, "%s=%s", flag, fz_loss(data, size));
    return buf;
}

/* Removes PATH: a file, or a folder and the files in it (never deeper:
 * the outputs and parameter folders the targets write are flat). */
static void fz_rm_flat(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        unlink(dir);
        return;
    }
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static void fz_rm_out(void)
{
    fz_rm_flat(fz_out);
}

static bool fz_write_input(const uint8_t *data, size_t size)
{
    FILE *f = fopen(fz_in, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

/* Runs one command on the input; aborts on an outcome no input may cause. */
static void fz_run(fz_cmd *c, const char *what)
{
    struct stat st;
    fz_arg(c, fz_in);
    if (c->run != cmd_check) {
        fz_arg(c, "-o");
        fz_arg(c, fz_out);
    }
    int rc = c->run(c->argc, c->argv);
    if (rc != PDT_OK && rc != PDT_EBADINPUT && rc != PDT_EUSAGE) {
        fprintf(stderr, "fuzz: %s: exit status %d\n", what, rc);
        abort();
    }
    if (rc != PDT_OK && stat(fz_out, &st) == 0 &&
        (!S_ISDIR(st.st_mode) || rmdir(fz_out) != 0)) {
        fprintf(stderr, "fuzz: %s: failed with status %d but left output in %s\n", what,
                rc, fz_out);
        abort();
    }
    fz_rm_out();
}

static fz_cmd fz_cmd_new(int (*run)(int, char **), const char *name)
{
    fz_cmd c;
    memset(&c, 0, sizeof c);
    c.run = run;
    fz_arg(&c, name);
    return c;
}

/* Each target defines this: runs its command(s) on the input file. */
static void fuzz_commands(const uint8_t *data, size_t size, uint32_t hash);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fz_write_input(data, size)) {
        perror("fuzz: writing the input");
        abort();
    }
    fuzz_commands(data, size, fz_hash(data, size));
    unlink(fz_in);
    /* Names are interned process-wide: start each input from scratch. */
    ir_intern_shutdown();
    return 0;
}

#endif
