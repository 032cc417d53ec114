# Sourced by the ship tests (static.sh, deb.sh, setup.sh).  NAME is the
# test's name.  `make check` sets SHIP_IN_CHECK=1: a test that cannot run
# here then prints one line saying why and exits 0; run as its own target
# (make check-static, check-deb, check-setup) it fails instead, so that a
# skip is never taken for a pass.
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "$NAME: FAIL: $*"; fail=$((fail + 1)); }
finish() { echo "$NAME: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; }
cannot() {
    if [ "${SHIP_IN_CHECK:-0}" = 1 ]; then echo "$NAME: skipped: $*"; exit 0; fi
    echo "$NAME: cannot run: $*" >&2
    exit 1
}
have_cmd() { command -v "$1" >/dev/null 2>&1; }

# How to enter a root folder: as root, chroot; else a user namespace in
# which this user is root (unshare -r), where the kernel allows it.
chroot_cmd() {
    if [ "$(id -u)" = 0 ]; then echo chroot
    elif unshare -r true 2>/dev/null; then echo "unshare -r chroot"
    else return 1; fi
}

# ship_install PKG...: installs the Debian packages a ship test needs, as
# tests/deps.sh does (apt-get, with sudo when not root).
ship_install() {
    if [ "$(id -u)" != 0 ]; then sudo=sudo; else sudo=; fi
    echo "$NAME: installing: $*"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}
