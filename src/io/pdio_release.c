/* pdio_release.c - giving back the pages of a mapped input that the
 * program read from it no longer reads (issue 33).
 *
 * An op read from a file and left alone keeps its bytes (its `wire`, in
 * the mapping) and is written as them; a dirty op may keep them as the
 * source of its attrs.  Nothing else points into the mapping (vars,
 * blocks and unknown fields are copied; pbdec.c already gives back the
 * VarDescs' pages once decoded).  Ops a pass removed keep their pages
 * resident to the end: the optimizer ops delete_optimizer takes out of
 * the trainer are 1.4 MB of the bench MLP's 7.9 MB, all resident while
 * the trainer is written, the run's highest point.  So before a program
 * is encoded, every page of its input that no op of it reads goes back.
 *
 * Only a mapping (pdio_map.c: a private, read-only map of the file): a
 * page given back reads as the file's bytes again when touched, so a page
 * released that something did read (a program sharing the bytes, which
 * none does) costs a page fault, never a wrong byte.  A buffer read from
 * a pipe would read as zeros: such an input is left alone. */
#include "pdio_map.h"

#include <stdlib.h>
#include <unistd.h>

#include "../ir/ir_codec.h"
#include "../ir/util.h"
#include "pdio.h"

/* Marks in `used` (a bit per page of the mapping at base) the pages of
 * every op's kept bytes, in every block. */
static void mark_ops(const ir_program *p, const uint8_t *base, size_t len, size_t page,
                     uint8_t *used)
{
    for (size_t bi = 0; bi < p->n_blocks; bi++) {
        const ir_block *b = p->blocks[bi];
        for (size_t k = 0; k < b->n_ops; k++) {
            ir_bytes w = ir_op_wire(b->ops[k]);
            if (!w.len || w.data < base || w.data >= base + len)
                continue;
            size_t lo = (size_t)(w.data - base) / page;
            size_t hi = ((size_t)(w.data - base) + w.len - 1) / page;
            for (size_t i = lo; i <= hi; i++)
                used[i / 8] |= (uint8_t)(1u << (i % 8));
        }
    }
}

void pdio_release_unread(const ir_program *p)
{
    const uint8_t *base = p ? p->input_bytes : NULL;
    size_t len = base && p->input_free == pdio_unmap_input ? pdio_mapped_len(base) : 0;
    long pg = sysconf(_SC_PAGESIZE);
    if (!len || pg <= 0)
        return;
    size_t page = (size_t)pg, n_pages = (len + page - 1) / page;
    uint8_t *used = xcalloc(n_pages / 8 + 1, 1);
    mark_ops(p, base, len, page, used);
    /* runs of unused pages, each given back in one call */
    for (size_t i = 0; i < n_pages;) {
        if (used[i / 8] & (1u << (i % 8))) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n_pages && !(used[j / 8] & (1u << (j % 8))))
            j++;
        /* the last page may be partial: the mapping's end, not a page's */
        const uint8_t *hi = j == n_pages ? base + n_pages * page : base + j * page;
        pdt_pages_release((void *)(uintptr_t)(base + i * page), (void *)(uintptr_t)hi);
        i = j;
    }
    free(used);
}

/* Every resident page of P's mapped input goes back (issue 33, backward at
 * 1M ops): a run that reads the kept bytes in one sweep (the writer, the
 * backward pass's walks over the ops) calls this every few MB, so that the
 * file's pages it has passed do not stay in its RSS beside the program it
 * builds (24 MB of the 129 MB peak of backward at 100k ops).  A page read
 * again faults the file's bytes back in, from the page cache. */
void pdio_drop_input_pages(const ir_program *p)
{
    const uint8_t *base = p ? p->input_bytes : NULL;
    size_t len = base && p->input_free == pdio_unmap_input ? pdio_mapped_len(base) : 0;
    long pg = sysconf(_SC_PAGESIZE);
    if (!len || pg <= 0)
        return;
    size_t page = (size_t)pg;
    pdt_pages_release((void *)(uintptr_t)base,
                      (void *)(uintptr_t)(base + (len + page - 1) / page * page));
}

/* The writer's (pdio_write.c): the kept ops' bytes are read once as they
 * are written, a grad op's borrowed attrs once more (backward); every 4 MB
 * written the input's pages go back, so that about that much of the file
 * is resident beside the program at most (24 MB of backward's 129 MB peak
 * at 100k ops, 245 MB at 1M).  Faults: each page read again after a drop,
 * about twice the input's pages for backward, once for convert. */
void pdio_drop_input_behind(const ir_program *p, size_t *since, size_t len)
{
    enum { DROP_EVERY = 4 << 20 };
    if (!p || (*since += len) < DROP_EVERY)
        return;
    pdio_drop_input_pages(p);
    *since = 0;
}
