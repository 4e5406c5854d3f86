package main

// completionScripts are what `pi-actors completion <shell>` prints. Each
// asks `pi-actors __complete -- <words before> <current word>` for the
// candidates (one per line); a candidate ending in = takes no space after
// it (a parameter whose value comes next).
var completionScripts = map[string]string{
	"bash": `# bash completion for pi-actors: pi-actors completion bash
_pi_actors() {
    local line=${COMP_LINE:0:COMP_POINT}
    local cur=${line##*[[:space:]]}
    local -a words
    read -r -a words <<<"${line%"$cur"}"
    local IFS=$'\n'
    local -a cands
    cands=($("${words[0]}" __complete -- "${words[@]:1}" "$cur" 2>/dev/null))
    # bash splits the word being completed at the COMP_WORDBREAKS
    # characters (= and : by default): hand back only the part after them.
    local pre="" i
    for ((i = ${#cur} - 1; i >= 0; i--)); do
        if [[ $COMP_WORDBREAKS == *"${cur:i:1}"* ]]; then
            pre=${cur:0:i+1}
            break
        fi
    done
    COMPREPLY=()
    for i in "${cands[@]}"; do
        COMPREPLY+=("${i#"$pre"}")
    done
    if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]]; then
        compopt -o nospace 2>/dev/null
    fi
}
complete -F _pi_actors pi-actors
`,
	"zsh": `#compdef pi-actors
# zsh completion for pi-actors: pi-actors completion zsh
_pi-actors() {
    local -a cands full eq
    local c
    cands=("${(@f)$(${words[1]} __complete -- ${words[2,CURRENT-1]} "${words[CURRENT]}" 2>/dev/null)}")
    for c in $cands; do
        [[ -z $c ]] && continue
        if [[ $c == *= ]]; then eq+=($c); else full+=($c); fi
    done
    (( $#full )) && compadd -Q -- $full
    (( $#eq )) && compadd -Q -S '' -- $eq
    return 0
}
if [[ ${funcstack[1]} == _pi-actors ]]; then
    _pi-actors "$@"
else
    compdef _pi-actors pi-actors
fi
`,
	"fish": `# fish completion for pi-actors: pi-actors completion fish
function __pi_actors_complete
    set -l tokens (commandline -opc)
    $tokens[1] __complete -- $tokens[2..-1] (commandline -ct) 2>/dev/null
end
complete -c pi-actors -f -a '(__pi_actors_complete)'
`,
}
