#!/bin/sh
# Called by tests/bench/bench.sh (make bench) with PDTRANS, BUILD and TMP set.
# `check` and `backward` on programs nested 5k, 10k, 20k and 100k blocks
# deep (tests/bench/gen_nested.sh); prints the time per block, which stays
# flat when the work is linear in the depth (issue 10 point 2).  The
# programs are read from binary files, converted beforehand and not timed.
# Informative only: never fails on a time.
set -eu
PDTRANS=${PDTRANS:-./pdtrans}
TMP=${TMP:-$(mktemp -d)}
here=$(dirname "$0")
DEPTHS=${DEPTHS:-5000 10000 20000 100000}
now() { date +%s.%N; }
per_block() { printf "%.1f" "$(echo "$1 * 1000000 / $2" | bc -l)"; }
secs() { printf "%.3f" "$1"; }
for d in $DEPTHS; do
    sh "$here/gen_nested.sh" "$d" "$TMP/nested.pbtxt"
    "$PDTRANS" convert "$TMP/nested.pbtxt" "$TMP/nested.pb"
    rm -f "$TMP/nested.pbtxt"
    s=$(now); "$PDTRANS" check "$TMP/nested.pb"; e=$(now)
    t_check=$(echo "$e - $s" | bc -l)
    s=$(now)
    "$PDTRANS" backward --loss=loss "$TMP/nested.pb" -o "$TMP/nested_bw.pb" >/dev/null 2>&1 ||
        { echo "bench: nested $d: backward failed"; exit 1; }
    e=$(now)
    t_bw=$(echo "$e - $s" | bc -l)
    echo "bench: nested $d blocks: check $(secs "$t_check")s ($(per_block "$t_check" "$d") us/block)," \
        "backward $(secs "$t_bw")s ($(per_block "$t_bw" "$d") us/block)"
    rm -f "$TMP/nested.pb" "$TMP/nested_bw.pb"
done
