#!/bin/sh
# Called by tests/bench/bench.sh (make bench) with PDTRANS, BUILD and TMP set;
# also runnable alone from the repo root: sh tests/bench/transpile_bench.sh
# Times `pdtrans --role=all` (4 pservers, 2 trainers) against a plain
# `pdtrans convert` of the same generated program: PARAMS params (default
# 10000) in PARAMS/2 fc layers, about 10 ops per param (forward, backward,
# L2 decay, momentum).  Issue 4 asks for transpile <= 3x convert.
set -eu
PDTRANS=${PDTRANS:-./pdtrans}
BUILD=${BUILD:-build}
TMP=${TMP:-$(mktemp -d)}
PARAMS=${PARAMS:-10000}
${MAKE:-make} --no-print-directory "$BUILD/bench/transpile_gen" >/dev/null
"$BUILD/bench/transpile_gen" "$PARAMS" "$TMP/tp_main.pb" "$TMP/tp_startup.pb" >"$TMP/tp_gen.txt"
. "$(dirname "$0")/lib.sh"
best() { best_of 3 "$@"; }
t_conv=$(best "$PDTRANS" convert "$TMP/tp_main.pb" "$TMP/tp_conv.pb")
t_tp=$(best "$PDTRANS" --pservers=10.0.0.1:6170,10.0.0.2:6170,10.0.0.3:6170,10.0.0.4:6170 \
    --trainers=2 --trainer-id=0 -s "$TMP/tp_startup.pb" "$TMP/tp_main.pb" -o "$TMP/tp_out")
echo "bench: transpile input: $(cat "$TMP/tp_gen.txt"), $(wc -c <"$TMP/tp_main.pb") bytes"
echo "bench: pdtrans convert:            ${t_conv}s"
echo "bench: pdtrans transpile --role=all: ${t_tp}s (4 pservers, 10 files + manifest)"
echo "bench: transpile ratio: $(echo "scale=2; $t_tp / $t_conv" | bc -l) (issue 4's target <= 3.0, set when convert decoded every op; see src/README.md)"
