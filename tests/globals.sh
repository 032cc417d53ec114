#!/bin/sh
# tests/globals.sh (make check): every mutable file-scope or function-static
# variable in the built objects, against tests/globals.allow (issue 28
# point 4: state lives in pdt_env, src/ir/env.h).  A variable is mutable
# when the object puts it in .data, .bss or .data.rel(.local) -- not
# .rodata or .data.rel.ro, where const tables go.  Fails naming each new
# one; `sh tests/globals.sh --list` prints them all.
set -eu
BUILD=${BUILD:-build}
here=$(dirname "$0")
allow=$here/globals.allow
[ -d "$BUILD/obj" ] || { echo "globals: $BUILD/obj not built (run make)" >&2; exit 2; }
list=$(mktemp)
trap 'rm -f "$list"' EXIT
find "$BUILD/obj" -name '*.o' ! -name 'framework.pb-c.o' | sort | while read -r o; do
    objdump -t "$o" | awk -v f="${o#"$BUILD"/obj/}" '
        $0 ~ / O / && $4 ~ /^\.(data|bss|tdata|tbss)/ && $4 !~ /^\.data\.rel\.ro/ {
            name = $NF; sub(/\.[0-9]+$/, "", name)
            # ASan (SANITIZE=1) adds an __odr_asan.NAME byte per global: its own, not ours
            if (name !~ /^__odr_asan\./) print f, name }'
done | sort -u >"$list"
if [ "${1:-}" = --list ]; then cat "$list"; exit 0; fi
new=$(grep -v '^#' "$allow" | awk 'NF { print $1, $2 }' | sort -u | comm -13 - "$list")
gone=$(grep -v '^#' "$allow" | awk 'NF { print $1, $2 }' | sort -u | comm -23 - "$list")
if [ -n "$gone" ]; then
    echo "globals: no longer in the objects (remove from tests/globals.allow):"
    echo "$gone" | sed 's/^/  /'
fi
if [ -n "$new" ]; then
    echo "globals: FAIL: mutable file-scope state outside pdt_env (src/ir/env.h):"
    echo "$new" | sed 's/^/  /'
    echo "  keep it in a pdt_env slot, or make a read-only table const"
    exit 1
fi
echo "globals: $(wc -l <"$list") mutable variables, all in tests/globals.allow"
