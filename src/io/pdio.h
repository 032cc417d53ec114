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
 * NULL on failure, including input larger than the cap below. */
ir_program *pdio_read(const char *path);
/* As pdio_read; also puts the SHA-256 of the bytes read, as 64 lower-case
 * hex digits and a NUL, into sha256 (manifest.json names its inputs so). */
ir_program *pdio_read_sha256(const char *path, char sha256[65]);
/* The SHA-256 of LEN bytes at DATA in that form (verify job checks the
 * manifests' sha256 maps with it). */
void pdio_sha256_hex(const uint8_t *data, size_t len, char hex[65]);
/* The most bytes one input file may hold (--max-input-size), so that
 * /dev/zero or an endless pipe fails with a message instead of exhausting
 * memory.  Default PDIO_DEFAULT_MAX_INPUT. */
#define PDIO_DEFAULT_MAX_INPUT ((uint64_t)2 << 30)
void pdio_set_max_input_size(uint64_t bytes);
uint64_t pdio_max_input_size(void);
/* The most bytes the files of one run may hold together
 * (--max-output-size, default PDIO_DEFAULT_MAX_OUTPUT): a command that can
 * estimate its output from a count the user gave (transpile's --trainers
 * and --pservers) refuses it before building anything. */
#define PDIO_DEFAULT_MAX_OUTPUT ((uint64_t)2 << 30)
void pdio_set_max_output_size(uint64_t bytes);
uint64_t pdio_max_output_size(void);
/* Parses a --max-input-size value: decimal bytes with an optional K, M or
 * G suffix (powers of 1024), at least 1.  False when malformed. */
bool pdio_parse_size(const char *s, uint64_t *out);
/* Reads an input file that is not a program (a parameter file) under the
 * same cap: a regular file is mapped, so that a record found wrong at its
 * header costs no read of the rest; a device or pipe is read up to one byte
 * past the cap.  `what` prefixes the reason in messages ("var 'w': ").
 * NULL (message printed) on failure; give it back with pdio_release_input. */
uint8_t *pdio_read_input(const char *path, const char *what, size_t *len);
void pdio_release_input(uint8_t *data);
/* Parses bytes already in memory; `name` is used in messages. */
ir_program *pdio_parse(const char *name, const uint8_t *data, size_t len);

/* Serializes in Paddle's canonical order (see ir.h).  Returns a malloc'd
 * buffer (caller frees) or NULL on failure. */
uint8_t *pdio_serialize(const ir_program *p, bool text, size_t *len);
/* The text form without the attrs named DROP (NULL: none), for reading
 * (dump --no-callstack drops op_callstack); p is not changed. */
uint8_t *pdio_serialize_text_without(const ir_program *p, const char *drop, size_t *len);

/* True if PATH names the text form (ends in ".pbtxt" or ".txt"). */
bool pdio_path_is_text(const char *path);

/* A set of output files written all-or-nothing.  Every target is checked
 * before anything is written: a regular file or a missing path is replaced
 * through a temporary beside it (fsync'd, renamed in the order added, the
 * folder fsync'd); a character device or FIFO is written straight through,
 * after the renames; "-" means stdout (binary refused on a terminal unless
 * `force`); a folder or other kind of file is refused.  On any failure the
 * renames already done are undone, so the previous files stay as they were,
 * and no temporary is left.  See src/io/README.md. */
typedef struct pdio_batch pdio_batch;
pdio_batch *pdio_batch_new(bool force);
/* Asks commit to create DIR and its parents first (mkdir -p); folders it
 * made are removed again if the commit fails. */
void pdio_batch_create_folder(pdio_batch *b, const char *dir);
/* Makes b a streaming batch: each file added is checked and written to its
 * temporary at once (the folder made, PDTRANS_FAIL_AT read, stale
 * temporaries removed first), so no output's bytes are held after its
 * add; the commit still renames all together.  A
 * device, FIFO or stdout target keeps its bytes until the commit.  A
 * failing add prints its message, takes back what the batch did and
 * returns non-zero; every later add and the commit fail too.  Freeing a
 * batch that was not committed removes its temporaries and folders. */
void pdio_batch_stream(pdio_batch *b);
/* A binary program is encoded when its file is written, straight into it
 * through a 64 KiB buffer (pbconv_encode_to), so its bytes are never whole
 * in memory; a text one is printed whole then and freed.  A plain batch
 * writes at the commit, so p must stay alive and unchanged until then; a
 * streaming batch writes at once (a device, FIFO or stdout target: encoded
 * now, its bytes kept until the commit), and p may go after the add. */
int pdio_batch_add_program(pdio_batch *b, const char *path, const ir_program *p,
                           bool text);
/* Takes a copy of data (freed once written, when streaming). */
void pdio_batch_add_bytes(pdio_batch *b, const char *path, const void *data,
                          size_t len, bool binary);
/* PATH (a regular file or a link; the link itself) is removed with the
 * set: renamed to a backup name at step 5, unlinked at step 8, put back
 * if the set fails (transpile --clean). */
void pdio_batch_remove(pdio_batch *b, const char *path);
/* The i-th file added: its path as given, the SHA-256 (hex) of the bytes
 * written to it (NULL until written, and for removals), whether it is a
 * removal.  False past the end. */
bool pdio_batch_file(const pdio_batch *b, size_t i, const char **path,
                     const char **sha256, bool *removed);
/* Completes or takes back a set that a killed run left half in place in
 * DIR (its journal names every step): when every rename was done the
 * backups go; otherwise the replaced and removed files come back from
 * their backups and the new ones go, with a warning; then temporaries
 * and backups of runs that are gone are removed.  Every batch does this
 * in each folder before writing into it. */
void pdio_recover_folder(const char *dir);
/* Whether DIR holds the journal of a killed run not yet recovered. */
bool pdio_folder_interrupted(const char *dir);
/* PDT_OK, PDT_EBADINPUT, or PDT_EUSAGE (binary to a terminal, a malformed
 * PDTRANS_FAIL_AT); every failure has printed its message. */
int pdio_batch_commit(pdio_batch *b);
void pdio_batch_free(pdio_batch *b);

/* Writes bytes to stdout unbuffered, after flushing stdio; a failure is
 * reported with its reason.  PDT_OK or PDT_EBADINPUT. */
int pdio_write_stdout(const void *data, size_t len);

/* Convenience: one program to one path (atomic as above). */
int pdio_write(const ir_program *p, const char *path, bool text, bool force);
/* Gives back every resident page of P's input when it is a mapped file
 * (pdio_release.c); a page read again comes back from the file.  For a run
 * that sweeps the kept bytes (pdt_run_settings.drop_input_pages). */
void pdio_drop_input_pages(const ir_program *p);

#endif
