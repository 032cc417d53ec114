#!/bin/sh
# Reads pdtrans's own --help texts and prints the table the completion
# scripts are generated from, so that an option added to a command's --help
# reaches the completions with no hand-kept list to update.
#
#   options.sh PDTRANS
#
# Output, one line each, fields separated by one TAB:
#   cmd  NAME  SUMMARY                    a command ('pdtrans --help')
#   opt  CMD  OPTION  KIND  SUMMARY       an option of CMD ('pdtrans CMD --help')
#   opt  -  OPTION  KIND  SUMMARY         a top-level option ('pdtrans --help')
#   sub  CMD  NAME  SUMMARY               a subcommand ('pdtrans CMD --help')
#   opt  CMD:SUB  OPTION  KIND  SUMMARY   an option of it ('pdtrans CMD SUB --help')
# KIND: flag (takes no value), file, dir, or value (anything else).
# An option's line in --help is one starting with 1 to 8 blanks and '-'; its
# options run up to the first word not starting with '-', the rest is the
# summary.  Options named only in a continuation line ("(also --clip, ...)")
# are included too; whether they take a value is learnt from any command
# whose --help shows them with '='.
set -eu
pdtrans=$1
LC_ALL=C
export LC_ALL

parse() { # CMD; help text on stdin
    awk -v cmd="$1" '
    function kind_of(meta) {
        if (meta == "") return "flag"
        if (meta ~ /^(FILE|OUT|IN|MAIN)/) return "file"
        if (meta ~ /^DIR/) return "dir"
        return "value"
    }
    function clean(s) { gsub(/\t/, " ", s); sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
    { optline = match($0, /^ +-/) && RLENGTH <= 9 }
    optline { inopts = 1 }
    !inopts || !/^[ \t]/ { next }
    optline {
        n = split($0, w, /[ \t]+/)
        k = 0; short = ""
        for (i = 2; i <= n; i++) {
            if (w[i] == "|") continue
            if (w[i] !~ /^-[-A-Za-z0-9]/) break
            tok = w[i]; sub(/,$/, "", tok)
            match(tok, /^--?[A-Za-z0-9][A-Za-z0-9-]*/)
            name = substr(tok, 1, RLENGTH)
            meta = ""
            if (index(tok, "=")) { meta = tok; sub(/^[^=]*=/, "", meta) }
            k++; names[k] = name; metas[k] = meta
        }
        summary = ""
        for (j = i; j <= n; j++) summary = summary (summary == "" ? "" : " ") w[j]
        summary = clean(summary)
        # "-s, --startup=FILE": the short option takes what its long one takes
        for (j = 1; j <= k; j++)
            if (names[j] !~ /^--/ && metas[j] == "" && j < k) metas[j] = metas[j + 1]
        for (j = 1; j <= k; j++) {
            if (seen[names[j]]++) continue
            printf "opt\t%s\t%s\t%s\t%s\n", cmd, names[j], kind_of(metas[j]), summary
        }
        next
    }
    {   # continuation line: options it names (to be resolved later)
        s = $0
        while (match(s, /--[a-z][a-z0-9-]*/)) {
            name = substr(s, RSTART, RLENGTH)
            s = substr(s, RSTART + RLENGTH)
            if (!seen[name]++) printf "opt\t%s\t%s\t?\t\n", cmd, name
        }
    }'
}

top=$("$pdtrans" --help)
cmds=$(printf '%s\n' "$top" | awk '
    /^commands:/ { on = 1; next }
    on && /^[ \t]*$/ { exit }
    on && /^  [a-z]/ { print $1 }')
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf '%s\n' "$top" | awk '
    /^commands:/ { on = 1; next }
    on && /^[ \t]*$/ { exit }
    on && /^  [a-z]/ { name = $1; sub(/^ +[^ ]+ +/, ""); printf "cmd\t%s\t%s\n", name, $0 }'
printf '%s\n' "$top" | sed -n '/^commands:/,/^$/!p' | parse - >>"$tmp"
for c in $cmds; do
    help=$("$pdtrans" "$c" --help)
    printf '%s\n' "$help" | parse "$c" >>"$tmp"
    # a command with subcommands ('verify grad'): its --help lists them
    # under 'subcommands:' as the top level lists commands; each one's
    # options are those of 'pdtrans CMD SUB --help', under CMD:SUB
    subs=$(printf '%s\n' "$help" | awk '
        /^subcommands:/ { on = 1; next }
        on && /^[ \t]*$/ { exit }
        on && /^  [a-z]/ { name = $1; sub(/^ +[^ ]+ +/, ""); printf "%s\t%s\n", name, $0 }')
    [ -n "$subs" ] || continue
    printf '%s\n' "$subs" | while IFS='	' read -r sc summary; do
        printf 'sub\t%s\t%s\t%s\n' "$c" "$sc" "$summary"
        "$pdtrans" "$c" "$sc" --help | parse "$c:$sc" >>"$tmp"
    done
done
# Resolve the '?' kinds from the same option elsewhere; default: a value.
awk -F '\t' -v OFS='\t' '
    NR == FNR { if ($4 != "?" && !($3 in kind)) { kind[$3] = $4; sum[$3] = $5 } next }
    $4 == "?" { $4 = ($3 in kind) ? kind[$3] : "value"; $5 = sum[$3] }
    { print }' "$tmp" "$tmp"
