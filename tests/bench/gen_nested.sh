#!/bin/sh
# gen_nested.sh DEPTH OUT.pbtxt - a program whose blocks nest DEPTH deep:
# block 0 runs conditional_block on block 1, block k runs conditional_block
# on block k+1 and copies its result out, and block DEPTH scales h.
#   h = mul(x, w); o_1 = cond_1{ o_2 = cond_2{ ... o_D = 2 h ... }; o_1 = o_2 }
#   loss = mean(o_1)
# Used by `make bench` (check and backward on deep nesting) and by the golden
# case gate_deep_nesting.  The loss depends on w through every level, so
# backward builds a grad block per level.
set -eu
depth=$1
out=$2
awk -v n="$depth" '
function var(name, type, dims, extra) {
    printf "  vars { name: \"%s\" type { type: %s", name, type
    if (dims != "") printf " lod_tensor { tensor { data_type: FP32 %s } lod_level: 0 }", dims
    printf " } persistable: false%s }\n", extra
}
function attrs_common() { return "attrs { name: \"op_role\" type: INT i: 0 }" }
function cond(k, blk) {
    printf "  ops { inputs { parameter: \"Cond\" arguments: \"cond\" }"
    printf " inputs { parameter: \"Input\" arguments: \"h\" }"
    printf " outputs { parameter: \"Out\" arguments: \"o_%d\" }", k
    printf " outputs { parameter: \"Scope\" arguments: \"s_%d\" }", k
    printf " type: \"conditional_block\" %s", attrs_common()
    printf " attrs { name: \"is_scalar_condition\" type: BOOLEAN b: true }"
    printf " attrs { name: \"sub_block\" type: BLOCK block_idx: %d } }\n", blk
}
function unary(type, x, y) {
    printf "  ops { inputs { parameter: \"X\" arguments: \"%s\" }", x
    printf " outputs { parameter: \"Out\" arguments: \"%s\" }", y
    printf " type: \"%s\" %s }\n", type, attrs_common()
}
BEGIN {
    printf "blocks {\n  idx: 0\n  parent_idx: -1\n"
    var("x", "LOD_TENSOR", "dims: -1 dims: 4", " stop_gradient: true")
    printf "  vars { name: \"w\" type { type: LOD_TENSOR lod_tensor { tensor { data_type: FP32 dims: 4 dims: 4 } } } persistable: true is_parameter: true }\n"
    printf "  vars { name: \"cond\" type { type: LOD_TENSOR lod_tensor { tensor { data_type: BOOL dims: 1 } lod_level: 0 } } persistable: false stop_gradient: true }\n"
    var("h", "LOD_TENSOR", "dims: -1 dims: 4", "")
    var("o_1", "LOD_TENSOR", "dims: -1 dims: 4", "")
    var("s_1", "STEP_SCOPES", "", "")
    var("loss", "LOD_TENSOR", "dims: 1", "")
    printf "  ops { inputs { parameter: \"X\" arguments: \"x\" } inputs { parameter: \"Y\" arguments: \"w\" }"
    printf " outputs { parameter: \"Out\" arguments: \"h\" } type: \"mul\" %s", attrs_common()
    printf " attrs { name: \"x_num_col_dims\" type: INT i: 1 } attrs { name: \"y_num_col_dims\" type: INT i: 1 } }\n"
    cond(1, 1)
    unary("mean", "o_1", "loss")
    printf "}\n"
    for (k = 1; k <= n; k++) {
        printf "blocks {\n  idx: %d\n  parent_idx: %d\n", k, k - 1
        if (k < n) {
            var("o_" (k + 1), "LOD_TENSOR", "dims: -1 dims: 4", "")
            var("s_" (k + 1), "STEP_SCOPES", "", "")
            cond(k + 1, k + 1)
            unary("assign", "o_" (k + 1), "o_" k)
        } else {
            printf "  ops { inputs { parameter: \"X\" arguments: \"h\" } outputs { parameter: \"Out\" arguments: \"o_%d\" }", k
            printf " type: \"scale\" %s attrs { name: \"scale\" type: FLOAT f: 2 } }\n", attrs_common()
        }
        printf "}\n"
    }
}' >"$out"
