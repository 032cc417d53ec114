#!/bin/sh
# make demo, step 6 (run by tests/demo.sh after step 5): the same job from the variables
# Paddle 2.x's fleetrun exports (TRAINING_ROLE, PADDLE_PSERVERS_IP_PORT_LIST,
# PADDLE_TRAINERS_NUM, PADDLE_TRAINER_ID; a pserver's POD_IP + PADDLE_PORT),
# each run compared with the per-role flag run of step 3.
set -eu
PDTRANS=${PDTRANS:-./pdtrans}
out=${DEMO_OUT:-build/demo}
eps=127.0.0.1:6170,127.0.0.1:6171
printf '\n# %s\n' "6. step 4 again, from the variables Paddle 2.x's fleetrun exports (pserver 1, trainer 0)"
fleetrun() {
    echo "\$ $* \\"
    echo "    $PDTRANS transpile --from-env -s $out/train/startup.pb $out/train/main.pb -o $out/env2"
    env "$@" "$PDTRANS" transpile --from-env -s "$out/train/startup.pb" "$out/train/main.pb" \
        -o "$out/env2"
}
fleetrun TRAINING_ROLE=PSERVER PADDLE_PSERVERS_IP_PORT_LIST=$eps PADDLE_TRAINERS_NUM=2 \
    POD_IP=127.0.0.1 PADDLE_PORT=6171
fleetrun TRAINING_ROLE=TRAINER PADDLE_PSERVERS_IP_PORT_LIST=$eps PADDLE_TRAINERS_NUM=2 \
    PADDLE_TRAINER_ID=0
for f in pserver_1.pb pserver_1.startup.pb trainer_0.pb trainer_0.startup.pb; do
    cmp "$out/env2/$f" "$out/job/$f"
done
echo "the four files in $out/env2 are byte-identical to the flag runs' in $out/job"
