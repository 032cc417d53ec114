#!/bin/sh
# Golden test runner.  A case is a folder tests/golden/<case>/ holding
#   cmd        shell commands, run by sh in a fresh scratch folder
#   in/        input files (copied to the scratch folder's in/, links
#              followed: an input several cases share lives once in
#              testdata/ and each case's in/ holds a relative link to it)
#   expected/  every file the commands must leave in the scratch folder,
#              plus `stdout`, `stderr` and `status` (exit status of cmd)
# $PDTRANS is the binary under test (absolute), $SHARED is ../shared
# (absolute; cases that use it start with `need_shared`).  Every file in the
# scratch folder (except in/) must match expected/ exactly, and no other
# file may exist, so "no partial output" is tested too.
# Cases run under LC_ALL=C, so messages, sort order and number formats do
# not depend on the caller's locale.
# Usage: run.sh [--update CASE...] [CASE...]
#   --update  rewrites expected/ of the named cases, when they fail, and
#             prints the diff it applied; it refuses to run without a case
#             name, so that no failing case is rewritten wholesale by mistake
# A case that needs ../shared is skipped without it (one line, counted, and
# appended to $PDT_SKIP_LOG when set); under CI=true a skip fails the run.
set -u
LC_ALL=C
export LC_ALL
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
update=0
if [ "${1:-}" = "--update" ]; then
    update=1
    shift
    if [ $# = 0 ]; then
        echo "golden: --update rewrites only the cases it is told: name them (make golden-update CASE=name)" >&2
        exit 2
    fi
fi
PDTRANS=$(cd "$(dirname "${PDTRANS:-$root/pdtrans}")" && pwd)/$(basename "${PDTRANS:-pdtrans}")
SHARED=$(cd "$root/.." && pwd)/shared
export PDTRANS SHARED
# The caller's launcher variables never reach a case (a CI job may run inside
# a Paddle job): cases that test --from-env set exactly the ones they need.
for v in $(env | sed -n 's/^\(PADDLE_[A-Za-z0-9_]*\|FLAGS_[A-Za-z0-9_]*\|TRAINING_ROLE\|POD_IP\)=.*/\1/p'); do
    unset "$v"
done
cases="$*"
[ -n "$cases" ] || cases=$(cd "$here" && for d in */; do [ -f "$d/cmd" ] && echo "${d%/}"; done)
pass=0 fail=0 skip=0 updated=0
scratch_root=$(mktemp -d)
trap 'rm -rf "$scratch_root"' EXIT
for c in $cases; do
    dir="$here/$c"
    work="$scratch_root/$c"
    mkdir -p "$work"
    [ -d "$dir/in" ] && cp -RL "$dir/in" "$work/in"
    (
        cd "$work" || exit 99
        need_shared() { [ -d "$SHARED/testdata-real" ] || { echo "skipped: ../shared absent" >"$work/.skip"; exit 0; }; }
        . "$dir/cmd"
    ) >"$work/stdout" 2>"$work/stderr"
    echo $? >"$work/status"
    if [ -f "$work/.skip" ]; then
        echo "golden: $c: $(cat "$work/.skip")"
        [ -z "${PDT_SKIP_LOG:-}" ] || echo "golden $c: $(cat "$work/.skip")" >>"$PDT_SKIP_LOG"
        skip=$((skip + 1))
        continue
    fi
    rm -rf "$work/in"
    # A new case's expected/ starts empty; -N (an absent file reads as
    # empty) only then, since otherwise a missing empty output would pass.
    newflag=
    [ $update = 1 ] && [ ! -d "$dir/expected" ] && mkdir -p "$dir/expected" && newflag=-N
    if diff -r -u $newflag "$dir/expected" "$work" >"$scratch_root/diff.txt" 2>&1; then
        pass=$((pass + 1))
    elif [ $update = 1 ]; then
        rm -rf "$dir/expected"
        cp -R "$work" "$dir/expected"
        updated=$((updated + 1))
        echo "golden: updated $c; the diff applied (expected/ before, after):"
        cat "$scratch_root/diff.txt"
    else
        fail=$((fail + 1))
        echo "golden: FAIL $c"
        head -n 80 "$scratch_root/diff.txt"
    fi
done
if [ $update = 1 ]; then
    echo "golden: $pass unchanged, $updated updated, $skip skipped"
    [ $updated = 0 ] || echo "golden: read 'git diff tests/golden' before committing"
    exit 0
fi
echo "golden: $pass passed, $fail failed, $skip skipped"
if [ $skip != 0 ] && [ "${CI:-}" = true ]; then
    echo "golden: FAIL: $skip cases skipped under CI=true (a skip is never a pass: provide ../shared)"
    exit 1
fi
[ $fail = 0 ]
