#!/bin/sh
# Part of make check: runs `make demo`'s script into a temporary folder and
# asserts it left every per-role file, that each passes `pdtrans check`, and
# that the --from-env runs wrote the same bytes as the per-role flag runs;
# then runs the commands of README.md's main job and compares their output.
set -u
PDTRANS=${PDTRANS:-./pdtrans}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "demo: FAIL: $*"; fail=$((fail + 1)); }
if PDTRANS=$PDTRANS DEMO_OUT="$d/demo" sh tests/demo.sh >"$d/log" 2>&1; then ok; else
    bad "tests/demo.sh exited non-zero; its output:"; cat "$d/log"; fi
roles="trainer_0 trainer_1 pserver_0 pserver_1"
for r in $roles; do
    for f in "$d/demo/job/$r.pb" "$d/demo/job/$r.startup.pb"; do
        if [ -s "$f" ]; then ok; else bad "missing ${f#"$d"/}"; continue; fi
        if "$PDTRANS" check "$f" >"$d/check.out" 2>&1; then ok; else
            bad "pdtrans check ${f#"$d"/}: $(cat "$d/check.out")"; fi
    done
done
for f in trainer_0.pb pserver_0.pb pserver_1.pb manifest.json; do
    [ -s "$d/demo/all/$f" ] && ok || bad "missing demo/all/$f"
done
# One job per folder (issue 26 points 2 and 3): the per-role calls each left
# their own manifest, naming the same job as --role=all's, which wrote every
# trainer; pdtrans check DIR finds every file as its manifest says.
for m in pserver_0 pserver_1 trainer_0 trainer_1; do
    [ -s "$d/demo/job/manifest.$m.json" ] && ok || bad "missing demo/job/manifest.$m.json"
done
jobs=$(sed -n 's/^  "job": "\(.*\)",$/\1/p' "$d"/demo/job/manifest.*.json "$d/demo/all/manifest.json" | sort -u | wc -l)
[ "$jobs" = 1 ] && ok || bad "the demo's manifests name $jobs jobs, not one"
for f in trainer_1.pb trainer_1.startup.pb; do
    if cmp -s "$d/demo/all/$f" "$d/demo/job/$f"; then ok; else
        bad "demo/all/$f (--role=all) differs from demo/job/$f (one role)"; fi
done
for dir in all job env; do
    if "$PDTRANS" check "$d/demo/$dir" >"$d/check.out" 2>&1; then ok; else
        bad "pdtrans check demo/$dir: $(cat "$d/check.out")"; fi
done
for f in pserver_0.pb pserver_0.startup.pb trainer_1.pb trainer_1.startup.pb; do
    if cmp -s "$d/demo/env/$f" "$d/demo/job/$f"; then ok; else
        bad "demo/env/$f (from --from-env) differs from demo/job/$f (from flags)"; fi
done
for f in pserver_0.pb trainer_0.pb; do
    if cmp -s "$d/demo/all/$f" "$d/demo/job/$f"; then ok; else
        bad "demo/all/$f (--role=all) differs from demo/job/$f (one role)"; fi
done
grep -q 'listen_and_serv' "$d/log" && ok || bad "the demo output shows no dump of a pserver"
# verify job on the --role=all folder and the per-role one: 4 params each
n_eq=$(grep -c ': equal (2 steps)$' "$d/log")
[ "$n_eq" = 8 ] && ok || bad "verify job in the demo: $n_eq parameters equal, not 8"
# The README's main job is the same job: run its commands as written (in a
# scratch folder, with this pdtrans first on PATH) and compare the results.
mkdir -p "$d/readme/bin"
ln -s "$(cd "$(dirname "$PDTRANS")" && pwd)/$(basename "$PDTRANS")" "$d/readme/bin/pdtrans"
ln -s "$(pwd)/testdata" "$d/readme/testdata"
awk '/^## The main job/ { on = 1; next }
     on && /^    / { code = 1; sub(/^    /, ""); if (!/^#/) print; next }
     code && /^[^ ]/ { exit }' \
    README.md >"$d/readme/job.sh"
grep -q 'pdtrans transpile' "$d/readme/job.sh" && ok || bad "no transpile command in README.md's main job"
if (cd "$d/readme" && PATH="$d/readme/bin:$PATH" sh -e job.sh) >"$d/readme.log" 2>&1; then ok; else
    bad "README.md's main job fails:"; cat "$d/readme.log"; fi
for f in pserver_1.pb pserver_1.startup.pb trainer_1.pb trainer_1.startup.pb; do
    if cmp -s "$d/readme/build/demo/job/$f" "$d/demo/job/$f"; then ok; else
        bad "README.md's main job gives another $f than tests/demo.sh"; fi
done
# ... and so is the man page's: its EXAMPLES up to "Show a program's ops".
mkdir -p "$d/man"
ln -s "$d/readme/bin" "$d/man/bin"
ln -s "$(pwd)/testdata" "$d/man/testdata"
mandoc -T ascii man/pdtrans.1 | col -b | awk '
    /^EXAMPLES/ { on = 1; next }
    on && /Show a program/ { exit }
    on && /^[ \t]+\$ / { sub(/^[ \t]+\$ /, ""); print; cont = /\\$/; next }
    on && cont { sub(/^[ \t]+/, "    "); print; cont = /\\$/ }' >"$d/man/job.sh"
grep -q 'pdtrans transpile' "$d/man/job.sh" && ok || bad "no transpile command in the man page's EXAMPLES"
if (cd "$d/man" && PATH="$d/man/bin:$PATH" sh -e job.sh) >"$d/man.log" 2>&1; then ok; else
    bad "the man page's main job (EXAMPLES) fails:"; cat "$d/man.log"; fi
for f in all/pserver_0.pb job/pserver_1.pb job/trainer_1.pb env/pserver_0.pb; do
    if cmp -s "$d/man/build/demo/$f" "$d/demo/$f"; then ok; else
        bad "the man page's main job gives another $f than tests/demo.sh"; fi
done
echo "demo: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
