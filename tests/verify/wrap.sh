#!/bin/sh
# tests/verify/wrap.sh - the pdtrans golden.sh runs a golden case's cmd
# with: runs $REAL_PDTRANS "$@", and after each transpile that succeeded
# runs `verify job` on its output folder against its MAIN and STARTUP,
# appending one line to $VERIFY_LOG: "CASE|STATUS|OUT|first report line".
# A forward-only MAIN (minimized by the transpile) is compared with the
# transpile's own program stopped after the optimizer pass.
"$REAL_PDTRANS" "$@"
st=$?
[ $st = 0 ] || exit $st
case ${1:-} in
transpile) shift ;;
-*|*.pb|*.pbtxt|*.pdmodel) ;;
*) exit 0 ;;
esac
out= main= startup= next= args=
for a in "$@"; do
    case $next in
    o) out=$a; next=; continue ;;
    s) startup=$a; next=; [ "$a" = - ] && exit 0; continue ;;
    esac
    case $a in
    -o) next=o ;;
    -s) next=s ;;
    --output=*) out=${a#--output=} ;;
    --startup=*) startup=${a#--startup=} ;;
    --stop-after=*|--print-after=*) exit 0 ;;   # not a job
    -) exit 0 ;;                                # MAIN on stdin: nothing to compare with
    -*) args="$args $a" ;;
    *) main=$a ;;
    esac
done
[ -n "$out" ] && [ -n "$main" ] && [ -d "$out" ] || exit 0
v() { "$REAL_PDTRANS" verify job "$out" "$@" >"$out.vj" 2>&1; }
v "$main" ${startup:+"$startup"}
vs=$?
if grep -q "has no optimizer ops" "$out.vj"; then
    # shellcheck disable=SC2086
    "$REAL_PDTRANS" transpile $args --stop-after=optimizer ${startup:+-s "$startup"} "$main" \
        -o "$out.ref" >/dev/null 2>&1 &&
        m=$(ls "$out.ref"/main.pb* | head -1) && s=$(ls "$out.ref"/startup.pb* | head -1) &&
        v "$m" "$s"
    vs=$?
    rm -rf "$out.ref"
fi
# a warning (an async LR schedule's counter offset) is not a report line
grep -v '^pdtrans: warning: ' "$out.vj" >"$out.vjr"
if [ $vs = 0 ] && ! grep -qv ': equal ([0-9]* steps)$' "$out.vjr"; then
    line="equal ($(wc -l <"$out.vjr") parameters)"
else
    line=$(grep -v ': equal (' "$out.vjr" | head -1 | cut -c1-300)
fi
echo "$VERIFY_CASE|$vs|$out|$line" >>"$VERIFY_LOG"
rm -f "$out.vj" "$out.vjr"
# The numeric verify transpile and --symbolic on the same flags (verify
# picks the roles, trainer ids and outputs itself: those flags go); once
# per case and flags: "CASE|NUMERIC STATUS|SYMBOLIC STATUS|FLAGS|messages".
vt=
for a in $args; do
    case $a in
    --text|--binary|-f|--force|--role=*|--trainer-id=*|--endpoint=*|--current-endpoint=*) ;;
    *) vt="$vt $a" ;;
    esac
done
key="$VERIFY_CASE|$vt|$main|$startup"
grep -qxF -- "$key" "$VERIFY_LOG.keys" 2>/dev/null && exit 0
echo "$key" >>"$VERIFY_LOG.keys"
# shellcheck disable=SC2086
"$REAL_PDTRANS" verify transpile $vt "$main" ${startup:+"$startup"} >"$out.num" 2>&1
ns=$?
# shellcheck disable=SC2086
"$REAL_PDTRANS" verify transpile --symbolic $vt "$main" ${startup:+"$startup"} >"$out.sym" 2>&1
ss=$?
echo "$VERIFY_CASE|$ns|$ss|$vt|$(grep -i 'error\|differ\|not modelled' "$out.num" | head -1 | cut -c1-200) ## $(grep -i 'error\|differ\|not modelled' "$out.sym" | head -1 | cut -c1-200)" >>"$VERIFY_LOG.num"
rm -f "$out.num" "$out.sym"
exit 0
