#!/bin/sh
# make demo: runs pdtrans on the bundled example and shows what it wrote.
set -eu
PDTRANS=${PDTRANS:-./pdtrans}
out=${DEMO_OUT:-build/demo}
rm -rf "$out"
mkdir -p "$out"
run() { echo "\$ $*"; "$@"; }
run "$PDTRANS" check testdata/fc_net.pbtxt
run "$PDTRANS" dump --ops testdata/fc_net.pbtxt
run "$PDTRANS" convert testdata/fc_net.pbtxt "$out/fc_net.pb"
echo "wrote $out/fc_net.pb ($(wc -c <"$out/fc_net.pb") bytes)"
for extra in tests/demo_*.sh; do
    [ -f "$extra" ] || continue
    PDTRANS=$PDTRANS DEMO_OUT=$out sh "$extra"
done
echo "demo: output is in $out/"
