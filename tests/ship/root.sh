# Sourced by deb.sh and setup.sh after common.sh: a fresh Debian root in a
# temporary folder, and a way to run commands in it.
#
# The root is mmdebstrap's minbase of the host's Debian release plus sudo,
# built from the Debian mirror apt uses, once, into $BUILD/ship/debian-root.tar
# (about 3 minutes; make clean removes it); each test unpacks a fresh copy,
# adding only the host's resolv.conf and /dev/ptmx as a link into its devpts.
# mmdebstrap makes the root's device nodes itself (mknod, inside the folder).
# Commands run under chroot in a mount namespace of their own (unshare
# --mount) that has the root's /proc and a new instance of devpts (its own
# terminals) mounted: the mounts go away with the namespace, and nothing
# outside the folder is changed.
ROOT_TAR=${BUILD:-build}/ship/debian-root.tar

make_root() {
    [ "$(id -u)" = 0 ] || cannot "building and entering a Debian root needs root"
    have_cmd unshare || cannot "no unshare (util-linux)"
    have_cmd mmdebstrap || ship_install mmdebstrap >/dev/null 2>&1 ||
        cannot "no mmdebstrap and apt-get could not install it"
    if [ ! -s "$ROOT_TAR" ]; then
        suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
        [ -n "$suite" ] || cannot "/etc/os-release names no Debian release"
        mkdir -p "$(dirname "$ROOT_TAR")"
        echo "$NAME: building a fresh Debian $suite root with mmdebstrap (once; kept in $ROOT_TAR)"
        if ! mmdebstrap --variant=minbase --include=sudo "$suite" "$ROOT_TAR.tmp.tar" \
             >"$ROOT_TAR.log" 2>&1; then
            rm -f "$ROOT_TAR.tmp.tar"
            cannot "mmdebstrap could not build a Debian $suite root (is the Debian mirror reachable?): $(tail -n 1 "$ROOT_TAR.log")"
        fi
        mv "$ROOT_TAR.tmp.tar" "$ROOT_TAR"
    fi
    mkdir -p "$1"
    tar -C "$1" -xf "$ROOT_TAR"
    cp /etc/resolv.conf "$1/etc/resolv.conf"
    # Terminals come from the root's own devpts (in_root): make check's zsh
    # completion test types into one (zpty), and so does dpkg for its log.
    rm -f "$1/dev/ptmx"
    ln -s pts/ptmx "$1/dev/ptmx"
}

# in_root ROOT CMD ARGS...: runs CMD in ROOT, as root, from /.
in_root() {
    unshare --mount --fork sh -c 'mount -t proc proc "$0/proc" &&
        mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts "$0/dev/pts" &&
        exec chroot "$0" "$@"' "$@"
}

# root_files ROOT: every path in ROOT with its type, mode and owner, less what a package's install and removal rightly
# change: dpkg's and apt's records, logs and caches, /proc, /tmp.
root_files() {
    (cd "$1" && find . -xdev \( -path ./proc -o -path ./tmp -o -path ./var/lib/dpkg \
        -o -path ./var/log -o -path ./var/cache -o -path ./var/lib/apt \) -prune -o \
        -printf '%y %m %u %p\n' | LC_ALL=C sort)
}
