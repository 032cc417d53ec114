#!/bin/sh
# Tests on the real programs in ../shared/testdata-real (skipped, with a
# note, when ../shared is absent):
#  - convert binary->binary gives exactly what protobuf-c itself writes
#    (15 of 18 files: the input byte for byte);
#  - dump equals `protoc --decode` byte for byte;
#  - dump | convert back to binary gives the same bytes again;
#  - `pdtrans check` passes;
#  - the two invalid files, and truncated copies of every file, are
#    rejected with exit 1 and one message naming the file.
set -u
PDTRANS=${PDTRANS:-./pdtrans}
BUILD=${BUILD:-build}
real=../shared/testdata-real
. tests/skip.sh
if [ ! -d "$real" ]; then
    skip real "../shared absent (tests on real programs need it)"
    exit
fi
have_protoc=1
command -v protoc >/dev/null 2>&1 ||
    { have_protoc=0; skip real "protoc missing: dump not compared with protoc --decode" || exit 1; }
pbbare=$BUILD/bench/pbbare
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "real: FAIL $*"; }
identical=0
for f in "$real"/*.pdmodel; do
    b=$(basename "$f")
    "$PDTRANS" convert "$f" "$tmp/rt.pb" || { bad "$b: convert failed"; continue; }
    "$pbbare" "$f" "$tmp/ref.pb" || { bad "$b: pbbare failed"; continue; }
    if cmp -s "$tmp/rt.pb" "$tmp/ref.pb"; then ok; else bad "$b: round trip differs from protobuf-c's own bytes"; fi
    cmp -s "$tmp/rt.pb" "$f" && identical=$((identical + 1))
    "$PDTRANS" dump "$f" >"$tmp/dump.txt" || bad "$b: dump failed"
    if [ $have_protoc = 1 ]; then
        protoc --decode=paddle.framework.proto.ProgramDesc proto/framework.proto <"$f" >"$tmp/protoc.txt" 2>/dev/null
        if cmp -s "$tmp/dump.txt" "$tmp/protoc.txt"; then ok; else bad "$b: dump differs from protoc --decode"; diff "$tmp/protoc.txt" "$tmp/dump.txt" | head -5; fi
    fi
    "$PDTRANS" convert "$tmp/dump.txt" "$tmp/back.pb" || bad "$b: text form does not read back"
    if cmp -s "$tmp/back.pb" "$tmp/rt.pb"; then ok; else bad "$b: dump -> convert does not give the same bytes"; fi
    if "$PDTRANS" check "$f" 2>"$tmp/check.err"; then ok; else bad "$b: check failed"; cat "$tmp/check.err"; fi
    size=$(wc -c <"$f")
    for cut in 1 7 $((size / 3)) $((size / 2)) $((size - 3)) $((size - 1)); do
        head -c "$cut" "$f" >"$tmp/cut.pb"
        "$PDTRANS" check "$tmp/cut.pb" >/dev/null 2>"$tmp/cut.err"
        rc=$?
        if [ $rc = 1 ] && [ "$(wc -l <"$tmp/cut.err")" -ge 1 ] && grep -q "cut.pb" "$tmp/cut.err"; then
            ok
        elif [ $rc = 0 ] && "$pbbare" "$tmp/cut.pb" "$tmp/cut.ref" 2>/dev/null; then
            # A cut between whole fields can leave a valid (shorter) program;
            # protobuf-c must agree that it is one.
            ok
        else
            bad "$b cut at $cut: exit $rc: $(cat "$tmp/cut.err")"
        fi
    done
done
if [ "$identical" = 15 ]; then ok; else bad "expected 15 files to round-trip byte for byte, got $identical"; fi
for f in "$real"/invalid/*; do
    b=$(basename "$f")
    "$PDTRANS" check "$f" >/dev/null 2>"$tmp/inv.err"
    rc=$?
    if [ $rc = 1 ] && [ "$(wc -l <"$tmp/inv.err")" = 1 ] && grep -q "$b" "$tmp/inv.err"; then
        ok
    else
        bad "$b: expected exit 1 and one message, got exit $rc: $(cat "$tmp/inv.err")"
    fi
done
echo "real: $pass passed, $fail failed"
[ "$fail" = 0 ]
