#!/bin/sh
# make check-build-deps: `make` on a machine without a build package stops
# before compiling anything, with one line that names the missing Debian
# package (for a library with pkg-config's own message) and the apt-get
# command; never with a compiler's "glib.h: No such file".  Missing tools
# are made by a PATH of links to every command but the one taken away;
# missing libraries by an empty PKG_CONFIG_LIBDIR.
set -u
NAME=check-build-deps
. tests/ship/common.sh
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

# without TOOL...: a folder of links to every command on PATH but TOOL.
without() {
    rm -rf "$d/bin"; mkdir "$d/bin"
    IFS=:; for dir in $PATH; do
        for f in "$dir"/*; do
            n=${f##*/}
            [ -x "$f" ] && [ ! -e "$d/bin/$n" ] && ln -s "$f" "$d/bin/$n"
        done
    done; unset IFS
    for t in "$@"; do rm -f "$d/bin/$t"; done
}
# stops CASE PKG WHY ENV...: make with ENV must stop with one line naming PKG
# and WHY and the apt-get command, having compiled nothing.
stops() {
    case_=$1 pkg=$2 why=$3; shift 3
    rm -rf "$d/build"
    # (a parent make -jN passes its jobserver in MAKEFLAGS: the inner make
    # would warn about it, a second line)
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$@" make --no-print-directory BUILD="$d/build" "$d/build/libpdtrans.a" >"$d/out" 2>"$d/err"; rc=$?
    lines=$(cat "$d/out" "$d/err" | wc -l)
    if [ $rc != 0 ] && [ "$lines" = 1 ] && grep -q "missing build packages: .*$pkg ($why" "$d/err" &&
       grep -q "install them with: \(sudo \)\?apt-get install .*$pkg" "$d/err" && [ ! -e "$d/build" ]
    then ok
    else bad "$case_: make exited $rc and printed:"; cat "$d/out" "$d/err"; fi
}
stops "no GLib" libglib2.0-dev "pkg-config: Package 'glib-2.0', required by 'virtual:world', not found" \
    PKG_CONFIG_LIBDIR=/nonexistent
stops "no protoc-c" protobuf-c-compiler "no protoc-c" PATH="$(without protoc-c; echo "$d/bin")"
stops "no pkg-config" pkg-config "no pkg-config" PATH="$(without pkg-config; echo "$d/bin")"
[ -z "$(sh src/ship/build_deps.sh --list)" ] && ok || bad "build_deps.sh --list names packages this build has"
[ -z "$(sh src/ship/build_deps.sh)" ] && ok || bad "build_deps.sh complains on a machine that builds"
finish
