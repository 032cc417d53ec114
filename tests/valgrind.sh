#!/bin/sh
# make valgrind: the unit suites and a sample of commands under memcheck;
# any leak or error fails.
set -u
PDTRANS=${PDTRANS:-./pdtrans}
VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
fail=0
for t in "$@"; do
    $VG "$t" >/dev/null || { echo "valgrind: FAIL $t"; fail=1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for args in "dump testdata/fc_net.pbtxt" "dump --ops testdata/fc_net.pbtxt" \
            "convert testdata/fc_net.pbtxt $tmp/x.pb" "check testdata/fc_net.pbtxt"; do
    # shellcheck disable=SC2086
    $VG "$PDTRANS" $args >/dev/null 2>"$tmp/err"
    [ $? = 99 ] && { echo "valgrind: FAIL pdtrans $args"; cat "$tmp/err"; fail=1; }
done
# diff (exit 1: the programs differ) and dump --ops --attrs.
d=testdata/diff
for args in "diff $d/a.pbtxt $d/insert.pbtxt" "diff --json --callstack $d/a.pbtxt $d/callstack.pbtxt" \
            "diff --stat $d/a.pbtxt $d/block.pbtxt" "dump --ops --attrs $d/a.pbtxt" \
            "dump --no-callstack $d/a.pbtxt"; do
    # shellcheck disable=SC2086
    $VG "$PDTRANS" $args >/dev/null 2>"$tmp/err"
    [ $? = 99 ] && { echo "valgrind: FAIL pdtrans $args"; cat "$tmp/err"; fail=1; }
done
# transpile in each mode, on golden inputs (outputs go to a scratch folder).
g=tests/golden
n=0
PS="--pservers=127.0.0.1:6174,127.0.0.1:6175 --trainers=2"
TR="--trainers=127.0.0.1:6170,127.0.0.1:6171 --endpoint=127.0.0.1:6170"
for args in "$PS -s $g/transpile_basic/in/startup.pbtxt $g/transpile_basic/in/main.pbtxt" \
            "$PS --async --dc-asgd -s $g/transpile_momentum/in/startup.pbtxt $g/transpile_momentum/in/main.pbtxt" \
            "$PS -s $g/transpile_dist_table/in/startup.pbtxt $g/transpile_dist_table/in/main.pbtxt" \
            "$PS -s $g/transpile_remote_prefetch/in/startup.pbtxt $g/transpile_remote_prefetch/in/main.pbtxt" \
            "--mode=nccl2 $TR -s $g/transpile_nccl2/in/startup.pbtxt $g/transpile_nccl2/in/main.pbtxt" \
            "--mode=collective --collective-mode=grad_allreduce $TR -s $g/transpile_collective/in/startup.pbtxt $g/transpile_collective/in/main.pbtxt"; do
    # shellcheck disable=SC2086
    # one folder per job: a folder holds one job's outputs (issue 26)
    n=$((n + 1))
    $VG "$PDTRANS" $args -o "$tmp/tp$n" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc = 0 ] || { echo "valgrind: FAIL (exit $rc) pdtrans $args"; cat "$tmp/err"; fail=1; }
done
# --from-env with Paddle 2.x names (and a FLAGS_rpc_* value), and a refused
# disagreement between the generations (exit 2).
ENV2="TRAINING_ROLE=PSERVER PADDLE_PSERVERS_IP_PORT_LIST=127.0.0.1:6174,127.0.0.1:6175
 PADDLE_TRAINERS_NUM=2 POD_IP=127.0.0.1 PADDLE_PORT=6175 FLAGS_rpc_send_thread_num=3"
for extra in "" "PADDLE_TRAINING_ROLE=TRAINER"; do
    # shellcheck disable=SC2086
    env $ENV2 $extra $VG "$PDTRANS" --from-env -s $g/transpile_basic/in/startup.pbtxt \
        $g/transpile_basic/in/main.pbtxt -o "$tmp/env" >/dev/null 2>"$tmp/err"
    rc=$?
    # the two generations' roles disagree: bad input (exit 1)
    [ $rc = "$([ -z "$extra" ] && echo 0 || echo 1)" ] ||
        { echo "valgrind: FAIL (exit $rc) pdtrans --from-env $extra"; cat "$tmp/err"; fail=1; }
done
# inference: both parameter layouts, and a refused truncated file.
for args in "--params=$g/inference_small/in/params --text $g/inference_small/in/model.pbtxt" \
            "--params=$g/inference_small/in/params.combined --params-filename=p $g/inference_small/in/model.pbtxt"; do
    # shellcheck disable=SC2086
    $VG "$PDTRANS" inference $args -o "$tmp/inf" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc = 0 ] || { echo "valgrind: FAIL (exit $rc) pdtrans inference $args"; cat "$tmp/err"; fail=1; }
done
head -c 300 $g/inference_small/in/params.combined >"$tmp/cut"
$VG "$PDTRANS" inference --params="$tmp/cut" $g/inference_small/in/model.pbtxt -o "$tmp/inf2" >/dev/null 2>"$tmp/err"
[ $? = 1 ] || { echo "valgrind: FAIL pdtrans inference on a truncated file"; cat "$tmp/err"; fail=1; }
# memory passes: both levels with the print_log walk, sub-blocks, and a refused program.
for args in "memory-optimize --print-log $g/memory_optimize_levels/in/level1.pbtxt" \
            "memory-optimize --level=1 --print-log $g/memory_optimize_sub_blocks/in/sub_blocks.pbtxt" \
            "memory-optimize --skip-grads --skip=t $g/memory_optimize_skip_grads/in/skip_grads.pbtxt" \
            "release-memory $g/release_memory_sub_blocks/in/sub_blocks.pbtxt"; do
    # shellcheck disable=SC2086
    $VG "$PDTRANS" $args -o "$tmp/mem.pb" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc = 0 ] || { echo "valgrind: FAIL (exit $rc) pdtrans $args"; cat "$tmp/err"; fail=1; }
done
$VG "$PDTRANS" memory-optimize $g/memory_errors/in/no_sub_block.pbtxt -o "$tmp/mem2.pb" >/dev/null 2>"$tmp/err"
[ $? = 1 ] || { echo "valgrind: FAIL memory-optimize on a while without sub_block"; cat "$tmp/err"; fail=1; }
# The undo path of a set that fails part-way (the third rename).
PDTRANS_FAIL_AT=rename:3 $VG "$PDTRANS" $PS -s $g/transpile_basic/in/startup.pbtxt $g/transpile_basic/in/main.pbtxt \
    -o "$tmp/tp1" >/dev/null 2>"$tmp/err"
[ $? = 1 ] && grep -q 'cannot rename into place' "$tmp/err" ||
    { echo "valgrind: FAIL injected rename failure"; cat "$tmp/err"; fail=1; }
for f in ../shared/testdata-real/fit_a_line.pdmodel ../shared/testdata-real/fl_server_main_subblocks.pdmodel; do
    [ -f "$f" ] || continue
    $VG "$PDTRANS" convert "$f" "$tmp/y.pb" 2>"$tmp/err" || { echo "valgrind: FAIL convert $f"; cat "$tmp/err"; fail=1; }
done
# The input gate on each crash class (exit 1), and backward through 300
# nested blocks (the iterative walks and the lookup index).
for f in $g/gate_crash_classes/in/*.pbtxt; do
    $VG "$PDTRANS" backward --loss=loss "$f" -o "$tmp/gate.pb" >/dev/null 2>"$tmp/err"
    [ $? = 1 ] || { echo "valgrind: FAIL backward on $f"; cat "$tmp/err"; fail=1; }
done
sh tests/bench/gen_nested.sh 300 "$tmp/nested.pbtxt"
$VG "$PDTRANS" backward --loss=loss "$tmp/nested.pbtxt" -o "$tmp/nested.pb" >/dev/null 2>"$tmp/err"
[ $? = 0 ] || { echo "valgrind: FAIL backward on 300 nested blocks"; tail -3 "$tmp/err"; fail=1; }
# verify rewrite: a memory-optimized program (exit 0), a wrong one (exit 1),
# and fuse_batch_norm's output with its parameter files.
"$PDTRANS" backward --loss=loss $g/verify_rewrite/in/fc_net.pbtxt -o "$tmp/bw.pbtxt" >/dev/null
"$PDTRANS" memory-optimize --level=1 "$tmp/bw.pbtxt" -o "$tmp/mo.pbtxt" --text
sed 's/arguments: "sq@GRAD"/arguments: "diff"/' "$tmp/mo.pbtxt" >"$tmp/wrong.pbtxt"
small=$g/inference_small/in
"$PDTRANS" inference --params=$small/params $small/model.pbtxt -o "$tmp/folded" 2>/dev/null
vg_verify_rewrite() {
    want=$1; shift
    $VG "$PDTRANS" verify rewrite "$@" >/dev/null 2>"$tmp/err"
    [ $? = "$want" ] || { echo "valgrind: FAIL verify rewrite $*"; cat "$tmp/err"; fail=1; }
}
vg_verify_rewrite 0 "$tmp/bw.pbtxt" "$tmp/mo.pbtxt"
vg_verify_rewrite 1 "$tmp/bw.pbtxt" "$tmp/wrong.pbtxt"
vg_verify_rewrite 0 --params=$small/params --after-params="$tmp/folded" --tolerance=1e-5 \
    $small/model.pbtxt "$tmp/folded/__model__"
# verify transpile runs the job API in process; verify job reads a folder
# and runs src/sym; the LR warm-up and the size estimate are new paths.
$VG "$PDTRANS" verify transpile $PS --steps=1 $g/transpile_basic/in/main.pbtxt \
    $g/transpile_basic/in/startup.pbtxt >/dev/null 2>"$tmp/err"
[ $? = 0 ] || { echo "valgrind: FAIL verify transpile"; cat "$tmp/err"; fail=1; }
"$PDTRANS" $PS -s $g/transpile_basic/in/startup.pbtxt $g/transpile_basic/in/main.pbtxt \
    -o "$tmp/job" >/dev/null 2>&1
$VG "$PDTRANS" verify job "$tmp/job" $g/transpile_basic/in/main.pbtxt \
    $g/transpile_basic/in/startup.pbtxt >/dev/null 2>"$tmp/err"
[ $? = 0 ] || { echo "valgrind: FAIL verify job"; cat "$tmp/err"; fail=1; }
# the hash check's refusals (verify_job_sha256.c): an edited program, a
# listed file missing, two job ids
cp -r "$tmp/job" "$tmp/edited"; head -c 100 "$tmp/job/trainer_0.pb" >"$tmp/edited/trainer_0.pb"
cp -r "$tmp/job" "$tmp/missing"; rm "$tmp/missing/pserver_1.startup.pb"
cp -r "$tmp/job" "$tmp/twojobs"; cp "$tmp/job/manifest.json" "$tmp/twojobs/manifest.z.json"
sed -i 's/"job": "./"job": "0/' "$tmp/twojobs/manifest.z.json"
for d in edited missing twojobs; do
    $VG "$PDTRANS" verify job "$tmp/$d" $g/transpile_basic/in/main.pbtxt >/dev/null 2>"$tmp/err"
    [ $? = 1 ] && grep -q "sha256 differs\|but missing\|outputs of two jobs" "$tmp/err" ||
        { echo "valgrind: FAIL verify job ($d)"; cat "$tmp/err"; fail=1; }
done
$VG "$PDTRANS" minimize --loss=loss --optimizer=momentum:momentum=0.9 \
    --lr-schedule=piecewise:boundaries=100,200,values=0.1,0.01,0.001 \
    --lr-warmup=warmup_steps=50,start_lr=0.01,end_lr=0.1 \
    -s testdata/fc_startup.pbtxt testdata/fc_net_bw.pbtxt -o "$tmp/lr" >/dev/null 2>"$tmp/err"
[ $? = 0 ] || { echo "valgrind: FAIL minimize --lr-warmup"; cat "$tmp/err"; fail=1; }
$VG "$PDTRANS" $PS --trainers=100000 --max-output-size=1M --role=all \
    -s $g/transpile_basic/in/startup.pbtxt $g/transpile_basic/in/main.pbtxt -o "$tmp/big" >/dev/null 2>"$tmp/err"
[ $? = 1 ] || { echo "valgrind: FAIL the output estimate"; cat "$tmp/err"; fail=1; }
[ $fail = 0 ] && echo "valgrind: clean"
exit $fail
