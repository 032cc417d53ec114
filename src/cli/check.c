/* check.c - `pdtrans check FILE...`. */
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../io/pdio_job.h"
#include "../passes/verify.h"
#include "cli.h"
#include "../passes/era/era.h"

static void help(void)
{
    printf("usage: pdtrans check FILE|DIR...\n\n"
           "Validates each program: each block's idx is its position; parent_idx\n"
           "links form a tree rooted at block 0; BLOCK and BLOCKS attrs name existing\n"
           "blocks nested in the op's block, none named twice; no var is declared\n"
           "twice in a block; a var's dims multiply within int64 (any negative dim\n"
           "is unknown; dims below -1 get one note per file); every op argument\n"
           "names a var visible from its block.  Prints one line per problem to\n"
           "stderr and exits 1 if there is any.  Commands that run passes check\n"
           "their input the same way first.\n\n"
           "A DIR is a transpile output folder: each manifest*.json in it is checked\n"
           "against the SHA-256 of every file it lists, and a set a killed run left\n"
           "half in place is reported.\n\n"
           "  -q, --quiet   print no warnings or notes, and nothing on success\n"
           "  -v, --verbose also print \"FILE: ok\" for each valid file\n"
           "  -h, --help    show this help\n");
}

int cmd_check(int argc, char **argv)
{
    static const struct option opts[] = {
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    bool verbose = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":qvh", opts, NULL)) != -1) {
        switch (c) {
        case 'q': pdt_quiet_warnings = true; break;
        case 'v': verbose = true; break;
        case 'h': help(); return PDT_OK;
        default: return cli_bad_option("check", c, argv);
        }
    }
    if (verbose && pdt_quiet_warnings) {
        pdt_usage_error("check", "-q/--quiet and -v/--verbose contradict each other; give one");
        return PDT_EUSAGE;
    }
    if (argc - optind < 1) {
        pdt_usage_error("check", "expected at least one FILE");
        return PDT_EUSAGE;
    }
    int rc = PDT_OK;
    for (int i = optind; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            long problems = pdio_job_check(argv[i], stderr);
            if (problems)
                rc = PDT_EBADINPUT;
            else if (verbose)
                printf("%s: ok\n", argv[i]);
            continue;
        }
        ir_program *p = pdio_read(argv[i]);
        if (!p) {
            rc = PDT_EBADINPUT;
            continue;
        }
        size_t errs = pdt_verify(p, argv[i], stderr);
        pdt_verify_notes(p, argv[i], pdt_quiet_warnings ? NULL : stderr);
        if (errs)
            rc = PDT_EBADINPUT;
        else if (verbose)
            printf("%s: ok\n", argv[i]);
        if (verbose) {
            /* What --paddle-version=auto concludes for this file, and why. */
            char why[256], ver[16];
            int era = pdt_era_detect(p, why, sizeof why);
            pdt_era_format(era, ver, sizeof ver);
            if (era == PDT_ERA_NATIVE)
                printf("%s: paddle version unknown, ops are written as pdtrans writes them "
                       "natively: %s\n", argv[i], why);
            else
                printf("%s: paddle version %s: %s\n", argv[i], ver, why);
            if (pdt_era_python2(p))
                printf("%s: written under Python 2 (op_callstack names a python2 path): the ops "
                       "backward.py builds from a dict take Python 2's dict order\n", argv[i]);
        }
        ir_program_free(p);
    }
    return rc;
}
