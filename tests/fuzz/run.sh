#!/bin/sh
# Coverage-guided fuzzing (`make fuzz`, `make fuzz-smoke`).  Builds
# tests/fuzz/fuzz_*.c with clang and libFuzzer under ASan and UBSan against
# the library sources, seeds a corpus and runs each target for FUZZ_SECONDS
# seconds.  Exits 1 on a crash, a leak, a round-trip mismatch or a failed
# command that left output (printing the reproducer's path), 0 otherwise.
#
#   sh tests/fuzz/run.sh                   fuzz every target, one at a time
#   sh tests/fuzz/run.sh --smoke           every target on a fresh corpus
#                                          (seeds only), FUZZ_SMOKE_JOBS
#                                          (default 4) at a time, for
#                                          FUZZ_SECONDS (default 30) each
#   sh tests/fuzz/run.sh --available       exit 0 if clang can build
#                                          libFuzzer targets (installs nothing)
#   sh tests/fuzz/run.sh --repro FILE...   run every target once on FILEs
#
# Targets (tests/fuzz/fuzz_NAME.c): read, text (the readers); backward
# (backward and gradients), minimize, transpile_sync, transpile_async,
# transpile_table, transpile_nccl2, transpile_collective, check, roundtrip
# (the text round trip), params (parameter records), diff (src/diff on a
# program against itself and against itself less an op), memory
# (memory-optimize and release-memory), verify (verify rewrite, grad and
# transpile on the reference executor), fromenv (transpile --from-env with
# hostile launcher variables; its own line-structured mutator), inference
# (inference --params end to end: a program and its parameter files in one
# input, both mutated by structure, fuzz_inference.c).  All but
# read, text, params and fromenv use the structure-aware
# mutator of fuzz_mutator.h.  See tests/fuzz/README.md.
#
# Environment:
#   FUZZ_SECONDS  seconds per target (default 60; --smoke: 30)
#   FUZZ_TARGETS  which targets (default: all of the above)
#   FUZZ_MAX_LEN  largest generated input in bytes (default 131072 for read
#                 and text, 4194304 for the pipeline targets, so the real
#                 training programs load whole)
#   FUZZ_JOBS     >1: libFuzzer -fork=N worker processes (default 1)
#   FUZZ_SMOKE_JOBS  --smoke: targets run at once (default 4)
#   FUZZ_SEED     libFuzzer's -seed (default: --smoke 1, so make check
#                 tries the same inputs in the same order on every machine
#                 and a finding there is reproducible; fuzzing: random)
#   FUZZ_SMOKE_RUNS  --smoke: at most this many inputs per target (default
#                 2000, -runs), so a fast machine tries no input that a
#                 run here with enough FUZZ_SECONDS did not
#   FUZZ_FLAGS    extra libFuzzer flags
#   FUZZ_CFLAGS   extra compiler flags (e.g. -fno-sanitize=nonnull-attribute
#                 to look past a known finding; `rm -rf build/fuzz/bin`
#                 after changing them: objects are rebuilt only when a
#                 source or header is newer)
#   PDT_FUZZ_STRICT=1  also check the promises with documented exceptions
#                 (text form packs to the binary form; binary form equals
#                 protobuf-c's own repacking): see tests/fuzz/fuzz_common.h
#   FUZZ_ARENA=malloc  link tests/fuzz/arena_malloc.c instead of
#                 src/ir/arena.c: one malloc per arena allocation, so ASan
#                 also catches overflows inside the IR's arenas (slower)
#   FUZZ_VERBOSE=1  the pipeline targets print pdtrans's messages
#   FUZZ_OUT      where everything goes (default build/fuzz; a long run
#                 beside smoke runs wants its own, e.g. build/fuzz-long)
#   CLANG         the compiler (default clang)
#
# Without --smoke or --available, installs clang (and the libFuzzer
# runtime, libclang-rt-N-dev) from Debian when missing.  Everything it
# writes is under build/fuzz/: the corpus it grows (corpus/TARGET, kept
# between runs), the seeds (seeds/TARGET), reproducers
# (artifacts/TARGET/crash-*, leak-*, timeout-*, oom-*) and logs.
set -u
cd "$(dirname "$0")/../.." || exit 2
MODE=fuzz
case ${1:-} in
--smoke) MODE=smoke; shift ;;
--available) MODE=available; shift ;;
--repro) MODE=repro ;;
esac
ALL_TARGETS="read text backward minimize transpile_sync transpile_async transpile_table transpile_nccl2 transpile_collective check roundtrip params diff memory verify fromenv inference"
if [ $MODE = smoke ]; then SECONDS_PER=${FUZZ_SECONDS:-30}; else SECONDS_PER=${FUZZ_SECONDS:-60}; fi
TARGETS=${FUZZ_TARGETS:-$ALL_TARGETS}
JOBS=${FUZZ_JOBS:-1}
CLANG=${CLANG:-clang}
OUT=${FUZZ_OUT:-build/fuzz}
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

if [ $MODE = available ]; then
    command -v "$CLANG" >/dev/null 2>&1 || exit 1
    d=$(mktemp -d) || exit 1
    printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
        >"$d/probe.c"
    "$CLANG" -fsanitize=fuzzer,address,undefined -o "$d/probe" "$d/probe.c" 2>/dev/null
    rc=$?
    rm -rf "$d"
    exit $rc
fi
if ! command -v "$CLANG" >/dev/null 2>&1; then
    [ $MODE = smoke ] && die "'$CLANG' not found"
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

${MAKE:-make} --no-print-directory BUILD=build build/gen/framework.pb-c.c build/gen/framework.pb-c.h >/dev/null ||
    die "cannot generate build/gen/framework.pb-c.c (run 'make deps')"
PKG_CFLAGS=$(pkg-config --cflags libprotobuf-c glib-2.0 jansson nettle) || die "pkg-config failed (run 'make deps')"
PKG_LIBS=$(pkg-config --libs libprotobuf-c glib-2.0 jansson nettle)
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CFLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g -O1 -Wall -Wextra $SAN -Ibuild/gen -Isrc -include src/ir/alloc.h $PKG_CFLAGS ${FUZZ_CFLAGS:-}"
say "building with $("$CLANG" --version | head -1)"
srcs="$(ls src/*.c src/*/*.c src/*/*/*.c 2>/dev/null | grep -v '^src/main\.c$') build/gen/framework.pb-c.c"
BIN=$OUT/bin
if [ "${FUZZ_ARENA:-}" = malloc ]; then
    srcs="$(echo "$srcs" | grep -v '^src/ir/arena\.c$') tests/fuzz/arena_malloc.c"
    BIN=$OUT/bin-malloc-arena
fi
mkdir -p "$BIN/obj" || exit 2
obj_of() { echo "$BIN/obj/$(echo "$1" | sed 's|^src/||; s|^build/gen/||; s|^tests/fuzz/||; s|/|_|g; s|\.c$|.o|')"; }
objs=
for s in $srcs; do objs="$objs $(obj_of "$s")"; done
# Library objects get coverage instrumentation only (fuzzer-no-link), two
# compilers at a time (the machine is shared).  The objects are a cache:
# one is rebuilt only when its source or a header it includes (clang -MMD
# records them in OBJ.d) is newer, and all are dropped when the compiler
# or its flags change, so a `make check` after a small change rebuilds a
# few files, not the library.
stamp="$("$CLANG" --version | head -1) $CFLAGS"
if [ "$(cat "$BIN/flags" 2>/dev/null)" != "$stamp" ]; then
    rm -f "$BIN"/obj/*.o "$BIN"/obj/*.d "$BIN"/fuzz_*
    printf '%s\n' "$stamp" >"$BIN/flags"
fi
# stale OBJ: true when OBJ must be rebuilt from SRC.
stale() {
    [ -f "$2" ] && [ -f "$2.d" ] && ! [ "$1" -nt "$2" ] || return 0
    for dep in $(sed 's/^[^:]*://; s/\\$//' "$2.d"); do
        [ -e "$dep" ] && ! [ "$dep" -nt "$2" ] || return 0
    done
    return 1
}
for s in $srcs; do
    o=$(obj_of "$s")
    if stale "$s" "$o"; then echo "$s $o"; fi
done |
    xargs -r -P 2 -n 2 sh -c \
        "exec nice $CLANG $CFLAGS -fsanitize=fuzzer-no-link -MMD -MF \"\$2.d\" -c -o \"\$2\" \"\$1\"" sh ||
    die "compiling the library failed"
for t in $TARGETS; do
    [ -f "tests/fuzz/fuzz_$t.c" ] || die "no target tests/fuzz/fuzz_$t.c"
    newest_t=$(ls -t tests/fuzz/*.h "tests/fuzz/fuzz_$t.c" $objs | head -1)
    [ -f "$BIN/fuzz_$t" ] && ! [ "$newest_t" -nt "$BIN/fuzz_$t" ] && continue
    # shellcheck disable=SC2086
    nice "$CLANG" $CFLAGS -Werror -Itests/fuzz -fsanitize=fuzzer -o "$BIN/fuzz_$t" \
        "tests/fuzz/fuzz_$t.c" $objs $PKG_LIBS -lm || die "building fuzz_$t failed"
done

# ---- reproduce mode -------------------------------------------------------

if [ $MODE = repro ]; then
    shift
    [ $# -gt 0 ] || die "--repro needs files"
    status=0
    for f in "$@"; do
        for t in $TARGETS; do
            # as when fuzzing (below): verify's refused runs leak by design
            asan=${ASAN_OPTIONS:-} leaks=
            [ "$t" = verify ] && asan="${asan:+$asan:}detect_leaks=0" leaks=-detect_leaks=0
            # shellcheck disable=SC2086
            if ASAN_OPTIONS=$asan "$BIN/fuzz_$t" -runs=1 $leaks "$f" >"$OUT/repro.log" 2>&1; then
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
    # A link in a case's in/ names a testdata/ file seeded already.
    [ -f "$f" ] && [ ! -L "$f" ] || continue
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

# prog: the pipeline targets' seeds, every program as is (the real training
# programs of $real/train too; read from ../shared at run time, never copied
# into the repository).  table: the programs with a distributed lookup
# table (is_distributed: true) or a remote prefetch.
mkdir -p "$OUT/seeds/prog" "$OUT/seeds/table"
n=0
for f in testdata/*.pbtxt tests/golden/*/in/* "$real"/*.pdmodel "$real"/train/*.pdmodel; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    n=$((n + 1))
    cp "$f" "$OUT/seeds/prog/$n-$(basename "$f")"
done
for f in tests/golden/transpile_dist_table*/in/* tests/golden/transpile_remote_*/in/* \
    "$real"/ctr_dnn_selected_rows.pdmodel "$real"/rec_join_main_grad_train.pdmodel \
    "$real"/train/rec_example_main_grad_train.pdmodel; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    cp "$f" "$OUT/seeds/table/$n-$(basename "$f")"
done

# params: parameter records (one per file, and a combined file), from the
# inference goldens and the real models' smaller files.
mkdir -p "$OUT/seeds/params"
for f in tests/golden/inference_small/in/params/* tests/golden/inference_small/in/params.combined \
    "$real"/params/gesiannet_gesture/batch_norm_1*; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    cp "$f" "$OUT/seeds/params/$n-$(basename "$f")"
done

# verify: the small programs the executor runs (the fc net, its backward,
# the exec-limit regressions, the inference model); the real training
# programs take too long per input.
mkdir -p "$OUT/seeds/verify"
for f in testdata/fc_net.pbtxt testdata/fc_net_bw.pbtxt testdata/mlp.pbtxt testdata/basic_main.pbtxt \
    tests/golden/verify_exec_limits/in/*.pbtxt tests/golden/inference_small/in/model.pbtxt; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    cp "$f" "$OUT/seeds/verify/$n-$(basename "$f")"
done
# fromenv: launcher variables as a job launcher sets them (fuzz_fromenv.c).
mkdir -p "$OUT/seeds/fromenv"
printf 'PADDLE_TRAINERS_NUM=2\nPADDLE_TRAINER_ID=0\nTRAINING_ROLE=TRAINER\nPADDLE_PSERVERS_IP_PORT_LIST=127.0.0.1:6174,127.0.0.1:6175\n' \
    >"$OUT/seeds/fromenv/trainer"
printf 'PADDLE_TRAINERS_NUM=2\nTRAINING_ROLE=PSERVER\nPADDLE_PSERVERS_IP_PORT_LIST=127.0.0.1:6174\nPOD_IP=127.0.0.1\nPADDLE_PORT=6174\n' \
    >"$OUT/seeds/fromenv/pserver"
printf 'PADDLE_TRAINERS_NUM= 2\nPADDLE_TRAINER_ID=-1\nPADDLE_PSERVER_ENDPOINTS=127.0.0.1:0,,\n' \
    >"$OUT/seeds/fromenv/hostile"

# inference: a program and its parameter files packed into one input (the
# layout at the top of fuzz_inference.c): for each small inference model, a
# folder seed and a combined seed (the same files in name order), each also
# with --params-filename and --text output.
le32() {
    printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) \
        $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"
}
# pack_inference FLAGS MODEL PARAMS_DIR: the container on stdout.
pack_inference() {
    printf "$(printf '\\%03o' "$1")"
    le32 "$(wc -c <"$2")"
    cat "$2"
    for f in $(ls "$3" | LC_ALL=C sort); do
        [ "$3" = "$(dirname "$2")" ] && [ "$f" = "$(basename "$2")" ] && continue
        printf "$(printf '\\%03o' "${#f}")%s" "$f"
        le32 "$(wc -c <"$3/$f")"
        cat "$3/$f"
    done
}
mkdir -p "$OUT/seeds/inference"
for m in tests/golden/inference_small/in/model.pbtxt tests/golden/inference_scan_edges/in/model.pbtxt \
    "$real"/params/gesiannet_gesture/__model__; do
    [ -f "$m" ] || continue
    d=$(dirname "$m") p=$(dirname "$m")/params
    [ "$(basename "$m")" = __model__ ] && p=$d
    for flags in 0 1 6 7; do
        n=$((n + 1))
        pack_inference $flags "$m" "$p" >"$OUT/seeds/inference/$n-$flags-$(basename "$d")"
    done
done

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

# run_target TARGET CORPUS: one libFuzzer run; prints a summary, returns 1
# on a finding.
run_target() {
    t=$1
    corpus=$2
    mkdir -p "$corpus" "$OUT/artifacts/$t"
    log=$OUT/fuzz_$t.log
    dict= seeds=$OUT/seeds/prog max_len=${FUZZ_MAX_LEN:-4194304}
    case $t in
    read | text) seeds=$OUT/seeds/$t max_len=${FUZZ_MAX_LEN:-131072} ;;
    transpile_table) seeds=$OUT/seeds/table ;;
    params) seeds=$OUT/seeds/params max_len=${FUZZ_MAX_LEN:-65536} ;;
    verify) seeds=$OUT/seeds/verify ;;
    fromenv) seeds=$OUT/seeds/fromenv max_len=${FUZZ_MAX_LEN:-4096} ;;
    inference) seeds=$OUT/seeds/inference ;;
    esac
    leaks=
    # verify jumps out of a refused run and leaks its tensors (fuzz_verify.c)
    [ "$t" = verify ] && leaks=-detect_leaks=0
    [ "$t" = text ] && dict=-dict=$OUT/text.dict
    fork=
    [ "$JOBS" -gt 1 ] 2>/dev/null && fork=-fork=$JOBS
    seed=${FUZZ_SEED:-} runs=
    [ -z "$seed" ] && [ $MODE = smoke ] && seed=1
    [ $MODE = smoke ] && runs=-runs=${FUZZ_SMOKE_RUNS:-2000}
    say "fuzz_$t: ${SECONDS_PER}s, corpus $corpus, log $log"
    # shellcheck disable=SC2086
    # verify's abandoned runs leak by design (fuzz_verify.c): no leak check at
    # all for it, LeakSanitizer's at exit included
    asan=${ASAN_OPTIONS:-}
    [ "$t" = verify ] && asan="${asan:+$asan:}detect_leaks=0"
    ASAN_OPTIONS=$asan nice -n 19 "$BIN/fuzz_$t" -max_total_time="$SECONDS_PER" -max_len="$max_len" -timeout=25 \
        -rss_limit_mb=2048 -print_final_stats=1 $dict $leaks $fork ${seed:+-seed=$seed} $runs ${FUZZ_FLAGS:-} \
        -artifact_prefix="$OUT/artifacts/$t/" "$corpus" "$seeds" >"$log" 2>&1
    rc=$?
    {
        grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb)' "$log" | sed "s/^/fuzz: fuzz_$t: /"
        if [ $rc -ne 0 ]; then
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
    } >"$log.summary"
    cat "$log.summary"
    [ $rc -eq 0 ]
}

status=0
if [ $MODE = smoke ]; then
    # Fresh corpora (the seeds only), so the smoke test does not depend on
    # earlier runs; FUZZ_SMOKE_JOBS targets at a time (default 4: each
    # runs for its wall-clock seconds however many share the cores, so
    # more at once shortens the smoke test and thins each target's runs).
    per=${FUZZ_SMOKE_JOBS:-4}
    set -- $TARGETS
    while [ $# -gt 0 ]; do
        group= pids=
        while [ $# -gt 0 ] && [ "$(echo $group | wc -w)" -lt "$per" ]; do
            rm -rf "$OUT/smoke/$1"
            run_target "$1" "$OUT/smoke/$1" >/dev/null &
            group="$group $1" pids="$pids $!"
            shift
        done
        for p in $pids; do wait "$p" || status=1; done
        # One line per target (the stat lines stay in the summary files).
        for t in $group; do grep -v 'stat::' "$OUT/fuzz_$t.log.summary"; done
    done
else
    for t in $TARGETS; do
        run_target "$t" "$OUT/corpus/$t" || status=1
    done
fi
exit $status
