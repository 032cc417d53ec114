#!/bin/sh
# Regenerates the backward part of every real training program under
# ../shared/testdata-real (and train/) with pdtrans and compares it op by op
# with Paddle's own (tests/regen/regen.c; version differences in known.txt).
set -u
BUILD=${BUILD:-build}
real=../shared/testdata-real
if [ ! -d "$real/train" ]; then
    echo "regen: skipped: ../shared absent (tests on real programs need it)"
    exit 0
fi
pass=0 fail=0
for f in "$real"/train/*_train.pdmodel "$real"/fl_trainer_main_sgd_train.pdmodel \
         "$real"/rec_join_main_grad_train.pdmodel; do
    if "$BUILD/tests/regen" "$f" tests/regen/known.txt >"$BUILD/regen.out" 2>&1; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "regen: FAIL $(basename "$f")"
        head -n 40 "$BUILD/regen.out"
    fi
done
rm -f "$BUILD/regen.out"
echo "regen: $pass passed, $fail failed"
[ "$fail" = 0 ]
