/* pdio.h - reading and writing programs (binary protobuf or text form).
 *
 * The only module that sees protobuf-c structs.  Every function that fails
 * has already printed one "pdtrans: error: ..." line naming the file. */
#ifndef PDT_PDIO_H
#define PDT_PDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../ir/ir.h"

/* Reads PATH ("-" = stdin), binary or text (told apart by content).
 * NULL on failure. */
ir_program *pdio_read(const char *path);
/* As pdio_read; also puts the SHA-256 of the bytes read, as 64 lower-case
 * hex digits and a NUL, into sha256 (manifest.json names its inputs so). */
ir_program *pdio_read_sha256(const char *path, char sha256[65]);
/* Parses bytes already in memory; `name` is used in messages. */
ir_program *pdio_parse(const char *name, const uint8_t *data, size_t len);

/* Serializes in Paddle's canonical order (see ir.h).  Returns a malloc'd
 * buffer (caller frees) or NULL on failure. */
uint8_t *pdio_serialize(const ir_program *p, bool text, size_t *len);

/* True if PATH names the text form (ends in ".pbtxt" or ".txt"). */
bool pdio_path_is_text(const char *path);

/* A set of output files written all-or-nothing: every file is built in
 * memory first, written to a temporary file in its folder, then renamed
 * into place in the order added.  On any failure the temporaries are
 * removed and nothing is renamed.  "-" means stdout (written directly,
 * refused for binary data on a terminal unless `force`). */
typedef struct pdio_batch pdio_batch;
pdio_batch *pdio_batch_new(bool force);
int pdio_batch_add_program(pdio_batch *b, const char *path, const ir_program *p,
                           bool text);
/* Takes a copy of data. */
void pdio_batch_add_bytes(pdio_batch *b, const char *path, const void *data,
                          size_t len, bool binary);
int pdio_batch_commit(pdio_batch *b);  /* 0 ok, 1 failure (message printed) */
void pdio_batch_free(pdio_batch *b);

/* Convenience: one program to one path (atomic as above). */
int pdio_write(const ir_program *p, const char *path, bool text, bool force);

#endif
