#!/bin/sh
# Part of make check: `make install` puts the binary, the man page,
# framework.proto and the bash and zsh completions under DESTDIR/PREFIX, the
# installed completions work with the installed binary, and `make uninstall`
# removes every file and every folder install created, and nothing else.
set -u
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "install: FAIL: $*"; fail=$((fail + 1)); }
mk() { make --no-print-directory "$@" >"$d/make.log" 2>&1 || { bad "make $*:"; cat "$d/make.log"; }; }
BUILD=${BUILD:-build}

# 1. into a DESTDIR that does not exist yet
stage=$d/stage
root=$stage/opt/pdt
mk install PREFIX=/opt/pdt DESTDIR="$stage"
[ -x "$root/bin/pdtrans" ] && ok || bad "no executable $root/bin/pdtrans"
"$root/bin/pdtrans" --version >/dev/null 2>&1 && ok || bad "installed pdtrans --version fails"
for f in share/man/man1/pdtrans.1 share/pdtrans/framework.proto \
         share/bash-completion/completions/pdtrans share/zsh/site-functions/_pdtrans; do
    [ -s "$root/$f" ] && ok || bad "make install did not install $f"
done
cmp -s proto/framework.proto "$root/share/pdtrans/framework.proto" && ok ||
    bad "installed framework.proto differs from proto/framework.proto"
if PDTRANS="$root/bin/pdtrans" BASH_COMPLETION="$root/share/bash-completion/completions/pdtrans" \
   ZSH_COMPLETION="$root/share/zsh/site-functions/_pdtrans" sh tests/completion.sh >"$d/c.log" 2>&1
then ok; else bad "the installed completions fail tests/completion.sh:"; cat "$d/c.log"; fi
mk uninstall PREFIX=/opt/pdt DESTDIR="$stage"
if [ -e "$stage" ]; then
    bad "make uninstall left behind:"; find "$stage" | sed 's/^/    /'
else ok; fi

# 2. into a tree that already exists: what was there stays, nothing is added
pre=$d/pre
mkdir -p "$pre/usr/bin" "$pre/usr/share/man"
echo other >"$pre/usr/bin/other"
(cd "$pre" && find . | sort) >"$d/before"
mk install PREFIX=/usr DESTDIR="$pre"
[ -x "$pre/usr/bin/pdtrans" ] && ok || bad "no $pre/usr/bin/pdtrans"
mk install PREFIX=/usr DESTDIR="$pre"   # twice: the record of made folders survives
mk uninstall PREFIX=/usr DESTDIR="$pre"
(cd "$pre" && find . | sort) >"$d/after"
if cmp -s "$d/before" "$d/after"; then ok; else
    bad "install + uninstall changed an existing tree:"; diff "$d/before" "$d/after"; fi
echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
