/* params.h - Paddle's parameter files (save_persistables / load_persistables,
 * save_inference_model's params_filename), read into and written from an
 * ir_tensors set.  The record layout is in src/io/README.md.
 *
 * Every function that fails has printed one "pdtrans: error: FILE: var
 * 'NAME': ..." line. */
#ifndef PDT_PARAMS_H
#define PDT_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "../ir/ir.h"
#include "../ir/tensors.h"
#include "pdio.h"

/* The vars Paddle's io.py saves for `p`: persistable, of a type other than
 * FEED_MINIBATCH, FETCH_LIST, READER and RAW, over every block (the first
 * declaration of a name wins), sorted by name byte order (Python's sorted).
 * Returns the count; *out is g_malloc'd (g_free it). */
size_t params_list_vars(const ir_program *p, ir_var ***out);

/* One record at data[*off..len) for var v (LoD tensor, or SelectedRows when
 * v is SELECTED_ROWS) into t; *off moves past it.  `file` names the file in
 * messages.  Returns PDT_OK or PDT_EBADINPUT. */
int params_decode_record(const char *file, const ir_var *v, const uint8_t *data,
                         size_t len, size_t *off, ir_tensor *t);
/* Appends t's record to out, as Paddle's SerializeToStream writes it. */
void params_encode_record(const ir_tensor *t, GByteArray *out);

/* Reads every var of params_list_vars(p): from DIR/<name> (one record per
 * file, nothing after it), or from one combined FILE (records in that
 * sorted order, the file ending right after the last one).  NULL on
 * failure. */
ir_tensors *params_read_dir(const ir_program *p, const char *dir);
ir_tensors *params_read_combined(const ir_program *p, const char *path);

/* Queues the files for every var of params_list_vars(p) on b: DIR/<name>
 * each, or one combined file.  Fails (message printed) when a var has no
 * value in t or its name is not a plain file name. */
int params_add_dir(pdio_batch *b, const ir_program *p, const ir_tensors *t,
                   const char *dir);
int params_add_combined(pdio_batch *b, const ir_program *p, const ir_tensors *t,
                        const char *path);

#endif
