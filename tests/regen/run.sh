#!/bin/sh
# Regenerates the backward part of every real training program under
# ../shared/testdata-real (and train/), and the optimizer part of those with
# optimizer ops, with pdtrans, and compares each op by op with Paddle's own
# (tests/regen/regen.c, the minimize options per program in minimize.txt).
# pdtrans writes for the version that wrote each file (--paddle-version=auto):
# nothing is excused but op_callstack.  The attr order is checked as well
# (min-ops.txt's fourth column).  Every backward op must be identical,
# at least 99% of the optimizer part's (issue 30's targets).
set -u
BUILD=${BUILD:-build}
real=../shared/testdata-real
here=tests/regen
. tests/skip.sh
if [ ! -d "$real/train" ]; then
    skip regen "../shared absent (tests on real programs need it)"
    exit
fi
pass=0 fail=0
# min_ops FILE PART: --min-ops=N from min-ops.txt (none: --min-ops=0, which regen refuses)
min_ops() {
    echo "--min-ops=$(awk -v f="$1" -v p="$2" '$1 == f && $2 == p { print $3 }' "$here/min-ops.txt" | grep . || echo 0)"
}
# min_ordered FILE PART: --min-ordered=PCT from min-ops.txt's fourth column (Paddle's attr order)
min_ordered() {
    echo "--min-ordered=$(awk -v f="$1" -v p="$2" '$1 == f && $2 == p { print $4 }' "$here/min-ops.txt" | grep . || echo 0)"
}
run() {
    name=$1
    shift
    if "$BUILD/tests/regen" "$@" >"$BUILD/regen.out" 2>&1; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "regen: FAIL $name"
        head -n 40 "$BUILD/regen.out"
    fi
}
for f in "$real"/train/*_train.pdmodel "$real"/fl_trainer_main_sgd_train.pdmodel \
         "$real"/rec_join_main_grad_train.pdmodel; do
    run "backward of $(basename "$f")" "$f" "$(min_ops "$(basename "$f")" backward)" \
        "$(min_ordered "$(basename "$f")" backward)"
done
grep -v '^#' "$here/minimize.txt" | while read -r file opts; do
    [ -n "$file" ] || continue
    # shellcheck disable=SC2086
    if "$BUILD/tests/regen" "$real/train/$file" "$(min_ops "$file" optimizer)" --min-identical=99 \
        "$(min_ordered "$file" optimizer)" $opts \
        >"$BUILD/regen.out" 2>&1; then
        echo pass
    else
        echo "regen: FAIL optimizer part of $file" >&2
        head -n 40 "$BUILD/regen.out" >&2
        echo fail
    fi
done >"$BUILD/regen.opt"
pass=$((pass + $(grep -c '^pass' "$BUILD/regen.opt")))
fail=$((fail + $(grep -c '^fail' "$BUILD/regen.opt")))
rm -f "$BUILD/regen.out" "$BUILD/regen.opt"
echo "regen: $pass passed, $fail failed"
[ "$fail" = 0 ]
