#!/bin/sh
# Called by tests/bench/bench.sh (make bench) with PDTRANS, BUILD and TMP set.
# Issue 27 point 4: backward is linear in one op's input count.  One op
# (sum, then concat) reads N parameters, then mean -> loss.  sum gets N grad
# ops that each read its Out@GRAD (is_arg_of asked N times of one forward op);
# concat_grad has N outputs, each asked whether the op reads it, and gets
# op_role_var of N pairs.  Before: sum at 200 000 inputs 10.7 s, 1 000 000
# 283 s; concat at 20 000 100 s and 7 GB.  Times only, never a verdict.
set -eu
PDTRANS=${PDTRANS:-./pdtrans}
TMP=${TMP:-$(mktemp -d)}
. "$(dirname "$0")/lib.sh"
gen() {
    awk -v n="$1" -v type="$2" '
    function var(name, d, param) {
        printf "  vars {\n    name: \"%s\"\n    type {\n      type: LOD_TENSOR\n      lod_tensor {\n        tensor {\n          data_type: FP32\n          dims: %d\n        }\n      }\n    }\n    persistable: %s\n", name, d, param ? "true" : "false"
        if (param) printf "    is_parameter: true\n"
        printf "  }\n"
    }
    BEGIN {
        printf "blocks {\n  idx: 0\n  parent_idx: -1\n"
        for (i = 1; i <= n; i++) var("w_" i, 1, 1)
        var("c", type == "concat" ? n : 1, 0); var("loss", 1, 0)
        printf "  ops {\n    inputs {\n      parameter: \"X\"\n"
        for (i = 1; i <= n; i++) printf "      arguments: \"w_%d\"\n", i
        printf "    }\n    outputs {\n      parameter: \"Out\"\n      arguments: \"c\"\n    }\n    type: \"%s\"\n", type
        if (type == "concat") printf "    attrs {\n      name: \"axis\"\n      type: INT\n      i: 0\n    }\n"
        printf "  }\n  ops {\n    inputs {\n      parameter: \"X\"\n      arguments: \"c\"\n    }\n    outputs {\n      parameter: \"Out\"\n      arguments: \"loss\"\n    }\n    type: \"mean\"\n  }\n}\n"
    }'
}
for n in 200000 1000000; do
    for type in sum concat; do
        gen "$n" "$type" >"$TMP/wide_op.pbtxt"
        "$PDTRANS" convert "$TMP/wide_op.pbtxt" "$TMP/wide_op.pb"
        t=$(best_of 1 "$PDTRANS" backward --loss=loss "$TMP/wide_op.pb" -o "$TMP/wide_op_bw.pb")
        echo "bench: backward of one $type op with $n inputs: ${t}s"
    done
done
rm -f "$TMP/wide_op.pbtxt" "$TMP/wide_op.pb" "$TMP/wide_op_bw.pb"
