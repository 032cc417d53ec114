#!/usr/bin/env zsh
# Real zsh (compsys in a pseudo-terminal) completes with the generated _pdtrans:
# each line of stdin is typed, TAB is pressed, and the completed line is
# printed (one output line per input line), so the caller compares them.
#   zsh -f tests/completion_zsh.zsh FPATH_DIR PDTRANS_DIR < lines
# Reads block on the shell's output (no sleeps); run it under timeout(1).
zmodload zsh/zpty || exit 3
fdir=$1 bindir=$2
# Nothing is typed before the first prompt: typeahead written while zsh
# still sets up its terminal can be lost (a loaded machine starts zsh
# slowly), and the READY read below then waited until timeout(1) killed it.
zpty z "PS1='> ' zsh -f -i"
zpty -r z out '*> ' || exit 3
zpty -w z "PS1='> '; PROMPT_EOL_MARK=''; unsetopt zle_bracketed_paste 2>/dev/null"
zpty -w z "fpath=(${(q)fdir} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z "PATH=${(q)bindir}:\$PATH; setopt nobeep"
# Never ask "do you wish to see all N possibilities?": the answer would eat
# the ^X^D below and the read would wait for ever (the question depends on
# the terminal's size, which a pseudo-terminal may not have).
zpty -w z "LISTMAX=100000; stty rows 50 cols 200 2>/dev/null"
# ^X^D prints the line as it stands between @@ marks and clears it
zpty -w z 'pdt_dump() { zle -I; print -r -- "@@$BUFFER@@"; BUFFER=; }; zle -N pdt_dump; bindkey "^X^D" pdt_dump; print READY' 
zpty -r z out $'*\nREADY*' || exit 3
n=0
while IFS= read -r line; do
    (( n++ ))
    print -ru2 -- "line $n: $line"   # on a hang, the caller shows the last one
    # type, complete, then print the completed line
    zpty -w -n z "$line"$'\t\C-x\C-d'
    zpty -r z out "*@@*@@*" || exit 3
    got=${out#*@@}
    print -r -- "${got%%@@*}"
    zpty -r z rest "*> *" || exit 3   # the fresh prompt: zle is ready for the next line
done
zpty -d z
