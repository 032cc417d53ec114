#!/bin/sh
# make check-static: the static pdtrans (make static) runs in an empty root,
# a folder holding only the binary, its inputs and an empty /tmp (which
# must stay empty: verify transpile runs in memory), entered with chroot, and
# writes the very bytes the dynamic pdtrans writes: the same commands
# (minimize, transpile --role=all, check, dump, convert --text, verify
# transpile, and three refused inputs) give byte-identical files, standard
# output, standard error and exit status.
set -u
NAME=check-static
. tests/ship/common.sh
BUILD=${BUILD:-build}
STATIC=${STATIC:-$BUILD/static/pdtrans}
PDTRANS=${PDTRANS:-./pdtrans}
[ -x "$STATIC" ] || { bad "no $STATIC (make static)"; finish; exit 1; }
CHROOT=$(chroot_cmd) || cannot "chroot needs root or user namespaces (unshare -r)"

# A static ELF has no program interpreter and needs no shared library.
if readelf -lW "$STATIC" | grep -q INTERP; then bad "$STATIC has a program interpreter"; else ok; fi
if readelf -dW "$STATIC" | grep -q NEEDED; then
    bad "$STATIC needs shared libraries:"; readelf -dW "$STATIC" | grep NEEDED
else ok; fi

d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
for w in static dynamic; do
    mkdir -p "$d/$w/root" "$d/$w/res"
    cp testdata/mlp.pbtxt testdata/mlp_startup.pbtxt "$d/$w/root/"
done
cp "$STATIC" "$d/static/root/pdtrans"
mkdir -m 1777 "$d/static/root/tmp"
cp "$PDTRANS" "$d/dynamic/root/pdtrans"
[ "$(cd "$d/static/root" && ls)" = "mlp.pbtxt
mlp_startup.pbtxt
pdtrans
tmp" ] && ok || bad "the root holds more than the binary, its inputs and /tmp"

# run N ARGS...: pdtrans ARGS in both roots, both as ./pdtrans from the
# root's top (chroot starts there), so that paths and argv[0] agree.
run() {
    n=$1; shift
    $CHROOT "$d/static/root" ./pdtrans "$@" >"$d/static/res/$n.out" 2>"$d/static/res/$n.err"
    echo $? >"$d/static/res/$n.rc"
    (cd "$d/dynamic/root" && ./pdtrans "$@") >"$d/dynamic/res/$n.out" 2>"$d/dynamic/res/$n.err"
    echo $? >"$d/dynamic/res/$n.rc"
}
run 01 --version
run 02 minimize --loss=mean_0.tmp_0 --optimizer=momentum:lr=0.01 -s mlp_startup.pbtxt mlp.pbtxt -o train
run 03 transpile -s train/startup.pb --pservers=127.0.0.1:6170,127.0.0.1:6171 --trainers=2 \
    train/main.pb -o all
run 04 check train/main.pb all/trainer_0.pb all/pserver_0.pb all/pserver_1.pb all/pserver_1.startup.pb
run 05 dump --ops all/pserver_0.pb
run 06 convert --text all/trainer_0.pb all/trainer_0.pbtxt
run 07 verify transpile train/main.pb train/startup.pb --pservers=127.0.0.1:6170,127.0.0.1:6171 --trainers=2
run 08 transpile --split-method=roundrobin --pservers=127.0.0.1:6170 train/main.pb -o bad
run 09 check nope.pb
run 10 minimize --loss=mean_0.tmp_0 --optimizer=momentum:lr=0.01 mlp_startup.pbtxt -o bad

# The runs did what they should (so that equal outputs mean something) ...
for n in 01 02 03 04 05 06 07; do
    [ "$(cat "$d/static/res/$n.rc")" = 0 ] && ok || {
        bad "static run $n exited $(cat "$d/static/res/$n.rc"):"; cat "$d/static/res/$n.err"; }
done
[ "$(cat "$d/static/res/08.rc")" = 2 ] && ok || bad "a bad --split-method did not exit 2"
[ "$(cat "$d/static/res/09.rc")" = 1 ] && ok || bad "check of a missing file did not exit 1"
[ "$(cat "$d/static/res/10.rc")" = 1 ] && ok || bad "minimize without the loss var did not exit 1"
for f in train/main.pb all/manifest.json all/pserver_1.startup.pb all/trainer_0.pbtxt; do
    [ -s "$d/static/root/$f" ] && ok || bad "the static run wrote no $f"
done
[ "$(cat "$d/static/res/01.out")" = "pdtrans ${PDTRANS_VERSION:?}" ] && ok ||
    bad "--version printed '$(cat "$d/static/res/01.out")', not 'pdtrans $PDTRANS_VERSION' (the Makefile's)"
# ... and the static and the dynamic binary agree byte for byte.
rmdir "$d/static/root/tmp" && ok || bad "verify transpile left files in the root's /tmp"
rm "$d/static/root/pdtrans" "$d/dynamic/root/pdtrans"
if diff -r "$d/dynamic/root" "$d/static/root" >"$d/diff" && diff -r "$d/dynamic/res" "$d/static/res" >>"$d/diff"
then ok; else bad "the static binary's outputs differ from the dynamic one's:"; head -40 "$d/diff"; fi
echo "$NAME: $(find "$d/static/root" -type f | wc -l) files and $(ls "$d/static/res" | wc -l) streams compared"
finish
