# tests/verify/real.sh - sourced by run.sh (its job/equal helpers, $W, $P2,
# $TR2): every real training program under ../shared/testdata-real (the
# four in train/, fl_trainer's sgd program, and rec_join's backward-only
# program minimized with sgd; rec_example too) in every mode issue 29 point
# 5 names: sync trainer 0 and trainer 1 (--trainer-id), async, half-async,
# --no-slice, nccl2, collective grad_allreduce, local_sgd and
# single_process_multi_thread (2 GPUs).  What is not equal is
# asserted by name: the PaddleOCR models' learning rate, computed by the
# trainer's forward ops, in the pserver modes (--lr-ops=move fixes it);
# local_sgd's snapshot, which no startup assigns when it initialises no
# param (all but ResNet-50).
# ResNet-50's async and half-async jobs verify equal with the offset of
# Paddle's async LR counter named on stderr.
R=$HERE/../../../shared/testdata-real

# real_inputs NAME: "MAIN [STARTUP]" of a real program (minimized when it
# has backward ops but no optimizer ops).
real_inputs() {
    case $1 in
    fleetx_resnet50_momentum) echo "$R/train/${1}_train.pdmodel $R/train/${1}_startup.pdmodel" ;;
    paddleocr_*) echo "$R/train/${1}_train.pdmodel" ;;
    fl_trainer_main_sgd_train) echo "$R/$1.pdmodel" ;;
    rec_*)
        f=$R/train/$1.pdmodel; [ -f "$f" ] || f=$R/$1.pdmodel
        "$PDTRANS" minimize --loss=loss_ctr --optimizer=sgd:learning_rate=0.1 "$f" \
            -o "$W/$1.min" >/dev/null 2>&1 || fail "$1: minimize"
        echo "$W/$1.min/main.pb $W/$1.min/startup.pb" ;;
    esac
}

# real_flags MODE: the transpile flags of a mode.
real_flags() {
    case $1 in
    sync0) echo "$P2 --trainers=2 --trainer-id=0" ;;
    sync1) echo "$P2 --trainers=2 --trainer-id=1" ;;
    async) echo "$P2 --trainers=2 --async" ;;
    half_async) echo "$P2 --trainers=2 --half-async" ;;
    no_slice) echo "$P2 --trainers=2 --no-slice" ;;
    nccl2) echo "--mode=nccl2 $TR2 --endpoint=10.0.0.1:6170" ;;
    collective) echo "--mode=collective --collective-mode=grad_allreduce $TR2 --endpoint=10.0.0.1:6170" ;;
    local_sgd) echo "--mode=collective --collective-mode=local_sgd $TR2 --endpoint=10.0.0.1:6170" ;;
    spmt) echo "--mode=collective --collective-mode=single_process_multi_thread $TR2 --endpoint=10.0.0.1:6170 --selected-gpus=0,1" ;;
    esac
}

# expect NAME STATUS WANT: verify job exits STATUS with WANT in its output
# and no parameter reported equal.
expect() {
    n=$((n + 1))
    set -- "$1" "$2" "$3" $(cat "$W/$1.inputs")
    "$PDTRANS" verify job "$W/$1" "$4" ${5:-} >"$W/out" 2>&1
    st=$?
    if [ $st = "$2" ] && grep -qF -- "$3" "$W/out" && ! grep -q ': equal' "$W/out"; then
        echo "ok: $1: $(grep -F -- "$3" "$W/out" | head -1 | cut -c1-140)"
    else
        fail "$1: expected status $2 and '$3' (status $st)"; head -3 "$W/out"
    fi
}

if [ -d "$R/train" ]; then
    start=$(date +%s)
    LR="reads 'learning_rate'"
    for m in fleetx_resnet50_momentum paddleocr_det_db_mv3_adam paddleocr_rec_crnn_lstm_adam \
             rec_example_main_grad_train fl_trainer_main_sgd_train rec_join_main_grad_train; do
        set -- $(real_inputs $m)
        M=$1 S=${2:-}
        for mode in sync0 sync1 async half_async no_slice nccl2 collective local_sgd spmt; do
            name=$m.$mode
            # shellcheck disable=SC2046
            "$PDTRANS" transpile $(real_flags $mode) ${S:+-s "$S"} "$M" -o "$W/$name" \
                >/dev/null 2>"$W/$name.err" || { fail "$name: transpile: $(cat "$W/$name.err")"; continue; }
            echo "$M $S" >"$W/$name.inputs"
            case $m.$mode in
            paddleocr_*.sync*|paddleocr_*.*async|paddleocr_*.no_slice) expect $name 1 "$LR" ;;
            # no startup program, or one that initialises no param (rec_*):
            # LocalSGD's startup assigns a snapshot only to the params the
            # startup holds, so the first averaging reads PARAM@SNAPSHOT
            # unset (in Paddle an uninitialised tensor)
            paddleocr_*.local_sgd|fl_trainer_*.local_sgd|rec_*.local_sgd) expect $name 1 "@SNAPSHOT' = " ;;
            fleetx_*.async|fleetx_*.half_async)
                # equal, Paddle's async LR counter offset named on stderr
                equal $name
                grep -qF "learning-rate schedule runs 2 steps ahead" "$W/err" ||
                    fail "$name: expected the LR counter offset on stderr" ;;
            *) equal $name ;;
            esac
        done
        # trainer 1's folder holds no trainer_0
        [ ! -f "$W/$m.sync1/trainer_0.pb" ] && [ -f "$W/$m.sync1/trainer_1.pb" ] ||
            fail "$m.sync1: expected trainer_1.pb alone"
    done
    el=$(($(date +%s) - start))
    n=$((n + 1))
    if [ $el -le 60 ]; then echo "ok: real programs in every mode in ${el}s"
    else fail "real programs in every mode took ${el}s (over 60)"; fi
    # --role=all writes trainer_0 and trainer_1: both run their own programs
    m=fleetx_resnet50_momentum
    "$PDTRANS" transpile $P2 --trainers=2 -s "$R/train/${m}_startup.pdmodel" \
        "$R/train/${m}_train.pdmodel" -o "$W/$m.all" >/dev/null 2>&1 || fail "$m: transpile"
    [ -f "$W/$m.all/trainer_1.pb" ] || fail "$m: --role=all wrote no trainer_1.pb"
    cp "$W/$m.sync0.inputs" "$W/$m.all.inputs"
    equal $m.all
    # a mutant of the half-async job: trainer 0's recv of one param dropped
    n=$((n + 1))
    rm -rf "$W/half_recv_dropped"; cp -r "$W/fl_trainer_main_sgd_train.half_async" "$W/half_recv_dropped"
    last=$("$PDTRANS" convert "$W/half_recv_dropped/trainer_0.pb" - | grep -c '^  ops {')
    python3 "$HERE/mutate.py" "$PDTRANS" "$W/half_recv_dropped/trainer_0.pb" drop-op 0 $((last - 1)) ||
        fail "half_recv_dropped: mutate"
    "$PDTRANS" verify job "$W/half_recv_dropped" "$R/fl_trainer_main_sgd_train.pdmodel" >"$W/out" 2>&1
    st=$?
    if [ $st = 1 ] && grep -q "differs at step 1 on trainer 0: no op of trainer_0.pb writes" "$W/out"; then
        echo "ok: half_recv_dropped: $(grep differs "$W/out" | head -1 | cut -c1-140)"
    else
        fail "half_recv_dropped: expected status 1 and the param trainer 0 no longer receives (status $st)"
        head -3 "$W/out"
    fi
else
    skip "tests/verify real programs" "no ../shared/testdata-real"
fi
