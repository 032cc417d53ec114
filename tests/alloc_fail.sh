#!/bin/sh
# Allocation failure (issue 10 point 6): PDTRANS_FAIL_ALLOC=N makes the N-th
# allocation of a run fail (src/ir/alloc.h).  For a transpile (2 pservers,
# manifest), a backward run, a gradient check on the reference executor
# (`verify grad`: src/exec), a `verify transpile` (minimize, transpile
# per trainer, cluster and reference runs) and a convert to standard output
# (whose last allocation, the encoder's buffer, must be named as the
# writing of '-'), every failing N must give exit
# status 1, one message "pdtrans: error: out of memory while ..." and
# nothing else on stderr (so no sanitizer report or leak under
# SANITIZE=1), and no file left in the working folder: no output, no
# temporary.  verify transpile runs its transpiles in memory (issue 28); no
# folder /tmp/pdtrans-verify-PID-* may appear (its command is exec'd, so
# PID is the run's $!).
# verify transpile makes about 11000 allocations: the full sweep takes
# minutes, so the sampled one tries only the first and last 15 and 30
# between (about 60 runs with the count's search, 5 s; 140 points took 14 s).
#
#   sh tests/alloc_fail.sh          sampled: N = 1..40, the last 40 (the
#                                   writing), and about 60 spread between
#                                   (verify transpile: 15, 15 and 30)
#   sh tests/alloc_fail.sh --full   every N up to the run's allocation count
#                                   (`make alloc-sweep`; minutes under ASan)
# $PDTRANS is the binary under test.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
PDTRANS=$(cd "$(dirname "${PDTRANS:-$root/pdtrans}")" && pwd)/$(basename "${PDTRANS:-pdtrans}")
full=0
[ "${1:-}" = --full ] && full=1
# A sanitizer report must not pass for the expected exit status 1.
ASAN_OPTIONS="exitcode=97:${ASAN_OPTIONS:-}"
export ASAN_OPTIONS
unset PDTRANS_FAIL_ALLOC
scratch=$(mktemp -d) || exit 2
trap 'rm -rf "$scratch"' EXIT
pass=0 fail=0

# run CASE N: runs the case's command in a fresh folder with the N-th
# allocation failing; prints the exit status.
run() {
    work=$scratch/work
    rm -rf "$work" && mkdir "$work" && ln -s "$root/tests/golden/$2/in" "$work/in"
    # Folders older than this are another run's, whose PID this one reuses
    # (one killed before it could clean up): not counted, not removed.
    touch -d '1 second ago' "$scratch/started"
    (cd "$work" && export PDTRANS_FAIL_ALLOC="$1" && eval "$3") >"$scratch/stdout" 2>"$scratch/stderr" &
    pid=$!
    wait $pid
    rc=$?
    # a verify scratch folder left behind is recorded (and removed)
    : >"$scratch/left_tmp"
    for d in /tmp/pdtrans-verify-"$pid"-*; do
        [ -e "$d" ] && [ "$d" -nt "$scratch/started" ] && echo " $d" >>"$scratch/left_tmp" &&
            rm -rf "$d"
    done
    echo $rc
}

check_one() {  # N GOLDEN CMD
    rc=$(run "$1" "$2" "$3")
    left=$(cd "$scratch/work" && ls -A | grep -v '^in$')$(cat "$scratch/left_tmp")
    lines=$(wc -l <"$scratch/stderr")
    if [ "$rc" = 1 ] && [ "$lines" = 1 ] && [ -z "$left" ] &&
        grep -q "^pdtrans: error: out of memory while [a-z]" "$scratch/stderr"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "alloc_fail: FAIL $2 with allocation $1 failing: status $rc, left: [$left]"
        head -n 5 "$scratch/stderr" | sed 's/^/    /'
    fi
}

sweep() {  # GOLDEN CMD [LABEL]
    # The run's allocation count C: the smallest N that succeeds is C + 1.
    hi=1
    while [ "$(run $hi "$1" "$2")" != 0 ]; do
        hi=$((hi * 2))
        [ $hi -gt 100000000 ] && { echo "alloc_fail: $1 never succeeds"; fail=$((fail + 1)); return; }
    done
    lo=$((hi / 2))
    while [ $((hi - lo)) -gt 1 ]; do
        mid=$(((lo + hi) / 2))
        if [ "$(run $mid "$1" "$2")" = 0 ]; then hi=$mid; else lo=$mid; fi
    done
    count=$lo
    # A command that never calls the allocator, or ignores the switch,
    # succeeds with allocation 1 failing: it would sweep nothing and pass.
    if [ "$count" -lt 1 ]; then
        echo "alloc_fail: FAIL ${3:-$1}: no allocation failed the run (allocation count 0): nothing swept"
        fail=$((fail + 1))
        return
    fi
    # With the switch past the end the output is the normal one.
    run $((count + 1)) "$1" "$2" >/dev/null
    (cd "$scratch/work" && find . -path ./in -prune -o -type f -print | sort | xargs -r cat) >"$scratch/ok"
    rm -rf "$scratch/work" && mkdir "$scratch/work" && ln -s "$root/tests/golden/$1/in" "$scratch/work/in"
    (cd "$scratch/work" && eval "$2" >/dev/null 2>&1)
    (cd "$scratch/work" && find . -path ./in -prune -o -type f -print | sort | xargs -r cat) >"$scratch/plain"
    cmp -s "$scratch/ok" "$scratch/plain" || { echo "alloc_fail: $1: output differs with the switch set"; fail=$((fail + 1)); }
    if [ $full = 1 ]; then
        ns=$(seq 1 "$count")
    else
        step=$((count / ${spread:-60} + 1)) e=${edge:-40}
        ns=$( { seq 1 "$e"; seq $((e + 1)) "$step" "$count"; seq $((count > e ? count - e + 1 : 1)) "$count"; } |
            awk -v c="$count" '$1 >= 1 && $1 <= c' | sort -n | uniq)
    fi
    for n in $ns; do check_one "$n" "$1" "$2"; done
    echo "alloc_fail: ${3:-$1}: $count allocations, $(echo "$ns" | wc -l) failure points tried"
}

sweep transpile_basic '"$PDTRANS" --pservers=127.0.0.1:6174,127.0.0.1:6175 --trainers=2 -s in/startup.pbtxt --text in/main.pbtxt -o out'
sweep backward_fc_net '"$PDTRANS" backward --loss=loss in/fc_net.pbtxt -o out.pb'
# verify grad reads a program with backward ops: made once, outside the sweep.
"$PDTRANS" backward --loss=loss "$root/tests/golden/verify_grad/in/fc_net.pbtxt" -o "$scratch/bw.pbtxt" >/dev/null ||
    { echo "alloc_fail: cannot make the backward program for verify grad"; exit 1; }
sweep verify_grad '"$PDTRANS" verify grad --loss=loss --samples=4 -s in/fc_startup.pbtxt "$scratch/bw.pbtxt"'
edge=15 spread=30 sweep verify_grad 'exec "$PDTRANS" verify transpile --pservers=127.0.0.1:6174,127.0.0.1:6175 --trainers=2 \
    --loss=loss --optimizer=sgd:learning_rate=0.1 in/fc_net.pbtxt in/fc_startup.pbtxt' verify_transpile
# Standard output is written at the commit, the program encoded straight into
# it: the run's last allocation is the encoder's buffer, and running out of
# memory there names the writing.
to_stdout='"$PDTRANS" convert in/fc_net.pbtxt -'
sweep backward_fc_net "$to_stdout" convert_to_stdout
run "$count" backward_fc_net "$to_stdout" >/dev/null
if grep -q "^pdtrans: error: out of memory while writing '-'\$" "$scratch/stderr"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "alloc_fail: convert_to_stdout: allocation $count: not named as writing: $(cat "$scratch/stderr")"
fi
echo "alloc_fail: $pass passed, $fail failed"
[ $fail = 0 ]
