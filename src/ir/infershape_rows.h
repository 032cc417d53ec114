/* infershape_rows.h - the table of infershape_rows.c, for infershape.c. */
#ifndef PDT_IR_INFERSHAPE_ROWS_H
#define PDT_IR_INFERSHAPE_ROWS_H

#include <stddef.h>

#include "infershape.h"

const ir_infer_row *ir_infer_rows(size_t *n);

#endif
