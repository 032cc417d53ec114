/* op_shape.c - exact-size arrays for the ops passes create (issue 14
 * point 2).
 *
 * A pass builds an op one slot and attr at a time, and adds the framework
 * attrs (op_role_var, op_device, ...) later still, after other
 * allocations: the arrays then outgrow their room away from the arena's
 * top, and every growth leaves the old array behind.  Ops of one type end
 * up with the same slots and attrs (every send op a pass makes looks
 * alike), so the IR remembers, per op type, the most input slots, output
 * slots and attrs an op of that type has reached in this process, and
 * ir_op_new and ir_op_clone give a new op arrays of that size at once.
 * The first op of a type still grows; the ones after it do not.  No pass
 * says anything: the table learns from the IR's own setters.  Capacities
 * never reach the output. */
#include "ir.h"

#include <stdint.h>

#include "env.h"
#include "ir_internal.h"
#include "pmap.h"
#include "util.h"

/* In the env (env.h), as it holds interned pointers: type -> packed shape:
 * inputs | outputs << 16 | attrs << 32 | 1 << 48 (so that a known type
 * never maps to NULL). */
typedef struct {
    pmap shapes;
    size_t array_copies;
} shapes_state;

static void shapes_free(void *p)
{
    shapes_state *st = p;
    pmap_free(&st->shapes);
    free(st);
}

static shapes_state *state(void)
{
    shapes_state *st = pdt_env_get(PDT_ENV_OP_SHAPES);
    return st ? st : pdt_env_put(PDT_ENV_OP_SHAPES, xcalloc(1, sizeof *st), shapes_free);
}

enum { FIELD_MAX = 0xffff };

static uint64_t pack(ir_op_shape s)
{
    return (uint64_t)s.n_inputs | (uint64_t)s.n_outputs << 16 | (uint64_t)s.n_attrs << 32 |
           UINT64_C(1) << 48;
}

static size_t clamp(size_t n)
{
    return n > FIELD_MAX ? FIELD_MAX : n;
}

ir_op_shape ir_op_shape_of(const char *type)
{
    uint64_t v = (uint64_t)(uintptr_t)pmap_get(&state()->shapes, type);
    ir_op_shape s = {v & FIELD_MAX, v >> 16 & FIELD_MAX, v >> 32 & FIELD_MAX};
    return s;
}

static void note(const char *type, size_t n_inputs, size_t n_outputs, size_t n_attrs)
{
    ir_op_shape s = ir_op_shape_of(type);
    if (n_inputs <= s.n_inputs && n_outputs <= s.n_outputs && n_attrs <= s.n_attrs)
        return;
    s.n_inputs = clamp(n_inputs > s.n_inputs ? n_inputs : s.n_inputs);
    s.n_outputs = clamp(n_outputs > s.n_outputs ? n_outputs : s.n_outputs);
    s.n_attrs = clamp(n_attrs > s.n_attrs ? n_attrs : s.n_attrs);
    pmap_put(&state()->shapes, type, (void *)(uintptr_t)pack(s));
}

void ir_op_shape_note(const ir_op *op)
{
    note(op->type, op->n_inputs, op->n_outputs, op->n_attrs);
}

void ir_op_shape_note_attr_room(const ir_op *op)
{
    note(op->type, 0, 0, op->cap_attrs);
}

void ir_op_array_moved(void)
{
    state()->array_copies++;
}

size_t ir_op_array_copies(void)
{
    return state()->array_copies;
}
