#!/bin/sh
# make check-setup: the README's "Set up" commands, exactly as written and in
# that order, work on a fresh Debian machine: a clean clone of this
# repository's HEAD (committed work only) in a fresh Debian root (minbase
# plus sudo, tests/ship/root.sh), run by a user "dev" who may use sudo, as
# on a new developer's machine.  Each command must exit 0; after the build
# ./pdtrans must run, after make demo its job folder must hold the programs,
# after make install the installed pdtrans must run, after make uninstall it
# must be gone.  The README's block is the first indented block of its
# "## Set up" section.
#
# What it proves, and why it takes 30 to 60 minutes: the README promises
# that these commands, make check included, work on a fresh machine, so
# make check runs whole (unit, golden, fuzz smoke, ...), not a cut-down
# suite; it skips only the ship tests (no Debian root inside a Debian
# root: the outer run is the ship test), saying so, and the tests that
# read ../shared, which a clone does not have (the project's real programs
# live beside the repository).  Any other skip (clang, protoc, zsh) means
# make deps missed a package the README lists, and fails here.
set -u
NAME=check-setup
. tests/ship/common.sh
BUILD=${BUILD:-build}
. tests/ship/root.sh
[ "$(id -u)" = 0 ] || cannot "needs root: it builds a Debian root and enters it with chroot"
have_cmd git || cannot "no git to clone the repository with"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

r=$d/root
make_root "$r"
in_root "$r" useradd -m -s /bin/sh dev || { bad "useradd dev failed"; finish; exit 1; }
echo 'dev ALL=(ALL) NOPASSWD: ALL' >"$r/etc/sudoers.d/dev"
chmod 440 "$r/etc/sudoers.d/dev"
git clone -q --no-hardlinks "$(git rev-parse --show-toplevel)" "$r/home/dev/pdtrans" ||
    { bad "git clone failed"; finish; exit 1; }
echo "$NAME: a clone of $(git -C "$r/home/dev/pdtrans" log -1 --format='%h %s' | cut -c 1-70)"
rm -rf "$r/home/dev/pdtrans/.git/hooks"
awk '/^## Set up/ {s = 1; next} s && /^## / {exit}
     s && /^    / {b = 1; print substr($0, 5); next} s && b {exit}' "$r/home/dev/pdtrans/README.md" >"$d/commands"
[ -s "$d/commands" ] || { bad "README.md's Set up section has no command block"; finish; exit 1; }
grep -q '^make check' "$d/commands" && grep -q '^make *\(#\|$\)' "$d/commands" && ok ||
    bad "the Set up block has no 'make' or no 'make check'"
in_root "$r" chown -R dev:dev /home/dev/pdtrans

# as_dev CMD: CMD as dev from the clone, with a login-like environment;
# PDTRANS_SETUP_TEST tells the nested make check to skip the ship tests.
as_dev() {
    in_root "$r" setpriv --reuid=dev --regid=dev --init-groups env -i HOME=/home/dev USER=dev \
        LOGNAME=dev PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 PDTRANS_SETUP_TEST=1 \
        sh -c "cd /home/dev/pdtrans && $1"
}
n=0
while IFS= read -r line; do
    n=$((n + 1))
    start=$(date +%s)
    as_dev "$line" </dev/null >"$d/$n.log" 2>&1; rc=$?
    if [ $rc = 0 ]; then
        ok; echo "$NAME: ok ($(($(date +%s) - start)) s): $line"
    else
        bad "exit $rc: $line"; tail -n 40 "$d/$n.log"
        break
    fi
    grep -E '^[a-z-]+: [0-9]+ passed, [0-9]+ failed|skipped' "$d/$n.log" | sed 's/^/    /'
    cmd=$(printf '%s\n' "$line" | sed 's/ *#.*//')
    case $cmd in
    make) as_dev "./pdtrans --version" >/dev/null 2>&1 && ok || bad "after 'make' ./pdtrans does not run" ;;
    "make check")
        f=$r/home/dev/pdtrans/build/skipped.txt
        if [ ! -f "$f" ]; then bad "make check wrote no build/skipped.txt"
        else
            other=$(grep -v -F '../shared absent' "$f")
            [ -z "$other" ] && ok || bad "make check skipped more than the ../shared tests: $other"
        fi ;;
    "make demo") [ -s "$r/home/dev/pdtrans/build/demo/all/pserver_1.pb" ] && ok ||
        bad "after make demo there is no build/demo/all/pserver_1.pb" ;;
    "sudo make install") [ "$(as_dev "pdtrans --version")" = "$(as_dev "./pdtrans --version")" ] && ok ||
        bad "after make install no pdtrans on PATH runs" ;;
    "sudo make uninstall") [ ! -e "$r/usr/local/bin/pdtrans" ] && ok || bad "make uninstall left /usr/local/bin/pdtrans" ;;
    esac
done <"$d/commands"
[ "$n" = "$(wc -l <"$d/commands")" ] || bad "stopped after command $n of $(wc -l <"$d/commands")"
finish
