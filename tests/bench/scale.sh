#!/bin/sh
# make bench-scale: how time and memory grow with program size (issue 14).
# For each size (ops; SIZES overrides, default 1000 10000 100000 1000000)
# runs transpile --role=all, transpile of one pserver, backward and convert
# once and prints wall time per op, system time per op and peak RSS (and RSS
# over input size).  Informative only: nothing fails on a number.  The 1M-op
# row needs several GiB of memory and minutes.
set -eu
PDTRANS=${PDTRANS:-./pdtrans}
BUILD=${BUILD:-build}
SIZES=${SIZES:-1000 10000 100000 1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${MAKE:-make} --no-print-directory "$BUILD/bench/transpile_gen" "$BUILD/bench/runstat" \
    "$BUILD/bench/gen" >/dev/null
EPS=10.0.0.1:6170,10.0.0.2:6170,10.0.0.3:6170,10.0.0.4:6170
# row LABEL OPS INPUT_BYTES CMD...: one run, one line.
row() {
    label=$1 ops=$2 bytes=$3
    shift 3
    "$BUILD/bench/runstat" "$@" >/dev/null 2>"$tmp/stat" || { echo "bench-scale: $label failed"; return; }
    tail -n 1 "$tmp/stat" | awk -v l="$label" -v n="$ops" -v b="$bytes" '{
        lim = 4 * b / 1048576 + 16
        printf "bench-scale: %-22s %8d ops  %8.2f us/op  sys %6.2f us/op  RSS %7.1f MiB (%5.1fx input; target %.0f MiB: %s)\n",
               l, n, $1 * 1e6 / n, $3 * 1e6 / n, $4 / 1024, $4 * 1024 / b, lim,
               ($4 / 1024 <= lim ? "met" : "over") }'
}
for ops in $SIZES; do
    params=$((ops / 10))
    [ "$params" -ge 2 ] || params=2
    "$BUILD/bench/transpile_gen" "$params" "$tmp/m.pb" "$tmp/s.pb" >/dev/null
    n=$(( params * 10 ))
    bytes=$(( $(wc -c <"$tmp/m.pb") + $(wc -c <"$tmp/s.pb") ))
    row "transpile --role=all" "$n" "$bytes" "$PDTRANS" --pservers=$EPS --trainers=2 \
        -s "$tmp/s.pb" "$tmp/m.pb" -o "$tmp/out"
    row "transpile one pserver" "$n" "$bytes" "$PDTRANS" --pservers=$EPS --trainers=2 \
        --role=pserver --endpoint=10.0.0.2:6170 -s "$tmp/s.pb" "$tmp/m.pb" -o "$tmp/out1"
    row "convert" "$n" "$(wc -c <"$tmp/m.pb")" "$PDTRANS" convert "$tmp/m.pb" "$tmp/c.pb"
    rm -rf "$tmp/out" "$tmp/out1" "$tmp/c.pb" "$tmp/m.pb" "$tmp/s.pb"
    layers=$((ops / 3))
    [ "$layers" -ge 1 ] || layers=1
    "$BUILD/bench/gen" mlp "$layers" "$tmp/f.pb"
    row "backward" "$((layers * 3))" "$(wc -c <"$tmp/f.pb")" "$PDTRANS" backward --loss=loss \
        "$tmp/f.pb" -o "$tmp/b.pb"
    rm -f "$tmp/f.pb" "$tmp/b.pb"
done
