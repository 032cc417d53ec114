#!/bin/sh
# make demo: the main job on the bundled training net (testdata/mlp*.pbtxt):
# minimize, transpile for 2 pservers and 2 trainers (all roles at once, then
# per role as a launcher calls it, then from the launcher's environment), and
# a look at what came out, and verify job on the folders.  README.md and the man page's EXAMPLES show the
# same commands; keep them in step.  Output: $DEMO_OUT (default build/demo).
set -eu
PDTRANS=${PDTRANS:-./pdtrans}
out=${DEMO_OUT:-build/demo}
eps=127.0.0.1:6170,127.0.0.1:6171
rm -rf "$out"
mkdir -p "$out"
run() { echo "\$ $*"; "$@"; }
step() { printf '\n# %s\n' "$*"; }

step "1. backward pass and Momentum optimizer, as fluid's Optimizer.minimize(loss)"
run "$PDTRANS" minimize --loss=mean_0.tmp_0 --optimizer=momentum:lr=0.01 \
    -s testdata/mlp_startup.pbtxt testdata/mlp.pbtxt -o "$out/train"

step "2. split for 2 pservers and 2 trainers, every role at once"
run "$PDTRANS" transpile -s "$out/train/startup.pb" --pservers=$eps --trainers=2 \
    "$out/train/main.pb" -o "$out/all"

step "3. as a launcher does it: each process writes only its own programs"
for k in 0 1; do
    ep=127.0.0.1:617$k
    run "$PDTRANS" transpile -s "$out/train/startup.pb" --pservers=$eps --trainers=2 \
        --role=pserver --endpoint=$ep "$out/train/main.pb" -o "$out/job"
done
for i in 0 1; do
    run "$PDTRANS" transpile -s "$out/train/startup.pb" --pservers=$eps --trainers=2 \
        --role=trainer --trainer-id=$i "$out/train/main.pb" -o "$out/job"
done

step "4. the same from the variables a Paddle 1.x launcher exports (pserver 0, trainer 1)"
echo "\$ PADDLE_TRAINING_ROLE=PSERVER PADDLE_PSERVER_ENDPOINTS=$eps PADDLE_TRAINERS=2 PADDLE_CURRENT_ENDPOINT=127.0.0.1:6170 \\"
echo "    $PDTRANS transpile --from-env -s $out/train/startup.pb $out/train/main.pb -o $out/env"
PADDLE_TRAINING_ROLE=PSERVER PADDLE_PSERVER_ENDPOINTS=$eps PADDLE_TRAINERS=2 \
PADDLE_CURRENT_ENDPOINT=127.0.0.1:6170 \
    "$PDTRANS" transpile --from-env -s "$out/train/startup.pb" "$out/train/main.pb" -o "$out/env"
echo "\$ PADDLE_TRAINING_ROLE=TRAINER PADDLE_PSERVER_ENDPOINTS=$eps PADDLE_TRAINERS=2 PADDLE_TRAINER_ID=1 \\"
echo "    $PDTRANS transpile --from-env -s $out/train/startup.pb $out/train/main.pb -o $out/env"
PADDLE_TRAINING_ROLE=TRAINER PADDLE_PSERVER_ENDPOINTS=$eps PADDLE_TRAINERS=2 \
PADDLE_TRAINER_ID=1 \
    "$PDTRANS" transpile --from-env -s "$out/train/startup.pb" "$out/train/main.pb" -o "$out/env"

step "5. what came out"
run ls "$out/job"
run "$PDTRANS" dump --ops "$out/all/pserver_0.pb"
run "$PDTRANS" dump --ops "$out/job/trainer_1.pb"
run "$PDTRANS" check "$out"/job/*.pb
echo "all $(ls "$out"/job/*.pb | wc -l) programs pass pdtrans check"

step "6. prove the job before launching it: two steps of it against single-process training"
run "$PDTRANS" verify job "$out/all" "$out/train/main.pb" "$out/train/startup.pb"
run "$PDTRANS" verify job "$out/job" "$out/train/main.pb" "$out/train/startup.pb"
for extra in tests/demo_*.sh; do
    [ -f "$extra" ] || continue
    PDTRANS=$PDTRANS DEMO_OUT=$out sh "$extra"
done
echo
echo "demo: the per-role files are in $out/job/"
