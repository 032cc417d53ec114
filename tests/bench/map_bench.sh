#!/bin/sh
# Called by tests/bench/bench.sh (make bench) with PDTRANS, BUILD and TMP set.
# pmap against GHashTable on the names of the bench programs (mapbench.c):
# the generated wide program, a generated transpile program and, when
# ../shared is there, the largest real training program.  CPU time.
set -eu
BUILD=${BUILD:-build}
TMP=${TMP:-$(mktemp -d)}
${MAKE:-make} --no-print-directory "$BUILD/bench/mapbench" "$BUILD/bench/gen" "$BUILD/bench/transpile_gen" >/dev/null
[ -f "$TMP/wide.pb" ] || "$BUILD/bench/gen" wide 100000 "$TMP/wide.pb"
"$BUILD/bench/transpile_gen" 10000 "$TMP/map_main.pb" "$TMP/map_startup.pb" >/dev/null
real=../shared/testdata-real/train/fleetx_resnet50_momentum_train.pdmodel
for f in "$TMP/wide.pb" "$TMP/map_main.pb" "$real"; do
    [ -f "$f" ] || continue
    echo "bench: mapbench $(basename "$f")"
    "$BUILD/bench/mapbench" "$f" | sed "s/^mapbench: /bench:   /"
done
