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
if [ $vs = 0 ] && ! grep -qv ': equal ([0-9]* steps)$' "$out.vj"; then
    line="equal ($(wc -l <"$out.vj") parameters)"
else
    line=$(grep -v ': equal (' "$out.vj" | head -1 | cut -c1-300)
fi
echo "$VERIFY_CASE|$vs|$out|$line" >>"$VERIFY_LOG"
rm -f "$out.vj"
exit 0
