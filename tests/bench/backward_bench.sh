#!/bin/sh
# Called by tests/bench/bench.sh (make bench) with PDTRANS, BUILD and TMP set.
# Times `pdtrans backward` against a plain `pdtrans convert` of the same
# generated MLP: LAYERS layers of mul + elementwise_add + relu (3 ops each)
# and a mean loss.  Issue 3 asks for backward <= 3x convert.
set -eu
PDTRANS=${PDTRANS:-./pdtrans}
TMP=${TMP:-$(mktemp -d)}
LAYERS=${LAYERS:-20000}
awk -v n="$LAYERS" '
function var(name, d1, d2, param, stop) {
    printf "  vars {\n    name: \"%s\"\n    type {\n      type: LOD_TENSOR\n      lod_tensor {\n        tensor {\n          data_type: FP32\n          dims: %d\n", name, d1
    if (d2) printf "          dims: %d\n", d2
    printf "        }\n      }\n    }\n    persistable: %s\n", param ? "true" : "false"
    if (param) printf "    is_parameter: true\n"
    if (stop) printf "    stop_gradient: true\n"
    printf "  }\n"
}
function op(type, x, y, yslot, out) {
    printf "  ops {\n    inputs {\n      parameter: \"X\"\n      arguments: \"%s\"\n    }\n", x
    if (y != "") printf "    inputs {\n      parameter: \"%s\"\n      arguments: \"%s\"\n    }\n", yslot, y
    printf "    outputs {\n      parameter: \"Out\"\n      arguments: \"%s\"\n    }\n    type: \"%s\"\n", out, type
    printf "    attrs {\n      name: \"op_role\"\n      type: INT\n      i: 0\n    }\n  }\n"
}
BEGIN {
    printf "blocks {\n  idx: 0\n  parent_idx: -1\n"
    var("a_0", -1, 16, 0, 1)
    for (i = 1; i <= n; i++) {
        var("w_" i, 16, 16, 1, 0); var("b_" i, 16, 0, 1, 0)
        var("h_" i, -1, 16, 0, 0); var("z_" i, -1, 16, 0, 0); var("a_" i, -1, 16, 0, 0)
    }
    var("loss", 1, 0, 0, 0)
    for (i = 1; i <= n; i++) {
        op("mul", "a_" (i - 1), "w_" i, "Y", "h_" i)
        op("elementwise_add", "h_" i, "b_" i, "Y", "z_" i)
        op("relu", "z_" i, "", "", "a_" i)
    }
    op("mean", "a_" n, "", "", "loss")
    printf "}\n"
}' >"$TMP/mlp.pbtxt"
"$PDTRANS" convert "$TMP/mlp.pbtxt" "$TMP/mlp.pb"
# Best of 5 wall-clock runs of each command, interleaved so that both see
# the same machine load (on a shared machine single runs vary by 20%).
now() { date +%s.%N; }
t_conv=""
t_bw=""
for _ in 1 2 3 4 5; do
    s=$(now); "$PDTRANS" convert "$TMP/mlp.pb" "$TMP/conv.pb" >/dev/null; e=$(now)
    t=$(echo "$e - $s" | bc -l)
    if [ -z "$t_conv" ] || [ "$(echo "$t < $t_conv" | bc -l)" = 1 ]; then t_conv=$t; fi
    s=$(now); "$PDTRANS" backward --loss=loss "$TMP/mlp.pb" -o "$TMP/bw.pb" >/dev/null; e=$(now)
    t=$(echo "$e - $s" | bc -l)
    if [ -z "$t_bw" ] || [ "$(echo "$t < $t_bw" | bc -l)" = 1 ]; then t_bw=$t; fi
done
ops=$((LAYERS * 3 + 1))
echo "bench: MLP of $LAYERS layers ($ops forward ops), $(wc -c <"$TMP/mlp.pb") bytes"
echo "bench: pdtrans convert:  ${t_conv}s"
echo "bench: pdtrans backward: ${t_bw}s"
echo "bench: backward ratio: $(echo "scale=2; $t_bw / $t_conv" | bc -l) (issue 4's target <= 3.0, set when convert decoded every op; see src/README.md)"
