#!/bin/sh
# Installs the Debian packages the build and tests need, if any is missing.
set -e
# The build's own packages come from src/ship/build_deps.sh, which make runs too.
need=" $(sh src/ship/build_deps.sh --list)"
need=${need% }
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pc() { pkg-config --exists "$1" 2>/dev/null; }
have_cmd make || need="$need make"
have_cmd protoc || need="$need protobuf-compiler"
have_cmd mandoc || need="$need mandoc"
have_cmd bc || need="$need bc"
have_cmd col || need="$need bsdextrautils"   # tests/check_demo.sh reads the man page with col
have_cmd jq || need="$need jq"
have_cmd python3 || need="$need python3"
have_cmd zsh || need="$need zsh"
# clang and its libFuzzer runtime: make check's fuzz smoke step.
# (Debian's clang only recommends libclang-rt-dev, which holds libFuzzer.)
have_cmd clang || need="$need clang"
dpkg-query -W -f='${Status}' libclang-rt-dev 2>/dev/null | grep -q 'ok installed' ||
    need="$need libclang-rt-dev"
have_pc check || need="$need check"
[ -n "$need" ] || exit 0
echo "deps: installing:$need"
if [ "$(id -u)" != 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $need >/dev/null
