#!/bin/sh
# Called by tests/bench/bench.sh (make bench) with PDTRANS, BUILD and TMP set.
# The fair limit (issue 14): what any tool must do to read these inputs and
# write these outputs with protobuf-c (tests/bench/pbfair.c, timed in the
# same run).  Prints pdtrans's ratio to it for transpile --role=all (4
# pservers, 2 trainers) on two nets of about 24 000 ops each (issue 33
# point 1): the bench's own (transpile_gen: 2 400 params, 20 ops per fc
# layer) and a parameter-heavy MLP (gen mlp MLP_LAYERS fc layers, minimize
# --optimizer=sgd: 6 000 params, 8 ops per layer); and backward; and the
# peak RSS of each run as a multiple of its input size, against issue 33's
# allowance (3x the input + 16 MiB).  Never fails on a number.
set -eu
PDTRANS=${PDTRANS:-./pdtrans}
BUILD=${BUILD:-build}
TMP=${TMP:-$(mktemp -d)}
PARAMS=${FAIR_PARAMS:-2400}
LAYERS=${FAIR_LAYERS:-8000}
MLP_LAYERS=${FAIR_MLP_LAYERS:-3000}
${MAKE:-make} --no-print-directory "$BUILD/bench/transpile_gen" "$BUILD/bench/pbfair" \
    "$BUILD/bench/runstat" "$BUILD/bench/gen" >/dev/null
. "$(dirname "$0")/lib.sh"
best() { best_of 3 "$@"; }
# rss_multiple INPUT_BYTES CMD...: peak RSS of one run over the input size.
rss_multiple() {
    bytes=$1
    shift
    kib=$("$BUILD/bench/runstat" "$@" 2>&1 >/dev/null | tail -n 1 | awk '{print $4}')
    lim=$(( 3 * bytes / 1048576 + 16 ))
    verdict=over
    [ $((kib / 1024)) -le "$lim" ] && verdict=met
    echo "$(echo "scale=1; $kib * 1024 / $bytes" | bc -l)x ($((kib / 1024)) MiB; 3x + 16 MiB = $lim MiB: $verdict)"
}

# fair_transpile NAME WHAT MAIN STARTUP: one net's transpile --role=all
# against its fair limit, and its peak RSS.
fair_transpile() {
    name=$1 what=$2 m=$3 s=$4
    in_bytes=$(( $(wc -c <"$m") + $(wc -c <"$s") ))
    set -- --pservers=10.0.0.1:6170,10.0.0.2:6170,10.0.0.3:6170,10.0.0.4:6170 --trainers=2 --trainer-id=0 -s "$s" "$m"
    t_tp=$(best "$PDTRANS" -q "$@" -o "$TMP/fair_out_$name")
    t_fair=$("$BUILD/bench/pbfair" -r 3 -i "$m" -i "$s" "$TMP"/fair_out_"$name"/*.pb)
    out_bytes=$(cat "$TMP"/fair_out_"$name"/*.pb | wc -c)
    man_bytes=$(cat "$TMP"/fair_out_"$name"/manifest*.json | wc -c)
    echo "bench: fair: $name: transpile input $what, $in_bytes bytes; output $out_bytes bytes; manifest $man_bytes bytes ($(ratio "$man_bytes" "$out_bytes") of the output; target <= 0.10)"
    echo "bench: fair: $name: protobuf-c unpack inputs + pack/write outputs: ${t_fair}s"
    echo "bench: fair: $name: pdtrans transpile --role=all:                   ${t_tp}s"
    echo "bench: fair: $name: transpile / fair limit: $(ratio "$t_tp" "$t_fair") (issue 33 target <= 1.5)"
    echo "bench: fair: $name: transpile peak RSS: $(rss_multiple "$in_bytes" "$PDTRANS" -q "$@" -o "$TMP/fair_rss_$name") of the input"
}

m=$TMP/fair_main.pb s=$TMP/fair_startup.pb
"$BUILD/bench/transpile_gen" "$PARAMS" "$m" "$s" >"$TMP/fair_gen.txt"
fair_transpile net "$(cat "$TMP/fair_gen.txt")" "$m" "$s"

# The parameter-heavy shape: as many ops, 2.5x the params, each a slice.
"$BUILD/bench/gen" mlp "$MLP_LAYERS" "$TMP/fair_mlp_fwd.pb"
"$PDTRANS" minimize --loss=loss --optimizer=sgd "$TMP/fair_mlp_fwd.pb" -o "$TMP/fair_mlp_train" >/dev/null
fair_transpile mlp "$MLP_LAYERS fc layers with backward and sgd ($("$PDTRANS" dump --ops "$TMP/fair_mlp_train/main.pb" | wc -l) ops, $((2 * MLP_LAYERS)) params)" \
    "$TMP/fair_mlp_train/main.pb" "$TMP/fair_mlp_train/startup.pb"

"$BUILD/bench/gen" mlp "$LAYERS" "$TMP/fair_mlp.pb"
b_in=$(wc -c <"$TMP/fair_mlp.pb")
t_bw=$(best "$PDTRANS" backward --loss=loss "$TMP/fair_mlp.pb" -o "$TMP/fair_bw.pb")
t_bwf=$("$BUILD/bench/pbfair" -r 3 -i "$TMP/fair_mlp.pb" "$TMP/fair_bw.pb")
echo "bench: fair: backward of $LAYERS fc layers: ${t_bw}s; fair limit ${t_bwf}s; ratio $(ratio "$t_bw" "$t_bwf") (target <= 1.5)"
echo "bench: fair: backward peak RSS: $(rss_multiple "$b_in" "$PDTRANS" backward --loss=loss "$TMP/fair_mlp.pb" -o "$TMP/fair_bw2.pb") of the input"
m=$TMP/fair_main.pb
echo "bench: fair: convert peak RSS: $(rss_multiple "$(wc -c <"$m")" "$PDTRANS" convert "$m" "$TMP/fair_conv.pb") of the input"
