#!/bin/sh
# Generates a completion script from its template and pdtrans's --help:
#   gen.sh bash|zsh PDTRANS > SCRIPT
# The template's line '# @DATA@' is replaced by the command and option tables
# (options.sh) and the choice values (choices), written as shell code, so the
# installed script needs neither the binary's --help nor these files.
set -eu
here=$(dirname "$0")
shell=$1 pdtrans=$2
LC_ALL=C
export LC_ALL
table=$(sh "$here/options.sh" "$pdtrans")
choices=$(grep -v '^#' "$here/choices" | grep -v '^[[:space:]]*$')

# choices for CMD OPT, or nothing
choice_of() {
    printf '%s\n' "$choices" | awk -v c="$1" -v o="$2" '
        ($1 == c || $1 == "*") && $2 == o { for (i = 3; i <= NF; i++) printf "%s%s", (i > 3 ? " " : ""), $i; exit }'
}
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

bash_data() {
    printf '_pdtrans_commands=%s\n' "$(q "$(printf '%s\n' "$table" | awk -F '\t' '$1 == "cmd" { printf "%s%s", sep, $2; sep = " " }')")"
    echo '_pdtrans_subcommands() {'
    echo '    case $1 in'
    printf '%s\n' "$table" | awk -F '\t' '
        $1 == "sub" { if (!($2 in l)) order[++n] = $2; l[$2] = l[$2] (l[$2] == "" ? "" : " ") $3 }
        END { for (i = 1; i <= n; i++) printf "    %s) echo %c%s%c ;;\n", order[i], 39, l[order[i]], 39 }'
    echo '    esac'
    echo '}'
    echo '_pdtrans_options() {'
    echo '    case $1 in'
    printf '%s\n' "$table" | awk -F '\t' '
        $1 == "opt" { w = $3; if ($4 != "flag" && w ~ /^--/) w = w "="
                      if (!($2 in l)) order[++n] = $2; l[$2] = l[$2] (l[$2] == "" ? "" : " ") w }
        END { for (i = 1; i <= n; i++) printf "    %s) echo %c%s%c ;;\n", order[i], 39, l[order[i]], 39 }'
    echo '    esac'
    echo '}'
    echo '_pdtrans_kind() {'
    echo '    case "$1 $2" in'
    printf '%s\n' "$table" | awk -F '\t' '$1 == "opt" && $4 != "value" { printf "    %c%s %s%c) echo %s ;;\n", 39, $2, $3, 39, $4 }'
    echo '    *) echo value ;;'
    echo '    esac'
    echo '}'
    echo '_pdtrans_choices() {'
    echo '    case "$1 $2" in'
    printf '%s\n' "$table" | awk -F '\t' '$1 == "opt" && $4 == "value" { print $2 "\t" $3 }' |
    while IFS='	' read -r c o; do
        v=$(choice_of "$c" "$o")
        if [ -n "$v" ]; then printf "    '%s %s') echo '%s' ;;\n" "$c" "$o" "$v"; fi
    done
    echo '    esac'
    echo '}'
}

zsh_data() {
    echo '_pdtrans_cmds=('
    printf '%s\n' "$table" | awk -F '\t' '$1 == "cmd" { print $2 "\t" $3 }' |
    while IFS='	' read -r c s; do printf '    %s\n' "$(q "$c:$s")"; done
    echo ')'
    echo '_pdtrans_subs() {'
    echo '    case $1 in'
    printf '%s\n' "$table" | awk -F '\t' '$1 == "sub" { print $2 "\t" $3 "\t" $4 }' | {
    prev=
    while IFS='	' read -r c n s; do
        if [ "$c" != "$prev" ]; then
            [ -z "$prev" ] || echo '        ) ;;'
            printf '    %s) reply=(\n' "$c"
            prev=$c
        fi
        printf '        %s\n' "$(q "$n:$s")"
    done
    [ -z "$prev" ] || echo '        ) ;;'
    }
    echo '    *) reply=() ;;'
    echo '    esac'
    echo '}'
    echo '_pdtrans_specs() {'
    echo '    case $1 in'
    printf '%s\n' "$table" | awk -F '\t' '$1 == "opt" { print $2 "\t" $3 "\t" $4 "\t" $5 }' | {
    prev=
    while IFS='	' read -r c o k s; do
        if [ "$c" != "$prev" ]; then
            [ -z "$prev" ] || echo '        ) ;;'
            printf '    %s) reply=(\n' "$c"
            prev=$c
        fi
        s=$(printf '%s' "$s" | sed 's/\[/(/g; s/\]/)/g')
        case $o in --*) sep='=' ;; *) sep='+' ;; esac
        case $k in
        flag) spec="$o[$s]" ;;
        file) spec="$o$sep[$s]:file:_files" ;;
        dir) spec="$o$sep[$s]:folder:_files -/" ;;
        *)  v=$(choice_of "$c" "$o")
            if [ "$o" = --passes ]; then spec="$o$sep[$s]:pass:_pdtrans_passes"
            elif [ -n "$v" ] && [ "${v%:}" != "$v" ]; then
                # no space after a spec's "KIND:"; _arguments splits at ':'
                spec="$o$sep[$s]:value:{compadd -S '' -- $(printf '%s' "$v" | sed 's/:/\\:/g')}"
            elif [ -n "$v" ]; then spec="$o$sep[$s]:value:($v)"
            else spec="$o$sep[$s]:value: "; fi ;;
        esac
        printf '        %s\n' "$(q "$spec")"
    done
    [ -z "$prev" ] || echo '        ) ;;'
    }
    echo '    *) reply=() ;;'
    echo '    esac'
    echo '}'
}

case $shell in
bash) tmpl=$here/pdtrans.bash.in ;;
zsh) tmpl=$here/_pdtrans.in ;;
*) echo "gen.sh: unknown shell '$shell'" >&2; exit 2 ;;
esac
data=$(${shell}_data)
DATA=$data awk '$0 == "# @DATA@" { print ENVIRON["DATA"]; next } { print }' "$tmpl"
