#!/bin/sh
# `make install` puts the binary and the man page under DESTDIR/PREFIX.
set -eu
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
make --no-print-directory install PREFIX=/opt/pdt DESTDIR="$d" >/dev/null
test -x "$d/opt/pdt/bin/pdtrans"
test -f "$d/opt/pdt/share/man/man1/pdtrans.1"
"$d/opt/pdt/bin/pdtrans" --version >/dev/null
echo "install: 1 passed, 0 failed"
