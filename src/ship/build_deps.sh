#!/bin/sh
# The Debian packages `make` needs to build pdtrans.  The Makefile runs this
# before the first compile: it prints nothing when all are there, else ONE
# line naming each missing package (with pkg-config's own message for a
# missing library, which names the .pc file it looked for) and the command
# that installs them; the Makefile stops with that line.  With --list it
# prints only the missing packages' names (tests/deps.sh installs them, with
# the test tools).  Run from the repository root.
list=
why=
have_cmd() { command -v "$1" >/dev/null 2>&1; }
missing() { list="$list $1"; why="$why${why:+, }$1 ($2)"; }

have_cmd cc || missing gcc "no cc"
have_cmd protoc-c || missing protobuf-c-compiler "no protoc-c"
have_cmd pkg-config || missing pkg-config "no pkg-config"
for pair in libprotobuf-c:libprotobuf-c-dev glib-2.0:libglib2.0-dev \
            jansson:libjansson-dev nettle:nettle-dev; do
    mod=${pair%%:*} pkg=${pair#*:}
    if have_cmd pkg-config; then
        # pkg-config's last line names the .pc it could not find, or the
        # one another .pc requires (a -dev package whose dependency is gone).
        err=$(pkg-config --print-errors --exists "$mod" 2>&1) ||
            missing "$pkg" "pkg-config: $(printf '%s\n' "$err" | tail -n 1)"
    else
        # Without pkg-config, its default search path on Debian.
        found=
        for pc in /usr/lib/pkgconfig/"$mod".pc /usr/lib/*/pkgconfig/"$mod".pc \
                  /usr/share/pkgconfig/"$mod".pc; do
            [ -e "$pc" ] && found=1
        done
        [ -n "$found" ] || missing "$pkg" "no $mod.pc"
    fi
done

if [ "${1:-}" = --list ]; then
    printf '%s\n' "${list# }"
    exit 0
fi
[ -n "$list" ] || exit 0
if [ "$(id -u)" = 0 ]; then sudo=; else sudo="sudo "; fi
echo "missing build packages: $why; install them with: ${sudo}apt-get install$list (or 'make deps', which installs the test tools too)"
