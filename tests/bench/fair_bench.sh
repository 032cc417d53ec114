#!/bin/sh
# Called by tests/bench/bench.sh (make bench) with PDTRANS, BUILD and TMP set.
# The fair limit (issue 14): what any tool must do to read these inputs and
# write these outputs with protobuf-c (tests/bench/pbfair.c, timed in the
# same run).  Prints pdtrans's ratio to it for transpile --role=all (4
# pservers, 2 trainers, about 24 000 ops) and backward, and the peak RSS of
# each run as a multiple of its input size.  Never fails on a number.
set -eu
PDTRANS=${PDTRANS:-./pdtrans}
BUILD=${BUILD:-build}
TMP=${TMP:-$(mktemp -d)}
PARAMS=${FAIR_PARAMS:-2400}
LAYERS=${FAIR_LAYERS:-8000}
${MAKE:-make} --no-print-directory "$BUILD/bench/transpile_gen" "$BUILD/bench/pbfair" \
    "$BUILD/bench/runstat" "$BUILD/bench/gen" >/dev/null
. "$(dirname "$0")/lib.sh"
best() { best_of 3 "$@"; }
# rss_multiple INPUT_BYTES CMD...: peak RSS of one run over the input size.
rss_multiple() {
    bytes=$1
    shift
    kib=$("$BUILD/bench/runstat" "$@" 2>&1 >/dev/null | tail -n 1 | awk '{print $4}')
    lim=$(( 4 * bytes / 1048576 + 16 ))
    verdict=over
    [ $((kib / 1024)) -le "$lim" ] && verdict=met
    echo "$(echo "scale=1; $kib * 1024 / $bytes" | bc -l)x ($((kib / 1024)) MiB; 4x + 16 MiB = $lim MiB: $verdict)"
}

m=$TMP/fair_main.pb s=$TMP/fair_startup.pb
"$BUILD/bench/transpile_gen" "$PARAMS" "$m" "$s" >"$TMP/fair_gen.txt"
in_bytes=$(( $(wc -c <"$m") + $(wc -c <"$s") ))
set -- --pservers=10.0.0.1:6170,10.0.0.2:6170,10.0.0.3:6170,10.0.0.4:6170 --trainers=2 --trainer-id=0 -s "$s" "$m"
t_tp=$(best "$PDTRANS" "$@" -o "$TMP/fair_out")
t_fair=$("$BUILD/bench/pbfair" -r 3 -i "$m" -i "$s" "$TMP"/fair_out/*.pb)
out_bytes=$(cat "$TMP"/fair_out/*.pb | wc -c)
echo "bench: fair: transpile input $(cat "$TMP/fair_gen.txt"), $in_bytes bytes; output $out_bytes bytes"
echo "bench: fair: protobuf-c unpack inputs + pack/write outputs: ${t_fair}s"
echo "bench: fair: pdtrans transpile --role=all:                   ${t_tp}s"
echo "bench: fair: transpile / fair limit: $(ratio "$t_tp" "$t_fair") (issue 14 target <= 2.0)"
echo "bench: fair: transpile peak RSS: $(rss_multiple "$in_bytes" "$PDTRANS" "$@" -o "$TMP/fair_rss") of the input"

"$BUILD/bench/gen" mlp "$LAYERS" "$TMP/fair_mlp.pb"
b_in=$(wc -c <"$TMP/fair_mlp.pb")
t_bw=$(best "$PDTRANS" backward --loss=loss "$TMP/fair_mlp.pb" -o "$TMP/fair_bw.pb")
t_bwf=$("$BUILD/bench/pbfair" -r 3 -i "$TMP/fair_mlp.pb" "$TMP/fair_bw.pb")
echo "bench: fair: backward of $LAYERS fc layers: ${t_bw}s; fair limit ${t_bwf}s; ratio $(ratio "$t_bw" "$t_bwf") (target <= 1.5)"
echo "bench: fair: backward peak RSS: $(rss_multiple "$b_in" "$PDTRANS" backward --loss=loss "$TMP/fair_mlp.pb" -o "$TMP/fair_bw2.pb") of the input"
echo "bench: fair: convert peak RSS: $(rss_multiple "$(wc -c <"$m")" "$PDTRANS" convert "$m" "$TMP/fair_conv.pb") of the input"
