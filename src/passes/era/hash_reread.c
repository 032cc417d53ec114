/* hash_reread.c - the attr order up to 2.3 of an op read from the input
 * that a pass changed (research-2x-3x.md 4q).
 *
 * Paddle reads a program file through ProgramDesc(proto): each
 * OpDesc(const proto::OpDesc &) starts with need_update_ false and fills
 * its empty attrs_ map (std::unordered_map) with `attrs_[name] = ...` for
 * every attr of the file in file order, BLOCK and BLOCKS attrs skipped;
 * ProgramDesc::InitFromProto then gives each op its BLOCK and BLOCKS attrs
 * by SetBlockAttr / SetBlocksAttr, in the file's order (op_desc.cc and
 * program_desc.cc, the same in v1.4.1, v1.5.2, v1.8.5, v2.0.0, v2.3.2).
 * An op left alone is written back as its bytes; one a pass changes
 * (SetAttr, RenameInput, ... set need_update_) is re-flushed by
 * OpDesc::Flush, `for (auto &attr : attrs_)`: the list order of that map.
 * An attr set later is inserted after the file's (a map's operator[] keeps
 * a present key's place, erase keeps the others' order), and pdtrans's
 * setters do the same to the op's attrs (in place, or appended in the
 * order the pass sets them), so the op's attrs as they stand are the
 * insertion history: the non-block ones in their order, then the block
 * ones.  hash_table.c's table gives the list order. */
#include "hash_table.h"

bool pdt_hash_reread(ht *t, const ir_op *op)
{
    if (op->n_attrs + 1 >= HT_MAX)
        return false;
    const ir_attr *a = ir_op_attrs(op);
    ht_init(t);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < op->n_attrs; i++) {
            bool block = a[i].type == IR_ATTR_BLOCK || a[i].type == IR_ATTR_BLOCKS;
            if (block == (pass == 1) && !ht_insert(t, a[i].name))
                return false;
        }
    return true;
}
