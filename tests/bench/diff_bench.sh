#!/bin/sh
# Called by tests/bench/bench.sh (make bench) with PDTRANS, BUILD and TMP set.
# pdtrans diff of two mostly-equal programs of about 24 000 ops (issue 31:
# within 2x the time of dumping both), binary against binary (matched ops
# with equal bytes are not decoded) and binary against text.  Never fails on
# a number.
set -eu
PDTRANS=${PDTRANS:-./pdtrans}
BUILD=${BUILD:-build}
TMP=${TMP:-$(mktemp -d)}
LAYERS=${DIFF_LAYERS:-8000}
${MAKE:-make} --no-print-directory "$BUILD/bench/gen" >/dev/null
. "$(dirname "$0")/lib.sh"
best() { best_of 3 "$@"; }

a=$TMP/diff_a.pb b=$TMP/diff_b.pb bt=$TMP/diff_b.pbtxt
"$BUILD/bench/gen" mlp "$LAYERS" "$a"
# B: one parameter renamed (its var and the ops that read it) and one
# layer's width changed, in the middle of the program.
"$PDTRANS" dump "$a" | sed -e "s/\"fc_$((LAYERS / 2)).w_0\"/\"fc_$((LAYERS / 2)).w_renamed\"/" \
    -e "/name: \"fc_$((LAYERS / 3)).tmp_0\"/,/dims/s/dims: -1/dims: -2/" >"$bt"
"$PDTRANS" convert "$bt" "$b"
ops=$("$PDTRANS" dump --ops "$a" | wc -l)
n=$("$PDTRANS" diff --stat "$a" "$b" | tail -n 1) || true
t_dump=$(best sh -c '"$1" dump "$2" >/dev/null && "$1" dump "$3" >/dev/null' sh "$PDTRANS" "$a" "$b")
t_diff=$(best sh -c '"$1" diff "$2" "$3" >/dev/null; [ $? -le 1 ]' sh "$PDTRANS" "$a" "$b")
t_difft=$(best sh -c '"$1" diff "$2" "$3" >/dev/null; [ $? -le 1 ]' sh "$PDTRANS" "$a" "$bt")
echo "bench: diff: two programs of $ops ops ($n)"
echo "bench: diff: dump both:               ${t_dump}s"
echo "bench: diff: diff binary vs binary:   ${t_diff}s; ratio $(ratio "$t_diff" "$t_dump") (issue 31 target <= 2.0)"
echo "bench: diff: diff binary vs text:     ${t_difft}s; ratio $(ratio "$t_difft" "$t_dump")"
