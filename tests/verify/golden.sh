#!/bin/sh
# tests/verify/golden.sh - issue 29 point 5's "every golden transpile case
# verifies too": runs every tests/golden/transpile_* case's cmd with
# PDTRANS=wrap.sh, which runs `verify job` after each transpile that
# succeeded.  Each must verify equal, or be refused by name ("not modelled
# by verify job yet", exit 1); a folder of one role (a launcher's per-role
# call) is refused as not a whole job; a transpile that
# differs or fails otherwise must be listed in golden-known.txt with why.
# wrap.sh also runs the numeric `verify transpile` and `--symbolic` on
# each case's flags: where both run they must agree.
# Usage: PDTRANS=./pdtrans sh tests/verify/golden.sh
set -u
LC_ALL=C
export LC_ALL
PDTRANS=${PDTRANS:-./pdtrans}
case $PDTRANS in /*) ;; *) PDTRANS=$(pwd)/$PDTRANS ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
G=$HERE/../golden
W=$(mktemp -d "${TMPDIR:-/tmp}/pdtrans-verify-golden-XXXXXX")
trap 'rm -rf "$W"' EXIT
SHARED=$(cd "$HERE/../../.." && pwd)/shared
REAL_PDTRANS=$PDTRANS VERIFY_LOG=$W/log
export REAL_PDTRANS VERIFY_LOG SHARED
for d in "$G"/transpile_*/; do
    c=$(basename "$d")
    mkdir -p "$W/$c"
    [ -d "$d/in" ] && cp -RL "$d/in" "$W/$c/in"
    (
        cd "$W/$c" || exit 99
        need_shared() { [ -d "$SHARED/testdata-real" ] || exit 0; }
        VERIFY_CASE=$c PDTRANS="$HERE/wrap.sh"
        export VERIFY_CASE PDTRANS
        . "$d/cmd"
    ) >/dev/null 2>&1
done
fails=0 eq=0 refused=0 known=0 partial=0
while IFS='|' read -r c st out line; do
    case $line in
    equal*) eq=$((eq + 1)) ;;
    *"not modelled by verify job yet"*) refused=$((refused + 1)) ;;
    *"a folder of one role: verify job needs the whole job"*) partial=$((partial + 1)) ;;
    *)
        if grep -v '^#' "$HERE/golden-known.txt" | grep -q -e "^$c " -e "^$c:$(basename "$out") "; then
            known=$((known + 1))
        else
            fails=$((fails + 1)); echo "FAIL: $c: $(basename "$out"): status $st: $line"
        fi ;;
    esac
done <"$W/log"
# The numeric verify transpile and --symbolic agree (issue 29): both
# equal (exit 0) or both report (exit 1), wherever the numeric one runs
# (it needs a STARTUP and a kernel for every op, the symbolic one a
# modelled mode).
agree=0 na=0 unmodelled=0
while IFS='|' read -r c ns ss flags msgs; do
    # (a pserver that "holds no" param: MAIN's startup initialises none of
    # them, as transpile_real_ctr's inference program; the numeric verify
    # needs values, the symbolic one takes each param's initial value)
    case "$ns $msgs" in
    2*|*"single-process run:"*"##"*|1*"holds no '"*"##"*) na=$((na + 1)); continue ;;
    esac
    case $msgs in
    *"##"*"not modelled by verify job yet"*|*"##"*"has no optimizer ops"*)
        unmodelled=$((unmodelled + 1)); continue ;;
    esac
    if [ "$ns" = "$ss" ]; then
        agree=$((agree + 1))
    else
        fails=$((fails + 1)); echo "FAIL: $c:$flags: numeric verify status $ns, --symbolic $ss: $msgs"
    fi
done <"$W/log.num"
echo "verify golden: numeric and symbolic verify transpile agree on $agree flag sets; $na the numeric one cannot run, $unmodelled the symbolic one does not model"
cases=$(cut -d'|' -f1 "$W/log" | sort -u | wc -l)
echo "verify golden: $(wc -l <"$W/log") transpiles of $cases cases: $eq equal, $refused refused by name, $partial one-role folders, $known known, $fails failed"
[ $fails = 0 ] && [ "$cases" -gt 0 ]
