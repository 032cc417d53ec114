#!/bin/sh
# Installs the Debian packages the build and tests need, if any is missing.
set -e
need=""
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pc() { pkg-config --exists "$1" 2>/dev/null; }
have_cmd cc || need="$need gcc"
have_cmd make || need="$need make"
have_cmd pkg-config || need="$need pkg-config"
have_cmd protoc-c || need="$need protobuf-c-compiler"
have_cmd protoc || need="$need protobuf-compiler"
have_cmd mandoc || need="$need mandoc"
have_cmd bc || need="$need bc"
have_cmd jq || need="$need jq"
have_cmd python3 || need="$need python3"
have_cmd zsh || need="$need zsh"
have_pc libprotobuf-c || need="$need libprotobuf-c-dev"
have_pc glib-2.0 || need="$need libglib2.0-dev"
have_pc jansson || need="$need libjansson-dev"
have_pc nettle || need="$need nettle-dev"
have_pc check || need="$need check"
[ -n "$need" ] || exit 0
echo "deps: installing:$need"
if [ "$(id -u)" != 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq $need >/dev/null
