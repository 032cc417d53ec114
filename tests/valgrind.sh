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
for f in ../shared/testdata-real/fit_a_line.pdmodel ../shared/testdata-real/fl_server_main_subblocks.pdmodel; do
    [ -f "$f" ] || continue
    $VG "$PDTRANS" convert "$f" "$tmp/y.pb" 2>"$tmp/err" || { echo "valgrind: FAIL convert $f"; cat "$tmp/err"; fail=1; }
done
[ $fail = 0 ] && echo "valgrind: clean"
exit $fail
