#!/bin/sh
# The IR keeps its secrets (issue 28 point 3).  ir_internal.h is src/ir's
# own; ir_codec.h (an op's encoding state, the decoder of attrs still
# encoded) is src/ir's and src/io's; and code outside them walks attrs
# through ir_attr_iter or ir_op_attrs, never op->attrs.  Fails naming
# every file that breaks one of these.
set -u
cd "$(dirname "$0")/.." || exit 2
fail=0
for f in $(grep -rlE '#include *"[^"]*ir_internal\.h"' src | grep -v '^src/ir/'); do
    echo "private_headers: $f includes ir_internal.h (only src/ir may; src/io takes ir_codec.h)"
    fail=1
done
for f in $(grep -rlE '#include *"[^"]*env_internal\.h"' src | grep -v '^src/ir/'); do
    echo "private_headers: $f includes env_internal.h (only src/ir may; the layers above use env.h's slots and parts)"
    fail=1
done
for f in $(grep -rlE '#include *"[^"]*ir_codec\.h"' src | grep -vE '^src/(ir|io)/'); do
    echo "private_headers: $f includes ir_codec.h (only src/ir and src/io may)"
    fail=1
done
# The transpile family's builders.h is its passes' own (issue 28 point 5):
# other code uses placement.h.
for f in $(grep -rlE '#include *"[^"]*transpile/builders\.h"' src | grep -v '^src/passes/transpile/'); do
    echo "private_headers: $f includes transpile/builders.h (only src/passes/transpile may; use placement.h)"
    fail=1
done
# The placement is written only while find_optimize and split_vars draft it
# (issue 28 point 5): the draft handles appear in them and their helpers only,
# and the lookups' maps are defined in placement_lookup.c alone, so the
# builders reach the placement through const pointers and accessors.
for f in $(grep -lE -e '->draft' src/passes/transpile/*.c src/passes/transpile/*.h |
           grep -vE '/(find_optimize|split_vars|transpile_dispatch|transpile_table|transpile_prefetch|placement_lookup)\.c$|/builders\.h$'); do
    echo "private_headers: $f names the placement's draft handles (only find_optimize, split_vars and their helpers may)"
    fail=1
done
for f in $(grep -rlE 'struct tp_lookup *\{' src | grep -v '^src/passes/transpile/placement_lookup\.c$'); do
    echo "private_headers: $f defines struct tp_lookup (only placement_lookup.c may: the maps are read through its accessors)"
    fail=1
done
grep -rnE --include='*.c' --include='*.h' -e '->attrs\b' src | grep -vE '^src/(ir|io)/' |
    while IFS= read -r line; do
        echo "private_headers: $line: reads op->attrs (walk them with ir_attr_iter or ir_op_attrs)"
        exit 1
    done || fail=1
# An op read from a file keeps its slots as bytes until asked (issue 33
# point 2): code outside the IR and the codec reads them through
# ir_op_ins / ir_op_outs, which decode them first.
grep -rnE --include='*.c' --include='*.h' -e '(->|\.)(in|out)puts_\b' src | grep -vE '^src/(ir|io)/' |
    while IFS= read -r line; do
        echo "private_headers: $line: reads op->inputs_/outputs_ (use ir_op_ins / ir_op_outs)"
        exit 1
    done || fail=1
if [ "$fail" = 0 ]; then
    echo "private_headers: ir_internal.h and env_internal.h in src/ir only, ir_codec.h in src/ir and src/io only, no op->attrs or op->inputs_/outputs_ outside them, transpile/builders.h in src/passes/transpile only, the placement's draft handles and lookup maps in its writers only"
fi
exit "$fail"
