/* convert.c - `pdtrans convert IN OUT`. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../passes/verify.h"
#include "cli.h"

static void help(void)
{
    printf("usage: pdtrans convert [--text | --binary] [-f] IN OUT\n\n"
           "Reads IN (binary or text form, told apart by content; '-' is stdin)\n"
           "and writes OUT ('-' is stdout).  OUT's form follows its extension:\n"
           "'.pbtxt' (or '.txt') is text, anything else binary.\n\n"
           "  --text        write text form whatever the extension\n"
           "  --binary      write binary form whatever the extension\n"
           "  -f, --force   write binary output even to a terminal\n"
           "  -q, --quiet   print no warnings\n"
           "  -h, --help    show this help\n");
}

int cmd_convert(int argc, char **argv)
{
    static const struct option opts[] = {
        {"text", no_argument, NULL, 't'},
        {"binary", no_argument, NULL, 'b'},
        {"force", no_argument, NULL, 'f'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int form = -1;
    bool force = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":fqh", opts, NULL)) != -1) {
        switch (c) {
        case 't':
        case 'b':
            if (form >= 0 && form != (c == 't')) {
                pdt_usage_error("convert", "--text and --binary contradict each other; "
                                "give one");
                return PDT_EUSAGE;
            }
            form = c == 't';
            break;
        case 'q': pdt_quiet_warnings = true; break;
        case 'f': force = true; break;
        case 'h': help(); return PDT_OK;
        default: return cli_bad_option("convert", c, argv);
        }
    }
    if (argc - optind != 2) {
        pdt_usage_error("convert", "expected IN and OUT");
        return PDT_EUSAGE;
    }
    const char *in = argv[optind], *out = argv[optind + 1];
    if (cli_check_out_path("convert", "OUT", out, false))
        return PDT_EUSAGE;
    bool text = form >= 0 ? form == 1 : pdio_path_is_text(out);
    ir_program *p = pdio_read(in);
    if (!p)
        return PDT_EBADINPUT;
    pdt_verify_note_dims(p, in, stderr);
    int rc = pdio_write(p, out, text, force);
    ir_program_free(p);
    return rc;
}
