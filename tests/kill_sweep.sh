#!/bin/sh
# Sets that survive kill -9 (issue 27 point 5).  out/ holds a whole set of
# job A (3 pservers, 2 trainers: 11 files); a transpile of job B (2 pservers,
# --clean) replaces 9 of them and removes pserver_2's two.  PDTRANS_KILL_AT=
# KIND:N makes the run kill itself (SIGKILL) just before its N-th call of
# KIND (create, write, fsync, link, rename, unlink), for every N until a run
# is not killed.  After each kill, the next run into out/ must first put
# back a whole set: a run of a third job, refused as ever, leaves out/
# exactly job A's set (the kill came before the set was in) or exactly job
# B's (it came after), byte for byte, with no hidden file left, and
# `pdtrans check out` passes.  A new folder (-o
# new) must hold nothing or the whole set after a kill at any point.
set -u
PDTRANS=${PDTRANS:-./pdtrans}
case $PDTRANS in /*) ;; *) PDTRANS=$(pwd)/$PDTRANS ;; esac   # it runs in a scratch folder
T=$(cd "$(dirname "$0")/.." && pwd)/testdata
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d" || exit 1
S="-s $T/basic_startup.pbtxt $T/basic_main.pbtxt --trainers=2"
A="--pservers=127.0.0.1:6174,127.0.0.1:6175,127.0.0.1:6176"
B="--pservers=127.0.0.1:6174,127.0.0.1:6175"
pass=0 fail=0 points=0
bad() { echo "kill_sweep: FAIL: $*"; fail=$((fail + 1)); }
"$PDTRANS" $A $S -o setA >/dev/null 2>&1 && "$PDTRANS" $B $S -o setB >/dev/null 2>&1 ||
    { echo "kill_sweep: FAIL: the reference sets"; exit 1; }
for kind in create write fsync link rename unlink; do
    n=1
    while [ $n -le 60 ]; do
        rm -rf out && cp -R setA out
        PDTRANS_KILL_AT=$kind:$n "$PDTRANS" $B --clean $S -o out >/dev/null 2>&1
        rc=$?
        if [ $rc = 0 ]; then
            diff -r setB out >/dev/null || bad "$kind:$n: not killed, but out/ is not set B"
            break
        fi
        points=$((points + 1))
        [ $rc = 137 ] || bad "$kind:$n: exit $rc, not killed"
        # A run of a third job is refused, after putting back a whole set.
        "$PDTRANS" $B $S --trainers=3 -o out >log 2>&1
        rc=$?
        if [ $rc = 1 ] && grep -q 'another job' log &&
            { diff -r setA out >/dev/null || diff -r setB out >/dev/null; }; then
            pass=$((pass + 1))
        else
            bad "$kind:$n: after the kill, a run of job C exits $rc and out/ is neither set:"
            cat log; diff -r setA out; diff -r setB out
        fi
        "$PDTRANS" check out >log 2>&1 || { bad "$kind:$n: pdtrans check out:"; cat log; }
        n=$((n + 1))
    done
done
# A new folder appears with one rename: after a kill it is absent or whole,
# and the next run removes the folder being built (.new.pdtrans-dir-*).
for kind in create write fsync rename; do
    n=1
    while [ $n -le 60 ]; do
        rm -rf new
        PDTRANS_KILL_AT=$kind:$n "$PDTRANS" $B $S -o new >/dev/null 2>&1
        rc=$?
        [ $rc = 0 ] && break
        points=$((points + 1))
        if [ -e new ] && ! diff -r setB new >/dev/null; then bad "$kind:$n: new/ is not whole"
        elif ! "$PDTRANS" $B $S -o new >log 2>&1 || ! diff -r setB new >/dev/null; then
            bad "$kind:$n: the next run into new/ fails or differs:"; cat log
        elif [ "$(ls -A | grep -c pdtrans-dir)" != 0 ]; then bad "$kind:$n: a folder being built was left"
        else pass=$((pass + 1)); fi
        n=$((n + 1))
    done
done
echo "kill_sweep: $points kill points, $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
