#!/bin/sh
# Part of make check: the options each command's --help lists (generated
# from the option tables, src/passes/*/options.c and the commands' own
# tables) are the options the man page documents for it, and the man page
# documents no option that no command takes.  tests/unit/test_options.c
# checks the tables against --help, 'pdtrans passes --help' and the man page.
#   PDTRANS=./pdtrans sh tests/options.sh
set -u
PDTRANS=${PDTRANS:-./pdtrans}
MAN=${MAN:-man/pdtrans.1}
LC_ALL=C
export LC_ALL
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
pass=0 fail=0
bad() { echo "options: FAIL: $*"; fail=$((fail + 1)); }

# "CMD OPTION" for every option of every command's --help ('-': pdtrans --help).
# Subcommands ("verify:grad") are documented in their command's item.
sh src/cli/completion/options.sh "$PDTRANS" |
    awk -F '\t' '$1 == "opt" { sub(/:.*/, "", $2); print $2, $3 }' | sort -u >"$t/help"
[ -s "$t/help" ] || bad "no options read from --help"

# "WHERE OPTION" for every option the man page names with Fl, WHERE being
# the command whose item in the Commands list holds it, or the section
# (.Sh/.Ss) otherwise.
awk '
    /^\.Sh / || /^\.Ss / { sect = $0; sub(/^\.S[hs] /, "", sect); gsub(/ /, "_", sect)
                          cmd = ""; depth = 0; next }
    sect == "Commands" && /^\.Bl/ { depth++ }
    sect == "Commands" && /^\.El/ { depth--; if (depth == 0) cmd = "" }
    sect == "Commands" && depth == 1 && /^\.It Cm / { cmd = $3 }
    {
        where = cmd != "" ? cmd : sect
        n = split($0, w, /[ \t]+/); fl = 0
        for (i = 1; i <= n; i++) {
            x = w[i]; sub(/^\./, "", x)
            if (x == "Fl") { fl = 1; continue }
            if (x ~ /^[A-Z][a-z][a-z]?$/) { fl = 0; continue }
            if (!fl) continue
            if (x ~ /^\\-[A-Za-z]/) { x = substr(x, 3); sub(/[^A-Za-z0-9-].*$/, "", x); print where, "--" x }
            else if (x ~ /^[A-Za-z]$/) print where, "-" x
        }
    }' "$MAN" | sort -u >"$t/man"
[ -s "$t/man" ] || bad "no options read from $MAN"

# The man sections that document a command's options besides its item.
sections() {
    case $1 in
    transpile) echo "TRANSPILE_OPTIONS OPTIMIZER_SPECS ENVIRONMENT" ;;
    minimize) echo "OPTIMIZER_SPECS" ;;
    inference) echo "INFERENCE" ;;
    memory-optimize|release-memory) echo "MEMORY_PASSES" ;;
    -) echo "SYNOPSIS" ;;
    esac
}

# Every option of a command's --help is documented for that command (its
# item, its sections, or the common options).
for c in $(awk '{ print $1 }' "$t/help" | sort -u); do
    where="$c Common_options $(sections "$c")"
    for w in $where; do awk -v w="$w" '$1 == w { print $2 }' "$t/man"; done | sort -u >"$t/doc"
    for o in $(awk -v c="$c" '$1 == c { print $2 }' "$t/help"); do
        if grep -qxF -- "$o" "$t/doc"; then pass=$((pass + 1))
        else bad "'pdtrans $c --help' lists $o, but $MAN does not document it for $c (sections: $where)"; fi
    done
done

# Every option the man page names is one some command takes.
awk '{ print $2 }' "$t/help" | sort -u >"$t/all"
for o in $(awk '{ print $2 }' "$t/man" | sort -u); do
    if grep -qxF -- "$o" "$t/all"; then pass=$((pass + 1))
    else bad "$MAN documents $o, but no command's --help lists it"; fi
done

echo "options: $pass passed, $fail failed"
[ $fail = 0 ]
