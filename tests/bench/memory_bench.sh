#!/bin/sh
# Called by tests/bench/bench.sh (make bench) with PDTRANS, BUILD and TMP set.
# Times memory-optimize (levels 0 and 1) and release-memory on the largest
# bench programs: the 100000-op synthetic program, and a training program
# (an MLP of LAYERS layers with its backward part, about 6 ops per layer).
# Paddle's own memory_optimize is quadratic (about n^2.2: 652 s at 8013 ops,
# ../shared/reference/memory-passes.md §10); pdtrans's is O(n log n).
set -eu
PDTRANS=${PDTRANS:-./pdtrans}
BUILD=${BUILD:-build}
TMP=${TMP:-$(mktemp -d)}
LAYERS=${LAYERS:-20000}
. "$(dirname "$0")/lib.sh"
[ -f "$TMP/wide.pb" ] || "$BUILD/bench/gen" wide 100000 "$TMP/wide.pb"
"$BUILD/bench/gen" mlp "$LAYERS" "$TMP/mem_mlp.pb"
"$PDTRANS" backward --loss=loss "$TMP/mem_mlp.pb" -o "$TMP/mem_train.pb" >/dev/null
ops=$("$PDTRANS" dump --ops "$TMP/mem_train.pb" | wc -l)
t_conv=$(best_of 3 "$PDTRANS" convert "$TMP/mem_train.pb" "$TMP/mem_conv.pb")
t_m0=$(best_of 3 "$PDTRANS" memory-optimize "$TMP/mem_train.pb" -o "$TMP/mem_m0.pb")
t_m1=$(best_of 3 "$PDTRANS" memory-optimize --level=1 "$TMP/mem_train.pb" -o "$TMP/mem_m1.pb")
t_rel=$(best_of 3 "$PDTRANS" release-memory "$TMP/mem_train.pb" -o "$TMP/mem_rel.pb")
t_wide=$(best_of 3 "$PDTRANS" memory-optimize "$TMP/wide.pb" -o "$TMP/mem_wide.pb")
echo "bench: memory: training MLP of $LAYERS layers with backward: $ops ops"
echo "bench: memory: convert ${t_conv}s, memory-optimize ${t_m0}s (level 1 ${t_m1}s), release-memory ${t_rel}s"
echo "bench: memory: memory-optimize / convert: $(ratio "$t_m0" "$t_conv")"
echo "bench: memory: memory-optimize on the 100000-op synthetic program: ${t_wide}s"
