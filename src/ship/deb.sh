#!/bin/sh
# make deb: builds build/deb/pdtrans_VERSION_ARCH.deb with dpkg-deb from the
# built binary, the man page, the completions and framework.proto (see
# src/ship/README.md).  Environment (the Makefile sets it): BIN, COMPLETION_DIR,
# PDTRANS_VERSION, OUT (the folder the package lands in).  The package
# version is the first entry of src/ship/deb/changelog, which must be
# PDTRANS_VERSION-REVISION.  Every file's time is the changelog entry's date,
# so the same tree gives the same package.
set -eu
: "${BIN:?}" "${COMPLETION_DIR:?}" "${PDTRANS_VERSION:?}" "${OUT:?}"
die() { echo "make deb: $*" >&2; exit 1; }
for t in dpkg-deb dpkg-shlibdeps; do
    command -v $t >/dev/null 2>&1 || die "no $t: apt-get install dpkg-dev"
done

head=$(head -n 1 src/ship/deb/changelog)
version=$(printf '%s\n' "$head" | sed -n 's/^pdtrans (\([^)]*\)).*/\1/p')
case $version in
    "$PDTRANS_VERSION"-*) ;;
    *) die "src/ship/deb/changelog's first entry is '$version', but pdtrans is $PDTRANS_VERSION: add an entry for $PDTRANS_VERSION-1" ;;
esac
trailer=$(grep -m 1 '^ -- ' src/ship/deb/changelog)
maintainer=$(printf '%s\n' "$trailer" | sed 's/^ -- \(.*>\)  .*/\1/')
date=$(printf '%s\n' "$trailer" | sed 's/^ -- .*>  //')
SOURCE_DATE_EPOCH=$(date -d "$date" +%s) || die "bad date in src/ship/deb/changelog: $date"
export SOURCE_DATE_EPOCH
arch=$(dpkg --print-architecture)

work=$OUT/work
rm -rf "$work"
root=$work/debian/pdtrans
install -d "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" "$root/usr/share/pdtrans" \
    "$root/usr/share/doc/pdtrans" "$root/usr/share/bash-completion/completions" \
    "$root/usr/share/zsh/vendor-completions"
# Stripped as dh_strip does: the debug info is for a -dbg package, not this one.
install -m 755 "$BIN" "$root/usr/bin/pdtrans"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/pdtrans"
gzip -9n <man/pdtrans.1 >"$root/usr/share/man/man1/pdtrans.1.gz"
install -m 644 proto/framework.proto "$root/usr/share/pdtrans/framework.proto"
install -m 644 "$COMPLETION_DIR/pdtrans.bash" "$root/usr/share/bash-completion/completions/pdtrans"
install -m 644 "$COMPLETION_DIR/_pdtrans" "$root/usr/share/zsh/vendor-completions/_pdtrans"
install -m 644 src/ship/deb/copyright "$root/usr/share/doc/pdtrans/copyright"
gzip -9n <src/ship/deb/changelog >"$root/usr/share/doc/pdtrans/changelog.Debian.gz"
chmod 644 "$root/usr/share/man/man1/pdtrans.1.gz" "$root/usr/share/doc/pdtrans/changelog.Debian.gz"

# The shared libraries' packages, as dpkg-shlibdeps finds them from the
# binary's NEEDED entries and the installed packages' shlibs and symbols.
printf 'Source: pdtrans\n\nPackage: pdtrans\nArchitecture: any\n' >"$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O debian/pdtrans/usr/bin/pdtrans | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependency for $BIN"

(cd "$root" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$root/DEBIAN/md5sums"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@MAINTAINER@/$maintainer/" \
    -e "s/@INSTALLED_SIZE@/$size/" -e "s/@DEPENDS@/$depends/" src/ship/deb/control.in >"$root/DEBIAN/control"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 755 {} +
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

deb=$OUT/pdtrans_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb.tmp" >/dev/null
mv "$deb.tmp" "$deb"
rm -rf "$work"
echo "make deb: $deb"
