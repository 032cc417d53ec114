#!/bin/sh
# make check-deb: the package make deb builds is the same each time, holds
# what it should, passes lintian without errors, and in a fresh Debian root
# installs with dpkg, works (the same programs as the built binary, byte for
# byte), and is removed and purged by dpkg leaving the root as it was.
set -u
NAME=check-deb
. tests/ship/common.sh
BUILD=${BUILD:-build}
. tests/ship/root.sh
PDTRANS=${PDTRANS:-./pdtrans}
: "${PDTRANS_VERSION:?}"
[ "$(id -u)" = 0 ] || cannot "needs root: it builds a Debian root and enters it with chroot"
# make deb needs dpkg-shlibdeps (dpkg-dev); the test needs lintian.
for t in dpkg-shlibdeps:dpkg-dev lintian:lintian; do
    have_cmd "${t%%:*}" || ship_install "${t#*:}" >/dev/null 2>&1 ||
        cannot "no ${t%%:*} and apt-get could not install ${t#*:}"
done
rm -f "$BUILD"/deb/pdtrans_*.deb
${MAKE:-make} --no-print-directory deb BUILD="$BUILD" || { bad "make deb failed"; finish; exit 1; }
deb=$(ls "$BUILD"/deb/pdtrans_"$PDTRANS_VERSION"-*.deb 2>/dev/null | tail -n 1)
[ -n "$deb" ] || { bad "no $BUILD/deb/pdtrans_$PDTRANS_VERSION-*.deb (make deb)"; finish; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

# 0. The same tree gives the same package, byte for byte.
mkdir "$d/again"
BIN=$PDTRANS COMPLETION_DIR=$BUILD/completion OUT=$d/again sh src/ship/deb.sh >/dev/null &&
    cmp -s "$deb" "$d/again/$(basename "$deb")" && ok || bad "a second make deb gave a different package"

# 1. What the package holds.
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = pdtrans ] && ok || bad "Package is '$(field Package)'"
case $(field Version) in "$PDTRANS_VERSION"-[0-9]*) ok ;; *) bad "Version '$(field Version)' is not $PDTRANS_VERSION-REVISION" ;; esac
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] && ok || bad "Architecture is '$(field Architecture)'"
for f in Maintainer Depends Installed-Size Section Priority Description; do
    [ -n "$(field $f)" ] && ok || bad "the control file has no $f"
done
for lib in libglib2.0-0 libjansson4 libnettle8 libprotobuf-c1 libc6; do
    field Depends | grep -q "$lib" && ok || bad "Depends does not name $lib: $(field Depends)"
done
dpkg-deb -c "$deb" | awk '{print $1, $2, $6}' | grep -v '/$' | LC_ALL=C sort >"$d/list"
cat >"$d/want" <<'LIST'
-rw-r--r-- root/root ./usr/share/bash-completion/completions/pdtrans
-rw-r--r-- root/root ./usr/share/doc/pdtrans/changelog.Debian.gz
-rw-r--r-- root/root ./usr/share/doc/pdtrans/copyright
-rw-r--r-- root/root ./usr/share/man/man1/pdtrans.1.gz
-rw-r--r-- root/root ./usr/share/pdtrans/framework.proto
-rw-r--r-- root/root ./usr/share/zsh/vendor-completions/_pdtrans
-rwxr-xr-x root/root ./usr/bin/pdtrans
LIST
if cmp -s "$d/want" "$d/list"; then ok; else bad "the package's files:"; diff "$d/want" "$d/list"; fi
mkdir "$d/x"
dpkg-deb -x "$deb" "$d/x"
zcat "$d/x/usr/share/man/man1/pdtrans.1.gz" | cmp -s - man/pdtrans.1 && ok || bad "the man page is not man/pdtrans.1"
zcat "$d/x/usr/share/doc/pdtrans/changelog.Debian.gz" | cmp -s - src/ship/deb/changelog && ok ||
    bad "changelog.Debian.gz is not src/ship/deb/changelog"
cmp -s "$d/x/usr/share/pdtrans/framework.proto" proto/framework.proto && ok || bad "framework.proto differs"
if readelf -SW "$d/x/usr/bin/pdtrans" | grep -q '\.debug_'; then bad "the binary is not stripped"; else ok; fi
dpkg-deb --ctrl-tarfile "$deb" | tar -t | grep -q '^./md5sums$' && ok || bad "no md5sums in the control archive"

# 2. lintian: no errors (its warnings are printed).
lintian --fail-on error "$deb" >"$d/lintian" 2>&1; rc=$?
grep -v 'running with root privileges' "$d/lintian" | sed 's/^/  lintian: /'
if [ $rc = 0 ] && ! grep -q '^E:' "$d/lintian"; then ok; else bad "lintian found errors (exit $rc)"; fi

# 3. dpkg in a fresh Debian root.
r=$d/root
make_root "$r"
deps=$(field Depends | sed 's/([^)]*)//g; s/,/ /g')
# shellcheck disable=SC2086
in_root "$r" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $deps >/dev/null" ||
    cannot "apt-get in the fresh root could not install the package's dependencies ($deps)"
root_files "$r" >"$d/before"
cp "$deb" "$r/tmp/pdtrans.deb"
in_root "$r" dpkg -i /tmp/pdtrans.deb >"$d/dpkg.log" 2>&1 && ok || { bad "dpkg -i failed:"; cat "$d/dpkg.log"; }
out=$(in_root "$r" dpkg --verify pdtrans 2>&1) && [ -z "$out" ] && ok || bad "dpkg --verify pdtrans: $out"
[ "$(in_root "$r" pdtrans --version)" = "pdtrans $PDTRANS_VERSION" ] && ok || bad "the installed pdtrans --version is not $PDTRANS_VERSION"
in_root "$r" bash -c '. /usr/share/bash-completion/completions/pdtrans && complete -p pdtrans' >/dev/null 2>&1 && ok ||
    bad "the installed bash completion does not load"
# The installed binary writes what the built one writes.
mkdir -p "$r/tmp/w" "$d/w"
cp testdata/mlp.pbtxt testdata/mlp_startup.pbtxt "$r/tmp/w/"
cp testdata/mlp.pbtxt testdata/mlp_startup.pbtxt "$d/w/"
job='pdtrans minimize --loss=mean_0.tmp_0 --optimizer=momentum:lr=0.01 -s mlp_startup.pbtxt mlp.pbtxt -o train &&
pdtrans transpile -s train/startup.pb --pservers=127.0.0.1:6170,127.0.0.1:6171 --trainers=2 train/main.pb -o all &&
pdtrans check all/trainer_0.pb all/pserver_0.pb all/pserver_1.pb'
in_root "$r" sh -c "cd /tmp/w && $job" >"$r/tmp/w/job.out" 2>&1 && ok || { bad "the installed pdtrans failed:"; cat "$r/tmp/w/job.out"; }
mkdir "$d/bin"
ln -s "$(cd "$(dirname "$PDTRANS")" && pwd)/$(basename "$PDTRANS")" "$d/bin/pdtrans"
(cd "$d/w" && PATH="$d/bin:$PATH" sh -c "$job") >"$d/w/job.out" 2>&1
if diff -r "$d/w" "$r/tmp/w" >"$d/diff"; then ok; else bad "the installed binary's outputs differ:"; head -20 "$d/diff"; fi
in_root "$r" dpkg -r pdtrans >"$d/dpkg.log" 2>&1 && ok || { bad "dpkg -r failed:"; cat "$d/dpkg.log"; }
[ ! -e "$r/usr/bin/pdtrans" ] && [ ! -e "$r/usr/share/pdtrans" ] && ok || bad "dpkg -r left pdtrans's files"
in_root "$r" dpkg -P pdtrans >"$d/dpkg.log" 2>&1 && ok || { bad "dpkg -P failed:"; cat "$d/dpkg.log"; }
in_root "$r" dpkg -s pdtrans >/dev/null 2>&1 && bad "dpkg -s still knows pdtrans after the purge" || ok
rm -rf "$r/tmp/w" "$r/tmp/pdtrans.deb"
root_files "$r" >"$d/after"
if cmp -s "$d/before" "$d/after"; then ok; else bad "install and purge changed the root:"; diff "$d/before" "$d/after" | head -20; fi
finish
