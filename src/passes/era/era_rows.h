/* era_rows.h - era.def's rows as era.c compiles them, for the era step's
 * files only (era.c applies them, era_order.c reads the runtime-attr rows):
 * one table, indexed by op type. */
#ifndef PDT_ERA_ROWS_H
#define PDT_ERA_ROWS_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    ERA_DROP_ATTR, ERA_ADD_BOOL, ERA_ADD_INT, ERA_ADD_FLOAT, ERA_ADD_STRING,
    ERA_ADD_EMPTY_STRINGS, ERA_BOOL_TO_INT, ERA_SET_BOOL, ERA_DROP_INPUT, ERA_ADD_INPUT,
    ERA_SCOPE_PER_PARAM, ERA_STR_VALUE, ERA_FLOAT_TO_FLOATS,
    ERA_DIST_TO_SYNC_MODE, ERA_ADD_ASYNC_INT, ERA_UNREGISTERED, ERA_ADD_EMPTY_INTS,
    ERA_ADD_EMPTY_LONGS, ERA_ADD_STRINGS, ERA_ADD_GEO_INT,
    /* runtime (extra) attrs with their default, by type (era_order.c) */
    ERA_RUNTIME_BOOL, ERA_RUNTIME_INT, ERA_RUNTIME_FLOAT, ERA_RUNTIME_STRING,
    ERA_RUNTIME_INTS, ERA_RUNTIME_LONGS, ERA_RUNTIME_FLOATS, ERA_RUNTIME_STRINGS
} era_kind;

typedef struct {
    era_kind kind;
    const char *op;
    int role;
    const char *name;
    const char *value;
    int from, until;
} era_row;

/* Which rows an index holds. */
typedef enum {
    ERA_PICK_CHANGES,      /* the rows era.c applies */
    ERA_PICK_RUNTIME,      /* ERA_RUNTIME_* */
    ERA_PICK_UNREGISTERED  /* ERA_UNREGISTERED */
} era_pick;

/* Index ERA_ALL_VERSIONS: rows of every version (a reader checks the
 * range itself). */
#define ERA_ALL_VERSIONS (-1)

/* No row's op type is longer (test_era_order checks every row): a longer
 * type name cannot be a key of an index. */
#define ERA_TYPE_MAX 64

bool era_is_runtime_kind(era_kind k);
/* Row I of era.def (I < era_n_rows()). */
const era_row *era_row_at(size_t i);
size_t era_n_rows(void);
/* Op type ("*" too) -> GArray of size_t: the indices, ascending, of the
 * rows PICK selects that hold at ERA.  g_hash_table_destroy frees it. */
GHashTable *era_index_new(int era, era_pick pick);

#endif
