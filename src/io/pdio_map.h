/* pdio_map.h - input files mapped instead of read (pdio_map.c). */
#ifndef PDT_PDIO_MAP_H
#define PDT_PDIO_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Maps the regular file open on FD (fstat'd into ST; its size more than
 * 0), read-only, and watches it: NAME is for messages.  FD stays the
 * caller's (a copy is kept).  NULL when it cannot be mapped (not a regular
 * file, too many inputs, mmap refused): the caller reads it instead. */
uint8_t *pdio_map_input(int fd, const struct stat *st, const char *name);
/* True when BYTES is the start of a mapping from pdio_map_input. */
bool pdio_is_mapped(const void *bytes);
/* The length of the mapping that starts at BYTES; 0 if none does. */
size_t pdio_mapped_len(const void *bytes);
/* Gives back the pages of P's mapped input that none of P's ops reads
 * (pdio_release.c); nothing if P's input is not a mapping. */
struct ir_program;
void pdio_release_unread(const struct ir_program *p);
/* For a writer of P: counts LEN more bytes written into *SINCE and, every
 * few MB, gives back P's input pages (pdio_drop_input_pages).  P NULL:
 * nothing. */
void pdio_drop_input_behind(const struct ir_program *p, size_t *since, size_t len);
/* Gives a mapping back (ir_program's input_free). */
void pdio_unmap_input(void *bytes);
/* The name of an input whose size or modification time is not what it
 * was when mapped, whether still mapped or given back; NULL if none. */
const char *pdio_inputs_changed(void);

#endif
