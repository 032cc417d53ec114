/* main.c - picks the command and hands over; options belong to commands. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "diag.h"
#include "progress.h"
#include "suggest.h"
#include "ir/ir.h"

static void usage(void)
{
    printf("usage: pdtrans [COMMAND] [OPTIONS] [FILE...]\n\n"
           "Rewrites PaddlePaddle ProgramDesc files for distributed training.\n"
           "transpile is the default command: 'pdtrans [OPTIONS] MAIN' is\n"
           "'pdtrans transpile [OPTIONS] MAIN'.\n\ncommands:\n");
    for (unsigned i = 0; i < pdt_n_commands; i++)
        printf("  %-10s %s\n", pdt_commands[i].name, pdt_commands[i].summary);
    printf("\n'pdtrans COMMAND --help' describes a command's options.\n"
           "  -h, --help      show this help\n"
           "  -V, --version   show the version\n"
           "      --max-input-size=BYTES\n"
           "                  refuse an input file larger than BYTES (K, M or G\n"
           "                  suffix; default 2G); given to any command\n"
           "      --max-memory=BYTES\n"
           "                  verify's executor holds at most BYTES of tensors\n"
           "                  (default half the machine's memory)\n"
           "      --max-work=OPS\n"
           "                  verify's executor does at most OPS element operations\n"
           "                  (K, M or G suffix; default 64G)\n"
           "      --max-output-size=BYTES\n"
           "                  refuse counts whose output would pass BYTES\n"
           "                  (default 2G)\n"
           "exit status: 0 ok, 1 bad input or failure, 2 usage error,\n"
           "3 internal error (a bug in pdtrans)\n");
}

/* A first word that is no command, no option and no existing file, and is
 * spelt like a command (lower case letters, digits, '-' and '_': no '.' or
 * '/' as file names have), is a mistyped command, not transpile's MAIN. */
static bool looks_like_command(const char *a)
{
    struct stat st;
    if (!*a || *a < 'a' || *a > 'z' || stat(a, &st) == 0)
        return false;
    return strspn(a, "abcdefghijklmnopqrstuvwxyz0123456789-_") == strlen(a);
}

static void unknown_command(const char *word)
{
    pdt_near near;
    pdt_near_init(&near, word);
    for (unsigned i = 0; i < pdt_n_commands; i++)
        pdt_near_offer(&near, pdt_commands[i].name);
    char *hint = pdt_near_hint(&near, "");
    pdt_usage_error(NULL, "unknown command '%s' (and no file of that name)%s", word, hint);
    g_free(hint);
}

static int dispatch(int argc, char **argv)
{
    if (argc >= 2) {
        const char *a = argv[1];
        if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "help")) {
            usage();
            return PDT_OK;
        }
        if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
            cli_print_version();
            return PDT_OK;
        }
        for (unsigned i = 0; i < pdt_n_commands; i++)
            if (!strcmp(a, pdt_commands[i].name))
                return pdt_commands[i].run(argc - 1, argv + 1);
        if (looks_like_command(a)) {
            unknown_command(a);
            return PDT_EUSAGE;
        }
    }
    /* Default command: transpile sees the whole command line, with its
     * own name standing in for argv[0] (on the stack: it lives until
     * cmd_transpile returns, and no file-scope state is needed). */
    char name[] = "transpile";
    argv[0] = name;
    return cmd_transpile(argc, argv);
}

int main(int argc, char **argv)
{
    int rc = cli_take_input_options(&argc, argv);
    if (rc == PDT_OK)
        rc = dispatch(argc, argv);
    pdt_progress_end();
    ir_intern_shutdown();
    /* A command that printed more than stdio buffers has met a write
     * error already and may have returned 1 without a word: report it. */
    bool flushed = fflush(stdout) == 0;
    if (!flushed || ferror(stdout)) {
        pdt_error("cannot write to standard output%s%s", flushed ? "" : ": ",
                  flushed ? "" : strerror(errno));
        if (rc == PDT_OK)
            rc = PDT_EBADINPUT;
    }
    return rc;
}
