#!/bin/sh
# make bench: times pdtrans against a bare protobuf-c unpack+pack.
# Prints ratios; never fails on a time (benchmarks are informative).
set -eu
PDTRANS=${PDTRANS:-./pdtrans}
BUILD=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
best() { best_of 3 "$@"; }

"$BUILD/bench/gen" wide 100000 "$tmp/wide.pb"
echo "bench: synthetic program: $(wc -c <"$tmp/wide.pb") bytes, 100000 ops, 51001 vars"
t_bare=$(best "$BUILD/bench/pbbare" "$tmp/wide.pb" "$tmp/bare.pb")
t_conv=$(best "$PDTRANS" convert "$tmp/wide.pb" "$tmp/conv.pb")
echo "bench: protobuf-c unpack+pack: ${t_bare}s"
echo "bench: pdtrans convert:        ${t_conv}s"
echo "bench: convert ratio: $(ratio "$t_conv" "$t_bare") (target <= 2.0)"
for extra in tests/bench/*_bench.sh; do
    [ -f "$extra" ] || continue
    PDTRANS=$PDTRANS BUILD=$BUILD TMP=$tmp sh "$extra"
done
