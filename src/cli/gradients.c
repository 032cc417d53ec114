/* gradients.c - placeholder until the pass behind it lands. */
#include "cli.h"

#include "../diag.h"

int cmd_gradients(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    pdt_error("'gradients' is not built yet");
    return PDT_EBADINPUT;
}
