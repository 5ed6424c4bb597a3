# SPDX-License-Identifier: MIT
# bash workload for tests/integration/run_program.sh: forks many subshells
# (command substitution, pipelines of shell functions, background jobs) and
# builds associative and indexed arrays and long strings, with builtins only
# (the guest cannot exec host programs). Args: WORDS-FILE ROUNDS. The output
# depends only on the input.
set -u
file=$1 rounds=$2
declare -A count=()
lines=()
while IFS= read -r line; do
    lines+=("$line")
    for w in $line; do count[$w]=$((${count[$w]:-0} + 1)); done
done <"$file"
echo "lines ${#lines[@]} distinct ${#count[@]}"

# vowels WORD: WORD with its vowels doubled (pure parameter expansion).
vowels() { local s=$1; s=${s//a/aa}; s=${s//e/ee}; s=${s//o/oo}; printf '%s\n' "$s"; }
# upper: stdin upper-cased, line by line.
upper() { local l; while IFS= read -r l; do printf '%s\n' "${l^^}"; done; }
# total: sums the lengths of stdin's lines.
total() { local l n=0; while IFS= read -r l; do n=$((n + ${#l})); done; echo "$n"; }

for ((r = 0; r < rounds; r++)); do
    line=${lines[r * 7 % ${#lines[@]}]}
    # A command substitution per word: each one forks.
    out=""
    for w in $line; do out+="$(vowels "$w")."; done
    # A three-stage pipeline of functions: each stage is a subshell.
    n=$(printf '%s\n' $line | upper | total)
    # A subshell that changes its own copy of the arrays.
    k=$( (unset 'count[sa]'; lines=(); echo "${#count[@]}/${#lines[@]}") )
    echo "round $r ${#out} $n $k ${out:0:40}"
done

# Background jobs, each reporting through its exit status.
pids=()
for ((j = 0; j < 8; j++)); do
    ( s=0; for w in ${lines[j]}; do s=$((s + ${#w})); done; exit $((s % 200)) ) &
    pids+=($!)
done
for ((j = 0; j < 8; j++)); do
    st=0; wait "${pids[j]}" || st=$?
    echo "job $j status $st"
done

# The big map by count, most frequent first (counting down: bash has no
# sort builtin), each count's words in one long string.
declare -A bycount=()
for w in "${!count[@]}"; do bycount[${count[$w]}]+="$w "; done
for ((c = ${#lines[@]}; c >= 20; c--)); do
    [[ -v bycount[$c] ]] || continue
    set -- ${bycount[$c]}
    echo "count $c words $# length ${#bycount[$c]}"
done
exit 0
