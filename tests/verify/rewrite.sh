#!/bin/sh
# tests/verify/rewrite.sh - `pdtrans verify rewrite --symbolic` (issue 29 point 6), run by
# make check: every real program under ../shared/testdata-real (and train/) verifies equal
# after memory-optimize (levels 0 and 1), release-memory, and both, in seconds; the numeric
# and the symbolic check agree on the golden rewrite cases; a reuse of a live buffer and a
# delete_var too early in ResNet-50 are reported naming the op and the var; usage errors;
# the progress line shows on a terminal only.
set -u
PDTRANS=${PDTRANS:-./build/pdtrans}
PDTRANS=$(cd "$(dirname "$PDTRANS")" && pwd)/$(basename "$PDTRANS")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHARED=${SHARED:-$ROOT/../shared}
. "$ROOT/tests/skip.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "verify rewrite: FAIL: $*"; fails=$((fails + 1)); }

# expect_equal BEFORE AFTER WHAT: exit 0, no stderr, the persistable line
expect_equal() {
    "$PDTRANS" verify rewrite --symbolic "$1" "$2" >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc = 0 ] && [ ! -s "$T/err" ] && grep -q '^persistable vars: .* equal (2 steps' "$T/out" ||
        { fail "$3: status $rc: $(cat "$T/err")"; return 1; }
}

# --- every real program, every memory rewrite, within seconds -------------------------------
if [ -d "$SHARED/testdata-real" ]; then
    start=$(date +%s)
    n=0 changed=0
    for f in "$SHARED"/testdata-real/*.pdmodel "$SHARED"/testdata-real/train/*.pdmodel; do
        b=$(basename "$f" .pdmodel)
        "$PDTRANS" memory-optimize --no-verify-each "$f" -o "$T/m0.pb" 2>/dev/null &&
        "$PDTRANS" memory-optimize --no-verify-each --level=1 "$f" -o "$T/m1.pb" 2>/dev/null &&
        "$PDTRANS" release-memory --no-verify-each "$f" -o "$T/rm.pb" 2>/dev/null &&
        "$PDTRANS" release-memory --no-verify-each "$T/m1.pb" -o "$T/both.pb" 2>/dev/null ||
            { fail "$b: the rewrites failed"; continue; }
        cmp -s "$f" "$T/rm.pb" || changed=$((changed + 1))
        for m in m0 m1 rm both; do
            expect_equal "$f" "$T/$m.pb" "$b $m" && n=$((n + 1))
        done
    done
    secs=$(($(date +%s) - start))
    [ "$secs" -le 60 ] || fail "the real programs took $secs s"
    [ "$changed" -ge 10 ] || fail "release-memory changed only $changed real programs"
    echo "verify rewrite: $n real rewrites equal (symbolic, $secs s with the rewrites)"
else
    skip "verify rewrite (real programs)" "no ../shared/testdata-real" || fails=$((fails + 1))
fi

# --- the numeric and the symbolic check agree on the golden rewrite cases -------------------
G=$ROOT/tests/golden
cd "$T" || exit 1
"$PDTRANS" backward --loss=loss "$G/verify_rewrite/in/fc_net.pbtxt" -o bw.pbtxt >/dev/null
"$PDTRANS" memory-optimize bw.pbtxt -o level0.pbtxt --text
"$PDTRANS" memory-optimize --level=1 bw.pbtxt -o level1.pbtxt --text
"$PDTRANS" release-memory bw.pbtxt -o released.pbtxt --text
sed 's/arguments: "sq@GRAD"/arguments: "diff"/' level1.pbtxt >wrong.pbtxt
agree() {   # agree BEFORE AFTER WHAT: both checks give one verdict
    "$PDTRANS" verify rewrite "$1" "$2" >/dev/null 2>&1; num=$?
    "$PDTRANS" verify rewrite --symbolic "$1" "$2" >/dev/null 2>&1; sym=$?
    [ "$num" = "$sym" ] || fail "$3: numeric status $num, symbolic $sym"
    echo "$3: numeric $num, symbolic $sym"
}
for f in level0 level1 released wrong; do agree bw.pbtxt $f.pbtxt "fc_net $f"; done
for c in memory_optimize_sub_blocks release_memory_sub_blocks; do
    if [ $c = memory_optimize_sub_blocks ]; then
        "$PDTRANS" memory-optimize "$G/$c/in/sub_blocks.pbtxt" -o sub.pbtxt --text 2>/dev/null
    else
        "$PDTRANS" release-memory "$G/$c/in/sub_blocks.pbtxt" -o sub.pbtxt --text 2>/dev/null
    fi
    expect_equal "$G/$c/in/sub_blocks.pbtxt" sub.pbtxt "$c (while, conditional_block pairs)"
done
if [ -d "$SHARED/testdata-real" ]; then
    real=$SHARED/testdata-real/fl_trainer_main_sgd_train.pdmodel
    "$PDTRANS" memory-optimize --level=1 "$real" -o fl1.pb
    "$PDTRANS" release-memory "$real" -o flrm.pb
    agree "$real" fl1.pb "verify_rewrite_real level1"
    agree "$real" flrm.pb "verify_rewrite_real released"
fi

# --- mutants: one wrong reuse, one delete_var too early, the op and var named ---------------
mutant() {   # mutant MODE BEFORE AFTER.pbtxt WHAT
    where=$(python3 "$ROOT/tests/verify/rewrite_mutate.py" "$1" "$3" mut.pbtxt) ||
        { fail "$4: no mutant"; return; }
    set -- "$@" $where    # $6 op index, $7 type, $8 var
    "$PDTRANS" verify rewrite --symbolic "$2" mut.pbtxt >out 2>err; rc=$?
    [ $rc = 1 ] && [ ! -s out ] &&
        grep -q "^pdtrans: error: mut.pbtxt: block 0, op $6 '$7': input .*'$8'" err ||
        fail "$4: status $rc, expected op $6 '$7' var '$8': $(cat err)"
    grep -q "($5)" err || fail "$4: not called $5: $(cat err)"
    echo "$4: reported at op $6 '$7', var '$8'"
}
if [ -d "$SHARED/testdata-real" ]; then
    rn=$SHARED/testdata-real/train/fleetx_resnet50_momentum_train.pdmodel
    "$PDTRANS" memory-optimize --level=1 "$rn" -o rn1.pb && "$PDTRANS" convert --text rn1.pb rn1.pbtxt
    "$PDTRANS" release-memory "$rn" -o rnrm.pb && "$PDTRANS" convert --text rnrm.pb rnrm.pbtxt
    mutant live-reuse "$rn" rn1.pbtxt "resnet50 live reuse" "a reuse of a buffer still live"
    mutant early-delete "$rn" rnrm.pbtxt "resnet50 early delete" "a delete_var too early"
fi
mutant early-delete bw.pbtxt released.pbtxt "fc_net early delete" "a delete_var too early"

# --- input and usage errors name the file or the flag ---------------------------------------
"$PDTRANS" verify rewrite --symbolic bw.pbtxt "$G/verify_rewrite/in/fc_net.pbtxt" 2>err; rc=$?
[ $rc = 1 ] && grep -q "^pdtrans: error: .*fc_net.pbtxt: block 0 has fewer ops than" err ||
    fail "unpaired programs: status $rc: $(cat err)"
"$PDTRANS" verify rewrite --symbolic --tolerance=1 bw.pbtxt level0.pbtxt 2>err; rc=$?
[ $rc = 2 ] && grep -q "'--tolerance' is the numeric check's" err || fail "--tolerance: $rc"
"$PDTRANS" verify rewrite --steps=3 bw.pbtxt level0.pbtxt 2>err; rc=$?
[ $rc = 2 ] && grep -q "'--steps' needs --symbolic" err || fail "--steps alone: $rc"
"$PDTRANS" verify rewrite --symbolic bw.pbtxt missing.pb 2>err; rc=$?
[ $rc = 1 ] && grep -q "missing.pb" err || fail "missing AFTER: $rc $(cat err)"

# --- the progress line: on a terminal, after two seconds, never in a pipe -------------------
if [ -d "$SHARED/testdata-real" ]; then
    set -- verify rewrite --symbolic --steps=1000 "$rn" rn1.pb
    s0=$(date +%s)
    "$PDTRANS" "$@" >pipe.out 2>pipe.err || fail "long run: status $?"
    [ -s pipe.err ] && fail "progress in a pipe: $(cat pipe.err)"
    python3 - "$PDTRANS" "$@" >tty.txt <<'PY' || fail "pty run failed"
import os, pty, subprocess, sys
m, s = pty.openpty()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=s)
os.close(s)
err = b""
while True:
    try:
        d = os.read(m, 4096)
    except OSError:
        break
    if not d:
        break
    err += d
out = p.stdout.read()
sys.exit(p.wait() or sys.stdout.write(err.decode() + "\n--stdout--\n" + out.decode()) and 0)
PY
    secs=$(($(date +%s) - s0))
    if grep -q 'pdtrans: [0-9.]* s: verifying: symbolic step' tty.txt; then
        echo "verify rewrite: progress line on a terminal, none in a pipe"
    elif [ "$secs" -lt 5 ]; then
        skip "verify rewrite (progress line)" "the runs took $secs s, not over two seconds each" ||
            fails=$((fails + 1))
    else
        fail "no progress line on a terminal: $(head -c 300 tty.txt)"
    fi
    grep -q 'verifying' pipe.out && fail "progress on stdout"
fi

[ $fails = 0 ] && echo "verify rewrite: all passed" && exit 0
echo "verify rewrite: $fails failures"
exit 1
