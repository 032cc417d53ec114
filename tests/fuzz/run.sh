#!/bin/sh
# Coverage-guided fuzzing of the reader and writer (`make fuzz`; not part of
# `make check`).  Builds tests/fuzz/fuzz_*.c with clang and libFuzzer under
# ASan and UBSan against the library sources, seeds a corpus and runs each
# target for FUZZ_SECONDS seconds.  Exits 1 on a crash, a leak or a
# round-trip mismatch (printing the reproducer's path), 0 otherwise.
#
#   sh tests/fuzz/run.sh                   fuzz every target
#   sh tests/fuzz/run.sh --repro FILE...   run every target once on FILEs
#
# Environment:
#   FUZZ_SECONDS  seconds per target (default 60)
#   FUZZ_TARGETS  which targets (default "read text")
#   FUZZ_MAX_LEN  largest generated input in bytes (default 131072; larger
#                 seeds are truncated by libFuzzer)
#   FUZZ_JOBS     >1: libFuzzer -fork=N worker processes (default 1)
#   FUZZ_FLAGS    extra libFuzzer flags
#   FUZZ_CFLAGS   extra compiler flags (e.g. -fno-sanitize=nonnull-attribute
#                 to look past a known finding)
#   PDT_FUZZ_STRICT=1  also check the promises with documented exceptions
#                 (text form packs to the binary form; binary form equals
#                 protobuf-c's own repacking): see tests/fuzz/fuzz_common.h
#   FUZZ_ARENA=malloc  link tests/fuzz/arena_malloc.c instead of
#                 src/ir/arena.c: one malloc per arena allocation, so ASan
#                 also catches overflows inside the IR's arenas (slower)
#   CLANG         the compiler (default clang)
#
# Installs clang (and the libFuzzer runtime, libclang-rt-N-dev) from Debian
# when missing.  Everything it writes is under build/fuzz/: the corpus it
# grows (corpus/TARGET, kept between runs), the seeds (seeds/TARGET),
# reproducers (artifacts/TARGET/crash-*, leak-*, timeout-*, oom-*) and logs.
set -u
cd "$(dirname "$0")/../.." || exit 2
SECONDS_PER=${FUZZ_SECONDS:-60}
TARGETS=${FUZZ_TARGETS:-read text}
MAX_LEN=${FUZZ_MAX_LEN:-131072}
JOBS=${FUZZ_JOBS:-1}
CLANG=${CLANG:-clang}
OUT=build/fuzz
real=../shared/testdata-real

say() { echo "fuzz: $*"; }
die() { echo "fuzz: error: $*" >&2; exit 2; }

apt_install() {
    if [ "$(id -u)" != 0 ]; then SUDO=sudo; else SUDO=; fi
    say "installing: $*"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -qq || return 1
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

# ---- toolchain ------------------------------------------------------------

if ! command -v "$CLANG" >/dev/null 2>&1; then
    apt_install clang || die "cannot install clang"
    command -v "$CLANG" >/dev/null 2>&1 || die "'$CLANG' still not found"
fi
mkdir -p "$OUT" || exit 2
probe() {
    printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
        >"$OUT/probe.c"
    "$CLANG" -fsanitize=fuzzer,address,undefined -o "$OUT/probe" "$OUT/probe.c" 2>"$OUT/probe.err"
}
if ! probe; then
    # Debian's clang-N only recommends libclang-rt-N-dev, which holds
    # libclang_rt.fuzzer*.a and the sanitizer runtimes.
    major=$("$CLANG" -dumpversion | cut -d. -f1)
    apt_install "libclang-rt-$major-dev" || apt_install libclang-rt-dev ||
        die "cannot install the libFuzzer runtime (libclang-rt-$major-dev)"
    probe || { cat "$OUT/probe.err" >&2; die "$CLANG cannot build with -fsanitize=fuzzer"; }
fi

# ---- build ----------------------------------------------------------------

${MAKE:-make} --no-print-directory BUILD=build build/gen/framework.pb-c.c >/dev/null ||
    die "cannot generate build/gen/framework.pb-c.c (run 'make deps')"
PKG_CFLAGS=$(pkg-config --cflags libprotobuf-c glib-2.0 jansson) || die "pkg-config failed (run 'make deps')"
PKG_LIBS=$(pkg-config --libs libprotobuf-c glib-2.0 jansson)
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CFLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -Wall -Wextra $SAN -Ibuild/gen -Isrc $PKG_CFLAGS ${FUZZ_CFLAGS:-}"
say "building with $("$CLANG" --version | head -1)"
srcs="$(ls src/*.c src/*/*.c | grep -v '^src/main\.c$') build/gen/framework.pb-c.c"
BIN=$OUT/bin
if [ "${FUZZ_ARENA:-}" = malloc ]; then
    srcs="$(echo "$srcs" | grep -v '^src/ir/arena\.c$') tests/fuzz/arena_malloc.c"
    BIN=$OUT/bin-malloc-arena
fi
mkdir -p "$BIN/obj" || exit 2
obj_of() { echo "$BIN/obj/$(echo "$1" | sed 's|^src/||; s|^build/gen/||; s|^tests/fuzz/||; s|/|_|g; s|\.c$|.o|')"; }
objs=
for s in $srcs; do objs="$objs $(obj_of "$s")"; done
# Library objects get coverage instrumentation only (fuzzer-no-link), in
# parallel.
for s in $srcs; do echo "$s $(obj_of "$s")"; done |
    xargs -P "$(nproc 2>/dev/null || echo 2)" -n 2 sh -c \
        "exec $CLANG $CFLAGS -fsanitize=fuzzer-no-link -c -o \"\$2\" \"\$1\"" sh ||
    die "compiling the library failed"
for t in $TARGETS; do
    [ -f "tests/fuzz/fuzz_$t.c" ] || die "no target tests/fuzz/fuzz_$t.c"
    # shellcheck disable=SC2086
    "$CLANG" $CFLAGS -Werror -fsanitize=fuzzer -o "$BIN/fuzz_$t" "tests/fuzz/fuzz_$t.c" \
        $objs $PKG_LIBS -lm || die "building fuzz_$t failed"
done

# ---- reproduce mode -------------------------------------------------------

if [ "${1:-}" = --repro ]; then
    shift
    [ $# -gt 0 ] || die "--repro needs files"
    status=0
    for f in "$@"; do
        for t in $TARGETS; do
            if "$BIN/fuzz_$t" -runs=1 "$f" >"$OUT/repro.log" 2>&1; then
                say "ok   fuzz_$t $f"
            else
                status=1
                say "FAIL fuzz_$t $f"
                grep -E '^(fuzz: |pdtrans: |  (first|second) |.*runtime error|==[0-9]+==ERROR)' \
                    "$OUT/repro.log" | sed 's/^/    /'
            fi
        done
    done
    exit $status
fi

# ---- seeds ----------------------------------------------------------------

# read: every seed as is, plus the binary form of the text seeds (protoc
# --encode); text: the text seeds, plus the text form of the real binary
# programs (protoc --decode).
rm -rf "$OUT/seeds"
mkdir -p "$OUT/seeds/read" "$OUT/seeds/text"
have_protoc=false
command -v protoc >/dev/null 2>&1 && have_protoc=true
n=0
for f in testdata/*.pbtxt tests/golden/*/in/* "$real"/*.pdmodel; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    name=$n-$(basename "$f")
    cp "$f" "$OUT/seeds/read/$name"
    case $f in
    *.pdmodel)
        $have_protoc && protoc --proto_path=proto --decode=paddle.framework.proto.ProgramDesc \
            proto/framework.proto <"$f" >"$OUT/seeds/text/$name.pbtxt" 2>/dev/null ||
            rm -f "$OUT/seeds/text/$name.pbtxt"
        ;;
    *)
        cp "$f" "$OUT/seeds/text/$name"
        $have_protoc && protoc --proto_path=proto --encode=paddle.framework.proto.ProgramDesc \
            proto/framework.proto <"$f" >"$OUT/seeds/read/$name.pb" 2>/dev/null ||
            rm -f "$OUT/seeds/read/$name.pb"
        ;;
    esac
done
[ -d "$real" ] || say "note: $real absent; seeding from testdata/ and tests/golden/ only"

# A dictionary for the text target: field names and enum values of the
# schema, and the text format's punctuation and literals.
{
    sed -n 's/^[[:space:]]*\(optional\|required\|repeated\)[[:space:]]\{1,\}[A-Za-z0-9_.]\{1,\}[[:space:]]\{1,\}\([a-z_0-9]\{1,\}\)[[:space:]]*=.*/"\2"/p' proto/framework.proto
    sed -n 's/^[[:space:]]*\([A-Z][A-Z0-9_]*\)[[:space:]]*=.*/"\1"/p' proto/framework.proto
    cat <<'DICT'
"{"
"}"
"<"
">"
":"
"["
"]"
","
";"
"#"
"\""
"'"
"\\"
"\\n"
"\\t"
"\\000"
"\\x"
"\\377"
"\\\""
"0x"
"-"
"."
"e+"
"e-"
"inf"
"-inf"
"nan"
"true"
"false"
"True"
"False"
DICT
} | sort -u >"$OUT/text.dict"

# ---- fuzz -----------------------------------------------------------------

status=0
for t in $TARGETS; do
    mkdir -p "$OUT/corpus/$t" "$OUT/artifacts/$t"
    log=$OUT/fuzz_$t.log
    dict=
    [ "$t" = text ] && dict=-dict=$OUT/text.dict
    fork=
    [ "$JOBS" -gt 1 ] 2>/dev/null && fork=-fork=$JOBS
    say "fuzz_$t: ${SECONDS_PER}s, corpus $OUT/corpus/$t, log $log"
    # shellcheck disable=SC2086
    "$BIN/fuzz_$t" -max_total_time="$SECONDS_PER" -max_len="$MAX_LEN" -timeout=25 \
        -rss_limit_mb=2048 -print_final_stats=1 $dict $fork ${FUZZ_FLAGS:-} \
        -artifact_prefix="$OUT/artifacts/$t/" "$OUT/corpus/$t" "$OUT/seeds/$t" >"$log" 2>&1
    rc=$?
    grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb)' "$log" | sed "s/^/fuzz: fuzz_$t: /"
    if [ $rc -ne 0 ]; then
        status=1
        grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz: |.*runtime error)' "$log" | head -5 | sed "s/^/fuzz: fuzz_$t: /"
        repro=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        echo "fuzz: FAIL fuzz_$t exited with status $rc (log: $log)"
        if [ -n "$repro" ]; then
            echo "fuzz: reproducer: $repro"
            echo "fuzz: rerun: $BIN/fuzz_$t $repro    (minimise: add -minimize_crash=1 -runs=100000)"
        fi
    else
        say "fuzz_$t: ok"
    fi
done
exit $status
